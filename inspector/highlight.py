"""Syntax highlighting of every stage as HTML rows: one row per line, numbered and anchored.

Pygments lexes Python, LLVM IR and PTX with its own lexers; it has none for Triton's MLIR
(TTIR/TTGIR), SASS or AMDGCN, so those three are defined here. Every token becomes a `<span>`
with pygments' short class name (`k`, `c1`, `nv`, ...), so one pygments style sheet colours all
stages (`stylesheet()`).

Fast path: pygments' lexers are regular-expression state machines run in Python and cost about
1 s per 30,000 tokens-worth of text (20,000 lines of a matmul's LLVM IR: 9 s). A stage larger than
`FAST_PATH_BYTES` is tokenised instead by one compiled alternation per language (`FAST_RULES`),
which marks the tokens that matter for reading (opcodes, registers/values, types, comments,
numbers, strings) and leaves punctuation plain: 20,000 lines of PTX take about 0.15 s.

Rows look like `<div class="r" id="ptx-L12">...code...</div>` inside chunks of rows that start a
CSS counter (`<div class="k" style="counter-reset:ln 500">`): the id is the line's anchor
(`#ptx-L12`), and the style sheet draws the number from the counter (`.r::before`), so numbers
cost no DOM node and copying code copies no numbers.
No Streamlit here: the app caches and embeds what these functions return.
"""

from __future__ import annotations

import html
import re
from typing import Iterable

from pygments.lexer import RegexLexer, bygroups, words
from pygments.lexers import DiffLexer, LlvmLexer, PtxLexer, PythonLexer
from pygments.formatters import HtmlFormatter
from pygments.token import (Comment, Keyword, Name, Number, Operator, Punctuation, STANDARD_TYPES, String,
                            Text, Whitespace, _TokenType)

# Above this many bytes a stage takes the fast path (see the module docstring).
from .stage_lines import noise_lines

FAST_PATH_BYTES = 200_000


class MlirLexer(RegexLexer):
    """Triton's MLIR dialects as printed in TTIR and TTGIR (`tt.`, `ttg.`, `ttng.`, `arith.`, `scf.`...)."""

    name = "Triton MLIR"
    aliases = ["mlir", "ttir", "ttgir"]
    filenames = ["*.mlir", "*.ttir", "*.ttgir"]

    tokens = {
        "root": [
            (r"\n", Whitespace),
            (r"[ \t]+", Whitespace),
            (r"//.*?$", Comment.Single),
            # Locations, dimmed: `loc(#loc12)`, `loc("x"(#loc5))`, `loc("/k.py":23:12)`, one nesting level.
            (r'loc\((?:[^()\n]|\([^()\n]*\))*\)', Comment.Special),
            (r"(#loc\d*)(\s*=)", bygroups(Comment.Special, Punctuation)),
            (r'"(?:\\\\|\\"|[^"\n])*"', String),
            # %offs_3, %arg0, %c1024_i32, %12#1 (SSA values)
            (r"%[\w.$-]+(?:#\d+)?", Name.Variable),
            (r"\^[\w.$-]+", Name.Label),  # ^bb0 (blocks)
            (r"@[\w.$-]+", Name.Function),  # @add_kernel
            (r"#[\w.$-]+", Name.Entity),  # #blocked, #ttg.shared_memory (attribute aliases)
            (r"![\w.$-]+", Keyword.Type),  # !tt.ptr, !ttg.memdesc (dialect types)
            (r"\b(?:tensor|memref|vector|complex|tuple|none|index)\b", Keyword.Type),
            (r"\b(?:i\d+|ui\d+|si\d+|f16|bf16|f32|f64|tf32|f8E\w+|f4E\w+)\b", Keyword.Type),
            # tt.load, arith.addi, ttg.convert_layout, scf.for (operations)
            (r"\b[a-z_][\w]*(?:\.[\w]+)+\b", Name.Builtin),
            (r"\b(?:module|attributes|func|true|false|dense|unit|to|step|iter_args|ins|outs|x)\b", Keyword),
            (r"0x[0-9a-fA-F]+", Number.Hex),
            (r"-?\d+\.\d*(?:[eE][+-]?\d+)?", Number.Float),
            (r"-?\d+", Number.Integer),
            (r"->", Operator),
            (r"[(){}\[\]<>,:=*?]", Punctuation),
            (r"[\w.$-]+", Name),
            (r".", Text),
        ]
    }


class WholeWordPtxLexer(PtxLexer):
    """Pygments' PTX lexer with its instruction names matched as whole words only: as shipped
    (pygments 2.19) it takes the `st` of `strided_copy_param_2` for a store instruction."""

    tokens = {**PtxLexer.tokens, "keyword": [
        (words(rule[0].words, prefix=rule[0].prefix, suffix=r"\b"), rule[1])
        if isinstance(rule[0], words) and not rule[0].suffix else rule
        for rule in PtxLexer.tokens["keyword"]]}


