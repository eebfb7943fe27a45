# Source: vllm-project/vllm, vllm/attention/ops/chunked_prefill_paged_decode.py
#         commit 06964acede469958cdc3eab8f39a2ddca24d0f7f (as stored in the code index)
# Licence: Apache-2.0 (SPDX header of the file)
# Excerpt: kernel_paged_attention_2d and the @triton.jit helper cdiv_fn, verbatim. Cut: the
#          vLLM-internal @jitcache decorator (see the note on its assume_const list
#          below). Launched as chunked_prefill_paged_decode() does, except that the grid is
#          (num_seqs, num_kv_heads) instead of (4096, num_kv_heads) to keep the interpreter
#          fast (programs with seq_idx >= num_seqs return immediately).
# Published hint: none.
# Lost facts: physical KV blocks are gathered through block_tables. All cache strides are
#   annotated `tl.int64`; Triton 3.9 still gives such arguments the divisible-by-16
#   specialisation but not the equal-to-1 one, so
#   - the unit strides stride_k_cache_4 and stride_v_cache_3 are unknown at compile time and
#     the K and V tiles have no known contiguity (V: along the block dimension, K: along the
#     packed x dimension);
#   - the key cache layout is [num_blks, num_kv_heads, head_size // x, blk_size, x] with
#     x = 16 bytes / element size, so stride_k_cache_3 == x == 8 for fp16: never a multiple
#     of 16, never specialised, and each 8-element group's 16-byte alignment is unknown.
#   Result: every K and V element is loaded 2 bytes at a time, for any fp16 model (checked
#   with head_size 128). The cut @jitcache decorator's assume_const list names
#   stride_k_cache_4 but not stride_k_cache_3 or stride_v_cache_3 (stride_v_cache_2 is
#   listed twice).
# TWIN: x = 8 => x = 4
# REFERENCE: offs_n[None, :] * stride_k_cache_3 + => tl.multiple_of(offs_n[None, :] * stride_k_cache_3, (8, 8)) +
# REFERENCE: (offs_d[:, None] % x) * stride_k_cache_4) => tl.max_contiguous(tl.multiple_of((offs_d[:, None] % x) * stride_k_cache_4, (x, 1)), (x, 1)))
# REFERENCE: offs_n[:, None] * stride_v_cache_3) => tl.max_contiguous(tl.multiple_of(offs_n[:, None] * stride_v_cache_3, (BLOCK_SIZE, 1)), (BLOCK_SIZE, 1)))
import torch
import triton
import triton.language as tl


@triton.jit
def cdiv_fn(x, y):
    return (x + y - 1) // y


