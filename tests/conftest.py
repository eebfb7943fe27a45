"""Shared fixtures: an isolated inspector cache per test session, GPU-test skipping."""

from __future__ import annotations

import os

import pytest

# Helpers shared by tests in several folders (tests/support: paths, fuzz cases, analysis kernels, ...)
# and the benchmark scripts whose cases and harnesses tests reuse (coalescing_fidelity,
# occupancy_driver_check) are imported by module name: both folders are on pytest's `pythonpath`
# (pyproject.toml). Never `from conftest import` (tests/browser has a conftest too).
from paths import has_gpu

# Tests compile in-process (their own Sandbox), spawning no warm pool daemon; tests/isolation/test_pool.py turns it on,
# and so do the command lines tests run (`paths.cli_environment`: one daemon per session, stopped at its end;
# a daemon that outlives a killed session stops after 2 idle minutes).
os.environ.setdefault("TRITON_INSPECTOR_POOL", "0")
os.environ.setdefault("TRITON_INSPECTOR_POOL_IDLE", "120")


@pytest.hookimpl(optionalhook=True)  # pytest-xdist's hook: absent where xdist is not installed
def pytest_xdist_auto_num_workers(config):
    """`-n auto`: one worker per core up to 4; one where there is a GPU (its tests time kernels and
    read its counters, which other work on the card would disturb)."""
    return 1 if has_gpu() else max(1, min(os.cpu_count() or 1, 4))


# The long end-to-end checks (marker `long`: browser sessions on a live server, `fix` on published
# kernels) take about half of the suite's CPU time on 2 cores; the default `pytest` leaves them out
# so it fits 20 minutes there, and CI (.ci/run) sets this to run everything. An explicit `-m`
# decides for itself (`pytest -m long` runs only them).
RUN_LONG = os.environ.get("INSPECTOR_LONG") == "1"
LEFT_OUT = ("long end-to-end checks (marker `long`) left out: INSPECTOR_LONG=1 or `-m long` runs them; "
            "CI (.ci/run) does")


def _leaves_out_long(config) -> bool:
    return not RUN_LONG and not config.getoption("markexpr")


def pytest_report_header(config):
    return LEFT_OUT if _leaves_out_long(config) else None


def pytest_terminal_summary(terminalreporter, config):
    """Said again at the end, where `-q` shows it (xdist's summary does not count the deselected)."""
    if _leaves_out_long(config):
        terminalreporter.write_line(LEFT_OUT)


def _deselect_long(config, items) -> None:
    if not _leaves_out_long(config):
        return
    kept = [i for i in items if "long" not in i.keywords]
    if len(kept) < len(items):
        config.hook.pytest_deselected(items=[i for i in items if "long" in i.keywords])
        items[:] = kept


def pytest_collection_modifyitems(config, items):
    _deselect_long(config, items)
    if has_gpu():
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU (run on the device machine)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session", autouse=True)
def _isolated_cache(tmp_path_factory):
    """Every test session gets its own inspection cache, so results are really compiled; at its end,
    the pool daemons its command lines started (keyed by that cache) are stopped."""
    old = os.environ.get("TRITON_INSPECTOR_CACHE")
    cache = os.environ["TRITON_INSPECTOR_CACHE"] = str(tmp_path_factory.mktemp("inspector-cache"))
    yield
    _stop_pools_using(cache)
    if old is None:
        os.environ.pop("TRITON_INSPECTOR_CACHE", None)
    else:
        os.environ["TRITON_INSPECTOR_CACHE"] = old


@pytest.fixture(scope="session")
def sandbox():
    """One warm worker process shared by the session's tests."""
    from inspector.isolation.sandbox import Sandbox

    box = Sandbox()
    yield box
    box.close()


def _stop_pools_using(cache: str) -> None:
    """Stop the pool daemons this session's command lines started: those whose environment names
    its cache folder (a pool's key includes it, so no other session's or user's daemon matches)."""
    from inspector.isolation.pool import pools, stop_pool

    wanted = f"TRITON_INSPECTOR_CACHE={cache}".encode()
    for info in pools():
        try:
            with open(f"/proc/{info['pid']}/environ", "rb") as f:
                mine = wanted in f.read().split(b"\0")
        except (OSError, KeyError):
            continue
        if mine:
            stop_pool(info["key"])
