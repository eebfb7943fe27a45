"""Opening a kernel through the code that really calls it (inspector.capture.by_running): a
library kernel whose wrapper rejects every made-up call opens from its own test, run GPU-free
under Triton's interpreter with real tensors, with the real specialisation."""

from __future__ import annotations

import subprocess
import sys

import pytest
from paths import REPO

from inspector.capture.by_running import open_by_running, program_of
from rowscale_project import make_project

@pytest.fixture(scope="module")
def project(tmp_path_factory):
    return make_project(tmp_path_factory.mktemp("proj"))


def test_commands_as_users_type_them():
    assert program_of("pytest -q tests/t.py::test_x") == ["-m", "pytest", "-q", "tests/t.py::test_x"]
    assert program_of("tests/t.py::test_x") == ["-m", "pytest", "tests/t.py::test_x"]
    assert program_of("python -u bench.py --n 4") == ["bench.py", "--n", "4"]
    assert program_of("bench.py") == ["bench.py"]
    assert program_of("mypkg.bench --n 4") == ["-m", "mypkg.bench", "--n", "4"]
    with pytest.raises(ValueError):
        program_of("")


def test_a_kernel_whose_guess_fails_opens_from_its_test(project):
    rec = open_by_running("pytest -q tests/test_ops.py::test_rowscale", kernel="_rowscale_kernel", target="sm_90",
                          cwd=project)
    assert rec.error is None, rec.error
    assert rec.call_origin == "run: pytest -q tests/test_ops.py::test_rowscale"
    values = {p.name: p.value for p in rec.parameters}
    # the test's own call: 8 rows of 300, stride 300 (not a multiple of 16: no tt.divisibility)
    assert values["n_cols"] == 300 and values["stride"] == 300 and values["BLOCK"] == 512
    assert rec.grid == [8]
    spec = {p.name: p.specialization for p in rec.parameters}
    assert "tt.divisibility=16" not in " ".join(spec["stride"]) and "tt.divisibility=16" in " ".join(spec["X"])
    assert "ld.global" in rec.stages["ptx"]
    amd = open_by_running("tests/test_ops.py::test_rowscale", target="gfx942", cwd=project)
    assert amd.error is None and amd.kernel == "_rowscale_kernel" and "amdgcn" in amd.stages


def test_a_run_that_launches_nothing_says_so(project):
    rec = open_by_running("pytest -q tests/test_ops.py::test_nothing", target="sm_90", cwd=project)
    assert rec.error is not None and rec.error.kind == "no_launch"
    assert "launched no Triton kernel" in rec.error.message and "1 passed" in rec.error.message
    rec = open_by_running("pytest -q tests/test_ops.py::test_rowscale", kernel="nope", target="sm_90", cwd=project)
    assert rec.error is not None and "_rowscale_kernel" in rec.error.message


def test_the_command_line_offers_and_takes_the_path(project):
    env_cmd = [sys.executable, "-m", "inspector", "compile"]
    guess = subprocess.run([*env_cmd, "mylib/ops.py"], cwd=project, capture_output=True, text=True, timeout=300,
                           env={**__import__("os").environ, "PYTHONPATH": str(REPO)})
    # the made-up call was refused: the kernel opens with a made-up BLOCK, and the note says where
    # the wrapper stopped and offers the way in through the code that calls it
    assert guess.returncode == 0 and "the rows must come in triples" in guess.stderr, guess.stderr
    assert "made-up values (BLOCK=" in guess.stderr
    assert '--run "pytest' in guess.stderr
    run = subprocess.run([*env_cmd, "--run", "pytest -q tests/test_ops.py::test_rowscale", "--kernel",
                          "_rowscale_kernel", "--stage", "ttgir"], cwd=project, capture_output=True, text=True,
                         timeout=300, env={**__import__("os").environ, "PYTHONPATH": str(REPO)})
    assert run.returncode == 0, run.stderr[-3000:]
    assert "tt.load" in run.stdout and "_rowscale_kernel on sm_90" in run.stderr


@pytest.mark.gpu
def test_natively_on_a_gpu(project):
    # on a GPU the test runs natively (no interpreter, real CUDA tensors) and the launch compiles
    # for the GPU itself
    rec = open_by_running("pytest -q -p no:cacheprovider tests/test_ops.py::test_rowscale", target="native",
                          cwd=project)
    assert rec.error is None, rec.error
    assert rec.mode == "native" and rec.grid == [8]
    assert {p.name: p.value for p in rec.parameters}["n_cols"] == 300
