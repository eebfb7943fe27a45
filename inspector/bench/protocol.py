"""The benchmark protocol: what a kernel file defines so that it can be checked and timed.

Bundled kernels (kernels/<name>.py) and users' files speak the same protocol: plain module-level
names in the kernel's own file.

Required
    launch(*inputs, **variant)        run the Triton kernel on the inputs; return its output
                                      (a tensor, or a tuple of tensors)
    make_inputs(size, device, **variant) -> tuple of tensors   fresh random inputs of one size
    reference(*inputs, **variant)     the correct output, computed by PyTorch (upcasting to fp32 or
                                      fp64 inside is fine: it is only used to check)
    SIZES                             the sizes to sweep: ints (elements) or tuples ((rows, cols))

Optional
    flops(size, **variant) -> int     arithmetic operations; without it no TFLOP/s and no roofline
    bytes_moved(size, **variant) -> int   fewest bytes that must cross device memory (each input
                                      read once, each output written once); without it no GB/s
    baseline(*inputs, **variant)      the same operation as PyTorch code would write it, in the
                                      inputs' own dtype (`a @ b`, `torch.softmax(x, -1)`): timed as
                                      "eager" and through torch.compile as "compile". Without it,
                                      `reference` is timed, which may upcast and so run slower.
    TOLERANCE = dict(atol=..., rtol=...)   default atol = rtol = 1e-3
    VARIANTS = {"bf16": {"dtype": torch.bfloat16}, ...}   keyword arguments passed to every
                                      function above; each variant is its own sweep
    VARIANT_TOLERANCE = {"bf16": dict(atol=..., rtol=...)}   per-variant tolerance
    TEST_SIZES                        small sizes for the GPU-free check (`bench --check`)
    TITLE                             a human name
    SIZE_NAMES = ("rows", "columns")  what a size's components mean (axis titles)
    INTERPRETER_SKIP = {variant: reason}   variants Triton's CPU interpreter cannot run: the
                                      GPU-free check skips them (they are checked on a GPU)

A function that does not accept one of a variant's keywords is called without it. The output is
checked elementwise: |out - ref| <= atol + rtol * |ref|, NaN never passes.

This module's top half (finding files) imports neither torch nor Triton; `load_spec` imports the
file and so runs only inside the benchmark worker process.
"""

from __future__ import annotations

import inspect
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ..places import PACKAGE_PARENT as REPO_ROOT, gallery_dir

BUNDLED_DIR = gallery_dir()
DEFAULT_TOLERANCE = dict(atol=1e-3, rtol=1e-3)
REQUIRED = ("launch", "make_inputs", "reference", "SIZES")
_DEF = re.compile(r"^(?:def\s+(\w+)\s*\(|(\w+)\s*(?::[^=]*)?=)", re.MULTILINE)


class ProtocolError(Exception):
    """The file does not define what the benchmark protocol needs."""


def _top_level_names(path: Path) -> set[str]:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return set()
    return {a or b for a, b in _DEF.findall(text)}


def bundled_kernels() -> list[str]:
    """Names of the bundled kernels that follow the protocol (kernels/<name>.py), sorted."""
    if not BUNDLED_DIR.is_dir():
        return []
    names = []
    for path in sorted(BUNDLED_DIR.glob("*.py")):
        if path.stem.startswith("_"):
            continue
        if set(REQUIRED) <= _top_level_names(path):
            names.append(path.stem)
    return names


def resolve(target: str) -> tuple[str, Path, bool]:
    """A bundled kernel's name or a file's path -> (name, absolute path, bundled?).

    Raises ProtocolError when neither exists.
    """
    candidate = Path(target)
    if candidate.suffix == ".py" or os.sep in target or candidate.exists():
        if not candidate.is_file():
            raise ProtocolError(f"no such file: {target}")
        path = candidate.resolve()
        bundled = path.parent == BUNDLED_DIR.resolve()
        return path.stem, path, bundled
    path = BUNDLED_DIR / f"{target}.py"
    if path.is_file():
        return target, path.resolve(), True
    known = ", ".join(bundled_kernels()) or "none found"
    raise ProtocolError(f"{target!r} is neither a file nor a bundled kernel (bundled: {known})")


