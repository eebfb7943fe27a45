"""The browser tests' own pieces beside the shipped harness (`inspector.testing.browser`, whose
): where screenshots and server logs go, and one server per test module."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

from inspector.testing.browser import REPO, app_server

SHOTS = REPO / "test-artifacts" / "screenshots"


def serve(tmp_path_factory, name: str, env_extra: dict[str, str] | None = None) -> Iterator[tuple[str, Path]]:
    """An app server for one test module, with its own workspace home; its log is
    test-artifacts/streamlit-NAME.log. Yields (url, home)."""
    home = tmp_path_factory.mktemp("inspector-home")
    SHOTS.mkdir(parents=True, exist_ok=True)
    log = SHOTS.parent / f"streamlit-{name}.log"
    with app_server(home, log=log, env_extra=env_extra) as url:
        yield url, home
    # The server's log of the module's whole run holds no deprecation warning (a Streamlit
    # release that removes what the page still calls would break it).
    warned = [line for line in log.read_text(errors="replace").splitlines() if "deprecat" in line.lower()]
    assert not warned, f"the server logged deprecation warnings ({log}): {warned[:3]}"
