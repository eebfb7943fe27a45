"""Stand-ins for modules this machine lacks, so a kernel file of a project whose other dependencies
are not installed still defines its kernels.

A kernel file rarely needs the modules its package imports around it (a logger from `transformers`,
pytree helpers from `optree`, a compiled extension), but `python file.py` stops at the first one
missing, often inside the package's `__init__` before the file's own first line. The worker then
lets each missing module, named by the `ModuleNotFoundError` itself and not a module of the file's
own project (`machine_limit`), import as an `AbsentModule` and runs again: every
attribute is a stand-in object that can be called, subclassed, indexed, iterated (empty) and used
as a decorator (it hands the function back). The kernels and the code that launches them are the
file's own; the record keeps each module stood in for and where it was imported (`stood_in`), and
its stopped note, which the CLI, the page and the notebook show, names them.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import os
import re
import sys
import traceback
import types
from pathlib import Path
from typing import Any, Callable

MAX_ABSENT = 12  # a file whose imports keep failing after this many stand-ins is not worth running
# What an absent module re-exports of the modules every kernel file has (compressed-tensors'
# `utils.triton` gives llmcompressor its `triton`, `tl` and `tldevice`): the real ones, or its
# `@triton.jit` defines no kernel.
REAL_REEXPORTS = {"triton": "triton", "tl": "triton.language", "tldevice": "triton.language.extra.libdevice",
                  "libdevice": "triton.language.extra.libdevice", "torch": "torch", "np": "numpy", "numpy": "numpy"}
_BASES: dict[str, type] = {}  # a stand-in used as a base class: one class per name


class Absent:
    """Whatever an absent module's attribute is used as."""

    def __init__(self, name: str) -> None:
        object.__setattr__(self, "_absent_name", name)

    def __getattr__(self, attr: str) -> Absent:
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)
        return Absent(f"{self._absent_name}.{attr}")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        # used as a bare decorator (`@absent.register`): the function or class stays the file's own
        if len(args) == 1 and not kwargs and isinstance(args[0], (types.FunctionType, type)):
            return args[0]
        return Absent(f"{self._absent_name}()")

    def __mro_entries__(self, bases: tuple) -> tuple:
        # `class Tree(absent.PyTree)`: a plain class, one per stand-in (two stand-ins as bases of one
        # class, `class Observer(InternalModule, RegistryMixin)`, would otherwise be `object` twice)
        name = self._absent_name
        return (_BASES.setdefault(name, type(name.rsplit(".", 1)[-1], (), {"__module__": name.rpartition(".")[0]})),)

    def __getitem__(self, key: Any) -> Absent:
        return Absent(f"{self._absent_name}[]")

    def __iter__(self):
        return iter(())

    # A version check against an absent module (`LooseVersion(v) >= "2.1"`) takes the newer path.
    def __ge__(self, other: Any) -> bool:
        return True

    def __gt__(self, other: Any) -> bool:
        return True

    def __le__(self, other: Any) -> bool:
        return False

    def __lt__(self, other: Any) -> bool:
        return False

    # A type annotation evaluated at import (`PartialState | None`) is a union with the stand-in.
    def __or__(self, other: Any) -> Absent:
        return self

    def __ror__(self, other: Any) -> Absent:
        return self

    # An enum's value read as a number (`int(tex.DType.kByte)`): 0, a value like any other.
    def __int__(self) -> int:
        return 0

    def __index__(self) -> int:
        return 0

    def __float__(self) -> float:
        return 0.0

    def __repr__(self) -> str:
        return f"<stand-in for {self._absent_name}, a module this machine lacks>"


class AbsentModule(types.ModuleType):
    """A module this machine lacks: its attributes are `Absent`, its submodules absent too."""

    def __init__(self, name: str) -> None:
        super().__init__(name, f"stand-in for {name}, which is not installed here")
        self.__path__: list[str] = []  # a package: `import absent.sub` finds its submodule below

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)
        if attr in REAL_REEXPORTS:
            try:
                return importlib.import_module(REAL_REEXPORTS[attr])
            except ImportError:
                pass
        return Absent(f"{self.__name__}.{attr}")


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Answers for the absent top-level names (and everything under them), after every real finder."""

    def __init__(self) -> None:
        self.names: dict[str, tuple[str, int | None]] = {}  # top-level name -> (file, line) first importing it

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if fullname.split(".")[0] not in self.names:
            return None
        return importlib.machinery.ModuleSpec(fullname, self, is_package=True)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        return AbsentModule(spec.name)

    def exec_module(self, module: types.ModuleType) -> None:
        pass


_finder = _Finder()

# Distributions the file's project reads its own version from (`__version__ =
# importlib.metadata.version("nvidia-modelopt")` in a package `__init__`) while only its source is
# here: answered with a version newer than any check, as an absent module compares.
STAND_IN_VERSION = "999.0.0"
_distributions: dict[str, tuple[str, int | None]] = {}  # distribution -> (file, line) first asking
_real_version: Callable[[str], str] | None = None


def _version(name: str) -> str:
    try:
        return _real_version(name)  # type: ignore[misc]
    except ModuleNotFoundError:  # importlib.metadata.PackageNotFoundError
        if _normal(name) in _distributions:
            return STAND_IN_VERSION
        raise


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def stand_in_distribution(name: str, where: tuple[str, int | None]) -> bool:
    """Let `importlib.metadata.version(name)` answer STAND_IN_VERSION from now on; False when it
    already does or the limit is reached."""
    global _real_version
    import importlib.metadata

    if _normal(name) in _distributions or len(_distributions) >= MAX_ABSENT:
        return False
    _distributions[_normal(name)] = where
    if _real_version is None:
        _real_version = importlib.metadata.version
        importlib.metadata.version = _version  # type: ignore[assignment]
    return True


def stand_in(name: str, where: tuple[str, int | None]) -> bool:
    """Let top-level module `name` import as absent from now on (`where`: the file's name and the
    line that imported it, for the note); False when the limit is reached or it already stands in."""
    top = name.split(".")[0]
    if top in _finder.names or len(_finder.names) >= MAX_ABSENT:
        return False
    _finder.names[top] = where
    if _finder not in sys.meta_path:
        sys.meta_path.append(_finder)
    for loaded in [m for m in sys.modules if m == top or m.startswith(top + ".")]:
        del sys.modules[loaded]  # a half-imported real one (a package whose submodule is missing)
    return True


def stood_in() -> list[dict[str, Any]]:
    """The modules standing in so far, as the record keeps them: {"module", "file", "line"}."""
    return [{"module": n, "file": f, "line": line} for n, (f, line) in _finder.names.items()]


def note() -> str:
    """The log's lines about the stand-ins, or ""."""
    out = ""
    if _finder.names:
        out += ("note: modules this machine lacks stood in as empty stand-ins so the file could define its kernels "
                "(install them for the file's own behaviour): "
                + "; ".join(f"{n} (imported at {f} line {line})" for n, (f, line) in _finder.names.items()) + "\n")
    if _distributions:
        out += (f"note: distributions not installed here were given version {STAND_IN_VERSION} when the code asked "
                "for it (their source is here, their metadata is not): "
                + "; ".join(f"{n} (asked at {f} line {line})" for n, (f, line) in _distributions.items()) + "\n")
    return out


