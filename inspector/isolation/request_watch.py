"""Watching one request's processes from the server's side: who they are (its PID namespace, or
its process group without the jail), how much memory they hold, and killing them.

Read from /proc, so the server never needs the zygote to answer: a request that hangs the
worker manager can still be measured and stopped.
"""

from __future__ import annotations

import os
import signal
from typing import Any


def members(info: dict[str, Any]) -> list[int]:
    """Host pids of a request's processes: its PID namespace (jail), else its process group."""
    ns, pgid = info.get("ns"), info.get("pgid")
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            if ns is not None:
                if os.stat(f"/proc/{entry}/ns/pid").st_ino == ns:
                    out.append(int(entry))
            else:
                with open(f"/proc/{entry}/stat") as f:
                    stat = f.read()
                if int(stat[stat.rindex(")") + 2:].split()[2]) == pgid:  # field 5, pgrp
                    out.append(int(entry))
        except (OSError, ValueError, IndexError):
            continue
    return out


def rss(pid: int) -> int:
    """Resident bytes (shared pages counted in full)."""
    try:
        with open(f"/proc/{pid}/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def pss(pid: int) -> int:
    """Proportional resident bytes: each shared page split among the processes that map it."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def ns_pid(pid: int) -> int | None:
    """A process's pid inside its innermost PID namespace."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("NSpid:"):
                    return int(line.split()[-1])
    except (OSError, ValueError, IndexError):
        pass
    return None



def kill(pid: int) -> None:
    """SIGKILL a process (a negative pid: a process group)."""
    try:
        if pid < 0:
            os.killpg(-pid, signal.SIGKILL)
        else:
            os.kill(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
