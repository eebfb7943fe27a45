# Source: pytorch/FBGEMM, fbgemm_gpu/fbgemm_gpu/triton/jagged/triton_jagged_tensor_ops.py
#         commit 2e66377be73d66b45f890fc6ccb5b0989c844fd9 (as stored in the code index)
# Licence: BSD-3-Clause ("BSD-style license found in the LICENSE file", FBGEMM)
# Excerpt: triton_dense_to_jagged. Cut: the optional fused add/mul path (parameters
#          operation_function / operation_jagged_value_ptr, the two `if operation_function
#          is not None:` blocks and the helpers they call); everything else verbatim (pyre
#          comments kept). Launched as dense_to_jagged() does for a 2-D jagged tensor:
#          grid = (num_sequences,), 32x32 tiles, JAGGED_DIM = 2, dense_indices = None.
# Published hint: none.
# Lost facts: the row loop runs over bounds [begin, end) loaded from jagged_offsets; the
#   jagged base pointer is advanced by begin times the run-time row stride, and the tile
#   rows by offset_row times the run-time dense row stride (D = 100 here: not a multiple
#   of 16, so not specialised) -> row alignment unknown; the two column masks compare
#   against run-time bounds (N, dense_boundary_col) -> constancy 1.
#   fp32 with D = 100 (a multiple of 4, as FBGEMM embedding dims are).
# TWIN: B, D, max_len = 4, 100, 8 => B, D, max_len = 4, 101, 8
# REFERENCE: jagged_value_ptr += begin * jagged_value_row_stride => jagged_value_ptr += tl.multiple_of(begin * jagged_value_row_stride, 4)
# REFERENCE: offset_row[:, None] * dense_row_stride => tl.multiple_of(offset_row[:, None] * dense_row_stride, (4, 4))
# REFERENCE: offset_col[None, :] < dense_boundary_col => tl.max_constancy(offset_col[None, :] < dense_boundary_col, (1, 4))
# REFERENCE: jagged_mask = (offset_row[:, None] < M) & (offset_col[None, :] < N) => jagged_mask = (offset_row[:, None] < M) & tl.max_constancy(offset_col[None, :] < N, (1, 4))
import torch
import triton
import triton.language as tl


# each kernel will handle the conversion of one jagged tensor offset range from corresponding dense index
@triton.jit
def triton_dense_to_jagged(
    # pyre-fixme[2]: Parameter must be annotated.
    jagged_value_ptr,
    # pyre-fixme[2]: Parameter must be annotated.
    jagged_offsets_ptr,
    jagged_value_row_stride: int,
    # pyre-fixme[2]: Parameter must be annotated.
    output_dense_ptr,
    # pyre-fixme[2]: Parameter must be annotated.
    dense_indices_ptr,
    # pyre-fixme[2]: Parameter must be annotated.
    dense_col_stride,  # stride of output dense with dimension (z,y,x)
    dense_row_stride: int,
    # pyre-fixme[2]: Parameter must be annotated.
    dense_matrix_stride,
    JAGGED_DIM: tl.constexpr,  # number of dimension of jagged tensor
    thread_block_row_size: tl.constexpr,
    thread_block_col_size: tl.constexpr,
) -> None:
    pid = tl.program_id(0)

    begin = tl.load(jagged_offsets_ptr + pid)
    end = tl.load(jagged_offsets_ptr + (pid + 1))

    # size of the current value offset range (M , N)
    N = jagged_value_row_stride
    M = end - begin

    dense_boundary_col = dense_row_stride
    # tl.minimum will change the return type cased compile issue
    # in that case use if statement instead
    if N < dense_row_stride:
        dense_boundary_col = N

    dense_boundary_row = tl.minimum(dense_matrix_stride // dense_row_stride, M)

    jagged_value_ptr += begin * jagged_value_row_stride
    if JAGGED_DIM > 2:
        dense_indice = tl.load(dense_indices_ptr + pid)
        # if dense output range we set dense_boundary to -1
        # that mean dense values will not be use with mask
        # since we still need the calculation of fusion step
        # therefore we do not do return here
        if dense_indice == -1:
            dense_boundary_col = -1
        else:
            output_dense_ptr += dense_indice
    else:
        output_dense_ptr += pid * dense_matrix_stride

    offset_row = tl.arange(0, thread_block_row_size)

    for _i in range(begin, end, thread_block_row_size):
        offset_col = tl.arange(0, thread_block_col_size)
        block_offset = (
            offset_row[:, None] * dense_row_stride
            + offset_col[None, :] * dense_col_stride
        )

        for _j in range(0, N, thread_block_col_size):
            dense_mask = (offset_row[:, None] < dense_boundary_row) & (
                offset_col[None, :] < dense_boundary_col
            )
            jagged_mask = (offset_row[:, None] < M) & (offset_col[None, :] < N)
            dense_values = tl.load(
                output_dense_ptr + block_offset, mask=dense_mask, other=0
            )
            tl.store(jagged_value_ptr + block_offset, dense_values, mask=jagged_mask)
            offset_col += thread_block_col_size
            block_offset += thread_block_col_size
        offset_row += thread_block_row_size


def example(device):
    torch.manual_seed(0)
    B, D, max_len = 4, 100, 8
    lengths = torch.tensor([3, 8, 0, 5])
    offsets = torch.zeros(B + 1, dtype=torch.int64)
    offsets[1:] = torch.cumsum(lengths, 0)
    offsets = offsets.to(device)
    total = int(lengths.sum())
    dense = torch.randn(B, max_len, D, device=device, dtype=torch.float32)
    out = torch.empty(total, D, device=device, dtype=torch.float32)
    grid = (B, )
    triton_dense_to_jagged[grid](out, offsets, out.stride(0), dense, None, dense.stride(-1), dense.stride(-2),
                                 dense.stride(-3), 2, 32, 32, num_warps=4)
    ref = torch.cat([dense[b, :int(lengths[b])] for b in range(B)])
    return float((out - ref).abs().max())
