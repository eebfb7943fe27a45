"""Figures as the reader sees them, one rounding for the page, the command line and the diff."""

from __future__ import annotations

from typing import Any


def number_words(x: float | None) -> str:
    """Whole numbers whole, others to one decimal (two significant digits below 1), "–" for none:
    15.625 -> "15.6", 3.90625 -> "3.9", 0.0625 -> "0.062"."""
    if x is None:
        return "–"
    if float(x).is_integer():
        return str(int(x))
    return f"{x:.1f}" if abs(x) >= 1 else f"{x:.2g}"


def percent_words(share: float | None) -> str:
    """A 0..1 share as a whole percent ("25%"), "–" for none."""
    return "–" if share is None else f"{100 * share:.0f}%"


def line_words(rec: Any, line: int | None) -> str:
    """A kernel line as reports name it: for a generated kernel (Helion), the user's line and the
    generated Triton line it is in (`12 (Triton 31)`)."""
    if rec.generated is None or not line:
        return str(line or "-")
    user = rec.generated.user_line(line)
    return f"{user or '-'} (Triton {line})"
