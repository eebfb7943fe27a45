"""Nsight Compute's details page as CSV: per launch, every section's metrics with their units.

`ncu --import R.ncu-rep --page details --csv` prints one row per metric:

    "ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size",
    "Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"
    "0","1234","python3","host","add_kernel","1","7","(128, 1, 1)","(4096, 1, 1)","0","9.0",
    "GPU Speed Of Light Throughput","Duration","us","5.57"

(2025.3 adds "Rule Name", "Rule Type", ... columns that metric rows leave empty; columns are read by
name). Numbers keep their printed unit ("byte/block", "Kbyte", "%"); "n/a", "no data" and "" are None.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field

from .ncu_source import parse_number

# (section, metric) pairs the profile's kernel figures read; names as Nsight Compute 2023-2025 print them.
DURATION = ("GPU Speed Of Light Throughput", "Duration")
DRAM_THROUGHPUT = ("GPU Speed Of Light Throughput", "DRAM Throughput")
MEMORY_THROUGHPUT = ("GPU Speed Of Light Throughput", "Memory Throughput")
COMPUTE_THROUGHPUT = ("GPU Speed Of Light Throughput", "Compute (SM) Throughput")
REGISTERS = ("Launch Statistics", "Registers Per Thread")
SHARED_DYNAMIC = ("Launch Statistics", "Dynamic Shared Memory Per Block")
SHARED_STATIC = ("Launch Statistics", "Static Shared Memory Per Block")
WAVES = ("Launch Statistics", "Waves Per SM")
THEORETICAL_OCCUPANCY = ("Occupancy", "Theoretical Occupancy")
ACHIEVED_OCCUPANCY = ("Occupancy", "Achieved Occupancy")
BLOCK_LIMIT_REGISTERS = ("Occupancy", "Block Limit Registers")
BLOCK_LIMIT_SHARED = ("Occupancy", "Block Limit Shared Mem")
BLOCK_LIMIT_WARPS = ("Occupancy", "Block Limit Warps")
MEMORY_BANDWIDTH = ("Memory Workload Analysis", "Memory Throughput")


@dataclass
class LaunchDetails:
    """One profiled launch: its kernel, grid, block, and (section, metric) -> (unit, value)."""

    kernel: str
    grid: str = ""
    block: str = ""
    device: str = ""
    metrics: dict[tuple[str, str], tuple[str, float | int | str | None]] = field(default_factory=dict)

    def value(self, key: tuple[str, str]) -> float | int | None:
        """The metric's number (None when absent or not a number)."""
        got = self.metrics.get(key)
        return got[1] if got is not None and isinstance(got[1], (int, float)) else None

    def unit(self, key: tuple[str, str]) -> str:
        got = self.metrics.get(key)
        return got[0] if got is not None else ""


def _value(text: str) -> float | int | str | None:
    """A number as printed ("4,361", "2.57"), else the text; "n/a", "no data", "-", "" are None."""
    if text.strip() in ("n/a", "no data"):
        return None
    number = parse_number(text)
    return number if number is not None or not text.strip() or text.strip() == "-" else text.strip()


def parse_details_page(text: str) -> list[LaunchDetails]:
    """Every launch of an `ncu --page details --csv` output, in order (by its ID column).

    Rows that are not CSV metric rows (`==PROF==` lines, the program's output) are skipped.
    Raises ValueError when there is no details header, naming what was expected."""
    launches: dict[str, LaunchDetails] = {}
    header: list[str] | None = None
    for row in csv.reader(io.StringIO(text)):
        if not row or row[0].startswith("==PROF=="):
            continue
        if "Metric Name" in row and "Section Name" in row:
            header = row
            continue
        if header is None or len(row) > len(header) or len(row) < header.index("Metric Value") + 1:
            continue
        cell = dict(zip(header, row))  # rows leave the trailing rule columns out
        if not cell.get("Metric Name"):
            continue  # a rule's row (its section's short name, no metric)
        key = cell.get("ID", "0")
        launch = launches.get(key)
        if launch is None:
            launch = launches[key] = LaunchDetails(cell.get("Kernel Name", ""), cell.get("Grid Size", ""),
                                                   cell.get("Block Size", ""), cell.get("Device", ""))
        launch.metrics[(cell["Section Name"], cell["Metric Name"])] = (cell.get("Metric Unit", ""),
                                                                       _value(cell.get("Metric Value", "")))
    if header is None:
        raise ValueError("no details rows found: expected the output of `ncu --page details --csv` "
                         "(a header with \"Section Name\", \"Metric Name\", \"Metric Unit\", \"Metric Value\")")
    return list(launches.values())
