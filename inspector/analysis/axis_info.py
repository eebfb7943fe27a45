"""What Triton's AxisInfo analysis concludes about each integer and pointer value of a TTIR module:
per dimension, its contiguity (runs of consecutive values), divisibility (the largest power of two
dividing the first value of each run; bytes for pointers) and constancy (runs of equal values).

These three facts decide how wide a `tl.load` / `tl.store` can be: Triton's coalesce pass and its
load/store lowering take `min(contiguity, divisibility / element bytes, 128 bits)` of the pointer
and the constancy of the mask. The C++ analysis (`lib/Analysis/AxisInfo.cpp`) has no Python
binding, so this module follows its transfer rules over the TTIR text (`mlir.Module`), op by op,
including the hints `tl.multiple_of` / `tl.max_contiguous` / `tl.max_constancy` leave as
`tt.divisibility` / `tt.contiguity` / `tt.constancy` attributes. The rules are those of Triton
3.4 to 3.9 (unchanged over those releases); `tests/analysis/test_axis_info.py` checks the
widths they imply against what the compiler really emitted.

    info = axis_info(parse_module(rec.stages["ttir"]))
    info.of("cols_5")   # Axis(contiguity=(256,), divisibility=(1,), constancy=(1,))
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import reduce

from .address_values import _types, result_type, shape_of
from .mlir import Module, Op, int_constant

MAX_DIVISOR = 1 << 62  # Triton's highestPowOf2Divisor(0): "divisible by anything"

# `{tt.divisibility = dense<4> : tensor<1xi32>}`, `tt.contiguity = dense<[1, 8]> : tensor<2xi32>`
_HINT = re.compile(r"tt\.(divisibility|contiguity|constancy)\s*=\s*(?:dense<)?\[?([\d,\s]+)\]?")
_BOOL = re.compile(r"arith\.constant\s+(?:dense<)?(true|false)\b")
_CMP = re.compile(r"arith\.cmpi\s+(\w+)")
_AXIS = re.compile(r"axis = (\d+)")
# Ops that pass their operand's facts through unchanged.
_CASTS = ("arith.extsi", "arith.extui", "arith.trunci", "ttg.convert_layout", "tt.bitcast", "arith.index_cast")


def pow2_divisor(n: int) -> int:
    """The largest power of two dividing n (MAX_DIVISOR for 0)."""
    n = abs(int(n))
    return n & -n if n else MAX_DIVISOR


def gcd(*xs: int) -> int:
    """Triton's gcd: 0 is neutral."""
    return reduce(lambda a, b: math.gcd(a, b) if a and b else (a or b), xs, 0)


@dataclass(frozen=True)
class Axis:
    """The facts of one value, one entry per dimension (a scalar has one)."""

    contiguity: tuple[int, ...]
    divisibility: tuple[int, ...]
    constancy: tuple[int, ...]
    constant: int | None = None

    @property
    def rank(self) -> int:
        return len(self.contiguity)

    @staticmethod
    def pessimistic(rank: int) -> "Axis":
        return Axis((1,) * rank, (1,) * rank, (1,) * rank)

    @staticmethod
    def unknown(rank: int) -> "Axis":
        """A control-flow value before anything reached it: joins to whatever does."""
        return Axis((MAX_DIVISOR,) * rank, (MAX_DIVISOR,) * rank, (MAX_DIVISOR,) * rank)


def _join_div(a: Axis, b: Axis, d: int) -> int:
    ca, cb = a.contiguity[d], b.contiguity[d]
    if ca == cb or MAX_DIVISOR in (ca, cb):
        return gcd(a.divisibility[d], b.divisibility[d])
    return gcd(a.divisibility[d], b.divisibility[d], ca, cb)


def join(a: Axis | None, b: Axis | None) -> Axis | None:
    """Two values that may reach the same place (a loop's init and its yield)."""
    if a is None or b is None or a.rank != b.rank:
        return a or b
    r = range(a.rank)
    return Axis(tuple(gcd(a.contiguity[d], b.contiguity[d]) for d in r), tuple(_join_div(a, b, d) for d in r),
                tuple(gcd(a.constancy[d], b.constancy[d]) for d in r),
                a.constant if a.constant is not None and a.constant == b.constant else None)


def hints(op: Op) -> dict[str, tuple[int, ...]]:
    """The `tt.divisibility` / `tt.contiguity` / `tt.constancy` hints an op carries."""
    return {m.group(1): tuple(int(x) for x in m.group(2).replace(" ", "").split(",") if x)
            for m in _HINT.finditer(op.text)}


def _rank(op: Op) -> int:
    return max(1, len(shape_of(result_type(op))))


