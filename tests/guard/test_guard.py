"""The guard end to end: a repository of real kernels, its baseline, two changes that regress it
(one kernel spills, another loses its 128-bit loads), the reports, --update-baseline, and the same
run as tasks on a real local Ray cluster. Everything compiles GPU-free for sm_90 (and gfx942)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest

from inspector.testing import guard_repo
from paths import cli_environment
from side_releases import missing, ready
from inspector.guard import baseline as baseline_file
from inspector.guard import run_guard
from inspector.guard.discovery import entry_kernels, kernel_defs, kernel_files
from inspector.guard.engines import LocalEngine
from inspector.guard.reports import regression_lines, to_json

REPO = Path(__file__).resolve().parents[2]


def guard_cli(cwd: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    environ = cli_environment(PYTHONPATH=str(REPO), **(env or {}))
    return subprocess.run([sys.executable, "-m", "inspector", "guard", *args], cwd=cwd, env=environ,
                          capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def changed_repo(tmp_path_factory):
    """The repository with its baseline written before the two changes, then changed."""
    root = guard_repo.write(tmp_path_factory.mktemp("guarded") / "repo")
    out = guard_cli(root, "ops", "--targets", "sm_90", "--baseline", "guard.json", "--update-baseline")
    assert out.returncode == 0, out.stderr
    guard_repo.spill(root)
    guard_repo.misalign(root)
    return root


def test_the_baseline_holds_every_entry_kernel_and_an_unchanged_run_passes_from_the_cache(tmp_path):
    root = guard_repo.write(tmp_path / "repo")
    out = guard_cli(root, "ops", "--targets", "sm_90", "--baseline", "guard.json", "--update-baseline")
    assert out.returncode == 0, out.stderr
    doc = json.loads((root / "guard.json").read_text())
    assert set(doc["kernels"]) == guard_repo.ENTRY_KERNELS  # the helper _gelu is not an entry
    for kid, entry in doc["kernels"].items():
        sm90 = entry["sm_90"]
        assert sm90["launchable"] and sm90["spill_bytes"] == 0 and sm90["local_bytes"] == 0, kid
        assert sm90["memory"] and all(a["bits"] == 128 for a in sm90["memory"].values()), kid
    assert doc["kernels"]["ops/scale.py::scale_kernel"]["sm_90"]["memory"]["load x_ptr"]["line"] == \
        guard_repo.SCALE_LOAD_LINE

    again = guard_cli(root, "ops", "--targets", "sm_90", "--baseline", "guard.json")
    assert again.returncode == 0, again.stdout + again.stderr
    assert "4 pass" in again.stdout and "0 compiled, 4 from the cache" in again.stdout


def test_a_spill_and_a_lost_128_bit_load_are_exactly_the_two_regressions(changed_repo, tmp_path):
    root = changed_repo
    out = guard_cli(root, "ops", "--targets", "sm_90", "--baseline", "guard.json", "--junit",
                    str(tmp_path / "guard.xml"), "--markdown", str(tmp_path / "guard.md"), "--json")
    assert out.returncode == 1, out.stderr
    report = json.loads(out.stdout)
    lines = [l for l in out.stderr.splitlines() if l.startswith("ops/")]
    assert lines == report["regressions"] and len(lines) == 2, out.stderr

    spill = re.match(r"ops/rownorm\.py:(\d+): rownorm_kernel on sm_90: spill stores 0 B -> ([\d,]+) B", lines[0])
    assert spill, lines[0]
    assert int(spill.group(1)) in guard_repo.ROWNORM_LINES and int(spill.group(2).replace(",", "")) > 0
    assert lines[1].startswith(f"ops/scale.py:{guard_repo.SCALE_LOAD_LINE}: scale_kernel on sm_90: "
                               "load x_ptr 128-bit -> 32-bit"), lines[1]
    assert "not 16-byte aligned" in lines[1]  # the analysis says why
    statuses = {c["kernel_id"]: c["status"] for c in report["cases"]}
    assert statuses == {"ops/rownorm.py::rownorm_kernel": "regressed", "ops/scale.py::scale_kernel": "regressed",
                        "ops/fused.py::gelu_kernel": "pass", "ops/fused.py::bias_gelu_kernel": "pass"}

    suite = ET.parse(tmp_path / "guard.xml").getroot()
    assert (suite.get("tests"), suite.get("failures")) == ("4", "2")
    cases = {(c.get("classname"), c.get("name")): c for c in suite.iter("testcase")}
    assert set(cases) == {(k.split("::")[0], f"{k.split('::')[1]} [sm_90]") for k in guard_repo.ENTRY_KERNELS}
    failed = {key: c for key, c in cases.items() if c.find("failure") is not None}
    assert set(failed) == {("ops/rownorm.py", "rownorm_kernel [sm_90]"), ("ops/scale.py", "scale_kernel [sm_90]")}
    scale = failed[("ops/scale.py", "scale_kernel [sm_90]")]
    assert scale.get("line") == str(guard_repo.SCALE_LOAD_LINE)
    assert scale.find("failure").get("message") == lines[1]

    md = (tmp_path / "guard.md").read_text()
    assert md.startswith("### Triton kernel guard: 2 regressions")
    assert re.search(r"\| `scale_kernel` \| sm_90 \| `ops/scale\.py:12` \| load x_ptr 128-bit -> 32-bit", md), md
    assert re.search(r"\| `rownorm_kernel` \| sm_90 \| `ops/rownorm\.py:\d+` \| spill stores 0 B -> ", md), md
    assert "| sm_90 | 4 | 2 | 2 | 0 | 0 | 0 |" in md

    # Accepting them: the figures change, a reviewer's per-kernel threshold stays.
    accepted = root / "accepted.json"  # beside the kernels: its paths are relative to its folder
    doc = json.loads((root / "guard.json").read_text())
    doc["kernels"]["ops/fused.py::gelu_kernel"]["thresholds"] = {"registers": "50%"}
    accepted.write_text(json.dumps(doc))
    up = guard_cli(root, "ops", "--targets", "sm_90", "--baseline", str(accepted), "--update-baseline")
    assert up.returncode == 0, up.stderr
    assert up.stdout.count("accepted: ") == 2
    new = json.loads(accepted.read_text())
    assert new["kernels"]["ops/rownorm.py::rownorm_kernel"]["sm_90"]["spill_bytes"] > 0
    assert new["kernels"]["ops/scale.py::scale_kernel"]["sm_90"]["memory"]["load x_ptr"]["bits"] == 32
    assert new["kernels"]["ops/fused.py::gelu_kernel"]["thresholds"] == {"registers": "50%"}
    ok = guard_cli(root, "ops", "--targets", "sm_90", "--baseline", str(accepted))
    assert ok.returncode == 0 and "4 pass" in ok.stdout, ok.stdout + ok.stderr


def test_thresholds_per_kernel_turn_a_regression_off_or_allow_a_percentage(changed_repo):
    base = baseline_file.load(str(changed_repo / "guard.json"))
    base.kernels["ops/rownorm.py::rownorm_kernel"]["thresholds"] = {
        "spill_bytes": "off", "local_bytes": "off", "occupancy": "off", "registers": "off"}
    base.kernels["ops/scale.py::scale_kernel"]["thresholds"] = {"registers": "50%"}
    engine = LocalEngine(2)
    try:
        result = run_guard([str(changed_repo / "ops")], ["sm_90"], base, engine)
    finally:
        engine.close()
    assert [c.kernel for c in result.regressions] == ["scale_kernel"]
    (only,) = result.regressions
    assert [c.metric for c in only.regressions] == ["memory"]  # registers +22% is within 50%
    assert result.compiles == 0  # every record came from the cache of the runs before


@pytest.mark.long
def test_the_same_run_as_tasks_on_a_local_ray_cluster_gives_the_same_report(changed_repo, tmp_path, monkeypatch):
    ray = pytest.importorskip("ray")
    from inspector.guard.engines import RayEngine

    base = baseline_file.load(str(changed_repo / "guard.json"))
    local = LocalEngine(2)
    try:
        expected = run_guard([str(changed_repo / "ops")], ["sm_90"], base, local)
    finally:
        local.close()

    # A cache of its own: every record is compiled by a Ray task, none read from the runs above.
    monkeypatch.setenv("TRITON_INSPECTOR_CACHE", str(tmp_path / "ray-cache"))
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        engine = RayEngine(None, 2)
        got = run_guard([str(changed_repo / "ops")], ["sm_90"], base, engine)
        assert got.compiles == 4 and got.cache_hits == 0 and "Ray, 1 node, 2 CPUs" in got.engine

        def comparable(result):
            doc = to_json(result)
            for key in ("seconds", "engine", "compiles", "cache_hits"):
                doc.pop(key)
            for case in doc["cases"]:
                case.pop("seconds"), case.pop("cached")
            return doc

        assert regression_lines(got) == regression_lines(expected) and len(regression_lines(got)) == 2
        assert comparable(got) == comparable(expected)

        # The caller's cache now holds every record: a second run sends Ray nothing.
        again = run_guard([str(changed_repo / "ops")], ["sm_90"], base, RayEngine(None, 2))
        assert again.compiles == 0 and again.cache_hits == 4 and "not started" in again.engine
        assert comparable(again) == comparable(expected)
    finally:
        ray.shutdown()


def test_a_file_that_does_not_import_fails_each_of_its_baseline_kernels_with_its_line(tmp_path):
    root = tmp_path / "repo"
    (root / "tools").mkdir(parents=True)
    (root / "tools" / "scale.py").write_text(guard_repo.SCALE)
    out = guard_cli(root, "tools", "--targets", "sm_90,gfx942", "--baseline", "guard.json", "--update-baseline")
    assert out.returncode == 0, out.stderr
    doc = json.loads((root / "guard.json").read_text())
    gfx = doc["kernels"]["tools/scale.py::scale_kernel"]["gfx942"]
    assert gfx["launchable"] and gfx["vgprs"] > 0 and gfx["memory"]["load x_ptr"]["bits"] == 128

    text = guard_repo.SCALE.replace("    mask = offs < n\n", "    mask = offs < n)\n")
    (root / "tools" / "scale.py").write_text(text)
    broken = guard_cli(root, "tools", "--targets", "sm_90,gfx942", "--baseline", "guard.json")
    assert broken.returncode == 1
    lines = [l for l in broken.stdout.splitlines() if l.startswith("tools/")]
    assert len(lines) == 2 and all(re.match(r"tools/scale\.py:11: scale_kernel on (sm_90|gfx942): cannot launch any "
                                            r"more: .*syntax", l) for l in lines), broken.stdout
    # A failure the same text always gives is kept: the next run compiles nothing. So is a kernel
    # that nothing launches (its constexprs have no values), which is counted apart.
    shutil.copy(REPO / "tests" / "fixtures" / "kernel_file_forms" / "bare_kernel.py", root / "tools" / "bare_kernel.py")
    first = guard_cli(root, "tools", "--targets", "sm_90,gfx942", "--baseline", "guard.json")
    assert first.returncode == 1 and "2 not launched by their files" in first.stdout, first.stdout
    again = guard_cli(root, "tools", "--targets", "sm_90,gfx942", "--baseline", "guard.json")
    assert again.returncode == 1 and "0 compiled, 4 from the cache" in again.stdout, again.stdout
    (root / "tools" / "bare_kernel.py").unlink()

    (root / "tools" / "scale.py").write_text(guard_repo.SCALE.replace("scale_kernel", "scaled_kernel"))
    renamed = guard_cli(root, "tools", "--targets", "sm_90", "--baseline", "guard.json", "--json")
    assert renamed.returncode == 0, renamed.stderr
    statuses = {(c["kernel"], c["status"]) for c in json.loads(renamed.stdout)["cases"]}
    assert statuses == {("scale_kernel", "missing"), ("scaled_kernel", "new")}


def test_a_broken_baseline_is_named_with_its_line(tmp_path):
    root = guard_repo.write(tmp_path / "repo")
    (root / "guard.json").write_text('{\n  "format": "triton-inspector-guard/1",\n  "kernels": {,}\n}\n')
    out = guard_cli(root, "ops", "--baseline", "guard.json")
    assert out.returncode == 2 and "guard.json:3:" in out.stderr and "not valid JSON" in out.stderr
    (root / "guard.json").write_text(json.dumps({"format": "triton-inspector-guard/1", "kernels": {},
                                                 "thresholds": {"regs": "10%"}}, indent=2))
    out = guard_cli(root, "ops", "--baseline", "guard.json")
    assert out.returncode == 2 and "guard.json:5: unknown metric 'regs'" in out.stderr, out.stderr
    out = guard_cli(root, "nowhere/", "--baseline", "new.json")
    assert out.returncode == 2 and "nowhere/: no such file, folder or importable module" in out.stderr


def test_entry_kernels_leave_out_helpers_and_folders_are_walked_for_kernel_files(tmp_path):
    assert entry_kernels(guard_repo.FUSED, ["_gelu", "gelu_kernel", "bias_gelu_kernel"]) == \
        ["gelu_kernel", "bias_gelu_kernel"]
    assert kernel_defs(guard_repo.SCALE)["scale_kernel"].line == 9
    root = guard_repo.write(tmp_path / "repo")
    (root / "ops" / "notes.py").write_text("print('no kernels here')\n")
    (root / ".venv").mkdir()
    (root / ".venv" / "k.py").write_text(guard_repo.SCALE)
    assert [os.path.relpath(f, root) for f in kernel_files([str(root)])] == \
        ["ops/fused.py", "ops/rownorm.py", "ops/scale.py"]


def test_a_second_triton_release_is_guarded_under_its_own_keys(tmp_path):
    from inspector.compile.api import triton_version

    old = "3.6.0"
    if not ready(old) or triton_version() == old:
        missing(f"no ready Triton {old} side environment beside Triton {triton_version()} (scripts/install.sh --test)")
    root = tmp_path / "repo"
    (root / "tools").mkdir(parents=True)
    (root / "tools" / "scale.py").write_text(guard_repo.SCALE)
    out = guard_cli(root, "tools", "--targets", "sm_90", "--tritons", f"{old},{triton_version()}",
                    "--baseline", "guard.json", "--update-baseline")
    assert out.returncode == 0, out.stderr
    assert f"Triton {triton_version()} and {old}" in out.stdout
    entry = json.loads((root / "guard.json").read_text())["kernels"]["tools/scale.py::scale_kernel"]
    assert set(entry) == {"sm_90", f"sm_90@{old}"}
    assert all(e["launchable"] and e["memory"]["load x_ptr"]["bits"] == 128 for e in entry.values())
    again = guard_cli(root, "tools", "--targets", "sm_90", "--tritons", f"{old},{triton_version()}",
                      "--baseline", "guard.json")
    assert again.returncode == 0 and "2 pass" in again.stdout and "2 from the cache" in again.stdout, again.stdout
