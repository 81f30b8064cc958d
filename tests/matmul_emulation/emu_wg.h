// Emulated Hopper pieces (replace the asm in matmul_sm90a.cu; mbarriers and
// TMA tiled loads with 128-byte swizzle are emu_tma.h's): wgmma m64nN (k16, tf32 k8) reading shared
// memory through descriptors decoded per the PTX ISA's canonical layouts;
// named barriers; the K-range clusters' barrier and distributed shared
// memory (the blocks of a cluster run together, one slot each, each with
// its own shared-memory window: wg_main.cc).
// One element of T at a (128-byte swizzled) shared-memory address; float is
// read as TF32 (the tensor cores ignore the low 13 mantissa bits).
template <typename T>
inline float emu_ld(uint32_t addr) {
  uint32_t phys = addr ^ (((addr >> 7) & 7) << 4);
  T x; memcpy(&x, emu_window() + phys, sizeof(T));
  if constexpr (std::is_same<T, float>::value) { uint32_t u; memcpy(&u, &x, 4); u &= ~0x1FFFu; memcpy(&x, &u, 4); return x; }
  else if constexpr (std::is_same<T, __nv_bfloat16>::value) return __bfloat162float(x);
  else return __half2float(x);
}
struct Desc { uint32_t start, lbo, sbo; int swz; };
inline Desc decode(uint64_t d) {
  Desc r; r.start = (uint32_t)(d & 0x3FFF) << 4; r.lbo = (uint32_t)((d >> 16) & 0x3FFF) << 4; r.sbo = (uint32_t)((d >> 32) & 0x3FFF) << 4;
  r.swz = (int)(d >> 62); if (((d >> 49) & 7) != 0) { fprintf(stderr, "base offset used\n"); abort(); }
  if (r.swz != 1) { fprintf(stderr, "expected 128B swizzle\n"); abort(); }
  return r;
}
// A (64 x 32 bytes of K): element (r, k), K-major (trans 0) or MN-major
// (trans 1, 16-bit types: lines of 64 m, 8 k-lines per 1024-byte atom).
template <typename T>
inline float emu_A(const Desc& a, int r, int k, int trans) {
  if (!trans) return emu_ld<T>(a.start + (r % 8) * 128 + (r / 8) * a.sbo + sizeof(T) * k);
  return emu_ld<T>(a.start + (r % 64) * 2 + (r / 64) * a.lbo + (k % 8) * 128 + (k / 8) * a.sbo);
}
// B (32 bytes of K x 256): K-major (trans 0): element (k, n) at row n; MN-major (trans 1, 16-bit types).
template <typename T>
inline float emu_B(const Desc& b, int k, int n, int trans) {
  if (!trans) return emu_ld<T>(b.start + (n % 8) * 128 + (n / 8) * b.sbo + sizeof(T) * k);
  return emu_ld<T>(b.start + (n % 64) * 2 + (n / 64) * b.lbo + (k % 8) * 128 + (k / 8) * b.sbo);
}

