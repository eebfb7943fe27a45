"""The page a kernel author keeps open, in a real headless Chromium at 1600x1000: the editor and
the PTX side by side without scrolling, a click on the editor's `tl.load` line lighting its PTX
lines, the scalar-load marker (n = 4095) on that editor line with its reason on hover, "New
kernel" compiling its template, and a shared link opening the same text and PTX in a fresh
browser context without touching the recipient's files.

Every wait is on the page's state (or a file the page saved), never a fixed sleep, so the tests
hold on a loaded machine.
"""

from __future__ import annotations

import json

from urllib.parse import parse_qs, urlparse

import pytest

from inspector.testing.browser import (REPO, editor_text, is_local, marker_on_line, new_context,
                                       type_at_line_end, wait_for, wait_for_editor_text, wait_idle,
                                       workbench_frame)
from browser_support import SHOTS

pytestmark = [pytest.mark.browser, pytest.mark.long]
WAIT_MS = 180_000  # a cold compile on a loaded CI machine
VIEWPORT = {"width": 1600, "height": 1000}


@pytest.fixture
def new_page(browser):
    """Pages in fresh browser contexts (each one a user); nothing fetched from outside the app."""
    made, requests = [], []

    def new():
        ctx = new_context(browser, viewport=VIEWPORT)
        ctx.on("request", lambda r: requests.append(r.url))
        made.append(ctx)
        pg = ctx.new_page()
        pg.set_default_timeout(WAIT_MS)
        return pg

    yield new
    for ctx in made:
        ctx.close()
    outside = [u for u in requests if not is_local(u)]
    assert not outside, f"fetched from outside the app: {outside}"


def workspace_dir(page, home):
    return home / "workspaces" / parse_qs(urlparse(page.url).query)["ws"][0]




def open_compiled(page, url: str, query: str, label: str):
    """Open the app at `query`, wait for the compile of `label` and the panes; the workbench frame."""
    page.goto(f"{url}/?{query}")
    page.get_by_text(f"Compiled {label}").first.wait_for()
    wait_idle(page)
    return workbench_frame(page)


def ptx_text(frame) -> str:
    """The PTX pane's code: without its `.file` directives and debug sections, which spell out the
    file's own path (each user's workspace)."""
    rows = frame.evaluate("() => Array.from(document.querySelectorAll('.pane[data-pane=ptx] .r'))"
                          ".map(r => r.textContent)")
    code = []
    for r in rows:
        if r.lstrip().startswith(".section"):
            break
        if not r.lstrip().startswith(".file"):
            code.append(r)
    assert len(code) > 50, "no PTX code"
    return "\n".join(code)


