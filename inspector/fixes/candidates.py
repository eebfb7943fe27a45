"""Candidate fixes for one finding, as minimal edits of the user's file (`edits`): the change the
finding's cause calls for, never a guess the IR does not support. Nothing is compiled here
(`evaluate` does that); each candidate says what it promises about the data (`promises`: checked
when the example runs under the interpreter) and what else it assumes.

What each cause gets (the IR decides; see `for_finding`):
- a narrow access: hints on the values where the TTIR shows divisibility, contiguity or a mask's
  constancy lost (`hints`, from `analysis.hint_sites`): `tl.multiple_of`, `tl.max_contiguous`,
  `tl.max_constancy`, promising the elements of one 128-bit access (4 for fp32, 8 for fp16); a
  mask against an unaligned bound also gets its partial block peeled off (`peel`); a layout that
  gives each thread fewer than 16 bytes, a larger block (the constexprs `tl.arange` is sized by)
  or fewer warps, alone or composed with a hint (`compose`);
- spills, register- or shared-memory-limited occupancy, a kernel that cannot launch: fewer
  pipeline stages, a smaller tile (each tile constexpr halved), more warps (spills), `maxnreg`
  (register-limited occupancy);
- tf32 `tl.dot`: `input_precision="ieee"`;
- a small grid or an empty tail wave: a smaller block (more programs).
A launch option or constexpr is edited where the compiled call takes it: the autotune config
compiled (`triton.Config({...}, num_stages=3)` listed in the decorator), else the launch in the
file (the example, a wrapper). Configs made by a comprehension are not edited.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

from ..analysis.advisor import Finding
from ..analysis.memory import MemoryAccess
from ..record import Inspection
from . import edits

_OPTIONS = ("num_warps", "num_stages", "maxnreg", "num_ctas")


@dataclass
class Candidate:
    """One edit of the file, for one finding."""

    title: str
    source: str  # the whole edited file
    diff: str  # unified diff against the original
    assumptions: list[str] = field(default_factory=list)
    promises: list[int] = field(default_factory=list)  # lines holding a `tl.multiple_of` this edit added
    promise_values: dict[str, Any] = field(default_factory=dict)  # a scalar argument's promise, checked from the launch
    kind: str = "hint"  # hint | launch | precision | option | layout (a shared layout the author chose)
    # compile overrides instead of an edit (an autotuned kernel whose configs a helper builds):
    # {"options": {"num_stages": 2}} or {"consts": {...}}; the diff is then empty
    overrides: dict[str, dict[str, Any]] = field(default_factory=dict)
    knob: tuple[str, Any] | None = None  # (name, new value) of the one option or constexpr it sets
    relines: Any = None  # a `peel.Peeled` where the edit wrote lines twice (its lines moved)
    file: str = ""  # the file `source` and `diff` are of, when not the record's (`user_file`: --run)
    elsewhere: str = ""  # what the edit needs outside that file (a launch setting), or why it stays there


@dataclass
class _Ctx:
    rec: Inspection
    tree: ast.Module
    kernel: ast.FunctionDef
    path: str

    @property
    def params(self) -> dict[str, Any]:
        return {p.name: p for p in self.rec.parameters}


def _context(rec: Inspection) -> _Ctx | None:
    try:
        tree = ast.parse(rec.source)
    except SyntaxError:
        return None
    fn = edits.function(tree, rec.kernel)
    if fn is None:
        return None
    return _Ctx(rec, tree, fn, rec.file.rsplit("/", 1)[-1] or "kernel.py")


def _candidate(ctx: _Ctx, title: str, source: str, **kw: Any) -> Candidate | None:
    if source == ctx.rec.source:
        return None
    try:
        ast.parse(source)
    except SyntaxError:
        return None
    return Candidate(title, source, edits.unified_diff(ctx.rec.source, source, ctx.path), **kw)


def _hint_candidates(ctx: _Ctx, f: Finding, a: MemoryAccess) -> list[Candidate]:
    """Hints where the TTIR shows the fact lost (`hints.hint_sets`), each set one candidate."""
    from .hints import hint_sets

    ttir = ctx.rec.stages.get("ttir")
    if not ttir:
        return []
    limits, sets = hint_sets(ctx.rec.source, ttir, ctx.rec.file, a, {p.name: p.value for p in ctx.rec.parameters})
    out = []
    for h in sets:
        c = _candidate(ctx, h.title, h.source, assumptions=h.assumptions + [
            "the tensor's data starts 16-byte aligned (Triton specialises the pointer only then)"],
            promises=h.lines, promise_values=h.argument_values, kind="hint")
        if c:
            out.append(c)
    if limits is not None and "constancy" in limits.short and all(
            l.hintable for l in limits.losses if l.path[0].fact != "constancy"):
        out += _peel_candidate(ctx, a)  # the mask is a limit, and nothing a promise cannot lift is another
    return out


def _never(condition: str, values: dict[str, Any]) -> bool:
    """Whether a test made of the launch's scalars alone (`BLOCK <= n_cols`) is false for this
    launch: a row kernel whose one block spans the row never has a full block to peel."""
    try:
        tree = ast.parse(condition, mode="eval")
    except SyntaxError:
        return False
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    # plain arithmetic on the launch's integers only (no call, attribute or power: nothing the
    # user's text could make run or take long in this process)
    plain = (ast.Expression, ast.Name, ast.Load, ast.Constant, ast.BinOp, ast.Compare, ast.BoolOp, ast.UnaryOp,
             ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod, ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Eq, ast.NotEq,
             ast.And, ast.Or, ast.USub, ast.Not)
    if not all(isinstance(n, plain) for n in ast.walk(tree)) or not names or not all(
            isinstance(values.get(n), int) and not isinstance(values.get(n), bool) for n in names):
        return False
    try:
        return not eval(compile(tree, "<test>", "eval"), {"__builtins__": {}}, {n: values[n] for n in names})
    except Exception:  # noqa: BLE001 - an expression this cannot evaluate is not known to be false
        return False


def _peel_candidate(ctx: _Ctx, a: MemoryAccess) -> list[Candidate]:
    """The full blocks without the mask, the partial one with it (`peel`): no promise needed."""
    from ..analysis.hint_sites import lang_alias
    from .peel import peel

    p = peel(ctx.rec.source, ctx.rec.kernel, a.line, lang_alias(ctx.tree))
    if p is None or _never(p.condition, {q.name: q.value for q in ctx.rec.parameters}):
        return []
    c = _candidate(ctx, f"peel the partial block off: the full ones (`{p.condition}`) without the mask, on lines "
                        f"{p.first}-{p.first + 2 * p.count + 1}", p.source, kind="peel", assumptions=[
                            "a block is full exactly when the test says so (the outputs check says whether it is)"])
    if c:
        c.relines = p
    return [c] if c else []


def _launch(ctx: _Ctx) -> ast.Call | None:
    """The launch the inspection compiled: in the function it came from when that is in the file."""
    origin = ctx.rec.call_origin if ctx.rec.call_origin not in ("file", "signature", "") else None
    found = edits.launches(ctx.tree, ctx.rec.kernel, inside=origin) if origin else []
    found = found or edits.launches(ctx.tree, ctx.rec.kernel)
    return found[0] if found else None


def _config(ctx: _Ctx) -> ast.Call | None:
    """The `triton.Config(...)` the inspection compiled, when the decorator lists them literally."""
    index = ctx.rec.autotune_index or 0
    for deco in ctx.kernel.decorator_list:
        if not isinstance(deco, ast.Call):
            continue
        listed = edits.keyword(deco, "configs")
        value = listed.value if listed else (deco.args[0] if deco.args else None)
        if isinstance(value, ast.Name):  # configs=CONFIGS, a list the module assigns
            value = edits.assignment_value(ctx.tree, value.id)
        if isinstance(value, (ast.List, ast.Tuple)):
            calls = [e for e in value.elts if isinstance(e, ast.Call) and _is_config(e)]
            if len(calls) == len(value.elts) and index < len(calls):
                return calls[index]
    return None


def _is_config(call: ast.Call) -> bool:
    f = call.func
    return (f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else "") == "Config"


def _launch_edit(ctx: _Ctx, title: str, key: str, value: Any, assumptions: list[str] | None = None) -> list[Candidate]:
    """`key=value` where the compiled call gets it: the autotune config compiled (its dict for a
    constexpr, a keyword for an option), else the caller's variable that the launch passes (one
    candidate per assignment that may be the one taken), else the launch's keyword."""
    made = _launch_edit_text(ctx, title, key, value, assumptions)
    for c in made:
        c.knob = (key, value)
    return made


