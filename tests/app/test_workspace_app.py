"""The workspace through the app (Streamlit's AppTest): a key per user in the URL, two sessions
and two tabs on one kernel, the History list, New kernel, rename, an emptied kernel.

What the editor sends (a pause in typing) is put where the component leaves it: in the session
state under the mounted editor's key, as an event {"id", "type": "change", "text"}.
"""

from __future__ import annotations

import itertools

import pytest
AppTest = pytest.importorskip("streamlit.testing.v1").AppTest  # the GPU machine has no streamlit

from paths import KERNELS
from app_support import open_app
from inspector.ui import workspace

_events = itertools.count()


def query(at: AppTest) -> dict[str, str]:
    return {k: v[-1] if isinstance(v, list) else v for k, v in at.query_params.items()}


def ws_of(at: AppTest) -> workspace.Workspace:
    return workspace.Workspace(query(at)["ws"])


def type_text(at: AppTest, text: str, submit: bool = False) -> AppTest:
    """What the editor component sends after a pause in typing (or Ctrl+Enter)."""
    key = f"workbench-{at.session_state['settings'].kernel}"
    at.session_state[key] = {"id": f"ev{next(_events)}", "type": "submit" if submit else "change", "text": text}
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def warnings(at: AppTest) -> list[str]:
    return [w.value for w in at.warning]


def test_each_visit_gets_its_own_workspace_key_and_a_reload_keeps_it(home):
    a, b = open_app(), open_app()
    ka, kb = query(a)["ws"], query(b)["ws"]
    assert workspace.valid_key(ka) and workspace.valid_key(kb) and ka != kb
    again = open_app(query(a))  # a reload: the URL carries the key
    assert query(again)["ws"] == ka
    for bad in ("../../etc", "A" * 32, "0" * 31):
        c = open_app({"ws": bad})
        assert query(c)["ws"] not in (bad, ka, kb) and workspace.valid_key(query(c)["ws"])
    assert not (home / "workspaces").exists() or not any((home / "workspaces").iterdir())  # nothing saved yet


def test_two_sessions_on_one_bundled_kernel_keep_their_own_text(home):
    bundled = (KERNELS / "add.py").read_text()
    a, b = open_app(), open_app()
    type_text(a, bundled + "# session a\n", submit=True)
    type_text(b, bundled + "# session b\n", submit=True)
    assert a.session_state["record"].source.endswith("# session a\n")
    assert b.session_state["record"].source.endswith("# session b\n")
    ra, rb = open_app(query(a)), open_app(query(b))  # each reload finds its own text
    assert ra.session_state["editor_seed"].endswith("# session a\n")
    assert rb.session_state["editor_seed"].endswith("# session b\n")
    fresh = open_app()
    assert fresh.session_state["editor_seed"] == bundled and (KERNELS / "add.py").read_text() == bundled
    assert not warnings(ra) and not warnings(rb)


def test_two_tabs_of_one_link_are_told_and_lose_nothing(home):
    bundled = (KERNELS / "add.py").read_text()
    tab1 = open_app()
    tab2 = open_app(query(tab1))  # the same link in a second tab
    type_text(tab1, bundled + "# tab 1\n")
    assert not warnings(tab1)
    # Tab 2 still shows the text it loaded; on its next run it is told the file changed.
    tab2.run()
    assert any("changed in another tab" in w for w in warnings(tab2))
    type_text(tab2, bundled + "# tab 2\n")  # it types anyway: saved, and it is told over what
    assert any("had been changed in another tab" in w and "version 1" in w for w in warnings(tab2))
    ws = ws_of(tab1)
    kf = ws.find("add")
    assert [v.read() for v in reversed(ws.history(kf))] == [bundled + "# tab 1\n", bundled + "# tab 2\n"]
    assert ws.read_source(kf).endswith("# tab 2\n")  # the latest write is the current text
    # Tab 1 loads the newer text with the button the warning offers.
    tab1.run()
    tab1.button(key="w.notice.load").click().run()
    assert tab1.session_state["editor_seed"].endswith("# tab 2\n") and not warnings(tab1)
    assert tab1.session_state["record"].source.endswith("# tab 2\n")


def test_history_lists_versions_and_restore_makes_a_new_one(home):
    at = open_app({"kernel": "gelu", "target": "sm_90"})
    bundled = (KERNELS / "gelu.py").read_text()
    type_text(at, bundled + "# first\n")
    type_text(at, bundled + "# second\n")
    assert not any(b.key == "w.history.gelu" for b in at.selectbox)  # closed: nothing drawn
    at.session_state["history-box"] = True  # open the History expander
    at.run()
    box = at.selectbox(key="w.history.gelu")
    assert box.options[0].startswith("#2 ·") and box.options[0].endswith("· current") and len(box.options) == 2
    box.select(1).run()
    at.button(key="w.history.restore.gelu").click().run()
    assert not at.exception
    ws = ws_of(at)
    kf = ws.find("gelu")
    assert ws.read_source(kf).endswith("# first\n") and [v.number for v in ws.history(kf)] == [3, 2, 1]
    assert at.session_state["editor_seed"].endswith("# first\n")
    assert at.session_state["record"].ok and at.session_state["record"].source.endswith("# first\n")
    assert any("Restored version 1" in s.value for s in at.success)


def test_new_kernel_compiles_under_its_own_name_and_can_be_renamed(home):
    bundled = (KERNELS / "add.py").read_text()
    at = open_app()
    at.sidebar.button(key="w.new").click().run()
    rec = at.session_state["record"]
    assert rec.ok and rec.kernel == "add_kernel" and rec.file.endswith("untitled-1.py"), rec.error
    assert query(at)["kernel"] == "file:untitled-1.py"
    assert any("`untitled-1.py`" in c.value for c in at.caption)  # the note under the editor names it
    at.sidebar.button(key="w.new").click().run()
    assert query(at)["kernel"] == "file:untitled-2.py"
    ws = ws_of(at)
    assert {k.id for k in ws.files()} == {"file:untitled-1.py", "file:untitled-2.py"}
    at.sidebar.text_input(key="w.rename.file:untitled-2.py").input("my scale").run()
    assert query(at)["kernel"] == "file:my_scale.py" and at.session_state["record"].ok
    assert ws.find("file:untitled-2.py") is None and ws.find("file:my_scale.py") is not None
    at.sidebar.text_input(key="w.rename.file:my_scale.py").input("untitled-1").run()  # taken
    assert any("already in this workspace" in e.value for e in at.sidebar.error)
    assert query(at)["kernel"] == "file:my_scale.py"
    # The bundled vector add is untouched, and is still "Vector add" in the picker.
    assert (KERNELS / "add.py").read_text() == bundled
    titles = at.sidebar.selectbox(key="w.kernel").options
    assert titles.count("Vector add") == 1 and "untitled-1.py" in titles


def test_an_emptied_kernel_affects_no_other_workspace(home):
    at = open_app()
    type_text(at, "", submit=True)
    assert any("No kernel found" in e.value for e in at.error)
    fresh = open_app()  # a new tab, without the link: a workspace of its own
    assert fresh.session_state["record"].ok and not fresh.error
    same = open_app(query(at))  # the same link: the same (empty) text, and its history
    assert same.session_state["editor_seed"] == ""
    ws = ws_of(at)
    assert [v.read() for v in ws.history(ws.find("add"))] == [""]
    same.sidebar.button(key=next(b.key for b in same.sidebar.button if b.label.startswith("Revert"))).click().run()
    assert same.session_state["record"].ok
