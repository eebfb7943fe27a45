"""Will it run everywhere? The pre-flight matrix: the kernel (each autotune config, when it has
them) compiled GPU-free for every architecture in the catalogue, NVIDIA and AMD, and judged on
each GPU there: launchable, registers, spills, shared memory, occupancy and what limits it. A cell
that cannot launch, or spills, gets the first candidate change (fewer stages, a smaller tile) that
the tool compiled for that target and found to fit.

GPUs of one architecture share every per-SM limit (H100 and H200, A10 and RTX 3090), so one
compile per architecture serves them all.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from typing import Any, Callable

from ..analysis.advisor import Finding
from ..hardware.catalogue import GPUS
from ..record import Inspection
from ..fixes.candidates import for_finding


@dataclass
class Cell:
    """One GPU and one config."""

    gpu: str
    target: str
    config: int | None  # autotune config index (None: the kernel has no configs)
    launchable: bool
    problem: str = ""  # why not, when not
    registers: int | None = None
    spill_bytes: int = 0
    shared_bytes: int = 0
    occupancy: float | None = None
    limiters: list[str] = field(default_factory=list)
    fix: str = ""  # the change that makes it fit, compiled for this target
    fix_diff: str = ""


@dataclass
class FitsReport:
    kernel: str
    file: str
    configs: list[dict[str, Any]]
    cells: list[Cell] = field(default_factory=list)


def _cell(gpu: str, rec: Inspection, config: int | None) -> Cell:
    problem = rec.launch_problem()
    r = rec.resources
    occ = rec.occupancy or {}
    return Cell(gpu, rec.target, config, problem is None, problem or "",
                r.registers if r.registers is not None else r.vgprs,
                (r.spill_store_bytes or 0) + (r.scratch_bytes or 0), r.shared_bytes, occ.get("occupancy"),
                list(occ.get("limiters") or []))


def _fits(after: Inspection) -> bool:
    return after.ok and after.launch_problem() is None and not (after.resources.spill_store_bytes or 0)


def _fitting_change(rec: Inspection, compile_one: Any) -> tuple[str, str]:
    """The first change that launches without spills on rec's target: a candidate edit of the file
    (fewer stages, a smaller tile), else, where the file cannot be edited there (configs made by a
    helper or a comprehension), the same change as a compile override, which the title names."""
    code = "cannot_launch" if rec.launch_problem() else "spills"
    f = Finding(code, "high", 0.0, None, "")
    for c in for_finding(rec, f, []):
        if _fits(compile_one(c.source, rec.target, rec.autotune_index)):
            return c.title, c.diff
    where = f" in config {rec.autotune_index}" if rec.autotune_index is not None else ""
    stages = rec.options.get("num_stages") or rec.resources.num_stages
    tries: list[tuple[str, dict[str, Any]]] = []
    if isinstance(stages, int) and stages > 1:
        tries += [(f"num_stages {stages} -> {s}{where}", {"options": {"num_stages": s}})
                  for s in range(stages - 1, max(0, stages - 3), -1)]
    for p in rec.parameters:
        if p.kind == "constexpr" and isinstance(p.value, int) and p.name.upper().startswith("BLOCK") and p.value >= 32:
            tries.append((f"{p.name} {p.value} -> {p.value // 2}{where}", {"consts": {p.name: p.value // 2}}))
    for title, override in tries[:5]:
        if _fits(compile_one(None, rec.target, rec.autotune_index, **override)):
            return title, ""
    return "", ""


def fits(file: str | os.PathLike, kernel: str | None = None, *, gpus: list[str] | None = None,
         workers: int | None = None, source: str | None = None,
         on_progress: Callable[[int, int], None] | None = None, **inspect_kwargs: Any) -> FitsReport:
    """The matrix for `kernel` of `file` (see the module docstring) on every catalogue GPU, or on
    `gpus` (names as the catalogue knows them: "H100", "RTX 4090", "MI300X"); `source` compiles
    in place of the file's text (the app's edited copy); inspect_kwargs (args, consts, options,
    triton, timeout) go to every compile. `on_progress(done, total)` follows the compiles."""
    from ..compile.api import inspect_kernel
    from ..hardware.catalogue import find_gpu

    inspect_kwargs.pop("target", None)
    inspect_kwargs.pop("autotune_index", None)
    chosen = [find_gpu(g) for g in gpus] if gpus else list(GPUS.values())
    archs = list(dict.fromkeys(g.arch for g in chosen))
    first = inspect_kernel(file, kernel=kernel, target=archs[0], source=source, **inspect_kwargs)
    name = first.kernel or kernel or ""
    configs = [None] if not first.autotune_configs else list(range(len(first.autotune_configs)))

    def compile_one(text: str | None, target: str, config: int | None = None, **override: Any) -> Inspection:
        from ..fixes.search import with_overrides

        return inspect_kernel(file, kernel=name, target=target, source=text or source, autotune_index=config,
                              defer=("sass",), **with_overrides(inspect_kwargs, override))

    jobs = [(arch, cfg) for arch in archs for cfg in configs]
    recs: dict[tuple[str, int | None], Inspection] = {}
    with ThreadPoolExecutor(max_workers=workers or max(2, os.cpu_count() or 2)) as pool:
        futures = {pool.submit(compile_one, None, arch, cfg): (arch, cfg) for arch, cfg in jobs}
        for fut in as_completed(futures):
            recs[futures[fut]] = fut.result()
            if on_progress:
                on_progress(len(recs), len(jobs))
    report = FitsReport(name, str(file), first.autotune_configs)
    fixes: dict[tuple[str, int | None], tuple[str, str]] = {}
    for gpu in chosen:
        for cfg in configs:
            rec = recs[gpu.arch, cfg]
            cell = _cell(gpu.name, rec, cfg)
            if rec.source and (not cell.launchable or cell.spill_bytes):
                if (gpu.arch, cfg) not in fixes:
                    fixes[gpu.arch, cfg] = _fitting_change(rec, compile_one)
                cell.fix, cell.fix_diff = fixes[gpu.arch, cfg]
            report.cells.append(cell)
    return report
