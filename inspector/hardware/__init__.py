"""Hardware knowledge, in one place: what a target is and what its GPU has.

- `targets`: compile targets (`sm_90`, `gfx942`): the one parser, the one default, the candidates.
- `architectures`: per-architecture limits (registers, shared memory, warps per SM; memory granules).
- `catalogue`: GPUs by name (SMs, L2, bandwidth, peak rates), each target's representative part.
- `device_properties`: what a target's GPU reports about itself to Triton's driver and to torch.

Plain data and arithmetic: nothing here imports Triton, torch or any other inspector package.
"""
