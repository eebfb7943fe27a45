"""Matrix multiply C = A @ B (fp16 or bf16, fp32 accumulation), with an optional fused leaky ReLU.

A persistent kernel: one program per SM walks the output tiles `pid, pid + programs, ...` in
grouped order (GROUP_M rows of tiles at a time, so the A rows and B columns that neighbouring
programs need are read from DRAM once and then hit in L2). Operands are read through tensor
descriptors made on the device (`tl.make_tensor_descriptor`), which on Hopper become TMA copies
into shared memory that the tensor cores read directly. The epilogue (activation, down-cast) runs
on the fp32 accumulator in registers, and the tile leaves through the descriptor too.
Block shapes, pipeline depth and warps are autotuned; the first config is the one that won on
an H200 at 4096^3 and 8192^3, bf16 and fp16 alike (docs/kernels-performance.md).

What to look for in the IR (the first config, bf16, sm_90 unless named):
- TTIR: `tt.make_tensor_descriptor` three times before the loops, `tt.descriptor_load` of A and
  B and `tt.dot` inside them, one `tt.descriptor_store` per tile.
- TTGIR: `ttng.tensormap_create` (the descriptors are written on the device),
  `ttng.async_tma_copy_global_to_local` into multi-buffered `ttg.local_alloc`s (`num_stages`
  deep) completing on mbarriers (`ttng.barrier_expect`, `ttng.wait_barrier`), and
  `ttng.warp_group_dot`: wgmma reading both operands straight from shared memory.
- PTX: `tensormap.replace.tile.*`, then TMA loads
  `cp.async.bulk.tensor.2d.shared::cta.global.mbarrier::complete_tx::bytes` (`shared::cluster`
  under Triton 3.6), `wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16` (each of the two
  warpgroups owns 64 of the 128 rows), and the TMA store
  `cp.async.bulk.tensor.2d.global.shared::cta.bulk_group`.
- SASS: `HGMMA.64x256x16.F32.BF16`, `UTMALDG.2D`, `UTMASTG.2D`; about 160 registers, no `LDL`/`STL`.
- The same source on sm_80 becomes `cp.async.cg.shared.global` + `ldmatrix` +
  `mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32`; on sm_120, TMA loads feeding `mma.sync`
  (no wgmma there). These configs are sized for Hopper's 227 KB of shared memory: on sm_120
  (99 KB) only the last, 128 x 128 x 32 config fits.
- `activation="leaky_relu"`: `arith.cmpf` + `arith.select` on the fp32 accumulator before the
  `arith.truncf` (PTX `setp.ge.f32`, `mul.f32`, `selp.f32`): the activation adds no memory traffic.
"""

import torch
import triton
import triton.language as tl

TITLE = "Matmul (persistent, TMA, grouped ordering)"
KERNEL = "matmul_kernel"


def _config(bm, bn, bk, stages, warps, flatten=True, group=8):
    return triton.Config(
        dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=group, FLATTEN=flatten), num_stages=stages, num_warps=warps
    )


# Hopper-sized configs (shared memory: stages x (BM x BK + BK x BN) x 2 B plus the BM x BN output tile).
CONFIGS = [
    _config(128, 256, 64, 3, 8),
    _config(128, 256, 64, 3, 8, flatten=False),
    _config(256, 128, 64, 3, 8),
    _config(128, 128, 64, 4, 8),
    _config(128, 128, 64, 4, 4),
    _config(128, 128, 32, 3, 4),  # fits the 99 KB of sm_86/sm_89/sm_120; the CPU interpreter's pick
]


def _prune_off_gpu(configs, named_args, **kwargs):
    """Off a GPU (CPU interpreter) there is nothing to tune: keep the last, smallest config."""
    if named_args["a_ptr"].device.type != "cuda":
        return configs[-1:]
    return configs


@triton.jit
def _tile_coords(tile, num_pid_m, num_pid_n, GROUP_M: tl.constexpr):
    """Grouped ordering: consecutive tiles walk down GROUP_M tile rows before moving right."""
    tiles_per_group = GROUP_M * num_pid_n
    first_m = (tile // tiles_per_group) * GROUP_M
    group_rows = tl.minimum(num_pid_m - first_m, GROUP_M)
    pid_m = first_m + (tile % tiles_per_group) % group_rows
    pid_n = (tile % tiles_per_group) // group_rows
    return pid_m, pid_n


@triton.autotune(configs=CONFIGS, key=["M", "N", "K", "ACTIVATION"], prune_configs_by={"early_config_prune": _prune_off_gpu})
@triton.jit
def matmul_kernel(
    a_ptr, b_ptr, c_ptr, M, N, K,
    ACTIVATION: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
    FLATTEN: tl.constexpr,
):
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BLOCK_M, BLOCK_K])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[K, N], strides=[N, 1], block_shape=[BLOCK_K, BLOCK_N])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BLOCK_M, BLOCK_N])
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    k_tiles = tl.cdiv(K, BLOCK_K)
    # FLATTEN lets the pipeliner treat the tile loop and the K loop as one, so the next tile's
    # loads are issued while this tile's epilogue runs.
    for tile in tl.range(tl.program_id(0), num_pid_m * num_pid_n, tl.num_programs(0), flatten=FLATTEN):
        pid_m, pid_n = _tile_coords(tile, num_pid_m, num_pid_n, GROUP_M)
        off_m = pid_m * BLOCK_M
        off_n = pid_n * BLOCK_N
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for kt in range(k_tiles):
            a = a_desc.load([off_m, kt * BLOCK_K])  # out-of-bounds rows/columns read as zero
            b = b_desc.load([kt * BLOCK_K, off_n])
            acc = tl.dot(a, b, acc)
        if ACTIVATION == "leaky_relu":
            acc = tl.where(acc >= 0, acc, 0.01 * acc)
        c_desc.store([off_m, off_n], acc.to(c_ptr.dtype.element_ty))  # clipped at the edges


