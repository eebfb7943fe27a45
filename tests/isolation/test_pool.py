"""The warm worker pool (`inspector.isolation.pool`): real daemons, real GPU-free compiles.

Every test has its own $TRITON_INSPECTOR_HOME (so its own pool folder) and cache, turns the pool
on (tests/conftest.py turns it off for the rest of the suite), and stops every daemon it started
at teardown, killing any left over, so none outlives the session. Waits are on state, with deadlines.
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from inspector.testing.processes import descendants, without_spares

REPO = Path(__file__).resolve().parents[2]
ADD = str(REPO / "kernels" / "add.py")

FOREVER = '''import triton
import triton.language as tl
from inspector.isolation import progress


@triton.jit
def never(x_ptr):
    pass


progress.phase("spinning", line=12)  # what the pool streams back for active()
while True:  # the module level never ends: only a stop ends this compile
    pass
'''


def wait_for(predicate, timeout: float = 60.0, what: str = "the condition"):
    end = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > end:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(0.05)


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def daemons_of(home: str) -> list[int]:
    """Pool daemons whose environment names this home (whatever their state files say)."""
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                if b"inspector.isolation.pool" not in f.read():
                    continue
            with open(f"/proc/{entry}/environ", "rb") as f:
                if f"TRITON_INSPECTOR_HOME={home}".encode() not in f.read().split(b"\0"):
                    continue
        except OSError:
            continue
        if alive(int(entry)):
            out.append(int(entry))
    return out


@pytest.fixture
def pool_home(tmp_path, monkeypatch):
    """A home, cache and kernel folder of the test's own, the pool on (no warm-up compile, to keep
    the tests light on a small machine), and every daemon stopped afterwards."""
    from inspector.isolation import pool

    home = str(tmp_path / "home")
    monkeypatch.setenv("TRITON_INSPECTOR_HOME", home)
    monkeypatch.setenv("TRITON_INSPECTOR_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("TRITON_INSPECTOR_POOL", "1")
    monkeypatch.setenv("TRITON_INSPECTOR_POOL_IDLE", "300")
    monkeypatch.setenv("TRITON_INSPECTOR_POOL_PREWARM", "0")
    (tmp_path / "kernels").mkdir()
    yield home
    pool.stop_pools()
    for pid in daemons_of(home):
        os.kill(pid, signal.SIGKILL)
    wait_for(lambda: not daemons_of(home), 30, "the test's pool daemons to end")


def _cli_loop():
    """benchmarks/cli_loop.py, whose kernel variants (an axpy, one constant apart) these tests use."""
    spec = importlib.util.spec_from_file_location("cli_loop", REPO / "benchmarks" / "cli_loop.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def variant(folder: Path, i: int) -> str:
    """A kernel file no other call has compiled (so never a cache hit)."""
    return _cli_loop().write_variants(folder, i, 1)[0]


def cli(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "inspector", *args], cwd=REPO, env=dict(os.environ),
                          capture_output=True, text=True, timeout=timeout)


def the_pool() -> dict:
    from inspector.isolation import pool

    infos = pool.pools()
    assert len(infos) == 1, infos
    return infos[0]


def test_second_call_reuses_the_pool(pool_home, tmp_path):
    from inspector.isolation import pool_keys

    first = cli("compile", ADD, "--target", "sm_90")
    assert first.returncode == 0, first.stderr
    assert ".visible .entry add_kernel" in first.stdout
    a = the_pool()
    if a["code"] == pool_keys.code_digest():  # (unless someone edited the checkout meanwhile)
        assert a["current"] and a["key"] == pool_keys.pool_key()
    assert a["zygote_starts"] == 1 and a["served"] == 1

    second = cli("compile", variant(tmp_path / "kernels", 1), "--target", "gfx942")
    assert second.returncode == 0, second.stderr
    assert "axpy_1 on gfx942" in second.stderr and "(cached)" not in second.stderr
    b = the_pool()
    # The same daemon, the same worker manager (no second torch import): the compile was all it paid.
    assert (b["pid"], b["zygote_pid"], b["zygote_starts"]) == (a["pid"], a["zygote_pid"], 1)
    assert b["served"] == 2 and b["running"] == 0

    status = cli("pool", "status")
    assert status.returncode == 0 and a["key"] in status.stdout and "this environment's" in status.stdout


def test_private_folder_socket_and_key(pool_home, tmp_path, monkeypatch):
    from inspector.isolation import pool, pool_keys

    assert cli("compile", ADD, "--target", "gfx942").returncode == 0
    a = the_pool()
    folder = Path(pool_home) / "pool"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    sock = Path(a["socket"])
    assert stat.S_ISSOCK(sock.stat().st_mode) and stat.S_IMODE(sock.stat().st_mode) == 0o600
    for ext in ("json", "log", "lock"):
        assert stat.S_IMODE((folder / f"{a['key']}.{ext}").stat().st_mode) & 0o077 == 0

    # Another environment for the workers (a Triton variable the workers would see): another key,
    # another daemon; the first is not used.
    before = pool_keys.pool_key()
    monkeypatch.setenv("TRITON_INSPECTOR_TEST_ONLY", "1")  # the inspector's own: same key
    assert pool_keys.pool_key() == before
    monkeypatch.setenv("TRITON_ALWAYS_COMPILE", "0")
    assert pool_keys.pool_key() != before
    assert cli("compile", variant(tmp_path / "kernels", 2), "--target", "gfx942").returncode == 0
    infos = {i["key"]: i for i in pool.pools()}
    assert len(infos) == 2 and a["key"] in infos
    other = next(i for k, i in infos.items() if k != a["key"])
    assert other["pid"] != a["pid"] and other["served"] == 1 and infos[a["key"]]["served"] == 1
    assert not infos[a["key"]]["current"]


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to connect as another user")
def test_another_user_is_refused(pool_home):
    assert cli("compile", ADD, "--target", "gfx942").returncode == 0
    a = the_pool()
    folder = Path(pool_home) / "pool"
    sock = Path(a["socket"])
    # Open the way for user 65534 (the folder and socket modes are what stop it normally): the
    # daemon's peer-uid check must still refuse it.
    os.chmod(folder, 0o755)
    os.chmod(sock, 0o666)
    dirfd = os.open(folder, os.O_PATH | os.O_DIRECTORY)
    try:
        child = os.fork()
        if child == 0:  # as user 65534: connect, ask for the status, report what came back
            code = 2
            try:
                import ctypes
                import socket
                import struct

                os.setgroups([])
                os.setgid(65534)
                os.setuid(65534)
                ctypes.CDLL(None).prctl(4, 1, 0, 0, 0)  # PR_SET_DUMPABLE: /proc/self/fd stays ours
                s = socket.socket(socket.AF_UNIX)
                s.connect(f"/proc/self/fd/{dirfd}/{sock.name}")
                data = json.dumps({"op": "status"}).encode()
                s.settimeout(30)
                try:  # refused: the daemon closes the connection without a word
                    s.sendall(struct.pack(">Q", len(data)) + data)
                    code = 1 if s.recv(8) else 0
                except (BrokenPipeError, ConnectionResetError):
                    code = 0
            except BaseException as e:  # noqa: BLE001
                sys.stderr.write(f"probe: {e!r}\n")
            finally:
                os._exit(code)
        _, status = os.waitpid(child, 0)
    finally:
        os.close(dirfd)
        os.chmod(folder, 0o700)
        os.chmod(sock, 0o600)
    assert os.waitstatus_to_exitcode(status) == 0, "connected and got an answer (1) or could not connect (2)"
    assert the_pool()["served"] == 1  # still there, still serving its user


def test_concurrent_first_calls_start_one_daemon(pool_home, tmp_path):
    files = [variant(tmp_path / "kernels", i) for i in (3, 4)]
    procs = [subprocess.Popen([sys.executable, "-m", "inspector", "compile", f, "--target", "gfx942"], cwd=REPO,
                              env=dict(os.environ), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for f in files]
    for p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
        assert "not used" not in err  # neither fell back to an in-process worker
    a = the_pool()
    assert a["served"] == 2 and a["zygote_starts"] == 1
    assert len(daemons_of(pool_home)) == 1
    log = (Path(pool_home) / "pool" / f"{a['key']}.log").read_text()
    assert log.count(": pid ") == 1, log


def test_killed_or_stopped_pool_is_restarted(pool_home, tmp_path):
    assert cli("compile", ADD, "--target", "gfx942").returncode == 0
    a = the_pool()
    zygote_tree = descendants(a["pid"])
    assert zygote_tree
    os.kill(a["pid"], signal.SIGKILL)
    wait_for(lambda: not alive(a["pid"]) and not any(alive(p) for p in zygote_tree), 30,
             "the killed daemon and its worker manager to be gone")

    again = cli("compile", variant(tmp_path / "kernels", 5), "--target", "gfx942")
    assert again.returncode == 0, again.stderr
    assert "not used" not in again.stderr
    b = the_pool()
    assert b["pid"] != a["pid"] and b["served"] == 1

    stop = cli("pool", "stop")
    assert stop.returncode == 0 and f"stopped pool {b['key']}" in stop.stdout
    assert not alive(b["pid"]) and not daemons_of(pool_home)
    assert cli("pool", "status").stdout.strip().endswith("no pool running")

    third = cli("compile", variant(tmp_path / "kernels", 6), "--target", "gfx942")
    assert third.returncode == 0, third.stderr
    c = the_pool()
    assert c["pid"] not in (a["pid"], b["pid"])


def _request_processes(info: dict, baseline: set[int]) -> set[int]:
    return {p for p in without_spares(info["pid"]) - baseline if alive(p)}


def test_cancel_and_timeout_kill_the_request_in_the_pool(pool_home, tmp_path):
    from inspector.compile.api import inspect_kernel
    from inspector.isolation.pool import PoolClient
    from inspector.isolation.selection import default_sandbox

    box = default_sandbox()
    assert isinstance(box, PoolClient)
    box.warm_up()
    info = the_pool()
    baseline = descendants(info["pid"])  # the worker manager's own processes
    forever = tmp_path / "kernels" / "forever.py"
    forever.write_text(FOREVER)

    # Cancel from the caller: the event set.
    cancel = threading.Event()
    out: dict = {}
    t = threading.Thread(target=lambda: out.setdefault("rec", inspect_kernel(str(forever), target="sm_90",
                                                                             cancel=cancel)))
    t.start()
    running = wait_for(lambda: [r for r in box.active() if r["phase"]], 60, "the request's phase in active()")
    assert (running[0]["phase"], running[0]["line"]) == ("spinning", 12) and running[0]["seconds"] >= 0
    wait_for(lambda: _request_processes(info, baseline), 30, "the request's processes in the pool")
    cancel.set()
    t.join(60)
    assert not t.is_alive()
    assert out["rec"].error.kind == "cancelled"
    assert not _request_processes(info, baseline)  # gone by the time the answer came
    assert box.active() == []

    # The timeout, enforced in the pool, with where it struck.
    rec = inspect_kernel(str(forever), target="sm_90", timeout=3, use_cache=False)
    assert rec.error.kind == "timeout", rec.error
    assert rec.error.line in (12, 13), rec.error
    assert not _request_processes(info, baseline)

    # The client killed: its socket closes, the pool kills the request.
    p = subprocess.Popen([sys.executable, "-m", "inspector", "compile", str(forever), "--target", "gfx942"],
                         cwd=REPO, env=dict(os.environ), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: the_pool()["running"] == 1 and _request_processes(info, baseline), 60,
                 "the CLI's request running in the pool")
    finally:
        p.kill()
        p.wait()
    wait_for(lambda: the_pool()["running"] == 0 and not _request_processes(info, baseline), 30,
             "the killed client's request to be stopped")
    assert the_pool()["pid"] == info["pid"]


def test_idle_pool_stops_itself(pool_home, monkeypatch):
    monkeypatch.setenv("TRITON_INSPECTOR_POOL_IDLE", "2")
    assert cli("compile", ADD, "--target", "gfx942").returncode == 0
    from inspector.isolation import pool

    infos = pool.pools()
    assert len(infos) == 1 and infos[0]["idle_limit"] == 2
    pid, key = infos[0]["pid"], infos[0]["key"]
    wait_for(lambda: not alive(pid), 60, "the idle daemon to stop")
    assert pool.pools() == [] and not daemons_of(pool_home)
    log = (Path(pool_home) / "pool" / f"{key}.log").read_text()
    assert "stopping (idle for 2 s)" in log
    assert not (Path(pool_home) / "pool" / f"{key}.sock").exists()


def test_pool_off_compiles_in_process(pool_home, monkeypatch):
    from inspector.isolation.sandbox import Sandbox
    from inspector.isolation.selection import default_sandbox

    monkeypatch.setenv("TRITON_INSPECTOR_POOL", "0")
    assert isinstance(default_sandbox(), Sandbox)
    out = cli("compile", ADD, "--target", "gfx942")
    assert out.returncode == 0, out.stderr
    assert not (Path(pool_home) / "pool").exists() and not daemons_of(pool_home)


def test_unreachable_pool_falls_back_in_process(pool_home, tmp_path, monkeypatch):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    monkeypatch.setenv("TRITON_INSPECTOR_HOME", str(blocker / "home"))
    out = cli("compile", ADD, "--target", "gfx942")
    assert out.returncode == 0, out.stderr
    assert out.stderr.count("the warm worker pool is not used") == 1
    assert "add_kernel on gfx942" in out.stderr


def test_a_live_daemon_that_does_not_answer_yet_is_waited_for_not_started_again(pool_home):
    """A daemon holding its lock but not yet listening (starting, or its backlog full under load)
    is waited for: a second daemon would find the lock held and exit, and the caller would give up
    on the pool for a minute (what benchmarks/soak.py found)."""
    import fcntl
    import socket

    from inspector.isolation import pool
    from inspector.isolation.pool_keys import pool_dir, pool_key, pool_paths, socket_address

    paths = pool_paths(pool_dir(), pool_key(os.path.abspath(sys.executable)))
    lock = os.open(paths["lock"], os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)  # "the daemon": its lock held, no socket yet
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)

    def start_listening_later():
        time.sleep(1.0)
        with socket_address(paths["sock"]) as addr:
            listener.bind(addr)
        listener.listen(4)

    threading.Thread(target=start_listening_later, daemon=True).start()
    try:
        conn = pool.connect()
        conn.close()
        assert daemons_of(pool_home) == []  # no second daemon was spawned
    finally:
        listener.close()
        fcntl.flock(lock, fcntl.LOCK_UN)
        os.close(lock)
