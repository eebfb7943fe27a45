"""What the worker manager calls in a worker (`inspector.isolation.zygote`): serve one request
(an inspection, a probe of buildable targets, the local GPU, stages from a binary), the warm-up
steps it runs between requests, and a spare worker's warm-up.

Never import this in the app server or the CLI's parent: an inspection executes the user's file.
"""

from __future__ import annotations

import base64
import contextlib
import functools
import io
import os
import shutil
import sys
import tempfile
import traceback
import warnings
from typing import Any, Callable

import torch

from .. import triton_compat as tc
from ..backends import for_backend
from ..hardware.targets import DEFAULT_TARGET, parse_target
from ..record import InspectRequest, Inspection
from . import kernel_file as kf
from .errors import error_info
from . import inspection as worker_module
from .inspection import inspect_file


def in_jail(folder: str = "/tmp") -> None:
    """Called by the worker manager in a jailed child before the request: Triton's cache goes to
    `folder`, the private /tmp (an explicit setting: the zygote imported Triton before
    TRITON_CACHE_DIR was set). The worker leaves its scratch folders there: the jail's /tmp
    (and a spare's scratch folder) is dropped with the request."""
    tc.set_cache_dir(f"{folder}/.triton/cache")
    worker_module.DISPOSABLE_SCRATCH = True


def serve(request: dict) -> dict:
    """`handle`, with a KeyboardInterrupt from the user's code reported as the user's exception
    (`handle` lets it through). What the worker manager (`inspector.isolation.zygote`) calls."""
    try:
        return handle(request)
    except KeyboardInterrupt as e:
        path = os.path.abspath(request.get("file") or "<kernel>")
        info = error_info(e, path, [], stage=getattr(e, "_inspector_stage", "example"))
        rec = Inspection.failure(info, file=path, source=request.get("source") or "",
                                 target=str(request.get("target") or ""), kernel=request.get("kernel") or "")
        return rec.to_dict()


def handle(request: dict[str, Any]) -> dict[str, Any]:
    """Entry point of a worker child: one request in, one JSON-able result out."""
    kind = request.get("kind", "inspect")
    if kind == "inspect":
        return inspect_file(InspectRequest.from_dict(request)).to_dict()
    if kind == "probe_targets":
        return probe_targets(request.get("candidates") or [])
    if kind == "native":
        return native_info()
    if kind == "stages":
        return {"stages": for_backend(request["backend"]).stages_from_binary(
            base64.b64decode(request["binary"]), list(request.get("stages") or []))}
    raise ValueError(f"unknown request kind {kind!r}")


_PROBE_SRC = '''
import triton, triton.language as tl
@triton.jit
def probe(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs) + 1)
'''


def probe_targets(candidates: list[str]) -> dict[str, Any]:
    """Which candidate targets the installed Triton can build (compile a tiny kernel for each)."""
    workdir = tempfile.mkdtemp(prefix="inspector-probe-")
    path = os.path.join(workdir, "probe.py")
    with open(path, "w") as f:
        f.write(_PROBE_SRC)
    result: dict[str, Any] = {"buildable": [], "failed": {}}
    try:
        module = kf.load_module(path)  # its kernels only: nothing in it runs as __main__
        for name in candidates:
            target = parse_target(name)
            try:
                with tc.use_cache_dir(os.path.join(workdir, "cache")), tc.offline_target(target, [module.probe]), \
                        warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
                    warnings.simplefilter("ignore")
                    k = module.probe.warmup(torch.float32, BLOCK=128, grid=(1,))
                    binary = "cubin" if target.backend == "cuda" else "hsaco"
                    if not k.asm.get(binary):
                        raise RuntimeError(f"no {binary}")
                result["buildable"].append(name)
            except Exception as e:  # noqa: BLE001 - a target this Triton cannot build
                result["failed"][name] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:300]
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return result


_WARM_UP_SRC = _PROBE_SRC + '''

def example(device):
    import torch
    x = torch.randn(256, device=device)
    probe[(1,)](torch.empty_like(x), BLOCK=128)
'''


