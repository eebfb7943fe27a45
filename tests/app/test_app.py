"""The app's flows through Streamlit's AppTest: pick, compile, switch target, errors, what-if, URL.

The app compiles for real (through the sandboxed worker); each test has its own workspace.
"""

from __future__ import annotations

import json
import re

import pytest
AppTest = pytest.importorskip("streamlit.testing.v1").AppTest  # the GPU machine has no streamlit

from paths import KERNELS, REPO
from app_support import autosave, open_app
from inspector.ui import workspace



def _walk(node):
    children = getattr(node, "children", None)
    for c in children.values() if isinstance(children, dict) else []:
        yield c
        yield from _walk(c)


def metrics(at: AppTest) -> dict[str, str]:
    """The figures of the page: the resources line ("Label **value** · ...") and any st.metric."""
    out: dict[str, str] = {}
    for md in at.markdown:
        if "Registers" in md.value and " · " in md.value:
            out.update({k.strip(): v for k, v in re.findall(r"([^·*]+?) \*\*(.*?)\*\*", md.value)})
    out.update({m.label: m.value for m in at.metric})
    return out


def workbench_args(at: AppTest) -> dict:
    """The arguments the workbench component was drawn with (editor seed, panes, maps, markers)."""
    found = [json.loads(e.proto.json_args) for e in _walk(at.main) if getattr(e, "type", "") == "component_instance"
             and "workbench" in e.proto.id]
    assert found, "no workbench on the page"
    return found[0]


def panes_doc(at: AppTest) -> dict:
    return workbench_args(at)


def pane_rows(args: dict, pane: str) -> dict[int, str]:
    """Line number -> plain text of every row of one stage pane ("source": the editor's text)."""
    if pane == "source":
        return {i + 1: line for i, line in enumerate(args["seed"].split("\n"))}
    html = next((p["rows"] for p in args["panes"] if p["key"] == pane), None)
    assert html is not None, f"no {pane} pane"
    rows = re.findall(rf'<div class="r(?: n)?" id="{pane}-L(\d+)">(.*?)</div>', html)
    return {int(n): re.sub(r"<[^>]+>", "", h).replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
            for n, h in rows}


def doc_maps(args: dict) -> dict[str, dict[str, list[int]]]:
    return args["maps"]


def pane_keys(args: dict) -> list[str]:
    return [p["key"] for p in args["panes"]]


def query(at: AppTest) -> dict[str, str]:
    """The URL's query parameters (AppTest keeps each value as a list)."""
    return {k: v[-1] if isinstance(v, list) else v for k, v in at.query_params.items()}


def record(at: AppTest):
    return at.session_state["record"]


def session_workspace(at: AppTest) -> workspace.Workspace:
    """The workspace of this AppTest session (its key is in the URL)."""
    return workspace.Workspace(query(at)["ws"])


def test_first_run_compiles_vector_add_with_linked_panes(home):
    at = open_app()
    q = query(at)
    assert workspace.valid_key(q.pop("ws")) and q == {"kernel": "add", "target": "sm_90"}
    m = metrics(at)
    assert int(m["Registers / thread"]) > 0 and m["Spills"] == "0 B" and m["Occupancy"].endswith("%")
    doc = panes_doc(at)
    source, ptx = pane_rows(doc, "source"), pane_rows(doc, "ptx")
    assert any("ld.global.v4.b32" in line for line in ptx.values())
    # The embedded map sends the source's x load to PTX lines that include a 128-bit load.
    load_line = next(n for n, text in source.items() if "x = tl.load(x_ptr" in text)
    mapped = doc_maps(doc)["ptx"][str(load_line)]
    assert any("ld.global.v4.b32" in ptx[n] for n in mapped)


def test_pick_kernel_then_switch_target_to_amd(home):
    at = open_app()
    at.sidebar.selectbox(key="w.kernel").select("softmax").run()
    assert not at.exception
    rec = record(at)
    assert rec.ok and rec.file.endswith("softmax.py") and rec.target == "sm_90"
    assert query(at)["kernel"] == "softmax"
    at.sidebar.selectbox(key="w.target").select("gfx942").run()
    rec = record(at)
    assert rec.ok and rec.target == "gfx942" and rec.backend == "hip"
    assert "VGPR" in metrics(at)["Registers"]
    doc = panes_doc(at)
    assert pane_rows(doc, "amdgcn")  # the PTX pane became the AMDGCN pane
    assert "ptx" not in pane_keys(doc)


