"""TTGIR layouts in words, and the layout conversions the compiler had to insert.

A TTGIR tensor type names an encoding (`tensor<1024xf32, #blocked>`): how its elements are
spread over the registers of threads, warps and CTAs, or over shared memory. `layout_report(rec)`
explains every encoding the module defines (`#blocked = #ttg.blocked<{...}>`) and the inline ones
its types use (`#ttg.dot_op<{...}>`, `#ttg.slice<{...}>`), and lists each `ttg.convert_layout`:
a shuffle of a tensor between two layouts, with how the machine code did it at that source
location (through shared memory, warp shuffles, or registers only) and whether it sits in a loop.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ..record import Inspection
from .context import context
from .locations import stage_lines
from .mlir import MLIR_TENSOR, element_bits, parse_module

# `#blocked = #ttg.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>`
LAYOUT_DEF = re.compile(r"^(#[\w.]+)\s*=\s*#(\w+)\.(\w+)<(.*)>\s*$")
# A list or scalar parameter: `sizePerThread = [4]`, `register = [[0, 1], [0, 2]]`, `isTransposed = true`
LAYOUT_PARAM = re.compile(r"(\w+)\s*=\s*(\[(?:[^\[\]]|\[[^\]]*\])*\]|#[\w.]+|[\w.]+)")
# Inline encodings inside a type: `#ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 2}>`, `#ttg.slice<{dim = 1, parent = #blocked}>`
INLINE_LAYOUT = re.compile(r"#(ttg|ttng)\.(dot_op|slice)<\{([^{}]*)\}>")
# `%acc_130 = ttg.convert_layout %acc_129 : tensor<128x64xf16, #mma> -> tensor<128x64xf16, #ttg.dot_op<{...}>>`
CONVERT_TYPES = re.compile(r":\s*(tensor<.*?>)\s*->\s*(tensor<.*>)")

_DTYPE_NAMES = {"f32": "fp32", "f16": "fp16", "bf16": "bf16", "f64": "fp64", "i32": "int32", "i64": "int64",
                "i16": "int16", "i8": "int8", "i1": "int1", "f8E4M3FN": "fp8e4m3", "f8E5M2": "fp8e5m2"}


@dataclass
class Layout:
    """One encoding of the TTGIR, explained."""

    name: str  # "#blocked", or the inline text for dot_op / slice encodings
    kind: str  # "blocked", "nvidia_mma", "amd_mfma", "linear", "dot_op", "slice", "nvmma_shared", ...
    params: dict[str, Any]
    definition: str  # as printed
    explanation: str  # in words
    contiguous_per_thread: int | None  # elements a thread holds contiguously along the fastest dimension
    example_type: str | None  # a tensor type that uses it, for the figures in the explanation
    lines: list[int] = field(default_factory=list)  # TTGIR lines using it
    source_lines: list[int] = field(default_factory=list)


@dataclass
class LayoutConversion:
    """One `ttg.convert_layout`."""

    line: int  # TTGIR line
    source_lines: list[int]
    src: str  # source encoding
    dst: str  # destination encoding
    shape: list[int]
    dtype: str
    in_loop: bool
    lowering: str  # "shared memory" | "warp shuffles" | "registers" | "unknown"
    evidence: str  # the machine instructions at its location that say so


@dataclass
class LayoutReport:
    """`layout_report(rec)`: the layouts, and the conversions between them."""

    layouts: list[Layout] = field(default_factory=list)
    conversions: list[LayoutConversion] = field(default_factory=list)
    through_shared: int = 0  # conversions lowered through shared memory
    in_loops: int = 0  # conversions inside a loop
    num_warps: int | None = None
    threads_per_warp: int | None = None


def _value(v: str) -> Any:
    v = v.strip()
    if v.startswith("["):
        inner = v[1:-1].strip()
        if inner.startswith("["):
            return [[int(x) for x in g.split(",") if x.strip()] for g in re.findall(r"\[([^\]]*)\]", inner)]
        return [int(x) for x in inner.split(",") if x.strip()]
    if v in ("true", "false"):
        return v == "true"
    if re.fullmatch(r"-?\d+", v):
        return int(v)
    return v


def parse_params(text: str) -> dict[str, Any]:
    """The parameters of a layout attribute body (`{sizePerThread = [4], ...}`)."""
    return {m.group(1): _value(m.group(2)) for m in LAYOUT_PARAM.finditer(text)}


def contiguous_per_thread(kind: str, params: dict[str, Any]) -> int | None:
    """Elements one thread holds contiguously along the fastest-varying dimension, where the
    encoding says so (blocked: sizePerThread along order[0]; linear: leading register bases that
    step 1, 2, 4, ... along the last dimension; NVIDIA mma: pairs; AMD MFMA: 4 along N when
    transposed)."""
    if kind == "blocked":
        spt, order = params.get("sizePerThread"), params.get("order")
        if isinstance(spt, list) and isinstance(order, list) and order:
            return spt[order[0]]
    if kind == "linear":
        regs = params.get("register")
        if isinstance(regs, list):
            n = 1
            for b in regs:
                if not b:
                    break
                unit = [0] * (len(b) - 1) + [n]
                if b == unit:
                    n *= 2
                else:
                    break
            return n
    if kind == "nvidia_mma":
        return 2
    if kind == "amd_mfma":
        return 4 if params.get("isTransposed") else 1
    return None


def _dims(v: list[int]) -> str:
    return " x ".join(str(x) for x in v)


# The layouts whose explanation takes none of their parameters.
_FIXED_EXPLANATIONS = {
    "padded_shared": "shared memory with padding after each row, so that threads of a warp hit different banks.",
    "shared_linear": "shared memory in a general linear layout.",
    "shared_memory": "the shared-memory address space (where local_alloc buffers live).",
    "tensor_memory": "Blackwell tensor memory (TMEM), where tcgen05 accumulates.",
    "tensor_memory_encoding": "Blackwell tensor memory (TMEM), where tcgen05 accumulates.",
}


def _explain(kind: str, p: dict[str, Any], example: tuple[list[int], str] | None, layouts: dict[str, str]) -> str:
    shape, elem = example if example else ([], "")
    dname = _DTYPE_NAMES.get(elem, elem)
    ebits = element_bits(elem) if elem else None
    if kind == "blocked":
        spt, tpw, wpc, order = (p.get(k, []) for k in ("sizePerThread", "threadsPerWarp", "warpsPerCTA", "order"))
        if not (spt and tpw and wpc and order):
            return "blocked layout"
        fast = order[0]
        k = spt[fast]
        size = f" = {k * ebits // 8} bytes" if ebits else ""
        what = f"{k} contiguous {dname or 'elements'}{size}" if k > 1 else f"1 {dname or 'element'} at a time"
        per_cta = [s * t * w for s, t, w in zip(spt, tpw, wpc)]
        text = (f"each thread holds {what} along dim {fast} (sizePerThread [{', '.join(map(str, spt))}]); "
                f"a warp's threads are arranged {_dims(tpw)}, the CTA's warps {_dims(wpc)}; "
                f"dim {fast} varies fastest (order {order}). One layout tile covers {_dims(per_cta)} elements")
        if shape and len(shape) == len(per_cta):
            reps = 1
            for s, c in zip(shape, per_cta):
                reps *= max(1, s // c) if c else 1
            text += (f"; the {_dims(shape)} tensor repeats it {reps} time{'s' if reps != 1 else ''}, so each thread "
                     f"holds {reps * _prod(spt)} elements" if reps >= 1 else "")
            if any(c > s for s, c in zip(shape, per_cta)):
                text += " (the tile is larger than the tensor: some threads hold copies of the same elements)"
        if k * (ebits or 0) // 8 >= 16:
            text += ". Enough for 128-bit loads and stores"
        elif ebits:
            text += f". At most {k * ebits}-bit loads and stores per thread"
        return text + "."
    if kind == "nvidia_mma":
        v = p.get("versionMajor")
        inst = p.get("instrShape", [])
        wpc = p.get("warpsPerCTA", [])
        if v == 3:
            shape = f"m{4 * inst[0]}n{inst[1]}k{inst[2]}" if len(inst) == 3 else str(inst)
            return (f"Hopper wgmma accumulator: each warpgroup (4 warps) computes a {shape} tile per instruction "
                    f"(instrShape {inst} per warp); warps tiled {_dims(wpc)}; each thread holds pairs of adjacent "
                    f"elements of the result. The dot runs on tensor cores (wgmma).")
        if v == 5:
            return "Blackwell tcgen05 accumulator in tensor memory."
        return (f"mma.sync accumulator (version {v}): each warp computes {_dims(inst)} tiles per instruction; warps "
                f"tiled {_dims(wpc)}; each thread holds pairs of adjacent elements. The dot runs on tensor cores "
                f"(mma.sync).")
    if kind == "amd_mfma":
        inst = p.get("instrShape", [])
        return (f"AMD MFMA (matrix core) accumulator, version {p.get('version')}: {_dims(inst)} per instruction, "
                f"waves tiled {_dims(p.get('warpsPerCTA', []))}; each thread holds 4 consecutive elements along "
                f"{'N' if p.get('isTransposed') else 'M'}.")
    if kind == "amd_wmma":
        return f"AMD WMMA accumulator (version {p.get('version')}), waves tiled {_dims(p.get('warpsPerCTA', []))}."
    if kind == "dot_op":
        parent = p.get("parent", "")
        which = "A (left)" if p.get("opIdx") == 0 else "B (right)"
        kw = p.get("kWidth")
        src = layouts.get(parent, "")
        engine = "tensor cores" if "mma" in src or "mma" in parent else "FMA units"
        return (f"operand {which} of a dot whose result is {parent}, laid out for the {engine}"
                + (f"; each thread holds {kw} consecutive elements along K" if kw else "") + ".")
    if kind == "slice":
        return (f"the layout {p.get('parent')} with dimension {p.get('dim')} removed: the shape of a reduction "
                f"along that dimension (or of a tensor broadcast back into it).")
    if kind == "linear":
        regs, lanes, warps = p.get("register", []), p.get("lane", []), p.get("warp", [])
        c = contiguous_per_thread("linear", p) or 1
        return (f"a linear layout: {2 ** len(regs)} elements per thread, {2 ** len(lanes)} lanes, {2 ** len(warps)} "
                f"warps; each thread holds {c} contiguous element{'s' if c > 1 else ''} along the last dimension"
                + (f" ({c * ebits // 8} bytes)" if ebits else "") + ".")
    if kind == "nvmma_shared":
        return (f"shared memory laid out for the tensor cores and TMA: {p.get('swizzlingByteWidth')}-byte swizzle, "
                f"{p.get('elementBitWidth')}-bit elements" + (", transposed" if p.get("transposed") else "") + ".")
    if kind in ("swizzled_shared", "amd_rotating_shared"):
        if p.get("maxPhase") == 1:
            return "shared memory without swizzling (row after row)."
        return (f"shared memory with an XOR swizzle ({p.get('vec')} elements per vector, perPhase {p.get('perPhase')},"
                f" maxPhase {p.get('maxPhase')}) so that threads of a warp hit different banks"
                + (", rotating per block (AMD)" if kind == "amd_rotating_shared" else "") + ".")
    return _FIXED_EXPLANATIONS.get(kind, f"{kind} layout.")


def _prod(v: list[int]) -> int:
    out = 1
    for x in v:
        out *= x
    return out


def _conversion_lowering(rec: Inspection, ctx, line: int) -> tuple[str, str]:
    """How the machine code at a conversion's source location moved the data."""
    stage = "ptx" if "ptx" in ctx.stages else ("amdgcn" if "amdgcn" in ctx.stages else None)
    if stage is None or "ttgir" not in ctx.stages:
        return "unknown", ""
    chains = ctx.stages["ttgir"].chains.get(line)
    if not chains:
        return "unknown", "the conversion has no source location"
    frame = ctx.user_frame(chains[0])
    if frame is None:
        return "unknown", ""
    loc = ctx.stages[stage]
    counts: dict[str, int] = {}
    for no, cls in loc.classes.items():
        if cls not in ("shared_store", "shared_load", "shuffle", "barrier"):
            continue
        c = loc.chains.get(no)
        if c and ctx.user_frame(c[0]) == frame:
            op = ctx.lines[stage][no - 1].strip().split()[0]
            if op.startswith("@"):
                op = ctx.lines[stage][no - 1].strip().split()[1]
            key = op.split(".")[0] if stage == "ptx" else op
            counts[f"{cls}:{key}"] = counts.get(f"{cls}:{key}", 0) + 1
    shared = {k: v for k, v in counts.items() if k.startswith(("shared_store", "shared_load"))}
    shuffles = {k: v for k, v in counts.items() if k.startswith("shuffle")}
    evidence = ", ".join(f"{v} x {k.split(':', 1)[1]}" for k, v in sorted(counts.items()))
    if shared:
        return "shared memory", f"{stage} at line {frame[0]}:{frame[1]}: {evidence}"
    if shuffles:
        return "warp shuffles", f"{stage} at line {frame[0]}:{frame[1]}: {evidence}"
    return "registers", f"no shared-memory or shuffle instructions in the {stage} at line {frame[0]}:{frame[1]}"


