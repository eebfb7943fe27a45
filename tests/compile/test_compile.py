"""The core: compiling through warmup GPU-free, every stage, resources, the call convention."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap

import pytest

from inspector.bench import protocol as gallery

import fuzz_cases
from paths import KERNELS, REPO, cli_environment
from inspector.compile.api import inspect_kernel

BUNDLED = sorted(p for p in KERNELS.glob("*.py") if not p.name.startswith("_"))
CORE_TARGETS = ["sm_80", "sm_90", "sm_120", "gfx942"]
ADD = KERNELS / "add.py"


def write(tmp_path, name: str, text: str):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


@pytest.mark.parametrize("target", CORE_TARGETS)
@pytest.mark.parametrize("path", BUNDLED, ids=lambda p: p.stem)
def test_every_bundled_kernel_compiles(path, target, sandbox):
    rec = inspect_kernel(path, target=target, sandbox=sandbox, timeout=300)
    module = gallery.load_gallery(path.stem)
    written_for = getattr(module, "CAPABILITY", None)
    if written_for is not None and target != f"sm_{written_for[0]}{written_for[1]}" and rec.error is not None:
        # a Gluon kernel for one GPU generation (or vendor) says so, at its launch, instead of crashing the
        # compiler; one whose layouts fit other GPUs compiles for them like any other
        assert rec.error.kind == "example" and " only" in rec.error.message, rec.error
        return
    assert rec.error is None, rec.error and rec.error.short()
    expected = ["ttir", "ttgir", "llir", "amdgcn"] if target.startswith("gfx") else ["ttir", "ttgir", "llir", "ptx", "sass"]
    if getattr(module, "LANGUAGE", "triton") == "gluon":
        expected.remove("ttir")  # Gluon is written at the TTGIR level
    assert rec.stage_names() == expected
    assert all(rec.stages[s].strip() for s in expected)
    if target.startswith("gfx"):
        assert rec.resources.vgprs and rec.resources.sgprs
    else:
        assert rec.resources.registers and rec.resources.registers <= 255
        assert f".target sm_{target[3:]}" in rec.stages["ptx"]


def ptx_lines(rec, pattern: str) -> list[str]:
    return [l for l in rec.stages["ptx"].splitlines() if re.search(pattern, l)]


def test_add_vectorises_when_n_divisible_by_16(sandbox):
    rec = inspect_kernel(ADD, target="sm_90", sandbox=sandbox)
    assert rec.error is None
    assert len(ptx_lines(rec, r"ld\.global\.v4\.b32")) >= 2
    assert not ptx_lines(rec, r"ld\.global\.b32")
    n = next(p for p in rec.parameters if p.name == "n")
    assert n.value == 4096 and "tt.divisibility=16" in n.specialization
    assert rec.call_origin == "example" and rec.grid == [4]
    assert re.search(r"LDG\.E\.128", rec.stages["sass"])


def test_add_scalar_when_n_is_4095(sandbox):
    rec = inspect_kernel(ADD, target="sm_90", args={"n": "4095"}, sandbox=sandbox)
    assert rec.error is None
    assert not ptx_lines(rec, r"ld\.global\.v4")
    assert len(ptx_lines(rec, r"ld\.global\.b32")) >= 8
    n = next(p for p in rec.parameters if p.name == "n")
    assert n.value == 4095 and n.specialization == []


def test_pointer_offset_breaks_alignment(tmp_path, sandbox):
    """A tensor starting one element into its storage is not 16-byte aligned, as on a real launch."""
    src = (ADD.read_text()
           .replace("return launch(*make_inputs(4096, device))",
                    "x, y = make_inputs(4097, device)\n    return launch(x[1:], y[1:])"))
    path = write(tmp_path, "add_offset.py", src)
    rec = inspect_kernel(path, target="sm_90", sandbox=sandbox)
    assert rec.error is None
    x = next(p for p in rec.parameters if p.name == "x_ptr")
    assert "tt.divisibility=16" not in x.specialization
    assert not any("ld.global.v4" in l for l in ptx_lines(rec, r"ld\.global") if "%rd1" in l)


UNSEEN = """
import triton
import triton.language as tl


@triton.jit
def scale_rows(src_ptr, dst_ptr, n_cols, stride, alpha, BLOCK: tl.constexpr, ROWS: tl.constexpr):
    row0 = tl.program_id(0) * ROWS
    cols = tl.arange(0, BLOCK)
    for r in tl.static_range(ROWS):
        row = row0 + r
        v = tl.load(src_ptr + row * stride + cols, mask=cols < n_cols, other=0.0)
        v32 = v.to(tl.float32)
        acc = tl.sum(v32 * v32, axis=0)
        y = v32 * alpha / tl.sqrt(acc + 1e-6)
        tl.store(dst_ptr + row * stride + cols, y.to(dst_ptr.dtype.element_ty), mask=cols < n_cols)
