"""The Python port against NVIDIA's own `cuda_occupancy.h`, compiled here with the C compiler.

The header ships in Triton's wheel (triton/backends/nvidia/include). A small C program feeds it
the same device properties (inspector.hardware.architectures) and inputs as the Python port, over thousands of
configurations: block sizes, register counts, static and dynamic shared memory, carveouts, the
opt-in attribute and barrier counts, for every compute capability in the table.
"""

from __future__ import annotations

import itertools
import random
import shutil
import subprocess
from pathlib import Path

import pytest

from inspector.hardware.architectures import KB, NVIDIA_LIMITS
from inspector.occupancy import nvidia_occupancy

HARNESS = r"""
#include <stdio.h>
#include <limits.h>
#include "cuda_occupancy.h"

int main(void) {
    int major, minor, maxWarps, threads, regs, barriers, carveout;
    long smemSM, optin, reserved, dyn, stat, maxDyn;
    while (scanf("%d %d %d %ld %ld %ld %d %d %ld %ld %ld %d %d", &major, &minor, &maxWarps, &smemSM, &optin,
                 &reserved, &threads, &regs, &dyn, &stat, &maxDyn, &carveout, &barriers) == 13) {
        cudaOccDeviceProp p; memset(&p, 0, sizeof p);
        p.computeMajor = major; p.computeMinor = minor; p.maxThreadsPerBlock = 1024;
        p.maxThreadsPerMultiprocessor = maxWarps * 32; p.regsPerBlock = 65536; p.regsPerMultiprocessor = 65536;
        p.warpSize = 32; p.sharedMemPerBlock = 49152; p.sharedMemPerMultiprocessor = (size_t)smemSM;
        p.numSms = 1; p.sharedMemPerBlockOptin = (size_t)optin; p.reservedSharedMemPerBlock = (size_t)reserved;
        cudaOccFuncAttributes a; memset(&a, 0, sizeof a);
        /* As the runtime converts cudaFuncAttributes: opt-in config, partitioned caching off. */
        a.maxThreadsPerBlock = 1024; a.numRegs = regs; a.sharedSizeBytes = (size_t)stat;
        a.partitionedGCConfig = PARTITIONED_GC_OFF; a.shmemLimitConfig = FUNC_SHMEM_LIMIT_OPTIN;
        a.maxDynamicSharedSizeBytes = (size_t)maxDyn; a.numBlockBarriers = barriers;
#if __CUDA_OCC_MAJOR__ > 12 || (__CUDA_OCC_MAJOR__ == 12 && __CUDA_OCC_MINOR__ >= 1)
        a.virtualResourceCount = 0;
#endif
        cudaOccDeviceState s; s.cacheConfig = CACHE_PREFER_NONE; s.carveoutConfig = carveout;
        cudaOccResult r; memset(&r, 0, sizeof r);
        cudaOccError e = cudaOccMaxActiveBlocksPerMultiprocessor(&r, &p, &a, &s, threads, (size_t)dyn);
        printf("%d %d %u %d %d %d %d %d %d %zu\n", (int)e, r.activeBlocksPerMultiprocessor, r.limitingFactors,
               r.blockLimitWarps, r.blockLimitRegs, r.blockLimitSharedMem, r.blockLimitBlocks,
               r.blockLimitBarriers, r.allocatedRegistersPerBlock, r.allocatedSharedMemPerBlock);
    }
    return 0;
}
"""

FLAGS = {"warps": 0x01, "registers": 0x02, "shared_memory": 0x04, "blocks": 0x08, "barriers": 0x10}
INT_MAX = 2**31 - 1
UNKNOWN_DEVICE = 2  # CUDA_OCC_ERROR_UNKNOWN_DEVICE


def _header() -> Path | None:
    try:
        import triton
    except ImportError:
        return None
    path = Path(triton.__file__).parent / "backends" / "nvidia" / "include" / "cuda_occupancy.h"
    return path if path.exists() else None


