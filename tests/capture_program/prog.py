"""A small 'training' program: three kernels, one autotuned, one calling a helper module, one
launched STEPS times. Run it under TRITON_INTERPRET=1 on a CPU, or on a GPU."""

import sys

import torch
from axpy_kernels import axpy
from norm_kernels import rms_norm
from scale_kernels import scale, scale_kernel

STEPS = int(sys.argv[1]) if len(sys.argv) > 1 else 25
device = (
    "cuda" if torch.cuda.is_available() and not __import__("os").environ.get("TRITON_INTERPRET") else "cpu"
)
torch.manual_seed(0)
w = torch.randn(4096, device=device)
for step in range(STEPS):
    grad = torch.randn(4096, device=device)
    axpy(-0.01, grad, w)
x = torch.randn(8, 96, device=device)
y = rms_norm(x, torch.ones(96, device=device))
ref = x / torch.sqrt((x * x).mean(dim=1, keepdim=True) + 1e-6)
assert torch.allclose(y, ref, atol=1e-4), "rms_norm is wrong"
z = scale(torch.randn(3000, device=device), 0.5)
print(f"best config: {scale_kernel.best_config.all_kwargs()}")
