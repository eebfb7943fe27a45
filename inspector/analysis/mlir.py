"""A light reading of TTIR / TTGIR text: ops with their results, operands and attributes, the
kernel's arguments with Triton's specialisation, loop nesting, and the layout attributes.

Enough for the memory analysis to follow a pointer back to the kernel argument it came from and
for the layout explanations; not a full MLIR parser (types are kept as text).
"""

from __future__ import annotations

from typing import Iterator

import functools
import re
from dataclasses import dataclass, field

from .instructions import mlir_op
from .locations import stage_lines

# `    %x_6 = tt.load %x_5, %mask_4 : tensor<1024x!tt.ptr<f32>> loc(#loc21)`
# `      %acc_23:3 = ttng.warp_group_dot_wait %acc_22, ...`, `    %0:2 = "tt.reduce"(%x) <{axis = 0 : i32}> ({`
MLIR_RESULTS = re.compile(r"^\s*((?:%[\w.]+(?::\d+)?)(?:\s*,\s*%[\w.]+(?::\d+)?)*)\s*=\s")
# An SSA use: `%x_5`, `%17#0` (a result of a multi-result op), `%arg10`
MLIR_VALUE = re.compile(r"%([\w.]+)(?:#\d+)?")
# the same, keeping the result index: ("17", "2") for `%17#2`
MLIR_VALUE_INDEXED = re.compile(r"%([\w.]+)(?:#(\d+))?")
# `tt.func public @add_kernel(%x_ptr: !tt.ptr<f32> {tt.divisibility = 16 : i32} loc("x_ptr"(#loc)), ...)`
MLIR_FUNC = re.compile(r"^\s*tt\.func\s+(?:public\s+|private\s+)?@([\w$.]+)\((.*)\)\s*(?:->.*?)?(?:attributes\s*\{.*\})?\s*\{\s*$")
# One argument: `%n: i32 {tt.divisibility = 16 : i32} loc("n"(#loc))`
MLIR_ARG = re.compile(r"^%([\w.]+):\s*(.+?)(?:\s*\{([^{}]*)\})?(?:\s+loc\(.*\))?$")
# `tt.divisibility = 16 : i32`, or on an op `{tt.divisibility = dense<16> : tensor<1xi32>}`
MLIR_DIVISIBILITY = re.compile(r"tt\.divisibility\s*=\s*(?:dense<)?(\d+)")
# `scf.for %arg9 = %c0_i32 to %k_tiles step %c1_i32 iter_args(%arg10 = %cst, %arg11 = %a) -> (...) : i32 {`
MLIR_FOR = re.compile(r"scf\.for\s+%([\w.]+)\s*=\s*(%[\w.#]+)\s+to\s+(%[\w.#]+)\s+step\s+(%[\w.#]+)")
MLIR_ITER_ARGS = re.compile(r"iter_args\((.*?)\)\s*(?:->|:|\{)")
# `    %c1024_i32 = arith.constant 1024 : i32`, `arith.constant dense<0.000000e+00> : tensor<...>`
MLIR_INT_CONSTANT = re.compile(r"arith\.constant\s+(?:dense<)?(-?\d+)>?\s*:")
# An attribute alias: `#blocked = #ttg.blocked<{sizePerThread = [4], ...}>`
MLIR_ATTR_ALIAS = re.compile(r"^(#[\w.]+)\s*=\s*(#[\w.]+)<(.*)>\s*$")
# A tensor type's shape, element type and encoding: `tensor<128x64xf16, #blocked>`, `tensor<1024x!tt.ptr<f32>>`
MLIR_TENSOR = re.compile(r"tensor<((?:\d+x)*)(!tt\.ptr<([\w]+)>|[\w]+)(?:,\s*(#[\w.]+(?:<[^>]*>)?))?>")


@dataclass
class Arg:
    """A kernel argument as specialised for this compile."""

    name: str
    type: str  # "!tt.ptr<f32>", "i32", "f32", ...
    divisibility: int | None  # tt.divisibility: bytes for pointers, the integer's factor for ints

    @property
    def is_pointer(self) -> bool:
        return self.type.startswith("!tt.ptr")


@dataclass
class Op:
    """One op line of TTIR/TTGIR."""

    line: int  # 1-based line in the stage
    name: str  # "tt.load"
    results: list[str]  # value names without "%" ("x_6"); multi-result ops give their base name
    operands: list[str]  # value names used, in order
    text: str
    loop_depth: int  # how many scf.for / scf.while regions enclose it
    loop: "Op | None" = None  # the innermost scf.for / scf.while enclosing it


