"""Repeats tests/python/test_compile.py::test_compiled_model_matches_eager
(dynamic shapes) on CUDA, which failed once on the H100 at 2a18201 (grad of
b1 at batch 17, half its elements) after passing in every earlier run. The
test checks the compiled and the eager gradients each against the exact
float64 ones, so a failing trial says which is off.

    python3 bench/explore/compile_grad_repeat.py [--trials 8]

The log h100-compile-grad-repeat-2a18201.log came from the first version of
this script (commit 3b0a3b2), which made its float64 model by drawing a new
one and copying the weights in: that draw moved the random inputs of
batches 9 and 17 off the test's.
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tests", "python"))
from test_compile import test_compiled_model_matches_eager  # noqa: E402


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--trials", type=int, default=8)
    a = p.parse_args()
    for trial in range(a.trials):
        try:
            test_compiled_model_matches_eager(True, "cuda")
            print(f"trial {trial}: ok", flush=True)
        except AssertionError as e:
            print(f"trial {trial}: FAIL\n    {str(e).splitlines()[0][:300]}", flush=True)


if __name__ == "__main__":
    main()
