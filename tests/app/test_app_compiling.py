"""The app's compile pool: requests in flight are shared, and a request that is done before its
bookkeeping is set up (a cache hit) must not deadlock the page."""

from __future__ import annotations

import threading
from concurrent.futures import Future, ThreadPoolExecutor

import pytest

from paths import KERNELS

pytest.importorskip("streamlit")  # the compile pool lives in the app's layer (not on the GPU machine)
from inspector.record import InspectRequest  # noqa: E402
from inspector.ui.compiling import _Compiler  # noqa: E402


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
    t = threading.Thread(target=lambda: out.append(comp.submit(InspectRequest(str(KERNELS / "add.py"), "sm_90")).result()),
                         daemon=True)
    t.start()
    t.join(5)
    assert not t.is_alive(), "submit deadlocked on a request that was already done"
    assert out == ["result 1"] and comp.inflight == {}


def test_the_same_request_in_flight_is_shared():
    release = threading.Event()
    executor = ThreadPoolExecutor(2)

    class SlowPool:
        def submit(self, fn, request, **kw) -> Future:
            return executor.submit(lambda: (release.wait(5), request.target)[1])

    comp = _Compiler()
    comp.pool = SlowPool()
    a = comp.submit(InspectRequest(str(KERNELS / "add.py"), "sm_90"))
    b = comp.submit(InspectRequest(str(KERNELS / "add.py"), "sm_90"))
    c = comp.submit(InspectRequest(str(KERNELS / "add.py"), "sm_80"))
    assert a is b and a is not c
    release.set()
    assert a.result(5) == "sm_90" and c.result(5) == "sm_80"
    executor.shutdown()


class _HeldPool:
    """A pool whose jobs wait for their cancel event (or a release), as a long compile would."""

    def __init__(self) -> None:
        self.executor = ThreadPoolExecutor(4)
        self.release = threading.Event()
        self.events: list[threading.Event] = []

    def submit(self, fn, request, cancel=None) -> Future:
        self.events.append(cancel)

        def run():
            while not (cancel.is_set() or self.release.is_set()):
                cancel.wait(0.01)
            return "cancelled" if cancel.is_set() else request.target

        return self.executor.submit(run)


def test_cancel_stops_a_request_only_when_every_session_gave_it_up():
    comp = _Compiler()
    comp.pool = pool = _HeldPool()
    a = comp.submit(InspectRequest(str(KERNELS / "add.py"), "sm_90"), waiter="session a")
    b = comp.submit(InspectRequest(str(KERNELS / "add.py"), "sm_90"), waiter="session b")
    assert a is b and len(pool.events) == 1
    assert comp.cancel([a], "session a") == 0 and not pool.events[0].is_set()  # b still waits for it
    assert comp.cancel([a], "session b") == 1 and pool.events[0].is_set()
    assert a.result(5) == "cancelled"
    # A new request after a cancel starts a compile of its own, never joins the cancelled one.
    c = comp.submit(InspectRequest(str(KERNELS / "add.py"), "sm_90"), waiter="session a")
    assert c is not a and len(pool.events) == 2 and not pool.events[1].is_set()
    pool.release.set()
    assert c.result(5) == "sm_90"
    assert comp.cancel([c], "session a") == 0  # done: nothing to cancel
    pool.executor.shutdown()
