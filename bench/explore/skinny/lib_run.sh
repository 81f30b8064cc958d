#!/usr/bin/env bash
# Device run 7: the library with the streaming build (bundle in .gpu/):
# the matmul/bmm tests, compute-sanitizer memcheck and racecheck over decode
# products on both builds, then the matmul benchmark. Logs to $OUT.
set -uo pipefail
OUT=${OUT:-/tmp/lib-out}; mkdir -p "$OUT"
python3 - <<'PY'
import glob, lzma, os
for f in glob.glob(".gpu/bin/*.xz") + glob.glob(".gpu/*.xz"):
    with lzma.open(f) as s, open(f[:-3], "wb") as d: d.write(s.read())
    os.chmod(f[:-3], 0o755); os.remove(f)
PY
export MYNS_LIBRARY=$PWD/.gpu/libmyns.so PYTHONPATH=$PWD/python_loader MYNS_REQUIRE_CUDA=1 PYTHONUNBUFFERED=1
export LD_LIBRARY_PATH=$(python3 -c 'import torch,os;print(os.path.dirname(torch.__file__)+"/lib")'):/usr/local/nvidia/lib64
cat .gpu/COMMIT > "$OUT/commit.txt"
export MYNS_GIT_COMMIT=$(cat .gpu/COMMIT)  # the reports name the bundle's commit
timeout 300 python3 -m pytest -q -x tests/python/test_matmul_kernels.py -p no:cacheprovider > "$OUT/pytest-matmul.txt" 2>&1
echo "pytest: $(tail -1 "$OUT/pytest-matmul.txt")"
cat > /tmp/decode_workload.py <<'PY'
import torch, myns
torch.manual_seed(0)
n = 0
for variant in ["skinny_tma", "auto", "skinny_tma+acc"]:
    myns.set_override("MYNS_MATMUL_KERNEL", variant)
    for dt in [torch.bfloat16, torch.float16]:
        for m, k, n_ in [(1, 1000, 4104), (9, 200, 4096), (16, 72, 300)]:
            x = torch.randn(m, k, dtype=dt, device="cuda")
            for w in [torch.randn(k, n_, dtype=dt, device="cuda"), torch.randn(n_, k, dtype=dt, device="cuda").t()]:
                ref = x.double() @ w.double()
                out = myns.matmul(x, w)
                assert (out.double() - ref * (2 if variant.endswith("+acc") else 1)).abs().max().item() < 1.0, variant
                n += 1
        x, w = torch.randn(3, 5, 520, dtype=dt, device="cuda"), torch.randn(3, 520, 4096, dtype=dt, device="cuda")
        myns.bmm(x, w); n += 1
torch.cuda.synchronize()
print("decode workload ok:", n, "calls")
PY
for tool in memcheck racecheck; do
  timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 python3 /tmp/decode_workload.py > "$OUT/$tool-decode.txt" 2>&1
  echo "$tool: exit $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|workload ok' "$OUT/$tool-decode.txt" | tr '\n' ' ')"
done
timeout 200 python3 bench/bench_matmul.py --rounds 3 --out "$OUT/mm" > "$OUT/bench-matmul.log" 2>&1
echo "bench: exit $?"; ls "$OUT/mm" 2>/dev/null; grep -E "decode|lm_head" "$OUT/bench-matmul.log" | head -40
