"""The checking process (`python -m inspector.fixes.check_run REQUEST.json RESULT.json`), started
jailed by `inspector.fixes.check` with TRITON_INTERPRET=1: runs the file's `example()` once as
written and once per candidate, on the CPU under Triton's interpreter with the stand-in device
(tensors asked for on `cuda` live on the CPU with their data), and writes, per candidate, whether
its kernel's launches left the same tensors as the original's (`checked`) and which of its
`tl.multiple_of` promises the real values broke.

Every run starts from the same seed, and fresh `torch.empty` memory is zeroed, so two runs of the
same code give the same outputs; floats are compared with a tolerance that a changed summation
order stays within: `RTOL` of each value, and `ATOL` of the tensor's largest magnitude (a value
near zero that sums 1024 products of size 30 differs by 1e-5 when the tile order changes).
"""

from __future__ import annotations

import contextlib
import importlib.util
import inspect
import json
import os
import random
import shutil
import signal
import sys
import tempfile
import traceback
from typing import Any, Iterator

RTOL, ATOL = 1e-4, 1e-5


@contextlib.contextmanager
def _zeroed_empty() -> Iterator[None]:
    """torch.empty and friends give zeros: an output's unwritten (masked-off) elements then match."""
    import torch

    names = ("empty", "empty_like", "empty_strided")
    saved = {n: getattr(torch, n) for n in names}

    def zeroing(f: Any) -> Any:
        def made(*a: Any, **k: Any) -> Any:
            t = f(*a, **k)
            if isinstance(t, torch.Tensor) and t.device.type != "meta":
                with torch.no_grad():
                    t.zero_()
            return t
        return made

    for n, f in saved.items():
        setattr(torch, n, zeroing(f))
    try:
        yield
    finally:
        for n, f in saved.items():
            setattr(torch, n, f)


class _Timeout(Exception):
    pass


def _alarm(seconds: float) -> Any:
    def fire(*_: Any) -> None:
        raise _Timeout()
    signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, seconds)


def text_module(path: str, source: str, label: str) -> tuple[Any, Any, str]:
    """(module, spec, file): `source` written as a copy of `path` in a fresh folder, its module made
    and registered under a unique name (`label`), not yet executed."""
    folder = tempfile.mkdtemp(prefix=f"inspector-{label}-")
    name = os.path.splitext(os.path.basename(path))[0]
    file = os.path.join(folder, f"{name}.py")
    with open(file, "w", encoding="utf-8") as f:
        f.write(source)
    # a reproducer's launch data (`<name>.data.npz` beside it: a run's index tensors) goes with it,
    # or its example() would make up zeros and every promise about them would hold
    from .. import launch_data

    if os.path.exists(launch_data.sidecar(path)):
        shutil.copyfile(launch_data.sidecar(path), launch_data.sidecar(file))
    spec = importlib.util.spec_from_file_location(f"_inspector_{label}_{name}", file)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules[spec.name] = module  # type: ignore[union-attr]
    return module, spec, file


def run_example(module: Any, spec: Any) -> None:
    """Execute the module and call its `example` (with "cuda" when it takes a device)."""
    spec.loader.exec_module(module)
    example = getattr(module, "example", None)
    if not callable(example):
        raise LookupError("the file has no example() to run")
    example("cuda") if inspect.signature(example).parameters else example()


