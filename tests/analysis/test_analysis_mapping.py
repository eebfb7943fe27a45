"""Source <-> stage line mapping on real Triton output (GPU-free), for the installed Triton."""

from __future__ import annotations

import re

import pytest
from analysis_kernels import CDIV_LINE, HELPER, HELPER_BODY_LINE, HELPER_CALL_LINE, tl_lines, write_kernel
from paths import KERNELS

from inspector.analysis import line_map
from inspector.analysis.locations import ptx_locations, sass_locations, stage_lines
from inspector.compile.api import inspect_kernel

BUNDLED = sorted(p for p in KERNELS.glob("*.py") if not p.name.startswith("_"))
NVIDIA_STAGES = ("ttir", "ttgir", "llir", "ptx", "sass")


@pytest.fixture(scope="module")
def add90(sandbox):
    rec = inspect_kernel(KERNELS / "add.py", target="sm_90", sandbox=sandbox)
    assert rec.error is None, rec.error and rec.error.short()
    return rec


@pytest.fixture(scope="module")
def helper(sandbox, tmp_path_factory):
    path = write_kernel(tmp_path_factory.mktemp("helper"), "helper", HELPER)
    out = {}
    for target in ("sm_90", "gfx942"):
        rec = inspect_kernel(path, target=target, sandbox=sandbox)
        assert rec.error is None, rec.error and rec.error.short()
        out[target] = rec
    return out


@pytest.fixture(scope="module")
def bundled(sandbox):
    out = {}
    for path in BUNDLED:
        rec = inspect_kernel(path, target="sm_90", sandbox=sandbox, timeout=300)
        assert rec.error is None, f"{path.name}: {rec.error and rec.error.short()}"
        out[path.stem] = rec
    return out


def test_every_tl_line_of_add_maps_to_every_stage(add90):
    lm = line_map(add90)
    assert tl_lines(add90.source) == [22, 23, 25, 26, 27]
    lines = list(range(22, 28))  # the whole body: `mask = offs < n` is code too
    for stage in NVIDIA_STAGES:
        missing = [ln for ln in lines if not lm.stage_lines(stage, ln)]
        assert not missing, f"{stage}: no lines for source lines {missing}"


def test_every_tl_line_of_a_kernel_with_helpers_maps(helper):
    rec = helper["sm_90"]
    lm = line_map(rec)
    lines = tl_lines(rec.source)
    assert HELPER_BODY_LINE in lines and CDIV_LINE in lines
    for stage in NVIDIA_STAGES:
        missing = [ln for ln in lines if not lm.stage_lines(stage, ln)]
        assert not missing, f"{stage}: no lines for source lines {missing}"
    amd = line_map(helper["gfx942"])
    for stage in ("ttir", "ttgir", "llir"):
        assert all(amd.stage_lines(stage, ln) for ln in lines), stage
    # tl.program_id costs no AMDGCN instruction (the workgroup id arrives in an SGPR); the rest maps
    assert all(amd.stage_lines("amdgcn", ln) for ln in lines if ln != 13)


def test_inlined_helper_maps_to_its_line_and_its_call_site(helper):
    for target, stages in (("sm_90", NVIDIA_STAGES), ("gfx942", ("ttir", "ttgir", "llir", "amdgcn"))):
        lm = line_map(helper[target])
        for stage in stages:
            sm = lm.stages[stage]
            body = sm.from_source.get(HELPER_BODY_LINE, [])
            assert body, (target, stage)
            assert all(HELPER_CALL_LINE in sm.to_source[n] for n in body), (target, stage)
            assert all(sm.to_source[n][0] == HELPER_BODY_LINE for n in body), (target, stage)
            assert set(body) <= set(sm.from_source[HELPER_CALL_LINE])


def test_library_code_maps_to_the_call_site(helper):
    """tl.cdiv is inlined from triton/language/standard.py: its code belongs to the calling line."""
    lm = line_map(helper["sm_90"])
    for stage in ("ttir", "llir", "ptx", "sass"):
        sm = lm.stages[stage]
        assert sm.from_source.get(CDIV_LINE), stage
        assert not any(CDIV_LINE in v for v in sm.elsewhere.values())
    ptx = helper["sm_90"].stages["ptx"]
    # the PTX names standard.py for that code, but maps it to the kernel's line
    assert "standard.py" in ptx


