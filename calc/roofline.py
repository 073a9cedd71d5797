"""The roofline model (Williams, Waterman & Patterson, CACM 2009).

Units: intensity in FLOP/byte, throughput in FLOP/s, bandwidth in bytes/s,
time in seconds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence


def _positive(name: str, x: float) -> float:
    if not (isinstance(x, (int, float)) and math.isfinite(x) and x > 0):
        raise ValueError(f"{name} must be a positive finite number, got {x!r}")
    return float(x)


def _non_negative(name: str, x: float) -> float:
    if not (isinstance(x, (int, float)) and math.isfinite(x) and x >= 0):
        raise ValueError(f"{name} must be a non-negative finite number, got {x!r}")
    return float(x)


def attainable(intensity: float, peak_flops: float, bw: float) -> float:
    """Attainable throughput: ``P = min(peak_flops, intensity × bw)`` in FLOP/s."""
    i = _non_negative("intensity", intensity)
    return min(_positive("peak_flops", peak_flops), i * _positive("bw", bw))


def ridge_point(peak_flops: float, bw: float) -> float:
    """Intensity where the roofs meet: ``I* = peak_flops / bw`` in FLOP/byte."""
    return _positive("peak_flops", peak_flops) / _positive("bw", bw)


def regime(intensity: float, peak_flops: float, bw: float) -> str:
    """'memory-bound' if ``intensity < I*``, else 'compute-bound' (the ridge itself counts as compute-bound)."""
    i = _non_negative("intensity", intensity)
    return "memory-bound" if i < ridge_point(peak_flops, bw) else "compute-bound"


def compute_time(flops: float, peak_flops: float) -> float:
    """``t_compute = flops / peak_flops`` seconds."""
    return _non_negative("flops", flops) / _positive("peak_flops", peak_flops)


def memory_time(bytes_: float, bw: float) -> float:
    """``t_memory = bytes_ / bw`` seconds."""
    return _non_negative("bytes_", bytes_) / _positive("bw", bw)


def time_lower_bound(flops: float, bytes_: float, peak_flops: float, bw: float) -> float:
    """``t >= max(flops / peak_flops, bytes_ / bw)`` seconds (compute and transfer fully overlapped)."""
    return max(compute_time(flops, peak_flops), memory_time(bytes_, bw))


def mfu(achieved_flops: float, peak_flops: float) -> float:
    """Model FLOPs utilisation: ``achieved_flops / peak_flops`` (a fraction).

    ``achieved_flops`` counts the FLOPs the model requires per second, not recomputed ones (those
    give hardware FLOPs utilisation); ``peak_flops`` is the dense peak for the format in use.
    """
    return _non_negative("achieved_flops", achieved_flops) / _positive("peak_flops", peak_flops)


def bandwidth_utilisation(achieved_bw: float, bw: float) -> float:
    """``achieved_bw / bw`` (a fraction)."""
    return _non_negative("achieved_bw", achieved_bw) / _positive("bw", bw)


@dataclass(frozen=True)
class Ceiling:
    """One roof: a compute ceiling (``kind='compute'``, value in FLOP/s) or a
    bandwidth ceiling (``kind='memory'``, value in bytes/s)."""

    name: str
    kind: str
    value: float

    def __post_init__(self) -> None:
        if self.kind not in ("compute", "memory"):
            raise ValueError(f"a ceiling is 'compute' or 'memory', got {self.kind!r}")
        _positive(f"ceiling {self.name!r}", self.value)


def attainable_multi(intensity: float, ceilings: Sequence[Ceiling]) -> tuple[float, str]:
    """Attainable throughput under several roofs and the name of the binding one.

    ``P = min( min_c compute_c , intensity × min_m bandwidth_m )`` over the
    given ceilings. With a vector and a tensor compute roof, pass only the roof
    the kernel can use (a kernel that cannot use Tensor Cores is capped by the
    vector roof); with HBM and L2 bandwidth roofs, pass the one whose traffic
    ``intensity`` was computed against.
    """
    i = _non_negative("intensity", intensity)
    compute = [c for c in ceilings if c.kind == "compute"]
    memory = [c for c in ceilings if c.kind == "memory"]
    if not compute or not memory:
        raise ValueError("attainable_multi needs at least one compute and one memory ceiling")
    c_best = min(compute, key=lambda c: c.value)
    m_best = min(memory, key=lambda c: c.value)
    mem_limited = i * m_best.value
    if mem_limited < c_best.value:
        return mem_limited, m_best.name
    return c_best.value, c_best.name


def ceilings_for(device, dtypes: Sequence[str] = ("fp32", "fp16"), l2_bw: float = 0.0) -> list[Ceiling]:
    """Ceilings of a ``calc.specs.Device``: one compute roof per dtype (dense), HBM and optional L2."""
    out = [Ceiling(f"{d} peak", "compute", device.peak_flops(d)) for d in dtypes]
    out.append(Ceiling("HBM", "memory", device.mem_bw))
    if l2_bw:
        out.append(Ceiling("L2", "memory", l2_bw))
    return out


def curve(peak: float, bw: float, i_min: float = 0.01, i_max: float = 10_000.0,
          n: int = 200) -> list[tuple[float, float]]:
    """``n`` log-spaced points ``(intensity, attainable)`` from ``i_min`` to ``i_max``, for plotting.

    The ridge point is inserted when it lies inside the range so the corner is drawn sharp.
    """
    lo, hi = _positive("i_min", i_min), _positive("i_max", i_max)
    if hi <= lo:
        raise ValueError(f"i_max ({hi}) must exceed i_min ({lo})")
    if n < 2:
        raise ValueError(f"need at least 2 points, got {n}")
    step = (math.log10(hi) - math.log10(lo)) / (n - 1)
    xs = [10 ** (math.log10(lo) + k * step) for k in range(n)]
    xs[0], xs[-1] = lo, hi
    ridge = ridge_point(peak, bw)
    if lo < ridge < hi:
        xs = sorted(set(xs) | {ridge})
    return [(x, attainable(x, peak, bw)) for x in xs]
