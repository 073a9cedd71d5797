"""The canonical kernels under Nsight Compute (kernels/ncu/run_ncu.py) against the simulator.

- On any machine: the runner's plan captures each case's launches from the canonical run_*
  functions (the kernel's Python source, grid, block, inputs), and it reads Nsight Compute's CSV
  (a recorded sample of ``ncu --csv --print-units base``) into per-case counters.
- Under Numba's CUDA simulator: the runner's child launches the plan as it would under ncu (xfail
  until the canonical kernels are Numba CUDA, on the sim branch; issue #41).
- Where kernels/ncu/run_all.sh has written kernels/ncu/ncu_counts.json on a machine with an NVIDIA
  GPU: each launch's global requests and sectors, shared instructions, wavefronts and bank
  conflicts equal the simulator's for the same launch (skipped while no such file exists)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
NCU = ROOT / "kernels" / "ncu"
COUNTS = NCU / "ncu_counts.json"
sys.path.insert(0, str(NCU))

import run_ncu  # noqa: E402

COMPARED = [m for m in run_ncu.METRICS if not m.startswith("dram__")]   # DRAM: the L2 model's estimate


@pytest.fixture(scope="module")
def launches():
    return run_ncu.plan()


def test_the_plan_captures_every_cases_launches_from_the_python_sources(launches):
    assert [item["case"] for item in launches] == list(run_ncu.CASES)     # one launch each
    reduce = next(item for item in launches if item["case"] == "reduce_sequential")
    assert reduce["kernel"] == "reduce_sequential" and "def reduce_sequential" in reduce["source"]
    assert reduce["grid"] == [4] and reduce["block"] == [256]
    g_in, g_out = reduce["args"][:2]
    assert len(g_in["data"]) == 1024 and all(isinstance(v, float) for v in g_in["data"])
    assert g_out["data"] == [None] * 4                                    # never written before the launch
    json.dumps(launches)                                                  # the child reads it as JSON


def test_the_child_launches_the_plan_under_numbas_simulator(launches, tmp_path):
    pytest.importorskip("numba", reason="numba (requirements.txt, tests)")
    if not all("cuda." in item["source"] for item in launches):
        pytest.xfail("the canonical kernels are not yet Numba CUDA (the sim branch converts them; issue #41)")
    small = [item for item in launches if item["case"] in ("copy_s2", "reduce_sequential")]
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(small))
    proc = subprocess.run([sys.executable, str(NCU / "run_ncu.py"), "--launch", str(plan)], capture_output=True,
                          text=True, timeout=300, env={**os.environ, "NUMBA_ENABLE_CUDASIM": "1"})
    assert proc.returncode == 0, proc.stderr[-2000:]


def test_the_runner_reads_nsight_computes_csv_and_matches_launches_to_cases():
    head = ('"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size",'
            '"Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"')
    rows = [f'"{i}","1","python3","127.0.0.1","{k}","1","7","(256, 1, 1)","(16, 1, 1)","0","9.0",'
            f'"Command line profiler metrics","{m}","{u}","{v}"'
            for i, k, m, u, v in [
                (0, "cudapy::__main__::copy_strided[abi:v1]", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "sector", "512"),
                (0, "cudapy::__main__::copy_strided[abi:v1]", "dram__bytes_read.sum", "byte", "16,384"),
                (1, "cudapy::__main__::reduce_sequential[abi:v1]", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "sector", "1,024")]]
    text = "==PROF== Connected to process 1\n==PROF== Profiling \"copy_strided\": 0%....100% - 9 passes\n"
    got = run_ncu.parse_ncu_csv(text + "\n".join([head, *rows]) + "\n")
    assert got[0]["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"] == 512
    assert got[0]["dram__bytes_read.sum"] == 16384
    assert got[1] == {"kernel": "cudapy::__main__::reduce_sequential[abi:v1]",
                      "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": 1024}
    plan = [{"case": "copy_s1", "kernel": "copy_strided"}, {"case": "reduce_sequential", "kernel": "reduce_sequential"}]
    cases = run_ncu.cases_of(plan, got)
    assert cases["copy_s1"]["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"] == 512
    assert cases["reduce_sequential"]["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"] == 0
    with pytest.raises(SystemExit):
        run_ncu.cases_of(list(reversed(plan)), got)                      # a launch out of order is refused


def test_the_simulators_side_of_a_case():
    sim = run_ncu.simulated("copy_s32")
    assert sim["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"] == 4096 // 32
    assert sim["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"] == 4096      # one sector per lane
    assert set(sim) == set(run_ncu.METRICS)


@pytest.mark.skipif(not COUNTS.exists(), reason="no NVIDIA GPU has made kernels/ncu/ncu_counts.json yet "
                                                "(run kernels/ncu/run_all.sh on one)")
@pytest.mark.parametrize("case", list(run_ncu.CASES))
def test_nsight_computes_counters_equal_the_simulators(case):
    data = json.loads(COUNTS.read_text())
    measured = data["cases"][case]
    want = {m: v for m, v in run_ncu.simulated(case).items() if m in COMPARED}
    got = {m: measured[m] for m in want}
    assert got == want, f"{case} on {data['device']}"
