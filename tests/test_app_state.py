"""The app's plain parts: the URL form of a view, and the bundled kernels it lists (the user's
workspace is tested in test_workspace.py)."""

from __future__ import annotations

from conftest import KERNELS
from inspector.ui import workspace
from inspector.ui.settings import DEFAULT_PANES, Settings


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
