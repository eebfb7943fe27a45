"""Peeling the masked tail off the full blocks: where no true promise makes a mask's groups
constant (n = 4095 elements, rows of 1001), the blocks that lie wholly inside the bound need no
mask at all. The statements that use the mask are written twice under one test:

    if pid * BLOCK + BLOCK <= n:            # a full block: no mask, nothing caps the width
        x = tl.load(x_ptr + offs, mask=None)
        ...
    else:                                   # the partial block keeps its mask
        x = tl.load(x_ptr + offs, mask=mask)
        ...

The test is read from the mask where it has the common form `R < B` with `R = X + tl.arange(0,
N)` (full when `X + N <= B`); otherwise it is the mask itself, reduced (`tl.min(mask.to(tl.int32))
== 1`), which costs a reduction per program. The mask and `other` arguments become `None`, so
every line keeps its place inside its copy and a finding's line moves by one (`Peeled.new_line`).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from . import edits

_ACCESS = ("load", "store", "atomic_add", "atomic_max", "atomic_min", "atomic_xchg", "atomic_and", "atomic_or",
           "atomic_xor")
_MASK_POSITION = {"load": 1, "store": 2}


@dataclass
class Peeled:
    """The edited text and how its lines relate to the original's."""

    source: str
    condition: str
    first: int  # the original's first line written twice
    count: int  # how many lines are written twice
    copies: dict[int, list[int]] = field(default_factory=dict)  # original line -> its lines in the new text

    def new_line(self, line: int) -> int:
        """Where an original line is in the new text (a twice-written line: its full-block copy)."""
        return self.copies.get(line, [line if line < self.first else line + self.count + 2])[0]

    def old_line(self, line: int) -> int | None:
        """The original line of a line of the new text; None for the test, the `else` and the
        partial-block copy (what the tail keeps, which the original had)."""
        if line < self.first:
            return line
        if line == self.first:
            return None
        if line <= self.first + self.count:
            return line - 1
        if line <= self.first + 2 * self.count + 1:
            return None
        return line - self.count - 2


def _called(call: ast.Call) -> str:
    f = call.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""


def _mask_of(call: ast.Call) -> ast.expr | None:
    kw = edits.keyword(call, "mask")
    if kw is not None:
        return kw.value
    at = _MASK_POSITION.get(_called(call))
    return call.args[at] if at is not None and len(call.args) > at else None


def _suite_of(stmts: list[ast.stmt], target: ast.AST) -> tuple[list[ast.stmt], int] | None:
    """The innermost statement list holding `target`, and the index of its statement there."""
    for i, stmt in enumerate(stmts):
        if any(n is target for n in ast.walk(stmt)):
            for name in ("body", "orelse", "finalbody"):
                inner = getattr(stmt, name, None)
                if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                    found = _suite_of(inner, target)
                    if found is not None:
                        return found
            return stmts, i
    return None


def _condition(fn: ast.FunctionDef, mask: ast.expr, line: int, lang: str, source: str) -> str:
    """When a block is wholly inside the mask's bound (see the module docstring)."""
    expr = mask
    if isinstance(mask, ast.Name):
        expr = edits.assignment_value(fn, mask.id, line) or mask
    if isinstance(expr, ast.Compare) and len(expr.ops) == 1:
        op, left, right = expr.ops[0], expr.left, expr.comparators[0]
        ranged, bound, strict = (left, right, isinstance(op, ast.Lt)) if isinstance(op, (ast.Lt, ast.LtE)) else \
            (right, left, isinstance(op, ast.Gt)) if isinstance(op, (ast.Gt, ast.GtE)) else (None, None, False)
        if ranged is not None:
            value = edits.assignment_value(fn, ranged.id, line) if isinstance(ranged, ast.Name) else ranged
            start, size = _range_parts(value)
            if size is not None:
                top = f"{start} + {size}" if start else size
                return f"{top} <= {ast.unparse(bound)}" if strict else f"{top} - 1 <= {ast.unparse(bound)}"
    return f"{lang}.min(({edits.text_of(source, mask)}).to({lang}.int32)) == 1"


def _range_parts(value: ast.AST | None) -> tuple[str, str | None]:
    """(`X`, `N`) of `X + tl.arange(0, N)` (or `tl.arange(0, N)`: X empty)."""
    def arange_size(n: ast.AST) -> str | None:
        if isinstance(n, ast.Call) and _called(n) == "arange" and len(n.args) == 2 and edits.literal(n.args[0]) == 0:
            return ast.unparse(n.args[1])
        return None
    if value is None:
        return "", None
    if (size := arange_size(value)) is not None:
        return "", size
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add):
        for ranged, other in ((value.right, value.left), (value.left, value.right)):
            if (size := arange_size(ranged)) is not None:
                return ast.unparse(other), size
    return "", None


def peel(source: str, kernel: str, line: int, lang: str = "tl") -> Peeled | None:
    """The file with the statements using the access's mask (from the first that does to the end
    of their block) written for full blocks without the mask and for the partial one with it."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    fn = edits.function(tree, kernel)
    if fn is None:
        return None
    call = next((c for c in edits.calls_on_line(fn, line, _ACCESS)), None)
    mask = _mask_of(call) if call is not None else None
    if mask is None or mask.lineno != mask.end_lineno:
        return None
    where = _suite_of(fn.body, call)
    if where is None:
        return None
    suite, index = where
    want = ast.dump(mask)
    uses = [c for stmt in suite for c in ast.walk(stmt) if isinstance(c, ast.Call) and _called(c) in _ACCESS
            and (m := _mask_of(c)) is not None and ast.dump(m) == want]
    first_stmt = next(s for s in suite if any(c is u for u in uses for c in ast.walk(s)))
    region = suite[suite.index(first_stmt):]
    first, last = first_stmt.lineno, max(s.end_lineno or s.lineno for s in region)
    # the decorators and comments above a statement are not in its span; the region is whole lines
    lines = source.splitlines(keepends=True)
    nodes: list[ast.expr] = []
    for c in uses:
        nodes += [m] if (m := _mask_of(c)) is not None else []
        other = edits.keyword(c, "other")
        nodes += [other.value] if other is not None else c.args[2:3] if _called(c) == "load" else []
    if any(n.lineno != n.end_lineno for n in nodes):
        return None
    unmasked = source
    for n in sorted(nodes, key=lambda n: (n.lineno, n.col_offset), reverse=True):  # the end first: spans stay valid
        unmasked = edits.replace(unmasked, n, "None")
    free = unmasked.splitlines(keepends=True)
    indent = lines[first - 1][:len(lines[first - 1]) - len(lines[first - 1].lstrip())]
    condition = _condition(fn, mask, line, lang, source)
    count = last - first + 1

    def shifted(text: list[str]) -> list[str]:
        return [("    " + l) if l.strip() else l for l in text]

    out = lines[:first - 1] + [f"{indent}if {condition}:  # a full block: no mask\n"] + shifted(
        free[first - 1:last]) + [f"{indent}else:  # the partial block keeps its mask\n"] + shifted(
        lines[first - 1:last]) + lines[last:]
    copies = {first + i: [first + 1 + i, first + count + 2 + i] for i in range(count)}
    return Peeled("".join(out), condition, first, count, copies)
