"""The device probe's CPU figures against native code on the same machine.

    python benchmarks/device_probe_bench.py [--rounds 3] [--mib 256]

Runs the probe's worker (assets/js/device-probe-worker.js, full settings, CPU part only: the GPU
part needs a GPU) in Debian's Chromium headless on a page served on 127.0.0.1, and a native
STREAM-like program (C, `gcc -O3 -march=native`, one thread, the same array size on transparent
huge pages where the kernel allows them, the same
read/write/copy and the same 12 independent chains of multiply-adds, in GCC's 8-wide vectors:
AVX and FMA where the CPU has them) and numpy's copy. Rounds alternate wasm and native, so a machine that drifts
(ours is shared) drifts for both; each figure is the median over rounds of each run's median batch,
and of each run's fastest batch (STREAM reports the fastest). Prints both,
and wasm/native; the goal is within 2x of native for bandwidth."""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "tests" / "browser")]

NATIVE = r"""
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <sys/mman.h>
typedef float v8 __attribute__((vector_size(32)));   /* GCC vector extension: AVX where -march=native has it */
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
static int cmp(const void *a, const void *b) { double x = *(double *)a, y = *(double *)b; return (x > y) - (x < y); }
static double median(double *v, int n) { qsort(v, n, sizeof *v, cmp); return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2; }
static double best(double *v, int n) { double m = 0; for (int i = 0; i < n; i++) if (v[i] > m) m = v[i]; return m; }
volatile float sink;
int main(int argc, char **argv) {
  size_t bytes = (size_t)atol(argv[1]) << 20, n = bytes / sizeof(v8);
  v8 *a = aligned_alloc(2 << 20, bytes), *b = aligned_alloc(2 << 20, bytes);
  /* Transparent huge pages where the kernel allows them (this machine: "madvise"): on a virtual
     machine 4 KiB pages halve a one-thread stream (TLB misses under nested paging). */
  madvise(a, bytes, MADV_HUGEPAGE); madvise(b, bytes, MADV_HUGEPAGE);
  v8 one = {1, 1, 1, 1, 1, 1, 1, 1}, two = one + one;
  for (size_t i = 0; i < n; i++) { a[i] = one; b[i] = one; }
  enum { S = 7 };
  double r[S], w[S], c[S], f[S];
  for (int s = 0; s < S; s++) {
    double t = now();
    v8 s0 = {0}, s1 = {0}, s2 = {0}, s3 = {0};
    for (size_t i = 0; i < n; i += 4) { s0 += a[i]; s1 += a[i + 1]; s2 += a[i + 2]; s3 += a[i + 3]; }
    r[s] = bytes / (now() - t); s0 += s1 + s2 + s3; sink = s0[0];
    t = now(); for (size_t i = 0; i < n; i++) b[i] = two; w[s] = bytes / (now() - t); sink = b[n / 3][0];
    t = now(); for (size_t i = 0; i < n; i++) b[i] = a[i]; c[s] = 2.0 * bytes / (now() - t); sink = b[n / 5][1];
    /* 12 chains of 8 lanes of x = x * 0.999 + 0.001 (one FMA where the CPU has it): 192 FLOP a round */
    v8 m = one * 0.999f, k = one * 0.001f, x[12];
    for (int i = 0; i < 12; i++) x[i] = one * (1.0f + 0.1f * i);
    long iters = 1L << 22;
    t = now();
    for (long j = 0; j < iters; j++) {
      x[0] = x[0] * m + k; x[1] = x[1] * m + k; x[2] = x[2] * m + k; x[3] = x[3] * m + k;
      x[4] = x[4] * m + k; x[5] = x[5] * m + k; x[6] = x[6] * m + k; x[7] = x[7] * m + k;
      x[8] = x[8] * m + k; x[9] = x[9] * m + k; x[10] = x[10] * m + k; x[11] = x[11] * m + k;
    }
    f[s] = 192.0 * iters / (now() - t); v8 z = {0}; for (int i = 0; i < 12; i++) z += x[i]; sink = z[0];
  }
  printf("{\"read\": %g, \"write\": %g, \"copy\": %g, \"fma\": %g, \"read_best\": %g, \"write_best\": %g, \"copy_best\": %g, \"fma_best\": %g}\n",
         median(r, S), median(w, S), median(c, S), median(f, S), best(r, S), best(w, S), best(c, S), best(f, S));
  return 0;
}
"""

