"""A user's kernel file: loading it, finding its kernels, and deciding what call to compile.

The example-call convention
---------------------------
A kernel file is plain Python with `@triton.jit` (optionally `@triton.autotune` /
`@triton.heuristics`) functions. It may define

    def example(device):
        x = torch.randn(4096, device=device)
        ...
        add_kernel[grid](x, y, out, x.numel(), BLOCK=1024)

a function named `example` that launches the kernel exactly as real code would: the arguments,
keyword arguments (constexprs, num_warps, ...) and grid of a real call. The inspector calls it with
`device=torch.device("meta")` (tensors with shapes, dtypes and alignment but no memory) and
records each launch instead of running it; the recorded launch is then compiled through Triton's
`warmup`, so the specialisation is exactly what a real launch does. `example()` may take no
argument; tutorial-style files that create tensors on
`triton.runtime.driver.active.get_active_torch_device()` get the meta device from it too.

Without `example`, the call is derived from the signature: a parameter whose name contains `ptr`
(or whose annotation is a pointer type such as `"*fp16"`) becomes a float32 tensor; a parameter
annotated as a float, with a float default, or with a conventional float name (eps, alpha, beta,
gamma, scale, sm_scale, *_scale, temperature, momentum, slope) becomes 1.0; every other parameter an integer
(its default, else 4096: divisible by 16, as a real size usually is); a constexpr takes its
default, and a constexpr without one is an error that names it. The grid is (1,).
Where Triton's compile refuses a pointer's made-up dtype, the pointers reaching the error are
retyped from its words and the code (`retyping.py`).

Every argument can be overridden by name: a pointer with a dtype name (`x_ptr=fp16`), a scalar
with a number (`n=4095`), a constexpr with a number, bool, or dtype name (`BLOCK=512`).
"""

from __future__ import annotations

import ast
import importlib
import importlib.machinery
import importlib.util
import linecache
import inspect
import os
import re
import sys
import textwrap
import traceback
import types
from dataclasses import dataclass
from typing import Any

from .. import triton_compat as tc
from . import absent_modules
from .kernel_params import suggested_value  # noqa: F401 - re-exported (errors, retyping)
from ..compile.project import ModuleLocation, locate, module_file, register_namespace_chain  # noqa: F401 - re-exported

# Names accepted for dtypes on the command line -> torch dtype attribute names.
DTYPE_NAMES: dict[str, str] = {
    "fp16": "float16", "f16": "float16", "float16": "float16", "half": "float16",
    "bf16": "bfloat16", "bfloat16": "bfloat16",
    "fp32": "float32", "f32": "float32", "float32": "float32", "float": "float32",
    "fp64": "float64", "f64": "float64", "float64": "float64", "double": "float64",
    "fp8e4nv": "float8_e4m3fn", "fp8e4m3": "float8_e4m3fn", "float8_e4m3fn": "float8_e4m3fn",
    "fp8e5": "float8_e5m2", "fp8e5m2": "float8_e5m2", "float8_e5m2": "float8_e5m2",
    "fp8e4b8": "float8_e4m3fnuz", "fp8e5b16": "float8_e5m2fnuz",
    "i8": "int8", "int8": "int8", "u8": "uint8", "uint8": "uint8",
    "i16": "int16", "int16": "int16", "u16": "uint16", "uint16": "uint16",
    "i32": "int32", "int32": "int32", "u32": "uint32", "uint32": "uint32",
    "i64": "int64", "int64": "int64", "u64": "uint64", "uint64": "uint64",
    "i1": "bool", "bool": "bool",
}
# The same names as Triton language dtypes, for constexpr dtype parameters.
TL_DTYPE_NAMES: dict[str, str] = {
    "float16": "float16", "bfloat16": "bfloat16", "float32": "float32", "float64": "float64",
    "float8_e4m3fn": "float8e4nv", "float8_e5m2": "float8e5", "float8_e4m3fnuz": "float8e4b8",
    "float8_e5m2fnuz": "float8e5b16", "int8": "int8", "uint8": "uint8", "int16": "int16",
    "uint16": "uint16", "int32": "int32", "uint32": "uint32", "int64": "int64", "uint64": "uint64",
    "bool": "int1",
}
DEFAULT_INT = 4096
FLOAT_NAMES = re.compile(r"^(eps|epsilon|alpha|beta|gamma|scale|\w+_scale|temperature|momentum|lr|\w*slope)$",
                         re.IGNORECASE)