def _launch_edit_text(ctx: _Ctx, title: str, key: str, value: Any,
                      assumptions: list[str] | None = None) -> list[Candidate]:
    configs = ctx.rec.autotune_configs
    index = ctx.rec.autotune_index or 0
    # a constexpr the configs do not set comes from the launch, autotuned or not
    if configs and (key in _OPTIONS or index < len(configs) and key in configs[index]):
        call = _config(ctx)
        if call is None:  # configs a helper or a comprehension makes: the change as a compile override
            where = "options" if key in _OPTIONS else "consts"
            return [Candidate(f"{title} for autotune config {ctx.rec.autotune_index or 0} (as a compile "
                              f"{where[:-1]}: the configs are not listed literally)", ctx.rec.source, "",
                              list(assumptions or []), kind="option", overrides={where: {key: value}})]
        meta = call.args[0] if call.args and isinstance(call.args[0], ast.Dict) else None
        entry = next((v for k, v in zip(meta.keys, meta.values) if edits.literal(k) == key), None) if meta else None
        if entry is not None:
            src = edits.replace(ctx.rec.source, entry, repr(value))
        elif key in _OPTIONS:
            src = edits.set_keyword(ctx.rec.source, call, key, repr(value))
        else:
            return []
        title += f" in autotune config {ctx.rec.autotune_index or 0}"
    else:
        call = _launch(ctx)
        if call is None:
            return []
        variable = _launch_variable(ctx, call, key, value)
        if variable:
            return variable
        given = edits.keyword(call, key)
        if key not in _OPTIONS and given is not None and edits.literal(given.value) is None:
            # `BK=triton.next_power_of_2(K)`: a block the caller derives from the problem; a literal
            # in its place leaves what else the caller derives (the grid, NK) as it was
            return []
        src = edits.set_keyword(ctx.rec.source, call, key, repr(value))
    c = _candidate(ctx, title, src, assumptions=list(assumptions or []), kind="launch")
    return [c] if c else []


