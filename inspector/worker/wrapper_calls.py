"""Calling a kernel's own Python wrapper when nothing in the file calls it.

Library files (an op inside a package) define a kernel and the wrapper that launches it
(`rms_norm_forward(X, W, eps, offset, casting_mode, row_mode)`), or a `torch.autograd.Function`
whose `forward` does, but never call either. The wrapper knows the real call: which constexprs
(block sizes from the row length, modes from strings), which num_warps, which grid. So we call it
with made-up arguments, read from how the wrapper uses each parameter (`wrapper_source` reads it):

- a tensor when the wrapper reads `.shape`, `.stride()`, `.view()`, `.dtype`... of it, indexes it,
  or hands it to torch (its rank from `a, b = X.shape` or `X.shape[2]`);
- a string when it is compared with strings or looked up in a module-level dict with string keys
  (the first such value); a tensor when the kernel loads from what it is passed to, whatever its
  name (`alpha` held on the device); a bool, float or int from its annotation or its name;
- a shape list for `normalized_shape`-like parameters (passed to `len()` / `math.prod()`), an axis
  for `dim`/`axis` (0, then -1), "off" (False/0) for values handed to a constexpr, and the tensors'
  trailing size for extents (M, N, n_cols) the kernel or only its grid takes;
- a tensor for anything else.
Tensors are meta tensors of one of a few shape families (the last dimension the same for every
tensor, so shape checks between X and W hold) and dtypes (fp32, then bf16: not fp16 first for
`tl.dot` kernels, since wrappers such as gemlite's pass a dtype enum that fp32 matches; bf16
first for a kernel whose dot asks for fp32's full precision, `kernel_file.IEEE_DOT`), tried in
turn until a launch of the kernel is recorded. The first launch recorded wins, unless its blocks
make a tile no caller would launch
(`BLOCK_DMODEL = q.shape[-1]` given 4096 by the first family: a 128 x 4096 attention tile whose
compile runs for minutes and out of memory); then the next family whose tile is smaller wins.
Failures are returned, not raised.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import inspect
import itertools
import re
import types
import typing
from typing import Any, Callable, NamedTuple

from .. import triton_compat as tc
from . import kernel_builders
from .kernel_file import IEEE_DOT, multiplies_tiles
from .made_up_sizes import (arange_extents, max_block, block_rank, launch_shrunk, made_by, mark_derived, tile,
                            tile_shrunk, unrolled_too_far)
from .wrapper_repairs import mend
from .wrapper_source import (AXIS_CHOICES, INDEX_NAMES, MAX_RANK, SIZE_NAMES, axis_parameters, called_names,
                             kernel_roles, launches_kernel, shape_from_dims, shape_parameters, source_ast,
                             string_choices, symbolic_dims, tensor_ranks)

# Shapes by rank; the second family shares its last dimension across every rank.
# 5-D: a paged KV cache (blocks, kv heads, head_dim / x, block_size, x).
SHAPE_FAMILIES = (
    {1: [4096], 2: [1024, 4096], 3: [4, 256, 4096], 4: [2, 8, 256, 128], 5: [16, 8, 16, 16, 8]},  # 4-D: heads
    {1: [128], 2: [256, 128], 3: [4, 256, 128], 4: [2, 8, 256, 128], 5: [16, 8, 16, 16, 8]},
    # Rotary tables: (seqlen, head_dim / 2) beside (batch, seqlen, heads, head_dim).
    {1: [64], 2: [256, 64], 3: [4, 256, 64], 4: [2, 256, 8, 128], 5: [16, 8, 16, 16, 8]},
    # Tried only after the compiler refused a call of the families above (`call_wrappers(after=)`),
    # so a file's first call stays theirs. Partial rotary tables (rope_dim < head_dim, the rest
    # passed through: DeepSeek's MLA, GPT-NeoX): (batch, seqlen, rope_dim / 2) beside (batch, heads,
    # seqlen, head_dim).
    {1: [32], 2: [256, 32], 3: [4, 256, 32], 4: [2, 8, 256, 128], 5: [16, 8, 16, 16, 8]},
)
FIRST_FAMILIES = 3  # the families a wrapper is called with before any compile
BLOCK_SIDE = 64  # a wrapper's number that becomes a block side of the kernel
MAX_ATTEMPTS = 4

class AutogradContext(types.SimpleNamespace):
    """The `ctx` of an autograd Function's forward, when we call it directly."""

    needs_input_grad = (True,) * 16
    materialize_grads = True

    def save_for_backward(self, *tensors: Any) -> None:
        self.saved_tensors = tensors

    def mark_dirty(self, *args: Any) -> None:
        pass

    def mark_non_differentiable(self, *args: Any) -> None:
        pass

    def set_materialize_grads(self, value: bool) -> None:
        pass


