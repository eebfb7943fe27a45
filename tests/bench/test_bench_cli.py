"""`python -m inspector bench` and the benchmark worker, GPU-free: recorded fallback, --check through the
interpreter, a user's file, isolation (prints, timeouts), progress."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from paths import has_gpu
from inspector.bench import recorded_kernels, run_benchmark, run_benchmarks

REPO = Path(__file__).resolve().parents[2]
no_gpu_only = pytest.mark.skipif(has_gpu(), reason="checks the behaviour without a GPU")

USER_FILE = '''
"""A user's kernel file following the benchmark protocol: y = 2 x."""
import torch
import triton
import triton.language as tl

TITLE = "Scale by two"
SIZES = [2**20, 2**22]
TEST_SIZES = [1, 1000, 4096]
TOLERANCE = dict(atol=0.0, rtol=0.0)
VARIANTS = {"fp32": {"dtype": torch.float32}, "fp16": {"dtype": torch.float16}}


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2, mask=mask)


def launch(x, out=None):
    out = torch.empty_like(x) if out is None else out
    LIMIT = x.numel()  # BUG_HOOK
    scale_kernel[(triton.cdiv(x.numel(), 256),)](x, out, LIMIT, BLOCK=256)
    return out


def make_inputs(size, device, dtype=torch.float32):
    print("user code printing to stdout")  # must not disturb the worker's protocol
    return (torch.randn(size, device=device).to(dtype),)


def reference(x, dtype=None):
    return x * 2


def flops(size, dtype=torch.float32):
    return size


def bytes_moved(size, dtype=torch.float32):
    return 2 * size * torch.empty((), dtype=dtype).element_size()
