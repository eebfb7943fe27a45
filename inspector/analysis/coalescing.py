"""Coalescing: how many memory sectors one warp's request touches, against the fewest it could.

Vector width (memory.py) says how many bits each thread moves per instruction; coalescing says
how well the 32 (AMD: 64) lanes of one instruction share memory transactions. NVIDIA's memory
system moves 32-byte sectors (four to a 128-byte line); a request of 32 lanes x 4 contiguous
bytes needs 4 sectors, the same lanes 16 bytes apart need 16. This module computes, per access:

- which lane holds which elements, per register, from the TTGIR layout of the pointer tensor
  (blocked, slice and linear encodings, as Triton's linear layouts define them);
- each element's byte address, by evaluating the TTGIR that computes the pointer (and the mask)
  with integers: the recorded launch's scalar arguments, program 0, a loop's first iteration.
  A value loaded from memory (a jagged row's start) is unknown: where it only shifts the whole
  request, the pattern is exact and the shift is stated as an assumption (with the sectors a
  misaligned shift costs); where it scales or permutes the lanes (a gather), the access is said
  to depend on the data and is not scored;
- per instruction (registers grouped by the vector width the machine code shows) and per warp:
  the distinct sectors and 128-byte lines the active lanes touch, and the ideal: the bytes they
  use, in whole sectors.

What it assumes, and says: pointer arguments start 128-byte aligned (PyTorch's allocator aligns
to 512 bytes; a view such as `x[1:]` does not), the representative program is program 0 (masks
of a tail program are not counted), and loops are read at their first iteration.
`launch_sectors` sums every program of the recorded grid, for checking against Nsight Compute's
`L2 Theoretical Sectors Global` (benchmarks/coalescing_fidelity.py).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..archs import memory_granules
from .layouts import parse_params
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
TENSOR_PARTS = re.compile(r"tensor<((?:\d+x)*)(!tt\.ptr<(\w+)>|\w+)(?:,\s*(.*))?>$")
INLINE_ENCODING = re.compile(r"#(?:ttg|ttng)\.(\w+)<\{(.*)\}>$")

_AXES = {"x": 0, "y": 1, "z": 2}
_BASE_STRIDE = 1 << 40  # pointer argument i starts at (i + 1) << 40: 128-byte aligned, far apart
_SHIFT_PROBE = 1_000_003  # a loaded scalar's value in the second evaluation (tells shift from scale)


class _Unknown:
    """A value the evaluation cannot know: loaded from memory, a float, a reduction."""

    def __init__(self, origin: str, uniform: bool, loaded: bool = False):
        self.origin = origin
        self.uniform = uniform
        self.loaded = loaded  # it comes from memory (a gather), not from arithmetic this does not model


@dataclass
class Request:
    """One instruction of one warp: what its active lanes touch."""

    warp: int
    instruction: int  # index of the register group within the thread
    active_lanes: int
    bytes: int  # distinct bytes the active lanes use
    sectors: int
    ideal_sectors: int
    lines: int  # distinct 128-byte lines
    lane_sectors: list[int]  # per lane: its first sector, relative to the request's lowest (-1: inactive)


@dataclass
class Coalescing:
    """How one access's requests use the memory system (see the module docstring)."""

    status: str  # "computed" | "uniform" | "tma" | "data_dependent" | "unknown"
    note: str  # in words
    vector_bits: int | None = None  # bits per thread per instruction
    sector_bytes: int = 32
    line_bytes: int = 128
    warp_size: int = 32
    instructions_per_warp: int = 0  # requests one warp makes for this access (per program, per iteration)
    sectors_per_request: float | None = None  # mean over the representative program's requests
    ideal_sectors_per_request: float | None = None
    lines_per_request: float | None = None
    sector_efficiency: float | None = None  # ideal / touched, 0..1
    misaligned_sectors_per_request: float | None = None  # the same when an unknown shift is not aligned
    uniform: bool = False  # one address per request (a scalar load, a broadcast value)
    assumptions: list[str] = field(default_factory=list)
    depends_on: list[str] = field(default_factory=list)  # unknown values the pattern or its alignment hangs on
    requests: list[Request] = field(default_factory=list)  # warp 0's requests, for drawing
    lane_stride_bytes: int | None = None  # distance between neighbouring lanes in instruction 0, when regular
    sectors_range: tuple[float, float] | None = None  # data-dependent: (fewest, most) sectors per request


