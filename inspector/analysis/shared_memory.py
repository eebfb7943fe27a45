"""Shared-memory accesses per kernel-file line: wavefronts against the ideal, the conflict degree,
and the cause in Triton's terms (the TTGIR op on the line and its layouts).

The numbers come from the PTX, lane by lane (ptx_lanes, shared_banks); the words from the TTGIR:
which `convert_layout`, `local_alloc` / `local_load` / `local_store`, async copy or cross-warp
reduction put the traffic there, and through which shared layout. NVIDIA only: AMD's LDS is not
modelled (docs/shared-memory.md says what is known and why it is not shown).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..record import Inspection
from .context import context
from .shared_banks import SharedCost, in_force, phase_picture, shared_costs

# TTGIR ops that move data through shared memory, and how to say what each does
_SHARED_OPS = {
    "ttg.convert_layout": "a layout conversion (convert_layout) through shared memory",
    "ttg.local_alloc": "a shared buffer written (local_alloc)",
    "ttg.local_store": "a shared buffer written (local_store)",
    "ttg.local_load": "a shared buffer read (local_load)",
    "ttg.async_copy_global_to_local": "an async copy into shared memory (cp.async, pipelined loads)",
    "tt.reduce": "a reduction across warps, staged in shared memory",
    "tt.scan": "a scan across warps, staged in shared memory",
    "tt.trans": "a transpose",
}
# each op by its name alone: `ttg.local_load %x`, the generic `"tt.reduce"(%x)`, not `tt.reduce.return`
_OP_PATTERNS = {op: re.compile(rf'(?<![\w.]){re.escape(op)}(?![\w.])') for op in _SHARED_OPS}
_LAYOUT_REF = re.compile(r"#(?:ttg\.)?[a-z_]*(?:blocked|shared|mma|linear|slice|dot_op|nvmma)\w*")
_SWIZZLE = re.compile(r"swizzled_shared<\{vec = (\d+), perPhase = (\d+), maxPhase = (\d+)")


@dataclass
class SharedAccess:
    """The shared-memory instructions of one kernel-file line and one kind, as one warp's request costs."""

    line: int
    call_sites: list[int]
    kind: str  # load | store | ldmatrix | stmatrix | async_copy | atomic
    instructions: int  # PTX instructions of this kind on the line
    opcodes: list[str]
    bytes_per_thread: int  # the widest access (16: `.v4.b32`, an ldmatrix row, a 16-byte cp.async)
    shared_wavefronts: float | None  # per request, the mean over its instructions and the block's warps
    ideal_shared_wavefronts: float | None  # the same bytes with no bank conflict
    bank_conflict_ways: int | None  # the busiest bank's distinct words in the worst phase (1: none)
    unknown: int = 0  # instructions whose address depends on a loaded value or an argument
    ops: list[str] = field(default_factory=list)  # the TTGIR ops on the line that move data through shared memory
    cause: str = ""  # why it costs more than the ideal, in Triton's terms ("" when it does not)
    suggestion: str = ""
    ptx_lines: list[int] = field(default_factory=list)  # its instructions' lines in the PTX
    picture: dict | None = None  # the costliest instruction's worst phase: lanes -> banks (shared_banks.phase_picture)

    @property
    def conflicted(self) -> bool:
        """Whether it costs measurably more than the ideal (a quarter more wavefronts, or more)."""
        return (self.shared_wavefronts is not None and self.ideal_shared_wavefronts is not None
                and self.shared_wavefronts > 1.25 * self.ideal_shared_wavefronts)


def _ttgir_ops(rec: Inspection, ctx) -> dict[int, list[str]]:
    """Kernel-file line -> the TTGIR ops on it that move data through shared memory, described."""
    if "ttgir" not in ctx.stages:
        return {}
    text = ctx.lines["ttgir"]
    aliases = dict(re.findall(r"^(#\w+) = (.*)$", "\n".join(text), re.M))
    out: dict[int, list[str]] = {}
    for no, chains in ctx.stages["ttgir"].chains.items():
        body = text[no - 1]
        name = next((op for op, pattern in _OP_PATTERNS.items() if pattern.search(body)), None)
        if name is None or not chains:
            continue
        layouts = [l for l in dict.fromkeys(_LAYOUT_REF.findall(body.split(" loc(")[0]))
                   if l != "#smem" and not l.startswith("#ttg.")]
        detail = " -> ".join(layouts)
        shared = next((aliases.get(l, "") for l in layouts if "shared" in aliases.get(l, l)), "")
        swz = _SWIZZLE.search(shared)
        if swz and swz.group(3) == "1":
            detail += " (the shared layout is not swizzled: maxPhase = 1)"
        elif swz:
            detail += f" (swizzled: vec {swz.group(1)}, perPhase {swz.group(2)}, maxPhase {swz.group(3)})"
        for ln in ctx.source_lines(chains[0])[:1]:
            said = f"{_SHARED_OPS[name]}{': ' + detail if detail else ''}"
            if said not in out.setdefault(ln, []):
                out[ln].append(said)
    return out


