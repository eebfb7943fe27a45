"""How many published kernel files go in as they are: every file of a corpus's MANIFEST.json
(tests/fixtures/published/first_four_projects, or five_more_projects with --corpus five_more_projects)
through the command line, GPU-free, for each
target the entry is portable to, with no value given (no --const, no --arg).

    python benchmarks/corpus_rate.py [--corpus five_more_projects] [--targets sm_90,gfx942] [--only TEXT] [--json out.json]

Prints one line per file and target (ok, or the error's kind and first line) and the rate per
project. A `bare` file (kernels only, no launch anywhere) counts as taken when the tool names every
missing value at once (exit 1, kind missing_constexpr) and then compiles with exactly those values
(`probe_args`), the only case where the corpus test gives values too.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PUBLISHED = REPO / "tests" / "fixtures" / "published"
CORPUS = PUBLISHED / "first_four_projects"  # --corpus picks another folder of PUBLISHED


def compile_file(path: Path, target: str, extra: list[str], triton: str | None = None) -> dict:
    release = ["--triton", triton] if triton else []  # an entry written for an older release says which
    proc = subprocess.run([sys.executable, "-m", "inspector", "compile", str(path), "--target", target, "--json",
                           "--no-cache", *release, *extra], capture_output=True, text=True, cwd=REPO, timeout=600)
    try:
        return json.loads(proc.stdout)
    except json.JSONDecodeError:
        return {"error": {"kind": "crash", "message": (proc.stderr or proc.stdout)[-300:]}}


def try_entry(entry: dict, target: str) -> tuple[bool, str]:
    path = CORPUS / entry["file"]
    # A bare file names which of its kernels is asked for (it launches none to choose from).
    chosen = ["--kernel", entry["entry"]] if entry.get("form") == "bare" and entry.get("entry") else []
    rec = compile_file(path, target, chosen, entry.get("triton"))
    err = rec.get("error")
    if err and err.get("kind") == "missing_constexpr" and entry.get("form") == "bare":
        values = [f"--const={m['name']}={entry.get('probe_args', {}).get(m['name'], m.get('suggested'))}"
                  for m in err.get("details", {}).get("missing", [])]
        kernel = chosen or ["--kernel", rec.get("kernel") or ""]
        rec = compile_file(path, target, [*kernel, *values], entry.get("triton"))
        err = rec.get("error")
    if err:
        return False, f"{err.get('kind')}: {(err.get('message') or '').splitlines()[0][:160]}"
    return True, f"{rec.get('kernel')} via {rec.get('call_origin')}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--targets", default="sm_90,gfx942")
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--corpus", default="first_four_projects",
                    help="the folder under tests/fixtures/published/ (first_four_projects, five_more_projects)")
    ap.add_argument("--only", help="only files whose path contains this text")
    args = ap.parse_args()
    global CORPUS
    CORPUS = PUBLISHED / args.corpus
    manifest = [e for e in json.loads((CORPUS / "MANIFEST.json").read_text()) if args.only is None or args.only in e["file"]]
    results = []
    per_project: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    t0 = time.monotonic()
    for entry in manifest:
        for target in args.targets.split(","):
            if target not in entry.get("targets", [target]):
                continue  # not portable there (the entry's notes say why)
            ok, what = try_entry(entry, target)
            results.append({"file": entry["file"], "project": entry["project"], "target": target, "ok": ok,
                            "what": what})
            per_project[entry["project"]][0] += ok
            per_project[entry["project"]][1] += 1
            print(f"{'ok  ' if ok else 'FAIL'} {target:7} {entry['file']}: {what}", flush=True)
    total = sum(v[0] for v in per_project.values()), sum(v[1] for v in per_project.values())
    print()
    for project, (good, n) in sorted(per_project.items()):
        print(f"{project}: {good}/{n} file-target pairs")
    print(f"all: {total[0]}/{total[1]} ({100 * total[0] / max(total[1], 1):.0f}%) in {time.monotonic() - t0:.0f} s")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
