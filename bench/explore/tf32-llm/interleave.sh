# Device run (from the repository root, library in .gpu/): interleave.py.
set -u
source bench/explore/tf32-llm/env.sh
timeout 300 python3 bench/explore/tf32-llm/interleave.py --set ${SET:-pairs} --rounds 5 --calls 10 2>&1 | grep -v -i "warn" | tee $OUT/interleave-${SET:-pairs}.log
