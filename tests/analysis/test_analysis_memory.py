"""Memory-access verdicts and reasons, spills by source line, on real Triton output (GPU-free)."""

from __future__ import annotations

import pytest
from analysis_kernels import ACCESS, ACCESS_LINES, SPILL, write_kernel, compiled
from paths import KERNELS

from inspector.analysis import memory_report

ADD = KERNELS / "add.py"


@pytest.fixture(scope="module")
def kernels(sandbox, tmp_path_factory):
    d = tmp_path_factory.mktemp("memory")
    offset = ADD.read_text().replace("return launch(*make_inputs(4096, device))",
                                     "x, y = make_inputs(4097, device)\n    return launch(x[1:], y[1:])")
    return {
        "add": compiled(sandbox, ADD, target="sm_90"),
        "add_4095": compiled(sandbox, ADD, target="sm_90", args={"n": "4095"}),
        "add_offset": compiled(sandbox, write_kernel(d, "add_offset", offset), target="sm_90"),
        "add_amd": compiled(sandbox, ADD, target="gfx942"),
        "access": compiled(sandbox, write_kernel(d, "access", ACCESS), target="sm_90"),
        "spill": compiled(sandbox, write_kernel(d, "spill", SPILL), target="sm_90", options={"maxnreg": "64"}),
        "matmul_90": compiled(sandbox, KERNELS / "matmul.py", target="sm_90"),
        "matmul_80": compiled(sandbox, KERNELS / "matmul.py", target="sm_80"),
    }


def by_line(report):
    return {a.line: a for a in report.accesses}


def test_add_with_n_4096_is_vectorised_128_bit(kernels):
    rep = memory_report(kernels["add"])
    assert rep.main_stage == "ptx"
    acc = by_line(rep)
    assert sorted(acc) == [25, 26, 27]
    for line, direction, ptr in ((25, "load", "x_ptr"), (26, "load", "y_ptr"), (27, "store", "out_ptr")):
        a = acc[line]
        assert (a.direction, a.pointer, a.dtype, a.masked) == (direction, ptr, "f32", True)
        assert a.verdict == "vectorised" and a.width_bits == 128 and not a.reasons
        assert a.elements_per_thread == 4 and a.layout == "#blocked"
        assert {i.opcode for i in a.instructions["ptx"]} == {f"{'ld' if direction == 'load' else 'st'}.global.v4.b32"}
        assert {i.opcode for i in a.instructions["sass"]} == {"LDG.E.128" if direction == "load" else "STG.E.128"}
        assert all(i.vector == 4 and i.predicated for i in a.instructions["ptx"])


def test_add_with_n_4095_is_scalar_because_of_the_mask(kernels):
    acc = by_line(memory_report(kernels["add_4095"]))
    for line in (25, 26, 27):
        a = acc[line]
        assert a.verdict == "scalar" and a.width_bits == 32
        assert a.reason_codes == ["mask_divisibility"]
        assert "`n` (= 4095)" in a.reasons[0] and "multiple of 16" in a.reasons[0]
        assert {i.opcode for i in a.instructions["sass"]} == {"LDG.E" if line < 27 else "STG.E"}
        assert len(a.instructions["ptx"]) == 8  # 8 fp32 per thread, one at a time


def test_unaligned_pointer_is_the_reason(kernels):
    acc = by_line(memory_report(kernels["add_offset"]))
    assert acc[25].verdict in ("scalar", "partial")
    assert "pointer_alignment" in acc[25].reason_codes and "`x_ptr`" in acc[25].reasons[0]
    assert "mask_divisibility" not in acc[25].reason_codes  # n = 4096 here


def test_amd_buffer_loads_are_vectorised(kernels):
    rep = memory_report(kernels["add_amd"])
    assert rep.main_stage == "amdgcn"
    acc = by_line(rep)
    assert [acc[n].verdict for n in (25, 26, 27)] == ["vectorised"] * 3
    assert {i.opcode for i in acc[25].instructions["amdgcn"]} == {"buffer_load_dwordx4"}
    assert acc[27].instructions["amdgcn"][0].opcode == "buffer_store_dwordx4"


def test_strided_shifted_atomic_and_cache_hints(kernels):
    acc = by_line(memory_report(kernels["access"]))
    hint, strided, atomic, shifted = (acc[ACCESS_LINES[k]] for k in ("hint", "strided", "atomic", "shifted"))
    assert hint.verdict == "vectorised" and hint.cache == ["eviction_policy=evict_last"]
    assert any("L1::evict_last" in i.cache for i in hint.instructions["ptx"])
    assert strided.verdict == "scalar" and strided.reason_codes[0] == "strided" and "volatile" in strided.cache
    assert atomic.direction == "atomic" and atomic.instructions["ptx"]
    assert all(i.kind == "global_atomic" for i in atomic.instructions["ptx"] + atomic.instructions["sass"])
    assert shifted.verdict == "scalar" and "constant_offset" in shifted.reason_codes
    assert shifted.cache == ["cache_modifier=cs"] and any("cs" in i.cache for i in shifted.instructions["ptx"])


def test_spills_are_attributed_to_source_lines(kernels):
    rec = kernels["spill"]
    rep = memory_report(rec)
    assert rec.resources.spill_store_bytes and rep.spill_bytes == rec.resources.spill_store_bytes
    stores = [s for s in rep.spills if s.kind == "local_store"]
    loads = [s for s in rep.spills if s.kind == "local_load"]
    assert stores and loads
    body = range(8, 15)  # the kernel's lines
    assert all(s.line in body and s.stage == "sass" for s in rep.spills)
    assert all(op.startswith(("STL", "LDL")) for s in rep.spills for op in s.opcodes)
    # the static spill instructions move at least what ptxas reports as spilled
    assert sum(s.bytes_per_thread for s in stores) >= rec.resources.spill_store_bytes


def test_matmul_sm90_uses_tma_and_sm80_cp_async(kernels):
    acc90 = memory_report(kernels["matmul_90"]).accesses
    loads = [a for a in acc90 if a.op == "tt.descriptor_load"]
    assert len(loads) == 2 and all(a.verdict == "tma" for a in loads)
    assert all(any(i.opcode.startswith("cp.async.bulk.tensor") for i in a.instructions["ptx"]) for a in loads)
    assert all(any(i.opcode.startswith("UTMALDG") for i in a.instructions["sass"]) for a in loads)
    rep80 = memory_report(kernels["matmul_80"])
    loads80 = [a for a in rep80.accesses if a.direction == "load"]
    # The gallery matmul takes descriptors made on the host (for Hopper's TMA). Without TMA
    # (sm_80) they become pointer loads whose alignment the compiler cannot see, and the
    # analysis says why they are not 128-bit.
    assert loads80 and all(a.verdict != "vectorised" for a in loads80)
    assert all("pointer_alignment" in a.reason_codes for a in loads80)
    # ldmatrix feeds the tensor cores from shared memory, attributed to the dot's operand lines
    ldm = [m for m in rep80.instructions if m.stage == "ptx" and any(o.startswith("ldmatrix") for o in m.opcodes)]
    assert ldm and all(m.kind == "shared_load" and 128 in m.widths for m in ldm)


def test_every_memory_instruction_has_a_source_line(kernels):
    for name in ("add", "access", "spill"):
        rep = memory_report(kernels[name])
        assert not rep.unattributed, name
        assert rep.instructions and all(m.line > 0 for m in rep.instructions)
