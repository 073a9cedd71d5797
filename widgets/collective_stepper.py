"""Collective stepper: p GPUs run a collective one step at a time.

Left (on a phone, on top): the GPUs on their topology (a ring, a tree, or a switch in the
middle), with an arrow for each chunk that crosses a link in this step, labelled with the chunk's
number. Right (below): what each GPU holds of each chunk, a row per GPU and a column per chunk,
shaded by how many GPUs' contributions it sums (or, for a gather, whether it is there); the cells
this step wrote are outlined. The step's bytes per link and the time so far are alpha-beta over
the chosen link: each step costs the link's latency plus the busiest link's bytes over its
bandwidth. Every step, transfer and state comes from ``calc.collectives``; the link from
``calc.specs``. An all-reduce is drawn as what it is on a ring: a reduce-scatter, then an all-gather.

The ``step`` slider (0 = before the first transfer) has a play button; the figure takes the arrow
keys, Home and End.
"""
from __future__ import annotations

import json
import math
from functools import lru_cache

from calc import collectives, fmt, specs

from . import Param
from ._svg import STRONG_CHAR_PX, esc, label_px, line, num, polygon, svg_root, text, text_lines, wrap_px

TITLE = "Collective stepper"
KEYS = json.dumps({"ArrowLeft": {"step": -1}, "ArrowRight": {"step": 1}, "ArrowDown": {"step": -1},
                   "ArrowUp": {"step": 1}, "Home": {"step": -10**6}, "End": {"step": 10**6}},
                  separators=(",", ":"))
LABELS = {"all-reduce": "All-reduce", "all-gather": "All-gather", "reduce-scatter": "Reduce-scatter",
          "all-to-all": "All-to-all", "broadcast": "Broadcast"}
ALGORITHM_LABELS = {"ring": "Ring", "tree": "Tree", "switch": "Switch (in-network reduction)"}
REDUCING = ("all-reduce", "reduce-scatter")
WORD_LINES, WORD_LINES_NARROW = 2, 3     # lines the step's sentence may take (wide, phone and print)
LEGEND_REDUCING = [("wg-hn1", "part of the sum"), ("wg-hn4", "all p summed"), ("wg-idle", "empty"),
                   ("wg-box wg-sel", "written this step")]
LEGEND_COPYING = [("wg-hn4", "chunk held"), ("wg-idle", "empty"), ("wg-box wg-sel", "written this step")]


def _legend_rows(items, W) -> int:
    x, rows = 10, 1
    for _, label in items:
        if x + 16 + label_px(label) > W - 6:
            x, rows = 10, rows + 1
        x += 30 + label_px(label)
    return rows


START = {"all-reduce": "each GPU holds its whole buffer, {n} of {size}, with only its own contribution.",
         "reduce-scatter": "each GPU holds its whole buffer, {n} of {size}, with only its own contribution.",
         "all-gather": "each GPU holds only its own chunk of {size}; it will hold all {n}.",
         "all-to-all": "each GPU holds {n} of {size}, one for each GPU; only its own is where it belongs.",
         "broadcast": "GPU 0 holds the buffer, {n} of {size}; the others hold nothing."}


@lru_cache(maxsize=64)
def _steps(collective: str, algorithm: str, p: int) -> tuple:
    """``calc.collectives.steps``, kept: every redraw of a step needs the whole schedule."""
    return tuple(collectives.steps(collective, algorithm, p))


@lru_cache(maxsize=512)
def _state(collective: str, algorithm: str, p: int, k: int) -> list:
    """``calc.collectives.chunk_state`` after step k (a reader steps back and forth)."""
    return collectives.chunk_state(collective, algorithm, p, k)


@lru_cache(maxsize=None)
def _supported(collective: str, algorithm: str) -> bool:
    try:
        return bool(_steps(collective, algorithm, 4))
    except (ValueError, NotImplementedError, KeyError):
        return False


COLLECTIVES = tuple(c for c in collectives.COLLECTIVES if any(_supported(c, a) for a in collectives.ALGORITHMS))