def test_mapping_is_consistent_both_ways(helper, add90):
    for rec in (add90, helper["sm_90"], helper["gfx942"]):
        lm = line_map(rec)
        for stage, sm in lm.stages.items():
            n_lines = len(stage_lines(rec.stages[stage]))
            for line, sources in sm.to_source.items():
                assert 1 <= line <= n_lines
                for s in sources:
                    assert line in sm.from_source[s]
            for s, lines in sm.from_source.items():
                assert lines == sorted(lines)
                assert all(s in sm.to_source[n] for n in lines)
            assert not set(sm.unknown) & set(sm.to_source)


def test_lines_without_location_are_reported_not_guessed(add90):
    """TTGIR's constants carry loc(unknown): they map to nothing and are listed as unknown."""
    lm = line_map(add90)
    sm = lm.stages["ttgir"]
    lines = stage_lines(add90.stages["ttgir"])
    unknown = [n for n in sm.unknown if "arith.constant" in lines[n - 1]]
    assert unknown and all(n not in sm.to_source for n in unknown)
    assert "loc(#loc1)" in lines[unknown[0] - 1]


def test_loads_and_stores_map_to_their_lines_in_ptx_and_sass(add90):
    """The SASS line table carries the PTX `.loc` of each instruction; Triton 3.9's LLVM shifts the
    `.loc` of inline-asm loads by their line in the asm block, which must not show."""
    lm = line_map(add90)
    for stage, load, store in (("ptx", r"ld\.global", r"st\.global"), ("sass", r"\bLDG\b", r"\bSTG\b")):
        lines = stage_lines(add90.stages[stage])
        loads = [n for n, l in enumerate(lines, 1) if re.search(load, l)]
        stores = [n for n, l in enumerate(lines, 1) if re.search(store, l)]
        assert len(loads) == 4 and len(stores) == 2
        assert {tuple(lm.source_lines(stage, n)) for n in loads} == {(25,), (26,)}, stage
        assert {tuple(lm.source_lines(stage, n)) for n in stores} == {(27,)}, stage


def test_ir_to_ir_through_shared_source_lines(add90):
    lm = line_map(add90)
    ttgir = stage_lines(add90.stages["ttgir"])
    load = next(n for n, l in enumerate(ttgir, 1) if "tt.load %x" in l)
    ptx = stage_lines(add90.stages["ptx"])
    related = lm.related("ttgir", load, "ptx")
    assert related and any("ld.global" in ptx[n - 1] for n in related)
    assert all(25 in lm.source_lines("ptx", n) for n in related)
    back = lm.related("ptx", related[0], "ttgir")
    assert load in back
    every = lm.everywhere(25)
    assert set(every) == set(NVIDIA_STAGES) and all(every.values())
    assert load in every["ttgir"] and set(related) <= set(every["ptx"])


def test_region_ops_map_through_their_closing_brace(bundled):
    rec = bundled["matmul"]
    lm = line_map(rec)
    lines = stage_lines(rec.stages["ttir"])
    loops = [n for n, l in enumerate(lines, 1) if "scf.for" in l]
    assert loops
    src = rec.source.split("\n")
    for n in loops:
        mapped = lm.source_lines("ttir", n)
        assert mapped and any("range(" in src[s - 1] for s in mapped), (n, mapped)


def _first_stage(rec) -> str:
    """TTIR; a Gluon kernel starts at TTGIR (it is written at that level)."""
    return "ttir" if "ttir" in rec.stages else "ttgir"


def _runtime_lines(rec, lm) -> list[int]:
    """tl.* (gl.*) lines with an op in the first stage that is not a constant (tl.zeros(...) - inf
    folds to one)."""
    first = _first_stage(rec)
    ttir = stage_lines(rec.stages[first])
    # In a TTGIR written by hand (Gluon) shared-memory allocations become a fixed offset and a
    # conversion to the layout a value already has is no code: neither reaches the LLVM IR.
    folded = ("arith.constant", "ttg.local_alloc", "ttg.convert_layout", "ttg.memdesc_")
    out = []
    for ln in tl_lines(rec.source):
        ops = [ttir[n - 1] for n in lm.stage_lines(first, ln)]
        if any(not any(f in op for f in folded) for op in ops):
            out.append(ln)
    return out


