"""`python -m inspector bench`: check and time kernels against PyTorch, or show recorded results.

    bench softmax                              every size and variant, vs eager and torch.compile
    bench softmax --variant bf16 --sizes 16384x1024 16384x4096 --vs eager
    bench all --json --out results/            every bundled kernel, one JSON file each
    bench my_kernels.py --sizes 2^20,2^24      a user's file (see "A user's file" below)
    bench gelu --check                         correctness only; GPU-free through Triton's interpreter
    bench gelu --recorded                      the results recorded on a real GPU (assets/bench)

Exit status: 0 when everything asked for was checked and timed (or, without a GPU, recorded
results were shown); 1 when a check failed or a kernel could not run; 2 on usage errors; 3 when
there is no GPU and nothing recorded to show.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from typing import Any

from inspector.bench.client import DEFAULT_TIMEOUT, run_benchmarks
from inspector.bench.protocol import bundled_kernels, resolve, ProtocolError
from inspector.bench.shipped import RECORDED_DIR, recorded_kernels, recorded_result
from inspector.bench.records import BenchResult, Point, Sweep, parse_size, save_result
from inspector.bench.settings import BenchSettings
from inspector.bench.timing import DEFAULT_REP_MS, DEFAULT_WARMUP_MS

EPILOG = """\
A user's file follows the same protocol as the bundled kernels: module-level
  launch(*inputs, **variant)            run the Triton kernel, return its output
  make_inputs(size, device, **variant)  a tuple of fresh random input tensors
  reference(*inputs, **variant)         the correct output, computed with PyTorch
  SIZES = [...]                         ints or tuples, swept in order
and optionally flops(size, **variant) and bytes_moved(size, **variant) (for TFLOP/s, GB/s and
the roofline), baseline(*inputs, **variant) (PyTorch as one would write it, timed as "eager"
and "compile"; else reference is timed), TOLERANCE = dict(atol=, rtol=) (default 1e-3 each),
VARIANTS = {name: kwargs}, VARIANT_TOLERANCE, TEST_SIZES (for --check), TITLE, SIZE_NAMES.

