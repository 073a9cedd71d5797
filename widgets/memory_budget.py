"""Memory budget of serving a language model, and its decode step on the roofline.

Top: a stacked bar of weights, KV cache and activations against the device's memory capacity
(binary units: calc.specs reads a "80 GB" HBM as 80 GiB); when the sum exceeds the capacity the
bar runs past the capacity line and the figure says by how much.  The labelled capacity is an
upper bound on what a program can allocate; where calc.specs has the total the driver reports
(nvidia-smi), the readouts give it and the largest batch that fits in it.  Bottom: the decode step's
operations under the device's dense roof for the activations' format.  Every number comes from
``calc.llm``, ``calc.specs`` and ``calc.roofline``; this module only lays them out.

The device list also takes the reader's own device, measured in this browser by the roofline
chapter's probe (``widgets.device``): its measured bandwidth and peak set the roofline and the
step's time bound. A browser does not reveal how much memory a device has (WebGPU gives no size,
``navigator.deviceMemory`` is rounded and capped at 8), so its capacity is the one the reader
types ("Your device's memory"), and the figure and readouts say it is theirs, not measured.
"""
from __future__ import annotations

import math

from calc import fmt, llm, roofline, specs

from . import Param, device
from ._svg import (SMALL_CHAR_PX, STRONG_CHAR_PX, LabelPlacer, decade_ticks, esc, line, num, polyline,
                   svg_root, text, wrap_px)

TITLE = "Memory budget"
DEVICES = ("l4", "a100-sxm-40gb", "a100-sxm-80gb", "h100-sxm", "h200-sxm", "b200", "mi300x")
FORMATS = (("bf16", "BF16 (2 bytes)"), ("fp8", "FP8 (1 byte)"), ("int8", "INT8 (1 byte)"),
           ("int4", "INT4 (half a byte)"))
ATTENTION = (("published", "As published (GQA)"), ("mha", "MHA: a KV head per query head"),
             ("mqa", "MQA: one KV head"))
ACT_DTYPE = "bf16"          # activations and arithmetic (weight-only quantisation)
SERVING_MODELS = ("llama3-8b", "llama3-70b")   # models that one of DEVICES can serve (not the 405B)

PARAMS = [
    Param("model", "choice", "Model", "llama3-8b", options=tuple((k, llm.model(k).label) for k in SERVING_MODELS)),
    Param("attention", "choice", "KV heads", "published", options=ATTENTION),
    Param("weights", "choice", "Weights stored in", "bf16", options=FORMATS),
    Param("kv", "choice", "KV cache stored in", "bf16", options=FORMATS),
    Param("context", "int", "Context length (tokens per sequence)", 8192, min=128, max=131072, step=1, log=True,
          unit="tokens"),
    Param("batch", "int", "Batch (sequences decoded together)", 16, min=1, max=1024, step=1, log=True),
    Param("device", "choice", "Device", "h100-sxm",
          options=tuple((k, specs.device(k).label) for k in DEVICES), measured=True),
    Param("your_memory", "int", "Your device's memory, as you know it (a browser cannot measure it)", 16,
          min=1, max=4096, step=1, control="number", unit="GiB",
          show_if=("device", ("yours-gpu", "yours-cpu"))),
]

EXAMPLES = [{"model": "llama3-70b"}, {"model": "llama3-70b", "weights": "fp8", "batch": 4},
            {"model": "llama3-70b", "weights": "int4", "kv": "fp8", "device": "h200-sxm", "batch": 64},
            {"attention": "mha", "batch": 64}, {"attention": "mqa", "batch": 1024, "context": 131072},
            {"device": "l4", "batch": 1, "context": 128}]


def configured_model(params: dict) -> llm.Model:
    m = llm.model(params["model"])
    kv = {"published": m.kv_heads, "mha": m.heads, "mqa": 1}[params["attention"]]
    return m if kv == m.kv_heads else m.with_kv_heads(kv)


def capacity_bytes(params: dict, dev) -> float:
    """The device's memory: the datasheet's, or for a measured device the GiB the reader typed."""
    return params["your_memory"] * 2.0 ** 30 if dev.measured else dev.mem_capacity_bytes


