"""The warp executor, the fast path of ``calc.sim.launch``: a warp's lanes run as one, in lock step.

``warpsim`` runs a kernel once per thread and rebuilds warp instructions from
per-thread logs: a Python call per lane per access (about 0.3 µs each), so a
64×64 tiled matmul (800,000 accesses) takes half a second in CPython and
twice that in the browser. Here the same kernel function runs once per *warp*:
``threadIdx.x`` is a ``Lanes`` value holding the 32 lanes' numbers, arithmetic
on it works lane by lane (``map`` over the lanes, in C), and an array indexed
with it reads or writes every lane's element at once and logs one warp
instruction. Values the lanes share (``blockIdx``, a loop counter, ``n``) stay
plain Python numbers, so uniform code costs what it costs per thread.

This is a speculation that either gives exactly what the per-thread executor
gives or gives up:

- It is tried only on kernels whose code can show no difference between the
  two (``eligible``): no exception handlers, ``is`` tests, global or attribute
  stores, imports, atomics, vector views or raw ``.data``; names that resolve
  only to the kernel API, ``math``, a few pure built-ins (``range``, ``min``,
  ``max`` ...) and constants; arguments that are arrays and constants (a list
  argument could be mutated per lane).
- It gives up (``_Fallback``) the moment the lanes would part: an ``if`` or
  ``while`` whose condition differs across lanes, a lane-varying value where
  Python needs one number (``range(threadIdx.x, ...)``, ``int()``), warps that
  reach different barriers, and on every error of any kind (out of bounds,
  uninitialised read, race, step limit, the kernel's own exception), since
  only the per-thread executor knows which thread meets it first.
- On giving up, the global arrays get their launch-time contents back and the
  per-thread executor runs the launch from the start, so errors, their
  messages and divergent kernels are exactly as before.

When it finishes, the record is the one the per-thread executor would build:
in a race-free interval (races make it give up) threads run one after another
compute what lock-step lanes compute, every lane of a warp ran the same
instructions in the same order (no branch parted them), so each warp
instruction has every live lane, the indices the lanes used, in program
order, at the same bytecode site. ``tests/calc/test_warpvec.py`` compares the two
executors' reports field by field on the canonical kernels and on kernels
built to part the lanes.
"""

from __future__ import annotations

import builtins
import math
import operator
from itertools import repeat

from ..cuda import WARP_SIZE
from . import memory as ws
from .counts import Instr, Report
from .memory import _Fallback, _fail, _log_flop
from .races import WarpRaces as _Races

try:  # to read a kernel's bytecode; absent from a trimmed standard library, then nothing runs here
    from opcode import opmap as _OPMAP
except ImportError:  # pragma: no cover
    _OPMAP = None

_add, _mul = operator.add, operator.mul
_new = object.__new__
_FMA_KEY = 1 << ws._KEY_SHIFT  # a site key's access kind: 2 FLOPs per lane (warpsim's rid 1)


# ------------------------------------------------------------------ lane values


def _uniform(v: list):
    """The lanes' common value, when every lane holds an equal value of one type; else give up."""
    x = v[0]
    if v.count(x) == len(v) and len(set(map(type, v))) == 1:
        return x
    raise _fail()


class Lanes:
    """A value that differs across the lanes of a warp: ``v[lane]``. Arithmetic and comparisons
    work lane by lane; a truth test, ``int()``, ``float()`` or an index need every lane to agree."""

    __slots__ = ("v", "memo", "f")

    def __init__(self, v: list):
        self.v = v
        self.f = None     # 1 when every lane holds a float, 0 when none does, None: not looked at yet
        self.memo = None  # as an index: the flat elements it gives per array shape and number (_flat2)

    def __bool__(self):
        v = self.v
        if all(v):
            return True
        if not any(v):
            return False
        raise _fail()  # a branch the lanes take differently: divergence

    def __index__(self):
        x = _uniform(self.v)
        try:
            return operator.index(x)
        except Exception:
            raise _fail() from None

    def __int__(self):
        x = _uniform(self.v)
        try:
            return int(x)
        except Exception:
            raise _fail() from None

    def __float__(self):
        x = _uniform(self.v)
        try:
            return float(x)
        except Exception:
            raise _fail() from None

    def __hash__(self):
        raise _fail()

    def __iter__(self):
        raise _fail()

    def __len__(self):
        raise _fail()

    def __getitem__(self, k):
        raise _fail()

    def __call__(self, *a, **k):
        raise _fail()

    def __str__(self):
        raise _fail()

    def __format__(self, spec):
        raise _fail()

    def __repr__(self):
        if ws._ST is not None:
            ws._ST.failed = True
        return f"Lanes({self.v!r})"

    def __round__(self, n=None):
        return _map1(round, self.v) if n is None else _map2(round, self.v, n)

    def __divmod__(self, other):
        qr = _map2(divmod, self.v, other).v
        return Lanes([q for q, _ in qr]), Lanes([r for _, r in qr])

    def __rdivmod__(self, other):
        qr = _rmap2(divmod, self.v, other).v
        return Lanes([q for q, _ in qr]), Lanes([r for _, r in qr])