def _launch_variable(ctx: _Ctx, call: ast.Call, key: str, value: Any) -> list[Candidate]:
    """`BLOCK = 128` -> `BLOCK = 64` where the launch passes `BLOCK_M=BLOCK` and the function that
    launches sets BLOCK from a literal of the compiled value: the caller's own variable, so that
    whatever else follows it (the grid, BLOCK_N=BLOCK) changes with it, as a hand edit would. Where
    several assignments give that value (a branch per GPU), each is a candidate of its own: the
    one the compile shows reached the launch is kept (`reached`), the others are dropped."""
    params = [p.name for p in ctx.rec.parameters]
    kw = edits.keyword(call, key)
    arg = kw.value if kw is not None else (call.args[params.index(key)] if key in params
                                           and params.index(key) < len(call.args) else None)
    old = _constexpr_value(ctx, key) if key not in _OPTIONS else _option(ctx, key)
    if not isinstance(arg, ast.Name) or old is None:
        return []
    scope = next((f for f in ast.walk(ctx.tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
                  and f.lineno <= call.lineno <= (f.end_lineno or f.lineno) and f is not ctx.kernel), ctx.tree)
    sites: list[ast.expr] = []
    for node in ast.walk(scope):
        if not isinstance(node, ast.Assign) or len(node.targets) != 1:
            continue
        target, val = node.targets[0], node.value
        pairs = list(zip(target.elts, val.elts)) if isinstance(target, ast.Tuple) and isinstance(
            val, (ast.Tuple, ast.List)) and len(target.elts) == len(val.elts) else [(target, val)]
        for t, v in pairs:
            if isinstance(t, ast.Name) and t.id == arg.id:
                # `BC = 64 if K <= 128 else 32`: the branch that gives the compiled value
                while isinstance(v, ast.IfExp) and edits.literal(v) is None:
                    v = v.body if edits.literal(v.body) == old or isinstance(v.body, ast.IfExp) \
                        and edits.literal(v.orelse) != old else v.orelse
                if edits.literal(v) == old and not isinstance(edits.literal(v), bool):
                    sites.append(v)
    passed = sorted({k.arg for k in call.keywords if k.arg and isinstance(k.value, ast.Name) and k.value.id == arg.id}
                    | {key})
    grid = call.func.slice if isinstance(call.func, ast.Subscript) else None
    grid_names = edits.names_in(grid) if grid is not None else set()
    for g in list(grid_names):  # `grid = (batch, head, triton.cdiv(n, BLOCK))` assigned before the launch
        value_of = edits.assignment_value(scope, g, call.lineno)
        grid_names |= edits.names_in(value_of) if value_of is not None else set()
    follows = f"passed as {', '.join(passed)}" + ("; the grid is computed from it" if arg.id in grid_names else "")
    where = scope.name if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)) else "the file"
    out = []
    for site in sorted(sites, key=lambda n: (n.lineno, n.col_offset)):
        c = _candidate(ctx, f"{arg.id} {old} -> {value} in {where} (line {site.lineno}, {follows})",
                       edits.replace(ctx.rec.source, site, repr(value)), kind="launch")
        if c:
            out.append(c)
    return out


