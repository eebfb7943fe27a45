"""Bare: a kernel and nothing else. Its pointers are named like tensors, not `*_ptr`."""
import triton
import triton.language as tl


@triton.jit
def fused_bias_residual(X, W, B, R, Out, stride, n_cols, eps, BLOCK: tl.constexpr, HAS_BIAS: tl.constexpr):
    row = tl.program_id(0)
    X += row * stride
    Out += row * stride
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(X + cols, mask=mask, other=0.0) + tl.load(R + row * stride + cols, mask=mask, other=0.0)
    if HAS_BIAS:
        x += tl.load(B + cols, mask=mask, other=0.0)
    var = tl.sum(x * x, axis=0) / n_cols
    tl.store(Out + cols, x * tl.rsqrt(var + eps) * tl.load(W + cols, mask=mask), mask=mask)
