"""How big a made-up launch of a kernel is, and how to make it smaller.

A wrapper called with made-up shapes (`wrapper_calls`) or a bare kernel's offered constexprs
(`suggestions`) can give block sides no real launch uses: a 4096-wide head, four broadcast sides
that make a 268M-element block, a `static_range` of 4096. Such a kernel compiles for minutes, or
not at all. Here: the block a launch spans (its arange extents, broadcast to as many sides as the
kernel's largest subscript has), and the wrapper called again with smaller shapes until it fits.
"""

from __future__ import annotations

import ast
import contextlib
import math
from typing import Any, Callable, Iterator

from .. import triton_compat as tc
from .wrapper_source import source_ast

# The most elements the largest `tl.arange` extents of a made-up launch may span together, as
# many as the kernel broadcasts to (`block_rank`: a 256 x 256 matmul tile, 16 rows of 4096):
# beyond it the launch is kept only if no smaller shape family launches the kernel, and is
# called smaller (`tile_shrunk`).
MAX_MADE_UP_TILE = 1 << 16
# ... and for a block of three or more sides (gathers and reductions over a 4-D block, aqlm's
# gemv: 64K elements of 64-bit pointers compiled for over two minutes; real ones span a few
# hundred to a few thousand)
MAX_MADE_UP_BLOCK_ND = 1 << 13


def max_block(rank: int) -> int:
    """The most elements a made-up block of `rank` sides may span."""
    return MAX_MADE_UP_TILE if rank <= 2 else MAX_MADE_UP_BLOCK_ND
# The longest `static_range` loop a made-up launch may unroll (real top-k, conv widths, head
# groups are a few to a few dozen); a made-up dimension beyond it is made SMALL_DIM.
MAX_UNROLLED = 64
SMALL_DIM = 4
# A block over MAX_MADE_UP_TILE in every family: its largest made-up sides divided by this, a few times.
SHRINK_BY = 8
SHRINK_ROUNDS = 5


def arange_extents(jit: Any) -> set[str]:
    """The kernel's constexpr parameters that bound a `tl.arange(0, X)` (its block extents)."""
    node = source_ast(jit.fn) if hasattr(jit, "fn") else None
    if node is None:
        return set()
    params = {p.name for p in tc.signature_params(jit) if p.is_constexpr}
    return {a.id for n in ast.walk(node) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
            and n.func.attr == "arange" and len(n.args) == 2 for a in n.args[1:]
            if isinstance(a, ast.Name) and a.id in params}


# Triton calls that take a shape: as their first argument (zeros, full) or after the tensor
# (`tl.reshape(x, shape)`; as a method, `x.reshape(shape)`, it is the first again), or as `shape=`.
_SHAPED = {"zeros", "full", "reshape", "view", "broadcast_to"}


def block_sides(jit: Any) -> set[str]:
    """The constexpr parameters a block's shape names: `tl.arange` bounds, the shapes of
    `tl.zeros`/`tl.full`/`tl.reshape`/..., and `block_shape=` (block pointers, tensor descriptors)."""
    node = source_ast(jit.fn) if hasattr(jit, "fn") else None
    if node is None:
        return set()
    params = {p.name for p in tc.signature_params(jit) if p.is_constexpr}
    shapes: list[ast.AST] = []
    for n in ast.walk(node):
        if not isinstance(n, ast.Call):
            continue
        name = n.func.attr if isinstance(n.func, ast.Attribute) else getattr(n.func, "id", "")
        if name in _SHAPED and n.args:
            shapes.append(n.args[1] if name in ("reshape", "view", "broadcast_to") and len(n.args) > 1 else n.args[0])
        shapes += [k.value for k in n.keywords if k.arg in ("shape", "block_shape")]
    sides = {a.id for s in shapes if isinstance(s, (ast.List, ast.Tuple)) for a in ast.walk(s)
             if isinstance(a, ast.Name) and a.id in params}
    return sides | arange_extents(jit)


