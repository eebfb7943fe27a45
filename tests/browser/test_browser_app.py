"""End to end in a real headless Chromium: `streamlit run app.py`, then what a user does.

Screenshots go to test-artifacts/screenshots/. Every page also checks that nothing was fetched
from outside the app (the editor, plots and fonts all come from the server).
"""

from __future__ import annotations

import time
from urllib.parse import parse_qs, urlparse

import pytest

from inspector.testing.browser import (REPO, choose, editor_text, kernel_upload, local_page, marker_on_line,
                                       metric, new_context, panes_frame, type_at_line_end, wait_for,
                                       wait_for_editor_text, wait_idle)
from browser_support import SHOTS, serve

pytestmark = [pytest.mark.browser, pytest.mark.long]
WAIT_MS = 120_000  # a cold compile on a slow CI machine


@pytest.fixture(scope="module")
def server(browser, tmp_path_factory):
    yield from serve(tmp_path_factory, "browser-tests")


@pytest.fixture
def page(browser, server):
    yield from local_page(browser, 1200, WAIT_MS)


def workspace_dir(page, home):
    """This page's workspace folder (its key is in the URL)."""
    return home / "workspaces" / parse_qs(urlparse(page.url).query)["ws"][0]


def wait_metric(page, label: str, value: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while metric(page, label) != value:
        assert time.monotonic() < deadline, f"{label} stayed {metric(page, label)!r}, expected {value!r}"
        time.sleep(0.1)


def click_row(page, row) -> None:
    """A real mouse click near the start of a pane row (Playwright's own click would first scroll
    the row's centre into view, panning wide panes sideways)."""
    row.evaluate("""el => { const code = el.closest('.code');
        const d = el.getBoundingClientRect().top - code.getBoundingClientRect().top;
        if (d < 0 || d > code.clientHeight - 24) code.scrollTop += d - code.clientHeight / 3; }""")
    box = row.bounding_box()
    page.mouse.click(box["x"] + 60, box["y"] + box["height"] / 2)


def test_pick_vector_add_compile_sm90_and_link_source_to_ptx(page, server):
    url, _ = server
    page.goto(f"{url}/?kernel=softmax&target=sm_80&panes=ttgir,ptx")
    page.get_by_text("Registers / thread").first.wait_for()
    choose(page, "Kernel", "Vector add")
    choose(page, "Target", "sm_90")
    page.get_by_text("Compiled add.py for sm_90").first.wait_for()
    wait_idle(page)
    assert "kernel=add" in page.url and "target=sm_90" in page.url and "panes=ttgir%2Cptx" in page.url

    frame = panes_frame(page)
    assert frame.evaluate("document.body.dataset.panes") == "ttgir,ptx"
    ptx_loads = frame.locator(".pane[data-pane=ptx] .r", has_text="ld.global.v4.b32")
    assert ptx_loads.count() >= 2
    frame.locator(".cm-line", has_text="x = tl.load(x_ptr").click()
    hits = frame.locator(".pane[data-pane=ptx] .r.hit")
    hits.first.wait_for()
    assert any("ld.global.v4.b32" in t for t in hits.all_inner_texts())
    assert frame.locator(".pane[data-pane=ttgir] .r.hit", has_text="tt.load").count() >= 1
    # And the other way: a PTX line selects its source line in the editor.
    click_row(page, frame.locator(".pane[data-pane=ptx] .r", has_text="st.global.v4.b32").first)
    frame.locator(".cm-line.cm-hit").first.wait_for()
    assert "tl.store" in frame.locator(".cm-line.cm-hit").first.inner_text()
    frame.locator(".cm-line", has_text="x = tl.load(x_ptr").click()
    page.screenshot(path=str(SHOTS / "stages-linked.png"))
    assert_rows_numbered(page, frame, "ptx")
    # A pane picked in its header replaces that stage (the URL follows); the layout is the page's.
    frame.locator(".pane[data-pane=ttgir] select.stage-pick").select_option("ttir")
    frame = wait_for(lambda: _frame_with_panes(page, "ttir,ptx"), "the TTIR pane")
    # the URL follows when the page's run that drew the panes ends (it writes the query last)
    page.wait_for_url(lambda u: "panes=ttir%2Cptx" in u)


def _frame_with_panes(page, panes: str):
    try:
        frame = panes_frame(page, timeout_ms=2000)
    except TimeoutError:
        return None
    return frame if frame.evaluate("document.body.dataset.panes") == panes else None




def assert_rows_numbered(page, frame, pane: str) -> None:
    """The line numbers are drawn by CSS (no DOM text): compare the painted gutters of the first
    rows, which must all differ ("1", "2", "3", ...), and row 1's with row 11's (same width)."""
    code = frame.locator(f".pane[data-pane={pane}] .code")
    code.evaluate("el => { el.scrollTop = 0; el.scrollLeft = 0; }")
    rows = frame.locator(f".pane[data-pane={pane}] .r:not(.n)")  # directives and comments are hidden
    gutters = []
    for i in (0, 1, 2, 10):
        box = rows.nth(i).bounding_box()
        gutters.append(page.screenshot(clip={"x": box["x"], "y": box["y"], "width": 48, "height": box["height"]}))
    assert len(set(gutters)) == 4, "rows show the same line number"


def test_what_if_num_warps_slider_changes_occupancy(page, server):
    url, _ = server
    page.goto(f"{url}/?kernel=add&target=sm_90&view=occupancy")
    page.get_by_text("Occupancy (what-if)").first.wait_for()
    assert metric(page, "Occupancy (what-if)") == "100%"
    slider = page.get_by_role("slider", name="num_warps")
    slider.focus()
    slider.press("Home")  # 1 warp: 32-thread blocks, capped at 32 blocks per SM
    wait_metric(page, "Occupancy (what-if)", "50%")
    wait_idle(page)
    # The compiled kernel's figures above the editor are unchanged.
    assert "Occupancy 100%" in page.get_by_text("Registers / thread").first.inner_text()
    page.locator("[data-testid=stPlotlyChart]").first.scroll_into_view_if_needed()
    page.screenshot(path=str(SHOTS / "occupancy-what-if.png"), full_page=True)


def test_broken_syntax_shows_the_error_line_and_keeps_the_text(page, server):
    url, home = server
    page.goto(f"{url}/?kernel=add&target=sm_90")
    page.get_by_text("Registers / thread").first.wait_for()
    type_at_line_end(page, "mask = offs < n", ")")
    page.keyboard.press("Control+Enter")
    err = page.locator("[data-testid=stAlertContentError]", has_text="Syntax error")
    err.wait_for()
    bundled = (REPO / "kernels" / "add.py").read_text()
    n = bundled.split("\n").index("    mask = offs < n") + 1
    assert f"line {n}" in err.inner_text()
    wait_for_editor_text(page, "mask = offs < n)")
    saved = workspace_dir(page, home) / "edits" / "add.py"
    assert "mask = offs < n)" in saved.read_text()
    assert (REPO / "kernels" / "add.py").read_text() == bundled
    page.locator("[data-testid=stCode]", has_text=f"> {n:4d} |").wait_for()  # the excerpt around the line
    page.screenshot(path=str(SHOTS / "syntax-error.png"), full_page=True)

    page.reload()  # the text survives a reload: the editor reopens on the saved copy
    page.locator("[data-testid=stAlertContentError]", has_text="Syntax error").wait_for()
    wait_for(lambda: "mask = offs < n)" in editor_text(page), "the edited text back after a reload", 30)

    page.get_by_role("button", name="Revert to bundled add.py").click()
    page.get_by_text("Compiled add.py for sm_90").first.wait_for()
    assert not saved.exists()


def test_text_typed_just_before_switching_kernel_is_kept(page, server):
    url, home = server
    page.goto(f"{url}/?kernel=gelu&target=sm_90")
    page.get_by_text("Registers / thread").first.wait_for()
    wait_idle(page)
    type_at_line_end(page, "import triton.language as tl", "  # typed, then straight to another kernel")
    choose(page, "Kernel", "Vector add")  # no pause: the debounced save has not fired yet
    page.get_by_text("Compiled add.py for sm_90").first.wait_for()
    wait_idle(page)
    saved = workspace_dir(page, home) / "edits" / "gelu.py"
    assert "import triton.language as tl  # typed, then straight to another kernel" in saved.read_text()
    choose(page, "Kernel", next(line.split('"')[1] for line in (REPO / "kernels" / "gelu.py").read_text().split("\n")
                                if line.startswith("TITLE = ")))
    page.get_by_text("Compiled gelu.py for sm_90").first.wait_for()
    wait_for(lambda: "# typed, then straight to another kernel" in editor_text(page),
             "the editor reopened with the typed text", 30)
    page.get_by_role("button", name="Revert to bundled gelu.py").click()
    page.get_by_text("Compiled gelu.py for sm_90").first.wait_for()
    wait_idle(page)
    assert not saved.exists()


def _upload(page, url: str, path) -> None:
    """Open the page, upload `path` as a kernel file and wait for its first compile (sm_90)."""
    page.goto(f"{url}/?kernel=add&target=sm_90")
    page.get_by_text("Registers / thread").first.wait_for()
    wait_idle(page)
    kernel_upload(page).set_input_files(str(path))
    page.get_by_text(f"Compiled {path.name.replace(' ', '_')} for sm_90").first.wait_for()
    wait_idle(page)


def test_upload_a_kernel_file(page, server, tmp_path):
    url, home = server
    mine = tmp_path / "scale kernel.py"
    mine.write_text(
        'import triton\nimport triton.language as tl\n\nTITLE = "Scale by two"\n\n\n@triton.jit\n'
        "def scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr = 256):\n"
        "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
        "    tl.store(out_ptr + offs, 2 * tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)\n")
    _upload(page, url, mine)
    assert "kernel=file%3Ascale_kernel.py" in page.url or "kernel=file:scale_kernel.py" in page.url
    assert (workspace_dir(page, home) / "files" / "scale_kernel.py").read_text() == mine.read_text()
    wait_for_editor_text(page, "def scale_kernel")
    frame = panes_frame(page)
    assert frame.locator(".pane[data-pane=ptx] .r", has_text="ld.global").count() >= 1


def test_a_helion_file_opens_with_its_generated_triton_linked_to_the_editor(page, server, tmp_path):
    """A Helion kernel file uploaded: the editor holds the Helion text, the generated Triton stands
    beside the PTX, and a click on the Helion line that indexes `x` lights the generated loads and
    the PTX's; the load's gutter marker sits on the Helion line."""
    url, _ = server
    mine = tmp_path / "row_softmax.py"
    mine.write_text((REPO / "tests" / "fixtures" / "helion" / "row_softmax.py").read_text())
    _upload(page, url, mine)
    frame = panes_frame(page)
    assert "triton" in frame.evaluate("document.body.dataset.panes").split(",")
    frame.locator(".cm-line", has_text="row = x[tile, :].to(torch.float32)").click()
    generated = frame.locator(".pane[data-pane=triton] .r.hit")
    generated.first.wait_for()
    assert any("tl.load(x +" in s for s in generated.all_inner_texts())
    ptx = frame.locator(".pane[data-pane=ptx] .r.hit")
    ptx.first.wait_for()
    assert any("ld.global" in s for s in ptx.all_inner_texts())
    load_line = mine.read_text().split("\n").index("        row = x[tile, :].to(torch.float32)") + 1
    assert wait_for(lambda: marker_on_line(frame, load_line), f"the load's marker on Helion line {load_line}")


def test_eight_sessions_compiling_at_once_get_their_own_results(browser, server):
    """Eight users open different kernels, targets and warps at the same moment; each page must
    show its own compile (kernel, target, warps), none another session's."""
    url, _ = server
    jobs = [("add", "add_kernel", "sm_89", 2), ("softmax", "softmax_kernel", "sm_80", 4),
            ("gelu", "gelu_kernel", "gfx942", 8), ("layer_norm", "layer_norm_kernel", "sm_120", 4),
            ("copy_coalesced_vs_strided", "copy_coalesced_kernel", "sm_100", 2),
            ("register_spill", "rms_norm_kernel", "gfx950", 4), ("add", "add_kernel", "sm_86", 8),
            ("gelu", "gelu_kernel", "sm_80", 1)]
    contexts, pages = [], []
    for kernel, _, target, warps in jobs:  # open all eight before waiting for any
        ctx = new_context(browser, viewport={"width": 1400, "height": 1000})
        pg = ctx.new_page()
        pg.set_default_timeout(WAIT_MS)
        pg.goto(f"{url}/?kernel={kernel}&target={target}&warps={warps}", wait_until="commit")
        contexts.append(ctx)
        pages.append(pg)
    try:
        for pg, (kernel, function, target, warps) in zip(pages, jobs):
            pg.get_by_text(f"Compiled {kernel}.py for {target}").first.wait_for()
            wait_idle(pg)
            caption = pg.get_by_text(f"{function} for").first.inner_text()
            assert f"{warps} warps ×" in caption, caption
            assert f"{kernel}.py" in pg.get_by_text("Compiled ").first.inner_text()
            # ... and not any other session's kernel/target pair
            others = {(k, t) for k, _, t, _ in jobs} - {(kernel, target)}
            for k, t in others:
                assert pg.get_by_text(f"Compiled {k}.py for {t}").count() == 0
    finally:
        for ctx in contexts:
            ctx.close()


def test_cancel_a_running_compile(page, server, tmp_path):
    """A kernel whose example() never returns: the Cancel button stops it at once (not at the
    timeout), the page says "Cancelled", and the next compile works."""
    url, _ = server
    slow = tmp_path / "slow_example.py"
    slow.write_text((REPO / "kernels" / "add.py").read_text().replace(
        'def example(device):\n', 'def example(device):\n    import time\n    time.sleep(600)\n', 1))
    page.goto(f"{url}/?kernel=add&target=sm_90")
    page.get_by_text("Registers / thread").first.wait_for()
    wait_idle(page)
    kernel_upload(page).set_input_files(str(slow))
    cancel = page.get_by_role("button", name="Cancel")
    cancel.wait_for()
    page.get_by_text("Compiling slow_example.py").first.wait_for()
    cancel.click()
    # "Cancelled", not the 60 s timeout's message: the cancel, not the clock, ended it.
    page.locator("[data-testid=stAlertContentError]", has_text="Cancelled").wait_for()
    page.get_by_role("button", name="Cancel").wait_for(state="detached")  # gone once the page reran
    page.screenshot(path=str(SHOTS / "compile-cancelled.png"), full_page=True)
    # A reload does not start the same hang again by itself: it says why, and waits for Compile.
    page.reload()
    page.get_by_text("Not compiled on opening").first.wait_for()
    wait_idle(page)
    assert page.get_by_text("Compiling slow_example.py").count() == 0
    assert page.get_by_role("button", name="Cancel").count() == 0
    choose(page, "Kernel", "Vector add")
    page.get_by_text("Compiled add.py for sm_90").first.wait_for()
