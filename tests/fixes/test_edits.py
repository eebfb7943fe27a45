"""Edits of a kernel file's text made on its syntax tree: the rest of the text stays byte for byte,
and no edit adds or removes a line."""

from __future__ import annotations

import ast

import pytest

from inspector.fixes import edits

SOURCE = '''import triton
import triton.language as tl


@triton.jit
def k(x, offs_ptr, n, BLOCK: tl.constexpr):  # a comment that stays
    start = tl.load(offs_ptr + tl.program_id(0))   # odd spacing stays too
    idx = tl.arange(0, BLOCK)
    v = tl.load(x + start + idx, mask=idx < n)
    tl.store(x + start + idx, tl.dot(v, v), mask=idx < n)


def example(device):
    k[(4,)](x, o, 100, BLOCK=128)
    k[(4,)](
        x,
        o,
        100,
    )
'''


def test_wrap_keeps_everything_else():
    tree = ast.parse(SOURCE)
    fn = edits.function(tree, "k")
    value = edits.assignment_value(fn, "start", 9)
    out = edits.wrap(SOURCE, value, "tl.multiple_of({}, 4)")
    assert "start = tl.multiple_of(tl.load(offs_ptr + tl.program_id(0)), 4)   # odd spacing stays too" in out
    assert out.count("\n") == SOURCE.count("\n")
    changed = [(a, b) for a, b in zip(SOURCE.splitlines(), out.splitlines()) if a != b]
    assert len(changed) == 1


def test_launch_keywords_are_replaced_or_added_on_the_same_line():
    tree = ast.parse(SOURCE)
    first, second = edits.launches(tree, "k", inside="example")
    out = edits.set_keyword(SOURCE, first, "BLOCK", "256")
    assert "k[(4,)](x, o, 100, BLOCK=256)" in out
    out = edits.set_keyword(SOURCE, first, "num_warps", "2")
    assert "k[(4,)](x, o, 100, BLOCK=128, num_warps=2)" in out
    out = edits.set_keyword(SOURCE, second, "num_stages", "2")
    assert "        100, num_stages=2,\n" in out and out.count("\n") == SOURCE.count("\n")
    assert edits.launches(tree, "nothing") == [] and edits.launches(tree, "k", inside="missing") == []


def test_calls_on_a_line_and_a_non_ascii_line():
    text = SOURCE.replace("# a comment that stays", "# größe: ü")
    tree = ast.parse(text)
    fn = edits.function(tree, "k")
    dot = next(edits.calls_on_line(fn, 10, ("dot",)))
    assert edits.text_of(text, dot) == "tl.dot(v, v)"
    out = edits.set_keyword(text, dot, "input_precision", '"ieee"')
    assert 'tl.dot(v, v, input_precision="ieee")' in out and "# größe: ü" in out


def test_literals_and_diffs():
    assert edits.literal(ast.parse("128", mode="eval").body) == 128
    assert edits.literal(ast.parse("BLOCK", mode="eval").body) is None
    diff = edits.unified_diff("a\nb\n", "a\nc\n", "k.py")
    assert diff.startswith("--- a/k.py\n+++ b/k.py\n") and "-b\n+c\n" in diff


def test_a_moved_text_is_refused():
    tree = ast.parse("f()\n")
    call = tree.body[0].value
    with pytest.raises(edits.EditError):
        edits.set_keyword("g  \n", call, "a", "1")