@dataclass
class Module:
    """The ops and arguments of a TTIR/TTGIR module."""

    ops: list[Op] = field(default_factory=list)
    args: dict[str, Arg] = field(default_factory=dict)
    defs: dict[str, Op] = field(default_factory=dict)  # value -> the op defining it
    loop_carried: dict[str, list[str]] = field(default_factory=dict)  # iter arg -> [init, yielded] values
    layouts: dict[str, tuple[str, str]] = field(default_factory=dict)  # "#blocked" -> ("#ttg.blocked", params)
    attrs: dict[str, str] = field(default_factory=dict)  # module attributes ("ttg.num-warps" -> "4")
    loops: dict[int, tuple[str, list[str]]] = field(default_factory=dict)  # scf.for line -> (induction var, iter args)
    branches: dict[int, list[list[str]]] = field(default_factory=dict)  # scf.if line -> [then yields, else yields]

    @functools.cached_property
    def outside_loops(self) -> frozenset[str]:
        """The arguments and the values defined by ops outside every loop: the same at each
        iteration of any loop (read once the module is built)."""
        return frozenset(self.args) | frozenset(n for n, op in self.defs.items() if op.loop is None)


def _split_top(s: str, sep: str = ",") -> list[str]:
    """Split on `sep` outside brackets and quotes."""
    out, depth, cur, quote = [], 0, [], False
    for c in s:
        if c == '"':
            quote = not quote
        elif not quote:
            if c in "([{<":
                depth += 1
            elif c in ")]}>":
                depth -= 1
            elif c == sep and depth == 0:
                out.append("".join(cur).strip())
                cur = []
                continue
        cur.append(c)
    if "".join(cur).strip():
        out.append("".join(cur).strip())
    return out


def _strip_loc(text: str) -> str:
    k = text.find(" loc(")
    return text[:k] if k >= 0 else text


def parse_module(text: str) -> Module:
    """Read the ops, arguments, loops and layout aliases of a TTIR/TTGIR module.

    MLIR's printer may reuse a value's name in sibling regions (the `then` and `else` of an
    `scf.if`, two loops one after the other): a name defined again gets a key of its own,
    `name@line`, and each operand is resolved to the definition visible from its region."""
    mod = Module()
    # per open region: (region kind, iter args, the op that opened it, the names defined in it)
    loop_stack: list[tuple[str | None, list[str], Op | None, dict[str, str]]] = []

    def resolve(value: str) -> str:
        base, hash_, index = value.partition("#")
        for _, _, _, scope in reversed(loop_stack):
            if base in scope:
                return scope[base] + hash_ + index
        return value

    def define(value: str, op: Op, scope: dict[str, str], count: int = 1) -> str:
        """Name a result; `%x:3 = ...` also answers `x#0`, `x#1`, `x#2` (its uses name the result)."""
        key = value if value not in mod.defs and value not in mod.args else f"{value}@{op.line}"
        scope[value] = key
        mod.defs.setdefault(key, op)
        for i in range(count if count > 1 else 0):
            mod.defs.setdefault(f"{key}#{i}", op)
        return key

    for no, line in enumerate(stage_lines(text), 1):
        s = line.strip()
        if not s:
            continue
        if s.startswith("#"):
            if m := MLIR_ATTR_ALIAS.match(s):
                mod.layouts[m.group(1)] = (m.group(2), m.group(3))
            continue
        if s.startswith("module"):
            for item in _split_top(s[s.find("{") + 1:s.rfind("}")] if "attributes" in s else ""):
                k, _, v = item.partition("=")
                mod.attrs[k.strip().strip('"')] = v.split(":")[0].strip().strip('"')
            loop_stack.append((None, [], None, {}))
            continue
        if s.startswith("}"):
            if not s.endswith("{") and loop_stack:
                loop_stack.pop()
            elif loop_stack:  # `} else {`: a sibling region, which sees nothing the first defined
                kind, carried, opener, _ = loop_stack[-1]
                loop_stack[-1] = (kind, carried, opener, {})
                if kind == "scf.if" and opener is not None:
                    mod.branches.setdefault(opener.line, [[]]).append([])
            continue
        if s.startswith("tt.func"):
            if m := MLIR_FUNC.match(s):
                for a in _split_top(m.group(2)):
                    if am := MLIR_ARG.match(a.strip()):
                        div = MLIR_DIVISIBILITY.search(am.group(3) or "")
                        mod.args[am.group(1)] = Arg(am.group(1), am.group(2).strip(), int(div.group(1)) if div else None)
            loop_stack.append((None, [], None, {}))
            continue
        name = mlir_op(line)
        if name is None:
            continue
        body = _strip_loc(s)
        results: list[str] = []
        rest = body
        counts: list[int] = []
        if rm := MLIR_RESULTS.match(line):
            parts = re.split(r"\s*,\s*", rm.group(1))
            results = [r.split(":")[0].lstrip("%") for r in parts]
            counts = [int(r.split(":")[1]) if ":" in r else 1 for r in parts]
            rest = line[rm.end():]
            rest = _strip_loc(rest)
        after_name = rest.split(name, 1)[1] if name in rest else rest
        operands = [resolve(v + (f"#{i}" if i else "")) for v, i in MLIR_VALUE_INDEXED.findall(after_name)]
        loops = [o for kind, _, o, _ in loop_stack if kind in ("scf.for", "scf.while")]
        op = Op(no, name, results, operands, body, len(loops), loops[-1] if loops else None)
        mod.ops.append(op)
        outer = loop_stack[-1][3] if loop_stack else {}
        op.results = [define(r, op, outer, n) for r, n in zip(results, counts or [1] * len(results))]
        if name == "scf.for" and (fm := MLIR_FOR.search(body)):
            # lower bound, upper bound, step (the loop's results, `%r = scf.for ...`, are no operands)
            op.operands = [resolve(v.lstrip("%").split("#")[0]) for v in fm.group(2, 3, 4)]
            inner: dict[str, str] = {}
            iv = define(fm.group(1), op, inner)  # the induction variable, seen inside the loop only
            carried: list[str] = []
            if im := MLIR_ITER_ARGS.search(body):
                for pair in _split_top(im.group(1)):
                    k, _, v = pair.partition("=")
                    init = resolve(v.strip().lstrip("%").split("#")[0])
                    key = k.strip().lstrip("%")
                    key = key if key not in mod.defs and key not in mod.loop_carried else f"{key}@{no}"
                    inner[k.strip().lstrip("%")] = key
                    mod.loop_carried[key] = [init]
                    carried.append(key)
            mod.loops[no] = (iv, carried)
            loop_stack.append(("scf.for", carried, op, inner))
            continue
        if name == "scf.yield" and loop_stack and loop_stack[-1][0] == "scf.for":
            for k, v in zip(loop_stack[-1][1], operands):
                mod.loop_carried.setdefault(k, []).append(v)
        if name == "scf.yield" and loop_stack and loop_stack[-1][0] == "scf.if" and loop_stack[-1][2] is not None:
            mod.branches.setdefault(loop_stack[-1][2].line, [[]])[-1] = operands
        if s.endswith("{"):
            loop_stack.append((name, [], op, {}))
    return mod


