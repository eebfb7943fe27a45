"""Published kernels with a known upstream fix (tests/fixes_corpus/MANIFEST.json): `fix` proposes
that fix, or one with the same effect, among its first 3 candidates for the finding named, and the
candidate removes the finding in its own compile."""

from __future__ import annotations

import hashlib
import json
import re

import pytest
from paths import REPO

from inspector.fixes import fix

CORPUS = REPO / "tests" / "fixes_corpus"
ENTRIES = json.loads((CORPUS / "MANIFEST.json").read_text())["entries"]


@pytest.mark.parametrize("entry", ENTRIES, ids=[e["file"].split("/")[0] for e in ENTRIES])
def test_the_upstream_fix_is_among_the_first_three(sandbox, entry):
    path = CORPUS / entry["file"]
    assert hashlib.sha256(path.read_bytes()).hexdigest() == entry["sha256"], "not the published bytes"
    report = fix(path, kernel=entry["kernel"], target=entry["target"], autotune_index=entry["autotune_config"],
                 sandbox=sandbox, timeout=300, check=False)
    assert report.original.kernel == entry["kernel"]
    ff = next((ff for ff in report.findings if ff.finding.code == entry["finding"]), None)
    assert ff is not None, [f.finding.title for f in report.findings]
    first = ff.candidates[:3]
    hit = next((t for t in first if re.search(entry["expect"], t.title)), None)
    assert hit is not None, [t.title for t in first]
    assert hit.finding_gone and hit.after is not None and hit.after.launch_problem() is None
