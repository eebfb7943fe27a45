"""Reproduces permute_gather as the inspector compiled it, launched by example().

Written by Triton Kernel Inspector from /root/.local/share/triton-inspector/captures/7e9d947abb21/permute_gather.py; open it in the inspector or run it under a GPU."""
import torch
import triton
import triton.language as tl


@triton.jit
def permute_gather(src_ptr, perm_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    idx = tl.load(perm_ptr + offs, mask=mask, other=0)
    x = tl.load(src_ptr + idx, mask=mask)
    tl.store(out_ptr + offs, x, mask=mask)


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
    src_ptr = _filled('src_ptr', torch.empty_strided((10000,), (1,), dtype=torch.float32, device=device))
    perm_ptr = _filled('perm_ptr', torch.empty_strided((10000,), (1,), dtype=torch.int64, device=device))
    out_ptr = _filled('out_ptr', torch.empty_strided((10000,), (1,), dtype=torch.float32, device=device))
    permute_gather[(20,)](
        src_ptr,
        perm_ptr,
        out_ptr,
        10000,
        BLOCK=512,
    )
