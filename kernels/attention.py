"""Flash attention forward: O = softmax(Q K^T / sqrt(d)) V, causal or not, head dim 64 or 128.

The algorithm of FlashAttention-2 as in Triton's fused-attention tutorial: one program owns
BLOCK_M query rows of one head, keeps them on chip, and streams K and V through shared
memory in blocks of BLOCK_N keys, keeping a running row maximum `m_i` and row sum `l_i` so the
N x N score matrix never exists in memory (online softmax, in base 2: exp(x) = 2^(x log2 e), with
log2 e folded into the scale). Causal attention runs the key loop in two stages: the blocks wholly
below the diagonal without any mask, then the diagonal block with one; blocks above it are
skipped, which halves the work. Q, K, V and O are read and written through tensor descriptors made
on the host and passed as kernel parameters (TMA on Hopper). On a GPU the autotuner's prune keeps
the config measured best for the head dim (64: 128 x 64 blocks, 4 warps; 128: 128 x 128, 8 warps),
so the pick is the same in every run. Sequence lengths must be multiples of 128 (the largest block).

One kernel runs it everywhere: every target, the CPU interpreter, GPU-free compiles. On Hopper,
`attention_gluon.py` does the same work in Gluon with FlashAttention-3's warp-specialised
pipeline, which Triton does not produce from this tile-level code; the gallery shows each with its
own curve (docs/kernels-performance.md compares them).

What to look for in the IR (first config, fp16, head dim 64, sm_90):
- TTIR: Q, K, V, O arrive as `!tt.tensordesc` kernel arguments (no `tt.make_tensor_descriptor`);
  one `tt.descriptor_load` of Q before the key loop; in the loop a `tt.descriptor_load`
  of K, `tt.trans`, `tt.dot` (Q K^T), two `tt.reduce` (row max, row sum), `math.exp2`, and a
  second `tt.dot` (P V) accumulating into the fp32 output.
- TTGIR: both dots are `ttng.warp_group_dot` (wgmma). Q K^T reads both operands from shared
  memory (Q stays there for the whole loop); P V takes P from registers: a `ttg.convert_layout`
  to `#ttg.dot_op<{opIdx = 0, ...}>` instead of a round trip through shared memory. K and V
  arrive by `ttng.async_tma_copy_global_to_local` into multi-buffered `ttg.local_alloc`s, so the
  next block's loads overlap this block's arithmetic.
- PTX: `wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16` (16 in the loop: 2 products x
  2 halves of the 128 query rows x 4 k-steps of 16), `ex2.approx.ftz.f32` for every score, `shfl.sync.bfly.b32` for
  the row reductions, TMA loads `cp.async.bulk.tensor.2d.shared::cta.global.mbarrier::complete_tx::bytes`
  (`shared::cluster` under Triton 3.6) and one TMA store of O.
- SASS: `HGMMA.64x64x16.F32 R.., gdesc[..]` (A from shared memory) for Q K^T and
  `HGMMA.64x64x16.F32 R.., R.., gdesc[..].tnspB` (A from registers) for P V; `MUFU.EX2`,
  `UTMALDG.2D`, `UTMASTG.2D`; no `LDL`/`STL`.
- Causal vs not: the causal kernel has two key loops (two `scf.for`); only the diagonal one
  carries the mask (`arith.cmpi sge` + `arith.select`), the other runs unmasked.
"""

import math

import torch
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor

TITLE = "Flash attention (forward)"
KERNEL = "attention_kernel"


def _config(bm, bn, stages, warps):
    return triton.Config(dict(BLOCK_M=bm, BLOCK_N=bn), num_stages=stages, num_warps=warps, pre_hook=_set_block_shapes)


def _set_block_shapes(nargs):
    """The descriptors are made before the config is known: give them this config's block shapes."""
    bm, bn, d = nargs["BLOCK_M"], nargs["BLOCK_N"], nargs["HEAD_DIM"]
    nargs["q_desc"].block_shape = [bm, d]
    nargs["o_desc"].block_shape = [bm, d]
    nargs["k_desc"].block_shape = [bn, d]
    nargs["v_desc"].block_shape = [bn, d]


