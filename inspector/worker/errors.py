"""Turning whatever a user's kernel file raises into an ErrorInfo with the file and line."""

from __future__ import annotations

import errno
import inspect
import os
import re
import traceback

from .. import triton_compat as tc
from .kernel_file import KernelFileError, suggested_value, user_frame_line
from ..record import ErrorInfo
from ..hardware.targets import UnknownTargetError

MAX_MESSAGE = 8000


def _clip(text: str) -> str:
    return text if len(text) <= MAX_MESSAGE else text[:MAX_MESSAGE] + "\n... (truncated)"


def error_info(err: BaseException, path: str, jit_fns: list | None = None, stage: str = "") -> ErrorInfo:
    """Classify an exception raised while importing, calling or compiling the user's kernel.

    `stage` says what was running: "import", "example" or "compile".
    """
    path = os.path.abspath(path)
    if isinstance(err, KernelFileError):
        return ErrorInfo(err.kind, err.message, err.file or path, err.line, dict(err.details))
    if isinstance(err, tc.MissingArguments):
        fn = next((f for f in jit_fns or [] if f.__name__ == err.kernel), None)
        line = tc.kernel_def_line(fn) if fn is not None else None
        kind = "constexpr" if err.constexpr else "argument"
        missing = [{"name": n, "kind": kind, "suggested": suggested_value(n) if err.constexpr else ""}
                   for n in err.names]
        return ErrorInfo("missing_constexpr" if err.constexpr else "bad_argument",
                         f"{err}: give {'it' if len(err.names) == 1 else 'each'} a value", path, line,
                         {"names": err.names, "missing": missing})
    if isinstance(err, UnknownTargetError):
        return ErrorInfo("unknown_target", str(err))
    if isinstance(err, SyntaxError):
        where = os.path.abspath(err.filename) if err.filename else path
        text = f"{err.msg}" + (f"\n    {err.text.rstrip()}" if err.text else "")
        return ErrorInfo("syntax", text, where, err.lineno, {"offset": err.offset})
    if tc.is_out_of_resources(err):
        details = {k: getattr(err, k, None) for k in ("required", "limit", "name")}
        return ErrorInfo("out_of_resources", str(err), path, None, details)
    if tc.is_compilation_error(err):
        loc = tc.compilation_error_location(err, jit_fns or [])
        line = loc[1] if loc else None
        return ErrorInfo("compilation", _clip(tc.compilation_error_text(err)), path, line,
                         {"type": type(err).__name__})
    ptxas = tc.ptxas_error_type()
    if ptxas is not None and isinstance(err, ptxas):
        return ErrorInfo("compilation", _clip(str(err)), path, None, {"type": "PTXASError"})
    if isinstance(err, OSError) and err.errno == errno.EFBIG:
        return ErrorInfo("output_limit", f"the kernel file wrote more than the worker's output limit ({err})", path,
                         user_frame_line(err, path))
    if isinstance(err, MemoryError):
        return ErrorInfo("memory", "the kernel file ran out of memory (the worker's memory limit)", path,
                         user_frame_line(err, path))
    cuda_only = tc.cuda_libdevice_refused(err)
    if cuda_only:
        return _cuda_libdevice_on_amd(cuda_only, err, path, jit_fns or [])
    kind = {"import": "import", "example": "example"}.get(stage, "compilation")
    message = f"{type(err).__name__}: {err}"
    return ErrorInfo(kind, _clip(message), path, user_frame_line(err, path),
                     {"type": type(err).__name__, "traceback": _clip("".join(traceback.format_exception(err)))})


def _cuda_libdevice_on_amd(symbol: str, err: BaseException, path: str, jit_fns: list) -> ErrorInfo:
    """A kernel that calls CUDA's libdevice, compiled for AMD: the line that names the function (the
    error itself names only `__nv_tanhf`), and what to write instead. Not the tool's limit: a launch
    on an AMD GPU fails the same way."""
    name = symbol.removeprefix("__nv_")
    names = [name, name[:-1]] if name.endswith("f") else [name]
    use = re.compile(r"\blibdevice\s*\.\s*(" + "|".join(map(re.escape, names)) + r")\b")
    imported = re.compile(r"extra\s*\.\s*cuda\b|extra\s+import\s+cuda\b")  # where no line names the function
    files = [path] + [f for f in (_source_file(fn) for fn in jit_fns) if f and f != path]
    where = _first_line(files, use) or _first_line(files, imported)
    called = next((n for n in names if where and re.search(rf"\b{re.escape(n)}\b", where[2])), names[-1])
    at = f" ({os.path.basename(where[0])}:{where[1]}: `{where[2]}`)" if where else ""
    message = (f"the kernel calls CUDA's libdevice `{called}` (`{symbol}`){at}, which AMD targets do not have; "
               f"a launch on an AMD GPU fails the same way. Call `tl.extra.libdevice.{called}` (Triton picks the "
               f"target's library) or a `tl`/`tl.math` function instead, or compile for an NVIDIA target.\n"
               f"Triton: {type(err).__name__}: {err}")
    return ErrorInfo("compilation", _clip(message), where[0] if where else path, where[1] if where else None,
                     {"type": type(err).__name__, "cuda_libdevice": symbol})


def _source_file(fn) -> str | None:
    try:
        return os.path.abspath(inspect.getsourcefile(getattr(fn, "fn", fn)) or "")
    except (TypeError, OSError):
        return None


def _first_line(files: list[str], pattern: re.Pattern) -> tuple[str, int, str] | None:
    for file in files:
        try:
            with open(file, encoding="utf-8", errors="replace") as f:
                for n, line in enumerate(f, 1):
                    if pattern.search(line) and not line.lstrip().startswith("#"):
                        return file, n, line.strip()
        except OSError:
            continue
    return None
