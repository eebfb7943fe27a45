"""A failed inspection, shown where the user is looking: kind, the file's line, the message,
and the lines around it as they were compiled. When the kernel needs values nothing in the file
gives (`details["missing"]`: constexprs and arguments with a suggested value each), a small form
asks for them, one field per name; submitting recompiles with them as the call's overrides (what
the command line takes as --const / --arg), and the editor's text is left as it is."""

from __future__ import annotations

import os

import streamlit as st

from inspector.record import Inspection
from inspector.ui import overrides, state

KIND_TITLES = {
    "syntax": "Syntax error", "import": "The file could not be imported", "example": "The example() call failed",
    "compilation": "Triton compile error",
    "out_of_resources": "Out of resources on this target", "unknown_target": "Unknown target",
    "missing_constexpr": "A constexpr has no value", "bad_argument": "Bad argument", "no_kernel": "No kernel found",
    "no_launch": "The program launched no kernel",
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
    missing = [m for m in (err.details or {}).get("missing") or [] if isinstance(m, dict) and m.get("name")]
    if missing:
        if err.details.get("at_launch"):
            st.code(err.message or "(no message)", language=None)
        missing_form(missing, err.line, bool(err.details.get("at_launch")))
        return
    st.code(err.message or "(no message)", language=None)
    if err.line and rec.source:
        st.code(excerpt(rec.source, err.line), language=None)


def _apply_missing(missing: list[dict]) -> None:
    """on_click of the form: the typed values become the call's overrides, then compile."""
    for m in missing:
        value = str(st.session_state.get(_field_key(m), "")).strip()
        if value:  # the file passes nothing for it: that is the override's basis
            overrides.set_value("consts" if m.get("kind") == "constexpr" else "args", m["name"], value,
                                basis=overrides.NONE)
    state.request_compile()


def _field_key(m: dict) -> str:
    return f"w.missing.{state.settings().kernel}.{m.get('kind')}.{m['name']}"


def missing_form(missing: list[dict], line: int | None, at_launch: bool = False, made_up: bool = False) -> None:
    """One input per value the kernel needs, prefilled with a suggestion; Compile uses them.

    `at_launch`: the file launches the kernel (at `line`) without these values, which a real
    launch refuses too; otherwise nothing in the file launches it (`line` is the kernel's).
    `made_up`: the kernel was compiled with these values (`Inspection.made_up`), offered to change."""
    names = ", ".join(f"`{m['name']}`" for m in missing)
    if made_up:
        st.info(f"Nothing in the file launches this kernel, so it was compiled with made-up values for {names} "
                "(from how its code uses each, checked by compiling). Change them and compile; they are kept "
                "as the call's overrides (sidebar, Call).", icon=":material/edit_note:")
    elif at_launch:
        st.markdown(f"The launch at line {line} does not pass {names}, which have no default: a real launch fails "
                    "the same way. Add them to the call in the file, or give values here to compile it as if it "
                    "did (kept as the call's overrides: sidebar, Call).")
    else:
        where = f" (the kernel at line {line})" if line else ""
        st.markdown(f"Nothing in the file launches this kernel{where}, so these values are needed to compile it. "
                    "Edit the suggestions and compile; they are kept as the call's overrides (sidebar, Call).")
    # many made-up values (strides as constexprs) fold away; a few stay in sight
    box = st.expander(f"The {len(missing)} made-up values", expanded=len(missing) <= 4) if made_up else st.container()
    with box, st.form(f"w.missing.{state.settings().kernel}", border=True):
        cols = st.columns(min(len(missing), 4))
        for i, m in enumerate(missing):
            kind = "constexpr" if m.get("kind") == "constexpr" else "argument"
            cols[i % len(cols)].text_input(f"{m['name']} ({kind})", value=str(m.get("suggested") or ""),
                                           key=_field_key(m))
        st.form_submit_button("Compile with these values", type="primary", on_click=_apply_missing,
                              args=(missing,))
