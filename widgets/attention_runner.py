"""Attention runner: run one of the book's attention kernels on small inputs and check it.

The kernels are the functions of ``calc.kernels`` (the code the chapter prints);
in the browser they run in Pyodide on Q, K, V drawn from the reader's seed.
The figure shows P = softmax(Q Kᵀ) (or, for FlashAttention, the blocks in
which it is computed and discarded), the output O, and for each row the check
against ``calc.attention.reference``.
"""
from __future__ import annotations

import json
import math

from calc import attention, fmt, kernels

from . import Param
from ._svg import STRONG_CHAR_PX, esc, num, svg_root, text, text_lines, wrap_px

TITLE = "Attention kernel runner"
KERNEL_LABELS = (
    ("naive", "Naive: S, P, O one matrix at a time"),
    ("per-output", "One thread per output element"),
    ("tiled", "Tiled matrix products"),
    ("flash", "FlashAttention (online softmax)"),
)
TOLERANCE = 1e-12            # "agrees with the reference": a few hundred ulps of an O(1) value
HEAT_LEVELS = 4              # colour classes wg-hn4 … wg-h0 … wg-h4
CHECK_ROW = 15               # their row pitch when they sit below O (on a phone)

PARAMS = [
    Param("kernel", "choice", "Kernel", "naive", options=KERNEL_LABELS),
    Param("n", "int", "Sequence length N", 6, min=1, max=16, group="Inputs"),
    Param("d", "int", "Head size d", 4, min=1, max=8, group="Inputs"),
    Param("seed", "int", "Random seed", 1, min=0, max=9999, control="number", group="Inputs"),
    Param("tile", "int", "Tile size T", 2, min=1, max=8, show_if=("kernel", ("tiled",))),
    Param("block_rows", "int", "Query block Br", 2, min=1, max=8, show_if=("kernel", ("flash",))),
    Param("block_cols", "int", "Key block Bc", 3, min=1, max=8, show_if=("kernel", ("flash",))),
]

EXAMPLES = [{"kernel": k} for k, _ in KERNEL_LABELS] + [{"kernel": "flash", "n": 16, "d": 8, "block_cols": 1}]


