"""Verdicts where the eye is: the markers the workbench draws in the editor's gutter and at the
left edge of stage-pane rows, each with the reason shown on hover.

    {pane: {line: [{"severity": "error" | "performance" | "info", "kind": ..., "text": ...}]}}

pane "source" is the editor (kernel-file lines); the others are stage keys (their own lines). An
item may carry `heat` (0-1): a measured line's share of the stall samples against the hottest's,
drawn as a red strip beside the marker (`profile_markers`), and `fix` (an advisor finding's index):
clicking the marker opens that finding's "Try fixes" (`inspector/ui/fix_panel.py`).
Severities mean one thing each: `error` is something that stops the kernel (the compile error's
line), `performance` a verdict or finding that costs speed (a memory access narrower than 128 bits,
local-memory spills, a layout conversion through shared memory, the advisor's findings), `info`
a fact worth seeing (a 128-bit access, a TMA copy, a conversion in registers or shuffles).
No Streamlit here.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from inspector.analysis.words import number_words
from inspector.record import Inspection

log = logging.getLogger(__name__)

Markers = dict[str, dict[int, list[dict[str, str]]]]
VERDICT_SEVERITY = {"vectorised": "info", "tma": "info", "partial": "performance", "scalar": "performance"}
VERDICT_WORDS = {"vectorised": "128-bit", "partial": "partly vectorised", "scalar": "scalar", "tma": "TMA bulk copy"}
# The advisor ranks its findings high / medium / low by expected cost; all of them are about speed.
FINDING_SEVERITY = {"high": "performance", "medium": "performance", "low": "performance", "info": "info"}
# The one scale the gutter, the Advisor, the pair card and Diff draw (workbench.css has the gutter's
# colours): red stops the kernel, orange costs speed, blue is a fact. Streamlit's icon font.
SCALE_ICONS = {"error": ":red[:material/error:]", "performance": ":orange[:material/warning:]",
               "info": ":blue[:material/info:]"}


def finding_icon(severity: str) -> str:
    """The icon of an advisor finding's severity (high / medium / low / info) on the one scale."""
    return SCALE_ICONS[FINDING_SEVERITY.get(severity, "info")]


def _add(out: Markers, pane: str, line: int | None, severity: str, kind: str, text: str,
         warp: dict[str, Any] | None = None, heat: float | None = None, fix: int | None = None) -> None:
    if not line or line < 1:
        return
    items = out.setdefault(pane, {}).setdefault(int(line), [])
    item: dict[str, Any] = {"severity": severity, "kind": kind, "text": text}
    if warp is not None:
        item["warp"] = warp
    if heat is not None:
        item["heat"] = round(heat, 3)
    if fix is not None:
        item["fix"] = fix
    if item not in items:
        items.append(item)


def coalescing_marker(a: Any) -> tuple[str, str, str, dict[str, Any] | None] | None:
    """(severity, kind, text, drawing) of an access's coalescing: `coalescing-uncoalesced` costs
    speed (drawn differently from a scalar but coalesced access), `coalescing-coalesced`,
    `-uniform`, `-tma` and `-data` are facts. The drawing is one warp's first request: which
    sector each lane's bytes fall in (relative to the lowest), the sectors touched and the ideal."""
    cz = a.coalescing
    if cz is None:
        return None
    if a.uniform:
        return "info", "coalescing-uniform", "uniform: " + cz.note, None
    if cz.status == "tma":
        return "info", "coalescing-tma", cz.note, None
    if cz.status == "data_dependent":
        return "info", "coalescing-data", cz.note, None
    if cz.sector_efficiency is None or not cz.requests:
        return None
    first = cz.requests[0]
    warp = {"lanes": first.lane_sectors, "sectors": first.sectors, "ideal": first.ideal_sectors,
            "bytes": cz.sector_bytes, "instructions": cz.instructions_per_warp,
            "unit": "wavefront" if cz.warp_size == 64 else "warp"}  # AMD CDNA: wave64
    bad = cz.sector_efficiency < 0.999
    text = cz.note + ("\nassumed: " + "; ".join(cz.assumptions) if cz.assumptions else "")
    return ("performance" if bad else "info"), ("coalescing-uncoalesced" if bad else "coalescing-coalesced"), text, warp


