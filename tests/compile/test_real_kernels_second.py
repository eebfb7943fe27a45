"""The second corpus (tests/fixtures/published/five_more_projects): 38 published files from five projects the first corpus does
not use (fla-core, gemlite, flashinfer, mamba-ssm, flash-attn), Gluon kernels among them, chosen
by a rule fixed before any was tried (tests/fixtures/published/five_more_projects/README.md). Each opens with the CLI alone, as
published, for every target it is portable to; the few that do not are listed with why (a strict
xfail: a fix must remove the entry), and the two no supported Triton release compiles must say so
at the right line."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys

import pytest
from paths import REPO
from side_releases import missing, ready


CORPUS = REPO / "tests" / "fixtures" / "published" / "five_more_projects"
MANIFEST = json.loads((CORPUS / "MANIFEST.json").read_text())


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "inspector", *args], capture_output=True, text=True, timeout=600,
                          cwd=REPO, env={**os.environ, "TRITON_INSPECTOR_POOL": "0"})


def _release(entry: dict) -> list[str]:
    """`--triton X` for an entry written for an older release (its side environment must be there)."""
    wanted = entry.get("triton")
    if not wanted:
        return []
    if not ready(wanted):
        missing(f"no Triton {wanted} side environment (python -m inspector versions add {wanted})")
    return ["--triton", wanted]


def _cases():
    for entry in MANIFEST:
        for target in entry["targets"]:
            marks = [pytest.mark.xfail(strict=True, reason=entry["known_gap"])] if entry.get("known_gap") else []
            yield pytest.param(entry, target, id=f"{entry['file'].rsplit('/', 1)[1]}-{entry['project']}-{target}",
                               marks=marks)


def test_the_second_corpus_is_kept_as_published():
    for entry in MANIFEST:
        assert hashlib.sha256((CORPUS / entry["file"]).read_bytes()).hexdigest() == entry["sha256"], entry["file"]
    projects = {e["project"] for e in MANIFEST}
    assert len(MANIFEST) >= 16 and len(projects) >= 4 and sum(e["gluon"] for e in MANIFEST) >= 2
    for project in projects:
        assert (CORPUS / project / "LICENSE").is_file(), project


def test_at_least_nine_in_ten_open_as_published():
    pairs = [(e, t) for e in MANIFEST for t in e["targets"]]
    gaps = [(e, t) for e, t in pairs if e.get("known_gap")]
    assert len(pairs) >= 60 and len(gaps) <= 0.1 * len(pairs), (len(gaps), len(pairs))


@pytest.mark.parametrize("entry, target", list(_cases()))
def test_a_published_file_opens_with_the_cli_alone(entry, target):
    path = str(CORPUS / entry["file"])
    release = _release(entry)
    proc = _cli("compile", path, "--target", target, "--json", *release)
    rec = json.loads(proc.stdout)
    err = rec.get("error")
    if entry["form"] == "bare" and err and err["kind"] == "missing_constexpr":
        # kernels only, launched from nowhere the tool can reach: it names every missing value at
        # once with a value it checked, and compiles with exactly those
        missing = err["details"]["missing"]
        assert missing and all(m["kind"] == "constexpr" and m.get("suggested") for m in missing)
        values = [f"--const={m['name']}={m['suggested']}" for m in missing]
        proc = _cli("compile", path, "--target", target, "--json", "--kernel", rec["kernel"], *values, *release)
        rec = json.loads(proc.stdout)
        err = rec.get("error")
    assert proc.returncode == 0 and err is None, (err or {}).get("message", proc.stderr[-2000:])
    assert rec["stages"]["ptx" if target.startswith("sm") else "amdgcn"]
    assert rec["kernel"] in entry["kernels"] or rec["call_origin"] == "harness"
    if entry["form"] == "package":  # the package's own code made the call: no value was given
        assert rec["call_origin"] not in ("signature", ""), rec["call_origin"]
    assert (rec["occupancy"] or {}).get("blocks_per_sm", 0) > 0


@pytest.mark.parametrize("name, line, words", [
    ("flash_attn/flash_attn/ops/triton/linear.py", 8, "triton.ops"),
    ("flash_attn/flash_attn/flash_attn_triton.py", None, "trans_b"),
])
def test_a_file_no_supported_release_compiles_says_where_and_why(name, line, words):
    entry = next(e for e in MANIFEST if e["file"] == name)
    assert entry["targets"] == []  # not counted as openable anywhere
    proc = _cli("compile", str(CORPUS / name), "--target", "sm_90", "--json")
    err = json.loads(proc.stdout)["error"]
    assert proc.returncode == 1 and words in err["message"]
    source = (CORPUS / name).read_text().splitlines()
    assert err["file"].endswith(name.rsplit("/", 1)[1])
    expected = line or next(i for i, t in enumerate(source, 1) if "trans_b=True" in t)
    assert err["line"] == expected, (err["line"], expected)
