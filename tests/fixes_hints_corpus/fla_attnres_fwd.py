# Source: fla-org/flash-linear-attention, fla/ops/attnres/fused.py
#         commit 02e270330b4fc5bb2fd738281b5d594bc89e6d5f (last commit touching the file;
#         snapshot HEAD bc3b101dcb713ddc5bd8924b66754eb68b5ccf89, after release v0.5.2)
# Licence: MIT (file header / repository LICENSE)
# Excerpt: attnres_fwd_kernel with the published hints REMOVED. Cut: the @fla_cache_autotune
#          decorator (a fixed BL / num_warps is launched below); `exp` is the
#          fla.ops.utils.op helper (default, non-FLA_USE_FAST_OPS definition) copied here.
#          An interpreter-only `range` shim is defined at module level (see below).
#          Launched as fused_attnres_fwd() does, with the residual-source tuple padded to
#          L2 = max(8, next_power_of_2(L)) as _build_ptr_table() does.
# Published hints (all three REMOVED here):
#     o_d is built as tl.max_contiguous(tl.multiple_of(tl.arange(0, BD), BD), BD);
#     p_v = tl.multiple_of(p_v, 16) right after the tl.static_range select loop;
#     the pointer argument of the b_v gather load is wrapped in tl.multiple_of(..., (1, 16)).
# Lost fact: the per-row base pointer is chosen from a tuple of tensors with tl.where, which
#   drops the 16-byte divisibility that each tensor argument had, so the [BL, BD] gather of
#   residual rows is loaded element by element. The host (_build_ptr_table) asserts every
#   source is 16-byte aligned, which is the promise the hint states.
# TWIN: misalign = 0 => misalign = 1
# REFERENCE: p_v[:, None] + (i_n * D + o_d[None, :]), => tl.multiple_of(p_v[:, None] + (i_n * D + o_d[None, :]), (1, 16)),
# REFERENCE: o_d = tl.arange(0, BD) => o_d = tl.max_contiguous(tl.multiple_of(tl.arange(0, BD), BD), BD)
#   (the published `p_v = tl.multiple_of(p_v, 16)` line is not restored by these text
#   replacements; it is not needed for the 128-bit gather, checked on sm_90)
import torch
import triton
import triton.language as tl

import os as _os
if _os.environ.get("TRITON_INTERPRET") == "1":
    # not in FLA: the Triton 3.9 interpreter yields Python ints from range(), so the kernel's
    # `(i_l * BL).to(tl.int64)` fails there; yield int32 tl.tensors instead (interpreter only).
    import builtins as _builtins
    import numpy as _np
    from triton.runtime.interpreter import TensorHandle as _TensorHandle

    def range(*args):
        for _v in _builtins.range(*args):
            yield tl.tensor(_TensorHandle(_np.array([_v], dtype=_np.int32), tl.int32), tl.int32)


@triton.jit
def exp(x): return tl.exp(x.to(tl.float32))


