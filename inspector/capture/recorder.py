"""The recorder: turns what the hooks report into kernel entries, one per specialisation.

The hot path (a launch of a kernel already seen) is a dictionary lookup and a counter; everything
else (arguments, launch site, source files, the standalone reproducer) is done once per new
specialisation, or at the end of the run for kernels seen only through Triton's compile and launch
hooks (Inductor's).
"""

from __future__ import annotations

import datetime
import os
import platform
import sys
import textwrap
import time
import traceback
from typing import Any

from ..triton_compat import launch_hooks as hooks
from .store import Capture, KernelEntry
from .synthetic import launch_call, meta_proxy, synthetic_call

_OWN_DIR = os.path.dirname(os.path.abspath(__file__))
_HOOKS_DIR = os.path.dirname(os.path.abspath(hooks.__file__))  # triton_compat: the launch hooks' frames
_TRITON_DIR = os.path.dirname(os.path.abspath(hooks.triton.__file__))


class Recorder:
    """Collects kernels while installed (`start`/`stop`); `stop` returns the Capture."""

    def __init__(self, time: bool = False, program: list[str] | None = None):
        self.capture = Capture(
            program=list(program if program is not None else sys.argv), cwd=os.getcwd(), timed=bool(time)
        )
        self._hooks = hooks.TritonHooks(self, time=time)
        self._by_key: dict[Any, KernelEntry] = {}
        self._keep: list[Any] = []  # kernels and functions keyed by id(): kept alive so ids stay unique
        self._grids: dict[int, set] = {}  # id(entry) -> distinct grids (first 64)
        self._compiles: dict[str, dict[str, Any]] = {}  # hash -> what the listener saw
        self._hash_of_function: dict[Any, str] = {}
        self._hook_launches: dict[Any, int] = {}  # launches seen only by the hook, by CUfunction
        self._hash_launches: dict[str, int] = {}  # ... and by compile hash (watched functions)
        self._hash_function: dict[str, Any] = {}
        self._first_launch: dict[str, dict[str, Any]] = {}  # hash -> its first launch's grid, arguments
        self._times: list[tuple[Any, Any, Any]] = []
        self._entry_by_function: dict[Any, KernelEntry] = {}
        self._unloaded: set[int] = set()  # entries whose kernel was not yet loaded on the GPU
        self._name_launches: dict[str, int] = {}  # kernel name -> launches so far (a profiler counts them so)
        self._t0 = 0.0
        self.interpreted = False
        self.errors: list[str] = []

    # ---- lifetime ---------------------------------------------------------------------------

    def start(self) -> "Recorder":
        self._t0 = time.perf_counter()
        self._hooks.install()
        return self

    def stop(self) -> Capture:
        self._hooks.uninstall()
        cap = self.capture
        if self._hooks.replaced:
            cap.notes.append(
                f"another tool replaced {', '.join(self._hooks.replaced)} during the capture (tritonparse's "
                "init() does): what Triton reported through it afterwards was not seen. Start such tools "
                "before the capture; it chains to them"
            )
        cap.seconds = round(time.perf_counter() - self._t0, 4)
        self._finish_compiles()
        self._finish_times()
        cap.created = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
        cap.triton_version = hooks.TRITON_VERSION
        cap.python_version = platform.python_version()
        torch = sys.modules.get("torch")
        cap.torch_version = getattr(torch, "__version__", "") if torch else ""
        launched_on_gpu = any((e.compiled or {}).get("source") == "driver" for e in cap.kernels)
        if self.interpreted:
            cap.mode, cap.device = "interpreter", "CPU (Triton interpreter, TRITON_INTERPRET=1)"
        elif launched_on_gpu or any(e.launches for e in cap.kernels):
            cap.mode = "gpu"
            try:
                cap.device = torch.cuda.get_device_name() if torch is not None else ""
            except Exception:  # noqa: BLE001 - no CUDA context
                cap.device = ""
        else:
            cap.mode, cap.device = "compile-only", "none (kernels compiled, none launched)"
        cap.notes.extend(self.errors)
        return cap

    # ---- what the hooks report --------------------------------------------------------------

    def jit_launch(
        self,
        fn: Any,
        args: tuple,
        kwargs: dict,
        grid: Any,
        kernel: Any,
        tuner: Any,
        benchmarking: bool,
        interpreted: bool,
    ) -> None:
        try:
            if interpreted:
                self.interpreted = True
                jit = hooks.as_jit(fn)
                spec_key, bound_call = hooks.launch_key(jit, args, kwargs)
                key: Any = (id(fn), spec_key)
            else:
                jit = fn
                key = id(kernel)
            entry = self._by_key.get(key)
            if entry is None:
                self._keep.append(kernel if kernel is not None else fn)
                spec = (
                    hooks.launch_specialization(jit, bound_call)
                    if interpreted
                    else hooks.kernel_specialization(kernel)
                )
                entry = self._new_entry(fn, jit, args, kwargs, grid, kernel, tuner, spec)
                self._by_key[key] = entry
            before = self._name_launches.get(entry.name, 0)
            self._name_launches[entry.name] = before + 1
            if benchmarking:
                entry.benchmark_launches += 1
                return
            if entry.launches == 0:
                entry.launch_skip = before
            if entry.launches == 0 and entry.benchmark_launches:
                # made while the autotuner benchmarked: the program's own launch is this one
                entry.launch_site = _launch_site()
            entry.launches += 1
            if entry.autotune is not None and entry.autotune["chosen"] is None and tuner is not None:
                chosen = getattr(tuner, "best_config", None)  # set before the tuner launches
                entry.autotune["chosen"] = next((i for i, c in enumerate(tuner.configs) if c is chosen), None)
            grids = self._grids[id(entry)]
            if len(grids) < 64 and not callable(grid):
                grids.add(tuple(grid))
                entry.grids = len(grids)
            if id(entry) in self._unloaded and getattr(kernel, "module", None) is not None:
                # loaded on the GPU by this launch: the driver's registers and spills
                entry.compiled.update(hooks.compiled_facts(kernel))
                self._unloaded.discard(id(entry))
        except Exception as e:  # noqa: BLE001 - recording must never break the program
            if len(self.errors) < 20:
                self.errors.append(f"{getattr(fn, '__name__', fn)}: not recorded ({type(e).__name__}: {e})")

    def compiled(self, src: Any, metadata: dict, cache_hit: bool) -> None:
        h = metadata.get("hash")
        if h and h not in self._compiles and hasattr(src, "fn"):
            self._compiles[h] = {"src": src, "metadata": metadata, "cache_hit": cache_hit}

    def loaded(self, function: Any, hash: str) -> None:
        self._hash_of_function[function] = hash

    def hooked_launch(self, function: Any, hash: str | None = None) -> None:
        if hash:
            self._hash_launches[hash] = self._hash_launches.get(hash, 0) + 1
            self._hash_function.setdefault(hash, function)
        else:
            self._hook_launches[function] = self._hook_launches.get(function, 0) + 1

    def launch_arguments(self, hash: str | None, grid: Any, args: dict) -> None:
        """A launch's grid and arguments, kept (as meta stand-ins) for the first launch of a compile."""
        if not hash or hash in self._first_launch:
            return
        proxies = {name: meta_proxy(value) for name, value in args.items()}
        self._first_launch[hash] = {
            "grid": [int(g) for g in grid] if isinstance(grid, (tuple, list)) else None,
            "proxies": {k: v for k, v in proxies.items() if v is not None or args[k] is None},
            "described": [_describe(name, value) for name, value in args.items()],
        }

    def timed(self, function: Any, start: Any, end: Any) -> None:
        self._times.append((function, start, end))

    # ---- building entries -------------------------------------------------------------------

    def _new_entry(
        self,
        fn: Any,
        jit: Any,
        args: tuple,
        kwargs: dict,
        grid: Any,
        kernel: Any,
        tuner: Any,
        spec: dict[str, Any],
    ) -> KernelEntry:
        names = jit.arg_names
        bound = jit.signature.bind(*args, **{k: v for k, v in kwargs.items() if k in names})
        bound.apply_defaults()
        values = dict(bound.arguments)
        options = {k: v for k, v in kwargs.items() if k not in names and k not in hooks.INTERNAL_KWARGS}
        grid_list = _grid(grid, values)
        entry = KernelEntry(
            name=jit.__name__,
            kind="autotuned" if tuner is not None else "jit",
            module=getattr(jit, "module", "") or "",
            source=_dedent(jit.src),
            signature=spec["signature"],
            constexprs=spec["constexprs"],
            attributes=spec["attributes"],
            options=_plain_options({**spec["options"], **options}),
            arguments=[_describe(n, values[n]) for n in names if n in values],
            grid=grid_list,
        )
        self._place(entry, jit)
        entry.launch_site = _launch_site()
        if tuner is not None:
            configs = [_plain_dict(c.all_kwargs()) for c in tuner.configs]
            entry.autotune = {
                "configs": configs,
                "chosen": None,
                "keys": list(getattr(tuner, "keys", []) or []),
            }
        if kernel is not None:
            entry.compiled = hooks.compiled_facts(kernel)
            if "registers" not in entry.compiled:
                self._unloaded.add(id(entry))
            function = getattr(kernel, "function", None)
            if function:
                self._entry_by_function[function] = entry
        self._grids[id(entry)] = set()
        entry.reproducer = self._reproducer(jit, values, options, grid_list, entry)
        self._carry(entry, values)
        self.capture.kernels.append(entry)
        return entry

    def _place(self, entry: KernelEntry, jit: Any) -> None:
        """File, line and the module's text (Inductor's generated modules live only in its cache)."""
        from .. import triton_compat as tc

        path = getattr(getattr(jit, "fn", None), "__code__", None)
        path = path.co_filename if path is not None else ""
        entry.file = os.path.abspath(path) if path and not path.startswith("<") else path
        try:
            entry.line = tc.kernel_def_line(jit)
        except Exception:  # noqa: BLE001
            entry.line = 0
        if _is_inductor(jit, entry.file):
            entry.kind = "inductor"
        try:
            with open(entry.file, encoding="utf-8", errors="replace") as f:
                entry.file_id = self.capture.add_file(entry.file, f.read())
        except OSError:
            entry.notes.append(f"its file {entry.file} could not be read; only the kernel's source is kept")

    def _reproducer(
        self, jit: Any, values: dict, options: dict, grid: list[int] | None, entry: KernelEntry
    ) -> str:
        from .. import triton_compat as tc
        from ..worker.reproduce import standalone_file

        final = tc.FinalCall(args=values, options=options, grid=grid)
        try:
            return standalone_file(jit, final, grid, entry.file or entry.module)
        except Exception as e:  # noqa: BLE001 - a kernel we cannot write out is still listed
            entry.notes.append(f"no standalone file ({type(e).__name__}: {e})")
            return ""

    def _carry(self, entry: KernelEntry, values: dict[str, Any]) -> None:
        """Keep the launch's index-capable tensors (inspector.launch_data) for its reproducer."""
        import base64

        from .. import launch_data

        try:
            arrays, entry.data_skipped = launch_data.snapshot(values)
            if arrays:
                entry.data = base64.b64encode(launch_data.to_bytes(arrays)).decode()
        except Exception as e:  # noqa: BLE001 - recording must never break the program
            entry.notes.append(f"its tensors' data not kept ({type(e).__name__}: {e})")

    def _finish_compiles(self) -> None:
        """Kernels seen compiling but not through `kernel[grid](...)` (Inductor's, or direct
        `triton.compile` calls): an entry each, its launches counted by the launch hook."""
        linked = {(e.compiled or {}).get("hash") for e in self.capture.kernels}
        launches_by_hash: dict[str, int] = {}
        functions_by_hash: dict[str, Any] = {}
        for function, count in self._hook_launches.items():
            h = self._hash_of_function.get(function)
            if h is not None:
                launches_by_hash[h] = launches_by_hash.get(h, 0) + count
                functions_by_hash[h] = function
        for h, count in self._hash_launches.items():
            launches_by_hash[h] = launches_by_hash.get(h, 0) + count
            functions_by_hash.setdefault(h, self._hash_function.get(h))
        for h, info in self._compiles.items():
            if h in linked:
                continue
            try:
                self._compiled_entry(h, info, launches_by_hash.get(h, 0), functions_by_hash.get(h))
            except Exception as e:  # noqa: BLE001
                self.errors.append(
                    f"compile {info['metadata'].get('name')}: not recorded ({type(e).__name__}: {e})"
                )

    def _compiled_entry(self, h: str, info: dict[str, Any], launches: int, function: Any) -> None:
        from ..worker.reproduce import standalone_file

        src, meta = info["src"], info["metadata"]
        jit = src.fn
        names = list(jit.arg_names)
        signature = {str(k): str(v) for k, v in (src.signature or {}).items()}
        constants = {hooks._path_name(names, p): hooks._plain(v) for p, v in (src.constants or {}).items()}
        attributes = {
            hooks._path_name(names, p): [f"{a}={b}" for a, b in v] for p, v in (src.attrs or {}).items() if v
        }
        options = {
            k: meta[k] for k in ("num_warps", "num_stages", "num_ctas", "maxnreg") if meta.get(k) is not None
        }
        # options the caller set away from Triton's defaults change the code: keep them
        options.update(
            {
                k: meta[k]
                for k, default in (
                    ("enable_fp_fusion", True),
                    ("launch_pdl", False),
                    ("launch_cooperative_grid", False),
                )
                if k in meta and meta[k] != default
            }
        )
        entry = KernelEntry(
            name=jit.__name__,
            kind="compiled",
            module=getattr(jit, "module", "") or "",
            source=_dedent(jit.src),
            signature=signature,
            constexprs=constants,
            attributes=attributes,
            options=options,
            launches=launches,
        )
        self._place(entry, jit)
        entry.compiled = {
            "hash": h,
            "target": hooks._target_name(meta.get("target")),
            "shared": int(meta.get("shared", 0) or 0),
            "num_warps": meta.get("num_warps"),
            "num_stages": meta.get("num_stages"),
            "cache_hit": info["cache_hit"],
        }
        if function:
            self._entry_by_function[function] = entry
            res = hooks.driver_resources(function) if entry.compiled["target"].startswith("sm_") else {}
            if "registers" in res:
                entry.compiled.update(
                    registers=res["registers"], local_bytes=res.get("local_bytes"), source="driver"
                )
        self.capture.kernels.append(entry)
        try:
            first = self._first_launch.get(h)
            final = None
            if first is not None:
                entry.grid = first["grid"]
                entry.arguments = first["described"]
                final = launch_call(
                    jit,
                    signature,
                    src.constants or {},
                    src.attrs or {},
                    options,
                    first["proxies"],
                    first["grid"],
                )
                if final is None:
                    entry.notes.append(
                        "the first launch's arguments do not give the compiled specialisation back "
                        "(a pointer aligned apart from its storage offset?): its standalone file uses "
                        "arguments made from the specialisation"
                    )
            if final is None:
                final = synthetic_call(jit, signature, src.constants or {}, src.attrs or {}, options)
                if first is None:
                    entry.arguments = [_describe(n, final.args[n]) for n in names if n in final.args]
                    entry.notes.append(
                        "arguments made from the compiled specialisation (the launch's own were not seen)"
                    )
            entry.reproducer = standalone_file(jit, final, final.grid, entry.file or entry.module)
        except Exception as e:  # noqa: BLE001 - listed all the same, without a standalone file
            entry.notes.append(f"no standalone file ({type(e).__name__}: {e})")

    def _finish_times(self) -> None:
        if not self._times:
            return
        import torch

        torch.cuda.synchronize()
        by_hash = {(e.compiled or {}).get("hash"): e for e in self.capture.kernels if e.compiled}
        for function, start, end in self._times:
            entry = self._entry_by_function.get(function) or by_hash.get(self._hash_of_function.get(function))
            if entry is not None:
                entry.time_ms = round((entry.time_ms or 0.0) + start.elapsed_time(end), 6)


