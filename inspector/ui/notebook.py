"""The inspector inside a notebook cell: `inspector.show(kernel_or_file, ...)`.

    import inspector
    inspector.show("kernels/add.py", target="sm_90", args={"n": "4095"})   # a file, as the page opens it
    inspector.show(my_kernel, target="gfx942", consts={"BLOCK": "256"})   # a @triton.jit defined in a cell

The answer displays inline (`_repr_html_`: JupyterLab, Notebook 7, VS Code's notebooks, an
nbconvert export): the resources and occupancy line, the source beside the chosen stages in one
self-contained document whose rows link on click as the page's do (`panes.py`, `static/panes.js`:
no server, no internet), the memory accesses with their width, sectors per request and share of
bytes used, and the advisor's findings. `.record` is the `Inspection` itself.

A kernel defined in a cell is compiled from the cell's own text (what IPython keeps for the cell,
the definitions before it in that cell included) written to a file of its own, so its lines are the
cell's lines; a kernel from a module compiles from its module's file. Either way the compile is
`inspector.compile.api.inspect_kernel`: in the sandbox's worker and through the cache, as the page
and the command line do; the notebook's kernel process never imports the file. Decision: the
display is plain HTML (an iframe's `srcdoc` for the linked panes), not a widget, so it needs no
extension and survives an export; what it cannot do without a server (edit and recompile) is the
page's job.
"""

from __future__ import annotations

import hashlib
import html
import inspect
import linecache
from pathlib import Path
from typing import Any

from inspector import places
from inspector.highlight import language_of, render_rows
from inspector.record import STAGE_TITLES, Inspection
from inspector.ui.linking import stage_line_maps
from inspector.ui.panes import Pane, panes_document

PANES_HEIGHT = 460


def _function_of(kernel: Any) -> Any:
    """The Python function under a `@triton.jit` kernel (through autotune / heuristics wrappers)."""
    fn = kernel
    for _ in range(8):
        if inspect.isfunction(fn):
            return fn
        fn = getattr(fn, "fn", None)
    raise TypeError(f"{kernel!r} is neither a kernel file's path nor a @triton.jit function")


def kernel_file(kernel: Any) -> tuple[Path, str | None]:
    """(the file to compile, the kernel's name or None) for a path or a `@triton.jit` function.

    A function whose source file is a notebook cell (IPython keeps cells in `linecache` under a
    name no file has, or in a temporary file) is written with its cell's whole text to
    `$TRITON_INSPECTOR_HOME/notebook/<digest>/<cell>.py`."""
    if isinstance(kernel, (str, Path)):
        path = Path(kernel).expanduser()
        if not path.is_file():
            raise FileNotFoundError(f"{kernel}: no such kernel file")
        return path.resolve(), None
    fn = _function_of(kernel)
    source_file = inspect.getsourcefile(fn) or ""
    if source_file and Path(source_file).is_file() and not _is_cell(source_file):
        return Path(source_file).resolve(), fn.__name__
    lines = linecache.getlines(source_file) if source_file else []
    if not lines:
        raise ValueError(f"the source of {fn.__name__} is not available (define it in a cell or a file)")
    text = "".join(lines)
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    out = places.inspector_home() / "notebook" / digest / "cell.py"
    out.parent.mkdir(parents=True, exist_ok=True)
    if not out.exists():
        out.write_text(text)
    return out, fn.__name__


def _is_cell(path: str) -> bool:
    """Whether a source file is a notebook cell's (ipykernel writes them under a temp folder)."""
    return "ipykernel_" in path or path.startswith("<ipython-input")


def show(kernel: Any, target: str = "sm_90", *, args: dict[str, Any] | None = None,
         consts: dict[str, Any] | None = None, num_warps: int | None = None, num_stages: int | None = None,
         stages: tuple[str, ...] | None = None, name: str | None = None) -> "Shown":
    """Compile `kernel` (a kernel file's path or a `@triton.jit` function) for `target` and return
    its display. `args` / `consts` override the call's values (as `--arg` / `--const`); `stages`
    picks the panes beside the source (default: the machine code, PTX or AMDGCN); `name` picks
    the kernel when a file has several."""
    from inspector.compile.api import inspect_kernel

    path, fn_name = kernel_file(kernel)
    options = {k: v for k, v in (("num_warps", num_warps), ("num_stages", num_stages)) if v is not None}
    rec = inspect_kernel(path, target=target, kernel=name or fn_name, args={k: str(v) for k, v in (args or {}).items()},
                         consts={k: str(v) for k, v in (consts or {}).items()}, options=options)
    return Shown(rec, stages)


