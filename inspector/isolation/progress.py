"""Where a request's worker is now: phase markers the sandbox reads, to say where a timeout struck.

The worker calls `phase("import")`, `phase("example", line=12)`, `phase("compile")` as it moves
on; each call replaces the previous one. When a compile is stopped (timeout, cancel), the
sandbox names the last phase in its message ("stopped after 60 s in the user's example() at line
12"), and adds the line the user's code was at, from a stack dump it asks the worker for.

Outside a sandboxed worker (the server, a test, `python -m inspector.worker.handler`) `phase` does nothing.
The markers travel over a pipe of the request's own (not stdout or stderr), one JSON line each;
the user's code can write to that pipe too, which only mislabels its own timeout.
"""

from __future__ import annotations

import json
import os

# Set by the zygote in each request's worker: the write end of the request's progress pipe.
_fd: int | None = None

KNOWN = ("import", "example", "compile")


def phase(name: str, line: int | None = None, file: str | None = None) -> None:
    """Say the worker now does `name` ("import": running the kernel file, "example": its example()
    or other call-building code, "compile": Triton's compiler; other names are shown as given),
    optionally at `line` of `file` (the user's file when omitted). Never raises."""
    if _fd is None:
        return
    record = {"phase": str(name)[:100], "line": line if isinstance(line, int) else None,
              "file": str(file)[:1000] if file else None}
    try:
        os.write(_fd, (json.dumps(record) + "\n").encode())
    except OSError:
        pass


def describe(marker: dict | None, user_line: int | None = None, user_function: str | None = None,
             in_compiler: bool = False) -> str:
    """Words for where a stopped request was: "in the user's example() at line 12", "in the
    compiler", "while running the kernel file's top level at line 3"; "" when nothing is known.
    `marker`: the last `phase` record; `user_line`/`user_function`: the innermost frame of the
    user's file in a stack dump; `in_compiler`: the dump's innermost frame was in Triton."""
    name = (marker or {}).get("phase") or ("compile" if in_compiler and not user_line else None)
    line = user_line or (marker or {}).get("line")
    at = f" at line {line}" if line else ""
    if name == "compile":
        return "in the compiler" + (f" (compiling the launch at line {line})" if line else "")
    if name == "example" or (name is None and user_function == "example"):
        return f"in the user's example(){at}"
    if name == "import" or (name is None and user_function == "<module>"):
        return f"while running the kernel file's top level{at}"
    if name:
        return f"in {name}{at}"
    if user_line:
        return f"in the user's {user_function}(){at}" if user_function else f"in the user's code{at}"
    return ""