def wrappers_of(module: types.ModuleType, kernel: Any, module_name: str = "__main__") -> list[tuple[str, Callable, bool]]:
    """(name, callable, takes_ctx) for the file's functions that launch `kernel`, then the autograd
    Functions' forwards that launch it or call such a function; forwards first by name."""
    # the names it is bound to here, and its own (`kernels.norm.rms_norm_kernel[grid](...)`)
    names = {n for n, v in vars(module).items() if v is kernel} | {tc.innermost_jit(kernel).__name__}
    # ... and the module-level tables holding it (`FNS[name]["update"][grid](...)`, a kernel per mode)
    names |= {n for n, v in vars(module).items() if _holds(v, kernel)}
    # ... and the functions that define it (`kernel_builders`: `fwd, bwd = _build_kernels()`)
    if not any(v is kernel for v in vars(module).values()):
        names |= set(kernel_builders.builders(_source_of(module)))
    functions = {name: fn for name, obj in vars(module).items() if (fn := _function_of(obj, module_name)) is not None}
    direct: dict[str, Callable] = {}
    for name, fn in functions.items():
        node = source_ast(fn)
        if node is not None and launches_kernel(node, names):
            direct[name] = fn
    # One level up: a function that calls a launching one (a public wrapper around a custom op).
    callers = {name: fn for name, fn in functions.items() if name not in direct
               and (node := source_ast(fn)) is not None and called_names(node) & set(direct)}
    found: list[tuple[str, Callable, bool]] = [(n, f, False) for n, f in {**direct, **callers}.items()]
    for name, obj in vars(module).items():
        forward = getattr(obj, "forward", None) if inspect.isclass(obj) and obj.__module__ == module_name else None
        if forward is None or not inspect.isfunction(forward) or forward in direct.values():
            continue  # a module function a class merely names (`forward = gemm_forward`) is tried as itself
        node = source_ast(forward)
        if node is not None and (launches_kernel(node, names) or called_names(node) & set(direct)):
            found.append((f"{name}.forward", forward, _is_autograd_function(obj)))
    # forwards first, then the launching functions, then their callers (a stable sort keeps that order)
    return sorted(found, key=lambda item: ("forward" not in item[0].lower(), item[2]))


def _source_of(module: types.ModuleType) -> str:
    try:
        return inspect.getsource(module)
    except (OSError, TypeError):
        return ""


def _holds(table: Any, kernel: Any, depth: int = 2) -> bool:
    """Whether a dict, list or tuple holds `kernel`, a level or two down."""
    if depth == 0 or not isinstance(table, (dict, list, tuple)):
        return False
    values = table.values() if isinstance(table, dict) else table
    return any(v is kernel or _holds(v, kernel, depth - 1) for v in values)