def _map1(op, v):
    try:
        return Lanes(list(map(op, v)))
    except Exception:
        raise _fail() from None


def _map2(op, v, other):
    try:
        if other.__class__ is Lanes:
            return Lanes(list(map(op, v, other.v)))
        return Lanes(list(map(op, v, repeat(other, len(v)))))
    except Exception:
        raise _fail() from None


def _rmap2(op, v, other):
    try:
        return Lanes(list(map(op, repeat(other, len(v)), v)))
    except Exception:
        raise _fail() from None


def _binary(op):
    def method(self, other):
        return _map2(op, self.v, other)
    return method


def _reflected(op):
    def method(self, other):
        return _rmap2(op, self.v, other)
    return method


def _unary(op):
    def method(self):
        return _map1(op, self.v)
    return method


for _name, _op in (("add", operator.add), ("sub", operator.sub), ("mul", operator.mul),
                   ("truediv", operator.truediv), ("floordiv", operator.floordiv), ("mod", operator.mod),
                   ("pow", operator.pow), ("lshift", operator.lshift), ("rshift", operator.rshift),
                   ("and", operator.and_), ("or", operator.or_), ("xor", operator.xor),
                   ("matmul", operator.matmul)):
    setattr(Lanes, f"__{_name}__", _binary(_op))
    setattr(Lanes, f"__r{_name}__", _reflected(_op))
for _name, _op in (("lt", operator.lt), ("le", operator.le), ("gt", operator.gt), ("ge", operator.ge),
                   ("eq", operator.eq), ("ne", operator.ne)):
    setattr(Lanes, f"__{_name}__", _binary(_op))
for _name, _op in (("neg", operator.neg), ("pos", operator.pos), ("abs", abs), ("invert", operator.invert),
                   ("trunc", math.trunc), ("floor", math.floor), ("ceil", math.ceil)):
    setattr(Lanes, f"__{_name}__", _unary(_op))


# ------------------------------------------------------------------ counted arithmetic on lanes
# (warpsim's add, sub, mul and div need nothing more: their operator works on Lanes.)


def fma(st, a, b, c):
    """``warpsim.fma`` for a warp: logs one instruction of 2 FLOPs per lane."""
    f = st.frame or ws._find_frame(st)
    st.keys.append(f.f_lasti + _FMA_KEY)
    st.idx.append(st.ftup[1])
    st.steps -= st.live
    if st.steps <= 0:
        raise _fail()
    ca, cb, cc = a.__class__ is Lanes, b.__class__ is Lanes, c.__class__ is Lanes
    try:
        if ca and cb:
            out = _new(Lanes)
            out.memo = None
            out.f = 1
            if cc:
                out.v = [x * y + z for x, y, z in zip(a.v, b.v, c.v)]
            else:
                out.v = [x * y + c for x, y in zip(a.v, b.v)]
            return out
        if not (ca or cb or cc):
            return a * b + c
        n = st.live
        return Lanes([x * y + z for x, y, z in zip(a.v if ca else repeat(a, n), b.v if cb else repeat(b, n),
                                                   c.v if cc else repeat(c, n))])
    except Exception:
        raise _fail() from None


def _fmax1(a, b):
    return a if a >= b else b


def fmax(st, a, b):
    _log_flop(st, 1)
    if a.__class__ is not Lanes and b.__class__ is not Lanes:
        return _fmax1(a, b)
    n = st.live
    try:
        return Lanes(list(map(_fmax1, a.v if a.__class__ is Lanes else repeat(a, n),
                              b.v if b.__class__ is Lanes else repeat(b, n))))
    except Exception:
        raise _fail() from None


