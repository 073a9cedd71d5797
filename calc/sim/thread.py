"""A warp-level kernel simulator: run a Python kernel over a CUDA grid, count what memory does.

A kernel is a per-thread Python function, written the way CUDA and the book's
pseudocode write it::

    def transpose(A, B, n):
        tile = shared("tile", (32, 33))             # __shared__ float tile[32][33]
        x = blockIdx.x * 32 + threadIdx.x
        y = blockIdx.y * 32 + threadIdx.y
        tile[threadIdx.y, threadIdx.x] = A[y * n + x]
        yield syncthreads()                         # __syncthreads()
        x = blockIdx.y * 32 + threadIdx.x
        y = blockIdx.x * 32 + threadIdx.y
        B[y * n + x] = tile[threadIdx.x, threadIdx.y]

    report = launch(transpose, grid=(2, 2), block=(32, 32), args=(A, B, 64))

``blockIdx``, ``threadIdx``, ``blockDim`` and ``gridDim`` are this module's
objects, set to the running thread's values (a kernel written as text gets them
from ``compile_kernel``). Global arrays are ``Array(name, data_or_length,
dtype)``; shared ones come from ``shared(name, shape, dtype)``; ``add``, ``sub``,
``mul``, ``div``, ``fma``, ``fmax`` and ``exp`` are the counted arithmetic; ``atomic_add`` is
``atomicAdd``. ``launch`` returns a ``Report``:
global requests, 32-byte sectors and 128-byte lines, bytes requested against
bytes moved, shared-memory wavefronts and bank conflicts, divergence, FLOPs,
and the HBM bytes behind the sectors, per kernel, per block, per source line
and per warp instruction.

Why this form
-------------
*A per-thread function* reads like the CUDA a reader will write later and like
the book's pseudocode; vectors of lanes per warp would be faster but turn every
``if`` into a mask. *Barriers are generator yields*: ``yield syncthreads()``
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
that record of warp instructions (``Instr``, in ``calc.warpcount``), never hooks
in the executor.

The price of a per-thread function is a Python call per counted access: about
0.3 µs each in CPython and twice that in Pyodide, so a 64×64×64 tiled matmul
(half a million shared loads) took about a second in the browser. So ``launch``
first tries *the same function a warp at a time* (``calc.warpvec``): run once
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
  or at different lines (undefined on hardware), or written without ``yield``.
- ``StepLimit``: more than ``max_steps`` memory accesses and arithmetic calls
  in one launch (a runaway loop that makes neither is not seen here; the page
  running it needs its own time limit).
- ``KernelException``: any other Python exception raised by the kernel, with
  the thread and line where it happened.
- ``LaunchError``: a launch the device could not run (``calc.cuda.validate_launch``).
- ``KernelSyntaxError``: kernel text that does not compile (``compile_kernel``).

The memory model
----------------
Global arrays are allocated one after another at 256-byte-aligned addresses
(``cudaMalloc`` returns at least 256-byte alignment); a warp's global access
touches the 32-byte sectors and 128-byte lines covering every active lane's
bytes (CUDA C++ Best Practices Guide, coalescing). L1 is not modelled: every
sector a request touches is counted, as Nsight Compute's
``l1tex__t_sectors_pipe_lsu_mem_global_op_{ld,st}`` counts it. Shared arrays of
a block are laid out in declaration order, each aligned to 128 bytes; bank =
(byte address / 4) mod 32. A request is served in phases: one phase of 32
lanes for accesses of up to 4 bytes, two of 16 lanes for 8-byte accesses and
four of 8 lanes for 16-byte accesses; a phase takes as many wavefronts as its
busiest bank has distinct 4-byte words (lanes reading one word share a
broadcast). Bank conflicts are wavefronts beyond one per phase. The banks, the
4-byte words and the broadcast are the CUDA C++ Programming Guide's (shared memory,
compute capability 5.x and later); the guide describes no phases for 8- and 16-byte
accesses, so those are this model's assumption.

HBM bytes come from an L2 model: a fully associative LRU cache of 32-byte
sectors with the device's L2 capacity (``calc.specs``), cold at launch, write-back
and write-allocate without fetch (a store marks its sectors dirty; dirty
sectors are written back when evicted or at the end of the launch). A read
miss moves 32 bytes from HBM. This ignores set associativity, the A100's and
H100's split L2 partitions, and compression.

FLOPs: ``add``, ``sub``, ``mul``, ``div``, ``fmax`` and ``exp`` count 1, ``fma`` counts 2. Python's
own operators count nothing, so index arithmetic stays free, as it is integer
work on the GPU.
"""

from __future__ import annotations

import math
import sys
from typing import Any, Callable, Optional, Sequence

from . import specs
from .cuda import WARP_SIZE, Dim3, dim3, validate_launch
from .dtypes import size_bytes

_getframe = sys._getframe

#: the element types a kernel's arrays may have, and their size in bytes
#: (from ``calc.dtypes``; int32 is a storage type only, so it is added here)
ELEMENT_BYTES: dict[str, int] = {d: int(size_bytes(d)) for d in ("fp64", "fp32", "fp16", "bf16", "int8")}
ELEMENT_BYTES["int32"] = 4

DEFAULT_DEVICE = "a100-sxm-40gb"
DEFAULT_MAX_STEPS = 5_000_000
MAX_THREADS = 1 << 20
GLOBAL_ALIGN = 256
SHARED_ALIGN = 128

from .warpcount import (  # noqa: F401  (re-exported: the record and its counts are part of this API)
    ATOM, FLOP, LD, ST, Counts, Instr, Report, Roofline, Traffic, bytes_requested, counts_of, l2_traffic, lines_of,
    phases, sectors_of, sum_counts, wavefronts_of,
)


# ------------------------------------------------------------------ errors


class KernelError(Exception):
    """A kernel did something undefined or wrong. ``str()`` is the full message."""

    def __init__(self, message: str, *, block: Optional[Dim3] = None, thread: Optional[Dim3] = None,
                 line: Optional[int] = None, array: Optional[str] = None, index: Any = None):
        self.block, self.thread, self.line = block, thread, line
        self.array, self.index = array, index
        self.message = message
        where = []
        if line is not None:
            where.append(f"line {line}")
        if thread is not None:
            where.append(f"thread {_fmt3(thread)} of block {_fmt3(block)}")
        super().__init__(f"{', '.join(where)}: {message}" if where else message)


