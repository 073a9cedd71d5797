"""Roofline: where common kernels sit under a device's compute and memory roofs.

Every number comes from ``calc``: peaks and bandwidth from ``calc.specs``,
FLOPs and bytes from ``calc.intensity`` / ``calc.attention``, the roof itself
from ``calc.roofline``.  This module only lays them out.
"""
from __future__ import annotations

import math

from calc import attention, fmt, intensity, roofline, specs
from calc.dtypes import op_unit

from . import Param, device
from ._svg import (SMALL_CHAR_PX, STRONG_CHAR_PX, LabelPlacer, data_set, decade_ticks, esc, line, num, polyline,
                   svg_root, text, text_width, label_px)

TITLE = "Roofline"
DTYPES = ("fp32", "tf32", "bf16", "fp16", "fp8", "int8")
DTYPE_LABELS = {"fp32": "FP32", "tf32": "TF32", "bf16": "BF16", "fp16": "FP16", "fp8": "FP8", "int8": "INT8"}
KERNELS = (
    ("gemm", "GEMM (M = N = K)"),
    ("elementwise", "Elementwise add"),
    ("softmax", "Softmax (rows)"),
    ("layernorm", "Layer norm"),
    ("gelu", "GELU"),
    ("attention", "Attention: naive vs FlashAttention"),
)
# The SRAM size M that sizes FlashAttention's blocks: the shared memory an SM of the device drawn can
# be configured to hold (calc.specs, with sources). A device with no SMs in calc.specs (a TPU) takes
# the A100's, as the attention chapter does: the machine of Dao et al.'s analysis (the paper uses the
# 192 KiB of L1 and shared memory together; calc.specs has both).
PAPER_SRAM_BYTES = specs.device("a100-sxm-80gb").value("smem_per_sm_bytes")


def short(dev) -> str:
    """A device's label without its vendor: "H100 SXM5 80GB", "TPU v4 (one chip)", "MI300X 192GB"."""
    return dev.label.replace("NVIDIA ", "").replace("Google ", "").replace("AMD Instinct ", "")


def sram_bytes(dev) -> tuple[int, str]:
    """(M in bytes, what it is) for FlashAttention's point on ``dev``'s roofline."""
    name = short(dev)
    if dev.has("smem_per_sm_bytes"):
        m = dev.value("smem_per_sm_bytes")
        return m, f"{fmt.bytes_iec(m)}: the most shared memory one SM of the {name} can hold"
    if dev.measured:
        return PAPER_SRAM_BYTES, (f"{fmt.bytes_iec(PAPER_SRAM_BYTES)}: an A100 SM's shared memory, the paper's "
                                  f"machine; the probe does not measure on-chip memory")
    return PAPER_SRAM_BYTES, (f"{fmt.bytes_iec(PAPER_SRAM_BYTES)}: an A100 SM's shared memory, the paper's "
                              f"machine; no per-SM shared memory is published for the {name}")

PARAMS = [
    Param("device", "choice", "Device", "h100-sxm",
          options=tuple((k, d.label) for k, d in specs.DEVICES.items()), measured=True),
    Param("compare", "choice", "Compare with", "none",
          options=(("none", "(none)"),) + tuple((k, d.label) for k, d in specs.DEVICES.items()), measured=True),
    Param("dtype", "choice", "Number format", "bf16", options=tuple((d, DTYPE_LABELS[d]) for d in DTYPES)),
    Param("sparse", "bool", "2:4 sparse peak", False),
    Param("kernel", "choice", "Selected kernel", "gemm", options=KERNELS),
    Param("size", "int", "GEMM size M = N = K", 4096, min=16, max=65536, step=0.5, log=True),
    Param("seq", "int", "Attention sequence length N", 4096, min=128, max=131072, step=1, log=True),
    Param("head", "choice", "Attention head size d", "128", options=(("64", "64"), ("128", "128"), ("256", "256"))),
    Param("fused", "bool", "Fuse layer norm → GELU → add", False),
]

EXAMPLES = [{"device": "tpu-v4", "dtype": "fp32"}, {"device": "t4", "sparse": True},
            {"compare": "a100-sxm-80gb", "kernel": "attention"}, {"fused": True, "kernel": "layernorm"}]


# ----------------------------------------------------------------------------- numbers