Each size is checked before it is timed: an implementation whose output is not within
atol + rtol*|ref| of the reference everywhere (NaN fails) is not timed. Times are medians with
20th/80th percentiles of CUDA-graph replays cycling through input copies larger than the L2 cache
(every call reads its inputs from device memory), 5 interleaved rounds (docs/benchmarks.md).
The sweep runs in a separate worker process.
"""


# ---- progress ---------------------------------------------------------------------------------
class ProgressBar:
    """A one-line text progress bar on a stream (stderr); one line per finished size when not a TTY."""

    def __init__(self, stream: Any = None, width: int = 28):
        self.stream = stream or sys.stderr
        self.width = width
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.start = time.monotonic()
        self._last_done = -1
        self._drawn = False

    def __call__(self, done: int, total: int, message: str) -> None:
        elapsed = time.monotonic() - self.start
        if total <= 0:
            self._line(f"{message}", newline=not self.tty)
            return
        filled = int(self.width * done / total)
        bar = "#" * filled + "-" * (self.width - filled)
        text = f"[{bar}] {done}/{total} {elapsed:5.0f}s  {message}"
        if self.tty:
            cols = shutil.get_terminal_size((100, 20)).columns
            self._line(text[: cols - 1], newline=False)
        elif done != self._last_done:
            self._line(text, newline=True)
        self._last_done = done

    def _line(self, text: str, newline: bool) -> None:
        if self.tty:
            self.stream.write("\r\x1b[K" + text + ("\n" if newline else ""))
            self._drawn = not newline
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self.tty and self._drawn:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self._drawn = False


# ---- human output --------------------------------------------------------------------------------
def _fmt(v: float | None, spec: str = ".4g") -> str:
    return "-" if v is None else format(v, spec)


def _row(p: Point, impls: list[str]) -> list[str]:
    check = p.check("triton")
    status = "ok" if check and check.ok else ("FAIL" if check else "error")
    t = p.timing("triton")
    cells = [p.label, status]
    if t:
        cells += [
            f"{t.median_ms:.4g} [{t.p20_ms:.4g}, {t.p80_ms:.4g}]",
            _fmt(t.gbps, ",.0f"),
            _fmt(t.tflops, ".3g"),
        ]
    else:
        cells += ["-", "-", "-"]
    for impl in impls:
        other = p.timing(impl)
        if other is None:
            c = p.check(impl)
            cells += ["FAIL" if c and not c.ok else "-", "-"]
        else:
            cells += [f"{other.median_ms:.4g}", f"{other.median_ms / t.median_ms:.2f}x" if t else "-"]
    return cells


def sweep_table(sweep: Sweep, vs: list[str]) -> str:
    """A sweep as aligned text: size, check, Triton's time and rates, each baseline's time and speed-up."""
    impls = [i for i in ("eager", "compile") if i in vs]
    head = ["size", "check", "triton ms [p20, p80]", "GB/s", "TFLOP/s"]
    for impl in impls:
        head += [f"{impl} ms", "speed-up"]
    rows = [head] + [_row(p, impls) for p in sweep.points]
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    lines = [
        "  " + "  ".join(c.rjust(w) if i > 1 else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths)))
        for r in rows
    ]
    notes = []
    for p in sweep.points:
        for impl, why in p.errors.items():
            notes.append(f"  ! {p.label} {impl}: {why.splitlines()[0] if why else ''}")
    return "\n".join(lines + notes)


def describe(result: BenchResult) -> str:
    """A result as text: provenance, device, ceilings, then one table per variant."""
    out = [f"{result.kernel}: {result.title} ({result.source}), {result.provenance()}"]
    if result.recorded and result.recorded_path:
        out[0] += f" [{result.recorded_path}]"
    if result.device:
        out.append(f"  device: {result.device.summary()}")
    c = result.ceilings
    if c:
        out.append(
            f"  ceilings (measured): copy {c.copy_gbps:,.0f} GB/s, "
            f"bf16 matmul {c.matmul_tflops:,.0f} TFLOP/s, "
            f"ridge {c.ridge:.0f} FLOP/B"
        )
    if result.settings.get("baseline") == "reference":
        out.append("  PyTorch side: the file's reference (it defines no baseline)")
    vs = list(result.settings.get("vs", []))
    for sweep in result.sweeps:
        if sweep.variant:
            params = ", ".join(f"{k}={v}" for k, v in sweep.params.items())
            out.append(f"variant {sweep.variant}" + (f" ({params})" if params else ""))
        out.append(sweep_table(sweep, vs))
    if result.error:
        out.append(f"  error ({result.error.kind}): {result.error.message.strip()}")
    return "\n".join(out)


def check_table(result: BenchResult) -> str:
    """For --check: each size's check per implementation, with relative errors."""
    out = [
        f"{result.kernel}: {result.title} ({result.source}), correctness check"
        + (" through Triton's interpreter (CPU)" if result.settings.get("interpreter") else "")
    ]
    for sweep in result.sweeps:
        if sweep.skipped:
            out.append(f"  {sweep.variant}: skipped ({sweep.skipped})")
        for p in sweep.points:
            cells = []
            for c in p.checks:
                err = "-" if c.rel_error is None else f"{c.rel_error:.2e}"
                cells.append(f"{c.impl} {'ok' if c.ok else 'FAIL'} (rel {err})")
            name = f"{sweep.variant} " if sweep.variant else ""
            out.append(f"  {name}{p.label}: " + ", ".join(cells))
            for impl, why in p.errors.items():
                out.append(f"    ! {impl}: {why.splitlines()[0] if why else ''}")
    if result.error:
        out.append(f"  error ({result.error.kind}): {result.error.message.strip()}")
    return "\n".join(out)


