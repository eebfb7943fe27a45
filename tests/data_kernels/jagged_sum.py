"""A jagged row sum: each program sums one row of a packed ragged tensor, rows delimited by an
offsets tensor (rows of 256, 1000, 64, 517, 3 and 130 elements), so the loop's bounds come from
memory. Profiled on made-up offsets every row is empty."""
import torch
import triton
import triton.language as tl


@triton.jit
def jagged_row_sum(values_ptr, offsets_ptr, out_ptr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    start = tl.load(offsets_ptr + row)
    end = tl.load(offsets_ptr + row + 1)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for i in range(start, end, BLOCK):
        cols = i + tl.arange(0, BLOCK)
        acc += tl.load(values_ptr + cols, mask=cols < end, other=0.0)
    tl.store(out_ptr + row, tl.sum(acc))


def example(device):
    lengths = torch.tensor([256, 1000, 64, 517, 3, 130])
    offsets = torch.zeros(len(lengths) + 1, dtype=torch.int32)
    offsets[1:] = torch.cumsum(lengths, 0)
    offsets = offsets.to(device)
    values = torch.randn(int(lengths.sum()), device=device)
    out = torch.empty(len(lengths), device=device)
    jagged_row_sum[(len(lengths),)](values, offsets, out, BLOCK=256)
    return out


if __name__ == "__main__":
    example("cuda")
