"""`python -m inspector guard PATH... --targets sm_90,sm_100,gfx942`: every kernel against a baseline.

    guard kernels/ --targets sm_90,gfx942 --baseline guard.json --update-baseline   accept what compiles now
    guard kernels/ --targets sm_90,gfx942 --baseline guard.json                     fail on a regression
    guard src/ --baseline guard.json --junit guard.xml --markdown guard.md          CI reports
    guard liger_kernel.ops --targets sm_90 --ray auto                               on the Ray cluster

Each PATH is a kernel file, a folder (its .py files that use Triton) or a module or package name.
Every file runs as the app runs it (its launches recorded, in the sandbox), every entry kernel is
compiled for every target, and its registers, spills, local and shared memory, occupancy and
limiter, load/store widths, layout conversions and launchability are compared with the baseline
(`inspector.guard.baseline` documents the file and its thresholds). Exit status: 0 when nothing
regressed, 1 with one line per regressed kernel and target (file:line: kernel on target:
before -> after), 2 on usage errors or an unreadable baseline. --update-baseline writes what
compiled now (keeping thresholds) and exits 0.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from inspector.cli.options import command_parser
from inspector.compile.api import triton_version
from inspector.files import atomic_write_text
from inspector.guard import baseline as baseline_file
from inspector.guard import default_jobs, make_engine, run_guard, update_baseline
from inspector.guard.runner import target_keys
from inspector.guard.discovery import DiscoveryError
from inspector.guard.progress import ProgressBar
from inspector.guard.reports import json_text, junit_xml, markdown, regression_lines, summary_line
from inspector.hardware.targets import DEFAULT_TARGET, UnknownTargetError, parse_target


def register(subparsers: Any) -> None:
    """Add the `guard` subcommand."""
    p = command_parser(subparsers, "guard", "compile every kernel of a repository for every target and compare "
                       "with a baseline (CI)", __doc__)
    p.add_argument("paths", nargs="+", metavar="PATH", help="kernel files, folders, or module/package names")
    p.add_argument("--targets", default=DEFAULT_TARGET,
                   help=f"comma-separated targets (default {DEFAULT_TARGET}): sm_90,sm_100,gfx942")
    p.add_argument("--tritons", metavar="VERSIONS",
                   help="comma-separated Triton releases to compile with (the installed one and side environments "
                        "added with `python -m inspector versions add`); default: the installed one. Another "
                        "release's results are kept under TARGET@VERSION")
    p.add_argument("--baseline", metavar="FILE", help="the baseline file (read, and written by --update-baseline)")
    p.add_argument("--update-baseline", action="store_true",
                   help="accept what compiles now: write it to the baseline file and exit 0")
    p.add_argument("--junit", metavar="FILE", help="write a JUnit XML report (a test case per kernel and target)")
    p.add_argument("--markdown", metavar="FILE", help="write a Markdown summary (for a pull-request comment)")
    p.add_argument("--link", metavar="URL",
                   help="in the Markdown, link file:line as URL with {path} and {line} filled in "
                        "(https://github.com/OWNER/REPO/blob/SHA/{path}#L{line})")
    p.add_argument("--json", action="store_true", help="print the whole report as JSON on stdout")
    p.add_argument("--jobs", "-j", type=int, default=None,
                   help=f"compiles at a time on this machine (default: its cores, {default_jobs()} here)")
    p.add_argument("--ray", metavar="auto|ADDRESS|local",
                   help="run the compiles as Ray tasks: 'auto' (the cluster this machine belongs to), an address, "
                        "or 'local' (start a Ray of --jobs CPUs here)")
    p.add_argument("--timeout", type=float, default=None, help="seconds per compile (default 60)")
    p.add_argument("--no-cache", action="store_true", help="compile everything again")
    p.add_argument("--no-progress", action="store_true", help="no progress bar even on a terminal")
    p.set_defaults(func=run)


def _targets(text: str) -> list[str]:
    names = [t.strip() for t in text.split(",") if t.strip()]
    if not names:
        raise SystemExit("error: --targets names no target")
    out = []
    for name in names:
        if name == "native":
            raise SystemExit("error: the guard compiles GPU-free for named targets; give sm_90, gfx942, ... "
                             "rather than native")
        try:
            out.append(parse_target(name).name)
        except UnknownTargetError as e:
            raise SystemExit(f"error: --targets: {e}") from e
    return list(dict.fromkeys(out))


def run(ns: argparse.Namespace) -> int:
    targets = target_keys(_targets(ns.targets), [v.strip() for v in ns.tritons.split(",") if v.strip()]
                          if ns.tritons else None)
    if ns.update_baseline and not ns.baseline:
        print("error: --update-baseline needs --baseline FILE (where to write it)", file=sys.stderr)
        return 2
    try:
        base = baseline_file.load(ns.baseline)
    except baseline_file.BaselineError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if ns.ray:
        try:
            import ray  # noqa: F401
        except ImportError:
            print("error: --ray needs Ray: pip install 'ray>=2.40'", file=sys.stderr)
            return 2
    bar = ProgressBar(sys.stderr)
    bar.enabled = bar.enabled and not ns.no_progress
    engine = make_engine(ns.ray, ns.jobs or default_jobs())
    try:
        result = run_guard(ns.paths, targets, base, engine, timeout=ns.timeout, use_cache=not ns.no_cache,
                           progress=bar)
    except DiscoveryError as e:
        bar.close()
        print(f"error: {e}", file=sys.stderr)
        return 2
    except ConnectionError as e:  # ray.init found no cluster at the address
        bar.close()
        print(f"error: --ray {ns.ray}: cannot join the Ray cluster ({e}); start one (`ray start --head`), give its "
              "address, or use --ray local", file=sys.stderr)
        return 2
    finally:
        bar.close()
        engine.close()

    if ns.junit:
        atomic_write_text(ns.junit, junit_xml(result))
    if ns.markdown:
        atomic_write_text(ns.markdown, markdown(result, ns.link))
    out = sys.stderr if ns.json else sys.stdout
    for note in result.notes:
        print(f"note: {note}", file=out)
    if ns.update_baseline:
        update_baseline(base, result)
        base.save(triton_version())
        for line in regression_lines(result):
            print(f"accepted: {line}", file=out)
        print(summary_line(result), file=out)
        print(f"baseline written: {os.path.relpath(ns.baseline)} ({len(base.kernels)} kernels)", file=out)
        status = 0
    else:
        for line in regression_lines(result):
            print(line, file=out)
        print(summary_line(result), file=out)
        status = result.exit_status
    if ns.json:
        print(json_text(result))
    return status
