"""Benchmark result records: what a sweep measured, as dataclasses with a JSON round trip.

One `BenchResult` per kernel file: the device and software it ran on, the device's measured
ceilings, the settings, and one `Sweep` per variant, each a list of `Point`s (one per size) that
hold the correctness checks and every timing. The CLI's `--json` output and the recorded files in
assets/bench are `BenchResult.to_dict()`; plots and the roofline read these records only.

Units: times in milliseconds, bandwidth in GB/s (10^9 bytes per second, bytes read plus bytes
written), arithmetic rate in TFLOP/s (10^12 per second).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field, fields
from typing import Any

# Bump when the meaning or shape of a field changes.
SCHEMA_VERSION = 1

Size = int | tuple[int, ...]

# Implementations a point can time. "triton" is the kernel's `launch`; "eager" the PyTorch
# baseline as written; "compile" the same baseline through torch.compile.
IMPLS = ("triton", "eager", "compile")
# How a time was taken: "do_bench" is the primary timing (the name kept from the files recorded
# when it was Triton's do_bench; `Timing.timer` says which timer took it); "cudagraph" is
# Triton's do_bench_cudagraph (replays of a captured graph, no flush), on request.
METHODS = ("do_bench", "cudagraph")
# Timers of the primary timing: "graph" (timing.bench_graph_time: CUDA-graph replays cycling
# through input copies larger than the L2 cache), "events" (timing.bench_gpu_time: do_bench's
# events around each call after an L2 flush; what a call that cannot be captured gets). Files
# recorded before timers were named have none: "events".
TIMERS = ("graph", "events")


def size_label(size: Size) -> str:
    """4096 -> '4096'; (16384, 1024) -> '16384x1024'."""
    if isinstance(size, (tuple, list)):
        return "x".join(str(int(s)) for s in size)
    return str(int(size))


def parse_size(text: str) -> Size:
    """The inverse of `size_label`; powers may be written 2^20 or 2**20: '16384x2^10' -> (16384, 1024)."""
    values = []
    for part in text.strip().lower().replace("**", "^").split("x"):
        if "^" in part:
            base, exp = part.split("^", 1)
            values.append(int(base) ** int(exp))
        else:
            values.append(int(part))
    if any(v < 0 for v in values):
        raise ValueError(f"not a size: {text!r}")
    return values[0] if len(values) == 1 else tuple(values)


def _size_to_json(size: Size) -> int | list[int]:
    return [int(s) for s in size] if isinstance(size, (tuple, list)) else int(size)


def _size_from_json(value: Any) -> Size:
    return tuple(int(v) for v in value) if isinstance(value, list) else int(value)


def field_dict(record: Any) -> dict[str, Any]:
    """A dataclass record's fields by name, in their order (values as they are, not copied)."""
    return {f.name: getattr(record, f.name) for f in fields(record)}


@dataclass
class Timing:
    """One implementation timed at one size: the median and the 20th/80th percentiles."""

    impl: str  # one of IMPLS
    method: str  # one of METHODS
    median_ms: float
    p20_ms: float
    p80_ms: float
    gbps: float | None = None  # bytes_moved / median time
    tflops: float | None = None  # flops / median time
    timer: str | None = None  # one of TIMERS, for the primary method

    def to_dict(self) -> dict[str, Any]:
        d = field_dict(self)
        if self.timer is None:
            del d["timer"]  # files recorded before timers were named have none
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Timing":
        return cls(
            impl=d["impl"],
            method=d.get("method", "do_bench"),
            median_ms=d["median_ms"],
            p20_ms=d["p20_ms"],
            p80_ms=d["p80_ms"],
            gbps=d.get("gbps"),
            tflops=d.get("tflops"),
            timer=d.get("timer"),
        )


