# Copyright (c) 2023-2026, Songlin Yang, Yu Zhang, Zhiyuan Li
#
# This source code is licensed under the MIT license found in the
# LICENSE file in the root directory of this source tree.
# For a list of all contributors, visit:
#   https://github.com/fla-org/flash-linear-attention/graphs/contributors

"""LayerNorm / RMSNorm / GroupNorm kernels adapted for triton-ascend on Huawei NPU."""

import torch
import triton
import triton.language as tl

from fla.backends import TritonAscendBackend, register
from fla.modules.norm.layernorm import layer_norm_bwd, layer_norm_fwd
from fla.utils import get_multiprocessor_count
from fla.utils.ascend_ub_manager import ASCEND_MAX_GRID_DIM, compute_ub_block_size, iter_axis_launch_chunks

# peak live fp32 vectors in row-wise kernel1 (see Liger Ascend layer_norm).
_FWD_MEM_MULT = 6.0
_BWD_MEM_MULT = 8.0
_UB_SAFETY_MARGIN = 0.85
# legacy byte cap when UB capacity cannot be detected (65536 // fp32).
_FALLBACK_MAX_BD = 65536 // 4


def _get_layer_norm_bd(D: int, is_forward: bool) -> int:
    """Return power-of-2 block size for feature dim D under UB constraints."""
    memory_multiplier = _FWD_MEM_MULT if is_forward else _BWD_MEM_MULT
    return compute_ub_block_size(
        dim_size=D,
        memory_multiplier=memory_multiplier,
        safety_margin=_UB_SAFETY_MARGIN,
        fallback=_FALLBACK_MAX_BD,
        desired=triton.next_power_of_2(D),
    )


