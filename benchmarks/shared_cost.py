"""What the shared-memory model adds to an inspection: its time against the inspection's own.

    python3 benchmarks/shared_cost.py [--target sm_90] [--repeat 5] [--json OUT]

For each gallery kernel (and the shared-memory cases of benchmarks/shared_cases.py): one warm
inspection without the cache (`inspect_kernel(use_cache=False, defer=("sass",))`, after a first
one has warmed the worker), then the model alone on its PTX (`shared_report` on a fresh analysis
context: the lane walk, the bank rules, the TTGIR ops), median of `--repeat`. The issue's bar:
at most 5% of the inspection.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from inspector.analysis import context as context_module
from inspector.analysis.shared_memory import shared_report
from inspector.compile.api import inspect_kernel
from inspector.places import gallery_dir

HERE = Path(__file__).resolve().parent
CASES = [(HERE / "shared_cases.py", k) for k in ("transpose", "column_sum", "matmul", "transpose_gluon")]


def _fresh(rec):
    """The record's parsed stages built (as every analysis needs them) and the model's own result
    dropped, so that what is timed is the model: the lane walk, the bank rules, the TTGIR ops."""
    context_module.context(rec).memo.pop("shared_report", None)
    return rec


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--target", default="sm_90")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--json")
    ns = ap.parse_args()
    files = [(p, None) for p in sorted(gallery_dir().glob("[!_]*.py"))] + CASES
    rows = []
    for path, kernel in files:
        inspect_kernel(path, kernel=kernel, target=ns.target, timeout=600)  # warm: worker, file, Triton
        walls, model = [], []
        for _ in range(ns.repeat):
            t = time.perf_counter()
            rec = inspect_kernel(path, kernel=kernel, target=ns.target, timeout=600, use_cache=False, defer=("sass",))
            walls.append(time.perf_counter() - t)
            if rec.error is not None:
                break
            _fresh(rec)
            t = time.perf_counter()
            shared_report(rec)
            model.append(time.perf_counter() - t)
        if not model:
            rows.append({"file": path.name, "kernel": kernel, "error": rec.error.short()})
            continue
        w, m = statistics.median(walls), statistics.median(model)
        rows.append({"file": path.name, "kernel": kernel or rec.kernel, "inspection_s": round(w, 3),
                     "shared_model_s": round(m, 4), "share": round(m / w, 4),
                     "ptx_lines": len(rec.stages.get("ptx", "").splitlines())})
        print(f"{path.name:32} {rows[-1]['kernel']:26} inspection {w:7.3f} s  model {m * 1000:7.1f} ms  "
              f"{100 * m / w:5.2f}%  ({rows[-1]['ptx_lines']} PTX lines)", flush=True)
    if ns.json:
        Path(ns.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
