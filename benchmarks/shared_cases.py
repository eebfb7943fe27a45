"""Shared-memory access patterns whose wavefronts the inspector predicts and Nsight Compute counts.

`benchmarks/shared_fidelity.py` launches every case once under Nsight Compute (per SASS instruction:
`L1 Wavefronts Shared` and its ideal, `L1 Conflicts Shared N-Way`) and compares the inspector's
model (inspector.analysis.shared_banks) for the same compile. What each case teaches:

- `bank_patterns`: one warp-wide shared access per line, its lane addresses chosen by hand through
  inline PTX (32-, 64- and 128-bit loads and stores, ldmatrix), so the hardware's bank rules are
  measured directly: a stride of one word is conflict-free, two words 2-way, 32 words 32-way; lanes
  reading the same word share it (a broadcast).
- `transpose`: a tile loaded row-major and stored column-major; the compiler moves it between the
  two blocked layouts through shared memory (a `convert_layout`), swizzled so that neither side
  conflicts.
- `column_sum`: a reduction over the non-contiguous axis, staged across warps in shared memory.
- `matmul`: `tl.dot` in a pipelined K loop: cp.async into shared memory, the operands read back by
  ldmatrix or wgmma; fp16 and fp8.
- `transpose_gluon`: the same transpose written in Gluon, where the author picks the shared layout:
  `SWIZZLE=False` stores a row-major tile unswizzled and reads it by columns (32 lanes, one bank:
  32-way conflicts), `SWIZZLE=True` XORs each row's columns with the row (conflict-free).
"""

import torch
import triton
import triton.language as tl
from triton.experimental import gluon
from triton.experimental.gluon import language as gl

CASES = ("bank_patterns", "transpose", "transpose_fp16", "column_sum", "matmul_fp16", "matmul_fp8",
         "transpose_gluon_plain", "transpose_gluon_swizzled")


# ---- hand-made lane addresses: the hardware's rules, one line each ---------------------------------
# Each asm reads (or writes) shared memory at the byte offset its thread passes; vector results are
# folded into one register so every line stays one statement. `volatile` keeps ptxas from merging,
# narrowing or dropping them: each line is exactly the access it names.
LD32 = tl.constexpr("ld.volatile.shared.b32 $0, [$1];")
LD64 = tl.constexpr("{ .reg .b32 a, b; ld.volatile.shared.v2.b32 {a, b}, [$1]; add.s32 $0, a, b; }")
LD128 = tl.constexpr("{ .reg .b32 a, b, c, d; ld.volatile.shared.v4.b32 {a, b, c, d}, [$1]; add.s32 a, a, b; "
                     "add.s32 c, c, d; add.s32 $0, a, c; }")
ST32 = tl.constexpr("st.volatile.shared.b32 [$1], $1; mov.b32 $0, 0;")
ST64 = tl.constexpr("st.volatile.shared.v2.b32 [$1], {$1, $1}; mov.b32 $0, 0;")
ST128 = tl.constexpr("st.volatile.shared.v4.b32 [$1], {$1, $1, $1, $1}; mov.b32 $0, 0;")
LDSM = tl.constexpr("{ .reg .b32 a, b, c, d; ldmatrix.sync.aligned.m8n8.x4.shared.b16 {a, b, c, d}, [$1]; "
                    "add.s32 a, a, b; add.s32 c, c, d; add.s32 $0, a, c; }")
STSM = tl.constexpr("stmatrix.sync.aligned.m8n8.x4.shared.b16 [$1], {$1, $1, $1, $1}; mov.b32 $0, 0;")
SMEM_BASE = tl.constexpr("mov.u32 $0, global_smem;")


