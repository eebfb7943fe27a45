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
from typing import Callable

from .. import launch_data
from ..record import Inspection
from .access_causes import Flow, access_reasons
from .address_values import AccessSite, Memory, access_site
from .coalescing import Coalescing, coalescing, launch_sectors_by_line
from .context import Context, context
from .data_inputs import data_inputs
from .layouts import contiguous_per_thread, parse_params
from .machine_memory import LineMemory, MemoryInstruction, machine_memory, opcodes, summarise
from .shared_memory import SharedAccess, shared_report
from .mlir import Module, Op, Walk, element_bits, parse_module, tensor_type, type_text


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
    ttir_line: int | None = None  # the line of its op in the TTIR stage (the analyses of `fact_loss` start there)
    sites_hintable: bool = False  # a hint could lift its width (set by the advisor from `hint_sites`)
    # the tensors whose contents decide its address, mask or loop bounds (data_inputs.py)
    data_inputs: list[str] = field(default_factory=list)
    data_carried: bool = False  # ... and their contents were the launch's own (a capture carried them)


@dataclass
class MemoryReport:
    """`memory_report(rec)`: accesses (one per TTIR memory op), per-line instruction summary, spills."""

    main_stage: str | None  # the stage verdicts are read from: ptx (NVIDIA) or amdgcn (AMD)
    accesses: list[MemoryAccess] = field(default_factory=list)
    instructions: list[LineMemory] = field(default_factory=list)
    spills: list[LineMemory] = field(default_factory=list)
    spill_bytes: int | None = None  # the compiler's figure: ptxas spill stores, AMD scratch per thread
    unattributed: dict[str, int] = field(default_factory=dict)  # stage -> memory instructions with no source line
    shared: list[SharedAccess] = field(default_factory=list)  # shared-memory wavefronts per line (shared_memory.py)
    shared_note: str = ""  # why `shared` is empty or incomplete ("" when the model ran)


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
        return "vectorised", f"128-bit accesses per thread{via} ({opcodes(instrs)})", low, widths
    if elem_bits and low <= elem_bits and max(widths) <= elem_bits:
        return "scalar", f"one {low}-bit element per access{via} ({opcodes(instrs)})", low, widths
    if len(widths) > 1:
        spread = ", ".join(f"{n} x {w}-bit" for w, n in sorted(widths.items(), reverse=True))
        return "partial", f"partly vectorised{via}: {spread} ({opcodes(instrs)})", low, widths
    return "partial", f"partly vectorised: {low}-bit accesses per thread{via} ({opcodes(instrs)})", low, widths


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