def _function_of(obj: Any, module_name: str = "__main__") -> Callable | None:
    """The Python function of a module-level callable defined in the file: a plain function, or the
    function under a decorator: `functools.wraps` (`__wrapped__`), `torch.library.custom_op` /
    `triton_op` (`_init_fn`), or a library's own decorator that keeps it in a closure (flash-attn's
    `triton_op` wraps it in a `backend_fn`)."""
    todo, seen = [obj], set()
    while todo and len(seen) < 8:
        x = todo.pop(0)
        if id(x) in seen:
            continue
        seen.add(id(x))
        if inspect.isfunction(x) and x.__module__ == module_name:
            return x
        todo += [v for v in (getattr(x, "_init_fn", None), getattr(x, "__wrapped__", None)) if v is not None]
        if inspect.isfunction(x):
            todo += [c.cell_contents for c in (x.__closure__ or ()) if _filled(c) and callable(c.cell_contents)]
    return None


def _filled(cell: Any) -> bool:
    try:
        cell.cell_contents
    except ValueError:
        return False
    return True


def _is_autograd_function(cls: type) -> bool:
    """Whether `cls.forward` takes a ctx first: a `torch.autograd.Function` (any class whose
    forward's first parameter is named ctx counts too)."""
    import torch

    if issubclass(cls, torch.autograd.Function):
        return True
    params = list(inspect.signature(cls.forward).parameters)
    return bool(params) and params[0] == "ctx"


TENSOR_SEQUENCE = re.compile(r"^(typing\.|collections\.abc\.)?(Sequence|Iterable|list|List|tuple|Tuple)\[.*Tensor")


def _tensor_sequence(param: inspect.Parameter) -> bool:
    """Whether the annotation says a sequence of tensors (`Sequence[torch.Tensor]`, `list[Tensor]`)."""
    ann = param.annotation
    text = ann if isinstance(ann, str) else "" if ann is inspect.Parameter.empty else repr(ann)
    return bool(TENSOR_SEQUENCE.match(text.replace("torch.", "")))


def _scalar_annotation(param: inspect.Parameter) -> bool:
    """Whether the annotation says a number (`scale: Optional[float] = None`), not a tensor."""
    ann = param.annotation
    text = ann if isinstance(ann, str) else "" if ann is inspect.Parameter.empty else repr(ann)
    return bool(re.search(r"\b(float|int)\b", text)) and "Tensor" not in text


def _scalar(param: inspect.Parameter) -> Any:
    """A value for a parameter that is not a tensor, from its annotation or name; None if neither says."""
    from .kernel_file import FLOAT_NAMES

    ann = param.annotation
    if getattr(ann, "__origin__", None) is typing.Union:  # Optional[float]: the type it is when given
        ann = next((a for a in ann.__args__ if a is not type(None)), ann)
    ann = ann if isinstance(ann, str) else getattr(ann, "__name__", "")
    if ann.split(".")[-1] == "Tensor":  # `scale: torch.Tensor`: the annotation outranks the name
        return None
    ann = re.sub(r"^(typing\.)?Optional\[(\w+)\]$|^(\w+) \| None$", lambda m: m.group(2) or m.group(3), ann)
    low = param.name.lower()
    if ann == "bool" or low.startswith(("is_", "use_", "has_", "in_place", "inplace", "return_")):
        return False
    if ann == "float" or FLOAT_NAMES.match(param.name) or low in ("offset", "eps"):
        return 1e-6 if "eps" in low else 0.0
    if ann == "int" or low.startswith(("num_", "n_")) or low.endswith(("_size", "_dim")):
        # a bit width (`mse_bits`, `nbits`: lmcache's `n_centroids = 2**mse_bits`, quantizers'
        # `maxq = 2**bits - 1`) is a few bits, as real quantizers use; 64 overflows int32
        return 4 if "warps" in low or re.search(r"bits?$|^bits?_|_bits?_", low) else 1024 if "block" in low else 64
    if ann == "str":
        return ""
    return None


