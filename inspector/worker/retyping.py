"""Pointer dtypes (and a number's type) from Triton's own type errors, for calls the inspector made up.

A made-up call (from the signature, or made-up inputs handed to the file's wrapper) gives a pointer
the dtype its uses suggest (`kernel_params`): floats, int64 for values that index or bound a loop,
int32 for values shifted and masked. Kernels use their data in more ways than that reading sees
(MoE routing ids compared and counted, quantized bytes bitcast to fp8, a table of pointers, two
inputs that must share a type, `tl.static_assert(X.dtype.element_ty == tl.uint8)`), and Triton says
so when it compiles: "unexpected type fp32", "cannot cast fp32[] to pointer", "Both operands must be
same type", "invalid operands of type fp32 and int32". The error points at a node of the kernel;
the pointers whose values reach that node (through the kernel's assignments, or named in it) are
given, all together, each dtype the message and the node name first, then the integer and
half-precision families, until the compile gets past that node; a made-up integer that reaches a
node Triton refused for mixing integers and floats becomes a float. A new error further on is the
next step. At most `MAX_RETYPES` extra compiles; a call from the user's own code (an example, a test, a
capture) is never changed: its dtypes are the user's.
"""

from __future__ import annotations

import ast
import math
import re
import textwrap
from dataclasses import dataclass, field
from typing import Any

from .kernel_params import _Bases, _call_name, _Flow, _function_ast, _names_outside_loads, parameter_usage

MAX_RETYPES = 8
# Triton's own dtype names (and torch's), as messages and kernels write them -> torch attribute names.
_TORCH = {
    "uint8": "uint8", "u8": "uint8", "int8": "int8", "i8": "int8", "int16": "int16", "i16": "int16",
    "int32": "int32", "i32": "int32", "int64": "int64", "i64": "int64",
    "float16": "float16", "fp16": "float16", "bfloat16": "bfloat16", "bf16": "bfloat16",
    "float32": "float32", "fp32": "float32", "float64": "float64", "fp64": "float64",
    "float8e4nv": "float8_e4m3fn", "fp8e4nv": "float8_e4m3fn", "float8_e4m3fn": "float8_e4m3fn", "e4m3": "float8_e4m3fn",
    "float8e5": "float8_e5m2", "fp8e5": "float8_e5m2", "float8_e5m2": "float8_e5m2", "e5m2": "float8_e5m2",
    "float8e4b8": "float8_e4m3fnuz", "fp8e4b8": "float8_e4m3fnuz", "float8e5b16": "float8_e5m2fnuz",
    "fp8e5b16": "float8_e5m2fnuz",
}
_DTYPE_WORD = re.compile(r"(?<![\w.])(?:tl\.|torch\.)?(" + "|".join(sorted(_TORCH, key=len, reverse=True)) + r")\b")
_VERIFIER = re.compile(r"error encountered during parsing|must be \d+-bit|signless", re.I)
_BITS_INTEGER = re.compile(r"\b(8|16|32|64)-bit (?:signless )?integer")
# What an error says when it is about types (not a missing name or a shape).
_TYPE_ERROR = re.compile(r"type|pointer|operand|cast|dtype|integer|float|signed|"
                         r"(?<![\w])(?:u?int\d+|fp\d+|bf16)", re.I)
# ... and not about a constexpr's value or a shape, which no pointer's dtype changes, nor about
# something the release removed ("Block pointers have been removed in favor of ...": no dtype
# brings it back; an older release may compile it, `compile.api.inspect`)
_NOT_DTYPE = re.compile(r"string|constexpr|policy|shape|rank|broadcast|power of 2|must be a |removed", re.I)
# ... unless it says which type a value must have: a shape, stride or offset of a loaded float
# ("Expected an integer scalar type in shape/strides/offsets", `tl.make_block_ptr`)
_WANTS_TYPE = re.compile(r"expected an? (?:integer|int|float|floating)[\w ]* type|must be an? (?:integer|int)\b", re.I)
_INTEGERS = ("int32", "int64", "uint8")
_HALVES = ("float16", "bfloat16")


@dataclass
class TypeClash:
    """Where a compile stopped on types: the function, its node, the message and the file line."""

    fn: Any
    node: ast.AST
    message: str
    line: int
    # the outermost node of the chain in a function of the file (the kernel's call of the helper
    # that stopped, however deep): where a helper's parameter cannot be followed call by call
    outer: tuple[Any, ast.AST] | None = None

    @property
    def key(self) -> tuple[int, str]:
        return self.line, self.message


