"""The call's overrides (a value typed for a kernel parameter in the sidebar's Call, or in the
missing-value form): shown as chips in the header, and scoped to the call they were given for.

An override replaces what the file's own launch passes (`Parameter.given` in the record: its
value, or None where it passes nothing). When it is set, that value is noted as its basis
(`Settings.basis`); when a later compile finds the file passing something else for it (the user put
the argument back, or changed it in the file), the override was given for another call: it is
dropped, the page says so, and the file's call is compiled instead. An override from a link
(no basis yet) takes the file's value of its first compile as its basis.
"""

from __future__ import annotations

import streamlit as st

from inspector.record import Inspection
from inspector.ui import state

DROPPED_NOW = "overrides_dropped_now"  # session state: the compile after a drop has not run yet
NONE = ""  # a basis meaning "the file passed nothing"


def _given(rec: Inspection | None, name: str) -> str:
    """What the file's own launch passed for `name` in `rec`, as text (NONE for nothing)."""
    for p in rec.parameters if rec is not None else []:
        if p.name == name:
            return NONE if p.given is None else str(p.given)
    return NONE


def widget_key(kind: str, name: str) -> str:
    """The sidebar field of one override (`kind`: "consts" or "args")."""
    return f"w.ov.{state.settings().kernel}.{kind}.{name}"


def set_value(kind: str, name: str, value: str, basis: str | None = None) -> None:
    """Set (or, with an empty value, clear) one override. Its basis is what the file passed when
    it was first set: `basis`, else the last record's value."""
    s = state.settings()
    table: dict[str, str] = getattr(s, kind)
    if not value:
        table.pop(name, None)
        s.basis.pop(name, None)
        return
    if name not in table:
        s.basis[name] = basis if basis is not None else _given(state.record(), name)
    table[name] = value


def on_field(key: str, kind: str, name: str) -> None:
    """on_change of a sidebar override field."""
    set_value(kind, name, str(st.session_state[key]).strip())
    state.request_compile()


def drop(kind: str, name: str) -> None:
    """on_click of a chip's ×: the file's own value again."""
    set_value(kind, name, "")
    st.session_state.pop(widget_key(kind, name), None)
    state.request_compile()


def after_compile(rec: Inspection) -> bool:
    """After compiling `rec`: True when overrides were dropped (`stale`) and the file's own call
    must be compiled instead of `rec`. Their notice stays until the compile after that one."""
    ss = st.session_state
    notices = stale(rec)
    if notices:
        ss[state.OVERRIDES_DROPPED] = notices
        ss[DROPPED_NOW] = True
        return True
    if not ss.pop(DROPPED_NOW, False):
        ss.pop(state.OVERRIDES_DROPPED, None)
    return False


def stale(rec: Inspection) -> list[str]:
    """After compiling `rec`: drop the overrides whose basis the file changed and return their
    notices (empty when none); an override without a basis takes this record's. Only a record
    that names the parameter counts: a compile that failed before the call was made keeps them."""
    s = state.settings()
    notices = []
    for kind in ("consts", "args"):
        table: dict[str, str] = getattr(s, kind)
        for name in list(table):
            if not any(p.name == name for p in rec.parameters):
                continue  # a record that names no such parameter (a syntax error) says nothing of it
            now = _given(rec, name)
            if name not in s.basis:
                s.basis[name] = now
                continue
            if s.basis[name] == now:
                continue
            before = s.basis[name] or "nothing"
            notices.append(f"`{name} = {table[name]}` was given while the file passed {before}; the file now "
                           f"passes {now or 'nothing'}, so the override was dropped")
            drop(kind, name)
    return notices


def chips(rec: Inspection | None) -> None:
    """One chip per override (name = value, what the file passes), × to drop it; and the notice of
    overrides a change of the file dropped."""
    s = state.settings()
    ss = st.session_state
    if ss.get(state.OVERRIDES_DROPPED):
        st.info(". ".join(ss[state.OVERRIDES_DROPPED]) + ".", icon=":material/undo:")
    items = [(kind, name, value) for kind in ("consts", "args") for name, value in getattr(s, kind).items()]
    if not items:
        return
    with st.container(horizontal=True, gap="small", vertical_alignment="center", key="w.overrides"):
        st.caption("Overrides:", width="content")
        for kind, name, value in items:
            file_value = s.basis.get(name, _given(rec, name)) or "nothing"
            st.button(f"{name} = {value} · file: {file_value}", key=f"w.chip.{kind}.{name}", icon=":material/close:",
                      type="tertiary", on_click=drop, args=(kind, name),
                      help=f"Compiled with {name} = {value} where the file passes {file_value}. Click to drop it.")
