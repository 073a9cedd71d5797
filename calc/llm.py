"""Serving a decoder-only language model: the KV cache, the memory budget, one decode step.

Units are in the names: ``*_bytes`` in bytes, ``*_tokens`` in tokens, FLOPs in FLOP.
Device capacities come from ``calc.specs`` (binary: a "80 GB" HBM is 80 GiB, JEDEC's G).

Conventions
-----------
- A multiply-add is 2 FLOPs (as in ``calc.intensity``).
- Weight-only quantisation: weights are stored in ``weight_dtype`` and widened on chip, the
  arithmetic and the activations stay in ``act_dtype`` (BF16 by default), so the compute roof
  of a decode step is the device's dense peak for ``act_dtype``.
- Traffic of one decode step: every weight byte is read once per step whatever the batch
  (the batch shares it); every sequence reads its own K and V of all earlier tokens.
- Model constants come from the model's published configuration (``Model.source``); the
  parameter count is *computed* from them, and tests compare it with the published size.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional, Sequence

from .dtypes import size_bytes
from .intensity import Cost, elementwise
from .sources import Source

# --------------------------------------------------------------------------- sources

LLAMA3_8B_CONFIG = Source(
    "meta-llama/Meta-Llama-3-8B, config.json (model card and configuration)", "Meta", 2024,
    "meta2024llama3config", where="config.json",
    url="https://huggingface.co/meta-llama/Meta-Llama-3-8B/blob/main/config.json",
)
LLAMA3_70B_CONFIG = Source(
    "meta-llama/Meta-Llama-3-70B, config.json (model card and configuration)", "Meta", 2024,
    "meta2024llama3config", where="config.json",
    url="https://huggingface.co/meta-llama/Meta-Llama-3-70B/blob/main/config.json",
)
LLAMA3_PAPER = Source(
    "The Llama 3 Herd of Models (Llama Team, AI @ Meta), arXiv:2407.21783", "Meta", 2024,
    "llama2024herd", where="Section 3.2, Table 3",
)
VLLM_PAPER = Source(
    "Efficient Memory Management for Large Language Model Serving with PagedAttention "
    "(Kwon et al., SOSP '23)", "ACM", 2023, "kwon2023vllm",
)


# ----------------------------------------------------------------------------- models


@dataclass(frozen=True)
class Model:
    """A decoder-only transformer with gated (SwiGLU) MLPs, as published in its config.

    ``hidden`` is the model width, ``heads`` the query heads, ``kv_heads`` the key/value heads
    (``heads`` for MHA, 1 for MQA, in between for GQA), ``intermediate`` the MLP width,
    ``context_tokens`` the longest sequence it was trained for.
    """

    name: str
    label: str
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    intermediate: int
    vocab: int
    context_tokens: int
    tied_embeddings: bool
    source: Source

    def __post_init__(self) -> None:
        for field in ("layers", "hidden", "heads", "kv_heads", "head_dim", "intermediate", "vocab",
                      "context_tokens"):
            value = getattr(self, field)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{self.name}: {field} must be a positive integer, got {value!r}")
        if self.heads % self.kv_heads:
            raise ValueError(f"{self.name}: {self.heads} query heads cannot be shared evenly by "
                             f"{self.kv_heads} KV heads")

    @property
    def attention_kind(self) -> str:
        """'MHA' (one KV head per query head), 'MQA' (one KV head) or 'GQA' (groups)."""
        if self.kv_heads == self.heads:
            return "MHA"
        return "MQA" if self.kv_heads == 1 else "GQA"

    @property
    def group_size(self) -> int:
        """Query heads that share one KV head: ``heads / kv_heads``."""
        return self.heads // self.kv_heads

    def with_kv_heads(self, kv_heads: int) -> "Model":
        """The same model with ``kv_heads`` KV heads (an MHA or MQA variant, for comparison)."""
        from dataclasses import replace
        kind = "MHA" if kv_heads == self.heads else "MQA" if kv_heads == 1 else f"GQA-{kv_heads}"
        return replace(self, name=f"{self.name}-{kind.lower()}", label=f"{self.label} as {kind}",
                       kv_heads=kv_heads)

    # -- parameters --------------------------------------------------------------
    def layer_matrices(self) -> list[tuple[str, int, int]]:
        """The weight matrices of one layer as (name, d_in, d_out)."""
        q_out, kv_out = self.heads * self.head_dim, self.kv_heads * self.head_dim
        return [
            ("QKV projection", self.hidden, q_out + 2 * kv_out),
            ("output projection", q_out, self.hidden),
            ("MLP gate and up", self.hidden, 2 * self.intermediate),
            ("MLP down", self.intermediate, self.hidden),
        ]

    @property
    def params(self) -> int:
        """Parameters: layers × (attention + MLP matrices + 2 norm vectors) + embeddings
        (vocab × hidden, twice unless tied) + the final norm vector."""
        per_layer = sum(d_in * d_out for _, d_in, d_out in self.layer_matrices()) + 2 * self.hidden
        embeddings = self.vocab * self.hidden * (1 if self.tied_embeddings else 2)
        return self.layers * per_layer + embeddings + self.hidden

    @property
    def matmul_params(self) -> int:
        """Weights a decode step streams through matmuls: every layer's matrices and the LM head
        (vocab × hidden). The input embedding is a table lookup (one row per token), not read whole."""
        return self.layers * sum(d_in * d_out for _, d_in, d_out in self.layer_matrices()) + self.vocab * self.hidden


MODELS: dict[str, Model] = {
    # Llama 3: GQA with 8 KV heads (Llama 3 paper, Section 3.2), head size 4096/32 = 8192/64 = 128.
    "llama3-8b": Model("llama3-8b", "Llama 3 8B", layers=32, hidden=4096, heads=32, kv_heads=8,
                       head_dim=128, intermediate=14336, vocab=128256, context_tokens=8192,
                       tied_embeddings=False, source=LLAMA3_8B_CONFIG),
    "llama3-70b": Model("llama3-70b", "Llama 3 70B", layers=80, hidden=8192, heads=64, kv_heads=8,
                        head_dim=128, intermediate=28672, vocab=128256, context_tokens=8192,
                        tied_embeddings=False, source=LLAMA3_70B_CONFIG),
    # Llama 3 405B: 126 layers, width 16,384, FFN 53,248, 128 query and 8 KV heads (Llama 3 paper,
    # Table 3); the 128,256-token vocabulary of the 8B and 70B configs; trained to 128K tokens of context.
    "llama3-405b": Model("llama3-405b", "Llama 3 405B", layers=126, hidden=16384, heads=128, kv_heads=8,
                         head_dim=128, intermediate=53248, vocab=128256, context_tokens=131072,
                         tied_embeddings=False, source=LLAMA3_PAPER.at("Table 3")),
}


def model(name: str) -> Model:
    """The ``Model`` called ``name``; ValueError listing the known ones otherwise."""
    if name not in MODELS:
        raise ValueError(f"unknown model {name!r}; known: {', '.join(MODELS)}")
    return MODELS[name]


def _count(name: str, x: int, lo: int = 0) -> int:
    if isinstance(x, bool) or not isinstance(x, int) or x < lo:
        raise ValueError(f"{name} must be an integer >= {lo}, got {x!r}")
    return x


# ---------------------------------------------------------------------------- KV cache


def kv_bytes_per_token(layers: int, kv_heads: int, head_dim: int, dtype: str = "bf16") -> float:
    """KV cache of one token: ``layers × 2 (K and V) × kv_heads × head_dim × bytes per element``."""
    _count("layers", layers, 1), _count("kv_heads", kv_heads, 1), _count("head_dim", head_dim, 1)
    return layers * 2 * kv_heads * head_dim * size_bytes(dtype)


def model_kv_bytes_per_token(m: Model, dtype: str = "bf16") -> float:
    """``kv_bytes_per_token`` with the model's layers, KV heads and head size."""
    return kv_bytes_per_token(m.layers, m.kv_heads, m.head_dim, dtype)