@dataclass
class Retyping:
    """The search's state across compiles: what was tried, what was given, what to tell the user."""

    tried: set[tuple[frozenset, str]] = field(default_factory=set)
    last: TypeClash | None = None  # the clash the last change answered (an MLIR error has no node)
    fixed: set[str] = field(default_factory=set)  # what the user gave (--arg): never changed
    given: dict[str, str] = field(default_factory=dict)  # parameter -> torch dtype name
    original: dict[str, str] = field(default_factory=dict)  # parameter -> the made-up dtype Triton refused
    compiles: int = 0
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # what a launch with the first guess would meet


def type_clash(err: BaseException, fns: list[Any]) -> TypeClash | None:
    """The innermost CompilationError of `err` in one of `fns` whose message is about types."""
    found = innermost(err, fns)
    if found is None or not _TYPE_ERROR.search(found.message):
        return None
    if _NOT_DTYPE.search(found.message) and not _WANTS_TYPE.search(found.message):
        return None
    return found


def innermost(err: BaseException, fns: list[Any]) -> TypeClash | None:
    """The innermost CompilationError of `err` in one of `fns`, whatever its message."""
    from triton.compiler.errors import CompilationError

    from .. import triton_compat as tc

    by_src = {fn.src: fn for fn in fns if hasattr(fn, "src")}
    found = None
    outer = None
    e: BaseException | None = err
    seen: set[int] = set()
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        if isinstance(e, CompilationError) and getattr(e, "node", None) is not None and e.src in by_src:
            fn = by_src[e.src]
            message = str(e.error_message or e.__cause__ or "")
            found = TypeClash(fn, e.node, message, tc.kernel_def_line(fn) + getattr(e.node, "lineno", 1) - 1)
            outer = outer or (fn, e.node)
        e = e.__cause__ or e.__context__
    if found is not None:
        found.outer = outer
    return found


def _reaching(fn: Any, node: ast.AST, pointers: set[str], named: bool = True) -> list[str]:
    """`fn`'s pointer parameters whose loaded values reach `node` through its assignments, or (with
    `named`) that `node` or those assignments name (`X.dtype.element_ty`), in the order they first
    appear."""
    tree = _function_ast(fn)
    if tree is None:
        return []
    flow = _Flow()
    for stmt in tree.body:
        flow.visit(stmt)
    bases = _Bases(flow)
    out: list[str] = []
    # without `named`, the addresses loads read from are not followed (a token id that picks the row)
    names = (lambda e: [n.id for n in ast.walk(e) if isinstance(n, ast.Name)]) if named else _names_outside_loads
    todo = names(node)
    seen: set[str] = set()
    while todo:
        name = todo.pop(0)
        if name in seen:
            continue
        seen.add(name)
        if name in pointers and named:
            out.append(name)
        for address in flow.loads.get(name, []):
            out += [b for b in bases.of(address) if b in pointers]
        todo += [n for v in flow.assigned.get(name, []) for n in names(v)]
    return list(dict.fromkeys(out))


def _through_caller(kernel: Any, helper: Any, names: list[str], pointers: set[str]) -> list[str]:
    """A helper's parameters, as the kernel's pointers passed to them (one call level)."""
    tree = _function_ast(kernel)
    if tree is None:
        return []
    params = [p.name for p in getattr(helper, "params", [])]
    out: list[str] = []
    for call in (n for n in ast.walk(tree) if isinstance(n, ast.Call)):
        if _call_name(call) != getattr(helper, "__name__", None):
            continue
        passed = dict(zip(params, call.args)) | {k.arg: k.value for k in call.keywords if k.arg}
        for name in names:
            if name in passed:
                out += _reaching(kernel, passed[name], pointers)
    return list(dict.fromkeys(out))


def _options(clash: TypeClash, current: set[str]) -> list[str]:
    """Dtypes to try: those the message and the failing code name (not the ones the pointers
    hold now, which the message names as wrong), then the integers, then the half types."""
    try:
        code = ast.unparse(clash.node)
    except Exception:  # noqa: BLE001 - a node Triton made up
        code = ""
    # an integer cast to a pointer is a 64-bit address (a table of data_ptr()s)
    named = ["int64"] if re.search(r"to pointer", clash.message) else []
    named += [f"int{bits}" for bits in _BITS_INTEGER.findall(clash.message)]
    named += [_TORCH[w] for w in _DTYPE_WORD.findall(clash.message + " " + code)]
    low = clash.message.lower()
    families = (_HALVES + _INTEGERS) if ("same" in low or "match" in low) else (_INTEGERS + _HALVES)
    return [d for d in dict.fromkeys([*named, *families]) if d not in current]


