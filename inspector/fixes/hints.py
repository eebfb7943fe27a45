"""Hint candidates placed where the compiler loses the fact, not where a source pattern suggests:
each group of `analysis.hint_sites` (the expressions to wrap, and the facts each must carry)
becomes one edit of the file, promising the weakest value that gives 128 bits (4 for fp32).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..analysis.fact_loss import AccessLimits
from ..analysis.hint_sites import hint_sites, promised, span_key
from ..analysis.memory import MemoryAccess
from . import edits

_CALL = {"divisibility": "multiple_of", "contiguity": "max_contiguous", "constancy": "max_constancy"}
_SAYS = {"divisibility": "is a multiple of {m}", "contiguity": "runs in groups of {m} consecutive values",
         "constancy": "runs in groups of {m} equal values"}


@dataclass
class HintSet:
    """A candidate's hints: the edited text and what it promises."""

    title: str
    source: str
    assumptions: list[str]
    lines: list[int]
    # a kernel argument the promise rests on -> the multiple it must be (checked against the launch)
    argument_values: dict[str, int]


def hint_sets(source: str, ttir: str, file: str, a: MemoryAccess,
              values: dict[str, Any] | None = None) -> tuple[AccessLimits | None, list[HintSet]]:
    """The access's limits and one edit per group of hint sites, most complete first.
    `values`: the launch's arguments by name (a promise resting on one is checked against it)."""
    values = values or {}
    sites = hint_sites(source, ttir, file, a, values=values)
    out: list[HintSet] = []
    seen: set[str] = set()
    for wraps in sites.groups:
        text = source
        for w in sorted(wraps, key=lambda w: span_key(w.node), reverse=True):
            text = edits.replace(text, w.node, w.text(text, sites.lang))
        if text == source or text in seen:
            continue
        seen.add(text)
        lines = sorted({w.node.lineno for w in wraps})
        named = [w for w in wraps if w.whats]
        says = [f"{w.whats[0]} {_SAYS[f].format(m=m)} at every launch" for w in named for f, m in promised(w.facts).items()]
        calls = sorted({_CALL[f] for w in wraps for f in w.facts})
        title = (f"promise {' and '.join(w.whats[0] for w in named)}: {', '.join('tl.' + c for c in calls)} "
                 f"on line{'s' if len(lines) > 1 else ''} {', '.join(map(str, lines))}")
        resting = {l.value: l.at_least for w in wraps for l in w.leaves if l.fact == "divisibility" and l.op is None
                   and l.value in values}
        out.append(HintSet(title, text, says, lines, resting))
    return sites.limits, out
