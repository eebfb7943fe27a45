"""Every bundled kernel matches its reference on a CUDA GPU: at the largest benchmark size and at
the small, ragged test sizes, on fresh random inputs, writing into a NaN-poisoned output."""

from __future__ import annotations

import pytest

import kernels

pytestmark = pytest.mark.gpu


def _cases():
    for name in kernels.bundled_names():
        module = kernels.load(name)
        for variant in kernels.variants(module):
            for size in [module.SIZES[-1], *module.TEST_SIZES]:
                yield pytest.param(name, variant, size, id=f"{name}-{variant}-{size}")


@pytest.mark.parametrize("name,variant,size", list(_cases()))
def test_kernel_matches_reference_on_gpu(name, variant, size):
    import torch

    torch.manual_seed(hash((name, variant, str(size))) & 0xFFFF)
    result = kernels.check(kernels.load(name), size, variant, "cuda")
    torch.cuda.synchronize()
    assert result.ok, result.message


def test_softmax_grid_is_what_the_driver_says_fits():
    """The persistent grid = SMs x blocks/SM from our calculator, and the driver agrees."""
    import torch
    from cuda.bindings import driver as cu

    softmax = kernels.load("softmax")
    x = torch.randn(8192, 4096, device="cuda")
    out = torch.empty_like(x)
    block, warps, stages = softmax.launch_params(x.shape[1], x.element_size())
    programs = softmax.resident_programs(x, out, block, warps, stages)
    compiled = softmax.softmax_kernel.warmup(out, x, x.stride(0), out.stride(0), *x.shape, BLOCK=block,
                                             NUM_STAGES=stages, num_warps=warps, grid=(1,))
    compiled._init_handles()
    err, per_sm = cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(
        cu.CUfunction(compiled.function), 32 * warps, compiled.metadata.shared)
    assert err == cu.CUresult.CUDA_SUCCESS
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    assert programs == sms * per_sm
