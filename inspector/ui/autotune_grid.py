"""The autotune grid's data, without Streamlit: one table row per config, and the configs timed
on this GPU (each pinned in turn, at the file's largest benchmark size)."""

from __future__ import annotations

from typing import Any, Callable

from inspector.occupancy.words import limiter_words
from inspector.record import Inspection

TIMING_REP_MS = 50


def grid_rows(records: list[Inspection], times: dict[int, Any] | None = None) -> list[dict[str, Any]]:
    """One table row per config record (None where a figure is unknown); `times` adds the
    measured median per config (ms, or the reason it has none)."""
    rows = []
    for i, rec in enumerate(records):
        at = rec.autotune_index if rec.autotune_index is not None else i
        cfg = rec.autotune_configs[at] if at < len(rec.autotune_configs) else {}
        meta = {k: v for k, v in cfg.items() if k not in ("num_warps", "num_stages", "num_ctas")}
        occ = rec.occupancy or {}
        r = rec.resources
        amd = rec.backend == "hip"
        rows.append({
            "config": i,
            "parameters": ", ".join(f"{k}={v}" for k, v in meta.items()),
            "num_warps": cfg.get("num_warps", r.num_warps or None),
            "num_stages": cfg.get("num_stages", r.num_stages or None),
            "registers": (r.vgprs if amd else r.registers) if rec.ok else None,
            "spills": ((r.vgpr_spills or 0) + (r.sgpr_spills or 0) if amd else r.spills) if rec.ok else None,
            "shared KiB": round(r.shared_bytes / 1024, 1) if rec.ok else None,
            "blocks/SM": occ.get("blocks_per_sm"),
            "occupancy %": round(100 * occ["occupancy"], 1) if "occupancy" in occ else None,
            "limited by": limiter_words(occ.get("occupancy"), occ.get("limiters")) if occ else None,
            "compile s": round(rec.compile_seconds, 2),
            "error": rec.error.short() if rec.error else "",
        })
        if times is not None:
            t = times.get(i)
            rows[-1]["time ms"] = round(t, 4) if isinstance(t, float) else None
            if isinstance(t, str) and not rows[-1]["error"]:
                rows[-1]["error"] = t
    return rows


def time_configs(path, n: int, progress: Callable[[int, int], None]) -> tuple[dict[int, Any], str]:
    """Median time of each config on this GPU at the file's largest benchmark size; and a label
    saying what was timed. Runs the benchmark worker once per config."""
    from inspector.bench import run_benchmark

    times: dict[int, Any] = {}
    label = ""
    for i in range(n):
        progress(i, n)
        result = run_benchmark(str(path), vs=(), autotune_config=i, rep_ms=TIMING_REP_MS, largest_only=True)
        if result.error is not None:
            times[i] = f"not timed: {result.error.message.splitlines()[0]}"
            continue
        sweep = next((w for w in result.sweeps if w.points), None)
        point = sweep.points[-1] if sweep else None
        timing = point.timing("triton") if point else None
        if timing is None:
            why = (point.errors.get("triton") if point else None) or "no timing"
            times[i] = f"not timed: {why}"
            continue
        times[i] = timing.median_ms
        label = f"{result.device.name if result.device else 'this GPU'}, size {point.label}" + (
            f", variant {sweep.variant}" if sweep.variant else "")
    progress(n, n)
    return times, label
