"""What the target picker offers: the native GPU when there is one, and every target the
installed Triton builds.

Starting the worker and probing which targets build take seconds, so they run once per server
in a background thread (`start_probe`): the worker warms at once, the probe after the server's
first compile; until the probe answers, the picker offers every candidate target, and afterwards
marks those the probe found unbuildable.
"""

from __future__ import annotations

import os
import threading
from typing import Any

import streamlit as st

from inspector.compile.api import list_targets, native_gpu
from inspector.isolation.selection import default_sandbox
from inspector.hardware.targets import DEFAULT_TARGET, candidate_targets

NATIVE = "native"
FIRST_COMPILE = threading.Event()  # set when this server's first compile has finished


def first_compile_done() -> None:
    """Let the target probe start (see `_Probe.run`)."""
    FIRST_COMPILE.set()


class _Probe:
    def __init__(self) -> None:
        self.done = threading.Event()
        self.result: dict[str, Any] | None = None
        self.error: str | None = None

    def run(self) -> None:
        try:
            default_sandbox().warm_up()
            # Probing compiles a tiny kernel for every target: on a small machine that would slow
            # the first page's own compile, so it waits for it (or a minute at most).
            FIRST_COMPILE.wait(timeout=60)
            self.result = list_targets()
        except Exception as e:  # noqa: BLE001 - a failed probe only loses the "unbuildable" marks
            self.error = str(e)
        finally:
            self.done.set()


@st.cache_resource
def start_probe() -> _Probe:
    """Warm the worker and probe targets once per server, in the background."""
    probe = _Probe()
    threading.Thread(target=probe.run, name="inspector-probe", daemon=True).start()
    return probe


@st.cache_resource
def native() -> dict[str, Any]:
    """{"available": bool, "target": "sm_90", "properties": {...}} for this machine's GPU.

    Asked once per server (the worker starts on the way, which the first compile needs anyway)."""
    return native_gpu()


GPU_DEVICE_NODES = ("/dev/nvidiactl", "/dev/kfd")


def default_target() -> str:
    """native on a machine with a GPU, else the default target. Without a GPU device node there
    is no native GPU to ask the worker about, so the first page does not wait for it."""
    if not any(os.path.exists(p) for p in GPU_DEVICE_NODES):
        return DEFAULT_TARGET
    return NATIVE if native().get("available") else DEFAULT_TARGET


def options() -> list[str]:
    """The picker's targets: native (when present), then NVIDIA and AMD candidates."""
    names = [t.name for t in candidate_targets()]
    gpu = any(os.path.exists(p) for p in GPU_DEVICE_NODES) and native().get("available")
    return ([NATIVE] if gpu else []) + names


def label(name: str) -> str:
    """'native: NVIDIA H200 (sm_90)', 'sm_90', 'sm_75 (does not build here)'."""
    if name == NATIVE:
        n = native()
        return f"native: {(n.get('properties') or {}).get('name', 'GPU')} ({n.get('target')})"
    probe = start_probe()
    if probe.result and name in probe.result.get("failed", {}):
        return f"{name} (does not build with this Triton)"
    return name
