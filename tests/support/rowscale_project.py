"""A small user project whose kernel no guess from names opens: rows in triples, a weight as long as
a row (asserted by its wrapper), and the project's own test that launches it (for "open by running")."""

from __future__ import annotations

import textwrap
from pathlib import Path

OPS = '''
import torch
import triton
import triton.language as tl


@triton.jit
def _rowscale_kernel(X, Out, W, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < n_cols
    x = tl.load(X + row * stride + cols, mask=m, other=0.0)
    w = tl.load(W + cols, mask=m, other=0.0)
    tl.store(Out + row * stride + cols, (x * w).to(Out.dtype.element_ty), mask=m)


def rowscale(x, w):
    # what no guess from names gets right: rows in triples, a weight as long as a row
    assert x.shape[-1] == w.shape[0] and x.shape[-1] % 3 == 0, "the rows must come in triples"
    out = torch.empty_like(x)
    _rowscale_kernel[(x.shape[0],)](x, out, w, x.stride(0), x.shape[-1], BLOCK=triton.next_power_of_2(x.shape[-1]))
    return out
'''

TEST = '''
import torch
from mylib.ops import rowscale


def test_rowscale():
    x = torch.randn(8, 300, device="cuda")
    w = torch.randn(300, device="cuda")
    torch.testing.assert_close(rowscale(x, w), x * w)  # the kernel really ran (on the CPU)


def test_nothing():
    assert True
'''


def make_project(root: Path) -> Path:
    """Write the project (`mylib/ops.py`, `tests/test_ops.py`) under `root`; return `root`."""
    (root / "mylib").mkdir()
    (root / "mylib" / "__init__.py").write_text("")
    (root / "mylib" / "ops.py").write_text(textwrap.dedent(OPS))
    (root / "tests").mkdir()
    (root / "tests" / "test_ops.py").write_text(textwrap.dedent(TEST))
    return root