CONFIGS = [
    _config(128, 64, 3, 4),  # head dim 64's config on the H200
    _config(128, 128, 3, 8),  # head dim 128's
    _config(128, 64, 4, 4),
    _config(128, 128, 2, 8),
    _config(64, 64, 3, 4),  # small enough for sm_80-class shared memory; the CPU interpreter's pick
]
HEAD_DIM_CONFIG = {64: 0, 128: 1}  # index into CONFIGS, measured on the H200 (docs/kernels-performance.md)


def _prune(configs, named_args, **kwargs):
    """On a GPU, the head dim's measured config (a deterministic pick: nothing is timed), else key
    blocks no wider than the head; off a GPU there is nothing to tune: the last config. A list
    pinned to one config is kept as it is."""
    head_dim = kwargs["HEAD_DIM"]
    if named_args["q_desc"].base.device.type != "cuda":
        return configs[-1:]
    if head_dim in HEAD_DIM_CONFIG:
        want = CONFIGS[HEAD_DIM_CONFIG[head_dim]]
        kept = [c for c in configs if c is want]
        if kept:
            return kept
    return [c for c in configs if c.kwargs["BLOCK_N"] <= head_dim] or configs


@triton.jit
def _attention_keys(
    acc, l_i, m_i, q, k_desc, v_desc, kv_row0, start_m, qk_scale, N_CTX,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, STAGE: tl.constexpr,
):
    """Online softmax over one range of key blocks.

    STAGE 1: causal, the blocks entirely below the diagonal (no mask needed);
    STAGE 2: causal, the diagonal blocks (masked); STAGE 3: non-causal, all keys.
    """
    if STAGE == 1:
        lo, hi = 0, start_m * BLOCK_M
    elif STAGE == 2:
        lo, hi = start_m * BLOCK_M, (start_m + 1) * BLOCK_M
        lo = tl.multiple_of(lo, BLOCK_M)
    else:
        lo, hi = 0, N_CTX
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    for start_n in tl.range(lo, hi, BLOCK_N):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        k = k_desc.load([kv_row0 + start_n, 0])
        qk = tl.dot(q, k.T)
        if STAGE == 2:
            causal = offs_m[:, None] >= (start_n + offs_n[None, :])
            qk = qk * qk_scale + tl.where(causal, 0.0, -1.0e6)
            m_ij = tl.maximum(m_i, tl.max(qk, 1))
            qk -= m_ij[:, None]
        else:
            m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
            qk = qk * qk_scale - m_ij[:, None]
        p = tl.math.exp2(qk)
        alpha = tl.math.exp2(m_i - m_ij)  # rescales what was accumulated under the old maximum
        l_ij = tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = v_desc.load([kv_row0 + start_n, 0])
        acc = tl.dot(p.to(v.dtype), v, acc)
        l_i = l_i * alpha + l_ij
        m_i = m_ij
    return acc, l_i, m_i


@triton.autotune(configs=CONFIGS, key=["N_CTX", "HEAD_DIM", "CAUSAL"], prune_configs_by={"early_config_prune": _prune})
@triton.jit
def attention_kernel(
    q_desc, k_desc, v_desc, o_desc, sm_scale, Z, H, N_CTX,
    HEAD_DIM: tl.constexpr, CAUSAL: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
):
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    # Q, K, V, O are (Z, H, N_CTX, HEAD_DIM) contiguous: the descriptors see one
    # (Z*H*N_CTX, HEAD_DIM) matrix each.
    kv_row0 = off_hz * N_CTX
    q_row = kv_row0 + start_m * BLOCK_M

    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504  # log2(e): the softmax runs in base 2
    q = q_desc.load([q_row, 0])  # stays in registers for the whole key loop
    if CAUSAL:
        acc, l_i, m_i = _attention_keys(acc, l_i, m_i, q, k_desc, v_desc, kv_row0, start_m, qk_scale, N_CTX,
                                        BLOCK_M, BLOCK_N, 1)
        acc, l_i, m_i = _attention_keys(acc, l_i, m_i, q, k_desc, v_desc, kv_row0, start_m, qk_scale, N_CTX,
                                        BLOCK_M, BLOCK_N, 2)
    else:
        acc, l_i, m_i = _attention_keys(acc, l_i, m_i, q, k_desc, v_desc, kv_row0, start_m, qk_scale, N_CTX,
                                        BLOCK_M, BLOCK_N, 3)
    acc = acc / l_i[:, None]
    o_desc.store([q_row, 0], acc.to(o_desc.dtype))


