"""Helion kernels as input: the Triton code Helion generates, compiled as any kernel file is.

A file that defines `@helion.kernel` functions opens like a Triton kernel file. In the worker:

1. the file runs as `python file.py` would (under the stand-in device GPU-free), with
   `helion.Kernel.__call__` replaced by a recorder: the file's first call of a Helion kernel
   gives that kernel's arguments and stops the run there (what follows a call, checks and
   benchmarks, needs real results; Helion would autotune on it), so a kernel the file calls only
   later gets made-up arguments as one it never calls does;
2. the kernel asked for (else the first defined) is bound to that call's arguments, or to
   made-up ones read from how its host code uses each parameter (`wrapper_calls`, as for a
   Triton wrapper): `Kernel.bind`, which traces the kernel and needs no GPU;
3. Helion generates the Triton code for the chosen config (`BoundKernel.to_triton_code`, with
   its own reproducer `call()`): the config given to `@helion.kernel(config=...)` / `configs=`,
   then Helion's default config, then configs from its own autotuner's random population
   (`ConfigGeneration.random_population`, seeded: the same list each time). The record lists
   them as its autotune configs, so the page and `fits` compile them side by side;
4. that generated file is compiled by the ordinary path (its `call()` launches the kernel), and
   every generated line is tied to the Helion line it came from by the `# src[file.py:N]:`
   comments Helion writes above the code of each statement.

Helion APIs used (public): `helion.Kernel` (`__call__`, `bind`, `configs`, `fn`),
`BoundKernel.config_spec.default_config`, `BoundKernel.to_triton_code(config,
emit_repro_caller=True)`, `helion.autotuner.config_generation.ConfigGeneration`. Tried with Helion
1.5.1 GPU-free (torch 2.13) and 1.4.0 natively on an H100 (torch 2.11, which 1.5 does not import
with). What needs a GPU: nothing for the code and its compile; running it (profile, bench) as for any kernel.
"""

from __future__ import annotations

import io
import os
import random
import re
import sys
from dataclasses import dataclass, replace
from typing import Any

from . import kernel_file as kf
from ..record import ErrorInfo, Generated, InspectRequest, Inspection

# How many configs of Helion's own search are listed beside the given and default ones.
SEARCH_CONFIGS = 5
_IMPORTS = re.compile(r"^\s*(import\s[^\n#]*\bhelion\b|from\s+helion\b)", re.M)
_DECORATOR = re.compile(r"^\s*@\s*helion\.kernel\b", re.M)
# `# src[matmul.py:12]: acc = ...` or a statement's span, `# src[matmul.py:9-13]: ...`
_ORIGIN = re.compile(r"^\s*# src\[(?P<file>[^\]]+?):(?P<first>\d+)(?:-\d+)?\]:")


class HelionError(Exception):
    """A Helion file the front end cannot turn into Triton code (carried as the record's error)."""

    def __init__(self, info: ErrorInfo) -> None:
        super().__init__(info.message)
        self.info = info


@dataclass
class Front:
    """What `generate` gives: the request compiling the generated file, and what ties it back."""

    request: InspectRequest  # compiles the generated file (its kernel, its own call)
    generated: Generated
    name: str  # the Helion kernel chosen
    names: list[str]  # the Helion kernels of the file
    configs: list[dict[str, Any]]  # the configs listed, as the record shows them
    index: int  # the one generated
    called: bool  # whether the file's own call gave the arguments


class _Called(Exception):
    """Raised by the recording `Kernel.__call__`: the file's first call of a Helion kernel."""


def is_helion(source: str | None) -> bool:
    """Whether a file's text defines Helion kernels (`import helion` and `@helion.kernel`)."""
    return bool(source) and bool(_IMPORTS.search(source)) and bool(_DECORATOR.search(source))


def origin_lines(code: str, file_name: str) -> list[list[int]]:
    """[generated line, Helion line] pairs: each code line under a block of `# src[...]` comments
    comes from the first line of that block (the statement; the rest of the block quotes it)."""
    pairs: list[list[int]] = []
    current: int | None = None
    in_block = False
    for number, line in enumerate(code.splitlines(), 1):
        m = _ORIGIN.match(line)
        if m:
            if not in_block and os.path.basename(m.group("file")) == file_name:
                current = int(m.group("first"))
            in_block = True
            continue
        in_block = False
        text = line.strip()
        if not text:
            continue
        if not line[0].isspace() or text.startswith("def "):
            current = None  # a new definition: its lines come from no statement yet
            continue
        if current is not None and not text.startswith("#"):
            pairs.append([number, current])
    return pairs


