"""Capture on a GPU (run by `pytest -m gpu` on the device machine): the three-kernel program runs
natively; the capture has the run's launch counts, the driver's registers of each loaded kernel
and, with --time, GPU time; each kernel reopened natively has the registers and shared memory the
run used."""

from __future__ import annotations


import pytest
from capture_support import capture_program

from inspector.capture import load
from inspector.capture.reopen import reopen



@pytest.mark.gpu
def test_capture_on_a_gpu_reopens_with_the_run_s_resources(tmp_path):
    out = tmp_path / "gpu.inspector"
    p = capture_program(out, 40, "--time", interpret=False, timeout=600)
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