@triton.jit
def bank_patterns(x_ptr, out_ptr, N: tl.constexpr):
    # a 64 x 64 fp32 transpose reserves 16 KiB of shared memory for the patterns to address
    rows = tl.arange(0, N)
    tile = tl.load(x_ptr + rows[:, None] * N + rows[None, :])
    tl.store(out_ptr + rows[None, :] * N + rows[:, None], tile)
    t = tl.arange(0, 128)  # one element per thread: t is the thread's index (4 warps)
    l = t % 32
    base = tl.inline_asm_elementwise(SMEM_BASE, "=r,r", [t], dtype=tl.int32, is_pure=True, pack=1)
    acc = tl.zeros([128], dtype=tl.int32)
    acc += tl.inline_asm_elementwise(LD32, "=r,r", [base + 4 * l], dtype=tl.int32, is_pure=False, pack=1)  # ld32 stride 1 word
    acc += tl.inline_asm_elementwise(LD32, "=r,r", [base + 8 * l], dtype=tl.int32, is_pure=False, pack=1)  # ld32 stride 2 words
    acc += tl.inline_asm_elementwise(LD32, "=r,r", [base + 16 * l], dtype=tl.int32, is_pure=False, pack=1)  # ld32 stride 4 words
    acc += tl.inline_asm_elementwise(LD32, "=r,r", [base + 128 * l], dtype=tl.int32, is_pure=False, pack=1)  # ld32 stride 32 words
    acc += tl.inline_asm_elementwise(LD32, "=r,r", [base + 0 * l], dtype=tl.int32, is_pure=False, pack=1)  # ld32 broadcast
    acc += tl.inline_asm_elementwise(LD32, "=r,r", [base + 132 * l], dtype=tl.int32, is_pure=False, pack=1)  # ld32 stride 33 words
    acc += tl.inline_asm_elementwise(LD32, "=r,r", [base + 4 * (l // 2)], dtype=tl.int32, is_pure=False, pack=1)  # ld32 pairs share a word
    acc += tl.inline_asm_elementwise(LD32, "=r,r", [base + 4 * (l % 16) + 128 * (l // 16)], dtype=tl.int32, is_pure=False, pack=1)  # ld32 two rows
    acc += tl.inline_asm_elementwise(LD64, "=r,r", [base + 8 * l], dtype=tl.int32, is_pure=False, pack=1)  # ld64 contiguous
    acc += tl.inline_asm_elementwise(LD64, "=r,r", [base + 16 * l], dtype=tl.int32, is_pure=False, pack=1)  # ld64 stride 16 bytes
    acc += tl.inline_asm_elementwise(LD64, "=r,r", [base + 256 * l], dtype=tl.int32, is_pure=False, pack=1)  # ld64 stride 256 bytes
    acc += tl.inline_asm_elementwise(LD64, "=r,r", [base + 0 * l], dtype=tl.int32, is_pure=False, pack=1)  # ld64 broadcast
    acc += tl.inline_asm_elementwise(LD64, "=r,r", [base + 8 * (l % 16)], dtype=tl.int32, is_pure=False, pack=1)  # ld64 half warps alike
    acc += tl.inline_asm_elementwise(LD64, "=r,r", [base + 8 * (l // 2)], dtype=tl.int32, is_pure=False, pack=1)  # ld64 pairs share
    acc += tl.inline_asm_elementwise(LD128, "=r,r", [base + 16 * l], dtype=tl.int32, is_pure=False, pack=1)  # ld128 contiguous
    acc += tl.inline_asm_elementwise(LD128, "=r,r", [base + 32 * l], dtype=tl.int32, is_pure=False, pack=1)  # ld128 stride 32 bytes
    acc += tl.inline_asm_elementwise(LD128, "=r,r", [base + 0 * l], dtype=tl.int32, is_pure=False, pack=1)  # ld128 broadcast
    acc += tl.inline_asm_elementwise(LD128, "=r,r", [base + 16 * (l % 8)], dtype=tl.int32, is_pure=False, pack=1)  # ld128 quarters alike
    acc += tl.inline_asm_elementwise(LD128, "=r,r", [base + 16 * (l // 4)], dtype=tl.int32, is_pure=False, pack=1)  # ld128 fours share
    acc += tl.inline_asm_elementwise(LD128, "=r,r", [base + 128 * (l % 8) + 16 * (l // 8)], dtype=tl.int32, is_pure=False, pack=1)  # ld128 quarter rows 128 apart
    acc += tl.inline_asm_elementwise(LD128, "=r,r", [base + 128 * l], dtype=tl.int32, is_pure=False, pack=1)  # ld128 stride 128 bytes
    acc += tl.inline_asm_elementwise(ST32, "=r,r", [base + 4 * l], dtype=tl.int32, is_pure=False, pack=1)  # st32 stride 1 word
    acc += tl.inline_asm_elementwise(ST32, "=r,r", [base + 128 * l], dtype=tl.int32, is_pure=False, pack=1)  # st32 stride 32 words
    acc += tl.inline_asm_elementwise(ST32, "=r,r", [base + 0 * l], dtype=tl.int32, is_pure=False, pack=1)  # st32 broadcast
    acc += tl.inline_asm_elementwise(ST64, "=r,r", [base + 8 * l], dtype=tl.int32, is_pure=False, pack=1)  # st64 contiguous
    acc += tl.inline_asm_elementwise(ST64, "=r,r", [base + 16 * l], dtype=tl.int32, is_pure=False, pack=1)  # st64 stride 16 bytes
    acc += tl.inline_asm_elementwise(ST128, "=r,r", [base + 16 * l], dtype=tl.int32, is_pure=False, pack=1)  # st128 contiguous
    acc += tl.inline_asm_elementwise(ST128, "=r,r", [base + 32 * l], dtype=tl.int32, is_pure=False, pack=1)  # st128 stride 32 bytes
    acc += tl.inline_asm_elementwise(ST128, "=r,r", [base + 16 * (l % 8)], dtype=tl.int32, is_pure=False, pack=1)  # st128 quarters alike
    acc += tl.inline_asm_elementwise(ST64, "=r,r", [base + 0 * l], dtype=tl.int32, is_pure=False, pack=1)  # st64 broadcast
    acc += tl.inline_asm_elementwise(ST64, "=r,r", [base + 8 * (l // 2)], dtype=tl.int32, is_pure=False, pack=1)  # st64 pairs share
    acc += tl.inline_asm_elementwise(ST128, "=r,r", [base + 0 * l], dtype=tl.int32, is_pure=False, pack=1)  # st128 broadcast
    acc += tl.inline_asm_elementwise(LD128, "=r,r", [base + 16 * (l // 2)], dtype=tl.int32, is_pure=False, pack=1)  # ld128 pairs share
    acc += tl.inline_asm_elementwise(LDSM, "=r,r", [base + 16 * l], dtype=tl.int32, is_pure=False, pack=1)  # ldmatrix rows contiguous
    acc += tl.inline_asm_elementwise(LDSM, "=r,r", [base + 128 * l], dtype=tl.int32, is_pure=False, pack=1)  # ldmatrix rows 128 apart
    acc += tl.inline_asm_elementwise(LDSM, "=r,r", [base + 128 * l + 16 * ((l % 8) ^ (l // 8 % 8))], dtype=tl.int32, is_pure=False, pack=1)  # ldmatrix rows 128 apart, swizzled
    acc += tl.inline_asm_elementwise(STSM, "=r,r", [base + 16 * l], dtype=tl.int32, is_pure=False, pack=1)  # stmatrix rows contiguous
    acc += tl.inline_asm_elementwise(STSM, "=r,r", [base + 128 * l], dtype=tl.int32, is_pure=False, pack=1)  # stmatrix rows 128 apart
    tl.store(out_ptr + N * N + t, acc)


# ---- what the compiler makes ------------------------------------------------------------------------
@triton.jit
def transpose(x_ptr, out_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    tile = tl.load(x_ptr + rows[:, None] * N + cols[None, :])
    tl.store(out_ptr + cols[None, :] * M + rows[:, None], tile)


@triton.jit
def column_sum(x_ptr, out_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    rows = tl.arange(0, BLOCK_M)
    tile = tl.load(x_ptr + rows[:, None] * N + cols[None, :])
    tl.store(out_ptr + cols, tl.sum(tile, axis=0))


@triton.jit
def matmul(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(c_ptr.dtype.element_ty))


# ---- the author picks the shared layout (Gluon) -------------------------------------------------------
@gluon.jit
def transpose_gluon(x_ptr, out_ptr, N: gl.constexpr, SWIZZLE: gl.constexpr):
    rows_fast: gl.constexpr = gl.BlockedLayout([1, 4], [4, 8], [4, 1], [1, 0])  # a row's columns in one thread
    cols_fast: gl.constexpr = gl.BlockedLayout([4, 1], [8, 4], [1, 4], [0, 1])  # a column's rows in one thread
    if SWIZZLE:  # column c of row r lands at c ^ r (per 4-byte word): a column's 32 words in 32 banks
        shared: gl.constexpr = gl.SwizzledSharedLayout(1, 1, 32, [1, 0])
    else:  # row-major, unswizzled: a column's 32 words all in one bank
        shared: gl.constexpr = gl.SwizzledSharedLayout(1, 1, 1, [1, 0])
    r = gl.arange(0, N, layout=gl.SliceLayout(1, rows_fast))
    c = gl.arange(0, N, layout=gl.SliceLayout(0, rows_fast))
    tile = gl.load(x_ptr + r[:, None] * N + c[None, :])
    smem = gl.allocate_shared_memory(gl.float32, [N, N], shared, tile)
    t = smem.load(cols_fast)
    r2 = gl.arange(0, N, layout=gl.SliceLayout(1, cols_fast))
    c2 = gl.arange(0, N, layout=gl.SliceLayout(0, cols_fast))
    gl.store(out_ptr + c2[None, :] * N + r2[:, None], t)


def run(case: str, device="cuda") -> None:
    """One launch of `case` (a name in CASES) on sizes that fill whole tiles."""
    x = torch.randn(256, 512, device=device)
    if case == "bank_patterns":
        bank_patterns[(1,)](x, torch.zeros(64 * 64 + 128, device=device), N=64, num_warps=4)
    elif case in ("transpose", "transpose_fp16"):
        src = x if case == "transpose" else x.half()
        transpose[(4, 8)](src, torch.empty(512, 256, device=device, dtype=src.dtype), 256, 512, BLOCK_M=64, BLOCK_N=64)
    elif case == "column_sum":
        column_sum[(512 // 32,)](x, torch.empty(512, device=device), 256, 512, BLOCK_M=256, BLOCK_N=32)
    elif case.startswith("matmul"):
        a = torch.randn(512, 256, device=device).half()
        b = torch.randn(256, 512, device=device).half()
        if case == "matmul_fp8":
            a, b = a.to(torch.float8_e4m3fn), b.to(torch.float8_e4m3fn)
        c = torch.empty(512, 512, device=device, dtype=torch.float16)
        matmul[(4, 4)](a, b, c, 512, 512, 256, BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, num_stages=3, num_warps=4)
    elif case.startswith("transpose_gluon"):
        y = torch.randn(32, 32, device=device)
        transpose_gluon[(1,)](y, torch.empty_like(y), N=32, SWIZZLE=case.endswith("swizzled"), num_warps=4)
    else:
        raise ValueError(f"unknown case {case!r}: one of {', '.join(CASES)}")


def example(device):
    """Every case once: the launches the inspector opens GPU-free and ncu measures on a GPU."""
    for case in CASES:
        run(case, device)
