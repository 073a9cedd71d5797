"""The counts every exercise reference and canonical kernel gives: recorded once, held by
``test_sim_counts.py`` (issue #41: the kernels were rewritten in Numba's CUDA dialect and must count
exactly what the old dialect counted).

``python3 tests/calc/sim_counts.py --write`` rewrites ``sim_counts.json`` (only after a change that
is meant to change a count); without ``--write`` it prints what differs from the file."""
from __future__ import annotations

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
JSON = os.path.join(HERE, "sim_counts.json")


def summary(report) -> dict:
    out = dict(report.totals.as_dict())
    tr = report.traffic
    out.update(hbm_bytes=tr.hbm_bytes, hbm_read_bytes=tr.read_bytes, hbm_write_bytes=tr.write_bytes,
               l2_read_hits=tr.l2_read_hits, l2_read_misses=tr.l2_read_misses, records=len(report.record))
    return {k: (round(v, 12) if isinstance(v, float) else v) for k, v in sorted(out.items())}


def _kernels():
    try:
        from calc.sim import kernels as k
    except ImportError:
        from calc import simkernels as k
    return k


def canonical() -> dict:
    k = _kernels()
    out = {}
    for stride in (1, 2, 4, 32):
        out[f"copy stride {stride}"] = summary(k.run_copy(4096, stride))
    out["copy fp64"] = summary(k.run_copy(1000, 1, dtype="fp64"))
    out["copy fp16 stride 3"] = summary(k.run_copy(999, 3, block=128, dtype="fp16"))
    for pad in (0, 1):
        out[f"transpose pad {pad}"] = summary(k.run_transpose(64, pad))
    for name in ("interleaved", "strided", "sequential"):
        out[f"reduce {name}"] = summary(k.run_reduce(name, 1024, 256))
    out["matmul 64/16"] = summary(k.run_matmul(64, 16))
    out["matmul 32/8"] = summary(k.run_matmul(32, 8))
    for i, r in enumerate(k.naive_attention(32, 8)):
        out[f"naive attention launch {i}"] = summary(r)
    out["flash attention"] = summary(k.run_flash_attention(64, 16, 32, 16))
    out["flash attention fp32 small"] = summary(k.run_flash_attention(32, 8, 16, 8, dtype="fp32"))
    for stride, dtype, off in ((1, "fp32", 0), (2, "fp32", 0), (1, "fp32", 1), (32, "fp32", 0), (1, "fp64", 0),
                               (1, "fp16", 3), (2, "int8", 0)):
        out[f"warp_read {stride} {dtype} {off}"] = dict(sorted(k.warp_read(stride, dtype, off).as_dict().items()))
    for stride in (1, 2, 3, 32):
        out[f"warp_shared_read {stride}"] = dict(sorted(k.warp_shared_read(stride).as_dict().items()))
    out["warp_shared_gather"] = dict(sorted(k.warp_shared_gather([(5 * i) % 64 for i in range(32)]).as_dict().items()))
    out["transpose_read_passes"] = {"0": k.transpose_read_passes(0), "1": k.transpose_read_passes(1)}
    for N, d in ((16, 8), (40, 16)):
        out[f"attention_scores_warp0 {N} {d}"] = {a: dict(sorted(c.as_dict().items()))
                                                  for a, c in sorted(k.attention_scores_warp0(N, d).items())}
    return out


def exercises() -> dict:
    from calc import exercises as E
    out = {}
    for ex in E.read_book(ROOT):
        spec = E.spec_of(ex)
        kernel, err = E.compile_reader(ex.solution, spec)
        assert err is None, (ex.id, err)
        for n in spec.sizes:
            args = E._inputs(spec, n)
            out[f"{ex.id} {n!r}"] = summary(E._launch(kernel, spec, n, args))
    return out


def record() -> dict:
    return {"canonical": canonical(), "exercises": exercises()}


if __name__ == "__main__":
    os.chdir(ROOT)
    sys.path.insert(0, ROOT)
    got = record()
    if "--write" in sys.argv:
        with open(JSON, "w") as f:
            json.dump(got, f, indent=1, sort_keys=True)
            f.write("\n")
        print(f"wrote {JSON}: {len(got['canonical'])} canonical runs, {len(got['exercises'])} exercise runs")
    else:
        want = json.load(open(JSON))
        for part in want:
            for key in sorted(set(want[part]) | set(got[part])):
                if want[part].get(key) != got[part].get(key):
                    w, g = want[part].get(key) or {}, got[part].get(key) or {}
                    diff = {f: (w.get(f), g.get(f)) for f in sorted(set(w) | set(g)) if w.get(f) != g.get(f)}
                    print(part, key, diff)
