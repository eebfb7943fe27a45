"""What every analysis of one record starts from, computed once per record and cached.

`context(rec)` parses each stage's source locations and instructions once; the line map, the
memory table, the instruction mix and the advisor all read it. The cache holds a record only
while the record lives and forgets it when a stage's text is replaced.
"""

from __future__ import annotations

import os
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..record import Inspection
from .locations import (
    Chain,
    StageLocations,
    amdgcn_locations,
    llvm_locations,
    mlir_locations,
    ptx_locations,
    sass_locations,
    stage_lines,
)

# Each stage's location parser (SASS's also takes the PTX: `sass_locations`).
PARSERS: dict[str, Callable[[str], StageLocations]] = {
    "ttir": mlir_locations,
    "ttgir": mlir_locations,
    "llir": llvm_locations,
    "ptx": ptx_locations,
    "amdgcn": amdgcn_locations,
}


@dataclass
class Context:
    """Parsed stages of one record: locations, lines, and which file is the kernel's own."""

    file: str
    stages: dict[str, StageLocations] = field(default_factory=dict)
    lines: dict[str, list[str]] = field(default_factory=dict)
    memo: dict[str, Any] = field(default_factory=dict)  # derived results (line map, memory table, ...)
    _user: dict[str, bool] = field(default_factory=dict)

    def is_user_file(self, path: str) -> bool:
        """Whether a location's file is the inspected kernel file (not a helper module or Triton)."""
        hit = self._user.get(path)
        if hit is None:
            hit = _same_file(path, self.file)
            self._user[path] = hit
        return hit

    def source_lines(self, chain: Chain) -> list[int]:
        """The kernel-file lines of a location chain: the innermost first, then its call sites."""
        return [ln for f, ln, _ in chain if self.is_user_file(f)]

    def line_sources(self, stage: str, line: int) -> list[int]:
        """Kernel-file lines of one stage line (every chain, deduplicated, in order)."""
        out: list[int] = []
        for chain in self.stages[stage].chains.get(line, ()):
            for ln in self.source_lines(chain):
                if ln not in out:
                    out.append(ln)
        return out

    def user_frame(self, chain: Chain) -> tuple[int, int] | None:
        """(line, column) of the innermost kernel-file frame of a chain."""
        for f, ln, col in chain:
            if self.is_user_file(f):
                return ln, col
        return None


def _same_file(a: str, b: str) -> bool:
    if not a or not b:
        return False
    if os.path.normpath(a) == os.path.normpath(b):
        return True
    if not os.path.isabs(a):  # a bare name, as comments print it
        return os.path.basename(a) == os.path.basename(b)
    try:
        return os.path.realpath(a) == os.path.realpath(b)
    except OSError:
        return False


_cache: dict[int, tuple[weakref.ref, tuple, Context]] = {}


def _fingerprint(rec: Inspection) -> tuple:
    return (rec.compiled_file, tuple((k, id(v), len(v)) for k, v in rec.stages.items()))


def context(rec: Inspection) -> Context:
    """The parsed stages of `rec` (cached while `rec` lives and its stages are unchanged)."""
    key = id(rec)
    hit = _cache.get(key)
    fp = _fingerprint(rec)
    if hit is not None and hit[0]() is rec and hit[1] == fp:
        return hit[2]
    ctx = Context(file=rec.compiled_file)
    for stage, text in rec.stages.items():
        ctx.lines[stage] = stage_lines(text)
        if stage in PARSERS:
            ctx.stages[stage] = PARSERS[stage](text)
    if "sass" in rec.stages:
        ctx.stages["sass"] = sass_locations(rec.stages["sass"], ctx.stages.get("ptx"))
    try:
        ref = weakref.ref(rec, lambda _r, k=key: _cache.pop(k, None))
    except TypeError:
        return ctx
    _cache[key] = (ref, fp, ctx)
    return ctx
