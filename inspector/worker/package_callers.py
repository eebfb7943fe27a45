"""Finding a kernel's launcher elsewhere in its package, when its own file launches nothing.

Libraries often keep kernels and the code that launches them apart: flashinfer's
`flashinfer/triton/kernels/norm.py` holds `rms_norm_kernel`, and `flashinfer/triton/norm.py` the
`rms_norm(...)` that sizes and launches it. A user opening the kernel file expects the call that
library code really makes. So when nothing in the file launched the kernel, the modules of the
same top-level package whose source imports this file's module (absolutely or relatively; found by
reading their text, importing nothing) are imported as part of the package, and their wrappers
are called as the file's own would be (`wrapper_calls`).

Such a module imports the kernel's module under its real name, which makes a second kernel object
from the same source (the file itself ran as `__main__`); the caller compiles that one.
"""

from __future__ import annotations

import ast
import importlib
import os
import sys
import types
from typing import Any, NamedTuple

from ..compile.project import ModuleLocation
from .wrapper_calls import WrapperResult, call_wrappers

MAX_FILES = 3000  # a package larger than this is searched this far (in path order)
MAX_IMPORTERS = 6  # importers tried, nearest first


class PackageLaunch(NamedTuple):
    """What a launcher in the package did: the module and wrapper that launched the kernel (with
    the kernel object it launched), or the last failure."""

    module: str | None
    result: WrapperResult
    kernel: Any = None


def _imported_modules(tree: ast.AST, name: str, is_package: bool) -> set[str]:
    """Dotted names a module's source imports (each `from a.b import c` as `a.b` and `a.b.c`)."""
    package = name if is_package else name.rpartition(".")[0]
    out: set[str] = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Import):
            out.update(a.name for a in n.names)
        elif isinstance(n, ast.ImportFrom):
            if n.level:
                base = package.split(".")
                base = base[: len(base) - (n.level - 1)] if n.level > 1 else base
                source = ".".join(base + ([n.module] if n.module else []))
            else:
                source = n.module or ""
            out.add(source)
            out.update(f"{source}.{a.name}" for a in n.names)
    return out


def importers(loc: ModuleLocation, limit: int = MAX_FILES) -> list[str]:
    """Modules of the file's top-level package that import it, nearest (same folder) first."""
    if not loc.package:
        return []
    top = loc.name.split(".")[0]
    top_dir = os.path.join(loc.import_root, top)
    here = os.path.dirname(os.path.join(loc.import_root, *loc.name.split(".")))
    found: list[tuple[int, str]] = []
    seen = 0
    leaf = loc.name.rsplit(".", 1)[-1].encode()
    for folder, dirs, files in os.walk(top_dir):
        dirs[:] = sorted(d for d in dirs if not d.startswith((".", "__pycache__")))
        for f in sorted(files):
            if not f.endswith(".py") or seen >= limit:
                continue
            seen += 1
            path = os.path.join(folder, f)
            rel = os.path.relpath(path, loc.import_root)[:-3].split(os.sep)
            is_package = rel[-1] == "__init__"
            name = ".".join(rel[:-1] if is_package else rel)
            if name == loc.name:
                continue
            try:
                with open(path, "rb") as fh:
                    data = fh.read()
                if leaf not in data:  # cheap: a module that never names it cannot import it
                    continue
                tree = ast.parse(data)
            except (OSError, SyntaxError, ValueError):
                continue
            if loc.name in _imported_modules(tree, name, is_package):
                distance = len(os.path.relpath(folder, here).split(os.sep)) if folder != here else 0
                found.append((distance, name))
    return [name for _, name in sorted(found)][:MAX_IMPORTERS]


def launch_from_package(loc: ModuleLocation, kernel_name: str, path: str) -> PackageLaunch:
    """Import the modules that import the kernel's module and call their wrappers of
    `kernel_name` until one launches it. Failures are returned, not raised."""
    last = PackageLaunch(None, WrapperResult(None))
    for name in importers(loc):
        try:
            module = importlib.import_module(name)
        except Exception as e:  # noqa: BLE001 - a module of the user's package that cannot load here
            last = PackageLaunch(name, WrapperResult(None, e, f"import {name}"))
            continue
        own = sys.modules.get(loc.name)
        kernel = getattr(own, kernel_name, None) if isinstance(own, types.ModuleType) else None
        if kernel is None:
            continue
        result = call_wrappers(module, kernel, path, module_name=name)
        if result.launched_by:
            return PackageLaunch(name, result, kernel)
        if result.error is not None:
            last = PackageLaunch(name, result)
    return last
