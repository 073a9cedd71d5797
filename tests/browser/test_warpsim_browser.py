"""calc.sim in Pyodide in Chromium: the canonical kernels give the hardware's counts there too.

tests/calc/test_warpsim.py holds the hand counts and runs in CPython and (test_in_pyodide.py)
in Pyodide under Node; this runs the same kernels in a page of Debian's Chromium, as a reader's
browser would, and checks the same counts and an error message."""
import json
import tempfile
from pathlib import Path

import pytest

from pyodide_page import available, make_pyodide_site
from site_fixture import serve

pytestmark = pytest.mark.skipif(not available(), reason="needs node_modules/pyodide (npm ci)")

CANONICAL = """
import json
from calc import tiling
from calc.sim import Array, UninitializedRead, compile_kernel, launch
from calc.sim import kernels as sk

out = {}
for stride in (1, 2, 32):
    r = sk.run_copy(4096, stride)
    loads = [c for i, c in r.per_instruction() if i.kind == "ld"]
    out[f"copy{stride}"] = sorted({c.sectors for c in loads})
for pad in (0, 1):
    r = sk.run_transpose(64, pad)
    reads = [c for i, c in r.per_instruction() if i.kind == "ld" and i.space == "shared"]
    out[f"transpose{pad}"] = sorted({c.wavefronts for c in reads})
for name in ("interleaved", "strided", "sequential"):
    t = sk.run_reduce(name, 256, 256).totals
    out[name] = [t.divergent > 0, t.bank_conflicts]
    out[name + "_warps"] = sorted({i.warp for i in sk.run_reduce(name, 256, 256).record if i.divergent})
r = sk.run_matmul(64, 16)
out["matmul"] = [r.totals.bytes_moved, tiling.traffic_bytes(64, 64, 64, 16), r.hbm_bytes, r.totals.flops]

poisoned = compile_kernel('''from numba import cuda
import numba

@cuda.jit
def poisoned(o):
    s = cuda.shared.array(64, numba.float32)
    s[cuda.threadIdx.x] = 1.0
    cuda.syncthreads()
    o[cuda.threadIdx.x] = s[cuda.threadIdx.x + 32]
''')

try:
    launch(poisoned, 1, 32, (Array("o", 32),))
except UninitializedRead as e:
    out["error"] = [str(e), e.array, e.index]
json.dumps(out)
"""


@pytest.fixture(scope="module")
def pyodide_url():
    with tempfile.TemporaryDirectory() as tmp:
        url, server = serve(make_pyodide_site(Path(tmp)))
        yield url
        server.shutdown()


def test_canonical_kernels_count_the_same_in_chromium(web, pyodide_url):
    page = web.page
    page.goto(pyodide_url + "index.html")
    page.wait_for_function("window.ready === true", timeout=120_000)
    out = json.loads(page.evaluate("(code) => window.run(code)", CANONICAL))
    # FP32 copy: 4 sectors per coalesced load, 8 at stride 2, 32 at stride 32
    assert out["copy1"] == [4] and out["copy2"] == [8] and out["copy32"] == [32]
    # 32×32 tile read by column: 32 wavefronts unpadded, 1 with tile[32][33]
    assert out["transpose0"] == [32] and out["transpose1"] == [1]
    # Harris: interleaved diverges in every warp, the strided index conflicts, sequential neither
    # (only warp 0 diverges, below s = 32 and at the final store)
    assert out["interleaved"][0] and out["interleaved_warps"] == list(range(8))
    assert out["strided"][1] > 0 and out["sequential"][1] == 0 and out["sequential_warps"] == [0]
    moved, tiling_bytes, hbm, flops = out["matmul"]
    assert moved == tiling_bytes and hbm == 3 * 64 * 64 * 4 and flops == 2 * 64 ** 3
    message, array, index = out["error"]
    # the message names the thread and, the barrier being there, that no thread wrote the element
    # (the same text as under CPython: tests/calc/test_sim_thread.py)
    assert message.endswith("thread (0, 0, 0) of block (0, 0, 0): read of shared s[32], which no thread of this "
                            "block wrote before the barrier on line 8: the barrier is there, so the store that "
                            "should fill s[32] never ran; check its guard and its indices") and (array, index) == ("s", 32)
    assert web.errors == [] and web.outside == []