def smaller_size(value: int, numel: int) -> int:
    """A made-up size for a block of `numel` elements that Triton refused as too large, as if the
    size spanned two of its sides: the block comes to about `made_up_sizes.MAX_MADE_UP_TILE`
    elements (a power of two, 16 at least)."""
    from .made_up_sizes import MAX_MADE_UP_TILE

    return max(16, 1 << int(math.log2(max(1.0, value * math.sqrt(MAX_MADE_UP_TILE / max(numel, 1))))))


def _sizes_too_large(err: BaseException, kernel: Any, fns: list[Any], values: dict[str, Any],
                     state: Retyping) -> dict[str, int]:
    """Made-up sizes of a block over Triton's element limit ("numel (16777216) exceeds": a
    wrapper's `x.shape[-1]` of a made-up 4096 as both sides of a Hadamard matrix): the largest
    integer the refused node names, smaller (`smaller_size`)."""
    over = re.search(r"numel \((\d+)\) exceeds", str(err))
    if not over:
        return {}
    clash = innermost(err, fns)
    if clash is None or clash.fn is not kernel:
        return {}
    named = {n.id for n in ast.walk(clash.node) if isinstance(n, ast.Name)}
    sizes = sorted((values[n], n) for n in named if n in values and n not in state.fixed and isinstance(values[n], int)
                   and not isinstance(values[n], bool) and values[n] >= 64)
    if not sizes:
        return {}
    value, name = sizes[-1]
    new = smaller_size(value, int(over.group(1)))
    if new >= value or not _take(state, clash, [name], f"size {new}", f"{new} (a block over Triton's limit"):
        return {}
    return {name: new}