class LaunchError(KernelError, ValueError):
    """The launch itself is invalid (grid, block, shared memory, arguments)."""


class OutOfBounds(KernelError, IndexError):
    """An index outside a global or shared array."""


class UninitializedRead(KernelError):
    """A read of shared memory (or an empty global array) before anything was written there."""


class Race(KernelError):
    """Two threads touch one element with no barrier between them, at least one of them writing."""


class BarrierError(KernelError):
    """``syncthreads()`` in divergent code, at different lines, or without ``yield``."""


class StepLimit(KernelError):
    """The launch made more than ``max_steps`` accesses and arithmetic calls."""


class KernelException(KernelError):
    """Any other exception raised by kernel code; ``__cause__`` is the original."""


class KernelSyntaxError(KernelError):
    """Kernel source that does not compile (``compile_kernel``)."""


def _subscript(name: str, idx) -> str:
    """``A[3]``, ``As[0, 1]``: an element as the kernel writes it."""
    return f"{name}[{', '.join(map(str, idx)) if isinstance(idx, tuple) else idx}]"


def _fmt3(d) -> str:
    if d is None:
        return "?"
    return f"({d.x}, {d.y}, {d.z})"


# ------------------------------------------------------------------ built-in variables


class _Index:
    """A mutable x, y, z triple: ``threadIdx`` and friends, set per running thread."""

    __slots__ = ("x", "y", "z", "_name")

    def __init__(self, name: str):
        self._name = name
        self.x = self.y = self.z = 0

    def _set(self, d: Dim3) -> None:
        self.x, self.y, self.z = d.x, d.y, d.z

    def __repr__(self) -> str:
        return f"{self._name}(x={self.x}, y={self.y}, z={self.z})"


threadIdx = _Index("threadIdx")
blockIdx = _Index("blockIdx")
blockDim = _Index("blockDim")
gridDim = _Index("gridDim")
warpSize = WARP_SIZE


class _Poison:
    """The value of shared memory nobody has written yet."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<uninitialised>"


POISON = _Poison()


class _Barrier:
    __slots__ = ("line",)

    def __init__(self, line):
        self.line = line


# ------------------------------------------------------------------ per-launch state


class _State:
    """What the running thread's accesses need: its log, its race tags, the step budget."""

    __slots__ = ("keys", "idx", "frame", "kcode", "steps", "rids", "block", "thread", "shared",
                 "shared_top", "pending_barrier", "generator", "device", "vec", "live", "ftup", "failed")

    def __init__(self, max_steps: int):
        self.keys: list = []  # the running thread's log: site key (bytecode offset + rid << 20) ...
        self.idx: list = []   # ... and element index (FLOPs for arithmetic), one entry per event
        self.frame = None     # the running thread's kernel frame
        self.kcode = None
        self.steps = max_steps
        self.rids: list = [(None, FLOP, 1), (None, FLOP, 2)]
        self.block = self.thread = Dim3(0, 0, 0)
        self.shared: dict = {}
        self.shared_top = 0
        self.pending_barrier = None
        self.generator = False
        self.device = None
        self.vec = False      # a warp at a time (calc.warpvec): the logs are the warp's, one entry
        self.live = 1         # per warp instruction, its lanes' indices; steps count every lane
        self.ftup = ()
        self.failed = False

    def rid(self, array, kind, size) -> int:
        """A new access kind (array, ld/st/atom, bytes), as the high bits of a site key."""
        self.rids.append((array, kind, size))
        return len(self.rids) - 1 << _KEY_SHIFT


_KEY_SHIFT = 20  # a site key is the kernel's bytecode offset + (rid << 20)
_FMA_KEY = 1 << _KEY_SHIFT


def _find_frame(st: "_State"):
    """The running thread's kernel frame (a plain kernel's frame exists only once it runs)."""
    f = _getframe(2)
    while f is not None and f.f_code is not st.kcode:
        f = f.f_back
    if f is None:
        raise KernelError("warpsim lost track of the kernel's frame", block=st.block, thread=st.thread)
    st.frame = f
    return f


_ST: Optional[_State] = None


def _state() -> _State:
    if _ST is None:
        raise KernelError("this can only be called inside a kernel run by warpsim.launch")
    return _ST


def _step_limit(st: _State) -> StepLimit:
    return StepLimit(
        "the kernel ran past the step limit of the launch (memory accesses and arithmetic calls); "
        "is a loop missing its exit?", block=st.block, thread=st.thread, line=_kernel_line())


def _kernel_line(depth: int = 2) -> Optional[int]:
    """Line of the nearest frame outside this module."""
    f = _getframe(depth)
    while f is not None and f.f_code.co_filename == _THIS_FILE:
        f = f.f_back
    return f.f_lineno if f is not None else None


# ------------------------------------------------------------------ arrays


