"""Diff of two inspections: settings, resources, occupancy, instruction mix, memory-access
verdicts, and each stage's text.

The text diff compares lines after normalising what renumbers from one compile to the next
(SSA names, registers, labels, location references, SASS addresses and control bits, debug
sections), so that `num_warps 4 vs 8` shows the instructions that changed rather than every
line; the hunks print the original lines.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import asdict, dataclass, field
from typing import Any

from ..record import Inspection
from .memory import memory_report
from .mix import instruction_mix
from .words import number_words, percent_words


@dataclass
class Change:
    """One value that differs (or not) between the two inspections."""

    name: str
    a: Any
    b: Any

    @property
    def changed(self) -> bool:
        return self.a != self.b


@dataclass
class StageDiff:
    """The text diff of one stage present in both inspections."""

    stage: str
    a_lines: int
    b_lines: int
    added: int  # normalised lines only in b
    removed: int  # normalised lines only in a
    identical: bool  # equal after normalising
    hunks: list[str] = field(default_factory=list)  # unified-diff lines (original text), empty when identical


@dataclass
class AccessChange:
    """The memory-access verdict of one load/store in both inspections."""

    line_a: int | None
    line_b: int | None
    op: str
    a: str | None  # verdict ("vectorised", "scalar", ...); None when the op is missing on that side
    b: str | None
    a_summary: str
    b_summary: str
    b_reasons: list[str]
    # each side's figures (`FIGURES`: bits per access, sectors per warp request, the fewest that
    # would do, the share of moved bytes used); empty on a side without the op
    a_figures: dict[str, Any] = field(default_factory=dict)
    b_figures: dict[str, Any] = field(default_factory=dict)
    pointer: str | None = None  # the kernel argument its address derives from (B's, else A's)

    @property
    def changed(self) -> bool:
        return self.a != self.b or self.a_figures != self.b_figures


# An access's figures a diff compares (`MemoryAccess` fields); coalescing's are None where not computed.
FIGURES = ("width_bits", "sectors_per_request", "ideal_sectors_per_request", "sector_efficiency")


@dataclass
class SharedChange:
    """The shared-memory cost of one line's instructions of one kind in both inspections
    (`shared_memory.SharedAccess`): wavefronts per warp request, the conflict-free ideal, the
    busiest bank's ways; None where that side has no such instructions or their cost is unknown."""

    line_a: int | None
    line_b: int | None
    kind: str  # load | store | ldmatrix | stmatrix | async_copy | atomic
    a_wavefronts: float | None
    b_wavefronts: float | None
    a_ideal: float | None
    b_ideal: float | None
    a_ways: int | None
    b_ways: int | None
    b_cause: str = ""
    # why a side shows nothing for it though it may have such instructions (the model did not run
    # there, e.g. AMD's LDS): the report's `shared_note`; "" where that side was modelled
    a_note: str = ""
    b_note: str = ""

    @property
    def changed(self) -> bool:
        return (self.line_a is None or self.line_b is None or self.a_wavefronts != self.b_wavefronts
                or self.a_ways != self.b_ways)


@dataclass
class InspectionDiff:
    """`diff_inspections(a, b)`."""

    a_label: str
    b_label: str
    settings: list[Change] = field(default_factory=list)  # target, options, arguments that differ
    resources: list[Change] = field(default_factory=list)  # every resource figure, changed or not
    occupancy: list[Change] = field(default_factory=list)
    mix: dict[str, dict[str, tuple[int, int]]] = field(default_factory=dict)  # stage -> class -> (a, b)
    memory: list[AccessChange] = field(default_factory=list)
    shared: list[SharedChange] = field(default_factory=list)  # shared-memory wavefronts, per line and kind
    stages: dict[str, StageDiff] = field(default_factory=dict)
    only_a: list[str] = field(default_factory=list)  # stages only one side has (ptx vs amdgcn)
    only_b: list[str] = field(default_factory=list)


