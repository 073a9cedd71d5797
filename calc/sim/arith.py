"""The counted arithmetic: what a kernel's floating-point operators, ``max``/``min`` and
``math.exp`` become (``calc.sim.lang`` rewrites the kernel's operators into these calls), for
both executors: one FLOP instruction per call, two FLOPs for a fused multiply-add."""

from __future__ import annotations

import math
import operator

from . import memory as mem
from . import warp
from .memory import _KEY_SHIFT, _FMA_KEY, _find_frame, _log_flop, _step_limit, _State

def _flop(n: int) -> None:
    st = mem._ST
    if st is not None:
        if st.vec:
            return _log_flop(st, n)
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
    st = mem._ST
    if st is not None:
        if st.vec:
            return warp.fma(st, a, b, c)
        f = st.frame or _find_frame(st)
        st.keys.append(f.f_lasti + _FMA_KEY)
        st.idx.append(2)
        st.steps -= 1
        if st.steps <= 0:
            raise _step_limit(st)
    return a * b + c


def fmax(a, b):
    """max(a, b), one FLOP (CUDA's fmaxf)."""
    st = mem._ST
    if st is not None and st.vec:
        return warp.fmax(st, a, b)
    _flop(1)
    return a if a >= b else b


# The simulator computes in IEEE double (Python floats) and models FP32's range where a kernel
# falls out of it in practice: e^x above FP32's largest value (3.4e38, so x > 88.72) is inf, as
# CUDA's expf gives. A softmax that skips the row's maximum then reads inf / inf = nan, as it would
# on the GPU, and the launch records where (Report.overflow) for the checker's message.
FP32_MAX, EXP_LIMIT = warp.FP32_MAX, warp.EXP_LIMIT


def exp(x):
    """e^x, one FLOP (the book counts a softmax's exponential as one operation); inf past FP32's range."""
    st = mem._ST
    if st is not None and st.vec:
        return warp.exp(st, x)
    _flop(1)
    if x > EXP_LIMIT:
        if st is not None and st.overflow is None:
            st.overflow = (mem._kernel_line(), st.thread, st.block, float(x))
        return math.inf
    return math.exp(x)


def atomic_add(array: Array, index, value):
    """``atomicAdd(&array[index], value)``: adds and returns the old value; atomics never race."""
    st = _state()
    if not isinstance(array, Array):
        raise KernelError("atomic_add() takes an array, an index and a value", block=st.block, thread=st.thread,
                          line=_kernel_line())
    return array._atomic_add(index, value)


mem.SIM_FILES.add(add.__code__.co_filename)


# ------------------------------------------------------------------ the operators of Numba CUDA kernels
# calc.sim.lang rewrites a kernel's + - * / (those not integer by the kernel's own text) into these
# calls: they count one FLOP when an operand is a float, none on integers (index arithmetic).

_Lanes = warp.Lanes


def _kind(x) -> int:
    """1 for a float, 0 for anything else; for Lanes, every lane's (lanes that differ: fall back)."""
    c = x.__class__
    if c is float:
        return 1
    if c is not _Lanes:
        return 0
    k = x.f
    if k is None:
        types = set(map(type, x.v))
        if float in types:
            if len(types) != 1:
                raise mem._fail()  # some lanes hold floats, others not: their counts would differ
            k = 1
        else:
            k = 0
        x.f = k
    return k


def _lanes2(op, a, b):
    st = mem._ST
    counted = _kind(a) or _kind(b)
    if counted and st is not None:
        _log_flop(st, 1)
    if a.__class__ is _Lanes:
        out = warp._map2(op, a.v, b)
    else:
        out = warp._rmap2(op, b.v, a)
    if counted:
        out.f = 1
    return out


def _binary(op):
    def counted(a, b):
        ca, cb = a.__class__, b.__class__
        if ca is _Lanes or cb is _Lanes:
            return _lanes2(op, a, b)
        if ca is float or cb is float:
            _flop(1)
        return op(a, b)
    return counted


add_ = _binary(operator.add)
sub_ = _binary(operator.sub)
mul_ = _binary(operator.mul)
div_ = _binary(operator.truediv)
add_.__name__, sub_.__name__, mul_.__name__, div_.__name__ = "add_", "sub_", "mul_", "div_"


def fma_(a, b, c):
    """``a * b + c`` as the kernel wrote it: one fused instruction of two FLOPs when the product is
    floating-point; an integer product is free and only the addition may count."""
    ca, cb, cc = a.__class__, b.__class__, c.__class__
    if ca is _Lanes or cb is _Lanes or cc is _Lanes:
        if _kind(a) or _kind(b):
            st = mem._ST
            out = warp.fma(st, a, b, c)
            if out.__class__ is _Lanes:
                out.f = 1
            return out
        return add_(_lanes2(operator.mul, a, b) if ca is _Lanes or cb is _Lanes else a * b, c)
    if ca is float or cb is float:
        return fma(a, b, c)
    if cc is float:
        _flop(1)
    return a * b + c


def _pick(op):
    def counted(*args):
        if len(args) != 2:
            if len(args) < 2:
                return (max if op is operator.ge else min)(*args)
            out = args[0]
            for x in args[1:]:
                out = counted(out, x)
            return out
        a, b = args
        ca, cb = a.__class__, b.__class__
        if ca is _Lanes or cb is _Lanes:
            fl = _kind(a) or _kind(b)
            if fl:
                _log_flop(mem._ST, 1)
                n = mem._ST.live
                va = a.v if ca is _Lanes else [a] * n
                vb = b.v if cb is _Lanes else [b] * n
                out = _Lanes([float(x if op(x, y) else y) for x, y in zip(va, vb)])
                out.f = 1
                return out
            return warp._map2(lambda x, y: x if op(x, y) else y, a.v, b) if ca is _Lanes else \
                warp._rmap2(lambda y, x: x if op(x, y) else y, b.v, a)
        if ca is float or cb is float:
            _flop(1)
            return float(a if op(a, b) else b)
        return a if op(a, b) else b
    return counted


counted_max = _pick(operator.ge)
counted_min = _pick(operator.le)
counted_max.__name__, counted_min.__name__ = "max", "min"


def counted1(fn, x):
    """``fn(x)`` (``math.sqrt``), one FLOP."""
    if x.__class__ is _Lanes:
        st = mem._ST
        _log_flop(st, 1)
        out = warp._map1(fn, x.v)
        out.f = 1
        return out
    _flop(1)
    return fn(x)
