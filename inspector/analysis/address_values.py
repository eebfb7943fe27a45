"""The integer values of a TTGIR module's address arithmetic for one program: what each lane's
pointer and mask hold (numpy arrays), with the recorded launch's scalars, a loop's iterations and
the branch an `scf.if` takes; values loaded from memory are unknown (`Unknown`) or, for scalars,
evaluated with a stand-in whose use is remembered. And what one memory op's pointer, mask and
layout are (`access_site`). Used by coalescing.py.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from .mlir import Module, Op, element_bits, type_text

# `tt.make_range {end = 1024 : i32, start = 0 : i32}`
MAKE_RANGE = re.compile(r"end = (-?\d+)[^,}]*,\s*start = (-?\d+)")
# `tt.expand_dims %x {axis = 1 : i32}`, `tt.reduce ... {axis = 0 : i32}`
AXIS = re.compile(r"axis = (\d+)")
# `tt.trans %x {order = array<i32: 1, 0>}`
TRANS_ORDER = re.compile(r"order = array<i32:\s*([\d,\s]+)>")
# `arith.cmpi slt, %a, %b`
CMPI = re.compile(r"arith\.cmpi\s+(\w+)")
# `tt.get_program_id x`, `tt.get_num_programs y`
PROGRAM_AXIS = re.compile(r"tt\.get_(?:program_id|num_programs)\s+([xyz])")
# every type of an op, in order: `tensor<32x64x!tt.ptr<f16>, #blocked>`, `!tt.ptr<f32>`, `i32`
TYPE_TOKEN = re.compile(r"tensor<(?:[^<>]|<[^<>]*(?:<[^<>]*>)?[^<>]*>)*>|!tt\.ptr<[^<>]+>|\b[ifu]\d+\b|\bbf16\b|\bindex\b")
# every type of an op, in order: `tensor<32x64x!tt.ptr<f16>, #blocked>`, `!tt.ptr<f32>`, `i32`
TYPE_TOKEN = re.compile(r"tensor<(?:[^<>]|<[^<>]*(?:<[^<>]*>)?[^<>]*>)*>|!tt\.ptr<[^<>]+>|\b[ifu]\d+\b|\bbf16\b|\bindex\b")
TENSOR_PARTS = re.compile(r"tensor<((?:\d+x)*)(!tt\.ptr<(\w+)>|\w+)(?:,\s*(.*))?>$")
INLINE_ENCODING = re.compile(r"#(?:ttg|ttng)\.(\w+)<\{(.*)\}>$")

_AXES = {"x": 0, "y": 1, "z": 2}
_BASE_STRIDE = 1 << 40  # pointer argument i starts at (i + 1) << 40: 128-byte aligned, far apart


class Unknown:
    """A value the evaluation cannot know: loaded from memory, a float, a reduction."""

    def __init__(self, origin: str, uniform: bool, loaded: bool = False):
        self.origin = origin
        self.uniform = uniform
        self.loaded = loaded  # it comes from memory (a gather), not from arithmetic this does not model


# The evaluator visits each op once per program and loop iteration: its types are parsed once per
# distinct op text (a launch of thousands of programs re-reads the same few dozen ops).
@functools.lru_cache(maxsize=4096)
def _types_of(op_text: str) -> tuple[str, ...]:
    return tuple(TYPE_TOKEN.findall(type_text(op_text)))


def _types(op: Op) -> list[str]:
    return list(_types_of(op.text))


@functools.lru_cache(maxsize=4096)
def _result_type_of(op_text: str) -> str | None:
    text = type_text(op_text)
    if "->" in text:
        tail = TYPE_TOKEN.findall(text.rsplit("->", 1)[1])
        return tail[-1] if tail else None
    ts = TYPE_TOKEN.findall(text)
    return ts[0] if ts else None


def result_type(op: Op) -> str | None:
    return _result_type_of(op.text)


@functools.lru_cache(maxsize=4096)
def _shape_of(t: str) -> tuple[int, ...]:
    m = TENSOR_PARTS.match(t)
    return tuple(int(d) for d in m.group(1).split("x") if d) if m else ()


def shape_of(t: str | None) -> list[int]:
    return list(_shape_of(t)) if t else []


@functools.lru_cache(maxsize=4096)
def _pointee_bytes(t: str | None) -> int | None:
    """Bytes of the element a pointer type points to (`tensor<64x!tt.ptr<f16>>` -> 2)."""
    if not t:
        return None
    m = re.search(r"!tt\.ptr<(\w+)>", t)
    if not m:
        return None
    bits = element_bits(m.group(1))
    return bits // 8 if bits else None


@dataclass
class Memory:
    """What some pointer arguments held when the launch was recorded: argument name -> its
    elements, flat, from the pointer the kernel receives (a `--run` capture's index tensors,
    `inspector.capture.carried`). A load through such an argument reads these values instead of
    being unknown, so gathers, jagged rows and loaded loop bounds evaluate exactly."""

    arrays: dict[str, np.ndarray]


class Evaluator:
    """Integer values of a TTGIR module's address arithmetic for one program (numpy arrays)."""

    def __init__(self, mod: Module, scalars: dict[str, int], pid: tuple[int, int, int], grid: tuple[int, int, int],
                 shift: int, memory: Memory | None = None):
        self.mod = mod
        self.memory = memory
        self.scalars = scalars
        self.pid = pid
        self.grid = grid
        self.shift = shift  # what a loaded scalar evaluates to in this run
        self.memo: dict[str, Any] = {}
        self.used: dict[str, str] = {}  # unknown scalars substituted: origin -> description
        self.arg_index = {name: i for i, name in enumerate(mod.args)}
        self.state: dict[str, Any] = {}  # a loop's induction variable and iter args at the iteration evaluated
        # values defined outside every loop, the same at each iteration, shared with `at`'s
        # evaluators: name -> (value, the unknowns substituted to compute it)
        self.invariant: dict[str, tuple[Any, dict[str, str]]] = {}
        self.invariant_names = mod.outside_loops
        self._taints: list[dict[str, str]] = []  # per value() in progress: the unknowns it substituted
        self._memo_taint: dict[str, dict[str, str]] = {}  # a memoised value's unknowns, where it has any

    def at(self, state: dict[str, Any]) -> "Evaluator":
        """The same program at another loop iteration: values computed inside the loop are forgotten,
        those defined outside every loop kept (a kept value computed with a stand-in marks the
        iteration that reuses it, as computing it there would)."""
        ev = Evaluator(self.mod, self.scalars, self.pid, self.grid, self.shift, self.memory)
        ev.state = state
        ev.invariant = self.invariant
        return ev

    def _substitute(self, origin: str, description: str) -> None:
        self.used[origin] = description
        if self._taints:
            self._taints[-1][origin] = description

    def value(self, name: str, depth: int = 0) -> Any:
        if name in self.state:
            return self.state[name]
        if name in self.memo:
            for origin, description in self._memo_taint.get(name, {}).items():
                self._substitute(origin, description)
            return self.memo[name]
        if name in self.invariant:
            v, taint = self.invariant[name]
            for origin, description in taint.items():
                self._substitute(origin, description)
            return v
        self.memo[name] = Unknown(f"`%{name}` (a cycle)", False)
        v, taint = self.tainted(lambda: self._value(name, depth))
        if name in self.invariant_names:
            del self.memo[name]
            self.invariant[name] = (v, taint)
        else:
            self.memo[name] = v
            if taint:
                self._memo_taint[name] = taint
        return v

    def tainted(self, compute: Callable[[], Any]) -> tuple[Any, dict[str, str]]:
        """`compute()`, and the unknowns substituted for the values it read (computed now or before:
        several sites evaluated with one evaluator each get their own)."""
        self._taints.append({})
        try:
            out = compute()
        finally:
            taint = self._taints.pop()
            if self._taints:
                self._taints[-1].update(taint)
        return out, taint

    def _value(self, name: str, depth: int) -> Any:
        mod = self.mod
        if depth > 400:
            return Unknown(f"`%{name}`", False)
        if name in mod.args:
            arg = mod.args[name]
            if arg.is_pointer:
                return np.int64((self.arg_index[name] + 1) * _BASE_STRIDE)
            if name in self.scalars:
                return np.int64(self.scalars[name])
            self._substitute(f"argument `{name}`", f"`{name}` (no value recorded)")
            return np.int64(self.shift)
        if name in mod.loop_carried:  # a loop's first iteration: the initial value
            return self.value(mod.loop_carried[name][0], depth + 1)
        op = mod.defs.get(name)
        if op is None:
            return Unknown(f"`%{name}`", False)
        if op.name == "scf.for" and name not in op.results:
            return self.value(op.operands[0], depth + 1) if op.operands else Unknown("a loop index", True)
        if op.name == "scf.if":
            return self._branch(op, int(name.rsplit("#", 1)[1]) if "#" in name else 0, depth)
        return self._op(op, depth)

    def _branch(self, op: Op, index: int, depth: int) -> Any:
        """Result `index` of an `scf.if`: the yield of the branch its (uniform) condition takes."""
        yields = self.mod.branches.get(op.line, [])
        cond = self.value(op.operands[0], depth + 1) if op.operands else None
        if not yields or cond is None or isinstance(cond, Unknown) or np.ndim(cond):
            return Unknown(f"TTGIR line {op.line} (scf.if)", False)
        branch = yields[0] if bool(cond) else (yields[1] if len(yields) > 1 else [])
        return self.value(branch[index], depth + 1) if index < len(branch) else \
            Unknown(f"TTGIR line {op.line} (scf.if)", False)

    def _unknown_result(self, op: Op, origin: str) -> Any:
        shape = shape_of(result_type(op))
        if not shape:  # a scalar: evaluate with a stand-in value and remember it
            self._substitute(origin, origin)
            return np.int64(self.shift)
        return Unknown(origin, False, loaded=True)

    def _load(self, op: Op, shape: list[int]) -> Any:
        """What a load reads from the recorded memory (None when it does not read a carried argument,
        or reads outside what was carried): masked-off lanes take `other` (0 when it is not an integer)."""
        site = access_site(op)
        if site is None or site.pointer is None:
            return None
        addr = self.value(site.pointer)
        if isinstance(addr, Unknown):
            return None
        addr = np.asarray(addr, dtype=np.int64)
        mask = self.value(site.mask) if site.mask else None
        if isinstance(mask, Unknown):
            return None
        on = np.ones(addr.shape, bool) if mask is None else np.broadcast_to(np.asarray(mask, bool), addr.shape)
        if not on.any():
            index = None
        else:
            index = int(addr[on].min()) // _BASE_STRIDE - 1
            if not 0 <= index < len(self.mod.args) or int(addr[on].max()) // _BASE_STRIDE - 1 != index:
                return None
        data = self.memory.arrays.get(list(self.mod.args)[index]) if index is not None else np.zeros(1, np.int64)
        if data is None or data.dtype.kind not in "iub":
            return None
        offset = addr - (index + 1 if index is not None else 1) * _BASE_STRIDE
        eb = site.element_bytes or 1
        if np.any(offset[on] % eb) or np.any(offset[on] < 0) or np.any(offset[on] // eb >= len(data)):
            return None  # outside what was carried
        other = self.value(op.operands[2]) if len(op.operands) > 2 else np.int64(0)
        if isinstance(other, Unknown):
            other = np.int64(0)
        got = np.where(on, data[np.where(on, offset // eb, 0)].astype(np.int64), other)
        return got.reshape(shape) if shape else np.int64(got.reshape(-1)[0])

    def _op(self, op: Op, depth: int) -> Any:
        n = op.name
        rtype = result_type(op)
        shape = shape_of(rtype)
        if n == "arith.constant":
            body = op.text.split("constant", 1)[1].split(":")[0]
            if m := re.search(r"(-?\d+)(?![\d.e])", body):
                if "." not in body:
                    return np.full(shape, int(m.group(1)), dtype=np.int64) if shape else np.int64(int(m.group(1)))
            if "true" in body or "false" in body:
                v = "true" in body
                return np.full(shape, v) if shape else np.bool_(v)
            return Unknown("a float constant", not shape)
        if n == "tt.get_program_id":
            m = PROGRAM_AXIS.search(op.text)
            return np.int64(self.pid[_AXES[m.group(1)] if m else 0])
        if n == "tt.get_num_programs":
            m = PROGRAM_AXIS.search(op.text)
            return np.int64(self.grid[_AXES[m.group(1)] if m else 0])
        if n == "tt.make_range":
            m = MAKE_RANGE.search(op.text)
            return np.arange(int(m.group(2)), int(m.group(1)), dtype=np.int64) if m else Unknown("a range", False)
        if n in ("tt.load", "amdg.buffer_load", "amdgpu.buffer_load", "tt.atomic_rmw", "tt.atomic_cas"):
            if self.memory is not None and n == "tt.load":
                got = self._load(op, shape)
                if got is not None:
                    return got
            name = op.results[0] if op.results else ""
            shown = f"`{re.sub(r'_[0-9]+$', '', name)}`" if name and not name.isdigit() else "a value"
            return self._unknown_result(op, f"{shown} (loaded from memory)")
        args = [self.value(o, depth + 1) for o in op.operands]
        bad = next((a for a in args if isinstance(a, Unknown)), None)
        if bad is not None:
            return bad if shape or not bad.uniform else self._unknown_result(op, bad.origin)
        try:
            return self._compute(op, n, args, shape, rtype)
        except (ValueError, IndexError, ZeroDivisionError, FloatingPointError, TypeError):
            return Unknown(f"TTGIR line {op.line} ({n})", not shape)

    def _compute(self, op: Op, n: str, a: list[Any], shape: list[int], rtype: str | None) -> Any:
        if n in ("tt.splat", "tt.broadcast"):
            return np.broadcast_to(a[0], shape).copy()
        if n == "tt.expand_dims":
            m = AXIS.search(op.text)
            return np.expand_dims(a[0], int(m.group(1)) if m else 0)
        if n in ("ttg.convert_layout", "arith.extsi", "arith.extui", "arith.trunci", "arith.index_cast",
                 "arith.index_castui", "tt.int_to_ptr", "tt.ptr_to_int", "tt.bitcast", "arith.bitcast"):
            return a[0]
        if n == "tt.reshape":
            return np.reshape(a[0], shape)
        if n == "tt.trans":
            m = TRANS_ORDER.search(op.text)
            return np.transpose(a[0], [int(x) for x in m.group(1).split(",")] if m else None)
        if n == "tt.addptr":
            size = _pointee_bytes(_types(op)[0] if _types(op) else rtype) or 1
            return a[0] + a[1] * size
        if n == "arith.addi":
            return a[0] + a[1]
        if n == "arith.subi":
            return a[0] - a[1]
        if n == "arith.muli":
            return a[0] * a[1]
        if n in ("arith.divsi", "arith.divui"):
            if np.any(np.asarray(a[1]) == 0):
                raise ZeroDivisionError
            q = np.abs(a[0]) // np.abs(a[1])
            return np.where((np.asarray(a[0]) < 0) ^ (np.asarray(a[1]) < 0), -q, q)
        if n in ("arith.remsi", "arith.remui"):
            if np.any(np.asarray(a[1]) == 0):
                raise ZeroDivisionError
            return np.fmod(a[0], a[1])
        if n == "arith.andi":
            return a[0] & a[1]
        if n == "arith.ori":
            return a[0] | a[1]
        if n == "arith.xori":
            return a[0] ^ a[1]
        if n == "arith.shli":
            return a[0] << a[1]
        if n in ("arith.shrsi", "arith.shrui"):
            return a[0] >> a[1]
        if n in ("arith.minsi", "arith.minui"):
            return np.minimum(a[0], a[1])
        if n in ("arith.maxsi", "arith.maxui"):
            return np.maximum(a[0], a[1])
        if n == "arith.select":
            return np.where(a[0], a[1], a[2])
        if n == "arith.cmpi":
            m = CMPI.search(op.text)
            pred = m.group(1) if m else "eq"
            x, y = a[0], a[1]
            return {"eq": x == y, "ne": x != y, "slt": x < y, "sle": x <= y, "sgt": x > y, "sge": x >= y,
                    "ult": x < y, "ule": x <= y, "ugt": x > y, "uge": x >= y}[pred]
        return Unknown(f"TTGIR line {op.line} ({n})", not shape)


@dataclass
class AccessSite:
    """What coalescing needs of one TTGIR memory op."""

    op: Op
    pointer: str | None  # the pointer tensor value (None: a descriptor / TMA op)
    mask: str | None
    shape: list[int]
    encoding: str | None
    element_bytes: int
    offsets: str | None = None  # AMD buffer ops: element offsets from a scalar base
    base: str | None = None


def access_site(op: Op) -> AccessSite | None:
    """The pointer, mask and layout of a TTGIR load/store/atomic/async copy (None when not one)."""
    types = _types(op)
    n = op.name
    ops = op.operands
    if n.startswith(("tt.descriptor", "ttng.async_tma")) or not ops:
        return AccessSite(op, None, None, [], None, 0)
    if n.startswith(("amdg.buffer", "amdgpu.buffer")):
        # `amdg.buffer_load %base[%offsets], %mask ...`; stores: `%value, %base[%offsets], %mask`
        k = 1 if n.endswith(("store", "atomic_rmw", "atomic_cas")) else 0
        # after `]`: the mask (and `other`), before `stride = %s` and the attributes
        tail = op.text.split("]", 1)[1] if "]" in op.text else ""
        tail = re.split(r"\bstride\s*=|\{|\s:\s", tail, maxsplit=1)[0]
        rest = ops[k + 2:k + 2 + len(re.findall(r"%[\w.]+", tail))]
        t = next((x for x in types if x.startswith("tensor<")), None)
        m = TENSOR_PARTS.match(t) if t else None
        elem = element_bits(m.group(3) or m.group(2)) if m else None
        return AccessSite(op, None, rest[0] if rest else None, shape_of(t), m.group(4) if m else None,
                          (elem or 8) // 8, offsets=ops[k + 1] if len(ops) > k + 1 else None, base=ops[k])
    ptr_type = next((t for t in types if "!tt.ptr" in t), None)
    if ptr_type is None:
        return None
    m = TENSOR_PARTS.match(ptr_type)
    shape = shape_of(ptr_type)
    encoding = m.group(4) if m else None
    eb = _pointee_bytes(ptr_type) or 1
    mask = None
    if n == "tt.load":
        mask = ops[1] if len(ops) >= 2 else None
    elif n in ("tt.store", "tt.atomic_rmw"):
        mask = ops[2] if len(ops) >= 3 else None
    elif n == "ttg.async_copy_global_to_local":
        mm = re.search(r"\bmask\s+%([\w.]+)", op.text)
        mask = mm.group(1) if mm else None
    return AccessSite(op, ops[0], mask, shape, encoding, eb)


# a host-made tensor descriptor as the record shows it (inspector.worker.kernel_file.describe_value)
DESCRIPTOR_TEXT = re.compile(r"tensor descriptor .*, shape \[([\d, ]*)\], strides \[([\d, ]*)\]$")


def representative_scalars(values: dict[str, Any]) -> dict[str, int]:
    """The recorded launch's integers by TTGIR argument name; a tensor descriptor's shape and
    strides become its `d.shape.i` / `d.stride.i` arguments (how targets without TMA pass them)."""
    out = {}
    for k, v in values.items():
        if isinstance(v, bool):
            out[k] = int(v)
        elif isinstance(v, int):
            out[k] = v
        elif isinstance(v, str) and (m := DESCRIPTOR_TEXT.match(v)):
            for what, group in (("shape", 1), ("stride", 2)):
                for i, x in enumerate(int(t) for t in m.group(group).split(",") if t.strip()):
                    out[f"{k}.{what}.{i}"] = x
    return out


def addresses(site: AccessSite, mod: Module, scalars: dict[str, int], pid: tuple[int, int, int],
               grid: tuple[int, int, int], shift: int, memory: Memory | None = None) -> tuple[Any, Any, Evaluator]:
    ev = Evaluator(mod, scalars, pid, grid, shift, memory)
    if site.offsets is not None:
        base, offs = ev.value(site.base or ""), ev.value(site.offsets)
        addr = offs if isinstance(offs, Unknown) or isinstance(base, Unknown) else base + offs * site.element_bytes
    else:
        addr = ev.value(site.pointer or "")
    used = dict(ev.used)  # what the address (not the mask) depends on
    mask = ev.value(site.mask) if site.mask else None
    ev.used = used
    return addr, mask, ev


def site_values(ev: Evaluator, site: AccessSite) -> tuple[Any, np.ndarray | None]:
    if site.offsets is not None:
        base, offs = ev.value(site.base or ""), ev.value(site.offsets)
        addr = offs if isinstance(offs, Unknown) or isinstance(base, Unknown) else base + offs * site.element_bytes
    else:
        addr = ev.value(site.pointer or "")
    mask = ev.value(site.mask) if site.mask else None
    if isinstance(mask, Unknown):
        return Unknown("the mask", False), None
    return addr, None if mask is None else np.broadcast_to(mask, site.shape)


def loop_range(ev: Evaluator, loop: Op) -> range | None:
    """The values `loop`'s induction variable takes, when its bounds are known numbers."""
    # a bound evaluated with a stand-in for a loaded value (a jagged row's end) is not a number
    (lb, ub, step), taint = ev.tainted(lambda: [ev.value(o) for o in loop.operands[:3]])
    if taint or any(isinstance(v, Unknown) or np.ndim(v) for v in (lb, ub, step)) or int(step) <= 0:
        return None
    return range(int(lb), int(ub), int(step))


def iterations(ev: Evaluator, loop: Op | None, limit: int = 1 << 16):
    """The evaluator at each iteration of `loop` (just `ev` outside loops)."""
    if loop is None:
        yield ev
        return
    iv, carried = ev.mod.loops[loop.line]
    steps = loop_range(ev, loop)
    if steps is None:
        ev.used["the loop's bounds"] = "the loop's bounds"
        yield ev
        return
    state = {k: ev.value(ev.mod.loop_carried[k][0]) for k in carried if ev.mod.loop_carried.get(k)}
    for i, value in enumerate(steps):
        if i >= limit:
            ev.used["a loop of more iterations than modelled"] = "loop"
            return
        cur = ev.at({**state, iv: np.int64(value)})
        yield cur
        state = {k: cur.value(ev.mod.loop_carried[k][1]) if len(ev.mod.loop_carried.get(k, [])) > 1 else state.get(k)
                 for k in carried}
