"""Teaching pair: a row kept in registers fits at BLOCK_N = 4096 and spills at BLOCK_N = 32768.

RMS norm, out = x / sqrt(mean(x^2) + eps) * weight, one program per row, the row held in
registers between the reduction and the scaling (as layer_norm.py does). The program has a fixed
4 warps, 128 threads, so each thread holds BLOCK_N / 128 fp32 values of x, plus as many of the
weight and of the result. At BLOCK_N = 4096 that is 32 values each: about 100 registers. At
BLOCK_N = 32768 it is 256 values of x alone, more than the 255 registers a thread can have, so
ptxas spills the excess to local memory (per-thread DRAM, cached in L1/L2) and reloads it. The
fix is more warps for wide rows (layer_norm.py scales num_warps with the row) or a loop over the
row in chunks.

What to look for in the IR (sm_90):
- TTGIR: identical apart from the tensor shapes (`tensor<4096xf32, #blocked>` vs
  `tensor<32768xf32, #blocked>`, sizePerThread = [4] in both): spilling is decided later, by ptxas.
- Resources: BLOCK_N = 4096 has no stack frame and no spill stores; BLOCK_N = 32768 uses all 255
  registers and has a stack frame of about a kilobyte (ptxas: "bytes stack frame", "bytes spill
  stores", "bytes spill loads").
- SASS: BLOCK_N = 32768 has `STL` (spill stores) and `LDL` (spill loads) between the global loads
  and the reduction; BLOCK_N = 4096 has none.
- AMDGCN (gfx942) tells a different story: a wave has 64 lanes, so each holds half as many
  values, and the wide version fits in 254 VGPRs (Triton 3.9) or parks the excess in AccVGPRs
  (`v_accvgpr_write_b32` / `v_accvgpr_read_b32`, `.agpr_count: 10`, Triton 3.6) rather than in
  scratch memory: no `.vgpr_spill_count`, but two waves per SIMD (one under 3.6) instead of eight.
- Benchmarked, the bandwidth drops at 32768 columns, where the spills begin, and falls below
  PyTorch's rms_norm there (the figures: docs/kernels-performance.md, "Every size").
"""

import torch
import triton
import triton.language as tl

TITLE = "Register spills: a row too wide for its warps"
KERNEL = "rms_norm_kernel"
# The two launches `example` makes, in order: the inspector shows them side by side.
PAIR = ("BLOCK_N=4096 (fits)", "BLOCK_N=32768 (spills)")
NUM_WARPS = 4  # fixed on purpose: the lesson is what a too-wide row does to 128 threads


@triton.jit
def rms_norm_kernel(x_ptr, w_ptr, out_ptr, stride, N, eps, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    rms = tl.rsqrt(tl.sum(x * x, axis=0) / N + eps)
    w = tl.load(w_ptr + cols, mask=mask).to(tl.float32)
    tl.store(out_ptr + row * stride + cols, (x * rms * w).to(out_ptr.dtype.element_ty), mask=mask)


def launch(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6, out: torch.Tensor | None = None) -> torch.Tensor:
    """RMS norm over the last dimension of a contiguous 2-D tensor, BLOCK_N the row rounded up to 2^k."""
    M, N = x.shape
    assert x.is_contiguous()
    out = torch.empty_like(x) if out is None else out
    assert out.is_contiguous() and out.shape == x.shape
    rms_norm_kernel[(M,)](x, weight, out, x.stride(0), N, eps, BLOCK_N=triton.next_power_of_2(N), num_warps=NUM_WARPS)
    return out


# ---- the inspector's example call: both halves of the pair ---------------------------------
def example(device):
    """Normalise 1024 rows of 4096 values (fits), then 1024 rows of 32768 (spills)."""
    return tuple(launch(*make_inputs((1024, n), device)) for n in (4096, 32768))


# ---- bundled-kernel protocol ---------------------------------------------------------------
SIZES = [(8192, n) for n in (1024, 2048, 4096, 8192, 16384, 32768)]  # (rows, columns)
TEST_SIZES = [(1, 1), (3, 100), (4, 4096), (2, 32768)]
TOLERANCE = dict(atol=1e-4, rtol=1e-4)
SIZE_NAMES = ("rows", "columns")


def make_inputs(size: tuple[int, int], device) -> tuple[torch.Tensor, ...]:
    M, N = size
    return torch.randn(M, N, device=device), 1 + 0.5 * torch.randn(N, device=device)


def reference(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    return x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + eps) * weight


def baseline(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """What PyTorch code writes: torch.nn.functional.rms_norm."""
    return torch.nn.functional.rms_norm(x, (x.shape[-1],), weight, eps)


def flops(size: tuple[int, int]) -> int:
    """Per element: square-accumulate (2), scale, weight (4)."""
    M, N = size
    return 4 * M * N


def bytes_moved(size: tuple[int, int]) -> int:
    """x read once, out written once, the weight read once (fp32)."""
    M, N = size
    return (2 * M * N + N) * 4
