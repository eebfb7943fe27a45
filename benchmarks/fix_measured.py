"""What `fix` measures on a GPU: a jagged row sum whose row starts come from memory (its loads are
scalar), at a size where memory traffic dominates, run through `fix(target="native")`; prints the
original's time and each candidate's (the example's launches replayed, median of do_bench), with
whether its promises held and its outputs matched under the interpreter.

    python benchmarks/fix_measured.py [--rows 8192] [--json out.json]     (needs a GPU)
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from jagged import jagged_source


# rows padded to 16 elements, random lengths from a fixed seed
LENGTHS = "torch.randint(1, 256, ({rows},), generator=torch.Generator().manual_seed(0)) * 16"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=8192)
    ap.add_argument("--json")
    ns = ap.parse_args()
    from inspector.fixes import fix

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "jagged.py"
        path.write_text(jagged_source(LENGTHS.format(rows=ns.rows), block=4096, num_warps=8))
        report = fix(path, target="native", timeout=600)
    rec = report.original
    print(f"{rec.kernel} on {rec.device_name} (Triton {rec.triton_version}), {ns.rows} rows: "
          f"{report.ms * 1000:.1f} us as written" if report.ms else f"not timed: {report.ms_note}")
    rows = []
    for ff in report.findings:
        for t in ff.candidates:
            if t.ms is None:
                continue
            rows.append({"finding": ff.finding.code, "candidate": t.title, "us": round(t.ms * 1000, 2),
                         "speedup": round(report.ms / t.ms, 3) if report.ms else None,
                         "assumptions_hold": t.assumptions_hold, "outputs_equal": t.checked})
            print(f"  {t.title}: {t.ms * 1000:.1f} us ({report.ms / t.ms:.2f}x); promises kept: "
                  f"{t.assumptions_hold}; outputs equal: {t.checked}")
    if ns.json:
        Path(ns.json).write_text(json.dumps({"device": rec.device_name, "triton": rec.triton_version,
                                             "rows": ns.rows, "original_us": report.ms and report.ms * 1000,
                                             "candidates": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
