"""A kernel file the compiler dies on, for the tests of what a crash reports (tests/isolation)."""

from __future__ import annotations

from pathlib import Path

from inspector.compile.api import inspect_kernel
from inspector.isolation.sandbox import Sandbox

# A kernel the compiler dies on: LLVM prints why, then aborts the worker (no Python exception)
ABORTING = '''
import triton
import triton.language as tl


@triton.jit
def unpack(src, dst, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(src + offs, mask=offs < n, other=0)
    # two input constraints for one argument: an assertion in LLVM, not a type error
    y = tl.inline_asm_elementwise("mov.b32 $0, $1;", "=r,r,r", [x], dtype=tl.int32, is_pure=True, pack=1)
    tl.store(dst + offs, y, mask=offs < n)
'''


def compiler_death(folder: Path, box: Sandbox):
    """The record of a compile of ABORTING in `box`."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "unpack.py"
    path.write_text(ABORTING)
    return inspect_kernel(path, target="sm_90", sandbox=box, use_cache=False,
                          args={"src": "int32", "dst": "int32", "n": "4096"}, consts={"BLOCK": "1024"})
