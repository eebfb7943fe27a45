"""Hostile input, limits and concurrency, through the library and the CLI (the app has its own).

Every generated bad input (tests/support/fuzz_cases.py) must come back as a clear error record with the
right kind and, where one exists, the file and line; nothing may crash the caller, and the next
good compile must work.
"""

from __future__ import annotations

import collections
import json
import os
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import fuzz_cases
from paths import KERNELS, REPO, cli_environment
from inspector.compile.api import inspect_kernel
from inspector.compile.cache import Cache
from inspector.isolation.sandbox import Limits, SandboxError

CASES = fuzz_cases.all_cases()
OUTCOMES: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
ADD = KERNELS / "add.py"


def write_case(tmp_path: Path, case: fuzz_cases.Case) -> Path:
    path = tmp_path / f"{case.name}.py"
    if isinstance(case.source, bytes):
        path.write_bytes(case.source)
    else:
        path.write_text(case.source)
    return path


def check_error(case: fuzz_cases.Case, err, path: Path) -> None:
    assert err is not None, f"{case.name}: compiled, but should fail with {case.kinds}"
    assert err.kind in case.kinds, f"{case.name}: got {err.kind}: {err.message[:300]}"
    assert err.message.strip(), case.name
    if case.line is not None:
        assert err.line == case.line, f"{case.name}: line {err.line}, expected {case.line}: {err.message[:300]}"
        assert err.file == str(path)
    if case.message:
        assert case.message in err.message or case.message in json.dumps(err.details), (case.name, err.message[:300])


def _sleepers() -> set[int]:
    pids = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as f:
                    if f.read() == b"sleep\x001000\x00":
                        pids.add(int(entry))
            except OSError:
                pass
    return pids


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_fuzz_library(case, tmp_path, sandbox):
    path = write_case(tmp_path, case)
    before = _sleepers()
    t0 = time.monotonic()
    rec = inspect_kernel(path, kernel=case.kernel, target=case.target, args=case.args, consts=case.consts,
                         options=case.options, autotune_index=case.autotune_index, timeout=case.timeout,
                         memory=case.memory, sandbox=sandbox, use_cache=False)
    elapsed = time.monotonic() - t0
    OUTCOMES[case.name.split("-")[0]][rec.error.kind if rec.error else "compiled"] += 1
    if case.kinds == ("stood_in",):  # compiled; the missing module stood in, named with its line
        assert rec.error is None and [(s["module"], s["line"]) for s in rec.stood_in] == \
            [("a_module_that_does_not_exist", case.line)], (case.name, rec.error, rec.stood_in)
        assert case.message in rec.stopped_note() and f"line {case.line}" in rec.stopped_note()
        return
    check_error(case, rec.error, path)
    if case.kinds == ("timeout",):
        assert elapsed < case.timeout + 15
    if case.name == "hang-child-process":
        time.sleep(0.5)
        assert not (_sleepers() - before), "a process the kernel file started survived the timeout"


def test_fuzz_count_and_table(tmp_path):
    """At least 200 inputs, and the outcome table (kind of error per input category) on record."""
    assert len(CASES) >= 200
    rows = ["| inputs | count | outcome |", "|---|---|---|"]
    for category in sorted(OUTCOMES):
        counts = OUTCOMES[category]
        rows.append(f"| {category} | {sum(counts.values())} | "
                    + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) + " |")
    table = "\n".join(rows)
    out = REPO / "test-artifacts"
    out.mkdir(exist_ok=True)
    (out / "fuzz-library.md").write_text(table + "\n")
    print(table)


def test_good_compile_after_the_storm(sandbox):
    rec = inspect_kernel(ADD, target="sm_90", sandbox=sandbox, use_cache=False)
    assert rec.error is None and "ld.global.v4.b32" in rec.stages["ptx"]


def test_megabyte_file_compiles(tmp_path, sandbox):
    path = tmp_path / "big.py"
    path.write_text(fuzz_cases.megabyte_ok())
    assert path.stat().st_size > 1_000_000
    rec = inspect_kernel(path, target="sm_90", sandbox=sandbox, use_cache=False)
    assert rec.error is None, rec.error and rec.error.short()


CLI_CASES = [c for c in CASES if c.name in {
    "syntax-unbalanced-L22", "import-zero-L15", "example-too-many", "example-no-constexpr", "compile-undefined-op",
    "block-1073741824", "smem-sm_86", "arg-unknown-m", "target-unknown", "empty", "garbage-0",
    "process-import-kill", "hang-import-loop", "dtype-fp8-sm80"}]


