"""Shared-memory wavefronts and bank conflicts per instruction, from each lane's address.

NVIDIA's shared memory has 32 banks of 4 bytes; one wavefront serves at most one distinct 4-byte
word per bank. The rules below are the ones Nsight Compute's `L1 Wavefronts Shared` counts on
sm_90 (measured lane pattern by lane pattern: benchmarks/shared_cases.py, docs/shared-memory.md):

- A thread moving more than 4 bytes (`.v2`, `.v4`, 64- and 128-bit, a 16-byte ldmatrix row,
  cp.async of 16 bytes) covers consecutive words. Two neighbouring lanes (0-1, 2-3, ...) that read
  the same address count once (loads only: a store's lanes all count; lanes further apart do not
  share: a 128-bit broadcast costs 2 wavefronts, a 64-bit one 1). The resulting addresses, in
  lane order, are served in phases of 128 bytes (16 of 8 bytes, 8 of 16 bytes).
- Each phase costs as many wavefronts as its busiest bank has distinct words (lanes reading the
  same word share it: a broadcast). The ideal is one wavefront per phase.

AMD's LDS (64 banks of 4 bytes on CDNA3/CDNA4, 32 on RDNA) is not modelled: its ds_read_b64 /
b128 phases differ and nothing here has been checked against a measurement.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np

from .ptx_lanes import LaneAccess, shared_lane_accesses

BANKS = 32
BANK_BYTES = 4
PHASE_BYTES = BANKS * BANK_BYTES


@dataclass
class SharedCost:
    """What one shared-memory instruction costs a warp: wavefronts per request against the ideal."""

    line: int  # its PTX line
    opcode: str
    op: str  # load | store | atomic | ldmatrix | stmatrix | async_copy
    bytes_per_lane: int
    wavefronts: float | None  # per request (one warp's instruction), averaged over the block's warps
    ideal: float | None  # the same bytes with no conflict
    ways: int | None  # the worst phase's busiest bank: distinct words it serves (1: conflict-free)
    why_unknown: str | None = None
    access: LaneAccess | None = field(default=None, repr=False)  # its lanes, for `phase_picture`


def _phases(addresses: np.ndarray, active: np.ndarray, width: int, load: bool) -> list[list[tuple[int, int]]]:
    """The request's phases: each a list of (first lane, address) it serves, in lane order."""
    group = 2 if load and width > BANK_BYTES else 1
    per_phase = max(1, PHASE_BYTES // max(width, BANK_BYTES))
    items: list[tuple[int, int]] = []
    for start in range(0, len(addresses), group):
        seen: list[int] = []
        for lane in range(start, min(start + group, len(addresses))):
            if active[lane] and int(addresses[lane]) not in seen:
                seen.append(int(addresses[lane]))
                items.append((lane, int(addresses[lane])))
    return [items[i:i + per_phase] for i in range(0, len(items), per_phase)]


def _words_per_bank(phase: list[tuple[int, int]], width: int) -> dict[int, set[int]]:
    per_bank: dict[int, set[int]] = {}
    for _lane, address in phase:
        first = address // BANK_BYTES
        for word in range(first, first + max(1, -(-width // BANK_BYTES))):
            per_bank.setdefault(word % BANKS, set()).add(word)
    return per_bank


def warp_wavefronts(addresses: np.ndarray, active: np.ndarray, width: int, load: bool = True
                    ) -> tuple[int, int, int]:
    """(wavefronts, ideal, worst bank's distinct words) of one warp's request.

    `addresses`: each lane's byte offset (lanes that give none: `active` False); `width`: bytes per
    lane; `load`: two neighbouring lanes reading the same address count once (stores: every lane counts).
    """
    width = max(width, 1)
    wavefronts = ways = 0
    phases = _phases(addresses, active, width, load)
    for phase in phases:
        busiest = max(len(words) for words in _words_per_bank(phase, width).values())
        wavefronts += busiest
        ways = max(ways, busiest)
    return wavefronts, len(phases), ways


def phase_picture(access: LaneAccess) -> dict | None:
    """The hover drawing of one instruction: the first warp's worst phase, each lane's first bank
    (-1: not in that phase) and the distinct words each of the 32 banks serves in it."""
    if access.addresses is None:
        return None
    lanes = slice(0, min(32, access.lanes_used))
    addresses, active = access.addresses[lanes], access.active[lanes]
    phases = _phases(addresses, active, max(access.bytes_per_lane, 1), access.op in ("load", "ldmatrix"))
    if not phases:
        return None
    depths = [_words_per_bank(p, access.bytes_per_lane) for p in phases]
    worst = max(range(len(phases)), key=lambda i: max(len(w) for w in depths[i].values()))
    served = {int(a) for _l, a in phases[worst]}
    banks = [int(addresses[l]) // BANK_BYTES % BANKS if active[l] and int(addresses[l]) in served else -1
             for l in range(len(addresses))]
    return {"banks": banks, "depth": [len(depths[worst].get(b, ())) for b in range(BANKS)],
            "phase": worst + 1, "phases": len(phases), "bytes": access.bytes_per_lane}


def _warp_cost(addresses: np.ndarray, active: np.ndarray, width: int, load: bool,
               memo: dict[bytes, tuple[int, int, int]]) -> tuple[int, int, int]:
    """`warp_wavefronts`, remembered per lane pattern: banks and distinct words do not change when
    every lane's address moves by the same multiple of 128 bytes (the same instruction's other
    offsets, other warps, other stage buffers), so Triton's unrolled copies cost one evaluation."""
    if not active.any():
        return 0, 0, 0
    base = int(addresses[active].min()) // PHASE_BYTES * PHASE_BYTES
    key = (addresses - base).tobytes() + active.tobytes() + bytes([width & 0xFF, load])
    hit = memo.get(key)
    if hit is None:
        hit = memo[key] = warp_wavefronts(addresses, active, width, load)
    return hit


def instruction_cost(access: LaneAccess, warp: int = 32, memo: dict | None = None) -> SharedCost:
    """Wavefronts per request of one instruction, averaged over the warps that execute it."""
    if access.addresses is None:
        return SharedCost(access.line, access.opcode, access.op, access.bytes_per_lane, None, None, None,
                          "its address depends on a value the PTX loads or is passed")
    memo = {} if memo is None else memo
    load = access.op in ("load", "ldmatrix")
    totals, ideals, ways, warps = 0, 0, 0, 0
    for start in range(0, len(access.addresses), warp):
        lanes = slice(start, start + min(warp, access.lanes_used))
        # a warp whose lanes are all predicated off still issues the request: it costs nothing
        w, i, k = _warp_cost(access.addresses[lanes], access.active[lanes], access.bytes_per_lane, load, memo)
        totals, ideals, ways, warps = totals + w, ideals + i, max(ways, k), warps + 1
    return SharedCost(access.line, access.opcode, access.op, access.bytes_per_lane, totals / warps,
                      ideals / warps, ways, access=access)


def shared_costs(ptx: str, threads: int) -> list[SharedCost]:
    """Every shared-memory instruction of a kernel's PTX with its wavefronts (`threads`: the block's)."""
    memo: dict[bytes, tuple[int, int, int]] = {}
    return [instruction_cost(a, memo=memo) for a in shared_lane_accesses(ptx, threads)]


def in_force(chains: dict[int, tuple], line: int) -> tuple:
    """The location chains of a PTX line; for code the compiler placed at `.loc 1 0 0` (no line:
    a Gluon partition's shared reads), those of the nearest line above that has one, which is
    where Nsight Compute's line table puts it too. (Triton's one-line inline-asm blocks carry the
    location in force at the block: `ptx_locations`.)"""
    for no in range(line, max(line - 64, 0), -1):
        if chains.get(no):
            return chains[no]
    return ()


# the SASS family each kind of PTX instruction becomes, to set the model beside Nsight Compute's rows
SASS_FAMILY = {"load": "LDS", "store": "STS", "ldmatrix": "LDSM", "stmatrix": "STSM", "async_copy": "LDGSTS",
               "atomic": "ATOMS"}


def costs_by_line(ptx: str, threads: int) -> dict[tuple[str, int, str], tuple[float | None, float | None, int]]:
    """Per (file name, line, SASS family) of the innermost source frame: the model's mean wavefronts and
    ideal per request over the PTX instructions there (None when one's address is unknown), and their count."""
    from .locations import ptx_locations

    locs = ptx_locations(ptx)
    acc: dict[tuple[str, int, str], list] = {}
    for cost in shared_costs(ptx, threads):
        chains = in_force(locs.chains, cost.line)
        if not chains:
            continue
        file, line, _ = chains[0][0]
        a = acc.setdefault((os.path.basename(file), line, SASS_FAMILY[cost.op]), [0.0, 0.0, 0, False])
        a[2] += 1
        if cost.wavefronts is None:
            a[3] = True
        else:
            a[0], a[1] = a[0] + cost.wavefronts, a[1] + cost.ideal
    return {k: ((None, None) if a[3] else (a[0] / a[2], a[1] / a[2])) + (a[2],) for k, a in acc.items()}
