"""What the guard costs at scale: serial vs the local pool vs a local Ray, and on cache hits.

    python3 benchmarks/guard_scale.py                      # every mode, sm_90,sm_100,gfx942
    python3 benchmarks/guard_scale.py --modes pool --targets sm_90

The corpus is real kernel files: the bundled kernels (kernels/), the kernel-file forms the loader
is tested on (tests/fixtures/kernel_file_forms/), published FlagGems and Liger-Kernel files (tests/fixtures/published/first_four_projects/), and the
guard tests' repository (inspector/testing/guard_repo.py). Each mode runs in a fresh process with a cache of
its own, so every record is compiled: `serial` (one compile at a time), `pool` (--jobs threads
over the sandbox), `ray` (a local Ray of --jobs CPUs, started in that process; one task per
compile). Each mode then runs again on its warm cache (nothing changed: every record a cache
hit). Printed and written to --out: wall time (start-ups included: the sandbox's worker manager,
Ray), cases, compiles, the summed compile time the workers measured, the machine's load average,
and for Ray its start, each worker's first task (which starts that worker's manager), the delay
from a task's end to its record here, and a no-op task's round trip.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

CORPUS = REPO / "tests" / "fixtures" / "published" / "first_four_projects"
PATHS = [
    "kernels",
    "tests/fixtures/kernel_file_forms",
    "tests/fixtures/published/first_four_projects/flag_gems/flag_gems/ops",
    "tests/fixtures/published/first_four_projects/flag_gems/flag_gems/runtime/backend/_nvidia/fused/fused_add_rms_norm.py",
    "tests/fixtures/published/first_four_projects/flag_gems/flag_gems/runtime/backend/_nvidia/ops/add.py",
    "tests/fixtures/published/first_four_projects/liger_kernel/src/liger_kernel/ops/rope.py",
    "tests/fixtures/published/first_four_projects/liger_kernel/src/liger_kernel/ops/rms_norm.py",
    "tests/fixtures/published/first_four_projects/liger_kernel/src/liger_kernel/ops/softmax.py",
]


def _machine() -> str:
    """The CPU model, usable CPUs and memory, from /proc (platform.processor() is empty on Linux)."""
    model = ""
    try:
        with open("/proc/cpuinfo") as f:
            model = next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), "")
        with open("/proc/meminfo") as f:
            mem = int(next(l for l in f if l.startswith("MemTotal")).split()[1]) / 2**20
    except (OSError, StopIteration, ValueError):
        mem = 0.0
    return f"{model or platform.machine()}, {len(os.sched_getaffinity(0))} CPUs, {mem:.0f} GiB"


def child(mode: str, targets: list[str], jobs: int, paths: list[str], runs: tuple[str, ...] = ("cold", "warm"),
          timeout: float | None = None) -> dict:
    """One mode in this process: a cold run (cache empty) and a warm one (every record cached)."""
    from inspector.guard import baseline, run_guard
    from inspector.guard.engines import LocalEngine, RayEngine
    from inspector.guard.reports import to_json

    def engine():
        if mode == "ray":
            return RayEngine("local", jobs)
        return LocalEngine(1 if mode == "serial" else jobs)

    out: dict = {"mode": mode}
    for run in runs:
        eng = engine()
        load0 = os.getloadavg()[0]
        t0 = time.monotonic()
        result = run_guard(paths, targets, baseline.Baseline(None), eng, timeout=timeout)
        wall = time.monotonic() - t0
        doc = to_json(result)
        out[run] = {
            "wall_s": round(wall, 2), "cases": len(result.cases), "compiles": result.compiles,
            "cache_hits": result.cache_hits, "engine": result.engine, "load_avg_start": load0,
            "load_avg_end": os.getloadavg()[0],
            "launchable": sum(1 for c in result.cases if c.metrics is not None and c.metrics.launchable),
            "compile_seconds_sum": round(result.compile_seconds, 1),
            "statuses": {c["kernel_id"] + " on " + c["target"]: "launched" if (c["metrics"] or {}).get("launchable")
                         else (c["metrics"] or {}).get("problem") or c["status"] for c in doc["cases"]},
        }
        if mode == "ray" and isinstance(eng, RayEngine):
            timings = eng.task_timings
            out[run]["ray_start_s"] = round(eng.start_seconds, 2)
            if timings:
                first = {}
                for t in timings:
                    first.setdefault(t["pid"], t)
                rest = [t for t in timings if first[t["pid"]] is not t]
                out[run]["ray_tasks"] = len(timings)
                out[run]["ray_workers"] = len(first)
                # After the compile: the record to the object store, back here, deserialised.
                out[run]["ray_return_delay_median_ms"] = round(
                    statistics.median(t["received"] - t["end"] for t in timings) * 1000, 1)
                # The first tasks (workers idle, Ray just started): submission to the task's start.
                out[run]["ray_first_dispatch_s"] = round(min(t["start"] - t["sent"] for t in timings), 3)
                busy = sum(t["seconds"] for t in timings)
                out[run]["ray_busy_fraction"] = round(busy / (wall * jobs), 3)
                out[run]["ray_task_seconds_median"] = round(statistics.median(t["seconds"] for t in timings), 3)
                out[run]["ray_first_task_per_worker_s"] = [round(t["seconds"], 2) for t in first.values()]
                if rest:
                    out[run]["ray_later_task_seconds_median"] = round(statistics.median(t["seconds"] for t in rest), 3)
            if run == "cold":
                out["ray_noop"] = _ray_noop()
        eng.close()
    return out


def _ray_noop(n: int = 200, burst: int = 2000) -> dict:
    """Ray's own cost: a no-op task's round trip, one at a time, and the rate of a burst."""
    import ray

    if not ray.is_initialized():
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    noop = ray.remote(num_cpus=1)(lambda: None)
    ray.get(noop.remote())
    lat = []
    for _ in range(n):
        t0 = time.perf_counter()
        ray.get(noop.remote())
        lat.append(time.perf_counter() - t0)
    t0 = time.perf_counter()
    ray.get([noop.remote() for _ in range(burst)])
    rate = burst / (time.perf_counter() - t0)
    return {"round_trip_median_ms": round(statistics.median(lat) * 1000, 2),
            "round_trip_p90_ms": round(sorted(lat)[int(n * 0.9)] * 1000, 2), "burst_tasks_per_s": round(rate)}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--targets", default="sm_90,sm_100,gfx942")
    p.add_argument("--modes", default="pool,ray,serial")
    p.add_argument("--jobs", type=int, default=len(os.sched_getaffinity(0)))
    p.add_argument("--out", default=str(REPO / "benchmarks" / "results" / "guard_scale.json"))
    p.add_argument("--quick", action="store_true", help="the guard tests' repository alone (a smoke test)")
    p.add_argument("--timeout", type=float, default=None,
                   help="seconds per compile (default 60; a loaded machine may need more)")
    p.add_argument("--warm-only", metavar="DIR",
                   help="only the warm runs, on the caches a previous run left in DIR (its cache-MODE folders)")
    p.add_argument("--child", help=argparse.SUPPRESS)
    p.add_argument("--runs", default="cold,warm", help=argparse.SUPPRESS)
    p.add_argument("--paths", help=argparse.SUPPRESS)
    ns = p.parse_args()
    targets = ns.targets.split(",")
    if ns.child:
        print(json.dumps(child(ns.child, targets, ns.jobs, json.loads(ns.paths), tuple(ns.runs.split(",")),
                               ns.timeout)))
        return 0

    from inspector.testing import guard_repo
    from inspector.compile.api import triton_version

    work = Path(ns.warm_only) if ns.warm_only else Path(tempfile.mkdtemp(prefix="guard-scale-"))
    runs = ("warm",) if ns.warm_only else ("cold", "warm")
    paths = [str(guard_repo.write(work / "repo") / "ops")]
    if not ns.quick:
        paths += [str(REPO / x) for x in PATHS]
    results = {"machine": _machine(),
               "python": platform.python_version(), "triton": triton_version(), "targets": targets,
               "jobs": ns.jobs, "modes": {}}
    try:
        import ray
        results["ray"] = ray.__version__
    except ImportError:
        results["ray"] = None
    for mode in ns.modes.split(","):
        env = {**os.environ, "TRITON_INSPECTOR_CACHE": str(work / f"cache-{mode}"), "PYTHONPATH": str(REPO)}
        t0 = time.monotonic()
        proc = subprocess.run([sys.executable, __file__, "--child", mode, "--targets", ns.targets, "--jobs",
                               str(ns.jobs), "--paths", json.dumps(paths), "--runs", ",".join(runs)]
                              + (["--timeout", str(ns.timeout)] if ns.timeout else []),
                              env=env, capture_output=True, text=True)
        if proc.returncode != 0:
            print(proc.stderr[-3000:], file=sys.stderr)
            return 1
        doc = json.loads(proc.stdout.strip().splitlines()[-1])
        doc["process_wall_s"] = round(time.monotonic() - t0, 1)
        results["modes"][mode] = doc
        for run in runs:
            r = doc[run]
            print(f"{mode:6s} {run}: {r['cases']} cases ({r['launchable']} launched), {r['compiles']} compiled, "
                  f"{r['cache_hits']} cached, {r['wall_s']} s wall, {r['wall_s'] / max(1, r['cases']) * 1000:.0f} ms "
                  f"per case; load {r['load_avg_start']:.1f}", flush=True)
    modes = results["modes"]
    statuses = {m: d[runs[0]]["statuses"] for m, d in modes.items()}
    results["same_cases_in_every_mode"] = len({json.dumps(s, sort_keys=True) for s in statuses.values()}) == 1
    # Cases whose outcome differs between modes (a compile stopped by its timeout on a loaded machine, ...).
    cases = sorted({c for s in statuses.values() for c in s})
    results["differences"] = {c: {m: s.get(c) for m, s in statuses.items()} for c in cases
                              if len({s.get(c) for s in statuses.values()}) > 1}
    for d in modes.values():
        for run in runs:
            d[run].pop("statuses")
    if "serial" in modes and not ns.warm_only:
        base = modes["serial"]["cold"]["wall_s"]
        for m, d in modes.items():
            d["speed_up_vs_serial"] = round(base / d["cold"]["wall_s"], 2)
    Path(ns.out).parent.mkdir(parents=True, exist_ok=True)
    Path(ns.out).write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps({m: {k: v for k, v in d.items() if k != "mode"} for m, d in modes.items()}, indent=1))
    print(f"written: {ns.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
