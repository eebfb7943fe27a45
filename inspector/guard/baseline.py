"""The baseline file: what every kernel compiled to when it was last accepted, and the thresholds.

A small JSON file meant to be committed and reviewed next to the kernels (`guard.json`):

    {
      "format": "triton-inspector-guard/1",
      "triton": "3.9.0",
      "thresholds": {"registers": "15%"},
      "kernels": {
        "kernels/add.py::add_kernel": {
          "thresholds": {"shared_bytes": "4096"},
          "sm_90": {"launchable": true, "registers": 26, "spill_bytes": 0, "local_bytes": 0,
                    "shared_bytes": 0, "occupancy": 1.0, "limiter": "warps, registers",
                    "conversions": 0,
                    "memory": {"load x_ptr": {"line": 25, "bits": 128}, "store out_ptr": {...}}},
          "gfx942": {...}
        }
      }
    }

Kernels are named `PATH::KERNEL`, PATH relative to the baseline file's folder (so the file moves
with the repository). A threshold is how much worse a figure may get and still pass: a number in
the metric's unit ("0": any worsening fails; "64" bytes of shared memory), a percentage of the
baseline value ("10%"), or "off" (not compared). The top-level `thresholds` change the defaults
(`inspector.guard.metrics.DEFAULT_THRESHOLDS`) for every kernel, a kernel's own `thresholds`
change them for that kernel; both are kept when `--update-baseline` rewrites the figures.
Loads and stores are named by direction and pointer argument ("load x_ptr", "load x_ptr #2" for
the second load through it), so a line moving in the file is not a change; `line` is kept for
the reader.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from typing import Any

from ..files import atomic_write_text
from .metrics import DEFAULT_THRESHOLDS, KernelMetrics

FORMAT = "triton-inspector-guard/1"
KERNELS_KEY = '"kernels"'
_THRESHOLD = re.compile(r"^\s*(?:off|\d+(?:\.\d+)?%?)\s*$", re.IGNORECASE)


class BaselineError(Exception):
    """A baseline file that cannot be used; the message names the file, the line and the fix."""


@dataclass(frozen=True)
class Threshold:
    """How much worse a figure may get: `absolute` units, or `percent` of the baseline value."""

    off: bool = False
    absolute: float = 0.0
    percent: float | None = None

    def allowed(self, before: float) -> float:
        if self.percent is not None:
            return abs(before) * self.percent / 100.0
        return self.absolute

    @staticmethod
    def parse(text: Any) -> "Threshold":
        value = str(text).strip().lower()
        if value == "off":
            return Threshold(off=True)
        if value.endswith("%"):
            return Threshold(percent=float(value[:-1]))
        return Threshold(absolute=float(value))


@dataclass
class Baseline:
    """A loaded (or new) baseline: accepted figures per kernel and target, and thresholds."""

    path: str | None
    thresholds: dict[str, str] = field(default_factory=dict)  # file-wide changes to the defaults
    kernels: dict[str, dict[str, Any]] = field(default_factory=dict)  # "PATH::KERNEL" -> {target: entry, ...}
    triton: str | None = None

    @property
    def base_dir(self) -> str:
        """The folder kernel paths are relative to: the baseline's own, else the working directory."""
        return os.path.dirname(os.path.abspath(self.path)) if self.path else os.getcwd()

    def kernel_id(self, file: str, kernel: str) -> str:
        rel = os.path.relpath(os.path.abspath(file), self.base_dir).replace(os.sep, "/")
        return f"{rel}::{kernel}"

    def entry(self, kernel_id: str, target: str) -> dict[str, Any] | None:
        """The accepted figures of a kernel on a target, or None when it has none."""
        value = self.kernels.get(kernel_id, {}).get(target)
        return value if isinstance(value, dict) else None

    def thresholds_for(self, kernel_id: str) -> dict[str, Threshold]:
        """Every metric's threshold for this kernel (defaults < file-wide < the kernel's own)."""
        merged = {**DEFAULT_THRESHOLDS, **self.thresholds, **(self.kernels.get(kernel_id, {}).get("thresholds") or {})}
        return {k: Threshold.parse(v) for k, v in merged.items()}

    def kernels_of_file(self, file: str) -> list[str]:
        """The kernel ids this baseline holds for one file."""
        prefix = self.kernel_id(file, "")
        return [k for k in self.kernels if k.startswith(prefix)]

    def record(self, kernel_id: str, m: KernelMetrics) -> None:
        """Accept `m` as the figures of a kernel on its target (thresholds are kept)."""
        self.kernels.setdefault(kernel_id, {})[m.target] = m.to_baseline()

    def forget(self, kernel_id: str, target: str) -> None:
        entry = self.kernels.get(kernel_id)
        if entry is not None:
            entry.pop(target, None)
            if not any(k != "thresholds" for k in entry) and not entry.get("thresholds"):
                del self.kernels[kernel_id]

    def to_text(self, triton: str) -> str:
        """The file's text: kernels sorted, small objects on one line, so a review sees the change."""
        kernels: dict[str, Any] = {}
        for kid in sorted(self.kernels):
            entry = self.kernels[kid]
            ordered: dict[str, Any] = {}
            if entry.get("thresholds"):
                ordered["thresholds"] = entry["thresholds"]
            for target in sorted(k for k in entry if k != "thresholds"):
                ordered[target] = entry[target]
            kernels[kid] = ordered
        doc: dict[str, Any] = {"format": FORMAT, "triton": triton}
        doc["thresholds"] = self.thresholds
        doc["kernels"] = kernels
        return _dump(doc, 0) + "\n"

    def save(self, triton: str) -> None:
        if not self.path:
            raise BaselineError("no baseline file named: give --baseline FILE")
        atomic_write_text(self.path, self.to_text(triton))


