"""The decode shapes bench.py times, each build, ranks 1, 2 and 4, checked
against float64 as check.py checks (run 5's first bench run hit wrong sums
that check.py's smaller shapes had not shown).

  python3 bench/explore/skinny/debug5.py BUILD_DIR name,name,...
"""
import sys

import torch

sys.path.insert(0, __import__("os").path.dirname(__file__))
from bench import Lib  # noqa: E402
from check import one  # noqa: E402

build, names = sys.argv[1], sys.argv[2].split(",")
quick = len(sys.argv) > 3 and sys.argv[3] == "quick"  # kn/nk M 1, 9, 16 at 4096 x 14336, ranks 1 and 2
shapes = [(1, 4096, 14336), (9, 4096, 14336), (16, 4096, 14336)] if quick else \
    [(1, 4096, 4096), (16, 4096, 4096), (1, 4096, 14336), (1, 14336, 4096), (9, 4096, 32000)]
gen = torch.Generator(device="cuda").manual_seed(5)
bad = 0
for name in names:
    lib = Lib(f"{build}/{name}.so", 8, kalign=64 if name.startswith("tma_") else 32)
    for lay in ["kn", "nk"]:
        for m, k, n in shapes:
            for r in [1, 2] if quick else [1, 2, 4]:
                for rep in range(3):
                    e = one(lib, lay, True, m, k, n, r, 0, gen)
                    ok = e <= 1
                    bad += not ok
                    print(name, lay, m, k, n, "ranks", r, "err/bound", f"{e:.3f}", "ok" if ok else "BAD", flush=True)
print("debug5:", "FAIL" if bad else "ok", bad)
