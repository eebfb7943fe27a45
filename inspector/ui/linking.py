"""Source line -> stage lines, for the linked panes, from `inspector.analysis`.

Returns {stage: {source line: [lines of that stage]}} for the stages the analysis maps; the
browser builds the reverse maps itself. An empty dict (panes shown, not linked) when the
analysis package is missing or fails on a record.
"""

from __future__ import annotations

import logging

from inspector.record import Inspection

log = logging.getLogger(__name__)


def stage_line_maps(rec: Inspection) -> dict[str, dict[int, list[int]]]:
    """Per stage, which of its lines each source line became."""
    try:
        from inspector.analysis.mapping import line_map
    except ImportError:
        return {}
    try:
        mapping = line_map(rec)
    except Exception:  # noqa: BLE001 - linking is a convenience; the panes still show
        log.exception("line mapping failed for %s", rec.kernel)
        return {}
    return {stage: {src: sorted(lines) for src, lines in sm.from_source.items() if lines}
            for stage, sm in mapping.stages.items()}
