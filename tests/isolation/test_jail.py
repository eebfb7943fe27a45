"""The jail's command lines, run for real under bubblewrap: what is hidden stays hidden, what is
exposed is read-only, the environment is only what was passed, there is no network."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from inspector.isolation import jail
from inspector.isolation.exposure import isolation

pytestmark = pytest.mark.skipif(isolation()["mode"] != "bwrap" and not os.environ.get("INSPECTOR_REQUIRE_SANDBOX"),
                                reason="bubblewrap cannot make namespaces here (scripts/install.sh installs it)")


def _boxed(code: str, expose, hide, writable=(), env=None) -> subprocess.CompletedProcess:
    command = jail.boxed_command([sys.executable, "-c", code], env or {"PATH": os.environ["PATH"]},
                                 expose=[*jail.SYSTEM_DIRS, *jail.python_paths(), *expose], hide=hide,
                                 writable=writable)
    return subprocess.run(command, capture_output=True, text=True, timeout=60)


def test_hidden_folders_are_empty_and_exposed_ones_read_only(tmp_path):
    secret, project, out = tmp_path / "home", tmp_path / "home" / "project", tmp_path / "out"
    project.mkdir(parents=True)
    out.mkdir()
    (secret / "token").write_text("s3cret")
    (project / "kernel.py").write_text("print('hi')")
    code = f"""
import os
print(sorted(os.listdir({str(secret)!r})))
print(open({str(project / 'kernel.py')!r}).read())
try:
    open({str(project / 'new.py')!r}, 'w')
    print('wrote')
except OSError as e:
    print('read-only', e.errno)
open({str(out / 'result.txt')!r}, 'w').write('ok')
open('/tmp/scratch', 'w').write('private')
"""
    run = _boxed(code, expose=[str(project)], hide=[str(secret)], writable=[str(out)])
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0] == "['project']"  # the token is gone; only the bound project shows
    assert lines[1] == "print('hi')"
    assert lines[2].startswith("read-only")
    assert (out / "result.txt").read_text() == "ok"
    assert not (project / "new.py").exists()
    assert not os.path.exists("/tmp/scratch") or open("/tmp/scratch").read() != "private"


def test_only_the_given_environment_and_no_network(tmp_path):
    code = """
import os, socket
print(sorted(k for k in os.environ if k not in ("PWD", "SHLVL", "_", "LC_CTYPE")))  # LC_CTYPE: Python's own (PEP 538)
s = socket.socket()
s.settimeout(2)
try:
    s.connect(("1.1.1.1", 80))
    print("connected")
except OSError:
    print("no network")
print(sorted(n for _, n in socket.if_nameindex()))
"""
    run = _boxed(code, expose=[], hide=[os.path.expanduser("~")], env={"PATH": os.environ["PATH"], "ONLY": "1"})
    assert run.returncode == 0, run.stderr
    env, net, interfaces = run.stdout.splitlines()
    assert env == "['ONLY', 'PATH']"
    assert net == "no network"
    assert interfaces == "['lo']"


def test_a_path_under_a_hidden_folder_is_not_named_twice():
    base = Path(tempfile.mkdtemp(dir="/var/tmp"))  # not under /tmp, which the box covers anyway
    outer, inner = base / "a", base / "a" / "b"
    inner.mkdir(parents=True)
    command = jail.boxed_command(["true"], {}, expose=[], hide=[str(inner), str(outer)])
    covered = [command[i + 1] for i, a in enumerate(command) if a == "--tmpfs"]
    shutil.rmtree(base)
    assert str(outer) in covered and str(inner) not in covered
