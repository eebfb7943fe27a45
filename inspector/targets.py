"""Compile targets: parsing names like `sm_90` / `gfx942` / `native` and listing candidates.

A target is what Triton calls a `GPUTarget(backend, arch, warp_size)`: NVIDIA targets are a
compute capability (`sm_90` -> arch 90, warp 32), AMD targets an architecture name (`gfx942`,
wave 64 on CDNA, 32 on RDNA). Which candidates the installed Triton really builds is found by
compiling a tiny kernel for each (see `inspector.compile.api.list_targets`), not assumed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# NVIDIA compute capabilities worth offering; which ones build depends on the ptxas that the
# installed Triton ships (sm_75 was dropped by CUDA 13's ptxas, for instance).
NVIDIA_CANDIDATES = (75, 80, 86, 87, 89, 90, 100, 103, 110, 120, 121)
# AMD: CDNA (wave64) data-centre parts and RDNA (wave32) consumer parts Triton's backend knows.
AMD_CANDIDATES = ("gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1101", "gfx1200", "gfx1201")
# The targets the project promises work (tests compile every bundled kernel for these).
DEFAULT_TARGET = "sm_90"

_SM_RE = re.compile(r"^sm_?(\d{2,3})a?$", re.IGNORECASE)
_GFX_RE = re.compile(r"^gfx[0-9a-f]{3,4}$", re.IGNORECASE)


class UnknownTargetError(ValueError):
    """Raised for a target name that is neither an NVIDIA sm_XY nor an AMD gfxNNN name."""


@dataclass(frozen=True)
class Target:
    """One compile target. `arch` is an int capability for CUDA and a gfx name for HIP."""

    backend: str  # "cuda" or "hip", as Triton names its backends
    arch: int | str
    warp_size: int

    @property
    def name(self) -> str:
        return f"sm_{self.arch}" if self.backend == "cuda" else str(self.arch)

    @property
    def vendor(self) -> str:
        return "nvidia" if self.backend == "cuda" else "amd"

    @property
    def capability(self) -> tuple[int, int] | None:
        """(major, minor) for NVIDIA targets, None for AMD."""
        if self.backend != "cuda":
            return None
        return int(self.arch) // 10, int(self.arch) % 10

    def to_dict(self) -> dict:
        return {"backend": self.backend, "arch": self.arch, "warp_size": self.warp_size, "name": self.name}

    @staticmethod
    def from_dict(d: dict) -> "Target":
        return Target(d["backend"], d["arch"], int(d["warp_size"]))

    def __str__(self) -> str:
        return self.name


def amd_wave_size(arch: str) -> int:
    """CDNA (gfx9xx) runs wave64; RDNA (gfx10xx and later) Triton compiles for wave32."""
    return 64 if arch.lower().startswith("gfx9") else 32


def parse_target(name: str) -> Target:
    """Parse `sm_90`, `sm90`, `90`, `sm_90a`, `gfx942`. `native` is resolved elsewhere.

    Raises UnknownTargetError naming the accepted forms.
    """
    text = str(name).strip()
    if text.isdigit():
        text = f"sm_{text}"
    m = _SM_RE.match(text)
    if m:
        return Target("cuda", int(m.group(1)), 32)
    if _GFX_RE.match(text):
        arch = text.lower()
        return Target("hip", arch, amd_wave_size(arch))
    raise UnknownTargetError(
        f"unknown target {name!r}: use an NVIDIA compute capability such as sm_80, sm_90, sm_120, "
        f"an AMD architecture such as gfx942 or gfx950, or 'native'"
    )


def candidate_targets() -> list[Target]:
    """Every target worth probing, NVIDIA first."""
    return [Target("cuda", cc, 32) for cc in NVIDIA_CANDIDATES] + [
        Target("hip", a, amd_wave_size(a)) for a in AMD_CANDIDATES
    ]
