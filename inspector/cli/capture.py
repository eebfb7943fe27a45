"""`python -m inspector capture`: record a program's Triton kernels, then list, show, compile
(any target, GPU-free) and write out what was recorded.

    python -m inspector capture [-o run.inspector] [--time] -- python train.py ...
    python -m inspector capture list RUN [--json]
    python -m inspector capture show RUN KERNEL
    python -m inspector capture compile RUN KERNEL [--target sm_90] [--stage ptx] [--json]
    python -m inspector capture edit RUN KERNEL -o kernel.py
    python -m inspector capture profile RUN [--top 3] [--out DIR] [--json]   (on a GPU)

RUN is a capture file or a tritonparse trace (ndjson, plain or gzipped). KERNEL is a row number,
a kernel name, or `name#2` for its second specialisation.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

from ..hardware.targets import DEFAULT_TARGET
from .options import command_parser

ACTIONS = ("list", "show", "compile", "edit", "profile")
PACKAGE_ROOT = str(Path(__file__).resolve().parent.parent.parent)  # the folder holding `inspector`


def register(sub: argparse._SubParsersAction) -> None:
    p = command_parser(sub, "capture", "record every Triton kernel a program compiles and launches; list, show, "
                       "compile and write out a capture (or a tritonparse trace)", __doc__)
    p.add_argument(
        "-o", "--output", default="run.inspector", help="the capture file to write (default run.inspector)"
    )
    p.add_argument("--time", action="store_true", help="time every launch with CUDA events (on a GPU)")
    p.add_argument(
        "rest",
        nargs=argparse.REMAINDER,
        help="-- python prog.py ... (the program to run), or list/show/compile/edit/profile RUN ...",
    )
    p.set_defaults(func=cmd_capture)


def cmd_capture(ns: argparse.Namespace) -> int:
    rest = list(ns.rest)
    if rest and rest[0] in ACTIONS:
        return _action(rest)
    if rest and rest[0] == "--":
        rest = rest[1:]
    if not rest:
        print(
            "error: give the program to run after --, e.g. python -m inspector capture -o run.inspector -- "
            "python train.py; or list/show/compile/edit/profile RUN",
            file=sys.stderr,
        )
        return 2
    return run_capture(rest, ns.output, ns.time)


def _interpreter_command(program: list[str]) -> tuple[list[str], list[str]] | None:
    """(interpreter and its flags, what it runs) for `python [-u ...] prog.py|-m mod|-c code ...`,
    or a bare `prog.py ...` (run with this interpreter)."""
    first = os.path.basename(program[0])
    if first.startswith("python"):
        interp, i = [program[0]], 1
        while i < len(program) and program[i].startswith("-") and program[i] not in ("-m", "-c"):
            interp.append(program[i])
            i += 1
        rest = program[i:]
        return (interp, rest) if rest else None
    if program[0].endswith(".py"):
        return [sys.executable], program
    return None


def run_capture(program: list[str], output: str, time: bool = False) -> int:
    """Run `program` with every Triton compile and launch recorded to `output`."""
    split = _interpreter_command(program)
    if split is None:
        print(
            "error: capture runs a Python program: -- python prog.py ... (or -m module); "
            f"got {' '.join(program)!r}",
            file=sys.stderr,
        )
        return 2
    interp, runs = split
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [PACKAGE_ROOT] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])
    )
    env.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")  # Inductor compiles where the listener sees it
    out = os.path.abspath(output)
    cmd = [*interp, "-m", "inspector.capture.run_program", out, *(["--time"] if time else []), "--", *runs]
    try:
        status = subprocess.call(cmd, env=env)
    except OSError as e:
        print(f"error: cannot run {interp[0]}: {e.strerror or e}", file=sys.stderr)
        return 2
    from ..capture import CaptureFileError, load
    from ..capture.table import format_table

    try:
        cap = load(out)
    except CaptureFileError as e:
        print(f"error: the program ended without a capture ({e})", file=sys.stderr)
        return status or 1
    print(format_table(cap), file=sys.stderr)
    launches = sum(k.launches for k in cap.kernels)
    print(
        f"wrote {output}: {len(cap.kernels)} kernel specialisations, {launches} launches ({cap.mode}, "
        f"{cap.device}); the program exited with {status}",
        file=sys.stderr,
    )
    return status


def _action(rest: list[str]) -> int:
    from ..record import STAGE_TITLES

    p = argparse.ArgumentParser(prog=f"python -m inspector capture {rest[0]}")
    p.add_argument("run", help="a capture file or a tritonparse trace (.ndjson, .ndjson.gz)")
    if rest[0] not in ("list", "profile"):
        p.add_argument("kernel", help="a row number, a kernel name, or name#2 for its second specialisation")
    if rest[0] == "profile":
        p.add_argument("--top", type=int, default=3, help="profile this many of the heaviest kernels (default 3)")
        p.add_argument("--out", metavar="DIR", help="save each profile there as KERNEL.json")
        p.add_argument("--ncu", metavar="PATH", help="the Nsight Compute binary")
        p.add_argument("--json", action="store_true", help="the time table and the profiles as JSON")
    elif rest[0] == "list":
        p.add_argument("--json", action="store_true", help="the rows as JSON")
    elif rest[0] == "show":
        p.add_argument("--json", action="store_true", help="the whole entry as JSON")
        p.add_argument("--reproducer", action="store_true", help="print only its standalone file")
    elif rest[0] == "compile":
        p.add_argument(
            "--target", default=DEFAULT_TARGET, help=f"sm_80, sm_90, gfx942, ... or native (default {DEFAULT_TARGET})"
        )
        p.add_argument("--stage", choices=[s for s in STAGE_TITLES if s != "source"])
        p.add_argument("--json", action="store_true", help="print the inspection record as JSON")
        p.add_argument("--no-cache", action="store_true")
        p.add_argument("--timeout", type=float, default=None)
    elif rest[0] == "edit":
        p.add_argument("-o", "--output", required=True, help="where to write the standalone kernel file")
    ns = p.parse_args(rest[1:])

    from ..capture import CaptureFileError, load
    from ..capture.table import find, format_table, rows, specialisation_text

    try:
        cap = load(ns.run)
    except CaptureFileError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if rest[0] == "profile":
        from .capture_profile import profile_heaviest

        return profile_heaviest(cap, ns.top, ns.out, ns.ncu, ns.json)
    if rest[0] == "list":
        if ns.json:
            print(json.dumps(rows(cap), indent=1))
        else:
            print(
                f"{ns.run}: {cap.mode} run on {cap.device or 'unknown'}, Triton {cap.triton_version or '?'}"
                + (f", `{' '.join(cap.program)}`" if cap.program else "")
            )
            print(format_table(cap))
        return 0
    try:
        entry = find(cap, ns.kernel)
    except KeyError as e:
        print(f"error: {e.args[0]}", file=sys.stderr)
        return 2
    if rest[0] == "show":
        if ns.reproducer:
            sys.stdout.write(entry.reproducer)
            return 0 if entry.reproducer else 1
        if ns.json:
            from dataclasses import asdict

            print(json.dumps(asdict(entry), indent=1))
            return 0
        _show(entry, specialisation_text(entry))
        return 0
    if rest[0] == "edit":
        from ..capture.reopen import NoReproducer, write_standalone

        try:
            path = write_standalone(cap, entry, path=ns.output)
        except NoReproducer as e:
            print(f"error: {e}", file=sys.stderr)
            return 1
        print(f"wrote {path}: {entry.name} with an example() that makes the captured launch", file=sys.stderr)
        return 0
    return _compile(cap, entry, ns)


def _show(entry, spec: str) -> None:
    print(
        f"{entry.name} ({entry.kind}), {entry.launches} launches"
        + (f" (+{entry.benchmark_launches} autotuner benchmark runs)" if entry.benchmark_launches else "")
        + (f", {entry.time_ms:.3f} ms on the GPU" if entry.time_ms is not None else "")
    )
    print(f"  defined at   {entry.file}:{entry.line}" if entry.file else f"  module       {entry.module}")
    if entry.launch_site:
        print(f"  launched at  {entry.launch_site}")
    print(
        f"  grid         {entry.grid}" + (f" (first of {entry.grids} distinct)" if entry.grids > 1 else "")
        if entry.grid
        else "  grid         unknown"
    )
    print(f"  options      {', '.join(f'{k}={v}' for k, v in entry.options.items())}")
    print(f"  specialised  {spec}")
    for a in entry.arguments:
        desc = (
            f"{a['dtype']} {a['shape']} stride {a['stride']}"
            + (f" +{a['offset']}" if a.get("offset") else "")
            if a.get("kind") == "tensor"
            else repr(a.get("value"))
        )
        print(
            f"    {a['name']:<16} {entry.signature.get(a['name'], ''):<10} {desc}"
            + (f"  [{', '.join(entry.attributes[a['name']])}]" if entry.attributes.get(a["name"]) else "")
        )
    if entry.autotune:
        print(
            f"  autotune     chose config {entry.autotune.get('chosen')} of {len(entry.autotune['configs'])}:"
        )
        for i, c in enumerate(entry.autotune["configs"]):
            print(
                f"    {'*' if i == entry.autotune.get('chosen') else ' '} {i}: "
                + ", ".join(f"{k}={v}" for k, v in c.items())
            )
    if entry.compiled:
        print("  compiled     " + ", ".join(f"{k}={v}" for k, v in entry.compiled.items() if v is not None))
    for note in entry.notes:
        print(f"  note: {note}")


def _compile(cap, entry, ns: argparse.Namespace) -> int:
    from ..capture.reopen import NoReproducer, reopen
    from .output import report_error, summary_line, write_stage

    try:
        rec = reopen(cap, entry, target=ns.target, use_cache=not ns.no_cache, timeout=ns.timeout)
    except NoReproducer as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    status = 1 if rec.launch_problem() else 0
    if ns.json:
        print(rec.to_json(indent=1))
        return status
    if rec.error and not rec.stages:
        report_error(rec)
        return 1
    if not write_stage(rec, ns.stage):
        return 2
    print(summary_line(rec), file=sys.stderr)
    print(f"from {rec.file}", file=sys.stderr)
    if status:
        report_error(rec)
    return status
