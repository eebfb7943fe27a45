"""The app's compile pool: requests in flight are shared, and a request that is done before its
bookkeeping is set up (a cache hit) must not deadlock the page."""

from __future__ import annotations

import threading
from concurrent.futures import Future, ThreadPoolExecutor

from conftest import KERNELS
from inspector.ui.compiling import _Compiler


class _DonePool:
    """A pool whose futures are finished before `submit` returns, as a fast cache hit can be."""

    def __init__(self) -> None:
        self.calls = 0

    def submit(self, fn, *args, **kwargs) -> Future:
        self.calls += 1
        fut: Future = Future()
        fut.set_result(f"result {self.calls}")
        return fut


def test_a_request_done_at_once_does_not_deadlock():
    comp = _Compiler()
    comp.pool = _DonePool()
    out: list = []
    t = threading.Thread(target=lambda: out.append(comp.submit(KERNELS / "add.py", {"target": "sm_90"}).result()),
                         daemon=True)
    t.start()
    t.join(5)
    assert not t.is_alive(), "submit deadlocked on a request that was already done"
    assert out == ["result 1"] and comp.inflight == {}


def test_the_same_request_in_flight_is_shared():
    release = threading.Event()
    executor = ThreadPoolExecutor(2)

    class SlowPool:
        def submit(self, fn, path, **request) -> Future:
            return executor.submit(lambda: (release.wait(5), request["target"])[1])

    comp = _Compiler()
    comp.pool = SlowPool()
    a = comp.submit(KERNELS / "add.py", {"target": "sm_90"})
    b = comp.submit(KERNELS / "add.py", {"target": "sm_90"})
    c = comp.submit(KERNELS / "add.py", {"target": "sm_80"})
    assert a is b and a is not c
    release.set()
    assert a.result(5) == "sm_90" and c.result(5) == "sm_80"
    executor.shutdown()
