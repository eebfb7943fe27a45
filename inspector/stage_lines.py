"""Which lines of a compiler stage's text are bookkeeping (directives, comments, debug sections),
which the page's panes hide and the command line leaves out unless --raw: plain regular
expressions, so printing a stage imports no highlighter."""

from __future__ import annotations

import re

# Lines a reader of a stage rarely wants, hidden by default as Compiler Explorer does (the pane's
# "directives" toggle shows them; line numbers and the line mapping never change): debug sections,
# line-info directives and comments, assembler bookkeeping.
_NOISE_LINE = {
    "ptx": re.compile(r"^\s*(?:\.loc\b|\.file\b|//|\$L__(?:tmp\d+|func_begin\d*|func_end\d*):|\.section\s+\.debug|$)"),
    "sass": re.compile(r"^\s*(?://##|//-+|\.section\s+\.debug|\.debug|$)"),
    "amdgcn": re.compile(r"^\s*(?:\.loc\b|\.file\b|;|\.cfi_|\.Ltmp\d+:|\.Lfunc_(?:begin|end)\d*:|\.section\s+\.debug|$)"),
    "llir": re.compile(r"^\s*(?:!\d+ = |!llvm\.|;|$)"),
    "ttir": re.compile(r"^#loc\d* = loc\("),
    "ttgir": re.compile(r"^#loc\d* = loc\("),
}
# A debug section runs from its `.section .debug_*` line to the next `.section` (AMDGCN, SASS) or to
# its closing brace (PTX: `.section .debug_x { ... }`).
_DEBUG_START = re.compile(r"^\s*\.section\s+\.?debug|^\s*@@DWARF")


def noise_lines(text: str, language: str) -> set[int]:
    """1-based numbers of the lines a stage filter hides: directives, comments, debug sections."""
    pattern = _NOISE_LINE.get(language)
    if pattern is None:
        return set()
    out: set[int] = set()
    in_debug = False
    braces = 0
    for n, line in enumerate(text.split("\n"), 1):
        stripped = line.strip()
        if _DEBUG_START.match(line):
            in_debug, braces = True, 0
        elif in_debug and stripped.startswith(".section") and language != "ptx":
            in_debug = False
        elif in_debug and stripped.startswith((".text", ".globl", ".visible", ".entry")):
            in_debug = False
        if in_debug:
            out.add(n)
            if language == "ptx":
                braces += line.count("{") - line.count("}")
                if braces <= 0 and "}" in line:
                    in_debug = False
            continue
        if pattern.match(line):
            out.add(n)
    return out
