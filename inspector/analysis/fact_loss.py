"""Where along an access's def-use chain the compiler loses the fact a wide access needs.

A `tl.load` / `tl.store` is as wide as the smallest of: its pointer's contiguity, its pointer's
divisibility (in elements), its mask's constancy, along the fastest dimension, and 128 bits
(`axis_info` computes the three facts as Triton does). `access_limits` says which of them falls
short of a 128-bit access and, for each, walks back from the pointer or the mask to the values
where the fact was lost (`Loss`): a value loaded from memory, a kernel argument Triton did not
specialise, a loop's bound or step (through the induction variable), a loop-carried value, a
`%` or `//`, a comparison against such a bound. Each loss keeps the path it was found on, so a
fixer can place a hint on the leaf where the release honours one (an op's result: Triton 3.x
drops `tl.multiple_of` on a kernel argument, which is a block argument with no op to carry it) or
on the nearest value above it that has one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .address_values import result_type, shape_of
from .axis_info import AxisInfo, axis_info, hints, pointee_bytes, pow2_divisor
from .mlir import Module, Op, element_bits, tensor_type, type_text

FACTS = ("divisibility", "contiguity", "constancy")
# ops whose facts are their operand's (a splat's divisibility, a cast's everything)
_THROUGH = ("tt.splat", "tt.broadcast", "tt.expand_dims", "arith.extsi", "arith.extui", "arith.trunci",
            "ttg.convert_layout", "tt.bitcast", "arith.index_cast")


@dataclass
class Need:
    """One step of the walk: `value` must have `fact` >= `at_least` along `dim` (elements; bytes
    for a pointer)."""

    value: str
    fact: str
    at_least: int
    dim: int
    op: Op | None  # the op defining it (None: a kernel argument or a loop's induction variable)


@dataclass
class Loss:
    """A value where the fact is lost: `kind` says what it is, `path` how the access reaches it
    (the access's operand first, this value last)."""

    kind: str  # loaded | argument | arith | clamp | mask_bound | hinted | program_id | constant | strided | gather | opaque
    path: list[Need]
    hintable: bool  # whether a promise about this value can be true (a program id, a stride, a constant cannot)

    @property
    def leaf(self) -> Need:
        return self.path[-1]


@dataclass
class AccessLimits:
    """What the facts allow one access, and what would make it 128 bits wide."""

    full: int  # elements of a 128-bit access
    dim: int  # the fastest dimension (the pointer's most contiguous)
    contiguity: int
    divisibility: int  # elements
    mask_constancy: int | None  # None: no mask
    width: int  # elements per access the facts allow (before the layout's share per thread)
    short: list[str] = field(default_factory=list)  # facts below `full`: "divisibility", "contiguity", "constancy"
    losses: list[Loss] = field(default_factory=list)


def _ceil_div(need: int, have: int) -> int:
    return max(1, -(-need // max(1, have)))


class _Walker:
    def __init__(self, mod: Module, info: AxisInfo, values: dict[str, Any] | None = None):
        self.mod, self.info, self.values = mod, info, values or {}
        self.losses: list[Loss] = []
        self.seen: set[tuple[str, str, int]] = set()
        self.revisits = 0

    def fact(self, value: str, fact: str, dim: int) -> int:
        a = self.info.of(value)
        if a is None:
            return 1
        seq = getattr(a, fact)
        return seq[min(dim, len(seq) - 1)]

    def lose(self, kind: str, path: list[Need], hintable: bool) -> None:
        self.losses.append(Loss(kind, list(path), hintable))

    def _launch_value(self, value: str) -> Any:
        """The launch's value of the kernel argument a value is (through splats and casts)."""
        for _ in range(6):
            if value in self.mod.args:
                return self.values.get(value)
            op = self.mod.defs.get(value)
            if op is None or op.name not in _THROUGH or not op.operands:
                return None
            value = op.operands[0]
        return None

    def _contiguous_sum(self, a: str, b: str, need: int, dim: int, path: list[Need]) -> None:
        """A sum is contiguous where one side is and the other stays constant: the side that
        varies along `dim` must be contiguous, the other constant."""
        ka, kb = self.fact(a, "constancy", dim), self.fact(b, "constancy", dim)
        if ka >= need > kb:
            ranged, flat = b, a
        elif kb >= need > ka:
            ranged, flat = a, b
        else:
            ranged, flat = (a, b) if self.fact(a, "contiguity", dim) >= self.fact(b, "contiguity", dim) else (b, a)
        self.walk(ranged, "contiguity", need, dim, path)
        self.walk(flat, "constancy", need, dim, path)

    def walk(self, value: str, fact: str, need: int, dim: int, path: list[Need]) -> None:
        """Record where `value` lost `fact` (below `need` along `dim`); `path` leads here."""
        if need <= 1 or self.fact(value, fact, dim) >= need:
            return
        key = (value, fact, dim)
        if key in self.seen or len(path) > 60:
            self.revisits += 1  # a loop-carried value met again: its causes are found where it was met first
            return
        self.seen.add(key)
        before, revisits = len(self.losses), self.revisits
        self._walk(value, fact, need, dim, path)
        op = self.mod.defs.get(value)
        if len(self.losses) == before and self.revisits == revisits and op is not None and value in op.results and not op.name.startswith("scf."):
            # every operand has what it needs, yet the result does not (a select of a range and a
            # constant loses contiguity and, with it, divisibility): the fact is lost at this op
            self.lose("arith", path + [Need(value, fact, need, dim, op)], True)

    def _walk(self, value: str, fact: str, need: int, dim: int, path: list[Need]) -> None:
        op = self.mod.defs.get(value)
        step = Need(value, fact, need, dim, op if op is not None and value in op.results else None)
        path = path + [step]
        mod = self.mod
        if value in mod.args:
            return self.lose("argument", path, True)
        if value in mod.loop_carried:
            for v in mod.loop_carried[value]:
                self.walk(v, fact, need, dim, path)
            return
        if op is None:
            return self.lose("opaque", path, True)
        if op.name == "scf.for" and value not in op.results:  # the induction variable
            if fact == "divisibility":
                self.walk(op.operands[0], fact, need, 0, path)  # lower bound
                self.walk(op.operands[2], fact, need, 0, path)  # step
            return
        if op.name == "scf.for":
            carried = mod.loops.get(op.line, (None, []))[1]
            index = int(value.split("#")[1]) if "#" in value else 0
            if index < len(carried):
                self.walk(carried[index], fact, need, dim, path)
            return
        if op.name == "scf.if":
            index = int(value.split("#")[1]) if "#" in value else 0
            for yields in mod.branches.get(op.line, []):
                if index < len(yields):
                    self.walk(yields[index], fact, need, dim, path)
            return
        if fact in hints(op):  # the user's own promise, too weak
            return self.lose("hinted", path, True)
        n, ops = op.name, op.operands
        if n == "tt.load":
            return self.lose("loaded" if fact != "contiguity" else "gather", path, fact != "contiguity")
        if n in ("tt.get_program_id", "tt.get_num_programs"):
            return self.lose("program_id", path, False)
        if n in ("arith.constant", "tt.make_range"):
            return self.lose("constant", path, False)
        if n in _THROUGH and ops:
            inner = dim
            if n == "tt.splat":
                inner = 0
            elif n == "tt.expand_dims":
                axis = int(op.text.split("axis = ")[1].split()[0]) if "axis = " in op.text else 0
                inner = max(0, dim - 1) if dim > axis else dim if dim < axis else 0
            return self.walk(ops[0], fact, need, inner, path)
        if n == "tt.addptr" and len(ops) >= 2:
            elem = pointee_bytes(op)
            if fact == "divisibility":
                self.walk(ops[0], fact, need, dim, path)
                self.walk(ops[1], fact, _ceil_div(need, elem), dim, path)
            elif fact == "contiguity":
                self._contiguous_sum(ops[0], ops[1], need, dim, path)
            else:
                for v in ops[:2]:
                    self.walk(v, fact, need, dim, path)
            return
        if n in ("arith.addi", "arith.subi") and len(ops) == 2:
            if fact == "contiguity":
                self._contiguous_sum(ops[0], ops[1], need, dim, path)
            else:
                for v in ops:
                    self.walk(v, fact, need, dim, path)
            return
        if n == "arith.muli" and len(ops) == 2:
            if fact == "divisibility":
                consts = [self.info.of(v).constant if self.info.of(v) else None for v in ops]
                for v, other in ((ops[0], consts[1]), (ops[1], consts[0])):
                    if other is not None or self.fact(v, "contiguity", dim) > 1:
                        continue
                    left = _ceil_div(need, pow2_divisor(other)) if other is not None else need
                    self.walk(v, fact, left, dim, path)
                return
            if fact == "contiguity":
                # a range times a run-time stride; the launch's stride of 1 (an int64 stride Triton
                # does not specialise) makes it contiguous, which a promise can say
                ones = [v for v in ops if self._launch_value(v) == 1]
                return self.lose("strided", path, bool(ones))
            for v in ops:
                self.walk(v, fact, need, dim, path)
            return
        if n == "arith.cmpi" and len(ops) == 2 and fact == "constancy":
            pred = op.text.split("arith.cmpi", 1)[1].split(",")[0].strip()
            a, b = ops
            shape = shape_of(result_type(op)) or [1]
            size = shape[min(dim, len(shape) - 1)]
            lhs_range = pred in ("slt", "ult", "sge", "uge")
            ranged, bound = (a, b) if lhs_range else (b, a)
            if self.fact(bound, "constancy", dim) < size:  # no range against a bound: nothing Triton reads
                return self.lose("mask_bound", path, True)
            before = len(self.losses)
            self.walk(ranged, "contiguity", need, dim, path)
            self.walk(ranged, "divisibility", need, dim, path)
            self.walk(bound, "divisibility", need, dim, path)
            if len(self.losses) == before:
                self.lose("mask_bound", path, True)
            return
        if n in ("arith.andi", "arith.ori") and fact == "constancy":
            for v in ops:
                self.walk(v, fact, need, dim, path)
            return
        if n in ("arith.select", "arith.maxsi", "arith.minsi", "arith.maxui", "arith.minui"):
            # a clamp (`tl.where(offs < M, offs, 0)`, `tl.minimum(offs, M - 1)`) joins a range with a
            # constant: the fact is lost here, and promising it here says the clamp never fires
            before = len(self.losses)
            values = ops[1:] if n == "arith.select" else ops
            if n == "arith.select" and fact == "constancy":
                self.walk(ops[0], fact, need, dim, path)
            for v in values:
                self.walk(v, fact, need, dim, path)
            if any(not l.hintable for l in self.losses[before:]):
                del self.losses[before:]
                self.lose("clamp", path, True)
            return
        return self.lose("arith" if n.startswith("arith.") else "opaque", path, True)


_MASK_INDEX = {"tt.load": 1, "tt.store": 2, "tt.atomic_rmw": 2}


def access_limits(mod: Module, op: Op, info: AxisInfo | None = None,
                  values: dict[str, Any] | None = None) -> AccessLimits | None:
    """The facts that limit one memory op of the TTIR, and where each was lost; `values`, the
    launch's scalar arguments, tell a stride of 1 Triton did not specialise from a real one."""
    info = info or axis_info(mod)
    if not op.operands:
        return None
    ptr = op.operands[0]
    t = tensor_type(type_text(op.text))
    if t is None or not t[3]:
        return None  # a scalar access: one element per program
    shape, elem = t[0], t[1]
    bits = element_bits(elem) or 32
    p = info.of(ptr)
    if p is None or not shape:
        return None
    # the compiler's fastest dimension (the most contiguous, the last on a tie); where a fact no
    # promise restores caps it, another dimension whose losses a promise can lift (a K cache whose
    # innermost stride is 1 at the launch, which Triton did not specialise)
    dims = sorted(range(len(shape)), key=lambda d: (p.contiguity[min(d, p.rank - 1)], d), reverse=True)
    tried = [_limits_along(mod, op, info, values, ptr, shape, bits, d) for d in dims if shape[d] > 1 or d == dims[0]]
    return next((t for t in tried if all(l.hintable for l in t.losses)), tried[0])


def _limits_along(mod: Module, op: Op, info: AxisInfo, values: dict[str, Any] | None, ptr: str, shape: list[int],
                  bits: int, dim: int) -> AccessLimits:
    p = info.of(ptr)
    full = max(1, min(128 // bits, shape[dim]))
    elem_bytes = max(1, bits // 8)
    contiguity = p.contiguity[min(dim, p.rank - 1)]
    divisibility = max(1, p.divisibility[min(dim, p.rank - 1)] // elem_bytes)
    mi = _MASK_INDEX.get(op.name)
    mask = op.operands[mi] if mi is not None and len(op.operands) > mi else None
    m = info.of(mask) if mask else None
    constancy = m.constancy[min(dim, m.rank - 1)] if m is not None else None
    width = min(full, contiguity, divisibility, constancy if constancy is not None else full)
    out = AccessLimits(full, dim, contiguity, divisibility, constancy, max(1, width))
    walker = _Walker(mod, info, values)
    if contiguity < full:
        out.short.append("contiguity")
        walker.walk(ptr, "contiguity", full, dim, [])
    if divisibility < full:
        out.short.append("divisibility")
        walker.walk(ptr, "divisibility", full * elem_bytes, dim, [])
    if constancy is not None and constancy < full and mask:
        out.short.append("constancy")
        walker.walk(mask, "constancy", full, dim, [])
    out.losses = walker.losses
    return out
