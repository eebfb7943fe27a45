"""`python -m inspector occupancy`: the occupancy calculator on the command line.

    occupancy --arch sm_90 --threads 128 --regs 56 --smem 0 [--json]
    occupancy --arch gfx942 --num-warps 4 --regs 128 --sgprs 40 --smem 32768
    occupancy --gpu H100 --num-warps 8 --regs 96 --smem 65536 --grid 1000   (adds wave quantisation)
    occupancy --arch sm_90 --threads 256 --regs 64 --what-if registers=32 --what-if threads=128
    occupancy --csv IN.csv [--out OUT.csv]   (rows arch,threads,regs,smem; adds blocks_per_sm,occupancy,limiters)

Shared memory follows Triton's launch rule: all dynamic, the kernel's limit raised to the opt-in
maximum when it needs more than 48 KB.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import io
import json
import sys
from typing import Any

from inspector.cli.options import command_parser
from inspector.hardware.catalogue import GPU, find_gpu, gpu_for_target
from inspector.occupancy import Occupancy, occupancy, occupancy_curves, parse_arch, warp_size, waves

CSV_FIELDS_IN = ["arch", "threads", "regs", "smem"]
CSV_FIELDS_OUT = ["blocks_per_sm", "occupancy", "limiters"]
_WHAT_IF_KEYS = ("arch", "threads", "num_warps", "regs", "registers", "smem", "shared", "agprs", "sgprs", "gpu")


def register(subparsers: Any) -> None:
    """Add the `occupancy` subcommand to the CLI's subparsers."""
    p = command_parser(subparsers, "occupancy",
                       "blocks per SM, occupancy and its limiters (NVIDIA exact to cuda_occupancy.h; AMD CDNA)",
                       __doc__)
    p.add_argument("--arch", help="sm_70..sm_120 or gfx942/gfx950 (default: the --gpu's architecture)")
    p.add_argument("--gpu", help="a catalogue GPU (H100, A100, MI300X, ...): its arch and SM count")
    size = p.add_mutually_exclusive_group()
    size.add_argument("--threads", type=int, help="threads (work-items) per block")
    size.add_argument("--num-warps", type=int, help="Triton's num_warps (threads = 32 or 64 x num_warps)")
    p.add_argument("--regs", type=int, default=0, help="registers per thread (AMD: arch VGPRs)")
    p.add_argument("--smem", type=int, default=0, help="shared memory / LDS per block in bytes (Triton: metadata.shared)")
    p.add_argument("--agprs", type=int, default=0, help="AMD: accumulation VGPRs")
    p.add_argument("--sgprs", type=int, default=0, help="AMD: SGPRs (.sgpr_count)")
    p.add_argument("--carveout", type=int, default=-1, help="NVIDIA: preferred shared-memory carveout, percent")
    p.add_argument("--grid", type=int, help="blocks in the grid: report waves on the GPU")
    p.add_argument("--what-if", action="append", metavar="NAME=VALUE",
                   help="recompute with an input changed: threads, num_warps, regs, smem, agprs, sgprs, arch, gpu")
    p.add_argument("--curves", action="store_true", help="with --json: add the three calculator curves")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--csv", metavar="IN.csv", help="batch: rows arch,threads,regs,smem")
    p.add_argument("--out", metavar="OUT.csv", help="with --csv: write here instead of stdout")
    p.set_defaults(func=run)


# ---- the calculation -------------------------------------------------------------------------
def _threads(ns: argparse.Namespace, arch: str) -> int:
    if ns.num_warps is not None:
        return warp_size(arch) * ns.num_warps
    if ns.threads is None:
        raise ValueError("give --threads or --num-warps")
    return ns.threads


def _gpu(ns: argparse.Namespace, arch: str) -> GPU | None:
    if ns.gpu:
        return find_gpu(ns.gpu)
    return gpu_for_target(arch)