def kv_cache_bytes(m: Model, context_tokens: int, batch: int, dtype: str = "bf16") -> float:
    """KV cache of ``batch`` sequences of ``context_tokens`` each: batch × tokens × bytes per token."""
    _count("context_tokens", context_tokens), _count("batch", batch)
    return batch * context_tokens * model_kv_bytes_per_token(m, dtype)


# ----------------------------------------------------------------------------- weights


def weight_bytes(m: Model, dtype: str = "bf16", group_size: Optional[int] = None,
                 scale_dtype: str = "fp16") -> float:
    """Bytes of the weights: ``params × bytes per element``, plus one ``scale_dtype`` scale per
    ``group_size`` weights when the format is quantised in groups (as INT4 schemes are)."""
    total = m.params * size_bytes(dtype)
    if group_size is not None:
        _count("group_size", group_size, 1)
        total += math.ceil(m.params / group_size) * size_bytes(scale_dtype)
    return total


# ------------------------------------------------------------------------- activations


def activation_bytes(m: Model, step_tokens: int, dtype: str = "bf16", logits_dtype: str = "fp32",
                     logits_tokens: Optional[int] = None) -> float:
    """An estimate of the transient activations of one forward step over ``step_tokens`` tokens.

    The larger of (a) one layer's live tensors, ``tokens × (3·hidden + (heads + 2·kv_heads)·head_dim
    + 2·intermediate) × bytes`` (residual, normalised input, attention output; Q, K and V; the MLP's
    gate and up halves), and (b) the logits, ``logits_tokens × vocab × bytes(logits_dtype)``, where
    ``logits_tokens`` (default: all ``step_tokens``) are the tokens whose logits are computed; a
    prefill that samples only after its last token needs them for one. Layers run one
    after the other, so only one layer's tensors are live at a time; attention scores are not
    materialised (FlashAttention-style kernels).
    """
    _count("step_tokens", step_tokens)
    n_logits = step_tokens if logits_tokens is None else _count("logits_tokens", logits_tokens)
    if n_logits > step_tokens:
        raise ValueError(f"logits_tokens ({n_logits}) cannot exceed step_tokens ({step_tokens})")
    per_token_layer = (3 * m.hidden + (m.heads + 2 * m.kv_heads) * m.head_dim + 2 * m.intermediate)
    layer = step_tokens * per_token_layer * size_bytes(dtype)
    logits = n_logits * m.vocab * size_bytes(logits_dtype)
    return max(layer, logits)


