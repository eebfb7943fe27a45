"""Triton's errors, read: where a CompilationError points in the file, its text, resources
errors."""

from __future__ import annotations

import re
from typing import Any

from triton.runtime.jit import JITFunction

from .launches import kernel_def_line


# ---- errors ------------------------------------------------------------------------------------


def compilation_error_location(err: BaseException, fns: list[JITFunction]) -> tuple[JITFunction, int] | None:
    """(function, file line) of the innermost Triton CompilationError whose source we know."""
    from triton.compiler.errors import CompilationError

    by_src = {fn.src: fn for fn in fns}
    best = None
    seen = set()
    e: BaseException | None = err
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        if isinstance(e, CompilationError) and getattr(e, "node", None) is not None:
            fn = by_src.get(e.src)
            if fn is not None and hasattr(e.node, "lineno"):
                best = (fn, kernel_def_line(fn) + e.node.lineno - 1)
        e = e.__cause__ or e.__context__
    return best


def compilation_error_text(err: BaseException) -> str:
    """The innermost error message Triton attached (e.g. the AttributeError behind the caret)."""
    from triton.compiler.errors import CompilationError

    e: BaseException | None = err
    message = str(err)
    seen = set()
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        if isinstance(e, CompilationError) and e.error_message:
            message = str(e)
        e = e.__cause__ or e.__context__
    return message


# Triton 3.6-3.9's AMD backend (`amd.need_extern_lib` while making LLVM IR) refuses a kernel that
# calls CUDA's libdevice (`tl.extra.cuda.libdevice.tanh` -> `__nv_tanhf`), which older releases
# mapped to ROCm's library on their own; the RuntimeError names the function only.
_CUDA_LIBDEVICE = re.compile(r"Implicit conversion of CUDA (__nv_\w+) device function has been dropped")


def cuda_libdevice_refused(err: BaseException) -> str | None:
    """The CUDA libdevice function (`__nv_tanhf`) an AMD target's compile refused, or None."""
    found = _CUDA_LIBDEVICE.search(str(err))
    return found.group(1) if found else None


def out_of_resources_error(required: int, limit: int, name: str) -> Exception:
    """The exception a launch on the real GPU would raise."""
    from triton.runtime.errors import OutOfResources

    return OutOfResources(required, limit, name)


def is_out_of_resources(err: BaseException) -> bool:
    from triton.runtime.errors import OutOfResources

    return isinstance(err, OutOfResources)


def is_compilation_error(err: BaseException) -> bool:
    from triton.compiler.errors import CompilationError

    return isinstance(err, CompilationError)


def ptxas_error_type() -> type | None:
    try:
        from triton.runtime.errors import PTXASError

        return PTXASError
    except ImportError:  # pragma: no cover - very old Triton
        return None


def compilation_error_node(err: BaseException, fn: JITFunction) -> Any:
    """The AST node (in `fn`'s own source) the innermost CompilationError about `fn` points at, or None."""
    from triton.compiler.errors import CompilationError

    found = None
    seen = set()
    e: BaseException | None = err
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        if isinstance(e, CompilationError) and getattr(e, "node", None) is not None and e.src == fn.src:
            found = e.node
        e = e.__cause__ or e.__context__
    return found
