"""A small repository of Triton kernels for the guard's tests, and the two changes that regress it.

`ops/` is a package of three files: a row norm that keeps its row in registers, a scale kernel
with 128-bit loads and stores, and two entry kernels sharing a `@triton.jit` helper (which the
guard must not take for an entry). `spill()` widens the row norm's row from 4096 to 32768 columns
(each of the 128 threads then holds 256 values: ptxas spills on sm_90); `misalign()` makes the scale
kernel read one element past its block start (not 16-byte aligned: 32-bit loads).
"""

from __future__ import annotations

from pathlib import Path

ROWNORM = '''"""Row-wise RMS norm: one program per row, the row kept in registers."""

import torch
import triton
import triton.language as tl

ROW = 4096  # columns per row


@triton.jit
def rownorm_kernel(x_ptr, w_ptr, out_ptr, stride, N, eps, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    rms = tl.rsqrt(tl.sum(x * x, axis=0) / N + eps)
    w = tl.load(w_ptr + cols, mask=mask).to(tl.float32)
    tl.store(out_ptr + row * stride + cols, x * rms * w, mask=mask)


def example(device):
    x = torch.randn(64, ROW, device=device)
    w = torch.randn(ROW, device=device)
    out = torch.empty_like(x)
    rownorm_kernel[(64,)](x, w, out, x.stride(0), ROW, 1e-6, BLOCK_N=triton.next_power_of_2(ROW), num_warps=4)
'''

SCALE = '''"""out = x * alpha, in blocks of BLOCK elements."""

import torch
import triton
import triton.language as tl


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x * alpha, mask=mask)


def example(device):
    x = torch.randn(1 << 20, device=device)
    out = torch.empty_like(x)
    scale_kernel[(x.numel() // 1024,)](x, out, x.numel(), 2.0, BLOCK=1024)
'''

FUSED = '''"""Two entry kernels sharing a @triton.jit helper."""

import torch
import triton
import triton.language as tl


@triton.jit
def _gelu(x):
    return 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476))


@triton.jit
def gelu_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, _gelu(tl.load(x_ptr + offs, mask=mask)), mask=mask)


@triton.jit
def bias_gelu_kernel(x_ptr, b_ptr, out_ptr, n, cols, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask) + tl.load(b_ptr + offs % cols, mask=mask)
    tl.store(out_ptr + offs, _gelu(x), mask=mask)


def example(device):
    x = torch.randn(8192, device=device)
    b = torch.randn(256, device=device)
    out = torch.empty_like(x)
    gelu_kernel[(8,)](x, out, x.numel(), BLOCK=1024)
    bias_gelu_kernel[(8,)](x, b, out, x.numel(), 256, BLOCK=1024)
'''

ENTRY_KERNELS = {"ops/rownorm.py::rownorm_kernel", "ops/scale.py::scale_kernel", "ops/fused.py::gelu_kernel",
                 "ops/fused.py::bias_gelu_kernel"}
ROWNORM_LINES = range(11, 19)  # the row norm kernel's def to its last line
SCALE_LOAD_LINE = 12  # `x = tl.load(x_ptr + offs, mask=mask)`


def write(root: Path) -> Path:
    """The repository, as committed before the change."""
    ops = root / "ops"
    ops.mkdir(parents=True, exist_ok=True)
    (ops / "__init__.py").write_text("")
    (ops / "rownorm.py").write_text(ROWNORM)
    (ops / "scale.py").write_text(SCALE)
    (ops / "fused.py").write_text(FUSED)
    return root


def spill(root: Path) -> None:
    """The row norm's rows grow to 32768 columns on the same 4 warps: it spills on sm_90."""
    path = root / "ops" / "rownorm.py"
    path.write_text(path.read_text().replace("ROW = 4096", "ROW = 32768"))


def misalign(root: Path) -> None:
    """The scale kernel skips a one-element header: its loads are no longer 16-byte aligned."""
    path = root / "ops" / "scale.py"
    text = path.read_text()
    assert "tl.load(x_ptr + offs, mask=mask)" in text
    path.write_text(text.replace("tl.load(x_ptr + offs, mask=mask)", "tl.load(x_ptr + offs + 1, mask=mask)"))
