"""Why a memory access is not 128-bit, read from the TTIR: backward walks from a pointer, an
offset or a mask to what they come from (`Flow`), and the reasons in the order a reader acts on
them (`access_reasons`): the cause in the address first (a stride, an unaligned argument, an
offset or a mask bound loaded from memory, a gather), then the layout it left.
"""

from __future__ import annotations

import re
from typing import Any

from .mlir import Module, Op, Walk, int_constant, tensor_type, type_text


class Flow:
    """Backward walks over TTIR values: where a pointer, an offset or a mask come from."""

    def __init__(self, mod: Module):
        self.mod = mod

    def producers(self, value: str) -> list[str]:
        if value in self.mod.loop_carried:
            return self.mod.loop_carried[value]
        op = self.mod.defs.get(value)
        if op is None:
            return []
        if op.name == "scf.for" and value not in op.results:
            return op.operands[:1] + op.operands[2:3]  # induction variable: lower bound and step
        return op.operands

    def base_pointers(self, value: str, seen: set[str] | None = None) -> list[str]:
        """Kernel pointer arguments a pointer value is an offset of."""
        seen = seen if seen is not None else set()
        if value in seen:
            return []
        seen.add(value)
        if value in self.mod.args:
            return [value] if self.mod.args[value].is_pointer else []
        op = self.mod.defs.get(value)
        if value in self.mod.loop_carried:
            return [p for v in self.mod.loop_carried[value] for p in self.base_pointers(v, seen)]
        if op is None or not op.operands:
            return []
        if op.name == "tt.addptr":
            return self.base_pointers(op.operands[0], seen)
        if op.name in ("tt.splat", "tt.broadcast", "tt.expand_dims", "tt.reshape", "ttg.convert_layout",
                       "arith.select", "tt.trans", "tt.int_to_ptr", "tt.bitcast", "scf.if"):
            return [p for v in op.operands for p in self.base_pointers(v, seen)]
        return []

    def offsets(self, value: str) -> list[str]:
        """The offset values added to a pointer (through tt.addptr chains)."""
        out: list[str] = []
        walk = Walk(value)
        for v in walk:
            if v in self.mod.loop_carried:
                walk.push(*self.mod.loop_carried[v])
                continue
            op = self.mod.defs.get(v)
            if op is None:
                continue
            if op.name == "tt.addptr" and len(op.operands) >= 2:
                walk.push(op.operands[0])
                out.append(op.operands[1])
            elif op.name in ("tt.splat", "tt.broadcast", "tt.expand_dims", "tt.reshape", "ttg.convert_layout",
                             "tt.trans"):
                walk.push(*op.operands)
        return out

    def constant(self, value: str) -> int | None:
        """The integer a value holds when it is a constant (through splats and broadcasts)."""
        for _ in range(8):
            op = self.mod.defs.get(value)
            if op is None:
                return None
            c = int_constant(op)
            if c is not None:
                return c
            if op.name not in ("tt.splat", "tt.broadcast", "tt.expand_dims", "ttg.convert_layout") or not op.operands:
                return None
            value = op.operands[0]
        return None

    def leaves(self, value: str) -> tuple[set[str], list[int], list[Op]]:
        """Integer kernel arguments and ops reached from a value, and the constants added to it."""
        args: set[str] = set()
        ops: list[Op] = []
        walk = Walk(value)
        for v in walk:
            if v in self.mod.args:
                if not self.mod.args[v].is_pointer:
                    args.add(v)
                continue
            op = self.mod.defs.get(v)
            if op is None and v not in self.mod.loop_carried:
                continue
            if op is not None:
                ops.append(op)
            walk.push(*self.producers(v))
        return args, self.additive_constants(value), ops

    def loads(self, value: str) -> list[Op]:
        """The `tt.load`s whose loaded values reach `value` (an offset read from memory), nearest first."""
        out: list[Op] = []
        walk = Walk(value, fifo=True)
        for v in walk:
            if v in self.mod.args:
                continue
            op = self.mod.defs.get(v)
            if op is not None and op.name == "tt.load":
                out.append(op)
                continue
            if op is None and v not in self.mod.loop_carried:
                continue
            walk.push(*self.producers(v))
        return out

    def additive_constants(self, value: str) -> list[int]:
        """Constants added to (or subtracted from) a value, through additions and reshapes only:
        `offs + 1` gives [1]; the 127 of `(M + 127) // 128` is not additive to the result."""
        c = self.constant(value)
        if c is not None:
            return [c]
        out: list[int] = []
        walk = Walk(value)
        passes = ("arith.addi", "arith.subi", "tt.splat", "tt.broadcast", "tt.expand_dims", "arith.extsi",
                  "arith.extui", "arith.trunci", "tt.reshape", "ttg.convert_layout", "tt.trans", "tt.addptr")
        for v in walk:
            op = self.mod.defs.get(v)
            if op is None or op.name not in passes:
                continue
            if op.name in ("arith.addi", "arith.subi"):
                for o in op.operands:
                    c = self.constant(o)
                    if c is not None:
                        out.append(c)
                    else:
                        walk.push(o)
            else:
                walk.push(*op.operands)
        return out

    def unscaled_range(self, value: str, multipliers: list[str] | None = None) -> bool | None:
        """Whether a `tl.arange` reaches the offset without being multiplied or divided on the way
        (a contiguous index); None when no range is involved (a scalar offset). `multipliers`
        collects the kernel arguments a range is multiplied by (strides known only at run time)."""
        memo: dict[str, bool | None] = {}

        def walk(v: str, depth: int) -> bool | None:
            if v in memo or depth > 200:
                return memo.get(v)
            memo[v] = None
            op = self.mod.defs.get(v)
            if v in self.mod.loop_carried:
                res = [walk(x, depth + 1) for x in self.mod.loop_carried[v]]
                r = True if True in res else (False if False in res else None)
            elif op is None:
                r = None
            elif op.name == "tt.make_range":
                r = True
            elif op.name == "tt.load":  # a loaded index (a gather): not a range, whatever its address was
                r = None
            elif op.name in ("arith.addi", "arith.subi", "tt.splat", "tt.broadcast", "tt.expand_dims", "arith.extsi",
                             "arith.extui", "arith.trunci", "tt.reshape", "ttg.convert_layout", "arith.select",
                             "tt.addptr", "tt.trans"):
                res = [walk(x, depth + 1) for x in op.operands]
                r = True if True in res else (False if False in res else None)
            elif op.name == "arith.muli":
                res = [walk(x, depth + 1) for x in op.operands]
                ones = [o for o in op.operands if (d := self.mod.defs.get(o)) is not None and int_constant(d) == 1]
                if ones:
                    r = True if True in res else None
                else:
                    r = False if (True in res or False in res) else None
                    if multipliers is not None and True in res:
                        for o, reached in zip(op.operands, res):
                            if reached is not True:
                                multipliers.extend(a for a in sorted(self.leaves(o)[0]) if a not in multipliers)
            else:
                res = [walk(x, depth + 1) for x in op.operands]
                r = False if (True in res or False in res) else None
            memo[v] = r
            return r

        return walk(value, 0)


