"""Run a command with the CPUs loaded: start N busy processes (two by default), run the command
beside them, stop them, and print what it cost. The suite must pass this way (issue 35: tests
that wait on conditions, not on times, pass on a slower or busier machine as on a quiet one).

    python3 benchmarks/busy.py                        # make test, beside two busy processes
    python3 benchmarks/busy.py -n 2 -- python3 -m pytest -q -p no:cacheprovider tests/build/test_kernel_daemon.py
    python3 benchmarks/busy.py --repeat 3              # three runs in a row, stops at the first failure

A busy process spins on arithmetic at normal priority; it holds no lock and writes nothing. Prints
each run's exit status and wall time (on this 2-core machine, two busy processes make a CPU-bound
probe about 3x slower: 0.46 s alone, 1.37 s beside them)."""
from __future__ import annotations

import argparse
import multiprocessing
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def spin(stop) -> None:
    x = 0
    while not stop.is_set():
        for i in range(100_000):
            x = (x * 1103515245 + i) & 0xFFFFFFFF


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-n", "--busy", type=int, default=2, help="busy processes beside the command (default 2)")
    ap.add_argument("--repeat", type=int, default=1, help="runs in a row (default 1)")
    ap.add_argument("command", nargs="*", help="the command (default: make test)")
    args = ap.parse_args()
    command = args.command or ["make", "test"]
    stop = multiprocessing.Event()
    workers = [multiprocessing.Process(target=spin, args=(stop,), daemon=True) for _ in range(args.busy)]
    for w in workers:
        w.start()
    print(f"busy: {args.busy} busy processes ({', '.join(str(w.pid) for w in workers)}) on {os.cpu_count()} CPUs; "
          f"running {' '.join(command)} {args.repeat}x", flush=True)
    status = 0
    try:
        for run in range(1, args.repeat + 1):
            t0, cpu0 = time.perf_counter(), os.times()
            status = subprocess.run(command, cwd=ROOT).returncode
            wall = time.perf_counter() - t0
            print(f"busy: run {run}/{args.repeat}: exit {status}, {wall:.1f} s wall", flush=True)
            if status:
                break
    finally:
        stop.set()
        for w in workers:
            w.join(timeout=5)
            if w.is_alive():
                w.terminate()
    return status


if __name__ == "__main__":
    sys.exit(main())