def sci(x: float) -> str:
    """A tiny error as 2.2 × 10⁻¹⁶ (0 stays "0")."""
    if x == 0:
        return "0"
    mantissa, exp = f"{x:.1e}".split("e")
    sup = str(int(exp)).translate(str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹"))
    return f"{mantissa} × 10{sup}"


def call_text(params: dict) -> str:
    """The call as the chapter writes it."""
    k = params["kernel"]
    fn = kernels.KERNELS[k].__name__
    extra = {"tiled": f", tile={params['tile']}",
             "flash": f", block_rows={params['block_rows']}, block_cols={params['block_cols']}"}.get(k, "")
    return f"{fn}(Q, K, V{extra})"


def compute(params: dict) -> dict:
    """Inputs, the kernel's O, the reference, P, and the check: everything the figure shows."""
    Q, K, V = kernels.random_inputs(params["n"], params["d"], params["seed"])
    O = kernels.run(params["kernel"], Q, K, V, params["tile"], params["block_rows"], params["block_cols"])
    ref = attention.reference(Q, K, V)
    P = [attention.softmax_row([kernels.dot(q, k) for k in K]) for q in Q]
    row_err = [max(abs(o - r) for o, r in zip(orow, rrow)) for orow, rrow in zip(O, ref)]
    return {"O": O, "P": P, "row_err": row_err, "check": kernels.check(O, Q, K, V)}


def _heat_class(v: float, scale: float) -> str:
    level = round(HEAT_LEVELS * v / scale) if scale > 0 else 0
    return f"wg-h{'n' if level < 0 else ''}{abs(level)}"


def flash_block(params) -> tuple[str, str]:
    """FlashAttention's block of P as held, "Br×Bc", and a note when N is smaller than the block asked for."""
    n, br, bc = params["n"], params["block_rows"], params["block_cols"]
    shape = f"{min(br, n)}×{min(bc, n)}"
    return shape, (f" (Br×Bc = {br}×{bc}, cut to N = {n})" if max(br, bc) > n else "")


def _grid_lines(x0, y0, cell, rows, cols, step_r, step_c, cls):
    """Lines every ``step_r`` rows and ``step_c`` columns (block or tile boundaries)."""
    d = "".join(f"M{num(x0)} {num(y0 + r * cell)}h{num(cols * cell)}" for r in range(step_r, rows, step_r))
    d += "".join(f"M{num(x0 + c * cell)} {num(y0)}v{num(rows * cell)}" for c in range(step_c, cols, step_c))
    return f'<path d="{d}" class="{cls}"/>' if d else ""


def _p_note(params) -> str:
    """The line under P: how the kernel holds it."""
    n = params["n"]
    if params["kernel"] == "flash":
        return f"Never stored: {flash_block(params)[0]} blocks, one at a time."
    if params["kernel"] == "tiled":
        return f"{n}×{n}, in memory; S = QKᵀ in {params['tile']}×{params['tile']} tiles."
    return f"{n}×{n}, in memory; darker: larger weight in its row."


def _layout(W: int, n: int, dv: int, notes: int) -> tuple[float, float, float, float]:
    """P's size, O's cell, the room under P and the figure's height, for N = n, d = dv."""
    narrow = W < 520
    p_size = min(W - 24, 260) if narrow else min(W * 0.3, 240)
    # On a phone O takes the whole width and its checks go below it; else they sit beside it.
    room = W - 20 if narrow else W - (10 + p_size + 26) - 262      # the check columns need 262 px
    cell = max(10.0, min(36.0, room / dv, 300 / n))
    under_p = p_size + 10 + 14 * notes          # the panel and its note lines
    top = 26
    H = top + under_p + 32 + n * cell + 30 + n * CHECK_ROW if narrow else top + max(under_p, n * cell + 10)
    return p_size, cell, under_p, H


def reserved_height(params: dict, W: int, notes: int) -> float:
    """The figure's height: the tallest it takes for any kernel, N and d, so that a reader moving
    them never moves the controls under the figure (its drawing sits at the top of that box)."""
    n_max = next(p.max for p in PARAMS if p.name == "n")
    d_max = next(p.max for p in PARAMS if p.name == "d")
    widest = max(len(wrap_px(_p_note({**params, "n": n_max, "kernel": k}), _layout(W, 1, 1, 0)[0] + 20))
                 for k, _ in KERNEL_LABELS)
    return max(_layout(W, n, d, max(notes, widest))[3] for n in range(1, n_max + 1) for d in range(1, d_max + 1))


def _p_panel(params, P, x0, y0, size):
    """P = softmax(S): a heat map (stored) or its Br×Bc blocks (FlashAttention never stores it).
    Returns the body and the number of note lines under the panel (wrapped to its width)."""
    n = params["n"]
    cell = size / n
    flash = params["kernel"] == "flash"
    body = [text(x0, y0 - 8, "P = softmax(QKᵀ)", "wg-small wg-strong")]
    for i, row in enumerate(P):
        for j, p in enumerate(row):
            cls = "wg-pblock" if flash else f"wg-h{min(HEAT_LEVELS, round(HEAT_LEVELS * p / max(row)))}"
            body.append(f'<rect x="{num(x0 + j * cell)}" y="{num(y0 + i * cell)}" width="{num(cell)}"'
                        f' height="{num(cell)}" class="{cls}"/>')
    body.append(f'<rect x="{num(x0)}" y="{num(y0)}" width="{num(size)}" height="{num(size)}" class="wg-axis"/>')
    if flash:
        body.append(_grid_lines(x0, y0, cell, n, n, params["block_rows"], params["block_cols"], "wg-blocks"))
    elif params["kernel"] == "tiled":
        body.append(_grid_lines(x0, y0, cell, n, n, params["tile"], params["tile"], "wg-blocks"))
    lines = wrap_px(_p_note(params), size + 20)
    body += text_lines(x0, y0 + size + 14, lines, "wg-small wg-muted")
    return body, len(lines)


def _o_panel(params, O, row_err, sums, x0, y0, cell, show_values, checks_below=False):
    n, dv = len(O), len(O[0])
    scale = max(abs(v) for row in O for v in row) or 1.0
    label = f"O = PV, {n}×{dv}"
    body = [text(x0, y0 - 8, label, "wg-small wg-strong")]
    for i, row in enumerate(O):
        for c, v in enumerate(row):
            x, y = x0 + c * cell, y0 + i * cell
            body.append(f'<rect x="{num(x)}" y="{num(y)}" width="{num(cell)}" height="{num(cell)}"'
                        f' class="{_heat_class(v, scale)}"><title>O[{i}][{c}] = {fmt.num(v, 6)}</title></rect>')
            if show_values:
                body.append(text(x + cell / 2, y + cell / 2 + 4, f"{v:.2f}", "wg-small wg-cellnum", "middle"))
    body.append(f'<rect x="{num(x0)}" y="{num(y0)}" width="{num(dv * cell)}" height="{num(n * cell)}" class="wg-axis"/>')
    if params["kernel"] == "tiled":
        body.append(_grid_lines(x0, y0, cell, n, dv, params["tile"], params["tile"], "wg-blocks"))
    elif params["kernel"] == "flash":
        body.append(_grid_lines(x0, y0, cell, n, dv, params["block_rows"], dv, "wg-blocks"))
    # Per-row check: Σ_j P[i][j] and max_c |O[i][c] − O_ref[i][c]|, beside O or, on a phone, below it.
    if checks_below:
        cx, cy, fs, pitch = x0, y0 + n * cell + 30, 11.5, CHECK_ROW
    else:
        # beside O, clear of its label too (one column of O is narrower than "O = PV, 6×1")
        cx, cy, fs, pitch = x0 + max(dv * cell, len(label) * STRONG_CHAR_PX) + 12, y0, min(11.5, cell * 0.7), cell
    body.append(text(cx, cy - 8, "Σ P_ref row", "wg-small wg-strong"))
    body.append(text(cx + 140, cy - 8, "max |O − O_ref|", "wg-small wg-strong"))
    for i in range(n):
        y = cy + i * pitch + pitch / 2 + fs / 3
        size = f' font-size="{num(fs)}"'
        body.append(text(cx, y, fmt.num(sums[i], 12), "wg-mono", extra=size))   # 1.00000000000
        body.append(text(cx + 140, y, sci(row_err[i]), "wg-mono" + (" wg-bad" if row_err[i] > TOLERANCE else ""),
                         extra=size))
    return body


def render(params: dict) -> dict:
    r = compute(params)
    O, chk = r["O"], r["check"]
    n, dv = params["n"], params["d"]
    W = params.get("_width", 640)
    narrow = W < 520
    p_size, cell, _, _ = _layout(W, n, dv, 0)
    show_values = cell >= 30
    top = 26
    body = []
    p_body, notes = _p_panel(params, r["P"], 10, top, p_size)
    body += p_body
    _, _, under_p, _ = _layout(W, n, dv, notes)
    if narrow:
        oy = top + under_p + 32
        body += _o_panel(params, O, r["row_err"], chk.row_sums, 10, oy, cell, show_values, checks_below=True)
    else:
        ox = 10 + p_size + 26
        body += _o_panel(params, O, r["row_err"], chk.row_sums, ox, top, cell, show_values)
    H = reserved_height(params, W, notes)
    agrees = chk.ok(TOLERANCE)
    kernel_label = dict(KERNEL_LABELS)[params["kernel"]]
    block, cut = flash_block(params)
    stored = {"flash": f"m and ℓ ({2 * n} numbers) and one {block} block{cut}",
              "tiled": f"S and P ({2 * n * n} numbers) plus two {params['tile']}×{params['tile']} tiles"}.get(
        params["kernel"], f"S and P ({2 * n * n} numbers)")
    readouts = [
        ["Kernel", call_text(params)],
        ["Shapes", f"Q, K, V: {n}×{dv}; O: {n}×{dv}"],
        ["max |O − O_ref|", sci(chk.max_abs_error)],
        ["Rows of the reference P sum to 1", f"max |Σ − 1| = {sci(chk.max_row_sum_error)}"],
        ["Agrees with the reference", f"{'yes' if agrees else 'NO'} (tolerance {sci(TOLERANCE)})"],
        ["Held besides Q, K, V, O", stored],
    ]
    title = f"{kernel_label}: O = softmax(QKᵀ)V for N = {n}, d = {dv}"
    desc = (f"{call_text(params)} on random inputs with seed {params['seed']}. Largest difference from the "
            f"reference: {sci(chk.max_abs_error)}; every row of P sums to 1 within {sci(chk.max_row_sum_error)}.")
    values = esc(json.dumps(O, separators=(",", ":")))
    svg = svg_root(W, round(H), "wg-runner", title, desc, body, f" data-values='{values}'")
    message = None if agrees else f"{call_text(params)} differs from the reference by {sci(chk.max_abs_error)}."
    # on paper no control sits under the figure: it ends where its drawing does (widgets.standalone_svg)
    drawn = _layout(W, params["n"], params["d"], notes)[3]
    return {"svg": svg, "readouts": readouts, "message": message, "print_height": math.ceil(drawn)}