# The step first: on a phone its slider sits right under the drawing's ring and step (drawn last),
# so the reader dragging it sees what each step does.
PARAMS = [
    Param("step", "int", "Step", 1, min=0, max=10**6, play=True),
    Param("collective", "choice", "Collective", "all-reduce", options=tuple((c, LABELS.get(c, c)) for c in COLLECTIVES)),
    Param("algorithm", "choice", "Algorithm", "ring", control="radio",
          options=tuple((a, ALGORITHM_LABELS.get(a, a)) for a in collectives.ALGORITHMS)),
    Param("p", "int", "GPUs (p)", 4, min=2, max=16),
    Param("size", "int", "Buffer per GPU", 65536, min=1, max=4194304, step=1, log=True, unit="KiB"),
    Param("link", "choice", "Link", "nvlink4", options=tuple((l.name, l.label) for l in specs.links())),
]

EXAMPLES = [{"step": 10**6}, {"p": 16, "step": 15}, {"p": 2, "step": 1}, {"p": 16, "size": 1, "step": 10**6},
            {"collective": "all-gather", "step": 2}, {"collective": "reduce-scatter", "p": 8, "step": 3}]


# ----------------------------------------------------------------------------- numbers

def _algorithm(params: dict) -> tuple[str, str | None]:
    """The algorithm drawn, and a note when the one asked for does not run this collective."""
    c, a = params["collective"], params["algorithm"]
    if _supported(c, a):
        return a, None
    fallback = next(x for x in collectives.ALGORITHMS if _supported(c, x))
    return fallback, (f"There is no {ALGORITHM_LABELS.get(a, a).lower()} {LABELS.get(c, c).lower()} in this model; "
                      f"showing the {fallback}.")


def ranges(params: dict) -> dict:
    a, _ = _algorithm(params)
    return {"step": (0, len(_steps(params["collective"], a, params["p"])))}


def key_frames(params: dict) -> list[int]:
    """Print: the end of the first phase (a reduce-scatter's whole chunks) and the end, or the
    first step and the end for a one-phase collective. Two frames: they print side by side, and a
    second row of these tall frames ran off the page (the PDF lost the figure's caption)."""
    a, _ = _algorithm(params)
    steps = _steps(params["collective"], a, params["p"])
    n = len(steps)
    phase_end = next((i for i, s in enumerate(steps) if s.phase != steps[0].phase), n)
    return sorted({phase_end if phase_end < n else min(1, n), n})


def link_loads(step, chunk_bytes: float) -> dict:
    """Bytes on each directed link (src, dst) in one step (the switch is ``collectives.SWITCH``)."""
    loads: dict = {}
    for t in step.transfers:
        loads[(t.src, t.dst)] = loads.get((t.src, t.dst), 0.0) + chunk_bytes
    return loads


def timeline(params: dict) -> dict:
    """Per step: the busiest link's bytes, and the time so far as ``calc.collectives.nccl_time_s``
    counts it: NCCL's base latency once (where the link has NCCL latencies), alpha per step, plus the
    busiest GPU's busiest direction (bytes sent or received so far) over the link's bandwidth. At the
    last step that is ``nccl_time_s`` itself."""
    a, note = _algorithm(params)
    c, p = params["collective"], params["p"]
    link = specs.link(params["link"])
    n_bytes = params["size"] * 1024
    chunk = n_bytes / collectives.chunks(c, a, p)
    bw, alpha = link.bw_per_direction, link.alpha_s or 0.0
    # NCCL's model pays a base latency once per collective, where the link has NCCL latencies
    # (calc.collectives.nccl_time_s; the communication chapter's 6.6 µs)
    base = collectives.BASE_LATENCY_S if link.alpha_s is not None else 0.0
    steps = _steps(c, a, p)
    sent, received = [0.0] * p, [0.0] * p
    per_step = []
    for s in steps:
        loads = link_loads(s, chunk)
        for t in s.transfers:
            if 0 <= t.src < p:
                sent[t.src] += chunk
            if 0 <= t.dst < p:
                received[t.dst] += chunk
        busiest_gpu = max(max(sent), max(received))
        per_step.append({"busiest": max(loads.values()) if loads else 0.0, "links": len(loads),
                         "moved": busiest_gpu, "so_far": base + (len(per_step) + 1) * alpha + busiest_gpu / bw})
    return {"algorithm": a, "note": note, "steps": steps, "per_step": per_step, "chunk": chunk,
            "chunks": collectives.chunks(c, a, p), "n_bytes": n_bytes, "link": link, "alpha": alpha, "bw": bw,
            "base": base}


