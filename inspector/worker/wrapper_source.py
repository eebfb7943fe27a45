"""What a kernel's wrapper says about its arguments, read from its source (no call): which
parameters it treats as tensors and of what rank, which are strings and their choices, shape lists,
axes, the sizes its shape asserts name, and which of its names the kernel loads from.

`wrapper_calls` makes up a call from what this finds.
"""

from __future__ import annotations

import ast
import inspect
import re
import textwrap
import types
from typing import Any, Callable, NamedTuple

from .. import triton_compat as tc

TENSOR_ATTRIBUTES = {"shape", "stride", "view", "reshape", "dtype", "numel", "contiguous", "device", "size", "dim",
                     "is_contiguous", "element_size", "T", "transpose", "unsqueeze", "squeeze", "ndim", "flatten",
                     "new_empty", "expand", "is_cuda", "data_ptr", "float", "to", "permute", "clone", "detach"}
MAX_RANK = 5


def source_ast(fn: Callable) -> ast.FunctionDef | None:
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):
        return None
    return next((n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))), None)


def mentions(expr: ast.AST, names: set[str]) -> bool:
    return any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(expr))


def aliases(node: ast.AST, names: set[str]) -> set[str]:
    """`names` plus the local names bound to an expression that mentions one of them: the kernel
    picked into a variable (`k = gemm_MX_kernel if mx else gemm_INT_kernel`, or in branches),
    wrapped (`k = torch.library.wrap_triton(kernel)`), unpacked (`fwd, bwd = _build_kernels()`),
    to a fixpoint."""
    names = set(names)
    while True:
        targets = [t for n in ast.walk(node) if isinstance(n, (ast.Assign, ast.AnnAssign)) and n.value is not None
                   and mentions(n.value, names) for t in (n.targets if isinstance(n, ast.Assign) else [n.target])]
        more = {e.id for t in targets for e in (t.elts if isinstance(t, (ast.Tuple, ast.List)) else [t])
                if isinstance(e, ast.Name)}
        if more <= names:
            return names
        names |= more


def launches_kernel(node: ast.AST, names: set[str]) -> bool:
    """Whether the code calls `kernel[grid](...)` (or `kernel.warmup(...)`) for a name in `names`,
    directly, through a local alias, or through a wrapper call (`wrap_triton(kernel)[grid](...)`)."""
    names = aliases(node, names)
    for n in ast.walk(node):
        if isinstance(n, ast.Call):
            f = n.func
            if isinstance(f, ast.Subscript) and (isinstance(f.value, ast.Name) and f.value.id in names
                                                 or isinstance(f.value, ast.Call) and mentions(f.value, names)
                                                 or isinstance(f.value, ast.Attribute) and f.value.attr in names):
                return True
            if isinstance(f, ast.Attribute) and f.attr in ("warmup", "run") and isinstance(f.value, ast.Name) \
                    and f.value.id in names:
                return True
    return False


def called_names(node: ast.AST) -> set[str]:
    return {n.func.id for n in ast.walk(node) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}


def string_choices(module: types.ModuleType, node: ast.FunctionDef) -> dict[str, Any]:
    """Parameters compared with a string, or used as a key of a module-level dict whose keys are
    strings or ints: its first key."""
    out: dict[str, Any] = {}
    for n in ast.walk(node):
        if isinstance(n, ast.Compare) and isinstance(n.left, ast.Name):
            for comp in n.comparators:
                values = comp.elts if isinstance(comp, (ast.Tuple, ast.List, ast.Set)) else [comp]
                strings = [v.value for v in values if isinstance(v, ast.Constant) and isinstance(v.value, str)]
                if strings:
                    out.setdefault(n.left.id, strings[0])
        if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name) and isinstance(n.slice, ast.Name):
            table = getattr(module, n.value.id, None)
            keys = list(table) if isinstance(table, dict) else []
            if keys and (all(isinstance(k, str) for k in keys)
                         or all(isinstance(k, int) and not isinstance(k, bool) for k in keys)):
                out.setdefault(n.slice.id, keys[0])  # a mode name, or an enum's number (gemlite's dtypes)
    return out