# Advisor findings about one access, and the marker kinds that already say them on its line.
ACCESS_FINDINGS = {"bank_conflicts": {"shared-conflicts"}, "uncoalesced_access": {"coalescing-uncoalesced"},
                   "gather": {"coalescing-data", "coalescing-uncoalesced", "memory-scalar", "memory-partial"}}


def access_line(a: Any) -> str:
    """One access in one line, for the editor's hover: what, how wide, what a warp's request costs,
    and the first reason ("scalar load of x_ptr (f32): 16 sectors per request where 4 would do (25%
    used); the mask compares against `n` (= 4095), ...")."""
    verdict = "" if a.verdict == "none" else VERDICT_WORDS.get(a.verdict, a.verdict) + " "
    what = f"{verdict}{a.direction}{' of ' + a.pointer if a.pointer else ''} ({a.dtype})"
    cz = a.coalescing
    unit = "sectors" if cz is None or cz.sector_bytes == 32 else f"{cz.sector_bytes}-byte lines"
    if a.uniform:
        cost = "every lane the same address (a broadcast)" + (f", {', '.join(a.lowered_as)}" if a.lowered_as else "")
    elif cz is not None and cz.sectors_per_request is not None and cz.sector_efficiency is not None:
        cost = (f"{number_words(cz.sectors_per_request)} {unit} per request"
                + (f" where {number_words(cz.ideal_sectors_per_request)} would do"
                   if cz.sector_efficiency < 0.999 else ", as few as its bytes need")
                + f" ({100 * cz.sector_efficiency:.0f}% used)")
    else:
        cost = a.summary
    why = (a.causes or a.reasons or [""])[0]
    why = why if len(why) <= 200 else why[:197].rsplit(" ", 1)[0] + "..."
    return f"{what}: {cost}" + (f"; {why}" if why and a.verdict in ("scalar", "partial") else "")


def access_text(a: Any) -> str:
    """One memory access in words: what it is, how wide, and why it is not 128-bit."""
    what = f"{a.op.replace('tt.', '')}{' of ' + a.pointer if a.pointer else ''} ({a.dtype})"
    verdict = VERDICT_WORDS.get(a.verdict, a.verdict)
    text = f"{verdict} {a.direction}: {what}"
    if a.summary:
        text += f" - {a.summary}"
    if a.causes or a.reasons:
        text += "\nwhy: " + "; ".join(a.causes or a.reasons)
    return text


SHARED_KIND_WORDS = {"load": "shared loads", "store": "shared stores", "ldmatrix": "ldmatrix", "stmatrix": "stmatrix",
                     "async_copy": "async copies into shared memory", "atomic": "shared atomics"}


def shared_text(s: Any) -> str:
    """One line's shared-memory instructions of one kind in words: cost against the ideal, and why."""
    head = f"{SHARED_KIND_WORDS.get(s.kind, s.kind)} ({s.instructions} x {', '.join(s.opcodes)})"
    if s.shared_wavefronts is None:
        return f"{head}: the address depends on loaded data or an argument; not modelled"
    cost = f"{number_words(s.shared_wavefronts)} wavefronts per request (ideal {number_words(s.ideal_shared_wavefronts)})"
    if not s.conflicted:
        return f"{head}: {cost}, no bank conflict" + (f"\nfrom: {s.ops[0]}" if s.ops else "")
    said = f"{head}: {cost}, {s.bank_conflict_ways}-way bank conflicts" + (f"\nfrom: {s.ops[0]}" if s.ops else "")
    return said + (f"\ntry: {s.suggestion}" if s.suggestion else "")


def error_markers(rec: Inspection | None) -> Markers:
    """The failed compile's line in the editor."""
    out: Markers = {}
    if rec is not None and rec.error is not None and rec.error.line:
        first = (rec.error.message or rec.error.kind).strip().splitlines()
        _add(out, "source", rec.error.line, "error", rec.error.kind, first[0] if first else rec.error.kind)
    return out


