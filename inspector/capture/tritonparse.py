"""Read a tritonparse trace (meta-pytorch's structured log: ndjson, one event per line, plain or
gzipped) into the same Capture the inspector's own capture makes.

A "compilation" event becomes a kernel entry: its name, options and shared memory from
`payload.metadata`, the specialisation from `metadata.src_constants` / `src_attrs` (keyed by
parameter index, "(4,)") and the parameter types from the TTIR's `tt.func` line, its source from
`payload.python_source`. "launch" events (recorded on a GPU with launch tracing on) are counted per
compile hash and give the grid and the arguments. Tried on traces written by tritonparse 0.6.0.
"""

from __future__ import annotations

import ast
import json
import re
from typing import IO, Any

from .store import Capture, CaptureFileError, KernelEntry

# The kernel's entry in TTIR, e.g.
#   tt.func public @add_kernel(%x_ptr: !tt.ptr<f32> {tt.divisibility = 16 : i32} loc("x_ptr"(#loc)), ...)
TT_FUNC = re.compile(
    r"tt\.func\s+(?:public\s+)?@(?P<name>[\w$.]+)\((?P<args>.*?)\)\s*(?:attributes|\{)", re.S
)
# One argument of it: "%x_ptr: !tt.ptr<f32> {tt.divisibility = 16 : i32}" or "%arg3: i32"
TT_ARG = re.compile(r"%[\w$.]+\s*:\s*(?P<type>!tt\.ptr<[^>]+>|[\w]+)")
# MLIR element types -> Triton's signature names
MLIR_TYPES = {
    "f32": "fp32",
    "f16": "fp16",
    "bf16": "bf16",
    "f64": "fp64",
    "i1": "i1",
    "i8": "i8",
    "i16": "i16",
    "i32": "i32",
    "i64": "i64",
    "f8E4M3FN": "fp8e4nv",
    "f8E5M2": "fp8e5",
    "f8E4M3FNUZ": "fp8e4b8",
    "f8E5M2FNUZ": "fp8e5b16",
}


def ttir_types(ttir: str) -> list[str]:
    """Triton signature types of the kernel's runtime parameters, in order, from its TTIR."""
    m = TT_FUNC.search(ttir or "")
    if not m:
        return []
    out = []
    for a in TT_ARG.finditer(m.group("args")):
        ty = a.group("type")
        if ty.startswith("!tt.ptr<"):
            inner = ty[len("!tt.ptr<") : -1].split(",")[0].strip()
            out.append("*" + MLIR_TYPES.get(inner, inner))
        else:
            out.append(MLIR_TYPES.get(ty, ty))
    return out


def _index(key: Any) -> int | None:
    try:
        k = ast.literal_eval(key) if isinstance(key, str) else key
    except (ValueError, SyntaxError):
        return None
    if isinstance(k, (tuple, list)) and len(k) == 1 and isinstance(k[0], int):
        return k[0]
    return k if isinstance(k, int) else None


def _params(code: str) -> tuple[list[str], set[str]]:
    """Parameter names of the kernel's def, and which are annotated constexpr."""
    import textwrap

    try:
        tree = ast.parse(textwrap.dedent(code))
    except SyntaxError:
        return [], set()
    fn = next((n for n in tree.body if isinstance(n, ast.FunctionDef)), None)
    if fn is None:
        return [], set()
    names = [a.arg for a in fn.args.args]
    constexpr = {
        a.arg for a in fn.args.args if a.annotation is not None and "constexpr" in ast.unparse(a.annotation)
    }
    return names, constexpr


def _function_text(module_code: str, name: str) -> str:
    """The text of function `name` (with its decorators) in a whole module's source."""
    import textwrap

    try:
        tree = ast.parse(textwrap.dedent(module_code))
    except SyntaxError:
        return ""
    lines = textwrap.dedent(module_code).splitlines()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            start = min([d.lineno for d in node.decorator_list] + [node.lineno])
            return "\n".join(lines[start - 1 : node.end_lineno]) + "\n"
    return ""


def _def_line(start: int, function_text: str) -> int:
    """The `def` line, from the first line of the function's text (its first decorator)."""
    for i, text in enumerate(function_text.splitlines()):
        if text.lstrip().startswith("def "):
            return start + i
    return start


def _payload(event: dict[str, Any]) -> dict[str, Any]:
    p = event.get("payload") or {}
    if isinstance(p, str):
        try:
            p = json.loads(p)
        except json.JSONDecodeError:
            p = {}
    return p if isinstance(p, dict) else {}


