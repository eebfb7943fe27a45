"""One headless Chromium per browser test module."""

from __future__ import annotations

import pytest
from browser_support import chromium


@pytest.fixture(scope="module")
def browser():
    yield from chromium()
