"""A server a team can share: real browser sessions and CLI calls against one `streamlit run app.py`.

    python3 benchmarks/soak.py [--sessions 4] [--minutes 10] [--json results.json]

Each session is a browser context of its own (a user) in Debian's Chromium. In a loop it opens a
kernel of the gallery (a user's own copy after the first edit), types a comment line of its own at the end
of the file, presses Ctrl+Enter and waits for the page's "Compiled ..." line, then
checks that its workspace file holds its text (an edit lost otherwise). A thread runs the CLI
(`python -m inspector compile FILE --target T`) in a loop beside them. Every 10 s the server's
resident memory (its process and its children: the compile workers; pages that forked workers
share are counted once per process, so a peak overstates) is sampled.

Reported: edits lost, errors (a compile that failed, a page that stopped answering, a CLI call
that failed), the server's memory over time, p50/p95 of the compile latency as a user sees it
(Ctrl+Enter to the status line), CLI call times, and the processes left once the server is
stopped. Results go to stdout and, with --json, to a file (benchmarks/results/ keeps the runs).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import subprocess
import sys
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

from inspector.testing.browser import (CHROMIUM, CHROMIUM_ARGS, app_server, browser_missing_reason,
                                       editor_frame, wait_idle, workbench_frame)
from inspector.testing.processes import descendants

KERNELS = ["add", "gelu", "softmax", "layer_norm"]
TARGETS = ["sm_90", "sm_80", "gfx942"]
CLI_FILES = ["kernels/add.py", "kernels/gelu.py", "kernels/softmax.py"]


def rss_kib(pid: int, seen: dict[int, str] | None = None) -> int:
    """Resident memory of a process and every descendant, in KiB (from /proc); `seen` collects
    each descendant's pid and command line."""
    total = 0
    below = descendants(pid)
    for p in [pid, *below]:
        if seen is not None and p != pid:
            seen.setdefault(p, _cmdline(p))
        try:
            with open(f"/proc/{p}/status") as f:
                total += next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
        except (OSError, StopIteration):
            pass
    return total


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def server_pid(port: int) -> int | None:
    """The streamlit process listening on `port`."""
    out = subprocess.run(["pgrep", "-f", f"streamlit run app.py --server.port {port}"], capture_output=True,
                         text=True).stdout.split()
    return int(out[0]) if out else None


def session(browser, url: str, home: Path, who: int, until: float, out: dict, lock: threading.Lock) -> None:
    """One user: edit, Ctrl+Enter, wait for the compile, check the saved text; until `until`."""
    ctx = browser.new_context(viewport={"width": 1500, "height": 1000})
    page = ctx.new_page()
    page.set_default_timeout(240_000)
    rnd = random.Random(who)
    n = 0
    try:
        while time.monotonic() < until:
            kernel = rnd.choice(KERNELS)
            target = rnd.choice(TARGETS)
            page.goto(f"{url}/?kernel={kernel}&target={target}" + (f"&ws={out['ws'][who]}" if who in out["ws"] else ""))
            page.get_by_text("Compiled ").first.wait_for()
            wait_idle(page)
            if who not in out["ws"]:
                out["ws"][who] = page.url.split("ws=")[1].split("&")[0]
            n += 1
            mark = f"# soak {who}-{n}"
            editor_frame(page).locator(".cm-content").first.click()
            page.keyboard.press("Control+End")  # the file's last line: the edit changes no kernel line
            page.keyboard.type("\n" + mark)
            frame = workbench_frame(page)
            pressed = frame.evaluate("() => Date.now()")
            page.keyboard.press("Control+Enter")
            # the new compile's panes painted (the component stamps each paint, epoch ms)
            frame.wait_for_function(f"() => Number(document.body.dataset.paintedAt || 0) > {pressed}",
                                    timeout=240_000)
            took = (float(frame.evaluate("() => document.body.dataset.paintedAt")) - pressed) / 1000
            wait_idle(page)
            text = page.locator("[data-testid=stMain]").inner_text()
            saved = home / "workspaces" / out["ws"][who] / "edits" / f"{kernel}.py"
            kept = saved.exists() and mark in saved.read_text()
            failed = f"Compiled {kernel}.py for" not in text
            with lock:
                out["latency"].append(took)
                out["timeline"].append((round(time.monotonic() - out["start"]), round(took, 2), kernel, target))
                out["edits"] += 1
                out["lost"] += 0 if kept else 1
                out["errors"] += 1 if failed else 0
    except Exception as e:  # noqa: BLE001 - counted and reported: the soak goes on with the others
        with lock:
            out["errors"] += 1
            out["error_texts"].append(f"session {who}: {type(e).__name__}: {str(e)[:200]}")
    finally:
        ctx.close()


