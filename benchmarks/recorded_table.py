"""The recorded results at the largest size of every variant, as the markdown table of docs/benchmarks.md.

    python benchmarks/recorded_table.py [assets/bench]

Speed-up = PyTorch time / Triton time (above 1 Triton is faster); the last column is run 2
against run 1 from `_stability.json` (Triton's median).
"""

from __future__ import annotations

import json
import os
import sys

from inspector.bench.records import load_result  # noqa: E402


def main(folder: str = "assets/bench") -> None:
    stab = {}
    path = os.path.join(folder, "_stability.json")
    if os.path.exists(path):
        with open(path) as f:
            for e in json.load(f)["differences"]:
                if e["impl"] == "triton":
                    stab[(e["kernel"], e["variant"], e["size"])] = e["relative"]
    print("| kernel, variant | size | Triton ms | Triton rate | vs eager | vs compile | run 2 vs run 1 |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".json") or name.startswith("_"):
            continue
        r = load_result(os.path.join(folder, name))
        c = r.ceilings
        for s in r.sweeps:
            if not s.points:
                continue
            p = s.points[-1]
            t = p.timing("triton")
            if t is None:
                continue
            if t.tflops and c and (not t.gbps or t.tflops / c.matmul_tflops > t.gbps / c.copy_gbps):
                rate = f"{t.tflops:,.0f} TFLOP/s ({100 * t.tflops / c.matmul_tflops:.0f} % of matmul)"
            elif t.gbps and c:
                rate = f"{t.gbps:,.0f} GB/s ({100 * t.gbps / c.copy_gbps:.0f} % of copy)"
            else:
                rate = "-"
            vs = []
            for impl in ("eager", "compile"):
                o = p.timing(impl)
                vs.append(f"{o.median_ms / t.median_ms:.2f}x" if o else "-")
            rel = stab.get((r.kernel, s.variant, p.label))
            print(
                f"| {' '.join(x for x in (r.kernel, s.variant) if x)} | {p.label} | {t.median_ms:.4g} | {rate} | "
                f"{vs[0]} | {vs[1]} | {'-' if rel is None else f'{100 * rel:+.2f} %'} |"
            )


if __name__ == "__main__":
    main(*sys.argv[1:])