def _arch(ns: argparse.Namespace) -> str:
    if ns.arch:
        return parse_arch(ns.arch).name
    if ns.gpu:
        return find_gpu(ns.gpu).arch
    raise ValueError("give --arch or --gpu")


def _compute(arch: str, threads: int, regs: int, smem: int, ns: argparse.Namespace) -> Occupancy:
    return occupancy(arch, threads, regs, smem, agprs=ns.agprs, sgprs=ns.sgprs, carveout=ns.carveout)


def _what_if(ns: argparse.Namespace, arch: str, threads: int) -> dict[str, Any] | None:
    if not ns.what_if:
        return None
    inputs: dict[str, Any] = {"arch": arch, "threads": threads, "regs": ns.regs, "smem": ns.smem,
                              "agprs": ns.agprs, "sgprs": ns.sgprs}
    changes: dict[str, str] = {}
    for item in ns.what_if:
        key, sep, value = item.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or key not in _WHAT_IF_KEYS:
            raise ValueError(f"--what-if expects NAME=VALUE with NAME one of {', '.join(_WHAT_IF_KEYS)}; got {item!r}")
        changes[key] = value.strip()
    for key, value in changes.items():
        if key == "gpu":
            inputs["arch"] = find_gpu(value).arch
        elif key == "arch":
            inputs["arch"] = parse_arch(value).name
        elif key == "num_warps":
            inputs["threads"] = None  # resolved below, once the architecture is known
            inputs["num_warps"] = int(value)
        else:
            inputs[{"registers": "regs", "shared": "smem"}.get(key, key)] = int(value)
    if inputs.get("num_warps") is not None:
        inputs["threads"] = warp_size(inputs["arch"]) * inputs.pop("num_warps")
    after = occupancy(inputs["arch"], inputs["threads"], inputs["regs"], inputs["smem"], agprs=inputs["agprs"],
                      sgprs=inputs["sgprs"], carveout=ns.carveout)
    return {"changes": changes, "inputs": inputs, "after": dataclasses.asdict(after)}


def _report(ns: argparse.Namespace) -> tuple[dict[str, Any], Occupancy]:
    arch = _arch(ns)
    threads = _threads(ns, arch)
    res = _compute(arch, threads, ns.regs, ns.smem, ns)
    out: dict[str, Any] = {"occupancy": dataclasses.asdict(res)}
    gpu = _gpu(ns, arch)
    if gpu is not None:
        out["gpu"] = dataclasses.asdict(gpu)
    if ns.grid is not None:
        if gpu is None:
            raise ValueError(f"no GPU known for {arch}: give --gpu to count waves")
        out["waves"] = dataclasses.asdict(waves(ns.grid, res.blocks_per_sm, gpu.sm_count))
    what = _what_if(ns, arch, threads)
    if what is not None:
        out["what_if"] = what
    if ns.curves:
        w = warp_size(arch)
        if threads % w:
            raise ValueError(f"--curves needs a block size that is a multiple of {w}")
        out["curves"] = dataclasses.asdict(occupancy_curves(arch, threads // w, ns.regs, ns.smem, agprs=ns.agprs,
                                                            sgprs=ns.sgprs, carveout=ns.carveout))
    return out, res


# ---- output ----------------------------------------------------------------------------------
def _fmt_limit(v: int | None) -> str:
    return "-" if v is None else str(v)