class AxisInfo:
    """The facts of every value of a module (`of(value)`), computed once on construction."""

    def __init__(self, mod: Module):
        self.mod = mod
        self.values: dict[str, Axis] = {}
        for name, arg in mod.args.items():
            div = arg.divisibility or 1
            self.values[name] = Axis((1,), (div,), (1,))
        # a loop-carried value depends on its own yield: iterate until nothing changes
        for _ in range(6):
            before = dict(self.values)
            for op in mod.ops:
                self._visit(op)
            if before == self.values:
                break

    def of(self, value: str) -> Axis | None:
        return self.values.get(value)

    def _get(self, value: str, rank: int = 1) -> Axis:
        got = self.values.get(value)
        if got is None:
            if value in self.mod.loop_carried:  # an iter arg: the join of what reaches it
                got = None
                for v in self.mod.loop_carried[value]:
                    got = join(got, self.values.get(v))
                return got or Axis.unknown(rank)
            return Axis.unknown(rank) if self._is_control(value) else Axis.pessimistic(rank)
        return got

    def _is_control(self, value: str) -> bool:
        op = self.mod.defs.get(value)
        return op is not None and op.name in ("scf.for", "scf.if", "scf.while")

    def _visit(self, op: Op) -> None:
        if op.name == "scf.for":  # before the results: a loop without iter_args has none, but an induction variable
            self._visit_for(op)
            return
        if not op.results:
            return
        if op.name == "scf.if":
            branches = self.mod.branches.get(op.line) or []
            for i, r in enumerate(self._result_names(op)):
                got = None
                for yields in branches:
                    if i < len(yields):
                        got = join(got, self.values.get(yields[i]))
                self.values[r] = got or Axis.pessimistic(1)
            return
        rank = _rank(op)
        got = self._transfer(op, rank)
        h = hints(op)
        if h:
            got = Axis(_hinted(h.get("contiguity"), got.contiguity), _hinted(h.get("divisibility"), got.divisibility),
                       _hinted(h.get("constancy"), got.constancy), got.constant)
        for r in op.results:
            self.values[r] = got

    def _result_names(self, op: Op) -> list[str]:
        base = op.results[0]
        n = sum(1 for k in self.mod.defs if k.startswith(base + "#"))
        return [f"{base}#{i}" for i in range(n)] if n else [base]

    def _visit_for(self, op: Op) -> None:
        iv, carried = self.mod.loops.get(op.line, (None, []))
        if iv is not None and len(op.operands) >= 3:
            lb, step = self._get(op.operands[0]), self._get(op.operands[2])
            self.values[iv] = Axis((1,), (gcd(lb.divisibility[0], step.divisibility[0]),), (1,))
        for k in carried:
            got = None
            for v in self.mod.loop_carried.get(k, []):
                got = join(got, self.values.get(v))
            if got is not None:
                self.values[k] = got
        names = self._result_names(op) if len(carried) > 1 else op.results[:1]
        for r, k in zip(names, carried):
            if k in self.values:
                self.values[r] = self.values[k]

    def _transfer(self, op: Op, rank: int) -> Axis:
        n = op.name
        ops = [self._get(v, rank) for v in op.operands]
        if n == "arith.constant":
            c = int_constant(op)
            if c is None and (b := _BOOL.search(op.text)):  # `dense<true> : tensor<64x32xi1>`
                c = int(b.group(1) == "true")
            if c is None:
                return Axis.pessimistic(rank)
            shape = shape_of(result_type(op)) or [1]
            return Axis((1,) * rank, (pow2_divisor(c),) * rank, tuple(shape) if len(shape) == rank else (1,) * rank, c)
        if n == "tt.make_range":
            m = re.search(r"end = (-?\d+)[^,}]*,\s*start = (-?\d+)", op.text)
            start, end = (int(m.group(2)), int(m.group(1))) if m else (0, 1)
            return Axis((end - start,), (pow2_divisor(start),), (1,))
        if n in _CASTS and ops:
            return ops[0]
        if n == "tt.splat" and ops:
            shape = shape_of(result_type(op)) or [1]
            return Axis((1,) * len(shape), (ops[0].divisibility[0],) * len(shape), tuple(shape), ops[0].constant)
        if n == "tt.broadcast" and ops:
            src = shape_of(_types(op)[0]) if _types(op) else []
            dst = shape_of(result_type(op))
            a = ops[0]
            if len(src) != len(dst) or len(dst) != a.rank:
                return a
            return Axis(tuple(1 if s == 1 else a.contiguity[d] for d, s in enumerate(src)), a.divisibility,
                        tuple(dst[d] if s == 1 else a.constancy[d] for d, s in enumerate(src)), a.constant)
        if n == "tt.expand_dims" and ops:
            a = ops[0]
            axis = int(m.group(1)) if (m := _AXIS.search(op.text)) else 0
            if a.constant is not None:
                new_div = pow2_divisor(a.constant)
            else:
                new_div = gcd(*[1 if a.contiguity[d] > 1 else a.divisibility[d] for d in range(a.rank)])
            ins = lambda t, v: t[:axis] + (v,) + t[axis:]  # noqa: E731
            return Axis(ins(a.contiguity, 1), ins(a.divisibility, new_div), ins(a.constancy, 1), a.constant)
        if n == "tt.load" and ops:
            p = ops[0]
            mask = ops[1] if len(ops) > 1 else None
            return Axis((1,) * p.rank, (1,) * p.rank,
                        tuple(gcd(p.constancy[d], mask.constancy[d] if mask and mask.rank == p.rank else 0)
                              for d in range(p.rank)))
        if len(ops) == 2 and n in _BINARY:
            return _binary(op, n, ops[0], ops[1], rank)
        if n == "arith.select" and len(ops) == 3:
            return _select(op, *ops)
        if n == "arith.cmpi" and len(ops) == 2:
            return _cmp(op, ops[0], ops[1])
        if n in ("arith.maxsi", "arith.maxui", "arith.minsi", "arith.minui") and len(ops) == 2:
            a, b = ops
            if a.constant is not None and b.constant is not None:
                c = max(a.constant, b.constant) if "max" in n else min(a.constant, b.constant)
                return Axis((1,) * a.rank, (1,) * a.rank, (1,) * a.rank, c)
            r = range(min(a.rank, b.rank))
            return Axis(tuple(gcd(a.contiguity[d], b.contiguity[d]) for d in r), tuple(_join_div(a, b, d) for d in r),
                        tuple(gcd(a.constancy[d], b.constancy[d]) for d in r))
        return Axis.pessimistic(rank)