@dataclass
class Check:
    """An implementation's output compared with the reference at one size, on fresh random inputs."""

    impl: str
    ok: bool
    atol: float
    rtol: float
    max_abs_error: float | None = None
    rel_error: float | None = None  # ||out - ref|| / ||ref|| (Frobenius norms, in float64)
    mismatched: int = 0  # elements outside atol + rtol * |ref| (NaN counts)
    total: int = 0
    message: str = ""  # why it failed, or an exception's text

    def to_dict(self) -> dict[str, Any]:
        return field_dict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Check":
        return cls(
            impl=d["impl"],
            ok=d["ok"],
            atol=d["atol"],
            rtol=d["rtol"],
            max_abs_error=d.get("max_abs_error"),
            rel_error=d.get("rel_error"),
            mismatched=d.get("mismatched", 0),
            total=d.get("total", 0),
            message=d.get("message", ""),
        )


@dataclass
class Point:
    """One size of a sweep: the kernel's work, its checks, and the timings of what passed."""

    size: Size
    flops: int | None = None
    bytes_moved: int | None = None
    checks: list[Check] = field(default_factory=list)
    timings: list[Timing] = field(default_factory=list)
    errors: dict[str, str] = field(default_factory=dict)  # impl -> why it has no timing

    @property
    def label(self) -> str:
        return size_label(self.size)

    @property
    def intensity(self) -> float | None:
        """Arithmetic intensity, FLOP per byte of device memory traffic."""
        if not self.flops or not self.bytes_moved:
            return None
        return self.flops / self.bytes_moved

    def check(self, impl: str = "triton") -> Check | None:
        return next((c for c in self.checks if c.impl == impl), None)

    def timing(self, impl: str = "triton", method: str = "do_bench") -> Timing | None:
        return next((t for t in self.timings if t.impl == impl and t.method == method), None)

    def to_dict(self) -> dict[str, Any]:
        return dict(
            size=_size_to_json(self.size),
            label=self.label,
            flops=self.flops,
            bytes_moved=self.bytes_moved,
            checks=[c.to_dict() for c in self.checks],
            timings=[t.to_dict() for t in self.timings],
            errors=dict(self.errors),
        )

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Point":
        return cls(
            size=_size_from_json(d["size"]),
            flops=d.get("flops"),
            bytes_moved=d.get("bytes_moved"),
            checks=[Check.from_dict(c) for c in d.get("checks", [])],
            timings=[Timing.from_dict(t) for t in d.get("timings", [])],
            errors=dict(d.get("errors", {})),
        )


@dataclass
class Sweep:
    """One variant of a kernel over its sizes. `variant` is "" for a file without VARIANTS."""

    variant: str = ""
    params: dict[str, str] = field(default_factory=dict)  # the variant's keyword arguments, as text
    points: list[Point] = field(default_factory=list)
    skipped: str = ""  # why the variant was not run (e.g. the CPU interpreter cannot), else ""

    def impls(self, method: str = "do_bench") -> list[str]:
        """Implementations with at least one timing, in IMPLS order."""
        have = {t.impl for p in self.points for t in p.timings if t.method == method}
        return [i for i in IMPLS if i in have]

    def to_dict(self) -> dict[str, Any]:
        return dict(
            variant=self.variant,
            params=dict(self.params),
            points=[p.to_dict() for p in self.points],
            skipped=self.skipped,
        )

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Sweep":
        return cls(
            variant=d.get("variant", ""),
            params=dict(d.get("params", {})),
            points=[Point.from_dict(p) for p in d.get("points", [])],
            skipped=d.get("skipped", ""),
        )