# ---- normalising stage text --------------------------------------------------------------------------
# MLIR: `%x_6`, `%17#0`, `%arg10`, `#loc21`, trailing ` loc(#loc21)`, `^bb0`
MLIR_SSA = re.compile(r"%[\w.$-]+")
MLIR_LOC_TAIL = re.compile(r"\s+loc\(.*\)\s*$")
MLIR_LOC_REF = re.compile(r"#loc\d*")
# LLVM: `%20`, `!dbg !17`, `!17`, `#2`
LLVM_DBG = re.compile(r",?\s*!dbg !\d+")
LLVM_META = re.compile(r"!\d+")
LLVM_ATTR = re.compile(r"#\d+\b")
# PTX registers `%r12`, `%rd4`, `%p1`, `%f3`, `%rs2`, labels `$L__BB0_2`, `$L__tmp1`
PTX_REG = re.compile(r"%([a-z]+)\d+")
PTX_LABEL = re.compile(r"\$L__\w+")
# SASS: `        /*0090*/  --:-:2:-:1  LDG.E.128 R4, desc[UR4][R2.64] ;`, registers R4 UR4 P0 UP1, labels `.L_x_0`
SASS_PREFIX = re.compile(r"^\s*/\*[0-9a-f]+\*/\s+(?:[0-9a-f-]{2}:[0-9-]:[0-9-]:[Y-]:[0-9a-f]\s+)?")
SASS_REG = re.compile(r"\b(U?R|U?P)(\d+)\b")
SASS_LABEL = re.compile(r"\.L_x_\d+")
# AMDGCN: `v12`, `s[4:7]`, `v[0:3]`, `a5`, `.LBB0_3`, `.Ltmp2`
AMD_REG = re.compile(r"\b([vsa])(\d+|\[\d+:\d+\])")
AMD_LABEL = re.compile(r"\.L(?:BB|tmp|func_end)\w*")


def normalise(stage: str, text: str) -> tuple[list[str], list[str]]:
    """(normalised lines, original lines) of a stage with its non-code noise removed."""
    keep: list[tuple[str, str]] = []
    lines = text.split("\n")
    if stage == "ptx":
        cut = next((i for i, l in enumerate(lines) if l.strip().startswith(".section") and ".debug" in l), None)
        lines = lines[:cut] if cut is not None else lines
    for line in lines:
        s = line.strip()
        if not s:
            continue
        if stage in ("ttir", "ttgir"):
            if s.startswith("#loc"):
                continue
            n = MLIR_LOC_TAIL.sub("", s)
            n = MLIR_LOC_REF.sub("#loc", MLIR_SSA.sub("%", n))
        elif stage == "llir":
            if s.startswith(("!", "; ModuleID")):
                continue
            n = LLVM_ATTR.sub("#", LLVM_META.sub("!", LLVM_DBG.sub("", MLIR_SSA.sub("%", s))))
        elif stage == "ptx":
            if s.startswith((".loc", ".file", "//")):
                continue
            n = PTX_LABEL.sub("$L", PTX_REG.sub(r"%\1", s.split("//")[0].strip()))
            if not n:
                continue
        elif stage == "sass":
            if s.startswith("//"):
                continue
            n = SASS_LABEL.sub(".L", SASS_REG.sub(r"\1", SASS_PREFIX.sub("", line).strip()))
        elif stage == "amdgcn":
            if s.startswith((".loc", ";", ".file", ".Ltmp", ".cfi")):
                continue
            n = AMD_LABEL.sub(".L", AMD_REG.sub(r"\1", s.split(";")[0].strip()))
            if not n:
                continue
        else:
            n = s
        keep.append((n, line))
    return [k for k, _ in keep], [o for _, o in keep]


def stage_diff(stage: str, a: str, b: str, context: int = 3, max_hunk_lines: int = 4000) -> StageDiff:
    """Unified diff of one stage's text between two inspections, ignoring renumbering."""
    na, oa = normalise(stage, a)
    nb, ob = normalise(stage, b)
    sm = difflib.SequenceMatcher(None, na, nb, autojunk=len(na) + len(nb) > 40000)
    added = removed = 0
    hunks: list[str] = []
    for group in sm.get_grouped_opcodes(context):
        i1, i2, j1, j2 = group[0][1], group[-1][2], group[0][3], group[-1][4]
        hunks.append(f"@@ -{i1 + 1},{i2 - i1} +{j1 + 1},{j2 - j1} @@")
        for tag, a1, a2, b1, b2 in group:
            if tag == "equal":  # B's own text: equal once renumbered, and B's numbers are the header's
                hunks.extend(" " + ob[k].rstrip() for k in range(b1, b2))
                continue
            if tag in ("replace", "delete"):
                hunks.extend("-" + oa[k].rstrip() for k in range(a1, a2))
                removed += a2 - a1
            if tag in ("replace", "insert"):
                hunks.extend("+" + ob[k].rstrip() for k in range(b1, b2))
                added += b2 - b1
    if len(hunks) > max_hunk_lines:
        hunks = hunks[:max_hunk_lines] + [f"... {len(hunks) - max_hunk_lines} more diff lines"]
    return StageDiff(stage, len(a.split("\n")), len(b.split("\n")), added, removed, added == removed == 0, hunks)


