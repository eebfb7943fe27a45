"""Candidate fixes, compiled, checked and ranked, on real Triton output: a jagged row sum gets the
alignment hint with its promise checked against its real offsets; offsets that break the promise
sink it; a wrong launch change is caught by comparing outputs under the interpreter; the CLI's
JSON and --apply; the pre-flight matrix finds a config that cannot launch and the change that fits."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from jagged import jagged_source
from paths import REPO, cli_environment

from inspector.fixes import fix

PADDED = "torch.tensor([96, 1008, 32, 512, 1024, 16, 784, 64] * 4)"  # every row a multiple of 16 elements
RAGGED = "torch.tensor([100, 1000, 37, 512, 1024, 3, 777, 64] * 4)"  # as real data comes


def _jagged(tmp_path, lengths):
    path = tmp_path / "jagged.py"
    path.write_text(jagged_source(lengths))
    return path


def _access_fixes(report):
    return next(ff for ff in report.findings if ff.finding.code in ("scalar_access", "partial_access"))


def test_a_jagged_sum_gets_the_alignment_hint_its_offsets_keep(sandbox, tmp_path):
    report = fix(_jagged(tmp_path, PADDED), target="sm_90", sandbox=sandbox, timeout=300)
    ff = _access_fixes(report)
    assert ff.finding.line == 12
    best = ff.candidates[0]
    # both promises, each on the load the TTIR shows the fact lost at: the row start (the address)
    # and the row end (the mask's bound `end - start`); each alone leaves the loads scalar, or
    # makes them worse (the offset alone splits each thread's group at the mask)
    assert "start = tl.multiple_of(tl.load(offsets + row), 4)" in best.candidate.source
    assert "end = tl.multiple_of(tl.load(offsets + row + 1), 4)" in best.candidate.source
    assert best.finding_gone and best.changes["width_bits"] == [32, 128]
    assert best.assumptions_hold is True and best.checked is True
    assert any("`tl.load(offsets + row)` (`start`) on line 9 is a multiple of 4" in a for a in best.candidate.assumptions)
    assert best.diff.startswith("--- a/jagged.py") and "+    start = tl.multiple_of(" in best.diff
    alone = next(t for t in ff.candidates if t.candidate.promises == [9])
    assert alone.changes.get("sector_efficiency") == [1.0, 0.25] and not alone.finding_gone
    assert alone.score < best.score
    # the small grid gets no smaller BLOCK: it spans each row (only `tl.arange` and the mask use it),
    # so halving it would cut rows short rather than make more programs
    grid = next(ff for ff in report.findings if ff.finding.code == "small_grid")
    assert not any("BLOCK 1024 -> 512" in t.title for t in grid.candidates), [t.title for t in grid.candidates]


def test_offsets_that_break_the_promise_sink_the_hint(sandbox, tmp_path):
    report = fix(_jagged(tmp_path, RAGGED), target="sm_90", sandbox=sandbox, timeout=300)
    ff = _access_fixes(report)
    hinted = [t for t in ff.candidates if "tl.multiple_of(tl.load(offsets" in t.candidate.source]
    assert hinted and all(t.assumptions_hold is False for t in hinted)
    assert "not a multiple of 4" in hinted[0].assumptions_note and "line 9 saw 1137" in hinted[0].assumptions_note  # 100 + 1000 + 37
    # never first while anything else holds; with nothing else, every candidate is marked broken
    first = ff.candidates[0]
    assert first.assumptions_hold is not False or all(t.assumptions_hold is False for t in ff.candidates)
    assert all(t.score < 0 for t in hinted)


@pytest.mark.long
def test_the_cli_json_and_apply(sandbox, tmp_path):
    path = _jagged(tmp_path, PADDED)
    env_py = [sys.executable, "-m", "inspector", "fix", str(path), "--target", "sm_90"]
    out = subprocess.run(env_py + ["--json"], cwd=REPO, capture_output=True, text=True, timeout=600,
                         env=cli_environment())
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    cand = data["findings"][0]["candidates"][0]
    assert set(cand) >= {"title", "diff", "assumptions", "assumptions_hold", "checked", "after"}
    assert cand["after"]["findings"] is not None and cand["after"]["kernel"] == "jagged_sum"
    assert cand["assumptions_hold"] is True and cand["checked"] is True
    fixed = tmp_path / "fixed.py"
    done = subprocess.run(env_py + ["--apply", "1", "--out", str(fixed)], cwd=REPO, capture_output=True, text=True,
                          timeout=600, env=cli_environment())
    assert done.returncode == 0, done.stderr
    assert fixed.read_text() == path.read_text().replace(
        "tl.load(offsets + row)\n", "tl.multiple_of(tl.load(offsets + row), 4)\n").replace(
        "tl.load(offsets + row + 1)\n", "tl.multiple_of(tl.load(offsets + row + 1), 4)\n")
    bad = subprocess.run(env_py + ["--apply", "99"], cwd=REPO, capture_output=True, text=True, timeout=600,
                         env=cli_environment())
    assert bad.returncode == 2 and "there are" in bad.stderr


TILE = '''import torch
import triton
import triton.language as tl


@triton.jit
def tile_dot(a, b, c, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm, rn, rk = tl.arange(0, BM), tl.arange(0, BN), tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, 1024, BK):
        x = tl.load(a + rm[:, None] * 1024 + (k + rk)[None, :])
        y = tl.load(b + (k + rk)[:, None] * BN + rn[None, :])
        acc += tl.dot(x, y)
    tl.store(c + rm[:, None] * BN + rn[None, :], acc)


def example(device):
    a = torch.randn(128, 1024, device=device, dtype=torch.float16)
    b = torch.randn(1024, 128, device=device, dtype=torch.float16)
    c = torch.empty(128, 128, device=device)
    tile_dot[(1,)](a, b, c, BM=128, BN=128, BK=64, num_stages=5, num_warps=4)
'''


def test_the_preflight_matrix_finds_where_it_cannot_launch_and_what_fits(tmp_path):
    from inspector.preflight.matrix import fits

    path = tmp_path / "tile.py"
    path.write_text(TILE)
    # (128x64 + 64x128) x 2 B = 32 KiB a stage. Hopper's pipeline keeps 5 buffers (160 KiB, of 227
    # KiB a block), Ada's num_stages - 1 (128 KiB, of 99 KiB): one stage fewer fits (96 KiB)
    report = fits(path, gpus=["H100", "RTX 4090"], timeout=300)
    by = {c.gpu: c for c in report.cells}
    assert by["H100"].launchable and by["H100"].shared_bytes >= 160 * 1024
    small = by["RTX 4090"]
    assert not small.launchable and "shared memory" in small.problem
    assert small.fix == "num_stages 5 -> 4 (one buffer fewer in shared memory)"
    assert "-    tile_dot[(1,)](a, b, c, BM=128, BN=128, BK=64, num_stages=5, num_warps=4)" in small.fix_diff


SCALE = '''import torch
import triton
import triton.language as tl


@triton.jit
def scale(x, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out + offs, 2 * tl.load(x + offs, mask=n > offs), mask=n > offs)


def example(device):
    x = torch.randn(N, device=device)
    scale[(triton.cdiv(N, 1024),)](x, torch.empty_like(x), N, BLOCK=1024)
'''


@pytest.mark.parametrize("n, holds", [(4095, False), (1 << 20, None)])
def test_a_size_argument_in_the_mask_is_promised_only_where_the_launch_keeps_it(sandbox, tmp_path, n, holds):
    path = tmp_path / "scale.py"
    path.write_text(SCALE.replace("(N", f"({n}").replace(" N,", f" {n},").replace("(N,", f"({n},"))
    report = fix(path, target="sm_90", sandbox=sandbox, timeout=300)
    access = [ff for ff in report.findings if ff.finding.code.endswith("_access")]
    if holds is None:
        # n = 2^20 is specialised as a multiple of 16: the loads are 128-bit, nothing to fix
        assert not access
        return
    # the mask's constancy is lost at `n` (a kernel argument, where Triton drops a hint): the hint goes
    # on the comparison, on both copies the compiler merged (the load's mask and the store's)
    ff = access[0]
    hinted = [t for t in ff.candidates if t.candidate.kind == "hint"]
    assert hinted and hinted[0].candidate.source.count("tl.max_constancy(n > offs, 4)") == 2
    assert hinted[0].finding_gone  # what the promise would give ...
    # ... but n = 4095 breaks it: the example's data and the launch's value say so, and it sinks
    assert all(t.assumptions_hold is False for t in hinted) and all(t.score < 0 for t in hinted)
    assert "not the first of 4 equal values" in hinted[0].assumptions_note


def test_a_kernel_that_cannot_launch_on_a_smaller_gpu_gets_the_stage_that_fits(sandbox, tmp_path):
    path = tmp_path / "tile.py"
    path.write_text(TILE)
    # sm_89: 128 KiB of shared memory against 99 KiB; Triton's OutOfResources is a finding, not the end
    report = fix(path, target="sm_89", sandbox=sandbox, timeout=300)
    ff = next(ff for ff in report.findings if ff.finding.code == "cannot_launch")
    best = ff.candidates[0]
    assert best.title.startswith("num_stages 5 -> 4") and best.finding_gone and best.checked is True
    assert best.changes["shared_bytes"] == [131072, 98304] and not best.new_findings
    # a smaller K tile fits too, and sums in another order: equal within rounding, not flagged
    bk = next(t for t in ff.candidates if t.title.startswith("BK 64 -> 32"))
    assert bk.finding_gone and bk.checked is True
    # the grid is one program and BM only shapes its block: halving it would leave half the output
    # unwritten, so it is not a candidate
    assert not any(t.title.startswith("BM 128 -> 64") for t in ff.candidates)


@pytest.mark.gpu
def test_on_a_gpu_candidates_are_timed_and_time_saved_ranks(tmp_path):
    """Natively, the example runs as written and as each edit makes it, the kernel's launches are
    replayed and timed; the CLI prints the figures."""
    path = _jagged(tmp_path, PADDED)
    report = fix(path, target="native", timeout=300)
    assert report.original.mode == "native"
    assert report.ms and report.ms > 0, report.ms_note
    ff = next(ff for ff in report.findings if ff.finding.code in ("scalar_access", "partial_access"))
    timed = [t for t in ff.candidates if t.ms is not None]
    assert timed, [(t.title, t.ms_note) for t in ff.candidates]
    print(f"\njagged sum on {report.original.device_name}: {report.ms * 1000:.2f} us as written; " +
          "; ".join(f"{t.title}: {t.ms * 1000:.2f} us" for t in timed))
    out = subprocess.run([sys.executable, "-m", "inspector", "fix", str(path), "--target", "native"],
                         cwd=REPO, capture_output=True, text=True, timeout=600)
    assert "measured:" in out.stdout, out.stdout[-2000:] + out.stderr[-2000:]


def test_the_gallery_s_teaching_pairs(sandbox):
    """Each pair's lesson half, fixed: what the tool proposes against what the other half does."""
    from paths import KERNELS

    # tf32 -> ieee: the other half's change is the tf32 finding's first candidate
    report = fix(KERNELS / "matmul_tf32_vs_ieee.py", target="sm_90", sandbox=sandbox, timeout=300, check=False,
                 findings=["tf32"])
    best = report.findings[0].candidates[0]
    assert 'input_precision="ieee"' in best.title and best.finding_gone
    # a row too wide for 128 threads: more warps clear the spills; the other half's BLOCK_N=4096 is
    # a shorter row (BLOCK_N spans it), another problem, so no candidate halves BLOCK_N
    report = fix(KERNELS / "register_spill.py", target="sm_90", consts={"BLOCK_N": 32768}, sandbox=sandbox,
                 timeout=300, check=False, findings=["spills"])
    spills = report.findings[0]
    assert spills.candidates[0].title.startswith("num_warps 4 -> 8") and spills.candidates[0].finding_gone
    assert not any(t.title.startswith("BLOCK_N") for t in spills.candidates)
    # a strided copy: the stride is the data's layout, which nothing in the kernel changes
    report = fix(KERNELS / "copy_coalesced_vs_strided.py", kernel="copy_strided_kernel", target="sm_90",
                 sandbox=sandbox, timeout=300, check=False, findings=["uncoalesced_access"])
    strided = report.findings[0]
    assert not strided.candidates and "no edit the tool can make" in strided.note
