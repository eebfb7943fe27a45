"""What the commands print: a stage, the one-line summary, an error with its advice, the
stages written to a folder."""

from __future__ import annotations

import json
import os
import sys

from ..record import Inspection


def write_stage(rec: Inspection, stage: str | None, raw: bool = True) -> bool:
    """Print a stage's text (the target's assembly by default) to stdout; False, with an error on
    stderr naming the stages there are, when the record has no such stage. `raw=False` leaves out
    the lines the page hides too (directives, comments, debug sections: `stage_lines.noise_lines`)."""
    stage = stage or ("amdgcn" if rec.backend == "hip" else "ptx")
    if stage in rec.deferred:
        from ..compile.api import complete

        complete(rec, [stage])
    if stage not in rec.stages:
        print(f"error: no {stage} stage for {rec.target}; stages: {', '.join([*rec.stages, *rec.deferred])}", file=sys.stderr)
        return False
    text = rec.stages[stage]
    if not raw:
        from ..stage_lines import noise_lines

        noise = noise_lines(text, stage)
        text = "\n".join(line for n, line in enumerate(text.split("\n"), 1) if n not in noise) + "\n"
    sys.stdout.write(text)
    return True


def report_error(rec: Inspection) -> None:
    """The error (or why the kernel cannot launch) on stderr, with the file and line, and the
    command-line form of what is missing."""
    err = rec.error
    if err is None:
        problem = rec.launch_problem()
        if problem:
            print(f"{rec.file}: error: {problem}", file=sys.stderr)
        return
    where = ""
    if err.file:
        where = f"{err.file}:{err.line}: " if err.line else f"{err.file}: "
    print(f"{where}error ({err.kind}): {err.message}", file=sys.stderr)
    missing = err.details.get("missing") or []
    if missing:
        flags = " ".join(f"--{'const' if m.get('kind') == 'constexpr' else 'arg'} {m['name']}="
                         f"{m.get('suggested') or 'VALUE'}" for m in missing)
        print(f"  on the command line: {flags}", file=sys.stderr)
    if rec.stopped:
        st = rec.stopped
        print(f"  note: the file's code stopped at line {st.get('line')}: {st.get('message')}", file=sys.stderr)
    if err.kind in ("missing_constexpr", "bad_argument", "compilation", "import") \
            and not rec.call_origin.startswith("run:"):
        kernel = rec.kernel or (err.details.get("kernel") if err.details else None) or "KERNEL"
        print(f"  or open it through the code that really calls it (a test, a benchmark, a script): "
              f"python -m inspector compile --run \"pytest tests/test_x.py::test_y\" --kernel {kernel}",
              file=sys.stderr)
    if rec.parameters:  # what the failed compile tried, so the values can be checked and changed
        call = ", ".join(f"{p.name}={p.value}" for p in rec.parameters)
        origin = f" ({rec.call_origin})" if rec.call_origin else ""
        print(f"  tried{origin}: {rec.kernel}[{rec.grid or '?'}]({call})", file=sys.stderr)


def summary_line(rec: Inspection) -> str:
    r = rec.resources
    if rec.backend == "hip":
        res = f"vgprs {r.vgprs}, agprs {r.agprs}, sgprs {r.sgprs}, lds {r.lds_bytes} B, scratch {r.scratch_bytes} B"
    else:
        res = (f"registers {r.registers}, spills {r.spill_store_bytes} B stored, local {r.local_bytes} B, "
               f"shared {r.shared_bytes} B")
    occ = ""
    if rec.occupancy and rec.occupancy.get("blocks_per_sm") is not None:
        occ = f", {rec.occupancy['blocks_per_sm']} blocks/SM ({rec.occupancy.get('occupancy', 0) * 100:.0f}%)"
    cached = " (cached)" if rec.cached else ""
    return (f"{rec.kernel} on {rec.target} [{rec.mode}]: num_warps {r.num_warps}, num_stages {r.num_stages}, "
            f"{res}{occ}; compiled in {rec.compile_seconds:.2f} s{cached}")


def write_out_dir(rec: Inspection, out: str) -> list[str]:
    """Every stage as <kernel>.<stage>, the record as <kernel>.json, passes under passes/."""
    os.makedirs(out, exist_ok=True)
    written = []
    for stage, text in rec.stages.items():
        path = os.path.join(out, f"{rec.kernel}.{stage}")
        with open(path, "w") as f:
            f.write(text)
        written.append(path)
    path = os.path.join(out, f"{rec.kernel}.json")
    with open(path, "w") as f:
        json.dump(rec.to_dict(), f, indent=1)
    written.append(path)
    if rec.passes:
        pdir = os.path.join(out, "passes")
        os.makedirs(pdir, exist_ok=True)
        for s in rec.passes:
            if not s.changed:
                continue
            ext = {"mlir": "mlir", "llvm": "ll", "mir": "mir"}[s.dialect]
            safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in s.name)
            p = os.path.join(pdir, f"{s.index:04d}-{safe}.{ext}")
            with open(p, "w") as f:
                f.write(s.ir)
            written.append(p)
    return written
