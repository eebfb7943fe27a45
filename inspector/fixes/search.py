"""The search `fix` runs: every finding's candidates compiled (several at once), the edits that
moved nothing dropped, composition rounds and further steps compiled in turn, the example run
under the interpreter to compare outputs and check promises, natively timed on a GPU, then
ranked. The package's docstring (`inspector.fixes`) says what each step's module does."""

from __future__ import annotations

import os
import re
import threading
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from typing import Any, Callable

from ..analysis.advisor import Finding, advise
from ..analysis.memory import memory_report
from ..record import Inspection
from . import compose
from .candidates import Candidate, for_finding, further, reached
from .check import Check, check_candidates
from .evaluate import Measures, changes, finding_gone, helped, judged, measures, new_findings, score
from .speed import time_candidates, timeable


@dataclass
class Tried:
    """One candidate, compiled and checked."""

    candidate: Candidate
    after: Inspection | None = None  # None until compiled
    measures: Measures | None = None
    finding_gone: bool | None = None
    changes: dict[str, list[Any]] = field(default_factory=dict)
    new_findings: list[tuple[str, int | None, str]] = field(default_factory=list)
    assumptions_hold: bool | None = None  # None: not checked
    assumptions_note: str = ""
    checked: bool | None = None  # outputs equal to the original's; None: could not check
    checked_note: str = ""
    ms: float | None = None  # measured, natively (the report's `ms` is the original's)
    ms_note: str = ""  # why it was not measured
    score: float = 0.0

    @property
    def title(self) -> str:
        return self.candidate.title

    @property
    def diff(self) -> str:
        return self.candidate.diff

    def to_json(self) -> dict[str, Any]:
        """The CLI's `findings[].candidates[]` object."""
        from ..analysis.report import explanation_json

        return {
            "title": self.title, "diff": self.diff, "kind": self.candidate.kind,
            "assumptions": self.candidate.assumptions, "assumptions_hold": self.assumptions_hold,
            "assumptions_note": self.assumptions_note, "checked": self.checked, "checked_note": self.checked_note,
            "finding_gone": self.finding_gone, "changes": self.changes, "ms": self.ms, "ms_note": self.ms_note,
            "new_findings": [{"code": c, "line": l, "severity": s} for c, l, s in self.new_findings],
            "score": round(self.score, 2), "file": self.candidate.file or None,
            "elsewhere": self.candidate.elsewhere or None,
            "after": explanation_json(self.after) if self.after is not None else None,
        }


@dataclass
class FindingFixes:
    """A finding and its candidates, best first."""

    finding: Finding
    candidates: list[Tried] = field(default_factory=list)
    note: str = ""  # why there is none, when there is none
    tried: list[str] = field(default_factory=list)  # edits compiled and dropped, each with the figure it reached
    dropped: list[Tried] = field(default_factory=list, repr=False)  # those edits (partners for `compose`)


@dataclass
class FixReport:
    original: Inspection
    findings: list[FindingFixes] = field(default_factory=list)
    seconds: float = 0.0
    ms: float | None = None  # the original's measured time, natively with an example()
    ms_note: str = ""


def _no_candidate_note(f: Finding) -> str:
    if f.severity == "info":
        return "information only: nothing in the kernel's code changes it"
    if f.code == "gather":
        return "the addresses come from the data"
    return "no edit the tool can make and check for this cause; the suggestion says what to change"


def _reached_figures(t: Tried) -> str:
    """What a dropped candidate compiled to, in words."""
    if not reached(t.candidate, t.after):
        return "its value did not reach the compiled launch (a branch the launch does not take)"
    m = t.measures
    figures = [f"{m.width_bits}-bit" if m and m.width_bits else "",
               f"{m.sector_efficiency * 100:.0f}% of sectors used" if m and m.sector_efficiency is not None else ""]
    shown = ", ".join(f for f in figures if f)
    return "compiled to the same figures" + (f" ({shown})" if shown else "")