PAGE = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>probe bench</title></head><body>
<script>
const w = new Worker("assets/js/device-probe-worker.js");
w.onmessage = ({data}) => { if (data.type === "result") window.RESULT = data.result; else if (data.type === "failed") window.RESULT = {failed: data.message}; };
w.postMessage({type: "run", quick: false, gpu: false, why: "none",
  wasm: new URL("assets/wasm/cpu-probe.wasm", location.href).href, relaxed: new URL("assets/wasm/cpu-probe-relaxed.wasm", location.href).href});
</script></body></html>"""


def native_binary(folder: Path) -> Path:
    src, exe = folder / "stream.c", folder / "stream"
    src.write_text(NATIVE)
    subprocess.run(["gcc", "-O3", "-march=native", "-o", str(exe), str(src)], check=True)
    return exe


def numpy_copy(mib: int) -> float:
    import numpy as np
    a = np.ones(mib << 18, dtype=np.float32)
    b = np.empty_like(a)
    times = []
    for _ in range(7):
        t = time.perf_counter()
        np.copyto(b, a)
        times.append(time.perf_counter() - t)
    return 2 * a.nbytes / statistics.median(times)


def wasm_round(browser, url: str) -> dict:
    page = browser.new_page()
    page.goto(url)
    page.wait_for_function("window.RESULT", timeout=120_000)
    result = page.evaluate("window.RESULT")
    page.close()
    if "failed" in result:
        raise SystemExit(f"the probe failed: {result['failed']}")
    cpu = result["cpu"]
    return {**{k: cpu[k]["median"] for k in ("read", "write", "copy", "fma")},
            **{k + "_best": cpu[k]["hi"] for k in ("read", "write", "copy", "fma")}, "bytes": cpu["bytes"], "fused": cpu["fma"]["fused"],
            "elapsed": result["elapsedMs"] / 1000}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--mib", type=int, default=256, help="array size of the native run (the probe's is 256 MiB)")
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright
    from site_fixture import serve
    from webwatch import CHROMIUM, CHROMIUM_ARGS
    import shutil
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        site = tmp / "site"
        (site / "assets").mkdir(parents=True)
        shutil.copytree(ROOT / "assets" / "js", site / "assets" / "js")
        shutil.copytree(ROOT / "assets" / "wasm", site / "assets" / "wasm")
        (site / "index.html").write_text(PAGE)
        exe = native_binary(tmp)
        url, server = serve(site)
        wasm, native, npc = [], [], []
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            for i in range(args.rounds):
                wasm.append(wasm_round(browser, url + "index.html"))
                native.append(json.loads(subprocess.run([str(exe), str(args.mib)], check=True, capture_output=True, text=True).stdout))
                npc.append(numpy_copy(args.mib))
                print(f"round {i + 1}: wasm copy {wasm[-1]['copy'] / 1e9:.2f} GB/s (probe {wasm[-1]['elapsed']:.1f} s), "
                      f"native copy {native[-1]['copy'] / 1e9:.2f} GB/s, numpy copy {npc[-1] / 1e9:.2f} GB/s", flush=True)
            browser.close()
        server.shutdown()
    med = lambda rows, k: statistics.median(r[k] for r in rows)
    print(f"\nCPU, one thread, arrays of {wasm[0]['bytes'] >> 20} MiB (wasm) and {args.mib} MiB (native); "
          f"medians of {args.rounds} rounds; wasm FMA {'fused (relaxed SIMD)' if wasm[0]['fused'] else 'mul + add'}")
    print("median: each run's median batch; best: each run's fastest batch (STREAM's convention), median over rounds")
    print(f"{'figure':<12}{'wasm':>16}{'native C':>16}{'wasm/native':>13}")
    for k, unit in (("read", "GB/s"), ("write", "GB/s"), ("copy", "GB/s"), ("fma", "GFLOP/s")):
        for kind in ("", "_best"):
            a, b = med(wasm, k + kind), med(native, k + kind)
            print(f"{k + (' best' if kind else ' median'):<12}{a / 1e9:>11.2f} {unit:<4}{b / 1e9:>11.2f} {unit:<4}{a / b:>12.2f}")
    print(f"{'numpy copy':<10}{'':>14}{statistics.median(npc) / 1e9:>9.2f} GB/s{med(wasm, 'copy') / statistics.median(npc):>12.2f}")
    print(f"probe wall time (CPU part, full settings): {statistics.median(r['elapsed'] for r in wasm):.1f} s")


if __name__ == "__main__":
    main()
