# Source: linkedin/Liger-Kernel, src/liger_kernel/ops/rms_norm.py
#         release v0.8.2 (commit 000be60929938fd1358e03524c6ab398b6d421bd)
# Licence: BSD-2-Clause (Liger-Kernel LICENSE; the file notes parts derived from Unsloth, Apache-2.0)
# Excerpt: _rms_norm_forward_kernel, body verbatim except that the long docstring is cut.
#          Cut: backward kernels, host wrappers; the module-level casting-mode constants and
#          the libdevice rsqrt import are kept as published (plus an interpreter-only shim
#          that maps rsqrt to tl.rsqrt, and an interpreter-only fp32 wrapping of eps/offset in example()).
# Published hint: none.
# Lost facts: `row_idx * X_row_stride` / `row_idx * Y_row_stride` (run-time row strides,
#   not multiples of 16 -> not specialised) -> row base alignment unknown; `col_offsets < n_cols`
#   (run-time n_cols) -> mask constancy 1. fp32 rows of 1000 elements: stride is a multiple
#   of 4 elements (16 bytes), mask constant in groups of 4.
# TWIN: n_rows, n_cols = 8, 1000 => n_rows, n_cols = 8, 1002
# REFERENCE: y_base = Y_ptr + row_idx * Y_row_stride => y_base = Y_ptr + tl.multiple_of(row_idx * Y_row_stride, 4)
# REFERENCE: x_base = X_ptr + row_idx * X_row_stride => x_base = X_ptr + tl.multiple_of(row_idx * X_row_stride, 4)
# REFERENCE: mask = col_offsets < n_cols => mask = tl.max_constancy(col_offsets < n_cols, 4)
import torch
import triton
import triton.language as tl

try:
    # typical import path with dispatch available
    from triton.language.extra.libdevice import rsqrt
except ModuleNotFoundError:
    # for working with NGC containers
    from triton.language.extra.cuda.libdevice import rsqrt

import os as _os
if _os.environ.get("TRITON_INTERPRET") == "1":
    # not in Liger: the Triton 3.9 interpreter does not implement libdevice.rsqrt
    @triton.jit
    def rsqrt(x):
        return tl.rsqrt(x)

_CASTING_MODE_NONE: tl.constexpr = tl.constexpr(-1)
_CASTING_MODE_LLAMA: tl.constexpr = tl.constexpr(0)
_CASTING_MODE_GEMMA: tl.constexpr = tl.constexpr(1)


@triton.jit
def _rms_norm_forward_kernel(
    Y_ptr,
    Y_row_stride,
    X_ptr,
    X_row_stride,
    W_ptr,
    W_row_stride,
    RSTD_ptr,
    RSTD_row_stride,
    n_cols,
    eps,
    offset,
    casting_mode: tl.constexpr,  # constexpr so the `if` blocks can be optimized out
    elementwise_affine: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
):
    row_idx = tl.program_id(0).to(tl.int64)
    col_offsets = tl.arange(0, BLOCK_SIZE)
    mask = col_offsets < n_cols

    y_base = Y_ptr + row_idx * Y_row_stride
    x_base = X_ptr + row_idx * X_row_stride
    rstd_base = RSTD_ptr + row_idx * RSTD_row_stride

    X_row = tl.load(x_base + col_offsets, mask=mask, other=0)
    X_row_dtype = X_row.dtype
    if elementwise_affine:
        W_row = tl.load(W_ptr + col_offsets, mask=mask, other=0)

    # On Llama, only rstd is computed on fp32
    if casting_mode == _CASTING_MODE_LLAMA:
        X_row = X_row.to(tl.float32)

    # Gemma computes everything on fp32, and then casts back the output to the original dtype
    if casting_mode == _CASTING_MODE_GEMMA:
        if elementwise_affine:
            W_row = W_row.to(tl.float32)
        X_row = X_row.to(tl.float32)

    if casting_mode == _CASTING_MODE_NONE:
        eps = eps.to(X_row_dtype)
        offset = offset.to(X_row_dtype)
    else:
        # Scalar kernel params are specialized to fp32 by eager Triton but to
        # fp64 by Inductor when this kernel is launched from inside
        # torch.compile. An fp64 scalar silently promotes mean_square, rsqrt
        # and the weight multiply to float64, roughly halving throughput.
        # Pinning to fp32 is a no-op in eager and keeps both paths identical.
        eps = eps.to(tl.float32)
        offset = offset.to(tl.float32)

    mean_square = tl.sum(X_row * X_row, axis=0) / n_cols
    rstd = rsqrt(mean_square + eps)

    # We can save time by caching rms with minimal memory overhead
    # because rms is much smaller compared to X_row, as rms is for each row.
    # However, on the computation side, it can save 4 operations (*, sum, /, sqrt).
    tl.store(rstd_base, rstd)

    X_row = X_row * rstd

    # On Llama, the multiplication with the weight is done on the original dtype
    if casting_mode == _CASTING_MODE_LLAMA:
        X_row = X_row.to(X_row_dtype)

    if elementwise_affine:
        Y_row = X_row * (offset + W_row)
    else:
        Y_row = X_row

    if casting_mode == _CASTING_MODE_GEMMA:
        Y_row = Y_row.to(X_row_dtype)

    tl.store(y_base + col_offsets, Y_row, mask=mask)


def _fp32_scalar(v):
    # The Triton 3.9 interpreter passes Python floats through unchanged, so the kernel's
    # `eps.to(tl.float32)` would fail there; wrap the scalar as an fp32 tl.tensor only when
    # interpreting. Compiled launches get the plain float, as in Liger-Kernel.
    import os
    if os.environ.get("TRITON_INTERPRET") == "1":
        import numpy as np
        from triton.runtime.interpreter import TensorHandle
        return tl.tensor(TensorHandle(np.array([v], dtype=np.float32), tl.float32), tl.float32)
    return v


def example(device):
    torch.manual_seed(0)
    n_rows, n_cols = 8, 1000
    X = torch.randn(n_rows, n_cols, device=device, dtype=torch.float32)
    W = torch.randn(n_cols, device=device, dtype=torch.float32)
    Y = torch.empty_like(X)
    RSTD = torch.empty(n_rows, device=device, dtype=torch.float32)
    BLOCK_SIZE = triton.next_power_of_2(n_cols)
    _rms_norm_forward_kernel[(n_rows, )](Y, Y.stride(0), X, X.stride(0), W, W.stride(0), RSTD, RSTD.stride(0),
                                          n_cols, _fp32_scalar(1e-6), _fp32_scalar(0.0), casting_mode=0, elementwise_affine=True,
                                          BLOCK_SIZE=BLOCK_SIZE, num_warps=4)
    ref = X * torch.rsqrt(X.pow(2).mean(-1, keepdim=True) + 1e-6) * W
    return float((Y - ref).abs().max())
