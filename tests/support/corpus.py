"""A published corpus (tests/fixtures/published/NAME/MANIFEST.json) opened as a new user would:
each file as published, with nothing but what the tool names, for each target its entry is
portable to (through the command line, or the library call it makes)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from paths import REPO, cli_environment
from side_releases import missing, ready

PUBLISHED = REPO / "tests" / "fixtures" / "published"


def manifest(name: str) -> tuple[Path, list[dict]]:
    folder = PUBLISHED / name
    return folder, json.loads((folder / "MANIFEST.json").read_text())


def cli(*args: str) -> subprocess.CompletedProcess:
    # A generous compile limit: whether a file opens must not depend on this machine's speed
    # (a Gluon kernel takes 35 s on a loaded 2-core VM); the default limit is the product's, tested apart.
    return subprocess.run([sys.executable, "-m", "inspector", *args], capture_output=True, text=True, timeout=900,
                          cwd=REPO, env=cli_environment(TRITON_INSPECTOR_TIMEOUT="600"))


def release(entry: dict) -> list[str]:
    """`--triton X` for an entry written for an older release (its side environment must be there)."""
    wanted = entry.get("triton")
    if not wanted:
        return []
    if not ready(wanted):
        missing(f"no Triton {wanted} side environment (python -m inspector versions add {wanted})")
    return ["--triton", wanted]


def gap(entry: dict, target: str) -> str | None:
    """Why the entry does not open for `target`: `known_gap` is a reason for every target, or a
    reason per target ({"gfx942": "..."})."""
    known = entry.get("known_gap")
    return known.get(target) if isinstance(known, dict) else known


def cases(entries: list[dict]):
    """One pytest param per (entry, target); a known gap is a strict xfail (a fix must remove it)."""
    for entry in entries:
        for target in entry["targets"]:
            reason = gap(entry, target)
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            yield pytest.param(entry, target, id=f"{entry['file'].rsplit('/', 1)[1]}-{entry['project']}-{target}",
                               marks=marks)


def opens_with_the_cli_alone(folder: Path, entry: dict, target: str) -> dict:
    """Compile the entry's file for `target` as published, with `python -m inspector compile`; a
    bare file (kernels only) gets exactly the values the tool names as missing, with the ones it
    suggests. Asserts it compiled; the record."""
    path = str(folder / entry["file"])
    rel = release(entry)
    proc = cli("compile", path, "--target", target, "--json", *rel)
    rec = json.loads(proc.stdout)
    values = _suggested(entry, rec)
    if values is not None:
        proc = cli("compile", path, "--target", target, "--json", "--kernel", rec["kernel"],
                   *(f"--const={k}={v}" for k, v in values.items()), *rel)
        rec = json.loads(proc.stdout)
    assert proc.returncode == 0 and rec.get("error") is None, (rec.get("error") or {}).get("message", proc.stderr[-2000:])
    return _opened(entry, target, rec)


def opens_as_published(folder: Path, entry: dict, target: str, sandbox) -> dict:
    """`opens_with_the_cli_alone` through the library the CLI's `compile` calls, in the session's
    warm worker: the same pipeline without a Python start and a worker's imports per file (most of
    a corpus's time on a 2-core machine), SASS left for later as `compile` leaves it. An entry for an older release goes through the CLI,
    whose request picks that release's own worker."""
    from inspector.compile.api import inspect_kernel

    if entry.get("triton"):
        return opens_with_the_cli_alone(folder, entry, target)
    path = folder / entry["file"]
    rec = inspect_kernel(path, target=target, sandbox=sandbox, use_cache=False, timeout=600, defer=("sass",)).to_dict()
    values = _suggested(entry, rec)
    if values is not None:
        rec = inspect_kernel(path, target=target, kernel=rec["kernel"], consts=values, sandbox=sandbox,
                             use_cache=False, timeout=600, defer=("sass",)).to_dict()
    assert rec.get("error") is None, rec["error"]["message"]
    return _opened(entry, target, rec)


def _suggested(entry: dict, rec: dict) -> dict[str, str] | None:
    """The values a bare file's first compile names as missing, as suggested (None: nothing missing)."""
    err = rec.get("error")
    if entry["form"] != "bare" or not err or err["kind"] != "missing_constexpr":
        return None
    needed = err["details"]["missing"]
    assert needed and all(m["kind"] == "constexpr" and m.get("suggested") for m in needed)
    return {m["name"]: str(m["suggested"]) for m in needed}


def _opened(entry: dict, target: str, rec: dict) -> dict:
    assert rec["stages"]["ptx" if target.startswith("sm") else "amdgcn"]
    assert rec["kernel"] in entry["kernels"] or rec["call_origin"] == "harness"
    if entry["form"] == "package":  # the package's own code made the call: no value was given
        assert rec["call_origin"] not in ("signature", ""), rec["call_origin"]
    assert (rec["occupancy"] or {}).get("blocks_per_sm", 0) > 0
    return rec
