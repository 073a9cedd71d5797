"""Counts from a warp simulator's record: sectors, lines, wavefronts, divergence, FLOPs, HBM bytes.

``calc.warpsim`` runs a kernel and records each warp instruction once (``Instr``:
which lanes, which array, which elements); everything a reader sees is a
function over that record, here, so a new count is a new function, not a new
hook in the executor (the lesson of triton-viz, which records each load and
store once and derives every view from the record).

- ``sectors_of``, ``lines_of``, ``bytes_requested``: a global instruction's 32-byte
  sectors and 128-byte lines (CUDA C++ Best Practices Guide, coalescing)
- ``phases``, ``wavefronts_of``: a shared instruction's passes through 32 banks of
  4 bytes (CUDA C++ Programming Guide, shared memory, compute capability 5.x and later)
- ``Counts``, ``counts_of``, ``sum_counts``: totals over any set of instructions
- ``l2_traffic``: HBM bytes through an LRU cache of sectors (the model is in ``calc.warpsim``'s docstring)
- ``Report``: what ``warpsim.launch`` returns; ``Roofline``: its place on a device's roofline
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence

from .. import specs
from ..cuda import LINE_BYTES, SECTOR_BYTES, SMEM_BANK_BYTES, WARP_SIZE, Dim3

# kinds of warp instruction
LD, ST, ATOM, FLOP = "ld", "st", "atom", "flop"


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
    array: Any  # a warpsim.Array, or None for arithmetic
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


def sum_counts(instrs, _memo: Optional[dict] = None) -> Counts:
    """The counts of some warp instructions: every count is derived here from the record.

    ``_memo`` (a dict, kept by the caller while every instruction it saw is alive) remembers the
    counts of an index tuple seen before: instructions of a warp-at-a-time launch share them
    (``calc.warpvec``); a per-thread record's tuples are all distinct, and it is left out."""
    wi = act = div = gl = gs = ga = sec = lsec = ssec = lines = breq = sl = ss = wav = ideal = fl = 0
    memo = _memo
    last_flops, last_sum = None, 0
    for ins in instrs:
        n = len(ins.lanes)
        wi += 1
        act += n
        if n < ins.live:
            div += 1
        kind = ins.kind
        if kind == FLOP:
            if ins.index is last_flops:
                fl += last_sum
                continue
            if memo is None:
                fl += sum(ins.index)
                continue
            c = memo.get(id(ins.index))
            if c is None or c[0] is not ins.index or len(c) != 2:
                c = memo[id(ins.index)] = (ins.index, sum(ins.index))
            fl += c[1]
            last_flops, last_sum = c
            continue
        arr = ins.array
        c = memo.get(id(ins.index)) if memo is not None else None
        if (c is not None and c[0] is ins.index and c[1] is ins.lanes and c[2] == ins.base
                and c[3] == ins.size and c[4] == arr.itemsize and c[5] == arr.space):
            ns, nl, nb, w, p = c[6]
        else:
            if arr.space == "global":
                ns, nl = _sector_and_line_counts(ins)
                nb = len(set(ins.index)) * ins.size
                w = p = 0
            else:
                ns = nl = nb = 0
                w, p, _ = wavefronts_of(ins)
            if memo is not None:
                memo[id(ins.index)] = (ins.index, ins.lanes, ins.base, ins.size, arr.itemsize, arr.space,
                                       (ns, nl, nb, w, p))
        if arr.space == "global":
            sec += ns
            lines += nl
            breq += nb
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


def place(flops: int, hbm_bytes: int, device, dtype: str = "fp32") -> Roofline:
    """``flops`` of ``dtype`` arithmetic and ``hbm_bytes`` of traffic on ``device``'s roofline
    (a ``calc.specs`` name or Device, the reader's measured one included): time >= max(FLOPs /
    peak, bytes / bandwidth), intensity = FLOPs / bytes."""
    dev = specs.device(device) if isinstance(device, str) else device
    peak, bw = dev.peak_flops(dtype), dev.mem_bw
    return Roofline(dev.name, flops, hbm_bytes, flops / hbm_bytes if hbm_bytes else math.inf, peak, bw,
                    flops / peak, hbm_bytes / bw)


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
        self.executor = "thread"  # which executor of warpsim made the record ("warp" or "thread")

    # -- aggregation (one pass over the record, cached)
    def _aggregate(self) -> dict:
        if self._agg is None:
            by: dict = {}
            block, lines = None, {}
            for ins in self.record:  # block by block (the record's order): keyed by line within one
                if ins.block != block:
                    block, lines = ins.block, {}
                g = lines.get(ins.line)
                if g is None:
                    lines[ins.line] = by[(block, ins.line)] = [ins]
                else:
                    g.append(ins)
            # A warp-at-a-time record shares index tuples between instructions: remember their counts
            # (the record keeps every instruction alive, so an id in it stays its tuple's)
            memo = {} if self.executor == "warp" else None
            self._agg = {key: sum_counts(g, memo) for key, g in by.items()}
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

    # -- who wrote what (the block-grid figure, the thread-hierarchy chapter)
    def writes(self, name: str) -> list:
        """``[(element, block, thread)]`` of every store to array ``name``, in record order: the
        element as the kernel indexes it, ``block`` and ``thread`` as ``Dim3``."""
        blocks = list(self.grid.indices())
        bd = self.block
        out = []
        for ins in self.record:
            if ins.kind != ST or ins.array.name != name:
                continue
            arr = ins.array
            for lane, e in zip(ins.lanes, ins.index):
                tid = ins.warp * WARP_SIZE + lane
                t = Dim3(tid % bd.x, (tid // bd.x) % bd.y, tid // (bd.x * bd.y))
                out.append((arr._unflat(e), blocks[ins.block], t))
        return out

    def writer_of(self, name: str) -> dict:
        """``{element: (block, thread)}`` of the last store to each element of ``name``."""
        return {e: (b, t) for e, b, t in self.writes(name)}

    def writers(self, name: str) -> dict:
        """``{element: [(block, thread), ...]}``: every thread that stored to each element, once each."""
        by: dict = {}
        for e, b, t in self.writes(name):
            lst = by.setdefault(e, [])
            if (b, t) not in lst:
                lst.append((b, t))
        return by

    def races(self, name: str) -> dict:
        """The elements of ``name`` that more than one thread stored to, with those threads (a launch
        made with ``races=False``: otherwise the first such pair is a ``Race``)."""
        return {e: w for e, w in self.writers(name).items() if len(w) > 1}

    def thread_ids(self, name: str) -> dict:
        """``{element: the global linear thread number of its last writer}``."""
        from ..cuda import linear_block, linear_thread
        n = self.block.count
        return {e: linear_block(b, self.grid) * n + linear_thread(t, self.block)
                for e, (b, t) in self.writer_of(name).items()}

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
        return place(self.flops, self.hbm_bytes, device if device is not None else self.device, dtype)

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


def _file_line(filename: str, line: int) -> str:
    try:
        import linecache
    except ImportError:  # a trimmed standard library (the book's browser runtime) may lack it
        return ""
    return linecache.getline(filename, line).rstrip("\n")
