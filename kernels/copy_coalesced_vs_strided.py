"""Teaching pair: a coalesced copy next to a strided (uncoalesced) one.

Both kernels copy n fp32 values. `copy_coalesced_kernel` reads x[i]: the 32 threads of a warp
read 32 neighbouring 16-byte chunks, 512 contiguous bytes, in one request per instruction.
`copy_strided_kernel` reads x[i * stride] (every 8th value, as when walking down a column of a
row-major matrix): each value sits in its own 32-byte DRAM sector, so the hardware fetches 8 times
the bytes the kernel uses, and since no two values a thread loads are adjacent they cannot be
fused into one wide load either. The store side is contiguous in both.

What to look for in the IR (sm_90):
- TTGIR: the same `#blocked` layout with sizePerThread = [4] for both; the difference is what the
  compiler can prove about the addresses (`tt.divisibility`/contiguity of `offs * stride`).
- PTX, coalesced: `ld.global.v4.b32` (16 bytes a thread) and `st.global.v4.b32`.
- PTX, strided: four scalar `ld.global.b32` where the coalesced kernel has one `ld.global.v4.b32`
  (the stores stay `st.global.v4.b32`). SASS: `LDG.E` against `LDG.E.128`.
- Benchmarked, the strided copy moves a fraction of the coalesced one's useful bytes per second:
  `bytes_moved` counts the bytes the kernel uses, so the roofline shows the waste (the figures:
  docs/kernels-performance.md, "Every size").
"""

import torch
import triton
import triton.language as tl

TITLE = "Coalesced vs strided copy"
KERNEL = "copy_coalesced_kernel"
# The two launches `example` makes, in order: the inspector shows them side by side.
PAIR = ("copy_coalesced_kernel", "copy_strided_kernel")
STRIDE = 8  # fp32 values: 32 bytes, one DRAM sector per value used


@triton.jit
def copy_coalesced_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=mask), mask=mask)


@triton.jit
def copy_strided_kernel(src_ptr, dst_ptr, n, stride, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    # int64: n * stride passes 2^31 for the large sizes
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs.to(tl.int64) * stride, mask=mask), mask=mask)


def launch(x: torch.Tensor, layout: str = "coalesced", out: torch.Tensor | None = None) -> torch.Tensor:
    """Copy x (layout "coalesced") or every STRIDE-th value of x (layout "strided") into a new vector."""
    if layout == "coalesced":
        n = x.numel()
    elif layout == "strided":
        n = x.numel() // STRIDE
    else:
        raise ValueError(f"layout must be 'coalesced' or 'strided', not {layout!r}")
    out = torch.empty(n, device=x.device, dtype=x.dtype) if out is None else out
    assert x.is_contiguous() and out.is_contiguous() and out.numel() == n
    block = 1024
    grid = (triton.cdiv(n, block),)
    if layout == "coalesced":
        copy_coalesced_kernel[grid](x, out, n, BLOCK=block, num_warps=4)
    else:
        copy_strided_kernel[grid](x, out, n, STRIDE, BLOCK=block, num_warps=4)
    return out


# ---- the inspector's example call: both halves of the pair ---------------------------------
def example(device):
    """Copy 2^20 fp32 values both ways."""
    return tuple(launch(*make_inputs(2**20, device, layout=lay), layout=lay) for lay in ("coalesced", "strided"))


# ---- bundled-kernel protocol ---------------------------------------------------------------
SIZES = [2**k for k in range(16, 27, 2)]  # values copied, 64 Ki .. 64 Mi
TEST_SIZES = [1, 1000, 4096 + 3]
TOLERANCE = dict(atol=0.0, rtol=0.0)
SIZE_NAMES = ("values copied",)
VARIANTS = {"coalesced": {"layout": "coalesced"}, "strided": {"layout": "strided"}}


def make_inputs(size: int, device, layout: str = "coalesced") -> tuple[torch.Tensor, ...]:
    """A random source vector: `size` values, or STRIDE x `size` for the strided layout."""
    return (torch.randn(size * (STRIDE if layout == "strided" else 1), device=device),)


def reference(x: torch.Tensor, layout: str = "coalesced") -> torch.Tensor:
    return x[::STRIDE].clone() if layout == "strided" else x.clone()


def baseline(x: torch.Tensor, layout: str = "coalesced") -> torch.Tensor:
    """PyTorch's own copy kernel, on the contiguous or the strided view."""
    return x[::STRIDE].contiguous() if layout == "strided" else x.clone()


def flops(size: int) -> int:
    return 0


def bytes_moved(size: int) -> int:
    """The bytes the copy uses: `size` values read and written (the strided read fetches 8x more)."""
    return 2 * size * 4
