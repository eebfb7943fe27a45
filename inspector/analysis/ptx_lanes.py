"""The address every thread of a block gives each shared-memory instruction, read from the PTX.

Triton computes shared-memory addresses from the thread index alone (`%tid.x` through shifts,
masks, xors and adds, the layout's swizzle spelt out), so running the PTX's integer arithmetic for
every thread of one block gives each lane's exact byte offset, whatever layout, swizzle or padding
the compiler chose, on every release, without re-deriving Triton's lowering.

What the walk assumes (stated where its numbers are shown):
- One pass in program order, branches not taken: an instruction inside a loop is evaluated with
  the values of the loop's first iteration (the stage buffers of a pipelined loop are whole
  multiples of 128 bytes apart, so later iterations hit the same banks).
- The shared window starts at a 128-byte aligned base (`global_smem` is 0 here): banks depend on
  the offset only.
- Values loaded from memory, kernel arguments and `%ctaid` (taken as program 0) are unknown or
  fixed; an address that depends on an unknown value is reported as unknown, never guessed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

_MASKS = {8: 0xFF, 16: 0xFFFF, 32: 0xFFFF_FFFF, 64: 0xFFFF_FFFF_FFFF_FFFF}
_INT = re.compile(r"^-?(?:0[xX][0-9a-fA-F]+|\d+)$")
_TYPE_BITS = re.compile(r"\.[bus](8|16|32|64)$")
_ADDRESS = re.compile(r"^\[\s*([%\w$.]+)?\s*(?:\+\s*(-?(?:0x[0-9a-fA-F]+|\d+)))?\s*\]$")


@dataclass
class LaneAccess:
    """One shared-memory instruction of the PTX and what every thread of the block gives it."""

    line: int  # 1-based line in the PTX
    opcode: str  # `st.shared.v4.b32`, `ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16`, `cp.async.cg.shared.global`
    op: str  # "load" | "store" | "atomic" | "ldmatrix" | "stmatrix" | "async_copy"
    bytes_per_lane: int  # bytes each thread's address covers (a row of 16 bytes for ldmatrix)
    addresses: np.ndarray | None  # byte offset per thread; None when it depends on an unknown value
    active: np.ndarray  # bool per thread: the instruction's predicate (all True when it has none or is unknown)
    lanes_used: int  # threads per warp whose address the instruction reads (ldmatrix .x1: 8, .x2: 16)


_TOP_COMMA = re.compile(r",(?![^{\[]*[}\]])")  # a comma outside `{...}` and `[...]` (PTX does not nest them)


def _split_operands(text: str) -> list[str]:
    """Top-level comma-separated operands (commas inside `{}` / `[]` kept)."""
    parts = _TOP_COMMA.split(text) if ("{" in text or "[" in text) else text.split(",")
    return [p.strip() for p in parts if p.strip()]


def _bits(opcode: str) -> int:
    m = _TYPE_BITS.search(opcode)
    return int(m.group(1)) if m else 32


class _Machine:
    """Register values of every thread: uint64 arrays, None where unknown."""

    def __init__(self, threads: int):
        self.threads = threads
        self.tid = np.arange(threads, dtype=np.uint64)
        self.regs: dict[str, np.ndarray | None] = {}
        self.preds: dict[str, np.ndarray | None] = {}

    def value(self, operand: str) -> np.ndarray | None:
        operand = operand.strip()
        if _INT.match(operand):
            return np.full(self.threads, int(operand, 0) & _MASKS[64], dtype=np.uint64)
        if operand in ("%tid.x",):
            return self.tid.copy()
        if operand in ("%tid.y", "%tid.z", "%ctaid.x", "%ctaid.y", "%ctaid.z"):
            return np.zeros(self.threads, dtype=np.uint64)
        if operand == "%laneid":
            return self.tid % np.uint64(32)
        if operand == "%warpid":
            return self.tid // np.uint64(32)
        if operand == "%ntid.x":
            return np.full(self.threads, self.threads, dtype=np.uint64)
        if operand == "global_smem":  # the dynamic shared window's base: aligned, taken as 0
            return np.zeros(self.threads, dtype=np.uint64)
        return self.regs.get(operand)

    def signed(self, v: np.ndarray, bits: int) -> np.ndarray:
        v = v & np.uint64(_MASKS[bits])
        return np.where(v >> np.uint64(bits - 1) & np.uint64(1), v.astype(np.int64) - (1 << bits) if bits < 64
                        else v.astype(np.int64), v.astype(np.int64))

    def set(self, dest: str, value: np.ndarray | None, bits: int, pred: np.ndarray | None, guarded: bool) -> None:
        if value is not None:
            value = value & np.uint64(_MASKS[bits])
        if guarded:  # a predicated write: keep the old value where the predicate is off
            old = self.regs.get(dest)
            if value is None or pred is None:
                value = None
            elif old is None:
                value = value if pred.all() else None
            else:
                value = np.where(pred, value, old)
        self.regs[dest] = value


_FLOAT_TYPES = frozenset({"f16", "f32", "f64", "bf16", "f16x2", "bf16x2", "tf32", "e4m3x2", "e5m2x2"})
_FLOAT_OP = re.compile(r"\.(?:f16|f32|f64|bf16|f16x2|bf16x2|tf32|e4m3|e5m2)\b|^(?:mma|wgmma|tcgen05|ex2|lg2|rcp|rsqrt|sqrt|sin|cos|tanh|fma)\b")
_CMP = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
        "ge": np.greater_equal, "lo": np.less, "ls": np.less_equal, "hi": np.greater, "hs": np.greater_equal}


def _arith(m: _Machine, base: str, quals: list[str], opcode: str, ops: list[np.ndarray | None],
           bits: int) -> np.ndarray | None:
    """The result of one integer instruction, or None when an input is unknown or the op is not modelled."""
    if not ops or any(o is None for o in ops) or any(q in _FLOAT_TYPES for q in quals):
        return None
    a = ops[0]
    b = ops[1] if len(ops) > 1 else None
    signed = any(q.startswith("s") and q[1:].isdigit() for q in quals)
    with np.errstate(over="ignore"):
        if base == "mov" or base == "cvta":
            return a
        if base == "cvt":  # integer widen / narrow: sign-extend from the source type when it is signed
            src = quals[-1] if quals else "u32"
            if src[0] == "s" and src[1:].isdigit():
                return m.signed(a, int(src[1:])).astype(np.uint64)
            if src[0] in "ub" and src[1:].isdigit():
                return a & np.uint64(_MASKS[int(src[1:])])
            return None
        if base == "add":
            return a + b
        if base == "sub":
            return a - b
        if base == "mul":
            if "wide" in quals:
                half = bits
                x, y = (m.signed(a, half), m.signed(b, half)) if signed else (a & np.uint64(_MASKS[half]),
                                                                                b & np.uint64(_MASKS[half]))
                return (x.astype(np.int64) * y.astype(np.int64)).astype(np.uint64) if signed else x * y
            return a * b if "lo" in quals or not quals or quals[0] not in ("hi",) else None
        if base == "mad":
            c = ops[2]
            if "wide" in quals:
                x, y = (m.signed(a, bits), m.signed(b, bits)) if signed else (a, b)
                return (x.astype(np.int64) * y.astype(np.int64)).astype(np.uint64) + c if signed else x * y + c
            return a * b + c if "lo" in quals else None
        if base == "shl":
            return np.where(b >= np.uint64(bits), np.uint64(0), a << (b & np.uint64(63)))
        if base == "shr":
            s = np.minimum(b, np.uint64(bits - 1 if signed else bits))
            if signed:
                return (m.signed(a, bits) >> s.astype(np.int64)).astype(np.uint64)
            return np.where(s >= np.uint64(bits), np.uint64(0), (a & np.uint64(_MASKS[bits])) >> (s & np.uint64(63)))
        if base == "and":
            return a & b
        if base == "or":
            return a | b
        if base == "xor":
            return a ^ b
        if base == "not":
            return ~a
        if base == "neg":
            return np.uint64(0) - a
        if base in ("min", "max"):
            if signed:
                x, y = m.signed(a, bits), m.signed(b, bits)
                return (np.minimum(x, y) if base == "min" else np.maximum(x, y)).astype(np.uint64)
            return np.minimum(a, b) if base == "min" else np.maximum(a, b)
        if base in ("div", "rem") and not signed:
            if (b == 0).any():
                return None
            return a // b if base == "div" else a % b
        if base == "bfe":  # d = bits [pos, pos+len) of a
            c = ops[2]
            width = np.minimum(c, np.uint64(bits))
            field = (a & np.uint64(_MASKS[bits])) >> (b & np.uint64(63))
            out = field & ((np.uint64(1) << width) - np.uint64(1))
            if signed:
                top = (out >> (width - np.uint64(1))) & np.uint64(1)
                out = np.where((width > 0) & (top == 1), out | ~((np.uint64(1) << width) - np.uint64(1)), out)
            return out
        if base == "bfi":  # d = b with bits [pos, pos+len) replaced by a's low bits
            pos, length = ops[2], ops[3]
            mask = ((np.uint64(1) << length) - np.uint64(1)) << pos
            return (b & ~mask) | ((a << pos) & mask)
        if base == "lop3":  # d = LUT(a, b, c), the immediate truth table
            c, lut = ops[2], int(ops[3][0])
            out = np.zeros_like(a)
            for i in range(8):
                if lut >> i & 1:
                    x = a if i & 4 else ~a
                    y = b if i & 2 else ~b
                    z = c if i & 1 else ~c
                    out |= x & y & z
            return out
    return None


def _access(opcode: str) -> tuple[str, int, int] | None:
    """(op, bytes per lane, lanes used) of a shared-memory instruction; None for others (and for
    accesses without per-lane addresses: wgmma descriptors, TMA bulk copies, mbarriers)."""
    parts = opcode.split(".")
    if not any(p == "shared" or p.startswith("shared::cta") for p in parts):
        return None
    base = parts[0]
    if base in ("ldmatrix", "stmatrix"):
        count = next((int(p[1:]) for p in parts if re.fullmatch(r"x\d", p)), 1)
        return base, 16, 8 * count
    vec = next((int(p[1:]) for p in parts if re.fullmatch(r"v\d", p)), 1)
    width = vec * _bits(opcode) // 8
    if base == "ld":
        return "load", width, 32
    if base == "st":
        return "store", width, 32
    if base in ("atom", "red"):
        return "atomic", width, 32
    if base == "cp" and parts[1] == "async" and "bulk" not in parts:
        return "async_copy", 0, 32  # the size is an operand
    return None


def shared_lane_accesses(ptx: str, threads: int) -> list[LaneAccess]:
    """Every shared-memory instruction of the PTX's kernel, with each thread's byte address.

    `threads`: the block's threads (`num_warps * 32`; `.reqntid` when the PTX states it).
    """
    req = re.search(r"\.reqntid\s+(\d+)", ptx)
    threads = int(req.group(1)) if req else threads
    m = _Machine(threads)
    out: list[LaneAccess] = []
    for number, raw in enumerate(ptx.splitlines(), start=1):
        text = raw.split("//", 1)[0].strip()
        if not text or text[0] in ".$" or text.endswith(":"):  # directives, labels
            continue
        for stmt in text.split(";"):  # an inline-asm block is `{ .reg ...; op ...; op ...; }` on one line
            stmt = stmt.strip().strip("{}").strip()
            if stmt and stmt[0] != ".":
                _step(m, stmt, number, out)
    return out


def _step(m: _Machine, stmt: str, number: int, out: list[LaneAccess]) -> None:
    """Run one PTX statement on every thread; record it when it touches shared memory."""
    pred, guarded = None, False
    if stmt.startswith("@"):
        head, stmt = stmt.split(None, 1)
        p = m.preds.get(head[1:].lstrip("!"))
        pred = None if p is None else (~p if head[1] == "!" else p)
        guarded = True
    parts = stmt.split(None, 1)
    if not parts:
        return
    opcode, rest = parts[0], (parts[1] if len(parts) > 1 else "")
    if _FLOAT_OP.search(opcode) and not opcode.startswith(("setp", "selp")) and "shared" not in opcode:
        m.regs[rest.split(",", 1)[0].strip()] = None  # floating-point math: never an address
        return
    operands = _split_operands(rest)
    access = _access(opcode)
    if access is not None:
        op, width, lanes = access
        slot = 0 if op in ("load", "ldmatrix", "atomic") and not operands[0].startswith("[") else None
        addr_op = next((o for o in operands if o.startswith("[")), None)
        if op == "async_copy" and len(operands) >= 3:
            width = int(operands[2], 0) if _INT.match(operands[2]) else 16
        addresses = None
        found = _ADDRESS.match(addr_op) if addr_op else None
        if found:
            reg, offset = found.group(1), int(found.group(2) or "0", 0)
            base = m.value(reg) if reg else np.zeros(m.threads, dtype=np.uint64)
            if base is not None:
                addresses = ((base + np.uint64(offset & _MASKS[64])) & np.uint64(_MASKS[32])).astype(np.int64)
        active = np.ones(m.threads, dtype=bool) if pred is None else pred.astype(bool)
        out.append(LaneAccess(number, opcode, op, width, addresses, active, lanes))
        if slot is not None:  # what a load returns is data, unknown here
            for dest in operands[0].strip("{}").split(","):
                m.regs[dest.strip()] = None
        return
    if not operands:
        return
    dest = operands[0]
    segs = opcode.split(".")
    base, quals = segs[0], segs[1:]
    if base == "setp":
        cmp = quals[0] if quals else "eq"
        bits = _bits(opcode)
        a, b = m.value(operands[1]), m.value(operands[2]) if len(operands) > 2 else None
        if a is None or b is None or cmp not in _CMP or any(q in _FLOAT_TYPES for q in quals):
            result = None
        elif any(q.startswith("s") and q[1:].isdigit() for q in quals):
            result = _CMP[cmp](m.signed(a, bits), m.signed(b, bits))
        else:
            mask = np.uint64(_MASKS[bits])
            result = _CMP[cmp](a & mask, b & mask)
        for name in dest.split("|"):
            m.preds[name.strip()] = result if "|" not in dest or name == dest.split("|")[0] else (
                None if result is None else ~result)
        return
    if base in ("and", "or", "xor", "not", "mov") and ".pred" in opcode:
        vals = [m.preds.get(o.lstrip("!")) for o in operands[1:]]
        vals = [None if v is None else (~v if o.startswith("!") else v) for v, o in zip(vals, operands[1:])]
        if any(v is None for v in vals):
            m.preds[dest] = None
        else:
            m.preds[dest] = {"and": lambda: vals[0] & vals[1], "or": lambda: vals[0] | vals[1],
                             "xor": lambda: vals[0] ^ vals[1], "not": lambda: ~vals[0], "mov": lambda: vals[0]}[base]()
        return
    if base == "selp":
        a, b, p = m.value(operands[1]), m.value(operands[2]), m.preds.get(operands[3])
        value = None if a is None or b is None or p is None else np.where(p, a, b)
        m.set(dest, value, _bits(opcode), pred, guarded)
        return
    if dest.startswith("["):  # writes memory (mbarrier, bulk copies, global stores): no register changes
        return
    if dest.startswith("{"):  # vector results: data, unknown
        for d in dest.strip("{}").split(","):
            m.regs[d.strip()] = None
        return
    if base == "shfl" and "idx" in quals and len(operands) >= 3:  # d = a of lane b within the warp
        a, lane = m.value(operands[1]), m.value(operands[2])
        if a is not None and lane is not None:
            src = (m.tid - m.tid % np.uint64(32)) + (lane & np.uint64(31))
            m.set(dest, a[np.minimum(src, np.uint64(m.threads - 1)).astype(np.int64)], 32, pred, guarded)
            return
    if base in ("ld", "atom", "shfl", "vote", "match", "activemask", "tex", "suld", "call"):
        m.regs[dest] = None
        return
    args = operands[1:]
    if base == "lop3":
        values = [m.value(a) for a in args[:3]] + [np.array([int(args[3], 0)])] if len(args) == 4 else [None]
    else:
        values = [m.value(a) for a in args]
    bits = _bits(opcode)
    if base == "cvt" and len(quals) >= 2:
        bits = int(quals[-2][1:]) if quals[-2][1:].isdigit() else bits
    if base == "mul" and "wide" in quals or base == "mad" and "wide" in quals:
        value = _arith(m, base, quals, opcode, values, bits)
        m.set(dest, value, min(2 * bits, 64), pred, guarded)
        return
    m.set(dest, _arith(m, base, quals, opcode, values, bits), bits, pred, guarded)
