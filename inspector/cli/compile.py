"""`compile`: a kernel's stages, summary or whole record; `targets`: what this Triton builds."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ..record import STAGE_TITLES
from .options import add_compile_options, inspect_from
from .output import report_error, summary_line, write_out_dir, write_stage


def cmd_compile(ns: argparse.Namespace) -> int:
    # SASS is made only when this call prints or writes it (nvdisasm costs ~0.2 s on any kernel).
    needs_sass = ns.json or ns.out or ns.stage == "sass"
    rec = inspect_from(ns, passes=ns.passes, defer=() if needs_sass else ("sass",))
    if ns.out and rec.stages:
        write_out_dir(rec, ns.out)
    status = 1 if rec.launch_problem() else 0
    if ns.reproduce:
        if not rec.reproducer:
            report_error(rec)
            return 1
        with open(ns.reproduce, "w") as f:
            f.write(rec.reproducer)
        print(f"wrote {ns.reproduce}: {rec.kernel} with an example() that reproduces this compile", file=sys.stderr)
    if ns.json:
        print(rec.to_json(indent=None if ns.compact else 1))
        return status
    if ns.list_configs:
        for i, cfg in enumerate(rec.autotune_configs):
            mark = "*" if i == rec.autotune_index else " "
            print(f"{mark} {i}: " + ", ".join(f"{k}={v}" for k, v in cfg.items()))
        if not rec.autotune_configs:
            print(f"{rec.kernel or ns.file} is not autotuned", file=sys.stderr)
        return status
    if rec.error and not rec.stages:
        report_error(rec)
        return 1
    if ns.passes and rec.passes is not None:
        for s in rec.passes:
            print(f"{s.index:4d}  {s.dialect:4s}  {'changed' if s.changed else '       '}  {s.name}  [{s.scope}]")
    else:
        if not write_stage(rec, ns.stage, raw=ns.raw):
            return 2
    print(summary_line(rec), file=sys.stderr)
    for line in rec.log.splitlines():  # what the worker found wrong with the compiled code itself
        if line.startswith("warning: "):
            print(line, file=sys.stderr)
    if rec.stopped_note():
        print(f"note: {rec.stopped_note()}", file=sys.stderr)
    if rec.refused_by and not rec.error:
        print(f"note: {rec.refusal_note()}", file=sys.stderr)
    if status:
        report_error(rec)
    return status


def cmd_targets(ns: argparse.Namespace) -> int:
    from ..compile.api import list_targets

    info = list_targets()
    if ns.json:
        print(json.dumps(info, indent=1))
        return 0
    print(f"Triton {info['triton_version']} builds: {', '.join(info['buildable'])}")
    if info["native"]:
        print(f"native: {info['native']} ({info['native_device']})")
    else:
        print("native: none (no GPU found); every target above compiles GPU-free")
    for name, why in info["failed"].items():
        print(f"  not buildable: {name}: {why}")
    return 0


def register(sub: Any) -> None:
    p = sub.add_parser("compile", help="compile a kernel and print a stage, or the whole record as JSON")
    add_compile_options(p)
    p.add_argument("--stage", choices=[s for s in STAGE_TITLES if s != "source"],
                   help="which stage to print (default: ptx on NVIDIA, amdgcn on AMD)")
    p.add_argument("--passes", action="store_true", help="capture the IR after every compiler pass")
    p.add_argument("--raw", action="store_true", help="print the stage whole: directives, comments and debug "
                                                     "sections too (left out by default, as the page hides them)")
    p.add_argument("--json", action="store_true", help="print the inspection record as one JSON object")
    p.add_argument("--compact", action="store_true", help="with --json: no indentation")
    p.add_argument("--out", metavar="DIR", help="also write every stage (and passes) to DIR")
    p.add_argument("--list-configs", action="store_true", help="list an autotuned kernel's configs")
    p.add_argument("--reproduce", metavar="OUT.py",
                   help="also write a standalone file (the kernel and an example() with the recorded launch) "
                        "that reproduces this compile")
    p.set_defaults(func=cmd_compile)

    p = sub.add_parser("targets", help="list the targets this Triton builds and the native GPU")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_targets)
