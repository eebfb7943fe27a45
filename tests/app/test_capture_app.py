"""The app opens a captured run: `streamlit run app.py -- --capture FILE` (and an upload) shows its
kernels by launches; "Open and edit" puts a kernel's standalone file in the session's workspace and
compiles it as an ordinary inspection, with the captured specialisation."""

from __future__ import annotations

import sys

import pytest

AppTest = pytest.importorskip("streamlit.testing.v1").AppTest  # the GPU machine has no streamlit

from capture_support import capture_program
from app_support import APP

from inspector.capture import load
from inspector.capture.table import find
from inspector.ui.capture_panel import capture_argument



@pytest.fixture(scope="module")
def capture_file(tmp_path_factory):
    out = tmp_path_factory.mktemp("capture-app") / "run.inspector"
    p = capture_program(out, 4)
    assert p.returncode == 0, p.stderr
    return out


def test_capture_argument():
    assert capture_argument(["--capture", "run.inspector"]) == "run.inspector"
    assert capture_argument(["--capture=x.ndjson.gz"]) == "x.ndjson.gz"
    assert capture_argument(["--other"]) is None


def test_app_opens_a_capture_and_a_kernel_from_it(capture_file, home, monkeypatch):
    monkeypatch.setattr(sys, "argv", ["app.py", "--capture", str(capture_file)])
    at = AppTest.from_file(APP, default_timeout=240)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    table = at.sidebar.dataframe[0].value
    assert list(table["kernel"])[0] == "axpy_kernel" and list(table["launches"])[0] == 4
    assert "time_ms" not in table.columns  # measured only on a GPU
    at.sidebar.selectbox(key="capture.pick").select("rms_norm_kernel").run()
    at.sidebar.button(key="capture.open").click().run()
    assert not at.exception, [e.value for e in at.exception]
    cap = load(capture_file)
    entry = find(cap, "rms_norm_kernel")
    files = list(home.glob("workspaces/*/files/rms_norm_kernel*.py"))
    assert len(files) == 1 and files[0].read_text() == entry.reproducer
    rec = at.session_state["record"]
    assert rec.ok, rec.error and rec.error.short()
    assert rec.kernel == "rms_norm_kernel" and rec.resources.registers
    spec = {p.name: p.specialization for p in rec.parameters}
    assert spec["n_cols"] == entry.attributes["n_cols"] and rec.options["num_warps"] == 2


def test_a_bad_capture_is_named(home, tmp_path, monkeypatch):
    bad = tmp_path / "bad.inspector"
    bad.write_text("not a capture\n")
    monkeypatch.setattr(sys, "argv", ["app.py", "--capture", str(bad)])
    at = AppTest.from_file(APP, default_timeout=240)
    at.run()
    assert not at.exception
    assert any("bad.inspector" in e.value and "neither a capture" in e.value for e in at.sidebar.error)