# ---- the rest -------------------------------------------------------------------------------------------
_RESOURCE_FIELDS = ("num_warps", "num_stages", "num_ctas", "threads", "registers", "spill_store_bytes",
                    "spill_load_bytes", "local_bytes", "shared_bytes", "barriers", "vgprs", "agprs", "sgprs",
                    "vgpr_spills", "sgpr_spills", "lds_bytes", "scratch_bytes", "amd_occupancy")
_OCCUPANCY_FIELDS = ("blocks_per_sm", "active_warps", "occupancy", "limiters")


def describe(rec: Inspection, other: Inspection | None = None) -> str:
    """A short label for one side: kernel, target, and the settings that differ from `other`."""
    parts = [rec.target]
    mine = {**{k: v for k, v in rec.options.items()}, **{p.name: p.value for p in rec.parameters}}
    if other is not None:
        theirs = {**{k: v for k, v in other.options.items()}, **{p.name: p.value for p in other.parameters}}
        parts += [f"{k}={v}" for k, v in mine.items() if theirs.get(k) != v and not isinstance(v, (dict, list))]
        if rec.autotune_index is not None and rec.autotune_index != other.autotune_index:
            parts.append(f"config {rec.autotune_index}")
        if rec.file != other.file:
            parts.insert(0, rec.file)
        if rec.triton_version != other.triton_version:
            parts.insert(0, f"Triton {rec.triton_version}")
    else:
        parts += [f"num_warps={rec.options.get('num_warps')}"]
    return f"{rec.kernel} [{', '.join(str(p) for p in parts)}]"


def _param_words(p) -> str | None:
    """A parameter's value and its specialisation, if any ("128", "128 (tt.divisibility=16)")."""
    if p is None:
        return None
    return f"{p.value} ({', '.join(p.specialization)})" if p.specialization else str(p.value)


def _settings(a: Inspection, b: Inspection) -> list[Change]:
    out = [Change("target", a.target, b.target)] if a.target != b.target else []
    if a.triton_version != b.triton_version:
        out.insert(0, Change("triton", a.triton_version, b.triton_version))
    if a.file != b.file:
        out.append(Change("file", a.file, b.file))
    if a.kernel != b.kernel:
        out.append(Change("kernel", a.kernel, b.kernel))
    for k in sorted(set(a.options) | set(b.options)):
        if k in _RESOURCE_FIELDS:  # num_warps, num_stages, num_ctas: the resources list them once
            continue
        va, vb = a.options.get(k), b.options.get(k)
        if va != vb and not isinstance(va, (dict, list)) and not isinstance(vb, (dict, list)):
            out.append(Change(k, va, vb))
    pa = {p.name: p for p in a.parameters}
    pb = {p.name: p for p in b.parameters}
    for k in list(dict.fromkeys(list(pa) + list(pb))):
        x, y = pa.get(k), pb.get(k)
        vx = (x.value, x.specialization) if x else None
        vy = (y.value, y.specialization) if y else None
        if vx != vy:
            out.append(Change(k, _param_words(x), _param_words(y)))
    if a.autotune_index != b.autotune_index:
        out.append(Change("autotune config", a.autotune_index, b.autotune_index))
    return out


def _memory_changes(a: Inspection, b: Inspection) -> list[AccessChange]:
    """Pair the memory ops of both sides: by line and direction in the same source (the op may be
    rewritten, e.g. a descriptor load becomes a plain load on AMD), else by order and direction."""
    ra, rb = memory_report(a).accesses, memory_report(b).accesses
    same_file = a.file == b.file and a.source == b.source
    out: list[AccessChange] = []
    used: set[int] = set()
    for i, x in enumerate(ra):
        match = None
        for j, y in enumerate(rb):
            if j in used or y.direction != x.direction:
                continue
            if (same_file and y.line == x.line and (y.column == x.column or y.op != x.op)) or (
                    not same_file and j >= i):
                match = j
                break
        if match is None and same_file:
            # Triton releases place an op's column differently (3.6: the call, 3.9: the
            # statement): the same line and direction, in order, is the same access.
            match = next((j for j, y in enumerate(rb) if j not in used and y.direction == x.direction
                          and y.line == x.line), None)
        if match is None:
            out.append(AccessChange(x.line, None, x.op, x.verdict, None, x.summary, "", [], _figures(x), {}, x.pointer))
            continue
        used.add(match)
        y = rb[match]
        op = x.op if x.op == y.op else f"{x.op} -> {y.op}"
        out.append(AccessChange(x.line, y.line, op, x.verdict, y.verdict, x.summary, y.summary, y.reasons,
                                _figures(x), _figures(y), y.pointer or x.pointer))
    for j, y in enumerate(rb):
        if j not in used:
            out.append(AccessChange(None, y.line, y.op, None, y.verdict, "", y.summary, y.reasons, {}, _figures(y),
                                    y.pointer))
    return out


