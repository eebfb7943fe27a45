"""What the app's server does once, when it starts (the `st.App` lifespan in `app.py`).

A page's first compile waits on the sandboxed worker manager (torch and Triton imported, then
warmed in steps between requests). Starting it here, in a background thread while the server
comes up and the browser loads the page, instead of in the first session's script run, takes
that wait off the first result. Nothing user-supplied runs here: the worker is the sandbox's.

The same thread then imports what the page's first two runs import besides the page itself
(`PRELOAD`), while the browser loads Streamlit's front end (about a second in which the server is
idle): measured on the 2-vCPU VM, pandas alone was 0.57 s of the first run (Streamlit's component
call asks whether each argument is a data frame, which imports it) and plotly a part of the
second. (The page's own modules are not loaded here: they declare Streamlit components, which
register with the runtime of a script run.)
"""

from __future__ import annotations

import threading
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, AsyncIterator

PAGE = str(Path(__file__).resolve().with_name("page.py"))

# What the page's first runs import, besides `inspector.ui` itself (docs/performance.md#cold-start).
PRELOAD = ("pandas", "pyarrow", "plotly.graph_objects", "plotly.subplots", "inspector.compile.api",
           "inspector.highlight", "inspector.occupancy", "inspector.analysis.partitions", "inspector.bench.plots",
           "inspector.bench.client", "inspector.profile.measured", "inspector.fixes.search",
           "inspector.fixes.evaluate", "inspector.versions.compare")


def start_worker() -> None:
    """Start (or join) the process-wide worker manager; returns when it serves requests."""
    from inspector.isolation.selection import default_sandbox

    try:
        default_sandbox().warm_up()
    except Exception:  # noqa: BLE001 - the page's own compile reports a worker that cannot start
        pass


def preload() -> None:
    """Import `PRELOAD`, each as far as it goes (a missing optional package is the page's to report)."""
    import importlib

    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001
            pass


@asynccontextmanager
async def lifespan(_app: Any) -> AsyncIterator[None]:
    threading.Thread(target=start_worker, name="inspector-worker-start", daemon=True).start()
    threading.Thread(target=preload, name="inspector-preload", daemon=True).start()
    yield
