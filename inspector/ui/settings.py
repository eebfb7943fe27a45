"""What one view of the app is: kernel, target, options, call overrides, panes; and its URL form.

The URL holds exactly this, so a link reopens the same view:

    ?kernel=add&target=sm_90&warps=8&stages=3&c.BLOCK=512&a.n=4095&panes=ttgir,ptx&view=occupancy

`c.<name>` overrides a constexpr and `a.<name>` an argument (as `inspect_kernel`'s consts and
args take them); `fn` names the kernel function when the file has several; `autotune` is a config
index; `passes=1` records the IR after every pass; `panes` lists the stage panes beside the editor
(the editor is the source pane: an old link's `source` entry is dropped); `view` the tab below;
`triton` the Triton release compiled with (absent: the installed one) and `vs_triton` the
release the Diff tab compares it with. A shared link adds `src` (the text itself,
zlib-compressed, base64url) and `name` (its file
name): see `shared_text`. No Streamlit here.
"""

from __future__ import annotations

import base64
import zlib
from dataclasses import dataclass, field
from typing import Any, Mapping

from inspector.hardware.targets import DEFAULT_TARGET
from inspector.record import InspectRequest

STAGE_PANES = ("ttir", "ttgir", "llir", "ptx", "sass", "amdgcn", "passes")
DEFAULT_PANES = ("ptx",)
VIEWS = ("insight", "occupancy", "autotune", "diff", "benchmarks", "profile", "fits")
MIN_PANES, MAX_PANES = 1, 3
MAX_SHARED_BYTES = 1024 * 1024  # the most text a shared link may unpack to
WARPS_CHOICES = (1, 2, 4, 8, 16, 32)
STAGES_CHOICES = (1, 2, 3, 4, 5, 6)


def _int_or_none(value: Any, allowed: tuple[int, ...] | None = None) -> int | None:
    try:
        n = int(str(value))
    except (TypeError, ValueError):
        return None
    if allowed is not None and n not in allowed:
        return None
    return n if n >= 0 else None


def _release_or_empty(value: Any) -> str:
    """A Triton release number from a URL, or "" for anything else."""
    from inspector.triton_compat.releases import UnsupportedVersion, parse

    try:
        parse(str(value or ""))
    except UnsupportedVersion:
        return ""
    return str(value).strip()


@dataclass
class Settings:
    """The user's choices. None / empty means "as the file's example call decides"."""

    kernel: str = "add"
    target: str = DEFAULT_TARGET
    function: str = ""  # the kernel function; "" = the file's entry kernel
    num_warps: int | None = None
    num_stages: int | None = None
    autotune: int | None = None
    consts: dict[str, str] = field(default_factory=dict)
    args: dict[str, str] = field(default_factory=dict)
    # What the file passed for each override when it was set (`inspector/ui/overrides.py`); not in the URL
    basis: dict[str, str] = field(default_factory=dict)
    panes: list[str] = field(default_factory=lambda: list(DEFAULT_PANES))
    view: str = "insight"
    passes: bool = False
    triton: str = ""  # the Triton release ("" = the installed one; others: inspector.versions)
    vs_triton: str = ""  # the release the Diff tab compares with ("" = none)

    def options(self) -> dict[str, int]:
        """Compile options for inspect_kernel."""
        out = {}
        if self.num_warps is not None:
            out["num_warps"] = self.num_warps
        if self.num_stages is not None:
            out["num_stages"] = self.num_stages
        return out

    def request(self, file: str = "", **fields: Any) -> InspectRequest:
        """The compile request of this view for `file` (`fields`: further request fields, the
        editor's `source`, `defer`): the one request type the command line builds too."""
        view = dict(file=file, target=self.target, kernel=self.function or None, args=dict(self.args),
                    consts=dict(self.consts), options=self.options(), autotune_index=self.autotune,
                    passes=self.passes, triton=self.triton or None)
        return InspectRequest(**{**view, **fields})

    def to_query(self) -> dict[str, str]:
        """The URL query parameters (only what differs from the defaults, in a stable order)."""
        q: dict[str, str] = {"kernel": self.kernel, "target": self.target}
        if self.function:
            q["fn"] = self.function
        if self.num_warps is not None:
            q["warps"] = str(self.num_warps)
        if self.num_stages is not None:
            q["stages"] = str(self.num_stages)
        if self.autotune is not None:
            q["autotune"] = str(self.autotune)
        for name, value in sorted(self.consts.items()):
            q[f"c.{name}"] = value
        for name, value in sorted(self.args.items()):
            q[f"a.{name}"] = value
        if list(self.panes) != list(DEFAULT_PANES):
            q["panes"] = ",".join(self.panes)
        if self.view != VIEWS[0]:
            q["view"] = self.view
        if self.passes:
            q["passes"] = "1"
        if self.triton:
            q["triton"] = self.triton
        if self.vs_triton:
            q["vs_triton"] = self.vs_triton
        return q

    @classmethod
    def from_query(cls, query: Mapping[str, str], default_target: str = DEFAULT_TARGET) -> "Settings":
        """Settings from URL query parameters; unknown or malformed values fall back to defaults."""
        s = cls(target=default_target)
        s.kernel = str(query.get("kernel") or s.kernel)
        s.target = str(query.get("target") or s.target)
        s.function = str(query.get("fn") or "")
        s.num_warps = _int_or_none(query.get("warps"), WARPS_CHOICES)
        s.num_stages = _int_or_none(query.get("stages"), STAGES_CHOICES)
        s.autotune = _int_or_none(query.get("autotune"))
        for key, value in query.items():
            if key.startswith("c.") and len(key) > 2 and str(value) != "":
                s.consts[key[2:]] = str(value)
            elif key.startswith("a.") and len(key) > 2 and str(value) != "":
                s.args[key[2:]] = str(value)
        panes = [p for p in str(query.get("panes") or "").split(",") if p in STAGE_PANES]
        panes = list(dict.fromkeys(panes))[:MAX_PANES]
        if len(panes) >= MIN_PANES:
            s.panes = panes
        view = str(query.get("view") or "")
        if view in VIEWS:
            s.view = view
        s.passes = str(query.get("passes") or "") in ("1", "true", "yes")
        s.triton = _release_or_empty(query.get("triton"))
        s.vs_triton = _release_or_empty(query.get("vs_triton"))
        return s


def shared_text(encoded: str) -> str:
    """The source a shared link carries (`src`): zlib data in base64url, unpadded, as the page's
    Share button writes it. ValueError for anything malformed or over MAX_SHARED_BYTES unpacked
    (a small link cannot unpack into a huge text)."""
    try:
        data = base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4))
        inflater = zlib.decompressobj()
        raw = inflater.decompress(data, MAX_SHARED_BYTES + 1)
    except (ValueError, zlib.error) as e:
        raise ValueError(f"the link's source is damaged ({e}); ask for the link again") from e
    if len(raw) > MAX_SHARED_BYTES or inflater.unconsumed_tail:
        raise ValueError(f"the link's source is larger than {MAX_SHARED_BYTES // 1024} KiB")
    if not inflater.eof:
        raise ValueError("the link's source is damaged (cut short); ask for the link again")
    return raw.decode("utf-8", errors="replace")


def share_param(text: str) -> str:
    """`src` for a text (what the page's Share button computes in the browser)."""
    return base64.urlsafe_b64encode(zlib.compress(text.encode("utf-8"), 9)).decode().rstrip("=")
