"""A measured profile of one launch, joined with its inspection: per kernel-file line and per SASS
instruction what Nsight Compute counted, the kernel's figures, and the static model checked
against the measurement.

`build_profile(rec, source, details)` takes the inspection record of the launch (its stages, its
resources, its occupancy, its predicted sectors) and the two pages Nsight Compute printed for it.
The launch that was profiled is the record's reproducer (`rec.reproducer`: the same kernel, the
same specialisation), whose lines are not the user's file's: each profiled line is mapped back to
the file by its text, nearest to where the kernel's `def` says it should be.

A `Profile` is plain JSON (`to_dict`/`from_dict`): a teammate's profile opens on a laptop
without a GPU (`python -m inspector profile show P.json`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import Any, Callable

from ..record import Inspection
from . import ncu_details as nd
from ..bench.ceilings import ceilings_for_name
from .ncu_source import (DESCRIPTOR_OPCODES, SECTORS, SECTORS_IDEAL, SHARED_WAVEFRONTS, SHARED_WAVEFRONTS_IDEAL,
                         LaunchSource, sass_opcode)
from .rate import measured_rate, place_on_roofline

SAMPLES = "Warp Stall Sampling (All Samples)"
INSTRUCTIONS = "Instructions Executed"
STALL_PREFIX = "stall_"
# a static prediction within this fraction of the measurement agrees with it
TOLERANCE = 0.02


@dataclass
class ProfileLine:
    """One line of the kernel file (or of a helper it inlines), as measured."""

    line: int
    source: str
    samples: int = 0
    share: float = 0.0  # of the launch's stall samples
    stalls: list[tuple[str, int]] = field(default_factory=list)  # top reasons, most samples first
    instructions: int = 0
    sectors: int | None = None
    ideal_sectors: int | None = None
    # shared memory: wavefronts, their ideal and the requests (instructions executed) of its lane-addressed
    # shared instructions (LDS, STS, LDSM, STSM, LDGSTS; not wgmma's descriptor reads)
    shared_wavefronts: int = 0
    shared_ideal: int = 0
    shared_requests: int = 0
    sass: list[dict[str, Any]] = field(default_factory=list)  # address, text, samples, instructions


@dataclass
class Check:
    """The static model against the measurement: what, ours, theirs, and whether they agree."""

    what: str
    predicted: float | None
    measured: float | None
    agrees: bool | None  # None: one side is unknown
    note: str = ""


@dataclass
class Profile:
    kernel: str
    file: str
    target: str
    tool: str  # "ncu 2025.3.1"
    device: str = ""
    figures: dict[str, Any] = field(default_factory=dict)
    lines: list[ProfileLine] = field(default_factory=list)
    checks: list[Check] = field(default_factory=list)
    unmapped: list[str] = field(default_factory=list)  # profiled lines not found in the file
    library_samples: int = 0  # stall samples in Triton's own inlined code (tl.max, tl.sum, ...)
    triton_version: str = ""
    note: str = ""  # what this profile lacks and why (a Proton profile: no per-line counters)
    seconds: dict[str, float] = field(default_factory=dict)  # wall time of each step of taking it
    kernel_stalls: list[tuple[str, int]] = field(default_factory=list)  # Proton's PC sampling: reason, samples
    launch: str = ""  # which launch ran: the program's own (its command), or the reproducer
    # tensors whose contents decide addresses, masks or loop bounds -> where their contents came
    # from ("the program's own", "carried from the capture", "made up")
    data: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @staticmethod
    def from_dict(d: dict[str, Any]) -> "Profile":
        data = dict(d)
        data["lines"] = [ProfileLine(**{**l, "stalls": [tuple(s) for s in l.get("stalls", [])]})
                         for l in d.get("lines", [])]
        data["checks"] = [Check(**c) for c in d.get("checks", [])]
        data["kernel_stalls"] = [tuple(s) for s in d.get("kernel_stalls", [])]
        return Profile(**data)

    def disagreements(self) -> list[Check]:
        return [c for c in self.checks if c.agrees is False]


def _def_line(text: str, kernel: str) -> int | None:
    for i, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith(f"def {kernel}("):
            return i
    return None


def _key(text: str) -> str:
    """A line's text for matching: Nsight Compute's CSV mangles quotes inside the source (`-float("inf")`
    comes out as `-float(inf")`), so quotes and spaces are left out."""
    return "".join(c for c in text if c not in "\"' \t")


def map_lines(user_source: str, profiled_source: str, kernel: str, lines: list[tuple[int, str]]) -> dict[int, int]:
    """Profiled (reproducer) line -> the user's file line with the same text, the one nearest to
    where the kernel's offset puts it; lines with no such text are left out."""
    user = user_source.splitlines()
    offset = (_def_line(user_source, kernel) or 0) - (_def_line(profiled_source, kernel) or 0)
    by_text: dict[str, list[int]] = {}
    for i, text in enumerate(user, 1):
        by_text.setdefault(_key(text), []).append(i)
    out: dict[int, int] = {}
    for no, text in lines:
        if text.strip().startswith("<Unable to open"):  # Nsight Compute had no source: trust the offset
            if 0 < no + offset <= len(user):
                out[no] = no + offset
            continue
        candidates = by_text.get(_key(text))
        if candidates and text.strip():
            out[no] = min(candidates, key=lambda c: abs(c - (no + offset)))
    return out


