"""`capture profile`: a captured run's GPU time kernel by kernel, and its heaviest kernels
profiled. The table and the ranking GPU-free; the profiles on a GPU (`pytest -m gpu`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from capture_support import capture_program
from paths import REPO

from inspector.capture.store import Capture, KernelEntry
from inspector.cli.capture_profile import format_time_table, heaviest, time_table


def _capture(timed: bool) -> Capture:
    times = {"axpy_kernel": 2.0, "rms_norm_kernel": 6.0, "scale_kernel": 0.5} if timed else {}
    return Capture(kernels=[KernelEntry("axpy_kernel", launches=40, time_ms=times.get("axpy_kernel")),
                            KernelEntry("rms_norm_kernel", launches=1, time_ms=times.get("rms_norm_kernel")),
                            KernelEntry("scale_kernel", launches=1, time_ms=times.get("scale_kernel")),
                            KernelEntry("never_launched", launches=0)], timed=timed)


def test_the_heaviest_kernels_come_first_with_their_share_of_the_gpu_time():
    cap = _capture(timed=True)
    assert [k.name for k in heaviest(cap)] == ["rms_norm_kernel", "axpy_kernel", "scale_kernel"]
    rows = time_table(cap)
    assert rows[0] == {"kernel": "rms_norm_kernel", "launches": 1, "time_ms": 6.0, "per_launch_us": 6000.0,
                       "share": round(6 / 8.5, 4)}
    assert rows[1]["per_launch_us"] == 50.0  # 2 ms over 40 launches
    text = "\n".join(format_time_table(cap))
    assert "8.500 ms" in text and "70.6%" in text


def test_an_untimed_capture_is_ranked_by_launches_and_says_so():
    cap = _capture(timed=False)
    assert [k.name for k in heaviest(cap)][0] == "axpy_kernel"
    assert "captured without --time" in format_time_table(cap)[0]


@pytest.mark.gpu
def test_a_gpu_capture_s_two_heaviest_kernels_are_profiled(tmp_path):
    out = tmp_path / "gpu.inspector"
    p = capture_program(out, 40, "--time", interpret=False, timeout=600)
    assert p.returncode == 0, p.stderr
    env = dict(os.environ, PYTHONPATH=str(REPO))
    run = subprocess.run([sys.executable, "-m", "inspector", "capture", "profile", str(out), "--top", "2",
                          "--out", str(tmp_path / "profiles"), "--json"], cwd=REPO, env=env, capture_output=True,
                         text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    got = json.loads(run.stdout)
    names = [r["kernel"] for r in got["kernels"]]
    assert [p["kernel"] for p in got["profiles"]] == names[:2]
    for prof in got["profiles"]:
        assert prof["profile"]["figures"]["duration"]["value"] > 0
        assert (tmp_path / "profiles" / f"{prof['kernel']}.json").is_file()
    print("capture profile:", [(r["kernel"], r.get("time_ms"), r.get("share")) for r in got["kernels"]])
