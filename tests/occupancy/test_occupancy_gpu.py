"""On a CUDA GPU: blocks/SM from the calculator equal the driver's
`cuOccupancyMaxActiveBlocksPerMultiprocessor` for every bundled kernel and a shared-memory matmul
tile, over num_warps 1..32 and several maxnreg caps (see occupancy_driver_check)."""

from __future__ import annotations

import json
import os

import pytest


@pytest.mark.gpu
def test_blocks_per_sm_match_the_driver():
    pytest.importorskip("cuda.bindings")
    from occupancy_driver_check import run_check, summary_table

    result = run_check()
    if os.environ.get("OCCUPANCY_CHECK_JSON"):  # keep the full rows for the record
        with open(os.environ["OCCUPANCY_CHECK_JSON"], "w") as f:
            json.dump(result, f, indent=1, default=str)
    print()
    print(summary_table(result))
    for row in result["skipped"]:
        print("skipped", row["kernel"], row["num_warps"], row["maxnreg"], row["num_stages"], row["skipped"])
    assert result["mismatches"] == []
    assert result["extra_mismatches"] == []
    assert result["compared"] >= 150
    assert len(result["kernels"]) >= 6  # add and the others bundled, plus the tile
