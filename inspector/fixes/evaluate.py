"""What a candidate changes, measured on its own compile: is the finding gone, the access's width
and sector efficiency, registers, spills, shared memory, occupancy, layout conversions, findings
it adds; and the score that ranks candidates (`score`). A candidate whose promise the example
breaks, or whose outputs differ, is never ranked above one that holds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from ..analysis.advisor import Finding, advise
from ..analysis.layouts import layout_report
from ..analysis.memory import memory_report
from ..record import Inspection

_ACCESS_CODES = ("scalar_access", "partial_access", "uncoalesced_access")


@dataclass
class Measures:
    """The figures a fix is judged by, for one compile and one finding's line."""

    width_bits: int | None = None
    sector_efficiency: float | None = None
    registers: int | None = None
    spill_bytes: int = 0
    shared_bytes: int = 0
    occupancy: float | None = None
    conversions: int = 0
    # shared memory: wavefronts per request over the ideal at the line (1: no bank conflict), and the
    # same over every shared instruction of the kernel (a ratio: a smaller tile is not "fewer conflicts")
    shared_excess: float | None = None
    shared_excess_kernel: float | None = None
    findings: list[tuple[str, int | None, str]] = field(default_factory=list)  # (code, line, severity)


def judged(rec: Inspection | None) -> bool:
    """Whether a compile can be judged: it compiled, or compiled but cannot launch on its target
    (Triton's OutOfResources: the stages are there, and the advisor says `cannot_launch`)."""
    return rec is not None and bool(rec.stages) and (rec.ok or rec.error.kind == "out_of_resources")


def measures(rec: Inspection, line: int | None, relines: Any = None) -> Measures:
    """The figures of `rec`, the access ones at `line`. `relines` (a `peel.Peeled`) relates the
    lines of a candidate that wrote lines twice to the original's: the access is read at its
    full-block copy, and findings on the partial-block copy (what the tail keeps) are left out."""
    m = Measures()
    if not judged(rec):
        return m
    at = relines.new_line(line) if relines is not None and line is not None else line
    accesses = [a for a in memory_report(rec).accesses if at is not None and a.line == at and not a.uniform]
    if accesses:
        m.width_bits = min((a.width_bits for a in accesses if a.width_bits), default=None)
        effs = [a.sector_efficiency for a in accesses if a.sector_efficiency is not None]
        m.sector_efficiency = min(effs) if effs else None
    shared = memory_report(rec).shared
    at_line = [x for x in shared if at is not None and x.line == at and x.shared_wavefronts is not None]
    if at_line:
        m.shared_excess = max(x.shared_wavefronts / max(x.ideal_shared_wavefronts or 1, 1e-9) for x in at_line)
    known = [x for x in shared if x.shared_wavefronts is not None and x.ideal_shared_wavefronts]
    if known:
        m.shared_excess_kernel = (sum(x.shared_wavefronts * (x.instructions - x.unknown) for x in known)
                                  / sum(x.ideal_shared_wavefronts * (x.instructions - x.unknown) for x in known))
    r = rec.resources
    m.registers = r.registers if r.registers is not None else r.vgprs
    # bytes spilled per thread, as the advisor's finding counts them (stores: each spilled byte is
    # also loaded back, so adding the loads would count it twice)
    m.spill_bytes = (r.spill_store_bytes or 0) + (r.scratch_bytes or 0)
    m.shared_bytes = r.shared_bytes
    m.occupancy = (rec.occupancy or {}).get("occupancy")
    m.conversions = layout_report(rec).through_shared
    found = [(f.code, f.line, f.severity) for f in advise(rec)]
    if relines is not None:
        found = [(c, relines.old_line(l) if l is not None else None, s) for c, l, s in found
                 if l is None or relines.old_line(l) is not None]
    m.findings = found
    return m


# Findings about the whole kernel: their line is where the evidence happens to be (the first
# spill, a launch site), and a candidate may move it without removing anything.
KERNEL_WIDE = ("spills", "occupancy", "cannot_launch", "small_grid", "tail_wave", "layout_conversions")


