"""Arguments made from a compiled specialisation, for kernels whose launch arguments were not seen
(Inductor's, launched by its own launcher; a tritonparse trace without launch events).

Each value specialises exactly as the recorded compile did: a pointer of the signature's dtype,
16-byte aligned when the compile had `tt.divisibility=16` on it and one element off otherwise;
an integer divisible by 16 (or not) of the signature's width; constants and constexprs as
recorded. Shapes are not known, so tensors are small: enough to compile, not to run.
"""

from __future__ import annotations

import ast
import textwrap
from typing import Any

# Triton's pointer element types -> torch dtype names.
TORCH_DTYPES = {
    "fp32": "float32",
    "f32": "float32",
    "fp16": "float16",
    "f16": "float16",
    "bf16": "bfloat16",
    "fp64": "float64",
    "f64": "float64",
    "i1": "bool",
    "i8": "int8",
    "i16": "int16",
    "i32": "int32",
    "i64": "int64",
    "u8": "uint8",
    "u16": "uint16",
    "u32": "uint32",
    "u64": "uint64",
    "fp8e4nv": "float8_e4m3fn",
    "fp8e5": "float8_e5m2",
    "fp8e4b8": "float8_e4m3fnuz",
    "fp8e5b16": "float8_e5m2fnuz",
}
# Integer scalars: (divisible by 16, not divisible) in the range Triton types as each width.
INTEGERS = {"i32": (4096, 4097), "i64": (2**33, 2**33 + 1), "u64": (2**63 + 16, 2**63 + 1)}


class UnsupportedArgument(ValueError):
    """A parameter type that cannot be made from its specialisation alone (tensor descriptors)."""


def _divisible(attrs: Any) -> bool:
    for a in attrs or []:
        name, value = a.split("=", 1) if isinstance(a, str) else (a[0], a[1])
        if str(name).strip() == "tt.divisibility" and int(value) >= 16:
            return True
    return False


def argument_value(ty: str, attrs: Any, constant: Any = None, has_constant: bool = False) -> Any:
    """A value that a launch specialises as `ty` with `attrs` (torch tensors on the CPU)."""
    import torch

    if has_constant:
        return constant
    if ty.startswith("*"):
        name = TORCH_DTYPES.get(ty.lstrip("*k"))
        dtype = getattr(torch, name, None) if name else None
        if dtype is None:
            raise UnsupportedArgument(f"pointer type {ty}")
        if _divisible(attrs):
            return torch.empty(16, dtype=dtype)
        return torch.empty(17, dtype=dtype)[1:]  # one element off: not 16-byte aligned
    if ty in INTEGERS:
        return INTEGERS[ty][0 if _divisible(attrs) else 1]
    if ty == "i1":
        return True
    if ty in ("fp32", "f32", "fp16", "bf16"):
        return 0.5
    raise UnsupportedArgument(f"parameter type {ty}")


def _constant_value(value: Any) -> Any:
    """A recorded constant as a launch passes it (dtype names become Triton dtypes)."""
    value = getattr(value, "value", value)
    if isinstance(value, list):
        return tuple(_constant_value(v) for v in value)
    return value


def meta_proxy(value: Any) -> Any:
    """What a reproducer needs of a launch argument, holding no memory: a tensor as a meta tensor of
    the same dtype, shape, strides and storage offset; a plain value as itself; None otherwise."""
    import torch

    if isinstance(value, torch.Tensor):
        shape, stride, offset = list(value.shape), list(value.stride()), int(value.storage_offset())
        size = offset + sum((n - 1) * st for n, st in zip(shape, stride) if n > 0) + 1
        return torch.empty(size, dtype=value.dtype, device="meta").as_strided(shape, stride, offset)
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return None


def _by_name(names: list[str], d: dict) -> dict[str, Any]:
    """Constants or attributes keyed by parameter path ((3,), "(3,)") or name, by name."""
    out = {}
    for key, value in (d or {}).items():
        if isinstance(key, str) and key.startswith("("):
            key = ast.literal_eval(key)
        if isinstance(key, tuple) and len(key) == 1 and isinstance(key[0], int) and key[0] < len(names):
            key = names[key[0]]
        out[str(key)] = value
    return out


def launch_call(
    jit: Any, signature: dict, constants: dict, attrs: dict, options: dict, proxies: dict, grid: Any
) -> Any:
    """A triton_compat.FinalCall from a launch's own arguments (`meta_proxy`s by name), or None
    when they do not give the compiled specialisation back (alignment, divisibility, constants)."""
    from .. import triton_compat as tc

    names = list(jit.arg_names)
    consts, attributes = _by_name(names, constants), _by_name(names, attrs)
    args: dict[str, Any] = {}
    for p in jit.params:
        ty = str(signature.get(p.name, "constexpr"))
        value = proxies.get(p.name, p.default if p.has_default else None)
        if ty == "constexpr":
            if p.name in consts:
                args[p.name] = _constant_value(consts[p.name])
            continue
        div = _divisible(attributes.get(p.name))
        if ty.startswith("*"):
            if not hasattr(value, "storage_offset"):
                return None
            if (value.storage_offset() * value.element_size() % 16 == 0) != div:
                return None
        elif ty in INTEGERS:
            if not isinstance(value, int) or isinstance(value, bool) or (value % 16 == 0) != div:
                return None
        elif value is None:
            return None
        args[p.name] = value
    grid_list = [int(g) for g in grid] if isinstance(grid, (tuple, list)) else None
    return tc.FinalCall(
        args=args, options={k: v for k, v in options.items() if v is not None}, grid=grid_list
    )