def display_source(path: Path) -> str:
    """'kernels/softmax.py' for files inside the repository, else the absolute path."""
    try:
        return str(path.resolve().relative_to(REPO_ROOT))
    except ValueError:
        return str(path)


# ---- loaded files (worker process only) ---------------------------------------------------
def accepted_kwargs(fn: Callable, kwargs: dict[str, Any]) -> dict[str, Any]:
    """The subset of `kwargs` that `fn` takes (all of them if it takes **kwargs)."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return dict(kwargs)
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return dict(kwargs)
    return {k: v for k, v in kwargs.items() if k in params}


def call(fn: Callable, *args: Any, **variant: Any) -> Any:
    """Call a protocol function with the variant keywords it accepts."""
    return fn(*args, **accepted_kwargs(fn, variant))


def bind(fn: Callable, *args: Any, **variant: Any) -> Callable[[], Any]:
    """`call` as a no-argument closure, the signature read once: timed calls pay no inspection."""
    kwargs = accepted_kwargs(fn, variant)
    return lambda: fn(*args, **kwargs)


def takes_out(fn: Callable) -> bool:
    """Whether `launch` accepts an `out=` buffer (then the check poisons it first)."""
    try:
        return "out" in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


@dataclass
class KernelSpec:
    """A loaded kernel file's protocol functions and data."""

    name: str
    path: Path
    bundled: bool
    title: str
    launch: Callable
    make_inputs: Callable
    reference: Callable
    sizes: list[Any]
    test_sizes: list[Any]
    baseline: Callable | None = None
    flops: Callable | None = None
    bytes_moved: Callable | None = None
    variants: dict[str, dict[str, Any]] = field(default_factory=dict)
    tolerance: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_TOLERANCE))
    variant_tolerance: dict[str, dict[str, float]] = field(default_factory=dict)
    size_names: list[str] = field(default_factory=list)
    interpreter_skip: dict[str, str] = field(default_factory=dict)

    def tolerance_for(self, variant: str) -> dict[str, float]:
        tol = dict(DEFAULT_TOLERANCE)
        tol.update(self.tolerance)
        tol.update(self.variant_tolerance.get(variant, {}))
        return {"atol": float(tol["atol"]), "rtol": float(tol["rtol"])}

    def select_variants(self, names: list[str] | None) -> list[tuple[str, dict[str, Any]]]:
        """[(name, kwargs)] for the named variants (all when None); ("", {}) without VARIANTS."""
        if not self.variants:
            if names and names != [""]:
                raise ProtocolError(f"{self.name} has no VARIANTS; asked for {', '.join(names)}")
            return [("", {})]
        if not names:
            return list(self.variants.items())
        missing = [n for n in names if n not in self.variants]
        if missing:
            raise ProtocolError(
                f"{self.name} has no variant {', '.join(missing)}; variants: {', '.join(self.variants)}"
            )
        return [(n, self.variants[n]) for n in names]


def pin_autotune_config(module: Any, index: int) -> None:
    """Keep only config `index` of the file's autotuned kernels, so every launch runs that config
    (Triton's autotuner does not benchmark a single config)."""
    from .. import triton_compat as tc

    tuners = tc.autotuners_in(vars(module))
    if not tuners:
        raise ProtocolError(f"{module.__name__} has no autotuned kernel; there is no config {index} to pin")
    for tuner in tuners:
        if not 0 <= index < len(tuner.configs):
            raise ProtocolError(f"autotune config {index} out of range: the kernel has {len(tuner.configs)} configs")
        tuner.configs = [tuner.configs[index]]
        tuner.cache = {}


