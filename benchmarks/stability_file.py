"""Write assets/bench/_stability.json from two runs of the same sweep (benchmarks/record_bench.sh).

    python benchmarks/stability_file.py RUN1_DIR RUN2_DIR [--into assets/bench/_stability.json]

Every size that moves at least 1 MB, every implementation: (run 2 - run 1) / run 1 of the median.
The kernels in the two runs replace their entries in the file; other kernels' entries are kept
with their own dates (`runs`), so a kernel re-recorded alone updates only itself. The summary
figures are recomputed over all entries.
"""

from __future__ import annotations

import argparse
import json
import os


from inspector.bench.compare import median_differences  # noqa: E402
from inspector.bench.records import load_result  # noqa: E402

MIN_BYTES = 1_000_000
IMPLS = ["triton", "eager", "compile"]
WHAT = (
    "Run-to-run stability: the same sweep (python -m inspector bench KERNELS, benchmarks/record_bench.sh) "
    "run twice in a row in two processes on one machine; median of every size that moves at least 1 MB "
    "(bytes_moved >= 1e6), every implementation, (run 2 - run 1) / run 1. Run 1 is the recorded "
    "assets/bench/<kernel>.json. Timer: CUDA-graph replays cycling through input copies over 3x the L2 "
    "cache, 5 rounds with fresh copies, median round (docs/benchmarks.md). Clocks as found, not pinned: "
    "the lent machine's rules forbid nvidia-smi -lgc/-ac. Written by benchmarks/stability_file.py; "
    "`runs` gives each kernel's two dates."
)


def _load(folder: str) -> dict:
    out = {}
    for name in sorted(os.listdir(folder)):
        if name.endswith(".json") and not name.startswith("_"):
            r = load_result(os.path.join(folder, name))
            out[r.kernel] = r
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run1")
    ap.add_argument("run2")
    ap.add_argument("--into", default="assets/bench/_stability.json")
    args = ap.parse_args(argv)
    a, b = _load(args.run1), _load(args.run2)
    kernels = sorted(set(a) & set(b))
    old = {}
    if os.path.exists(args.into):
        with open(args.into) as f:
            old = json.load(f)
    entries = [e for e in old.get("differences", []) if e["kernel"] not in kernels]
    runs = {k: v for k, v in old.get("runs", {}).items() if k not in kernels}
    for k in kernels:
        entries.extend(d.to_dict() for d in median_differences(a[k], b[k], impls=IMPLS, min_bytes=MIN_BYTES))
        runs[k] = {"run1_date": a[k].date, "run2_date": b[k].date}
    entries.sort(key=lambda e: (e["kernel"], e["variant"]))
    triton = [e for e in entries if e["impl"] == "triton"]
    device = a[kernels[0]].device.to_dict() if kernels and a[kernels[0]].device else old.get("device")
    out = {
        "what": WHAT,
        "device": device,
        "min_bytes": MIN_BYTES,
        "runs": dict(sorted(runs.items())),
        "largest_abs_relative_triton": max((abs(e["relative"]) for e in triton), default=0.0),
        "largest_abs_relative_any": max((abs(e["relative"]) for e in entries), default=0.0),
        "triton_points": len(triton),
        "triton_points_over_3pct": sum(abs(e["relative"]) > 0.03 for e in triton),
        "points": len(entries),
        "points_over_3pct": sum(abs(e["relative"]) > 0.03 for e in entries),
        "differences": entries,
    }
    with open(args.into, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    print(
        f"{args.into}: {len(triton)} Triton points, largest {out['largest_abs_relative_triton']:.2%}, "
        f"{out['triton_points_over_3pct']} over 3 %; all implementations: {len(entries)} points, "
        f"largest {out['largest_abs_relative_any']:.2%}, {out['points_over_3pct']} over 3 %"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
