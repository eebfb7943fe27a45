"""Compile targets: parsing names like `sm_90` / `gfx942` / `native` and listing candidates.

One parser (`parse_arch`) takes every spelling a user or Triton uses: `sm_90`, `sm90`, `sm_90a`,
`90`, the integer 90, `(9, 0)`, `"9.0"`, `gfx942` (feature suffixes such as `gfx942:sramecc+:xnack-`
are dropped), and any object with `backend` and `arch` attributes (Triton's `GPUTarget`, `Target`);
`parse_target` makes a compile `Target` of it.

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



class UnknownTargetError(ValueError):
    """Raised for a target name that is neither an NVIDIA sm_XY nor an AMD gfxNNN name."""


_ANY_SM_RE = re.compile(r"^(?:sm_?|compute_?)?(\d{2,3})[af]?$", re.IGNORECASE)
_DOTTED_RE = re.compile(r"^(\d{1,2})\.(\d)$")
_ANY_GFX_RE = re.compile(r"^(gfx[0-9a-f]{3,4})(?::.*)?$", re.IGNORECASE)


@dataclass(frozen=True)
class Arch:
    """A parsed target: backend 'cuda' with a (major, minor) capability, or 'hip' with a gfx name."""

    backend: str
    cc: tuple[int, int] | None = None
    gfx: str | None = None

    @property
    def name(self) -> str:
        """Triton's spelling: `sm_90` or `gfx942`."""
        if self.backend == "cuda":
            assert self.cc is not None
            return f"sm_{self.cc[0]}{self.cc[1]}"
        assert self.gfx is not None
        return self.gfx

    @property
    def is_nvidia(self) -> bool:
        return self.backend == "cuda"


def parse_arch(target: object) -> Arch:
    """Parse any accepted target spelling (see module doc); raises ValueError otherwise."""
    backend = getattr(target, "backend", None)
    if backend is not None and hasattr(target, "arch"):
        arch = getattr(target, "arch")
        if backend == "cuda":
            return parse_arch(int(arch))
        if backend == "hip":
            return parse_arch(str(arch))
        raise UnknownTargetError(f"unsupported backend {backend!r}")
    if isinstance(target, tuple) and len(target) == 2:
        return Arch("cuda", cc=(int(target[0]), int(target[1])))
    if isinstance(target, int) and not isinstance(target, bool):
        return Arch("cuda", cc=(target // 10, target % 10))
    text = str(target).strip()
    m = _ANY_GFX_RE.match(text)
    if m:
        return Arch("hip", gfx=m.group(1).lower())
    m = _DOTTED_RE.match(text)
    if m:
        return Arch("cuda", cc=(int(m.group(1)), int(m.group(2))))
    m = _ANY_SM_RE.match(text)
    if m:
        n = int(m.group(1))
        return Arch("cuda", cc=(n // 10, n % 10))
    raise UnknownTargetError(f"unknown target {target!r}: expected sm_XY (or XY, X.Y) or gfxNNN")


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


def parse_target(name: object) -> Target:
    """The compile target for any spelling `parse_arch` accepts (`sm_90`, `sm90`, `90`, `sm_90a`,
    `9.0`, `gfx942`, a `GPUTarget`). `native` is resolved elsewhere.

    Raises UnknownTargetError naming the accepted forms.
    """
    try:
        arch = parse_arch(name)
    except UnknownTargetError:
        raise UnknownTargetError(
            f"unknown target {name!r}: use an NVIDIA compute capability such as sm_80, sm_90, sm_120, "
            f"an AMD architecture such as gfx942 or gfx950, or 'native'") from None
    if arch.backend == "cuda":
        assert arch.cc is not None
        return Target("cuda", arch.cc[0] * 10 + arch.cc[1], 32)
    assert arch.gfx is not None
    return Target("hip", arch.gfx, amd_wave_size(arch.gfx))


def candidate_targets() -> list[Target]:
    """Every target worth probing, NVIDIA first."""
    return [Target("cuda", cc, 32) for cc in NVIDIA_CANDIDATES] + [
        Target("hip", a, amd_wave_size(a)) for a in AMD_CANDIDATES
    ]
