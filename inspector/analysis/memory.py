"""Memory access: what each `tl.load` / `tl.store` / atomic became, how wide, and why.

`memory_report(rec)` returns:
- `accesses`: one row per memory op of the TTIR (`tt.load`, `tt.store`, `tt.atomic_rmw`,
  `tt.atomic_cas`, `tt.descriptor_load`/`store`, ...), with the PTX / SASS / AMDGCN instructions
  at its source location, their width per thread, a verdict (`vectorised` = 128 bits per thread,
  `partial`, `scalar`, `tma`, `none`) and, for anything narrower than 128 bits, the reasons the
  TTIR and TTGIR show: a base pointer not known to be 16-byte aligned, an integer in the address
  or in the mask not known to be a multiple of 16 (masked tail), a strided index, the layout
  giving each thread fewer than 16 contiguous bytes.
- `instructions`: every memory instruction of the machine stages (global, shared, local,
  cp.async, TMA, ldmatrix/stmatrix, atomics), summarised per source line and kind.
- `spills`: local-memory (spill) instructions per source line (`LDL`/`STL`, `ld.local`/`st.local`,
  `scratch_load`/`scratch_store`), with the bytes each moves per thread.

Machine instructions are matched to a TTIR op by the kernel-file location they share: line and
column where the stage has columns (PTX, AMDGCN), else the line (SASS), and the class expected
of the op (a load matches global loads, cp.async and TMA copies). Two loads on one line are told
apart by column in PTX; in SASS both rows get the line's loads.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ..compile.record import Inspection
from .coalescing import AccessSite, Coalescing, access_site, coalescing
from .context import Context, context
from .instructions import MEMORY_CLASSES, amdgcn_instruction, ptx_instruction, sass_instruction
from .layouts import contiguous_per_thread, parse_params
from .mlir import Module, Op, element_bits, int_constant, parse_module, tensor_type, type_text

# ---- widths of machine memory instructions ----------------------------------------------------------------
# PTX: `ld.global.v4.b32`, `ld.global.L1::evict_last.L2::cache_hint.v4.b32`, `st.shared.v2.b64`, `atom.global.gpu.acq_rel.add.v4.f32`
PTX_VECTOR = re.compile(r"\.v(\d+)(?=\.|$)")
PTX_TYPE = re.compile(r"\.(?:b|u|s|f|bf)(8|16|32|64|128)(x2)?$")
# cp.async's copy size: `cp.async.cg.shared.global [ %r65 + 0 ], [ %rd23 + 0 ], 0x10, %r70;`
PTX_CP_SIZE = re.compile(r"\],\s*(0x[0-9a-fA-F]+|\d+)\s*(?:,|;)")
# ldmatrix / stmatrix: `ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16` (x4: four 8x8 matrices, 32 bits each per thread)
PTX_MATRIX_COUNT = re.compile(r"\.x(\d)\b")
PTX_CACHE_QUALIFIERS = {"ca", "cg", "cs", "lu", "cv", "wb", "wt", "nc", "volatile", "relaxed", "acquire", "release",
                        "weak", "strong", "mmio"}
# SASS: `LDG.E.128`, `LDG.E.EL.128`, `STS.64`, `LDL.LU`, `LDSM.16.MT88.4`, `LDGSTS.E.BYPASS.LTC128B.128`, `ATOMG.E.ADD.F32.FTZ.RN.STRONG.GPU`
SASS_WIDTH = re.compile(r"\.(128|64|U8|S8|U16|S16)(?=\.|$)")
SASS_MATRIX = re.compile(r"^(?:LDSM|STSM)\.\d+\.M(?:T)?\d+\.(\d)")
SASS_CACHE_QUALIFIERS = {"EL", "EF", "LU", "NA", "BYPASS", "LTC128B", "CONSTANT", "STRONG", "SYS", "GPU", "CTA",
                         "EN", "EU", "NC"}
# AMDGCN: `buffer_load_dwordx4`, `global_load_dword`, `ds_read2st64_b64`, `scratch_store_dwordx2`, `global_load_ushort`, `ds_write_b128`
AMD_DWORDS = re.compile(r"_dword(?:x(\d))?$")
AMD_BITS = re.compile(r"_(?:pk_\w+_)?[buif](\d+)$")  # `ds_read_b128`, `buffer_atomic_add_f32`, `..._pk_add_f16`
AMD_SMALL = {"byte": 8, "ubyte": 8, "sbyte": 8, "short": 16, "ushort": 16, "sshort": 16, "short_d16": 16,
             "ubyte_d16": 8, "sbyte_d16": 8, "short_d16_hi": 16, "ubyte_d16_hi": 8}
AMD_CACHE_QUALIFIERS = {"glc", "slc", "nt", "sc0", "sc1", "dlc"}


@dataclass
class MemoryInstruction:
    """One machine memory instruction, attributed to its source lines."""

    stage: str  # "ptx" | "sass" | "amdgcn"
    line: int  # its line in the stage
    source_lines: list[int]  # kernel-file lines (helper line first, then call sites)
    column: int | None  # the innermost kernel-file frame's column (PTX, AMDGCN)
    kind: str  # the instruction class: global_load, shared_store, local_load, tma, async_copy, ...
    opcode: str
    width_bits: int | None  # bits each thread moves per instruction (None for TMA bulk copies)
    vector: int  # elements per instruction (`.v4` -> 4; ldmatrix `.x4` -> 4; 1 otherwise)
    predicated: bool | None  # under a predicate (masked); None where the ISA does not say (AMD exec mask)
    cache: list[str]  # cache / eviction qualifiers as printed (`L1::evict_last`, `cs`, `EL`, `glc`)
    text: str


@dataclass
class MemoryAccess:
    """One memory op of the kernel (a TTIR op) and what the machine stages made of it."""

    line: int  # kernel-file line (the helper's own line for code inlined from a helper)
    column: int
    call_sites: list[int]  # further kernel-file lines in its location chain (inlined helpers' callers)
    op: str  # "tt.load", "tt.store", "tt.atomic_rmw", "tt.descriptor_load", ...
    direction: str  # "load" | "store" | "atomic"
    pointer: str | None  # the kernel argument the address derives from ("x_ptr")
    dtype: str  # element type ("f32")
    element_bits: int | None
    shape: list[int]
    masked: bool
    cache: list[str]  # cache policy / volatile from the TTIR op
    in_loop: bool
    layout: str | None  # the TTGIR encoding of the pointer tensor ("#blocked")
    elements_per_thread: int | None  # contiguous elements per thread the layout (or cp.async contiguity) allows
    lowered_as: list[str]  # distinct opcodes of the main stage's matching instructions
    instructions: dict[str, list[MemoryInstruction]] = field(default_factory=dict)  # stage -> instructions
    widths: dict[int, int] = field(default_factory=dict)  # main stage: bits per thread -> instructions
    width_bits: int | None = None  # the narrowest access width of the main stage
    verdict: str = "none"  # vectorised | partial | scalar | tma | none
    summary: str = ""  # the verdict in words
    reasons: list[str] = field(default_factory=list)  # why it is not 128-bit, as far as the IR tells
    reason_codes: list[str] = field(default_factory=list)  # pointer_alignment, offset_divisibility, ...
    # coalescing (coalescing.py): one warp's request against the memory system's sectors
    vector_bits: int | None = None  # bits per thread per instruction (the narrowest, as width_bits)
    sectors_per_request: float | None = None  # 32-byte sectors (AMD: 64-byte) one warp's request touches
    ideal_sectors_per_request: float | None = None  # the fewest that hold the bytes it uses
    sector_efficiency: float | None = None  # ideal / touched, 0..1 (None: not computed, see coalescing.note)
    uniform: bool = False  # one element per program, or every lane the same address: nothing to improve
    causes: list[str] = field(default_factory=list)  # why it is not ideal, actionable cause first
    coalescing: Coalescing | None = None


@dataclass
class LineMemory:
    """Memory instructions of one kind at one source line of one stage."""

    stage: str
    line: int
    kind: str
    count: int
    widths: dict[int, int]  # bits -> instructions (0: bulk copies with no per-thread width)
    bytes_per_thread: int  # sum over the instructions (static count, not executions)
    opcodes: list[str]
    predicated: int


@dataclass
class MemoryReport:
    """`memory_report(rec)`: accesses (one per TTIR memory op), per-line instruction summary, spills."""

    main_stage: str | None  # the stage verdicts are read from: ptx (NVIDIA) or amdgcn (AMD)
    accesses: list[MemoryAccess] = field(default_factory=list)
    instructions: list[LineMemory] = field(default_factory=list)
    spills: list[LineMemory] = field(default_factory=list)
    spill_bytes: int | None = None  # the compiler's figure: ptxas spill stores, AMD scratch per thread
    unattributed: dict[str, int] = field(default_factory=dict)  # stage -> memory instructions with no source line


def _ptx_details(op: str, text: str, cls: str) -> tuple[int | None, int, list[str]]:
    quals = op.split(".")[1:]
    cache = [q for q in quals if q in PTX_CACHE_QUALIFIERS or q.startswith(("L1::", "L2::"))]
    if cls == "tma":
        return None, 1, cache
    if cls == "async_copy":
        m = PTX_CP_SIZE.search(text)
        size = int(m.group(1), 0) if m else None
        return (size * 8 if size else None), 1, cache
    if op.startswith(("ldmatrix", "stmatrix")):
        m = PTX_MATRIX_COUNT.search(op)
        n = int(m.group(1)) if m else 1
        return 32 * n, n, cache
    vec = 1
    bits = None
    for q in quals:
        if q.startswith("v") and q[1:].isdigit():
            vec = int(q[1:])
        elif (t := PTX_TYPE.match("." + q)) is not None:
            bits = int(t.group(1)) * (2 if t.group(2) else 1)
    return (bits * vec if bits else None), vec, cache


def _sass_details(op: str, cls: str) -> tuple[int | None, int, list[str]]:
    quals = op.split(".")[1:]
    cache = [q for q in quals if q in SASS_CACHE_QUALIFIERS]
    if cls == "tma":
        return None, 1, cache
    if m := SASS_MATRIX.match(op):
        n = int(m.group(1))
        return 32 * n, n, cache
    bits = 32
    for q in quals:
        if q in ("128", "64"):
            bits = int(q)
        elif q in ("U8", "S8"):
            bits = 8
        elif q in ("U16", "S16"):
            bits = 16
    return bits, max(1, bits // 32), cache


def _amd_details(op: str, text: str) -> tuple[int | None, int, list[str]]:
    cache = [w for w in re.split(r"[\s,]+", text) if w in AMD_CACHE_QUALIFIERS]
    base = op
    n = 2 if re.match(r"^ds_(read|write|load|store)2", op) else 1
    if m := AMD_DWORDS.search(base):
        bits = 32 * int(m.group(1) or 1)
        return bits, bits // 32, cache
    if m := AMD_BITS.search(base):
        return int(m.group(1)), n, cache
    for suffix, bits in AMD_SMALL.items():
        if base.endswith("_" + suffix):
            return bits, 1, cache
    return None, 1, cache


def machine_memory(ctx: Context, stage: str) -> list[MemoryInstruction]:
    """Every memory instruction of a machine stage (ptx, sass, amdgcn) with its source lines."""
    key = f"memory:{stage}"
    if key in ctx.memo:
        return ctx.memo[key]
    parse = {"ptx": ptx_instruction, "sass": sass_instruction, "amdgcn": amdgcn_instruction}[stage]
    loc = ctx.stages[stage]
    lines = ctx.lines[stage]
    out: list[MemoryInstruction] = []
    for no in loc.code_lines:
        if loc.classes.get(no) not in MEMORY_CLASSES:
            continue
        ins = parse(lines[no - 1])
        if ins is None:
            continue
        if stage == "ptx":
            width, vec, cache = _ptx_details(ins.opcode, ins.text, ins.cls)
        elif stage == "sass":
            width, vec, cache = _sass_details(ins.opcode, ins.cls)
        else:
            width, vec, cache = _amd_details(ins.opcode, ins.text)
        chains = loc.chains.get(no, ())
        frame = ctx.user_frame(chains[0]) if chains else None
        pred: bool | None = None if stage == "amdgcn" else (ins.predicate is not None and ins.predicate not in
                                                             ("@PT", "@UPT"))
        out.append(MemoryInstruction(stage, no, ctx.line_sources(stage, no), frame[1] if frame and loc.columns else None,
                                     ins.cls, ins.opcode, width, vec, pred, cache, ins.text))
    ctx.memo[key] = out
    return out


# ---- the kernel's memory ops (TTIR) ------------------------------------------------------------------------
_ACCESS_OPS = {
    "tt.load": "load", "tt.store": "store", "tt.atomic_rmw": "atomic", "tt.atomic_cas": "atomic",
    "tt.descriptor_load": "load", "tt.descriptor_store": "store", "tt.descriptor_gather": "load",
    "tt.descriptor_scatter": "store", "tt.descriptor_reduce": "atomic",
}
_EXPECTED = {
    "load": {"global_load", "async_copy", "tma"},
    "store": {"global_store", "tma"},
    "atomic": {"global_atomic", "tma"},
}
# TTGIR ops that carry a TTIR load/store after the pipeliner and TMA lowering rewrote it
_TTGIR_ACCESS_OPS = set(_ACCESS_OPS) | {"ttg.async_copy_global_to_local", "ttng.async_tma_copy_global_to_local",
                                        "ttng.async_tma_copy_local_to_global"} | {
    f"{dialect}.{op}" for dialect in ("amdg", "amdgpu")  # AMD buffer ops: `amdg` in Triton 3.9, `amdgpu` before
    for op in ("buffer_load", "buffer_store", "buffer_load_to_local", "buffer_atomic_rmw", "buffer_atomic_cas")}
# `{contiguity = 8 : i32}` on a TTGIR async copy: the elements each thread copies at once
TTGIR_CONTIGUITY = re.compile(r"contiguity = (\d+)")
# Triton 3.9: `{cachePolicy = #tt.cache_policy<cache_modifier = cs, eviction_policy = evict_normal>}`
TTIR_CACHE_POLICY = re.compile(r"cache_modifier = (\w+), eviction_policy = (\w+)")
# Triton 3.6: `tt.load %x_6, %x_4 evictionPolicy = evict_last : ...`, `tt.store %4, %x_7 cacheModifier = cs : ...`
TTIR_CACHE_36 = re.compile(r"\b(cacheModifier|evictionPolicy) = (\w+)")
def _access_cache(op: Op) -> list[str]:
    out = []
    if m := TTIR_CACHE_POLICY.search(op.text):
        if m.group(1) != "none":
            out.append(f"cache_modifier={m.group(1)}")
        if m.group(2) != "evict_normal":
            out.append(f"eviction_policy={m.group(2)}")
    for m in TTIR_CACHE_36.finditer(op.text):
        name = "cache_modifier" if m.group(1) == "cacheModifier" else "eviction_policy"
        if m.group(2) not in ("none", "evict_normal"):
            out.append(f"{name}={m.group(2)}")
    if "isVolatile = true" in op.text:
        out.append("volatile")
    return out


def _masked(op: Op) -> bool:
    if op.name in ("tt.load",):
        return len(op.operands) >= 2
    if op.name in ("tt.store", "tt.atomic_rmw"):
        return len(op.operands) >= 3
    return False


class _Flow:
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
        seen: set[str] = set()
        stack = [value]
        while stack:
            v = stack.pop()
            if v in seen:
                continue
            seen.add(v)
            if v in self.mod.loop_carried:
                stack.extend(self.mod.loop_carried[v])
                continue
            op = self.mod.defs.get(v)
            if op is None:
                continue
            if op.name == "tt.addptr" and len(op.operands) >= 2:
                stack.append(op.operands[0])
                out.append(op.operands[1])
            elif op.name in ("tt.splat", "tt.broadcast", "tt.expand_dims", "tt.reshape", "ttg.convert_layout",
                             "tt.trans"):
                stack.extend(op.operands)
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
        seen: set[str] = set()
        stack = [value]
        while stack:
            v = stack.pop()
            if v in seen:
                continue
            seen.add(v)
            if v in self.mod.args:
                if not self.mod.args[v].is_pointer:
                    args.add(v)
                continue
            op = self.mod.defs.get(v)
            if op is None and v not in self.mod.loop_carried:
                continue
            if op is not None:
                ops.append(op)
            stack.extend(self.producers(v))
        return args, self.additive_constants(value), ops

    def loads(self, value: str) -> list[Op]:
        """The `tt.load`s whose loaded values reach `value` (an offset read from memory), nearest first."""
        out: list[Op] = []
        seen: set[str] = set()
        stack = [value]
        while stack:
            v = stack.pop(0)
            if v in seen or v in self.mod.args:
                continue
            seen.add(v)
            op = self.mod.defs.get(v)
            if op is not None and op.name == "tt.load":
                out.append(op)
                continue
            if op is None and v not in self.mod.loop_carried:
                continue
            stack.extend(self.producers(v))
        return out

    def additive_constants(self, value: str) -> list[int]:
        """Constants added to (or subtracted from) a value, through additions and reshapes only:
        `offs + 1` gives [1]; the 127 of `(M + 127) // 128` is not additive to the result."""
        c = self.constant(value)
        if c is not None:
            return [c]
        out: list[int] = []
        seen: set[str] = set()
        stack = [value]
        passes = ("arith.addi", "arith.subi", "tt.splat", "tt.broadcast", "tt.expand_dims", "arith.extsi",
                  "arith.extui", "arith.trunci", "tt.reshape", "ttg.convert_layout", "tt.trans", "tt.addptr")
        while stack:
            v = stack.pop()
            if v in seen:
                continue
            seen.add(v)
            op = self.mod.defs.get(v)
            if op is None or op.name not in passes:
                continue
            if op.name in ("arith.addi", "arith.subi"):
                for o in op.operands:
                    c = self.constant(o)
                    if c is not None:
                        out.append(c)
                    else:
                        stack.append(o)
            else:
                stack.extend(op.operands)
        return out

    def unscaled_range(self, value: str) -> bool | None:
        """Whether a `tl.arange` reaches the offset without being multiplied or divided on the way
        (a contiguous index); None when no range is involved (a scalar offset)."""
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
            else:
                res = [walk(x, depth + 1) for x in op.operands]
                r = False if (True in res or False in res) else None
            memo[v] = r
            return r

        return walk(value, 0)


# `{tt.divisibility = dense<16> : tensor<1xi32>}` on an op: what `tl.multiple_of(x, 16)` leaves in the IR
TTIR_PROMISED = re.compile(r"tt\.divisibility = dense<(\d+)>")


def _promised_multiple(op: Op) -> bool:
    m = TTIR_PROMISED.search(op.text)
    return bool(m and int(m.group(1)) % 16 == 0)


def _promised_chain(flow: "_Flow", value: str) -> bool:
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


def _variable(value: str) -> str:
    """The Python name Triton gave an SSA value (`start_3` -> `start`; `17` -> `%17`)."""
    if value.isdigit():
        return f"%{value}"
    return re.sub(r"_\d+$", "", value.split("@")[0].split("#")[0])


def _access_reasons(mod: Module, op: Op, elem_bytes: int | None, per_thread: int | None,
                    values: dict[str, object], lines_of: Any = None) -> tuple[list[str], list[str]]:
    """Reasons an access is narrower than 128 bits, read from the TTIR (and the TTGIR layout)."""
    flow = _Flow(mod)
    reasons: list[str] = []
    codes: list[str] = []
    if not op.operands:
        return reasons, codes
    ptr = op.operands[0]
    bases = flow.base_pointers(ptr)
    for b in bases:
        arg = mod.args[b]
        if not arg.divisibility or arg.divisibility % 16:
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
        arg = mod.args[a]
        if not arg.divisibility or arg.divisibility % 16:
            shown = f" (= {values[a]})" if a in values else ""
            reasons.append(f"the address uses `{a}`{shown}, which is not known to be a multiple of 16, so the "
                           f"compiler cannot prove the accesses of a thread are 16-byte aligned")
            codes.append("offset_divisibility")
    for off in offsets:
        for ld in flow.loads(off):
            if _promised_multiple(ld):  # `tl.multiple_of(tl.load(...), 16)`: the user said so
                continue
            scalar = tensor_type(type_text(ld.text)) is None
            name = _variable(ld.results[0]) if ld.results else "a value"
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
    for off in offsets:
        u = flow.unscaled_range(off)
        contiguous = u if contiguous is None else (contiguous or bool(u))
    if contiguous is False:
        reasons.insert(0, "the index is strided (the `tl.arange` is multiplied or divided before it reaches the "
                       "address), so the elements of a thread are not contiguous in memory")
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
            arg = mod.args[a]
            if not arg.divisibility or arg.divisibility % 16:
                shown = f" (= {values[a]})" if a in values else ""
                reasons.append(f"the mask compares against `{a}`{shown}, which is not known to be a multiple of 16, "
                               f"so a thread's group of elements may be cut by the mask (masked tail)")
                codes.append("mask_divisibility")
        # a bound read from memory (a jagged row's length, `end - start`): no divisibility is known
        # unless the code promises one (`tl.multiple_of(end - start, 16)`)
        bounds = [o for c in mops if c.name == "arith.cmpi" for o in c.operands]
        loaded = [ld for b in bounds if not _promised_chain(flow, b) for ld in flow.loads(b)
                  if not _promised_multiple(ld)]
        if loaded:
            names = ", ".join(dict.fromkeys(f"`{_variable(ld.results[0])}`" for ld in loaded if ld.results))
            where = lines_of(loaded[0]) if lines_of else []
            reasons.append(f"the mask's bound comes from {names}, loaded from memory"
                           + (f" at line {where[0]}" if where else "") + ", not known to be a multiple of 16, so a "
                           f"thread's group of elements may be cut by the mask")
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


def _verdict(instrs: list[MemoryInstruction], elem_bits: int | None) -> tuple[str, str, int | None, dict[int, int]]:
    widths: dict[int, int] = {}
    for i in instrs:
        if i.width_bits is not None:
            widths[i.width_bits] = widths.get(i.width_bits, 0) + 1
    if not instrs:
        return "none", "no machine instruction found at this location", None, widths
    if all(i.kind == "tma" for i in instrs):
        return "tma", "bulk tensor copy (TMA): the copy engine moves the whole tile; no per-thread accesses", None, widths
    if not widths:
        return "none", "no per-thread width could be read", None, widths
    low = min(widths)
    kinds = sorted({i.kind for i in instrs if i.kind != "tma"})
    via = " via cp.async" if "async_copy" in kinds else ""
    if low >= 128:
        return "vectorised", f"128-bit accesses per thread{via} ({_opcodes(instrs)})", low, widths
    if elem_bits and low <= elem_bits and max(widths) <= elem_bits:
        return "scalar", f"one {low}-bit element per access{via} ({_opcodes(instrs)})", low, widths
    if len(widths) > 1:
        spread = ", ".join(f"{n} x {w}-bit" for w, n in sorted(widths.items(), reverse=True))
        return "partial", f"partly vectorised{via}: {spread} ({_opcodes(instrs)})", low, widths
    return "partial", f"partly vectorised: {low}-bit accesses per thread{via} ({_opcodes(instrs)})", low, widths


def _opcodes(instrs: list[MemoryInstruction]) -> str:
    return ", ".join(dict.fromkeys(i.opcode for i in instrs))


def _summarise(instrs: list[MemoryInstruction]) -> list[LineMemory]:
    groups: dict[tuple[str, int, str], list[MemoryInstruction]] = {}
    for i in instrs:
        for ln in i.source_lines[:1]:
            groups.setdefault((i.stage, ln, i.kind), []).append(i)
    out = []
    for (stage, ln, kind), items in sorted(groups.items(), key=lambda kv: (kv[0][1], kv[0][0], kv[0][2])):
        widths: dict[int, int] = {}
        for i in items:
            widths[i.width_bits or 0] = widths.get(i.width_bits or 0, 0) + 1
        out.append(LineMemory(stage, ln, kind, len(items), dict(sorted(widths.items())),
                              sum((i.width_bits or 0) // 8 for i in items), list(dict.fromkeys(i.opcode for i in items)),
                              sum(1 for i in items if i.predicated)))
    return out


# An async copy's destination: `-> <32x128xf32, #shared1, #smem, mutable>`
TTGIR_COPY_DEST = re.compile(r"->\s*(?:!ttg\.memdesc)?<[^<>]*?,\s*(#[\w]+)\s*,\s*#smem")


@dataclass
class _TtgirAccess:
    layout: str | None = None  # encoding of the pointer / data tensor
    per_thread: int | None = None  # contiguous elements per thread
    shared_note: str | None = None  # why the copy's shared-memory destination splits it, if it does
    site: AccessSite | None = None  # the op's pointer, mask and layout, for coalescing


def _shared_destination_note(mod: Module, op: Op, register_layout: str | None) -> str | None:
    """For an async copy into shared memory: a destination layout that is not contiguous along the
    same dimension as the data (a transposed nvmma_shared, a swizzle of another order)."""
    m = TTGIR_COPY_DEST.search(op.text)
    if not m or m.group(1) not in mod.layouts:
        return None
    kind, body = mod.layouts[m.group(1)]
    params = parse_params(body)
    kind = kind.split(".")[-1]
    if kind == "nvmma_shared" and params.get("transposed") is True:
        return (f"the copy writes into shared memory laid out for the tensor cores, transposed ({m.group(1)} = "
                f"{kind}, transposed = true): contiguous along the other dimension, so each element is copied on "
                f"its own")
    reg = mod.layouts.get(register_layout or "")
    if kind.endswith("shared") and "order" in params and reg is not None:
        reg_order = parse_params(reg[1]).get("order")
        if isinstance(reg_order, list) and reg_order and params["order"] and params["order"][0] != reg_order[0]:
            return (f"the copy's shared-memory layout ({m.group(1)}, order {params['order']}) is contiguous along "
                    f"another dimension than the data (order {reg_order}), so each element is copied on its own")
    return None


def _ttgir_access_info(ctx: Context, rec: Inspection) -> dict[tuple[int, int], _TtgirAccess]:
    """(line, column) -> layout facts of the TTGIR memory ops at that source location."""
    if "ttgir" not in rec.stages or "ttgir" not in ctx.stages:
        return {}
    mod = _module(ctx, rec, "ttgir")
    loc = ctx.stages["ttgir"]
    out: dict[tuple[int, int], _TtgirAccess] = {}
    for op in mod.ops:
        if op.name not in _TTGIR_ACCESS_OPS:
            continue
        chains = loc.chains.get(op.line)
        frame = ctx.user_frame(chains[0]) if chains else None
        if frame is None:
            continue
        info = _TtgirAccess()
        if m := TTGIR_CONTIGUITY.search(op.text):
            info.per_thread = int(m.group(1))
        t = tensor_type(type_text(op.text) or op.text)
        if t and t[2]:
            info.layout = t[2]
            if info.per_thread is None and info.layout in mod.layouts:
                kind, params = mod.layouts[info.layout]
                info.per_thread = contiguous_per_thread(kind.split(".")[-1], parse_params(params))
        if op.name.endswith("_to_local"):
            info.shared_note = _shared_destination_note(mod, op, info.layout)
        info.site = access_site(op)
        prev = out.get(frame)
        if prev is None or (prev.per_thread is None and info.per_thread is not None):
            out[frame] = info
    return out


def _module(ctx: Context, rec: Inspection, stage: str) -> Module:
    key = f"module:{stage}"
    if key not in ctx.memo:
        ctx.memo[key] = parse_module(rec.stages[stage])
    return ctx.memo[key]


def memory_report(rec: Inspection) -> MemoryReport:
    """The memory-access analysis of `rec` (see the module docstring)."""
    ctx = context(rec)
    if "memory_report" in ctx.memo:
        return ctx.memo["memory_report"]
    machine = [s for s in ("ptx", "sass", "amdgcn") if s in ctx.stages]
    main = "ptx" if "ptx" in machine else ("amdgcn" if "amdgcn" in machine else ("sass" if "sass" in machine else None))
    report = MemoryReport(main_stage=main)
    by_stage = {s: machine_memory(ctx, s) for s in machine}
    for s, instrs in by_stage.items():
        report.instructions += _summarise(instrs)
        report.spills += _summarise([i for i in instrs if i.kind in ("local_load", "local_store")])
        missing = sum(1 for i in instrs if not i.source_lines)
        if missing:
            report.unattributed[s] = missing
    r = rec.resources
    report.spill_bytes = r.spill_store_bytes if rec.backend == "cuda" else r.scratch_bytes
    if "ttir" in rec.stages and "ttir" in ctx.stages:
        report.accesses = _accesses(ctx, rec, by_stage, main)
    ctx.memo["memory_report"] = report
    return report


def _accesses(ctx: Context, rec: Inspection, by_stage: dict[str, list[MemoryInstruction]],
              main: str | None) -> list[MemoryAccess]:
    mod = _module(ctx, rec, "ttir")
    loc = ctx.stages["ttir"]
    ttgir = _ttgir_access_info(ctx, rec)
    values = {p.name: p.value for p in rec.parameters}
    rows: list[tuple[MemoryAccess, tuple[int, int], Op]] = []
    for op in mod.ops:
        direction = _ACCESS_OPS.get(op.name)
        if direction is None:
            continue
        chains = loc.chains.get(op.line)
        lines = ctx.source_lines(chains[0]) if chains else []
        frame = ctx.user_frame(chains[0]) if chains else None
        if frame is None:
            continue
        tt = tensor_type(type_text(op.text) or op.text)
        shape, elem = (tt[0], tt[1]) if tt else ([], "")
        if not tt:
            pm = re.search(r"!tt\.ptr<(\w+)>", op.text)
            elem = pm.group(1) if pm else ""
        bases = _Flow(mod).base_pointers(op.operands[0]) if op.operands else []
        if op.name.startswith("tt.descriptor") and op.operands:
            bases = _descriptor_base(mod, op.operands[0])
        facts = ttgir.get(frame, _TtgirAccess())
        enc, per_thread = facts.layout, facts.per_thread
        acc = MemoryAccess(
            line=frame[0], column=frame[1], call_sites=lines[1:], op=op.name, direction=direction,
            pointer=bases[0] if bases else None, dtype=elem, element_bits=element_bits(elem) if elem else None,
            shape=shape, masked=_masked(op), cache=_access_cache(op), in_loop=op.loop_depth > 0, layout=enc,
            elements_per_thread=per_thread, lowered_as=[],
        )
        rows.append((acc, frame, op))
    exact_claimed: dict[str, set[int]] = {s: set() for s in by_stage}
    for acc, frame, op in rows:
        for stage, instrs in by_stage.items():
            want = _EXPECTED[acc.direction]
            if stage == "sass" or not ctx.stages[stage].columns:
                found = [i for i in instrs if i.kind in want and i.source_lines[:1] == [frame[0]]]
            else:
                found = [i for i in instrs if i.kind in want and i.column == frame[1] and i.source_lines[:1] == [frame[0]]]
                exact_claimed[stage].update(i.line for i in found)
            acc.instructions[stage] = found
    # a stage line whose column did not match (an op moved by a pass): attribute by line and direction
    for acc, frame, op in rows:
        for stage, instrs in by_stage.items():
            if acc.instructions.get(stage) or stage == "sass":
                continue
            want = _EXPECTED[acc.direction]
            acc.instructions[stage] = [i for i in instrs if i.kind in want and i.source_lines[:1] == [frame[0]]
                                       and i.line not in exact_claimed[stage]]
    out = []
    ttir_loc = ctx.stages["ttir"]

    def lines_of(o: Op) -> list[int]:
        ch = ttir_loc.chains.get(o.line)
        return ctx.source_lines(ch[0]) if ch else []

    ttgir_mod = _module(ctx, rec, "ttgir") if "ttgir" in rec.stages else None
    for acc, frame, op in rows:
        instrs = acc.instructions.get(main or "", [])
        acc.lowered_as = list(dict.fromkeys(i.opcode for i in instrs))
        acc.verdict, acc.summary, acc.width_bits, acc.widths = _verdict(instrs, acc.element_bits)
        acc.vector_bits = acc.width_bits
        site = ttgir.get(frame, _TtgirAccess()).site
        if site is not None and ttgir_mod is not None:
            try:
                acc.coalescing = coalescing(site, ttgir_mod, vector_bits=acc.width_bits, warp_size=rec.warp_size,
                                            backend=rec.backend, arch=rec.arch, values=values, grid=rec.grid)
            except Exception as e:  # noqa: BLE001 - IR this model does not know must not cost the rest
                acc.coalescing = Coalescing("unknown", f"the coalescing analysis failed here ({type(e).__name__}: "
                                                       f"{e})")
            acc.sectors_per_request = acc.coalescing.sectors_per_request
            acc.ideal_sectors_per_request = acc.coalescing.ideal_sectors_per_request
            acc.sector_efficiency = acc.coalescing.sector_efficiency
            acc.uniform = acc.coalescing.uniform or acc.coalescing.status == "uniform"
        if acc.verdict in ("partial", "scalar") and not acc.uniform:
            eb = acc.element_bits // 8 if acc.element_bits else None
            acc.reasons, acc.reason_codes = _access_reasons(mod, op, eb, acc.elements_per_thread, values, lines_of)
            note = ttgir.get(frame, _TtgirAccess()).shared_note
            if note and any(i.kind == "async_copy" for i in instrs):
                acc.reasons.insert(0, note)
                acc.reason_codes.insert(0, "shared_layout")
                if acc.reason_codes[1:] == ["unknown"]:
                    del acc.reasons[1:], acc.reason_codes[1:]
            if not acc.reasons:
                acc.reasons = [("the IR does not show why: the compiler could not prove the accesses contiguous and "
                               "aligned (see the TTGIR layout and the pointer's origin)")]
                acc.reason_codes = ["unknown"]
        acc.causes = _causes(acc)
        out.append(acc)
    return out


def _causes(acc: MemoryAccess) -> list[str]:
    """Why the access is not ideal, as one chain read from the IR, the actionable cause first:
    the cause in the address, what the compiler did because of it (the layout), what it cost."""
    if acc.uniform:
        return []
    out = [r for r, c in zip(acc.reasons, acc.reason_codes) if c != "unknown" or len(acc.reasons) == 1]
    cz = acc.coalescing
    if cz is not None and cz.sector_efficiency is not None and cz.sector_efficiency < 0.999:
        held = ""
        eb = (acc.element_bits or 8) // 8
        per_ins = max(1, (acc.width_bits or acc.element_bits or 8) // (acc.element_bits or 8))
        if acc.elements_per_thread and acc.elements_per_thread > per_ins:
            held = (f" (each thread holds {acc.elements_per_thread} contiguous elements but moves {per_ins} per "
                    f"instruction)")
        apart = f"one instruction's lanes are {cz.lane_stride_bytes} bytes apart{held}, so " \
            if cz.lane_stride_bytes and cz.lane_stride_bytes > per_ins * eb else ""
        out.append(f"{apart}each warp request touches {_n(cz.sectors_per_request)} sectors of {cz.sector_bytes} bytes "
                   f"where {_n(cz.ideal_sectors_per_request)} would hold its bytes "
                   f"({cz.sector_efficiency * 100:.0f}% of what it moves is used)")
    return out


def _n(x: float | None) -> str:
    return "?" if x is None else (f"{x:.0f}" if abs(x - round(x)) < 0.05 else f"{x:.1f}")


def _descriptor_base(mod: Module, desc: str) -> list[str]:
    """The pointer argument a tensor descriptor was made from (`tt.make_tensor_descriptor %a_ptr, ...`)."""
    seen: set[str] = set()
    stack = [desc]
    while stack:
        v = stack.pop()
        if v in seen:
            continue
        seen.add(v)
        if v in mod.args:
            return [v]
        op = mod.defs.get(v)
        if op is None:
            continue
        if op.name == "tt.make_tensor_descriptor" and op.operands:
            return [op.operands[0]] if op.operands[0] in mod.args else []
        stack.extend(mod.loop_carried.get(v, op.operands))
    return []


def launch_line_sectors(rec: Inspection) -> dict[int, tuple[int, int] | None]:
    """Per kernel-file line with global memory ops: the (sectors, ideal sectors) its requests touch
    over the whole recorded launch (every program of `rec.grid`, every loop iteration), as Nsight
    Compute's `L2 Theoretical Sectors Global` (and its ideal) counts them; None for a line this
    cannot compute (coalescing.launch_sectors says when). Slow for big grids: for checking the
    model against a measurement (benchmarks/coalescing_fidelity.py), not for every inspection."""
    from .coalescing import launch_sectors

    ctx = context(rec)
    if "ttgir" not in rec.stages or "ttgir" not in ctx.stages or not rec.grid:
        return {}
    mod = _module(ctx, rec, "ttgir")
    loc = ctx.stages["ttgir"]
    width = {(a.line, a.column): a.width_bits for a in memory_report(rec).accesses}
    by_line: dict[int, list[tuple[AccessSite, int | None]]] = {}
    for op in mod.ops:
        if op.name not in _TTGIR_ACCESS_OPS:
            continue
        chains = loc.chains.get(op.line)
        frame = ctx.user_frame(chains[0]) if chains else None
        site = access_site(op) if frame else None
        if frame is None or site is None:
            continue
        by_line.setdefault(frame[0], []).append((site, width.get(frame)))
    values = {p.name: p.value for p in rec.parameters}
    return {line: launch_sectors(sites, mod, backend=rec.backend, arch=rec.arch, values=values, grid=rec.grid)
            for line, sites in sorted(by_line.items())}
