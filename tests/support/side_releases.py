"""Tests that need a second Triton release's side environment (`python -m inspector versions add X`,
which scripts/install.sh --test runs): skipped where it is not there, failed instead where
INSPECTOR_REQUIRE_VERSIONS=1 (CI, which must not skip them silently)."""

from __future__ import annotations

import os
from typing import NoReturn

import pytest


def missing(why: str) -> NoReturn:
    """Skip the test saying `why`; fail it where INSPECTOR_REQUIRE_VERSIONS=1."""
    if os.environ.get("INSPECTOR_REQUIRE_VERSIONS") == "1":
        pytest.fail(why)
    pytest.skip(why)


def ready(release: str) -> bool:
    """Whether Triton `release`'s side environment is installed and ready."""
    from inspector import versions

    env = versions.get(release)
    return env is not None and env.ready