def _constexpr_value(ctx: _Ctx, name: str) -> int | None:
    p = ctx.params.get(name)
    v = getattr(p, "value", None)
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _tile_constexprs(ctx: _Ctx) -> list[str]:
    """Constexprs that size a block: those `tl.arange` or a block shape is built from."""
    consts = {p.name for p in ctx.rec.parameters if p.kind == "constexpr"}
    used: list[str] = []
    for n in ast.walk(ctx.kernel):
        if not (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)):
            continue
        # the extent itself, not the shape, strides and offsets beside it
        kw = edits.keyword(n, "block_shape") or edits.keyword(n, "shape") or edits.keyword(n, "end")
        sized = {"arange": 1, "zeros": 0, "full": 0, "make_block_ptr": 4}.get(n.func.attr)
        if sized is None:
            continue
        extent = kw.value if kw is not None else n.args[sized] if sized < len(n.args) else None
        if extent is not None:
            for name in sorted(edits.names_in(extent)):
                if name in consts and name not in used and _constexpr_value(ctx, name):
                    used.append(name)
    return used


# Calls (and keywords) whose arguments only shape a block: an extent used nowhere else spans its
# whole dimension.
_SHAPING = {"arange", "zeros", "full", "reshape", "view", "broadcast_to", "static_assert", "zeros_like", "full_like"}


def _spans_whole_dimension(ctx: _Ctx, name: str) -> bool:
    """Whether constexpr `name` only shapes blocks (`tl.arange(0, BLOCK_DMODEL)`, `tl.zeros([BLOCK_M,
    BLOCK_DMODEL])`, `block_shape=`) and is compared, never stepping through a dimension (`pid *
    BLOCK_M`, `range(0, n, BLOCK_N)`, `tl.advance(p, (0, BLOCK_K))`): the block spans the whole
    dimension (a head dim, a row), and halving it would drop elements instead of tiling them."""
    def uses(node: ast.AST) -> bool:
        called = node.func.attr if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) else \
            node.func.id if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) else ""
        if called in _SHAPING:
            return False
        if called == "make_block_ptr":  # only its offsets step through the tensor
            kw = edits.keyword(node, "offsets")  # type: ignore[arg-type]
            offsets = kw.value if kw is not None else node.args[3] if len(node.args) > 3 else None  # type: ignore[attr-defined]
            return offsets is not None and uses(offsets)
        if isinstance(node, (ast.Compare, ast.arguments)) or isinstance(node, ast.keyword) and node.arg in (
                "block_shape", "shape"):
            return False
        if isinstance(node, ast.Name):
            return node.id == name
        return any(uses(child) for child in ast.iter_child_nodes(node))
    return not any(uses(stmt) for stmt in ctx.kernel.body)


