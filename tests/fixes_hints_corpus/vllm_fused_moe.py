# Source: vllm-project/vllm, vllm/model_executor/layers/fused_moe/fused_moe.py
#         commit 000d1458098ebf47491dad470d164d443ab18a9c (as stored in the code index)
# Licence: Apache-2.0 (SPDX header of the file)
# Excerpt: fused_moe_kernel, unquantised path. Cut: the fp8/int8 quantisation parameters
#          (a_scale_ptr, b_scale_ptr, stride_asm/ask/bse/bsk/bsn, group_n/k, use_fp8_w8a8,
#          use_int8_w8a8, use_int8_w8a16, per_channel_quant) and the branches that use them,
#          the docstring, and the expert-parallel `off_experts == -1` early exit (see
#          vllm_moe_write_zeros.py). Every remaining line is as published.
# Published hint: none.
# Lost facts (fp16, K = 360: e.g. gpt-oss-120b's w2 GEMM under TP=8, intermediate 2880/8):
#   - A rows are gathered through sorted_token_ids: `offs_token[:, None] // top_k * stride_am`
#     with stride_am = K = 360 (not a multiple of 16 -> not specialised) -> alignment unknown;
#   - B rows: `offs_bn[None, :] * stride_bn` with stride_bn = K = 360 -> alignment unknown;
#   - the K masks `offs_k < K - k * BLOCK_SIZE_K` with run-time K -> constancy 1.
#   K = 360 is a multiple of 8 fp16 elements (16 bytes), so 128-bit loads are legal.
# TWIN: M, K, N, E, top_k = 8, 360, 64, 4, 2 => M, K, N, E, top_k = 8, 362, 64, 4, 2
# REFERENCE: a_ptrs = a_ptr + (offs_token[:, None] // top_k * stride_am + => a_ptrs = a_ptr + (tl.multiple_of(offs_token[:, None] // top_k * stride_am, (8, 8)) +
# REFERENCE: offs_bn[None, :] * stride_bn) => tl.multiple_of(offs_bn[None, :] * stride_bn, (8, 8)))
# REFERENCE: (offs_k[None, :] < K - k * BLOCK_SIZE_K), => tl.max_constancy(offs_k[None, :] < K - k * BLOCK_SIZE_K, (1, 8)),
# REFERENCE: mask=offs_k[:, None] < K - k * BLOCK_SIZE_K, => mask=tl.max_constancy(offs_k[:, None] < K - k * BLOCK_SIZE_K, (8, 1)),
import torch
import triton
import triton.language as tl


@triton.jit
def fused_moe_kernel(
    # Pointers to matrices
    a_ptr,
    b_ptr,
    c_ptr,
    topk_weights_ptr,
    sorted_token_ids_ptr,
    expert_ids_ptr,
    num_tokens_post_padded_ptr,
    # Matrix dimensions
    N,
    K,
    EM,
    num_valid_tokens,
    # The stride variables represent how much to increase the ptr by when
    # moving by 1 element in a particular dimension. E.g. `stride_am` is
    # how much to increase `a_ptr` by to get the element one row down
    # (A has M rows).
    stride_am,
    stride_ak,
    stride_be,
    stride_bk,
    stride_bn,
    stride_cm,
    stride_cn,
    # Meta-parameters
    BLOCK_SIZE_M: tl.constexpr,
    BLOCK_SIZE_N: tl.constexpr,
    BLOCK_SIZE_K: tl.constexpr,
    GROUP_SIZE_M: tl.constexpr,
    MUL_ROUTED_WEIGHT: tl.constexpr,
    top_k: tl.constexpr,
    compute_type: tl.constexpr,
):
    # -----------------------------------------------------------
    # Map program ids `pid` to the block of C it should compute.
    # This is done in a grouped ordering to promote L2 data reuse.
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(EM, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    # ----------------------------------------------------------
    # Create pointers for the first blocks of A and B.
    # We will advance this pointer as we move in the K direction
    # and accumulate
    # `a_ptrs` is a block of [BLOCK_SIZE_M, BLOCK_SIZE_K] pointers
    # `b_ptrs` is a block of [BLOCK_SIZE_K, BLOCK_SIZE_N] pointers
    num_tokens_post_padded = tl.load(num_tokens_post_padded_ptr)
    if pid_m * BLOCK_SIZE_M >= num_tokens_post_padded:
        return
    offs_token_id = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M).to(
        tl.int64)
    offs_token = tl.load(sorted_token_ids_ptr + offs_token_id)
    token_mask = offs_token < num_valid_tokens

    off_experts = tl.load(expert_ids_ptr + pid_m).to(tl.int64)

    offs_bn = (pid_n * BLOCK_SIZE_N +
               tl.arange(0, BLOCK_SIZE_N).to(tl.int64)) % N
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + (offs_token[:, None] // top_k * stride_am +
                      offs_k[None, :] * stride_ak)

    b_ptrs = b_ptr + off_experts * stride_be + (offs_k[:, None] * stride_bk +
                                                offs_bn[None, :] * stride_bn)

    # -----------------------------------------------------------
    # Iterate to compute a block of the C matrix.
    # We accumulate into a `[BLOCK_SIZE_M, BLOCK_SIZE_N]` block
    # of fp32 values for higher accuracy.
    # `accumulator` will be converted back to fp16 after the loop.
    accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        # Load the next block of A and B, generate a mask by checking the
        # K dimension.
        a = tl.load(a_ptrs,
                    mask=token_mask[:, None] &
                    (offs_k[None, :] < K - k * BLOCK_SIZE_K),
                    other=0.0)
        b = tl.load(b_ptrs,
                    mask=offs_k[:, None] < K - k * BLOCK_SIZE_K,
                    other=0.0)
        # We accumulate along the K dimension.
        accumulator += tl.dot(a, b)
        # Advance the ptrs to the next K block.
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk

    if MUL_ROUTED_WEIGHT:
        moe_weight = tl.load(topk_weights_ptr + offs_token,
                             mask=token_mask,
                             other=0)
        accumulator = accumulator * moe_weight[:, None]
    accumulator = accumulator.to(compute_type)
    # -----------------------------------------------------------
    # Write back the block of the output
    offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    c_ptrs = c_ptr + stride_cm * offs_token[:, None] + stride_cn * offs_cn[
        None, :]
    c_mask = token_mask[:, None] & (offs_cn[None, :] < N)
    tl.store(c_ptrs, accumulator, mask=c_mask)


