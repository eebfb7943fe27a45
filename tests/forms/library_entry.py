"""Library style: a kernel behind the library's own launch cache (a KernelInterface wrapping the
autotuner, as FlagGems' `libentry` does), a wrapper taking `dim` and a shape, and a second wrapper
that cannot run GPU-free."""
import math

import torch
import triton
import triton.language as tl


class LaunchCache(triton.KernelInterface):
    """Compiles once per key, then launches the compiled kernel itself (`kernel[grid](...)`)."""

    def __init__(self, fn):
        self.fn = fn
        self.arg_names = fn.arg_names
        self.cache = {}

    def run(self, *args, grid, warmup=False, **kwargs):
        key = tuple(str(a.dtype) if hasattr(a, "dtype") else a for a in args)
        if key not in self.cache:
            kernel = self.fn.run(*args, grid=grid, warmup=warmup, **kwargs)
            self.cache[key] = (kernel, self.fn.best_config.kwargs)
        kernel, constexprs = self.cache[key]
        grid = grid({**dict(zip(self.arg_names, args)), **constexprs}) if callable(grid) else grid
        kernel[grid](*args)
        return kernel


def library_entry(fn):
    return LaunchCache(fn)


@library_entry
@triton.autotune(configs=[triton.Config({"TILE_K": 32}, num_warps=4), triton.Config({"TILE_K": 64}, num_warps=8)],
                 key=["K"])
@triton.jit
def sum_over_middle(Out, X, M, N, K, TILE_N: tl.constexpr, TILE_K: tl.constexpr):
    m = tl.program_id(0)
    ks = tl.program_id(1) * TILE_K + tl.arange(0, TILE_K)
    ns = tl.arange(0, TILE_N)
    offsets = m * N * K + ns[:, None] * K + ks[None, :]
    x = tl.load(X + offsets, mask=(ns[:, None] < N) & (ks[None, :] < K), other=0.0)
    tl.store(Out + m * K + ks, tl.sum(x, axis=0), mask=ks < K)


@triton.jit
def never_launched(X, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(X + offs, tl.load(X + offs, mask=offs < n) * 2, mask=offs < n)


def sum_dim(x, dim, normalized_shape):
    assert dim >= -x.ndim and dim < x.ndim, "Invalid dim"
    dim = dim % x.ndim
    M = math.prod(x.shape[:dim])
    N = x.shape[dim]
    K = math.prod(normalized_shape) if dim == 0 else x.numel() // M // N
    out = torch.empty((M, K), device=x.device, dtype=x.dtype)
    if K == 1:
        raise ValueError("a reduction over the last axis is another kernel's job")
    grid = lambda meta: (M, triton.cdiv(K, meta["TILE_K"]))  # noqa: E731
    sum_over_middle[grid](out, x, M, N, K, TILE_N=triton.next_power_of_2(N))
    return out


def double(x):
    table = {"a": 1}
    n = table[x]  # a made-up call cannot satisfy this
    never_launched[(1,)](x, n, BLOCK=1024)
