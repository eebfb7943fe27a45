"""A guard run: find the kernels, compile each for each target, compare with the baseline.

Discovery goes through the compile itself: the first request for a file names no kernel, so the
worker runs the file as the app does (module level, `example()`, tests, wrappers) and compiles the
kernel it launches first; its record lists the file's kernels (`kernels_in_file`). The other entry
kernels are then requested by name, for every target, as soon as that first record is back, so
discovery never waits for the whole first round.
"""

from __future__ import annotations

import os
import time
from concurrent.futures import FIRST_COMPLETED, Future, wait
from dataclasses import dataclass, field
from typing import Any

from ..compile.api import triton_version
from ..record import ErrorInfo, Inspection
from .baseline import Baseline
from .compare import CaseResult, compare, missing
from .discovery import entry_kernels, kernel_files
from .engines import LocalEngine, ProgressCallback, RayEngine, Result
from .metrics import KernelMetrics, metrics_of

FILE_KERNEL = "*"  # the kernel name of a file in which no kernel could be found (it does not import)


@dataclass
class GuardResult:
    """Every case of a run, and what the run cost."""

    cases: list[CaseResult]
    files: list[str]
    targets: list[str]
    triton: str
    engine: str
    seconds: float
    compiles: int = 0  # records compiled in this run
    cache_hits: int = 0
    compile_seconds: float = 0.0  # summed over the compiled records (the worker's own time)
    notes: list[str] = field(default_factory=list)

    @property
    def regressions(self) -> list[CaseResult]:
        return [c for c in self.cases if c.status == "regressed"]

    @property
    def exit_status(self) -> int:
        """0 when nothing regressed, 1 otherwise."""
        return 1 if self.regressions else 0

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for c in self.cases:
            out[c.status] = out.get(c.status, 0) + 1
        return out


@dataclass
class _FileState:
    entries: list[str] | None = None  # entry kernels, once a record has listed the file's kernels
    first: dict[str, Inspection] = field(default_factory=dict)  # target -> the kernel-less request's record


def run_guard(paths: list[str], targets: list[str], baseline: Baseline, engine: LocalEngine | RayEngine,
              timeout: float | None = None, use_cache: bool = True,
              progress: ProgressCallback | None = None) -> GuardResult:
    """Guard every kernel launched in `paths` on every target against `baseline`."""
    t0 = time.monotonic()
    files = kernel_files(paths)
    states = {f: _FileState() for f in files}
    pending: dict[Future[Result], tuple[str, str | None, str]] = {}
    results: dict[tuple[str, str, str], Result] = {}
    hits = done = 0

    def submit(file: str, kernel: str | None, target: str) -> None:
        name, release = split_target(target)
        # make_up=False: a kernel its file never launches is reported as such, not guarded on made-up values
        request: dict[str, Any] = {"file": file, "kernel": kernel, "target": name, "timeout": timeout,
                                   "use_cache": use_cache, "make_up": False}
        if release:
            request["triton"] = release
        pending[engine.submit(request)] = (file, kernel, target)

    def rest_of_file(file: str, target: str) -> None:
        st = states[file]
        first = st.first[target]
        covered = first.kernel if first.kernels_in_file else None
        for k in st.entries or []:
            if k != covered:
                submit(file, k, target)

    for f in files:
        for t in targets:
            submit(f, None, t)
    while pending:
        finished, _ = wait(list(pending), return_when=FIRST_COMPLETED)
        for fut in finished:
            file, kernel, target = pending.pop(fut)
            try:
                rec, m = fut.result()
            except Exception as e:  # noqa: BLE001 - one request's failure is that case's, not the run's
                rec = Inspection.failure(ErrorInfo("internal", f"{type(e).__name__}: {e}", file), file=file,
                                         target=split_target(target)[0], kernel=kernel or "")
                m = metrics_of(rec)
            m.target = target  # "sm_90", or "sm_90@3.6.0" for another Triton release
            done += 1
            hits += rec.cached
            st = states[file]
            if kernel is None:
                st.first[target] = rec
                if rec.kernels_in_file and rec.kernel:
                    results[(file, rec.kernel, target)] = (rec, m)
                if st.entries is None and rec.kernels_in_file:
                    st.entries = entry_kernels(rec.source, rec.kernels_in_file)
                    for t in st.first:
                        rest_of_file(file, t)
                elif st.entries is not None:
                    rest_of_file(file, target)
            else:
                results[(file, kernel, target)] = (rec, m)
            if progress is not None:
                progress(done, done + len(pending), hits,
                         all(len(s.first) == len(targets) for s in states.values()))

    cases: list[CaseResult] = []
    compiled = [r for r, _ in results.values() if not r.cached]
    for file in files:
        st = states[file]
        found = set(st.entries or [])
        for target in targets:
            if st.entries is None:
                # No record listed the file's kernels (it does not import): every kernel the
                # baseline holds for it fails with that error, or the file does as a whole.
                rec = st.first[target]
                compiled += [] if rec.cached else [rec]
                m = metrics_of(rec)
                ids = baseline.kernels_of_file(file)
                if not ids and rec.error is not None and rec.error.kind == "no_kernel":
                    continue  # a file that mentions Triton but defines no kernel
                ids = ids or [baseline.kernel_id(file, FILE_KERNEL)]
                for kid in ids:
                    m_k = KernelMetrics(kid.rsplit("::", 1)[1], target, None, False, m.problem, m.problem_line,
                                        problem_kind=m.problem_kind)
                    cases.append(compare(kid, file, m_k, baseline.entry(kid, target), baseline.thresholds_for(kid)))
                continue
            for kernel in st.entries:
                rec, m = results[(file, kernel, target)]
                kid = baseline.kernel_id(file, kernel)
                cases.append(compare(kid, file, m, baseline.entry(kid, target), baseline.thresholds_for(kid)))
            for kid in baseline.kernels_of_file(file):
                name = kid.rsplit("::", 1)[1]
                if name not in found and baseline.entry(kid, target) is not None:
                    cases.append(missing(kid, file, target))
    notes = []
    if baseline.triton and baseline.triton != triton_version():
        notes.append(f"the baseline was written with Triton {baseline.triton}, this run uses {triton_version()}: "
                     "differences may come from the compiler")
    return GuardResult(cases, files, list(targets), triton_version(), engine.describe(), time.monotonic() - t0,
                       compiles=len(compiled), cache_hits=hits,
                       compile_seconds=sum(r.compile_seconds for r in compiled), notes=notes)


def split_target(key: str) -> tuple[str, str | None]:
    """"sm_90" -> ("sm_90", None); "sm_90@3.6.0" -> ("sm_90", "3.6.0") (a side Triton release)."""
    name, _, release = key.partition("@")
    return name, release or None


def target_keys(targets: list[str], releases: list[str] | None) -> list[str]:
    """What a run guards: each target for each Triton release; the installed release's keys are
    bare target names, another release's carry it (`sm_90@3.6.0`), so a baseline written before
    a second release was added keeps its meaning."""
    installed = triton_version()
    out = []
    for release in releases or [installed]:
        out += [t if release in (installed, "default") else f"{t}@{release}" for t in targets]
    return out


def update_baseline(baseline: Baseline, result: GuardResult) -> None:
    """Accept every case's figures (kernels gone from their files are dropped), keeping thresholds."""
    for case in result.cases:
        if case.status == "missing":
            baseline.forget(case.kernel_id, case.target)
        elif case.metrics is not None:
            baseline.record(case.kernel_id, case.metrics)
    baseline.triton = result.triton


def default_jobs() -> int:
    """Compiles at a time on this machine: its usable cores."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1
