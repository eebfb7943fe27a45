"""The library's front door: inspect a kernel file, list targets, find the native GPU.

Everything here runs in the caller's process and never imports the user's code, torch or Triton:
compiling happens in the sandbox's worker processes, and results are cached on disk.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib.util
import os
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..files import sha256
from .cache import Cache, cache_key
from .project import fingerprint, locate, module_file
from ..record import ErrorInfo, InspectRequest, Inspection, SCHEMA_VERSION
# The sandbox is imported where a compile starts, not here: a cache hit never needs it.
if TYPE_CHECKING:
    from ..isolation.sandbox import Sandbox, SandboxError
from ..hardware.targets import DEFAULT_TARGET, UnknownTargetError, candidate_targets, parse_target
from ..triton_compat.releases import VersionError

PACKAGE_DIR = Path(__file__).resolve().parent.parent  # the inspector package
# The code that decides what a record contains (the pipeline and what it imports from beside it):
# a change to any of it invalidates the cache.
_RECORD_CODE = ("compile/*.py", "worker/*.py", "backends/*.py", "triton_compat/*.py", "hardware/*.py", "occupancy/*.py",
                "record.py")
# Errors that the same inputs always reproduce; others (timeouts, crashes) are never cached.
_CACHEABLE_ERRORS = {"out_of_resources"}


@functools.lru_cache(maxsize=None)
def triton_version() -> str:
    """The installed Triton's version, from its distribution's folder name (Triton is not imported,
    nor importlib.metadata, whose import outweighs the rest of a cache hit's lookup), else its
    metadata."""
    spec = importlib.util.find_spec("triton")
    if spec is None or not spec.origin:
        return "not installed"
    site = os.path.dirname(os.path.dirname(spec.origin))
    # os.listdir, not Path.glob: a glob compiles patterns, a few ms of every cache hit
    found = [n for n in os.listdir(site) if n.startswith("triton-") and n.endswith(".dist-info")]
    if len(found) == 1:
        return found[0][len("triton-"):-len(".dist-info")]
    from importlib import metadata  # several or none beside it: ask the metadata

    try:
        return metadata.version("triton")
    except metadata.PackageNotFoundError:
        return "not installed"


@functools.lru_cache(maxsize=None)
def code_digest(*patterns: str) -> str:
    """What of the inspector's code (files matching `patterns` under the package) makes a result:
    the files' names, sizes and modification times (a stat each, not a read: a cache hit pays
    this every time). A pattern is a file ("record.py") or a folder's files ("compile/*.py");
    read with os.scandir, not Path.glob, whose pattern compiles cost a hit a few ms."""
    h = sha256()
    for pattern in patterns:
        folder, _, name = pattern.rpartition("/")
        where = os.path.join(PACKAGE_DIR, folder) if folder else str(PACKAGE_DIR)
        prefix, star, suffix = name.partition("*")
        try:
            entries = sorted((e for e in os.scandir(where) if e.is_file() and (
                e.name.startswith(prefix) and e.name.endswith(suffix) and len(e.name) >= len(prefix) + len(suffix)
                if star else e.name == name)), key=lambda e: e.name)
        except OSError:
            continue
        for e in entries:
            st = e.stat()
            h.update(f"{e.name}\0{st.st_size}\0{st.st_mtime_ns}\0".encode())
    return h.hexdigest()[:16]


# The limit stops a runaway compile (an unrolled loop of thousands), not a slow one: published
# Gluon kernels take tens of seconds on a small loaded machine (docs/your-kernels.md).
DEFAULT_TIMEOUT = 300.0


def default_timeout() -> float:
    """Seconds a compile may take: $TRITON_INSPECTOR_TIMEOUT, else DEFAULT_TIMEOUT (300)."""
    try:
        return float(os.environ.get("TRITON_INSPECTOR_TIMEOUT", DEFAULT_TIMEOUT))
    except ValueError:
        return DEFAULT_TIMEOUT


def inspect_kernel(file: str | os.PathLike, kernel: str | None = None, target: str = DEFAULT_TARGET, *,
                   timeout: float | None = None, memory: int | None = None, use_cache: bool = True,
                   cache: Cache | None = None, sandbox: Sandbox | None = None, cancel: threading.Event | None = None,
                   older_release: bool = True, **request: Any) -> Inspection:
    """`inspect(InspectRequest(file, target, kernel=kernel, **request), ...)`: the library's way in.
    `request` takes the other fields of the request (args, consts, options, autotune_index,
    passes, root, source, triton, defer: `record.InspectRequest`); a field it does not have is a
    TypeError."""
    req = InspectRequest(file=os.fspath(file), target=str(target), kernel=kernel, **request)
    return inspect(req, timeout=timeout, memory=memory, use_cache=use_cache, cache=cache, sandbox=sandbox,
                   cancel=cancel, older_release=older_release)


def inspect(request: InspectRequest, *, timeout: float | None = None, memory: int | None = None,
            use_cache: bool = True, cache: Cache | None = None, sandbox: Sandbox | None = None,
            cancel: threading.Event | None = None, older_release: bool = True) -> Inspection:
    """Compile `request.kernel` from `request.file` for `request.target` in a worker process and return the record.

    The request (built once by the command line and the page) names what to compile: `args`
    override kernel arguments by name (a dtype name such as "fp16" for a pointer, a number
    for a scalar), `consts` constexprs, `options` compile options (num_warps, num_stages, maxnreg,
    ...); values may be strings as typed on a command line. `target` is e.g. "sm_90", "gfx942" or
    "native". `timeout` defaults to $TRITON_INSPECTOR_TIMEOUT seconds, else 300. Never raises for
    problems in the user's code: they come back in `record.error`.

    `file` may be a path or an importable module's name (`liger_kernel.ops.rms_norm`, found on
    sys.path without importing it). A file inside a package is imported as part of it; `root`
    names the project folder when no `__init__.py` chain or pyproject.toml shows it.

    The file is read once, here: that text is hashed for the cache and sent to the worker as
    `request.source`, so what is compiled is what the key names; the compile sees the project
    folder read-only and nothing else of the user's (`inspector.isolation.sandbox`). Setting `cancel` (a
    `threading.Event`) stops the compile with every process it started; the record's error kind
    is then "cancelled".

    `use_cache=False` compiles again even when the result is cached, and stores the new result.

    `source`, when given, is compiled in place of the file's own text, as that file (inside its
    package): an edited copy of a package's kernel keeps its relative imports.

    `defer=("sass",)` leaves SASS out of a fresh compile (nvdisasm costs about 0.2 s on any
    cubin, more than most compiles): the record lists it in `deferred` and `complete(rec)` makes
    it when it is first wanted. Without `defer`, a record always has every stage: a cached one
    that lacks some is completed (and stored again) before it is returned.

    `triton` names the Triton release to compile with ("3.6.0"): the installed one by default,
    another from its side environment (`inspector.versions`; the worker starts from that
    environment's interpreter). The record's `triton_version` names it and the cache keys it.

    When no release was named and the installed one refuses the kernel's code (a compile error:
    block pointers or `triton.ops` it removed, a scalar indexed as a tensor), each side release
    installed, newest first, is tried: the first that compiles it gives the record, its
    `refused_by` saying what the installed release said and where. `older_release=False` (the
    guard, which must see a release's refusal) returns the refusal as it is.
    """
    rec = _inspect_once(request, timeout=timeout, memory=memory, use_cache=use_cache, cache=cache,
                        sandbox=sandbox, cancel=cancel)
    if not (older_release and request.triton in (None, "", "default") and rec.error is not None
            and rec.error.kind == "compilation" and not (rec.error.details or {}).get("cuda_libdevice")):
        return rec  # (CUDA's libdevice on an AMD target: every supported release refuses it)
    from ..versions import environments

    for version in sorted(environments.available_versions()[1:], key=_release_order, reverse=True):
        other = _inspect_once(dataclasses.replace(request, triton=version), timeout=timeout, memory=memory,
                              use_cache=use_cache, cache=cache, cancel=cancel)
        if other.error is None:
            other.refused_by = {"release": rec.triton_version or triton_version(), "line": rec.error.line,
                                "message": _gist(rec.error)}
            return other
        rec.error.message += f"\n(Triton {version}, installed beside it, refuses it too: {_gist(other.error)})"
    return rec


def _gist(error: ErrorInfo) -> str:
    """What a compile error says, without the source excerpt Triton puts first: its last line."""
    lines = [line for line in (error.message or "").splitlines() if line.strip() and not line.startswith("(")]
    return lines[-1].strip() if lines else error.kind


def _release_order(version: str) -> tuple:
    return tuple(int(p) if p.isdigit() else 0 for p in version.split(".")[:3])


def _inspect_once(request: InspectRequest, *, timeout: float | None, memory: int | None, use_cache: bool,
                  cache: Cache | None, sandbox: Sandbox | None = None,
                  cancel: threading.Event | None = None) -> Inspection:
    """One compile (or cache hit) of `request` with the release it names: `inspect` without the
    fallback to an older release."""
    path = resolve_kernel_file(request.file)
    fail = functools.partial(_failed, path, request)
    source = request.source
    if source is None:
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                source = f.read()
        except OSError as e:
            return Inspection.failure(ErrorInfo("import", f"cannot read {path}: {e}", path), file=path)
    try:
        version, sandbox = triton_sandbox(request.triton, sandbox)
    except VersionError as e:
        return fail(source, ErrorInfo("triton_version", str(e), path))
    target, target_key = _resolved_target(request.target, sandbox, cache)
    if isinstance(target_key, ErrorInfo):
        return Inspection.failure(target_key, file=path, source=source)
    location = locate(path, request.root)
    # the text hashed below is the text compiled
    request = dataclasses.replace(request, file=path, source=source, target=target,
                                  root=os.path.abspath(request.root) if request.root else None,
                                  project_root=location.project_root)
    key = cache_key({
        "source": source, "path": path, "target": target_key, "triton": version,
        "schema": SCHEMA_VERSION, "code": code_digest(*_RECORD_CODE), "package": fingerprint(location),
        **request.key_fields(),
    })
    store = cache or Cache()
    hit = _cache_hit(store, key, source) if use_cache else None
    if hit is not None:
        return _finish(complete(hit, _unwanted(hit, request.defer), sandbox, store), sandbox)
    from ..isolation.sandbox import Limits, SandboxError
    from ..isolation.selection import default_sandbox

    box = sandbox or default_sandbox()
    try:
        rec = Inspection.from_dict(box.run(request.to_dict(), Limits(timeout=timeout or default_timeout(),
                                                                       memory=memory or Limits().memory), cancel=cancel))
    except SandboxError as e:
        rec = fail(source, ErrorInfo(e.kind, e.message, path, _error_line(e), e.details))
    except (TypeError, ValueError, KeyError, AttributeError) as e:  # a result that is no record
        rec = fail(source, ErrorInfo("crashed", f"the worker returned a malformed record: {e}", path))
    if rec.triton_version and rec.triton_version != version:  # never cache one release under another's key
        rec = fail(source, ErrorInfo("triton_version", f"the worker ran Triton {rec.triton_version}, not {version}: "
                                     "its environment is broken; remove and add it again", path))
    # The record describes the text hashed here, whatever the worker says.
    rec.file, rec.source, rec.cache_key = path, source, key
    # Stored even when the cache was not read (`use_cache=False`, the CLI's --no-cache): a fresh
    # result replaces what was there, and the next call is a hit. Written off the caller's path.
    rec = _finish(rec, sandbox)
    if rec.error is None or rec.error.kind in _CACHEABLE_ERRORS:
        store.put(key, rec.to_dict(), wait=False)
    return rec


def _failed(path: str, request: InspectRequest, source: str, error: ErrorInfo) -> Inspection:
    return Inspection.failure(error, file=path, source=source, target=str(request.target), kernel=request.kernel or "")


def _resolved_target(name: str, sandbox: Sandbox | None, cache: Cache | None) -> tuple[str, str | ErrorInfo]:
    """(the target's canonical name, its cache key) for a target as asked ("native" keys the GPU
    found here); the key is an ErrorInfo when there is no such target."""
    if name == "native":
        gpu = native_gpu(sandbox, cache)
        if not gpu.get("available"):
            return name, ErrorInfo("unknown_target", f"no native GPU here ({gpu.get('reason', 'none found')}); "
                                   "pick a target such as sm_90 or gfx942")
        return name, f"native:{gpu['target']}:{gpu['properties'].get('name')}"
    try:
        canonical = parse_target(name).name
    except UnknownTargetError as e:
        return name, ErrorInfo("unknown_target", str(e))
    return canonical, canonical


def _cache_hit(store: Cache, key: str, source: str) -> Inspection | None:
    """The cached record of `key` for this very text, or None (a malformed entry is a miss)."""
    hit = store.get(key)
    if hit is None:
        return None
    try:
        rec = Inspection.from_dict(hit)
    except (TypeError, ValueError, KeyError, AttributeError):
        return None
    if rec.cache_key != key or rec.source != source:
        return None
    rec.cached = True
    return rec


def _unwanted(rec: Inspection, defer: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """Deferred stages of `rec` the caller did not agree to defer."""
    return tuple(s for s in rec.deferred if s not in defer)


def complete(rec: Inspection, stages: tuple[str, ...] | list[str] | None = None, sandbox: Sandbox | None = None,
             cache: Cache | None = None) -> Inspection:
    """Make the deferred `stages` of `rec` (default: all of them) and return it, completed in place.

    They are made from the record's binary in a sandboxed worker (the binary came from a worker,
    so the tools reading it never run in the caller), and the cache entry is stored again, so a
    later hit has them. A failure leaves them deferred and says why in the log."""
    wanted = [s for s in (rec.deferred if stages is None else stages) if s in rec.deferred]
    if not wanted or not rec.binary:
        return rec
    from ..isolation.sandbox import Limits, SandboxError
    from ..isolation.selection import default_sandbox

    if sandbox is None and rec.triton_version:
        try:  # the release that compiled it disassembles it (its own nvdisasm)
            sandbox = triton_sandbox(rec.triton_version)[1]
        except VersionError:
            sandbox = None  # its side environment is gone: the installed release's tools
    box = sandbox or default_sandbox()
    request = {"kind": "stages", "backend": rec.backend, "binary": rec.binary, "stages": wanted}
    try:
        made = box.run(request, Limits(timeout=default_timeout())).get("stages") or {}
    except SandboxError as e:
        rec.log += f"\nnote: {', '.join(wanted)} not made: {e.message}\n"
        return rec
    made = {k: v for k, v in made.items() if k in wanted and isinstance(v, str)}
    rec.stages.update(made)
    rec.deferred = [s for s in rec.deferred if s not in made]
    if not rec.deferred:
        rec.binary = ""
    if rec.cache_key and (rec.error is None or rec.error.kind in _CACHEABLE_ERRORS):
        stored = rec.to_dict()
        stored["cached"] = False  # as inspect stores it
        (cache or Cache()).put(rec.cache_key, stored)
    return rec


def triton_sandbox(triton: str | None, sandbox: Sandbox | None = None) -> tuple[str, Sandbox | None]:
    """(version, sandbox) a compile asking for Triton `triton` runs with: the installed release
    and `sandbox` for None, "" or "default" (or the installed release's own number when no side
    environment holds it), else the ready side environment's sandbox. Raises VersionError saying
    how to add a release that is missing."""
    base = triton_version()
    wanted = (triton or "").strip()
    if wanted in ("", "default"):
        return base, sandbox
    from ..versions import environments

    if wanted == base and environments.get(wanted) is None:
        return base, sandbox
    from ..isolation.selection import default_sandbox

    python = environments.python_for(wanted)
    if sandbox is not None and os.path.abspath(sandbox.python) == os.path.abspath(python):
        return wanted, sandbox
    return wanted, default_sandbox(python)


def resolve_kernel_file(file: str | os.PathLike) -> str:
    """An absolute path for a kernel file given as a path or as a module name found on sys.path."""
    text = os.fspath(file)
    if not os.path.exists(text) and not text.endswith(".py"):
        found = module_file(text)
        if found:
            return found
    return os.path.abspath(text)


def _error_line(e: SandboxError) -> int | None:
    """The user's line a stopped compile was at (a timeout's stack dump), when known."""
    line = e.details.get("line")
    return line if isinstance(line, int) else None


def sandbox_status(sandbox: Sandbox | None = None) -> dict[str, Any]:
    """How compiles are isolated here: {"isolated": bool, "how": words, "missing": what full
    isolation lacks ("" when nothing), "mode": "bwrap" | "unshare" | "off"}. Probed once per
    process, without starting the worker. When "isolated" is False, show it loudly: kernel files
    then run with the server's user's rights."""
    from ..isolation.selection import default_sandbox

    return (sandbox or default_sandbox()).isolation()


def _finish(rec: Inspection, sandbox: Sandbox | None = None) -> Inspection:
    """Derived facts computed in the caller: occupancy, stored with the record (a GPU-free target's
    occupancy follows from the record alone, a native one's from the GPU its cache key names), so a
    cache hit neither computes it nor imports the calculator."""
    if rec.occupancy is not None:
        return rec
    from ..occupancy.of_kernel import occupancy_of

    native = native_gpu(sandbox).get("properties") if rec.mode == "native" else None
    rec.occupancy = occupancy_of(rec, native)
    return rec


_native_cache: dict[Any, dict[str, Any]] = {}  # per sandbox given (its id), or per Python for the default


GPU_DEVICE_NODES = ("/dev/nvidiactl", "/dev/kfd")
_DRIVER_VERSIONS = ("/sys/module/nvidia/version", "/proc/driver/nvidia/version", "/sys/module/amdgpu/version")


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read().strip()
    except OSError:
        return ""


def _native_key(python: str) -> str:
    """What the native GPU's answer depends on: this boot, the driver, the worker's Python and
    Triton, and the pipeline's code. A reboot or a driver update asks again."""
    return cache_key({"native": _read("/proc/sys/kernel/random/boot_id"),
                      "driver": [_read(p) for p in _DRIVER_VERSIONS], "python": python,
                      "triton": triton_version(), "code": code_digest(*_RECORD_CODE)})


def native_gpu(sandbox: Sandbox | None = None, cache: Cache | None = None) -> dict[str, Any]:
    """{"available": bool, "target": "sm_90", "properties": {...}} for the local GPU.

    Asked of a worker once per boot and driver: the answer is kept in the cache on disk (a CLI
    call with `--target native` then starts no worker on a hit), and in memory per process.
    Without a GPU device node there is nothing to ask."""
    # The default sandbox's worker runs this Python (the pool's client names it so): a stored
    # answer is found without making the sandbox, whose modules are half a hit's imports.
    python = getattr(sandbox, "python", "") if sandbox is not None else os.path.abspath(sys.executable)
    memo = id(sandbox) if sandbox is not None else python
    if memo in _native_cache:
        return _native_cache[memo]
    if os.environ.get("TRITON_INSPECTOR_NO_GPU") == "1":
        answer: dict[str, Any] = {"available": False, "reason": "TRITON_INSPECTOR_NO_GPU=1"}
    elif not any(os.path.exists(p) for p in GPU_DEVICE_NODES):
        answer = {"available": False, "reason": "no GPU device on this machine"}
    else:
        store = cache or Cache()
        key = _native_key(python)
        stored = store.get(key)
        if isinstance(stored, dict) and "available" in stored:
            answer = stored
        else:
            from ..isolation.sandbox import Limits, SandboxError
            from ..isolation.selection import default_sandbox

            try:
                answer = (sandbox or default_sandbox()).run({"kind": "native"}, Limits(timeout=120, memory=None))
                store.put(key, answer)
            except SandboxError as e:  # not stored: a timeout or a crash may not happen again
                answer = {"available": False, "reason": e.message}
    _native_cache[memo] = answer
    return answer


def list_targets(sandbox: Sandbox | None = None, cache: Cache | None = None,
                 triton: str | None = None) -> dict[str, Any]:
    """Targets this Triton (or release `triton`, from its side environment) builds (probed by
    compiling a tiny kernel for each, cached per version)."""
    from ..isolation.sandbox import Limits
    from ..isolation.selection import default_sandbox

    store = cache or Cache()
    names = [t.name for t in candidate_targets()]
    version, sandbox = triton_sandbox(triton, sandbox)
    key = cache_key({"targets": names, "triton": version, "code": code_digest(*_RECORD_CODE)})
    probed = store.get(key)
    if probed is None:
        box = sandbox or default_sandbox()
        probed = box.run({"kind": "probe_targets", "candidates": names}, Limits(timeout=300))
        store.put(key, probed)
    native = native_gpu(sandbox)
    return {
        "triton_version": version,
        "buildable": probed["buildable"],
        "failed": probed["failed"],
        "native": native.get("target") if native.get("available") else None,
        "native_device": (native.get("properties") or {}).get("name") if native.get("available") else None,
    }
