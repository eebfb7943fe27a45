"""A spare's copy-on-write pages made its own ahead of its request (`inspector.isolation.own_pages`):
what the fork shares and has touched is copied, unchanged; what nobody touched stays untouched."""

from __future__ import annotations

import ast
import mmap
import os
import platform
import struct

import pytest

from inspector.isolation.own_pages import own_shared_pages

PAGE = os.sysconf("SC_PAGE_SIZE")


def _kernel_has_populate_write() -> bool:
    major, minor = (int(x) for x in platform.release().split(".")[:2])
    return (major, minor) >= (5, 14)


pytestmark = pytest.mark.skipif(not _kernel_has_populate_write(),
                                reason="MADV_POPULATE_WRITE needs Linux 5.14 (this kernel has no way to do it)")


def _exclusive_and_resident(buf: mmap.mmap) -> tuple[int, int]:
    """(pages mapped by this process alone, pages present) of `buf`, from the page map."""
    address = _address(buf)
    n = len(buf) // PAGE
    with open("/proc/self/pagemap", "rb", buffering=0) as f:
        f.seek(address // PAGE * 8)
        entries = struct.unpack(f"{n}Q", f.read(n * 8))
    present = [e for e in entries if e >> 63 & 1]
    return sum(1 for e in present if e >> 56 & 1), len(present)


def _address(buf: mmap.mmap) -> int:
    import ctypes

    return ctypes.addressof(ctypes.c_char.from_buffer(buf))


def test_a_fork_owns_what_it_shared_unchanged_and_leaves_untouched_pages_alone():
    touched = mmap.mmap(-1, 256 * PAGE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    for i in range(0, len(touched), PAGE):
        touched[i:i + 8] = struct.pack("Q", i)
    untouched = mmap.mmap(-1, 4096 * PAGE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child reports what it found; any failure exits non-zero
        try:
            before = _exclusive_and_resident(touched)
            copied, _ = own_shared_pages()
            after = _exclusive_and_resident(touched)
            same = all(struct.unpack("Q", touched[i:i + 8])[0] == i for i in range(0, len(touched), PAGE))
            os.write(w, repr((before, copied, after, same, _exclusive_and_resident(untouched))).encode())
        finally:
            os._exit(0)
    os.close(w)
    report = os.read(r, 4096).decode()
    os.waitpid(pid, 0)
    (ex_before, present_before), copied, (ex_after, present_after), same, (_, untouched_present) = ast.literal_eval(report)
    assert present_before == 256 and ex_before == 0  # shared with this process after the fork
    assert copied >= 256
    assert present_after == 256 and ex_after == 256  # the child's own now
    assert same  # not a byte changed
    assert untouched_present == 0  # a reservation nobody wrote costs nothing


def test_what_is_already_its_own_is_not_copied_again():
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            first, _ = own_shared_pages()  # this test process's memory, shared after the fork
            second, seconds = own_shared_pages()
            os.write(w, repr((first, second, seconds)).encode())
        finally:
            os._exit(0)
    os.close(w)
    report = os.read(r, 4096).decode()
    os.waitpid(pid, 0)
    first, second, seconds = ast.literal_eval(report)
    assert first > 1000  # an interpreter with pytest loaded shares thousands of pages with its fork
    assert second < 16  # the rest is its own now: nothing to copy
    assert seconds < 5