_LOCATION = {"llir": r"!DILocation\(line: {n},", "ptx": r"\.loc\s+\d+ {n} \d+", "sass": r"line {n}\b",
             "ttgir": r":{n}:\d+\)"}


def _located(rec, stage: str, line: int) -> bool:
    """Whether the compiler wrote a location for `line` anywhere in the stage's text."""
    import re

    pattern = _LOCATION.get(stage)
    return pattern is None or re.search(pattern.replace("{n}", str(line)), rec.stages.get(stage, "")) is not None


def test_bundled_kernels_map_their_tl_lines(bundled):
    """Every tl.* line with a runtime op in the TTIR reaches each later stage, up to the odd line
    whose op CSE merged into another's (two equal tl.arange, integer maths LLVM folds)."""
    for name, rec in bundled.items():
        lm = line_map(rec)
        lines = _runtime_lines(rec, lm)
        assert lines, name
        for stage in NVIDIA_STAGES[NVIDIA_STAGES.index(_first_stage(rec)) + 1:]:
            # a line the compiler itself gave no location in this stage is not the map's to find
            missing = [ln for ln in lines if not lm.stage_lines(stage, ln) and _located(rec, stage, ln)]
            assert len(missing) <= max(1, len(lines) // 10), f"{name} {stage}: {missing}"
        for stage, sm in lm.stages.items():
            assert sm.to_source, (name, stage)
            # most code has a location
            assert len(sm.unknown) < 0.4 * sm.code_lines, (name, stage, len(sm.unknown), sm.code_lines)


# ---- the parsers on real snippets of both Triton versions -------------------------------------------------
# Triton 3.9 (LLVM with per-line `.loc` in inline asm): the ld.global sits under `.loc 1 28 9`
PTX_39_INLINE_ASM = """\
\t.loc\t1 25 9                          // add.py:25:9
\t// begin inline asm
\t.loc\t1 25 9                          // add.py:25:9
\tmov.u32 %r1, 0x0;
\t.loc\t1 26 9                          // add.py:26:9
\tmov.u32 %r2, 0x0;
\t.loc\t1 27 9                          // add.py:27:9
\tmov.u32 %r3, 0x0;
\t.loc\t1 28 9                          // add.py:28:9
\tmov.u32 %r4, 0x0;
\t@%p1 ld.global.v4.b32 { %r1, %r2, %r3, %r4 }, [ %rd1 + 0 ];

\t// end inline asm
\tadd.s64 \t%rd3, %rd8, %rd10;
\t.file\t1 "/work/main/kernels/add.py"
"""
# ... and the SASS line table ptxas made from it
SASS_39 = """\
\t//## File "/work/main/kernels/add.py", line 28
        /*0180*/  --:-:2:-:4  @!P0 LDG.E.128 R16, desc[UR4][R2.64] ;
"""
# Triton 3.6: the call site of inlined library code only in the comment
PTX_36_INLINED = """\
\t.loc\t2 43 17                         // standard.py:43:17 @[ matmul.py:87:27 ]
\tadd.s32 \t%r1, %r2, 127;
\t.file\t1 "/work/main/kernels/matmul.py"
\t.file\t2 "/opt/triton36/triton/language/standard.py"
"""


def test_ptx_inline_asm_lines_keep_the_blocks_location():
    loc = ptx_locations(PTX_39_INLINE_ASM)
    lines = stage_lines(PTX_39_INLINE_ASM)
    ld = next(n for n, l in enumerate(lines, 1) if "ld.global" in l)
    assert loc.chains[ld][0][0][1:] == (25, 9)
    assert loc.emitted[ld][0][1] == 28  # what ptxas saw
    after = next(n for n, l in enumerate(lines, 1) if "add.s64" in l)
    assert loc.chains[after][0][0][1] == 25  # no new .loc after the block: LLVM's location holds
    sass = sass_locations(SASS_39, loc)
    ldg = next(n for n, l in enumerate(stage_lines(SASS_39), 1) if "LDG" in l)
    assert [f[1] for f in sass.chains[ldg][0]] == [25] and ldg in sass.inferred


def test_ptx_inlined_call_site_from_the_comment():
    loc = ptx_locations(PTX_36_INLINED)
    chain = loc.chains[2][0]
    assert [(f[0].rsplit("/", 1)[1], f[1], f[2]) for f in chain] == [("standard.py", 43, 17), ("matmul.py", 87, 27)]