class Shown:
    """An inspection as a notebook displays it (`_repr_html_`); `.record` is the Inspection."""

    def __init__(self, record: Inspection, stages: tuple[str, ...] | None = None) -> None:
        self.record = record
        machine = "ptx" if record.backend == "cuda" else "amdgcn"
        default = ("triton", machine) if record.generated is not None else (machine,)
        self.stages = [s for s in (stages or default) if s in record.stages]

    def __repr__(self) -> str:
        rec = self.record
        return f"<inspector.show: {rec.kernel} for {rec.target}, {'ok' if rec.ok else rec.error.short()}>"

    def _repr_html_(self) -> str:
        return render(self.record, self.stages)


def _header(rec: Inspection) -> str:
    from inspector.occupancy.words import limiter_words

    r, occ = rec.resources, rec.occupancy or {}
    regs = f"{r.registers} registers" if r.registers is not None else f"{r.vgprs} VGPR · {r.sgprs} SGPR"
    occupancy = f"{100 * occ['occupancy']:.0f}%" if "occupancy" in occ else "–"
    return (f"<b>{html.escape(rec.kernel)}</b> for <code>{html.escape(rec.target)}</code> · {regs} / thread · "
            f"spills {r.spill_store_bytes or 0} B · shared {r.shared_bytes} B · occupancy {occupancy} "
            f"(limited by {html.escape(limiter_words(occ.get('occupancy'), occ.get('limiters')))}) · "
            f"Triton {html.escape(rec.triton_version)}")


def _accesses(rec: Inspection) -> str:
    from inspector.analysis.memory import memory_report
    from inspector.analysis.words import line_words, number_words, percent_words

    rows = []
    for a in memory_report(rec).accesses:
        cz = a.coalescing
        sectors = "–" if cz is None or cz.sectors_per_request is None else (
            f"{number_words(cz.sectors_per_request)} (ideal {number_words(cz.ideal_sectors_per_request)})")
        rows.append(f"<tr><td>{line_words(rec, a.line)}</td><td>{html.escape(a.op.replace('tt.', ''))} {html.escape(a.pointer or '')}"
                    f"</td><td>{html.escape(a.verdict)}</td><td>{number_words(a.width_bits)}</td><td>{sectors}</td>"
                    f"<td class='use'>{'–' if a.uniform else percent_words(a.sector_efficiency)}</td></tr>")
    if not rows:
        return "<p>No loads or stores.</p>"
    return ("<table class='tki-acc'><thead><tr><th>line</th><th>access</th><th>verdict</th><th>bits</th>"
            "<th>sectors / request</th><th>sector use</th></tr></thead><tbody>" + "".join(rows) + "</tbody></table>")


def _findings(rec: Inspection) -> str:
    from inspector.analysis import advise

    found = [f for f in advise(rec) if f.severity != "info"]
    if not found:
        return "<p>No findings.</p>"
    return "<ul>" + "".join(f"<li><b>{html.escape(f.severity)}</b>: {html.escape(f.title)}</li>" for f in found) + "</ul>"


def render(rec: Inspection, stages: list[str]) -> str:
    """The display's HTML (self-contained: styles and scripts inline)."""
    if not rec.ok and not rec.stages:
        err = rec.error
        where = f" at line {err.line}" if err and err.line else ""
        return (f"<div class='tki'><b>{html.escape(err.kind if err else 'error')}</b>{where}: "
                f"<pre>{html.escape(err.message if err else '')}</pre></div>")
    panes = [Pane("source", "Source", Path(rec.file).name, "source", render_rows(rec.source, "python", "source"))]
    panes += [Pane(s, STAGE_TITLES.get(s, s), f"{rec.stages[s].count(chr(10)) + 1:,} lines", s,
                   render_rows(rec.stages[s], language_of(s), s)) for s in stages]
    doc = panes_document(panes, stage_line_maps(rec), storage_key=f"tki:nb:{rec.cache_key}")
    frame = (f"<iframe class='tki-panes' srcdoc=\"{html.escape(doc, quote=True)}\" "
             f"style='width:100%;height:{PANES_HEIGHT}px;border:1px solid #d9dbe1;border-radius:6px'></iframe>")
    style = ("<style>.tki table.tki-acc{border-collapse:collapse;font-size:13px}"
             ".tki table.tki-acc td,.tki table.tki-acc th{border:1px solid #ddd;padding:2px 8px;text-align:left}</style>")
    return (f"<div class='tki'>{style}<p>{_header(rec)}</p>{frame}<h4>Memory accesses</h4>{_accesses(rec)}"
            f"<h4>Findings</h4>{_findings(rec)}</div>")
