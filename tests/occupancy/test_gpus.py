"""The GPU catalogue: every listed part, consistent figures, name lookup, native properties winning."""

from __future__ import annotations

import dataclasses
import json

import pytest

from inspector.hardware.architectures import NVIDIA_LIMITS, amd_limits
from inspector.hardware.catalogue import GPUS, REPRESENTATIVE, find_gpu, gpu_for_target, gpu_from_properties
from inspector.occupancy import parse_arch

WANTED = ["V100", "T4", "A100", "A10", "RTX 3090", "L4", "RTX 4090", "H100", "H200", "B200", "RTX 5090",
          "MI300X", "MI355X"]


def test_catalogue_has_every_part():
    assert set(WANTED) <= set(GPUS)


@pytest.mark.parametrize("name", WANTED)
def test_entry_is_consistent(name):
    g = GPUS[name]
    arch = parse_arch(g.arch)
    if g.vendor == "nvidia":
        assert arch.cc in NVIDIA_LIMITS
    else:
        amd_limits(g.arch)
    assert g.sm_count > 0 and g.l2_bytes > 0 and g.memory_bytes > 0
    assert 100e9 < g.memory_bandwidth < 20e12
    assert 1e12 < g.peak_fp32 < 200e12
    if g.peak_bf16 is not None:
        assert g.peak_bf16 > g.peak_fp32  # tensor/matrix cores beat the vector units
    assert g.source
    assert set(g.estimates) <= {f.name for f in dataclasses.fields(g)}
    json.dumps(dataclasses.asdict(g))


def test_parts_without_bf16_tensor_cores_say_so():
    assert GPUS["V100"].peak_bf16 is None and "FP16" in GPUS["V100"].notes
    assert GPUS["T4"].peak_bf16 is None


def test_unconfirmed_figures_are_marked():
    assert set(GPUS["B200"].estimates) == {"sm_count", "l2_bytes"} and GPUS["B200"].notes


@pytest.mark.parametrize("text,name", [("NVIDIA H100 80GB HBM3", "H100"), ("Tesla V100-SXM2-32GB", "V100"),
                                       ("NVIDIA GeForce RTX 4090", "RTX 4090"), ("AMD Instinct MI300X", "MI300X"),
                                       ("nvidia a10", "A10"), ("NVIDIA H200", "H200")])
def test_find_gpu(text, name):
    assert find_gpu(text).name == name


@pytest.mark.parametrize("text", ["NVIDIA A10G", "NVIDIA L40S", "NVIDIA H800"])
def test_find_gpu_does_not_guess(text):
    with pytest.raises(KeyError):
        find_gpu(text)


def test_representative_parts_match_their_arch():
    for arch, name in REPRESENTATIVE.items():
        assert GPUS[name].arch == arch
    assert gpu_for_target("sm_90").name == "H100"
    assert gpu_for_target(80).name == "A100"
    assert gpu_for_target("gfx950").name == "MI355X"
    assert gpu_for_target("sm_87") is None


def test_native_properties_win():
    props = {"name": "NVIDIA H100 PCIe", "major": 9, "minor": 0, "multi_processor_count": 114,
             "L2_cache_size": 50 * 2**20, "total_memory": 85_000_000_000, "memory_clock_rate": 1_593_000,
             "memory_bus_width": 5120}
    g = gpu_from_properties(props)
    assert g.native and g.arch == "sm_90" and g.sm_count == 114
    assert g.memory_bandwidth == pytest.approx(2 * 1.593e9 * 640)
    assert g.peak_fp32 == pytest.approx(GPUS["H100"].peak_fp32 * 114 / 132)
    assert gpu_for_target("sm_90", native=g) is g
    assert gpu_for_target("sm_80", native=g).name == "A100"


def test_unknown_native_gpu():
    g = gpu_from_properties({"name": "NVIDIA L40S", "major": 8, "minor": 9, "multi_processor_count": 142,
                             "L2_cache_size": 96 * 2**20, "total_memory": 48 * 10**9, "clock_rate": 2_520_000})
    assert g.arch == "sm_89" and g.peak_bf16 is None
    assert g.peak_fp32 == pytest.approx(142 * 128 * 2 * 2.52e9)


def test_amd_native_gpu():
    g = gpu_from_properties({"name": "AMD Instinct MI300X", "gcnArchName": "gfx942:sramecc+:xnack-", "major": 9,
                             "minor": 4, "multi_processor_count": 304, "L2_cache_size": 4 * 2**20,
                             "total_memory": 192 * 10**9})
    assert g.vendor == "amd" and g.arch == "gfx942" and g.peak_bf16 == GPUS["MI300X"].peak_bf16
