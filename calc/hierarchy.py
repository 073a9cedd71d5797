"""A GPU memory hierarchy table: capacity, bandwidth, latency, energy per access.

The reference machine is the A100 SXM4 40GB. Capacities and HBM bandwidth come
from ``specs``; on-chip bandwidths are *computed* from bytes per clock (the CUDA guide's
shared-memory banks; the whitepaper's L2 read bandwidth) × SMs × clock, the
clock being the book's choice (the boost clock); latencies are Abdelkhalik et
al.'s microbenchmark figures in cycles (Table IV), converted to seconds at that
clock by the book; energies come from ``energy`` (Horowitz 2014, 45 nm, 64-bit
accesses; the per-byte share is the book's) and are an order-of-magnitude guide.
HBM has no energy figure here: the one the book used (O'Connor et al., 3.9
pJ/bit) could not be checked against the paper and was dropped.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from . import energy, specs
from .sources import Source, Spec

MICROBENCH = Source(
    "Demystifying the Nvidia Ampere Architecture through Microbenchmarking and "
    "Instruction-level Analysis (Abdelkhalik et al.)", "IEEE HPEC", 2022,
    "abdelkhalik2022ampere", where="Table IV (memory access latency, clock cycles)",
    note="pointer-chasing loads; the paper reports cycles and no clock frequency",
)
PCIE = specs.PCIE4_SPEC
A100_WP = specs.A100_WP

#: A100 SM clock used for the computed on-chip bandwidths (boost clock)
A100_BOOST_CLOCK_HZ = Spec(1.41e9, "Hz", A100_WP.at("Table 4"), "boost clock 1410 MHz")
#: shared memory / L1: 32 banks × 4 bytes per clock per SM
SMEM_BYTES_PER_CLOCK_PER_SM = Spec(128, "B/clock/SM", specs.CUDA_GUIDE.at(
    "Shared memory: 32 banks, successive 32-bit words in successive banks"))
#: L2 read bandwidth of the whole A100, bytes per clock, as the whitepaper prints it
L2_READ_BYTES_PER_CLOCK = Spec(5120, "B/clock", A100_WP.at("section 'L2 Cache' (p. 35)"),
                               "'The A100 L2 read bandwidth is 5120 Bytes/clk'; the whitepaper "
                               "names no clock for it, so B/s at the boost clock is the book's conversion")
#: memory access latencies in clock cycles, as Abdelkhalik et al.'s Table IV prints them
LATENCY_CYCLES = {"shared memory load": 23, "L2 hit": 200, "global memory (HBM)": 290}


@dataclass(frozen=True)
class Level:
    """One level of the hierarchy; any field may be None when no source gives it."""

    name: str
    scope: str
    capacity_bytes: Optional[Spec]
    bw_bytes_per_s: Optional[Spec]
    latency_s: Optional[Spec]
    energy_j_per_byte: Optional[Spec]


#: One-direction PCIe bandwidth (``lanes × rate × 128/130 / 8``): the one function the book's PCIe
#: figures come from, kept in ``specs`` so that its link table says the same (Gen4 x16: 31.5 GB/s).
pcie_bw_bytes_per_s = specs.pcie_bw_bytes_per_s


def smem_bw_bytes_per_s(device_name: str = "a100-sxm-40gb", clock_hz: float = 1.41e9) -> float:
    """Aggregate shared-memory bandwidth: ``128 B/clock × SMs × clock`` (A100: 19.5 TB/s)."""
    return SMEM_BYTES_PER_CLOCK_PER_SM.value * specs.device(device_name).sm_count * clock_hz


def l2_bw_bytes_per_s(clock_hz: float = 1.41e9) -> float:
    """L2 read bandwidth: the whitepaper's ``5120 B/clock × clock`` (A100 at 1.41 GHz: 7.22 TB/s)."""
    return L2_READ_BYTES_PER_CLOCK.value * clock_hz


def _cycles(what: str) -> Spec:
    n = LATENCY_CYCLES[what]
    return Spec(n / A100_BOOST_CLOCK_HZ.value, "s", MICROBENCH,
                f"{n} cycles ({what}) in the paper; seconds at the 1.41 GHz boost clock are the book's conversion")


def _per_byte(spec: Spec, bits: int = 64) -> Spec:
    return Spec(spec.value / (bits / 8), "J/B", spec.source,
                spec.note + " (Horowitz prints the 64-bit access; the per-byte share is the book's scaling)")


def a100_table() -> list[Level]:
    """The hierarchy of an A100 SXM4 40GB, fastest first."""
    a100 = specs.device("a100-sxm-40gb")
    sms = a100.sm_count
    derived = Source("computed in calc.hierarchy", "this book", 2025, None)
    e = energy.ACCESS_ENERGY_J_PER_64BIT
    return [
        Level("registers", "per thread",
              Spec(a100.value("register_file_per_sm_bytes") * sms, "B", A100_WP.at("Table 4"),
                   "256 KB per SM × 108 SMs"),
              None, Spec(0.0, "s", derived, "operands are read within the instruction's pipeline"),
              None),
        Level("shared memory / L1", "per block (shared) / per SM (L1)",
              Spec(a100.value("l1_smem_per_sm_bytes") * sms, "B", a100.spec("l1_smem_per_sm_bytes").source,
                   "192 KB of combined L1 and shared memory per SM × 108 SMs (up to 164 KB of it as shared memory)"),
              Spec(smem_bw_bytes_per_s(), "B/s", derived, "128 B/clock/SM × 108 SMs × 1.41 GHz"),
              _cycles("shared memory load"),
              _per_byte(e["sram_32kb"])),
        Level("L2 cache", "whole GPU",
              Spec(a100.value("l2_bytes"), "B", A100_WP.at("Table 4")),
              Spec(l2_bw_bytes_per_s(), "B/s", derived,
                   "5120 B/clock [A100 whitepaper, p. 35] × 1.41 GHz (the book's choice of clock)"),
              _cycles("L2 hit"),
              _per_byte(e["sram_1mb"])),
        Level("HBM2", "whole GPU",
              Spec(a100.mem_capacity_bytes, "B", a100.spec("mem_capacity").source, "labelled 40 GB: 40 GiB (JEDEC)"),
              a100.spec("mem_bw"),
              _cycles("global memory (HBM)"),
              None),
        Level("host DRAM over PCIe Gen4 x16", "host",
              None,
              Spec(pcie_bw_bytes_per_s(16), "B/s", PCIE, "per direction, computed from the link rate"),
              None,
              _per_byte(e["dram_low"])),
        Level("NVMe SSD over PCIe Gen4 x4", "host",
              None,
              Spec(pcie_bw_bytes_per_s(4), "B/s", PCIE, "link ceiling per direction; drives sustain less"),
              None, None),
    ]
