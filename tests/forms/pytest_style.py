"""A kernel with its pytest test; nothing calls either."""
import pytest
import torch
import triton
import triton.language as tl


@triton.jit
def axpy_kernel(X, Y, alpha, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    tl.store(Y + i, alpha * tl.load(X + i, mask=m) + tl.load(Y + i, mask=m), mask=m)


@pytest.mark.parametrize("n, dtype", [(3000, torch.bfloat16), (4096, torch.float32)])
def test_axpy(n, dtype, device):
    x = torch.randn(n, device=device, dtype=dtype)
    y = torch.randn(n, device=device, dtype=dtype)
    expected = 2.0 * x + y
    axpy_kernel[(triton.cdiv(n, 256),)](x, y, 2.0, n, BLOCK=256)
    torch.testing.assert_close(y, expected)
