"""A standalone kernel file that reproduces one recorded compile: the kernel, the `@triton.jit`
helpers it calls, the module-level values it reads, and an `example(device)` that launches it with
the recorded call (shapes, strides, storage offsets, dtypes, scalars, constexprs, options, grid).

Runs in the worker, right after the compile, from the final call Triton compiled. The kernel is
written without its autotune/heuristics decorators: every constexpr the autotuner or a heuristic
chose is passed explicitly, so the file compiles to the same specialisation. What cannot be
written as source (an object of unknown kind that the kernel reads from its module) is imported
from its module when it has one, else named in a comment.
"""

from __future__ import annotations

import ast
import inspect
import math
import textwrap
from typing import Any

from .. import triton_compat as tc

HEADER = '''"""Reproduces {kernel} as the inspector compiled it{origin}.

Written by Triton Kernel Inspector from {file}; open it in the inspector or run it under a GPU."""
import torch
import triton
import triton.language as tl
'''


def _literal(value: Any) -> str | None:
    """Source text for a plain value, a torch dtype or a Triton dtype; None when there is none."""
    if value is None or isinstance(value, (bool, int, str)):
        return repr(value)
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else f"float({str(value)!r})"
    if isinstance(value, (tuple, list)):
        items = [_literal(v) for v in value]
        if any(i is None for i in items):
            return None
        return ("(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")") if isinstance(value, tuple) \
            else "[" + ", ".join(items) + "]"
    import torch
    import triton.language as tl

    if isinstance(value, torch.dtype):
        return str(value)
    if isinstance(value, tl.dtype):
        # tl.float32 is named "fp32": find the module attribute that is this dtype.
        names = [value.name] + sorted(n for n, v in vars(tl).items() if isinstance(v, tl.dtype) and v == value)
        return next((f"tl.{n}" for n in names if isinstance(getattr(tl, n, None), tl.dtype)), None)
    if isinstance(value, tl.constexpr):
        inner = _literal(value.value)
        return f"tl.constexpr({inner})" if inner is not None else None
    return None


def _tensor(value: Any) -> str | None:
    """`torch.empty_strided(...)` (or an as_strided view for a storage offset) for a tensor."""
    import torch

    if isinstance(value, torch.Tensor):
        shape, stride, offset = list(value.shape), list(value.stride()), value.storage_offset()
        if offset:
            size = offset + sum((s - 1) * st for s, st in zip(shape, stride) if s > 0) + 1
            return (f"torch.empty({size}, dtype={value.dtype}, device=device)"
                    f".as_strided({tuple(shape)}, {tuple(stride)}, {offset})")
        return f"torch.empty_strided({tuple(shape)}, {tuple(stride)}, dtype={value.dtype}, device=device)"
    if type(value).__name__ == "MockTensor":  # kernel.warmup(torch.float16, ...)
        return f"torch.empty({list(getattr(value, 'shape', [1]))}, dtype={value.dtype}, device=device)"
    if hasattr(value, "base") and hasattr(value, "block_shape"):  # a host TensorDescriptor
        base = _tensor(value.base)
        if base is None:
            return None
        return (f"TensorDescriptor({base}, {list(value.shape)}, {list(value.strides)}, "
                f"{list(value.block_shape)})")
    return None


def _jit_function(value: Any) -> Any:
    """A `@triton.jit` helper as a JITFunction (under TRITON_INTERPRET=1 `triton.jit` makes an
    InterpretedFunction; a run captured that way is written out like any other), else None."""
    if isinstance(value, tc.JITFunction):
        return value
    if type(value).__name__ == "InterpretedFunction":
        from ..triton_compat.launch_hooks import as_jit

        return as_jit(value)
    return None


