"""What a kernel's parameters are, read from how the kernel uses them (not from their names).

Used to build a call when the file gives none. A parameter is a pointer when an address that is
loaded from, stored to or handed to an atomic, a block pointer or a tensor descriptor is built
from it by additions only (`X + row * stride + offs`, `X += row * stride`): offsets are added to a
pointer, never multiplied, compared or used as a loop bound, which is how strides and sizes show
themselves. A pointer whose loaded values index another address (`y = tl.load(Y); tl.load(X + y)`)
holds indices: int64, as torch's index tensors do; so does one whose loaded values bound a loop
(`cu_seqlens`). One whose loaded values inline assembly takes several to a 32-bit register
(`tl.inline_asm_elementwise(..., pack=4)`, fp4 and int4 unpacking) holds values of that width
(uint8 for 4). A parameter asked for its pointee type
(`y.to(Y.dtype.element_ty)`) is a pointer, whatever else it meets. Helper `@triton.jit` functions
the kernel calls are followed (a pointer passed to a helper that loads from it is a pointer).
"""

from __future__ import annotations

import ast
import re
import textwrap
from dataclasses import dataclass, field
from typing import Any, Iterator

# Calls whose first argument (or `pointer=`/`ptr=`/`base=` keyword) is an address.
ADDRESS_CALLS = {"load", "store", "atomic_add", "atomic_max", "atomic_min", "atomic_and", "atomic_or",
                 "atomic_xor", "atomic_xchg", "atomic_cas", "make_block_ptr", "make_tensor_descriptor",
                 "prefetch"}
ADDRESS_KEYWORDS = ("pointer", "ptr", "base")
# Calls that pass their first argument's pointer-ness through (`tl.multiple_of(X + offs, 16)`).
PASS_THROUGH = {"multiple_of", "max_contiguous", "max_constancy", "where", "broadcast_to", "reshape", "view",
                "expand_dims", "advance", "cast", "to", "permute", "trans"}
# Compiler hints: their value is their first argument's.
HINTS = {"multiple_of", "max_contiguous", "max_constancy"}
MODULE_NAMES = {"tl", "triton", "language", "libdevice", "math", "core", "tle"}
# Builtins whose result is computed from their arguments (an integer of integers).
PASS_THROUGH_CALLS = {"int", "float", "abs", "len", "round"}
BIT_OPS = (ast.RShift, ast.LShift, ast.BitAnd, ast.BitOr, ast.BitXor)
# `tl.inline_asm_elementwise(asm, constraints, args, dtype, is_pure, pack)`: `pack` values go into
# one 32-bit register, so each is 32 // pack bits wide; a float32 there is an assertion in LLVM
# that kills the compile ("number of input constraints does not match"), not a type error.
PACKED_DTYPES = {4: "uint8", 2: "float16"}
# Calls whose arguments are integers (sizes, bounds).
INTEGER_CALLS = {"range", "static_range", "cdiv", "min", "max", "minimum", "maximum", "arange", "program_id"}


@dataclass
class Usage:
    pointers: set[str] = field(default_factory=set)
    index_pointers: set[str] = field(default_factory=set)  # pointers whose values are indices
    integers: set[str] = field(default_factory=set)  # used as sizes/strides
    bits_pointers: set[str] = field(default_factory=set)  # pointers whose values are shifted and masked
    bit_values: set[str] = field(default_factory=set)  # parameters shifted or masked (`b >> shift & mask`)
    # pointers whose loaded values an inline assembly takes `pack` at a time in 32-bit registers
    # (fp4/int4 unpacking: `tl.inline_asm_elementwise(..., args=[packed], pack=4)`) -> the torch
    # dtype of that width (`PACKED_DTYPES`)
    packed_pointers: dict[str, str] = field(default_factory=dict)


