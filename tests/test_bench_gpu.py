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
