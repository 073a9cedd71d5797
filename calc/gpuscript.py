"""An exercise as one self-contained Python script for a real NVIDIA GPU (issue #41).

The exercise page's "Run on an NVIDIA GPU" button asks the exercises' worker for it
(``calc.exercises.handle``, op ``"gpuscript"``) and saves it as a file; nothing leaves the page.
The script holds

* the reader's kernel text, as it is in the editor (Numba CUDA Python: ``@cuda.jit``,
  ``cuda.threadIdx.x``, ``cuda.shared.array``, ``cuda.syncthreads()``);
* the exercise's inputs and expected outputs at two sizes (the check's ``run`` size and its
  ``measure`` size), made here by the check's own ``inputs`` and ``expected`` and written in as
  data, so the script needs neither this book nor its simulator;
* the launch shape of each size, and the check's tolerance;
* the Nsight Compute command whose counters are the ones the page showed, with the page's
  figures (the last Check's or Run's) beside each.

It needs ``numpy`` and Numba's CUDA target (``pip install numba-cuda numpy``); under
``NUMBA_ENABLE_CUDASIM=1`` it runs on the CPU (Numba's simulator: slow, and no counters).

    python3 ex-gpu-reduction.py               # correctness at both sizes: PASS or FAIL
    python3 ex-gpu-reduction.py --profile     # one launch at the figures' size (what ncu profiles)
    python3 ex-gpu-reduction.py --ncu         # runs ncu itself and prints its counters beside the page's

Standard library only; runs in CPython and in Pyodide.
"""
from __future__ import annotations

import json
import re

#: (what, Nsight Compute metrics summed, the page's figure: a key of a Check's ``totals``)
COUNTERS = (
    ("global load requests", ("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",), "global_loads"),
    ("global store requests", ("l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",), "global_stores"),
    ("global load sectors", ("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",), "load_sectors"),
    ("global store sectors", ("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",), "store_sectors"),
    ("shared wavefronts (loads + stores)", ("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
                                            "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"), "wavefronts"),
    ("shared bank conflicts (loads + stores)", ("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
                                                "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"),
     "bank_conflicts"),
    ("DRAM bytes read (the page's: an estimate, its L2 model)", ("dram__bytes_read.sum",), "hbm_read_bytes"),
    ("DRAM bytes written (the page's: an estimate)", ("dram__bytes_write.sum",), "hbm_write_bytes"),
)
METRICS = tuple(m for _, ms, _ in COUNTERS for m in ms)

#: the simulator's element types -> numpy's (bf16 has no numpy type: float32 there, and the script says so)
NUMPY_DTYPES = {"fp64": "float64", "fp32": "float32", "fp16": "float16", "bf16": "float32",
                "int8": "int8", "int32": "int32"}

_SUM_FIELDS = ("global_loads", "global_stores", "load_sectors", "store_sectors", "wavefronts", "bank_conflicts")


def page_figures(result) -> tuple:
    """(where the figures are from, {figure: value}) of the page's last Check or Run result.

    A Check that got to its budgets has ``totals`` (at its ``measure`` size); a Run has only
    per-line rows (summed here; no HBM split, so the DRAM rows stay empty); anything else
    (no result, a compile error, a mismatch) gives ``(None, {})``."""
    if not isinstance(result, dict):
        return None, {}
    totals = result.get("totals")
    if isinstance(totals, dict) and totals:
        return f"the page's last Check, size {result.get('measure', '?')}", {
            k: totals.get(k) for _, _, k in COUNTERS}
    lines = result.get("lines")
    if result.get("ok") and isinstance(lines, list) and lines:
        figs = {k: sum(int(row.get(k) or 0) for row in lines) for k in _SUM_FIELDS}
        return f"the page's last Run, size {result.get('size', '?')}", figs
    return None, {}


def ncu_command(filename: str, kernel: str) -> str:
    """The Nsight Compute command line that profiles the script's one ``--profile`` launch."""
    return (f"ncu --metrics {','.join(METRICS)} --kernel-name regex:{kernel} --launch-count 1 "
            f"python3 {filename} --profile")


def filename_for(exercise_id: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", exercise_id) + ".py"


def _plain(v):
    """A check's value as JSON data (an Array is described, not copied by reference)."""
    if hasattr(v, "data") and hasattr(v, "shape") and hasattr(v, "name"):
        data = list(v.data)
        written = all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in data)
        return {"array": v.name, "dtype": v.dtype, "shape": list(v.shape),
                "data": [float(x) if v.dtype.startswith(("fp", "bf")) else int(x) for x in data]
                if written else None}
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ValueError(f"a kernel argument of type {type(v).__name__} cannot go into the script")
    return v


def _dims(d) -> list:
    return list(d) if isinstance(d, (tuple, list)) else [d]


def cases(spec, sizes) -> list:
    """Per size: its inputs, launch and expected outputs, as JSON data (the check's functions run here)."""
    from .exercises import _fmt_size, _inputs
    out = []
    for n in sizes:
        args = _inputs(spec, n)
        want = spec.expected(n, *args)
        grid, block = spec.launch_shape(n)
        out.append({"size": _fmt_size(n), "grid": _dims(grid), "block": _dims(block),
                    "args": [_plain(a) for a in args],
                    "expected": {k: [float(x) if isinstance(x, float) else x for x in v] for k, v in want.items()}})
    return out


