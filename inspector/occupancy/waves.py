"""Wave quantisation: how a grid fills the GPU in waves and what the last partial wave costs.

A "wave" is one round of blocks that all fit on the GPU at once (blocks/SM x SMs). A grid of
1.1 waves takes about as long as 2 full waves: the last wave leaves most SMs idle.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Waves:
    """waves: rounds needed (the last possibly partial); efficiency: grid / (waves x wave size)."""

    grid_blocks: int
    blocks_per_sm: int
    sm_count: int
    blocks_per_wave: int
    waves: int
    full_waves: int
    last_wave_blocks: int  # blocks in the last wave (== blocks_per_wave when it is full)
    fractional_waves: float  # grid / blocks_per_wave
    efficiency: float  # 1.0 when every wave is full
    lost: float  # 1 - efficiency: the share of the GPU's block slots idle over the run
    launchable: bool


def waves(grid_blocks: int, blocks_per_sm: int, sm_count: int) -> Waves:
    """Waves for `grid_blocks` blocks at `blocks_per_sm` resident per SM on `sm_count` SMs (or CUs).

    blocks_per_sm == 0 means the kernel cannot launch: waves is 0 and launchable False.
    """
    if grid_blocks < 0 or blocks_per_sm < 0 or sm_count <= 0:
        raise ValueError("grid and blocks/SM must be non-negative and sm_count positive")
    per_wave = blocks_per_sm * sm_count
    if per_wave == 0:
        return Waves(grid_blocks, blocks_per_sm, sm_count, 0, 0, 0, 0, 0.0, 0.0, 1.0, False)
    if grid_blocks == 0:
        return Waves(0, blocks_per_sm, sm_count, per_wave, 0, 0, 0, 0.0, 1.0, 0.0, True)
    n = -(-grid_blocks // per_wave)
    full, rest = divmod(grid_blocks, per_wave)
    eff = grid_blocks / (n * per_wave)
    return Waves(grid_blocks=grid_blocks, blocks_per_sm=blocks_per_sm, sm_count=sm_count,
                 blocks_per_wave=per_wave, waves=n, full_waves=full,
                 last_wave_blocks=rest if rest else per_wave, fractional_waves=grid_blocks / per_wave,
                 efficiency=eff, lost=1.0 - eff, launchable=True)
