"""`python -m inspector fix FILE ...`: for every finding, edits of the file that the tool compiled,
checked and ranked, best first.

    fix kernels/jagged.py --target sm_90               each finding, its candidates, their diffs
    fix kernels/jagged.py --json                       findings[].candidates[] (title, diff, assumptions,
                                                       assumptions_hold, checked, after = explain --json)
    fix kernels/jagged.py --apply 1 --out fixed.py     write the file as candidate 1 edits it

Takes the same options as `compile`. Candidates are numbered across findings in the order
printed. A candidate's assumptions are promises about the data; `holds` says whether the example's
values kept them (checked by running the example under Triton's interpreter, GPU-free), `outputs`
whether its launches left the same tensors as the original's. Exit status: 0, 1 when the kernel
did not compile, 2 on usage errors (--apply N with no candidate N).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ..fixes.evaluate import judged
from .options import add_compile_options, command_parser, compile_request, run_options
from .output import report_error, summary_line


def register(subparsers: Any) -> None:
    """Add the `fix` subcommand."""
    p = command_parser(subparsers, "fix", "candidate fixes for every finding, compiled, checked and ranked",
                       __doc__)
    add_compile_options(p)
    p.add_argument("--json", action="store_true", help="print one JSON object: findings[].candidates[]")
    p.add_argument("--apply", type=int, metavar="N", help="write the file as candidate N edits it (to --out)")
    p.add_argument("--out", metavar="FILE", help="where --apply writes (default: stdout)")
    p.add_argument("--no-check", action="store_true",
                   help="compile the candidates but run nothing: no interpreter check, no timing on a GPU")
    p.add_argument("--finding", action="append", metavar="CODE",
                   help="only this finding (an advisor code: cannot_launch, spills, scalar_access, ...); repeatable")
    p.add_argument("--line", action="append", type=int, metavar="N", dest="lines",
                   help="only the findings on this line of the file (as explain numbers it); repeatable")
    p.set_defaults(func=run)


def _mark(value: bool | None) -> str:
    return {True: "yes", False: "NO", None: "unknown"}[value]


def _figure(name: str, v: Any) -> str:
    if v is None:
        return "-"
    if name in ("sector_efficiency", "occupancy"):
        return f"{v * 100:.0f}%"
    if name == "width_bits":
        return f"{v}-bit"
    if name.startswith("shared_excess"):
        return f"{v:.2f}x"
    if name in ("spill_bytes", "shared_bytes"):
        return f"{v} B"
    return str(v)


_NAMES = {"width_bits": "access width", "sector_efficiency": "sector efficiency", "registers": "registers",
          "spill_bytes": "spills", "shared_bytes": "shared memory", "occupancy": "occupancy",
          "conversions": "layout conversions through shared memory",
          "shared_excess": "shared wavefronts over the ideal (the line)",
          "shared_excess_kernel": "shared wavefronts over the ideal (the kernel)"}


def format_report(report: Any) -> list[str]:
    """The human-readable report, candidates numbered for --apply."""
    out = [summary_line(report.original), ""]
    n = 0
    if not report.findings:
        out.append("No findings: nothing to fix.")
    for ff in report.findings:
        f = ff.finding
        out.append(f"[{f.severity}] {f.title}")
        if not ff.candidates:
            out.append(f"  no candidate: {ff.note}")
            out += [f"  tried: {x}" for x in ff.tried]
        for t in ff.candidates:
            n += 1
            head = f"  {n}. {t.title}"
            if t.after is not None and not judged(t.after):
                out.append(head + f"  (does not compile: {t.after.error.short() if t.after.error else '?'})")
                continue
            out.append(head)
            verdict = "finding gone" if t.finding_gone else "finding stays"
            moved = "; ".join(f"{_NAMES.get(k, k)} {_figure(k, a)} -> {_figure(k, b)}" for k, (a, b) in t.changes.items())
            out.append(f"     {verdict}" + (f"; {moved}" if moved else "; nothing else changes"))
            for code, line, sev in t.new_findings:
                out.append(f"     new [{sev}] {code}" + (f" at line {line}" if line else ""))
            for a in t.candidate.assumptions:
                out.append(f"     assumes: {a}")
            if t.candidate.assumptions and t.candidate.kind == "hint":
                out.append(f"     holds: {_mark(t.assumptions_hold)}" + (f" ({t.assumptions_note})" if t.assumptions_note else ""))
            out.append(f"     outputs equal: {_mark(t.checked)}" + (f" ({t.checked_note})" if t.checked_note else ""))
            if t.candidate.elsewhere:
                out.append(f"     also: {t.candidate.elsewhere}")
            if t.ms is not None and report.ms:
                out.append(f"     measured: {report.ms * 1000:.1f} us -> {t.ms * 1000:.1f} us "
                           f"({report.ms / t.ms:.2f}x, the example's launches replayed)")
            out += ["     " + line for line in t.diff.rstrip("\n").splitlines()]
    out += ["", f"{n} candidate{'s' if n != 1 else ''}, compiled and checked in {report.seconds:.1f} s"]
    return out


def report_json(report: Any) -> dict[str, Any]:
    """The --json object."""
    import dataclasses

    return {
        "kernel": report.original.kernel, "file": report.original.file, "target": report.original.target,
        "seconds": round(report.seconds, 2), "ms": report.ms, "ms_note": report.ms_note,
        "findings": [dict(dataclasses.asdict(ff.finding), note=ff.note, tried=ff.tried,
                          candidates=[t.to_json() for t in ff.candidates]) for ff in report.findings],
    }


def _user_file(opened: Any) -> Any:
    """The kernel's own file as the run saw it (None when the capture did not keep it)."""
    from ..fixes.user_file import UserFile

    if opened.entry is None or opened.run is None or opened.run.capture is None:
        return None
    kept = opened.run.capture.files.get(opened.entry.file_id) or {}
    return UserFile(kept["path"], kept["text"]) if kept.get("path") and kept.get("text") else None


def run(ns: argparse.Namespace) -> int:
    """Handler for `fix`."""
    from ..fixes import fix
    from .options import inspect_from

    user = None
    if getattr(ns, "run", None):  # through a program's run: made on its reproducer, written onto the user's file
        from ..capture.by_running import open_run

        opened = open_run(ns.run, kernel=ns.kernel, target=ns.target, **compile_request(ns).changes(),
                          **run_options(ns))
        rec, user = opened.rec, _user_file(opened)
    else:
        rec = inspect_from(ns)
    if rec.error and not rec.stages:
        report_error(rec)
        return 1
    report = fix(rec.file, kernel=rec.kernel, target=ns.target, check=not ns.no_check, record=rec,
                 findings=ns.finding, lines=ns.lines, autotune_index=ns.autotune_config, **compile_request(ns).changes(),
                 **run_options(ns))
    if user is not None:
        from ..fixes.user_file import to_user_file

        to_user_file(report, user)
    if ns.apply is not None:
        flat = [t for ff in report.findings for t in ff.candidates]
        if not 1 <= ns.apply <= len(flat):
            print(f"error: --apply {ns.apply}: there are {len(flat)} candidates (numbered from 1 as printed)",
                  file=sys.stderr)
            return 2
        text = flat[ns.apply - 1].candidate.source
        if ns.out:
            with open(ns.out, "w", encoding="utf-8") as f:
                f.write(text)
            print(f"wrote {ns.out}: {flat[ns.apply - 1].title}", file=sys.stderr)
        else:
            sys.stdout.write(text)
        return 0
    if ns.json:
        print(json.dumps(report_json(report), indent=1, default=str))
    else:
        print("\n".join(format_report(report)))
    return 0
