# Source: vllm-project/vllm, vllm/model_executor/layers/fused_moe/fused_moe.py
#         commit 000d1458098ebf47491dad470d164d443ab18a9c (as stored in the code index)
# Licence: Apache-2.0 (SPDX header of the file)
# Excerpt: the @triton.jit helper write_zeros_to_output (verbatim) and the prologue of
#          fused_moe_kernel up to its expert-parallel early exit, which calls the helper
#          when expert_ids holds -1 (expert not on this rank). Cut: the quantisation
#          parameters and everything after the early exit (the GEMM itself; see
#          vllm_fused_moe.py). Every remaining line is as published.
# Published hint: none.
# Lost fact: the store is inside the helper: `stride_cm * offs_token[:, None]` where
#   offs_token comes from sorted_token_ids (a gather) and stride_cm = N is a run-time
#   stride; with N = 360 (fp16; multiple of 8, not of 16) it is not specialised, so the
#   row alignment is unknown; the mask `offs_cn[None, :] < N` has constancy 1.
# TWIN: M, N, E, top_k = 8, 360, 4, 2 => M, N, E, top_k = 8, 361, 4, 2
# REFERENCE: c_ptrs = c_ptr + stride_cm * offs_token[:, None] + stride_cn * offs_cn[ => c_ptrs = c_ptr + tl.multiple_of(stride_cm * offs_token[:, None], (8, 8)) + stride_cn * offs_cn[
# REFERENCE: c_mask = token_mask[:, None] & (offs_cn[None, :] < N) => c_mask = token_mask[:, None] & tl.max_constancy(offs_cn[None, :] < N, (1, 8))
import torch
import triton
import triton.language as tl


@triton.jit
def write_zeros_to_output(c_ptr, stride_cm, stride_cn, pid_n, N, offs_token,
                          token_mask, BLOCK_SIZE_M, BLOCK_SIZE_N,
                          compute_type):
    accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=compute_type)
    offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    c_ptrs = c_ptr + stride_cm * offs_token[:, None] + stride_cn * offs_cn[
        None, :]
    c_mask = token_mask[:, None] & (offs_cn[None, :] < N)
    tl.store(c_ptrs, accumulator, mask=c_mask)


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

    num_tokens_post_padded = tl.load(num_tokens_post_padded_ptr)
    if pid_m * BLOCK_SIZE_M >= num_tokens_post_padded:
        return
    offs_token_id = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M).to(
        tl.int64)
    offs_token = tl.load(sorted_token_ids_ptr + offs_token_id)
    token_mask = offs_token < num_valid_tokens

    off_experts = tl.load(expert_ids_ptr + pid_m).to(tl.int64)
    if off_experts == -1:
        # -----------------------------------------------------------
        # Write back zeros to the output when the expert is not
        # in the current expert parallel rank.
        write_zeros_to_output(c_ptr, stride_cm, stride_cn, pid_n, N,
                              offs_token, token_mask, BLOCK_SIZE_M,
                              BLOCK_SIZE_N, compute_type)
        return
    # (GEMM body cut; see vllm_fused_moe.py)


def example(device):
    torch.manual_seed(0)
    M, N, E, top_k = 8, 360, 4, 2
    K = 64
    BLOCK_SIZE_M, BLOCK_SIZE_N = 16, 128
    topk_ids = torch.stack([torch.randperm(E)[:top_k] for _ in range(M)])
    flat = topk_ids.flatten()
    pad = flat.numel()
    sorted_ids, expert_ids = [], []
    for e in range(E):  # moe_align_block_size, in plain torch
        ids = (flat == e).nonzero().flatten().tolist()
        if not ids:
            continue
        n_blocks = -(-len(ids) // BLOCK_SIZE_M)
        sorted_ids += ids + [pad] * (n_blocks * BLOCK_SIZE_M - len(ids))
        # expert parallelism over 2 ranks: experts 2 and 3 live elsewhere -> -1
        expert_ids += [e if e < E // 2 else -1] * n_blocks
    sorted_token_ids = torch.tensor(sorted_ids, dtype=torch.int32, device=device)
    expert_ids_t = torch.tensor(expert_ids, dtype=torch.int32, device=device)
    num_tokens_post_padded = torch.tensor([len(sorted_ids)], dtype=torch.int32, device=device)
    A = torch.randn(M, K, device=device, dtype=torch.float16)
    B = torch.randn(E, N, K, device=device, dtype=torch.float16)
    C = torch.full((M, top_k, N), 7.0, device=device, dtype=torch.float16)
    topk_weights = torch.rand(M, top_k, device=device, dtype=torch.float32)
    EM = sorted_token_ids.shape[0]
    grid = (triton.cdiv(EM, BLOCK_SIZE_M) * triton.cdiv(N, BLOCK_SIZE_N), )
    fused_moe_kernel[grid](A, B, C, topk_weights, sorted_token_ids, expert_ids_t, num_tokens_post_padded, N, K, EM,
                           M * top_k, A.stride(0), A.stride(1), B.stride(0), B.stride(2), B.stride(1), C.stride(1),
                           C.stride(2), BLOCK_SIZE_M=BLOCK_SIZE_M, BLOCK_SIZE_N=BLOCK_SIZE_N, BLOCK_SIZE_K=64,
                           GROUP_SIZE_M=1, MUL_ROUTED_WEIGHT=False, top_k=top_k, compute_type=tl.float16,
                           num_warps=4)
    remote = (topk_ids >= E // 2).to(device)
    ok = bool((C[remote] == 0).all() and (C[~remote] == 7).all())
    return ok