def _literal(text: str) -> str:
    """``text`` as a readable Python literal: a raw triple-quoted string where it can be one."""
    if "'''" not in text and not text.endswith("\\"):
        return "r'''" + text + "'''"
    return repr(text)


def kernel_name(code: str, named=None) -> str:
    """The kernel the script launches: the check's ``kernel`` when it names one, else the first
    function decorated ``@cuda.jit`` (not ``device=True``), else the first function."""
    if named:
        return named
    jitted, plain = [], []
    for m in re.finditer(r"^((?:@[^\n]*\n)*)def\s+([A-Za-z_]\w*)", code, re.M):
        decorators, name = m.group(1), m.group(2)
        (jitted if "jit" in decorators and "device=True" not in decorators.replace(" ", "") else plain).append(name)
    if jitted or plain:
        return (jitted or plain)[0]
    raise ValueError("the kernel text defines no function")


def script(code: str, spec, exercise_id: str, result=None, title: str = "") -> str:
    """The script's text for the reader's ``code`` under the check ``spec`` (``calc.exercises.Spec``),
    with the figures of the page's last ``result`` beside the counters."""
    sizes = [spec.run] if spec.run == spec.measure else [spec.run, spec.measure]
    where, figs = page_figures(result)
    from .exercises import _fmt_size
    profile = (result.get("size") if where and "Run" in where else _fmt_size(spec.measure))
    name = kernel_name(code, spec.kernel)
    fname = filename_for(exercise_id)
    data = {"exercise": exercise_id, "title": title, "kernel": name, "tolerance": spec.tolerance,
            "profile": profile, "figures_from": where, "cases": cases(spec, sizes),
            "counters": [[what, list(ms), figs.get(key)] for what, ms, key in COUNTERS]}
    return _TEMPLATE.format(
        doc=f"{exercise_id}{': ' + title if title else ''}, on an NVIDIA GPU",
        fname=fname, sizes=", ".join(c["size"] for c in data["cases"]), profile=profile,
        ncu=ncu_command(fname, name), kernel=_literal(code.rstrip() + "\n"),
        data=json.dumps(data, separators=(",", ":"), allow_nan=True))


def for_page(code: str, spec, exercise_id: str, result=None, title: str = "") -> dict:
    """What the page saves: ``{"filename", "script"}`` (``{"error"}`` when the check's data cannot go in)."""
    try:
        return {"filename": filename_for(exercise_id), "script": script(code, spec, exercise_id, result, title)}
    except ValueError as e:
        return {"error": str(e)}


