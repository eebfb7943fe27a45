"""The folder a reproducer runs in, under Nsight Compute (`run_ncu`) or Proton (`run_proton`)."""

from __future__ import annotations

import os
import shutil
import tempfile
from contextlib import contextmanager
from typing import Iterator

from ..launch_data import sidecar


@contextmanager
def reproducer_folder(prefix: str, reproducer: str, runner: str,
                      data: bytes = b"") -> Iterator[tuple[str, str, str, dict[str, str]]]:
    """A fresh temporary folder holding `reproducer` as kernel_repro.py and `runner` as run.py
    (and `data`, the launch's carried tensors, beside the reproducer: inspector.launch_data):
    yields (folder, reproducer path, runner path, environment); the folder is removed on exit.

    The environment gives the run a Triton cache of its own: a cached binary's line info names the
    reproducer of an earlier run, whose folder is gone, and Nsight Compute could not show the source lines.
    """
    work = tempfile.mkdtemp(prefix=prefix)
    try:
        repro, run = os.path.join(work, "kernel_repro.py"), os.path.join(work, "run.py")
        for path, text in ((repro, reproducer), (run, runner)):
            with open(path, "w") as f:
                f.write(text)
        if data:
            with open(sidecar(repro), "wb") as f:
                f.write(data)
        yield work, repro, run, {**os.environ, "TRITON_CACHE_DIR": os.path.join(work, "triton-cache")}
    finally:
        shutil.rmtree(work, ignore_errors=True)
