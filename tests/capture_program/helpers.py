"""A @triton.jit helper in a module of its own, as library code keeps them."""

import triton
import triton.language as tl


@triton.jit
def rms(x, n_cols, eps):
    return tl.sqrt(tl.sum(x * x, axis=0) / n_cols + eps)