def size_axis(sweep: Sweep, size_names: list[str] | None = None) -> tuple[list[float], str, bool]:
    """A numeric x for a sweep's sizes: (values, axis title, is a byte count).

    Integer sizes are used as they are. For tuples, the one component that varies (the columns
    of (16384, n)), or the common value when all components vary together ((n, n, n)); otherwise
    the bytes moved.
    """
    sizes = [p.size for p in sweep.points]
    names = list(size_names or [])
    if all(isinstance(s, int) for s in sizes):
        return [float(s) for s in sizes], (names[0] if names else "size"), False
    tuples = [tuple(s) if isinstance(s, (tuple, list)) else (s,) for s in sizes]
    width = len(tuples[0]) if tuples else 0
    if tuples and all(len(t) == width for t in tuples):
        varying = [i for i in range(width) if len({t[i] for t in tuples}) > 1]
        if len(varying) == 1:
            i = varying[0]
            return [float(t[i]) for t in tuples], (names[i] if i < len(names) else f"size[{i}]"), False
        if len(varying) > 1 and all(len({t[i] for i in varying}) == 1 for t in tuples):
            title = " = ".join(names[i] for i in varying) if len(names) >= width else "size"
            return [float(t[varying[0]]) for t in tuples], title, False
        if not varying and all(len(set(t)) == 1 for t in tuples):
            title = " = ".join(names) if len(names) == width else "size"
            return [float(t[0]) for t in tuples], title, False
    if all(p.bytes_moved for p in sweep.points):
        return [float(p.bytes_moved or 0) for p in sweep.points], "bytes moved", True
    return [float(j) for j in range(len(sizes))], "size (index)", False


@dataclass
class DeviceInfo:
    """The GPU and software a result was measured with."""

    name: str
    sm_count: int | None = None  # multiprocessors (compute units on AMD)
    capability: str | None = None  # "9.0"; gfx name on AMD
    memory_bytes: int | None = None
    l2_bytes: int | None = None
    driver: str | None = None  # the kernel driver's version, as nvidia-smi prints it
    cuda_driver: str | None = None  # the CUDA version the driver supports (cuDriverGetVersion)
    cuda_runtime: str | None = None  # torch.version.cuda
    hip: str | None = None  # torch.version.hip
    torch: str | None = None
    triton: str | None = None
    python: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return field_dict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "DeviceInfo":
        known = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in d.items() if k in known})

    def summary(self) -> str:
        parts = [self.name]
        if self.sm_count:
            parts.append(f"{self.sm_count} SMs")
        versions = (("driver", self.driver), ("CUDA", self.cuda_runtime), ("HIP", self.hip), ("torch", self.torch),
                    ("Triton", self.triton))
        parts += [f"{what} {version}" for what, version in versions if version]
        return ", ".join(parts)


@dataclass
class Ceilings:
    """The device's measured limits: a large device-to-device copy and a large bf16 matmul."""

    copy_gbps: float  # bytes read + bytes written per second / 1e9
    matmul_tflops: float  # dense bf16 2*n^3 / time / 1e12
    copy_bytes: int  # bytes read + written by one timed copy
    matmul_n: int  # the product was n x n x n
    device: str = ""
    measured: str = ""  # ISO date-time (UTC)
    trials: dict[str, float] = field(default_factory=dict)  # every size tried: "copy 1024 MiB" -> GB/s

    @property
    def ridge(self) -> float:
        """The arithmetic intensity (FLOP/byte) where the two roofs meet."""
        return self.matmul_tflops * 1e3 / self.copy_gbps

    def to_dict(self) -> dict[str, Any]:
        return dict(field_dict(self), trials=dict(self.trials))

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Ceilings":
        return cls(
            copy_gbps=d["copy_gbps"],
            matmul_tflops=d["matmul_tflops"],
            copy_bytes=d.get("copy_bytes", 0),
            matmul_n=d.get("matmul_n", 0),
            device=d.get("device", ""),
            measured=d.get("measured", ""),
            trials=dict(d.get("trials", {})),
        )


@dataclass
class BenchError:
    """Why a benchmark has no sweep: no_gpu | load | protocol | timeout | cancelled | crashed | internal."""

    kind: str
    message: str

    def to_dict(self) -> dict[str, Any]:
        return dict(kind=self.kind, message=self.message)