'''


def _cli(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "inspector", "bench", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def _check(*args: str, vs: str = "none") -> subprocess.CompletedProcess:
    """`bench ARGS --check --vs VS --interpret`: the correctness check alone, through the interpreter."""
    return _cli(*args, "--check", "--vs", vs, "--interpret")


@pytest.fixture
def user_file(tmp_path):
    path = tmp_path / "scale.py"
    path.write_text(USER_FILE)
    return path


@pytest.fixture
def broken_file(tmp_path):
    """The same kernel with a bug: the last 7 elements are never written."""
    path = tmp_path / "scale_broken.py"
    path.write_text(USER_FILE.replace("LIMIT = x.numel()  # BUG_HOOK", "LIMIT = max(x.numel() - 7, 0)"))
    return path


# ---- without a GPU ----------------------------------------------------------------------------------
@no_gpu_only
@pytest.mark.parametrize("name", recorded_kernels()[:1] or ["add"])
def test_no_gpu_shows_recorded_results(name):
    p = _cli(name)
    if name not in recorded_kernels():
        pytest.skip("nothing recorded yet")
    assert p.returncode == 0, p.stderr
    assert "Traceback" not in p.stderr
    assert (
        f"no GPU: showing recorded results from assets/bench/{name}.json, measured on NVIDIA H200 on 20"
        in p.stderr
    )
    assert "recorded on NVIDIA H200 on" in p.stdout and "triton ms" in p.stdout


@no_gpu_only
def test_no_gpu_json_is_the_recorded_record():
    name = (recorded_kernels() or pytest.skip("nothing recorded yet"))[0]
    p = _cli(name, "--json")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert d["recorded"] is True and d["kernel"] == name and d["device"]["name"] == "NVIDIA H200"


@no_gpu_only
def test_no_gpu_user_file_says_so(user_file):
    p = _cli(str(user_file))
    assert p.returncode == 3, p.stderr
    assert "Traceback" not in p.stderr
    assert (
        "no GPU: nothing can be timed here" in p.stderr
        and "assets/bench" in p.stderr
        and "--check" in p.stderr
    )
    assert p.stdout == ""


@no_gpu_only
def test_no_gpu_library_result():
    r = run_benchmark("add", sizes=[4096])
    assert r.error is not None and r.error.kind == "no_gpu" and not r.sweeps


# ---- the GPU-free check through Triton's interpreter -----------------------------------------------
def test_check_user_file(user_file):
    p = _check(str(user_file), "--json", vs="eager")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert d["kernel"] == "scale" and d["title"] == "Scale by two" and d["settings"]["interpreter"] is True
    assert [s["variant"] for s in d["sweeps"]] == ["fp32", "fp16"]
    for s in d["sweeps"]:
        assert [pt["size"] for pt in s["points"]] == [1, 1000, 4096]
        for pt in s["points"]:
            assert [c["impl"] for c in pt["checks"]] == ["triton", "eager"]
            assert all(c["ok"] and c["max_abs_error"] == 0 for c in pt["checks"])
            assert pt["timings"] == []  # --check never times


def test_check_catches_unwritten_output(broken_file):
    """The output is poisoned with NaN before the launch: 7 unwritten elements fail the check."""
    p = _check(str(broken_file), "--variant", "fp32", "--sizes", "1000", "--json")
    assert p.returncode == 1
    pt = json.loads(p.stdout)["sweeps"][0]["points"][0]
    check = pt["checks"][0]
    assert not check["ok"] and check["mismatched"] == 7 and check["total"] == 1000
    assert pt["errors"]["triton"].startswith("failed its check: 7 of 1000 elements")


def test_check_bundled_kernel_human_output():
    p = _check("gelu", "--variant", "bf16", vs="eager")
    assert p.returncode == 0, p.stderr
    assert "correctness check through Triton's interpreter" in p.stdout
    assert p.stdout.count("triton ok") == 4  # gelu's four TEST_SIZES


def test_interpreter_skips_what_it_cannot_run():
    p = _check("matmul", "--variant", "bf16")
    assert p.returncode == 0, p.stderr
    assert "bf16: skipped (" in p.stdout


# ---- usage errors -------------------------------------------------------------------------------
def test_usage_errors(user_file):
    assert _cli("no_such_kernel").returncode == 2
    assert _cli("add", "--sizes", "lots").returncode == 2
    p = _cli("add", "--vs", "numpy")
    assert p.returncode == 2 and "--vs takes eager and/or compile" in p.stderr
    p = _cli(str(user_file), "--check", "--variant", "fp64", "--interpret")
    assert p.returncode == 1 and "no variant fp64" in p.stdout


def test_list():
    p = _cli("--list")
    assert p.returncode == 0 and "add" in p.stdout.split()


def test_protocol_error(tmp_path):
    f = tmp_path / "nothing.py"
    f.write_text("import triton\n")
    r = run_benchmark(str(f), check_only=True, interpret=True)
    assert r.error.kind == "protocol" and "launch, make_inputs, reference" in r.error.message


def test_import_error_in_user_file(tmp_path):
    f = tmp_path / "bad.py"
    f.write_text("raise RuntimeError('user file exploded')\n")
    r = run_benchmark(str(f), check_only=True, interpret=True)
    assert r.error.kind == "load" and "user file exploded" in r.error.message


# ---- isolation and progress ------------------------------------------------------------------------
def test_timeout_kills_the_worker(tmp_path):
    f = tmp_path / "slow.py"
    f.write_text(USER_FILE.replace('print("user code printing to stdout")', "import time; time.sleep(600)"))
    start = time.monotonic()
    r = run_benchmark(str(f), check_only=True, interpret=True, timeout=15)
    assert time.monotonic() - start < 60
    assert r.error.kind == "timeout" and "15 s" in r.error.message


def test_cancel_stops_the_worker(tmp_path):
    f = tmp_path / "slow.py"
    f.write_text(USER_FILE.replace('print("user code printing to stdout")', "import time; time.sleep(600)"))
    cancel = threading.Event()
    threading.Timer(5.0, cancel.set).start()
    start = time.monotonic()
    r = run_benchmark(str(f), check_only=True, interpret=True, cancel=cancel)
    assert time.monotonic() - start < 60
    assert r.error.kind == "cancelled"


def test_progress_and_several_targets(user_file, broken_file):
    seen = []
    results = run_benchmarks(
        [str(user_file), str(broken_file)],
        check_only=True,
        interpret=True,
        vs=[],
        variants=["fp32"],
        sizes=[64, 4096],
        progress=lambda d, t, m: seen.append((d, t, m)),
    )
    assert [r.kernel for r in results] == ["scale", "scale_broken"]
    assert results[0].sweeps[0].points[1].check("triton").ok
    assert not results[1].sweeps[0].points[1].check("triton").ok
    done = [d for d, t, _ in seen if t]
    assert done == sorted(done) and done[-1] == 4 and {t for _, t, _ in seen if t} == {4}
    assert any("checking triton" in m for _, _, m in seen)


def test_out_writes_files(user_file, tmp_path):
    out = tmp_path / "res.json"
    p = _check(str(user_file), "--variant", "fp32", "--sizes", "64", "--out", str(out), "--no-progress")
    assert p.returncode == 0, p.stderr
    assert json.loads(out.read_text())["sweeps"][0]["points"][0]["checks"][0]["ok"] is True
    folder = tmp_path / "many"
    p = _check(str(user_file), "add", "--sizes", "64", "--out", str(folder), "--no-progress")
    assert p.returncode == 0, p.stderr
    assert sorted(f.name for f in folder.iterdir()) == ["add.json", "scale.json"]
