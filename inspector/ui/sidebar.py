"""The sidebar: pick, start, upload or rename a kernel file, the target, compile options, and the call.

`pick` (before the compile) draws what decides the compile; `call` (after it) draws what the
record tells: the file's kernels, its autotune configs and the parameters of the example call,
each of which can be overridden by name.
"""

from __future__ import annotations

import streamlit as st

from inspector.record import Inspection
from inspector.ui import overrides, state, target_picker, workspace
from inspector.ui.versions import version_picker
from inspector.ui.editor import save_pending
from inspector.ui.settings import STAGES_CHOICES, WARPS_CHOICES

AUTO = "auto"  # the selectbox value meaning "as the example call / autotuner decides" (None shows as empty)


def _auto(label: str):
    return lambda v: label if v == AUTO else str(v)


def _or_none(value):
    return None if value == AUTO else value


def _on_kernel() -> None:
    save_pending()
    state.switch_kernel(st.session_state["w.kernel"])


def _upload_key() -> str:
    return f"w.upload.{st.session_state.get(state.UPLOAD_GEN, 0)}"


def _on_upload() -> None:
    up = st.session_state.get(_upload_key())
    if up is None:
        return
    save_pending()
    try:
        kf = state.workspace_of_session().add_upload(up.name, up.getvalue())
    except ValueError as e:
        st.session_state["upload_error"] = str(e)
        return
    st.session_state.pop("upload_error", None)
    state.switch_kernel(kf.id)  # always a file of its own: a name in use gets a distinct one


def _on_open() -> None:
    """Open a kernel by path or module name (see `workspace.resolve_open` for what may be opened)."""
    ss = st.session_state
    spec = str(ss.get("w.open", "")).strip()
    if not spec:
        return
    save_pending()
    try:
        kf = state.workspace_of_session().open_file(workspace.resolve_open(spec))
    except (ValueError, OSError) as e:
        ss["open_error"] = str(e)
        return
    ss.pop("open_error", None)
    ss["w.open"] = ""
    state.switch_kernel(kf.id)


def _on_new() -> None:
    save_pending()
    state.switch_kernel(state.workspace_of_session().new_kernel().id)


def _on_rename() -> None:
    ss = st.session_state
    kf = state.current_kernel()
    wanted = str(ss.get(f"w.rename.{kf.id}", "")).strip()
    if not wanted:
        return
    save_pending()
    try:
        new = state.workspace_of_session().rename(kf, wanted)
    except (ValueError, OSError) as e:
        ss["rename_error"] = str(e)
        return
    ss.pop("rename_error", None)
    state.settings().kernel = new.id
    state.load_editor()


def _on_revert() -> None:
    save_pending()
    state.workspace_of_session().revert(state.current_kernel(), base=st.session_state.get(state.EDITOR_BASE))
    state.load_editor()
    state.request_compile()


