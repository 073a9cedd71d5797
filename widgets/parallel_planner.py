"""Parallelism planner: a training configuration's memory per GPU and its step time.

Top: a stacked bar of one GPU's memory (weights, gradients, optimizer states, activations)
against its capacity. Below: the step time as a stacked bar of compute, the pipeline bubble,
tensor- and pipeline-parallel transfers and the part of the data-parallel gradient transfer the
step waits for; under it, the whole data-parallel transfer, as long as it is, beside the backward
pass it may hide under. Every number comes from ``calc.parallelism`` (which says where each
formula comes from), ``calc.specs`` and ``calc.collectives``; this module only lays them out.
The figure's height depends only on its width, so that no state moves the controls under it.
"""
from __future__ import annotations

import math
from functools import lru_cache

from calc import fmt, llm, parallelism as par, specs

from . import Param
from ._svg import STRONG_CHAR_PX, esc, label_px, line, num, svg_root, text, wrap_px

TITLE = "Parallelism planner"
HEAD_CHAR_PX = STRONG_CHAR_PX + 0.4   # a bold 13 px heading in the book's serif: 331 px for 41 characters
UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "s", "ms", "µs", "min", "h", "days")
MIN_MEMORY_GB = 40           # GPUs a large model is trained on: the datacenter parts


def _gpus() -> tuple:
    """Datasheet GPUs with a dense BF16 peak and at least 40 GB: the ones models are trained on."""
    out = []
    for key, dev in specs.DEVICES.items():
        if dev.illustrative or dev.kind != "gpu" or not dev.has("mem_capacity"):
            continue
        if ("bf16", False) not in dev.peak_keys() or dev.mem_capacity_bytes < MIN_MEMORY_GB * 2**30:
            continue
        if "pcie" in key:                # a PCIe card's GPUs share no scale-up fabric
            continue
        out.append((key, dev.label))
    return tuple(out)


def _links(kind: str) -> tuple:
    return tuple((l.name, l.label) for l in specs.links() if _kind(l) == kind)


def _kind(link) -> str:
    """"scale-out" for links between nodes (InfiniBand, Ethernet), else "scale-up"."""
    k = (getattr(link, "kind", "") or "").lower()
    return "scale-out" if ("out" in k or "network" in k or link.name.startswith(("ib-", "eth", "roce")))\
        else "scale-up"


def own_link(device_name: str):
    """The device's own scale-up link, from calc.specs (``scale_up_link`` or ``Device.link``)."""
    if hasattr(specs, "scale_up_link"):
        return specs.scale_up_link(device_name)
    return specs.link(specs.device(device_name).link)


ZERO = (("0", "None (replicated)"), ("1", "ZeRO-1: optimizer states"), ("2", "ZeRO-2: + gradients"),
        ("3", "ZeRO-3 / FSDP: + weights"))
ZERO_SHORT = {"0": "no ZeRO", "1": "ZeRO-1", "2": "ZeRO-2", "3": "ZeRO-3 (FSDP)"}
# Nodes the offered GPUs come in: 4 or 8 to an HGX/OAM board. An NVL72 rack's 72 GPUs are GB200s (a
# different part, rated higher than the B200 offered here), so it is not offered beside them.
NODE = (("4", "4"), ("8", "8"))

PARAMS = [
    Param("model", "choice", "Model", "llama3-70b", options=tuple((k, m.label) for k, m in llm.MODELS.items()),
          group="Model and cluster"),
    Param("device", "choice", "GPU", "h100-sxm", options=_gpus(), group="Model and cluster"),
    Param("gpus", "int", "GPUs", 64, min=8, max=16384, step=1, log=True, group="Model and cluster"),
    Param("node", "choice", "GPUs per node (scale-up domain)", "8", options=NODE, group="Model and cluster"),
    Param("scale_up", "choice", "Link inside a node", "own",
          options=(("own", "The GPU's own"),) + _links("scale-up"), group="Model and cluster"),
    Param("scale_out", "choice", "Link between nodes (per GPU)", "ib-ndr-400", options=_links("scale-out"),
          group="Model and cluster"),
    Param("tp", "int", "Tensor parallel (TP)", 8, min=1, max=64, step=1, log=True, group="Parallelism"),
    Param("pp", "int", "Pipeline parallel (PP)", 1, min=1, max=64, step=1, log=True, group="Parallelism"),
    Param("zero", "choice", "Data-parallel sharding", "1", options=ZERO, group="Parallelism"),
    Param("micro_batch", "int", "Micro-batch (sequences)", 1, min=1, max=32, step=1, log=True, group="Batch"),
    Param("global_batch", "int", "Global batch (sequences)", 512, min=8, max=8192, step=1, log=True,
          group="Batch"),
    Param("seq", "int", "Sequence length", 4096, min=1024, max=131072, step=1, log=True, unit="tokens",
          group="Batch"),
    Param("utilisation", "int", "Matmul utilisation of the BF16 peak", 40, min=10, max=80, step=5, unit="%",
          group="Assumptions"),
    Param("overlap", "bool", "Overlap the gradient all-reduce with the backward pass", True, group="Assumptions"),
    Param("recompute", "bool", "Recompute activations (full)", False, group="Assumptions"),
]

