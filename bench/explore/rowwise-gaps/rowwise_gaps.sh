#!/usr/bin/env bash
# Device run: rowwise_gaps.py (forced builds on the below-baseline shapes) and
# add/scale at 2^28 float32 elements against torch.add, compiled and a copy.
#   bash bench/explore/rowwise-gaps/rowwise_gaps.sh   (OUT: output folder; .gpu and .whl carried)
set -uo pipefail
OUT=${OUT:-/tmp/rowgaps}; mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD/python_loader:$PWD/bench
export MYNS_LIBRARY=$PWD/.gpu/libmyns.so
TORCH_LIB=$(python3 -c 'import torch, os; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')
export LD_LIBRARY_PATH=$TORCH_LIB:/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-}
[ -f .gpu/libmyns.so ] || python3 -c "import lzma,shutil; shutil.copyfileobj(lzma.open('.gpu/libmyns.so.xz'), open('.gpu/libmyns.so','wb'))"
python3 - <<'PY' 2>&1 | tee "$OUT/stream.txt"
import argparse, json, os, torch
import bench_rowwise as br
a = argparse.Namespace(device="cuda", quick=False, rounds=5, rowwise_no_compile=False)
recs, notes, failed = [], [], []
for op in ("add", "scale"):
    r = br.measure_shape(op, 16384, 16384, torch.float32, a, None, notes, failed)
    recs.append(r)
    print(op, {k: round(v, 2) for k, v in r.items() if isinstance(v, float) and (k.endswith(("_us", "_tbps")) or k.startswith("vs_"))})
print(notes, failed)
json.dump(recs, open(os.environ["OUT"] + "/stream.json", "w"), indent=1)
PY
[ -n "${SKIP_GAPS:-}" ] || python3 bench/explore/rowwise-gaps/rowwise_gaps.py "$@" 2>&1 | tee "$OUT/rowwise-gaps.txt"
if [ -n "${NCU:-}" ]; then
  ncu --nvtx --nvtx-include "prof/" --cache-control all --clock-control none \
    --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
    --section MemoryWorkloadAnalysis \
    python3 bench/explore/rowwise-gaps/rowwise_ncu.py > "$OUT/rowwise-ncu.txt" 2>&1
  tail -3 "$OUT/rowwise-ncu.txt"
fi
