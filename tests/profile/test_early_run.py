"""`run_ncu.EarlyRun`: Nsight Compute started before the reproducer exists, handed it later.

GPU-free, with a stand-in `ncu` (a shell script) that does what the real one does with the
runner's stdin and files: it waits for the runner's "go" or "stop", checks the reproducer was
written where the runner reads it, writes the report, and prints recorded pages (an H100's, for
add_kernel) when asked to `--import` it. The real one, jailed, runs in the GPU tests."""

from __future__ import annotations

import os

import pytest
from profile_data import DATA

from inspector.profile.run_ncu import EarlyRun

FAKE = """#!/bin/sh
case "$1" in
  --version) echo "Version 2025.3.1.0"; exit 0 ;;
  --import) case "$*" in *source*) cat "{source}" ;; *) cat "{details}" ;; esac; exit 0 ;;
esac
report=""; last=""
while [ $# -gt 0 ]; do
  [ "$1" = -o ] && report="$2"
  last="$1"; shift
done
read line
echo "runner said: $line" >> "{log}"
[ "$line" = go ] || exit 0
grep -q "def example" "$last" || {{ echo "the reproducer is empty"; exit 5; }}
echo "$last" >> "{log}"
touch "$report.ncu-rep"
"""


@pytest.fixture
def fake_ncu(tmp_path):
    log = tmp_path / "calls.log"
    path = tmp_path / "ncu"
    path.write_text(FAKE.format(source=DATA / "add" / "source.csv", details=DATA / "add" / "details.csv", log=log))
    path.chmod(0o755)
    return str(path), log


def test_the_reproducer_written_later_is_the_one_profiled(fake_ncu):
    ncu, log = fake_ncu
    run = EarlyRun(["add_kernel", "helper"], ncu=ncu, jailed=False)
    folder = run.work
    assert os.path.isdir(folder) and run.proc.poll() is None  # started, waiting for its reproducer
    pages = run.finish((DATA / "add" / "reproducer.py").read_text(), "add_kernel")
    assert pages is not None and pages.source == (DATA / "add" / "source.csv").read_text()
    assert pages.version == "2025.3.1.0" and "def example" in pages.profiled_text
    assert list(pages.seconds) == ["Nsight Compute run, after the compile (started beside it)", "its two pages printed"]
    assert log.read_text().splitlines()[0] == "runner said: go"
    assert not os.path.exists(folder)  # its folder goes with it


def test_a_kernel_it_does_not_wait_for_is_profiled_the_usual_way(fake_ncu):
    ncu, log = fake_ncu
    run = EarlyRun(["add_kernel"], ncu=ncu, jailed=False)
    folder = run.work
    assert run.finish("def example(device): pass\n", "other_kernel") is None
    assert run.proc.returncode == 0 and log.read_text() == "runner said: stop\n" and not os.path.exists(folder)


def test_a_run_that_fails_gives_way_to_the_usual_one(fake_ncu):
    ncu, _ = fake_ncu
    run = EarlyRun(["add_kernel"], ncu=ncu, jailed=False)
    assert run.finish("# no example here\n", "add_kernel") is None  # the stand-in exits 5, no report
    assert run.proc.returncode == 5


def test_cancelling_stops_the_runner_before_anything_runs(fake_ncu):
    ncu, log = fake_ncu
    run = EarlyRun(["add_kernel"], ncu=ncu, jailed=False)
    folder = run.work
    run.cancel()
    assert run.proc.returncode == 0 and log.read_text() == "runner said: stop\n" and not os.path.exists(folder)


def test_the_profile_waits_for_the_sector_model_only_so_long(fake_ncu, sandbox, tmp_path, monkeypatch):
    """The model runs beside the measurement; with no grace left once the (stand-in) measurement
    is in, the profile asks it to stop, and the check says why. The model itself, asked to stop,
    stops before its next program (vector add at n = 2^22: 4,096 programs)."""
    import threading

    from inspector.compile.api import inspect_kernel
    from inspector.profile import measure as measure_module
    from inspector.profile.measured import predict_sectors
    from paths import KERNELS

    big = tmp_path / "add.py"
    text = (KERNELS / "add.py").read_text()
    big.write_text(text.replace("launch(*make_inputs(4096, device))", "launch(*make_inputs(4194304, device))"))
    rec = inspect_kernel(big, target="sm_90", sandbox=sandbox)
    assert rec.grid == [4096], rec.error
    said = predict_sectors(rec, stop=lambda: True)
    assert said == "the model did not finish in time for this launch of 4,096 programs (stopped after 0 of 4,096 programs)"

    asked = threading.Event()

    def model_until_stopped(rec, stop):  # stands in for a model slower than any grace
        while not stop():
            asked.wait(0.01)
        asked.set()
        return predict_sectors(rec, stop)

    ncu, _ = fake_ncu
    monkeypatch.setattr(measure_module, "MODEL_GRACE", 0.0)
    monkeypatch.setattr(measure_module, "predict_sectors", model_until_stopped)
    got = measure_module.measure(rec, ncu=ncu, early=EarlyRun(["add_kernel"], ncu=ncu, jailed=False))
    (check,) = [c for c in got.profile.checks if c.what == "sectors per line"]
    assert asked.is_set() and check.agrees is None and check.note == f"not predicted: {said}"