_POINTER_ANNOTATION = re.compile(r"^\*k?\w+$")


class KernelFileError(Exception):
    """A problem with the user's file or call, with the file line it concerns."""

    def __init__(self, kind: str, message: str, file: str | None = None, line: int | None = None,
                 details: dict[str, Any] | None = None):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.file = file
        self.line = line
        self.details = details or {}


@dataclass
class KernelInfo:
    """A kernel object defined in the file."""

    name: str
    obj: Any  # JITFunction / Autotuner / Heuristics
    line: int  # line of the def

    @property
    def jit(self):
        return tc.innermost_jit(self.obj)


# Said in the record's log (`inspection`): packages whose `__init__` did not import, run without it.
PACKAGE_NOTES: list[str] = []


def load_module(path: str) -> types.ModuleType:
    """Import the file as a module (not as `__main__`: its main block does not run), inside its
    package when it has one. For code that needs the file's definitions only (benchmarks)."""
    path = os.path.abspath(path)
    loc = locate(path)
    for entry in (loc.import_root, os.path.dirname(path)):
        if entry not in sys.path:
            sys.path.insert(0, entry)
    if loc.package:
        return importlib.import_module(loc.name)
    name = loc.name if loc.name not in sys.modules else f"kernel_file_{loc.name}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise KernelFileError("import", f"cannot import {path}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def main_block_lines(source: str) -> list[tuple[int, int]]:
    """Line ranges of `if __name__ == "__main__":` blocks."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    out = []
    for node in tree.body:
        if isinstance(node, ast.If) and "__main__" in ast.unparse(node.test) and "__name__" in ast.unparse(node.test):
            out.append((node.lineno, node.end_lineno or node.lineno))
    return out


@dataclass
class Stop:
    """Where the file's own code stopped (an exception after it had defined its kernels), e.g. at a
    `.item()` that needs real data: the launches recorded before it are kept."""

    file: str
    line: int | None
    message: str
    phase: str  # "file" (module level or __main__), "example", "test_x", "benchmark"

    def describe(self) -> str:
        where = f"line {self.line}" if self.line else "an unknown line"
        what = {"file": "the file's own code", "example": "example()"}.get(self.phase, f"{self.phase}()")
        return f"{what} stopped at {where}: {self.message}"


def user_frame_line(err: BaseException, path: str) -> int | None:
    """The deepest traceback line that lies in the user's file."""
    path = os.path.abspath(path)
    line = None
    for frame in traceback.extract_tb(err.__traceback__):
        if os.path.abspath(frame.filename) == path:
            line = frame.lineno
    return line


def stop_from(err: BaseException, path: str, phase: str) -> Stop:
    """The Stop an exception of the user's code (in `phase`) makes: its line in `path`, its message."""
    text = str(err).strip().splitlines()
    message = f"{type(err).__name__}: {text[0] if text else ''}".strip().rstrip(":")
    return Stop(path, user_frame_line(err, path), message[:500], phase)


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return None


