"""Kernels a file defines inside a builder function rather than at module level.

Some libraries define their `@triton.jit` functions inside a function that imports Triton lazily
and returns (or caches in a global) the kernels it made, so that importing the module costs
nothing without a GPU (unsloth-zoo's `_build_kernels()`: three kernels nested in it, returned as
a tuple and kept in `_kernels`). Importing such a file defines no kernel; calling each builder
that takes no arguments once, as the library's own launch path does first, defines them.
"""

from __future__ import annotations

import ast
import inspect
import types
from typing import Any

from .. import triton_compat as tc

MAX_BUILDERS = 8  # builders called per file (each is the user's code, run once)


def builders(source: str) -> list[str]:
    """Module-level functions that define a `@...jit` function in their body and can be called
    without arguments, in file order."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    found = []
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef):
            continue
        args = node.args
        required = len(args.posonlyargs) + len(args.args) - len(args.defaults) \
            + sum(d is None for d in args.kw_defaults)
        if required:
            continue
        if any(isinstance(inner, ast.FunctionDef) and any(_is_jit(d) for d in inner.decorator_list)
               for inner in ast.walk(node) if inner is not node):
            found.append(node.name)
    return found[:MAX_BUILDERS]


def _is_jit(decorator: ast.expr) -> bool:
    """`@triton.jit`, `@jit`, `@triton.jit(...)`, and autotune/heuristics stacked on one."""
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
    return name in ("jit", "autotune", "heuristics")


def kernel_objects(value: Any, depth: int = 3) -> list[Any]:
    """Kernel objects in what a builder returned or stored: the value itself, or inside tuples,
    lists and dicts (a few levels)."""
    if tc.is_kernel_object(value):
        return [value]
    if depth <= 0:
        return []
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, (tuple, list)):
        return [k for v in value for k in kernel_objects(v, depth - 1)]
    return []


def build(module: types.ModuleType, source: str) -> list[Any]:
    """Call the file's builders (`builders`) and return the kernel objects they returned or left in
    the module's globals, each once. A builder that raises is skipped (its exception is the
    caller's to report if no kernel is found)."""
    made: list[Any] = []
    for name in builders(source):
        fn = getattr(module, name, None)
        if not inspect.isfunction(fn):
            continue
        try:
            made += kernel_objects(fn())
        except Exception:  # noqa: BLE001 - the user's code; another builder may still work
            continue
    for value in list(vars(module).values()):  # `global _kernels` set by a builder
        made += kernel_objects(value)
    once: dict[int, Any] = {}
    for k in made:
        once.setdefault(id(tc.innermost_jit(k)), k)
    return list(once.values())
