"""The CUDA execution model in plain Python: indices, warps, memory transactions.

Sources: CUDA C++ Programming Guide (thread hierarchy; shared memory banks;
compute-capability limits) and CUDA C++ Best Practices Guide (coalescing:
a warp's global loads are served in 32-byte sectors of 128-byte lines).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterator, Optional, Sequence, Union

WARP_SIZE = 32
SECTOR_BYTES = 32
LINE_BYTES = 128
SMEM_BANKS = 32
SMEM_BANK_BYTES = 4


@dataclass(frozen=True)
class Dim3:
    """CUDA's dim3: x varies fastest."""

    x: int = 1
    y: int = 1
    z: int = 1

    @property
    def count(self) -> int:
        return self.x * self.y * self.z

    def __iter__(self) -> Iterator[int]:
        return iter((self.x, self.y, self.z))

    def indices(self) -> Iterator["Dim3"]:
        """All index triples inside this extent, x fastest (the order CUDA numbers threads)."""
        for z in range(self.z):
            for y in range(self.y):
                for x in range(self.x):
                    yield Dim3(x, y, z)


DimLike = Union[int, Sequence[int], Dim3]


def dim3(v: DimLike) -> Dim3:
    """An int, a 1–3 tuple, or a Dim3 as a Dim3 (missing components are 1)."""
    if isinstance(v, Dim3):
        return v
    if isinstance(v, int) and not isinstance(v, bool):
        return Dim3(v)
    parts = list(v)
    if not 1 <= len(parts) <= 3:
        raise ValueError(f"a dim3 has 1 to 3 components, got {len(parts)}")
    return Dim3(*parts)


def index3(v: DimLike) -> Dim3:
    """An index (blockIdx, threadIdx) as a Dim3: missing components are 0, not 1."""
    if isinstance(v, Dim3):
        return v
    if isinstance(v, int) and not isinstance(v, bool):
        return Dim3(v, 0, 0)
    parts = list(v)
    if not 1 <= len(parts) <= 3:
        raise ValueError(f"an index has 1 to 3 components, got {len(parts)}")
    return Dim3(*(parts + [0] * (3 - len(parts))))


def global_index_1d(block_idx: int, block_dim: int, thread_idx: int) -> int:
    """i = blockIdx.x · blockDim.x + threadIdx.x."""
    if not 0 <= thread_idx < block_dim or block_idx < 0:
        raise ValueError(f"threadIdx.x={thread_idx} must be in [0, {block_dim}) and blockIdx.x >= 0")
    return block_idx * block_dim + thread_idx


def global_coords(block_idx: DimLike, block_dim: DimLike, thread_idx: DimLike) -> Dim3:
    """Global (x, y, z) of a thread: blockIdx·blockDim + threadIdx per component."""
    b, bd, t = index3(block_idx), dim3(block_dim), index3(thread_idx)
    for name, ti, di in zip("xyz", t, bd):
        if not 0 <= ti < di:
            raise ValueError(f"threadIdx.{name}={ti} is outside blockDim.{name}={di}")
    return Dim3(b.x * bd.x + t.x, b.y * bd.y + t.y, b.z * bd.z + t.z)


def linear_thread(thread_idx: DimLike, block_dim: DimLike) -> int:
    """Thread number in its block: x + y·Dx + z·Dx·Dy."""
    t, d = index3(thread_idx), dim3(block_dim)
    return t.x + t.y * d.x + t.z * d.x * d.y


def linear_block(block_idx: DimLike, grid_dim: DimLike) -> int:
    """Block number in the grid: x + y·Gx + z·Gx·Gy."""
    b, g = index3(block_idx), dim3(grid_dim)
    return b.x + b.y * g.x + b.z * g.x * g.y


def global_linear(block_idx: DimLike, block_dim: DimLike, thread_idx: DimLike, grid_dim: DimLike) -> int:
    """Unique thread number in the grid: linear_block · threads_per_block + linear_thread."""
    return linear_block(block_idx, grid_dim) * dim3(block_dim).count + linear_thread(thread_idx, block_dim)


def warp_of(thread_idx: DimLike, block_dim: DimLike) -> tuple[int, int]:
    """(warp, lane) of a thread: warps are consecutive groups of 32 linear thread numbers."""
    n = linear_thread(thread_idx, block_dim)
    return n // WARP_SIZE, n % WARP_SIZE


def warps_per_block(threads: int) -> int:
    """ceil(threads / 32): a partial warp still occupies a whole warp slot."""
    if threads < 1:
        raise ValueError(f"a block needs at least one thread, got {threads}")
    return math.ceil(threads / WARP_SIZE)


@dataclass(frozen=True)
class Coalescing:
    """Memory transactions of one warp-wide access."""

    sectors: int  # 32-byte sectors touched
    lines: int  # 128-byte lines touched
    bytes_requested: int
    bytes_moved: int  # sectors × 32

    @property
    def efficiency(self) -> float:
        """bytes_requested / bytes_moved (1.0 = perfectly coalesced)."""
        return self.bytes_requested / self.bytes_moved


