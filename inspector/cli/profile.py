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
            mark = {True: "ok  ", False: "WARN", None: "  ? "}[c.agrees]
            out.append(f"  {mark} {c.what}: predicted {_fmt(c.predicted)}, measured {_fmt(c.measured)}"
                       + (f"  ({c.note})" if c.note and c.agrees is not True else ""))
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


def run(ns: argparse.Namespace) -> int:
    if ns.file == "show":  # `profile show P.json`
        return _show(ns)
    from ..profile.measure import measure
    from ..profile.run_ncu import ProfileError

    started = time.perf_counter()
    early = _start_early(ns)
    try:
        rec = inspect_from(ns)
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
    try:
        got = measure(rec, ns.ncu, early)
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