@triton.jit
def kernel_paged_attention_2d(
    output_ptr,  # [num_tokens, num_query_heads, head_size]
    query_ptr,  # [num_tokens, num_query_heads, head_size]
    key_cache_ptr,  # [num_blks, num_kv_heads, head_size // x, blk_size, x]
    value_cache_ptr,  # [num_blks, num_kv_heads, head_size, blk_size]
    block_tables_ptr,  # [num_seqs, max_num_blocks_per_seq]
    seq_lens_ptr,  # [num_seqs]
    alibi_slopes_ptr,  # [num_query_heads]
    scale: float,  # float32
    k_scale: float,  # float32
    v_scale: float,  # float32
    num_query_heads: tl.constexpr,  # int
    num_queries_per_kv: tl.constexpr,  # int
    num_queries_per_kv_padded: tl.constexpr,  # int
    block_table_stride: tl.int64,  # int
    query_stride_0: tl.int64,  # int
    query_stride_1: tl.int64,  # int, should be equal to head_size
    output_stride_0: tl.int64,  # int
    output_stride_1: tl.int64,  # int, should be equal to head_size
    BLOCK_SIZE: tl.constexpr,  # int
    HEAD_SIZE: tl.constexpr,  # int
    HEAD_SIZE_PADDED: tl.constexpr,  # int, must be power of 2
    USE_ALIBI_SLOPES: tl.constexpr,  # bool
    SLIDING_WINDOW: tl.constexpr,  # int
    x: tl.constexpr,  # int
    stride_k_cache_0: tl.int64,  # int
    stride_k_cache_1: tl.int64,  # int
    stride_k_cache_2: tl.int64,  # int
    stride_k_cache_3: tl.int64,  # int
    stride_k_cache_4: tl.int64,  # int
    stride_v_cache_0: tl.int64,  # int
    stride_v_cache_1: tl.int64,  # int
    stride_v_cache_2: tl.int64,  # int
    stride_v_cache_3: tl.int64,  # int
    filter_by_query_len: tl.constexpr,  # bool
    query_start_len_ptr,  # [num_seqs+1]
    num_seqs: int,
):
    seq_idx = tl.program_id(0)
    if seq_idx >= num_seqs:
        return
    kv_head_idx = tl.program_id(1)

    if filter_by_query_len:
        cur_batch_in_all_start_index = tl.load(query_start_len_ptr + seq_idx)
        cur_batch_in_all_stop_index = tl.load(query_start_len_ptr + seq_idx +
                                              1)
        cur_batch_query_len = (cur_batch_in_all_stop_index -
                               cur_batch_in_all_start_index)
        if cur_batch_query_len > 1:
            return
    else:
        cur_batch_in_all_start_index = seq_idx

    query_head_idx = kv_head_idx * num_queries_per_kv + tl.arange(
        0, num_queries_per_kv_padded)

    query_offset = (cur_batch_in_all_start_index * query_stride_0 +
                    query_head_idx[:, None] * query_stride_1)

    head_mask = query_head_idx < (kv_head_idx + 1) * num_queries_per_kv
    head_mask = head_mask & (query_head_idx < num_query_heads)

    dim_mask = tl.where(tl.arange(0, HEAD_SIZE_PADDED) < HEAD_SIZE, 1,
                        0).to(tl.int1)

    # Q : (num_queries_per_kv, HEAD_SIZE,)
    Q = tl.load(
        query_ptr + query_offset + tl.arange(0, HEAD_SIZE_PADDED)[None, :],
        mask=dim_mask[None, :] & head_mask[:, None],
        other=0.0,
    )

    block_table_offset = seq_idx * block_table_stride

    M = tl.full([num_queries_per_kv_padded], float("-inf"), dtype=tl.float32)
    L = tl.full([num_queries_per_kv_padded], 1.0, dtype=tl.float32)
    acc = tl.zeros([num_queries_per_kv_padded, HEAD_SIZE_PADDED],
                   dtype=tl.float32)

    # sequence len for this particular sequence
    seq_len = tl.load(seq_lens_ptr + seq_idx)

    # alibi slope for this head
    if USE_ALIBI_SLOPES:
        alibi_slope = tl.load(alibi_slopes_ptr + query_head_idx,
                              mask=head_mask,
                              other=0.0)

    num_blocks = cdiv_fn(seq_len, BLOCK_SIZE)

    # iterate through tiles
    for j in range(0, num_blocks):

        physical_block_idx = tl.load(block_tables_ptr + block_table_offset + j)

        offs_n = tl.arange(0, BLOCK_SIZE)
        offs_d = tl.arange(0, HEAD_SIZE_PADDED)

        v_offset = (physical_block_idx * stride_v_cache_0 +
                    kv_head_idx * stride_v_cache_1 +
                    offs_d[None, :] * stride_v_cache_2 +
                    offs_n[:, None] * stride_v_cache_3)

        k_offset = (physical_block_idx * stride_k_cache_0 +
                    kv_head_idx * stride_k_cache_1 +
                    (offs_d[:, None] // x) * stride_k_cache_2 +
                    offs_n[None, :] * stride_k_cache_3 +
                    (offs_d[:, None] % x) * stride_k_cache_4)

        # K : (HEAD_SIZE, BLOCK_SIZE)
        K_load = tl.load(key_cache_ptr + k_offset,
                         mask=dim_mask[:, None],
                         other=0.0)

        if K_load.dtype.is_fp8():
            K = (K_load.to(tl.float32) * tl.load(k_scale)).to(Q.dtype)
        else:
            K = K_load

        # V : (BLOCK_SIZE, HEAD_SIZE)
        V_load = tl.load(value_cache_ptr + v_offset,
                         mask=dim_mask[None, :],
                         other=0.0)

        if V_load.dtype.is_fp8():
            V = (V_load.to(tl.float32) * tl.load(v_scale)).to(Q.dtype)
        else:
            V = V_load

        seq_offset = j * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
        boundary = tl.full([BLOCK_SIZE], seq_len, dtype=tl.int32)
        seq_mask = seq_offset[None, :] < boundary

        # S : (num_queries_per_kv, BLOCK_SIZE,)
        S = tl.where(head_mask[:, None] & seq_mask, 0.0,
                     float("-inf")).to(tl.float32)
        S += scale * tl.dot(Q, K)

        context_len = seq_len - 1

        if SLIDING_WINDOW > 0:
            S = tl.where((context_len - seq_offset) < SLIDING_WINDOW, S,
                         -10000)

        if USE_ALIBI_SLOPES:
            S += alibi_slope[:, None] * (seq_offset - context_len)

        # compute running maximum
        # m_j : (num_queries_per_kv,)
        m_j = tl.maximum(M, tl.max(S, axis=1))

        # P : (num_queries_per_kv, BLOCK_SIZE,)
        P = tl.exp(S - m_j[:, None])

        # l_j : (num_queries_per_kv,)
        l_j = tl.sum(P, axis=1)

        # alpha : (num_queries_per_kv, )
        alpha = tl.exp(M - m_j)

        # acc : (num_queries_per_kv, BLOCK_SIZE,)
        acc = acc * alpha[:, None]

        # update constants
        L = L * alpha + l_j
        M = m_j

        # acc : (num_queries_per_kv, BLOCK_SIZE,)
        acc += tl.dot(P.to(V.dtype), V)

    # epilogue
    acc = acc / L[:, None]

    output_offset = (cur_batch_in_all_start_index * output_stride_0 +
                     query_head_idx * output_stride_1)

    tl.store(
        output_ptr + output_offset[:, None] +
        tl.arange(0, HEAD_SIZE_PADDED)[None, :],
        acc,
        mask=dim_mask[None, :] & head_mask[:, None],
    )


def example(device):
    torch.manual_seed(0)
    num_seqs, num_query_heads, num_kv_heads, head_size = 3, 4, 2, 128
    block_size, num_blks, max_blocks_per_seq = 16, 16, 4
    x = 8  # 16 bytes / sizeof(fp16), vLLM's key-cache packing factor
    dtype = torch.float16
    seq_lens = torch.tensor([5, 33, 60], dtype=torch.int32, device=device)
    query = torch.randn(num_seqs, num_query_heads, head_size, device=device, dtype=dtype)
    output = torch.empty_like(query)
    key_cache = torch.randn(num_blks, num_kv_heads, head_size // x, block_size, x, device=device, dtype=dtype)
    value_cache = torch.randn(num_blks, num_kv_heads, head_size, block_size, device=device, dtype=dtype)
    block_table = torch.randperm(num_blks)[:num_seqs * max_blocks_per_seq].view(num_seqs, max_blocks_per_seq)
    block_table = block_table.to(torch.int32).to(device)
    query_start_loc = torch.arange(num_seqs + 1, dtype=torch.int32, device=device)  # decode: 1 query token each
    num_queries_per_kv = num_query_heads // num_kv_heads
    sm_scale = head_size**-0.5
    kernel_paged_attention_2d[(num_seqs, num_kv_heads)](
        output_ptr=output, query_ptr=query, key_cache_ptr=key_cache, value_cache_ptr=value_cache,
        block_tables_ptr=block_table, seq_lens_ptr=seq_lens, alibi_slopes_ptr=None, scale=sm_scale, k_scale=1.0,
        v_scale=1.0, num_query_heads=num_query_heads, num_queries_per_kv=num_queries_per_kv,
        num_queries_per_kv_padded=max(triton.next_power_of_2(num_queries_per_kv), 16),
        block_table_stride=block_table.stride(0), query_stride_0=query.stride(0), query_stride_1=query.stride(1),
        output_stride_0=output.stride(0), output_stride_1=output.stride(1), BLOCK_SIZE=block_size,
        HEAD_SIZE=head_size, HEAD_SIZE_PADDED=triton.next_power_of_2(head_size), USE_ALIBI_SLOPES=False,
        SLIDING_WINDOW=0, x=key_cache.shape[4], stride_k_cache_0=key_cache.stride(0),
        stride_k_cache_1=key_cache.stride(1), stride_k_cache_2=key_cache.stride(2),
        stride_k_cache_3=key_cache.stride(3), stride_k_cache_4=key_cache.stride(4),
        stride_v_cache_0=value_cache.stride(0), stride_v_cache_1=value_cache.stride(1),
        stride_v_cache_2=value_cache.stride(2), stride_v_cache_3=value_cache.stride(3), filter_by_query_len=True,
        query_start_len_ptr=query_start_loc, num_seqs=num_seqs, num_warps=4)
    err = 0.0
    for s in range(num_seqs):
        n = int(seq_lens[s])
        blocks = block_table[s]
        k = key_cache[blocks.long()].permute(0, 3, 1, 2, 4).reshape(-1, num_kv_heads, head_size)[:n]
        v = value_cache[blocks.long()].permute(0, 3, 1, 2).reshape(-1, num_kv_heads, head_size)[:n]
        k = k.float().repeat_interleave(num_queries_per_kv, 1)
        v = v.float().repeat_interleave(num_queries_per_kv, 1)
        p = torch.softmax(torch.einsum("hd,thd->ht", query[s].float(), k) * sm_scale, -1)
        err = max(err, float((torch.einsum("ht,thd->hd", p, v) - output[s].float()).abs().max()))
    return err