def _failed(result: BenchResult) -> bool:
    if result.error is not None:
        return True
    return any(not c.ok for s in result.sweeps for p in s.points for c in p.checks) or any(
        "inputs" in p.errors for s in result.sweeps for p in s.points
    )


def _rel(path: Any) -> str:
    try:
        return os.path.relpath(path)
    except ValueError:
        return str(path)


# ---- the command -----------------------------------------------------------------------------------
def _split(values: list[str] | None) -> list[str]:
    return [v.strip() for item in values or [] for v in item.split(",") if v.strip()]


def _out_path(ns: argparse.Namespace, result: BenchResult, several: bool) -> str:
    """--out is the file for one kernel, the folder for several (or when it names a folder)."""
    if several or ns.out.endswith(os.sep) or os.path.isdir(ns.out):
        return os.path.join(ns.out, f"{result.kernel}.json")
    return ns.out


def _emit(results: list[BenchResult], ns: argparse.Namespace, text: Any, write: bool = True) -> None:
    """Print (human or --json) and, when `write`, save to --out."""
    if ns.out and write:
        for r in results:
            save_result(r, _out_path(ns, r, len(results) > 1))
    if ns.json:
        payload: Any = results[0].to_dict() if len(results) == 1 else [r.to_dict() for r in results]
        print(json.dumps(payload, indent=1))
    else:
        print("\n\n".join(text(r) for r in results))


def cmd_bench(ns: argparse.Namespace) -> int:
    if ns.list:
        recorded = set(recorded_kernels())
        for name in bundled_kernels():
            print(
                name + (f"  (recorded: {_rel(RECORDED_DIR / (name + '.json'))})" if name in recorded else "")
            )
        return 0
    if not ns.targets:
        print("error: name a bundled kernel, a file, or all (see --list)", file=sys.stderr)
        return 2
    targets = bundled_kernels() if ns.targets == ["all"] else list(ns.targets)
    for t in targets:
        try:
            resolve(t)
        except ProtocolError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    try:
        sizes = [parse_size(s) for s in _split(ns.sizes)] or None
    except ValueError as exc:
        print(f"error: --sizes: {exc}", file=sys.stderr)
        return 2
    vs = [] if ns.vs.strip().lower() in ("", "none") else _split([ns.vs])
    bad = [v for v in vs if v not in ("eager", "compile")]
    if bad:
        print(f"error: --vs takes eager and/or compile (or none), not {', '.join(bad)}", file=sys.stderr)
        return 2

    if ns.recorded:
        return _show_recorded(targets, ns, live_failed=None)

    bar = None if ns.no_progress else ProgressBar()

    def save(result: BenchResult) -> None:
        # Written as each kernel finishes, so a long sweep that is stopped keeps what it measured.
        if ns.out and not (result.error and result.error.kind == "no_gpu"):
            save_result(result, _out_path(ns, result, len(targets) > 1))

    try:
        settings = BenchSettings(sizes=sizes, variants=_split(ns.variant) or None, vs=vs, cudagraph=ns.cudagraph,
                                 rep_ms=ns.rep, warmup_ms=ns.warmup, check_only=ns.check,
                                 interpret=True if ns.interpret else None, dynamic_compile=ns.dynamic_compile)
        results = run_benchmarks(targets, settings, timeout=ns.timeout, progress=bar, on_result=save)
    finally:
        if bar:
            bar.close()

    no_gpu = [r for r in results if r.error and r.error.kind == "no_gpu"]
    if no_gpu and len(no_gpu) == len(results):
        return _show_recorded(targets, ns, live_failed=results)
    _emit(results, ns, check_table if ns.check else describe, write=False)
    return 1 if any(_failed(r) for r in results) else 0


