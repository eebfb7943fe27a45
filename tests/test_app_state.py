"""The app's plain parts: the URL form of a view, and the workspace of the user's files."""

from __future__ import annotations

import pytest

from conftest import KERNELS
from inspector.ui import workspace
from inspector.ui.settings import DEFAULT_PANES, Settings


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("TRITON_INSPECTOR_HOME", str(tmp_path))
    return tmp_path


def test_settings_round_trip_through_the_url():
    s = Settings(kernel="matmul", target="gfx942", function="matmul_kernel", num_warps=8, num_stages=2, autotune=3,
                 consts={"BLOCK_M": "64"}, args={"M": "1000"}, panes=["source", "sass"], view="occupancy",
                 passes=True)
    q = s.to_query()
    assert q == {"kernel": "matmul", "target": "gfx942", "fn": "matmul_kernel", "warps": "8", "stages": "2",
                 "autotune": "3", "c.BLOCK_M": "64", "a.M": "1000", "panes": "source,sass", "view": "occupancy",
                 "passes": "1"}
    assert Settings.from_query(q) == s
    assert s.request() == {"kernel": "matmul_kernel", "target": "gfx942", "args": {"M": "1000"},
                           "consts": {"BLOCK_M": "64"}, "options": {"num_warps": 8, "num_stages": 2},
                           "autotune_index": 3, "passes": True}


def test_defaults_stay_out_of_the_url():
    assert Settings(kernel="add", target="sm_90").to_query() == {"kernel": "add", "target": "sm_90"}


def test_malformed_url_values_fall_back_to_defaults():
    s = Settings.from_query({"warps": "3", "stages": "x", "autotune": "-1", "panes": "ptx,bogus",
                             "view": "nowhere", "c.": "1", "c.B": ""}, default_target="sm_80")
    assert (s.num_warps, s.num_stages, s.autotune) == (None, None, None)
    assert s.panes == list(DEFAULT_PANES)  # one valid pane is fewer than two
    assert s.view == "stages" and s.consts == {} and s.target == "sm_80"


def test_bundled_kernels_are_listed_by_title_without_importing_them():
    kernels = {k.id: k for k in workspace.bundled_kernels()}
    assert kernels["add"].title == "Vector add" and kernels["add"].entry == "add_kernel"
    assert kernels["matmul"].bundled == KERNELS / "matmul.py"


def test_editing_a_bundled_kernel_makes_a_copy_and_revert_drops_it(home):
    kf = workspace.find("add")
    bundled = (KERNELS / "add.py").read_text()
    assert workspace.source_path(kf) == kf.bundled and not workspace.is_edited(kf)
    path = workspace.save_source(kf, bundled + "# mine\n")
    assert path == home / "workspace" / "edits" / "add.py" and path.read_text().endswith("# mine\n")
    assert workspace.source_path(kf) == path and workspace.is_edited(kf)
    assert workspace.read_source(kf).endswith("# mine\n")
    assert (KERNELS / "add.py").read_text() == bundled
    # Typing the bundled text back leaves nothing of the user's to keep.
    assert workspace.save_source(kf, bundled) == kf.bundled and not path.exists()
    workspace.save_source(kf, "broken(")
    workspace.revert(kf)
    assert not path.exists() and workspace.read_source(kf) == bundled
    assert not list((home / "workspace" / "edits").glob(".*.tmp"))  # atomic writes leave no temporaries


def test_uploads_are_stored_under_a_safe_name(home):
    kf = workspace.add_upload("../../etc/my kernel!.py", b'TITLE = "Mine"\nKERNEL = "k"\n')
    assert kf.id == "file:my_kernel.py" and kf.entry == "k"
    assert (home / "workspace" / "files" / "my_kernel.py").exists()
    listed = workspace.find(kf.id)
    assert listed is not None and listed.title == "Mine (my_kernel.py)"
    assert workspace.source_path(listed) == home / "workspace" / "files" / "my_kernel.py"
    with pytest.raises(ValueError):
        workspace.add_upload("big.py", b"x" * (workspace.MAX_UPLOAD_BYTES + 1))
