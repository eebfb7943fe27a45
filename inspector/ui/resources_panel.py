"""The resources line: registers, spills, shared memory, blocks per SM, occupancy and its limiter,
one compact line above the workbench (the figures a kernel author checks after every edit)."""

from __future__ import annotations

import streamlit as st

from inspector.record import Inspection
from inspector.occupancy.words import limiter_words



def kib(n: int | None) -> str:
    if n is None:
        return "–"
    return f"{n / 1024:.1f} KiB" if n >= 1024 else f"{n} B"


def card_figures(rec: Inspection) -> dict[str, str]:
    """The card's label -> value, from the record (NVIDIA and AMD read alike)."""
    r = rec.resources
    occ = rec.occupancy or {}
    amd = rec.backend == "hip"
    if amd:
        regs = f"{r.vgprs} VGPR" + (f" + {r.agprs} AGPR" if r.agprs else "") + f" · {r.sgprs} SGPR"
        spills = f"{(r.vgpr_spills or 0) + (r.sgpr_spills or 0)} registers"  # AMD counts spilled registers
    else:
        regs = "–" if r.registers is None else str(r.registers)
        # bytes spilled per thread (ptxas' spill stores), as the advisor's finding and the fixes count them
        spills = "–" if r.spills is None and r.spill_store_bytes is None else f"{r.spill_store_bytes or 0} B"
    out = {
        "Registers / thread" if not amd else "Registers": regs,
        "Spills": spills,
        "Shared memory" if not amd else "LDS": kib(r.shared_bytes),
        "Blocks / SM" if not amd else "Workgroups / CU": str(occ.get("blocks_per_sm", "–")),
        "Occupancy": f"{100 * occ['occupancy']:.0f}%" if "occupancy" in occ else "–",
        "Limited by": limiter_words(occ.get("occupancy"), occ.get("limiters")),
    }
    return out


def waves_words(waves: float) -> str:
    """A fractional wave count with its noun, never reading 0.00 for a small grid: two significant
    digits ("0.0019 waves", "1 wave", "12.5 waves")."""
    n = f"{waves:.1f}" if waves >= 10 else (f"{waves:.2g}" if waves > 0 else "0")
    return f"{n} wave" if n == "1" else f"{n} waves"


def percent_words(fraction: float) -> str:
    """A share in %, with two significant digits below 1 % (0.16 %, not 0 %)."""
    pct = 100 * fraction
    return f"{pct:.2g} %" if 0 < pct < 1 else f"{pct:.0f} %"


def unit_name(rec_backend: str, plural: bool = True) -> str:
    """NVIDIA's SMs or AMD's CUs."""
    return ("SMs" if plural else "SM") if rec_backend == "cuda" else ("CUs" if plural else "CU")


def resources_line(rec: Inspection) -> None:
    """The figures of the shown record in one line, and where they come from in a second one."""
    if not rec.ok or not rec.stages:
        return
    figures = card_figures(rec)
    st.markdown(" · ".join(f"{label} **{value}**" for label, value in figures.items()),
                help="From the compiled kernel (ptxas / the AMD backend) and the occupancy model of the target; "
                     "the Occupancy tab shows the what-if.")
    st.caption(" · ".join(_context_bits(rec)))


def _context_bits(rec: Inspection) -> list[str]:
    occ = rec.occupancy or {}
    bits = [f"**{rec.kernel}** for `{rec.target}`" + (f" ({rec.device_name})" if rec.device_name else ""),
            f"{rec.resources.num_warps} warps × {rec.warp_size} threads, {rec.resources.num_stages} stages"]
    w = occ.get("waves")
    if rec.grid:
        grid = "×".join(map(str, rec.grid))
        bits.append(f"grid {grid}" + (f" = {waves_words(w['fractional_waves'])} on {occ.get('gpu')} "
                                      f"({w['sm_count']} {unit_name(rec.backend)})" if w else ""))
    bits.append(f"Triton {rec.triton_version}")
    bits.append("from the cache" if rec.cached else f"compiled in {rec.compile_seconds:.1f} s")
    return bits
