"""Hardware specifications, every value with the document it was read from.

Conventions
-----------
- Throughput in FLOP/s (integer formats: OP/s), bandwidth in bytes/s, sizes in
  bytes. Derived figures (ridge points, per-SM bandwidths) are computed by
  functions, never stored.
- Dense and 2:4-sparse Tensor Core peaks are kept apart: ``peaks[(dtype,
  sparse)]``. Where a document prints only the sparse figure (NVIDIA datasheets
  mark it "* with sparsity"), the dense figure is *computed* as half of it and
  the spec table says so.
- "fp32" is the FP32 vector (non-Tensor) peak; "tf32", "fp16", "bf16", "fp8",
  "int8", "int4" are Tensor Core (or MXU) peaks.
- NVIDIA writes on-chip sizes in binary units (a "164 KB" shared memory is
  164 × 1024 bytes, a "40 MB" L2 is 40 × 2**20 bytes); they are stored in bytes.
- Memory capacity is stored as the vendor's label with the vendor's unit
  ("80 GB", "32 GiB"). DRAM comes in power-of-two sizes and its capacity is
  labelled in JEDEC's units (JESD100B.01), where the G of a storage capacity is
  2**30: NVIDIA's "80GB" of HBM is 80 GiB, five stacks of 16 GiB.
  ``Device.mem_capacity_bytes`` reads both "GB" and "GiB" as 2**30 bytes.
- That label is an upper bound on what a program can allocate: the driver keeps
  part of it (an H100 80GB HBM3 reports 81,559 MiB to nvidia-smi). Where a
  public nvidia-smi log gives the reported total, it is stored as
  ``mem_reported`` (bytes) and read by ``Device.mem_reported_bytes``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Optional

from .dtypes import check_dtype, op_unit
from .sources import Source, Spec

KIB = 1024
MIB = 1024 * 1024

# --------------------------------------------------------------------------- sources

JEDEC = Source(
    "JESD100B.01: Terms, Definitions, and Letter Symbols for Microcomputers, Microprocessors, "
    "and Memory Integrated Circuits", "JEDEC Solid State Technology Association", 2002, "jedec2002jesd100",
    where="prefixes for units of semiconductor storage capacity (giga = 2**30)",
)
A100_WP = Source(
    "NVIDIA A100 Tensor Core GPU Architecture (whitepaper, V1.0)", "NVIDIA", 2020,
    "nvidia2020a100",
    url="https://images.nvidia.com/aem-dam/en-zz/Solutions/data-center/nvidia-ampere-architecture-whitepaper.pdf",
)
A100_DS40 = Source(
    "NVIDIA A100 Tensor Core GPU datasheet (40GB)", "NVIDIA", 2020, "nvidia2020a100datasheet",
)
A100_DS80 = Source(
    "NVIDIA A100 Tensor Core GPU datasheet (80GB PCIe / 80GB SXM)", "NVIDIA", 2021,
    "nvidia2021a100datasheet",
)
H100_WP = Source(
    "NVIDIA H100 Tensor Core GPU Architecture (whitepaper, V1.04)", "NVIDIA", 2022,
    "nvidia2022h100",
)
H100_DS = Source("NVIDIA H100 Tensor Core GPU datasheet", "NVIDIA", 2023, "nvidia2023h100datasheet")
H200_DS = Source("NVIDIA H200 Tensor Core GPU datasheet", "NVIDIA", 2024, "nvidia2024h200datasheet")
L4_DS = Source("NVIDIA L4 Tensor Core GPU datasheet", "NVIDIA", 2023, "nvidia2023l4datasheet")
T4_DS = Source("NVIDIA T4 Tensor Core GPU datasheet", "NVIDIA", 2019, "nvidia2019t4datasheet")
TURING_WP = Source("NVIDIA Turing GPU Architecture (whitepaper)", "NVIDIA", 2018, "nvidia2018turing")
ORIN_DS = Source(
    "NVIDIA Jetson Orin NX Series datasheet", "NVIDIA", 2023, "nvidia2023orinnx",
)
TPU_V4_PAPER = Source(
    "TPU v4: An Optically Reconfigurable Supercomputer for Machine Learning with "
    "Hardware Support for Embeddings (Jouppi et al., ISCA '23)", "ACM", 2023, "jouppi2023tpuv4",
)
TPU_V4_DOCS = Source(
    "Cloud TPU documentation: TPU v4", "Google Cloud", 2024, "google2024tpuv4",
    url="https://cloud.google.com/tpu/docs/v4",
)
TPU_V5E_DOCS = Source(
    "Cloud TPU documentation: TPU v5e", "Google Cloud", 2024, "google2024tpuv5e",
    url="https://cloud.google.com/tpu/docs/v5e",
)
CUDA_GUIDE = Source(
    "CUDA C++ Programming Guide", "NVIDIA", 2024, "nvidia2024cudaguide",
    where="Compute Capabilities: table 'Technical Specifications per Compute Capability'",
)
OCC_CALC = Source(
    "CUDA Occupancy Calculator (cuda_occupancy.h, CUDA Toolkit)", "NVIDIA", 2024,
    "nvidia2024occupancy",
)
NVSMI_H100 = Source(
    "nvidia-smi log of an HGX system with eight NVIDIA H100 80GB HBM3 (NVIDIA/nccl issue #1264)", "GitHub",
    2024, "nccl2024issue1264", where="the issue's nvidia-smi table, Memory-Usage column",
    url="https://github.com/NVIDIA/nccl/issues/1264",
    note="what the driver reports as the board's total memory; a program can allocate at most this",
)
HGX_B200 = Source(
    "NVIDIA HGX platform: technical specifications (HGX B200 column, 'Individual Blackwell GPU "
    "Specifications')", "NVIDIA", 2025, "nvidia2025hgxb200",
    url="https://www.nvidia.com/en-us/data-center/hgx/",
    note="Tensor Core figures printed with sparsity; per GPU, configurable up to 1,000 W",
)
MI300X_DS = Source(
    "AMD Instinct MI300X Accelerator datasheet", "AMD", 2023, "amd2023mi300xdatasheet",
    url="https://www.amd.com/en/products/accelerators/instinct/mi300/mi300x.html",
)
CDNA3_WP = Source(
    "Introducing AMD CDNA 3 Architecture (white paper)", "AMD", 2023, "amd2023cdna3",
    where="'Communication and scaling' and Table 2",
    url="https://www.amd.com/content/dam/amd/en/documents/instinct-tech-docs/white-papers/amd-cdna-3-white-paper.pdf",
    note="Infinity Fabric links of 16 lanes at up to 32 Gbps, bi-directional; MI300X: 7 x16 links, "
         "'P2P ring peak aggregate I/O bandwidth' 896 GB/s for 8 GPUs",
)
#: An MI300X Infinity Fabric link: 16 lanes at up to 32 Gb/s each, in each direction (CDNA 3 white paper).
MI300X_IF_LANES, MI300X_IF_LANE_GBITS = 16, 32
NCCL_TESTS_PERF = Source(
    "NCCL Tests: Performance reported by NCCL tests (doc/PERFORMANCE.md)", "NVIDIA", 2026,
    "nvidia2026nccltests", where="'Bandwidth': algorithm bandwidth and bus bandwidth",
    url="https://github.com/NVIDIA/nccl-tests/blob/a0b82b2260cf5152b9f8c061bbf7eaf0ba096432/doc/PERFORMANCE.md",
)
NCCL_TUNING = Source(
    "NCCL source, src/graph/tuning.cc (default tuner constants)", "NVIDIA", 2026, "nvidia2026nccltuning",
    where="hwLatencies, Ring / LL protocol",
    url="https://github.com/NVIDIA/nccl/blob/5067397c2676d5aed50042fc39e5c8ee96eb0027/src/graph/tuning.cc",
    note="NCCL's own cost model: a collective costs baseLatency + steps x hwLatency + bytes / bandwidth",
)
CONNECTX7 = Source(
    "NVIDIA ConnectX-7 InfiniBand adapter datasheet", "NVIDIA", 2022, "nvidia2022connectx7",
    note="NDR InfiniBand, up to 400 Gb/s per port",
)
CONNECTX6 = Source(
    "NVIDIA ConnectX-6 VPI adapter datasheet", "NVIDIA", 2020, "nvidia2020connectx6",
    note="HDR InfiniBand, up to 200 Gb/s per port",
)
LLAMA3_NETWORK = Source(
    "The Llama 3 Herd of Models (Llama Team, AI @ Meta), arXiv:2407.21783", "Meta", 2024,
    "llama2024herd", where="Section 3.3.1, 'Network'",
    note="Llama 3 405B trained over RoCE (RDMA over Converged Ethernet) at 400 Gb/s between GPUs",
)
SCALING_BOOK_TPUS = Source(
    "How to Scale Your Model, Part 2: How to Think About TPUs (Austin et al.)", "Google DeepMind",
    2025, "austin2025scalingbook", where="table 'ICI BW/link (one-way, bytes/s)'",
    url="https://github.com/jax-ml/scaling-book/blob/0819a7d8c55ddc113f5cba0285a5f97380cac1e3/tpus.md",
)
ILLUSTRATION = Source(
    "Illustrative round numbers, not a product", "this book", 2025, None,
    note="a teaching device; never compare it with a datasheet",
)

# ------------------------------------------------------------ compute capability limits


@dataclass(frozen=True)
class CCLimits:
    """Per-SM and per-launch limits of one CUDA compute capability.

    Values from the CUDA C++ Programming Guide's table of technical
    specifications; allocation granularities from the CUDA Occupancy
    Calculator (``cuda_occupancy.h``).
    """

    cc: str
    max_threads_per_sm: int
    max_warps_per_sm: int
    max_blocks_per_sm: int
    smem_per_sm_bytes: int
    smem_per_block_optin_bytes: int
    reserved_smem_per_block_bytes: int
    smem_carveouts_kib: tuple
    regs_per_sm: int = 65536
    max_regs_per_block: int = 65536
    max_regs_per_thread: int = 255
    max_threads_per_block: int = 1024
    max_block_dim: tuple = (1024, 1024, 64)
    max_grid_dim: tuple = (2**31 - 1, 65535, 65535)
    warp_size: int = 32
    smem_per_block_default_bytes: int = 48 * KIB  # above this needs an opt-in attribute
    reg_alloc_unit: int = 256  # registers are allocated per warp in units of 256
    smem_alloc_unit_bytes: int = 128
    sub_partitions: int = 4
    source: Source = CUDA_GUIDE


COMPUTE_CAPABILITIES: dict[str, CCLimits] = {
    # cuda_occupancy.h, cudaOccSMemAllocationGranularity: 256 B for compute major 3 to 7, 128 B from 8.
    "7.5": CCLimits("7.5", 1024, 32, 16, 64 * KIB, 64 * KIB, 0, (32, 64), smem_alloc_unit_bytes=256),
    "8.0": CCLimits("8.0", 2048, 64, 32, 164 * KIB, 163 * KIB, KIB,
                    (0, 8, 16, 32, 64, 100, 132, 164)),
    "8.6": CCLimits("8.6", 1536, 48, 16, 100 * KIB, 99 * KIB, KIB, (0, 8, 16, 32, 64, 100)),
    "8.7": CCLimits("8.7", 1536, 48, 16, 164 * KIB, 163 * KIB, KIB,
                    (0, 8, 16, 32, 64, 100, 132, 164)),
    "8.9": CCLimits("8.9", 1536, 48, 24, 100 * KIB, 99 * KIB, KIB, (0, 8, 16, 32, 64, 100)),
    "9.0": CCLimits("9.0", 2048, 64, 32, 228 * KIB, 227 * KIB, KIB,
                    (0, 8, 16, 32, 64, 100, 132, 164, 196, 228)),
}


def compute_capability(cc: str) -> CCLimits:
    """Limits of compute capability ``cc`` (e.g. "8.0"); ValueError if unknown."""
    if cc not in COMPUTE_CAPABILITIES:
        known = ", ".join(COMPUTE_CAPABILITIES)
        raise ValueError(f"unknown compute capability {cc!r}; known: {known}")
    return COMPUTE_CAPABILITIES[cc]


# ---------------------------------------------------------------------------- device

# A memory capacity's "GB" is JEDEC's, 2**30 bytes (JESD100B.01); bandwidths stay decimal.
_CAPACITY_UNITS = {"GB": 2**30, "GiB": 2**30}
_PEAK_ORDER = ["fp64", "fp32", "tf32", "fp16", "bf16", "fp8", "int8", "int4"]


@dataclass(frozen=True)
class Device:
    """One accelerator (or an illustrative machine) and its sourced specs.

    ``specs`` maps a quantity name to a ``Spec``; ``peaks`` maps
    ``(dtype, sparse)`` to a ``Spec`` in FLOP/s (OP/s for integer formats).
    """

    name: str
    label: str
    kind: str  # "gpu", "tpu", "soc", "cpu"
    specs: Mapping[str, Spec]
    peaks: Mapping[tuple, Spec]
    illustrative: bool = False
    cc: Optional[str] = None
    notes: tuple = field(default=())
    measured: bool = False  # measured in the reader's browser (calc.measured), not a specification
    link: Optional[str] = None  # name of its scale-up link in ``LINKS`` (None where no source gives one)

    # -- lookups -------------------------------------------------------------
    def spec(self, quantity: str) -> Spec:
        """The ``Spec`` for ``quantity``; ValueError naming what exists if absent."""
        if quantity not in self.specs:
            known = ", ".join(sorted(self.specs))
            raise ValueError(f"{self.name} has no published {quantity!r}; it has: {known}")
        return self.specs[quantity]

    def value(self, quantity: str):
        """``spec(quantity).value``."""
        return self.spec(quantity).value

    def has(self, quantity: str) -> bool:
        return quantity in self.specs

    # -- throughput ------------------------------------------------------------
    def _derived_peak(self, dtype: str, sparse: bool) -> Optional[tuple[float, str]]:
        """A peak that is computed rather than printed, with how it was computed."""
        if not sparse and (dtype, True) in self.peaks:
            return self.peaks[(dtype, True)].value / 2, "computed: published 2:4-sparse peak ÷ 2"
        if dtype == "fp32" and not sparse and self.has("cuda_cores") and self.has("gpu_max_clock_hz"):
            cores, clock = self.value("cuda_cores"), self.value("gpu_max_clock_hz")
            return 2 * cores * clock, "computed: 2 FLOP per FMA × CUDA cores × max GPU clock"
        return None

    def peak_flops(self, dtype: str, sparse: bool = False) -> float:
        """Peak throughput for ``dtype`` in FLOP/s (OP/s for int8/int4).

        ``sparse=True`` asks for the 2:4 structured-sparsity figure, which is
        twice the dense one on Ampere and later and absent elsewhere.
        Raises ValueError when the device has no such peak.
        """
        check_dtype(dtype)
        if (dtype, sparse) in self.peaks:
            return float(self.peaks[(dtype, sparse)].value)
        derived = self._derived_peak(dtype, sparse)
        if derived is not None:
            return float(derived[0])
        available = ", ".join(
            f"{d}{' (2:4 sparse)' if s else ''}" for d, s in self.peak_keys()
        ) or "none"
        kind = "2:4-sparse " if sparse else ""
        raise ValueError(
            f"{self.name} has no published {kind}{dtype} peak; available: {available}"
        )

    def peak_keys(self) -> list[tuple[str, bool]]:
        """(dtype, sparse) pairs for which ``peak_flops`` answers, in a fixed order."""
        keys = []
        for dtype in _PEAK_ORDER:
            for sparse in (False, True):
                if (dtype, sparse) in self.peaks or self._derived_peak(dtype, sparse):
                    keys.append((dtype, sparse))
        return keys

    def supports_sparsity(self) -> bool:
        return any(sparse for _, sparse in self.peaks)

    # -- memory ------------------------------------------------------------------
    @property
    def mem_bw(self) -> float:
        """Main-memory (HBM/GDDR/LPDDR/DRAM) bandwidth in bytes/s."""
        return float(self.value("mem_bw"))

    @property
    def mem_capacity_bytes(self) -> float:
        """Memory capacity in bytes: the vendor's "GB" of DRAM is JEDEC's, 2**30 bytes."""
        spec = self.spec("mem_capacity")
        return spec.value * _CAPACITY_UNITS[spec.unit]

    @property
    def mem_reported_bytes(self) -> Optional[float]:
        """The total memory the driver reports (nvidia-smi), in bytes; None where no source gives it.

        Less than ``mem_capacity_bytes``: the label is an upper bound on what a program can allocate."""
        return float(self.value("mem_reported")) if self.has("mem_reported") else None

    @property
    def limits(self) -> CCLimits:
        """CUDA limits for this device's compute capability; ValueError if not CUDA."""
        if self.cc is None:
            raise ValueError(f"{self.name} is not a CUDA device; it has no compute capability")
        return compute_capability(self.cc)

    @property
    def sm_count(self) -> int:
        return int(self.value("sm_count"))

    def ridge_point(self, dtype: str = "fp32", sparse: bool = False) -> float:
        """Ridge point in FLOP/byte: ``peak_flops(dtype, sparse) / mem_bw``."""
        return self.peak_flops(dtype, sparse) / self.mem_bw

    # -- appendix ------------------------------------------------------------------
    def spec_table(self) -> list[dict]:
        """Rows for the "Hardware reference" appendix.

        Each row: ``quantity, value, unit, source`` (a citation string),
        ``key`` (BibTeX key or None), ``note`` and ``computed`` (True when the
        value is derived by this module rather than printed in the source).
        """
        rows = []
        for dtype, sparse in self.peak_keys():
            unit = op_unit(dtype) + "/s"
            quantity = f"peak {dtype}{' (2:4 sparse)' if sparse else ' (dense)'}"
            if (dtype, sparse) in self.peaks:
                s = self.peaks[(dtype, sparse)]
                rows.append(_row(quantity, s.value, s.unit, s.source, s.note, False))
            else:
                value, how = self._derived_peak(dtype, sparse)  # type: ignore[misc]
                src = self.peaks.get((dtype, True))
                rows.append(_row(quantity, value, unit, src.source if src else self.spec("cuda_cores").source, how, True))
        for quantity, s in self.specs.items():
            rows.append(_row(quantity, s.value, s.unit, s.source, s.note, False))
        if self.cc is not None:
            lim = self.limits
            for quantity, value, unit in _limit_rows(lim):
                rows.append(_row(quantity, value, unit, lim.source, f"compute capability {lim.cc}", False))
        return rows


