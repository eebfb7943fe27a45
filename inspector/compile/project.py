"""Where a kernel file sits in its project, found without importing anything.

Used by the caller (to resolve a module name, fingerprint the package for the cache, and tell the
sandbox which folder a compile must see) and by the worker (to import the file as part of its
package: `register_namespace_chain`). Never imports the user's code, torch or Triton.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass

from ..files import sha256

PROJECT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg")


@dataclass
class ModuleLocation:
    """Where a kernel file sits in its project: what goes on sys.path and the module's name."""

    import_root: str  # the folder on sys.path from which `name` imports
    name: str  # dotted module name ("liger_kernel.ops.rms_norm"), or the bare stem
    project_root: str  # the folder the compile must see: a pyproject.toml/setup.py folder, else import_root

    @property
    def package(self) -> str:
        return self.name.rpartition(".")[0]


def _nearest_project(folder: str, stop: str | None = None) -> str | None:
    d = folder
    while True:
        if any(os.path.isfile(os.path.join(d, m)) for m in PROJECT_MARKERS):
            return d
        parent = os.path.dirname(d)
        if parent == d or d == stop:
            return None
        d = parent


def locate(path: str, root: str | None = None) -> ModuleLocation:
    """Find the package a file belongs to, so that it imports as part of it (relative imports,
    `from package.utils import ...`). A chain of `__init__.py` folders gives the package; without
    one, a project root (`root`, else the nearest folder with pyproject.toml/setup.py/setup.cfg)
    makes the file a namespace-package module under it (under `src/` for a src layout). A chain
    continues above a folder without `__init__.py` up to `root`, or to the folder the file's
    absolute imports name (`_above_the_chain`)."""
    path = os.path.abspath(path)
    folder = os.path.dirname(path)
    stem = os.path.splitext(os.path.basename(path))[0]
    parts = [stem]
    d = folder
    while os.path.isfile(os.path.join(d, "__init__.py")) and os.path.dirname(d) != d:
        parts.insert(0, os.path.basename(d))
        d = os.path.dirname(d)
    import_root = d
    if len(parts) > 1:
        import_root, parts = _above_the_chain(path, import_root, parts, root)
    project = os.path.abspath(root) if root else _nearest_project(import_root)
    if len(parts) == 1 and project and folder != project and folder.startswith(project + os.sep):
        base = os.path.join(project, "src") if folder.startswith(os.path.join(project, "src") + os.sep) else project
        rel = os.path.relpath(path, base)[:-3].split(os.sep)
        if all(p.isidentifier() for p in rel):
            import_root, parts = base, rel
    if len(parts) == 1 and not project:
        import_root, parts = _namespace_package(path, import_root, parts)
    if not all(p.isidentifier() for p in parts):
        import_root, parts = folder, [stem]
    return ModuleLocation(import_root, ".".join(parts), project or import_root)


def _above_the_chain(path: str, import_root: str, parts: list[str], root: str | None) -> tuple[str, list[str]]:
    """Where an `__init__.py` chain stops below the package's top, the rest of the way up: to
    `root` when it lies above (`--root`), else to the ancestor folder that an absolute import of
    the file names and that is installed nowhere else. Published layouts do this: megatron-core's
    wheel has no `megatron/__init__.py` (a PEP 420 namespace package) under `megatron/core/`, and
    conch's has `conch/__init__.py` but none in `conch/kernels/`; their files import
    `from megatron.core ...`, `from conch.platforms ...`."""
    folders = []  # import_root, its parent, ... (nearest first)
    d = import_root
    while os.path.dirname(d) != d and len(folders) < 8:
        folders.append(d)
        d = os.path.dirname(d)
    top = None
    if root and import_root.startswith(os.path.abspath(root) + os.sep):
        top = next((f for f in folders if os.path.dirname(f) == os.path.abspath(root)), None)
    else:
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                named = _absolute_names(path, f.read())
        except OSError:
            named = set()
        named.discard(parts[0])
        top = next((f for f in folders if os.path.basename(f) in named and not _installed_elsewhere(f)), None)
    if top is None:
        return import_root, parts
    between = os.path.relpath(import_root, os.path.dirname(top)).split(os.sep)
    if not all(p.isidentifier() for p in between):
        return import_root, parts
    return os.path.dirname(top), [*between, *parts]