def ttir_module(rec: Inspection) -> Module:
    """The record's TTIR, parsed once (the memory table, the hint sites and the advice share it)."""
    return _module(context(rec), rec, "ttir")


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
        report.instructions += summarise(instrs)
        report.spills += summarise([i for i in instrs if i.kind in ("local_load", "local_store")])
        missing = sum(1 for i in instrs if not i.source_lines)
        if missing:
            report.unattributed[s] = missing
    r = rec.resources
    report.spill_bytes = r.spill_store_bytes if rec.backend == "cuda" else r.scratch_bytes
    if "ttir" in rec.stages and "ttir" in ctx.stages:
        report.accesses = _accesses(ctx, rec, by_stage, main)
    if rec.backend != "cuda":
        report.shared_note = "shared memory (LDS) is modelled for NVIDIA only: docs/shared-memory.md"
    else:
        try:
            report.shared = shared_report(rec)
        except Exception as e:  # noqa: BLE001 - PTX the lane walk cannot read: said, never a wrong figure
            report.shared_note = f"the shared-memory model could not read this PTX: {e}"
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
        bases = Flow(mod).base_pointers(op.operands[0]) if op.operands else []
        if op.name.startswith("tt.descriptor") and op.operands:
            bases = _descriptor_base(mod, op.operands[0])
        facts = ttgir.get(frame, _TtgirAccess())
        enc, per_thread = facts.layout, facts.per_thread
        acc = MemoryAccess(
            line=frame[0], column=frame[1], call_sites=lines[1:], op=op.name, direction=direction,
            pointer=bases[0] if bases else None, dtype=elem, element_bits=element_bits(elem) if elem else None,
            shape=shape, masked=_masked(op), cache=_access_cache(op), in_loop=op.loop_depth > 0, layout=enc,
            elements_per_thread=per_thread, lowered_as=[], ttir_line=op.line,
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
    carried = launch_memory(rec)
    for acc, frame, op in rows:
        instrs = acc.instructions.get(main or "", [])
        acc.lowered_as = list(dict.fromkeys(i.opcode for i in instrs))
        acc.verdict, acc.summary, acc.width_bits, acc.widths = _verdict(instrs, acc.element_bits)
        acc.vector_bits = acc.width_bits
        site = ttgir.get(frame, _TtgirAccess()).site
        if site is not None and ttgir_mod is not None:
            acc.data_inputs = sorted(data_inputs(ttgir_mod, site.op, [site.pointer, site.mask, site.offsets,
                                                                      site.base]))
            acc.data_carried = bool(acc.data_inputs) and carried is not None and \
                all(a in carried.arrays for a in acc.data_inputs)
            try:
                acc.coalescing = coalescing(site, ttgir_mod, vector_bits=acc.width_bits, warp_size=rec.warp_size,
                                            backend=rec.backend, arch=rec.arch, values=values, grid=rec.grid,
                                            memory=carried)
            except Exception as e:  # noqa: BLE001 - IR this model does not know must not cost the rest
                acc.coalescing = Coalescing("unknown", f"the coalescing analysis failed here ({type(e).__name__}: "
                                                       f"{e})")
            acc.sectors_per_request = acc.coalescing.sectors_per_request
            acc.ideal_sectors_per_request = acc.coalescing.ideal_sectors_per_request
            acc.sector_efficiency = acc.coalescing.sector_efficiency
            acc.uniform = acc.coalescing.uniform or acc.coalescing.status == "uniform"
        if acc.verdict in ("partial", "scalar") and not acc.uniform:
            eb = acc.element_bits // 8 if acc.element_bits else None
            acc.reasons, acc.reason_codes = access_reasons(mod, op, eb, acc.elements_per_thread, values, lines_of)
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
    walk = Walk(desc)
    for v in walk:
        if v in mod.args:
            return [v]
        op = mod.defs.get(v)
        if op is None:
            continue
        if op.name == "tt.make_tensor_descriptor" and op.operands:
            return [op.operands[0]] if op.operands[0] in mod.args else []
        walk.push(*mod.loop_carried.get(v, op.operands))
    return []


def launch_line_sectors(rec: Inspection, stop: Callable[[], bool] | None = None) -> dict[int, tuple[int, int] | None]:
    """Per kernel-file line with global memory ops: the (sectors, ideal sectors) its requests touch
    over the whole recorded launch (every program of `rec.grid`, every loop iteration), as Nsight
    Compute's `L2 Theoretical Sectors Global` (and its ideal) counts them; None for a line this
    cannot compute (coalescing.launch_sectors says when). Slow for big grids: for checking the
    model against a measurement (benchmarks/coalescing_fidelity.py), not for every inspection;
    `stop` (asked before each program) ends it early with coalescing.ModelStopped."""
    ctx = context(rec)
    if "ttgir" not in rec.stages or "ttgir" not in ctx.stages or not rec.grid:
        return {}
    mod = _module(ctx, rec, "ttgir")
    loc = ctx.stages["ttgir"]
    width = {(a.line, a.column): a.width_bits for a in memory_report(rec).accesses}
    if not width:  # a Gluon kernel has no TTIR: the widths the machine code shows at each site
        stage = "ptx" if "ptx" in ctx.stages else ("amdgcn" if "amdgcn" in ctx.stages else None)
        for i in machine_memory(ctx, stage) if stage else []:
            if i.kind in ("global_load", "global_store", "global_atomic") and i.source_lines and i.width_bits:
                key = (i.source_lines[0], i.column)
                width[key] = min(width.get(key) or i.width_bits, i.width_bits)
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
    return launch_sectors_by_line(dict(sorted(by_line.items())), mod, backend=rec.backend, arch=rec.arch,
                                  values=values, grid=rec.grid, stop=stop, memory=launch_memory(rec))


def launch_memory(rec: Inspection) -> Memory | None:
    """What the launch's index tensors held, where its reproducer carries them (a capture's
    `<file>.data.npz` beside the file, inspector.launch_data); None otherwise."""
    ctx = context(rec)
    if "launch_memory" not in ctx.memo:
        arrays = launch_data.read(launch_data.sidecar(rec.file)) if rec.file else {}
        ctx.memo["launch_memory"] = Memory(arrays) if arrays else None
    return ctx.memo["launch_memory"]


def attach_launch_memory(rec: Inspection, arrays: dict) -> None:
    """Give the record's analyses what its launch's index tensors held (arrays by argument name,
    inspector.launch_data) when they were read elsewhere than beside its file (a native run of the
    file's own code); the memory report is made again with them."""
    ctx = context(rec)
    ctx.memo["launch_memory"] = Memory(dict(arrays)) if arrays else None
    ctx.memo.pop("memory_report", None)


def line_data_inputs(rec: Inspection) -> dict[int, set[str]]:
    """Per kernel-file line: the tensors whose contents decide where its accesses go (data_inputs.py)."""
    out: dict[int, set[str]] = {}
    for acc in memory_report(rec).accesses:
        if acc.data_inputs:
            out.setdefault(acc.line, set()).update(acc.data_inputs)
    return out
