"""Will it run everywhere: the pre-flight matrix of the shown kernel (`inspector.preflight.matrix`), every
GPU in the catalogue and every autotune config, with the change that makes a cell fit. It costs a
compile per architecture and config, so it runs when asked, on a server thread (`jobs`), and the
view shows its progress until the table is ready.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from inspector.analysis.words import number_words, percent_words
from inspector.occupancy.words import limiter_words
from inspector.record import Inspection
from inspector.ui import jobs, state

ASKED = "fits.asked"  # session: the cache keys of the records whose matrix was asked for


def _key(rec: Inspection) -> str:
    return f"fits:{rec.cache_key}"


def _start(rec: Inspection) -> None:
    from inspector.preflight.matrix import fits

    request = {k: v for k, v in state.settings().request().changes().items() if k != "passes"}

    def work(j: jobs.Job) -> Any:
        return fits(rec.file, rec.kernel, source=rec.source,
                    on_progress=lambda done, total: setattr(j, "partial", (done, total)), **request)

    jobs.job(_key(rec), work)
    st.session_state.setdefault(ASKED, set()).add(rec.cache_key)


@st.fragment(run_every=0.5)
def _progress(key: str) -> None:
    job = jobs.find(key)
    if job is None or job.done:
        st.rerun(scope="app")
        return
    done, total = job.partial or (0, 1)
    st.progress(done / total, text=f"Compiled {done} of {total} (every architecture × config)…")


def _rows(report: Any) -> list[dict[str, Any]]:
    return [{
        "GPU": c.gpu, "target": c.target, "config": "–" if c.config is None else c.config,
        "launches": "yes" if c.launchable else "NO", "registers": number_words(c.registers),
        "spills (B)": number_words(c.spill_bytes), "shared (KiB)": number_words(round(c.shared_bytes / 1024, 1)),
        "occupancy": percent_words(c.occupancy),
        "limited by": limiter_words(c.occupancy, c.limiters),
        "fits with": c.fix or ("–" if c.launchable and not c.spill_bytes else "nothing the tool tried"),
    } for c in report.cells]


def fits_panel(rec: Inspection) -> None:
    """The view: a button until asked, then progress, then the matrix and each cell's fix."""
    st.markdown("##### Will it run everywhere?")
    st.caption("The kernel compiled for every GPU in the catalogue (NVIDIA and AMD) and each autotune config: "
               "does it launch, does it spill, what limits its occupancy; for a cell that does not fit, the "
               "change the tool compiled for that target and found to fit.")
    key = _key(rec)
    job = jobs.find(key)
    if job is None and rec.cache_key not in st.session_state.get(ASKED, set()):
        st.button("Check every GPU", key="w.fits.go", on_click=_start, args=(rec,), icon=":material/grid_view:")
        return
    if job is None:
        _start(rec)
        job = jobs.find(key)
    if job is not None and not job.done:
        _progress(key)
        return
    if job is None or job.failed is not None:
        st.error(f"The matrix could not be made: {job.failed if job else 'the job was dropped'}")
        return
    report = job.future.result()  # type: ignore[union-attr]
    bad = [c for c in report.cells if not c.launchable]
    st.markdown(f"**{len(report.cells) - len(bad)} of {len(report.cells)}** cells launch" +
                (f"; {len(bad)} do not." if bad else "."))
    rows = _rows(report)
    # every cell in view: the matrix is read as a whole (35 px a row, the header one of them)
    st.dataframe(rows, hide_index=True, width="stretch", height=35 * (len(rows) + 1) + 3, key="w.fits.table")
    for c in report.cells:
        if c.fix_diff:
            with st.expander(f"{c.gpu}" + (f", config {c.config}" if c.config is not None else "") + f": {c.fix}"):
                st.code(c.fix_diff, language="diff")
