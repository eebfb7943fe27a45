"""A stand-in GPU for running a kernel file's own code GPU-free: what real code asks of a device,
answered for the target.

Real kernel files do more than define kernels. Tutorials size their grid from
`driver.active.utils.get_device_properties(...)`; library wrappers read
`torch.cuda.get_device_properties`, `torch.cuda.get_device_capability` or `torch.version.hip` to
pick num_warps and block sizes per vendor; they create tensors with `device="cuda"` and call
`torch.cuda.synchronize()`; benchmarks call `triton.testing.do_bench` and
`triton.testing.perf_report(...).run()`. Inside `stand_in_device(target)`:

- torch answers as a machine with the target's GPU would: `torch.cuda.is_available()` is True,
  properties, capability and name come from the GPU catalogue (the target's representative part),
  `torch.version.cuda` / `torch.version.hip` match the target's vendor (a ROCm build answers
  `hip`, a CUDA build `cuda`), so a wrapper picks the settings it would pick on that GPU;
- `torch._C._cuda_getCurrentRawStream` (what Inductor-generated code asks for a stream) answers 0;
- `torch.library.wrap_triton(kernel)[grid](...)` launches the kernel directly, as it does in eager
  mode with `set_wrap_triton_enabled(False)`: through its higher-order op a meta tensor reaches
  only the op's fake implementation, which launches nothing (flash-attn's layer norm, rotary);
- tensors asked for on a GPU device become meta tensors (shapes, strides, dtypes and alignment,
  no memory), and `Tensor.is_cuda` is True for them;
- timing does not run: `do_bench` calls the function once (its launches are recorded, not run)
  and answers 1 ms; a `perf_report` benchmark runs its first configuration only, each provider
  once. Code that needs real data (`.item()` on a result) raises there, which stops the file's run
  without losing the launches recorded before it (see `inspector.worker.kernel_file`).

Triton's own driver is stood in for by `triton_compat.OfflineDriver`, which reads the same
properties from `device_properties`. Only used in forked worker children: nothing is restored
across requests because every request is a fresh process, but the context manager restores what
it changed anyway, so tests can use it in-process.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import tempfile
import types
from typing import Any, Iterator

from .. import triton_compat as tc
from ..hardware.device_properties import device_properties, torch_properties
from ..hardware.targets import Target
from ..triton_compat import NOMINAL_MS, bench_once

# What the installed torch's version strings say on a machine of each vendor (a CUDA 12.8 and a
# ROCm 6.4 build: current releases; wrappers only test them for None or compare major versions).
CUDA_VERSION = "12.8"
HIP_VERSION = "6.4.43482"


# ---- timing that does not run ------------------------------------------------------------------

def first_configuration(mark: Any, *args: Any, **kwargs: Any) -> None:
    """`triton.testing.Mark.run` for a perf_report benchmark: its first x value, every provider
    (line value) once, as the tutorials' `benchmark.run(...)` would start. A provider that fails
    (torch.compile, a missing library) does not stop the others; the first failure is raised only
    when no provider got as far as a launch."""
    benches = mark.benchmarks if isinstance(mark.benchmarks, list) else [mark.benchmarks]
    first_error: BaseException | None = None
    launched = False
    for bench in benches:
        x = bench.x_vals[0]
        values = list(x) if isinstance(x, (list, tuple)) else [x] * len(bench.x_names)
        x_args = dict(zip(bench.x_names, values))
        for line in bench.line_vals:
            before = tc.launch_count()
            try:
                mark.fn(**x_args, **{bench.line_arg: line}, **bench.args)
            except Exception as e:  # noqa: BLE001 - a provider that needs real data or a real GPU
                first_error = first_error or e
            launched = launched or tc.launch_count() > before
    if first_error is not None and not launched:
        raise first_error


# ---- vendor tools ------------------------------------------------------------------------------

# Commands code runs to find which GPU vendor it is on (a probe that exits 0 means "present").
VENDOR_TOOLS = {"cuda": ("nvidia-smi",), "hip": ("rocm-smi", "amd-smi", "rocminfo")}


def vendor_tools(target: Target, folder: str) -> str:
    """Write stand-ins for the target vendor's query tools into `folder` (which goes first on
    PATH): each exits 0 and prints the GPU's name, so code that probes `nvidia-smi` or `rocm-smi`
    to pick a backend picks the target's. Returns the folder."""
    name = device_properties(target)["name"]
    os.makedirs(folder, exist_ok=True)
    for tool in VENDOR_TOOLS.get(target.backend, ()):
        path = os.path.join(folder, tool)
        with open(path, "w") as f:
            f.write(f"#!/bin/sh\n# stand-in written by the inspector for a GPU-free compile\necho 'GPU 0: {name}'\n")
        os.chmod(path, 0o755)
    return folder


