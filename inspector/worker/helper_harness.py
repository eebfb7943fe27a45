"""Opening a device function (a `@triton.jit` helper that returns a value) on its own.

Files of activation functions, math helpers or tile-index helpers (flash-attn's
`ops/triton/k_activations.py`, mamba's `softplus.py`) define no kernel: Triton compiles a helper only
inlined into a kernel that calls it. A user opening `gelu` wants to see what it compiles to, so the
inspector writes the smallest kernel that calls it, and says so:

    @triton.jit
    def gelu__in_a_kernel(in_x, out_0, n, BLOCK: tl.constexpr = 1024):
        offs_ = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask_ = offs_ < n
        x = tl.load(in_x + offs_, mask=mask_, other=1.0)
        r = gelu(x)
        tl.store(out_0 + offs_, r, mask=mask_)

Each argument the helper reads as a value is loaded from a buffer of its own (fp32 by default, as
activations are computed; `--arg in_x=bf16` changes it), one it uses as a pointer is passed as a
pointer, one added to a pointer gets the block's offsets, one passed as `mask=` the block's mask, one
passed as `eviction_policy=` (or another string option) an empty string, one with a default its
default; constexpr
parameters stay constexprs of the harness (asked for when they have no default), and one named or
compared like a dtype defaults to `tl.float16`. A tuple result is stored element by element. The
helper's own lines keep their source locations, so the stages link to the user's file.
"""

from __future__ import annotations

import ast
import importlib.util
import os
import textwrap
from typing import Any

from .. import triton_compat as tc
from .kernel_file import KernelInfo

BLOCK = 1024
DTYPE_PARAMETER = ("dtype", "_dtype", "dtype_", "_ty")


def _function_ast(jit: Any) -> ast.FunctionDef | None:
    try:
        tree = ast.parse(textwrap.dedent(jit.src))
    except (SyntaxError, AttributeError):
        return None
    return next((n for n in tree.body if isinstance(n, ast.FunctionDef)), None)


def returns_value(jit: Any) -> int:
    """How many values the function returns (0: a kernel; 2 or more: a tuple)."""
    node = _function_ast(jit)
    if node is None:
        return 0
    counts = [_values_of(n.value) for n in ast.walk(node) if isinstance(n, ast.Return) and n.value is not None]
    return max(counts, default=0)


def _values_of(value: ast.expr) -> int:
    """How many values an expression returned gives: a tuple's elements, or the outputs of inline
    assembly with a tuple of dtypes (`tl.inline_asm_elementwise(..., dtype=(tl.uint32,) * 4)`
    gives four: megatron's 128-bit loads)."""
    if isinstance(value, ast.Tuple):
        return len(value.elts)
    if isinstance(value, ast.Call) and (value.func.attr if isinstance(value.func, ast.Attribute)
                                        else getattr(value.func, "id", "")) == "inline_asm_elementwise":
        dtype = next((k.value for k in value.keywords if k.arg == "dtype"), value.args[3] if len(value.args) > 3 else None)
        if isinstance(dtype, ast.Tuple):
            return len(dtype.elts)
        if isinstance(dtype, ast.BinOp) and isinstance(dtype.op, ast.Mult) and isinstance(dtype.left, ast.Tuple) \
                and isinstance(dtype.right, ast.Constant) and isinstance(dtype.right.value, int):
            return len(dtype.left.elts) * dtype.right.value
    return 1


# Keyword arguments of loads and stores that take a string (a constexpr), not a tensor.
STRING_OPTIONS = {"eviction_policy", "cache_modifier", "padding_option", "volatile"}


def _keyword_uses(node: ast.FunctionDef) -> dict[str, str]:
    """Parameters passed as a keyword argument of a call (`mask=mask`): name -> keyword."""
    params = {a.arg for a in node.args.args}
    return {k.value.id: k.arg for n in ast.walk(node) if isinstance(n, ast.Call) for k in n.keywords
            if k.arg and isinstance(k.value, ast.Name) and k.value.id in params}


def _dtype_like(name: str, node: ast.FunctionDef) -> bool:
    """A parameter named like a dtype, or compared with `tl.<dtype>`."""
    if name == "dtype" or name.endswith(DTYPE_PARAMETER):
        return True
    for n in ast.walk(node):
        if isinstance(n, ast.Compare) and isinstance(n.left, ast.Name) and n.left.id == name \
                and any(isinstance(c, ast.Attribute) and isinstance(c.value, ast.Name) and c.value.id == "tl"
                        for c in n.comparators):
            return True
    return False