def starred_shapes(n: ast.AST) -> list[tuple[str, list[ast.expr]]]:
    """`B, T, H, K, V = *k.shape, u.shape[-1]`: each tensor whose shape a tuple assignment spreads
    with `*`, with the targets its dimensions land in (k: B, T, H, K)."""
    if not (isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Tuple)
            and isinstance(n.value, ast.Tuple)):
        return []
    targets, values = n.targets[0].elts, n.value.elts
    starred = [i for i, v in enumerate(values) if isinstance(v, ast.Starred)]
    if len(starred) != 1 or any(isinstance(t, ast.Starred) for t in targets):
        return []
    i = starred[0]
    inner = values[i].value  # type: ignore[attr-defined]
    if not (isinstance(inner, ast.Attribute) and inner.attr == "shape" and isinstance(inner.value, ast.Name)):
        return []
    rank = len(targets) - (len(values) - 1)
    return [(inner.value.id, targets[i:i + rank])] if rank > 0 else []


def tensor_ranks(node: ast.FunctionDef) -> dict[str, int]:
    """Parameters used as tensors, with the rank their use shows (0 when it does not)."""
    ranks: dict[str, int] = {}
    for n in ast.walk(node):
        for name, dims in starred_shapes(n):
            ranks[name] = max(ranks.get(name, 0), len(dims))
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.attr in TENSOR_ATTRIBUTES:
            ranks.setdefault(n.value.id, 0)
        if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Attribute) and n.value.attr == "shape" \
                and isinstance(n.value.value, ast.Name) and isinstance(n.slice, ast.Constant) \
                and isinstance(n.slice.value, int) and n.slice.value >= 0:
            name = n.value.value.id
            ranks[name] = max(ranks.get(name, 0), n.slice.value + 1)
        if isinstance(n, ast.Assign) and isinstance(n.value, ast.Attribute) and n.value.attr == "shape" \
                and isinstance(n.value.value, ast.Name) and isinstance(n.targets[0], ast.Tuple):
            name = n.value.value.id
            ranks[name] = max(ranks.get(name, 0), len(n.targets[0].elts))
        # x[tile_m, tile_k], scale[tile_r, None], x[tile, :]: indexed by tiles and whole slices (a
        # Helion kernel), one dimension per entry that is not None
        if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name) and isinstance(n.slice, ast.Tuple) \
                and all(isinstance(e, (ast.Name, ast.Slice)) or (isinstance(e, ast.Constant) and e.value is None)
                        for e in n.slice.elts):
            dims = sum(1 for e in n.slice.elts if not isinstance(e, ast.Constant))
            ranks[n.value.id] = max(ranks.get(n.value.id, 0), dims)
        # X.transpose(1, 2), X.size(2), X.stride(3): the rank is above the largest dimension named
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name) \
                and n.func.attr in ("transpose", "size", "stride", "permute", "select", "narrow", "unbind"):
            dims = [a.value for a in n.args if isinstance(a, ast.Constant) and isinstance(a.value, int)]
            dims += [-a.operand.value for a in n.args if isinstance(a, ast.UnaryOp) and isinstance(a.op, ast.USub)
                     and isinstance(a.operand, ast.Constant) and isinstance(a.operand.value, int)]
            if dims:  # dimension d needs rank d + 1; dimension -d needs rank d
                name = n.func.value.id
                ranks[name] = max(ranks.get(name, 0), *(d + 1 if d >= 0 else -d for d in dims))
    # The wrapper's own asserts: `assert w.shape == (N,)` gives a rank; `assert out.shape == x.shape`
    # makes two tensors the same rank.
    same: list[tuple[str, str]] = []
    for n in ast.walk(node):
        if not (isinstance(n, ast.Compare) and len(n.ops) == 1 and isinstance(n.ops[0], ast.Eq)):
            continue
        sides = [n.left, n.comparators[0]]
        shaped = [x.value.id for x in sides if isinstance(x, ast.Attribute) and x.attr == "shape"
                  and isinstance(x.value, ast.Name)]
        tuples = [x for x in sides if isinstance(x, (ast.Tuple, ast.List))]
        if len(shaped) == 1 and tuples:
            ranks[shaped[0]] = max(ranks.get(shaped[0], 0), len(tuples[0].elts))
        elif len(shaped) == 2:
            same.append((shaped[0], shaped[1]))
    for _ in range(len(same)):  # to a fixpoint over chains (a == b, b == c)
        for a, c in same:
            ranks[a] = ranks[c] = max(ranks.get(a, 0), ranks.get(c, 0))
    return ranks