ROOF_INSET = 1.5   # px: a little over half the roof's stroke (2.5, page and print CSS)


def resolve_peak(dev, dtype: str, sparse: bool):
    """(dtype, sparse, peak FLOP/s, note): the asked-for peak, or the nearest the device publishes."""
    keys = dev.peak_keys()
    if (dtype, sparse) in keys:
        return dtype, sparse, dev.peak_flops(dtype, sparse), ""
    if (dtype, False) in keys:
        return dtype, False, dev.peak_flops(dtype, False), f"{dev.label} has no 2:4-sparse {DTYPE_LABELS.get(dtype, dtype)} peak; showing dense."
    fallback = next((d for d in ("bf16", "fp16", "fp32") if (d, False) in keys), keys[0][0])
    return fallback, False, dev.peak_flops(fallback, False), (
        f"{dev.label} has no {'measured' if dev.measured else 'published'} {DTYPE_LABELS.get(dtype, dtype)} peak; showing "
        f"{'dense ' if sparse else ''}{DTYPE_LABELS.get(fallback, fallback)}.")


def kernels(params: dict, dtype: str, sram: float = PAPER_SRAM_BYTES) -> list[dict]:
    """The kernels drawn as points: key, label, and calc's cost object (.flops, .bytes_, .intensity).

    ``sram`` is FlashAttention's on-chip memory M in bytes (see ``sram_bytes``).
    """
    n = params["size"]
    elems = n * n                           # the elementwise ops act on the GEMM's M×N output
    seq, d = params["seq"], int(params["head"])
    pts = [
        {"key": "gemm", "label": f"GEMM {fmt.num(n)}³", "cost": intensity.gemm(n, n, n, dtype)},
        {"key": "elementwise", "label": "add", "cost": intensity.elementwise(elems, dtype)},
        {"key": "softmax", "label": "softmax", "cost": intensity.softmax(n, n, dtype)},
        {"key": "layernorm", "label": "layer norm", "cost": intensity.layernorm(n, n, dtype)},
        {"key": "gelu", "label": "GELU", "cost": intensity.gelu(elems, dtype)},
        {"key": "attention", "label": f"naive attn N={fmt.num(seq)}", "cost": attention.naive(seq, d, dtype)},
        {"key": "flash", "label": "FlashAttention", "cost": attention.flash(seq, d, dtype, sram)},
    ]
    if params["fused"]:
        unfused, fused = intensity.fused_chain(
            elems, dtype, (intensity.LAYERNORM_FLOPS_PER_ELEM, intensity.GELU_FLOPS_PER_ELEM, 1), (0, 0, 1))
        for p in pts:
            if p["key"] in ("layernorm", "gelu", "elementwise"):
                p["ghost"] = True
        pts.append({"key": "chain", "label": "LN, GELU, add: 3 kernels", "cost": unfused, "ghost": True})
        pts.append({"key": "fused", "label": "fused LN+GELU+add", "cost": fused})
    return pts


def selected_key(params: dict) -> str:
    key = params["kernel"]
    if params["fused"] and key in ("layernorm", "gelu", "elementwise"):
        return "fused"
    return key


