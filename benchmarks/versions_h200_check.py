"""On a GPU machine: the native compile with the machine's own Triton and a GPU-free compile in a
side environment of the same release give identical PTX, kernel by kernel.

For each bundled kernel: `inspect_kernel(target="native")` with the installed Triton (a real
driver, a real GPU), and `inspect_kernel(target=<the GPU's arch>, triton=<the same release>)`,
which runs in the side environment of that release with the offline driver and the stand-in
device (no GPU used). Prints one row per kernel (identical or not, registers both ways) and the
first differing lines when they differ; exit status 1 when any PTX differs or a side fails.

The side environment of the installed release is found or made under --home (default: a fresh
temporary home, removed afterwards unless --keep):
  --home DIR          use the ready side environment already there (made by `versions add`)
  --wheel PATH        make it from this wheel (a machine without internet: copy the wheel in,
                      e.g. triton-3.6.0-cp312-cp312-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl)
  --copy-installed    make it by copying the installed Triton's own files into the venv (when no
                      wheel can be had; the same files, so this checks the GPU-free path alone)
  (none of them)      make it from the package index; without internet this fails and says so.

Run (H200, Triton 3.6.0, torch 2.11): python benchmarks/versions_h200_check.py [--wheel PATH | --copy-installed]
Needs no streamlit or plotly.
"""

from __future__ import annotations

