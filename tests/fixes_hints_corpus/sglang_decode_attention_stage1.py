# Source: sgl-project/sglang, python/sglang/srt/layers/attention/triton_ops/decode_attention.py
#         commit 03cd2ec4af85b66be8ef025238bc73c165416bdb (as stored in the code index)
# Licence: Apache-2.0 (file header; the file says it is adapted from ModelTC/lightllm)
# Excerpt: _fwd_kernel_stage1 and the @triton.jit helper tanh, verbatim. Launched as the
#          published _decode_att_m_fwd() does on CUDA: BLOCK_N = 64, num_stages = 2,
#          num_warps = 2 (GQA), BLOCK_DMODEL = next_power_of_2(Lk).
# Published hint: none.
# Lost facts (fp16 KV pool with head_dim 72, e.g. a SigLIP/DiT-style 1152/16 head, and
#   2 KV heads): the token loop runs over [split_kv_start, split_kv_end) derived from
#   kv_indptr loaded from memory, K/V rows are gathered through kv_indices, and the per-head
#   offsets cur_kv_head * stride_buf_kh / _vh use the run-time head stride 72 (multiple of 8,
#   not of 16 -> not specialised) -> alignment unknown. The q load (head stride 72) and the
#   fp32 Att_Out store (split stride Lv = 72) lose alignment the same way. The masks are
#   against constexpr Lk / Lv = 72 and are fine.
# TWIN: batch, n_heads, n_kv_heads, head_dim = 2, 4, 2, 72 => batch, n_heads, n_kv_heads, head_dim = 2, 4, 2, 71
# REFERENCE: + cur_kv_head * stride_buf_kh => + tl.multiple_of(cur_kv_head * stride_buf_kh, 8)
# REFERENCE: + cur_kv_head * stride_buf_vh => + tl.multiple_of(cur_kv_head * stride_buf_vh, 8)
# REFERENCE: off_q = cur_batch * stride_qbs + cur_head * stride_qh + offs_d => off_q = cur_batch * stride_qbs + tl.multiple_of(cur_head * stride_qh, 8) + offs_d
# REFERENCE: Att_Out + offs_mid_o, => Att_Out + tl.multiple_of(offs_mid_o, 4),
import torch
import triton
import triton.language as tl

_MIN_BLOCK_KV = 32


@triton.jit
def tanh(x):
    # Tanh is just a scaled sigmoid
    return 2 * tl.sigmoid(2 * x) - 1


@triton.jit
def _fwd_kernel_stage1(
    Q,
    K_Buffer,
    V_Buffer,
    sm_scale_withk,
    kv_indptr,
    kv_indices,
    Att_Out,
    Att_Lse,
    num_kv_splits,
    stride_qbs,
    stride_qh,
    stride_buf_kbs,
    stride_buf_kh,
    stride_buf_vbs,
    stride_buf_vh,
    stride_mid_ob,
    stride_mid_oh,
    stride_mid_os,
    kv_group_num: tl.constexpr,
    BLOCK_DMODEL: tl.constexpr,
    BLOCK_DV: tl.constexpr,
    BLOCK_N: tl.constexpr,
    MIN_BLOCK_KV: tl.constexpr,
    logit_cap: tl.constexpr,
    Lk: tl.constexpr,
    Lv: tl.constexpr,
    xai_temperature_len: tl.constexpr,
):
    cur_batch = tl.program_id(0)
    cur_head = tl.program_id(1)
    split_kv_id = tl.program_id(2)

    cur_kv_head = cur_head // kv_group_num

    offs_d = tl.arange(0, BLOCK_DMODEL)
    offs_dv = tl.arange(0, BLOCK_DV)
    mask_d = offs_d < Lk
    mask_dv = offs_dv < Lv

    cur_batch_kv_start_idx = tl.load(kv_indptr + cur_batch)
    cur_batch_seq_len = tl.load(kv_indptr + cur_batch + 1) - cur_batch_kv_start_idx
    kv_splits = tl.load(num_kv_splits + cur_batch)

    if xai_temperature_len > 0:
        offs_qidx = cur_batch_seq_len - 1
        xai_temperature_scale = 1.0 / tl.log2(float(xai_temperature_len))
        _qtemp = tl.log2(offs_qidx.to(tl.float32)) * xai_temperature_scale
        xai_temperature_reg = tl.where(offs_qidx > xai_temperature_len, _qtemp, 1.0)

    off_q = cur_batch * stride_qbs + cur_head * stride_qh + offs_d

    kv_len_per_split = (
        tl.cdiv(tl.cdiv(cur_batch_seq_len, kv_splits), MIN_BLOCK_KV) * MIN_BLOCK_KV
    )
    split_kv_start = kv_len_per_split * split_kv_id
    split_kv_end = tl.minimum(split_kv_start + kv_len_per_split, cur_batch_seq_len)

    e_max = -float("inf")
    e_sum = 0.0
    acc = tl.zeros([BLOCK_DV], dtype=tl.float32)

    if split_kv_end > split_kv_start:
        q = tl.load(Q + off_q, mask=mask_d, other=0.0)
        for start_n in range(split_kv_start, split_kv_end, BLOCK_N):
            offs_n = start_n + tl.arange(0, BLOCK_N)
            kv_loc = tl.load(
                kv_indices + cur_batch_kv_start_idx + offs_n,
                mask=offs_n < split_kv_end,
                other=0,
            )
            offs_buf_k = (
                kv_loc[:, None] * stride_buf_kbs
                + cur_kv_head * stride_buf_kh
                + offs_d[None, :]
            )
            k = tl.load(
                K_Buffer + offs_buf_k,
                mask=(offs_n[:, None] < split_kv_end) & (mask_d[None, :]),
                other=0.0,
            )
            qk = tl.sum(q[None, :] * k, 1)
            qk *= sm_scale_withk

            if logit_cap > 0:
                qk = logit_cap * tanh(qk / logit_cap)

            if xai_temperature_len > 0:
                qk *= xai_temperature_reg

            qk = tl.where(offs_n < split_kv_end, qk, float("-inf"))

            offs_buf_v = (
                kv_loc[:, None] * stride_buf_vbs
                + cur_kv_head * stride_buf_vh
                + offs_dv[None, :]
            )
            v = tl.load(
                V_Buffer + offs_buf_v,
                mask=(offs_n[:, None] < split_kv_end) & (mask_dv[None, :]),
                other=0.0,
            )

            n_e_max = tl.maximum(tl.max(qk, 0), e_max)
            re_scale = tl.exp(e_max - n_e_max)
            p = tl.exp(qk - n_e_max)
            acc *= re_scale
            acc += tl.sum(p[:, None] * v, 0)

            e_sum = e_sum * re_scale + tl.sum(p, 0)
            e_max = n_e_max

        offs_mid_o = (
            cur_batch * stride_mid_ob
            + cur_head * stride_mid_oh
            + split_kv_id * stride_mid_os
            + offs_dv
        )

        tl.store(
            Att_Out + offs_mid_o,
            acc / e_sum,
            mask=(mask_dv),
        )

        offs_mid_o_1 = (
            cur_batch * stride_mid_ob
            + cur_head * stride_mid_oh
            + split_kv_id * stride_mid_os
        ) // Lv

        tl.store(
            Att_Lse + offs_mid_o_1,
            e_max + tl.log(e_sum),
        )


