#!/usr/bin/env bash
# Session 2026-11-27 run 1: layer_norm r4 (prev vs new), tests, matmul square A/B (base fb06aee, prev 039c9dc, new b416216).
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
D=build/mmab
for l in base prev new; do [ -f $D/$l.so ] || xz -dk $D/$l.so.xz; done
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/python_loader
TORCH_LIB=$(python3 -c 'import torch, os; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')
export LD_LIBRARY_PATH=$TORCH_LIB:/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv | tee $OUT/gpu.txt
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site $D/whl/*.whl && export PYTHONPATH=$PYTHONPATH:/tmp/site
t0=$SECONDS
MYNS_LIBRARY=$PWD/$D/new.so timeout 200 python3 -m pytest -q -p no:cacheprovider tests/python/test_llm_ops.py tests/python/test_cuda_paths.py tests/python/test_training_ops.py -k "four_pack or layer_norm or forward_builds or row" 2>&1 | tail -3 | tee $OUT/pytest-rows.log
echo "rows tests $((SECONDS-t0)) s"; t0=$SECONDS
MYNS_LIBRARY=$PWD/$D/new.so timeout 240 python3 -m pytest -q -p no:cacheprovider tests/python/test_matmul_kernels.py tests/python/test_bmm.py 2>&1 | tail -3 | tee $OUT/pytest-mm.log
echo "matmul tests $((SECONDS-t0)) s"; t0=$SECONDS
A="--rowwise-shapes ${SHAPES:-1024x8192:bf16,8192x8192:bf16,8192x2048:bf16,1024x8192:f32,2048x8192:f16} --rowwise-ops layer_norm,rms_norm --rowwise-budget-s 120 --rounds 5"
for v in prev new; do
  MYNS_LIBRARY=$PWD/$D/$v.so timeout 200 python3 bench/run.py --only rowwise $A --results-dir $OUT/row-$v --tag h100 > $OUT/row-$v.log 2>&1
  grep -E "^ +(layer_norm|rms_norm)" $OUT/row-$v.log | sed "s/^/$v /"
done
echo "row bench $((SECONDS-t0)) s"; t0=$SECONDS
for r in $(seq 1 ${AB_ROUNDS:-3}); do
  for l in base prev new; do
    MYNS_LIBRARY=$PWD/$D/$l.so timeout 120 python3 bench/bench_matmul.py --rounds 1 --only square --out $OUT/ab-$l-$r > $OUT/ab-$l-$r.log 2>&1
  done
done
python3 - <<'PY' | tee $OUT/summary.txt
import json, glob, os, statistics, collections
out = os.environ.get("OUT", "/tmp/out")
res = collections.defaultdict(lambda: collections.defaultdict(list))
for f in glob.glob(f"{out}/ab-*-*/*.json"):
    lib = f.split("/ab-")[1].split("-")[0]
    d = json.load(open(f))
    for r in d.get("records", d if isinstance(d, list) else []):
        key = (r["class"], r["kind"], r["batch"], r["m"], r["k"], r["n"], r["b_layout"])
        res[key][lib].append(r.get("ratio"))
libs = sorted({l for v in res.values() for l in v})
print("shape", *libs)
for k, v in sorted(res.items()):
    print(" ".join(map(str, k)), *[f"{statistics.median(v[l]):.3f}({','.join(f'{x:.2f}' for x in v[l])})" if v.get(l) else "-" for l in libs])
PY
echo "matmul A/B $((SECONDS-t0)) s"
(cd $OUT && tar czf ab.tgz ab-* && rm -rf ab-*)