def _is_method(node: ast.Call) -> bool:
    """`x.to(...)` rather than `tl.where(...)`: an attribute call on something not a module name."""
    f = node.func
    return isinstance(f, ast.Attribute) and not (isinstance(f.value, ast.Name) and f.value.id in MODULE_NAMES) \
        and not isinstance(f.value, ast.Attribute)


def _call_name(node: ast.Call) -> str:
    f = node.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""


def _same_data(expr: ast.expr | None) -> ast.expr | None:
    """The expression under calls that only split or rearrange it (`x.split()`, `tl.split(x)`,
    `tl.trans(x)`)."""
    while isinstance(expr, ast.Call) and _call_name(expr) in ("split", "trans", "permute", "reshape"):
        f = expr.func
        module = isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id in ("tl", "triton")
        expr = f.value if isinstance(f, ast.Attribute) and not module else (expr.args[0] if expr.args else None)
    return expr


class _Flow(ast.NodeVisitor):
    """Assignments by name, address expressions, integer evidence and loads, in one walk."""

    def __init__(self) -> None:
        self.assigned: dict[str, list[ast.expr]] = {}
        self.addresses: list[ast.expr] = []
        self.integer_uses: list[ast.expr] = []
        self.loads: dict[str, list[ast.expr]] = {}  # name -> addresses of the loads assigned to it
        self.calls: list[ast.Call] = []
        self.element_types: set[str] = set()  # names asked for `X.dtype.element_ty`: pointers only have one
        self.bit_uses: list[ast.expr] = []  # operands of >>, <<, &, |, ^ (packed integers)
        self.packed_uses: list[tuple[ast.expr, str]] = []  # inline assembly's packed arguments, their dtype

    def _assign(self, target: ast.expr, value: ast.expr) -> None:
        if isinstance(target, ast.Name):
            self.assigned.setdefault(target.id, []).append(value)
            loaded = value
            # `start = tl.multiple_of(tl.load(Starts + b), 4)`: a hint leaves what was loaded
            while isinstance(loaded, ast.Call) and _call_name(loaded) in HINTS and loaded.args:
                loaded = loaded.args[0]
            if isinstance(loaded, ast.Call) and _call_name(loaded) == "load" and loaded.args:
                self.loads.setdefault(target.id, []).append(loaded.args[0])
        elif isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List)):
            for t, v in zip(target.elts, value.elts):
                self._assign(t, v)
        elif isinstance(target, (ast.Tuple, ast.List)):
            # `start, end = tl.load(ptr + 2 * i + tl.arange(0, 2)).split()` (nemo's arc ranges): each
            # name is part of what was loaded
            inner = _same_data(value)
            for t in target.elts:
                if isinstance(t, ast.Name):
                    self.assigned.setdefault(t.id, []).append(value)
                    if isinstance(inner, ast.Call) and _call_name(inner) == "load" and inner.args:
                        self.loads.setdefault(t.id, []).append(inner.args[0])

    def visit_Assign(self, node: ast.Assign) -> None:
        for t in node.targets:
            self._assign(t, node.value)
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self._assign(node.target, node.value)
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        if isinstance(node.target, ast.Name):
            if isinstance(node.op, (ast.Add, ast.Sub)):
                self.assigned.setdefault(node.target.id, []).append(node.value)
            else:
                self.integer_uses.append(node.target)
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        name = _call_name(node)
        if name in ADDRESS_CALLS:
            address = node.args[0] if node.args else next(
                (k.value for k in node.keywords if k.arg in ADDRESS_KEYWORDS), None)
            if address is not None:
                self.addresses.append(address)
            if name == "make_block_ptr":  # shape=, strides=, offsets= are integers
                self.integer_uses.extend(k.value for k in node.keywords if k.arg in ("shape", "strides", "offsets"))
                self.integer_uses.extend(node.args[1:4])
        elif name in INTEGER_CALLS:
            self.integer_uses.extend(node.args)
        elif name == "inline_asm_elementwise":
            given = {k.arg: k.value for k in node.keywords if k.arg}
            given.update(zip(("asm", "constraints", "args", "dtype", "is_pure", "pack"), node.args))
            pack, args = given.get("pack"), given.get("args")
            if isinstance(pack, ast.Constant) and pack.value in PACKED_DTYPES and isinstance(args, (ast.List, ast.Tuple)):
                self.packed_uses.extend((a, PACKED_DTYPES[pack.value]) for a in args.elts)
        self.calls.append(node)
        self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        # `Y.dtype.element_ty` (`y.to(Y.dtype.element_ty)`), `Y.type.element_ty`: the pointee type
        inner = node.value
        if node.attr == "element_ty" and isinstance(inner, ast.Attribute) and inner.attr in ("dtype", "type") \
                and isinstance(inner.value, ast.Name):
            self.element_types.add(inner.value.id)
        self.generic_visit(node)

    def visit_BinOp(self, node: ast.BinOp) -> None:
        if not isinstance(node.op, (ast.Add, ast.Sub)):
            self.integer_uses.extend((node.left, node.right))
        if isinstance(node.op, BIT_OPS):
            self.bit_uses.extend((node.left, node.right))
        self.generic_visit(node)

    def visit_Compare(self, node: ast.Compare) -> None:
        if not any(isinstance(op, (ast.Is, ast.IsNot)) for op in node.ops):
            self.integer_uses.extend((node.left, *node.comparators))
        self.generic_visit(node)


