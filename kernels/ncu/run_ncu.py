"""Nsight Compute's memory counters for the canonical kernels (kernels/ncu/canonical.cu), as JSON.

    python3 kernels/ncu/run_ncu.py [--out kernels/ncu/ncu_counts.json] [--arch native]

Needs an NVIDIA GPU, ``nvcc`` and ``ncu`` (Nsight Compute) on PATH, and the right to read the GPU's
performance counters (root, or the driver's ``NVreg_RestrictProfilingToAdminUsers=0``). Compiles
canonical.cu, profiles every launch of its main() with the METRICS below and writes
``{"device", "nvcc", "ncu", "metrics", "cases": {case: {metric: value}}}``;
tests/kernels/test_ncu.py then compares each case with calc.sim's counts for the same launch.
"""
from __future__ import annotations

import argparse
import csv
import io
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent

#: per launch: global requests and 32-byte sectors (loads, stores), shared-memory instructions,
#: wavefronts and bank conflicts (loads, stores), and DRAM bytes (recorded, not compared: the
#: hardware's L2 is not the simulator's LRU)
METRICS = (
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    "smsp__sass_inst_executed_op_shared_ld.sum",
    "smsp__sass_inst_executed_op_shared_st.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    "dram__bytes_read.sum",
    "dram__bytes_write.sum",
)


def run(cmd: list, **kw) -> str:
    proc = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return proc.stdout


def parse_ncu_csv(text: str) -> dict:
    """{launch ID: {metric: value}} from ``ncu --csv --print-units base`` output (the profiler's own
    ==PROF== lines before the header are skipped; values lose their thousands separators)."""
    lines = text.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith('"ID"'))
    out: dict = {}
    for row in csv.DictReader(io.StringIO("\n".join(lines[start:]))):
        value = row["Metric Value"].replace(",", "")
        try:
            number = int(value)
        except ValueError:
            number = float(value)
        out.setdefault(int(row["ID"]), {"kernel": row["Kernel Name"]})[row["Metric Name"]] = number
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(HERE / "ncu_counts.json"))
    ap.add_argument("--arch", default="native", help="nvcc -arch (default: the GPU of this machine)")
    args = ap.parse_args(argv)
    nvcc, ncu = shutil.which("nvcc"), shutil.which("ncu")
    if not nvcc or not ncu:
        sys.exit("needs nvcc and ncu (Nsight Compute) on PATH")
    with tempfile.TemporaryDirectory() as tmp:
        exe = str(Path(tmp) / "canonical")
        run([nvcc, "-O3", "-lineinfo", f"-arch={args.arch}", "-o", exe, str(HERE / "canonical.cu")])
        names = run([exe, "--list"]).split()
        prof = parse_ncu_csv(run([ncu, "--csv", "--print-units", "base", "--metrics", ",".join(METRICS), exe],
                                 timeout=1800))
    if len(prof) != len(names):
        sys.exit(f"{len(prof)} launches profiled, {len(names)} cases expected: {sorted(prof)}")
    device = run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"]).strip()
    data = {
        "device": device,
        "nvcc": run([nvcc, "--version"]).strip().splitlines()[-1],
        "ncu": run([ncu, "--version"]).strip().splitlines()[-1],
        "metrics": list(METRICS),
        "cases": {name: prof[launch_id] for name, launch_id in zip(names, sorted(prof))},
    }
    Path(args.out).write_text(json.dumps(data, indent=1) + "\n")
    print(f"wrote {args.out}: {len(names)} launches on {device}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
