"""The shipped profiles' checks as one markdown table: the inspector's static predictions against
what Nsight Compute measured, for every gallery kernel (docs/profile.md#every-gallery-kernel-profiled).

    python benchmarks/profile_table.py [assets/profiles]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def _pair(check: dict) -> str:
    def fmt(v: float | None) -> str:
        return "?" if v is None else f"{v:,.0f}" if float(v) == int(v) else f"{v:,.4g}"

    mark = {True: "", False: " **differs**", None: " (unknown)"}[check["agrees"]]
    return f"{fmt(check['predicted'])} / {fmt(check['measured'])}{mark}"


def main(folder: str = "assets/profiles") -> None:
    print("| profile | registers | theoretical occupancy % | L2 sectors per memory line (predicted / measured) "
          "| roofline point |")
    print("|---|---|---|---|---|")
    for path in sorted(Path(folder).glob("*.json")):
        prof = json.loads(path.read_text())
        checks = {c["what"]: c for c in prof["checks"]}
        lines = [f"line {c['what'].rsplit(' ', 1)[1]}: {_pair(c)}" for w, c in checks.items() if w.startswith("L2 sectors")]
        rate = prof["figures"].get("rate", {})
        point = (f"{rate['intensity']:.3g} FLOP/B, {rate['of_roof'] * 100:.1f}% of roof ({rate['bound']})"
                 if rate.get("bound") else f"{rate.get('dram_gbps', 0):,.0f} GB/s, no arithmetic")
        print(f"| `{path.stem}` | {_pair(checks['registers per thread'])} "
              f"| {_pair(checks['theoretical occupancy (%)'])} | {'; '.join(lines) or '-'} | {point} |")


if __name__ == "__main__":
        main(*sys.argv[1:])
