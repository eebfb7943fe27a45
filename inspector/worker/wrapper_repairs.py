"""Made-up wrapper arguments mended from the wrapper's own checks.

A wrapper often says what it wants before it launches: `if n.numel() != 1: raise ValueError(
"must be a single-element tensor")`, `if ids.dtype.is_floating_point: raise TypeError(...)`,
`assert x.dim() == 3`. When a made-up call stops on such a check, the parameters the check (the
`if` around the `raise`, the `assert`, else the statement that failed) names are given, one at a
time, the variants its words and code ask for first (one element, integers, another rank, half
precision), then the rest. A variant that gets the call past that line is kept, and the next check
is the next step; `MAX_REPAIRS` calls in all.
"""

from __future__ import annotations

import ast
import re
import traceback
from typing import Any, Callable, Iterator

from .made_up_sizes import made_by
from .wrapper_source import source_ast

MAX_REPAIRS = 40


def failing_check(fn: Callable, err: BaseException) -> tuple[int, ast.AST] | None:
    """(file line, the condition or statement) where `err` left `fn`'s own code, or None when it
    came from elsewhere (another function's check is not this wrapper's)."""
    code = getattr(fn, "__code__", None)
    node = source_ast(fn)
    if code is None or node is None:
        return None
    lines = [f.lineno for f in traceback.extract_tb(err.__traceback__)
             if f.filename == code.co_filename and f.name == code.co_name and f.lineno is not None]
    if not lines:
        return None
    line = lines[-1]
    relative = line - code.co_firstlineno + 1
    parents = {child: parent for parent in ast.walk(node) for child in ast.iter_child_nodes(parent)}
    stmt = next((n for n in ast.walk(node) if isinstance(n, ast.stmt) and n.lineno == relative
                 and not isinstance(n, (ast.FunctionDef, ast.If, ast.For, ast.While, ast.With))), None)
    if stmt is None:
        return None
    if isinstance(stmt, ast.Assert):
        return line, stmt.test
    if isinstance(stmt, ast.Raise) and isinstance(parents.get(stmt), ast.If):
        return line, parents[stmt].test  # type: ignore[attr-defined]
    return line, stmt


