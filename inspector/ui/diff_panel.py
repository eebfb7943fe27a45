"""The Diff tab: the current compile against a pinned one (and, above, against the same view
compiled by another Triton release); the diff itself is drawn by `inspector.ui.diff_view`."""

from __future__ import annotations

import streamlit as st

from inspector.record import Inspection
from inspector.ui import state
from inspector.ui.diff_view import diff_view
from inspector.ui.versions import release_diff


def diff_panel(rec: Inspection) -> None:
    """Pin the current compile as A; diff it against whatever is compiled next. Above it, the
    same view compiled by another Triton release (inspector/ui/versions.py)."""
    release_diff(rec)
    st.divider()
    pinned: Inspection | None = st.session_state.get(state.PIN)
    c1, c2 = st.columns([1, 3])
    if c1.button("Pin this compile as A", key="w.pin"):
        st.session_state[state.PIN] = pinned = rec
    if pinned is None:
        c2.caption("Pin a compile, change the source, target or options, compile again: the diff shows what "
                   "changed. The autotune grid diffs two configs the same way.")
        return
    if c2.button("Unpin", key="w.unpin"):
        st.session_state.pop(state.PIN, None)
        st.rerun()
    if pinned.cache_key == rec.cache_key:
        st.caption("A is the current compile: change something and compile to see a diff.")
    diff_view(pinned, rec, "pinned", "current")
