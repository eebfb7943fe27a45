"""Which tensors' contents decide where a memory access goes: the pointer arguments whose loaded
values reach the access's address, its mask, or the bounds of a loop around it (a jagged row's
start and end, a gather's indices, a block table, MoE routing), found by walking the TTGIR's
definitions back from the access.

A launch run on made-up values for these tensors measures another launch than the user's: the
profile compares those lines only where the data was the launch's own (inspector.launch_data),
and the sector model reads them to evaluate the access exactly.
"""

from __future__ import annotations

from .mlir import Module, Op, Walk

_LOADS = ("tt.load", "amdg.buffer_load", "amdgpu.buffer_load", "tt.atomic_rmw", "tt.atomic_cas")


def _pointer_args(mod: Module, value: str) -> set[str]:
    """The pointer arguments a pointer value is computed from (through addptr, splat, select...)."""
    found: set[str] = set()
    walk = Walk(value)
    for v in walk:
        if v in mod.args:
            if mod.args[v].is_pointer:
                found.add(v)
            continue
        if v in mod.loop_carried:
            walk.push(*mod.loop_carried[v])
        op = mod.defs.get(v)
        if op is not None and op.name not in _LOADS:
            walk.push(*op.operands)
    return found


def _loops(op: Op) -> list[Op]:
    out, loop = [], op.loop
    while loop is not None:
        out.append(loop)
        loop = loop.loop
    return out


def data_inputs(mod: Module, op: Op, starts: list[str]) -> set[str]:
    """The pointer arguments whose loaded contents reach `starts` (an access's pointer, mask,
    offsets) or the bounds of the loops around `op`."""
    starts = [s for s in starts if s] + [o for loop in _loops(op) for o in loop.operands[:3]]
    found: set[str] = set()
    walk = Walk(*starts)
    for v in walk:
        if v in mod.args:
            continue
        if v in mod.loop_carried:
            walk.push(*mod.loop_carried[v])
        d = mod.defs.get(v)
        if d is None:
            continue
        if d.name in _LOADS:
            # what it read decides the value; and where it read may itself come from data (a block table)
            found |= _pointer_args(mod, d.operands[0]) if d.operands else set()
        if d.name == "scf.for" and v not in d.results:
            walk.push(*d.operands[:3])  # an induction variable: its loop's bounds
            continue
        walk.push(*d.operands)
        for branch in mod.branches.get(d.line, []):  # an scf.if's results: what each branch yields
            walk.push(*branch)
    return found