# ------------------------------------------------------------------------ memory budget


@dataclass(frozen=True)
class Budget:
    """The memory a serving configuration needs, against the device's capacity (bytes)."""

    weights_bytes: float
    kv_cache_bytes: float
    activations_bytes: float
    capacity_bytes: float

    @property
    def total_bytes(self) -> float:
        return self.weights_bytes + self.kv_cache_bytes + self.activations_bytes

    @property
    def free_bytes(self) -> float:
        """Capacity left over; negative when the configuration does not fit."""
        return self.capacity_bytes - self.total_bytes

    @property
    def fits(self) -> bool:
        return self.total_bytes <= self.capacity_bytes

    @property
    def parts(self) -> list[tuple[str, float]]:
        return [("weights", self.weights_bytes), ("KV cache", self.kv_cache_bytes),
                ("activations", self.activations_bytes)]


def memory_budget(m: Model, capacity_bytes: float, context_tokens: int, batch: int,
                  weight_dtype: str = "bf16", kv_dtype: str = "bf16", act_dtype: str = "bf16",
                  step_tokens: Optional[int] = None) -> Budget:
    """Weights + KV cache (``batch`` sequences at ``context_tokens``) + activations of one step of
    ``step_tokens`` tokens (default: ``batch``, a decode step) against ``capacity_bytes``."""
    if not (capacity_bytes > 0):
        raise ValueError(f"capacity must be positive, got {capacity_bytes!r}")
    tokens = batch if step_tokens is None else step_tokens
    return Budget(weight_bytes(m, weight_dtype), kv_cache_bytes(m, context_tokens, batch, kv_dtype),
                  activation_bytes(m, tokens, act_dtype), float(capacity_bytes))


def max_batch(m: Model, capacity_bytes: float, context_tokens: int, weight_dtype: str = "bf16",
              kv_dtype: str = "bf16", act_dtype: str = "bf16", limit: int = 1 << 20) -> int:
    """The largest batch of ``context_tokens``-token sequences whose budget fits (0 if not even
    one fits). The budget grows with the batch, so a bisection finds the edge."""
    def fits(b: int) -> bool:
        return memory_budget(m, capacity_bytes, context_tokens, b, weight_dtype, kv_dtype, act_dtype).fits
    if not fits(1):
        return 0
    lo, hi = 1, 2
    while hi <= limit and fits(hi):
        lo, hi = hi, hi * 2
    if hi > limit:
        return lo
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if fits(mid) else (lo, mid)
    return lo


# ----------------------------------------------------------------------- one decode step


