"""What `fix` gives, measured on a GPU, for kernels written as users write them (the fix issue's
two, and docs/fixes.md's vector add at a size that is not a multiple of 16): each run through
`fix(target="native")` at a size where memory traffic dominates, printing per finding the
candidates with the access width each compiled to, whether its promises held and outputs
matched under the interpreter, and its time (the example's launches replayed) against the
original's.

    python benchmarks/fix_unseen.py [--json out.json]     (needs a GPU)
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

HEAD = "import torch\nimport triton\nimport triton.language as tl\n\n\n"
KERNELS = {
    # rows of multiples of 64 elements whose bounds come from memory, walked 256 at a time
    "jagged_loop": HEAD + '''@triton.jit
def jagged_sum(values_ptr, offsets_ptr, out_ptr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    start = tl.load(offsets_ptr + row)
    end = tl.load(offsets_ptr + row + 1)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for i in range(start, end, BLOCK):
        cols = i + tl.arange(0, BLOCK)
        acc += tl.load(values_ptr + cols, mask=cols < end, other=0.0)
    tl.store(out_ptr + row, tl.sum(acc))


def example(device):
    lengths = torch.randint(1, 64, (16384,), generator=torch.Generator().manual_seed(0)) * 64
    offsets = torch.zeros(len(lengths) + 1, dtype=torch.int32)
    offsets[1:] = torch.cumsum(lengths, 0)
    values = torch.randn(int(offsets[-1]), device=device)
    out = torch.empty(len(lengths), device=device)
    jagged_sum[(len(lengths),)](values, offsets.to(device), out, BLOCK=256, num_warps=4)
    return out
''',
    # a run-time leading dimension of 1000 and a mask on 1000 columns
    "row_scale": HEAD + '''@triton.jit
def row_scale(x_ptr, y_ptr, ld, n_cols, scale, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * ld + cols, mask=mask)
    tl.store(y_ptr + row * ld + cols, x * scale, mask=mask)


def example(device):
    x = torch.randn(65536, 1000, device=device)
    y = torch.empty_like(x)
    row_scale[(x.shape[0],)](x, y, x.stride(0), x.shape[1], 2.0, BLOCK=1024)
    return y
''',
    # docs/fixes.md's vector add on 2^24 - 1 elements: no promise about n holds, the tail peels off
    "add_odd": (REPO / "kernels" / "add.py").read_text().replace(
        "return launch(*make_inputs(4096, device))", "return launch(*make_inputs((1 << 24) - 1, device))"),
}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json")
    ap.add_argument("--kernels", default=",".join(KERNELS))
    ns = ap.parse_args()
    from inspector.fixes import fix

    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in ns.kernels.split(","):
            path = Path(tmp) / f"{name}.py"
            path.write_text(KERNELS[name])
            report = fix(path, target="native", timeout=600)
            rec = report.original
            base = report.ms
            print(f"{name}: {rec.kernel} on {rec.device_name} (Triton {rec.triton_version}): "
                  + (f"{base * 1000:.1f} us as written" if base else f"not timed: {report.ms_note}"), flush=True)
            for ff in report.findings:
                if not ff.finding.code.endswith("_access"):
                    continue
                print(f"  line {ff.finding.line}: {ff.finding.code}")
                for t in ff.candidates[:4]:
                    width = t.measures.width_bits if t.measures else None
                    speed = f"{t.ms * 1000:.1f} us ({base / t.ms:.2f}x)" if t.ms and base else t.ms_note
                    print(f"    {t.title[:110]}\n      {width}-bit, holds {t.assumptions_hold}, outputs equal "
                          f"{t.checked}, {speed}")
                    out.append({"kernel": name, "line": ff.finding.line, "candidate": t.title, "width_bits": width,
                                "holds": t.assumptions_hold, "checked": t.checked, "ms": t.ms, "base_ms": base,
                                "device": rec.device_name, "triton": rec.triton_version})
    if ns.json:
        Path(ns.json).write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
