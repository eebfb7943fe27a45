"""Kernels written for the analysis tests, and helpers to find their `tl.*` lines."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

# A helper inlined from the same file, a library function inlined from Triton (tl.cdiv), a
# reduction, a masked load with `other`, and a store: every tl.* line survives to the machine code.
HELPER = '''\
import torch
import triton
import triton.language as tl


@triton.jit
def _scale(x, s):
    return tl.exp(x) * s


@triton.jit
def helper_kernel(x_ptr, out_ptr, n, s, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    y = _scale(x, s)
    total = tl.sum(y, axis=0)
    blocks = tl.cdiv(n, BLOCK)
    tl.store(out_ptr + offs, y / total + blocks, mask=mask)


def example(device):
    x = torch.randn(4096, device=device)
    out = torch.empty(4096, device=device)
    helper_kernel[(4,)](x, out, 4096, 0.5, BLOCK=1024)
'''
HELPER_BODY_LINE = 8  # `return tl.exp(x) * s`
HELPER_CALL_LINE = 17  # `y = _scale(x, s)`
CDIV_LINE = 19  # `blocks = tl.cdiv(n, BLOCK)`

# Each access pattern once: an eviction hint, a strided volatile load, a vectorised atomic, a store
# shifted by one element (unaligned) with a cache modifier.
ACCESS = '''\
import torch
import triton
import triton.language as tl


@triton.jit
def access_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, eviction_policy="evict_last")
    y = tl.load(y_ptr + offs * 2, volatile=True)
    tl.atomic_add(out_ptr + offs, x + y, mask=offs < n)
    tl.store(out_ptr + offs + 1, x, cache_modifier=".cs")


def example(device):
    x = torch.randn(4096, device=device)
    y = torch.randn(8192, device=device)
    out = torch.empty(4097, device=device)
    access_kernel[(4,)](x, y, out, 4096, BLOCK=1024)
'''
ACCESS_LINES = {"hint": 9, "strided": 10, "atomic": 11, "shifted": 12}

# Compiled with maxnreg=64 it spills: three 2048-element rows per thread of one warp.
SPILL = '''\
import torch
import triton
import triton.language as tl


@triton.jit
def spill_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a = tl.load(x_ptr + offs)
    b = tl.load(x_ptr + BLOCK + offs)
    c = tl.load(x_ptr + 2 * BLOCK + offs)
    d = a * b + c
    e = tl.exp(a) * d + tl.sqrt(tl.abs(b)) * c
    tl.store(out_ptr + offs, d * e + a * b * c)


def example(device):
    x = torch.randn(3 * 2048, device=device)
    out = torch.empty(2048, device=device)
    spill_kernel[(1,)](x, out, BLOCK=2048, num_warps=1)
'''

# A 32 x 32 x 32 fp32 dot; PRECISION picks tf32 (tensor cores) or ieee (FMA units).
DOT = '''\
import torch
import triton
import triton.language as tl


@triton.jit
def dot_kernel(a_ptr, b_ptr, c_ptr, PRECISION: tl.constexpr):
    offs = tl.arange(0, 32)
    a = tl.load(a_ptr + offs[:, None] * 32 + offs[None, :])
    b = tl.load(b_ptr + offs[:, None] * 32 + offs[None, :])
    c = tl.dot(a, b, input_precision=PRECISION)
    tl.store(c_ptr + offs[:, None] * 32 + offs[None, :], c)


def example(device):
    a = torch.randn(32, 32, device=device)
    b = torch.randn(32, 32, device=device)
    c = torch.empty(32, 32, device=device)
    dot_kernel[(1,)](a, b, c, PRECISION="tf32")
'''
DOT_LINE = 11


def write_kernel(directory: Path, name: str, source: str) -> Path:
    """Write a kernel source to `directory/name.py` and return its path."""
    path = Path(directory) / f"{name}.py"
    path.write_text(textwrap.dedent(source))
    return path


def tl_lines(source: str) -> list[int]:
    """Lines inside `@triton.jit` (or `@gluon.jit`) functions that call a `tl.*` (Gluon: `gl.*`)
    function (tl.load, tl.math.exp2, gl.exp2, ...)."""
    tree = ast.parse(source)
    out: set[int] = set()
    for fn in ast.walk(tree):
        if not isinstance(fn, ast.FunctionDef):
            continue
        if not any("jit" in ast.unparse(d) for d in fn.decorator_list):
            continue
        for node in ast.walk(fn):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                root = node.func
                while isinstance(root, ast.Attribute):
                    root = root.value
                if isinstance(root, ast.Name) and root.id in ("tl", "gl"):
                    out.add(node.lineno)
    return sorted(out)


def compiled(sandbox, path, **kw):
    """A record of `path` compiled in `sandbox` (`inspect_kernel` keywords), which must have compiled."""
    from inspector.compile.api import inspect_kernel

    rec = inspect_kernel(path, sandbox=sandbox, timeout=300, **kw)
    assert rec.error is None, rec.error and rec.error.short()
    return rec
