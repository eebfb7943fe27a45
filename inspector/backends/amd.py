"""AMD: resources from the AMDGCN assembly's code-object metadata (AMDGPU backend).

The AMDGCN text carries the kernel descriptor as YAML metadata (LLVM AMDGPUUsage.rst, "Code
Object V5 Metadata"), e.g.

      - .agpr_count:     0
        .group_segment_fixed_size: 0        <- LDS bytes per workgroup
        .private_segment_fixed_size: 0      <- scratch bytes per work-item
        .sgpr_count:     22
        .sgpr_spill_count: 0
        .vgpr_count:     9
        .vgpr_spill_count: 0

and the backend's own occupancy estimate as a comment: "; Occupancy: 8" (waves per SIMD).

On CDNA (gfx90a and later) `.vgpr_count` is the unified total, architectural VGPRs plus AGPRs
(`.amdhsa_accum_offset` marks where the AGPRs start); the architectural count alone is in the
comment "; NumVgprs: 128". Triton's LDS is dynamic: `.group_segment_fixed_size` is 0 and the
launch passes `metadata.shared` bytes, so the LDS a workgroup uses is their sum.
"""

from __future__ import annotations

import re
from typing import Callable

from ..record import Resources

STAGES = ("ttir", "ttgir", "llir", "amdgcn")

META_FIELD = re.compile(r"^\s*-?\s*\.(?P<key>[a-z_]+):\s+(?P<value>\d+)\s*$", re.MULTILINE)
# "; NumAgprs: 0"
NUM_AGPRS = re.compile(r"^; NumAgprs: (\d+)", re.MULTILINE)
# "; NumVgprs: 128" (architectural VGPRs only)
NUM_VGPRS = re.compile(r"^; NumVgprs: (\d+)", re.MULTILINE)
# "; Occupancy: 8"
OCCUPANCY = re.compile(r"^; Occupancy: (\d+)", re.MULTILINE)


# LLVM IR's inline assembly: `call float asm "rcp.rn.f32 $0, $1;", "=f,f"(float %250) #6, !dbg !40`
LLVM_INLINE_ASM = re.compile(r'\basm (?:sideeffect )?(?:alignstack )?"((?:[^"\\]|\\.)*)", "([^"]*)".*?(?:!dbg !(\d+))?$',
                             re.MULTILINE)
DI_LINE = re.compile(r"^!(\d+) = (?:distinct )?!DILocation\(line: (\d+)", re.MULTILINE)
# The AMDGPU asm printer wraps each inline-assembly block it emits in these comments.
ASM_BLOCK = ";;#ASMSTART"


def dropped_inline_asm(llir: str, amdgcn: str) -> list[tuple[str, str, int | None]]:
    """Inline assembly the LLVM IR calls that the AMDGCN leaves out: (text, constraints, source
    line) once each; empty when the AMDGCN holds any inline-assembly block. NVIDIA's (PTX text,
    constraints such as "=f,f" that AMDGPU has no register class for) is dropped without an error,
    and with it what its result feeds: a copy through `rcp.rn.f32` compiled, for gfx942, to a
    store of a value made from the thread index (Triton 3.9, LLVM's AMDGPU backend)."""
    if ASM_BLOCK in amdgcn:
        return []
    lines = {int(n): int(line) for n, line in DI_LINE.findall(llir)}
    out: dict[tuple[str, str], int | None] = {}
    for text, constraints, dbg in LLVM_INLINE_ASM.findall(llir):
        # LLVM escapes a string's bytes (`\0A` a newline): the assembly as written, on one line
        text = " ".join(re.sub(r"\\([0-9A-Fa-f]{2})", lambda m: chr(int(m.group(1), 16)), text).split())
        out.setdefault((text, constraints), lines.get(int(dbg)) if dbg else None)
    return [(text, constraints, line) for (text, constraints), line in out.items()]


def parse_amdgcn_metadata(amdgcn: str) -> dict[str, int]:
    """The numeric fields of the first kernel's code-object metadata."""
    out: dict[str, int] = {}
    for m in META_FIELD.finditer(amdgcn):
        out.setdefault(m.group("key"), int(m.group("value")))
    if "agpr_count" not in out and (m := NUM_AGPRS.search(amdgcn)):
        out["agpr_count"] = int(m.group(1))
    if m := NUM_VGPRS.search(amdgcn):
        out["arch_vgpr_count"] = int(m.group(1))
    if m := OCCUPANCY.search(amdgcn):
        out["occupancy"] = int(m.group(1))
    return out


DEFERRABLE: tuple[str, ...] = ()  # AMDGCN comes from the compiler itself: nothing is made later


def binary(asm: dict) -> bytes:
    return b""


def extra_stages(asm: dict, skip: tuple[str, ...] | list[str] = ()) -> dict[str, str]:
    return {}


def stages_from_binary(data: bytes, stages: list[str]) -> dict[str, str]:
    return {}


def start_resources(asm: dict, metadata: dict, log: str) -> Callable[[], Resources]:
    """`resources`, as NVIDIA's backend starts its tool: here all is read from the text at once."""
    r = resources(asm, metadata, log)
    return lambda: r


def resources(asm: dict, metadata: dict, log: str) -> Resources:
    meta = parse_amdgcn_metadata(asm.get("amdgcn", ""))
    r = Resources.from_metadata(metadata)
    r.agprs = meta.get("agpr_count")
    r.vgprs = meta.get("arch_vgpr_count")
    if r.vgprs is None and meta.get("vgpr_count") is not None:  # no comment: the total less the AGPRs
        r.vgprs = meta["vgpr_count"] - (r.agprs or 0)
    r.sgprs = meta.get("sgpr_count")
    r.vgpr_spills = meta.get("vgpr_spill_count")
    r.sgpr_spills = meta.get("sgpr_spill_count")
    r.lds_bytes = meta.get("group_segment_fixed_size", 0) + r.shared_bytes
    r.scratch_bytes = meta.get("private_segment_fixed_size")
    r.amd_occupancy = meta.get("occupancy")
    r.spills = (r.vgpr_spills or 0) + (r.sgpr_spills or 0) if meta else None
    r.local_bytes = r.scratch_bytes
    r.source = "amdgcn"
    return r
