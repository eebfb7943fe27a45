"""The installer of one side environment, run in the background by `environments.add`:

    python -m inspector.versions.install --dir FOLDER --version 3.6.0 [--wheel PATH] [--find-links DIR]

Steps, each recorded in FOLDER/state.json before it starts (the app and the CLI show them):

1. create `FOLDER/env`, a venv with the base interpreter's site-packages visible (so torch and
   the inspector's dependencies are shared, never downloaded again), and a `.pth` naming the
   running interpreter's own site-packages too (for an inspector itself installed in a venv);
2. pip-install `triton==VERSION` into it, without dependencies (Triton has none at run time),
   from the package index or the given wheel; it shadows the base Triton in that venv;
3. check: the venv's `import triton` must come from the venv and report VERSION, and `import
   torch` must be the base torch;
4. measure its size on disk.

A failure is recorded with pip's reason and what to do; the partial venv is deleted.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import site
import subprocess
import sys
import sysconfig
import time

from ..triton_compat import releases as support
from .environments import ENV_DIR, SideEnvironment, disk_usage, env_python, read_state, write_state

_CHECK = (
    "import json, sys, torch, triton; print(json.dumps({'triton': triton.__version__, "
    "'triton_file': triton.__file__, 'torch': torch.__version__, 'torch_file': torch.__file__, "
    "'executable': sys.executable}))"
)


def _site_dirs() -> list[str]:
    """The running interpreter's site-packages folders (what the side venv must also see)."""
    dirs = [sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]]
    try:
        dirs += site.getsitepackages()
    except AttributeError:
        pass
    return list(dict.fromkeys(d for d in dirs if os.path.isdir(d)))


def _pip_supports_python_option() -> bool:
    """pip 22.3 and newer can install into another interpreter's environment (`--python`)."""
    try:
        import pip

        major, minor = (int(x) for x in pip.__version__.split(".")[:2])
        return (major, minor) >= (22, 3)
    except (ImportError, ValueError):
        return False


class InstallError(Exception):
    pass


def _run_logged(command: list[str], env: SideEnvironment, what: str) -> None:
    """Run a command with its output in the log, keeping its latest line as the phase detail."""
    proc = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        text=True,
        bufsize=1,
    )
    tail: list[str] = []
    last_write = 0.0
    assert proc.stdout is not None
    for line in proc.stdout:
        sys.stdout.write(line)
        sys.stdout.flush()
        line = line.strip()
        if not line:
            continue
        tail = (tail + [line])[-20:]
        if line.startswith(
            ("Collecting", "Downloading", "Processing", "Installing", "Successfully", "Looking")
        ):
            env.detail = line[:200]
            if time.monotonic() - last_write > 0.2:
                write_state(env)
                last_write = time.monotonic()
    if proc.wait() != 0:
        errors = [
            t for t in tail if "error" in t.lower() or "no matching" in t.lower() or "could not" in t.lower()
        ]
        raise InstallError(f"{what} failed: {(errors or tail or ['no output'])[-1]}")


def install(
    folder: str, version: str, wheel: str | None = None, find_links: str | None = None
) -> SideEnvironment:
    """Run the four steps for the environment in `folder`; return its final state."""
    env = read_state(folder) or SideEnvironment(version=version, path=folder)
    env.version, env.state, env.pid = version, "installing", os.getpid()
    env.started = env.started or time.time()
    env.source = wheel or "PyPI"
    env.warning = support.check(version)
    venv = os.path.join(folder, ENV_DIR)
    env.python = env_python(venv)
    t0 = time.monotonic()

    def step(i: int, phase: str) -> None:
        env.step, env.phase, env.detail = i, phase, ""
        write_state(env)
        print(f"[{i + 1}/{env.steps}] {phase}", flush=True)

    try:
        step(0, "creating the environment")
        if os.path.exists(venv):
            shutil.rmtree(venv)
        with_pip = not _pip_supports_python_option()
        command = [sys.executable, "-m", "venv", "--system-site-packages", venv]
        if not with_pip:
            command.insert(4, "--without-pip")
        _run_logged(command, env, "creating the venv")
        purelib = subprocess.run(
            [env.python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        with open(os.path.join(purelib, "_inspector_base.pth"), "w") as f:
            f.write("\n".join(_site_dirs()) + "\n")  # after the venv's own folder: its triton wins

        requirement = wheel or f"triton=={version}"
        step(1, f"installing {'triton from ' + os.path.basename(wheel) if wheel else requirement} with pip")
        pip = [env.python, "-m", "pip"] if with_pip else [sys.executable, "-m", "pip", "--python", env.python]
        command = pip + [
            "install",
            "--no-deps",
            "--no-input",
            "--progress-bar",
            "off",
            "--disable-pip-version-check",
        ]
        if find_links:
            command += ["--find-links", find_links]
        try:
            _run_logged(command + [requirement], env, f"pip install {requirement}")
        except InstallError as e:
            hint = (
                ""
                if wheel
                else (
                    f"; without access to the package index, download the wheel elsewhere "
                    f"(pip download --no-deps triton=={version}) and add it with --wheel PATH"
                )
            )
            raise InstallError(f"{e}{hint}") from None

        step(2, "checking which triton and torch the environment imports")
        out = subprocess.run([env.python, "-c", _CHECK], check=False, capture_output=True, text=True, cwd="/")
        if out.returncode != 0:
            raise InstallError(
                "the environment cannot import torch and triton: "
                + (out.stderr.strip().splitlines() or ["no output"])[-1]
            )
        seen = json.loads(out.stdout.strip().splitlines()[-1])
        env.triton_file, env.torch_file = seen["triton_file"], seen["torch_file"]
        if seen["triton"] != version:
            raise InstallError(f"the environment imports triton {seen['triton']}, not {version}")
        if not os.path.realpath(seen["triton_file"]).startswith(os.path.realpath(venv) + os.sep):
            raise InstallError(f"the environment imports triton from {seen['triton_file']}, outside {venv}")
        if os.path.realpath(seen["torch_file"]).startswith(os.path.realpath(venv) + os.sep):
            raise InstallError("the environment installed a torch of its own; it must use the base torch")

        step(3, "measuring its size")
        env.bytes = disk_usage(folder)
        env.state, env.step, env.phase, env.detail = "ready", env.steps, "ready", ""
        env.finished = time.time()
        env.seconds = round(time.monotonic() - t0, 2)
        env.pid = None
        write_state(env)
        print(
            f"ready: triton {version} in {venv} ({env.bytes / 2**20:.0f} MiB, {env.seconds:.1f} s)",
            flush=True,
        )
    except Exception as e:  # noqa: BLE001 - every failure is recorded for the app and the CLI
        shutil.rmtree(venv, ignore_errors=True)
        env.state, env.error, env.pid, env.finished = "failed", str(e), None, time.time()
        write_state(env)
        print(f"failed: {e}", file=sys.stderr, flush=True)
    return env


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m inspector.versions.install")
    p.add_argument("--dir", required=True)
    p.add_argument("--version", required=True)
    p.add_argument("--wheel")
    p.add_argument("--find-links")
    ns = p.parse_args(argv)
    env = install(os.path.abspath(ns.dir), ns.version, ns.wheel, ns.find_links)
    return 0 if env.ready else 1


if __name__ == "__main__":
    sys.exit(main())