# ----------------------------------------------------------------------------- drawing

def _positions(p: int, steps, cx: float, cy: float, R: float) -> dict:
    """Where each GPU is drawn: on a circle, GPU 0 at the top, clockwise (a ring's order; a double
    binary tree's two trees and a switch's spokes read as well over the same places), and the
    switch (any index outside 0..p-1) in the middle."""
    pos = {g: (cx + R * math.sin(2 * math.pi * g / p), cy - R * math.cos(2 * math.pi * g / p)) for g in range(p)}
    for s in steps:
        for t in s.transfers:
            for g in (t.src, t.dst):
                if g not in pos:
                    pos[g] = (cx, cy)
    return pos


def _arrow(x1, y1, x2, y2, r1, r2, cls, bend=0.0) -> tuple[list[str], tuple]:
    """An arrow from circle (x1, y1, r1) to circle (x2, y2, r2), bent sideways by ``bend`` px
    (so that the two directions of a link do not overlap); returns its parts and its midpoint."""
    dx, dy = x2 - x1, y2 - y1
    d = math.hypot(dx, dy) or 1.0
    ux, uy = dx / d, dy / d
    nx, ny = -uy, ux
    sx, sy = x1 + ux * r1 + nx * bend, y1 + uy * r1 + ny * bend
    ex, ey = x2 - ux * r2 + nx * bend, y2 - uy * r2 + ny * bend
    head = [(ex, ey), (ex - ux * 7 + nx * 3.5, ey - uy * 7 + ny * 3.5), (ex - ux * 7 - nx * 3.5, ey - uy * 7 - ny * 3.5)]
    head_cls = "wg-pt wg-sel" if "wg-c2" in cls else "wg-pt"
    parts = [line(sx, sy, ex - ux * 5, ey - uy * 5, cls), polygon(head, head_cls)]
    return parts, ((sx + ex) / 2 + nx * 9, (sy + ey) / 2 + ny * 9)


def _arc(x1, y1, x2, y2, up: bool, r: float, reach: float, cls: str, arrow: bool) -> list[str]:
    """A curve from GPU (x1, y1) to GPU (x2, y2) bulging up (``up``) or down by at most ``reach``
    px, leaving and entering the circles of radius ``r``; an arrowhead at its end if ``arrow``."""
    h = min(reach, 0.45 * abs(x2 - x1) + 12) * (-1 if up else 1)
    qx, qy = (x1 + x2) / 2, y1 + 2 * h          # the curve's apex is h from the row
    def towards(x, y, tx, ty, d):
        n = math.hypot(tx - x, ty - y) or 1.0
        return x + (tx - x) / n * d, y + (ty - y) / n * d
    sx, sy = towards(x1, y1, qx, qy, r + 1)
    ex, ey = towards(x2, y2, qx, qy, r + 1)
    out = [f'<path d="M{num(sx)} {num(sy)}Q{num(qx)} {num(qy)} {num(ex)} {num(ey)}" class="{cls}"/>']
    if arrow:
        n = math.hypot(ex - qx, ey - qy) or 1.0
        ux, uy = (ex - qx) / n, (ey - qy) / n
        out.append(polygon([(ex, ey), (ex - ux * 7 - uy * 3.5, ey - uy * 7 + ux * 3.5),
                            (ex - ux * 7 + uy * 3.5, ey - uy * 7 - ux * 3.5)],
                           "wg-pt wg-sel" if "wg-c2" in cls else "wg-pt"))
    return out


