"""The page's state between actions, in a real headless Chromium at 1600x1000: the sidebar's
Compile with two tabs of one workspace, the pass picker by pass name, find in a pane, the selected
line kept across a target switch, "Show line" bringing the workbench on screen, and another kernel
starting clean (no stale error, no leftover upload, no num_warps carried into it or its link).

Every wait is on the page's state, never a fixed sleep.
"""

from __future__ import annotations

import pytest

from inspector.testing.browser import (choose, diagnosed, editor_frame, editor_text, kernel_upload,
                                       new_context, type_at_line_end, wait_for, wait_idle, workbench_frame)
from browser_support import SHOTS

pytestmark = [pytest.mark.browser, pytest.mark.long]
WAIT_MS = 180_000
VIEWPORT = {"width": 1600, "height": 1000}


@pytest.fixture
def context(browser):
    ctx = new_context(browser, viewport=VIEWPORT)
    yield ctx
    ctx.close()


def open_page(ctx, url: str, query: str, label: str):
    page = ctx.new_page()
    page.set_default_timeout(WAIT_MS)
    page.goto(f"{url}/?{query}")
    page.get_by_text(f"Compiled {label}").first.wait_for()
    wait_idle(page)
    return page


def pane_rows(frame, pane: str, text: str) -> int:
    return frame.locator(f".pane[data-pane={pane}] .r", has_text=text).count()


def test_the_sidebar_compile_compiles_this_tabs_text(context, server):
    url, home = server
    a = open_page(context, url, "kernel=add&target=sm_90", "add.py for sm_90")
    with diagnosed(a, SHOTS.parent / "streamlit-browser-page.log"):
        b = open_page(context, url, a.url.split("?", 1)[1], "add.py for sm_90")
        # Tab B multiplies x by 3 and saves (0f40400000 is 3.0 in PTX); tab A never saw it.
        type_at_line_end(b, "x = tl.load(x_ptr + offs, mask=mask)", " * 3  # tab B")
        wait_for(lambda: "# tab B" in next((home / "workspaces").glob("*/edits/add.py")).read_text()
                 if list((home / "workspaces").glob("*/edits/add.py")) else False, "tab B's text saved")
        a.locator("[data-testid=stSidebar]").get_by_role("button", name="Compile", exact=True).click()
        a.get_by_text("was changed in another tab").first.wait_for()  # the page says the file moved on
        wait_idle(a)  # and the compile, at the end of that run, is done
        frame = workbench_frame(a)
        assert pane_rows(frame, "ptx", "0f40400000") == 0 and pane_rows(frame, "ptx", "ld.global.v4.b32") >= 2
        assert "# tab B" not in editor_text(a)


def test_pass_picker_by_name_and_find_in_a_pane(context, server):
    url, _ = server
    page = open_page(context, url, "kernel=add&target=sm_90&passes=1&panes=ptx,passes", "add.py for sm_90")
    with diagnosed(page, SHOTS.parent / "streamlit-browser-page.log"):
        picker = page.locator("[data-testid=stSelectbox]", has=page.locator("[data-testid=stWidgetLabel]",
                                                                             has_text="Pass"))
        def shown() -> str:  # the picked option (a combobox's input holds it in newer Streamlit)
            return picker.first.inner_text() + " " + " ".join(i.input_value() for i in picker.first.locator("input").all())

        assert "InlinerPass" in shown()
        # the next pass that changed the IR, by its real name
        for _ in range(10):
            if "after TritonGPUCoalesce" in shown():
                break
            before = shown()
            page.get_by_role("button", name="▶").click()
            wait_for(lambda: shown() != before, "the picker to move on")
            wait_idle(page)
        assert "after TritonGPUCoalesce" in shown() and "● changed" in shown()
        frame = workbench_frame(page)
        wait_for(lambda: "after TritonGPUCoalesce" in frame.locator(".pane[data-pane=passes] .meta").inner_text(),
                 "the pane shows the coalescing pass")
        assert frame.locator(".pane[data-pane=passes] .r", has_text="#blocked1").count() >= 1
        # find in the PTX pane: every match marked, Enter steps through them
        find = frame.locator(".pane[data-pane=ptx] input.find")
        find.fill("ld.global")
        found = frame.locator(".pane[data-pane=ptx] .found")
        wait_for(lambda: found.inner_text().startswith("1 of "), "the first match")
        total = int(found.inner_text().split(" of ")[1])
        assert total == frame.locator(".pane[data-pane=ptx] .r.match").count() >= 2
        find.press("Enter")
        assert found.inner_text() == f"2 of {total}"
        find.press("Shift+Enter")
        assert found.inner_text() == f"1 of {total}"
        page.screenshot(path=str(SHOTS / "pass-picker-and-find.png"))