def layout_report(rec: Inspection) -> LayoutReport:
    """Layouts explained and layout conversions counted, from the TTGIR (empty without one)."""
    ctx = context(rec)
    if "layout_report" in ctx.memo:
        return ctx.memo["layout_report"]
    report = LayoutReport()
    text = rec.stages.get("ttgir")
    if not text:
        ctx.memo["layout_report"] = report
        return report
    mod = parse_module(text)
    nw = mod.attrs.get("ttg.num-warps")
    tpw = mod.attrs.get("ttg.threads-per-warp")
    report.num_warps = int(nw) if nw and nw.isdigit() else None
    report.threads_per_warp = int(tpw) if tpw and tpw.isdigit() else None
    lines = stage_lines(text)
    defs: dict[str, tuple[str, str, str]] = {}
    for line in lines:
        if line.startswith("#") and not line.startswith("#loc") and (m := LAYOUT_DEF.match(line.strip())):
            defs[m.group(1)] = (m.group(3), m.group(4), line.strip())
    kinds = {name: kind for name, (kind, _, _) in defs.items()}
    uses: dict[str, list[int]] = {name: [] for name in defs}
    examples: dict[str, tuple[list[int], str]] = {}
    example_rank: dict[str, int] = {}
    inline: dict[str, tuple[str, str]] = {}
    loc = ctx.stages.get("ttgir")
    for no, line in enumerate(lines, 1):
        if line.startswith("#") or "#" not in line:
            continue
        for m in MLIR_TENSOR.finditer(line):
            enc = m.group(4)
            if not enc:
                continue
            shape = [int(d) for d in m.group(1).split("x") if d]
            elem = m.group(3) or m.group(2)
            base = enc.split("<")[0]
            if base in uses:
                if not uses[base] or uses[base][-1] != no:
                    uses[base].append(no)
                # what loads and stores move tells most: a pointer tensor's element type, then data
                rank = 2 if m.group(3) else (1 if not elem.startswith("i") else 0)
                if rank > example_rank.get(base, -1):
                    examples[base] = (shape, elem)
                    example_rank[base] = rank
        for m in INLINE_LAYOUT.finditer(line):
            inline.setdefault(m.group(0), (m.group(2), m.group(3)))
            uses.setdefault(m.group(0), [])
            if not uses[m.group(0)] or uses[m.group(0)][-1] != no:
                uses[m.group(0)].append(no)
        if "!ttg.memdesc<" in line:
            for name in re.findall(r"!ttg\.memdesc<[^>]*?(#[\w]+)", line):
                if name in uses and (not uses[name] or uses[name][-1] != no):
                    uses[name].append(no)

    def sources(nos: list[int]) -> list[int]:
        out: list[int] = []
        for n in nos:
            for s in ctx.line_sources("ttgir", n) if loc else []:
                if s not in out:
                    out.append(s)
        return sorted(out)

    for name, (kind, body, definition) in defs.items():
        params = parse_params(body)
        report.layouts.append(Layout(name, kind, params, definition, _explain(kind, params, examples.get(name), kinds),
                                     contiguous_per_thread(kind, params), _type_text(examples.get(name)),
                                     uses.get(name, []), sources(uses.get(name, []))))
    for name, (kind, body) in inline.items():
        params = parse_params(body)
        report.layouts.append(Layout(name, kind, params, name, _explain(kind, params, None, kinds),
                                     contiguous_per_thread(kind, params), None, uses.get(name, []),
                                     sources(uses.get(name, []))))
    for op in mod.ops:
        if op.name != "ttg.convert_layout":
            continue
        m = CONVERT_TYPES.search(op.text)
        src = dst = ""
        shape: list[int] = []
        dtype = ""
        if m:
            s_t = MLIR_TENSOR.search(m.group(1))
            d_t = MLIR_TENSOR.search(m.group(2))
            if s_t:
                src = s_t.group(4) or ""
                shape = [int(d) for d in s_t.group(1).split("x") if d]
                dtype = s_t.group(3) or s_t.group(2)
            if d_t:
                dst = d_t.group(4) or ""
        lowering, evidence = _conversion_lowering(rec, ctx, op.line)
        conv = LayoutConversion(op.line, ctx.line_sources("ttgir", op.line) if loc else [], src, dst, shape, dtype,
                                op.loop_depth > 0, lowering, evidence)
        report.conversions.append(conv)
    report.through_shared = sum(1 for c in report.conversions if c.lowering == "shared memory")
    report.in_loops = sum(1 for c in report.conversions if c.in_loop)
    ctx.memo["layout_report"] = report
    return report


def _type_text(example: tuple[list[int], str] | None) -> str | None:
    if not example:
        return None
    shape, elem = example
    return f"tensor<{'x'.join(map(str, shape))}x{elem}>"
