"""Reproduces transpose_kernel as the inspector compiled it, launched by example().

Written by Triton Kernel Inspector from /work/main/kernels/transpose_shared_gluon.py; open it in the inspector or run it under a GPU."""
import torch
import triton
import triton.language as tl

import triton.experimental.gluon.language as gl
from triton.experimental import gluon


@gluon.jit
def transpose_kernel(x_ptr, out_ptr, M, N, TILE: gl.constexpr, SWIZZLE: gl.constexpr):
    rows_fast: gl.constexpr = gl.BlockedLayout([1, 4], [4, 8], [4, 1], [1, 0])  # a thread: 4 columns of a row
    cols_fast: gl.constexpr = gl.BlockedLayout([4, 1], [8, 4], [1, 4], [0, 1])  # a thread: 4 rows of a column
    if SWIZZLE:
        shared: gl.constexpr = gl.SwizzledSharedLayout(1, 1, 32, [1, 0])
    else:
        shared: gl.constexpr = gl.SwizzledSharedLayout(1, 1, 1, [1, 0])
    r = gl.program_id(0) * TILE + gl.arange(0, TILE, layout=gl.SliceLayout(1, rows_fast))
    c = gl.program_id(1) * TILE + gl.arange(0, TILE, layout=gl.SliceLayout(0, rows_fast))
    tile = gl.load(x_ptr + r[:, None] * N + c[None, :], mask=(r[:, None] < M) & (c[None, :] < N))
    buffer = gl.allocate_shared_memory(gl.float32, [TILE, TILE], shared, tile)
    t = buffer.load(cols_fast)
    r2 = gl.program_id(0) * TILE + gl.arange(0, TILE, layout=gl.SliceLayout(1, cols_fast))
    c2 = gl.program_id(1) * TILE + gl.arange(0, TILE, layout=gl.SliceLayout(0, cols_fast))
    gl.store(out_ptr + c2[None, :] * M + r2[:, None], t, mask=(r2[:, None] < M) & (c2[None, :] < N))


def _filled(name, t):
    """`t` with the recorded launch's data where the capture carried it (bit-exact, from the .data.npz
    file beside this one), else made-up values: floats standard normal, integers zero (an index of
    0 is always in bounds). A meta tensor (a GPU-free compile) stays as it is."""
    if t.device.type == "meta":
        return t
    data = _carried_data().get(name)
    if data is not None:
        flat = torch.as_strided(t, (data.size,), (1,), t.storage_offset())
        flat.copy_(torch.from_numpy(data).to(t.device))
    elif t.is_floating_point():
        t.normal_() if t.element_size() > 1 else t.copy_(torch.randn(t.shape).to(t.dtype))
    else:
        t.zero_()
    return t


_CARRIED = []


def _carried_data():
    if not _CARRIED:
        import os
        path = os.path.splitext(os.path.abspath(__file__))[0] + ".data.npz"
        if os.path.exists(path):
            import numpy
            with numpy.load(path, allow_pickle=False) as z:
                _CARRIED.append({k: z[k] for k in z.files})
        else:
            _CARRIED.append({})
    return _CARRIED[0]


def example(device):
    x_ptr = _filled('x_ptr', torch.empty_strided((4096, 4096), (4096, 1), dtype=torch.float32, device=device))
    out_ptr = _filled('out_ptr', torch.empty_strided((4096, 4096), (4096, 1), dtype=torch.float32, device=device))
    transpose_kernel[(64, 64)](
        x_ptr,
        out_ptr,
        4096,
        4096,
        TILE=64,
        SWIZZLE=False,
        num_warps=4,
    )
