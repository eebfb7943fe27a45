"""The shared-memory model against Nsight Compute, and on real Triton output (GPU-free).

tests/fixtures/gpu_measurements/ncu/shared-h200/ holds what an H200 measured (Nsight Compute 2025.3.1, Triton 3.6.0,
`benchmarks/shared_fidelity.py measure`): the source page of every case of
benchmarks/shared_cases.py and the PTX its Triton compiled. The model runs on that same PTX here.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from analysis_kernels import compiled
from paths import KERNELS

from inspector.analysis import advise
from inspector.analysis.memory import memory_report
from inspector.analysis.ptx_lanes import shared_lane_accesses
from inspector.analysis.report import explanation_json
from inspector.analysis.shared_banks import costs_by_line, warp_wavefronts
from inspector.profile import parse_source_page
from inspector.profile.ncu_source import shared_by_line

DATA = Path(__file__).resolve().parent.parent / "fixtures" / "gpu_measurements" / "ncu" / "shared-h200"


def _agreement(launch, ptx: str, threads: int) -> tuple[dict, dict]:
    got = shared_by_line(launch)
    pred = costs_by_line(ptx, threads)
    return got, {k: pred.get(k) for k in got}


def test_every_hand_made_lane_pattern_costs_what_nsight_compute_counted():
    """34 lines of inline PTX, each one warp-wide access with chosen lane addresses (32-, 64- and
    128-bit loads and stores, ldmatrix, stmatrix), plus the transpose that reserves the buffer."""
    launch = parse_source_page((DATA / "bank_patterns.csv").read_text())[0]
    got, pred = _agreement(launch, (DATA / "bank_patterns.ptx").read_text(), 128)
    assert len(got) >= 36  # the 34 patterns and the transpose's loads and stores
    wrong = {k: (got[k][:2], pred[k]) for k in got if pred[k] is None or pred[k][:2] != pytest.approx(got[k][:2])}
    assert not wrong
    # the measurement holds real conflicts, not only ideal lines: 2-, 4-, 8-, 16- and 32-way
    assert {round(g[0] / g[1]) for g in got.values()} >= {1, 2, 4, 8, 16, 32}


def _ptx_files(kernel: str) -> list[tuple[str, int]]:
    out = []
    for meta in sorted(DATA.glob(f"{kernel}-*.json")):
        out.append((meta.with_suffix(".ptx").read_text(), json.loads(meta.read_text())["num_warps"] * 32))
    return out


def test_compiled_kernels_cost_what_nsight_compute_counted():
    """The transposes, the reduction over the non-contiguous axis, the fp16 and fp8 pipelined
    matmuls (cp.async, ldmatrix, wgmma) and the Gluon pair, per line and kind of instruction."""
    agree, disagree = [], []
    for launch in parse_source_page((DATA / "cases.csv").read_text())[1:]:  # [0]: bank_patterns, above
        candidates = _ptx_files(launch.function)
        assert candidates, launch.function
        got = shared_by_line(launch)
        # two compiles of one kernel (fp16 / fp8) are told apart by the ideal: widths, not conflicts
        pred = min((costs_by_line(p, t) for p, t in candidates),
                   key=lambda p: sum(abs(m[1] - (p.get(k, (0, 0))[1] or 0)) for k, m in got.items()))
        for k, m in got.items():
            p = pred.get(k)
            ok = p is not None and p[0] is not None and p[:2] == pytest.approx(m[:2])
            (agree if ok else disagree).append((launch.function, k, m[:2], p))
    assert len(agree) >= 18
    # the one known disagreement: the fp8 matmul's cp.async of A (64-byte rows): ncu counts 7.33
    # wavefronts per LDGSTS where the banks need 4 (its global side; docs/shared-memory.md)
    assert [(f, k[2], m[1]) for f, k, m, _ in disagree] == [("matmul", "LDGSTS", 4.0)]
    # and the conflicts the compiler itself produced are found: the fp8 B operand's byte stores
    # (8-way) and the unswizzled Gluon read (8-way)
    found = {(f, k[2], round(m[0] / m[1])) for f, k, m, _ in agree}
    assert ("matmul", "STS", 8) in found and ("transpose_gluon", "LDS", 8) in found


@pytest.mark.parametrize("width, addresses, load, expected", [
    (4, [4 * l for l in range(32)], True, (1, 1, 1)),  # one word per bank
    (4, [128 * l for l in range(32)], True, (32, 1, 32)),  # one bank, 32 words
    (4, [0] * 32, True, (1, 1, 1)),  # a broadcast
    (8, [8 * (l % 16) for l in range(32)], True, (2, 2, 1)),  # half-warps alike: no sharing across halves
    (8, [8 * (l // 2) for l in range(32)], True, (1, 1, 1)),  # pairs share: 16 addresses, one phase
    (8, [0] * 32, False, (2, 2, 1)),  # a store's lanes all count, even at one address
    (16, [16 * (l // 4) for l in range(32)], True, (2, 2, 1)),  # fours share: only pairs merge
    (16, [0] * 32, True, (2, 2, 1)),  # a 128-bit broadcast: 16 pairs, two phases
    (16, [32 * l for l in range(32)], True, (8, 4, 2)),
])
def test_bank_rules(width, addresses, load, expected):
    assert warp_wavefronts(np.array(addresses), np.ones(32, dtype=bool), width, load) == expected


def test_lane_walk_follows_the_integer_arithmetic_triton_writes():
    ptx = """