def _helion_kernels(module: Any, path: str) -> list[tuple[str, Any]]:
    """(name, kernel) of the Helion kernels defined in this file, in definition order."""
    from helion.runtime.kernel import Kernel

    found = []
    for name, obj in vars(module).items():
        fn = getattr(obj, "fn", None)
        code = getattr(fn, "__code__", None)
        if isinstance(obj, Kernel) and code is not None and os.path.abspath(code.co_filename) == path:
            found.append((name, obj))
    return sorted(found, key=lambda item: item[1].fn.__code__.co_firstlineno)


def _run_file(path: str, source: str, root: str | None) -> tuple[Any, dict[int, tuple], kf.Stop | None]:
    """Run the file up to its first call of a Helion kernel, recorded: (module, calls, stop)."""
    from helion.runtime.kernel import Kernel

    calls: dict[int, tuple] = {}

    def record(self: Any, *args: Any, **kwargs: Any) -> Any:
        calls.setdefault(id(self), (args, kwargs))
        raise _Called()

    original = Kernel.__call__
    Kernel.__call__ = record
    stop = None
    try:
        _module, stop = kf.execute_file(path, source, root)
    except SyntaxError:
        raise
    except BaseException as e:  # noqa: BLE001 - the first call stops the run; other errors are judged below
        module = sys.modules.get("__main__")
        if module is None or getattr(module, "__file__", None) != path or not _helion_kernels(module, path):
            raise
        if not isinstance(e, _Called):
            stop = kf.stop_from(e, path, "file")
    finally:
        Kernel.__call__ = original
    return sys.modules["__main__"], calls, stop


def _made_up(module: Any, kernel: Any, path: str) -> tuple[tuple[Any, ...], Any]:
    """Arguments read from how the kernel's host code uses each parameter (as for a Triton
    wrapper), in the first shape family and dtype that Helion binds, and the bound kernel."""
    import torch

    from .wrapper_calls import SHAPE_FAMILIES, made_up_arguments

    last: Exception | None = None
    for family in SHAPE_FAMILIES:
        for dtype in (torch.float32, torch.bfloat16):
            args = made_up_arguments(module, kernel.fn, family, dtype)
            if args is None:
                break
            try:
                return tuple(args), kernel.bind(tuple(args))
            except Exception as e:  # noqa: BLE001 - the next family, then the last error
                last = e
    raise HelionError(ErrorInfo("bad_argument", f"no made-up call of {kernel.fn.__name__} was accepted by "
                                f"Helion ({type(last).__name__}: {last}); call it in the file (under "
                                f"`if __name__ == \"__main__\":`) with the tensors it takes", path,
                                _helion_line(last, path) or kernel.fn.__code__.co_firstlineno))


def _helion_line(err: BaseException | None, path: str) -> int | None:
    """The kernel's line a Helion error names (`While processing: File "k.py", line 12`): Helion
    traces the kernel's code rather than running it, so no traceback frame holds that line."""
    found = re.findall(r'File "([^"]+)", line (\d+)', str(err or ""))
    lines = [int(n) for f, n in found if os.path.abspath(f) == path]
    return lines[0] if lines else None


def _helion_failure(err: Exception, path: str, line: int, doing: str) -> HelionError:
    """A Helion error while tracing or generating, at the kernel line it names."""
    return HelionError(ErrorInfo("compilation", f"Helion could not {doing}: {type(err).__name__}: {err}", path,
                                 _helion_line(err, path) or line, {"type": type(err).__name__}))


def _configs(kernel: Any, bound: Any) -> list[Any]:
    """The configs listed: the kernel's own, Helion's default, then its search's first ones."""
    from helion.autotuner.config_generation import ConfigGeneration

    listed = [*kernel.configs, bound.config_spec.default_config()]
    state = random.getstate()
    random.seed(0)
    try:
        listed += ConfigGeneration(bound.config_spec).random_population(SEARCH_CONFIGS + 1)
    except Exception:  # noqa: BLE001 - the search's configs are a bonus; the default still compiles
        pass
    finally:
        random.setstate(state)
    out: list[Any] = []
    for c in listed:
        if all(dict(c) != dict(o) for o in out):
            out.append(c)
    return out


def _shown(config: Any) -> dict[str, Any]:
    """A config as the record lists it: its settings, the empty ones left out."""
    def empty(v: Any) -> bool:
        return v is None or v == "" or (isinstance(v, list) and all(x is None for x in v))

    return {k: v for k, v in dict(config).items() if not empty(v)}


def generate(request: InspectRequest, path: str, source: str, workdir: str, log: io.StringIO,
             target: Any) -> Front | None:
    """The request that compiles the Triton code Helion generates for the file's kernel, and what
    ties it to the file. None when the kernel asked for is not a Helion kernel (a Triton kernel
    of a file that also defines Helion ones, or no Helion kernel at all). `target`: the stand-in
    GPU Helion sees (None natively)."""
    from .stand_in_device import inductor_device

    with inductor_device(target):
        return _generate(request, path, source, workdir, log)


