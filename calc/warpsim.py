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
dtype)``; shared ones come from ``shared(name, shape, dtype)``; ``add``, ``mul``,
``fma``, ``fmax`` and ``exp`` are the counted arithmetic; ``atomic_add`` is
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
that record of warp instructions (``Instr``), never hooks in the executor.

Running threads one after another gives the same values as lock step whenever
the kernel is free of races, and the simulator checks that it is: a read or
write of an element that another thread of the same block wrote since the last
barrier, or that another block wrote during the launch, is a ``Race``. (Since
Volta the lanes of a warp are not guaranteed to run in lock step either, so
"warp-synchronous" code without a barrier is a race on current hardware too.)

Semantics and their errors (all subclasses of ``KernelError``, each naming the
thread, the source line and, for memory, the array and index):

- ``OutOfBounds``: an index outside a global or shared array (per dimension).
- ``UninitializedRead``: shared memory starts poisoned, and so does a global
  array created without data; reading an element before any write is an error.
- ``Race``: see above (a write after another thread's read in the same
  interval is caught when that read was the element's most recent one).
- ``BarrierError``: ``syncthreads()`` reached by only some threads of a block,
  or at different lines (undefined on hardware), or written without ``yield``.
- ``StepLimit``: more than ``max_steps`` memory accesses and arithmetic calls
  in one launch (a runaway loop that makes neither is not seen here; the page
  running it needs its own time limit).
- ``KernelException``: any other Python exception raised by the kernel, with
  the thread and line where it happened.
- ``LaunchError``: a launch the device could not run (``calc.cuda.validate_launch``).

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
broadcast). Bank conflicts are wavefronts beyond one per phase (CUDA C++
Programming Guide, shared memory, compute capability 5.x and later).

HBM bytes come from an L2 model: a fully associative LRU cache of 32-byte
sectors with the device's L2 capacity (``calc.specs``), cold at launch, write-back
and write-allocate without fetch (a store marks its sectors dirty; dirty
sectors are written back when evicted or at the end of the launch). A read
miss moves 32 bytes from HBM. This ignores set associativity, the A100's and
H100's split L2 partitions, and compression.

FLOPs: ``add``, ``mul``, ``fmax`` and ``exp`` count 1, ``fma`` counts 2. Python's
own operators count nothing, so index arithmetic stays free, as it is integer
work on the GPU.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any, Callable, Optional, Sequence

from . import specs
from .cuda import LINE_BYTES, SECTOR_BYTES, SMEM_BANK_BYTES, SMEM_BANKS, WARP_SIZE, Dim3, dim3, validate_launch
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

