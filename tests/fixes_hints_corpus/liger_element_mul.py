# Source: linkedin/Liger-Kernel, src/liger_kernel/ops/utils.py
#         release v0.8.2 (commit 000be60929938fd1358e03524c6ab398b6d421bd)
# Licence: BSD-2-Clause (Liger-Kernel LICENSE)
# Excerpt: element_mul_kernel, verbatim except the docstring is cut. It is launched by
#          cross_entropy_backward (src/liger_kernel/ops/cross_entropy.py) with
#          X_stride = _input.stride(-2), n_cols = V, grid (n_rows,).
# Published hint: none.
# Lost facts: the loop `for i in range(0, n_cols, BLOCK_SIZE)` with mask `X_offsets < n_cols`
#   against a run-time n_cols -> mask constancy 1; `program_id * X_stride` with a run-time
#   stride -> row alignment unknown. fp32 gradient of logits over V = 1000 classes
#   (ImageNet-1k head): V is a multiple of 4 but not of 16.
# Launch note: the example uses BLOCK_SIZE=256, num_warps=2 (4 elements per thread). The
#   published call uses BLOCK_SIZE=min(32768, next_power_of_2(V)) and num_warps=32, which
#   for V = 1000 gives one element per thread (nothing to vectorise); the loss matters for
#   V > 1024 with V % 16 != 0 (e.g. a 50,004-class head).
# TWIN: n_rows, V = 4, 1000 => n_rows, V = 4, 999
# REFERENCE: X_ptr += program_id * X_stride => X_ptr += tl.multiple_of(program_id * X_stride, 4)
# REFERENCE: X_block = tl.load(X_ptr + X_offsets, mask=X_offsets < n_cols) => X_block = tl.load(X_ptr + X_offsets, mask=tl.max_constancy(X_offsets < n_cols, 4))
# REFERENCE: tl.store(X_ptr + X_offsets, X_block * grad_output, mask=X_offsets < n_cols) => tl.store(X_ptr + X_offsets, X_block * grad_output, mask=tl.max_constancy(X_offsets < n_cols, 4))
import torch
import triton
import triton.language as tl


@triton.jit
def element_mul_kernel(
    X_ptr,
    X_stride,
    grad_output_ptr,
    n_cols,
    BLOCK_SIZE: tl.constexpr,
):
    # Get the program ID and convert it to int64 to avoid overflow
    program_id = tl.program_id(0).to(tl.int64)

    # Locate the start index
    X_ptr += program_id * X_stride

    # Load the gradient output value
    grad_output = tl.load(grad_output_ptr)

    # Perform the element-wise multiplication
    for i in range(0, n_cols, BLOCK_SIZE):
        X_offsets = i + tl.arange(0, BLOCK_SIZE)
        X_block = tl.load(X_ptr + X_offsets, mask=X_offsets < n_cols)
        tl.store(X_ptr + X_offsets, X_block * grad_output, mask=X_offsets < n_cols)


def example(device):
    torch.manual_seed(0)
    n_rows, V = 4, 1000
    x = torch.randn(n_rows, V, device=device, dtype=torch.float32)
    expected = x * 0.5
    grad_output = torch.tensor(0.5, device=device, dtype=torch.float32)
    element_mul_kernel[(n_rows, )](x, x.stride(-2), grad_output, V, BLOCK_SIZE=256, num_warps=2)
    return float((x - expected).abs().max())
