"""`python -m inspector profile FILE ...`: what a GPU measured for the launch the inspector records.

    profile kernels/add.py                      on a GPU: Nsight Compute, per line and for the kernel
    profile kernels/add.py --json --out p.json  the profile as JSON (and saved)
    profile show p.json                         a saved profile, on any machine (no GPU needed)

Takes the same options as `compile` (the target is the machine's own GPU). Compiles the kernel
natively, runs its reproducer (the recorded launch) once under Nsight Compute in the benchmark jail
(where ncu is missing or the counters are forbidden, Proton times the kernel instead: its duration
only, and the output says why),
and prints the kernel's figures, the lines where the warps stalled (share of the stall samples,
the top reasons, instructions executed, L2 sectors against the ideal), and the static model checked
against the measurement: registers, shared memory, theoretical occupancy, predicted sectors per
line. A disagreement is printed as a fidelity warning. Exit status: 0; 1 when the kernel did not
compile or could not be profiled (the message says why); 2 on usage errors.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any

from ..profile.measured import Profile
from ..profile.rate import describe_rate
from .options import add_compile_options, command_parser, inspect_from
from .output import report_error


def register(subparsers: Any) -> None:
    """Add the `profile` subcommand (`profile FILE`, `profile show P.json`)."""
    p = command_parser(subparsers, "profile", "measure the recorded launch on this GPU with Nsight Compute, per line",
                       __doc__)
    add_compile_options(p)
    p.add_argument("--json", action="store_true", help="print the profile as one JSON object")
    p.add_argument("--out", metavar="P.json", help="also save the profile there")
    p.add_argument("--ncu", metavar="PATH", help="the Nsight Compute binary (default: $NCU, PATH, /usr/local/cuda)")
    p.add_argument("--raw", metavar="DIR", help="also keep Nsight Compute's two pages (CSV) in DIR")
    p.add_argument("saved", nargs="?", metavar="P.json", help="with `show`: the saved profile to print")
    p.set_defaults(func=run, target="native")


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.3g}" if abs(value) < 1000 else f"{value:,.0f}"
    return str(value)


def format_profile(prof: Profile, top: int = 8) -> list[str]:
    """The profile in words: figures, the lines that stalled most, the checks."""
    out = [f"{prof.kernel} on {prof.device or prof.target}, measured by {prof.tool} (Triton {prof.triton_version})"]
    figures = prof.figures
    named = [("duration", "duration"), ("memory_throughput", "memory throughput"),
             ("dram_throughput", "DRAM throughput"), ("compute_throughput", "SM throughput"),
             ("achieved_occupancy", "achieved occupancy"), ("theoretical_occupancy", "theoretical occupancy"),
             ("registers", "registers per thread"), ("waves", "waves per SM")]
    for key, label in named:
        if key in figures:
            out.append(f"  {label:24s} {_fmt(figures[key]['value'])} {figures[key]['unit']}".rstrip())
    if figures.get("grid"):
        out.append(f"  {'grid x block':24s} {figures['grid']} x {figures.get('block', '')}")
    if figures.get("rate"):
        out += ["", "Roofline point (counted by Nsight Compute)"] + [f"  {s}" for s in describe_rate(figures["rate"])]
    hot = sorted((l for l in prof.lines if l.samples), key=lambda l: -l.samples)[:top]
    if hot:
        out += ["", "Where the warps waited (share of stall samples; top reasons; instructions; L2 sectors / ideal)"]
        for l in hot:
            reasons = ", ".join(f"{r} {n * 100 / max(l.samples, 1):.0f}%" for r, n in l.stalls[:3])
            sectors = "" if l.sectors is None else f"  sectors {l.sectors:,} / {l.ideal_sectors or 0:,}"
            out.append(f"  line {l.line:4d}  {l.share * 100:5.1f}%  {reasons}  instr {l.instructions:,}{sectors}")
            out.append(f"             {l.source}")
    if prof.kernel_stalls:
        stalled = sum(n for _, n in prof.kernel_stalls) or 1
        samples = prof.figures.get("pc_samples", {}).get("value", stalled)
        out += ["", f"Where the warps waited, over the whole kernel (PC sampling: {samples:,} samples, "
                    f"{stalled * 100 / max(samples, 1):.0f}% of them stalled)",
                "  " + ", ".join(f"{r} {n * 100 / stalled:.0f}%" for r, n in prof.kernel_stalls[:6])]
    if prof.checks:
        out += ["", "The inspector's model against the measurement"]
        for c in prof.checks:
            mark = {True: "ok  ", False: "WARN", None: "n/c " if "not comparable" in c.note else "  ? "}[c.agrees]
            out.append(f"  {mark} {c.what}: predicted {_fmt(c.predicted)}, measured {_fmt(c.measured)}"
                       + (f"  ({c.note})" if c.note and c.agrees is not True else ""))
    if prof.launch or prof.data:
        out += ["", f"Launch profiled: {prof.launch or 'the reproducer'}"]
        out += [f"  contents of {name}: {origin}" for name, origin in prof.data.items()]
    if prof.note:
        out += ["", f"  {prof.note}"]
    if prof.unmapped:
        out += ["", f"  {len(prof.unmapped)} profiled line(s) not found in the file: " + "; ".join(prof.unmapped[:3])]
    if prof.seconds:
        steps = [f"{k} {v:.1f} s" for k, v in prof.seconds.items() if k != "in all"]
        total = prof.seconds.get("in all")
        out += ["", f"  took {total:.1f} s: " + ", ".join(steps) if total else "  took " + ", ".join(steps)]
    return out


def _show(ns: argparse.Namespace) -> int:
    if not ns.saved:
        print("error: profile show needs the saved profile: python -m inspector profile show P.json", file=sys.stderr)
        return 2
    try:
        with open(ns.saved, encoding="utf-8") as f:
            prof = Profile.from_dict(json.load(f))
    except (OSError, ValueError, TypeError, KeyError) as e:
        print(f"error: {ns.saved} is not a profile the inspector saved ({type(e).__name__}: {e})", file=sys.stderr)
        return 1
    if ns.json:
        print(json.dumps(prof.to_dict(), indent=1))
    else:
        print("\n".join(format_profile(prof)))
    return 0


def _start_early(ns: argparse.Namespace) -> Any:
    """Nsight Compute started on a waiting runner while the kernel compiles (`run_ncu.EarlyRun`:
    Python, torch and CUDA start meanwhile), for a file whose @jit functions can be read and a
    machine with ncu and an NVIDIA GPU; None otherwise (the profile then runs after the compile)."""
    from ..guard.discovery import kernel_defs
    from ..profile.run_ncu import EarlyRun, ProfileError, find_ncu

    if getattr(ns, "run", None) or not ns.file or ns.target != "native" or find_ncu(ns.ncu) is None:
        return None
    try:
        with open(ns.file, encoding="utf-8") as f:
            names = [ns.kernel] if ns.kernel else sorted(kernel_defs(f.read()))
    except OSError:
        return None
    if not names or not os.path.exists("/dev/nvidiactl"):  # NVIDIA's driver: no GPU, nothing to start
        return None
    try:
        return EarlyRun(names, ns.ncu)
    except (ProfileError, OSError):
        return None


def _through_program(ns: argparse.Namespace, command: str | list[str]) -> tuple[Any, Any]:
    """`profile --run COMMAND` on a GPU: the program runs natively under a capture (its launch's
    index tensors kept, inspector.launch_data), the record is its launch, and the profile is of
    the program's own launch, run again under Nsight Compute."""
    from ..capture.by_running import open_run, program_of
    from ..profile.measure import OwnLaunch
    from .options import compile_request, run_options

    changes = {k: v for k, v in compile_request(ns).changes().items() if k != "root"}
    opened = open_run(command, kernel=ns.kernel, target="native", **changes, **run_options(ns))
    if opened.rec.error or opened.entry is None:
        return opened.rec, None
    shown = command if isinstance(command, str) else " ".join(command)
    return opened.rec, OwnLaunch(program_of(command), shown, opened.entry.launch_skip, opened.kernel_file_text(),
                                 os.getcwd())


