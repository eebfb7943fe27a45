"""Every app test gets its own inspector home (its workspaces), when it asks for `home`."""

from __future__ import annotations

import pytest


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("TRITON_INSPECTOR_HOME", str(tmp_path))
    return tmp_path