def launch(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    causal: bool = False,
    sm_scale: float | None = None,
    out: torch.Tensor | None = None,
) -> torch.Tensor:
    """Attention forward for contiguous (Z, H, N_CTX, HEAD_DIM) fp16/bf16 tensors."""
    N_CTX, D = q.shape[2:]
    assert q.shape == k.shape == v.shape and q.is_contiguous() and k.is_contiguous() and v.is_contiguous()
    assert D in (16, 32, 64, 128, 256) and N_CTX % 128 == 0, "head dim a power of two, N_CTX a multiple of 128"
    out = torch.empty_like(q) if out is None else out
    assert out.shape == q.shape and out.is_contiguous(), "out: contiguous, shaped like q"
    sm_scale = 1.0 / math.sqrt(D) if sm_scale is None else sm_scale
    Z, H = q.shape[:2]
    # Descriptors made on the host, passed as kernel parameters (made on the device, each of the
    # thousands of programs would first write four of them to global memory). Block shapes: the
    # head dim's config; the config's pre_hook sets them again for whichever config runs.
    cfg = CONFIGS[HEAD_DIM_CONFIG.get(D, 0)].kwargs
    rows = Z * H * N_CTX
    q_desc, k_desc, v_desc, o_desc = (
        TensorDescriptor(t, [rows, D], [D, 1], [cfg["BLOCK_N" if t is k or t is v else "BLOCK_M"], D])
        for t in (q, k, v, out)
    )

    def grid(meta):
        return (triton.cdiv(N_CTX, meta["BLOCK_M"]), Z * H)

    attention_kernel[grid](q_desc, k_desc, v_desc, o_desc, sm_scale, Z, H, N_CTX, HEAD_DIM=D, CAUSAL=causal)
    return out


# ---- the inspector's example call ----------------------------------------------------------
def example(device):
    """4 sequences x 32 heads of 4096 tokens, head dim 64, not causal."""
    return launch(*make_inputs((4, 32, 4096), device, head_dim=64))


# ---- bundled-kernel protocol ---------------------------------------------------------------
SIZES = [(4, 32, n) for n in (1024, 2048, 4096, 8192)]  # (batch, heads, sequence length)
TEST_SIZES = [(1, 2, 128), (2, 1, 256), (1, 3, 640)]
TOLERANCE = dict(atol=2e-3, rtol=2e-3)
SIZE_NAMES = ("batch", "heads", "sequence")
VARIANTS = {
    "hd64": {"causal": False, "head_dim": 64},
    "hd64-causal": {"causal": True, "head_dim": 64},
    "hd128": {"causal": False, "head_dim": 128},
    "hd128-causal": {"causal": True, "head_dim": 128},
}


def make_inputs(size: tuple[int, int, int], device, causal: bool = False, head_dim: int = 64):
    """Random fp16 Q, K, V of shape (Z, H, N_CTX, head_dim)."""
    Z, H, N = size
    return tuple(torch.randn(Z, H, N, head_dim, device=device, dtype=torch.float16) for _ in range(3))


def reference(q, k, v, causal: bool = False) -> torch.Tensor:
    out = torch.nn.functional.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=causal)
    return out.to(q.dtype)


def baseline(q, k, v, causal: bool = False) -> torch.Tensor:
    """What PyTorch code writes: scaled_dot_product_attention in fp16 (PyTorch picks the backend)."""
    return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)


def flops(size: tuple[int, int, int], causal: bool = False, head_dim: int = 64) -> int:
    """Two N x N x d products per head (QK^T and PV); causal does half of them."""
    Z, H, N = size
    total = 4 * Z * H * N * N * head_dim
    return total // 2 if causal else total


def bytes_moved(size: tuple[int, int, int], head_dim: int = 64) -> int:
    """Q, K and V read once, O written once (fp16)."""
    Z, H, N = size
    return 4 * Z * H * N * head_dim * 2
