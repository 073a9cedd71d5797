"""The converted kernels count what the old dialect counted (issue #41): every field of the Report
summary of each exercise reference at each check size and of each canonical kernel run, held to
``sim_counts.json`` (written by ``sim_counts.py`` before the conversion).

The file was rewritten once, at the conversion, for the runs whose old kernels did floating-point
arithmetic with Python's own operators, which the old dialect did not count and Numba's dialect
does (``+ - * /`` on floats always count now): Harris's three reductions (``sdata[tid] +
sdata[tid + s]``: 1,020 FLOPs where the old kernel counted 0), the canonical FlashAttention (its
log-sum-exp ``m + math.log(ell)``: one FLOP per row), and the attention-softmax, FlashAttention and
GQA exercises (``1 / l``, ``1 / math.sqrt(d)``, ``m + math.log(l)``). Only ``flops`` and the
instruction and lane counts that follow from the added FLOP instructions changed; every memory
count (requests, sectors, wavefronts, HBM bytes) is as before."""
import json
import os

import pytest

import sim_counts  # noqa: E402  (tests/calc is on the path under pytest's rootdir conftest)

HERE = os.path.dirname(os.path.abspath(__file__))
WANT = json.load(open(os.path.join(HERE, "sim_counts.json")))


def test_every_canonical_kernel_counts_as_recorded():
    got = sim_counts.canonical()
    assert sorted(got) == sorted(WANT["canonical"])
    for key, want in WANT["canonical"].items():
        assert got[key] == want, key


@pytest.mark.skipif(not os.path.isdir(os.path.join(sim_counts.ROOT, "chapters")),
                    reason="the chapters are not here (the Pyodide run copies calc/ and tests/calc/ only)")
def test_every_exercise_reference_counts_as_recorded_at_every_size():
    got = sim_counts.exercises()
    assert sorted(got) == sorted(WANT["exercises"])
    bad = {k: {f: (w, got[k].get(f)) for f, w in want.items() if got[k].get(f) != w}
           for k, want in WANT["exercises"].items() if got[k] != want}
    assert not bad, bad