def weight_matmul(batch: int, d_in: int, d_out: int, weight_dtype: str = "bf16",
                  act_dtype: str = "bf16", name: str = "matmul") -> Cost:
    """A weight matrix [d_in, d_out] applied to ``batch`` tokens.

    flops = 2·batch·d_in·d_out; bytes = d_in·d_out·s_w (weights, read once for the whole batch)
    + batch·(d_in + d_out)·s_act (activations in and out).
    """
    _count("batch", batch, 1)
    return Cost(name, 2 * batch * d_in * d_out,
                d_in * d_out * size_bytes(weight_dtype) + batch * (d_in + d_out) * size_bytes(act_dtype))


def decode_attention(m: Model, batch: int, context_tokens: int, kv_dtype: str = "bf16",
                     act_dtype: str = "bf16") -> Cost:
    """Attention of one new token per sequence against its ``context_tokens`` cached tokens, one layer.

    flops = batch × heads × 4·head_dim·context (q·Kᵀ and P·V, 2 FLOPs per multiply-add each);
    bytes = batch × context × 2·kv_heads·head_dim·s_kv (each sequence reads its own K and V)
    + batch × 2·heads·head_dim·s_act (q in, output out). Intensity ≈ 2·(heads / kv_heads) / s_kv:
    the batch does not raise it, because no two sequences share a cache.
    """
    _count("batch", batch, 1), _count("context_tokens", context_tokens, 1)
    flops = batch * m.heads * 4 * m.head_dim * context_tokens
    cache = batch * context_tokens * 2 * m.kv_heads * m.head_dim * size_bytes(kv_dtype)
    qo = batch * 2 * m.heads * m.head_dim * size_bytes(act_dtype)
    return Cost("attention over the KV cache", flops, cache + qo)


#: SiLU(gate) × up: sigmoid (exp, add, divide: 3), multiply by x (1), multiply by up (1)
SWIGLU_FLOPS_PER_ELEM = 5
#: RMSNorm: square and sum (2), scale by 1/rms (1), multiply by γ (1)
RMSNORM_FLOPS_PER_ELEM = 4


def decode_step(m: Model, batch: int, context_tokens: int, weight_dtype: str = "bf16",
                kv_dtype: str = "bf16", act_dtype: str = "bf16") -> list[Cost]:
    """The operations of one decode step (one new token for each of ``batch`` sequences), each
    summed over all layers: the four weight matmuls of a layer, attention over the cache, the
    small elementwise operations (two RMSNorms, SwiGLU, two residual adds), and the LM head."""
    L, h, s_a = m.layers, m.hidden, act_dtype
    ops = [weight_matmul(batch, d_in, d_out, weight_dtype, act_dtype, name).scaled(L)
           for name, d_in, d_out in m.layer_matrices()]
    ops.insert(1, decode_attention(m, batch, context_tokens, kv_dtype, act_dtype).scaled(L))
    norms = elementwise(2 * batch * h, s_a, RMSNORM_FLOPS_PER_ELEM, inputs=1, outputs=1)
    swiglu = elementwise(batch * m.intermediate, s_a, SWIGLU_FLOPS_PER_ELEM, inputs=2, outputs=1)
    residual = elementwise(2 * batch * h, s_a, 1, inputs=2, outputs=1)
    small = norms + swiglu + residual
    ops.insert(-1, Cost("norms, SwiGLU, residual adds", small.flops, small.bytes_).scaled(L))
    ops.append(weight_matmul(batch, h, m.vocab, weight_dtype, act_dtype, "LM head"))
    return ops


def total(costs: Sequence[Cost], name: str = "decode step") -> Cost:
    """The sum of several costs, as one."""
    return Cost(name, sum(c.flops for c in costs), sum(c.bytes_ for c in costs))


def step_weight_bytes(m: Model, weight_dtype: str = "bf16") -> float:
    """Weight bytes one decode step reads: ``matmul_params × bytes per element``."""
    return m.matmul_params * size_bytes(weight_dtype)


def decode_step_bytes_split(m: Model, batch: int, context_tokens: int, weight_dtype: str = "bf16",
                            kv_dtype: str = "bf16") -> tuple[float, float]:
    """(weight bytes, KV cache bytes) one decode step reads: the matrices once, every sequence's cache."""
    return step_weight_bytes(m, weight_dtype), kv_cache_bytes(m, context_tokens, batch, kv_dtype)


def kv_dominance_batch(m: Model, context_tokens: int, weight_dtype: str = "bf16",
                       kv_dtype: str = "bf16") -> float:
    """The batch at which the KV cache a decode step reads equals the weight bytes it reads:
    ``step_weight_bytes / (context × KV bytes per token)``. Beyond it the cache is most of the traffic."""
    _count("context_tokens", context_tokens, 1)
    return step_weight_bytes(m, weight_dtype) / (context_tokens * model_kv_bytes_per_token(m, kv_dtype))


