"""Where a hint goes: the expression of the user's file at which the compiler lost a fact.

`fact_loss` walks each narrow access's pointer and mask back through the TTIR to the values where
divisibility, contiguity or constancy fell short of a 128-bit access. Here each such value is
found in the user's text, through the TTIR op's own location (line and column, the
helper's line for an inlined `@triton.jit` helper), and wrapped in the hint for the fact it
lacks: `tl.multiple_of` (divisibility), `tl.max_contiguous` (contiguity), `tl.max_constancy`
(a mask's constancy), promising the weakest value that gives 128 bits (4 for fp32).

Where the value has no op of its own (a kernel argument: Triton 3.x sets a hint on the op that
defines a value, and silently drops one on a block argument; a loop's induction variable), the
hint goes on the nearest value above it on the way to the access that the user wrote as an
expression (`row * ld` for `ld`, the comparison `cols < n_cols` for a mask bound `n_cols`).
A loss on a loop's induction variable is followed into the loop's lower bound and step, so a
`for i in range(start, end, BLOCK)` with a loaded `start` gets its hint on `start`'s load.

`hint_sites` gives an access's sites, grouped as candidate edits (`fixes.hints` makes the edits);
`advice` words them for the advisor: every blocker, and the hints that would lift it.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

from .address_values import shape_of
from .axis_info import axis_info
from .fact_loss import AccessLimits, Loss, Need, access_limits
from .locations import StageLocations, mlir_locations
from .memory import MemoryAccess
from .mlir import Module, Op, parse_module

_HINT_CALL = {"divisibility": "multiple_of", "contiguity": "max_contiguous", "constancy": "max_constancy"}
# the Python expression each TTIR op comes from
_BINOPS = {"arith.addi": ast.Add, "tt.addptr": ast.Add, "arith.subi": ast.Sub, "arith.muli": ast.Mult,
           "arith.remsi": ast.Mod, "arith.remui": ast.Mod, "arith.divsi": ast.FloorDiv, "arith.divui": ast.FloorDiv,
           "arith.andi": ast.BitAnd, "arith.ori": ast.BitOr, "arith.shli": ast.LShift, "arith.shrsi": ast.RShift,
           "arith.shrui": ast.RShift}
_CALLS = {"tt.load": ("load",), "arith.select": ("where",), "arith.maxsi": ("maximum", "max"),
          "arith.minsi": ("minimum", "min"), "arith.maxui": ("maximum", "max"), "arith.minui": ("minimum", "min"),
          "tt.call": None}
_ACCESS_OPS = ("tt.load", "tt.store", "tt.atomic_rmw", "tt.atomic_cas")


@dataclass
class Placement:
    """One hint on one expression of the file."""

    node: ast.expr
    facts: dict[str, tuple[int, ...]]  # fact -> the hint's value per dimension ("divisibility": (4,))
    what: str  # the value in words: "`start` (line 9)"
    loss: Loss

    @property
    def line(self) -> int:
        return self.node.lineno


def _kind_matches(node: ast.AST, op: Op) -> bool:
    if op.name in _BINOPS:
        return isinstance(node, ast.BinOp) and isinstance(node.op, _BINOPS[op.name])
    if op.name == "arith.cmpi":
        return isinstance(node, ast.Compare)
    if op.name in _CALLS and isinstance(node, ast.Call):
        names = _CALLS[op.name]
        f = node.func
        called = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
        return names is None or called in names
    return False


class SourceOps:
    """The file's syntax tree and the TTIR op locations, to find an op's expression."""

    def __init__(self, source: str, ttir: str, file: str, mod: Module | None = None,
                 locs: StageLocations | None = None):
        self.source = source
        self.tree = ast.parse(source)
        self.mod: Module = mod or parse_module(ttir)
        self.info = axis_info(self.mod)
        self.folded: set[str] = set()  # expressions whose hint goes inside their `[:, None]` (`folded`)
        self.locs = locs or mlir_locations(ttir)
        self.base = file.replace("\\", "/").rsplit("/", 1)[-1]
        self._by_line: dict[int, list[ast.expr]] = {}  # expressions by each line they span
        for n in ast.walk(self.tree):
            if isinstance(n, ast.expr):
                for line in range(n.lineno, (n.end_lineno or n.lineno) + 1):
                    self._by_line.setdefault(line, []).append(n)
        self._frames: dict[int, tuple[int, int] | None] = {}
        self._twins: dict[tuple[str, tuple[int, int] | None], list[Op]] = {}

    def frame(self, op: Op) -> tuple[int, int] | None:
        """(line, column - 1) of the op in this file: its innermost frame that is (see `node`)."""
        if op.line not in self._frames:
            self._frames[op.line] = next(((line, max(0, col - 1)) for chain in self.locs.chains.get(op.line, ())
                                          for f, line, col in chain
                                          if line and f.replace("\\", "/").rsplit("/", 1)[-1] == self.base), None)
        return self._frames[op.line]

    def node(self, op: Op) -> ast.expr | None:
        """The expression an op was made from: the innermost of its kind whose text holds the op's
        location. Releases put that location at different places of the expression (Triton 3.9:
        its first character, 1-based; 3.6: the right operand or first argument, 0-based): a
        character one before the recorded column lies inside the expression in both."""
        at = self.frame(op)
        if at is None:
            return None
        line, col = at
        found = [n for n in self._by_line.get(line, ()) if _kind_matches(n, op) and _holds(n, line, col)]
        if not found:
            return None
        found.sort(key=lambda n: len(ast.unparse(n)))
        if not self._twins:
            for o in self.mod.ops:
                self._twins.setdefault((o.name, self.frame(o)), []).append(o)
        twins = self._twins.get((op.name, at), [])
        return found[min(twins.index(op) if op in twins else 0, len(found) - 1)]

    def access_op(self, a: MemoryAccess) -> Op | None:
        """The TTIR op of an access."""
        if a.ttir_line is not None:
            return next((o for o in self.mod.ops if o.line == a.ttir_line), None)
        ops = [o for o in self.mod.ops if o.name in _ACCESS_OPS and (f := self.frame(o)) and f[0] == a.line]
        exact = [o for o in ops if self.frame(o) == (a.line, max(0, a.column - 1))]
        return (exact or ops or [None])[0]


def _holds(node: ast.AST, line: int, col: int) -> bool:
    """Whether (line, 0-based column) lies in the node's text."""
    start = (node.lineno, node.col_offset)  # type: ignore[attr-defined]
    end = (node.end_lineno or node.lineno, node.end_col_offset or 0)  # type: ignore[attr-defined]
    return start <= (line, col) < end


