"""The worker's scratch folder: removed after the inspection, except in a jail, whose private /tmp
is dropped with the request (`worker.DISPOSABLE_SCRATCH`, set by `handler.in_jail`)."""

from __future__ import annotations

import json
import subprocess
import sys

from paths import REPO

# In a fresh interpreter: an inspection imports the file and sets Triton's state for good.
PROBE = """
import json, os, sys, tempfile
tempfile.tempdir = sys.argv[1]
from inspector.worker import handler, inspection as worker
from inspector.record import InspectRequest
seen = {}
for disposable in (False, True):
    worker.DISPOSABLE_SCRATCH = disposable
    rec = worker.inspect_file(InspectRequest(file=sys.argv[2], target="sm_90", defer=["sass"]))
    assert rec.error is None, rec.error
    seen[str(disposable)] = sorted(n for n in os.listdir(sys.argv[1]) if n.startswith("inspector-"))
handler.in_jail(sys.argv[1])
seen["in_jail"] = worker.DISPOSABLE_SCRATCH
print(json.dumps(seen))
"""


def test_the_scratch_folder_goes_unless_the_jail_drops_it(tmp_path):
    run = subprocess.run([sys.executable, "-c", PROBE, str(tmp_path), str(REPO / "kernels" / "add.py")],
                         capture_output=True, text=True, cwd=REPO, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    seen = json.loads(run.stdout.strip().splitlines()[-1])
    assert seen["False"] == []  # removed
    assert len(seen["True"]) == 1  # left for the jail's /tmp to take
    assert seen["in_jail"] is True