def _figures(details: nd.LaunchDetails | None, device: str) -> dict[str, Any]:
    if details is None:
        return {}
    pick = {
        "duration": nd.DURATION, "dram_throughput": nd.DRAM_THROUGHPUT, "memory_throughput": nd.MEMORY_THROUGHPUT,
        "compute_throughput": nd.COMPUTE_THROUGHPUT, "memory_bandwidth": nd.MEMORY_BANDWIDTH,
        "registers": nd.REGISTERS, "shared_dynamic": nd.SHARED_DYNAMIC, "shared_static": nd.SHARED_STATIC,
        "waves": nd.WAVES, "theoretical_occupancy": nd.THEORETICAL_OCCUPANCY,
        "achieved_occupancy": nd.ACHIEVED_OCCUPANCY,
    }
    out: dict[str, Any] = {"grid": details.grid, "block": details.block}
    for name, key in pick.items():
        value = details.value(key)
        if value is not None:
            out[name] = {"value": value, "unit": details.unit(key)}
    rate = measured_rate(details)
    if rate is not None:
        ceilings = ceilings_for_name(device)
        out["rate"] = rate if ceilings is None else place_on_roofline(rate, ceilings)
    return out


def _check(what: str, predicted: float | None, measured: float | None, note: str = "",
           tolerance: float = TOLERANCE) -> Check:
    if predicted is None or measured is None:
        return Check(what, predicted, measured, None, note)
    agrees = abs(predicted - measured) <= tolerance * max(abs(measured), 1e-9) + 1e-9
    return Check(what, predicted, measured, agrees, note)


