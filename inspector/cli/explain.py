"""`python -m inspector explain FILE ...`: what the compiled kernel means, ranked findings first.

    explain kernels/add.py --arg n=4095            findings and the memory-access table
    explain kernels/matmul.py --target sm_80 --json
    explain my_kernel.py --fail-on high            exit 3 when a high-severity finding is reported (CI)

Takes the same options as `compile`. Prints the advisor's findings (each with its source line and
evidence), the memory-access table (every tl.load / tl.store / atomic: the instructions it became,
their width per thread, the verdict and why), shared-memory wavefronts and bank conflicts per line,
spills by source line, layout conversions and the layouts in words, and the instruction mix per
stage. Exit status: 0, 1 when the kernel did not
compile, 2 on usage errors, 3 with --fail-on when a finding at or above that severity exists.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ..compile.api import code_digest
from ..compile.cache import Cache, cache_key
from .options import add_compile_options, command_parser, inspect_from
from .output import report_error, summary_line
from inspector.record import SEVERITIES, STAGE_TITLES, Inspection


def register(subparsers: Any) -> None:
    """Add the `explain` subcommand."""
    p = command_parser(subparsers, "explain", "findings, memory-access table, layouts and instruction mix of a kernel",
                       __doc__)
    add_compile_options(p)
    p.add_argument("--json", action="store_true", help="print one JSON object (findings, memory, mix, layouts)")
    p.add_argument("--fail-on", choices=SEVERITIES[:3], help="exit 3 when a finding of this severity or worse exists")
    p.add_argument("--all-layouts", action="store_true", help="also explain inline encodings (dot operands, slices)")
    p.add_argument("--profile", metavar="P.json", help="rank the findings by what this saved profile measured "
                                                       "(python -m inspector profile --out P.json)")
    p.set_defaults(func=run)


def _table(rows: list[list[str]], indent: str = "  ") -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return [indent + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]


def _sectors(a: Any) -> str:
    """`32 (ideal 4)`: sectors one warp's request touches, and the fewest that hold its bytes."""
    if a.uniform:
        return "uniform"
    cz = a.coalescing
    if cz is None or cz.sectors_per_request is None:
        return {"tma": "TMA", "data_dependent": "gather"}.get(cz.status, "-") if cz else "-"
    f = (lambda x: f"{x:.0f}" if abs(x - round(x)) < 0.05 else f"{x:.1f}")
    return f"{f(cz.sectors_per_request)} (ideal {f(cz.ideal_sectors_per_request)})"


def _efficiency(a: Any) -> str:
    return "-" if a.sector_efficiency is None or a.uniform else f"{a.sector_efficiency * 100:.0f}%"


def generated_note(rec: Inspection) -> list[str]:
    """What a generated kernel's report is about: the Helion kernel, its config, where lines point."""
    g = rec.generated
    if g is None:
        return []
    config = ", ".join(f"{k}={v}" for k, v in g.config.items() if k in ("block_sizes", "num_warps", "num_stages",
                                                                          "indexing", "pid_type"))
    return [f"{g.language.capitalize()} kernel {rec.kernel} (Helion {g.version}), compiled as the Triton kernel "
            f"{g.kernel} it generates for config {rec.autotune_index} of {len(rec.autotune_configs)} ({config}); "
            f"lines are the {g.language.capitalize()} file's, the generated Triton line in brackets "
            f"(`compile --stage triton` prints that code)."]


