"""Split Triton's pass-by-pass IR dump (MLIR_ENABLE_DUMP / LLVM_IR_ENABLE_DUMP) into snapshots.

The dump interleaves three kinds of header, one per snapshot:

    // -----// IR Dump Before TritonGPUCoalesce (tritongpu-coalesce) ('builtin.module' operation) //----- //
    // -----// IR Dump Before CanonicalizerPass: canonicalize{...} ('tt.func' operation: @k) //----- //
    ; *** IR Dump After InstCombinePass on add_kernel ***
    # *** IR Dump After Machine Sanitizer Binary Metadata (machine-sanmd) ***:

The first two are MLIR (Triton 3.6 and 3.9 spell the pass differently; both are matched) and show
the IR *before* the pass; LLVM's show the IR *after* it, the `#` ones being machine (MIR) passes.
"""

from __future__ import annotations

import re

from ..record import PassSnapshot

# MLIR: "// -----// IR Dump Before Inliner (inline) ('builtin.module' operation) //----- //"
#       "// -----// IR Dump Before InlinerPass: inline{...} ('builtin.module' operation) //----- //"
MLIR_HEADER = re.compile(
    r"^// -----// IR Dump (?P<when>Before|After) (?P<name>[\w:.-]+?)(?::\s+(?P<arg1>[\w.-]+)(?:\{[^}]*\})?|"
    r"\s+\((?P<arg2>[\w.-]+)\))\s+\('(?P<op>[\w.]+)' operation(?:: (?P<sym>@[\w$.]+))?\) //----- //\s*$"
)
# LLVM IR: "; *** IR Dump After InstCombinePass on add_kernel ***"
LLVM_HEADER = re.compile(r"^; \*\*\* IR Dump (?P<when>Before|After) (?P<name>.+) on (?P<scope>\S+) \*\*\*\s*$")
# The software pipeliner's own steps: "// -----// SoftwarePipeliner internal IR Dump After: LowerLoops"
PIPELINER_HEADER = re.compile(r"^// -----// (?P<who>\w+) internal IR Dump (?P<when>Before|After): (?P<name>\w+)\s*$")
# Machine IR: "# *** IR Dump After Machine Sanitizer Binary Metadata (machine-sanmd) ***:"
MIR_HEADER = re.compile(r"^# \*\*\* IR Dump (?P<when>Before|After) (?P<name>.+?) \((?P<arg>[\w.-]+)\) \*\*\*:?\s*$")
# AMD's legacy pass manager: "*** IR Dump After DummyCGSCCPass (DummyCGSCCPass) ***"
LEGACY_HEADER = re.compile(r"^\*\*\* IR Dump (?P<when>Before|After) (?P<name>.+?) \((?P<arg>[\w.-]+)\) \*\*\*:?\s*$")


def _header(line: str) -> dict | None:
    if m := MLIR_HEADER.match(line):
        scope = m.group("op") + (f" {m.group('sym')}" if m.group("sym") else "")
        return dict(
            when=m.group("when").lower(),
            name=m.group("name"),
            argument=m.group("arg1") or m.group("arg2") or "",
            dialect="mlir",
            scope=scope,
        )
    if m := PIPELINER_HEADER.match(line):
        return dict(when=m.group("when").lower(), name=f"{m.group('who')}:{m.group('name')}", argument="",
                    dialect="mlir", scope="builtin.module")
    if m := LLVM_HEADER.match(line):
        return dict(when=m.group("when").lower(), name=m.group("name"), argument="", dialect="llvm",
                    scope=m.group("scope"))
    if m := MIR_HEADER.match(line):
        return dict(when=m.group("when").lower(), name=m.group("name"), argument=m.group("arg"), dialect="mir",
                    scope="machine function")
    if m := LEGACY_HEADER.match(line):
        return dict(when=m.group("when").lower(), name=m.group("name"), argument=m.group("arg"), dialect="llvm",
                    scope="module")
    return None


def split_pass_dump(text: str, max_snapshots: int = 2000) -> list[PassSnapshot]:
    """Snapshots in dump order. Unchanged snapshots keep `ir=""` and `changed=False` to save space.

    A snapshot's `name` is the pass whose result it shows: "after X". MLIR dumps the IR *before*
    each pass, so the IR under "Before Y" is what the pass dumped just ahead of it (X) made of it,
    and is named "after X" (the first MLIR snapshot: "input to Y"); LLVM and machine-IR dumps are
    already "after".
    """
    snapshots: list[PassSnapshot] = []
    current: dict | None = None
    body: list[str] = []
    last_ir: dict[tuple[str, str], str] = {}
    previous_mlir: list[str] = []  # the MLIR pass dumped last

    def close() -> None:
        if current is None or len(snapshots) >= max_snapshots:
            return
        ir = "\n".join(body).strip("\n") + "\n"
        key = (current["dialect"], current["scope"])
        changed = last_ir.get(key) != ir
        last_ir[key] = ir
        if current["dialect"] == "mlir" and current["when"] == "before":
            name = f"after {previous_mlir[-1]}" if previous_mlir else f"input to {current['name']}"
            previous_mlir.append(current["name"])
        else:
            name = f"{current['when']} {current['name']}"
        snapshots.append(
            PassSnapshot(
                index=len(snapshots),
                name=name,
                argument=current["argument"],
                dialect=current["dialect"],
                scope=current["scope"],
                changed=changed,
                ir=ir if changed else "",
            )
        )

    for line in text.splitlines():
        head = _header(line) if ("IR Dump" in line) else None
        if head is not None:
            close()
            current, body = head, []
        elif current is not None:
            body.append(line)
    close()
    return snapshots