class Array:
    """An array in global or shared memory with an element type.

    ``Array("A", [1.0, 2.0, ...], "fp32")`` holds data; ``Array("C", 4096)``
    holds 4096 uninitialised elements (reading one before writing it is an
    error). ``shape`` makes it multi-dimensional (row-major, indexed
    ``A[i, j]``, or ``A[i][j]`` as in CUDA, a little slower); a global array is
    1-D by default, as a CUDA pointer is. ``A.data`` is the flat list of values,
    ``A.tolist()`` the values nested by shape.
    """

    space = "global"
    __slots__ = ("name", "dtype", "shape", "itemsize", "n", "data", "base", "_strides", "_s0", "_s1",
                 "_st", "_r", "_w", "_a", "_vecs", "_npoison", "_mkey")

    def __init__(self, name: str, data, dtype: str = "fp32", shape: Optional[Sequence[int]] = None):
        self._vecs: dict = {}
        if not isinstance(name, str) or not name:
            raise LaunchError(f"an array needs a name, got {name!r}")
        if dtype not in ELEMENT_BYTES:
            raise LaunchError(f"array {name}: unknown element type {dtype!r}; known: {', '.join(ELEMENT_BYTES)}")
        if isinstance(data, int) and not isinstance(data, bool):
            n = data
            values = [POISON] * n
        else:
            values = list(data)
            n = len(values)
        shape = tuple(shape) if shape is not None else (n,)
        if any(not isinstance(s, int) or s < 1 for s in shape) or math.prod(shape) != n:
            raise LaunchError(f"array {name}: shape {shape} does not hold {n} elements")
        self.name, self.dtype, self.shape = name, dtype, shape
        self.itemsize = ELEMENT_BYTES[dtype]
        self.n = n
        self.data = values
        self.base = 0
        self._strides = tuple(math.prod(shape[k + 1:]) for k in range(len(shape)))
        self._s0 = shape[0]
        self._s1 = shape[1] if len(shape) > 1 else 1
        if len(shape) == 2:
            self.__class__ = _TWO_D[type(self)]
        elif len(shape) > 2:
            self.__class__ = _N_D[type(self)]
        self._detach()

    # -- launch plumbing
    def _detach(self) -> None:
        self._st = None
        self._r = self._w = self._a = -1

    def _attach(self, st: _State, base: int) -> None:
        self._st = st
        self.base = base
        self._r = st.rid(self, LD, self.itemsize)
        self._w = st.rid(self, ST, self.itemsize)
        self._a = st.rid(self, ATOM, self.itemsize)

    @property
    def nbytes(self) -> int:
        return self.n * self.itemsize

    def __len__(self) -> int:
        return self.shape[0]

    def __repr__(self) -> str:
        return f"<{self.space} {self.dtype} array {self.name}{list(self.shape)}>"

    def tolist(self) -> list:
        """The values, nested by shape."""
        vals = self.data
        for s in reversed(self.shape[1:]):
            vals = [vals[i:i + s] for i in range(0, len(vals), s)]
        return list(vals)

    def vec(self, width: int) -> "Vector":
        """A view whose element j is the ``width`` elements from ``j·width``, moved by one
        ``width × itemsize``-byte access (CUDA's float2 / float4 loads and stores)."""
        views = self._vecs
        v = views.get(width)
        if v is None:
            v = views[width] = Vector(self, width)
        return v

    # -- index arithmetic (the slow, checking path)
    def _flat(self, index) -> int:
        """Flat element number of ``index``; OutOfBounds (per dimension) or KernelException."""
        idx = index if isinstance(index, tuple) else (index,)
        if len(idx) != len(self.shape):
            raise self._error(OutOfBounds, f"{self.space} array {self.name} has {len(self.shape)} "
                              f"dimension{'s' if len(self.shape) > 1 else ''}, indexed with {len(idx)}", index)
        flat = 0
        for i, s, st in zip(idx, self.shape, self._strides):
            if isinstance(i, bool) or not isinstance(i, int):
                raise self._error(KernelException, f"index {index!r} of {self.name} is not "
                                  f"{'an integer' if len(idx) == 1 else 'a tuple of integers'}", index)
            if not 0 <= i < s:
                raise self._oob(index)
            flat += i * st
        return flat

    def _unflat(self, flat: int):
        if len(self.shape) == 1:
            return flat
        out = []
        for st in self._strides:
            q, flat = divmod(flat, st)
            out.append(q)
        return tuple(out)

    def _error(self, cls, message, index):
        st = _ST
        return cls(message, block=st.block if st else None, thread=st.thread if st else None,
                   line=_kernel_line(3), array=self.name, index=index)

    def _oob(self, index):
        dims = " × ".join(str(s) for s in self.shape)
        return self._error(OutOfBounds, f"index {index!r} is outside {self.space} array {self.name} "
                           f"({dims} {self.dtype})", index)

    def _uninit(self, flat: int):
        idx = self._unflat(flat)
        name = _subscript(self.name, idx)
        return self._error(UninitializedRead, f"read of {self.space} {name} before any thread wrote it"
                           + (f" (shared memory starts uninitialised): if another thread writes {name}, a "
                              "yield syncthreads() must come between its write and this read"
                              if self.space == "shared" else ""), idx)

    # -- element access: the hot path, written out once per shape and space for speed. It checks
    # bounds and poison and logs the access; races are found later, from the record (_races).

    def __getitem__(self, i):
        try:
            if not 0 <= i < self.n:
                raise self._oob(i)
            v = self.data[i]
        except TypeError:
            raise self._bad_index(i) from None
        st = self._st
        if st is None:
            return v
        if v is POISON:
            raise self._uninit(i)
        f = st.frame or _find_frame(st)
        st.keys.append(f.f_lasti + self._r)
        st.idx.append(i)
        st.steps -= 1
        if st.steps <= 0:
            raise _step_limit(st)
        return v

    def __setitem__(self, i, value):
        if i.__class__ is not int:
            raise self._bad_index(i)
        if not 0 <= i < self.n:
            raise self._oob(i)
        st = self._st
        if st is not None:
            f = st.frame or _find_frame(st)
            st.keys.append(f.f_lasti + self._w)
            st.idx.append(i)
            st.steps -= 1
            if st.steps <= 0:
                raise _step_limit(st)
        self.data[i] = value

    def _bad_index(self, index):
        """The error for an index that is not an integer (or tuple of them) in range."""
        try:
            self._flat(index)
        except KernelError as e:
            return e
        return self._error(KernelException, f"index {index!r} of {self.name} is not an integer", index)

    def _load(self, i: int, depth: int):
        """A checked, logged read of flat element ``i`` for a caller ``depth`` frames up."""
        v = self.data[i]
        st = self._st
        if st is None:
            return v
        if v is POISON:
            raise self._uninit(i)
        f = st.frame or _find_frame(st)
        st.keys.append(f.f_lasti + self._r)
        st.idx.append(i)
        st.steps -= 1
        if st.steps <= 0:
            raise _step_limit(st)
        return v

    def _store(self, i: int, value, depth: int) -> None:
        st = self._st
        if st is not None:
            f = st.frame or _find_frame(st)
            st.keys.append(f.f_lasti + self._w)
            st.idx.append(i)
            st.steps -= 1
            if st.steps <= 0:
                raise _step_limit(st)
        self.data[i] = value

    def _atomic_add(self, index, value):
        i = self._flat(index)
        st = self._st
        old = self.data[i]
        if old is POISON:
            raise self._uninit(i)
        self.data[i] = old + value
        f = st.frame or _find_frame(st)
        st.keys.append(f.f_lasti + self._a)
        st.idx.append(i)
        st.steps -= 1
        if st.steps <= 0:
            raise _step_limit(st)
        return old