def read_trace(stream: IO[str], name: str = "<trace>") -> Capture:
    """A Capture from tritonparse's ndjson events (bad lines are named, not fatal)."""
    cap = Capture(mode="tritonparse", device="", program=[])
    compiles: dict[str, dict[str, Any]] = {}
    launches: dict[str, list[dict[str, Any]]] = {}
    bad = 0
    for lineno, line in enumerate(stream, 1):
        line = line.strip()
        if not line:
            continue
        try:
            event = json.loads(line)
        except json.JSONDecodeError as e:
            bad += 1
            if bad <= 3:
                cap.notes.append(f"{name}:{lineno}: not JSON ({e.msg}); line skipped")
            continue
        kind = event.get("event_type")
        if kind == "compilation":
            p = _payload(event)
            h = (p.get("metadata") or {}).get("hash")
            if h and h not in compiles:
                compiles[h] = p
        elif kind == "launch":
            h = (event.get("compilation_metadata") or {}).get("hash")
            if h:
                launches.setdefault(h, []).append(event)
    if not compiles and not launches:
        raise CaptureFileError(f"{name}: a tritonparse trace without compilation events (nothing to open)")
    for h, p in compiles.items():
        cap.triton_version = cap.triton_version or str((p.get("metadata") or {}).get("triton_version") or "")
        cap.kernels.append(_entry(h, p, launches.get(h, [])))
    if bad:
        cap.notes.append(f"{bad} lines of {name} were not JSON")
    return cap


def _entry(h: str, p: dict[str, Any], events: list[dict[str, Any]]) -> KernelEntry:
    """The kernel entry of one compilation event, with its launches."""
    from .synthetic import UnsupportedArgument, text_reproducer

    meta = p.get("metadata") or {}
    src = p.get("python_source") or {}
    code = src.get("code") or ""
    kernel = meta.get("name") or "kernel"
    # TRITON_FULL_PYTHON_SOURCE=1 keeps the whole file; the kernel starts at function_start_line
    whole = src.get("function_start_line") is not None
    text = _function_text(code, kernel) if whole else code
    names, constexpr_names = _params(text)
    ttir = next((t for f, t in (p.get("file_content") or {}).items() if f.endswith(".ttir")), "")
    runtime_types = iter(ttir_types(ttir))
    constants = {names[i]: v for k, v in (meta.get("src_constants") or {}).items()
                 if (i := _index(k)) is not None and i < len(names)}
    attrs = {names[i]: [f"{a}={b}" for a, b in v] for k, v in (meta.get("src_attrs") or {}).items()
             if (i := _index(k)) is not None and i < len(names) and v}
    signature = {n: "constexpr" if n in constants else next(runtime_types, "?") for n in names}
    options = {k: meta[k] for k in ("num_warps", "num_stages", "num_ctas", "maxnreg") if meta.get(k) is not None}
    first = events[0] if events else {}
    grid = first.get("grid")
    target = meta.get("target") or {}
    entry = KernelEntry(
        name=kernel, kind="compiled", file=src.get("file_path") or "",
        line=_def_line(int(src.get("function_start_line") or src.get("start_line") or 0), text),
        source=text, signature=signature, constexprs=constants, attributes=attrs, options=options,
        grid=[int(g) for g in grid] if isinstance(grid, list) else None, launches=len(events),
        grids=len({json.dumps(e.get("grid")) for e in events}),
        compiled={"hash": h,
                  "target": f"sm_{target.get('arch')}" if target.get("backend") == "cuda" else
                  str(target.get("arch") or ""),
                  "shared": int(meta.get("shared", 0) or 0), "num_warps": meta.get("num_warps"),
                  "num_stages": meta.get("num_stages")},
    )
    entry.arguments = [_argument(n, a) for n, a in (first.get("extracted_args") or {}).items()]
    if code and "?" not in signature.values():
        try:
            entry.reproducer = text_reproducer(code, kernel, signature, constants, attrs, options, entry.grid,
                                               "a tritonparse trace", whole_module=whole)
        except (UnsupportedArgument, SyntaxError, StopIteration, KeyError) as e:
            entry.notes.append(f"no standalone file ({type(e).__name__}: {e})")
    else:
        entry.notes.append("no standalone file: the trace lacks the kernel's source or its TTIR")
    return entry


def _argument(n: str, a: dict[str, Any]) -> dict[str, Any]:
    """A launch argument as the capture describes it."""
    if a.get("type") == "tensor":
        return {"name": n, "kind": "tensor", "dtype": str(a.get("dtype", "")).replace("torch.", ""),
                "shape": a.get("shape"), "stride": a.get("stride"), "offset": a.get("storage_offset", 0)}
    return {"name": n, "kind": "value", "value": a.get("value", a.get("repr"))}