def sizes_for_shared(shared: int, limit: int, kernel: Any, values: dict[str, Any], state: Retyping,
                     keep: set[str]) -> dict[str, int]:
    """A made-up call whose kernel compiled but needs more shared memory than the target has per
    block (lmdeploy's index kernel: a wrapper's made-up 256 heads and 128-wide head as fp32 `tl.dot`
    tiles, 263 KB on sm_90): its largest made-up block extent halved, 16 at least, unless the user
    or an autotune config (`keep`) gave it. {} when none is left."""
    from .made_up_sizes import arange_extents

    if state.compiles >= MAX_RETYPES:
        return {}
    extents = arange_extents(kernel)
    sizes = sorted((v, n) for n, v in values.items() if n in extents and n not in state.fixed and n not in keep
                   and isinstance(v, int) and not isinstance(v, bool) and v >= 32)
    if not sizes:
        return {}
    value, name = sizes[-1]
    key = (frozenset([name]), f"size {value // 2}")
    if key in state.tried:
        return {}
    state.tried.add(key)
    state.compiles += 1
    state.notes.append(f"{name}: {value // 2} (made up as {value}, the kernel needed {shared} B of shared memory, "
                       f"over the {limit} B a block may have)")
    return {name: value // 2}


def halves_for_shared(shared: int, limit: int, values: dict[str, Any], state: Retyping) -> dict[str, Any]:
    """A made-up call still over the target's shared memory per block once no made-up extent is
    left to halve (the wrapper's own tiles: verl's one config needs 96 KiB of fp32 tiles, gfx942
    has 64): its made-up float32 tensors as bfloat16, once (tiles that size run on half precision
    in real use). {} when none is left or it was tried."""
    import torch

    names = [n for n, v in values.items() if isinstance(v, torch.Tensor) and v.dtype == torch.float32
             and n not in state.fixed]
    key = (frozenset(names), "bfloat16 for shared memory")
    if not names or key in state.tried or state.compiles >= MAX_RETYPES:
        return {}
    state.tried.add(key)
    state.compiles += 1
    for n in names:
        state.given[n] = "bfloat16"
    state.notes.append(f"{', '.join(names)}: bfloat16 (with float32, the kernel needed {shared} B of shared memory, "
                       f"over the {limit} B a block may have)")
    state.warnings.append(f"with float32 data ({', '.join(names)}) this launch needs {shared} B of shared memory per "
                          f"block, over the {limit} B the target has: it would raise out_of_resources")
    return {n: torch.empty_strided(tuple(values[n].shape), tuple(values[n].stride()), dtype=torch.bfloat16,
                                   device=values[n].device) for n in names}


# `tl.dot`'s smallest sides, as Triton words them (K >= 16 in 3.6, K >= 8 for fp32 in 3.9)
DOT_TOO_SMALL = re.compile(r"Input shapes should have M >= (\d+), N >= (\d+) and K >= (\d+)")


def sizes_for_dot(err: BaseException, kernel: Any, values: dict[str, Any], state: Retyping,
                  keep: set[str]) -> dict[str, int]:
    """A made-up call whose `tl.dot` has a side under the least Triton takes (flashnn's a16w4
    GEMM: `BLOCK_K = K // scales.shape[0]`, 4 from made-up shapes where real ones give a group of
    128): every block side the made-up shapes gave (not in `keep`: the user's, an autotune
    config's, the wrapper's own tiles) under it, raised to it. {} when the error is another or
    none is left."""
    from .made_up_sizes import block_sides

    least = DOT_TOO_SMALL.search(str(err))
    if not least or state.compiles >= MAX_RETYPES:
        return {}
    side = max(int(g) for g in least.groups())
    sides = block_sides(kernel)
    grown = sorted(n for n, v in values.items() if n in sides and n not in state.fixed and n not in keep
                   and isinstance(v, int) and not isinstance(v, bool) and v < side)
    key = (frozenset(grown), f"size {side}")
    if not grown or key in state.tried:
        return {}
    state.tried.add(key)
    state.compiles += 1
    state.notes.append(f"{', '.join(f'{n}: {side} (the wrapper computed {values[n]} from made-up shapes)' for n in grown)}"
                       f": a `tl.dot` side under the {side} Triton takes")
    return {n: side for n in grown}


def _zeros_as_divisors(clash: TypeClash, kernel: Any, values: dict[str, Any], state: Retyping) -> dict[str, int]:
    """Made-up zeros Triton divided by (`32 // bits`, where a wrapper's made-up `bits` came out
    0): each the value offered for its name, or 1."""
    from .kernel_file import suggested_value

    if clash.fn is not kernel or "by zero" not in clash.message:
        return {}
    named = {n.id for n in ast.walk(clash.node) if isinstance(n, ast.Name)}
    zeros = [n for n in sorted(named) if n in values and n not in state.fixed and values[n] == 0
             and isinstance(values[n], int) and not isinstance(values[n], bool)]
    if not _take(state, clash, zeros, "nonzero", "a number other than 0 (Triton divided by it"):
        return {}
    return {n: int(v) if (v := suggested_value(n)).isdigit() and int(v) else 1 for n in zeros}


def _numbers_as_floats(clash: TypeClash, kernel: Any, values: dict[str, Any], state: Retyping) -> dict[str, float]:
    """Made-up integers that reach a node Triton refused for mixing an integer with a float
    (`pow(theta, powers / -dim)` with `theta` made up as 4096: "(int32, float32)"), as floats."""
    message = clash.message.lower()
    if clash.fn is not kernel or not (re.search(r"\bu?int\d+", message) and re.search(r"float|fp\d+|bf16", message)):
        return {}
    if "pointer<" in message:  # the float is a pointer's element type: `_tensors_as_numbers`' case
        return {}
    ints = {n for n, v in values.items() if isinstance(v, int) and not isinstance(v, bool) and n not in state.fixed}
    names = _reaching(kernel, clash.node, ints)
    if not _take(state, clash, names, "float", "a float (an integer"):
        return {}
    return {n: float(values[n]) for n in names}


_LOOP_CARRIED = re.compile(r"Loop-carried variable (\w+) has initial type (.+?) but is re-assigned to (.+?)(?: in loop|$)",
                           re.M)
_ELEMENT = re.compile(r"\b(u?int\d+|fp\d+\w*|bf16)\b")
_AS_TORCH = {"fp32": "float32", "fp16": "float16", "bf16": "bfloat16", "fp64": "float64"}


def _loop_carried(clash: TypeClash, kernel: Any, values: dict[str, Any], state: Retyping) -> dict[str, Any]:
    """A loop-carried value whose made-up inputs change its type (flashnn's a8w8 MoE: an int32
    accumulator `+= tl.dot(a, b)` of made-up fp32 tiles): the pointers whose loads reach its
    re-assignments, as the type it starts with asks: int8 where an integer accumulator takes a
    `tl.dot` (an integer dot of int8), else that type."""
    import torch

    found = _LOOP_CARRIED.search(clash.message)
    if clash.fn is not kernel or not found:
        return {}
    var = found.group(1)
    start, now = _ELEMENT.findall(found.group(2)), _ELEMENT.findall(found.group(3))
    if not start or not now or start[-1] == now[-1]:
        return {}
    tree = _function_ast(kernel)
    if tree is None:
        return {}
    loops = [n for n in ast.walk(tree) if isinstance(n, (ast.For, ast.While))]
    inside = [n for loop in loops for n in ast.walk(loop)]
    sources = [n.value for n in inside if isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name)
               and n.target.id == var]
    sources += [n.value for n in inside if isinstance(n, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == var for t in n.targets)]
    pointers = {n for n, v in values.items() if isinstance(v, torch.Tensor) and n not in state.fixed}
    # the pointers whose data the loop adds in, not those its addresses come from (token ids)
    names = list(dict.fromkeys(p for v in sources for p in _reaching(kernel, v, pointers, named=False)))
    wanted = start[-1]
    dot = any(_call_name(c) == "dot" for v in sources for c in ast.walk(v) if isinstance(c, ast.Call))
    dtype = "int8" if wanted.startswith(("int", "uint")) and dot else _AS_TORCH.get(wanted, wanted)
    if not hasattr(torch, dtype) or not _take(state, clash, names, dtype, f"{dtype} (`{var}` starts as {wanted}"):
        return {}
    return {n: torch.empty_strided(tuple(values[n].shape), tuple(values[n].stride()), dtype=getattr(torch, dtype),
                                   device=values[n].device) for n in names}


