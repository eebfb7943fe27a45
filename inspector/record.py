"""The inspection record: one dataclass that everything else (CLI, app, analysis) consumes.

The worker fills it in a subprocess and sends it back as JSON; the cache stores that JSON; the
CLI's `--json` output is `Inspection.to_dict()`. Keep every field JSON-serialisable.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields, is_dataclass
from typing import Any

# Bump when the meaning or shape of a field changes, so cached records are recompiled.
SCHEMA_VERSION = 1

# Stage names in pipeline order, as Triton's backends name their outputs (`kernel.asm[...]`);
# `sass` is disassembled by us from the cubin.
NVIDIA_STAGES = ("ttir", "ttgir", "llir", "ptx", "sass")
AMD_STAGES = ("ttir", "ttgir", "llir", "amdgcn")
STAGE_TITLES = {
    "source": "Python",
    "triton": "Triton (generated)",
    "ttir": "TTIR",
    "ttgir": "TTGIR",
    "llir": "LLVM IR",
    "ptx": "PTX",
    "sass": "SASS",
    "amdgcn": "AMDGCN",
}


def plain(value: Any) -> Any:
    """`value` with its dataclasses turned into dicts, recursively, in new dicts and lists: what
    `dataclasses.asdict` gives for these records (JSON values inside), at half its cost (it
    deep-copies every leaf; a record is converted several times per inspection)."""
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, tuple):
        return tuple(plain(v) for v in value)
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value


@dataclass
class ErrorInfo:
    """Why an inspection failed. `file`/`line` point into the user's kernel file when known."""

    kind: str  # syntax | import | compilation | out_of_resources | unknown_target | missing_constexpr |
    # bad_argument | no_kernel | no_launch | timeout | memory | output_limit | crashed | internal
    message: str
    file: str | None = None
    line: int | None = None
    details: dict[str, Any] = field(default_factory=dict)

    def short(self) -> str:
        where = f"{self.file}:{self.line}: " if self.file and self.line else (f"{self.file}: " if self.file else "")
        return f"{where}{self.kind}: {self.message.splitlines()[0] if self.message else ''}"


@dataclass
class Resources:
    """What the compiled kernel uses. NVIDIA fields from ptxas/cubin (GPU-free) or the loaded
    kernel (native); AMD fields from the AMDGCN assembly's metadata."""

    num_warps: int = 0
    num_stages: int = 0
    num_ctas: int = 1
    threads: int = 0  # num_warps * warp size
    shared_bytes: int = 0  # Triton's metadata.shared: dynamic shared memory (LDS on AMD)
    registers: int | None = None  # per thread (NVIDIA); VGPRs for AMD are in `vgprs`
    spills: int | None = None  # Triton's n_spills: local memory bytes / 4
    spill_store_bytes: int | None = None  # ptxas "bytes spill stores"
    spill_load_bytes: int | None = None  # ptxas "bytes spill loads"
    local_bytes: int | None = None  # local memory (stack frame) per thread
    barriers: int | None = None  # named barriers used (ptxas "used N barriers")
    constant_bytes: int | None = None
    max_threads: int | None = None  # driver's limit for this kernel (native only)
    # AMD
    vgprs: int | None = None
    agprs: int | None = None
    sgprs: int | None = None
    vgpr_spills: int | None = None
    sgpr_spills: int | None = None
    lds_bytes: int | None = None
    scratch_bytes: int | None = None
    amd_occupancy: int | None = None  # waves per SIMD as the AMDGPU backend reports it
    source: str = ""  # where the figures came from: "ptxas", "cubin", "driver", "amdgcn"

    @staticmethod
    def from_metadata(metadata: dict[str, Any]) -> "Resources":
        """The launch shape every backend shares, from Triton's compile metadata."""
        r = Resources(
            num_warps=int(metadata.get("num_warps", 0)),
            num_stages=int(metadata.get("num_stages", 0)),
            num_ctas=int(metadata.get("num_ctas", 1)),
            shared_bytes=int(metadata.get("shared", 0)),
        )
        r.threads = r.num_warps * int(metadata.get("warp_size", 32))
        return r


