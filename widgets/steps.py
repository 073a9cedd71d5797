"""Step-by-step animations of three algorithms, one frame per step, computed by ``calc``.

- ``tiled-matmul``: ``calc.tiling.frames``, one frame per (output tile, phase);
- ``systolic``: ``calc.systolic.frames``, one frame per clock cycle of an
  output-stationary array, with the skewed operands waiting at the edges; step s
  shows cycle s − 1, because cycles are counted from 0 as in the chapter;
- ``online-softmax``: ``calc.attention.online_softmax_steps``, one frame per block.

The ``step`` slider (1-based) has a play button; the figure takes the arrow
keys, Home and End.  For print, ``key_frames`` names the steps to show.
"""
from __future__ import annotations

import json
import math
import random
from functools import lru_cache

from calc import attention, fmt, systolic, tiling

from . import Param
from ._svg import esc, num, svg_root, text, text_lines, wrap_px

TITLE = "Step-by-step animation"
ANIMATIONS = (("tiled-matmul", "Tiled matrix multiply"), ("systolic", "Systolic array"),
              ("online-softmax", "Online softmax"))
MM, SA, OS = ("tiled-matmul",), ("systolic",), ("online-softmax",)
KEYS = json.dumps({"ArrowLeft": {"step": -1}, "ArrowRight": {"step": 1}, "ArrowDown": {"step": -1},
                   "ArrowUp": {"step": 1}, "Home": {"step": -10**6}, "End": {"step": 10**6}},
                  separators=(",", ":"))

PARAMS = [
    Param("animation", "choice", "Animation", "tiled-matmul", options=ANIMATIONS),
    Param("step", "int", "Step", 1, min=1, max=10**6, play=True),
    Param("m", "int", "Rows of A and C (M)", 6, min=1, max=12, show_if=("animation", MM)),
    Param("n", "int", "Columns of B and C (N)", 6, min=1, max=12, show_if=("animation", MM)),
    Param("k", "int", "Inner dimension (K)", 4, min=1, max=12, show_if=("animation", MM)),
    Param("tile", "int", "Tile size T", 2, min=1, max=6, show_if=("animation", MM)),
    Param("rows", "int", "PE rows (rows of A)", 3, min=1, max=6, show_if=("animation", SA)),
    Param("cols", "int", "PE columns (columns of B)", 3, min=1, max=6, show_if=("animation", SA)),
    Param("depth", "int", "Inner dimension K", 3, min=1, max=6, show_if=("animation", SA)),
    Param("length", "int", "Row length", 12, min=1, max=24, show_if=("animation", OS)),
    Param("block", "int", "Block size", 3, min=1, max=12, show_if=("animation", OS)),
    Param("seed", "int", "Random seed", 4, min=0, max=9999, control="number", show_if=("animation", OS)),
]

EXAMPLES = [{"animation": a, "step": s} for a, _ in ANIMATIONS for s in (1, 10**6)]


# ----------------------------------------------------------------------------- frames

def operands(rows: int, depth: int, cols: int) -> tuple[list, list]:
    """Small whole numbers for the systolic demo: A[i][k] = (i + 2k) mod 4 + 1, B[k][j] = (2j + k) mod 3 + 1."""
    A = [[float((i + 2 * k) % 4 + 1) for k in range(depth)] for i in range(rows)]
    B = [[float((2 * j + k) % 3 + 1) for j in range(cols)] for k in range(depth)]
    return A, B


def softmax_input(length: int, seed: int) -> list[float]:
    """The row the online softmax consumes: N(0, 2²) draws from ``random.Random(seed)``."""
    rng = random.Random(seed)
    return [rng.gauss(0.0, 2.0) for _ in range(length)]


def frame_count(params: dict) -> int:
    a = params["animation"]
    if a == "tiled-matmul":
        t = tiling.tile_count(params["m"], params["n"], params["tile"])
        return t.total * math.ceil(params["k"] / params["tile"])
    if a == "systolic":
        return params["depth"] + params["rows"] + params["cols"] - 2
    return math.ceil(params["length"] / params["block"])


def ranges(params: dict) -> dict:
    return {"step": (1, frame_count(params))}


