#!/usr/bin/env bash
# Device run (library in .gpu/, see bench/explore/bundle.sh or make
# gpu-bundle): output rows off 16 bytes stored by TMA in row classes.
# 1. a probe: N = 4095, 4094, 4092 against float64, with the classes' gap
#    (MYNS_C_GAP_EXPERIMENT, default 8 / R lines) and without (0: the
#    classes' boxes 1024-aligned, 8 rows of a matrix on one bank group);
# 2. kernel times of --set unaligned, with the gap and without;
# 3. the matmul and bmm pytest files on CUDA;
# 4. the matmul report (bench_matmul.py).
# Everything lands packed in $OUT/classes.tgz.
set -uo pipefail
source bench/explore/tf32-llm/env.sh
OUT=${OUT:-/tmp/classes-out}; R=$OUT/r; mkdir -p "$R"
export MYNS_REQUIRE_CUDA=1 MYNS_GIT_COMMIT=$(cat .gpu/COMMIT)
# Registers and spills of the cooperative kernels, before (old) and after (new), where the fatbins came along.
for f in old new; do
  [ -f .gpu/$f.fatbin.xz ] || continue
  xz -dkf .gpu/$f.fatbin.xz
  echo "== $f"; cuobjdump -res-usage .gpu/$f.fatbin 2>&1 | grep -A1 -E "Function mm_wgk?(256|192|128|64)_bf16_kn" | grep -oE "mm_wg[^ :]*|REG:[0-9]+|STACK:[0-9]+|SHARED:[0-9]+|LOCAL:[0-9]+" | paste - - - - - 
done > $R/res-usage.txt 2>&1
probe='
import torch, myns
for kind in (torch.bfloat16, torch.float16):
    for m, k, n in [(512, 256, 4095), (384, 192, 4094), (256, 128, 4092), (4096, 4096, 4095)]:
        a, b = torch.randn(m, k, dtype=kind, device="cuda"), torch.randn(k, n, dtype=kind, device="cuda")
        out = myns.matmul(a, b).double(); ref = a.double() @ b.double()
        err = ((out - ref).abs() / (ref.abs() + 1)).max().item()
        print(kind, m, k, n, "max rel err", err, "nan", out.isnan().any().item(), flush=True)
'
for gap in default 0; do
  echo "== gap $gap"
  if [ $gap = default ]; then timeout 60 python3 -c "$probe"; else MYNS_C_GAP_EXPERIMENT=$gap timeout 60 python3 -c "$probe"; fi
done > $R/probe.txt 2>&1
cat $R/probe.txt | tail -20
timeout 100 python3 bench/explore/matmul_kernel_times.py --set unaligned --calls 20 > $R/kernel-times-gap.log 2>&1; echo "times rc $?"
MYNS_C_GAP_EXPERIMENT=0 timeout 100 python3 bench/explore/matmul_kernel_times.py --set unaligned --calls 20 > $R/kernel-times-nogap.log 2>&1; echo "times nogap rc $?"
grep -E "kn|nk" $R/kernel-times-gap.log | grep -v "^ " | head -40
timeout 200 python3 -m pytest -q -p no:cacheprovider tests/python/test_matmul_kernels.py tests/python/test_bmm.py > $R/pytest-matmul.log 2>&1; echo "pytest rc $?"; tail -3 $R/pytest-matmul.log
if [ "${REPORT:-1}" = 1 ]; then
  timeout 120 python3 bench/bench_matmul.py --rounds 5 --out $R/mm --command "bash bench/explore/unaligned-out/classes.sh" > $R/report.txt 2>&1; echo "report rc $?"
  grep -A12 "by class" $R/mm/*.md | head -14
fi
(cd $OUT && tar czf classes.tgz r && rm -rf r)