# FP32's range, where the simulator models it (calc.sim.arith.exp): e^x past FP32_MAX is inf
FP32_MAX = 3.4028234663852886e38
EXP_LIMIT = math.log(FP32_MAX)      # 88.72...


def exp(st, x):
    # An exponential past FP32's range goes to the per-thread executor, which records where.
    if x.__class__ is not Lanes:
        if x > EXP_LIMIT:
            raise _fail()
        _log_flop(st, 1)
        return math.exp(x)
    if max(x.v) > EXP_LIMIT:
        raise _fail()
    _log_flop(st, 1)
    return _map1(math.exp, x.v)


# ------------------------------------------------------------------ arrays, a warp's access at a time

_INT = {int}
_FLOAT = {float}
_NUMBERS = {int, float}


def _in_range(lanes: Lanes, n: int) -> None:
    """``_lane_range`` of a Lanes value, remembered on it (threadIdx's Lanes live all launch)."""
    memo = lanes.memo
    if memo is None:
        memo = lanes.memo = {}
    key = ("range", n)
    if key not in memo:
        _lane_range(lanes.v, n)
        memo[key] = True


def _lane_range(v: list, n: int) -> None:
    """Every lane's index in 0 .. n-1 (anything else: the per-thread executor reports it)."""
    try:
        if min(v) < 0 or max(v) >= n:
            raise _fail()
    except _Fallback:
        raise
    except Exception:
        raise _fail() from None


def _log(st, a, rid: int, ks) -> None:
    f = st.frame or ws._find_frame(st)
    st.keys.append(f.f_lasti + rid)
    st.idx.append(ks)
    st.steps -= st.live
    if st.steps <= 0:
        raise _fail()


def _gather(a, st, ks, out):
    """Read elements ``ks`` (one per lane) of ``a``, log the load, return ``out`` or the values."""
    data = a.data
    try:
        vals = [data[k] for k in ks]
    except Exception:
        raise _fail() from None
    if a._npoison and ws.POISON in vals:
        raise _fail()
    f = st.frame or ws._find_frame(st)
    st.keys.append(f.f_lasti + a._r)
    st.idx.append(ks)
    st.steps -= st.live
    if st.steps <= 0:
        raise _fail()
    if out is not None:
        return out
    out = Lanes(vals)
    if a.dtype in ws._FLOAT_TYPES:
        out.f = 1
    return out


def _scatter(a, st, ks, value) -> None:
    if value.__class__ is Lanes:
        if value.f != 1 and not (a.dtype not in ws._FLOAT_TYPES and set(map(type, value.v)) <= _NUMBERS) and \
                set(map(type, value.v)) != _FLOAT:
            raise _fail()  # ints into a float array (made floats), or not numbers: per thread
    elif value.__class__ is not float and not (value.__class__ is int and a.dtype not in ws._FLOAT_TYPES):
        raise _fail()
    _log(st, a, a._w, ks)
    data = a.data
    if a._npoison:  # elements written for the first time (a store writes no POISON)
        a._npoison -= len({k for k in ks if data[k] is ws.POISON})
    if value.__class__ is Lanes:
        for k, x in zip(ks, value.v):
            data[k] = x
    else:
        for k in ks:
            data[k] = value


class _V1:
    """Loads and stores of a 1-D array by a whole warp."""

    __slots__ = ()

    def __getitem__(self, i):
        st = self._st
        if i.__class__ is Lanes:
            ks = i.v
            _in_range(i, self.n)
            return _gather(self, st, ks, None)
        if i.__class__ is not int or not 0 <= i < self.n:
            raise _fail()
        v = self.data[i]
        return _gather(self, st, [i] * st.live, v)

    def __setitem__(self, i, value):
        st = self._st
        if i.__class__ is Lanes:
            ks = i.v
            _lane_range(ks, self.n)
            _ints(ks)
        elif i.__class__ is int and 0 <= i < self.n:
            ks = [i] * st.live
        else:
            raise _fail()
        _scatter(self, st, ks, value)


def _ints(v: list) -> None:
    if set(map(type, v)) != _INT:  # a store takes ints only (not bools), as the per-thread one
        raise _fail()