def _select_editor_line(page, text: str) -> int:
    editor_frame(page).locator(".cm-line", has_text=text).first.click()
    return int(workbench_frame(page).evaluate("() => document.body.dataset.selected").split(":")[1])


def test_the_selected_line_survives_a_target_switch(context, server):
    url, _ = server
    page = open_page(context, url, "kernel=add&target=gfx942", "add.py for gfx942")
    with diagnosed(page, SHOTS.parent / "streamlit-browser-page.log"):
        _select_editor_line(page, "tl.store(out_ptr")  # remembered for gfx942
        choose(page, "Target", "sm_90")
        page.get_by_text("Compiled add.py for sm_90").first.wait_for()
        wait_idle(page)
        line = _select_editor_line(page, "x = tl.load(x_ptr")
        choose(page, "Target", "gfx942")
        page.get_by_text("Compiled add.py for gfx942").first.wait_for()
        wait_idle(page)
        frame = workbench_frame(page)
        wait_for(lambda: frame.evaluate("() => document.body.dataset.panes") == "amdgcn", "the AMDGCN pane")
        assert frame.evaluate("() => document.body.dataset.selected") == f"source:{line}"
        hits = frame.locator(".pane[data-pane=amdgcn] .r.hit")
        assert hits.count() >= 1 and "_load_dword" in " ".join(hits.all_inner_texts())  # the load, not the store


def test_show_line_brings_the_workbench_on_screen(context, server):
    url, _ = server
    page = open_page(context, url, "kernel=add&target=sm_90&a.n=4095", "add.py for sm_90")
    with diagnosed(page, SHOTS.parent / "streamlit-browser-page.log"):
        button = page.get_by_role("button", name="Show line").last
        button.scroll_into_view_if_needed()
        wanted = int(button.inner_text().split()[-1])
        workbench = page.locator('iframe[title="inspector.ui.workbench.workbench"]')
        assert workbench.bounding_box()["y"] < -100  # the editor's top is off screen
        button.click()
        frame = workbench_frame(page)
        wait_for(lambda: frame.evaluate("() => document.body.dataset.focusedLine") == str(wanted), "the line focused")

        def on_screen():
            box = workbench.bounding_box()
            return box is not None and box["y"] >= -1 and box["y"] + box["height"] <= VIEWPORT["height"] + 1
        wait_for(on_screen, "the workbench scrolled into view")
        assert frame.evaluate("() => document.body.dataset.selected") == f"source:{wanted}"


def test_another_kernel_starts_clean(context, server, tmp_path):
    url, _ = server
    page = open_page(context, url, "kernel=matmul&target=sm_90&warps=8", "matmul.py for sm_90")
    with diagnosed(page, SHOTS.parent / "streamlit-browser-page.log"):
        mine = tmp_path / "twice.py"
        mine.write_text("import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
                        "def twice(x_ptr, n, BLOCK: tl.constexpr = 128):\n"
                        "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
                        "    tl.store(x_ptr + offs, 2 * tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)\n")
        kernel_upload(page).set_input_files(str(mine))
        page.get_by_text("Compiled twice.py for sm_90").first.wait_for()
        wait_idle(page)
        assert "warps=" not in page.url  # matmul's num_warps did not follow into the upload
        uploaded = page.locator("[data-testid=stFileUploaderFile]")
        assert uploaded.count() == 0  # the uploader is not left showing a file
        opener = page.get_by_placeholder("liger_kernel.ops.rms_norm")
        opener.fill("no_such_module_for_the_test")
        opener.press("Enter")
        page.get_by_text("no_such_module_for_the_test").first.wait_for()
        wait_idle(page)
        page.get_by_role("button", name="New kernel").click()
        page.get_by_text("Compiled untitled-1.py for sm_90").first.wait_for()
        wait_idle(page)
        assert page.get_by_text("no_such_module_for_the_test").count() == 0
        frame = workbench_frame(page)
        assert frame.locator(".pane .count", has_text="0 lines").count() == 0
        frame.locator("button.share").click()
        link = wait_for(lambda: frame.evaluate("() => document.body.dataset.shareLink"), "the share link")
        assert "warps=" not in link and "warps=" not in page.url


def replace_line(page, line_text: str, new_text: str) -> None:
    """Select the editor line holding `line_text` and type `new_text` over it."""
    editor_frame(page).locator(".cm-line", has_text=line_text).first.click()
    page.keyboard.press("End")
    page.keyboard.press("Shift+Home")
    page.keyboard.press("Shift+Home")  # past the indentation too
    page.keyboard.type(new_text)


LAUNCH = "add_kernel[(triton.cdiv(n, BLOCK),)]"


