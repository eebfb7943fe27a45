"""Loading a kernel file as Python would: inside its package (relative imports work), as
`__main__`, kernels found in definition order, a stop after the kernels are defined reported with
its line, and a sibling module never shadowing an installed package of the same name."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from paths import REPO

# Runs in a fresh interpreter: loading a file changes sys.path and sys.modules for good.
PROBE = """
import json, sys
from inspector.worker import kernel_file as kf
module, stop = kf.execute_file(sys.argv[1])
kernels = kf.kernels_in(module, sys.argv[1])
print(json.dumps({"kernels": [[k.name, k.line] for k in kernels], "name": module.__name__,
                  "package": module.__package__, "stop": stop and [stop.line, stop.message],
                  "extra": getattr(module, "EXTRA", None)}))
"""


def _load(path) -> dict:
    import json

    run = subprocess.run([sys.executable, "-c", PROBE, str(path)], capture_output=True, text=True, cwd=REPO,
                         timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


def _write(path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))


KERNEL = """
import triton
import triton.language as tl
from .helpers import SCALE


@triton.jit
def first(X, n, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    tl.store(X + i, tl.load(X + i, mask=i < n) * SCALE, mask=i < n)


def _second(X):
    pass


second = triton.jit(_second)
"""


def test_a_module_inside_a_package_keeps_its_relative_imports(tmp_path):
    _write(tmp_path / "lib" / "__init__.py", "")
    _write(tmp_path / "lib" / "helpers.py", "SCALE = 2.0\n")
    _write(tmp_path / "lib" / "ops.py", KERNEL)
    got = _load(tmp_path / "lib" / "ops.py")
    assert got["name"] == "__main__" and got["package"] == "lib"
    assert [k[0] for k in got["kernels"]] == ["first", "second"]
    assert got["kernels"][0][1] == 8  # the def line (decorators above it are not the kernel's line)
    assert got["stop"] is None


def test_a_failure_after_the_kernels_is_a_stop_with_its_line(tmp_path):
    text = KERNEL.replace("from .helpers import SCALE", "SCALE = 1.0") + textwrap.dedent("""
        if __name__ == "__main__":
            import torch
            x = torch.ones(4)
            x.tolist()[9]
        """)
    _write(tmp_path / "tutorial.py", text)
    got = _load(tmp_path / "tutorial.py")
    assert [k[0] for k in got["kernels"]] == ["first", "second"]
    line, message = got["stop"]
    assert line == text.splitlines().index("    x.tolist()[9]") + 1 and "IndexError" in message


def test_a_failure_inside_a_function_the_main_block_calls_is_a_stop(tmp_path):
    # flash-attn-triton's flash_attn_dao.py: its `__main__` test passes `causal` where the file's own
    # forward wants a tensor, which raises inside that function, above the block: still the block's
    text = KERNEL.replace("from .helpers import SCALE", "SCALE = 1.0") + textwrap.dedent("""

        def forward(bias):
            return bias.dtype


        if __name__ == "__main__":
            forward(True)
        """)
    _write(tmp_path / "with_test.py", text)
    got = _load(tmp_path / "with_test.py")
    assert [k[0] for k in got["kernels"]] == ["first", "second"]
    line, message = got["stop"]
    assert line == text.splitlines().index("    return bias.dtype") + 1 and "AttributeError" in message


def test_a_sibling_module_does_not_shadow_an_installed_package(tmp_path):
    # fla's `ops/utils/sinkhorn/gluon.py` sits beside `sinkhorn/tilelang.py`; `import colorsys` here
    # must find the standard library's colorsys, not the sibling `colorsys.py`.
    _write(tmp_path / "pkg" / "__init__.py", "")
    _write(tmp_path / "pkg" / "sub" / "__init__.py", "")
    _write(tmp_path / "pkg" / "sub" / "colorsys.py", "raise ImportError('the sibling was imported')\n")
    _write(tmp_path / "pkg" / "sub" / "kern.py", KERNEL.replace("from .helpers import SCALE", "SCALE = 1.0")
           + "\nimport colorsys\nEXTRA = colorsys.__name__\n")
    got = _load(tmp_path / "pkg" / "sub" / "kern.py")
    assert got["extra"] == "colorsys" and [k[0] for k in got["kernels"]] == ["first", "second"]


NOTEBOOK = '''"""A notebook exported as a script: data made and printed between the definitions."""
import torch
import triton
import triton.language as tl
import a_module_this_machine_lacks

DEVICE = triton.runtime.driver.active.get_active_torch_device()
x = torch.randn(8, device=DEVICE)
print(x.tolist())  # needs values: GPU-free tensors have none


def report(t):
    return float(t.sum())


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


def scale(t):
    assert t.device == DEVICE
    out = torch.empty_like(t)
    scale_kernel[(triton.cdiv(t.numel(), 256),)](t, out, t.numel(), BLOCK=256)
    return out


y = scale(torch.randn(4096, device=DEVICE))
print(report(y))
'''


@pytest.mark.parametrize("target", ["sm_90", "gfx942"])
def test_a_notebook_style_file_runs_past_what_needs_data_or_a_missing_module(tmp_path, target):
    """The statements after one that fails still run, one by one (each failing one skipped): the
    kernel defined after the failures is launched by the file's own later call. The module this
    machine lacks imports as a stand-in (`absent_modules`), named in the log."""
    from inspector.compile.api import inspect_kernel

    path = tmp_path / "notebook.py"
    path.write_text(NOTEBOOK)
    rec = inspect_kernel(path, target=target, use_cache=False)
    assert rec.error is None, rec.error and rec.error.short()
    assert rec.kernel == "scale_kernel" and rec.call_origin == "file"
    lines = NOTEBOOK.splitlines()
    assert lines[rec.stopped["line"] - 1].startswith("print(x.tolist())"), rec.stopped
    assert "a_module_this_machine_lacks (imported at notebook.py line 5)" in rec.log
    assert {p.name: p.value for p in rec.parameters}["n"] == 4096  # the file's own call, not a made-up one


def test_a_heuristics_wrapper_stands_for_its_kernel_and_a_heuristic_that_reads_itself_is_asked_for(sandbox):
    """`scale_kernel = triton.heuristics({...})(_scale)`: the wrapper is the kernel (its heuristics
    fill EVEN); REQUIRES_GRAD, which its heuristic only reads back, is asked for with BLOCK (it
    was a KeyError inside the heuristic), and the values given compile."""
    from inspector.compile.api import inspect_kernel

    path = REPO / "tests" / "fixtures" / "kernel_file_forms" / "heuristics_wrapper.py"
    asked = inspect_kernel(path, target="sm_90", sandbox=sandbox, use_cache=False, make_up=False)
    assert asked.error is not None and asked.error.kind == "missing_constexpr", asked.error
    missing = {m["name"] if isinstance(m, dict) else m for m in asked.error.details["missing"]}
    assert missing == {"REQUIRES_GRAD", "BLOCK"} and asked.kernel in ("", "scale_kernel"), missing
    given = inspect_kernel(path, target="sm_90", consts={"REQUIRES_GRAD": "True", "BLOCK": "256"}, sandbox=sandbox,
                           use_cache=False)
    assert given.error is None and given.kernel == "scale_kernel", given.error
    made = inspect_kernel(path, target="sm_90", sandbox=sandbox, use_cache=False)  # by default: made up
    assert made.error is None and {m["name"] for m in made.made_up} == {"REQUIRES_GRAD", "BLOCK"}, made.error


# Kernels defined inside a builder that imports Triton lazily (as unsloth-zoo's patches do), kept in
# a global and returned; the wrapper builds them before it launches
BUILT_KERNELS = '''
import torch

_kernels = None


def _build_kernels():
    global _kernels
    if _kernels is not None:
        return _kernels
    import triton
    import triton.language as tl

    @triton.jit
    def _double_kernel(x, y, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(y + offs, tl.load(x + offs, mask=offs < n) * 2, mask=offs < n)

    @triton.jit
    def _negate_kernel(x, y, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(y + offs, -tl.load(x + offs, mask=offs < n), mask=offs < n)

    _kernels = (_double_kernel, _negate_kernel)
    return _kernels


def double(x):
    kernel, _ = _build_kernels()
    y = torch.empty_like(x)
    kernel[(triton_cdiv(x.numel(), 512),)](x, y, x.numel(), BLOCK=512)
    return y


def triton_cdiv(a, b):
    return (a + b - 1) // b
'''


def test_kernels_defined_inside_a_builder_function_are_found_and_open(tmp_path, sandbox):
    """Importing the file defines no kernel: its builder (no arguments, `@triton.jit` functions in
    its body) is called once, its kernels are the file's, in the order they are written, and the
    wrapper that unpacks the builder's kernels and launches one gives that one's call."""
    from inspector.compile.api import inspect_kernel

    path = tmp_path / "built.py"
    path.write_text(BUILT_KERNELS)
    rec = inspect_kernel(path, target="sm_90", sandbox=sandbox, use_cache=False, defer=("sass",))
    assert rec.error is None, rec.error and rec.error.short()
    assert rec.kernels_in_file == ["_double_kernel", "_negate_kernel"], rec.kernels_in_file
    assert "defines its kernels inside _build_kernels()" in rec.log
    assert rec.call_origin == "double"  # `kernel, _ = _build_kernels()`: the wrapper launches it
    other = inspect_kernel(path, kernel="_negate_kernel", target="gfx942", sandbox=sandbox, use_cache=False)
    assert other.error is None and other.kernel == "_negate_kernel", other.error and other.error.short()


# A device function whose inline assembly gives two registers (megatron's 128-bit loads give four)
ASM_PAIR_HELPER = '''
import triton
import triton.language as tl


@triton.jit
def low_and_high(x):
    bits = x.to(tl.uint32, bitcast=True)
    return tl.inline_asm_elementwise("mov.b32 {$0, $1}, $2;", "=h,=h,r", args=[bits],
                                     dtype=(tl.uint16, tl.uint16), is_pure=True, pack=1)
'''


def test_a_helper_whose_inline_assembly_returns_a_tuple_is_stored_element_by_element(tmp_path, sandbox):
    """The helper returns one expression, but it is two values: the harness kernel stores each (it
    stored the tuple as one tensor, which Triton refused: "cannot convert [...] to tensor")."""
    from inspector.compile.api import inspect_kernel

    path = tmp_path / "pair.py"
    path.write_text(ASM_PAIR_HELPER)
    rec = inspect_kernel(path, target="sm_90", sandbox=sandbox, use_cache=False, defer=("sass",))
    assert rec.error is None, rec.error and rec.error.short()
    assert rec.call_origin == "harness" and "mov.b32" in rec.stages["ptx"]
    assert sum(p.name.startswith("out_") for p in rec.parameters) == 2, [p.name for p in rec.parameters]
