"""Vector add: out = x + y, the classic first Triton kernel.

What to look for in the IR:
- PTX: with n a multiple of 16 every load and store is a 128-bit `ld.global.v4.b32` /
  `st.global.v4.b32` (each thread holds 4 contiguous fp32). Inspect with `--arg n=4095` and
  they fall back to scalar `ld.global.b32`: the mask `offs < n` can no longer be proven
  uniform per 4-element group, because n is not known to be divisible by 16.
- TTGIR: a single `#blocked` layout with sizePerThread = [4]; no `convert_layout`.
- SASS: `LDG.E.128` / `STG.E.128`, no local memory (`LDL`/`STL`).
"""

import torch
import triton
import triton.language as tl

TITLE = "Vector add"
KERNEL = "add_kernel"


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


def launch(x: torch.Tensor, y: torch.Tensor, BLOCK: int = 1024, out: torch.Tensor | None = None) -> torch.Tensor:
    """Add two contiguous tensors of the same shape with one program per BLOCK elements."""
    out = torch.empty_like(x) if out is None else out
    assert x.is_contiguous() and y.is_contiguous() and out.is_contiguous() and out.shape == x.shape
    n = x.numel()
    add_kernel[(triton.cdiv(n, BLOCK),)](x, y, out, n, BLOCK=BLOCK)
    return out


# ---- the inspector's example call: what a real launch would look like ---------------------
def example(device):
    """Launch on n = 4096 fp32 elements (a multiple of 16, so loads vectorise)."""
    return launch(*make_inputs(4096, device))


# ---- bundled-kernel protocol: tests, benchmarks, roofline --------------------------------
SIZES = [2**k for k in range(12, 29, 2)]  # elements, 4 Ki .. 256 Mi
TEST_SIZES = [1, 1000, 4096, 4095 * 3]
TOLERANCE = dict(atol=1e-6, rtol=1e-6)
SIZE_NAMES = ("elements",)


def make_inputs(size: int, device, dtype: torch.dtype = torch.float32) -> tuple[torch.Tensor, ...]:
    """Two random vectors of `size` elements."""
    return (torch.randn(size, device=device, dtype=dtype), torch.randn(size, device=device, dtype=dtype))


def reference(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return x + y


def baseline(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """What PyTorch code writes: the eager add."""
    return x + y


def flops(size: int) -> int:
    return size


def bytes_moved(size: int, dtype: torch.dtype = torch.float32) -> int:
    """Each input read once, the output written once."""
    return 3 * size * torch.empty((), dtype=dtype).element_size()
