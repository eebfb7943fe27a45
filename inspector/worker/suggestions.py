"""Values offered for what a call leaves out: a bare kernel's missing constexprs, checked by
compiling with them, and the run-time arguments a file's launch does not pass.

A kernel nothing launches needs its constexprs from the user; the error names each with a value
to try (`kernel_file.suggested_value`: from how the code uses it, else its name). Before the
error goes out, those values are compiled: where Triton stops at a node that names one of them
(`tl.static_assert(N_GROUPS == 1, ...)`, `pow(theta, x / -dim)`, a dtype where a number went), that
one is given the next of its alternatives, until the compile is clean or `MAX_CHECKS` compiles
were spent; pointer dtypes are retyped from Triton's errors on the way (`retyping`), as for any
made-up call. The error then says whether its values compile.
"""

from __future__ import annotations

import ast
from typing import Any, Callable

from .. import triton_compat as tc

MAX_CHECKS = 8
# After the first suggestion: integers from the smallest, the flags, the usual dtypes.
_NUMBERS = ["1", "16", "64", "128", "2", "4", "0"]
_FLAGS = ["False", "True"]
_DTYPES = ["float32", "float16", "bfloat16"]


def _alternatives(value: str) -> list[str]:
    if value in _FLAGS:
        return [v for v in _FLAGS if v != value] + _NUMBERS
    if value in _DTYPES:
        return [v for v in _DTYPES if v != value]
    if value.lstrip("-").replace(".", "", 1).isdigit():
        return [v for v in _NUMBERS if v != value] + _FLAGS
    return ["", *_NUMBERS]  # a string mode: none of its branches, then numbers


def checked(missing: list[dict[str, Any]], fn: Any, compile_with: Callable[[dict[str, str]], None]) -> bool:
    """Compile with the suggested values (`compile_with(values)` raises what Triton raised),
    changing the one a failure points at; updates each entry's "suggested" in place. Whether the
    values finally compile."""
    values = {m["name"]: str(m["suggested"]) for m in missing}
    left = {name: _alternatives(v) for name, v in values.items()}
    for _ in range(MAX_CHECKS):
        try:
            compile_with(values)
        except Exception as e:  # noqa: BLE001 - Triton's refusal, read below
            node = tc.compilation_error_node(e, fn)
            named = [n.id for n in ast.walk(node) if isinstance(n, ast.Name) and n.id in values] if node else []
            name = next((n for n in named if left[n]), None)
            if name is None:  # not about these values (the pointers' dtypes were tried already)
                return False
            values[name] = left[name].pop(0)
            continue
        for m in missing:
            m["suggested"] = values[m["name"]]
        return True
    return False


def suggested_argument(fn: Any, name: str, passed: dict[str, Any]) -> str:
    """A value to offer for run-time argument `name` that the launch (`passed`: its values by
    name) leaves out: a dtype for a pointer, 1.0 for a float, and for an integer the element count
    of the launch's largest tensor (a bound such as `n` is usually that), else the made-up call's
    integer. What the signature's annotation or default says comes first."""
    from .kernel_file import DEFAULT_INT, FLOAT_NAMES
    from .kernel_params import parameter_usage

    param = next((p for p in tc.signature_params(fn) if p.name == name), None)
    default = param.default if param is not None and param.has_default else None
    if isinstance(default, (bool, int, float)):
        return str(default)
    usage = parameter_usage(fn)
    if name in usage.pointers or (name not in usage.integers and "ptr" in name.lower()):
        return "int64" if name in usage.index_pointers else "fp32"
    if FLOAT_NAMES.match(name):
        return "1.0"
    if "stride" in name.lower():
        return "1"
    sizes = [int(v.numel()) for v in passed.values() if hasattr(v, "numel") and hasattr(v, "shape")]
    return str(max(sizes)) if sizes else str(DEFAULT_INT)
