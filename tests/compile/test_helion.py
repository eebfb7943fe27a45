"""Helion kernels as input (inspector/worker/helion_front.py): a `@helion.kernel` file opens GPU-free
for sm_90 and gfx942 like a Triton kernel file; what is compiled is the Triton code Helion generates,
and every stage links back to the Helion lines."""

from __future__ import annotations

import re

import pytest

from inspector.compile.api import inspect_kernel
from paths import REPO

pytest.importorskip("helion", reason="installed by the test command (requirements-test.txt)")

FIXTURES = REPO / "tests" / "fixtures" / "helion"
# file, kernel, the Helion line that loads (its text), the pointer loaded there
CASES = {
    "matmul": ("readme_matmul.py", "            acc = torch.addmm(acc, x[tile_m, tile_k], y[tile_k, tile_n])", "x"),
    "row_softmax": ("row_softmax.py", "        row = x[tile, :].to(torch.float32)", "x"),
}
LOADS = {"ptx": ("ld.global", "cp.async"), "amdgcn": ("buffer_load", "global_load")}


def _line_of(text: str, wanted: str) -> int:
    return text.split("\n").index(wanted) + 1


@pytest.mark.parametrize("target", ["sm_90", "gfx942"])
@pytest.mark.parametrize("kernel", sorted(CASES))
def test_a_helion_kernel_opens_with_its_generated_triton_linked_to_its_lines(kernel, target, sandbox):
    from inspector.analysis.memory import memory_report
    from inspector.cli.explain import format_explanation
    from inspector.ui.linking import stage_line_maps

    name, load_text, pointer = CASES[kernel]
    path = FIXTURES / name
    rec = inspect_kernel(path, target=target, kernel=kernel, sandbox=sandbox, use_cache=False)
    assert rec.error is None, rec.error and rec.error.short()
    assert rec.generated is not None and rec.generated.language == "helion" and rec.generated.version
    assert rec.kernel == kernel and rec.source == path.read_text()
    generated = rec.stages["triton"]
    assert re.search(rf"@triton\.jit\s*\ndef {rec.generated.kernel}\(", generated)
    load_line = _line_of(rec.source, load_text)

    # each generated load of the pointer comes from the Helion line that indexes it
    gen_loads = [i + 1 for i, text in enumerate(generated.split("\n")) if f"tl.load({pointer} +" in text]
    assert gen_loads and all(rec.generated.user_line(g) == load_line for g in gen_loads), gen_loads
    # ... and the memory report's load of it too (its line is a generated line)
    loads = [a for a in memory_report(rec).accesses if a.op == "tt.load" and a.pointer == pointer]
    assert loads and {rec.generated.user_line(a.line) for a in loads} == {load_line}

    # the panes' maps are keyed by Helion lines: that line lights the generated loads and the
    # machine code's load instructions
    maps = stage_line_maps(rec)
    assert set(gen_loads) <= set(maps["triton"][load_line])
    machine = "ptx" if target == "sm_90" else "amdgcn"
    rows = rec.stages[machine].split("\n")
    lit = [rows[n - 1] for n in maps[machine][load_line]]
    assert any(op in row for row in lit for op in LOADS[machine]), lit[:20]

    report = "\n".join(format_explanation(rec))
    assert f"Helion kernel {kernel}" in report and f"{load_line} (Triton {loads[0].line})" in report


def test_the_configs_helion_would_try_are_listed_and_each_generates_its_own_code(sandbox):
    path = FIXTURES / "readme_matmul.py"
    first = inspect_kernel(path, target="sm_90", sandbox=sandbox, use_cache=False)
    assert first.error is None and len(first.autotune_configs) >= 3 and first.autotune_index == 0
    assert first.generated.config == first.autotune_configs[0]
    other = inspect_kernel(path, target="sm_90", autotune_index=2, sandbox=sandbox, use_cache=False)
    assert other.error is None, other.error and other.error.short()
    assert other.generated.config == first.autotune_configs[2] != first.autotune_configs[0]
    blocks = other.generated.config["block_sizes"]
    for i, size in enumerate(blocks):
        assert f"_BLOCK_SIZE_{i} = tl.constexpr({size})" in other.stages["triton"]
    assert other.stages["triton"] != first.stages["triton"]