def _tiles(ctx: _Ctx) -> list[str]:
    """Tile constexprs a smaller value tiles more finely (not those spanning a whole dimension)."""
    return [n for n in _tile_constexprs(ctx) if not _spans_whole_dimension(ctx, n)]


def _scaled(ctx: _Ctx, names: list[str], factor: float, why: str, low: int = 16) -> list[Candidate]:
    out = []
    for name in names:
        v = _constexpr_value(ctx, name)
        if not v:
            continue
        new = int(v * factor)
        if new < low or new == v:
            continue
        out += _launch_edit(ctx, f"{name} {v} -> {new} ({why})", name, new,
                            [f"the launch's grid follows {name} (the outputs check says whether it does)"])
    return out


def _option(ctx: _Ctx, key: str) -> int | None:
    v = ctx.rec.options.get(key)
    return v if isinstance(v, int) else None


def _stages(ctx: _Ctx) -> list[Candidate]:
    s = _option(ctx, "num_stages")
    if s and s > 1:
        return _launch_edit(ctx, f"num_stages {s} -> {s - 1} (one buffer fewer in shared memory)", "num_stages", s - 1)
    return []


def _warps(ctx: _Ctx, factor: float, why: str) -> list[Candidate]:
    w = _option(ctx, "num_warps") or ctx.rec.resources.num_warps
    new = max(1, int(w * factor)) if w else 0  # fewer warps stop at one
    if not w or new == w or new > 32:
        return []
    return _launch_edit(ctx, f"num_warps {w} -> {new} ({why})", "num_warps", new)


def _fewer_threads(ctx: _Ctx) -> list[Candidate]:
    """num_warps down to what a block may hold, when the block has more threads than that."""
    from ..hardware.architectures import max_threads_per_block

    r, rec = ctx.rec.resources, ctx.rec
    most = max_threads_per_block(rec.backend, rec.arch)
    width = rec.warp_size or 32
    if not most or r.threads <= most or not r.num_warps:
        return []
    new = most // width
    return _launch_edit(ctx, f"num_warps {r.num_warps} -> {new} (a block of {new * width} threads, the most "
                             f"{rec.target} allows)", "num_warps", new)


