"""Run-to-run differences between two results of the same sweep: how stable the timings are.

    python -m inspector.bench.compare RUN_A RUN_B [--largest N | --min-bytes B] [--impl triton] [--json]

RUN_A and RUN_B are result files or folders of them (matched by kernel name). For each variant,
the medians of the N largest sizes (the sweep's last N points), or of every size whose
`bytes_moved` is at least B, are compared: (median_b - median_a) / median_a.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import dataclass
from typing import Sequence

from .records import BenchResult, field_dict, load_result


@dataclass
class Difference:
    kernel: str
    variant: str
    size: str
    impl: str
    median_a_ms: float
    median_b_ms: float

    @property
    def relative(self) -> float:
        """(b - a) / a."""
        return (self.median_b_ms - self.median_a_ms) / self.median_a_ms

    def to_dict(self) -> dict:
        return dict(field_dict(self), relative=self.relative)


def median_differences(
    a: BenchResult,
    b: BenchResult,
    largest: int = 1,
    impls: Sequence[str] = ("triton",),
    method: str = "do_bench",
    min_bytes: int | None = None,
) -> list[Difference]:
    """Differences of the medians at the `largest` last sizes of every variant both results timed;
    with `min_bytes`, at every size that moves at least that many bytes instead."""
    out = []
    for sa in a.sweeps:
        sb = next((s for s in b.sweeps if s.variant == sa.variant), None)
        if sb is None:
            continue
        by_label = {p.label: p for p in sb.points}
        if min_bytes is not None:
            chosen = [p for p in sa.points if (p.bytes_moved or 0) >= min_bytes]
        else:
            chosen = sa.points[-largest:] if largest > 0 else []
        for pa in chosen:
            pb = by_label.get(pa.label)
            if pb is None:
                continue
            for impl in impls:
                ta, tb = pa.timing(impl, method), pb.timing(impl, method)
                if ta and tb and ta.median_ms > 0:
                    out.append(Difference(a.kernel, sa.variant, pa.label, impl, ta.median_ms, tb.median_ms))
    return out


def _load_all(path: str) -> dict[str, BenchResult]:
    if os.path.isdir(path):
        files = sorted(os.path.join(path, f) for f in os.listdir(path) if f.endswith(".json"))
    else:
        files = [path]
    results = {}
    for f in files:
        try:
            r = load_result(f)
        except (OSError, ValueError, KeyError):
            continue
        results[r.kernel] = r
    return results


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m inspector.bench.compare", description=__doc__.split("\n\n")[0]
    )
    p.add_argument("run_a")
    p.add_argument("run_b")
    p.add_argument(
        "--largest", type=int, default=1, help="how many of the largest sizes per variant (default 1)"
    )
    p.add_argument(
        "--min-bytes", type=float, default=None,
        help="instead of --largest: every size whose bytes_moved is at least this (e.g. 1e6)",
    )
    p.add_argument("--impl", action="append", help="implementations to compare (default triton)")
    p.add_argument("--json", action="store_true")
    ns = p.parse_args(argv)
    a, b = _load_all(ns.run_a), _load_all(ns.run_b)
    diffs = [
        d
        for k in sorted(a)
        if k in b
        for d in median_differences(
            a[k], b[k], ns.largest, ns.impl or ["triton"],
            min_bytes=int(ns.min_bytes) if ns.min_bytes is not None else None,
        )
    ]
    if ns.json:
        print(json.dumps([d.to_dict() for d in diffs], indent=1))
        return 0
    if not diffs:
        print("nothing to compare", file=sys.stderr)
        return 1
    w = max(len(f"{d.kernel} {d.variant}".strip()) for d in diffs)
    for d in diffs:
        name = f"{d.kernel} {d.variant}".strip()
        print(
            f"{name:<{w}}  {d.size:>16}  {d.impl:<8} {d.median_a_ms:10.4g} ms {d.median_b_ms:10.4g} ms  "
            f"{d.relative * 100:+6.2f}%"
        )
    worst = max(diffs, key=lambda d: abs(d.relative))
    print(
        f"largest |difference|: {abs(worst.relative) * 100:.2f}% "
        f"({worst.kernel} {worst.variant} {worst.size})"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