def _names(expr: ast.expr) -> set[str]:
    """Names an integer-evidence expression mentions directly (not through assignments)."""
    if isinstance(expr, ast.Name):
        return {expr.id}
    if isinstance(expr, (ast.Tuple, ast.List)):
        return set().union(*(_names(e) for e in expr.elts)) if expr.elts else set()
    return set()


class _Bases:
    """The names an address is built from by additions (its pointer candidates)."""

    def __init__(self, flow: _Flow) -> None:
        self.flow = flow

    def of(self, expr: ast.expr, seen: frozenset[str] = frozenset()) -> list[str]:
        """In left-to-right order: by convention the pointer comes first (`X + offs`)."""
        return list(dict.fromkeys(self._of(expr, seen)))

    def _of(self, expr: ast.expr, seen: frozenset[str]) -> list[str]:
        if isinstance(expr, ast.Name):
            if expr.id in seen:
                return []
            out = [expr.id]
            for value in self.flow.assigned.get(expr.id, []):
                out += self._of(value, seen | {expr.id})
            return out
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.Sub)):
            return self._of(expr.left, seen) + self._of(expr.right, seen)
        if isinstance(expr, ast.Subscript):
            return self._of(expr.value, seen)
        if isinstance(expr, ast.IfExp):
            return self._of(expr.body, seen) + self._of(expr.orelse, seen)
        if isinstance(expr, ast.Call):
            name = _call_name(expr)
            if name in PASS_THROUGH:
                if name == "where" and len(expr.args) == 3:
                    return self._of(expr.args[1], seen) + self._of(expr.args[2], seen)
                if _is_method(expr):  # x.to(...), x.reshape(...): the object is the value
                    return self._of(expr.func.value, seen)  # type: ignore[attr-defined]
                return self._of(expr.args[0], seen) if expr.args else []
            if name == "make_block_ptr":
                base = expr.args[0] if expr.args else next((k.value for k in expr.keywords if k.arg == "base"), None)
                return self._of(base, seen) if base is not None else []
        return []


