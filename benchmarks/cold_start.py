"""Cold start of the web app, measured in a real headless Chromium: from `streamlit run app.py`
(a new server process, an empty workspace home and an empty compile cache) to

1. first paint: the page's first contentful paint (Chromium's paint timing);
2. editor ready: the workbench drawn with the kernel's text in the editor (the page is usable);
3. first result: the bundled vector add compiled for sm_90 and its PTX pane painted.

    python3 benchmarks/cold_start.py [--repeat 3] [--query "kernel=add&target=sm_90"] [--json out.json]

Each run starts everything afresh (server, home, cache; the browser is started before the clock).
Each round also times the floor: a fresh Python importing torch and Triton and compiling the same
kernel GPU-free (benchmarks/inspection_cost.py `bare_fresh`), and prints first result / floor.
Goals (docs/performance.md#cold-start): first paint <= 3 s, first result <= 1.5x the floor, medians.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import platform
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

from inspector.testing.browser import CHROMIUM, CHROMIUM_ARGS, WORKBENCH, free_port, said_browser_missing

TIMEOUT_S = 300


def _wait(check, what: str, timeout: float = TIMEOUT_S):
    deadline = time.monotonic() + timeout
    while True:
        try:
            value = check()
        except Exception:  # noqa: BLE001 - the page or frame is still loading
            value = None
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(what)
        time.sleep(0.01)


def one_run(browser, query: str) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="tki-cold-") as tmp:
        port = free_port()
        env = dict(os.environ, TRITON_INSPECTOR_HOME=str(Path(tmp) / "home"),
                   TRITON_INSPECTOR_CACHE=str(Path(tmp) / "cache"), PYTHONUNBUFFERED="1")
        ctx = browser.new_context(viewport={"width": 1600, "height": 1000})
        page = ctx.new_page()
        t0 = time.time() * 1000
        proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port), "--server.address",
             "127.0.0.1", "--server.headless", "true", "--browser.gatherUsageStats", "false"],
            cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            url = f"http://127.0.0.1:{port}"

            def healthy() -> bool:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=1) as r:
                    return r.read().strip() == b"ok"

            _wait(healthy, "the server's health check")
            server_up = time.time() * 1000 - t0
            page.goto(f"{url}/?{query}")
            fcp = _wait(lambda: page.evaluate("""() => { const e = performance.getEntriesByName('first-contentful-paint')[0];
                return e ? performance.timeOrigin + e.startTime : 0; }"""), "first contentful paint")

            def frame():
                el = page.query_selector(WORKBENCH)
                return el.content_frame() if el else None

            editor_at = _wait(lambda: (f := frame()) and f.evaluate(
                "() => window.tkiEditor && window.tkiEditor.text().length > 0 && +document.body.dataset.firstRenderAt"),
                "the editor's text")
            # The rows may be in before the paint time is written: wait for both (a NaN is no time).
            result_at = _wait(lambda: (f := frame()) and f.evaluate(
                "() => { const at = +document.body.dataset.paintedAt;"
                " return document.querySelector('.pane[data-pane=ptx] .r') && Number.isFinite(at) && at > 0 ? at : 0; }"),
                "the PTX pane")
            return {"server_up": server_up, "first_paint": fcp - t0, "editor_ready": editor_at - t0,
                    "first_result": result_at - t0}
        finally:
            ctx.close()
            try:
                os.killpg(proc.pid, signal.SIGTERM)
                proc.wait(timeout=15)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                os.killpg(proc.pid, signal.SIGKILL)
            # The run's warm worker pool (its home is this run's): stopped, not left to idle out.
            subprocess.run([sys.executable, "-m", "inspector", "pool", "stop"], cwd=REPO, env=env,
                           capture_output=True, timeout=60)


def measure(repeat: int, query: str) -> dict:
    from playwright.sync_api import sync_playwright

    from inspection_cost import bare_fresh

    runs: list[dict[str, float]] = []
    kernel = REPO / "kernels" / f"{dict(kv.split('=') for kv in query.split('&')).get('kernel', 'add')}.py"
    target = dict(kv.split("=") for kv in query.split("&")).get("target", "sm_90")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        for i in range(repeat):
            runs.append(one_run(browser, query))
            # the floor, in the same round: a fresh Python that imports torch and Triton and compiles
            # the same kernel for the same target, GPU-free, and nothing else
            runs[-1]["bare_compile"] = bare_fresh(kernel, target)["wall"] * 1000
            print(f"run {i + 1}/{repeat}: " + ", ".join(f"{k} {v / 1000:.2f} s" for k, v in runs[-1].items()),
                  flush=True)
        version = browser.version
        browser.close()
    keys = list(runs[0])
    return {
        "machine": f"{platform.node()} ({platform.machine()}, {os.cpu_count()} CPUs, {platform.platform()})",
        "load_average_at_end": os.getloadavg(),
        "versions": {"chromium": version, "streamlit": importlib.metadata.version("streamlit"),
                     "triton": importlib.metadata.version("triton"), "torch": importlib.metadata.version("torch"),
                     "python": platform.python_version()},
        "query": query,
        "runs": runs,
        **{k: {"median_s": statistics.median(r[k] for r in runs) / 1000, "min_s": min(r[k] for r in runs) / 1000,
               "max_s": max(r[k] for r in runs) / 1000} for k in keys},
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--query", default="kernel=add&target=sm_90")
    ap.add_argument("--json", help="also write the figures here")
    args = ap.parse_args(argv)
    if said_browser_missing():
        return 2
    out = measure(args.repeat, args.query)
    print(f"\nmachine: {out['machine']}; load average at the end {out['load_average_at_end']}")
    print("versions: " + ", ".join(f"{k} {v}" for k, v in out["versions"].items()))
    for k, goal in (("server_up", None), ("first_paint", 3), ("editor_ready", None), ("first_result", 6)):
        s = out[k]
        print(f"{k:14s} median {s['median_s']:.2f} s (min {s['min_s']:.2f}, max {s['max_s']:.2f})"
              + (f"   goal <= {goal} s" if goal else ""))
    ratio = out["first_result"]["median_s"] / out["bare_compile"]["median_s"]
    out["first_result_over_bare_compile"] = ratio
    print(f"first result / a bare cold compile of the same kernel: {ratio:.2f}x   goal <= 1.5x")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
