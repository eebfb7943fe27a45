"""Watching kernels run under Triton's interpreter (TRITON_INTERPRET=1), for `inspector.fixes`:
a candidate fix is checked by running the file's example on the CPU, so we need (a) the values each
launch left in its tensor arguments, to compare a candidate's outputs with the original's, and (b)
whether every `tl.multiple_of(x, m)` promise held for the values that really reached it.

Contacts (Triton 3.4 to 3.9 alike):
- `triton.runtime.interpreter.GridExecutor.__call__(*args, **kwargs)` runs every program of one
  launch and copies the arguments back to the device tensors: wrapped to snapshot the tensor
  arguments afterwards.
- `triton.runtime.interpreter._patch_lang(fn) -> scope` swaps the language's builtins for the
  interpreter's before each launch (and `scope.restore()` undoes it); `tl.multiple_of` becomes
  `_set_attr`, which ignores the values. It is wrapped so that, after it runs, `multiple_of` is
  ours: it records the values that break the promise, then does what the interpreter did.
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


@dataclass
class Watch:
    """What the interpreter saw while the `watching()` block ran."""

    launches: list[tuple[str, list[Any]]] = field(default_factory=list)  # (kernel name, tensor arguments after)
    promises: int = 0  # tl.multiple_of calls on scalars, checked
    unchecked: int = 0  # tl.multiple_of calls on blocks (see `watching`)
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

    def patch_lang(fn: Any) -> Any:
        scope = original_patch(fn)
        for lang in {id(v): v for v in fn.__globals__.values() if inspect.ismodule(v) and v in (tl, tl.core)}.values():
            was = getattr(lang, "multiple_of")

            def multiple_of(input: Any, values: Any, _was: Any = was, **kw: Any) -> Any:
                if isinstance(input, tl.tensor):
                    data = np.asarray(input.handle.data)
                    vals = values if isinstance(values, (list, tuple)) else [values]
                    vals = [int(v.value if isinstance(v, tl.constexpr) else v) for v in vals]
                    # A scalar's promise is about its value. On a block (`offs`), Triton reads the
                    # divisibility of each contiguous run's first element, which values alone
                    # cannot tell apart: those are not checked (`unchecked`).
                    if data.dtype.kind not in "iu" or data.size != 1 or not vals or not vals[0]:
                        watch.unchecked += 1
                    else:
                        watch.promises += 1
                        m = vals[0]
                        bad = data[(data % m) != 0]
                        if bad.size:
                            where = _caller_line()
                            got = watch.broken.get(where)
                            if got is None:
                                watch.broken[where] = Broken(where[0], where[1], m, int(bad.flat[0]))
                            else:
                                got.count += 1
                return _was(input, values, **kw)

            scope.set_attr(lang, "multiple_of", multiple_of)
        return scope

    interpreter.GridExecutor.__call__ = call
    interpreter._patch_lang = patch_lang
    try:
        yield watch
    finally:
        interpreter.GridExecutor.__call__ = original_call
        interpreter._patch_lang = original_patch

