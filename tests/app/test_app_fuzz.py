"""Bad kernels typed into the app: each must show its error (with the line where one exists),
never raise in the server, never touch the user's text, and the next good compile must work."""

from __future__ import annotations

import pytest
AppTest = pytest.importorskip("streamlit.testing.v1").AppTest  # the GPU machine has no streamlit

import fuzz_cases
from app_support import APP, autosave
from inspector.ui.error_view import KIND_TITLES



def _pick() -> list[fuzz_cases.Case]:
    """A spread of every kind of bad source a user can type (no overrides: those are widgets)."""
    by_prefix: dict[str, int] = {"syntax": 8, "import": 8, "example": 5, "compile": 15, "process": 4, "hang": 3}
    chosen, taken = [], dict.fromkeys(by_prefix, 0)
    for case in fuzz_cases.all_cases():
        prefix = case.name.split("-")[0]
        if isinstance(case.source, bytes) or case.args or case.consts or case.options or case.target != "sm_90":
            continue
        if case.kernel or case.name == "hang-child-process":
            continue
        if prefix in by_prefix:
            step = {"syntax": 10, "import": 5}.get(prefix, 1)  # every 10th syntax case, ...
            seen = sum(1 for c in chosen if c.name.split("-")[0] == prefix)
            if taken[prefix] % step == 0 and seen < by_prefix[prefix]:
                chosen.append(case)
            taken[prefix] += 1
        elif case.kinds == ("no_kernel",):
            chosen.append(case)
    return chosen


CASES = _pick()


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    home = tmp_path_factory.mktemp("app-fuzz-home")
    mp = pytest.MonkeyPatch()
    mp.setenv("TRITON_INSPECTOR_HOME", str(home))
    mp.setenv("TRITON_INSPECTOR_TIMEOUT", "4")
    at = AppTest.from_file(APP, default_timeout=240)
    at.run()
    assert not at.exception and at.session_state["record"].ok
    yield at
    mp.undo()


def test_enough_cases():
    assert len(CASES) >= 45, [c.name for c in CASES]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_bad_source_in_the_app(app, case):
    path = autosave(app, "add", case.source).path
    app.sidebar.button(key="w.compile").click().run()  # Compile
    assert not app.exception, [e.value for e in app.exception]
    errors = [e.value for e in app.error]
    if case.kinds == ("stood_in",):
        # a module this machine lacks stands in (worker/absent_modules.py), the kernel compiles,
        # and the page says which module, where, and why
        warned = [w.value for w in app.warning if f"line {case.line}" in w.value and "stood in" in w.value]
        assert not errors and warned and case.message in warned[0], (case.name, errors, warned)
        assert path.read_text() == case.source, "the user's text changed"
        return
    assert errors, f"{case.name}: no error shown"
    assert any(KIND_TITLES[k] in errors[0] for k in case.kinds), (case.name, errors[0])
    if case.line is not None:
        assert f"line {case.line}" in errors[0], (case.name, errors[0])
    assert path.read_text() == case.source, "the user's text changed"


def test_good_source_compiles_after_the_storm(app):
    autosave(app, "add", fuzz_cases.GOOD)
    app.sidebar.button(key="w.compile").click().run()
    assert not app.exception and not app.error
    assert "ld.global.v4.b32" in app.session_state["record"].stages["ptx"]
