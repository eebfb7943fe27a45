"""Watching kernels run under Triton's interpreter (TRITON_INTERPRET=1), for `inspector.fixes`:
a candidate fix is checked by running the file's example on the CPU, so we need (a) the values each
launch left in its tensor arguments, to compare a candidate's outputs with the original's, and (b)
whether every hint (`tl.multiple_of`, `tl.max_contiguous`, `tl.max_constancy`) held for the values
that really reached it, on scalars and on blocks (`block_promise_broken`).

Contacts (Triton 3.4 to 3.9 alike):
- `triton.runtime.interpreter.GridExecutor.__call__(*args, **kwargs)` runs every program of one
  launch and copies the arguments back to the device tensors: wrapped to snapshot the tensor
  arguments afterwards.
- `triton.runtime.interpreter._patch_lang(fn) -> scope` swaps the language's builtins for the
  interpreter's before each launch (and `scope.restore()` undoes it); the three hints become
  `_set_attr`, which ignores the values. It is wrapped so that, after it runs, the hints are ours:
  they record the values that break the promise, then do what the interpreter did.
"""

from __future__ import annotations

import contextlib
import inspect
import sys
from dataclasses import dataclass, field
from typing import Any, Iterator


@dataclass
class Broken:
    """A `tl.multiple_of(x, m)` whose `x` held a value that is not a multiple of `m`."""

    file: str
    line: int
    multiple: int
    value: int  # the first such value seen
    count: int = 1  # programs in which it broke
    broke: str = ""  # what the value failed to be: "not a multiple of 4", "not the first of 4 equal values"


def block_promise_broken(kind: str, data: Any, m: int) -> int | None:
    """The first value of a block (last axis the hinted one) that breaks `tl.<kind>(x, m)` as the
    compiler reads it, or None. Along the axis, in groups of m from index 0: `max_contiguous`,
    each group is consecutive values; `max_constancy`, equal values; `multiple_of`, a multiple of
    m at every group's start and wherever a run of consecutive values starts (the compiler reads
    a block's divisibility at the first element of each contiguous run)."""
    import numpy as np

    if m <= 1 or data.shape[-1] == 0:
        return None
    n = data.shape[-1] - data.shape[-1] % m if kind != "multiple_of" else data.shape[-1]
    if kind in ("max_contiguous", "max_constancy") and n:
        groups = data[..., :n].reshape(*data.shape[:-1], n // m, m)
        step = np.arange(m) if kind == "max_contiguous" else np.zeros(m, dtype=np.int64)
        bad = groups != groups[..., :1] + step
        return int(groups[..., :1][bad.any(-1, keepdims=True)].flat[0]) if bad.any() else None
    length = data.shape[-1]
    follows = np.concatenate([np.zeros(data.shape[:-1] + (1,), dtype=bool), data[..., 1:] == data[..., :-1] + 1],
                             axis=-1)
    starts = (np.arange(length) % m == 0) | ~follows
    bad = data[starts & (data % m != 0)]
    return int(bad.flat[0]) if bad.size else None


@dataclass
class Watch:
    """What the interpreter saw while the `watching()` block ran."""

    launches: list[tuple[str, list[Any]]] = field(default_factory=list)  # (kernel name, tensor arguments after)
    promises: int = 0  # hint evaluations checked (tl.multiple_of, tl.max_contiguous, tl.max_constancy)
    unchecked: int = 0  # hints on values the check cannot read (floats)
    broken: dict[tuple[str, int], Broken] = field(default_factory=dict)


def _caller_line() -> tuple[str, int]:
    """The kernel-file line of the `tl.multiple_of` call (the first frame outside Triton)."""
    for frame in inspect.stack()[2:12]:
        name = frame.filename.replace("\\", "/")
        if "/triton/" not in name and not name.endswith(__file__.replace("\\", "/")):
            return frame.filename, frame.lineno
    return "?", 0


@contextlib.contextmanager
def watching() -> Iterator[Watch]:
    """Inside: every interpreted launch and every `tl.multiple_of` evaluation is recorded in the
    Watch. The patches are undone on exit."""
    import numpy as np
    import torch
    import triton.language as tl
    from triton.runtime import interpreter

    watch = Watch()
    original_call = interpreter.GridExecutor.__call__
    original_patch = interpreter._patch_lang

    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        out = original_call(self, *args, **kwargs)
        tensors = [a.detach().clone() for a in (*args, *kwargs.values()) if isinstance(a, torch.Tensor)]
        watch.launches.append((getattr(self.fn, "__name__", "?"), tensors))
        return out

    def record(m: int, value: Any, broke: str) -> None:
        where = _caller_line()
        got = watch.broken.get(where)
        if got is None:
            watch.broken[where] = Broken(where[0], where[1], m, int(value), broke=broke)
        else:
            got.count += 1

    def check(kind: str, input: Any, values: Any) -> None:
        data = np.asarray(input.handle.data)
        vals = values if isinstance(values, (list, tuple)) else [values]
        vals = [int(v.value if isinstance(v, tl.constexpr) else v) for v in vals]
        if data.dtype.kind not in "iub" or not vals or not any(vals):
            watch.unchecked += 1
            return
        watch.promises += 1
        if data.ndim == 0 or data.size == 1:  # a scalar: its value
            if kind == "multiple_of" and vals[0] and int(data.flat[0]) % vals[0]:
                record(vals[0], data.flat[0], f"not a multiple of {vals[0]}")
            return
        per_dim = vals if len(vals) == data.ndim else [1] * (data.ndim - 1) + [vals[-1]]
        for axis, m in enumerate(per_dim):
            bad = block_promise_broken(kind, np.moveaxis(data.astype(np.int64), axis, -1), m)
            if bad is not None:
                record(m, bad, {"multiple_of": f"not a multiple of {m}",
                                "max_contiguous": f"not the first of {m} consecutive values",
                                "max_constancy": f"not the first of {m} equal values"}[kind])
                return

    def patch_lang(fn: Any) -> Any:
        scope = original_patch(fn)
        for lang in {id(v): v for v in fn.__globals__.values() if inspect.ismodule(v) and v in (tl, tl.core)}.values():
            for kind in ("multiple_of", "max_contiguous", "max_constancy"):
                was = getattr(lang, kind)

                def hinted(input: Any, values: Any, _was: Any = was, _kind: str = kind, **kw: Any) -> Any:
                    if isinstance(input, tl.tensor):
                        check(_kind, input, values)
                    return _was(input, values, **kw)

                scope.set_attr(lang, kind, hinted)
        return scope

    interpreter.GridExecutor.__call__ = call
    interpreter._patch_lang = patch_lang
    try:
        yield watch
    finally:
        interpreter.GridExecutor.__call__ = original_call
        interpreter._patch_lang = original_patch

