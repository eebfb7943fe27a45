"""Attacks on the sandbox, made by real kernel files from their example() or at import.

Each kernel below tries what a hostile (or careless) user's file could: poison the cache, forge or
kill a concurrent request, outlive its compile (children, setsid daemons), survive the server or
the worker manager, write outside its jail, read the server's secrets, reach the network, race the
source between hashing and compiling, fork-bomb, blow the memory cap with several processes, raise
KeyboardInterrupt, hang. Each must hold. A kernel reports what it managed to do by raising
"LEAKED: ...", so a clean compile means nothing leaked.

Without user namespaces the sandbox cannot hold and these tests are skipped, unless
INSPECTOR_REQUIRE_SANDBOX=1 (CI), which makes that a failure. State is polled, never slept on.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
import uuid
from pathlib import Path

import pytest

from aborting_kernel import compiler_death
from paths import KERNELS, REPO
from inspector.testing.processes import without_spares
from inspector.compile.api import inspect_kernel, sandbox_status
from inspector.compile.cache import ENTRY_FORMAT, Cache, default_cache_dir, flush
from inspector.isolation.exposure import isolation
from inspector.isolation.sandbox import Sandbox

STATUS = isolation()
REQUIRED = os.environ.get("INSPECTOR_REQUIRE_SANDBOX") == "1"
pytestmark = pytest.mark.skipif(not STATUS["isolated"] and not REQUIRED,
                                reason=f"no sandbox on this machine: {STATUS['missing']}")
SECRET_NAME = "INSPECTOR_ATTACK_SECRET"
SECRET = "s3cret-" + uuid.uuid4().hex
TOKEN = uuid.uuid4().hex[:12]  # marks this run's files and processes

TEMPLATE = '''
import os, sys, time, signal, socket, subprocess, glob, json
import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


def attack():
    leaks = []
{body}
    return leaks


def example(device):
    leaks = attack()
    if leaks:
        raise RuntimeError("LEAKED: " + " | ".join(map(str, leaks)))
    x = torch.empty(4096, device=device)
    add_kernel[(4,)](x, x, x, 4096, BLOCK={block})
'''


def kernel(folder: Path, name: str, body: str, block: int = 1024, **values: object) -> Path:
    """A kernel file whose example() runs `body` (which appends to `leaks`), then launches."""
    folder.mkdir(parents=True, exist_ok=True)
    body = textwrap.indent(textwrap.dedent(body).strip("\n"), "    ")
    for k, v in values.items():
        body = body.replace("{" + k + "}", repr(v))
    path = folder / f"{name}.py"
    path.write_text(TEMPLATE.format(body=body, block=block))
    return path


def clean(rec) -> None:
    assert rec.error is None, rec.error.short() if rec.error else ""


def pids_with_cmdline(marker: str) -> list[int]:
    """Host processes whose command line holds `marker`."""
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as f:
                    if marker.encode() in f.read():
                        out.append(int(entry))
            except OSError:
                pass
    return out


def descendants(root: int) -> list[int]:
    """Every live process below `root` (by parent pid)."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    stat = f.read()
                parents[int(entry)] = int(stat[stat.rindex(")") + 2:].split()[1])
            except (OSError, ValueError):
                pass
    out, frontier = [], [root]
    while frontier:
        kids = [p for p, pp in parents.items() if pp in frontier]
        out += kids
        frontier = kids
    return out


