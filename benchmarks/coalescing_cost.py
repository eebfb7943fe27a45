"""What the coalescing analysis adds to an inspection: per gallery kernel, the time of an
inspection (a compile that misses the cache, through the warm worker) against the time the
coalescing of every access takes (`inspector.analysis.coalescing.coalescing`, summed).

    python3 benchmarks/coalescing_cost.py [--target sm_90] [--repeat 5]

Medians of `--repeat` runs; the analysis runs on a fresh context each time (nothing memoised).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--target", default="sm_90")
    ap.add_argument("--repeat", type=int, default=5)
    ns = ap.parse_args()
    import inspector.analysis.coalescing as co
    import inspector.analysis.memory as memory
    from inspector.analysis.context import context
    from inspector.compile.api import inspect_kernel

    spent = [0.0]
    real = co.coalescing

    def timed(*a, **kw):
        t = time.perf_counter()
        try:
            return real(*a, **kw)
        finally:
            spent[0] += time.perf_counter() - t

    memory.coalescing = timed
    print(f"| kernel | inspection (cache miss) | coalescing, all accesses | share |\n|---|---|---|---|")
    for path in sorted((REPO / "kernels").glob("*.py")):
        if path.name.startswith("_"):
            continue
        inspect_kernel(path, target=ns.target)  # warm the worker and the file's imports
        compiles, analyses = [], []
        for _ in range(ns.repeat):
            t = time.perf_counter()
            rec = inspect_kernel(path, target=ns.target, use_cache=False)
            compiles.append(time.perf_counter() - t)
            context(rec).memo.clear()
            spent[0] = 0.0
            memory.memory_report(rec)
            analyses.append(spent[0])
        c, a = statistics.median(compiles), statistics.median(analyses)
        print(f"| {path.stem} | {c:.3f} s | {a * 1000:.1f} ms | {100 * a / c:.1f}% |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
