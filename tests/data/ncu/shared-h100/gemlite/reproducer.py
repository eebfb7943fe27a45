"""Reproduces gemm_INT_kernel as the inspector compiled it, launched by gemm_forward().

Written by Triton Kernel Inspector from /work/main/tests/corpus2/gemlite/gemlite/triton_kernels/gemm_kernels.py; open it in the inspector or run it under a GPU."""
import torch
import triton
import triton.language as tl

BLOCK_QUANT_SIZE = 128


@triton.jit
def linear_tile(pid, M, N, BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr, GROUP_SIZE_M: tl.constexpr):
    pid_m = pid % tl.cdiv(M, BLOCK_SIZE_M)
    pid_n = pid // tl.cdiv(M, BLOCK_SIZE_M)
    return pid_m, pid_n


@triton.jit
def swizzle_tile_v1(pid, M, N, BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr, GROUP_SIZE_M: tl.constexpr):
    grid_m     = tl.cdiv(M, BLOCK_SIZE_M)
    grid_n     = tl.cdiv(N, BLOCK_SIZE_N)
    width      = GROUP_SIZE_M * grid_n
    group_id   = pid // width
    group_size = tl.minimum(grid_m - group_id * GROUP_SIZE_M, GROUP_SIZE_M)
    pid_m      = group_id * GROUP_SIZE_M + (pid % group_size)
    pid_n      = (pid % width) // group_size
    return pid_m, pid_n


swizzle_tile = swizzle_tile_v1


@triton.jit
def load_ptr(ptrs, mask, eviction_policy, apply_mask: tl.constexpr, other=0.):
    if apply_mask:
        return tl.load(ptrs, mask=mask, other=other, eviction_policy=eviction_policy)
    else:
        return tl.load(ptrs, eviction_policy=eviction_policy)


@triton.jit
def dequantize(
    b,
    scales,
    zeros,
    q_shift,
    meta_dtype,
    unpack_mask,
    elements_per_sample: tl.constexpr,
    W_group_mode: tl.constexpr,
    zero_is_scalar: tl.constexpr,
):
    #Unpack
    if(elements_per_sample > 1):
        b = (b >> q_shift) & unpack_mask # int32 -> int32

    if(W_group_mode == 1): #Shift
        b = b.to(meta_dtype) - zeros 

    if(W_group_mode == 2):
        b = b.to(meta_dtype) * scales #Symmetric no shift (Grouped)

    if(W_group_mode == 3): #Asymmetric / Symmetric with shift(Grouped - (b - zeros) * scales)
        #b = (b - zeros) * scales
        if(zero_is_scalar):
            b = (b - zeros).to(meta_dtype) * scales
        else:
            b = (b.to(meta_dtype) - zeros) * scales

    if(W_group_mode == 4):
        b = tl.fma(b.to(meta_dtype), scales, zeros) #Asymmetric (Grouped - b*scales + zeros)

    return b


