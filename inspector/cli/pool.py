"""`python -m inspector pool status | stop`: the warm worker pool that CLI calls and the app share.

    pool status [--json]    the pool daemons of this user (under $TRITON_INSPECTOR_HOME): pid, the
                            interpreter their workers run, compiles running and served, idle time
    pool stop               stop them all now (compiles in flight end as cancelled); the next
                            compile starts a fresh one

The first compile starts a daemon (`inspector.isolation.pool`) that keeps torch and Triton imported,
so later calls pay for their compile only. It stops by itself after $TRITON_INSPECTOR_POOL_IDLE
seconds (default 300) without a request; TRITON_INSPECTOR_POOL=0 compiles in-process instead.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

from inspector.cli.options import command_parser


def register(subparsers: Any) -> None:
    """Add the `pool` subcommand."""
    p = command_parser(subparsers, "pool", "status or stop of the warm worker pool shared by CLI calls and the app",
                       __doc__)
    sub = p.add_subparsers(dest="pool_command", required=True)
    q = sub.add_parser("status", help="the running pool daemons")
    q.add_argument("--json", action="store_true", help="one JSON list")
    sub.add_parser("stop", help="stop every pool daemon of this user now")
    p.set_defaults(func=run)


def run(ns: argparse.Namespace) -> int:
    """Handler for `pool`."""
    from inspector import places
    from inspector.isolation import pool
    from inspector.isolation.selection import pool_enabled

    if ns.pool_command == "stop":
        infos = pool.pools()
        for info in infos:
            ok = pool.stop_pool(info["key"])
            print(f"{'stopped' if ok else 'could not stop'} pool {info['key']} (pid {info.get('pid')})")
        if not infos:
            print("no pool running")
        return 0
    infos = pool.pools()
    if ns.json:
        print(json.dumps(infos, indent=1))
        return 0
    state = "on" if pool_enabled() else "off (TRITON_INSPECTOR_POOL=0: compiles run in-process)"
    print(f"warm pool: {state}; folder {places.inspector_home() / 'pool'}; idle stop after "
          f"{pool.idle_seconds():g} s")
    if not infos:
        print("no pool running")
    for info in infos:
        up = time.time() - float(info.get("started") or time.time())
        fits = "this environment's" if info.get("current") else "another environment's (other code, interpreter or variables)"
        print(f"- {info['key']}: pid {info.get('pid')}, up {up:.0f} s, {fits}; workers run {info.get('python')}; "
              f"{info.get('running', '?')} running, {info.get('served', '?')} served, idle {info.get('idle_for', '?')} s "
              f"of {info.get('idle_limit', '?')}; sandbox {(info.get('isolation') or {}).get('mode', info.get('mode'))}")
    return 0