def _layer_norm_bwd_launch_config(T: int, G: int, device_index: int) -> tuple[int, int, int]:
    """Return (NS, BS, GS) capped under Ascend grid limit."""
    NS = min(triton.cdiv(get_multiprocessor_count(device_index), G), T // G) * G
    NS = min(NS, ASCEND_MAX_GRID_DIM)
    BS = triton.cdiv(T, NS) if NS > 0 else T
    GS = NS // G if G > 0 else NS
    return NS, BS, GS


@triton.jit
def layer_norm_fwd_kernel1(
    x,
    y,
    w,
    b,
    res,
    res_out,
    mean,
    rstd,
    eps,
    G: tl.constexpr,
    D: tl.constexpr,
    BD: tl.constexpr,
    IS_RMS_NORM: tl.constexpr,
    HAS_RESIDUAL: tl.constexpr,
    STORE_RESIDUAL_OUT: tl.constexpr,
    HAS_WEIGHT: tl.constexpr,
    HAS_BIAS: tl.constexpr,
):
    i_t = tl.program_id(0)
    i_g = i_t % G

    x += tl.cast(i_t, tl.int64) * D
    y += tl.cast(i_t, tl.int64) * D
    if HAS_RESIDUAL:
        res += tl.cast(i_t, tl.int64) * D
    if STORE_RESIDUAL_OUT:
        res_out += tl.cast(i_t, tl.int64) * D

    o_d = tl.arange(0, BD)
    m_d = o_d < D
    b_x = tl.load(x + o_d, mask=m_d, other=0.0).to(tl.float32)
    if HAS_RESIDUAL:
        b_x += tl.load(res + o_d, mask=m_d, other=0.0).to(tl.float32)
    if STORE_RESIDUAL_OUT:
        tl.store(res_out + o_d, b_x, mask=m_d)
    if not IS_RMS_NORM:
        b_mean = tl.sum(b_x, axis=0) / D
        tl.store(mean + i_t, b_mean)
        b_xbar = tl.where(m_d, b_x - b_mean, 0.0)
        b_var = tl.sum(b_xbar * b_xbar, axis=0) / D
    else:
        b_xbar = tl.where(m_d, b_x, 0.0)
        b_var = tl.sum(b_xbar * b_xbar, axis=0) / D
    b_rstd = 1 / tl.sqrt(b_var + eps)
    tl.store(rstd + i_t, b_rstd)

    if HAS_WEIGHT:
        b_w = tl.load(w + i_g * D + o_d, mask=m_d).to(tl.float32)
    if HAS_BIAS:
        b_b = tl.load(b + i_g * D + o_d, mask=m_d).to(tl.float32)
    b_x_hat = (b_x - b_mean) * b_rstd if not IS_RMS_NORM else b_x * b_rstd
    b_y = b_x_hat * b_w if HAS_WEIGHT else b_x_hat
    if HAS_BIAS:
        b_y = b_y + b_b

    tl.store(y + o_d, b_y, mask=m_d)


@triton.heuristics({'RECOMPUTE_OUTPUT': lambda args: args['y'] is not None})
@triton.jit
def layer_norm_bwd_kernel1(
    x,
    w,
    b,
    y,
    dy,
    dx,
    dw,
    db,
    dres,
    dres_in,
    mean,
    rstd,
    T,
    G: tl.constexpr,
    D: tl.constexpr,
    BS: tl.constexpr,
    BD: tl.constexpr,
    GS: tl.constexpr,
    IS_RMS_NORM: tl.constexpr,
    HAS_DRESIDUAL: tl.constexpr,
    STORE_DRESIDUAL: tl.constexpr,
    HAS_WEIGHT: tl.constexpr,
    HAS_BIAS: tl.constexpr,
    RECOMPUTE_OUTPUT: tl.constexpr,
):
    i_s = tl.program_id(0)
    i_g, i_sg = i_s // GS, i_s % GS

    o_d = tl.arange(0, BD)
    mask = o_d < D

    if HAS_WEIGHT:
        b_w = tl.load(w + i_g * D + o_d, mask=mask).to(tl.float32)
        b_dw = tl.zeros((BD,), dtype=tl.float32)
    if RECOMPUTE_OUTPUT and HAS_BIAS:
        b_b = tl.load(b + i_g * D + o_d, mask=mask, other=0.0).to(tl.float32)
    if HAS_BIAS:
        b_db = tl.zeros((BD,), dtype=tl.float32)

    for i_t in range(i_sg * BS * G + i_g, min((i_sg * BS + BS) * G + i_g, T), G):
        b_x = tl.load(x + tl.cast(i_t, tl.int64) * D + o_d, mask=mask, other=0).to(tl.float32)
        b_dy = tl.load(dy + tl.cast(i_t, tl.int64) * D + o_d, mask=mask, other=0).to(tl.float32)

        if not IS_RMS_NORM:
            b_mean = tl.load(mean + i_t)
        b_rstd = tl.load(rstd + i_t)
        b_xhat = (b_x - b_mean) * b_rstd if not IS_RMS_NORM else b_x * b_rstd
        b_xhat = tl.where(mask, b_xhat, 0.0)
        if RECOMPUTE_OUTPUT:
            b_y = b_xhat * b_w if HAS_WEIGHT else b_xhat
            if HAS_BIAS:
                b_y = b_y + b_b
            tl.store(y + tl.cast(i_t, tl.int64) * D + o_d, b_y, mask=mask)
        b_wdy = b_dy
        if HAS_WEIGHT:
            b_wdy = b_dy * b_w
            b_dw += b_dy * b_xhat
        if HAS_BIAS:
            b_db += b_dy
        if not IS_RMS_NORM:
            b_c1 = tl.sum(b_xhat * b_wdy, axis=0) / D
            b_c2 = tl.sum(b_wdy, axis=0) / D
            b_dx = (b_wdy - (b_xhat * b_c1 + b_c2)) * b_rstd
        else:
            b_c1 = tl.sum(b_xhat * b_wdy, axis=0) / D
            b_dx = (b_wdy - b_xhat * b_c1) * b_rstd
        if HAS_DRESIDUAL:
            b_dres = tl.load(dres + tl.cast(i_t, tl.int64) * D + o_d, mask=mask, other=0).to(tl.float32)
            b_dx += b_dres
        b_dx = tl.cast(b_dx, dtype=dx.dtype.element_ty, fp_downcast_rounding='rtne')
        if STORE_DRESIDUAL:
            tl.store(dres_in + tl.cast(i_t, tl.int64) * D + o_d, b_dx, mask=mask)
        tl.store(dx + tl.cast(i_t, tl.int64) * D + o_d, b_dx, mask=mask)

    if HAS_WEIGHT:
        tl.store(dw + i_s * D + o_d, b_dw, mask=mask)
    if HAS_BIAS:
        tl.store(db + i_s * D + o_d, b_db, mask=mask)


def _launch_layer_norm_fwd_kernel1(
    x: torch.Tensor,
    y: torch.Tensor,
    weight: torch.Tensor,
    bias: torch.Tensor,
    residual: torch.Tensor,
    res_out: torch.Tensor,
    mean: torch.Tensor,
    rstd: torch.Tensor,
    eps: float,
    G: int,
    D: int,
    BD: int,
    is_rms_norm: bool,
):
    chunk_T = x.shape[0]
    layer_norm_fwd_kernel1[(chunk_T,)](
        x=x,
        y=y,
        w=weight,
        b=bias,
        res=residual,
        res_out=res_out,
        mean=mean,
        rstd=rstd,
        eps=eps,
        G=G,
        D=D,
        BD=BD,
        IS_RMS_NORM=is_rms_norm,
        HAS_RESIDUAL=residual is not None,
        STORE_RESIDUAL_OUT=res_out is not None,
        HAS_WEIGHT=weight is not None,
        HAS_BIAS=bias is not None,
    )


@register(layer_norm_fwd, backend=TritonAscendBackend)
def layer_norm_fwd_npu(
    x: torch.Tensor,
    weight: torch.Tensor,
    bias: torch.Tensor,
    eps: float = 1e-5,
    residual: torch.Tensor | None = None,
    out_dtype: torch.dtype | None = None,
    residual_dtype: torch.dtype | None = None,
    is_rms_norm: bool = False,
    num_groups: int = 1,
):
    if residual is not None:
        residual_dtype = residual.dtype
    T, D, G = *x.shape, num_groups
    if residual is not None:
        assert residual.shape == (T, D)
    if weight is not None:
        assert weight.shape == (G * D,)
    if bias is not None:
        assert bias.shape == (G * D,)

    y = torch.empty_like(x, dtype=x.dtype if out_dtype is None else out_dtype)
    if residual is not None or (residual_dtype is not None and residual_dtype != x.dtype):
        res_out = torch.empty(T, D, device=x.device, dtype=residual_dtype)
    else:
        res_out = None
    mean = torch.empty((T,), dtype=torch.float, device=x.device) if not is_rms_norm else None
    rstd = torch.empty((T,), dtype=torch.float, device=x.device)

    BD = _get_layer_norm_bd(D=D, is_forward=True)
    if D > BD:
        raise RuntimeError(
            f"LayerNorm feature dim {D} exceeds UB-safe block size {BD}. "
            "Column-tiled kernels are not yet implemented for this size."
        )

    # Ascend: use row-wise kernel1 (no make_block_ptr) for all feature dims.
    # split along rows when T exceeds the Ascend grid limit.
    for row_start, row_len in iter_axis_launch_chunks(axis_size=T, other_grid_product=1, max_grid=ASCEND_MAX_GRID_DIM):
        row_end = row_start + row_len
        _launch_layer_norm_fwd_kernel1(
            x=x[row_start:row_end],
            y=y[row_start:row_end],
            weight=weight,
            bias=bias,
            residual=None if residual is None else residual[row_start:row_end],
            res_out=None if res_out is None else res_out[row_start:row_end],
            mean=None if mean is None else mean[row_start:row_end],
            rstd=rstd[row_start:row_end],
            eps=eps,
            G=G,
            D=D,
            BD=BD,
            is_rms_norm=is_rms_norm,
        )
    return y, mean, rstd, res_out if res_out is not None else x


@register(layer_norm_bwd, backend=TritonAscendBackend)
def layer_norm_bwd_npu(
    dy: torch.Tensor,
    x: torch.Tensor,
    weight: torch.Tensor,
    bias: torch.Tensor,
    mean: torch.Tensor | None = None,
    rstd: torch.Tensor | None = None,
    dres: torch.Tensor | None = None,
    has_residual: bool = False,
    is_rms_norm: bool = False,
    x_dtype: torch.dtype | None = None,
    recompute_output: bool = False,
    num_groups: int = 1,
):
    T, D, G = *x.shape, num_groups
    assert dy.shape == (T, D)
    if dres is not None:
        assert dres.shape == (T, D)
    if weight is not None:
        assert weight.shape == (G * D,)
    if bias is not None:
        assert bias.shape == (G * D,)

    dx = torch.empty_like(x) if x_dtype is None else torch.empty(T, D, dtype=x_dtype, device=x.device)
    dres_in = torch.empty_like(x) if has_residual and dx.dtype != x.dtype else None
    y = torch.empty(T, D, dtype=dy.dtype, device=dy.device) if recompute_output else None

    BD = _get_layer_norm_bd(D=D, is_forward=False)
    if D > BD:
        raise RuntimeError(
            f"LayerNorm feature dim {D} exceeds UB-safe block size {BD}. "
            "Column-tiled kernels are not yet implemented for this size."
        )

    NS, BS, GS = _layer_norm_bwd_launch_config(T=T, G=G, device_index=x.device.index)

    dw = torch.empty((NS, D), dtype=torch.float, device=weight.device) if weight is not None else None
    db = torch.empty((NS, D), dtype=torch.float, device=bias.device) if bias is not None else None
    grid = (NS,)

    layer_norm_bwd_kernel1[grid](
        x=x,
        w=weight,
        b=bias,
        y=y,
        dy=dy,
        dx=dx,
        dw=dw,
        db=db,
        dres=dres,
        dres_in=dres_in,
        mean=mean,
        rstd=rstd,
        T=T,
        G=G,
        D=D,
        BS=BS,
        BD=BD,
        GS=GS,
        IS_RMS_NORM=is_rms_norm,
        HAS_DRESIDUAL=dres is not None,
        STORE_DRESIDUAL=dres_in is not None,
        HAS_WEIGHT=weight is not None,
        HAS_BIAS=bias is not None,
    )
    dw = dw.view(G, -1, D).sum(1).to(weight).view_as(weight) if weight is not None else None
    db = db.view(G, -1, D).sum(1).to(bias).view_as(bias) if bias is not None else None
    if has_residual and dx.dtype == x.dtype:
        dres_in = dx
    return (dx, dw, db, dres_in) if not recompute_output else (dx, dw, db, dres_in, y)
