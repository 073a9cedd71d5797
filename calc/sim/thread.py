"""The per-thread executor: every thread of a launch run alone, barrier interval by barrier
interval, its accesses logged and regrouped into warp instructions (see ``calc.sim``)."""

from __future__ import annotations

from typing import Callable, Optional, Sequence

from ..cuda import WARP_SIZE, Dim3
from . import memory as mem
from .counts import Instr, Report
from .errors import BarrierError, KernelError, KernelException, Race, StepLimit, _fmt3
from .memory import (GLOBAL_ALIGN, _Barrier, _KEY_SHIFT, _Lines, _OFFSET_MASK, _State, _is_generator_function,
                     _source_of, _unyielded, blockDim, blockIdx, gridDim, threadIdx)
from .races import ThreadRaces as _Races

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


class _NoRaces:
    """``launch(..., races=False)``: no race is looked for (to show what a racy kernel writes)."""

    def check(self, instrs) -> None:
        pass


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
        if tb.tb_frame.f_code.co_filename not in mem.SIM_FILES:
            line = tb.tb_lineno
        tb = tb.tb_next
    err = KernelException(f"{type(exc).__name__}: {exc}", block=st.block, thread=st.thread, line=line)
    err.__cause__ = exc
    return err


def run(kernel: Callable, g: Dim3, b: Dim3, args: Sequence, dev, max_steps: int, l2: int, arrays: list,
        check_races: bool = True) -> Report:
    """The launch's Report, every thread run alone (``calc.sim.launch`` validated the launch)."""
    is_gen = _is_generator_function(kernel)
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
    races = _Races(b, blocks) if check_races else _NoRaces()
    blockDim._set(b)
    gridDim._set(g)
    nwarps = -(-nt // WARP_SIZE)
    interval = 0
    mem._ST = st
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
                                if st.error is not None:
                                    raise st.error  # the kernel caught it; the launch fails all the same
                                finished.append(tid)
                                continue
                        else:
                            gen = gens[tid]
                            st.frame = gen.gi_frame
                            y = next(gen)
                        if st.error is not None:
                            raise st.error
                    except StopIteration:
                        if st.error is not None:
                            raise st.error from None
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
        mem._ST = None
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
    parts = [f"{_span(tids, threads)} {'wait' if len(tids) > 1 else 'waits'} at the cuda.syncthreads() on line {line}"
             for line, tids in waiting.items()]
    if finished:
        parts.append(f"{_span(finished, threads)} finished without reaching it")
    first_line = next(iter(waiting))
    return BarrierError("cuda.syncthreads() reached by only some threads of the block (a barrier in divergent code "
                        "is undefined on the GPU): " + "; ".join(parts) +
                        ". Keep every thread on the path to each cuda.syncthreads(): guard the work, not the barrier.",
                        block=bidx, line=first_line)


mem.SIM_FILES.add(_wrap.__code__.co_filename)
