"""Diff of two inspections, and the `explain` / `diff` commands, on real Triton output."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

import pytest
from analysis_kernels import write_kernel, compiled
from paths import KERNELS, REPO, cli_environment

from inspector.analysis import diff_inspections, stage_diff
from inspector.cli.options import add_compile_options
from inspector.cli.diff import vs_namespace

ADD = KERNELS / "add.py"


@pytest.fixture(scope="module")
def recs(sandbox, tmp_path_factory):
    d = tmp_path_factory.mktemp("diff")
    renamed = ADD.read_text().replace("    x = tl.load(x_ptr + offs, mask=mask)\n", "    xs = tl.load(x_ptr + offs, mask=mask)\n")
    renamed = renamed.replace("x + y, mask=mask)", "xs + y, mask=mask)")
    assert "xs + y" in renamed
    return {
        "add": compiled(sandbox, ADD, target="sm_90"),
        "add_4095": compiled(sandbox, ADD, target="sm_90", args={"n": "4095"}),
        "add_w8": compiled(sandbox, ADD, target="sm_90", options={"num_warps": "8"}),
        "add_amd": compiled(sandbox, ADD, target="gfx942"),
        "renamed": compiled(sandbox, write_kernel(d, "add_renamed", renamed), target="sm_90"),
    }


def test_n_4096_vs_4095(recs):
    d = diff_inspections(recs["add"], recs["add_4095"])
    assert [c.name for c in d.settings] == ["n"]
    assert "tt.divisibility=16" in d.settings[0].a and "tt.divisibility" not in d.settings[0].b
    assert [(m.line_a, m.a, m.b) for m in d.memory] == [(25, "vectorised", "scalar"), (26, "vectorised", "scalar"),
                                                          (27, "vectorised", "scalar")]
    assert any("multiple of 16" in r for r in d.memory[0].b_reasons)
    assert d.mix["ptx"]["global_load"] == (4, 16) and d.mix["sass"]["global_store"] == (2, 8)
    ptx = d.stages["ptx"]
    assert not ptx.identical and ptx.added > 0
    assert any(h.startswith("+") and "ld.global.b32" in h for h in ptx.hunks)
    assert any(h.startswith("-") and "ld.global.v4.b32" in h for h in ptx.hunks)
    assert "n=4096" in d.a_label and "n=4095" in d.b_label


def test_each_access_carries_its_figures_on_both_sides(recs):
    """The change that matters at n = 4095: 128-bit -> 32-bit and a quarter of each sector used."""
    from inspector.analysis.diff import figure_changes

    d = diff_inspections(recs["add"], recs["add_4095"])
    m = d.memory[0]
    assert m.pointer == "x_ptr" and m.changed
    assert m.a_figures["width_bits"] == 128 and m.b_figures["width_bits"] == 32
    assert m.a_figures["sector_efficiency"] == 1.0 and m.b_figures["sector_efficiency"] < 0.3
    words = figure_changes(m)
    assert words[0] == "width 128 -> 32 bits" and any(w.startswith("used 100% -> 2") for w in words), words
    same = diff_inspections(recs["add"], recs["renamed"])
    assert not any(x.changed for x in same.memory) and all(not figure_changes(x) for x in same.memory)
    assert d.shared == [] and same.shared == []  # a vector add stages nothing in shared memory


def test_context_lines_are_the_new_sides_own_text(recs):
    """A context line is equal to A's only once renumbered: it prints B's text, whose line numbers
    the hunk header gives."""
    ptx = diff_inspections(recs["add"], recs["add_4095"]).stages["ptx"]
    b_lines = {line.rstrip() for line in recs["add_4095"].stages["ptx"].split("\n")}
    context = [h[1:] for h in ptx.hunks if h.startswith(" ")]
    assert context and all(c in b_lines for c in context)


def test_num_warps_4_vs_8(recs):
    d = diff_inspections(recs["add"], recs["add_w8"])
    res = {c.name: (c.a, c.b) for c in d.resources}
    assert res["num_warps"] == (4, 8) and res["threads"] == (128, 256)
    occ = {c.name: (c.a, c.b) for c in d.occupancy}
    assert occ["blocks_per_sm"][0] != occ["blocks_per_sm"][1]
    # listed once: with the resources, not again with the settings
    assert [c.name for c in [*d.settings, *d.resources]].count("num_warps") == 1
    assert any("warpsPerCTA = [8]" in h for h in d.stages["ttgir"].hunks if h.startswith("+"))


def test_renumbered_ssa_names_are_not_differences(recs):
    a, b = recs["add"], recs["renamed"]
    assert a.stages["ttir"] != b.stages["ttir"]  # %x_5 became %xs_5, the file path changed
    d = diff_inspections(a, b)
    assert d.stages["ttir"].identical and d.stages["ttgir"].identical and d.stages["ptx"].identical
    assert d.stages["sass"].identical and not d.stages["ttir"].hunks


def test_nvidia_vs_amd(recs):
    d = diff_inspections(recs["add"], recs["add_amd"])
    assert d.only_a == ["ptx", "sass"] and d.only_b == ["amdgcn"]
    assert set(d.stages) == {"ttir", "ttgir", "llir"}
    assert any(c.name == "target" and (c.a, c.b) == ("sm_90", "gfx942") for c in d.settings)
    assert {c.name for c in d.resources} >= {"registers", "vgprs"}


def test_stage_diff_ignores_registers_and_addresses():
    a = "        /*0090*/  --:-:2:-:1  LDG.E.128 R4, desc[UR4][R2.64] ;\n"
    b = "        /*00a0*/  01:-:3:Y:4  LDG.E.128 R8, desc[UR6][R12.64] ;\n"
    assert stage_diff("sass", a, b).identical
    assert not stage_diff("sass", a, b.replace("LDG.E.128", "LDG.E")).identical
    p = "\tadd.s64 \t%rd3, %rd8, %rd10;\n\t.loc\t1 26 17\n"
    q = "\tadd.s64 \t%rd5, %rd1, %rd2;\n\t.loc\t1 27 3\n"
    assert stage_diff("ptx", p, q).identical


def test_vs_options_override_by_name():
    p = argparse.ArgumentParser()
    add_compile_options(p)
    p.add_argument("--vs")
    ns = p.parse_args(["k.py", "--arg", "n=4096", "--arg", "x_ptr=fp16", "--num-warps", "4", "--vs",
                       "--arg n=4095 --num-warps 8"])
    b = vs_namespace(ns)
    assert b.file == "k.py" and b.num_warps == 8 and b.arg[-1] == "n=4095"
    from inspector.cli.options import compile_request

    req = compile_request(b)
    assert req.args == {"n": "4095", "x_ptr": "fp16"} and req.options["num_warps"] == 8  # typed once, here
    other = vs_namespace(p.parse_args(["k.py", "--kernel", "a", "--vs", "other.py --target gfx942"]))
    assert other.file == "other.py" and other.kernel is None and other.target == "gfx942"


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "inspector", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=600, check=False, env=cli_environment())


def test_explain_command(recs):
    r = cli("explain", str(ADD), "--arg", "n=4095")
    assert r.returncode == 0, r.stderr
    assert "1. [high] line 25: loads of `x_ptr` are uncoalesced: 16 sectors per warp request where 4 would do" in r.stdout
    assert "Memory accesses" in r.stdout and "ld.global.b32 / LDG.E" in r.stdout
    row = next(ln for ln in r.stdout.splitlines() if ln.strip().startswith("25 ") and "load" in ln)
    assert "16 (ideal 4)" in row and "25%" in row
    r = cli("explain", str(ADD), "--arg", "n=4095", "--fail-on", "high")
    assert r.returncode == 3
    r = cli("explain", str(ADD), "--fail-on", "high")
    assert r.returncode == 0, r.stdout + r.stderr
    data = json.loads(cli("explain", str(ADD), "--json").stdout)
    assert data["kernel"] == "add_kernel" and data["resources"]["registers"]
    assert [a["verdict"] for a in data["memory"]["accesses"]] == ["vectorised"] * 3
    for a in data["memory"]["accesses"]:  # every access answers both questions
        assert a["vector_bits"] == 128 and a["sectors_per_request"] == a["ideal_sectors_per_request"] == 16
        assert a["sector_efficiency"] == 1.0 and a["uniform"] is False and a["causes"] == []


def test_diff_command(recs):
    r = cli("diff", str(ADD), "--vs", "--arg n=4095", "--stage", "ptx")
    assert r.returncode == 0, r.stderr
    assert "line 25 tt.load: vectorised -> scalar" in r.stdout
    assert "width 128 -> 32 bits" in r.stdout
    assert "--- a/add_kernel.ptx" in r.stdout and "+\tld.global.b32" in r.stdout.replace("+\t@%p1 ", "+\t")
    data = json.loads(cli("diff", str(ADD), "--vs", "--num-warps 8", "--json").stdout)
    assert {c["name"]: [c["a"], c["b"]] for c in data["resources"]}["num_warps"] == [4, 8]
    assert data["stages"]["ptx"]["hunks"]
    r = cli("diff", str(ADD), "--vs", "--no-such-option")
    assert r.returncode == 2
