"""The stage panes' contents for the workbench: TTIR, TTGIR, LLVM IR, PTX, SASS, AMDGCN and the
pass-by-pass view, highlighted and numbered, with the line maps that link them to the source.

Each pane's highlighted rows are cached per (record, stage), so a rerun only joins cached strings;
the linking itself runs in the page (see `inspector.ui.workbench`).
"""

from __future__ import annotations

import difflib

import streamlit as st

from inspector.highlight import language_of, render_rows
from inspector.record import AMD_STAGES, NVIDIA_STAGES, STAGE_TITLES, Inspection, PassSnapshot
from inspector.ui.linking import stage_line_maps
from inspector.ui.panes import Pane
from inspector.ui.settings import MAX_PANES

# A stage beyond this is shown up to here (a browser chokes on tens of megabytes of rows); the
# download has all of it.
MAX_PANE_BYTES = 8_000_000
PANE_TITLES = {**STAGE_TITLES, "passes": "Pass by pass"}
# A stage the other vendor's target lacks is replaced by its counterpart (PTX <-> AMDGCN).
COUNTERPART = {"ptx": "amdgcn", "sass": "amdgcn", "amdgcn": "ptx"}


def available_panes(rec: Inspection) -> list[str]:
    """The panes `rec` can show: its stages and those deferred (made when first shown), in
    pipeline order, then the pass-by-pass view."""
    order = ("triton", *(NVIDIA_STAGES if rec.backend == "cuda" else AMD_STAGES))
    return [*(s for s in order if s in rec.stages or s in rec.deferred), "passes"]


def deferred_wanted(rec: Inspection, wanted: list[str]) -> list[str]:
    """The deferred stages of `rec` that the chosen panes would show."""
    available = [p for p in available_panes(rec) if p != "source"]
    return [p for p in effective_panes(wanted, available) if p in rec.deferred]


def effective_panes(wanted: list[str], available: list[str]) -> list[str]:
    """The chosen panes this record can show, counterparts swapped in, in order, without repeats."""
    out: list[str] = []
    for p in wanted:
        p = p if p in available else COUNTERPART.get(p, "")
        if p in available and p not in out:
            out.append(p)
    return out[:MAX_PANES] or [p for p in ("ptx", "amdgcn") if p in available][:1] or available[:1]


@st.cache_data(max_entries=32, show_spinner=False)  # up to 8 MB each
def _rows(key: str, language: str, anchor: str, _text: str) -> str:
    """Highlighted rows of one text; `key` identifies the text (record cache key + stage)."""
    return render_rows(_text, language, anchor)


@st.cache_data(max_entries=16, show_spinner=False)
def _maps(key: str, _rec: Inspection) -> dict[str, dict[int, list[int]]]:
    return stage_line_maps(_rec)


def _changed_passes(rec: Inspection) -> list[PassSnapshot]:
    return [p for p in rec.passes or [] if p.changed and p.ir]


def _previous_ir(rec: Inspection, snap: PassSnapshot) -> str:
    """The IR before `snap`: the last changed snapshot of the same dialect before it."""
    prev = ""
    for p in rec.passes or []:
        if p.index >= snap.index:
            break
        if p.dialect == snap.dialect and p.changed and p.ir:
            prev = p.ir
    return prev


def _step(widget: str, to: int) -> None:
    """on_click of the previous/next-change buttons: the picker shows pass `to`."""
    st.session_state[widget] = to


def pass_label(p: PassSnapshot, number: int) -> str:
    """A pass as the picker lists it: its number in the pipeline, its real name, whether it changed the IR."""
    return f"{number}. {p.name}" + (" ● changed" if p.changed else "") + f" ({p.dialect})"


def _pass_pane(rec: Inspection, key: str) -> Pane:
    """The pass-by-pass pane: a picker of the passes by their real names (every pass, or only
    those that changed the IR), buttons that jump to the previous or next change, and the IR
    after the pass, or what it changed."""
    if rec.passes is None:
        return Pane("passes", PANE_TITLES["passes"], "", "passes", "",
                    "Turn on 'Record every pass' in the sidebar to see the IR after each compiler pass.")
    snaps = _changed_passes(rec)
    if not snaps:
        return Pane("passes", PANE_TITLES["passes"], "", "passes", "", "No pass changed the IR.")
    number = {p.index: i + 1 for i, p in enumerate(rec.passes)}
    only = st.toggle(f"Only the {len(snaps)} passes that changed the IR (of {len(rec.passes)})", value=True,
                     key="w.passonly")
    listed = snaps if only else list(rec.passes)
    widget = f"w.pass.{key}.{int(only)}"
    indices = [p.index for p in listed]
    if st.session_state.get(widget) not in indices:
        st.session_state[widget] = snaps[0].index
    at = st.session_state[widget]
    changed = [p.index for p in snaps]
    before = [i for i in changed if i < at]
    after = [i for i in changed if i > at]
    c1, c2, c3 = st.columns([6, 1, 1], vertical_alignment="bottom")
    by_index = {p.index: p for p in rec.passes}
    idx = c1.selectbox("Pass", indices, key=widget, format_func=lambda i: pass_label(by_index[i], number[i]),
                       help="Type to find a pass by name. ● marks the passes that changed the IR.")
    c2.button("◀", key=f"{widget}.prev", disabled=not before, on_click=_step, args=(widget, before[-1] if before else at),
              help="The previous pass that changed the IR", width="stretch")
    c3.button("▶", key=f"{widget}.next", disabled=not after, on_click=_step, args=(widget, after[0] if after else at),
              help="The next pass that changed the IR", width="stretch")
    as_diff = st.toggle("Show what the pass changed (diff)", value=True, key="w.passdiff")
    snap = by_index[idx]
    if not snap.changed or not snap.ir:
        return Pane("passes", PANE_TITLES["passes"], f"{snap.name} · {snap.scope}", "passes", "",
                    f"{snap.name} left the IR unchanged.")
    if as_diff:
        text = "\n".join(difflib.unified_diff(_previous_ir(rec, snap).splitlines(), snap.ir.splitlines(),
                                              "before", snap.name, lineterm="", n=3))
        language = "diff"
    else:
        text, language = snap.ir, language_of(snap.dialect)
    rows = _rows(f"{key}:pass:{idx}:{as_diff}", language, "passes", text) if text else ""
    return Pane("passes", PANE_TITLES["passes"], f"{number[idx]}. {snap.name} · {snap.scope}", "passes", rows,
                "The pass left the text unchanged.")


def pane_of(rec: Inspection, p: str, key: str) -> Pane:
    """One stage pane of the workbench (the pass-by-pass pane draws its pass picker here)."""
    if p == "passes":
        return _pass_pane(rec, key)
    text = rec.stages.get(p, "")
    meta = f"{text.count(chr(10)) + 1:,} lines"
    if len(text) > MAX_PANE_BYTES:
        text = text[:text.rfind("\n", 0, MAX_PANE_BYTES)]
        meta += f", the first {text.count(chr(10)) + 1:,} shown (Downloads has all)"
    return Pane(p, PANE_TITLES.get(p, p), meta, p, _rows(f"{key}:{p}", language_of(p), p, text))


def maps_of(key: str, rec: Inspection) -> dict[str, dict[int, list[int]]]:
    """The line maps of a record (cached per record key)."""
    return _maps(key, rec)
