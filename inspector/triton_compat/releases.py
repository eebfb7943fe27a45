"""Which Triton releases the inspector supports, readable without importing Triton.

How those releases differ is handled in `inspector.triton_compat` (the one module that touches
Triton's internals); this module only says which releases were tried, so that `versions add`
can refuse an unsupported one before downloading it, and a worker can refuse to run on one.
"""

from __future__ import annotations

import re

# Releases the whole pipeline was tried on (bundled kernels for sm_90 and gfx942), oldest first.
TRIED = ("3.4.0", "3.5.1", "3.6.0", "3.7.1", "3.8.0", "3.9.0")
OLDEST = (3, 4)  # older releases lack what triton_compat relies on (knobs, driver.set_active)
NEWEST_TRIED = (3, 9)

# "3.6.0", "3.7.0rc1", and builds with a local part such as PyTorch's "3.6.0+git9844da95"
_VERSION = re.compile(r"^(\d+)\.(\d+)\.(\d+)((?:a|b|rc|\.post|\.dev)\d+)?(\+[\w.]+)?$")


class VersionError(Exception):
    """A request about Triton versions that cannot be done; the message says what to do."""


class UnsupportedVersion(VersionError, ValueError):
    """A Triton version the inspector cannot use; the message says what to do instead."""


def parse(version: str) -> tuple[int, int, int]:
    """(major, minor, patch) of a release such as "3.6.0"; raises UnsupportedVersion for text
    that is no full release number."""
    m = _VERSION.match(version.strip())
    if not m:
        raise UnsupportedVersion(
            f"{version!r} is not a Triton release number: give one such as 3.6.0 (tried: {', '.join(TRIED)})"
        )
    return int(m.group(1)), int(m.group(2)), int(m.group(3))


def check(version: str) -> str | None:
    """Raise UnsupportedVersion when the inspector cannot work with Triton `version`; return a
    warning (str) for a release newer than any tried, else None."""
    major_minor = parse(version)[:2]
    if major_minor < OLDEST:
        raise UnsupportedVersion(
            f"Triton {version} is older than the oldest release the inspector supports "
            f"({OLDEST[0]}.{OLDEST[1]}): its compiler has no offline driver switch or knobs to compile "
            f"GPU-free. Pick {OLDEST[0]}.{OLDEST[1]} or newer (tried: {', '.join(TRIED)})."
        )
    if major_minor > NEWEST_TRIED:
        return (
            f"Triton {version} is newer than the newest release tried ({'.'.join(map(str, NEWEST_TRIED))}); "
            "it may work, and a failure will name the Triton internal that changed"
        )
    return None
