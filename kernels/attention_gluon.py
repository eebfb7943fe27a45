"""Flash attention forward on Hopper in Gluon: FlashAttention-3's warp-specialised pipeline, by hand.

The same function as `attention.py` (O = softmax(Q K^T / sqrt(d)) V, causal or not, head dim 64 or
128, fp16), written in Gluon, Triton's lower-level language, because Triton does not produce this
division of labour from the tile-level kernel: there, every iteration of the key loop has CTA-wide
barriers around the TMA loads, so the two warpgroups of a program run in lockstep and the softmax
never overlaps the other's matrix products. Here one producer warp issues the TMA loads of Q and
of K and V into a ring of shared-memory stages; NC consumer warpgroups own 64 query rows each of
a tile (head dim 64: three, 192-row tiles; 128: two), issue QK^T of key block j and P V of block
j-1 back to back and run the softmax of block j while the tensor cores still do P V; stages are
handed back through mbarriers. A 192-row tile can run past the end of a head (N_CTX is a multiple
of 128): a consumer whose rows start at N_CTX computes and stores nothing, it only hands the
stages back. Causal, each consumer stops at its own diagonal block (the only one masked). Grid per
HOPPER_CONFIG: one CTA per tile (causal tiles from a host-made order, longest key loops first
within groups of heads), or one CTA per SM looping over the tiles (persistent; causal: a schedule
balanced on the host, or each CTA taking the next free tile from an atomic counter), O leaving
through its own buffers so the next tile's Q loads under this tile's last products.

It runs only on sm_90 (H100, H200), fp16, head dims 64 and 128, sequence lengths a multiple of
128; never in Triton's CPU interpreter (Gluon kernels have no interpreter path). GPU-free, the
inspector compiles it for sm_90 from the example call on meta tensors. Its measured speed against
cuDNN and against `attention.py` is in docs/kernels-performance.md.

What to look for in the IR (Triton 3.6, head dim 64 as launch() runs it: NC = 3, 4 stages, DYN,
compiled for sm_90):
- TTGIR: one `ttg.warp_specialize` (the default partition is consumer 0; partition0/1 consumers 1
  and 2, partition2 the producer warp; `requestedRegisters = array<i32: 160, 160, 24>`); per key
  block `ttng.warp_group_dot_wait {pendings = 1}` (S = QK^T done, P V still running) before the
  softmax and `{pendings = 0}` after it; `ttng.wait_barrier` / `ttng.arrive_barrier` on the stage
  mbarriers; one `tt.atomic_rmw add` (the producer's next tile).
- PTX: `.reqntid 512`, `.maxnreg 128`, `setmaxnreg` (160 for the worker consumers, 168 for
  consumer 0, 24 for the producer), `wgmma.wait_group.sync.aligned 1`, and inside the loops only
  128-thread named barriers (`bar.sync 0/2/3, 128`: one per consumer warpgroup; `barrier.sync 1`
  only where the partitions start and end), one `atom.global.gpu.acq_rel.add.u32`.
- SASS: `HGMMA.64x128x16.F32 R.., gdesc[..], RZ, !UPT` (S, the accumulator not read),
  `HGMMA.64x64x16.F32 R.., R.., gdesc[..].tnspB` (P V with P from registers), `UTMALDG.2D` only
  in the producer, `UTMASTG.2D` per consumer, no `LDL`/`STL`.
- The constexprs (CAUSAL, STAGES, the consumer's index, ...) must reach the partitions as
  constants: the argument tuples are written in the warp_specialize call, since a tuple assigned
  to a name first turns them into run-time values (the kernel then branches on them and, causal
  with three consumers, spills).
"""

import heapq
import math

import torch
import triton
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import (
    fence_async_shared,
    mbarrier,
    tma,
    warpgroup_mma,
    warpgroup_mma_wait,
)
from triton.experimental.gluon.nvidia.hopper import TensorDescriptor as GluonTensorDescriptor

TITLE = "Flash attention on Hopper (Gluon, warp-specialised)"
KERNEL = "attention_kernel_hopper"
LANGUAGE = "gluon"  # runs on CAPABILITY only, never in the interpreter (kernels/__init__.py)
CAPABILITY = (9, 0)
INTERPRETER_SKIP = {v: "Gluon kernels do not run in Triton's CPU interpreter"
                    for v in ("hd64", "hd64-causal", "hd128", "hd128-causal")}


# The settings, in the kernel's terms: one producer warp issues the TMA loads of Q (per consumer)
# and of K and V into a ring of STAGES shared-memory buffers; NC consumer warpgroups (4 warps:
# NC = 2 with 240 registers, NC = 3 with 160) own HALF = 64 query rows each of an NC*HALF-row tile,
# issue QK^T of key block j and P V of block j-1 back to back, wait for the first only (wgmma
# wait_group 1) and run the softmax of block j while the tensor cores still do P V; buffers are
# handed back through mbarriers (count NC: one arrive per consumer, also from a consumer that
# skips the block). Tiles: one per CTA, or (PERSISTENT / DYN) one CTA per SM taking tile after
# tile, with q_full / q_empty barriers per consumer so that the next tile's Q loads while this one
# ends. PINGPONG (NC = 2) makes the two consumers take turns issuing their products
# (FlashAttention-3's warp-scheduler barriers, here two mbarriers); EMU = k computes one
# exponential in k on the FMA pipe (a degree-3 polynomial) instead of the 16-per-clock MUFU.EX2
# unit (measured slower: docs/kernels-performance.md).

