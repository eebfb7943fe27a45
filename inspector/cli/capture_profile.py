"""`python -m inspector capture profile RUN [--top N] [--out DIR] [--json]`: where a captured run's
GPU time went, kernel by kernel, and its heaviest kernels measured line by line.

What torch.profiler's kernel table gives a training step, for its Triton kernels: the capture's own
per-kernel GPU time (`capture --time`: CUDA events around every launch), each kernel's share of it,
launches and time per launch; then the N heaviest kernels, each reopened as its standalone file (the
captured launch, the same specialisation) and profiled on this GPU like `profile FILE` (Nsight
Compute, or Proton where the counters are forbidden). A capture made without --time has no times:
its kernels are ranked by launches, and the output says so.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from ..capture.store import Capture, KernelEntry


def heaviest(cap: Capture) -> list[KernelEntry]:
    """The launched kernels, most GPU time first (most launches first in an untimed capture)."""
    launched = [k for k in cap.kernels if k.launches]
    if cap.timed:
        return sorted(launched, key=lambda k: (-(k.time_ms or 0.0), -k.launches, k.name))
    return sorted(launched, key=lambda k: (-k.launches, k.name))


def time_table(cap: Capture) -> list[dict[str, Any]]:
    """One row per launched kernel, heaviest first: launches, total and per-launch GPU time, share."""
    rows = heaviest(cap)
    total = sum(k.time_ms or 0.0 for k in rows) if cap.timed else 0.0
    out = []
    for k in rows:
        row: dict[str, Any] = {"kernel": k.name, "launches": k.launches}
        if cap.timed and k.time_ms is not None:
            row.update(time_ms=round(k.time_ms, 4), per_launch_us=round(1000 * k.time_ms / k.launches, 2),
                       share=round(k.time_ms / total, 4) if total else None)
        out.append(row)
    return out


def format_time_table(cap: Capture) -> list[str]:
    rows = time_table(cap)
    if not cap.timed:
        return ["(captured without --time: no GPU times; kernels ranked by launches)"] + [
            f"  {r['launches']:>8,}  {r['kernel']}" for r in rows]
    total = sum(r.get("time_ms") or 0.0 for r in rows)
    out = [f"GPU time of the captured Triton kernels: {total:.3f} ms",
           f"  {'share':>6}  {'total ms':>10}  {'launches':>8}  {'us/launch':>9}  kernel"]
    for r in rows:
        share = f"{100 * r['share']:.1f}%" if r.get("share") is not None else "-"
        out.append(f"  {share:>6}  {r.get('time_ms', 0):>10.3f}  {r['launches']:>8,}  {r.get('per_launch_us', 0):>9.2f}"
                   f"  {r['kernel']}")
    return out


def profile_heaviest(cap: Capture, top: int, out_dir: str | None, ncu: str | None, as_json: bool) -> int:
    """Print the time table, then profile the `top` heaviest kernels; 0, or 1 when one failed."""
    from ..capture.reopen import NoReproducer, reopen
    from ..profile.measure import measure
    from ..profile.run_ncu import ProfileError
    from .profile import format_profile

    status = 0
    results: list[dict[str, Any]] = []
    if not as_json:
        print("\n".join(format_time_table(cap)))
    for entry in heaviest(cap)[:top]:
        try:
            rec = reopen(cap, entry, target="native")
        except NoReproducer as e:
            print(f"error: {e}", file=sys.stderr)
            status = 1
            continue
        if rec.error or not rec.reproducer:
            print(f"error: {entry.name}: {rec.error.short() if rec.error else 'no reproducer'}", file=sys.stderr)
            status = 1
            continue
        try:
            got = measure(rec, ncu)
        except ProfileError as e:
            print(f"error: {entry.name}: {e}", file=sys.stderr)
            status = 1
            continue
        prof = got.profile
        if out_dir:
            os.makedirs(out_dir, exist_ok=True)
            with open(os.path.join(out_dir, f"{entry.name}.json"), "w") as f:
                json.dump(prof.to_dict(), f, indent=1)
        results.append({"kernel": entry.name, "time_ms": entry.time_ms, "profile": prof.to_dict()})
        if not as_json:
            print("")
            if got.fallback_reason:
                print(f"note: Nsight Compute could not measure it ({got.fallback_reason}); Proton timed it")
            print("\n".join(format_profile(prof, top=5)))
    if as_json:
        print(json.dumps({"kernels": time_table(cap), "profiles": results}, indent=1))
    return status