@triton.jit(do_not_specialize=['L'])
def attnres_fwd_kernel(
    q,
    res,
    w,
    ow,
    o,
    o_pre,
    rstd,
    logit,
    lse,
    N,
    L,
    L2: tl.constexpr,
    D: tl.constexpr,
    eps: tl.constexpr,
    scale: tl.constexpr,
    BL: tl.constexpr,
    BD: tl.constexpr,
    HAS_ONORM: tl.constexpr,
    SAVE_OPRE: tl.constexpr,
):
    i_n = tl.program_id(0).to(tl.int64)

    # [BD]
    o_d = tl.arange(0, BD)
    m_d = o_d < D
    # [BD] q * w, reused across all residual-source tiles
    b_qw = tl.load(q + o_d, mask=m_d, other=0.).to(tl.float32) * tl.load(w + o_d, mask=m_d, other=0.).to(tl.float32)

    # online softmax over L; b_o accumulates in registers so each v tile is read once (logit + weighted sum)
    b_m = tl.full([], float('-inf'), dtype=tl.float32)
    b_acc = tl.zeros([], dtype=tl.float32)
    b_o = tl.zeros([BD], dtype=tl.float32)
    for i_l in range(tl.cdiv(L, BL)):
        # [BL]
        o_l = (i_l * BL).to(tl.int64) + tl.arange(0, BL)
        m_l = o_l < L
        # per-tile base pointers from the length-L2 padded tuple; OOB rows keep res[0] and are masked by m_l
        p_v = res[0] + o_l * 0
        for i in tl.static_range(1, L2):
            p_v = tl.where(o_l == i, res[i], p_v)

        # [BL, BD] gather: row l from source l at offset i_n*D + o_d
        b_v = tl.load(
            p_v[:, None] + (i_n * D + o_d[None, :]),
            mask=m_l[:, None] & m_d[None, :],
            other=0.0,
            eviction_policy="evict_first",
        ).to(tl.float32)

        # [BL]
        b_rstd = tl.rsqrt(tl.sum(b_v * b_v, axis=1) / D + eps)
        b_logit = tl.sum(b_v * b_qw[None, :], axis=1) * b_rstd
        b_s = tl.where(m_l, b_logit * scale, float('-inf'))

        b_m, b_mp = tl.maximum(b_m, tl.max(b_s, axis=0)), b_m
        b_r = exp(b_mp - b_m)
        # [BL]
        b_p = exp(b_s - b_m)
        b_acc = b_acc * b_r + tl.sum(b_p, axis=0)
        # [BD]
        b_o = b_o * b_r + tl.sum(b_p[:, None] * b_v, axis=0)

        # rstd and logit saved for bwd_dv
        p_rstd = rstd + i_n + o_l * N
        p_logit = logit + i_n + o_l * N
        tl.store(p_rstd, b_rstd.to(rstd.dtype.element_ty), mask=m_l)
        tl.store(p_logit, b_logit.to(logit.dtype.element_ty), mask=m_l)

    tl.store(lse + i_n, b_m + tl.log(b_acc))

    # [BD] pre-norm mixed residual sum_l p_l * v_l
    b_o = b_o / b_acc
    if SAVE_OPRE:
        p_o_pre = o_pre + i_n * D + o_d
        tl.store(p_o_pre, b_o.to(p_o_pre.dtype.element_ty), mask=m_d)
    # fold the optional output RMSNorm into the returned output o (o_rstd is recomputed from o_pre in bwd, not stored)
    if HAS_ONORM:
        b_o_rstd = tl.rsqrt(tl.sum(tl.where(m_d, b_o * b_o, 0.0), axis=0) / D + eps)
        b_ow = tl.load(ow + o_d, mask=m_d, other=0.).to(tl.float32)
        b_o = b_o * b_o_rstd * b_ow
    p_o = o + i_n * D + o_d
    tl.store(p_o, b_o.to(p_o.dtype.element_ty), mask=m_d)


def example(device):
    torch.manual_seed(0)
    L, N, D = 3, 4, 256
    misalign = 0
    dtype = torch.float16
    # each residual source lives in its own buffer; `misalign` shifts the start by elements
    bufs = [torch.randn(N * D + 8, device=device, dtype=dtype) for _ in range(L)]
    residuals = [b[misalign:misalign + N * D].view(N, D) for b in bufs]
    L2 = max(8, triton.next_power_of_2(L))
    res = tuple(residuals) + (residuals[0], ) * (L2 - L)  # _build_ptr_table padding
    q = torch.randn(D, device=device, dtype=dtype)
    w = torch.randn(D, device=device, dtype=dtype)
    o = torch.empty(N, D, device=device, dtype=dtype)
    o_pre = torch.empty(N, D, device=device, dtype=dtype)
    lse = torch.empty(N, device=device, dtype=torch.float32)
    rstd = torch.empty(L, N, device=device, dtype=torch.float32)
    logit = torch.empty_like(rstd)
    eps, scale = 1e-6, D**-0.5
    attnres_fwd_kernel[(N, )](q=q, res=res, w=w, ow=None, o=o, o_pre=o_pre, rstd=rstd, logit=logit, lse=lse, N=N,
                              L=L, L2=L2, D=D, eps=eps, scale=scale, BL=4, BD=triton.next_power_of_2(D),
                              HAS_ONORM=False, SAVE_OPRE=True, num_warps=4, num_stages=2)
    V = torch.stack([r.float() for r in residuals])  # [L, N, D]
    r = torch.rsqrt(V.pow(2).mean(-1) + eps)
    lg = (V * (q.float() * w.float())).sum(-1) * r
    p = torch.softmax(lg * scale, dim=0)
    ref = (p[..., None] * V).sum(0)
    return float((o.float() - ref).abs().max())
