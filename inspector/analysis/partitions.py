"""Warp-specialised partitions of a kernel (Gluon's `gl.warp_specialize`, or Triton's automatic
warp specialisation), read from the TTGIR: each partition's warps and the registers per thread it
asks for, and the `setmaxnreg` values the PTX moves registers with.

`ttg.warp_specialize(...) attributes {requestedRegisters = array<i32: 160, 160, 24>}` names one
figure per worker partition (`partition0(...) num_warps(4) {`, ...); the default partition runs
with the module's `"ttg.num-warps"` and keeps the registers the others leave (the PTX's
`setmaxnreg.inc` for it). Nothing here is computed: each figure is printed by the compiler.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_SPECIALIZE = re.compile(r"ttg\.warp_specialize\(.*?\)\s*attributes\s*\{[^}]*?requestedRegisters = array<i32:\s*"
                         r"([\d,\s]+)>")
_PARTITION = re.compile(r"^\s*partition(\d+)\(.*\)\s*num_warps\((\d+)\)\s*\{", re.M)
_MODULE_WARPS = re.compile(r'"ttg\.num-warps"\s*=\s*(\d+)')
_SETMAXNREG = re.compile(r"setmaxnreg\.(inc|dec)\.sync\.aligned\.u32\s+(\d+)")


@dataclass
class Partition:
    """One partition: "default" or "partition0", ...; its warps; registers per thread it asks for
    (None for the default partition, which keeps what the others leave)."""

    name: str
    warps: int
    registers: int | None


def partitions(ttgir: str) -> list[Partition]:
    """The partitions of the first `ttg.warp_specialize` in the TTGIR (empty when it has none)."""
    found = _SPECIALIZE.search(ttgir)
    if found is None:
        return []
    requested = [int(x) for x in found.group(1).replace(" ", "").split(",") if x]
    module = _MODULE_WARPS.search(ttgir)
    out = [Partition("default", int(module.group(1)) if module else 0, None)]
    for m in _PARTITION.finditer(ttgir, found.end()):
        i = int(m.group(1))
        out.append(Partition(f"partition{i}", int(m.group(2)), requested[i] if i < len(requested) else None))
    return out


def register_moves(ptx: str) -> list[tuple[str, int]]:
    """The PTX's `setmaxnreg` instructions in order: ("inc" | "dec", registers per thread)."""
    return [(kind, int(n)) for kind, n in _SETMAXNREG.findall(ptx)]
