"""Memory: global and shared arrays, their checked and logged accesses, and the per-launch state
the accesses log into (the running thread, its log, the step budget).

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
"""

from __future__ import annotations

import math
import sys
from typing import Any, Optional, Sequence

from ..cuda import WARP_SIZE, Dim3
from ..dtypes import size_bytes
from .counts import ATOM, FLOP, LD, ST
from .errors import (BarrierError, KernelError, KernelException, LaunchError, OutOfBounds, StepLimit,
                     UninitializedRead, _fmt3, _subscript)

_getframe = sys._getframe

#: the element types a kernel's arrays may have, and their size in bytes
#: (from ``calc.dtypes``; int32 is a storage type only, so it is added here)
ELEMENT_BYTES: dict[str, int] = {d: int(size_bytes(d)) for d in ("fp64", "fp32", "fp16", "bf16", "int8")}
ELEMENT_BYTES["int32"] = 4

_FLOAT_TYPES = ("fp64", "fp32", "fp16", "bf16")

DEFAULT_DEVICE = "a100-sxm-40gb"
DEFAULT_MAX_STEPS = 5_000_000
MAX_THREADS = 1 << 20
GLOBAL_ALIGN = 256
SHARED_ALIGN = 128

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
                 "shared_top", "pending_barrier", "generator", "device", "vec", "live", "ftup", "failed",
                 "to_warp", "error", "overflow", "last_barrier")

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
        self.to_warp = None   # the warp executor's hook for a new shared array
        self.error = None     # the first KernelError the simulator raised in this launch
        self.overflow = None  # the first exp that overflowed FP32: (line, thread, block, x)
        self.last_barrier = None  # the line of the block's last barrier every thread passed

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
    err = StepLimit(
        "the kernel ran past the step limit of the launch (memory accesses and arithmetic calls); "
        "is a loop missing its exit?", block=st.block, thread=st.thread, line=_kernel_line())
    if st.error is None:
        st.error = err
    return err


def _kernel_line(depth: int = 2) -> Optional[int]:
    """Line of the nearest frame outside this module."""
    f = _getframe(depth)
    while f is not None and f.f_code.co_filename in SIM_FILES:
        f = f.f_back
    return f.f_lineno if f is not None else None


# ------------------------------------------------------------------ arrays


def _expected_writer(idx, name: str) -> str:
    """Which thread fills ``name[idx]`` in the usual layout (thread (x, y) stores tile[y, x]), when
    the block has such a thread; else nothing."""
    bd = blockDim
    try:
        bx, by = int(bd.x), int(bd.y)
    except (TypeError, ValueError):
        return ""
    if isinstance(idx, tuple) and len(idx) == 2:
        i, j = idx
        if j < bx and i < by:
            return f" (in the usual layout, {name}[threadIdx.y, threadIdx.x], thread ({j}, {i}, 0) stores it)"
    elif isinstance(idx, int) and by == 1 and idx < bx:
        return f" (in the usual layout, {name}[threadIdx.x], thread ({idx}, 0, 0) stores it)"
    return ""


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
            if dtype in _FLOAT_TYPES:
                values = [float(v) if v.__class__ is int else v for v in values]
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
        err = cls(message, block=st.block if st else None, thread=st.thread if st else None,
                  line=_kernel_line(3), array=self.name, index=index)
        if st is not None and st.error is None:
            st.error = err  # the launch fails with it, even if kernel code catches it
        return err

    def _oob(self, index):
        dims = " × ".join(str(s) for s in self.shape)
        return self._error(OutOfBounds, f"index {index!r} is outside {self.space} array {self.name} "
                           f"({dims} {self.dtype})", index)

    def _uninit(self, flat: int):
        idx = self._unflat(flat)
        name = _subscript(self.name, idx)
        st = _ST
        if self.space == "shared" and st is not None and st.last_barrier is not None:
            # Every thread of the block has passed the barrier: whatever it wrote before is there.
            # So no thread wrote this element at all; the barrier is not what is missing.
            return self._error(UninitializedRead, f"read of shared {name}, which no thread of this block "
                               f"wrote before the barrier on line {st.last_barrier}: the barrier is there, "
                               f"so the store that should fill {name} never ran"
                               + _expected_writer(idx, self.name) + "; check its guard and its indices", idx)
        return self._error(UninitializedRead, f"read of {self.space} {name} before any thread wrote it"
                           + (f" (shared memory starts uninitialised): if another thread writes {name}, a "
                              "cuda.syncthreads() must come between its write and this read"
                              if self.space == "shared" else ""), idx)

    def __iter__(self):
        """``for x in A`` (legal Numba): one load per element, in order, as the loop writes them."""
        if len(self.shape) != 1:
            raise KernelError(f"iterating over the {len(self.shape)}-D array {self.name}: index it instead",
                              line=_kernel_line())
        return (self[k] for k in range(self.n))

    def __len__(self):
        return self.shape[0]

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
        if value.__class__ is not float:
            value = self._value(value, i)
        if st is not None:
            f = st.frame or _find_frame(st)
            st.keys.append(f.f_lasti + self._w)
            st.idx.append(i)
            st.steps -= 1
            if st.steps <= 0:
                raise _step_limit(st)
        self.data[i] = value

    def _value(self, value, index):
        """What a store puts in the array: a number. An int stored into a floating-point array is
        that float (as Numba converts it), so that arithmetic on it counts; anything else (a
        string, a list, an object of the kernel's own making) is refused."""
        c = value.__class__
        if c is int or c is bool:
            return float(value) if self.dtype in _FLOAT_TYPES else int(value)
        if c is float:
            return value
        raise self._error(KernelException, f"{self.name}[{index}] = {type(value).__name__}: an array holds numbers "
                          "(int or float), not other Python objects", index)

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
        if value.__class__ is not float:
            value = self._value(value, i)
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
        values = tuple(v if v.__class__ is float else a._value(v, j) for v in values)
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
        st.to_warp(arr)
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



_OFFSET_MASK = (1 << _KEY_SHIFT) - 1
_CO_GENERATOR = 0x20  # code flag of a generator function (Python's inspect.CO_GENERATOR)


def _is_generator_function(f) -> bool:
    return bool(f.__code__.co_flags & _CO_GENERATOR)


def _unyielded(st: _State) -> BarrierError:
    return BarrierError("cuda.syncthreads() was called where the simulator cannot make it a barrier",
                        block=st.block, thread=st.thread, line=st.pending_barrier.line)


class _Fallback(BaseException):
    """The lanes parted or something went wrong: the per-thread executor takes the launch.
    (A BaseException, so that no ``except Exception`` in kernel code could catch it.)"""


def _fail() -> _Fallback:
    st = _ST
    if st is not None:
        st.failed = True  # seen even if kernel code swallowed the exception
    return _Fallback()


def _log_flop(st: _State, n: int) -> None:
    """A warp's arithmetic instruction of ``n`` FLOPs per lane (calc.warpvec)."""
    f = st.frame or _find_frame(st)
    st.keys.append(f.f_lasti + (n - 1 << _KEY_SHIFT))
    st.idx.append(st.ftup[n - 1])
    st.steps -= st.live
    if st.steps <= 0:
        raise _fail()



#: the file names (as their bytecode records them) of the simulator's own modules: a frame from
#: one of them is the simulator's, any other the kernel's. Each module of calc.sim adds its own
#: (not ``__file__``: the browser runtime loads precompiled bytecode from a zip, where the two differ).
SIM_FILES = {_kernel_line.__code__.co_filename}
