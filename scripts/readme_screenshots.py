"""Take the README's screenshots from the running app, in headless Chromium at 1600x1000.

    python3 scripts/readme_screenshots.py   # writes assets/screenshots/{main-view,scalar-marker,occupancy,passes}.png

Main view: vector add compiled for sm_90, the PTX beside the editor, its first `tl.load` line
clicked, so the PTX lines it became are lit. Scalar marker: the same kernel with
n = 4095, the pointer on the scalar-load marker of that line, its reason showing. Occupancy: the
num_warps what-if slider moved to 1 warp, with the calculator's curves. Passes: the pass-by-pass pane
beside the PTX, at the coalescing pass (picked by its name), with "ld.global" found in the PTX.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from inspector.testing.browser import (CHROMIUM, CHROMIUM_ARGS, app_server, marker_on_line, wait_idle,
                                       workbench_frame)

REPO = Path(__file__).resolve().parent.parent

OUT = REPO / "assets" / "screenshots"
VIEWPORT = {"width": 1600, "height": 1000}


def _settle(page, frame) -> None:
    """Wait for two animation frames of the page and the workbench (what is shown is painted)."""
    for f in (page, frame):
        f.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")


def main() -> None:
    from playwright.sync_api import sync_playwright

    OUT.mkdir(parents=True, exist_ok=True)
    home = Path(tempfile.mkdtemp(prefix="readme-shots-"))
    with app_server(home) as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport=VIEWPORT)
        page.set_default_timeout(300_000)
        page.goto(f"{url}/?kernel=add&target=sm_90")
        page.get_by_text("Compiled add.py for sm_90").first.wait_for()
        wait_idle(page)
        frame = workbench_frame(page, 300_000)
        frame.locator(".cm-line", has_text="x = tl.load(x_ptr").click(position={"x": 60, "y": 8})
        frame.locator(".pane[data-pane=ptx] .r.hit").first.wait_for()
        _settle(page, frame)
        page.screenshot(path=str(OUT / "main-view.png"))

        page.goto(f"{url}/?kernel=add&target=sm_90&a.n=4095")
        page.get_by_text("Compiled add.py for sm_90").first.wait_for()
        wait_idle(page)
        frame = workbench_frame(page, 300_000)
        frame.locator(".pane[data-pane=ptx] .r .mk.sev-performance").first.wait_for()
        line = (REPO / "kernels" / "add.py").read_text().split("\n").index("    x = tl.load(x_ptr + offs, mask=mask)") + 1
        marker = marker_on_line(frame, line)
        marker.hover()
        frame.locator(".tip").wait_for(state="visible")
        _settle(page, frame)
        page.screenshot(path=str(OUT / "scalar-marker.png"))

        page.goto(f"{url}/?kernel=add&target=sm_90&view=occupancy")
        page.get_by_text("Occupancy (what-if)").first.wait_for()
        slider = page.get_by_role("slider", name="num_warps")
        slider.focus()
        slider.press("Home")
        wait_idle(page)
        page.locator("[data-testid=stPlotlyChart]").first.scroll_into_view_if_needed()
        page.locator("[data-testid=stPlotlyChart] .main-svg").first.wait_for()
        wait_idle(page)
        page.screenshot(path=str(OUT / "occupancy.png"))

        page.goto(f"{url}/?kernel=add&target=sm_90&passes=1&panes=ptx,passes")
        page.get_by_text("Compiled add.py for sm_90").first.wait_for()
        wait_idle(page)
        frame = workbench_frame(page, 300_000)
        for _ in range(10):  # step through the changes to the coalescing pass
            if "TritonGPUCoalesce" in frame.locator(".pane[data-pane=passes] .meta").inner_text():
                break
            page.get_by_role("button", name="▶").click()
            wait_idle(page)
            frame = workbench_frame(page, 300_000)
        frame.locator(".pane[data-pane=ptx] input.find").fill("ld.global")
        frame.locator(".pane[data-pane=ptx] .r.match-cur").first.wait_for()
        _settle(page, frame)
        page.screenshot(path=str(OUT / "passes.png"))
        browser.close()
    print(f"wrote {', '.join(str(OUT / n) for n in ('main-view.png', 'scalar-marker.png', 'occupancy.png', 'passes.png'))}")


if __name__ == "__main__":
    main()