def test_editor_and_ptx_side_by_side_and_a_click_on_tl_load_lights_the_ptx(new_page, server):
    url, _ = server
    page = new_page()
    frame = open_compiled(page, url, "kernel=add&target=sm_90", "add.py for sm_90")
    editor = frame.locator(".pane.source .cm-scroller").bounding_box()
    ptx = frame.locator(".pane[data-pane=ptx] .code").bounding_box()
    # Both on screen at once, without scrolling the page: inside the 1600x1000 viewport (Playwright's
    # boxes are in the page's coordinates), side by side, each at least 400 px tall.
    for box in (editor, ptx):
        assert box["y"] >= 0 and box["y"] + 400 <= VIEWPORT["height"], box
        assert box["x"] >= 0 and box["x"] + box["width"] <= VIEWPORT["width"] + 1, box
    assert ptx["x"] >= editor["x"] + editor["width"] - 1 and abs(ptx["y"] - editor["y"]) < 60
    assert page.evaluate("() => window.scrollY") == 0
    # The lines a user came for are not clipped: the widest vector load fits its pane.
    wide = frame.locator(".pane[data-pane=ptx] .r", has_text="ld.global.v4.b32").first
    assert wide.evaluate("""el => { const r = document.createRange(); r.selectNodeContents(el);
        return r.getBoundingClientRect().right <= el.closest('.code').getBoundingClientRect().right; }"""), \
        "the PTX load is clipped"

    frame.locator(".cm-line", has_text="x = tl.load(x_ptr").click()
    wait_for(lambda: frame.locator(".pane[data-pane=ptx] .r.hit").count(), "PTX lines lit by the click")
    lit = frame.locator(".pane[data-pane=ptx] .r.hit").all_inner_texts()
    assert any("ld.global.v4.b32" in t for t in lit), lit
    assert frame.evaluate("document.body.dataset.selected").startswith("source:")
    # Every lit line is one the map gives for that source line, and the first is in the pane's view.
    assert frame.evaluate("""() => {
        const code = document.querySelector('.pane[data-pane=ptx] .code');
        const hit = code.querySelector('.r.hit').getBoundingClientRect(), box = code.getBoundingClientRect();
        return hit.top >= box.top && hit.bottom <= box.bottom; }""")
    # And back: a PTX store lights its source line in the editor.
    frame.locator(".pane[data-pane=ptx] .r", has_text="st.global.v4.b32").first.click(position={"x": 60, "y": 8})
    wait_for(lambda: frame.locator(".cm-line.cm-hit").count(), "the editor line lit by a PTX click")
    assert "tl.store" in frame.locator(".cm-line.cm-hit").first.inner_text()
    page.screenshot(path=str(SHOTS / "workbench-linked.png"))


def test_directives_and_debug_sections_hidden_until_asked_with_line_numbers_kept(new_page, server):
    url, _ = server
    page = new_page()
    frame = open_compiled(page, url, "kernel=add&target=sm_90", "add.py for sm_90")
    loc_row = frame.locator(".pane[data-pane=ptx] .r.n", has_text=".loc").first
    load_row = frame.locator(".pane[data-pane=ptx] .r", has_text="ld.global.v4.b32").first
    load_id = load_row.get_attribute("id")
    assert loc_row.evaluate("el => el.getBoundingClientRect().height") == 0  # hidden by default
    hidden = frame.locator(".pane[data-pane=ptx] .r.n").count()
    assert hidden > frame.locator(".pane[data-pane=ptx] .r:not(.n)").count()  # most of the PTX is noise
    frame.locator(".pane[data-pane=ptx] button.noise").click()
    wait_for(lambda: loc_row.evaluate("el => el.getBoundingClientRect().height") > 0, "the .loc lines shown")
    assert load_row.get_attribute("id") == load_id  # the same line number, hidden lines or not
    # the choice is kept for the next page
    assert frame.evaluate("() => localStorage.getItem('tki:quiet')") == "0"
    frame.locator(".pane[data-pane=ptx] button.noise").click()
    wait_for(lambda: loc_row.evaluate("el => el.getBoundingClientRect().height") == 0, "the .loc lines hidden again")


def test_scalar_load_marker_on_the_editor_line_with_the_reason_on_hover(new_page, server):
    url, _ = server
    page = new_page()
    frame = open_compiled(page, url, "kernel=add&target=sm_90&a.n=4095", "add.py for sm_90")
    bundled = (REPO / "kernels" / "add.py").read_text().split("\n")
    line = bundled.index("    x = tl.load(x_ptr + offs, mask=mask)") + 1
    marker = wait_for(lambda: marker_on_line(frame, line), "the marker on the tl.load line")
    assert "memory-scalar" in marker.get_attribute("data-kinds")
    assert "sev-performance" in marker.get_attribute("class")
    marker.hover()
    tip = frame.locator(".tip")
    tip.wait_for(state="visible")
    text = tip.inner_text()
    assert "scalar load" in text and "n (= 4095)" in text and "multiple of 16" in text, text
    assert "`" not in text and tip.locator("code", has_text="n").count() >= 1  # code set as code
    assert len(text.splitlines()) == len(set(text.splitlines()))  # no reason twice
    # below the line or above it, never over it
    t, m = tip.bounding_box(), marker.bounding_box()
    assert t["y"] >= m["y"] + m["height"] - 1 or t["y"] + t["height"] <= m["y"] + 1, (t, m)
    # the mouse leaving the workbench takes the box away
    page.mouse.move(5, 5)
    tip.wait_for(state="hidden")
    # The same verdict marks the scalar PTX loads, and a 128-bit compile shows none.
    assert frame.locator(".pane[data-pane=ptx] .r .mk.sev-performance").count() >= 2
    page.screenshot(path=str(SHOTS / "workbench-scalar-marker.png"))


