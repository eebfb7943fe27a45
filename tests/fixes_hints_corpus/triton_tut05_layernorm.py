# Source: triton-lang/triton, python/tutorials/05-layer-norm.py
#         commit 545699290b851e70231ee3017481851170f1583d (as stored in the code index)
# Licence: MIT (triton-lang/triton LICENSE)
# Excerpt: _layer_norm_fwd_fused, verbatim. Cut: backward kernels, autograd wrapper,
#          test and benchmark (the launcher below follows LayerNorm.forward).
# Published hint: none.
# Lost facts: `row * stride` (run-time row stride, not a multiple of 16 -> not specialised)
#   -> X/Y row pointer alignment unknown; `cols < N` (run-time N) -> mask constancy 1.
#   fp16 with N = 1000: row stride is a multiple of 8 elements (16 bytes), masks are
#   constant in groups of 8, so 128-bit access is legal.
# TWIN: M, N = 8, 1000 => M, N = 8, 1001
# REFERENCE: Y += row * stride => Y += tl.multiple_of(row * stride, 8)
# REFERENCE: X += row * stride => X += tl.multiple_of(row * stride, 8)
# REFERENCE: a = tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32) => a = tl.load(X + cols, mask=tl.max_constancy(cols < N, 8), other=0.).to(tl.float32)
# REFERENCE: x = tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32) => x = tl.load(X + cols, mask=tl.max_constancy(cols < N, 8), other=0.).to(tl.float32)
# REFERENCE: mask = cols < N => mask = tl.max_constancy(cols < N, 8)
import torch
import triton
import triton.language as tl


@triton.jit
def _layer_norm_fwd_fused(
    X,  # pointer to the input
    Y,  # pointer to the output
    W,  # pointer to the weights
    B,  # pointer to the biases
    Mean,  # pointer to the mean
    Rstd,  # pointer to the 1/std
    stride,  # how much to increase the pointer when moving by 1 row
    N,  # number of columns in X
    eps,  # epsilon to avoid division by zero
    BLOCK_SIZE: tl.constexpr,
):
    # Map the program id to the row of X and Y it should compute.
    row = tl.program_id(0)
    Y += row * stride
    X += row * stride
    # Compute mean
    mean = 0
    _mean = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        a = tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
        _mean += a
    mean = tl.sum(_mean, axis=0) / N
    # Compute variance
    _var = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        x = tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
        x = tl.where(cols < N, x - mean, 0.)
        _var += x * x
    var = tl.sum(_var, axis=0) / N
    rstd = 1 / tl.sqrt(var + eps)
    # Write mean / rstd
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)
    # Normalize and apply linear transformation
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        mask = cols < N
        w = tl.load(W + cols, mask=mask)
        b = tl.load(B + cols, mask=mask)
        x = tl.load(X + cols, mask=mask, other=0.).to(tl.float32)
        x_hat = (x - mean) * rstd
        y = x_hat * w + b
        # Write output
        tl.store(Y + cols, y, mask=mask)


def example(device):
    torch.manual_seed(0)
    M, N = 8, 1000
    dtype = torch.float16
    x = -2.3 + 0.5 * torch.randn(M, N, device=device, dtype=dtype)
    w = torch.rand(N, device=device, dtype=dtype)
    b = torch.rand(N, device=device, dtype=dtype)
    y = torch.empty_like(x)
    mean = torch.empty(M, device=device, dtype=torch.float32)
    rstd = torch.empty(M, device=device, dtype=torch.float32)
    # BLOCK_SIZE smaller than N so that the column loops run (tutorial: min(64KB/elt, next_pow2(N)))
    _layer_norm_fwd_fused[(M, )](x, y, w, b, mean, rstd, x.stride(0), N, 1e-5, BLOCK_SIZE=256, num_warps=1)
    ref = torch.nn.functional.layer_norm(x.float(), (N, ), w.float(), b.float(), 1e-5)
    return float((y.float() - ref).abs().max())