_RELATIVE = re.compile(r"^[ \t]*from[ \t]+(\.+)", re.M)
_ABSOLUTE = re.compile(r"^[ \t]*(?:from[ \t]+([A-Za-z_]\w*)|import[ \t]+([A-Za-z_]\w*))", re.M)


_RELATIVE_FROM = re.compile(r"^[ \t]*from[ \t]+(\.+)([\w.]*)[ \t]+import[ \t]+\(?([\w, \t]*)", re.M)


def _absolute_names(path: str, text: str) -> set[str]:
    """Top-level names the file imports absolutely, and those the modules it imports relatively
    import (one hop: unsloth-zoo's patch imports `.common`, which imports `unsloth_zoo.log`)."""
    named = {a or b for a, b in _ABSOLUTE.findall(text)}
    folder = os.path.dirname(os.path.abspath(path))
    for dots, module, names in _RELATIVE_FROM.findall(text):
        base = folder
        for _ in range(len(dots) - 1):
            base = os.path.dirname(base)
        stems = [module.replace(".", os.sep)] if module else [n.strip() for n in names.split(",") if n.strip()]
        for stem in stems:
            for candidate in (os.path.join(base, stem + ".py"), os.path.join(base, stem, "__init__.py")):
                if os.path.isfile(candidate) and os.path.abspath(candidate) != os.path.abspath(path):
                    try:
                        with open(candidate, encoding="utf-8", errors="replace") as f:
                            named |= {a or b for a, b in _ABSOLUTE.findall(f.read())}
                    except OSError:
                        pass
                    break
    return named