def test_strided_copy_shows_its_sector_use_and_a_warp_drawing_on_hover(new_page, server):
    url, _ = server
    page = new_page()
    frame = open_compiled(page, url, "kernel=copy_coalesced_vs_strided&fn=copy_strided_kernel&target=sm_90",
                          "copy_coalesced_vs_strided.py for sm_90")
    bundled = (REPO / "kernels" / "copy_coalesced_vs_strided.py").read_text().split("\n")
    line = next(i for i, t in enumerate(bundled, 1) if "tl.load(src_ptr + offs.to(tl.int64) * stride" in t)
    from playwright.sync_api import Error as PlaywrightError  # here: the GPU machine has no playwright

    tip = frame.locator(".tip")

    def hovered() -> str:
        """The hover box's text over the line's marker ("" if a redraw replaced the marker or hid the
        box meanwhile: a loaded machine may still be drawing the page's last rerun)."""
        try:
            marker = marker_on_line(frame, line)
            if marker is None:
                return ""
            kinds = marker.get_attribute("data-kinds")
            assert "coalescing-uncoalesced" in kinds and "memory-scalar" in kinds, kinds
            marker.hover()
            tip.wait_for(state="visible", timeout=10_000)
            return tip.inner_text() if "sectors" in tip.inner_text() and tip.locator("svg.warp").count() else ""
        except PlaywrightError:
            return ""

    text = wait_for(hovered, "the hover box over the strided load's marker")
    # stride 8 in the example: lanes 4 x 8 x 4 = 128 bytes apart, a sector each, for 4 sectors of bytes
    assert "32 sectors per request where 4 would do (12% used)" in text, text
    # one line per access (the load and the store share the line), each fact once
    assert sum(line.startswith("[") for line in text.splitlines()) == 2, text
    drawing = tip.locator("svg.warp")
    assert drawing.locator("rect.lane").count() == 32 and drawing.locator("rect.sector").count() == 32
    assert "32 sectors of 32 B touched, 4 needed" in drawing.text_content()
    page.screenshot(path=str(SHOTS / "workbench-uncoalesced-hover.png"))
    # the Insight tab's memory table says it too, and the teaching pair opens both kernels
    page.get_by_text("The pair, side by side").first.wait_for()
    for name in ("copy_coalesced_kernel", "copy_strided_kernel"):
        page.get_by_text(name).first.wait_for()
    wait_for(lambda: page.get_by_text("Recorded:").count() >= 2, "both halves' recorded times")
    page.mouse.move(2, 2)
    page.get_by_text("The pair, side by side").first.evaluate("el => el.scrollIntoView()")
    page.screenshot(path=str(SHOTS / "pair-side-by-side.png"))


