"""The app as it runs by default, in a real headless Chromium: its compiles go through the user's
warm worker pool (`inspector.isolation.pool`), which a command-line call then shares, and SASS is
made only when a pane first shows it.

The rest of the suite runs with the pool off (tests/conftest.py); this module turns it on for
its own server and home, and stops the pool at the end. Every wait is on the page's state.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from inspector.testing.browser import REPO, app_server, new_context, wait_for, wait_idle, workbench_frame

pytestmark = pytest.mark.browser
WAIT_S = 180  # a cold compile on a loaded CI machine




def _pane_rows(page, pane: str) -> list[str]:
    try:
        frame = workbench_frame(page, timeout_ms=2000)
        return frame.evaluate(f"() => Array.from(document.querySelectorAll('.pane[data-pane={pane}] .r'))"
                              ".map(r => r.textContent)")
    except Exception:  # noqa: BLE001 - the frame is being redrawn
        return []


def test_app_compiles_through_the_shared_pool_and_makes_sass_when_shown(browser, tmp_path):
    home = tmp_path / "home"
    env = {**os.environ, "TRITON_INSPECTOR_HOME": str(home), "TRITON_INSPECTOR_POOL": "1",
           "TRITON_INSPECTOR_CACHE": str(tmp_path / "cache")}

    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "inspector", *args], cwd=REPO, env=env, capture_output=True,
                              text=True, timeout=WAIT_S)

    try:
        with app_server(home, cache=env["TRITON_INSPECTOR_CACHE"], env_extra={"TRITON_INSPECTOR_POOL": "1"}) as url:
            ctx = new_context(browser, viewport={"width": 1600, "height": 1000})
            page = ctx.new_page()
            page.set_default_timeout(WAIT_S * 1000)
            page.goto(f"{url}/?kernel=add&target=sm_90")
            page.get_by_text("Compiled add.py for sm_90").first.wait_for()
            wait_idle(page)
            assert any("ld.global.v4.b32" in r for r in wait_for(lambda: _pane_rows(page, "ptx"), "the PTX rows"))

            pools = json.loads(cli("pool", "status", "--json").stdout)
            assert len(pools) == 1 and pools[0]["served"] >= 1 and pools[0]["isolation"]["isolated"], pools
            pid, served = pools[0]["pid"], pools[0]["served"]

            # SASS was left out of the compile; showing it makes it (in the pool's sandbox).
            frame = workbench_frame(page)
            frame.locator(".pane[data-pane=ptx] select.stage-pick").select_option("sass")
            rows = wait_for(lambda: _pane_rows(page, "sass"), "the SASS rows")
            assert any("LDG.E.128" in r for r in rows), rows[:20]
            ctx.close()

            # A command-line call of the same user shares the app's pool: same daemon, one more request.
            out = cli("compile", str(REPO / "kernels" / "gelu.py"), "--target", "sm_90")
            assert out.returncode == 0, out.stderr
            after = json.loads(cli("pool", "status", "--json").stdout)
            assert [p["pid"] for p in after] == [pid] and after[0]["served"] > served, after
            assert after[0]["zygote_starts"] == 1
    finally:
        cli("pool", "stop")