def execute_file(path: str, source: str | None = None, root: str | None = None) -> tuple[types.ModuleType, Stop | None]:
    """Run the file as `python file.py` (or `python -m package.module`) would: as `__main__`, so a
    tutorial's `if __name__ == "__main__":` block runs, inside its package when it has one. The
    text compiled is `source` (what the caller hashed), not a second read of the file.

    An exception after the file has defined kernels (a check that needs real data, a `.item()`)
    stops the run but is not an error: it is returned as a Stop, and the launches recorded before
    it count. One raised at module level outside `__main__` before any kernel was launched is the
    file's error and propagates."""
    path = os.path.abspath(path)
    if source is None:
        with open(path, encoding="utf-8", errors="replace") as f:
            source = f.read()
    loc = locate(path, root)
    if loc.import_root not in sys.path:
        sys.path.insert(0, loc.import_root)
    folder = os.path.dirname(path)
    in_package = os.path.isfile(os.path.join(folder, "__init__.py"))
    if not in_package and folder not in sys.path:
        # `python file.py` puts the file's folder first (a script beside its helpers); a module of a
        # real package (`__init__.py` beside it) is imported as `python -m package.module` and an
        # installed package are: without it, so a sibling module cannot shadow a package of the same
        # name (fla's `sinkhorn/tilelang.py` made `find_spec("tilelang")` answer yes without TileLang).
        sys.path.insert(0, folder)
    if loc.package:
        register_namespace_chain(loc)
        try:
            absent_modules.with_stand_ins(lambda: importlib.import_module(loc.package), path,
                                          project=loc.package.split(".")[0])
        except Exception as e:  # noqa: BLE001 - the package's own __init__ refused: run without it
            if os.path.realpath(path) in {os.path.realpath(f.filename) for f in traceback.extract_tb(e.__traceback__)}:
                raise  # the file's own code, imported by its package: the file's error
            register_namespace_chain(loc, plain=True)
            at = [f for f in traceback.extract_tb(e.__traceback__)
                  if os.path.realpath(f.filename).startswith(os.path.realpath(loc.import_root) + os.sep)][-1:]
            where = f"{os.path.relpath(at[0].filename, loc.import_root)} line {at[0].lineno}" if at else "?"
            PACKAGE_NOTES.append(f"note: the package `{loc.package}` did not import here ({type(e).__name__} at "
                                 f"{where}: {str(e)[:160]}): its folders were used as plain packages, their "
                                 "`__init__.py` not run\n")
    # Tracebacks and Triton's inspect.getsource read the file through linecache: give it this text.
    linecache.cache[path] = (len(source), None, source.splitlines(True), path)
    module = _main_module(path, loc)
    code = compile(source, path, "exec")
    # A package that imports its own module (an `__init__` importing every op) already ran this
    # text under the module's real name; a second run as __main__ can fail on what it registers
    # globally (`torch.library` ops). That module, when it was built from this same text, stands in.
    imported = sys.modules.get(loc.name) if loc.package else None
    same_text = imported is not None and os.path.abspath(getattr(imported, "__file__", "") or "") == path \
        and _read(path) == source
    try:
        while True:
            try:
                exec(code, module.__dict__)
                break
            except ModuleNotFoundError as e:
                # a module this machine lacks, imported before anything launched: it stands in
                # (`absent_modules`) and the file runs again from its first line
                if tc.launch_count() or not absent_modules.may_stand_in(e, path):
                    raise
                module = _main_module(path, loc)
    except BaseException as e:  # noqa: BLE001 - user code may raise anything, even SystemExit
        if same_text and not isinstance(e, SyntaxError) and tc.launch_count() == 0:
            return imported, None
        if isinstance(e, SyntaxError):
            raise
        stop = stop_from(e, path, "file")
        # whether it came through the `__main__` block: its module-level line, not the deepest
        # (a test in the block calling a function of the file that raises at its own line)
        at = _module_level_line(e, path) or stop.line or 0
        if not any(a <= at <= b for a, b in main_block_lines(source)):
            if absent_modules.machine_limit(e, path):
                _resume_after(source, path, _module_level_line(e, path), module)
            elif tc.launch_count() == 0:
                raise  # the file's own error at module level, before it launched anything
        if not kernels_in(module, path):
            raise
        return module, stop
    return module, None


def _main_module(path: str, loc: ModuleLocation) -> types.ModuleType:
    """A fresh `__main__` for the file (inside its package, when it has one), registered as such."""
    module = types.ModuleType("__main__")
    module.__file__ = path
    module.__package__ = loc.package or None
    module.__spec__ = importlib.machinery.ModuleSpec(loc.name, None, origin=path)
    sys.modules["__main__"] = module
    return module


def _module_level_line(err: BaseException, path: str) -> int | None:
    """The line of the module-level statement the exception came through (its outermost frame in
    the file), where `user_frame_line` gives the deepest."""
    path = os.path.abspath(path)
    return next((f.lineno for f in traceback.extract_tb(err.__traceback__)
                 if os.path.abspath(f.filename) == path and f.name == "<module>"), None)


def _resume_after(source: str, path: str, line: int | None, module: types.ModuleType) -> None:
    """Run the module-level statements after the one that stopped at `line`, one at a time,
    skipping each that fails: a notebook-style file (a tutorial printing tensors, a table made
    with a module this machine lacks) still defines its kernels and makes its later calls, which
    GPU-free have shapes but no values. What failed first is the run's Stop."""
    if line is None:
        return
    for stmt in ast.parse(source, path).body:
        if stmt.lineno <= line:
            continue  # ran already, or is the statement that stopped
        try:
            exec(compile(ast.Module(body=[stmt], type_ignores=[]), path, "exec"), module.__dict__)
        except Exception:  # noqa: BLE001 - skipped, as the statement that stopped was
            continue


