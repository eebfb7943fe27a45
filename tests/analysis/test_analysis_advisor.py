"""The advisor's findings, layouts explained and the instruction mix, on real Triton output."""

from __future__ import annotations

import dataclasses
import json

import pytest
from analysis_kernels import ACCESS, ACCESS_LINES, DOT, DOT_LINE, SPILL, tl_lines, write_kernel, compiled
from paths import KERNELS

from inspector.analysis import advise, explain, instruction_mix, layout_report
from inspector.analysis.locations import stage_lines


@pytest.fixture(scope="module")
def kernels(sandbox, tmp_path_factory):
    d = tmp_path_factory.mktemp("advisor")
    dot = write_kernel(d, "dot", DOT)
    return {
        "add": compiled(sandbox, KERNELS / "add.py", target="sm_90"),
        "add_4095": compiled(sandbox, KERNELS / "add.py", target="sm_90", args={"n": "4095"}),
        "access": compiled(sandbox, write_kernel(d, "access", ACCESS), target="sm_90"),
        "spill": compiled(sandbox, write_kernel(d, "spill", SPILL), target="sm_90", options={"maxnreg": "64"}),
        "tf32": compiled(sandbox, dot, target="sm_80"),
        "ieee": compiled(sandbox, dot, target="sm_80", consts={"PRECISION": "ieee"}),
        "matmul_90": compiled(sandbox, KERNELS / "matmul.py", target="sm_90"),
        "matmul_amd": compiled(sandbox, KERNELS / "matmul.py", target="gfx942"),
    }


def codes(findings):
    return [f.code for f in findings]


def test_scalar_loads_because_n_is_not_a_multiple_of_16(kernels):
    findings = advise(kernels["add_4095"])
    top = findings[0]
    # scalar, and uncoalesced: each thread still holds 4 contiguous fp32 but moves one per
    # instruction, so one instruction's 32 lanes are 16 bytes apart: 512 bytes, 16 sectors, for
    # the 128 bytes (4 sectors) it uses
    assert top.code == "uncoalesced_access" and top.severity == "high" and top.line == 25
    assert top.title.startswith("line 25: loads of `x_ptr` are uncoalesced: 16 sectors per warp request where 4 "
                                "would do (25% used), scalar, because")
    assert "`n` (= 4095)" in top.title and "multiple of 16" in top.title
    assert any("ld.global.b32" in e for e in top.evidence) and any("LDG.E" in e for e in top.evidence)
    assert any("lanes are 16 bytes apart" in e for e in top.evidence)
    assert [f.line for f in findings if f.code == "uncoalesced_access"] == [25, 26, 27]
    assert not {"scalar_access", "uncoalesced_access"} & set(codes(advise(kernels["add"])))


def test_findings_are_ranked(kernels):
    for rec in kernels.values():
        f = advise(rec)
        order = ["high", "medium", "low", "info"]
        assert [order.index(x.severity) for x in f] == sorted(order.index(x.severity) for x in f)


def test_spills_name_the_lines_of_the_spill_stores(kernels):
    rec = kernels["spill"]
    spills = [f for f in advise(rec) if f.code == "spills"]
    assert len(spills) == 1
    f = spills[0]
    assert f.title.startswith(f"{rec.resources.spill_store_bytes} bytes spilled per thread (STL at line")
    assert f.lines and all(8 <= ln <= 14 for ln in f.lines)
    assert any("ptxas" in e for e in f.evidence) and any("STL" in e for e in f.evidence)


def test_tf32_and_fma_dots(kernels):
    tf32 = advise(kernels["tf32"])
    assert "tf32" in codes(tf32)
    f = next(x for x in tf32 if x.code == "tf32")
    assert f.line == DOT_LINE and "tf32" in f.title
    tc = next(x for x in tf32 if x.code == "tensor_cores")
    assert "mma.sync" in tc.title and any("tf32" in e for e in tc.evidence)
    ieee = advise(kernels["ieee"])
    assert "tf32" not in codes(ieee)
    f = next(x for x in ieee if x.code == "no_tensor_cores")
    assert f.line == DOT_LINE and f.severity == "high" and any("ieee" in e for e in f.evidence)


def test_matmul_on_sm90_runs_wgmma(kernels):
    rec = kernels["matmul_90"]
    f = next(x for x in advise(rec) if x.code == "tensor_cores")
    assert "wgmma" in f.title
    assert any("wgmma.mma_async" in e for e in f.evidence) and any("HGMMA" in e for e in f.evidence)
    mix = instruction_mix(rec)
    assert mix.stages["ptx"].counts["tensor_core"] >= 1 and mix.stages["sass"].counts["tensor_core"] >= 1
    dot_line = f.line
    assert mix.stages["sass"].by_line[dot_line].get("tensor_core")
    occ = next(x for x in advise(rec) if x.code == "occupancy")
    assert "registers" in occ.title and "block" in occ.title


