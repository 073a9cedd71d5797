"""Kernels 1-3 as the book prints them (kernels/attention_naive.cu, attention_per_output.cu,
attention_tiled.cu), host launchers included, run on the CPU with the CUDA emulation
(cuda_on_cpu.h) and compared with attention computed in double precision, on sizes that are not
multiples of their blocks (16 × 16 threads, 32 × 32 tiles, 256-thread softmax blocks), so that
every grid overhangs its matrix and every bounds check is exercised."""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
KERNELS = HERE.parents[1] / "kernels"

# N:d pairs per kernel: below, across and well past the block edges
SIZES = {
    "attention_naive": ["1:64", "17:40", "100:72"],
    "attention_per_output": ["1:8", "15:40", "17:64", "33:24", "257:40"],     # 16 × 16 blocks; 256-row softmax grid
    "attention_tiled": ["1:8", "31:40", "33:64", "100:72", "257:40"],         # 32 × 32 tiles; 256 threads a row
}
LAUNCH = re.compile(r"(\w+(?:<[^<>;]*>)?)<<<(.+?)>>>\((.*?)\);", re.S)


def emulated(source: str) -> str:
    """The kernel file as the emulation compiles it: no CUDA header, dynamic shared memory pointed
    at the emulation's buffer, and each `k<<<grid, block, smem, stream>>>(args)` a cuda_launch."""
    text = source.replace("#include <cuda_fp16.h>", "")
    text = re.sub(r"extern __shared__ (\w+) (\w+)\[\];", r"\1* \2 = reinterpret_cast<\1*>(cuda_dynamic_smem);", text)

    def launch(m: re.Match) -> str:
        grid, block, smem, _stream = [p.strip() for p in m.group(2).split(",")]
        return f"cuda_launch({grid}, {block}, {smem}, [&] {{ {m.group(1)}({m.group(3)}); }});"
    out, n = LAUNCH.subn(launch, text)
    assert n, "no kernel launch found in the host side"
    return out


@pytest.fixture(scope="module")
def gxx():
    found = shutil.which("g++")
    assert found, "g++ is needed to run the kernels on the CPU (scripts/install.sh installs it)"
    return found


def run_kernel(gxx: str, work: Path, name: str, sizes: list[str], source: str | None = None) -> dict[str, tuple]:
    work.mkdir(parents=True, exist_ok=True)
    (work / "kernel.inc").write_text(emulated(source if source is not None else (KERNELS / f"{name}.cu").read_text()))
    exe = work / "check"
    subprocess.run([gxx, "-std=c++20", "-O2", "-pthread", f"-DLAUNCH=launch_{name}", f"-I{HERE}", f"-I{work}",
                    str(HERE / "check_kernels.cpp"), "-o", str(exe)], check=True, capture_output=True, text=True,
                   timeout=300)
    out = subprocess.run([str(exe), *sizes], check=True, capture_output=True, text=True, timeout=300).stdout
    return {f"{n}:{d}": (int(err), float(o), float(p)) for n, d, err, o, p in (line.split() for line in out.splitlines())}


def test_every_printed_kernel_is_checked():
    printed = sorted(p.stem for p in KERNELS.glob("*.cu"))
    assert printed == sorted([*SIZES, "attention_flash"])      # attention_flash: test_flash_kernel.py


@pytest.mark.parametrize("name", sorted(SIZES))
def test_kernel_computes_attention_through_its_launcher(gxx, tmp_path, name):
    results = run_kernel(gxx, tmp_path, name, SIZES[name])
    assert sorted(results) == sorted(SIZES[name])
    for size, (err, o_err, p_err) in results.items():
        assert err == 0, (name, size, "the launcher reported an error")
        assert o_err < 1e-5 and p_err < 1e-5, (name, size, o_err, p_err)


def test_a_broken_bounds_check_is_caught(gxx, tmp_path):
    """The check can fail: Kernel 3 without the column guard on its store writes the overhanging
    tile's columns into the next row of S, where N is not a multiple of the tile."""
    source = (KERNELS / "attention_tiled.cu").read_text()
    broken = source.replace("if (row < M && col < Nc)\n", "if (row < M)\n")
    assert broken != source
    try:
        results = run_kernel(gxx, tmp_path, "attention_tiled", ["33:40"], broken)
    except subprocess.CalledProcessError as died:    # the last row's overhang wrote past the buffer
        assert died.cmd[0] == str(tmp_path / "check"), "it compiled, and the run itself failed"
    else:
        assert results["33:40"][2] > 1e-3, "wrong scores went unnoticed"
