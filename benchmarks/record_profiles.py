"""Record the shipped profiles (assets/profiles) on this GPU: every gallery kernel's example through
`python -m inspector profile`, as a user runs it, each timed end to end.

    python benchmarks/record_profiles.py --suffix h100 [--only add,matmul] [--raw DIR] [--json times.json]

The first profile runs as a session's first: a fresh inspector home, cache and Triton cache, no
worker pool running; the rest run warm after it, as a user's next profiles do. Vector add is also
profiled at n = 2^22 and 2^22 - 1 (its example's size changed in a copy of the file; the profile
names kernels/add.py). `--raw DIR` keeps each run's Nsight Compute pages and record (DIR/<name>/).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
KERNELS = REPO / "kernels"
ADD_EXAMPLE = "launch(*make_inputs(4096, device))"
# name -> (kernel file, kernel name or None for the file's only/first, example size for add)
SHIPPED = {
    "layer_norm": ("layer_norm.py", None, None),
    "add": ("add.py", None, None),
    "add_n4194304": ("add.py", None, 4194304),
    "add_n4194303": ("add.py", None, 4194303),
    "copy_coalesced_kernel": ("copy_coalesced_vs_strided.py", "copy_coalesced_kernel", None),
    "copy_strided_kernel": ("copy_coalesced_vs_strided.py", "copy_strided_kernel", None),
    "softmax": ("softmax.py", None, None),
    "gelu": ("gelu.py", None, None),
    "register_spill": ("register_spill.py", None, None),
    "matmul": ("matmul.py", None, None),
    "matmul_tf32_vs_ieee": ("matmul_tf32_vs_ieee.py", None, None),
    "attention": ("attention.py", None, None),
    "transpose_conflicted": ("transpose_shared_gluon.py", "transpose_kernel", None),
    "transpose_swizzled": ("transpose_shared_gluon.py", "transpose_kernel", None),
}
# constexprs that pick one launch of a file whose example launches a kernel twice (a teaching pair)
CONSTS = {"transpose_conflicted": ["SWIZZLE=False"], "transpose_swizzled": ["SWIZZLE=True"]}


def _file_for(name: str, work: Path) -> Path:
    file, _, size = SHIPPED[name]
    if size is None:
        return KERNELS / file
    text = (KERNELS / file).read_text()
    assert ADD_EXAMPLE in text, "kernels/add.py's example changed: update ADD_EXAMPLE"
    copy = work / file  # the same name, so the profile's lines map onto kernels/add.py
    copy.write_text(text.replace(ADD_EXAMPLE, f"launch(*make_inputs({size}, device))"))
    return copy


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--suffix", required=True, help="the device's short name in the file names (h100, h200)")
    ap.add_argument("--only", help="comma-separated names (default: all)")
    ap.add_argument("--out", default=str(REPO / "assets" / "profiles"))
    ap.add_argument("--raw", help="also keep each run's pages and record under DIR/<name>")
    ap.add_argument("--json", help="write every run's wall time and steps there")
    ns = ap.parse_args()
    names = ns.only.split(",") if ns.only else list(SHIPPED)
    Path(ns.out).mkdir(parents=True, exist_ok=True)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        env = {**os.environ, "TRITON_INSPECTOR_HOME": str(work / "home"), "TRITON_INSPECTOR_CACHE": str(work / "cache"),
               "TRITON_CACHE_DIR": str(work / "triton"), "PYTHONPATH": str(REPO)}
        for i, name in enumerate(names):
            file, kernel, size = SHIPPED[name]
            folder = work / name
            folder.mkdir()
            out = Path(ns.out) / f"{name}-{ns.suffix}.json"
            command = [sys.executable, "-m", "inspector", "profile", str(_file_for(name, folder)), "--out", str(out)]
            if kernel:
                command += ["--kernel", kernel]
            for const in CONSTS.get(name, []):
                command += ["--const", const]
            if ns.raw:
                command += ["--raw", str(Path(ns.raw) / name)]
            started = time.perf_counter()
            run = subprocess.run(command, capture_output=True, text=True, env=env, cwd=REPO)
            wall = time.perf_counter() - started
            print(f"== {name} ({'first of the session' if i == 0 else 'warm'}): {wall:.1f} s, status {run.returncode}")
            print(run.stdout[-3000:], run.stderr[-2000:], flush=True)
            if run.returncode != 0:
                rows.append({"name": name, "wall": round(wall, 2), "failed": run.stderr[-1500:]})
                continue
            profile = json.loads(out.read_text())
            if size is not None:
                profile["file"] = str(KERNELS / file)
                out.write_text(json.dumps(profile, indent=1))
            rows.append({"name": name, "first": i == 0, "wall": round(wall, 2),
                         "steps": {k: round(v, 2) for k, v in profile.get("seconds", {}).items()}})
        subprocess.run([sys.executable, "-m", "inspector", "pool", "stop"], env=env, cwd=REPO, capture_output=True)
    if ns.json:
        Path(ns.json).write_text(json.dumps(rows, indent=1))
    return 0 if all("failed" not in r for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
