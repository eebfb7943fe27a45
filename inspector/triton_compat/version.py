"""The running Triton release, refused early when it is older than the oldest supported
(`releases`), and the compile options every supported release accepts."""

from __future__ import annotations


import triton



TRITON_VERSION: str = triton.__version__


def _check_supported() -> None:
    """Refuse a release older than the oldest supported, with what to do (a worker started
    from such an environment fails here, before any kernel is imported)."""
    from .releases import OLDEST, check, parse

    try:
        parse(TRITON_VERSION)
    except ValueError:
        return  # a build numbered some other way: let it try
    if parse(TRITON_VERSION)[:2] < OLDEST:
        check(TRITON_VERSION)


_check_supported()

# Options a user may set per compile; Triton's backend `parse_options` accepts these names.
COMMON_OPTIONS = ("num_warps", "num_stages", "num_ctas", "maxnreg", "enable_fp_fusion", "debug")