def roof_dtype(dev) -> str:
    """The format of the roof: the activations' (BF16), or for a measured device, which has no BF16
    peak, the nearest it has (FP16 through WebGPU's shader-f16, else FP32)."""
    return next(d for d in (ACT_DTYPE, "fp16", "fp32") if (d, False) in dev.peaks or not dev.measured)


def numbers(params: dict) -> dict:
    """Everything the figure and the readouts show, computed once."""
    m = configured_model(params)
    dev = device(params, "device")
    ctx, batch = params["context"], params["batch"]
    capacity = capacity_bytes(params, dev)
    budget = llm.memory_budget(m, capacity, ctx, batch, params["weights"], params["kv"], ACT_DTYPE)
    ops = llm.decode_step(m, batch, ctx, params["weights"], params["kv"], ACT_DTYPE)
    step = llm.total(ops)
    dtype = roof_dtype(dev)
    peak, bw = dev.peak_flops(dtype), dev.mem_bw
    t = llm.decode_time_lower_bound(ops, peak, bw)
    _, kv_read = llm.decode_step_bytes_split(m, batch, ctx, params["weights"], params["kv"])
    # of all the bytes the step moves: weights, KV cache, and the activations read and written
    return {"m": m, "dev": dev, "budget": budget, "ops": ops, "step": step, "peak": peak, "bw": bw,
            "dtype": dtype, "time": t, "kv_share": kv_read / step.bytes_,
            "max_batch": llm.max_batch(m, capacity, ctx, params["weights"], params["kv"], ACT_DTYPE),
            "reported": None if dev.measured else dev.mem_reported_bytes,
            "max_batch_reported": (None if dev.mem_reported_bytes is None else
                                   llm.max_batch(m, dev.mem_reported_bytes, ctx, params["weights"], params["kv"],
                                                 ACT_DTYPE))}


def _short(dev) -> str:
    if dev.measured:
        return "your " + dev.kind.upper()
    return dev.label.replace("NVIDIA ", "")


def print_frames(params: dict) -> list[tuple[str, dict]]:
    """Print shows the chosen state beside its opposite: past the edge of memory when it fits (the
    next power-of-two batch beyond the largest that fits), back inside it when it does not."""
    n = numbers(params)
    best = n["max_batch"]
    if n["budget"].fits:
        over = 2 ** math.ceil(math.log2(best + 1))
        if over <= 1024:
            return [("As set", {}), (f"Batch {over}: does not fit", {"batch": over})]
        return [("As set", {}), ("Longest context: does not fit", {"context": 131072, "batch": 1024})]
    if best > 0:
        return [("As set: does not fit", {}), (f"Batch {best}: the largest that fits", {"batch": best})]
    return [("As set: does not fit", {}), ("INT4 weights, one sequence", {"weights": "int4", "batch": 1})]


# ----------------------------------------------------------------------------- drawing

