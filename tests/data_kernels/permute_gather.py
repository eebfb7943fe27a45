"""A gather through a permutation: out[i] = src[perm[i]], perm a seeded random permutation, so
each lane's address comes from memory."""
import torch
import triton
import triton.language as tl


@triton.jit
def permute_gather(src_ptr, perm_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    idx = tl.load(perm_ptr + offs, mask=mask, other=0)
    x = tl.load(src_ptr + idx, mask=mask)
    tl.store(out_ptr + offs, x, mask=mask)


def example(device):
    n = 10_000
    g = torch.Generator().manual_seed(0)
    perm = torch.randperm(n, generator=g).to(device)
    src = torch.randn(n, device=device)
    out = torch.empty(n, device=device)
    permute_gather[(triton.cdiv(n, 512),)](src, perm, out, n, BLOCK=512)
    return out


if __name__ == "__main__":
    example("cuda")
