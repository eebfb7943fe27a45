"""`python -m inspector occupancy`: single question, JSON, what-if, waves and the CSV batch form."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "inspector", "occupancy", *args], cwd=REPO, capture_output=True,
                          text=True, timeout=120)


def test_human_output():
    p = _cli("--arch", "sm_90", "--threads", "128", "--regs", "56", "--smem", "0")
    assert p.returncode == 0, p.stderr
    assert "blocks/SM      9" in p.stdout
    assert "occupancy      56.2%" in p.stdout
    assert "limited by     registers" in p.stdout


def test_json_output():
    p = _cli("--arch", "sm_90", "--threads", "128", "--regs", "56", "--smem", "0", "--json")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    occ = d["occupancy"]
    assert (occ["blocks_per_sm"], occ["active_warps"], occ["limiters"]) == (9, 36, ["registers"])
    assert d["gpu"]["name"] == "H100"  # the representative sm_90 part


def test_gpu_grid_and_what_if():
    p = _cli("--gpu", "H100", "--num-warps", "8", "--regs", "96", "--smem", "65536", "--grid", "1000",
             "--what-if", "regs=64", "--json")
    d = json.loads(p.stdout)
    assert d["occupancy"]["blocks_per_sm"] == 2
    assert d["waves"]["waves"] == 4 and d["waves"]["last_wave_blocks"] == 208
    assert d["what_if"]["after"]["blocks_per_sm"] == 3 and d["what_if"]["after"]["limiters"] == ["shared_memory"]


def test_amd_question():
    p = _cli("--arch", "gfx942", "--num-warps", "4", "--regs", "217", "--sgprs", "106", "--smem", "16384", "--json")
    occ = json.loads(p.stdout)["occupancy"]
    assert (occ["blocks_per_sm"], occ["waves_per_simd"], occ["limiters"]) == (2, 2.0, ["vgprs"])


def test_bad_input_is_a_usage_error():
    p = _cli("--arch", "tpu", "--threads", "128")
    assert p.returncode == 2 and "unknown target" in p.stderr


def test_csv_batch(tmp_path):
    src = tmp_path / "in.csv"
    src.write_text("arch,threads,regs,smem\nsm_90,128,56,0\nsm_120,32,16,0\nsm_80,128,40,16384\n"
                   "gfx942,256,128,65536\n")
    out = tmp_path / "out.csv"
    p = _cli("--csv", str(src), "--out", str(out))
    assert p.returncode == 0, p.stderr
    assert out.read_text().splitlines() == [
        "arch,threads,regs,smem,blocks_per_sm,occupancy,limiters",
        "sm_90,128,56,0,9,0.5625,registers",
        "sm_120,32,16,0,24,0.5000,blocks+barriers",
        "sm_80,128,40,16384,9,0.5625,shared_memory",
        "gfx942,256,128,65536,1,0.1250,lds",
    ]


def test_csv_bad_row_keeps_going(tmp_path):
    src = tmp_path / "in.csv"
    src.write_text("sm_90,256,32,0\nnonsense,1,1,1\n")
    p = _cli("--csv", str(src))
    assert p.returncode == 1 and "row 2" in p.stderr
    assert p.stdout.splitlines() == ["sm_90,256,32,0,8,1.0000,warps+registers", "nonsense,1,1,1,,,"]
