"""The stage panes as one self-contained HTML document, linked in the browser.

Every pane's rows come from `inspector.highlight.render_rows`; the line maps (for each IR pane,
source line -> that pane's lines) are embedded as JSON, and `static/panes.js` highlights on click
with no server round trip: a source row lights up the rows it became in every pane, an IR row its
source line and, through it, the related rows of the other panes. The last selection is kept in
the browser's localStorage per kernel, so it survives reruns and reloads.
No Streamlit here: the app embeds the document (`st.iframe`).
"""

from __future__ import annotations

import html
import json
from dataclasses import dataclass
from pathlib import Path

from inspector.highlight import stylesheet

_STATIC = Path(__file__).resolve().parent / "static"
_CSS = (_STATIC / "panes.css").read_text(encoding="utf-8")
_JS = (_STATIC / "panes.js").read_text(encoding="utf-8")


@dataclass
class Pane:
    """One column: `rows` is render_rows() output whose anchors start with `anchor`."""

    key: str  # "source", "ptx", "passes", ...: the key of its line map
    title: str  # "PTX"
    meta: str  # a short note next to the title ("1,531 lines", "after TritonGPUCoalesce")
    anchor: str  # row ids are f"{anchor}-L{n}"
    rows: str  # HTML rows, or "" for an empty pane
    empty_note: str = ""  # shown when rows is ""


def _json_script(element_id: str, value: object) -> str:
    # "</" cannot end the script element early once escaped.
    text = json.dumps(value, separators=(",", ":")).replace("</", "<\\/")
    return f'<script type="application/json" id="{element_id}">{text}</script>'


def panes_document(panes: list[Pane], maps: dict[str, dict[int, list[int]]], storage_key: str,
                   initial: dict[str, object] | None = None) -> str:
    """The whole document: panes side by side, maps, style sheets and the linking script.

    maps: {pane key: {source line: [lines of that pane]}}; panes without a map are not linked.
    initial: {"pane": key, "line": n} to select on load (else the selection stored in the browser).
    """
    cols = " ".join("minmax(0, 1fr)" for _ in panes)
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'>",
        f"<style>{_CSS}\n{stylesheet('.hl')}</style></head><body>",
        f'<div class="panes" style="grid-template-columns: {cols}">',
    ]
    for p in panes:
        body = p.rows or f'<div class="empty">{html.escape(p.empty_note)}</div>'
        parts.append(
            f'<section class="pane" data-pane="{html.escape(p.key)}" data-anchor="{html.escape(p.anchor)}">'
            f'<header><span>{html.escape(p.title)}</span><span class="meta">{html.escape(p.meta)}</span>'
            f'<span class="count"></span></header><div class="code hl">{body}</div></section>')
    parts.append("</div>")
    wanted = {p.key for p in panes}
    parts.append(_json_script("tki-maps", {k: {str(s): v for s, v in m.items()} for k, m in maps.items()
                                           if k in wanted}))
    parts.append(_json_script("tki-conf", {"storageKey": storage_key, "initial": initial}))
    parts.append(f"<script>{_JS}</script></body></html>")
    return "".join(parts)
