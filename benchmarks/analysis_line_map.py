"""How long the source <-> stage line mapping takes on large stages.

Compiles a kernel with large stages (by default the vector add with BLOCK=65536 and one warp: each
thread handles 2048 elements, about 20,000 lines of PTX and 28,000 of SASS), then times, on a
fresh copy of the record each time (nothing cached):
- each stage's location parser alone (the SASS one includes its re-attribution through the PTX);
- `line_map(rec)`: every stage parsed and mapped, both directions;
- `memory_report`, `instruction_mix` and `advise` after it (they reuse the parsed stages);
- a lookup in each direction once the map exists.

Run: python benchmarks/analysis_line_map.py [--file kernels/add.py] [--target sm_90] [--const BLOCK=65536]
     [--num-warps 1] [--repeat 5]
Prints a markdown table of medians, wall-clock and CPU time, on whatever machine runs it (say which).
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

from inspector.analysis import advise, instruction_mix, line_map, memory_report
from inspector.analysis.context import PARSERS
from inspector.analysis.locations import ptx_locations, sass_locations, stage_lines
from inspector.compile.api import inspect_kernel, triton_version
from inspector.record import Inspection


def median_ms(fn, repeat: int) -> str:
    """'wall | cpu' medians in ms (CPU time of this process: less disturbed by a busy machine)."""
    wall, cpu = [], []
    for _ in range(repeat):
        t, c = time.perf_counter(), time.process_time()
        fn()
        wall.append((time.perf_counter() - t) * 1000)
        cpu.append((time.process_time() - c) * 1000)
    return f"{statistics.median(wall):.1f} | {statistics.median(cpu):.1f}"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--file", default=str(REPO / "kernels" / "add.py"))
    p.add_argument("--target", default="sm_90")
    p.add_argument("--const", action="append", default=None, help="NAME=VALUE (default BLOCK=65536)")
    p.add_argument("--num-warps", type=int, default=1)
    p.add_argument("--repeat", type=int, default=5)
    ns = p.parse_args()
    consts = dict(c.split("=", 1) for c in (ns.const or ["BLOCK=65536"]))
    rec = inspect_kernel(ns.file, target=ns.target, consts=consts, options={"num_warps": str(ns.num_warps)},
                         timeout=600)
    if rec.error:
        print(rec.error.short(), file=sys.stderr)
        return 1
    data = rec.to_dict()

    def fresh() -> Inspection:
        return Inspection.from_dict(data)

    print(f"{rec.kernel} on {rec.target}, consts {consts}, num_warps {ns.num_warps}; Triton {triton_version()}; "
          f"Python {platform.python_version()} on {platform.machine()} ({platform.processor() or 'cpu'}); "
          f"median of {ns.repeat}\n")
    print("| what | lines | wall ms | cpu ms |")
    print("|---|---:|---:|---:|")
    for stage, text in rec.stages.items():
        n = len(stage_lines(text))
        if stage == "sass":
            ptx = ptx_locations(rec.stages["ptx"]) if "ptx" in rec.stages else None
            ms = median_ms(lambda text=text, ptx=ptx: sass_locations(text, ptx), ns.repeat)
            label = "parse sass (with PTX re-attribution)"
        else:
            ms = median_ms(lambda text=text, stage=stage: PARSERS[stage](text), ns.repeat)
            label = f"parse {stage}"
        print(f"| {label} | {n} | {ms} |")
    total_lines = sum(len(stage_lines(t)) for t in rec.stages.values())
    print(f"| line_map(rec), every stage | {total_lines} | {median_ms(lambda: line_map(fresh()), ns.repeat)} |")

    def everything() -> None:
        r = fresh()
        line_map(r)
        memory_report(r)
        instruction_mix(r)
        advise(r)

    print(f"| line_map + memory + mix + advise | {total_lines} | {median_ms(everything, ns.repeat)} |")
    lm = line_map(rec)
    biggest = max(lm.stages.values(), key=lambda s: len(s.to_source))
    lines = list(biggest.to_source)
    sources = list(biggest.from_source)
    t = time.perf_counter()
    for ln in lines:
        lm.source_lines(biggest.stage, ln)
    for s in sources:
        lm.stage_lines(biggest.stage, s)
    per = (time.perf_counter() - t) * 1e6 / max(1, len(lines) + len(sources))
    print(f"| one lookup in {biggest.stage} (either direction), microseconds | {len(lines)} | {per:.2f} | |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
