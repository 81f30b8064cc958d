#!/usr/bin/env bash
# Device run: the libraries build/mmab/base.so.xz (757ea21) and
# build/mmab/new.so.xz alternated three times: norm forward + backward
# kernel times (norm_backward.py) and FLCE forward + backward
# (../acc-reduce/flce_ab.py); then, with the new library, the matmul, bmm,
# norm and FLCE tests (TESTS=1) and the Llama step's profile (STEP=1,
# carry .whl too for Liger).
set -uo pipefail
OUT=${OUT:-/tmp/myns-gpu}; mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/python_loader
TORCH_LIB=$(python3 -c 'import torch, os; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')
export LD_LIBRARY_PATH=$TORCH_LIB:/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-}
python3 -c '
import glob, lzma
for f in glob.glob("build/mmab/*.so.xz"):
    open(f[:-3], "wb").write(lzma.open(f).read())'
for r in 1 2 3; do
  for lib in base new; do
    echo "== round $r $lib"
    MYNS_LIBRARY=$PWD/build/mmab/$lib.so timeout 120 python3 bench/explore/step-profile/norm_backward.py 2>&1 | grep -v Warn
    MYNS_LIBRARY=$PWD/build/mmab/$lib.so timeout 100 python3 bench/explore/acc-reduce/flce_ab.py $lib 2>&1 | grep -v -i warn
  done
done 2>&1 | tee "$OUT/ab.log" | grep -E "fwd\+bwd|== round|8192x2048"
if [ -n "${TESTS:-}" ]; then
  MYNS_LIBRARY=$PWD/build/mmab/new.so MYNS_REQUIRE_CUDA=1 timeout ${TESTS_TIMEOUT:-400} python3 -m pytest -q -p no:cacheprovider \
    tests/python/test_matmul_kernels.py tests/python/test_bmm.py tests/python/test_training_ops.py tests/python/test_llm_ops.py tests/python/test_ops.py tests/python/test_cuda.py \
    -k "${TESTS_K:-matmul or bmm or acc or norm or cross_entropy or fused_linear}" 2>&1 | tail -8 | tee "$OUT/pytest.log"
fi
if [ -n "${STEP:-}" ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl && export PYTHONPATH=$PYTHONPATH:/tmp/site
  MYNS_LIBRARY=$PWD/build/mmab/new.so python3 bench/explore/compile_gap.py --layers 16 --only ${ONLY:-myns,liger} --top ${TOP:-45} 2>&1 | grep -v Warning | tee "$OUT/step-profile.log" | grep "step\|busy"
fi