// wgmma is asynchronous: an issued wgmma joins this thread's open group,
// commit closes the group, and wait_group<W> runs the oldest committed
// groups until W are left. Each runs then, reading shared memory, its A
// registers and its accumulators as they are at that moment, as the
// hardware may: a kernel that refills a stage, or overwrites an A
// fragment, before the wait that covers its readers gets a wrong product.
struct EmuWgQueue {
  std::vector<std::function<void()>> open;
  std::deque<std::vector<std::function<void()>>> groups;
};
inline std::map<const emu::Fiber*, EmuWgQueue> emu_wg_queues;
inline EmuWgQueue& emu_wg_queue() { return emu_wg_queues[emu::cur]; }
template <typename T, int N> struct Wgmma {
  template <int TRANS_A, int TRANS_B>
  static void run(float (&d)[N / 2], uint64_t da, uint64_t db) {
    static_assert((TRANS_A == 0 && TRANS_B == 0) || sizeof(T) == 2, "tf32 reads K-major only");
    float* dp = d;
    emu_wg_queue().open.push_back([dp, da, db] {
      constexpr int KS = 32 / sizeof(T);  // k16 for 16-bit types, k8 for tf32
      Desc A = decode(da), B = decode(db);
      int tid = emu::cur->tid.x % 128, w = tid / 32, l = tid % 32, g = l / 4, t = l % 4;
      for (int i = 0; i < N / 2; ++i) {
        int row = w * 16 + g + 8 * ((i / 2) % 2), col = (i / 4) * 8 + 2 * t + (i % 2);
        double s = dp[i];
        for (int k = 0; k < KS; ++k) s += (double)emu_A<T>(A, row, k, TRANS_A) * emu_B<T>(B, k, col, TRANS_B);
        dp[i] = (float)s;
      }
    });
  }
};
__device__ __forceinline__ void wgmma_fence() {}
inline void wgmma_commit() {
  EmuWgQueue& q = emu_wg_queue();
  q.groups.push_back(std::move(q.open));
  q.open.clear();
}
template <int W, int MH, int NACC> inline void wgmma_wait_all(float (&)[MH][NACC]) {
  EmuWgQueue& q = emu_wg_queue();
  // Let the other threads (the producer too) run first: what they do
  // between the issue and the wait is what the group may see.
  if (q.groups.size() > (size_t)W) emu::yield();
  while (q.groups.size() > (size_t)W) {
    std::vector<std::function<void()>> g = std::move(q.groups.front());
    q.groups.pop_front();
    for (auto& op : g) op();
  }
}
// Shared addresses are offsets into the running block's window, the same in
// every block of a cluster, as on the GPU.
inline uint32_t smem_addr(const void* p) {
  const ptrdiff_t off = (const unsigned char*)p - emu_window();
  if (off < 0 || off >= (ptrdiff_t)EMU_SMEM) { fprintf(stderr, "smem_addr outside the block's shared memory\n"); abort(); }
  return (uint32_t)off;
}

// Register-A pieces of the tf32 kernel (mm_wgr*): an 8-byte shared load at a
// physical (already swizzled) address, and wgmma m64nNk8 with A gathered
// from the warpgroup's registers in mma.m16n8k8's A layout per warp.
inline float2 lds2(uint32_t addr) {
  if (addr % 8) { fprintf(stderr, "misaligned lds2\n"); abort(); }
  float2 v; memcpy(&v, emu_window() + addr, 8); return v;
}
inline void keep_regs(uint32_t (&)[4][4]) {}
template <int MH, int NACC> inline void keep_acc(float (&)[MH][NACC]) {}
// Per block of a cluster (slot) and warpgroup.
inline uint32_t emu_wg_regs[EMU_RANKS][4][128][4];
inline unsigned emu_wg_count[EMU_RANKS][4], emu_wg_gen[EMU_RANKS][4];
inline void emu_syncwg() {
  const int s = emu::cur->slot, w = emu::cur->tid.x / 128;
  unsigned g = emu_wg_gen[s][w];
  if (++emu_wg_count[s][w] == 128u) { emu_wg_count[s][w] = 0; ++emu_wg_gen[s][w]; }
  else while (emu_wg_gen[s][w] == g) emu::yield();
}
template <int N> struct WgmmaRS {
  static void run(float (&d)[N / 2], const uint32_t (&a)[4], uint64_t db) {
    float* dp = d;
    const uint32_t* ap = a;
    emu_wg_queue().open.push_back([dp, ap, db] { exec(*reinterpret_cast<float(*)[N / 2]>(dp), ap, db); });
  }
  // Every thread of the warpgroup runs its groups at the same wait, so the
  // fragments gather there.
  static void exec(float (&d)[N / 2], const uint32_t* a, uint64_t db) {
    const int wgi = emu::cur->tid.x / 128, lt = emu::cur->tid.x % 128;
    auto& regs = emu_wg_regs[emu::cur->slot];
    for (int i = 0; i < 4; ++i) regs[wgi][lt][i] = a[i];
    emu_syncwg();
    Desc B = decode(db);
    auto A = [&](int row, int k) {
      const int w = row / 16, r = row % 16;
      uint32_t u = regs[wgi][w * 32 + (r % 8) * 4 + k % 4][r / 8 + 2 * (k / 4)];
      u &= ~0x1FFFu;  // the tensor cores read TF32
      float x; memcpy(&x, &u, 4); return x;
    };
    const int w = lt / 32, l = lt % 32, g = l / 4, t = l % 4;
    for (int i = 0; i < N / 2; ++i) {
      int row = w * 16 + g + 8 * ((i / 2) % 2), col = (i / 4) * 8 + 2 * t + (i % 2);
      double s = d[i];
      for (int k = 0; k < 8; ++k) s += (double)A(row, k) * emu_B<float>(B, k, col, 0);
      d[i] = (float)s;
    }
    emu_syncwg();
  }
};