def _hinted(hint: tuple[int, ...] | None, computed: tuple[int, ...]) -> tuple[int, ...]:
    if not hint:
        return computed
    if len(hint) == len(computed):
        return hint
    return (hint[0],) * len(computed)


_BINARY = ("tt.addptr", "arith.addi", "arith.subi", "arith.muli", "arith.divsi", "arith.divui", "arith.remsi",
           "arith.remui", "arith.andi", "arith.ori", "arith.xori", "arith.shli", "arith.shrui", "arith.shrsi")


def pointee_bytes(op: Op) -> int:
    """Bytes of the element an op's pointer result points to (1 where it is not a pointer)."""
    from .address_values import _pointee_bytes as bytes_of

    return bytes_of(result_type(op)) or 1


def _binary(op: Op, n: str, a: Axis, b: Axis, rank: int) -> Axis:
    r = range(min(a.rank, b.rank))
    shape = shape_of(result_type(op)) or [1] * rank
    const = _binary_constant(op, n, a, b)
    if const is not None:
        return Axis((1,) * len(r), (pow2_divisor(const),) * len(r),
                    tuple(max(a.constancy[d], b.constancy[d]) for d in r), const)
    contiguity, divisibility, constancy = [], [], []
    for d in r:
        ca, cb, da, db, ka, kb = a.contiguity[d], b.contiguity[d], a.divisibility[d], b.divisibility[d], \
            a.constancy[d], b.constancy[d]
        tensor = bool(shape_of(result_type(op)))
        size = shape[d] if d < len(shape) else 1
        # Triton's isConstantDim / isContiguousDim, asked only of tensors
        const_b, contig_a = tensor and kb == size, tensor and ca == size
        if n in ("tt.addptr", "arith.addi", "arith.subi"):
            c = gcd(ca, kb) if n == "arith.subi" else max(gcd(ka, cb), gcd(ca, kb))
            rb = db * pointee_bytes(op) if n == "tt.addptr" else db
            contiguity.append(c)
            divisibility.append(gcd(da, min(rb, MAX_DIVISOR)))
            constancy.append(gcd(ka, kb))
        elif n == "arith.muli":
            c = max(ca if b.constant == 1 else 1, cb if a.constant == 1 else 1)
            la = 1 if ca > 1 and b.constant != 1 else da
            lb = 1 if cb > 1 and a.constant != 1 else db
            contiguity.append(c)
            divisibility.append(min(la * lb, MAX_DIVISOR))
            constancy.append(gcd(ka, kb))
        elif n in ("arith.divsi", "arith.divui"):
            contiguity.append(ca if b.constant == 1 else 1)
            k = gcd(ka, kb) if tensor else 1
            if contig_a and const_b:
                k = max(k, gcd(ca, da, db))
            constancy.append(k)
            if a.constant == 0 or b.constant == 1:
                divisibility.append(da)
            elif b.constant is not None and b.constant and (abs(b.constant) & (abs(b.constant) - 1)) == 0 and ca == 1:
                divisibility.append(max(1, da // abs(b.constant)))
            else:
                divisibility.append(1)
        elif n in ("arith.remsi", "arith.remui"):
            contiguity.append(gcd(ca, da, db) if contig_a and const_b else 1)
            divisibility.append(gcd(da, db) if kb > 1 else 1)
            constancy.append((size if b.constant == 1 else gcd(ka, kb)) if tensor else 1)
        elif n in ("arith.andi", "arith.ori", "arith.xori"):
            contiguity.append(1)
            divisibility.append(1)
            constancy.append(gcd(ka, kb))
        elif n == "arith.shli":
            shift = b.constant or 0
            contiguity.append(ca if b.constant == 0 else 1)
            la = 1 if ca > 1 and shift else da
            divisibility.append(min(la << shift, MAX_DIVISOR) if shift < 62 else MAX_DIVISOR)
            constancy.append(gcd(ka, kb))
        else:  # shrui, shrsi
            contiguity.append(ca if b.constant == 0 else 1)
            if b.constant is None:
                divisibility.append(1)
            else:
                la = 1 if ca > 1 and b.constant else da
                divisibility.append(max(1, la >> b.constant))
            constancy.append(gcd(ka, kb))
    return Axis(tuple(contiguity), tuple(divisibility), tuple(constancy))


def _binary_constant(op: Op, n: str, a: Axis, b: Axis) -> int | None:
    x, y = a.constant, b.constant
    if n in ("arith.remsi", "arith.remui") and y == 1:
        return 0
    if x is None or y is None:
        return None
    try:
        return {"arith.addi": lambda: x + y, "arith.subi": lambda: x - y, "arith.muli": lambda: x * y,
                "tt.addptr": lambda: x + y * pointee_bytes(op),
                "arith.divsi": lambda: int(x / y), "arith.divui": lambda: x // y,
                "arith.remsi": lambda: int(math.fmod(x, y)), "arith.remui": lambda: x % y,
                "arith.andi": lambda: x & y, "arith.ori": lambda: x | y, "arith.xori": lambda: x ^ y,
                "arith.shli": lambda: x << y, "arith.shrui": lambda: x >> y, "arith.shrsi": lambda: x >> y}[n]()
    except (ZeroDivisionError, KeyError):
        return None


def _cmp(op: Op, a: Axis, b: Axis) -> Axis:
    shape = shape_of(result_type(op))
    if not shape:  # a scalar comparison: Triton gives it no facts
        return Axis.pessimistic(1)
    pred = m.group(1) if (m := _CMP.search(op.text)) else ""
    constancy = []
    constant = None
    for d in range(min(a.rank, b.rank, len(shape))):
        if a.constant is not None and b.constant is not None:
            k = a.constancy[d]
        else:
            k = gcd(a.constancy[d], b.constancy[d])
            const_a = a.constancy[d] == shape[d]
            const_b = b.constancy[d] == shape[d]
            if pred in ("sgt", "ugt", "sle", "ule") and const_a:
                k = max(k, gcd(b.contiguity[d], a.divisibility[d], b.divisibility[d]))
            elif pred in ("slt", "ult", "sge", "uge") and const_b:
                k = max(k, gcd(a.contiguity[d], a.divisibility[d], b.divisibility[d]))
        constancy.append(k)
    n = len(constancy)
    return Axis((1,) * n, (1,) * n, tuple(constancy), constant)


def _select(op: Op, cond: Axis, a: Axis, b: Axis) -> Axis:
    if cond.constant is not None:
        return b if cond.constant == 0 else a
    scalar_cond = len(_types(op)) < 2  # `: tensor<4xi1>, tensor<4xi32>` for a block condition
    if scalar_cond:  # the whole of one side or the other
        return join(a, b) or a
    r = range(min(a.rank, b.rank))
    k = tuple(gcd(a.constancy[d], b.constancy[d], cond.constancy[d] if d < cond.rank else 1) for d in r)
    c = tuple(gcd(a.contiguity[d], b.contiguity[d], cond.constancy[d] if d < cond.rank else 1) for d in r)
    # Triton 3.9 clamps the divisibility by the result's contiguity: where the condition mixes the
    # two sides, each element is its own run and must itself be a multiple (seen on sm_90: a
    # `tl.where(rows == 1, 256, 0)` offset makes a 128-bit load scalar)
    return Axis(c, tuple(gcd(_join_div(a, b, d), c[i]) for i, d in enumerate(r)), k,
                a.constant if a.constant is not None and a.constant == b.constant else None)


def axis_info(mod: Module) -> AxisInfo:
    """The facts of every value of a TTIR module."""
    return AxisInfo(mod)