def build_profile(rec: Inspection, source: LaunchSource, details: nd.LaunchDetails | None, tool: str,
                  profiled_text: str, predicted: dict[int, tuple[int, int] | None] | str | None = None,
                  own_launch: str = "") -> Profile:
    """The profile of `rec`'s launch from Nsight Compute's source page (`source`) and details page
    (`details`) of the profiled reproducer, whose text is `profiled_text`; `predicted`: the sector
    model's prediction (`predict_sectors`) when already made, else it is made here. `own_launch`:
    the command whose own launch was profiled ("" when it was the reproducer)."""
    prof = Profile(kernel=rec.kernel, file=rec.file, target=rec.target, tool=tool, device=rec.device_name,
                   figures=_figures(details, rec.device_name), triton_version=rec.triton_version,
                   launch=f"the program's own launch: {own_launch}" if own_launch else "the reproducer")
    prof.data = data_origins(rec, bool(own_launch))
    counted = list(source.lines)
    mapping = map_lines(rec.compiled_source or "", profiled_text, rec.compiled_kernel,
                        [(l.line, l.source) for l in counted])
    if rec.generated is not None:  # a Helion kernel: its generated line -> the Helion line it came from
        user_of = rec.generated.user_of()
        mapping = {k: user_of[v] for k, v in mapping.items() if v in user_of}
    total = sum(int(l.metrics.get(SAMPLES) or 0) for l in counted) or 1
    user_lines = (rec.source or "").splitlines()
    merged: dict[int, ProfileLine] = {}
    for l in counted:
        no = mapping.get(l.line)
        samples = int(l.metrics.get(SAMPLES) or 0)
        if no is None:
            if l.file.replace("\\", "/").find("/triton/language/") >= 0:
                prof.library_samples += samples  # tl.max, tl.sum: Triton's own code, inlined
            elif samples or l.metrics.get(INSTRUCTIONS):
                prof.unmapped.append(f"{l.file}:{l.line}: {l.source.strip()}")
            continue
        entry = merged.setdefault(no, ProfileLine(no, user_lines[no - 1].strip() if no <= len(user_lines) else
                                                  l.source.strip()))  # the file's text (ncu's CSV mangles quotes)
        entry.samples += samples
        entry.instructions += int(l.metrics.get(INSTRUCTIONS) or 0)
        for key, attr in ((SECTORS, "sectors"), (SECTORS_IDEAL, "ideal_sectors")):
            v = l.metrics.get(key)
            if isinstance(v, (int, float)):
                setattr(entry, attr, (getattr(entry, attr) or 0) + int(v))
        stalls = {k[len(STALL_PREFIX):]: int(v) for k, v in l.metrics.items()
                  if k.startswith(STALL_PREFIX) and "(Not Issued)" not in k and isinstance(v, (int, float)) and v}
        for reason, n in stalls.items():
            found = next((i for i, (r, _) in enumerate(entry.stalls) if r == reason), None)
            if found is None:
                entry.stalls.append((reason, n))
            else:
                entry.stalls[found] = (reason, entry.stalls[found][1] + n)
        for _a, text, m in l.sass:
            op = sass_opcode(text)
            if isinstance(m.get(SHARED_WAVEFRONTS), (int, float)) and m[SHARED_WAVEFRONTS] and not op.startswith(
                    DESCRIPTOR_OPCODES):
                entry.shared_wavefronts += int(m[SHARED_WAVEFRONTS])
                entry.shared_ideal += int(m.get(SHARED_WAVEFRONTS_IDEAL) or 0)
                entry.shared_requests += int(m.get(INSTRUCTIONS) or 0)
        entry.sass += [{"address": a, "text": t, "samples": int(m.get(SAMPLES) or 0),
                        "instructions": int(m.get(INSTRUCTIONS) or 0)} for a, t, m in l.sass]
    prof.figures["stall_samples"] = total
    for entry in merged.values():
        entry.share = entry.samples / total
        entry.stalls = sorted(entry.stalls, key=lambda s: -s[1])[:4]
    prof.lines = sorted(merged.values(), key=lambda e: e.line)
    prof.checks = _checks(rec, prof, details, predicted)
    return prof


def predict_sectors(rec: Inspection, stop: Callable[[], bool] | None = None) -> dict[int, tuple[int, int] | None] | str:
    """The sector model's per-line prediction for the whole launch (`analysis.memory.launch_line_sectors`),
    or why it has none. Seconds for a big launch: `measure` runs it beside Nsight Compute's run,
    and `stop` ends it when the measurement has waited long enough."""
    from ..analysis.coalescing import ModelStopped
    from ..analysis.memory import launch_line_sectors

    try:
        predicted = launch_line_sectors(rec, stop)
        if rec.generated is None:
            return predicted
        on_user_lines: dict[int, tuple[int, int] | None] = {}  # a Helion line sums its generated lines
        user_of = rec.generated.user_of()
        for line, sectors in predicted.items():
            user = user_of.get(line)
            if user is None:
                continue
            before = on_user_lines.get(user, (0, 0))
            on_user_lines[user] = None if sectors is None or before is None else \
                (before[0] + sectors[0], before[1] + sectors[1])
        return on_user_lines
    except ModelStopped as e:
        return f"the model did not finish in time for this launch of {_programs(rec)} programs ({e})"
    except Exception as e:  # noqa: BLE001 - a kernel the sector model does not cover
        return str(e) or type(e).__name__