def _assumption_verdict(t: Tried, check: Check, rec: Inspection) -> None:
    """assumptions_hold from the run's promise checks, or from the launch's scalar values."""
    c = t.candidate
    if c.kind != "hint":
        return
    mine = sorted((b for b in check.broken if b["line"] in c.promises), key=lambda b: b["line"])
    if mine:
        t.assumptions_hold = False
        t.assumptions_note = "the example breaks it: " + "; ".join(
            f"line {b['line']} saw {b['value']}, {b.get('broke') or 'not a multiple of ' + str(b['multiple'])} "
            f"(in {b['programs']} program{'s' if b['programs'] != 1 else ''})" for b in mine)
        return
    values = {p.name: p.value for p in rec.parameters}
    for name, m in c.promise_values.items():
        v = values.get(name)
        if isinstance(v, int) and v % m:
            t.assumptions_hold = False
            t.assumptions_note = f"the launch passes {name} = {v}, not a multiple of {m}"
            return
    if check.promises and check.checked is not None:
        t.assumptions_hold = True
        t.assumptions_note = f"held for every value the example's launches gave: {check.promises} checks"
    elif c.promise_values and all(isinstance(values.get(n), int) for n in c.promise_values):
        t.assumptions_hold = True
        t.assumptions_note = "held for the launch's values"
    else:
        t.assumptions_note = check.why or "the example did not reach the promise"


def _measure(rec: Inspection, report: FixReport, tries: list[tuple[int, Tried]]) -> None:
    """Time the original and every edit that compiled and can launch (natively only)."""
    why = timeable(rec)
    if why:
        report.ms_note = why
        for _, t in tries:
            t.ms_note = why
        return
    runnable = list(dict.fromkeys(t.candidate.source for _, t in tries if not t.candidate.overrides
                                  and t.after is not None and t.after.ok and t.after.launch_problem() is None))
    base, timed = time_candidates(rec, runnable)
    report.ms, report.ms_note = base.ms, base.why
    by_source = dict(zip(runnable, timed))
    for _, t in tries:
        got = by_source.get(t.candidate.source)
        if t.candidate.overrides:
            t.ms_note = "a compile option: the example runs the file as written"
        elif got is None:
            t.ms_note = "not run: it does not compile or cannot launch"
        else:
            t.ms, t.ms_note = got.ms, got.why


