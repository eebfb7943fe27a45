"""The memory instructions of the machine stages (PTX, SASS, AMDGCN): what each one moves per
thread, with its cache qualifiers, attributed to its source lines; and their summary per source
line and kind (`machine_memory`, `summarise`). memory.py matches them to the kernel's memory ops.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .context import Context
from .instructions import MEMORY_CLASSES, amdgcn_instruction, ptx_instruction, sass_instruction

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


def summarise(instrs: list[MemoryInstruction]) -> list[LineMemory]:
    """Per source line, stage and kind: how many instructions, their widths and bytes per thread."""
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


def opcodes(instrs: list[MemoryInstruction]) -> str:
    return ", ".join(dict.fromkeys(i.opcode for i in instrs))