# ---- the context -------------------------------------------------------------------------------


class _Patches:
    """setattr with a record of what to put back."""

    _MISSING = object()

    def __init__(self) -> None:
        self._saved: list[tuple[Any, str, Any]] = []

    def set(self, obj: Any, name: str, value: Any) -> None:
        self._saved.append((obj, name, obj.__dict__.get(name, self._MISSING) if isinstance(obj, type)
                            else getattr(obj, name, self._MISSING)))
        setattr(obj, name, value)

    def restore(self) -> None:
        for obj, name, old in reversed(self._saved):
            if old is self._MISSING:
                with contextlib.suppress(AttributeError):
                    delattr(obj, name)
            else:
                setattr(obj, name, old)
        self._saved.clear()


class _Stream:
    cuda_stream = 0
    device = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def synchronize(self) -> None:
        pass

    def wait_stream(self, *args: Any) -> None:
        pass

    def wait_event(self, *args: Any) -> None:
        pass

    def record_event(self, *args: Any) -> "_Event":
        return _Event()

    def query(self) -> bool:
        return True

    def __enter__(self) -> "_Stream":
        return self

    def __exit__(self, *exc: Any) -> None:
        return None


class _Event:
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def record(self, *args: Any) -> None:
        pass

    def synchronize(self) -> None:
        pass

    def wait(self, *args: Any) -> None:
        pass

    def query(self) -> bool:
        return True

    def elapsed_time(self, other: Any) -> float:
        return NOMINAL_MS


def _gpu_device(device: Any) -> bool:
    import torch

    if isinstance(device, torch.device):
        return device.type == "cuda"
    if isinstance(device, str):
        return device.split(":")[0] == "cuda"
    return False


# Modules that see a meta tensor's real device: torch's own Python (its meta kernels dispatch on
# it), Triton, and the inspector.
_INTERNAL = ("torch", "triton", "inspector")


def _device_as_users_see_it(torch: Any) -> property:
    """`Tensor.device` for a run on meta tensors: the user's code sees them on GPU 0, as on a real
    machine (`cache[x.device.index]`, `x.device.type == "cuda"`, `torch.cuda.device(x.device)`);
    tensors it makes there are meta tensors again (`_gpu_to`)."""
    real = torch._C.TensorBase.device
    gpu0 = torch.device("cuda", 0)

    def device(self: Any) -> Any:
        found = real.__get__(self)
        if found.type != "meta":
            return found
        caller = sys._getframe(1).f_globals.get("__name__", "")
        return found if caller.split(".")[0] in _INTERNAL else gpu0

    return property(device)


