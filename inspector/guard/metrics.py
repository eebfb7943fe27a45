"""What the guard measures in one compiled kernel, read from its `Inspection` record.

Resources come from the record itself (ptxas/cubin on NVIDIA, the AMDGCN metadata on AMD),
occupancy and its limiter from the occupancy calculator (`rec.occupancy`), the width of every
load and store from `inspector.analysis.memory_report`, layout conversions from
`inspector.analysis.layout_report`. Each figure keeps the kernel-file line it concerns, so a
regression can name it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..analysis import layout_report, memory_report
from ..record import Inspection
from .discovery import kernel_defs


@dataclass(frozen=True)
class Metric:
    """A figure the guard compares: which way is worse, and how much worse passes by default."""

    name: str
    label: str  # as a regression line prints it
    unit: str  # appended to values ("B") or "%" for fractions shown as percentages
    higher_is_worse: bool
    default_threshold: str  # allowed worsening: "0", "10%", or "off"
    rank: int  # which regression leads a kernel's line (lower first)


# Numeric metrics, in the order a regression line lists them. NVIDIA and AMD each fill theirs;
# a metric a record lacks (None) is neither stored nor compared.
METRICS: dict[str, Metric] = {m.name: m for m in (
    Metric("spill_bytes", "spill stores", " B", True, "0", 1),  # ptxas "bytes spill stores"
    Metric("vgpr_spills", "VGPR spills", "", True, "0", 1),
    Metric("sgpr_spills", "SGPR spills", "", True, "0", 1),
    Metric("occupancy", "occupancy", "%", False, "0", 3),
    Metric("shared_bytes", "shared memory", " B", True, "0", 4),
    Metric("local_bytes", "local memory", " B", True, "0", 5),  # stack frame per thread
    Metric("scratch_bytes", "scratch", " B", True, "0", 5),
    Metric("conversions", "layout conversions", "", True, "0", 6),
    Metric("registers", "registers", "", True, "10%", 7),
    Metric("vgprs", "VGPRs", "", True, "10%", 7),
    Metric("agprs", "AGPRs", "", True, "10%", 7),
    Metric("sgprs", "SGPRs", "", True, "25%", 8),
)}
# The two checks that are not numbers: whether the kernel compiles and launches at all, and the
# width of each load and store (any narrowing is a regression unless turned "off").
LAUNCH_RANK = 0
MEMORY_RANK = 2
DEFAULT_THRESHOLDS: dict[str, str] = {"launchable": "0", "memory": "0",
                                      **{m.name: m.default_threshold for m in METRICS.values()}}
TMA = "tma"  # width of a bulk (TMA) copy, which moves whole tiles: better than any per-thread width


@dataclass
class Access:
    """One load or store: its kernel-file line and the narrowest width the target got."""

    line: int
    width: int | str  # bits per thread per instruction, or "tma"
    reasons: list[str] = field(default_factory=list)  # why it is not 128-bit, as the IR tells

    def to_baseline(self) -> dict[str, Any]:
        return {"line": self.line, "bits": self.width}


@dataclass
class KernelMetrics:
    """The guard's view of one kernel compiled for one target."""

    kernel: str
    target: str
    def_line: int | None  # the kernel's `def` line
    launchable: bool
    problem: str | None = None  # why it cannot launch
    problem_line: int | None = None
    problem_kind: str | None = None  # the record's error kind ("missing_constexpr": nothing launched it)
    values: dict[str, float | int] = field(default_factory=dict)  # METRICS name -> value
    lines: dict[str, int] = field(default_factory=dict)  # METRICS name -> the line it concerns
    limiter: str | None = None  # what bounds occupancy ("registers", "warps, registers")
    memory: dict[str, Access] = field(default_factory=dict)  # "load x_ptr" -> Access
    cached: bool = False
    compile_seconds: float = 0.0

    @property
    def not_launched(self) -> bool:
        """Nothing in the file launched the kernel and its code alone does not give every value."""
        return self.problem_kind == "missing_constexpr"

    def to_baseline(self) -> dict[str, Any]:
        """The entry this kernel and target get in a baseline file."""
        if not self.launchable:
            return {"launchable": False, "problem": self.problem}
        out: dict[str, Any] = {"launchable": True, **self.values}
        if self.limiter:
            out["limiter"] = self.limiter
        out["memory"] = {k: a.to_baseline() for k, a in self.memory.items()}
        return out