def _generate(request: InspectRequest, path: str, source: str, workdir: str, log: io.StringIO) -> Front | None:
    try:
        import helion
    except ImportError as e:
        import torch

        first = _DECORATOR.search(source)
        raise HelionError(ErrorInfo(
            "import", f"this file defines Helion kernels, and Helion cannot be imported here ({e}; torch "
                      f"{torch.__version__}): install a Helion release made for this torch (`pip install "
                      f"helion`; Helion 1.5 needs a newer torch than 2.11, where Helion 1.4.0 works)", path,
            source.count("\n", 0, first.start()) + 1 if first else None)) from e

    module, calls, stop = _run_file(path, source, request.root)
    kernels = _helion_kernels(module, path)
    if not kernels:
        return None
    names = [name for name, _ in kernels]
    wanted = request.kernel
    if wanted and wanted not in names:
        if any(wanted == getattr(k.fn, "__name__", "") for _, k in kernels):
            wanted = next(n for n, k in kernels if k.fn.__name__ == wanted)
        else:
            return None  # a @triton.jit kernel of the same file: the ordinary path
    name, kernel = next((n, k) for n, k in kernels if n == (wanted or names[0]))
    line = kernel.fn.__code__.co_firstlineno
    if stop is not None:
        log.write(f"note: {stop.describe()}\n")
    if request.args or request.consts:
        log.write(f"note: --arg/--const are not applied to a Helion kernel ({', '.join([*request.args, *request.consts])}"
                  f"): its arguments come from the file's call of {name}, or are made up from its code\n")
    call = calls.get(id(kernel))
    if call is not None:
        try:
            bound = kernel.bind(tuple(kernel.normalize_args(*call[0], **call[1])))
        except Exception as e:  # noqa: BLE001 - the file's own arguments refused: the kernel's line
            raise _helion_failure(e, path, line, f"trace {name} for the file's call") from e
    else:
        args, bound = _made_up(module, kernel, path)
        log.write(f"note: the file does not call {name} before its first Helion call; its arguments were made "
                  f"up from its code: " + ", ".join(f"{tuple(a.shape)} {str(a.dtype).replace('torch.', '')}"
                                                    if hasattr(a, "shape") else repr(a) for a in args) + "\n")
    configs = _configs(kernel, bound)
    index = 0 if request.autotune_index is None else int(request.autotune_index)
    if not 0 <= index < len(configs):
        raise HelionError(ErrorInfo("bad_argument", f"config {index} out of range: {len(configs)} configs are "
                                    f"listed for {name}", path, line))
    try:
        code = bound.to_triton_code(configs[index], emit_repro_caller=True)
    except Exception as e:  # noqa: BLE001 - a config Helion cannot generate, or its own limit
        raise _helion_failure(e, path, line, f"generate Triton code for config {index}") from e
    # the reproducer's tensors are on the device the kernel runs on (meta GPU-free stands in for it)
    code = re.sub(r"device='meta'", "device='cuda'", code)
    stem = os.path.splitext(os.path.basename(path))[0]
    generated_path = os.path.join(workdir, f"{stem}_helion_{name}.py")
    with open(generated_path, "w", encoding="utf-8") as f:
        f.write(code)
    triton_kernel = _generated_kernel(code, name)
    generated = Generated("helion", triton_kernel, generated_path, origin_lines(code, os.path.basename(path)),
                          _shown(configs[index]), _version(helion))
    gen_request = replace(request, file=generated_path, source=code, kernel=triton_kernel, autotune_index=None,
                          args={}, consts={}, root=None, project_root=None)
    return Front(gen_request, generated, name, names, [_shown(c) for c in configs], index, call is not None)


def _generated_kernel(code: str, name: str) -> str:
    """The @triton.jit function's name in Helion's output (`_helion_<name>`)."""
    found = re.findall(r"@triton\.jit\s*\ndef\s+(\w+)", code)
    return next((k for k in found if k.endswith(name)), found[0] if found else f"_helion_{name}")


def _version(helion: Any) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("helion")
    except PackageNotFoundError:
        return getattr(helion, "__version__", "")


def attach(rec: Inspection, front: Front, path: str) -> None:
    """Make the generated kernel's record the Helion file's: the generated code as the "triton"
    stage, the Helion kernels and configs, and an error in the generated code at its Helion line."""
    generated = front.generated
    rec.stages["triton"] = front.request.source or ""
    rec.generated = generated
    rec.kernel, rec.kernels_in_file = front.name, front.names
    rec.autotune_configs, rec.autotune_index = front.configs, front.index
    rec.call_origin = "file" if front.called else "signature"
    err = rec.error
    if err is not None and err.file == generated.file:
        err.details = {**(err.details or {}), "generated_line": err.line}
        err.file, err.line = path, generated.user_line(err.line)
