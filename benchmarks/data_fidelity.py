"""Sector model against Nsight Compute on kernels whose addresses come from data, each launch
profiled four ways (docs/profile.md, "Measured on the user's own data"):

- `file`: `profile FILE` (the file's example() run natively under Nsight Compute, the model given
  the same data through a native capture of that run);
- `run`: `profile --run "python FILE"` (the program's own launch);
- `carried`: `profile CAPTURE.py`, the reproducer of a GPU-free interpreter capture with its index
  tensors carried beside it;
- `made_up`: the same reproducer without them (checks of the dependent lines must read n/c).

And the model's figures GPU-free, from the interpreter capture (`static`). Needs a GPU with
Nsight Compute; writes one JSON (and each run's raw pages) under OUT.

    python benchmarks/data_fidelity.py OUT [kernel ...]
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KERNELS = ("jagged_sum", "permute_gather", "paged_read", "moe_rows")


def cli(args: list[str], env: dict[str, str]) -> tuple[dict | None, float, str]:
    started = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "inspector", *args], capture_output=True, text=True, env=env, cwd=ROOT)
    took = time.perf_counter() - started
    try:
        return json.loads(out.stdout), took, out.stderr[-2000:]
    except ValueError:
        return None, took, (out.stdout + out.stderr)[-3000:]


def by_text(prof: dict | None) -> dict[str, dict]:
    if not prof:
        return {}
    checks = {c["what"].split("line ")[-1]: c for c in prof["checks"] if c["what"].startswith("L2 sectors")}
    return {l["source"].strip(): {"sectors": l["sectors"], "ideal": l["ideal_sectors"],
                                  "check": checks.get(str(l["line"]))} for l in prof["lines"] if l["sectors"]}


def main(out: str, kernels: list[str]) -> None:
    from inspector.analysis.memory import launch_line_sectors
    from inspector.capture.by_running import open_by_running
    from inspector.launch_data import sidecar

    os.makedirs(out, exist_ok=True)
    env = {**os.environ, "PYTHONPATH": ROOT}
    results = {}
    for k in kernels:
        f = f"tests/fixtures/data_dependent_kernels/{k}.py"
        row: dict = {}
        t = time.perf_counter()
        rec = open_by_running(f"python {f}", target="sm_90", cwd=ROOT)
        lines = (rec.source or "").splitlines()
        row["static"] = {lines[n - 1].strip(): v for n, v in launch_line_sectors(rec).items()} if not rec.error else \
            str(rec.error.message)
        row["static_seconds"] = time.perf_counter() - t
        made_up = os.path.join(out, f"bare_{k}")
        os.makedirs(made_up, exist_ok=True)
        bare = os.path.join(made_up, os.path.basename(rec.file))
        shutil.copy(rec.file, bare)
        for name, args in (("file", ["profile", f]),
                           ("run", ["profile", "--run", f"python {f}"]),
                           ("carried", ["profile", rec.file]),
                           ("made_up", ["profile", bare])):
            raw = os.path.join(out, f"raw_{k}_{name}")
            prof, took, err = cli([*args, "--json", "--raw", raw], env)
            if name == "carried" and os.path.isdir(raw):  # the data the reproducer read, for tests
                shutil.copy(sidecar(rec.file), os.path.join(raw, "reproducer.data.npz"))
            row[name] = {"lines": by_text(prof), "seconds": took, "launch": (prof or {}).get("launch"),
                         "data": (prof or {}).get("data"), "error": None if prof else err,
                         "duration_us": ((prof or {}).get("figures", {}).get("duration") or {}).get("value")}
        results[k] = row
        print(k, json.dumps(row, indent=1)[:3000], flush=True)
    with open(os.path.join(out, "data_fidelity.json"), "w") as fh:
        json.dump(results, fh, indent=1)
    shutil.make_archive(os.path.join(out, "raw"), "gztar", out, ".")  # every run's pages, in one file


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:] or list(KERNELS))
