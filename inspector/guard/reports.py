"""The guard's reports: one line per regression, JUnit XML, a Markdown summary, JSON."""

from __future__ import annotations

import json
from typing import Any
from xml.etree import ElementTree as ET

from .compare import CaseResult, Change
from .runner import GuardResult


def regression_lines(result: GuardResult) -> list[str]:
    """One line per regressed kernel and target: `PATH:LINE: KERNEL on TARGET: before -> after`."""
    return [c.headline() for c in sorted(result.regressions, key=lambda c: (c.kernel_id, c.target))]


def summary_line(result: GuardResult) -> str:
    """The run in one line: cases by status, what ran, how long."""
    counts = result.counts()
    kernels = len({c.kernel_id for c in result.cases})
    parts = [f"{counts.get(s, 0)} {s}" for s in ("regressed", "pass", "new", "missing") if counts.get(s)]
    not_launched = sum(1 for c in result.cases if c.metrics is not None and c.metrics.not_launched)
    unlaunchable = sum(1 for c in result.cases if c.metrics is not None and not c.metrics.launchable) - not_launched
    if unlaunchable:
        parts.append(f"{unlaunchable} cannot launch")
    if not_launched:
        parts.append(f"{not_launched} not launched by their files (give them an example() to guard them)")
    return (f"guard: {_n(kernels, 'kernel')} x {_n(len(result.targets), 'target')} ({', '.join(result.targets)}) "
            f"in {_n(len(result.files), 'file')}: {', '.join(parts) or 'nothing found'}; {result.compiles} compiled, "
            f"{result.cache_hits} from the cache, {result.seconds:.1f} s on {result.engine}, {_releases(result)}")


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _releases(result: GuardResult) -> str:
    """"Triton 3.9.0", or "Triton 3.9.0 and 3.6.0" when other releases were guarded too."""
    others = sorted({t.partition("@")[2] for t in result.targets if "@" in t})
    return f"Triton {result.triton}" + (f" and {', '.join(others)}" if others else "")


def _change(c: Change) -> dict[str, Any]:
    return {"metric": c.metric, "what": c.what, "before": c.before, "after": c.after, "line": c.line, "text": c.text}


def case_dict(c: CaseResult) -> dict[str, Any]:
    return {
        "kernel_id": c.kernel_id, "file": c.rel_path, "kernel": c.kernel, "target": c.target, "status": c.status,
        "line": c.line, "headline": c.headline(), "cached": c.cached, "seconds": round(c.seconds, 3),
        "regressions": [_change(x) for x in c.regressions],
        "improvements": [_change(x) for x in c.improvements],
        "metrics": c.metrics.to_baseline() if c.metrics is not None else None,
    }


def to_json(result: GuardResult) -> dict[str, Any]:
    """The whole run as one JSON-able object."""
    return {
        "exit_status": result.exit_status, "triton": result.triton, "targets": result.targets,
        "engine": result.engine, "seconds": round(result.seconds, 3), "compiles": result.compiles,
        "cache_hits": result.cache_hits, "counts": result.counts(), "notes": result.notes,
        "regressions": regression_lines(result),
        "cases": [case_dict(c) for c in sorted(result.cases, key=lambda c: (c.kernel_id, c.target))],
    }


