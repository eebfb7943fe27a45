"""Try fixes in a real Chromium: a user's jagged row sum (loads scalar because the row start comes
from memory) gets candidates under its finding, opened from the load's gutter mark; the best one (the alignment promises, which the
example's offsets keep) is applied; History keeps the previous text; the PTX pane shows the loads
128-bit wide. Every wait is on the page's state."""

from __future__ import annotations

import pytest
from inspector.testing.browser import add_page, kernel_upload, wait_for_editor_text, wait_idle, workbench_frame
from browser_support import SHOTS
from jagged import jagged_source

from inspector.hardware.catalogue import GPUS

pytestmark = [pytest.mark.browser, pytest.mark.long]
WAIT_MS = 240_000

JAGGED = jagged_source("torch.tensor([96, 1008, 32, 512, 1024, 16, 784, 64] * 4)")


def test_try_and_apply_a_fix(browser, tmp_path):
    mine = tmp_path / "jagged.py"
    mine.write_text(JAGGED)
    with add_page(browser, tmp_path, 1400, WAIT_MS) as page:
        kernel_upload(page).set_input_files(str(mine))
        page.get_by_text("Compiled jagged.py for sm_90").first.wait_for()
        wait_idle(page)
        frame = workbench_frame(page)
        assert frame.locator(".pane[data-pane=ptx] .r", has_text="ld.global.v4").count() == 0
        page.get_by_role("button", name="Try fixes").first.wait_for()  # the Insight view's way in
        # the gutter's: the load's mark says a click tries fixes, and the click opens them
        mark = frame.locator(".cm-marks .mk.fixable").first
        assert "Click the mark: try fixes" in (mark.get_attribute("data-tip") or "")
        index = mark.get_attribute("data-fix")
        mark.click()
        first = page.locator(f".st-key-w-fix-cand-{index}-0")
        first.get_by_role("button", name="Apply").wait_for()
        wait_idle(page, timeout=WAIT_MS / 1000)
        shown = first.inner_text()
        assert "the finding is gone" in shown and "access width 32-bit → 128-bit" in shown, shown
        assert "promises kept by the example: yes" in shown and "outputs equal to the original's: yes" in shown
        assert "tl.multiple_of(tl.load(offsets + row), 4)" in shown
        SHOTS.mkdir(parents=True, exist_ok=True)
        first.scroll_into_view_if_needed()
        page.screenshot(path=str(SHOTS / "try-fixes.png"))
        first.get_by_role("button", name="Apply").click()
        page.get_by_text("Applied: promise").first.wait_for()
        page.get_by_text("Compiled jagged.py for sm_90").first.wait_for()
        wait_idle(page)
        wait_for_editor_text(page, "start = tl.multiple_of(tl.load(offsets + row), 4)")
        frame = workbench_frame(page)
        assert frame.locator(".pane[data-pane=ptx] .r", has_text="ld.global.v4").count() > 0
        page.locator(".st-key-history-box summary").click()
        saved = page.get_by_text("saved versions of").first
        saved.wait_for()
        # the uploaded text and the applied one: Restore brings the first back
        assert saved.inner_text().startswith("2 saved versions of jagged.py"), saved.inner_text()


def test_every_gpu_view(browser, tmp_path):
    with add_page(browser, tmp_path, 1200, WAIT_MS) as page:
        page.get_by_text("Every GPU", exact=True).click()
        page.get_by_role("button", name="Check every GPU").click()
        # vector add launches everywhere: one row per catalogue GPU, NVIDIA and AMD
        page.get_by_text(f"{len(GPUS)} of {len(GPUS)}").first.wait_for()
        wait_idle(page)
        table = page.get_by_role("tabpanel", name="Every GPU").get_by_test_id("stDataFrame")
        table.wait_for()
        # the grid draws its cells on a canvas: its height says it holds a row per GPU (35 px each)
        assert table.bounding_box()["height"] > 35 * len(GPUS)
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / "every-gpu.png"))
        assert "view=fits" in page.url  # the view is part of the share link


def test_the_vector_add_at_4095_gets_a_working_candidate(browser, tmp_path):
    """The README's vector add with n = 4095: no promise about n holds, so the page offers the
    peeled tail first (the hint on the mask, which the launch breaks, below it)."""
    with add_page(browser, tmp_path, 1400, WAIT_MS) as page:
        base = page.url.split("/?")[0]
        page.goto(f"{base}/?kernel=add&target=sm_90&a.n=4095")
        page.get_by_text("Compiled add.py for sm_90").first.wait_for()
        wait_idle(page)
        page.get_by_role("button", name="Try fixes").first.click()
        first = page.locator(".st-key-w-fix-cand-0-0")
        first.get_by_role("button", name="Apply").wait_for()
        wait_idle(page, timeout=WAIT_MS / 1000)
        shown = first.inner_text()
        assert "peel the partial block off" in shown and "the finding is gone" in shown, shown
        assert "access width 32-bit → 128-bit" in shown and "outputs equal to the original's: yes" in shown
        second = page.locator(".st-key-w-fix-cand-0-1").inner_text()
        assert "tl.max_constancy(offs < n, 4)" in second and "promises kept by the example: no" in second, second
        assert "n = 4095" in second