def argv0(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().split(b"\0")[0].decode(errors="replace")
    except OSError:
        return ""


def parent(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
        return int(stat[stat.rindex(")") + 2:].split()[1])
    except (OSError, ValueError):
        return 0


def zygote_of(box: Sandbox) -> int:
    """The worker manager's host pid (under bwrap, the python below bwrap's processes)."""
    pid = box._proc.pid
    while argv0(pid).endswith("bwrap"):
        pid = next(p for p in descendants(pid) if not argv0(p).endswith("bwrap"))
    return pid


def wait_until(predicate, timeout: float = 10.0, what: str = "") -> None:
    end = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < end, f"gave up after {timeout} s waiting for {what}"
        time.sleep(0.05)


# Under bubblewrap where it is installed, and also without it (what a machine without bwrap gets).
MODES = [STATUS["mode"]] + (["unshare"] if STATUS["mode"] == "bwrap" else [])


@pytest.fixture(scope="module", params=MODES)
def mode(request):
    if REQUIRED and not STATUS["isolated"]:
        pytest.fail(f"INSPECTOR_REQUIRE_SANDBOX=1 but compiles cannot be sandboxed here: {STATUS['missing']}")
    return request.param


# Each attack on a request forked afresh in each mode, and on one a warm spare served (the
# default once a worker manager is warm; `inspector.isolation.zygote`).
BOXES = [(m, False) for m in MODES] + [(MODES[0], True)]


@pytest.fixture(scope="module", params=BOXES, ids=[f"{m}-{'spare' if s else 'forked'}" for m, s in BOXES])
def warm_box(request):
    """A sandbox started while the server holds a secret in its environment."""
    if REQUIRED and not STATUS["isolated"]:
        pytest.fail(f"INSPECTOR_REQUIRE_SANDBOX=1 but compiles cannot be sandboxed here: {STATUS['missing']}")
    mode, spare = request.param
    os.environ[SECRET_NAME] = SECRET
    sandbox = Sandbox(mode=mode, warm_up_worker=spare, spare=spare)
    assert sandbox.isolation()["isolated"]
    sandbox.warm_up(complete=spare)
    yield sandbox
    sandbox.close()
    os.environ.pop(SECRET_NAME, None)


@pytest.fixture
def box(warm_box):
    """The module's sandbox; with spares, the test's first request is served by one."""
    if not warm_box._spare:
        yield warm_box
        return
    assert warm_box.wait_for_spare(120), "no spare was made ready"
    served = warm_box.served_by_spare
    yield warm_box
    wait_until(lambda: warm_box.served_by_spare > served, 10, "the test's first request to be a spare's")


def test_status_says_isolated():
    status = sandbox_status()
    assert status["isolated"] and status["how"], status
    assert set(status) >= {"isolated", "how", "missing", "mode"}


# ---- results only through the trusted side ------------------------------------------------------

def test_cache_poisoning_from_a_kernel_fails(box, tmp_path):
    cache = Cache()  # the default folder ($TRITON_INSPECTOR_CACHE), which the jail hides
    victim = inspect_kernel(KERNELS / "add.py", target="sm_90", sandbox=box, cache=cache)
    clean(victim)
    flush()  # the entry is written off the caller's path: read the file once it is there
    entry = cache._path(victim.cache_key)
    before = entry.read_bytes()
    forged = {"format": ENTRY_FORMAT, "key": victim.cache_key,
              "value": {**json.loads(before)["value"], "stages": {"ptx": "FORGED"}}}
    files = sorted(default_cache_dir().rglob("*"))
    # Writes that land in the jail's private /tmp are harmless: the host's folder is what counts.
    path = kernel(tmp_path / "attacker", "poison", """
        root = {root}
        if os.path.exists({entry}):
            leaks.append("sees the victim's entry")
        for name in glob.glob(root + "/**/*.json", recursive=True):
            try:
                with open(name, "w") as f:
                    f.write({forged})
            except OSError:
                pass
        try:
            os.makedirs(os.path.dirname({entry}), exist_ok=True)
            with open({entry}, "w") as f:
                f.write({forged})
            with open(os.path.join(root, "ab", "ab" * 32 + ".json"), "w") as f:
                f.write({forged})
        except OSError:
            pass
    """, root=str(default_cache_dir()), entry=str(entry), forged=json.dumps(forged))
    attack = inspect_kernel(path, target="sm_90", sandbox=box, cache=cache)
    clean(attack)
    flush()
    assert entry.read_bytes() == before
    own = cache._path(attack.cache_key)
    assert set(default_cache_dir().rglob("*")) - set(files) <= {own, own.parent}  # only its own entry, by us
    again = inspect_kernel(KERNELS / "add.py", target="sm_90", sandbox=box, cache=cache)
    assert again.cached and again.stages["ptx"] == victim.stages["ptx"] != "FORGED"


def test_planted_or_misfiled_cache_entries_are_misses(box, tmp_path):
    """Were anything ever to write the cache folder, an entry still has to carry its own key."""
    cache = Cache(tmp_path / "cache")
    rec = inspect_kernel(KERNELS / "add.py", target="sm_90", sandbox=box, cache=cache)
    clean(rec)
    flush()  # written off the caller's path
    path = cache._path(rec.cache_key)
    good = json.loads(path.read_text())
    bad = [
        {**good, "key": "0" * 64},  # another key's entry copied here
        {**good, "format": ENTRY_FORMAT - 1},
        good["value"],  # a bare record, as the old cache stored it
        {**good, "value": "not a record"},
        {**good, "value": {**good["value"], "source": "something else"}},  # a record of another text
        {**good, "value": {**good["value"], "cache_key": "0" * 64}},
    ]
    for entry in bad:
        path.write_text(json.dumps(entry))
        again = inspect_kernel(KERNELS / "add.py", target="sm_90", sandbox=box, cache=cache)
        assert not again.cached and again.error is None, entry.keys()
        flush()
        assert json.loads(path.read_text())["key"] == rec.cache_key  # the miss rewrote it
    path.write_text("{ torn")
    assert cache.get(rec.cache_key) is None
    assert not inspect_kernel(KERNELS / "add.py", target="sm_90", sandbox=box, cache=cache).cached


def test_a_request_cannot_see_kill_or_forge_a_sibling(box, tmp_path):
    victim_dir = tmp_path / "victim"
    victim = kernel(victim_dir, "victim", """
        import inspector.isolation.progress
        inspector.isolation.progress.phase("victim-waiting")
        end = time.monotonic() + 60
        while not os.path.exists({go}) and time.monotonic() < end:
            time.sleep(0.02)
    """, block=256, go=str(victim_dir / "go"))
    attacker = kernel(tmp_path / "attacker", "attacker", """
        me = os.getpid()
        others = [int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) not in (me, 1)]
        if others:
            leaks.append("sees processes " + str(others))
        if me != 2:  # not the first process under its own init: do not fire at the host
            leaks.append("not in a PID namespace of its own (pid %d)" % me)
            return leaks
        for pid in range(2, 5000):
            if pid == me:
                continue
            try:
                os.kill(pid, signal.SIGKILL)
                leaks.append("killed " + str(pid))
            except OSError:
                pass
        for pattern in ("/proc/*/fd/*", "/tmp/inspector-sandbox-*/*", "/dev/shm/*"):
            for name in glob.glob(pattern):
                if name.startswith(("/proc/%d/" % me, "/proc/1/", "/proc/self/", "/proc/thread-self/")):  # its own
                    continue
                try:
                    with open(name, "w") as f:
                        f.write('{"stages": {"ptx": "FORGED"}}')
                    leaks.append("wrote " + name)
                except OSError:
                    pass
    """)
    out = {}
    thread = threading.Thread(target=lambda: out.update(victim=inspect_kernel(
        victim, target="sm_90", sandbox=box, use_cache=False, timeout=120)))
    thread.start()
    try:
        wait_until(lambda: any(a["phase"] == "victim-waiting" for a in box.active()), 60, "the victim to start")
        clean(inspect_kernel(attacker, target="sm_90", sandbox=box, use_cache=False))
    finally:
        (victim_dir / "go").write_text("go")
        thread.join(120)
    rec = out["victim"]
    clean(rec)
    assert "tt.make_range {end = 256 : i32" in rec.stages["ttir"] and "FORGED" not in json.dumps(rec.stages)


# ---- nothing outlives a compile, the server or the worker manager -------------------------------

def test_children_and_setsid_daemons_die_with_a_successful_compile(box, tmp_path):
    marker = f"9{int(TOKEN[:6], 16) % 10**6:06d}"
    path = kernel(tmp_path, "daemons", """
        subprocess.Popen(["sleep", {m1}])
        subprocess.Popen(["sleep", {m2}], start_new_session=True)
        if os.fork() == 0:  # the classic daemon: fork, setsid, fork again
            os.setsid()
            if os.fork() == 0:
                os.execvp("sleep", ["sleep", {m3}])
            os._exit(0)
    """, m1=marker + "1", m2=marker + "2", m3=marker + "3")
    clean(inspect_kernel(path, target="sm_90", sandbox=box, use_cache=False))
    wait_until(lambda: not pids_with_cmdline(f"sleep\0{marker}"), 5, "the kernel's processes to die")
    assert pids_with_cmdline(f"sleep\0{marker}") == []


SERVER = r"""
import sys
sys.path.insert(0, {repo!r})
from inspector.compile.api import inspect_kernel
from inspector.isolation.sandbox import Sandbox
box = Sandbox(warm_up_worker=False)
rec = inspect_kernel(sys.argv[1], target="sm_90", sandbox=box, use_cache=False, timeout=300)
print(rec.error.kind if rec.error else "compiled", flush=True)
rec = inspect_kernel({add!r}, target="sm_90", sandbox=box, use_cache=False)
print(rec.error.kind if rec.error else "compiled", flush=True)
"""


def _hanging_kernel(folder: Path, marker: str) -> Path:
    return kernel(folder, "hang", """
        subprocess.Popen(["sleep", {m1}])
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                os.execvp("sleep", ["sleep", {m2}])
            os._exit(0)
        while True:
            time.sleep(0.05)
    """, m1=marker + "1", m2=marker + "2")


@pytest.mark.parametrize("victim", ["server", "worker manager"])
def test_nothing_survives_the_death_of(victim, mode, tmp_path):
    marker = f"8{int(uuid.uuid4().hex[:6], 16) % 10**6:06d}"
    path = _hanging_kernel(tmp_path, marker)
    code = SERVER.format(repo=str(REPO), add=str(KERNELS / "add.py"))
    server = subprocess.Popen([sys.executable, "-c", code, str(path)], stdout=subprocess.PIPE, text=True, cwd=REPO,
                              env={**os.environ, "TRITON_INSPECTOR_SANDBOX": mode})
    try:
        wait_until(lambda: len(pids_with_cmdline(f"sleep\0{marker}")) == 2, 90, "the kernel's processes to start")
        tree = descendants(server.pid)  # bwrap, the worker manager, the request's processes
        pythons = {p for p in pids_with_cmdline("inspector.isolation.zygote") if not argv0(p).endswith("bwrap")}
        zygote = [p for p in tree if p in pythons and parent(p) not in pythons]
        assert len(zygote) == 1, zygote
        os.kill(server.pid if victim == "server" else zygote[0], signal.SIGKILL)
        wait_until(lambda: not pids_with_cmdline(f"sleep\0{marker}"), 10, "the kernel's processes to die")
        wait_until(lambda: not [p for p in tree if os.path.exists(f"/proc/{p}")], 10,
                   f"every process below the {victim} to die")
        if victim == "worker manager":  # the server survives, says so, and compiles again
            out, _ = server.communicate(timeout=120)
            assert out.split() == ["crashed", "compiled"], out
    finally:
        if server.poll() is None:
            server.kill()
        server.wait()
    assert pids_with_cmdline(f"sleep\0{marker}") == []


# ---- the jail's walls ---------------------------------------------------------------------------

def test_no_writes_outside_the_jail(box, tmp_path):
    host_tmp = tmp_path / "host-tmp"
    host_tmp.mkdir()
    project = tmp_path / "project"
    targets = [Path.home() / f".inspector-attack-{TOKEN}", REPO / f"inspector-attack-{TOKEN}",
               host_tmp / "written", project / "written", default_cache_dir() / f"attack-{TOKEN}",
               Path(f"/tmp/inspector-attack-{TOKEN}"), Path(f"/var/tmp/inspector-attack-{TOKEN}"),
               Path(f"/dev/shm/inspector-attack-{TOKEN}")]
    path = kernel(project, "writer", """
        for name in {targets}:
            try:
                os.makedirs(os.path.dirname(name), exist_ok=True)
                with open(name, "w") as f:
                    f.write("escaped")
            except OSError:
                pass
    """, targets=[str(t) for t in targets])
    try:
        clean(inspect_kernel(path, target="sm_90", sandbox=box, use_cache=False))
        assert [t for t in targets if t.exists()] == []
    finally:
        for t in targets:
            if t.exists():
                t.unlink()


def test_no_secrets_home_or_other_projects_in_view(box, tmp_path):
    secret_file = tmp_path / "elsewhere" / "credentials"
    secret_file.parent.mkdir()
    secret_file.write_text(SECRET)
    home_secret = Path.home() / f".inspector-secret-{TOKEN}"
    home_secret.write_text(SECRET)
    path = kernel(tmp_path / "project", "spy", """
        secret = {secret}
        for k, v in os.environ.items():
            if secret in v or k == {var}:
                leaks.append("environment " + k)
        for name in glob.glob("/proc/*/environ") + glob.glob("/proc/*/cmdline"):
            try:
                if secret.encode() in open(name, "rb").read():
                    leaks.append(name)
            except OSError:
                pass
        for name in ({file}, {home_file}, {home} + "/.ssh", {home} + "/.bashrc", {cache}):
            if os.path.exists(name):
                leaks.append("sees " + name)
    """, secret=SECRET, var=SECRET_NAME, file=str(secret_file), home_file=str(home_secret),
        home=str(Path.home()), cache=str(default_cache_dir()))
    try:
        clean(inspect_kernel(path, target="sm_90", sandbox=box, use_cache=False))
    finally:
        home_secret.unlink()


def test_no_network(box, tmp_path):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.setblocking(False)
    abstract = socket.socket(socket.AF_UNIX)
    abstract.bind(f"\0inspector-attack-{TOKEN}")
    abstract.listen(8)
    abstract.setblocking(False)
    path = kernel(tmp_path, "net", """
        for family, address in ((socket.AF_INET, ("127.0.0.1", {port})), (socket.AF_INET, ("1.1.1.1", 53)),
                                (socket.AF_UNIX, {abstract})):
            s = socket.socket(family)
            s.settimeout(3)
            try:
                s.connect(address)
                leaks.append("connected to " + str(address))
            except OSError:
                pass
            finally:
                s.close()
    """, port=listener.getsockname()[1], abstract=f"\0inspector-attack-{TOKEN}")
    try:
        clean(inspect_kernel(path, target="sm_90", sandbox=box, use_cache=False))
        for s in (listener, abstract):
            with pytest.raises(BlockingIOError):
                s.accept()
    finally:
        listener.close()
        abstract.close()


# ---- what is compiled is what was hashed ---------------------------------------------------------

def test_source_changed_between_hashing_and_compiling(box, tmp_path):
    path = kernel(tmp_path, "toctou", "pass", block=256)
    first = path.read_text()
    second = first.replace("BLOCK=256", "BLOCK=512")
    real_run = box.run

    def run_after_an_edit(request, *a, **kw):
        path.write_text(second)  # the file changes after inspect_kernel read and hashed it
        return real_run(request, *a, **kw)

    cache = Cache(tmp_path / "cache")
    box.run = run_after_an_edit
    try:
        rec = inspect_kernel(path, target="sm_90", sandbox=box, cache=cache)
    finally:
        del box.run
    clean(rec)
    assert rec.source == first
    assert "tt.make_range {end = 256 : i32" in rec.stages["ttir"]
    stored = cache.get(rec.cache_key)
    assert stored["source"] == first and "end = 256" in stored["stages"]["ttir"]
    now = inspect_kernel(path, target="sm_90", sandbox=box, cache=cache)
    assert not now.cached and now.cache_key != rec.cache_key and "end = 512" in now.stages["ttir"]
    assert now.source == second


# ---- limits, labelled truly ----------------------------------------------------------------------

def test_fork_bomb_is_named_and_leaves_nothing(box, tmp_path):
    path = kernel(tmp_path, "bomb", """
        while True:
            try:
                os.fork()
            except OSError:
                pass
    """)
    # The process limit, not the time limit, must stop it (the generous timeout only keeps a broken
    # limit from hanging the suite on a loaded machine).
    rec = inspect_kernel(path, target="sm_90", sandbox=box, use_cache=False, timeout=180)
    assert rec.error is not None and rec.error.kind == "processes", rec.error and rec.error.short()
    assert "fork bomb" in rec.error.message
    wait_until(lambda: not without_spares(zygote_of(box)), 10, "the bomb's processes to die")


def test_memory_cap_covers_every_process(box, tmp_path):
    marker = f"7{int(uuid.uuid4().hex[:6], 16) % 10**6:06d}"
    path = kernel(tmp_path, "hogs", """
        for i in range(4):
            hog = "import time; b = b'x' * (400 * 2**20); time.sleep(" + {m} + ")"
            subprocess.Popen([sys.executable, "-c", hog], start_new_session=True)
        while True:
            time.sleep(0.05)
    """, m=marker)
    rec = inspect_kernel(path, target="sm_90", sandbox=box, use_cache=False, timeout=60, memory=1 << 30)
    assert rec.error is not None and rec.error.kind == "memory", rec.error and rec.error.short()
    wait_until(lambda: not pids_with_cmdline(marker), 5, "the memory hogs to die")


def test_a_compiler_that_dies_is_reported_with_its_last_words(box, tmp_path):
    rec = compiler_death(tmp_path, box)
    assert rec.error is not None and rec.error.kind == "crashed", rec.error and rec.error.short()
    assert "SIGABRT" in rec.error.message
    # what LLVM printed before abort(), which died with the worker before
    assert "compiler's last output" in rec.error.message
    assert "number of input constraints does not match" in rec.error.message, rec.error.message


def test_keyboard_interrupt_is_the_users_exception(box, tmp_path):
    path = kernel(tmp_path, "interrupt", "raise KeyboardInterrupt('stop')")
    rec = inspect_kernel(path, target="sm_90", sandbox=box, use_cache=False)
    assert rec.error is not None and rec.error.kind not in ("crashed", "internal"), rec.error
    assert "KeyboardInterrupt" in rec.error.message
    lines = path.read_text().splitlines()
    assert rec.error.line == next(i for i, text in enumerate(lines, 1) if "KeyboardInterrupt" in text)


@pytest.mark.parametrize("where", ["example", "import"])
def test_a_timeout_names_where_it_struck(box, tmp_path, where):
    if where == "example":  # the loop is in attack(), which example() calls
        path = kernel(tmp_path, "slow", "while True:\n    time.sleep(0.01)")
        expect = "the user's"
    else:
        path = tmp_path / "slow_import.py"
        path.write_text(TEMPLATE.format(body="    pass", block=1024) + "\nwhile True:\n    time.sleep(0.01)\n")
        expect = "top level"
    line = next(i for i, l in enumerate(path.read_text().splitlines(), 1) if "time.sleep(0.01)" in l)
    rec = inspect_kernel(path, target="sm_90", sandbox=box, use_cache=False, timeout=3)
    assert rec.error is not None and rec.error.kind == "timeout"
    assert expect in rec.error.message and f"line {line}" in rec.error.message, rec.error.message
    assert rec.error.line == line


def test_cancel_stops_the_compile_and_everything_it_started(box, tmp_path):
    marker = f"6{int(uuid.uuid4().hex[:6], 16) % 10**6:06d}"
    path = _hanging_kernel(tmp_path, marker)
    cancel = threading.Event()
    out = {}
    thread = threading.Thread(target=lambda: out.update(rec=inspect_kernel(
        path, target="sm_90", sandbox=box, use_cache=False, timeout=120, cancel=cancel)))
    thread.start()
    wait_until(lambda: len(pids_with_cmdline(f"sleep\0{marker}")) == 2, 60, "the kernel's processes to start")
    t0 = time.monotonic()
    cancel.set()
    thread.join(30)
    assert out["rec"].error.kind == "cancelled" and time.monotonic() - t0 < 5
    assert pids_with_cmdline(f"sleep\0{marker}") == []


# ---- benchmarks: the user's file runs jailed there too --------------------------------------------

BENCH_SPY = '''
import glob, os, socket
import torch
import triton
import triton.language as tl


@triton.jit
def double(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, 2 * tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def spy():
    leaks = []
    for name in {seen!r}:
        if os.path.exists(name):
            leaks.append("sees " + name)
    for k, v in os.environ.items():
        if {secret!r} in v:
            leaks.append("environment " + k)
    for name in {written!r}:
        try:
            with open(name, "w") as f:
                f.write("escaped")
        except OSError:
            pass
    s = socket.socket()
    s.settimeout(3)
    try:
        s.connect(("127.0.0.1", {port}))
        leaks.append("connected")
    except OSError:
        pass
    finally:
        s.close()
    return leaks


def launch(x):
    out = torch.empty_like(x)
    double[(triton.cdiv(x.numel(), 256),)](x, out, x.numel(), BLOCK=256)
    return out


def make_inputs(size, device):
    leaks = spy()
    if leaks:
        raise RuntimeError("LEAKED: " + " | ".join(leaks))
    return (torch.randn(size, device=device),)


def reference(x):
    return 2 * x


SIZES = [1 << 12]
TEST_SIZES = [1000]
'''


@pytest.mark.skipif(STATUS["mode"] != "bwrap", reason="benchmarks are jailed through bubblewrap")
def test_a_benchmark_runs_the_users_file_jailed(tmp_path):
    """`inspector.bench` starts a fresh interpreter (CUDA must not be forked): it gets the same
    walls as a compile: no home, cache or other projects in view, no server secrets, no writes
    outside, no network."""
    from inspector.bench import run_benchmark

    os.environ[SECRET_NAME] = SECRET
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.setblocking(False)
    elsewhere = tmp_path / "elsewhere" / "credentials"
    elsewhere.parent.mkdir()
    elsewhere.write_text(SECRET)
    home_secret = Path.home() / f".inspector-bench-secret-{TOKEN}"
    home_secret.write_text(SECRET)
    written = [Path.home() / f".inspector-bench-attack-{TOKEN}", tmp_path / "project" / "written",
               default_cache_dir() / f"bench-attack-{TOKEN}", Path(f"/tmp/inspector-bench-attack-{TOKEN}")]
    path = tmp_path / "project" / "spy_bench.py"
    path.parent.mkdir()
    path.write_text(BENCH_SPY.format(seen=[str(elsewhere), str(home_secret), str(default_cache_dir())],
                                     secret=SECRET, written=[str(w) for w in written],
                                     port=listener.getsockname()[1]))
    try:
        result = run_benchmark(str(path), check_only=True, interpret=True, vs=(), largest_only=True)
        assert result.error is None, result.error
        points = [p for s in result.sweeps for p in s.points]
        assert points and points[0].check("triton") and points[0].check("triton").ok, result  # it ran: the walls did not stop the work
        assert [w for w in written if w.exists()] == []
        with pytest.raises(BlockingIOError):
            listener.accept()
    finally:
        os.environ.pop(SECRET_NAME, None)
        home_secret.unlink()
        for w in written:
            if w.exists():
                w.unlink()


def test_a_kernel_file_lying_directly_in_tmp_compiles(box):
    """Its folder is /tmp: shown alone, it must not cover the request's private /tmp."""
    path = Path(f"/tmp/inspector-direct-{TOKEN}.py")
    path.write_text((KERNELS / "add.py").read_text())
    try:
        clean(inspect_kernel(path, target="sm_90", sandbox=box, use_cache=False))
    finally:
        path.unlink()
