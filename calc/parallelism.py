"""Training a model on many GPUs: memory per GPU, compute, communication and the step time.

A planner's model of one training step under data (DP), tensor (TP) and pipeline (PP)
parallelism, with ZeRO's sharding of the optimizer states, gradients and weights (ZeRO-3 is
what PyTorch calls FSDP). Units are in the names: ``*_bytes`` bytes, ``*_s`` seconds, FLOPs
in FLOP. Every formula cites where it comes from; the book's own simplifications say so.

Layout of the GPUs (Megatron-LM's default order, tensor fastest): the ``tp`` GPUs of a tensor
group are neighbours, data-parallel replicas come next, pipeline stages last. A group whose GPUs
all sit in one node (``gpus_per_node``) talks over the scale-up link (NVLink, Infinity Fabric);
one that spans nodes also crosses the scale-out link (one InfiniBand port per GPU), where the ports
of the group's GPUs in a node share its network bytes, as NCCL's several rings do
(``collectives.time_s_across_servers``): a group with one GPU a node (the tensor group fills it)
sends all its bytes through each GPU's own port.

Memory per GPU (bytes), for mixed-precision Adam as the ZeRO paper counts it (Rajbhandari et al.,
2020, Section 3.1): 2 bytes a parameter of BF16 weights, 2 of BF16 gradients, and K = 12 of
optimizer state (an FP32 copy of the weights, Adam's momentum and variance), 16 in all. ZeRO
stage 1 divides the 12 by the data-parallel degree, stage 2 also the gradients' 2, stage 3 also
the weights' 2 (Section 5, Figure 1). Activations follow Korthikanti et al. (2022), Table 2:
a layer keeps ``34·s·b·h / t`` bytes with tensor and sequence parallelism and the attention
scores not stored (FlashAttention, or their selective recomputation), and only its input,
``2·s·b·h``, with full recomputation (the paper's figure, not divided by t); with the 1F1B pipeline schedule the first stage holds
``min(p, m)`` micro-batches in flight (Section 4.2.3). Their 34 counts a GPT layer (a 4h MLP,
dropout masks); Llama's layers (a SwiGLU MLP 3.5h wide, no dropout) keep a similar amount, so it
is an estimate, as the paper's own is. The last stage also holds one micro-batch's FP32 logits,
``4·s·b·V / t``.

Compute: ``6·N`` FLOPs per token for the weights' matmuls (forward 2, backward 4; Kaplan et al.
2020, Section 2.1) plus ``6·L·s·d_attn`` for attention's scores and their use (ibid., Table 1),
``8·N`` instead of ``6·N`` with full recomputation (a second forward pass), over the GPU's dense
BF16 peak at a stated utilisation (the model FLOPs utilisation, MFU, that reports quote:
Llama 3 405B trained at 38-43 %, Llama 3 paper Table 4).

Communication per step, each collective timed by ``calc.collectives`` (alpha-beta, ring):
- DP: an all-reduce of the BF16 gradients (ZeRO 0-2: a reduce-scatter and an all-gather, the same
  volume), 1.5 times that under ZeRO-3 (an all-gather of the weights in the forward pass and again
  in the backward, a reduce-scatter of the gradients; ZeRO paper Section 7.2.2);
- TP: per layer and micro-batch, two all-reduces of the activations ``2·s·b·h`` bytes in the
  forward pass and two in the backward (Megatron-LM, Shoeybi et al. 2019, Figure 4; sequence
  parallelism replaces each by a reduce-scatter and an all-gather of the same volume), two more
  with full recomputation;
- PP: each micro-batch's activations to the next stage and their gradients back,
  ``2·s·b·h / t`` bytes each way (Narayanan et al. 2021, Section 4.1's scatter/gather);
  the bubble, the idle share of a 1F1B or GPipe pipeline, is ``(p − 1) / (m + p − 1)`` of the
  step (Huang et al. 2019, Section 2; Narayanan et al. 2021, Section 2.2.1).
Tensor- and pipeline-parallel transfers sit on the critical path; the data-parallel all-reduce
can overlap the backward pass (two thirds of the compute) when ``overlap`` is on, and only what
is left over adds to the step.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Optional

from . import collectives
from .llm import Model
from .sources import Source

# --------------------------------------------------------------------------- sources

ZERO_PAPER = Source(
    "ZeRO: Memory Optimizations Toward Training Trillion Parameter Models (Rajbhandari et al., SC '20)",
    "IEEE", 2020, "rajbhandari2020zero", where="Sections 3.1 and 5, Figure 1",
)
KORTHIKANTI = Source(
    "Reducing Activation Recomputation in Large Transformer Models (Korthikanti et al.), arXiv:2205.05198",
    "arXiv", 2022, "korthikanti2022reducing", where="Table 2 and Section 4.2.3",
)
MEGATRON = Source(
    "Megatron-LM: Training Multi-Billion Parameter Language Models Using Model Parallelism "
    "(Shoeybi et al.), arXiv:1909.08053", "arXiv", 2019, "shoeybi2019megatron", where="Section 3, Figure 4",
)
NARAYANAN = Source(
    "Efficient Large-Scale Language Model Training on GPU Clusters Using Megatron-LM "
    "(Narayanan et al., SC '21)", "ACM", 2021, "narayanan2021efficient", where="Sections 2.2 and 4.1",
)
GPIPE = Source(
    "GPipe: Efficient Training of Giant Neural Networks using Pipeline Parallelism (Huang et al., "
    "NeurIPS 2019)", "NeurIPS", 2019, "huang2019gpipe", where="Section 2",
)
KAPLAN = Source(
    "Scaling Laws for Neural Language Models (Kaplan et al.), arXiv:2001.08361", "arXiv", 2020,
    "kaplan2020scaling", where="Section 2.1, Table 1",
)

#: Bytes per parameter of mixed-precision Adam (ZeRO paper, Section 3.1): BF16/FP16 weights and
#: gradients, and K = 12 of optimizer state (FP32 weights, momentum, variance).
WEIGHT_BYTES, GRAD_BYTES, OPTIMIZER_BYTES = 2, 2, 12
#: Activation bytes one layer keeps per token and per unit of width, with tensor and sequence
#: parallelism and no stored attention scores (Korthikanti et al., Table 2); 2 with full recomputation.
ACT_BYTES_PER_SBH, ACT_BYTES_PER_SBH_RECOMPUTE = 34, 2
ACT_DTYPE_BYTES = 2          # BF16 activations on the wire
LOGIT_BYTES = 4              # FP32 logits for the loss
BACKWARD_SHARE = 2 / 3       # the backward pass's share of the compute (4 of 6 FLOPs per parameter)
ZERO_STAGES = (0, 1, 2, 3)


class PlanError(ValueError):
    """A configuration that cannot run as asked (degrees that do not divide, a batch that does
    not split); the message says what to change."""


@dataclass(frozen=True)
class Plan:
    """One training configuration. ``links`` are ``calc.specs.Link``s (``bw_per_direction_GBps``,
    ``latency_us``); ``utilisation`` is the fraction of the dense BF16 peak the matmuls reach."""

    model: Model
    device: object                 # calc.specs.Device
    gpus: int
    tp: int
    pp: int
    scale_up: object               # calc.specs.Link inside a node
    scale_out: object              # calc.specs.Link between nodes (per GPU)
    micro_batch: int = 1           # sequences per micro-batch
    global_batch: int = 512        # sequences per optimizer step
    seq_len: int = 4096
    zero: int = 1
    gpus_per_node: int = 8
    recompute: bool = False
    overlap: bool = True
    utilisation: float = 0.4

    def __post_init__(self):
        for name in ("gpus", "tp", "pp", "micro_batch", "global_batch", "seq_len", "gpus_per_node"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise PlanError(f"{name} must be a positive whole number, got {value!r}")
        if self.zero not in ZERO_STAGES:
            raise PlanError(f"ZeRO stage must be one of {ZERO_STAGES}, got {self.zero!r}")
        if not 0 < self.utilisation <= 1:
            raise PlanError(f"utilisation must be in (0, 1], got {self.utilisation!r}")
        m = self.model
        if self.gpus % (self.tp * self.pp):
            raise PlanError(f"tensor × pipeline = {self.tp} × {self.pp} = {self.tp * self.pp} does not divide "
                            f"{self.gpus} GPUs: the data-parallel degree would not be whole")
        undivided = [f"{n} {what}" for n, what in ((m.heads, "query heads"), (m.kv_heads, "KV heads")) if n % self.tp]
        if undivided:      # only what it does not divide: 32 divides Llama 3 70B's 64 query heads, not its 8 KV heads
            raise PlanError(f"tensor parallelism {self.tp} does not divide {m.label}'s {' and '.join(undivided)}: "
                            f"each GPU must hold whole heads")
        if self.pp > m.layers:
            raise PlanError(f"{self.pp} pipeline stages for {m.layers} layers: a stage needs at least one layer")
        dp = self.gpus // (self.tp * self.pp)
        if self.global_batch % (dp * self.micro_batch):
            raise PlanError(f"a global batch of {self.global_batch} sequences does not split into {dp} "
                            f"data-parallel replicas × micro-batches of {self.micro_batch}")

    # -- degrees ---------------------------------------------------------------
    @property
    def dp(self) -> int:
        """Data-parallel degree: ``gpus / (tp · pp)``."""
        return self.gpus // (self.tp * self.pp)

    @property
    def micro_batches(self) -> int:
        """Micro-batches per step on each pipeline, m = global batch / (dp · micro-batch)."""
        return self.global_batch // (self.dp * self.micro_batch)

    @property
    def tokens(self) -> int:
        """Tokens per optimizer step: global batch × sequence length."""
        return self.global_batch * self.seq_len

    @property
    def stage_layers(self) -> int:
        """Layers on the largest pipeline stage: ``ceil(L / p)`` (stages may be uneven, as Llama 3
        405B's 126 layers over 16 stages were: Llama 3 paper, Section 3.3.2)."""
        return math.ceil(self.model.layers / self.pp)


# ------------------------------------------------------------------------------ memory


def stage_params(plan: Plan) -> float:
    """Parameters one GPU holds before ZeRO: the largest stage's layers split ``tp`` ways (the norm
    vectors whole), plus a vocabulary-parallel embedding or LM head (``V·h / tp``; both when
    ``pp = 1``) and the final norm."""
    m = plan.model
    matrices = sum(d_in * d_out for _, d_in, d_out in m.layer_matrices())
    layers = plan.stage_layers * (matrices / plan.tp + 2 * m.hidden)
    embeddings = (1 if m.tied_embeddings else 2) if plan.pp == 1 else 1
    return layers + embeddings * m.vocab * m.hidden / plan.tp + m.hidden


@dataclass(frozen=True)
class Memory:
    """Bytes on one GPU (the most loaded: the first pipeline stage) against its capacity."""

    weights_bytes: float
    gradients_bytes: float
    optimizer_bytes: float
    activations_bytes: float
    capacity_bytes: float

    @property
    def parts(self) -> list[tuple[str, float]]:
        return [("weights", self.weights_bytes), ("gradients", self.gradients_bytes),
                ("optimizer states", self.optimizer_bytes), ("activations", self.activations_bytes)]

    @property
    def total_bytes(self) -> float:
        return sum(v for _, v in self.parts)

    @property
    def fits(self) -> bool:
        return self.total_bytes <= self.capacity_bytes


def model_state_bytes(params: float, zero: int, dp: int) -> tuple[float, float, float]:
    """(weights, gradients, optimizer states) in bytes for ``params`` parameters under ZeRO stage
    ``zero`` across ``dp`` replicas: 2Ψ + 2Ψ + 12Ψ, with stage 1 dividing the 12Ψ by dp, stage 2
    also the gradients, stage 3 also the weights (ZeRO paper, Figure 1)."""
    if zero not in ZERO_STAGES:
        raise PlanError(f"ZeRO stage must be one of {ZERO_STAGES}, got {zero!r}")
    return (WEIGHT_BYTES * params / (dp if zero >= 3 else 1),
            GRAD_BYTES * params / (dp if zero >= 2 else 1),
            OPTIMIZER_BYTES * params / (dp if zero >= 1 else 1))


def layer_activation_bytes(seq_len: int, micro_batch: int, hidden: int, tp: int, recompute: bool) -> float:
    """Bytes one layer keeps for the backward pass, per micro-batch (Korthikanti et al., Table 2):
    ``34·s·b·h / t`` (tensor and sequence parallel, no stored attention scores), ``2·s·b·h`` with
    full recomputation (the layer's input only; the table does not divide it by t)."""
    if recompute:
        return ACT_BYTES_PER_SBH_RECOMPUTE * seq_len * micro_batch * hidden
    return ACT_BYTES_PER_SBH * seq_len * micro_batch * hidden / tp


def activation_bytes(plan: Plan) -> float:
    """Activations on the busiest GPU: the first stage's layers × the micro-batches in flight
    (``min(p, m)`` under 1F1B), plus, with recomputation, one layer's full set while it is
    recomputed; the last stage's FP32 logits of one micro-batch if that is more (with ``pp = 1``
    both are on the one GPU)."""
    m, s, b, t = plan.model, plan.seq_len, plan.micro_batch, plan.tp
    in_flight = min(plan.pp, plan.micro_batches)
    layers = plan.stage_layers * in_flight * layer_activation_bytes(s, b, m.hidden, t, plan.recompute)
    if plan.recompute:
        layers += layer_activation_bytes(s, b, m.hidden, t, False)
    logits = LOGIT_BYTES * s * b * m.vocab / t
    return layers + logits if plan.pp == 1 else max(layers, logits)


def memory(plan: Plan) -> Memory:
    """Memory per GPU: ``model_state_bytes`` of ``stage_params`` plus ``activation_bytes``, against
    what the driver reports where a source gives it (an H100's 81,559 MiB, less than its "80GB"
    label of 80 GiB: ``Device.mem_reported_bytes``), else against the label."""
    w, g, o = model_state_bytes(stage_params(plan), plan.zero, plan.dp)
    dev = plan.device
    cap = dev.mem_reported_bytes if dev.mem_reported_bytes is not None else dev.mem_capacity_bytes
    return Memory(w, g, o, activation_bytes(plan), float(cap))


# ----------------------------------------------------------------------------- compute


def training_flops(model: Model, tokens: int, seq_len: int, recompute: bool = False,
                   attention: bool = True) -> float:
    """FLOPs of one training step over ``tokens`` tokens: ``(6·N + 6·L·s·d_attn) · tokens``
    (Kaplan et al., Table 1: forward ``2N + 2·L·s·d_attn`` per token, backward twice that), with
    ``8·N`` in place of ``6·N`` when every layer's forward pass is run again (full recomputation).
    ``attention=False`` leaves out the attention term: the ``6·N·D`` of scaling-law budgets."""
    per_param = 8 if recompute else 6
    d_attn = model.heads * model.head_dim
    return (per_param * model.params + (6 * model.layers * seq_len * d_attn if attention else 0)) * tokens


def compute_time_s(plan: Plan) -> float:
    """Time the matmuls take with the work spread evenly: FLOPs / (GPUs × dense BF16 peak × utilisation)."""
    peak = plan.device.peak_flops("bf16", False)
    return training_flops(plan.model, plan.tokens, plan.seq_len, plan.recompute) / (
        plan.gpus * peak * plan.utilisation)


def bubble_fraction(p: int, m: int) -> float:
    """The idle share of a pipeline step: ``(p − 1) / (m + p − 1)`` for p stages and m micro-batches
    (GPipe, Section 2; the 1F1B schedule has the same bubble, Narayanan et al. 2021, Section 2.2.1)."""
    if p < 1 or m < 1:
        raise PlanError(f"stages and micro-batches must be at least 1, got p={p}, m={m}")
    return (p - 1) / (m + p - 1)


# ----------------------------------------------------------------------- communication


def group_link(plan: Plan, size: int, stride: int):
    """The slowest link a group of ``size`` GPUs ``stride`` apart crosses: the scale-up link when the
    group fits in one node, else the scale-out link (whose ports the group's GPUs in a node share)."""
    return plan.scale_up if size * stride <= plan.gpus_per_node else plan.scale_out


def _group_time_s(plan: Plan, collective: str, size: int, stride: int, n_bytes: float) -> float:
    """A ring ``collective`` over a group of ``size`` GPUs ``stride`` apart: over the scale-up link when
    the group fits in one node, else with its network bytes shared by the ports of the group's GPUs in
    each node (``collectives.time_s_across_servers``; one GPU a node when the stride fills a node)."""
    if size * stride <= plan.gpus_per_node:
        return collectives.time_s(collective, "ring", size, n_bytes, plan.scale_up)
    per_node = max(1, min(size, plan.gpus_per_node // stride))
    while size % per_node:          # a group that does not fill its nodes evenly: the largest even share
        per_node -= 1
    return collectives.time_s_across_servers(collective, size, n_bytes, per_node, plan.scale_up, plan.scale_out)


def _bw(link) -> float:
    return link.bw_per_direction_GBps * 1e9


def _alpha(link) -> float:
    return (link.latency_us or 0.0) * 1e-6


def dp_bytes(plan: Plan) -> float:
    """BF16 gradients (and, under ZeRO-3, weights) each GPU's data-parallel group reduces: one
    stage's parameters split ``tp`` ways, 2 bytes each."""
    return GRAD_BYTES * stage_params(plan)


def dp_time_s(plan: Plan) -> float:
    """Data-parallel communication per step: a ring all-reduce of the gradients (ZeRO 0-2), or 1.5
    times its volume under ZeRO-3 (two all-gathers of the weights, one reduce-scatter)."""
    if plan.dp == 1:
        return 0.0
    n = dp_bytes(plan)
    if plan.zero < 3:
        return _group_time_s(plan, "all-reduce", plan.dp, plan.tp, n)
    return (2 * _group_time_s(plan, "all-gather", plan.dp, plan.tp, n)
            + _group_time_s(plan, "reduce-scatter", plan.dp, plan.tp, n))


def tp_message_bytes(plan: Plan) -> float:
    """One tensor-parallel all-reduce: a micro-batch's activations, ``2·s·b·h`` bytes."""
    return ACT_DTYPE_BYTES * plan.seq_len * plan.micro_batch * plan.model.hidden


def tp_time_s(plan: Plan) -> float:
    """Tensor-parallel communication per step: 4 all-reduces per layer and micro-batch (6 with
    recomputation), over the stage's layers and the m micro-batches."""
    if plan.tp == 1:
        return 0.0
    per_layer = 6 if plan.recompute else 4
    one = _group_time_s(plan, "all-reduce", plan.tp, 1, tp_message_bytes(plan))
    return per_layer * plan.stage_layers * plan.micro_batches * one


def pp_time_s(plan: Plan) -> float:
    """Pipeline point-to-point per step: each micro-batch's activations forward and gradients
    back, ``2·s·b·h / t`` bytes each (alpha-beta over the link between stages)."""
    if plan.pp == 1:
        return 0.0
    link = group_link(plan, plan.pp, plan.tp * plan.dp)
    one = _alpha(link) + tp_message_bytes(plan) / plan.tp / _bw(link)
    return 2 * plan.micro_batches * one


# --------------------------------------------------------------------------- the step


@dataclass(frozen=True)
class Step:
    """One training step's times (seconds) and what sets it."""

    compute_s: float          # the matmuls, spread evenly
    bubble_s: float           # the pipeline's idle time
    tp_s: float               # tensor-parallel all-reduces (critical path)
    pp_s: float               # pipeline sends (critical path)
    dp_s: float               # data-parallel gradients, all of it
    dp_exposed_s: float       # what of it the step waits for
    parts: list = field(default_factory=list)

    @property
    def time_s(self) -> float:
        return self.compute_s + self.bubble_s + self.tp_s + self.pp_s + self.dp_exposed_s

    @property
    def bound(self) -> str:
        """The largest part of the step: "compute", "pipeline bubble", "tensor-parallel
        communication", "pipeline communication" or "data-parallel communication"."""
        return max(self.parts, key=lambda p: p[1])[0]


def step(plan: Plan) -> Step:
    """The step time: compute, the bubble around it, TP and PP transfers in line, and the DP
    transfer hidden under the backward pass up to its length when ``overlap`` is on."""
    compute = compute_time_s(plan)
    f = bubble_fraction(plan.pp, plan.micro_batches)
    bubble = compute * f / (1 - f)          # the bubble is f of (compute + bubble)
    tp, pp, dp = tp_time_s(plan), pp_time_s(plan), dp_time_s(plan)
    exposed = max(0.0, dp - BACKWARD_SHARE * compute) if plan.overlap else dp
    parts = [("compute", compute), ("pipeline bubble", bubble), ("tensor-parallel communication", tp),
             ("pipeline communication", pp), ("data-parallel communication", exposed)]
    return Step(compute, bubble, tp, pp, dp, exposed, parts)


def mfu(plan: Plan, step_s: Optional[float] = None) -> float:
    """Model FLOPs utilisation of the whole step: the 6·N + attention FLOPs (recomputation not
    counted, as MFU is defined) over GPUs × peak × step time."""
    step_s = step(plan).time_s if step_s is None else step_s
    return training_flops(plan.model, plan.tokens, plan.seq_len) / (
        plan.gpus * plan.device.peak_flops("bf16", False) * step_s)


# ------------------------------------------------------------------------- rules of thumb


def one_f_one_b(p: int, m: int, forward: float = 1.0, backward: float = 2.0) -> list[tuple[int, str, int, float, float]]:
    """The 1F1B pipeline schedule (Narayanan et al. 2021, Section 2.2.1, Figure 4, top) as a list of
    ``(stage, "F" or "B", micro_batch, start, end)``: stage ``s`` runs ``min(p − s − 1, m)`` forward
    passes to fill the pipeline, then alternates one forward and one backward, then drains its
    backward passes. A forward needs the previous stage's forward of the same micro-batch; a backward
    needs the next stage's backward (the last stage: its own forward). Each task starts as soon as
    its stage is free and its input has arrived (sends take no time here). With the backward twice
    the forward, every stage idles ``(p − 1)·(forward + backward)`` of the step: the bubble of
    ``bubble_fraction``."""
    if p < 1 or m < 1:
        raise PlanError(f"stages and micro-batches must be at least 1, got p={p}, m={m}")
    orders = []
    for s in range(p):
        warm = min(p - s - 1, m)
        order = [("F", i) for i in range(warm)]
        f, b = warm, 0
        while b < m:
            if f < m:
                order.append(("F", f)); f += 1
            order.append(("B", b)); b += 1
        orders.append(order)
    end: dict[tuple[int, str, int], float] = {}
    free, pos, out = [0.0] * p, [0] * p, []
    while any(pos[s] < len(orders[s]) for s in range(p)):
        progressed = False
        for s in range(p):
            if pos[s] == len(orders[s]):
                continue
            kind, i = orders[s][pos[s]]
            dep = ((s - 1, "F", i) if s > 0 else None) if kind == "F" else (
                (s + 1, "B", i) if s < p - 1 else (s, "F", i))
            if dep is not None and dep not in end:
                continue
            start = max(free[s], end[dep] if dep is not None else 0.0)
            stop = start + (forward if kind == "F" else backward)
            end[(s, kind, i)] = stop
            free[s] = stop
            pos[s] += 1
            out.append((s, kind, i, start, stop))
            progressed = True
        if not progressed:  # pragma: no cover - the orders above never deadlock
            raise RuntimeError("1F1B schedule deadlocked")
    return sorted(out, key=lambda t: (t[0], t[3]))


def dp_intensity_per_token(grad_bytes: float = GRAD_BYTES) -> float:
    """FLOPs per byte sent, per token a GPU processes, of a data-parallel step on many GPUs: the
    ``6·N`` training FLOPs of each token over the ``2 · grad_bytes · N`` bytes a ring all-reduce of the
    gradients sends from each GPU (``2(p − 1)/p → 2``). 1.5 for BF16 gradients; attention FLOPs and
    a finite p raise it a little."""
    return 6 / (2 * grad_bytes)


def dp_tokens_threshold(peak_flops: float, bw_bytes_s: float, grad_bytes: float = GRAD_BYTES) -> float:
    """Tokens per GPU per step below which the gradient all-reduce takes longer than the step's
    arithmetic at ``peak_flops``: the link's ridge ``peak / β`` over ``dp_intensity_per_token``.
    ``bw_bytes_s`` is what carries each GPU's bytes: its own port, or a server's ports together."""
    return (peak_flops / bw_bytes_s) / dp_intensity_per_token(grad_bytes)


def tp_intensity(model: Model, tp: int) -> float:
    """FLOPs per byte a GPU sends in tensor parallelism, per layer and token: the layer's
    ``6 · P_layer / t`` training FLOPs over four ring all-reduces of ``2·h`` bytes of activations
    (``4 · 2(t − 1)/t · 2h``). It grows with the width (``P_layer ∝ h²``), whatever the batch."""
    if tp < 2:
        raise PlanError(f"tensor parallelism needs at least 2 GPUs, got {tp}")
    p_layer = sum(d_in * d_out for _, d_in, d_out in model.layer_matrices())
    flops = 6 * p_layer / tp
    sent = 4 * collectives.bytes_per_gpu_sent("all-reduce", "ring", tp, ACT_DTYPE_BYTES * model.hidden)
    return flops / sent


def tp_width_factor(model: Model) -> float:
    """``k`` in ``tp_intensity = k · h / (t − 1)``: ``6 · P_layer / (8 · a · h²)`` with ``a`` bytes an
    activation (four all-reduces of ``a·h`` bytes, each sent ``2(t − 1)/t`` times); about 4.5-4.9 for
    the Llama 3 models in BF16 (a layer holds about 12-13 h² weights)."""
    p_layer = sum(d_in * d_out for _, d_in, d_out in model.layer_matrices())
    return 6 * p_layer / (8 * ACT_DTYPE_BYTES * model.hidden ** 2)


def tp_max_degree(model: Model, ridge: float) -> float:
    """The tensor degree at which ``tp_intensity`` meets a link's ridge: ``1 + k · h / ridge``; above
    it the all-reduces take longer than the arithmetic at peak."""
    return 1 + tp_width_factor(model) * model.hidden / ridge
