"""Running the app in a real browser, for the tests and the browser benchmarks: a `streamlit run
app.py` server on a free port (`triton-inspector app` where there is no checkout), and Debian's
Chromium driven by Playwright (a test requirement, imported when a browser is started).

Playwright cannot download its own browser here: it launches Debian's Chromium, its headless
shell (/usr/bin/chromium-headless-shell, package `chromium-headless-shell`, which
scripts/install.sh --test installs) where there is one, else the desktop browser
(/usr/bin/chromium); $INSPECTOR_CHROMIUM names another. The shell is the same engine without the
desktop browser around it: a browser test module took 99 s where the desktop browser took 124 s
on the 2-vCPU VM, Chromium's own CPU time 28% less (docs/performance.md#what-the-test-suite-costs).
A missing Chromium skips the browser tests, unless INSPECTOR_REQUIRE_BROWSER=1 (set by CI), which
makes it a failure.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from inspector.places import PACKAGE_PARENT as REPO  # the checkout, holding app.py

CHROMIUM = os.environ.get("INSPECTOR_CHROMIUM") or next(
    (p for p in ("/usr/bin/chromium-headless-shell", "/usr/bin/chromium") if os.path.exists(p)), "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
SERVER_START_TIMEOUT = 90.0
# Pages the tests drive run without CSS animations and transitions (what Playwright's screenshots do
# with `animations="disabled"`): Streamlit's spinners and skeletons otherwise make the software
# compositor draw ~40 frames a second while a compile runs. A browser test module took 12% less
# CPU with them off, Chromium's compositor thread 80% less (docs/performance.md).
_STILL = ("new MutationObserver((_, seen) => { if (document.head) { const s = document.createElement('style');"
          " s.textContent = '*, *::before, *::after { animation: none !important; transition: none !important; }';"
          " document.head.appendChild(s); seen.disconnect(); } })"
          ".observe(document, {childList: true, subtree: true});")


def browser_missing_reason() -> str | None:
    """Why the browser tests cannot run here, or None when they can."""
    if not os.path.exists(CHROMIUM):
        return f"{CHROMIUM} is missing (apt-get install chromium-headless-shell)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright package is missing (pip install -r requirements-test.txt)"
    return None


def said_browser_missing() -> bool:
    """For the browser benchmarks: when the browser cannot run here, say why on stderr and return True."""
    reason = browser_missing_reason()
    if reason:
        print(f"cannot run: {reason}", file=sys.stderr)
    return reason is not None


def new_context(browser, **options):
    """`browser.new_context(**options)` whose pages show no CSS animation or transition (`_STILL`)."""
    ctx = browser.new_context(**options)
    ctx.add_init_script(_STILL)
    return ctx


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def app_server(home: Path, cache: str | None = None, log: Path | None = None,
               env_extra: dict[str, str] | None = None, command: list[str] | None = None,
               cwd: Path = REPO) -> Iterator[str]:
    """`streamlit run app.py` (or `command` followed by Streamlit's options: an installed
    `triton-inspector app`) with its own workspace (`home`); yields the base URL."""
    port = free_port()
    env = dict(os.environ, TRITON_INSPECTOR_HOME=str(home), PYTHONUNBUFFERED="1", **(env_extra or {}))
    if cache:
        env["TRITON_INSPECTOR_CACHE"] = cache
    out = open(log, "wb") if log else subprocess.DEVNULL
    proc = subprocess.Popen(
        [*(command or [sys.executable, "-m", "streamlit", "run", "app.py"]), "--server.port", str(port),
         "--server.address", "127.0.0.1", "--server.headless", "true", "--browser.gatherUsageStats", "false"],
        cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + SERVER_START_TIMEOUT
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"streamlit exited with status {proc.returncode}" +
                                   (f"; see {log}" if log else ""))
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                    if r.read().strip() == b"ok":
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("streamlit did not answer its health check")
            time.sleep(0.25)
        yield url
    finally:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=15)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if log:
            out.close()  # type: ignore[union-attr]


def is_local(url: str) -> bool:
    """Requests the page may make: to the app itself, or in-page data."""
    return url.startswith(("http://127.0.0.1", "http://localhost", "ws://127.0.0.1", "data:", "blob:", "about:"))


def srcdoc_frames(page) -> list:
    """The frames of the page's srcdoc iframes (the diff), from their elements: Playwright's
    `page.frames` can miss a frame Streamlit creates while the page loads."""
    frames = []
    for el in page.query_selector_all("iframe[srcdoc]"):
        try:
            frame = el.content_frame()
        except Exception:  # noqa: BLE001 - detached by a rerun while we looked
            continue
        if frame is not None:
            frames.append(frame)
    return frames


WORKBENCH = 'iframe[title="inspector.ui.workbench.workbench"]'


def workbench_frame(page, timeout_ms: int = 120_000, stage_rows: bool = True):
    """The workbench's frame (editor and stage panes), once it has drawn its panes (with rows,
    unless `stage_rows` is False)."""
    deadline = time.monotonic() + timeout_ms / 1000
    while time.monotonic() < deadline:
        el = page.query_selector(WORKBENCH)
        try:
            frame = el.content_frame() if el else None
            if frame is not None and frame.evaluate("document.body && document.body.dataset.ready") == "1" \
                    and (not stage_rows or frame.query_selector(".pane.stage .r")):
                return frame
        except Exception:  # noqa: BLE001 - a frame being replaced while we looked
            pass
        time.sleep(0.05)
    raise TimeoutError("the workbench did not draw its panes")


panes_frame = workbench_frame


def editor_frame(page):
    return page.frame_locator(WORKBENCH)


def editor_text(page) -> str:
    """The editor's whole text ("" while the editor is still loading)."""
    try:
        return editor_frame(page).locator(".cm-editor").evaluate("() => window.tkiEditor.text()", timeout=2000)
    except Exception:  # noqa: BLE001 - the editor is loading or being replaced
        return ""