def kernels_in(module: types.ModuleType, path: str, built: list[Any] = ()) -> list[KernelInfo]:
    """Kernel objects defined in this file, in definition order (`built`: kernels its builder
    functions made, `kernel_builders.build`, named by their function)."""
    path = os.path.abspath(path)
    found: list[KernelInfo] = []
    seen: set[int] = set()
    named = list(vars(module).items()) + [(tc.innermost_jit(k).__name__, k) for k in built]
    for name, obj in named:
        if not tc.is_kernel_object(obj):
            continue
        jit = tc.innermost_jit(obj)
        try:
            src_file = os.path.abspath(inspect.getsourcefile(jit.fn) or "")
        except TypeError:
            continue
        if src_file != path:
            continue
        if id(jit) in seen:
            # `k = triton.heuristics({...})(_k)` beside `_k`: the wrapper is what callers launch
            # (its heuristics fill arguments), so it stands for the kernel
            at = next(i for i, k in enumerate(found) if k.jit is jit)
            if found[at].obj is jit and obj is not jit:
                found[at] = KernelInfo(name, obj, found[at].line)
            continue
        seen.add(id(jit))
        found.append(KernelInfo(name, obj, tc.kernel_def_line(jit)))
    return sorted(found, key=lambda k: k.line) if built else found


def multiplies_tiles(jit: Any, depth: int = 3, how: str = r"\.dot\(") -> bool:
    """Whether the kernel, or a `@triton.jit` helper it calls (a few levels down), calls `tl.dot`
    (`how`: a pattern its source matches; `IEEE_DOT`: a dot in fp32's full precision)."""
    src = getattr(jit, "src", "") or ""
    if re.search(how, src):
        return True
    if depth <= 0:
        return False
    scope = getattr(getattr(jit, "fn", None), "__globals__", {})
    return any(multiplies_tiles(tc.innermost_jit(scope[n]), depth - 1, how) for n in _names_used(src)
               if n in scope and n != getattr(jit, "__name__", None) and tc.is_kernel_object(scope[n]))


# A `tl.dot` of fp32 tiles at full precision: compiled as FMA loops, which for made-up fp32 data
# (adasplash's attention: 128 x 128 x 128) took over 4 GiB and minutes; such kernels run on half
# precision (their "ieee" only matters for fp32), so a made-up call gives them bf16 first.
IEEE_DOT = r"input_precision\s*=\s*[\"']ieee|allow_tf32\s*=\s*False"


def _names_used(src: str) -> set[str]:
    """Names a function's code refers to (comments and docstrings excluded)."""
    try:
        tree = ast.parse(textwrap.dedent(src))
    except SyntaxError:
        return set(re.findall(r"\w+", src))
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | \
        {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}


def entry_kernels(kernels: list[KernelInfo]) -> list[KernelInfo]:
    """Kernels no other kernel of the file uses (helpers are called, or passed as a combine
    function to `tl.reduce` / `tl.associative_scan`; entries are not)."""
    used_by = {k.name: _names_used(k.jit.src) for k in kernels}
    used = {k.name for k in kernels for other, names in used_by.items()
            if other != k.name and k.jit.__name__ in names}
    return [k for k in kernels if k.name not in used] or kernels


def parse_value(text: str, for_const: bool = False) -> Any:
    """Turn a command-line value into a Python value: dtype names, ints, floats, bools, None."""
    raw = text.strip()
    low = raw.lower()
    if low in DTYPE_NAMES:
        import torch

        torch_name = DTYPE_NAMES[low]
        if for_const:
            import triton.language as tl

            return getattr(tl, TL_DTYPE_NAMES[torch_name])
        return getattr(torch, torch_name)
    if low in ("true", "false"):
        return low == "true"
    if low == "none":
        return None
    try:
        return int(raw, 0)
    except ValueError:
        pass
    try:
        return float(raw)
    except ValueError:
        pass
    try:
        return ast.literal_eval(raw)
    except (ValueError, SyntaxError):
        return raw


def as_argument(name: str, value: Any, previous: Any = None) -> Any:
    """A dtype given for a pointer parameter becomes a meta tensor of that dtype."""
    import torch

    if isinstance(value, torch.dtype):
        shape = list(previous.shape) if isinstance(previous, torch.Tensor) else [1]
        return torch.empty(shape, dtype=value, device="meta")
    return value