@pytest.mark.parametrize("case", CLI_CASES, ids=lambda c: c.name)
def test_fuzz_cli(case, tmp_path):
    path = write_case(tmp_path, case)
    cmd = [sys.executable, "-m", "inspector", "compile", str(path), "--json", "--target", case.target,
           "--timeout", str(case.timeout), "--no-cache"]
    for flag, values in (("--arg", case.args), ("--const", case.consts), ("--option", case.options)):
        for k, v in values.items():
            cmd += [flag, f"{k}={v}"]
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO, timeout=case.timeout + 120, env=cli_environment())
    assert out.returncode == 1, out.stderr[-2000:]
    assert "Traceback" not in out.stderr
    from inspector.record import ErrorInfo

    check_error(case, ErrorInfo(**json.loads(out.stdout)["error"]), path)


def _rss() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def test_caller_memory_stays_flat_across_failed_compiles(tmp_path, sandbox):
    bad = [c for c in CASES if c.name.startswith(("syntax", "compile", "import")) and c.kinds != ("stood_in",)][:80]
    paths = [write_case(tmp_path, c) for c in bad]
    for p in paths[:10]:  # reach steady state first
        inspect_kernel(p, sandbox=sandbox, use_cache=False)
    before = _rss()
    for p in paths:
        rec = inspect_kernel(p, sandbox=sandbox, use_cache=False)
        assert rec.error is not None
    grown = _rss() - before
    print(f"caller RSS grew by {grown / 2**20:.1f} MiB over {len(paths)} failed compiles")
    assert grown < 20 * 2**20


def test_eight_clients_at_once_get_their_own_results(sandbox):
    jobs = [("sm_90", 128), ("sm_80", 256), ("gfx942", 512), ("sm_120", 1024),
            ("sm_90", 2048), ("gfx950", 256), ("sm_89", 64), ("sm_100", 512)]
    barrier = threading.Barrier(len(jobs))

    def run(job):
        target, block = job
        barrier.wait()
        return inspect_kernel(ADD, target=target, consts={"BLOCK": str(block)}, sandbox=sandbox, use_cache=False)

    with ThreadPoolExecutor(len(jobs)) as pool:
        recs = list(pool.map(run, jobs))
    for (target, block), rec in zip(jobs, recs):
        assert rec.error is None, rec.error and rec.error.short()
        assert rec.target == target
        assert next(p.value for p in rec.parameters if p.name == "BLOCK") == block
        assert f"arange(0, {block})" not in rec.source  # the source is the file, not the call
        assert f"tt.make_range {{end = {block} : i32" in rec.stages["ttir"]


_WRITER = r"""
import json, os, sys
sys.path.insert(0, {repo!r})
from inspector.compile.cache import Cache
cache = Cache({root!r})
me = int(sys.argv[1])
payload = {{"writer": me, "blob": "x" * 200_000, "n": list(range(2000))}}
bad = 0
for i in range(150):
    cache.put("k" * 64, payload)
    got = cache.get("k" * 64)
    if got is None or len(got["blob"]) != 200_000 or got["n"] != list(range(2000)):
        bad += 1
print(bad)
"""


def test_cache_has_no_torn_entries_under_concurrent_writers(tmp_path):
    code = _WRITER.format(repo=str(REPO), root=str(tmp_path / "cache"))
    procs = [subprocess.Popen([sys.executable, "-c", code, str(i)], stdout=subprocess.PIPE, text=True)
             for i in range(8)]
    bad = [int(p.communicate(timeout=300)[0].strip()) for p in procs]
    assert all(p.returncode == 0 for p in procs)
    assert bad == [0] * 8, f"torn or missing reads: {bad}"
    final = Cache(tmp_path / "cache").get("k" * 64)
    assert final["writer"] in range(8)
    assert not list((tmp_path / "cache").glob("*/*.tmp"))


def test_output_limit_stops_a_worker_that_writes_too_much(tmp_path, sandbox):
    path = tmp_path / "writer.py"
    # Into the worker's own /tmp (private in the jail): the kernel may not write anywhere else.
    path.write_text(fuzz_cases.GOOD + f"\nwith open(__import__('tempfile').gettempdir() + '/{tmp_path.name}.bin', 'wb') as f:\n"
                    "    f.write(b'x' * (64 * 2**20))\n")
    limits = Limits(timeout=60, output=8 * 2**20)
    result = sandbox.run({"kind": "inspect", "file": str(path), "target": "sm_90"}, limits)
    assert result["error"]["kind"] == "output_limit" and result["error"]["line"] == len(fuzz_cases.GOOD_LINES) + 3
    # A result larger than the limit: the record carries the file's 1 MB of source.
    big = tmp_path / "big.py"
    big.write_text(fuzz_cases.megabyte_ok())
    with pytest.raises(SandboxError) as info:
        sandbox.run({"kind": "inspect", "file": str(big), "target": "sm_90"}, Limits(timeout=60, output=2**19))
    assert info.value.kind == "output_limit"
    rec = inspect_kernel(ADD, target="sm_90", sandbox=sandbox, use_cache=False)
    assert rec.error is None
