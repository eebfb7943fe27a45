"""`python -m inspector fits FILE ...`: will the kernel run everywhere? Every GPU in the catalogue
(NVIDIA and AMD), each autotune config: launchable, registers, spills, shared memory, occupancy and
its limiter; for a cell that does not fit, the change (fewer stages, a smaller tile) the tool
compiled for that target and found to fit.

    fits kernels/matmul.py
    fits kernels/attention.py --json

Takes the same options as `compile` (--target is ignored: every architecture is compiled). Exit
status: 0 when every cell launches, 1 when some cell does not, 2 on usage errors.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from typing import Any

from .options import add_compile_options, command_parser, compile_request, run_options


def register(subparsers: Any) -> None:
    """Add the `fits` subcommand."""
    p = command_parser(subparsers, "fits", "the pre-flight matrix: every catalogue GPU x autotune config", __doc__)
    add_compile_options(p)
    p.add_argument("--json", action="store_true", help="print one JSON object: cells[]")
    p.add_argument("--gpu", action="append", metavar="NAME",
                   help="only this catalogue GPU (H100, RTX 4090, MI300X; repeatable); default: all of them")
    p.set_defaults(func=run)


def format_matrix(report: Any) -> list[str]:
    """One row per GPU and config."""
    from .explain import _table

    rows = [["gpu", "target", "config", "launches", "registers", "spills", "shared", "occupancy", "limited by"]]
    for c in report.cells:
        rows.append([c.gpu, c.target, "-" if c.config is None else str(c.config), "yes" if c.launchable else "NO",
                     "-" if c.registers is None else str(c.registers), f"{c.spill_bytes} B",
                     f"{c.shared_bytes / 1024:.1f} KiB", "-" if c.occupancy is None else f"{c.occupancy * 100:.1f} %",
                     ", ".join(c.limiters) or "-"])
    out = [f"{report.kernel} ({report.file}) on every GPU in the catalogue", ""] + _table(rows, "")
    notes = [c for c in report.cells if not c.launchable or c.spill_bytes]
    for c in notes:
        where = f"{c.gpu}" + (f", config {c.config}" if c.config is not None else "")
        why = c.problem or f"spills {c.spill_bytes} B"
        out.append(f"\n{where}: {why}")
        out.append(f"  fits with: {c.fix}" if c.fix else "  no change the tool tried makes it fit")
    return out


def run(ns: argparse.Namespace) -> int:
    """Handler for `fits`."""
    from ..preflight.matrix import fits

    if not ns.file:
        raise SystemExit("error: give a kernel file (or module)")
    try:
        report = fits(ns.file, ns.kernel, gpus=ns.gpu, **compile_request(ns).changes(), **run_options(ns))
    except KeyError as e:
        print(f"error: {e.args[0]}", file=sys.stderr)
        return 2
    if ns.json:
        print(json.dumps(dataclasses.asdict(report), indent=1, default=str))
    else:
        print("\n".join(format_matrix(report)))
    return 0 if all(c.launchable for c in report.cells) else 1