def _file_own_launch(ns: argparse.Namespace, rec: Any) -> Any:
    """For a kernel whose addresses, masks or loop bounds come from memory, on a GPU: the launch the
    file's own code makes (its example(), or the file run as a program), profiled there, with
    the model given the same data (read by a native capture of that run). None where the record
    is not such a kernel, the file does not launch it itself, or the capture cannot be made."""
    from ..analysis.memory import attach_launch_memory, line_data_inputs

    if ns.target != "native" or rec.error or not rec.file or rec.call_origin not in ("example", "file") \
            or rec.generated is not None \
            or "\ndef _filled(" in (rec.source or "") or not line_data_inputs(rec):
        return None  # (a reproducer the inspector wrote carries its launch's data itself)
    code = "import runpy, sys; runpy.run_path(sys.argv[1])['example']('cuda')"
    command = ["python", "-c", code, rec.file] if rec.call_origin == "example" else ["python", rec.file]
    ran, own = _through_program(ns, command)
    if own is None:
        print(f"note: the file's own launch could not be captured ({ran.error.message if ran.error else '?'}); "
              "the reproducer is profiled, on made-up data", file=sys.stderr)
        return None
    attach_launch_memory(rec, _entry_arrays(ran))
    own.kernel_file_text = rec.source or own.kernel_file_text
    own.command = f"{rec.call_origin}() of {os.path.basename(rec.file)}" if rec.call_origin == "example" \
        else f"python {os.path.basename(rec.file)}"
    return own