def _offset_parameters(node: ast.FunctionDef, pointers: set[str]) -> set[str]:
    """Parameters added to a pointer parameter (`ptr + offs`): offsets, not values."""
    params = {a.arg for a in node.args.args}
    found: set[str] = set()
    for n in ast.walk(node):
        if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Add):
            names = {x.id for x in ast.walk(n) if isinstance(x, ast.Name)}
            if names & pointers:
                found |= (names & params) - pointers
    return found


def harness_source(info: KernelInfo) -> tuple[str, str]:
    """(source, kernel name) of the kernel that calls helper `info`."""
    from .kernel_params import parameter_usage

    jit = info.jit
    node = _function_ast(jit)
    usage = parameter_usage(jit)
    outputs = returns_value(jit)
    offsets = _offset_parameters(node, usage.pointers) if node is not None else set()
    offset_bases = {n.id for b in ast.walk(node) if isinstance(b, ast.BinOp) and isinstance(b.op, ast.Add)
                    for n in ast.walk(b) if isinstance(n, ast.Name) and n.id in usage.pointers} if node else set()
    runtime: list[str] = []
    constexprs: list[str] = []
    body: list[str] = []
    call: list[str] = []
    keywords = _keyword_uses(node) if node is not None else {}
    for p in tc.signature_params(jit):
        name = p.name
        if keywords.get(name) == "mask":  # `tl.load(ptrs, mask=mask)`: the harness's own mask
            call.append("mask_")
        elif keywords.get(name) in STRING_OPTIONS:  # eviction_policy=, cache_modifier=: a string constexpr
            constexprs.append(f"{name}: tl.constexpr = \"\"")
            call.append(name)
        elif p.has_default and not p.is_constexpr:
            continue  # the helper's own default (`other=0.`)
        elif p.is_constexpr or (node is not None and _dtype_like(name, node)):
            if p.has_default:
                constexprs.append(f"{name}: tl.constexpr = {p.default!r}")
            elif node is not None and _dtype_like(name, node):
                constexprs.append(f"{name}: tl.constexpr = tl.float16")
            else:
                constexprs.append(f"{name}: tl.constexpr")
            call.append(name)
        elif name in usage.pointers:
            runtime.append(f"in_{name}")
            # a pointer the helper offsets itself is passed as it is; one it loads from directly is a
            # block of pointers (`load_ptr(ptrs, mask)`)
            call.append(f"in_{name}" if name in offset_bases else f"in_{name} + offs_")
        elif name in offsets:
            call.append("offs_")
        else:
            runtime.append(f"in_{name}")
            body.append(f"    {name} = tl.load(in_{name} + offs_, mask=mask_, other=1.0)")
            call.append(name)
    outs = [f"out_{i}" for i in range(max(outputs, 1))]
    kernel = f"{jit.__name__}__in_a_kernel"
    stores = (["    tl.store(out_0 + offs_, r, mask=mask_)"] if outputs <= 1 else
              [f"    tl.store(out_{i} + offs_, r[{i}], mask=mask_)" for i in range(outputs)])
    lines = [
        '"""Written by the Triton Kernel Inspector: the smallest kernel that calls a device function."""',
        "import triton",
        "import triton.language as tl",
        "",
        "",
        "@triton.jit",
        f"def {kernel}({', '.join([*runtime, *outs, 'n', *[c for c in constexprs if '=' not in c], *[c for c in constexprs if '=' in c], f'BLOCK: tl.constexpr = {BLOCK}'])}):",
        "    offs_ = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)",
        "    mask_ = offs_ < n",
        *body,
        f"    r = {jit.__name__}({', '.join(call)})",
        *stores,
        "",
    ]
    return "\n".join(lines), kernel


def harness_for(info: KernelInfo, workdir: str) -> KernelInfo:
    """The harness kernel of helper `info`, written under `workdir` and imported, with the helper
    (the file's own object) bound in its globals."""
    source, kernel = harness_source(info)
    path = os.path.join(workdir, f"{kernel}.py")
    with open(path, "w", encoding="utf-8") as f:
        f.write(source)
    spec = importlib.util.spec_from_file_location(f"_inspector_harness_{kernel}", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    setattr(module, info.jit.__name__, info.jit)  # the file's own helper, which the harness calls by name
    spec.loader.exec_module(module)
    harness = getattr(module, kernel)
    return KernelInfo(info.name, harness, info.line)
