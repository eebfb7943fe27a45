"""Analysis of an inspection: what the stage text means for the kernel.

Plain functions over an `inspector.record.Inspection`, returning dataclasses that
`dataclasses.asdict` turns into JSON. Nothing here imports Triton, torch or a UI library; each
result is computed once per record and cached while the record lives (`context.context`).

Line numbers: kernel-file lines are 1-based lines of `rec.source`; stage lines are 1-based lines of
`rec.stages[stage]` split on "\\n" (`stage_lines(text)` splits the same way).

Line mapping (mapping.py)
    line_map(rec) -> LineMap
        .stages[stage] -> StageMap: to_source {stage line: [source lines]}, from_source
        {source line: [stage lines]}, unknown [code lines with no location], elsewhere {line: ["standard.py:43"]}
        for code located only in other files, inferred [lines re-attributed through the PTX], columns.
        .stage_lines(stage, source_line) -> [stage lines];  .source_lines(stage, line) -> [source lines]
        .everywhere(source_line) -> {stage: [stage lines]}  (every pane to highlight for one source line)
        .related(stage, line, other_stage) -> [lines of other_stage sharing a source line]  (IR <-> IR)
    Inlined @triton.jit helpers map to the helper's own line and to each call site; see mapping.py.

Memory access (memory.py; machine_memory.py reads the machine instructions, access_causes.py the
reasons, coalescing.py the sectors)
    memory_report(rec) -> MemoryReport
        .accesses: [MemoryAccess] one per tl.load / tl.store / atomic / descriptor op: line, op, pointer,
        dtype, masked, cache, instructions {stage: [MemoryInstruction]}, width_bits, verdict
        ("vectorised" | "partial" | "scalar" | "tma" | "none"), summary, reasons, reason_codes;
        coalescing: vector_bits, sectors_per_request, ideal_sectors_per_request, sector_efficiency,
        uniform, causes (actionable first), coalescing (Coalescing: status, note, requests, assumptions)
        .instructions: [LineMemory] every memory instruction kind per source line and stage
        .spills: [LineMemory] local-memory / scratch instructions per source line; .spill_bytes
    launch_line_sectors(rec) -> {source line: (sectors, ideal)} over the whole recorded launch

Instruction mix (mix.py)
    instruction_mix(rec) -> InstructionMix: .stages[stage] -> StageMix(total, counts {class: n},
        by_line {source line: {class: n}}, unattributed); StageMix.line_totals(cls=None) -> heat map

Layouts (layouts.py)
    layout_report(rec) -> LayoutReport: layouts [Layout(name, kind, params, explanation,
        contiguous_per_thread, lines, source_lines)], conversions [LayoutConversion(line, source_lines,
        src, dst, in_loop, lowering, evidence)], through_shared, in_loops

Diff (diff.py)
    diff_inspections(a, b, stages=None) -> InspectionDiff: settings, resources, occupancy, mix
        {stage: {class: (a, b)}}, memory [AccessChange] (verdicts and figures), shared [SharedChange]
        (wavefronts), stages {stage: StageDiff(hunks, added, removed)}
    stage_diff(stage, text_a, text_b) -> StageDiff   (renumbered SSA names / registers ignored)

Advisor (advisor.py)
    advise(rec) -> [Finding(code, severity, score, line, title, evidence, suggestion, lines)], ranked

Everything at once
    explain(rec) -> Explanation(findings, memory, mix, layouts)
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..record import Inspection
from .advisor import Finding, advise
from .diff import AccessChange, Change, InspectionDiff, SharedChange, StageDiff, diff_inspections, stage_diff
from .instructions import CLASSES
from .layouts import Layout, LayoutConversion, LayoutReport, layout_report
from .locations import stage_lines
from .machine_memory import LineMemory, MemoryInstruction
from .mapping import LineMap, StageMap, line_map
from .memory import MemoryAccess, MemoryReport, memory_report
from .mix import InstructionMix, StageMix, instruction_mix


@dataclass
class Explanation:
    """Every analysis of one inspection (the `explain` command's JSON)."""

    kernel: str
    target: str
    findings: list[Finding] = field(default_factory=list)
    memory: MemoryReport | None = None
    mix: InstructionMix | None = None
    layouts: LayoutReport | None = None


def explain(rec: Inspection) -> Explanation:
    """Findings, memory table, instruction mix and layouts of `rec` in one record."""
    if rec.error is not None and not rec.stages:
        return Explanation(rec.kernel, rec.target)
    return Explanation(rec.kernel, rec.target, advise(rec), memory_report(rec), instruction_mix(rec), layout_report(rec))


__all__ = [
    "CLASSES",
    "AccessChange",
    "Change",
    "Explanation",
    "Finding",
    "InspectionDiff",
    "SharedChange",
    "InstructionMix",
    "Layout",
    "LayoutConversion",
    "LayoutReport",
    "LineMap",
    "LineMemory",
    "MemoryAccess",
    "MemoryInstruction",
    "MemoryReport",
    "StageDiff",
    "StageMap",
    "StageMix",
    "advise",
    "diff_inspections",
    "explain",
    "instruction_mix",
    "layout_report",
    "line_map",
    "memory_report",
    "stage_diff",
    "stage_lines",
]
