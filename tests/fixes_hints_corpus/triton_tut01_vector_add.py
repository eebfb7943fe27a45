# Source: triton-lang/triton, python/tutorials/01-vector-add.py
#         commit 545699290b851e70231ee3017481851170f1583d (as stored in the code index)
# Licence: MIT (triton-lang/triton LICENSE)
# Excerpt: add_kernel, verbatim. The launcher follows the tutorial's add() (BLOCK_SIZE=1024,
#          default num_warps) but with a vector length that is not a multiple of 16.
# Published hint: none.
# Lost fact: the bound n_elements is a run-time argument; when it is not a multiple of 16
#   it is not specialised, the mask `offsets < n_elements` gets constancy 1 and EVERY block
#   (not only the last, partial one) is loaded and stored one element at a time.
#   n_elements = 3000 fp32 (e.g. a 3 x 1000 tensor) is a multiple of 4, so the mask is
#   constant on every aligned group of 4 and 128-bit accesses are legal.
# TWIN: size = 3000 => size = 3001
# REFERENCE: mask = offsets < n_elements => mask = tl.max_constancy(offsets < n_elements, 4)
import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr,  # *Pointer* to first input vector.
               y_ptr,  # *Pointer* to second input vector.
               output_ptr,  # *Pointer* to output vector.
               n_elements,  # Size of the vector.
               BLOCK_SIZE: tl.constexpr,  # Number of elements each program should process.
               # NOTE: `constexpr` so it can be used as a shape value.
               ):
    # There are multiple 'programs' processing different data. We identify which program
    # we are here:
    pid = tl.program_id(axis=0)  # We use a 1D launch grid so axis is 0.
    # This program will process inputs that are offset from the initial data.
    # For instance, if you had a vector of length 256 and block_size of 64, the programs
    # would each access the elements [0:64, 64:128, 128:192, 192:256].
    # Note that offsets is a list of pointers:
    block_start = pid * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    # Create a mask to guard memory operations against out-of-bounds accesses.
    mask = offsets < n_elements
    # Load x and y from DRAM, masking out any extra elements in case the input is not a
    # multiple of the block size.
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    output = x + y
    # Write x + y back to DRAM.
    tl.store(output_ptr + offsets, output, mask=mask)


def example(device):
    torch.manual_seed(0)
    size = 3000
    x = torch.rand(size, device=device)
    y = torch.rand(size, device=device)
    output = torch.empty_like(x)
    n_elements = output.numel()
    grid = lambda meta: (triton.cdiv(n_elements, meta['BLOCK_SIZE']), )
    add_kernel[grid](x, y, output, n_elements, BLOCK_SIZE=1024)
    return float((output - (x + y)).abs().max())