class SassLexer(RegexLexer):
    """NVIDIA SASS as `nvdisasm` prints it, with the inspector's control-bit column and line info."""

    name = "NVIDIA SASS"
    aliases = ["sass"]
    filenames = ["*.sass"]

    tokens = {
        "root": [
            (r"\n", Whitespace),
            (r"[ \t]+", Whitespace),
            (r"//.*?$", Comment.Single),  # //## File "k.py", line 23
            (r"/\*[0-9a-fA-F]+\*/", Comment.Special),  # /*0040*/
            (r"[-\w]{2}:[-\w]:[-\w]:[-Y]:[0-9a-f]+", Comment.Preproc),  # --:-:0:-:7, 01:-:-:Y:b (control bits; stall in hex)
            (r"@!?U?P(?:T|\d)\b", Keyword.Pseudo),  # @P0, @!UP1 (predicates)
            (r"\bc\[0x[0-9a-fA-F]+\]\[0x[0-9a-fA-F]+\]", Name.Constant),  # c[0x0][0x210]
            (r"\b(?:U?R\d+|U?RZ|U?P\d|U?PT|SR_[\w.]+|SRZ|B\d+)\b", Name.Variable),  # registers
            (r"^[.\w$]+:", Name.Label),
            (r"`\([^)\n]*\)", Name.Label),  # `(.L_x_12)
            (r"\.[a-z_][\w]*", Keyword),  # .headerflags, .section (directives)
            # LDG.E.128.CONSTANT, HGMMA.64x256x16.F32.BF16 (opcodes and modifiers)
            (r"\b[A-Z][A-Z0-9_]*(?:\.[\w]+)*\b", Name.Builtin),
            (r"-?0x[0-9a-fA-F]+", Number.Hex),
            (r"-?\d+\.\d+(?:e[+-]?\d+)?", Number.Float),
            (r"-?\d+", Number.Integer),
            (r'"[^"\n]*"', String),
            (r"[\[\]{}(),;|!~+-]", Punctuation),
            (r"[\w.$]+", Name),
            (r".", Text),
        ]
    }


class AmdgcnLexer(RegexLexer):
    """AMDGPU (GCN/CDNA/RDNA) assembly as LLVM prints it."""

    name = "AMDGCN assembly"
    aliases = ["amdgcn"]
    filenames = ["*.amdgcn", "*.s"]

    tokens = {
        "root": [
            (r"\n", Whitespace),
            (r"[ \t]+", Whitespace),
            (r";.*?$", Comment.Single),
            (r"//.*?$", Comment.Single),
            (r"^[.\w$]+:", Name.Label),  # .LBB0_1:
            (r"\.[\w.]+", Keyword),  # .amdhsa_next_free_vgpr, .loc (directives) and label references
            (r'"(?:\\\\|\\"|[^"\n])*"', String),
            # s_load_dwordx2, v_mfma_f32_32x32x8_bf16, global_load_dwordx4, ds_read_b128 (instructions)
            (r"\b(?:[sv]|buffer|global|flat|ds|scratch|exp|image|tbuffer)_\w+\b", Name.Builtin),
            (r"\b[svat]\[\d+:\d+\]", Name.Variable),  # v[4:7]
            (r"\b(?:[svat]\d+|vcc(?:_lo|_hi)?|exec(?:_lo|_hi)?|scc|m0|vccz|execz|off)\b", Name.Variable),
            (r"\b(?:offset|offen|idxen|glc|slc|dlc|sc0|sc1|nt|lgkmcnt|vmcnt|expcnt|gds|lds)\b", Name.Attribute),
            (r"-?0x[0-9a-fA-F]+", Number.Hex),
            (r"-?\d+\.\d+(?:e[+-]?\d+)?", Number.Float),
            (r"-?\d+", Number.Integer),
            (r"[\[\](),:@]", Punctuation),
            (r"[\w$]+", Name),
            (r".", Text),
        ]
    }


# The language each stage is written in.
STAGE_LANGUAGES: dict[str, str] = {
    "source": "python", "triton": "python", "ttir": "mlir", "ttgir": "mlir", "llir": "llvm", "ptx": "ptx", "sass": "sass",
    "amdgcn": "amdgcn", "diff": "diff",
}
_LEXERS = {"python": PythonLexer, "mlir": MlirLexer, "llvm": LlvmLexer, "ptx": WholeWordPtxLexer, "sass": SassLexer,
           "amdgcn": AmdgcnLexer, "diff": DiffLexer}