@triton.jit
def gemm_INT_kernel(
    a_ptr, b_ptr, c_ptr,
    scales_ptr, zeros_ptr, scales_a_ptr,
    M, N: tl.constexpr, K: tl.constexpr, M_CLOSEST,
    ######### Quant parms #########
    W_nbits: tl.constexpr, 
    group_size: tl.constexpr, 
    unpack_mask: tl.constexpr, 
    elements_per_sample: tl.constexpr, 
    #################################
    type_id: tl.constexpr,
    a_sizeof: tl.constexpr,
    b_sizeof: tl.constexpr,
    ######### Strides #########
    stride_am, stride_ak,
    stride_bk, stride_bn,
    stride_cm, stride_cn,
    stride_meta_a_m, stride_meta_a_g,
    stride_meta_g, stride_meta_n,
    ######### Dtypes #########
    load_scales_as_block, #False
    input_dtype: tl.constexpr,
    output_dtype: tl.constexpr,
    acc_dtype: tl.constexpr,
    meta_dtype: tl.constexpr,
    ######### Meta-data mode #########
    channel_scale_mode: tl.constexpr,
    W_group_mode: tl.constexpr,
    zero_is_scalar: tl.constexpr,
    ######### tuning params #########
    BLOCK_SIZE_M: tl.constexpr, 
    BLOCK_SIZE_N: tl.constexpr, 
    BLOCK_SIZE_K: tl.constexpr,
    GROUP_SIZE_M: tl.constexpr, 
    NUM_STAGES: tl.constexpr,
    A_load_order: tl.constexpr, 
    data_contiguous: tl.constexpr,
    #################################
    EVEN_M: tl.constexpr = False,
    EVEN_K: tl.constexpr = False, 
    EVEN_N: tl.constexpr = False,
    #################################
    meta_evict_policy: tl.constexpr = "evict_last",
    a_evict: tl.constexpr = "",
    b_evict: tl.constexpr = "evict_first",
    meta_scale_norm_ptr = None,
    #################################
    use_tma: tl.constexpr = True,
    use_5d_scales: tl.constexpr = False,
    block_quant_size: tl.constexpr = BLOCK_QUANT_SIZE,
    warp_specialize: tl.constexpr = False,
):
    """
    Based on https://github.com/fpgaminer/GPTQ-triton
    GEMM for C = matmul(A, dequantize(B, scales, zeros))
    A is of shape (M, K): float16 or bfloat16
    B is of shape (K//elements_per_sample, N): int32 as a packed matrix
    C is of shape (M, N): float16 or bfloat16 depending on the input A
    scales and zeros is of shape (group_size, N): float16 or bfloat16

    BLOCK_SIZE_M >=16
    BLOCK_SIZE_K <= group_size
    """


    pid  = tl.program_id(axis=0)

    #Swizzle?
    if(elements_per_sample > 1):
        pid_m, pid_n = linear_tile(pid, M, N, BLOCK_SIZE_M, BLOCK_SIZE_N, None)
    else:
        pid_m, pid_n = swizzle_tile(pid, M, N, BLOCK_SIZE_M, BLOCK_SIZE_N, GROUP_SIZE_M)

    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    num_pid_k = tl.cdiv(K, BLOCK_SIZE_K)

    #Offsets
    offs_m = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_n = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    offs_k = tl.arange(0, BLOCK_SIZE_K) 

    #Offsets
    #############################################################################################################
    if data_contiguous:
        offs_bn = offs_n  
    else:
        offs_bn = tl.max_contiguous(tl.multiple_of(offs_n, BLOCK_SIZE_N), BLOCK_SIZE_N) 
    offs_am = tl.max_contiguous(tl.multiple_of(offs_m, BLOCK_SIZE_M), BLOCK_SIZE_M)
    offs_ak = offs_k
    offs_bk = offs_k

    b_ptrs  = b_ptr + ((offs_bk[:, None] // elements_per_sample) * stride_bk + offs_bn[None, :] * stride_bn) 
    b_mask  = ((offs_bk[:, None] < K) & (offs_bn[None, :] < N))
    q_shift = ((offs_bk % elements_per_sample) * W_nbits).to(tl.int32)[:, None] 

    #Inputs
    a_ptrs  = a_ptr + (offs_am[:, None] * stride_am + offs_ak[None, :] * stride_ak)  
    a_mask  = ((offs_am[:, None] < M) & (offs_ak[None, :] < K))

    #Meta data stuff
    scales_ptrs = scales_ptr + offs_bn[None, :] * stride_meta_n
    zeros_ptrs  = zeros_ptr  + offs_bn[None, :] * stride_meta_n

    stride_mul: tl.constexpr     = BLOCK_SIZE_K / group_size
    BLOCK_SIZE_K_P: tl.constexpr = (BLOCK_SIZE_K // elements_per_sample)

    if(zero_is_scalar):
        zero_scalar = tl.load(zeros_ptr, eviction_policy='evict_last')

    # INT Block-quantization (mode==5): BxB weight scales (fp32), per-row per-B-K activation scales (fp32), where B = BLOCK_QUANT_SIZE
    if channel_scale_mode == 5:
        K_PER_SCALE:      tl.constexpr = block_quant_size // BLOCK_SIZE_K   #k-iters per B-K block (>=1)
        scales_a_ptrs     = scales_a_ptr + offs_am * stride_meta_a_m
        scales_b_base_ptr = scales_ptr + ((pid_n * BLOCK_SIZE_N) // block_quant_size) * stride_meta_n

    #############################################################################################################
    acc = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=acc_dtype)

    for k in tl.range(num_pid_k, num_stages=NUM_STAGES, warp_specialize=warp_specialize):

        if(A_load_order == 0): #Early load
            a = load_ptr(a_ptrs, a_mask, a_evict, not (EVEN_M and EVEN_K))

        b = load_ptr(b_ptrs, b_mask, b_evict, not (EVEN_K and EVEN_N))

        if(A_load_order == 1): #Early load
            a = load_ptr(a_ptrs, a_mask, a_evict, not (EVEN_M and EVEN_K))

        #Meta-data loading policy
        if(W_group_mode > 0):
            k_m = (k * stride_mul).to(tl.int32) 

        if(W_group_mode >= 2): #[2, 3, 4]
            scales = tl.load(scales_ptrs + k_m * stride_meta_g, eviction_policy=meta_evict_policy) 
        else:
            scales = None

        if(W_group_mode == 1 or W_group_mode >= 3): #[1, 3, 4]
            if(zero_is_scalar):
                zeros = zero_scalar
            else:
                zeros = tl.load(zeros_ptrs  + k_m * stride_meta_g, eviction_policy=meta_evict_policy) 
        else:
            zeros = None

        if(A_load_order == 2): #Mid load
            a = load_ptr(a_ptrs, a_mask, a_evict, not (EVEN_M and EVEN_K))

        # Unpack and dequantize
        b = dequantize(b, scales, zeros, q_shift, meta_dtype, unpack_mask, elements_per_sample, W_group_mode, zero_is_scalar)

        if(A_load_order == 3): #Late load 
            a = load_ptr(a_ptrs, a_mask, a_evict, not (EVEN_M and EVEN_K))

        #INT Block-quant (mode==5): load per-block activation/weight fp32 scales before the dot.
        if channel_scale_mode == 5:
            k_m = k // K_PER_SCALE
            scales_a = tl.load(scales_a_ptrs + k_m * stride_meta_a_g, mask=offs_am < M, other=0.0, eviction_policy=meta_evict_policy)
            scales_b = tl.load(scales_b_base_ptr + k_m * stride_meta_g, eviction_policy=meta_evict_policy)

        #Dot
        if channel_scale_mode == 5:
            tmp = tl.dot(a, b.to(input_dtype), out_dtype=acc_dtype)
            acc += tmp * scales_a[:, None] * scales_b
        else:
            acc = tl.dot(a, b.to(input_dtype), acc=acc, out_dtype=acc_dtype)

        #Advance
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K_P * stride_bk

        offs_ak += BLOCK_SIZE_K
        offs_bk += BLOCK_SIZE_K

        if not EVEN_K:
            if EVEN_M:
                a_mask = tl.broadcast_to((offs_ak[None, :] < K), [BLOCK_SIZE_M, BLOCK_SIZE_K])
            else:
                a_mask = ((offs_am[:, None] < M) & (offs_ak[None, :] < K))
            if EVEN_N:
                b_mask = tl.broadcast_to((offs_bk[:, None] < K), [BLOCK_SIZE_K, BLOCK_SIZE_N])
            else:
                b_mask = ((offs_bk[:, None] < K) & (offs_bn[None, :] < N))

    #############################################################################################################
    #Channel-wise scaling
    if channel_scale_mode == 1 or channel_scale_mode == 3:
        scales_b = load_ptr(scales_ptr + offs_bn, offs_bn < N, meta_evict_policy, not EVEN_N, other=1)

    if channel_scale_mode == 2 or channel_scale_mode == 3:
        scales_a = load_ptr(scales_a_ptr + offs_am, offs_am < M, meta_evict_policy, not EVEN_M, other=1)

    if channel_scale_mode == 1:
        acc = acc.to(meta_dtype) * scales_b[None, :]
    elif channel_scale_mode == 2:
        acc = acc.to(meta_dtype) * scales_a[:, None]
    elif channel_scale_mode == 3:
        acc = acc.to(meta_dtype) * (scales_a[:, None] * scales_b[None, :])
    #############################################################################################################

    #Output
    acc = acc.to(output_dtype)
    offs_cm = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    offs_cn = tl.max_contiguous(tl.multiple_of(offs_cn, BLOCK_SIZE_N), BLOCK_SIZE_N)
    c_ptrs  = c_ptr + (offs_cm[:, None] * stride_cm + offs_cn[None, :] * stride_cn)
    if EVEN_M and EVEN_N:
        tl.store(c_ptrs, acc)
    else:
        tl.store(c_ptrs, acc, mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))


def _filled(name, t):
    """`t` with the recorded launch's data where the capture carried it (bit-exact, from the .data.npz
    file beside this one), else made-up values: floats standard normal, integers zero (an index of
    0 is always in bounds). A meta tensor (a GPU-free compile) stays as it is."""
    if t.device.type == "meta":
        return t
    data = _carried_data().get(name)
    if data is not None:
        flat = torch.as_strided(t, (data.size,), (1,), t.storage_offset())
        flat.copy_(torch.from_numpy(data).to(t.device))
    elif t.is_floating_point():
        t.normal_() if t.element_size() > 1 else t.copy_(torch.randn(t.shape).to(t.dtype))
    else:
        t.zero_()
    return t


_CARRIED = []


def _carried_data():
    if not _CARRIED:
        import os
        path = os.path.splitext(os.path.abspath(__file__))[0] + ".data.npz"
        if os.path.exists(path):
            import numpy
            with numpy.load(path, allow_pickle=False) as z:
                _CARRIED.append({k: z[k] for k in z.files})
        else:
            _CARRIED.append({})
    return _CARRIED[0]


def example(device):
    a_ptr = _filled('a_ptr', torch.empty_strided((1024, 4096), (4096, 1), dtype=torch.float32, device=device))
    b_ptr = _filled('b_ptr', torch.empty_strided((1024, 4096), (4096, 1), dtype=torch.int32, device=device))
    c_ptr = _filled('c_ptr', torch.empty_strided((1024, 4096), (4096, 1), dtype=torch.float32, device=device))
    scales_ptr = _filled('scales_ptr', torch.empty_strided((1024, 4096), (4096, 1), dtype=torch.int32, device=device))
    zeros_ptr = _filled('zeros_ptr', torch.empty_strided((1024, 4096), (4096, 1), dtype=torch.int32, device=device))
    gemm_INT_kernel[(1024,)](
        a_ptr,
        b_ptr,
        c_ptr,
        scales_ptr,
        zeros_ptr,
        None,
        1024,
        N=4096,
        K=65536,
        M_CLOSEST=1024,
        W_nbits=64,
        group_size=64,
        unpack_mask=64,
        elements_per_sample=64,
        type_id=64,
        a_sizeof=4,
        b_sizeof=4,
        stride_am=4096,
        stride_ak=1,
        stride_bk=4096,
        stride_bn=1,
        stride_cm=4096,
        stride_cn=1,
        stride_meta_a_m=None,
        stride_meta_a_g=None,
        stride_meta_g=4096,
        stride_meta_n=1,
        load_scales_as_block=False,
        input_dtype=tl.float32,
        output_dtype=tl.float32,
        acc_dtype=tl.float32,
        meta_dtype=tl.float32,
        channel_scale_mode=64,
        W_group_mode=64,
        zero_is_scalar=False,
        BLOCK_SIZE_M=64,
        BLOCK_SIZE_N=64,
        BLOCK_SIZE_K=64,
        GROUP_SIZE_M=8,
        NUM_STAGES=5,
        A_load_order=0,
        data_contiguous=False,
        EVEN_M=True,
        EVEN_K=True,
        EVEN_N=True,
        meta_scale_norm_ptr=None,
        use_tma=False,
        use_5d_scales=False,
        warp_specialize=False,
        num_warps=4,
        num_ctas=1,
        num_stages=5,
    )
