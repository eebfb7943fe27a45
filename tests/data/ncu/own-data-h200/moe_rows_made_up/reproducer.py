"""Reproduces moe_gather_rows as the inspector compiled it, launched by example().

Written by Triton Kernel Inspector from /tmp/df/bare_moe_rows/moe_gather_rows.py; open it in the inspector or run it under a GPU."""
import torch
import triton
import triton.language as tl


@triton.jit
def moe_gather_rows(a_ptr, sorted_ids_ptr, out_ptr, num_valid, K: tl.constexpr, TOP_K: tl.constexpr,
                    BLOCK_M: tl.constexpr):
    pid = tl.program_id(0)
    offs_m = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    ids = tl.load(sorted_ids_ptr + offs_m)
    valid = ids < num_valid
    cols = tl.arange(0, K)
    rows = tl.load(a_ptr + (ids // TOP_K)[:, None] * K + cols[None, :], mask=valid[:, None], other=0.0)
    tl.store(out_ptr + offs_m[:, None] * K + cols[None, :], rows, mask=valid[:, None])


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
    a_ptr = _filled('a_ptr', torch.empty_strided((100, 128), (128, 1), dtype=torch.float32, device=device))
    sorted_ids_ptr = _filled('sorted_ids_ptr', torch.empty_strided((272,), (1,), dtype=torch.int32, device=device))
    out_ptr = _filled('out_ptr', torch.empty_strided((272, 128), (128, 1), dtype=torch.float32, device=device))
    moe_gather_rows[(17,)](
        a_ptr,
        sorted_ids_ptr,
        out_ptr,
        200,
        K=128,
        TOP_K=2,
        BLOCK_M=16,
    )