def _same_in(scope: ast.AST, node: ast.expr) -> ast.expr | None:
    """The expression equal to `node` inside `scope` (an access written again after CSE merged it)."""
    want = ast.dump(node)
    for n in ast.walk(scope):
        if isinstance(n, ast.expr) and ast.dump(n) == want:
            return n
    return None


def placement(src: SourceOps, loss: Loss, access: ast.Call | None, choose: str) -> Placement | None:
    """Where a loss's hint goes: the nearest mappable value above the leaf (`near`), or the one
    nearest the access (`far`)."""
    steps = list(reversed(loss.path)) if choose == "near" else [n for n in loss.path if n.fact != "divisibility"
                                                                  or not _is_pointer(src, n)]
    for need in steps:
        if need.op is None or need.op.name == "tt.addptr" and _is_pointer(src, need):
            continue
        node = src.node(need.op)
        if node is None:
            continue
        if access is not None and not (access.lineno <= node.lineno <= (access.end_lineno or access.lineno)):
            # CSE gave two accesses one op: hint the copy this access wrote, where it has one
            node = _same_in(access, node) or node
        values = _values(src, need, node)
        if values is None and (fold := folded(node)) is not None:
            # `X[:, None] * s` whose 1-element block the compiler folded: the hint goes on `X * s`
            values = _values(src, need, fold[0])
            if values is not None:
                src.folded.add(ast.dump(node))
        if values is None:
            continue
        name = _leaf_name(loss.leaf)
        where = f"`{ast.unparse(node)}`" + (f" (`{name}`)" if name and name not in ast.unparse(node) else "")
        return Placement(node, {need.fact: values}, f"{where} on line {node.lineno}", loss)
    return None