def _annotation_text(param: Any) -> str:
    ann = getattr(param, "annotation", "")
    return ann if isinstance(ann, str) else str(ann)


def signature_call(info: KernelInfo, overrides: dict[str, Any], ran: str = "") -> tc.Launch:
    """A call built from the signature and the kernel's own code (see the module docstring).

    `ran` says what of the file ran without launching this kernel, for the message when values
    are missing. Every constexpr without a default or override is named in one error."""
    import torch

    from .kernel_params import constexpr_uses, parameter_usage

    usage = parameter_usage(info.jit)
    # Constexprs every autotune config sets, or a heuristic computes, are not the caller's to give.
    configs = tc.autotune_configs(info.obj)
    supplied = set.intersection(*(set(c) for c in configs)) if configs else set()
    supplied |= tc.heuristic_names(info.obj)
    kwargs: dict[str, Any] = {}
    missing: list[str] = []
    # A kernel that multiplies tiles (`tl.dot`) is called with 16-bit inputs, as tensor-core code is;
    # fp32 tiles of the same shape need twice the shared memory and may not fit at all.
    float_dtype = torch.float16 if multiplies_tiles(info.jit) else torch.float32
    for p in tc.signature_params(info.jit):
        name = p.name
        if p.is_constexpr:
            if name in overrides or name in supplied:
                continue  # applied by compile_launch, the autotuner or a heuristic
            if p.has_default and p.default is not inspect.Parameter.empty:
                kwargs[name] = p.default
            else:
                missing.append(name)
            continue
        ann = _annotation_text(p).strip()
        default = p.default if p.has_default else None
        annotated = _POINTER_ANNOTATION.match(ann)
        if annotated or name in usage.pointers or (name not in usage.integers and "ptr" in name.lower()):
            dtype = torch.int64 if name in usage.index_pointers else torch.int32 if name in usage.bits_pointers \
                else getattr(torch, usage.packed_pointers[name]) if name in usage.packed_pointers else float_dtype
            if annotated and ann.lstrip("*k") in DTYPE_NAMES:
                dtype = getattr(torch, DTYPE_NAMES[ann.lstrip("*k")])
            value: Any = torch.empty([1], dtype=dtype, device="meta")
        elif (isinstance(default, float) or any(t in ann for t in ("float", "fp32", "fp16", "bf16", "fp64"))
              or (default is None and FLOAT_NAMES.match(name))):
            value = float(default) if default is not None else 1.0
        elif isinstance(default, bool):
            value = default
        else:
            value = int(default) if isinstance(default, int) else DEFAULT_INT
        kwargs[name] = value  # by name: constexprs may sit between runtime parameters
    if missing:
        blocks = [p.name for p in tc.signature_params(info.jit) if p.is_constexpr
                  and ("block" in p.name.lower() or "tile" in p.name.lower())]
        tiles_2d = len(blocks) > 1 or ".dot(" in getattr(info.jit, "src", "")
        uses = constexpr_uses(info.jit)
        first = suggested_value(missing[0], tiles_2d, uses.get(missing[0], ""))
        raise KernelFileError(
            "missing_constexpr",
            f"kernel '{info.name}' needs a value for {', '.join(missing)} (constexpr, no default), and "
            f"nothing the file ran launched it to show one ({ran or 'nothing ran'}). Give "
            f"{'it' if len(missing) == 1 else 'each'} a value (e.g. {missing[0]}={first}), "
            f"or add an example(device) that launches the kernel as real code does, or open it through "
            f"the code that really calls it (a test, a benchmark): compile --run \"pytest path::test\".",
            None,
            info.line,
            {"missing": [{"name": n, "kind": "constexpr", "suggested": suggested_value(n, tiles_2d, uses.get(n, ""))}
                         for n in missing]},
        )
    return tc.Launch(info.obj, (), kwargs, (1,))


def check_overrides(info: KernelInfo, overrides: dict[str, Any]) -> None:
    """Every override must name a parameter of the kernel (an unknown compile option is refused by
    Triton itself when the call is compiled)."""
    names = [p.name for p in tc.signature_params(info.jit)]
    unknown = [n for n in overrides if n not in names]
    if unknown:
        raise KernelFileError(
            "bad_argument",
            f"kernel '{info.name}' has no parameter {', '.join(map(repr, unknown))}; its parameters are "
            f"{', '.join(names)}",
            None,
            info.line,
        )
    constexprs = {p.name for p in tc.signature_params(info.jit) if p.is_constexpr}
    for n in names:
        if n in overrides and n in constexprs and overrides[n] is None:
            raise KernelFileError("bad_argument", f"constexpr {n} cannot be None", None, info.line)


