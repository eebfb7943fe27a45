"""Fixes on published kernels nobody here wrote (`tests/fixtures/hint_fixes/`, each file an excerpt
of a published kernel, its source named in its header): the file's own `# REFERENCE:` lines make
the fix a person wrote or published (a hint the compiler keeps); the tool, given the file without
it, must offer among the first 3 candidates of each finding the reference lifts one that reaches
the reference's widths, whose promises the example's data keep and whose outputs match. The
file's `# TWIN:` line changes the example's data so that the promise breaks: then, on the
accesses whose promise it breaks (at least one of those the reference lifts), no hint that
reaches the reference's width may hold."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from inspector.analysis import memory_report
from inspector.compile.api import inspect_kernel
from inspector.fixes import fix

CORPUS = Path(__file__).resolve().parent.parent / "fixtures" / "hint_fixes"
CASES = sorted(p for p in CORPUS.glob("*.py"))
# `# REFERENCE: old => new` (several), `# TWIN: old => new` (one)
EDIT = re.compile(r"^# (REFERENCE|TWIN): (.*?) => (.*)$", re.M)
KERNEL = re.compile(r"^# KERNEL: (\w+)$", re.M)


def edits(text: str) -> tuple[list[tuple[str, str]], tuple[str, str]]:
    found = EDIT.findall(text)
    refs = [(old, new) for kind, old, new in found if kind == "REFERENCE"]
    twin = next((old, new) for kind, old, new in found if kind == "TWIN")
    return refs, twin


def replaced(text: str, pairs: list[tuple[str, str]]) -> str:
    """`text` with each `old` replaced below the header (the header quotes them too)."""
    head, _, body = text.partition("\nimport ")
    body = "import " + body
    for old, new in pairs:
        assert old in body, f"reference edit not found: {old!r}"
        body = body.replace(old, new)
    return head + "\n" + body


def widths(rec) -> dict[int, int]:
    out: dict[int, int] = {}
    for a in memory_report(rec).accesses:
        if a.width_bits and not a.uniform:
            out[a.line] = min(out.get(a.line, a.width_bits), a.width_bits)
    return out


def test_the_corpus_is_what_the_issue_asks():
    assert len(CASES) >= 12
    sources = {re.search(r"^# Source: ([\w.-]+/[\w.-]+)", p.read_text(), re.M).group(1) for p in CASES}
    assert len(sources) >= 5, sources


@pytest.mark.long
@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_a_published_kernel_gets_its_reference_fix(sandbox, tmp_path, path):
    text = path.read_text()
    refs, twin = edits(text)
    kernel = KERNEL.search(text)
    kw = dict(target="sm_90", sandbox=sandbox, timeout=300, **({"kernel": kernel.group(1)} if kernel else {}))
    mine = tmp_path / path.name
    mine.write_text(text)
    reference = tmp_path / "reference" / path.name
    reference.parent.mkdir()
    reference.write_text(replaced(text, refs))
    before, after = widths(inspect_kernel(mine, **kw)), widths(inspect_kernel(reference, **kw))
    lifted = {line: w for line, w in after.items() if w > before.get(line, w)}
    assert lifted, f"the reference lifts no access: {before} -> {after}"
    access = ["scalar_access", "partial_access", "uncoalesced_access"]  # the findings a reference lifts
    # the lines the reference lifts: the other findings' searches would cost compiles, not checks
    report = fix(mine, findings=access, lines=sorted(lifted), **kw)
    assert {ff.finding.line for ff in report.findings} <= set(lifted)  # `lines` keeps only those
    for line, want in lifted.items():
        ff = next((ff for ff in report.findings if ff.finding.line == line and ff.finding.code.endswith("_access")),
                  None)
        assert ff is not None, f"line {line}: no finding ({[f.finding.title for f in report.findings]})"
        good = [t for t in ff.candidates[:3] if t.measures and (t.measures.width_bits or 0) >= want
                and t.assumptions_hold is not False and t.checked is True
                and (t.candidate.kind != "hint" or t.assumptions_hold is True)]
        assert good, (f"line {line}: none of the first 3 reaches {want} bits and holds: "
                      + "; ".join(f"{t.title} -> {t.measures and t.measures.width_bits} bits, holds "
                                  f"{t.assumptions_hold}, checked {t.checked}" for t in ff.candidates[:3]))
    # the twin: the same kernel on data that breaks the promise
    broken = tmp_path / "twin" / path.name
    broken.parent.mkdir()
    assert twin[0] in text.partition("\nimport ")[2], f"twin edit not found: {twin[0]!r}"
    broken.write_text(replaced(text, [twin]))
    report = fix(broken, findings=access, lines=sorted(lifted), **kw)
    holding = {ff.finding.line for ff in report.findings for t in ff.candidates
               if t.candidate.kind == "hint" and t.assumptions_hold is True and ff.finding.line in lifted
               and t.measures and (t.measures.width_bits or 0) >= lifted[ff.finding.line]}
    # the twin breaks the promise of at least one access the reference lifts (vLLM's K cache packing,
    # not its V cache): there, no hint may hold
    assert set(lifted) - holding, f"a holding hint on every line the reference lifts: {sorted(holding)}"
