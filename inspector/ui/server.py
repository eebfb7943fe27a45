"""What the app's server does once, when it starts (the `st.App` lifespan in `app.py`).

A page's first compile waits on the sandboxed worker manager (torch and Triton imported, then
warmed in steps between requests). Starting it here, in a background thread while the server
comes up and the browser loads the page, instead of in the first session's script run, takes
that wait off the first result. Nothing user-supplied runs here: the worker is the sandbox's.
(The page's own modules are not loaded here: they declare Streamlit components, which register
with the runtime of a script run.)
"""

from __future__ import annotations

import threading
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, AsyncIterator

PAGE = str(Path(__file__).resolve().with_name("page.py"))


def start_worker() -> None:
    """Start (or join) the process-wide worker manager; returns when it serves requests."""
    from inspector.isolation.selection import default_sandbox

    try:
        default_sandbox().warm_up()
    except Exception:  # noqa: BLE001 - the page's own compile reports a worker that cannot start
        pass


@asynccontextmanager
async def lifespan(_app: Any) -> AsyncIterator[None]:
    threading.Thread(target=start_worker, name="inspector-worker-start", daemon=True).start()
    yield
