"""Predicted sectors per source line against Nsight Compute's, for the same launches.

    # on a GPU with ncu (as root, or with counters allowed): measure every case once
    python3 benchmarks/coalescing_fidelity.py measure --out DIR
    # anywhere, GPU-free: predict the same launches and compare (Markdown table on stdout)
    python3 benchmarks/coalescing_fidelity.py compare DIR/ncu.csv [--triton 3.6.0] [--target sm_90]

`measure` launches the cases of benchmarks/coalescing_cases.py and the gallery's examples under
`ncu --section SourceCounters --page source --csv --print-source sass,cuda`, writing `ncu.csv`
and `manifest.json` (the launches in order, the versions). `compare` compiles each launch with the
inspector (`--triton`: the release the measurement ran, so the layouts are the same) and sums
`launch_line_sectors` per line against `L2 Theoretical Sectors Global` and its ideal. Lines the
model cannot count (a gather, a loaded offset, TMA) are listed with the reason.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

# gallery files whose example() the check runs: (file, kernels it launches, in order)
GALLERY = [
    ("add.py", ["add_kernel"]),
    ("copy_coalesced_vs_strided.py", ["copy_coalesced_kernel", "copy_strided_kernel"]),
    ("gelu.py", ["gelu_kernel"]),
    ("softmax.py", ["softmax_kernel"]),
    ("layer_norm.py", ["layer_norm_kernel"]),
]

_DRIVER = """
import json, sys
import torch, importlib
import coalescing_cases
for name in coalescing_cases.CASES:
    coalescing_cases.run([name])
for file, _ in {gallery!r}:
    importlib.import_module("kernels." + file[:-3]).example("cuda")
torch.cuda.synchronize()
"""


def manifest() -> list[dict]:
    """The launches `measure` makes, in order: (case or gallery file, kernel)."""
    import coalescing_cases

    out = [{"case": name, "kernel": kernel} for name, (kernel, _) in coalescing_cases.CASES.items()]
    out += [{"gallery": file, "kernel": k} for file, kernels in GALLERY for k in kernels]
    return out


def measure(out_dir: Path, ncu: str) -> int:
    import torch
    import triton

    out_dir.mkdir(parents=True, exist_ok=True)
    launches = manifest()
    names = sorted({l["kernel"] for l in launches})
    driver = out_dir / "driver.py"
    driver.write_text(_DRIVER.format(gallery=GALLERY))
    cmd = [ncu, "-k", f"regex:^({'|'.join(names)})$", "--section", "SourceCounters", "--page", "source", "--csv",
           "--print-source", "sass,cuda", sys.executable, str(driver)]
    # the driver imports the checkout's kernels and the cases beside this script
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(REPO / "benchmarks")])}
    res = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    (out_dir / "ncu.csv").write_text(res.stdout)
    (out_dir / "ncu.stderr").write_text(res.stderr)
    ver = subprocess.run([ncu, "--version"], capture_output=True, text=True, check=False).stdout.strip().splitlines()
    (out_dir / "manifest.json").write_text(json.dumps({
        "launches": launches, "device": torch.cuda.get_device_name(), "triton": triton.__version__,
        "torch": torch.__version__, "ncu": ver[-1] if ver else "", "command": " ".join(cmd[:-2]) + " driver.py",
    }, indent=1))
    print(f"ncu exit {res.returncode}; {len(res.stdout)} bytes of CSV in {out_dir}")
    return res.returncode


def manifest_case_kernel(case: str) -> str:
    """The kernel a case of coalescing_cases.py launches."""
    import coalescing_cases

    return coalescing_cases.CASES[case][0]


def _case_file(folder: Path, case: str) -> Path:
    """The cases module with an example() that makes exactly the launch of `case` (the inspector
    records the launch example() makes, and compiles a kernel of the file it opens)."""
    path = folder / f"case_{case}.py"
    path.write_text((REPO / "benchmarks" / "coalescing_cases.py").read_text()
                    + f"\n\ndef example(device):\n    CASES[{case!r}][1](device)\n")
    return path


def predictions(target: str, triton_version: str | None, only: list[str] | None = None) -> list[dict]:
    """Per launch of the manifest: the inspector's predicted (sectors, ideal) per source line."""
    from inspector.analysis.memory import launch_line_sectors, memory_report
    from inspector.compile.api import inspect_kernel

    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for item in manifest():
            name = item.get("case") or f"{item['gallery']}:{item['kernel']}"
            if only and name not in only:
                out.append({**item, "name": name, "skipped": True})
                continue
            path = _case_file(Path(tmp), item["case"]) if "case" in item else REPO / "kernels" / item["gallery"]
            rec = inspect_kernel(path, kernel=item["kernel"], target=target, triton=triton_version, timeout=300)
            if rec.error is not None:
                out.append({**item, "name": name, "error": rec.error.short()})
                continue
            notes = {a.line: (a.coalescing.note if a.coalescing else "") for a in memory_report(rec).accesses}
            out.append({**item, "name": name, "file": os.path.basename(rec.file), "grid": rec.grid,
                        "lines": launch_line_sectors(rec), "notes": notes})
    return out


