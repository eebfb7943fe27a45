"""How much the gallery's timer moves inside one process, trial after trial (GPU only).

    PYTHONPATH=. python benchmarks/graph_timer_trials.py [--trials 6]

Each trial draws fresh inputs and fresh copies (as each round of the sweep does) and times the
Triton kernel with `inspector.bench.timing.bench_graph_time`, at replays of 2 and 10 ms. Run it
twice to see the spread between processes too. Then it checks what a failed capture leaves
behind (a call that reads a value back): the context must still work.
"""

from __future__ import annotations

import argparse
import traceback

import torch

from inspector.bench import protocol
from inspector.bench import timing as runner

CASES = [("matmul", "bf16", (2048, 2048, 2048)), ("matmul", "fp16+leaky_relu", (4096,) * 3), ("add", "", 2**20)]


def trials(name: str, variant: str, size, target_ms: float, n: int) -> None:
    spec = protocol.load_spec(name, None)
    kw = spec.variants.get(variant, {})
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    out, k = [], 1
    for _ in range(n):
        inputs = tuple(protocol.call(spec.make_inputs, size, "cuda", **kw))
        protocol.bind(spec.launch, *inputs, **kw)()
        torch.cuda.synchronize()
        k = runner.rotation_count(runner.nbytes(inputs), l2)
        sets = [inputs] + [runner.clone(inputs) for _ in range(k - 1)]
        calls = [protocol.bind(spec.launch, *s, **kw) for s in sets]
        runner.GRAPH_TARGET_MS = target_ms
        out.append(runner.bench_graph_time(calls, 50, [0.5, 0.2, 0.8], 25)[0] * 1e3)
        del sets, calls, inputs
        torch.cuda.empty_cache()
    print(f"{name} {variant} {size} replays of {target_ms} ms, {k} input sets: " + " ".join(f"{v:.2f}" for v in out) + " us")


def failed_capture() -> None:
    x = torch.randn(2**20, device="cuda")

    def reads_back():
        assert (x * 2).isfinite().all().item()

    try:
        runner.bench_graph_time([reads_back], 20, [0.5, 0.2, 0.8], 5)
    except Exception as exc:  # noqa: BLE001 - what it raises is the point
        print("capture failed:", type(exc).__name__, str(exc).splitlines()[0])
    torch.cuda.synchronize()
    print("after it: sync ok, work ok:", float((x * 2).sum()) == float(x.sum() * 2))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=6)
    args = ap.parse_args()
    for name, variant, size in CASES:
        for target in (2.0, 10.0):
            try:
                trials(name, variant, size, target, args.trials)
            except Exception:  # noqa: BLE001
                traceback.print_exc()
    failed_capture()


if __name__ == "__main__":
    main()
