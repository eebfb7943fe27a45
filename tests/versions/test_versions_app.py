"""Triton releases in the app (inspector/ui/versions.py) through Streamlit's AppTest: the picker
beside the target, the URL, the Diff tab comparing two releases, adding and removing a release.

Uses the Triton 3.6.0 side environment that scripts/install.sh --test adds (see test_versions.py).
"""

from __future__ import annotations

import os

import pytest

AppTest = pytest.importorskip("streamlit.testing.v1").AppTest  # the GPU machine has no streamlit

import app_support
from test_versions import NEW, OLD, old_release  # noqa: F401 - the fixture

from inspector import versions

TIMEOUT = 300


@pytest.fixture
def home(tmp_path, monkeypatch, old_release):  # noqa: F811
    """A private home (its own workspaces) that sees the machine's side environments."""
    real = versions.versions_dir()
    monkeypatch.setenv("TRITON_INSPECTOR_HOME", str(tmp_path))
    os.symlink(real, tmp_path / "triton-versions")
    return tmp_path


def open_app(query: dict[str, str]) -> AppTest:
    return app_support.open_app(query, timeout=TIMEOUT)


def record(at: AppTest):
    return at.session_state["record"]


def test_the_url_holds_both_releases():
    from inspector.ui.settings import Settings

    s = Settings(triton=OLD, vs_triton=NEW)
    q = s.to_query()
    assert q["triton"] == OLD and q["vs_triton"] == NEW
    assert Settings.from_query(q) == s
    assert s.request().triton == OLD and Settings().request().triton is None
    assert Settings.from_query({"triton": "../x", "vs_triton": "3.6"}).triton == ""  # never a path


def test_picker_compiles_with_the_chosen_release_and_the_url_keeps_it(home):
    at = open_app({"kernel": "add", "target": "sm_90"})
    assert record(at).triton_version == NEW
    picker = at.sidebar.selectbox(key="w.triton")
    assert OLD in picker.options and picker.options[0].startswith(NEW)
    picker.select(OLD).run()
    assert not at.exception
    assert record(at).triton_version == OLD and record(at).ok
    assert at.query_params["triton"] == OLD


def test_a_link_opens_two_releases_compared_in_the_diff_tab(home):
    at = open_app({"kernel": "softmax", "target": "sm_90", "view": "diff", "triton": OLD, "vs_triton": NEW})
    assert record(at).triton_version == OLD
    summary = [c.value for c in at.code if c.value.startswith("softmax_kernel sm_90, Triton")]
    assert summary and summary[0].startswith(f"softmax_kernel sm_90, Triton {OLD} -> {NEW}: ")
    frames = [d.value for d in at.dataframe]
    layouts = next(f for f in frames if f"Triton {OLD}" in f.columns)
    assert "layout conversions" in list(layouts[""])
    table = next(f for f in frames if "A" in f.columns)
    row = table[table[""] == "Triton"]
    assert list(row["A"]) == [OLD] and list(row["B"]) == [NEW]
    assert at.query_params["vs_triton"] == NEW


def test_add_shows_progress_and_remove_from_the_app(tmp_path, monkeypatch):
    monkeypatch.setenv("TRITON_INSPECTOR_HOME", str(tmp_path))
    at = open_app({"kernel": "add", "target": "sm_90"})
    assert at.sidebar.selectbox(key="w.triton").options == [f"{NEW} (installed)"]
    at.sidebar.text_input(key="w.triton.add").input("3.2.0")
    at.sidebar.button(key="w.triton.add.go").click().run()
    assert any("older than the oldest release" in e.value for e in at.sidebar.error)
    at.sidebar.text_input(key="w.triton.add").input(OLD)
    at.sidebar.button(key="w.triton.add.go").click().run()
    env = versions.get(OLD)
    assert env is not None and env.state in ("installing", "ready"), env
    if env.state == "installing":  # the page shows where the install is
        texts = [p.proto.text for p in at.sidebar.get("progress")]
        assert any(f"Adding Triton {OLD}: step" in t for t in texts), texts
    assert versions.wait(OLD, timeout=900).ready
    at.run()
    assert OLD in at.sidebar.selectbox(key="w.triton").options
    at.sidebar.button(key=f"w.triton.rm.{OLD}").click().run()
    assert not at.exception
    assert at.sidebar.selectbox(key="w.triton").options == [f"{NEW} (installed)"]
    assert not (tmp_path / "triton-versions").exists()