EXAMPLES = [
    {"model": "llama3-8b", "tp": 1, "gpus": 8, "zero": "0"},                  # 8B, pure DP: fits
    {"model": "llama3-70b", "tp": 1, "gpus": 8, "zero": "0"},                 # 70B, pure DP: does not fit
    # Llama 3 405B as its paper's Table 4 lays it out on 16,384 H100s: TP 8, PP 16, DP 128, 8,192 tokens,
    # 16 sequences per replica (with recomputation here, which the book's estimate needs to fit).
    {"model": "llama3-405b", "gpus": 16384, "tp": 8, "pp": 16, "global_batch": 2048, "seq": 8192,
     "recompute": True},
    {"gpus": 8, "tp": 16},                                                     # TP over more GPUs than there are
    {"tp": 16, "gpus": 128},                                                   # TP across two nodes
    {"scale_out": "ib-hdr-200", "overlap": False, "gpus": 1024, "tp": 1, "zero": "3", "global_batch": 1024},
]


# ----------------------------------------------------------------------------- numbers

def plan(params: dict) -> par.Plan:
    """The ``calc.parallelism.Plan`` these parameters describe; ``PlanError`` if it cannot run."""
    dev = specs.device(params["device"])
    up = own_link(params["device"]) if params["scale_up"] == "own" else specs.link(params["scale_up"])
    return par.Plan(llm.model(params["model"]), dev, params["gpus"], params["tp"], params["pp"], up,
                    specs.link(params["scale_out"]), micro_batch=params["micro_batch"],
                    global_batch=params["global_batch"], seq_len=params["seq"], zero=int(params["zero"]),
                    gpus_per_node=int(params["node"]), recompute=params["recompute"],
                    overlap=params["overlap"], utilisation=params["utilisation"] / 100)


def _short(dev) -> str:
    """"H100 SXM5", "B200 (HGX)", "MI300X": the label without vendor and capacity (the bar gives it)."""
    name = dev.label.replace("NVIDIA ", "").replace("AMD ", "").replace("Instinct ", "")
    last = name.rsplit(" ", 1)
    return last[0] if len(last) == 2 and last[1].endswith("GB") and last[1][:-2].isdigit() else name


def print_frames(params: dict) -> list[tuple[str, dict]]:
    """Print shows the state beside pure data parallelism on the same GPUs (no TP, no PP, no
    ZeRO): what the degrees buy in memory."""
    if params["tp"] == 1 and params["pp"] == 1 and params["zero"] == "0":
        return [("As set", {}), ("TP 8, ZeRO-1", {"tp": 8, "zero": "1"})]
    return [("As set", {}), ("Pure data parallel", {"tp": 1, "pp": 1, "zero": "0"})]


# ----------------------------------------------------------------------------- drawing

MEM_CLASSES = {"weights": "wg-hn4", "gradients": "wg-hn2", "optimizer states": "wg-h2", "activations": "wg-h4"}
STEP_CLASSES = {"compute": "wg-hn3", "pipeline bubble": "wg-idle", "tensor-parallel communication": "wg-h3",
                "pipeline communication": "wg-h1", "data-parallel communication": "wg-h4"}
STEP_NAMES = {"compute": "Compute", "pipeline bubble": "Bubble", "tensor-parallel communication": "TP comm.",
              "pipeline communication": "PP comm.", "data-parallel communication": "DP comm. (waited for)"}
MEM_NAMES = {"weights": "Weights", "gradients": "Gradients", "optimizer states": "Optimizer", "activations":
             "Activations"}


def _rect(x, y, w, h, cls, title="") -> str:
    t = f"<title>{esc(title)}</title>" if title else ""
    return (f'<rect x="{num(x)}" y="{num(y)}" width="{num(max(w, 0))}" height="{num(h)}" class="{cls}">{t}</rect>'
            if t else f'<rect x="{num(x)}" y="{num(y)}" width="{num(max(w, 0))}" height="{num(h)}" class="{cls}"/>')


