"""Capture a real workload: every Triton kernel a program compiles or launches, in one file that
reopens as ordinary inspections (any target, GPU-free).

In code::

    import inspector
    with inspector.capture("run.inspector"):
        train_step()

From the shell: `python -m inspector capture -o run.inspector -- python train.py ...`, then
`python -m inspector capture list run.inspector`. Importing this package imports neither torch nor
Triton; the hooks (`inspector.triton_compat.launch_hooks`) load when a capture starts.
"""

from __future__ import annotations

import contextlib
import os
import sys
import types
from typing import TYPE_CHECKING, Iterator

from .reading import load, loads
from .store import Capture, CaptureFileError, KernelEntry, save

if TYPE_CHECKING:
    from .recorder import Recorder

__all__ = ["capture", "Capture", "CaptureFileError", "KernelEntry", "load", "loads", "save"]


@contextlib.contextmanager
def capture(
    path: str | os.PathLike, *, time: bool = False, program: list[str] | None = None
) -> Iterator["Recorder"]:
    """Record every Triton compile and launch inside the block and write them to `path` when it
    ends (also when it raises). `time=True` measures each launch with CUDA events (on a GPU)."""
    from .recorder import Recorder

    recorder = Recorder(time=time, program=program).start()
    try:
        yield recorder
    finally:
        save(recorder.stop(), path)


class _CallableModule(types.ModuleType):
    """`inspector.capture(path)` is the context manager; `inspector.capture.load` etc. still work."""

    def __call__(self, path: str | os.PathLike, **kw):  # type: ignore[no-untyped-def]
        return capture(path, **kw)


sys.modules[__name__].__class__ = _CallableModule