def format_explanation(rec: Inspection, all_layouts: bool = False) -> list[str]:
    """The human-readable report."""
    from inspector.analysis import explain
    from inspector.analysis.words import line_words

    ex = explain(rec)
    out = [summary_line(rec), *generated_note(rec), ""]
    out.append(f"Findings ({len(ex.findings)})")
    if not ex.findings:
        out.append("  none")
    for i, f in enumerate(ex.findings, 1):
        out.append(f"  {i}. [{f.severity}] {f.title}")
        for e in f.evidence:
            out.append(f"       {e}")
        if f.suggestion:
            out.append(f"       -> {f.suggestion}")
    mem = ex.memory
    if mem and mem.accesses:
        out += ["", f"Memory accesses (verdict from the {STAGE_TITLES.get(mem.main_stage or '', mem.main_stage)})"]
        rows = [["line", "op", "pointer", "dtype", "masked", "verdict", "bits", "sectors/request", "efficiency",
                 "instructions"]]
        for a in mem.accesses:
            stages = [s for s in ("ptx", "sass", "amdgcn") if a.instructions.get(s)]
            ins = " / ".join(", ".join(dict.fromkeys(i.opcode for i in a.instructions[s])) for s in stages)
            rows.append([line_words(rec, a.line), a.op.replace("tt.", ""), a.pointer or "-", a.dtype, "yes" if a.masked else "no",
                         a.verdict, str(a.width_bits or "-"), _sectors(a), _efficiency(a), ins or "-"])
        out += _table(rows)
        for a in mem.accesses:
            if a.coalescing is not None and a.coalescing.status != "computed" or a.uniform:
                out.append(f"  line {line_words(rec, a.line)} ({a.direction} of {a.pointer or '-'}): {a.coalescing.note if a.coalescing else 'uniform'}")
            for r in a.causes or a.reasons:
                out.append(f"  line {line_words(rec, a.line)}: {r}")
    if mem and mem.shared:
        out += ["", "Shared memory (wavefronts per warp request, from each lane's address in the PTX)"]
        out += _table([["line", "kind", "instructions", "bytes/thread", "wavefronts", "ideal", "conflict", "from"]] + [
            [line_words(rec, s.line), s.kind, str(s.instructions), str(s.bytes_per_thread),
             "-" if s.shared_wavefronts is None else f"{s.shared_wavefronts:.3g}",
             "-" if s.ideal_shared_wavefronts is None else f"{s.ideal_shared_wavefronts:.3g}",
             "-" if s.bank_conflict_ways is None else (f"{s.bank_conflict_ways}-way" if s.conflicted else "none"),
             "; ".join(s.ops) or "-"] for s in mem.shared])
        for s in mem.shared:
            if s.unknown:
                out.append(f"  line {line_words(rec, s.line)}: {s.unknown} {s.kind} instruction(s) address shared memory through a loaded "
                           "value or an argument: not modelled")
    elif mem and mem.shared_note:
        out += ["", f"Shared memory: {mem.shared_note}"]
    if mem and mem.spills:
        out += ["", "Spills (local memory instructions by source line)"]
        out += _table([["line", "stage", "kind", "count", "bytes", "opcodes"]] +
                      [[line_words(rec, s.line), s.stage, s.kind, str(s.count), str(s.bytes_per_thread), ", ".join(s.opcodes)]
                       for s in mem.spills])
    lay = ex.layouts
    if lay and (lay.layouts or lay.conversions):
        out += ["", (f"Layouts ({len(lay.conversions)} convert_layout, {lay.through_shared} through shared memory, "
                    f"{lay.in_loops} in loops)")]
        for c in lay.conversions:
            where = f"line {', '.join(map(str, c.source_lines))}" if c.source_lines else "no source line"
            out.append(f"  convert {c.src} -> {c.dst} ({where}{', in a loop' if c.in_loop else ''}): {c.lowering}")
        for l in lay.layouts:
            if l.name.startswith("#ttg.") and not all_layouts:
                continue
            out.append(f"  {l.name}: {l.explanation}")
    if ex.mix:
        out += ["", "Instruction mix"]
        for stage, sm in ex.mix.stages.items():
            top = ", ".join(f"{k} {v}" for k, v in list(sm.counts.items())[:10])
            out.append(f"  {STAGE_TITLES.get(stage, stage)}: {sm.total} ({top})")
    return out


def _with_profile(rec: Inspection, path: str) -> None:
    """Re-rank the record's findings (memoised with the record's analysis) by the saved profile."""
    from inspector.analysis import advise
    from inspector.profile.measured import Profile, rank_by_cost

    with open(path, encoding="utf-8") as f:
        prof = Profile.from_dict(json.load(f))
    findings = advise(rec)
    findings[:] = rank_by_cost(findings, prof)


def run(ns: argparse.Namespace) -> int:
    """Handler for `explain`."""
    rec = inspect_from(ns)
    if ns.profile and not (rec.error and not rec.stages):
        try:
            _with_profile(rec, ns.profile)
        except (OSError, ValueError, TypeError, KeyError) as e:
            print(f"error: {ns.profile} is not a profile the inspector saved ({type(e).__name__}: {e})",
                  file=sys.stderr)
            return 2
    if rec.error:
        if ns.json:
            print(json.dumps(_explanation_json(rec), indent=1))
            return 1
        if rec.stages:
            print("\n".join(format_explanation(rec, ns.all_layouts)))
        report_error(rec)
        return 1
    # A compiled record's explanation follows from it and the analysis code alone: kept beside it
    # in the cache, so asking again imports no analysis (a profile's ranking is not kept).
    key = None if ns.profile else _explanation_key(rec, ns)
    kept = Cache().get(key) if key else None
    if kept is None:
        kept = _explanation(rec, ns)
        if key:
            Cache().put(key, kept, wait=False)
    print(kept["text"])
    if kept["status"] == 3:
        print(f"explain: findings at or above '{ns.fail_on}'", file=sys.stderr)
    return kept["status"]


def _explanation(rec: Inspection, ns: argparse.Namespace) -> dict[str, Any]:
    """{"text": what explain prints, "status": its exit status} for a compiled record."""
    from inspector.analysis import explain

    text = json.dumps(_explanation_json(rec), indent=1) if ns.json else "\n".join(format_explanation(rec, ns.all_layouts))
    status = 0
    if ns.fail_on:
        worst = SEVERITIES.index(ns.fail_on)
        if any(SEVERITIES.index(f.severity) <= worst for f in explain(rec).findings):
            status = 3
    return {"text": text, "status": status}


def _explanation_json(rec: Inspection) -> dict[str, Any]:
    from inspector.analysis.report import explanation_json

    return explanation_json(rec)


def _explanation_key(rec: Inspection, ns: argparse.Namespace) -> str | None:
    """The cache key of this record's explanation as asked (the record's key, the options that
    change the text, the analysis code), or None for a record with no key."""
    if not rec.cache_key:
        return None
    return cache_key({"explain": rec.cache_key, "json": bool(ns.json), "all_layouts": bool(ns.all_layouts),
                      "fail_on": ns.fail_on, "code": code_digest("analysis/*.py", "cli/explain.py", "record.py")})
