"""The warp-level kernel simulator: run a Numba CUDA kernel over a CUDA grid, count what memory does.

A kernel is Numba's CUDA Python (``calc.sim.lang`` has the language)::

    from numba import cuda
    import numba

    TILE = 32
    TILE_COLS = 33                                      # 32 + 1: the padded row

    @cuda.jit
    def transpose(A, B, n):
        tile = cuda.shared.array((TILE, TILE_COLS), numba.float32)
        x = cuda.blockIdx.x * TILE + cuda.threadIdx.x
        y = cuda.blockIdx.y * TILE + cuda.threadIdx.y
        tile[cuda.threadIdx.y, cuda.threadIdx.x] = A[y * n + x]
        cuda.syncthreads()
        x = cuda.blockIdx.y * TILE + cuda.threadIdx.x
        y = cuda.blockIdx.x * TILE + cuda.threadIdx.y
        B[y * n + x] = tile[cuda.threadIdx.x, cuda.threadIdx.y]

    kernel = compile_kernel(text)
    report = launch(kernel, grid=(2, 2), block=(32, 32), args=(A, B, 64))

Global arrays are ``Array(name, data_or_length, dtype)``. ``launch`` returns a ``Report``:
global requests, 32-byte sectors and 128-byte lines, bytes requested against
bytes moved, shared-memory wavefronts and bank conflicts, divergence, FLOPs,
and the HBM bytes behind the sectors, per kernel, per block, per source line
and per warp instruction.

The package, in the order it builds up (no module imports one after it):
``errors`` (every KernelError), ``counts`` (the record of warp instructions and
every count derived from it), ``memory`` (arrays, their checked and logged
accesses, the launch's state), ``races``, ``warp`` (the warp-at-a-time
executor), ``arith`` (the counted arithmetic), ``lang`` (the kernel language),
``thread`` (the per-thread executor), ``launch``, and ``kernels`` (the book's
canonical kernels, as Numba CUDA text).

Why this form
-------------
*A per-thread function* reads like the CUDA a reader will write later and like
the book's pseudocode; vectors of lanes per warp would be faster but turn every
``if`` into a mask. *Barriers are generator yields*: ``cuda.syncthreads()``
suspends the thread, the simulator runs every other thread of the block to the
same point, and only then resumes them, so ``__syncthreads`` is honoured without
threads or greenlets (neither exists in Pyodide). A kernel with no barrier is a
plain function and is simply called once per thread.

*Warp instructions are reconstructed, not interpreted in lock step.* Each
thread runs alone from one barrier to the next and logs every memory access
and arithmetic call once, as a site key and an element index; the site is the
kernel frame's bytecode offset (``f_lasti``) when the access happens, so two
loads on one line are two instructions, as in the machine code, and an access
inside a helper function counts at the line that calls the helper. The frame
is the thread's own (a generator's ``gi_frame``), so no ``sys._getframe`` is
needed per access. When the block reaches a barrier the logs are grouped: the
lanes of a warp whose k-th execution of one site coincide form one warp
instruction; lanes absent from it were inactive (a divergent branch). When
every lane of a warp ran the same sites in the same order (the common case)
the grouping is a list comparison and a ``zip``. All counts are functions over
that record of warp instructions (``Instr``, in ``calc.sim.counts``), never hooks
in the executor.

The price of a per-thread function is a Python call per counted access: about
0.3 µs each in CPython and twice that in Pyodide, so a 64×64×64 tiled matmul
(half a million shared loads) took about a second in the browser. So ``launch``
first tries *the same function a warp at a time* (``calc.sim.warp``): run once
per warp, with ``threadIdx.x`` holding the 32 lanes' numbers, each access logs
one warp instruction with every lane's index, and arithmetic runs lane by lane
in C. It is a speculation with an exact fallback: kernels whose code could
tell the difference never take it, and the moment the lanes would part (a
branch on the lane, a lane value where Python needs one number) or anything
goes wrong (every error and race above), the arrays are put back and the
launch runs per thread, as described here, so reports and errors are the
per-thread executor's. ``report.executor`` says which ran; uniform kernels
(copies, the transpose, the tiled matmul, the scores) run a warp at a time,
four to five times faster (``benchmarks/warpsim_bench.py``), and divergent ones
(Harris's reductions) per thread.

Running threads one after another gives the same values as lock step whenever
the kernel is free of races, and the simulator checks that it is, from the
record, at every barrier: two accesses to one element, at least one a write, by
two threads of a block between the same two barriers, or by two blocks at any
time, are a ``Race``, whichever order the simulator happened to run them in.
(Since Volta the lanes of a warp are not guaranteed to run in lock step either,
so "warp-synchronous" code without a barrier is a race on current hardware too.)

Semantics and their errors (all subclasses of ``KernelError``, each naming the
thread, the source line and, for memory, the array and index):

- ``OutOfBounds``: an index outside a global or shared array (per dimension).
- ``UninitializedRead``: shared memory starts poisoned, and so does a global
  array created without data; reading an element before any write is an error.
- ``Race``: see above. It is reported at the barrier that ends the interval
  (or before another error from the same interval, which it probably caused),
  naming both accesses' lines; within a block a pair from two warps is named
  before a pair inside one warp (the hazard a reader can picture: one warp
  running ahead into the next phase while another still reads the tile).
- ``BarrierError``: ``syncthreads()`` reached by only some threads of a block,
  or at different lines (undefined on hardware), or at different lines.
- ``StepLimit``: more than ``max_steps`` memory accesses and arithmetic calls
  in one launch (a runaway loop that makes neither is not seen here; the page
  running it needs its own time limit).
- ``KernelException``: any other Python exception raised by the kernel, with
  the thread and line where it happened.
- ``LaunchError``: a launch the device could not run (``calc.cuda.validate_launch``).
- ``KernelSyntaxError``: kernel text that does not compile (``compile_kernel``).

The memory model is ``calc.sim.memory``'s docstring.

FLOPs: ``+ - * /`` on floating-point values count 1, ``a * b + c`` counts 2 (one fused
instruction), ``max``/``min`` of floats, ``math.exp`` and ``math.sqrt`` count 1; integer
arithmetic counts nothing, so index arithmetic stays free, as it is integer work on the GPU
(``calc.sim.lang``).
"""

from .counts import (  # noqa: F401
    ATOM, FLOP, LD, ST, Counts, Instr, Report, Roofline, Traffic, bytes_requested, counts_of, l2_traffic, lines_of,
    phases, place, sectors_of, sum_counts, wavefronts_of,
)
from .errors import (  # noqa: F401
    BarrierError, KernelError, KernelException, KernelSyntaxError, LaunchError, OutOfBounds, Race, StepLimit,
    UninitializedRead,
)
from .memory import (  # noqa: F401
    DEFAULT_DEVICE, DEFAULT_MAX_STEPS, ELEMENT_BYTES, MAX_THREADS, POISON, Array, SharedArray, Vector,
)
from .lang import DTYPES, compile_kernel, with_constants  # noqa: F401
from .launch import launch  # noqa: F401