def coalescing_of(addresses: Sequence[int], elem_bytes: int) -> Coalescing:
    """Sectors and lines touched by byte ``addresses`` each reading ``elem_bytes``."""
    if elem_bytes < 1:
        raise ValueError(f"element size must be >= 1 byte, got {elem_bytes}")
    if any(a < 0 for a in addresses):
        raise ValueError("addresses must be non-negative")
    sectors, lines = set(), set()
    for a in addresses:
        last = a + elem_bytes - 1
        sectors.update(range(a // SECTOR_BYTES, last // SECTOR_BYTES + 1))
        lines.update(range(a // LINE_BYTES, last // LINE_BYTES + 1))
    requested = len(set(addresses)) * elem_bytes
    return Coalescing(len(sectors), len(lines), requested, len(sectors) * SECTOR_BYTES)


def coalescing(stride_elems: int = 1, elem_bytes: int = 4, threads: int = WARP_SIZE,
               base_addr: int = 0) -> Coalescing:
    """A warp where lane i reads element ``i · stride_elems`` (from ``base_addr`` bytes).

    Contiguous FP32 (stride 1, 4 bytes, aligned): 128 bytes in 4 sectors, 1 line.
    Stride 32 FP32: 32 sectors, 32 lines, efficiency 1/8.
    """
    if not 1 <= threads <= WARP_SIZE:
        raise ValueError(f"a warp has 1 to 32 active threads, got {threads}")
    if stride_elems < 0:
        raise ValueError(f"stride must be >= 0, got {stride_elems}")
    return coalescing_of([base_addr + i * stride_elems * elem_bytes for i in range(threads)], elem_bytes)


def bank_of(byte_addr: int) -> int:
    """Shared-memory bank of a byte address: (addr // 4) mod 32."""
    return (byte_addr // SMEM_BANK_BYTES) % SMEM_BANKS


def bank_conflict_degree_of(byte_addrs: Sequence[int]) -> int:
    """Ways of the worst bank conflict: the most *distinct* 4-byte words any bank must serve.

    Lanes reading the same word are served by one broadcast, so they do not conflict.
    1 means conflict-free.
    """
    words_per_bank: dict[int, set] = {}
    for a in byte_addrs:
        word = a // SMEM_BANK_BYTES
        words_per_bank.setdefault(word % SMEM_BANKS, set()).add(word)
    return max(len(w) for w in words_per_bank.values()) if words_per_bank else 0


def bank_conflicts(stride_words: int, threads: int = WARP_SIZE) -> int:
    """Conflict degree when lane i accesses 4-byte word i·stride: gcd(stride, 32) ways (stride 0: broadcast, 1)."""
    if stride_words < 0:
        raise ValueError(f"stride must be >= 0, got {stride_words}")
    return bank_conflict_degree_of([i * stride_words * SMEM_BANK_BYTES for i in range(threads)])


def validate_launch(grid: DimLike, block: DimLike, device, shared_bytes: int = 0,
                    regs_per_thread: Optional[int] = None) -> None:
    """Raise ValueError naming the first limit a launch ``<<<grid, block, shared_bytes>>>`` breaks.

    Checks (CUDA C++ Programming Guide, technical specifications): every
    dimension ≥ 1; blockDim.x, .y ≤ 1024, blockDim.z ≤ 64; threads per block
    ≤ 1024; gridDim.x ≤ 2³¹−1, gridDim.y, .z ≤ 65535; shared memory per block
    ≤ the opt-in maximum (above 48 KB needs cudaFuncSetAttribute); registers
    per thread ≤ 255 and per block ≤ 65536 as ``check_block_registers`` counts them
    (per warp in units of 256, warps rounded up to the SM's sub-partitions).
    ``device`` is a ``specs.Device`` or its name.
    """
    from . import specs

    dev = specs.device(device) if isinstance(device, str) else device
    lim = dev.limits
    g, b = dim3(grid), dim3(block)
    for what, v in (("gridDim", g), ("blockDim", b)):
        for name, x in zip("xyz", v):
            if isinstance(x, bool) or not isinstance(x, int) or x < 1:
                raise ValueError(f"{what}.{name} must be a positive integer, got {x!r}")
    for name, x, mx in zip("xyz", b, lim.max_block_dim):
        if x > mx:
            raise ValueError(f"blockDim.{name} = {x:,} exceeds the limit of {mx:,} on the {dev.label}")
    if b.count > lim.max_threads_per_block:
        raise ValueError(
            f"{b.count:,} threads per block ({b.x:,}×{b.y:,}×{b.z:,}) exceeds the limit of "
            f"{lim.max_threads_per_block:,} threads per block"
        )
    for name, x, mx in zip("xyz", g, lim.max_grid_dim):
        if x > mx:
            raise ValueError(f"gridDim.{name} = {x:,} exceeds the limit of {mx:,} on the {dev.label}")
    if shared_bytes < 0:
        raise ValueError(f"shared memory cannot be negative, got {shared_bytes}")
    if shared_bytes > lim.smem_per_block_optin_bytes:
        raise ValueError(
            f"{shared_bytes:,} bytes of shared memory per block exceeds the maximum of "
            f"{lim.smem_per_block_optin_bytes:,} bytes on the {dev.label} (compute capability {lim.cc})"
        )
    if regs_per_thread is not None:
        check_block_registers(b.count, regs_per_thread, lim)


def regs_per_warp(regs_per_thread: int, lim) -> int:
    """Registers allocated to one warp: ``roundup(regs_per_thread · 32, reg_alloc_unit)``."""
    unit = lim.reg_alloc_unit
    return math.ceil(regs_per_thread * lim.warp_size / unit) * unit


def regs_assumed_per_block(threads: int, regs_per_thread: int, lim) -> int:
    """Registers a block is charged, as ``cuda_occupancy.h``'s ``regsAssumedPerCTA``:
    registers per warp × warps rounded up to a multiple of the SM's sub-partitions
    (registers are allocated separately in each sub-partition)."""
    warps = warps_per_block(threads)
    return regs_per_warp(regs_per_thread, lim) * math.ceil(warps / lim.sub_partitions) * lim.sub_partitions


def check_block_registers(threads: int, regs_per_thread: int, lim) -> None:
    """Raise ValueError unless a block of ``threads`` at ``regs_per_thread`` fits the register limits.

    The one rule for both ``validate_launch`` and ``calc.occupancy``: at most
    ``max_regs_per_thread`` per thread, and the registers the block is charged
    (``regs_assumed_per_block``) at most ``max_regs_per_block``. 800 threads at
    80 registers: 25 warps rounded to 28, × 2,560 = 71,680 > 65,536, rejected.
    """
    if isinstance(regs_per_thread, bool) or not isinstance(regs_per_thread, int):
        raise ValueError(f"registers per thread must be an integer, got {regs_per_thread!r}")
    if regs_per_thread < 0:
        raise ValueError(f"registers per thread cannot be negative, got {regs_per_thread}")
    if regs_per_thread > lim.max_regs_per_thread:
        raise ValueError(
            f"{regs_per_thread} registers per thread exceeds the limit of {lim.max_regs_per_thread}"
        )
    assumed = regs_assumed_per_block(threads, regs_per_thread, lim)
    if assumed > lim.max_regs_per_block:
        warps = warps_per_block(threads)
        raise ValueError(
            f"{assumed:,} registers per block ({regs_per_thread} per thread × {threads} threads: "
            f"{regs_per_warp(regs_per_thread, lim):,} per warp × {warps} warps rounded up to a multiple of "
            f"{lim.sub_partitions} sub-partitions) exceeds the limit of {lim.max_regs_per_block:,} "
            "registers per block"
        )


# ------------------------------------------------------------ Tensor Core alignment
#
# NVIDIA, "Matrix Multiplication Background User's Guide" (Deep Learning
# Performance documentation), Table 1 "Tensor Core requirements by cuBLAS or
# cuDNN version": before cuBLAS 11.0 / cuDNN 7.6.3 a GEMM used Tensor Cores only
# when M, N and K were multiples of 16 bytes of its data type (FP16: 8, INT8: 16);
# later versions always may, "but most efficient with multiples of" 16 bytes,
# and on A100 with multiples of 128 bytes (FP16: 64).

TC_ALIGN_BYTES = 16
TC_ALIGN_BYTES_A100 = 128


def tensor_core_multiple(dtype: str, align_bytes: int = TC_ALIGN_BYTES) -> int:
    """Elements per ``align_bytes``: the dimension multiple for efficient Tensor Core GEMMs.

    ``align_bytes / size_bytes(dtype)``: FP16 8, TF32 4, INT8 16, FP64 2 at 16 bytes;
    FP16 64 at the A100's 128 bytes. Source: NVIDIA Matrix Multiplication Background
    User's Guide, Table 1.
    """
    from .dtypes import size_bytes

    size = size_bytes(dtype)
    if align_bytes < 1 or align_bytes % size:
        raise ValueError(f"{align_bytes} bytes is not a whole number of {dtype} elements")
    return int(align_bytes // size)


def pad_to_multiple(n: int, multiple: int) -> int:
    """Smallest m ≥ n with m % multiple == 0: ``ceil(n / multiple) · multiple``."""
    if n < 0 or multiple < 1:
        raise ValueError(f"need n >= 0 and multiple >= 1, got n={n}, multiple={multiple}")
    return math.ceil(n / multiple) * multiple