def _flat2(a, st, index, store: bool = False) -> list:
    """Each lane's flat element of ``a[i, j]`` (a 2-D array), bounds checked per dimension: a tuple,
    remembered on a Lanes index with a number beside it (the same tuple object each time)."""
    if index.__class__ is not tuple or len(index) != 2:
        raise _fail()
    i, j = index
    s0, s1 = a._s0, a._s1
    ci, cj = i.__class__, j.__class__
    if ci is Lanes and cj is int or ci is int and cj is Lanes:  # a lane index and a number: remembered
        # memo[the shape's key + 4 · number + 2 · store + (1 if the lanes pick the column)]
        key = a._mkey + (4 * j + 2 * store if ci is Lanes else 4 * i + 2 * store + 1)
        lanes = i if ci is Lanes else j
        memo = lanes.memo
        if memo is None:
            memo = lanes.memo = {}
        ks = memo.get(key)
        if ks is None:
            ks = memo[key] = _flat2_lanes(a, st, i, j, ci, cj, s0, s1, store)
        return ks
    return _flat2_lanes(a, st, i, j, ci, cj, s0, s1, store)


def _flat2_lanes(a, st, i, j, ci, cj, s0, s1, store) -> list:
    n = st.live
    if ci is Lanes:
        _lane_range(i.v, s0)
        if store:
            _ints(i.v)
        rows = map(_mul, i.v, repeat(s1, n))
    elif ci is int and 0 <= i < s0:
        rows = repeat(i * s1, n)
    else:
        raise _fail()
    if cj is Lanes:
        _lane_range(j.v, s1)
        if store:
            _ints(j.v)
        cols = j.v
    elif cj is int and 0 <= j < s1:
        if ci is int:
            return (i * s1 + j,) * n
        cols = repeat(j, n)
    else:
        raise _fail()
    return tuple(map(_add, rows, cols))


class _V2:
    """Loads and stores of a 2-D array by a whole warp: ``a[i, j]``, or ``a[i][j]`` through a row."""

    __slots__ = ()

    def __getitem__(self, index):
        st = self._st
        c = index.__class__
        if c is tuple:  # the hot path: lanes and a number, elements remembered
            try:
                i, j = index
            except ValueError:
                raise _fail() from None
            ks = None
            if i.__class__ is Lanes:
                if j.__class__ is int and i.memo is not None:
                    ks = i.memo.get(self._mkey + 4 * j)
            elif i.__class__ is int and j.__class__ is Lanes and j.memo is not None:
                ks = j.memo.get(self._mkey + 4 * i + 1)
            if ks is not None:
                data = self.data
                vals = [data[k] for k in ks]
                if self._npoison and ws.POISON in vals:
                    raise _fail()
                f = st.frame or ws._find_frame(st)
                st.keys.append(f.f_lasti + self._r)
                st.idx.append(ks)
                st.steps -= st.live
                if st.steps <= 0:
                    raise _fail()
                out = _new(Lanes)
                out.v = vals
                out.memo = None
                out.f = 1 if self.dtype in ws._FLOAT_TYPES else None  # a float array holds floats only
                return out
        if c is int or c is Lanes:
            if c is Lanes:
                _ints(index.v)  # a row is picked by an int, as in the per-thread executor
            return _VRow(self, index)
        ks = _flat2(self, st, index)
        if index[0].__class__ is int and index[1].__class__ is int:
            return _gather(self, st, ks, self.data[ks[0]])
        return _gather(self, st, ks, None)

    def __setitem__(self, index, value):
        st = self._st
        _scatter(self, st, _flat2(self, st, index, True), value)


class _VRow:
    """``tile[i]`` of a 2-D array in a warp, so that ``tile[i][j]`` works as in CUDA."""

    __slots__ = ("a", "i")

    def __init__(self, a, i):
        self.a, self.i = a, i

    def __getitem__(self, j):
        _row_column(j)
        return self.a[self.i, j]

    def __setitem__(self, j, value):
        _row_column(j)
        self.a[self.i, j] = value


def _row_column(j) -> None:
    """``tile[i][j]`` takes ints only (not bools), as the per-thread executor's row does."""
    if j.__class__ is Lanes:
        _ints(j.v)
    elif j.__class__ is not int:
        raise _fail()


class _VN:
    __slots__ = ()

    def __getitem__(self, index):
        raise _fail()

    def __setitem__(self, index, value):
        raise _fail()


def to_warp(a) -> None:
    """Give array ``a`` (attached to the launch) the warp-at-a-time accesses."""
    a.__class__ = _VEC[a.__class__]
    a._npoison = a.data.count(ws.POISON)  # while 0, no load needs to look for POISON
    a._mkey = _SHAPES.setdefault(a.shape, len(_SHAPES) + 1) << 44  # a Lanes index's memo: per shape