def junit_xml(result: GuardResult) -> str:
    """JUnit XML: a test suite per target, a test case per kernel (classname the file, name the
    kernel and target); a regression is a failure, a kernel gone from its file is skipped."""
    root = ET.Element("testsuites", name="triton-inspector guard", tests=str(len(result.cases)),
                      failures=str(len(result.regressions)), time=f"{result.seconds:.3f}")
    for target in result.targets:
        cases = sorted((c for c in result.cases if c.target == target), key=lambda c: c.kernel_id)
        suite = ET.SubElement(root, "testsuite", name=f"guard {target}", tests=str(len(cases)),
                              failures=str(sum(c.status == "regressed" for c in cases)),
                              skipped=str(sum(c.status == "missing" for c in cases)), errors="0",
                              time=f"{sum(c.seconds for c in cases):.3f}")
        for c in cases:
            attrs = {"classname": c.rel_path, "name": f"{c.kernel} [{target}]", "file": c.rel_path,
                     "time": f"{c.seconds:.3f}"}
            if c.line:
                attrs["line"] = str(c.line)
            tc = ET.SubElement(suite, "testcase", attrs)
            if c.status == "regressed":
                failure = ET.SubElement(tc, "failure", message=c.headline(), type="regression")
                failure.text = "\n".join(f"{c.rel_path}:{x.line}: {x.text}" if x.line else x.text
                                         for x in c.regressions)
            elif c.status == "missing":
                ET.SubElement(tc, "skipped", message=c.headline())
            else:
                notes = [f"{c.status}" + (" (not in the baseline)" if c.status == "new" else "")]
                if c.metrics is not None and not c.metrics.launchable:
                    notes.append(f"cannot launch: {c.metrics.problem}")
                notes += [f"improved: {x.text}" for x in c.improvements]
                ET.SubElement(tc, "system-out").text = "\n".join(notes)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def markdown(result: GuardResult, link: str | None = None, limit: int = 50) -> str:
    """A summary for a pull-request comment: the verdict, a table of regressions, then counts per
    target, and the improvements, new kernels and kernels gone in collapsed sections. `link`
    formats a file and line as a link ("https://github.com/o/r/blob/SHA/{path}#L{line}")."""
    regs = sorted(result.regressions, key=lambda c: (c.kernel_id, c.target))
    kernels = len({c.kernel_id for c in result.cases})
    title = (f"### Triton kernel guard: {len(regs)} regression{'s' if len(regs) != 1 else ''}" if regs
             else "### Triton kernel guard: no regressions")
    out = [title, "", f"{_n(kernels, 'kernel')} x {_n(len(result.targets), 'target')} ({', '.join(result.targets)}), "
                      f"{_releases(result)}; {result.compiles} compiled, {result.cache_hits} from the cache, "
                      f"{result.seconds:.1f} s on {result.engine}.", ""]
    out += [f"> {n}" for n in result.notes] + ([""] if result.notes else [])

    def where(c: CaseResult, line: int | None) -> str:
        text = f"{c.rel_path}:{line}" if line else c.rel_path
        if link and line:
            return f"[`{text}`]({link.format(path=c.rel_path, line=line)})"
        return f"`{text}`"

    if regs:
        out += ["| kernel | target | where | change |", "| --- | --- | --- | --- |"]
        for c in regs[:limit]:
            for i, x in enumerate(c.regressions):
                out.append(f"| {'`' + c.kernel + '`' if i == 0 else ''} | {c.target if i == 0 else ''} | "
                           f"{where(c, x.line)} | {_cell(x.text)} |")
        if len(regs) > limit:
            out.append(f"\n... and {len(regs) - limit} more (see the JUnit or JSON report)")
        out.append("")
    out += ["| target | kernels | pass | regressed | new | cannot launch | not launched |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for t in result.targets:
        cs = [c for c in result.cases if c.target == t]
        n = {s: sum(c.status == s for c in cs) for s in ("pass", "regressed", "new")}
        idle = sum(1 for c in cs if c.metrics is not None and c.metrics.not_launched)
        bad = sum(1 for c in cs if c.metrics is not None and not c.metrics.launchable) - idle
        out.append(f"| {t} | {len(cs)} | {n['pass']} | {n['regressed']} | {n['new']} | {bad} | {idle} |")
    out.append("")
    sections = [
        ("Improved", [(c, x) for c in result.cases for x in c.improvements]),
        ("New (not in the baseline)", [(c, None) for c in result.cases if c.status == "new"]),
        ("Gone from their files", [(c, None) for c in result.cases if c.status == "missing"]),
    ]
    for name, rows in sections:
        if not rows:
            continue
        out += [f"<details><summary>{name}: {len(rows)}</summary>", ""]
        for c, x in sorted(rows, key=lambda r: (r[0].kernel_id, r[0].target))[:limit]:
            detail = x.text if x is not None else (f"cannot launch: {c.metrics.problem}" if c.metrics is not None
                                                   and not c.metrics.launchable else "")
            out.append(f"- `{c.kernel}` on {c.target} ({where(c, x.line if x else c.line)})"
                       + (f": {_cell(detail)}" if detail else ""))
        out += ["", "</details>", ""]
    return "\n".join(out)


def json_text(result: GuardResult) -> str:
    return json.dumps(to_json(result), indent=2)
