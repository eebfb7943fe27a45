"""Checking candidates by running them: the file's example, as written and as each candidate edits
it, under Triton's interpreter on the CPU (GPU-free), in the benchmark jail (no network, no home,
the kernel's folder read-only), one process for all of them (`check_run`). Outputs are compared
launch by launch; every `tl.multiple_of` a candidate added is checked against the values that
reached it.

Only a file with an `example()` can be checked: the launch a test, a wrapper or `__main__` made is
not re-run, and such candidates say so (`checked` None). A kernel opened through a program's run
(`--run`) is checked on the capture's reproducer, whose example() replays the launch with the run's
own index tensors: the promises are checked against the data the program really passed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from typing import Any

from ..record import Inspection

PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# The interpreter runs each program in Python: a large example (a 2048^3 matmul) takes minutes. When
# the original's run passes this, no candidate is run and each says why.
SECONDS_PER_RUN = 20.0


@dataclass
class Check:
    """What running one candidate showed."""

    checked: bool | None  # outputs equal to the original's (None: could not check)
    why: str = ""  # what differed, or why it could not be checked
    broken: list[dict[str, Any]] = field(default_factory=list)  # promises the data broke: line, multiple, value
    promises: int = 0  # scalar tl.multiple_of evaluations seen (0: the promise was never reached)


def replays(rec: Inspection) -> bool:
    """Whether the record's file has an `example()` that replays its launch: the file's own, or a
    capture's reproducer (`--run`), whose example() reads the run's own index tensors."""
    return rec.call_origin == "example" or (rec.call_origin.startswith("run: ") and "\ndef example(" in rec.source)


def check_candidates(rec: Inspection, sources: list[str], seconds: float = SECONDS_PER_RUN,
                     jailed: bool = True) -> list[Check]:
    """One Check per candidate text (see the module docstring)."""
    if not sources:
        return []
    if not replays(rec):
        why = ("the launch came from " + (f"`{rec.call_origin}`" if rec.call_origin else "no call in the file")
               + "; only a file's example() is re-run to compare outputs")
        return [Check(None, why) for _ in sources]
    env = dict(os.environ, TRITON_INTERPRET="1", PYTHONPATH=os.pathsep.join(
        [PACKAGE_ROOT] + ([os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else [])))
    with tempfile.TemporaryDirectory(prefix="inspector-fixcheck-") as tmp:
        req, res = os.path.join(tmp, "request.json"), os.path.join(tmp, "result.json")
        with open(req, "w", encoding="utf-8") as f:
            json.dump({"file": rec.file, "kernel": rec.kernel, "target": rec.target, "original": rec.source,
                       "candidates": sources, "seconds": seconds}, f)
        cmd = [sys.executable, "-m", "inspector.fixes.check_run", req, res]
        if jailed:
            from ..bench.client import jailed_command

            cmd = jailed_command(cmd, [rec.file], env, writable=[tmp])
            env["TRITON_INTERPRET"] = "1"
        budget = 60 + seconds * (len(sources) + 1)
        try:
            proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=budget,
                                  cwd=os.path.dirname(rec.file) or None)
        except subprocess.TimeoutExpired:
            return [Check(None, f"the checks took longer than {budget:.0f} s") for _ in sources]
        try:
            with open(res, encoding="utf-8") as f:
                results = json.load(f)["results"]
        except (OSError, ValueError, KeyError):
            tail = (proc.stdout + proc.stderr).strip()[-800:]
            return [Check(None, f"the checking process stopped (exit status {proc.returncode}): {tail}")
                    for _ in sources]
    return [Check(r["checked"], r["why"], r["broken"], r["promises"]) for r in results]