def test_the_conflicted_transpose_draws_its_banks_on_hover(new_page, server):
    """The gallery's transpose pair opens its conflicted half: the read line's gutter marker costs
    speed, and its hover draws one phase's lanes over the 32 banks (8 words in the busiest)."""
    url, _ = server
    page = new_page()
    frame = open_compiled(page, url, "kernel=transpose_shared_gluon&target=sm_90", "transpose_shared_gluon.py for sm_90")
    bundled = (REPO / "kernels" / "transpose_shared_gluon.py").read_text().split("\n")
    line = next(i for i, t in enumerate(bundled, 1) if "t = buffer.load(cols_fast)" in t)
    from playwright.sync_api import Error as PlaywrightError

    tip = frame.locator(".tip")

    def hovered() -> str:
        try:
            marker = marker_on_line(frame, line)
            if marker is None or "shared-conflicts" not in (marker.get_attribute("data-kinds") or ""):
                return ""
            marker.hover()
            tip.wait_for(state="visible", timeout=10_000)
            return tip.inner_text() if tip.locator("svg.warp").count() else ""
        except PlaywrightError:
            return ""

    text = wait_for(hovered, "the hover box over the conflicted read's marker")
    assert "8 wavefronts per request (ideal 1), 8-way bank conflicts" in text and "not swizzled" in text, text
    assert text.count("wavefronts per request") == 1, text  # one fact, said once
    drawing = tip.locator("svg.warp")
    assert drawing.locator("rect.sector").count() == 32  # the 32 banks
    assert "busiest serves 8 words" in drawing.text_content()
    page.screenshot(path=str(SHOTS / "workbench-bank-conflicts-hover.png"))


def test_new_kernel_compiles_its_template(new_page, server):
    url, home = server
    page = new_page()
    open_compiled(page, url, "kernel=add&target=sm_90", "add.py for sm_90")
    page.get_by_role("button", name="New kernel").click()
    page.get_by_text("Compiled untitled-1.py for sm_90").first.wait_for()
    wait_idle(page)
    frame = workbench_frame(page)
    assert "kernel=file%3Auntitled-1.py" in page.url or "kernel=file:untitled-1.py" in page.url
    wait_for_editor_text(page, "A new kernel")
    assert frame.locator(".pane[data-pane=ptx] .r", has_text="ld.global").count() >= 1
    assert (workspace_dir(page, home) / "files" / "untitled-1.py").is_file()
    assert (REPO / "kernels" / "add.py").read_text().startswith('"""Vector add')


def test_shared_link_opens_the_same_text_and_ptx_in_a_fresh_context(new_page, server):
    url, home = server
    author = new_page()
    open_compiled(author, url, "kernel=add&target=sm_90&warps=2", "add.py for sm_90")
    # An edit that changes the PTX: a constant (0.5 = 0f3F000000) added to every element.
    frame = workbench_frame(author)
    frame.locator(".cm-line", has_text="tl.store(out_ptr + offs, x + y, mask=mask)").click()
    author.keyboard.press("End")
    for _ in range(len("x + y, mask=mask)")):
        author.keyboard.press("ArrowLeft")
    author.keyboard.type("0.5 + ")
    author.keyboard.press("Control+Enter")
    wait_for(lambda: "0.5 + x + y" in (workspace_dir(author, home) / "edits" / "add.py").read_text()
             if (workspace_dir(author, home) / "edits" / "add.py").exists() else False, "the edit saved")
    author.get_by_text("Compiled add.py for sm_90").first.wait_for()
    wait_idle(author)
    frame = wait_for(lambda: _frame_with(author, "0f3F000000"), "the edited kernel's PTX")
    edited_text = editor_text(author)
    edited_ptx = ptx_text(frame)
    frame.locator("button.share").click()
    link = wait_for(lambda: frame.evaluate("document.body.dataset.shareLink"), "the share link")
    assert "src=" in link and "ws=" not in link and "warps=2" in link

    # The recipient already has work of their own in their own workspace: it must stay as it is.
    recipient = new_page()
    open_compiled(recipient, url, "kernel=add&target=sm_90", "add.py for sm_90")
    type_at_line_end(recipient, "import triton.language as tl", "  # the recipient's own edit")
    mine = workspace_dir(recipient, home) / "edits" / "add.py"
    wait_for(lambda: mine.exists() and "recipient's own edit" in mine.read_text(), "the recipient's save")
    their_ws = workspace_dir(recipient, home)
    before = {p.relative_to(their_ws): p.read_text() for p in their_ws.rglob("*.py") if "history" not in p.parts}

    fresh = new_page()  # a fresh browser context opens the link
    fresh.goto(link)
    fresh.get_by_text("Compiled add.py for sm_90").first.wait_for()
    wait_idle(fresh)
    shared_frame = wait_for(lambda: _frame_with(fresh, "0f3F000000"), "the shared kernel's PTX")
    wait_for(lambda: editor_text(fresh) == edited_text, "the shared text in the fresh context's editor")
    assert ptx_text(shared_frame) == edited_ptx
    assert "warps=2" in fresh.url and "kernel=file" in fresh.url
    fresh.get_by_text("Opened the shared kernel as").first.wait_for()
    # Opening it in the recipient's own session adds a file; their edit is untouched.
    recipient.goto(link + "&ws=" + their_ws.name)
    recipient.get_by_text("Compiled add.py for sm_90").first.wait_for()
    wait_idle(recipient)
    after = {p.relative_to(their_ws): p.read_text() for p in their_ws.rglob("*.py") if "history" not in p.parts}
    assert all(after[rel] == text for rel, text in before.items()), "the recipient's files changed"
    assert "add.py" in {p.name for p in (their_ws / "files").glob("*.py")}
    wait_for(lambda: editor_text(recipient) == edited_text, "the shared text in the recipient's editor")
    fresh.screenshot(path=str(SHOTS / "workbench-shared.png"))


