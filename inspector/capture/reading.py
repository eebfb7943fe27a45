"""Opening a run file: a capture written by `inspector.capture`, or a tritonparse trace
(ndjson), either plain or gzipped; which one is told from the content, not the name."""

from __future__ import annotations

import gzip
import io
import json
import os

from .store import FORMAT, VERSION, Capture, CaptureFileError
from .tritonparse import read_trace


def load(path: str | os.PathLike) -> Capture:
    """A capture file, or a tritonparse trace (ndjson, plain or gzipped), as a Capture."""
    path = os.fspath(path)
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise CaptureFileError(f"{path}: cannot read: {e.strerror or e}") from None
    capture = loads(raw, name=path)
    capture.source_path = os.path.abspath(path)
    return capture


def loads(raw: bytes, name: str = "<capture>") -> Capture:
    """Parse the bytes of a capture file or a tritonparse trace."""
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as e:
            raise CaptureFileError(f"{name}: a damaged gzip file ({e})") from None
    if raw[:4] == b"\x28\xb5\x2f\xfd":
        raise CaptureFileError(f"{name}: a zstd-compressed file; decompress it first (zstd -d {name})")
    text = raw.decode("utf-8", errors="replace")
    stripped = text.lstrip()
    if not stripped:
        raise CaptureFileError(f"{name}: the file is empty")
    first_line = stripped.split("\n", 1)[0]
    try:
        first = json.loads(first_line)
    except json.JSONDecodeError:
        first = None
    if isinstance(first, dict) and "event_type" in first:
        return read_trace(io.StringIO(text), name)
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise CaptureFileError(
            f"{name}:{e.lineno}: neither a capture (JSON) nor a tritonparse trace (ndjson): "
            f"{e.msg}. Make one with `python -m inspector capture -o run.inspector -- "
            "python prog.py`"
        ) from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise CaptureFileError(f'{name}: a JSON file but not a capture (no "format": "{FORMAT}")')
    if int(doc.get("version", 0)) > VERSION:
        raise CaptureFileError(
            f"{name}: capture format version {doc.get('version')} is newer than this "
            f"inspector reads ({VERSION}); update the inspector"
        )
    try:
        return Capture.from_dict(doc)
    except TypeError as e:
        raise CaptureFileError(f"{name}: a damaged capture ({e})") from None
