#!/bin/bash
# Device run (from the repository root, on the GPU machine, which has nvcc):
# builds probe.cu for sm_90a and runs probe.py on it.
set -e
nvcc --cubin -arch=sm_90a -O3 -o /tmp/tf32-tma-probe.cubin bench/explore/tf32-tma/probe.cu
python3 bench/explore/tf32-tma/probe.py /tmp/tf32-tma-probe.cubin