# A runtime scalar that is an extent (M, N, n_cols, seq_len, hidden_size): the tensors' trailing
# dimension, not 1, or the kernel compiles for a degenerate one-element problem.
SIZE_NAMES = re.compile(r"^([A-Z]|[A-Z]_\w+|n|n_\w+|num_\w+|\w*_?size|\w*len\w*|seq\w*|dim|d_\w+)$")


INDEX_NAMES = ("target", "targets", "label", "labels", "index", "indices", "idx", "ids", "position_ids")


def launch_arguments(node: ast.FunctionDef, call: ast.Call) -> tuple[list[ast.expr], list[tuple[str, ast.expr]]]:
    """A launch's positional arguments and (name, value) keywords, with `*args` and `**kwargs` the
    wrapper built as literals opened up (`fwd_args = (q, k, ...)`, `fwd_kwargs = {"N_CTX": n, ...}`
    or `dict(N_CTX=n)`, assigned once in `node`): modelopt's attention passes 40 arguments that way.
    What cannot be read stops the positional list there (the later positions are unknown)."""
    assigned: dict[str, list[ast.expr]] = {}
    for n in ast.walk(node):
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name):
            assigned.setdefault(n.targets[0].id, []).append(n.value)

    def literal(expr: ast.expr) -> ast.expr:
        if isinstance(expr, ast.Name) and len(assigned.get(expr.id, [])) == 1:
            return assigned[expr.id][0]
        return expr

    positional: list[ast.expr] = []
    for a in call.args:
        if not isinstance(a, ast.Starred):
            positional.append(a)
            continue
        value = literal(a.value)
        if not isinstance(value, (ast.Tuple, ast.List)) or any(isinstance(e, ast.Starred) for e in value.elts):
            break
        positional.extend(value.elts)
    keywords: list[tuple[str, ast.expr]] = []
    for k in call.keywords:
        if k.arg:
            keywords.append((k.arg, k.value))
            continue
        value = literal(k.value)
        if isinstance(value, ast.Dict):
            keywords += [(key.value, v) for key, v in zip(value.keys, value.values)
                         if isinstance(key, ast.Constant) and isinstance(key.value, str)]
        elif isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "dict":
            keywords += [(kw.arg, kw.value) for kw in value.keywords if kw.arg]
    return positional, keywords


def kernel_roles(node: ast.FunctionDef, kernel_names: set[str], kernel: Any) -> dict[str, str]:
    """What the wrapper's parameters become in its launch of the kernel: "index" (a pointer whose
    loaded values are indices: int64), "scalar" (a runtime scalar the kernel does not load from)
    or "constexpr" (a compile-time value: a flag or an amount, never a tensor), "block" (a
    constexpr that is a side of a block: `BLOCK_C=channels`); "bits" (packed int32 words, shifted
    and masked), "packed:DTYPE" (values inline assembly packs into registers)."""
    from .kernel_params import parameter_usage
    from .made_up_sizes import block_sides

    jit = tc.innermost_jit(kernel)
    usage = parameter_usage(jit)
    params = tc.signature_params(jit)
    scalars = {p.name for p in params if not p.is_constexpr and p.name not in usage.pointers}
    constexprs = {p.name for p in params if p.is_constexpr}
    sides = block_sides(jit)
    out: dict[str, str] = {}
    kernel_names = aliases(node, kernel_names)
    for n in ast.walk(node):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Subscript) and (
                isinstance(n.func.value, ast.Name) and n.func.value.id in kernel_names
                or isinstance(n.func.value, ast.Call) and mentions(n.func.value, kernel_names)):
            positional, keywords = launch_arguments(node, n)
            passed = list(zip([p.name for p in params], positional)) + keywords
            for name, arg in passed:
                if isinstance(arg, ast.Name):
                    if name in sides:  # a block side, whatever else it is passed as (fairchem's channels)
                        out[arg.id] = "block"
                    elif arg.id in out and out[arg.id] == "block":
                        continue
                    elif name in usage.index_pointers:
                        out[arg.id] = "index"
                    elif name in usage.bits_pointers:
                        out[arg.id] = "bits"
                    elif name in usage.packed_pointers:  # "packed:uint8": the dtype inline assembly takes
                        out[arg.id] = "packed:" + usage.packed_pointers[name]
                    elif name in scalars:
                        out[arg.id] = "scalar"
                    elif name in constexprs:
                        out.setdefault(arg.id, "constexpr")
                    elif name in usage.pointers:
                        out.setdefault(arg.id, "pointer")
    return out