def _bar(n: dict, W: float, top: float, fs: int) -> tuple[list[str], float]:
    """The stacked memory bar and its legend; returns the elements and the y below them."""
    b, dev = n["budget"], n["dev"]
    ml, mr = 12, 12
    bw_px = W - ml - mr
    scale_max = max(b.capacity_bytes, b.total_bytes) * 1.04
    X = lambda v: ml + v / scale_max * bw_px
    out = []
    gib = lambda v: fmt.bytes_iec(v)
    if b.fits:
        head = f"Fits: {gib(b.total_bytes)} of {gib(b.capacity_bytes)}, {gib(b.free_bytes)} free"
        cls = "wg-strong"
    else:
        head = f"Does not fit: needs {gib(b.total_bytes)}, has {gib(b.capacity_bytes)}"
        cls = "wg-strong wg-bad"
    lines = wrap_px(head, bw_px, STRONG_CHAR_PX)
    for i, ln in enumerate(lines):
        out.append(text(ml, top + 14 + 16 * i, ln, cls))
    y = top + 14 + 16 * (len(lines) - 1) + 10
    cap_label = f"{_short(dev)}: {gib(b.capacity_bytes)}" + (", as you set it" if dev.measured else "")
    cx = X(b.capacity_bytes)
    anchor = "end" if cx - SMALL_CHAR_PX * len(cap_label) > ml else "start"
    out.append(text(cx - 4 if anchor == "end" else ml, y + 12, cap_label, "wg-small wg-muted", anchor))
    bar_y, bar_h = y + 18, 28
    # the device's memory as an empty frame, filled from the left by what the configuration needs
    out.append(f'<rect x="{ml}" y="{num(bar_y)}" width="{num(cx - ml)}" height="{bar_h}" class="wg-idle">'
               f"<title>device memory: {esc(gib(b.capacity_bytes))}</title></rect>")
    x = ml
    classes = {"weights": "wg-hn3", "KV cache": "wg-h2", "activations": "wg-h4"}
    for name, value in b.parts:
        w = X(value) - ml
        if w > 0:
            out.append(f'<rect x="{num(x)}" y="{num(bar_y)}" width="{num(max(w, 0.5))}" height="{bar_h}"'
                       f' class="{classes[name]}"><title>{esc(name)}: {esc(gib(value))}</title></rect>')
        x += w
    if not b.fits:   # the part past the capacity, outlined
        out.append(f'<rect x="{num(cx)}" y="{num(bar_y - 3)}" width="{num(X(b.total_bytes) - cx)}"'
                   f' height="{bar_h + 6}" class="wg-blocks"/>')
    out.append(line(cx, bar_y - 6, cx, bar_y + bar_h + 6, "wg-axis"))
    y = bar_y + bar_h + 8
    for name, value in b.parts:
        y += 16
        out.append(f'<rect x="{ml}" y="{num(y - 9)}" width="10" height="10" class="{classes[name]}"/>')
        label = {"weights": "Weights", "KV cache": "KV cache", "activations": "Activations (one step)"}[name]
        out.append(text(ml + 16, y, f"{label}: {gib(value)}", "wg-small"))
    return out, y + 14