_SHAPES: dict = {}  # array shape -> a number, for the memo keys of Lanes indices (_flat2)


def _vclass(plain, access):
    return type("V" + plain.__name__.lstrip("_"), (access, plain), {"__slots__": ()})


_VEC = {plain: _vclass(plain, access) for plain, access in (
    (ws.Array, _V1), (ws._Array2D, _V2), (ws._ArrayND, _VN),
    (ws.SharedArray, _V1), (ws._Shared2D, _V2), (ws._SharedND, _VN))}
_PLAIN = {v: k for k, v in _VEC.items()}


# ------------------------------------------------------------------ which kernels may run here

_BUILTINS = (range, len, min, max, abs, int, float, bool, sum, round, divmod, pow, enumerate, zip,
             reversed, all, any)
_OK = {id(f) for f in _BUILTINS} | {id(math)}
#: attributes that reach around the counted accesses (raw data, vector views) or Python's insides
_RAW = {"data", "tolist", "vec"}
_BAD_OPS = {_OPMAP[n] for n in ("STORE_GLOBAL", "DELETE_GLOBAL", "PUSH_EXC_INFO", "IS_OP", "STORE_ATTR",
                                "DELETE_ATTR", "IMPORT_NAME", "IMPORT_FROM", "BEFORE_WITH", "SETUP_WITH",
                                "SETUP_FINALLY", "SETUP_EXCEPT")
            if _OPMAP and n in _OPMAP}
_BAD_OPS |= {code for name, code in (_OPMAP or {}).items() if "IF_NONE" in name or "IF_NOT_NONE" in name}
_DEREF_STORES = {_OPMAP[n] for n in ("STORE_DEREF", "DELETE_DEREF") if _OPMAP and n in _OPMAP}


def _constant(x) -> bool:
    if x is None or x.__class__ in (int, float, bool, str):
        return True
    return x.__class__ is tuple and all(map(_constant, x))


def _codes(code):
    yield code
    for c in code.co_consts:
        if isinstance(c, type(code)):
            yield from _codes(c)


def eligible(kernel, args, safe: frozenset = frozenset()) -> bool:
    """Whether ``kernel(*args)`` can run a warp at a time with results the per-thread executor
    would give (see the module docstring); when not, it runs per thread."""
    if _OPMAP is None:
        return False
    for a in args:
        if not (isinstance(a, ws.Array) or _constant(a)):
            return False
    defaults = tuple(kernel.__defaults__ or ()) + tuple((kernel.__kwdefaults__ or {}).values())
    if not all(map(_constant, defaults)):  # a list default is one object every call shares
        return False
    g = kernel.__globals__
    b = g.get("__builtins__", builtins)
    b = b if isinstance(b, dict) else vars(b)
    missing = object()
    stores_deref = False
    for code in _codes(kernel.__code__):
        raw = code.co_code
        ops = set(raw[0::2])
        if ops & _BAD_OPS:
            return False
        stores_deref = stores_deref or bool(ops & _DEREF_STORES)
        for name in code.co_names:
            if name in _RAW or name.startswith("_") and id(g.get(name)) not in safe:
                return False
            x = g.get(name, missing)
            if x is missing:
                x = b.get(name, missing)
            if x is not missing and id(x) not in _OK and id(x) not in safe and not _constant(x):
                return False
    if kernel.__closure__:
        if stores_deref:
            return False
        for cell in kernel.__closure__:
            try:
                x = cell.cell_contents
            except ValueError:
                return False
            if not _constant(x):
                return False
    return True


# ------------------------------------------------------------------ races, decided a warp instruction at a time


# ------------------------------------------------------------------ the launch, a warp at a time


def _lane_index(threads: list):
    """threadIdx.x, .y, .z of a warp: a plain int where the lanes agree, else Lanes."""
    out = []
    for v in ([t.x for t in threads], [t.y for t in threads], [t.z for t in threads]):
        out.append(v[0] if v.count(v[0]) == len(v) else Lanes(v))
    return out


def run(kernel, g, b, args, dev, max_steps: int, l2: int, arrays: list, safe: frozenset = frozenset(),
        check_races: bool = True):
    """The launch's Report, computed a warp at a time; None when the per-thread executor must run
    it (the arrays then hold their launch-time contents again)."""
    if not eligible(kernel, args, safe):
        return None
    arrays = list(dict.fromkeys(arrays))
    saved = [a.data[:] for a in arrays]
    try:
        report = _run(kernel, g, b, args, dev, max_steps, l2, arrays, check_races)
    except _Fallback:
        report = None
    except Exception:  # any error: the per-thread executor finds which thread meets it first
        report = None
    if report is None:
        for a, d in zip(arrays, saved):
            a.data[:] = d
    return report


