"""Measured time, where there is a GPU: the file's example run natively as written and as each
candidate edits it, its launches of the kernel replayed and timed (`speed_run`), in the benchmark
jail. Only a native inspection (`target="native"`) of a file with an `example()` is timed; a
candidate that is a compile override (an autotuned kernel's helper-built configs) is not, since the
example runs the file as written.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass

from ..record import Inspection
from .check import PACKAGE_ROOT, replays

SECONDS_PER_RUN = 60.0  # a native run and its timing: compile, example, do_bench's 125 ms


@dataclass
class Timed:
    """One text's time: the median milliseconds of the kernel's launches replayed, or why not."""

    ms: float | None
    why: str = ""


def timeable(rec: Inspection) -> str:
    """Empty when `rec` can be timed, else why not."""
    if rec.mode != "native":
        return "no GPU: the inspection is GPU-free (open it with --target native on a GPU to time candidates)"
    if not replays(rec):
        return "only a file's example() (or a run's reproducer) is run to time it"
    return ""


def time_candidates(rec: Inspection, sources: list[str], seconds: float = SECONDS_PER_RUN,
                    jailed: bool = True) -> tuple[Timed, list[Timed]]:
    """(the original's time, one per candidate text); see the module docstring."""
    why = timeable(rec)
    if why:
        return Timed(None, why), [Timed(None, why) for _ in sources]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [PACKAGE_ROOT] + ([os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else [])))
    env.pop("TRITON_INTERPRET", None)
    with tempfile.TemporaryDirectory(prefix="inspector-fixtime-") as tmp:
        req, res = os.path.join(tmp, "request.json"), os.path.join(tmp, "result.json")
        with open(req, "w", encoding="utf-8") as f:
            json.dump({"file": rec.file, "kernel": rec.kernel, "original": rec.source, "candidates": sources}, f)
        cmd = [sys.executable, "-m", "inspector.fixes.speed_run", req, res]
        if jailed:
            from ..bench.client import jailed_command

            cmd = jailed_command(cmd, [rec.file], env, writable=[tmp])
        budget = seconds * (len(sources) + 1)
        try:
            proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=budget,
                                  cwd=os.path.dirname(rec.file) or None)
        except subprocess.TimeoutExpired:
            why = f"the timing runs took longer than {budget:.0f} s"
            return Timed(None, why), [Timed(None, why) for _ in sources]
        try:
            with open(res, encoding="utf-8") as f:
                got = json.load(f)
        except (OSError, ValueError):
            why = f"the timing process stopped (exit status {proc.returncode}): " \
                  f"{(proc.stdout + proc.stderr).strip()[-600:]}"
            return Timed(None, why), [Timed(None, why) for _ in sources]
    return Timed(got["original"]["ms"], got["original"]["why"]), [Timed(r["ms"], r["why"]) for r in got["candidates"]]