class _Array2D(Array):
    """A 2-D array: ``a[i, j]`` on the fast path, ``a[i][j]`` through a row view."""

    __slots__ = ()

    def _row(self, index):
        if index.__class__ is int and 0 <= index < self._s0:
            return _Row(self, index)
        raise self._bad_index(index)

    def __getitem__(self, index):
        try:
            i, j = index
            if 0 <= i < self._s0 and 0 <= j < self._s1:
                k = i * self._s1 + j
                v = self.data[k]
            else:
                raise self._oob(index)
        except TypeError:
            if index.__class__ is int:
                return self._row(index)
            raise self._bad_index(index) from None
        except ValueError:
            raise self._bad_index(index) from None
        st = self._st
        if st is None:
            return v
        if v is POISON:
            raise self._uninit(k)
        f = st.frame or _find_frame(st)
        st.keys.append(f.f_lasti + self._r)
        st.idx.append(k)
        st.steps -= 1
        if st.steps <= 0:
            raise _step_limit(st)
        return v

    def __setitem__(self, index, value):
        try:
            i, j = index
            if 0 <= i < self._s0 and 0 <= j < self._s1 and i.__class__ is int and j.__class__ is int:
                k = i * self._s1 + j
            else:
                k = self._flat(index)
        except (TypeError, ValueError):
            raise self._bad_index(index) from None
        self._store(k, value, 2)


class _ArrayND(Array):
    """Three or more dimensions: indexed with one tuple."""

    __slots__ = ()

    def __getitem__(self, index):
        return self._load(self._flat(index), 2)

    def __setitem__(self, index, value):
        self._store(self._flat(index), value, 2)


class SharedArray(Array):
    """A block's ``__shared__`` array, made by ``shared()``: uninitialised until written.

    Only the block's own threads can see it, so only they can race on it."""

    space = "shared"
    __slots__ = ()

    def __init__(self, name, shape, dtype="fp32"):
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        super().__init__(name, math.prod(shape), dtype, shape)

    def __getitem__(self, i):
        try:
            if not 0 <= i < self.n:
                raise self._oob(i)
            v = self.data[i]
        except TypeError:
            raise self._bad_index(i) from None
        if v is POISON:
            raise self._uninit(i)
        st = self._st
        f = st.frame or _find_frame(st)
        st.keys.append(f.f_lasti + self._r)
        st.idx.append(i)
        st.steps -= 1
        if st.steps <= 0:
            raise _step_limit(st)
        return v


class _Shared2D(SharedArray, _Array2D):
    __slots__ = ()

    def __getitem__(self, index):
        try:
            i, j = index
            if 0 <= i < self._s0 and 0 <= j < self._s1:
                k = i * self._s1 + j
                v = self.data[k]
            else:
                raise self._oob(index)
        except TypeError:
            if index.__class__ is int:
                return self._row(index)
            raise self._bad_index(index) from None
        except ValueError:
            raise self._bad_index(index) from None
        if v is POISON:
            raise self._uninit(k)
        st = self._st
        f = st.frame or _find_frame(st)
        st.keys.append(f.f_lasti + self._r)
        st.idx.append(k)
        st.steps -= 1
        if st.steps <= 0:
            raise _step_limit(st)
        return v

    __setitem__ = _Array2D.__setitem__


class _SharedND(SharedArray, _ArrayND):
    __slots__ = ()

    __getitem__ = _ArrayND.__getitem__
    __setitem__ = _ArrayND.__setitem__


_TWO_D = {Array: _Array2D, SharedArray: _Shared2D, _Array2D: _Array2D, _Shared2D: _Shared2D}
_N_D = {Array: _ArrayND, SharedArray: _SharedND, _ArrayND: _ArrayND, _SharedND: _SharedND}


class _Row:
    """``tile[i]`` of a 2-D array, so that ``tile[i][j]`` works as in CUDA."""

    __slots__ = ("a", "i")

    def __init__(self, a, i):
        self.a, self.i = a, i

    def __getitem__(self, j):
        a = self.a
        if j.__class__ is int and 0 <= j < a._s1:
            return a._load(self.i * a._s1 + j, 3)
        return a._load(a._flat((self.i, j)), 3)

    def __setitem__(self, j, value):
        a = self.a
        if j.__class__ is int and 0 <= j < a._s1:
            a._store(self.i * a._s1 + j, value, 3)
        else:
            a._store(a._flat((self.i, j)), value, 3)


class Vector:
    """``A.vec(w)``: element j is the tuple ``A[j·w : j·w + w]``, one access of w × itemsize bytes."""

    def __init__(self, array: Array, width: int):
        if len(array.shape) != 1:
            raise LaunchError(f"{array.name}.vec(): only 1-D arrays have vector views")
        if width * array.itemsize not in (8, 16):
            raise LaunchError(f"{array.name}.vec({width}): a vector access moves 8 or 16 bytes, "
                              f"not {width} × {array.itemsize} ({array.dtype})")
        self.array, self.width = array, width
        self.name = f"{array.name}.vec({width})"
        self._rids: tuple = (None, -1, -1)

    def __len__(self) -> int:
        return self.array.n // self.width

    def _rid(self, kind) -> int:
        a = self.array
        st = a._st
        if self._rids[0] is not st:
            size = a.itemsize * self.width
            self._rids = (st, st.rid(a, LD, size), st.rid(a, ST, size))
        return self._rids[1] if kind == LD else self._rids[2]

    def _check(self, j) -> None:
        a, w = self.array, self.width
        if isinstance(j, bool) or not isinstance(j, int):
            raise a._error(KernelException, f"index {j!r} of {self.name} is not an integer", j)
        if not 0 <= j < a.n // w:
            raise a._error(OutOfBounds, f"index {j!r} is outside {a.space} array {self.name} "
                           f"({a.n // w} vectors of {w} {a.dtype})", j)

    def __getitem__(self, j):
        self._check(j)
        a, w = self.array, self.width
        st = a._st
        out = []
        for i in range(j * w, j * w + w):
            v = a.data[i]
            if st is not None:
                if v is POISON:
                    raise a._uninit(i)
            out.append(v)
        if st is not None:
            f = st.frame or _find_frame(st)
            st.keys.append(f.f_lasti + self._rid(LD))
            st.idx.append(j * w)
            st.steps -= 1
            if st.steps <= 0:
                raise _step_limit(st)
        return tuple(out)

    def __setitem__(self, j, values):
        self._check(j)
        a, w = self.array, self.width
        values = tuple(values)
        if len(values) != w:
            raise a._error(KernelException, f"{self.name}[{j}] takes {w} values, got {len(values)}", j)
        st = a._st
        if st is not None:
            f = st.frame or _find_frame(st)
            st.keys.append(f.f_lasti + self._rid(ST))
            st.idx.append(j * w)
            st.steps -= 1
            if st.steps <= 0:
                raise _step_limit(st)
        a.data[j * w:j * w + w] = values