def _namespace_package(path: str, import_root: str, parts: list[str]) -> tuple[str, list[str]]:
    """A file with relative imports in folders without `__init__.py` (copied out of a package, or
    a namespace package) and no project marker: its folders are the package. As far up as an
    absolute import of the file (or of a module it imports relatively) names one of them (`from
    lmdeploy.utils import ...` under a folder `lmdeploy`), else as many levels as its deepest
    relative import climbs."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError:
        return import_root, parts
    dots = max((len(m) for m in _RELATIVE.findall(text)), default=0)
    folders = []  # the file's folder, its parent, ... (nearest first)
    d = os.path.dirname(os.path.abspath(path))
    while os.path.dirname(d) != d and len(folders) < 8:
        folders.append(d)
        d = os.path.dirname(d)
    named = _absolute_names(path, text) - {os.path.basename(folders[0]) if folders else ""}
    depth = next((i + 1 for i in range(1, len(folders))
                  if os.path.basename(folders[i]) in named and not _installed_elsewhere(folders[i])), dots)
    # the package's top must not be a name that imports from elsewhere (a folder `kernels` beside
    # an installed `kernels`): the package then starts a level higher
    while depth and depth <= len(folders) and _installed_elsewhere(folders[depth - 1]):
        depth += 1
    if not depth or depth > len(folders):
        return import_root, parts
    chain = [os.path.basename(f) for f in reversed(folders[:depth])]
    return os.path.dirname(folders[depth - 1]), [*chain, parts[-1]]


def _installed_elsewhere(folder: str) -> bool:
    """Whether a module named like `folder` is installed (the standard library, site-packages):
    `import torch` in a folder of that name must stay torch. Where the running interpreter finds
    modules besides (its current folder, PYTHONPATH) does not count, so the caller and the worker,
    whose paths differ, agree. Finds the spec of a top-level name: imports nothing."""
    import importlib.util
    import sysconfig

    try:
        spec = importlib.util.find_spec(os.path.basename(folder))
    except (ImportError, ValueError):
        return False
    if spec is None:
        return False
    where = spec.origin or next(iter(spec.submodule_search_locations or []), "")
    if not where or where in ("built-in", "frozen"):
        return True
    where = os.path.abspath(where)
    installed = {sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    return any(where.startswith(os.path.abspath(d) + os.sep) for d in installed if d)


def module_file(name: str, search: list[str] | None = None) -> str | None:
    """The .py file of an importable module named like `liger_kernel.ops.rms_norm`, found on
    sys.path without importing anything (finding a spec would run the packages' __init__)."""
    parts = name.split(".")
    if not all(p.isidentifier() for p in parts):
        return None
    for entry in search if search is not None else sys.path:
        base = os.path.join(entry or os.getcwd(), *parts)
        for candidate in (base + ".py", os.path.join(base, "__init__.py")):
            if os.path.isfile(candidate):
                return os.path.abspath(candidate)
    return None


_content_digests: dict[tuple[str, int, int], str] = {}


def _content_digest(path: str, st: os.stat_result) -> str:
    """A file's SHA-256, read once per (path, size, mtime) in this process."""
    key = (path, st.st_size, st.st_mtime_ns)
    if key not in _content_digests:
        with open(path, "rb") as f:
            _content_digests[key] = sha256(f.read()).hexdigest()
    return _content_digests[key]


def fingerprint(loc: ModuleLocation, limit: int = 5000) -> str:
    """A digest of the names and contents of the Python files the module can import from its
    package (or its folder, for a file outside a package), so that a change to a package's
    utilities recompiles a kernel that imports them. Contents, not modification times: a fresh
    checkout of the same commit (a CI run) finds the records the previous run cached."""
    top = os.path.join(loc.import_root, loc.name.split(".")[0]) if loc.package else loc.import_root
    h = sha256()
    n = 0
    for folder, dirs, files in os.walk(top):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__pycache__")
        for name in sorted(files):
            if not name.endswith(".py"):
                continue
            full = os.path.join(folder, name)
            try:
                digest = _content_digest(full, os.stat(full))
            except OSError:
                continue
            h.update(f"{os.path.relpath(full, top)}:{digest}\n".encode())
            n += 1
            if n >= limit:
                return h.hexdigest()
        if not loc.package:
            break  # a plain folder: its own files only
    return h.hexdigest()


def register_namespace_chain(loc: ModuleLocation, plain: bool = False) -> None:
    """The folders of the file's package that have no `__init__.py` (`locate` made them a package
    from the file's imports) registered as namespace packages at those folders, so that
    another module of the same name elsewhere on the path (a `kernels` package) cannot take them.

    `plain`: every folder of it, its `__init__.py` left unrun, after what a failed import of the
    package left half-made is dropped: for a package whose `__init__` refuses to import here (a
    check of the installed distribution, a compiled extension)."""
    if plain:
        from ..worker.absent_modules import forget_modules

        top = loc.package.split(".")[0]
        forget_modules([n for n in sys.modules if n == top or n.startswith(top + ".")])
    import importlib.machinery
    import importlib.util

    folder = loc.import_root
    names = loc.package.split(".")
    for i, name in enumerate(names):
        folder = os.path.join(folder, name)
        dotted = ".".join(names[:i + 1])
        if not plain and (dotted in sys.modules or os.path.isfile(os.path.join(folder, "__init__.py"))):
            continue
        spec = importlib.machinery.ModuleSpec(dotted, None, is_package=True)
        spec.submodule_search_locations = [folder]
        package = importlib.util.module_from_spec(spec)
        sys.modules[dotted] = package
        # A parent with an `__init__.py` is not imported yet (the import of the file runs it, and
        # then finds this folder in sys.modules); a registered one gets the attribute now.
        parent = sys.modules.get(".".join(names[:i])) if i else None
        if parent is not None:
            setattr(parent, name, package)
