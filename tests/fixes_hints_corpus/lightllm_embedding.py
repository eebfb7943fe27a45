# Source: ModelTC/lightllm, lightllm/models/llama/triton_kernel/embedding.py
#         commit 9bf04aeb1e7789186b056baac4b3ae00624687dd (last commit touching the file;
#         snapshot HEAD fc72ffab9a3455cfb571f22d45ab777cc29de0de)
# Licence: Apache-2.0 (lightllm LICENSE)
# Excerpt: embedding_kernel, verbatim except for the removed hint below. Launched as the
#          published embedding() wrapper does (BLOCK_N = 64, BLOCK_NN = 1, num_warps = 1,
#          BLOCK_DMODEL = next_power_of_2(hidden)); this is the vocab-parallel lookup.
# Published hint (REMOVED here): `start_nn = tl.multiple_of(start_nn, BLOCK_NN)` as the
#   first statement of the loop body. It is inert for this problem (BLOCK_NN = 1) and is
#   NOT the fix; removing it does not change the generated code (checked on sm_90).
# Lost facts: the embedding row is gathered through token ids loaded from input_ids:
#   `token_ids[:, None] * stride_weight_seq` with a run-time row stride (hidden = 300 fp32,
#   a multiple of 4 but not of 16 -> not specialised) -> row alignment unknown; the output
#   row `offs_seq[:, None] * stride_out_seq` likewise. dim_mask is against the constexpr
#   hiden_size, so the masks are fine.
# Note: the hint is placed on the 1-D product before the [:, None]. Writing it as
#   tl.multiple_of(token_ids[:, None] * stride_weight_seq, (4, 4)) makes Triton 3.9 abort
#   (AxisInfo assertion `divisibility.size() == contiguity.size()`), because with
#   BLOCK_NN = 1 the 1x1 product is folded to a scalar that keeps a 2-element hint.
# TWIN: V, hidden, n_ctx = 64, 300, 20 => V, hidden, n_ctx = 64, 301, 20
# REFERENCE: vecs = tl.load(weight + token_ids[:, None] * stride_weight_seq + offs_d[None, :], mask=load_mask, other=0.0) => vecs = tl.load(weight + tl.multiple_of(token_ids * stride_weight_seq, 4)[:, None] + offs_d[None, :], mask=load_mask, other=0.0)
# REFERENCE: tl.store(out + offs_seq[:, None] * stride_out_seq + offs_d[None, :], vecs, mask=store_mask) => tl.store(out + tl.multiple_of(offs_seq * stride_out_seq, 4)[:, None] + offs_d[None, :], vecs, mask=store_mask)
import torch
import triton
import triton.language as tl


@triton.jit
def embedding_kernel(
    weight,
    input_ids,
    out,
    vob_start_id,
    vob_end_id,
    stride_weight_seq,
    stride_out_seq,
    n_ctx,
    hiden_size: tl.constexpr,
    BLOCK_DMODEL: tl.constexpr,
    BLOCK_N: tl.constexpr,  # 32
    BLOCK_NN: tl.constexpr,
):
    start_n = tl.program_id(0) * BLOCK_N

    offs_nn = start_n + tl.arange(0, BLOCK_NN)
    offs_d = tl.arange(0, BLOCK_DMODEL)

    for start_nn in range(0, BLOCK_N, BLOCK_NN):
        offs_seq = start_nn + offs_nn
        n_ctx_mask = offs_seq < n_ctx
        token_ids = tl.load(input_ids + offs_seq, mask=n_ctx_mask, other=vob_end_id)
        id_mask = (token_ids >= vob_start_id) & (token_ids < vob_end_id)
        token_ids = token_ids - vob_start_id
        dim_mask = offs_d < hiden_size
        load_mask = id_mask[:, None] & dim_mask[None, :]
        store_mask = n_ctx_mask[:, None] & dim_mask[None, :]
        vecs = tl.load(weight + token_ids[:, None] * stride_weight_seq + offs_d[None, :], mask=load_mask, other=0.0)
        tl.store(out + offs_seq[:, None] * stride_out_seq + offs_d[None, :], vecs, mask=store_mask)


def example(device):
    torch.manual_seed(0)
    V, hidden, n_ctx = 64, 300, 20
    tp, rank = 2, 1  # vocab-parallel shard: this rank owns ids [32, 64)
    vob_start_id, vob_end_id = V // tp * rank, V // tp * (rank + 1)
    weight = torch.randn(vob_end_id - vob_start_id, hidden, device=device, dtype=torch.float32)
    input_ids = torch.randint(0, V, (n_ctx, ), device=device, dtype=torch.int64)
    out = torch.empty(n_ctx, hidden, device=device, dtype=torch.float32)
    BLOCK_N = 64
    grid = (triton.cdiv(n_ctx, BLOCK_N), 1, 1)
    embedding_kernel[grid](weight, input_ids, out, vob_start_id, vob_end_id, weight.stride(0), out.stride(0),
                           n_ctx=n_ctx, hiden_size=hidden, BLOCK_DMODEL=triton.next_power_of_2(hidden),
                           BLOCK_N=BLOCK_N, BLOCK_NN=1, num_warps=1, num_stages=1)
    local = (input_ids >= vob_start_id) & (input_ids < vob_end_id)
    ref = torch.zeros_like(out)
    ref[local] = weight[input_ids[local] - vob_start_id]
    return float((out - ref).abs().max())