def _tensors_as_numbers(clash: TypeClash, kernel: Any, values: dict[str, Any], state: Retyping) -> dict[str, int]:
    """Made-up tensors in arithmetic no pointer takes (`32 // bits`: "invalid operands of type
    pointer<fp32> and int32"; a pointer only moves by + and -) are numbers: 1 each (a count, a
    width, a mask's bits), named in the notes."""
    import torch

    node = clash.node
    if clash.fn is not kernel or "pointer<" not in clash.message or not isinstance(node, ast.BinOp) \
            or isinstance(node.op, (ast.Add, ast.Sub)):
        return {}
    names = [n.id for n in (node.left, node.right) if isinstance(n, ast.Name) and n.id in values
             and isinstance(values[n.id], torch.Tensor) and n.id not in state.fixed]
    if not _take(state, clash, names, "int", "a number, 1 (a tensor"):
        return {}
    return {n: 1 for n in names}


def _take(state: Retyping, clash: TypeClash, names: list[str], given: str, said: str) -> bool:
    """Count a change of `names` to `given` against the search (False when there is none, or it
    was tried already), with its note: "`said`, where Triton stopped at line N: message)"."""
    key = (frozenset(names), given)
    if not names or key in state.tried:
        return False
    state.tried.add(key)
    state.compiles += 1
    for n in names:
        state.given[n] = given
    state.notes.append(f"{', '.join(names)}: {said}, where Triton stopped at line {clash.line}: "
                       f"{textwrap.shorten(clash.message, 120)})")
    return True


