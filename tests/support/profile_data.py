"""Profiles built from Nsight Compute pages recorded on an H100 (tests/fixtures/gpu_measurements/ncu/profile-h100: the
`--raw` output of `python -m inspector profile`, ncu 2025.3.1, driver 580.159.04, Triton 3.6.0)."""

from __future__ import annotations

from paths import REPO

from inspector.profile import Profile, build_profile, parse_details_page, parse_source_page
from inspector.record import Inspection

DATA = REPO / "tests" / "fixtures" / "gpu_measurements" / "ncu" / "profile-h100"


def recorded_profile(name: str, **resource_changes) -> Profile:
    """The profile of recorded launch `name` (add, softmax, strided), its record's resources changed
    as given (to make the model disagree)."""
    d = DATA / name
    rec = Inspection.from_json((d / "record.json").read_text())
    for key, value in resource_changes.items():
        setattr(rec.resources, key, value)
    return build_profile(rec, parse_source_page((d / "source.csv").read_text())[0],
                         parse_details_page((d / "details.csv").read_text())[0], "ncu 2025.3.1",
                         (d / "reproducer.py").read_text())