# 2^x for x <= 0 on the FMA pipe: n = round(x) by the 1.5 * 2^23 magic-number add, a degree-3
# polynomial for 2^(x - n) on [-0.5, 0.5] (relative error 1.0e-4, below fp16's half ulp), n added
# into the exponent bits; clamped at -127 so that masked scores (-inf) give 0.
_POLY_EXP2 = """
    max.ftz.f32 x, {src}, 0fC2FE0000;
    add.rn.f32 j, x, 0f4B400000;
    sub.rn.f32 t, j, 0f4B400000;
    sub.rn.f32 t, x, t;
    fma.rn.f32 p, t, 0f3D6150B9, 0f3E78062A;
    fma.rn.f32 p, p, t, 0f3F317AFE;
    fma.rn.f32 p, p, t, 0f3F800000;
    mov.b32 jb, j;
    shl.b32 jb, jb, 23;
    mov.b32 pb, p;
    add.s32 {dst}, pb, jb;
"""
_EXP2_DECL = "{ .reg .f32 x, j, t, p; .reg .b32 jb, pb;\n"
_EXP2_EMU2 = gl.constexpr(_EXP2_DECL + "    ex2.approx.ftz.f32 $0, $2;\n" + _POLY_EXP2.format(src="$3", dst="$1") + "}")
_EXP2_EMU4 = gl.constexpr(_EXP2_DECL + "    ex2.approx.ftz.f32 $0, $4;\n    ex2.approx.ftz.f32 $1, $5;\n"
                          "    ex2.approx.ftz.f32 $2, $6;\n" + _POLY_EXP2.format(src="$7", dst="$3") + "}")
# launch_hopper's settings per (head dim, causal): (largest N_CTX or None, settings), the first
# entry that fits N_CTX applies; measured on the H200 (docs/kernels-performance.md)
HOPPER_CONFIG = {
    (64, False): [(None, dict(NC=3, STAGES=4, DYN=True, LATE_Q=True))],
    (64, True): [(2048, dict(NC=3, STAGES=4, PERSISTENT=True, LATE_Q=True)), (None, dict(NC=3, STAGES=3))],
    (128, False): [(4096, dict(NC=2, STAGES=2, PERSISTENT=True)), (None, dict(NC=2, STAGES=3))],
    (128, True): [(None, dict(NC=2, STAGES=2, PERSISTENT=True))],
}

# TMA copies are async_load / async_store from Triton 3.7 on, async_copy_* before; the CTA
# barrier is thread_barrier up to 3.6 (and later), barrier in some releases.
_tma_load = getattr(tma, "async_load", None) or tma.async_copy_global_to_shared
_tma_store = getattr(tma, "async_store", None) or tma.async_copy_shared_to_global
_thread_barrier = getattr(gl, "thread_barrier", None) or gl.barrier

@gluon.jit
def _hopper_exp2(x, EMU: gl.constexpr):
    if EMU == 2:
        return gl.inline_asm_elementwise(_EXP2_EMU2, "=r,=r,r,r", [x], dtype=gl.float32, is_pure=True, pack=2)
    elif EMU == 4:
        return gl.inline_asm_elementwise(_EXP2_EMU4, "=r,=r,=r,=r,r,r,r,r", [x], dtype=gl.float32,
                                         is_pure=True, pack=4)
    else:
        return gl.exp2(x)

