"""Measured profiles: what a GPU profiler recorded for a launch, read into plain records.

- `ncu_source`: Nsight Compute's source page (`--page source --csv --print-source sass,cuda`),
  per kernel launch: per Python line and per SASS instruction, every metric it printed.
"""

from .ncu_source import LaunchSource, LineCounters, parse_source_page

__all__ = ["LaunchSource", "LineCounters", "parse_source_page"]