def data_origins(rec: Inspection, own_launch: bool) -> dict[str, str]:
    """Where the contents of each tensor that decides an address, a mask or a loop bound came from
    in the launch profiled: the program's own run, the capture (carried bit-exact beside the
    reproducer, inspector.launch_data), or made up by the reproducer."""
    from ..analysis.memory import launch_memory, line_data_inputs

    carried = launch_memory(rec)
    out = {}
    for name in sorted(set().union(*line_data_inputs(rec).values())):
        if own_launch:
            out[name] = "the program's own"
        elif carried is not None and name in carried.arrays:
            out[name] = "carried from the capture"
        else:
            out[name] = "made up (zeros)"
    return out


def _programs(rec: Inspection) -> str:
    n = 1
    for g in rec.grid or [1]:
        n *= int(g)
    return f"{n:,}"


def _reported_floor(rec: Inspection) -> int | None:
    """The fewest registers per thread Nsight Compute reports on the record's GPU (NVIDIA)."""
    from ..hardware.architectures import nvidia_limits

    if rec.backend != "cuda" or not isinstance(rec.arch, int):
        return None
    try:
        return nvidia_limits(rec.arch).reported_registers_floor
    except (KeyError, ValueError):
        return None


def _checks(rec: Inspection, prof: Profile, details: nd.LaunchDetails | None,
            predicted: dict[int, tuple[int, int] | None] | str | None) -> list[Check]:
    """Our registers, shared memory, theoretical occupancy and sectors per line against the
    measurement; a disagreement is a fidelity warning, never hidden."""
    out: list[Check] = []
    if details is not None:
        regs, note = rec.resources.registers, ""
        floor = _reported_floor(rec)
        if regs is not None and floor and regs < floor:
            regs, note = floor, f"the compiler's {rec.resources.registers}; Nsight Compute reads at least {floor}"
        out.append(_check("registers per thread", regs, details.value(nd.REGISTERS), note, tolerance=0))
        shared = details.value(nd.SHARED_DYNAMIC)
        unit = details.unit(nd.SHARED_DYNAMIC)
        scale = {"byte": 1, "kbyte": 1000, "mbyte": 1_000_000}.get(unit.split("/")[0].lower(), 1)
        # Nsight Compute rounds KB to two decimals: within 10 bytes is the same amount
        measured = None if shared is None else shared * scale
        out.append(Check("dynamic shared memory (bytes)", rec.resources.shared_bytes, measured,
                         None if measured is None else abs(rec.resources.shared_bytes - measured) <= 10,
                         f"Nsight Compute prints {unit}"))
        occ = (rec.occupancy or {}).get("occupancy")
        out.append(_check("theoretical occupancy (%)", None if occ is None else occ * 100,
                          details.value(nd.THEORETICAL_OCCUPANCY)))
    out += _shared_checks(rec, prof)
    if predicted is None:
        predicted = predict_sectors(rec)
    if isinstance(predicted, str):
        return out + [Check("sectors per line", None, None, None, f"not predicted: {predicted}")]
    from ..analysis.memory import line_data_inputs

    dependent = line_data_inputs(rec)
    for line in prof.lines:
        if line.sectors is None:
            continue
        guess = predicted.get(line.line)
        note = f"line {line.line}: {line.source}"
        made_up = sorted(n for n in dependent.get(line.line, ()) if prof.data.get(n, "").startswith("made up"))
        if made_up:
            # the GPU ran this line on values nobody chose: neither figure says anything of the user's launch
            out.append(Check(f"L2 sectors, line {line.line}", None if guess is None else guess[0], line.sectors, None,
                             f"{note}: not comparable, its addresses depend on the contents of "
                             f"{', '.join(made_up)}, made up in this launch (profile the program's own launch: "
                             f"profile --run COMMAND)"))
            continue
        if guess is None and not line.sectors:
            continue  # no global memory access on this line, and none predicted
        if guess is None:
            out.append(Check(f"L2 sectors, line {line.line}", None, line.sectors, None,
                             note + " (the model does not predict this line)"))
        else:
            out.append(_check(f"L2 sectors, line {line.line}", guess[0], line.sectors, note))
    return out


