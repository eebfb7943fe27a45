"""Findings about accesses of one element per program, across the gallery and tests/fixtures/published/first_four_projects.

    python3 benchmarks/one_element_findings.py [--repo PATH] [--target sm_90]

A scalar `tl.load(offsets + row)`, a row's mean stored with `tl.store(mean + row, m)`: one
element per program, every lane the same address; there is nothing to make wider or to coalesce,
so the advisor must not report it. This compiles every gallery kernel (kernels/) and every
corpus entry (tests/fixtures/published/first_four_projects/MANIFEST.json, with its probe values for bare files), runs the advisor
of the inspector found in `--repo` (default: this checkout; an older checkout gives the count
before a change), and counts the memory-access findings whose access has no tensor shape.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repo", type=Path, default=HERE, help="the checkout whose inspector to run")
    ap.add_argument("--target", default="sm_90")
    ns = ap.parse_args()
    sys.path.insert(0, str(ns.repo.resolve()))
    from inspector.analysis import advise, memory_report
    from inspector.compile.api import inspect_kernel

    jobs = [(p, {}) for p in sorted((HERE / "kernels").glob("*.py")) if not p.name.startswith("_")]
    for e in json.loads((HERE / "tests" / "fixtures" / "published" / "first_four_projects" / "MANIFEST.json").read_text()):
        kw = {"kernel": e["entry"], "probe": e.get("probe_args") or {}} if e.get("form") == "bare" else {}
        jobs.append((HERE / "tests" / "fixtures" / "published" / "first_four_projects" / e["file"], kw))
    total = one = files = 0
    for path, kw in jobs:
        probe = kw.pop("probe", None)
        rec = inspect_kernel(path, target=ns.target, timeout=300, **kw)
        if probe is not None and rec.error is not None and rec.error.kind == "missing_constexpr":
            # a bare file: the values it asks for, as tests/compile/test_real_kernels.py gives them
            missing = [m["name"] for m in rec.error.details.get("missing", [])]
            rec = inspect_kernel(path, target=ns.target, timeout=300, consts={m: str(probe[m]) for m in missing},
                                 **kw)
        if rec.error is not None and not rec.stages:
            print(f"{path.relative_to(HERE)}: {rec.error.kind}")
            continue
        files += 1
        scalar_lines = {(a.line, a.pointer) for a in memory_report(rec).accesses if not a.shape}
        found = [f for f in advise(rec) if f.code.endswith("_access")]
        ones = [f for f in found if any(f.line == ln and f"`{p}`" in f.title for ln, p in scalar_lines)]
        total += len(found)
        one += len(ones)
        if ones:
            print(f"{path.relative_to(HERE)}: {len(ones)} of {len(found)} access findings on one element: "
                  + "; ".join(f.title for f in ones))
    print(f"{files} files compiled for {ns.target}: {total} access findings, {one} of them on one-element accesses")
    return 0


if __name__ == "__main__":
    sys.exit(main())
