"""The app's plain parts: the URL form of a view, and the bundled kernels it lists (the user's
workspace is tested in test_workspace.py)."""

from __future__ import annotations

from paths import KERNELS
from inspector.ui import workspace
import pytest

from inspector.ui.settings import DEFAULT_PANES, MAX_SHARED_BYTES, Settings, share_param, shared_text


def test_settings_round_trip_through_the_url():
    s = Settings(kernel="matmul", target="gfx942", function="matmul_kernel", num_warps=8, num_stages=2, autotune=3,
                 consts={"BLOCK_M": "64"}, args={"M": "1000"}, panes=["ttgir", "sass"], view="occupancy",
                 passes=True)
    q = s.to_query()
    assert q == {"kernel": "matmul", "target": "gfx942", "fn": "matmul_kernel", "warps": "8", "stages": "2",
                 "autotune": "3", "c.BLOCK_M": "64", "a.M": "1000", "panes": "ttgir,sass", "view": "occupancy",
                 "passes": "1"}
    assert Settings.from_query(q) == s
    r = s.request("k.py", source="text")
    assert (r.file, r.kernel, r.target, r.args, r.consts, r.options, r.autotune_index, r.passes, r.source) == \
        ("k.py", "matmul_kernel", "gfx942", {"M": "1000"}, {"BLOCK_M": "64"}, {"num_warps": 8, "num_stages": 2}, 3,
         True, "text")


def test_defaults_stay_out_of_the_url():
    assert Settings(kernel="add", target="sm_90").to_query() == {"kernel": "add", "target": "sm_90"}


def test_malformed_url_values_fall_back_to_defaults():
    s = Settings.from_query({"warps": "3", "stages": "x", "autotune": "-1", "panes": "bogus,source",
                             "view": "nowhere", "c.": "1", "c.B": ""}, default_target="sm_80")
    assert (s.num_warps, s.num_stages, s.autotune) == (None, None, None)
    assert s.panes == list(DEFAULT_PANES)  # no stage pane named: the editor is the source pane
    assert s.view == "insight" and s.consts == {} and s.target == "sm_80"


def test_an_old_link_keeps_its_stage_panes_without_the_source_pane():
    s = Settings.from_query({"panes": "source,ttgir,ptx", "view": "stages"})
    assert s.panes == ["ttgir", "ptx"] and s.view == "insight"
    assert Settings.from_query({"panes": "ttir,ttgir,llir,ptx"}).panes == ["ttir", "ttgir", "llir"]  # three at most


def test_shared_source_round_trips_and_bad_links_are_refused():
    text = '"""A kernel."""\nimport triton\n# ünïcode\n' * 50
    encoded = share_param(text)
    assert len(encoded) < len(text) / 4 and "=" not in encoded and "+" not in encoded and "/" not in encoded
    assert shared_text(encoded) == text
    with pytest.raises(ValueError, match="damaged"):
        shared_text(encoded[:-8] + "AAAA")
    with pytest.raises(ValueError, match="larger than"):
        shared_text(share_param("x" * (MAX_SHARED_BYTES + 1)))  # a small link that would unpack into too much


def test_bundled_kernels_are_listed_by_title_without_importing_them():
    kernels = {k.id: k for k in workspace.bundled_kernels()}
    assert kernels["add"].title == "Vector add" and kernels["add"].entry == "add_kernel"
    assert kernels["matmul"].bundled == KERNELS / "matmul.py"