_TEMPLATE = '''\
#!/usr/bin/env python3
"""{doc}.

Made by the exercise's page ("Run on an NVIDIA GPU") from the kernel in its editor; it needs
numpy and Numba's CUDA target (pip install numba-cuda numpy) and nothing of the book.

    python3 {fname}             check the kernel at sizes {sizes}: PASS or FAIL
    python3 {fname} --profile   one launch at size {profile}, the one Nsight Compute profiles:
    {ncu}
    python3 {fname} --ncu       runs that command and prints its counters beside the page's

NUMBA_ENABLE_CUDASIM=1 runs it on the CPU with Numba's simulator (slow, and no counters).
"""
import argparse
import csv
import io
import json
import math
import os
import shutil
import subprocess
import sys

import numpy as np
from numba import cuda

# ---------------------------------------------------------------- your kernel, as in the page
KERNEL = {kernel}

# ---------------------------------------------------------------- the check's data (made by the page)
DATA = json.loads(r\'\'\'{data}\'\'\')

NUMPY_DTYPES = {{"fp64": np.float64, "fp32": np.float32, "fp16": np.float16, "bf16": np.float32,
                "int8": np.int8, "int32": np.int32}}
NCU = {ncu!r}


def load_kernel():
    """Run the kernel text; jit what it left undecorated (the kernel, and its helpers as device functions)."""
    ns = {{"__name__": "kernel"}}
    exec(compile(KERNEL, "<your kernel>", "exec"), ns)
    src_defs = [line.split("def ", 1)[1].split("(", 1)[0].strip()
                for line in KERNEL.splitlines() if line.startswith("def ")]
    for fn in src_defs:
        f = ns[fn]
        if callable(f) and type(f).__name__ == "function":
            ns[fn] = cuda.jit(f) if fn == DATA["kernel"] else cuda.jit(device=True)(f)
    return ns[DATA["kernel"]]


def host_args(case):
    """The kernel's arguments: numpy arrays for the Arrays (never-written ones NaN or 0), scalars as they are."""
    arrays, args = {{}}, []
    for a in case["args"]:
        if isinstance(a, dict):
            dt = NUMPY_DTYPES[a["dtype"]]
            if a["data"] is None:
                fill = np.nan if np.issubdtype(dt, np.floating) else 0
                host = np.full(a["shape"], fill, dtype=dt)
            else:
                host = np.array(a["data"], dtype=dt).reshape(a["shape"])
            arrays[a["array"]] = host
            args.append(host)
        else:
            args.append(a)
    return arrays, args


def launch(kernel, case):
    """One launch of ``case``; its arrays, copied back, by name."""
    arrays, args = host_args(case)
    dev = [cuda.to_device(a) if isinstance(a, np.ndarray) else a for a in args]
    kernel[tuple(case["grid"]), tuple(case["block"])](*dev)
    cuda.synchronize()
    on_device = [d for a, d in zip(args, dev) if isinstance(a, np.ndarray)]
    return {{name: d.copy_to_host().reshape(-1) for name, d in zip(arrays, on_device)}}


def compare(case, got):
    """None, or the first element outside the check's tolerance (as the page says it)."""
    tol = DATA["tolerance"]
    for name, want in case["expected"].items():
        w = np.array(want, dtype=np.float64)
        g = got[name].astype(np.float64)
        ok = np.abs(g - w) <= tol * np.maximum(1.0, np.abs(w))
        ok |= np.isnan(w) & np.isnan(g)
        if not ok.all():
            k = int(np.argmin(ok))
            said = "was never written" if np.isnan(g[k]) and not np.isnan(w[k]) else f"is {{g[k]:.7g}}"
            return f"size {{case['size']}}: {{name}}[{{k}}] {{said}}, expected {{w[k]:.7g}}"
    return None


def check(kernel):
    for case in DATA["cases"]:
        bad = compare(case, launch(kernel, case))
        if bad:
            print(f"FAIL {{DATA['exercise']}}: {{bad}}")
            return 1
        print(f"size {{case['size']}}: correct (grid {{tuple(case['grid'])}}, block {{tuple(case['block'])}})")
    print(f"PASS {{DATA['exercise']}}: correct at sizes {{', '.join(c['size'] for c in DATA['cases'])}}")
    return 0


def profile_case():
    return next(c for c in DATA["cases"] if c["size"] == DATA["profile"])


def table(measured=None):
    """The counters: Nsight Compute's metrics, the page's figures beside them (and ncu's, when run)."""
    print(f"Nsight Compute, one launch at size {{DATA['profile']}} (the page's figures: "
          f"{{DATA['figures_from'] or 'none yet; press Check on the page, then download again'}}):")
    print(f"  {{NCU}}")
    head = ("counter", "page", "ncu" if measured is not None else "")
    rows = []
    for what, metrics, page in DATA["counters"]:
        got = "" if measured is None else _fmt(sum(measured.get(m, 0) for m in metrics))
        rows.append((what, _fmt(page), got, " + ".join(metrics)))
    w = [max(len(r[k]) for r in rows + [head]) for k in range(3)]
    print(f"  {{head[0].ljust(w[0])}}  {{head[1].rjust(w[1])}}  {{head[2].rjust(w[2])}}")
    for what, page, got, metrics in rows:
        print(f"  {{what.ljust(w[0])}}  {{page.rjust(w[1])}}  {{got.rjust(w[2])}}")
        print(f"      {{metrics}}")
    print("  The page counts no L1 hits on loads (a sector asked for is a sector moved), and its DRAM bytes "
          "come from a model of the L2, not the hardware's policy.")


def _fmt(v):
    if v is None:
        return "-"
    return f"{{v:,.0f}}" if float(v).is_integer() else f"{{v:,.3g}}"


def run_ncu():
    """Profile --profile under ncu (--csv) and read its metrics."""
    exe = shutil.which("ncu")
    if not exe:
        sys.exit("ncu (Nsight Compute) is not on PATH; the command is:\\n  " + NCU)
    cmd = [exe, "--csv", "--print-units", "base", *NCU.split()[1:]]
    cmd[cmd.index("python3")] = sys.executable
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"ncu failed ({{proc.returncode}}):\\n{{proc.stdout[-2000:]}}\\n{{proc.stderr[-2000:]}}")
    lines = proc.stdout.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith('"ID"'))
    values = {{}}
    for row in csv.DictReader(io.StringIO("\\n".join(lines[start:]))):
        values[row["Metric Name"]] = float(row["Metric Value"].replace(",", ""))
    return values


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profile", action="store_true", help="one launch at the figures' size, for ncu")
    ap.add_argument("--ncu", action="store_true", help="run ncu on --profile and print the comparison")
    a = ap.parse_args()
    if a.ncu:
        table(run_ncu())
        return 0
    kernel = load_kernel()
    if a.profile:
        launch(kernel, profile_case())
        return 0
    status = check(kernel)
    if any(x["dtype"] == "bf16" for c in DATA["cases"] for x in c["args"] if isinstance(x, dict)):
        print("(bf16 arrays run as float32 here: numpy has no bf16)")
    print()
    table()
    if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
        print("(run under NUMBA_ENABLE_CUDASIM=1: Numba's CPU simulator checks correctness and counts nothing)")
    return status


if __name__ == "__main__":
    sys.exit(main())
'''