def _row(quantity, value, unit, source: Source, note, computed) -> dict:
    return {
        "quantity": quantity,
        "value": value,
        "unit": unit,
        "source": source.cite(),
        "key": source.key,
        "note": note,
        "computed": computed,
    }


def _limit_rows(lim: CCLimits):
    return [
        ("max threads per SM", lim.max_threads_per_sm, "threads"),
        ("max warps per SM", lim.max_warps_per_sm, "warps"),
        ("max blocks per SM", lim.max_blocks_per_sm, "blocks"),
        ("registers per SM", lim.regs_per_sm, "32-bit registers"),
        ("max registers per thread", lim.max_regs_per_thread, "32-bit registers"),
        ("max shared memory per SM", lim.smem_per_sm_bytes, "B"),
        ("max shared memory per block (opt-in)", lim.smem_per_block_optin_bytes, "B"),
        ("max threads per block", lim.max_threads_per_block, "threads"),
        ("max block dimensions (x, y, z)", lim.max_block_dim, "threads"),
        ("max grid dimensions (x, y, z)", lim.max_grid_dim, "blocks"),
    ]


# ----------------------------------------------------------------------- builders


def _flops(tflops: float, src: Source, note: str = "", unit: str = "FLOP/s") -> Spec:
    return Spec(tflops * 1e12, unit, src, note)