def _cause(acc: SharedAccess) -> tuple[str, str]:
    """(cause, suggestion) of a conflicted access."""
    ways = acc.bank_conflict_ways or 0
    what = {"load": "reads", "ldmatrix": "ldmatrix reads", "store": "writes", "stmatrix": "stmatrix writes",
            "async_copy": "async-copy writes", "atomic": "atomics"}.get(acc.kind, acc.kind)
    origin = acc.ops[0] if acc.ops else "shared memory the compiler uses on this line"
    cause = (f"{ways}-way bank conflicts on its {what}: {acc.shared_wavefronts:.3g} wavefronts per request where "
             f"{acc.ideal_shared_wavefronts:.3g} would do; from {origin}")
    if any("not swizzled" in o for o in acc.ops):
        tip = ("swizzle the shared layout (Gluon: SwizzledSharedLayout with max_phase > 1, or "
               "PaddedSharedLayout), so that a column's words fall in different banks")
    elif any(o.startswith("a reduction") or o.startswith("a scan") for o in acc.ops):
        tip = ("the reduction's partial results cross warps through shared memory: reduce along an axis the "
               "layout keeps within a warp (another num_warps or block shape), or reduce in two steps")
    elif any(o.startswith("a layout conversion") for o in acc.ops):
        tip = ("Triton chose this conversion's shared layout; layouts on either side that agree (another "
               "num_warps, block shape or dtype) avoid the conversion or change its swizzle")
    else:
        tip = "another layout, block shape or num_warps changes which lanes share a bank"
    return cause, tip


def shared_report(rec: Inspection) -> list[SharedAccess]:
    """Per kernel-file line and kind, what its shared-memory instructions cost (NVIDIA PTX; [] otherwise)."""
    ctx = context(rec)
    if "shared_report" in ctx.memo:
        return ctx.memo["shared_report"]
    out: list[SharedAccess] = []
    if rec.backend == "cuda" and "ptx" in ctx.stages:
        # the block's threads (the PTX's `.reqntid`, when present, wins inside the lane walk)
        warps = int(rec.resources.num_warps or (rec.options or {}).get("num_warps") or 4)
        costs = shared_costs("\n".join(ctx.lines["ptx"]), warps * 32)
        groups: dict[tuple[int, str], list[tuple[SharedCost, list[int]]]] = {}
        chains = ctx.stages["ptx"].chains
        for cost in costs:
            lines = [ln for chain in in_force(chains, cost.line) for ln in ctx.source_lines(chain)]
            lines = list(dict.fromkeys(lines))
            if lines:
                groups.setdefault((lines[0], cost.op), []).append((cost, lines))
        ops = _ttgir_ops(rec, ctx)
        for (line, kind), items in sorted(groups.items()):
            known = [c for c, _ in items if c.wavefronts is not None]
            acc = SharedAccess(
                line, [l for l in items[0][1][1:]], kind, len(items), list(dict.fromkeys(c.opcode for c, _ in items)),
                max(c.bytes_per_lane for c, _ in items),
                sum(c.wavefronts for c in known) / len(known) if known else None,
                sum(c.ideal for c in known) / len(known) if known else None,
                max((c.ways for c in known), default=None), len(items) - len(known), ops.get(line, []),
                ptx_lines=[c.line for c, _ in items])
            costly = max(known, key=lambda c: (c.wavefronts / max(c.ideal, 1e-9), c.wavefronts), default=None)
            acc.picture = phase_picture(costly.access) if costly and costly.access is not None else None
            if acc.conflicted:
                acc.cause, acc.suggestion = _cause(acc)
            out.append(acc)
    ctx.memo["shared_report"] = out
    return out