class Dims(NamedTuple):
    """Each tensor parameter's dimensions as the wrapper names them: a symbol (`batch`), an int,
    or None (unnamed)."""

    of: dict[str, list[str | int | None]]


def dim_of(expr: ast.AST) -> str | int | None:
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Constant) and isinstance(expr.value, int) and not isinstance(expr.value, bool):
        return expr.value
    return None


def _shape_of(expr: ast.AST) -> str | None:
    """The tensor whose whole shape `expr` reads: `x.shape` or `x.size()`."""
    if isinstance(expr, ast.Attribute) and expr.attr == "shape" and isinstance(expr.value, ast.Name):
        return expr.value.id
    if isinstance(expr, ast.Call) and not expr.args and isinstance(expr.func, ast.Attribute) \
            and expr.func.attr == "size" and isinstance(expr.func.value, ast.Name):
        return expr.func.value.id
    return None


def _one_dim_of(expr: ast.AST) -> tuple[str, int] | None:
    """(tensor, index) for `x.shape[i]` or `x.size(i)`, i a non-negative int."""
    if isinstance(expr, ast.Subscript) and _shape_of(expr.value) and isinstance(expr.slice, ast.Constant) \
            and isinstance(expr.slice.value, int) and expr.slice.value >= 0:
        return _shape_of(expr.value), expr.slice.value
    if isinstance(expr, ast.Call) and len(expr.args) == 1 and isinstance(expr.func, ast.Attribute) \
            and expr.func.attr == "size" and isinstance(expr.func.value, ast.Name) \
            and isinstance(expr.args[0], ast.Constant) and isinstance(expr.args[0].value, int) and expr.args[0].value >= 0:
        return expr.func.value.id, expr.args[0].value
    return None