def _tensor_peaks(src: Source, table: dict, note: str = "") -> dict:
    """``{dtype: (dense_tflops or None, sparse_tflops or None)}`` -> peaks mapping."""
    peaks = {}
    for dtype, (dense, sparse) in table.items():
        unit = op_unit(dtype) + "/s"
        if dense is not None:
            peaks[(dtype, False)] = _flops(dense, src, note, unit)
        if sparse is not None:
            peaks[(dtype, True)] = _flops(sparse, src, note, unit)
    return peaks


def _a100(name, label, gb, mem_type, bw_gbs, tdp_w, ds: Source, ds_where: str) -> Device:
    wp_t1 = A100_WP.at("Table 1, 'NVIDIA A100 Tensor Core GPU Performance Specs'")
    wp_t4 = A100_WP.at("Table 4, 'Comparison of NVIDIA Data Center GPUs'")
    peaks_src = wp_t1 if "sxm" in name else ds.at(ds_where)
    peaks = {("fp64", False): _flops(9.7, peaks_src), ("fp32", False): _flops(19.5, peaks_src)}
    peaks.update(_tensor_peaks(peaks_src, {
        "tf32": (156, 312), "fp16": (312, 624), "bf16": (312, 624), "int8": (624, 1248),
    }))
    # The 80GB datasheet prints no INT4 row: the PCIe 80GB card's INT4 comes from the whitepaper.
    int4_from_wp = ds is A100_DS80 and peaks_src is not wp_t1
    peaks.update(_tensor_peaks(wp_t1 if int4_from_wp else peaks_src, {"int4": (1248, 2496)},
                               "the A100 80GB datasheet prints no INT4 row" if int4_from_wp else ""))
    specs = {
        "mem_bw": Spec(bw_gbs * 1e9, "B/s", ds.at(ds_where)),
        "mem_capacity": Spec(gb, "GB", ds.at(ds_where)),
        "mem_type": Spec(mem_type, "", ds.at(ds_where)),
        "sm_count": Spec(108, "SMs", wp_t4),
        "l2_bytes": Spec(40 * MIB, "B", wp_t4, "printed as 40960 KB"),
        "smem_per_sm_bytes": Spec(164 * KIB, "B", wp_t4,
                                  "'configurable up to 164 KB' of the SM's 192 KB L1/shared"),
        "l1_smem_per_sm_bytes": Spec(192 * KIB, "B", A100_WP.at("Section 3.3.1")),
        "register_file_per_sm_bytes": Spec(256 * KIB, "B", wp_t4),
        "tensor_cores": Spec(432, "Tensor Cores", wp_t4, "four per SM"),
        "tdp_watts": Spec(tdp_w, "W", ds.at(ds_where)),
        "compute_capability": Spec("8.0", "", CUDA_GUIDE),
    }
    return Device(name, label, "gpu", specs, peaks, cc="8.0",
                  link="nvlink3" if "sxm" in name else "pcie4x16")