def run_example(module: types.ModuleType, path: str) -> Stop | None:
    """Call the file's `example(device)` (launches are recorded by the caller's capture). An
    exception after a launch stops it (returned); one before any launch is the file's error."""
    import torch

    fn = getattr(module, "example")
    try:
        takes_device = len(inspect.signature(fn).parameters) > 0
    except (TypeError, ValueError):
        takes_device = True
    before = tc.launch_count()
    try:
        fn(torch.device("meta")) if takes_device else fn()
    except Exception as e:  # noqa: BLE001 - classified by the caller when nothing was launched
        if tc.launch_count() == before:
            raise
        return stop_from(e, path, "example")
    return None


def _first_parametrization(fn: Any) -> dict[str, Any] | None:
    """Keyword arguments for a pytest-style test: the first value of each `parametrize` mark and
    the parameters' defaults; None when a parameter has neither (a fixture we cannot supply),
    except `device`, which gets "cuda" (a meta tensor device GPU-free)."""
    values: dict[str, Any] = {}
    for mark in getattr(fn, "pytestmark", []) or []:
        if getattr(mark, "name", "") != "parametrize" or len(mark.args) < 2:
            continue
        names = mark.args[0]
        names = [n.strip() for n in names.split(",")] if isinstance(names, str) else list(names)
        first = list(mark.args[1])[0] if list(mark.args[1]) else None
        first = getattr(first, "values", first)  # pytest.param(...)
        first = first if len(names) > 1 else [first]
        values.update({n: v for n, v in zip(names, first) if n not in values})
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return None
    for p in params:
        if p.name in values or p.default is not inspect.Parameter.empty:
            continue
        if p.name == "device":
            values["device"] = "cuda"
        elif p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        else:
            return None
    return values


def run_file_entry_points(module: types.ModuleType, path: str, wanted: Any = None) -> Stop | None:
    """When neither the file's own run nor example() launched the wanted kernel, call what the file
    defines to exercise it: each `triton.testing.perf_report` benchmark (its first configuration)
    and each `test_*` function (its first parametrization), until a launch of `wanted` (or any
    launch) is recorded. Failures are returned as a Stop, never raised."""
    import triton.testing

    launched = lambda: any(wanted is None or la.jit is wanted for la in tc.recorded())  # noqa: E731
    candidates: list[tuple[str, Any, dict[str, Any]]] = []
    for name, obj in list(vars(module).items()):
        if isinstance(obj, triton.testing.Mark) and getattr(obj.fn, "__module__", None) == "__main__":
            candidates.append((name, obj.run, {}))
    for name, obj in list(vars(module).items()):
        if (name.startswith("test") and inspect.isfunction(obj) and obj.__module__ == "__main__"
                and (kwargs := _first_parametrization(obj)) is not None):
            candidates.append((name, obj, kwargs))
    stop = None
    for name, fn, kwargs in candidates:
        if launched():
            break
        try:
            fn(**kwargs)
        except Exception as e:  # noqa: BLE001 - needs real data, or not ours to run
            stop = stop_from(e, path, name)
    return stop


def describe_value(value: Any) -> Any:
    """How an argument is shown: tensors by dtype and shape, dtypes by name, numbers as is."""
    try:
        import torch

        if isinstance(value, torch.Tensor):
            dtype = str(value.dtype).replace("torch.", "")
            return f"{dtype} tensor {list(value.shape)}" + (
                f" +{value.storage_offset()}" if value.storage_offset() else ""
            )
        if isinstance(value, torch.dtype):
            return str(value).replace("torch.", "")
    except ImportError:  # pragma: no cover
        pass
    if isinstance(value, (int, float, bool, str)) or value is None:
        return value
    if hasattr(value, "base") and hasattr(value, "block_shape"):
        text = f"tensor descriptor {list(value.block_shape)} over {describe_value(value.base)}"
        shape, strides = getattr(value, "shape", None), getattr(value, "strides", None)
        if shape is not None and strides is not None:  # the analysis reads the descriptor's own strides
            text += f", shape {[int(x) for x in shape]}, strides {[int(x) for x in strides]}"
        return text
    return repr(value)