def _entry_arrays(rec: Any) -> dict:
    """The arrays carried beside a reopened capture's file (inspector.launch_data)."""
    from .. import launch_data

    return launch_data.read(launch_data.sidecar(rec.file)) if rec.file else {}


def run(ns: argparse.Namespace) -> int:
    if ns.file == "show":  # `profile show P.json`
        return _show(ns)
    from ..profile.measure import measure
    from ..profile.run_ncu import ProfileError

    started = time.perf_counter()
    early = _start_early(ns)
    own = None
    try:
        if getattr(ns, "run", None) and ns.target == "native":
            rec, own = _through_program(ns, ns.run)
        else:
            rec = inspect_from(ns)
            own = _file_own_launch(ns, rec)
    except BaseException:
        if early is not None:
            early.cancel()
        raise
    compiled = time.perf_counter() - started
    if rec.error or not rec.reproducer:
        if early is not None:
            early.cancel()
        report_error(rec)
        return 1
    if own is not None and early is not None:
        early.cancel()
        early = None
    try:
        got = measure(rec, ns.ncu, early, own)
    except ProfileError as e:
        print(f"error: {rec.kernel}: {e}", file=sys.stderr)
        return 1
    if got.fallback_reason:
        print(f"note: Nsight Compute could not measure it ({got.fallback_reason}); Proton timed the kernel "
              "instead (its duration only)", file=sys.stderr)
    pages, prof = got.pages, got.profile
    steps = {"native compile, from the cache": compiled} if rec.cached else {
        "native compile": rec.compile_seconds, "its worker's start and hand-over": max(compiled - rec.compile_seconds, 0)}
    prof.seconds = {**steps, **prof.seconds, "in all": time.perf_counter() - started}
    if ns.raw and pages is not None:
        os.makedirs(ns.raw, exist_ok=True)
        for name, text in (("source.csv", pages.source), ("details.csv", pages.details),
                           ("reproducer.py", pages.profiled_text), ("record.json", rec.to_json())):
            with open(os.path.join(ns.raw, name), "w") as f:
                f.write(text)
    if ns.out:
        with open(ns.out, "w") as f:
            json.dump(prof.to_dict(), f, indent=1)
    if ns.json:
        print(json.dumps(prof.to_dict(), indent=1))
    else:
        print("\n".join(format_profile(prof)))
    return 0