def folded(node: ast.AST) -> tuple[ast.expr, ast.expr, ast.expr, bool] | None:
    """(X, s, the index, X on the left) of `X[:, None] * s` (or `+`): the expression the hint can
    go on, `(X * s)[:, None]`, when the compiler folded X's 1-element block to a scalar."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.Add))):
        return None
    for sub, other, left in ((node.left, node.right, True), (node.right, node.left, False)):
        if isinstance(sub, ast.Subscript) and isinstance(sub.slice, ast.Tuple) and not isinstance(other, ast.Subscript) \
                and any(isinstance(e, ast.Constant) and e.value is None for e in sub.slice.elts):
            return sub.value, other, sub.slice, left
    return None


def _values(src: SourceOps, need: Need, node: ast.expr) -> tuple[int, ...] | None:
    """The hint's value per dimension: the promise on the access's fastest one, no more than the
    compiler already knows on the others (a promise there could be false: rows of a mask differ). The
    Python rank wins where a `[:, None]` shows more dimensions than the TTIR kept (a 1-element
    block the compiler folded to a scalar)."""
    from .address_values import result_type

    known = src.info.of(need.value)
    have = list(getattr(known, need.fact)) if known is not None else [1]
    if not shape_of(result_type(need.op)):  # a scalar: one value
        have = have[:1]
    py_rank = max((len(n.slice.elts) for n in ast.walk(node) if isinstance(n, ast.Subscript)
                   and isinstance(n.slice, ast.Tuple)), default=0)
    if py_rank > len(have):
        return None  # the compiler folded a 1-element block dimension: a hint of the Python rank fails to compile
    dim = min(need.dim + (len(have) - (len(getattr(known, need.fact)) if known is not None else 1)), len(have) - 1)
    have = [min(v, need.at_least) for v in have]  # weaker than what is known there: still true
    have[max(0, dim)] = need.at_least
    return tuple(have)


def _is_pointer(src: SourceOps, need: Need) -> bool:
    return need.value in src.mod.args and src.mod.args[need.value].is_pointer or (
        need.op is not None and "!tt.ptr" in need.op.text.split(" : ")[-1].split("->")[-1])


def _leaf_name(need: Need) -> str:
    from ..analysis.access_causes import variable_name

    return variable_name(need.value)


def lang_alias(tree: ast.Module) -> str:
    """How the file names triton.language (`tl` in nearly every file)."""
    for n in ast.walk(tree):
        if isinstance(n, ast.Import):
            for a in n.names:
                if a.name == "triton.language":
                    return a.asname or "triton.language"
        elif isinstance(n, ast.ImportFrom) and n.module == "triton":
            for a in n.names:
                if a.name == "language":
                    return a.asname or "language"
    return "triton.language"


def template(lang: str, facts: dict[str, tuple[int, ...]]) -> str:
    """The hint calls for `facts` around `{}`: `tl.max_constancy(tl.multiple_of({}, 4), (1, 4))`."""
    out = "{}"
    for fact in ("divisibility", "contiguity", "constancy"):
        if fact in facts:
            v = facts[fact]
            shown = str(v[0]) if len(v) == 1 else "(" + ", ".join(map(str, v)) + ")"
            out = f"{lang}.{_HINT_CALL[fact]}({out}, {shown})"
    return out


def promised(facts: dict[str, tuple[int, ...]]) -> dict[str, int]:
    """The promise of each fact: its largest value (the one on the fastest dimension)."""
    return {f: max(v) for f, v in facts.items()}


def span_key(node: ast.AST) -> tuple[int, int]:
    """A node's (start, end) as comparable numbers."""
    return (node.lineno * 100000 + node.col_offset,  # type: ignore[attr-defined]
            (node.end_lineno or 0) * 100000 + (node.end_col_offset or 0))  # type: ignore[attr-defined]


def with_twins(tree: ast.Module, merged: dict) -> list[tuple[tuple[int, int], ast.expr, dict[str, int]]]:
    """Each hinted expression and its twins: the same expression written again in the same
    function (`n > offs` in a load's mask and again in the store's), which the compiler computed
    once (CSE) and which must carry the same hint, or the copy without it stays as it was."""
    out = [(span, node, facts) for span, (node, facts, _) in merged.items()]
    taken = [span for span, _, _ in out]
    for span, node, facts in list(out):
        scope = next((f for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
                      and f.lineno <= node.lineno <= (f.end_lineno or f.lineno)), tree)
        want = ast.dump(node)
        for n in ast.walk(scope):
            if n is node or type(n) is not type(node) or getattr(n, "op", None).__class__ is not \
                    getattr(node, "op", None).__class__ or ast.dump(n) != want:  # the cheap tests first
                continue
            sp = span_key(n)
            if not any(a <= sp[0] < b or sp[0] <= a < sp[1] for a, b in taken):
                taken.append(sp)
                out.append((sp, n, facts))
    return out