@dataclass
class BenchResult:
    """Everything one benchmark of one kernel file measured."""

    kernel: str  # the bundled kernel's name, or the file's stem
    title: str = ""
    source: str = ""  # "kernels/softmax.py" for bundled kernels, else the file's path
    date: str = ""  # ISO date-time (UTC) the sweep started
    device: DeviceInfo | None = None
    ceilings: Ceilings | None = None
    settings: dict[str, Any] = field(
        default_factory=dict
    )  # rep_ms, warmup_ms, vs, cudagraph, check_only, ...
    size_names: list[str] = field(default_factory=list)  # the file's SIZE_NAMES: ["rows", "columns"]
    sweeps: list[Sweep] = field(default_factory=list)
    error: BenchError | None = None
    # Set when the record was read from a recorded file rather than measured now.
    recorded: bool = False
    recorded_path: str = ""
    schema: int = SCHEMA_VERSION

    def sweep(self, variant: str | None = None) -> Sweep:
        """The sweep of `variant` (the first sweep when None)."""
        if not self.sweeps:
            raise KeyError(f"{self.kernel}: no sweeps")
        if variant is None:
            return self.sweeps[0]
        for s in self.sweeps:
            if s.variant == variant:
                return s
        raise KeyError(f"{self.kernel}: no variant {variant!r}; have {[s.variant for s in self.sweeps]}")

    @property
    def variants(self) -> list[str]:
        return [s.variant for s in self.sweeps]

    def provenance(self) -> str:
        """'recorded on DEVICE on DATE' (a shipped result) or 'measured on DEVICE on DATE'."""
        how = "recorded" if self.recorded else "measured"
        name = self.device.name if self.device else "no device"
        return f"{how} on {name} on {self.date[:10] or 'an unknown date'}"

    def to_dict(self) -> dict[str, Any]:
        return dict(
            schema=self.schema,
            kernel=self.kernel,
            title=self.title,
            source=self.source,
            date=self.date,
            device=self.device.to_dict() if self.device else None,
            ceilings=self.ceilings.to_dict() if self.ceilings else None,
            settings=dict(self.settings),
            size_names=list(self.size_names),
            sweeps=[s.to_dict() for s in self.sweeps],
            error=self.error.to_dict() if self.error else None,
            recorded=self.recorded,
            recorded_path=self.recorded_path,
        )

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "BenchResult":
        err = d.get("error")
        return cls(
            kernel=d["kernel"],
            title=d.get("title", ""),
            source=d.get("source", ""),
            date=d.get("date", ""),
            device=DeviceInfo.from_dict(d["device"]) if d.get("device") else None,
            ceilings=Ceilings.from_dict(d["ceilings"]) if d.get("ceilings") else None,
            settings=dict(d.get("settings", {})),
            size_names=list(d.get("size_names", [])),
            sweeps=[Sweep.from_dict(s) for s in d.get("sweeps", [])],
            error=BenchError(err["kind"], err["message"]) if err else None,
            recorded=bool(d.get("recorded", False)),
            recorded_path=d.get("recorded_path", ""),
            schema=int(d.get("schema", SCHEMA_VERSION)),
        )

    def to_json(self, indent: int | None = 1) -> str:
        return json.dumps(self.to_dict(), indent=indent)

    @classmethod
    def from_json(cls, text: str) -> "BenchResult":
        return cls.from_dict(json.loads(text))


def save_result(result: BenchResult, path: str | os.PathLike) -> None:
    """Write one result as JSON (folders created as needed)."""
    folder = os.path.dirname(os.fspath(path))
    if folder:
        os.makedirs(folder, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(result.to_json())
        f.write("\n")


def load_result(path: str | os.PathLike) -> BenchResult:
    """Read a result written by `save_result` (or by `python -m inspector bench --out`)."""
    with open(path, encoding="utf-8") as f:
        return BenchResult.from_json(f.read())
