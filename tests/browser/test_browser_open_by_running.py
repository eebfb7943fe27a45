"""A library kernel whose made-up call fails, opened in a real Chromium through the code that
really calls it: "Open by running" runs the project's own test in the sandbox, GPU-free under
Triton's interpreter; the kernel appears with its real launch and compiles. Every wait is on the
page's state, never a fixed sleep."""

from __future__ import annotations


import pytest
from inspector.testing.browser import (app_server, diagnosed, editor_text, new_context, wait_idle,
                                       workbench_frame)
from browser_support import SHOTS
from rowscale_project import make_project

pytestmark = [pytest.mark.browser, pytest.mark.long]
WAIT_MS = 240_000  # a run under the interpreter, then a cold compile, on a loaded CI machine


def test_open_by_running_a_library_kernel_whose_guess_fails(browser, tmp_path):
    root = tmp_path / "proj"
    root.mkdir()
    make_project(root)
    home = tmp_path / "home"
    home.mkdir()
    with app_server(home, log=tmp_path / "streamlit.log", env_extra={"TRITON_INSPECTOR_OPEN_ROOTS": str(root)}) as url:
        ctx = new_context(browser, viewport={"width": 1600, "height": 1000})
        page = ctx.new_page()
        page.set_default_timeout(WAIT_MS)
        with diagnosed(page, tmp_path / "streamlit.log"):
            page.goto(f"{url}/?kernel=add&target=sm_90")
            page.get_by_text("Compiled add.py for sm_90").first.wait_for()
            wait_idle(page)
            page.get_by_text("Open by running").first.click()
            page.get_by_role("textbox", name="Project folder").fill(str(root))
            page.get_by_role("textbox", name="Project folder").press("Enter")
            page.get_by_role("textbox", name="Command").fill("pytest -q -p no:cacheprovider tests/test_ops.py::test_rowscale")
            page.get_by_role("textbox", name="Command").press("Enter")
            wait_idle(page)
            page.get_by_role("button", name="Run").click()
            page.get_by_role("button", name="Open and edit").wait_for()
            wait_idle(page, timeout=WAIT_MS / 1000)  # the run's rerun has finished drawing the sidebar
            page.get_by_role("button", name="Open and edit").click()
            # the file is the kernel's standalone copy (its name made safe: no leading underscore)
            page.get_by_text("Compiled rowscale_kernel.py for sm_90").first.wait_for()
            wait_idle(page)
            frame = workbench_frame(page)
            assert frame.locator(".pane[data-pane=ptx] .r", has_text="ld.global").count() > 0
            # the test's own call, not a guess: 8 rows (the grid) of 300 values, BLOCK 512
            text = editor_text(page)
            assert "(8, 300)" in text and "BLOCK=512" in text and "_rowscale_kernel[(8,)]" in text, text
            SHOTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(SHOTS / "open-by-running.png"))
        ctx.close()