"""


def triton_reports(path, target_arch: int, consts: dict, dtype: str) -> dict:
    """Compile with Triton directly (no inspector code) in a fresh process; Triton's own figures."""
    script = textwrap.dedent(f"""
        import importlib.util, io, contextlib, json, sys, torch, triton, re
        from triton import knobs
        from triton.backends.compiler import GPUTarget
        from triton.runtime.driver import driver
        class Offline:
            def get_current_target(self): return GPUTarget("cuda", {target_arch}, 32)
            def get_current_device(self): return 0
            def get_current_stream(self, d=None): return 0
        driver.set_active(Offline())
        spec = importlib.util.spec_from_file_location("m", {str(path)!r}); m = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(m)
        knobs.nvidia.dump_ptxas_log = True
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            k = m.scale_rows.warmup(torch.{dtype}, torch.{dtype}, 4096, 4096, 1.0, grid=(1,), **{consts!r})
        regs = int(re.search(r"Used (\\d+) registers", buf.getvalue()).group(1))
        print(json.dumps({{"registers": regs, "shared": k.metadata.shared, "num_warps": k.metadata.num_warps}}))
    """)
    env = dict(os.environ, TRITON_CACHE_DIR=str(path.parent / "triton-cache"))
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_unseen_kernel_from_signature_matches_triton(tmp_path, sandbox):
    path = write(tmp_path, "unseen.py", UNSEEN)
    rec = inspect_kernel(path, target="sm_90", consts={"BLOCK": "1024", "ROWS": "2"},
                         args={"src_ptr": "fp16", "dst_ptr": "fp16"}, options={"num_warps": "8"}, sandbox=sandbox)
    assert rec.error is None, rec.error and rec.error.short()
    assert rec.call_origin == "signature"
    types = {p.name: p.type for p in rec.parameters}
    assert types["src_ptr"] == "*fp16" and types["alpha"] == "fp32" and types["n_cols"] == "i32"
    mine = triton_reports(path, 90, {"BLOCK": 1024, "ROWS": 2, "num_warps": 8}, "float16")
    assert rec.resources.registers == mine["registers"]
    assert rec.resources.shared_bytes == mine["shared"] > 0  # the row reduction goes through shared memory
    assert rec.resources.num_warps == 8


def test_a_parameter_asked_for_its_element_type_is_a_pointer(tmp_path, sandbox):
    # `Ref` is used only as `x.to(Ref.dtype.element_ty)` on a value multiplied by N: it is still a
    # pointer (an integer has no element type: "'dtype' object has no attribute 'element_ty'")
    path = write(tmp_path, "elty.py", """
        import triton
        import triton.language as tl


        @triton.jit
        def cast_only(X, Out, Ref, N, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            m = offs < N
            x = tl.load(X + offs, mask=m) * N
            tl.store(Out + offs, x.to(Ref.dtype.element_ty), mask=m)
    """)
    rec = inspect_kernel(path, target="sm_90", consts={"BLOCK": "1024"}, sandbox=sandbox)
    assert rec.error is None, rec.error and rec.error.short()
    kinds = {p.name: p.kind for p in rec.parameters}
    assert kinds["Ref"] == "pointer" and kinds["N"] == "scalar"


def test_loaded_loop_bounds_come_from_an_integer_tensor(tmp_path, sandbox):
    # `cu_seqlens`-style offsets bound a loop: made up as float32 they failed with "For loop bounds
    # and step must all be ints"; they are integers (as torch's index tensors: int64)
    path = write(tmp_path, "varlen.py", """
        import triton
        import triton.language as tl


        @triton.jit
        def varlen_sum(X, CuSeqlens, Out, D: tl.constexpr):
            b = tl.program_id(0)
            start = tl.load(CuSeqlens + b)
            end = tl.load(CuSeqlens + b + 1)
            cols = tl.arange(0, D)
            acc = tl.zeros([D], dtype=tl.float32)
            for t in range(start, end):
                acc += tl.load(X + t * D + cols)
            tl.store(Out + b * D + cols, acc)
    """)
    rec = inspect_kernel(path, target="sm_90", consts={"D": "64"}, sandbox=sandbox)
    assert rec.error is None, rec.error and rec.error.short()
    assert {p.name: p.type for p in rec.parameters}["CuSeqlens"] == "*i64"


def test_suggestions_for_a_tiled_kernel_fit_the_target(tmp_path, sandbox):
    # a head dimension is 64, a tile side of a dot kernel 64: 1024 overflowed shared memory
    path = write(tmp_path, "attn.py", """
        import triton
        import triton.language as tl


        @triton.jit
        def attn_fwd(Q, K, V, Out, N_CTX, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                     BLOCK_DMODEL: tl.constexpr):
            offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
            offs_d = tl.arange(0, BLOCK_DMODEL)
            q = tl.load(Q + offs_m[:, None] * BLOCK_DMODEL + offs_d[None, :])
            acc = tl.zeros([BLOCK_M, BLOCK_DMODEL], dtype=tl.float32)
            for start in range(0, N_CTX, BLOCK_N):
                offs_n = start + tl.arange(0, BLOCK_N)
                k = tl.load(K + offs_n[None, :] * BLOCK_DMODEL + offs_d[:, None])
                v = tl.load(V + offs_n[:, None] * BLOCK_DMODEL + offs_d[None, :])
                acc += tl.dot(tl.dot(q, k).to(v.dtype), v)
            tl.store(Out + offs_m[:, None] * BLOCK_DMODEL + offs_d[None, :], acc)
    """)
    # nothing launches it: it opens with the values offered, checked by compiling, and says so
    rec = inspect_kernel(path, target="sm_90", sandbox=sandbox)
    assert rec.error is None, rec.error.short()
    suggested = {m["name"]: m["suggested"] for m in rec.made_up}
    assert suggested == {"BLOCK_M": "64", "BLOCK_N": "64", "BLOCK_DMODEL": "64"}
    assert "made-up values (BLOCK_M=64, BLOCK_N=64, BLOCK_DMODEL=64" in rec.stopped_note()
    assert {p.name: p.value for p in rec.parameters}["BLOCK_M"] == 64
    assert rec.resources.spill_store_bytes == 0  # compiled afresh after the check (a cached kernel has no ptxas log)
    # asked not to make them up (the guard), the error offers the same values
    asked = inspect_kernel(path, target="sm_90", sandbox=sandbox, make_up=False)
    assert asked.error is not None and asked.error.kind == "missing_constexpr"
    assert {m["name"]: m["suggested"] for m in asked.error.details["missing"]} == suggested
    assert not asked.made_up
    done = inspect_kernel(path, target="sm_90", consts=suggested, args={"Q": "fp16", "K": "fp16", "V": "fp16"},
                          sandbox=sandbox)
    assert done.error is None and not done.made_up, done.error and done.error.short()


