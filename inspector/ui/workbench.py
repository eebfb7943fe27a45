"""The workbench: the kernel editor beside one to three stage panes, one custom component.

The component (`inspector/ui/frontend/`, CodeMirror 6 bundled offline with esbuild; the built
`dist/` is part of the package, so installing needs no npm) holds the editor and the panes and does
all linking and hovering in the browser. This module only feeds it (the text to seed, the panes'
highlighted rows, the line maps, the markers) and acts on what it sends back:

- "change" (a pause in typing) and "blur": save the text to the workspace (a new version);
- "submit" (Ctrl+Enter or the Compile button): save, then compile;
- "panes": the stage panes chosen in the pane headers;
- "fix": a click on a gutter mark whose advisor finding has fixes to try: the Insight view opens
  with that finding's "Try fixes" started.

A mounted editor keeps its own text: the seed is applied only when the editor generation
(`state.EDITOR_GEN`) changes (another kernel, a restore, an upload), so a rerun carrying an older
saved text never overwrites a keystroke. Each event is handled once (its id is remembered).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import streamlit as st
import streamlit.components.v1 as components

from inspector.record import Inspection
from inspector.ui import state
from inspector.ui.markers import Markers, error_markers, merge, profile_markers, record_markers
from inspector.ui.settings import MAX_PANES
from inspector.ui.stages_panel import PANE_TITLES, available_panes, effective_panes, pane_of

DIST = Path(__file__).resolve().parent / "frontend" / "dist"
_component = components.declare_component("workbench", path=str(DIST))
LAST_EVENT = "workbench_last_event"
HEIGHT = 640


def key() -> str:
    """The mounted workbench's component key (one per kernel: another kernel mounts a new one)."""
    return f"workbench-{state.settings().kernel}"


def handle(event: dict | None) -> str | None:
    """Act on an event the component sent, once; returns its type (None when already handled;
    "conflict" for a save over another tab's text)."""
    ss = st.session_state
    if not event or not event.get("id") or event["id"] == ss.get(LAST_EVENT):
        return None
    ss[LAST_EVENT] = event["id"]
    kind = event.get("type")
    if kind in ("change", "submit", "blur") and isinstance(event.get("text"), str):
        text = event["text"]
        ss.pop(state.RESTORED, None)  # a "restored" message is old news once the text changes
        ss.pop(state.FIX_APPLIED, None)  # so is "applied" (inspector.ui.fix_panel)
        result = state.workspace_of_session().save_source(state.current_kernel(), text,
                                                         base=ss.get(state.EDITOR_BASE))
        state.saved(text, result)
        if kind == "submit":
            state.request_compile()
        elif result.conflict:
            kind = "conflict"  # another tab wrote in between: the page around says so
    elif kind == "panes":
        panes = [p for p in event.get("panes") or [] if isinstance(p, str)]
        if panes:
            state.settings().panes = panes[:MAX_PANES]
    elif kind == "fix" and isinstance(event.get("finding"), int):
        shown = state.shown_record()
        if shown is not None and shown.cache_key:  # the page opens it (fix_panel.take_fix_request)
            ss[state.FIX_REQUEST] = (shown.cache_key, event["finding"])
    return kind


def save_pending() -> None:
    """Save what the mounted workbench sent last, if not seen yet: called by the callbacks that
    replace the editor (another kernel, an upload), which run before the script."""
    handle(st.session_state.get(key()))


def view_key(rec: Inspection) -> str:
    """What the drawn panes, maps and markers of `rec` are cached under: its compile, and which
    stages it has (a deferred SASS made later changes them)."""
    return f"{rec.cache_key or rec.kernel + ':' + rec.target}:{','.join(sorted(rec.stages))}"


@st.cache_data(max_entries=16, show_spinner=False)
def _record_markers(cache_key: str, _rec: Inspection) -> Markers:
    return record_markers(_rec)


def waiting_note(last: Inspection | None) -> str:
    """What an empty pane says before the kernel's first good compile: compiling, waiting for
    values the form below asks for, or failed (the error box below says why)."""
    if last is None or last.ok or st.session_state.get(state.WANT_COMPILE):
        return "Compiling… the stages appear here."
    if last.error and (last.error.details or {}).get("missing"):
        return "Waiting for values: the form below the editor asks for them."
    return "No stages yet: the compile failed (the error is below the editor)."


def _stage_panes(rec: Inspection | None, last: Inspection | None) -> tuple[list[dict], dict, list[dict], str]:
    """(panes, maps, available, signature) for the shown record; empty panes before the first one."""
    wanted = state.settings().panes
    if rec is None:
        note = waiting_note(last)
        panes = [{"key": p, "title": PANE_TITLES.get(p, p), "meta": "", "anchor": p, "rows": "",
                  "empty_note": note} for p in wanted]
        return panes, {}, [{"key": p, "title": PANE_TITLES.get(p, p)} for p in wanted], \
            "none:" + note + ",".join(wanted)
    available = [p for p in available_panes(rec) if p != "source"]
    chosen = effective_panes(wanted, available)
    if rec.generated is not None and "triton" not in chosen:  # a Helion kernel: its Triton beside it
        chosen = ["triton", *chosen][:MAX_PANES]
    record_key = view_key(rec)
    built = [pane_of(rec, p, record_key) for p in chosen]
    from inspector.ui.stages_panel import maps_of

    maps = maps_of(record_key, rec)
    panes = [{"key": b.key, "title": b.title, "meta": b.meta, "anchor": b.anchor, "rows": b.rows,
              "empty_note": b.empty_note} for b in built]
    sig = hashlib.sha256("\0".join([record_key, *chosen, *(b.meta for b in built),
                                    *(str(len(b.rows)) for b in built)]).encode()).hexdigest()[:16]
    return panes, maps, [{"key": p, "title": PANE_TITLES.get(p, p)} for p in available], sig


def _profile_markers(rec: Inspection | None) -> Markers:
    """The heat strip of the profile opened for this kernel in the Profile view, if any."""
    from inspector.ui.profile_panel import LOADED

    saved = (st.session_state.get(LOADED) or {}).get(rec.file) if rec is not None else None
    if not saved:
        return {}
    from inspector.profile.measured import Profile

    prof = Profile.from_dict(saved)
    return profile_markers(prof, rec) if prof.kernel == rec.kernel else {}


def workbench(rec: Inspection | None, last: Inspection | None) -> str | None:
    """Draw the editor and the panes of `rec` (the shown record; None before the first compile),
    with the markers of `rec` and the error line of `last` (the latest record). Returns the type
    of the event handled on this run, if any."""
    ss = st.session_state
    kf = state.current_kernel()
    panes, maps, available, sig = _stage_panes(rec, last)
    markers = merge(_record_markers(view_key(rec), rec) if rec is not None else {},
                    error_markers(last), _profile_markers(rec))
    share = {k: v for k, v in state.settings().to_query().items() if k != "kernel"}
    initial = ss.pop(state.FOCUS, None)
    text = ss[state.EDITOR_SEED]
    event = _component(
        gen=f"{kf.id}:{ss[state.EDITOR_GEN]}", seed=text, file_name=kf.file_name,
        source_meta=f"{text.count(chr(10)) + 1:,} lines", panes=panes, maps=maps, available=available,
        panes_sig=sig + (":" + str(initial) if initial else ""), markers=markers, height=HEIGHT,
        max_panes=MAX_PANES, storage_key=f"tki:{state.settings().kernel}:{rec.target if rec else ''}",
        initial=initial, share_query=share, key=key(), default=None)
    return handle(event)
