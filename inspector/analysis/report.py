"""The explanation as one JSON-able object: what `explain --json` prints, and what a candidate
fix reports as its `after` (`inspector.fixes`)."""

from __future__ import annotations

import dataclasses
from typing import Any

from ..record import Inspection
from . import explain


def explanation_json(rec: Inspection) -> dict[str, Any]:
    """The inspection's identity, resources and occupancy, and every analysis."""
    ex = dataclasses.asdict(explain(rec))
    return {
        "kernel": rec.kernel, "file": rec.file, "target": rec.target, "options": rec.options,
        "triton_version": rec.triton_version, "resources": dataclasses.asdict(rec.resources),
        "occupancy": rec.occupancy, "error": dataclasses.asdict(rec.error) if rec.error else None,
        "findings": ex["findings"], "memory": ex["memory"], "mix": ex["mix"], "layouts": ex["layouts"],
    }
