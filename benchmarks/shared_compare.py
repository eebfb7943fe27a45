"""The GPU-free half of shared_fidelity.py: the model on each launch's PTX against ncu's counters.

Per launch of a measured directory (`cases.csv`, `gallery.csv`, the Triton cache in `cache/`):
the kernel's PTX is the one the GPU's Triton compiled (a kernel compiled twice, for two dtypes, is
told apart by its ideal wavefronts per line: those follow from access widths alone, not from the
conflicts being checked). Per source line (innermost frame, as ncu attributes SASS) and kind of instruction (LDS, STS,
LDSM, STSM, LDGSTS): measured
`L1 Wavefronts Shared` / requests (shared instructions executed, wgmma excluded) against the
model's mean over the line's PTX instructions of that kind.
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from pathlib import Path

from inspector.analysis.locations import ptx_locations
from inspector.analysis.shared_banks import shared_costs
from inspector.profile import parse_source_page

WAVEFRONTS, IDEAL, EXECUTED = "L1 Wavefronts Shared", "L1 Wavefronts Shared Ideal", "Instructions Executed"
FAMILY = {"load": "LDS", "store": "STS", "ldmatrix": "LDSM", "stmatrix": "STSM", "async_copy": "LDGSTS",
          "atomic": "ATOMS"}
DESCRIPTOR_READS = ("HGMMA", "QGMMA", "IGMMA", "BGMMA", "UTMALDG", "UTMASTG", "UBLKCP", "UTCHMMA", "UTCQMMA")


def measured_lines(launch) -> dict[tuple[str, int], tuple[float, float, int, list[str]]]:
    """Per (file, line): (wavefronts per request, ideal per request, requests, opcodes)."""
    out = {}
    for lc in launch.lines:
        req = wf = ideal = 0
        ops = set()
        per: dict[str, list] = {}
        for _addr, text, metrics in lc.sass:
            w = metrics.get(WAVEFRONTS)
            op = text.split()[1] if text.startswith("@") else text.split()[0]
            if not w or op.startswith(DESCRIPTOR_READS):
                continue
            req, wf, ideal = req + (metrics.get(EXECUTED) or 0), wf + w, ideal + (metrics.get(IDEAL) or 0)
            ops.add(op)
            fam = op.split(".")[0]
            a = per.setdefault(fam, [0, 0, 0, set()])
            a[0], a[1], a[2] = a[0] + (metrics.get(EXECUTED) or 0), a[1] + w, a[2] + (metrics.get(IDEAL) or 0)
            a[3].add(op)
        for fam, a in per.items():
            out[(os.path.basename(lc.file), lc.line, fam)] = (a[1] / a[0], a[2] / a[0], a[0], sorted(a[3]))
    return out


def predicted_lines(ptx: str, threads: int) -> dict[tuple[str, int], tuple[float | None, float | None, int, list[str]]]:
    """Per (file, line): the model's mean wavefronts and ideal per request over its PTX instructions."""
    locs = ptx_locations(ptx)
    acc: dict[tuple[str, int], list] = defaultdict(lambda: [0.0, 0.0, 0, set(), False])
    for cost in shared_costs(ptx, threads):
        chains = locs.chains.get(cost.line)
        if not chains:
            continue
        file, line, _ = chains[0][0]
        a = acc[(os.path.basename(file), line, FAMILY[cost.op])]
        a[2] += 1
        a[3].add(cost.opcode)
        if cost.wavefronts is None:
            a[4] = True
        else:
            a[0] += cost.wavefronts
            a[1] += cost.ideal
    return {k: ((None, None) if a[4] else (a[0] / a[2], a[1] / a[2])) + (a[2], sorted(a[3])) for k, a in acc.items()}


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
            got = measured_lines(launch)
            if not got:
                continue
            options = [(key, predicted_lines(ptx, threads)) for key, ptx, threads in _candidates(folder / "cache",
                                                                                                launch.function)]
            if not options:
                rows.append(f"| {launch.function} #{n} | | | | no PTX in the cache | |")
                continue

            def distance(pred):
                return sum(abs(m[1] - (pred.get(k, (0, 0))[1] or 0)) for k, m in got.items())

            _key, pred = min(options, key=lambda o: distance(o[1]))
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