def _arguments(module: types.ModuleType, fn: Callable, family: dict[int, list[int]], dtype: Any,
               takes_ctx: bool, kernel: Any = None, axis: int = AXIS_CHOICES[0],
               fill_optional: bool = False) -> list[Any] | None:
    """Made-up arguments for wrapper `fn` (see the module docstring). `fill_optional`: a parameter
    that defaults to None but is used as a tensor gets one too."""
    import torch

    from .kernel_file import FLOAT_NAMES

    node = source_ast(fn)
    if node is None:
        return None
    strings = string_choices(module, node)
    ranks = tensor_ranks(node)
    optional = {n.left.id for n in ast.walk(node) if isinstance(n, ast.Compare) and isinstance(n.left, ast.Name)
                and any(isinstance(op, (ast.Is, ast.IsNot)) for op in n.ops)
                and any(isinstance(c, ast.Constant) and c.value is None for c in n.comparators)}
    shapes = shape_parameters(node)
    axes = axis_parameters(node)
    names = {n for n, v in vars(module).items() if v is kernel} if kernel is not None else set()
    roles = kernel_roles(node, names, kernel) if names else {}
    if names and not roles:  # `forward` calls the wrapper that launches: its parameters' roles
        roles = _roles_through_calls(module, node, names, kernel)
    dims, sizes = symbolic_dims(node), {}  # sizes: what each named dimension was given
    args: list[Any] = []
    params = list(inspect.signature(fn).parameters.values())
    for i, p in enumerate(params):
        if i == 0 and takes_ctx:
            args.append(AutogradContext())
            continue
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD, p.KEYWORD_ONLY):
            continue
        if p.name in axes:
            args.append(axis)
        elif p.default is None and roles.get(p.name) == "scalar" and p.name not in optional \
                and _scalar_annotation(p) and (value := _scalar(p)) is not None and not isinstance(value, bool):
            # `scale: Optional[float] = None` handed to the kernel as it is: real callers pass one
            args.append(value if value or not isinstance(value, float) else 1.0)
        elif p.default is not inspect.Parameter.empty and not (
                fill_optional and p.default is None and (p.name in ranks or p.name in dims.of)):
            args.append(p.default)
        elif p.name in strings:
            args.append(strings[p.name])
        elif p.name in optional and not fill_optional:  # `if weight is not None:`: the wrapper does without it
            args.append(None)
        elif _tensor_sequence(p):  # `residuals: Sequence[torch.Tensor]`: a few tensors of one shape
            if re.search(r"(List|Sequence|list|tuple|Tuple)\[\s*(typing\.)?(List|Sequence|list)\[", str(p.annotation)):
                # `List[List[Tensor]]`: a grid of matrices (tiled matmuls): 2 x 2 of them
                args.append([[torch.empty(family[2], dtype=dtype, device="meta") for _ in range(2)] for _ in range(2)])
            else:
                made = [torch.empty(family[3], dtype=dtype, device="meta") for _ in range(4)]
                args.append(tuple(made) if "uple[" in str(p.annotation) else made)  # Triton takes tuples, not lists
        elif p.name in shapes and roles.get(p.name) not in ("pointer", "index", "bits") \
                and not _packed(roles.get(p.name)):
            # `normalized_shape`, `len(dims)`: the trailing dimension, as torch's ops take it (but
            # `len(row_indices)` of a tensor the kernel loads from stays a tensor)
            args.append([family[1][0]])
        elif roles.get(p.name) in ("pointer", "index") and p.name not in ranks:
            # the kernel loads from it, whatever its name says (`alpha` as a device scalar)
            dt = annotated_dtype(p) or (torch.int64 if roles[p.name] == "index" else dtype)
            args.append(torch.empty([1], dtype=dt, device="meta"))
        elif roles.get(p.name) == "block" and p.name not in ranks:  # a block side (`BLOCK_C=channels`): not 0
            value = _scalar(p)
            args.append(value if value is not None else BLOCK_SIDE)
        elif roles.get(p.name) == "constexpr" and p.name not in ranks:  # off: a flag False, an amount 0
            value = _scalar(p)
            # ... but a block or group size 0 makes empty tiles (`tl.arange(0, blocksize // 2)`)
            args.append(value if value is not None else 64 if re.search(r"block|size|tile|chunk", p.name, re.I)
                        else 0)
        elif roles.get(p.name) == "scalar" and p.name not in ranks:
            value = _scalar(p)
            if value is None:
                value = 1.0 if FLOAT_NAMES.match(p.name) else -100 if "ignore" in p.name.lower() else \
                    family[1][0] if SIZE_NAMES.match(p.name) else 1
            args.append(value)
        elif p.name not in roles and p.name not in ranks and _scalar(p) is None and SIZE_NAMES.match(p.name):
            # an extent only the grid uses
            args.append(family[1][0])
        elif p.name in ranks or (value := _scalar(p)) is None:
            rank = min(max(ranks.get(p.name, 0) or 2, 1), MAX_RANK)
            if roles.get(p.name) == "bits":  # packed integers (quantized weights): int32 words
                shape = shape_from_dims(dims, p.name, family, sizes) or family[rank]
                args.append(torch.zeros(shape, dtype=torch.int32, device="meta"))
            elif _packed(roles.get(p.name)):  # fp4 pairs in bytes, as inline assembly unpacks them
                shape = shape_from_dims(dims, p.name, family, sizes) or family[rank]
                args.append(torch.zeros(shape, dtype=_packed(roles.get(p.name)), device="meta"))
            elif roles.get(p.name) == "index" or p.name.lower() in INDEX_NAMES:  # labels, positions: one index per row
                # One index per row of the data it indexes: the leading dimensions of the next rank up.
                rows = family[min(rank + 1, MAX_RANK)][:rank] if rank < MAX_RANK else family[MAX_RANK]
                rows = shape_from_dims(dims, p.name, family, sizes) or rows
                args.append(torch.zeros(rows, dtype=torch.int64, device="meta"))
            else:
                shape = shape_from_dims(dims, p.name, family, sizes) or family[rank]
                args.append(torch.empty(shape, dtype=annotated_dtype(p) or dtype, device="meta"))
        else:
            args.append(value)
    return args


