"""Number formats and their storage size.

``tf32`` is a Tensor Core *compute* format: its values are stored in memory as
ordinary 32-bit words, so it moves 4 bytes per element. ``fp8`` covers both
E4M3 and E5M2. ``int4`` packs two values per byte, hence 0.5 bytes.
"""

from __future__ import annotations

DTYPES: dict[str, float] = {
    "fp64": 8,
    "fp32": 4,
    "tf32": 4,
    "fp16": 2,
    "bf16": 2,
    "fp8": 1,
    "int8": 1,
    "int4": 0.5,
}

#: formats whose arithmetic is integer (throughput quoted in OP/s, not FLOP/s)
INTEGER_DTYPES = frozenset({"int8", "int4"})


def op_unit(dtype: str) -> str:
    """What arithmetic in ``dtype`` is counted in: "OP" for integer formats, "FLOP" otherwise
    (so peaks are OP/s or FLOP/s, intensities OP/B or FLOP/B)."""
    return "OP" if dtype in INTEGER_DTYPES else "FLOP"


def check_dtype(dtype: str) -> str:
    """Return ``dtype`` if known, else raise ValueError listing the known ones."""
    if dtype not in DTYPES:
        known = ", ".join(DTYPES)
        raise ValueError(f"unknown dtype {dtype!r}; known: {known}")
    return dtype


def size_bytes(dtype: str) -> float:
    """Bytes per element of ``dtype`` (0.5 for int4)."""
    return DTYPES[check_dtype(dtype)]


def size_bits(dtype: str) -> int:
    """Bits per element: ``8 * size_bytes(dtype)``."""
    return int(8 * size_bytes(dtype))


def tensor_bytes(n_elements: int, dtype: str) -> float:
    """Bytes to store ``n_elements`` values: ``n_elements * size_bytes(dtype)``."""
    if n_elements < 0:
        raise ValueError(f"number of elements must be >= 0, got {n_elements}")
    return n_elements * size_bytes(dtype)