def test_missing_constexpr_is_named(tmp_path, sandbox):
    path = write(tmp_path, "unseen.py", UNSEEN)
    rec = inspect_kernel(path, target="sm_90", consts={"BLOCK": "256"}, sandbox=sandbox, make_up=False)
    assert rec.error is not None and rec.error.kind == "missing_constexpr"
    assert "ROWS" in rec.error.message
    assert rec.error.line == 7  # the def line


HEURISTIC = """
import triton
import triton.language as tl


@triton.heuristics({"EVEN_N": lambda args: args["N"] % args["BLOCK"] == 0})
@triton.jit
def scale(x_ptr, out_ptr, N, alpha, BLOCK: tl.constexpr, EVEN_N: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if EVEN_N:
        tl.store(out_ptr + offs, tl.load(x_ptr + offs) * alpha)
    else:
        m = offs < N
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * alpha, mask=m)
"""


def test_a_heuristic_sees_the_overrides(tmp_path):
    # `--const BLOCK=1024` on a bare heuristics kernel: the heuristic reads args["BLOCK"] before
    # JITFunction.run, so the override must be in the call it sees (it was a KeyError: 'BLOCK').
    path = write(tmp_path, "heur.py", HEURISTIC)
    ptx = {}
    for n in ("4096", "4000"):
        out = subprocess.run([sys.executable, "-m", "inspector", "compile", str(path), "--target", "sm_90",
                              "--const", "BLOCK=1024", "--arg", f"N={n}", "--stage", "ttir"],
                             cwd=REPO, capture_output=True, text=True, timeout=300, env=cli_environment())
        assert out.returncode == 0, out.stderr[-2000:]
        ptx[n] = out.stdout
    # N = 4096 is a multiple of BLOCK: EVEN_N, no mask; N = 4000 is not: masked loads
    assert "arith.cmpi" not in ptx["4096"] and "arith.cmpi" in ptx["4000"]


def test_a_file_that_stops_before_the_kernel_still_defines_it_and_says_where_it_stopped(tmp_path, sandbox):
    path = write(tmp_path, "stops.py", """
        import torch
        import triton
        import triton.language as tl


        @triton.jit
        def first(x_ptr, n, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            tl.store(x_ptr + offs, tl.load(x_ptr + offs) + 1, mask=offs < n)


        x = torch.randn(64, device="cuda")
        first[(1,)](x, 64, BLOCK=64)
        print(x.tolist()[:4])


        @triton.jit
        def second(x_ptr, n, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            tl.store(x_ptr + offs, tl.load(x_ptr + offs) * 2, mask=offs < n)
    """)
    # the statements after line 15 still run (kernel_file._resume_after): `second` is defined, and
    # with no launch of it, its call is made from its signature, which needs BLOCK
    rec = inspect_kernel(path, kernel="second", sandbox=sandbox, timeout=300, make_up=False)
    assert rec.error is not None and rec.error.kind == "missing_constexpr", rec.error
    assert "BLOCK" in rec.error.message and "stopped at line 15" in rec.error.message, rec.error.message
    # by default it opens with a made-up BLOCK, and says both where the file stopped and what was made up
    rec = inspect_kernel(path, kernel="second", sandbox=sandbox, timeout=300)
    assert rec.error is None and [m["name"] for m in rec.made_up] == ["BLOCK"], rec.error
    assert "stopped at line 15" in rec.stopped_note() and "made-up values (BLOCK=" in rec.stopped_note()
    rec = inspect_kernel(path, kernel="second", consts={"BLOCK": "64"}, sandbox=sandbox, timeout=300)
    assert rec.error is None and rec.call_origin == "signature", rec.error
    assert rec.stopped["line"] == 15 and "meta tensor" in rec.stopped["message"]


def test_a_failed_compile_keeps_the_call_it_tried(tmp_path, sandbox):
    path = write(tmp_path, "fails.py", """
        import torch
        import triton
        import triton.language as tl


        @triton.jit
        def bad(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            x = tl.load(x_ptr + offs)
            tl.store(out_ptr + offs, tl.dot(x, x))


        def example(device):
            x = torch.randn(64, device=device)
            bad[(1,)](x, torch.empty_like(x), 64, BLOCK=64)
    """)
    rec = inspect_kernel(path, sandbox=sandbox, timeout=300)
    assert rec.error is not None and rec.error.kind == "compilation"
    assert {p.name: p.value for p in rec.parameters} == {"x_ptr": "float32 tensor [64]",
                                                         "out_ptr": "float32 tensor [64]", "n": 64, "BLOCK": 64}
    assert rec.grid == [1]
    out = subprocess.run([sys.executable, "-m", "inspector", "compile", str(path)], cwd=REPO, capture_output=True,
                         text=True, timeout=300, env=cli_environment())
    assert "tried (example): bad[[1]](x_ptr=float32 tensor [64]" in out.stderr


