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

Every argument can be overridden by name: a pointer with a dtype name (`x_ptr=fp16`), a scalar
with a number (`n=4095`), a constexpr with a number, bool, or dtype name (`BLOCK=512`).
"""

from __future__ import annotations

import ast
import importlib.util
import inspect
import os
import re
import sys
import types
from dataclasses import dataclass
from typing import Any

from . import triton_compat as tc

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

    def __init__(self, kind: str, message: str, file: str | None = None, line: int | None = None):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.file = file
        self.line = line


@dataclass
class KernelInfo:
    """A kernel object defined in the file."""

    name: str
    obj: Any  # JITFunction / Autotuner / Heuristics
    line: int  # line of the def

    @property
    def jit(self):
        return tc.innermost_jit(self.obj)


def load_module(path: str) -> types.ModuleType:
    """Import the file as a fresh module; its folder goes first on sys.path for sibling imports."""
    path = os.path.abspath(path)
    folder = os.path.dirname(path)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    stem = re.sub(r"\W", "_", os.path.splitext(os.path.basename(path))[0]) or "kernel"
    name = stem if stem not in sys.modules and not stem[0].isdigit() else f"kernel_file_{stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise KernelFileError("import", f"cannot import {path}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def kernels_in(module: types.ModuleType, path: str) -> list[KernelInfo]:
    """Kernel objects defined in this file, in definition order."""
    path = os.path.abspath(path)
    found: list[KernelInfo] = []
    seen: set[int] = set()
    for name, obj in vars(module).items():
        if not tc.is_kernel_object(obj):
            continue
        jit = tc.innermost_jit(obj)
        try:
            src_file = os.path.abspath(inspect.getsourcefile(jit.fn) or "")
        except TypeError:
            continue
        if src_file != path or id(jit) in seen:
            continue
        seen.add(id(jit))
        found.append(KernelInfo(name, obj, tc.kernel_def_line(jit)))
    return found


def entry_kernels(kernels: list[KernelInfo]) -> list[KernelInfo]:
    """Kernels not called from another kernel of the file (helpers are called, entries are not)."""
    sources = {k.name: k.jit.src for k in kernels}
    called = {
        k.name
        for k in kernels
        for other, src in sources.items()
        if other != k.name and re.search(rf"\b{re.escape(k.jit.__name__)}\s*\(", src)
    }
    return [k for k in kernels if k.name not in called] or kernels


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


def signature_call(info: KernelInfo, overrides: dict[str, Any]) -> tc.Launch:
    """A call built from the signature alone (see the module docstring for the rules)."""
    import torch

    args: list[Any] = []
    kwargs: dict[str, Any] = {}
    missing: list[str] = []
    for p in tc.signature_params(info.jit):
        name = p.name
        if p.is_constexpr:
            if name in overrides:
                continue  # applied by compile_launch
            if p.has_default and p.default is not inspect.Parameter.empty:
                kwargs[name] = p.default
            else:
                missing.append(name)
            continue
        ann = _annotation_text(p)
        default = p.default if p.has_default else None
        if _POINTER_ANNOTATION.match(ann.strip()) or "ptr" in name.lower():
            value: Any = torch.empty([1], dtype=torch.float32, device="meta")
            m = _POINTER_ANNOTATION.match(ann.strip())
            if m and ann.strip().lstrip("*k") in DTYPE_NAMES:
                value = torch.empty([1], dtype=getattr(torch, DTYPE_NAMES[ann.strip().lstrip("*k")]), device="meta")
        elif (isinstance(default, float) or any(t in ann for t in ("float", "fp32", "fp16", "bf16", "fp64"))
              or (default is None and FLOAT_NAMES.match(name))):
            value = float(default) if default is not None else 1.0
        elif isinstance(default, bool):
            value = default
        else:
            value = int(default) if isinstance(default, int) else DEFAULT_INT
        args.append(value)
    if missing:
        names = ", ".join(missing)
        raise KernelFileError(
            "missing_constexpr",
            f"kernel '{info.name}' needs a value for constexpr {names}: it has no default and the file "
            f"has no example() call; pass --const {missing[0]}=VALUE",
            None,
            info.line,
        )
    return tc.Launch(info.obj, tuple(args), kwargs, (1,))


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


def run_example(module: types.ModuleType) -> list[tc.Launch]:
    """Call the file's `example(device)` with meta tensors and return the launches it made."""
    import torch

    fn = getattr(module, "example")
    try:
        takes_device = len(inspect.signature(fn).parameters) > 0
    except (TypeError, ValueError):
        takes_device = True
    with tc.capture_launches() as launches:
        if takes_device:
            fn(torch.device("meta"))
        else:
            fn()
    return launches


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
        return f"tensor descriptor {list(value.block_shape)} over {describe_value(value.base)}"
    return repr(value)