@gluon.jit
def _hopper_tile(t, num_m, N_CTX, BLOCK_M: gl.constexpr, BLOCK_N: gl.constexpr, CAUSAL: gl.constexpr,
                 ORDER: gl.constexpr, ZH):
    """Tile t -> (its first query row within the head, the head's first row in the (Z*H*N_CTX, d)
    matrices, key blocks to visit). ORDER 0: head by head, query blocks in order; 1: head by
    head, the longest key loops (causal) first; 2: the longest key loops of all heads first."""
    if ORDER == 2:
        start_m = num_m - 1 - t // ZH
        off_hz = t % ZH
    else:
        off_hz = t // num_m
        start_m = t % num_m
        if ORDER == 1:
            start_m = num_m - 1 - start_m
    m0 = start_m * BLOCK_M
    if CAUSAL:  # keys up to the tile's last row; the last tile of a head may be partial
        n_blocks = gl.minimum((m0 + BLOCK_M + BLOCK_N - 1) // BLOCK_N, N_CTX // BLOCK_N)
    else:
        n_blocks = N_CTX // BLOCK_N
    return m0, off_hz * N_CTX, n_blocks

@gluon.jit
def _hopper_tile_id(sched, r, SCHED: gl.constexpr):
    """The CTA's r-th tile: sched[r * grid + pid] (a host-made schedule; past the CTA's last tile it
    holds the tile count), else pid + r * grid."""
    if SCHED:
        t = gl.load(sched + r * gl.num_programs(0) + gl.program_id(0))
    else:
        t = gl.program_id(0) + r * gl.num_programs(0)
    return t

@gluon.jit
def _hopper_producer(q_desc, k_desc, v_desc, o_desc, q_bufs, o_bufs, k_bufs, v_bufs, q_full, q_empty, k_ready,
                     v_ready, k_empty, v_empty, turns, tile_ids, counter, sm_scale, N_CTX, ZH, sched, ROUNDS,
                     CAUSAL: gl.constexpr, ORDER: gl.constexpr, PINGPONG: gl.constexpr, EMU: gl.constexpr,
                     SEP_O: gl.constexpr, SCHED: gl.constexpr, DYN: gl.constexpr, LATE_Q: gl.constexpr):
    """One warp: per tile, each consumer's Q once its buffer is free (a plain arrive for a consumer
    whose rows lie past N_CTX), then K_j and V_j into stage (running block count) % STAGES once it
    is free. DYN: the CTA's next tile is the next free one of the order (an atomic counter); the
    tile (or, at the end, the tile count) is passed to the consumers in tile_ids[tile parity]."""
    NC: gl.constexpr = q_bufs.type.shape[0]
    HALF: gl.constexpr = q_bufs.type.shape[1]
    num_m = (N_CTX + NC * HALF - 1) // (NC * HALF)
    total = num_m * ZH
    kv = 0
    tc = 0
    if DYN:
        id_layout: gl.constexpr = gl.BlockedLayout([1], [32], [1], [0])
        idx = gl.program_id(0)
        while idx < total:
            nxt = gl.num_programs(0) + gl.atomic_add(counter, 1)  # used after this tile's loads
            if SCHED:
                t = gl.load(sched + idx)
            else:
                t = idx
            tile_ids.index(tc & 1).store(gl.full([1], t, gl.int32, layout=id_layout))
            kv, tc = _hopper_produce(q_desc, k_desc, v_desc, q_bufs, k_bufs, v_bufs, q_full, q_empty, k_ready,
                                     v_ready, k_empty, v_empty, t, num_m, N_CTX, ZH, kv, tc, CAUSAL, ORDER,
                                     LATE_Q)
            idx = nxt
        tile_ids.index(tc & 1).store(gl.full([1], total, gl.int32, layout=id_layout))
        for c in gl.static_range(NC):  # no more tiles
            mbarrier.wait(q_empty.index(c), (tc & 1) ^ 1)
            mbarrier.arrive(q_full.index(c), count=1)
    else:
        for r in range(ROUNDS):
            t = _hopper_tile_id(sched, r, SCHED)
            if t < total:
                kv, tc = _hopper_produce(q_desc, k_desc, v_desc, q_bufs, k_bufs, v_bufs, q_full, q_empty,
                                         k_ready, v_ready, k_empty, v_empty, t, num_m, N_CTX, ZH, kv, tc, CAUSAL,
                                         ORDER, LATE_Q)

@gluon.jit
def _hopper_load_q(q_desc, q_bufs, q_full, q_empty, tc, m0, kv_row0, N_CTX, c: gl.constexpr):
    """Consumer c's Q for the CTA's tc-th tile once its buffer is free; a plain arrive if its rows
    start at or past N_CTX (nothing to load: the rows there belong to the next head)."""
    HALF: gl.constexpr = q_bufs.type.shape[1]
    mbarrier.wait(q_empty.index(c), (tc & 1) ^ 1)
    if m0 + c * HALF < N_CTX:
        mbarrier.expect(q_full.index(c), q_desc.block_type.nbytes)
        _tma_load(q_desc, [kv_row0 + m0 + c * HALF, 0], q_full.index(c), q_bufs.index(c))
    else:
        mbarrier.arrive(q_full.index(c), count=1)

@gluon.jit
def _hopper_produce(q_desc, k_desc, v_desc, q_bufs, k_bufs, v_bufs, q_full, q_empty, k_ready, v_ready, k_empty,
                    v_empty, t, num_m, N_CTX, ZH, kv, tc, CAUSAL: gl.constexpr, ORDER: gl.constexpr,
                    LATE_Q: gl.constexpr):
    """The producer's part of tile t; kv: K/V blocks loaded so far, tc: tiles so far. LATE_Q: the
    last consumer's Q after the first K and V block (causal, its rows have the most keys, so it
    is the last to finish the previous tile: the others can start this one meanwhile)."""
    STAGES: gl.constexpr = k_bufs.type.shape[0]
    BLOCK_N: gl.constexpr = k_bufs.type.shape[1]
    NC: gl.constexpr = q_bufs.type.shape[0]
    HALF: gl.constexpr = q_bufs.type.shape[1]
    m0, kv_row0, n_blocks = _hopper_tile(t, num_m, N_CTX, NC * HALF, BLOCK_N, CAUSAL, ORDER, ZH)
    for c in gl.static_range(NC - 1 if LATE_Q else NC):
        _hopper_load_q(q_desc, q_bufs, q_full, q_empty, tc, m0, kv_row0, N_CTX, c)
    for j in range(n_blocks):
        s = kv % STAGES
        phase = (kv // STAGES) & 1
        mbarrier.wait(k_empty.index(s), phase ^ 1)
        mbarrier.expect(k_ready.index(s), k_desc.block_type.nbytes)
        _tma_load(k_desc, [kv_row0 + j * BLOCK_N, 0], k_ready.index(s), k_bufs.index(s))
        mbarrier.wait(v_empty.index(s), phase ^ 1)
        mbarrier.expect(v_ready.index(s), v_desc.block_type.nbytes)
        _tma_load(v_desc, [kv_row0 + j * BLOCK_N, 0], v_ready.index(s), v_bufs.index(s))
        if LATE_Q:  # noqa: SIM102 - a compile-time test around a run-time one
            if j == 0:
                _hopper_load_q(q_desc, q_bufs, q_full, q_empty, tc, m0, kv_row0, N_CTX, NC - 1)
        kv += 1
    return kv, tc + 1

@gluon.jit
def _hopper_turn_wait(turns, k, H: gl.constexpr, PINGPONG: gl.constexpr):
    """Consumer H's k-th issue of products waits for the other consumer's (k-1)-th (H=0) or k-th."""
    if PINGPONG:
        if H == 0:
            if k > 0:
                mbarrier.wait(turns.index(0), (k - 1) & 1)
        else:
            mbarrier.wait(turns.index(1), k & 1)

@gluon.jit
def _hopper_step(q_smem, k_bufs, v_bufs, k_ready, v_ready, k_empty, v_empty, turns, o, p16, m_i, l_i, qk_scale,
                 kv, turn, j, row0, MASK: gl.constexpr, PINGPONG: gl.constexpr, EMU: gl.constexpr,
                 H: gl.constexpr):
    """Key block j (j >= 1): issue S_j = Q K_j^T and O += P_{j-1} V_{j-1}, wait for S_j only, run
    the softmax of S_j under P V; MASK: the causal mask (rows row0.. of the head)."""
    STAGES: gl.constexpr = k_bufs.type.shape[0]
    BLOCK_N: gl.constexpr = k_bufs.type.shape[1]
    HALF: gl.constexpr = q_smem.type.shape[0]
    s_layout: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[4, 1],
                                                       instr_shape=[16, BLOCK_N, 16])
    row_o: gl.constexpr = gl.SliceLayout(1, o.type.layout)
    st = (kv + j) % STAGES
    prev = (kv + j - 1) % STAGES
    _hopper_turn_wait(turns, turn + j, H, PINGPONG)
    mbarrier.wait(k_ready.index(st), ((kv + j) // STAGES) & 1)
    s_tok = warpgroup_mma(q_smem, k_bufs.index(st).permute((1, 0)), gl.zeros([HALF, BLOCK_N], gl.float32,
                                                                             layout=s_layout),
                          use_acc=False, is_async=True)
    mbarrier.wait(v_ready.index(prev), ((kv + j - 1) // STAGES) & 1)
    o_tok = warpgroup_mma(p16, v_bufs.index(prev), o, is_async=True)
    if PINGPONG:
        mbarrier.arrive(turns.index(1 - H), count=1)
    s = warpgroup_mma_wait(1, deps=(s_tok, ))  # S_j done; P_{j-1} V_{j-1} may still run
    mbarrier.arrive(k_empty.index(st), count=1)
    if MASK:
        offs_m = row0 - j * BLOCK_N + gl.arange(0, HALF, layout=gl.SliceLayout(1, s_layout))
        offs_n = gl.arange(0, BLOCK_N, layout=gl.SliceLayout(0, s_layout))
        s = gl.where(offs_m[:, None] >= offs_n[None, :], s, float("-inf"))
    m_new = gl.maximum(m_i, gl.max(s, 1) * qk_scale)
    p = _hopper_exp2(s * qk_scale - m_new[:, None], EMU)
    alpha = gl.exp2(m_i - m_new)  # rescales what was accumulated under the old maximum
    l_i = l_i * alpha + gl.sum(p, 1)
    o, p16 = warpgroup_mma_wait(0, deps=(o_tok, p16))
    mbarrier.arrive(v_empty.index(prev), count=1)
    o = o * gl.convert_layout(alpha, row_o)[:, None]
    p16 = gl.convert_layout(p.to(p16.dtype), p16.type.layout)
    return o, p16, m_new, l_i

@gluon.jit
def _hopper_rows(q_desc, o_desc, q_smem, o_smem, k_bufs, v_bufs, q_empty, k_ready, v_ready, k_empty, v_empty,
                 turns, sm_scale, kv, turn, row0, kv_row0, n_mine, CAUSAL: gl.constexpr, PINGPONG: gl.constexpr,
                 EMU: gl.constexpr, SEP_O: gl.constexpr, H: gl.constexpr):
    """One consumer's HALF query rows (row0.. within the head) against key blocks 0..n_mine-1 (the
    stages of running block count kv..), then O / l through o_smem and a TMA store."""
    STAGES: gl.constexpr = k_bufs.type.shape[0]
    BLOCK_N: gl.constexpr = k_bufs.type.shape[1]
    HEAD_DIM: gl.constexpr = k_bufs.type.shape[2]
    HALF: gl.constexpr = q_smem.type.shape[0]
    dtype: gl.constexpr = q_desc.dtype
    s_layout: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[4, 1],
                                                       instr_shape=[16, BLOCK_N, 16])
    o_layout: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[4, 1],
                                                       instr_shape=[16, HEAD_DIM, 16])
    p_layout: gl.constexpr = gl.DotOperandLayout(operand_index=0, parent=o_layout, k_width=2)
    row_o: gl.constexpr = gl.SliceLayout(1, o_layout)
    qk_scale = sm_scale * 1.44269504  # log2(e): the softmax runs in base 2
    s_zero = gl.zeros([HALF, BLOCK_N], gl.float32, layout=s_layout)
    o = gl.zeros([HALF, HEAD_DIM], gl.float32, layout=o_layout)

    # key block 0: S = Q K^T alone
    _hopper_turn_wait(turns, turn, H, PINGPONG)
    st = kv % STAGES
    mbarrier.wait(k_ready.index(st), (kv // STAGES) & 1)
    s_tok = warpgroup_mma(q_smem, k_bufs.index(st).permute((1, 0)), s_zero, use_acc=False, is_async=True)
    if PINGPONG:
        mbarrier.arrive(turns.index(1 - H), count=1)
    s = warpgroup_mma_wait(0, deps=(s_tok, ))
    mbarrier.arrive(k_empty.index(st), count=1)
    if CAUSAL:  # noqa: SIM102 - a compile-time test around a run-time one
        if n_mine == 1:  # block 0 is the diagonal block
            offs_m = row0 + gl.arange(0, HALF, layout=gl.SliceLayout(1, s_layout))
            offs_n = gl.arange(0, BLOCK_N, layout=gl.SliceLayout(0, s_layout))
            s = gl.where(offs_m[:, None] >= offs_n[None, :], s, float("-inf"))
    m_i = gl.max(s, 1) * qk_scale
    p = _hopper_exp2(s * qk_scale - m_i[:, None], EMU)
    l_i = gl.sum(p, 1)
    p16 = gl.convert_layout(p.to(dtype), p_layout)

    # key blocks 1..n-1: issue S_j = Q K_j^T and O += P_{j-1} V_{j-1}; softmax of S_j under P V.
    # Causal: the HALF rows lie within one key block's span (HALF divides BLOCK_N), so only the
    # last block, diag_j = n_mine - 1, needs the mask: it runs after the loop (a mask inside
    # the loop would hold its indices in registers throughout).
    if CAUSAL:
        gl.static_assert(BLOCK_N % HALF == 0)
        n_plain = n_mine - 1
    else:
        n_plain = n_mine
    for j in range(1, n_plain):
        o, p16, m_i, l_i = _hopper_step(q_smem, k_bufs, v_bufs, k_ready, v_ready, k_empty, v_empty, turns,
                                        o, p16, m_i, l_i, qk_scale, kv, turn, j, row0, False, PINGPONG, EMU, H)
    if CAUSAL:  # noqa: SIM102 - a compile-time test around a run-time one
        if n_mine > 1:
            o, p16, m_i, l_i = _hopper_step(q_smem, k_bufs, v_bufs, k_ready, v_ready, k_empty, v_empty, turns,
                                            o, p16, m_i, l_i, qk_scale, kv, turn, n_mine - 1, row0, True,
                                            PINGPONG, EMU, H)
    if SEP_O:  # Q is read for the last time: the producer may load the next tile's
        mbarrier.arrive(q_empty, count=1)

    # the last P V, then O / l through shared memory and a TMA store
    last = (kv + n_mine - 1) % STAGES
    _hopper_turn_wait(turns, turn + n_mine, H, PINGPONG)
    mbarrier.wait(v_ready.index(last), ((kv + n_mine - 1) // STAGES) & 1)
    o_tok = warpgroup_mma(p16, v_bufs.index(last), o, is_async=True)
    if PINGPONG:
        mbarrier.arrive(turns.index(1 - H), count=1)
    o, p16 = warpgroup_mma_wait(0, deps=(o_tok, p16))
    mbarrier.arrive(v_empty.index(last), count=1)
    o = o / gl.convert_layout(l_i, row_o)[:, None]
    if SEP_O:  # the previous tile's store has read o_smem (issued by one thread: all wait for it)
        tma.store_wait(0)
        _thread_barrier()
    o_smem.store(o.to(dtype))
    fence_async_shared()
    _tma_store(o_desc, [kv_row0 + row0, 0], o_smem)
    if not SEP_O:  # O went through the Q buffer: hand it back once the store has read it
        tma.store_wait(0)
        mbarrier.arrive(q_empty, count=1)

@gluon.jit
def _hopper_consume(q_desc, o_desc, q_bufs, o_bufs, k_bufs, v_bufs, q_empty, k_ready, v_ready, k_empty, v_empty,
                    turns, sm_scale, N_CTX, ZH, num_m, t, kv, turn, CAUSAL: gl.constexpr, ORDER: gl.constexpr,
                    PINGPONG: gl.constexpr, EMU: gl.constexpr, SEP_O: gl.constexpr, H: gl.constexpr):
    """Consumer H's part of tile t (its Q has arrived); returns the running block and issue counts."""
    STAGES: gl.constexpr = k_bufs.type.shape[0]
    BLOCK_N: gl.constexpr = k_bufs.type.shape[1]
    NC: gl.constexpr = q_bufs.type.shape[0]
    HALF: gl.constexpr = q_bufs.type.shape[1]
    m0, kv_row0, n_blocks = _hopper_tile(t, num_m, N_CTX, NC * HALF, BLOCK_N, CAUSAL, ORDER, ZH)
    row0 = m0 + H * HALF
    n_mine = n_blocks
    if CAUSAL:
        n_mine = gl.minimum((row0 + HALF + BLOCK_N - 1) // BLOCK_N, n_blocks)
    n_mine = n_mine * (row0 < N_CTX).to(gl.int32)
    if n_mine > 0:
        _hopper_rows(q_desc, o_desc, q_bufs.index(H), o_bufs.index(H), k_bufs, v_bufs, q_empty.index(H), k_ready,
                     v_ready, k_empty, v_empty, turns, sm_scale, kv, turn, row0, kv_row0, n_mine, CAUSAL,
                     PINGPONG, EMU, SEP_O, H)
    else:
        mbarrier.arrive(q_empty.index(H), count=1)
    for j in range(n_mine, n_blocks):  # blocks this consumer skips
        st = (kv + j) % STAGES
        phase = ((kv + j) // STAGES) & 1
        mbarrier.wait(k_ready.index(st), phase)
        mbarrier.arrive(k_empty.index(st), count=1)
        mbarrier.wait(v_ready.index(st), phase)
        mbarrier.arrive(v_empty.index(st), count=1)
    return kv + n_blocks, turn + n_mine + 1

@gluon.jit
def _hopper_consumer(q_desc, k_desc, v_desc, o_desc, q_bufs, o_bufs, k_bufs, v_bufs, q_full, q_empty, k_ready,
                     v_ready, k_empty, v_empty, turns, tile_ids, counter, sm_scale, N_CTX, ZH, sched, ROUNDS,
                     CAUSAL: gl.constexpr, ORDER: gl.constexpr, PINGPONG: gl.constexpr, EMU: gl.constexpr,
                     SEP_O: gl.constexpr, SCHED: gl.constexpr, DYN: gl.constexpr, H: gl.constexpr):
    """One warpgroup: query rows [H * HALF, (H + 1) * HALF) of each of its CTA's tiles. Rows at or
    past N_CTX (the last tile of a head) and, causal, key blocks wholly above this consumer's rows
    are not computed: their stages are waited for and handed back, so the producer never stalls."""
    NC: gl.constexpr = q_bufs.type.shape[0]
    HALF: gl.constexpr = q_bufs.type.shape[1]
    num_m = (N_CTX + NC * HALF - 1) // (NC * HALF)
    total = num_m * ZH
    kv = 0
    tc = 0
    turn = 0
    if DYN:
        id_layout: gl.constexpr = gl.BlockedLayout([1], [32], [4], [0])
        mbarrier.wait(q_full.index(H), 0)
        t = gl.max(tile_ids.index(0).load(id_layout), 0)
        while t < total:
            kv, turn = _hopper_consume(q_desc, o_desc, q_bufs, o_bufs, k_bufs, v_bufs, q_empty, k_ready, v_ready,
                                       k_empty, v_empty, turns, sm_scale, N_CTX, ZH, num_m, t, kv, turn, CAUSAL,
                                       ORDER, PINGPONG, EMU, SEP_O, H)
            tc += 1
            mbarrier.wait(q_full.index(H), tc & 1)
            t = gl.max(tile_ids.index(tc & 1).load(id_layout), 0)
    else:
        for r in range(ROUNDS):
            t = _hopper_tile_id(sched, r, SCHED)
            if t < total:
                mbarrier.wait(q_full.index(H), tc & 1)
                kv, turn = _hopper_consume(q_desc, o_desc, q_bufs, o_bufs, k_bufs, v_bufs, q_empty, k_ready,
                                           v_ready, k_empty, v_empty, turns, sm_scale, N_CTX, ZH, num_m, t, kv,
                                           turn, CAUSAL, ORDER, PINGPONG, EMU, SEP_O, H)
                tc += 1
    tma.store_wait(0)

@gluon.jit
def attention_kernel_hopper(q_desc, k_desc, v_desc, o_desc, sm_scale, N_CTX, ZH, sched, ROUNDS, counter,
                            CAUSAL: gl.constexpr, ORDER: gl.constexpr, STAGES: gl.constexpr, NC: gl.constexpr,
                            PINGPONG: gl.constexpr, EMU: gl.constexpr, SEP_O: gl.constexpr, SCHED: gl.constexpr,
                            DYN: gl.constexpr, LATE_Q: gl.constexpr, CONSUMER_REGS: gl.constexpr,
                            PRODUCER_REGS: gl.constexpr):
    """Consumer 0 is the default partition (the kernel's 4 warps); consumers 1..NC-1 (4 warps,
    CONSUMER_REGS registers each) and the producer (1 warp, PRODUCER_REGS) are workers. The grid
    is one CTA per tile, or one per SM (persistent: its tiles from `sched`, pid + r * grid, or,
    DYN, the atomic `counter`)."""
    gl.static_assert(NC == 2 or NC == 3)
    gl.static_assert(NC == 2 or not PINGPONG)
    HALF: gl.constexpr = q_desc.block_type.shape[0]
    BLOCK_N: gl.constexpr = k_desc.block_type.shape[0]
    HEAD_DIM: gl.constexpr = k_desc.block_type.shape[1]
    q_bufs = gl.allocate_shared_memory(q_desc.dtype, [NC, HALF, HEAD_DIM], q_desc.layout)
    if SEP_O:
        o_bufs = gl.allocate_shared_memory(o_desc.dtype, [NC, HALF, HEAD_DIM], o_desc.layout)
    else:
        o_bufs = q_bufs
    k_bufs = gl.allocate_shared_memory(k_desc.dtype, [STAGES, BLOCK_N, HEAD_DIM], k_desc.layout)
    v_bufs = gl.allocate_shared_memory(v_desc.dtype, [STAGES, BLOCK_N, HEAD_DIM], v_desc.layout)
    q_full = gl.allocate_shared_memory(gl.int64, [NC, 1], mbarrier.MBarrierLayout())
    q_empty = gl.allocate_shared_memory(gl.int64, [NC, 1], mbarrier.MBarrierLayout())
    turns = gl.allocate_shared_memory(gl.int64, [2, 1], mbarrier.MBarrierLayout())
    tile_ids = gl.allocate_shared_memory(gl.int32, [2, 1], gl.SwizzledSharedLayout(1, 1, 1, [0]))
    k_ready = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    v_ready = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    k_empty = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    v_empty = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    for i in gl.static_range(NC):
        mbarrier.init(q_full.index(i), count=1)
        mbarrier.init(q_empty.index(i), count=1)
    for i in gl.static_range(2):
        mbarrier.init(turns.index(i), count=1)
    for i in gl.static_range(STAGES):
        mbarrier.init(k_ready.index(i), count=1)
        mbarrier.init(v_ready.index(i), count=1)
        mbarrier.init(k_empty.index(i), count=NC)
        mbarrier.init(v_empty.index(i), count=NC)
    # The partitions' argument tuples are written out in the call: a tuple assigned to a name
    # first would turn its constexprs (CAUSAL, ..., the consumer's H) into run-time values.
    # Hence two calls, not one list with the third consumer added `if NC == 3`: Gluon's frontend
    # does not build such a list (tried with Triton 3.9: "'bool' object has no attribute
    # '_flatten_ir'").
    if NC == 2:
        gl.warp_specialize([
            (_hopper_consumer, (q_desc, k_desc, v_desc, o_desc, q_bufs, o_bufs, k_bufs, v_bufs, q_full, q_empty,
                                k_ready, v_ready, k_empty, v_empty, turns, tile_ids, counter, sm_scale, N_CTX, ZH,
                                sched, ROUNDS, CAUSAL, ORDER, PINGPONG, EMU, SEP_O, SCHED, DYN, 0)),
            (_hopper_consumer, (q_desc, k_desc, v_desc, o_desc, q_bufs, o_bufs, k_bufs, v_bufs, q_full, q_empty,
                                k_ready, v_ready, k_empty, v_empty, turns, tile_ids, counter, sm_scale, N_CTX, ZH,
                                sched, ROUNDS, CAUSAL, ORDER, PINGPONG, EMU, SEP_O, SCHED, DYN, 1)),
            (_hopper_producer, (q_desc, k_desc, v_desc, o_desc, q_bufs, o_bufs, k_bufs, v_bufs, q_full, q_empty,
                                k_ready, v_ready, k_empty, v_empty, turns, tile_ids, counter, sm_scale, N_CTX, ZH,
                                sched, ROUNDS, CAUSAL, ORDER, PINGPONG, EMU, SEP_O, SCHED, DYN, LATE_Q)),
        ], [4, 1], [CONSUMER_REGS, PRODUCER_REGS])
    else:
        gl.warp_specialize([
            (_hopper_consumer, (q_desc, k_desc, v_desc, o_desc, q_bufs, o_bufs, k_bufs, v_bufs, q_full, q_empty,
                                k_ready, v_ready, k_empty, v_empty, turns, tile_ids, counter, sm_scale, N_CTX, ZH,
                                sched, ROUNDS, CAUSAL, ORDER, PINGPONG, EMU, SEP_O, SCHED, DYN, 0)),
            (_hopper_consumer, (q_desc, k_desc, v_desc, o_desc, q_bufs, o_bufs, k_bufs, v_bufs, q_full, q_empty,
                                k_ready, v_ready, k_empty, v_empty, turns, tile_ids, counter, sm_scale, N_CTX, ZH,
                                sched, ROUNDS, CAUSAL, ORDER, PINGPONG, EMU, SEP_O, SCHED, DYN, 1)),
            (_hopper_consumer, (q_desc, k_desc, v_desc, o_desc, q_bufs, o_bufs, k_bufs, v_bufs, q_full, q_empty,
                                k_ready, v_ready, k_empty, v_empty, turns, tile_ids, counter, sm_scale, N_CTX, ZH,
                                sched, ROUNDS, CAUSAL, ORDER, PINGPONG, EMU, SEP_O, SCHED, DYN, 2)),
            (_hopper_producer, (q_desc, k_desc, v_desc, o_desc, q_bufs, o_bufs, k_bufs, v_bufs, q_full, q_empty,
                                k_ready, v_ready, k_empty, v_empty, turns, tile_ids, counter, sm_scale, N_CTX, ZH,
                                sched, ROUNDS, CAUSAL, ORDER, PINGPONG, EMU, SEP_O, SCHED, DYN, LATE_Q)),
        ], [4, 4, 1], [CONSUMER_REGS, CONSUMER_REGS, PRODUCER_REGS])


def _hopper_settings(head_dim: int, causal: bool, n_ctx: int) -> dict | None:
    """HOPPER_CONFIG's settings for this problem (None: no Gluon kernel measured for it)."""
    for largest, settings in HOPPER_CONFIG.get((head_dim, bool(causal)), []):
        if largest is None or n_ctx <= largest:
            return settings
    return None


_SM_COUNT: dict = {}


def _sm_count(device: torch.device) -> int:
    """The GPU's SMs; on meta tensors (the inspector's GPU-free compile) an H100/H200's 132."""
    if device.type != "cuda":
        return 132
    dev = device.index if device.index is not None else torch.cuda.current_device()
    if dev not in _SM_COUNT:
        _SM_COUNT[dev] = torch.cuda.get_device_properties(dev).multi_processor_count
    return _SM_COUNT[dev]
_SCHEDULES: dict = {}


def _hopper_schedule(n_ctx, zh, block_m, block_n, half, causal, ctas, device, tail_rounds=2, overhead=1.0):
    """(int32 tensor, rounds): the tiles of a (zh heads, n_ctx) problem in the order CTAs take them.

    Order: heads in groups of about one round of tiles (ctas // tiles per head), within a group the
    longest key loops first, the last `tail_rounds` rounds' worth of tiles sorted longest first over
    all groups (no long tile left for the end; the groups keep the K/V that CTAs read at one time to
    a few heads, which the L2 holds). ctas None (one CTA per tile): that order, one tile each.
    Else (persistent) each tile goes to the CTA that a cost model (key blocks per consumer +
    `overhead`) frees first; schedule[r * ctas + i] is CTA i's r-th tile, zh * tiles per head
    (no tile) past its last. Tile t = head * tiles per head + query block (the kernel's ORDER 0)."""
    key = (n_ctx, zh, block_m, block_n, half, causal, ctas, str(device))
    if key in _SCHEDULES:
        return _SCHEDULES[key]
    num_m = triton.cdiv(n_ctx, block_m)
    full = n_ctx // block_n

    def cost(m):
        rows = [r for r in range(m * block_m, (m + 1) * block_m, half) if r < n_ctx]
        blocks = [min(triton.cdiv(r + half, block_n), full) if causal else full for r in rows]
        return sum(blocks) / (block_m // half) + overhead

    costs = [cost(m) for m in range(num_m)]
    group = max(1, (ctas or 132) // num_m)
    ms = sorted(range(num_m), key=lambda m: -costs[m])
    order = [h * num_m + m for g0 in range(0, zh, group) for m in ms for h in range(g0, min(g0 + group, zh))]
    k = min(len(order), tail_rounds * (ctas or 132))
    order[len(order) - k:] = sorted(order[len(order) - k:], key=lambda t: -costs[t % num_m])
    if ctas is None:
        sched, rounds = order, 1
    else:
        free = [(0.0, i) for i in range(ctas)]
        per_cta = [[] for _ in range(ctas)]
        for t in order:
            load, i = heapq.heappop(free)
            per_cta[i].append(t)
            heapq.heappush(free, (load + costs[t % num_m], i))
        rounds = max(len(x) for x in per_cta)
        sched = [zh * num_m] * (rounds * ctas)
        for i, ts in enumerate(per_cta):
            for r, t in enumerate(ts):
                sched[r * ctas + i] = t
    _SCHEDULES[key] = (torch.tensor(sched, dtype=torch.int32, device=device), rounds)
    return _SCHEDULES[key]


def launch_hopper(q, k, v, out, causal, sm_scale, BLOCK_N=128, STAGES=3, HALF=64, NC=2, PINGPONG=False, EMU=0,
                  PERSISTENT=False, DYN=False, SCHED=None, ORDER=None, SEP_O=None, LATE_Q=False, REGS=None):
    """The Gluon kernel on (Z, H, N_CTX, d) tensors; its descriptors see (Z*H*N_CTX, d) matrices.
    NC consumer warpgroups of HALF rows each make a tile of NC * HALF query rows (the last tile of
    a head partial when that does not divide N_CTX). PERSISTENT: one CTA per SM looping over the
    tiles; DYN: each takes the next free tile when it starts one (an atomic counter, zeroed per
    launch), else the tiles _hopper_schedule gives it (SCHED) or tiles i, i + grid, ... SCHED: tiles in
    _hopper_schedule's order (default: causal); else ORDER (default: 0, causal 1). SEP_O: O goes
    out through buffers of its own, so the next tile's Q can load under this tile's last products
    (default: when persistent). LATE_Q: the last consumer's Q is loaded after the first K and V
    block of the tile. REGS: (consumer, producer) registers per thread."""
    Z, H, N_CTX, D = q.shape
    rows = Z * H * N_CTX
    lay_q = gl.NVMMASharedLayout.get_default_for([HALF, D], gl.float16)
    lay_kv = gl.NVMMASharedLayout.get_default_for([BLOCK_N, D], gl.float16)
    q_desc, o_desc = (GluonTensorDescriptor(t, [rows, D], [D, 1], [HALF, D], lay_q) for t in (q, out))
    k_desc, v_desc = (GluonTensorDescriptor(t, [rows, D], [D, 1], [BLOCK_N, D], lay_kv) for t in (k, v))
    tiles = triton.cdiv(N_CTX, NC * HALF) * Z * H
    ctas = None
    if PERSISTENT or DYN:
        ctas = min(tiles, _sm_count(q.device))
    if SCHED is None:
        SCHED = bool(causal)
    if SCHED:
        sched, rounds = _hopper_schedule(N_CTX, Z * H, NC * HALF, BLOCK_N, HALF, causal, None if DYN else ctas,
                                         q.device)
        ORDER = 0
    else:
        sched, rounds = q, triton.cdiv(tiles, ctas or tiles)  # q: any pointer, not read
        if ORDER is None:
            ORDER = 1 if causal else 0
    # DYN's tile counter: zeroed for each launch (a memset before the kernel, a node of its own in a
    # CUDA graph), so no state outlives a launch
    counter = torch.zeros(1, dtype=torch.int32, device=q.device) if DYN else q
    grid = (ctas or tiles, )
    if SEP_O is None:
        SEP_O = bool(ctas)
    if REGS is None:
        REGS = (240, 24) if NC == 2 else (160, 24)
    # registers at launch: what 32 * (4 * NC + 4) threads may hold (the producer warp's group is
    # padded to 4 warps); setmaxnreg then moves them between the partitions
    maxnreg = 168 if NC == 2 else 128
    return attention_kernel_hopper[grid](q_desc, k_desc, v_desc, o_desc, sm_scale, N_CTX, Z * H, sched, rounds,
                                         counter, CAUSAL=causal, ORDER=ORDER, STAGES=STAGES, NC=NC, PINGPONG=PINGPONG,
                                         EMU=EMU, SEP_O=SEP_O, SCHED=SCHED, DYN=DYN, LATE_Q=LATE_Q,
                                         CONSUMER_REGS=REGS[0], PRODUCER_REGS=REGS[1], num_warps=4, maxnreg=maxnreg)


def launch(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    causal: bool = False,
    sm_scale: float | None = None,
    out: torch.Tensor | None = None,
) -> torch.Tensor:
    """Attention forward for contiguous (Z, H, N_CTX, HEAD_DIM) fp16 tensors on an sm_90 GPU (or
    meta tensors, for the inspector), with HOPPER_CONFIG's settings for the head dim and length."""
    N_CTX, D = q.shape[2:]
    assert q.shape == k.shape == v.shape and q.is_contiguous() and k.is_contiguous() and v.is_contiguous()
    assert q.dtype == torch.float16, "fp16 only (the layouts and the measured settings are fp16's)"
    settings = _hopper_settings(D, causal, N_CTX)
    assert settings is not None and N_CTX % 128 == 0, "head dim 64 or 128, N_CTX a multiple of 128"
    # On a GPU, or compiling GPU-free for a target (the inspector's stand-in answers as that GPU):
    # Hopper's wgmma, TMA and setmaxnreg exist on sm_90 alone.
    if torch.cuda.is_available() and (torch.version.hip or torch.cuda.get_device_capability() != CAPABILITY):
        raise RuntimeError("attention_gluon.py runs on sm_90 only (H100, H200): its Gluon kernel is written with "
                           "Hopper's wgmma, TMA and setmaxnreg; attention.py runs everywhere")
    out = torch.empty_like(q) if out is None else out
    assert out.shape == q.shape and out.is_contiguous(), "out: contiguous, shaped like q"
    sm_scale = 1.0 / math.sqrt(D) if sm_scale is None else sm_scale
    launch_hopper(q, k, v, out, causal, sm_scale, **settings)
    return out


# ---- the inspector's example call ----------------------------------------------------------
def example(device):
    """4 sequences x 32 heads of 4096 tokens, head dim 64, not causal."""
    return launch(*make_inputs((4, 32, 4096), device, head_dim=64))


# ---- bundled-kernel protocol (the same problem as attention.py) --------------------------------
SIZES = [(4, 32, n) for n in (1024, 2048, 4096, 8192)]  # (batch, heads, sequence length)
TEST_SIZES = [(1, 2, 128), (2, 1, 256), (1, 3, 640)]  # 640: a partial last 192-row tile
TOLERANCE = dict(atol=2e-3, rtol=2e-3)
SIZE_NAMES = ("batch", "heads", "sequence")
VARIANTS = {
    "hd64": {"causal": False, "head_dim": 64},
    "hd64-causal": {"causal": True, "head_dim": 64},
    "hd128": {"causal": False, "head_dim": 128},
    "hd128-causal": {"causal": True, "head_dim": 128},
}


def make_inputs(size, device, causal=False, head_dim=64):
    """Random fp16 Q, K, V of shape (Z, H, N_CTX, head_dim)."""
    return tuple(torch.randn(*size, head_dim, device=device, dtype=torch.float16) for _ in range(3))


def reference(q, k, v, causal=False):
    """SDPA in fp32, back to fp16."""
    return torch.nn.functional.scaled_dot_product_attention(q.float(), k.float(), v.float(),
                                                            is_causal=causal).to(q.dtype)


def baseline(q, k, v, causal=False):
    """PyTorch's own fp16 attention (cuDNN or FlashAttention on an H100/H200)."""
    return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)


def flops(size, causal=False, head_dim=64):
    """QK^T and PV: 4 N^2 d per head, half of it causal."""
    z, h, n = size
    return 4 * z * h * n * n * head_dim // (2 if causal else 1)


def bytes_moved(size, head_dim=64):
    """Q, K, V read and O written once, 2 bytes each."""
    z, h, n = size
    return 8 * z * h * n * head_dim