def test_unknown_override_name(sandbox):
    rec = inspect_kernel(ADD, target="sm_90", args={"m": "3"}, sandbox=sandbox)
    assert rec.error.kind == "bad_argument" and "'m'" in rec.error.message and "x_ptr" in rec.error.message


def test_unknown_target(sandbox):
    rec = inspect_kernel(ADD, target="sm_9000x", sandbox=sandbox)
    assert rec.error.kind == "unknown_target" and "gfx942" in rec.error.message


def test_syntax_error_line(tmp_path, sandbox):
    path = write(tmp_path, "broken.py", ADD.read_text().replace("mask = offs < n", "mask = offs < n)"))
    rec = inspect_kernel(path, target="sm_90", sandbox=sandbox)
    assert rec.error.kind == "syntax"
    line = ADD.read_text().splitlines().index("    mask = offs < n") + 1
    assert rec.error.line == line and rec.error.file == str(path)


def test_compilation_error_line(tmp_path, sandbox):
    src = ADD.read_text().replace("tl.store(out_ptr + offs, x + y, mask=mask)",
                                  "tl.store(out_ptr + offs, tl.does_not_exist(x) + y, mask=mask)")
    path = write(tmp_path, "bad_op.py", src)
    rec = inspect_kernel(path, target="sm_90", sandbox=sandbox)
    assert rec.error.kind == "compilation"
    assert "does_not_exist" in rec.error.message
    assert rec.error.line == src.splitlines().index(
        "    tl.store(out_ptr + offs, tl.does_not_exist(x) + y, mask=mask)") + 1


def test_error_in_inlined_helper_points_into_the_helper(tmp_path, sandbox):
    path = write(tmp_path, "helper.py", """
        import triton
        import triton.language as tl


        @triton.jit
        def helper(x):
            return x * tl.undefined_thing


        @triton.jit
        def k(x_ptr, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            tl.store(x_ptr + offs, helper(tl.load(x_ptr + offs)))
        """)
    rec = inspect_kernel(path, target="sm_90", consts={"BLOCK": "128"}, sandbox=sandbox)
    assert rec.error.kind == "compilation"
    assert rec.error.line == 8
    assert rec.kernel == "k"  # the entry kernel, not the helper it calls


def test_import_time_exception_line(tmp_path, sandbox):
    path = write(tmp_path, "raises.py", "import triton\n\nx = 1\nraise RuntimeError('boom at import')\n")
    rec = inspect_kernel(path, target="sm_90", sandbox=sandbox)
    assert rec.error.kind == "import" and rec.error.line == 4 and "boom at import" in rec.error.message


def test_no_kernel(tmp_path, sandbox):
    path = write(tmp_path, "empty.py", "x = 1\n")
    rec = inspect_kernel(path, target="sm_90", sandbox=sandbox)
    assert rec.error.kind == "no_kernel"


MATMUL_TILE = fuzz_cases.TILE


def test_shared_memory_beyond_the_target_is_out_of_resources(tmp_path, sandbox):
    path = write(tmp_path, "tile.py", MATMUL_TILE)
    big = {"BM": "128", "BN": "128", "BK": "128"}  # 64 KB of tiles a stage: 4 stages pass sm_86's 99 KB
    args = {"a_ptr": "fp16", "b_ptr": "fp16"}
    rec = inspect_kernel(path, target="sm_86", consts=big, args=args, options={"num_stages": "4"}, sandbox=sandbox)
    assert rec.error is not None and rec.error.kind == "out_of_resources", rec.error
    assert rec.error.details["limit"] == 99 * 1024
    assert rec.error.details["required"] == rec.resources.shared_bytes > 99 * 1024
    assert "Required" in rec.error.message and "Hardware limit" in rec.error.message
    assert "ptx" in rec.stages  # the stages are still there to look at
    ok = inspect_kernel(path, target="sm_90", consts=big, args=args, options={"num_stages": "2"}, sandbox=sandbox)
    assert ok.error is None and 48 * 1024 < ok.resources.shared_bytes <= 227 * 1024


AUTOTUNED = """
import torch
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"BLOCK": 256}, num_warps=2),
                          triton.Config({"BLOCK": 1024}, num_warps=8, num_stages=2)], key=["n"])
@triton.heuristics({"EVEN": lambda args: args["n"] % args["BLOCK"] == 0})
@triton.jit
def scaled(x_ptr, out_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if EVEN:
        tl.store(out_ptr + offs, tl.load(x_ptr + offs) * 2)
    else:
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


def example(device):
    x = torch.randn(8192, device=device)
    out = torch.empty_like(x)
    grid = lambda meta: (triton.cdiv(x.numel(), meta["BLOCK"]),)
    scaled[grid](x, out, x.numel())
"""


def test_autotuned_kernel_configs(tmp_path, sandbox):
    path = write(tmp_path, "tuned.py", AUTOTUNED)
    first = inspect_kernel(path, target="sm_90", sandbox=sandbox)
    assert first.error is None, first.error and first.error.short()
    assert [c["BLOCK"] for c in first.autotune_configs] == [256, 1024]
    assert first.autotune_index == 0 and first.resources.num_warps == 2 and first.grid == [32]
    second = inspect_kernel(path, target="sm_90", autotune_index=1, sandbox=sandbox)
    assert second.resources.num_warps == 8 and second.resources.num_stages == 2 and second.grid == [8]
    even = next(p for p in second.parameters if p.name == "EVEN")
    assert even.value is True  # the heuristic ran on the example's n
    bad = inspect_kernel(path, target="sm_90", autotune_index=5, sandbox=sandbox)
    assert bad.error.kind == "bad_argument" and "2 configs" in bad.error.message