def flash_note(params: dict, dtype: str, sram: float, naive, flash) -> str:
    """Why the arrow from naive attention to FlashAttention points down, when it does: Algorithm 1
    reads Q and O once per block of K and V, T_c ≈ 4Nd/M times, so it moves fewer bytes than naive
    attention (about 4N² values) only when M exceeds about 3d² values; "" when it does.
    ``naive`` and ``flash`` are the two kernels' costs at these params (``kernels``)."""
    n, d = params["seq"], int(params["head"])
    if flash.bytes_ <= naive.bytes_:
        return ""
    b = attention.flash_blocks(n, d, sram, dtype)
    head = (f"FlashAttention moves more bytes than naive attention here ({fmt.bytes_si(flash.bytes_)} against "
            f"{fmt.bytes_si(naive.bytes_)}): ")
    passes = lambda few: (f"Q and O are read, and O written, once for each of T_c = {fmt.num(b.Tc)} blocks of "
                          f"{few}B_c = {fmt.num(b.Bc)} rows of K and V")
    if b.m_elements < 3 * d * d:
        return (head + f"at head size d = {d} the on-chip memory M holds {fmt.num(b.m_elements)} "
                f"{DTYPE_LABELS.get(dtype, dtype)} values, so {passes('only ')}. For long sequences Algorithm 1 saves "
                f"traffic only when M exceeds about 3d² = {fmt.num(3 * d * d)} values.")
    # M is large enough for long sequences; at this N the N·d traffic of those passes still
    # outweighs the N² values of S and P that naive attention moves.
    longest = next(p for p in PARAMS if p.name == "seq").max
    saves = next((m for m in (2 ** k for k in range(n.bit_length(), longest.bit_length()))
                  if attention.flash(m, d, dtype, sram).bytes_ < attention.naive(m, d, dtype).bytes_), None)
    where = (f"From N = {fmt.num(saves)} it moves fewer" if saves else
             f"It moves fewer only beyond this widget's N = {fmt.num(longest)}")
    return (head + f"at N = {fmt.num(n)} the matrices S and P that it avoids are small, while {passes('')}. "
            f"{where} (M = {fmt.num(b.m_elements)} values exceeds 3d² = {fmt.num(3 * d * d)}).")


# ----------------------------------------------------------------------------- drawing

def _si_axis(value: float) -> str:
    """Decade tick label: 0.01, 0.1, 1, 10, 100, 1 k, 10 k, ... 1 P."""
    return fmt.si(value, "", sig=1).strip() if value >= 1000 else fmt.num(value, sig=1)


KEY_ROW = 16        # px: the height of the key's own line when it does not fit beside the title
KEY_SWATCH = 22     # px: the length of the key's sample of each roof's line
KEY_GAP = 14        # px: between the two entries


def key_names(dev) -> list[str]:
    """The device's name for the key, shortest last: "H100 SXM5 80GB", "TPU v4",
    "Illustrative laptop CPU" then "Laptop CPU"."""
    name = short(dev).split(" (")[0]
    tight = name.replace("Illustrative ", "").replace("throughput ", "").replace("Jetson ", "")
    return [name] + ([tight[0].upper() + tight[1:]] if tight != name else [])


def _key(dev, dev2, room: float) -> list[tuple[str, str]]:
    """[(line class, name)] for the device (solid) and the comparison (dashed), the names as long
    as ``room`` px allows."""
    names, names2 = key_names(dev), key_names(dev2)
    for i in range(max(len(names), len(names2))):
        key = [("wg-c1", names[min(i, len(names) - 1)]), ("wg-c2", names2[min(i, len(names2) - 1)])]
        if _key_width(key) <= room:
            break
    return key


def _key_width(key) -> float:
    return sum(KEY_SWATCH + 5 + label_px(name) for _, name in key) + KEY_GAP * (len(key) - 1)


def _draw_key(key, x: float, baseline: float) -> list[str]:
    out = ['<g class="wg-key">']
    for cls, name in key:
        out.append(line(x, baseline - 4, x + KEY_SWATCH, baseline - 4, cls))
        out.append(text(x + KEY_SWATCH + 5, baseline, name, "wg-small"))
        x += KEY_SWATCH + 5 + label_px(name) + KEY_GAP
    return out + ["</g>"]