def _variants(value: Any, hint: str, family: dict[int, list[int]], others: list[Any]) -> list[Any]:
    """Other made-up values for a parameter, those the check's words and code ask for first.
    `others`: the other tensors the check names (`a.shape[0] == b.numel()`, `x.dtype == w.dtype`):
    their shapes, the leading and trailing parts of them, their dtypes."""
    import torch

    if isinstance(value, torch.Tensor):
        shape = list(value.shape)
        make = lambda s, d: torch.empty(s, dtype=d, device="meta")  # noqa: E731
        ints = [make(shape, torch.int64), make(shape, torch.int32)]
        one = [make([1], torch.int64), make([1], value.dtype), make([], torch.int64)]
        halves = [make(shape, torch.float16), make(shape, torch.bfloat16), make(shape, torch.float32)]
        byte = [make(shape, torch.uint8), make(shape, torch.int8)]
        words = hint.lower()
        wanted = [int(n) for n in re.findall(r"expected (\d)\b", words)]  # `a, b, c = x.shape`
        ranks = [make(family[r], value.dtype) for r in [*wanted, 1, 2, 3, 4] if r in family and len(family[r]) != len(shape)]
        related = [make(list(o.shape), value.dtype) for o in others]
        related += [make(list(o.shape[:k]), value.dtype) for o in others for k in range(1, o.dim())]
        related += [make(list(o.shape[k:]), value.dtype) for o in others for k in range(1, o.dim())]
        related += [make([o.numel(), *shape[1:]], value.dtype) for o in others]
        # packed or grouped: a dimension of another divided (`zeros.shape[1] == M // 8`, K // group)
        related += [make([*o.shape[:-1], o.shape[-1] // d], value.dtype) for d in (8, 2, 4) for o in others
                    if o.dim() and o.shape[-1] % d == 0]
        related += [make([o.shape[0] // d, *o.shape[1:]], value.dtype) for d in (128, 64, 32) for o in others
                    if o.dim() and o.shape[0] % d == 0]
        same_type = [make(shape, o.dtype) for o in others]
        order = []
        if "dtype" in words and others:
            order += same_type
        if any(w in words for w in ("shape", "numel", "size(", "len(")) and others:
            order += related
        if any(w in words for w in ("single", "one element", "numel", "scalar", "item")):
            order += one
        if any(w in words for w in ("byte", "element_size", "uint8", "int8")):
            order += byte
        if any(w in words for w in ("int", "long", "index", "floating_point")):
            order += ints
        if any(w in words for w in ("dim", "ndim", "rank", "unpack", "shape")):
            order += ranks
        if any(w in words for w in ("half", "fp16", "bf16", "bfloat", "float16")):
            order += halves
        candidates = order + ints + one + ranks + related + same_type + halves + byte
    elif isinstance(value, bool):
        candidates = [not value]
    elif isinstance(value, int):
        candidates = [1, 0, 16, 128, family[1][0]]
    elif isinstance(value, float):
        candidates = [0.0, 1.0]
    elif value is None:
        candidates = [torch.empty(family[2], dtype=torch.float32, device="meta")]
    else:
        return []
    seen, out = set(), []
    for c in candidates:
        key = (tuple(c.shape), str(c.dtype)) if isinstance(c, torch.Tensor) else (type(c), c)
        same = isinstance(value, torch.Tensor) and key == (tuple(value.shape), str(value.dtype))
        if key not in seen and not same and not (value is not None and not isinstance(value, torch.Tensor)
                                                 and c == value):
            seen.add(key)
            out.append(c)
    return out


def _parameters_behind(fn_node: ast.AST, names: list[str], params: list[str]) -> list[str]:
    """The parameters `names` are, or were assigned from (`x = expert_output.contiguous()`)."""
    assigned: dict[str, list[ast.expr]] = {}
    for n in ast.walk(fn_node):
        if isinstance(n, ast.Assign):
            for t in n.targets:
                if isinstance(t, ast.Name):
                    assigned.setdefault(t.id, []).append(n.value)
    out: list[str] = []
    todo, seen = list(names), set()
    while todo:
        name = todo.pop(0)
        if name in seen:
            continue
        seen.add(name)
        if name in params:
            out.append(name)
        todo += [m.id for v in assigned.get(name, []) for m in ast.walk(v) if isinstance(m, ast.Name)]
    return list(dict.fromkeys(out))


def repairs(fn: Callable, args: list[Any], err: BaseException,
            family: dict[int, list[int]]) -> Iterator[tuple[int, list[Any]]]:
    """(the line the call stopped at, arguments to try next), each a single change of a parameter
    the failing check names."""
    import inspect

    found = failing_check(fn, err)
    if found is None:
        return
    import torch

    line, check = found
    params = [p.name for p in inspect.signature(fn).parameters.values()]
    mentioned = list(dict.fromkeys(n.id for n in ast.walk(check) if isinstance(n, ast.Name)))
    named = [n for n in _parameters_behind(source_ast(fn), mentioned, params) if params.index(n) < len(args)]
    hint = f"{err} {ast.unparse(check)}"
    tied = _tied(source_ast(fn), params)
    for name in named:
        i = params.index(name)
        others = [args[params.index(o)] for o in named if o != name and isinstance(args[params.index(o)], torch.Tensor)]
        for variant in _variants(args[i], hint, family, others):
            changed = [*args[:i], variant, *args[i + 1:]]
            if isinstance(variant, torch.Tensor) and isinstance(args[i], torch.Tensor):
                for attr in ("shape", "dtype"):
                    if getattr(variant, attr) == getattr(args[i], attr):
                        continue
                    for other in tied.get((attr, name), ()):  # `a.shape == b.shape` elsewhere holds still
                        j = params.index(other)
                        if j < len(changed) and isinstance(changed[j], torch.Tensor):
                            t = changed[j]
                            changed[j] = torch.empty(variant.shape if attr == "shape" else t.shape,
                                                     dtype=variant.dtype if attr == "dtype" else t.dtype,
                                                     device="meta")
            yield line, changed


def _tied(fn_node: ast.AST | None, params: list[str]) -> dict[tuple[str, str], set[str]]:
    """(attribute, parameter) -> the parameters the wrapper checks equal to it in that attribute
    (`assert a.shape == b.shape == c.shape`, `a.dtype != b.dtype: raise`)."""
    out: dict[tuple[str, str], set[str]] = {}
    for n in ast.walk(fn_node) if fn_node is not None else ():
        if not isinstance(n, ast.Compare) or not all(isinstance(op, (ast.Eq, ast.NotEq)) for op in n.ops):
            continue
        sides = [n.left, *n.comparators]
        if not all(isinstance(x, ast.Attribute) and isinstance(x.value, ast.Name) for x in sides):
            continue
        attrs = {x.attr for x in sides}  # type: ignore[attr-defined]
        names = [x.value.id for x in sides if x.value.id in params]  # type: ignore[attr-defined]
        if len(attrs) == 1 and attrs <= {"shape", "dtype"} and len(names) == len(sides):
            attr = attrs.pop()
            for a in names:
                out.setdefault((attr, a), set()).update(b for b in names if b != a)
    return out


def mend(fn: Callable, args: list[Any], err: BaseException, family: dict[int, list[int]],
         launched: Callable[[], bool]) -> tuple[bool, BaseException | None, list[Any]]:
    """Call `fn` with arguments mended from its checks until it launches the kernel: (launched,
    the last error, the arguments last called with). A change that gets past the check is kept; one that breaks an earlier check
    (`a.shape == b.shape` before `a.shape[0] == c.shape[2]`) gets one more change on top, for
    the earlier check, before it is given up."""
    budget = [MAX_REPAIRS]

    def outcome(candidate: list[Any]) -> tuple[str, BaseException | None, int | None]:
        budget[0] -= 1
        try:
            with made_by(fn, candidate):
                fn(*candidate)
        except Exception as e:  # noqa: BLE001 - a check further on, or the same one again
            if launched():
                return "launched", None, None
            where = failing_check(fn, e)
            return "error", e, where[0] if where else None
        return ("launched" if launched() else "returned"), None, None

    while budget[0] > 0:
        stuck = failing_check(fn, err)
        line = stuck[0] if stuck else 0
        ahead: tuple[list[Any], BaseException] | None = None
        behind: list[tuple[list[Any], BaseException]] = []
        for first in (True, False):
            starts = [(args, err)] if first else behind[:3]
            for base, base_err in starts:
                for _, candidate in repairs(fn, base, base_err, family):
                    if budget[0] <= 0:
                        break
                    kind, e, where = outcome(candidate)
                    if kind == "launched":
                        return True, None, candidate
                    if kind == "returned":
                        # past the checks, but the wrapper took a path without the kernel: often one
                        # for small sizes (`if tokens < 32: eager`): the same call, larger
                        larger = _larger(fn, candidate, launched)
                        return larger is not None, None, larger or candidate
                    if where is None or where > line:
                        ahead = (candidate, e)  # type: ignore[assignment]
                        break
                    if first and where < line:
                        behind.append((candidate, e))  # type: ignore[arg-type]
                if ahead:
                    break
            if ahead:
                break
        if ahead is None:
            break
        args, err = ahead
    return launched(), err, args


def _larger(fn: Callable, args: list[Any], launched: Callable[[], bool]) -> list[Any] | None:
    """Call `fn` with every tensor's leading dimension scaled, together (the tensors sharing a
    token count keep sharing it); the arguments that launched the kernel, or None."""
    import torch

    for factor in (16, 256):
        scaled = [torch.empty([a.shape[0] * factor, *a.shape[1:]], dtype=a.dtype, device="meta")
                  if isinstance(a, torch.Tensor) and a.dim() > 1 else a for a in args]
        try:
            with made_by(fn, scaled):
                fn(*scaled)
        except Exception:  # noqa: BLE001 - larger sizes the wrapper refuses
            pass
        if launched():
            return scaled
    return None
