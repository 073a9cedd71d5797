"""calc.gpuscript: the "Run on an NVIDIA GPU" script, run here under Numba's CUDA simulator.

The kernels are tests/kernels/numba_dialect.py's hand-written Numba CUDA solutions (until the
chapters' own are in that dialect); the figures beside the counters are a real Check's of the
book's reference. Each script runs in a subprocess with NUMBA_ENABLE_CUDASIM=1 (Numba's CPU
simulator: correctness only), a few seconds each."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "kernels"))

from calc import exercises, gpuscript  # noqa: E402
from numba_dialect import COPY_WRONG, SOLUTIONS  # noqa: E402

pytest.importorskip("numba", reason="numba (requirements.txt, tests) runs the scripts under its CUDA simulator")

BOOK = {ex.id: ex for ex in exercises.read_book(str(ROOT))}


def run_script(path: Path, *args, env_extra=None) -> subprocess.CompletedProcess:
    env = {**os.environ, "NUMBA_ENABLE_CUDASIM": "1", **(env_extra or {})}
    env.pop("PYTHONPATH", None)             # nothing of the book: the script stands alone
    return subprocess.run([sys.executable, str(path), *args], capture_output=True, text=True, timeout=120,
                          cwd=path.parent, env=env)


def write(tmp_path, ex_id, code, result=None) -> Path:
    spec = exercises.spec_of(BOOK[ex_id])
    out = gpuscript.for_page(code, spec, ex_id, result, BOOK[ex_id].title)
    path = tmp_path / out["filename"]
    path.write_text(out["script"])
    return path


@pytest.mark.parametrize("ex_id", sorted(SOLUTIONS))
def test_the_script_passes_the_reference_and_prints_the_ncu_command(tmp_path, ex_id):
    ex = BOOK[ex_id]
    spec = exercises.spec_of(ex)
    checked = exercises.check_code(ex.solution, spec, ref_code=ex.solution)
    assert checked["passed"]
    path = write(tmp_path, ex_id, SOLUTIONS[ex_id], checked)
    assert path.name == f"{ex_id}.py"
    proc = run_script(path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    assert f"PASS {ex_id}" in out
    assert "ncu --metrics l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum," in out
    for metric in gpuscript.METRICS:
        assert metric in out
    assert f"python3 {path.name} --profile" in out
    # the page's figures, beside their counters
    t = checked["totals"]
    line = next(ln for ln in out.splitlines() if ln.strip().startswith("global load sectors"))
    assert line.split()[-1] == f"{t['load_sectors']:,}"
    assert f"the page's last Check, size {checked['measure']}" in out
    # --profile: one launch, nothing printed (what ncu profiles)
    prof = run_script(path, "--profile")
    assert prof.returncode == 0 and prof.stdout == "", prof.stderr


def test_a_wrong_kernel_fails_and_says_where(tmp_path):
    proc = run_script(write(tmp_path, "ex-coalesced-copy", COPY_WRONG))
    assert proc.returncode == 1
    assert "FAIL ex-coalesced-copy: size 8: B[0] is" in proc.stdout


def test_the_script_needs_nothing_of_the_book():
    spec = exercises.spec_of(BOOK["ex-gpu-reduction"])
    text = gpuscript.script(SOLUTIONS["ex-gpu-reduction"], spec, "ex-gpu-reduction")
    assert "calc" not in {ln.split()[1].split(".")[0] for ln in text.splitlines()
                          if ln.startswith(("import ", "from "))}
    assert SOLUTIONS["ex-gpu-reduction"] in text      # the reader's kernel, as written
    assert "none yet; press Check" in text            # no result: the script says where figures come from


def test_the_ncu_flag_prints_nsight_computes_counters_beside_the_pages(tmp_path):
    """--ncu runs ncu (here a stand-in on PATH printing a recorded --csv answer) and reads its CSV."""
    ex = BOOK["ex-gpu-reduction"]
    checked = exercises.check_code(ex.solution, exercises.spec_of(ex), ref_code=ex.solution)
    path = write(tmp_path, ex.id, SOLUTIONS[ex.id], checked)
    head = ('"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size",'
            '"Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"')
    rows = [f'"0","7","python3","127.0.0.1","reduce","1","7","(256, 1, 1)","(4, 1, 1)","0","9.0",'
            f'"Command line profiler metrics","{m}","","{v}"' for m, v in
            [("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "128"),
             ("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "1,100"),
             ("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum", "80")]]
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "ncu").write_text("#!/bin/sh\necho '==PROF== Connected to process 7'\ncat <<'EOF'\n"
                              + "\n".join([head, *rows]) + "\nEOF\n")
    (fake / "ncu").chmod(0o755)
    proc = run_script(path, "--ncu", env_extra={"PATH": f"{fake}:{os.environ['PATH']}"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    sectors = next(ln for ln in proc.stdout.splitlines() if ln.strip().startswith("global load sectors"))
    assert sectors.split()[-2:] == [f"{checked['totals']['load_sectors']:,}", "128"]
    shared = next(ln for ln in proc.stdout.splitlines() if ln.strip().startswith("shared wavefronts"))
    assert shared.split()[-1] == "1,180"             # ld + st, beside the page's one figure


def test_page_figures_read_a_check_a_run_and_nothing():
    where, figs = gpuscript.page_figures({"totals": {"global_loads": 3, "load_sectors": 12}, "measure": "4,096"})
    assert where == "the page's last Check, size 4,096" and figs["load_sectors"] == 12
    assert figs["hbm_read_bytes"] is None
    run = {"ok": True, "size": "33", "lines": [{"global_loads": 1, "load_sectors": 4, "wavefronts": 2},
                                              {"global_loads": 2, "load_sectors": 5}]}
    where, figs = gpuscript.page_figures(run)
    assert where == "the page's last Run, size 33" and figs["global_loads"] == 3 and figs["load_sectors"] == 9
    assert gpuscript.page_figures(None) == (None, {})
    assert gpuscript.page_figures({"stage": "mismatch", "passed": False}) == (None, {})


def test_the_kernel_is_the_jitted_function_not_a_device_helper():
    code = ("from numba import cuda\n\n@cuda.jit(device=True)\ndef helper(x):\n    return x\n\n"
            "@cuda.jit\ndef k(A):\n    A[0] = helper(1.0)\n")
    assert gpuscript.kernel_name(code) == "k"
    assert gpuscript.kernel_name("def plain(A):\n    pass\n") == "plain"
    assert gpuscript.kernel_name(code, "helper") == "helper"
    with pytest.raises(ValueError):
        gpuscript.kernel_name("x = 1\n")


def test_the_worker_answers_a_gpuscript_request():
    ex = BOOK["ex-coalesced-copy"]
    page = {"id": ex.id, "check": ex.check}
    got = json.loads(exercises.handle(json.dumps({"op": "gpuscript", "code": SOLUTIONS[ex.id], "exercise": page,
                                                  "title": ex.title, "result": None})))
    assert got["filename"] == "ex-coalesced-copy.py"
    assert got["script"].startswith("#!/usr/bin/env python3\n")
    compile(got["script"], got["filename"], "exec")
