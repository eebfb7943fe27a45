"""The package as a user installs it: `pip install .` into a fresh virtual environment gives a
`triton-inspector` command that compiles a kernel and starts the app, away from the checkout.

The environment sees the machine's packages (`--system-site-packages`), so torch, Triton and
Streamlit are the ones installed, never fetched again (the project's rule: a user's torch/triton
stay as they are); `--no-index` proves nothing is downloaded, `--no-build-isolation` builds with
the installed setuptools."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import urllib.request
from pathlib import Path

from inspector.testing.browser import app_server
from paths import REPO


def _checkout_copy(dest: Path) -> Path:
    """The files a clone has (tracked, and new ones not ignored), so the build never writes into the
    checkout."""
    files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO, capture_output=True, check=True).stdout
    for name in files.decode().split("\0"):
        if name and not name.startswith(("tests/", "assets/screenshots/")) and (REPO / name).is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, dest / name)
    return dest


def test_pip_install_gives_a_command_that_compiles_and_serves_the_app(tmp_path):
    venv, work = tmp_path / "venv", tmp_path / "elsewhere"
    work.mkdir()
    # without a pip of its own: the machine's pip and setuptools (a venv's bundled setuptools may
    # predate the wheel command its builds need)
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(venv)], check=True,
                   timeout=300)
    py, cli = venv / "bin" / "python", venv / "bin" / "triton-inspector"
    src = _checkout_copy(tmp_path / "src")
    install = subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-index", "--no-build-isolation", str(src)],
                             capture_output=True, text=True, timeout=600)
    assert install.returncode == 0, install.stdout[-2000:] + install.stderr[-3000:]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(TRITON_INSPECTOR_HOME=str(tmp_path / "home"), TRITON_INSPECTOR_CACHE=str(tmp_path / "cache"),
               TRITON_INSPECTOR_POOL="0")
    where = subprocess.run([str(py), "-c", "import inspector, inspector.places as p; print(inspector.__file__); "
                            "print(p.gallery_dir())"], capture_output=True, text=True, cwd=work, env=env, timeout=120)
    package, gallery = where.stdout.split()
    assert package.startswith(str(venv)) and gallery.startswith(str(venv)), where.stdout  # not the checkout's
    assert (Path(gallery) / "add.py").is_file()  # the gallery travels inside the package

    kernel = work / "add.py"
    shutil.copy(REPO / "kernels" / "add.py", kernel)
    compiled = subprocess.run([str(cli), "compile", str(kernel), "--target", "sm_90"], capture_output=True,
                              text=True, cwd=work, env=env, timeout=600)
    assert compiled.returncode == 0, compiled.stderr[-3000:]
    assert ".visible .entry add_kernel" in compiled.stdout and "ld.global.v4" in compiled.stdout

    assert subprocess.run([str(cli), "app", "--help"], capture_output=True, text=True, env=env,
                          timeout=120).returncode == 0
    with app_server(tmp_path / "home", cache=str(tmp_path / "cache"), command=[str(cli), "app"], cwd=work,
                    env_extra={"TRITON_INSPECTOR_POOL": "0"}) as url:
        with urllib.request.urlopen(url, timeout=30) as page:
            assert page.status == 200 and b"<html" in page.read().lower()
