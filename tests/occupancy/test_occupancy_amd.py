"""AMD CDNA occupancy: hand-worked cases, and real Triton kernels compiled GPU-free for gfx942/gfx950
checked against the compiler's own figures (the unified VGPR count and "; Occupancy")."""

from __future__ import annotations

import re

import pytest

from inspector.hardware.architectures import amd_limits
from inspector.occupancy import amd_occupancy, triton_occupancy
from inspector.occupancy.amd import unified_vgprs

KB = 1024


def test_register_limited_matmul_tile():
    r = triton_occupancy("gfx942", 4, 217, 16 * KB, sgprs=106)
    assert r.threads == 256 and r.waves_per_workgroup == 4
    assert r.vgprs_allocated == 224 and r.waves_per_simd_by_vgprs == 2  # 512 // 224
    assert r.sgprs_allocated == 112 and r.waves_per_simd_by_sgprs == 7  # 800 // 112
    assert r.limits == {"waves": 8, "vgprs": 2, "sgprs": 7, "lds": 4}
    assert (r.blocks_per_sm, r.limiters, r.waves_per_simd, r.occupancy) == (2, ["vgprs"], 2.0, 0.25)


def test_lds_per_cu_differs_between_cdna3_and_cdna4():
    a = amd_occupancy("gfx942", 256, 64, sgprs=32, lds=40 * KB)
    assert (a.blocks_per_sm, a.limiters) == (1, ["lds"])  # 64 KB // 40 KB
    b = amd_occupancy("gfx950", 256, 64, sgprs=32, lds=40 * KB)
    assert (b.blocks_per_sm, b.limiters) == (4, ["lds"])  # 160 KB // 40 KB
    full = amd_occupancy("gfx950", 256, 64, sgprs=32, lds=0)
    assert (full.blocks_per_sm, full.limiters, full.waves_per_simd) == (8, ["waves", "vgprs"], 8.0)


def test_agprs_share_the_unified_file():
    lim = amd_limits("gfx942")
    assert unified_vgprs(256, 20, lim) == 276
    assert unified_vgprs(253, 8, lim) == 264  # AGPRs start at a multiple of 4
    assert unified_vgprs(100, 0, lim) == 100
    r = amd_occupancy("gfx942", 256, 256, agprs=20, sgprs=68)
    assert r.total_vgprs == 276 and r.vgprs_allocated == 280 and r.waves_per_simd_by_vgprs == 1
    assert r.blocks_per_sm == 1


def test_limits_that_stop_a_launch():
    assert amd_occupancy("gfx942", 1088, 32).blocks_per_sm == 0
    over = amd_occupancy("gfx942", 256, 32, lds=64 * KB + 1)
    assert over.blocks_per_sm == 0 and over.limiters == ["lds"]
    assert amd_occupancy("gfx950", 256, 32, lds=64 * KB + 1).blocks_per_sm == 2


def test_sgpr_granule_of_sixteen():
    assert amd_occupancy("gfx942", 64, 16, sgprs=96).waves_per_simd_by_sgprs == 8  # 800 // 96
    assert amd_occupancy("gfx942", 64, 16, sgprs=97).waves_per_simd_by_sgprs == 7  # 800 // 112


def test_waves_per_eu_request_is_reported():
    r = triton_occupancy("gfx942", 4, 200, 0, sgprs=40, waves_per_eu=4)
    assert r.waves_per_simd == 2 and "waves_per_eu=4" in r.notes[0]


def test_amd_curves_use_the_unified_count():
    from inspector.occupancy import occupancy_curves

    c = occupancy_curves("gfx942", 4, 200, 16 * KB, agprs=40, sgprs=60)
    assert c.block_size.x[0] == 64 and c.block_size.x[-1] == 1024
    assert c.registers.x[-1] == 512 and c.registers.current_x == 240  # alignTo(200, 4) + 40
    assert c.registers.blocks_per_sm[c.registers.x.index(240)] == c.current.blocks_per_sm == 2
    assert c.shared_memory.x[-1] == 64 * KB
    assert c.shared_memory.blocks_per_sm[-1] == 1


# ---- real kernels, compiled GPU-free ------------------------------------------------------------
triton = pytest.importorskip("triton")
tl = pytest.importorskip("triton.language")

