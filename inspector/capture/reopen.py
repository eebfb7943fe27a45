"""Reopen a captured kernel as an ordinary inspection: its standalone file (the kernel, the helpers
it calls and an `example()` making the recorded launch) is written to disk and compiled through
`inspector.compile.api.inspect_kernel`, the sandboxed path, for any target."""

from __future__ import annotations

import base64
import hashlib
import os
import re
from pathlib import Path
from typing import Any

from .. import launch_data, places
from ..hardware.targets import DEFAULT_TARGET
from .store import Capture, KernelEntry


class NoReproducer(ValueError):
    """The capture holds no standalone file for this kernel (its notes say why)."""


def captures_dir() -> Path:
    """$TRITON_INSPECTOR_HOME/captures (by default ~/.local/share/triton-inspector/captures)."""
    return places.inspector_home() / "captures"


def file_name(entry: KernelEntry, index: int) -> str:
    """A file name for the entry's standalone file: `<kernel>.py`, or `<kernel>_<n>.py` for the
    n-th specialisation of one kernel in a capture."""
    safe = re.sub(r"[^A-Za-z0-9_]", "_", entry.name) or "kernel"
    return f"{safe}.py" if index == 0 else f"{safe}_{index + 1}.py"


def specialisation_index(capture: Capture, entry: KernelEntry) -> int:
    """Which specialisation of its kernel the entry is (0 for the first), in table order."""
    same = [k for k in capture.sorted_kernels() if k.name == entry.name]
    return next((i for i, k in enumerate(same) if k is entry), 0)


def write_standalone(
    capture: Capture,
    entry: KernelEntry,
    folder: str | os.PathLike | None = None,
    path: str | os.PathLike | None = None,
) -> Path:
    """Write the entry's standalone kernel file; returns its path. Without `path`, it goes to
    `folder` (default: a folder of this capture's own under `captures_dir()`)."""
    if not entry.reproducer:
        why = "; ".join(entry.notes) or "it was not recorded"
        raise NoReproducer(f"{entry.name}: the capture holds no standalone file for it ({why})")
    if path is None:
        if folder is None:
            digest = hashlib.sha256(
                (
                    capture.created + capture.source_path + "".join(k.reproducer for k in capture.kernels)
                ).encode()
            ).hexdigest()[:12]
            folder = captures_dir() / digest
        path = Path(folder) / file_name(entry, specialisation_index(capture, entry))
    from ..files import atomic_write_text

    atomic_write_text(path, entry.reproducer)
    data = launch_data.sidecar(path)
    if entry.data:  # the launch's index tensors, read by the reproducer's example()
        with open(data, "wb") as f:
            f.write(base64.b64decode(entry.data))
    elif os.path.exists(data):
        os.remove(data)
    return Path(path)


def reopen(
    capture: Capture,
    entry: KernelEntry,
    target: str = DEFAULT_TARGET,
    folder: str | os.PathLike | None = None,
    **kwargs: Any,
):
    """Compile the captured launch for `target` ("native" on a GPU): an Inspection record, with
    every stage, resources, occupancy. kwargs go to inspect_kernel (options, consts, ...)."""
    from ..compile.api import inspect_kernel

    path = write_standalone(capture, entry, folder)
    return inspect_kernel(path, kernel=entry.name, target=target, **kwargs)
