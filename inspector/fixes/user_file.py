"""Candidates made on a capture's reproducer, carried onto the user's own kernel file.

`fix --run COMMAND` opens the kernel through the program's real launch: the record is the
capture's reproducer (the kernel's text as the run saw it, and an `example()` that replays the
launch with the run's index tensors). The candidates are made, compiled and checked there (the
promises against the run's own data), then each is written as an edit of the file that defines
the kernel:

- a function the candidate changed (the kernel, a helper it calls) replaces the same function of
  the user's file, when that function still reads as the run saw it;
- a launch setting the candidate changed in the reproducer's `example()` (`BLOCK=256 -> 512`,
  `num_warps`) is changed where the user's file launches the kernel with that keyword and value;
  where the file has no such launch (the program launches it from elsewhere), the candidate says
  what to set and where (`elsewhere`);
- line numbers in titles and assumptions are the user's file's.
A candidate none of whose changes can be carried keeps the reproducer's text and says why.
"""

from __future__ import annotations

import ast
import difflib
import os
import re
from dataclasses import dataclass

# functions of a reproducer that are its own, not the user's
_REPRODUCER_OWN = {"example", "_filled"}


@dataclass
class UserFile:
    """The file that defines the kernel, as the run saw it."""

    path: str
    text: str


def _functions(text: str) -> dict[str, tuple[int, int, str]]:
    """Top-level functions: name -> (first line with decorators, last line, their text)."""
    lines = text.splitlines(keepends=True)
    out: dict[str, tuple[int, int, str]] = {}
    for node in ast.parse(text).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            out[node.name] = (first, node.end_lineno or node.lineno, "".join(lines[first - 1:node.end_lineno]))
    return out


def _launch_keywords(text: str, kernel: str) -> list[dict[str, ast.expr]]:
    """The keywords of each `kernel[grid](...)` launch in the text."""
    out = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Subscript) \
                and isinstance(node.func.value, ast.Name) and node.func.value.id == kernel:
            out.append({k.arg: k.value for k in node.keywords if k.arg})
    return out


def _changed_settings(before: str, after: str, kernel: str) -> dict[str, tuple[str, str]]:
    """Launch keywords the candidate changed in the reproducer: name -> (old text, new text)."""
    old, new = _launch_keywords(before, kernel), _launch_keywords(after, kernel)
    if not old or not new:
        return {}
    out = {}
    for name, value in new[0].items():
        was = old[0].get(name)
        if was is None or ast.unparse(was) != ast.unparse(value):
            out[name] = (ast.unparse(was) if was is not None else "", ast.unparse(value))
    return out


def _set_launches(text: str, kernel: str, settings: dict[str, tuple[str, str]]) -> tuple[str, dict[str, tuple[str, str]]]:
    """The text with each launch of `kernel` that passes a setting's old value passing the new one;
    the settings no launch in the text passes (to be set where the program launches it)."""
    offsets = [0]
    for line in text.splitlines(keepends=True):
        offsets.append(offsets[-1] + len(line))
    edits: list[tuple[int, int, str]] = []
    done: set[str] = set()
    for node in ast.walk(ast.parse(text)):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Subscript)
                and isinstance(node.func.value, ast.Name) and node.func.value.id == kernel):
            continue
        for k in node.keywords:
            if k.arg in settings and ast.unparse(k.value) == settings[k.arg][0]:
                v = k.value
                edits.append((offsets[v.lineno - 1] + v.col_offset, offsets[v.end_lineno - 1] + v.end_col_offset,
                              settings[k.arg][1]))
                done.add(k.arg)
    for start, end, new in sorted(edits, reverse=True):
        text = text[:start] + new + text[end:]
    return text, {k: v for k, v in settings.items() if k not in done}


def _shift_lines(words: str, start: int, end: int, offset: int) -> str:
    """`line 12`, `lines 12, 13` inside the reproducer's kernel (start..end) renumbered by `offset`."""
    def shift(m: re.Match) -> str:
        numbers = [int(n) for n in re.findall(r"\d+", m.group(2))]
        moved = [n + offset if start <= n <= end else n for n in numbers]
        return m.group(1) + ", ".join(map(str, moved))

    return re.sub(r"\b(lines? )(\d+(?:, \d+)*)", shift, words)


def carry(before: str, after: str, kernel: str, user: UserFile) -> tuple[str | None, str, str]:
    """(the user's file as the candidate edits it, or None; what must be set elsewhere; why not)."""
    mine, theirs, edited = _functions(user.text), _functions(before), _functions(after)
    text = user.text
    replaced = 0
    for name in sorted((n for n in edited if n not in _REPRODUCER_OWN and edited[n][2] != theirs.get(n, (0, 0, ""))[2]),
                       key=lambda n: -mine.get(n, (0, 0, ""))[0]):
        if name not in mine or name not in theirs or mine[name][2] != theirs[name][2]:
            return None, "", (f"`{name}` in {os.path.basename(user.path)} is not the text the run compiled "
                              f"(edited since?): the edit is shown on the reproducer")
        first, last, _ = mine[name]
        lines = text.splitlines(keepends=True)
        text = "".join(lines[:first - 1]) + edited[name][2] + "".join(lines[last:])
        replaced += 1
    text, elsewhere = _set_launches(text, kernel, _changed_settings(before, after, kernel))
    note = ", ".join(f"{k}={new}" for k, (_, new) in elsewhere.items())
    if text == user.text and not note:
        return None, "", "the candidate changes nothing of the kernel's file"
    where = (f"set {note} where your program launches {kernel} (no launch in {os.path.basename(user.path)} "
             f"passes it)") if note else ""
    return text, where, ""


def to_user_file(report: object, user: UserFile) -> None:
    """Rewrite each candidate of `report` (a `search.FixReport` made on a capture's reproducer) as an
    edit of `user`'s file, in place; see the module docstring."""
    rec = report.original  # type: ignore[attr-defined]
    before, kernel = rec.source, rec.kernel
    theirs, mine = _functions(before), _functions(user.text)
    start, end = theirs.get(kernel, (0, 0, ""))[:2]
    offset = mine[kernel][0] - start if kernel in mine and kernel in theirs else 0
    name = os.path.basename(user.path)
    for ff in report.findings:  # type: ignore[attr-defined]
        ff.finding.title = _shift_lines(ff.finding.title, start, end, offset)
        for t in ff.candidates:
            c = t.candidate
            c.title = _shift_lines(c.title, start, end, offset)
            c.assumptions = [_shift_lines(a, start, end, offset) for a in c.assumptions]
            t.assumptions_note = _shift_lines(t.assumptions_note, start, end, offset)
            t.checked_note = _shift_lines(t.checked_note, start, end, offset)
            if not c.source or c.source == before:
                continue
            text, where, why = carry(before, c.source, kernel, user)
            if text is None:
                c.elsewhere = why
                continue
            c.source, c.file, c.elsewhere = text, user.path, where
            c.diff = "".join(difflib.unified_diff(user.text.splitlines(keepends=True), text.splitlines(keepends=True),
                                                  f"a/{name}", f"b/{name}"))
