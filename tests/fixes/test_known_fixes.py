"""Published kernels with a known upstream fix (tests/fixtures/known_fixes/MANIFEST.json): `fix` proposes
that fix, or one with the same effect, among its first 3 candidates for the finding named, and the
candidate removes the finding in its own compile."""

from __future__ import annotations

import hashlib
import json
import re

import pytest
from paths import REPO
from side_releases import missing, ready

from inspector.fixes import fix

CORPUS = REPO / "tests" / "fixtures" / "known_fixes"
ENTRIES = json.loads((CORPUS / "MANIFEST.json").read_text())["entries"]


def _id(entry: dict) -> str:
    return f"{entry['file'].split('/')[0]}-{entry['kernel']}"


def _release(entry: dict) -> str | None:
    """The Triton release the entry compiles with; skips (fails where CI requires side
    environments) when its side environment is not there."""
    wanted = entry.get("triton")
    if wanted and not ready(wanted):
        missing(f"no ready Triton {wanted} side environment (`python -m inspector versions add {wanted}`)")
    return wanted


@pytest.mark.long
@pytest.mark.parametrize("entry", ENTRIES, ids=[_id(e) for e in ENTRIES])
def test_the_upstream_fix_is_among_the_first_three(sandbox, entry):
    path = CORPUS / entry["file"]
    assert hashlib.sha256(path.read_bytes()).hexdigest() == entry["sha256"], "not the published bytes"
    release = _release(entry)
    report = fix(path, kernel=entry["kernel"], target=entry["target"], autotune_index=entry["autotune_config"],
                 args=entry.get("args") or {}, sandbox=None if release else sandbox, triton=release, timeout=300,
                 check=False, findings=[entry["finding"]])
    assert report.original.kernel == entry["kernel"], report.original.error
    ff = next((ff for ff in report.findings if ff.finding.code == entry["finding"]), None)
    assert ff is not None, [f.finding.title for f in report.findings]
    first = ff.candidates[:3]
    hit = next((t for t in first if re.search(entry["expect"], t.title)), None)
    assert hit is not None, [t.title for t in first]
    assert hit.after is not None and hit.after.launch_problem() is None
    if entry.get("gone", True):
        assert hit.finding_gone
    else:  # the upstream change improves the figure without clearing it (the entry's note)
        assert not hit.finding_gone and hit.changes["spill_bytes"][1] < hit.changes["spill_bytes"][0]


def test_the_corpus_holds_ten_kernels_from_at_least_five_projects():
    assert len(ENTRIES) >= 10
    assert len({e["file"].split("/")[0] for e in ENTRIES}) >= 5
    assert len({(e["file"], e["kernel"]) for e in ENTRIES}) == len(ENTRIES)
