"""How compiles are isolated on this server, said where nobody can miss it when they are not.

`inspector.compile.api.sandbox_status()` is probed once per server process. Without isolation (no user
namespaces, no bubblewrap), the file in the editor runs with the server's user's rights: a red
banner on every page says so, and what is missing. With it, one quiet line in the sidebar."""

from __future__ import annotations

from typing import Any

import streamlit as st

from inspector.compile.api import sandbox_status


def _status() -> dict[str, Any]:
    try:
        return sandbox_status()
    except Exception as e:  # noqa: BLE001 - a probe that fails is no isolation
        return {"isolated": False, "how": "unknown: the sandbox could not be probed", "missing": str(e), "mode": "off"}


def sandbox_note() -> None:
    """One line (in the sidebar) on how compiles are isolated."""
    status = _status()
    st.caption(f"Sandbox: {status.get('how', '?')}.")


def sandbox_banner() -> None:
    """The red banner, at the top of the page, when compiles are not sandboxed."""
    status = _status()
    if status.get("isolated"):
        return
    missing = status.get("missing") or "the sandbox"
    st.error(f"**Compiles are not sandboxed on this server.** The kernel file you edit is imported and run "
             f"with the server's user's rights: it can read that user's files and use the network. "
             f"Missing: {missing}. Run `sh scripts/install.sh` (it installs bubblewrap) or allow unprivileged "
             f"user namespaces, then restart the app.", icon=":material/gpp_bad:")
