# Source: unslothai/unsloth, unsloth/kernels/cross_entropy_loss.py
#         commit ee73bcb209dfe54818719e4b0b50ed560fa44639 (last commit touching the file;
#         snapshot HEAD 015bdef0d94a241bcd94eec7a405b1700632180d, v0.1.801-beta-29)
# Licence: Apache-2.0 (file header)
# Excerpt: _cross_entropy_forward (the non-chunked path), verbatim except that the long
#          docstring is cut; wrapped with triton.jit and triton.heuristics exactly as
#          published. triton_cast / triton_tanh are the Triton >= 3 definitions from
#          unsloth/kernels/utils.py (under TRITON_INTERPRET=1 the file switches to the
#          utils.py pre-Triton-3 jit definition of triton_cast). Launch as in Fast_CrossEntropyLoss.forward with
#          BLOCK_SIZE, num_warps = calculate_settings(vocab_size).
# Published hint: none.
# Lost fact: `row_idx * triton_cast(logits_row_stride, tl.int64)` - the logits row stride is
#   a run-time argument; with a 1000-class head (ImageNet-1k, fp32 logits) it is a multiple
#   of 4 but not of 16, so it is not specialised and each row load is scalar. The mask is
#   against the constexpr VOCAB_SIZE = 1000 and is fine.
# TWIN: n_rows, vocab_size = 8, 1000 => n_rows, vocab_size = 8, 1001
# REFERENCE: logits_ptr += row_idx * triton_cast(logits_row_stride, tl.int64) => logits_ptr += tl.multiple_of(row_idx * triton_cast(logits_row_stride, tl.int64), 4)
import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice

triton_tanh = libdevice.tanh
triton_cast = tl.cast

import os as _os
if _os.environ.get("TRITON_INTERPRET") == "1":
    # the Triton 3.9 interpreter cannot call a module-level alias of tl.cast; use unsloth's
    # own pre-Triton-3 definition of triton_cast instead (interpreter only)
    @triton.jit
    def triton_cast(x, dtype):
        return x.to(dtype)


def _cross_entropy_forward(
    logits_ptr,
    logits_row_stride,
    loss_ptr,
    logsumexp_ptr,
    labels_ptr,
    VOCAB_SIZE: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
    DO_SOFTCAPPING: tl.constexpr,
    SOFTCAP: tl.constexpr,
    DO_LOGIT_SCALING: tl.constexpr,
    LOGIT_SCALE: tl.constexpr,
):
    row_idx = tl.program_id(0)
    logits_ptr += row_idx * triton_cast(logits_row_stride, tl.int64)
    loss_ptr += row_idx
    logsumexp_ptr += row_idx
    labels_ptr += row_idx

    col_offsets = tl.arange(0, BLOCK_SIZE)
    mask = col_offsets < VOCAB_SIZE

    label_idx = tl.load(labels_ptr).to(tl.int32)
    logits = tl.load(logits_ptr + col_offsets, mask = mask, other = -float("inf")).to(tl.float32)

    # Go logit scaling for Cohere: t * x
    if DO_LOGIT_SCALING:
        logits = LOGIT_SCALE * logits
    # Do logit softcapping for Gemma 2: t * tanh(1/t * x)
    if DO_SOFTCAPPING:
        logits = SOFTCAP * triton_tanh(logits / SOFTCAP)

    c = tl.max(logits, 0)
    logsumexp = c + tl.log(tl.sum(tl.exp(logits - c), 0))

    if label_idx != -100:
        x = tl.load(logits_ptr + label_idx).to(tl.float32)
        # Go logit scaling for Cohere: t * x
        if DO_LOGIT_SCALING:
            x = LOGIT_SCALE * x
        # Do logit softcapping for Gemma 2: t * tanh(1/t * x)
        if DO_SOFTCAPPING:
            x = SOFTCAP * triton_tanh(x / SOFTCAP)
        loss = logsumexp - x
    else:
        loss = 0.0
    tl.store(logsumexp_ptr, logsumexp)
    tl.store(loss_ptr, loss)


_cross_entropy_forward = triton.jit(_cross_entropy_forward)
_cross_entropy_forward = triton.heuristics(
    {
        "DO_SOFTCAPPING": lambda args: bool(args["DO_SOFTCAPPING"]),
        "DO_LOGIT_SCALING": lambda args: bool(args["DO_LOGIT_SCALING"]),
    }
)(_cross_entropy_forward)


def example(device):
    torch.manual_seed(0)
    n_rows, vocab_size = 8, 1000
    logits = torch.randn(n_rows, vocab_size, device=device, dtype=torch.float32)
    labels = torch.randint(0, vocab_size, (n_rows, ), device=device, dtype=torch.int64)
    labels[3] = -100
    losses = torch.empty(n_rows, device=device, dtype=torch.float32)
    logsumexp = torch.empty(n_rows, device=device, dtype=torch.float32)
    BLOCK_SIZE = triton.next_power_of_2(vocab_size)  # calculate_settings(1000) -> (1024, 4)
    _cross_entropy_forward[(n_rows, )](logits, logits.stride(0), losses, logsumexp, labels, VOCAB_SIZE=vocab_size,
                                       BLOCK_SIZE=BLOCK_SIZE, DO_SOFTCAPPING=False, SOFTCAP=0,
                                       DO_LOGIT_SCALING=False, LOGIT_SCALE=0, num_warps=4)
    ref = torch.nn.functional.cross_entropy(logits, labels, reduction="none", ignore_index=-100)
    return float((losses - ref).abs().max())