def _gpu_to(device: str = "meta"):
    """A TorchFunctionMode that puts every tensor asked for on a GPU on `device`: the meta device
    (shapes, no memory) while a file's launches are recorded, the CPU when a program runs its
    kernels under Triton's interpreter (`inspector.capture.run_program --stand-in`)."""
    import torch
    from torch.overrides import TorchFunctionMode

    meta = torch.device(device)

    class GpuToMeta(TorchFunctionMode):
        def __torch_function__(self, func, types_, args=(), kwargs=None):
            kwargs = dict(kwargs or {})
            if _gpu_device(kwargs.get("device")):
                kwargs["device"] = meta
            name = getattr(func, "__name__", "")
            if name == "cuda" and args and isinstance(args[0], torch.Tensor):
                return args[0].to(meta)  # the mode is off inside its own handler
            if name == "pin_memory":
                return args[0]
            if name == "to":
                args = tuple(meta if _gpu_device(a) else a for a in args)
            return func(*args, **kwargs)

    return GpuToMeta()



# ---- torch._dynamo, not imported for meta-tensor arithmetic -----------------------------------

class _DeferredDynamo(types.ModuleType):
    """Stands in for `torch._dynamo` while a file runs on meta tensors, until something needs more
    than `disable`.

    Why: on meta tensors most arithmetic (`x + 1`, `torch.randn_like`) runs torch's Python
    references, which are wrapped in `torch._compile._disable_dynamo`; its first call imports
    `torch._dynamo` (most of a second: docs/performance.md#warm-up-and-imports) only to wrap the
    reference in `torch._dynamo.disable`, which matters only while dynamo traces. A bare compile on
    a GPU never pays that, so GPU-free inspection would (against the cold goal of
    docs/performance.md#what-an-inspection-costs: <= 1.25x a bare compile).
    While this stands in, `disable(fn)` answers fn itself, and `_disable_dynamo` caches that on fn
    as `__dynamo_disable`; `restore()` removes those caches and this module again, so later real
    use of dynamo gets the real wrappers. Anything else (a file that uses `torch.compile`, reads
    `torch._dynamo.config` or imports a submodule) imports the real module first and answers from
    it (`_DynamoSubmodules` keeps a submodule import from loading a second copy).
    Touches torch internals: `torch._compile._disable_dynamo` (same shape in 2.11 to 2.13)."""

    def __init__(self) -> None:
        import torch

        super().__init__("torch._dynamo")
        self._wrapped: list[Any] = []
        self._finder = _DynamoSubmodules()
        # Its own `__file__` (the real package's path, read without importing it): probes that walk
        # sys.modules ask every module for it (`inspect.getmodule`, which torch.library calls while
        # `torch.distributed.tensor` imports); answering through the real module would import
        # dynamo halfway through that import, and dynamo imports torch.distributed.tensor back.
        self.__file__ = os.path.join(os.path.dirname(torch.__file__), "_dynamo", "__init__.py")

    def disable(self, fn: Any = None, recursive: bool = True, **kwargs: Any) -> Any:
        if fn is None:  # used as @disable(recursive=...)
            return lambda f: self.disable(f, recursive, **kwargs)
        self._wrapped.append(fn)
        return fn

    def __getattr__(self, name: str) -> Any:
        # `__path__` too: the import system reads it on the parent before importing a submodule.
        if name.startswith("__") and name not in ("__path__", "__all__"):
            raise AttributeError(name)
        return getattr(self.real(), name)

    def install(self) -> None:
        sys.modules["torch._dynamo"] = self
        sys.meta_path.insert(0, self._finder)

    def uninstall(self) -> None:
        """Undo `install` and whatever this stand-in cached (the real module, if imported, stays)."""
        self.restore()
        sys.meta_path.remove(self._finder)

    def real(self) -> types.ModuleType:
        """The real torch._dynamo, imported now (what was cached so far is undone first)."""
        import importlib

        self.restore()
        return importlib.import_module("torch._dynamo")

    def restore(self) -> None:
        import torch

        for fn in self._wrapped:
            if getattr(fn, "__dynamo_disable", None) is fn:
                delattr(fn, "__dynamo_disable")  # a string: `del fn.__x` here would be name-mangled
        self._wrapped.clear()
        if sys.modules.get("torch._dynamo") is self:
            del sys.modules["torch._dynamo"]
        if torch.__dict__.get("_dynamo") is self:
            delattr(torch, "_dynamo")