def language_of(stage: str) -> str:
    """The language of a stage name ("ptx", "ttgir", ...) or of a pass dialect ("mlir", "llvm", "mir")."""
    if stage in STAGE_LANGUAGES:
        return STAGE_LANGUAGES[stage]
    return {"mir": "text"}.get(stage, stage)


def lexer_for(language: str):
    """A pygments lexer for a language name (python, mlir, llvm, ptx, sass, amdgcn, diff) or None."""
    cls = _LEXERS.get(language)
    return cls(stripnl=False, ensurenl=False) if cls else None


# ---- the fast path -----------------------------------------------------------------------------
# One alternation per language; each group's name is the pygments class it emits. No pattern may
# match a newline (the output is split into rows at newlines).
_COMMON_NUMBERS = [("mh", r"-?\b0x[0-9a-fA-F]+\b"), ("mf", r"-?\b\d+\.\d+(?:[eE][+-]?\d+)?\b"),
                   ("mi", r"-?\b\d+\b")]
FAST_RULES: dict[str, list[tuple[str, str]]] = {
    "python": [("c1", r"#[^\n]*"), ("s", r"'[^'\n]*'|\"[^\"\n]*\""),
               ("k", r"\b(?:def|return|for|in|if|else|elif|while|import|from|as|with|class|and|or|not|is|None|"
                     r"True|False|lambda|yield|pass|break|continue|try|except|finally|raise)\b"),
               ("nd", r"@[\w.]+"), *_COMMON_NUMBERS],
    "mlir": [("c1", r"//[^\n]*"), ("cs", r"loc\((?:[^()\n]|\([^()\n]*\))*\)|#loc\d*"), ("s", r'"[^"\n]*"'),
             ("nv", r"%[\w.$-]+(?:#\d+)?"), ("nl", r"\^[\w.$-]+"), ("nf", r"@[\w.$-]+"), ("ni", r"#[\w.$-]+"),
             ("kt", r"![\w.$-]+|\b(?:tensor|memref|i\d+|f16|bf16|f32|f64|index)\b"),
             ("nb", r"\b[a-z_]\w*(?:\.\w+)+\b"), *_COMMON_NUMBERS],
    "llvm": [("c1", r";[^\n]*"), ("s", r'c?"[^"\n]*"'), ("nv", r"%[-\w.$]+"), ("nf", r"@[-\w.$]+"),
             ("nt", r"![-\w.$]+"), ("kt", r"\b(?:i\d+|float|double|half|bfloat|ptr|void|label|x86_fp80)\b"),
             ("k", r"\b(?:define|declare|call|tail|ret|br|load|store|getelementptr|inbounds|alloca|phi|select|icmp|"
                   r"fcmp|add|sub|mul|fadd|fsub|fmul|fdiv|and|or|xor|shl|lshr|ashr|zext|sext|trunc|bitcast|"
                   r"addrspacecast|extractvalue|insertvalue|extractelement|insertelement|shufflevector|asm|"
                   r"sideeffect|nuw|nsw|align|addrspace|to|global|internal|external|private|constant|"
                   r"attributes|metadata|distinct|true|false|undef|poison|null)\b"), *_COMMON_NUMBERS],
    "ptx": [("c1", r"//[^\n]*"), ("s", r'"[^"\n]*"'), ("nv", r"%[\w$]+(?:<\d+>)?|\$[\w$]+"),
            ("k", r"\.[a-z_][\w:]*"), ("nb", r"\b[a-z][a-z0-9_]*(?=[.\s;])"), ("kp", r"@!?%\w+"),
            *_COMMON_NUMBERS],
    "sass": [("c1", r"//[^\n]*"), ("cs", r"/\*[0-9a-fA-F]+\*/"), ("cp", r"[-\w]{2}:[-\w]:[-\w]:[-Y]:[0-9a-f]+"),
             ("kp", r"@!?U?P(?:T|\d)\b"), ("no", r"\bc\[0x[0-9a-fA-F]+\]\[0x[0-9a-fA-F]+\]"),
             ("nv", r"\b(?:U?R\d+|U?RZ|U?P\d|U?PT|SR_[\w.]+|SRZ|B\d+)\b"),
             ("nb", r"\b[A-Z][A-Z0-9_]*(?:\.\w+)*\b"), *_COMMON_NUMBERS],
    "amdgcn": [("c1", r";[^\n]*|//[^\n]*"), ("s", r'"[^"\n]*"'), ("k", r"(?<![\w])\.[\w.]+"),
               ("nb", r"\b(?:[sv]|buffer|global|flat|ds|scratch|exp|image|tbuffer)_\w+\b"),
               ("nv", r"\b[svat]\[\d+:\d+\]|\b(?:[svat]\d+|vcc(?:_lo|_hi)?|exec(?:_lo|_hi)?|scc|m0)\b"),
               *_COMMON_NUMBERS],
    "diff": [("gi", r"^\+[^\n]*"), ("gd", r"^-[^\n]*"), ("gu", r"^@@[^\n]*")],
}
_FAST_PATTERNS: dict[str, re.Pattern[str]] = {
    lang: re.compile("|".join(f"(?P<{cls}>{pat})" for cls, pat in rules), re.MULTILINE)
    for lang, rules in FAST_RULES.items()
}