@dataclass
class PassSnapshot:
    """The IR after one compiler pass (MLIR or LLVM), for the pass-by-pass view."""

    index: int
    name: str  # e.g. "TritonGPUCoalesce" or "InstCombinePass"
    argument: str  # the pass's command-line name, e.g. "tritongpu-coalesce"
    dialect: str  # "mlir" | "llvm" | "mir"
    scope: str  # what the dump covers: "builtin.module", "tt.func @k", "add_kernel", ...
    changed: bool  # whether the IR differs from the previous snapshot of the same dialect
    ir: str


@dataclass
class Parameter:
    """One kernel parameter as specialised for this compile."""

    name: str
    kind: str  # "pointer" | "scalar" | "constexpr" | "descriptor" | "other"
    type: str  # Triton's signature type: "*fp32", "i32", "constexpr", ...
    value: Any  # the value shown to the user ("fp32 tensor", 4096, 1024)
    specialization: list[str] = field(default_factory=list)  # e.g. ["tt.divisibility=16"], ["==1"]
    # What the file's own launch passed for it (described as `value` is), None where it passed
    # nothing (a default applied, or the call was made up): the page drops an override whose
    # basis this changes (`inspector/ui/overrides.py`).
    given: Any = None


# How bad a finding is, worst first (`analysis.advisor`; `explain --fail-on` reads it without the analysis).
SEVERITIES = ("high", "medium", "low", "info")


@dataclass
class Generated:
    """The Triton kernel another language generated from the user's kernel (a Helion kernel).

    The record's `file` and `source` stay the user's (what the editor shows, what was hashed);
    this is what was compiled: the generated text is the record's "triton" stage, `file` is the
    path Triton's locations name it by, `lines` ties each generated line to the user's line it
    came from."""

    language: str = "helion"
    kernel: str = ""  # the user's kernel ("matmul")
    file: str = ""  # the generated file as the IR's locations name it
    lines: list[list[int]] = field(default_factory=list)  # [generated line, user's line] pairs
    config: dict[str, Any] = field(default_factory=dict)  # the config it was generated for
    version: str = ""  # the generator's release

    def user_of(self) -> dict[int, int]:
        """Generated line -> the user's line it came from."""
        return {g: u for g, u in self.lines}

    def user_line(self, line: int | None) -> int | None:
        """The user's line a generated line came from (None: none, such as an import)."""
        return self.user_of().get(line) if line else None