def decode_intensity_limit(m: Model, context_tokens: int, kv_dtype: str = "bf16") -> float:
    """The decode step's intensity as the batch grows without bound: the weights are shared by so
    many sequences that only each sequence's own traffic is left, its KV cache, against its FLOPs:
    ``(2·matmul_params + 4·layers·heads·head_dim·context) / (context × KV bytes per token)``.
    The weights' format does not enter: their share of the bytes goes to zero."""
    _count("context_tokens", context_tokens, 1)
    flops = 2 * m.matmul_params + 4 * m.layers * m.heads * m.head_dim * context_tokens
    return flops / (context_tokens * model_kv_bytes_per_token(m, kv_dtype))


def decode_time_lower_bound(costs: Sequence[Cost], peak_flops: float, bw: float) -> float:
    """Sum over operations of ``max(flops / peak, bytes / bw)``: each kernel bound by its own roof."""
    from .roofline import time_lower_bound
    return sum(time_lower_bound(c.flops, c.bytes_, peak_flops, bw) for c in costs)


# --------------------------------------------------------------------- paged allocation

#: Kwon et al., Figure 2: the share of KV cache memory holding token states, averaged over their
#: experiment (Section 6.2), in Orca reserving the maximum length or (an oracle) the exact length, and in vLLM.
VLLM_TOKEN_STATE_SHARE = {"Orca (Max)": 0.204, "Orca (Oracle)": 0.382, "vLLM": 0.963}
VLLM_TOKEN_STATE_SOURCE = VLLM_PAPER.at("Figure 2 and Section 1")
#: vLLM's default KV block: 16 tokens (Kwon et al., Section 7.2). The best block sizes depend on the
#: trace: on ShareGPT sizes from 16 to 128 performed best; on Alpaca, whose sequences are shorter,
#: 16 and 32 worked well and larger blocks degraded performance. 16 is large enough to use the GPU
#: efficiently and small enough to avoid significant internal fragmentation in most workloads.
VLLM_BLOCK_TOKENS = 16
VLLM_BEST_BLOCK_TOKENS = {"ShareGPT": (16, 128), "Alpaca": (16, 32)}
VLLM_BLOCK_SIZE_SOURCE = VLLM_PAPER.at("Section 7.2, 'Impact of Block Size'")

#: Kwon et al.'s worked example (Section 3): OPT-13B, multi-head attention, FP16, 2,048-token requests.
OPT_13B = {"layers": 40, "hidden": 5120, "heads": 40, "head_dim": 128, "max_tokens": 2048}
OPT_13B_SOURCE = VLLM_PAPER.at("Section 3, 'Large KV cache'")


@dataclass(frozen=True)
class Allocation:
    """Token slots a KV allocator holds for a set of sequences, and how many of them hold tokens."""

    used_tokens: int
    allocated_tokens: int

    @property
    def waste_fraction(self) -> float:
        """Slots held but not holding a token, as a fraction of the slots held."""
        return 1 - self.used_tokens / self.allocated_tokens if self.allocated_tokens else 0.0

    @property
    def utilisation(self) -> float:
        return 1 - self.waste_fraction


def contiguous_allocation(lengths_tokens: Sequence[int], max_tokens: int) -> Allocation:
    """Each sequence reserves one contiguous slab of ``max_tokens`` slots up front (it cannot know
    its final length): used = Σ lengths, allocated = n × max_tokens."""
    _count("max_tokens", max_tokens, 1)
    for n in lengths_tokens:
        _count("sequence length", n)
        if n > max_tokens:
            raise ValueError(f"a sequence of {n} tokens exceeds the reservation of {max_tokens}")
    return Allocation(sum(lengths_tokens), len(lengths_tokens) * max_tokens)


def paged_allocation(lengths_tokens: Sequence[int], block_tokens: int = 16) -> Allocation:
    """Blocks of ``block_tokens`` slots handed out as a sequence grows (PagedAttention):
    allocated = Σ ceil(length / block) × block, so each sequence wastes less than one block."""
    _count("block_tokens", block_tokens, 1)
    for n in lengths_tokens:
        _count("sequence length", n)
    return Allocation(sum(lengths_tokens),
                      sum(math.ceil(n / block_tokens) * block_tokens for n in lengths_tokens))


# ------------------------------------------------------------------ batching schedules