def record_markers(rec: Inspection) -> Markers:
    """Memory verdicts, spills, layout conversions and advisor findings of a successful record."""
    out: Markers = {}
    if not rec.ok or not rec.stages:
        return out
    try:
        from inspector.analysis import explain
        from inspector.analysis.context import context
        from inspector.analysis.machine_memory import machine_memory
    except ImportError:
        return out
    try:
        ex = explain(rec)
        if ex.memory is not None:
            for a in ex.memory.accesses:
                severity = VERDICT_SEVERITY.get(a.verdict)
                if a.uniform:  # one address per request: a fact, never a cost (AMD's scalar loads have no width)
                    severity = "info"
                if severity is None:
                    continue
                text = access_text(a)
                co = coalescing_marker(a)
                # the editor line: one item per access, its verdict in one line and the warp drawing
                worst = co[0] if co is not None and co[0] == "performance" else severity
                _add(out, "source", a.line, worst, f"memory-{a.verdict}" + (f" {co[1]}" if co else ""),
                     access_line(a), co[3] if co is not None else None)
                for stage, instrs in a.instructions.items():
                    for i in instrs:
                        _add(out, stage, i.line, severity, f"memory-{a.verdict}", f"{i.opcode}: {text}")
                if co is not None:
                    for stage, instrs in a.instructions.items():
                        for i in instrs:
                            _add(out, stage, i.line, co[0], co[1], co[2], co[3])
            for sh in ex.memory.shared:
                severity, kind = ("performance", "shared-conflicts") if sh.conflicted else ("info", "shared-ok")
                text = shared_text(sh)
                _add(out, "source", sh.line, severity, kind, text, sh.picture)
                for no in sh.ptx_lines:
                    _add(out, "ptx", no, severity, kind, text, sh.picture)
            for s in ex.memory.spills:
                _add(out, "source", s.line, "performance", "spill",
                     f"local memory (spills) in {s.stage}: {s.count} {s.kind.replace('_', ' ')}s, "
                     f"{s.bytes_per_thread} bytes per thread")
            ctx = context(rec)
            for stage in rec.stage_names():
                if stage not in ("ptx", "sass", "amdgcn"):
                    continue
                for i in machine_memory(ctx, stage):
                    if i.kind in ("local_load", "local_store"):
                        _add(out, stage, i.line, "performance", "spill", f"{i.opcode}: local memory (a spill)")
        if ex.layouts is not None:
            for c in ex.layouts.conversions:
                severity = "performance" if c.lowering == "shared memory" else "info"
                text = (f"layout conversion {c.src} -> {c.dst} ({'x'.join(map(str, c.shape))} {c.dtype}) through "
                        f"{c.lowering}{', inside a loop' if c.in_loop else ''}")
                _add(out, "ttgir", c.line, severity, "layout-conversion", text)
                for line in c.source_lines[:1]:
                    _add(out, "source", line, severity, "layout-conversion", text)
        for i, f in enumerate(ex.findings):
            if f.code in ACCESS_FINDINGS:  # the line's access marker says it all: it only gains the click to fix
                own = [item for item in out.get("source", {}).get(f.line or 0, [])
                       if set(item["kind"].split()) & ACCESS_FINDINGS[f.code]]
                for item in own:
                    item["fix"] = i
                if own:
                    continue
            severity = FINDING_SEVERITY.get(f.severity, "info")
            text = f.title + (f"\n{_brief(f.suggestion)}" if f.suggestion else "")
            for line in (f.lines or ([f.line] if f.line else [])):
                # `fix`: the finding's place in the advisor's list, which "Try fixes" takes
                _add(out, "source", line, severity, f"advisor-{f.code}", text,
                     fix=i if f.severity != "info" else None)
    except Exception:  # noqa: BLE001 - markers are a convenience; the panes still show
        log.exception("markers failed for %s", rec.kernel)
    return _on_user_lines(out, rec.generated.user_of()) if rec.generated is not None else out


def _on_user_lines(out: Markers, user_of: dict[int, int]) -> Markers:
    """A generated kernel's source markers (a Helion kernel's Triton lines) on the generated pane
    and on the user's line each generated line came from."""
    moved: Markers = {pane: items for pane, items in out.items() if pane != "source"}
    for line, items in out.get("source", {}).items():
        for item in items:
            for pane, at in (("triton", line), ("source", user_of.get(line))):
                _add(moved, pane, at, item["severity"], item["kind"], item["text"], item.get("warp"),
                     item.get("heat"), item.get("fix"))
    return moved


def _brief(suggestion: str, most: int = 320) -> str:
    """The suggestion's first sentences, up to about `most` characters: a hover box stays beside its
    line (the Insight view has the whole text)."""
    out = ""
    for sentence in re.split(r"(?<=[.:])\s+(?=[A-Z`])", suggestion):
        if out and len(out) + len(sentence) > most:
            return out + " (more in Insight)"
        out = f"{out} {sentence}".strip()
    return out


