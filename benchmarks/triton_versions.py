"""What a second Triton release costs: adding it, its disk size, and a compile with each release.

1. `--add`: add each release of --versions (other than the installed one) as a side environment
   into a fresh inspector home (from the package index, through pip and its cache, as `python -m
   inspector versions add` does), timing it end to end and reading its size on disk; the home is
   removed at the end unless --keep.
   Without --add, the side environments already under $TRITON_INSPECTOR_HOME are used.
2. For every release, a warm worker manager of that release compiles each bundled kernel for each
   target --repeat times with the cache off (`inspect_kernel(use_cache=False, triton=...)`); the
   table has the median wall time per compile seen from the caller, and whether every kernel
   compiled. Releases take turns kernel by kernel, so a drift in the machine's load falls on all.

Run: python benchmarks/triton_versions.py --versions 3.6.0,3.9.0 [--add] [--targets sm_90,gfx942] [--repeat 3]
Prints markdown tables; say which machine it ran on.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--versions", default="3.6.0,3.9.0")
    ap.add_argument("--targets", default="sm_90,gfx942")
    ap.add_argument(
        "--kernels", default="", help="comma-separated kernel names (default: every bundled kernel)"
    )
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--add", action="store_true", help="time adding each release into a fresh home")
    ap.add_argument("--keep", action="store_true", help="with --add: keep the home (its path is printed)")
    ns = ap.parse_args()

    from inspector import versions
    from inspector.compile.api import inspect_kernel, triton_sandbox

    releases = [v.strip() for v in ns.versions.split(",") if v.strip()]
    home = None
    if ns.add:
        home = tempfile.mkdtemp(prefix="inspector-versions-bench-")
        os.environ["TRITON_INSPECTOR_HOME"] = home
        print("| release | add (s) | disk (MiB) |\n|---|---|---|")
        for release in releases:
            if release == versions.base_version():
                continue
            t0 = time.monotonic()
            versions.add(release)
            env = versions.wait(release)
            took = time.monotonic() - t0
            if not env.ready:
                print(f"| {release} | failed: {env.error} | |")
                continue
            print(f"| {release} | {took:.1f} | {env.bytes / 2**20:.0f} |", flush=True)
        print()
    names = [k for k in ns.kernels.split(",") if k] or sorted(
        p.stem for p in (REPO / "kernels").glob("*.py") if not p.name.startswith("_")
    )
    targets = [t for t in ns.targets.split(",") if t]
    times: dict[tuple[str, str, str], list[float]] = {}
    failed: dict[str, list[str]] = {r: [] for r in releases}
    boxes = {}
    for release in releases:
        _, box = triton_sandbox(release)
        if box is None:
            from inspector.isolation.selection import default_sandbox

            box = default_sandbox()
        box.warm_up(complete=True)
        boxes[release] = box
    for name in names:
        for target in targets:
            for _ in range(ns.repeat):
                for release in releases:
                    t0 = time.monotonic()
                    rec = inspect_kernel(
                        REPO / "kernels" / f"{name}.py",
                        target=target,
                        triton=release,
                        use_cache=False,
                        sandbox=boxes[release],
                    )
                    took = time.monotonic() - t0
                    if rec.error is not None or rec.triton_version != release:
                        failed[release].append(
                            f"{name}/{target}: {rec.error.kind if rec.error else rec.triton_version}"
                        )
                        continue
                    times.setdefault((name, target, release), []).append(took)
    print(
        f"Compile wall time per inspection (s), median of {ns.repeat}, cache off, warm worker manager; "
        f"{platform.node()}, {os.cpu_count()} CPUs, Python {platform.python_version()}\n"
    )
    print("| kernel | target | " + " | ".join(releases) + " |")
    print("|---|---|" + "---|" * len(releases))
    for name in names:
        for target in targets:
            cells = [
                f"{statistics.median(times[(name, target, r)]):.2f}"
                if (name, target, r) in times
                else "failed"
                for r in releases
            ]
            print(f"| {name} | {target} | " + " | ".join(cells) + " |")
    totals = [sum(statistics.median(v) for k, v in times.items() if k[2] == r) for r in releases]
    print("| all | | " + " | ".join(f"{t:.2f}" for t in totals) + " |")
    for release, bad in failed.items():
        if bad:
            print(f"\n{release} failed: {', '.join(bad)}")
    if home and not ns.keep:
        shutil.rmtree(home, ignore_errors=True)
    elif home:
        print(f"\nhome kept: {home}")


if __name__ == "__main__":
    main()
