"""Every Triton release side by side (inspector/versions): side environments, compiles and diffs
across releases, the cache per release.

The release-pair tests use the Triton 3.6.0 side environment that `sh scripts/install.sh --test`
adds under the inspector's home; without it they are skipped, unless INSPECTOR_REQUIRE_VERSIONS=1
(CI) makes that a failure. The add/remove tests install 3.6.0 again into a private home (pip's
cache makes the download free after the first time).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from inspector.bench import protocol as gallery
from side_releases import missing, ready

from inspector import versions
from inspector.compile.api import inspect_kernel, triton_version
from inspector.compile.cache import Cache, flush
from inspector.triton_compat import releases as support
from inspector.versions.compare import compare

REPO = Path(__file__).resolve().parents[2]
KERNELS = sorted(p for p in (REPO / "kernels").glob("*.py") if not p.name.startswith("_"))
OLD = "3.6.0"  # the release on the GPU machine
NEW = triton_version()  # the one installed beside the inspector (3.9.0 here)


def cli(*args: str, env: dict[str, str] | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "inspector", *args],
        cwd=REPO,
        check=False,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=timeout,
    )


@pytest.fixture(scope="session")
def old_release() -> str:
    """The 3.6.0 side environment's version, once it is there."""
    if not ready(OLD):
        missing(f"no ready Triton {OLD} side environment under {versions.versions_dir()} "
                f"(`python -m inspector versions add {OLD}`, which scripts/install.sh --test runs)")
    if NEW == OLD:
        pytest.skip(f"the installed Triton is {OLD} itself: no second release to compare")
    return OLD


# ---- what needs no side environment ------------------------------------------------------------


def test_release_numbers_and_support():
    assert support.parse("3.6.0") == (3, 6, 0)
    assert support.parse("3.6.0+git9844da95") == (3, 6, 0)
    assert support.check("3.4.0") is None
    with pytest.raises(support.UnsupportedVersion, match="older than the oldest release.*3.4"):
        support.check("3.2.0")
    with pytest.raises(support.UnsupportedVersion, match="not a Triton release number.*3.6.0"):
        support.check("3.6")
    with pytest.raises(support.UnsupportedVersion):
        support.check("../../etc")  # never a path
    assert "newer than the newest release tried" in support.check("3.10.0")


def test_cli_refuses_unsupported_and_missing_releases(tmp_path):
    home = {"TRITON_INSPECTOR_HOME": str(tmp_path)}
    out = cli("versions", "add", "3.2.0", env=home)
    assert out.returncode == 2 and "older than the oldest release" in out.stderr
    assert not (tmp_path / "triton-versions").exists()  # nothing was started
    out = cli("compile", "kernels/add.py", "--triton", "3.7.0", env=home)
    assert out.returncode == 1
    assert "versions add 3.7.0" in out.stderr and "not available" in out.stderr
    out = cli("versions", "remove", "3.7.0", env=home)
    assert out.returncode == 2 and "no side environment" in out.stderr
    listed = json.loads(cli("versions", "list", "--json", env=home).stdout)
    assert listed == {"default": NEW, "side": []}


def test_the_installed_release_by_number_needs_no_side_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("TRITON_INSPECTOR_HOME", str(tmp_path))
    rec = inspect_kernel(REPO / "kernels" / "add.py", target="sm_90", triton=NEW, cache=Cache(tmp_path / "c"))
    assert rec.error is None and rec.triton_version == NEW


# ---- adding and removing -----------------------------------------------------------------------


def _files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*")) if root.exists() else []


