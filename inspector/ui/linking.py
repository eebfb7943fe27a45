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
    maps = {stage: {src: sorted(lines) for src, lines in sm.from_source.items() if lines}
            for stage, sm in mapping.stages.items()}
    return to_user_lines(maps, rec.generated.user_of()) if rec.generated is not None else maps


def to_user_lines(maps: dict[str, dict[int, list[int]]], user_of: dict[int, int]) -> dict[str, dict[int, list[int]]]:
    """Maps keyed by generated lines (a Helion kernel's Triton) re-keyed by the user's lines, with
    the generated source as one more pane ("triton"): a user's line lights what each of its
    generated lines became."""
    out: dict[str, dict[int, list[int]]] = {"triton": {}}
    for g, u in user_of.items():
        out["triton"].setdefault(u, []).append(g)
    for stage, by_line in maps.items():
        merged: dict[int, set[int]] = {}
        for g, stage_lines in by_line.items():
            if g in user_of:
                merged.setdefault(user_of[g], set()).update(stage_lines)
        out[stage] = {u: sorted(v) for u, v in merged.items()}
    return out