def test_passes_are_captured_by_name(sandbox):
    rec = inspect_kernel(ADD, target="sm_90", passes=True, sandbox=sandbox)
    assert rec.error is None and rec.passes
    names = {s.name.split(" ", 1)[1] for s in rec.passes}
    assert any(n.startswith("TritonGPUCoalesce") for n in names)
    assert any(n.startswith("InstCombine") for n in names)
    assert {s.dialect for s in rec.passes} >= {"mlir", "llvm"}
    coalesce_after = [i for i, s in enumerate(rec.passes) if "TritonGPUCoalesce" in s.name]
    # each snapshot is named for the pass that made it: the layout change is the coalescing pass's
    assert all(s.name.startswith(("after ", "input to ")) for s in rec.passes)
    coalesced = next(s for s in rec.passes if s.changed and "ttg.convert_layout" in s.ir)
    assert coalesced.name == "after TritonGPUCoalesce", coalesced.name
    changed = [s for s in rec.passes if s.changed]
    assert changed and all(s.ir for s in changed) and all(not s.ir for s in rec.passes if not s.changed)
    assert coalesce_after


def test_cache_hit_is_served_without_compiling(tmp_path, sandbox):
    from inspector.compile.cache import Cache

    store = Cache(tmp_path / "c")
    first = inspect_kernel(ADD, target="sm_80", cache=store, sandbox=sandbox)
    again = inspect_kernel(ADD, target="sm_80", cache=store, sandbox=sandbox)
    assert not first.cached and again.cached
    assert again.stages == first.stages and again.resources == first.resources
    other = inspect_kernel(ADD, target="sm_80", options={"num_warps": "8"}, cache=store, sandbox=sandbox)
    assert not other.cached and other.resources.num_warps == 8


def test_no_cache_compiles_again_and_stores_the_result(tmp_path, sandbox):
    from inspector.compile.cache import Cache

    store = Cache(tmp_path / "c")
    fresh = inspect_kernel(ADD, target="sm_80", cache=store, sandbox=sandbox, use_cache=False)
    assert not fresh.cached
    assert store.get(fresh.cache_key) is not None  # written although not read
    again = inspect_kernel(ADD, target="sm_80", cache=store, sandbox=sandbox)
    assert again.cached and again.stages == fresh.stages
    forced = inspect_kernel(ADD, target="sm_80", cache=store, sandbox=sandbox, use_cache=False)
    assert not forced.cached


def test_amd_resources(sandbox):
    rec = inspect_kernel(ADD, target="gfx950", sandbox=sandbox)
    assert rec.error is None
    r = rec.resources
    assert r.vgprs > 0 and r.sgprs > 0 and r.agprs == 0 and r.lds_bytes == 0 and r.scratch_bytes == 0
    assert rec.warp_size == 64 and r.threads == 64 * r.num_warps
    assert re.search(r"(global|buffer)_load_dwordx4", rec.stages["amdgcn"])  # 128-bit loads


def run_cli(*args: str, check: bool = False) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "inspector", *args], capture_output=True, text=True, cwd=REPO,
                          check=check)


def test_cli_compile_json_and_stage(tmp_path):
    out = run_cli("compile", str(ADD), "--target", "sm_90", "--json", check=True)
    rec = json.loads(out.stdout)
    for key in ("kernel", "target", "triton_version", "stages", "resources", "compile_seconds", "error"):
        assert key in rec
    assert rec["error"] is None and rec["kernel"] == "add_kernel" and rec["target"] == "sm_90"
    assert {"registers", "spills", "shared_bytes", "local_bytes"} <= set(rec["resources"])
    ptx = run_cli("compile", str(ADD), "--arg", "n=4095", "--stage", "ptx", check=True).stdout
    assert "ld.global.b32" in ptx and "ld.global.v4" not in ptx
    amd = json.loads(run_cli("compile", str(ADD), "--target", "gfx942", "--json", check=True).stdout)
    assert {"vgprs", "sgprs", "lds_bytes", "scratch_bytes"} <= set(amd["resources"])
    run_cli("compile", str(ADD), "--out", str(tmp_path / "o"), "--passes", check=True)
    assert (tmp_path / "o" / "add_kernel.sass").read_text().count("LDG") >= 2
    assert any((tmp_path / "o" / "passes").iterdir())


def test_cli_error_exit_status(tmp_path):
    path = write(tmp_path, "broken.py", "import triton\n\n@triton.jit\ndef k(x_ptr:\n    pass\n")
    out = run_cli("compile", str(path))
    assert out.returncode == 1
    assert f"{path}:4:" in out.stderr and "syntax" in out.stderr
    js = run_cli("compile", str(path), "--json")
    assert js.returncode == 1 and json.loads(js.stdout)["error"]["line"] == 4


def test_cli_targets():
    out = run_cli("targets", "--json", check=True)
    info = json.loads(out.stdout)
    for t in ("sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120", "gfx942", "gfx950"):
        assert t in info["buildable"]
    assert info["native"] is None or info["native"].startswith(("sm_", "gfx"))