# torch's legacy tensor types, as wrappers annotate them (`draft_token_ids: torch.LongTensor`)
_TYPED_TENSORS = {"LongTensor": "int64", "IntTensor": "int32", "ShortTensor": "int16", "CharTensor": "int8",
                  "ByteTensor": "uint8", "BoolTensor": "bool", "HalfTensor": "float16",
                  "BFloat16Tensor": "bfloat16", "FloatTensor": "float32", "DoubleTensor": "float64"}


def annotated_dtype(param: inspect.Parameter) -> Any:
    """The dtype a parameter's annotation names (`torch.LongTensor`: int64), or None."""
    import torch

    found = re.search(r"\b(" + "|".join(_TYPED_TENSORS) + r")\b", str(param.annotation))
    return getattr(torch, _TYPED_TENSORS[found.group(1)]) if found else None


def _packed(role: str | None) -> Any:
    """The torch dtype of a "packed:DTYPE" role (`kernel_roles`), else None."""
    import torch

    return getattr(torch, role.split(":", 1)[1]) if role and role.startswith("packed:") else None


def _roles_through_calls(module: types.ModuleType, node: ast.FunctionDef, names: set[str],
                         kernel: Any) -> dict[str, str]:
    """`kernel_roles` one call away: what `node`'s parameters become where it hands them to another
    function of the module that launches the kernel (an autograd `forward` calling the wrapper)."""
    out: dict[str, str] = {}
    for call in ast.walk(node):
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)):
            continue
        inner = getattr(module, call.func.id, None)
        inner_node = source_ast(inner) if inspect.isfunction(inner) else None
        inner_roles = kernel_roles(inner_node, names, kernel) if inner_node is not None else {}
        if not inner_roles:
            continue
        params = [p.name for p in inspect.signature(inner).parameters.values()]
        passed = list(zip(params, call.args)) + [(k.arg, k.value) for k in call.keywords if k.arg]
        for name, arg in passed:
            if isinstance(arg, ast.Name) and name in inner_roles:
                out.setdefault(arg.id, inner_roles[name])
    return out