def _run_one(path: str, source: str, kernel: str, index: int, seconds: float) -> dict[str, Any]:
    """Run one text's example(); the launches of `kernel` with their tensors, promises broken."""
    import numpy as np
    import torch

    from ..triton_compat.interpreter_checks import watching

    module, spec, file = text_module(path, source, f"check{index}")
    module_name = spec.name
    torch.manual_seed(0)
    random.seed(0)
    np.random.seed(0)
    out: dict[str, Any] = {"launches": [], "broken": [], "promises": 0, "error": None}
    watch: Any = None
    try:
        with watching() as watch, _zeroed_empty():
            _alarm(seconds)
            try:
                run_example(module, spec)
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
    except Exception as e:  # the user's code: any failure is a result
        chain, c = [], e  # the interpreter wraps what a kernel raised (our alarm too) in InterpreterError
        while c is not None and len(chain) < 8:
            chain.append(c)
            c = c.__cause__ or c.__context__
        if any(isinstance(x, _Timeout) for x in chain) or "_Timeout" in str(e):
            out["error"] = f"the example ran longer than {seconds:.0f} s under the interpreter"
            return _finish(out, watch, file, kernel, module_name)
        tb = traceback.extract_tb(e.__traceback__)
        where = next((f"line {fr.lineno}" for fr in reversed(tb) if fr.filename == file), "")
        out["error"] = f"{type(e).__name__}: {e}".strip()[:600] + (f" ({where})" if where else "")
    return _finish(out, watch, file, kernel, module_name)


def _finish(out: dict[str, Any], watch: Any, file: str, kernel: str, module_name: str) -> dict[str, Any]:
    sys.modules.pop(module_name, None)
    if watch is None:  # the interpreter could not be watched (Triton failed to import)
        return out
    out["launches"] = [tensors for k, tensors in watch.launches if k == kernel]
    out["broken"] = [{"line": b.line, "multiple": b.multiple, "value": b.value, "programs": b.count, "broke": b.broke}
                     for b in watch.broken.values() if os.path.basename(b.file) == os.path.basename(file)]
    out["promises"] = watch.promises
    return out


def _same(a: list[list[Any]], b: list[list[Any]]) -> tuple[bool, str]:
    import torch

    if len(a) != len(b):
        return False, f"{len(b)} launches of the kernel where the original made {len(a)}"
    for i, (ta, tb) in enumerate(zip(a, b)):
        if len(ta) != len(tb):
            return False, f"launch {i + 1}: {len(tb)} tensor arguments where the original had {len(ta)}"
        for j, (x, y) in enumerate(zip(ta, tb)):
            if x.shape != y.shape or x.dtype != y.dtype:
                return False, f"launch {i + 1}, tensor argument {j + 1}: {tuple(y.shape)} {y.dtype} " \
                              f"where the original had {tuple(x.shape)} {x.dtype}"
            if x.is_floating_point() or x.is_complex():
                scale = float(x.double().abs().nan_to_num(0, 0, 0).max()) if x.numel() else 0.0
                ok = torch.allclose(x.double(), y.double(), rtol=RTOL, atol=ATOL * max(1.0, scale), equal_nan=True)
            else:
                ok = torch.equal(x, y)
            if not ok:
                diff = (x.double() - y.double()).abs()
                return False, (f"launch {i + 1}, tensor argument {j + 1}: {int((diff > ATOL).sum())} of "
                               f"{x.numel()} values differ (largest difference {float(diff.max()):.3g})")
    return True, ""


def main(argv: list[str]) -> int:
    request_path, result_path = argv
    with open(request_path, encoding="utf-8") as f:
        req = json.load(f)
    from ..worker.stand_in_device import stand_in_device
    from ..hardware.targets import parse_target

    sys.path.insert(0, os.path.dirname(os.path.abspath(req["file"])))
    results: list[dict[str, Any]] = []
    with stand_in_device(parse_target(req["target"]), tensors="cpu"):
        base = _run_one(req["file"], req["original"], req["kernel"], 0, req["seconds"])
        if base["error"] or not base["launches"]:
            why = base["error"] or f"the example launched no {req['kernel']}"
            results = [{"checked": None, "why": f"the original could not be run: {why}", "broken": [],
                        "promises": 0} for _ in req["candidates"]]
        else:
            for i, text in enumerate(req["candidates"], 1):
                got = _run_one(req["file"], text, req["kernel"], i, req["seconds"])
                if got["error"]:
                    checked, why = (None if "longer than" in got["error"] else False), got["error"]
                else:
                    checked, why = _same(base["launches"], got["launches"])
                results.append({"checked": checked, "why": why, "broken": got["broken"], "promises": got["promises"]})
    with open(result_path, "w", encoding="utf-8") as f:
        json.dump({"results": results}, f)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