def _build() -> dict[str, Device]:
    d: dict[str, Device] = {}
    d["a100-sxm-40gb"] = _a100("a100-sxm-40gb", "NVIDIA A100 SXM4 40GB", 40, "HBM2", 1555, 400,
                               A100_DS40, "A100 for NVLink column")
    d["a100-sxm-80gb"] = _a100("a100-sxm-80gb", "NVIDIA A100 SXM4 80GB", 80, "HBM2e", 2039, 400,
                               A100_DS80, "A100 80GB SXM column")
    d["a100-pcie-40gb"] = _a100("a100-pcie-40gb", "NVIDIA A100 PCIe 40GB", 40, "HBM2", 1555, 250,
                                A100_DS40, "A100 for PCIe column")
    d["a100-pcie-80gb"] = _a100("a100-pcie-80gb", "NVIDIA A100 PCIe 80GB", 80, "HBM2e", 1935, 300,
                                A100_DS80, "A100 80GB PCIe column")

    # H100: whitepaper V1.04 carries final clocks; Table 1 (p. 20) and Table 3 (pp. 39-40).
    h_t1 = H100_WP.at("Table 1, 'NVIDIA H100 Tensor Core GPU Performance Specs' (p. 20)")
    h_t3 = H100_WP.at("Table 3, 'Comparison of NVIDIA A100 and H100 Data Center GPUs' (pp. 39-40)")
    # (dense, 2:4 sparse) Tensor Core TFLOPS (TOPS for INT8) of the H100 SXM5, Table 1
    h100_sxm_tensor = {"tf32": (494.7, 989.4), "fp16": (989.4, 1978.9), "bf16": (989.4, 1978.9),
                       "fp8": (1978.9, 3957.8), "int8": (1978.9, 3957.8)}
    for name, label, col, fp64, fp32, tensor, sms, bw, mem_type, tdp in (
        ("h100-sxm", "NVIDIA H100 SXM5 80GB", "H100 SXM5", 33.5, 66.9,
         h100_sxm_tensor, 132, 3352, "HBM3", 700),
        ("h100-pcie", "NVIDIA H100 PCIe 80GB", "H100 PCIe", 25.6, 51.2,
         {"tf32": (378, 756), "fp16": (756, 1513), "bf16": (756, 1513),
          "fp8": (1513, 3026), "int8": (1513, 3026)}, 114, 2000, "HBM2e", 350),
    ):
        t1 = h_t1.at(h_t1.where + f", {col} column")
        t3 = h_t3.at(h_t3.where + f", {col} column")
        peaks = {("fp64", False): _flops(fp64, t1), ("fp32", False): _flops(
            fp32, t1, "the datasheet rounds this to " + ("67" if fp32 > 60 else "51") + " TFLOPS")}
        peaks.update(_tensor_peaks(t1, tensor))
        specs = {
            "mem_bw": Spec(bw * 1e9, "B/s", t3,
                           "datasheet: " + ("3.35 TB/s" if bw > 3000 else "2 TB/s")),
            "mem_capacity": Spec(80, "GB", t3),
            **({"mem_reported": Spec(81559 * MIB, "B", NVSMI_H100, "printed as 81559MiB")}
               if name == "h100-sxm" else {}),
            "mem_type": Spec(mem_type, "", t3),
            "sm_count": Spec(sms, "SMs", t3),
            "l2_bytes": Spec(50 * MIB, "B", t3),
            "smem_per_sm_bytes": Spec(228 * KIB, "B", t3, "'configurable up to 228 KB'"),
            "l1_smem_per_sm_bytes": Spec(256 * KIB, "B", H100_WP.at("Section 'H100 SM Architecture'")),
            "register_file_per_sm_bytes": Spec(256 * KIB, "B", t3),
            "tdp_watts": Spec(tdp, "W", t3),
            "compute_capability": Spec("9.0", "", CUDA_GUIDE),
        }
        d[name] = Device(name, label, "gpu", specs, peaks, cc="9.0",
                         link="nvlink4" if name == "h100-sxm" else "pcie5x16")

    h200 = H200_DS.at("H200 SXM column")
    sparse_note = "datasheet prints only the 2:4-sparse figure ('* with sparsity')"
    peaks = {("fp64", False): _flops(34, h200), ("fp32", False): _flops(67, h200)}
    peaks.update(_tensor_peaks(h200, {"tf32": (None, 989), "fp16": (None, 1979),
                                      "bf16": (None, 1979), "fp8": (None, 3958),
                                      "int8": (None, 3958)}, sparse_note))
    # The dense peaks are not half the datasheet's sparse figures: those are rounded (1,979),
    # and half of 1,979 is 989.5, which printed as 990 beside the H100's 989. The H200 is the
    # H100 SXM5's GH100 at the same clocks (its datasheet prints the same FP64, FP32 and sparse
    # figures), so its dense peaks are the H100 SXM5's, from the H100 whitepaper's Table 1.
    h200_dense_src = h_t1.at(h_t1.where + ", H100 SXM5 column")
    h200_dense_note = ("the H200 datasheet prints only sparse Tensor Core figures; the H200 is the "
                       "H100 SXM5's GH100 at the same clocks, so this is the H100 SXM5's dense peak")
    peaks.update(_tensor_peaks(h200_dense_src, {k: (dense, None) for k, (dense, _) in h100_sxm_tensor.items()},
                               h200_dense_note))
    d["h200-sxm"] = Device("h200-sxm", "NVIDIA H200 SXM 141GB", "gpu", {
        "mem_bw": Spec(4.8e12, "B/s", h200),
        "mem_capacity": Spec(141, "GB", h200),
        "mem_type": Spec("HBM3e", "", h200),
        "sm_count": Spec(132, "SMs", h_t3.at(h_t3.where + ", H100 SXM5 column"),
                         "not printed in the H200 datasheet; H200 uses the H100 SXM5's GH100 configuration"),
        "l2_bytes": Spec(50 * MIB, "B", h_t3.at(h_t3.where + ", H100 SXM5 column"),
                         "not printed in the H200 datasheet; same GH100 GPU as H100 SXM5"),
        "smem_per_sm_bytes": Spec(228 * KIB, "B", CUDA_GUIDE, "compute capability 9.0"),
        "tdp_watts": Spec(700, "W", h200, "'up to 700W (configurable)'"),
        "compute_capability": Spec("9.0", "", CUDA_GUIDE),
    }, peaks, cc="9.0", link="nvlink4")

    # B200: the per-GPU column of NVIDIA's HGX B200 table. Like the H200 datasheet it prints the
    # Tensor Core figures with sparsity only, so the dense peaks are computed (half). FP4 (18 PFLOPS
    # sparse) is left out: the book has no FP4 format. No compute-capability limits are stored
    # (cc 10.0 is not in the CUDA guide table the book read), so cc stays None.
    hgx = HGX_B200.at("HGX B200 column, 'Individual Blackwell GPU Specifications'")
    peaks = {("fp64", False): _flops(37, hgx, "printed as 'FP64/FP64 Tensor Core'"),
             ("fp32", False): _flops(75, hgx)}
    peaks.update(_tensor_peaks(hgx, {"tf32": (None, 2.2e3), "fp16": (None, 4.5e3),
                                     "bf16": (None, 4.5e3), "fp8": (None, 9e3),
                                     "int8": (None, 9e3)},
                               "the HGX table prints only 2:4-sparse Tensor Core figures, in PFLOPS"))
    d["b200"] = Device("b200", "NVIDIA B200 (HGX) 180GB", "gpu", {
        "mem_bw": Spec(7.7e12, "B/s", hgx, "printed as '7.7TB/s'; NVIDIA's other Blackwell documents print 8 TB/s"),
        "mem_capacity": Spec(180, "GB", hgx),
        "mem_type": Spec("HBM3e", "", hgx),
        "tdp_watts": Spec(1000, "W", hgx, "'configurable up to 1,000W'"),
        "nvlink_bw_total": Spec(1.8e12, "B/s", hgx, "fifth-generation NVLink, printed as '1.8TB/s' (both directions)"),
    }, peaks, link="nvlink5")

    # MI300X: AMD's datasheet prints dense and 2:4-sparse figures side by side.
    mi = MI300X_DS.at("specifications table")
    peaks = {("fp64", False): _flops(81.7, mi, "vector; the FP64 matrix peak is 163.4 TFLOPS"),
             ("fp32", False): _flops(163.4, mi, "vector; the FP32 matrix peak is the same")}
    peaks.update(_tensor_peaks(mi, {"tf32": (653.7, 1307.4), "fp16": (1307.4, 2614.9),
                                    "bf16": (1307.4, 2614.9), "fp8": (2614.9, 5229.8),
                                    "int8": (2614.9, 5229.8)}))
    d["mi300x"] = Device("mi300x", "AMD Instinct MI300X 192GB", "gpu", {
        "mem_bw": Spec(5.3e12, "B/s", mi, "printed as '5.3 TB/s'"),
        "mem_capacity": Spec(192, "GB", mi),
        "mem_type": Spec("HBM3", "", mi),
        "compute_units": Spec(304, "CUs", mi),
        "tdp_watts": Spec(750, "W", mi, "peak total board power"),
        "infinity_fabric_links": Spec(7, "links", mi),
        "infinity_fabric_link_bw": Spec(128e9, "B/s", mi, "'peak Infinity Fabric link bandwidth', per link, both "
                                        "directions: the CDNA 3 white paper's 16 lanes at 32 Gb/s are 64 GB/s each way"),
    }, peaks, link="infinity-fabric-mi300x")

    l4 = L4_DS.at("specifications table")
    peaks = {("fp32", False): _flops(30.3, l4)}
    peaks.update(_tensor_peaks(l4, {"tf32": (None, 120), "fp16": (None, 242),
                                    "bf16": (None, 242), "fp8": (None, 485),
                                    "int8": (None, 485)}, sparse_note))
    d["l4"] = Device("l4", "NVIDIA L4 24GB", "gpu", {
        "mem_bw": Spec(300e9, "B/s", l4),
        "mem_capacity": Spec(24, "GB", l4),
        "mem_type": Spec("GDDR6", "", l4),
        "smem_per_sm_bytes": Spec(100 * KIB, "B", CUDA_GUIDE, "compute capability 8.9"),
        "tdp_watts": Spec(72, "W", l4),
        "compute_capability": Spec("8.9", "", CUDA_GUIDE),
    }, peaks, cc="8.9")

    t4 = T4_DS.at("specifications table")
    d["t4"] = Device("t4", "NVIDIA T4 16GB", "gpu", {
        "mem_bw": Spec(320e9, "B/s", t4, "printed as '320+ GB/s'"),
        "mem_capacity": Spec(16, "GB", t4),
        "mem_type": Spec("GDDR6", "", t4),
        "sm_count": Spec(40, "SMs", TURING_WP.at("Tesla T4 / TU104 configuration"),
                         "2,560 CUDA cores / 64 per Turing SM"),
        "cuda_cores": Spec(2560, "cores", t4),
        "smem_per_sm_bytes": Spec(64 * KIB, "B", CUDA_GUIDE, "compute capability 7.5"),
        "tdp_watts": Spec(70, "W", t4),
        "compute_capability": Spec("7.5", "", CUDA_GUIDE),
    }, {
        ("fp32", False): _flops(8.1, t4),
        ("fp16", False): _flops(65, t4, "'mixed precision (FP16/FP32)'; Turing has no 2:4 sparsity"),
        ("int8", False): _flops(130, t4, unit="OP/s"),
        ("int4", False): _flops(260, t4, unit="OP/s"),
    }, cc="7.5")

    v4 = TPU_V4_DOCS.at("'System architecture': TPU v4 chip specifications")
    d["tpu-v4"] = Device("tpu-v4", "Google TPU v4 (one chip)", "tpu", {
        "mem_bw": Spec(1200e9, "B/s", v4, "printed as '1200 GBps'"),
        "mem_capacity": Spec(32, "GiB", v4),
        "mem_type": Spec("HBM2", "", v4),
        "tensorcores_per_chip": Spec(2, "TensorCores", TPU_V4_PAPER.at("Section 2 / Table 1")),
        "mxus_per_tensorcore": Spec(4, "MXUs", TPU_V4_PAPER.at("Section 2")),
        "mxu_dim": Spec(128, "PEs per side", TPU_V4_PAPER.at("Section 2"), "128 × 128 systolic MXU"),
    }, {
        ("bf16", False): _flops(275, v4),
        ("int8", False): _flops(275, v4, "docs: '275 teraflops (bf16 or int8)'", "OP/s"),
    })

    v5e = TPU_V5E_DOCS.at("'System architecture': key chip specifications")
    d["tpu-v5e"] = Device("tpu-v5e", "Google TPU v5e (one chip)", "tpu", {
        "mem_bw": Spec(819e9, "B/s", v5e,
                       "'16 GB, 819 GBps'; a later revision of the page prints '800 GiBps'"),
        "mem_capacity": Spec(16, "GB", v5e),
        "mem_type": Spec("HBM2", "", v5e),
        "tensorcores_per_chip": Spec(1, "TensorCore", v5e),
        "mxus_per_tensorcore": Spec(4, "MXUs", v5e),
    }, {
        ("bf16", False): _flops(197, v5e),
        ("int8", False): _flops(393, v5e, "page revisions print 393 or 394", "OP/s"),
    })

    orin = ORIN_DS.at("Jetson Orin NX 16GB column")
    d["jetson-orin-nx-16gb"] = Device("jetson-orin-nx-16gb", "NVIDIA Jetson Orin NX 16GB", "soc", {
        "mem_bw": Spec(102.4e9, "B/s", orin),
        "mem_capacity": Spec(16, "GB", orin),
        "mem_type": Spec("LPDDR5 (128-bit, shared with the CPU)", "", orin),
        "cuda_cores": Spec(1024, "cores", orin),
        "tensor_cores": Spec(32, "Tensor Cores", orin),
        "gpu_max_clock_hz": Spec(918e6, "Hz", orin),
        "sm_count": Spec(8, "SMs", orin, "1,024 CUDA cores / 128 per Ampere (cc 8.7) SM"),
        "module_ai_tops_sparse_int8": Spec(100e12, "OP/s", orin,
                                           "whole module, GPU + 2 DLAs, INT8 with sparsity; "
                                           "not a GPU peak"),
        "smem_per_sm_bytes": Spec(164 * KIB, "B", CUDA_GUIDE, "compute capability 8.7"),
        "module_power_watts": Spec(25, "W", orin, "configurable 10-25 W"),
        "compute_capability": Spec("8.7", "", CUDA_GUIDE),
    }, {}, cc="8.7")

    d["laptop-cpu"] = Device("laptop-cpu", "Illustrative laptop CPU (not a product)", "cpu", {
        "mem_bw": Spec(20e9, "B/s", ILLUSTRATION, "'roughly 20 GB/s' from main RAM"),
    }, {("fp32", False): Spec(100e9, "FLOP/s", ILLUSTRATION, "'roughly 100 GFLOPS' of FP32")},
        illustrative=True)

    d["toy"] = Device("toy", "Toy throughput processor (not a product)", "cpu", {
        "mem_bw": Spec(100.0, "B/s", ILLUSTRATION, "100 bytes per second"),
    }, {("fp32", False): Spec(400.0, "FLOP/s", ILLUSTRATION, "400 FLOP per second")},
        illustrative=True)
    return d