def _alternatives(expr: ast.expr, flow: "_Flow", params: set[str], depth: int = 0) -> list[ast.expr]:
    """The addresses an address may be, where its base is chosen (xformers' `x_in = tl.where(is_v,
    xv, tl.where(is_q, xq, xk))`, then `tl.load(x_in + cols)`): each branch is a pointer. Follows
    the left operand of `+`/`-`, subscripts and locals assigned once; anything else is itself."""
    if depth > 8:
        return [expr]
    node = expr
    while True:
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
            node = node.left
        elif isinstance(node, ast.Subscript):
            node = node.value
        elif isinstance(node, ast.Name) and node.id not in params and len(flow.assigned.get(node.id, [])) == 1:
            node = flow.assigned[node.id][0]
        else:
            break
    branches: list[ast.expr] = []
    if isinstance(node, ast.Call) and _call_name(node) == "where" and len(node.args) == 3:
        branches = [node.args[1], node.args[2]]
    elif isinstance(node, ast.IfExp):
        branches = [node.body, node.orelse]
    if not branches:
        return [expr]
    return [a for b in branches for a in _alternatives(b, flow, params, depth + 1)]


def _names_outside_loads(expr: ast.expr) -> list[str]:
    """Names an expression computes with, not looking inside `tl.load(...)` calls, nor inside calls
    of the kernel's own helpers (`load_ptr(ptrs, mask)`: what they return is not their pointer)."""
    if isinstance(expr, ast.Call) and (_call_name(expr) in ("load", "load_tensor_descriptor")
                                       or isinstance(expr.func, ast.Name) and expr.func.id not in INTEGER_CALLS
                                       and expr.func.id not in PASS_THROUGH_CALLS):
        return []
    if isinstance(expr, ast.Name):
        return [expr.id]
    return [n for child in ast.iter_child_nodes(expr) for n in _names_outside_loads(child)]


def _mentioned(exprs: list[ast.expr], assigned: dict[str, list[ast.expr]]) -> set[str]:
    """Every name the expressions use, directly or through the assignments of the names they use."""
    out: set[str] = set()
    todo = [n.id for e in exprs for n in ast.walk(e) if isinstance(n, ast.Name)]
    while todo:
        name = todo.pop()
        if name in out:
            continue
        out.add(name)
        todo.extend(n.id for v in assigned.get(name, []) for n in ast.walk(v) if isinstance(n, ast.Name))
    return out


def _function_ast(fn: Any) -> ast.FunctionDef | None:
    try:
        tree = ast.parse(textwrap.dedent(fn.src))
    except (SyntaxError, AttributeError, TypeError):
        return None
    return next((n for n in tree.body if isinstance(n, ast.FunctionDef)), None)


def _helper_calls(fn: Any, calls: list[ast.Call], depth: int) -> Iterator[tuple["Usage", list[tuple[str, ast.expr]]]]:
    """(the helper's own usage, (its parameter, the expression passed)) for each call of another
    `@triton.jit` function among `calls`, a few levels deep."""
    if depth >= 3:
        return
    globals_ = getattr(getattr(fn, "fn", None), "__globals__", {})
    for call in calls:
        callee = globals_.get(call.func.id) if isinstance(call.func, ast.Name) else None
        if callee is None or not hasattr(callee, "src") or callee is fn:
            continue
        inner_params = [p.name for p in getattr(callee, "params", [])]
        passed = list(zip(inner_params, call.args)) + [(k.arg, k.value) for k in call.keywords if k.arg]
        yield parameter_usage(callee, depth + 1), passed


