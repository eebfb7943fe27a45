"""Make a forked process's copy-on-write pages its own before its request comes.

A spare worker is a fork of the warm worker manager: every page of the manager's memory is
shared with it until either writes to it, and the first write to each costs a page fault and a
copy. The spare's warm-up inspection takes those faults for the pages it touches, but a request
touches more, where a bare compile in a warm process takes almost none. `own_shared_pages` takes
the rest ahead of time: every page of the process's private writable memory that is present and
still shared is copied now, with `madvise(MADV_POPULATE_WRITE)` (Linux 5.14), which breaks the
sharing without changing a byte.

Time for memory: the request takes far fewer faults, and the spare pays for them instead, with a
longer warm-up (between requests) and memory it no longer shares with the worker manager.
The figures, both ways: docs/performance.md#spares.

Pages nobody touched yet stay untouched (the page map says which are present), so sparse
reservations (CUDA's, the allocators') cost nothing; device and file-backed shared mappings are
left alone. Where the kernel lacks the call, nothing happens.
"""

from __future__ import annotations

import ctypes
import os
import time
from array import array

MADV_POPULATE_WRITE = 23  # linux/mman.h, since 5.14
_PRESENT = 1 << 63
_EXCLUSIVE = 1 << 56  # "page exclusively mapped" (since 4.2): no other process shares it
_SKIP = ("[vvar]", "[vvar_vclock]", "[vsyscall]", "[vdso]")


def own_shared_pages() -> tuple[int, float]:
    """Copy every present, still shared page of this process's private writable mappings;
    returns (pages copied, seconds taken). (0, seconds) where the kernel lacks
    MADV_POPULATE_WRITE or the page map cannot be read."""
    t0 = time.perf_counter()
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        madvise = libc.madvise
    except (OSError, AttributeError):
        return 0, time.perf_counter() - t0
    madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    page = os.sysconf("SC_PAGE_SIZE")
    if not _supported(madvise, page):
        return 0, time.perf_counter() - t0
    copied = 0
    try:
        with open("/proc/self/pagemap", "rb", buffering=0) as pagemap:
            for start, end in _private_writable():
                for first, count in _shared_runs(pagemap, start // page, (end - start) // page):
                    # A run that fails (a mapping of device memory without a path, one that
                    # changed under us) is left as it is; the rest still counts.
                    if madvise(first * page, count * page, MADV_POPULATE_WRITE) == 0:
                        copied += count
    except OSError:
        pass
    return copied, time.perf_counter() - t0


def _supported(madvise, page: int) -> bool:
    """Whether this kernel knows MADV_POPULATE_WRITE (5.14 on), tried on a page of our own."""
    import mmap

    probe = mmap.mmap(-1, page, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    try:
        return madvise(ctypes.addressof(ctypes.c_char.from_buffer(probe)), page, MADV_POPULATE_WRITE) == 0
    finally:
        probe.close()


def _private_writable() -> list[tuple[int, int]]:
    """(start, end) of each private writable mapping, device files and the kernel's own aside."""
    regions = []
    with open("/proc/self/maps") as f:
        for line in f:
            parts = line.split(maxsplit=5)
            path = parts[5].strip() if len(parts) > 5 else ""
            if parts[1] != "rw-p" or path.startswith("/dev/") or path in _SKIP:
                continue
            start, end = (int(x, 16) for x in parts[0].split("-"))
            regions.append((start, end))
    return regions


def _shared_runs(pagemap, first: int, count: int, chunk: int = 1 << 16):
    """(first page, pages) of each run of present pages not exclusively mapped, among `count`
    pages from page number `first`, read from the page map in chunks."""
    run_start = None
    for base in range(first, first + count, chunk):
        n = min(chunk, first + count - base)
        pagemap.seek(base * 8)
        entries = array("Q")
        entries.frombytes(pagemap.read(n * 8))
        for i, entry in enumerate(entries):
            shared = entry & _PRESENT and not entry & _EXCLUSIVE
            if shared and run_start is None:
                run_start = base + i
            elif not shared and run_start is not None:
                yield run_start, base + i - run_start
                run_start = None
    if run_start is not None:
        yield run_start, first + count - run_start