def unrolled_too_far(launch: Any, jit: Any) -> int | None:
    """The largest value a launch gives a constexpr bounding a `static_range` loop (unrolled when
    compiled) beyond MAX_UNROLLED, or None: a made-up dimension (`topk = x.shape[1]`, 256; a conv
    width of 4096) that no caller gives and whose unrolled loop compiles for minutes."""
    node = source_ast(jit.fn) if hasattr(jit, "fn") else None
    if node is None:
        return None
    bounds = {a.id for n in ast.walk(node) if isinstance(n, ast.Call) and isinstance(n.func, (ast.Attribute, ast.Name))
              and (n.func.attr if isinstance(n.func, ast.Attribute) else n.func.id) == "static_range"
              for arg in n.args[-2:] for a in ast.walk(arg) if isinstance(a, ast.Name)}
    params = [p.name for p in tc.signature_params(jit)]
    given = {**dict(zip(params, launch.args)), **launch.kwargs}
    values = [v for k, v in given.items() if k in bounds and isinstance(v, int) and not isinstance(v, bool)]
    big = max(values, default=0)
    return big if big > MAX_UNROLLED else None


def launch_shrunk(fn: Callable, args: list[Any], size: int, jit: Any, first: Any) -> bool:
    """Call the wrapper again with every made-up dimension equal to `size` made SMALL_DIM (the
    tensors keep agreeing with each other); when it launches the kernel with its unrolled loops
    short, that launch replaces `first`."""
    import torch

    def shrink(a: Any) -> Any:
        if isinstance(a, torch.Tensor):
            return torch.empty([SMALL_DIM if d == size else d for d in a.shape], dtype=a.dtype, device=a.device)
        if isinstance(a, (list, tuple)):
            return type(a)(shrink(x) for x in a)
        return SMALL_DIM if isinstance(a, int) and not isinstance(a, bool) and a == size else a

    start = len(tc.recorded())
    shrunk = [shrink(a) for a in args]
    with contextlib.suppress(Exception), made_by(fn, shrunk):
        fn(*shrunk)
    again = [la for la in tc.recorded()[start:] if la.jit is jit]
    if again and not unrolled_too_far(again[0], jit):
        tc.take_since(tc.recorded().index(first))
        tc.put_back([again[0]])
        return True
    tc.take_since(start)
    return False


def block_rank(jit: Any) -> int:
    """How many sides the kernel's largest block has: the longest subscript of `None`s and `:`s
    (`x[:, None, None, None]` broadcasts an arange to four sides), at least 2."""
    node = source_ast(jit.fn) if hasattr(jit, "fn") else None
    if node is None:
        return 2

    def side(e: ast.expr) -> bool:
        return (isinstance(e, ast.Constant) and e.value is None) or (
            isinstance(e, ast.Slice) and e.lower is None and e.upper is None and e.step is None)

    ranks = [len(n.slice.elts) for n in ast.walk(node) if isinstance(n, ast.Subscript)
             and isinstance(n.slice, ast.Tuple) and n.slice.elts and all(side(e) for e in n.slice.elts)]
    return max([2, *ranks])


def block_elements(given: dict[str, Any], extents: set[str], rank: int = 2) -> int:
    """Elements spanned by the `rank` largest block extents among `given` (values by name; 1 when
    none is an extent): the largest block the kernel can broadcast its aranges to."""
    sizes = sorted((v for k, v in given.items() if k in extents and isinstance(v, int) and not isinstance(v, bool)),
                   reverse=True)
    return math.prod(sizes[:rank]) if sizes else 1


def _given(launch: Any) -> dict[str, Any]:
    """The launch's values by name; the block sides an autotuner sets (`BLOCK_M` in its configs,
    not in the call) from its first config, the one compiled first: modelopt's attention gives
    `BLOCK_D` from the made-up head, 4096, and its autotuner `BLOCK_M` up to 128."""
    params = [p.name for p in tc.signature_params(launch.jit)]
    configs = tc.autotune_configs(launch.obj)
    return {**(configs[0] if configs else {}), **dict(zip(params, launch.args)), **launch.kwargs}


def tile(launch: Any, extents: set[str], rank: int = 2) -> int:
    """`block_elements` of the values a recorded launch gives."""
    return block_elements(_given(launch), extents, rank)


def _largest_extent(launch: Any, extents: set[str]) -> int:
    return max((v for k, v in _given(launch).items() if k in extents and isinstance(v, int) and not isinstance(v, bool)),
               default=0)


