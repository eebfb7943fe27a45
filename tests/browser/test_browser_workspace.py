"""One workspace per user, nothing lost, in a real headless Chromium (`streamlit run app.py`):
two sessions (two browser contexts) and two tabs of one session on the same bundled kernel, each
typing its own text; reloads; a new session; same-name uploads from two sessions.

Every wait is on the page (or the file the page saved), never a fixed sleep.
"""

from __future__ import annotations

import time
from urllib.parse import parse_qs, urlparse

import pytest

from inspector.testing.browser import (REPO, editor_frame, editor_text, is_local, kernel_upload, new_context,
                                       wait_idle)
from browser_support import SHOTS

pytestmark = [pytest.mark.browser, pytest.mark.long]
WAIT_MS = 120_000
BUNDLED_ADD = (REPO / "kernels" / "add.py").read_text()


@pytest.fixture
def contexts(browser):
    """New browser contexts (each one a user: its own cookies, its own sessions); every request
    they make must stay inside the app."""
    made, requests = [], []

    def new():
        ctx = new_context(browser, viewport={"width": 1500, "height": 1100})
        ctx.on("request", lambda r: requests.append(r.url))
        made.append(ctx)
        return ctx

    yield new
    for ctx in made:
        ctx.close()
    outside = [u for u in requests if not is_local(u)]
    assert not outside, f"fetched from outside the app: {outside}"


def open_page(ctx, url: str):
    pg = ctx.new_page()
    pg.set_default_timeout(WAIT_MS)
    pg.goto(url)
    pg.get_by_text("Registers / thread").first.wait_for()
    wait_idle(pg)
    return pg


def ws_key(page) -> str:
    return parse_qs(urlparse(page.url).query)["ws"][0]


