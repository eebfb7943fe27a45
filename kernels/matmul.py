"""Matrix multiply C = A @ B (fp16 or bf16, fp32 accumulation), with an optional fused leaky ReLU.

A persistent kernel: one program per SM walks the output tiles `pid, pid + programs, ...` in
grouped order (GROUP_M rows of tiles at a time, so the A rows and B columns that neighbouring
programs need are read from DRAM once and then hit in L2). Operands are read through tensor
descriptors made on the host (`triton.tools.tensor_descriptor.TensorDescriptor`, passed as kernel
parameters), which on Hopper become TMA copies into shared memory that the tensor cores read
directly. The epilogue (activation, down-cast) runs on the fp32 accumulator in registers, and the
tile leaves through the descriptor too.
The autotuner's early prune keeps one config per size class on a GPU (`size_class`: 128 x 256
tiles from 2048^3 up, 64 x 128 x 128 tiles below, both measured on an H200, docs/kernels-performance.md),
so nothing is timed at launch and every run picks the same config; the first config is the
large-size one.

What to look for in the IR (the first config, bf16, sm_90 unless named):
- TTIR: the three descriptors are kernel arguments (`!tt.tensordesc<128x64xbf16>` etc., each
  followed by its shape and strides); `tt.descriptor_load` of A and B and `tt.dot` inside the
  loops, one `tt.descriptor_store` per tile. No `tt.make_tensor_descriptor`.
- TTGIR: `ttng.async_tma_copy_global_to_local` into multi-buffered `ttg.local_alloc`s
  (`num_stages` deep) completing on mbarriers (`ttng.barrier_expect`, `ttng.wait_barrier`), and
  `ttng.warp_group_dot`: wgmma reading both operands straight from shared memory; no
  `ttng.tensormap_create` (nothing is written to global memory before the first load).
- PTX: each descriptor is a `.param .align 64 .b8 matmul_kernel_param_N[128]` (a CUtensorMap
  filled by the launcher); TMA loads
  `cp.async.bulk.tensor.2d.shared::cta.global.mbarrier::complete_tx::bytes` (`shared::cluster`
  under Triton 3.6), `wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16` (each of the two
  warpgroups owns 64 of the 128 rows), and the TMA store
  `cp.async.bulk.tensor.2d.global.shared::cta.bulk_group`.
- SASS: `HGMMA.64x256x16.F32.BF16`, `UTMALDG.2D`, `UTMASTG.2D`; about 160 registers, no `LDL`/`STL`.
- The same source on sm_80 (no TMA) turns the host-made descriptors into plain pointer loads
  whose alignment the compiler cannot see: not 128-bit, and the Insight tab says why (a kernel
  for Ampere would take pointers, or make its descriptors on the device); the dot is `ldmatrix` +
  `mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32`. On sm_120, TMA loads feeding `mma.sync`
  (no wgmma there). These configs are sized for Hopper's 227 KB of shared memory: on sm_120
  (99 KB) only the last, 128 x 128 x 32 config fits; the small-size 64 x 128 x 128 config, 4
  stages (208 KB), does not either.
- `activation="leaky_relu"`: `arith.cmpf` + `arith.select` on the fp32 accumulator before the
  `arith.truncf` (PTX `setp.ge.f32`, `mul.f32`, `selp.f32`): the activation adds no memory traffic.
"""

import torch
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor

TITLE = "Matmul (persistent, TMA, grouped ordering)"
KERNEL = "matmul_kernel"


def _config(bm, bn, bk, stages, warps, flatten=True, group=8):
    return triton.Config(
        dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=group, FLATTEN=flatten),
        num_stages=stages,
        num_warps=warps,
        pre_hook=_set_block_shapes,
    )


def _set_block_shapes(nargs):
    """The descriptors are made before the config is known: give them this config's block shapes."""
    bm, bn, bk = nargs["BLOCK_M"], nargs["BLOCK_N"], nargs["BLOCK_K"]
    nargs["a_desc"].block_shape = [bm, bk]
    nargs["b_desc"].block_shape = [bk, bn]
    nargs["c_desc"].block_shape = [bm, bn]