def next_retyping(err: BaseException, kernel: Any, fns: list[Any], values: dict[str, Any],
                  state: Retyping) -> dict[str, Any] | None:
    """Tensors to pass instead (parameter -> a meta tensor of another dtype) for the next compile,
    or None when the error is not about types, no pointer reaches it, or the search is spent."""
    import torch

    if state.compiles >= MAX_RETYPES:
        return None
    smaller = _sizes_too_large(err, kernel, fns, values, state)
    if smaller:
        return smaller
    clash = type_clash(err, fns)
    if clash is None and state.last is not None and _VERIFIER.search(str(err)):
        # the change got past the frontend and an MLIR verifier refused it ("'tt.int_to_ptr' op
        # operand must be 64-bit signless integer", on stderr; the exception says only "error
        # encountered during parsing"): the same node, the next dtype
        last = state.last
        clash = TypeClash(last.fn, last.node, str(err).splitlines()[0], last.line)
    if clash is None:
        return None
    state.last = clash
    nonzero = _zeros_as_divisors(clash, kernel, values, state)
    if nonzero:
        return nonzero
    carried = _loop_carried(clash, kernel, values, state)
    if carried:
        return carried
    floats = _numbers_as_floats(clash, kernel, values, state)
    if floats:
        return floats
    numbers = _tensors_as_numbers(clash, kernel, values, state)
    if numbers:
        return numbers
    pointers = {n for n, v in values.items() if isinstance(v, torch.Tensor) and n not in state.fixed}
    if re.search(r"\bptr\b|pointer", clash.message):
        # a number where the kernel loads (a wrapper's `scale` made up as 1.0): a one-element tensor
        pointers |= {n for n, v in values.items() if isinstance(v, float) and n not in state.fixed}
    if clash.fn is kernel:
        names = _reaching(kernel, clash.node, pointers)
    else:
        inner = parameter_usage(clash.fn).pointers | {p.name for p in getattr(clash.fn, "params", [])}
        names = _through_caller(kernel, clash.fn, _reaching(clash.fn, clash.node, inner), pointers)
        if not names and clash.outer is not None and clash.outer[0] is kernel:
            # a helper called by a helper (lmdeploy's `_unpack_weight` -> `_dequant_s4_to_f16x2`):
            # the pointers whose loads reach the kernel's own call of the chain
            names = _reaching(kernel, clash.outer[1], pointers)
    if (re.search(r"pointer<", clash.message) or _WANTS_TYPE.search(clash.message)) and clash.fn is kernel:
        # "invalid operands of type pointer<bf16> and fp32": the pointer is fine, its offset is not;
        # the pointers the node names itself are the ones being offset. Likewise "Expected an
        # integer scalar type in shape/strides/offsets": a loaded value, not the block's base.
        direct = {n.id for n in ast.walk(clash.node) if isinstance(n, ast.Name)}
        names = [n for n in names if n not in direct] or names
    if not names:
        return None
    numbers = [n for n in names if not isinstance(values[n], torch.Tensor)]
    if numbers:
        state.compiles += 1
        for n in numbers:
            state.given[n] = "float32"
        state.notes.append(f"{', '.join(numbers)}: a float32 tensor (a number, where Triton stopped at line "
                           f"{clash.line}: {textwrap.shorten(clash.message, 120)})")
        return {n: torch.empty([1], dtype=torch.float32, device="meta") for n in numbers}
    current = {str(values[n].dtype).replace("torch.", "") for n in names}
    for n in names:
        state.original.setdefault(n, str(values[n].dtype).replace("torch.", ""))
    for dtype in _options(clash, current | {state.original[n] for n in names}):
        key = (frozenset(names), dtype)
        if key in state.tried or not hasattr(torch, dtype):
            continue
        state.tried.add(key)
        state.compiles += 1
        new = {}
        for n in names:
            t = values[n]
            new[n] = torch.empty_strided(tuple(t.shape), tuple(t.stride()), dtype=getattr(torch, dtype),
                                         device=t.device)
            state.given[n] = dtype
        first = textwrap.shorten(clash.message.splitlines()[0] if clash.message else "a type error", 120)
        state.notes.append(f"{', '.join(names)}: {dtype} (with {', '.join(sorted(current))}, Triton stopped at "
                           f"line {clash.line}: {first})")
        return new
    return None


def left_out(err: BaseException, overrides: dict[str, Any], state: Retyping) -> dict[str, Any] | None:
    """Values for the run-time arguments a made-up call left out (gemlite's wrapper passes its
    meta-data strides only for some scale modes): the values the tool offers for them, once."""
    from .. import triton_compat as tc
    from .kernel_file import parse_value, suggested_value

    if not isinstance(err, tc.MissingArguments) or err.constexpr or set(err.names) & set(overrides):
        return None
    filled = {n: parse_value(suggested_value(n)) for n in err.names}
    state.notes.append(", ".join(f"{n}={v}" for n, v in filled.items()) + " (the made-up call left them out; "
                                                                          "the values offered)")
    return filled


def say_retyped(state: Retyping | None, log: Any, compiled: bool) -> None:
    """The log's note on what a made-up call's compile changed, once."""
    if state is None or not state.notes:
        return
    outcome = "compiled with" if compiled else "still failed after"
    log.write(f"note: the made-up call's pointer dtypes and missing arguments, from Triton's own type errors "
              f"({outcome} {len(state.notes)} change{'s' if len(state.notes) > 1 else ''}): "
              + "; ".join(state.notes) + "\n")
    if compiled:
        log.write("".join(f"warning: {w}\n" for w in state.warnings))
    state.notes.clear()
    state.warnings.clear()