# kinds of event (the second field of an access's rid)
LD, ST, ATOM, FLOP = "ld", "st", "atom", "flop"


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

    __slots__ = ("keys", "idx", "frame", "kcode", "me", "lo", "blo", "steps", "rids", "block", "thread", "shared",
                 "shared_top", "pending_barrier", "generator", "device")

    def __init__(self, max_steps: int):
        self.keys: list = []  # the running thread's log: site key (bytecode offset + rid << 20) ...
        self.idx: list = []   # ... and element index (FLOPs for arithmetic), one entry per event
        self.frame = None     # the running thread's kernel frame
        self.kcode = None
        self.me = self.lo = self.blo = 0
        self.steps = max_steps
        self.rids: list = [(None, FLOP, 1), (None, FLOP, 2)]
        self.block = self.thread = Dim3(0, 0, 0)
        self.shared: dict = {}
        self.shared_top = 0
        self.pending_barrier = None
        self.generator = False
        self.device = None

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
    while f is not None and f.f_code.co_filename == __file__:
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
                 "_st", "_tags", "_rd", "_r", "_w", "_a", "_vecs")

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
        self._tags: list = []
        self._rd: list = []
        self._r = self._w = self._a = -1

    def _attach(self, st: _State, base: int) -> None:
        self._st = st
        self.base = base
        self._tags = [-1] * self.n
        self._rd = [-1] * self.n
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
        return self._error(UninitializedRead, f"read of {self.space} {self.name}[{idx!r}] before any thread "
                           "wrote it" + (" (shared memory starts uninitialised)" if self.space == "shared" else ""),
                           idx)

    def _race(self, flat: int, other_tag: int, what: str):
        st = self._st
        other = _thread_of(other_tag % _NT)
        same_block = other_tag >= st.blo
        who = ("thread " + _fmt3(other) + " of this block" if same_block else
               f"thread {_fmt3(other)} of block {_fmt3(_block_of_interval(other_tag // _NT))}")
        when = "since the last syncthreads()" if same_block else "in this launch (blocks run in no set order)"
        idx = self._unflat(flat)
        return self._error(Race, f"{what} {self.space} {self.name}[{idx!r}], which {who} wrote {when}", idx)

    def _race_after_read(self, flat: int, r: int):
        st = self._st
        other = _thread_of(r % _NT)
        same_block = r >= st.blo
        who = "this block" if same_block else f"block {_fmt3(_block_of_interval(r // _NT))}"
        when = "since the last syncthreads()" if same_block else "in this launch"
        idx = self._unflat(flat)
        return self._error(Race, f"write to {self.space} {self.name}[{idx!r}], which thread {_fmt3(other)} of "
                           f"{who} read {when} (it may read before or after this write)", idx)

    # -- element access: the hot path, written out once per shape and space for speed.
    # Race tags: an element's last writer (and last reader) is stored as
    # interval × threads-per-block + thread, where intervals are numbered across the
    # launch (block by block, barrier by barrier). The running thread's tag is
    # st.me; tags from st.lo up are this interval's, tags from st.blo up this block's.

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
        w = self._tags[i]
        if w >= 0 and w != st.me and (w >= st.lo or w < st.blo):
            raise self._race(i, w, "read of")
        self._rd[i] = st.me
        f = st.frame or _find_frame(st)
        st.keys.append(f.f_lasti + self._r)
        st.idx.append(i)
        st.steps -= 1
        if st.steps <= 0:
            raise _step_limit(st)
        return v

    def __setitem__(self, i, value):
        try:
            if not 0 <= i < self.n:
                raise self._oob(i)
            i + 0
        except TypeError:
            raise self._bad_index(i) from None
        if i.__class__ is not int:
            raise self._bad_index(i)
        st = self._st
        if st is not None:
            me = st.me
            w = self._tags[i]
            if w >= 0 and w != me and (w >= st.lo or w < st.blo):
                raise self._race(i, w, "write to")
            r = self._rd[i]
            if r >= 0 and r != me and (r >= st.lo or r < st.blo):
                raise self._race_after_read(i, r)
            self._tags[i] = me
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
        w = self._tags[i]
        if w >= 0 and w != st.me and (w >= st.lo or w < st.blo):
            raise self._race(i, w, "read of")
        self._rd[i] = st.me
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
            me = st.me
            w = self._tags[i]
            if w >= 0 and w != me and (w >= st.lo or w < st.blo):
                raise self._race(i, w, "write to")
            r = self._rd[i]
            if r >= 0 and r != me and (r >= st.lo or r < st.blo):
                raise self._race_after_read(i, r)
            self._tags[i] = me
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
        w = self._tags[k]
        if w >= 0 and w != st.me and (w >= st.lo or w < st.blo):
            raise self._race(k, w, "read of")
        self._rd[k] = st.me
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

    Only the block's own threads can see it, so a tag is a race only when it is
    this interval's and another thread's."""

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
        w = self._tags[i]
        me = st.me
        if w >= st.lo and w != me:
            raise self._race(i, w, "read of")
        self._rd[i] = me
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
        w = self._tags[k]
        me = st.me
        if w >= st.lo and w != me:
            raise self._race(k, w, "read of")
        self._rd[k] = me
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
                t = a._tags[i]
                if t >= 0 and t != st.me and (t >= st.lo or t < st.blo):
                    raise a._race(i, t, "read of")
                a._rd[i] = st.me
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
            for i in range(j * w, j * w + w):
                t = a._tags[i]
                if t >= 0 and t != st.me and (t >= st.lo or t < st.blo):
                    raise a._race(i, t, "write to")
                r = a._rd[i]
                if r >= 0 and r != st.me and (r >= st.lo or r < st.blo):
                    raise a._race_after_read(i, r)
                a._tags[i] = st.me
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
        f = st.frame or _find_frame(st)
        st.keys.append(f.f_lasti + (n - 1 << _KEY_SHIFT))
        st.idx.append(n)
        st.steps -= 1
        if st.steps <= 0:
            raise _step_limit(st)


def add(a, b):
    """a + b, one FLOP."""
    _flop(1)
    return a + b


def mul(a, b):
    """a · b, one FLOP."""
    _flop(1)
    return a * b


def fma(a, b, c):
    """a · b + c, two FLOPs (one fused instruction)."""
    st = _ST
    if st is not None:
        f = st.frame or _find_frame(st)
        st.keys.append(f.f_lasti + _FMA_KEY)
        st.idx.append(2)
        st.steps -= 1
        if st.steps <= 0:
            raise _step_limit(st)
    return a * b + c


def fmax(a, b):
    """max(a, b), one FLOP (CUDA's fmaxf)."""
    _flop(1)
    return a if a >= b else b


def exp(x):
    """e^x, one FLOP (the book counts a softmax's exponential as one operation)."""
    _flop(1)
    return math.exp(x)


def atomic_add(array: Array, index, value):
    """``atomicAdd(&array[index], value)``: adds and returns the old value; atomics never race."""
    st = _state()
    if not isinstance(array, Array):
        raise KernelError("atomic_add() takes an array, an index and a value", block=st.block, thread=st.thread,
                          line=_kernel_line())
    return array._atomic_add(index, value)


# ------------------------------------------------------------------ the record


@dataclass(slots=True)
class Instr:
    """One warp instruction, the unit of the record every count is computed from.

    ``kind`` is "ld", "st", "atom" or "flop"; ``space`` "global", "shared" or None
    (arithmetic); ``lanes`` the active lanes; ``index`` each active lane's flat
    element index (for arithmetic, the FLOPs per lane); ``size`` bytes per lane;
    ``live`` the lanes the warp has (fewer than 32 in a partial last warp).
    """

    block: int
    warp: int
    epoch: int
    line: int
    kind: str
    array: Optional[Array]
    base: int
    size: int
    lanes: tuple
    index: tuple
    live: int
    site: tuple

    @property
    def space(self) -> Optional[str]:
        return self.array.space if self.array is not None else None

    @property
    def active(self) -> int:
        return len(self.lanes)

    @property
    def divergent(self) -> bool:
        return len(self.lanes) < self.live

    def addresses(self) -> list:
        """Byte address of each active lane's access."""
        b, s = self.base, (self.array.itemsize if self.array is not None else 0)
        return [b + i * s for i in self.index]


def sectors_of(instr: Instr) -> set:
    """32-byte sectors a global instruction touches (numbered byte address // 32).

    Arrays start 256-byte aligned and every access is naturally aligned (an
    element, or a vector of 2 or 4 at a multiple of its size), so no access of up
    to 32 bytes straddles a sector: lane i's sector is (base + i·itemsize) // 32."""
    s, b = instr.array.itemsize, instr.base
    if instr.size <= SECTOR_BYTES and b % SECTOR_BYTES == 0 and s in _SHIFT:
        sh = _SHIFT[s]
        first = b >> 5
        return {first + k for k in set(map(sh.__rrshift__, instr.index))}
    size = instr.size
    out = set()
    for i in instr.index:
        a = b + i * s
        out.update(range(a >> 5, ((a + size - 1) >> 5) + 1))
    return out


def _sector_and_line_counts(instr: Instr) -> tuple:
    s, b = instr.array.itemsize, instr.base
    if instr.size <= SECTOR_BYTES and b % LINE_BYTES == 0 and s in _SHIFT:
        sh = _SHIFT[s]
        secs = set(map(sh.__rrshift__, instr.index))
        lines = set(map((sh + 2).__rrshift__, instr.index))
        return len(secs), len(lines)
    secs = sectors_of(instr)
    return len(secs), len({x >> 2 for x in secs})


_SHIFT = {1: 5, 2: 4, 4: 3, 8: 2}  # itemsize -> log2(32 / itemsize)


def lines_of(instr: Instr) -> set:
    """128-byte lines a global instruction touches."""
    return {sec * SECTOR_BYTES // LINE_BYTES for sec in sectors_of(instr)}


def bytes_requested(instr: Instr) -> int:
    """Bytes the active lanes asked for, each distinct element once."""
    return len(set(instr.index)) * instr.size


def phases(instr: Instr) -> list:
    """The lane groups a shared-memory request is served in: 32 lanes for accesses of
    up to 4 bytes, 16 for 8 bytes, 8 for 16 bytes."""
    per = WARP_SIZE * SMEM_BANK_BYTES // max(instr.size, SMEM_BANK_BYTES)
    groups: dict = {}
    for lane, i in zip(instr.lanes, instr.index):
        groups.setdefault(lane // per, []).append(i)
    return list(groups.values())


def wavefronts_of(instr: Instr) -> tuple:
    """(wavefronts, phases with active lanes, worst ways) of a shared-memory instruction.

    Per phase: the busiest bank's count of distinct 4-byte words (lanes reading
    one word share a broadcast)."""
    s, size, b = instr.array.itemsize, instr.size, instr.base
    if size <= SMEM_BANK_BYTES:
        words = set(instr.index) if s == 4 else {(b + i * s) >> 2 for i in instr.index}
        n = len(words)
        if n == 1:
            return 1, 1, 1
        banks = {w & 31 for w in words}
        if len(banks) == n:
            return 1, 1, 1
        per: dict = {}
        for w in words:
            per[w & 31] = per.get(w & 31, 0) + 1
        ways = max(per.values())
        return ways, 1, ways
    waves, worst, nph = 0, 0, 0
    for idxs in phases(instr):
        words = set()
        for i in idxs:
            a = b + i * s
            words.update(range(a >> 2, ((a + size - 1) >> 2) + 1))
        per = {}
        for w in words:
            per[w & 31] = per.get(w & 31, 0) + 1
        ways = max(per.values())
        waves += ways
        worst = max(worst, ways)
        nph += 1
    return waves, nph, worst


# ------------------------------------------------------------------ counts


_FIELDS = ("warp_instructions", "active_lanes", "lane_slots", "divergent",
           "global_loads", "global_stores", "global_atomics", "sectors", "load_sectors", "store_sectors",
           "lines", "bytes_requested", "shared_loads", "shared_stores", "wavefronts", "ideal_wavefronts",
           "flops")


@dataclass
class Counts:
    """Counts over some warp instructions (a kernel, a block, a source line, one instruction).

    Global memory: ``global_loads``/``global_stores``/``global_atomics`` are requests
    (warp instructions); ``sectors`` the 32-byte sectors they touch, ``lines`` the
    128-byte lines, ``bytes_requested`` what the lanes asked for and
    ``bytes_moved`` = sectors × 32. Shared memory: requests, ``wavefronts`` and
    ``bank_conflicts`` (wavefronts beyond one per phase). ``divergent`` counts warp
    instructions some live lanes of the warp skipped; ``active_lanes / lane_slots``
    is the share of the 32 lanes doing work. ``flops`` from add/mul/fma/fmax/exp.
    """

    warp_instructions: int = 0
    active_lanes: int = 0
    lane_slots: int = 0
    divergent: int = 0
    global_loads: int = 0
    global_stores: int = 0
    global_atomics: int = 0
    sectors: int = 0
    load_sectors: int = 0
    store_sectors: int = 0
    lines: int = 0
    bytes_requested: int = 0
    shared_loads: int = 0
    shared_stores: int = 0
    wavefronts: int = 0
    ideal_wavefronts: int = 0
    flops: int = 0

    @property
    def global_requests(self) -> int:
        return self.global_loads + self.global_stores + self.global_atomics

    @property
    def bytes_moved(self) -> int:
        return self.sectors * SECTOR_BYTES

    @property
    def efficiency(self) -> float:
        """bytes_requested / bytes_moved (1.0: fully coalesced); 1.0 when nothing moved."""
        return self.bytes_requested / self.bytes_moved if self.sectors else 1.0

    @property
    def sectors_per_request(self) -> float:
        r = self.global_requests
        return self.sectors / r if r else 0.0

    @property
    def shared_requests(self) -> int:
        return self.shared_loads + self.shared_stores

    @property
    def bank_conflicts(self) -> int:
        return self.wavefronts - self.ideal_wavefronts

    @property
    def lane_share(self) -> float:
        """Share of lane slots doing work, over the counted instructions."""
        return self.active_lanes / self.lane_slots if self.lane_slots else 1.0

    def add(self, other: "Counts") -> None:
        for f in _FIELDS:
            setattr(self, f, getattr(self, f) + getattr(other, f))

    def as_dict(self) -> dict:
        d = {f: getattr(self, f) for f in _FIELDS}
        d.update(global_requests=self.global_requests, bytes_moved=self.bytes_moved, efficiency=self.efficiency,
                 shared_requests=self.shared_requests, bank_conflicts=self.bank_conflicts,
                 lane_share=self.lane_share)
        return d


def counts_of(instr: Instr) -> Counts:
    """The counts of one warp instruction."""
    return sum_counts((instr,))


def sum_counts(instrs) -> Counts:
    """The counts of some warp instructions: every count is derived here from the record."""
    wi = act = div = gl = gs = ga = sec = lsec = ssec = lines = breq = sl = ss = wav = ideal = fl = 0
    for ins in instrs:
        n = len(ins.lanes)
        wi += 1
        act += n
        if n < ins.live:
            div += 1
        kind = ins.kind
        if kind == FLOP:
            fl += sum(ins.index)
            continue
        if ins.array.space == "global":
            ns, nl = _sector_and_line_counts(ins)
            sec += ns
            lines += nl
            breq += len(set(ins.index)) * ins.size
            if kind == LD:
                gl += 1
                lsec += ns
            elif kind == ST:
                gs += 1
                ssec += ns
            else:
                ga += 1
                lsec += ns
                ssec += ns
        else:
            w, p, _ = wavefronts_of(ins)
            wav += w
            ideal += p
            if kind == LD:
                sl += 1
            else:
                ss += 1
    return Counts(wi, act, wi * WARP_SIZE, div, gl, gs, ga, sec, lsec, ssec, lines, breq, sl, ss, wav, ideal, fl)


# ------------------------------------------------------------------ L2 and HBM


@dataclass(frozen=True)
class Traffic:
    """HBM traffic behind a launch's sectors, through the L2 model."""

    l2_bytes: int  # capacity modelled
    read_bytes: int  # read misses × 32
    write_bytes: int  # dirty sectors written back × 32
    l2_read_hits: int
    l2_read_misses: int

    @property
    def hbm_bytes(self) -> int:
        return self.read_bytes + self.write_bytes


def l2_traffic(record: Sequence[Instr], l2_bytes: int) -> Traffic:
    """Run the global instructions of ``record`` in order through an LRU cache of 32-byte
    sectors holding ``l2_bytes`` (write-back, write-allocate without fetch)."""
    cap = max(0, int(l2_bytes) // SECTOR_BYTES)
    cache: dict = {}  # sector -> dirty; dict order is LRU order (oldest first)
    reads = writes = hits = misses = 0
    for ins in record:
        if ins.kind == FLOP or ins.array.space != "global":
            continue
        secs = sorted(sectors_of(ins))
        store = ins.kind != LD
        load = ins.kind != ST
        for s in secs:
            if s in cache:
                dirty = cache.pop(s)
                if load:
                    hits += 1
            else:
                dirty = False
                if load:
                    misses += 1
                    reads += 1
            if cap == 0:
                if store:
                    writes += 1
                continue
            cache[s] = dirty or store
            if len(cache) > cap:
                old = next(iter(cache))
                if cache.pop(old):
                    writes += 1
    writes += sum(1 for d in cache.values() if d)
    return Traffic(int(l2_bytes), reads * SECTOR_BYTES, writes * SECTOR_BYTES, hits, misses)


# ------------------------------------------------------------------ report


@dataclass
class Roofline:
    """A launch on one device's roofline: the lower bound on its time and the roof that binds."""

    device: str
    flops: int
    hbm_bytes: int
    intensity: float  # FLOP per HBM byte (inf with no traffic)
    peak_flops: float
    mem_bw: float
    compute_time_s: float
    memory_time_s: float

    @property
    def time_s(self) -> float:
        return max(self.compute_time_s, self.memory_time_s)

    @property
    def bound(self) -> str:
        """"memory" or "compute": the roof that sets the lower bound."""
        return "memory" if self.memory_time_s >= self.compute_time_s else "compute"


class Report:
    """What a launch did: the record of warp instructions and every count derived from it.

    - ``arrays``: ``{name: Array}`` of the launch (read results with ``.data`` / ``.tolist()``)
    - ``record``: list of ``Instr`` in execution order (block by block; within a block,
      barrier interval by interval, warp by warp, each warp's instructions in program order)
    - ``totals``: ``Counts`` of the whole launch
    - ``per_line``: ``{line: Counts}``; ``per_block``: ``{linear block number: Counts}``
    - ``per_instruction()``: ``[(Instr, Counts)]``
    - ``traffic``: ``Traffic`` (HBM bytes through the L2 model); ``hbm_bytes``
    - ``roofline(device, dtype)``: ``Roofline``
    - ``table()``: rows per source line for printing
    """

    def __init__(self, kernel: Callable, grid: Dim3, block: Dim3, device, record: list,
                 source: dict, l2_bytes: int, arrays: Optional[dict] = None):
        self.arrays = arrays or {}  # {name: Array} passed to the launch
        self.kernel_name = getattr(kernel, "__name__", "kernel")
        self.grid, self.block, self.device = grid, block, device
        self.record = record
        self._source = source  # {line: text} of a kernel given as text, else None
        code = getattr(kernel, "__code__", None)
        self._filename = code.co_filename if code is not None else None
        self.l2_bytes = l2_bytes
        self._agg: Optional[dict] = None
        self._traffic: Optional[Traffic] = None

    # -- aggregation (one pass over the record, cached)
    def _aggregate(self) -> dict:
        if self._agg is None:
            by: dict = {}
            for ins in self.record:
                key = (ins.block, ins.line)
                g = by.get(key)
                if g is None:
                    by[key] = [ins]
                else:
                    g.append(ins)
            self._agg = {key: sum_counts(g) for key, g in by.items()}
        return self._agg

    @property
    def totals(self) -> Counts:
        t = Counts()
        for c in self._aggregate().values():
            t.add(c)
        return t

    @property
    def per_line(self) -> dict:
        out: dict = {}
        for (_, line), c in self._aggregate().items():
            out.setdefault(line, Counts()).add(c)
        return dict(sorted(out.items()))

    @property
    def per_block(self) -> dict:
        out: dict = {}
        for (b, _), c in self._aggregate().items():
            out.setdefault(b, Counts()).add(c)
        return dict(sorted(out.items()))

    def per_instruction(self) -> list:
        return [(ins, counts_of(ins)) for ins in self.record]

    # -- HBM and the roofline
    @property
    def traffic(self) -> Traffic:
        if self._traffic is None:
            self._traffic = l2_traffic(self.record, self.l2_bytes)
        return self._traffic

    @property
    def hbm_bytes(self) -> int:
        return self.traffic.hbm_bytes

    @property
    def flops(self) -> int:
        return self.totals.flops

    def roofline(self, device=None, dtype: str = "fp32") -> Roofline:
        """The launch on ``device``'s roofline (default: the launch's device) for ``dtype``
        arithmetic on the ordinary (non-Tensor-Core) units. HBM bytes are this launch's
        (its L2 model used the launch device's capacity)."""
        dev = device if device is not None else self.device
        dev = specs.device(dev) if isinstance(dev, str) else dev
        peak, bw = dev.peak_flops(dtype), dev.mem_bw
        fl, by = self.flops, self.hbm_bytes
        return Roofline(dev.name, fl, by, fl / by if by else math.inf, peak, bw, fl / peak, by / bw)

    # -- printing
    def source_line(self, line: int) -> str:
        """The kernel's text on ``line`` ("" when unknown)."""
        if self._source is not None:
            return self._source.get(line, "")
        return _file_line(self._filename, line) if self._filename else ""

    def table(self) -> list:
        """One row per source line that did something: line, source, and its counts."""
        rows = []
        for line, c in self.per_line.items():
            rows.append({"line": line, "source": self.source_line(line).strip(), **c.as_dict()})
        return rows

    def to_dict(self, device=None, dtype: str = "fp32") -> dict:
        """Plain data (JSON-ready): launch shape, totals, per-line rows, traffic and roofline."""
        roof = self.roofline(device, dtype)
        tr = self.traffic
        return {
            "kernel": self.kernel_name,
            "grid": list(self.grid), "block": list(self.block), "device": self.device.name,
            "totals": self.totals.as_dict(),
            "lines": self.table(),
            "traffic": {"l2_bytes": tr.l2_bytes, "read_bytes": tr.read_bytes, "write_bytes": tr.write_bytes,
                        "hbm_bytes": tr.hbm_bytes, "l2_read_hits": tr.l2_read_hits,
                        "l2_read_misses": tr.l2_read_misses},
            "roofline": {"device": roof.device, "dtype": dtype, "flops": roof.flops, "hbm_bytes": roof.hbm_bytes,
                         "intensity": roof.intensity if roof.hbm_bytes else None,
                         "peak_flops": roof.peak_flops, "mem_bw": roof.mem_bw, "time_s": roof.time_s,
                         "bound": roof.bound},
        }

    def __repr__(self) -> str:
        t = self.totals
        return (f"<Report {self.kernel_name}<<<{tuple(self.grid)}, {tuple(self.block)}>>>: "
                f"{t.global_requests} global requests, {t.sectors} sectors, {t.wavefronts} wavefronts "
                f"({t.bank_conflicts} conflicts), {t.flops} FLOPs, {self.hbm_bytes} HBM bytes>")


# ------------------------------------------------------------------ the launch

_NT = 0  # threads per block of the running launch (for race messages)
_BLOCKS: list = []  # interval number -> block index, for race messages
_BLOCK_DIM = Dim3(1, 1, 1)


def _thread_of(tid: int) -> Dim3:
    bd = _BLOCK_DIM
    return Dim3(tid % bd.x, (tid // bd.x) % bd.y, tid // (bd.x * bd.y))


def _block_of_interval(k: int) -> Dim3:
    return _BLOCKS[k] if 0 <= k < len(_BLOCKS) else Dim3(0, 0, 0)




class _Lines:
    """Which instruction and source line a logged bytecode offset belongs to, per code object.

    ``f_lasti`` of a calling frame is not always the start of the calling instruction:
    CPython's specialising interpreter may leave it on the instruction's inline
    cache entries, so one site can show two offsets (before and after it is
    specialised). Every code unit of an instruction, caches included, carries the
    instruction's source position (``co_positions``), so the position (line and
    columns) names the site. Without column information (``-X no_debug_ranges``)
    the raw offset is kept."""

    def __init__(self):
        self.sites: dict = {}

    def canon(self, code) -> list:
        m = self.sites.get(code)
        if m is None:
            m = []
            for k, pos in enumerate(code.co_positions()):
                line = pos[0] if pos[0] is not None else code.co_firstlineno
                m.append((line, pos[1], pos[2], pos[3]) if pos[1] is not None else (line, 2 * k))
            self.sites[code] = m
        return m

    def site(self, code, lasti: int) -> tuple:
        m = self.canon(code)
        k = lasti // 2
        return m[k] if 0 <= k < len(m) else (code.co_firstlineno, lasti)


def _source_of(kernel) -> dict:
    """``{line: text}`` of a kernel written as text (``compile_kernel``), else None: the lines of a
    kernel in a file are read when a table asks for them."""
    given = getattr(kernel, "__warpsim_source__", None)
    return dict(given) if given is not None else None


def _file_line(filename: str, line: int) -> str:
    import linecache

    return linecache.getline(filename, line).rstrip("\n")


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
        if tb.tb_frame.f_code.co_filename != __file__:
            line = tb.tb_lineno
        tb = tb.tb_next
    err = KernelException(f"{type(exc).__name__}: {exc}", block=st.block, thread=st.thread, line=line)
    err.__cause__ = exc
    return err


def launch(kernel: Callable, grid, block, args: Sequence = (), *, device=DEFAULT_DEVICE,
           max_steps: int = DEFAULT_MAX_STEPS, l2_bytes: Optional[int] = None) -> Report:
    """Run ``kernel(*args)`` for every thread of ``<<<grid, block>>>`` and report what it moved.

    ``grid`` and ``block`` are ints, 1-3 tuples or ``Dim3``; ``args`` are passed to
    every thread (``Array`` objects are global memory, anything else is a value).
    ``device`` (a ``calc.specs`` name or Device) sets the launch limits and the L2
    capacity; ``l2_bytes`` overrides that capacity (0: no cache, every sector goes to
    HBM). Raises a ``KernelError`` subclass on the first error.
    """
    global _ST, _NT, _BLOCKS, _BLOCK_DIM
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
    _NT, _BLOCKS, _BLOCK_DIM = nt, [], b
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
            st.blo = interval * nt
            epoch = 0
            running = list(range(nt))
            while True:
                _BLOCKS.append(bidx)
                st.lo = interval * nt
                waiting: dict = {}
                finished = []
                for tid in running:
                    t = threads[tid]
                    threadIdx._set(t)
                    st.thread = t
                    st.me = st.lo + tid
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
                            g = gens[tid]
                            st.frame = g.gi_frame
                            y = next(g)
                    except StopIteration:
                        finished.append(tid)
                        if st.pending_barrier is not None:
                            raise _unyielded(st)
                        continue
                    except KernelError:
                        raise
                    except Exception as e:  # the reader's own bug
                        raise _wrap(e, st) from e
                    if not isinstance(y, _Barrier) or y is not st.pending_barrier:
                        if st.pending_barrier is not None and not isinstance(y, _Barrier):
                            raise _unyielded(st)
                        raise BarrierError(f"a kernel may only yield syncthreads(), got {y!r}",
                                           block=bidx, thread=t, line=_frame_line(gens[tid]))
                    st.pending_barrier = None
                    waiting.setdefault(y.line, []).append(tid)
                for w in range(nwarps):
                    lo, hi = w * WARP_SIZE, min(nt, (w + 1) * WARP_SIZE)
                    _group(st, keys[lo:hi], idxs[lo:hi], bnum, w, epoch, lines, record)
                    for t in range(lo, hi):
                        keys[t].clear()
                        idxs[t].clear()
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
    return Report(kernel, g, b, dev, record, _source_of(kernel), l2, {a.name: a for a in arrays})


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
    parts = [f"{_span(tids, threads)} wait at the syncthreads() on line {line}" for line, tids in waiting.items()]
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
                "add", "mul", "fma", "fmax", "exp", "atomic_add")


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