def parameter_usage(fn: Any, _depth: int = 0) -> Usage:
    """Pointers, index pointers and integers among a JITFunction's parameters, from its source."""
    node = _function_ast(fn)
    if node is None:
        return Usage()
    params = [a.arg for a in node.args.args]
    flow = _Flow()
    for stmt in node.body:
        flow.visit(stmt)
    bases = _Bases(flow)
    usage = Usage()
    # Names multiplied, compared or used as bounds are not pointers; nor is what they were computed
    # from (n = N * 2), up to a load (a loaded value is not its pointer).
    integer_names: set[str] = set()
    todo = [n for expr in flow.integer_uses for n in _names(expr)]
    while todo:
        name = todo.pop()
        if name in integer_names:
            continue
        integer_names.add(name)
        todo.extend(n for v in flow.assigned.get(name, []) for n in _names_outside_loads(v))

    def pointer_of(expr: ast.expr) -> list[str]:
        out = []
        for alternative in _alternatives(expr, flow, set(params)):
            first = next((n for n in bases.of(alternative) if n in params and n not in integer_names), None)
            out += [first] if first and first not in out else []
        return out

    candidates: set[str] = set()
    for address in flow.addresses:
        candidates.update(pointer_of(address))
    # Pointers passed on to helper kernels that use them as pointers.
    helper_calls = list(_helper_calls(fn, flow.calls, _depth))
    for inner, passed in helper_calls:
        for pname, arg in passed:
            if pname in inner.pointers:
                names = pointer_of(arg)
                candidates.update(names)
                if pname in inner.index_pointers:
                    usage.index_pointers.update(names)
    usage.pointers = {p for p in params if p in candidates and p not in integer_names}
    # only a pointer has a pointee type: that outweighs a name it shares with arithmetic
    usage.pointers |= {p for p in params if p in flow.element_types}
    usage.integers = {p for p in params if p in integer_names and p not in usage.pointers}
    # Loaded values that feed another address, or a loop bound (`for i in range(start, end)` over
    # `cu_seqlens`): the pointer they came from holds integers (it was a float32 tensor, and Triton
    # refused "For loop bounds and step must all be ints").
    address_names = _mentioned(flow.addresses, flow.assigned) | _mentioned(
        [e for c in flow.calls if _call_name(c) in ("range", "static_range") for e in c.args], flow.assigned)
    for local, load_addresses in flow.loads.items():
        if local in address_names:
            for a in load_addresses:
                usage.index_pointers.update(pointer_of(a))
    usage.index_pointers &= usage.pointers
    # A value a helper loads (`b = load_ptr(b_ptrs, mask, ...)`) counts as loaded from what it was given.
    for local, values in list(flow.assigned.items()):
        calls = [v for v in values if isinstance(v, ast.Call)]
        for inner, passed in _helper_calls(fn, calls, _depth):
            flow.loads.setdefault(local, []).extend(arg for pname, arg in passed if pname in inner.pointers)
    # Loaded values that are shifted and masked (here, or by a helper they are passed to): packed
    # integers (quantized weights), so the pointer holds int32, not floats.
    bit_names = _mentioned(flow.bit_uses, flow.assigned)
    usage.bit_values = {p for p in params if p in bit_names}
    for inner, passed in helper_calls:
        bit_names |= _mentioned([arg for pname, arg in passed if pname in inner.bit_values], flow.assigned)
    for local, load_addresses in flow.loads.items():
        if local in bit_names:
            for a in load_addresses:
                usage.bits_pointers.update(pointer_of(a))
    usage.bits_pointers &= usage.pointers
    usage.bits_pointers -= usage.index_pointers
    for expr, dtype in flow.packed_uses:
        reached = _mentioned([expr], flow.assigned)
        for local, load_addresses in flow.loads.items():
            if local in reached:
                for a in load_addresses:
                    for name in pointer_of(a):
                        if name in usage.pointers and name not in usage.index_pointers:
                            usage.packed_pointers.setdefault(name, dtype)
    usage.bits_pointers -= set(usage.packed_pointers)
    return usage


# Triton keywords that take a string, and the value that is valid on every target
STRING_KEYWORDS = {"input_precision": "ieee", "cache_modifier": "", "eviction_policy": "", "sem": "relaxed",
                   "scope": "gpu", "padding_option": "zero", "rounding": "rtne"}


ASSERTING = ("assume", "static_assert", "device_assert")