@dataclass
class Inspection:
    """Everything learned from compiling one kernel with one call for one target."""

    kernel: str = ""
    file: str = ""
    target: str = ""  # "sm_90", "gfx942"
    backend: str = ""  # "cuda" | "hip"
    arch: int | str = ""
    warp_size: int = 32
    mode: str = "offline"  # "offline" (GPU-free) or "native"
    device_name: str | None = None  # the GPU, natively
    triton_version: str = ""
    torch_version: str = ""
    source: str = ""  # the kernel file's text
    kernels_in_file: list[str] = field(default_factory=list)
    call_origin: str = ""  # what launched it: "file" (module level / __main__), "example", a test or
    # benchmark function's name, or "signature" (no launch: a call built from the kernel's code)
    stopped: dict[str, Any] | None = None  # where the file's own code stopped (file, line, message, phase)
    # Modules this machine lacks that stood in (`worker.absent_modules`): {"module", "file", "line"}
    stood_in: list[dict[str, Any]] = field(default_factory=list)
    # Constexprs nothing launched the kernel with, compiled with made-up values that were checked by
    # compiling (`worker.suggestions`): {"name", "kind", "suggested"}; empty for a launch's own values
    made_up: list[dict[str, Any]] = field(default_factory=list)
    # The installed release refused the kernel and an older one beside it compiled it (`triton_version`):
    # {"release", "line", "message"} of the refusal (`compile.api.inspect`)
    refused_by: dict[str, Any] | None = None
    reproducer: str = ""  # a standalone file (kernel + example()) that reproduces this compile
    parameters: list[Parameter] = field(default_factory=list)
    options: dict[str, Any] = field(default_factory=dict)  # num_warps, num_stages, ... as compiled
    grid: list[int] | None = None
    autotune_configs: list[dict[str, Any]] = field(default_factory=list)
    autotune_index: int | None = None
    stages: dict[str, str] = field(default_factory=dict)
    # Stages not made yet, to be made when first asked for (`inspector.compile.api.complete`):
    # SASS costs nvdisasm's 0.2 s whatever the kernel, more than most compiles. `binary` is then
    # the compiled binary (base64) they are made from; "" once nothing is deferred.
    deferred: list[str] = field(default_factory=list)
    binary: str = ""
    passes: list[PassSnapshot] | None = None
    resources: Resources = field(default_factory=Resources)
    metadata: dict[str, Any] = field(default_factory=dict)  # Triton's compile metadata
    occupancy: dict[str, Any] | None = None  # filled from inspector.occupancy when available
    compile_seconds: float = 0.0
    cached: bool = False
    cache_key: str = ""
    log: str = ""  # what the kernel file printed and warnings, truncated
    error: ErrorInfo | None = None
    generated: Generated | None = None  # set when the kernel compiled was generated (Helion)
    schema: int = SCHEMA_VERSION

    @property
    def ok(self) -> bool:
        return self.error is None

    def launch_problem(self) -> str | None:
        """Why this kernel cannot run on its target as compiled (a compile error, more resources than
        the target has, no block fitting on an SM), or None when it can."""
        if self.error is not None:
            return self.error.short()
        occ = self.occupancy or {}
        if occ.get("blocks_per_sm") == 0:
            limiters = ", ".join(occ.get("limiters") or []) or "resources"
            return (f"not launchable on {self.target}: no block of {self.resources.threads} threads fits on "
                    f"one {'CU' if self.backend == 'hip' else 'SM'} (limited by {limiters})")
        return None

    def stopped_note(self, made_up: bool = True) -> str | None:
        """Where the file's own code stopped before the compiled launch was made, which constexprs
        were made up (`made_up=False`: left out, for the page's own form) and which modules this
        machine lacks stood in, or None."""
        if self.error is not None:
            return None
        st = self.stopped
        notes = [f"the file's own code stopped at line {st.get('line')} ({st.get('message')}); what it launched "
                 f"before that, or a call made from the kernel's code, was compiled"] if st else []
        if self.made_up and made_up:
            values = ", ".join(f"{m.get('name')}={m.get('suggested')}" for m in self.made_up)
            notes.append(f"nothing the file ran launched `{self.kernel}`, so its constexprs took made-up values "
                         f"({values}; checked by compiling): give real ones with --const NAME=VALUE, launch it "
                         "in an example(device), or open it through the code that calls it (--run \"pytest "
                         "tests/test_x.py::test_y\")")
        if self.stood_in:
            notes.append("modules this machine lacks stood in as empty stand-ins (install them for the file's "
                         "own behaviour): " + ", ".join(f"`{s.get('module')}` (ModuleNotFoundError at "
                                                        f"{s.get('file')} line {s.get('line')})" for s in self.stood_in))
        return "; ".join(notes) or None

    def refusal_note(self) -> str | None:
        """What the installed release said of a kernel an older one compiled (`refused_by`), or None."""
        by = self.refused_by
        if not by:
            return None
        where = f" line {by['line']}" if by.get("line") else " the kernel"
        return (f"Triton {by.get('release')} (installed) refuses{where}: {by.get('message')}; compiled with "
                f"Triton {self.triton_version}, installed beside it (--triton {self.triton_version}). The kernel "
                f"needs changing to run with the installed release.")

    @property
    def compiled_file(self) -> str:
        """The file whose lines the IR names: the generated one for a Helion kernel."""
        return self.generated.file if self.generated else self.file

    @property
    def compiled_kernel(self) -> str:
        """The kernel's name in the compiled code (`_helion_matmul` for Helion's `matmul`)."""
        return self.generated.kernel if self.generated else self.kernel

    @property
    def compiled_source(self) -> str:
        """The text that was compiled (the generated Triton for a Helion kernel)."""
        return self.stages.get("triton", "") if self.generated else self.source

    def stage_names(self) -> list[str]:
        order = NVIDIA_STAGES if self.backend == "cuda" else AMD_STAGES
        return [s for s in order if s in self.stages]

    def to_dict(self) -> dict[str, Any]:
        return plain(self)

    def to_json(self, **kw: Any) -> str:
        return json.dumps(self.to_dict(), **kw)

    @staticmethod
    def from_dict(d: dict[str, Any]) -> "Inspection":
        known = {f.name for f in fields(Inspection)}
        data = {k: v for k, v in d.items() if k in known}
        if data.get("error"):
            data["error"] = ErrorInfo(**data["error"])
        data["resources"] = Resources(**(data.get("resources") or {}))
        if data.get("passes") is not None:
            data["passes"] = [PassSnapshot(**p) for p in data["passes"]]
        data["parameters"] = [Parameter(**p) for p in data.get("parameters") or []]
        if data.get("generated"):
            data["generated"] = Generated(**data["generated"])
        return Inspection(**data)

    @staticmethod
    def from_json(text: str) -> "Inspection":
        return Inspection.from_dict(json.loads(text))

    @staticmethod
    def failure(error: ErrorInfo, **kw: Any) -> "Inspection":
        return Inspection(error=error, **kw)


