"""The benchmark worker process: `python -m inspector.bench.worker`, one request on stdin.

A fresh interpreter rather than a fork of the compile sandbox's zygote, because a benchmark
initialises CUDA (unsafe to fork from) and the GPU-free check needs TRITON_INTERPRET=1 set before
Triton is first imported. Started by `inspector.bench.client`; never import it elsewhere.

    stdin : {"targets": [...], "sizes": [...] | null, "variants": [...] | null, "vs": [...],
             "cudagraph": bool, "rep_ms": int, "warmup_ms": int, "check_only": bool,
             "interpret": bool | null, "dynamic_compile": bool, "autotune_config": int | null,
             "largest_only": bool, "rounds": int}
    stdout: JSON lines {"event": "progress", "done": i, "total": n, "message": "..."}
                       {"event": "result", "result": {BenchResult}}
                       {"event": "done"} | {"event": "error", "kind": "...", "message": "..."}

The user's code may print: file descriptor 1 is pointed at stderr before anything is imported,
and events go to a private duplicate of the original stdout.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from typing import Any


def _events() -> Any:
    private = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = os.fdopen(1, "w", buffering=1, closefd=False)
    return os.fdopen(private, "w", buffering=1)


def main() -> int:
    events = _events()

    def emit(obj: dict[str, Any]) -> None:
        events.write(json.dumps(obj) + "\n")
        events.flush()

    try:
        request = json.loads(sys.stdin.read() or "{}")
        check_only = bool(request.get("check_only"))
        interpret = request.get("interpret")
        if check_only and interpret is None:
            import torch  # importing torch does not import Triton

            interpret = not torch.cuda.is_available()
        if interpret:
            os.environ["TRITON_INTERPRET"] = "1"

        from .runner import run
        from .settings import BenchSettings

        results = run(
            list(request["targets"]),
            BenchSettings.from_dict({**request, "check_only": check_only}),
            progress=lambda done, total, message: emit(
                {"event": "progress", "done": done, "total": total, "message": message}
            ),
            on_result=lambda r: emit({"event": "result", "result": r.to_dict()}),
        )
        del results
        emit({"event": "done"})
        return 0
    except BaseException as exc:  # noqa: BLE001 - report anything, even SystemExit from user code
        emit(
            {
                "event": "error",
                "kind": "internal",
                "message": f"{type(exc).__name__}: {exc}",
                "traceback": traceback.format_exc(),
            }
        )
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