def cli_loop(until: float, out: dict, lock: threading.Lock) -> None:
    rnd = random.Random(99)
    while time.monotonic() < until:
        file, target = rnd.choice(CLI_FILES), rnd.choice(TARGETS)
        t0 = time.monotonic()
        proc = subprocess.run([sys.executable, "-m", "inspector", "compile", file, "--target", target],
                              cwd=REPO, capture_output=True, text=True, timeout=600)
        with lock:
            out["cli"].append(time.monotonic() - t0)
            if proc.returncode != 0:
                out["errors"] += 1
                out["error_texts"].append(f"cli {file} {target}: exit {proc.returncode}: {proc.stderr[-200:]}")


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    v = sorted(values)
    return v[min(len(v) - 1, int(round(q * (len(v) - 1))))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sessions", type=int, default=4)
    ap.add_argument("--minutes", type=float, default=10)
    ap.add_argument("--json", help="also write the results here")
    a = ap.parse_args()
    why = browser_missing_reason()
    if why:
        print(f"soak: cannot run: {why}")
        return 2
    from playwright.sync_api import sync_playwright

    home = Path(os.environ.get("SOAK_HOME", "/tmp/soak-home"))
    home.mkdir(parents=True, exist_ok=True)
    log = home / "server.log"
    out: dict = {"latency": [], "cli": [], "edits": 0, "lost": 0, "errors": 0, "error_texts": [], "ws": {},
                 "memory_mib": [], "timeline": [], "start": time.monotonic()}
    lock = threading.Lock()
    seen: dict[int, str] = {}  # every process the server started (its compile workers), by pid
    with app_server(home, log=log) as url:
        port = int(url.rsplit(":", 1)[1])
        pid = server_pid(port)
        start = out["start"] = time.monotonic()
        until = start + 60 * a.minutes
        threads = [threading.Thread(target=cli_loop, args=(until, out, lock), daemon=True)]
        # Playwright's sync API is per thread: each session gets its own driver connection.

        def run_session(i: int) -> None:
            with sync_playwright() as pp:
                b = pp.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                session(b, url, home, i, until, out, lock)
                b.close()

        threads += [threading.Thread(target=run_session, args=(i,), daemon=True) for i in range(a.sessions)]
        for t in threads:
            t.start()
        while any(t.is_alive() for t in threads):
            if pid:
                out["memory_mib"].append((round(time.monotonic() - start), round(rss_kib(pid, seen) / 1024, 1)))
            time.sleep(10)
    time.sleep(2)
    # what the server started and outlived it (a pid reused by another program does not count)
    left = [q for q, cmd in seen.items() if cmd and _cmdline(q) == cmd]
    result = {
        "machine": f"{platform.node()}: {os.cpu_count()} cores, Python {platform.python_version()}",
        "sessions": a.sessions, "minutes": a.minutes, "edits": out["edits"], "edits_lost": out["lost"],
        "errors": out["errors"], "error_texts": out["error_texts"][:10],
        "compile_latency_s": {"n": len(out["latency"]), "p50": percentile(out["latency"], 0.5),
                              "p95": percentile(out["latency"], 0.95)},
        "cli_s": {"n": len(out["cli"]), "p50": percentile(out["cli"], 0.5), "p95": percentile(out["cli"], 0.95)},
        "server_memory_mib": out["memory_mib"],
        "compiles": out["timeline"],  # (seconds into the run, latency s, kernel, target)
        "processes_left": len(left),
    }
    mem = [m for _, m in out["memory_mib"]]
    print(f"{a.sessions} browser sessions + CLI for {a.minutes} min: {out['edits']} edits, {out['lost']} lost, "
          f"{out['errors']} errors; compile as the user sees it p50 {result['compile_latency_s']['p50']:.2f} s, "
          f"p95 {result['compile_latency_s']['p95']:.2f} s; CLI p50 {result['cli_s']['p50']:.2f} s "
          f"({len(out['cli'])} calls); server memory {mem[0] if mem else 0:.0f} -> max "
          f"{max(mem) if mem else 0:.0f} -> last {mem[-1] if mem else 0:.0f} MiB; processes left {len(left)}")
    for e in result["error_texts"]:
        print("  error:", e)
    if a.json:
        Path(a.json).write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
