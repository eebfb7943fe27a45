"""A paged-attention-style read: each sequence's keys live in fixed-size blocks scattered through
a cache, found through a block table; each program sums its sequence's keys, block by block, up
to the sequence's length (lengths 37, 300, 16 and 129 tokens, not multiples of the block)."""
import torch
import triton
import triton.language as tl


@triton.jit
def paged_key_sum(cache_ptr, table_ptr, lens_ptr, out_ptr, max_blocks, D: tl.constexpr,
                  BLOCK_SIZE: tl.constexpr):
    seq = tl.program_id(0)
    length = tl.load(lens_ptr + seq)
    tok = tl.arange(0, BLOCK_SIZE)
    dim = tl.arange(0, D)
    acc = tl.zeros([D], dtype=tl.float32)
    for b in range(0, tl.cdiv(length, BLOCK_SIZE)):
        block = tl.load(table_ptr + seq * max_blocks + b)
        rows = block * BLOCK_SIZE + tok
        keep = b * BLOCK_SIZE + tok < length
        k = tl.load(cache_ptr + rows[:, None] * D + dim[None, :], mask=keep[:, None], other=0.0)
        acc += tl.sum(k, axis=0)
    tl.store(out_ptr + seq * D + dim, acc)


def example(device):
    block_size, d = 16, 64
    lens = torch.tensor([37, 300, 16, 129], dtype=torch.int32)
    blocks = [(int(n) + block_size - 1) // block_size for n in lens]
    max_blocks = max(blocks)
    g = torch.Generator().manual_seed(0)
    order = torch.randperm(sum(blocks) + 8, generator=g)  # the blocks, scattered through a bigger cache
    table = torch.zeros(len(lens), max_blocks, dtype=torch.int32)
    used = 0
    for s, nb in enumerate(blocks):
        table[s, :nb] = order[used:used + nb].to(torch.int32)
        used += nb
    cache = torch.randn(len(order) * block_size, d, device=device)
    out = torch.empty(len(lens), d, device=device)
    paged_key_sum[(len(lens),)](cache, table.to(device), lens.to(device), out, max_blocks, D=d,
                                BLOCK_SIZE=block_size)
    return out


if __name__ == "__main__":
    example("cuda")