def test_record_carries_occupancy_on_its_target(sandbox):
    from inspector.occupancy import triton_occupancy

    rec = inspect_kernel(ADD, target="sm_90", options={"num_warps": "8"}, sandbox=sandbox)
    direct = triton_occupancy("sm_90", 8, rec.resources.registers, rec.resources.shared_bytes)
    assert rec.occupancy["blocks_per_sm"] == direct.blocks_per_sm == 8
    assert rec.occupancy["limiters"] == direct.limiters
    assert rec.occupancy["waves"]["grid_blocks"] == 4
    amd = inspect_kernel(ADD, target="gfx942", sandbox=sandbox)
    assert amd.occupancy["backend"] == "hip" and amd.occupancy["blocks_per_sm"] > 0


def test_spills_and_local_memory(sandbox):
    spill = KERNELS / "register_spill.py"
    big = inspect_kernel(spill, target="sm_90", consts={"BLOCK_N": "32768"}, sandbox=sandbox)
    r = big.resources
    assert r.registers == 255 and r.spill_store_bytes > 0 and r.spill_load_bytes > 0
    assert r.local_bytes >= r.spill_store_bytes and r.spills == r.local_bytes // 4
    assert "STL" in big.stages["sass"] and "LDL" in big.stages["sass"]
    small = inspect_kernel(spill, target="sm_90", consts={"BLOCK_N": "4096"}, sandbox=sandbox)
    assert small.resources.local_bytes == 0 and small.resources.spill_store_bytes == 0
    assert "STL" not in small.stages["sass"]


def test_registers_and_stack_from_ptxas_are_the_cubins(sandbox):
    """A cubin of one function gets its registers and stack frame from ptxas's -v log, without
    cuobjdump: for every bundled NVIDIA kernel (and one that spills) they are what cuobjdump
    reads back from the cubin."""
    import base64

    from inspector.backends import nvidia

    cases = [(p, {}) for p in sorted(KERNELS.glob("[!_]*.py"))]
    cases.append((KERNELS / "register_spill.py", {"BLOCK_N": "32768"}))
    checked = []
    for path, consts in cases:
        rec = inspect_kernel(path, target="sm_90", consts=consts, sandbox=sandbox, defer=("sass",),
                             use_cache=False)
        assert rec.error is None, (path.name, rec.error.short())
        usage = nvidia.cubin_resource_usage(base64.b64decode(rec.binary))
        assert rec.resources.source == "ptxas", (path.name, rec.resources.source)
        assert rec.resources.registers == usage["regs"], path.name
        assert rec.resources.local_bytes == usage["stack"] + usage["local"], path.name
        checked.append(rec.resources.local_bytes)
    assert len(checked) == len(cases) and max(checked) > 0  # the spilling one has a stack frame


NOINLINE_HELPER = """
import torch
import triton
import triton.language as tl


@triton.jit(noinline=True)
def helper(a, b):
    return a * b + 1


@triton.jit
def kern(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    s = helper(tl.load(x_ptr), tl.load(x_ptr + 1))
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) + s)


def example(device):
    x = torch.randn(256, device=device)
    kern[(1,)](x, torch.empty_like(x), BLOCK=256)
"""


def test_a_kernel_with_a_noinline_helper_is_read_from_the_cubin(sandbox, tmp_path):
    """Two functions in the cubin (the kernel's local memory includes its callees' frames): ptxas's
    per-function figures are not the kernel's, so cuobjdump reads the cubin."""
    path = tmp_path / "noinline.py"
    path.write_text(NOINLINE_HELPER)
    rec = inspect_kernel(path, target="sm_90", sandbox=sandbox, use_cache=False)
    assert rec.error is None, rec.error.short()
    assert rec.resources.source == "cubin+ptxas" and rec.resources.registers > 0
    assert "CALL" in rec.stages["sass"]  # the helper really is a function of its own
    from inspector.backends import nvidia

    with pytest.raises(subprocess.CalledProcessError, match="cuobjdump"):  # a failure still raises
        nvidia.start_resource_usage(b"not a cubin")()


def test_amd_registers_and_lds_of_a_dot(sandbox):
    """CDNA: `.vgpr_count` is architectural VGPRs plus AGPRs; Triton's LDS is dynamic."""
    rec = inspect_kernel(KERNELS / "matmul.py", target="gfx942", sandbox=sandbox)
    assert rec.error is None
    r = rec.resources
    total = int(re.search(r"\.vgpr_count:\s+(\d+)", rec.stages["amdgcn"]).group(1))
    assert r.vgprs + r.agprs == total
    assert r.lds_bytes == r.shared_bytes > 0
    waves = int(re.search(r"; Occupancy: (\d+)", rec.stages["amdgcn"]).group(1))
    assert rec.occupancy["waves_per_simd_by_registers"] == waves


def test_the_native_gpu_answer_is_kept_per_boot_and_driver(tmp_path, monkeypatch):
    """`--target native` asks a worker about the GPU once per boot and driver; later processes (a
    CLI call each) read the answer from the cache on disk. Without a GPU device node nothing is
    asked at all."""
    from inspector.compile import api
    from inspector.compile.cache import Cache

    class Box:  # the worker's side of the question, counted
        python = sys.executable
        asked = 0

        def run(self, request, limits):
            assert request == {"kind": "native"}
            Box.asked += 1
            return {"available": True, "target": "sm_90", "properties": {"name": "NVIDIA H200"}}

    store = Cache(tmp_path / "c")
    monkeypatch.setattr(api, "GPU_DEVICE_NODES", (str(tmp_path / "missing"),))
    assert api.native_gpu(Box(), store)["available"] is False and Box.asked == 0
    node = tmp_path / "nvidiactl"
    node.write_text("")
    monkeypatch.setattr(api, "GPU_DEVICE_NODES", (str(node),))
    for _ in range(2):  # two processes: the in-memory answer is gone between them
        api._native_cache.clear()
        assert api.native_gpu(Box(), store)["properties"]["name"] == "NVIDIA H200"
    assert Box.asked == 1
    monkeypatch.setattr(api, "_DRIVER_VERSIONS", (str(tmp_path / "new-driver"),))
    (tmp_path / "new-driver").write_text("580.200")
    api._native_cache.clear()
    api.native_gpu(Box(), store)
    assert Box.asked == 2  # a driver update asks again
    api._native_cache.clear()


