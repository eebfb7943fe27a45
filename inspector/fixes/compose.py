"""Edits that compose: a candidate that helped but did not finish the job, combined with another
edit, as a search judged by each combination's own compile.

A hint that lifts an access from 32 to 64 bits may need a layout change to reach 128 (a block of
256 fp32 elements over 128 threads gives each thread 2): neither edit alone removes the finding,
together they do. `compositions` takes the candidates of one finding that improved its figures,
best first, and merges each with the finding's other candidates and with the layout steps (a
larger block, fewer warps), up to a budget of compiles per round; `fix` compiles them like any
other candidate and runs another round from the best of them while the finding stays and the
budget lasts.

Two edits merge when they change different lines: no edit adds a line (`edits`), so the merge is
line by line against the original.
"""

from __future__ import annotations

import difflib
from typing import Any, Iterable

from ..analysis.advisor import Finding
from ..analysis.memory import memory_report
from ..record import Inspection
from . import edits
from .candidates import Candidate, layout_steps
from .evaluate import Measures, finding_gone, score

ROUNDS = 2  # composition rounds after the first compile of single edits
BUDGET = 6  # compiles per finding per round
FRONTIER = 2  # candidates expanded per round
_ACCESS_CODES = ("scalar_access", "partial_access", "uncoalesced_access")


def merge_line(o: str, a: str, b: str) -> str | None:
    """Two edits of one line in one, where they touch different characters (a hint wrapped on
    the address and the mask set to None in the same call); None where they overlap."""
    if a == o or a == b:
        return b
    if b == o:
        return a
    changes = []
    for edited in (a, b):
        # one edit's changes on a line count as one stretch, from its first to its last (a wrap
        # inserts on both sides of what it wraps; the other edit must stay out of it)
        ops = [op for op in difflib.SequenceMatcher(None, o, edited, autojunk=False).get_opcodes() if op[0] != "equal"]
        i1, j1, i2, j2 = ops[0][1], ops[0][3], ops[-1][2], ops[-1][4]
        changes.append((i1, i2, edited[j1:j2]))
    (s1, e1, _), (s2, e2, _) = sorted(changes)
    if s2 < e1 or s1 == s2 or s2 == e1 and s1 == e1:
        return None
    out = o
    for i1, i2, text in sorted(changes, reverse=True):
        out = out[:i1] + text + out[i2:]
    return out


def merge_sources(original: str, a: str, b: str, relines: Any = None) -> str | None:
    """`a` (an edit of `original` that keeps its line count) and `b` in one text; None when they
    change the same characters or a line count moved. `relines` (a `peel.Peeled`) is `b`'s where
    `b` wrote lines twice: `a`'s change to such a line goes into both copies."""
    o, x, y = original.splitlines(keepends=True), a.splitlines(keepends=True), b.splitlines(keepends=True)
    if len(o) != len(x) or (relines is None and len(o) != len(y)):
        return None
    out = list(y)
    for i, (lo, la) in enumerate(zip(o, x), 1):
        if la == lo:
            continue
        targets = relines.copies.get(i, [relines.new_line(i)]) if relines is not None else [i]
        for t in targets:
            have = out[t - 1]
            pad = len(have) - len(have.lstrip()) - (len(lo) - len(lo.lstrip()))
            if pad < 0:
                return None
            merged = merge_line(lo, la, have[pad:])
            if merged is None:
                return None
            out[t - 1] = have[:pad] + merged
    return "".join(out)


def _merge_overrides(a: dict[str, dict[str, Any]], b: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]] | None:
    out = {k: dict(v) for k, v in a.items()}
    for k, v in b.items():
        for name, value in v.items():
            if name in out.get(k, {}) and out[k][name] != value:
                return None
            out.setdefault(k, {})[name] = value
    return out


def combine(rec: Inspection, a: Candidate, b: Candidate) -> Candidate | None:
    """One candidate making both edits, or None where they collide."""
    if a.relines is not None and b.relines is not None:
        return None
    if a.relines is not None:
        a, b = b, a
    source = merge_sources(rec.source, a.source, b.source, b.relines)
    overrides = _merge_overrides(a.overrides, b.overrides)
    if source is None or overrides is None or (source == rec.source and not overrides):
        return None
    if source in (a.source, b.source) and overrides in (a.overrides, b.overrides):
        return None  # one already contains the other
    path = rec.file.rsplit("/", 1)[-1] or "kernel.py"
    kind = "hint" if "hint" in (a.kind, b.kind) else b.kind
    return Candidate(f"{a.title}; with {b.title}", source, edits.unified_diff(rec.source, source, path) if
                     source != rec.source else "", list(dict.fromkeys(a.assumptions + b.assumptions)),
                     sorted(set(a.promises + b.promises)), {**a.promise_values, **b.promise_values}, kind,
                     overrides, b.knob or a.knob, b.relines)


def _no_room(rec: Inspection, a: Any) -> bool:
    """Whether the block gives each thread fewer elements than one 128-bit access of `a` holds."""
    threads = (rec.resources.num_warps or 0) * (rec.warp_size or 32)
    if a is None or not a.shape or not threads or not a.element_bits:
        return False
    elements = 1
    for d in a.shape:
        elements *= d
    return elements < threads * max(1, 128 // a.element_bits)


def improved(before: Measures, after: Measures | None) -> bool:
    """Whether an access's figures moved the right way (wider, or fewer sectors wasted)."""
    if after is None:
        return False
    wider = bool(before.width_bits and after.width_bits and after.width_bits > before.width_bits)
    better = (before.sector_efficiency is not None and after.sector_efficiency is not None
              and after.sector_efficiency > before.sector_efficiency + 1e-9)
    return wider or better


def compositions(rec: Inspection, f: Finding, before: Measures, tried: Iterable[tuple[Candidate, Measures | None]],
                 others: list[Candidate], seen: set[str], ident: Any, idle: list[Candidate] | None = None
                 ) -> list[Candidate]:
    """The next round's combinations for one access finding (see the module docstring): the best
    improving candidates, each merged with the finding's other candidates, the layout steps and
    the other findings' candidates (`others`: the same hint on a store beside a load), new ones
    only (`seen` holds the identities already compiled; `ident(candidate)` makes one). `idle`:
    hints that compiled to the same figures, merged with the layout steps where the block leaves
    no room for a wider access."""
    if f.code not in _ACCESS_CODES:
        return []
    tried = list(tried)
    if any(m is not None and finding_gone(f, m) for _, m in tried):
        return []
    ranked = sorted(((score(f, before, m, None, None), c) for c, m in tried if improved(before, m)),
                    key=lambda t: -t[0])
    frontier = [c for _, c in ranked[:FRONTIER]]
    access = next((a for a in memory_report(rec).accesses if a.line == f.line and not a.uniform), None)
    steps = layout_steps(rec, access)
    partners = [c for c, _ in tried] + steps + others
    if not frontier and idle and _no_room(rec, access):
        # the block leaves each thread less than one wide access: a hint cannot show on its own
        # (it compiled to the same figures), only together with a larger block or fewer warps
        frontier, partners = idle[:FRONTIER], steps
    out: list[Candidate] = []
    for a in frontier:
        for b in partners:
            if len(out) >= BUDGET:
                return out
            if b is a:
                continue
            c = combine(rec, a, b)
            if c is not None and ident(c) not in seen:
                seen.add(ident(c))
                out.append(c)
    return out
