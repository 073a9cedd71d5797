"""Kernel 4 as the book prints it (kernels/attention_flash.cu), run on the CPU with a small CUDA
emulation (cuda_on_cpu.h) and compared with attention computed in double precision."""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
KERNEL = HERE.parents[1] / "kernels" / "attention_flash.cu"


def kernel_part(source: str) -> str:
    """The kernel template without the host launcher, its dynamic shared memory pointed at the
    emulation's buffer."""
    kernel = source[:source.index("// Host side")].replace("#include <cuda_fp16.h>", "")
    decl = "extern __shared__ unsigned char smem[];"
    assert decl in kernel, "the kernel's dynamic shared memory declaration changed"
    return kernel.replace(decl, "unsigned char* smem = cuda_dynamic_smem;")


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    gxx = shutil.which("g++")
    assert gxx, "g++ is needed to run the kernel on the CPU (scripts/install.sh installs it)"
    work = tmp_path_factory.mktemp("flash")
    (work / "flash_kernel.inc").write_text(kernel_part(KERNEL.read_text()))
    exe = work / "check_flash"
    subprocess.run([gxx, "-std=c++20", "-O2", "-pthread", f"-I{HERE}", f"-I{work}", str(HERE / "check_flash.cpp"),
                    "-o", str(exe)], check=True, capture_output=True, text=True, timeout=300)
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True, timeout=300).stdout
    return {int(n): (float(o), float(l)) for n, o, l in (line.split() for line in out.splitlines())}


def test_the_launcher_sizes_are_the_ones_checked():
    text = (HERE / "check_flash.cpp").read_text()
    sizes = re.search(r"constexpr int D = (\d+), BR = (\d+), BC = (\d+)", KERNEL.read_text()).groups()
    assert f"constexpr int D = {sizes[0]}, BR = {sizes[1]}, BC = {sizes[2]}" in text


def test_flash_kernel_computes_attention_and_its_log_sum_exp(results):
    # N below, at and above one key block (64) and one query block (128), and a ragged last block.
    assert sorted(results) == [1, 63, 64, 65, 129, 300]
    for n, (o_err, lse_err) in results.items():
        assert o_err < 1e-5 and lse_err < 1e-5, (n, o_err, lse_err)
