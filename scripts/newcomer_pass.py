"""A newcomer's pass over every view of the page, on NVIDIA and on AMD, in headless Chromium at
1600x1000: the screenshots a reviewer reads to see the page as a first-time user does.

    python3 scripts/newcomer_pass.py   # writes docs/newcomer/{sm_90,gfx942}-*.png

Per target: the workbench with three stage panes (TTGIR, the machine code and SASS or the AMDGCN),
the hover over a load's marker at n = 4095 (its verdict in one line, and the warp's drawing), then
each view below the workbench, one screenshot per tab, after a Diff against n = 4096 and with a
teaching pair (`copy_coalesced_vs_strided`) for the Insight view. docs/newcomer.md says what each
shows.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from inspector.testing.browser import (CHROMIUM, CHROMIUM_ARGS, app_server, marker_on_line, wait_idle,
                                       workbench_frame)

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "docs" / "newcomer"
VIEWPORT = {"width": 1600, "height": 1000}
TABS = {"insight": "Insight", "occupancy": "Occupancy", "autotune": "Autotune grid", "diff": "Diff",
        "benchmarks": "Benchmarks", "profile": "Profile", "fits": "Every GPU"}
MACHINE = {"sm_90": "ptx,sass", "gfx942": "llir,amdgcn"}


def _open(page, url: str, query: str, label: str) -> None:
    page.goto(f"{url}/?{query}")
    page.get_by_text(f"Compiled {label}").first.wait_for()
    wait_idle(page)


def _hover_load(page, target: str) -> None:
    """The pointer on the marker of the first `tl.load` line of the editor."""
    frame = workbench_frame(page, 300_000)
    line = (REPO / "kernels" / "add.py").read_text().split("\n").index("    x = tl.load(x_ptr + offs, mask=mask)") + 1
    marker = marker_on_line(frame, line)
    if marker is not None:
        marker.hover()
        frame.locator(".tip").wait_for(state="visible")
    page.screenshot(path=str(OUT / f"{target}-hover.png"))


def _tabs(page, target: str) -> None:
    """Each view's tab, scrolled into sight, one screenshot each."""
    for key, title in TABS.items():
        page.get_by_role("tab", name=title).click()
        panel = page.get_by_role("tabpanel", name=title)
        panel.wait_for()
        if key == "diff":
            panel.get_by_role("button", name="Pin this compile as A").click()
            wait_idle(page)
        if key == "fits":
            panel.get_by_role("button", name="Check every GPU").click()
            panel.get_by_test_id("stDataFrame").wait_for(timeout=600_000)
        wait_idle(page)
        page.mouse.move(2, 2)
        page.locator(".st-key-views").screenshot(path=str(OUT / f"{target}-{key}.png"))  # the tabs and this view


def main() -> None:
    from playwright.sync_api import sync_playwright

    OUT.mkdir(parents=True, exist_ok=True)
    home = Path(tempfile.mkdtemp(prefix="newcomer-"))
    with app_server(home) as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        for target, machine in MACHINE.items():
            page = browser.new_page(viewport=VIEWPORT)
            page.set_default_timeout(300_000)
            _open(page, url, f"kernel=add&target={target}&panes=ttgir,{machine}", f"add.py for {target}")
            page.screenshot(path=str(OUT / f"{target}-workbench.png"))
            _open(page, url, f"kernel=add&target={target}&a.n=4095", f"add.py for {target}")
            _hover_load(page, target)
            _tabs(page, target)
            _open(page, url, f"kernel=copy_coalesced_vs_strided&target={target}",
                  f"copy_coalesced_vs_strided.py for {target}")
            page.get_by_text("The pair, side by side").first.wait_for()
            wait_idle(page)
            page.get_by_role("tabpanel", name="Insight").screenshot(path=str(OUT / f"{target}-pair.png"))
            page.close()
        browser.close()
    print(f"wrote {len(list(OUT.glob('*.png')))} screenshots to {OUT}")


if __name__ == "__main__":
    main()
