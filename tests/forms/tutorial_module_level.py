"""Tutorial style: the file sizes its grid from the device and launches at module level."""
import torch
import triton
import triton.language as tl
from triton.runtime import driver

DEVICE = triton.runtime.driver.active.get_active_torch_device()


@triton.jit
def row_softmax(out_ptr, in_ptr, in_stride, out_stride, n_rows, n_cols, BLOCK: tl.constexpr):
    for row in tl.range(tl.program_id(0), n_rows, tl.num_programs(0)):
        cols = tl.arange(0, BLOCK)
        x = tl.load(in_ptr + row * in_stride + cols, mask=cols < n_cols, other=-float("inf"))
        e = tl.exp(x - tl.max(x, axis=0))
        tl.store(out_ptr + row * out_stride + cols, e / tl.sum(e, axis=0), mask=cols < n_cols)


props = driver.active.utils.get_device_properties(DEVICE.index)
NUM_SM = props["multiprocessor_count"]
NUM_REGS = props["max_num_regs"]
WARP_SIZE = props["warpSize"]


def softmax(x):
    n_rows, n_cols = x.shape
    y = torch.empty_like(x)
    compiled = row_softmax.warmup(y, x, x.stride(0), y.stride(0), n_rows, n_cols, BLOCK=triton.next_power_of_2(n_cols),
                                  num_warps=8, grid=(1,))
    compiled._init_handles()
    per_sm = NUM_REGS // (compiled.n_regs * WARP_SIZE * 8)
    grid = min(NUM_SM * per_sm, n_rows)
    compiled[(grid, 1, 1)](y, x, x.stride(0), y.stride(0), n_rows, n_cols)
    return y


torch.manual_seed(0)
x = torch.randn(1823, 781, device=DEVICE)
y = softmax(x)
assert torch.allclose(y, torch.softmax(x, axis=1)), "mismatch"  # needs real data: the run stops here
print("done")
