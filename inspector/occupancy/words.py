"""Occupancy's limiters in words, one wording for the page, the command line and the diff."""

from __future__ import annotations

from typing import Iterable

LIMITER_WORDS = {
    "warps": "warps", "registers": "registers", "shared_memory": "shared memory", "blocks": "blocks",
    "barriers": "barriers", "virtual_resources": "virtual resources", "waves": "waves", "vgprs": "VGPRs",
    "sgprs": "SGPRs", "lds": "LDS",
}


def limiter_list(limiters: Iterable[str] | None) -> str:
    """Limiter names in words ("registers + shared memory")."""
    return " + ".join(LIMITER_WORDS.get(x, x) for x in limiters or [])


def limiter_words(occupancy: float | None, limiters: Iterable[str] | None) -> str:
    """What caps occupancy: at full occupancy nothing does (the calculator's limiters then only
    tie at 100%), else the limiters in words, "–" when unknown."""
    if occupancy is not None and occupancy >= 0.999:
        return "nothing"
    return limiter_list(limiters) or "–"