def wait_for_editor_text(page, text: str, timeout: float = 30) -> None:
    """Wait until the editor holds `text`: after a rerun the workbench may be redrawing its editor,
    whose text then reads "" for a moment, so a one-shot look is a race."""
    wait_for(lambda: text in editor_text(page), f"the editor to hold {text!r}", timeout)


def type_at_line_end(page, line_text: str, typed: str) -> None:
    """Click the editor line holding `line_text`, go to its end and type."""
    editor_frame(page).locator(".cm-line", has_text=line_text).first.click()
    page.keyboard.press("End")
    page.keyboard.type(typed)


def marker_on_line(frame, line: int):
    """The gutter marker the workbench draws beside editor line `line` (matched by vertical
    position), or None while there is none."""
    return frame.evaluate_handle(f"""() => {{
        const lines = document.querySelectorAll('.cm-lineNumbers .cm-gutterElement');
        const num = Array.from(lines).find(el => el.textContent.trim() === '{line}');
        if (!num) return null;
        const y = num.getBoundingClientRect().top + 4;
        return Array.from(document.querySelectorAll('.cm-marks .mk')).find(m => {{
            const r = m.getBoundingClientRect(); return r.top <= y + 10 && r.bottom >= y - 4; }}) || null; }}""").as_element()


def wait_for(check, what: str, timeout: float = 180):
    """Poll `check()` until it returns something truthy, and return that (the page's state, never
    a fixed sleep); fails the test after `timeout` seconds naming `what`."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


@contextmanager
def diagnosed(page, log: Path | None = None) -> Iterator[None]:
    """Run a browser test's steps; when one fails, say what the page showed and what the server
    logged (CI keeps no screenshots, so the failure message is the only record)."""
    try:
        yield
    except Exception as e:
        try:
            shown = page.locator("[data-testid=stApp]").inner_text(timeout=5000)
        except Exception as inner:  # the page itself may be gone
            shown = f"(could not read the page: {inner})"
        logged = log.read_text(errors="replace")[-3000:] if log and log.exists() else "(no log)"
        raise AssertionError(f"{e}\n--- the page showed (end) ---\n{shown[-3000:]}\n"
                             f"--- the server logged (end) ---\n{logged}") from e


def wait_idle(page, settle: float = 0.3, timeout: float = 120) -> None:
    """Wait until the app's script has stopped running (and stays stopped for `settle` s)."""
    deadline = time.monotonic() + timeout
    quiet_since = None
    while time.monotonic() < deadline:
        state = page.evaluate("() => document.querySelector('[data-testid=stApp]')?.dataset.testScriptState")
        if state == "notRunning":
            quiet_since = quiet_since or time.monotonic()
            if time.monotonic() - quiet_since >= settle:
                return
        else:
            quiet_since = None
        time.sleep(0.05)
    raise TimeoutError("the app kept running")


@contextmanager
def add_page(browser, tmp_path: Path, height: int, wait_ms: int) -> Iterator:
    """An app server of a test's own (workspace home and streamlit.log under `tmp_path`) and a
    1600 x `height` page of its own context, waiting up to `wait_ms`, showing the add kernel
    compiled for sm_90; the steps run under `diagnosed`."""
    home = tmp_path / "home"
    home.mkdir()
    log = tmp_path / "streamlit.log"
    with app_server(home, log=log) as url:
        ctx = new_context(browser, viewport={"width": 1600, "height": height})
        page = ctx.new_page()
        page.set_default_timeout(wait_ms)
        with diagnosed(page, log):
            page.goto(f"{url}/?kernel=add&target=sm_90")
            page.get_by_text("Compiled add.py for sm_90").first.wait_for()
            wait_idle(page)
            yield page
        ctx.close()


def metric(page, label: str) -> str:
    """The value of the st.metric with this label."""
    box = page.locator("[data-testid=stMetric]", has=page.locator("[data-testid=stMetricLabel]", has_text=label))
    return box.first.locator("[data-testid=stMetricValue]").inner_text().strip()


def choose(page, label: str, option: str) -> None:
    """Pick `option` in the st.selectbox labelled `label`."""
    box = page.locator("[data-testid=stSelectbox]", has=page.locator("[data-testid=stWidgetLabel]", has_text=label))
    box.first.click()
    page.get_by_role("option", name=option, exact=True).click()


def kernel_upload(page):
    """The kernel-file uploader's input (the sidebar may hold other uploaders)."""
    return page.locator("[data-testid=stFileUploaderDropzoneInput][accept$='.py']")


def chromium() -> Iterator:
    """A test module's browser: Debian's Chromium through Playwright. Skips where it is missing,
    fails instead under INSPECTOR_REQUIRE_BROWSER=1 (CI)."""
    import pytest
    from playwright.sync_api import sync_playwright

    reason = browser_missing_reason()
    if reason:
        if os.environ.get("INSPECTOR_REQUIRE_BROWSER") == "1":
            pytest.fail(f"INSPECTOR_REQUIRE_BROWSER=1 but {reason}")
        pytest.skip(reason)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


def local_page(browser, height: int, wait_ms: int) -> Iterator:
    """A page of its own context at 1600 x `height`, waiting up to `wait_ms`; afterwards, it must
    have fetched nothing from outside the app."""
    ctx = new_context(browser, viewport={"width": 1600, "height": height})
    page = ctx.new_page()
    page.set_default_timeout(wait_ms)
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    yield page
    ctx.close()
    outside = [u for u in requests if not is_local(u)]
    assert not outside, f"fetched from outside the app: {outside}"