def _tree_topology(params, tl, k, x0, y0, size) -> list[str]:
    """NCCL's double binary tree: the GPUs in a row, the tree that carries chunk 0 above it, the
    mirrored tree that carries chunk 1 below."""
    p, steps = params["p"], tl["steps"]
    gap = (size - 28) / (p - 1)
    r = max(6.0, min(12.0, gap / 2 - 1))
    cy = y0 + size / 2
    x = lambda g: x0 + 14 + g * gap
    reach = size / 2 - 24
    out = [text(x0 + 4, y0 + 12, "tree 0: chunk 0", "wg-small wg-muted"),
           text(x0 + 4, y0 + size - 4, "tree 1: chunk 1", "wg-small wg-muted")]
    edges = {(min(t.src, t.dst), max(t.src, t.dst), t.chunk) for s in steps for t in s.transfers}
    for i, j, c in sorted(edges):
        out += _arc(x(i), cy, x(j), cy, c == 0, r, reach, "wg-grid", False)
    for g in range(p):
        out.append(f'<circle cx="{num(x(g))}" cy="{num(cy)}" r="{num(r)}" class="wg-pe"><title>GPU {g}</title></circle>')
        out.append(text(x(g), cy + 4, str(g), "wg-small wg-strong" + (" wg-cellnum" if r < 9 else ""), "middle"))
    if k >= 1:
        for t in steps[k - 1].transfers:
            out += _arc(x(t.src), cy, x(t.dst), cy, t.chunk == 0, r, reach,
                        "wg-c2" if t.op == "reduce" else "wg-c1", True)
    return out


def _topology(params, tl, k, x0, y0, size) -> list[str]:
    p, a, steps = params["p"], tl["algorithm"], tl["steps"]
    if a == "tree":
        return _tree_topology(params, tl, k, x0, y0, size)
    R = size / 2 - 26
    cx, cy = x0 + size / 2, y0 + size / 2
    pos = _positions(p, steps, cx, cy, R)
    r = max(9.0, min(15.0, math.pi * R / p - 3))
    out = []
    # the links: a ring's neighbours, a switch's spokes, a tree's edges (every pair any step uses)
    pairs = {tuple(sorted((t.src, t.dst))) for s in steps for t in s.transfers if t.src != t.dst}
    if a == "ring":
        pairs |= {tuple(sorted((g, (g + 1) % p))) for g in range(p)}
    for i, j in sorted(pairs):
        out.append(line(*pos[i], *pos[j], "wg-grid"))
    switch = [g for g in pos if not 0 <= g < p]
    for g in switch:
        x, y = pos[g]
        out.append(f'<rect x="{num(x - 22)}" y="{num(y - 11)}" width="44" height="22" class="wg-pe"/>')
        out.append(text(x, y + 4, "switch", "wg-small", "middle"))
    for g in range(p):
        x, y = pos[g]
        out.append(f'<circle cx="{num(x)}" cy="{num(y)}" r="{num(r)}" class="wg-pe"><title>GPU {g}</title></circle>')
        out.append(text(x, y + 4, str(g), "wg-small wg-strong", "middle"))
    if k >= 1:
        step = steps[k - 1]
        by_pair: dict = {}
        for t in step.transfers:
            by_pair.setdefault((t.src, t.dst), []).append(t.chunk)
        for (src, dst), chunks in sorted(by_pair.items()):
            rs = 22 if src in switch else r + 1
            rd = 22 if dst in switch else r + 1
            cls = "wg-c2" if any(t.op == "reduce" for t in step.transfers if (t.src, t.dst) == (src, dst)) else "wg-c1"
            parts, (mx, my) = _arrow(*pos[src], *pos[dst], rs, rd, cls, bend=3)
            out += parts
            if p <= 8 or a != "switch":
                label = ",".join(str(c) for c in sorted(set(chunks))) if len(set(chunks)) <= 2 else f"{len(chunks)}"
                out.append(text(mx, my + 4, label, "wg-small wg-cellnum", "middle"))
    return out


