"""One kernel compiled by two Triton releases: the diff, the layouts, and one summary line.

`compare(a, b)` takes two inspection records of the same kernel and call (compiled with
`inspect_kernel(..., triton=...)`) and returns a `VersionComparison`: the inspection diff
(settings, resources, occupancy, memory verdicts, instruction mix, stages with renumbering
ignored), what changed in the TTGIR layouts, and `summary`, the line a guard prints per kernel
("add_kernel sm_90, Triton 3.6.0 -> 3.9.0: registers 26 -> 24; PTX +3 -3 lines; ...").
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from ..analysis import Change, InspectionDiff, diff_inspections, layout_report
from ..record import STAGE_TITLES, Inspection


@dataclass
class VersionComparison:
    """`compare(a, b)`."""

    triton_a: str
    triton_b: str
    diff: InspectionDiff
    layouts: list[Change] = field(
        default_factory=list
    )  # layout kinds, conversions (and through shared memory)
    summary: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def layout_changes(a: Inspection, b: Inspection) -> list[Change]:
    """The TTGIR's layouts side by side: the encodings used, and the layout conversions (all,
    through shared memory, inside loops). Empty when either side has no TTGIR."""
    if "ttgir" not in a.stages or "ttgir" not in b.stages:
        return []
    ra, rb = layout_report(a), layout_report(b)

    def kinds(r) -> list[str]:
        return sorted({lay.kind for lay in r.layouts})

    return [
        Change("layouts", kinds(ra), kinds(rb)),
        Change("layout conversions", len(ra.conversions), len(rb.conversions)),
        Change("conversions through shared memory", ra.through_shared, rb.through_shared),
        Change("conversions in loops", ra.in_loops, rb.in_loops),
    ]


def summary_line(a: Inspection, b: Inspection, d: InspectionDiff, layouts: list[Change]) -> str:
    """What changed between the two compiles, in one line (for a guard's log, per kernel)."""
    head = f"{a.kernel or b.kernel} {a.target}, Triton {a.triton_version} -> {b.triton_version}"
    bits = []
    changed = [c for c in d.resources if c.changed]
    if changed:
        bits.append(", ".join(f"{c.name} {c.a} -> {c.b}" for c in changed))
    occ = next((c for c in d.occupancy if c.name == "occupancy" and c.changed), None)
    if occ is not None and isinstance(occ.a, (int, float)) and isinstance(occ.b, (int, float)):
        bits.append(f"occupancy {occ.a * 100:.0f}% -> {occ.b * 100:.0f}%")
    verdicts = [m for m in d.memory if m.a != m.b]
    if verdicts:
        bits.append(
            f"{len(verdicts)} memory verdict{'s' if len(verdicts) > 1 else ''} changed ("
            + ", ".join(
                f"line {m.line_b or m.line_a} {m.a or 'absent'} -> {m.b or 'absent'}" for m in verdicts[:3]
            )
            + ")"
        )
    bits += [f"{c.name} {_text(c.a)} -> {_text(c.b)}" for c in layouts if c.changed]
    texts = [
        f"{STAGE_TITLES.get(s, s)} +{sd.added} -{sd.removed}"
        for s, sd in d.stages.items()
        if not sd.identical
    ]
    same = [STAGE_TITLES.get(s, s) for s, sd in d.stages.items() if sd.identical]
    if texts:
        bits.append("lines " + ", ".join(texts))
    if same:
        bits.append("identical " + ", ".join(same))
    if not changed and not verdicts and not texts:
        bits.insert(0, "no change")
    return f"{head}: " + "; ".join(bits)


def _text(v: Any) -> str:
    return "+".join(map(str, v)) or "-" if isinstance(v, list) else str(v)


def compare(a: Inspection, b: Inspection, context: int = 3) -> VersionComparison:
    """Compare two compiles of one kernel by two Triton releases (see the module docstring)."""
    d = diff_inspections(a, b, context=context)
    layouts = layout_changes(a, b)
    return VersionComparison(a.triton_version, b.triton_version, d, layouts, summary_line(a, b, d, layouts))
