"""Finding the kernel files a guard run covers, and which of a file's kernels are entries.

Everything here reads files as text (`ast`), never imports them: the launches themselves are
recorded by the sandboxed compile (`inspector.compile.api.inspect_kernel`), which runs each file
as the app does. What is decided here is only which files to hand it, and which of the kernels a
record lists (`Inspection.kernels_in_file`) are entry points rather than `@triton.jit` helpers
that other kernels of the file call (the same rule as `inspector.worker.kernel_file.entry_kernels`).
"""

from __future__ import annotations

import ast
import functools
import os
from dataclasses import dataclass

from ..compile.api import resolve_kernel_file

# Folders never walked: VCS data, caches, virtual environments, build output.
SKIP_DIRS = {".git", ".hg", ".svn", "__pycache__", ".venv", "venv", "env", "build", "dist", "node_modules",
             ".tox", ".nox", ".mypy_cache", ".pytest_cache", "site-packages"}


class DiscoveryError(Exception):
    """A PATH argument that names nothing the guard can read."""


@dataclass
class KernelDef:
    """A `@triton.jit` function found in a file's text."""

    name: str
    line: int  # the `def` line
    uses: set[str]  # names its body refers to
    returns_value: bool = False  # `return <expr>`: a device function, which no launch can call


def _is_jit_decorator(node: ast.expr) -> bool:
    """`@triton.jit`, `@jit`, `@triton.jit(...)`, `@triton.autotune(...)`, `@triton.heuristics(...)`."""
    target = node.func if isinstance(node, ast.Call) else node
    name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
    return name in ("jit", "autotune", "heuristics")


@functools.lru_cache(maxsize=256)
def kernel_defs(source: str) -> dict[str, KernelDef]:
    """The `@triton.jit` functions of a file's text, by name (empty when it does not parse).
    Remembered per text: every kernel and target of a file asks for the same (do not mutate)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return {}
    out: dict[str, KernelDef] = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
                _is_jit_decorator(d) for d in node.decorator_list):
            uses = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
            uses |= {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)}
            returns = any(isinstance(n, ast.Return) and n.value is not None for n in ast.walk(node))
            out[node.name] = KernelDef(node.name, node.lineno, uses - {node.name}, returns)
    return out


def entry_kernels(source: str, kernels: list[str]) -> list[str]:
    """The kernels of `kernels` (a record's `kernels_in_file`) that can be launched: not a
    function that returns a value (a device function, e.g. a library of `@triton.jit` helpers),
    and not one another kernel of the file calls or passes as a combine function (unless every
    one is used by another). A file of device functions alone has none."""
    defs = kernel_defs(source)
    launchable = [k for k in kernels if not (k in defs and defs[k].returns_value)]
    used = {k for k in launchable if k in defs and any(k in d.uses for other, d in defs.items() if other != k)}
    return [k for k in launchable if k not in used] or launchable


def might_hold_kernels(path: str) -> bool:
    """Whether a .py file's text can define a Triton kernel (a cheap filter before compiling)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError:
        return False
    return "jit" in text and "triton" in text


def kernel_files(paths: list[str]) -> list[str]:
    """Absolute paths of the kernel files under `paths`, sorted and without duplicates.

    Each PATH is a .py file (always kept, so a file whose kernels vanished is still reported), a
    folder (walked; .py files that mention `triton` and `jit`), or an importable module or
    package name (`liger_kernel.ops`, found on sys.path without importing it)."""
    found: set[str] = set()
    for given in paths:
        path = given
        if not os.path.exists(path):
            resolved = resolve_kernel_file(given)
            if not os.path.exists(resolved):
                raise DiscoveryError(f"{given}: no such file, folder or importable module; give a path to a .py "
                                     "file or a folder, or a module name found on PYTHONPATH")
            path = os.path.dirname(resolved) if os.path.basename(resolved) == "__init__.py" else resolved
        path = os.path.abspath(path)
        if os.path.isfile(path):
            if not path.endswith(".py"):
                raise DiscoveryError(f"{given}: not a Python file")
            found.add(path)
            continue
        for folder, dirs, files in os.walk(path):
            dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("."))
            for name in files:
                full = os.path.join(folder, name)
                if name.endswith(".py") and might_hold_kernels(full):
                    found.add(full)
    return sorted(found)