def warm_up_steps() -> list[Callable[[], None]]:
    """The one-time work every request would otherwise repeat, in steps the zygote runs between
    requests (`inspector.isolation.zygote`): Triton's backend and LLVM's targets for NVIDIA, then
    AMD's, then torch's meta-tensor machinery. A request that arrives first is forked at once and
    pays for what it needs itself, so warming never delays the first compile. Never initialises
    CUDA (forked children must be free to)."""

    def meta_tensors() -> None:
        # Meta-tensor ops import sympy and torch.fx's symbolic shapes on first use, and
        # torch._dynamo, which a GPU-free request defers (`dynamo_deferred`). Imported here all
        # the same: without it in the zygote, native requests of matmul and softmax were slower
        # (torch._dynamo itself was not imported by them, so it is modules it brings in that they
        # need; docs/performance.md#warm-up-and-imports).
        import torch._dynamo

        x = torch.randn(64, 64, device="meta")
        ((3 * x).to(torch.bfloat16).t().contiguous().float() + torch.empty_like(x)).sum(dim=-1)

    # The default target's compile first: a page's first compile is for it. The meta-tensor step
    # (the longest: docs/performance.md#warm-up-and-imports) waits for a first request to have
    # been served (`after_first_request`): the first request may not need it, and should not
    # queue behind it.
    meta_tensors.after_first_request = True  # type: ignore[attr-defined]
    return [functools.partial(_warm_compile, DEFAULT_TARGET), functools.partial(_warm_compile, "gfx942"),
            meta_tensors]


def _warm_compile(target: str) -> None:
    """Inspect the warm-up kernel for `target` in a scratch folder, and forget it; raise if that failed."""
    workdir = tempfile.mkdtemp(prefix="inspector-warm-")
    path = os.path.join(workdir, "warm_up.py")
    with open(path, "w") as f:
        f.write(_WARM_UP_SRC)
    main = sys.modules["__main__"]
    try:
        rec = inspect_file(InspectRequest(file=path, target=target, defer=["sass"]))
    finally:
        sys.modules["__main__"] = main  # a compile runs the file as __main__
        shutil.rmtree(workdir, ignore_errors=True)
    if rec.error is not None:
        raise RuntimeError(f"the warm-up inspection for {target} failed: {rec.error.short()}")


def warm_spare(native: bool = False, target: str | None = None) -> None:
    """What a spare worker runs before its request comes (`inspector.isolation.zygote`). A fresh
    fork of the warm zygote pays copy-on-write faults on every page a request touches (a large
    part of a small kernel's warm inspection: docs/performance.md#spares); after an inspection of
    the warm-up kernel, those pages are its own. GPU-free, for `target` (the last
    GPU-free request's; the default target when None or unknown): one target warms in half the
    time of two, and a spare for NVIDIA still serves AMD better than a fresh fork. `native`, on
    this machine's GPU, which also initialises CUDA and Triton's driver (the zygote never may:
    its forks must be free to), the larger part of a native request."""
    if native:  # a failure raises: a CUDA context it leaves broken is no place for a request
        if torch.cuda.is_available():  # else a native request fails at once: nothing to warm
            _warm_compile("native")
        return
    try:
        name = parse_target(target).name if target else DEFAULT_TARGET
    except Exception:  # noqa: BLE001 - a target this Triton does not know: the default
        name = DEFAULT_TARGET
    try:  # a failure here costs warmth only
        _warm_compile(name)
    except Exception:  # noqa: BLE001
        traceback.print_exc()


def warm_up() -> None:
    """Every warm-up step at once (see `warm_up_steps`)."""
    for step in warm_up_steps():
        step()


def native_info() -> dict[str, Any]:
    """The local GPU, if any: its target and properties."""
    try:
        if not torch.cuda.is_available():
            return {"available": False, "reason": "torch.cuda.is_available() is False"}
        target = tc.native_target()
        return {"available": True, "target": target.name, "backend": target.backend,
                "properties": tc.native_device_properties()}
    except Exception as e:  # noqa: BLE001
        return {"available": False, "reason": f"{type(e).__name__}: {e}"}


if __name__ == "__main__":  # debugging aid: python -m inspector.worker.handler FILE [TARGET]
    import json

    req = {"file": sys.argv[1], "target": sys.argv[2] if len(sys.argv) > 2 else "sm_90"}
    print(json.dumps(handle(req), indent=1)[:4000])
