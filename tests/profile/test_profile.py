"""Profiles: Nsight Compute's pages recorded on an H100 (`python -m inspector profile ... --raw`,
ncu 2025.3.1, driver 580.159.04, Triton 3.6.0) joined with the inspection of the same launch,
read back on this GPU-free machine; and the real command on a GPU."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from paths import KERNELS, REPO
from profile_data import DATA, recorded_profile

from inspector.profile import Profile, parse_details_page
from inspector.profile import ncu_details as nd

def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "inspector", *args], capture_output=True, text=True, cwd=REPO,
                          timeout=600)


def test_the_details_page_is_read_by_name_with_units():
    (launch,) = parse_details_page((DATA / "add" / "details.csv").read_text())
    assert launch.kernel == "add_kernel" and launch.grid == "(4, 1, 1)" and launch.block == "(128, 1, 1)"
    assert launch.value(nd.REGISTERS) == 26 and launch.unit(nd.DURATION) == "us"
    assert launch.value(nd.THEORETICAL_OCCUPANCY) == 100
    with pytest.raises(ValueError, match="Metric Name"):
        parse_details_page((DATA / "add" / "source.csv").read_text())


def test_a_strided_copy_shows_where_the_time_goes_and_the_sectors_it_wastes():
    prof = recorded_profile("strided")
    hot = max(prof.lines, key=lambda l: l.samples)
    source = (KERNELS / "copy_coalesced_vs_strided.py").read_text().splitlines()
    assert source[hot.line - 1].strip() == hot.source  # mapped back to the file, not the reproducer
    assert "* stride" in hot.source and hot.share > 0.9
    assert {r for r, _ in hot.stalls[:2]} == {"drain", "long_sb"}  # waiting on memory
    assert hot.sectors == 1_179_648 and hot.ideal_sectors == 262_144  # 4.5x the sectors the bytes need
    assert hot.sass and any("LDG" in s["text"] for s in hot.sass)
    assert prof.figures["duration"]["unit"] == "us" and prof.figures["registers"]["value"] == 28
    # the static model agrees with the measurement, line by line
    assert all(c.agrees for c in prof.checks), [(c.what, c.predicted, c.measured) for c in prof.checks]
    assert any(c.what == "L2 sectors, line 44" and c.predicted == c.measured == 1_179_648 for c in prof.checks)


def test_lines_inside_triton_s_library_are_counted_apart_and_every_file_line_maps():
    prof = recorded_profile("softmax")
    assert prof.library_samples > 0 and not prof.unmapped
    source = json.loads((DATA / "softmax" / "record.json").read_text())["source"].splitlines()  # the file recorded
    for line in prof.lines:
        assert source[line.line - 1].strip() == line.source
    assert sum(l.share for l in prof.lines) == pytest.approx(1 - prof.library_samples / prof.figures["stall_samples"])


def test_a_disagreement_is_a_fidelity_warning():
    prof = recorded_profile("add", registers=40)
    bad = prof.disagreements()
    assert [c.what for c in bad] == ["registers per thread"] and bad[0].measured == 26


def test_a_saved_profile_opens_without_a_gpu(tmp_path):
    prof = recorded_profile("strided")
    saved = tmp_path / "strided.profile.json"
    saved.write_text(json.dumps(prof.to_dict()))
    assert Profile.from_dict(json.loads(saved.read_text())) == prof
    shown = _cli("profile", "show", str(saved))
    assert shown.returncode == 0, shown.stderr
    assert "copy_strided_kernel on NVIDIA H100" in shown.stdout and "ok   L2 sectors, line 44" in shown.stdout
    assert "97.9%" in shown.stdout or "98.0%" in shown.stdout
    bad = _cli("profile", "show", str(KERNELS / "add.py"))
    assert bad.returncode == 1 and "is not a profile" in bad.stderr


def test_without_a_gpu_the_command_says_so():
    run = _cli("profile", str(KERNELS / "add.py"))
    assert run.returncode == 1 and "no native GPU" in run.stderr


@pytest.mark.gpu
def test_profiling_a_kernel_on_the_gpu(tmp_path):
    from inspector.profile.run_ncu import find_ncu

    if find_ncu() is None:
        pytest.skip("Nsight Compute is not installed on this GPU machine")
    out = tmp_path / "p.json"
    run = _cli("profile", str(KERNELS / "copy_coalesced_vs_strided.py"), "--kernel", "copy_strided_kernel",
               "--out", str(out))
    assert run.returncode == 0, run.stderr[-2000:]
    prof = Profile.from_dict(json.loads(out.read_text()))
    hot = max(prof.lines, key=lambda l: l.samples)
    assert "* stride" in hot.source and hot.sectors > 4 * hot.ideal_sectors
    assert not prof.disagreements(), [(c.what, c.predicted, c.measured) for c in prof.disagreements()]
    rate = prof.figures["rate"]  # a copy: bytes moved, no floating-point arithmetic
    assert rate["flop"] == 0 and rate["dram_bytes"] > 0 and rate["seconds"] > 0 and rate["dram_gbps"] > 0
    assert "Roofline point" in run.stdout and "a pure data-movement kernel" in run.stdout
    # Nsight Compute started beside the compile (jailed, the runner waiting for its reproducer)
    assert {"Nsight Compute run, after the compile (started beside it)", "its two pages printed",
            "in all"} <= set(prof.seconds)
    print(f"\nprofile of copy_strided_kernel: " + ", ".join(f"{k} {v:.1f} s" for k, v in prof.seconds.items()))


def test_findings_are_ranked_by_what_the_measurement_says_they_cost():
    from inspector.analysis import Finding
    from inspector.profile.measured import rank_by_cost

    prof = recorded_profile("strided")  # line 44 holds 97.9% of the stall samples, line 41 0.2%
    harmless = Finding("scalar_access", "high", 9.0, 41, "line 41: ...", lines=[41])
    costly = Finding("uncoalesced_access", "low", 1.0, 44, "line 44: ...", lines=[44])
    kernel_wide = Finding("grid_small", "medium", 5.0, None, "the grid ...")
    nowhere = Finding("conversion", "high", 8.0, 12, "line 12: ...", lines=[12])  # no samples at all
    ranked = rank_by_cost([harmless, nowhere, kernel_wide, costly], prof)
    assert [f.code for f in ranked] == ["uncoalesced_access", "grid_small", "scalar_access", "conversion"]
    assert ranked[0].evidence[-1].startswith("measured: 97.9% of the stall samples on this line")
    assert costly.evidence == []  # the advisor's findings are not changed: ranked ones are copies


def test_explain_takes_a_saved_profile(tmp_path):
    saved = tmp_path / "strided.json"
    saved.write_text(json.dumps(recorded_profile("strided").to_dict()))
    run = _cli("explain", str(KERNELS / "copy_coalesced_vs_strided.py"), "--kernel", "copy_strided_kernel",
               "--target", "sm_90", "--profile", str(saved))
    assert run.returncode == 0, run.stderr
    first = run.stdout.split("Findings", 1)[1].split("\n  2.", 1)[0]
    assert "line 44" in first and "measured: 97.9% of the stall samples on this line" in first


def test_without_nsight_compute_the_message_says_what_to_install(monkeypatch, tmp_path):
    from inspector.profile import run_ncu

    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("NCU", raising=False)
    monkeypatch.setattr(run_ncu, "NCU_PATHS", ())
    with pytest.raises(run_ncu.ProfileError, match="Nsight Compute .ncu. is not installed here"):
        run_ncu.profile_reproducer("pass", "k")


def test_forbidden_counters_say_what_to_change(tmp_path):
    from inspector.profile import run_ncu

    fake = tmp_path / "ncu"  # what Nsight Compute prints without the permission, and its status
    fake.write_text("#!/bin/sh\n[ \"$1\" = --version ] && { echo 'Version 2025.3.1.0'; exit 0; }\n"
                    "echo '==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU "
                    "Performance Counters on the target device 0.'\nexit 1\n")
    fake.chmod(0o755)
    with pytest.raises(run_ncu.ProfileError) as err:
        run_ncu.profile_reproducer("def example(device):\n    pass\n", "k", ncu=str(fake), jailed=False)
    assert "ERR_NVGPUCTRPERM" in str(err.value) and "NVreg_RestrictProfilingToAdminUsers=0" in str(err.value)


def _forbidding_ncu(tmp_path):
    fake = tmp_path / "ncu"  # what Nsight Compute prints without the permission, and its status
    fake.write_text("#!/bin/sh\n[ \"$1\" = --version ] && { echo 'Version 2025.3.1.0'; exit 0; }\n"
                    "echo '==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU "
                    "Performance Counters on the target device 0.'\nexit 1\n")
    fake.chmod(0o755)
    return str(fake)


def test_forbidden_counters_fall_back_to_proton_and_say_both_reasons(sandbox, tmp_path):
    """GPU-free: Nsight Compute refuses (a fake binary printing its real message), Proton is tried
    and cannot run without a GPU; the error names what to change for each."""
    from inspector.compile.api import inspect_kernel
    from inspector.profile.measure import measure
    from inspector.profile.run_ncu import ProfileError

    rec = inspect_kernel(KERNELS / "add.py", target="sm_90", sandbox=sandbox)
    assert rec.reproducer
    with pytest.raises(ProfileError) as err:
        measure(rec, ncu=_forbidding_ncu(tmp_path))
    text = str(err.value)
    assert "NVreg_RestrictProfilingToAdminUsers=0" in text and "Proton could not time it either" in text, text


def test_a_proton_session_tree_gives_the_kernel_s_launches_and_time():
    """A session tree Proton wrote on the H200 (tests/fixtures/gpu_measurements/proton/, see its README)."""
    from inspector.profile.run_proton import kernel_times

    tree = json.loads((REPO / "tests" / "fixtures" / "gpu_measurements" / "proton" / "add_kernel.hatchet").read_text())
    launches, total = kernel_times(tree, "add_kernel")
    assert launches == 20 and total > 0
    assert kernel_times(tree, "no_such_kernel") == (0, 0.0)


def test_proton_s_pc_sampling_gives_the_kernel_s_stall_reasons():
    """A PC sampling session tree Proton wrote on the H100 (tests/fixtures/gpu_measurements/proton/, see its README),
    and the profile and words made of it where Nsight Compute could not run."""
    from inspector.cli.profile import format_profile
    from inspector.profile.measured import proton_profile
    from inspector.profile.run_proton import ProtonTimes, kernel_stalls
    from inspector.record import Inspection

    tree = json.loads((REPO / "tests" / "fixtures" / "gpu_measurements" / "proton" / "copy_strided_kernel-pcsampling.hatchet").read_text())
    samples, stalls = kernel_stalls(tree, "copy_strided_kernel")
    assert samples == 84_875 and sum(n for _, n in stalls) == 43_119
    assert [r for r, _ in stalls[:3]] == ["long_scoreboard", "drain", "lg_throttle"]  # waiting on memory
    assert all(n > 0 for _, n in stalls) and kernel_stalls(tree, "other") == (0, [])
    rec = Inspection(kernel="copy_strided_kernel", file="kernels/copy_coalesced_vs_strided.py", target="sm_90",
                     device_name="NVIDIA H100 80GB HBM3")
    prof = proton_profile(rec, ProtonTimes(20, 16_400.0, "3.6.0", stalls, samples), "ncu is not installed here")
    assert prof.tool == "Proton (Triton 3.6.0, CUPTI kernel times, PC sampling)" and not prof.lines
    words = "\n".join(format_profile(Profile.from_dict(json.loads(json.dumps(prof.to_dict())))))
    assert "PC sampling: 84,875 samples, 51% of them stalled" in words
    assert "long_scoreboard 34%, drain 33%, lg_throttle 29%" in words
    assert "the per-line counters and the checks need Nsight Compute (ncu is not installed here)" in words
    unsampled = proton_profile(rec, ProtonTimes(20, 16_400.0, "3.6.0", sampling_note="PC sampling did not run: x"),
                               "why")
    assert unsampled.note.startswith("kernel time only (PC sampling did not run: x)") and not unsampled.kernel_stalls


@pytest.mark.gpu
def test_where_counters_are_forbidden_proton_times_the_kernel(tmp_path):
    from inspector.compile.api import inspect_kernel
    from inspector.profile.measure import measure

    rec = inspect_kernel(KERNELS / "add.py", target="native")
    got = measure(rec, ncu=_forbidding_ncu(tmp_path))
    assert got.pages is None and "ERR_NVGPUCTRPERM" in got.fallback_reason
    duration = got.profile.figures["duration"]
    assert duration["unit"] == "us" and duration["value"] > 0 and got.profile.figures["launches_timed"]["value"] == 20
    # PC sampling (root here, so CUPTI allows it): the warps' stall reasons over the whole kernel
    assert got.profile.kernel_stalls and got.profile.figures["pc_samples"]["value"] > 0, got.profile.note
    print(f"\nProton on {rec.device_name}: add_kernel {duration['value']:.2f} us (mean of 20 launches); "
          f"PC sampling {got.profile.figures['pc_samples']['value']} samples, {got.profile.kernel_stalls[:3]}")


def test_a_kernel_under_16_registers_agrees_with_nsight_compute_s_floor():
    """An fp16 copy the driver gives 14 registers: Nsight Compute reads 16 (its Registers Per Thread
    never reads below 16, recorded on the H100), so the check compares against that floor and says so."""
    prof = recorded_profile("copy_f16")
    check = next(c for c in prof.checks if c.what == "registers per thread")
    assert check.agrees and check.predicted == check.measured == 16
    assert "the compiler's 14" in check.note and "at least 16" in check.note
    # 16 and more are compared as they are (the add kernel: 26 measured, 40 made up disagrees)
    assert recorded_profile("add", registers=40).disagreements()[0].measured == 26
