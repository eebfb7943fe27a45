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
import io
import re
import shutil
import tempfile
from typing import Any, Callable

from .. import triton_compat as tc
from ..record import Inspection
from . import kernel_file as kf
from .retyping import DOT_TOO_SMALL, Retyping, smaller_size

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


# Triton refusing code it no longer takes (block pointers, removed in 3.9): about the release, not
# the values; the compile reports it, and an older release beside it may take it (`compile.api`).
_RELEASE_REFUSAL = re.compile(r"\b(have|has) been removed\b|no longer supported", re.I)
MADE_UP_BLOCK_LIMIT = 1 << 20  # Triton's most elements in a block (what "numel ... exceeds" names)
# Sizes Triton refuses: a block over its element limit, more shared memory than the target has.
_TOO_LARGE = re.compile(r"numel \(\d+\) exceeds|out of resource", re.I)
# `tl.dot` on a block side under Triton's smallest (semantic.py: "Input shapes should have M >= 16,
# N >= 16 and K >= 16", 3.6-3.9); the node is the dot, whose operands' extents it does not name.


def _shrunk(values: dict[str, str], tried: set[tuple], numel: int) -> dict[str, str] | None:
    """The values with the largest size (32 or more) made smaller for a block of `numel` elements
    (`retyping.smaller_size`: a made-up block far past what real code launches compiles for
    minutes); None if no size is."""
    sizes = [(int(v), n) for n, v in values.items() if v.isdigit() and int(v) >= 32]
    if not sizes:
        return None
    value, name = max(sizes)
    out = {**values, name: str(min(smaller_size(value, numel), value // 2))}
    return None if tuple(sorted(out.items())) in tried else out


def _grown_for_dot(values: dict[str, str], fn: Any, text: str, tried: set[tuple]) -> dict[str, str] | None:
    """The values with every made-up block extent under the smallest side `tl.dot` takes raised to
    it (mlstm's `siz_b_DHQK` offered as 1: a 64 x 1 by 1 x 64 dot); None when none is under it."""
    from .made_up_sizes import block_sides

    least = DOT_TOO_SMALL.search(text)
    if not least:
        return None
    side = max(int(g) for g in least.groups())
    extents = block_sides(fn)
    out = {n: (str(side) if n in extents and v.isdigit() and int(v) < side else v) for n, v in values.items()}
    return None if out == values or tuple(sorted(out.items())) in tried else out


def fitted(values: dict[str, str], fn: Any) -> dict[str, str]:
    """The values with the largest made-up block extents halved (16 at least) until the largest
    block the kernel broadcasts them to is at most `made_up_sizes.max_block` elements:
    three made-up sides of 256 make a 16M-element block that Triton refuses, and the 1M-element
    one just under its limit compiles for minutes. Real launches of such kernels use a few
    thousand elements."""
    from .made_up_sizes import arange_extents, block_elements, block_rank, max_block

    extents, rank = arange_extents(fn), block_rank(fn)
    sizes = {n: int(v) for n, v in values.items() if n in extents and v.isdigit()}
    while block_elements(sizes, extents, rank) > max_block(rank):
        value, name = max((v, n) for n, v in sizes.items())
        if value <= 16:
            break
        sizes[name] = max(16, value // 2)
    return {**values, **{n: str(v) for n, v in sizes.items()}}


def checked(missing: list[dict[str, Any]], fn: Any, compile_with: Callable[[dict[str, str]], None]) -> str:
    """Compile with the suggested values (`compile_with(values)` raises what Triton raised),
    changing the one a failure points at (the largest size, when Triton says a block is too
    large); updates each entry's "suggested" in place. Returns "ok" (they compile), "other"
    (Triton refused something that is not about these values: the code itself, or the release)
    or "values" (no alternative left, or `MAX_CHECKS` compiles spent)."""
    values = fitted({m["name"]: str(m["suggested"]) for m in missing}, fn)
    left = {name: _alternatives(v) for name, v in values.items()}
    tried: set[tuple] = set()
    outcome = "values"
    for _ in range(MAX_CHECKS):
        tried.add(tuple(sorted(values.items())))
        try:
            compile_with(values)
        except Exception as e:  # noqa: BLE001 - Triton's refusal, read below
            text = str(e)
            if _RELEASE_REFUSAL.search(text):
                outcome = "other"
                break
            big = _TOO_LARGE.search(text)
            numel = int(m.group(1)) if (m := re.search(r"numel \((\d+)\)", text)) else 4 * MADE_UP_BLOCK_LIMIT
            if big and (smaller := _shrunk(values, tried, numel)):
                values = smaller
                continue
            if grown := _grown_for_dot(values, fn, text, tried):
                values = grown
                continue
            node = tc.compilation_error_node(e, fn)
            named = [n.id for n in ast.walk(node) if isinstance(n, ast.Name) and n.id in values] if node else []
            name = next((n for n in named if left[n]), None)
            if name is None:  # not about these values (the pointers' dtypes were tried already)
                outcome = "other" if not named else "values"
                break
            values[name] = left[name].pop(0)
            continue
        outcome = "ok"
        break
    for m in missing:
        m["suggested"] = values[m["name"]]
    return outcome


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


def check_offer(e: kf.KernelFileError, info: kf.KernelInfo, overrides: dict[str, Any], options: dict[str, Any],
                fns: list, compile_call: Callable[..., Any]) -> None:
    """Compile with the values the error offers for the missing constexprs, changed where Triton
    points at one (`checked`), and say whether they compile (`details["checked"]`; `details["check"]`
    is `checked`'s outcome).
    `compile_call` is the inspection's (`inspection._compile_call`: retypes pointers as it goes)."""
    retyping = Retyping(fixed=set(overrides) | {m["name"] for m in e.details["missing"]})  # values: `checked`'s
    # an autotuned kernel's configs give some constexprs: the first one's, as the compile will
    config = (tc.autotune_configs(info.obj) or [None])[0]

    def compile_with(values: dict[str, str]) -> None:
        given = {**overrides, **{k: kf.parse_value(v, for_const=True) for k, v in values.items()}}
        launch = kf.signature_call(info, given)
        made = dict(zip(info.jit.arg_names, launch.args)) | launch.kwargs
        compile_call(launch, given, options, config, retyping, made, fns)

    # In a cache of its own, and forgotten after: the compile that follows must run ptxas itself,
    # whose log gives the record its spills (a cached kernel has no log).
    scratch = tempfile.mkdtemp(prefix="inspector-check-")
    try:  # a check that cannot run leaves the offer unchecked
        with tc.use_cache_dir(scratch):
            outcome = checked(e.details["missing"], info.jit, compile_with)
    except Exception:  # noqa: BLE001
        outcome = "values"
    finally:
        tc.clear_jit_caches([f for f in [info.jit, *fns] if hasattr(f, "device_caches")])
        shutil.rmtree(scratch, ignore_errors=True)
    e.details["checked"] = outcome == "ok"
    e.details["check"] = outcome
    if outcome == "ok":
        e.message += " The values offered compile (checked)."
        e.args = (e.message,)


def made_up_call(rec: Inspection, info: kf.KernelInfo, missing: list[dict[str, Any]], overrides: dict[str, Any],
                 ran: str, log: io.StringIO, checked: bool = True) -> tuple[tc.Launch, dict[str, Any]]:
    """(the call made from the kernel's code, the made-up constexprs) with the values offered for
    what nothing gave (`check_offer`), checked or refused for a reason that is not theirs: a bare
    kernel opens, or fails at the line Triton names, and its record says which values were made
    up (`made_up`, in its note and the tried call)."""
    values = {m["name"]: kf.parse_value(str(m["suggested"]), for_const=True) for m in missing}
    rec.made_up = [dict(m) for m in missing]
    rec.call_origin = "signature"
    log.write(f"note: nothing the file ran launched {rec.kernel} ({ran or 'nothing ran'}): compiled with made-up "
              f"constexprs {', '.join(f'{k}={v}' for k, v in values.items())}, from how its code uses each "
              f"({'checked by compiling' if checked else 'the compile refused something else first'}); give real "
              "ones with --const NAME=VALUE\n")
    return kf.signature_call(info, {**overrides, **values}, ran), values