def wait_until(check, what: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, what
        time.sleep(0.1)


def type_after(page, line: str, text: str) -> None:
    """Click at the end of the editor line holding `line` and type `text` there."""
    editor_frame(page).locator(".cm-line", has_text=line).first.click()
    page.keyboard.press("End")
    page.keyboard.type(text)


def saved_text(home, key: str, rel: str) -> str:
    try:
        return (home / "workspaces" / key / rel).read_text()
    except OSError:
        return ""


def versions(home, key: str, rel: str) -> list[str]:
    folder = home / "workspaces" / key / "history" / rel
    return [p.read_text() for p in sorted(folder.glob("*.py"), key=lambda p: int(p.name.split("-")[0]))]


def test_two_sessions_and_two_tabs_on_one_bundled_kernel(contexts, server):
    url, home = server
    user_a, user_b = contexts(), contexts()
    a = open_page(user_a, f"{url}/?kernel=add&target=sm_90")
    b = open_page(user_b, f"{url}/?kernel=add&target=sm_90")
    key_a, key_b = ws_key(a), ws_key(b)
    assert key_a != key_b

    # Two sessions type different text into the same bundled kernel.
    type_after(a, "mask = offs < n", "  # session A")
    type_after(b, "mask = offs < n", "  # session B")
    wait_until(lambda: "# session A" in saved_text(home, key_a, "edits/add.py"), "A's text was not saved")
    wait_until(lambda: "# session B" in saved_text(home, key_b, "edits/add.py"), "B's text was not saved")
    assert "# session B" not in saved_text(home, key_a, "edits/add.py")
    assert "# session A" not in saved_text(home, key_b, "edits/add.py")

    # A second tab of session A (the same link), on the same kernel, types its own text.
    a2 = open_page(user_a, a.url)
    assert ws_key(a2) == key_a
    wait_until(lambda: "# session A" in editor_text(a2), "the second tab did not open A's text")
    type_after(a2, "y = tl.load", "  # tab two")
    wait_until(lambda: "# tab two" in saved_text(home, key_a, "edits/add.py"), "tab two's text was not saved")
    # The first tab types on without having seen tab two's text: saved, and told.
    type_after(a, "x = tl.load", "  # tab one again")
    wait_until(lambda: "# tab one again" in saved_text(home, key_a, "edits/add.py"), "tab one's text was not saved")
    a.get_by_text("had been changed in another tab").first.wait_for()
    a.screenshot(path=str(SHOTS / "workspace-two-tabs.png"), full_page=True)
    kept = versions(home, key_a, "edits/add.py")
    assert any("# tab two" in v and "# tab one again" not in v for v in kept)  # tab two's text survives
    assert any("# tab one again" in v and "# tab two" not in v for v in kept)  # and tab one's
    assert any("# session A" in v for v in kept)

    # Tab two reopens on the latest text; its own text is one click away in History.
    a2.reload()
    a2.get_by_text("Registers / thread").first.wait_for()
    wait_until(lambda: "# tab one again" in editor_text(a2), "tab two's reload did not find the current text")
    a2.get_by_text("History", exact=True).first.click()
    wait_idle(a2)
    history = a2.locator("[data-testid=stSelectbox]",
                         has=a2.locator("[data-testid=stWidgetLabel]", has_text="Version"))
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    tab_two_version = next(len(kept) - i for i, v in enumerate(reversed(kept)) if "# tab two" in v)
    option = a2.get_by_role("option", name=f"#{tab_two_version} ·", exact=False).first
    for _ in range(3):  # a rerun that lands while the list opens closes it again: open it once more
        history.first.click()
        try:
            option.wait_for(timeout=20_000)
            break
        except PlaywrightTimeout:
            wait_idle(a2)
    option.click()
    wait_idle(a2)
    a2.get_by_role("button", name=f"Restore version {tab_two_version}").click()
    a2.get_by_text(f"Restored version {tab_two_version}").first.wait_for()
    wait_until(lambda: "# tab two" in editor_text(a2) and "# tab one again" not in editor_text(a2),
               "the restored text is not in the editor")
    assert "# tab two" in saved_text(home, key_a, "edits/add.py")
    assert len(versions(home, key_a, "edits/add.py")) == len(kept) + 1  # a restore deletes nothing

    # Session B's reload finds its own text; a new session sees the bundled kernel untouched.
    b.reload()
    b.get_by_text("Registers / thread").first.wait_for()
    wait_until(lambda: "# session B" in editor_text(b), "B's reload did not find B's text")
    assert "# session A" not in editor_text(b) and "# tab two" not in editor_text(b)
    c = open_page(contexts(), f"{url}/?kernel=add&target=sm_90")
    wait_until(lambda: editor_text(c) != "", "the new session's editor did not load")
    assert editor_text(c) == BUNDLED_ADD and ws_key(c) not in (key_a, key_b)
    assert (REPO / "kernels" / "add.py").read_text() == BUNDLED_ADD


def test_same_name_uploads_from_two_sessions_both_survive(contexts, server, tmp_path):
    url, home = server
    texts = {}
    pages = []
    for who in ("first", "second"):
        folder = tmp_path / who
        folder.mkdir()
        f = folder / "kern.py"
        texts[who] = (f'import triton\nimport triton.language as tl\n\nTITLE = "Kern of the {who} user"\n\n\n'
                      "@triton.jit\ndef kern(x_ptr, out_ptr, n, BLOCK: tl.constexpr = 256):\n"
                      "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
                      "    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)\n")
        f.write_text(texts[who])
        pg = open_page(contexts(), f"{url}/?kernel=add&target=sm_90")
        kernel_upload(pg).set_input_files(str(f))
        pg.get_by_text("Compiled kern.py for sm_90").first.wait_for()
        wait_idle(pg)
        pages.append(pg)
    for pg, who in zip(pages, ("first", "second")):
        assert saved_text(home, ws_key(pg), "files/kern.py") == texts[who]
        assert f"Kern of the {who} user" in editor_text(pg)
    # The first user uploads another kern.py: a file of its own, the first one kept.
    again = tmp_path / "again" / "kern.py"
    again.parent.mkdir()
    again.write_text(texts["second"].replace("second", "third"))
    first = pages[0]
    kernel_upload(first).set_input_files(str(again))
    first.get_by_text("Compiled kern-2.py for sm_90").first.wait_for()
    key = ws_key(first)
    assert saved_text(home, key, "files/kern.py") == texts["first"]
    assert saved_text(home, key, "files/kern-2.py") == again.read_text()


def test_the_plain_address_and_a_share_link_lead_back_to_the_browsers_own_workspace(contexts, server):
    """The browser remembers its workspace (a cookie): the address without `?ws=` opens it again,
    a share link opened in the same browser adds the shared file to it, and another browser gets
    a workspace of its own."""
    from inspector.ui.settings import share_param

    url, home = server
    user = contexts()
    first = open_page(user, f"{url}/?kernel=add&target=sm_90")
    key = ws_key(first)
    type_after(first, "mask = offs < n", "  # mine")
    wait_until(lambda: "# mine" in saved_text(home, key, "edits/add.py"), "the edit was not saved")
    first.close()

    again = open_page(user, f"{url}/")
    assert ws_key(again) == key, "the plain address opened another workspace"
    wait_until(lambda: "# mine" in editor_text(again), "the plain address did not show the user's own text")

    shared = BUNDLED_ADD.replace("mask = offs < n", "mask = offs < n  # shared by a colleague")
    link = f"{url}/?src={share_param(shared)}&name=colleague.py&target=sm_90"
    via_link = open_page(user, link)
    assert ws_key(via_link) == key, "a share link opened in the user's browser started another workspace"
    via_link.get_by_text("a new file of your workspace").first.wait_for()
    assert "# shared by a colleague" in saved_text(home, key, "files/colleague.py")
    assert "# mine" in saved_text(home, key, "edits/add.py")  # the user's own work is untouched

    stranger = open_page(contexts(), link)
    assert ws_key(stranger) != key