def test_amd_scratch_and_mfma(kernels):
    rec = kernels["matmul_amd"]
    found = codes(advise(rec))
    assert "tensor_cores" in found
    f = next(x for x in advise(rec) if x.code == "tensor_cores")
    assert "MFMA" in f.title and any("v_mfma" in e for e in f.evidence)
    if rec.resources.scratch_bytes:
        assert "spills" in found


def test_descriptor_loads_without_tma_name_the_descriptor_stride_not_a_stride_in_the_code(kernels):
    """On gfx942 (no TMA) the matmul's host-made descriptors become pointer arithmetic whose
    innermost stride is a run-time value: the cause is that stride, the fix loading through pointers."""
    access = [f for f in advise(kernels["matmul_amd"]) if f.code in ("scalar_access", "uncoalesced_access")]
    assert access, "no scalar descriptor load on gfx942"
    for f in access:
        assert "the tensor descriptor's stride (`" in f.title and "_desc.stride." in f.title, f.title
        assert "index is strided" not in f.title and "Triton specialises an integer argument equal to 1" in f.suggestion


def test_a_stride_in_the_code_is_named(pairs):
    f = advise(pairs["strided"])[0]
    assert any("multiplied by `stride`, a value known only at run time" in e for e in f.evidence), f.evidence


def test_layouts_in_words(kernels):
    rep = layout_report(kernels["add"])
    (blocked,) = [l for l in rep.layouts if l.name == "#blocked"]
    assert blocked.kind == "blocked" and blocked.contiguous_per_thread == 4
    assert "each thread holds 4 contiguous fp32 = 16 bytes" in blocked.explanation
    assert blocked.source_lines and set(blocked.source_lines) <= set(range(21, 28))
    assert rep.conversions == [] and rep.num_warps == 4
    mm = layout_report(kernels["matmul_90"])
    mma = next(l for l in mm.layouts if l.kind == "nvidia_mma")
    assert "wgmma" in mma.explanation
    shared = next(l for l in mm.layouts if l.kind == "nvmma_shared")
    assert "128-byte swizzle" in shared.explanation


def test_layout_conversions_counted_with_their_lines(kernels):
    rec = kernels["access"]
    rep = layout_report(rec)
    assert len(rep.conversions) == 1
    conv = rep.conversions[0]
    assert conv.source_lines == [ACCESS_LINES["shifted"]]
    assert conv.lowering == "shared memory" and not conv.in_loop
    assert rep.through_shared == 1
    ttgir = stage_lines(rec.stages["ttgir"])
    assert "ttg.convert_layout" in ttgir[conv.line - 1]
    f = next(x for x in advise(rec) if x.code == "layout_conversions")
    assert f.line == ACCESS_LINES["shifted"] and "through shared memory" in f.title


def test_instruction_mix_counts_every_instruction(kernels):
    rec = kernels["add"]
    mix = instruction_mix(rec)
    ptx = mix.stages["ptx"]
    assert ptx.counts["global_load"] == 4 and ptx.counts["global_store"] == 2
    assert sum(ptx.counts.values()) == ptx.total
    assert sum(sum(c.values()) for c in ptx.by_line.values()) + ptx.unattributed == ptx.total
    assert ptx.line_totals("global_load") == {25: 2, 26: 2}
    sass = mix.stages["sass"]
    assert sass.counts["global_load"] == 4 and "nop" not in sass.counts
    assert set(mix.stages) == {"ttir", "ttgir", "llir", "ptx", "sass"}


def test_explanation_is_json(kernels):
    for rec in kernels.values():
        data = json.loads(json.dumps(dataclasses.asdict(explain(rec))))
        assert data["kernel"] == rec.kernel and "findings" in data and data["memory"]["accesses"] is not None


# ---- the bundled teaching pairs ------------------------------------------------------------------------
@pytest.fixture(scope="module")
def pairs(sandbox):
    out = {}
    specs = {
        "strided": ("copy_coalesced_vs_strided.py", {"kernel": "copy_strided_kernel"}),
        "coalesced": ("copy_coalesced_vs_strided.py", {"kernel": "copy_coalesced_kernel"}),
        "spills": ("register_spill.py", {"consts": {"BLOCK_N": "32768"}}),
        "fits": ("register_spill.py", {"consts": {"BLOCK_N": "4096"}}),
        "ieee": ("matmul_tf32_vs_ieee.py", {"consts": {"INPUT_PRECISION": "ieee"}}),
    }
    for name, (file, kw) in specs.items():
        path = KERNELS / file
        if not path.exists():
            pytest.skip(f"{file} is not bundled")
        out[name] = compiled(sandbox, path, target="sm_90", **kw)
    return out


