"""The table a capture opens to: one row per kernel specialisation, by launches (and time, when
it was measured on a GPU). Plain data, shared by the command line and the app."""

from __future__ import annotations

from typing import Any

from .store import Capture, KernelEntry


def specialisation_text(entry: KernelEntry) -> str:
    """The specialisation in one line: types, constexprs and divisibility, e.g.
    `*fp32:16, *fp32:16, i32:16, fp32, BLOCK=1024`."""
    parts = []
    for name, ty in entry.signature.items():
        if name in entry.constexprs:
            parts.append(f"{name}={entry.constexprs[name]}")
            continue
        attrs = entry.attributes.get(name) or []
        div = next((a.split("=", 1)[1] for a in attrs if a.startswith("tt.divisibility")), None)
        parts.append(f"{ty}:{div}" if div else ty)
    return ", ".join(parts)


def kernel_id(capture: Capture, entry: KernelEntry) -> str:
    """How the command line names a row: the kernel's name, `name#2` for its second specialisation."""
    from .reopen import specialisation_index

    i = specialisation_index(capture, entry)
    return entry.name if i == 0 else f"{entry.name}#{i + 1}"


def rows(capture: Capture) -> list[dict[str, Any]]:
    """The table's rows, most launched first."""
    out = []
    for i, e in enumerate(capture.sorted_kernels()):
        compiled = e.compiled or {}
        tune = e.autotune or {}
        row: dict[str, Any] = {
            "#": i,
            "kernel": kernel_id(capture, e),
            "kind": e.kind,
            "launches": e.launches,
            "grid": "x".join(map(str, e.grid)) if e.grid else "",
            "num_warps": e.options.get("num_warps"),
            "num_stages": e.options.get("num_stages"),
            "specialisation": specialisation_text(e),
            "autotune": (
                f"config {tune['chosen']} of {len(tune['configs'])}"
                if tune.get("chosen") is not None
                else (f"{len(tune['configs'])} configs" if tune else "")
            ),
            "registers": compiled.get("registers"),
            "shared": compiled.get("shared"),
            "where": f"{_short(e.file, capture.cwd)}:{e.line}" if e.file else e.module,
        }
        if capture.timed:
            row["time_ms"] = e.time_ms
        out.append(row)
    return out


def _short(path: str, cwd: str) -> str:
    """A path relative to the directory the run started in, when it lies inside it."""
    if cwd and path.startswith(cwd.rstrip("/") + "/"):
        return path[len(cwd.rstrip("/")) + 1 :]
    return path


def find(capture: Capture, spec: str) -> KernelEntry:
    """The entry a command line names: a row number, a kernel name, or `name#n`."""
    ordered = capture.sorted_kernels()
    if spec.isdigit():
        i = int(spec)
        if 0 <= i < len(ordered):
            return ordered[i]
        raise KeyError(f"no row {i}: the capture has {len(ordered)} kernels (rows 0-{len(ordered) - 1})")
    for e in ordered:
        if kernel_id(capture, e) == spec:
            return e
    names = ", ".join(dict.fromkeys(kernel_id(capture, e) for e in ordered)) or "none"
    raise KeyError(f"no kernel {spec!r} in the capture; it has: {names}")


def format_table(capture: Capture) -> str:
    """The table as text columns (for the command line)."""
    table = rows(capture)
    cols = (
        ["#", "kernel", "kind", "launches"]
        + (["time_ms"] if capture.timed else [])
        + ["grid", "num_warps", "autotune", "registers", "shared", "specialisation", "where"]
    )
    if not table:
        return "(no kernels)"
    text = [
        [("" if r.get(c) is None else (f"{r[c]:.3f}" if c == "time_ms" else str(r[c]))) for c in cols]
        for r in table
    ]
    widths = [max(len(c), *(len(t[i]) for t in text)) for i, c in enumerate(cols)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(cols, widths)).rstrip()]
    lines += ["  ".join(v.ljust(w) for v, w in zip(t, widths)).rstrip() for t in text]
    return "\n".join(lines)
