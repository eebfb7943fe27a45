"""Every bundled kernel matches its reference on a CUDA GPU: at the largest benchmark size and at
the small, ragged test sizes, on fresh random inputs, writing into a NaN-poisoned output."""

from __future__ import annotations

import pytest

from inspector.bench import protocol as gallery

pytestmark = pytest.mark.gpu


def _cases():
    for name in gallery.gallery_names():
        module = gallery.load_gallery(name)
        for variant in gallery.variants(module):
            for size in [module.SIZES[-1], *module.TEST_SIZES]:
                yield pytest.param(name, variant, size, id=f"{name}-{variant}-{size}")


@pytest.mark.parametrize("name,variant,size", list(_cases()))
def test_kernel_matches_reference_on_gpu(name, variant, size):
    import torch

    module = gallery.load_gallery(name)
    wanted = getattr(module, "CAPABILITY", None)
    if wanted is not None and torch.cuda.get_device_capability() != tuple(wanted):
        pytest.skip(f"{name} is written for compute capability {wanted} only")
    torch.manual_seed(hash((name, variant, str(size))) & 0xFFFF)
    result = gallery.check(module, size, variant, "cuda")
    torch.cuda.synchronize()
    assert result.ok, result.message


def test_softmax_grid_is_what_the_driver_says_fits():
    """The persistent grid = SMs x blocks/SM from our calculator, and the driver agrees."""
    import torch
    from cuda.bindings import driver as cu

    softmax = gallery.load_gallery("softmax")
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


@pytest.mark.parametrize("name", gallery.gallery_names())
def test_on_a_gpu_launch_runs_the_kernel_its_panes_show(name):
    """The gallery tells the truth: on a real GPU, launch() runs the file's KERNEL (a teaching
    pair, its two kernels) and nothing else, so the recorded curve is that kernel's."""
    import torch

    from inspector.triton_compat import capture_launches, innermost_jit, is_kernel_object

    module = gallery.load_gallery(name)
    wanted = getattr(module, "CAPABILITY", None)
    if wanted is not None and torch.cuda.get_device_capability() != tuple(wanted):
        pytest.skip(f"{name} is written for compute capability {wanted} only")
    shown = {id(innermost_jit(getattr(module, module.KERNEL)))}
    if hasattr(module, "PAIR"):
        shown = {id(innermost_jit(v)) for v in vars(module).values() if is_kernel_object(v)}
    for variant, kw in gallery.variants(module).items():
        inputs = gallery.call(module.make_inputs, module.TEST_SIZES[0], "cuda", **kw)
        with capture_launches() as launches:
            gallery.call(module.launch, *inputs, **kw)
        assert launches and {id(l.jit) for l in launches} <= shown, f"{name} {variant} launched another kernel"
