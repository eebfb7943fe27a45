"""The workbench's markers (inspector/ui/markers.py) from real compiles: memory verdicts on the
editor line and on the machine-code rows, the advisor's findings as performance notes, the
compile error's line as an error; severities are only error / performance / info."""

from __future__ import annotations

from paths import KERNELS
from inspector.compile.api import inspect_kernel
from inspector.ui.markers import error_markers, merge, record_markers

SEVERITIES = {"error", "performance", "info"}


def _line(text: str) -> int:
    return (KERNELS / "add.py").read_text().split("\n").index(text) + 1


def test_scalar_loads_are_performance_markers_with_their_reason_on_the_editor_and_ptx_lines():
    rec = inspect_kernel(KERNELS / "add.py", target="sm_90", args={"n": "4095"})
    assert rec.ok, rec.error
    marks = record_markers(rec)
    load = _line("    x = tl.load(x_ptr + offs, mask=mask)")
    items = marks["source"][load]
    scalar = [m for m in items if "memory-scalar" in m["kind"].split()]
    assert scalar and scalar[0]["severity"] == "performance"
    assert "scalar load" in scalar[0]["text"] and "`n` (= 4095)" in scalar[0]["text"] and "\n" not in scalar[0]["text"]
    # one item per access: the advisor's finding about it is its click to fix, not a second text
    assert len(items) == 1 and scalar[0].get("fix") is not None and "coalescing-uncoalesced" in scalar[0]["kind"]
    ptx_lines = rec.stages["ptx"].split("\n")
    marked = [n for n, ms in marks["ptx"].items() if any(m["kind"] == "memory-scalar" for m in ms)]
    assert marked and all("ld.global.b32" in ptx_lines[n - 1] or "st.global.b32" in ptx_lines[n - 1] for n in marked)
    assert {m["severity"] for lines in marks.values() for ms in lines.values() for m in ms} <= SEVERITIES


def test_vectorised_loads_are_info_and_nothing_is_an_error():
    rec = inspect_kernel(KERNELS / "add.py", target="sm_90")
    marks = record_markers(rec)
    load = _line("    x = tl.load(x_ptr + offs, mask=mask)")
    assert [m["severity"] for m in marks["source"][load] if m["kind"].startswith("memory-")] == ["info"]
    assert all(m["severity"] != "error" for lines in marks.values() for ms in lines.values() for m in ms)


def test_a_failed_compile_marks_its_line_as_an_error(tmp_path):
    broken = tmp_path / "broken.py"
    broken.write_text((KERNELS / "add.py").read_text().replace("mask = offs < n", "mask = offs < n)"))
    rec = inspect_kernel(broken, target="sm_90")
    assert rec.error is not None and rec.error.kind == "syntax"
    marks = merge(record_markers(rec), error_markers(rec))
    assert list(marks) == ["source"]
    (line, items), = marks["source"].items()
    assert line == _line("    mask = offs < n") and items[0]["severity"] == "error"
