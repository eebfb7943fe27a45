"""The options every compiling command shares (file, kernel, target, values, --run), and the
compile they ask for; the parser every command starts from (`command_parser`)."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import threading
import time
from typing import Any, Iterator

from ..record import InspectRequest, Inspection
from ..hardware.targets import DEFAULT_TARGET


def command_parser(subparsers: Any, name: str, help_text: str, doc: str | None) -> argparse.ArgumentParser:
    """A command's subparser: `help_text` in the command list, its module's docstring `doc` as the
    description of `COMMAND --help`, printed as written (its usage lines keep their layout)."""
    return subparsers.add_parser(name, help=help_text, description=doc,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)


def _pairs(values: list[str] | None, flag: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in values or []:
        if "=" not in item:
            raise SystemExit(f"error: {flag} expects NAME=VALUE, got {item!r}")
        name, value = item.split("=", 1)
        out[name.strip()] = value.strip()
    return out


def add_compile_options(p: argparse.ArgumentParser) -> None:
    """The options every command that compiles a kernel shares (compile, explain, diff, ...)."""
    p.add_argument("file", nargs="?", help="a Python file with @triton.jit kernels, or an importable module's name "
                                          "(liger_kernel.ops.rms_norm); not needed with --run")
    p.add_argument("--run", metavar="COMMAND",
                   help="open the kernel through the code that really calls it: run COMMAND (a pytest node id, "
                        "'pytest ...', 'python script.py ...') GPU-free under Triton's interpreter (natively "
                        "with --target native), record its launches and compile --kernel's (default: the kernel "
                        "launched most) with its real arguments")
    p.add_argument("--root", metavar="DIR",
                   help="the project folder the file belongs to, when no __init__.py chain or pyproject.toml "
                        "shows it (its package imports then work)")
    p.add_argument("--kernel", help="which kernel of the file (default: the one example() launches, or the first)")
    p.add_argument("--target", default=DEFAULT_TARGET,
                   help=f"sm_80, sm_90, sm_120, gfx942, ... or native (default {DEFAULT_TARGET})")
    p.add_argument("--num-warps", type=int, help="compile option num_warps")
    p.add_argument("--num-stages", type=int, help="compile option num_stages")
    p.add_argument("--option", action="append", metavar="NAME=VALUE",
                   help="any other compile option (maxnreg=128, num_ctas=2, enable_fp_fusion=false)")
    p.add_argument("--const", action="append", metavar="NAME=VALUE", help="set a constexpr (BLOCK=512)")
    p.add_argument("--arg", action="append", metavar="NAME=VALUE",
                   help="set an argument: a dtype for a pointer (x_ptr=fp16), a number for a scalar (n=4095)")
    p.add_argument("--autotune-config", type=int, metavar="I", help="inspect config I of an autotuned kernel")
    p.add_argument("--timeout", type=float, default=None,
                   help="seconds before the worker is stopped (default $TRITON_INSPECTOR_TIMEOUT, else 300)")
    p.add_argument("--no-cache", action="store_true", help="compile again even if the result is cached (the new result is stored)")
    p.add_argument("--triton", metavar="VERSION",
                   help="compile with this Triton release (default: the installed one); others come from side "
                        "environments: python -m inspector versions add 3.6.0")


def inspect_from(ns: argparse.Namespace, **extra: Any) -> Inspection:
    """The record the parsed options ask for: through `--run` (a program's real launch) or the file."""
    request = compile_request(ns, **extra)
    if getattr(ns, "run", None):
        from ..capture.by_running import open_by_running

        changes = {k: v for k, v in request.changes().items() if k != "root"}  # (the capture's file has none)
        return open_by_running(ns.run, kernel=ns.kernel, target=ns.target, **changes, **run_options(ns))
    if not ns.file:
        raise SystemExit("error: give a kernel file (or module), or --run COMMAND to open it through the code "
                         "that calls it")
    from ..compile.api import inspect

    from ..compile.api import default_timeout

    limit = ns.timeout or default_timeout()
    with still_working(f"compiling {os.path.basename(request.file)} for {request.target}", limit):
        return inspect(request, **run_options(ns))


@contextlib.contextmanager
def still_working(what: str, limit: float, every: float = 15.0) -> Iterator[None]:
    """Say on stderr, every `every` seconds, that `what` goes on (a long compile is not a hang):
    how long so far, the limit, and that Ctrl-C stops it."""
    done = threading.Event()
    start = time.monotonic()

    def tell() -> None:
        while not done.wait(every):
            print(f"... still {what}: {time.monotonic() - start:.0f} s (the limit is {limit:.0f} s, "
                  f"--timeout; Ctrl-C stops it)", file=sys.stderr, flush=True)

    threading.Thread(target=tell, daemon=True).start()
    try:
        yield
    finally:
        done.set()


def compile_request(ns: argparse.Namespace, **extra: Any) -> InspectRequest:
    """The request the parsed compile options make (`extra`: further fields, passes or defer)."""
    options = _pairs(ns.option, "--option")
    if ns.num_warps is not None:
        options["num_warps"] = str(ns.num_warps)
    if ns.num_stages is not None:
        options["num_stages"] = str(ns.num_stages)
    return InspectRequest(
        file=ns.file or "",
        kernel=ns.kernel,
        target=ns.target,
        args=_pairs(ns.arg, "--arg"),
        consts=_pairs(ns.const, "--const"),
        options=options,
        autotune_index=ns.autotune_config,
        root=ns.root,
        triton=getattr(ns, "triton", None),
        **extra,
    )


def run_options(ns: argparse.Namespace) -> dict[str, Any]:
    """How to run the compile (not what it compiles): its time limit, whether to read the cache."""
    return {"timeout": ns.timeout, "use_cache": not ns.no_cache}
