"""What one benchmark run measures and how, as one record: built once by the caller (the CLI, the
page's bench and autotune views), sent as JSON to the benchmark worker, read by the runner."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any

from .records import parse_size, size_label
from .timing import DEFAULT_REP_MS, DEFAULT_WARMUP_MS

DEFAULT_ROUNDS = 5  # interleaved do_bench rounds per implementation; the median round is kept


@dataclass
class BenchSettings:
    """`check_only` runs the correctness checks without timing (on the CPU through Triton's
    interpreter when there is no GPU, or when `interpret` is True). The PyTorch baseline is compiled
    once per shape (dynamic=False); `dynamic_compile` uses torch.compile's default instead.
    `autotune_config` runs only that config of the files' autotuned kernels; `largest_only` runs
    one point, the first variant at the largest size (together: the autotune grid's times)."""

    sizes: list[Any] | None = None
    variants: list[str] | None = None
    vs: list[str] = field(default_factory=lambda: ["eager", "compile"])
    cudagraph: bool = False
    rep_ms: int = DEFAULT_REP_MS
    warmup_ms: int = DEFAULT_WARMUP_MS
    rounds: int = DEFAULT_ROUNDS
    check_only: bool = False
    interpret: bool | None = None
    dynamic_compile: bool = False
    autotune_config: int | None = None
    largest_only: bool = False

    def __post_init__(self) -> None:
        self.sizes = list(self.sizes) if self.sizes else None
        self.variants = list(self.variants) if self.variants else None
        self.vs = list(self.vs)
        self.rounds = max(int(self.rounds), 1)

    def to_dict(self) -> dict[str, Any]:
        """As JSON for the worker (sizes as their labels, "1024x512")."""
        d = asdict(self)
        d["sizes"] = [size_label(s) for s in self.sizes] if self.sizes else None
        return d

    @staticmethod
    def from_dict(d: dict[str, Any]) -> "BenchSettings":
        known = {f.name for f in fields(BenchSettings)}
        out = BenchSettings(**{k: v for k, v in d.items() if k in known})
        if out.sizes:
            out.sizes = [parse_size(s) if isinstance(s, str) else (tuple(s) if isinstance(s, list) else s)
                         for s in out.sizes]
        return out
