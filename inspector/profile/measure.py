"""Measuring a record's launch with the best profiler this machine allows: Nsight Compute (per
line and per instruction, with the kernel's figures), else, where ncu is missing or the GPU's
counters are forbidden to this user, Proton (the kernel's time alone), saying which and why.
The CLI's `profile` and the page's Profile tab both come here.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from ..record import Inspection
from .measured import Profile, build_profile, predict_sectors, proton_profile
from .ncu_details import parse_details_page
from .ncu_source import parse_source_page
from .run_ncu import EarlyRun, NcuPages, ProfileError, profile_program, profile_reproducer
from .run_proton import time_reproducer


# Seconds the profile waits for the sector model once Nsight Compute's measurement is in: the
# model is exact but walks every program of the launch; the gallery's longest walk (the fp32
# matmul's 256 programs x 64 loop steps) fits inside the measurement's own time beside it
# (docs/performance.md#what-a-profile-costs), and an unseen kernel's huge launch still cannot
# hold a profile for minutes.
MODEL_GRACE = 15.0


@dataclass
class OwnLaunch:
    """The user's program whose own launch of the kernel is profiled (`profile --run`): how to run
    it, which launch of the kernel's name is the one recorded, and the kernel file's text."""

    program: list[str]  # what follows `python` (capture.by_running.program_of)
    command: str  # as the user typed it
    skip: int  # launches of the kernel's name before the recorded one
    kernel_file_text: str
    cwd: str | None = None


@dataclass
class Measured:
    profile: Profile
    pages: NcuPages | None  # Nsight Compute's pages, when it was Nsight Compute
    fallback_reason: str = ""  # why Nsight Compute could not, when Proton measured


def measure(rec: Inspection, ncu: str | None = None, early: EarlyRun | None = None,
            own: OwnLaunch | None = None) -> Measured:
    """The profile of `rec`'s reproducer (see the module docstring), carrying the launch's index
    tensors where a capture kept them; or, given `own`, of the user's program's own launch. `early`:
    Nsight Compute already started beside the compile (`run_ncu.EarlyRun`), used when it can give
    this kernel's profile. Raises ProfileError saying why neither profiler could measure it."""
    # The sector model's prediction for the whole launch takes seconds for a big grid: it runs
    # beside Nsight Compute's run (which waits on the GPU and a subprocess) instead of after it,
    # and is waited for MODEL_GRACE seconds at most once the measurement is in.
    model: dict = {}
    stop = threading.Event()

    def predict() -> None:
        started = time.perf_counter()
        model["predicted"] = predict_sectors(rec, stop.is_set)
        model["seconds"] = time.perf_counter() - started

    worker = threading.Thread(target=predict, name="sector-model", daemon=True)
    worker.start()
    data = _carried_bytes(rec)
    try:
        if own is not None:
            pages = profile_program(own.program, rec.compiled_kernel, own.skip, own.kernel_file_text, own.cwd, ncu)
        else:
            pages = early.finish(rec.reproducer, rec.compiled_kernel, data=data) if early is not None else None
            if pages is None:
                pages = profile_reproducer(rec.reproducer, rec.compiled_kernel, ncu, data=data)
    except ProfileError as e:
        stop.set()
        if not e.fallback:
            raise
        try:
            times = time_reproducer(rec.reproducer, rec.compiled_kernel)
        except ProfileError as p:
            raise ProfileError(f"{e}; Proton could not time it either: {p}") from None
        return Measured(proton_profile(rec, times, str(e)), None, str(e))
    try:
        details = parse_details_page(pages.details)
        source = parse_source_page(pages.source)
    except ValueError as e:
        raise ProfileError(f"Nsight Compute's pages could not be read: {e}") from None
    waited = time.perf_counter()
    worker.join(MODEL_GRACE)
    stop.set()  # past the grace: the model stops at its next program and says so
    worker.join()
    waited = time.perf_counter() - waited
    prof = build_profile(rec, source[0], details[0] if details else None, f"ncu {pages.version}", pages.profiled_text,
                         model["predicted"], own.command if own is not None else "")
    prof.seconds = {**pages.seconds, "sector model, beside the run": model["seconds"],
                    "waiting for it after the run": waited}
    return Measured(prof, pages)


def _carried_bytes(rec: Inspection) -> bytes:
    """The launch's carried tensors beside the record's file (inspector.launch_data), b"" if none."""
    from ..launch_data import sidecar

    try:
        with open(sidecar(rec.file), "rb") as f:
            return f.read()
    except OSError:
        return b""