def _frame_with(page, ptx_snippet: str):
    """The workbench frame once its PTX pane holds `ptx_snippet` (None until then)."""
    try:
        frame = workbench_frame(page, timeout_ms=2000)
    except TimeoutError:
        return None
    return frame if ptx_snippet in ptx_text(frame) else None


def test_a_shipped_profile_opens_in_the_profile_tab_with_a_heat_strip_in_the_gutter(new_page, server):
    url, _ = server
    page = new_page()
    frame = open_compiled(page, url, "kernel=copy_coalesced_vs_strided&target=sm_90&view=profile",
                          "copy_coalesced_vs_strided.py for sm_90")
    shipped = REPO / "assets" / "profiles" / "copy_coalesced_kernel-h100.json"
    page.get_by_test_id("stMainBlockContainer").locator("input[type=file]").set_input_files(str(shipped))
    wait_for(lambda: page.get_by_text("measured by ncu 2025.3.1").count(), "the profile's heading")
    # the page draws the heading first and the checks after it: wait for them, then count
    wait_for(lambda: page.get_by_text("Agrees with the measurement").count(), "the checks under the heading")
    assert page.get_by_text("Agrees with the measurement").count() == 1
    # the roofline point: a copy moves bytes and does no arithmetic, and the page says so
    assert page.get_by_text("a pure data-movement kernel, judged by bandwidth", exact=False).count() == 1
    frame = workbench_frame(page)
    heat = frame.locator(".pane.source .mk.heat")
    wait_for(lambda: heat.count(), "a heat strip in the editor's gutter")
    tips = [heat.nth(i).get_attribute("data-tip") for i in range(heat.count())]
    assert any("of the stall samples" in t and "long_sb" in t for t in tips), tips
    strengths = [float(heat.nth(i).evaluate("el => getComputedStyle(el).getPropertyValue('--heat')"))
                 for i in range(heat.count())]
    hottest = max(json.loads(shipped.read_text())["lines"], key=lambda l: l["samples"])
    strongest = tips[strengths.index(max(strengths))]
    assert max(strengths) == 1.0 and f"{hottest['share'] * 100:.1f}% of the stall samples" in strongest
    # the PTX pane: each line with the share of the Python line it came from, said on hover
    ptx_heat = frame.locator(".pane[data-pane=ptx] .mk.heat")
    wait_for(lambda: ptx_heat.count(), "heat strips in the PTX pane")
    assert "a PTX line shows its Python line's share" in (ptx_heat.first.get_attribute("data-tip") or "")
