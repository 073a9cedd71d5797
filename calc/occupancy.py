"""Occupancy by the rules of NVIDIA's CUDA Occupancy Calculator (``cuda_occupancy.h``).

For one SM, the number of resident blocks is the minimum of four limits:

- warps:     floor(max_warps_per_SM / warps_per_block)
- blocks:    max_blocks_per_SM
- registers: registers are allocated per warp, ceil(regs_per_thread·32 / 256)·256
             each, separately in each of the SM's 4 sub-partitions:
             floor(floor(regs_per_SM / 4 / regs_per_warp) · 4 / warps_per_block)
- shared memory: each block is charged its static + dynamic shared memory plus
             the driver's reserved 1 KB (cc ≥ 8.0), rounded up to 128 bytes:
             floor(smem_per_SM / charged_per_block)

Occupancy = active warps / max warps per SM.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Optional, Union

from . import specs
from .cuda import check_block_registers, regs_per_warp, warps_per_block

_INF = 10**9


@dataclass(frozen=True)
class Occupancy:
    """Result of an occupancy calculation for one SM."""

    active_blocks: int
    active_warps: int
    max_warps: int
    limiter: str  # first binding limit: "warps", "registers", "shared memory" or "blocks"
    limits: dict = field(default_factory=dict)  # blocks allowed by each limit
    smem_charged_per_block: int = 0
    regs_per_warp: int = 0

    @property
    def occupancy(self) -> float:
        """active_warps / max_warps, in [0, 1]."""
        return self.active_warps / self.max_warps

    @property
    def limiters(self) -> tuple:
        """Every limit that binds (ties included)."""
        return tuple(k for k, v in self.limits.items() if v == self.active_blocks)


def _limits_of(target: Union[str, "specs.Device", "specs.CCLimits"]) -> "specs.CCLimits":
    if isinstance(target, specs.CCLimits):
        return target
    if isinstance(target, specs.Device):
        return target.limits
    if target in specs.COMPUTE_CAPABILITIES:
        return specs.compute_capability(target)
    return specs.device(target).limits


def smem_charged(smem_per_block: int, lim: "specs.CCLimits") -> int:
    """Shared memory charged to a block: smem + reserved, rounded up to the allocation unit
    (128 bytes from compute capability 8.0, 256 before)."""
    total = smem_per_block + lim.reserved_smem_per_block_bytes
    unit = lim.smem_alloc_unit_bytes
    return math.ceil(total / unit) * unit


def occupancy(target, threads_per_block: int, regs_per_thread: int = 32, smem_per_block: int = 0,
              smem_carveout_kib: Optional[int] = None) -> Occupancy:
    """Active blocks and warps per SM and the limiting factor.

    ``target`` is a compute capability ("8.0"), a device name or a Device.
    ``smem_carveout_kib`` is the shared-memory carveout (default: the maximum);
    when a block needs more than the carveout, the driver picks the next larger
    supported carveout, as the calculator does.
    Raises ValueError when the block cannot launch at all.
    """
    lim = _limits_of(target)
    if isinstance(threads_per_block, bool) or not isinstance(threads_per_block, int) or threads_per_block < 1:
        raise ValueError(f"threads per block must be a positive integer, got {threads_per_block!r}")
    if threads_per_block > lim.max_threads_per_block:
        raise ValueError(
            f"{threads_per_block} threads per block exceeds the limit of {lim.max_threads_per_block}"
        )
    check_block_registers(threads_per_block, regs_per_thread, lim)
    if smem_per_block < 0:
        raise ValueError(f"shared memory per block cannot be negative, got {smem_per_block}")
    warps = warps_per_block(threads_per_block)

    # registers
    rpw = regs_per_warp(regs_per_thread, lim)
    if rpw == 0:
        by_regs = _INF
    else:
        warps_per_sub = (lim.regs_per_sm // lim.sub_partitions) // rpw
        by_regs = (warps_per_sub * lim.sub_partitions) // warps

    # shared memory
    charged = smem_charged(smem_per_block, lim)
    limit_per_block = lim.smem_per_block_optin_bytes + lim.reserved_smem_per_block_bytes
    if charged > limit_per_block:
        raise ValueError(
            f"{smem_per_block:,} bytes of shared memory per block (charged {charged:,} with the "
            f"reserved 1 KB and 128-byte rounding) exceeds the {limit_per_block:,} bytes available"
        )
    carveouts = [k * 1024 for k in lim.smem_carveouts_kib]
    sm_smem = lim.smem_per_sm_bytes if smem_carveout_kib is None else smem_carveout_kib * 1024
    if smem_carveout_kib is not None and sm_smem not in carveouts:
        raise ValueError(
            f"carveout {smem_carveout_kib} KB is not supported on cc {lim.cc}; "
            f"choose from {', '.join(map(str, lim.smem_carveouts_kib))} KB"
        )
    if sm_smem < charged:
        sm_smem = min(c for c in carveouts if c >= charged)
    by_smem = sm_smem // charged if charged else _INF

    limits = {
        "warps": lim.max_warps_per_sm // warps,
        "registers": by_regs,
        "shared memory": by_smem,
        "blocks": lim.max_blocks_per_sm,
    }
    active = min(limits.values())
    limiter = next(k for k, v in limits.items() if v == active)
    return Occupancy(active, active * warps, lim.max_warps_per_sm, limiter, limits, charged, rpw)