@pytest.fixture(scope="module")
def header_binary(tmp_path_factory) -> Path:
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    header = _header()
    if cc is None or header is None:
        pytest.skip("needs a C compiler and Triton's cuda_occupancy.h")
    d = tmp_path_factory.mktemp("occ")
    (d / "h.c").write_text(HARNESS)
    exe = d / "occ"
    subprocess.run([cc, "-std=gnu99", "-O1", "-I", str(header.parent), str(d / "h.c"), "-o", str(exe)],
                   check=True, capture_output=True)
    return exe


def _cases() -> list[tuple]:
    rng = random.Random(20240917)
    threads = [1, 32, 33, 64, 96, 128, 160, 192, 256, 288, 384, 512, 640, 768, 1024, 1025]
    regs = [0, 1, 16, 24, 32, 40, 48, 56, 64, 72, 80, 96, 128, 168, 200, 232, 255, 256, 257]
    dyn = [0, 1, 127, 1024, 8 * KB, 16 * KB, 40000, 48 * KB, 48 * KB + 1, 64 * KB, 99 * KB, 100000, 163 * KB,
           200000, 227 * KB, 227 * KB + 1]
    static = [0, 1000, 4 * KB, 12 * KB]
    carveouts = [-1, 0, 10, 25, 33, 50, 66, 100]
    cases = []
    for cc in NVIDIA_LIMITS:
        # Every block size x register count at the defaults, then a random sample of everything.
        for t, r in itertools.product(threads, regs):
            cases.append((cc, t, r, 0, 0, False, -1, 1))
        for _ in range(3000):
            cases.append((cc, rng.choice(threads), rng.choice(regs), rng.choice(dyn), rng.choice(static),
                          rng.random() < 0.5, rng.choice(carveouts), rng.choice([0, 1, 1, 2, 3, 5])))
    return cases


def test_python_port_matches_header(header_binary):
    cases = _cases()
    lines = []
    for cc, t, r, d, s, opted, carve, bars in cases:
        lim = NVIDIA_LIMITS[cc]
        max_dyn = lim.max_smem_per_block_optin - s if opted else 48 * KB
        lines.append(f"{cc[0]} {cc[1]} {lim.max_warps_per_sm} {lim.smem_per_sm} {lim.max_smem_per_block_optin} "
                     f"{lim.reserved_smem_per_block} {t} {r} {d} {s} {max_dyn} {carve} {bars}")
    out = subprocess.run([str(header_binary)], input="\n".join(lines) + "\n", capture_output=True, text=True,
                         check=True).stdout.split("\n")
    compared = 0
    unknown: set[tuple[int, int]] = set()
    for case, line in zip(cases, out):
        cc, t, r, d, s, opted, carve, bars = case
        err, blocks, flags, lw, lr, ls, lb, lbar, regs_alloc, smem_alloc = (int(x) for x in line.split())
        if err == UNKNOWN_DEVICE:  # older copies of the header (Triton 3.6: CUDA 12.0) lack sm_103
            unknown.add(cc)
            continue
        assert err == 0, case
        py = nvidia_occupancy(cc, t, r, d, s, opted_in=opted, carveout=carve, barriers=bars)
        lim = py.limits

        def same(ours, theirs):
            return theirs == INT_MAX if ours is None else ours == theirs

        assert py.blocks_per_sm == blocks, case
        assert lim["warps"] == lw and same(lim["registers"], lr) and same(lim["shared_memory"], ls), case
        assert lim["blocks"] == lb and same(lim["barriers"], lbar), case
        assert py.registers_per_block == regs_alloc and py.smem_per_block == smem_alloc, case
        # The header flags factors before the barrier limit applies; where that limit does not lower
        # the answer further, its flags are exactly our limiters.
        pre_barrier = min(v for k, v in lim.items() if k != "barriers" and v is not None)
        if lim["barriers"] is None or lim["barriers"] >= pre_barrier:
            assert flags == sum(FLAGS[n] for n in py.limiters), case
        compared += 1
    assert unknown <= {(10, 3)}
    assert compared > 25000
