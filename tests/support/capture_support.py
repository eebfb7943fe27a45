"""Capturing the test program (tests/capture_program/prog.py) through the command line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from paths import REPO

PROGRAM = REPO / "tests" / "capture_program"


def capture_program(out: Path, steps: int, *flags: str, interpret: bool = True,
                    timeout: float = 300) -> subprocess.CompletedProcess:
    """`python -m inspector capture [flags] -o OUT -- python prog.py STEPS`, from the repository root;
    under Triton's CPU interpreter unless `interpret` is False (a GPU run)."""
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    if interpret:
        env["TRITON_INTERPRET"] = "1"
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    command = [sys.executable, "-m", "inspector", "capture", *flags, "-o", str(out), "--",
               sys.executable, str(PROGRAM / "prog.py"), str(steps)]
    return subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout)
