"""A user's jagged row sum as a file's text: row starts come from memory, so the compiler cannot
know their alignment and the loads go scalar. The kernel is the coalescing cases' `jagged_sum`
(coalescing_cases.py beside this file, where Nsight Compute measures it); the fix tests, the browser's
fix test and benchmarks/fix_measured.py write it out with an example of their own rows and launch."""

from __future__ import annotations

from pathlib import Path

CASES = Path(__file__).resolve().parent / "coalescing_cases.py"

_HEADER = '''import torch
import triton
import triton.language as tl


'''
_EXAMPLE = '''

def example(device):
    lengths = {lengths}
    offsets = torch.cat([torch.zeros(1, dtype=torch.int64), lengths.cumsum(0)]).to(torch.int32).to(device)
    values = torch.randn(int(lengths.sum()), device=device)
    out = torch.empty(len(lengths), device=device)
    jagged_sum[(len(lengths),)](values, offsets, out, BLOCK={block}, num_warps={num_warps})
'''


def jagged_kernel() -> str:
    """The coalescing cases' `jagged_sum` definition, its decorator first, ending in a newline."""
    text = CASES.read_text()
    start = text.index("@triton.jit\ndef jagged_sum(")
    return text[start:text.index("\n\n", start) + 1]


def jagged_source(lengths: str, block: int = 1024, num_warps: int = 4) -> str:
    """The file's text; `lengths` is the example's expression for the row lengths (a 1-D tensor)."""
    return _HEADER + jagged_kernel() + _EXAMPLE.format(lengths=lengths, block=block, num_warps=num_warps)
