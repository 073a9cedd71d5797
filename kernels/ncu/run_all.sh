#!/bin/sh
# On a machine with an NVIDIA GPU, ncu (Nsight Compute) and numba-cuda: profile the canonical kernels
# from their Python sources, write kernels/ncu/ncu_counts.json, print it beside the simulator's counts
# and run the test that compares them. A few minutes (the profiler replays each launch per metric pass).
#   pip install numba-cuda numpy pytest && sh kernels/ncu/run_all.sh
set -eu
cd "$(dirname "$0")/../.."
python3 kernels/ncu/run_ncu.py --out kernels/ncu/ncu_counts.json
python3 kernels/ncu/run_ncu.py --out kernels/ncu/ncu_counts.json --table
python3 -m pytest -q -p no:cacheprovider tests/kernels/test_ncu.py