def _fast_lines(text: str, language: str) -> list[str]:
    pattern = _FAST_PATTERNS.get(language)
    esc = html.escape
    if pattern is None:
        return [esc(line, False) for line in text.split("\n")]
    out: list[str] = []
    append = out.append
    pos = 0
    for m in pattern.finditer(text):
        start = m.start()
        if start > pos:
            append(esc(text[pos:start], False))
        append(f'<span class="{m.lastgroup}">{esc(m.group(), False)}</span>')
        pos = m.end()
    append(esc(text[pos:], False))
    return "".join(out).split("\n")


# ---- the pygments path -------------------------------------------------------------------------
_CLASS_CACHE: dict[_TokenType, str] = {}


# Whitespace needs no span; pygments' own lexers emit Error for syntax they do not know (PTX
# predicates, some LLVM attributes), which its styles box in red: shown plain instead.
_PLAIN = {"w", "err"}


def _css_class(ttype: _TokenType) -> str:
    """pygments' short class for a token type, walking up to the nearest standard parent."""
    cls = _CLASS_CACHE.get(ttype)
    if cls is None:
        t = ttype
        while t not in STANDARD_TYPES and t.parent is not None:
            t = t.parent
        cls = STANDARD_TYPES.get(t, "")
        cls = _CLASS_CACHE[ttype] = "" if cls in _PLAIN else cls
    return cls


def _pygments_lines(text: str, language: str) -> list[str]:
    lexer = lexer_for(language)
    if lexer is None:
        return [html.escape(line, False) for line in text.split("\n")]
    lines: list[str] = []
    current: list[str] = []
    esc = html.escape
    for ttype, value in lexer.get_tokens(text):
        cls = _css_class(ttype)
        parts = value.split("\n")
        for i, part in enumerate(parts):
            if i:  # a newline inside the token closes the row
                lines.append("".join(current))
                current = []
            if part:
                current.append(f'<span class="{cls}">{esc(part, False)}</span>' if cls else esc(part, False))
    lines.append("".join(current))
    return lines


def highlight_lines(text: str, language: str, fast: bool | None = None) -> list[str]:
    """The text as one HTML fragment per line (escaped, tokens in `<span class=...>`).

    `fast`: force (True) or refuse (False) the fast path; None picks it above FAST_PATH_BYTES.
    Always exactly `text.split("\\n")` lines, so line numbers match the text's.
    """
    if fast is None:
        fast = len(text) > FAST_PATH_BYTES
    lines = _fast_lines(text, language) if fast else _pygments_lines(text, language)
    expected = text.count("\n") + 1
    if len(lines) != expected:  # a lexer that swallowed or added a newline: never misnumber rows
        lines = (lines + [""] * expected)[:expected]
    return lines




def render_rows(text: str, language: str, anchor: str, fast: bool | None = None,
                chunk: int = 500) -> str:
    """Anchored rows (`id="{anchor}-L{n}"`), grouped in chunks of `chunk` rows so the browser can
    skip laying out the chunks that are off screen (CSS `content-visibility`); each chunk resets
    the line-number counter to the line before its first row. Rows `noise_lines` names carry the
    class `n` (the pane hides them unless asked)."""
    rows = highlight_lines(text, language, fast)
    noise = noise_lines(text, language)
    out: list[str] = []
    for start in range(0, len(rows), chunk):
        out.append(f'<div class="k" style="counter-reset:ln {start}">')
        out.extend(f'<div class="r{" n" if n in noise else ""}" id="{anchor}-L{n}">{row}</div>'
                   for n, row in enumerate(rows[start:start + chunk], start + 1))
        out.append("</div>")
    return "".join(out)


def stylesheet(scope: str = ".hl", style: str = "default") -> str:
    """CSS colouring the token classes both paths emit, under `scope`."""
    return HtmlFormatter(style=style).get_style_defs(scope)


def token_classes(text: str, language: str, fast: bool = False) -> Iterable[tuple[str, str]]:
    """(class, token text) pairs of the highlighted text, for tests and tools."""
    for line in highlight_lines(text, language, fast):
        for m in re.finditer(r'<span class="([\w-]+)">(.*?)</span>', line):
            yield m.group(1), html.unescape(m.group(2))
