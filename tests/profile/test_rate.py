"""The roofline point read from Nsight Compute details pages recorded on an H100 (2026-11-26,
ncu 2025.3.1, Triton 3.6.0; tests/fixtures/gpu_measurements/ncu/rate-h100), and what happens where a metric is missing."""

from __future__ import annotations

import csv
import io

import pytest
from paths import REPO

from inspector.bench.records import Ceilings
from inspector.profile.ncu_details import parse_details_page
from inspector.profile.rate import DRAM_BYTES, METRICS, TENSOR, describe_rate, measured_rate, place_on_roofline

DATA = REPO / "tests" / "fixtures" / "gpu_measurements" / "ncu" / "rate-h100"
H100 = Ceilings(copy_gbps=3029.3, matmul_tflops=736.7, copy_bytes=0, matmul_n=4096, device="NVIDIA H100 80GB HBM3")


def _page(name: str) -> str:
    return (DATA / f"{name}-details.csv").read_text()


def _rate(text: str) -> dict:
    return measured_rate(parse_details_page(text)[0])


def _with(page: str, metric: str, value: str) -> str:
    """The page with `metric`'s printed value replaced (read and written as CSV, as ncu prints it)."""
    rows = list(csv.reader(io.StringIO(page)))
    header = next(r for r in rows if "Metric Value" in r)
    name, at = header.index("Metric Name"), header.index("Metric Value")
    for r in rows:
        if len(r) > at and r[name] == metric:
            r[at] = value
    out = io.StringIO()
    csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n").writerows(rows)
    return out.getvalue()


def test_every_metric_asked_for_is_on_the_recorded_page():
    page = _page("matmul")
    assert all(f'"{m}"' in page for m in METRICS)


def test_a_bf16_matmul_is_counted_in_tensor_core_flop_and_placed_under_the_compute_roof():
    rate = place_on_roofline(_rate(_page("matmul")), H100)
    assert rate["flop"] == 2 * 4096**3 and rate["flop_by"] == {"tensor cores, bf16": 2 * 4096**3}
    assert rate["dram_bytes"] == pytest.approx(215.2e6, rel=0.01)  # "Mbyte": 1e6 bytes
    assert rate["seconds"] == pytest.approx(202.4e-6, rel=0.01)  # "us"
    assert rate["tflops"] == pytest.approx(rate["flop"] / rate["seconds"] / 1e12)
    assert rate["intensity"] > H100.ridge and rate["bound"] == "compute" and rate["roof_tflops"] == H100.matmul_tflops
    assert rate["of_roof"] == pytest.approx(rate["tflops"] / H100.matmul_tflops)
    assert rate["dram_of_ceiling"] == pytest.approx(rate["dram_gbps"] / H100.copy_gbps)


def test_cuda_core_flop_count_an_fma_twice():
    rate = _rate(_page("softmax"))
    assert set(rate["flop_by"]) <= {"CUDA cores, fp32", "CUDA cores, fp16"} and rate["flop"] > 0
    assert place_on_roofline(rate, H100)["bound"] == "memory"
    # 1,000 more fp32 FMA on the same page are 2,000 more FLOP
    name = "sm__sass_thread_inst_executed_op_ffma_pred_on.sum"
    before = parse_details_page(page := _page("softmax"))[0].value(("Command line profiler metrics", name))
    assert _rate(_with(page, name, f"{before + 1000:,}"))["flop"] == rate["flop"] + 2000


def test_a_copy_does_no_arithmetic_and_is_judged_by_bandwidth():
    rate = place_on_roofline(_rate(_page("copy_strided_kernel")), H100)
    assert rate["flop"] == 0 and rate["intensity"] == 0 and "bound" not in rate
    assert "a pure data-movement kernel, judged by bandwidth" in describe_rate(rate)[-1]


def test_a_gpu_without_tensor_operation_counts_says_so():
    page = _page("matmul")
    for metric in TENSOR:  # what Nsight Compute prints for a metric this chip lacks
        page = _with(page, metric, "n/a")
    rate = _rate(page)
    assert rate["flop"] == 0 and "no tensor-core operation count" in rate["note"]
    assert rate["note"] in describe_rate(rate)


def test_a_page_without_the_counts_gives_no_point():
    page = "\n".join(l for l in _page("add_n4194304").splitlines() if f'"{DRAM_BYTES}"' not in l)
    assert _rate(page) is None


def test_without_measured_ceilings_the_point_says_how_to_get_them():
    rate = _rate(_page("add_n4194304"))
    assert "no measured ceilings for this device: `python -m inspector bench` measures them" in describe_rate(rate)[2]
