"""The capture file: one gzip-compressed JSON document holding every kernel a run compiled or
launched, with the sources it needs to be reopened anywhere.

Kept plain on purpose (no pickles, nothing executable): a capture is opened by the app and the
command line, possibly on another machine, and what it holds is only ever shown or written to a
kernel file that goes through the sandboxed compile path. Opening a file (`reading.load`) also
reads tritonparse traces, so both kinds open the same way.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
from dataclasses import asdict, dataclass, field, fields
from typing import Any

FORMAT = "triton-inspector-capture"
VERSION = 1
MAX_FILE_BYTES = 4 << 20  # a module file larger than this is not kept (its kernel's source still is)


class CaptureFileError(ValueError):
    """A file that is neither a capture nor a tritonparse trace (or is damaged)."""


@dataclass
class KernelEntry:
    """One specialisation of one kernel: what Triton compiled (or, under the interpreter, would
    compile) for a set of launches that share signature, constexprs, attributes and options."""

    name: str  # the kernel function's name
    kind: str = "jit"  # "jit" | "autotuned" | "inductor" | "compiled" (seen compiling, not launching)
    module: str = ""  # the Python module that defines it
    file: str = ""  # the file that defines it, as on the capturing machine
    line: int = 0  # the line of its `def` in that file
    file_id: str = ""  # key of that file's text in Capture.files ("" when not kept)
    source: str = ""  # the kernel function's source text
    launch_site: str = ""  # "file:line" of the code that made its first launch
    # parameter -> Triton type ("*fp32", "i32", "constexpr")
    signature: dict[str, str] = field(default_factory=dict)
    constexprs: dict[str, Any] = field(default_factory=dict)  # parameter -> value (constexprs and ==1 / None)
    attributes: dict[str, list[str]] = field(default_factory=dict)  # parameter -> ["tt.divisibility=16"]
    options: dict[str, Any] = field(default_factory=dict)  # num_warps, num_stages, num_ctas, maxnreg, ...
    arguments: list[dict[str, Any]] = field(default_factory=list)  # the first launch's arguments, described
    grid: list[int] | None = None  # the first launch's grid
    grids: int = 0  # how many distinct grids its launches used
    launches: int = 0  # launches made by the program (autotuner benchmark runs not counted)
    benchmark_launches: int = 0  # launches the autotuner made while benchmarking configs
    # launches of kernels of this name (any specialisation, benchmarking included) before this
    # entry's first launch by the program: what a profiler skips to reach it (`ncu --launch-skip`)
    launch_skip: int = 0
    autotune: dict[str, Any] | None = None  # {"configs": [...], "chosen": index, "key": {...}}
    compiled: dict[str, Any] | None = None  # {"hash", "target", "shared", "registers", "spills", ...}
    time_ms: float | None = None  # total GPU time of its launches, only when measured on a GPU
    reproducer: str = ""  # a standalone kernel file with an example() that makes this launch
    # the first launch's integer and boolean tensors, bit-exact (inspector.launch_data): an .npz
    # file's bytes in base64, "" when none was carried; and why a tensor was not
    data: str = ""
    data_skipped: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        return self.name


@dataclass
class Capture:
    """Everything one run (or one tritonparse trace) holds, kernels first by launches."""

    kernels: list[KernelEntry] = field(default_factory=list)
    files: dict[str, dict[str, Any]] = field(default_factory=dict)  # file_id -> {"path", "text"}
    program: list[str] = field(default_factory=list)  # the command line that ran
    cwd: str = ""
    created: str = ""
    mode: str = ""  # "gpu" | "interpreter" | "compile-only" | "tritonparse"
    device: str = ""  # the GPU's name, or what ran the kernels
    timed: bool = False  # whether time_ms was measured (on a GPU)
    triton_version: str = ""
    torch_version: str = ""
    python_version: str = ""
    seconds: float = 0.0  # how long the captured run took
    source_path: str = ""  # where this capture was read from (not stored)
    notes: list[str] = field(default_factory=list)
    format: str = FORMAT
    version: int = VERSION

    def add_file(self, path: str, text: str) -> str:
        """Keep a module's text once; returns its id ("" when too large)."""
        if len(text) > MAX_FILE_BYTES:
            return ""
        file_id = hashlib.sha256(text.encode()).hexdigest()[:16]
        self.files.setdefault(file_id, {"path": path, "text": text})
        return file_id

    def sorted_kernels(self) -> list[KernelEntry]:
        """Most launched first (then most time, then name): the order of the table."""
        return sorted(self.kernels, key=lambda k: (-k.launches, -(k.time_ms or 0.0), k.name))

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d.pop("source_path", None)
        return d

    @staticmethod
    def from_dict(d: dict[str, Any]) -> "Capture":
        known = {f.name for f in fields(Capture)}
        entry_fields = {f.name for f in fields(KernelEntry)}
        data = {k: v for k, v in d.items() if k in known}
        data["kernels"] = [
            KernelEntry(**{k: v for k, v in e.items() if k in entry_fields}) for e in d.get("kernels") or []
        ]
        return Capture(**data)


def save(capture: Capture, path: str | os.PathLike) -> str:
    """Write the capture (gzip'd JSON), atomically; returns the path."""
    path = os.fspath(path)
    data = json.dumps(capture.to_dict(), default=_json_default).encode()
    tmp = f"{path}.tmp{os.getpid()}"
    with gzip.open(tmp, "wb", compresslevel=6) as f:
        f.write(data)
    os.replace(tmp, path)
    return path


def _json_default(value: Any) -> Any:
    return repr(value)
