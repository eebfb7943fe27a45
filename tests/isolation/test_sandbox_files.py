"""What a worker manager leaves on disk: nothing. Its log (the manager's stderr, which a failure to
start quotes) is an unnamed file, so a process killed with no chance to clean up (a server, a pool
daemon) leaves no folder in /tmp."""

from __future__ import annotations

import os
import stat
import tempfile
import threading
from pathlib import Path

import pytest
from aborting_kernel import compiler_death

from inspector.isolation.sandbox import Sandbox, SandboxError


def test_a_manager_that_cannot_start_is_reported_with_what_it_printed(tmp_path):
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\necho 'no Triton in this interpreter' >&2\nexit 3\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    box = Sandbox(mode="off", warm_up_worker=False, python=str(fake))
    try:
        with pytest.raises(SandboxError) as failed:
            box.run({"kind": "inspect"})
        assert failed.value.kind == "crashed"
        assert "no Triton in this interpreter" in str(failed.value)
    finally:
        box.close()


def test_the_managers_log_is_an_unnamed_file():
    before = set(Path(tempfile.gettempdir()).glob("inspector-sandbox-*"))
    box = Sandbox(warm_up_worker=False)
    try:
        box.warm_up()
        # the manager (or bubblewrap around it) writes its stderr to a file deleted on creation
        assert os.readlink(f"/proc/{box._proc.pid}/fd/2").endswith("(deleted)")
        assert set(Path(tempfile.gettempdir()).glob("inspector-sandbox-*")) <= before
    finally:
        box.close()


def test_a_dead_compilers_output_file_is_reported_and_removed(tmp_path):
    # without the jail (no private /tmp to vanish with the request) the file that held the
    # compiler's output is beside other requests': read after the worker's death, then removed
    before = _request_leftovers()
    box = Sandbox(mode="off", warm_up_worker=False)
    try:
        rec = compiler_death(tmp_path, box)
        assert rec.error is not None and "number of input constraints does not match" in rec.error.message, \
            rec.error and rec.error.short()
        assert _request_leftovers() <= before
    finally:
        box.close()


# A file whose module-level code makes a scratch file, says where, and never ends
_STUCK = """
import tempfile, time
fd, path = tempfile.mkstemp()
open({where!r}, "w").write(path)
while True:
    time.sleep(0.05)
"""


def test_a_request_killed_mid_run_leaves_no_scratch(tmp_path):
    # without the jail, what the worker made in its temporary folder goes with a request the sandbox
    # kills (a cancel here; a timeout or the memory limit stop it the same way)
    where = tmp_path / "where.txt"
    user = tmp_path / "stuck.py"
    user.write_text(_STUCK.format(where=str(where)))
    before = _request_leftovers()
    box = Sandbox(mode="off", warm_up_worker=False)
    cancel = threading.Event()

    def cancel_once_it_wrote():
        while not where.exists() or not where.read_text():
            if done.wait(0.05):
                return
        cancel.set()

    done = threading.Event()
    watcher = threading.Thread(target=cancel_once_it_wrote)
    watcher.start()
    try:
        with pytest.raises(SandboxError) as failed:
            box.run({"kind": "inspect", "file": str(user), "target": "sm_90"}, cancel=cancel)
        assert failed.value.kind == "cancelled", failed.value
        made = Path(where.read_text())
        assert made.parent.name.startswith("inspector-request-"), made  # its TMPDIR was the request's folder
        assert not made.exists() and not made.parent.exists()
        assert _request_leftovers() <= before
    finally:
        done.set()
        watcher.join()
        box.close()


def _request_leftovers() -> set[Path]:
    tmp = Path(tempfile.gettempdir())
    return set(tmp.glob(".inspector-compiler-output-*")) | set(tmp.glob("inspector-request-*"))