def symbolic_dims(node: ast.FunctionDef) -> Dims:
    """Dimensions from how the wrapper unpacks and asserts shapes: `batch, nchunks, nheads, dim =
    states.shape` (or `states.size()`) names states' four dimensions; `assert dA.shape == (batch,
    nheads, nchunks)` gives dA three of them, in that order; `batch = x.shape[0]` names one;
    `assert dt.shape == x.shape` makes dt's the same as x's; `assert k == k2` makes two names one
    dimension (a matmul's inner size). Filled by `shape_from_dims` so that every assert holds."""
    of: dict[str, list[str | int | None]] = {}
    same: list[tuple[str, str]] = []
    singles: list[tuple[str, str, int]] = []
    equal: dict[str, str] = {}  # a name asserted equal to an earlier one -> that one
    for n in ast.walk(node):
        for tensor, targets in starred_shapes(n):
            of.setdefault(tensor, [t.id if isinstance(t, ast.Name) and t.id != "_" else None for t in targets])
        if isinstance(n, ast.Assign) and len(n.targets) == 1:
            target, value = n.targets[0], n.value
            shaped = _shape_of(value)
            if shaped and isinstance(target, ast.Tuple) and not any(isinstance(e, ast.Starred) for e in target.elts):
                names = [e.id if isinstance(e, ast.Name) and e.id != "_" else None for e in target.elts]
                of.setdefault(shaped, names)
            elif isinstance(target, ast.Name) and (one := _one_dim_of(value)) is not None:
                singles.append((one[0], target.id, one[1]))
        if isinstance(n, ast.Compare) and len(n.ops) == 1 and isinstance(n.ops[0], ast.Eq):
            sides = [n.left, n.comparators[0]]
            shaped = [x.value.id for x in sides if isinstance(x, ast.Attribute) and x.attr == "shape"
                      and isinstance(x.value, ast.Name)]
            tuples = [x for x in sides if isinstance(x, (ast.Tuple, ast.List))]
            if len(shaped) == 1 and tuples:
                of.setdefault(shaped[0], [dim_of(e) for e in tuples[0].elts])
            elif len(shaped) == 2:
                same.append((shaped[0], shaped[1]))
            elif all(isinstance(x, ast.Name) for x in sides) and sides[0].id != sides[1].id:
                equal.setdefault(sides[1].id, sides[0].id)
    for tensor, name, index in singles:  # `batch = x.shape[0]`: x's dimension 0 is `batch`
        dims = of.get(tensor)
        if dims is not None and index < len(dims) and dims[index] is None:
            dims[index] = name
    for _ in range(len(same)):
        for a, b in same:
            if a in of and b not in of:
                of[b] = list(of[a])
            elif b in of and a not in of:
                of[a] = list(of[b])
    if equal:
        of = {t: [equal.get(d, d) if isinstance(d, str) else d for d in ds] for t, ds in of.items()}
    return Dims(of)


def shape_from_dims(dims: Dims, name: str, family: dict[int, list[int]], values: dict[str, int]) -> list[int] | None:
    """A shape for tensor `name` consistent with every other tensor's (`values` holds the sizes given
    to symbols so far, filled in as tensors are made): a symbol keeps its size across tensors, a new
    one takes the family's size for its position."""
    mine = dims.of.get(name)
    if not mine or len(mine) > MAX_RANK:
        return None
    # Symbols named first by a tensor whose shape the wrapper unpacks get their sizes from it.
    for other, ds in dims.of.items():
        for i, d in enumerate(ds):
            if isinstance(d, str) and d not in values and len(ds) <= MAX_RANK:
                values[d] = family[len(ds)][i]
    shape = []
    for i, d in enumerate(mine):
        shape.append(d if isinstance(d, int) else values.get(d, family[len(mine)][i]) if d else family[len(mine)][i])
    return shape


SHAPE_FUNCTIONS = {"len", "prod", "tuple", "list"}


AXIS_NAMES = {"dim", "axis"}


# An axis is tried first as the leading one, then as the last: a reduction over a middle or leading
# axis and one over the last often launch different kernels of the same file.
AXIS_CHOICES = (0, -1)


def axis_parameters(node: ast.FunctionDef) -> set[str]:
    """Parameters that name a tensor axis: `dim`/`axis`, or compared with a `.ndim` / `.dim()`."""
    params = {a.arg for a in node.args.args}
    found = params & AXIS_NAMES
    for n in ast.walk(node):
        if isinstance(n, ast.Compare):
            sides = [n.left, *n.comparators]
            if any(isinstance(s, ast.UnaryOp) and isinstance(s.operand, ast.Attribute) and s.operand.attr == "ndim"
                   or isinstance(s, ast.Attribute) and s.attr == "ndim" for s in sides):
                found |= {s.id for s in sides if isinstance(s, ast.Name) and s.id in params}
    return found


def shape_parameters(node: ast.FunctionDef) -> set[str]:
    """Parameters that hold a shape: named `*shape`/`dims`, or passed to `len()` / `math.prod()`."""
    params = {a.arg for a in node.args.args}
    found = {p for p in params if p.endswith("shape") or p in ("dims", "sizes")}
    for n in ast.walk(node):
        if isinstance(n, ast.Call) and n.args and isinstance(n.args[0], ast.Name) and n.args[0].id in params:
            func = n.func.id if isinstance(n.func, ast.Name) else n.func.attr if isinstance(n.func, ast.Attribute) else ""
            if func in SHAPE_FUNCTIONS:
                found.add(n.args[0].id)
    return found
