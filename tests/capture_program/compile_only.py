"""Compiles two kernels for sm_90 GPU-free (warmup under the offline driver) with tritonparse's
tracing on and, inside it, a capture: the same compiles land in a tritonparse trace and in the
capture, which must open to the same table. Usage: compile_only.py TRACE_DIR CAPTURE_FILE"""

import os
import sys

import torch
import tritonparse.structured_logging

import inspector

trace_dir, capture_file = sys.argv[1], sys.argv[2]
tritonparse.structured_logging.init(
    trace_dir, enable_trace_launch=True
)  # before the capture: it replaces hooks

from axpy_kernels import axpy_kernel  # noqa: E402
from norm_kernels import rms_norm_kernel  # noqa: E402

from inspector import triton_compat as tc  # noqa: E402
from inspector.hardware.targets import parse_target  # noqa: E402

with inspector.capture(capture_file), tc.offline_target(parse_target("sm_90")):
    x = torch.empty(4096, device="meta")
    axpy_kernel.warmup(x, x, 4096, 0.5, BLOCK=1024, grid=(4,))
    rows = torch.empty(8, 100, device="meta")
    rms_norm_kernel.warmup(
        rows, torch.empty(100, device="meta"), rows, 100, 100, 1e-6, BLOCK=128, num_warps=2, grid=(8,)
    )
print("compiled", os.environ.get("TRITON_FULL_PYTHON_SOURCE"))
