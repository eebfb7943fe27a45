"""Nsight Compute's source page as CSV, read per launch, per source line and per SASS instruction.

`ncu --section SourceCounters [--section WarpStateStats] --page source --csv --print-source
sass,cuda CMD` prints, for each profiled launch, a block:

    "File Path","/tmp/k.py"
    "Function Name","copy_strided"
    "Line No","Source","Address","Source","Warp Stall Sampling (All Samples)",...
    "6","v = tl.load(x + offs * STRIDE, mask=m)","-","-",...,"524288",...     <- a source line
    "","","0x7f05c77aeb10","@!P0  LDG.E.128 R4, desc[UR4][R2.64]",...         <- its SASS rows
    "","","...","...","-",...                                                  <- elided rows

A launch whose code comes from several files (inlined helpers) has one such block per file,
each under the same function name. Numbers are kept as printed (ints or floats; "-" is None).
The format as Nsight Compute 2025.3.1 prints it (pages it wrote are in tests/fixtures/gpu_measurements/ncu/).
"""

from __future__ import annotations

import csv
import io
import os
from dataclasses import dataclass, field

# the columns the coalescing check reads
SECTORS = "L2 Theoretical Sectors Global"
SECTORS_IDEAL = "L2 Theoretical Sectors Global Ideal"
SECTORS_EXCESSIVE = "L2 Theoretical Sectors Global Excessive"
# ... and the shared-memory check (per SASS instruction; wgmma's descriptor reads are counted too)
SHARED_WAVEFRONTS = "L1 Wavefronts Shared"
SHARED_WAVEFRONTS_IDEAL = "L1 Wavefronts Shared Ideal"
# SASS whose shared reads go through a matrix descriptor or the TMA unit, not lane addresses
DESCRIPTOR_OPCODES = ("HGMMA", "QGMMA", "IGMMA", "BGMMA", "UTMALDG", "UTMASTG", "UBLKCP", "UTCHMMA", "UTCQMMA",
                      "UTCMMA")


@dataclass
class LineCounters:
    """One source line of one launch: its metrics, and its SASS instructions' metrics."""

    file: str
    line: int
    source: str
    metrics: dict[str, float | int | None]
    sass: list[tuple[str, str, dict[str, float | int | None]]] = field(default_factory=list)  # (address, text, metrics)


@dataclass
class LaunchSource:
    """One profiled launch (in the order the CSV lists them)."""

    function: str
    lines: list[LineCounters] = field(default_factory=list)

    def line(self, no: int, file: str | None = None) -> LineCounters | None:
        """The counters of source line `no` (of `file`, when the launch spans several files)."""
        return next((l for l in self.lines if l.line == no and (file is None or l.file == file)), None)


def parse_number(text: str) -> float | int | None:
    """A number as Nsight Compute prints it ("4,361", "2.57"); None for "", "-", "..." or text."""
    t = text.strip().replace(",", "")
    if t in ("", "-", "..."):
        return None
    try:
        return int(t)
    except ValueError:
        try:
            return float(t)
        except ValueError:
            return None


def _repair(raw: str, fields: int) -> list[str] | None:
    """A source row whose text holds double quotes, which ncu prints unescaped
    (`"88","x = f("=r,r", y)","-",...`): every field but the source is quote-free, so the source
    is what lies between the first field and the last `fields - 2`."""
    parts = raw.strip().split('","')
    if len(parts) < fields or not raw.startswith('"') or not raw.rstrip().endswith('"'):
        return None
    parts[0], parts[-1] = parts[0][1:], parts[-1][:-1]
    tail = fields - 2
    return [parts[0], '","'.join(parts[1:len(parts) - tail]), *parts[len(parts) - tail:]]


def parse_source_page(text: str) -> list[LaunchSource]:
    """Every launch of an `ncu --page source --csv --print-source sass,cuda` output, in order.

    Lines that are not CSV (`==PROF==` messages, the program's own output) are skipped. Raises
    ValueError when no source block is found (wrong page or options), naming what was expected."""
    launches: list[LaunchSource] = []
    file = ""
    header: list[str] | None = None
    current: LineCounters | None = None
    pending_function: str | None = None
    for raw in text.splitlines():
        row = next(csv.reader([raw]), [])
        if not row or row[0].startswith("==PROF=="):
            continue
        if header is not None and len(row) != len(header):
            row = _repair(raw, len(header)) or row
        if len(row) == 2 and row[0] == "File Path":
            file, header, current = row[1], None, None
            continue
        if len(row) == 2 and row[0] == "Function Name":
            # a new launch, unless this is the next file of the same launch (same function, no
            # file of this name yet in it)
            last = launches[-1] if launches else None
            if last is None or last.function != row[1] or any(l.file == file for l in last.lines):
                launches.append(LaunchSource(row[1]))
            pending_function = row[1]
            continue
        if row[0] == "Line No":
            header = row
            continue
        if header is None or pending_function is None or len(row) != len(header):
            continue
        metrics = {h: parse_number(v) for h, v in zip(header[4:], row[4:])}
        if row[0].strip().isdigit():
            current = LineCounters(file, int(row[0]), row[1], metrics)
            launches[-1].lines.append(current)
        elif current is not None and row[2] not in ("", "..."):
            current.sass.append((row[2], row[3].strip(), metrics))
    if not launches:
        raise ValueError("no source block found: expected the output of `ncu --page source --csv "
                         "--print-source sass,cuda` (\"File Path\" / \"Function Name\" / \"Line No\" rows)")
    return launches


def sass_opcode(text: str) -> str:
    """`@!P0 LDS.128 R4, [R2]` -> `LDS.128`."""
    words = text.split()
    return (words[1] if words and words[0].startswith("@") and len(words) > 1 else (words or [""])[0])


def shared_by_line(launch: LaunchSource) -> dict[tuple[str, int, str], tuple[float, float, int, list[str]]]:
    """Per (file name, line, SASS family: LDS, STS, LDSM, STSM, LDGSTS, ATOMS): measured shared
    wavefronts per request, their ideal per request, the requests, and the opcodes (descriptor reads
    such as HGMMA left out)."""
    acc: dict[tuple[str, int, str], list] = {}
    for lc in launch.lines:
        for _addr, text, metrics in lc.sass:
            op = sass_opcode(text)
            w = metrics.get(SHARED_WAVEFRONTS)
            if not w or op.startswith(DESCRIPTOR_OPCODES):
                continue
            a = acc.setdefault((os.path.basename(lc.file), lc.line, op.split(".")[0]), [0, 0, 0, set()])
            a[0] += metrics.get("Instructions Executed") or 0
            a[1] += w
            a[2] += metrics.get(SHARED_WAVEFRONTS_IDEAL) or 0
            a[3].add(op)
    return {k: (a[1] / a[0], a[2] / a[0], a[0], sorted(a[3])) for k, a in acc.items() if a[0]}
