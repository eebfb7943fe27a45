"""The second corpus (tests/fixtures/published/five_more_projects): 38 published files from five projects the first corpus does
not use (fla-core, gemlite, flashinfer, mamba-ssm, flash-attn), Gluon kernels among them, chosen
by a rule fixed before any was tried (tests/fixtures/published/five_more_projects/README.md). Each opens with nothing but what the
tool names, for every target it is portable to; the few that do not are listed with why (a strict
xfail: a fix must remove the entry), and the two no supported Triton release compiles must say so
at the right line."""

from __future__ import annotations

import hashlib
import json

import pytest
from corpus import cases, gap, cli, manifest, opens_as_published

CORPUS, MANIFEST = manifest("five_more_projects")


def test_the_second_corpus_is_kept_as_published():
    for entry in MANIFEST:
        assert hashlib.sha256((CORPUS / entry["file"]).read_bytes()).hexdigest() == entry["sha256"], entry["file"]
    projects = {e["project"] for e in MANIFEST}
    assert len(MANIFEST) >= 16 and len(projects) >= 4 and sum(e["gluon"] for e in MANIFEST) >= 2
    for project in projects:
        assert (CORPUS / project / "LICENSE").is_file(), project


def test_at_least_nine_in_ten_open_as_published():
    pairs = [(e, t) for e in MANIFEST for t in e["targets"]]
    gaps = [(e, t) for e, t in pairs if gap(e, t)]
    assert len(pairs) >= 60 and len(gaps) <= 0.1 * len(pairs), (len(gaps), len(pairs))


@pytest.mark.parametrize("entry, target", list(cases(MANIFEST)))
def test_a_published_file_opens_as_published(entry, target, sandbox):
    opens_as_published(CORPUS, entry, target, sandbox)


@pytest.mark.parametrize("name, line, words", [
    ("flash_attn/flash_attn/ops/triton/linear.py", 8, "triton.ops"),
    ("flash_attn/flash_attn/flash_attn_triton.py", None, "trans_b"),
])
def test_a_file_no_supported_release_compiles_says_where_and_why(name, line, words):
    entry = next(e for e in MANIFEST if e["file"] == name)
    assert entry["targets"] == []  # not counted as openable anywhere
    proc = cli("compile", str(CORPUS / name), "--target", "sm_90", "--json")
    err = json.loads(proc.stdout)["error"]
    assert proc.returncode == 1 and words in err["message"]
    source = (CORPUS / name).read_text().splitlines()
    assert err["file"].endswith(name.rsplit("/", 1)[1])
    expected = line or next(i for i, t in enumerate(source, 1) if "trans_b=True" in t)
    assert err["line"] == expected, (err["line"], expected)
