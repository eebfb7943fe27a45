"""GELU, tanh approximation: out = 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))).

An elementwise, memory-bound kernel like vector add, with just enough arithmetic to show how
Triton lowers math. The identity 0.5 * (1 + tanh(u)) = 1 / (1 + exp(-2u)) turns the tanh into one
exponential and one division, computed in fp32 whatever the storage type.

What to look for in the IR:
- TTIR: `math.exp` on the fp32 value, between an `arith.extf` after the load and an
  `arith.truncf` before the store when the tensor is bf16.
- PTX: `ex2.approx.f32` (Triton computes exp(x) as 2^(x * log2 e)) and `div.full.f32`, the
  fast approximate division, not the IEEE `div.rn.f32`; no `tanh` anywhere.
- PTX: 128-bit `ld.global.v4.b32` / `st.global.v4.b32` for fp32 and for bf16 alike (eight bf16
  values packed into four 32-bit registers), as in vector add: each thread moves 16 bytes.
- SASS: `MUFU.EX2` and `MUFU.RCP` (the special-function unit) next to `LDG.E.128`.
"""

import torch
import triton
import triton.language as tl

TITLE = "GELU (tanh approximation)"
KERNEL = "gelu_kernel"

SQRT_2_OVER_PI = 0.7978845608028654


@triton.jit
def gelu_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
    u = 0.7978845608028654 * (x + 0.044715 * x * x * x)
    # 0.5 * x * (1 + tanh(u)) == x * sigmoid(2u): one exp and one division.
    y = x / (1.0 + tl.exp(-2.0 * u))
    tl.store(out_ptr + offs, y.to(out_ptr.dtype.element_ty), mask=mask)


def launch(x: torch.Tensor, out: torch.Tensor | None = None) -> torch.Tensor:
    """GELU of a contiguous tensor; each program handles 4 KiB of input (16 bytes per thread, twice)."""
    out = torch.empty_like(x) if out is None else out
    assert x.is_contiguous() and out.is_contiguous() and out.shape == x.shape
    n = x.numel()
    block = 4096 // x.element_size()  # 1024 fp32 or 2048 bf16 elements: two 16-byte loads a thread
    gelu_kernel[(triton.cdiv(n, block),)](x, out, n, BLOCK=block, num_warps=4)
    return out


# ---- the inspector's example call ----------------------------------------------------------
def example(device):
    """GELU of 4096 fp32 values."""
    return launch(*make_inputs(4096, device))


# ---- bundled-kernel protocol ---------------------------------------------------------------
SIZES = [2**k for k in range(12, 29, 2)]  # elements, 4 Ki .. 256 Mi
TEST_SIZES = [1, 1000, 4096, 3 * 2048 + 5]
TOLERANCE = dict(atol=1e-5, rtol=1e-5)
SIZE_NAMES = ("elements",)
VARIANTS = {"fp32": {"dtype": torch.float32}, "bf16": {"dtype": torch.bfloat16}}
# Per-variant tolerance where the storage type is coarser than fp32 (one bf16 rounding step).
VARIANT_TOLERANCE = {"bf16": dict(atol=1e-2, rtol=1e-2)}


def make_inputs(size: int, device, dtype: torch.dtype = torch.float32) -> tuple[torch.Tensor, ...]:
    """One random vector (scaled so the tails of GELU are exercised too)."""
    return (3 * torch.randn(size, device=device, dtype=torch.float32).to(dtype),)


def reference(x: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.gelu(x.float(), approximate="tanh").to(x.dtype)


def baseline(x: torch.Tensor) -> torch.Tensor:
    """What PyTorch code writes: one eager elementwise kernel in the input's dtype."""
    return torch.nn.functional.gelu(x, approximate="tanh")


def flops(size: int) -> int:
    """Nine operations per element: x^3 (2), two multiply-adds (4), the exp, the +1 and the division."""
    return 9 * size


def bytes_moved(size: int, dtype: torch.dtype = torch.float32) -> int:
    """The input read once, the output written once."""
    return 2 * size * torch.empty((), dtype=dtype).element_size()
