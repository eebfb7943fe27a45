"""The stand-in device's deferral of `torch._dynamo` (inspector.worker.stand_in_device): meta-tensor
arithmetic must not import it, and code that really uses dynamo must still get the real module.

Each check runs in a fresh interpreter: the test process may have imported torch._dynamo already,
and then the stand-in (rightly) leaves it alone."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

_PRELUDE = """
import json, sys
sys.path.insert(0, {repo!r})
import torch
from inspector.worker.stand_in_device import stand_in_device
from inspector.hardware.targets import parse_target
"""


def _run(body: str) -> dict:
    code = _PRELUDE.format(repo=str(REPO)) + textwrap.dedent(body)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_meta_arithmetic_does_not_import_dynamo_and_leaves_nothing_behind():
    r = _run("""
        with stand_in_device(parse_target("sm_90")):
            x = torch.randn(256, 256, device="cuda", dtype=torch.float16)
            y = ((x + 1) * 2.0 + torch.randn_like(x)).float().sum(-1)
            inside = type(sys.modules.get("torch._dynamo")).__name__
        import torch._refs
        add = torch._refs.add
        cached = [f for f in (add, getattr(add, "__wrapped__", None)) if f is not None
                  and "__dynamo_disable" in vars(f)]
        after = "torch._dynamo" in sys.modules or "_dynamo" in vars(torch)
        import torch._dynamo  # the real one, importable afterwards
        real = torch._dynamo.disable.__module__
        print(json.dumps({"shape": list(y.shape), "device": str(y.device), "inside": inside,
                          "cached": len(cached), "after": after, "real": real}))
    """)
    assert r["shape"] == [256] and r["device"] == "meta"
    assert r["inside"] == "_DeferredDynamo", "meta arithmetic imported the real torch._dynamo"
    assert not r["after"] and r["cached"] == 0, "the stand-in left dynamo or its caches behind"
    assert r["real"].startswith("torch._dynamo")


def test_a_file_that_uses_dynamo_gets_the_real_module_and_one_copy_of_its_submodules():
    r = _run("""
        with stand_in_device(parse_target("sm_90")):
            x = torch.randn(16, device="cuda")
            x + 1  # the deferred module is in place and has been used
            import torch._dynamo.config
            torch._dynamo.config.cache_size_limit = 77
            from torch._dynamo import config as again
            import torch._dynamo.eval_frame as eval_frame
            compiled = torch.compile(lambda a: a * 2)
            same = (torch._dynamo.config is sys.modules["torch._dynamo.config"] is again
                    and eval_frame.config is again)
            kind = type(torch._dynamo).__name__
            z = x * 3  # meta arithmetic still works with the real module in place
        print(json.dumps({"same": same, "kind": kind, "limit": again.cache_size_limit,
                          "callable": callable(compiled), "z": str(z.device)}))
    """)
    assert r["same"], "a dynamo submodule was loaded twice"
    assert r["kind"] == "module" and r["limit"] == 77 and r["callable"] and r["z"] == "meta"


def test_a_submodule_import_before_any_arithmetic():
    r = _run("""
        with stand_in_device(parse_target("gfx942")):
            import torch._dynamo.config as cfg
            y = torch.ones(8, device="cuda") + 1
        print(json.dumps({"same": cfg is sys.modules["torch._dynamo.config"], "y": str(y.device)}))
    """)
    assert r == {"same": True, "y": "meta"}


def test_a_module_that_imports_dtensor_while_the_stand_in_is_in_place():
    # The regression of issue 26: importing torch.distributed.tensor registers custom ops, whose
    # `inspect.getmodule` probe asks every module in sys.modules for `__file__`; the stand-in
    # answered through the real torch._dynamo, which imports torch.distributed.tensor back
    # ("cannot import name 'DeviceMesh' from partially initialized module").
    r = _run("""
        with stand_in_device(parse_target("sm_90")):
            import torch.distributed.tensor
            from torch.distributed.tensor import DeviceMesh, DTensor
            x = torch.randn(16, device="cuda") + 1
            inside = type(sys.modules.get("torch._dynamo")).__name__
            path = sys.modules["torch._dynamo"].__file__
        import os
        print(json.dumps({"inside": inside, "file": os.path.isfile(path), "dtensor": DTensor.__name__,
                          "after": "torch._dynamo" in sys.modules}))
    """)
    assert r["dtensor"] == "DTensor" and r["file"]
    assert r["inside"] == "_DeferredDynamo", "importing DTensor imported the real torch._dynamo"
    assert not r["after"]


def test_a_kernel_file_that_imports_dtensor_compiles(tmp_path):
    from inspector.compile.api import inspect_kernel

    kernel = tmp_path / "dtensor_kernel.py"
    kernel.write_text(textwrap.dedent("""
        import torch
        import torch.distributed.tensor
        import triton
        import triton.language as tl

        @triton.jit
        def add(x, y, out, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            m = offs < n
            tl.store(out + offs, tl.load(x + offs, mask=m) + tl.load(y + offs, mask=m), mask=m)

        def example():
            x = torch.randn(4096, device="cuda")
            out = torch.empty_like(x)
            add[(4,)](x, x, out, x.numel(), BLOCK=1024)
    """))
    record = inspect_kernel(kernel, target="sm_90", use_cache=False)
    assert record.error is None, record.error
    assert "ld.global" in record.stages["ptx"]


def test_inductor_style_raw_stream_and_stream_keyword(tmp_path):
    # Inductor's generated files import `_cuda_getCurrentRawStream` from torch._C (absent from a
    # CPU build) and pass `stream=` at the launch (which Triton 3.x's warmup refuses).
    from inspector.compile.api import inspect_kernel

    kernel = tmp_path / "output_code.py"
    kernel.write_text(textwrap.dedent("""
        import torch
        import triton
        import triton.language as tl
        from torch._C import _cuda_getCurrentRawStream as get_raw_stream


        @triton.jit
        def triton_poi_fused_add_0(in_ptr0, out_ptr0, xnumel, XBLOCK: tl.constexpr):
            xindex = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)[:]
            xmask = xindex < xnumel
            tl.store(out_ptr0 + (xindex), tl.load(in_ptr0 + (xindex), xmask) + 1.0, xmask)


        def call(args):
            arg0_1, = args
            buf0 = torch.empty_strided((1024,), (1,), device="cuda", dtype=torch.float32)
            stream0 = get_raw_stream(0)
            triton_poi_fused_add_0[(8,)](arg0_1, buf0, 1024, XBLOCK=128, stream=stream0)
            return (buf0,)


        if __name__ == "__main__":
            call([torch.randn(1024, device="cuda")])
    """))
    record = inspect_kernel(kernel, target="sm_90", use_cache=False)
    assert record.error is None, record.error
    assert {p.name: p.value for p in record.parameters}["XBLOCK"] == 128 and record.grid == [8]


def test_user_code_sees_the_stand_in_tensors_on_gpu_0(tmp_path):
    """A wrapper indexing a per-device table (`TABLE[x.device.index]`, gemlite) and making its output
    on `x.device` runs; torch's own Python still sees meta tensors, and nothing stays patched."""
    from inspector.compile.api import inspect_kernel

    path = tmp_path / "per_device.py"
    path.write_text(textwrap.dedent('''
        import torch
        import triton
        import triton.language as tl

        TABLE = [torch.arange(16, dtype=torch.int8)]  # one entry per GPU


        @triton.jit
        def lookup_kernel(x_ptr, table_ptr, out_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            i = tl.load(x_ptr + offs, mask=offs < n, other=0)
            tl.store(out_ptr + offs, tl.load(table_ptr + i), mask=offs < n)


        def lookup(x: torch.Tensor) -> torch.Tensor:
            assert x.device.type == "cuda" and x.is_cuda
            table = TABLE[x.device.index].to(x.device)
            out = torch.empty(x.shape, dtype=torch.int8, device=x.device)
            out = torch.nn.functional.pad(out, (0, 0))  # torch's own Python: meta kernels as before
            lookup_kernel[(triton.cdiv(x.numel(), 256),)](x, table, out, x.numel(), BLOCK=256)
            return out
    '''))
    rec = inspect_kernel(path, target="sm_90", use_cache=False)
    assert rec.error is None, rec.error and rec.error.short()
    assert rec.call_origin == "lookup"
    r = _run("""
        with stand_in_device(parse_target("sm_90")):
            pass
        t = torch.empty(2, device="meta")
        print(json.dumps({"device": str(t.device), "patched": "device" in vars(torch.Tensor)}))
    """)
    assert r == {"device": "meta", "patched": False}
