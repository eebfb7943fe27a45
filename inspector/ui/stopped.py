"""Compiles the user stopped or that hit their time limit, remembered per workspace, so that a
reload (or another tab) does not start the same hang again by itself: the page opens without
compiling that view and says why; the Compile button (or any change) tries again.

A compile is named by the digest of its request and the text it compiles; the notes live in
`<workspace>/stopped.json` (the newest `KEEP`), written atomically. No Streamlit here.
"""

from __future__ import annotations

import hashlib
import json
import time
from typing import Any

from inspector.files import atomic_write_text
from inspector.record import InspectRequest, Inspection
from inspector.ui.workspace import Workspace

STOPPING_KINDS = ("cancelled", "timeout")
KEEP = 50


def request_digest(request: InspectRequest) -> str:
    """What names one compile: its request (the text itself included when given, else the file's)."""
    body = request.to_dict()
    if not request.source:
        try:
            with open(request.file, "rb") as f:
                body["file_digest"] = hashlib.sha256(f.read()).hexdigest()
        except OSError:
            pass
    return hashlib.sha256(json.dumps(body, sort_keys=True, default=str).encode()).hexdigest()[:32]


def _path(ws: Workspace):
    return ws.root / "stopped.json"


def _read(ws: Workspace) -> dict[str, Any]:
    try:
        data = json.loads(_path(ws).read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def stopped(ws: Workspace, digest: str) -> dict[str, Any] | None:
    """{"kind", "at", "message"} of this compile's last stop, or None."""
    note = _read(ws).get(digest)
    return note if isinstance(note, dict) else None


def note(ws: Workspace, digest: str, rec: Inspection) -> None:
    """After a compile: remember a stop (cancel, time limit), forget one that now finished."""
    notes = _read(ws)
    kind = rec.error.kind if rec.error is not None else ""
    if kind in STOPPING_KINDS:
        notes[digest] = {"kind": kind, "at": time.time(), "message": rec.error.message}
    elif digest in notes:
        del notes[digest]
    else:
        return
    newest = sorted(notes.items(), key=lambda kv: kv[1].get("at", 0) if isinstance(kv[1], dict) else 0)[-KEEP:]
    ws.root.mkdir(parents=True, exist_ok=True)
    atomic_write_text(_path(ws), json.dumps(dict(newest)))
