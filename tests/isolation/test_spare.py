"""The worker manager's spare: a request's processes made, jailed and warmed before it comes.

A spare's worker warms up by inspecting a kernel of its own, in a scratch folder, with the
inspector's code only; then its request comes and the user's code runs there. These tests hold it
to what a request forked afresh gets: the same record, an empty /tmp, no trace of the warm-up, its
request's limits; and to its own promises: it dies with the worker manager, one that dies is
replaced, and without the jail it still serves. State is polled, never slept on.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from paths import KERNELS
from inspector.testing.processes import descendants, name
from inspector.compile.api import inspect_kernel
from inspector.compile.cache import Cache
from inspector.isolation.exposure import isolation
from inspector.isolation.sandbox import Sandbox
from inspector.isolation.request_processes import SPARE_NAME

STATUS = isolation()
REQUIRED = os.environ.get("INSPECTOR_REQUIRE_SANDBOX") == "1"
jailed = pytest.mark.skipif(not STATUS["isolated"] and not REQUIRED,
                            reason=f"no sandbox on this machine: {STATUS['missing']}")

# The kernel of the test files below.
COPY_KERNEL = '''
import triton
import triton.language as tl


@triton.jit
def copy_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs))
'''

# A kernel file whose example() reports what the worker it runs in sees (as its error).
LOOK_AROUND = "import json, os, re, resource\nimport torch\n" + COPY_KERNEL + '''

def example(device):
    seen = {}
    seen["tmp"] = sorted(re.sub(r"[A-Za-z0-9_]{8}$", "*", n) for n in os.listdir("/tmp"))
    import inspector  # the inspector's own tree is exposed read-only, and may lie under /tmp (a worktree)
    ours = os.path.dirname(os.path.dirname(inspector.__file__)) + os.sep
    seen["warm-up files"] = [os.path.join(d, f) for d, _, fs in os.walk("/tmp") for f in fs
                             if "warm" in f and not os.path.join(d, f).startswith(ours)]
    seen["root"] = sorted(os.listdir("/"))
    seen["env"] = {k: re.sub(r"inspector-[A-Za-z0-9_]{8}", "inspector-*", os.environ.get(k, ""))
                   for k in ("HOME", "TMPDIR", "TRITON_HOME", "TRITON_CACHE_DIR")}
    seen["cwd"] = os.getcwd()
    seen["comm"] = open("/proc/self/comm").read().strip()
    seen["status"] = [l.strip() for l in open("/proc/self/status") if l.startswith(("Cap", "NoNewPrivs", "Uid"))]
    seen["uid_map"] = open("/proc/self/uid_map").read().split()
    seen["mounts"] = sorted((m.split()[1], m.split()[3].split(",")[0]) for m in open("/proc/self/mounts"))
    seen["pids"] = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
    fds = {}
    for fd in os.listdir("/proc/self/fd"):
        try:
            fds[int(fd)] = re.sub(r"\\[\\d+\\]", "[N]", os.readlink("/proc/self/fd/" + fd))
        except OSError:
            pass
    seen["descriptors"] = sorted(fds.items())
    seen["limits"] = [resource.getrlimit(r) for r in (resource.RLIMIT_FSIZE, resource.RLIMIT_NPROC, resource.RLIMIT_CORE)]
    raise RuntimeError("SEEN " + json.dumps(seen, sort_keys=True))
'''


def wait_until(predicate, timeout: float = 30.0, what: str = "") -> None:
    end = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < end, f"gave up after {timeout} s waiting for {what}"
        time.sleep(0.05)


def spare_processes(root: int) -> set[int]:
    return {p for p in descendants(root) if name(p) == SPARE_NAME}


def served(box: Sandbox, path: Path, cache: Cache, **kw):
    """Inspect `path` with a ready spare; assert the spare served it."""
    assert box.wait_for_spare(120), "no spare was made ready"
    before = box.served_by_spare
    rec = inspect_kernel(path, target="sm_90", sandbox=box, use_cache=False, cache=cache, **kw)
    wait_until(lambda: box.served_by_spare == before + 1, 10, "the request to be the spare's")
    return rec


@pytest.fixture(scope="module")
def jailed_box():
    if REQUIRED and not STATUS["isolated"]:
        pytest.fail(f"INSPECTOR_REQUIRE_SANDBOX=1 but compiles cannot be sandboxed here: {STATUS['missing']}")
    box = Sandbox(mode="unshare", warm_up_worker=True, spare=True)  # the zygote is box._proc itself
    box.warm_up(complete=True)
    yield box
    box.close()


@jailed
def test_a_spare_serves_the_same_record_as_a_fresh_fork(jailed_box, tmp_path):
    cache = Cache(tmp_path / "cache")
    fresh = Sandbox(mode="unshare", warm_up_worker=False)
    try:
        forked = inspect_kernel(KERNELS / "add.py", target="sm_90", sandbox=fresh, use_cache=False, cache=cache)
    finally:
        fresh.close()
    spare = served(jailed_box, KERNELS / "add.py", cache)
    assert forked.error is None and spare.error is None, (forked.error, spare.error)
    for stage in ("ttir", "ttgir", "llir", "ptx"):
        assert spare.stages[stage] == forked.stages[stage], stage
    assert spare.resources == forked.resources


@jailed
def test_a_spare_worker_sees_what_a_fresh_fork_sees(jailed_box, tmp_path):
    """Its /tmp, root, mounts, environment, identity, capabilities, limits and neighbours: nothing of
    its warm-up (scratch folder, files, mounts, the old root) and nothing it kept from before."""
    path = tmp_path / "look_around.py"
    path.write_text(LOOK_AROUND)
    cache = Cache(tmp_path / "cache")
    fresh = Sandbox(mode="unshare", warm_up_worker=False)
    try:
        forked = inspect_kernel(path, target="sm_90", sandbox=fresh, use_cache=False, cache=cache)
    finally:
        fresh.close()
    spare = served(jailed_box, path, cache)

    def seen(rec) -> dict:
        assert rec.error is not None and "SEEN " in rec.error.message, rec.error
        return json.loads(rec.error.message.split("SEEN ", 1)[1].splitlines()[0])

    forked, spare = seen(forked), seen(spare)
    assert spare == forked
    assert spare["warm-up files"] == [] and ".spare" not in spare["root"] and ".old" not in spare["root"]
    assert spare["comm"] != SPARE_NAME and spare["pids"][:2] == [1, 2]


@jailed
def test_a_spare_takes_its_requests_limits(jailed_box, tmp_path):
    path = tmp_path / "hog.py"
    path.write_text(LOOK_AROUND.replace("    seen = {}", "    hog = bytearray(3 * 2**30)"))
    rec = served(jailed_box, path, Cache(tmp_path / "cache"), memory=1 << 30)
    assert rec.error is not None and rec.error.kind == "memory", rec.error and rec.error.short()


@jailed
def test_a_spare_that_dies_is_replaced(jailed_box, tmp_path):
    assert jailed_box.wait_for_spare(120)
    old = spare_processes(jailed_box._proc.pid)
    assert len(old) >= 3, old  # C, G and W
    worker = max(old)  # forked last
    os.kill(worker, signal.SIGKILL)
    wait_until(lambda: not any(name(p) for p in old), 30, "the dead spare's other processes to leave")
    rec = served(jailed_box, KERNELS / "add.py", Cache(tmp_path / "cache"))
    assert rec.error is None, rec.error.message


@jailed
def test_an_idle_spare_dies_with_the_worker_manager(tmp_path):
    box = Sandbox(mode="unshare", warm_up_worker=True, spare=True)
    try:
        box.warm_up(complete=True)
        assert box.wait_for_spare(120)
        spare = spare_processes(box._proc.pid)
        assert spare
        os.kill(box._proc.pid, signal.SIGKILL)
        wait_until(lambda: not any(os.path.exists(f"/proc/{p}") for p in spare), 30, "the spare to die")
    finally:
        box.close()


def test_without_the_jail_a_spare_still_serves(tmp_path):
    box = Sandbox(mode="off", warm_up_worker=True, spare=True)
    try:
        box.warm_up(complete=True)
        rec = served(box, KERNELS / "add.py", Cache(tmp_path / "cache"))
        assert rec.error is None, rec.error.message
        assert "ld.global" in rec.stages["ptx"]
    finally:
        box.close()


def test_spares_are_off_for_a_one_shot_sandbox():
    box = Sandbox(mode="off", warm_up_worker=False, spare=True)
    try:
        assert not box.wait_for_spare(1)
    finally:
        box.close()


@jailed
def test_a_spare_serves_only_the_kind_it_was_warmed_for(jailed_box, tmp_path):
    """After a native request the next spare warms natively (its worker would hold a CUDA context);
    a GPU-free inspection is then forked afresh, and the spare after it is GPU-free again."""
    cache = Cache(tmp_path / "cache")
    assert jailed_box.wait_for_spare(120)
    count = jailed_box.served_by_spare
    jailed_box.run({"kind": "native"})  # the local GPU, if any: a native request
    assert jailed_box.wait_for_spare(120)
    rec = inspect_kernel(KERNELS / "add.py", target="sm_90", sandbox=jailed_box, use_cache=False, cache=cache)
    assert rec.error is None, rec.error.message
    assert jailed_box.wait_for_spare(120)
    assert jailed_box.served_by_spare == count  # neither came from a spare of the other kind
    rec = served(jailed_box, KERNELS / "add.py", cache)
    assert rec.error is None, rec.error.message


@pytest.mark.gpu
def test_a_native_spare_serves_a_native_inspection_with_cuda_ready(tmp_path):
    """On a GPU: after a native inspection the spare warms natively (CUDA and Triton's driver
    initialised before the request) and serves the next native inspection, the same record."""
    box = Sandbox(warm_up_worker=True, spare=True)
    cache = Cache(tmp_path / "cache")
    try:
        box.warm_up(complete=True)
        t0 = time.perf_counter()
        first = inspect_kernel(KERNELS / "add.py", target="native", sandbox=box, use_cache=False, cache=cache)
        forked = time.perf_counter() - t0
        assert first.error is None and first.mode == "native", first.error and first.error.short()
        assert box.wait_for_spare(120)
        before = box.served_by_spare
        t0 = time.perf_counter()
        again = inspect_kernel(KERNELS / "add.py", target="native", sandbox=box, use_cache=False, cache=cache)
        spared = time.perf_counter() - t0
        wait_until(lambda: box.served_by_spare == before + 1, 10, "the native request to be the spare's")
        assert again.error is None and again.mode == "native", again.error and again.error.short()
        for stage in ("ttir", "ttgir", "llir", "ptx"):
            assert again.stages[stage] == first.stages[stage], stage
        assert again.resources.registers == first.resources.registers and again.resources.source == "driver"
        print(f"native add on {again.device_name}: forked afresh {forked * 1000:.0f} ms, "
              f"served by a native spare {spared * 1000:.0f} ms")
    finally:
        box.close()


# A kernel file whose example() waits until the test writes a flag beside it (its folder is the
# request's project, bound into the jail live), so the request is still running when the test looks.
WAITS_FOR_FLAG = "import os, time\n" + COPY_KERNEL + '''

def example(device):
    import torch
    flag = os.path.join(os.path.dirname(os.path.abspath(__file__)), "go")
    end = time.monotonic() + 120
    while not os.path.exists(flag) and time.monotonic() < end:
        time.sleep(0.01)
    x = torch.empty(128, device=device)
    copy_kernel[(1,)](x, torch.empty_like(x), BLOCK=128)
'''


@jailed
def test_a_spare_warms_beside_a_running_request(tmp_path):
    """With spares made beside requests (TRITON_INSPECTOR_SPARE=beside), the next spare is
    ready while a request still runs, and serves the request that follows it."""
    import threading

    box = Sandbox(mode="unshare", warm_up_worker=True, spare="beside")
    cache = Cache(tmp_path / "cache")
    (tmp_path / "kernel").mkdir()
    path = tmp_path / "kernel" / "waits.py"
    path.write_text(WAITS_FOR_FLAG)
    try:
        box.warm_up(complete=True)
        assert box.wait_for_spare(120)
        first: list = []
        running = threading.Thread(target=lambda: first.append(
            inspect_kernel(path, target="sm_90", sandbox=box, use_cache=False, cache=cache)))
        running.start()
        try:
            wait_until(lambda: box.served_by_spare == 1, 30, "the first request to take the spare")
            assert box.wait_for_spare(120), "no spare was made while the request ran"
            assert running.is_alive(), "the request ended before the test let it"
        finally:
            (tmp_path / "kernel" / "go").write_text("")
            running.join(120)
        assert first and first[0].error is None, first and first[0].error
        rec = served(box, KERNELS / "add.py", cache)
        assert rec.error is None, rec.error.message
        assert box.served_by_spare == 2
    finally:
        box.close()


def test_a_request_waits_for_a_spare_only_when_it_is_nearly_warm():
    """`_Spare.worth_waiting`: a request of the warming spare's kind is held for it when the spare
    should be ready sooner than a fresh fork would catch up (its last warm-up's length tells)."""
    from inspector.isolation.zygote import HOLD_FOR_SPARE, _Spare

    spare = _Spare(send=lambda message: None)
    gpu_free, native = {"spare_kind": "gpu-free"}, {"spare_kind": "native"}
    assert spare.worth_waiting(gpu_free) is None  # none warming
    spare.pid, spare.started = 12345, time.monotonic()
    assert spare.worth_waiting(gpu_free) is None  # no warm-up measured yet
    spare.warm_seconds[False] = HOLD_FOR_SPARE["gpu-free"] / 2
    until = spare.worth_waiting(gpu_free)
    assert until is not None and time.monotonic() < until < time.monotonic() + 2 * HOLD_FOR_SPARE["gpu-free"]
    assert spare.worth_waiting(native) is None  # another kind: its worker would hold no CUDA context
    assert spare.worth_waiting({"spare_kind": None}) is None  # a probe or SASS: forked at once
    spare.warm_seconds[False] = 10 * HOLD_FOR_SPARE["gpu-free"]
    assert spare.worth_waiting(gpu_free) is None  # far from warm: a fresh fork is sooner
    spare.native, spare.warm_seconds[True] = True, HOLD_FOR_SPARE["native"] / 2
    assert spare.worth_waiting(native) is not None  # natively a fork costs CUDA's start: worth more waiting
    spare.ready = True
    assert spare.worth_waiting(native) is None  # ready: it is taken, not waited for


def test_a_gpu_free_spare_warms_for_the_last_requests_target(monkeypatch):
    from inspector.worker import handler
    from inspector.hardware.targets import DEFAULT_TARGET

    warmed: list[str] = []
    monkeypatch.setattr(handler, "_warm_compile", warmed.append)
    handler.warm_spare(target="gfx942")
    handler.warm_spare(target=None)
    handler.warm_spare(target="no_such_target")
    assert warmed == ["gfx942", DEFAULT_TARGET, DEFAULT_TARGET]


def test_idle_cores_are_read_from_the_machines_cpu_times(monkeypatch):
    from inspector.isolation import zygote

    # (idle + iowait, total) jiffies over every CPU: a second of 4 cores is 400
    readings = iter([(1000, 5000), (1300, 5400), (1300, 5400), (1310, 5800)])
    monkeypatch.setattr(zygote._IdleCores, "_read", staticmethod(lambda: next(readings)))
    monkeypatch.setattr(zygote.os, "cpu_count", lambda: 4)
    cores = zygote._IdleCores()
    assert cores.enough()  # 300 of 400 idle: three cores
    cores.mark()
    assert not cores.enough()  # 10 of 400: a tenth of a core, under IDLE_CORES_FOR_SPARE


def test_no_spare_is_made_while_every_core_is_busy():
    # Spares "when idle" (the default): with every core busy (niced loops, as a test run or a build
    # keeps them), the spare due after warming is left unmade and said so. (That one is made once a
    # core is free is not asserted here: on a machine loaded from outside no core may be.)
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"], preexec_fn=lambda: os.nice(19))
            for _ in range(os.cpu_count() or 1)]
    box = Sandbox(mode="off", warm_up_worker=True, spare="idle")
    try:
        box.warm_up(complete=True, timeout=300)
        wait_until(lambda: box.spares_left_unmade >= 1, 60, "the zygote to leave a spare unmade")
        assert box.served_by_spare == 0
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
        box.close()