def with_overrides(kw: dict[str, Any], overrides: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """inspect_kernel's keywords with a candidate's overrides merged into options / consts."""
    out = dict(kw)
    for key, extra in overrides.items():
        out[key] = {**(out.get(key) or {}), **extra}
    return out


def fix(file: str | os.PathLike, kernel: str | None = None, target: str = "sm_90", *, check: bool = True,
        measure: bool = True, findings: list[str] | None = None, lines: list[int] | None = None,
        workers: int | None = None,
        on_result: Callable[[int, Tried], None] | None = None,
        on_start: Callable[[FixReport], None] | None = None, record: Inspection | None = None,
        **inspect_kwargs: Any) -> FixReport:
    """Compile, check and rank candidate fixes for every finding of `kernel` in `file` (see the
    module docstring). `inspect_kwargs` (args, consts, options, autotune_index, triton, sandbox,
    timeout) go to every compile, the original's and each candidate's; `record` is the original's
    record when the caller has it already. `on_start(report)` receives the report as soon as the
    candidates are listed: its entries fill in as compiles and checks land (a page shows it while
    this runs on another thread); the returned report is the same object, ranked. `findings`
    (advisor codes such as "cannot_launch") limits the report to those findings, `lines` to those on
    these lines of the file (fewer findings, fewer compiles: each finding's candidates are
    compiled, composed and stepped on their own). On a GPU
    (`target="native"`) with `measure`, the example is also run natively as written and as each
    edit makes it, and the kernel's launches timed (`timing`): time saved ranks a candidate too
    (not with `check=False`, which runs nothing)."""
    import time

    from ..compile.api import inspect_kernel

    t0 = time.monotonic()
    rec = record or inspect_kernel(file, kernel=kernel, target=target, **inspect_kwargs)
    report = FixReport(rec)
    if not judged(rec):
        return report
    accesses = memory_report(rec).accesses
    for f in advise(rec):
        if findings and f.code not in findings:  # only the findings asked for (their codes)
            continue
        if lines and f.line not in lines:
            continue
        cands = for_finding(rec, f, accesses)
        report.findings.append(FindingFixes(f, [Tried(c) for c in cands], "" if cands else _no_candidate_note(f)))
    tries = [(i, t) for i, ff in enumerate(report.findings) for t in ff.candidates]
    if on_start:
        on_start(report)
    if tries:
        search = _Search(rec, report, target, check, workers, on_result, on_start, inspect_kwargs)
        tries = search.run(tries)
        if measure and check:
            _measure(rec, report, tries)
        search.rank(tries)
    report.seconds = time.monotonic() - t0
    return report


def _ident(c: Candidate) -> str:
    """One compile per distinct edit: its text and overrides."""
    return c.source + "\0" + repr(sorted((k, sorted(v.items())) for k, v in c.overrides.items()))


class _Search:
    """`fix`'s rounds over one report: compile the candidates (checks alongside), drop those that
    moved nothing, compose the best with the rest, step the knobs that helped further, rank."""

    def __init__(self, rec: Inspection, report: FixReport, target: str, check: bool, workers: int | None,
                 on_result: Callable[[int, Tried], None] | None, on_start: Callable[[FixReport], None] | None,
                 inspect_kwargs: dict[str, Any]) -> None:
        self.rec, self.report, self.check, self.workers = rec, report, check, workers
        self.on_result, self.on_start = on_result, on_start
        self.before = {i: measures(rec, ff.finding.line) for i, ff in enumerate(report.findings)}
        self.kw = dict(inspect_kwargs, kernel=rec.kernel, target=rec.target if target != "native" else target,
                       defer=("sass",))
        # A candidate is the original with one change: its pointers keep the dtypes the original
        # compiled with, which a made-up call chose (retyped, or half precision for a tile over the
        # shared memory); chosen again per candidate, an edit could change them and be compared
        # with another dtype's original.
        pins = {p.name: p.type[1:] for p in rec.parameters if re.fullmatch(r"\*[a-z]+\d+\w*", p.type or "")}
        if pins:
            self.kw["args"] = {**pins, **(inspect_kwargs.get("args") or {})}
        if rec.autotune_configs and rec.autotune_index is not None:
            # the config the original compiled, not the first one the candidate's edit lets launch
            self.kw["autotune_index"] = rec.autotune_index
        self.checks: dict[str, Check] = {}

    def run(self, tries: list[tuple[int, Tried]]) -> list[tuple[int, Tried]]:
        """Every round, from the first candidates; the tries that stayed candidates."""
        self.compile_round(tries)
        tries = self.drop_unreached(tries)
        compiled = {_ident(t.candidate) for _, t in tries}
        # Edits that compose: the best that improved an access, merged with the others (`compose`).
        for _ in range(compose.ROUNDS):
            more = self.compositions(compiled)
            if not more:
                break
            tries += self.another_round(more)
        more = self.further_steps()
        if more:
            tries += self.another_round(more)
        return tries

    def another_round(self, more: list[tuple[int, Tried]]) -> list[tuple[int, Tried]]:
        if self.on_start:
            self.on_start(self.report)
        self.compile_round(more)
        return self.drop_unreached(more)

    def run_checks(self, edited: list[str]) -> None:
        got = check_candidates(self.rec, edited) if self.check else \
            [Check(None, "not checked (--no-check)")] * len(edited)
        self.checks.update(zip(edited, got))

    def compile_round(self, tries: list[tuple[int, Tried]]) -> None:
        """Compile each distinct candidate of `tries` (its checks on a thread alongside)."""
        from ..compile.api import inspect_kernel

        by_ident = {_ident(t.candidate): t.candidate for _, t in tries}
        edited = list(dict.fromkeys(c.source for c in by_ident.values() if not c.overrides))
        checker = threading.Thread(target=self.run_checks, args=(edited,), daemon=True)
        checker.start()
        with ThreadPoolExecutor(max_workers=self.workers or max(2, os.cpu_count() or 2)) as pool:
            futures = {pool.submit(inspect_kernel, self.rec.file, source=c.source,
                                   **with_overrides(self.kw, c.overrides)): s for s, c in by_ident.items()}
            for fut in as_completed(futures):
                s, after = futures[fut], fut.result()
                for i, t in tries:
                    if _ident(t.candidate) == s:
                        self._judge(i, t, after)
        checker.join()

    def _judge(self, i: int, t: Tried, after: Inspection) -> None:
        t.after = after
        if judged(after):
            finding = self.report.findings[i].finding
            t.measures = measures(after, finding.line, t.candidate.relines)
            t.finding_gone = finding_gone(finding, t.measures)
            t.changes = changes(self.before[i], t.measures)
            t.new_findings = new_findings(self.before[i], t.measures)
        if self.on_result:
            self.on_result(i, t)

    def drop_unreached(self, tries: list[tuple[int, Tried]]) -> list[tuple[int, Tried]]:
        """An edit whose value did not reach the launch (a branch not taken), or whose compile
        moved nothing at all (num_stages in a kernel without a loop), is no candidate."""
        def idle(t: Tried) -> bool:
            return t.measures is not None and not t.finding_gone and not t.changes and not t.new_findings
        gone = {id(t) for _, t in tries if t.after is not None and (not reached(t.candidate, t.after) or idle(t))}
        for ff in self.report.findings:
            ff.tried += [f"{t.title}: {_reached_figures(t)}" for t in ff.candidates if id(t) in gone]
            ff.dropped += [t for t in ff.candidates if id(t) in gone]
            kept = [t for t in ff.candidates if id(t) not in gone]
            if ff.candidates and not kept and not ff.note:
                ff.note = "every edit the tool tried compiled to the same figures, or did not reach the launch"
            ff.candidates = kept
        return [(i, t) for i, t in tries if id(t) not in gone]

    def compositions(self, compiled: set[str]) -> list[tuple[int, Tried]]:
        """This round's compositions of each finding's best edits with the others' (`compose`)."""
        more = []
        for i, ff in enumerate(self.report.findings):
            mine = [(t.candidate, t.measures) for t in ff.candidates if t.after is not None]
            idle = [t.candidate for t in ff.dropped if t.candidate.kind == "hint"]
            others = [t.candidate for j, other in enumerate(self.report.findings) if j != i for t in other.candidates
                      if t.after is not None and t.finding_gone]
            for c in compose.compositions(self.rec, ff.finding, self.before[i], mine, others, compiled, _ident, idle):
                t = Tried(c)
                ff.candidates.append(t)
                more.append((i, t))
        return more

    def further_steps(self) -> list[tuple[int, Tried]]:
        """A limit no single step cleared: the knobs that helped, stepped further (stages down to 1)."""
        more: list[tuple[int, Tried]] = []
        for i, ff in enumerate(self.report.findings):
            if any(t.finding_gone for t in ff.candidates):
                continue
            seen = {_ident(t.candidate) for t in ff.candidates}
            steps = further(self.rec, ff.finding, [(t.candidate, helped(ff.finding, self.before[i], t.measures))
                                                   for t in ff.candidates])
            for c in steps:
                if _ident(c) not in seen:
                    seen.add(_ident(c))
                    t = Tried(c)
                    ff.candidates.append(t)
                    more.append((i, t))
        return more

    def rank(self, tries: list[tuple[int, Tried]]) -> None:
        """Each try's checks and score; each finding's candidates best first."""
        report = self.report
        for i, t in tries:
            c = self.checks.get(t.candidate.source) if not t.candidate.overrides else \
                Check(None, "a compile option: the example runs the file as written")
            c = c or Check(None, "not checked")
            t.checked, t.checked_note = c.checked, c.why
            _assumption_verdict(t, c, self.rec)
            ok = judged(t.after)
            t.score = score(report.findings[i].finding, self.before[i], t.measures if ok else None,
                            t.assumptions_hold, t.checked, (report.ms, t.ms))
            if t.candidate.relines is not None:
                t.score -= 5  # the kernel written twice: where a promise holds, it is the smaller change
        for ff in report.findings:
            ff.candidates.sort(key=lambda t: -t.score)