def key_frames(params: dict) -> list[int]:
    """Steps shown side by side in print: first, middle, last."""
    last = frame_count(params)
    return sorted({1, (last + 1) // 2, last})


# ----------------------------------------------------------------------------- drawing

def _tiled_cell(m: int, n: int, k: int, W: float) -> float:
    return max(8.0, min(34.0, (W - 40) / (k + n + 1), 320 / (m + k + 1)))


def _tiled_height(m: int, n: int, k: int, W: float) -> float:
    """The tiled drawing's height: B's K rows and a gap over A and C's M rows."""
    return 24 + (k + 1 + m) * _tiled_cell(m, n, k, W) + 10


def _systolic_hint(W: float) -> list[str]:
    return wrap_px("A enters from the left, B from the top, one cycle of skew per row and column", W - 20)


def _systolic_cell(R: int, C: int, K: int, W: float) -> float:
    return max(30.0, min(64.0, (W - 30) / (C + 0.7 * K + 0.5), 300 / (R + 0.6 * K + 0.5)))


def _systolic_height(R: int, C: int, K: int, W: float) -> float:
    """The array's height: the hint, B's skewed operands above the PEs, the R rows of PEs."""
    c = _systolic_cell(R, C, K, W)
    return 16 + 14 * len(_systolic_hint(W)) + K * c * 0.6 + R * c + 10


def _span(name: str) -> range:
    p = next(q for q in PARAMS if q.name == name)
    return range(int(p.min), int(p.max) + 1)


# The longest the step's sentence gets for each animation (the most digits every number can have).
LONGEST = {
    "tiled-matmul": "Step 1728 of 1728. Output tile (11, 11), phase 12 of 12: load A[10:12, 10:12] and "
                    "B[10:12, 10:12] into shared memory",
    "systolic": "Step 16 of 16. Cycle 15 (of 0–15): 36 of 36 processing elements multiply-accumulate",
    "online-softmax": "Step 24 of 24. Block 24 of 24, x[23:24]: block max −3.142; m −3.142 → 5.678; "
                      "ℓ = 12.34·0.1234 + Σ exp(x − m) = 12.34",
}


@lru_cache(maxsize=32)
def _room(animation: str, W: float) -> tuple[float, int]:
    """The drawing's height and the sentence's lines this animation keeps at width W: the most any
    sizes its sliders reach need. The figure's height then depends on the width alone, so a slider
    that grows the matrices does not move the controls under the reader's finger (M from 1 to 12
    moved them 216 px on a phone). The drawings' height budgets (320 and 300 px) are such that the
    chapter's sizes fill most of that room."""
    if animation == "tiled-matmul":
        tallest = max(_tiled_height(m, n, k, W) for m in _span("m") for n in _span("n") for k in _span("k"))
    elif animation == "systolic":
        tallest = max(_systolic_height(R, C, K, W) for R in _span("rows") for C in _span("cols") for K in _span("depth"))
    else:
        tallest = ONLINE_HEIGHT
    return tallest, len(wrap_px(LONGEST[animation], W - 20))


def _cell(x, y, w, h, cls, extra=""):
    return f'<rect x="{num(x)}" y="{num(y)}" width="{num(w)}" height="{num(h)}" class="{cls}"{extra}/>'


def _matrix(x0, y0, rows, cols, c, name, shade):
    """A rows×cols grid of cells of size c; ``shade(i, j)`` gives each cell's class."""
    out = [text(x0, y0 - 6, name, "wg-small wg-strong")]
    for i in range(rows):
        for j in range(cols):
            out.append(_cell(x0 + j * c, y0 + i * c, c, c, shade(i, j)))
    out.append(_cell(x0, y0, cols * c, rows * c, "wg-axis"))
    return out


def _in(r, i):
    return r[0] <= i < r[1]


def _tiled(params, step, W):
    m, n, k, T = params["m"], params["n"], params["k"], params["tile"]
    frames = list(tiling.frames(m, n, k, T))
    f = frames[step - 1]
    c = _tiled_cell(m, n, k, W)
    ax, by = 10, 24
    bx, ay = ax + k * c + c, by + k * c + c
    phases = math.ceil(k / T)
    cols_t = math.ceil(n / T)
    done = (f["tile"][0] * cols_t + f["tile"][1])            # output tiles finished before this one

    def c_shade(i, j):
        t = (i // T) * cols_t + j // T
        if t < done:
            return "wg-done"
        return "wg-cur" if t == done else "wg-idle"

    body = _matrix(ax, ay, m, k, c, "A (M×K)",
                   lambda i, j: "wg-load" if _in(f["a_rows"], i) and _in(f["a_cols"], j) else "wg-idle")
    body += _matrix(bx, by, k, n, c, "B (K×N)",
                    lambda i, j: "wg-load" if _in(f["b_rows"], i) and _in(f["b_cols"], j) else "wg-idle")
    body += _matrix(bx, ay, m, n, c, "C (M×N)", c_shade)
    H = ay + m * c + 10                      # = _tiled_height(m, n, k, W)
    (r0, r1), (k0, k1), (c0, c1) = f["a_rows"], f["a_cols"], f["b_cols"]
    line1 = (f"Output tile ({f['tile'][0]}, {f['tile'][1]}), phase {f['phase'] + 1} of {phases}: "
             f"load A[{r0}:{r1}, {k0}:{k1}] and B[{k0}:{k1}, {c0}:{c1}] into shared memory")
    total = tiling.tiled_global_loads(m, n, k, T)
    readouts = [
        ["Output tile", f"({f['tile'][0]}, {f['tile'][1]}) of {tiling.tile_count(m, n, T).total} tiles"],
        ["Phase", f"{f['phase'] + 1} of {phases}"],
        ["Elements loaded so far", f"{fmt.num(f['loads_so_far'])} of {fmt.num(total)}"],
        ["Untiled kernel loads", fmt.num(tiling.naive_global_loads(m, n, k))],
    ]
    legend = [("wg-load", "tile in shared memory"), ("wg-cur", "C tile being summed"), ("wg-done", "C tile finished")]
    return body, H, line1, readouts, legend


def _systolic(params, step, W):
    R, C, K = params["rows"], params["cols"], params["depth"]
    A, B = operands(R, K, C)
    frames = list(systolic.frames(A, B))
    f = frames[step - 1]
    t = f["cycle"]
    c, hint = _systolic_cell(R, C, K, W), _systolic_hint(W)
    body = text_lines(10, 16, hint, "wg-small wg-muted")
    x0, y0 = 16 + K * c * 0.7, 16 + 14 * len(hint) + K * c * 0.6
    active = {(i, j): kk for i, j, kk in f["active"]}
    for i in range(R):
        for j in range(C):
            x, y = x0 + j * c, y0 + i * c
            on = (i, j) in active
            body.append(_cell(x + 2, y + 2, c - 4, c - 4, "wg-pe" + (" wg-cur" if on else "")))
            body.append(text(x + c / 2, y + c / 2 + 2, f"{f['acc'][i][j]:g}", "wg-strong", "middle"))
            if on and c >= 36:                 # smaller, the product would sit on the sum
                kk = active[(i, j)]
                body.append(text(x + c / 2, y + c - 7, f"+{A[i][kk]:g}·{B[kk][j]:g}",
                                 "wg-small", "middle"))
    # Operands still waiting outside the array: A[i][k] reaches column t − i − k.
    for i in range(R):
        for kk in range(K):
            col = t - i - kk
            if col < 0 and x0 + col * c * 0.7 > 4:
                body.append(text(x0 + col * c * 0.7 + c * 0.35, y0 + i * c + c / 2 + 4, f"{A[i][kk]:g}",
                                 "wg-small wg-muted", "middle"))
    for j in range(C):
        for kk in range(K):
            row = t - j - kk
            if row < 0 and y0 + row * c * 0.6 > 8 + 14 * len(hint):
                body.append(text(x0 + j * c + c / 2, y0 + row * c * 0.6 + c * 0.35, f"{B[kk][j]:g}",
                                 "wg-small wg-muted", "middle"))
    H = y0 + R * c + 10                      # = _systolic_height(R, C, K, W)
    macs = sum(len(g["active"]) for g in frames[:step])
    # Cycles are counted from 0, as in the chapter's text and its printed frames (calc's ``cycle``);
    # the step slider above them counts from 1.
    last = len(frames) - 1
    line1 = (f"Cycle {t} (of 0–{last}): {len(active)} of {R * C} processing elements multiply-accumulate")
    product = [[sum(A[i][kk] * B[kk][j] for kk in range(K)) for j in range(C)] for i in range(R)]
    readouts = [
        ["Cycle (from 0)", f"{t} of 0–{last} (last: K + R + C − 3)"],
        ["Busy PEs this cycle", f"{len(active)} of {R * C}"],
        ["MACs so far", f"{macs} of {R * C * K}"],
        ["Utilisation so far", fmt.pct(macs / (R * C * (t + 1)))],
    ]
    if step == len(frames):
        readouts.append(["Result equals A·B", "yes" if f["acc"] == product else "NO"])
    legend = [("wg-pe wg-cur", "MAC this cycle"), ("wg-pe", "idle PE")]
    return body, H, line1, readouts, legend


def _online(params, step, W):
    row = softmax_input(params["length"], params["seed"])
    steps = attention.online_softmax_steps(row, params["block"])
    s = steps[step - 1]
    prev_m = steps[step - 2].m if step > 1 else -math.inf
    prev_l = steps[step - 2].l if step > 1 else 0.0
    L = len(row)
    x0, plot_w, top, ph = 40, W - 60, 30, 170
    hi = max(max(abs(x) for x in row), 1.0)
    Y = lambda v: top + ph / 2 - v / hi * (ph / 2 - 6)
    bw = plot_w / L
    body = [f'<line x1="{num(x0)}" y1="{num(Y(0))}" x2="{num(x0 + plot_w)}" y2="{num(Y(0))}" class="wg-axis"/>']
    for j, x in enumerate(row):
        cls = "wg-done" if j < s.start else "wg-cur" if j < s.stop else "wg-idle"
        y1, y2 = sorted((Y(0), Y(x)))
        body.append(_cell(x0 + j * bw + 1, y1, bw - 2, max(y2 - y1, 1), cls))
        if bw >= 22:
            body.append(text(x0 + j * bw + bw / 2, top + ph + 14, str(j), "wg-small wg-muted", "middle"))
    ym = Y(s.m)
    body.append(f'<line x1="{num(x0)}" y1="{num(ym)}" x2="{num(x0 + plot_w)}" y2="{num(ym)}" class="wg-ridge"/>')
    body.append(text(x0 - 4, ym + 4, "m", "wg-small wg-strong", "end"))
    body.append(text(x0, 16, "x_j (bars); dashed: running maximum m", "wg-small wg-muted"))
    H = top + ph + 22                        # = ONLINE_HEIGHT
    line1 = (f"Block {step} of {len(steps)}, x[{s.start}:{s.stop}]: block max {fmt.num(s.block_max, 4)}; "
             f"m {'−∞' if prev_m == -math.inf else fmt.num(prev_m, 4)} → {fmt.num(s.m, 4)}; "
             f"ℓ = {fmt.num(prev_l, 4)}·{fmt.num(s.rescale, 4)} + Σ exp(x − m) = {fmt.num(s.l, 4)}")
    readouts = [
        ["Block", f"{step} of {len(steps)}: x[{s.start}:{s.stop}]"],
        ["Running maximum m", fmt.num(s.m, 4)],
        ["Rescale of old sum e^(m_old − m)", fmt.num(s.rescale, 4)],
        ["Running sum ℓ", fmt.num(s.l, 4)],
    ]
    if step == len(steps):
        online = [math.exp(x - s.m) / s.l for x in row]
        err = max(abs(a - b) for a, b in zip(online, attention.softmax_row(row)))
        readouts.append(["exp(x − m)/ℓ vs two-pass softmax", f"max difference {err:.1e}"])
    legend = [("wg-done", "consumed"), ("wg-cur", "this block"), ("wg-idle", "still to come")]
    return body, H, line1, readouts, legend


ONLINE_HEIGHT = 30 + 170 + 22
DRAW = {"tiled-matmul": _tiled, "systolic": _systolic, "online-softmax": _online}


def render(params: dict) -> dict:
    total = frame_count(params)
    params["step"] = step = min(params["step"], total)
    W = params.get("_width", 640)
    body, H, line1, readouts, legend = DRAW[params["animation"]](params, step, W)
    # Caption lines under the room kept for the drawing (they also label each frame in print),
    # then a legend: both where the largest sizes put them.
    room, lines = _room(params["animation"], W)
    y = max(H, room) + 8
    caption = wrap_px(f"Step {step} of {total}. {line1}", W - 20)
    body += text_lines(10, y + 8, caption, "wg-small", 15)
    y += 15 * max(len(caption), lines)
    x = 10
    for cls, label in legend:
        if x + 18 + len(label) * 6.6 > W:
            x, y = 10, y + 18
        body.append(_cell(x, y + 2, 12, 12, cls))
        body.append(text(x + 16, y + 12, label, "wg-small wg-muted"))
        x += 30 + len(label) * 6.6
    H = y + 22
    name = dict(ANIMATIONS)[params["animation"]]
    title = f"{name}, step {step} of {total}"
    extra = (f" data-keys='{KEYS}' data-live=''"
             f" data-keys-help='{esc(name)} animation: left and right arrow keys step, Home and End jump'")
    readouts = [["Step", f"{step} of {total}"]] + readouts
    desc = f"Step {step} of {total}. {line1}."
    return {"svg": svg_root(W, round(H), "wg-steps", title, desc, body, extra), "readouts": readouts,
            "message": None}