DEVICES: dict[str, Device] = _build()


def device(name: str) -> Device:
    """The ``Device`` called ``name``; ValueError listing known names otherwise."""
    key = name.strip().lower() if isinstance(name, str) else name
    if key not in DEVICES:
        known = ", ".join(DEVICES)
        raise ValueError(f"unknown device {name!r}; known: {known}")
    return DEVICES[key]


def products() -> list[Device]:
    """Real products only (no illustrations), in table order."""
    return [d for d in DEVICES.values() if not d.illustrative]


# ------------------------------------------------------------------------ interconnects


@dataclass(frozen=True)
class Link:
    """A link between accelerators, with its bandwidth in one direction and its sources.

    ``bw_per_direction_GBps`` is in GB/s (10**9 bytes per second) in ONE direction, for one
    device's whole connection of that kind (all its NVLinks together, one network port, one
    PCIe x16 slot): the figure a collective's bytes are divided by. Vendors print the sum of
    both directions for NVLink and PCIe ("900 GB/s") and the data rate in bits for
    networks ("400 Gb/s", the data rate of one port in each direction); ``printed`` keeps the figure as printed, ``note`` says how it was
    converted. ``latency_us`` is a per-step software-and-hardware latency in microseconds, from
    NCCL's own cost model where it has one, else None; ``latency_source`` names it. ``links`` counts the
    physical links of an NVLink connection (12 on the A100, 18 on the H100), None elsewhere.
    """

    name: str
    label: str
    kind: str  # "scale-up" (inside a node or pod) or "scale-out" (between nodes)
    bw_per_direction_GBps: float
    latency_us: Optional[float]
    source: Source
    note: str = ""
    printed: str = ""
    latency_source: Optional[Source] = None
    links: Optional[int] = None  # how many physical links make up that connection, where the source says
    per: str = "device"  # what the bandwidth is for: a device's whole connection, or (TPU ICI) "link"

    @property
    def bw_per_direction(self) -> float:
        """Bandwidth in one direction, bytes/s."""
        return self.bw_per_direction_GBps * 1e9

    @property
    def alpha_s(self) -> Optional[float]:
        """Per-step latency in seconds (None where no source gives one)."""
        return None if self.latency_us is None else self.latency_us * 1e-6


