#!/usr/bin/env bash
# A/B of matmul libraries + variant sweep, on the GPU machine (repo root).
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
D=build/mmab
for l in ${LIBS:-base new}; do [ -f $D/$l.so ] || xz -dk $D/$l.so.xz; done
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/python_loader
TORCH_LIB=$(python3 -c 'import torch, os; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')
export LD_LIBRARY_PATH=$TORCH_LIB:/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv | tee $OUT/gpu.txt
if [ -n "${KTIMES:-}" ]; then
  MYNS_LIBRARY=$PWD/$D/new.so timeout 200 python3 bench/explore/matmul_kernel_times.py --set m128 --variants $KTIMES 2>&1 | grep -v Warn > $OUT/ktimes.log
fi
if [ -n "${SWEEP:-}" ]; then
  MYNS_LIBRARY=$PWD/$D/${SWEEP_LIB:-base}.so timeout 300 python3 bench/explore/matmul_variants.py --out $OUT --only $SWEEP 2>&1 | tee $OUT/sweep.log | grep -v "^  " | tail -3
fi
for r in $(seq 1 ${AB_ROUNDS:-3}); do
  for l in ${LIBS:-base new}; do
    echo "=== $l round $r"
    MYNS_LIBRARY=$PWD/$D/$l.so timeout 200 python3 bench/bench_matmul.py --rounds 1 --only ${AB_ONLY:-square,llm,ragged,bmm} --kinds="${AB_KINDS:-}" --out $OUT/ab-$l-$r > $OUT/ab-$l-$r.log 2>&1
    grep -E "^\| (square|llm|ragged|bmm|decode|unaligned|lm_head) " $OUT/ab-$l-$r/*.md 2>/dev/null | head -0
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
(cd $OUT && tar czf ab.tgz ab-* && rm -rf ab-*)
if [ -n "${TESTS:-}" ]; then
  MYNS_LIBRARY=$PWD/$D/new.so timeout 300 python3 -m pytest -q -p no:cacheprovider tests/python/test_matmul_kernels.py tests/python/test_bmm.py 2>&1 | tail -3 | tee $OUT/pytest.log
fi
