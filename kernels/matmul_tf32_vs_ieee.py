"""Teaching pair: one fp32 matmul, its dot computed in TF32 on the tensor cores or in IEEE fp32 FMAs.

`tl.dot` on fp32 operands defaults to `input_precision="tf32"`: the inputs are rounded to TF32
(a 10-bit mantissa, like fp16's, with fp32's exponent range) and multiplied on the tensor cores,
accumulating in fp32. `input_precision="ieee"` keeps full fp32 products, which the tensor cores
cannot do: the compiler falls back to a loop of scalar fused multiply-adds on the CUDA cores, an
order of magnitude slower, and exact to fp32 rounding. Same source, same tiles: only the
INPUT_PRECISION constexpr differs between the two launches.

What to look for in the IR (sm_90 unless named):
- TTIR: `tt.dot ..., inputPrecision = tf32` against a plain `tt.dot` (IEEE is the attribute's
  default, so it is not printed).
- TTGIR: tf32 becomes `ttng.warp_group_dot` with both operands in `#ttg.nvmma_shared` shared
  memory and an `#ttg.nvidia_mma<{versionMajor = 3, ...}>` accumulator; ieee stays a `tt.dot` whose
  operands are brought from `#ttg.swizzled_shared` memory into registers (`ttg.local_load` to
  `#ttg.dot_op` layouts).
- PTX: tf32 has `wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32` (no `cvt.rna.tf32.f32`:
  the tensor cores ignore the low mantissa bits themselves); ieee has 2048 `fma.rn.f32` per K
  step and no `wgmma`.
- SASS: `HGMMA.64x128x8.F32.TF32` against runs of `FFMA`.
- sm_80: `mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32` against `fma.rn.f32`.
- gfx942 differs: CDNA3's matrix cores do full fp32 too, so tf32 becomes
  `v_mfma_f32_32x32x4_xf32` and ieee `v_mfma_f32_32x32x2_f32` (half the K per instruction).
- Accuracy: tf32 lands near 1e-3 relative error for these inputs, ieee near 1e-6.
"""

import torch
import triton
import triton.language as tl

TITLE = "fp32 matmul: TF32 tensor cores vs IEEE FMAs"
KERNEL = "matmul_fp32_kernel"
# The two launches `example` makes, in order: the inspector shows them side by side.
PAIR = ("INPUT_PRECISION=tf32", "INPUT_PRECISION=ieee")
BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M = 128, 128, 32, 8


@triton.jit
def matmul_fp32_kernel(
    a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
    INPUT_PRECISION: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
):
    # Grouped tile order, as in matmul.py: neighbouring programs share A rows and B columns in L2.
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    tiles_per_group = GROUP_M * num_pid_n
    first_m = (pid // tiles_per_group) * GROUP_M
    group_rows = tl.minimum(num_pid_m - first_m, GROUP_M)
    pid_m = first_m + (pid % tiles_per_group) % group_rows
    pid_n = (pid % tiles_per_group) // group_rows

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :]
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_left), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc, input_precision=INPUT_PRECISION)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * stride_bk
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :]
    tl.store(c_ptrs, acc, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def launch(a: torch.Tensor, b: torch.Tensor, precision: str = "tf32", out: torch.Tensor | None = None) -> torch.Tensor:
    """C = A @ B for fp32 A (M, K) and B (K, N) with row-major rows; precision "tf32" or "ieee"."""
    M, K = a.shape
    _, N = b.shape
    assert a.stride(1) == 1 and b.stride(1) == 1 and a.dtype == b.dtype == torch.float32
    c = torch.empty((M, N), device=a.device, dtype=torch.float32) if out is None else out
    assert c.shape == (M, N) and c.stride(1) == 1
    grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N),)
    matmul_fp32_kernel[grid](
        a, b, c, M, N, K, a.stride(0), b.stride(0), c.stride(0),
        INPUT_PRECISION=precision, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, GROUP_M=GROUP_M,
        num_warps=8, num_stages=3,
    )
    return c


# ---- the inspector's example call: both halves of the pair ---------------------------------
def example(device):
    """A 2048^3 fp32 product, in TF32 and then in IEEE fp32."""
    return tuple(launch(*make_inputs((2048, 2048, 2048), device), precision=p) for p in ("tf32", "ieee"))


# ---- bundled-kernel protocol ---------------------------------------------------------------
SIZES = [(n, n, n) for n in (512, 1024, 2048, 4096)]  # (M, N, K)
TEST_SIZES = [(16, 16, 16), (130, 70, 50)]
TOLERANCE = dict(atol=1e-4, rtol=1e-4)
SIZE_NAMES = ("M", "N", "K")
VARIANTS = {"tf32": {"precision": "tf32"}, "ieee": {"precision": "ieee"}}
VARIANT_TOLERANCE = {"tf32": dict(atol=2e-2, rtol=2e-2)}


def make_inputs(size: tuple[int, int, int], device, precision: str = "tf32"):
    """Random fp32 A and B scaled by K^-1/4 each, so C's entries are of order one."""
    M, N, K = size
    scale = K**-0.25
    return scale * torch.randn(M, K, device=device), scale * torch.randn(K, N, device=device)


def reference(a, b, precision: str = "tf32") -> torch.Tensor:
    return (a.double() @ b.double()).float()


def baseline(a, b, precision: str = "tf32") -> torch.Tensor:
    """cuBLAS at the same precision: TF32 allowed for the tf32 variant, full fp32 for ieee."""
    previous = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = precision == "tf32"
    try:
        return a @ b
    finally:
        torch.backends.cuda.matmul.allow_tf32 = previous


def flops(size: tuple[int, int, int]) -> int:
    M, N, K = size
    return 2 * M * N * K


def bytes_moved(size: tuple[int, int, int]) -> int:
    M, N, K = size
    return (M * K + K * N + M * N) * 4