from occupancy_driver_check import matmul_tile  # noqa: E402  (the driver check's shared-memory tile)


@triton.jit
def _add(x, y, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out + offs, tl.load(x + offs, mask=m) + tl.load(y + offs, mask=m), mask=m)


@triton.jit
def _softmax(x, out, stride, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    v = tl.load(x + row * stride + cols, mask=cols < n, other=-float("inf"))
    e = tl.exp(v - tl.max(v, 0))
    tl.store(out + row * stride + cols, e / tl.sum(e, 0), mask=cols < n)


KERNELS = {
    "add": (_add, {"x": "*fp32", "y": "*fp32", "out": "*fp32", "n": "i32", "BLOCK": "constexpr"}, {"BLOCK": 1024}),
    "softmax": (_softmax, {"x": "*fp32", "out": "*fp32", "stride": "i32", "n": "i32", "BLOCK": "constexpr"},
                {"BLOCK": 4096}),
    "matmul": (matmul_tile, {"a": "*fp16", "b": "*fp16", "c": "*fp32", "M": "i32", "N": "i32", "K": "i32",
                         "BM": "constexpr", "BN": "constexpr", "BK": "constexpr"}, {"BM": 256, "BN": 128, "BK": 32}),
}
CASES = [(arch, name, nw, wpe) for arch in ("gfx942", "gfx950") for name in KERNELS
         for nw in ((1, 4, 16) if name != "matmul" else (4, 8)) for wpe in ((0,) if name != "matmul" else (0, 2))]


def _compile(arch: str, name: str, num_warps: int, waves_per_eu: int):
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    fn, signature, consts = KERNELS[name]
    src = ASTSource(fn, signature, constexprs=consts)
    options = {"num_warps": num_warps, "num_stages": 2}
    if waves_per_eu:
        options["waves_per_eu"] = waves_per_eu
    return triton.compile(src, target=GPUTarget("hip", arch, 64), options=options)


def _field(asm: str, key: str) -> int:
    m = re.search(rf"^\s*(?:;\s*)?\.?{key}:\s+(\d+)", asm, re.M)
    assert m, f"{key} not in the AMDGCN"
    return int(m.group(1))


def _llvm_sgpr_waves(sgprs: int) -> int:
    """AMDGPUSubtarget::getOccupancyWithNumSGPRs for gfx8/gfx9 (the compiler's table)."""
    return 10 if sgprs <= 80 else 9 if sgprs <= 88 else 8 if sgprs <= 100 else 7


@pytest.mark.parametrize("arch,name,num_warps,wpe", CASES, ids=[f"{a}-{n}-w{w}-e{e}" for a, n, w, e in CASES])
def test_compiled_kernel_matches_the_compiler(arch, name, num_warps, wpe):
    k = _compile(arch, name, num_warps, wpe)
    asm = k.asm["amdgcn"]
    vgprs, agprs = _field(asm, "NumVgprs"), _field(asm, "NumAgprs")
    total, sgprs, llvm_occ = _field(asm, "vgpr_count"), _field(asm, "sgpr_count"), _field(asm, "Occupancy")
    assert _field(asm, "group_segment_fixed_size") == 0  # Triton's LDS is all dynamic

    res = triton_occupancy(arch, num_warps, vgprs, k.metadata.shared, agprs=agprs, sgprs=sgprs, waves_per_eu=wpe)
    assert res.total_vgprs == total  # LLVM getTotalNumVGPRs, as written into the code object
    # The compiler's occupancy is the register bound (it never sees the dynamic LDS), capped by the
    # waves_per_eu request ("amdgpu-waves-per-eu"="N,N"); its SGPR table is LLVM's, not the runtime's.
    cap = min(8, wpe or 8)
    assert llvm_occ == min(res.waves_per_simd_by_vgprs, _llvm_sgpr_waves(sgprs), cap)
    assert res.waves_per_simd_by_registers == min(8, res.waves_per_simd_by_vgprs, res.waves_per_simd_by_sgprs)
    # And the result is consistent: never more waves per SIMD than registers allow.
    assert res.waves_per_simd <= res.waves_per_simd_by_registers
