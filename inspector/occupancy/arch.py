"""Naming an occupancy target: NVIDIA compute capabilities and AMD gfx architectures.

Accepts every spelling a user or Triton uses: `sm_90`, `sm90`, `sm_90a`, `90`, the integer 90,
`(9, 0)`, `"9.0"`, `gfx942` (feature suffixes such as `gfx942:sramecc+:xnack-` are dropped), and
any object with `backend` and `arch` attributes (Triton's `GPUTarget`, the inspector's `Target`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_SM_RE = re.compile(r"^(?:sm_?|compute_?)?(\d{2,3})[af]?$", re.IGNORECASE)
_DOTTED_RE = re.compile(r"^(\d{1,2})\.(\d)$")
_GFX_RE = re.compile(r"^(gfx[0-9a-f]{3,4})(?::.*)?$", re.IGNORECASE)


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
        raise ValueError(f"unsupported backend {backend!r}")
    if isinstance(target, tuple) and len(target) == 2:
        return Arch("cuda", cc=(int(target[0]), int(target[1])))
    if isinstance(target, int) and not isinstance(target, bool):
        return Arch("cuda", cc=(target // 10, target % 10))
    text = str(target).strip()
    m = _GFX_RE.match(text)
    if m:
        return Arch("hip", gfx=m.group(1).lower())
    m = _DOTTED_RE.match(text)
    if m:
        return Arch("cuda", cc=(int(m.group(1)), int(m.group(2))))
    m = _SM_RE.match(text)
    if m:
        n = int(m.group(1))
        return Arch("cuda", cc=(n // 10, n % 10))
    raise ValueError(f"unknown target {target!r}: expected sm_XY (or XY, X.Y) or gfxNNN")
