"""On a GPU: a short real sweep is checked then timed, a wrong kernel is never timed, ceilings are cached."""

from __future__ import annotations

import pytest

from inspector.bench import run_benchmark, run_benchmarks
from test_bench_cli import USER_FILE


@pytest.mark.gpu
def test_short_sweep_times_what_passed(tmp_path, monkeypatch):
    monkeypatch.setenv("TRITON_INSPECTOR_CACHE", str(tmp_path / "cache"))
    good = tmp_path / "scale.py"
    good.write_text(USER_FILE)
    broken = tmp_path / "scale_broken.py"
    broken.write_text(USER_FILE.replace("LIMIT = x.numel()  # BUG_HOOK", "LIMIT = max(x.numel() - 7, 0)"))
    ok, bad = run_benchmarks(
        [str(good), str(broken)],
        sizes=[2**20, 2**24],
        variants=["fp32"],
        vs=["eager"],
        rep_ms=20,
        warmup_ms=5,
    )
    assert ok.error is None and bad.error is None
    assert ok.device.sm_count and ok.device.triton and ok.ceilings.copy_gbps > 100
    for p in ok.sweeps[0].points:
        t = p.timing("triton")
        assert p.check("triton").ok and t and 0 < t.p20_ms <= t.median_ms <= t.p80_ms
        assert t.gbps == pytest.approx(p.bytes_moved / (t.median_ms * 1e-3) / 1e9)
        assert p.timing("eager") is not None and p.timing("compile") is None
    for p in bad.sweeps[0].points:
        assert not p.check("triton").ok and p.check("triton").mismatched == 7
        assert p.timing("triton") is None and "failed its check" in p.errors["triton"]
        assert p.timing("eager") is not None  # the PyTorch side is still right
    # Measured once per device: the second run reads the same ceilings from the cache.
    again = run_benchmark(str(good), sizes=[2**20], variants=["fp32"], vs=[], rep_ms=10, warmup_ms=5)
    assert again.ceilings == ok.ceilings


@pytest.mark.gpu
def test_cudagraph_timing():
    r = run_benchmark("add", sizes=[2**22], vs=[], cudagraph=True, rep_ms=20, warmup_ms=5)
    p = r.sweeps[0].points[0]
    assert p.timing("triton", "do_bench") and p.timing("triton", "cudagraph")


SYNCING_FILE = '''
"""A launch that reads a value back: it cannot be captured in a CUDA graph."""
import torch
import triton
import triton.language as tl

@triton.jit
def twice(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)

def launch(x):
    out = torch.empty_like(x)
    twice[(triton.cdiv(x.numel(), 1024),)](x, out, x.numel(), BLOCK=1024)
    assert out.isfinite().all().item()  # a sync inside the launch
    return out

def make_inputs(size, device):
    return (torch.randn(size, device=device),)

def reference(x):
    return x * 2

def bytes_moved(size):
    return 8 * size

SIZES = [2**20]
'''


@pytest.mark.gpu
def test_primary_timer_is_graph_replay_over_rotating_inputs(tmp_path, monkeypatch):
    import torch

    from inspector.bench import timing as runner

    monkeypatch.setenv("TRITON_INSPECTOR_CACHE", str(tmp_path / "cache"))
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    # 2^20 fp32 add: three 4 MB tensors, so the copies number 3 x L2 / 12 MB.
    assert runner.rotation_count(12 << 20, l2) == -(-3 * l2 // (12 << 20))
    assert runner.rotation_count(8 * l2, l2) == 1
    r = run_benchmark("add", sizes=[2**20], vs=["eager"], rep_ms=20, warmup_ms=5)
    p = r.sweeps[0].points[0]
    for impl in ("triton", "eager"):
        t = p.timing(impl)
        assert t.timer == "graph" and 0 < t.p20_ms <= t.median_ms <= t.p80_ms
        # A 12 MB add from device memory: above 1.5 us even at 8 TB/s, under 1 ms on any GPU.
        assert 0.0015 < t.median_ms < 1.0, t
    assert not p.errors

    syncing = tmp_path / "syncing.py"
    syncing.write_text(SYNCING_FILE)
    r = run_benchmark(str(syncing), vs=[], rep_ms=20, warmup_ms=5)
    assert r.error is None and r.sweeps, r.error
    p = r.sweeps[0].points[0]
    t = p.timing("triton")
    assert r.error is None and t is not None and t.timer == "events" and t.median_ms > 0
    assert "not capturable" in p.errors["triton/graph"]