def format_result(res: Occupancy) -> list[str]:
    """Human-readable lines for one result."""
    r = dataclasses.asdict(res)
    unit, warp = ("SM", "warps") if res.backend == "cuda" else ("CU", "waves")
    lines = []
    if res.backend == "cuda":
        lines.append(f"{res.arch}: {res.threads} threads ({r['warps_per_block']} warps), {res.registers} registers/thread, "
                     f"{r['dynamic_smem']} B shared memory")
    else:
        lines.append(f"{res.arch}: {res.threads} work-items ({r['waves_per_workgroup']} waves), "
                     f"{r['vgprs']} VGPRs + {r['agprs']} AGPRs, {r['sgprs']} SGPRs, {r['lds']} B LDS")
    lines.append(f"  {'blocks/' + unit:<15}{res.blocks_per_sm}")
    lines.append(f"  {'active ' + warp:<15}{res.active_warps} of {res.max_warps_per_sm}")
    lines.append(f"  occupancy      {100 * res.occupancy:.1f}%")
    lines.append(f"  limited by     {', '.join(res.limiters)}")
    lines.append(f"  limits (blocks/{unit}): " + ", ".join(f"{k} {_fmt_limit(v)}" for k, v in res.limits.items()))
    if res.backend == "cuda":
        lines.append(f"  registers      {r['registers_per_warp']} per warp allocated ({res.registers} x 32, in units "
                     f"of 256), {r['registers_per_block']} per block")
        lines.append(f"  shared memory  {r['smem_per_block']} B per block allocated (reservation included); "
                     f"carveout {r['smem_per_sm']} B/SM; kernel limit {r['max_dynamic_smem']} B dynamic")
    else:
        lines.append(f"  VGPRs          {r['vgprs_allocated']} allocated -> {r['waves_per_simd_by_vgprs']} waves/SIMD; "
                     f"SGPRs {r['sgprs_allocated']} -> {_fmt_limit(r['waves_per_simd_by_sgprs'])}; "
                     f"{r['waves_per_simd']:g} waves/SIMD resident")
    lines.extend(f"  note: {n}" for n in res.notes)
    return lines


def _print_human(out: dict[str, Any], res: Occupancy) -> None:
    for line in format_result(res):
        print(line)
    if "waves" in out:
        w, g = out["waves"], out["gpu"]
        if w["launchable"]:
            print(f"  waves          {w['fractional_waves']:.2f} -> {w['waves']} on {g['name']} ({g['sm_count']} "
                  f"{'SMs' if g['vendor'] == 'nvidia' else 'CUs'}, {w['blocks_per_wave']} blocks/wave); last wave "
                  f"{w['last_wave_blocks']} blocks; efficiency {100 * w['efficiency']:.1f}%")
        else:
            print("  waves          none: the kernel cannot launch")
    if "what_if" in out:
        wi = out["what_if"]
        a = wi["after"]
        print(f"what if {', '.join(f'{k}={v}' for k, v in wi['changes'].items())}: "
              f"{a['blocks_per_sm']} blocks, {100 * a['occupancy']:.1f}% (was {res.blocks_per_sm}, "
              f"{100 * res.occupancy:.1f}%), limited by {', '.join(a['limiters'])}")


def _run_csv(ns: argparse.Namespace) -> int:
    with open(ns.csv, newline="") as f:
        rows = [row for row in csv.reader(f) if row and any(c.strip() for c in row)]
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    status = 0
    if rows and rows[0][0].strip().lower() == "arch":
        writer.writerow([c.strip() for c in rows[0]] + CSV_FIELDS_OUT)
        rows = rows[1:]
    for number, row in enumerate(rows, 1):
        try:
            arch, threads, regs, smem = (c.strip() for c in row[:4])
            res = occupancy(arch, int(threads), int(regs), int(smem))
            writer.writerow(row + [res.blocks_per_sm, f"{res.occupancy:.4f}", "+".join(res.limiters)])
        except (ValueError, KeyError) as exc:
            print(f"{ns.csv}: row {number}: {exc}", file=sys.stderr)
            writer.writerow(row + ["", "", ""])
            status = 1
    if ns.out:
        with open(ns.out, "w", newline="") as f:
            f.write(buf.getvalue())
    else:
        sys.stdout.write(buf.getvalue())
    return status


def run(ns: argparse.Namespace) -> int:
    """Handler: 0 on success, 2 on bad input, 1 when a --csv row failed."""
    if ns.csv:
        return _run_csv(ns)
    try:
        out, res = _report(ns)
    except (ValueError, KeyError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if ns.json:
        print(json.dumps(out, indent=2))
    else:
        _print_human(out, res)
    return 0