def test_a_stored_native_answer_is_read_without_making_the_sandbox(tmp_path):
    """A native cache hit asks which GPU this is from the stored answer, under the Python the
    default sandbox runs, without importing the sandbox (half of such a hit's imports)."""
    import subprocess

    from paths import REPO

    node = tmp_path / "nvidiactl"
    node.write_text("")
    code = f"""
import os, sys
from inspector.compile import api
from inspector.compile.cache import Cache
api.GPU_DEVICE_NODES = ({str(node)!r},)
store = Cache({str(tmp_path / "c")!r})
store.put(api._native_key(os.path.abspath(sys.executable)), {{"available": True, "target": "sm_90"}})
print(api.native_gpu(None, store)["target"], sorted(m for m in sys.modules if m.startswith("inspector.isolation")))
"""
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert out.stdout.split() == ["sm_90", "[]"], out.stdout + out.stderr[-2000:]


def test_sass_deferred_until_asked_then_cached(tmp_path, sandbox):
    """defer=("sass",) leaves nvdisasm out of the compile; complete() makes the same SASS later
    (in the sandbox) and stores it, so the next hit has it; a caller that did not defer gets it."""
    from inspector.compile.api import complete
    from inspector.compile.cache import Cache

    cache = Cache(str(tmp_path / "cache"))
    full = inspect_kernel(ADD, target="sm_90", sandbox=sandbox, use_cache=False, cache=Cache(str(tmp_path / "c2")))
    rec = inspect_kernel(ADD, target="sm_90", sandbox=sandbox, cache=cache, defer=("sass",))
    assert rec.error is None and rec.deferred == ["sass"] and "sass" not in rec.stages and rec.binary
    assert rec.stages["ptx"] == full.stages["ptx"] and rec.resources.registers == full.resources.registers
    hit = inspect_kernel(ADD, target="sm_90", sandbox=sandbox, cache=cache, defer=("sass",))
    assert hit.cached and hit.deferred == ["sass"]
    complete(hit, sandbox=sandbox, cache=cache)
    assert hit.deferred == [] and hit.binary == "" and hit.stages["sass"] == full.stages["sass"]
    again = inspect_kernel(ADD, target="sm_90", sandbox=sandbox, cache=cache, defer=("sass",))
    assert again.cached and again.deferred == [] and again.stages["sass"] == full.stages["sass"]
    # A record cached with SASS deferred is completed for a caller that wants every stage.
    cache2 = Cache(str(tmp_path / "cache3"))
    inspect_kernel(ADD, target="sm_90", sandbox=sandbox, cache=cache2, defer=("sass",))
    whole = inspect_kernel(ADD, target="sm_90", sandbox=sandbox, cache=cache2)
    assert whole.cached and whole.deferred == [] and whole.stages["sass"] == full.stages["sass"]
    amd = inspect_kernel(ADD, target="gfx942", sandbox=sandbox, cache=cache, defer=("sass",))
    assert amd.deferred == [] and "amdgcn" in amd.stages  # nothing of AMD's is made later


def test_cli_prints_ptx_without_sass_and_sass_when_asked(tmp_path):
    """The CLI makes SASS only when it prints or writes it; asking later completes the cached record."""
    env = {**os.environ, "TRITON_INSPECTOR_HOME": str(tmp_path / "home")}
    first = subprocess.run([sys.executable, "-m", "inspector", "compile", str(ADD)], capture_output=True,
                           text=True, cwd=REPO, env=env, check=True)
    assert ".visible .entry add_kernel" in first.stdout
    sass = subprocess.run([sys.executable, "-m", "inspector", "compile", str(ADD), "--stage", "sass"],
                          capture_output=True, text=True, cwd=REPO, env=env, check=True)
    assert "(cached)" in sass.stderr and "LDG.E.128" in sass.stdout
    js = json.loads(subprocess.run([sys.executable, "-m", "inspector", "compile", str(ADD), "--json"],
                                   capture_output=True, text=True, cwd=REPO, env=env, check=True).stdout)
    assert js["cached"] and js["deferred"] == [] and "LDG.E.128" in js["stages"]["sass"]


def test_worker_manager_serves_before_it_is_warm(tmp_path):
    """The zygote answers as soon as torch and Triton are imported, warms between requests, and
    says when it is warm; a request sent at once is not held behind the warming."""
    from inspector.isolation.sandbox import Sandbox

    box = Sandbox(warm_up_worker=True)
    try:
        assert box.warm_up() is False  # ready, not yet warm
        rec = inspect_kernel(ADD, target="sm_90", sandbox=box, use_cache=False, defer=("sass",))
        assert rec.error is None
        assert box.warm_up(complete=True, timeout=300) is True
        rec = inspect_kernel(ADD, target="gfx942", sandbox=box, use_cache=False)
        assert rec.error is None
    finally:
        box.close()


