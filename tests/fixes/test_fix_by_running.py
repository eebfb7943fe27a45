"""`fix --run COMMAND`: candidates made on the run's reproducer, their promises checked against the
data the program really passed, written as edits of the user's own kernel file (the kernel's body
and the launch in its wrapper), never of the reproducer."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from paths import REPO

FIXTURES = REPO / "tests" / "fixtures" / "fix_by_running"


def _fix(tmp_path, command: str, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "inspector", "fix", "--run", command, "--kernel", "jagged_row_sum",
                           "--target", "sm_90", *extra], capture_output=True, text=True, cwd=tmp_path, timeout=600,
                          env={**os.environ, "PYTHONPATH": str(REPO)})


@pytest.mark.long
def test_a_fix_through_a_run_edits_the_users_file_and_keeps_its_promises_on_the_runs_data(tmp_path):
    for name in ("rows.py", "run_rows.py"):
        shutil.copy(FIXTURES / name, tmp_path / name)
    mine = (tmp_path / "rows.py").read_text()
    # rows of 64-element multiples: the promise on the loaded row bounds holds, and candidate 1 is
    # written onto rows.py: the hint in the kernel, the wider block in row_sums' own launch
    run = _fix(tmp_path, "python run_rows.py", "--apply", "1", "--out", "fixed.py")
    assert run.returncode == 0, run.stderr[-3000:]
    fixed = (tmp_path / "fixed.py").read_text()
    assert "tl.multiple_of(tl.load(offsets_ptr + row), 4)" in fixed
    assert "BLOCK=512" in fixed and "def row_sums(values, offsets):" in fixed and "_filled" not in fixed
    changed = [(a, b) for a, b in zip(mine.splitlines(), fixed.splitlines()) if a != b]
    assert len(mine.splitlines()) == len(fixed.splitlines()) and len(changed) == 3, changed

    # rows of 1000, 517 and 3 elements: the run's own offsets break the promise, which never holds
    run = _fix(tmp_path, "python run_rows.py 256 1000 64 517 3 130", "--json")
    assert run.returncode == 0, run.stderr[-3000:]
    found = json.loads(run.stdout)["findings"][0]
    assert found["candidates"], found
    promised = [c for c in found["candidates"] if "multiple_of" in c["diff"]]
    assert promised and not any(c["assumptions_hold"] for c in promised)
    lines = mine.splitlines()
    first = next(i for i, text in enumerate(lines, 1) if text.startswith("def jagged_row_sum"))
    last = next(i for i, text in enumerate(lines, 1) if text.startswith("def row_sums"))
    note = promised[0]["assumptions_note"]  # "line 9 saw 1837, ...": rows.py's line, not the reproducer's
    assert "1837" in note and first < int(note.split("line ")[1].split()[0]) < last, note
    assert all(c["file"] == str(tmp_path / "rows.py") and c["diff"].startswith("--- a/rows.py")
               for c in found["candidates"] if c["diff"])


def test_the_text_report_names_every_figure_a_candidate_moves():
    """A candidate that moves the shared-memory figures printed through the text report (it was a
    KeyError: 'shared_excess' on Liger's rms_norm opened through a run)."""
    from inspector.analysis.advisor import Finding
    from inspector.cli.fix import format_report
    from inspector.fixes.candidates import Candidate
    from inspector.fixes.search import FindingFixes, FixReport, Tried
    from inspector.record import Inspection

    tried = Tried(Candidate("pad the tile", "x = 1\n", ""), changes={"shared_excess": [2.0, 1.0],
                                                                     "shared_excess_kernel": [1.5, 1.0]})
    report = FixReport(Inspection(kernel="k", target="sm_90"),
                       [FindingFixes(Finding("bank_conflicts", "medium", 1.0, 3, "line 3: conflicts"), [tried])])
    text = "\n".join(format_report(report))
    assert "shared wavefronts over the ideal (the line) 2.00x -> 1.00x" in text, text