def finding_gone(f: Finding, after: Measures) -> bool:
    """The finding's code (any access finding, for an access) no longer reported at its line, or
    anywhere for a whole-kernel finding."""
    codes = _ACCESS_CODES if f.code in _ACCESS_CODES else (f.code,)
    if f.code in _ACCESS_CODES and after.width_bits is None:
        return False  # no access found at the line any more (moved, merged): nothing says it is gone
    return not any(c in codes and (l == f.line or f.code in KERNEL_WIDE) for c, l, _ in after.findings)


def helped(f: Finding, before: Measures, after: Measures | None) -> bool:
    """Whether a candidate moved the figure a limit finding is about the right way, gone or not
    (less shared memory or fewer registers for a block that does not fit, fewer spills, more
    occupancy): worth stepping further."""
    if after is None:
        return False
    if f.code == "cannot_launch":
        return after.shared_bytes < before.shared_bytes or (after.registers or 0) < (before.registers or 0)
    if f.code == "spills":
        return after.spill_bytes < before.spill_bytes
    if f.code == "occupancy":
        return (after.occupancy or 0) > (before.occupancy or 0)
    if f.code == "bank_conflicts":
        return (after.shared_excess or 0) < (before.shared_excess or 0)
    return False


def changes(before: Measures, after: Measures) -> dict[str, list[Any]]:
    """Every figure that moved: name -> [before, after]."""
    out: dict[str, list[Any]] = {}
    for name in ("width_bits", "sector_efficiency", "registers", "spill_bytes", "shared_bytes", "occupancy",
                 "conversions", "shared_excess", "shared_excess_kernel"):
        a, b = getattr(before, name), getattr(after, name)
        if a != b:
            out[name] = [a, b]
    return out


def new_findings(before: Measures, after: Measures) -> list[tuple[str, int | None, str]]:
    """High or medium findings the candidate brings that the original did not have. A kernel that
    could not launch had no occupancy to judge: its occupancy finding once it fits is not new."""
    had = {(c, l) for c, l, _ in before.findings}
    codes = {c for c, _, _ in before.findings}
    if "cannot_launch" in codes:
        codes.add("occupancy")

    def known(code: str, line: int | None) -> bool:
        # a memory access is itself at a line; spills and the like move between lines with the code
        return (code, line) in had if code in _ACCESS_CODES else code in codes

    return [x for x in after.findings if not known(x[0], x[1]) and x[2] in ("high", "medium")]


def score(f: Finding, before: Measures, after: Measures | None, assumptions_hold: bool | None,
          checked: bool | None, ms: tuple[float | None, float | None] = (None, None)) -> float:
    """Higher first. The finding gone counts most; then each figure's improvement, and measured
    time where there is a GPU (`ms`: the original's and the candidate's; twice as fast counts as
    much as the finding gone); a broken promise or different outputs sink a candidate below every
    one that holds, a failed compile below all."""
    if after is None:
        return -1000.0
    s = 0.0
    if ms[0] and ms[1]:
        s += 100 * math.log2(ms[0] / ms[1])
    if finding_gone(f, after):
        s += 100
    if before.width_bits and after.width_bits:
        s += 20 * math.log2(after.width_bits / before.width_bits)
    if before.sector_efficiency is not None and after.sector_efficiency is not None:
        s += 50 * (after.sector_efficiency - before.sector_efficiency)
    if before.spill_bytes:
        s += 40 * (before.spill_bytes - after.spill_bytes) / before.spill_bytes
    elif after.spill_bytes:
        s -= 40
    if before.occupancy is not None and after.occupancy is not None:
        s += 30 * (after.occupancy - before.occupancy)
    s += 5 * (before.conversions - after.conversions)
    if before.shared_excess_kernel and after.shared_excess_kernel:  # the line's conflicts and any it moves elsewhere
        s += 30 * math.log2(before.shared_excess_kernel / after.shared_excess_kernel)
    s -= 15 * len(new_findings(before, after))
    if assumptions_hold is False:
        s -= 500
    if checked is False:
        s -= 400
    return s