def render(params: dict) -> dict:
    dev = device(params, "device")
    dtype, sparse, peak, note = resolve_peak(dev, params["dtype"], params["sparse"])
    bw = dev.mem_bw
    other = None
    notes = [note]
    if params["compare"] != "none" and params["compare"] != params["device"]:
        dev2 = device(params, "compare")
        dtype2, sparse2, peak2, note2 = resolve_peak(dev2, dtype, sparse)
        other = (dev2, dtype2, sparse2, peak2, dev2.mem_bw)
        notes.append(note2)
    op = op_unit(dtype)                     # integer formats count OP, not FLOP

    sram, sram_note = sram_bytes(dev)
    points = kernels(params, dtype, sram)
    sel = selected_key(params)
    chosen = next(p for p in points if p["key"] == sel)
    if sel == "attention":
        flash = next(p for p in points if p["key"] == "flash")
    costs = {p["key"]: p["cost"] for p in points}
    notes.append(flash_note(params, dtype, sram, costs["attention"], costs["flash"]))

    # Axes: decades wide enough for every point, both ridges and both peaks.
    xs = [p["cost"].intensity for p in points] + [roofline.ridge_point(peak, bw)]
    ys = [peak]
    if other:
        xs.append(roofline.ridge_point(other[3], other[4]))
        ys.append(other[3])
    x_lo = 10.0 ** math.floor(math.log10(min(xs) / 1.5))
    x_hi = max(xs) * 4
    y_hi = max(ys) * 4
    floor = [roofline.attainable(x_lo, peak, bw)] + ([roofline.attainable(x_lo, other[3], other[4])] if other else [])
    y_lo = min(10.0 ** math.floor(math.log10(min(floor))), y_hi / 1e3)

    W = params.get("_width", 640)
    narrow = W < 480
    H = round(W * (0.78 if narrow else 0.62))
    ml, mr, mt, mb = (46 if narrow else 58), 14, 26, 44
    y_title = f"Attainable {op}/s"
    # Two roofs: a key names the device of each (solid, dashed), on the title's line if it fits
    # there, else on a line of its own above the plot, which gives up that much of the plot's height
    # (the figure's height depends on its width only).
    key = _key(dev, other[0], W - mr - 6) if other else None
    key_w = _key_width(key) if key else 0
    key_inline = bool(key) and ml + text_width(y_title) + 16 + key_w <= W - mr
    if key and not key_inline:
        mt += KEY_ROW
    pw, ph = W - ml - mr, H - mt - mb
    lx0, lx1, ly0, ly1 = math.log10(x_lo), math.log10(x_hi), math.log10(y_lo), math.log10(y_hi)
    X = lambda v: ml + (math.log10(v) - lx0) / (lx1 - lx0) * pw
    Y = lambda v: mt + (ly1 - math.log10(v)) / (ly1 - ly0) * ph
    fs = 11 if narrow else 12

    body = []
    # Grid lines at every decade; tick labels at every decade, or every second or third when the
    # decades are closer than a label (a toy machine beside an H100 spans 15 of them).
    def every(per_decade_px, label_px):
        return max(1, math.ceil(label_px / per_decade_px))

    x_step = every(pw / (lx1 - lx0), 5 * SMALL_CHAR_PX + 6)
    y_step = every(ph / (ly1 - ly0), 14)
    for t in decade_ticks(x_lo, x_hi):
        body.append(line(X(t), mt, X(t), mt + ph, "wg-grid"))
        if round(math.log10(t)) % x_step == 0:
            body.append(text(X(t), mt + ph + 16, _si_axis(t), "wg-small", "middle"))
    for t in decade_ticks(y_lo, y_hi):
        body.append(line(ml, Y(t), ml + pw, Y(t), "wg-grid"))
        if round(math.log10(t)) % y_step == 0:
            body.append(text(ml - 6, Y(t) + 4, _si_axis(t), "wg-small", "end"))
    body.append(f'<rect x="{num(ml)}" y="{num(mt)}" width="{num(pw)}" height="{num(ph)}" class="wg-axis"/>')
    xlabel = f"Intensity ({op} per byte)" if narrow else f"Arithmetic intensity ({op} per byte moved)"
    body.append(text(ml + pw / 2, H - 6, xlabel, "", "middle"))
    body.append(text(ml, mt - 9, y_title, "", "start"))
    if key:
        body.extend(_draw_key(key, max(6, W - mr - key_w), mt - 9 if key_inline else mt - 9 - KEY_ROW))

    placer = LabelPlacer((ml + 2, mt + 2, ml + pw - 2, mt + ph - 2))

    def roof(peak_, bw_, cls):
        """Draw one roof; reserve its path so no label is written across it."""
        ridge = roofline.ridge_point(peak_, bw_)
        corner = [(x_lo, roofline.attainable(x_lo, peak_, bw_))]
        if x_lo < ridge < x_hi:
            corner.append((ridge, peak_))
        corner.append((x_hi, roofline.attainable(x_hi, peak_, bw_)))
        pts = [(X(a), Y(b)) for a, b in corner]
        # end half a stroke inside the frame at both sides, so the thick roof stops at the frame
        # line instead of running over it
        for end, nxt in ((0, 1), (-1, -2)):
            (x0, y0), (x1, y1) = pts[end], pts[nxt]
            t = min(1.0, ROOF_INSET / max(abs(x1 - x0), 1e-9))
            pts[end] = (x0 + (x1 - x0) * t, y0 + (y1 - y0) * t)
        body.append(polyline(pts, f"{cls} wg-roof"))
        if x_lo < ridge < x_hi:
            body.append(line(X(ridge), Y(peak_), X(ridge), mt + ph, "wg-ridge"))
        for x, y in roofline.curve(peak_, bw_, x_lo, x_hi, n=80):
            placer.reserve((X(x) - 3, Y(y) - 3, X(x) + 3, Y(y) + 3), soft=True)
        return ridge

    kind_of = lambda dt, sp: f"{DTYPE_LABELS.get(dt, dt)}{' 2:4 sparse' if sp else ''}"
    kind = kind_of(dtype, sparse)
    ridge = roof(peak, bw, "wg-c1")
    # Each roof's label, and a shorter one for a narrow figure when the whole one would have to
    # cross a line (a lone roof's device is named by the select under the figure; two roofs are
    # told apart by their devices, both of the number format chosen).
    peak_label = fmt.si(peak, op + '/s')
    roof_labels = [(peak, f"{short(dev)} {kind}: {peak_label}", f"{short(dev) if other else kind}: {peak_label}")]
    if other:
        roof(other[3], other[4], "wg-c2")
        kind2, peak2 = kind_of(other[1], other[2]), fmt.si(other[3], op_unit(other[1]) + '/s')
        roof_labels.append((other[3], f"{short(other[0])} {kind2}: {peak2}", f"{short(other[0])}: {peak2}"))

    # Points sit on the roof: the best each kernel can do on this device.
    order = sorted(points, key=lambda p: (p["key"] == sel, p.get("ghost", False)))
    drawn = []
    for p in order:
        i = p["cost"].intensity
        att = roofline.attainable(i, peak, bw)
        cx, cy = X(i), Y(att)
        p["xy"] = (cx, cy)
        placer.reserve((cx - 5, cy - 5, cx + 5, cy + 5))
        key = p["key"] if p["key"] in dict(KERNELS) else ("attention" if p["key"] == "flash" else "layernorm")
        cls = "wg-pt" + (" wg-sel" if p["key"] == sel or (sel == "attention" and p["key"] == "flash") else "") \
            + (" wg-ghost" if p.get("ghost") else "")
        r = 6.5 if "wg-sel" in cls else 5
        drawn.append(f'<circle cx="{num(cx)}" cy="{num(cy)}" r="{r}" class="{cls}"{data_set({"kernel": key})}>'
                     f"<title>{esc(p['label'])}: {esc(fmt.num(i))} {op}/B</title></circle>")
    by_key = {p["key"]: p for p in points}
    arrows = [("attention", "flash")] + ([("chain", "fused")] if params["fused"] else [])
    for a, b in arrows:
        (ax, ay), (bx, by) = by_key[a]["xy"], by_key[b]["xy"]
        body.append(f'<line x1="{num(ax)}" y1="{num(ay)}" x2="{num(bx)}" y2="{num(by)}" class="wg-arrow"'
                    f' marker-end="url(#wg-arrowhead)"/>')
    body.extend(drawn)
    # Labels where they fit, none over another: the selected kernel's first, then the roofs' and
    # the ridge's, then the other kernels'.
    def label_point(p):
        spot = placer.place(p["xy"][0], p["xy"][1], p["label"], fs, must=p["key"] == sel,
                            char_px=STRONG_CHAR_PX if p["key"] == sel else SMALL_CHAR_PX)
        if spot:
            cls = "wg-small" + (" wg-strong" if p["key"] == sel else "")
            body.append(text(spot[0], spot[1], p["label"], cls, spot[2]))

    labelled = [p for p in points if not p.get("ghost")]
    for p in labelled:
        if p["key"] == sel:
            label_point(p)
    # The device's own roof says its peak where a spot is left (the key names the devices of two).
    for i, (level, *labels) in enumerate(roof_labels):
        tries = [(label, False) for label in labels[:1 + narrow]] + [(labels[narrow], i == 0)]
        for label, must in tries:
            spot = placer.place(ml + pw - 4, Y(level), label, fs, must=must)
            if spot:
                body.append(text(spot[0], spot[1], label, "wg-small", spot[2]))
                break
    ridge_label = f"ridge {fmt.num(ridge)} {op}/B"
    if x_lo < ridge < x_hi:
        spot = placer.place(X(ridge), mt + ph - 6, ridge_label, fs - 1, gap=4)
        if spot:
            body.append(text(spot[0], spot[1], ridge_label, "wg-small wg-muted", spot[2]))
    for p in labelled:
        if p["key"] != sel:
            label_point(p)

    defs = ('<defs><marker id="wg-arrowhead" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7"'
            ' markerHeight="7" orient="auto-start-reverse"><path d="M0,0L10,5L0,10z" class="wg-arrowhead"/></marker></defs>')

    cost = chosen["cost"]
    att = roofline.attainable(cost.intensity, peak, bw)
    reg = roofline.regime(cost.intensity, peak, bw)
    # MFU is measured against the dense peak (PaLM's definition), whichever roof is drawn.
    dense = dev.peak_flops(dtype, False)
    readouts = [
        ["Kernel", chosen["label"]],
        [f"{op}s", fmt.si(cost.flops, op)],
        ["Bytes moved", fmt.bytes_si(cost.bytes_)],
        ["Arithmetic intensity", f"{fmt.num(cost.intensity)} {op}/B"],
        ["Peak" + (" (2:4 sparse)" if sparse else ""), fmt.si(peak, f"{op}/s")],
        ["Memory bandwidth", fmt.si(bw, "B/s")],
        ["Ridge point", f"{fmt.num(ridge)} {op}/B"],
        ["Attainable", fmt.si(att, f"{op}/s")],
        ["Regime", reg],
        ["MFU upper bound (dense peak)", fmt.pct(roofline.mfu(roofline.attainable(cost.intensity, dense, bw), dense))],
        ["Time lower bound", fmt.duration(roofline.time_lower_bound(cost.flops, cost.bytes_, peak, bw))],
    ]
    if sel == "attention":
        fc = flash["cost"]
        readouts.append(["FlashAttention's on-chip memory M", sram_note])
        readouts.append(["FlashAttention intensity", f"{fmt.num(fc.intensity)} {op}/B"])
        readouts.append(["FlashAttention attainable", fmt.si(roofline.attainable(fc.intensity, peak, bw), f"{op}/s")])
    if other:
        dev2, dtype2, _, peak2, bw2 = other
        # The kernel in the format the other device runs (its bytes per element may differ).
        cost2 = cost if dtype2 == dtype else next(p for p in kernels(params, dtype2, sram_bytes(dev2)[0])
                                                       if p["key"] == sel)["cost"]
        att2 = roofline.attainable(cost2.intensity, peak2, bw2)
        in_fmt = "" if dtype2 == dtype else f" ({DTYPE_LABELS.get(dtype2, dtype2)})"
        readouts.append([f"Attainable on {short(dev2)}{in_fmt}", fmt.si(att2, op_unit(dtype2) + "/s")])
        readouts.append([f"Regime on {short(dev2)}{in_fmt}", roofline.regime(cost2.intensity, peak2, bw2)])

    title = (f"Roofline of {dev.label[0].lower()}{dev.label[1:]}, {kind}" if dev.measured   # "of your CPU, …"
             else f"Roofline of the {dev.label} ({kind})")
    desc = (f"Log-log roofline. The {chosen['label']} kernel has arithmetic intensity "
            f"{fmt.num(cost.intensity)} {op} per byte and can reach at most {fmt.si(att, f'{op}/s')}: {reg}.")
    return {"svg": svg_root(W, H, "wg-roofline", title, desc, [defs] + body), "readouts": readouts,
            "message": " ".join(n for n in notes if n) or None}


def summary(params: dict, r: dict) -> str:
    """E.g. "GEMM 4096: 1,365 FLOP/B, compute-bound, 989 TFLOP/s" (and the other device's)."""
    text = f"{r['Kernel']}: {r['Arithmetic intensity']}, {r['Regime']}, {r['Attainable']}"
    other = next((k for k in r if k.startswith("Attainable on ")), None)
    if other:
        text += f"; on {other[len('Attainable on '):]}: {r[other]}, {r[other.replace('Attainable', 'Regime')]}"
    return text