def merge(*parts: Markers) -> Markers:
    out: Markers = {}
    for part in parts:
        for pane, lines in part.items():
            for line, items in lines.items():
                for item in items:
                    _add(out, pane, line, item["severity"], item["kind"], item["text"], item.get("warp"),
                         item.get("heat"), item.get("fix"))
    return out


# `/*0050*/  02:-:-:Y:5  @P0 LDG.E ...`: offset, control bits (when printed), predicate, opcode
SASS_ADDRESS = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(?:[-\w]{2}:[-\w]:[-\w]:[-\w]:\d+\s+)?(?:@!?U?P\w+\s+)?"
                          r"([A-Z][A-Z0-9_.]*)")


def profile_markers(prof: Any, rec: Inspection | None = None) -> Markers:
    """A heat strip on each kernel-file line a profile measured (`inspector.profile.Profile`): its
    share of the stall samples as the strip's strength, the top reasons on hover. With the shown
    record, the stage panes too: each SASS instruction by its own samples (matched by its offset
    in the kernel and checked by its opcode: a profile of another binary marks nothing), and each
    TTGIR/PTX line with the share of the Python line it came from (Nsight Compute counts per
    Python line and per SASS instruction only; the hover says so)."""
    out: Markers = {}
    top = max((l.share for l in prof.lines), default=0.0) or 1.0
    share_of: dict[int, float] = {}
    for l in prof.lines:
        if not l.samples:
            continue
        share_of[l.line] = l.share
        reasons = ", ".join(f"{r} {n * 100 / max(l.samples, 1):.0f}%" for r, n in l.stalls[:3])
        sectors = "" if not l.sectors else f"; L2 sectors {l.sectors:,} (ideal {l.ideal_sectors or 0:,})"
        _add(out, "source", l.line, "info", "profile-heat",
             f"measured ({prof.tool}, {prof.device}): {l.share * 100:.1f}% of the stall samples ({reasons}); "
             f"{l.instructions:,} instructions{sectors}", heat=l.share / top)
    if rec is None or not rec.stages:
        return out
    _sass_heat(out, prof, rec)
    from inspector.analysis.context import context

    ctx = context(rec)
    for stage in ("ttgir", "ptx"):
        if stage not in ctx.stages:
            continue
        for no in range(1, len(ctx.lines.get(stage, [])) + 1):
            measured = [(share_of[ln], ln) for ln in ctx.line_sources(stage, no) if ln in share_of]
            if measured:
                share, ln = max(measured)
                _add(out, stage, no, "info", "profile-heat",
                     f"from line {ln}, which holds {share * 100:.1f}% of the stall samples (measured per Python "
                     f"line and per SASS instruction; a {stage.upper()} line shows its Python line's share)",
                     heat=share / top)
    return out


def _sass_heat(out: Markers, prof: Any, rec: Inspection) -> None:
    """Each profiled SASS instruction's samples on the SASS pane's line at the same offset."""
    text = rec.stages.get("sass") or ""
    at: dict[int, tuple[int, str]] = {}
    for no, line in enumerate(text.splitlines(), 1):
        m = SASS_ADDRESS.search(line)
        if m:
            at[int(m.group(1), 16)] = (no, m.group(2))
    measured = [i for l in prof.lines for i in l.sass]
    if not at or not measured:
        return
    base = min(int(i["address"], 16) for i in measured)
    total = sum(i["samples"] for i in measured) or 1
    hot = max(i["samples"] for i in measured) or 1
    placed = []
    for i in measured:
        where = at.get(int(i["address"], 16) - base)
        opcode = i["text"].split()[0] if i["text"].split() else ""
        if opcode.startswith("@"):
            opcode = i["text"].split()[1] if len(i["text"].split()) > 1 else ""
        placed.append((i, where, where is not None and where[1] == opcode))
    if sum(ok for _, _, ok in placed) < 0.9 * len(placed):  # not the binary the profile measured
        return
    for i, where, ok in placed:
        if ok and i["samples"]:
            _add(out, "sass", where[0], "info", "profile-heat",
                 f"measured ({prof.tool}): {i['samples']:,} stall samples on this instruction "
                 f"({i['samples'] * 100 / total:.1f}% of the kernel's); {i['instructions']:,} executed",
                 heat=i["samples"] / hot)
