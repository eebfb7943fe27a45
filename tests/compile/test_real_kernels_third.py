"""The third corpus (tests/fixtures/published/third_round): 41 published files from six sources
neither earlier corpus uses (Triton's own tutorials, sglang, deepspeed, xformers, bitsandbytes,
cut-cross-entropy; README.md says where each came from). Each opens with nothing but what the
tool names, for every target it is portable to; the few that do not are listed with why (a strict
xfail: a fix must remove the entry). Their first rate was taken before most of the changes made
for them (docs/your-kernels.md has the rates, first try and now)."""

from __future__ import annotations

import hashlib

import pytest
from corpus import cases, gap, manifest, opens_as_published

CORPUS, MANIFEST = manifest("third_round")


def test_the_third_corpus_is_kept_as_published_from_six_sources():
    for entry in MANIFEST:
        assert hashlib.sha256((CORPUS / entry["file"]).read_bytes()).hexdigest() == entry["sha256"], entry["file"]
    projects = {e["project"] for e in MANIFEST}
    assert len(MANIFEST) >= 30 and len(projects) >= 5, (len(MANIFEST), projects)
    assert sum(e["form"] == "tutorial" for e in MANIFEST) >= 6  # Triton's own tutorials, module-level code and all


def test_at_least_nine_in_ten_open_as_published():
    pairs = [(e, t) for e in MANIFEST for t in e["targets"]]
    gaps = [(e, t) for e, t in pairs if gap(e, t)]
    assert len(pairs) >= 60 and len(gaps) <= 0.1 * len(pairs), (len(gaps), len(pairs))


@pytest.mark.parametrize("entry, target", list(cases(MANIFEST)))
def test_a_published_file_opens_as_published(entry, target, sandbox):
    opens_as_published(CORPUS, entry, target, sandbox)