def test_strided_copy_is_scalar_because_strided(pairs):
    f = advise(pairs["strided"])[0]
    # the run-time stride is 8 in the example: lanes of one instruction 128 bytes apart, a sector each
    assert f.code == "uncoalesced_access" and f.severity == "high" and "because the index is strided" in f.title
    assert "32 sectors per warp request where 4 would do" in f.title
    assert not {"scalar_access", "uncoalesced_access"} & set(codes(advise(pairs["coalesced"])))


def test_register_spill_pair(pairs):
    spills = next(f for f in advise(pairs["spills"]) if f.code == "spills")
    body = tl_lines(pairs["spills"].source)
    assert spills.lines and all(body[0] <= ln <= body[-1] for ln in spills.lines)
    assert "spills" not in codes(advise(pairs["fits"]))


def test_ieee_matmul_runs_on_fma(pairs):
    f = next(x for x in advise(pairs["ieee"]) if x.code == "no_tensor_cores")
    assert "tl.dot" in pairs["ieee"].source.split("\n")[f.line - 1]


def test_the_gluon_attention_kernel_s_partitions_and_their_registers(sandbox):
    """The Gluon attention (head dim 64: three consumer warpgroups and a producer warp) as the
    TTGIR and PTX print them."""
    from inspector.analysis.partitions import partitions, register_moves

    rec = compiled(sandbox, KERNELS / "attention_gluon.py", target="sm_90")
    parts = partitions(rec.stages["ttgir"])
    assert [(p.name, p.warps, p.registers) for p in parts] == [
        ("default", 4, None), ("partition0", 4, 160), ("partition1", 4, 160), ("partition2", 1, 24)]
    assert {("dec", 24), ("inc", 160)} <= set(register_moves(rec.stages["ptx"]))
    assert partitions(compiled(sandbox, KERNELS / "add.py", target="sm_90").stages["ttgir"]) == []


# One kernel, its inline assembly written for one vendor (unsloth-zoo's `_rcp_rn` is the PTX one)
INLINE_ASM = '''import triton
import triton.language as tl


@triton.jit
def through_asm(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.inline_asm_elementwise("{asm}", "{constraints}", [x], dtype=tl.float32, is_pure=True, pack=1)
    tl.store(out_ptr + offs, y)
'''


@pytest.mark.parametrize("asm, constraints, target, dropped", [
    ("rcp.rn.f32 $0, $1;", "=f,f", "gfx942", True),   # PTX on AMD: LLVM leaves it out, and the load with it
    ("v_mov_b32 $0, $1", "=v,v", "gfx942", False),    # AMD's own assembly stays
    ("rcp.rn.f32 $0, $1;", "=f,f", "sm_90", False),   # PTX where it belongs
])
def test_inline_assembly_a_target_drops_is_a_finding(sandbox, tmp_path, asm, constraints, target, dropped):
    path = tmp_path / "through_asm.py"
    path.write_text(INLINE_ASM.replace("{asm}", asm).replace("{constraints}", constraints))
    rec = compiled(sandbox, path, target=target, consts={"BLOCK": "256"})
    found = [f for f in advise(rec) if f.code == "inline_asm_dropped"]
    line = INLINE_ASM.splitlines().index(next(l for l in INLINE_ASM.splitlines() if "inline_asm" in l)) + 1
    warned = [w for w in rec.log.splitlines() if w.startswith("warning: the inline assembly")]
    if dropped:
        assert [f.line for f in found] == [line] and asm.split()[0] in found[0].title, found
        assert found[0].severity == "high"
        assert len(warned) == 1 and f"at line {line}" in warned[0], rec.log  # the compile says so too
    else:
        assert not found and not warned, (found, warned)


def test_dropped_assembly_is_named_as_written_not_as_llvm_escapes_it():
    """Multi-line PTX (megatron's multimem loads) is escaped in LLVM IR (`\\0A`); the finding and
    the warning name it as the file wrote it, on one line."""
    from inspector.backends.amd import dropped_inline_asm

    llir = ('  %5 = call i32 asm sideeffect "{\\0A    .reg .pred %p0;\\0A    ld.global.u32 $0, [$1];\\0A}", '
            '"=r,l"(ptr %4) #2, !dbg !12\n!12 = !DILocation(line: 57, column: 16, scope: !5)\n')
    assert dropped_inline_asm(llir, "s_endpgm") == [("{ .reg .pred %p0; ld.global.u32 $0, [$1]; }", "=r,l", 57)]
    assert dropped_inline_asm(llir, ";;#ASMSTART\nv_mov_b32 v0, v1\n;;#ASMEND") == []