def may_stand_in(err: ModuleNotFoundError, path: str) -> bool:
    """Whether the missing module of `err` may import as a stand-in from now on (and now does)."""
    if type(err).__name__ == "PackageNotFoundError":
        # a ModuleNotFoundError about a distribution's metadata (its version read in its own
        # `__init__`), not a module to import: it gets a version
        return bool(err.name) and stand_in_distribution(err.name, _where(err, path))
    if not err.name or not machine_limit(err, path):
        return False
    top = err.name.split(".")[0]
    if top != err.name and top in sys.modules and not isinstance(sys.modules[top], AbsentModule):
        # a submodule an installed package lacks (`triton.ops`, which Triton 3.x removed): the
        # release's refusal, and a stand-in for the package would replace the real one
        return False
    return stand_in(err.name, _where(err, path))


def _where(err: BaseException, path: str) -> tuple[str, int | None]:
    """The file and line of the user's code that raised `err` (its innermost frame outside the
    import machinery and importlib.metadata)."""
    frames = traceback.extract_tb(err.__traceback__)
    user = [f for f in frames if not f.filename.startswith("<frozen") and "importlib" not in f.filename
            and not f.filename.endswith("absent_modules.py")]
    return (os.path.basename(user[-1].filename), user[-1].lineno) if user else (os.path.basename(path), None)


def with_stand_ins(load: Callable[[], Any], path: str, project: str | None = None) -> Any:
    """`load()`, again after each module it lacks has been given a stand-in (`may_stand_in`). The
    modules of `project` (a top-level package name) that the failed attempt left imported are
    dropped first: a package whose `__init__` failed is gone from `sys.modules` while its
    half-imported subpackages stay, and the next attempt's import of one of them asked for the
    missing parent (fairchem's `KeyError: 'fairchem.core'`)."""
    while True:
        before = set(sys.modules)
        try:
            return load()
        except ModuleNotFoundError as e:
            if not may_stand_in(e, path):
                raise
            if project:
                forget_modules([n for n in set(sys.modules) - before if n == project or n.startswith(project + ".")])


def forget_modules(names: list[str]) -> None:
    """Drop modules from `sys.modules`, and `inspect`'s cache of module files with them: a package
    imported again as another kind (a namespace package once its `__init__` failed) has another
    `__file__`, and `inspect.getmodule` (which torch's custom ops call) took the stale entry's
    module for a built-in one."""
    import inspect

    for name in names:
        sys.modules.pop(name, None)
    if names:
        getattr(inspect, "_filesbymodname", {}).clear()
        getattr(inspect, "modulesbyfile", {}).clear()


def machine_limit(err: BaseException, path: str) -> bool:
    """Whether a module-level failure is the GPU-free run's, not the file's: data the stand-in's
    tensors do not have ("Cannot copy out of meta tensor; no data!", `.item()`), a module this
    machine lacks. Only those are run past; the file's own errors (a ValueError it raises, an
    assert, sys.exit) stay its error, with their line, and so does a module of the file's own
    project that is not on the path (a folder of that name beside it or above: --root says where)."""
    if isinstance(err, ModuleNotFoundError) and err.name:
        top = err.name.split(".")[0]
        folders = Path(path).resolve().parents
        # a folder with an `__init__.py` is a package, not an import root: `import spmd_types` in
        # it means a top-level module, never its own `spmd_types.py` (Python has no implicit
        # relative imports)
        roots = [d for d in list(folders)[:4] if not (d / "__init__.py").is_file()]
        if any((d / top).is_dir() or (d / f"{top}.py").is_file() for d in roots):
            return False
    # "meta" as a word ("meta tensor", device 'meta'), not inside a user's own word ("metadata")
    return isinstance(err, (ImportError, NotImplementedError)) or bool(re.search(r"\bmeta\b|no data", str(err).lower()))