class _Writer:
    """Collects the definitions the kernel needs, each once, in an order that defines before use."""

    def __init__(self) -> None:
        self.imports: list[str] = []
        self.values: list[str] = []
        self.functions: list[str] = []
        self.done: set[str] = set()

    def _use(self, name: str, value: Any, module_name: str | None) -> None:
        import types

        if name in self.done or name in ("tl", "triton", "torch"):
            return
        self.done.add(name)
        jit = _jit_function(value)
        if jit is not None:
            self.function(jit, name)
            return
        if isinstance(value, types.ModuleType):
            line = f"import {value.__name__}" if value.__name__.rpartition(".")[2] == name and "." not in \
                value.__name__ else f"import {value.__name__} as {name}"
            self.imports.append(line)
            return
        literal = _literal(value)
        if literal is not None:
            self.values.append(f"{name} = {literal}")
            return
        origin = getattr(value, "__module__", None)
        own_name = getattr(value, "__name__", None)
        if origin and origin != "__main__" and own_name:
            self.imports.append(f"from {origin} import {own_name}" + (f" as {name}" if own_name != name else ""))
        elif inspect.isfunction(value):
            try:
                self.functions.append(textwrap.dedent(inspect.getsource(value)))
            except (OSError, TypeError):
                self.values.append(f"# {name}: a function whose source is not available")
        else:
            self.values.append(f"# {name}: {type(value).__name__} from {module_name or 'the kernel file'}, "
                               "not reproducible as source")

    def function(self, fn: Any, bound_name: str | None = None) -> None:
        """A @triton.jit function's source, and what its body reads from its module."""
        src = textwrap.dedent(fn.src)
        globals_ = getattr(fn.fn, "__globals__", {})
        try:
            tree = ast.parse(src)
        except SyntaxError:
            tree = None
        if tree is not None:
            local = {n.arg for n in ast.walk(tree) if isinstance(n, ast.arg)}
            for node in ast.walk(tree):
                if isinstance(node, ast.Name) and node.id in globals_ and node.id not in local:
                    self._use(node.id, globals_[node.id], globals_.get("__name__"))
        options = []
        if getattr(fn, "do_not_specialize", None):
            options.append(f"do_not_specialize={list(fn.do_not_specialize)!r}")
        if getattr(fn, "do_not_specialize_on_alignment", None):
            options.append(f"do_not_specialize_on_alignment={list(fn.do_not_specialize_on_alignment)!r}")
        if getattr(fn, "noinline", False):
            options.append("noinline=True")
        jit = "gluon.jit" if tc.is_gluon(fn) else "triton.jit"
        if jit == "gluon.jit" and "from triton.experimental import gluon" not in self.imports:
            self.imports.append("from triton.experimental import gluon")
        decorator = f"@{jit}({', '.join(options)})" if options else f"@{jit}"
        text = f"{decorator}\n{src.rstrip()}\n"
        if bound_name and bound_name != fn.__name__:
            text += f"\n\n{bound_name} = {fn.__name__}\n"
        self.functions.append(text)


def standalone_file(fn: Any, final: Any, grid: list[int] | None, file: str, origin: str = "") -> str:
    """The reproducer's text for JITFunction `fn` called as `final` (a triton_compat.FinalCall)."""
    writer = _Writer()
    writer.done.add(fn.__name__)
    writer.function(fn)
    lines = ["def example(device):"]
    call: list[str] = []
    by_name = False
    for p in tc.signature_params(fn):
        if p.name not in final.args:
            continue
        value = final.args[p.name]
        text = _tensor(value)
        if text is not None:
            if text.startswith("torch."):  # a plain tensor: real data where carried, else made-up values
                text = f"_filled({p.name!r}, {text})"
            lines.append(f"    {p.name} = {text}")
            if text.startswith("TensorDescriptor"):
                writer.imports.append("from triton.tools.tensor_descriptor import TensorDescriptor")
            text = p.name
        else:
            text = _literal(value)
        if text is None:
            text = f"None  # {p.name}: {type(value).__name__} not reproducible as source"
        # Constexprs by name, and every argument after one (a positional one may not follow).
        by_name = by_name or p.is_constexpr
        call.append(f"{p.name}={text}" if by_name else text)
    for key, value in final.options.items():
        literal = _literal(value)
        if literal is not None and value is not None:
            call.append(f"{key}={literal}")
    grid_text = repr(tuple(grid)) if grid else "(1,)"
    lines.append(f"    {fn.__name__}[{grid_text}](")
    for c in call:  # a note on a value goes after its comma
        code, _, note = c.partition("  # ")
        lines.append(f"        {code},  # {note}" if note else f"        {code},")
    lines.append("    )")
    said = {"file": "launched by the file's own code", "example": "launched by example()",
            "signature": "called as built from its signature", "": ""}.get(origin, f"launched by {origin}()")
    parts = [HEADER.format(kernel=fn.__name__, origin=f", {said}" if said else "", file=file)]
    if writer.imports:
        parts.append("\n".join(dict.fromkeys(writer.imports)) + "\n")
    if writer.values:
        parts.append("\n".join(writer.values) + "\n")
    parts.extend("\n" + f for f in writer.functions)  # helpers come before their callers
    if any("_filled(" in line for line in lines):
        from ..launch_data import FILL_SOURCE

        parts.append(FILL_SOURCE)
    parts.append("\n" + "\n".join(lines) + "\n")
    return "\n".join(parts)