PCIE4_SPEC = Source("PCI Express Base Specification, Revision 4.0", "PCI-SIG", 2017, "pcisig2017pcie4",
                    where="16 GT/s per lane, 128b/130b encoding")


def pcie_bw_bytes_per_s(lanes: int = 16, gt_per_s: float = 16e9) -> float:
    """One-direction PCIe bandwidth: ``lanes × rate × 128/130 / 8`` bytes/s (Gen4: 31.5 GB/s at x16,
    Gen5 at 32 GT/s: 63.0 GB/s). NVIDIA prints the raw rate of both directions ("64 GB/s" for Gen4
    x16: 16 lanes × 16 GT/s / 8 = 32 GB/s each way, before the 128b/130b line code)."""
    if lanes not in (1, 2, 4, 8, 16):
        raise ValueError(f"PCIe links have 1, 2, 4, 8 or 16 lanes, got {lanes}")
    return lanes * gt_per_s * 128 / 130 / 8


def _links() -> dict[str, Link]:
    # NCCL's per-step hardware latency of its low-latency (LL) ring protocol, the protocol it picks
    # for small messages: NVLink 0.6 us, PCIe 1.0 us, network 2.7 us (src/graph/tuning.cc).
    lat = NCCL_TUNING
    a100 = A100_DS80.at("'Interconnect' row")
    h100 = H100_DS.at("'Interconnect' row")
    out = [
        Link("nvlink3", "NVLink 3 (A100 SXM)", "scale-up", 300, 0.6,
             A100_WP.at("Section 'Third-generation NVLink'"),
             "600 GB/s total over 12 links, 25 GB/s per link per direction", "600 GB/s", lat, links=12),
        Link("nvlink4", "NVLink 4 (H100/H200 SXM)", "scale-up", 450, 0.6, h100,
             "900 GB/s total over 18 links (H100 whitepaper, 'Fourth-generation NVLink'); half of it in each "
             "direction", "900 GB/s", lat, links=18),
        Link("nvlink5", "NVLink 5 (B200)", "scale-up", 900, 0.6,
             HGX_B200.at("'Interconnect' row ('5th Generation NVLink: 1.8TB/s') and HGX B200 column, "
                         "'Total NVLink Bandwidth' (14.4TB/s for 8 GPUs)"),
             "1.8 TB/s total per GPU (14.4 TB/s / 8); half of it in each direction", "1.8 TB/s", lat),
        Link("pcie4x16", "PCIe 4.0 x16", "scale-up", pcie_bw_bytes_per_s(16, 16e9) / 1e9, 1.0, a100,
             "64 GB/s total for the A100 PCIe card: the raw 16 GT/s of 16 lanes, both directions; after "
             "PCIe's 128b/130b line code 31.5 GB/s in each direction (PCIe 4.0 specification)", "64 GB/s", lat),
        Link("pcie5x16", "PCIe 5.0 x16", "scale-up", pcie_bw_bytes_per_s(16, 32e9) / 1e9, 1.0, h100,
             "128 GB/s total for the H100 PCIe card: the raw 32 GT/s of 16 lanes, both directions; after "
             "the 128b/130b line code 63.0 GB/s in each direction", "128 GB/s", lat),
        Link("ib-hdr-200", "InfiniBand HDR, 200 Gb/s port", "scale-out", 25, 2.7, CONNECTX6,
             "200 Gb/s per direction = 25 GB/s (8 bits a byte)", "200 Gb/s", lat),
        Link("ib-ndr-400", "InfiniBand NDR, 400 Gb/s port", "scale-out", 50, 2.7, CONNECTX7,
             "400 Gb/s per direction = 50 GB/s (8 bits a byte)", "400 Gb/s", lat),
        Link("roce-400", "RoCE Ethernet, 400 Gb/s (Llama 3's cluster)", "scale-out", 50, 2.7, LLAMA3_NETWORK,
             "400 Gb/s per direction = 50 GB/s (8 bits a byte); NCCL charges it the network's latency",
             "400 Gb/s", lat),
        Link("infinity-fabric-mi300x", "Infinity Fabric (MI300X, 8-GPU platform)", "scale-up", 448, None,
             MI300X_DS.at("'AMD Infinity Fabric links' and 'Peak Infinity Fabric link bandwidth'"),
             "7 links of 128 GB/s each, both directions (the CDNA 3 white paper's x16 links at 32 Gb/s a lane): "
             "64 GB/s per link per direction, 448 GB/s to all seven peers together; one peer alone gets 64 GB/s",
             "7 x 128 GB/s"),
        Link("tpu-v5p-ici", "TPU v5p ICI (one link)", "scale-up", 90, None, SCALING_BOOK_TPUS,
             "one link, one way (9e10 bytes/s); a v5p chip has six, two per axis of its 3D torus. Google's "
             "v5p page prints '1200 GBps' bidirectional ICI per chip, which over six links would be 100 GB/s "
             "one way: the sources differ by about a tenth. An earlier revision printed '4800 Gbps', which is "
             "600 GB/s, half of '1200 GBps': not the same figure, and not the one used here",
             "9e10 bytes/s", per="link"),
    ]
    return {l.name: l for l in out}


LINKS: dict[str, Link] = _links()


def link(name: str) -> Link:
    """The ``Link`` called ``name``; ValueError listing known names otherwise."""
    key = name.strip().lower() if isinstance(name, str) else name
    if key not in LINKS:
        raise ValueError(f"unknown link {name!r}; known: {', '.join(LINKS)}")
    return LINKS[key]


def links() -> list[Link]:
    """Every link, in table order."""
    return list(LINKS.values())


def scale_up_link(device_name: str) -> Link:
    """The link a device's GPUs talk over inside their node; ValueError where none is sourced."""
    dev = device(device_name)
    if dev.link is None:
        raise ValueError(f"{dev.name} has no sourced scale-up link; devices with one: "
                         + ", ".join(d.name for d in DEVICES.values() if d.link))
    return link(dev.link)
