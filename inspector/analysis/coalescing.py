"""Coalescing: how many memory sectors one warp's request touches, against the fewest it could.

Vector width (memory.py) says how many bits each thread moves per instruction; coalescing says
how well the 32 (AMD: 64) lanes of one instruction share memory transactions. NVIDIA's memory
system moves 32-byte sectors (four to a 128-byte line); a request of 32 lanes x 4 contiguous
bytes needs 4 sectors, the same lanes 16 bytes apart need 16. This module computes, per access:

- which lane holds which elements, per register, from the TTGIR layout of the pointer tensor
  (blocked, slice and linear encodings, as Triton's linear layouts define them: lanes.py);
- each element's byte address, by evaluating the TTGIR that computes the pointer (and the mask)
  with integers: the recorded launch's scalar arguments, program 0, a loop's first iteration
  (address_values.py).
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

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ..hardware.architectures import memory_granules
from .address_values import (AccessSite, Evaluator, Memory, Unknown, addresses, iterations, loop_range,
                             representative_scalars, site_values)
from .lanes import coordinates, layout_bases
from .mlir import Module, Op

_SHIFT_PROBE = 1_000_003  # a loaded scalar's value in the second evaluation (tells shift from scale)


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


_NONE = np.iinfo(np.int64).max  # an invalid entry's value while counting


def _distinct(values: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """Per row of a 2-D array: how many distinct values its valid entries hold."""
    v = np.where(valid, values, _NONE)
    v.sort(axis=1)
    new = np.ones(v.shape, dtype=bool)
    new[:, 1:] = v[:, 1:] != v[:, :-1]
    return (new & (v != _NONE)).sum(axis=1)


def _request_counts(addr: np.ndarray, mask: np.ndarray | None, coords: np.ndarray, vec: int, eb: int, sector: int,
                    line: int, dedupe: bool = True, lines: bool = True, writes: bool = False) -> dict[str, np.ndarray]:
    """Per request (warp, register group): active lanes, distinct bytes, sectors, ideal sectors, and
    (with `lines`) lines. `writes` (a store, an atomic): a warp holding the same elements as an
    earlier one (a layout replicated across warps, as a reduction's result is) does not issue it:
    Triton masks the copies off so that each element is written once."""
    idx = tuple(coords[..., d] for d in range(coords.shape[-1]))
    a = addr[idx] if addr.ndim else np.broadcast_to(addr, coords.shape[:-1])  # (W, L, R)
    act = (mask[idx] if mask.ndim else np.broadcast_to(mask, a.shape)) if mask is not None else np.ones(a.shape, bool)
    W, L, R = a.shape
    vec = max(1, min(vec, R))
    K = R // vec
    a = a[:, :, :K * vec].reshape(W, L, K, vec).transpose(0, 2, 1, 3).reshape(W * K, L * vec)
    act = act[:, :, :K * vec].reshape(W, L, K, vec).transpose(0, 2, 1, 3).reshape(W * K, L * vec)
    if writes and W > 1:
        _, first = np.unique(coords.reshape(W, -1), axis=0, return_index=True)
        copy = np.ones(W, bool)
        copy[first] = False
        act = act.copy()
        act.reshape(W, K, L * vec)[copy] = False
    if dedupe and K > 1:
        # two loads of a thread from the same addresses are one (ptxas merges them: a broadcast
        # value loaded into 8 registers is one LDG in SASS): such a request is issued once
        keyed = np.where(act, a, -1).reshape(W, K, L * vec)
        if W * K * K * L * vec <= 1 << 24:  # every pair of a warp's requests compared at once
            same = (keyed[:, :, None, :] == keyed[:, None, :, :]).all(axis=3)  # (W, K earlier, K later)
            repeat = (np.triu(same, k=1)).any(axis=1)  # the same as an earlier request of its warp
            act[repeat.reshape(W * K)] = False
        else:
            for w in range(W):
                _, first = np.unique(keyed[w], axis=0, return_index=True)
                repeat = np.ones(K, bool)
                repeat[first] = False
                act[w * K:(w + 1) * K][repeat] = False
    nbytes = _distinct(a, act) * eb
    return {"active": act.reshape(W * K, L, vec).any(axis=2).sum(axis=1), "bytes": nbytes,
            "sectors": _distinct(a // sector, act), "ideal": -(-nbytes // sector),
            "lines": _distinct(a // line, act) if lines else None, "shape": np.array([W, K])}


def _requests(addr: np.ndarray, mask: np.ndarray | None, coords: np.ndarray, vec: int, eb: int,
              sector: int, line: int, lanes_of_warp: int | None = None, dedupe: bool = True,
              writes: bool = False) -> list[Request]:
    """Every request of one program with at least one active lane; for warp `lanes_of_warp`, which
    sector each lane's first element falls in (for drawing)."""
    c = _request_counts(addr, mask, coords, vec, eb, sector, line, dedupe, writes=writes)
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
               arch: str | int, values: dict[str, Any], grid: list[int] | None,
               memory: Memory | None = None) -> Coalescing:
    """The coalescing of one access of the representative program (see the module docstring);
    `memory`: what the launch's index tensors held, where a capture carried them (loads through
    them are then values, not unknowns)."""
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
    bases = layout_bases(site.encoding, mod, site.shape)
    if bases is None:
        return Coalescing("unknown", f"its layout ({site.encoding}) is not one this analysis models", **base)
    coords = coordinates(bases, len(site.shape))
    scalars = representative_scalars(values)
    g = tuple((list(grid or []) + [1, 1, 1])[:3])
    addr, mask, ev = addresses(site, mod, scalars, (0, 0, 0), g, 0, memory)
    if isinstance(addr, Unknown) and not addr.loaded:
        return Coalescing("unknown", f"the analysis could not follow the address ({addr.origin})", **base)
    if isinstance(addr, Unknown):
        return _data_dependent(f"the addresses depend on {addr.origin} (a gather)", [addr.origin], site, coords,
                               vector_bits, base)
    addr = np.broadcast_to(addr, site.shape)
    mask_note = None
    if site.mask and (isinstance(mask, Unknown) or _mask_uses_unknowns(site, mod, scalars, g, memory)):
        mask, mask_note = None, "the mask depends on values the compile cannot know: every lane counted as active"
    elif mask is not None:
        mask = np.broadcast_to(mask, site.shape)
    eb = site.element_bytes
    vec = max(1, (vector_bits or eb * 8) // (eb * 8))
    dedupe = _direction(site.op) == "load" and "isVolatile = true" not in site.op.text
    writes = _direction(site.op) != "load"
    reqs = _requests(addr, mask, coords, vec, eb, sector, line, lanes_of_warp=0, dedupe=dedupe, writes=writes)
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
    a0 = _lane_addresses(addr, coords)
    steps = np.diff(a0)
    if len(steps) and np.all(steps == steps[0]):
        cz.lane_stride_bytes = int(steps[0])
    cz.depends_on = sorted(ev.used)
    if ev.used:
        # what the unknown values do: a second run with other stand-ins tells a shift from a scale
        addr2, _, _ = addresses(site, mod, scalars, (0, 0, 0), g, _SHIFT_PROBE)
        if isinstance(addr2, Unknown) or not _same_pattern(addr, np.broadcast_to(addr2, site.shape)):
            return _data_dependent(f"the pattern of the addresses depends on {', '.join(sorted(ev.used))}, which the "
                                   f"compile cannot know", sorted(ev.used), site, coords, vector_bits, base)
        addr3, _, _ = addresses(site, mod, scalars, (0, 0, 0), g, 1)
        mis = _requests(np.broadcast_to(addr3, site.shape), None if mask is None else mask, coords, vec, eb, sector,
                        line, dedupe=dedupe, writes=writes)
        if mis:
            cz.misaligned_sectors_per_request = sum(r.sectors for r in mis) / len(mis)
        cz.assumptions.append(f"{', '.join(sorted(ev.used))} taken as a multiple of {sector} bytes (the compile cannot "
                              f"know it); misaligned, a request touches "
                              f"{_fmt(cz.misaligned_sectors_per_request)} sectors instead of {_fmt(cz.sectors_per_request)}")
    if mask_note:
        cz.assumptions.append(mask_note)
    cz.assumptions.append("pointer arguments start 128-byte aligned (as PyTorch allocates); program 0"
                          + (", the loop's first iteration" if site.op.loop_depth else ""))
    cz.note = _describe(cz, vec, eb)
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


def _mask_uses_unknowns(site: AccessSite, mod: Module, scalars: dict[str, int], grid: tuple[int, int, int],
                        memory: Memory | None = None) -> bool:
    ev = Evaluator(mod, scalars, (0, 0, 0), grid, 0, memory)
    ev.value(site.mask or "")
    return bool(ev.used)


def _lane_addresses(addr: np.ndarray, coords: np.ndarray) -> np.ndarray:
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


def _describe(cz: Coalescing, vec: int, eb: int) -> str:
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

class ModelStopped(Exception):
    """`launch_sectors` was asked to stop (its caller stopped waiting for it)."""


def launch_sectors(sites: list[tuple[AccessSite, int | None]], mod: Module, *, backend: str, arch: str | int,
                   values: dict[str, Any], grid: list[int], max_requests: int = 1 << 24,
                   stop: Callable[[], bool] | None = None, memory: Memory | None = None) -> tuple[int, int] | None:
    """(sectors, ideal sectors) of `sites` (the TTGIR ops of one source line, each with its vector
    width in bits) summed over every program of `grid` and every iteration of a loop around them:
    the figures Nsight Compute reports as `L2 Theoretical Sectors Global` and its ideal for the line.
    None when not computable: a gather or a value loaded from memory in the address, a TMA copy,
    an unmodelled layout, loops nested two deep, or more than `max_requests` requests. `stop`,
    asked before each program: when it says so, raises ModelStopped (a big launch takes seconds)."""
    return launch_sectors_by_line({0: sites}, mod, backend=backend, arch=arch, values=values, grid=grid,
                                  max_requests=max_requests, stop=stop, memory=memory)[0]


def _counted(counted: dict[tuple, tuple[int, int, int]], site: AccessSite, prep: tuple, addr: Any,
             mask: np.ndarray | None) -> tuple[int, int, int]:
    """(sectors, ideal sectors, active requests) of one site's addresses in one program and
    iteration, remembered in `counted` by what they depend on: the addresses less the lowest, that
    lowest address's place in a cache line, and the mask. Counts do not change when every address
    moves by whole lines, and programs of a regular kernel differ by just that: most are looked up."""
    coords, vec, eb, sector, line = prep
    a = np.ascontiguousarray(np.broadcast_to(addr, site.shape))
    low = int(a.min()) if a.size else 0
    key = (id(site), low % line, (a - low).tobytes(), None if mask is None else np.ascontiguousarray(mask).tobytes())
    got = counted.get(key)
    if got is None:
        c = _request_counts(a, mask, coords, vec, eb, sector, line,
                            _direction(site.op) == "load" and "isVolatile = true" not in site.op.text, lines=False,
                            writes=_direction(site.op) != "load")
        on = c["active"] > 0
        got = (int(c["sectors"][on].sum()), int(c["ideal"][on].sum()), int(on.sum()))
        if len(counted) >= 4096:  # an irregular kernel: keep the memory bounded
            counted.clear()
        counted[key] = got
    return got


def launch_sectors_by_line(lines: dict[int, list[tuple[AccessSite, int | None]]], mod: Module, *, backend: str,
                           arch: str | int, values: dict[str, Any], grid: list[int], max_requests: int = 1 << 24,
                           stop: Callable[[], bool] | None = None,
                           memory: Memory | None = None) -> dict[int, tuple[int, int] | None]:
    """`launch_sectors` of several lines at once: each program is evaluated once for all of them,
    and each loop stepped through once for all their sites inside it (a line's result does not
    depend on the others': each site's address is judged by the unknowns its own values needed)."""
    g = tuple((list(grid) + [1, 1, 1])[:3])
    warps = int(mod.attrs.get("ttg.num-warps", "4") or 4)
    out: dict[int, tuple[int, int] | None] = {}
    # per loop (None: outside every loop): the line's sites there, each prepared, or a scalar site
    by_loop: dict[int | None, list[tuple[int, AccessSite, Any]]] = {}
    for no, sites in lines.items():
        mine: list[tuple[int | None, AccessSite, Any]] = []
        for site, vector_bits in sites:
            loop = site.op.loop
            if site.op.loop_depth > 1 or (loop is not None and loop.line not in mod.loops):
                break
            if not site.shape and (site.pointer is not None or site.offsets is not None):
                mine.append((None if loop is None else loop.line, site, None))  # one request per warp, one sector
                continue
            if site.pointer is None and site.offsets is None or site.encoding is None:
                break
            bases = layout_bases(site.encoding, mod, site.shape)
            if bases is None:
                break
            sector, line = memory_granules(backend, arch, _direction(site.op))
            eb = site.element_bytes
            mine.append((None if loop is None else loop.line, site,
                         (coordinates(bases, len(site.shape)), max(1, (vector_bits or eb * 8) // (eb * 8)), eb,
                          sector, line)))
        else:
            out[no] = (0, 0)
            for key, site, prep in mine:
                by_loop.setdefault(key, []).append((no, site, prep))
            continue
        out[no] = None
    requests = {no: 0 for no in out}
    counted: dict[tuple, tuple[int, int, int]] = {}
    scalars = representative_scalars(values)
    programs = g[0] * g[1] * g[2]
    for index in range(programs):
        if not any(out[no] is not None for no in out):
            break
        if stop is not None and stop():
            raise ModelStopped(f"stopped after {index:,} of {programs:,} programs")
        z, rest = divmod(index, g[0] * g[1])
        y, x = divmod(rest, g[0])
        ev = Evaluator(mod, scalars, (x, y, z), g, 0, memory)
        for members in by_loop.values():
            members = [m for m in members if out[m[0]] is not None]
            if not members:
                continue
            loop = members[0][1].op.loop
            if loop is not None and loop_range(ev, loop) is None:  # bounds not known numbers
                for no, _, _ in members:
                    out[no] = None
                continue
            for step in iterations(ev, loop):
                for no, site, prep in members:
                    got = out[no]
                    if got is None:
                        continue
                    if prep is None:
                        # a scalar load is issued by every warp; a scalar store or atomic by one thread
                        # of the program (Triton predicates it so), as Nsight Compute counts them
                        per = warps if _direction(site.op) == "load" else 1
                        out[no] = (got[0] + per, got[1] + per)
                        requests[no] += per
                        continue
                    (addr, mask), taint = step.tainted(lambda: site_values(step, site))
                    if isinstance(addr, Unknown) or taint:
                        out[no] = None
                        continue
                    sectors, ideal, active = _counted(counted, site, prep, addr, mask)
                    out[no] = (got[0] + sectors, got[1] + ideal)
                    requests[no] += active
                    if requests[no] > max_requests:
                        out[no] = None
    return out