@dataclass(frozen=True)
class Schedule:
    """Where and when each request of a batching policy runs: ``runs[i] = (slot, first step,
    steps)`` for request ``i`` (one token per step), and the steps the whole queue takes."""

    policy: str
    slots: int
    runs: tuple[tuple[int, int, int], ...]
    steps: int

    @property
    def utilisation(self) -> float:
        """Slot-steps that produce a token, as a fraction of all ``slots × steps``."""
        return sum(n for _, _, n in self.runs) / (self.slots * self.steps) if self.steps else 0.0


def _queue(lengths_tokens: Sequence[int], slots: int) -> None:
    _count("slots", slots, 1)
    for n in lengths_tokens:
        _count("tokens to generate", n, 1)


def static_batching(lengths_tokens: Sequence[int], slots: int) -> Schedule:
    """A queue of requests (all waiting at step 0, ``lengths_tokens`` new tokens each) served in
    fixed batches of ``slots``: a batch runs until its longest member finishes, then the next starts."""
    _queue(lengths_tokens, slots)
    runs, start = [], 0
    for first in range(0, len(lengths_tokens), slots):
        group = lengths_tokens[first:first + slots]
        runs += [(k, start, n) for k, n in enumerate(group)]
        start += max(group)
    return Schedule("static", slots, tuple(runs), start)


def continuous_batching(lengths_tokens: Sequence[int], slots: int) -> Schedule:
    """The same queue with iteration-level scheduling (Orca's continuous batching): after every
    step, a slot whose request finished takes the next waiting request."""
    _queue(lengths_tokens, slots)
    free_at = [0] * slots
    runs = []
    for n in lengths_tokens:
        k = min(range(slots), key=lambda s: (free_at[s], s))
        runs.append((k, free_at[k], n))
        free_at[k] += n
    return Schedule("continuous", slots, tuple(runs), max(free_at) if runs else 0)


def block_tables(lengths_tokens: Sequence[int], block_tokens: int = 16) -> list[list[int]]:
    """The block table of each sequence when all grow together, one token per step, and a
    sequence takes the lowest free physical block whenever its last block is full (PagedAttention).
    ``tables[i][j]`` is the physical block that holds logical block ``j`` of sequence ``i``."""
    _count("block_tokens", block_tokens, 1)
    for n in lengths_tokens:
        _count("sequence length", n)
    tables: list[list[int]] = [[] for _ in lengths_tokens]
    taken = 0
    for t in range(max(lengths_tokens, default=0)):
        for i, n in enumerate(lengths_tokens):
            if t < n and t % block_tokens == 0:
                tables[i].append(taken)
                taken += 1
    return tables


# --------------------------------------------------------------------- published training runs


@dataclass(frozen=True)
class TrainingRun:
    """One published training configuration: the parallel degrees, the batch and what it achieved.

    ``tp · cp · pp · dp = gpus``; ``batch_per_dp`` sequences of ``seq_len`` tokens per data-parallel
    group per step, ``tokens_per_batch`` in all; ``tflops_per_gpu`` and ``mfu`` as reported."""

    model: str
    gpus: int
    tp: int
    cp: int
    pp: int
    dp: int
    seq_len: int
    batch_per_dp: int
    tflops_per_gpu: float
    mfu: float
    source: Source
    note: str = ""

    @property
    def tokens_per_batch(self) -> int:
        return self.dp * self.batch_per_dp * self.seq_len


LLAMA3_TABLE4 = LLAMA3_PAPER.at("Section 3.3.2, Table 4")
#: Llama 3 405B's pre-training configurations on H100 GPUs (Llama 3 paper, Table 4).
LLAMA3_405B_RUNS = (
    TrainingRun("llama3-405b", 8192, 8, 1, 16, 64, 8192, 32, 430, 0.43, LLAMA3_TABLE4),
    TrainingRun("llama3-405b", 16384, 8, 1, 16, 128, 8192, 16, 400, 0.41, LLAMA3_TABLE4),
    # The paper prints DP = 4 in this row, which matches neither its own GPUs (8 × 16 × 16 × 4 = 8,192, not
    # 16,384) nor its 16M tokens a batch (4 × 16 × 131,072 = 8.4M); both give 8, stored here.
    TrainingRun("llama3-405b", 16384, 8, 16, 16, 8, 131072, 16, 380, 0.38, LLAMA3_TABLE4,
                "the paper prints DP 4; its GPUs and its 16M tokens a batch both give 8"),
)
