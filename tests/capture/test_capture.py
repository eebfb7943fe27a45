"""Capturing a real run (inspector.capture), GPU-free: a program launching three kernels (one
autotuned, one calling a helper module, one launched many times) runs under Triton's CPU
interpreter through `python -m inspector capture`; the capture lists them with their launch
counts and specialisations; each reopens for sm_90 and gfx942 with the registers of a direct
compile of the same launch; its standalone file compiles and runs on its own. A trace written by
the real tritonparse package opens to the same table.
"""

from __future__ import annotations

import ast
import gzip
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from capture_support import PROGRAM, capture_program
from paths import REPO, cli_environment

from inspector.capture import CaptureFileError, load, loads
from inspector.capture.reopen import reopen, write_standalone
from inspector.capture.table import find, rows
from inspector.compile.api import inspect_kernel

ROOT = REPO
STEPS = 25


def _run(cmd: list[str], env: dict[str, str] | None = None, cwd: Path = ROOT, timeout: int = 300):
    full = cli_environment(**(env or {}))
    full["PYTHONPATH"] = os.pathsep.join([str(ROOT), full.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return subprocess.run(cmd, cwd=cwd, env=full, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def captured(tmp_path_factory):
    """The program run once under the interpreter through the command line."""
    out = tmp_path_factory.mktemp("capture") / "run.inspector"
    p = capture_program(out, STEPS)
    assert p.returncode == 0, p.stderr
    best = ast.literal_eval(p.stdout.split("best config: ", 1)[1].strip())
    return load(out), best, p


def _line_of(file: str, text: str) -> int:
    """The line of the program's file where `text` first appears."""
    lines = (PROGRAM / file).read_text().splitlines()
    return next(i for i, line in enumerate(lines, 1) if text in line)


def _entry(cap, name, launched=True):
    found = [k for k in cap.kernels if k.name == name and (k.launches > 0) == launched]
    assert len(found) == 1, [(k.name, k.launches) for k in cap.kernels]
    return found[0]


def test_capture_lists_kernels_with_launch_counts(captured):
    import triton

    cap, best, proc = captured
    assert (
        cap.mode == "interpreter" and cap.triton_version == triton.__version__
    )  # the program ran on this Triton
    assert "wrote" in proc.stderr and "axpy_kernel" in proc.stderr  # the table is printed after the run
    table = rows(cap)
    assert table[0]["kernel"] == "axpy_kernel" and table[0]["launches"] == STEPS  # most launched first
    assert _entry(cap, "axpy_kernel").launches == STEPS
    assert _entry(cap, "rms_norm_kernel").launches == 1
    scale = _entry(cap, "scale_kernel")
    assert scale.launches == 1 and scale.kind == "autotuned"
    # the autotuner benchmarked both configs; the program's launch used the one it chose
    assert scale.benchmark_launches == 1
    chosen = scale.autotune["configs"][scale.autotune["chosen"]]
    assert chosen["BLOCK"] == best["BLOCK"] and chosen["num_warps"] == best["num_warps"]
    assert scale.constexprs == {"BLOCK": best["BLOCK"]} and scale.options["num_warps"] == best["num_warps"]
    other = _entry(cap, "scale_kernel", launched=False)  # the config it did not choose: benchmark runs only
    assert other.benchmark_launches == 1 and other.constexprs["BLOCK"] != best["BLOCK"]
    # scale(), not the benchmark's timer
    assert scale.launch_site.endswith(f"scale_kernels.py:{_line_of('scale_kernels.py', 'scale_kernel[')}")
    assert scale.grid == [-(-3000 // best["BLOCK"])]


def test_capture_records_specialisations(captured):
    cap, _best, _ = captured
    axpy = _entry(cap, "axpy_kernel")
    assert axpy.signature == {
        "x_ptr": "*fp32",
        "y_ptr": "*fp32",
        "n": "i32",
        "a": "fp32",
        "BLOCK": "constexpr",
    }
    assert axpy.constexprs == {"BLOCK": 1024}
    # 4096 is divisible by 16, torch's allocations are 16-byte aligned; a float scalar gets nothing
    assert axpy.attributes == {
        "x_ptr": ["tt.divisibility=16"],
        "y_ptr": ["tt.divisibility=16"],
        "n": ["tt.divisibility=16"],
    }
    assert axpy.grid == [4] and axpy.options["num_warps"] == 4
    assert axpy.file == str(PROGRAM / "axpy_kernels.py")
    assert axpy.line == _line_of("axpy_kernels.py", "def axpy_kernel(")
    assert axpy.launch_site.endswith(f"axpy_kernels.py:{_line_of('axpy_kernels.py', 'axpy_kernel[')}")
    scale = _entry(cap, "scale_kernel")
    assert "n" not in scale.attributes  # 3000 is not divisible by 16
    norm = _entry(cap, "rms_norm_kernel")
    assert norm.options["num_warps"] == 2 and norm.constexprs == {"BLOCK": 128}
    assert [a["shape"] for a in norm.arguments if a["kind"] == "tensor"] == [[8, 96], [96], [8, 96]]
    # the helper module's source is kept with the capture, and the kernel's file too
    assert any(f["path"].endswith("norm_kernels.py") for f in cap.files.values())
    assert "def rms(" in norm.reproducer and "from helpers" not in norm.reproducer


def test_interpreted_specialisation_is_what_triton_compiles(captured):
    """The attributes computed for an interpreted launch equal those of a real compile of the
    same arguments for sm_90 (Triton's warmup, GPU-free)."""
    import torch

    from inspector import triton_compat as tc
    from inspector.triton_compat import launch_hooks as hooks
    from inspector.hardware.targets import parse_target

    sys.path.insert(0, str(PROGRAM))
    try:
        import axpy_kernels
        import scale_kernels
    finally:
        sys.path.remove(str(PROGRAM))
    cap, best, _ = captured
    cases = [
        (
            axpy_kernels.axpy_kernel,
            _entry(cap, "axpy_kernel"),
            (torch.empty(4096), torch.empty(4096), 4096, 0.1),
            {"BLOCK": 1024},
        ),
        (
            scale_kernels.scale_kernel.fn,
            _entry(cap, "scale_kernel"),
            (torch.empty(3000), torch.empty(3000), 3000, 0.5),
            {"BLOCK": best["BLOCK"], "num_warps": best["num_warps"]},
        ),
    ]
    for fn, entry, args, kwargs in cases:
        with tc.offline_target(parse_target("sm_90"), [fn]):
            kernel = fn.warmup(*args, grid=(1,), **kwargs)
        spec = hooks.kernel_specialization(kernel)
        assert spec["signature"] == entry.signature
        assert spec["attributes"] == entry.attributes
        assert spec["constexprs"] == entry.constexprs


@pytest.mark.parametrize("target", ["sm_90", "gfx942"])
def test_reopened_kernels_compile_like_a_direct_compile(captured, target, tmp_path):
    cap, _best, _ = captured
    direct_files = {
        "axpy_kernel": "axpy_kernels.py",
        "rms_norm_kernel": "norm_kernels.py",
        "scale_kernel": "scale_kernels.py",
    }
    for name, file in direct_files.items():
        entry = _entry(cap, name)
        again = reopen(cap, entry, target=target, folder=tmp_path)
        assert again.ok, again.error and again.error.short()
        index = entry.autotune["chosen"] if entry.autotune else None
        direct = inspect_kernel(PROGRAM / file, kernel=name, target=target, autotune_index=index)
        assert direct.ok, direct.error and direct.error.short()
        r, d = again.resources, direct.resources
        if target == "sm_90":
            assert r.registers is not None and r.registers == d.registers, name
            assert again.stages["ptx"].count("ld.global") == direct.stages["ptx"].count("ld.global")
        else:
            assert r.vgprs is not None and (r.vgprs, r.sgprs) == (d.vgprs, d.sgprs), name
        assert (r.shared_bytes, r.num_warps, r.spills) == (d.shared_bytes, d.num_warps, d.spills), name
        assert [p.specialization for p in again.parameters] == [p.specialization for p in direct.parameters]
        assert again.grid == entry.grid


def test_standalone_file_compiles_and_runs_on_its_own(captured, tmp_path):
    cap, _best, _ = captured
    alone = tmp_path / "alone"
    p = _run(
        [
            sys.executable,
            "-m",
            "inspector",
            "capture",
            "edit",
            cap.source_path,
            "rms_norm_kernel",
            "-o",
            str(alone / "rms.py"),
        ]
    )
    assert p.returncode == 0, p.stderr
    text = (alone / "rms.py").read_text()
    assert "def example(device)" in text and "helpers" not in text.split('"""')[2]
    # compiles through the command line, nothing of the program beside it
    p = _run([sys.executable, "-m", "inspector", "compile", str(alone / "rms.py"), "--target", "sm_90"])
    assert p.returncode == 0, p.stderr
    assert "rms_norm_kernel on sm_90" in p.stderr and "num_warps 2" in p.stderr
    # and runs as plain Python: its example() on the interpreter, with no inspector on the path
    code = (
        f"import runpy, torch; ns = runpy.run_path({str(alone / 'rms.py')!r}); "
        "ns['example'](torch.device('cpu')); print('ran')"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["TRITON_INTERPRET"] = "1"
    q = subprocess.run(
        [sys.executable, "-c", code], cwd=alone, env=env, capture_output=True, text=True, timeout=120
    )
    assert q.returncode == 0 and "ran" in q.stdout, q.stderr


def test_cli_list_show_compile(captured, tmp_path):
    cap, _best, _ = captured
    p = _run([sys.executable, "-m", "inspector", "capture", "list", cap.source_path, "--json"])
    assert p.returncode == 0, p.stderr
    listed = json.loads(p.stdout)
    assert [r["launches"] for r in listed][:3] == [STEPS, 1, 1]
    assert "time_ms" not in listed[0]  # measured only on a GPU
    p = _run([sys.executable, "-m", "inspector", "capture", "show", cap.source_path, "scale_kernel"])
    assert p.returncode == 0 and "chose config" in p.stdout and "autotuner benchmark runs" in p.stdout
    p = _run(
        [sys.executable, "-m", "inspector", "capture", "compile", cap.source_path, "0", "--target", "gfx942"],
        env={"TRITON_INSPECTOR_HOME": str(tmp_path)},  # the standalone file goes under its captures/
    )
    assert p.returncode == 0, p.stderr
    assert "axpy_kernel on gfx942" in p.stderr and "_load_dword" in p.stdout
    assert list(tmp_path.glob("captures/*/axpy_kernel.py"))
    p = _run([sys.executable, "-m", "inspector", "capture", "compile", cap.source_path, "nope"])
    assert p.returncode == 2 and "no kernel 'nope'" in p.stderr and "axpy_kernel" in p.stderr


def test_in_code_context_manager(tmp_path):
    out = tmp_path / "code.inspector"
    code = (
        "import sys, torch, inspector; sys.path.insert(0, %r)\n"
        "from axpy_kernels import axpy\n"
        "x, y = torch.randn(1000), torch.randn(1000)\n"
        "with inspector.capture(%r):\n"
        "    for _ in range(3): axpy(2.0, x, y)\n"
        "axpy(2.0, x, y)\n"
    ) % (str(PROGRAM), str(out))
    p = _run([sys.executable, "-c", code], env={"TRITON_INTERPRET": "1"})
    assert p.returncode == 0, p.stderr
    cap = load(out)
    (entry,) = cap.kernels
    assert entry.launches == 3  # the launch after the block is not recorded
    assert "n" not in entry.attributes  # 1000 is not divisible by 16


def test_tritonparse_trace_opens_to_the_same_table(tmp_path):
    pytest.importorskip("tritonparse")
    traces, out = tmp_path / "traces", tmp_path / "compiled.inspector"
    p = _run(
        [sys.executable, str(PROGRAM / "compile_only.py"), str(traces), str(out)],
        env={"TRITON_FULL_PYTHON_SOURCE": "1"},
    )
    assert p.returncode == 0, p.stderr
    (trace,) = list(traces.glob("*.ndjson"))
    ours, theirs = load(out), load(trace)
    assert theirs.mode == "tritonparse" and ours.mode == "compile-only" and not ours.notes

    def comparable(cap):
        table = [
            {k: r[k] for k in ("kernel", "launches", "num_warps", "num_stages", "specialisation", "shared")}
            for r in rows(cap)
        ]
        return [{**r, "where": f"{e.file}:{e.line}"} for r, e in zip(table, cap.sorted_kernels())]

    assert comparable(ours) == comparable(theirs)
    assert len(comparable(ours)) == 2
    # gzipped, it opens the same; and a trace's kernel reopens with the registers of ours
    gz = tmp_path / "trace.ndjson.gz"
    gz.write_bytes(gzip.compress(trace.read_bytes()))
    assert comparable(load(gz)) == comparable(theirs)
    # (rms_norm's helper lives in another module, which a trace does not hold: see the test below)
    for name in ("axpy_kernel",):
        a = reopen(ours, find(ours, name), "sm_90", folder=tmp_path / "ours")
        b = reopen(theirs, find(theirs, name), "sm_90", folder=tmp_path / "theirs")
        assert a.ok and b.ok, (a.error, b.error)
        assert (
            a.resources.registers == b.resources.registers
            and a.resources.shared_bytes == b.resources.shared_bytes
        )


def test_bad_files_are_named(tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("hello\n")
    with pytest.raises(CaptureFileError, match="notes.txt.*neither a capture"):
        load(notes)
    with pytest.raises(CaptureFileError, match="cannot read"):
        load(tmp_path / "missing.inspector")
    with pytest.raises(CaptureFileError, match="not a capture"):
        loads(b'{"a": 1}', name="x.json")
    with pytest.raises(CaptureFileError, match="damaged gzip"):
        loads(b"\x1f\x8b\x08\x00broken", name="x.gz")
    p = _run([sys.executable, "-m", "inspector", "capture", "list", str(notes)])
    assert p.returncode == 2 and "notes.txt" in p.stderr
    p = _run([sys.executable, "-m", "inspector", "capture", "--", "ls", "-l"])
    assert p.returncode == 2 and "runs a Python program" in p.stderr


def test_program_failure_still_writes_the_capture(tmp_path):
    prog = tmp_path / "fails.py"
    prog.write_text(
        "import sys, torch; sys.path.insert(0, %r)\nfrom axpy_kernels import axpy\n"
        "axpy(1.0, torch.randn(64), torch.randn(64))\nraise SystemExit(3)\n" % str(PROGRAM)
    )
    out = tmp_path / "fails.inspector"
    p = _run(
        [sys.executable, "-m", "inspector", "capture", "-o", str(out), "--", sys.executable, str(prog)],
        env={"TRITON_INTERPRET": "1"},
    )
    assert p.returncode == 3, p.stderr
    assert load(out).kernels[0].launches == 1


def test_reproducer_of_a_trace_without_helpers_says_what_is_missing(tmp_path):
    pytest.importorskip("tritonparse")
    traces, out = tmp_path / "traces", tmp_path / "c.inspector"
    env = {k: v for k, v in os.environ.items() if k != "TRITON_FULL_PYTHON_SOURCE"}
    p = subprocess.run(
        [sys.executable, str(PROGRAM / "compile_only.py"), str(traces), str(out)],
        cwd=ROOT,
        env={**env, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert p.returncode == 0, p.stderr
    (trace,) = list(traces.glob("*.ndjson"))
    theirs = load(trace)
    norm = find(theirs, "rms_norm_kernel")
    assert "TRITON_FULL_PYTHON_SOURCE=1" in norm.reproducer
    path = write_standalone(theirs, norm, folder=tmp_path / "w")
    rec = inspect_kernel(path, kernel="rms_norm_kernel", target="sm_90")
    assert rec.error is not None and "rms" in rec.error.message  # the missing helper, by name
    shutil.rmtree(tmp_path / "w")


def test_kernel_compiled_outside_a_launch_reopens_to_the_same_code(tmp_path):
    """Inductor compiles with `triton.compile` and launches through its own launcher: the
    compilation listener records the specialisation, and the standalone file made from it (an
    unaligned fp16 pointer, an integer not divisible by 16) compiles to the same TTIR signature,
    registers and shared memory."""
    import re

    out = tmp_path / "direct.inspector"
    p = _run([sys.executable, str(PROGRAM / "direct_compile.py"), str(out)])
    assert p.returncode == 0, p.stderr
    made = json.loads(p.stdout.strip().splitlines()[-1])
    cap = load(out)
    (entry,) = cap.kernels
    assert entry.kind == "compiled" and entry.launches == 0
    assert (
        entry.signature["w_ptr"] == "*fp16"
        and "w_ptr" not in entry.attributes
        and "n_cols" not in entry.attributes
    )
    assert entry.attributes["x_ptr"] == ["tt.divisibility=16"] and entry.constexprs == {"BLOCK": 256}
    assert entry.options["num_warps"] == 8
    again = reopen(cap, entry, "sm_90", folder=tmp_path / "w")
    assert again.ok, again.error and again.error.short()
    head = re.search(r"tt\.func public @\w+\(.*?\) attributes", again.stages["ttir"], re.S).group(0)
    assert re.sub(r"\s*loc\([^()]*(\([^()]*\))?\)", "", head) == made["ttir_signature"]
    assert again.resources.registers == made["registers"] and again.resources.shared_bytes == made["shared"]


def test_compiled_launch_path_without_a_gpu(tmp_path):
    """The path a GPU run takes (kernels compiled by `kernel[grid](...)`, keyed by the compiled
    kernel, its specialisation read from it, autotuner benchmark runs apart), driven GPU-free:
    under the offline driver a launch compiles for sm_90 and runs nothing."""
    import torch

    import inspector
    from inspector import triton_compat as tc
    from inspector.hardware.targets import parse_target

    sys.path.insert(0, str(PROGRAM))
    try:
        from axpy_kernels import axpy, axpy_kernel
        from norm_kernels import rms_norm
        from scale_kernels import scale, scale_kernel
    finally:
        sys.path.remove(str(PROGRAM))
    out = tmp_path / "offline.inspector"
    x, y = torch.randn(4096), torch.randn(4096)
    fns = [axpy_kernel, scale_kernel.fn]
    with tc.offline_target(parse_target("sm_90"), fns), inspector.capture(out):
        for _ in range(5):
            axpy(0.5, x, y)
        axpy(0.5, x[1:], y[1:])  # one element off: a specialisation of its own
        scale(torch.randn(3000), 2.0)
        rms_norm(torch.randn(8, 96), torch.randn(96))
    tc.clear_jit_caches(fns)
    cap = load(out)
    axpys = sorted((k for k in cap.kernels if k.name == "axpy_kernel"), key=lambda k: -k.launches)
    assert [k.launches for k in axpys] == [5, 1]
    assert axpys[0].attributes["x_ptr"] == ["tt.divisibility=16"] and "x_ptr" not in axpys[1].attributes
    assert "n" not in axpys[1].attributes  # 4095
    assert axpys[0].compiled["target"] == "sm_90" and axpys[0].compiled["registers"] > 0
    chosen = [k for k in cap.kernels if k.name == "scale_kernel" and k.launches]
    assert len(chosen) == 1 and chosen[0].autotune["chosen"] == scale_kernel.configs.index(
        scale_kernel.best_config
    )
    assert sum(k.benchmark_launches for k in cap.kernels if k.name == "scale_kernel") == 2
    for entry in (axpys[1], chosen[0]):
        again = reopen(cap, entry, "sm_90", folder=tmp_path / "w")
        assert again.ok, again.error and again.error.short()
        assert again.resources.registers == entry.compiled["registers"]
        assert again.resources.shared_bytes == entry.compiled["shared"]
        assert {p.name: p.specialization for p in again.parameters if p.specialization} == entry.attributes


def test_launches_through_another_launcher_keep_their_arguments(tmp_path):
    """Inductor launches through its own launcher, which hands `CompiledKernel.launch_metadata`
    to Triton's launch hooks: the capture counts those launches by compile and keeps the first
    one's grid and arguments (shapes, strides, an unaligned storage offset), and the standalone
    file made from them compiles to the same code."""
    import re

    out = tmp_path / "launcher.inspector"
    p = _run([sys.executable, str(PROGRAM / "launcher_launch.py"), str(out)])
    assert p.returncode == 0, p.stderr
    made = json.loads(p.stdout.strip().splitlines()[-1])
    assert made["launch_metadata_restored"]  # the capture gave the function its launch_metadata back
    cap = load(out)
    (entry,) = cap.kernels
    assert entry.launches == 3 and entry.grid == [8, 1, 1]
    args = {a["name"]: a for a in entry.arguments}
    assert (
        args["x_ptr"]["shape"] == [8, 100] and args["w_ptr"]["offset"] == 1 and args["stride"]["value"] == 100
    )
    assert "as_strided((100,), (1,), 1)" in entry.reproducer and "[(8, 1, 1)]" in entry.reproducer
    assert not any("made from the compiled specialisation" in n for n in entry.notes)
    again = reopen(cap, entry, "sm_90", folder=tmp_path / "w")
    assert again.ok, again.error and again.error.short()
    head = re.search(r"tt\.func public @\w+\(.*?\) attributes", again.stages["ttir"], re.S).group(0)
    assert re.sub(r"\s*loc\([^()]*(\([^()]*\))?\)", "", head) == made["ttir_signature"]
    assert again.resources.registers == made["registers"] and again.resources.shared_bytes == made["shared"]
    assert again.grid == [8, 1, 1]