def test_an_override_shows_as_a_chip_and_is_dropped_when_the_file_passes_the_argument(context, server):
    """The stale override of the newcomer pass: `n` left out of the launch and given in the form
    (1024) is shown in the header; once the file passes `n` again (1000), the override is dropped,
    said so, and the file's call is what compiles."""
    url, _ = server
    page = open_page(context, url, "kernel=add&target=sm_90", "add.py for sm_90")
    with diagnosed(page, SHOTS.parent / "streamlit-browser-page.log"):
        replace_line(page, LAUNCH, f"    {LAUNCH}(x, y, out, BLOCK=BLOCK)")
        page.keyboard.press("Control+Enter")
        form_field = page.get_by_label("n (argument)")
        form_field.wait_for()
        assert form_field.input_value() == "4096"  # suggested from the launch's tensors
        form_field.fill("1024")
        page.get_by_role("button", name="Compile with these values").click()
        chip = page.get_by_role("button", name="n = 1024 · file: nothing")
        chip.wait_for()
        wait_idle(page)
        assert "a.n=1024" in page.url

        replace_line(page, LAUNCH, f"    {LAUNCH}(x, y, out, 1000, BLOCK=BLOCK)")
        page.keyboard.press("Control+Enter")
        page.get_by_text("the file now passes 1000, so the override was dropped").first.wait_for()
        wait_idle(page)
        assert chip.count() == 0 and "a.n=" not in page.url
        page.screenshot(path=str(SHOTS / "override-dropped.png"), full_page=True)
        sidebar = page.locator("[data-testid=stSidebar]")
        sidebar.get_by_text("Call", exact=True).click()
        field = sidebar.get_by_label("n (i32)", exact=False)
        assert field.input_value() == "" and field.get_attribute("placeholder") == "1000"

        # An override of a value the file passes is kept while the file keeps passing it.
        field.fill("2000")
        field.press("Enter")
        page.get_by_role("button", name="n = 2000 · file: 1000").wait_for()
        wait_idle(page)
        assert "a.n=2000" in page.url
        page.screenshot(path=str(SHOTS / "override-chip.png"))


def test_a_tab_switch_reruns_nothing_and_the_url_keeps_the_view(context, server):
    """The views are browser-side tabs: switching sends nothing to the server (no rerun), the URL
    says the view (a reload and a share link open it), and the tab's content is there."""
    url, _ = server
    page = context.new_page()
    page.set_default_timeout(WAIT_MS)
    sent: list[str] = []
    page.on("websocket", lambda ws: ws.on("framesent", lambda frame: sent.append("frame")))
    page.goto(f"{url}/?kernel=add&target=sm_90")
    page.get_by_text("Compiled add.py for sm_90").first.wait_for()
    with diagnosed(page, SHOTS.parent / "streamlit-browser-page.log"):
        wait_idle(page)
        before = len(sent)
        page.get_by_role("tab", name="Occupancy").click()
        page.get_by_text("Occupancy (what-if)").first.wait_for(state="visible")
        wait_for(lambda: "view=occupancy" in page.url, "the view in the URL")
        page.get_by_role("tab", name="Every GPU").click()
        wait_for(lambda: "view=fits" in page.url, "the next view in the URL")
        assert len(sent) == before, "a tab switch sent the server a message (a rerun)"
        page.reload()
        page.get_by_text("Registers / thread").first.wait_for()
        wait_idle(page)
        selected = page.get_by_role("tab", selected=True)
        assert selected.inner_text().strip() == "Every GPU"


def test_diff_has_a_row_per_access_with_its_width_sectors_and_use(context, server):
    """Pin a compile, make the size odd (n = 4095): the Diff tab lists each access with its width,
    sectors per request and share used on both sides."""
    url, _ = server
    page = open_page(context, url, "kernel=add&target=sm_90", "add.py for sm_90")
    with diagnosed(page, SHOTS.parent / "streamlit-browser-page.log"):
        page.get_by_role("tab", name="Diff").click()
        page.get_by_role("button", name="Pin this compile as A").click()
        wait_idle(page)
        sidebar = page.locator("[data-testid=stSidebar]")
        sidebar.get_by_text("Call", exact=True).click()
        field = sidebar.get_by_label("n (i32)", exact=False)
        field.fill("4095")
        field.press("Enter")
        table = page.locator("table", has_text="sectors / request")
        table.wait_for()
        wait_idle(page)
        rows = table.locator("tbody tr")
        texts = [rows.nth(i).inner_text() for i in range(rows.count())]
        assert len([t for t in texts if "x_ptr" in t or "y_ptr" in t or "out_ptr" in t]) == 3, texts
        for t in texts:
            assert "vectorised → scalar" in t and "128 bits → 32 bits" in t and "100% → 25%" in t, t
            assert "16 (ideal 16) → 16 (ideal 4)" in t, t
        page.screenshot(path=str(SHOTS / "diff-access-rows.png"), full_page=True)
