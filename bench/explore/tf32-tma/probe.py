"""TMA loads of float32 data through tensor maps of element type FLOAT32,
TFLOAT32 and TFLOAT32_FTZ (probe.cu): does the copy round to TF32, and how
(to nearest with ties away or to even, or truncating), and what happens to
infinities, NaNs, subnormals and values near the largest float?
Run by run.sh on the GPU machine: python3 probe.py <cubin of probe.cu>"""
import ctypes
import sys

import torch

cu = ctypes.CDLL("libcuda.so.1")
torch.cuda.init()
torch.zeros(1, device="cuda")


def check(r, what):
    if r != 0:
        raise RuntimeError(f"{what} failed: CUresult {r}")


mod = ctypes.c_void_p()
data = open(sys.argv[1], "rb").read()
check(cu.cuModuleLoadData(ctypes.byref(mod), ctypes.c_char_p(data)), "cuModuleLoadData")
fn = ctypes.c_void_p()
check(cu.cuModuleGetFunction(ctypes.byref(fn), mod, b"tma_roundtrip"), "cuModuleGetFunction")


def bits(x):
    return x.view(torch.int32).to(torch.int64) & 0xFFFFFFFF


def tf32_rna(u):  # round half away from zero on the magnitude bits
    return ((u + 0x1000) & ~0x1FFF) & 0xFFFFFFFF


def tf32_rne(u):
    low = u & 0x1FFF
    trunc = u & ~0x1FFF & 0xFFFFFFFF
    lsb = (u >> 13) & 1
    up = (low > 0x1000) | ((low == 0x1000) & (lsb == 1))
    return torch.where(up, (trunc + 0x2000) & 0xFFFFFFFF, trunc)


def tf32_trunc(u):
    return u & ~0x1FFF & 0xFFFFFFFF


g = torch.Generator().manual_seed(0)
n_rows = 32 * 2048
vals = torch.randn(n_rows * 32, generator=g) * torch.exp2(torch.randint(-30, 30, (n_rows * 32,), generator=g).float())
u = bits(vals)
# Exact ties (low 13 bits 0x1000) with odd and even TF32 last bits, both signs.
ties = torch.randint(0, 1 << 18, (4096,), generator=g) << 13 | 0x1000
ties = ties | (torch.randint(100, 150, (4096,), generator=g) << 23)
u[:4096] = ties
u[4096:8192] = ties | (1 << 31)
special = [0x7F800000, 0xFF800000, 0x7FC00000, 0x7F800001, 0x7F7FFFFF, 0x7F7FF000, 0x7F7FEFFF, 0x00000001, 0x00001000, 0x00001001,
           0x007FFFFF, 0x00400000, 0x80001001, 0x00800000, 0x3F800FFF, 0x3F801000, 0x3F803000, 0x3F801001, 0x00000000, 0x80000000]
u[8192:8192 + len(special)] = torch.tensor(special)
x = torch.from_numpy(u.numpy().astype("uint32").view("float32")).cuda().reshape(n_rows, 32)
ref = bits(x.cpu()).flatten()


class TensorMap(ctypes.Structure):
    _fields_ = [("opaque", ctypes.c_uint64 * 16)]


for name, dt in [("FLOAT32", 7), ("TFLOAT32", 11), ("TFLOAT32_FTZ", 12)]:
    tm = TensorMap()
    dims = (ctypes.c_uint64 * 2)(32, n_rows)
    strides = (ctypes.c_uint64 * 1)(128)
    box = (ctypes.c_uint32 * 2)(32, 32)
    es = (ctypes.c_uint32 * 2)(1, 1)
    check(cu.cuTensorMapEncodeTiled(ctypes.byref(tm), dt, 2, ctypes.c_void_p(x.data_ptr()), dims, strides, box, es, 0, 0, 0, 0), f"encode {name}")
    out = torch.empty_like(x)
    outp = ctypes.c_uint64(out.data_ptr())
    params = (ctypes.c_void_p * 2)(ctypes.cast(ctypes.byref(tm), ctypes.c_void_p), ctypes.cast(ctypes.byref(outp), ctypes.c_void_p))
    stream = torch.cuda.current_stream().cuda_stream
    check(cu.cuLaunchKernel(fn, n_rows // 32, 1, 1, 128, 1, 1, 0, ctypes.c_void_p(stream), params, None), "launch")
    torch.cuda.synchronize()
    got = bits(out.cpu()).flatten()
    print(f"== {name}")
    for label, f in [("unchanged", lambda v: v), ("rna", tf32_rna), ("rne", tf32_rne), ("trunc", tf32_trunc)]:
        want = f(ref)
        print(f"  {label:9s}: all {int((got == want).sum())}/{got.numel()}  random {int((got[8192 + 32:] == want[8192 + 32:]).sum())}/{got.numel() - 8224}"
              f"  ties {int((got[:8192] == want[:8192]).sum())}/8192")
    for i, s in enumerate(special):
        print(f"    0x{s:08X} -> 0x{int(got[8192 + i]):08X}")