# ------------------------------------------------------------------ what kernels call


def shared(name: str, shape, dtype: str = "fp32") -> SharedArray:
    """This block's ``__shared__`` array ``name``: made (poisoned) by the first thread that asks,
    the same object for every other thread of the block."""
    st = _state()
    arr = st.shared.get(name)
    shape_t = (shape,) if isinstance(shape, int) else tuple(shape)
    if arr is not None:
        if arr.shape != shape_t or arr.dtype != dtype:
            raise KernelError(f"shared array {name} declared as {list(shape_t)} {dtype} here but "
                              f"{list(arr.shape)} {arr.dtype} by another thread", block=st.block,
                              thread=st.thread, line=_kernel_line())
        return arr
    if dtype not in ELEMENT_BYTES:
        raise KernelError(f"shared array {name}: unknown element type {dtype!r}; known: {', '.join(ELEMENT_BYTES)}",
                          block=st.block, thread=st.thread, line=_kernel_line())
    arr = SharedArray(name, shape_t, dtype)
    base = -(-st.shared_top // SHARED_ALIGN) * SHARED_ALIGN
    limit = st.device.limits.smem_per_block_optin_bytes
    if base + arr.nbytes > limit:
        raise KernelError(f"shared array {name} ({arr.nbytes:,} bytes) takes the block to "
                          f"{base + arr.nbytes:,} bytes of shared memory, more than the {limit:,} a block may "
                          f"have on the {st.device.label}", block=st.block, thread=st.thread, line=_kernel_line())
    st.shared_top = base + arr.nbytes
    arr._attach(st, base)
    if st.vec:
        warpvec.to_warp(arr)
    st.shared[name] = arr
    return arr


def syncthreads() -> _Barrier:
    """``__syncthreads()``: write it as ``yield syncthreads()``; every thread of the block
    must reach the same one."""
    st = _state()
    line = _kernel_line()
    if not st.generator:
        raise BarrierError("syncthreads() must be written `yield syncthreads()` (the kernel has no yield, "
                           "so the barrier would be skipped)", block=st.block, thread=st.thread, line=line)
    if st.pending_barrier is not None:
        raise _unyielded(st)
    b = _Barrier(line)
    st.pending_barrier = b
    return b


def _flop(n: int) -> None:
    st = _ST
    if st is not None:
        if st.vec:
            return _log_flop(st, n)
        f = st.frame or _find_frame(st)
        st.keys.append(f.f_lasti + (n - 1 << _KEY_SHIFT))
        st.idx.append(n)
        st.steps -= 1
        if st.steps <= 0:
            raise _step_limit(st)


def _log_flop(st: _State, n: int) -> None:
    """A warp's arithmetic instruction of ``n`` FLOPs per lane (calc.warpvec)."""
    f = st.frame or _find_frame(st)
    st.keys.append(f.f_lasti + (n - 1 << _KEY_SHIFT))
    st.idx.append(st.ftup[n - 1])
    st.steps -= st.live
    if st.steps <= 0:
        raise warpvec._fail()


def add(a, b):
    """a + b, one FLOP."""
    _flop(1)
    return a + b


def sub(a, b):
    """a − b, one FLOP."""
    _flop(1)
    return a - b


def mul(a, b):
    """a · b, one FLOP."""
    _flop(1)
    return a * b


def div(a, b):
    """a / b, one FLOP (the book counts a softmax's division as one operation)."""
    _flop(1)
    return a / b


def fma(a, b, c):
    """a · b + c, two FLOPs (one fused instruction)."""
    st = _ST
    if st is not None:
        if st.vec:
            return warpvec.fma(st, a, b, c)
        f = st.frame or _find_frame(st)
        st.keys.append(f.f_lasti + _FMA_KEY)
        st.idx.append(2)
        st.steps -= 1
        if st.steps <= 0:
            raise _step_limit(st)
    return a * b + c


def fmax(a, b):
    """max(a, b), one FLOP (CUDA's fmaxf)."""
    st = _ST
    if st is not None and st.vec:
        return warpvec.fmax(st, a, b)
    _flop(1)
    return a if a >= b else b


def exp(x):
    """e^x, one FLOP (the book counts a softmax's exponential as one operation)."""
    st = _ST
    if st is not None and st.vec:
        return warpvec.exp(st, x)
    _flop(1)
    return math.exp(x)


def atomic_add(array: Array, index, value):
    """``atomicAdd(&array[index], value)``: adds and returns the old value; atomics never race."""
    st = _state()
    if not isinstance(array, Array):
        raise KernelError("atomic_add() takes an array, an index and a value", block=st.block, thread=st.thread,
                          line=_kernel_line())
    return array._atomic_add(index, value)


# ------------------------------------------------------------------ the launch

def _thread_of(tid: int, bd: Dim3) -> Dim3:
    return Dim3(tid % bd.x, (tid // bd.x) % bd.y, tid // (bd.x * bd.y))


class _Races:
    """Races, found from the record at the end of each barrier interval (order-free: the order in
    which the simulator happened to run the threads does not matter).

    Two accesses to one element race when at least one is a (non-atomic) write, they come from
    different threads, and either both fall between the same two barriers of one block, or they
    come from different blocks (which no barrier orders). Across blocks only global memory is
    shared, so the launch keeps, per global array and element, the first block and thread to write
    it, the first to read it, and the first to read it from another block than that: a write then
    races with a read from another block whichever block read first.

    A message names both accesses' lines. Within a block it prefers a pair from two warps (the
    pair a reader can picture: one warp runs ahead of another) over a pair within one warp."""

    def __init__(self, block_dim: Dim3, blocks: list):
        self.bd, self.blocks = block_dim, blocks
        self.first_write: dict = {}  # array -> {element: (block number, thread number, line)}
        self.first_read: dict = {}
        self.other_read: dict = {}   # array -> {element: the first read from a block not first_read's}

    def error(self, ins: Instr, tid: int, x: int, other_tid: int, other_block: Optional[int],
              what: str, verb: str, other_line: Optional[int]) -> Race:
        arr = ins.array
        idx = arr._unflat(x)
        other = _fmt3(_thread_of(other_tid, self.bd))
        on = f" on line {other_line}" if other_line is not None else ""
        if other_block is None:
            warp = "its own warp" if other_tid // WARP_SIZE == tid // WARP_SIZE else "another warp"
            who = (f"thread {other} of this block ({warp}) {verb}{on} between the same two syncthreads() "
                   "(threads run in no set order)" + (": a yield syncthreads() must come between the write and the "
                                                       "read" if what == "read of" else ""))
        else:
            who = (f"thread {other} of block {_fmt3(self.blocks[other_block])} {verb}{on} in the same launch "
                   "(blocks run in no set order)")
        return Race(f"{what} {arr.space} {_subscript(arr.name, idx)}, which {who}", block=self.blocks[ins.block],
                    thread=_thread_of(tid, self.bd), line=ins.line, array=arr.name, index=idx)

    @staticmethod
    def _line(instrs: list, kind: str, tid: int, arr, x: int) -> Optional[int]:
        """The line of thread ``tid``'s first ``kind`` access to element ``x`` of ``arr`` among ``instrs``."""
        for ins in instrs:
            if ins.kind == kind and ins.array is arr and ins.warp == tid // WARP_SIZE:
                span = ins.size // ins.array.itemsize
                for lane, e in zip(ins.lanes, ins.index):
                    if lane == tid % WARP_SIZE and e <= x < e + span:
                        return ins.line
        return None

    def check(self, instrs: list) -> None:
        """Raise ``Race`` for the first race among one interval's instructions (one block)."""
        writes: dict = {}  # array -> {element: thread}, this interval
        for ins in instrs:
            if ins.kind != ST:
                continue
            d = writes.setdefault(ins.array, {})
            span = ins.size // ins.array.itemsize
            base = ins.warp * WARP_SIZE
            for lane, e in zip(ins.lanes, ins.index):
                tid = base + lane
                for x in range(e, e + span):
                    prev = d.get(x)
                    if prev is None:
                        d[x] = tid
                    elif prev != tid:
                        raise self.error(ins, tid, x, prev, None, "write to", "writes", self._line(instrs, ST, prev, ins.array, x))
        if writes:
            within = None  # the first race inside one warp, reported if no pair spans two warps
            for ins in instrs:
                if ins.kind != LD:
                    continue
                d = writes.get(ins.array)
                if not d:
                    continue
                span = ins.size // ins.array.itemsize
                elems = set(ins.index) if span == 1 else {x for e in ins.index for x in range(e, e + span)}
                if not d.keys() & elems:
                    continue
                base = ins.warp * WARP_SIZE
                for lane, e in zip(ins.lanes, ins.index):
                    for x in range(e, e + span):
                        w = d.get(x)
                        if w is not None and w != base + lane:
                            if w // WARP_SIZE != ins.warp:
                                raise self.error(ins, base + lane, x, w, None, "read of", "writes",
                                                 self._line(instrs, ST, w, ins.array, x))
                            if within is None:
                                within = (ins, base + lane, x, w)
            if within is not None:
                ins, tid, x, w = within
                raise self.error(ins, tid, x, w, None, "read of", "writes", self._line(instrs, ST, w, ins.array, x))
        for ins in instrs:
            arr = ins.array
            if arr is None or arr.space != "global" or ins.kind == ATOM:
                continue
            span = ins.size // arr.itemsize
            base, b = ins.warp * WARP_SIZE, ins.block
            load = ins.kind == LD
            if load:
                mine, theirs = self.first_read.setdefault(arr, {}), self.first_write.get(arr)
                others = self.other_read.setdefault(arr, {})
            else:
                mine, theirs = self.first_write.setdefault(arr, {}), self.first_read.get(arr)
                others = self.other_read.get(arr)
            for lane, e in zip(ins.lanes, ins.index):
                for x in range(e, e + span):
                    if theirs:
                        o = theirs.get(x)
                        if o is not None and o[0] != b:
                            raise self.error(ins, base + lane, x, o[1], o[0], "read of" if load else "write to",
                                             "writes" if load else "reads", o[2])
                        if not load and others:
                            o = others.get(x)   # a read from another block than the first reader's
                            if o is not None and o[0] != b:
                                raise self.error(ins, base + lane, x, o[1], o[0], "write to", "reads", o[2])
                    o = mine.setdefault(x, (b, base + lane, ins.line))
                    if o[0] != b:
                        if not load:
                            raise self.error(ins, base + lane, x, o[1], o[0], "write to", "writes", o[2])
                        others.setdefault(x, (b, base + lane, ins.line))


_CACHE = 0  # the opcode of an inline cache entry (CPython 3.11 to 3.14)


class _Lines:
    """Which instruction, and which source line, a logged bytecode offset belongs to.

    ``f_lasti`` of a calling frame is not always the start of the calling instruction:
    CPython's specialising interpreter may leave it on the instruction's inline
    cache entries, so one site can show two offsets (before and after it is
    specialised). ``co_code`` marks each cache entry with the CACHE opcode, so an
    offset belongs to the last non-cache code unit at or before it. (The book's
    browser runtime ships bytecode without column tables, so source columns
    cannot tell two instructions on one line apart; offsets can.)"""

    def __init__(self):
        self.sites: dict = {}

    def canon(self, code) -> list:
        m = self.sites.get(code)
        if m is None:
            lines: dict = {}
            for start, end, line in code.co_lines():
                for off in range(start, end, 2):
                    lines[off] = line if line is not None else code.co_firstlineno
            raw = code.co_code
            m, start = [], 0
            for off in range(0, len(raw), 2):
                if raw[off] != _CACHE:
                    start = off
                m.append((lines.get(start, code.co_firstlineno), start))
            self.sites[code] = m
        return m

    def site(self, code, lasti: int) -> tuple:
        """(line, instruction offset) of the instruction at or before offset ``lasti``."""
        m = self.canon(code)
        k = lasti // 2
        return m[k] if 0 <= k < len(m) else (code.co_firstlineno, lasti)


def _source_of(kernel) -> dict:
    """``{line: text}`` of a kernel written as text (``compile_kernel``), else None: the lines of a
    kernel in a file are read when a table asks for them."""
    given = getattr(kernel, "__warpsim_source__", None)
    return dict(given) if given is not None else None


def _group(st: _State, keys: list, idxs: list, block: int, warp: int, epoch: int, lines: _Lines,
           out: list) -> None:
    """Turn one warp's per-lane logs of one barrier interval into warp instructions.

    ``keys[lane]`` lists the lane's site keys (bytecode offset + rid << 20) in
    program order, ``idxs[lane]`` the matching element indices. Lanes whose k-th
    execution of one site (instruction, array and access kind) coincide form one
    warp instruction; the lanes absent from it were inactive. When every live
    lane logged the same keys (the common case), the instructions are the
    columns of the logs."""
    live = len(keys)
    code, rids = st.kcode, st.rids
    present = [lane for lane in range(live) if keys[lane]]
    if not present:
        return
    k0 = keys[present[0]]
    if len(present) == live and all(keys[lane] == k0 for lane in present):
        _emit(code, k0, tuple(present), zip(*idxs), live, rids, block, warp, epoch, lines, out)
        return
    # The slow path: canonical sites (see _Lines), then group by (site, k-th execution).
    canon = {}
    for lane in present:
        ck = []
        for key in keys[lane]:
            c = canon.get(key)
            if c is None:
                c = canon[key] = (lines.site(code, key & _OFFSET_MASK), key >> _KEY_SHIFT)
            ck.append(c)
        keys[lane] = ck
    k0 = keys[present[0]]
    if len(present) == live and all(keys[lane] == k0 for lane in present):
        _emit(code, k0, tuple(present), zip(*idxs), live, rids, block, warp, epoch, lines, out)
        return
    groups: dict = {}
    for lane in present:
        seen: dict = {}
        for c, i in zip(keys[lane], idxs[lane]):
            n = seen.get(c, 0)
            seen[c] = n + 1
            g = groups.get((c, n))
            if g is None:
                g = groups[(c, n)] = ([], [])
            g[0].append(lane)
            g[1].append(i)
    for ((site, rid), _), (ls, ix) in groups.items():
        arr, kind, size = rids[rid]
        out.append(Instr(block, warp, epoch, site[0], kind, arr,
                         arr.base if arr is not None else 0, size, tuple(ls), tuple(ix), live, (code, site)))


_OFFSET_MASK = (1 << _KEY_SHIFT) - 1


def _emit(code, k0, lane_ids, columns, live, rids, block, warp, epoch, lines, out) -> None:
    """Warp instructions from lock-step logs: one per key of ``k0``, its lanes' indices a column."""
    for key, ix in zip(k0, columns):
        if key.__class__ is int:
            site, rid = lines.site(code, key & _OFFSET_MASK), key >> _KEY_SHIFT
        else:
            site, rid = key
        arr, kind, size = rids[rid]
        out.append(Instr(block, warp, epoch, site[0], kind, arr,
                         arr.base if arr is not None else 0, size, lane_ids, ix, live, (code, site)))


def _race_first(st, keys, idxs, nwarps, bnum, epoch, lines, races, err) -> None:
    """Before reporting ``err``, look for a race in what the block did since its last barrier:
    a race is usually the cause of what went wrong next."""
    if isinstance(err, StepLimit):
        return
    partial: list = []
    nt = len(keys)
    for w in range(nwarps):
        lo, hi = w * WARP_SIZE, min(nt, (w + 1) * WARP_SIZE)
        _group(st, keys[lo:hi], idxs[lo:hi], bnum, w, epoch, lines, partial)
    try:
        races.check(partial)
    except Race as race:
        raise race from err


def _frame_line(gen) -> Optional[int]:
    f = gen.gi_frame
    while f is not None and getattr(gen, "gi_yieldfrom", None) is not None:
        gen = gen.gi_yieldfrom
        f = getattr(gen, "gi_frame", None) or f
    return f.f_lineno if f is not None else None


def _wrap(exc: BaseException, st: _State) -> KernelError:
    """A Python exception from kernel code as a KernelException naming thread and line."""
    tb, line = exc.__traceback__, None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename != _THIS_FILE:
            line = tb.tb_lineno
        tb = tb.tb_next
    err = KernelException(f"{type(exc).__name__}: {exc}", block=st.block, thread=st.thread, line=line)
    err.__cause__ = exc
    return err


def launch(kernel: Callable, grid, block, args: Sequence = (), *, device=DEFAULT_DEVICE,
           max_steps: int = DEFAULT_MAX_STEPS, l2_bytes: Optional[int] = None, vector: bool = True) -> Report:
    """Run ``kernel(*args)`` for every thread of ``<<<grid, block>>>`` and report what it moved.

    ``grid`` and ``block`` are ints, 1-3 tuples or ``Dim3``; ``args`` are passed to
    every thread (``Array`` objects are global memory, anything else is a value).
    ``device`` (a ``calc.specs`` name or Device) sets the launch limits and the L2
    capacity; ``l2_bytes`` overrides that capacity (0: no cache, every sector goes to
    HBM). Raises a ``KernelError`` subclass on the first error.

    ``vector``: first try running a warp's lanes as one (``calc.warpvec``: the same report,
    several times faster, or it hands the launch back); False runs every thread alone.
    ``report.executor`` says which ran ("warp" or "thread").
    """
    global _ST
    if _ST is not None:
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
    arrays = [a for a in args if isinstance(a, Array)]
    if len({id(a) for a in arrays}) != len({a.name for a in arrays}):
        raise LaunchError("two different arrays of a launch share a name: "
                          + ", ".join(sorted(a.name for a in arrays)))
    is_gen = _is_generator_function(kernel)
    if l2_bytes is None and not dev.has("l2_bytes"):
        raise LaunchError(f"calc.specs has no L2 size for the {dev.label}; pass l2_bytes= to model one")
    l2 = int(dev.value("l2_bytes")) if l2_bytes is None else int(l2_bytes)
    if vector:
        report = warpvec.run(kernel, g, b, args, dev, max_steps, l2, arrays)
        if report is not None:
            report.executor = "warp"
            return report
    st = _State(max_steps)
    st.device = dev
    st.generator = is_gen
    st.kcode = kernel.__code__
    top = 0
    for a in dict.fromkeys(arrays):
        a._attach(st, top)
        top = -(-(top + a.nbytes) // GLOBAL_ALIGN) * GLOBAL_ALIGN
    nt = b.count
    threads = list(b.indices())
    blocks = list(g.indices())
    record: list = []
    lines = _Lines()
    races = _Races(b, blocks)
    blockDim._set(b)
    gridDim._set(g)
    nwarps = -(-nt // WARP_SIZE)
    interval = 0
    _ST = st
    try:
        for bnum, bidx in enumerate(blocks):
            blockIdx._set(bidx)
            st.block = bidx
            st.shared = {}
            st.shared_top = 0
            keys = [[] for _ in range(nt)]
            idxs = [[] for _ in range(nt)]
            gens: list = [None] * nt
            epoch = 0
            running = list(range(nt))
            while True:
                waiting: dict = {}
                finished = []
                for tid in running:
                    t = threads[tid]
                    threadIdx._set(t)
                    st.thread = t
                    st.keys = keys[tid]
                    st.idx = idxs[tid]
                    try:
                        if epoch == 0:
                            st.frame = None
                            r = kernel(*args)
                            if is_gen:
                                gens[tid] = r
                                st.frame = r.gi_frame
                                y = next(r)
                            else:
                                finished.append(tid)
                                continue
                        else:
                            gen = gens[tid]
                            st.frame = gen.gi_frame
                            y = next(gen)
                    except StopIteration:
                        finished.append(tid)
                        if st.pending_barrier is not None:
                            raise _unyielded(st)
                        continue
                    except Exception as e:  # a KernelError, or the reader's own bug
                        err = e if isinstance(e, KernelError) else _wrap(e, st)
                        if st.pending_barrier is not None:
                            # syncthreads() was called and the thread ran on: the missing yield is
                            # the cause (the error after it, often an uninitialised read, a symptom)
                            raise _unyielded(st) from err
                        _race_first(st, keys, idxs, nwarps, bnum, epoch, lines, races, err)
                        if err is e:
                            raise
                        raise err from e
                    if not isinstance(y, _Barrier) or y is not st.pending_barrier:
                        if st.pending_barrier is not None and not isinstance(y, _Barrier):
                            raise _unyielded(st)
                        raise BarrierError(f"a kernel may only yield syncthreads(), got {y!r}",
                                           block=bidx, thread=t, line=_frame_line(gens[tid]))
                    st.pending_barrier = None
                    waiting.setdefault(y.line, []).append(tid)
                start = len(record)
                for w in range(nwarps):
                    lo, hi = w * WARP_SIZE, min(nt, (w + 1) * WARP_SIZE)
                    _group(st, keys[lo:hi], idxs[lo:hi], bnum, w, epoch, lines, record)
                    for t in range(lo, hi):
                        keys[t].clear()
                        idxs[t].clear()
                races.check(record[start:])
                interval += 1
                if not waiting:
                    break
                if finished or len(waiting) > 1:
                    raise _divergent_barrier(bidx, threads, waiting, finished)
                running = next(iter(waiting.values()))
                epoch += 1
    finally:
        _ST = None
        for a in arrays:
            a._detach()
    report = Report(kernel, g, b, dev, record, _source_of(kernel), l2, {a.name: a for a in arrays})
    report.executor = "thread"
    return report


_CO_GENERATOR = 0x20  # code flag of a generator function (Python's inspect.CO_GENERATOR)


def _is_generator_function(f) -> bool:
    return bool(f.__code__.co_flags & _CO_GENERATOR)


def _unyielded(st: _State) -> BarrierError:
    return BarrierError("syncthreads() must be written `yield syncthreads()`; without yield the "
                        "barrier is skipped", block=st.block, thread=st.thread, line=st.pending_barrier.line)


def _span(tids: list, threads: list) -> str:
    t0, t1 = threads[tids[0]], threads[tids[-1]]
    n = len(tids)
    return f"{n} thread{'s' if n != 1 else ''} ({_fmt3(t0)}" + (f" to {_fmt3(t1)})" if n > 1 else ")")


def _divergent_barrier(bidx, threads, waiting: dict, finished: list) -> BarrierError:
    parts = [f"{_span(tids, threads)} {'wait' if len(tids) > 1 else 'waits'} at the syncthreads() on line {line}"
             for line, tids in waiting.items()]
    if finished:
        parts.append(f"{_span(finished, threads)} finished without reaching it")
    first_line = next(iter(waiting))
    return BarrierError("syncthreads() reached by only some threads of the block (a barrier in divergent code "
                        "is undefined on the GPU): " + "; ".join(parts) +
                        ". Keep every thread on the path to each syncthreads(): guard the work, not the barrier.",
                        block=bidx, line=first_line)


# ------------------------------------------------------------------ kernels from text

#: the names a kernel may use without importing them (what ``compile_kernel`` provides)
KERNEL_NAMES = ("blockIdx", "threadIdx", "blockDim", "gridDim", "warpSize", "shared", "syncthreads",
                "add", "sub", "mul", "div", "fma", "fmax", "exp", "atomic_add")


def kernel_globals() -> dict:
    """A fresh namespace holding ``KERNEL_NAMES`` and ``math``, for kernels written as text."""
    g = globals()
    ns = {name: g[name] for name in KERNEL_NAMES}
    ns["math"] = math
    ns["__name__"] = "__kernel__"
    return ns


def compile_kernel(source: str, name: Optional[str] = None, filename: str = "<kernel>") -> Callable:
    """The kernel function defined in ``source`` (``name``, or the first function defined).

    Line numbers in errors and reports are the source's own, from 1. A syntax
    error raises ``KernelSyntaxError`` with its line; an error while defining the
    function raises ``KernelException``.
    """
    try:
        code = compile(source, filename, "exec")
    except SyntaxError as e:
        raise KernelSyntaxError(f"{e.msg}", line=e.lineno) from None
    ns = kernel_globals()
    try:
        exec(code, ns)
    except Exception as e:
        line = None
        tb = e.__traceback__
        while tb is not None:
            if tb.tb_frame.f_code.co_filename == filename:
                line = tb.tb_lineno
            tb = tb.tb_next
        raise KernelException(f"{type(e).__name__}: {e}", line=line) from e
    funcs = [v for v in ns.values() if isinstance(v, type(compile_kernel)) and v.__code__.co_filename == filename]
    if name is not None:
        fn = ns.get(name)
        if fn is None or not callable(fn):
            known = ", ".join(f.__name__ for f in funcs) or "none"
            raise KernelSyntaxError(f"no function {name!r} is defined (defined: {known})")
    elif funcs:
        fn = min(funcs, key=lambda f: f.__code__.co_firstlineno)
    else:
        raise KernelSyntaxError("the source defines no function; write `def kernel(...):`")
    fn.__warpsim_source__ = {k + 1: text for k, text in enumerate(source.splitlines())}
    return fn


# This module's file name as its bytecode records it (not ``__file__``: the browser runtime loads
# precompiled bytecode from a zip, where the two differ); frames from it are the simulator's own.
_THIS_FILE = _kernel_line.__code__.co_filename

from . import warpvec  # noqa: E402  (the warp-at-a-time fast path; it builds on this module's names)
