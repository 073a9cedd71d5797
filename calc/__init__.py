"""The book's physics: pure standard-library calculations.

Every number the prose, the widgets or the figures print is computed here.
`calc` imports nothing else of the project and runs unchanged in CPython 3.11
and in Pyodide, so a widget in the browser and a chapter at build time get the
same answer from the same function.

Submodules (import the one you need, e.g. ``from calc import roofline``):

- ``check``      guards for claims the prose makes
- ``fmt``        numbers into prose (significant figures, SI prefixes)
- ``dtypes``     bytes per element of each number format
- ``specs``      hardware specifications, each value with its source
- ``hierarchy``  a memory hierarchy table (latency, bandwidth, energy)
- ``energy``     energy per operation and per access (Horowitz, ISSCC 2014)
- ``roofline``   attainable throughput, ridge points, time lower bounds
- ``intensity``  FLOPs and bytes of common kernels
- ``attention``  FLOPs and HBM traffic of attention variants, a reference
- ``kernels``    the attention kernels as runnable pseudocode
- ``tiling``     tiled matrix multiply: tile counts, traffic, shared memory
- ``systolic``   systolic arrays: cycles, utilisation, dataflows
- ``cuda``       CUDA indexing, coalescing, bank conflicts, launch limits
- ``occupancy``  occupancy by the CUDA Occupancy Calculator's rules
- ``sim``        the warp-level kernel simulator (a package): runs a Numba CUDA kernel, records each
                 warp instruction and counts from that record sectors, bank conflicts, divergence,
                 FLOPs and HBM bytes; ``sim.kernels`` holds the canonical kernels
- ``llm``        serving a language model: KV cache, memory budget, one decode step
- ``collectives`` collectives between accelerators: schedules, bytes per link, alpha-beta time
- ``parallelism`` a training step on many GPUs: memory per GPU, compute and communication time
- ``measured``   the reader's device as the in-page probe measured it (never a specification)
- ``exercises``  the in-page exercises: parse, check a reader's kernel, score it in counted bytes
"""

__all__ = [
    "attention",
    "check",
    "collectives",
    "cuda",
    "dtypes",
    "energy",
    "exercises",
    "fmt",
    "hierarchy",
    "intensity",
    "kernels",
    "llm",
    "measured",
    "occupancy",
    "parallelism",
    "roofline",
    "sim",
    "specs",
    "systolic",
    "tiling",
]