def _roofline(n: dict, W: float, top: float, fits: bool, fs: int) -> tuple[list[str], float]:
    narrow = W < 480
    H = round(W * (0.7 if narrow else 0.48))
    ml, mr, mt, mb = (46 if narrow else 58), 14, top + 22, 40
    pw, ph = W - ml - mr, H - 22 - mb
    peak, bw = n["peak"], n["bw"]
    x_lo, x_hi = 0.1, 10_000.0
    y_hi = peak * 3
    y_lo = min(roofline.attainable(x_lo, peak, bw), y_hi / 1e3)
    y_lo = 10.0 ** math.floor(math.log10(y_lo))
    lx0, lx1, ly0, ly1 = math.log10(x_lo), math.log10(x_hi), math.log10(y_lo), math.log10(y_hi)
    X = lambda v: ml + (math.log10(v) - lx0) / (lx1 - lx0) * pw
    Y = lambda v: mt + (ly1 - math.log10(v)) / (ly1 - ly0) * ph
    out = [text(ml, mt - 8, "Decode step on the roofline (FLOP/s)", "wg-small")]
    y_step = max(1, math.ceil(14 / (ph / (ly1 - ly0))))
    for t in decade_ticks(x_lo, x_hi):
        out.append(line(X(t), mt, X(t), mt + ph, "wg-grid"))
        out.append(text(X(t), mt + ph + 15, fmt.num(t, 1) if t < 1000 else fmt.si(t, "", 1).strip(),
                        "wg-small", "middle"))
    for t in decade_ticks(y_lo, y_hi):
        out.append(line(ml, Y(t), ml + pw, Y(t), "wg-grid"))
        # the bottom decade's label would sit on the first x label, in the corner
        if round(math.log10(t)) % y_step == 0 and t > y_lo * 1.5:
            out.append(text(ml - 5, Y(t) + 4, fmt.si(t, "", 1).strip(), "wg-small", "end"))
    out.append(f'<rect x="{num(ml)}" y="{num(mt)}" width="{num(pw)}" height="{num(ph)}" class="wg-axis"/>')
    out.append(text(ml + pw / 2, mt + ph + 32, "FLOP per byte moved" if narrow else
                    "Arithmetic intensity (FLOP per byte moved)", "wg-small", "middle"))
    placer = LabelPlacer((ml + 2, mt + 2, ml + pw - 2, mt + ph - 2))
    ridge = roofline.ridge_point(peak, bw)
    pts = [(x_lo, roofline.attainable(x_lo, peak, bw)), (ridge, peak), (x_hi, peak)]
    out.append(polyline([(X(a), Y(b)) for a, b in pts], "wg-c1 wg-roof"))
    out.append(line(X(ridge), Y(peak), X(ridge), mt + ph, "wg-ridge"))
    for x, y in roofline.curve(peak, bw, x_lo, x_hi, n=60):
        placer.reserve((X(x) - 3, Y(y) - 3, X(x) + 3, Y(y) + 3), soft=True)
    ops = n["ops"]
    matmuls = llm.total([c for c in ops if c.name not in ("attention over the KV cache",
                                                          "norms, SwiGLU, residual adds")], "weight matmuls")
    attn = next(c for c in ops if c.name == "attention over the KV cache")
    small = next(c for c in ops if c.name == "norms, SwiGLU, residual adds")
    points = [("weight matmuls", matmuls, False), ("attention", attn, False), ("norms etc.", small, False),
              ("whole step", n["step"], True)]
    drawn, labels = [], []
    for label, c, sel in points:
        i = min(max(c.intensity, x_lo), x_hi)
        px, py = X(i), Y(roofline.attainable(i, peak, bw))
        placer.reserve((px - 5, py - 5, px + 5, py + 5))
        cls = "wg-pt" + (" wg-sel" if sel else "") + ("" if fits else " wg-ghost")
        drawn.append(f'<circle cx="{num(px)}" cy="{num(py)}" r="{6.5 if sel else 5}" class="{cls}">'
                     f"<title>{esc(label)}: {esc(fmt.num(c.intensity))} FLOP/B</title></circle>")
        labels.append((px, py, label if fits or not sel else "step (cannot run)", sel))
    out.extend(drawn)
    for px, py, label, sel in sorted(labels, key=lambda p: not p[3]):
        spot = placer.place(px, py, label, fs, must=sel, char_px=STRONG_CHAR_PX if sel else SMALL_CHAR_PX)
        if spot:
            out.append(text(spot[0], spot[1], label, "wg-small" + (" wg-strong" if sel else ""), spot[2]))
    roof_label = (f"{n['dtype'].upper()} measured {fmt.si(peak, 'FLOP/s')}" if n["dev"].measured
                  else f"BF16 dense {fmt.si(peak, 'FLOP/s')}")
    spot = placer.place(ml + pw - 4, Y(peak), roof_label, fs)
    if spot:
        out.append(text(spot[0], spot[1], roof_label, "wg-small", spot[2]))
    # with its unit, as the roofline widget's; the bare number only where the unit finds no room
    # (the x axis names it)
    for ridge_label in (f"ridge {fmt.num(ridge)} FLOP/B", f"ridge {fmt.num(ridge)}"):
        spot = placer.place(X(ridge), mt + ph - 6, ridge_label, fs - 1, gap=4)
        if spot:
            break
    if spot:
        out.append(text(spot[0], spot[1], ridge_label, "wg-small wg-muted", spot[2]))
    return out, top + H