def merge(group: list[Placement]) -> dict[tuple[int, int], tuple[ast.expr, dict[str, int], list[str]]]:
    """Placements by expression: one wrap per expression holding every fact it needs; an
    expression inside another already hinted is left out (the outer hint covers the access)."""
    out: dict[tuple[int, int], tuple[ast.expr, dict[str, int], list[str]]] = {}
    for p in group:
        key = (p.node.lineno, p.node.col_offset, p.node.end_lineno or 0, p.node.end_col_offset or 0)
        span = (key[0] * 100000 + key[1], key[2] * 100000 + key[3])
        hit = next((k for k in out if k == span), None)
        if hit is not None:
            node, facts, whats = out[hit]
            for f, m in p.facts.items():
                facts[f] = tuple(max(x, y) for x, y in zip(facts[f], m)) if f in facts and len(facts[f]) == len(m) \
                    else m
            if p.what not in whats:
                whats.append(p.what)
            continue
        if any(k[0] <= span[0] and span[1] <= k[1] or span[0] <= k[0] and k[1] <= span[1] for k in out):
            continue
        out[span] = (p.node, dict(p.facts), [p.what])
    return out


@dataclass
class Wrap:
    """One expression to wrap in hints: where, which facts, and what it stands for in words."""

    node: ast.expr
    facts: dict[str, tuple[int, ...]]
    whats: list[str]
    leaves: list[Need]  # mask bounds whose launch values its promise rests on
    fold: tuple[ast.expr, ast.expr, ast.expr, bool] | None = None  # hint inside the `[:, None]` (`folded`)

    def text(self, source: str, lang: str) -> str:
        """The hinted expression as it replaces the node's text."""
        def text_of(src: str, node: ast.AST) -> str:
            return ast.get_source_segment(src, node) or ast.unparse(node)

        if self.fold is None:
            return template(lang, self.facts).format(text_of(source, self.node))
        x, s, index, left = self.fold
        op = "*" if isinstance(self.node.op, ast.Mult) else "+"  # type: ignore[attr-defined]
        inner = f"{text_of(source, x)} {op} {text_of(source, s)}" if left else f"{text_of(source, s)} {op} {text_of(source, x)}"
        return template(lang, self.facts).format(inner) + f"[{text_of(source, index)}]"


@dataclass
class HintSites:
    """For one narrow access: the facts that limit it and the wraps that may lift them, most
    complete first (every loss hinted nearest its leaf; the same nearest the access; each alone)."""

    limits: AccessLimits | None
    groups: list[list[Wrap]]
    lang: str = "tl"
    source: str = ""
    capped: list[Loss] = field(default_factory=list)  # losses no true promise restores (a stride, a program id)


def source_ops(rec: Any) -> SourceOps | None:
    """The record's SourceOps, made once per record (the advisor asks for each narrow access)."""
    from .context import context

    from .memory import ttir_module

    ctx = context(rec)
    if "source_ops" not in ctx.memo:
        try:
            ctx.memo["source_ops"] = SourceOps(rec.compiled_source, rec.stages["ttir"], rec.compiled_file, ttir_module(rec),
                                               ctx.stages.get("ttir")) if "ttir" in rec.stages else None
        except SyntaxError:
            ctx.memo["source_ops"] = None
    return ctx.memo["source_ops"]


def hint_sites(source: str, ttir: str, file: str, a: MemoryAccess, src: SourceOps | None = None,
               values: dict[str, Any] | None = None, first_only: bool = False) -> HintSites:
    """Where hints would lift one access to 128 bits (see the module docstring); `src` when the
    caller has the file's SourceOps already, `values` the launch's scalar arguments; `first_only`
    for the most complete group alone (the advice names no other)."""
    if src is None:
        try:
            src = SourceOps(source, ttir, file)
        except SyntaxError:
            return HintSites(None, [])
    op = src.access_op(a)
    limits = access_limits(src.mod, op, src.info, values) if op is not None else None
    out = HintSites(limits, [], lang_alias(src.tree), src.source)
    if limits is None or not limits.losses:
        return out
    out.capped = [l for l in limits.losses if not l.hintable]
    for fact in limits.short:
        if not any(l.hintable for l in limits.losses if l.path[0].fact == fact):
            return out  # a fact no true promise restores caps the width: no hint lifts it
    call = next((c for c in ast.walk(src.tree) if isinstance(c, ast.Call) and c.lineno <= a.line <= (c.end_lineno or c.lineno)
                 and _called(c) in _ACCESS_CALLS), None)
    hintable = [l for l in limits.losses if l.hintable]
    groups: list[list[Placement]] = []
    for choose in ("near", "far"):
        got = [p for l in hintable if (p := placement(src, l, call, choose)) is not None]
        if got:
            groups.append(got)
    if first_only:
        groups = groups[:1]
    elif groups and len(groups[0]) > 1:
        groups += [[p] for p in groups[0]]
    for group in groups:
        merged = merge(group)
        wraps = []
        for _, node, facts in with_twins(src.tree, merged):
            whats = next((w for n, _, w in merged.values() if n is node), [])
            # a mask's constancy in groups of m holds exactly when its bound is a multiple of m (the
            # range it compares being aligned): that bound's launch value can be checked; a product's
            # promise (`row * ld`) rests on more than one factor, so it is checked on the data only
            leaves = [p.loss.leaf for p in group if (p.node is node or ast.dump(p.node) == ast.dump(node))
                      and p.loss.path[0].fact == "constancy"]
            wraps.append(Wrap(node, facts, whats, leaves, folded(node) if ast.dump(node) in src.folded else None))
        out.groups.append(wraps)
    return out