def _moe_align_block_size(topk_ids, block_size, num_experts):
    # plain-torch stand-in for vLLM's moe_align_block_size CUDA op
    flat = topk_ids.flatten()
    pad = flat.numel()  # padding id == num_valid_tokens, masked out by token_mask
    sorted_ids, expert_ids = [], []
    for e in range(num_experts):
        ids = (flat == e).nonzero().flatten().tolist()
        if not ids:
            continue
        n_blocks = -(-len(ids) // block_size)
        ids = ids + [pad] * (n_blocks * block_size - len(ids))
        sorted_ids += ids
        expert_ids += [e] * n_blocks
    dev = topk_ids.device
    return (torch.tensor(sorted_ids, dtype=torch.int32, device=dev),
            torch.tensor(expert_ids, dtype=torch.int32, device=dev),
            torch.tensor([len(sorted_ids)], dtype=torch.int32, device=dev))


def example(device):
    torch.manual_seed(0)
    M, K, N, E, top_k = 8, 360, 64, 4, 2
    BLOCK_SIZE_M, BLOCK_SIZE_N, BLOCK_SIZE_K = 16, 32, 64
    A = torch.randn(M, K, device=device, dtype=torch.float16) / 8
    B = torch.randn(E, N, K, device=device, dtype=torch.float16) / 8
    C = torch.zeros(M, top_k, N, device=device, dtype=torch.float16)
    routing = torch.stack([torch.randperm(E)[:top_k] for _ in range(M)])  # on the CPU: the routing is data
    topk_ids = routing.to(device)
    topk_weights = torch.rand(M, top_k, device=device, dtype=torch.float32)
    sorted_token_ids, expert_ids, num_tokens_post_padded = (
        t.to(device) for t in _moe_align_block_size(routing, BLOCK_SIZE_M, E))
    EM = sorted_token_ids.shape[0]
    grid = (triton.cdiv(EM, BLOCK_SIZE_M) * triton.cdiv(N, BLOCK_SIZE_N), )
    fused_moe_kernel[grid](A, B, C, topk_weights, sorted_token_ids, expert_ids, num_tokens_post_padded, N, K, EM,
                           M * top_k, A.stride(0), A.stride(1), B.stride(0), B.stride(2), B.stride(1), C.stride(1),
                           C.stride(2), BLOCK_SIZE_M=BLOCK_SIZE_M, BLOCK_SIZE_N=BLOCK_SIZE_N,
                           BLOCK_SIZE_K=BLOCK_SIZE_K, GROUP_SIZE_M=1, MUL_ROUTED_WEIGHT=True, top_k=top_k,
                           compute_type=tl.float16, num_warps=4, num_stages=2)
    ref = torch.einsum("mk,mtnk->mtn", A.float(), B[topk_ids].float()) * topk_weights[..., None]
    return float((C.float() - ref).abs().max())
