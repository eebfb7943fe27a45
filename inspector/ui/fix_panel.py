"""Try fixes, under a finding in the Insight tab: the candidates `inspector.fixes` compiled,
checked and ranked for the shown record, each with what it changes, its promises and whether the
example kept them, whether its outputs match, and its diff. "Apply" saves the edited text as a new
version of the file (History lists it; the Diff tab compares it with any other) and compiles it.

The candidates are made on a server thread (`inspector.ui.jobs`, keyed by the record's cache key,
so the same text asked for twice is made once), never in the page's script: the section polls
(a fragment rerunning every half second) and shows each compile as it lands, the outputs checks
when they are done, then the page redraws once with the ranked list.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from inspector.fixes.evaluate import judged
from inspector.record import Inspection
from inspector.ui import jobs, state

OPEN = "fix.open"  # session: (record cache key, finding index) whose candidates are shown
MARKS = {True: ":green[yes]", False: ":red[no]", None: "not checked"}
FIGURES = {"width_bits": ("access width", lambda v: f"{v}-bit"),
           "sector_efficiency": ("sector efficiency", lambda v: f"{v * 100:.0f} %"),
           "registers": ("registers", str), "spill_bytes": ("spills", lambda v: f"{v} B"),
           "shared_bytes": ("shared memory", lambda v: f"{v / 1024:.1f} KiB"),
           "occupancy": ("occupancy", lambda v: f"{v * 100:.1f} %"),
           "conversions": ("layout conversions through shared memory", str)}


def _open(key: str, index: int) -> None:
    st.session_state[OPEN] = (key, index)


def open_fixes(key: str, index: int) -> None:
    """Show finding `index`'s candidates of the record cached under `key` (its job starts when the
    Insight view draws them): the gutter's way in, beside the Insight view's button."""
    _open(key, index)
    state.settings().view = "insight"
    st.toast("Trying fixes for this finding: they land under it in the Insight view below",
             icon=":material/build:")


def take_fix_request() -> None:
    """Open the fixes a click on a gutter mark asked for (the workbench leaves the request), once."""
    request = st.session_state.pop(state.FIX_REQUEST, None)
    if request:
        open_fixes(*request)


def _apply(kernel_id: str, source: str, title: str) -> None:
    """on_click: the candidate's text becomes a new version of the open file, then compiles."""
    from inspector.ui.editor import save_pending

    ss = st.session_state
    save_pending()
    kf = state.current_kernel()
    if kf.id != kernel_id:
        return
    ws = state.workspace_of_session()
    ws.keep_current(kf)  # the text before the fix is a version of its own (History diffs against it)
    ws.save_source(kf, source, base=ss.get(state.EDITOR_BASE))
    state.load_editor()
    state.request_compile()
    ss[state.FIX_APPLIED] = title
    ss.pop(OPEN, None)


def _changes(t: Any) -> str:
    parts = []
    for name, (a, b) in t.changes.items():
        label, fmt = FIGURES[name]
        parts.append(f"{label} {'–' if a is None else fmt(a)} → {'–' if b is None else fmt(b)}")
    head = "**the finding is gone**" if t.finding_gone else "the finding stays"
    return head + ("; " + "; ".join(parts) if parts else "; nothing else changes")


def _job(rec: Inspection) -> jobs.Job:
    """The job making this record's fixes (started when there is none)."""
    from inspector.fixes import fix

    s = state.settings()
    request = {**{k: v for k, v in s.request().changes().items() if k != "passes"}, "autotune_index": s.autotune}

    def work(j: jobs.Job) -> Any:
        return fix(rec.file, kernel=rec.kernel, target=rec.target, record=rec,
                   on_start=lambda report: setattr(j, "partial", report), **request)

    return jobs.job(f"fix:{rec.cache_key}", work)


@st.fragment(run_every=0.5)
def _progress(key: str, index: int) -> None:
    """While the job runs: each candidate of finding `index` as its compile lands; when the job is
    done, the page redraws with the ranked list."""
    job = jobs.find(f"fix:{key}")
    if job is None or job.done:
        st.rerun(scope="app")
        return
    report = job.partial
    if report is None:
        st.caption("Listing the candidates…")
        return
    cands = report.findings[index].candidates if index < len(report.findings) else []
    landed = sum(1 for t in cands if t.after is not None)
    st.caption(f"{landed} of {len(cands)} candidates compiled" +
               ("; running the example under the interpreter to check their outputs…" if landed == len(cands) else "…"))
    for t in cands:
        if t.after is not None:
            st.markdown(f"- {t.title}: " + (_changes(t) if judged(t.after) else "does not compile"))


def try_fixes_button(rec: Inspection, index: int) -> None:
    """The "Try fixes" button of finding `index`; its candidates below it once pressed."""
    ss = st.session_state
    if ss.get(OPEN) != (rec.cache_key, index):
        st.button("Try fixes", key=f"w.fix.try.{index}", on_click=_open, args=(rec.cache_key, index),
                  icon=":material/build:", help="edits of your file for this finding, compiled and checked "
                  "(outputs compared under Triton's interpreter), best first")
        return
    job = _job(rec)
    if not job.done:
        _progress(rec.cache_key, index)
        return
    if job.failed is not None:
        st.error(f"The fixes could not be made: {job.failed}")
        return
    report = job.future.result()  # type: ignore[union-attr]
    st.caption(f"{sum(len(ff.candidates) for ff in report.findings)} candidates compiled and checked in "
               f"{report.seconds:.1f} s")
    if index >= len(report.findings):
        return
    ff = report.findings[index]
    if not ff.candidates:
        st.caption(f"No candidate: {ff.note}.")
        if ff.tried:
            st.markdown("Tried:\n" + "\n".join(f"- {x}" for x in ff.tried))
        return
    kf = state.current_kernel()
    for n, t in enumerate(ff.candidates):
        with st.container(border=True, key=f"w.fix.cand.{index}.{n}"):
            if not judged(t.after):
                why = t.after.error.short() if t.after is not None and t.after.error else "not compiled"
                st.markdown(f"**{t.title}**")
                st.caption(f"does not compile: {why}")
                continue
            st.markdown(f"**{t.title}**")
            st.markdown(_changes(t))
            for a in t.candidate.assumptions:
                st.caption(f"assumes: {a}")
            lines = []
            if t.candidate.kind == "hint" or t.candidate.promises:
                lines.append(f"promises kept by the example: {MARKS[t.assumptions_hold]}"
                             + (f" ({t.assumptions_note})" if t.assumptions_note else ""))
            lines.append(f"outputs equal to the original's: {MARKS[t.checked]}"
                         + (f" ({t.checked_note})" if t.checked_note else ""))
            st.markdown("  \n".join(lines))
            st.code(t.diff, language="diff")
            st.button("Apply", key=f"w.fix.apply.{index}.{n}", on_click=_apply, args=(kf.id, t.candidate.source, t.title),
                      icon=":material/check:", type="primary" if n == 0 else "secondary",
                      help="saves this text as a new version of your file (History keeps the old one) and compiles it")


def applied_notice() -> None:
    """After Apply: which candidate the shown text is."""
    title = st.session_state.get(state.FIX_APPLIED)
    if title:
        st.success(f"Applied: {title}. The previous text is in History.")
