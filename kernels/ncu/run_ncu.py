"""Nsight Compute's memory counters for the canonical kernels, from their Python sources, as JSON.

    python3 kernels/ncu/run_ncu.py [--out kernels/ncu/ncu_counts.json]

Needs an NVIDIA GPU, numba-cuda and numpy, ``ncu`` (Nsight Compute) on PATH, and the right to read
the GPU's performance counters (root, or the driver's ``NVreg_RestrictProfilingToAdminUsers=0``).
Three steps, in two processes:

1. here (CPython, the book's ``calc``): each case of CASES calls its canonical ``run_*`` function,
   which launches the kernel in the book's simulator; every launch is captured (the kernel's
   Python source, grid, block, its arguments' values before the launch) into one JSON plan;
2. under ``ncu --csv --metrics METRICS``: ``run_ncu.py --launch PLAN`` (numba-cuda and numpy only,
   nothing of the book) jits each source with ``@cuda.jit`` and launches it once, in plan order;
3. here: the CSV's launches, in order, become ``{"device", "ncu", "metrics", "cases": {case: {metric:
   value}}}`` in ncu_counts.json, which tests/kernels/test_ncu.py compares with the simulator.
"""
from __future__ import annotations

import argparse
import csv
import io
import json
import math
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]

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

#: case -> (run_* function of the canonical kernels, its arguments): the simulator's sizes
CASES = {
    "copy_s1": ("run_copy", (4096, 1)),
    "copy_s2": ("run_copy", (4096, 2)),
    "copy_s32": ("run_copy", (4096, 32)),
    "transpose_pad0": ("run_transpose", (64, 0)),
    "transpose_pad1": ("run_transpose", (64, 1)),
    "reduce_interleaved": ("run_reduce", ("interleaved", 1024, 256)),
    "reduce_strided": ("run_reduce", ("strided", 1024, 256)),
    "reduce_sequential": ("run_reduce", ("sequential", 1024, 256)),
    "matmul_n64_t16": ("run_matmul", (64, 16)),
    "matmul_n64_t32": ("run_matmul", (64, 32)),
}


def canonical_module():
    """The canonical kernels: calc.sim.kernels once the simulator has its package, calc.simkernels before."""
    sys.path.insert(0, str(ROOT))
    try:
        from calc.sim import kernels
    except ImportError:
        from calc import simkernels as kernels
    return kernels


def kernel_source(kernel) -> str:
    """A canonical kernel's Python text (``.source`` where the simulator keeps it, else the function's)."""
    import inspect
    import textwrap
    text = getattr(kernel, "__sim_text__", None)   # calc.sim.lang: the text it compiled, constants in
    if isinstance(text, str):
        return text
    for attr in ("source", "__source__", "py_source"):
        if isinstance(getattr(kernel, attr, None), str):
            return getattr(kernel, attr)
    fn = getattr(kernel, "py_func", None) or getattr(kernel, "__wrapped__", None) or kernel
    return textwrap.dedent(inspect.getsource(fn))


def plan(cases=CASES) -> list:
    """Every launch the cases make, as JSON data: case, kernel name and source, grid, block, arguments."""
    kernels = canonical_module()
    out, real = [], kernels.launch
    constants = {k: v for k, v in vars(kernels).items()
                 if isinstance(v, (int, float)) and not isinstance(v, bool) and not k.startswith("_")}
    for case, (fn, args) in cases.items():
        def spy(kernel, grid, block, args=(), **kw):
            src = kernel_source(kernel)
            out.append({"case": case, "kernel": re.search(r"^def\s+(\w+)", src, re.M).group(1), "source": src,
                        "constants": constants, "grid": list(grid) if isinstance(grid, (tuple, list)) else [grid],
                        "block": list(block) if isinstance(block, (tuple, list)) else [block],
                        "args": [{"array": a.name, "dtype": a.dtype, "shape": list(a.shape),
                                  "data": [None if not isinstance(v, (int, float)) else v for v in a.data]}
                                 if hasattr(a, "data") and hasattr(a, "shape") else a for a in args]})
            return real(kernel, grid, block, args, **kw)
        kernels.launch = spy
        try:
            getattr(kernels, fn)(*args)
        finally:
            kernels.launch = real
    return out


def launch_plan(path: str) -> int:
    """Under ncu: jit and launch every launch of the plan once, in order (numba-cuda and numpy only)."""
    import numpy as np
    import numba
    from numba import cuda
    types = {"fp64": np.float64, "fp32": np.float32, "fp16": np.float16, "int32": np.int32, "int8": np.int8}
    for item in json.loads(Path(path).read_text()):
        ns = {"cuda": cuda, "numba": numba, "math": math, **item["constants"]}
        exec(compile(item["source"], f"<{item['kernel']}>", "exec"), ns)
        kernel = ns[item["kernel"]]
        if type(kernel).__name__ == "function":
            kernel = cuda.jit(kernel)
        args = []
        for a in item["args"]:
            if isinstance(a, dict):
                dt = types[a["dtype"]]
                data = [math.nan if v is None else v for v in a["data"]]
                args.append(cuda.to_device(np.array(data, dtype=dt).reshape(a["shape"])))
            else:
                args.append(a)
        kernel[tuple(item["grid"]), tuple(item["block"])](*args)
        cuda.synchronize()
    return 0


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