def test_syntax_error_is_shown_and_the_edit_kept(home):
    at = open_app()
    ws = session_workspace(at)
    kf = ws.find("add")
    bundled = (KERNELS / "add.py").read_text()
    broken = bundled.replace("mask = offs < n", "mask = offs < n)")
    path = autosave(at, "add", broken).path
    assert path == ws.edit_path(kf) and path.is_relative_to(home / "workspaces" / ws.key)
    at.sidebar.button(key="w.compile").click().run()  # Compile
    assert not at.exception
    errors = [e.value for e in at.error]
    line = bundled.split("\n").index("    mask = offs < n") + 1
    assert errors and "Syntax error" in errors[0] and f"line {line}" in errors[0]
    assert path.read_text() == broken  # a failed compile never overwrites the user's text
    assert (KERNELS / "add.py").read_text() == bundled  # and never the bundled file
    assert any("last successful compile" in c.value for c in at.caption)
    # Reverting removes the copy; the bundled kernel compiles again; the broken text stays in History.
    revert = next(b for b in at.sidebar.button if "Revert" in b.label)
    revert.click().run()
    assert not path.exists() and record(at).ok and not at.error
    assert [v.read() for v in ws.history(kf)] == [bundled, broken]


def view(at, title: str):
    """The tab of one view (the page draws them all; the browser shows one)."""
    return next(t for t in at.tabs if t.label == title)


def test_what_if_slider_changes_occupancy_without_recompiling(home):
    at = open_app()
    rec = record(at)  # every view is drawn (the browser switches tabs itself)
    assert metrics(at)["Occupancy (what-if)"] == "100%"
    slider = next(s for s in at.select_slider if s.key.startswith("wi.warps."))
    slider.set_value(1).run()
    assert not at.exception
    m = metrics(at)
    assert m["Occupancy (what-if)"] == "50%"  # 32-thread blocks hit the 32 blocks/SM limit on sm_90
    assert m["Limited by"] == "blocks"
    assert record(at) is rec  # nothing was compiled


def test_link_reopens_the_same_view(home):
    at = open_app({"kernel": "add", "target": "sm_80", "warps": "8", "c.BLOCK": "512", "a.n": "4095",
                   "panes": "source,sass", "view": "stages"})  # an old link: the editor is the source pane
    rec = record(at)
    assert rec.ok and rec.target == "sm_80" and rec.options["num_warps"] == 8
    params = {p.name: p.value for p in rec.parameters}
    assert params["BLOCK"] == 512 and params["n"] == 4095
    doc = panes_doc(at)
    assert pane_keys(doc) == ["sass"]
    # n = 4095 is not divisible by 16: the loads are no longer 128-bit.
    assert "LDG.E.128" not in rec.stages["sass"]


def test_call_override_recompiles_and_goes_to_the_url(home):
    at = open_app()
    box = at.sidebar.text_input(key="w.ov.add.args.n")
    box.input("4095").run()
    rec = record(at)
    assert {p.name: p.value for p in rec.parameters}["n"] == 4095
    assert "ld.global.v4.b32" not in rec.stages["ptx"]
    assert query(at)["a.n"] == "4095"


def test_pass_by_pass_pane(home):
    at = open_app({"kernel": "add", "target": "sm_90", "passes": "1", "panes": "ttgir,passes"})
    rec = record(at)
    assert rec.passes
    doc = panes_doc(at)
    assert "passes" in pane_keys(doc) and pane_rows(doc, "passes")
    from inspector.ui.workbench import view_key

    picker = f"w.pass.{view_key(rec)}.1"
    changed = [p for p in rec.passes if p.changed and p.ir]
    assert at.selectbox(key=picker).value == changed[0].index
    # Listed by their real names, the passes that changed marked; the buttons step between changes.
    coalesce = next(p for p in changed if p.name == "after TritonGPUCoalesce")
    assert any(o.startswith(f"{rec.passes.index(coalesce) + 1}. after TritonGPUCoalesce ● changed")
               for o in at.selectbox(key=picker).options)
    at.button(key=f"{picker}.next").click().run()
    assert at.selectbox(key=picker).value == changed[1].index
    at.button(key=f"{picker}.prev").click().run()
    assert at.selectbox(key=picker).value == changed[0].index
    # Every pass, the unchanged ones too, when asked; one that changed nothing says so.
    at.toggle(key="w.passonly").set_value(False).run()
    every = at.selectbox(key=f"w.pass.{view_key(rec)}.0")
    assert len(every.options) == len(rec.passes) > len(changed)
    idle = next(p for p in rec.passes if not p.changed)
    every.set_value(idle.index).run()
    note = next(p["empty_note"] for p in panes_doc(at)["panes"] if p["key"] == "passes")
    assert note == f"{idle.name} left the IR unchanged."
    at.button(key=f"w.pass.{view_key(rec)}.0.next").click().run()
    assert at.selectbox(key=f"w.pass.{view_key(rec)}.0").value == next(p.index for p in changed if p.index > idle.index)


