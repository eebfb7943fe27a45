"""Every Triton release side by side: side environments managed by the inspector.

`add("3.6.0")` starts installing Triton 3.6.0 into a virtual environment of its own under the
inspector's home (in the background; `get`/`wait` read its progress), `list_environments()` and
`remove()` manage them, and `python_for(version)` gives the interpreter a compile with that
version starts from (`inspector.compile.api.inspect_kernel(..., triton="3.6.0")`). The Triton
installed beside the app stays the default. `support` says which releases are supported.
"""

from .environments import (
    SideEnvironment,
    VersionError,
    add,
    available_versions,
    base_version,
    get,
    inspector_home,
    list_environments,
    python_for,
    remove,
    versions_dir,
    wait,
)
from ..triton_compat.releases import TRIED, UnsupportedVersion, check

__all__ = [
    "TRIED",
    "SideEnvironment",
    "UnsupportedVersion",
    "VersionError",
    "add",
    "available_versions",
    "base_version",
    "check",
    "get",
    "inspector_home",
    "list_environments",
    "python_for",
    "remove",
    "versions_dir",
    "wait",
]
