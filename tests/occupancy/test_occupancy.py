"""NVIDIA occupancy: the golden vectors, the header's corner cases, Triton's terms, what-if, curves, waves."""

from __future__ import annotations

import dataclasses
import json

import pytest

from inspector.occupancy import (
    KernelResources, nvidia_occupancy, occupancy, occupancy_curves, parse_arch, triton_occupancy, waves, what_if,
)

KB = 1024
CCS = [(7, 0), (7, 5), (8, 0), (8, 6), (8, 9), (9, 0), (10, 0), (12, 0)]
LETTERS = {"W": "warps", "R": "registers", "S": "shared_memory", "B": "blocks", "Bar": "barriers"}

# The golden vectors of the design notes (occupancy.md): (threads, registers, dynamic shared) ->
# blocks/SM and limiting factors per compute capability, in the CC order above. "WR" means warps
# and registers tie; "B+Bar" blocks and barriers.
GOLDEN = {
    (256, 32, 0): ["8 WR", "4 W", "8 WR", "6 W", "6 W", "8 WR", "8 WR", "6 W"],
    (128, 40, 16384): ["6 S", "4 S", "9 S", "5 S", "5 S", "12 R", "12 R", "5 S"],
    (96, 78, 0): ["8 R"] * 8,
    (256, 0, 49152): ["2 S", "1 S", "3 S", "2 S", "2 S", "4 S", "4 S", "2 S"],
    (64, 255, 0): ["4 R"] * 8,
    (128, 128, 100000): ["0 S", "0 S", "1 S", "1 S", "1 S", "2 S", "2 S", "1 S"],
    (32, 16, 0): ["32 B", "16 B", "32 B", "16 B", "24 B", "32 B", "32 B", "24 B+Bar"],
}


def _parse_expected(cell: str) -> tuple[int, list[str]]:
    blocks, letters = cell.split()
    if "+" in letters:
        names = [LETTERS[x] for x in letters.split("+")]
    else:
        names = [LETTERS[x] for x in letters]  # single letters: W, R, S, B
    return int(blocks), names


GOLDEN_CASES = [(cc, key, cell) for key, row in GOLDEN.items() for cc, cell in zip(CCS, row)]


@pytest.mark.parametrize("cc,key,cell", GOLDEN_CASES, ids=[f"sm{c[0]}{c[1]}-{k}" for c, k, _ in GOLDEN_CASES])
def test_golden_vectors(cc, key, cell):
    threads, regs, smem = key
    blocks, limiters = _parse_expected(cell)
    res = occupancy(cc, threads, regs, smem)  # Triton's rule: opted in above 48 KB
    assert res.blocks_per_sm == blocks
    assert res.limiters == limiters
    # The raw calculator agrees when told about the opt-in explicitly.
    raw = nvidia_occupancy(cc, threads, regs, smem, opted_in=smem > 48 * KB)
    assert (raw.blocks_per_sm, raw.limiters) == (blocks, limiters)


def test_golden_vector_count():
    assert len(GOLDEN_CASES) == 56


@pytest.mark.parametrize("num_warps,regs,shared,blocks", [(4, 56, 0, 9), (8, 44, 0, 5), (4, 206, 98304, 2)])
def test_h200_driver_observations(num_warps, regs, shared, blocks):
    """What the driver answered on the H200 for Triton kernels (design notes)."""
    assert triton_occupancy("sm_90", num_warps, regs, shared).blocks_per_sm == blocks


def test_intermediates_explain_the_answer():
    r = triton_occupancy("sm_90", 4, 56, 0)
    assert r.registers_per_warp == 1792  # 56 x 32 rounded up to 256
    assert r.registers_per_block == 1792 * 4
    assert r.smem_per_block == 1024  # the 1 KB per-block reservation alone
    assert r.smem_per_sm == 228 * KB
    assert r.max_dynamic_smem == 48 * KB
    assert r.limits == {"warps": 16, "registers": 9, "shared_memory": 228, "blocks": 32, "barriers": 64}
    assert r.active_warps == 36 and r.max_warps_per_sm == 64
    assert r.occupancy == pytest.approx(36 / 64)
    json.dumps(dataclasses.asdict(r))


def test_sub_partition_granularity():
    # 5 warps x 40 registers: each of the 4 sub-partitions holds 16384 // 1280 = 12 warps, 48 in
    # all -> 9 blocks. Dividing the whole file (65536 / (1280 x 5) = 10) overstates it.
    r = nvidia_occupancy((8, 0), 160, 40, 0)
    assert r.limits["registers"] == 9
    assert r.blocks_per_sm == 9


def test_register_file_per_block_limit():
    r = nvidia_occupancy((9, 0), 1024, 72, 0)  # 2304 x 32 warps > 65536
    assert r.blocks_per_sm == 0 and r.limiters == ["registers"]
    assert nvidia_occupancy((9, 0), 1024, 64, 0).blocks_per_sm == 1


def test_zero_registers_is_unlimited():
    r = nvidia_occupancy((9, 0), 64, 0, 0)
    assert r.limits["registers"] is None
    assert r.blocks_per_sm == 32


def test_block_too_large():
    r = nvidia_occupancy((9, 0), 1056, 16, 0)
    assert r.blocks_per_sm == 0 and "warps" in r.limiters


