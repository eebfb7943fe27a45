"""One headless Chromium per browser test module."""

from __future__ import annotations

import pytest
from inspector.testing.browser import chromium
from browser_support import serve


@pytest.fixture(scope="module")
def browser():
    yield from chromium()


@pytest.fixture(scope="module")
def server(browser, tmp_path_factory, request):
    """The module's own app server: (url, home); its log is test-artifacts/streamlit-browser-NAME.log
    for test_browser_NAME.py. A module that needs other settings defines its own."""
    name = request.module.__name__.rsplit(".", 1)[-1].removeprefix("test_").replace("_", "-")
    yield from serve(tmp_path_factory, name)