def test_the_files_own_call_gives_the_arguments_and_a_kernel_nothing_calls_gets_made_up_ones(sandbox):
    path = FIXTURES / "row_softmax.py"
    called = inspect_kernel(path, target="sm_90", kernel="row_softmax", sandbox=sandbox, use_cache=False)
    assert called.error is None and called.call_origin == "file"
    assert called.kernels_in_file == ["row_softmax", "scale_rows"]
    # the file's fp16 4096 x 2560 tensor, as the config given to @helion.kernel compiles it
    assert "rand_strided(size=(4096, 2560)" in called.stages["triton"] and "torch.float16" in called.stages["triton"]
    assert called.generated.config == {"block_sizes": [2], "num_warps": 8}
    made_up = inspect_kernel(path, target="gfx942", kernel="scale_rows", sandbox=sandbox, use_cache=False)
    assert made_up.error is None, made_up.error and made_up.error.short()
    assert made_up.call_origin == "signature" and "made up from its code" in made_up.log


def test_a_helion_error_names_the_kernel_line_helion_stopped_at(tmp_path, sandbox):
    bad = tmp_path / "bad_rows.py"
    bad.write_text("import torch\nimport helion\nimport helion.language as hl\n\n\n@helion.kernel()\n"
                   "def add_rows(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:\n"
                   "    out = torch.empty_like(x)\n    for tile in hl.tile(x.size(0)):\n"
                   "        out[tile, :] = x[tile, :] + y[tile, :, :]\n    return out\n\n\n"
                   "if __name__ == '__main__':\n"
                   "    add_rows(torch.randn(64, 32, device='cuda'), torch.randn(64, 32, device='cuda'))\n")
    rec = inspect_kernel(bad, target="sm_90", sandbox=sandbox, use_cache=False)
    assert rec.error is not None and rec.error.line == 10 and rec.error.file == str(bad)
    assert "Helion" in rec.error.message


@pytest.mark.gpu
def test_natively_a_helion_kernel_compiles_and_its_profile_lands_on_its_helion_lines(tmp_path):
    """On the GPU: the file's own call on real tensors, the generated kernel compiled by the GPU's
    driver, profiled by Nsight Compute, the measured lines being the Helion file's."""
    import json
    import subprocess
    import sys

    from inspector.profile.measured import Profile
    from inspector.profile.run_ncu import find_ncu

    path = FIXTURES / "row_softmax.py"
    rec = inspect_kernel(path, target="native", kernel="row_softmax", use_cache=False)
    assert rec.error is None and rec.mode == "native" and rec.resources.source == "driver", rec.error
    assert rec.call_origin == "file" and rec.generated.kernel == "_helion_row_softmax"
    if find_ncu() is None:
        pytest.skip("Nsight Compute is not installed on this GPU machine")
    out = tmp_path / "p.json"
    run = subprocess.run([sys.executable, "-m", "inspector", "profile", str(path), "--kernel", "row_softmax",
                          "--out", str(out)], capture_output=True, text=True, cwd=REPO, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    prof = Profile.from_dict(json.loads(out.read_text()))
    load_line = _line_of(path.read_text(), CASES["row_softmax"][1])
    lines = {l.line: l for l in prof.lines}
    assert load_line in lines and lines[load_line].sectors, sorted(lines)
    assert all(path.read_text().split("\n")[n - 1].strip() == l.source for n, l in lines.items())
    print(f"\nHelion row_softmax on {rec.device_name}: registers {rec.resources.registers}, "
          f"duration {prof.figures.get('duration')}, lines " +
          ", ".join(f"{l.line}: {l.share:.0%} of samples, {l.sectors} sectors (ideal {l.ideal_sectors})"
                    for l in prof.lines))
