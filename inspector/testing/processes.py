"""Processes by their parent links in /proc: what a test or a benchmark started, and what is left."""

from __future__ import annotations

import os


def descendants(pid: int) -> set[int]:
    """Every process below `pid` (children, their children, ...), read from /proc."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                text = f.read()
            ppid = int(text[text.rindex(")") + 2:].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    out: set[int] = set()
    todo = [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            if c not in out:
                out.add(c)
                todo.append(c)
    return out


def name(pid: int) -> str:
    """A process's name (/proc/PID/comm), "" once it is gone."""
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return ""


def without_spares(pid: int) -> set[int]:
    """`descendants(pid)` less the worker manager's spare (its processes are named SPARE_NAME
    until their request comes) and whatever a spare runs while it warms up: what requests left."""
    from inspector.isolation.request_processes import SPARE_NAME

    below = descendants(pid)
    spares = {p for p in below if name(p) == SPARE_NAME}
    for p in list(spares):
        spares |= descendants(p)
    return below - spares
