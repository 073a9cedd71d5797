"""Races, found from the record of warp instructions at the end of each barrier interval, for the
per-thread executor (``ThreadRaces``: names both accesses) and the warp executor (``WarpRaces``:
the same decisions, no messages, since a race hands the launch to the per-thread executor)."""

from __future__ import annotations

from itertools import repeat
from typing import Optional

from ..cuda import WARP_SIZE, Dim3
from .counts import ATOM, LD, ST, Instr
from .errors import Race, _fmt3, _subscript
from .memory import _Fallback

# ------------------------------------------------------------------ the launch

def _thread_of(tid: int, bd: Dim3) -> Dim3:
    return Dim3(tid % bd.x, (tid // bd.x) % bd.y, tid // (bd.x * bd.y))


class ThreadRaces:
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
        self.first_atom: dict = {}   # ... the first atomic update, and the first from another block
        self.other_atom: dict = {}

    def error(self, ins: Instr, tid: int, x: int, other_tid: int, other_block: Optional[int],
              what: str, verb: str, other_line: Optional[int]) -> Race:
        arr = ins.array
        idx = arr._unflat(x)
        other = _fmt3(_thread_of(other_tid, self.bd))
        on = f" on line {other_line}" if other_line is not None else ""
        if other_block is None:
            warp = "its own warp" if other_tid // WARP_SIZE == tid // WARP_SIZE else "another warp"
            who = (f"thread {other} of this block ({warp}) {verb}{on} between the same two cuda.syncthreads() "
                   "(threads run in no set order)" + (": a cuda.syncthreads() must come between the write and the "
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

    def _atomics(self, instrs: list) -> None:
        """An atomic races with a plain load or store of its element by another thread of the block
        in the same interval (two atomics do not race: the hardware orders them)."""
        atoms: dict = {}  # array -> {element: [(thread, line) of the first two threads updating it]}
        for ins in instrs:
            if ins.kind == ATOM:
                d = atoms.setdefault(ins.array, {})
                base = ins.warp * WARP_SIZE
                for lane, e in zip(ins.lanes, ins.index):
                    lst = d.setdefault(e, [])
                    if len(lst) < 2 and all(t != base + lane for t, _ in lst):
                        lst.append((base + lane, ins.line))
        if not atoms:
            return
        for ins in instrs:
            if ins.kind not in (LD, ST) or ins.array not in atoms:
                continue
            d = atoms[ins.array]
            span = ins.size // ins.array.itemsize
            base = ins.warp * WARP_SIZE
            for lane, e in zip(ins.lanes, ins.index):
                for x in range(e, e + span):
                    for t, line in d.get(x, ()):
                        if t != base + lane:
                            raise self.error(ins, base + lane, x, t, None,
                                             "read of" if ins.kind == LD else "write to",
                                             "updates with cuda.atomic.add", line)

    def _global_atomic(self, ins, arr, base: int, b: int) -> None:
        """An atomic update of global memory races with a plain access of its element from another
        block, at any time of the launch (no barrier orders blocks)."""
        plain = (self.first_write.get(arr), self.first_read.get(arr), self.other_read.get(arr))
        first = self.first_atom.setdefault(arr, {})
        other = self.other_atom.setdefault(arr, {})
        for lane, x in zip(ins.lanes, ins.index):
            for d, verb in zip(plain, ("writes", "reads", "reads")):
                o = d.get(x) if d else None
                if o is not None and o[0] != b:
                    raise self.error(ins, base + lane, x, o[1], o[0], "atomic update of", verb, o[2])
            o = first.setdefault(x, (b, base + lane, ins.line))
            if o[0] != b:
                other.setdefault(x, (b, base + lane, ins.line))

    def check(self, instrs: list) -> None:
        """Raise ``Race`` for the first race among one interval's instructions (one block)."""
        self._atomics(instrs)
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
            if arr is None or arr.space != "global":
                continue
            span = ins.size // arr.itemsize
            base, b = ins.warp * WARP_SIZE, ins.block
            if ins.kind == ATOM:
                self._global_atomic(ins, arr, base, b)
                continue
            atoms = (self.first_atom.get(arr), self.other_atom.get(arr))
            if atoms[0]:
                for lane, e in zip(ins.lanes, ins.index):
                    for x in range(e, e + span):
                        for d in atoms:
                            o = d.get(x) if d else None
                            if o is not None and o[0] != b:
                                raise self.error(ins, base + lane, x, o[1], o[0],
                                                 "read of" if ins.kind == LD else "write to",
                                                 "updates with cuda.atomic.add", o[2])
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


class WarpRaces:
    """Whether an interval's instructions hold a race, by the rules of ``ThreadRaces``
    (the same decisions; no messages, since a race hands the launch to the per-thread executor,
    whose ``_Races`` words it). Lanes are whole warps and every access is one element wide."""

    def __init__(self):
        self.first_write: dict = {}  # global array -> {element: block of its first write}
        self.first_read: dict = {}   # ... of its first read
        self.other_read: dict = {}   # ... of its first read from a block not its first reader's

    def check(self, instrs: list) -> None:
        writes: dict = {}  # array -> {element: thread}, this interval
        tids: dict = {}
        for ins in instrs:
            if ins.kind == "st":
                d = writes.get(ins.array)
                if d is None:
                    d = writes[ins.array] = {}
                t = tids.get((ins.warp, ins.live))
                if t is None:
                    t = tids[(ins.warp, ins.live)] = list(range(ins.warp * WARP_SIZE, ins.warp * WARP_SIZE + ins.live))
                if list(map(d.setdefault, ins.index, t)) != t:
                    raise _Fallback()  # an element another thread of the block writes
        if writes:
            for ins in instrs:
                if ins.kind != "ld":
                    continue
                d = writes.get(ins.array)
                if d and not d.keys().isdisjoint(ins.index):
                    base = ins.warp * WARP_SIZE
                    for lane, x in enumerate(ins.index):
                        w = d.get(x)
                        if w is not None and w != base + lane:
                            raise _Fallback()
        for ins in instrs:
            arr = ins.array
            if arr is None or arr.space != "global":
                continue
            b = ins.block
            if ins.kind == "ld":
                theirs = self.first_write.get(arr)
                if theirs and not theirs.keys().isdisjoint(ins.index):
                    if any(theirs.get(x, b) != b for x in ins.index):
                        raise _Fallback()
                mine = self.first_read.get(arr)
                if mine is None:
                    mine = self.first_read[arr] = {}
                firsts = list(map(mine.setdefault, ins.index, repeat(b)))
                mine_too = firsts.count(b)
                if mine_too != len(firsts):      # read before by another block: keep this block too
                    others = self.other_read.get(arr)
                    if others is None:
                        others = self.other_read[arr] = {}
                    if not mine_too:             # the usual case: every lane's element (in C)
                        list(map(others.setdefault, ins.index, repeat(b)))
                    else:
                        for x, f in zip(ins.index, firsts):
                            if f != b:
                                others.setdefault(x, b)
            else:
                theirs = self.first_read.get(arr)
                if theirs and not theirs.keys().isdisjoint(ins.index):
                    if any(theirs.get(x, b) != b for x in ins.index):
                        raise _Fallback()
                    others = self.other_read.get(arr)
                    if others and any(others.get(x, b) != b for x in ins.index):
                        raise _Fallback()
                mine = self.first_write.get(arr)
                if mine is None:
                    mine = self.first_write[arr] = {}
                if any(map(b.__ne__, map(mine.setdefault, ins.index, repeat(b)))):
                    raise _Fallback()