def synthetic_call(jit: Any, signature: dict, constants: dict, attrs: dict, options: dict) -> Any:
    """A triton_compat.FinalCall for `jit` that compiles to the given specialisation. `constants`
    and `attrs` are keyed by parameter path ((3,)) or name, as Triton or a trace gives them."""
    from .. import triton_compat as tc

    names = list(jit.arg_names)
    consts, attributes = _by_name(names, constants), _by_name(names, attrs)
    args: dict[str, Any] = {}
    for p in jit.params:
        ty = str(signature.get(p.name, "constexpr"))
        has = p.name in consts
        if ty == "constexpr" and not has:
            continue  # a constexpr with a default the compile did not record
        args[p.name] = argument_value(ty, attributes.get(p.name), _constant_value(consts.get(p.name)), has)
    return tc.FinalCall(args=args, options={k: v for k, v in options.items() if v is not None}, grid=None)


# Imports a reproducer keeps from a whole module's text: only what any machine with Triton has.
SAFE_IMPORT_ROOTS = ("triton", "torch", "math", "numpy")


def _is_jit(fn: ast.FunctionDef) -> bool:
    return any("jit" in ast.unparse(d) for d in fn.decorator_list)


def _module_parts(code: str, name: str) -> tuple[ast.FunctionDef, list[str], list[str]]:
    """From a whole module's text: the kernel's def, the `@triton.jit` helpers it calls (each
    once, callees first) and the module's imports of Triton/torch/math/numpy."""
    text = textwrap.dedent(code)
    tree = ast.parse(text)
    lines = text.splitlines()
    functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    kernel = functions[name]
    helpers: list[str] = []
    seen = {name}

    def visit(fn: ast.FunctionDef) -> None:
        for node in ast.walk(fn):
            if isinstance(node, ast.Name) and node.id in functions and node.id not in seen:
                seen.add(node.id)
                helper = functions[node.id]
                if _is_jit(helper):
                    visit(helper)
                    helpers.append("@triton.jit\n" + "\n".join(lines[helper.lineno - 1 : helper.end_lineno]))

    visit(kernel)
    imports = []
    for node in tree.body:
        if isinstance(node, ast.Import) and all(
            a.name.split(".")[0] in SAFE_IMPORT_ROOTS for a in node.names
        ):
            imports.append(ast.unparse(node))
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in SAFE_IMPORT_ROOTS:
            imports.append(ast.unparse(node))
    return kernel, helpers, imports


def text_reproducer(
    code: str,
    name: str,
    signature: dict[str, str],
    constants: dict[str, Any],
    attrs: dict[str, Any],
    options: dict[str, Any],
    grid: list[int] | None,
    origin: str,
    whole_module: bool = False,
) -> str:
    """A standalone kernel file from text alone (a trace): the kernel's code under a plain
    `@triton.jit` and an example() whose launch compiles to the recorded specialisation. With
    `whole_module` (`code` is the kernel's whole file), the `@triton.jit` helpers it calls and the
    file's Triton/torch imports come along."""
    from ..worker.reproduce import _literal, _tensor

    helpers: list[str] = []
    imports: list[str] = []
    if whole_module:
        fn, helpers, imports = _module_parts(code, name)
    else:
        fn = next(
            n
            for n in ast.parse(textwrap.dedent(code)).body
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
        )
    lines = textwrap.dedent(code).splitlines()
    body = "\n".join(lines[fn.lineno - 1 : fn.end_lineno])
    constexpr = {
        a.arg for a in fn.args.args if a.annotation is not None and "constexpr" in ast.unparse(a.annotation)
    }
    example = ["def example(device):"]
    call = []
    for a in fn.args.args:
        p = a.arg
        ty = signature.get(p, "constexpr")
        has = p in constants
        if ty == "constexpr" and not has:
            continue
        value = argument_value(ty, attrs.get(p), _constant_value(constants.get(p)), has)
        text = _tensor(value)
        if text is not None:
            example.append(f"    {p} = {text}")
            text = p
        else:
            text = _literal(value) or "None"
        call.append(f"{p}={text}" if p in constexpr else text)
    call += [f"{k}={_literal(v)}" for k, v in options.items() if v is not None and _literal(v) is not None]
    example.append(f"    {name}[{tuple(grid) if grid else (1,)!r}](")
    example += [f"        {c}," for c in call]
    example.append("    )")
    header = (
        f'"""Reproduces {name} as {origin} recorded it.\n\nWritten by Triton Kernel Inspector'
        + (
            '."""\n'
            if whole_module
            else "; the trace holds only the kernel's own source, so helpers it "
            'calls are missing (record with TRITON_FULL_PYTHON_SOURCE=1 to keep its whole file)."""\n'
        )
        + "\n".join(
            dict.fromkeys(["import torch", "import triton", "import triton.language as tl", *imports])
        )
        + "\n"
    )
    parts = [header, *helpers, f"@triton.jit\n{body.rstrip()}", "\n".join(example)]
    return "\n\n\n".join(p.rstrip() for p in parts) + "\n"
