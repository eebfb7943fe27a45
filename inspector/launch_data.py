"""The data a recorded launch's index tensors held, carried beside its reproducer.

A kernel whose addresses, masks or loop bounds come from memory (jagged offsets, gather indices,
block tables, MoE routing) measures and models another launch when run on made-up values. When a
launch is recorded from a real run (`--run`, `capture`), the contents of its integer and boolean
tensors (the only ones that can hold indices or bounds) are kept, bit-exact, as the elements from
the pointer the kernel receives to the last one its strides reach; the reproducer fills them from
a sidecar file `<reproducer>.data.npz` (numpy, no pickles) and every other input with made-up
values (`fill` below). The analysis then reads which of them really reach an address, a mask or
a loop bound (`analysis.data_inputs`).

Limits (decided, stated here and in docs/profile.md): a tensor of more than MAX_TENSOR_BYTES, or
beyond MAX_LAUNCH_BYTES for one launch, is not carried; the reproducer then fills it with zeros and
says so. Natively, the recorder reads the tensors after the launch it records (an index tensor the
kernel itself writes is carried as the kernel left it); under the interpreter, before it.
"""

from __future__ import annotations

import io
import os
from typing import Any

import numpy as np

MAX_TENSOR_BYTES = 16 << 20
MAX_LAUNCH_BYTES = 64 << 20
SUFFIX = ".data.npz"

# numpy has no bfloat16 or fp8: only these are carried (every index and bound is one of them)
_CARRIED_DTYPES = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "bool")


def sidecar(reproducer_path: str | os.PathLike) -> str:
    """The data file beside a reproducer: `k.py` -> `k.data.npz`."""
    root, _ = os.path.splitext(os.fspath(reproducer_path))
    return root + SUFFIX


def _extent(shape: list[int], stride: list[int]) -> int:
    """Elements from a view's first to its last, inclusive (0 for an empty view)."""
    if any(s == 0 for s in shape):
        return 0
    return sum((s - 1) * st for s, st in zip(shape, stride)) + 1


def snapshot(values: dict[str, Any]) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """The launch's integer and boolean tensors as flat arrays from their data pointer (see the
    module docstring), and, for each tensor not carried, why not."""
    import torch

    kept: dict[str, np.ndarray] = {}
    skipped: dict[str, str] = {}
    total = 0
    for name, t in values.items():
        if not isinstance(t, torch.Tensor) or str(t.dtype).removeprefix("torch.") not in _CARRIED_DTYPES:
            continue
        if t.device.type == "meta":
            skipped[name] = "a meta tensor (no data)"
            continue
        n = _extent(list(t.shape), list(t.stride()))
        size = n * t.element_size()
        if size > MAX_TENSOR_BYTES or total + size > MAX_LAUNCH_BYTES:
            skipped[name] = f"{size:,} bytes, over the limit ({MAX_TENSOR_BYTES >> 20} MiB a tensor, " \
                            f"{MAX_LAUNCH_BYTES >> 20} MiB a launch)"
            continue
        flat = torch.as_strided(t.detach(), (n,), (1,), t.storage_offset())
        kept[name] = flat.cpu().numpy().copy()
        total += size
    return kept, skipped


def to_bytes(arrays: dict[str, np.ndarray]) -> bytes:
    """The arrays as an .npz file's bytes."""
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)
    return buf.getvalue()


def from_bytes(data: bytes) -> dict[str, np.ndarray]:
    """The arrays of an .npz file's bytes (never unpickles anything)."""
    with np.load(io.BytesIO(data), allow_pickle=False) as z:
        return {k: z[k] for k in z.files}


def read(path: str | os.PathLike) -> dict[str, np.ndarray]:
    """The arrays of a sidecar file; {} when there is none or it cannot be read as one."""
    try:
        with open(path, "rb") as f:
            return from_bytes(f.read())
    except (OSError, ValueError):
        return {}


# The helper a reproducer carries (it must run without the inspector installed, on any device).
FILL_SOURCE = '''
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
'''
