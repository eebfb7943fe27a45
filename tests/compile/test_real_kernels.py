"""Real kernel files go in as they are: published library ops (tests/fixtures/published/first_four_projects, kept byte for byte),
tutorial-style files, pytest-style files, wrappers that read the device, bare kernels."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from inspector.compile.api import inspect_kernel
from paths import cli_environment

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "tests" / "fixtures" / "published" / "first_four_projects"
FORMS = REPO / "tests" / "fixtures" / "kernel_file_forms"
MANIFEST = json.loads((CORPUS / "MANIFEST.json").read_text())
TARGETS = ("sm_90", "gfx942")

# Files whose packages import GPU-free with torch and Triton alone (see tests/fixtures/published/first_four_projects/README.md for
# what the others need: unsloth_zoo, bitsandbytes, transformers; sqlalchemy, PyYAML).
RUNNABLE = [e for e in MANIFEST if e.get("imports_gpu_free")]
# Files the inspector does not yet take as published, and why (strict: a fix must remove the entry).
KNOWN_GAPS: dict[str, str] = {}


def _case(entry: dict):
    name = entry["file"].rsplit("/", 1)[1]
    marks = [pytest.mark.xfail(strict=True, reason=KNOWN_GAPS[name])] if name in KNOWN_GAPS else []
    return pytest.param(entry, id=name, marks=marks)


def _cli(*args: str, env: dict | None = None, timeout: int = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "inspector", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=REPO, env=cli_environment(**(env or {})))


def test_corpus_is_kept_as_published():
    for entry in MANIFEST:
        assert hashlib.sha256((CORPUS / entry["file"]).read_bytes()).hexdigest() == entry["sha256"], entry["file"]
    assert len(MANIFEST) >= 12 and len({e["project"] for e in MANIFEST}) >= 3


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("entry", [_case(e) for e in RUNNABLE])
def test_corpus_file_compiles_unedited_with_the_cli(entry, target, tmp_path):
    path = str(CORPUS / entry["file"])
    extra: list[str] = []
    if entry["form"] == "bare":  # the file gives no call: it opens with made-up constexprs, each named
        extra = ["--kernel", entry["entry"]]
        proc = _cli("compile", path, "--target", target, "--json", *extra)
        assert proc.returncode == 0, proc.stderr[-3000:]
        made = json.loads(proc.stdout)["made_up"]
        assert made and all(m["kind"] == "constexpr" for m in made)
        assert "compiled with made-up constexprs" in json.loads(proc.stdout)["log"]
        for m in made:  # the values real code passes (the manifest's), as --const
            extra += ["--const", f"{m['name']}={entry['probe_args'][m['name']]}"]
    out = tmp_path / "record.json"
    proc = _cli("compile", path, "--target", target, "--json", *extra)
    assert proc.returncode == 0, proc.stderr[-3000:] + proc.stdout[-2000:]
    out.write_text(proc.stdout)
    rec = json.loads(proc.stdout)
    assert rec["error"] is None
    stage = "ptx" if target.startswith("sm") else "amdgcn"
    assert rec["stages"][stage]
    if entry["form"] == "package":  # the file's own wrapper made the call: no value was given
        assert rec["kernel"] == entry["entry"], rec["kernel"]
        assert rec["call_origin"] not in ("signature", ""), rec["call_origin"]
    assert (rec["occupancy"] or {}).get("blocks_per_sm", 0) > 0


def test_a_wrapper_picks_its_settings_for_the_targets_vendor(sandbox):
    """torch.version.hip and the device's SM count answer as the target's GPU would."""
    nv = inspect_kernel(FORMS / "vendor_wrapper.py", target="sm_90", sandbox=sandbox)
    amd = inspect_kernel(FORMS / "vendor_wrapper.py", target="gfx942", sandbox=sandbox)
    assert nv.error is None and amd.error is None, (nv.error, amd.error)
    assert nv.call_origin == amd.call_origin == "gelu_forward"
    assert nv.resources.num_warps == 4 and amd.resources.num_warps == 16
    assert nv.grid == [132] and amd.grid == [304]  # H100 SMs, MI300X CUs: the catalogue's parts
    assert amd.occupancy["blocks_per_sm"] > 0


def test_tutorial_launching_at_module_level_with_device_properties(sandbox):
    path = FORMS / "tutorial_module_level.py"
    rec = inspect_kernel(path, target="sm_90", sandbox=sandbox)
    assert rec.error is None, rec.error
    assert rec.call_origin == "file" and rec.kernel == "row_softmax"
    # The run stopped at the check that needs real data, after the launch.
    line = next(i for i, t in enumerate(path.read_text().splitlines(), 1) if "torch.allclose" in t)
    assert rec.stopped["line"] == line and ".item()" in rec.stopped["message"]
    # The grid came from the real launch, sized from n_regs and the device's properties.
    per_sm = 65536 // (rec.resources.registers * 32 * 8)
    assert rec.grid == [min(132 * per_sm, 1823), 1, 1]
    assert [p.value for p in rec.parameters][:2] == ["float32 tensor [1823, 781]"] * 2


def test_tutorial_main_block_runs_its_benchmark_first_configuration(sandbox):
    rec = inspect_kernel(FORMS / "tutorial_main_benchmark.py", target="gfx942", sandbox=sandbox)
    assert rec.error is None, rec.error
    assert rec.kernel == "scale_kernel" and rec.call_origin == "file"
    values = {p.name: p.value for p in rec.parameters}
    assert values["x_ptr"] == "float16 tensor [4096]" and values["n"] == 4096  # the first x value
    assert rec.grid == [8]


def test_pytest_style_test_gives_the_call(sandbox):
    rec = inspect_kernel(FORMS / "pytest_style.py", target="sm_90", sandbox=sandbox)
    assert rec.error is None, rec.error
    assert rec.call_origin == "test_axpy"
    values = {p.name: p.value for p in rec.parameters}
    assert values["X"] == "bfloat16 tensor [3000]" and values["n"] == 3000


def test_bare_kernel_pointers_found_from_use_and_missing_values_named_once(sandbox):
    path = FORMS / "bare_kernel.py"
    rec = inspect_kernel(path, target="sm_90", sandbox=sandbox, make_up=False)
    assert rec.error is not None and rec.error.kind == "missing_constexpr"
    assert [m["name"] for m in rec.error.details["missing"]] == ["BLOCK", "HAS_BIAS"]
    assert "--const" not in rec.error.message  # words for the app; the CLI adds its flags
    rec = inspect_kernel(path, target="sm_90", consts={"BLOCK": 1024, "HAS_BIAS": True}, sandbox=sandbox)
    assert rec.error is None, rec.error
    kinds = {p.name: p.kind for p in rec.parameters}
    assert [n for n, k in kinds.items() if k == "pointer"] == ["X", "W", "B", "R", "Out"]
    assert kinds["stride"] == kinds["n_cols"] == kinds["eps"] == "scalar"
    proc = _cli("compile", str(path), "--target", "sm_90")  # by default: opened with both made up
    assert proc.returncode == 0
    assert "made-up values (BLOCK=1024, HAS_BIAS=False; checked by compiling)" in proc.stderr


@pytest.mark.parametrize("kernel", [None, "_rms_norm_backward_kernel"])  # the second: a dtype constexpr
def test_reproducer_compiles_to_the_same_kernel(sandbox, tmp_path, kernel):  # between positional arguments
    entry = next(e for e in RUNNABLE if e["file"].endswith("liger_kernel/ops/rms_norm.py"))
    rec = inspect_kernel(CORPUS / entry["file"], kernel=kernel, target="sm_90", sandbox=sandbox)
    assert rec.error is None and rec.reproducer
    repro = tmp_path / "rms_norm_repro.py"
    repro.write_text(rec.reproducer)
    again = inspect_kernel(repro, target="sm_90", sandbox=sandbox)
    assert again.error is None, again.error
    assert again.call_origin == "example"
    # Equal but for source locations (another file, other lines).
    strip = lambda ir: [l for l in ir.splitlines() if not l.startswith("#loc") and "## File" not in l]  # noqa: E731
    assert strip(again.stages["ttgir"]) == strip(rec.stages["ttgir"])
    assert strip(again.stages["sass"]) == strip(rec.stages["sass"])
    assert again.resources.registers == rec.resources.registers


def test_a_kernel_named_by_module(tmp_path):
    src = CORPUS / "liger_kernel" / "src"
    proc = _cli("compile", "liger_kernel.ops.softmax", "--target", "sm_90", "--json",
                env={"PYTHONPATH": f"{src}{os.pathsep}{REPO}"})
    assert proc.returncode == 0, proc.stderr[-2000:]
    rec = json.loads(proc.stdout)
    assert rec["file"] == str(src / "liger_kernel" / "ops" / "softmax.py") and rec["error"] is None


def test_root_makes_a_namespace_package_import(tmp_path, sandbox):
    proj = tmp_path / "proj"
    (proj / "kern").mkdir(parents=True)
    (proj / "kern" / "consts.py").write_text("BLOCK = 256\n")
    (proj / "kern" / "op.py").write_text(
        "import triton, triton.language as tl\nfrom kern.consts import BLOCK\n\n"
        "@triton.jit\ndef k(X, n, B: tl.constexpr):\n    i = tl.arange(0, B)\n"
        "    tl.store(X + i, tl.load(X + i, mask=i < n), mask=i < n)\n\n"
        "def example(device):\n    import torch\n    k[(1,)](torch.empty(BLOCK, device=device), BLOCK, B=BLOCK)\n")
    # Named from a folder that is not the project root: `kern` is not importable without --root.
    without = inspect_kernel(proj / "kern" / "op.py", target="sm_90", sandbox=sandbox)
    assert without.error is not None and "kern" in without.error.message
    rec = inspect_kernel(proj / "kern" / "op.py", target="sm_90", root=proj, sandbox=sandbox)
    assert rec.error is None, rec.error
    assert {p.name: p.value for p in rec.parameters}["B"] == 256


def test_a_kernel_that_cannot_launch_exits_1():
    proc = _cli("compile", str(REPO / "kernels" / "add.py"), "--target", "gfx942", "--num-warps", "32")
    assert proc.returncode == 1
    assert "not launchable on gfx942" in proc.stderr


def test_a_kernel_behind_a_library_launch_cache_and_an_axis_argument(sandbox):
    """A KernelInterface of the library's own wrapping Triton's autotuner is found and launched by its
    wrapper (which needs an axis that is not the last one and a shape list)."""
    rec = inspect_kernel(FORMS / "library_entry.py", kernel="sum_over_middle", target="sm_90", sandbox=sandbox)
    assert rec.error is None, rec.error
    assert rec.call_origin == "sum_dim" and rec.autotune_configs and rec.autotune_index == 0
    # dim 0 of a [1024, 4096] tensor: one row M, K = 4096 columns in tiles of the first config's 32.
    assert list(rec.grid[:2]) == [1, 4096 // 32], rec.grid


def test_a_failed_wrapper_call_is_named_in_the_advice(sandbox):
    path = FORMS / "library_entry.py"
    rec = inspect_kernel(path, kernel="never_launched", target="sm_90", sandbox=sandbox, make_up=False)
    assert rec.error is not None and rec.error.kind == "missing_constexpr"
    line = next(i for i, t in enumerate(path.read_text().splitlines(), 1) if "table[x]" in t)
    assert f"double() stopped at line {line}: KeyError" in rec.error.message, rec.error.message
    assert [m["name"] for m in rec.error.details["missing"]] == ["BLOCK"]
    opened = inspect_kernel(path, kernel="never_launched", target="sm_90", sandbox=sandbox)  # made up, by default
    assert opened.error is None and [m["name"] for m in opened.made_up] == ["BLOCK"]
    assert f"double() stopped at line {line}: KeyError" in opened.log  # what ran, in the note


def test_a_wrapper_argument_named_like_a_scalar_that_the_kernel_loads_from(tmp_path, sandbox):
    # `alpha` reads as a float by its name, but the kernel loads from what it is passed as:
    # the made-up call gives it a tensor (it was "Unsupported ptr type triton.language.float32")
    pkg = tmp_path / "mylib"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "axpy.py").write_text('''import torch
import triton
import triton.language as tl


@triton.jit
def _axpy_kernel(X, Y, Alpha, N, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < N
    a = tl.load(Alpha)
    tl.store(Y + offs, a * tl.load(X + offs, mask=m) + tl.load(Y + offs, mask=m), mask=m)


def axpy(x: torch.Tensor, y: torch.Tensor, alpha):
    n = x.numel()
    _axpy_kernel[(triton.cdiv(n, 1024),)](x, y, alpha, n, BLOCK=1024)
    return y
''')
    rec = inspect_kernel(pkg / "axpy.py", root=tmp_path, target="sm_90", sandbox=sandbox)
    assert rec.error is None, rec.error and rec.error.short()
    assert rec.call_origin == "axpy"
    assert {p.name: p.kind for p in rec.parameters}["Alpha"] == "pointer"