def _grid(params, tl, k, x0, y0, width, height, most=34.0) -> tuple[list[str], float]:
    """GPU × chunk: how many contributions each GPU holds of each chunk after step k, in a box of
    ``width`` × ``height`` whatever p is (its cells grow as p falls, up to ``most`` px)."""
    p, c = params["p"], params["collective"]
    state = _state(c, tl["algorithm"], p, k)
    written = set()
    if k >= 1:
        written = {(t.dst, t.chunk) for t in tl["steps"][k - 1].transfers if 0 <= t.dst < p}
    nc = tl["chunks"]
    cell = min(most, (width - 34) / nc, (height - 34) / p)
    out = [text(x0 + 30, y0 + 10, "chunk →", "wg-small wg-muted")]
    gy = y0 + 18
    for j in range(nc):
        if cell >= 14 or j % 2 == 0:
            out.append(text(x0 + 30 + j * cell + cell / 2, gy + 10, str(j), "wg-small wg-muted wg-cellnum", "middle"))
    gy += 16
    reducing = c in REDUCING
    shade = ["wg-idle"] + [("wg-hn4" if not reducing or have == p else
                            f"wg-hn{1 + min(2, (3 * (have - 1)) // max(p - 1, 1))}") for have in range(1, p + 1)]
    xs = [x0 + 30 + j * cell for j in range(nc)]
    sx, sc, sc2 = [num(x) for x in xs], num(cell), num(cell - 2)
    tx = [num(x + cell / 2) for x in xs]
    numbers = reducing and cell >= 16
    for g in range(p):
        y = gy + g * cell
        out.append(text(x0 + 26, y + cell / 2 + 4, f"{g}", "wg-small wg-muted", "end"))
        sy, ty = num(y), num(y + cell / 2 + 4)
        row = state[g]
        for j in range(nc):
            have = len(row[j])
            out.append(f'<rect x="{sx[j]}" y="{sy}" width="{sc}" height="{sc}" class="{shade[have]}">'
                       f"<title>GPU {g}, chunk {j}: {have} of {p}</title></rect>")
            if numbers and have:
                out.append(f'<text x="{tx[j]}" y="{ty}" class="wg-small wg-cellnum" text-anchor="middle">{have}</text>')
        for j in range(nc):
            if (g, j) in written:
                out.append(f'<rect x="{num(xs[j] + 1)}" y="{num(y + 1)}" width="{sc2}" height="{sc2}"'
                           f' class="wg-box wg-sel"><title>written in step {k}</title></rect>')
    out.append(text(x0, gy - 4, "GPU", "wg-small wg-muted"))
    return out, gy + p * cell


def _latency(link) -> str:
    """A link's latency as its sources give it, a round figure ("600 ns", "2.7 µs"): two figures,
    not the three that read "1.00 µs"."""
    return fmt.si(link.latency_us * 1e-6, "s", sig=2)