class _DynamoSubmodules:
    """`import torch._dynamo.X` while `_DeferredDynamo` stood in: reading its `__path__` imported
    the real package, which loaded X already; the import system, which had decided to load X
    before that, gets the loaded module instead of executing X a second time."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        module = sys.modules.get(name)
        if not name.startswith("torch._dynamo.") or module is None:
            return None
        import importlib.machinery

        return importlib.machinery.ModuleSpec(name, _Loaded(module), is_package=hasattr(module, "__path__"))


class _Loaded:
    """A loader that answers a module already in sys.modules, unchanged."""

    def __init__(self, module: types.ModuleType) -> None:
        self.module = module
        self.spec = getattr(module, "__spec__", None)

    def create_module(self, spec: Any) -> types.ModuleType:
        return self.module

    def exec_module(self, module: types.ModuleType) -> None:
        try:  # the import system set ours; put the module's own back
            module.__spec__ = self.spec
        except AttributeError:  # a module that refuses new attributes (torch's config modules) kept its own
            pass


@contextlib.contextmanager
def dynamo_deferred() -> Iterator[None]:
    """`_DeferredDynamo` in place while inside, unless dynamo is imported already (a warm worker
    manager imports it once for all requests) or torch has no lazy `_disable_dynamo`."""
    import torch

    if "torch._dynamo" in sys.modules or not hasattr(getattr(torch, "_compile", None), "_disable_dynamo"):
        yield
        return
    stand_in = _DeferredDynamo()
    stand_in.install()
    try:
        yield
    finally:
        stand_in.uninstall()


def _launch_wrapped_kernels_directly(patches: "_Patches") -> None:
    """`wrap_triton` kernels launch straight away (torch 2.6+ keeps the switch in a thread-local
    `torch._library.triton.wrap_triton_enabled`; older releases have no `wrap_triton`)."""
    try:
        from torch._library import triton as torch_triton
    except ImportError:
        return
    flag = getattr(torch_triton, "wrap_triton_enabled", None)
    if flag is not None:
        patches.set(flag, "value", False)


@contextlib.contextmanager
def stand_in_device(target: Target | None, tensors: str = "meta") -> Iterator[None]:
    """Inside: torch and triton.testing answer as described in the module docstring. With
    `target=None` (a native compile on a real GPU) only timing is stubbed: the file's own
    benchmarks must not run while its launches are being recorded. `tensors="cpu"` puts GPU
    tensors on the CPU instead of the meta device, with their data, for Triton's interpreter."""
    import torch
    import triton.testing

    patches = _Patches()
    old_path = os.environ.get("PATH", "")
    tools = None
    patches.set(triton.testing, "do_bench", bench_once)
    patches.set(triton.testing, "do_bench_cudagraph", bench_once)
    patches.set(triton.testing.Mark, "run", first_configuration)
    mode = None
    deferred: contextlib.AbstractContextManager | None = None
    try:
        if target is not None:
            props = torch_properties(target)
            capability = (props.major, props.minor)
            cuda = torch.cuda
            answers: dict[str, Any] = {
                "is_available": lambda: True,
                "is_initialized": lambda: True,
                "device_count": lambda: 1,
                "current_device": lambda: 0,
                "set_device": lambda *a, **k: None,
                "synchronize": lambda *a, **k: None,
                "empty_cache": lambda: None,
                "manual_seed": lambda *a, **k: None,
                "manual_seed_all": lambda *a, **k: None,
                "get_device_properties": lambda *a, **k: props,
                "get_device_capability": lambda *a, **k: capability,
                "get_device_name": lambda *a, **k: props.name,
                "get_arch_list": lambda: [f"sm_{capability[0]}{capability[1]}"] if target.backend == "cuda"
                else [str(target.arch)],
                "is_bf16_supported": lambda *a, **k: capability >= (8, 0),
                "mem_get_info": lambda *a, **k: (props.total_memory, props.total_memory),
                "memory_allocated": lambda *a, **k: 0,
                "max_memory_allocated": lambda *a, **k: 0,
                "memory_reserved": lambda *a, **k: 0,
                "reset_peak_memory_stats": lambda *a, **k: None,
                "current_stream": lambda *a, **k: _Stream(),
                "default_stream": lambda *a, **k: _Stream(),
                "stream": lambda *a, **k: contextlib.nullcontext(),
                "device": lambda *a, **k: contextlib.nullcontext(),
                "Stream": _Stream,
                "Event": _Event,
            }
            for name, value in answers.items():
                patches.set(cuda, name, value)
                # Code also reaches these through their home module (`torch.cuda.memory.mem_get_info`).
                if name in vars(cuda.memory):
                    patches.set(cuda.memory, name, value)
            patches.set(torch.version, "cuda", CUDA_VERSION if target.backend == "cuda" else None)
            patches.set(torch.version, "hip", HIP_VERSION if target.backend == "hip" else None)
            on_gpu = ("cuda", "meta", "cpu") if tensors == "cpu" else ("cuda", "meta")
            patches.set(torch.Tensor, "is_cuda", property(lambda self: self.device.type in on_gpu))
            if tensors == "meta":
                patches.set(torch.Tensor, "device", _device_as_users_see_it(torch))
                patches.set(tc.OfflineDriver, "torch_device", "cuda:0")  # `x.device == DEVICE` holds
            # Inductor's generated code: `from torch._C import _cuda_getCurrentRawStream as
            # get_raw_stream` at import, `get_raw_stream(0)` per call (absent from CPU builds of torch)
            for name in ("_cuda_getCurrentRawStream", "_cuda_getCurrentStream"):
                patches.set(torch._C, name, lambda *a, **k: 0)
            _launch_wrapped_kernels_directly(patches)
            tools = vendor_tools(target, tempfile.mkdtemp(prefix="inspector-tools-"))
            os.environ["PATH"] = tools + os.pathsep + old_path
            mode = _gpu_to(tensors)
            mode.__enter__()
            deferred = dynamo_deferred()
            deferred.__enter__()
        yield
    finally:
        if deferred is not None:
            deferred.__exit__(None, None, None)
        if mode is not None:
            mode.__exit__(None, None, None)
        patches.restore()
        os.environ["PATH"] = old_path
        if tools:
            shutil.rmtree(tools, ignore_errors=True)