def test_pin_and_diff_two_compiles(home):
    at = open_app()
    at.button(key="w.pin").click().run()
    at.sidebar.selectbox(key="w.warps").select(8).run()
    assert record(at).options["num_warps"] == 8
    rows = next(d.value for d in at.dataframe if "changed" in d.value.columns)
    changed = rows[rows["changed"] == "●"][""].tolist()
    assert "num_warps" in changed


def test_autotune_grid_compiles_every_config(home):
    at = open_app({"kernel": "matmul", "target": "sm_90", "view": "autotune"})
    n = len(record(at).autotune_configs)
    assert n > 1
    at.button(key="w.grid.compile").click().run()
    assert not at.exception
    table = next(d.value for d in at.dataframe if "config" in d.value.columns)
    assert list(table["config"]) == list(range(n))
    ok = table[table["error"] == ""]
    assert len(ok) >= 1 and (ok["registers"] > 0).all()
    assert set(ok["num_warps"]) <= {4, 8}


def test_insight_findings_link_to_their_source_line(home):
    at = open_app({"kernel": "add", "target": "sm_90", "a.n": "4095", "view": "insight"})
    assert any("scalar" in m.value and "not known to be a multiple of 16" in m.value for m in at.markdown)
    table = at.dataframe[0].value
    assert set(table["access"]) == {"scalar"} and sorted(table["op"]) == ["load", "load", "store"]
    load_line = int(table[table["pointer"] == "x_ptr"]["line"].iloc[0])
    show = next(b for b in at.button if b.label == f"Show line {load_line}")
    show.click().run()
    assert query(at).get("view", "insight") == "insight"  # the tab stays; the editor selects the line
    assert workbench_args(at)["initial"] == {"pane": "source", "line": load_line}
    # The same verdict is a marker on that editor line, with its reason.
    marks = workbench_args(at)["markers"]["source"][str(load_line)]
    assert any("memory-scalar" in m["kind"].split() and m["severity"] == "performance" and "4095" in m["text"]
               for m in marks)


def test_benchmarks_show_recorded_curves_labelled_as_such(home):
    at = open_app({"kernel": "add", "target": "sm_90", "view": "benchmarks"})
    info = " ".join(i.value for i in at.info)
    assert "Recorded, not live" in info and "H200" in info and "assets/bench/add.json" in info
    charts = [e for e in view(at, "Benchmarks") if getattr(e, "type", "") == "plotly_chart"]
    assert len(charts) == 4


def test_a_server_without_a_sandbox_says_so_loudly(home, monkeypatch):
    at = open_app()
    assert not any("not sandboxed" in e.value for e in at.error)
    assert any(c.value.startswith("Sandbox: ") for c in at.sidebar.caption)
    from inspector.ui import sandbox_banner

    monkeypatch.setattr(sandbox_banner, "sandbox_status", lambda: {
        "isolated": False, "mode": "off", "missing": "bubblewrap (bwrap) is not installed",
        "how": "NOT sandboxed: kernel files run with this user's rights"})
    at = open_app()
    banner = [e.value for e in at.error if "not sandboxed" in e.value]
    assert banner and "bubblewrap (bwrap) is not installed" in banner[0]
    assert record(at).ok  # the app still works, with today's limits


def test_a_shared_link_opens_as_a_new_file_of_the_recipient(home):
    from inspector.ui.settings import share_param

    bundled = (KERNELS / "add.py").read_text()
    text = bundled.replace("x + y, mask=mask)", "0.5 + x + y, mask=mask)")
    at = open_app({"kernel": "add", "target": "sm_90", "warps": "2", "name": "add.py", "src": share_param(text)})
    q = query(at)
    assert "src" not in q and q["kernel"] == "file:add.py" and q["warps"] == "2"
    assert workbench_args(at)["seed"] == text
    rec = record(at)
    assert rec.ok and rec.source == text and "0f3F000000" in rec.stages["ptx"]
    assert any("Opened the shared kernel as `add.py`" in i.value for i in at.info)
    ws = session_workspace(at)
    assert not ws.is_edited(ws.find("add"))  # the bundled kernel's copy is untouched