def test_carveout_rounds_up_and_driver_raises_it():
    # 16 KB dynamic + 1 KB reserved = 17408 B per block.
    assert nvidia_occupancy((9, 0), 32, 0, 16 * KB).blocks_per_sm == 13  # 228 KB carveout
    half = nvidia_occupancy((9, 0), 32, 0, 16 * KB, carveout=50)  # 114 KB -> next size, 132 KB
    assert half.smem_per_sm == 132 * KB and half.blocks_per_sm == 7
    none = nvidia_occupancy((9, 0), 32, 0, 16 * KB, carveout=0)  # 0 KB < one block: raised to 32 KB
    assert none.smem_per_sm == 32 * KB and none.blocks_per_sm == 1


def test_turing_smallest_carveout_is_32k():
    r = nvidia_occupancy((7, 5), 32, 0, 1024, carveout=0)
    assert r.smem_per_sm == 32 * KB and r.limits["shared_memory"] == 32


def test_volta_has_no_reservation_and_256_byte_unit():
    r = nvidia_occupancy((7, 0), 32, 0, 100)
    assert r.smem_per_block == 256


def test_dynamic_over_48k_needs_opt_in():
    plain = nvidia_occupancy((9, 0), 128, 32, 64 * KB)
    assert plain.blocks_per_sm == 0 and plain.limiters == ["shared_memory"]
    assert any("MAX_DYNAMIC_SHARED_SIZE_BYTES" in n for n in plain.notes)
    opted = nvidia_occupancy((9, 0), 128, 32, 64 * KB, opted_in=True)
    assert opted.blocks_per_sm == 3 and opted.max_dynamic_smem == 227 * KB


def test_triton_opts_in_above_48k_only():
    at = triton_occupancy("sm_90", 4, 32, 48 * KB)
    assert at.max_dynamic_smem == 48 * KB and "48 KB limit" in at.notes[-1]
    above = triton_occupancy("sm_90", 4, 32, 48 * KB + 1)
    assert above.max_dynamic_smem == 227 * KB and "opt-in" in above.notes[-1]
    beyond = triton_occupancy("sm_90", 4, 32, 227 * KB + 1)
    assert beyond.blocks_per_sm == 0 and "OutOfResources" in beyond.notes[-1]


def test_hopper_barriers():
    r = nvidia_occupancy((9, 0), 32, 16, 0, barriers=3)  # 32 x 2 // 3 = 21
    assert r.blocks_per_sm == 21 and r.limiters == ["barriers"]
    assert nvidia_occupancy((8, 0), 32, 16, 0, barriers=3).limits["barriers"] is None  # 9.0+ only
    assert nvidia_occupancy((12, 0), 32, 16, 0, barriers=2).blocks_per_sm == 12


def test_unknown_minor_uses_family_and_says_so():
    r = nvidia_occupancy((12, 1), 128, 32, 0)
    assert r.arch == "sm_120" and "sm_121" in r.notes[0]


@pytest.mark.parametrize("spelling", ["sm_90", "sm90", "sm_90a", "90", 90, (9, 0), "9.0", "compute_90"])
def test_parse_nvidia_spellings(spelling):
    assert parse_arch(spelling).name == "sm_90"


def test_parse_amd_and_objects():
    assert parse_arch("gfx942:sramecc+:xnack-").name == "gfx942"

    class T:  # a GPUTarget look-alike
        backend, arch, warp_size = "cuda", 100, 32

    assert parse_arch(T()).name == "sm_100"
    with pytest.raises(ValueError):
        parse_arch("tpu_v5")


def test_what_if_changes_one_input():
    base = KernelResources("sm_90", num_warps=4, registers=128, shared=0)
    w = what_if(base, registers=64)
    assert (w.before.blocks_per_sm, w.after.blocks_per_sm) == (4, 8)
    assert w.blocks_per_sm_delta == 4 and w.changes == {"registers": 64}
    g = what_if(base, gpu="A100")
    assert g.after.arch == "sm_80" and g.changes == {"target": "sm_80"}


def test_curves_shape_and_current_point():
    c = occupancy_curves("sm_90", 4, 56, 0)
    assert c.block_size.x == list(range(32, 1025, 32))
    assert c.registers.x[0] == 1 and c.registers.x[-1] == 255
    assert c.shared_memory.x[0] == 0 and c.shared_memory.x[-1] <= 227 * KB
    assert c.block_size.current_x == 128 and c.registers.current_x == 56
    # The current point lies on each curve.
    assert c.block_size.blocks_per_sm[c.block_size.x.index(128)] == 9
    assert c.registers.blocks_per_sm[c.registers.x.index(56)] == 9
    assert c.shared_memory.blocks_per_sm[0] == 9
    # Occupancy never rises with more registers or more shared memory.
    for series in (c.registers.occupancy, c.shared_memory.occupancy):
        assert all(a >= b for a, b in zip(series, series[1:]))
    # Past 48 KB Triton opts in, so the shared-memory curve does not drop to zero there.
    assert c.shared_memory.blocks_per_sm[c.shared_memory.x.index(64 * KB)] > 0
    json.dumps(dataclasses.asdict(c))


def test_waves_quantisation():
    w = waves(grid_blocks=1000, blocks_per_sm=2, sm_count=132)
    assert (w.blocks_per_wave, w.waves, w.full_waves, w.last_wave_blocks) == (264, 4, 3, 208)
    assert w.efficiency == pytest.approx(1000 / 1056)
    assert waves(264, 2, 132).efficiency == 1.0
    assert waves(265, 2, 132).waves == 2
    assert not waves(10, 0, 132).launchable
