"""CUDA block grid: how gridDim × blockDim threads cover the data, and who computes what.

Index arithmetic and launch limits come from ``calc.cuda``; this module draws
a 2D view (grid of blocks + the selected block's threads, coloured by warp) or
a 3D view (isometric, rotated by ``yaw``/``pitch``, by slider, arrow keys or drag).
"""
from __future__ import annotations

import math
from fractions import Fraction

from calc import cuda, fmt, specs

from . import Param
from ._svg import SMALL_CHAR_PX, STRONG_CHAR_PX, data_set, num, polygon, svg_root, text, text_lines, wrap_px

TITLE = "CUDA block grid"
DEVICE = "h100-sxm"              # launch limits are checked against this GPU
KERNELS = (
    ("vecadd", "Vector add: c[i] = a[i] + b[i]"),
    ("matadd", "Matrix add: C[row][col] = A[row][col] + B[row][col]"),
    ("scale3d", "Volume scale: out[z][y][x] = s · in[z][y][x]"),
)
GRID_CAP_2D, GRID_CAP_3D, LATTICE_CAP = 8, 5, 6   # most blocks / threads drawn per axis
ROW_CAP, CLICK_CAP = 64, 128     # rows of threads drawn; biggest block whose threads are clickable
LABEL_PITCH = 13                 # px between the baselines of two wg-small labels, one above the other
NARROW_3D = 504                  # narrower than this, the 3D view stacks its two panels
BIG = 2**31

PARAMS = [
    Param("grid_x", "int", "gridDim.x", 3, min=1, max=BIG, control="number", group="Launch"),
    Param("grid_y", "int", "gridDim.y", 3, min=1, max=BIG, control="number", group="Launch"),
    Param("grid_z", "int", "gridDim.z", 1, min=1, max=BIG, control="number", group="Launch"),
    Param("block_x", "int", "blockDim.x", 16, min=1, max=4096, control="number", group="Launch"),
    Param("block_y", "int", "blockDim.y", 4, min=1, max=4096, control="number", group="Launch"),
    Param("block_z", "int", "blockDim.z", 1, min=1, max=4096, control="number", group="Launch"),
    Param("kernel", "choice", "Kernel", "matadd", options=KERNELS, group="Data"),
    Param("size_x", "int", "Data width (x)", 40, min=1, max=BIG, control="number", group="Data"),
    Param("size_y", "int", "Data height (y)", 10, min=1, max=BIG, control="number", group="Data"),
    Param("size_z", "int", "Data depth (z)", 1, min=1, max=BIG, control="number", group="Data"),
    Param("sel_x", "int", "Thread x (global)", 19, min=0, max=BIG, control="number", group="Selected thread"),
    Param("sel_y", "int", "Thread y (global)", 5, min=0, max=BIG, control="number", group="Selected thread"),
    Param("sel_z", "int", "Thread z (global)", 0, min=0, max=BIG, control="number", group="Selected thread"),
    Param("view", "choice", "Projection", "2d", options=(("2d", "2D"), ("3d", "3D")), control="radio", group="View"),
    # only in the 3D view (in 2D they would do nothing)
    Param("yaw", "int", "Turn (3D)", 30, min=0, max=345, step=15, wrap=True, unit="°", group="View",
          show_if=("view", ("3d",))),
    Param("pitch", "int", "Tilt (3D)", 25, min=-60, max=80, step=5, unit="°", group="View",
          show_if=("view", ("3d",))),
]

EXAMPLES = [{"block_x": 2048}, {"block_z": 128}, {"view": "3d", "grid_z": 3, "block_z": 2},
            {"kernel": "vecadd", "grid_y": 1, "block_y": 1, "block_x": 256, "size_x": 1000}]
KEYS = '{"ArrowLeft":{"yaw":-15},"ArrowRight":{"yaw":15},"ArrowUp":{"pitch":5},"ArrowDown":{"pitch":-5}}'
DRAG = '{"yaw":[0.6,0],"pitch":[0,0.4]}'