def width_rank(width: int | str | None) -> int:
    """An order on widths: TMA above any per-thread width."""
    if width == TMA:
        return 1 << 16
    return int(width) if isinstance(width, int) else 0


def show_width(width: int | str | None) -> str:
    return "TMA" if width == TMA else f"{width}-bit" if width is not None else "none"


def _memory(rec: Inspection) -> tuple[dict[str, Access], int | None]:
    report = memory_report(rec)
    out: dict[str, Access] = {}
    for acc in report.accesses:
        if acc.verdict == "none":
            continue  # nothing in the machine code (folded away): no width to guard
        width: int | str | None = TMA if acc.verdict == "tma" else acc.width_bits
        if width is None:
            continue
        base = f"{acc.direction} {acc.pointer or acc.op}"
        key, n = base, 1
        while key in out:  # the same pointer loaded twice: numbered in program order
            n += 1
            key = f"{base} #{n}"
        out[key] = Access(acc.line, width, list(acc.reasons))
    spill_line = next((s.line for s in report.spills if "store" in s.kind), None)
    if spill_line is None and report.spills:
        spill_line = report.spills[0].line
    return out, spill_line


def metrics_of(rec: Inspection) -> KernelMetrics:
    """The guard's figures for one record (a failed or unlaunchable one included)."""
    defs = kernel_defs(rec.source)
    def_line = defs[rec.kernel].line if rec.kernel in defs else None
    m = KernelMetrics(rec.kernel, rec.target, def_line, launchable=True, cached=rec.cached,
                      compile_seconds=rec.compile_seconds)
    problem = rec.launch_problem()
    if problem is not None:
        err = rec.error
        # Without the file's path (the baseline is shared between machines): the line is kept apart.
        m.launchable = False
        m.problem = f"{err.kind}: {(err.message.splitlines() or [''])[0]}" if err is not None else problem
        m.problem_line = err.line if err is not None and err.line else def_line
        m.problem_kind = err.kind if err is not None else "resources"
        return m
    r = rec.resources
    if rec.backend == "hip":
        raw: dict[str, Any] = {"vgprs": r.vgprs, "agprs": r.agprs, "sgprs": r.sgprs, "vgpr_spills": r.vgpr_spills,
                               "sgpr_spills": r.sgpr_spills, "scratch_bytes": r.scratch_bytes}
    else:
        raw = {"registers": r.registers, "spill_bytes": r.spill_store_bytes, "local_bytes": r.local_bytes}
    raw["shared_bytes"] = r.shared_bytes
    occ = rec.occupancy or {}
    if occ.get("occupancy") is not None:
        raw["occupancy"] = round(float(occ["occupancy"]), 4)
        m.limiter = ", ".join(occ.get("limiters") or []) or None
    layouts = layout_report(rec)
    raw["conversions"] = len(layouts.conversions)
    m.values = {k: v for k, v in raw.items() if v is not None}
    m.memory, spill_line = _memory(rec)
    for name in m.values:
        m.lines[name] = def_line or 0
    for name in ("spill_bytes", "vgpr_spills", "sgpr_spills", "local_bytes", "scratch_bytes"):
        if spill_line and name in m.values:
            m.lines[name] = spill_line
    if layouts.conversions and layouts.conversions[0].source_lines:
        m.lines["conversions"] = layouts.conversions[0].source_lines[0]
    return m