def tile_shrunk(fn: Callable, args: list[Any], jit: Any, extents: set[str],
                 rank: int) -> tuple[list[Any], list[Any]] | None:
    """A launch whose block is still over `max_block` in every shape family (aqlm's gemv
    broadcasts four made-up sides to a 268M-element block that compiles for many minutes): call
    the wrapper again with every made-up dimension at the largest extent (or whose next power of
    2 it is) made SHRINK_BY times smaller, a few times, until the block fits. The recorded
    launches of the last call that launched the kernel and its arguments, or None."""
    kept: tuple[list[Any], list[Any]] | None = None
    for _ in range(SHRINK_ROUNDS):
        start = len(tc.recorded())
        with contextlib.suppress(Exception), made_by(fn, args):
            fn(*args)
        mine = [la for la in tc.recorded()[start:] if la.jit is jit]
        if not mine:
            tc.take_since(start)
            return kept
        kept = (tc.take_since(start), args)
        if tile(mine[0], extents, rank) <= max_block(rank):
            return kept
        big = _largest_extent(mine[0], extents)
        if big <= 16:
            return kept

        def small(d: int, big: int = big) -> int:
            return max(1, d // SHRINK_BY) if d > 16 and (d == big or (d < big <= 2 * d)) else d

        args = _resized(args, small)
    return kept


def _resized(args: list[Any], size: Callable[[int], int]) -> list[Any]:
    """Made-up arguments with each tensor dimension and integer `d` made `size(d)`."""
    import torch

    def one(a: Any) -> Any:
        if isinstance(a, torch.Tensor):
            return torch.empty([size(d) for d in a.shape], dtype=a.dtype, device=a.device)
        if isinstance(a, (list, tuple)):
            return type(a)(one(x) for x in a)
        return size(a) if isinstance(a, int) and not isinstance(a, bool) else a

    return [one(a) for a in args]


@contextlib.contextmanager
def made_by(fn: Callable, args: list[Any]) -> Iterator[None]:
    """Launches recorded inside are marked as made by `fn(*args)` (`Launch.made_by`): a wrapper's
    made-up calls (mended, scaled, shrunk) are many, and the launch the inspection keeps may come
    from any of them, or from an earlier kernel's search."""
    start = len(tc.recorded())
    try:
        yield
    finally:
        for la in tc.recorded()[start:]:
            la.made_by = la.made_by or (fn, list(args))


def mark_derived(fn: Callable, args: list[Any], jit: Any) -> None:
    """Mark the kernel's recorded launch with the constexprs whose values follow the made-up
    shapes (`Launch.shape_derived`): those that change when the wrapper is called again with
    every dimension of 32 or more halved, or with one tensor's alone halved (a ratio of two
    tensors' dimensions, `BLOCK_K = K // scales.shape[0]`, is the same when both halve). A
    wrapper's own tile (`BLOCK_M=128`) stays as it is: a made-up call may change only what it
    made up (`retyping.sizes_for_shared`, `retyping.sizes_for_dot`)."""
    import torch

    mine = next((la for la in tc.recorded() if la.jit is jit), None)
    if mine is None:
        return
    fn, args = mine.made_by or (fn, args)  # the call that made it, not necessarily the last one tried
    constexprs = {p.name for p in tc.signature_params(jit) if p.is_constexpr}
    before = _given(mine)
    half = lambda d: d // 2 if d >= 32 else d  # noqa: E731
    probes = [_resized(args, half)]
    tensors = [i for i, a in enumerate(args) if isinstance(a, torch.Tensor) and any(d >= 32 for d in a.shape)]
    for i in tensors[:MAX_ONE_TENSOR_PROBES] if len(tensors) > 1 else []:
        probes.append([*args[:i], *_resized([args[i]], half), *args[i + 1:]])
    derived: set[str] = set()
    for probe in probes:
        start = len(tc.recorded())
        with contextlib.suppress(Exception):
            fn(*probe)
        again = next((la for la in tc.recorded()[start:] if la.jit is jit), None)
        tc.take_since(start)
        if again is not None:
            after = _given(again)
            derived |= {n for n in constexprs if n in before and not _same(before[n], after.get(n))}
    mine.shape_derived = frozenset(derived)


MAX_ONE_TENSOR_PROBES = 8  # wrapper calls with one tensor halved (each a Python call on meta tensors)


def _same(a: Any, b: Any) -> bool:
    """Whether two constexpr values are equal (numbers, strings, dtypes; anything else, such as a
    tensor a wrapper passes as a constexpr, only when it is the same object)."""
    if isinstance(a, (bool, int, float, str)) and isinstance(b, (bool, int, float, str)):
        return a == b
    return a is b or (type(a) is type(b) and repr(a) == repr(b) and not hasattr(a, "shape"))