# ----------------------------------------------------------------------------- numbers

def launch(params: dict):
    grid = cuda.Dim3(params["grid_x"], params["grid_y"], params["grid_z"])
    block = cuda.Dim3(params["block_x"], params["block_y"], params["block_z"])
    return grid, block


def check_launch(grid, block) -> str | None:
    """None if legal, else calc.cuda's message naming the broken limit."""
    try:
        cuda.validate_launch(grid, block, specs.device(DEVICE))
    except ValueError as exc:
        return str(exc)
    return None


def split(g, block):
    """(blockIdx, threadIdx) of the thread at global coordinates ``g``."""
    return (cuda.Dim3(g[0] // block.x, g[1] // block.y, g[2] // block.z),
            cuda.Dim3(g[0] % block.x, g[1] % block.y, g[2] % block.z))


def thread_info(params: dict, grid, block) -> dict:
    """Indices of the selected thread (clamped into the launch) and the element it computes."""
    g = (min(params["sel_x"], grid.x * block.x - 1), min(params["sel_y"], grid.y * block.y - 1),
         min(params["sel_z"], grid.z * block.z - 1))
    block_idx, thread_idx = split(g, block)
    warp, lane = cuda.warp_of(thread_idx, block)
    info = {
        "global": tuple(cuda.global_coords(block_idx, block, thread_idx)),
        "block_idx": block_idx, "thread_idx": thread_idx,
        "tid": cuda.linear_thread(thread_idx, block),
        "linear": cuda.global_linear(block_idx, block, thread_idx, grid),
        "warp": warp, "lane": lane,
    }
    info["active"], info["output"] = element(params, g)
    return info


def element(params: dict, g):
    """(does this thread do work?, what it computes) for the chosen kernel.

    The vector add is the chapter's 1D kernel, i = blockIdx.x · blockDim.x + threadIdx.x:
    it reads x only, so threads that differ in y or z compute the same element.
    """
    x, y, z = g
    sx, sy, sz = params["size_x"], params["size_y"], params["size_z"]
    kind = params["kernel"]
    if kind == "vecadd":
        n = sx
        if x < n:
            return True, f"c[{fmt.num(x)}] = a[{fmt.num(x)}] + b[{fmt.num(x)}]"
        return False, f"nothing: i = {fmt.num(x)} ≥ n = {fmt.num(n)}, the bounds check skips it"
    if kind == "matadd":
        if z == 0 and x < sx and y < sy:
            return True, f"C[{fmt.num(y)}][{fmt.num(x)}] (offset row·width + col = {fmt.num(y * sx + x)})"
        why = ("z > 0" if z else f"col {fmt.num(x)} ≥ width {fmt.num(sx)}" if x >= sx
               else f"row {fmt.num(y)} ≥ height {fmt.num(sy)}")
        return False, f"nothing: {why}, the bounds check skips it"
    if x < sx and y < sy and z < sz:
        return True, f"out[{fmt.num(z)}][{fmt.num(y)}][{fmt.num(x)}] (offset {fmt.num((z * sy + y) * sx + x)})"
    return False, "nothing: outside the volume, the bounds check skips it"


def active(params: dict, x: int, y: int, z: int, grid, block) -> bool:
    """Does the thread at global (x, y, z) get a data element?"""
    return element(params, (x, y, z))[0]


def idle_text(idle: int, threads: int) -> str:
    """The idle threads of a launch as a share that reads 0% or 100% only when it is exactly that
    (with up to six significant figures, "99.9997%"); beyond that, as a count ("all but 40")."""
    x = Fraction(idle, threads)
    for sig in range(3, 7):
        text = fmt.pct(x, sig)
        if not (0 < x < 1 and float(text.rstrip("%").replace(",", "")) in (0, 100)):
            return f"{text} idle"
    return f"all but {fmt.num(threads - idle)} idle" if x > Fraction(1, 2) else f"{fmt.num(idle)} idle"


AXES = {"vecadd": "x", "matadd": "xy", "scale3d": "xyz"}
EXTENT = {"x": "width", "y": "height", "z": "depth"}


def coverage(params: dict, grid, block) -> dict:
    """Elements, the elements some thread computes, and the threads that pass the bounds check.

    Counted per axis: a kernel's threads reach min(size, gridDim · blockDim) positions along
    each axis it indexes, so a launch can have more threads than elements and still miss some.
    """
    kind = params["kernel"]
    reach = {a: getattr(grid, a) * getattr(block, a) for a in "xyz"}
    size = {a: params["size_" + a] for a in "xyz"}
    axes = AXES[kind]
    elements = covered = 1
    for a in axes:
        elements *= size[a]
        covered *= min(size[a], reach[a])
    threads = reach["x"] * reach["y"] * reach["z"]
    # vecadd: every row along y and z repeats the x row; matadd: only the z = 0 plane works.
    working = covered * (reach["y"] * reach["z"] if kind == "vecadd" else 1)
    short = [a for a in axes if reach[a] < size[a]]
    return {"elements": elements, "covered": covered, "threads": threads, "working": working,
            "short": short, "reach": reach, "size": size}


# ----------------------------------------------------------------------------- 2D view

def _title(make, sel, last, width):
    """A wg-strong title wrapped to ``width``, and the lines to reserve for it.

    ``make(index)`` builds the title for a block index; ``last`` is the launch's largest, whose
    numbers print longest, so the reserved height depends on the launch, not on the selection.
    """
    lines = wrap_px(make(sel), width, STRONG_CHAR_PX)
    return lines, max(len(lines), len(wrap_px(make(last), width, STRONG_CHAR_PX)))


def _window(sel: int, count: int, cap: int) -> range:
    """At most ``cap`` indices of ``count``, keeping ``sel`` inside."""
    if count <= cap:
        return range(count)
    start = min(max(sel - cap // 2, 0), count - cap)
    return range(start, start + cap)


def _thread_runs(params, grid, block, b, tz, left, up, cell):
    """One block's threads as runs of working / idle cells (few elements, however many threads)."""
    out = []
    for j in range(block.y):
        i = 0
        while i < block.x:
            state = active(params, b[0] * block.x + i, b[1] * block.y + j, b[2] * block.z + tz, grid, block)
            k = i + 1
            while k < block.x and active(params, b[0] * block.x + k, b[1] * block.y + j,
                                         b[2] * block.z + tz, grid, block) == state:
                k += 1
            out.append(f'<rect x="{num(left + i * cell)}" y="{num(up + j * cell)}" width="{num((k - i) * cell)}"'
                       f' height="{num(cell)}" class="{"wg-t0" if state else "wg-idle"}"/>')
            i = k
    if cell >= 6:   # cell borders as one path
        d = "".join(f"M{num(left + i * cell)} {num(up)}v{num(block.y * cell)}" for i in range(1, block.x))
        d += "".join(f"M{num(left)} {num(up + j * cell)}h{num(block.x * cell)}" for j in range(1, block.y))
        out.append(f'<path d="{d}" class="wg-cells"/>')
    return out


def _grid_panel_2d(params, grid, block, info, x0, y0, w, h, fs):
    """Blocks of the selected z-slice; each block shows its threads when they fit."""
    bi = info["block_idx"]
    cols, rows = _window(bi.x, grid.x, GRID_CAP_2D), _window(bi.y, grid.y, GRID_CAP_2D)
    title, n_title = _title(lambda z: f"Grid: gridDim = {_dim(grid)}"
                            + (f", slice blockIdx.z = {fmt.num(z)}" if grid.z > 1 else ""), bi.z, grid.z - 1, w)
    body = text_lines(x0, y0 + fs, title, "wg-strong", 16)
    top = y0 + fs + 8 + 16 * (n_title - 1)
    gap = 4
    cell = min((w - gap * (len(cols) - 1)) / (len(cols) * block.x),
               (h - (top - y0) - 18 - gap * (len(rows) - 1)) / (len(rows) * block.y))
    bw, bh = cell * block.x, cell * block.y
    if bw < 14 or bh < 10:      # threads too small: draw blocks as plain boxes
        side = min((w - gap * (len(cols) - 1)) / len(cols), (h - (top - y0) - 18 - gap * (len(rows) - 1)) / len(rows))
        bw, bh, cell = side, side * min(1.0, block.y / block.x) if block.x >= block.y else side, 0
    tz = info["thread_idx"].z
    for r, by in enumerate(rows):
        for c, bx in enumerate(cols):
            left, up = x0 + c * (bw + gap), top + r * (bh + gap)
            is_sel = (bx, by) == (bi.x, bi.y)
            tx, ty = info["thread_idx"].x, info["thread_idx"].y
            target = {"sel_x": bx * block.x + tx, "sel_y": by * block.y + ty, "sel_z": bi.z * block.z + tz}
            if cell >= 3:
                body += _thread_runs(params, grid, block, (bx, by, bi.z), tz, left, up, cell)
                if is_sel:
                    body.append(f'<rect x="{num(left + tx * cell)}" y="{num(up + ty * cell)}" width="{num(cell)}"'
                                f' height="{num(cell)}" class="wg-tsel"/>')
            body.append(f'<rect x="{num(left)}" y="{num(up)}" width="{num(bw)}" height="{num(bh)}"'
                        f' class="wg-box{" wg-sel" if is_sel else ""}{" wg-hollow" if cell >= 3 else ""}"'
                        f'{data_set(target)}><title>block ({bx}, {by}, {bi.z})</title></rect>')
            label = f"{bx},{by}"
            if cell < 3 and bw > len(label) * SMALL_CHAR_PX + 4 and bh + gap >= LABEL_PITCH:   # room for a label,
                body.append(text(left + bw / 2, up + bh / 2 + 4, label, "wg-small", "middle"))  # clear of the next row's
    note = []
    if len(cols) < grid.x:
        note.append(f"blocks x {cols[0]:,}–{cols[-1]:,} of {grid.x:,}")
    if len(rows) < grid.y:
        note.append(f"y {rows[0]:,}–{rows[-1]:,} of {grid.y:,}")
    bottom = top + len(rows) * (bh + gap)
    lines = wrap_px("showing " + ", ".join(note), w) if note else []
    body += text_lines(x0, bottom + 12, lines, "wg-small wg-muted")
    return body, bottom + 16 * bool(lines) + 14 * max(0, len(lines) - 1)


def _block_panel_2d(params, grid, block, info, x0, y0, w, fs):
    """The selected block's threads (z-slice of the selected thread), one colour band per warp."""
    bi, ti = info["block_idx"], info["thread_idx"]
    per_row = min(block.x, 32)
    lines_per_y = math.ceil(block.x / per_row)
    total_rows = block.y * lines_per_y
    n_rows = min(total_rows, ROW_CAP)
    # A block taller than the panel shows the rows around the selected thread.
    srow = ti.y * lines_per_y + ti.x // per_row
    first = min(max(0, srow - n_rows // 2), total_rows - n_rows)
    cell = max(3.0, min(22.0, (w - 30) / per_row, 360 / n_rows))
    title, n_title = _title(lambda b: f"Block {_dim(b)}: blockDim = {_dim(block)}", bi,
                            cuda.Dim3(grid.x - 1, grid.y - 1, grid.z - 1), w)
    body = text_lines(x0, y0 + fs, title, "wg-strong", 16)
    top = y0 + fs + 8 + 16 * (n_title - 1)
    left = x0 + 28
    clickable = block.x * block.y <= CLICK_CAP

    def cls_of(i, j):
        warp = cuda.warp_of(cuda.Dim3(i, j, ti.z), block)[0]
        g = (bi.x * block.x + i, bi.y * block.y + j, bi.z * block.z + ti.z)
        return ("wg-t%d" % (warp % 2) if active(params, *g, grid, block) else "wg-idle"), g

    labelled_y = -math.inf
    for shown in range(n_rows):
        row = first + shown
        j, part = divmod(row, lines_per_y)
        cols = range(part * per_row, min(block.x, (part + 1) * per_row))
        y = num(top + shown * cell)
        if clickable:   # one element per thread, each selects itself when clicked
            for i in cols:
                cls, g = cls_of(i, j)
                body.append(f'<rect x="{num(left + (i % per_row) * cell)}" y="{y}" width="{num(cell)}"'
                            f' height="{num(cell)}" class="{cls}"{data_set({"sel_x": g[0], "sel_y": g[1], "sel_z": g[2]})}/>')
        else:           # big blocks: runs of equal cells; select with the number inputs
            i = cols[0]
            while i < cols[-1] + 1:
                cls = cls_of(i, j)[0]
                k = i + 1
                while k <= cols[-1] and cls_of(k, j)[0] == cls:
                    k += 1
                body.append(f'<rect x="{num(left + (i % per_row) * cell)}" y="{y}" width="{num((k - i) * cell)}"'
                            f' height="{num(cell)}" class="{cls}"/>')
                i = k
        warp, lane = cuda.warp_of(cuda.Dim3(cols[0], j, ti.z), block)
        label_y = top + shown * cell + cell / 2 + 4
        if (lane == 0 or shown == 0) and cell >= 8 and label_y - labelled_y >= LABEL_PITCH:   # no label on another
            body.append(text(left - 4, label_y, f"w{warp}", "wg-small wg-muted", "end"))
            labelled_y = label_y
    if first <= srow < first + n_rows:
        body.append(f'<rect x="{num(left + (ti.x % per_row) * cell)}" y="{num(top + (srow - first) * cell)}" width="{num(cell)}"'
                    f' height="{num(cell)}" class="wg-tsel"/>')
    bottom = top + n_rows * cell + 14
    hint = "shades alternate per warp of 32; grey: no data element"
    if lines_per_y > 1:
        hint = "x wraps every 32 threads; " + hint
    if n_rows < total_rows:
        hint = (f"first {n_rows} rows; " if first == 0 else f"rows {first:,}–{first + n_rows - 1:,} of {total_rows:,}; ") + hint
    lines = wrap_px(hint, x0 + w - left)                 # phones are narrow
    body += text_lines(left, bottom, lines, "wg-small wg-muted")
    return body, bottom + 14 * (len(lines) - 1) + 6


# ----------------------------------------------------------------------------- 3D view

def _projector(yaw_deg: float, pitch_deg: float):
    cy, sy = math.cos(math.radians(yaw_deg)), math.sin(math.radians(yaw_deg))
    cp, sp = math.cos(math.radians(pitch_deg)), math.sin(math.radians(pitch_deg))

    def project(x, y, z):
        """CUDA axes (x right, y down, z away) -> (screen x, screen y, depth)."""
        X, Y, Z = x, -y, z
        X1, Z1 = X * cy - Z * sy, X * sy + Z * cy
        Y2, Z2 = Y * cp + Z1 * sp, -Y * sp + Z1 * cp
        return X1, -Y2, Z2
    return project


_FACES = (  # corner indices (bit 0: x, bit 1: y, bit 2: z) and outward normal
    ((0, 1, 3, 2), (0, 0, -1)), ((4, 5, 7, 6), (0, 0, 1)), ((0, 2, 6, 4), (-1, 0, 0)),
    ((1, 3, 7, 5), (1, 0, 0)), ((0, 1, 5, 4), (0, -1, 0)), ((2, 3, 7, 6), (0, 1, 0)),
)


def _fit(items, x0, y0, w, h):
    """Scale and shift projected points so they fill the box (x0, y0, w, h)."""
    xs = [p[0] for p in items] or [0]
    ys = [p[1] for p in items] or [0]
    span = max(max(xs) - min(xs), 1e-9), max(max(ys) - min(ys), 1e-9)
    s = min(w / span[0], h / span[1])
    ox = x0 + (w - span[0] * s) / 2 - min(xs) * s
    oy = y0 + (h - span[1] * s) / 2 - min(ys) * s
    return lambda p: (ox + p[0] * s, oy + p[1] * s), s


def _boxes_3d(project, cells, size, shrink):
    """Visible faces of unit boxes at ``cells``, far to near."""
    polys = []
    for (cx, cy, cz), cls, extra in cells:
        corners = [project(cx + (k & 1) * size[0] * shrink, cy + (k >> 1 & 1) * size[1] * shrink,
                           cz + (k >> 2 & 1) * size[2] * shrink) for k in range(8)]
        depth = sum(c[2] for c in corners) / 8
        faces = []
        for idx, normal in _FACES:
            n = project(*normal)
            o = project(0, 0, 0)
            if n[2] - o[2] < -1e-9:            # faces the viewer
                shade = " wg-top" if normal[1] == -1 else " wg-side" if normal[0] else ""
                faces.append(([corners[i] for i in idx], cls + shade))
        polys.append((depth, faces, extra))
    polys.sort(key=lambda p: -p[0])
    return polys


def _view_3d(params, grid, block, info, x0, y0, w, h, fs):
    project = _projector(params["yaw"], params["pitch"])
    bi, ti = info["block_idx"], info["thread_idx"]
    body = []
    # The grid of blocks and the selected block side by side, or one above the other on a phone.
    if w < NARROW_3D:
        (gx, gy, gw, gh), (kx, ky, kw, kh) = (x0, y0, w, h / 2), (x0, y0 + h / 2, w, h / 2)
    else:
        (gx, gy, gw, gh), (kx, ky, kw, kh) = (x0, y0, w / 2 - 8, h), (x0 + w / 2 + 8, y0, w / 2 - 8, h)
    # The grid of blocks.
    xs, ys, zs = (_window(s, n, GRID_CAP_3D) for s, n in ((bi.x, grid.x), (bi.y, grid.y), (bi.z, grid.z)))
    cells = []
    for bz in zs:
        for by in ys:
            for bx in xs:
                sel = (bx, by, bz) == (bi.x, bi.y, bi.z)
                target = {"sel_x": bx * block.x + ti.x, "sel_y": by * block.y + ti.y, "sel_z": bz * block.z + ti.z}
                cells.append(((bx - xs[0], by - ys[0], bz - zs[0]), "wg-face" + (" wg-sel" if sel else ""), data_set(target)))
    polys = _boxes_3d(project, cells, (1, 1, 1), 0.8)
    gtitle = wrap_px(f"Grid {_dim(grid)} of blocks", gw, STRONG_CHAR_PX)
    gtop = fs + 10 + 16 * (len(gtitle) - 1)
    to_screen, _ = _fit([p for box in polys for face in box[1] for p in face[0]], gx, gy + gtop, gw, gh - gtop - 20)
    body += text_lines(gx, gy + fs, gtitle, "wg-strong", 16)
    for _, faces, extra in polys:
        body.append(f"<g{extra}>" + "".join(polygon([to_screen(p) for p in pts], cls) for pts, cls in faces) + "</g>")
    # The selected block's threads as a lattice of dots.
    lx, ly, lz = (_window(t, n, LATTICE_CAP) for t, n in ((ti.x, block.x), (ti.y, block.y), (ti.z, block.z)))
    dots = []
    for k in lz:
        for j in ly:
            for i in lx:
                sx, sy, depth = project(i, j, k)
                warp = cuda.warp_of(cuda.Dim3(i, j, k), block)[0]
                g = (bi.x * block.x + i, bi.y * block.y + j, bi.z * block.z + k)
                cls = ("wg-t%d" % (warp % 2) if active(params, *g, grid, block) else "wg-idle")
                dots.append((depth, (sx, sy), cls, (i, j, k) == (ti.x, ti.y, ti.z), g))
    dots.sort(key=lambda d: -d[0])
    # the part about the controls is marked: the printed figure (PRINT_CSS) leaves it out
    note = wrap_px("threads near the selected one only" if len(lx) < block.x or len(ly) < block.y
                   or len(lz) < block.z else "", kw)
    controls = wrap_px("drag or use the arrow keys to turn", kw)
    hint = note + controls
    title, n_title = _title(lambda b: f"Block {_dim(b)}: {fmt.num(block.x)}×{fmt.num(block.y)}×{fmt.num(block.z)} threads",
                            bi, cuda.Dim3(grid.x - 1, grid.y - 1, grid.z - 1), kw)
    body += text_lines(kx, ky + fs, title, "wg-strong", 16)
    top = ky + fs + 18 + 16 * (n_title - 1)
    to_screen, s = _fit([d[1] for d in dots], kx + 10, top, kw - 20, ky + kh - 12 - 14 * len(hint) - top)
    r = max(2.5, min(9.0, s * 0.3)) if len(dots) > 1 else 9.0
    for _, p, cls, sel, g in dots:
        px, py = to_screen(p)
        body.append(f'<circle cx="{num(px)}" cy="{num(py)}" r="{num(r * (1.5 if sel else 1))}" class="{cls}'
                    f'{" wg-sel" if sel else ""}"{data_set({"sel_x": g[0], "sel_y": g[1], "sel_z": g[2]})}/>')
    body += text_lines(kx, ky + kh - 6 - 14 * (len(hint) - 1), note, "wg-small wg-muted")   # bottom-aligned
    body += text_lines(kx, ky + kh - 6 - 14 * (len(controls) - 1), controls, "wg-small wg-muted wg-controls-hint")
    # Axis hint (x, y, z directions) in the grid panel's corner.
    o = project(0, 0, 0)
    for name, v in (("x", (1, 0, 0)), ("y", (0, 1, 0)), ("z", (0, 0, 1))):
        p = project(*v)
        ax, ay = gx + 24 + (p[0] - o[0]) * 16, gy + gh - 26 + (p[1] - o[1]) * 16
        body.append(f'<line x1="{num(gx + 24)}" y1="{num(gy + gh - 26)}" x2="{num(ax)}" y2="{num(ay)}" class="wg-axis"/>')
        body.append(text(ax + (p[0] - o[0]) * 6, ay + (p[1] - o[1]) * 6 + 4, name, "wg-small", "middle"))
    return body


# ----------------------------------------------------------------------------- render

def _dim(d) -> str:
    return f"({fmt.num(d.x)}, {fmt.num(d.y)}, {fmt.num(d.z)})"


def render(params: dict) -> dict:
    grid, block = launch(params)
    W = params.get("_width", 640)
    fs = 12
    problem = check_launch(grid, block)
    if problem:
        lines = wrap_px(problem, W - 32, 7.5)
        body = [text(16, 30, "This launch is illegal:", "wg-strong")]
        body += text_lines(16, 52, lines, "wg-small", 16)
        y = 52 + 16 * len(lines) + 10
        dims = wrap_px(f"gridDim = {_dim(grid)}, blockDim = {_dim(block)}", W - 32)   # 2³¹ blocks is long
        body += text_lines(16, y, dims, "wg-small wg-muted")
        H = y + 20 + 14 * (len(dims) - 1)
        return {"svg": svg_root(W, H, "wg-blockgrid", "Illegal CUDA launch", problem, body),
                "readouts": [["gridDim", _dim(grid)], ["blockDim", _dim(block)],
                             ["Threads per block", f"{block.x * block.y * block.z:,}"],
                             ["Launch", "rejected: " + problem]],
                "message": f"Illegal launch: {problem}"}

    info = thread_info(params, grid, block)
    body = []
    narrow = W < 520
    if params["view"] == "3d":
        H = round(W * (1.2 if narrow else 0.5))         # a phone: the two panels one above the other
        body += _view_3d(params, grid, block, info, 8, 6, W - 16, H - 12, fs)
        extra = f" data-keys='{KEYS}' data-drag='{DRAG}' data-keys-help='3D view: arrow keys turn and tilt it'"
    else:
        extra = ""
        if narrow:
            b1, bottom = _grid_panel_2d(params, grid, block, info, 8, 4, W - 16, W * 0.6, fs)
            b2, bottom = _block_panel_2d(params, grid, block, info, 8, bottom + 10, W - 16, fs)
        else:
            split = W * 0.46
            b1, bot1 = _grid_panel_2d(params, grid, block, info, 8, 4, split - 16, 300, fs)
            b2, bot2 = _block_panel_2d(params, grid, block, info, split + 8, 4, W - split - 16, fs)
            bottom = max(bot1, bot2)
        body += b1 + b2
        H = round(bottom + 8)

    bi, ti, g = info["block_idx"], info["thread_idx"], info["global"]
    g_dim = _dim(cuda.Dim3(*g))
    cov = coverage(params, grid, block)
    threads, elements, covered, working = cov["threads"], cov["elements"], cov["covered"], cov["working"]
    idle = threads - working                        # integers: a share of 10^20 threads is not a float's
    readouts = [
        ["blockIdx", _dim(bi)],
        ["threadIdx", _dim(ti)],
        ["Global index (x, y, z)", g_dim],
        ["Linear index", fmt.num(info["linear"])],
        ["Thread in block", fmt.num(info["tid"])],
        ["Warp, lane", f"warp {fmt.num(info['warp'])}, lane {info['lane']}"],
        ["Computes", info["output"]],
        ["Threads launched", f"{fmt.num(threads)} for {fmt.count(elements, 'element')}"
         + (f" ({idle_text(idle, threads)})" if idle > 0 else "")],
    ]
    messages = []
    if (params["sel_x"], params["sel_y"], params["sel_z"]) != g:
        messages.append(f"The selected thread was outside the launch; showing thread {g_dim} instead.")
    if covered < elements:
        axes = "; ".join(f"along {a}, gridDim.{a} × blockDim.{a} = {fmt.count(cov['reach'][a], 'thread')} for "
                         + (f"n = {fmt.num(cov['size'][a])}" if params["kernel"] == "vecadd"
                            else f"a {EXTENT[a]} of {fmt.num(cov['size'][a])}")
                         for a in cov["short"])
        missed = elements - covered
        messages.append(f"Too few threads {axes}: {fmt.num(missed)} of the {fmt.count(elements, 'element')} "
                        f"{'is' if missed == 1 else 'are'} never computed.")
    if params["kernel"] == "vecadd" and threads > cov["reach"]["x"]:
        rows = threads // cov["reach"]["x"]
        messages.append(f"The vector add indexes with x only (i = blockIdx.x · blockDim.x + threadIdx.x): "
                        f"the {fmt.num(rows)} rows of threads along y and z all compute the same "
                        + (f"elements c[0] to c[{fmt.num(covered - 1)}]" if covered > 1 else "element c[0]")
                        + "; a 1D launch (gridDim.y = gridDim.z = blockDim.y = "
                        "blockDim.z = 1) computes each once.")
    message = " ".join(messages) or None
    title = f"CUDA launch: grid {_dim(grid)} of blocks {_dim(block)}"
    desc = (f"Thread {_dim(ti)} of block {_dim(bi)} has global index {g_dim}, "
            f"linear index {fmt.num(info['linear'])}, warp {fmt.num(info['warp'])}, and computes {info['output']}.")
    return {"svg": svg_root(W, H, "wg-blockgrid", title, desc, body, extra), "readouts": readouts, "message": message}


def summary(params: dict, r: dict) -> str:
    """E.g. "blockIdx (1, 0, 0), threadIdx (3, 0, 0): global index (35, 0, 0)"."""
    if "Launch" in r:
        return f"gridDim {r['gridDim']}, blockDim {r['blockDim']}: {r['Launch']}"
    return f"blockIdx {r['blockIdx']}, threadIdx {r['threadIdx']}: global index {r['Global index (x, y, z)']}"
