"""Guarding a repository's Triton kernels in CI: every kernel, every target, against a baseline.

    from inspector.guard import baseline, guard
    result = guard(["kernels/"], ["sm_90", "gfx942"], baseline.load("guard.json"))
    result.exit_status, [c.headline() for c in result.regressions]

Modules, in the order a run uses them:

- `discovery`: the kernel files under the PATHs given (files, folders, module names), and which
  of a file's kernels are entries (not helpers other kernels call); read as text, never imported.
- `engines`: where compiles run: a thread pool over this machine's cores (`LocalEngine`), or Ray
  tasks on a cluster (`RayEngine`); both run `inspector.compile.api.inspect_kernel`, the sandboxed
  compile, and share the cache.
- `runner`: `run_guard` (the first request for a file finds its kernels, the others follow);
  `update_baseline`.
- `metrics`: what is measured in one record: registers, spills, local and shared memory,
  occupancy and its limiter, the width of every load and store, layout conversions, launchability.
- `baseline`: the committed file (format, thresholds, per-kernel overrides) and its errors.
- `compare`: one kernel on one target against its baseline entry: regressions and improvements.
- `reports`: one line per regression, JUnit XML, Markdown, JSON; `progress`: the terminal bar.

The command line is `python -m inspector guard` (`inspector.cli.guard`).
"""

from __future__ import annotations

from . import baseline
from .compare import CaseResult, Change
from .engines import LocalEngine, RayEngine, make_engine
from .metrics import KernelMetrics, metrics_of
from .runner import GuardResult, default_jobs, run_guard, update_baseline


def guard(paths: list[str], targets: list[str], base: "baseline.Baseline | None" = None, jobs: int | None = None,
          ray: str | None = None, timeout: float | None = None, use_cache: bool = True) -> GuardResult:
    """Run the guard with a fresh engine (local threads, or Ray when `ray` is given) and close it."""
    engine = make_engine(ray, jobs or default_jobs())
    try:
        return run_guard(paths, targets, base or baseline.Baseline(None), engine, timeout=timeout,
                         use_cache=use_cache)
    finally:
        engine.close()


__all__ = ["CaseResult", "Change", "GuardResult", "KernelMetrics", "LocalEngine", "RayEngine", "baseline", "default_jobs",
           "guard", "make_engine", "metrics_of", "run_guard", "update_baseline"]