def _run(kernel, g, b, args, dev, max_steps, l2, arrays, check_races=True):
    st = ws._State(max_steps)
    st.device = dev
    is_gen = ws._is_generator_function(kernel)
    st.generator = is_gen
    st.kcode = code = kernel.__code__
    st.vec = True
    st.to_warp = to_warp
    top = 0
    for a in arrays:
        a._attach(st, top)
        to_warp(a)
        top = -(-(top + a.nbytes) // ws.GLOBAL_ALIGN) * ws.GLOBAL_ALIGN
    nt = b.count
    threads = list(b.indices())
    blocks = list(g.indices())
    nwarps = -(-nt // WARP_SIZE)
    warps = []  # (lane indices, live, FLOP tuples) per warp
    for w in range(nwarps):
        lo, hi = w * WARP_SIZE, min(nt, (w + 1) * WARP_SIZE)
        live = hi - lo
        warps.append((_lane_index(threads[lo:hi]), live, ((1,) * live, (2,) * live), tuple(range(live))))
    record: list = []
    lines = ws._Lines()
    races = _Races()
    sites: dict = {}
    rids = st.rids
    ws.blockDim._set(b)
    ws.gridDim._set(g)
    tidx = ws.threadIdx
    ws._ST = st
    try:
        for bnum, bidx in enumerate(blocks):
            ws.blockIdx._set(bidx)
            st.block = bidx
            st.shared = {}
            st.shared_top = 0
            gens: list = [None] * nwarps
            epoch = 0
            while True:
                line = None
                finished = 0
                logs = []
                for w in range(nwarps):
                    (tidx.x, tidx.y, tidx.z), live, st.ftup, lane_ids = warps[w]
                    st.live = live
                    st.keys = keys = []
                    st.idx = idx = []
                    try:
                        if epoch == 0:
                            st.frame = None
                            r = kernel(*args)
                            if not is_gen:
                                if st.failed or st.error is not None or st.pending_barrier is not None:
                                    raise _Fallback()
                                finished += 1
                                logs.append((keys, idx, live, lane_ids))
                                continue
                            gens[w] = r
                            st.frame = r.gi_frame
                            y = next(r)
                        else:
                            gen = gens[w]
                            st.frame = gen.gi_frame
                            y = next(gen)
                    except StopIteration:
                        finished += 1
                        y = None
                    if st.failed or st.error is not None or st.pending_barrier is not y:
                        raise _Fallback()
                    st.pending_barrier = None
                    if y is not None:
                        if line is None:
                            line = y.line
                        elif y.line != line:
                            raise _Fallback()  # warps at different barriers: BarrierError, per thread
                    logs.append((keys, idx, live, lane_ids))
                if finished and line is not None:
                    raise _Fallback()  # some warps finished, others wait: BarrierError, per thread
                start = len(record)
                for w, (keys, idx, live, lane_ids) in enumerate(logs):
                    for key, ks in zip(keys, idx):
                        s = sites.get(key)
                        if s is None:
                            site = lines.site(code, key & ws._OFFSET_MASK)
                            arr, kind, size = rids[key >> ws._KEY_SHIFT]
                            s = sites[key] = (site[0], kind, arr, arr.base if arr is not None else 0, size,
                                              (code, site))
                        record.append(Instr(bnum, w, epoch, s[0], s[1], s[2], s[3], s[4], lane_ids,
                                            ks if ks.__class__ is tuple else tuple(ks), live, s[5]))
                if check_races:
                    races.check(record[start:])
                if line is None:
                    break
                epoch += 1
            for arr in st.shared.values():
                arr.__class__ = _PLAIN[arr.__class__]
    finally:
        ws._ST = None
        for arr in st.shared.values():
            if arr.__class__ in _PLAIN:
                arr.__class__ = _PLAIN[arr.__class__]
        for a in arrays:
            a.__class__ = _PLAIN.get(a.__class__, a.__class__)
            a._detach()
    return Report(kernel, g, b, dev, record, ws._source_of(kernel), l2, {a.name: a for a in arrays})


ws.SIM_FILES.add(_fail.__code__.co_filename)
ws.SIM_FILES.add(run.__code__.co_filename)