def pick() -> None:
    """Kernel file, upload, target, options, the Compile button."""
    s = state.settings()
    ss = st.session_state
    ws = state.workspace_of_session()
    current = state.current_kernel()
    kernels = ws.kernels()
    if current.id not in {k.id for k in kernels}:
        kernels.append(current)  # renamed by another tab: still open here
    ids = [k.id for k in kernels]
    titles = {k.id: k.title for k in kernels}
    ss["w.kernel"] = s.kernel
    st.selectbox("Kernel", ids, key="w.kernel", format_func=lambda i: titles.get(i, i), on_change=_on_kernel)
    st.button("New kernel", key="w.new", on_click=_on_new, icon=":material/add:", width="stretch",
              help="A file of its own in your workspace (untitled-1.py, ...) with a minimal vector add to start from.")
    if not current.is_bundled:
        key = f"w.rename.{current.id}"
        ss[key] = current.file_name
        st.text_input("File name", key=key, on_change=_on_rename, help="Rename this file of your workspace.")
        if ss.get("rename_error"):
            st.error(ss.pop("rename_error"))
    st.file_uploader("Open a kernel file (.py)", type=["py"], key=_upload_key(), on_change=_on_upload,
                     help="Stored in your workspace (a name already there gets a distinct one); it is compiled "
                          "in a sandboxed worker process, never imported by the server.")
    if ss.get("upload_error"):
        st.error(ss["upload_error"])
    st.text_input("Open by path or module", key="w.open", on_change=_on_open,
                  placeholder="liger_kernel.ops.rms_norm",
                  help="A kernel file of an installed package (or of a folder this server allows) by module name or "
                       "path: it is copied into your workspace to edit, and compiled as the package's own file, so "
                       "its imports work.")
    if ss.get("open_error"):
        st.error(ss["open_error"])

    opts = target_picker.options()
    if s.target not in opts:
        opts = [s.target] + opts  # a URL's target that this machine lacks: its error says why
    ss["w.target"] = s.target
    st.selectbox("Target", opts, key="w.target", format_func=target_picker.label, on_change=state.set_setting,
                 args=("w.target", "target"),
                 help="native compiles for this machine's GPU; any other target compiles GPU-free.")
    version_picker()  # the Triton release (inspector/ui/versions.py)
    c1, c2 = st.columns(2)
    ss["w.warps"] = AUTO if s.num_warps is None else s.num_warps
    c1.selectbox("num_warps", [AUTO, *WARPS_CHOICES], key="w.warps", format_func=_auto("auto"),
                 on_change=state.set_setting, args=("w.warps", "num_warps", _or_none))
    ss["w.stages"] = AUTO if s.num_stages is None else s.num_stages
    c2.selectbox("num_stages", [AUTO, *STAGES_CHOICES], key="w.stages", format_func=_auto("auto"),
                 on_change=state.set_setting, args=("w.stages", "num_stages", _or_none))
    ss["w.passes"] = s.passes
    st.toggle("Record every pass", key="w.passes", on_change=state.set_setting, args=("w.passes", "passes"),
              help="The IR after each compiler pass, for the pass-by-pass pane (a slower compile).")
    st.button("Compile", key="w.compile", type="primary", on_click=state.request_compile, width="stretch",
              help="Ctrl+Enter in the editor does the same.")
    if ws.is_edited(current):
        st.button(f"Revert to bundled {current.file_name}", on_click=_on_revert, width="stretch",
                  help="The bundled text becomes the current one again; your edits stay in History.")


def call(rec: Inspection | None) -> None:
    """The kernel function, autotune config and argument overrides, from the last record."""
    s = state.settings()
    ss = st.session_state
    if rec is None or not rec.kernels_in_file:
        return
    with st.expander("Call", expanded=bool(s.consts or s.args or s.function or s.autotune is not None)):
        if len(rec.kernels_in_file) > 1:
            fns = ["", *rec.kernels_in_file]
            ss["w.fn"] = s.function if s.function in fns else ""
            st.selectbox("Kernel function", fns, key="w.fn", on_change=state.set_setting, args=("w.fn", "function"),
                         format_func=lambda f: f or f"auto ({rec.kernel})")
        if rec.autotune_configs:
            idx = [AUTO, *range(len(rec.autotune_configs))]
            ss["w.autotune"] = s.autotune if s.autotune in idx else AUTO
            st.selectbox("Autotune config", idx, key="w.autotune", on_change=state.set_setting,
                         args=("w.autotune", "autotune", _or_none),
                         format_func=lambda i: "auto (first that fits)" if i == AUTO else
                         f"{i}: " + ", ".join(f"{k}={v}" for k, v in rec.autotune_configs[i].items()))
        st.caption(f"From the file's {'example() call' if rec.call_origin == 'example' else 'signature'}; "
                   "type a value to override it (a dtype such as fp16 for a pointer).")
        for p in rec.parameters:
            kind = "consts" if p.kind == "constexpr" else "args"
            key = overrides.widget_key(kind, p.name)
            current = getattr(s, kind).get(p.name, "")
            spec = f" · {', '.join(p.specialization)}" if p.specialization else ""
            st.text_input(f"{p.name} ({p.type}){spec}", value=current, key=key, placeholder=str(p.value),
                          on_change=overrides.on_field, args=(key, kind, p.name))
