"""The inspection cache: a key names everything that decides a record; an entry that is not
exactly what was stored is a miss, never a wrong answer."""

from __future__ import annotations

import json
import multiprocessing
import subprocess
import sys
from pathlib import Path

import pytest

from inspector import places
from inspector.compile.cache import Cache, cache_key, flush


def test_a_key_does_not_depend_on_the_order_of_its_parts():
    assert cache_key({"a": 1, "b": [1, 2]}) == cache_key({"b": [1, 2], "a": 1})
    assert cache_key({"a": 1}) != cache_key({"a": 2})
    assert len(cache_key({})) == 64


def test_put_then_get_and_clear(tmp_path):
    cache = Cache(tmp_path)
    key = cache_key({"source": "x"})
    assert cache.get(key) is None
    cache.put(key, {"kernel": "k", "stages": {"ptx": "..."}})
    assert cache.get(key) == {"kernel": "k", "stages": {"ptx": "..."}}
    assert (tmp_path / key[:2] / f"{key}.json").is_file()
    assert cache.clear() == 1 and cache.get(key) is None


@pytest.mark.parametrize("text", ["not json", "[]", '{"format": "other", "key": "K", "value": {}}',
                                  '{"format": 1, "key": "another", "value": {}}', ""])
def test_a_damaged_or_planted_entry_is_a_miss(tmp_path, text):
    cache = Cache(tmp_path)
    key = cache_key({"source": "y"})
    cache.put(key, {"ok": True})
    path = tmp_path / key[:2] / f"{key}.json"
    entry = json.loads(path.read_text())
    path.write_text(text.replace("1,", f'{json.dumps(entry["format"])},').replace('"K"', json.dumps(key)))
    assert cache.get(key) is None
    cache.put(key, {"ok": 2})  # the next put repairs it
    assert cache.get(key) == {"ok": 2}


def test_a_key_that_could_name_another_path_is_refused(tmp_path):
    cache = Cache(tmp_path)
    for bad in ("../etc/passwd", "", "a/b", "k.json"):
        with pytest.raises(ValueError):
            cache.put(bad, {})


def _writer(root: str, key: str, n: int) -> None:
    cache = Cache(root)
    for i in range(n):
        cache.put(key, {"i": i, "pad": "x" * 20000})


def test_concurrent_writers_never_leave_a_torn_entry(tmp_path):
    key = cache_key({"source": "z"})
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_writer, args=(str(tmp_path), key, 40)) for _ in range(3)]
    for p in procs:
        p.start()
    cache = Cache(tmp_path)
    seen = 0
    while any(p.is_alive() for p in procs):
        value = cache.get(key)
        if value is not None:  # whenever there is an entry, it is a whole one
            assert len(value["pad"]) == 20000
            seen += 1
    for p in procs:
        p.join()
        assert p.exitcode == 0
    assert cache.get(key)["i"] == 39


def test_the_default_folder_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("TRITON_INSPECTOR_CACHE", str(tmp_path / "c"))
    assert Cache().root == tmp_path / "c"
    monkeypatch.delenv("TRITON_INSPECTOR_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert Cache().root == tmp_path / "xdg" / "triton-inspector"
    assert places.cache_dir({"HOME": "/h"}) == places.Path("/h/.cache/triton-inspector")


def test_a_write_off_the_callers_path_is_read_back_at_once_and_keeps_the_value_as_it_was(tmp_path):
    cache = Cache(tmp_path)
    key = cache_key({"source": "later"})
    value = {"stages": {"ptx": "a"}}
    cache.put(key, value, wait=False)
    value["stages"]["ptx"] = "changed after the put"  # serialised when put, not when written
    assert cache.get(key) == {"stages": {"ptx": "a"}}  # waits for the pending write
    cache.put(key, {"stages": {"ptx": "b"}}, wait=False)
    cache.put(key, {"stages": {"ptx": "c"}}, wait=False)
    flush()
    assert json.loads((tmp_path / key[:2] / f"{key}.json").read_text())["value"] == {"stages": {"ptx": "c"}}


def test_a_background_write_that_fails_is_logged_and_leaves_a_miss(tmp_path, caplog):
    blocker = tmp_path / "file"
    blocker.write_text("")
    cache = Cache(blocker)  # its entries' folders cannot be made under a file
    key = cache_key({"source": "nowhere"})
    with caplog.at_level("WARNING", logger="inspector.compile.cache"):
        cache.put(key, {"ok": True}, wait=False)
        assert cache.get(key) is None
    assert "could not store the cache entry" in caplog.text


def test_a_process_that_exits_right_after_a_background_put_leaves_the_entry(tmp_path):
    key = cache_key({"source": "exit"})
    code = ("from inspector.compile.cache import Cache; "
            f"Cache({str(tmp_path)!r}).put({key!r}, {{'kept': True}}, wait=False)")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=Path(__file__).resolve().parents[2])
    assert Cache(tmp_path).get(key) == {"kept": True}


def test_a_cache_hit_imports_nothing_it_does_not_need(tmp_path):
    """compile and explain asked again answer from the cache without the sandbox, the occupancy
    calculator, the highlighter or the analysis (docs/performance.md#a-cache-hit): what each
    process imported, read from Python's own -X importtime."""
    import os
    import subprocess
    import sys

    from paths import REPO

    env = {**os.environ, "TRITON_INSPECTOR_CACHE": str(tmp_path / "cache"), "TRITON_INSPECTOR_POOL": "0"}
    for command in (["compile"], ["explain"]):
        args = [sys.executable, "-X", "importtime", "-m", "inspector", *command, "kernels/add.py", "--target", "sm_90"]
        first = subprocess.run(args, cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
        assert first.returncode == 0, first.stderr[-2000:]
        again = subprocess.run(args, cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
        assert again.returncode == 0 and again.stdout == first.stdout
        imported = {line.split("|")[-1].strip() for line in again.stderr.splitlines() if line.startswith("import time:")}
        heavy = {m for m in imported if m.split(".")[0] in ("torch", "triton", "pygments", "numpy")
                 or m.startswith(("inspector.isolation", "inspector.occupancy", "inspector.analysis"))
                 # a writer's imports, and OpenSSL's bindings (the hash is CPython's own)
                 or m in ("concurrent.futures", "logging", "_hashlib")}
        assert not heavy, (command, sorted(heavy))
