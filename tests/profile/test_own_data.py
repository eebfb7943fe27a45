"""Profiles of kernels whose addresses come from data (tests/fixtures/data_dependent_kernels: a jagged row sum, a gather
through a permutation, a block-table read, an MoE-style row gather): a captured run's reproducer
carries its index tensors bit-exactly, a made-up launch is marked so and its dependent lines are
not compared, and the sector model evaluates the captured data to Nsight Compute's count, GPU-free.
The measurements were recorded on an H200 (benchmarks/data_fidelity.py, ncu 2025.3.1, Triton 3.6.0:
tests/fixtures/gpu_measurements/ncu/own-data-h200)."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from paths import REPO

from inspector.analysis.memory import attach_launch_memory, launch_line_sectors
from inspector.capture.by_running import open_run
from inspector.launch_data import read, sidecar
from inspector.profile import Profile, build_profile, parse_details_page, parse_source_page
from inspector.profile.measured import data_origins
from inspector.record import Inspection

DATA = REPO / "tests" / "fixtures" / "gpu_measurements" / "ncu" / "own-data-h200"
KERNELS = REPO / "tests" / "fixtures" / "data_dependent_kernels"
MEASURED = json.loads((DATA / "measured.json").read_text()) if (DATA / "measured.json").exists() else {}


def _opened(name: str):
    opened = open_run(f"python {KERNELS / name}.py", target="sm_90", cwd=REPO)
    assert opened.rec.error is None, opened.rec.error
    return opened


def test_a_captured_run_carries_its_index_tensors_bit_exactly():
    import torch

    opened = _opened("permute_gather")
    rec = opened.rec
    carried = read(sidecar(rec.file))
    want = torch.randperm(10_000, generator=torch.Generator().manual_seed(0)).numpy()
    assert set(carried) == {"perm_ptr"}  # the integer tensor; the float ones are made up, not kept
    assert carried["perm_ptr"].dtype == np.int64 and carried["perm_ptr"].tobytes() == want.tobytes()
    assert "_filled('perm_ptr', torch.empty_strided((10000,)" in rec.reproducer
    assert data_origins(rec, own_launch=False) == {"perm_ptr": "carried from the capture"}
    # the reproducer really reads them: run under the interpreter on the CPU, its gather is the data's
    code = ("import runpy, sys, torch; ns = runpy.run_path(sys.argv[1]); ns['example']('cpu'); "
            "print(ns['_carried_data']()['perm_ptr'][:5].tolist())")
    run = subprocess.run([sys.executable, "-c", code, rec.file], capture_output=True, text=True,
                         env={"TRITON_INTERPRET": "1", "PATH": "/usr/bin:/bin"}, cwd=REPO, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.strip() == str(want[:5].tolist())


def test_without_its_data_a_reproducer_says_it_ran_on_made_up_values(tmp_path):
    from inspector.compile.api import inspect_kernel

    opened = _opened("jagged_sum")
    bare = tmp_path / "jagged_row_sum.py"
    bare.write_text(opened.rec.reproducer)
    rec = inspect_kernel(str(bare), target="sm_90")
    assert data_origins(rec, own_launch=False) == {"offsets_ptr": "made up (zeros)"}
    # the loop's bounds are loaded: with no data the model does not guess the line (it predicted 0 sectors)
    lines = rec.source.splitlines()
    predicted = {lines[n - 1].strip(): v for n, v in launch_line_sectors(rec).items()}
    assert predicted["acc += tl.load(values_ptr + cols, mask=cols < end, other=0.0)"] is None


def _recorded(name: str, route: str) -> tuple[Inspection, Profile]:
    d = DATA / f"{name}_{route}"
    rec = Inspection.from_json((d / "record.json").read_text())  # (its file, on the GPU machine, is gone)
    attach_launch_memory(rec, read(d / "reproducer.data.npz"))  # {} for the made-up launch
    # both launches ran the same reproducer (only its header's path differed): kept once, with the carried one
    profiled = (DATA / f"{name}_carried" / "reproducer.py").read_text()
    prof = build_profile(rec, parse_source_page((d / "source.csv").read_text())[0],
                         parse_details_page((d / "details.csv").read_text())[0], "ncu 2025.3.1", profiled)
    return rec, prof


@pytest.mark.parametrize("name", ["permute_gather", "moe_rows"])
def test_on_made_up_data_the_dependent_lines_are_not_comparable(name):
    _, prof = _recorded(name, "made_up")
    checks = {c.what: c for c in prof.checks if c.what.startswith("L2 sectors")}
    dependent = [c for c in checks.values() if "not comparable" in c.note]
    assert dependent and all(c.agrees is None and "made up in this launch" in c.note for c in dependent)
    assert all(c.agrees is True for c in checks.values() if c not in dependent)  # the rest still compared
    assert set(prof.data.values()) == {"made up (zeros)"}


@pytest.mark.parametrize("name", ["permute_gather", "moe_rows"])
def test_with_its_data_carried_the_reproducer_agrees_line_by_line(name):
    _, prof = _recorded(name, "carried")
    checks = [c for c in prof.checks if c.what.startswith("L2 sectors")]
    assert checks and all(c.agrees is True for c in checks), [(c.what, c.predicted, c.measured) for c in checks]
    assert set(prof.data.values()) == {"carried from the capture"}


@pytest.mark.parametrize("name", ["jagged_sum", "permute_gather", "paged_read", "moe_rows"])
def test_the_model_on_captured_data_equals_nsight_compute_gpu_free(name):
    """GPU-free: the program runs under Triton's interpreter, its launch's index tensors are
    carried, and the model evaluates them: every line equals what Nsight Compute counted for the
    program's own launch on the GPU (the measurement recorded)."""
    rec = _opened(name).rec
    lines = rec.source.splitlines()
    predicted = {lines[n - 1].strip(): v for n, v in launch_line_sectors(rec).items()}
    measured = MEASURED[name]
    assert measured and set(measured) <= set(predicted)
    for text, sectors in measured.items():
        assert predicted[text] is not None and predicted[text][0] == sectors, (text, predicted[text], sectors)


@pytest.mark.gpu
@pytest.mark.parametrize("how", ["run", "file"])
def test_profiling_the_programs_own_launch(tmp_path, how):
    from inspector.profile.run_ncu import find_ncu

    if find_ncu() is None:
        pytest.skip("Nsight Compute is not installed on this GPU machine")
    out = tmp_path / "p.json"
    target = ["--run", "python tests/fixtures/data_dependent_kernels/jagged_sum.py"] if how == "run" else \
        ["tests/fixtures/data_dependent_kernels/paged_read.py"]
    run = subprocess.run([sys.executable, "-m", "inspector", "profile", *target, "--out", str(out)],
                         capture_output=True, text=True, cwd=REPO, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    prof = Profile.from_dict(json.loads(out.read_text()))
    assert prof.launch.startswith("the program's own launch")
    assert prof.data and set(prof.data.values()) == {"the program's own"}
    checks = [c for c in prof.checks if c.what.startswith("L2 sectors")]
    assert checks and all(c.agrees is True for c in checks), [(c.what, c.predicted, c.measured) for c in checks]
    print(f"\n{how}: " + "; ".join(f"{c.what} {c.measured}" for c in checks) + f"; took {prof.seconds.get('in all')}")
