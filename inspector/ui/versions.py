"""Triton releases in the app: the version picker beside the target, adding and removing side
environments with their progress, and the Diff tab's comparison of two releases.

`version_picker()` (sidebar, under the target) lists the installed Triton first and every ready
side environment (`inspector.versions`); "Manage Triton releases" adds one in the background
(its progress is read from the installer's state file on every rerun, and redrawn every second
while it installs) or removes one. `release_diff(rec)` (Diff tab) compiles the same view with a
second release and shows the comparison: the summary line, layouts, and the whole diff
(`diff_view.diff_view`). The settings' `triton` and `vs_triton` are in the URL.
"""

from __future__ import annotations

import dataclasses

import streamlit as st

from inspector import versions
from inspector.record import Inspection
from inspector.ui import state

DEFAULT = ""  # the installed release


def _label(base: str):
    return lambda v: f"{base} (installed)" if v in (DEFAULT, base) else v


def version_picker() -> None:
    """The Triton selectbox, and the expander that adds and removes releases."""
    s = state.settings()
    ss = st.session_state
    base = versions.base_version()
    ready = [v for v in versions.available_versions() if v != base]
    options = [DEFAULT, *ready]
    if s.triton and s.triton not in options and s.triton != base:
        options.append(s.triton)  # a URL's release not added here: its compile error says how to add it
    ss["w.triton"] = s.triton if s.triton != base else DEFAULT
    st.selectbox(
        "Triton",
        options,
        key="w.triton",
        format_func=_label(base),
        on_change=state.set_setting,
        args=("w.triton", "triton"),
        help="The Triton release to compile with. Others run from side environments of their own "
        "(Manage Triton releases, or `python -m inspector versions add 3.6.0`).",
    )
    with st.expander("Manage Triton releases"):
        _manage(base)


def _manage(base: str) -> None:
    ss = st.session_state
    c1, c2 = st.columns([3, 2])
    c1.text_input("Release", key="w.triton.add", placeholder="3.6.0", label_visibility="collapsed")
    if c2.button("Add", key="w.triton.add.go", width="stretch"):
        wanted = str(ss.get("w.triton.add") or "").strip()
        try:
            versions.add(wanted)
            ss.pop("triton_add_error", None)
        except versions.VersionError as e:
            ss["triton_add_error"] = str(e)
    if ss.get("triton_add_error"):
        st.error(ss["triton_add_error"])
    st.caption(f"{base}: installed beside the app (the default)")
    _environments()


def _environments() -> None:
    """Each side environment: its size once ready, or why it failed, and Remove; installs in
    progress redraw themselves every second (`_installing`)."""
    envs = versions.list_environments()
    for env in envs:
        if env.state == "installing":
            continue
        c1, c2 = st.columns([3, 2])
        if env.ready:
            c1.caption(f"{env.version}: ready, {(env.bytes or 0) / 2**20:.0f} MiB")
        else:
            c1.caption(f"{env.version}: failed: {env.error}")
        if c2.button("Remove", key=f"w.triton.rm.{env.version}", width="stretch"):
            versions.remove(env.version)
            st.rerun()
    if any(env.state == "installing" for env in envs):
        _installing()
    elif not envs:
        st.caption(
            "No other release yet: add one, e.g. 3.6.0 (a venv sharing this torch; a few hundred MiB)."
        )


@st.fragment(run_every=1.0)
def _installing() -> None:
    """Progress of the installs under way, read from their state files; when none is left, the
    page reruns so that the picker lists the new release."""
    running = [env for env in versions.list_environments() if env.state == "installing"]
    for env in running:
        st.progress(
            min(env.step / env.steps, 1.0),
            text=f"Adding Triton {env.version}: step {env.step + 1} of "
            f"{env.steps}, {env.phase}" + (f" ({env.detail[:60]})" if env.detail else ""),
        )
    if not running:
        st.rerun(scope="app")


def release_diff(rec: Inspection) -> None:
    """Compare the current compile with the same view compiled by another Triton release."""
    from inspector.ui.compiling import compile_with_status
    from inspector.ui.diff_view import diff_view
    from inspector.versions.compare import compare

    s = state.settings()
    ss = st.session_state
    base = versions.base_version()
    mine = rec.triton_version or base
    others = [v for v in versions.available_versions() if v != mine]
    st.markdown("**Compare Triton releases**")
    if not others:
        st.caption(
            "Add a second Triton release (sidebar, Manage Triton releases) to compare this kernel across "
            "releases."
        )
        return
    options = [""] + others
    ss["w.vs_triton"] = s.vs_triton if s.vs_triton in others else ""
    vs = st.selectbox(
        f"Compare Triton {mine} with",
        options,
        key="w.vs_triton",
        format_func=lambda v: "choose a release" if not v else _label(base)(v),
        on_change=state.set_setting,
        args=("w.vs_triton", "vs_triton", None, False),
    )
    if not vs:
        return
    kf = state.current_kernel()
    file, extra = state.compile_input(kf)
    other = compile_with_status(dataclasses.replace(s.request(file, **extra), triton=vs),
                                f"{kf.file_name} with Triton {vs}")
    if not other.ok:
        st.error(f"Triton {vs}: {other.error.message if other.error else 'failed'}")
        return
    cmp = compare(rec, other)
    st.code(cmp.summary, language=None, wrap_lines=True)
    st.dataframe(
        [
            {
                "": c.name,
                f"Triton {mine}": _text(c.a),
                f"Triton {vs}": _text(c.b),
                "changed": "●" if c.changed else "",
            }
            for c in cmp.layouts
        ],
        hide_index=True,
        width="stretch",
        key="w.vs_triton.layouts",
    )
    diff_view(rec, other, f"Triton {mine}", f"Triton {vs}")


def _text(v) -> str:
    return " + ".join(map(str, v)) if isinstance(v, list) else str(v)
