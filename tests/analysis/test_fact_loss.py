"""The compiler's facts, as `analysis.axis_info` reads them from the TTIR, against what Triton
really emitted: the width they allow (capped by the layout's share per thread) equals each global
access's compiled width, on the gallery, published kernels of the corpora and kernels written as
users do; and `fact_loss` finds where each fact was lost (a loaded loop bound through the
induction variable, a kernel argument, a mask bound), which the advice names."""

from __future__ import annotations

import pytest
from analysis_kernels import compiled
from hint_kernels import JAGGED_LOAD_LINE, ROWS_LOAD_LINE, jagged, rows
from paths import KERNELS, REPO

from inspector.analysis import memory_report
from inspector.analysis.advisor import advise
from inspector.analysis.axis_info import axis_info
from inspector.analysis.fact_loss import access_limits
from inspector.analysis.hint_sites import source_ops

CORPUS = REPO / "tests" / "fixtures" / "published" / "first_four_projects"
CORPUS2 = REPO / "tests" / "fixtures" / "published" / "five_more_projects"
# published files whose accesses the facts must explain: an inlined helper's loads and stores
# (torchao), a masked atomic whose mask is a constant `dense<true>` (gemlite), row kernels (liger)
PUBLISHED = [
    (CORPUS / "torchao/torchao/prototype/attention/quantization/triton_hadamard_qkv_quantization.py",
     "hadamard_single_phase1_kernel"),
    (CORPUS2 / "gemlite/gemlite/triton_kernels/gemm_splitK_kernels.py", "gemm_splitK_INT_kernel"),
    (CORPUS / "liger_kernel/src/liger_kernel/ops/rms_norm.py", "_rms_norm_forward_kernel"),
    (CORPUS2 / "flash_attn/flash_attn/ops/triton/cross_entropy.py", None),
]


@pytest.fixture(scope="module")
def records(sandbox, tmp_path_factory):
    d = tmp_path_factory.mktemp("facts")
    out = {name: compiled(sandbox, KERNELS / f"{name}.py", target="sm_90")
           for name in ("add", "softmax", "layer_norm", "gelu", "matmul", "attention")}
    out["add_4095"] = compiled(sandbox, KERNELS / "add.py", target="sm_90", args={"n": "4095"})
    out["copy_strided"] = compiled(sandbox, KERNELS / "copy_coalesced_vs_strided.py", target="sm_90",
                                   kernel="copy_strided_kernel")
    out["jagged"] = compiled(sandbox, jagged(d), target="sm_90")
    out["rows"] = compiled(sandbox, rows(d), target="sm_90")
    hinted = rows(d).read_text().replace("row * ld + cols", "tl.multiple_of(row * ld, 4) + cols").replace(
        "mask = cols < n_cols", "mask = tl.max_constancy(cols < n_cols, 4)")
    (d / "rows_hinted.py").write_text(hinted)
    out["rows_hinted"] = compiled(sandbox, d / "rows_hinted.py", target="sm_90")
    for path, kernel in PUBLISHED:
        out[path.stem] = compiled(sandbox, path, target="sm_90", **({"kernel": kernel} if kernel else {}))
    return out


def _op(rec, a):
    src = source_ops(rec)
    return src, next(o for o in src.mod.ops if o.line == a.ttir_line)


def test_the_facts_give_the_width_the_compiler_emitted(records):
    compared = 0
    for name, rec in records.items():
        src = source_ops(rec)
        info = axis_info(src.mod)
        for a in memory_report(rec).accesses:
            if a.verdict not in ("vectorised", "partial", "scalar") or a.uniform or not a.width_bits:
                continue
            if any(k.startswith("cp.async") for k in a.lowered_as):
                continue  # a copy into shared memory: its width follows the shared layout too
            lim = access_limits(src.mod, next(o for o in src.mod.ops if o.line == a.ttir_line), info)
            predicted = min(lim.width, a.elements_per_thread or lim.width) * a.element_bits
            assert predicted == a.width_bits, (name, a.line, a.op, lim)
            compared += 1
    assert compared >= 40, compared


def test_a_loop_over_loaded_bounds_is_followed_into_its_lower_bound(records):
    rec = records["jagged"]
    a = next(a for a in memory_report(rec).accesses if a.line == JAGGED_LOAD_LINE)
    src, op = _op(rec, a)
    lim = access_limits(src.mod, op)
    assert (lim.full, lim.contiguity, lim.divisibility, lim.mask_constancy) == (4, 256, 1, 1)
    assert sorted(lim.short) == ["constancy", "divisibility"]
    address = next(l for l in lim.losses if l.path[0].fact == "divisibility")
    # pointer -> offsets -> the splat of `i` -> the induction variable -> its lower bound, a load
    assert [n.op.name if n.op else None for n in address.path] == ["tt.addptr", "arith.addi", "tt.splat", None, "tt.load"]
    assert address.kind == "loaded" and address.leaf.value.startswith("start")
    mask = next(l for l in lim.losses if l.path[0].fact == "constancy")
    assert mask.kind == "loaded" and mask.leaf.value.startswith("end") and mask.path[0].op.name == "arith.cmpi"


def test_an_argument_loses_its_fact_and_the_hint_goes_on_an_expression_that_uses_it(records):
    rec = records["rows"]
    a = next(a for a in memory_report(rec).accesses if a.line == ROWS_LOAD_LINE)
    src, op = _op(rec, a)
    lim = access_limits(src.mod, op)
    kinds = {(l.kind, l.leaf.value, l.hintable) for l in lim.losses}
    assert kinds == {("program_id", "row", False), ("argument", "ld", True), ("argument", "n_cols", True)}
    advice = next(f for f in advise(rec) if f.line == ROWS_LOAD_LINE).suggestion
    # both blockers named, the hints where Triton keeps them, never on the bare argument
    assert "`ld` (= 1000), a kernel argument" in advice and "the mask's bound `n_cols` (= 1000)" in advice
    assert "`tl.multiple_of(row * ld, 4)` on line 11" in advice and "`tl.max_constancy(cols < n_cols, 4)`" in advice
    assert "multiple_of(ld," not in advice and "multiple_of(n_cols," not in advice
    # with the hints in the file, the accesses are 128-bit and nothing is lost any more
    hinted = records["rows_hinted"]
    for a in memory_report(hinted).accesses:
        assert a.width_bits == 128
        src, op = _op(hinted, a)
        assert access_limits(src.mod, op).losses == []


def test_a_stride_caps_the_width_and_no_hint_is_advised(records):
    rec = records["copy_strided"]
    finding = next(f for f in advise(rec) if f.code == "uncoalesced_access")
    a = next(a for a in memory_report(rec).accesses if a.line == finding.line)
    src, op = _op(rec, a)
    lim = access_limits(src.mod, op)
    assert "contiguity" in lim.short and all(not l.hintable for l in lim.losses if l.path[0].fact == "contiguity")
    assert "multiple_of" not in finding.suggestion and "max_contiguous" not in finding.suggestion


def test_a_launch_that_breaks_the_promise_is_told_to_split_the_tail(records):
    advice = next(f for f in advise(records["add_4095"]) if f.line == 25).suggestion
    assert "`tl.max_constancy(offs < n, 4)` on line 24" in advice and "(`n` = 4095): split the masked tail off" in advice