def test_missing_values_are_asked_in_a_form_and_compiled_with(home, monkeypatch):
    src = REPO / "tests" / "fixtures" / "published" / "first_four_projects" / "liger_kernel" / "src"
    monkeypatch.setenv(workspace.OPEN_ROOTS_ENV, str(src))
    at = open_app()
    at.sidebar.text_input(key="w.open").input("liger_kernel.ops.utils").run()
    rec = record(at)
    # nothing in the file launches it: compiled with a made-up BLOCK_SIZE, which the page offers to change
    assert rec.ok and [m["name"] for m in rec.made_up] == ["BLOCK_SIZE"], rec.error
    assert query(at)["kernel"] == "file:utils.py"
    page_text = " ".join(e.value for e in [*at.markdown, *at.error, *at.caption, *at.code, *at.info, *at.warning])
    assert "--const" not in page_text and "made-up values for `BLOCK_SIZE`" in page_text
    fields = {t.label: t for t in at.text_input if t.key and t.key.startswith("w.missing.")}
    assert "BLOCK_SIZE (constexpr)" in fields and fields["BLOCK_SIZE (constexpr)"].value == rec.made_up[0]["suggested"]
    fields["BLOCK_SIZE (constexpr)"].input("512")
    next(b for b in at.button if b.label == "Compile with these values").click().run()
    rec = record(at)
    assert rec.ok and not rec.made_up, rec.error
    assert rec.stages["ptx"] and query(at)["c.BLOCK_SIZE"] == "512"
    assert workbench_args(at)["seed"] == (src / "liger_kernel" / "ops" / "utils.py").read_text()


def test_a_saved_profile_opens_in_the_profile_view(home):
    from profile_data import recorded_profile

    from inspector.ui.profile_panel import LOADED

    at = open_app({"kernel": "copy_coalesced_vs_strided", "target": "sm_90", "view": "profile"})
    rec = at.session_state["record"]
    # what an upload of `profile --out P.json` puts there (AppTest cannot drive a file uploader)
    at.session_state[LOADED] = {rec.file: recorded_profile("strided", registers=40).to_dict()}
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert {m.label for m in at.metric} >= {"Duration", "DRAM throughput", "Registers / thread"}
    table = view(at, "Profile").dataframe[0].value
    assert table.iloc[0]["line"] == 44 and table.iloc[0]["L2 sectors"] == 1_179_648
    assert any("copy_strided_kernel" in i.value for i in at.info)  # another kernel of the file
    assert any("registers per thread" in w.value and "**40**" in w.value for w in at.warning)


def test_a_profile_shows_its_roofline_point_and_what_taking_it_cost(home):
    from inspector.ui.profile_panel import LOADED

    at = open_app({"kernel": "matmul", "target": "sm_90", "view": "profile"})
    rec = at.session_state["record"]
    shipped = json.loads((REPO / "assets" / "profiles" / "matmul-h100.json").read_text())
    at.session_state[LOADED] = {rec.file: shipped}
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Achieved"].endswith("TFLOP/s") and metrics["Arithmetic intensity"] == "639 FLOP/B"
    assert metrics["DRAM bandwidth"].endswith("GB/s") and "L2 bandwidth" in metrics
    captions = " ".join(c.value for c in at.caption)
    share = f"{shipped['figures']['rate']['of_roof'] * 100:.1f}%"
    assert f"639 FLOP per byte of device memory: compute-bound there, at {share} of the roof" in captions
    assert "Taken in native compile" in captions and "Nsight Compute run" in captions
    (chart,) = [e for e in view(at, "Profile") if getattr(e, "type", "") == "plotly_chart"]
    names = [t.get("name", "") for t in json.loads(chart.proto.spec)["data"]]
    assert names[0] == "matmul_kernel, as profiled" and names[1].startswith("roof: copy 3,029 GB/s"), names


def test_without_a_gpu_the_profile_view_offers_the_shipped_profiles(home):
    at = open_app({"kernel": "add", "target": "sm_90", "view": "profile"})
    profile = view(at, "Profile")
    assert any("one recorded on our GPU" in c.value for c in profile.caption)
    shipped = next(b for b in profile.button if b.label.startswith("add-h100.json"))
    shipped.click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert {m.label for m in view(at, "Profile").metric} >= {"Duration", "DRAM throughput"}


def test_a_failed_compile_keeps_the_overrides_it_says_nothing_about(home):
    """A syntax error's record names no parameter: it is no evidence that the file now passes
    something else, so the override stays (a file that does pass another value drops it:
    tests/browser/test_browser_page.py)."""
    at = open_app({"kernel": "add", "target": "sm_90", "a.n": "1000"})
    assert record(at).ok and next(p for p in record(at).parameters if p.name == "n").value == 1000
    broken = (KERNELS / "add.py").read_text().replace("mask = offs < n", "mask = offs < n)")
    autosave(at, "add", broken)
    at.sidebar.button(key="w.compile").click().run()
    assert not record(at).ok and record(at).error.kind == "syntax"
    assert at.session_state["settings"].args == {"n": "1000"} and query(at)["a.n"] == "1000"
