"""The canonical kernels in CUDA (kernels/ncu/canonical.cu) against the simulator (calc.sim).

- On any machine: the CUDA kernels, run on the CPU through cuda_on_cpu.h, compute what the
  simulator's kernels compute (so the file Nsight Compute profiles is the same algorithm).
- Where kernels/ncu/run_ncu.py has written kernels/ncu/ncu_counts.json on a machine with an NVIDIA
  GPU: each launch's global requests and sectors, shared instructions, wavefronts and bank
  conflicts equal the simulator's for the same launch (skipped while no such file exists)."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
CU = ROOT / "kernels" / "ncu" / "canonical.cu"
COUNTS = ROOT / "kernels" / "ncu" / "ncu_counts.json"
sys.path.insert(0, str(ROOT))

from calc.sim import kernels as sk  # noqa: E402
from calc.sim import sum_counts  # noqa: E402

# each case of canonical.cu's main(): the same launch in the simulator
CASES = {
    "copy_s1": lambda: sk.run_copy(4096, 1),
    "copy_s2": lambda: sk.run_copy(4096, 2),
    "copy_s32": lambda: sk.run_copy(4096, 32),
    "transpose_pad0": lambda: sk.run_transpose(64, 0),
    "transpose_pad1": lambda: sk.run_transpose(64, 1),
    "reduce_interleaved": lambda: sk.run_reduce("interleaved", 1024, 256),
    "reduce_strided": lambda: sk.run_reduce("strided", 1024, 256),
    "reduce_sequential": lambda: sk.run_reduce("sequential", 1024, 256),
    "matmul_n64_t16": lambda: sk.run_matmul(64, 16),
    "matmul_n64_t32": lambda: sk.run_matmul(64, 32),
}


def simulated(report) -> dict:
    """The simulator's side of run_ncu.METRICS for one launch."""
    t = report.totals
    shared = {kind: sum_counts(i for i in report.record if i.space == "shared" and i.kind == kind)
              for kind in ("ld", "st")}
    return {
        "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum": t.global_loads,
        "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum": t.global_stores,
        "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": t.load_sectors,
        "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum": t.store_sectors,
        "smsp__sass_inst_executed_op_shared_ld.sum": t.shared_loads,
        "smsp__sass_inst_executed_op_shared_st.sum": t.shared_stores,
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum": shared["ld"].wavefronts,
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum": shared["st"].wavefronts,
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum": shared["ld"].bank_conflicts,
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum": shared["st"].bank_conflicts,
    }


def test_the_cuda_cases_are_the_simulators():
    listed = re.search(r"CASES\[\] = \{(.*?)\};", CU.read_text(), re.S)
    assert listed, "canonical.cu's CASES list moved"
    assert re.findall(r'"(\w+)"', listed.group(1)) == list(CASES)


DRIVER = r"""
#include "cuda_on_cpu.h"
#include <cstdio>
#include <vector>
#define CANONICAL_NO_MAIN
#include "canonical.cu"

static void show(const char* name, const std::vector<float>& v) {
    printf("%s", name);
    for (float x : v) printf(" %.9g", x);
    printf("\n");
}

int main() {
    {   // copy, stride 2, with a ragged grid (the guard)
        const int n = 300, stride = 2;
        std::vector<float> A(n * stride), B(n, -1.0f);
        for (int k = 0; k < n * stride; ++k) A[k] = float(k % 251);
        cuda_launch(dim3(2), dim3(256), 0, [&] { copy_strided(A.data(), B.data(), n, stride); });
        show("copy", B);
    }
    {   // transpose, unpadded and padded
        const int m = 64;
        std::vector<float> A(m * m), B0(m * m), B1(m * m);
        for (int k = 0; k < m * m; ++k) A[k] = float(k);
        cuda_launch(dim3(2, 2), dim3(TILE, TILE), 0, [&] { transpose_shared<0>(A.data(), B0.data(), m); });
        cuda_launch(dim3(2, 2), dim3(TILE, TILE), 0, [&] { transpose_shared<1>(A.data(), B1.data(), m); });
        show("transpose0", B0);
        show("transpose1", B1);
    }
    {   // the three reductions
        const int r = 1024;
        std::vector<float> in(r), o1(4), o2(4), o3(4);
        for (int k = 0; k < r; ++k) in[k] = float(k % 10);
        cuda_launch(dim3(4), dim3(RBLOCK), 0, [&] { reduce_interleaved(in.data(), o1.data()); });
        cuda_launch(dim3(4), dim3(RBLOCK), 0, [&] { reduce_strided(in.data(), o2.data()); });
        cuda_launch(dim3(4), dim3(RBLOCK), 0, [&] { reduce_sequential(in.data(), o3.data()); });
        show("reduce1", o1);
        show("reduce2", o2);
        show("reduce3", o3);
    }
    {   // the tiled matmul, T = 16
        const int m = 32;
        std::vector<float> A(m * m), B(m * m), C(m * m);
        for (int k = 0; k < m * m; ++k) { A[k] = float(k % 7) - 3.0f; B[k] = float(k % 5) - 2.0f; }
        cuda_launch(dim3(2, 2), dim3(16, 16), 0, [&] { matmul_tiled<16>(A.data(), B.data(), C.data(), m); });
        show("matmul", C);
    }
}
"""