def constexpr_uses(fn: Any) -> dict[str, str]:
    """What a kernel's code says a constexpr is, for values to offer when none is given: "dtype"
    (`tl.zeros(..., dtype=ACC_TYPE)`, `x.to(OUT_DTYPE)`), "string:relu" (compared with a string:
    the first; or passed to a Triton keyword that takes one, `STRING_KEYWORDS`), "int:32" (said
    equal to an integer: `tl.assume(BLOCK_N == 32)`), "extent" (`tl.arange(0, BLOCK)`), "unrolled" (`tl.static_range(W)`), "flag"
    (an `if` test on its own)."""
    node = _function_ast(fn)
    if node is None:
        return {}
    params = {a.arg for a in node.args.args}
    out: dict[str, str] = {}

    def say(expr: ast.expr, what: str) -> None:
        if isinstance(expr, ast.Name) and expr.id in params:
            out.setdefault(expr.id, what)

    # comparisons the code asserts (`tl.assume`, `tl.static_assert`, `assert`), not branches on
    declared = {id(c) for n in ast.walk(node)
                if isinstance(n, ast.Assert) or (isinstance(n, ast.Call) and _call_name(n) in ASSERTING)
                for c in ast.walk(n) if isinstance(c, ast.Compare)}
    for n in ast.walk(node):
        if isinstance(n, ast.Call):
            name = _call_name(n)
            for k in n.keywords:
                if k.arg in ("dtype", "out_dtype", "acc_dtype"):
                    say(k.value, "dtype")
                elif k.arg in STRING_KEYWORDS:  # `tl.dot(..., input_precision=precision)`
                    say(k.value, f"string:{STRING_KEYWORDS[k.arg]}")
            if name == "to" and n.args:
                say(n.args[0], "dtype")
            elif name == "arange" and len(n.args) == 2:
                say(n.args[1], "extent")
            elif name == "static_range" and n.args:
                say(n.args[-1] if len(n.args) < 3 else n.args[1], "unrolled")
        elif isinstance(n, ast.Compare) and len(n.comparators) == 1:
            other = n.comparators[0]
            if isinstance(other, ast.Constant) and isinstance(other.value, str):
                say(n.left, f"string:{other.value}")
            elif id(n) in declared and isinstance(other, ast.Constant) and type(other.value) is int \
                    and isinstance(n.ops[0], ast.Eq) and isinstance(n.left, ast.Name) and n.left.id in params:
                # `tl.assume(stride_xk == 1)`, `tl.static_assert(BLOCK_N == 32)`: what the code says
                # it is outranks what its name or an arange says (an `if bits == 3:` is a branch, not this)
                out[n.left.id] = f"int:{other.value}"
        elif isinstance(n, ast.If):
            say(n.test, "flag")
    return out


# a head dimension (attention): real code uses 64 or 128; 1024 overflows shared memory
HEAD_DIM_NAMES = re.compile(r"(dmodel|head_?dim|headdim|d_?head|block_?d(?:k|v)?$|^hd$|^d$|_d$)", re.I)


def suggested_value(name: str, tiles_2d: bool = False, use: str = "") -> str:
    """A plausible value to offer for a constexpr with no default. `tiles_2d`: the kernel has a
    `tl.dot` or several block sizes, so a block is one side of a tile (64, not 1024). `use`: what
    the kernel's code says it is (`kernel_params.constexpr_uses`), which outranks its name."""
    low = name.lower()
    if use == "dtype" or "dtype" in low:
        return "float32"
    if use.startswith(("string:", "int:")):
        return use.split(":", 1)[1]
    if use == "unrolled":
        return "4"
    if use == "flag":
        return "False"
    if low in ("eps", "epsilon") or low.endswith("_eps"):
        return "1e-6"
    if HEAD_DIM_NAMES.search(low):
        return "64"
    if "block" in low or "tile" in low or low.startswith("bs") or low.endswith("_size"):
        return "1024" if not tiles_2d and not any(c in low for c in ("_m", "_n", "_k")) else "64"
    if low.startswith(("has_", "is_", "use_", "enable")) or low in ("causal", "training"):
        return "False"
    if "group" in low:
        return "8"
    if use == "extent":  # a block side by another name (mLSTM's `siz_b_LQ`): tl.dot needs 16 or more
        return "64" if tiles_2d else "256"
    return "1"