# A tensor descriptor's stride as Triton names the argument it becomes where the target has no TMA
# and the descriptor is rewritten into pointer arithmetic (`a_desc.stride.1`).
DESCRIPTOR_STRIDE = re.compile(r"\.stride\.\d+$")


# `{tt.divisibility = dense<16> : tensor<1xi32>}` on an op: what `tl.multiple_of(x, 16)` leaves in the IR
TTIR_PROMISED = re.compile(r"tt\.divisibility = dense<(\d+)>")


def _promised_multiple(op: Op) -> bool:
    m = TTIR_PROMISED.search(op.text)
    return bool(m and int(m.group(1)) % 16 == 0)


def _promised_chain(flow: "Flow", value: str) -> bool:
    """Whether a value (through splats and conversions) carries a `tl.multiple_of(..., 16)` promise."""
    for _ in range(8):
        op = flow.mod.defs.get(value)
        if op is None:
            return False
        if _promised_multiple(op):
            return True
        if op.name not in ("tt.splat", "tt.broadcast", "tt.expand_dims", "ttg.convert_layout", "arith.extsi",
                           "arith.extui") or not op.operands:
            return False
        value = op.operands[0]
    return False


def variable_name(value: str) -> str:
    """The Python name Triton gave an SSA value (`start_3` -> `start`; `17` -> `%17`)."""
    if value.isdigit():
        return f"%{value}"
    return re.sub(r"_\d+$", "", value.split("@")[0].split("#")[0])


def _not_16(mod: Module, arg: str) -> bool:
    """Whether the kernel argument `arg` is not known to be a multiple of 16 (its `tt.divisibility`)."""
    d = mod.args[arg].divisibility
    return not d or d % 16 != 0


def _shown(values: dict[str, object], arg: str) -> str:
    """` (= 1000)`: the argument's value in the launch being explained, where known."""
    return f" (= {values[arg]})" if arg in values else ""