// Clusters: the K-range form (p.kcl), whose blocks share the cluster
// barrier and each other's partials, and pairs, whose multicast loads land
// in every masked block's shared memory and count on its own barrier at
// the same address, and whose consumers arrive on either block's barriers.
// TMA's reduce-add stores are not emulated; reaching one is an error.
inline void emu_unsupported(const char* what) { fprintf(stderr, "FAIL: %s is not emulated\n", what); exit(4); }
inline void emu_fail(const char* what) { fprintf(stderr, "FAIL: %s (block %u, thread %u)\n", what, emu::cur->bid.x, emu::cur->tid.x); exit(6); }
// The running cluster: its blocks (slots 0 .. ranks - 1), and barrier.cluster
// as a split barrier over every thread of every block not exited. PTX: a
// thread arrives once per phase, and again after the wait that saw the
// phase complete; here every arrive must meet its wait before the next
// (stricter: the kernel pairs them), and a wait needs an arrive.
struct EmuCluster {
  unsigned ranks = 1, pending = 0, live = 0, gen = 0;
  unsigned arrived[EMU_RANKS * 384];  // 1 + the phase a thread arrived in, 0: not arrived
  unsigned block_live[EMU_RANKS];  // threads of each block not exited
};
inline EmuCluster emu_cl;
// Named barriers (bar.sync id, count) per block: id 0 is __syncthreads.
inline unsigned emu_named_count[EMU_RANKS][16], emu_named_gen[EMU_RANKS][16], emu_named_want[EMU_RANKS][16];
inline void emu_cluster_begin(unsigned ranks) {
  if (ranks < 1 || ranks > EMU_RANKS || emu::nthreads > 384) { fprintf(stderr, "cluster of %u blocks of %d threads\n", ranks, emu::nthreads); abort(); }
  emu_cl.ranks = ranks; emu_cl.pending = emu_cl.live = ranks * emu::nthreads; emu_cl.gen = 0;
  for (auto& n : emu_cl.block_live) n = emu::nthreads;
  memset(emu_cl.arrived, 0, sizeof emu_cl.arrived);
  memset(emu_named_count, 0, sizeof emu_named_count);
  memset(emu_wg_count, 0, sizeof emu_wg_count);
}
inline unsigned& emu_cl_arrived() { return emu_cl.arrived[emu::cur->slot * emu::nthreads + emu::cur->tid.x]; }
inline void emu_cl_complete() { emu_cl.pending = emu_cl.live; ++emu_cl.gen; ++emu_progress; }
inline void cluster_arrive() {
  unsigned& a = emu_cl_arrived();
  if (a) emu_fail(a - 1 == emu_cl.gen ? "barrier.cluster.arrive twice in one phase" : "barrier.cluster.arrive again before its wait");
  a = 1 + emu_cl.gen;
  if (--emu_cl.pending == 0) emu_cl_complete();
}
inline void cluster_wait() {
  unsigned& a = emu_cl_arrived();
  if (!a) emu_fail("barrier.cluster.wait without an arrive");
  while (emu_cl.gen == a - 1) emu::yield();
  a = 0;
}
// A thread exits: the barrier stops counting it (the GPU's waits are for
// the threads not exited). A block's shared memory goes with its last
// thread: a peer reading it later reads NaNs.
inline void emu_thread_exit() {
  unsigned& a = emu_cl_arrived();
  --emu_cl.live;
  if (!(a && a - 1 == emu_cl.gen) && --emu_cl.pending == 0 && emu_cl.live) emu_cl_complete();
  a = 0;
  if (--emu_cl.block_live[emu::cur->slot] == 0) memset(emu_window(), 0xFF, EMU_SMEM);
}
inline uint32_t cluster_size() { return emu_cl.ranks; }
inline uint32_t cluster_rank() { return (uint32_t)emu::cur->slot; }
inline void cluster_sync() { cluster_arrive(); cluster_wait(); }
inline void kc_meet() {
  cluster_arrive(); cluster_wait();
  cluster_arrive(); cluster_wait();
}
// (Run as if by block `rank`: its shared memory and barriers are the ones
// `emu_window` and `bar_at` find.)
template <class F> void emu_as_rank(uint32_t rank, F f) {
  if (rank >= emu_cl.ranks) { fprintf(stderr, "rank %u of a cluster of %u\n", rank, emu_cl.ranks); abort(); }
  const int self = emu::cur->slot;
  emu::cur->slot = (int)rank;
  f();
  emu::cur->slot = self;
}
// A peer's barrier or shared memory after every thread of that block has
// exited is gone (on the GPU: an error, or a write to another block's
// memory): the kernels must keep a block until its peers are done with it.
inline void emu_peer_live(uint32_t rank, const char* what) {
  if (rank < emu_cl.ranks && emu_cl.block_live[rank] == 0) emu_fail(what);
}
inline void mbar_arrive_cta(uint32_t bar, uint32_t rank) {
  emu_peer_live(rank, "arrive on the barrier of a block that has exited");
  emu_as_rank(rank, [&] { mbar_arrive(bar); });
}
inline void tma_load_mc(uint32_t dst, const CUtensorMap* map, uint32_t bar, int c0, int c1, int c2, uint16_t mask) {
  for (uint32_t r = 0; r < EMU_RANKS; ++r)
    if (mask >> r & 1) {
      emu_peer_live(r, "multicast load into a block that has exited");
      emu_as_rank(r, [&] { tma_load(dst, map, bar, c0, c1, c2); });
    }
}
// A K range's partial into this block's shared memory, and a rank's read
// back at the same offset (mapa + ld.shared::cluster).
inline void sts128f(uint32_t addr, float x, float y, float z, float w) {
  if (addr % 16 || addr + 16 > EMU_SMEM) { fprintf(stderr, "bad st.shared.v4.f32 at %u\n", addr); abort(); }
  const float v[4] = {x, y, z, w};
  memcpy(emu_window() + addr, v, 16);
}
inline float4 ld_cluster4(uint32_t addr, uint32_t rank) {
  if (addr % 16 || addr + 16 > EMU_SMEM || rank >= emu_cl.ranks) { fprintf(stderr, "bad ld.shared::cluster.v4.f32 at %u of rank %u\n", addr, rank); abort(); }
  float4 v; memcpy(&v, emu_smem[rank] + addr, 16); return v;
}
// bar.sync: completes when `count` threads of the block have arrived at
// barrier `id` (1, 2: a consumer warpgroup; 3: both); every arrival of one
// phase must give the same count.
inline void bar_sync(int id, int count) {
  if (id < 1 || id > 15 || count <= 0 || count % 32 || count > emu::nthreads) { fprintf(stderr, "bad bar.sync %d, %d\n", id, count); abort(); }
  const int s = emu::cur->slot;
  unsigned &n = emu_named_count[s][id], &gen = emu_named_gen[s][id], &want = emu_named_want[s][id];
  if (n == 0) want = (unsigned)count;
  else if (want != (unsigned)count) emu_fail("bar.sync arrivals with different counts");
  const unsigned g = gen;
  if (++n == want) { n = 0; ++gen; ++emu_progress; }
  else while (gen == g) emu::yield();
}
// stmatrix.x4 (b16): lane l gives row l % 8 of matrix l / 8's address;
// register i of the lane of row g, column pair t (lane 4 g + t) is
// matrix i's columns 2 t, 2 t + 1 of row g.
inline uint32_t emu_stm_regs[EMU_RANKS * 12][32][4];  // by emu::warp() (12 a block)
inline void stmatrix4(uint32_t addr, uint32_t r0, uint32_t r1, uint32_t r2, uint32_t r3) {
  const int w = emu::warp(), l = emu::lane();
  if (addr % 16 || addr + 16 > EMU_SMEM) { fprintf(stderr, "bad stmatrix row address %u\n", addr); abort(); }
  uint32_t* mine = emu_stm_regs[w][l];
  mine[0] = r0; mine[1] = r1; mine[2] = r2; mine[3] = r3;
  emu::syncwarp();
  uint32_t row[4];
  for (int t = 0; t < 4; ++t) row[t] = emu_stm_regs[w][4 * (l % 8) + t][l / 8];
  emu::syncwarp();
  memcpy(emu_window() + addr, row, 16);
}
// Outputs whose rows TMA cannot address (tma_store 2): shared-memory
// stores and loads, and 16-byte global stores, each checked for alignment.
inline void sts16(uint32_t addr, uint16_t v) {
  if (addr % 2) { fprintf(stderr, "misaligned st.shared.b16\n"); abort(); }
  memcpy(emu_window() + addr, &v, 2);
}
inline uint4 lds128(uint32_t addr) {
  if (addr % 16) { fprintf(stderr, "misaligned ld.shared.v4\n"); abort(); }
  uint4 v; memcpy(&v, emu_window() + addr, 16); return v;
}
inline void stg128(void* dst, uint4 v) {
  if ((uintptr_t)dst % 16) { fprintf(stderr, "misaligned 16-byte global store\n"); abort(); }
  memcpy(dst, &v, 16);
}
template <typename T> inline T lds_elem(uint32_t addr) {
  if (addr % 2) { fprintf(stderr, "misaligned ld.shared.u16\n"); abort(); }
  T x; memcpy(&x, emu_window() + addr, 2); return x;
}
// TMA tiled stores land at once: shared memory from `src` (box rows of
// box[0] elements, 128-byte swizzled or not) to the box at (c0, c1, c2),
// nothing past the tensor's edges (or before its start) written.
inline void tma_store_commit() {}
inline void tma_store_wait_read() {}
inline void prefetch_tensormap(const CUtensorMap*) {}
inline void fence_async_smem() {}
inline void tma_store(const CUtensorMap* map, uint32_t src, int c0, int c1, int c2) {
  const EmuMap* m = reinterpret_cast<const EmuMap*>(map);
  if (src % (m->swizzle ? 1024 : 128)) { fprintf(stderr, "TMA store source %u not %d-aligned\n", src, m->swizzle ? 1024 : 128); abort(); }
  emu_check_box_start("store", c0, m->elem);
  const uint32_t row_bytes = m->box[0] * m->elem;
  if (src + row_bytes * m->box[1] * m->box[2] > EMU_SMEM) { fprintf(stderr, "TMA store source past shared memory\n"); abort(); }
  unsigned char* base = const_cast<unsigned char*>(m->base);
  for (uint32_t i2 = 0; i2 < m->box[2]; ++i2)
    for (uint32_t i1 = 0; i1 < m->box[1]; ++i1)
      for (uint32_t i0 = 0; i0 < m->box[0]; ++i0) {
        const int64_t x0 = (int64_t)c0 + i0, x1 = (int64_t)c1 + i1, x2 = (int64_t)c2 + i2;
        if (x0 < 0 || x1 < 0 || x2 < 0 || (uint64_t)x0 >= m->dims[0] || (uint64_t)x1 >= m->dims[1] || (uint64_t)x2 >= m->dims[2]) continue;
        const uint32_t R = i1 + m->box[1] * i2, off = R * row_bytes + i0 * m->elem;
        const uint32_t phys = m->swizzle ? off ^ ((R % 8) << 4) : off;
        memcpy(base + x0 * m->elem + x1 * m->strides[0] + x2 * m->strides[1], emu_window() + src + phys, m->elem);
      }
}
inline void tma_store_add(const CUtensorMap*, uint32_t, int, int, int) { emu_unsupported("a TMA reduce-add store"); }
inline void __syncwarp(unsigned = 0xffffffffu) { emu::syncwarp(); }

inline void wait_previous_grid() {}  // blocks run one launch at a time