def _option_value(value: Any) -> Any:
    """A compile option as Triton takes it: "4" -> 4, "true" -> True; other text stays text."""
    if not isinstance(value, str):
        return value
    low = value.strip().lower()
    if low in ("true", "false"):
        return low == "true"
    try:
        return int(low, 0)
    except ValueError:
        return value.strip()


@dataclass
class InspectRequest:
    """What to compile: one kernel of one file for one target, with the call's changes. Built once
    by the command line (`cli.options.compile_request`) and the page (`ui.settings.Settings.request`),
    completed by `compile.api.inspect` (the text read, the target resolved) and sent as JSON
    through the sandbox to the worker.

    `args` and `consts` stay text as typed ("fp16", "4096", "tl.float16"): turning a dtype name
    into a torch or Triton dtype needs those modules, which only the worker imports. `options`
    (num_warps, num_stages, maxnreg, ...) are typed here, once.
    """

    file: str
    target: str
    source: str | None = None  # None: the worker reads the file
    kernel: str | None = None
    root: str | None = None
    project_root: str | None = None
    args: dict[str, str] = field(default_factory=dict)
    consts: dict[str, str] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)
    autotune_index: int | None = None
    passes: bool = False
    defer: list[str] = field(default_factory=list)
    triton: str | None = None  # the Triton release ("3.6.0"; None: the installed one): picks the worker
    # A kernel nothing launches: its constexprs without a default get made-up values (checked by
    # compiling) and it compiles; False: the error asks for them (the guard guards launches only)
    make_up: bool = True
    kind: str = "inspect"

    def __post_init__(self) -> None:
        self.file = str(self.file)
        self.root = str(self.root) if self.root else None
        self.args = {str(k): str(v) for k, v in sorted(self.args.items())}
        self.consts = {str(k): str(v) for k, v in sorted(self.consts.items())}
        self.options = {str(k): _option_value(v) for k, v in sorted(self.options.items())}
        self.passes = bool(self.passes)
        self.make_up = bool(self.make_up)
        self.defer = list(self.defer)

    def key_fields(self) -> dict[str, Any]:
        """Everything that decides what is compiled, apart from the file and its text and target
        (which the caller keys in its own terms): deferring stages changes when, not what."""
        d = plain(self)
        for name in ("file", "target", "source", "defer", "triton"):  # (the release is keyed by the caller)
            d.pop(name)
        return d

    def to_dict(self) -> dict[str, Any]:
        return plain(self)

    def changes(self) -> dict[str, Any]:
        """The call's changes and choices (args, consts, options, root, triton, passes, defer), as
        keywords for what compiles one kernel several ways (`fix`, `fits`, a reopened capture)."""
        return {k: v for k, v in plain(self).items()
                if k in ("args", "consts", "options", "root", "triton", "passes", "defer") and v}

    @staticmethod
    def from_dict(d: dict[str, Any]) -> "InspectRequest":
        known = {f.name for f in fields(InspectRequest)}
        return InspectRequest(**{k: v for k, v in d.items() if k in known})
