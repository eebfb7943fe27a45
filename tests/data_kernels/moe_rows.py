"""A sorted-segment (MoE-style) row gather: tokens sorted by expert, each expert's segment padded
to a multiple of BLOCK_M with a sentinel id (num_tokens * top_k); each program copies BLOCK_M
routed rows of the activations (row id // top_k) into its block of the output."""
import torch
import triton
import triton.language as tl


@triton.jit
def moe_gather_rows(a_ptr, sorted_ids_ptr, out_ptr, num_valid, K: tl.constexpr, TOP_K: tl.constexpr,
                    BLOCK_M: tl.constexpr):
    pid = tl.program_id(0)
    offs_m = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    ids = tl.load(sorted_ids_ptr + offs_m)
    valid = ids < num_valid
    cols = tl.arange(0, K)
    rows = tl.load(a_ptr + (ids // TOP_K)[:, None] * K + cols[None, :], mask=valid[:, None], other=0.0)
    tl.store(out_ptr + offs_m[:, None] * K + cols[None, :], rows, mask=valid[:, None])


def example(device):
    tokens, top_k, experts, block_m, k = 100, 2, 8, 16, 128
    g = torch.Generator().manual_seed(0)
    routed = torch.randint(0, experts, (tokens * top_k,), generator=g)
    segments = []
    for e in range(experts):
        ids = (routed == e).nonzero().flatten()
        pad = (-len(ids)) % block_m
        segments.append(torch.cat([ids, torch.full((pad,), tokens * top_k)]))
    sorted_ids = torch.cat(segments).to(torch.int32)
    a = torch.randn(tokens, k, device=device)
    out = torch.zeros(len(sorted_ids), k, device=device)
    moe_gather_rows[(len(sorted_ids) // block_m,)](a, sorted_ids.to(device), out, tokens * top_k, K=k,
                                                   TOP_K=top_k, BLOCK_M=block_m)
    return out


if __name__ == "__main__":
    example("cuda")
