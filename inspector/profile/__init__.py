"""Measured profiles: what a GPU profiler recorded for a launch, read into plain records.

- `ncu_source`: Nsight Compute's source page (`--page source --csv --print-source sass,cuda`),
  per kernel launch: per Python line and per SASS instruction, every metric it printed.
- `ncu_details`: its details page (`--page details --csv`): each section's metrics with units.
- `measured`: a `Profile` of one launch joined with its inspection record: per file line, the
  kernel's figures, and the static model checked against the measurement.
- `rate`: the launch's roofline point from Nsight Compute's FLOP and byte counts, on the device's
  measured ceilings.
- `run_ncu`: running a record's reproducer under Nsight Compute (GPU only).
- `run_proton`: timing it with Triton's Proton where Nsight Compute cannot run (kernel time only).
- `workdir`: the folder a reproducer runs in, under either.
- `measure`: the one entry (CLI and page): Nsight Compute, else Proton, saying which and why.
"""

from .measured import Profile, build_profile
from .ncu_details import LaunchDetails, parse_details_page
from .ncu_source import LaunchSource, LineCounters, parse_source_page

__all__ = ["LaunchDetails", "LaunchSource", "LineCounters", "Profile", "build_profile", "parse_details_page",
           "parse_source_page"]
