"""`python -m inspector diff FILE ... --vs OPTIONS`: two compiles of a kernel side by side.

    diff kernels/add.py --vs "--arg n=4095"                    n=4096 (the example) vs n=4095
    diff kernels/add.py --num-warps 4 --vs "--num-warps 8"
    diff kernels/matmul.py --target sm_80 --vs "--target sm_90" --stage ptx
    diff kernels/matmul.py --vs "--target gfx942"              NVIDIA vs AMD (TTIR/TTGIR/LLIR text)
    diff kernels/matmul.py --autotune-config 0 --vs "--autotune-config 4" --json
    diff a.py --vs "b.py --kernel other"                       another file (first word of --vs)
    diff kernels/matmul.py --triton 3.6.0 --vs-triton 3.9.0    two Triton releases (versions add 3.6.0 first)

The first side takes the compile options given; the second takes the same, changed by the
options in --vs (a quoted string of compile options; --arg/--const/--option entries there
replace those of the same name). Prints what differs: settings, resources, occupancy, the
memory-access verdicts, the instruction mix per stage, and per stage how many lines changed
(ignoring renumbered SSA names and registers); --stage prints that stage's diff. Between two
Triton releases the first line sums up what changed (a guard's log line per kernel), and the
TTGIR layouts are compared too. Exit status: 0, 1 when either side did not compile, 2 on usage
errors.
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import json
import shlex
import sys
from typing import Any

from inspector.analysis import diff_inspections
from inspector.analysis.diff import figure_changes
from inspector.analysis.words import number_words
from inspector.occupancy.words import limiter_words
from .options import add_compile_options, command_parser, compile_request, run_options
from .output import report_error
from inspector.record import STAGE_TITLES


def register(subparsers: Any) -> None:
    """Add the `diff` subcommand."""
    p = command_parser(subparsers, "diff", "compare two compiles of a kernel (options, targets, configs)", __doc__)
    add_compile_options(p)
    p.add_argument("--vs", metavar="OPTIONS",
                   help='the second side\'s changes, as compile options in one string: "--num-warps 8"')
    p.add_argument("--vs-triton", metavar="VERSION",
                   help="the second side's Triton release (the first side's is --triton, default the installed one)")
    p.add_argument("--stage", action="append", choices=[s for s in STAGE_TITLES if s != "source"] + ["all"],
                   help="print this stage's text diff (repeatable; 'all' for every stage)")
    p.add_argument("--context", type=int, default=3, help="lines of context in stage diffs (default 3)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


def vs_namespace(ns: argparse.Namespace) -> argparse.Namespace:
    """The second side's options: the first side's, changed by those in --vs."""
    vs = argparse.ArgumentParser(prog="--vs", add_help=False, argument_default=argparse.SUPPRESS)
    add_compile_options(vs)
    for action in vs._actions:  # only what --vs names (--target has a default of its own)
        action.default = argparse.SUPPRESS
    tokens = shlex.split(ns.vs or "")
    other_file = tokens.pop(0) if tokens and not tokens[0].startswith("-") else None
    given = vars(vs.parse_args(["-"] + tokens))  # the positional FILE is read above, or kept
    given.pop("file", None)
    if other_file is not None:
        given["file"] = other_file
    out = copy.copy(ns)
    for key, value in given.items():
        if key in ("arg", "const", "option"):
            setattr(out, key, list(getattr(ns, key) or []) + list(value))
        else:
            setattr(out, key, value)
    if "file" in given and "kernel" not in given:
        out.kernel = None  # another file: its own default kernel unless --kernel is given in --vs
    if getattr(ns, "vs_triton", None):
        out.triton = ns.vs_triton
    return out


def _fmt(v: Any, name: str = "") -> str:
    if name == "occupancy" and isinstance(v, (int, float)):
        return f"{100 * v:.0f}%"
    if isinstance(v, float):
        return f"{v:.3g}"
    if isinstance(v, list):
        return "+".join(map(str, v)) or "-"
    return "-" if v is None else str(v)


def format_diff(d) -> list[str]:
    """The human-readable diff."""
    out = [f"a: {d.a_label}", f"b: {d.b_label}"]
    if d.settings:
        out.append("settings:   " + "; ".join(f"{c.name}: {_fmt(c.a)} -> {_fmt(c.b)}" for c in d.settings))
    changed = [c for c in d.resources if c.changed]
    same = [c for c in d.resources if not c.changed]
    out.append("resources:  " + ("; ".join(f"{c.name} {_fmt(c.a)} -> {_fmt(c.b)}" for c in changed) or "no change"))
    if same:
        out.append("  unchanged: " + ", ".join(f"{c.name} {_fmt(c.a)}" for c in same))
    if d.occupancy:
        occ = {c.name: c for c in d.occupancy}
        full = occ.get("occupancy")

        def words(c, side: str) -> str:  # limiters as the page says them: "nothing" at full occupancy
            if c.name == "limiters":
                return limiter_words(getattr(full, side) if full else None, getattr(c, side))
            return _fmt(getattr(c, side), c.name)

        out.append("occupancy:  " + "; ".join(
            f"{c.name} {words(c, 'a')} -> {words(c, 'b')}" if words(c, 'a') != words(c, 'b') else f"{c.name} {words(c, 'a')}"
            for c in d.occupancy))
    mem = [m for m in d.memory if m.changed]
    out.append("memory:     " + ("no access changed" if not mem else f"{len(mem)} access{'es' if len(mem) > 1 else ''} changed"))
    for m in mem:
        line = m.line_b if m.line_b is not None else m.line_a
        verdict = f"{m.a or 'absent'} -> {m.b or 'absent'}" if m.a != m.b else (m.b or m.a or "")
        out.append(f"  line {line} {m.op}: {verdict}" + (f" ({m.b_summary})" if m.b_summary else ""))
        if figure_changes(m):
            out.append("      " + "; ".join(figure_changes(m)))
        out.extend(f"      {r}" for r in m.b_reasons)
    for c in (c for c in d.shared if c.changed):
        line = c.line_b if c.line_b is not None else c.line_a
        sides = [f"{number_words(w)} (ideal {number_words(i)})" if present else ("not modelled" if note else "absent")
                 for w, i, present, note in ((c.a_wavefronts, c.a_ideal, c.line_a is not None, c.a_note),
                                             (c.b_wavefronts, c.b_ideal, c.line_b is not None, c.b_note))]
        out.append(f"  line {line} shared {c.kind}: wavefronts per request {sides[0]} -> {sides[1]}"
                   + (f"; {c.b_cause}" if c.b_cause else ""))
    for stage, classes in d.mix.items():
        diffs = [f"{k} {a} -> {b} ({b - a:+d})" for k, (a, b) in classes.items() if a != b and k != "total"]
        ta, tb = classes.get("total", (0, 0))
        out.append(f"mix {STAGE_TITLES.get(stage, stage)}: total {ta} -> {tb}" + (f"; {', '.join(diffs)}" if diffs else ""))
    for stage, sd in d.stages.items():
        status = "identical (after renumbering)" if sd.identical else f"+{sd.added} -{sd.removed} lines"
        out.append(f"text {STAGE_TITLES.get(stage, stage)}: {sd.a_lines} -> {sd.b_lines} lines, {status}")
    if d.only_a or d.only_b:
        out.append(f"stages only in a: {', '.join(d.only_a) or '-'}; only in b: {', '.join(d.only_b) or '-'}")
    return out


def run(ns: argparse.Namespace) -> int:
    """Handler for `diff`."""
    from inspector.compile.api import inspect

    if not ns.vs and not ns.vs_triton:
        print("error: give the second side: --vs OPTIONS and/or --vs-triton VERSION", file=sys.stderr)
        return 2
    try:
        ns_b = vs_namespace(ns)
    except SystemExit:
        print(f"error: cannot read --vs {ns.vs!r}", file=sys.stderr)
        return 2
    a = inspect(compile_request(ns), **run_options(ns))
    b = inspect(compile_request(ns_b), **run_options(ns_b))
    failed = [r for r in (a, b) if r.error and not r.stages]
    if failed:
        for r in failed:
            report_error(r)
        if ns.json:
            print(json.dumps({"error": [dataclasses.asdict(r.error) for r in failed]}))
        return 1
    wanted = None if not ns.stage or "all" in ns.stage else ns.stage
    d = diff_inspections(a, b, context=ns.context)
    versus = None
    if a.triton_version != b.triton_version:
        from inspector.versions.compare import compare

        versus = compare(a, b, context=ns.context)
    if ns.json:
        data = dataclasses.asdict(d)
        if versus is not None:
            data["summary"] = versus.summary
            data["layouts"] = [dataclasses.asdict(c) for c in versus.layouts]
        if wanted is not None:
            for stage, sd in data["stages"].items():
                if stage not in wanted:
                    sd["hunks"] = []
        print(json.dumps(data, indent=1))
    else:
        if versus is not None:
            print(versus.summary)
        print("\n".join(format_diff(d)))
        if versus is not None:
            print("layouts:    " + "; ".join(f"{c.name} {_fmt(c.a)} -> {_fmt(c.b)}" if c.changed
                                             else f"{c.name} {_fmt(c.a)}" for c in versus.layouts))
        for stage, sd in d.stages.items():
            if ns.stage and ("all" in ns.stage or stage in ns.stage):
                print(f"\n--- a/{a.kernel}.{stage}\n+++ b/{b.kernel}.{stage}")
                print("\n".join(sd.hunks) if sd.hunks else "(identical after renumbering)")
    return 1 if (a.error or b.error) else 0