import argparse
import difflib
import importlib.metadata
import json
import re
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def copy_installed_triton(folder: Path, version: str) -> None:
    """A side environment holding a copy of the installed Triton's files (listed in its RECORD),
    with the state file `inspector.versions` reads."""
    from inspector.versions.environments import ENV_DIR, SideEnvironment, disk_usage, env_python, write_state
    from inspector.versions.install import _site_dirs

    venv = folder / ENV_DIR
    subprocess.run(
        [sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(venv)], check=True
    )
    purelib = Path(
        subprocess.run(
            [env_python(venv), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    (purelib / "_inspector_base.pth").write_text("\n".join(_site_dirs()) + "\n")
    dist = importlib.metadata.distribution("triton")
    for f in dist.files or []:
        src = Path(dist.locate_file(f))
        if src.is_file() and ".." not in f.parts:
            dst = purelib / f
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst)
    out = subprocess.run(
        [env_python(venv), "-c", "import triton; print(triton.__version__); print(triton.__file__)"],
        check=False,
        capture_output=True,
        text=True,
        cwd="/",
    )
    seen = out.stdout.split()
    if out.returncode != 0 or seen[0] != version or not seen[1].startswith(str(purelib)):
        raise SystemExit(
            f"the copied side environment does not import its own triton {version}: {out.stdout} {out.stderr}"
        )
    write_state(
        SideEnvironment(
            version=version,
            path=str(folder),
            state="ready",
            step=4,
            phase="ready",
            started=time.time(),
            finished=time.time(),
            python=env_python(venv),
            triton_file=seen[1],
            source="copy of the installed triton",
            bytes=disk_usage(folder),
        )
    )


def main() -> int:
    ns = _arguments()
    home = ns.home or tempfile.mkdtemp(prefix="inspector-h200-versions-")
    try:
        return check(ns, home)
    finally:
        if not ns.home and not ns.keep:
            shutil.rmtree(home, ignore_errors=True)


def _arguments() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    how = ap.add_mutually_exclusive_group()
    how.add_argument(
        "--home", help="an inspector home holding a ready side environment of the installed release"
    )
    how.add_argument("--wheel", help="make the side environment from this wheel")
    how.add_argument(
        "--copy-installed", action="store_true", help="make it from the installed Triton's files"
    )
    ap.add_argument(
        "--kernels", default="", help="comma-separated kernel names (default: every bundled kernel)"
    )
    ap.add_argument("--keep", action="store_true", help="keep the temporary home")
    ap.add_argument("--out", help="also write the results as JSON here")
    return ap.parse_args()


_TRITON_FILE = re.compile(r'^(\s*\.file\s+\d+\s+)"[^"]*/site-packages/triton/', re.M)


def _without_install_paths(ptx: str) -> str:
    """PTX with the folder Triton is installed in left out of its `.file` lines."""
    return _TRITON_FILE.sub(r'\1"<triton>/', ptx)


def check(ns: argparse.Namespace, home: str) -> int:
    """The comparison, with the side environment under `home`; the exit status."""
    os.environ["TRITON_INSPECTOR_HOME"] = home
    os.environ.setdefault("TRITON_INSPECTOR_CACHE", os.path.join(home, "cache"))
    from inspector import versions
    from inspector.compile.api import inspect_kernel, native_gpu

    release = versions.base_version()
    gpu = native_gpu()
    if not gpu.get("available"):
        print(f"no GPU here ({gpu.get('reason')}): this check compares a native compile with a GPU-free one")
        return 2
    target = gpu["target"]
    print(
        f"GPU: {gpu['properties'].get('name')} ({target}); installed Triton {release}; "
        f"Python {sys.version.split()[0]}; inspector home {home}"
    )
    env = versions.get(release)
    if env is None or not env.ready:
        if ns.home:
            print(f"no ready side environment of Triton {release} under {home}")
            return 2
        if ns.copy_installed:
            copy_installed_triton(versions.versions_dir() / release, release)
        else:
            versions.add(release, wheel=ns.wheel)
            env = versions.wait(release, on_progress=lambda e: print("  " + e.describe(), flush=True))
            if not env.ready:
                print(
                    f"CANNOT CREATE the side environment of Triton {release}: {env.error}\n"
                    "Without internet, copy a wheel of this release to the machine and pass --wheel PATH, "
                    "or pass --copy-installed."
                )
                return 2
    env = versions.get(release)
    print(f"side environment: {env.env_path} ({env.source}); imports triton from {env.triton_file}")

    names = [k for k in ns.kernels.split(",") if k] or sorted(
        p.stem for p in (REPO / "kernels").glob("*.py") if not p.name.startswith("_")
    )
    rows, bad = [], 0
    print(
        f"\n| kernel | native ({target}) registers | GPU-free side env registers | PTX |\n|---|---|---|---|"
    )
    for name in names:
        path = REPO / "kernels" / f"{name}.py"
        native = inspect_kernel(path, target="native", use_cache=False)
        offline = inspect_kernel(path, target=target, triton=release, use_cache=False)
        problem = next(
            (
                f"{side}: {r.error.kind}: {r.error.message[:200]}"
                for side, r in (("native", native), ("side env", offline))
                if r.error is not None
            ),
            None,
        )
        if problem is None and offline.mode != "offline":
            problem = f"the side-environment compile ran {offline.mode}, not GPU-free"
        native_ptx, offline_ptx = native.stages.get("ptx") or "", offline.stages.get("ptx") or ""
        exact = problem is None and native_ptx == offline_ptx
        # The debug file table names where each environment installed Triton's own library
        # (triton/language/standard.py): the only text that may differ; the code may not.
        same = exact or (problem is None and _without_install_paths(native_ptx) == _without_install_paths(offline_ptx))
        bad += not same
        verdict = problem or ("identical" if exact else "identical but for Triton's install path" if same
                              else "DIFFERENT")
        print(
            f"| {name} | {native.resources.registers} | {offline.resources.registers} | {verdict} |",
            flush=True,
        )
        if problem is None and not same:
            diff = difflib.unified_diff(
                native.stages["ptx"].splitlines(),
                offline.stages["ptx"].splitlines(),
                "native.ptx",
                "side-env.ptx",
                lineterm="",
                n=1,
            )
            print("\n".join(list(diff)[:40]))
        rows.append(
            {
                "kernel": name,
                "identical": same,
                "byte_identical": exact,
                "problem": problem,
                "native_mode": native.mode,
                "offline_mode": offline.mode,
                "native_registers": native.resources.registers,
                "offline_registers": offline.resources.registers,
                "triton": [native.triton_version, offline.triton_version],
            }
        )
    print(f"\n{len(names) - bad} of {len(names)} kernels: identical PTX")
    if ns.out:
        Path(ns.out).write_text(json.dumps({"gpu": gpu, "triton": release, "rows": rows}, indent=1))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