_ACCESS_CALLS = ("load", "store", "atomic_add", "atomic_max", "atomic_min", "atomic_xchg", "atomic_cas")


def _called(call: ast.Call) -> str:
    f = call.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""


_KIND = {"loaded": "loaded from memory", "argument": "a kernel argument", "hinted": "promised too little",
         "strided": "a stride of 1 the compiler does not know",
         "arith": "computed", "opaque": "computed", "mask_bound": "compared", "loop_carried": "carried by the loop"}
_CAPPED = {"program_id": "the program id", "strided": "a run-time stride multiplies the index",
           "constant": "a constant offset", "gather": "an index loaded from memory (a gather)"}


def advice(sites: HintSites, values: dict[str, Any], room: int | None = None) -> str:
    """The suggestion for a narrow access a hint can lift, from its sites: every blocker the TTIR
    shows, where a hint would go (never on a kernel argument itself, which Triton drops), and the
    other ways out; empty where no hint lifts it."""
    lim = sites.limits
    if lim is None or not lim.losses or not sites.groups:
        return ""  # no promise lifts it: the cause's own advice (a stride, a descriptor) says what to change
    need = lim.full
    blockers = []
    promisable = {l.path[0].fact for l in lim.losses if l.hintable}
    for loss in lim.losses:
        if loss.kind == "program_id" and loss.path[0].fact in promisable:
            continue  # beside a value that can be promised (`row * ld`), the program id is no blocker
        leaf = loss.leaf
        name = _leaf_name(leaf)
        shown = f" (= {values[leaf.value]})" if leaf.value in values else ""
        if not loss.hintable:
            blockers.append(f"{_CAPPED.get(loss.kind, loss.kind)}" + (f" (`{name}`)" if loss.kind != "strided" else ""))
            continue
        role = "the mask's bound " if loss.path[0].fact == "constancy" and leaf.fact == "divisibility" else ""
        fact = {"divisibility": f"not known to be a multiple of {leaf.at_least}",
                "contiguity": f"not known to run in groups of {leaf.at_least} consecutive values",
                "constancy": f"not known to be constant in groups of {leaf.at_least}"}[leaf.fact]
        blockers.append(f"{role}`{name}`{shown}, {_KIND.get(loss.kind, loss.kind)}, is {fact}")
    text = f"Lost on the way to a {need}-element (128-bit) access: " + "; ".join(dict.fromkeys(blockers)) + "."
    broken = [f"`{_leaf_name(l.leaf)}` = {values[l.leaf.value]}" for l in lim.losses if l.hintable and l.leaf.value in values
              and isinstance(values[l.leaf.value], int) and values[l.leaf.value] % l.leaf.at_least]
    if broken:
        text += f" This launch breaks the promise ({', '.join(dict.fromkeys(broken))}): split the masked tail off."
    hints = "; ".join(f"`{w.text(sites.source, sites.lang)}` on line {w.node.lineno}" for w in sites.groups[0] if w.whats)
    args = list(dict.fromkeys(f"`{_leaf_name(l.leaf)}`" for l in lim.losses if l.kind == "argument"))
    others = ([f"pad {' and '.join(args)} to multiples of 16, which Triton then specialises"
               + (" (all of them: padding one alone leaves the access narrow, or splits it worse)"
                  if len(args) > 1 else "")] if args else []) + \
        (["split the masked tail off the full blocks"] if "constancy" in lim.short and not broken else [])
    text += (f" Where your data keeps it, say so: {hints} (on a value Triton keeps a hint on; it drops one on a "
             f"kernel argument itself)." + (f" Or {', or '.join(others)}." if others else "")
             + " `fix` compiles these and checks them against your example's data.")
    if room is not None and room < need:
        text += (f" The block also has only {room} element{'s' if room > 1 else ''} per thread: a larger block or "
                 f"fewer warps as well.")
    return text