def cases_of(launches: list, prof: dict) -> dict:
    """ncu's launches (by ID, in order) matched to the plan's: {case: metrics} (a case of several
    launches sums them). Exits when the counts differ or a kernel name does not match."""
    ids = sorted(prof)
    if len(ids) != len(launches):
        sys.exit(f"{len(ids)} launches profiled, {len(launches)} planned")
    out: dict = {}
    for item, launch_id in zip(launches, ids):
        got = prof[launch_id]
        if item["kernel"] not in got["kernel"]:
            sys.exit(f"launch {launch_id} is {got['kernel']!r}, the plan says {item['kernel']!r}")
        case = out.setdefault(item["case"], {"kernel": item["kernel"]})
        for m in METRICS:
            case[m] = case.get(m, 0) + got.get(m, 0)
    return out


def simulated(case: str) -> dict:
    """The simulator's side of METRICS (all but DRAM) for one case (its launches summed)."""
    kernels = canonical_module()
    from calc.sim import sum_counts
    reports, real = [], kernels.launch

    def keep(*a, **kw):
        reports.append(real(*a, **kw))
        return reports[-1]
    fn, args = CASES[case]
    kernels.launch = keep
    try:
        getattr(kernels, fn)(*args)
    finally:
        kernels.launch = real
    out: dict = {}
    for r in reports:
        t = r.totals
        shared = {k: sum_counts(i for i in r.record if i.space == "shared" and i.kind == k) for k in ("ld", "st")}
        for m, v in (("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", t.global_loads),
                     ("l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", t.global_stores),
                     ("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", t.load_sectors),
                     ("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", t.store_sectors),
                     ("smsp__sass_inst_executed_op_shared_ld.sum", t.shared_loads),
                     ("smsp__sass_inst_executed_op_shared_st.sum", t.shared_stores),
                     ("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", shared["ld"].wavefronts),
                     ("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum", shared["st"].wavefronts),
                     ("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", shared["ld"].bank_conflicts),
                     ("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", shared["st"].bank_conflicts),
                     ("dram__bytes_read.sum", r.traffic.read_bytes), ("dram__bytes_write.sum", r.traffic.write_bytes)):
            out[m] = out.get(m, 0) + v
    return out


def table(path) -> str:
    """ncu_counts.json beside the simulator: one row per case and metric (DRAM: the simulator's estimate)."""
    data = json.loads(Path(path).read_text())
    rows = [f"{data['device']}, {data['ncu']}", f"{'case':<20} {'metric':<58} {'ncu':>10} {'simulator':>10}"]
    for case, measured in data["cases"].items():
        sim = simulated(case)
        for m in METRICS:
            mark = "" if measured.get(m) == sim[m] or m.startswith("dram") else "  <- differs"
            rows.append(f"{case:<20} {m:<58} {measured.get(m, 0):>10,} {sim[m]:>10,}{mark}")
    return "\n".join(rows)


def run(cmd: list, **kw) -> str:
    proc = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return proc.stdout


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(HERE / "ncu_counts.json"))
    ap.add_argument("--table", action="store_true", help="print --out beside the simulator's counts")
    ap.add_argument("--launch", metavar="PLAN", help=argparse.SUPPRESS)   # the child, under ncu
    args = ap.parse_args(argv)
    if args.launch:
        return launch_plan(args.launch)
    if args.table:
        print(table(args.out))
        return 0
    ncu = shutil.which("ncu")
    if not ncu:
        sys.exit("needs ncu (Nsight Compute) on PATH")
    launches = plan()
    with tempfile.TemporaryDirectory() as tmp:
        plan_path = Path(tmp) / "plan.json"
        plan_path.write_text(json.dumps(launches))
        text = run([ncu, "--csv", "--print-units", "base", "--metrics", ",".join(METRICS),
                    sys.executable, __file__, "--launch", str(plan_path)], timeout=1800)
    device = run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"]).strip()
    data = {"device": device, "ncu": run([ncu, "--version"]).strip().splitlines()[-1],
            "metrics": list(METRICS), "cases": cases_of(launches, parse_ncu_csv(text))}
    Path(args.out).write_text(json.dumps(data, indent=1) + "\n")
    print(f"wrote {args.out}: {len(launches)} launches on {device}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
