"""Compiles a kernel as Inductor does (`triton.compile`) for sm_90 GPU-free and launches it three
times the way a launcher that is not `JITFunction.run` does: `CompiledKernel.launch_metadata(grid,
stream, *args)` handed to Triton's launch hooks (what Triton's C launcher calls; the kernel itself
cannot run here). Prints what Triton made of it as JSON. Usage: launcher_launch.py CAPTURE_FILE"""

import json
import re
import sys

import torch
import triton
from norm_kernels import rms_norm_kernel
from triton import knobs
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

import inspector
from inspector import triton_compat as tc
from inspector.backends import for_backend
from inspector.hardware.targets import parse_target

x = torch.randn(8, 100, dtype=torch.float16)  # 16-byte aligned
w = torch.randn(101, dtype=torch.float16)[1:]  # one element off: not aligned
out = torch.empty(8, 100)
args = (x, w, out, x.stride(0), x.shape[1], 1e-6)  # stride and n_cols 100: not divisible by 16
signature = {
    "x_ptr": "*fp16",
    "w_ptr": "*fp16",
    "out_ptr": "*fp32",
    "stride": "i32",
    "n_cols": "i32",
    "eps": "fp32",
    "BLOCK": "constexpr",
}
attrs = {(0,): [["tt.divisibility", 16]], (2,): [["tt.divisibility", 16]]}
with tc.offline_target(parse_target("sm_90")), inspector.capture(sys.argv[1]):
    kernel = triton.compile(
        ASTSource(rms_norm_kernel, signature, {(6,): 128}, attrs),
        target=GPUTarget("cuda", 90, 32),
        options={"num_warps": 4},
    )
    for _ in range(3):
        metadata = kernel.launch_metadata((8, 1, 1), 0, *args)
        knobs.runtime.launch_enter_hook(metadata)
        knobs.runtime.launch_exit_hook(metadata)
res = for_backend("cuda").resources(kernel.asm, tc.metadata_dict(kernel), "")
head = re.search(r"tt\.func public @\w+\(.*?\) attributes", kernel.asm["ttir"], re.S).group(0)
print(
    json.dumps(
        {
            "registers": res.registers,
            "shared": kernel.metadata.shared,
            "ttir_signature": re.sub(r"\s*loc\([^()]*(\([^()]*\))?\)", "", head),
            "launch_metadata_restored": rms_norm_kernel.launch_metadata is None,
        }
    )
)
