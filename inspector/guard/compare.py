"""Comparing a kernel's figures on one target with its baseline entry, under its thresholds."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .baseline import Threshold
from .metrics import LAUNCH_RANK, MEMORY_RANK, METRICS, KernelMetrics, show_width, width_rank

# Case statuses: "pass" (as good as the baseline, within thresholds), "regressed" (worse beyond a
# threshold), "new" (no baseline entry), "missing" (in the baseline, no longer in the file).
FAILING = {"regressed"}


@dataclass
class Change:
    """One figure that moved: a regression (beyond its threshold) or an improvement."""

    metric: str  # a METRICS name, "memory" or "launchable"
    what: str  # "registers", "load x_ptr", "launch"
    before: Any
    after: Any
    line: int | None  # the kernel-file line it concerns
    text: str  # "registers 26 -> 40 (+54%)"
    rank: int  # which change leads a line (lower first)


@dataclass
class CaseResult:
    """One kernel on one target: what it compiled to and how that compares with the baseline."""

    kernel_id: str  # "kernels/add.py::add_kernel"
    file: str  # absolute path
    kernel: str
    target: str
    status: str
    metrics: KernelMetrics | None = None
    regressions: list[Change] = field(default_factory=list)
    improvements: list[Change] = field(default_factory=list)
    seconds: float = 0.0  # wall time of this compile as the guard saw it (cache hits included)
    cached: bool = False

    @property
    def rel_path(self) -> str:
        return self.kernel_id.rsplit("::", 1)[0]

    @property
    def line(self) -> int | None:
        """The line a report points at: the leading regression's, else the kernel's def."""
        if self.regressions:
            return self.regressions[0].line
        if self.metrics is not None:
            return self.metrics.problem_line or self.metrics.def_line
        return None

    def headline(self) -> str:
        """One line: `PATH:LINE: KERNEL on TARGET: before -> after, ...`."""
        where = f"{self.rel_path}:{self.line}" if self.line else self.rel_path
        changes = self.regressions if self.status == "regressed" else []
        if changes:
            body = "; ".join(c.text for c in changes)
        elif self.status == "missing":
            body = "in the baseline, no longer found in the file"
        elif self.metrics is not None and self.metrics.not_launched:
            body = f"not launched by the file ({self.metrics.problem})"
        elif self.metrics is not None and not self.metrics.launchable:
            body = f"cannot launch: {self.metrics.problem}"
        else:
            body = self.status
        return f"{where}: {self.kernel} on {self.target}: {body}"


def _show(metric: str, value: Any) -> str:
    m = METRICS[metric]
    if m.unit == "%":
        return f"{float(value) * 100:.0f}%"
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return f"{value:,}{m.unit}" if isinstance(value, int) else f"{value}{m.unit}"


def _numeric(name: str, before: Any, after: Any, t: Threshold, line: int | None, limiter: str | None,
             old_limiter: str | None) -> tuple[Change | None, bool]:
    """(the change, whether it is a regression) for one numeric figure; no change when equal."""
    m = METRICS[name]
    if not isinstance(before, (int, float)) or isinstance(before, bool) or before == after:
        return None, False
    worse = (after - before) if m.higher_is_worse else (before - after)
    text = f"{m.label} {_show(name, before)} -> {_show(name, after)}"
    if m.unit != "%" and before:
        text += f" ({(after - before) / before * 100:+.0f}%)"
    if name == "occupancy" and limiter and (limiter != old_limiter or worse > 0):
        text += f" (limited by {limiter})"
    change = Change(name, m.label, before, after, line, text, m.rank)
    return change, (not t.off and worse > t.allowed(float(before)) + 1e-9)


def compare(kernel_id: str, file: str, m: KernelMetrics, entry: dict[str, Any] | None,
            thresholds: dict[str, Threshold]) -> CaseResult:
    """The case result of `m` against its baseline `entry` (None: a new kernel or target)."""
    case = CaseResult(kernel_id, file, m.kernel, m.target, "new" if entry is None else "pass", m,
                      seconds=m.compile_seconds, cached=m.cached)
    if entry is None:
        return case
    was_launchable = bool(entry.get("launchable", True))
    if not m.launchable:
        if was_launchable and not thresholds["launchable"].off:
            case.regressions.append(Change("launchable", "launch", True, False, m.problem_line,
                                           f"cannot launch any more: {m.problem}", LAUNCH_RANK))
    elif not was_launchable:
        case.improvements.append(Change("launchable", "launch", False, True, m.def_line,
                                        f"launches now (was: {entry.get('problem')})", LAUNCH_RANK))
    else:
        for name in METRICS:
            if name not in m.values or name not in entry:
                continue
            change, bad = _numeric(name, entry[name], m.values[name], thresholds[name], m.lines.get(name),
                                   m.limiter, entry.get("limiter"))
            if change is not None:
                (case.regressions if bad else case.improvements).append(change)
        t = thresholds["memory"]
        for key, old in (entry.get("memory") or {}).items():
            new = m.memory.get(key)
            if new is None or not isinstance(old, dict):
                continue
            before, after = old.get("bits"), new.width
            if width_rank(before) == width_rank(after):
                continue
            narrower = width_rank(before) - width_rank(after)
            why = f" ({'; '.join(new.reasons)})" if new.reasons and narrower > 0 else ""
            change = Change("memory", key, before, after, new.line,
                            f"{key} {show_width(before)} -> {show_width(after)}{why}", MEMORY_RANK)
            allowed = t.allowed(float(width_rank(before)))
            if narrower > 0 and not t.off and narrower > allowed:
                case.regressions.append(change)
            elif narrower < 0:
                case.improvements.append(change)
    case.regressions.sort(key=lambda c: c.rank)
    if case.regressions:
        case.status = "regressed"
    return case


def missing(kernel_id: str, file: str, target: str) -> CaseResult:
    """A kernel the baseline holds for a file that no longer defines it."""
    kernel = kernel_id.rsplit("::", 1)[1]
    return CaseResult(kernel_id, file, kernel, target, "missing")
