"""The timing process (`python -m inspector.fixes.speed_run REQUEST.json RESULT.json`), started by
`inspector.fixes.speed` on a machine with a GPU: runs the file's `example()` natively, once as
written and once per candidate, records its launches of the kernel (`triton_compat.running_launches`)
and times them replayed together with `triton.testing.do_bench` (the median of its repetitions,
after its warm-up; an autotuned kernel replays with the config its tuning picked). Writes per
text the milliseconds, or why it could not be timed.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from typing import Any


def _time_one(path: str, source: str, kernel: str, index: int) -> dict[str, Any]:
    import torch
    import triton.testing

    from .. import triton_compat as tc
    from .check_run import run_example, text_module

    module, spec, file = text_module(path, source, f"time{index}")
    torch.manual_seed(0)
    try:
        with tc.running_launches() as launches:
            run_example(module, spec)
        mine = [la for la in launches if tc.innermost_jit(la.obj).__name__ == kernel]
        if not mine:
            return {"ms": None, "why": f"the example launched no {kernel}"}
        torch.cuda.synchronize()

        def replay() -> None:
            for la in mine:
                tc.relaunch(la)

        ms = triton.testing.do_bench(replay, warmup=25, rep=100, return_mode="median")
        return {"ms": float(ms), "launches": len(mine), "why": ""}
    except Exception as e:  # the user's code: any failure is a result
        tb = traceback.extract_tb(e.__traceback__)
        where = next((f" (line {fr.lineno})" for fr in reversed(tb) if fr.filename == file), "")
        return {"ms": None, "why": f"{type(e).__name__}: {e}".strip()[:400] + where}
    finally:
        sys.modules.pop(spec.name, None)


def main(argv: list[str]) -> int:
    request_path, result_path = argv
    with open(request_path, encoding="utf-8") as f:
        req = json.load(f)
    sys.path.insert(0, os.path.dirname(os.path.abspath(req["file"])))
    texts = [req["original"], *req["candidates"]]
    results = [_time_one(req["file"], text, req["kernel"], i) for i, text in enumerate(texts)]
    with open(result_path, "w", encoding="utf-8") as f:
        json.dump({"original": results[0], "candidates": results[1:]}, f)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