def _legend(items, x0, y, W, cols) -> tuple[list[str], float]:
    """Swatches in ``cols`` fixed columns (the height depends on the count, not the text)."""
    out, col_w = [], (W - 2 * x0) / cols
    for i, (cls, label) in enumerate(items):
        x, yy = x0 + (i % cols) * col_w, y + 16 * (i // cols)
        out.append(_rect(x, yy - 9, 10, 10, cls))
        out.append(text(x + 15, yy, label, "wg-small"))
    return out, y + 16 * math.ceil(len(items) / cols)


def _wrap(content: str, room: float) -> list[str]:
    """Lines of ``content`` by each line's laid-out width (capitals and digits are wider), a number
    kept on the line of its unit."""
    merged: list[str] = []
    for word in content.split(" "):
        if merged and word.rstrip(",.:;") in UNITS and merged[-1][-1:].isdigit():
            merged[-1] += "\x01" + word
        else:
            merged.append(word)
    lines, line = [], ""
    for word in merged:
        trial = f"{line} {word}".strip()
        if line and label_px(trial.replace("\x01", " "), HEAD_CHAR_PX) > room:
            lines.append(line)
            line = word
        else:
            line = trial
    return [ln.replace("\x01", " ") for ln in lines + [line]]


def _head(candidates, x, y, W, cls="wg-strong", rows=2) -> tuple[list[str], float]:
    """The first of ``candidates`` (longest first) that fits in ``rows`` lines, always ``rows`` lines
    of room; the last is cut to them if none does."""
    candidates = [candidates] if isinstance(candidates, str) else candidates
    for content in candidates:
        lines = _wrap(content, W - 2 * x)
        if len(lines) <= rows:
            break
    return [text(x, y + 16 * i, ln, cls) for i, ln in enumerate(lines[:rows])], y + 16 * rows


def _layout(W):
    narrow = W < 480
    return {"ml": 12, "cols": 2 if narrow else 4, "bar": 26}


def render(params: dict) -> dict:
    W = params.get("_width", 640)
    L = _layout(W)
    ml, cols, bar_h = L["ml"], L["cols"], L["bar"]
    bw_px = W - 2 * ml
    body: list[str] = []
    m, dev = llm.model(params["model"]), specs.device(params["device"])
    try:
        p = plan(params)
        error = None
    except par.PlanError as exc:
        p, error = None, str(exc)

    # heading: the configuration (two lines of room)
    if p is not None:
        # "\x01" glues: the degrees never break across lines, nor "ZeRO-3 (FSDP)"
        degrees = (f"TP {p.tp} × PP {p.pp} × DP {fmt.num(p.dp)},".replace(" ", "\x01")
                   + " " + ZERO_SHORT[params["zero"]].replace(" ", "\x01"))
        head = f"{m.label} on {fmt.num(p.gpus)} × {_short(dev)}: {degrees}"
        heads = [head, f"{m.label}, {fmt.num(p.gpus)} GPUs: {degrees}", degrees]
    else:
        head = f"{m.label} on {fmt.num(params['gpus'])} × {_short(dev)}: cannot run as set"
        heads = [head, "Cannot run as set"]
    head = head.replace("\x01", " ")
    out, y = _head(heads, ml, 16, W)
    body += out

    # ---- memory
    y += 6
    if p is not None:
        mem = par.memory(p)
        cap, total = mem.capacity_bytes, mem.total_bytes
        label = [f"Memory per GPU: {fmt.bytes_iec(total)} of {fmt.bytes_iec(cap)}" + ("" if mem.fits else ": does not fit"),
                 f"Per GPU: {fmt.bytes_iec(total)} of {fmt.bytes_iec(cap)}" + ("" if mem.fits else ", over")]
    else:
        mem, cap, total = None, specs.device(params["device"]).mem_capacity_bytes, 0.0
        label = "Memory per GPU: (no plan)"
    out, y = _head(label, ml, y + 12, W, "wg-small wg-strong" + ("" if mem is None or mem.fits else " wg-bad"))
    body += out
    y -= 8
    scale = max(cap, total) * 1.04
    X = lambda v: ml + v / scale * bw_px
    body.append(_rect(ml, y, X(cap) - ml, bar_h, "wg-idle", f"GPU memory: {fmt.bytes_iec(cap)}"))
    if mem is not None:
        x = ml
        for name, value in mem.parts:
            w = X(value) - ml
            if w > 0:
                body.append(_rect(x, y, max(w, 0.5), bar_h, MEM_CLASSES[name], f"{name}: {fmt.bytes_iec(value)}"))
            x += w
        if not mem.fits:
            body.append(_rect(X(cap), y - 3, X(total) - X(cap), bar_h + 6, "wg-blocks"))
    body.append(line(X(cap), y - 6, X(cap), y + bar_h + 6, "wg-axis"))
    y += bar_h + 18
    out, y = _legend([(MEM_CLASSES[k], MEM_NAMES[k]) for k in MEM_CLASSES], ml, y, W, cols)
    body += out

    # ---- step time
    y += 10
    if p is not None:
        st = par.step(p)
        label = [f"Step time: {fmt.duration(st.time_s)}, set by {st.bound}",
                 f"Step: {fmt.duration(st.time_s)}, {st.bound}"]
    else:
        st = None
        label = "Step time: (no plan)"
    out, y2 = _head(label, ml, y + 12, W, "wg-small wg-strong", rows=2)
    body += out
    y = y2 - 2
    dp_row = y + bar_h + 8
    if st is not None:
        back = par.BACKWARD_SHARE * st.compute_s
        scale_t = max(st.time_s, st.dp_s, st.bubble_s + st.compute_s) * 1.04
        T = lambda v: ml + v / scale_t * bw_px
        x = ml
        for name, value in st.parts:
            w = T(value) - ml
            if w > 0:
                body.append(_rect(x, y, max(w, 0.5), bar_h, STEP_CLASSES[name],
                                  f"{name}: {fmt.duration(value)}"))
            x += w
        body.append(line(T(st.time_s), y - 4, T(st.time_s), y + bar_h + 4, "wg-axis"))
        # the whole data-parallel transfer, under the backward pass it may hide under
        h = 10
        if st.dp_s > 0:
            start = T(st.compute_s - back) if p.overlap else T(st.time_s - st.dp_s)
            body.append(_rect(start, dp_row, T(st.dp_s) - ml, h, "wg-blocks",
                              f"data-parallel transfer: {fmt.duration(st.dp_s)}"))
            note = ("DP transfer " + ("under the backward pass" if p.overlap else "after the backward pass")
                    + f": {fmt.duration(st.dp_s)}")
        else:
            note = "No data-parallel transfer (DP 1)"
        body.append(text(ml, dp_row + h + 15, note, "wg-small wg-muted"))
    else:
        for i, ln in enumerate(wrap_px(error, bw_px)[:3]):
            body.append(text(ml, y + 12 + 14 * i, ln, "wg-small wg-bad"))
    y = dp_row + 10 + 15 + 22
    out, y = _legend([(STEP_CLASSES[k], STEP_NAMES[k]) for k in STEP_CLASSES], ml, y, W, 2 if cols == 2 else 3)
    body += out
    H = y + 2

    readouts = _readouts(params, p, mem, st, error)
    message = _message(params, p, mem, error)
    title = f"Parallelism planner: {m.label} on {fmt.num(params['gpus'])} {_short(dev)}"
    if p is None:
        desc = f"{head}. {error}"
    else:
        desc = (f"{head}. Memory per GPU {fmt.bytes_iec(mem.total_bytes)} of {fmt.bytes_iec(mem.capacity_bytes)}: "
                f"{'fits' if mem.fits else 'does not fit'}. Step time {fmt.duration(st.time_s)}, set by {st.bound}.")
    return {"svg": svg_root(W, round(H), "wg-planner", title, desc, body), "readouts": readouts,
            "message": message}


def _readouts(params, p, mem, st, error) -> list[list[str]]:
    if p is None:    # the same rows, so that the readouts keep their height (they fell from 798 to 171 px
        # on a phone as a TP slider crossed a degree that cannot run, moving the page below)
        return [["Configuration", "cannot run: " + error]] + [[label, "—"] for label in _plan_labels()[1:]]
    link_up, link_out = p.scale_up, p.scale_out
    where = lambda size, stride: ("inside a node" if size * stride <= p.gpus_per_node else "across nodes")
    rows = [
        ["Degrees", f"TP {p.tp} × PP {p.pp} × DP {fmt.num(p.dp)} = {fmt.num(p.gpus)} GPUs"],
        ["Micro-batches per step (m)", fmt.num(p.micro_batches)],
        ["Tokens per step", fmt.num(p.tokens)],
        ["Parameters per GPU (before ZeRO)", fmt.si(par.stage_params(p), "")],
    ]
    rows += [[MEM_NAMES[k] + (" states" if k == "optimizer states" else ""), fmt.bytes_iec(v)] for k, v in mem.parts]
    rows += [
        ["Memory per GPU", f"{fmt.bytes_iec(mem.total_bytes)} of {fmt.bytes_iec(mem.capacity_bytes)} "
                           f"({'fits' if mem.fits else 'does not fit'})"],
        ["Compute", f"{fmt.duration(st.compute_s)} at {params['utilisation']}% of "
                    f"{fmt.si(p.device.peak_flops('bf16', False), 'FLOP/s')} (dense BF16)"],
        ["Pipeline bubble", f"{fmt.duration(st.bubble_s)} ({fmt.pct(par.bubble_fraction(p.pp, p.micro_batches))} "
                            f"of compute + bubble)"],
        ["TP all-reduces", f"{fmt.duration(st.tp_s)}" + (f", {where(p.tp, 1)} ({_link_label(par.group_link(p, p.tp, 1))})"
                                                         if p.tp > 1 else "")],
        ["PP sends", f"{fmt.duration(st.pp_s)}" + (f", {where(p.pp, p.tp * p.dp)} "
                                                   f"({_link_label(par.group_link(p, p.pp, p.tp * p.dp))})"
                                                   if p.pp > 1 else "")],
        ["DP gradients", f"{fmt.duration(st.dp_s)}" + (f", {where(p.dp, p.tp)} "
                                                       f"({_link_label(par.group_link(p, p.dp, p.tp))})"
                                                       if p.dp > 1 else "")],
        ["DP time waited for", fmt.duration(st.dp_exposed_s)],
        ["Step time", fmt.duration(st.time_s)],
        ["Set by", st.bound],
        ["Model FLOPs utilisation", fmt.pct(par.mfu(p, st.time_s))],
        ["Tokens per second", fmt.num(p.tokens / st.time_s)],
        ["Links", f"{_link_label(link_up)} inside a node, {_link_label(link_out)} between nodes"],
    ]
    return rows


@lru_cache(maxsize=1)
def _plan_labels() -> tuple[str, ...]:
    """The readouts' labels for a plan that runs (the defaults': every plan has the same)."""
    return tuple(label for label, _ in render(coerce_defaults())["readouts"])


def coerce_defaults() -> dict:
    return {q.name: q.default for q in PARAMS} | {"_width": 640}


def _link_label(link) -> str:
    return f"{link.label}, {fmt.num(link.bw_per_direction_GBps)} GB/s each way"


def _message(params, p, mem, error) -> str | None:
    if p is None:
        return f"This configuration cannot run: {error}"
    msgs = []
    if not mem.fits:
        over = mem.total_bytes - mem.capacity_bytes
        biggest = max(mem.parts, key=lambda kv: kv[1])[0]
        fix = {"activations": "recompute activations, lower the micro-batch or the sequence length, or raise TP",
               "optimizer states": "shard them with ZeRO-1 or more",
               "gradients": "shard them with ZeRO-2 or more, or raise TP or PP",
               "weights": "shard them with ZeRO-3 / FSDP, or raise TP or PP"}[biggest]
        msgs.append(f"Out of memory: each GPU needs {fmt.bytes_iec(mem.total_bytes)}, "
                    f"{fmt.bytes_iec(over)} more than the {fmt.bytes_iec(mem.capacity_bytes)} it has. "
                    f"The largest part is the {biggest}: {fix}.")
    if p.tp > p.gpus_per_node:
        msgs.append(f"Tensor parallelism of {p.tp} spans more than a node of {p.gpus_per_node}: its per-layer "
                    "all-reduces cross the scale-out link.")
    if p.model.layers % p.pp:
        msgs.append(f"{p.model.layers} layers do not split evenly into {p.pp} stages: the largest holds "
                    f"{p.stage_layers}.")
    if p.seq_len > p.model.context_tokens:
        msgs.append(f"{fmt.num(p.seq_len)} tokens is longer than {p.model.label}'s "
                    f"{fmt.num(p.model.context_tokens)}-token context.")
    return " ".join(msgs) or None


def summary(params: dict, r: dict) -> str:
    """E.g. "TP 8 × PP 1 × DP 8 = 64 GPUs: 57.1 GiB of 80.0 GiB (fits); step 14.2 s, set by compute"."""
    if "Configuration" in r:
        return r["Configuration"]
    return f"{r['Degrees']}: {r['Memory per GPU']}; step {r['Step time']}, set by {r['Set by']}"