def _dump(value: Any, indent: int) -> str:
    """JSON with objects and lists of plain values kept on one line when short."""
    one = json.dumps(value)
    if not isinstance(value, (dict, list)) or (len(one) + indent <= 110 and not _nested_deep(value)):
        return one
    pad, inner = " " * indent, " " * (indent + 2)
    if isinstance(value, list):
        return "[\n" + ",\n".join(inner + _dump(v, indent + 2) for v in value) + "\n" + pad + "]"
    return "{\n" + ",\n".join(f"{inner}{json.dumps(k)}: {_dump(v, indent + 2)}" for k, v in value.items()) \
        + "\n" + pad + "}"


def _nested_deep(value: Any) -> bool:
    """Containers inside containers (a target's entry with its memory table) get their own lines."""
    items = value.values() if isinstance(value, dict) else value
    return any(isinstance(v, (dict, list)) and any(isinstance(w, (dict, list)) for w in
               (v.values() if isinstance(v, dict) else v)) for v in items)


def _line_of(text: str, needle: str) -> int:
    for i, line in enumerate(text.splitlines(), 1):
        if needle in line:
            return i
    return 1


def _check_thresholds(path: str, text: str, where: str, thresholds: Any) -> dict[str, str]:
    if thresholds is None:
        return {}
    if not isinstance(thresholds, dict):
        raise BaselineError(f"{path}:{_line_of(text, where)}: \"thresholds\" must be an object of metric: value")
    for name, value in thresholds.items():
        line = _line_of(text, f'"{name}"')
        if name not in DEFAULT_THRESHOLDS:
            raise BaselineError(f"{path}:{line}: unknown metric {name!r} in thresholds; known: "
                                f"{', '.join(sorted(DEFAULT_THRESHOLDS))}")
        if isinstance(value, bool) or not _THRESHOLD.match(str(value)):
            raise BaselineError(f"{path}:{line}: threshold {name}: {value!r} is not a number, a percentage "
                                "(\"10%\") or \"off\"")
    return {k: str(v) for k, v in thresholds.items()}


def load(path: str | None) -> Baseline:
    """Read a baseline file; a missing file is an empty baseline (everything is new)."""
    if not path or not os.path.exists(path):
        return Baseline(path)
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise BaselineError(f"{path}: cannot read the baseline ({e})") from e
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise BaselineError(f"{path}:{e.lineno}:{e.colno}: not valid JSON ({e.msg}); fix it, or delete the file "
                            "and write a new one with --update-baseline") from e
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise BaselineError(f"{path}:1: not a guard baseline (expected \"format\": \"{FORMAT}\"); write one with "
                            "--update-baseline")
    kernels = doc.get("kernels") or {}
    if not isinstance(kernels, dict):
        raise BaselineError(f"{path}:{_line_of(text, KERNELS_KEY)}: \"kernels\" must be an object")
    for kid, entry in kernels.items():
        line = _line_of(text, json.dumps(kid))
        if "::" not in kid or not isinstance(entry, dict):
            raise BaselineError(f"{path}:{line}: kernel {kid!r} must be named PATH::KERNEL and hold an object "
                                "of targets")
        entry["thresholds"] = _check_thresholds(path, text, kid, entry.get("thresholds"))
        if not entry["thresholds"]:
            del entry["thresholds"]
    return Baseline(path, _check_thresholds(path, text, '"thresholds"', doc.get("thresholds")), kernels,
                    doc.get("triton"))
