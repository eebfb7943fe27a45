"""The advisor: ranked findings about one inspection, each with its source line and evidence.

What it looks for (`Finding.code`):
- `uncoalesced_access`: one warp's request touches more memory sectors than its bytes need
  (coalescing.py), with the chain of causes the IR shows, actionable first;
- `scalar_access` / `partial_access`: a coalesced load, store or atomic narrower than 128 bits per
  thread (more instructions for the same bytes), with the reason the IR shows (memory.py);
- `gather`: (information) addresses that come from loaded data; uniform accesses (one element
  per program, a broadcast) are never findings;
- `spills`: local memory (NVIDIA) or scratch (AMD) used for register spills, attributed to the
  lines whose spill instructions hold it;
- `occupancy`: blocks per SM limited by registers, shared memory / LDS or barriers (not by the
  warp limit), below half the SM; on AMD also when the calculation finds no workgroup fits but
  the compiler's own estimate ("; Occupancy: N") says waves do;
- `cannot_launch`: no block fits (shared memory over the limit);
- `tf32`: `tl.dot` on fp32 inputs with tf32 precision;
- `no_tensor_cores`: a `tl.dot` whose line holds no tensor-core instruction in the machine code;
  `mma_not_wgmma`: a dot on sm_90 that uses mma.sync rather than wgmma;
- `tensor_cores`: (information) which tensor-core instructions a dot became (mma.sync, wgmma,
  tcgen05, MFMA, WMMA);
- `layout_conversions`: `convert_layout`s lowered through shared memory, worse inside loops;
- `bank_conflicts`: shared-memory instructions whose lanes collide in a bank (more wavefronts
  per request than the bytes need: shared_memory.py), with the TTGIR op and layouts behind them;
- `small_grid` / `tail_wave`: the example launch's grid leaves most of the GPU idle, or its last
  wave mostly empty;
- `inline_asm_dropped`: (AMD) inline assembly the LLVM IR calls but the AMDGCN leaves out, as
  LLVM's AMDGPU backend does with NVIDIA's PTX: what it computes is undefined on that GPU.
Severity ranks them: high, medium, low, info; `score` orders findings within and across.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from ..hardware.architectures import max_threads_per_block
from ..record import Inspection, SEVERITIES
from .context import context
from .hint_sites import advice, hint_sites, source_ops
from .layouts import layout_report
from .memory import MemoryAccess, memory_report
from .mlir import parse_module
from .words import line_words

# `tt.dot %a, %b, %c, inputPrecision = tf32 : tensor<64x64xf32> * tensor<64x64xf32> -> tensor<64x64xf32>`
TTIR_DOT_PRECISION = re.compile(r"inputPrecision = (\w+)")
TTIR_DOT_OPERANDS = re.compile(r":\s*tensor<((?:\d+x)+)(\w+)[^>]*>\s*\*\s*tensor<((?:\d+x)+)(\w+)[^>]*>")


@dataclass
class Finding:
    """One thing the advisor noticed."""

    code: str  # see the module docstring
    severity: str  # high | medium | low | info
    score: float  # higher first
    line: int | None  # the kernel-file line to link to (None: the whole kernel)
    title: str  # one sentence, starting with "line N: " when it has a line
    evidence: list[str] = field(default_factory=list)
    suggestion: str = ""
    lines: list[int] = field(default_factory=list)  # every kernel-file line involved


def _ranges(lines: list[int]) -> str:
    """[20, 21, 22, 24] -> "20-22, 24"."""
    out: list[str] = []
    nums = sorted(set(lines))
    i = 0
    while i < len(nums):
        j = i
        while j + 1 < len(nums) and nums[j + 1] == nums[j] + 1:
            j += 1
        out.append(str(nums[i]) if i == j else f"{nums[i]}-{nums[j]}")
        i = j + 1
    return ", ".join(out)


_WHAT = {"load": "loads", "store": "stores", "atomic": "atomics"}
_SHORT_REASON = {
    "mask_divisibility": "the mask compares against {arg}, which is not known to be a multiple of 16",
    "offset_divisibility": "the address uses {arg}, which is not known to be a multiple of 16",
    "pointer_alignment": "{arg} is not known to be 16-byte aligned",
    "strided": "the index is strided",
    "descriptor_stride": "the tensor descriptor's stride ({arg}) is known only at run time on this target (no TMA)",
    "constant_offset": "a constant offset breaks 16-byte alignment",
    "layout": "the layout gives each thread fewer than 16 contiguous bytes",
    "shared_layout": "the shared-memory layout it copies into is contiguous along the other dimension",
    "unknown": "the compiler could not prove the accesses contiguous and aligned",
    "loaded_offset": "an offset loaded from memory ({arg}) has no alignment the compiler can know",
    "gather": "its index is loaded from memory (a gather)",
    "mask_loaded": "the mask's bound is loaded from memory, not known to be a multiple of 16",
}
_SUGGEST = {
    "mask_divisibility": "Sizes that are multiples of 16 are specialised as such (tt.divisibility=16): pad the size, "
                         "or split off the tail so the main part runs unmasked.",
    "offset_divisibility": "Strides and offsets that are multiples of 16 get tt.divisibility=16; pad row strides, "
                           "or state it with tl.multiple_of when you know it.",
    "pointer_alignment": "Pass tensors whose data starts 16-byte aligned (a view such as x[1:] is not).",
    "strided": "Make the fastest-varying index (the tl.arange) the contiguous one in memory, or transpose the data.",
    "descriptor_stride": "Without TMA, Triton turns a tensor descriptor into pointer arithmetic whose strides are "
                         "run-time values, so the innermost one is not known to be 1. Where the kernel must run on "
                         "such targets, load through pointers with the strides as kernel arguments: Triton "
                         "specialises an integer argument equal to 1, and the contiguous dimension becomes visible.",
    "constant_offset": "Keep offsets multiples of 16 bytes, or load the aligned block and shift in registers.",
    "layout": "Give each thread more contiguous elements: a larger BLOCK, or fewer warps for this block size.",
    "shared_layout": "The tensor cores want this operand in that order: 16-bit inputs (or the operand stored "
                     "transposed in global memory) let the copy move 16 bytes at a time.",
    "unknown": "Check the TTGIR layout of the pointer and its origin in the TTIR.",
    "loaded_offset": "If every such offset is a multiple of 16 elements in your data (pad each row to 16), say so: "
                     "`start = tl.multiple_of(tl.load(...), 16)`, and for a masked access the bound too "
                     "(`mask=idx < tl.multiple_of(end - start, 16)`, rows padded to 16). Both are needed for 128-bit "
                     "accesses: the offset alone gives each thread contiguous groups that the mask still splits, one "
                     "element per instruction with the lanes 16 bytes apart (worse). They are promises about the "
                     "data: a row that breaks one makes misaligned vector accesses.",
    "mask_loaded": "Pad each row's length to a multiple of 16 elements and say so: "
                   "`mask=idx < tl.multiple_of(end - start, 16)`; the padding must be in the data.",
    "gather": "A gather's addresses come from the data: indices sorted or grouped so that neighbouring lanes read "
              "neighbouring elements share sectors; nothing in the kernel's code changes that.",
}


def _arg_of(reason: str) -> str:
    m = re.search(r"`([\w.]+)`(?: \(= ([^)]*)\))?", reason)
    if not m:
        return "a value"
    return f"`{m.group(1)}`" + (f" (= {m.group(2)})" if m.group(2) else "")


def _access_findings(accesses: list[MemoryAccess], suggest: Callable[[MemoryAccess], str] | None = None
                     ) -> list[Finding]:
    """One finding per access that wastes sectors or instructions. Uniform accesses (one element
    per program, a broadcast) and TMA copies are not findings; a gather, whose pattern comes from
    the data, is information only."""
    out = []
    for a in accesses:
        eff = a.sector_efficiency
        uncoalesced = eff is not None and eff < 0.999
        narrow = a.verdict in ("scalar", "partial")
        if a.uniform or not (uncoalesced or narrow):
            continue
        what = _WHAT[a.direction]
        subject = f"{what} of `{a.pointer}`" if a.pointer else what
        codes = [c for c in a.reason_codes if c != "unknown"] or a.reason_codes or ["unknown"]
        first = codes[0]
        reason = a.reasons[a.reason_codes.index(first)] if first in a.reason_codes else ""
        because = _SHORT_REASON.get(first, "").format(arg=_arg_of(reason))
        evidence = [f"{stage.upper()}: " + ", ".join(dict.fromkeys(i.opcode for i in instrs))
                    for stage, instrs in a.instructions.items() if instrs]
        evidence += a.causes or a.reasons
        if a.coalescing is not None:
            evidence += [f"assumed: {x}" for x in a.coalescing.assumptions if not x.startswith("pointer arguments")]
        lines = [a.line] + a.call_sites
        advice = suggest(a) if suggest and narrow else ""
        if a.coalescing is not None and a.coalescing.status == "data_dependent":
            if not (narrow and a.sites_hintable):
                out.append(Finding("gather", "info", 5, a.line, f"line {a.line}: {subject} are a gather: "
                                   f"{a.coalescing.note}", evidence, _SUGGEST["gather"], lines))
                continue
            # rows gathered, each row contiguous: the rows come from the data, the width from facts a
            # promise can restore (a gathered row index times a stride that is a multiple of 4)
            uncoalesced = False
            evidence.append(a.coalescing.note)
        width = f"{a.width_bits}-bit" if a.width_bits else "narrow"
        state = "scalar" if a.verdict == "scalar" else f"{width} per thread"
        loop = 10 if a.in_loop else 0
        if uncoalesced:
            title = (f"line {a.line}: {subject} are uncoalesced: {_num(a.sectors_per_request)} sectors per warp "
                     f"request where {_num(a.ideal_sectors_per_request)} would do ({eff * 100:.0f}% used)"
                     + (f", {state}," if narrow else "") + f" because {because}")
            sev, score, code = ("high", 90 + (1 - eff) * 10 + loop, "uncoalesced_access") if eff <= 0.5 else \
                ("medium", 65 + (1 - eff) * 10 + loop, "uncoalesced_access")
        else:
            times = 128 // a.width_bits if a.width_bits and a.width_bits < 128 else None
            extra = "" if a.sector_efficiency is None else (
                f" (coalesced, but {times}x the instructions of 128-bit {what})" if times else " (coalesced)")
            title = f"line {a.line}: {subject} are {state}{extra} because {because}"
            sev, score, code = ("medium", 50 + loop, "scalar_access") if a.verdict == "scalar" else \
                ("low", 30 + loop, "partial_access")
        out.append(Finding(code, sev, score, a.line, title, evidence, advice or _SUGGEST.get(first, ""), lines))
    return _merge_repeats(out)


def _merge_repeats(found: list[Finding]) -> list[Finding]:
    """One finding per title: a helper inlined at several call sites (or unrolled) repeats its
    accesses at the same line; the evidence says how many there are."""
    out: dict[tuple[str, str], Finding] = {}
    count: dict[tuple[str, str], int] = {}
    for f in found:
        key = (f.code, f.title)
        if key in out:
            count[key] += 1
            out[key].lines = sorted(set(out[key].lines) | set(f.lines))
        else:
            out[key], count[key] = f, 1
    for key, f in out.items():
        if count[key] > 1:
            f.evidence.insert(0, f"{count[key]} accesses at this line (an inlined helper's call sites, or an "
                                 f"unrolled loop), each the same")
    return list(out.values())


def _num(x: float | None) -> str:
    return "?" if x is None else (f"{x:.0f}" if abs(x - round(x)) < 0.05 else f"{x:.1f}")


def _spill_findings(rec: Inspection) -> list[Finding]:
    rep = memory_report(rec)
    r = rec.resources
    stores = [s for s in rep.spills if s.kind == "local_store"]
    loads = [s for s in rep.spills if s.kind == "local_load"]
    if rec.backend == "cuda":
        total = r.spill_store_bytes or 0
        if not total and not stores:
            return []
        what = "STL"
        stage = "sass"
    else:
        total = r.scratch_bytes or 0
        if not total and not stores and not (r.vgpr_spills or r.sgpr_spills):
            return []
        what = "scratch_store"
        stage = "amdgcn"
    store_lines = sorted({s.line for s in stores if s.stage == stage})
    load_lines = sorted({s.line for s in loads if s.stage == stage})
    where = (f" ({what} at line{'s' if len(store_lines) > 1 else ''} {_ranges(store_lines)})" if store_lines else "")
    if rec.backend == "cuda":
        title = f"{total} bytes spilled per thread{where}"
        evidence = [(f"ptxas: {r.spill_store_bytes} bytes spill stores, {r.spill_load_bytes} bytes spill loads; "
                    f"{r.registers} registers per thread")]
    else:
        title = f"{total} bytes of scratch per thread{where}"
        evidence = [(f"AMDGCN: {r.vgpr_spills} VGPR and {r.sgpr_spills} SGPR spills, {r.scratch_bytes} bytes of scratch; "
                    f"{r.vgprs} VGPRs, {r.agprs} AGPRs")]
    for s in stores + loads:
        if s.stage == stage:
            evidence.append(f"line {s.line}: {s.count} x {', '.join(s.opcodes)} ({s.bytes_per_thread} bytes)")
    lines = sorted(set(store_lines) | set(load_lines))
    return [Finding("spills", "high", 85 + min(10, total / 64), lines[0] if lines else None, title, evidence,
                    "Each thread holds more live values than fit in registers: smaller tiles (BLOCK sizes), fewer "
                    "pipeline stages (num_stages), or more warps for the same tile reduce what each thread holds.",
                    lines)]


def _occupancy_findings(rec: Inspection) -> list[Finding]:
    occ = rec.occupancy
    if occ is None:
        try:
            from ..occupancy.of_kernel import occupancy_of

            occ = occupancy_of(rec)
        except Exception:  # noqa: BLE001 - occupancy is an extra; the advice stands without it
            occ = None
    if not occ:
        return []
    out: list[Finding] = []
    blocks = occ.get("blocks_per_sm")
    limiters = [x for x in occ.get("limiters", []) if x not in ("warps", "waves", "blocks")]
    unit = "CU" if rec.backend == "hip" else "SM"
    most = max_threads_per_block(rec.backend, rec.arch)
    threads = rec.resources.threads
    if most and threads > most:
        width = rec.warp_size or 32
        return [Finding("cannot_launch", "high", 100, None,
                        f"a block of {threads} threads ({rec.resources.num_warps} warps of {width}) is over the "
                        f"{most} one block may have on {rec.target}: the launch would fail",
                        [f"num_warps {rec.resources.num_warps} x {width} = {threads} > {most}"],
                        f"num_warps at most {most // width} on this target" +
                        (" (AMD's wavefronts are 64 wide: the num_warps an NVIDIA GPU takes is twice too many)"
                         if width == 64 else ""))]
    gpu = occ.get("gpu")
    if blocks == 0 and rec.backend == "hip" and rec.resources.amd_occupancy:
        # the two disagree: say so rather than predict a failed launch
        out.append(Finding("occupancy", "medium", 60, None,
                           f"no workgroup fits on a CU by the register count ({', '.join(occ.get('limiters', []))}), "
                           f"yet the compiler estimates {rec.resources.amd_occupancy} waves per SIMD",
                           [f"limits: {_limits(occ.get('limits'), unit)}",
                            f"{rec.resources.vgprs} VGPRs + {rec.resources.agprs} AGPRs, {rec.resources.sgprs} SGPRs"],
                           "Fewer registers per thread (smaller tiles) leave room for more waves."))
        return out
    if blocks == 0:
        out.append(Finding("cannot_launch", "high", 100, None,
                           f"no block fits on an {unit} ({', '.join(occ.get('limiters', []))}): the launch would fail",
                           [f"limits: {_limits(occ.get('limits'), unit)}"] + list(occ.get("notes", [])),
                           "Reduce shared memory (smaller tiles or fewer stages) or registers."))
        return out
    frac = occ.get("occupancy") or 0.0
    if limiters and frac < 0.5:
        names = {"registers": "registers", "shared_memory": "shared memory", "vgprs": "VGPRs", "sgprs": "SGPRs",
                 "lds": "LDS", "barriers": "barriers"}
        lim = " and ".join(names.get(x, x) for x in limiters)
        r = rec.resources
        ev = [f"{occ.get('active_warps')} of {occ.get('max_warps_per_sm')} warps per {unit} active"
              + (f" on {gpu}" if gpu else ""), f"limits: {_limits(occ.get('limits'), unit)}"]
        if rec.backend == "cuda":
            ev.append(f"{r.registers} registers per thread x {r.threads} threads; {r.shared_bytes} bytes of shared memory")
        else:
            ev.append(f"{r.vgprs} VGPRs + {r.agprs} AGPRs, {r.sgprs} SGPRs; {r.shared_bytes} bytes of LDS")
        out.append(Finding("occupancy", "medium", 40 + (0.5 - frac) * 40, None,
                           f"occupancy limited by {lim} to {blocks} block{'s' if blocks != 1 else ''}/{unit} "
                           f"({frac * 100:.0f}% of the {unit}'s warps)", ev,
                           "Fewer registers or less shared memory per block lets more blocks share an " + unit + "; "
                           "tensor-core kernels often run well at low occupancy, so weigh this against the tile size."))
    waves = occ.get("waves")
    if waves and waves.get("launchable"):
        sms = waves.get("sm_count") or 0
        grid = waves.get("grid_blocks") or 0
        if sms and grid < sms:
            out.append(Finding("small_grid", "low", 15, None,
                               f"the example launch has {grid} block{'s' if grid != 1 else ''} for the {sms} {unit}s of "
                               f"{gpu}: {100 * (1 - grid / sms):.0f}% of the GPU idles", [f"grid {rec.grid}"],
                               "Larger problems (or smaller blocks) fill the GPU; this is the size the example chose."))
        elif waves.get("waves", 0) > 1 and waves.get("efficiency", 1) < 0.75:
            out.append(Finding("tail_wave", "low", 20, None,
                               f"the last of {waves['waves']} waves runs {waves['last_wave_blocks']} of "
                               f"{waves['blocks_per_wave']} blocks: {100 * waves['efficiency']:.0f}% wave efficiency on "
                               f"{gpu}", [f"grid {rec.grid}, {blocks} blocks/{unit}, {sms} {unit}s"],
                               "A grid that is a multiple of the blocks per wave avoids the partly empty last wave."))
    return out


_LIMIT_WORDS = {"warps": "warps", "registers": "registers", "shared_memory": "shared memory", "blocks": "blocks",
                "barriers": "barriers", "vgprs": "VGPRs", "sgprs": "SGPRs", "lds": "LDS", "waves": "waves"}


def _limits(limits: object, unit: str) -> str:
    """{'warps': 8, 'registers': 1, ...} -> "blocks per SM allowed by warps 8, registers 1, ..." in words."""
    if not isinstance(limits, dict) or not limits:
        return "unknown"
    parts = ", ".join(f"{_LIMIT_WORDS.get(k, k.replace('_', ' '))} {v}" for k, v in limits.items())
    return f"blocks per {unit} each resource allows: {parts}"


def _dot_findings(rec: Inspection) -> list[Finding]:
    ctx = context(rec)
    if "ttir" not in rec.stages or "ttir" not in ctx.stages:
        return []
    mod = parse_module(rec.stages["ttir"])
    machine = "ptx" if "ptx" in ctx.stages else ("amdgcn" if "amdgcn" in ctx.stages else None)
    out: list[Finding] = []
    tc_by_line: dict[str, dict[int, list[str]]] = {}
    for stage in ("ptx", "sass", "amdgcn"):
        if stage not in ctx.stages:
            continue
        loc = ctx.stages[stage]
        rows: dict[int, list[str]] = {}
        for no, cls in loc.classes.items():
            if cls != "tensor_core":
                continue
            op = ctx.lines[stage][no - 1].strip().split()
            name = op[0] if stage != "sass" else next((w for w in op if re.match(r"^[A-Z][A-Z0-9]*MMA", w)), op[-1])
            if stage == "sass":
                m = re.search(r"\b([A-Z]*MMA[\w.]*)", ctx.lines[stage][no - 1])
                name = m.group(1) if m else name
            for ln in ctx.line_sources(stage, no):
                if name not in rows.setdefault(ln, []):
                    rows[ln].append(name)
        tc_by_line[stage] = rows
    for op in mod.ops:
        if op.name not in ("tt.dot", "tt.dot_scaled"):
            continue
        chains = ctx.stages["ttir"].chains.get(op.line)
        lines = ctx.source_lines(chains[0]) if chains else []
        if not lines:
            continue
        line = lines[0]
        prec = TTIR_DOT_PRECISION.search(op.text)
        operands = TTIR_DOT_OPERANDS.search(op.text)
        a_elem = operands.group(2) if operands else ""
        shape_a = [int(x) for x in operands.group(1).split("x") if x] if operands else []
        shape_b = [int(x) for x in operands.group(3).split("x") if x] if operands else []
        # the TTIR printer omits the default precision, IEEE
        precision = prec.group(1) if prec else "ieee"
        found = {s: sorted({n for ln in lines for n in tc_by_line.get(s, {}).get(ln, [])}) for s in tc_by_line}
        main_found = found.get(machine, []) if machine is not None else []
        # tf32 is a tensor-core format: where no tensor-core instruction carries the dot (Turing and
        # older, a dot too small) it runs in full fp32 on the FMA units whatever the TTIR asked
        if a_elem == "f32" and precision in ("tf32", "tf32x3") and (machine is None or main_found):
            out.append(Finding("tf32", "low", 30, line,
                               f"line {line}: tl.dot on fp32 inputs runs as {precision} "
                               f"({'10-bit mantissa' if precision == 'tf32' else 'three tf32 products'})",
                               [f"TTIR: inputPrecision = {precision} on {operands.group(0).split(':', 1)[1].strip() if operands else 'fp32'}"],
                               "Pass input_precision=\"ieee\" for full fp32 accuracy (much slower: no tensor cores), or "
                               "\"tf32x3\" for near-fp32 accuracy on tensor cores.", lines))
        if machine is None:
            continue
        # asked for tf32 on an NVIDIA GPU older than Ampere, which has none
        tf32_less = a_elem == "f32" and precision != "ieee" and rec.backend == "cuda" \
            and isinstance(rec.arch, int) and rec.arch < 80
        if not main_found:
            why = []
            if shape_a and shape_b and (min(shape_a[0], shape_b[-1]) < 16 or shape_a[-1] < 16):
                why.append(f"the dot is {shape_a[0]} x {shape_b[-1]} x {shape_a[-1]} (M x N x K): tensor cores need "
                           f"M, N >= 16 and K >= 16 (8 for tf32)")
            if a_elem == "f32" and precision == "ieee":
                why.append("input_precision=\"ieee\" on fp32 inputs runs on the FMA units")
            elif tf32_less:
                why.append(f"fp32 inputs: {rec.target} has no tf32 tensor cores (sm_80 and newer do), so the dot "
                           "runs in full fp32 on the FMA units")
            if a_elem in ("f64",):
                why.append("fp64 dots run on the FMA units")
            out.append(Finding("no_tensor_cores", "high", 75, line,
                               f"line {line}: tl.dot runs on the FMA units: no tensor-core instructions on {rec.target}",
                               why or ["no mma / wgmma / MFMA instruction carries this line"],
                               f"Use 16-bit {'' if tf32_less else '(or tf32) '}inputs and tiles of at least "
                               "16 x 16 x 16.", lines))
            continue
        names = ", ".join(main_found)
        sass = found.get("sass")
        evidence = [f"{machine.upper()}: {names}"] + ([f"SASS: {', '.join(sass)}"] if sass else [])
        if rec.target in ("sm_90", "sm_90a") and not any(n.startswith("wgmma") for n in main_found):
            why = [f"num_warps = {rec.resources.num_warps}, not a multiple of 4"] if rec.resources.num_warps % 4 else []
            if shape_a and shape_a[0] < 64:
                why.append(f"M = {shape_a[0]} < 64 (a warpgroup's wgmma covers 64 rows)")
            out.append(Finding("mma_not_wgmma", "medium", 45, line,
                               f"line {line}: tl.dot uses mma.sync, not Hopper's wgmma, on sm_90", evidence + why,
                               "wgmma needs num_warps a multiple of 4 and blocks of at least 64 rows; operands in "
                               "shared memory (tensor descriptors or pipelined loads) help.", lines))
            continue
        if any(n.startswith("wgmma") for n in main_found):
            kind = "wgmma"
        elif any(n.startswith("tcgen05") for n in main_found):
            kind = "tcgen05 (accumulating in tensor memory)"
        elif machine == "amdgcn":
            kind = "WMMA" if any("wmma" in n for n in main_found) else "MFMA"
        else:
            kind = "mma.sync"
        out.append(Finding("tensor_cores", "info", 5, line, f"line {line}: tl.dot runs on tensor cores as {kind}",
                           evidence, "", lines))
    return out


def _conversion_findings(rec: Inspection) -> list[Finding]:
    rep = layout_report(rec)
    shared = [c for c in rep.conversions if c.lowering == "shared memory"]
    if not shared:
        return []
    looped = [c for c in shared if c.in_loop]
    group = looped or shared
    lines = sorted({ln for c in group for ln in c.source_lines[:1]})
    n = len(group)
    where = " in the loop" if looped else ""
    title = (f"{n} layout conversion{'s' if n != 1 else ''} through shared memory{where}"
             + (f" (line{'s' if len(lines) != 1 else ''} {_ranges(lines)})" if lines else ""))
    evidence = [f"TTGIR line {c.line}: {c.src} -> {c.dst} ({'x'.join(map(str, c.shape))} {c.dtype}); {c.evidence}"
                for c in group]
    return [Finding("layout_conversions", "medium" if looped else "low", 50 if looped else 20,
                    lines[0] if lines else None, title, evidence,
                    "A conversion stores the tensor to shared memory and reads it back in the other layout, with a "
                    "barrier between. Matching layouts (e.g. loading in the layout the consumer wants) avoid it.",
                    lines)]


def _bank_conflict_findings(rec: Inspection) -> list[Finding]:
    out = []
    for acc in memory_report(rec).shared:
        if not acc.conflicted:
            continue
        ways = acc.bank_conflict_ways or 1
        extra = acc.shared_wavefronts / acc.ideal_shared_wavefronts
        out.append(Finding(
            "bank_conflicts", "medium" if ways >= 4 else "low", 25 + 5 * min(extra, 8), acc.line,
            f"line {acc.line}: {ways}-way shared-memory bank conflicts ({acc.shared_wavefronts:.3g} wavefronts per "
            f"request, ideal {acc.ideal_shared_wavefronts:.3g})",
            [acc.cause, f"{acc.instructions} x {', '.join(acc.opcodes)} ({acc.bytes_per_thread} B per thread)",
             *acc.ops], acc.suggestion, [acc.line, *acc.call_sites]))
    return out


def _hint_advice(rec: Inspection, a: MemoryAccess) -> str:
    """Every blocker of a narrow access and the hints that would lift it (`hint_sites.advice`)."""
    if a.verdict not in ("scalar", "partial"):
        return ""
    src = source_ops(rec)
    if src is None:
        return ""
    values = {p.name: p.value for p in rec.parameters}
    sites = hint_sites(rec.compiled_source, "", rec.compiled_file, a, src, values, first_only=True)
    a.sites_hintable = bool(sites.groups)
    threads = (rec.resources.num_warps or 0) * (rec.warp_size or 32)
    elements = 1
    for d in a.shape:
        elements *= d
    room = elements // threads if threads and a.shape else None  # what a thread can hold at most
    return advice(sites, values, room)


def _dropped_asm_findings(rec: Inspection) -> list[Finding]:
    if rec.backend != "hip" or "llir" not in rec.stages or "amdgcn" not in rec.stages:
        return []
    from ..backends.amd import dropped_inline_asm

    out = []
    for text, constraints, line in dropped_inline_asm(rec.stages["llir"], rec.stages["amdgcn"]):
        where = f"line {line}: " if line else ""
        out.append(Finding(
            "inline_asm_dropped", "high", 98, line,
            f"{where}inline assembly `{text.strip()[:60]}` is left out of {rec.target}'s code: what it computes "
            f"is undefined there",
            [f"the LLVM IR calls it (constraints \"{constraints}\"); the AMDGCN holds no inline-assembly block",
             "AMD's code generator drops assembly written for NVIDIA (PTX, register classes such as \"f\") "
             "without an error, and with it the values that feed only it"],
            "give AMD its own path: assembly for gfx9 (`v_rcp_f32`), or a `tl` / `tl.extra.hip.libdevice` "
            "function, chosen by a constexpr on the target", [line] if line else []))
    return out


def advise(rec: Inspection) -> list[Finding]:
    """Ranked findings for one inspection (highest severity and score first); empty on error."""
    if rec.error is not None and not rec.stages:
        return []
    ctx = context(rec)
    if "advice" in ctx.memo:
        return ctx.memo["advice"]
    findings: list[Finding] = []
    findings += _access_findings(memory_report(rec).accesses, lambda a: _hint_advice(rec, a))
    findings += _spill_findings(rec)
    findings += _occupancy_findings(rec)
    findings += _dot_findings(rec)
    findings += _conversion_findings(rec)
    findings += _bank_conflict_findings(rec)
    findings += _dropped_asm_findings(rec)
    findings.sort(key=lambda f: (SEVERITIES.index(f.severity), -f.score, f.line or 0))
    if rec.generated is not None:  # a Helion kernel: a title names the Helion line, then the generated one
        for f in findings:
            f.title = re.sub(r"\bline (\d+)\b", lambda m: f"line {line_words(rec, int(m.group(1)))}", f.title)
    ctx.memo["advice"] = findings
    return findings
