"""The device probe's WebAssembly (assets/wasm/*.wasm) is what `npm run build:probe` makes from
probe/*.ts with the pinned AssemblyScript, byte for byte, and its kernels compute what they say
(under Node, which runs the same WebAssembly SIMD as the browser)."""
import json
import shlex
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
ASC = ROOT / "node_modules" / ".bin" / "asc"


@pytest.fixture(scope="module")
def rebuilt(tmp_path_factory):
    assert ASC.exists(), "node_modules/.bin/asc is missing: run scripts/install.sh (npm package assemblyscript)"
    out = tmp_path_factory.mktemp("wasm")
    script = json.loads((ROOT / "package.json").read_text())["scripts"]["build:probe"]
    for command in script.split("&&"):
        args = shlex.split(command)
        assert args[0] == "asc" and args[-2] == "-o" and args[-1].startswith("assets/wasm/")
        args[0], args[-1] = str(ASC), str(out / Path(args[-1]).name)
        subprocess.run(args, cwd=ROOT, check=True, capture_output=True, timeout=300)
    return out


def test_the_committed_wasm_is_the_build_of_its_source(rebuilt):
    built = sorted(p.name for p in rebuilt.iterdir())
    assert built == ["cpu-probe-relaxed.wasm", "cpu-probe.wasm"]
    for name in built:
        assert (rebuilt / name).read_bytes() == (ROOT / "assets" / "wasm" / name).read_bytes(), \
            f"assets/wasm/{name} differs from what probe/*.ts builds: run `npm run build:probe` and commit"


CHECK = """
import fs from "fs";
const mem = new WebAssembly.Memory({initial: 64});
const k = (await WebAssembly.instantiate(fs.readFileSync("assets/wasm/cpu-probe.wasm"), {env: {memory: mem}})).instance.exports;
const r = (await WebAssembly.instantiate(fs.readFileSync("assets/wasm/cpu-probe-relaxed.wasm"), {})).instance.exports;
const f = new Float32Array(mem.buffer), A = 65536, N = 1 << 20;
k.write(A, N, 2, 0.5);
const read = k.read(A, N, 3);
for (let i = 0; i < N / 4; i++) f[A / 4 + i] = i % 7;
k.copy(A + N, A, N, 1);
let same = true;
for (let i = 0; i < N / 4; i++) if (f[(A + N) / 4 + i] !== i % 7) same = false;
console.log(JSON.stringify({read, same, untouched: f[A / 4 - 1], madd: k.madd(4096), fma: r.fma(4096)}));
"""


def test_the_kernels_compute_what_they_say(tmp_path):
    node = shutil.which("node")
    assert node, "node is missing"
    script = tmp_path / "check.mjs"
    script.write_text(CHECK)
    out = json.loads(subprocess.run([node, "--experimental-wasm-relaxed-simd", str(script)], cwd=ROOT,
                                    check=True, capture_output=True, text=True, timeout=60).stdout)
    assert out["read"] == 3 * (1 << 20) / 4 * 0.5          # every float of the array, three times
    assert out["same"] and out["untouched"] == 0             # copy copies, and only its range
    # x <- 0.999 x + 0.001 on 12 chains × 4 lanes, x0 = 1.0 ... 2.1, in float32: the multiply and
    # the add each rounded (madd), or rounded once (fma, where the CPU fuses relaxed_madd).
    m, c = np.float32(0.999), np.float32(0.001)
    x = np.array([1.0 + 0.1 * i for i in range(12)], dtype=np.float32)
    fused = x.copy()
    for _ in range(4096):
        x = (x * m).astype(np.float32) + c
        fused = (fused.astype(np.float64) * np.float64(m) + np.float64(c)).astype(np.float32)
    lanes = lambda v: float(np.float32(4) * v.astype(np.float64).sum())
    assert abs(out["madd"] - lanes(x)) < 1e-4
    assert min(abs(out["fma"] - lanes(fused)), abs(out["fma"] - lanes(x))) < 1e-4