def _show_recorded(names: list[str], ns: argparse.Namespace, live_failed: list[BenchResult] | None) -> int:
    """Recorded results instead of live ones (asked for, or because there is no GPU)."""
    found: list[BenchResult] = []
    missing: list[str] = []
    for t in names:
        name, path, bundled = resolve(t)
        rec = recorded_result(name) if bundled else None
        (found.append(rec) if rec else missing.append(name))
    if live_failed is not None:
        for r in found:
            device = r.device.name if r.device else "an unknown device"
            print(
                f"no GPU: showing recorded results from {r.recorded_path}, "
                f"measured on {device} on {r.date[:10]}",
                file=sys.stderr,
            )
        if missing:
            print(
                f"no GPU: nothing can be timed here, and {', '.join(missing)} has no recorded results. "
                f"Recorded results of the bundled kernels are in {_rel(RECORDED_DIR)}/ "
                "(python -m inspector bench NAME --recorded); "
                "--check runs the correctness check on the CPU.",
                file=sys.stderr,
            )
    elif missing:
        print(
            f"no recorded results for {', '.join(missing)} "
            f"(recorded: {', '.join(recorded_kernels()) or 'none'})",
            file=sys.stderr,
        )
    if not found:
        return 3 if live_failed is not None else 1
    _emit(found, ns, describe)
    return 0 if not missing else (3 if live_failed is not None else 1)


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "bench",
        help="check and time kernels against PyTorch eager and torch.compile (needs a GPU)",
        description="Check each size against the reference, then time it (CUDA-graph replays, cold L2); "
        "compare with PyTorch eager and torch.compile; GB/s, TFLOP/s and the device's measured "
        "ceilings. Without a GPU, shows the results recorded in assets/bench.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "targets",
        nargs="*",
        metavar="KERNEL_OR_FILE",
        help="a bundled kernel's name (softmax), a file following the protocol, or all",
    )
    p.add_argument(
        "--sizes",
        nargs="+",
        metavar="SIZE",
        help="sizes instead of the file's SIZES: 4096 2^20 16384x1024 (comma or space separated)",
    )
    p.add_argument(
        "--variant", action="append", metavar="NAME", help="only these variants (repeat or comma-separate)"
    )
    p.add_argument(
        "--vs",
        default="eager,compile",
        metavar="LIST",
        help="PyTorch implementations to compare with: eager, compile, both (default) or none",
    )
    p.add_argument(
        "--cudagraph", action="store_true", help="also time by CUDA-graph replay (do_bench_cudagraph)"
    )
    p.add_argument(
        "--dynamic-compile",
        action="store_true",
        help="torch.compile the baseline with its default dynamic-shape handling (a graph for "
        "dynamic shapes from the second size on) instead of once per shape (dynamic=False)",
    )
    p.add_argument(
        "--rep",
        type=int,
        default=DEFAULT_REP_MS,
        metavar="MS",
        help=f"timed replays per round, in ms (default {DEFAULT_REP_MS})",
    )
    p.add_argument(
        "--warmup",
        type=int,
        default=DEFAULT_WARMUP_MS,
        metavar="MS",
        help=f"warm-up replays per round, in ms (default {DEFAULT_WARMUP_MS})",
    )
    p.add_argument(
        "--check",
        action="store_true",
        help="check correctness only (TEST_SIZES unless --sizes); without a GPU through Triton's "
        "CPU interpreter",
    )
    p.add_argument(
        "--interpret", action="store_true", help="with --check: use the interpreter even with a GPU"
    )
    p.add_argument("--recorded", action="store_true", help="show the recorded results instead of measuring")
    p.add_argument(
        "--list", action="store_true", help="list the bundled kernels and which have recorded results"
    )
    p.add_argument("--json", action="store_true", help="print the result record(s) as JSON")
    p.add_argument(
        "--out",
        metavar="FILE_OR_DIR",
        help="write the result as JSON to FILE (several kernels: DIR/<kernel>.json)",
    )
    p.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT,
        help=f"seconds before the benchmark worker is stopped (default {DEFAULT_TIMEOUT:g})",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    p.set_defaults(func=cmd_bench)
