"""Source line <-> stage line mapping, and IR <-> IR through the source lines they share.

Choices, made once here:
- A stage line maps to every line of the kernel file in its location chain: code inlined from a
  `@triton.jit` helper in the same file maps to the helper's own line AND to each call site;
  code inlined from another file (Triton's `tl.cdiv` in `standard.py`, a helper module) maps to
  the call site in the kernel file, and the other file's line is listed in `elsewhere`.
- A line with no source location (`loc(unknown)`, `.loc 1 0 0`, no `!dbg`) maps to nothing and
  is listed in `unknown`; it is never given a neighbour's line.
- A region op of the MLIR stages (`scf.for ... {`) maps through the location MLIR prints on the
  `}` that closes it; a function's `define` / `tt.func` line maps to its `def` line.
- SASS lines whose line-table entry ptxas inherited from a shifted PTX `.loc` (Triton 3.9) or
  that lack the call site of inlined code are re-attributed through the PTX (see
  `locations.sass_locations`); they are listed in `inferred`, and may map to several lines
  where the PTX leaves a choice.
Line numbers are 1-based within the stage text split on "\\n" (`locations.stage_lines`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from ..record import Inspection
from .context import Context, context


@dataclass
class StageMap:
    """One stage's mapping. Keys and values are 1-based line numbers."""

    stage: str
    to_source: dict[int, list[int]] = field(default_factory=dict)  # stage line -> kernel-file lines
    from_source: dict[int, list[int]] = field(default_factory=dict)  # kernel-file line -> stage lines
    unknown: list[int] = field(default_factory=list)  # code lines with no source location
    elsewhere: dict[int, list[str]] = field(default_factory=dict)  # code lines located only in other files
    inferred: list[int] = field(default_factory=list)  # lines re-attributed through another stage (SASS)
    columns: bool = True  # whether this stage's locations carry columns
    code_lines: int = 0  # lines holding code (ops / instructions)


@dataclass
class LineMap:
    """Every stage's mapping for one inspection (`line_map(rec)`)."""

    file: str
    stages: dict[str, StageMap] = field(default_factory=dict)

    def stage_lines(self, stage: str, source_line: int) -> list[int]:
        """Lines of `stage` that came from `source_line` of the kernel file."""
        sm = self.stages.get(stage)
        return sm.from_source.get(source_line, []) if sm else []

    def everywhere(self, source_line: int) -> dict[str, list[int]]:
        """Every stage's lines that came from `source_line` (the panes to highlight)."""
        return {stage: sm.from_source.get(source_line, []) for stage, sm in self.stages.items()}

    def source_lines(self, stage: str, line: int) -> list[int]:
        """Kernel-file lines that `line` of `stage` came from (empty when it has no location)."""
        sm = self.stages.get(stage)
        return sm.to_source.get(line, []) if sm else []

    def related(self, stage: str, line: int, other: str) -> list[int]:
        """Lines of `other` that share a source line with `line` of `stage` (IR <-> IR)."""
        sm = self.stages.get(other)
        if sm is None:
            return []
        out: set[int] = set()
        for src in self.source_lines(stage, line):
            out.update(sm.from_source.get(src, ()))
        return sorted(out)


def _stage_map(ctx: Context, stage: str) -> StageMap:
    loc = ctx.stages[stage]
    sm = StageMap(stage=stage, columns=loc.columns, inferred=sorted(loc.inferred), code_lines=len(loc.code_lines))
    to_source = sm.to_source
    from_source: dict[int, list[int]] = {}
    is_user = ctx.is_user_file
    for no in sorted(loc.code_lines + loc.aux_lines) if loc.aux_lines else loc.code_lines:
        chains = loc.chains.get(no)
        if not chains:
            sm.unknown.append(no)
            continue
        lines: list[int] = []
        for chain in chains:
            for f, ln, _ in chain:
                if is_user(f) and ln not in lines:
                    lines.append(ln)
        if not lines:
            sm.elsewhere[no] = sorted({f"{os.path.basename(c[0][0])}:{c[0][1]}" for c in chains})
            continue
        to_source[no] = lines
        for ln in lines:
            from_source.setdefault(ln, []).append(no)
    # region ops (mapped through their closing brace) come after their bodies: keep lists sorted
    if stage in ("ttir", "ttgir"):
        for v in from_source.values():
            v.sort()
    sm.from_source = dict(sorted(from_source.items()))
    return sm


def line_map(rec: Inspection) -> LineMap:
    """Every stage's line mapping (stage -> StageMap) for `rec`. Cheap after the first call per record."""
    ctx = context(rec)
    if "line_map" in ctx.memo:
        return ctx.memo["line_map"]
    lm = LineMap(file=rec.compiled_file)
    for stage in rec.stage_names():
        if stage in ctx.stages:
            lm.stages[stage] = _stage_map(ctx, stage)
    ctx.memo["line_map"] = lm
    return lm
