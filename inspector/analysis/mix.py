"""Instruction mix: how many instructions (ops in the IRs) of each class every stage holds, in
total and per source line (a heat map over the kernel file).

Classes are `instructions.CLASSES`; padding `nop`s are not counted. Each instruction counts once,
at the innermost line of the kernel file in its location chain (a helper's own line for inlined
helper code); instructions without a kernel-file location are counted in `unattributed`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..record import Inspection
from .context import context
from .instructions import llvm_class, mlir_class, mlir_op


@dataclass
class StageMix:
    """One stage's instruction mix."""

    stage: str
    total: int = 0
    counts: dict[str, int] = field(default_factory=dict)  # class -> instructions
    by_line: dict[int, dict[str, int]] = field(default_factory=dict)  # source line -> class -> instructions
    unattributed: int = 0  # instructions with no kernel-file location

    def line_totals(self, cls: str | None = None) -> dict[int, int]:
        """Source line -> instructions (of one class, or all): the heat map's values."""
        if cls is None:
            return {ln: sum(c.values()) for ln, c in self.by_line.items()}
        return {ln: c[cls] for ln, c in self.by_line.items() if c.get(cls)}


@dataclass
class InstructionMix:
    """`instruction_mix(rec)`: every stage's mix."""

    stages: dict[str, StageMix] = field(default_factory=dict)


def instruction_mix(rec: Inspection) -> InstructionMix:
    """Counts by class per stage and per source line, for every stage of `rec`."""
    ctx = context(rec)
    if "mix" in ctx.memo:
        return ctx.memo["mix"]
    mix = InstructionMix()
    for stage in rec.stage_names():
        loc = ctx.stages.get(stage)
        if loc is None:
            continue
        lines = ctx.lines[stage]
        sm = StageMix(stage)
        for no in loc.code_lines:
            if stage in ("ttir", "ttgir"):
                op = mlir_op(lines[no - 1])
                if op is None or op in ("tt.func", "tt.return", "scf.yield", "tt.reduce.return", "tt.scan.return"):
                    continue
                cls = mlir_class(op, lines[no - 1])
            elif stage == "llir":
                if lines[no - 1].startswith("define"):
                    continue
                cls = llvm_class(lines[no - 1]) or "other"
            else:
                cls = loc.classes.get(no, "other")
            if cls == "nop":
                continue
            sm.total += 1
            sm.counts[cls] = sm.counts.get(cls, 0) + 1
            chains = loc.chains.get(no)
            frame = ctx.user_frame(chains[0]) if chains else None
            if frame is None:
                sm.unattributed += 1
                continue
            row = sm.by_line.setdefault(frame[0], {})
            row[cls] = row.get(cls, 0) + 1
        sm.counts = dict(sorted(sm.counts.items(), key=lambda kv: -kv[1]))
        sm.by_line = dict(sorted(sm.by_line.items()))
        mix.stages[stage] = sm
    ctx.memo["mix"] = mix
    return mix
