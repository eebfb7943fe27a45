"""Triton Kernel Inspector's page: `streamlit run app.py` serves it (app.py makes it an `st.App`).

Page config, routing and layout only: the resources line, then the workbench (the editor beside
the stage panes, `inspector/ui/workbench.py`), then the other views in tabs below. Each panel is a
function in `inspector/ui/` that takes plain records; compiling goes through
`inspector.compile.api.inspect_kernel`, which runs the user's file in a sandboxed worker process,
never in this server. The page is drawn before a compile starts, so the editor is usable while the
worker warms up; the compile's result redraws it.
"""

from __future__ import annotations

import streamlit as st

from inspector.compile.api import complete
from inspector.record import InspectRequest
from inspector.ui import overrides, state, stopped, target_picker, views
from inspector.ui.capture_panel import capture_panel
from inspector.ui.compiling import compile_with_status, start, summary, take_cancelled
from inspector.ui.downloads import downloads
from inspector.ui.editor import editor_notes
from inspector.ui.error_view import missing_form, show_error
from inspector.ui.resources_panel import resources_line
from inspector.ui.sandbox_banner import sandbox_banner, sandbox_note
from inspector.ui.sidebar import call, pick
from inspector.ui.stages_panel import deferred_wanted
from inspector.ui.workbench import workbench

# The page's own spacing: Streamlit's default top padding would push the panes down by 6 rem.
PAGE_CSS = """<style>
.block-container { padding-top: 2.6rem; padding-bottom: 2rem; }
[data-testid=stMainBlockContainer] { padding-left: 1.5rem; padding-right: 1.5rem; }
</style>"""


@st.fragment
def workbench_fragment() -> None:
    """The workbench reruns alone on a save (a pause in typing); a compile, a new choice of
    panes or a save over another tab's text (the page says so) reruns the page."""
    kind = workbench(state.shown_record(), state.record())
    if kind in ("submit", "panes", "conflict", "fix"):
        st.rerun(scope="app")


def wanted_compile() -> tuple[InspectRequest, str, str]:
    """The compile this run wants: (request, label, its digest for the stopped-compile notes)."""
    s = state.settings()
    kf = state.current_kernel()
    file, extra = state.compile_input(kf)
    defer = [] if "sass" in s.panes else ["sass"]  # made when a pane first shows it (below)
    request = s.request(file, **extra, defer=defer)
    return request, f"{kf.file_name} for {target_picker.label(s.target)}", stopped.request_digest(request)


st.set_page_config(page_title="Triton Kernel Inspector", layout="wide")
st.html(PAGE_CSS)
target_picker.start_probe()
state.init(target_picker.default_target)
views.sync_from_url()
ss = st.session_state
if ss[state.WANT_COMPILE] == state.ON_OPENING:
    # The opening compile starts now, in the worker, while this run draws the page; the end of
    # the run joins it (an identical request in flight is joined, not started again).
    _request, _, _digest = wanted_compile()
    if not stopped.stopped(state.workspace_of_session(), _digest):
        start(_request)
sandbox_banner()

with st.sidebar:
    st.subheader("Triton Kernel Inspector")
    pick()
    capture_panel()  # a captured run's kernels (inspector/ui/capture_panel.py)

notice = ss.get(state.SHARED_NOTICE)  # until another kernel is opened
if notice:
    st.info(notice, icon=":material/link:")
cancelled = take_cancelled()
if cancelled is not None:
    state.remember(cancelled)
    ss["last_summary"] = cancelled.error.message if cancelled.error else summary(cancelled, "the kernel")
    if ss.get(state.COMPILING):  # a reload must not start it again by itself
        stopped.note(state.workspace_of_session(), ss.pop(state.COMPILING), cancelled)
rec = state.record()
shown = state.shown_record()
status_slot = st.container()
if ss.get(state.HELD):
    status_slot.warning(ss[state.HELD], icon=":material/pause_circle:")
elif ss.get("last_summary") and rec is not None:
    status_slot.caption(ss["last_summary"])
if shown is not None and deferred_wanted(shown, state.settings().panes):
    # SASS is left out of the page's compiles (nvdisasm costs more CPU than most compiles:
    # docs/architecture.md#why-it-is-fast) and made here when a pane shows it: in the sandbox,
    # then cached with the record.
    with st.spinner("Disassembling SASS…"):
        complete(shown, deferred_wanted(shown, state.settings().panes))
if shown is not None:
    if shown is not rec:
        st.caption(f"Showing the last successful compile of `{shown.kernel}` for `{shown.target}`.")
    resources_line(shown)
    if shown.refusal_note():
        st.warning(shown.refusal_note(), icon=":material/history:")
    note = shown.stopped_note(made_up=False) if shown is rec else None
    if note:
        st.warning(note[0].upper() + note[1:], icon=":material/front_hand:")
overrides.chips(rec)  # the call's overrides, each with what the file passes
workbench_fragment()
if rec is not None:
    show_error(rec)
    if rec.ok and rec.made_up:  # nothing launched it: the values made up, to change and compile with
        missing_form(rec.made_up, None, made_up=True)
editor_notes()

with st.sidebar:
    call(rec)
    sandbox_note()
    state.remember_workspace()  # the browser's cookie, so the plain address leads back here

if ss.get(state.FIX_REQUEST):  # a gutter mark's click: its finding's fixes, in the Insight view below
    from inspector.ui.fix_panel import take_fix_request

    take_fix_request()
if shown is not None:
    views.views(shown)  # every view in a browser-side tab: a switch reruns nothing

kf = state.current_kernel()
with st.expander("Downloads"):
    downloads(shown, state.workspace_of_session(), kf)
state.sync_url()

if ss[state.WANT_COMPILE]:
    # Last, so the page (and the editor) is on screen while the compile runs.
    opening = ss[state.WANT_COMPILE] == state.ON_OPENING
    ss[state.WANT_COMPILE] = False
    ss.pop(state.HELD, None)
    request, label, digest = wanted_compile()
    ws = state.workspace_of_session()
    held = stopped.stopped(ws, digest) if opening else None
    if held:  # this very compile was cancelled or ran out of time: wait for the user to ask again
        how = "was cancelled" if held["kind"] == "cancelled" else "ran out of time"
        ss[state.HELD] = (f"Not compiled on opening: the last compile of {label} with this text {how}. "
                          "Press Compile (or Ctrl+Enter) to try again.")
        st.rerun()
    ss[state.COMPILING] = digest
    with status_slot:
        done = compile_with_status(request, label)
    ss.pop(state.COMPILING, None)
    stopped.note(ws, digest, done)
    if overrides.after_compile(done):  # given for another call than the file's: the file's call next
        st.rerun()
    state.remember(done)
    target_picker.first_compile_done()
    ss["last_summary"] = summary(done, label)
    st.rerun()
