"""``launch``: validate a launch, then run it a warp at a time (``calc.sim.warp``) or, when that
executor hands it back, thread by thread (``calc.sim.thread``)."""

from __future__ import annotations

from typing import Callable, Optional, Sequence

from .. import specs
from ..cuda import dim3, validate_launch
from . import lang, thread, warp
from . import memory as mem
from .counts import Report
from .errors import LaunchError
from .memory import DEFAULT_DEVICE, DEFAULT_MAX_STEPS, MAX_THREADS, Array


def launch(kernel: Callable, grid, block, args: Sequence = (), *, device=DEFAULT_DEVICE,
           max_steps: int = DEFAULT_MAX_STEPS, l2_bytes: Optional[int] = None, vector: bool = True,
           races: bool = True) -> Report:
    """Run ``kernel(*args)`` for every thread of ``<<<grid, block>>>`` and report what it moved.

    ``grid`` and ``block`` are ints, 1-3 tuples or ``Dim3``; ``args`` are passed to
    every thread (``Array`` objects are global memory, anything else is a value).
    ``device`` (a ``calc.specs`` name or Device) sets the launch limits and the L2
    capacity; ``l2_bytes`` overrides that capacity (0: no cache, every sector goes to
    HBM). Raises a ``KernelError`` subclass on the first error.

    ``vector``: first try running a warp's lanes as one (``calc.warpvec``: the same report,
    several times faster, or it hands the launch back); False runs every thread alone.
    ``report.executor`` says which ran ("warp" or "thread"). ``races=False`` looks for no race, to
    show what a racy kernel writes (``Report.writers``, ``Report.races``).
    """
    if mem._ST is not None:
        raise LaunchError("launch() cannot be called from inside a kernel")
    dev = specs.device(device) if isinstance(device, str) else device
    try:
        g, b = dim3(grid), dim3(block)
        validate_launch(g, b, dev)
    except ValueError as e:
        raise LaunchError(str(e)) from None
    if g.count * b.count > MAX_THREADS:
        raise LaunchError(f"{g.count * b.count:,} threads is more than this simulator runs "
                          f"({MAX_THREADS:,}); simulate a smaller problem")
    if not isinstance(getattr(kernel, "__code__", None), type(launch.__code__)):
        raise LaunchError(f"the kernel must be a Python function (def ...), got {kernel!r}")
    if not isinstance(races, bool):
        raise LaunchError(f"races= is True or False, got {races!r}")
    arrays = [a for a in args if isinstance(a, Array)]
    if len({id(a) for a in arrays}) != len({a.name for a in arrays}):
        raise LaunchError("two different arrays of a launch share a name: "
                          + ", ".join(sorted(a.name for a in arrays)))
    if l2_bytes is None and not dev.has("l2_bytes"):
        raise LaunchError(f"calc.specs has no L2 size for the {dev.label}; pass l2_bytes= to model one")
    l2 = int(dev.value("l2_bytes")) if l2_bytes is None else int(l2_bytes)
    if vector:
        report = warp.run(kernel, g, b, args, dev, max_steps, l2, arrays, lang.WARP_SAFE, races)
        if report is not None:
            report.executor = "warp"
            return report
    return thread.run(kernel, g, b, args, dev, max_steps, l2, arrays, races)