# an attribute dictionary, not an inline layout's parameters (`#ttg.slice<{dim = 1, parent = #blocked}>`)
_ATTR_DICT = re.compile(r"(?<!<)\{[^{}]*\}")


def type_text(op_text: str) -> str:
    """The types an op prints after its ` : `, with attribute dictionaries removed first (a
    `{tt.divisibility = dense<16> : tensor<1xi32>}` on a load holds a ` : ` of its own)."""
    body = op_text
    for _ in range(4):
        stripped = _ATTR_DICT.sub("", body)
        if stripped == body:
            break
        body = stripped
    return body.split(" : ", 1)[1] if " : " in body else ""


def tensor_type(text: str) -> tuple[list[int], str, str | None, bool] | None:
    """(shape, element type, encoding, is-pointer) of the first tensor type in `text`."""
    m = MLIR_TENSOR.search(text)
    if not m:
        return None
    shape = [int(d) for d in m.group(1).split("x") if d]
    elem = m.group(3) or m.group(2)
    return shape, elem, m.group(4), m.group(3) is not None


def element_bits(elem: str) -> int | None:
    """Bits of an MLIR element type: f32 -> 32, bf16 -> 16, i1 -> 8 (stored as bytes), f8E4M3FN -> 8."""
    if elem in ("i1",):
        return 8
    m = re.match(r"^(?:[fi]|bf|ui|si)(\d+)", elem)
    if m:
        return int(m.group(1))
    if elem.startswith(("f8", "f4", "f6")):
        return 8
    return None


def int_constant(op: Op) -> int | None:
    """The value of an integer `arith.constant` (a splat's value for a dense tensor)."""
    if op.name != "arith.constant":
        return None
    m = MLIR_INT_CONSTANT.search(op.text)
    if not m or "." in op.text.split(":")[0].split("constant", 1)[1]:
        return None
    return int(m.group(1))


class Walk:
    """Each SSA value once, from `start` through what the loop pushes (depth first; `fifo` for
    breadth first, nearest first):

        walk = Walk(value)
        for v in walk:
            walk.push(*producers_of(v))
    """

    def __init__(self, *start: str, fifo: bool = False) -> None:
        self._todo = list(start)
        self._fifo = fifo
        self.seen: set[str] = set()

    def push(self, *values: str) -> None:
        self._todo.extend(values)

    def __iter__(self) -> Iterator[str]:
        while self._todo:
            v = self._todo.pop(0) if self._fifo else self._todo.pop()
            if v not in self.seen:
                self.seen.add(v)
                yield v
