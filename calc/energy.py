"""Energy per operation and per memory access.

Primary source: M. Horowitz, "Computing's energy problem (and what we can do
about it)", ISSCC 2014, the per-operation table for a 45 nm process at 0.9 V.
Absolute values shrink with newer processes; the *ratios* (a DRAM access costs
hundreds to thousands of arithmetic operations) are the point.

Horowitz prints memory accesses for 64-bit words only (8 KB SRAM 10 pJ, 32 KB
20 pJ, 1 MB 100 pJ, DRAM 1.3-2.6 nJ). ``access_energy_j(memory, bits)`` scales
them linearly to other widths: any 32- or 16-bit access energy is the book's own
scaling, not a figure of the source, and the chapters say so where they use one.
"""

from __future__ import annotations

from .sources import Source, Spec

HOROWITZ = Source(
    "Computing's energy problem (and what we can do about it)", "IEEE ISSCC", 2014,
    "horowitz2014energy", where="energy table, 45 nm, 0.9 V",
)

PJ = 1e-12

#: arithmetic energy in joules per operation (Horowitz 2014, 45 nm)
OP_ENERGY_J: dict[str, Spec] = {
    "int8_add": Spec(0.03 * PJ, "J", HOROWITZ),
    "int16_add": Spec(0.05 * PJ, "J", HOROWITZ),
    "int32_add": Spec(0.1 * PJ, "J", HOROWITZ),
    "fp16_add": Spec(0.4 * PJ, "J", HOROWITZ),
    "fp32_add": Spec(0.9 * PJ, "J", HOROWITZ),
    "int8_mult": Spec(0.2 * PJ, "J", HOROWITZ),
    "int32_mult": Spec(3.1 * PJ, "J", HOROWITZ),
    "fp16_mult": Spec(1.1 * PJ, "J", HOROWITZ),
    "fp32_mult": Spec(3.7 * PJ, "J", HOROWITZ),
}

#: energy per 64-bit access, joules (Horowitz 2014, 45 nm)
ACCESS_ENERGY_J_PER_64BIT: dict[str, Spec] = {
    "sram_8kb": Spec(10 * PJ, "J", HOROWITZ, "8 KB cache/SRAM"),
    "sram_32kb": Spec(20 * PJ, "J", HOROWITZ, "32 KB cache/SRAM"),
    "sram_1mb": Spec(100 * PJ, "J", HOROWITZ, "1 MB cache/SRAM"),
    "dram_low": Spec(1300 * PJ, "J", HOROWITZ, "DRAM, low end of the printed 1.3-2.6 nJ range"),
    "dram_high": Spec(2600 * PJ, "J", HOROWITZ, "DRAM, high end of the printed 1.3-2.6 nJ range"),
}

_MAC_PARTS = {
    "int8": ("int8_mult", "int32_add"),  # int8 products accumulate in 32-bit
    "fp16": ("fp16_mult", "fp32_add"),   # mixed precision: fp16 multiply, fp32 accumulate
    "fp32": ("fp32_mult", "fp32_add"),
}


def op_energy_j(op: str) -> float:
    """Energy of one arithmetic operation, e.g. ``op_energy_j('fp32_mult')`` = 3.7 pJ."""
    if op not in OP_ENERGY_J:
        raise ValueError(f"unknown operation {op!r}; known: {', '.join(OP_ENERGY_J)}")
    return OP_ENERGY_J[op].value


def mac_energy_j(dtype: str = "fp16") -> float:
    """One multiply-accumulate: ``E_mult(dtype) + E_add(accumulator)``.

    int8 accumulates in int32 and fp16 in fp32 (as Tensor Cores and MXUs do);
    e.g. fp16: 1.1 pJ + 0.9 pJ = 2.0 pJ.
    """
    if dtype not in _MAC_PARTS:
        raise ValueError(f"no MAC energy for {dtype!r}; known: {', '.join(_MAC_PARTS)}")
    mult, add = _MAC_PARTS[dtype]
    return op_energy_j(mult) + op_energy_j(add)


def access_energy_j(memory: str, bits: int = 64) -> float:
    """Energy to move ``bits`` from ``memory``: ``E_64bit × bits / 64``.

    Horowitz prints the 64-bit figure; any other width is the book's linear scaling.
    """
    if memory not in ACCESS_ENERGY_J_PER_64BIT:
        known = ", ".join(ACCESS_ENERGY_J_PER_64BIT)
        raise ValueError(f"unknown memory {memory!r}; known: {known}")
    if bits <= 0:
        raise ValueError(f"bits must be positive, got {bits}")
    return ACCESS_ENERGY_J_PER_64BIT[memory].value * bits / 64


def ratio(memory: str, op: str, bits: int = 64) -> float:
    """How many ``op``s one ``bits``-wide access to ``memory`` costs: ``E_access / E_op``."""
    return access_energy_j(memory, bits) / op_energy_j(op)