def test_add_shows_progress_then_remove_leaves_no_files(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    (home / "workspaces").mkdir()  # what else lives in the home stays
    before = _files(home)
    monkeypatch.setenv("TRITON_INSPECTOR_HOME", str(home))
    started = versions.add(OLD)
    assert started.state in ("installing", "ready")
    seen: list[tuple[str, int, str]] = []
    env = versions.wait(OLD, timeout=900, on_progress=lambda e: seen.append((e.state, e.step, e.phase)))
    assert env.ready, env.error
    assert [s for s in seen if s[0] == "installing"], "no progress was readable while it installed"
    assert seen[-1][0] == "ready" and env.step == env.steps
    # the environment imports its own triton and the base torch (no second torch)
    venv = Path(env.env_path).resolve()
    assert Path(env.triton_file).resolve().is_relative_to(venv)
    assert not Path(env.torch_file).resolve().is_relative_to(venv)
    assert not list(venv.rglob("torch/__init__.py"))
    assert env.bytes and env.bytes < 2 * 2**30
    # adding again reuses it
    again = versions.add(OLD)
    assert again.ready and again.started == env.started
    listed = json.loads(cli("versions", "list", "--json", env={"TRITON_INSPECTOR_HOME": str(home)}).stdout)
    assert [(e["version"], e["state"]) for e in listed["side"]] == [(OLD, "ready")]
    out = cli("versions", "remove", OLD, env={"TRITON_INSPECTOR_HOME": str(home)})
    assert out.returncode == 0, out.stderr
    assert "MiB freed" in out.stdout
    assert _files(home) == before


def test_remove_during_install_stops_it_and_leaves_no_files(tmp_path, monkeypatch):
    home = tmp_path / "home"
    monkeypatch.setenv("TRITON_INSPECTOR_HOME", str(home))
    env = versions.add(OLD)
    assert env.state == "installing"
    versions.remove(OLD)
    assert _files(home) == []
    assert versions.get(OLD) is None
    with pytest.raises(versions.VersionError, match=f"versions add {OLD}"):
        versions.python_for(OLD)


# ---- two releases side by side ---------------------------------------------------------------


@pytest.mark.parametrize("target", ["sm_90", "gfx942"])
@pytest.mark.parametrize("kernel", KERNELS, ids=lambda p: p.stem)
def test_bundled_kernels_compile_with_both_releases(old_release, sandbox, kernel, target):
    stage = "ptx" if target == "sm_90" else "amdgcn"
    if target != "sm_90" and getattr(gallery.load_gallery(kernel.stem), "LANGUAGE", "triton") == "gluon":
        for release in (old_release, NEW):  # written for NVIDIA (or sm_90) alone: it says so with either release
            rec = inspect_kernel(kernel, target=target, triton=release, sandbox=sandbox)
            assert rec.error is not None and " only" in rec.error.message, (release, rec.error)
        return
    for release in (old_release, NEW):
        rec = inspect_kernel(kernel, target=target, triton=release, sandbox=sandbox)
        assert rec.error is None, (release, rec.error)
        assert rec.triton_version == release
        assert rec.stages.get(stage), (release, list(rec.stages))


def test_worker_imports_the_side_environments_triton(old_release, tmp_path):
    kernel = tmp_path / "which_triton.py"
    kernel.write_text(
        (REPO / "kernels" / "add.py").read_text()
        + "\nimport triton as _t, torch as _torch\nprint('TRITON_FILE', _t.__file__)\n"
        + "print('TORCH_FILE', _torch.__file__)\n"
    )
    rec = inspect_kernel(kernel, target="sm_90", triton=old_release, use_cache=False)
    assert rec.error is None, rec.error
    lines = dict(
        line.split(" ", 1) for line in rec.log.splitlines() if line.startswith(("TRITON_FILE", "TORCH_FILE"))
    )
    venv = Path(versions.get(old_release).env_path).resolve()
    assert Path(lines["TRITON_FILE"]).resolve().is_relative_to(venv)
    assert not Path(lines["TORCH_FILE"]).resolve().is_relative_to(venv)


def test_cache_never_mixes_releases(old_release, tmp_path):
    store = Cache(tmp_path / "cache")
    add = REPO / "kernels" / "add.py"
    first = {r: inspect_kernel(add, target="sm_90", triton=r, cache=store) for r in (old_release, NEW)}
    assert first[old_release].cache_key != first[NEW].cache_key
    assert not any(rec.cached for rec in first.values())
    flush()  # the entries are written off the caller's path
    entries = sorted((tmp_path / "cache").glob("*/*.json"))
    assert len(entries) == 2
    stored = {json.loads(p.read_text())["value"]["triton_version"] for p in entries}
    assert stored == {old_release, NEW}
    for release in (NEW, old_release):  # hits, each its own release
        rec = inspect_kernel(add, target="sm_90", triton=release, cache=store)
        assert rec.cached and rec.triton_version == release
        assert rec.stages["ptx"] == first[release].stages["ptx"]
    # the PTX ISA each release writes differs, so a mixed-up entry would show
    assert first[old_release].stages["ptx"] != first[NEW].stages["ptx"]


def _ptx_isa(rec) -> str:
    return next(line for line in rec.stages["ptx"].splitlines() if line.startswith(".version"))


def test_a_known_difference_between_the_releases_appears_in_the_diff(old_release, sandbox):
    # sm_90: Triton 3.6.0 writes PTX ISA 8.7, 3.9.0 writes 9.4; the vector add is otherwise the same
    a = inspect_kernel(REPO / "kernels" / "add.py", target="sm_90", triton=old_release, sandbox=sandbox)
    b = inspect_kernel(REPO / "kernels" / "add.py", target="sm_90", triton=NEW, sandbox=sandbox)
    assert _ptx_isa(a) != _ptx_isa(b)
    cmp = compare(a, b)
    assert ("triton", old_release, NEW) in [(c.name, c.a, c.b) for c in cmp.diff.settings]
    assert not cmp.diff.stages["ptx"].identical
    assert any(_ptx_isa(a) in h for h in cmp.diff.stages["ptx"].hunks)
    assert not [m for m in cmp.diff.memory if m.a != m.b]  # the same loads and stores, paired by line
    # gfx942 matmul: 3.6.0 spills far more VGPRs than the newer release
    a = inspect_kernel(REPO / "kernels" / "matmul.py", target="gfx942", triton=old_release, sandbox=sandbox)
    b = inspect_kernel(REPO / "kernels" / "matmul.py", target="gfx942", triton=NEW, sandbox=sandbox)
    assert a.resources.vgpr_spills > b.resources.vgpr_spills
    cmp = compare(a, b)
    assert f"vgpr_spills {a.resources.vgpr_spills} -> {b.resources.vgpr_spills}" in cmp.summary
    assert cmp.summary.startswith(f"matmul_kernel gfx942, Triton {old_release} -> {NEW}: ")


def test_cli_compile_and_diff_across_releases(old_release):
    out = cli("compile", "kernels/softmax.py", "--triton", old_release, "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["triton_version"] == old_release
    out = cli("diff", "kernels/softmax.py", "--triton", old_release, "--vs-triton", NEW)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith(f"softmax_kernel sm_90, Triton {old_release} -> {NEW}: ")
    assert f"settings:   triton: {old_release} -> {NEW}" in lines
    assert any(line.startswith("layouts:") for line in lines)
    out = cli(
        "diff",
        "kernels/softmax.py",
        "--target",
        "gfx942",
        "--triton",
        old_release,
        "--vs-triton",
        NEW,
        "--json",
    )
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["summary"].startswith(f"softmax_kernel gfx942, Triton {old_release} -> {NEW}")
    assert "vgprs" in [r["name"] for r in data["resources"]]  # both sides AMD: the target stayed
    assert {c["name"] for c in data["layouts"]} >= {"layouts", "layout conversions"}


def test_cli_versions_compare_one_line_per_kernel(old_release, tmp_path):
    out = cli("versions", "compare", "kernels/add.py", "kernels/softmax.py", "--from", old_release)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert [line.split(" ", 1)[0] for line in lines] == ["add_kernel", "softmax_kernel"]
    assert all(f" sm_90, Triton {old_release} -> {NEW}: " in line for line in lines)
    out = cli(
        "versions",
        "compare",
        "kernels/add.py",
        "--from",
        "3.7.1",
        "--json",
        env={"TRITON_INSPECTOR_HOME": str(tmp_path)},
    )  # a home without side environments
    assert out.returncode == 1
    assert "versions add 3.7.1" in json.loads(out.stdout)["error"]


def test_sass_left_for_later_is_made_by_the_release_that_compiled_it(old_release, tmp_path, monkeypatch):
    """A record of the side environment's release, SASS deferred, is completed by that release's
    worker (its own nvdisasm), and the completed record is cached under that release's key."""
    from inspector.compile import api

    store = Cache(tmp_path / "cache")
    add = REPO / "kernels" / "add.py"
    full = inspect_kernel(add, target="sm_90", triton=old_release, cache=Cache(tmp_path / "c2"))
    rec = inspect_kernel(add, target="sm_90", triton=old_release, cache=store, defer=("sass",))
    assert rec.deferred == ["sass"] and rec.triton_version == old_release
    used = []
    real = api.triton_sandbox
    monkeypatch.setattr(api, "triton_sandbox", lambda t, s=None: used.append(t) or real(t, s))
    api.complete(rec, cache=store)
    assert used == [old_release] and rec.deferred == [] and rec.stages["sass"] == full.stages["sass"]
    again = inspect_kernel(add, target="sm_90", triton=old_release, cache=store, defer=("sass",))
    assert again.cached and again.stages["sass"] == full.stages["sass"]


SCALAR_INDEXED = '''import triton
import triton.language as tl


@triton.jit
def column_kernel(out_ptr, stride, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    rows = tl.arange(0, BLOCK)
    # `pid` is a scalar: indexing it as a tensor, which Triton 3.6 allowed and 3.9 refuses
    tl.store(out_ptr + rows[:, None] * stride + pid[None, :], rows[:, None].to(tl.float32))
'''


def test_a_kernel_the_installed_release_refuses_opens_with_an_older_one_beside_it(tmp_path):
    if not ready(OLD):
        missing(f"no Triton {OLD} side environment (python -m inspector versions add {OLD})")
    path = tmp_path / "scalar_indexed.py"
    path.write_text(SCALAR_INDEXED)
    strict = inspect_kernel(path, target="sm_90", consts={"BLOCK": "32"}, use_cache=False, older_release=False)
    if strict.error is None:
        pytest.skip(f"Triton {NEW} accepts a scalar indexed as a tensor: nothing to fall back from")
    assert strict.error.kind == "compilation" and strict.refused_by is None
    rec = inspect_kernel(path, target="sm_90", consts={"BLOCK": "32"}, use_cache=False)
    assert rec.error is None and rec.triton_version == OLD, rec.error
    assert rec.refused_by == {"release": NEW, "line": 10, "message": "too many indices for tensor of rank 0"}
    assert f"--triton {OLD}" in rec.refusal_note()
    out = cli("compile", str(path), "--target", "sm_90", "--const", "BLOCK=32")
    assert out.returncode == 0 and f"Triton {NEW} (installed) refuses line 10" in out.stderr, out.stderr[-1500:]