@pytest.fixture(scope="module")
def on_cpu(tmp_path_factory):
    gxx = shutil.which("g++")
    assert gxx, "g++ is needed to run the kernels on the CPU (scripts/install.sh installs it)"
    work = tmp_path_factory.mktemp("ncu")
    (work / "driver.cpp").write_text(DRIVER)
    exe = work / "driver"
    subprocess.run([gxx, "-std=c++20", "-O1", "-pthread", f"-I{HERE}", f"-I{CU.parent}", "-o", str(exe),
                    str(work / "driver.cpp")], check=True, capture_output=True, text=True, timeout=300)
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True, timeout=300).stdout
    return {line.split()[0]: [float(x) for x in line.split()[1:]] for line in out.splitlines()}


def test_the_cuda_kernels_compute_what_the_simulators_compute(on_cpu):
    from calc.sim import Array, launch
    A = Array("A", [float(k % 251) for k in range(600)])
    B = Array("B", 300)
    launch(sk.kernel("copy_strided"), 2, 256, (A, B, 300, 2))
    assert on_cpu["copy"] == B.data
    for pad in (0, 1):
        r = sk.run_transpose(64, pad)
        assert on_cpu[f"transpose{pad}"] == r.arrays["B"].data
    g = Array("g_in", [float(k % 10) for k in range(1024)])
    for k, name in enumerate(("interleaved", "strided", "sequential"), 1):
        out = Array("g_out", 4)
        launch(sk.kernel(sk.REDUCTIONS[name]), 4, 256, (g, out))
        assert on_cpu[f"reduce{k}"] == out.data
    m = 32
    A = Array("A", [float(k % 7) - 3.0 for k in range(m * m)])
    B = Array("B", [float(k % 5) - 2.0 for k in range(m * m)])
    C = Array("C", m * m)
    launch(sk.kernel("matmul_tiled", T=16), (2, 2), (16, 16), (A, B, C, m))
    assert on_cpu["matmul"] == C.data       # small integers: exact in fp32 and in Python floats


@pytest.mark.skipif(not COUNTS.exists(), reason="no NVIDIA GPU has made kernels/ncu/ncu_counts.json yet (run kernels/ncu/run_ncu.py on one)")
@pytest.mark.parametrize("case", list(CASES))
def test_nsight_computes_counters_equal_the_simulators(case):
    data = json.loads(COUNTS.read_text())
    measured = data["cases"][case]
    want = simulated(CASES[case]())
    got = {m: measured[m] for m in want}
    assert got == want, f"{case} on {data['device']}"


def test_the_runner_reads_nsight_computes_csv():
    sys.path.insert(0, str(CU.parent))
    import run_ncu
    head = ('"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size",'
            '"Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"')
    rows = [f'"{i}","1","canonical","127.0.0.1","{k}","1","7","(256, 1, 1)","(16, 1, 1)","0","8.0",'
            f'"Command line profiler metrics","{m}","{u}","{v}"'
            for i, k, m, u, v in [(0, "copy_strided", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "sector", "512"),
                                  (0, "copy_strided", "dram__bytes_read.sum", "byte", "16,384"),
                                  (1, "copy_strided", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "sector", "1,024")]]
    text = "==PROF== Connected to process 1\n==PROF== Profiling \"copy_strided\": 0%....100% - 9 passes\n"
    got = run_ncu.parse_ncu_csv(text + "\n".join([head, *rows]) + "\n")
    assert got == {0: {"kernel": "copy_strided", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": 512,
                       "dram__bytes_read.sum": 16384},
                   1: {"kernel": "copy_strided", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": 1024}}