def made_up_arguments(module: types.ModuleType, fn: Callable, family: dict[int, list[int]], dtype: Any) -> list[Any] | None:
    """Made-up arguments for a host function that launches no Triton kernel itself (a Helion
    kernel's): as for a wrapper, from how its code uses each parameter."""
    return _arguments(module, fn, family, dtype, takes_ctx=False)


def _meta_item(tensor: Any) -> Any:
    """`.item()` of a meta tensor inside a made-up wrapper call: 1 of its dtype (a count, a
    size, a flag), since the arguments were invented anyway and the launch is what we are after."""
    import torch

    if not tensor.is_meta:
        return _real_item(tensor)
    return True if tensor.dtype == torch.bool else 1.0 if tensor.dtype.is_floating_point else 1


_real_item: Callable = lambda t: t.item()  # noqa: E731 - replaced by torch's own in call_wrappers


class WrapperResult(NamedTuple):
    """What calling a kernel's wrappers gave: the wrapper that launched it, or the last failure
    (and the wrapper that raised it) when none did."""

    launched_by: str | None
    error: Exception | None = None
    failed_wrapper: str | None = None
    family: int | None = None  # the index in SHAPE_FAMILIES of the made-up shapes that launched it


def call_wrappers(module: types.ModuleType, kernel: Any, path: str, module_name: str = "__main__",
                  after: int | None = None) -> WrapperResult:
    """Call the wrappers of `kernel` defined in `module` (the file itself, run as `__main__`, or
    another module of its package: `package_callers`) until one launches it, with the first
    FIRST_FAMILIES shape families; `after`: with the families after that one instead (a launch
    in it made a call the compiler refused)."""
    families = SHAPE_FAMILIES[after + 1:] if after is not None else SHAPE_FAMILIES[:FIRST_FAMILIES]
    if not families:
        return WrapperResult(None)
    import torch

    global _real_item
    _real_item, real_bool = torch.Tensor.item, torch.Tensor.__bool__
    torch.Tensor.item = _meta_item  # type: ignore[method-assign]
    torch.Tensor.__bool__ = lambda t: bool(_meta_item(t))  # type: ignore[method-assign]  # `assert (x < n).all()`
    real_equal = torch.equal
    # `if torch.equal(grad_output, torch.tensor(1.0)): skip the kernel`: made-up values are never
    # equal to anything, so the path that does the work runs
    torch.equal = lambda a, b: False if getattr(a, "is_meta", False) or getattr(b, "is_meta", False) \
        else real_equal(a, b)  # type: ignore[assignment]
    # `torch.empty((cu_seqlens[-1], heads))`: a size read from a made-up tensor's values, which
    # torch's own argument parser asks of the meta tensor (bypassing `.item()` above)
    factories = {name: getattr(torch, name) for name in SIZED_FACTORIES}
    for name, real in factories.items():
        setattr(torch, name, _sizes_from_meta(real))
    try:
        return _call_wrappers(module, kernel, module_name, families)
    finally:
        torch.Tensor.item, torch.Tensor.__bool__ = _real_item, real_bool  # type: ignore[method-assign]
        torch.equal = real_equal
        for name, real in factories.items():
            setattr(torch, name, real)


SIZED_FACTORIES = ("empty", "zeros", "ones", "full", "rand", "randn", "randint", "arange")


