"""Capture on a GPU (run by `pytest -m gpu` on the device machine): the three-kernel program runs
natively; the capture has the run's launch counts, the driver's registers of each loaded kernel
and, with --time, GPU time; each kernel reopened natively has the registers and shared memory the
run used."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from inspector.capture import load
from inspector.capture.reopen import reopen

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = ROOT / "tests" / "capture_program"


@pytest.mark.gpu
def test_capture_on_a_gpu_reopens_with_the_run_s_resources(tmp_path):
    out = tmp_path / "gpu.inspector"
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["PYTHONPATH"] = str(ROOT)
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "inspector",
            "capture",
            "--time",
            "-o",
            str(out),
            "--",
            sys.executable,
            str(PROGRAM / "prog.py"),
            "40",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert p.returncode == 0, p.stderr
    cap = load(out)
    assert cap.mode == "gpu" and cap.timed
    launched = {k.name: k for k in cap.kernels if k.launches}
    assert launched["axpy_kernel"].launches == 40
    assert launched["rms_norm_kernel"].launches == 1 and launched["scale_kernel"].launches == 1
    for entry in launched.values():
        run = entry.compiled
        assert run["source"] == "driver" and run["registers"] > 0, entry.name
        assert entry.time_ms is not None and entry.time_ms > 0, entry.name
        again = reopen(cap, entry, target="native", folder=tmp_path / "reopened")
        assert again.ok, again.error and again.error.short()
        assert again.resources.registers == run["registers"], entry.name
        assert again.resources.shared_bytes == run["shared"], entry.name
