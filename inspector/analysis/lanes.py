"""Which lane of which warp holds which element of a tensor, per register: the linear layout
of a TTGIR encoding (blocked, slice, linear), as Triton's `toLinearLayout` builds it, turned
into a (warps, lanes, registers, dims) array of coordinates. Used by coalescing.py.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from .layouts import parse_params
from .mlir import Module

# an inline encoding in a type: `#ttg.slice<{dim = 1, parent = #blocked}>`
INLINE_ENCODING = re.compile(r"#(?:ttg|ttng)\.(\w+)<\{(.*)\}>$")


def _log2(n: int) -> int:
    return max(0, int(n).bit_length() - 1)


def _blocked_bases(params: dict[str, Any], shape: list[int]) -> dict[str, list[list[int]]] | None:
    spt, tpw, wpc, order = (params.get(k) for k in ("sizePerThread", "threadsPerWarp", "warpsPerCTA", "order"))
    if not all(isinstance(v, list) and len(v) == len(shape) for v in (spt, tpw, wpc, order)):
        return None
    nd = len(shape)

    def unit(d: int, size: int) -> list[int]:
        v = [0] * nd
        v[d] = size
        return v

    regs = [unit(d, 1 << i) for d in order for i in range(_log2(spt[d]))]
    lanes = [unit(d, spt[d] << i) for d in order for i in range(_log2(tpw[d]))]
    warps = [unit(d, spt[d] * tpw[d] << i) for d in order for i in range(_log2(wpc[d]))]
    for d in order:  # a tensor larger than the layout's tile repeats it in registers
        tile = spt[d] * tpw[d] * wpc[d]
        regs += [unit(d, tile << i) for i in range(_log2(max(1, shape[d] // tile)))]
    return {"register": regs, "lane": lanes, "warp": warps}


def layout_bases(encoding: str, mod: Module, shape: list[int]) -> dict[str, list[list[int]]] | None:
    """The linear-layout bases of an encoding for a tensor of `shape` (None: not modelled)."""
    if encoding in mod.layouts:
        kind, body = mod.layouts[encoding]
        kind = kind.split(".")[-1]
    elif m := INLINE_ENCODING.match(encoding):
        kind, body = m.group(1), m.group(2)
    else:
        return None
    params = parse_params(body)
    if kind == "blocked":
        bases = _blocked_bases(params, shape)
    elif kind == "linear":
        bases = {k: [list(b) for b in params.get(k, []) if isinstance(b, list)] for k in ("register", "lane", "warp")}
        if any(len(b) != len(shape) for v in bases.values() for b in v):
            return None
    elif kind == "slice":
        dim, parent = params.get("dim"), params.get("parent")
        if not isinstance(dim, int) or not isinstance(parent, str):
            return None
        # a slice is its parent over a shape with a 1 inserted at `dim`, with that dimension dropped
        pb = layout_bases(parent, mod, shape[:dim] + [1] + shape[dim:])
        if pb is None:
            return None
        bases = {k: [b[:dim] + b[dim + 1:] for b in v] for k, v in pb.items()}
        bases["register"] = [b for b in bases["register"] if any(b)]
        return bases
    else:
        return None
    if bases is None:
        return None
    # a dimension smaller than the layout's reach: the bases past it broadcast (lanes repeat elements)
    return {k: [[c if c < s else 0 for c, s in zip(b, shape)] for b in v] for k, v in bases.items()}


def coordinates(bases: dict[str, list[list[int]]], nd: int) -> np.ndarray:
    """(warps, lanes, registers, nd) coordinates: each index is the XOR of the bases of its set bits."""

    def span(bs: list[list[int]]) -> np.ndarray:
        out = np.zeros((1 << len(bs), nd), dtype=np.int64)
        for i, b in enumerate(bs):
            half = 1 << i
            out[half:2 * half] = out[:half] ^ np.asarray(b, dtype=np.int64)
        return out

    w, l, r = span(bases["warp"]), span(bases["lane"]), span(bases["register"])
    return w[:, None, None, :] ^ l[None, :, None, :] ^ r[None, None, :, :]
