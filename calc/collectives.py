"""Collectives between accelerators: who sends which chunk where, bytes per link, time.

Sizes follow nccl-tests (doc/PERFORMANCE.md): ``n_bytes`` is the size ``S`` that nccl-tests
reports for the collective, so that algorithm bandwidth is ``S / t`` and bus bandwidth is
``S / t * busbw_factor(collective, p)``:

- all-reduce, broadcast: the buffer each GPU holds (input and output are both ``S``);
- all-gather: the OUTPUT each GPU ends with (each contributes ``S / p``);
- reduce-scatter: the INPUT each GPU starts with (each ends with ``S / p``);
- all-to-all: the buffer each GPU sends, ``S / p`` to every GPU including itself.

Algorithms: ``"ring"`` (p GPUs in a ring, each sending one chunk of ``S / p`` to its neighbour
per step; all-to-all as p - 1 shifted exchanges), ``"tree"`` (NCCL's double binary tree: two
binary trees, each carrying half the buffer, each GPU an inner node of at most one of them;
all-reduce only, as in NCCL; NCCL builds these trees between servers and chains the GPUs inside
each, so this tree is NCCL's with one GPU a server, and ``nccl_tree_steps`` counts NCCL's steps) and ``"switch"`` (the switch reduces and
multicasts: NVLink SHARP, NCCL's NVLS).

The schedule (``steps``) is the record; ``bytes_sent_received`` counts it. The closed forms in
``bytes_per_gpu_sent`` are checked against that count in the tests. The time model is alpha-beta:

    time = steps x alpha + bytes on the busiest GPU's busiest direction / bandwidth
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from .sources import Source
from .specs import NCCL_TESTS_PERF, NCCL_TUNING, Link

COLLECTIVES = ("all-reduce", "all-gather", "reduce-scatter", "all-to-all", "broadcast")
ALGORITHMS = ("ring", "tree", "switch")
SWITCH = -1  # the switch as a Transfer's src or dst (algorithm "switch")

#: NCCL's fixed cost of launching a ring collective with its low-latency protocol, in seconds
#: (baseLatencies, Ring / LL), paid once per collective on top of the per-step latency.
BASE_LATENCY_S = 6.6e-6
BASE_LATENCY_SOURCE = NCCL_TUNING.at("baseLatencies, Ring / LL protocol")
#: NCCL's constants for its Simple protocol (large messages) on a ring over NVLink, in seconds:
#: the per-step hwLatencies[NVLINK][Ring][Simple] and the once-per-collective baseLatencies[Ring][Simple].
SIMPLE_NVLINK_ALPHA_S, SIMPLE_BASE_LATENCY_S = 3.4e-6, 8.4e-6

_TREE_ONLY = ("all-reduce",)


def _check(collective: str, algorithm: str, p: int) -> None:
    if collective not in COLLECTIVES:
        raise ValueError(f"unknown collective {collective!r}; known: {', '.join(COLLECTIVES)}")
    if algorithm not in ALGORITHMS:
        raise ValueError(f"unknown algorithm {algorithm!r}; known: {', '.join(ALGORITHMS)}")
    if algorithm == "tree" and collective not in _TREE_ONLY:
        raise ValueError(f"NCCL runs {collective} as a ring or in the switch, never as a tree; "
                         f"its trees serve all-reduce only")
    if not isinstance(p, int) or p < 1:
        raise ValueError(f"p must be a whole number of GPUs >= 1, got {p!r}")


def busbw_factor(collective: str, p: int) -> float:
    """nccl-tests' bus-bandwidth factor: busbw = algbw x factor (doc/PERFORMANCE.md, 'Summary').

    all-reduce 2(p-1)/p; reduce-scatter, all-gather and all-to-all (p-1)/p; broadcast 1.
    """
    _check(collective, "ring", p)
    if collective == "all-reduce":
        return 2 * (p - 1) / p
    if collective == "broadcast":
        return 1.0
    return (p - 1) / p


BUSBW_SOURCE = NCCL_TESTS_PERF


def chunks(collective: str, algorithm: str, p: int) -> int:
    """How many equal chunks the schedule cuts the size ``S`` into."""
    _check(collective, algorithm, p)
    return 2 if algorithm == "tree" else p


# ----------------------------------------------------------------------------- schedule


@dataclass(frozen=True)
class Transfer:
    src: int  # a GPU 0..p-1, or SWITCH
    dst: int
    chunk: int
    op: str  # "copy" (dst takes src's chunk) or "reduce" (dst adds it to its own)


@dataclass(frozen=True)
class Step:
    index: int
    transfers: list = field(default_factory=list)
    phase: str = ""


def _ring(collective: str, p: int) -> list[Step]:
    out = []
    if collective in ("all-reduce", "reduce-scatter"):
        for s in range(p - 1):  # GPU i sends chunk (i - 1 - s) mod p on to i + 1, which adds it to its own
            out.append(Step(len(out), [Transfer(i, (i + 1) % p, (i - 1 - s) % p, "reduce") for i in range(p)],
                            "reduce-scatter"))
    # GPU i now holds chunk i summed over every GPU (reduce-scatter's output, as NCCL places it)
    if collective in ("all-reduce", "all-gather"):  # GPU i starts the all-gather with chunk i
        for s in range(p - 1):
            out.append(Step(len(out), [Transfer(i, (i + 1) % p, (i - s) % p, "copy") for i in range(p)],
                            "all-gather"))
    if collective == "all-to-all":  # chunk c of GPU d's output is what GPU c sent to d
        for s in range(1, p):
            out.append(Step(len(out), [Transfer(i, (i + s) % p, i, "copy") for i in range(p)], "exchange"))
    if collective == "broadcast":  # a pipelined chain from GPU 0: chunk c leaves GPU i at step i + c
        for s in range(2 * p - 3 + 1 if p > 1 else 0):
            ts = [Transfer(i, i + 1, s - i, "copy") for i in range(p - 1) if 0 <= s - i < p]
            out.append(Step(len(out), ts, "broadcast"))
    return out


def _tree_parent(i: int, p: int, mirrored: bool) -> int:
    """Parent of GPU i in a binary heap over 0..p-1 (or over its mirror image p-1-i)."""
    j = p - 1 - i if mirrored else i
    parent = (j - 1) // 2
    return p - 1 - parent if mirrored else parent


def _depth(i: int) -> int:
    return int(math.log2(i + 1))


def _tree(collective: str, p: int) -> list[Step]:
    """Two binary trees (the second the mirror image of the first), chunk 0 on one, 1 on the other:
    reduce up to the roots (GPU 0 and GPU p - 1), then broadcast back down."""
    levels = _depth(p - 1)
    out = []
    for d in range(levels, 0, -1):  # up: the deepest GPUs first
        ts = []
        for t, mirrored in ((0, False), (1, True)):
            for j in range(p):
                if _depth(j) == d:
                    i = p - 1 - j if mirrored else j
                    ts.append(Transfer(i, _tree_parent(i, p, mirrored), t, "reduce"))
        out.append(Step(len(out), ts, "reduce"))
    for d in range(1, levels + 1):  # down: from the roots
        ts = []
        for t, mirrored in ((0, False), (1, True)):
            for j in range(p):
                if _depth(j) == d:
                    i = p - 1 - j if mirrored else j
                    ts.append(Transfer(_tree_parent(i, p, mirrored), i, t, "copy"))
        out.append(Step(len(out), ts, "broadcast"))
    return out


def _switch(collective: str, p: int) -> list[Step]:
    gpus = range(p)
    if collective == "all-reduce":
        return [Step(0, [Transfer(g, SWITCH, c, "reduce") for g in gpus for c in range(p)], "reduce in switch"),
                Step(1, [Transfer(SWITCH, g, c, "copy") for g in gpus for c in range(p)], "multicast")]
    if collective == "reduce-scatter":
        return [Step(0, [Transfer(g, SWITCH, c, "reduce") for g in gpus for c in range(p) if c != g],
                     "reduce in switch"),
                Step(1, [Transfer(SWITCH, c, c, "reduce") for c in gpus], "scatter")]
    if collective == "all-gather":
        return [Step(0, [Transfer(g, SWITCH, g, "copy") for g in gpus], "to switch"),
                Step(1, [Transfer(SWITCH, d, g, "copy") for g in gpus for d in gpus if d != g], "multicast")]
    if collective == "broadcast":
        return [Step(0, [Transfer(0, SWITCH, c, "copy") for c in range(p)], "to switch"),
                Step(1, [Transfer(SWITCH, d, c, "copy") for d in gpus if d != 0 for c in range(p)], "multicast")]
    # all-to-all: nothing to reduce or multicast; the switch routes each chunk in one step
    return [Step(0, [Transfer(g, d, g, "copy") for g in gpus for d in gpus if d != g], "exchange")]


def steps(collective: str, algorithm: str, p: int) -> list[Step]:
    """The schedule: for each step, which chunk goes from which GPU (or the switch) to which.

    Ring all-reduce is p - 1 reduce-scatter steps then p - 1 all-gather steps, each GPU
    sending one chunk of S / p per step.
    """
    _check(collective, algorithm, p)
    if p == 1:
        return []
    return {"ring": _ring, "tree": _tree, "switch": _switch}[algorithm](collective, p)


def _initial(collective: str, algorithm: str, p: int) -> list[list[set]]:
    n = chunks(collective, algorithm, p)
    if collective in ("all-reduce", "reduce-scatter"):
        return [[{g} for _ in range(n)] for g in range(p)]
    if collective == "all-gather":
        return [[{g} if c == g else set() for c in range(n)] for g in range(p)]
    if collective == "all-to-all":
        return [[{g} if c == g else set() for c in range(n)] for g in range(p)]
    return [[{0} if g == 0 else set() for _ in range(n)] for g in range(p)]  # broadcast from GPU 0


def chunk_state(collective: str, algorithm: str, p: int, upto_step: int) -> list[list[set]]:
    """For each GPU, for each chunk, which GPUs' contributions it holds after ``upto_step`` steps.

    ``upto_step`` = 0 is the start. All transfers of a step read the state before it. For
    all-to-all, chunk c of GPU d holds {c} once GPU c's block for d has arrived.
    """
    state = _initial(collective, algorithm, p)
    switch: dict[int, set] = {}
    for step in steps(collective, algorithm, p)[:upto_step]:
        before = [[set(x) for x in row] for row in state]
        sw_before = {c: set(x) for c, x in switch.items()}
        for t in step.transfers:
            held = sw_before.get(t.chunk, set()) if t.src == SWITCH else before[t.src][t.chunk]
            if t.dst == SWITCH:
                switch[t.chunk] = switch.get(t.chunk, set()) | held if t.op == "reduce" else set(held)
            elif t.op == "reduce":
                state[t.dst][t.chunk] |= held
            else:
                state[t.dst][t.chunk] = set(held)
    return state


def bytes_sent_received(collective: str, algorithm: str, p: int, n_bytes: float) -> list[tuple[float, float]]:
    """(bytes sent, bytes received) per GPU, counted from the schedule."""
    size = n_bytes / chunks(collective, algorithm, p)
    out = [[0.0, 0.0] for _ in range(p)]
    for step in steps(collective, algorithm, p):
        for t in step.transfers:
            if t.src != SWITCH:
                out[t.src][0] += size
            if t.dst != SWITCH:
                out[t.dst][1] += size
    return [tuple(x) for x in out]


def bytes_per_gpu_sent(collective: str, algorithm: str, p: int, n_bytes: float) -> float:
    """Bytes the busiest GPU puts on its links for size ``S`` = ``n_bytes`` (closed forms).

    ring: all-reduce 2(p-1)/p S; all-gather, reduce-scatter, all-to-all (p-1)/p S; broadcast S
    (every GPU but the last forwards the whole buffer). tree (double binary): all-reduce 2S
    once p >= 5 (an inner node sends its half up and to two children, and its other half up as
    a leaf), counted from the schedule. switch: all-reduce S (each GPU sends its buffer once and the switch
    adds); reduce-scatter and all-to-all (p-1)/p S; all-gather S/p; broadcast S from GPU 0.
    """
    _check(collective, algorithm, p)
    if p == 1:
        return 0.0
    S = float(n_bytes)
    if algorithm == "tree":
        return max(s for s, _ in bytes_sent_received(collective, algorithm, p, S))
    if algorithm == "ring":
        return {"all-reduce": 2 * (p - 1) / p * S, "broadcast": S}.get(collective, (p - 1) / p * S)
    return {"all-reduce": S, "all-gather": S / p, "broadcast": S}.get(collective, (p - 1) / p * S)


def bytes_per_gpu_received(collective: str, algorithm: str, p: int, n_bytes: float) -> float:
    """Bytes the busiest GPU takes in (closed forms; the ring's equal what it sends)."""
    _check(collective, algorithm, p)
    if p == 1:
        return 0.0
    S = float(n_bytes)
    if algorithm == "tree":
        return max(r for _, r in bytes_sent_received(collective, algorithm, p, S))
    if algorithm == "ring":
        return bytes_per_gpu_sent(collective, algorithm, p, S)
    return {"all-reduce": S, "reduce-scatter": S / p}.get(collective, (p - 1) / p * S if collective != "broadcast" else S)


def step_count(collective: str, algorithm: str, p: int) -> int:
    """Steps a collective takes, each paying the latency alpha once (= len(steps(...)))."""
    _check(collective, algorithm, p)
    if p == 1:
        return 0
    if algorithm == "switch":
        return 1 if collective == "all-to-all" else 2
    if algorithm == "tree":
        return 2 * _depth(p - 1)
    return {"all-reduce": 2 * (p - 1), "broadcast": 2 * p - 2 if p > 1 else 0}.get(collective, p - 1)


def nccl_ring_steps(collective: str, p: int) -> int:
    """Steps NCCL's cost model charges a ring collective of ``p`` GPUs, each paying the per-step
    latency (src/graph/tuning.cc, ``nsteps``): ``2(p − 1)`` for all-reduce, ``p − 1`` for all-gather
    and reduce-scatter, ``p`` for broadcast. NCCL cuts a broadcast into many small chunks, so its
    pipeline fills in ``p`` steps; this module's chain of ``p`` chunks (``steps``) counts ``2p − 2``.

    >>> nccl_ring_steps("broadcast", 8), step_count("broadcast", "ring", 8)
    (8, 14)
    """
    _check(collective, "ring", p)
    if collective == "all-to-all":
        raise ValueError("NCCL runs all-to-all as point-to-point sends, not as a ring with a step count")
    return {"all-reduce": 2 * (p - 1), "broadcast": p}.get(collective, p - 1)


def nccl_tree_steps(p: int, gpus_per_node: int) -> int:
    """Steps NCCL's cost model charges a tree all-reduce of ``p`` GPUs, ``gpus_per_node`` to a server:
    ``2 · ((gpus_per_node − 1) + log2(nodes))`` (src/graph/tuning.cc). NCCL builds its double binary
    tree between servers, one tree node per server, and chains the GPUs inside each server, so the
    steps grow with the servers' logarithm and the GPUs per server. (``steps(..., "tree", p)`` is the
    same tree with one GPU per server.)

    >>> nccl_tree_steps(1024, 8)     # 128 servers: 2 × (7 + 7)
    28
    """
    if not isinstance(p, int) or not isinstance(gpus_per_node, int) or p < 1 or gpus_per_node < 1 \
            or p % gpus_per_node:
        raise ValueError(f"{p} GPUs do not fill whole servers of {gpus_per_node}")
    nodes = p // gpus_per_node
    return 2 * ((gpus_per_node - 1) + (nodes.bit_length() - 1))    # NCCL's log2i: the whole part of log2


NCCL_TOPO = Source(
    "NCCL source, src/graph/topo.h (NVLink bandwidth per link)", "NVIDIA", 2026, "nvidia2026nccltopo",
    where="SM80_NVLINK_BW, SM90_NVLINK_BW, SM100_NVLINK_BW",
    url="https://github.com/NVIDIA/nccl/blob/5067397c2676d5aed50042fc39e5c8ee96eb0027/src/graph/topo.h",
    note="what NCCL's topology search credits one NVLink with, GB/s in each direction, by compute capability",
)
#: GB/s per NVLink and direction that NCCL's topology code credits, by NVLink generation (topo.h: compute
#: capability 8.0 20.0, 9.0 20.6, 10.0 40.1), against the 25, 25 and 50 GB/s the datasheets' totals give.
NCCL_NVLINK_GBPS_PER_LINK = {"nvlink3": 20.0, "nvlink4": 20.6, "nvlink5": 40.1}


def nccl_nvlink_bw(link: Link) -> float:
    """Bytes/s in one direction that NCCL credits a GPU's NVLinks with: its per-link figure (topo.h)
    times the link count. ValueError for a link that is not NVLink or whose count no source gives."""
    if link.name not in NCCL_NVLINK_GBPS_PER_LINK or link.links is None:
        raise ValueError(f"NCCL's topology figure is known for NVLinks with a sourced link count, not {link.name!r}")
    return NCCL_NVLINK_GBPS_PER_LINK[link.name] * 1e9 * link.links


def disjoint_rings(p: int) -> list[list[int]]:
    """``p - 1`` rings over ``p`` GPUs that share no directed link, found by search: on a fully
    connected mesh (the MI300X's eight GPUs, seven links each) a ring collective cut into ``p - 1``
    parts, one per ring, keeps every link busy. Such rings exist for every ``p`` but 4 and 6
    (a Hamiltonian decomposition of the complete symmetric digraph; Tillson, 1980); for those two,
    and for ``p < 2``, this raises ValueError.

    >>> rings = disjoint_rings(8)
    >>> len(rings), len({(r[i], r[(i + 1) % 8]) for r in rings for i in range(8)})
    (7, 56)
    """
    if p < 2 or p in (4, 6):
        raise ValueError(f"no {p - 1} link-disjoint rings over {p} GPUs (they exist for p >= 2 but 4 and 6)")
    used: set = set()
    found: list = []

    def cycles(path):
        if len(path) == p:
            if (path[-1], 0) not in used:
                yield path
            return
        for nxt in range(1, p):
            if nxt not in path and (path[-1], nxt) not in used:
                yield from cycles(path + [nxt])

    def solve() -> bool:
        if len(found) == p - 1:
            return True
        for c in cycles([0]):
            arcs = {(c[i], c[(i + 1) % p]) for i in range(p)}
            used.update(arcs)
            found.append(c)
            if solve():
                return True
            used.difference_update(arcs)
            found.pop()
        return False

    if not solve():  # pragma: no cover - excluded above
        raise ValueError(f"no link-disjoint rings found over {p} GPUs")
    return found


def time_s(collective: str, algorithm: str, p: int, n_bytes: float, link: Link,
           alpha_s: float | None = None, base_s: float = 0.0) -> float:
    """Alpha-beta time: base + steps x alpha + busiest direction's bytes / link bandwidth.

    ``alpha_s`` defaults to the link's per-step latency (0 where it has none); ``base_s`` is a
    fixed cost per collective (NCCL's ``BASE_LATENCY_S``), 0 unless given.
    """
    if alpha_s is None:
        alpha_s = link.alpha_s or 0.0
    moved = max(bytes_per_gpu_sent(collective, algorithm, p, n_bytes),
                bytes_per_gpu_received(collective, algorithm, p, n_bytes))
    return base_s + step_count(collective, algorithm, p) * alpha_s + moved / link.bw_per_direction


def nccl_time_s(collective: str, algorithm: str, p: int, n_bytes: float, link: Link) -> float:
    """``time_s`` as NCCL's cost model counts it: the link's per-step latency and, where the link has
    NCCL latencies, the once-per-collective ``BASE_LATENCY_S`` too (the communication chapter's
    model). For 64 MiB on 4 GPUs over NVLink 4: 6.6 µs + 6 × 0.6 µs + 1.5 × 64 MiB / 450 GB/s ≈ 234 µs."""
    base = BASE_LATENCY_S if link.alpha_s is not None else 0.0
    return time_s(collective, algorithm, p, n_bytes, link, base_s=base)


_HIERARCHICAL = ("all-reduce", "all-gather", "reduce-scatter")


def time_s_across_servers(collective: str, p: int, n_bytes: float, per_server: int, scale_up: Link,
                          scale_out: Link, alpha_s: float | None = None, base_s: float = 0.0) -> float:
    """A ring collective over ``p`` GPUs, ``per_server`` of them in each server, each GPU with its own
    port on ``scale_out``: alpha-beta time with the bytes split between the two links.

    NCCL runs several rings at once (its channels), each leaving a server through a different GPU's
    port, so a server's ports share what crosses the network: a GPU's port carries ``1/per_server``
    of the bytes the GPU sends, and the scale-up link carries them all (scaling-book, 'Cross-node
    collectives': an all-gather or reduce-scatter costs the bytes over the server's egress). So

        time = base + steps x alpha + max(moved / scale-up bandwidth, moved / (per_server x port bandwidth))

    with ``alpha`` the scale-out link's. With ``per_server`` = 1 this is ``time_s`` over ``scale_out``;
    with all ``p`` GPUs in one server, ``time_s`` over ``scale_up``. All-reduce, all-gather and
    reduce-scatter only: an all-to-all's bytes for other servers cannot be shared out this way.
    """
    _check(collective, "ring", p)
    if collective not in _HIERARCHICAL:
        raise ValueError(f"{collective} across servers is not a ring whose network bytes a server's ports "
                         f"share; only {', '.join(_HIERARCHICAL)}")
    if not isinstance(per_server, int) or per_server < 1 or p % per_server:
        raise ValueError(f"{p} GPUs do not split into servers of {per_server}")
    if per_server == p:
        return time_s(collective, "ring", p, n_bytes, scale_up, base_s=base_s)
    if alpha_s is None:
        alpha_s = scale_out.alpha_s or 0.0
    moved = bytes_per_gpu_sent(collective, "ring", p, n_bytes)
    wire = max(moved / scale_up.bw_per_direction, moved / (per_server * scale_out.bw_per_direction))
    return base_s + step_count(collective, "ring", p) * alpha_s + wire


def algbw(collective: str, algorithm: str, p: int, n_bytes: float, link: Link, **kw) -> float:
    """nccl-tests' algorithm bandwidth S / t, bytes/s, for the modelled time."""
    return n_bytes / time_s(collective, algorithm, p, n_bytes, link, **kw)


def busbw(collective: str, algorithm: str, p: int, n_bytes: float, link: Link, **kw) -> float:
    """nccl-tests' bus bandwidth algbw x busbw_factor, bytes/s, for the modelled time."""
    return algbw(collective, algorithm, p, n_bytes, link, **kw) * busbw_factor(collective, p)


def half_bandwidth_bytes(collective: str, algorithm: str, p: int, link: Link, alpha_s: float | None = None,
                         base_s: float = 0.0) -> float:
    """The size S at which latency and bandwidth terms are equal (the bus bandwidth is half the link's)."""
    if alpha_s is None:
        alpha_s = link.alpha_s or 0.0
    fixed = base_s + step_count(collective, algorithm, p) * alpha_s
    per_byte = max(bytes_per_gpu_sent(collective, algorithm, p, 1.0),
                   bytes_per_gpu_received(collective, algorithm, p, 1.0)) / link.bw_per_direction
    return fixed / per_byte


PYTORCH_DDP = Source(
    "PyTorch source, torch/nn/parallel/distributed.py (DistributedDataParallel)", "PyTorch", 2026,
    "pytorch2026ddp", where="argument bucket_cap_mb: 'bucket cap is 25 MiB'",
    url="https://github.com/pytorch/pytorch/blob/main/torch/nn/parallel/distributed.py",
)
#: The size of the buckets PyTorch's data-parallel wrapper packs gradients into by default (25 MiB).
DDP_BUCKET_BYTES = 25 * 2**20


# ----------------------------------------------------------------------------- measured


@dataclass(frozen=True)
class Measured:
    """A published measurement, with where it was read and what it was read from."""

    what: str
    value: float
    unit: str
    source: Source
    note: str = ""


SCALING_BOOK_GPUS = Source(
    "How to Scale Your Model, Part 12: How to Think About GPUs (Austin, Patil, Paszke and Pope)",
    "Google DeepMind", 2025,
    "austin2025scalingbookgpus", where="section 'Collectives', paragraph 'Empirical measurements'",
    url="https://github.com/jax-ml/scaling-book/blob/1a55377affc9ee8f10b549f689ad57e813623a7e/gpus.md",
)

#: 8 x H100 (NVLink 4, SHARP off) all-reduce bus bandwidth, read from scaling-book's text.
H100_8X_ALLREDUCE_BUSBW_PEAK = Measured(
    "8 x H100 all-reduce bus bandwidth, largest messages (about 10 GB), SHARP off", 370e9, "B/s",
    SCALING_BOOK_GPUS, "'close to 370GB/s, less than 450GB/s'")
H100_8X_ALLREDUCE_MESSAGE_AT_PEAK = Measured(
    "message size at which that bus bandwidth is reached", 10e9, "B", SCALING_BOOK_GPUS,
    "'only around 10GB/device'")
H100_8X_ALLREDUCE_BUSBW_58MB = Measured(
    "8 x H100 all-reduce bus bandwidth for a 58 MB message (Llama 3 70B's MLP, 8-way sharded)",
    150e9, "B/s", SCALING_BOOK_GPUS, "'bf16[8192, 3584] = 58MB ... only around 150GB/s'")
H100_8X_ALLREDUCE_SHARP_GAIN = Measured(
    "gain in all-reduce bandwidth from SHARP (NVLS) inside an 8 x H100 node", 0.30, "fraction",
    SCALING_BOOK_GPUS.at("paragraph 'In network reductions'"), "'about a 30% increase ... compared to the "
    "predicted 75%'; 'about 480GB/s effective collective bandwidth'; at the largest messages ('about 30% "
    "throughput improvement at peak', NCCL 2.27.5)")
