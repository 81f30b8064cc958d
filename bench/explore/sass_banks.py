"""FFMA register-bank conflict estimate from nvdisasm output: how many FFMAs
read two sources, not served by the reuse cache (the previous
instruction's .reuse on the same register in the same slot), from the same
bank = reg % NB. A model (NVIDIA documents no bank layout), used to compare
orderings of the CUDA-core GEMM's multiply-adds:

    nvcc -arch=sm_90a -cubin -O3 -I <dir with gemm_tiles.h> kernels/matmul_simt.cu -o s.cubin
    nvdisasm s.cubin > s.sass   (nvdisasm: pip download nvidia-cuda-nvdisasm)
    python3 bench/explore/sass_banks.py s.sass mm_simt_f32_256_kn [2|4]
"""
import re, sys
text = open(sys.argv[1]).read()
fun = sys.argv[2]
nb = int(sys.argv[3]) if len(sys.argv) > 3 else 2
# function body: from ".text.<fun>:" to the next ".section"
i = text.index(f".text.{fun}:")
j = text.find(".section", i + 10)
body = text[i:j if j > 0 else None]
ins = re.findall(r"/\*[0-9a-f]+\*/\s+(.*?);", body)
prev_reuse = {}
total = conflicts = 0
for s in ins:
    m = re.match(r"(@!?P\d+\s+)?FFMA\S*\s+(R\d+),\s*(-?R\d+(?:\.reuse)?),\s*(-?R\d+(?:\.reuse)?),\s*(-?R\d+(?:\.reuse)?)", s)
    if not m:
        prev_reuse = {}
        continue
    srcs = [m.group(3), m.group(4), m.group(5)]
    cur_reuse = {}
    live = []
    for slot, op in enumerate(srcs):
        r = int(re.search(r"R(\d+)", op).group(1))
        if prev_reuse.get(slot) == r:
            pass  # from the reuse cache
        else:
            live.append(r)
        if ".reuse" in op:
            cur_reuse[slot] = r
    prev_reuse = cur_reuse
    banks = [r % nb for r in set(live)]
    total += 1
    if len(banks) != len(set(banks)):
        conflicts += 1
print(f"{fun}: {total} FFMA, {conflicts} with a bank conflict ({nb} banks)")