def _sizes_from_meta(factory: Callable) -> Callable:
    """`factory` with a one-element meta tensor among its size arguments read as `_meta_item`'s
    value (a made-up count)."""
    import torch

    def concrete(value: Any) -> Any:
        if isinstance(value, torch.Tensor) and value.is_meta and value.numel() == 1:
            made = _meta_item(value)  # a count stays an int; `torch.full`'s float fill stays a float
            return made if isinstance(made, float) else int(made)
        if isinstance(value, (tuple, list)) and any(isinstance(v, torch.Tensor) for v in value):
            return type(value)(concrete(v) for v in value)
        return value

    @functools.wraps(factory)
    def sized(*args: Any, **kwargs: Any) -> Any:
        return factory(*(concrete(a) for a in args), **{k: concrete(v) if k == "size" else v for k, v in kwargs.items()})

    return sized


def _call_wrappers(module: types.ModuleType, kernel: Any, module_name: str,
                   families: tuple[dict[int, list[int]], ...]) -> WrapperResult:
    import torch

    jit = tc.innermost_jit(kernel)
    extents = arange_extents(jit)
    rank = block_rank(jit)
    launched = lambda: any(la.jit is jit for la in tc.recorded())  # noqa: E731
    last: Exception | None = None
    last_name: str | None = None
    attempts = 0
    oversized: tuple[str, list[Any], Callable, list[Any], int] | None = None  # a launch with a tile too big, set aside
    mended: set[tuple[str, bool]] = set()  # (wrapper, first shape family): mended at most twice
    dtypes = (torch.bfloat16, torch.float32) if multiplies_tiles(jit, how=IEEE_DOT) else (torch.float32, torch.bfloat16)
    for name, fn, takes_ctx in wrappers_of(module, kernel, module_name):
        node = source_ast(fn)
        axes = AXIS_CHOICES if node is not None and axis_parameters(node) else AXIS_CHOICES[:1]
        for axis, family, dtype in itertools.product(axes, families, dtypes):
            if attempts >= MAX_ATTEMPTS * 4:
                return WrapperResult(None, last, last_name)
            attempts += 1
            args = _arguments(module, fn, family, dtype, takes_ctx, kernel, axis)
            if args is None:
                break
            refused: Exception | None = None
            try:
                with made_by(fn, args):
                    fn(*args)
            except (TypeError, AttributeError) as e:
                # `dt_bias.stride(-1)` on a parameter that defaults to None: real callers pass one
                refused = e
                filled = _arguments(module, fn, family, dtype, takes_ctx, kernel, axis, fill_optional=True)
                with contextlib.suppress(Exception), made_by(fn, filled):
                    fn(*filled)
            except Exception as e:  # noqa: BLE001 - a made-up call the wrapper refused
                refused = e
            if refused is not None and not launched() and (name, family is families[0]) not in mended:
                # the wrapper's own checks say what it wants (`wrapper_repairs`): for the first shape
                # family and once more for another
                mended.add((name, family is families[0]))
                _, still, args = mend(fn, args, refused, family, launched)
                refused = still if still is not None else None if launched() else refused
            if refused is not None:
                last, last_name = refused, name
            if launched():
                mine = [la for la in tc.recorded() if la.jit is jit]
                unrolled = unrolled_too_far(mine[0], jit)
                index = SHAPE_FAMILIES.index(family)
                if unrolled and launch_shrunk(fn, args, unrolled, jit, mine[0]):
                    return WrapperResult(name, family=index)
                if tile(mine[0], extents, rank) <= max_block(rank):
                    mark_derived(fn, args, jit)
                    return WrapperResult(name, family=index)
                if oversized is None:  # kept in case no smaller family launches it
                    oversized = (name, tc.take_since(tc.recorded().index(mine[0])), fn, args, index)
                else:
                    tc.take_since(tc.recorded().index(mine[0]))
    if oversized is not None:
        name, launches, fn, args, index = oversized
        smaller = tile_shrunk(fn, args, jit, extents, rank)
        tc.put_back(smaller[0] if smaller else launches)
        mark_derived(fn, smaller[1] if smaller else args, jit)
        return WrapperResult(name, family=index)
    return WrapperResult(None, last, last_name)
