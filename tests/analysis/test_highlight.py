"""Highlighting of every stage (pygments path and fast path) on real Triton output."""

from __future__ import annotations

import html
import re

import pytest

from paths import KERNELS
from inspector import highlight as hl
from inspector.compile.api import inspect_kernel

ROW = re.compile(r'<div class="r(?: n)?" id="(\w+)-L(\d+)">(.*?)</div>')
CHUNK = re.compile(r'<div class="k" style="counter-reset:ln (\d+)">')


@pytest.fixture(scope="module")
def add_sm90(sandbox):
    rec = inspect_kernel(KERNELS / "add.py", target="sm_90", sandbox=sandbox)
    assert rec.ok, rec.error
    return rec


@pytest.fixture(scope="module")
def add_gfx942(sandbox):
    rec = inspect_kernel(KERNELS / "add.py", target="gfx942", sandbox=sandbox)
    assert rec.ok, rec.error
    return rec


def plain(fragment: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", fragment))


def classes_of(text: str, language: str, token: str, fast: bool = False) -> set[str]:
    return {c for c, v in hl.token_classes(text, language, fast) if v == token}


@pytest.mark.parametrize("fast", [False, True])
@pytest.mark.parametrize("stage", ["ttir", "ttgir", "llir", "ptx", "sass"])
def test_rows_reproduce_the_text_line_for_line(add_sm90, stage, fast):
    text = add_sm90.stages[stage]
    lines = hl.highlight_lines(text, hl.language_of(stage), fast=fast)
    assert [plain(x) for x in lines] == text.split("\n")


def test_amdgcn_rows_reproduce_the_text(add_gfx942):
    text = add_gfx942.stages["amdgcn"]
    for fast in (False, True):
        assert [plain(x) for x in hl.highlight_lines(text, "amdgcn", fast=fast)] == text.split("\n")


def test_source_with_markup_characters_is_escaped():
    text = 'x = "<script>alert(1)</script>" & y\n# a < b > c'
    lines = hl.highlight_lines(text, "python")
    assert "<script>" not in "".join(lines)
    assert [plain(x) for x in lines] == text.split("\n")


def test_mlir_lexer_classes_real_ttgir(add_sm90):
    text = add_sm90.stages["ttgir"]
    assert "nb" in classes_of(text, "mlir", "tt.load")  # operations
    assert "nv" in classes_of(text, "mlir", "%pid")  # SSA values
    assert "nf" in classes_of(text, "mlir", "@add_kernel")
    assert "ni" in classes_of(text, "mlir", "#blocked")  # layout aliases
    assert any(c == "cs" and v.startswith("loc(") for c, v in hl.token_classes(text, "mlir"))  # dimmed locations
    assert not [v for c, v in hl.token_classes(text, "mlir") if c == "err"]


def test_sass_lexer_classes_real_sass(add_sm90):
    text = add_sm90.stages["sass"]
    ops = {v for c, v in hl.token_classes(text, "sass") if c == "nb"}
    assert "LDG.E.128" in ops and "STG.E.128" in ops
    regs = {v for c, v in hl.token_classes(text, "sass") if c == "nv"}
    assert "R0" in regs or "R1" in regs
    assert any(c == "cs" and re.fullmatch(r"/\*[0-9a-f]{4}\*/", v) for c, v in hl.token_classes(text, "sass"))
    assert any(c == "c1" and v.startswith("//## File") for c, v in hl.token_classes(text, "sass"))
    # every control-bit column is one token, stall counts above 9 (hex) included
    controls = re.findall(r"^\s+/\*[0-9a-f]+\*/\s+(\S+)", text, re.M)
    tokens = {v for c, v in hl.token_classes(text, "sass") if c == "cp"}
    assert controls and set(controls) <= tokens
    for fast in (False, True):
        line = "        /*0010*/  01:-:-:Y:b  NOP ;\n"
        assert ("cp", "01:-:-:Y:b") in set(hl.token_classes(line, "sass", fast))


def test_amdgcn_lexer_classes_real_assembly(add_gfx942):
    text = add_gfx942.stages["amdgcn"]
    ops = {v for c, v in hl.token_classes(text, "amdgcn") if c == "nb"}
    assert any(o.startswith("global_load") or o.startswith("buffer_load") for o in ops)
    assert any(v.startswith("s[") or v.startswith("v") for c, v in hl.token_classes(text, "amdgcn") if c == "nv")


def test_ptx_fast_path_marks_vector_loads(add_sm90):
    text = add_sm90.stages["ptx"]
    line = next(x for x in hl.highlight_lines(text, "ptx", fast=True) if "ld" in x and "v4" in x)
    assert '<span class="nb">ld</span>' in line and '<span class="k">.global</span>' in line


def test_render_rows_numbers_and_anchors(add_sm90):
    text = add_sm90.stages["ptx"]
    out = hl.render_rows(text, "ptx", "ptx", chunk=50)
    rows = ROW.findall(out)
    n = text.count("\n") + 1
    assert len(rows) == n
    assert [int(r[1]) for r in rows] == list(range(1, n + 1))
    assert all(r[0] == "ptx" for r in rows)
    # Each chunk of 50 rows restarts the number counter at the line before its first row.
    assert [int(c) for c in CHUNK.findall(out)] == list(range(0, n, 50))


def test_large_stage_takes_fast_path(add_sm90):
    """20,000 lines of real PTX (the add kernel's, repeated) go through the fast path, whole."""
    base = add_sm90.stages["ptx"].split("\n")
    text = "\n".join((base * (20000 // len(base) + 1))[:20000])
    assert len(text) > hl.FAST_PATH_BYTES
    assert hl.highlight_lines(text, "ptx") == hl.highlight_lines(text, "ptx", fast=True)
    assert len(ROW.findall(hl.render_rows(text, "ptx", "ptx"))) == 20000


def test_stylesheet_covers_emitted_classes():
    css = hl.stylesheet(".hl")
    for cls in ("k", "nb", "nv", "c1", "mi", "s"):
        assert f".hl .{cls} " in css


def test_directives_comments_and_debug_sections_are_marked_as_noise(add_sm90, add_gfx942):
    ptx = add_sm90.stages["ptx"].split("\n")
    noise = hl.noise_lines(add_sm90.stages["ptx"], "ptx")
    kept = [l for n, l in enumerate(ptx, 1) if n not in noise]
    assert len(noise) > len(ptx) / 2  # most of a small kernel's PTX is debug sections and .loc lines
    assert not any(l.lstrip().startswith((".loc", ".file", "//", ".section")) or "debug" in l for l in kept)
    assert any("ld.global" in l for l in kept) and any(".entry add_kernel" in l for l in kept)
    assert any(l.lstrip().startswith("ret;") for l in kept)
    sass = add_sm90.stages["sass"].split("\n")
    sass_noise = hl.noise_lines(add_sm90.stages["sass"], "sass")
    assert all(sass[n - 1].lstrip().startswith("//##") or not sass[n - 1].strip() for n in sass_noise
               if "debug" not in sass[n - 1])
    assert any("LDG" in l for n, l in enumerate(sass, 1) if n not in sass_noise)
    gcn = add_gfx942.stages["amdgcn"].split("\n")
    gcn_noise = hl.noise_lines(add_gfx942.stages["amdgcn"], "amdgcn")
    assert any("buffer_load_dwordx4" in l for n, l in enumerate(gcn, 1) if n not in gcn_noise)
    assert all(not gcn[n - 1].lstrip().startswith(("v_", "s_", "buffer_", "global_")) for n in gcn_noise)
    # the rows carry the class; their numbering is the text's
    rows = ROW.findall(hl.render_rows(add_sm90.stages["ptx"], "ptx", "ptx"))
    assert [int(n) for _, n, _ in rows] == list(range(1, len(ptx) + 1))
    html_rows = hl.render_rows(add_sm90.stages["ptx"], "ptx", "ptx")
    assert html_rows.count('class="r n"') == len(noise)


def test_a_basic_block_label_is_not_noise():
    text = "$L__BB0_2:\n\tld.global.b32 %r1, [%rd1];\n$L__tmp3:\n\t.loc\t1 7 5\n\t@%p1 bra $L__BB0_2;"
    assert hl.noise_lines(text, "ptx") == {3, 4}


def test_a_ptx_name_that_starts_like_an_instruction_is_one_name():
    """`st` inside `strided_copy_param_2` is not a store (pygments' PTX lexer alone says it is)."""
    rows = {n: code for _, n, code in ROW.findall(hl.render_rows(
        "\tld.param.u64 \t%rd1, [strided_copy_param_2];\n\tst.global.b32 [%rd1], %r1;", "ptx", "ptx"))}
    assert '<span class="k">st</span>' not in rows["1"] and "strided_copy_param_2" in rows["1"]
    assert '<span class="k">st</span>' in rows["2"]  # the store itself still is one
