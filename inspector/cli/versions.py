"""`python -m inspector versions list | add VERSION | remove VERSION`: Triton side environments.

    versions list                        the installed Triton (the default) and every side environment
    versions add 3.6.0                   install Triton 3.6.0 beside it (progress shown; --background returns at once)
    versions add 3.6.0 --wheel triton-3.6.0-cp312-....whl    from a wheel file (no package index needed)
    versions remove 3.6.0                delete it, leaving no files behind
    versions compare kernels/*.py --from 3.6.0 --to 3.9.0 [--target gfx942] [--json]
                                         one line per kernel: what changed between the two releases

A compile uses one with `compile FILE --triton 3.6.0`; `diff FILE --triton 3.6.0 --vs-triton 3.9.0`
compares two. Exit status: 0, 1 when an add failed, 2 on a bad or unsupported version.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from inspector import versions
from inspector.cli.options import command_parser
from inspector.hardware.targets import DEFAULT_TARGET


def register(subparsers: Any) -> None:
    """Add the `versions` subcommand."""
    p = command_parser(subparsers, "versions", "list, add or remove Triton releases to compile with", __doc__)
    sub = p.add_subparsers(dest="versions_command", required=True)
    q = sub.add_parser("list", help="the default Triton and every side environment")
    q.add_argument("--json", action="store_true")
    q = sub.add_parser("add", help="add a Triton release as a side environment")
    q.add_argument("version", help="a release such as 3.6.0")
    q.add_argument(
        "--wheel", metavar="PATH", help="install from this wheel file instead of the package index"
    )
    q.add_argument("--find-links", metavar="DIR", help="a folder of wheels for pip to look in too")
    q.add_argument("--background", action="store_true", help="start the install and return at once")
    q.add_argument("--json", action="store_true", help="print the final state as JSON")
    q = sub.add_parser("remove", help="delete a side environment")
    q.add_argument("version")
    q = sub.add_parser("compare", help="one line per kernel file: what changed between two releases")
    q.add_argument(
        "files", nargs="+", metavar="FILE", help="kernel files (each file's default kernel and call)"
    )
    q.add_argument("--from", dest="release_a", required=True, metavar="VERSION", help="the first release")
    q.add_argument(
        "--to", dest="release_b", metavar="VERSION", help="the second release (default: the installed one)"
    )
    q.add_argument("--target", default=DEFAULT_TARGET, help=f"sm_90, gfx942, ... (default {DEFAULT_TARGET})")
    q.add_argument("--json", action="store_true", help="one JSON object per line")
    p.set_defaults(func=run)


def run(ns: argparse.Namespace) -> int:
    """Handler for `versions`."""
    try:
        return {"list": _list, "add": _add, "remove": _remove, "compare": _compare}[ns.versions_command](ns)
    except versions.VersionError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


def _list(ns: argparse.Namespace) -> int:
    envs = versions.list_environments()
    base = versions.base_version()
    if ns.json:
        print(json.dumps({"default": base, "side": [e.to_dict() for e in envs]}, indent=1))
        return 0
    print(f"{base}  default (installed beside the inspector)")
    for env in envs:
        print(env.describe())
    if not envs:
        print("no side environments; add one with: python -m inspector versions add 3.6.0", file=sys.stderr)
    return 0


def _add(ns: argparse.Namespace) -> int:
    warning = versions.check(ns.version)
    if warning:
        print(f"warning: {warning}", file=sys.stderr)
    env = versions.add(ns.version, wheel=ns.wheel, find_links=ns.find_links)
    if env.ready:
        print(f"already there: {env.describe()}", file=sys.stderr)
    elif not ns.background:
        env = versions.wait(
            ns.version, on_progress=lambda e: print(e.describe(), file=sys.stderr, flush=True)
        )
    if ns.json:
        print(json.dumps(env.to_dict(), indent=1))
    elif env.ready:
        print(env.describe())
    elif env.state == "installing":
        print(f"{env.describe()}; `python -m inspector versions list` shows its progress")
    if env.state == "failed":
        print(f"error: {env.error}", file=sys.stderr)
        return 1
    return 0


def _remove(ns: argparse.Namespace) -> int:
    freed = versions.remove(ns.version)
    print(f"removed Triton {ns.version} ({freed / 2**20:.0f} MiB freed)")
    return 0


def _compare(ns: argparse.Namespace) -> int:
    """Each file compiled by both releases; its summary line (exit 1 when any side failed)."""
    from inspector.compile.api import inspect_kernel
    from inspector.versions.compare import compare

    release_b = ns.release_b or versions.base_version()
    status = 0
    for file in ns.files:
        a = inspect_kernel(file, target=ns.target, triton=ns.release_a)
        b = inspect_kernel(file, target=ns.target, triton=release_b)
        failed = [(r, rel) for r, rel in ((a, ns.release_a), (b, release_b)) if r.error is not None]
        if failed:
            status = 1
            why = "; ".join(f"Triton {rel}: {r.error.short()}" for r, rel in failed)
            line = {"file": file, "error": why} if ns.json else f"{file}: {why}"
        else:
            cmp = compare(a, b)
            line = (
                {
                    "file": file,
                    "kernel": a.kernel,
                    "summary": cmp.summary,
                    "resources": [vars(c) for c in cmp.diff.resources if c.changed],
                }
                if ns.json
                else cmp.summary
            )
        print(json.dumps(line) if ns.json else line, flush=True)
    return status