def figure_changes(m: AccessChange) -> list[str]:
    """The figures of an access that differ, in words ("width 128 -> 32 bits", "sectors per request
    16 -> 16 (ideal 16 -> 4)", "used 100% -> 25%")."""
    fa, fb = m.a_figures, m.b_figures
    out = []
    if fa.get("width_bits") != fb.get("width_bits"):
        out.append(f"width {number_words(fa.get('width_bits'))} -> {number_words(fb.get('width_bits'))} bits")
    if any(fa.get(k) != fb.get(k) for k in ("sectors_per_request", "ideal_sectors_per_request")):
        out.append(f"sectors per request {number_words(fa.get('sectors_per_request'))} -> "
                   f"{number_words(fb.get('sectors_per_request'))} (ideal "
                   f"{number_words(fa.get('ideal_sectors_per_request'))} -> "
                   f"{number_words(fb.get('ideal_sectors_per_request'))})")
    if fa.get("sector_efficiency") != fb.get("sector_efficiency"):
        out.append(f"used {percent_words(fa.get('sector_efficiency'))} -> {percent_words(fb.get('sector_efficiency'))}")
    return out


def _figures(x) -> dict[str, Any]:
    return {k: getattr(x, k) for k in FIGURES}


def _shared_changes(a: Inspection, b: Inspection) -> list[SharedChange]:
    """Pair the shared-memory costs of both sides: by line and kind in the same source, else by
    kind in order (another file, or lines that moved)."""
    ma, mb = memory_report(a), memory_report(b)
    sa, sb = ma.shared, mb.shared
    same_file = a.file == b.file and a.source == b.source
    out: list[SharedChange] = []
    used: set[int] = set()
    for x in sa:
        match = next((j for j, y in enumerate(sb) if j not in used and y.kind == x.kind
                      and (y.line == x.line or not same_file)), None)
        y = sb[match] if match is not None else None
        if match is not None:
            used.add(match)
        out.append(SharedChange(x.line, y.line if y else None, x.kind, x.shared_wavefronts,
                                y.shared_wavefronts if y else None, x.ideal_shared_wavefronts,
                                y.ideal_shared_wavefronts if y else None, x.bank_conflict_ways,
                                y.bank_conflict_ways if y else None, y.cause if y else "",
                                b_note="" if y else mb.shared_note))
    for j, y in enumerate(sb):
        if j not in used:
            out.append(SharedChange(None, y.line, y.kind, None, y.shared_wavefronts, None, y.ideal_shared_wavefronts,
                                    None, y.bank_conflict_ways, y.cause, a_note=ma.shared_note))
    return out


def diff_inspections(a: Inspection, b: Inspection, stages: list[str] | None = None, context: int = 3) -> InspectionDiff:
    """Compare two inspections (of the same kernel with other settings, or of two kernels).

    `stages` limits the text diffs (default: every stage both have).
    """
    d = InspectionDiff(describe(a, b), describe(b, a))
    d.settings = _settings(a, b)
    ra, rb = asdict(a.resources), asdict(b.resources)
    d.resources = [Change(k, ra.get(k), rb.get(k)) for k in _RESOURCE_FIELDS
                   if ra.get(k) is not None or rb.get(k) is not None]
    oa, ob = a.occupancy or {}, b.occupancy or {}
    d.occupancy = [Change(k, oa.get(k), ob.get(k)) for k in _OCCUPANCY_FIELDS if k in oa or k in ob]
    ma, mb = instruction_mix(a), instruction_mix(b)
    for stage in ma.stages:
        if stage in mb.stages:
            ca, cb = ma.stages[stage].counts, mb.stages[stage].counts
            keys = sorted(set(ca) | set(cb), key=lambda k: -(ca.get(k, 0) + cb.get(k, 0)))
            d.mix[stage] = {k: (ca.get(k, 0), cb.get(k, 0)) for k in keys}
            d.mix[stage]["total"] = (ma.stages[stage].total, mb.stages[stage].total)
    d.memory = _memory_changes(a, b)
    d.shared = _shared_changes(a, b)
    names_a, names_b = a.stage_names(), b.stage_names()
    d.only_a = [s for s in names_a if s not in names_b]
    d.only_b = [s for s in names_b if s not in names_a]
    for stage in names_a:
        if stage in names_b and (stages is None or stage in stages):
            d.stages[stage] = stage_diff(stage, a.stages[stage], b.stages[stage], context)
    return d
