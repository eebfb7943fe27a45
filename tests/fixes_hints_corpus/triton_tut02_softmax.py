# Source: triton-lang/triton, python/tutorials/02-fused-softmax.py
#         commit fd237c7cf9a7262f32fedbaa5027ab2736ead134 (as stored in the code index)
# Licence: MIT (triton-lang/triton LICENSE)
# Excerpt: softmax_kernel, verbatim. Cut: the host-side occupancy/warmup logic,
#          unit test and benchmark (the launcher below is ours).
# Published hint: none.
# Lost facts: `row_idx * input_row_stride` / `row_idx * output_row_stride` (run-time
#   row stride, not divisible by 16 so not specialised) -> row pointer alignment unknown;
#   `col_offsets < n_cols` (run-time n_cols) -> mask constancy 1.
#   With n_cols = 1000 fp32 (e.g. ImageNet logits) the row stride is a multiple of 4
#   elements (16 bytes) and the mask is constant in groups of 4, so 128-bit access is legal.
# TWIN: n_rows, n_cols = 16, 1000 => n_rows, n_cols = 16, 1001
# REFERENCE: row_start_ptr = input_ptr + row_idx * input_row_stride => row_start_ptr = input_ptr + tl.multiple_of(row_idx * input_row_stride, 4)
# REFERENCE: output_row_start_ptr = output_ptr + row_idx * output_row_stride => output_row_start_ptr = output_ptr + tl.multiple_of(row_idx * output_row_stride, 4)
# REFERENCE: mask = col_offsets < n_cols => mask = tl.max_constancy(col_offsets < n_cols, 4)
import torch
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(output_ptr, input_ptr, input_row_stride, output_row_stride, n_rows, n_cols, BLOCK_SIZE: tl.constexpr,
                   num_stages: tl.constexpr):
    # starting row of the program
    row_start = tl.program_id(0)
    row_step = tl.num_programs(0)
    for row_idx in tl.range(row_start, n_rows, row_step, num_stages=num_stages):
        # The stride represents how much we need to increase the pointer to advance 1 row
        row_start_ptr = input_ptr + row_idx * input_row_stride
        # The block size is the next power of two greater than n_cols, so we can fit each
        # row in a single block
        col_offsets = tl.arange(0, BLOCK_SIZE)
        input_ptrs = row_start_ptr + col_offsets
        # Load the row into SRAM, using a mask since BLOCK_SIZE may be > than n_cols
        mask = col_offsets < n_cols
        row = tl.load(input_ptrs, mask=mask, other=-float('inf'))
        # Subtract maximum for numerical stability
        row_minus_max = row - tl.max(row, axis=0)
        # Note that exponentiation in Triton is fast but approximate (i.e., think __expf in CUDA)
        numerator = tl.exp(row_minus_max)
        denominator = tl.sum(numerator, axis=0)
        softmax_output = numerator / denominator
        # Write back output to DRAM
        output_row_start_ptr = output_ptr + row_idx * output_row_stride
        output_ptrs = output_row_start_ptr + col_offsets
        tl.store(output_ptrs, softmax_output, mask=mask)


def example(device):
    torch.manual_seed(0)
    n_rows, n_cols = 16, 1000
    x = torch.randn(n_rows, n_cols, device=device, dtype=torch.float32)
    y = torch.empty_like(x)
    BLOCK_SIZE = triton.next_power_of_2(n_cols)
    num_programs = 8  # persistent programs, as in the tutorial's launcher
    softmax_kernel[(num_programs, 1, 1)](y, x, x.stride(0), y.stride(0), n_rows, n_cols, BLOCK_SIZE, 2, num_warps=4)
    return float((y - torch.softmax(x, dim=1)).abs().max())