@contextlib.contextmanager
def inductor_device(target: Target | None) -> Iterator[None]:
    """Inductor's device interface answers for the stand-in GPU while inside (nothing natively).

    Code generators built on Inductor (Helion) read the GPU through
    `torch._inductor.runtime.hints.DeviceProperties.create`, which asks
    `torch._dynamo.device_interface.CudaInterface`; that class took torch.cuda's functions when it
    was imported, so the stand-in's patches of `torch.cuda` do not reach it. Touches torch
    internals: `CudaInterface`'s static methods (same names in torch 2.9 to 2.13)."""
    if target is None:
        yield
        return
    import torch
    from torch._dynamo.device_interface import CudaInterface

    props = torch_properties(target)
    patches = _Patches()
    for name, value in {"get_device_properties": lambda *a, **k: props, "current_device": lambda: 0,
                        "device_count": lambda: 1, "is_available": lambda: True,
                        "synchronize": lambda *a, **k: None}.items():
        patches.set(CudaInterface, name, staticmethod(value))
    # `isinstance(d, torch.cuda.device)` (torch's own device-index helpers) needs a class there
    patches.set(torch.cuda, "device", _DeviceContext)
    try:
        yield
    finally:
        patches.restore()


class _DeviceContext(contextlib.nullcontext):
    """`torch.cuda.device(index)` on the stand-in: a context that changes nothing, and a type."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()