def access_reasons(mod: Module, op: Op, elem_bytes: int | None, per_thread: int | None,
                    values: dict[str, object], lines_of: Any = None) -> tuple[list[str], list[str]]:
    """Reasons an access is narrower than 128 bits, read from the TTIR (and the TTGIR layout)."""
    flow = Flow(mod)
    reasons: list[str] = []
    codes: list[str] = []
    if not op.operands:
        return reasons, codes
    ptr = op.operands[0]
    bases = flow.base_pointers(ptr)
    for b in bases:
        if _not_16(mod, b):
            reasons.append(f"`{b}` is not known to be 16-byte aligned (Triton specialises a pointer argument as "
                           f"aligned only when its address is a multiple of 16)")
            codes.append("pointer_alignment")
    offsets = flow.offsets(ptr)
    off_args: set[str] = set()
    off_consts: list[int] = []
    for off in offsets:
        a, c, _ = flow.leaves(off)
        off_args |= a
        off_consts += c
    for a in sorted(off_args):
        if _not_16(mod, a):
            reasons.append(f"the address uses `{a}`{_shown(values, a)}, which is not known to be a multiple of 16, "
                           f"so the compiler cannot prove the accesses of a thread are 16-byte aligned")
            codes.append("offset_divisibility")
    for off in offsets:
        for ld in flow.loads(off):
            if _promised_multiple(ld):  # `tl.multiple_of(tl.load(...), 16)`: the user said so
                continue
            scalar = tensor_type(type_text(ld.text)) is None
            name = variable_name(ld.results[0]) if ld.results else "a value"
            where = f" at line {lines_of(ld)[0]}" if lines_of and lines_of(ld) else ""
            if scalar:
                reasons.append(f"`{name}` is loaded from memory{where}, so the compiler cannot know its alignment "
                               f"(or that it is a multiple of anything): the address it starts is not known to be "
                               f"16-byte aligned")
                codes.append("loaded_offset")
            else:
                reasons.append(f"the index `{name}` is loaded from memory{where} (a gather): each lane's address "
                               f"depends on the data")
                codes.append("gather")
    vec = 16 // elem_bytes if elem_bytes else None
    odd = [c for c in off_consts if vec and c % vec]
    contiguous = None
    scalers: list[str] = []
    for off in offsets:
        u = flow.unscaled_range(off, scalers)
        contiguous = u if contiguous is None else (contiguous or bool(u))
    if contiguous is False:
        described = [a for a in scalers if DESCRIPTOR_STRIDE.search(a)]
        if described:
            reasons.insert(0, f"the tensor descriptor is rewritten into pointer arithmetic on this target (no TMA), "
                           f"and its stride `{described[-1]}` is a value known only at run time, so the compiler "
                           f"cannot see that the elements of a thread are contiguous")
            codes.insert(0, "descriptor_stride")
        else:
            by = f" by `{scalers[-1]}`, a value known only at run time" if scalers else ""
            reasons.insert(0, f"the index is strided (the `tl.arange` is multiplied{by or ' or divided'} before it "
                           f"reaches the address), so the elements of a thread are not contiguous in memory")
            codes.insert(0, "strided")
    elif odd and "offset_divisibility" not in codes:
        reasons.append(f"the address adds a constant ({', '.join(str(c) for c in sorted(set(odd)))}) that is not a "
                       f"multiple of {vec} elements, so the accesses are not 16-byte aligned")
        codes.append("constant_offset")
    mask_index = {"tt.load": 1, "tt.store": 2, "tt.atomic_rmw": 2}.get(op.name)
    if mask_index is not None and len(op.operands) > mask_index:
        margs, _, mops = flow.leaves(op.operands[mask_index])
        compared = sorted(a for a in margs if any(o.name == "arith.cmpi" for o in mops))
        for a in compared:
            if _not_16(mod, a):
                reasons.append(f"the mask compares against `{a}`{_shown(values, a)}, which is not known to be a "
                               f"multiple of 16, so a thread's group of elements may be cut by the mask (masked tail)")
                codes.append("mask_divisibility")
        # a bound read from memory (a jagged row's length, `end - start`): no divisibility is known
        # unless the code promises one (`tl.multiple_of(end - start, 16)`)
        bounds = [o for c in mops if c.name == "arith.cmpi" for o in c.operands]
        loaded = [ld for b in bounds if not _promised_chain(flow, b) for ld in flow.loads(b)
                  if not _promised_multiple(ld)]
        if loaded:
            names = ", ".join(dict.fromkeys(f"`{variable_name(ld.results[0])}`" for ld in loaded if ld.results))
            where = lines_of(loaded[0]) if lines_of else []
            reasons.append(f"the mask's bound comes from {names}, loaded from memory"
                           + (f" at line {where[0]}" if where else "") + ", not known to be a multiple of 16, so a "
                           "thread's group of elements may be cut by the mask")
            codes.append("mask_loaded")
    if per_thread is not None and elem_bytes and per_thread * elem_bytes < 16:
        # the layout caps the width whatever else holds: say so first (after a stride, its usual cause)
        layout = (f"the layout gives each thread {per_thread} contiguous element{'s' if per_thread > 1 else ''} "
                  f"({per_thread * elem_bytes} bytes) along the fastest dimension, fewer than the 16 bytes of a "
                  f"128-bit access")
        causes = [(r, c) for r, c in zip(reasons, codes) if c != "mask_divisibility"]
        if not causes and op.name not in ("tt.atomic_rmw", "tt.atomic_cas"):
            layout += " (a larger block, fewer warps or a different dot layout would give more)"
        elif causes:
            layout = "so " + layout
        ordered = causes + [(layout, "layout")]
        reasons, codes = [r for r, _ in ordered], [c for _, c in ordered]
    return reasons, codes
