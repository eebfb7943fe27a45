"""Minimal edits of a kernel file, made on its syntax tree and spliced into its text: everything
the user wrote (comments, spacing, the other lines) stays as it was, and no edit adds or removes a
line, so a finding's line number means the same before and after.

    src = wrap(src, assignment_value(fn, "start", 12), "tl.multiple_of({}, 4)")
    src = set_keyword(src, launch, "BLOCK", "2048")
"""

from __future__ import annotations

import ast
import difflib
from typing import Iterator


class EditError(ValueError):
    """The edit cannot be made on this text (the node is not there, the text moved)."""


def _offset(lines: list[str], line: int, col: int) -> int:
    """Character offset of (1-based line, UTF-8 byte column) in the joined text."""
    before = sum(len(l) for l in lines[: line - 1])
    return before + len(lines[line - 1].encode("utf-8")[:col].decode("utf-8", errors="replace"))


def span(source: str, node: ast.AST) -> tuple[int, int]:
    """The [start, end) character offsets of a node's text."""
    lines = source.splitlines(keepends=True)
    return (_offset(lines, node.lineno, node.col_offset),  # type: ignore[attr-defined]
            _offset(lines, node.end_lineno, node.end_col_offset))  # type: ignore[attr-defined]


def text_of(source: str, node: ast.AST) -> str:
    a, b = span(source, node)
    return source[a:b]


def replace(source: str, node: ast.AST, text: str) -> str:
    """The source with the node's text replaced by `text`."""
    a, b = span(source, node)
    return source[:a] + text + source[b:]


def wrap(source: str, node: ast.AST, template: str) -> str:
    """The node's text put into `template` at `{}` (`tl.multiple_of({}, 16)`)."""
    return replace(source, node, template.format(text_of(source, node)))


def function(tree: ast.AST, name: str) -> ast.FunctionDef | None:
    """The (outermost) function named `name`."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            return node  # type: ignore[return-value]
    return None


def assignment_value(fn: ast.AST, name: str, before_line: int | None = None) -> ast.expr | None:
    """The value of the last plain assignment `name = value` in `fn` at or before `before_line`."""
    best: ast.Assign | ast.AnnAssign | None = None
    for node in ast.walk(fn):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets = [node.target]
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            if before_line is None or node.lineno <= before_line:
                if best is None or node.lineno > best.lineno:
                    best = node  # type: ignore[assignment]
    return best.value if best is not None else None


def calls_on_line(fn: ast.AST, line: int, names: tuple[str, ...]) -> Iterator[ast.Call]:
    """Calls of `tl.<name>(...)` / `<name>(...)` that start on `line`."""
    for node in ast.walk(fn):
        if isinstance(node, ast.Call) and node.lineno <= line <= (node.end_lineno or node.lineno):
            f = node.func
            called = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
            if called in names:
                yield node


def names_in(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def launches(tree: ast.AST, kernel: str, inside: str | None = None) -> list[ast.Call]:
    """Launches `kernel[grid](...)` (or `module.kernel[grid](...)`) in the file, or in function
    `inside` when given, in the order they appear."""
    scope: ast.AST = tree
    if inside:
        found = function(tree, inside)
        if found is None:
            return []
        scope = found
    out = []
    for node in ast.walk(scope):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Subscript):
            v = node.func.value
            called = v.attr if isinstance(v, ast.Attribute) else v.id if isinstance(v, ast.Name) else ""
            if called == kernel:
                out.append(node)
    return sorted(out, key=lambda c: (c.lineno, c.col_offset))


def keyword(call: ast.Call, key: str) -> ast.keyword | None:
    return next((k for k in call.keywords if k.arg == key), None)


def set_keyword(source: str, call: ast.Call, key: str, value: str) -> str:
    """The call with `key=value`: the existing keyword's value replaced, or the keyword added after
    the last argument (on that argument's line, so no line is added)."""
    kw = keyword(call, key)
    if kw is not None:
        return replace(source, kw.value, value)
    last = (call.args + [k.value for k in call.keywords])
    if not last:
        lines = source.splitlines(keepends=True)
        at = _offset(lines, call.end_lineno, call.end_col_offset) - 1  # type: ignore[arg-type]
        if source[at] != ")":
            raise EditError(f"line {call.lineno}: the call's closing parenthesis is not where the syntax tree says")
        return source[:at] + f"{key}={value}" + source[at:]
    end = max(span(source, n)[1] for n in last)
    return source[:end] + f", {key}={value}" + source[end:]


def literal(node: ast.AST | None) -> object:
    """The value of a literal node (a number, a string, True), else None."""
    if node is None:
        return None
    try:
        return ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError):
        return None


def unified_diff(before: str, after: str, path: str) -> str:
    """`diff -u` of two texts of one file."""
    return "".join(difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True),
                                        f"a/{path}", f"b/{path}", n=2))