def _shared_checks(rec: Inspection, prof: Profile) -> list[Check]:
    """Shared wavefronts per request, per line, against the model (shared_memory.py). The model
    counts each instruction once; Nsight Compute weights each by how often it ran. Where a line
    mixes instructions that ran different numbers of times (a loop's and its prologue's) the two
    per-request figures differ even with no conflict anywhere: the check then compares the
    conflicts themselves (wavefronts over their ideal) and says so."""
    from ..analysis.memory import memory_report

    model: dict[int, list[float]] = {}
    for acc in memory_report(rec).shared:
        if acc.shared_wavefronts is not None:
            weight = acc.instructions - acc.unknown
            m = model.setdefault(acc.line, [0.0, 0.0, 0])
            m[0] += acc.shared_wavefronts * weight
            m[1] += (acc.ideal_shared_wavefronts or 0) * weight
            m[2] += weight
    out = []
    for line in prof.lines:
        if not line.shared_requests:
            continue
        what = f"shared wavefronts per request, line {line.line}"
        measured = line.shared_wavefronts / line.shared_requests
        ideal = line.shared_ideal / line.shared_requests
        note = f"line {line.line}: {line.source} (measured ideal {ideal:.3g})"
        guess = model.get(line.line)
        if not guess or not guess[2]:
            out.append(Check(what, None, measured, None,
                             note + ": the model has no shared instruction it can follow on this line"))
            continue
        check = _check(what, guess[0] / guess[2], measured, note)
        if not check.agrees and guess[1] and ideal:
            ours, theirs = guess[0] / guess[1], measured / ideal
            if abs(ours - theirs) <= TOLERANCE * theirs:
                check = Check(what, guess[0] / guess[2], measured, True,
                              f"{note}: the line's instructions ran different numbers of times (the model counts "
                              f"each once); their conflicts agree: {ours:.3g} vs {theirs:.3g} wavefronts per ideal one")
        out.append(check)
    return out


def rank_by_cost(findings: list[Any], prof: Profile) -> list[Any]:
    """The advisor's findings in the order the measurement gives them: by the share of the stall
    samples on their lines, so a harmless finding sinks and the real bottleneck leads. A finding on
    lines that cost nothing measurable goes below every finding that costs something, whatever its
    static severity; a whole-kernel finding (occupancy, grid) keeps its static place between them.
    Each finding on measured lines comes back as a copy with the measurement in its evidence."""
    share = {l.line: l.share for l in prof.lines}

    def cost(f: Any) -> float | None:
        lines = f.lines or ([f.line] if f.line else [])
        return sum(share.get(n, 0.0) for n in lines) if lines else None

    ranked = []
    for i, f in enumerate(findings):
        c = cost(f)
        if c is not None:  # a copy: the advisor's own findings (memoised per record) stay as they were
            f = replace(f, evidence=[*f.evidence, f"measured: {c * 100:.1f}% of the stall samples on "
                                     f"{'this line' if len(f.lines or [f.line]) == 1 else 'these lines'} ({prof.tool})"])
        # groups: costly line findings, whole-kernel findings, then line findings that cost nothing
        group = 0 if c and c >= 0.01 else 1 if c is None else 2
        ranked.append((group, -(c or 0.0), i, f))
    return [f for *_, f in sorted(ranked, key=lambda t: t[:3])]


def proton_profile(rec: Inspection, times: Any, why: str) -> Profile:
    """The profile Proton gives where Nsight Compute cannot run (`why`): the kernel's duration, the
    mean of the timed launches (`run_proton.ProtonTimes`), and where its PC sampling ran, the
    warps' stall reasons over the whole kernel; no per-line counters, no checks."""
    figures: dict[str, Any] = {"duration": {"value": times.mean_ns / 1000, "unit": "us"},
                               "launches_timed": {"value": times.launches, "unit": ""}}
    if times.samples:
        figures["pc_samples"] = {"value": times.samples, "unit": ""}
    sampled = "kernel time and, from PC sampling, the stall reasons over the whole kernel" if times.samples else \
        f"kernel time only ({times.sampling_note})"
    return Profile(kernel=rec.kernel, file=rec.file, target=rec.target,
                   tool=f"Proton (Triton {times.triton_version}, CUPTI kernel times"
                        + (", PC sampling)" if times.samples else ")"),
                   device=rec.device_name or "", figures=figures, triton_version=rec.triton_version,
                   kernel_stalls=list(times.stalls),
                   note=f"{sampled}: the per-line counters and the checks need Nsight Compute ({why})")
