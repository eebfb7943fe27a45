"""The device's two ceilings, measured rather than taken from a datasheet, and cached on disk.

- Memory: a large device-to-device copy (`dst.copy_(src)`), counting bytes read plus bytes
  written, as the kernels' `bytes_moved` does; buffers of 256 MiB to 4 GiB, far larger than any
  L2, so the copy streams from and to device memory.
- Arithmetic: a dense bf16 n x n x n matrix product through PyTorch (cuBLAS / hipBLASLt) on random
  data (zeros run faster on some GPUs), 2 n^3 FLOP per product, n = 4096, 8192, 16384.

Each is timed with `triton.testing.do_bench` (median, after a warm-up that lets the clocks
rise); the ceiling is the best size's median, and every size's figure is kept in `trials`. The
result is cached per device (name, UUID, driver) in the inspector's cache folder, so a device is
measured once.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import tempfile
from typing import Any

from inspector.compile.cache import default_cache_dir

from .shipped import recorded_kernels, recorded_result
from .records import Ceilings, DeviceInfo

# Bytes of the copied buffer (read once, written once: twice this moves), all far beyond any L2.
COPY_SIZES = (2**28, 2**30, 2**32)
MATMUL_SIZES = (4096, 8192, 16384)
CACHE_FILE = "ceilings.json"


def _cache_path() -> str:
    return os.path.join(default_cache_dir(), CACHE_FILE)


def device_key(device: DeviceInfo, uuid: str | None = None) -> str:
    """What identifies one device for the cache: its name, UUID when known, and the driver."""
    return "|".join(
        ["v2", device.name, uuid or "", device.driver or "", device.hip or device.cuda_runtime or ""]
    )


def _read_cache() -> dict[str, Any]:
    try:
        with open(_cache_path(), encoding="utf-8") as f:
            data = json.load(f)
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def cached_ceilings(key: str) -> Ceilings | None:
    """The ceilings stored for `key`, if this machine measured them before."""
    entry = _read_cache().get(key)
    try:
        return Ceilings.from_dict(entry) if entry else None
    except (KeyError, TypeError):
        return None


def store_ceilings(key: str, ceilings: Ceilings) -> None:
    """Add or replace one device's ceilings (atomic rename, so concurrent readers see a whole file)."""
    data = _read_cache()
    data[key] = ceilings.to_dict()
    folder = os.path.dirname(_cache_path())
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".ceilings-", suffix=".tmp", dir=folder)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=1)
    os.replace(tmp, _cache_path())


def measure_ceilings(device_name: str = "", rep_ms: int = 200, warmup_ms: int = 100) -> Ceilings:
    """Time the copies and the bf16 products on the current CUDA/HIP device (imports torch, Triton).

    Each ceiling is the best median over a few sizes (COPY_SIZES, MATMUL_SIZES, those that fit):
    the rate the vendor's own code reaches, which a kernel can be measured against.
    """
    import torch
    from triton.testing import do_bench

    props = torch.cuda.get_device_properties(torch.cuda.current_device())

    def copy_rate(nbytes: int) -> float:
        src = torch.randn(nbytes // 4, device="cuda", dtype=torch.float32)
        dst = torch.empty_like(src)
        ms = do_bench(lambda: dst.copy_(src), warmup=warmup_ms, rep=rep_ms, quantiles=[0.5])
        return 2 * nbytes / (ms * 1e-3) / 1e9

    def matmul_rate(n: int) -> float:
        a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
        ms = do_bench(lambda: a @ b, warmup=warmup_ms, rep=rep_ms, quantiles=[0.5])
        return 2 * n**3 / (ms * 1e-3) / 1e12

    # Sizes whose buffers take at most a quarter of the card.
    copies = {n: copy_rate(n) for n in COPY_SIZES if 2 * n <= props.total_memory // 4}
    products = {n: matmul_rate(n) for n in MATMUL_SIZES if 3 * n * n * 2 <= props.total_memory // 4}
    trials = {f"copy {n // 2**20} MiB": v for n, v in copies.items()}
    trials.update({f"bf16 matmul {n}": v for n, v in products.items()})
    copy_n = max(copies, key=copies.__getitem__)
    best_n = max(products, key=products.__getitem__)
    torch.cuda.empty_cache()
    return Ceilings(
        copy_gbps=copies[copy_n],
        matmul_tflops=products[best_n],
        copy_bytes=2 * copy_n,
        matmul_n=best_n,
        device=device_name or props.name,
        measured=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        trials=trials,
    )


def device_ceilings(device: DeviceInfo, uuid: str | None = None, refresh: bool = False) -> Ceilings:
    """The device's ceilings: from the cache, or measured now and cached."""
    key = device_key(device, uuid)
    if not refresh:
        hit = cached_ceilings(key)
        if hit is not None:
            return hit
    ceilings = measure_ceilings(device.name)
    try:
        store_ceilings(key, ceilings)
    except OSError:
        pass  # a read-only cache folder only costs a re-measure next time
    return ceilings


def ceilings_for_name(device_name: str) -> Ceilings | None:
    """Ceilings measured on a device of this name: this machine's own (the cache; the newest when
    several drivers measured it), else the newest in a shipped benchmark record; None when neither.
    For a profile read on another machine, whose device is only known by name."""
    if not device_name:
        return None
    found = []
    for entry in _read_cache().values():
        try:
            c = Ceilings.from_dict(entry)
        except (KeyError, TypeError):
            continue
        if c.device == device_name:
            found.append(c)
    if not found:
        for kernel in recorded_kernels():
            result = recorded_result(kernel)
            if result is not None and result.ceilings is not None and result.ceilings.device == device_name:
                found.append(result.ceilings)
    return max(found, key=lambda c: c.measured) if found else None