def test_a_command_that_cannot_load_says_so(monkeypatch, capsys):
    # a command module failing to import is listed and explains itself, never dropped silently
    import importlib

    from inspector.cli import dispatch as cli

    real = importlib.import_module

    def failing(name, package=None):
        if name == ".pool":
            raise ImportError("No module named 'somedep'")
        return real(name, package)

    monkeypatch.setattr(cli.importlib, "import_module", failing)
    parser = cli.build_parser(["pool", "status"])
    ns = parser.parse_args(["pool", "status"])
    assert ns.func(ns) == 2
    assert "the pool command cannot load (ImportError: No module named 'somedep')" in capsys.readouterr().err


def test_the_command_line_prints_stages_without_directives_unless_raw():
    quiet = run_cli("compile", str(ADD), "--stage", "ptx", check=True).stdout
    raw = run_cli("compile", str(ADD), "--stage", "ptx", "--raw", check=True).stdout
    assert ".loc" in raw and ".section\t.debug" in raw
    assert ".loc" not in quiet and "debug" not in quiet and "//" not in quiet
    assert "ld.global.v4.b32" in quiet and ".entry add_kernel" in quiet
    assert len(quiet.splitlines()) < len(raw.splitlines()) / 2


def test_a_long_compile_says_it_goes_on(capsys):
    """The command line's progress line (cli.options.still_working), written while the work goes
    on, with how long so far and the limit."""
    import threading

    from inspector.cli.options import still_working

    said = ""
    with still_working("compiling k.py for sm_90", limit=300, every=0.01):
        for _ in range(3000):  # polls the state (what was written), up to 30 s on a loaded machine
            said += capsys.readouterr().err
            if "still compiling k.py for sm_90" in said:
                break
            threading.Event().wait(0.01)
    assert "still compiling k.py for sm_90" in said and "the limit is 300 s" in said, said


def test_the_record_says_what_the_files_own_launch_passed(tmp_path):
    """`Parameter.given`: the file's own value beside the compiled one (the page drops an override
    whose basis this changes); a launch that leaves an argument out gets a suggested value."""
    rec = inspect_kernel(KERNELS / "add.py", target="sm_90", args={"n": "1000"})
    n = next(p for p in rec.parameters if p.name == "n")
    assert (n.value, n.given) == (1000, 4096)
    left_out = write(tmp_path, "left_out.py", (KERNELS / "add.py").read_text().replace(
        "(x, y, out, n, BLOCK=BLOCK)", "(x, y, out, BLOCK=BLOCK)"))
    rec = inspect_kernel(left_out, target="sm_90")
    assert rec.error.kind == "bad_argument" and rec.error.details["at_launch"]
    assert rec.error.details["missing"] == [{"name": "n", "kind": "argument", "suggested": "4096"}]
    assert next(p for p in rec.parameters if p.name == "n").given is None
    bare = inspect_kernel(KERNELS / "add.py", target="sm_90", kernel="add_kernel", args={"n": "64"})
    assert all(p.given is not None for p in bare.parameters)  # the example's launch of that kernel


SKIPPED_DEFAULT = """
import torch
import triton
import triton.language as tl


@triton.jit
def scale(x_ptr, n, POLICY: tl.constexpr = "", DOUBLE: tl.constexpr = False, BLOCK: tl.constexpr = 128):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, eviction_policy=POLICY)
    if DOUBLE:
        x = x * 2
    tl.store(x_ptr + offs, x, mask=offs < n)


def example(device):
    x = torch.empty(128, device=device)
    scale[(1,)](x, 128, DOUBLE=True)
"""


def test_a_parameter_the_call_leaves_to_its_default_keeps_it(tmp_path, sandbox):
    """A call that skips a defaulted parameter and names a later one: the later value stays in its
    own place (it slid into POLICY's, and Triton refused `True` as an eviction policy: gemlite's gemv)."""
    rec = inspect_kernel(write(tmp_path, "skipped.py", SKIPPED_DEFAULT), target="sm_90", sandbox=sandbox,
                         use_cache=False)
    assert rec.error is None, rec.error and rec.error.short()
    assert "mul" in rec.stages["ttir"]  # DOUBLE=True compiled in


CUDA_LIBDEVICE = '''import torch
import triton
import triton.language as tl

tanh = tl.extra.cuda.libdevice.tanh


@triton.jit
def soft_cap(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tanh(tl.load(x_ptr + offs, mask=mask)), mask=mask)


def example():
    x = torch.randn(4096, device="cuda")
    out = torch.empty_like(x)
    soft_cap[(4,)](x, out, x.numel(), BLOCK=1024)
'''


def test_cuda_libdevice_on_an_amd_target_names_its_line_and_what_to_call(tmp_path, sandbox):
    """Triton's AMD backend names only `__nv_tanhf`; the error names the line that calls it, says a
    launch on AMD fails the same way, and tries no other release (each refuses it)."""
    path = tmp_path / "soft_cap.py"
    path.write_text(CUDA_LIBDEVICE)
    assert inspect_kernel(path, target="sm_90", sandbox=sandbox, use_cache=False).ok
    rec = inspect_kernel(path, target="gfx942", sandbox=sandbox, use_cache=False)
    assert not rec.ok and rec.error.kind == "compilation"
    assert rec.error.line == 5 and rec.error.file == str(path)
    assert rec.error.details["cuda_libdevice"] == "__nv_tanhf"
    assert "`tl.extra.libdevice.tanh`" in rec.error.message and "AMD GPU fails the same way" in rec.error.message
    assert "installed beside it" not in rec.error.message