# Hopper-sized configs (shared memory: stages x (BM x BK + BK x BN) x 2 B plus the BM x BN output
# tile). On a GPU the early prune keeps exactly one of them per size class (`size_class`), so
# nothing is timed and every run launches the same config; the others stay for the inspector's
# autotune grid (`--autotune-config I`).
CONFIGS = [
    _config(128, 256, 64, 3, 8),  # "large": >= half a wave of 128 x 256 tiles (2048^3 and up on an H200)
    _config(64, 128, 128, 4, 4),  # "small": fewer tiles than that (1024^3): 4x more, smaller tiles
    _config(128, 256, 64, 3, 8, flatten=False),
    _config(256, 128, 64, 3, 8),
    _config(128, 128, 64, 4, 8),
    _config(128, 128, 32, 3, 4),  # fits the 99 KB of sm_86/sm_89/sm_120; the CPU interpreter's pick
]
CLASS_CONFIG = {"large": 0, "small": 1}  # index into CONFIGS, measured on the H200 (docs/kernels-performance.md)


def size_class(M: int, N: int, sms: int) -> str:
    """'small' when the 128 x 256 tiles of C would fill less than half the SMs, else 'large'."""
    return "small" if triton.cdiv(M, 128) * triton.cdiv(N, 256) < sms // 2 else "large"


def _sms(device) -> int:
    return torch.cuda.get_device_properties(device).multi_processor_count if device.type == "cuda" else 132


def _prune(configs, named_args, **kwargs):
    """One config per size class on a GPU (a deterministic pick: nothing is timed); off a GPU
    (CPU interpreter) the last, smallest one; a list pinned to one config is kept as it is."""
    base = named_args["a_desc"].base
    if base.device.type != "cuda":
        return configs[-1:]
    want = CONFIGS[CLASS_CONFIG[size_class(named_args["M"], named_args["N"], _sms(base.device))]]
    kept = [c for c in configs if c is want]
    return kept or configs


@triton.jit
def _tile_coords(tile, num_pid_m, num_pid_n, GROUP_M: tl.constexpr):
    """Grouped ordering: consecutive tiles walk down GROUP_M tile rows before moving right."""
    tiles_per_group = GROUP_M * num_pid_n
    first_m = (tile // tiles_per_group) * GROUP_M
    group_rows = tl.minimum(num_pid_m - first_m, GROUP_M)
    pid_m = first_m + (tile % tiles_per_group) % group_rows
    pid_n = (tile % tiles_per_group) // group_rows
    return pid_m, pid_n


@triton.autotune(configs=CONFIGS, key=["M", "N", "K", "ACTIVATION"], prune_configs_by={"early_config_prune": _prune})
@triton.jit
def matmul_kernel(
    a_desc, b_desc, c_desc, M, N, K,
    ACTIVATION: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
    FLATTEN: tl.constexpr,
):
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
        c_desc.store([off_m, off_n], acc.to(c_desc.dtype))  # clipped at the edges


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
    sms = _sms(a.device)
    # The descriptors are made here, on the host, and passed as kernel parameters: nothing is
    # written on the device before the first load (made on the device they cost a noticeable share
    # of a small product's time: docs/kernels-performance.md, "matmul per size class"). Their block
    # shapes are the size class's config; the config's pre_hook sets them again for whichever
    # config actually runs.
    cfg = CONFIGS[CLASS_CONFIG[size_class(M, N, sms)]].kwargs
    bm, bn, bk = cfg["BLOCK_M"], cfg["BLOCK_N"], cfg["BLOCK_K"]
    a_desc = TensorDescriptor.from_tensor(a, [bm, bk])
    b_desc = TensorDescriptor.from_tensor(b, [bk, bn])
    c_desc = TensorDescriptor.from_tensor(c, [bm, bn])
    persistent = a.is_cuda  # off a GPU: one program per tile

    def grid(meta):
        tiles = triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"])
        return (min(tiles, sms) if persistent else tiles,)

    matmul_kernel[grid](a_desc, b_desc, c_desc, M, N, K, ACTIVATION=activation)
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
