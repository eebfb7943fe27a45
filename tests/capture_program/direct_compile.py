"""Compiles a kernel the way Inductor does (`triton.compile(ASTSource(...))`, not through a launch)
for sm_90 GPU-free, inside a capture; prints what Triton made of it as JSON (TTIR signature,
registers from the cubin, shared memory). Usage: direct_compile.py CAPTURE_FILE"""

import json
import re
import sys

import triton
from norm_kernels import rms_norm_kernel
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

import inspector
from inspector import triton_compat as tc
from inspector.backends import for_backend

# x_ptr 16-byte aligned, w_ptr not; stride divisible by 16, n_cols not; BLOCK a constexpr
signature = {
    "x_ptr": "*fp16",
    "w_ptr": "*fp16",
    "out_ptr": "*fp32",
    "stride": "i32",
    "n_cols": "i32",
    "eps": "fp32",
    "BLOCK": "constexpr",
}
attrs = {(0,): [["tt.divisibility", 16]], (2,): [["tt.divisibility", 16]], (3,): [["tt.divisibility", 16]]}
with inspector.capture(sys.argv[1]):
    kernel = triton.compile(
        ASTSource(rms_norm_kernel, signature, {(6,): 256}, attrs),
        target=GPUTarget("cuda", 90, 32),
        options={"num_warps": 8},
    )
res = for_backend("cuda").resources(kernel.asm, tc.metadata_dict(kernel), "")
head = re.search(r"tt\.func public @\w+\(.*?\) attributes", kernel.asm["ttir"], re.S).group(0)
print(
    json.dumps(
        {
            "registers": res.registers,
            "shared": kernel.metadata.shared,
            "ttir_signature": re.sub(r"\s*loc\([^()]*(\([^()]*\))?\)", "", head),
        }
    )
)