# ---- layouts: (warp, lane, register) -> tensor coordinates ---------------------------------------------------

def _log2(n: int) -> int:
    return max(0, int(n).bit_length() - 1)


def _blocked_bases(params: dict[str, Any], shape: list[int]) -> dict[str, list[list[int]]] | None:
    spt, tpw, wpc, order = (params.get(k) for k in ("sizePerThread", "threadsPerWarp", "warpsPerCTA", "order"))
    if not all(isinstance(v, list) and len(v) == len(shape) for v in (spt, tpw, wpc, order)):
        return None
    nd = len(shape)

    def unit(d: int, size: int) -> list[int]:
        v = [0] * nd
        v[d] = size
        return v

    regs = [unit(d, 1 << i) for d in order for i in range(_log2(spt[d]))]
    lanes = [unit(d, spt[d] << i) for d in order for i in range(_log2(tpw[d]))]
    warps = [unit(d, spt[d] * tpw[d] << i) for d in order for i in range(_log2(wpc[d]))]
    for d in order:  # a tensor larger than the layout's tile repeats it in registers
        tile = spt[d] * tpw[d] * wpc[d]
        regs += [unit(d, tile << i) for i in range(_log2(max(1, shape[d] // tile)))]
    return {"register": regs, "lane": lanes, "warp": warps}


def _layout_bases(encoding: str, mod: Module, shape: list[int]) -> dict[str, list[list[int]]] | None:
    """The linear-layout bases of an encoding for a tensor of `shape` (None: not modelled)."""
    if encoding in mod.layouts:
        kind, body = mod.layouts[encoding]
        kind = kind.split(".")[-1]
    elif m := INLINE_ENCODING.match(encoding):
        kind, body = m.group(1), m.group(2)
    else:
        return None
    params = parse_params(body)
    if kind == "blocked":
        bases = _blocked_bases(params, shape)
    elif kind == "linear":
        bases = {k: [list(b) for b in params.get(k, []) if isinstance(b, list)] for k in ("register", "lane", "warp")}
        if any(len(b) != len(shape) for v in bases.values() for b in v):
            return None
    elif kind == "slice":
        dim, parent = params.get("dim"), params.get("parent")
        if not isinstance(dim, int) or not isinstance(parent, str):
            return None
        # a slice is its parent over a shape with a 1 inserted at `dim`, with that dimension dropped
        pb = _layout_bases(parent, mod, shape[:dim] + [1] + shape[dim:])
        if pb is None:
            return None
        bases = {k: [b[:dim] + b[dim + 1:] for b in v] for k, v in pb.items()}
        bases["register"] = [b for b in bases["register"] if any(b)]
        return bases
    else:
        return None
    if bases is None:
        return None
    # a dimension smaller than the layout's reach: the bases past it broadcast (lanes repeat elements)
    return {k: [[c if c < s else 0 for c, s in zip(b, shape)] for b in v] for k, v in bases.items()}


def _coordinates(bases: dict[str, list[list[int]]], nd: int) -> np.ndarray:
    """(warps, lanes, registers, nd) coordinates: each index is the XOR of the bases of its set bits."""

    def span(bs: list[list[int]]) -> np.ndarray:
        out = np.zeros((1 << len(bs), nd), dtype=np.int64)
        for i, b in enumerate(bs):
            half = 1 << i
            out[half:2 * half] = out[:half] ^ np.asarray(b, dtype=np.int64)
        return out

    w, l, r = span(bases["warp"]), span(bases["lane"]), span(bases["register"])
    return w[:, None, None, :] ^ l[None, :, None, :] ^ r[None, None, :, :]


# ---- evaluating the address computation ------------------------------------------------------------------------

def _types(op: Op) -> list[str]:
    text = type_text(op.text)
    return TYPE_TOKEN.findall(text)


def _result_type(op: Op) -> str | None:
    text = type_text(op.text)
    if "->" in text:
        tail = TYPE_TOKEN.findall(text.rsplit("->", 1)[1])
        return tail[-1] if tail else None
    ts = TYPE_TOKEN.findall(text)
    return ts[0] if ts else None


def _shape_of(t: str | None) -> list[int]:
    if t and (m := TENSOR_PARTS.match(t)):
        return [int(d) for d in m.group(1).split("x") if d]
    return []


def _pointee_bytes(t: str | None) -> int | None:
    """Bytes of the element a pointer type points to (`tensor<64x!tt.ptr<f16>>` -> 2)."""
    if not t:
        return None
    m = re.search(r"!tt\.ptr<(\w+)>", t)
    if not m:
        return None
    bits = element_bits(m.group(1))
    return bits // 8 if bits else None


class _Evaluator:
    """Integer values of a TTGIR module's address arithmetic for one program (numpy arrays)."""

    def __init__(self, mod: Module, scalars: dict[str, int], pid: tuple[int, int, int], grid: tuple[int, int, int],
                 shift: int):
        self.mod = mod
        self.scalars = scalars
        self.pid = pid
        self.grid = grid
        self.shift = shift  # what a loaded scalar evaluates to in this run
        self.memo: dict[str, Any] = {}
        self.used: dict[str, str] = {}  # unknown scalars substituted: origin -> description
        self.arg_index = {name: i for i, name in enumerate(mod.args)}
        self.state: dict[str, Any] = {}  # a loop's induction variable and iter args at the iteration evaluated

    def at(self, state: dict[str, Any]) -> "_Evaluator":
        """The same program at another loop iteration (values computed inside the loop are forgotten)."""
        ev = _Evaluator(self.mod, self.scalars, self.pid, self.grid, self.shift)
        ev.state = state
        return ev

    def value(self, name: str, depth: int = 0) -> Any:
        if name in self.state:
            return self.state[name]
        if name in self.memo:
            return self.memo[name]
        self.memo[name] = _Unknown(f"`%{name}` (a cycle)", False)
        v = self._value(name, depth)
        self.memo[name] = v
        return v

    def _value(self, name: str, depth: int) -> Any:
        mod = self.mod
        if depth > 400:
            return _Unknown(f"`%{name}`", False)
        if name in mod.args:
            arg = mod.args[name]
            if arg.is_pointer:
                return np.int64((self.arg_index[name] + 1) * _BASE_STRIDE)
            if name in self.scalars:
                return np.int64(self.scalars[name])
            self.used[f"argument `{name}`"] = f"`{name}` (no value recorded)"
            return np.int64(self.shift)
        if name in mod.loop_carried:  # a loop's first iteration: the initial value
            return self.value(mod.loop_carried[name][0], depth + 1)
        op = mod.defs.get(name)
        if op is None:
            return _Unknown(f"`%{name}`", False)
        if op.name == "scf.for" and name not in op.results:
            return self.value(op.operands[0], depth + 1) if op.operands else _Unknown("a loop index", True)
        if op.name == "scf.if":
            return self._branch(op, int(name.rsplit("#", 1)[1]) if "#" in name else 0, depth)
        return self._op(op, depth)

    def _branch(self, op: Op, index: int, depth: int) -> Any:
        """Result `index` of an `scf.if`: the yield of the branch its (uniform) condition takes."""
        yields = self.mod.branches.get(op.line, [])
        cond = self.value(op.operands[0], depth + 1) if op.operands else None
        if not yields or cond is None or isinstance(cond, _Unknown) or np.ndim(cond):
            return _Unknown(f"TTGIR line {op.line} (scf.if)", False)
        branch = yields[0] if bool(cond) else (yields[1] if len(yields) > 1 else [])
        return self.value(branch[index], depth + 1) if index < len(branch) else \
            _Unknown(f"TTGIR line {op.line} (scf.if)", False)

    def _unknown_result(self, op: Op, origin: str) -> Any:
        shape = _shape_of(_result_type(op))
        if not shape:  # a scalar: evaluate with a stand-in value and remember it
            self.used[origin] = origin
            return np.int64(self.shift)
        return _Unknown(origin, False, loaded=True)

    def _op(self, op: Op, depth: int) -> Any:
        n = op.name
        rtype = _result_type(op)
        shape = _shape_of(rtype)
        if n == "arith.constant":
            body = op.text.split("constant", 1)[1].split(":")[0]
            if m := re.search(r"(-?\d+)(?![\d.e])", body):
                if "." not in body:
                    return np.full(shape, int(m.group(1)), dtype=np.int64) if shape else np.int64(int(m.group(1)))
            if "true" in body or "false" in body:
                v = "true" in body
                return np.full(shape, v) if shape else np.bool_(v)
            return _Unknown("a float constant", not shape)
        if n == "tt.get_program_id":
            m = PROGRAM_AXIS.search(op.text)
            return np.int64(self.pid[_AXES[m.group(1)] if m else 0])
        if n == "tt.get_num_programs":
            m = PROGRAM_AXIS.search(op.text)
            return np.int64(self.grid[_AXES[m.group(1)] if m else 0])
        if n == "tt.make_range":
            m = MAKE_RANGE.search(op.text)
            return np.arange(int(m.group(2)), int(m.group(1)), dtype=np.int64) if m else _Unknown("a range", False)
        if n in ("tt.load", "amdg.buffer_load", "amdgpu.buffer_load", "tt.atomic_rmw", "tt.atomic_cas"):
            name = op.results[0] if op.results else ""
            shown = f"`{re.sub(r'_[0-9]+$', '', name)}`" if name and not name.isdigit() else "a value"
            return self._unknown_result(op, f"{shown} (loaded from memory)")
        args = [self.value(o, depth + 1) for o in op.operands]
        bad = next((a for a in args if isinstance(a, _Unknown)), None)
        if bad is not None:
            return bad if shape or not bad.uniform else self._unknown_result(op, bad.origin)
        try:
            return self._compute(op, n, args, shape, rtype)
        except (ValueError, IndexError, ZeroDivisionError, FloatingPointError, TypeError):
            return _Unknown(f"TTGIR line {op.line} ({n})", not shape)

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
        return _Unknown(f"TTGIR line {op.line} ({n})", not shape)


# ---- requests -------------------------------------------------------------------------------------------------

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
        rest = ops[k + 2:]
        t = next((x for x in types if x.startswith("tensor<")), None)
        m = TENSOR_PARTS.match(t) if t else None
        elem = element_bits(m.group(3) or m.group(2)) if m else None
        return AccessSite(op, None, rest[0] if rest else None, _shape_of(t), m.group(4) if m else None,
                          (elem or 8) // 8, offsets=ops[k + 1] if len(ops) > k + 1 else None, base=ops[k])
    ptr_type = next((t for t in types if "!tt.ptr" in t), None)
    if ptr_type is None:
        return None
    m = TENSOR_PARTS.match(ptr_type)
    shape = _shape_of(ptr_type)
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


# a host-made tensor descriptor as the record shows it (inspector.compile.kernel_file.describe_value)
DESCRIPTOR_TEXT = re.compile(r"tensor descriptor .*, shape \[([\d, ]*)\], strides \[([\d, ]*)\]$")


def _representative_scalars(values: dict[str, Any]) -> dict[str, int]:
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


def _addresses(site: AccessSite, mod: Module, scalars: dict[str, int], pid: tuple[int, int, int],
               grid: tuple[int, int, int], shift: int) -> tuple[Any, Any, _Evaluator]:
    ev = _Evaluator(mod, scalars, pid, grid, shift)
    if site.offsets is not None:
        base, offs = ev.value(site.base or ""), ev.value(site.offsets)
        addr = offs if isinstance(offs, _Unknown) or isinstance(base, _Unknown) else base + offs * site.element_bytes
    else:
        addr = ev.value(site.pointer or "")
    used = dict(ev.used)  # what the address (not the mask) depends on
    mask = ev.value(site.mask) if site.mask else None
    ev.used = used
    return addr, mask, ev


def _distinct(values: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """Per row of a 2-D array: how many distinct values its valid entries hold."""
    v = np.where(valid, values, np.iinfo(np.int64).max)
    v.sort(axis=1)
    new = np.ones(v.shape, dtype=bool)
    new[:, 1:] = v[:, 1:] != v[:, :-1]
    return (new & (v != np.iinfo(np.int64).max)).sum(axis=1)


def _request_counts(addr: np.ndarray, mask: np.ndarray | None, coords: np.ndarray, vec: int, eb: int, sector: int,
                    line: int, dedupe: bool = True) -> dict[str, np.ndarray]:
    """Per request (warp, register group): active lanes, distinct bytes, sectors, ideal sectors, lines."""
    idx = tuple(coords[..., d] for d in range(coords.shape[-1]))
    a = addr[idx] if addr.ndim else np.broadcast_to(addr, coords.shape[:-1])  # (W, L, R)
    act = (mask[idx] if mask.ndim else np.broadcast_to(mask, a.shape)) if mask is not None else np.ones(a.shape, bool)
    W, L, R = a.shape
    vec = max(1, min(vec, R))
    K = R // vec
    a = a[:, :, :K * vec].reshape(W, L, K, vec).transpose(0, 2, 1, 3).reshape(W * K, L * vec)
    act = act[:, :, :K * vec].reshape(W, L, K, vec).transpose(0, 2, 1, 3).reshape(W * K, L * vec)
    if dedupe and K > 1:
        # two loads of a thread from the same addresses are one (ptxas merges them: a broadcast
        # value loaded into 8 registers is one LDG in SASS): such a request is issued once
        keyed = np.where(act, a, -1).reshape(W, K, L * vec)
        for w in range(W):
            _, first = np.unique(keyed[w], axis=0, return_index=True)
            repeat = np.ones(K, bool)
            repeat[first] = False
            act[w * K:(w + 1) * K][repeat] = False
    nbytes = _distinct(a, act) * eb
    return {"active": act.reshape(W * K, L, vec).any(axis=2).sum(axis=1), "bytes": nbytes,
            "sectors": _distinct(a // sector, act), "ideal": -(-nbytes // sector), "lines": _distinct(a // line, act),
            "shape": np.array([W, K])}


def _requests(addr: np.ndarray, mask: np.ndarray | None, coords: np.ndarray, vec: int, eb: int,
              sector: int, line: int, lanes_of_warp: int | None = None, dedupe: bool = True) -> list[Request]:
    """Every request of one program with at least one active lane; for warp `lanes_of_warp`, which
    sector each lane's first element falls in (for drawing)."""
    c = _request_counts(addr, mask, coords, vec, eb, sector, line, dedupe)
    W, K = (int(x) for x in c["shape"])
    out: list[Request] = []
    for i in np.flatnonzero(c["active"] > 0):
        w, k = divmod(int(i), K)
        lane_sec: list[int] = []
        if lanes_of_warp == w:
            idx = tuple(coords[w, :, k * vec, d] for d in range(coords.shape[-1]))
            first = np.broadcast_to(addr, addr.shape)[idx] // sector
            on = np.ones(len(first), bool) if mask is None else np.broadcast_to(mask, addr.shape)[idx]
            lo = first[on].min() if on.any() else 0
            lane_sec = [int(f - lo) if o else -1 for f, o in zip(first, on)]
        out.append(Request(w, k, int(c["active"][i]), int(c["bytes"][i]), int(c["sectors"][i]), int(c["ideal"][i]),
                           int(c["lines"][i]), lane_sec))
    return out


def _direction(op: Op) -> str:
    return "load" if "load" in op.name else ("store" if "store" in op.name else "atomic")


def coalescing(site: AccessSite, mod: Module, *, vector_bits: int | None, warp_size: int, backend: str,
               arch: str | int, values: dict[str, Any], grid: list[int] | None) -> Coalescing:
    """The coalescing of one access of the representative program (see the module docstring)."""
    sector, line = memory_granules(backend, arch, _direction(site.op))
    base = dict(sector_bytes=sector, line_bytes=line, warp_size=warp_size, vector_bits=vector_bits)
    if site.pointer is None and site.offsets is None:
        return Coalescing("tma", "a bulk tensor copy (TMA / tensor descriptor): the copy engine moves whole lines, "
                                 "coalesced by construction", **base)
    if not site.shape:
        return Coalescing("uniform", "one element per program: every lane of the warp reads the same address "
                                     "(nothing to coalesce)", uniform=True, **base)
    if site.encoding is None:
        return Coalescing("unknown", "the TTGIR gives this access no layout", **base)
    bases = _layout_bases(site.encoding, mod, site.shape)
    if bases is None:
        return Coalescing("unknown", f"its layout ({site.encoding}) is not one this analysis models", **base)
    coords = _coordinates(bases, len(site.shape))
    scalars = _representative_scalars(values)
    g = tuple((list(grid or []) + [1, 1, 1])[:3])
    addr, mask, ev = _addresses(site, mod, scalars, (0, 0, 0), g, 0)
    if isinstance(addr, _Unknown) and not addr.loaded:
        return Coalescing("unknown", f"the analysis could not follow the address ({addr.origin})", **base)
    if isinstance(addr, _Unknown):
        return _data_dependent(f"the addresses depend on {addr.origin} (a gather)", [addr.origin], site, coords,
                               vector_bits, base)
    addr = np.broadcast_to(addr, site.shape)
    mask_note = None
    if site.mask and (isinstance(mask, _Unknown) or _mask_uses_unknowns(site, mod, scalars, g)):
        mask, mask_note = None, "the mask depends on values the compile cannot know: every lane counted as active"
    elif mask is not None:
        mask = np.broadcast_to(mask, site.shape)
    eb = site.element_bytes
    vec = max(1, (vector_bits or eb * 8) // (eb * 8))
    dedupe = _direction(site.op) == "load" and "isVolatile = true" not in site.op.text
    reqs = _requests(addr, mask, coords, vec, eb, sector, line, lanes_of_warp=0, dedupe=dedupe)
    if not reqs:
        return Coalescing("computed", "every lane is masked off in program 0", **base)
    cz = Coalescing("computed", "", **base)
    cz.instructions_per_warp = max(1, coords.shape[2] // vec)
    cz.requests = [r for r in reqs if r.warp == reqs[0].warp]
    total, ideal = sum(r.sectors for r in reqs), sum(r.ideal_sectors for r in reqs)
    cz.sectors_per_request = total / len(reqs)
    cz.ideal_sectors_per_request = ideal / len(reqs)
    cz.lines_per_request = sum(r.lines for r in reqs) / len(reqs)
    cz.sector_efficiency = ideal / total if total else None
    distinct = np.unique(addr if mask is None else addr[mask])
    cz.uniform = len(distinct) == 1
    first = cz.requests[0]
    a0 = _lane_addresses(addr, coords, vec)
    steps = np.diff(a0)
    if len(steps) and np.all(steps == steps[0]):
        cz.lane_stride_bytes = int(steps[0])
    cz.depends_on = sorted(ev.used)
    if ev.used:
        # what the unknown values do: a second run with other stand-ins tells a shift from a scale
        addr2, _, _ = _addresses(site, mod, scalars, (0, 0, 0), g, _SHIFT_PROBE)
        if isinstance(addr2, _Unknown) or not _same_pattern(addr, np.broadcast_to(addr2, site.shape)):
            return _data_dependent(f"the pattern of the addresses depends on {', '.join(sorted(ev.used))}, which the "
                                   f"compile cannot know", sorted(ev.used), site, coords, vector_bits, base)
        addr3, mask3, _ = _addresses(site, mod, scalars, (0, 0, 0), g, 1)
        mis = _requests(np.broadcast_to(addr3, site.shape), None if mask is None else mask, coords, vec, eb, sector,
                        line, dedupe=dedupe)
        if mis:
            cz.misaligned_sectors_per_request = sum(r.sectors for r in mis) / len(mis)
        cz.assumptions.append(f"{', '.join(sorted(ev.used))} taken as a multiple of {sector} bytes (the compile cannot "
                              f"know it); misaligned, a request touches "
                              f"{_fmt(cz.misaligned_sectors_per_request)} sectors instead of {_fmt(cz.sectors_per_request)}")
    if mask_note:
        cz.assumptions.append(mask_note)
    cz.assumptions.append("pointer arguments start 128-byte aligned (as PyTorch allocates); program 0"
                          + (", the loop's first iteration" if site.op.loop_depth else ""))
    cz.note = _describe(cz, first, vec, eb)
    return cz


def _data_dependent(why: str, depends: list[str], site: AccessSite, coords: np.ndarray, vector_bits: int | None,
                    base: dict[str, Any]) -> Coalescing:
    """An access whose lanes' addresses come from data: the range its requests can take, from
    all of a request's elements in the fewest sectors to each element in a sector of its own."""
    eb = site.element_bytes
    vec = max(1, (vector_bits or eb * 8) // (eb * 8))
    W, L, R = coords.shape[:3]
    K = max(1, R // vec)
    flat = np.ravel_multi_index(tuple(coords[..., d] for d in range(coords.shape[-1])), site.shape)
    rows = flat[:, :, :K * vec].reshape(W, L, K, vec).transpose(0, 2, 1, 3).reshape(W * K, L * vec)
    elements = _distinct(rows, np.ones(rows.shape, bool))
    sector = base["sector_bytes"]
    fewest = float(np.mean(-(-elements * eb // sector)))
    most = float(np.mean(np.minimum(elements, elements * eb)))  # each element in a sector of its own
    cz = Coalescing("data_dependent", f"{why}: each warp request touches between {_fmt(fewest)} and {_fmt(most)} "
                                      f"sectors of {sector} bytes, as the data decides", depends_on=depends, **base)
    cz.sectors_range = (fewest, most)
    cz.ideal_sectors_per_request = fewest
    cz.instructions_per_warp = K
    return cz


def _mask_uses_unknowns(site: AccessSite, mod: Module, scalars: dict[str, int], grid: tuple[int, int, int]) -> bool:
    ev = _Evaluator(mod, scalars, (0, 0, 0), grid, 0)
    ev.value(site.mask or "")
    return bool(ev.used)


def _lane_addresses(addr: np.ndarray, coords: np.ndarray, vec: int) -> np.ndarray:
    """Warp 0's first register of instruction 0, per lane."""
    c = coords[0, :, 0]
    return addr[tuple(c[:, d] for d in range(c.shape[-1]))]


def _same_pattern(a: np.ndarray, b: np.ndarray) -> bool:
    d = (b.astype(np.int64) - a.astype(np.int64)).ravel()
    return bool(np.all(d == d[0])) if d.size else True


def _fmt(x: float | None) -> str:
    if x is None:
        return "?"
    return f"{x:.0f}" if abs(x - round(x)) < 0.05 else f"{x:.1f}"


def _describe(cz: Coalescing, first: Request, vec: int, eb: int) -> str:
    if cz.uniform:
        return "every lane reads the same address (a broadcast): one sector per request, nothing to coalesce"
    eff = cz.sector_efficiency or 0
    s, i = _fmt(cz.sectors_per_request), _fmt(cz.ideal_sectors_per_request)
    per = f"{vec * eb} bytes per lane" if vec > 1 else f"{eb} bytes per lane"
    stride = f", lanes {cz.lane_stride_bytes} bytes apart" if cz.lane_stride_bytes is not None else ""
    if eff >= 0.999:
        return (f"coalesced: each warp request touches {s} sector{'' if s == '1' else 's'} of {cz.sector_bytes} "
                f"bytes, the fewest its bytes need ({per}{stride})")
    return (f"uncoalesced: each warp request touches {s} sectors of {cz.sector_bytes} bytes where {i} would hold "
            f"its bytes ({per}{stride}): {eff * 100:.0f}% of each sector moved is used")


# ---- the whole launch ------------------------------------------------------------------------------------------

def launch_sectors(sites: list[tuple[AccessSite, int | None]], mod: Module, *, backend: str, arch: str | int,
                   values: dict[str, Any], grid: list[int], max_requests: int = 1 << 24) -> tuple[int, int] | None:
    """(sectors, ideal sectors) of `sites` (the TTGIR ops of one source line, each with its vector
    width in bits) summed over every program of `grid` and every iteration of a loop around them:
    the figures Nsight Compute reports as `L2 Theoretical Sectors Global` and its ideal for the line.
    None when not computable: a gather or a value loaded from memory in the address, a TMA copy,
    an unmodelled layout, loops nested two deep, or more than `max_requests` requests."""
    g = tuple((list(grid) + [1, 1, 1])[:3])
    prepared = []
    warps = int(mod.attrs.get("ttg.num-warps", "4") or 4)
    uniform = 0  # requests of one element per program (a scalar load or store): one per warp, one sector
    for site, vector_bits in sites:
        if site.op.loop_depth > 1 or (site.op.loop is not None and site.op.loop.line not in mod.loops):
            return None
        if not site.shape and (site.pointer is not None or site.offsets is not None):
            uniform += 1
            continue
        if site.pointer is None and site.offsets is None or site.encoding is None:
            return None
        if site.op.loop_depth > 1 or (site.op.loop is not None and site.op.loop.line not in mod.loops):
            return None
        bases = _layout_bases(site.encoding, mod, site.shape)
        if bases is None:
            return None
        sector, line = memory_granules(backend, arch, _direction(site.op))
        eb = site.element_bytes
        prepared.append((site, _coordinates(bases, len(site.shape)), max(1, (vector_bits or eb * 8) // (eb * 8)), eb,
                         sector, line))
    scalars = _representative_scalars(values)
    total = ideal = requests = 0
    for z in range(g[2]):
        for y in range(g[1]):
            for x in range(g[0]):
                ev = _Evaluator(mod, scalars, (x, y, z), g, 0)
                for site, _ in sites:
                    if not site.shape and (site.pointer is not None or site.offsets is not None):
                        # a scalar load is issued by every warp; a scalar store or atomic by one thread
                        # of the program (Triton predicates it so), as Nsight Compute counts them
                        per = warps if _direction(site.op) == "load" else 1
                        trips = sum(1 for _ in _iterations(ev, site.op.loop)) * per
                        total, ideal, requests = total + trips, ideal + trips, requests + trips
                for site, coords, vec, eb, sector, line in prepared:
                    for step in _iterations(ev, site.op.loop):
                        addr, mask = _site_values(step, site)
                        if isinstance(addr, _Unknown) or step.used:
                            return None
                        c = _request_counts(np.broadcast_to(addr, site.shape), mask, coords, vec, eb, sector, line,
                                            _direction(site.op) == "load" and "isVolatile = true" not in site.op.text)
                        on = c["active"] > 0
                        total += int(c["sectors"][on].sum())
                        ideal += int(c["ideal"][on].sum())
                        requests += int(on.sum())
                        if requests > max_requests:
                            return None
    return total, ideal


def _site_values(ev: _Evaluator, site: AccessSite) -> tuple[Any, np.ndarray | None]:
    if site.offsets is not None:
        base, offs = ev.value(site.base or ""), ev.value(site.offsets)
        addr = offs if isinstance(offs, _Unknown) or isinstance(base, _Unknown) else base + offs * site.element_bytes
    else:
        addr = ev.value(site.pointer or "")
    mask = ev.value(site.mask) if site.mask else None
    if isinstance(mask, _Unknown):
        return _Unknown("the mask", False), None
    return addr, None if mask is None else np.broadcast_to(mask, site.shape)


def _iterations(ev: _Evaluator, loop: Op | None, limit: int = 1 << 16):
    """The evaluator at each iteration of `loop` (just `ev` outside loops)."""
    if loop is None:
        yield ev
        return
    iv, carried = ev.mod.loops[loop.line]
    lb, ub, step = (ev.value(o) for o in loop.operands[:3])
    if any(isinstance(v, _Unknown) or np.ndim(v) for v in (lb, ub, step)) or int(step) <= 0:
        ev.used["the loop's bounds"] = "the loop's bounds"
        yield ev
        return
    state = {k: ev.value(ev.mod.loop_carried[k][0]) for k in carried if ev.mod.loop_carried.get(k)}
    for i, value in enumerate(range(int(lb), int(ub), int(step))):
        if i >= limit:
            ev.used["a loop of more iterations than modelled"] = "loop"
            return
        cur = ev.at({**state, iv: np.int64(value)})
        yield cur
        state = {k: cur.value(ev.mod.loop_carried[k][1]) if len(ev.mod.loop_carried.get(k, [])) > 1 else state.get(k)
                 for k in carried}
