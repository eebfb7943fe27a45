"""Every bundled kernel file speaks the protocol kernels/__init__.py describes, GPU-free."""

from __future__ import annotations

import inspect
import types

import pytest
import torch

from inspector.bench import protocol as gallery
from inspector.worker.kernel_file import run_example
from inspector.triton_compat import capture_launches, innermost_jit, is_kernel_object

NAMES = gallery.gallery_names()
REQUIRED = ("TITLE", "KERNEL", "launch", "example", "make_inputs", "reference", "baseline", "flops",
            "bytes_moved", "SIZES", "TEST_SIZES", "SIZE_NAMES", "TOLERANCE")
META = torch.device("meta")
# Reads every STRIDE-th value of its input: bytes_moved counts the values used, not the input.
PARTIAL_READS = {("copy_coalesced_vs_strided", "strided")}


def test_the_gallery_is_complete():
    assert {"add", "gelu", "softmax", "layer_norm", "matmul", "attention", "copy_coalesced_vs_strided",
            "register_spill", "matmul_tf32_vs_ieee"} <= set(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_file_defines_the_protocol(name):
    module = gallery.load_gallery(name)
    missing = [n for n in REQUIRED if not hasattr(module, n)]
    assert not missing, f"{name} lacks {missing}"
    doc = module.__doc__ or ""
    assert "What to look for in the IR" in doc and doc.splitlines()[0].strip()
    assert is_kernel_object(getattr(module, module.KERNEL)), f"KERNEL={module.KERNEL!r} is not a Triton kernel"
    assert "out" in inspect.signature(module.launch).parameters, "launch must accept out= (poisoned by checks)"
    assert len(module.SIZE_NAMES) == (len(module.SIZES[0]) if isinstance(module.SIZES[0], tuple) else 1)
    for variant, kw in gallery.variants(module).items():
        # A variant keyword nothing accepts would silently do nothing.
        for key in kw:
            takers = [f for f in (module.make_inputs, module.launch, module.reference)
                      if key in inspect.signature(f).parameters]
            assert takers, f"{name}: variant {variant!r} keyword {key!r} is taken by no function"


@pytest.mark.parametrize("name", NAMES)
def test_example_launches_on_meta_tensors(name):
    """The inspector's example call records launches of this file's kernels and runs nothing."""
    module = gallery.load_gallery(name)
    with capture_launches() as launches:
        assert run_example(module, module.__file__) is None  # nothing stopped it
    jits = {id(innermost_jit(v)) for v in vars(module).values() if is_kernel_object(v)}
    assert launches and all(id(l.jit) in jits for l in launches)
    main = innermost_jit(getattr(module, module.KERNEL))
    assert innermost_jit(launches[0].obj) is main or hasattr(module, "PAIR")
    if hasattr(module, "PAIR"):
        assert len(launches) == len(module.PAIR) == 2


@pytest.mark.parametrize("name", NAMES)
def test_bytes_moved_counts_each_input_and_output_once(name):
    """On meta tensors: bytes_moved = bytes of the inputs + bytes of the output (fewest bytes)."""
    module = gallery.load_gallery(name)
    for variant, kw in gallery.variants(module).items():
        for size in module.SIZES:
            inputs = gallery.call(module.make_inputs, size, META, **kw)
            output = gallery.call(module.reference, *inputs, **kw)
            counted = sum(t.numel() * t.element_size() for t in (*inputs, output))
            claimed = gallery.call(module.bytes_moved, size, **kw)
            work = gallery.call(module.flops, size, **kw)
            assert isinstance(claimed, int) and isinstance(work, int) and work >= 0
            if (name, variant) in PARTIAL_READS:
                assert claimed < counted
            else:
                assert claimed == counted, f"{name} {variant} {size}: {claimed} != {counted}"


def test_check_catches_an_unwritten_element():
    """gallery.check fails a launch that leaves the last element of the poisoned output alone."""

    def launch(x, out=None):
        out[:-1] = x[:-1] * 2
        return out

    fake = types.SimpleNamespace(make_inputs=lambda n, device: (torch.randn(n, device=device),),
                                 reference=lambda x: x * 2, launch=launch, TOLERANCE=dict(atol=0, rtol=0))
    result = gallery.check(fake, 100, "default", "cpu")
    assert not result.ok and "1 never written" in result.message
    fake.launch = lambda x, out=None: out.copy_(x * 2)
    assert gallery.check(fake, 100, "default", "cpu").ok


def test_check_catches_a_wrong_value():
    fake = types.SimpleNamespace(make_inputs=lambda n, device: (torch.randn(n, device=device),),
                                 reference=lambda x: x * 2, launch=lambda x, out=None: out.copy_(x * 2.01),
                                 TOLERANCE=dict(atol=1e-4, rtol=1e-4))
    assert not gallery.check(fake, 100, "default", "cpu").ok
