"""What the page holds between actions (AppTest, real compiles): the tab's own text is what
Compile compiles, another kernel starts clean, and an empty pane says why it is empty.

The browser checks of the same (two real tabs, the uploader) are in tests/browser.
"""

from __future__ import annotations

import pytest

AppTest = pytest.importorskip("streamlit.testing.v1").AppTest  # the GPU machine has no streamlit

from app_support import autosave, open_app
from test_app import query, record, session_workspace, workbench_args

from inspector.ui import state, workspace

LAUNCH_WITHOUT_N = '''import torch
import triton
import triton.language as tl


@triton.jit
def strided_copy(x_ptr, out_ptr, n, stride, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs * stride, mask=mask)
    tl.store(out_ptr + offs, x, mask=mask)


def example():
    x = torch.randn(4096 * 4)
    out = torch.empty(4096)
    strided_copy[(4,)](x, out, BLOCK=1024)
'''


def _compile_button(at: AppTest):
    return next(b for b in at.sidebar.button if b.label == "Compile")


def test_the_sidebar_compile_compiles_this_tabs_text_not_another_tabs_later_save(home):
    at = open_app({"kernel": "add", "target": "sm_90"})
    mine = workbench_args(at)["seed"].replace("mask = offs < n", "mask = offs < n  # tab A")
    ws = session_workspace(at)
    kf = ws.find("add")
    assert not autosave(at, "add", mine).conflict
    # Another tab of the same workspace saves its own text later.
    theirs = mine.replace("# tab A", "# tab B")
    ws.save_source(kf, theirs, base=workspace.text_digest(mine))
    _compile_button(at).click().run()
    rec = record(at)
    assert rec.ok and "# tab A" in rec.source and "# tab B" not in rec.source
    assert ws.read_source(kf) == theirs  # a compile writes nothing: the other tab's text stays current


def test_another_kernel_starts_without_the_last_ones_options_messages_or_error(home):
    at = open_app({"kernel": "matmul", "target": "sm_90"})
    at.sidebar.selectbox(key="w.warps").select(8).run()
    assert query(at)["warps"] == "8"
    at.sidebar.text_input(key="w.open").input("no_such_module_here").run()
    assert any("no_such_module_here" in e.value for e in at.sidebar.error)
    next(b for b in at.sidebar.button if b.label == "New kernel").click().run()
    assert not at.exception, [e.value for e in at.exception]
    q = query(at)
    assert q["kernel"].startswith("file:untitled") and "warps" not in q
    assert at.session_state[state.SETTINGS].num_warps is None
    assert not any("no_such_module_here" in e.value for e in at.sidebar.error)
    assert record(at).ok and record(at).options.get("num_warps") != 8


def test_a_launch_without_an_argument_points_at_the_launch_not_at_a_missing_launch(home):
    at = open_app({"kernel": "add", "target": "sm_90"})
    kf = session_workspace(at).add_upload("strided.py", LAUNCH_WITHOUT_N.encode())
    at.run()  # the kernel list now holds the file
    at.sidebar.selectbox(key="w.kernel").set_value(kf.id).run()
    rec = record(at)
    assert rec.error.kind == "bad_argument" and rec.error.line == 18
    text = " ".join(m.value for m in [*at.markdown, *at.error, *at.code])
    assert "The launch at line 18 does not pass `n`, `stride`" in text
    assert "Nothing in the file launches" not in text
    assert "called without argument n, stride" in text  # the message itself is shown
    # The panes say why they are empty: not "Compiling…" while the page waits for values.
    notes = {p["empty_note"] for p in workbench_args(at)["panes"]}
    assert notes == {"Waiting for values: the form below the editor asks for them."}