def _torch_scratch(size: int, alignment: int, stream) -> torch.Tensor:
    return torch.empty(size, device="cuda", dtype=torch.int8)


def launch(
    a: torch.Tensor,
    b: torch.Tensor,
    activation: str = "",
    out: torch.Tensor | None = None,
) -> torch.Tensor:
    """C = activation(A @ B) for row-major A (M, K) and B (K, N) of one 16-bit dtype.

    activation: "" or "leaky_relu" (slope 0.01). K and N must be multiples of 8 (TMA needs
    16-byte row strides).
    """
    M, K = a.shape
    K2, N = b.shape
    assert K == K2 and a.dtype == b.dtype and a.is_contiguous() and b.is_contiguous()
    assert K % 8 == 0 and N % 8 == 0, "TMA descriptors need 16-byte aligned row strides"
    c = torch.empty((M, N), device=a.device, dtype=a.dtype) if out is None else out
    assert c.shape == (M, N) and c.is_contiguous(), "out: a contiguous (M, N) tensor"
    if a.is_cuda:
        # Descriptors made on the device live in a small global scratch buffer per program,
        # which Triton asks this allocator for at launch.
        triton.set_allocator(_torch_scratch)
        sms = torch.cuda.get_device_properties(a.device).multi_processor_count
    else:
        sms = None  # off a GPU: one program per tile

    def grid(meta):
        tiles = triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"])
        return (min(tiles, sms) if sms else tiles,)

    matmul_kernel[grid](a, b, c, M, N, K, ACTIVATION=activation)
    return c


# ---- the inspector's example call ----------------------------------------------------------
def example(device):
    """A 4096 x 4096 x 4096 bf16 product."""
    return launch(*make_inputs((4096, 4096, 4096), device))


# ---- bundled-kernel protocol ---------------------------------------------------------------
SIZES = [(n, n, n) for n in (512, 1024, 2048, 4096, 8192)]  # (M, N, K)
TEST_SIZES = [(16, 16, 16), (200, 136, 72), (256, 128, 256)]
TOLERANCE = dict(atol=2e-2, rtol=2e-2)
SIZE_NAMES = ("M", "N", "K")
VARIANTS = {
    "bf16": {"dtype": torch.bfloat16},
    "fp16": {"dtype": torch.float16},
    "fp16+leaky_relu": {"dtype": torch.float16, "activation": "leaky_relu"},
}
# Triton's CPU interpreter keeps bfloat16 as raw uint16 and its tl.dot multiplies those bit
# patterns (unsupported upstream: triton-lang/triton#11584); bf16 is checked on the GPU only.
INTERPRETER_SKIP = {"bf16": "the interpreter does not support bfloat16 tl.dot (triton-lang/triton#11584)"}


def make_inputs(size: tuple[int, int, int], device, dtype: torch.dtype = torch.bfloat16, activation: str = ""):
    """Random A and B scaled by K^-1/4 each, so C's entries are of order one whatever K."""
    M, N, K = size
    scale = K**-0.25
    a = (scale * torch.randn(M, K, device=device)).to(dtype)
    b = (scale * torch.randn(K, N, device=device)).to(dtype)
    return a, b


def reference(a, b, activation: str = "") -> torch.Tensor:
    c = a.float() @ b.float()
    if activation == "leaky_relu":
        c = torch.nn.functional.leaky_relu(c, 0.01)
    return c.to(a.dtype)


def baseline(a, b, activation: str = "") -> torch.Tensor:
    """What PyTorch code writes: cuBLAS in the inputs' dtype, then the activation as its own kernel."""
    c = a @ b
    return torch.nn.functional.leaky_relu(c, 0.01) if activation == "leaky_relu" else c


def flops(size: tuple[int, int, int]) -> int:
    M, N, K = size
    return 2 * M * N * K


def bytes_moved(size: tuple[int, int, int], dtype: torch.dtype = torch.bfloat16) -> int:
    """A and B read once, C written once."""
    M, N, K = size
    return (M * K + K * N + M * N) * torch.empty((), dtype=dtype).element_size()
