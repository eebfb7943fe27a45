"""What the app's server does once, at start (`inspector/ui/server.py`)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

from inspector.ui import server


def test_every_module_the_server_preloads_exists():
    # A module renamed or moved would silently stop being preloaded (the page pays for it again).
    missing = [name for name in server.PRELOAD if importlib.util.find_spec(name) is None]
    assert not missing, f"PRELOAD names modules that do not exist: {missing}"


def test_preloading_imports_no_page_module_and_no_torch():
    # The page's modules declare Streamlit components (a script run's business), and torch is the
    # sandboxed worker's: the server importing either would cost the first result, not save it.
    code = ("import sys; from inspector.ui import server; server.preload(); "
            "print(sorted(m for m in sys.modules if m == 'torch' or m == 'triton' "
            "or (m.startswith('inspector.ui.') and m != 'inspector.ui.server'))); "
            "print('pandas' in sys.modules, 'plotly.graph_objects' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True)
    assert out.stdout.split("\n")[:2] == ["[]", "True True"], out.stdout
