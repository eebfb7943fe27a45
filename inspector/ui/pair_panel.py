"""A teaching pair side by side: a bundled file that declares `PAIR = (label_a, label_b)` is the
lesson's two halves (kernels/__init__.py), shown in two columns with each half's verdicts (width
and coalescing of every access, the advisor's titles) and its recorded time.

A label names a half as the compile needs it: a kernel function of the file
(`"copy_strided_kernel"`), or a constexpr setting, `NAME=VALUE` before any words in brackets
(`"BLOCK_N=32768 (spills)"`). The i-th half's recorded time is the i-th of the file's VARIANTS
(the recorded sweep of that name), at its largest size. The file is read with `ast`, never run
in the server.
"""

from __future__ import annotations

import ast
import dataclasses
from dataclasses import dataclass, field
from pathlib import Path

import streamlit as st

from inspector.analysis import advise, memory_report
from inspector.record import InspectRequest, Inspection
from inspector.ui import overrides, state
from inspector.analysis.words import number_words, percent_words
from inspector.ui.insight_panel import SEVERITY_ICONS, VERDICT_WORDS, sector_words


@dataclass
class PairHalf:
    """One half of a teaching pair, as the compile request needs it."""

    label: str
    kernel: str | None = None  # a kernel function of the file
    consts: dict[str, str] = field(default_factory=dict)  # or constexpr settings
    variant: str | None = None  # the recorded sweep of this half


def pair_halves(text: str) -> list[PairHalf]:
    """The halves a file's `PAIR` declares ([] when it declares none or the file does not parse)."""
    from inspector.ui.workspace import parse_python

    tree = parse_python(text)
    if tree is None:
        return []
    labels: list[str] = []
    variants: list[str] = []
    kernels: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            kernels.add(node.name)
        if not isinstance(node, ast.Assign) or not any(isinstance(t, ast.Name) for t in node.targets):
            continue
        name = next(t.id for t in node.targets if isinstance(t, ast.Name))
        if name == "PAIR" and isinstance(node.value, ast.Tuple):
            labels = [e.value for e in node.value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
        elif name == "VARIANTS" and isinstance(node.value, ast.Dict):
            variants = [k.value for k in node.value.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)]
    if len(labels) != 2:
        return []
    out = []
    for i, label in enumerate(labels):
        head = label.split(" (")[0].strip()
        half = PairHalf(label, variant=variants[i] if len(variants) == len(labels) else None)
        if head in kernels:
            half.kernel = head
        elif "=" in head:
            k, _, v = head.partition("=")
            half.consts = {k.strip(): v.strip()}
        else:
            return []
        out.append(half)
    return out


def _recorded(stem: str, variant: str | None) -> str:
    """The half's recorded time at the largest size, in words ("" when none is recorded)."""
    from inspector.bench.shipped import recorded_result

    if variant is None:  # the file's recorded sweep is not this half's alone: show none
        return ""
    result = recorded_result(stem)
    if result is None:
        return ""
    sweeps = [s for s in result.sweeps if s.variant == variant]
    if not sweeps or not sweeps[0].points:
        return ""
    point = sweeps[0].points[-1]
    t = next((x for x in point.timings if x.impl == "triton"), None)
    if t is None:
        return ""
    rate = f", {t.gbps:,.0f} GB/s" if t.gbps else ""
    dev = result.device
    what = f" {result.size_names[0]}" if len(result.size_names) == 1 else ""
    return (f"Recorded: {t.median_ms * 1000:,.1f} µs at {point.label}{what}{rate} "
            f"({getattr(dev, 'name', None) or 'GPU'}, Triton {getattr(dev, 'triton', None) or '?'})")


def _open_half(half: PairHalf) -> None:
    """on_click: show this half in the workbench (its kernel function, or its constexpr as overrides)."""
    s = state.settings()
    if half.kernel:
        s.function = half.kernel
    for name, value in half.consts.items():
        overrides.set_value("consts", name, value)
    state.request_compile()


def _shown(half: PairHalf) -> bool:
    """Whether the workbench shows this half now."""
    s = state.settings()
    if half.kernel:
        return s.function == half.kernel or (not s.function and half.kernel == (state.record() or Inspection()).kernel)
    compiled = {p.name: str(p.value) for p in (state.record() or Inspection()).parameters}
    return all(s.consts.get(k, compiled.get(k)) == v for k, v in half.consts.items())


def _half(rec: Inspection, half: PairHalf, recorded: str, index: int) -> None:
    st.markdown(f"**{half.label}**" + (f" · `{rec.kernel}`" if rec.kernel and rec.kernel != half.label else ""))
    shown = _shown(half)
    st.button("In the workbench above" if shown else "Open this half in the workbench", key=f"w.pair.open.{index}",
              disabled=shown, on_click=_open_half, args=(half,), icon=":material/open_in_browser:")
    if recorded:
        st.caption(recorded)
    if rec.error is not None and not rec.stages:
        st.error(rec.error.short())
        return
    rows = [{"line": a.line, "op": a.op.replace("tt.", ""), "pointer": a.pointer or "",
             "access": VERDICT_WORDS.get(a.verdict, a.verdict), "bits": number_words(a.width_bits),
             "sectors/request": sector_words(a) or "–",
             "sector use": "–" if a.uniform else percent_words(a.sector_efficiency)}
            for a in memory_report(rec).accesses]
    st.dataframe(rows, hide_index=True, width="stretch")
    found = [f for f in advise(rec) if f.severity != "info"]
    if not found:
        st.caption("Nothing to point out.")
    for f in found[:3]:
        st.markdown(f"{SEVERITY_ICONS.get(f.severity, '')} {f.title}")


def pair_panel(rec: Inspection) -> None:
    """Both halves of the open bundled file's teaching pair (nothing for other files)."""
    kf = state.current_kernel()
    if not kf.is_bundled:
        return
    halves = pair_halves(state.workspace_of_session().read_source(kf))
    if not halves:
        return
    from inspector.ui.compiling import compile_quietly

    file, extra = state.compile_input(kf)
    base = state.settings().request(file, **extra, defer=["sass"])
    requests = [request_of(h, base) for h in halves]
    st.markdown("##### The pair, side by side")
    records = compile_quietly(requests, "the pair")
    for i, (col, half, r) in enumerate(zip(st.columns(2), halves, records)):
        with col, st.container(border=True):
            _half(r, half, _recorded(Path(kf.bundled or file).stem, half.variant), i)


def request_of(half: PairHalf, base: InspectRequest) -> InspectRequest:
    """The compile request of one half, on top of the page's own request."""
    return dataclasses.replace(base, consts={**base.consts, **half.consts}, passes=False,
                               kernel=half.kernel or base.kernel)
