"""Check every bundled kernel against its reference in Triton's CPU interpreter.

Run as its own process: TRITON_INTERPRET must be set before Triton is first imported, and the
rest of the test suite needs compiled mode. Prints one JSON object per (kernel, variant, size)
on stdout; tests/kernels/test_kernels_interpreter.py runs it and asserts on each line.

    python tests/support/kernels_interpreter_run.py [kernel ...]
"""

from __future__ import annotations

import json
import os
import sys
import time
import traceback
from pathlib import Path

os.environ["TRITON_INTERPRET"] = "1"
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import torch  # noqa: E402

from inspector.bench import protocol as gallery  # noqa: E402


def cases(names: list[str]):
    """(kernel, variant, size, skip reason or None) for every interpreter case of the kernels."""
    for name in names:
        module = gallery.load_gallery(name)
        skip = getattr(module, "INTERPRETER_SKIP", None) or {}
        for variant in gallery.variants(module):
            for size in module.TEST_SIZES:
                yield name, module, variant, size, skip.get(variant)


def main(argv: list[str]) -> int:
    names = argv or gallery.gallery_names()
    for name, module, variant, size, skip in cases(names):
        row = {"kernel": name, "variant": variant, "size": size}
        if skip:
            print(json.dumps({**row, "skipped": skip}), flush=True)
            continue
        torch.manual_seed(hash((name, variant, str(size))) & 0xFFFF)
        start = time.perf_counter()
        try:
            result = gallery.check(module, size, variant, "cpu")
            row.update(ok=result.ok, message=result.message, max_abs_error=result.max_abs_error,
                       rel_error=result.rel_error)
        except Exception:  # noqa: BLE001 - reported per case
            row.update(ok=False, message=traceback.format_exc(limit=6))
        row["seconds"] = round(time.perf_counter() - start, 3)
        print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