def _maxnreg(ctx: _Ctx) -> list[Candidate]:
    """The largest register cap (a multiple of 8) under which the occupancy calculator fits one
    more block on an SM (NVIDIA)."""
    from ..occupancy import triton_occupancy

    r = ctx.rec.resources
    blocks = (ctx.rec.occupancy or {}).get("blocks_per_sm")
    if ctx.rec.backend != "cuda" or not r.registers or not r.num_warps or blocks is None:
        return []
    for cap in range(r.registers // 8 * 8, 23, -8):
        occ = triton_occupancy(ctx.rec.target, r.num_warps, cap, r.shared_bytes, num_ctas=r.num_ctas)
        if occ.blocks_per_sm > blocks:
            return _launch_edit(ctx, f"maxnreg={cap} (registers capped so {occ.blocks_per_sm} blocks fit an SM)",
                                "maxnreg", cap, ["ptxas may spill to fit the cap: the spills figure says whether it did"])
    return []


def _precision(ctx: _Ctx, f: Finding) -> list[Candidate]:
    out = []
    for line in ([f.line] if f.line else []) + f.lines:
        for call in edits.calls_on_line(ctx.kernel, line, ("dot",)):
            key = "allow_tf32" if edits.keyword(call, "allow_tf32") else "input_precision"
            value = "False" if key == "allow_tf32" else '"ieee"'
            src = edits.set_keyword(ctx.rec.source, call, key, value)
            c = _candidate(ctx, f"tl.dot on line {call.lineno} in full fp32 ({key}={value})", src, kind="precision",
                           assumptions=["full-precision fp32 products are wanted (3x-6x slower on tensor cores than tf32)"])
            if c:
                out.append(c)
        if out:
            break
    return out


# (vec, per_phase, max_phase) of Gluon's SwizzledSharedLayout to try: an element c of row r goes to
# column ((c // vec) ^ ((r // per_phase) % max_phase)) * vec + c % vec; the compile says which removes
# the conflict (and what it costs the other side: a wide vec keeps 128-bit writes)
SWIZZLES = ((1, 1, 32), (1, 1, 16), (1, 1, 8), (2, 1, 16), (4, 1, 8), (4, 2, 8), (8, 1, 8))


def _is_gluon(ctx: _Ctx) -> bool:
    return any("gluon" in edits.text_of(ctx.rec.source, d) for d in ctx.kernel.decorator_list)


def _swizzles(ctx: _Ctx, f: Finding) -> list[Candidate]:
    """Each `SwizzledSharedLayout(vec, per_phase, max_phase, order)` the kernel's file builds (Gluon,
    where the author picks the shared layout), set to each of SWIZZLES in turn."""
    out = []
    for call in ast.walk(ctx.tree):
        if not (isinstance(call, ast.Call) and (getattr(call.func, "attr", None) or getattr(call.func, "id", None))
                == "SwizzledSharedLayout" and len(call.args) >= 3):
            continue
        now = tuple(edits.literal(a) for a in call.args[:3])
        for vec, per_phase, max_phase in SWIZZLES:
            if (vec, per_phase, max_phase) == now:
                continue
            rest = ", ".join(edits.text_of(ctx.rec.source, a) for a in call.args[3:])
            kws = ", ".join(edits.text_of(ctx.rec.source, k) for k in call.keywords)
            args = ", ".join(x for x in (f"{vec}, {per_phase}, {max_phase}", rest, kws) if x)
            text = f"{edits.text_of(ctx.rec.source, call.func)}({args})"
            c = _candidate(ctx, f"shared layout on line {call.lineno}: SwizzledSharedLayout({vec}, {per_phase}, "
                                f"{max_phase}) (was {', '.join(map(str, now))})",
                           edits.replace(ctx.rec.source, call, text), kind="layout",
                           assumptions=["a swizzle moves values within shared memory only: what the kernel "
                                        "computes stays the same (the outputs check runs where the kernel can)"])
            if c:
                out.append(c)
    return out


def _layout_factor(ctx: _Ctx, a: MemoryAccess | None) -> int:
    """How much larger a block (or how many times fewer warps) gives each thread the elements of
    one 128-bit access: 2 where the access does not say (a power of two, at most 16)."""
    threads = (ctx.rec.resources.num_warps or 0) * (ctx.rec.warp_size or 32)
    if a is None or not a.shape or not threads or not a.element_bits:
        return 2
    elements = 1
    for d in a.shape:
        elements *= d
    need = max(1, 128 // a.element_bits)
    factor = 2
    while factor < 16 and elements * factor < need * threads:
        factor *= 2
    return factor


def _layout_steps(ctx: _Ctx, a: MemoryAccess | None = None) -> list[Candidate]:
    k = _layout_factor(ctx, a)
    return _scaled(ctx, _tile_constexprs(ctx), k, "more contiguous elements per thread") + \
        _warps(ctx, 1 / k, "more elements per thread for the same block")


def layout_steps(rec: Inspection, a: MemoryAccess | None = None) -> list[Candidate]:
    """Edits that give each thread more contiguous elements: each block constexpr larger, fewer
    warps, by the factor access `a` needs for 128 bits (partners for a hint in `compose`)."""
    ctx = _context(rec)
    return _layout_steps(ctx, a) if ctx is not None else []


def reached(c: Candidate, after: Inspection) -> bool:
    """Whether the value a candidate sets reached the compiled launch (an edit of a branch the
    launch does not take changes nothing): True where it cannot tell."""
    if c.knob is None or not after.stages:
        return True
    key, value = c.knob
    if key in _OPTIONS:
        got = after.options.get(key, getattr(after.resources, key, None))
    else:
        got = next((p.value for p in after.parameters if p.name == key), value)
    return got is None or got == value


# Findings about a limit (shared memory, registers) that one step may not clear.
STEPPED = ("cannot_launch", "spills", "occupancy")


def further(rec: Inspection, f: Finding, tried: list[tuple[Candidate, bool]]) -> list[Candidate]:
    """When no first-round candidate cleared a limit (`tried`: each with whether it compiled and
    moved the figure the right way), the same knobs stepped further: num_stages down to 1, a tile
    halved again (to 16). Only knobs that helped are followed; at most three steps each."""
    ctx = _context(rec)
    if ctx is None or f.code not in STEPPED:
        return []
    out: list[Candidate] = []
    for c, helped in tried:
        if not helped or c.knob is None or not isinstance(c.knob[1], int) or isinstance(c.knob[1], bool):
            continue
        key, value = c.knob
        old = _option(ctx, key) if key in _OPTIONS else _constexpr_value(ctx, key)
        if old is None or key in ("num_warps", "maxnreg"):
            continue
        if key == "num_stages":
            steps = list(range(value - 1, 0, -1))[:3]
            why = "stages down until a block fits" if f.code == "cannot_launch" else "fewer stages still"
        else:
            steps = [v for v in (value // 2, value // 4, value // 8) if v >= 16 and v < value]
            why = "a smaller tile still"
        for v in steps:
            out += _launch_edit(ctx, f"{key} {old} -> {v} ({why})", key, v,
                                c.assumptions if key != "num_stages" else None)
    return out


def for_finding(rec: Inspection, f: Finding, accesses: list[MemoryAccess]) -> list[Candidate]:
    """The candidate edits for one finding (none when the cause has no edit the tool can make)."""
    ctx = _context(rec)
    if ctx is None:
        return []
    out: list[Candidate] = []
    if f.code in ("scalar_access", "partial_access", "uncoalesced_access"):
        a = next((x for x in accesses if x.line == f.line and not x.uniform), None)
        if a is None:
            return []
        out += _hint_candidates(ctx, f, a)
        if set(a.reason_codes) <= {"layout", "unknown"} and "layout" in a.reason_codes:
            out += _layout_steps(ctx, a)
    elif f.code == "spills":
        out += _stages(ctx) + _scaled(ctx, _tiles(ctx), 0.5, "a smaller tile holds fewer values per thread") \
            + _warps(ctx, 2, "the tile spread over more threads")
    elif f.code in ("occupancy", "cannot_launch"):
        out += _fewer_threads(ctx)
        out += _stages(ctx) + _scaled(ctx, _tiles(ctx), 0.5, "a smaller tile")
        if f.code == "occupancy" and "registers" in ((rec.occupancy or {}).get("limiters") or []):
            out += _maxnreg(ctx)
    elif f.code == "tf32":
        out += _precision(ctx, f)
    elif f.code == "bank_conflicts":
        out += _swizzles(ctx, f)
        if not _is_gluon(ctx):  # a Gluon kernel's layouts name their warps: another num_warps does not compile
            out += _warps(ctx, 2, "another thread-to-data mapping, other lanes in a bank") \
                + _warps(ctx, 0.5, "another thread-to-data mapping, other lanes in a bank")
    elif f.code in ("small_grid", "tail_wave"):
        out += _scaled(ctx, _tiles(ctx), 0.5, "more, smaller programs")
    seen: set[str] = set()
    kept = []
    for c in out:
        ident = c.source + repr(c.overrides)
        if ident not in seen:
            seen.add(ident)
            kept.append(c)
    return kept
