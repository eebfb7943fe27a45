"""Take the README's screenshots from the running app, in headless Chromium.

    python3 scripts/readme_screenshots.py      # writes assets/screenshots/{main-view,occupancy}.png

Main view: vector add compiled for sm_90 with its first `tl.load` line selected, so the lines it
became are highlighted in the TTGIR and PTX panes. Occupancy: the num_warps what-if slider moved
to 1 warp, with the calculator's curves.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

from browser_support import CHROMIUM, CHROMIUM_ARGS, app_server, panes_frame, wait_idle  # noqa: E402

OUT = REPO / "assets" / "screenshots"


def main() -> None:
    from playwright.sync_api import sync_playwright

    OUT.mkdir(parents=True, exist_ok=True)
    home = Path(tempfile.mkdtemp(prefix="readme-shots-"))
    with app_server(home) as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1600, "height": 1200})
        page.goto(f"{url}/?kernel=add&target=sm_90")
        frame = panes_frame(page, 120_000)
        wait_idle(page)
        page.locator("iframe[srcdoc]").first.scroll_into_view_if_needed()
        row = frame.locator(".pane[data-pane=source] .r", has_text="x = tl.load(x_ptr")
        row.evaluate("""el => { const code = el.closest('.code');
            code.scrollTop += el.getBoundingClientRect().top - code.getBoundingClientRect().top - 120; }""")
        box = row.bounding_box()
        page.mouse.click(box["x"] + 48, box["y"] + box["height"] / 2)
        frame.locator(".pane[data-pane=ptx] .r.hit").first.wait_for()
        time.sleep(0.3)
        page.screenshot(path=str(OUT / "main-view.png"))

        page.goto(f"{url}/?kernel=add&target=sm_90&view=occupancy")
        page.get_by_text("Occupancy (what-if)").first.wait_for()
        slider = page.get_by_role("slider", name="num_warps")
        slider.focus()
        slider.press("Home")
        wait_idle(page)
        page.locator("[data-testid=stPlotlyChart]").first.scroll_into_view_if_needed()
        time.sleep(0.5)
        page.screenshot(path=str(OUT / "occupancy.png"))
        browser.close()
    print(f"wrote {OUT / 'main-view.png'} and {OUT / 'occupancy.png'}")


if __name__ == "__main__":
    main()
