"""A failed inspection, shown where the user is looking: kind, the file's line, the message,
and the lines around it as they were compiled."""

from __future__ import annotations

import os

import streamlit as st

from inspector.compile.record import Inspection

KIND_TITLES = {
    "syntax": "Syntax error", "import": "The file could not be imported", "example": "The example() call failed",
    "compilation": "Triton compile error",
    "out_of_resources": "Out of resources on this target", "unknown_target": "Unknown target",
    "missing_constexpr": "A constexpr has no value", "bad_argument": "Bad argument", "no_kernel": "No kernel found",
    "timeout": "Timed out", "memory": "Out of memory", "output_limit": "Output too large",
    "crashed": "The worker crashed", "internal": "Internal error", "cancelled": "Cancelled",
}


def excerpt(source: str, line: int, context: int = 3) -> str:
    """The lines around `line` (1-based) with numbers and a marker on the line itself."""
    lines = source.splitlines()
    lo, hi = max(1, line - context), min(len(lines), line + context)
    return "\n".join(f"{'>' if n == line else ' '} {n:4d} | {lines[n - 1]}" for n in range(lo, hi + 1))


def show_error(rec: Inspection) -> None:
    """The error box (nothing when the record is fine)."""
    err = rec.error
    if err is None:
        return
    title = KIND_TITLES.get(err.kind, err.kind)
    where = ""
    if err.line:
        where = f" at line {err.line}" + (f" of `{os.path.basename(err.file)}`" if err.file else "")
    st.error(f"**{title}**{where}", icon="⚠️")
    st.code(err.message or "(no message)", language=None)
    if err.line and rec.source:
        st.code(excerpt(rec.source, err.line), language=None)
