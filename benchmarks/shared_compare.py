"""The GPU-free half of shared_fidelity.py: the model on each launch's PTX against ncu's counters.

Per launch of a measured directory (`cases.csv`, `gallery.csv`, the Triton cache in `cache/`):
the kernel's PTX is the one the GPU's Triton compiled (a kernel compiled twice, for two dtypes, is
told apart by its ideal wavefronts per line: those follow from access widths alone, not from the
conflicts being checked). Per source line (innermost frame, as ncu attributes SASS) and kind of
instruction (LDS, STS, LDSM, STSM, LDGSTS): measured `L1 Wavefronts Shared` / requests against the
model's mean over the line's PTX instructions of that kind.
"""

from __future__ import annotations

import json
from pathlib import Path

from inspector.analysis.shared_banks import costs_by_line
from inspector.profile import parse_source_page
from inspector.profile.ncu_source import shared_by_line


def _candidates(cache: Path, kernel: str) -> list[tuple[str, str, int]]:
    out = []
    for meta in cache.glob(f"*/{kernel}.json"):
        ptx = meta.with_suffix(".ptx")
        if ptx.exists():
            out.append((meta.parent.name, ptx.read_text(), json.loads(meta.read_text())["num_warps"] * 32))
    return out


def compare_dir(folder: Path) -> str:
    """A Markdown table: every line with shared traffic, measured against predicted."""
    rows = ["| launch | line | instructions (SASS) | measured wavefronts / ideal per request | model | agrees |",
            "|---|---|---|---|---|---|"]
    agree = total = 0
    for page in ("cases.csv", "gallery.csv"):
        if not (folder / page).exists():
            continue
        for n, launch in enumerate(parse_source_page((folder / page).read_text())):
            got = shared_by_line(launch)
            if not got:
                continue
            options = [costs_by_line(ptx, threads) for _key, ptx, threads in _candidates(folder / "cache",
                                                                                          launch.function)]
            if not options:
                rows.append(f"| {launch.function} #{n} | | | | no PTX in the cache | |")
                continue
            pred = min(options, key=lambda p: sum(abs(m[1] - (p.get(k, (0, 0))[1] or 0)) for k, m in got.items()))
            for (file, line, fam), (wf, ideal, req, ops) in sorted(got.items()):
                p = pred.get((file, line, fam))
                model = "no shared instruction in the PTX" if p is None else (
                    "unknown address" if p[0] is None else f"{p[0]:.2f} / {p[1]:.2f}")
                ok = p is not None and p[0] is not None and abs(p[0] - wf) < 0.01 and abs(p[1] - ideal) < 0.01
                agree, total = agree + ok, total + 1
                rows.append(f"| {launch.function} #{n} | {file}:{line} | {', '.join(ops)} ({req}) | "
                            f"{wf:.2f} / {ideal:.2f} | {model} | {'yes' if ok else 'NO'} |")
    rows.append(f"\n{agree} of {total} lines agree.")
    return "\n".join(rows)
