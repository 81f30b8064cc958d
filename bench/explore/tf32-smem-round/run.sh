#!/usr/bin/env bash
# Device run for the TF32 register-A kernel rounding B in shared memory (e2e6c77,
# reverted: README.md here)
# (build/mmab/new.so) against the library before it (base.so): the matmul
# tests with new.so, memcheck and racecheck over register-A TF32 products,
# then run.sh's A/B (bench_matmul.py, squares and decode rows, interleaved
# library by library). Logs to $OUT.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
D=build/mmab
for l in base new; do [ -f $D/$l.so ] || xz -dk $D/$l.so.xz; done
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/python_loader MYNS_REQUIRE_CUDA=1
TORCH_LIB=$(python3 -c 'import torch, os; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')
export LD_LIBRARY_PATH=$TORCH_LIB:/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-}
MYNS_LIBRARY=$PWD/$D/new.so timeout 280 python3 -m pytest -q -p no:cacheprovider tests/python/test_matmul_kernels.py tests/python/test_bmm.py > $OUT/pytest-matmul.log 2>&1
echo "pytest exit $?: $(tail -1 $OUT/pytest-matmul.log)"
grep -E "FAILED|Error" $OUT/pytest-matmul.log | head -10
cat > /tmp/tf32_workload.py <<'PY'
import torch, myns
torch.manual_seed(0)
torch.backends.cuda.matmul.allow_tf32 = True
n = 0
for v in ["auto", "wgr", "wgr64/2", "wgr192"]:
    myns.set_override("MYNS_MATMUL_KERNEL", v)
    for m, k, n_ in [(300, 200, 260), (256, 1000, 520)]:
        for a in [torch.randn(m, k, device="cuda"), torch.randn(k, m, device="cuda").t(), torch.randn(m, k + 1, device="cuda")[:, :k]]:
            b = torch.randn(k, n_, device="cuda")
            out = myns.matmul(a, b)
            err = (out.double() - a.double() @ b.double()).abs().max().item()
            assert err < 0.05 * k ** 0.5, (v, m, k, n_, err)
            n += 1
torch.cuda.synchronize()
print("tf32 workload ok:", n, "calls")
PY
for tool in memcheck racecheck; do
  MYNS_LIBRARY=$PWD/$D/new.so timeout 100 compute-sanitizer --tool $tool --error-exitcode 9 python3 /tmp/tf32_workload.py > $OUT/$tool-tf32.log 2>&1
  echo "$tool: exit $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|workload ok' $OUT/$tool-tf32.log | tr '\n' ' ')"
done
AB_ONLY=${AB_ONLY:-square,decode} AB_ROUNDS=${AB_ROUNDS:-3} bash bench/explore/matmul-ab/run.sh
# The full matmul report with new.so (MYNS_GIT_COMMIT: the commit it was built from).
MYNS_LIBRARY=$PWD/$D/new.so timeout 240 python3 bench/bench_matmul.py --rounds 3 --out $OUT/mm > $OUT/bench-matmul.log 2>&1
echo "bench exit $?"; grep -A10 "by class" $OUT/bench-matmul.log | head -12