.reqntid 64
	mov.u32 	%r1, %tid.x;
	mov.b32 	%r9, global_smem;
	bfe.u32 	%r2, %r1, 2, 3;
	lop3.b32 	%r3, %r1, 7, %r2, 0x48;
	shl.b32 	%r4, %r3, 4;
	setp.lt.u32 	%p1, %r1, 16;
	selp.b32 	%r5, 0, 2048, %p1;
	shfl.sync.idx.b32 	%r6, %r1, 0, 31, -1;
	add.s32 	%r7, %r4, %r5;
	@%p1 st.shared.v4.b32 	[%r7], {%r1, %r1, %r1, %r1};
	st.shared.v4.b32 	[%r7+64], {%r1, %r1, %r1, %r1};
	ld.shared.b32 	%r8, [%r6];
	ld.shared.b32 	%r10, [%r8];
"""
    acc = shared_lane_accesses(ptx, 999)
    assert [a.op for a in acc] == ["store", "store", "load", "load"]
    tid = np.arange(64)
    r2 = (tid >> 2) & 7
    r3 = np.zeros(64, dtype=np.int64)
    for i in range(8):  # lop3 truth table 0x48, bit by bit
        if 0x48 >> i & 1:
            x = tid if i & 4 else ~tid
            y = 7 if i & 2 else ~7
            z = r2 if i & 1 else ~r2
            r3 |= x & y & z
    expected = (((r3 & 0xFFFFFFFF) << 4) + np.where(tid < 16, 0, 2048)) & 0xFFFFFFFF
    assert acc[0].addresses.tolist() == expected.tolist()
    assert acc[0].active.tolist() == (tid < 16).tolist()  # predicated: only the threads where %p1 holds
    assert acc[1].addresses.tolist() == (expected + 64).tolist() and acc[1].active.all()
    assert acc[2].addresses.tolist() == (tid // 32 * 32).tolist()  # lane 0's %tid.x, per warp
    assert acc[3].addresses is None  # from loaded data: unknown, never guessed


@pytest.fixture(scope="module")
def pair(sandbox):
    path = KERNELS / "transpose_shared_gluon.py"
    return {sw: compiled(sandbox, path, kernel="transpose_kernel", target="sm_90", consts={"SWIZZLE": sw})
            for sw in ("False", "True")}


def test_the_gallery_pair_shows_why_one_transpose_conflicts(pair):
    conflicted, swizzled = (explanation_json(pair[s])["memory"]["shared"] for s in ("False", "True"))
    read = next(a for a in conflicted if a["kind"] == "load")
    assert (read["shared_wavefronts"], read["ideal_shared_wavefronts"], read["bank_conflict_ways"]) == (8, 1, 8)
    assert "local_load" in read["cause"] and "not swizzled" in read["cause"] and "swizzle" in read["suggestion"]
    assert all(a["bank_conflict_ways"] == 1 and not a["cause"] for a in swizzled)
    codes = {s: [f.code for f in advise(pair[s])] for s in pair}
    assert "bank_conflicts" in codes["False"] and "bank_conflicts" not in codes["True"]
    finding = next(f for f in advise(pair["False"]) if f.code == "bank_conflicts")
    assert finding.line == read["line"] and "8-way" in finding.title


def test_amd_says_it_is_not_modelled(sandbox):
    rec = compiled(sandbox, KERNELS / "softmax.py", target="gfx942")
    rep = memory_report(rec)
    assert rep.shared == [] and "NVIDIA only" in rep.shared_note


def test_a_gluon_kernels_reproducer_is_gluon_and_compiles_to_the_same_shared_traffic(pair, sandbox, tmp_path):
    """The profile runs the recorded launch's reproducer: a Gluon kernel must come back as `@gluon.jit`
    (as `@triton.jit`, Gluon's `gl.arange(..., layout=)` fails to compile)."""
    text = pair["False"].reproducer
    assert "@gluon.jit" in text and "@triton.jit" not in text
    path = tmp_path / "transpose_repro.py"
    path.write_text(text)
    again = compiled(sandbox, path, kernel="transpose_kernel", target="sm_90")
    shared = [(a.kind, a.shared_wavefronts) for a in memory_report(again).shared]
    assert shared == [(a.kind, a.shared_wavefronts) for a in memory_report(pair["False"]).shared]


def test_fix_offers_the_swizzle_that_removes_the_conflict_judged_by_its_compile(sandbox):
    """`fix` on the conflicted transpose: every swizzle of the file's SwizzledSharedLayout calls is
    compiled; the one the launch reaches that spreads a column over 32 banks ranks first, with the
    figures it reached; the branch the launch does not take changes nothing and says so."""
    from inspector.fixes import fix

    rep = fix(KERNELS / "transpose_shared_gluon.py", kernel="transpose_kernel", target="sm_90",
              findings=["bank_conflicts"], sandbox=sandbox)
    ff = next(x for x in rep.findings if x.finding.code == "bank_conflicts")
    best = ff.candidates[0]
    assert "SwizzledSharedLayout(1, 1, 32)" in best.title and "(was 1, 1, 1)" in best.title
    assert best.changes["shared_excess"] == [8.0, 1.0]
    assert "SwizzledSharedLayout(1, 1, 32, [1, 0])" in best.diff
    assert not any("num_warps" in c.title for c in ff.candidates)  # Gluon names its warps in its layouts
    assert any("compiled to the same figures" in str(t) and "was 1, 1, 32" in str(t) for t in ff.tried)


def test_explain_prints_the_shared_memory_table(pair):
    from inspector.cli.explain import format_explanation

    text = "\n".join(format_explanation(pair["False"]))
    table = text.split("Shared memory (wavefronts per warp request", 1)[1].split("\n\n", 1)[0]
    read = next(line for line in table.splitlines() if " load " in line)
    assert read.split()[4:7] == ["8", "1", "8-way"] and "local_load" in read
