"""`profile`'s shared-memory check on kernels measured on an H100 (tests/fixtures/gpu_measurements/ncu/shared-h100: the
`--raw` output of `python -m inspector profile`, ncu 2025.3.1, Triton 3.6.0): a published GEMM the
project had never opened (gemlite's `gemm_INT_kernel`, as packaged on PyPI) and the gallery's
Gluon transpose."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from paths import REPO

from inspector.profile import build_profile, parse_details_page, parse_source_page
from inspector.record import Inspection

DATA = REPO / "tests" / "fixtures" / "gpu_measurements" / "ncu" / "shared-h100"


def _profile(name: str, sectors: bool = True):
    """`sectors=False` leaves the sector model out (a GEMM's whole launch takes it minutes here)."""
    d = DATA / name
    rec = Inspection.from_json((d / "record.json").read_text())
    return build_profile(rec, parse_source_page((d / "source.csv").read_text())[0],
                         parse_details_page((d / "details.csv").read_text())[0], "ncu 2025.3.1",
                         (d / "reproducer.py").read_text(), predicted=None if sectors else "left out by the test")


def _shared(prof) -> dict[int, tuple]:
    return {int(c.what.rsplit(" ", 1)[1]): (c.predicted, c.measured, c.agrees)
            for c in prof.checks if c.what.startswith("shared wavefronts")}


def test_an_unseen_gemm_has_the_8_way_conflict_the_model_predicted():
    checks = _shared(_profile("gemlite", sectors=False))
    assert checks[452] == (8.0, 8.0, True)  # the B tile's stores through shared memory: 8-way
    assert checks[494] == (4.0, 4.0, True)
    assert all(agrees for _, _, agrees in checks.values())


def test_the_gluon_pair_measured_and_its_global_sectors_too():
    prof = _profile("transpose")
    assert _shared(prof) == {55: (4.0, 4.0, True), 56: (8.0, 8.0, True)}
    # a Gluon kernel has no TTIR: the sector model takes each access's width from the PTX
    sectors = [c for c in prof.checks if c.what.startswith("L2 sectors")]
    assert len(sectors) == 2 and all(c.agrees and c.measured == 2097152 for c in sectors)


@pytest.mark.gpu
def test_the_pair_profiled_on_this_gpu_agrees_with_the_model(tmp_path):
    """Natively: both halves of the gallery's transpose pair under Nsight Compute; every shared line's
    wavefronts equal the model's, 8 per read unswizzled and 1 swizzled."""
    from inspector.profile import Profile
    from inspector.profile.run_ncu import find_ncu

    if find_ncu() is None:
        pytest.skip("Nsight Compute is not installed on this GPU machine")
    got = {}
    for swizzle in ("False", "True"):
        out = tmp_path / f"p{swizzle}.json"
        run = subprocess.run([sys.executable, "-m", "inspector", "profile", str(REPO / "kernels" / "transpose_shared_gluon.py"),
                              "--kernel", "transpose_kernel", "--const", f"SWIZZLE={swizzle}", "--target", "native",
                              "--out", str(out)], capture_output=True, text=True, cwd=REPO, timeout=900)
        assert run.returncode == 0, run.stderr[-2000:]
        got[swizzle] = _shared(Profile.from_dict(json.loads(out.read_text())))
        print(f"\nSWIZZLE={swizzle}: " + ", ".join(f"line {k}: {p:g} predicted, {m:g} measured"
                                                 for k, (p, m, _) in sorted(got[swizzle].items())))
    assert all(a for checks in got.values() for _, _, a in checks.values())
    assert max(p for p, _, _ in got["False"].values()) == 8 and max(p for p, _, _ in got["True"].values()) == 1
