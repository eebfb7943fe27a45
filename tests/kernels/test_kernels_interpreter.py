"""Every bundled kernel matches its PyTorch reference in Triton's CPU interpreter.

All cases run in one child process (TRITON_INTERPRET=1 must be set before Triton is imported, and
this process stays in compiled mode); each (kernel, variant, size) is then its own test.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from paths import REPO

from inspector.bench import protocol as gallery

RUNNER = REPO / "tests" / "support" / "kernels_interpreter_run.py"
CASES = [
    pytest.param(name, variant, size, id=f"{name}-{variant}-{size}")
    for name in gallery.gallery_names()
    for variant in gallery.variants(gallery.load_gallery(name))
    for size in gallery.load_gallery(name).TEST_SIZES
]


@pytest.fixture(scope="module")
def interpreter_results() -> dict[tuple[str, str, str], dict]:
    env = dict(os.environ, TRITON_INTERPRET="1")
    proc = subprocess.run([sys.executable, str(RUNNER)], capture_output=True, text=True, env=env, timeout=600,
                          cwd=REPO)
    assert proc.returncode == 0, proc.stderr[-4000:]
    rows = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    return {(r["kernel"], r["variant"], json.dumps(r["size"])): r for r in rows}


@pytest.mark.parametrize("name,variant,size", CASES)
def test_kernel_matches_reference_in_interpreter(interpreter_results, name, variant, size):
    row = interpreter_results.get((name, variant, json.dumps(size)))
    assert row is not None, f"the interpreter run produced no result for {name} {variant} {size}"
    if "skipped" in row:
        pytest.skip(row["skipped"])
    assert row["ok"], row["message"]


def test_interpreter_skips_are_few_and_explained():
    """Only variants the interpreter cannot run are skipped, each with its reason."""
    for name in gallery.gallery_names():
        module = gallery.load_gallery(name)
        skip = getattr(module, "INTERPRETER_SKIP", None) or {}
        assert set(skip) <= set(gallery.variants(module)), name
        if getattr(module, "LANGUAGE", "triton") == "gluon":  # Gluon has no interpreter path at all
            assert set(skip) == set(gallery.variants(module)), name
            continue
        assert len(skip) < len(gallery.variants(module)), f"{name}: no variant left for the interpreter"
        assert all(isinstance(r, str) and r for r in skip.values())