def render(params: dict) -> dict:
    tl = timeline(params)
    steps, per = tl["steps"], tl["per_step"]
    n = len(steps)
    params["step"] = k = max(0, min(params["step"], n))
    p, c, a = params["p"], params["collective"], tl["algorithm"]
    W = params.get("_width", 640)
    wide = W >= 480
    body = []
    alg = ALGORITHM_LABELS.get(a, a).split(" (")[0].lower()
    head = f"{LABELS.get(c, c)}, {alg}, {p} GPUs: step {k} of {n}"
    shown = next((h for h in (head, f"{LABELS.get(c, c)}, {alg}, p = {p}: step {k}/{n}",
                              f"{alg.capitalize()}, p = {p}: step {k}/{n}")
                  if label_px(h, STRONG_CHAR_PX + 0.4) <= W - 20), f"Step {k}/{n}")
    said = []

    def words_at(y) -> float:
        """The step in words (room for the longest it can be, so that nothing below moves)."""
        if k == 0:
            words = "Before the first step: " + START[c].format(n=fmt.count(tl["chunks"], "chunk"),
                                                               size=fmt.bytes_iec(tl["chunk"]))
        else:
            s = steps[k - 1]
            words = (f"{s.phase.capitalize()}: {fmt.count(len(s.transfers), 'chunk')} of {fmt.bytes_iec(tl['chunk'])} "
                     f"cross {fmt.count(per[k - 1]['links'], 'link')}; the busiest carries "
                     f"{fmt.bytes_iec(per[k - 1]['busiest'])}. Time so far {fmt.duration(per[k - 1]['so_far'])}.")
        said.append(words)
        lines = wrap_px(words, W - 20)
        body.extend(text_lines(10, y + 8, lines, "wg-small", 15))
        return y + 15 * max(len(lines), WORD_LINES if wide else WORD_LINES_NARROW) + 4

    def legend_at(y) -> float:
        """The heat map's legend (its rows counted for the longest, a reducing collective's)."""
        x, rows = 10, _legend_rows(LEGEND_REDUCING, W)
        top = y
        for cls, label in (LEGEND_REDUCING if c in REDUCING else LEGEND_COPYING):
            if x + 16 + label_px(label) > W - 6:
                x, y = 10, y + 18
            body.append(f'<rect x="{num(x)}" y="{num(y + 2)}" width="12" height="12" class="{cls}"/>')
            body.append(text(x + 16, y + 12, label, "wg-small wg-muted"))
            x += 30 + label_px(label)
        return top + 18 * (rows - 1)

    if wide:
        body.append(text(10, 16, shown, "wg-strong"))
        topo = min(300.0, W / 2 - 10)
        body += _topology(params, tl, k, 4, 26, topo)
        grid, _ = _grid(params, tl, k, topo + 10, 30, W - topo - 14, topo - 4)
        body += grid
        y = legend_at(words_at(26 + topo + 8))
    else:
        # A phone: the drawing is too tall to pin while the slider is dragged, so what a step
        # changes most (its heading, the ring, the sentence) comes last, right above the slider;
        # the heat map and its legend first. The grid's box is as tall as p = 16 needs.
        side = W - 8
        grid_h = 34 + 16 * min(34.0, (side - 34) / 16)
        y = legend_at(4)
        # its cells fill the box at any p (capped at 34 px they left half of it blank at p = 4)
        grid, _ = _grid(params, tl, k, 4, y + 22, side, grid_h, most=grid_h)
        body += grid
        y += 22 + grid_h - 14 + 8
        body.append(text(10, y + 16, shown, "wg-strong"))
        topo = min(W - 8, 300.0)
        body += _topology(params, tl, k, (W - topo) / 2, y + 24, topo)
        y = words_at(y + 24 + topo) - 22
    H = y + 22

    link = tl["link"]
    total_t = collectives.nccl_time_s(c, a, p, tl["n_bytes"], link)
    once = f"{fmt.si(tl['base'], 's', sig=2)} once + " if tl["base"] else ""
    algbw = tl["n_bytes"] / total_t if total_t else 0.0
    readouts = [
        ["Step", f"{k} of {n}" + (f" ({steps[k - 1].phase})" if k else " (before the first)")],
        ["Chunk", f"{fmt.bytes_iec(tl['chunk'])} (the buffer of {fmt.bytes_iec(tl['n_bytes'])} over "
                  f"{tl['chunks']})"],
        ["Busiest link this step", fmt.bytes_iec(per[k - 1]["busiest"]) if k else "0 B"],
        ["Busiest GPU's bytes so far", fmt.bytes_iec(per[k - 1]["moved"]) if k else "0 B"],
        ["Time so far", fmt.duration(per[k - 1]["so_far"] if k else 0.0)],
        ["Whole collective", f"{fmt.duration(total_t)} ({once}{fmt.count(n, 'step')} × {_latency(link)} latency "
                             f"+ bytes at {fmt.num(link.bw_per_direction_GBps)} GB/s)" if link.latency_us is not None else
                             f"{fmt.duration(total_t)} (bytes at {fmt.num(link.bw_per_direction_GBps)} GB/s; "
                             f"latency not published, taken as 0)"],
        ["Each GPU sends",
         fmt.bytes_iec(collectives.bytes_per_gpu_sent(c, a, p, tl["n_bytes"]))],
        ["Algorithm bandwidth", fmt.si(algbw, "B/s")],
        ["Bus bandwidth (nccl-tests)", f"{fmt.si(algbw * collectives.busbw_factor(c, p), 'B/s')} "
                                        f"(× {fmt.num(collectives.busbw_factor(c, p))})"],
        ["Link", f"{link.label}: {fmt.num(link.bw_per_direction_GBps)} GB/s each way, "
                 + (f"{_latency(link)} latency" if link.latency_us is not None else "latency not published")],
    ]
    title = f"{LABELS.get(c, c)} on {p} GPUs ({a}), step {k} of {n}"
    extra = (f" data-keys='{KEYS}' data-live=''"
             f" data-keys-help='{esc(title)}: left and right arrow keys step, Home and End jump'")
    desc = f"{head}. {said[0]}"
    return {"svg": svg_root(W, round(H), "wg-stepper", title, desc, body, extra), "readouts": readouts,
            "message": tl["note"]}


def summary(params: dict, r: dict) -> str:
    """E.g. "Step 3 of 6 (reduce-scatter): busiest link 16.0 MiB, time so far 120 µs"."""
    return f"Step {r['Step']}: busiest link {r['Busiest link this step']}, time so far {r['Time so far']}"
