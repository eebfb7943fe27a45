"""Source locations of every line of every stage, read from the stage text itself.

Each stage records where its code came from in its own way:

- TTIR / TTGIR: a trailing `loc(...)` on each op, usually an alias (`loc(#loc16)`) defined at the
  end of the module; aliases nest names (`loc("offs"(#loc3))`), inlined `@triton.jit` helpers
  (`loc(callsite(#loc45 at #loc15))`) and fused locations (`loc(fused[#loc1, #loc2])`).
- LLVM IR: `!dbg !N` on each instruction, `!N = !DILocation(line:, column:, scope:, inlinedAt:)`,
  the scope's `file:` naming a `!DIFile`.
- PTX / AMDGCN: `.loc FILE LINE COL` directives that hold until the next one; PTX may add
  `, function_name $L__info_string0, inlined_at 1 93 24`, and both may end the line with a
  comment naming the call site of inlined code (`// standard.py:43:17 @[ matmul.py:87:27 ]`).
- SASS: `//## File "/abs/k.py", line 23` lines (with `inlined at "...", line 87` when the PTX
  recorded the call site), holding until the next such group.

A location is a chain of frames, innermost first: the line in a helper, then the line that
called it, and so on. Line 0 (`.loc 1 0 0`, LLVM's "no location") and `loc(unknown)` are no
location. Everything here is plain text processing; nothing imports Triton.

A quirk of the LLVM in Triton 3.9 (llvm-project PR 177718; fixed upstream by PR 222764): the
NVPTX printer emits a `.loc` for every physical line of an inline-asm block, adding the line's
index within the block to the source line. Triton writes each global load as one inline-asm
block (`mov.u32 $0, 0x0; ... @$5 ld.global.v4.b32 ...`), so its `ld.global` is attributed to a
line three or four below the `tl.load`, and ptxas carries that into the SASS line table.
`ptx_locations` ignores the `.loc` directives inside `// begin inline asm` ... `// end inline
asm` and gives every instruction of the block the location in force when the block began; it
also keeps the location ptxas saw (`emitted`), so that `sass_locations` can undo the same shift
in the SASS line table (see there).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

Frame = tuple[str, int, int]  # (file, line, column); column 0 where the stage records none
Chain = tuple[Frame, ...]  # innermost frame first


@dataclass
class StageLocations:
    """Where each line of one stage came from.

    `chains[line]`: the location chains of a 1-based stage line (usually one chain);
    `code_lines`: the lines holding code (ops / instructions), with or without a location;
    `emitted[line]` (PTX only): the chain ptxas saw for that line, before the inline-asm fix;
    `classes[line]` (PTX / SASS / AMDGCN): the instruction class, for `sass_locations`;
    `inferred`: lines whose location was reconstructed (SASS lines re-attributed through the PTX);
    `aux_lines`: lines with a location that hold no code of their own (MLIR's closing `} loc(...)`);
    `columns`: whether the stage's locations carry columns (SASS does not).
    """

    chains: dict[int, tuple[Chain, ...]] = field(default_factory=dict)
    code_lines: list[int] = field(default_factory=list)
    emitted: dict[int, Chain] = field(default_factory=dict)
    classes: dict[int, str] = field(default_factory=dict)
    inferred: set[int] = field(default_factory=set)
    aux_lines: list[int] = field(default_factory=list)  # mapped lines that are not code (MLIR's `} loc(...)`)
    columns: bool = True

    def add_code(self, no: int, cls: str, chain: Chain = ()) -> None:
        """Record line `no` as code of instruction class `cls`, with `chain` as its location if any."""
        self.code_lines.append(no)
        self.classes[no] = cls
        if chain:
            self.chains[no] = (chain,)


def stage_lines(text: str) -> list[str]:
    """A stage's lines as displayed and numbered everywhere in the analysis (split on "\\n")."""
    return text.split("\n")


# ---- MLIR (TTIR, TTGIR) --------------------------------------------------------------------------
# An alias definition: `#loc16 = loc("offs"(#loc1))`
MLIR_LOC_ALIAS = re.compile(r"^(#loc\d*) = loc\((.*)\)\s*$")
# The op's own location closes its line: `%x_6 = tt.load %x_5, %mask_4 : tensor<...> loc(#loc21)`
MLIR_TRAILING_LOC = " loc("
# A region's opener, whose location is on its closing `} loc(#loc12)` line: `scf.for %i = ... {`
MLIR_REGION_OPEN = re.compile(r"\{\s*$")
# `} else {` continues the region op opened above rather than closing it.
MLIR_REGION_CONTINUE = re.compile(r"^\s*\}.*\{\s*$")
# A file location inside a location attribute: `"/work/main/kernels/add.py":23:12`
MLIR_FILE_LOC = re.compile(r'"((?:[^"\\]|\\.)*)":(\d+):(\d+)')


class _LocParser:
    """Recursive-descent reader of MLIR location attributes, resolving `#locN` aliases."""

    def __init__(self, aliases: dict[str, str]):
        self.aliases = aliases
        self.resolved: dict[str, tuple[Chain, ...]] = {}
        self.resolving: set[str] = set()

    def alias(self, name: str) -> tuple[Chain, ...]:
        if name in self.resolved:
            return self.resolved[name]
        body = self.aliases.get(name)
        if body is None or name in self.resolving:
            return ()
        self.resolving.add(name)
        chains, _ = self.parse(body, 0)
        self.resolving.discard(name)
        self.resolved[name] = chains
        return chains

    def parse(self, s: str, i: int) -> tuple[tuple[Chain, ...], int]:
        """Parse one location at s[i:]; return its chains and the index after it."""
        n = len(s)
        while i < n and s[i] == " ":
            i += 1
        if s.startswith("#loc", i):
            j = i + 4
            while j < n and s[j].isdigit():
                j += 1
            return self.alias(s[i:j]), j
        if s.startswith("unknown", i):
            return (), i + 7
        if s.startswith("callsite(", i):
            callee, j = self.parse(s, i + 9)
            j = s.index(" at ", j) + 4
            caller, j = self.parse(s, j)
            j = s.index(")", j) + 1
            if not callee:
                return caller, j
            if not caller:
                return callee, j
            return tuple(c + k for c in callee for k in caller), j
        if s.startswith("fused", i):
            j = s.index("[", i) + 1
            out: list[Chain] = []
            while j < n and s[j] != "]":
                chains, j = self.parse(s, j)
                out.extend(chains)
                while j < n and s[j] in ", ":
                    j += 1
            return tuple(dict.fromkeys(out)), j + 1
        if s.startswith('"', i):
            m = MLIR_FILE_LOC.match(s, i)
            if m:
                j = m.end()
                if s.startswith(" to ", j):  # a range `"f":1:2 to 3:4`: keep its start
                    j = re.compile(r" to (?:\d+:)?\d+").match(s, j).end()  # type: ignore[union-attr]
                return ((((m.group(1), int(m.group(2)), int(m.group(3))),),), j)
            # a name location: `"x"(#loc6)` or a bare `"x"`
            j = i + 1
            while j < n and s[j] != '"':
                j += 2 if s[j] == "\\" else 1
            j += 1
            if j < n and s[j] == "(":
                chains, j = self.parse(s, j + 1)
                return chains, s.index(")", j) + 1
            return (), j
        # anything else (opaque locations, dialect attributes): skip to the matching bracket
        depth = 0
        j = i
        while j < n:
            c = s[j]
            if c in "([<{":
                depth += 1
            elif c in ")]>}":
                if depth == 0:
                    break
                depth -= 1
            elif c == "," and depth == 0:
                break
            j += 1
        return (), j


def _trailing_loc(line: str) -> str | None:
    """The body of the location attribute that ends `line`, if any."""
    k = line.rfind(MLIR_TRAILING_LOC)
    while k >= 0:
        body = line[k + 5:].rstrip()
        if body.endswith(")") and body.count("(") + 1 == body.count(")"):
            return body[:-1]
        k = line.rfind(MLIR_TRAILING_LOC, 0, k)
    return None


def mlir_locations(text: str) -> StageLocations:
    """Locations of TTIR / TTGIR lines.

    An op line gets the location that ends it. A region op (`scf.for ... {`, `tt.func ... {`)
    gets the location of the `}` that closes its region, where MLIR prints it. Alias
    definitions, attribute definitions and `module` lines are not code.
    """
    lines = stage_lines(text)
    aliases: dict[str, str] = {}
    for line in lines:
        if line.startswith("#loc"):
            m = MLIR_LOC_ALIAS.match(line)
            if m:
                aliases[m.group(1)] = m.group(2)
    parser = _LocParser(aliases)
    out = StageLocations()
    openers: list[int] = []
    for no, line in enumerate(lines, 1):
        stripped = line.lstrip()
        if not stripped or stripped[0] == "#" or stripped.startswith("//"):
            continue
        body = _trailing_loc(line)
        if stripped[0] == "}" and not MLIR_REGION_CONTINUE.match(line):
            # `} loc(#loc12)`, `} {tt.num_stages = 3 : i32} loc(#loc12)`, `}) : (tensor<..>) -> f32 loc(#loc51)`:
            # the location of the op whose region closes here
            opener = openers.pop() if openers else None
            chains = parser.parse(body, 0)[0] if body is not None else ()
            if chains:
                out.aux_lines.append(no)
                out.chains[no] = chains
                if opener:
                    out.chains[opener] = chains
            continue
        if MLIR_REGION_CONTINUE.match(line):
            continue
        if stripped.startswith("module"):
            if MLIR_REGION_OPEN.search(line):
                openers.append(0)  # placeholder so the module's closing brace pops it
            continue
        if MLIR_REGION_OPEN.search(line) and body is None:
            openers.append(no)
            out.code_lines.append(no)
            continue
        if body is None:
            continue
        out.code_lines.append(no)
        chains, _ = parser.parse(body, 0)
        if chains:
            out.chains[no] = chains
    out.chains.pop(0, None)
    return out


# ---- LLVM IR ---------------------------------------------------------------------------------------
# `  %20 = tail call { i32, i32 } asm sideeffect "...", "=r,l,b"(ptr addrspace(1) %17, i1 %14) #2, !dbg !17`
LLVM_DBG_REF = re.compile(r"!dbg !(\d+)\s*$")
# `!12 = !DILocation(line: 22, column: 11, scope: !4)`, `..., scope: !17, inlinedAt: !22)`
LLVM_DILOCATION = re.compile(
    r"^!(\d+) = (?:distinct )?!DILocation\(line: (\d+)(?:, column: (\d+))?, scope: !(\d+)(?:, inlinedAt: !(\d+))?"
)
# Scopes: `!4 = distinct !DISubprogram(name: "k", ..., file: !1, line: 21, ...)`,
# `!14 = distinct !DILexicalBlockFile(scope: !4, file: !15, discriminator: 0)`
LLVM_DISCOPE = re.compile(r"^!(\d+) = (?:distinct )?!(DISubprogram|DILexicalBlockFile|DILexicalBlock)\((.*)\)\s*$")
LLVM_SCOPE_FILE = re.compile(r"\bfile: !(\d+)")
LLVM_SCOPE_LINE = re.compile(r"\bline: (\d+)")
# `!1 = !DIFile(filename: "add.py", directory: "/work/main/kernels")`
LLVM_DIFILE = re.compile(r'^!(\d+) = (?:distinct )?!DIFile\(filename: "([^"]*)", directory: "([^"]*)"')
# An instruction line: two-space indent, then `%x = ...` or an opcode (`store`, `br`, `ret`, `tail call`)
LLVM_INSTR = re.compile(r"^  (?:%[\w.]+ = )?[a-z]")


def llvm_locations(text: str) -> StageLocations:
    """Locations of LLVM IR lines from `!dbg` attachments (inlinedAt chains followed).

    A `define ... !dbg !N` line naming a subprogram maps to the function's `def` line.
    """
    lines = stage_lines(text)
    dilocs: dict[int, tuple[int, int, int, int | None]] = {}
    scope_file: dict[int, int] = {}
    scope_line: dict[int, int] = {}
    files: dict[int, str] = {}
    for line in lines:
        if not line.startswith("!"):
            continue
        if m := LLVM_DILOCATION.match(line):
            dilocs[int(m.group(1))] = (int(m.group(2)), int(m.group(3) or 0), int(m.group(4)),
                                       int(m.group(5)) if m.group(5) else None)
        elif m := LLVM_DISCOPE.match(line):
            attrs = m.group(3)
            if f := LLVM_SCOPE_FILE.search(attrs):
                scope_file[int(m.group(1))] = int(f.group(1))
            if m.group(2) == "DISubprogram" and (ln := LLVM_SCOPE_LINE.search(attrs)):
                scope_line[int(m.group(1))] = int(ln.group(1))
        elif m := LLVM_DIFILE.match(line):
            directory, name = m.group(3), m.group(2)
            files[int(m.group(1))] = name if os.path.isabs(name) or not directory else f"{directory}/{name}"

    def file_of(scope: int) -> str:
        return files.get(scope_file.get(scope, -1), "")

    cache: dict[int, Chain] = {}

    def chain(ref: int, depth: int = 0) -> Chain:
        if ref in cache:
            return cache[ref]
        loc = dilocs.get(ref)
        if loc is None or depth > 64:
            if ref in scope_line and scope_line[ref] > 0:  # a subprogram: its def line
                return ((file_of(ref), scope_line[ref], 0),)
            return ()
        line, col, scope, inlined = loc
        here: Chain = ((file_of(scope), line, col),) if line > 0 else ()
        result = here + (chain(inlined, depth + 1) if inlined is not None else ())
        cache[ref] = result
        return result

    out = StageLocations()
    for no, line in enumerate(lines, 1):
        if not line.startswith("  ") and not line.startswith("define"):
            continue
        is_code = line.startswith("define") or LLVM_INSTR.match(line) is not None
        if not is_code:
            continue
        out.code_lines.append(no)
        m = LLVM_DBG_REF.search(line) if "!dbg" in line else None
        if m is None and line.startswith("define") and "!dbg !" in line:
            m = re.search(r"!dbg !(\d+)", line)
        if m:
            c = chain(int(m.group(1)))
            if c:
                out.chains[no] = (c,)
    return out


# ---- PTX and AMDGCN ----------------------------------------------------------------------------------
# `.file 1 "/work/main/kernels/add.py"` (PTX) or `.file 1 "/work/main/kernels" "add.py"` (AMDGCN)
ASM_FILE = re.compile(r'^\s*\.file\s+(\d+)\s+"([^"]*)"(?:\s+"([^"]*)")?')
# `.loc 1 25 9 // add.py:25:9`, `.loc 1 23 26 is_stmt 0 ; add.py:23:26`,
# `.loc 1 68 23, function_name $L__info_string0, inlined_at 1 93 24 // matmul.py:68:23`
ASM_LOC = re.compile(r"^\s*\.loc\s+(\d+)\s+(\d+)\s+(\d+)(?:,\s*function_name\s+\S+,\s*inlined_at\s+(\d+)\s+(\d+)\s+(\d+))?")
# The call-site comment of inlined code: `// standard.py:43:17 @[ matmul.py:87:27 ]`; may nest `@[ a @[ b ] ]`
ASM_INLINED_COMMENT = re.compile(r"@\[\s*([^\s@\]]+):(\d+):(\d+)")
# `// begin inline asm` / `// end inline asm` around Triton's inline PTX
PTX_BEGIN_ASM = "// begin inline asm"
PTX_END_ASM = "// end inline asm"


def _asm_files(text: str) -> dict[int, str]:
    """The `.file` table (PTX prints it after the code, so it is read first)."""
    files: dict[int, str] = {}
    for line in stage_lines(text):
        if ".file" in line and (m := ASM_FILE.match(line)):
            name = m.group(2) if m.group(3) is None else os.path.join(m.group(2), m.group(3))
            files[int(m.group(1))] = name
    return files


def _resolve_basename(name: str, files: dict[int, str]) -> str:
    """A comment names files by basename; find the full path in the `.file` table."""
    for path in files.values():
        if os.path.basename(path) == name:
            return path
    return name


def _asm_loc_chain(m: re.Match, line: str, files: dict[int, str]) -> Chain:
    lineno = int(m.group(2))
    if lineno == 0:
        return ()
    chain: list[Frame] = [(files.get(int(m.group(1)), ""), lineno, int(m.group(3)))]
    if m.group(4):
        chain.append((files.get(int(m.group(4)), ""), int(m.group(5)), int(m.group(6))))
    elif "@[" in line:
        for c in ASM_INLINED_COMMENT.finditer(line):
            chain.append((_resolve_basename(c.group(1), files), int(c.group(2)), int(c.group(3))))
    return tuple(chain)


def ptx_locations(text: str) -> StageLocations:
    """Locations of PTX lines: each instruction gets the `.loc` in force (inline-asm fix applied).

    A `.loc` names one call site (`inlined_at`); code inlined through several levels (`tl.max`
    calling `_elementwise_max`, called from the kernel) gets the outer levels from the `.loc`
    directives of the level above. Where that level was inlined at several places, the nearest
    preceding one is taken and the line is marked `inferred`.
    """
    from .instructions import ptx_class

    files = _asm_files(text)
    out = StageLocations()
    true_loc: Chain = ()
    emitted: Chain = ()
    in_asm = False
    asm_anchor: Chain = ()
    call_sites: dict[Frame, list[tuple[int, Frame]]] = {}  # inlined frame -> [(line, its call site)]
    for no, line in enumerate(stage_lines(text), 1):
        s = line.strip()
        if not s:
            continue
        if s.startswith(".loc"):
            m = ASM_LOC.match(line)
            if m:
                emitted = _asm_loc_chain(m, line, files)
                if m.group(4) and len(emitted) == 2:
                    call_sites.setdefault(emitted[0], []).append((no, emitted[1]))
                if not in_asm:
                    true_loc = emitted
                elif not asm_anchor:
                    asm_anchor = true_loc = emitted  # a block at function entry, before any .loc
            continue
        if s.startswith("//"):
            if s.startswith(PTX_BEGIN_ASM):
                in_asm, asm_anchor = True, true_loc
            elif s.startswith(PTX_END_ASM):
                in_asm = False
            continue
        cls = ptx_class(line)
        if cls is None:
            if in_asm and true_loc and s.startswith("{"):  # `{ .reg .b32 a; ld.shared.v2.b32 {a, b}, [%r1]; }`
                out.chains[no] = (true_loc,)  # linked, not counted: the mix reads one class per line
            continue
        out.add_code(no, cls, true_loc)
        if emitted:
            out.emitted[no] = emitted
    if call_sites:
        _extend_call_chains(out, call_sites)
    return out


def _extend_call_chains(out: StageLocations, call_sites: dict[Frame, list[tuple[int, Frame]]]) -> None:
    """Append the outer call sites of multi-level inlining (see `ptx_locations`)."""
    unique = {f: sites[0][1] for f, sites in call_sites.items() if len({s for _, s in sites}) == 1}

    def extend(chain: Chain, no: int) -> tuple[Chain, bool]:
        guessed = False
        seen = set(chain)
        while len(chain) < 16:
            last = chain[-1]
            if last in unique:
                nxt = unique[last]
            elif last in call_sites:
                before = [s for ln, s in call_sites[last] if ln < no]
                nxt = before[-1] if before else call_sites[last][0][1]
                guessed = True
            else:
                break
            if nxt in seen:
                break
            seen.add(nxt)
            chain = chain + (nxt,)
        return chain, guessed

    for table in (out.chains, out.emitted):
        for no, value in table.items():
            chains = value if table is out.chains else (value,)
            if all(len(c) < 2 for c in chains):
                continue
            new = []
            for c in chains:
                if len(c) >= 2:
                    c, guessed = extend(c, no)
                    if guessed and table is out.chains:
                        out.inferred.add(no)
                new.append(c)
            table[no] = tuple(new) if table is out.chains else new[0]  # type: ignore[assignment]


def amdgcn_locations(text: str) -> StageLocations:
    """Locations of AMDGCN lines: each instruction gets the `.loc` in force."""
    from .instructions import amdgcn_class

    files = _asm_files(text)
    out = StageLocations()
    loc: Chain = ()
    for no, line in enumerate(stage_lines(text), 1):
        s = line.strip()
        if not s or s[0] == ";":
            continue
        if s.startswith(".loc"):
            m = ASM_LOC.match(line)
            if m:
                loc = _asm_loc_chain(m, line, files)
            continue
        cls = amdgcn_class(line)
        if cls is None:
            continue
        out.add_code(no, cls, loc)
    return out


# ---- SASS ----------------------------------------------------------------------------------------------
# `	//## File "/work/main/kernels/add.py", line 25`
# `	//## File "/.../standard.py", line 43 inlined at "/work/main/kernels/matmul.py", line 87`
SASS_FILE_LINE = re.compile(r'^\s*//## File "([^"]*)", line (\d+)')
SASS_INLINED_AT = re.compile(r'inlined at "([^"]*)", line (\d+)')


def _sass_group_chain(group: list[str]) -> Chain:
    """One chain from a group of `//## File` lines. With `-gi` nvdisasm prints one line per
    inlining level, innermost first, each naming its call site:

        //## File ".../standard.py", line 196 inlined at ".../standard.py", line 216
        //## File ".../standard.py", line 216 inlined at "/work/k.py", line 47
        //## File "/work/k.py", line 47
    """
    m = SASS_FILE_LINE.match(group[0])
    if not m or int(m.group(2)) == 0:
        return ()
    chain: list[Frame] = [(m.group(1), int(m.group(2)), 0)]
    for line in group:
        for c in SASS_INLINED_AT.finditer(line):
            frame = (c.group(1), int(c.group(2)), 0)
            if frame != chain[-1]:
                chain.append(frame)
    return tuple(chain)


def sass_locations(text: str, ptx: StageLocations | None = None) -> StageLocations:
    """Locations of SASS lines from the disassembler's line table.

    With `ptx` (the same kernel's `ptx_locations`), a SASS line is re-attributed where the PTX
    shows that ptxas saw another location than the code's own: the inline-asm shift of Triton
    3.9 (see the module docstring), and the call sites of inlined library code that the line
    table lacks (Triton 3.6's PTX has no `inlined_at`). The PTX instructions ptxas saw at the same
    (file, line) decide, in this order: those of the same class (an `LDG` follows the
    `ld.global`s, an `FADD` the `add.f32`s); else, if unshifted PTX code sits at that line, the
    line keeps its own location (ptxas made the instruction for that code); else those of a
    compatible class (a `CS2R` zeroing for a `mov`), else all. The SASS line takes their true
    locations; several are all kept, and the line is marked `inferred`. A SASS line with no PTX
    counterpart keeps its own location.
    """
    from .instructions import sass_class

    index = _emitted_index(ptx) if ptx is not None else {}
    memo: dict[tuple[Chain, str], tuple[tuple[Chain, ...], bool]] = {}  # few distinct (location, class) pairs
    out = StageLocations(columns=False)
    loc: Chain = ()
    group: list[str] = []
    for no, line in enumerate(stage_lines(text), 1):
        if "//##" in line:
            group.append(line)
            continue
        if group:
            loc = _sass_group_chain(group)
            group = []
        cls = sass_class(line)
        if cls is None:
            continue
        out.add_code(no, cls)  # its chains follow, re-attributed through the PTX
        if not loc:
            continue
        chains: tuple[Chain, ...] = (loc,)
        if index:
            key = (loc, cls)
            hit = memo.get(key)
            if hit is None:
                fixed = _reattribute(loc, cls, index)
                changed = fixed is not None and (len(fixed) > 1 or _lines(fixed[0]) != _lines(loc))
                hit = memo[key] = (fixed or chains, changed)
            chains = hit[0]
            if hit[1]:
                out.inferred.add(no)
        out.chains[no] = chains
    return out


def _lines(chain: Chain) -> tuple[tuple[str, int], ...]:
    return tuple((f, ln) for f, ln, _ in chain)


def _emitted_index(ptx: StageLocations) -> dict[tuple[str, int], list[tuple[str, Chain, bool, Chain]]]:
    """(file, line) as ptxas saw it -> [(class, true chain, shifted?, emitted chain)] of PTX instructions."""
    index: dict[tuple[str, int], list[tuple[str, Chain, bool, Chain]]] = {}
    seen: dict[tuple[str, Chain, Chain], tuple[str, Chain, bool, Chain]] = {}
    for no, emitted in ptx.emitted.items():
        chains = ptx.chains.get(no)
        if not chains or not chains[0]:
            continue
        true = chains[0]
        key = (ptx.classes.get(no, "other"), true, emitted)
        entry = seen.get(key)
        if entry is None:  # one entry per distinct (class, location): thousands of loads share a few
            shifted = true[0][:2] != emitted[0][:2] or len(true) != len(emitted)
            entry = seen[key] = (key[0], true, shifted, emitted)
            index.setdefault((emitted[0][0], emitted[0][1]), []).append(entry)
    return index


def _reattribute(loc: Chain, cls: str, index: dict) -> tuple[Chain, ...] | None:
    entries = index.get((loc[0][0], loc[0][1]))
    if not entries:
        return None
    if len(loc) > 1:  # the line table knows the call sites: keep PTX entries that agree
        outer = _lines(loc)[1:]
        agreeing = [e for e in entries if _lines(e[3])[1:len(loc)] == outer]
        entries = agreeing or entries
    if not any(e[2] or len(e[3]) > len(loc) for e in entries):
        return None  # nothing shifted and no call site missing here: the line table is right
    same = [e for e in entries if e[0] == cls]
    if not same:
        unshifted = [e for e in entries if not e[2]]
        if unshifted and all(len(e[3]) <= len(loc) for e in unshifted):
            return None  # the line's own code is here; ptxas made this instruction for it
        same = [e for e in entries if _sass_ptx_compatible(cls, e[0])] or unshifted or entries
    seen: dict[tuple, Chain] = {}
    for _, true, _, _ in same:
        seen.setdefault(_lines(true), tuple((f, ln, 0) for f, ln, _ in true))
    return tuple(seen.values())


# SASS classes that correspond to a different PTX class (ptxas rewrites moves into ALU ops etc.)
_COMPATIBLE = {
    ("move", "int"), ("int", "move"), ("constant", "move"), ("move", "constant"),
}


def _sass_ptx_compatible(sass_cls: str, ptx_cls: str) -> bool:
    return sass_cls == ptx_cls or (sass_cls, ptx_cls) in _COMPATIBLE