def compare(csv_path: Path, target: str, triton_version: str | None, only: list[str] | None = None) -> list[dict]:
    """Rows of (launch, line, measured, predicted) for every line with global sectors."""
    from inspector.profile import parse_source_page
    from inspector.profile.ncu_source import SECTORS, SECTORS_IDEAL

    launches = parse_source_page(csv_path.read_text())
    preds = predictions(target, triton_version, only)
    if len(launches) != len(preds):
        raise SystemExit(f"{csv_path}: {len(launches)} launches profiled, {len(preds)} expected")
    rows = []
    for got, pred in zip(launches, preds):
        if got.function != pred["kernel"]:
            raise SystemExit(f"launch order differs: ncu has {got.function}, expected {pred['kernel']}")
        if pred.get("skipped"):
            continue
        for lc in got.lines:
            sectors, ideal = lc.metrics.get(SECTORS), lc.metrics.get(SECTORS_IDEAL)
            if not sectors:
                continue
            p = (pred.get("lines") or {}).get(lc.line)
            rows.append({"launch": pred["name"], "line": lc.line, "source": lc.source.strip(), "measured": sectors,
                         "measured_ideal": ideal, "predicted": p[0] if p else None,
                         "predicted_ideal": p[1] if p else None,
                         "why_not": None if p else (pred.get("error") or pred.get("notes", {}).get(lc.line)
                                                    or "not computable")})
    return rows


def _table(rows: list[dict]) -> str:
    out = ["| launch | line | source | measured (ideal) | predicted (ideal) | difference |", "|---|---|---|---|---|---|"]
    for r in rows:
        if r["predicted"] is None:
            pred, diff = f"- ({r['why_not']})", "-"
        else:
            pred = f"{r['predicted']:,} ({r['predicted_ideal']:,})"
            diff = f"{100 * (r['predicted'] - r['measured']) / r['measured']:+.2f}%"
        src = r["source"].replace("|", "\\|")
        out.append(f"| {r['launch']} | {r['line']} | `{src}` | {r['measured']:,} ({r['measured_ideal']:,}) | {pred} "
                   f"| {diff} |")
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("measure")
    m.add_argument("--out", type=Path, required=True)
    m.add_argument("--ncu", default=shutil.which("ncu") or "/usr/local/cuda/bin/ncu")
    c = sub.add_parser("compare")
    c.add_argument("csv", type=Path)
    c.add_argument("--target", default="sm_90")
    c.add_argument("--triton", default=None, help="the Triton release the measurement ran (a side environment)")
    c.add_argument("--only", nargs="*", help="launch names to compare (default: all)")
    c.add_argument("--json", action="store_true")
    ns = ap.parse_args()
    if ns.cmd == "measure":
        return measure(ns.out, ns.ncu)
    rows = compare(ns.csv, ns.target, ns.triton, ns.only)
    print(json.dumps(rows, indent=1) if ns.json else _table(rows))
    bad = [r for r in rows if r["predicted"] is not None and abs(r["predicted"] - r["measured"]) > 0.01 * r["measured"]]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