def _is_inductor(jit: Any, path: str) -> bool:
    """A kernel Inductor generated: its module lives in Inductor's cache and imports its runtime."""
    if "torchinductor" in path:
        return True
    for value in getattr(getattr(jit, "fn", None), "__globals__", {}).values():
        if getattr(value, "__name__", "").startswith("torch._inductor.runtime") or getattr(
            value, "__module__", ""
        ).startswith("torch._inductor.runtime"):
            return True
    return False


def _grid(grid: Any, values: dict[str, Any]) -> list[int] | None:
    try:
        if callable(grid):
            grid = grid(values)
        return [int(g) for g in grid]
    except Exception:  # noqa: BLE001 - a grid we cannot evaluate is left out
        return None


def _launch_site() -> str:
    """file:line of the innermost frame outside Triton and this package."""
    for frame in reversed(traceback.extract_stack()[:-3]):
        path = os.path.abspath(frame.filename)
        if path.startswith((_OWN_DIR, _HOOKS_DIR, _TRITON_DIR)):
            continue
        return f"{frame.filename}:{frame.lineno}"
    return ""


def _dedent(src: str) -> str:
    return textwrap.dedent(src)


def _plain_options(options: dict[str, Any]) -> dict[str, Any]:
    return {k: hooks._plain(v) for k, v in options.items() if v is not None}


def _plain_dict(d: dict[str, Any]) -> dict[str, Any]:
    return {str(k): hooks._plain(v) for k, v in d.items()}


def _describe(name: str, value: Any) -> dict[str, Any]:
    """An argument as data: tensors by dtype, shape, stride, storage offset and device."""
    try:
        import torch

        if isinstance(value, torch.Tensor):
            return {
                "name": name,
                "kind": "tensor",
                "dtype": str(value.dtype).replace("torch.", ""),
                "shape": list(value.shape),
                "stride": list(value.stride()),
                "offset": int(value.storage_offset()),
                "device": str(value.device),
            }
    except ImportError:  # pragma: no cover
        pass
    if value is None or isinstance(value, (bool, int, float, str)):
        return {"name": name, "kind": "value", "value": value}
    plain = hooks._plain(value)
    return {"name": name, "kind": type(value).__name__, "value": plain}
