"""Timing one autotune config: the benchmark pins a file's autotuner to it (the autotune grid)."""

from __future__ import annotations

import sys
import textwrap

import pytest

from inspector.bench import run_benchmark
from inspector.bench.protocol import ProtocolError, load_spec
from inspector.ui.autotune_grid import grid_rows

TUNED = '''
import torch
import triton
import triton.language as tl

CONFIGS = [triton.Config({"BLOCK": 64}, num_warps=1), triton.Config({"BLOCK": 256}, num_warps=2)]


@triton.autotune(configs=CONFIGS, key=["n"])
@triton.jit
def double(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, 2 * tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def launch(x):
    out = torch.empty_like(x)
    double[lambda meta: (triton.cdiv(x.numel(), meta["BLOCK"]),)](x, out, x.numel())
    return out


def make_inputs(size, device):
    return (torch.randn(size, device=device),)


def reference(x):
    return 2 * x


SIZES = [1 << 20, 1 << 24]
TEST_SIZES = [100, 1000]
'''


@pytest.fixture
def tuned(tmp_path):
    path = tmp_path / "tuned.py"
    path.write_text(textwrap.dedent(TUNED))
    return path


def test_pinning_keeps_one_config(tuned):
    spec = load_spec(str(tuned), autotune_config=1)
    module = sys.modules[spec.launch.__module__]
    assert [c.kwargs["BLOCK"] for c in module.double.configs] == [256]
    assert spec.sizes == [1 << 20, 1 << 24]
    with pytest.raises(ProtocolError, match="out of range"):
        load_spec(str(tuned), autotune_config=5)


def test_pinning_a_file_without_autotune_is_an_error(tmp_path):
    plain = tmp_path / "plain.py"
    plain.write_text(textwrap.dedent(TUNED).replace('@triton.autotune(configs=CONFIGS, key=["n"])\n', "")
                     .replace('double[lambda meta: (triton.cdiv(x.numel(), meta["BLOCK"]),)](x, out, x.numel())',
                              "double[(triton.cdiv(x.numel(), 64),)](x, out, x.numel(), BLOCK=64)"))
    with pytest.raises(ProtocolError, match="no autotuned kernel"):
        load_spec(str(plain), autotune_config=0)


def test_one_pinned_point_checks_in_the_interpreter(tuned):
    result = run_benchmark(str(tuned), check_only=True, interpret=True, autotune_config=1, largest_only=True,
                           vs=())
    assert result.error is None, result.error
    points = [p for s in result.sweeps for p in s.points]
    assert len(points) == 1 and points[0].size == 1000  # the largest test size, once
    assert points[0].check("triton").ok
    assert result.settings["autotune_config"] == 1


def test_grid_rows_gain_a_time_column():
    from inspector.record import Inspection, Resources

    recs = [Inspection(kernel="k", target="sm_90", backend="cuda", stages={"ptx": "x"}, autotune_index=i,
                       autotune_configs=[{"BLOCK": 64, "num_warps": 1}, {"BLOCK": 256, "num_warps": 2}],
                       resources=Resources(num_warps=1 + i, registers=20, shared_bytes=0)) for i in range(2)]
    rows = grid_rows(recs, {0: 0.5, 1: "not timed: out of memory"})
    assert rows[0]["time ms"] == 0.5 and rows[1]["time ms"] is None and "out of memory" in rows[1]["error"]
    assert "time ms" not in grid_rows(recs)[0]


@pytest.mark.gpu
def test_each_config_timed_on_the_gpu(tuned):
    times = []
    for i in range(2):
        r = run_benchmark(str(tuned), vs=(), autotune_config=i, largest_only=True, rep_ms=20)
        assert r.error is None, r.error
        (point,) = [p for s in r.sweeps for p in s.points]
        assert point.size == 1 << 24 and point.check("triton").ok
        times.append(point.timing("triton").median_ms)
    print(f"config 0 (BLOCK 64, 1 warp): {times[0]:.4f} ms; config 1 (BLOCK 256, 2 warps): {times[1]:.4f} ms")
    assert all(t > 0 for t in times)