def load_spec(target: str, autotune_config: int | None = None) -> KernelSpec:
    """Import the kernel file (runs its code: worker process only) and read its protocol;
    with `autotune_config`, its autotuned kernels run that config only."""
    from inspector.worker.kernel_file import load_module

    name, path, bundled = resolve(target)
    module = load_module(str(path))
    if autotune_config is not None:
        pin_autotune_config(module, autotune_config)
    missing = [n for n in REQUIRED if not hasattr(module, n)]
    if missing:
        raise ProtocolError(
            f"{display_source(path)} does not define {', '.join(missing)}; a benchmarked file "
            "needs launch, make_inputs, reference and SIZES (see `python -m inspector bench -h`)"
        )
    sizes = list(module.SIZES)
    return KernelSpec(
        name=name,
        path=path,
        bundled=bundled,
        title=str(getattr(module, "TITLE", name)),
        launch=module.launch,
        make_inputs=module.make_inputs,
        reference=module.reference,
        sizes=sizes,
        test_sizes=list(getattr(module, "TEST_SIZES", sizes[:1])),
        baseline=getattr(module, "baseline", None),
        flops=getattr(module, "flops", None),
        bytes_moved=getattr(module, "bytes_moved", None),
        variants=dict(getattr(module, "VARIANTS", None) or {}),
        tolerance=dict(getattr(module, "TOLERANCE", None) or DEFAULT_TOLERANCE),
        variant_tolerance=dict(getattr(module, "VARIANT_TOLERANCE", None) or {}),
        size_names=[str(n) for n in (getattr(module, "SIZE_NAMES", None) or [])],
        interpreter_skip={
            str(k): str(v) for k, v in (getattr(module, "INTERPRETER_SKIP", None) or {}).items()
        },
    )


# ---- walking the gallery (tests, benchmarks; runs the kernels' code) ------------------------
@dataclass
class CheckResult:
    """How one launch compared with its reference."""

    ok: bool
    max_abs_error: float
    rel_error: float  # ||out - ref|| / ||ref||
    message: str = ""


def gallery_names() -> list[str]:
    """Every bundled kernel file's module name, sorted (files starting with `_` are not kernels;
    unlike `bundled_kernels`, Gluon files the benchmark cannot time are listed too)."""
    return sorted(p.stem for p in BUNDLED_DIR.glob("*.py") if not p.stem.startswith("_"))


def load_gallery(name: str) -> Any:
    """Import bundled kernel `name` as a module of the gallery's package (`kernels.<name>` in a
    checkout, `inspector.gallery.<name>` installed)."""
    import importlib

    package = "kernels" if BUNDLED_DIR.name == "kernels" else "inspector.gallery"
    return importlib.import_module(f"{package}.{name}")


def variants(module: Any) -> dict[str, dict[str, Any]]:
    """The file's variants; a file without VARIANTS has one, named "default", with no keywords."""
    return dict(getattr(module, "VARIANTS", None) or {"default": {}})


def tolerance(module: Any, variant: str) -> dict[str, float]:
    """atol/rtol for one variant: VARIANT_TOLERANCE over TOLERANCE over the default."""
    tol = dict(DEFAULT_TOLERANCE)
    tol.update(getattr(module, "TOLERANCE", None) or {})
    tol.update((getattr(module, "VARIANT_TOLERANCE", None) or {}).get(variant, {}))
    return tol


def check(module: Any, size: Any, variant: str, device: Any) -> CheckResult:
    """Run launch on fresh random inputs into a NaN-poisoned output and compare with reference:
    every element must be written (no NaN left) and within the variant's tolerance."""
    import math

    import torch

    kw = variants(module)[variant]
    inputs = call(module.make_inputs, size, device, **kw)
    expected = call(module.reference, *inputs, **kw)
    # Contiguous, as launch would allocate it (PyTorch's own outputs, SDPA's for one, may not be).
    poisoned = torch.full(expected.shape, float("nan"), dtype=expected.dtype, device=expected.device)
    out = call(module.launch, *inputs, out=poisoned, **kw)
    if out.data_ptr() != poisoned.data_ptr():
        return CheckResult(False, math.nan, math.nan, "launch did not write into the `out` it was given")
    tol = tolerance(module, variant)
    o, r = out.double(), expected.double()
    diff = (o - r).abs()
    max_abs = diff.max().item() if diff.numel() else 0.0
    ref_norm = r.norm().item()
    rel = (o - r).norm().item() / ref_norm if ref_norm > 0 else (0.0 if max_abs == 0 else math.inf)
    within = diff <= tol["atol"] + tol["rtol"] * r.abs()  # NaN compares False: unwritten fails
    bad = int((~within).sum().item())
    if bad:
        unwritten = int(torch.isnan(o).sum().item())
        return CheckResult(False, max_abs, rel, f"{bad} of {o.numel()} elements outside atol={tol['atol']:g} + "
                           f"rtol={tol['rtol']:g}*|ref| ({unwritten} never written); max |error| {max_abs:.3g}")
    return CheckResult(True, max_abs, rel)