def example(device):
    torch.manual_seed(0)
    batch, n_heads, n_kv_heads, head_dim = 2, 4, 2, 72
    pool_size, max_kv_splits = 128, 2
    seq_lens = torch.tensor([50, 77])
    dtype = torch.float16
    q = torch.randn(batch, n_heads, head_dim, device=device, dtype=dtype)
    k_buffer = torch.randn(pool_size, n_kv_heads, head_dim, device=device, dtype=dtype)
    v_buffer = torch.randn(pool_size, n_kv_heads, head_dim, device=device, dtype=dtype)
    kv_indptr = torch.zeros(batch + 1, dtype=torch.int32)
    kv_indptr[1:] = torch.cumsum(seq_lens, 0)
    kv_indices = torch.randperm(pool_size)[:int(seq_lens.sum())].to(torch.int64).to(device)  # paged (page size 1)
    kv_indptr = kv_indptr.to(device)
    num_kv_splits = torch.full((batch, ), max_kv_splits, dtype=torch.int32, device=device)
    att_out = torch.empty(batch, n_heads, max_kv_splits, head_dim, device=device, dtype=torch.float32)
    att_lse = torch.empty(batch, n_heads, max_kv_splits, device=device, dtype=torch.float32)
    sm_scale = head_dim**-0.5
    grid = (batch, n_heads, max_kv_splits)
    _fwd_kernel_stage1[grid](q, k_buffer, v_buffer, sm_scale, kv_indptr, kv_indices, att_out, att_lse, num_kv_splits,
                             q.stride(0), q.stride(1), k_buffer.stride(0), k_buffer.stride(1), v_buffer.stride(0),
                             v_buffer.stride(1), att_out.stride(0), att_out.stride(1), att_out.stride(2),
                             kv_group_num=n_heads // n_kv_heads, BLOCK_DMODEL=triton.next_power_of_2(head_dim),
                             BLOCK_DV=triton.next_power_of_2(head_dim), BLOCK_N=64, MIN_BLOCK_KV=_MIN_BLOCK_KV,
                             logit_cap=0.0, xai_temperature_len=-1, num_warps=2, num_stages=2, Lk=head_dim,
                             Lv=head_dim)
    # combine the splits and compare with a dense reference
    w = torch.softmax(att_lse, dim=-1)
    o = (att_out * w[..., None]).sum(2)
    err = 0.0
    for b in range(batch):
        idx = kv_indices[int(kv_indptr[b]):int(kv_indptr[b + 1])]
        kk = k_buffer[idx].float().repeat_interleave(n_heads // n_kv_heads, 1)
        vv = v_buffer[idx].float().repeat_interleave(n_heads // n_kv_heads, 1)
        s = torch.einsum("hd,thd->ht", q[b].float(), kk) * sm_scale
        ref = torch.einsum("ht,thd->hd", torch.softmax(s, -1), vv)
        err = max(err, float((o[b] - ref).abs().max()))
    return err
