"""Fixes for code nobody here wrote: hints placed where the TTIR loses the fact, composed with a
layout change when a hint alone stops at 64 bits, a peeled tail where no promise holds; every
promise checked against the example's data (a twin whose data breaks it gets no holding hint),
every candidate compiled and its outputs compared under the interpreter."""

from __future__ import annotations

import numpy as np
import pytest
from hint_kernels import BREAKS, JAGGED_LOAD_LINE, ROWS_LOAD_LINE, ROWS_STORE_LINE, jagged, rows
from paths import KERNELS
from side_releases import missing, ready

from inspector.fixes import fix
from inspector.fixes.compose import merge_line, merge_sources
from inspector.triton_compat.interpreter_checks import block_promise_broken


def _finding(report, line):
    return next(ff for ff in report.findings if ff.finding.line == line and ff.finding.code.endswith("_access"))


@pytest.mark.parametrize("target", ["sm_90", "gfx942"])
def test_a_hint_on_a_loaded_loop_bound_and_a_layout_change_compose_to_128_bits(sandbox, tmp_path, target):
    # gfx942's 64-wide wavefronts leave one element a thread (256 over 256 lanes): the promises alone
    # compile to the same figures there, and only with a 4x block or a quarter of the warps show
    report = fix(jagged(tmp_path), target=target, sandbox=sandbox, timeout=300)
    ff = _finding(report, JAGGED_LOAD_LINE)
    best = ff.candidates[0]
    src = best.candidate.source
    # the promises on the loads the loop's bounds come from (`i` starts at `start`) ...
    assert "start = tl.multiple_of(tl.load(offsets_ptr + row), 4)" in src
    assert "end = tl.multiple_of(tl.load(offsets_ptr + row + 1), 4)" in src
    # ... and a layout that gives each thread four elements (256 over 128 threads gives two)
    assert ("BLOCK=512" in src or "num_warps=2" in src) if target == "sm_90" else ("BLOCK=1024" in src or "num_warps=1" in src)
    assert best.finding_gone and best.changes["width_bits"] == [32, 128]
    assert best.assumptions_hold is True and best.checked is True
    if target == "sm_90":  # the promises alone: 64 bits, which is why the search went on
        alone = next(t for t in ff.candidates if t.candidate.promises == [9, 10] and "with" not in t.title)
        assert alone.changes["width_bits"] == [32, 64] and not alone.finding_gone and alone.score < best.score
    else:
        assert any("compiled to the same figures" in x for x in ff.tried)


def test_rows_that_break_the_promise_get_no_holding_hint(sandbox, tmp_path):
    report = fix(jagged(tmp_path, BREAKS), target="sm_90", sandbox=sandbox, timeout=300)
    ff = _finding(report, JAGGED_LOAD_LINE)
    hinted = [t for t in ff.candidates if t.candidate.kind == "hint"]
    assert hinted and all(t.assumptions_hold is False for t in hinted)
    assert all(t.score < 0 for t in hinted)
    assert "not a multiple of 4" in hinted[0].assumptions_note


@pytest.mark.parametrize("cols, holds, release", [(1000, True, None), (1001, False, None), (1000, True, "3.6.0")])
def test_a_run_time_leading_dimension_gets_its_hint_on_the_product_and_the_mask(sandbox, tmp_path, cols, holds,
                                                                                 release):
    # Triton 3.6 records an expression's location elsewhere (its right operand, 0-based): the same
    # hints are found in its TTIR
    if release and not ready(release):
        missing(f"Triton {release}'s side environment is not installed (scripts/install.sh --test adds it)")
    report = fix(rows(tmp_path, cols), target="sm_90", sandbox=sandbox, timeout=300,
                 **({"triton": release} if release else {}))
    ff = _finding(report, ROWS_LOAD_LINE)
    hinted = [t for t in ff.candidates if t.candidate.kind == "hint"]
    first = hinted[0]
    src = first.candidate.source
    # `ld` is a kernel argument, where Triton 3.x drops a hint: it goes on `row * ld`, in the load and
    # the store alike (the compiler merged them), and the mask's bound on the comparison
    assert src.count("tl.multiple_of(row * ld, 4)") == 2 and "mask = tl.max_constancy(cols < n_cols, 4)" in src
    assert "multiple_of(ld" not in src
    assert first.finding_gone and first.changes["width_bits"] == [32, 128]
    if holds:
        assert first.assumptions_hold is True and first.checked is True
        assert first is ff.candidates[0]
        assert _finding(report, ROWS_STORE_LINE).candidates[0].finding_gone
    else:
        assert all(t.assumptions_hold is False for t in hinted) and all(t.score < 0 for t in hinted)


def test_the_readme_vector_add_at_4095_gets_its_tail_peeled(sandbox):
    report = fix(KERNELS / "add.py", target="sm_90", args={"n": "4095"}, sandbox=sandbox, timeout=300)
    ff = _finding(report, 25)
    best = ff.candidates[0]
    assert best.candidate.kind == "peel" and "if pid * BLOCK + BLOCK <= n:" in best.candidate.source
    assert best.finding_gone and best.changes["width_bits"] == [32, 128] and best.checked is True
    # the promise on the mask would vectorise too, but the launch's n = 4095 breaks it
    hint = next(t for t in ff.candidates if t.candidate.kind == "hint")
    assert hint.assumptions_hold is False and "n = 4095" in hint.assumptions_note


def test_edits_merge_where_they_touch_different_characters():
    o = "    x = tl.load(p + row * ld + c, mask=m)\n"
    a = "    x = tl.load(p + tl.multiple_of(row * ld, 4) + c, mask=m)\n"
    b = "    x = tl.load(p + row * ld + c, mask=None)\n"
    assert merge_line(o, a, b) == "    x = tl.load(p + tl.multiple_of(row * ld, 4) + c, mask=None)\n"
    assert merge_line(o, a, "    x = tl.load(p + row * LD + c, mask=m)\n") is None  # the same characters
    assert merge_sources("a\nb\n", "A\nb\n", "a\nB\n") == "A\nB\n"
    assert merge_sources("a\nb\n", "A\nb\n", "a\nb\nc\n") is None  # a line count moved, no map given


def test_block_promises_are_checked_as_the_compiler_reads_them():
    assert block_promise_broken("multiple_of", np.arange(8) + 4, 4) is None
    assert block_promise_broken("multiple_of", np.arange(8) + 2, 4) == 2
    assert block_promise_broken("multiple_of", np.array([0, 1, 2, 3, 9, 10, 11, 12]), 4) == 9  # a run starts at 9
    assert block_promise_broken("max_contiguous", np.array([0, 1, 2, 3, 9, 10, 11, 13]), 4) == 9
    assert block_promise_broken("max_constancy", (np.arange(16) < 12).astype(np.int64), 4) is None
    assert block_promise_broken("max_constancy", (np.arange(16) < 10).astype(np.int64), 4) == 1
    rows2d = np.stack([np.arange(8), np.arange(8) + 1000])
    assert block_promise_broken("multiple_of", rows2d, 4) is None
    assert block_promise_broken("multiple_of", rows2d + 1, 4) == 1