def render(params: dict) -> dict:
    n = numbers(params)
    m, dev, b, step = n["m"], n["dev"], n["budget"], n["step"]
    W = params.get("_width", 640)
    fs = 11 if W < 480 else 12
    bar, y = _bar(n, W, 0, fs)
    roof, H = _roofline(n, W, y + 6, b.fits, fs)
    att = roofline.attainable(step.intensity, n["peak"], n["bw"])
    reg = roofline.regime(step.intensity, n["peak"], n["bw"])
    kv_tok = llm.model_kv_bytes_per_token(m, params["kv"])
    ctx = params["context"]
    readouts = [
        ["Model", f"{m.label}: {fmt.count(m.layers, 'layer')}, {fmt.count(m.heads, 'query head')}, "
                  f"{fmt.count(m.kv_heads, 'KV head')} ({m.attention_kind}), head size {fmt.num(m.head_dim)}"],
        ["KV cache per token", fmt.bytes_iec(kv_tok)],
        ["KV cache per sequence", fmt.bytes_iec(kv_tok * ctx)],
        ["Weights", fmt.bytes_iec(b.weights_bytes)],
        ["KV cache (all sequences)", fmt.bytes_iec(b.kv_cache_bytes)],
        ["Activations (one decode step)", fmt.bytes_iec(b.activations_bytes)],
        ["Total", fmt.bytes_iec(b.total_bytes)],
        ["Device memory", f"{fmt.bytes_iec(b.capacity_bytes)}, as you set it: a browser cannot measure it"
         if dev.measured else f"{fmt.bytes_iec(b.capacity_bytes)} ({_short(dev)}), as labelled: an upper bound"],
        ["Free" if b.fits else "Over by", fmt.bytes_iec(abs(b.free_bytes))],
        [f"Largest batch at {fmt.num(ctx)} tokens", fmt.num(n["max_batch"])],
    ]
    if n["reported"] is not None:
        readouts += [["Memory reported by nvidia-smi", fmt.bytes_iec(n["reported"])],
                     ["Largest batch in the reported memory", fmt.num(n["max_batch_reported"])]]
    readouts += [
        ["Decode step intensity", f"{fmt.num(step.intensity)} FLOP/B"],
        ["KV cache share of the step's bytes", fmt.pct(n["kv_share"])],
        ["Regime", reg],
    ]
    if dev.measured:
        readouts += [["Your device (measured in this browser)",
                      f"{fmt.si(n['bw'], 'B/s')}, {fmt.si(n['peak'], 'FLOP/s')} {n['dtype'].upper()}"]]
    # kept when it does not fit, so that the readouts keep their rows as a slider crosses the limit
    readouts += [["Step time lower bound", fmt.si(n["time"], "s") if b.fits else "— (does not fit)"],
                 ["Tokens per second, upper bound", fmt.num(params["batch"] / n["time"]) if b.fits else "—"]]
    messages = []
    if not b.fits:
        messages.append(f"Out of memory: {m.label} with these settings needs {fmt.bytes_iec(b.total_bytes)}, "
                        f"{'' if dev.measured else 'the '}{_short(dev)} has {fmt.bytes_iec(b.capacity_bytes)}"
                        f"{' (as you set it)' if dev.measured else ''}. "
                        + ("The weights alone do not fit: store them in fewer bits or use a larger device."
                           if b.weights_bytes > b.capacity_bytes else
                           f"Lower the batch (at most {fmt.num(n['max_batch'])} fit) or the context, or store the "
                           "KV cache in fewer bits."))
    if ctx > m.context_tokens:
        messages.append(f"{fmt.num(ctx)} tokens is longer than {m.label}'s {fmt.num(m.context_tokens)}-token "
                        "context; the memory arithmetic holds for a long-context variant of the same shape.")
    if dev.measured and n["dtype"] != ACT_DTYPE:
        messages.append(f"{dev.label} has no measured BF16 peak; the roof is its {n['dtype'].upper()} one. "
                        "Its memory is the figure you set, not a measurement.")
    message = " ".join(messages) or None
    title = f"Memory budget of {m.label} on " + (dev.label[0].lower() + dev.label[1:] if dev.measured else f"the {dev.label}")
    desc = (f"Stacked bar: weights {fmt.bytes_iec(b.weights_bytes)}, KV cache {fmt.bytes_iec(b.kv_cache_bytes)}, "
            f"activations {fmt.bytes_iec(b.activations_bytes)} against {fmt.bytes_iec(b.capacity_bytes)}"
            f"{', the memory you set' if dev.measured else ''}: "
            f"{'fits' if b.fits else 'does not fit'}. Below, a roofline with the decode step at "
            f"{fmt.num(step.intensity)} FLOP per byte, {reg}, attainable {fmt.si(att, 'FLOP/s')}.")
    return {"svg": svg_root(W, H, "wg-memory-budget", title, desc, bar + roof), "readouts": readouts,
            "message": message}
