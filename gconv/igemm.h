/* gconv/igemm.h: the implicit-GEMM engine shared by the convolution directions.
 *
 * What is here: the pieces a direction composes into a GEMM kernel C[M][N] = A[M][Kg] B[Kg][N]
 * whose A and B are gathered from tensors instead of being stored as matrices:
 *   - tile configurations: named macros expanding to (BM, BN, BK, WARPS_M, WARPS_N, STAGES),
 *         e.g. GCONV_TILE_128x128x32; BK counts elements, threads = WARPS_M * WARPS_N * 32
 *         (8 warps of 32 on NVIDIA, 4 waves of 64 on AMD for 256 threads);
 *   - the shared-memory tile format: each pipeline stage holds A as [BM][BK] and B as [BN][BK]
 *         (both with the GEMM's K dimension contiguous), cut into 16-byte chunks whose position
 *         in a row is XOR-swizzled with the row (gconv_impl_igemm_chunk_off) so that ldmatrix,
 *         MFMA operand reads and 16-byte stores are free of bank conflicts;
 *   - copy primitives: 16-byte cp.async with zero fill (sm_80+), commit / wait, and the
 *         register-staged equivalent for targets without cp.async;
 *   - the math of one stage, selected at compile time: wgmma (sm_90a builds, tiles of 64 rows
 *         per warpgroup with 128- or 64-byte rows of K: the smem format above is exactly the
 *         128-/64-byte-swizzled K-major layout wgmma reads through descriptors), mma.sync
 *         m16n8k16 (fp16, bf16) and m16n8k8 tf32 (fp32 when the caller allows tf32) on NVIDIA
 *         sm_80+, MFMA 16x16 on gfx908 / gfx90a / gfx940 (all three types), and fp32 FMA
 *         everywhere else (gfx1030, fp32 without tf32). Every path reads the same smem
 *         format; accumulators are fp32;
 *   - the accumulators' home: gconv_impl_igemm_acc_to_smem stages a band of C rows into shared
 *         memory as fp32 [rows][BN + GCONV_IMPL_CPAD], from where a direction's epilogue reads
 *         rows and stores them with its own index maths and epilogue function.
 *
 * How a direction uses it (gconv/fwd.h is the first user): it writes its gathers, i.e. code
 * that fills a stage's A and B tiles for k-tile kt, either with gconv_impl_igemm_cp_async16 per
 * 16-byte chunk (channels contiguous) or with loads into registers that it stores after the
 * stage's math (any layout), then a main loop of named steps (lag = 2 when the math is
 * asynchronous, wgmma with at least 4 stages, else 1):
 *     prologue: load k-tiles 0..S-1-lag into stages 0.., committing one cp.async group each
 *     for kt:   gconv_impl_igemm_cp_wait(S-lag-1); gconv_impl_igemm_publish; __syncthreads();
 *               issue the loads of k-tile kt+S-lag into stage (kt+S-lag)%S; commit
 *               gconv_impl_igemm_stage_math(acc, stage kt%S, kt == 0)
 *               gconv_impl_igemm_retire(acc, lag-1)      wgmma: wait, at most lag-1 in flight
 *               store the register-staged part of k-tile kt+S-lag
 *     end:      gconv_impl_igemm_retire(acc, 0); cp_wait(0); __syncthreads();
 *     epilogue: gconv_impl_igemm_acc_to_smem, __syncthreads, read rows, store
 * The barrier at the top of iteration kt guarantees that every thread finished (retired) the
 * math of k-tile kt-lag, whose stage is the one refilled in iteration kt. For backward data and
 * backward weight, a direction supplies its own gathers (A from d_out or in, B from the weights
 * or d_out, into the same [rows][K] format: a transposing gather writes element-wise) and its
 * epilogue; the stage math, pipeline steps and accumulator staging are shared.
 *
 * Compile-time constants: the engine functions take the tile as a gconv_impl_tile value and
 * other choices as int arguments; kernels pass literal constants and every function is
 * force-inlined, so loops unroll and register arrays (sized for the largest tile) keep
 * constant indices. Check `nvcc -Xptxas -v`: no stack frame, no spills.
 *
 * Include through gconv/fwd.h (or gconv.h); needs a HIP or CUDA compiler.
 */
#ifndef GCONV_IGEMM_H
#define GCONV_IGEMM_H

#include "device.h"

/* ---- tile configurations ------------------------------------------------------------------
 * (BM, BN, BK, WARPS_M, WARPS_N, STAGES). BM: rows of C per block (GEMM M), BN: columns (GEMM
 * N), BK: elements of the GEMM K dimension per pipeline stage. Warps are counted in 32-thread
 * units; on wave64 targets pairs of them form one wave. STAGES is the pipeline depth on
 * CUDA, lowered where the block's shared memory would pass 227 KB (112 KB for fp32, so that two
 * blocks fit), and 2 on AMD (register-staged loads, 64 KB LDS). Constraints are checked at
 * compile time (GCONV_IMPL_TILE_OK): BM % (16 * WARPS_M) == 0, BN % (8 * WARPS_N) == 0 (16 on
 * AMD), BK 32 or 64, BM and BN at most the thread count and dividing it. On sm_90a a tile with
 * BM = 64 * (threads / 128), BN in {64, 128, 256} and 64- or 128-byte rows of K runs on wgmma
 * (GCONV_TILE_128x128x32: 64-byte swizzle, fp16/bf16; GCONV_TILE_128x128x64: 128-byte). */
#define GCONV_TILE_128x128x32 (128, 128, 32, 2, 4, 4)
#define GCONV_TILE_128x64x32 (128, 64, 32, 4, 2, 4)
#define GCONV_TILE_64x128x32 (64, 128, 32, 2, 4, 4)
#define GCONV_TILE_64x64x32 (64, 64, 32, 2, 2, 4)
#define GCONV_TILE_128x32x32 (128, 32, 32, 4, 1, 4)
#define GCONV_TILE_128x16x32 (128, 16, 32, 4, 1, 4)
/* larger warp tiles (64x64 per warp) for mma.sync */
#define GCONV_TILE_128x128x32_W4 (128, 128, 32, 2, 2, 4)
#define GCONV_TILE_128x128x64_W4 (128, 128, 64, 2, 2, 3)
#define GCONV_TILE_128x256x32 (128, 256, 32, 2, 4, 4)
#define GCONV_TILE_256x128x32 (256, 128, 32, 4, 2, 4)
#define GCONV_TILE_128x64x32_W4 (128, 64, 32, 2, 2, 4)
#define GCONV_TILE_64x32x32 (64, 32, 32, 2, 1, 4)
/* BK 64 (128-byte rows of fp16 K) */
#define GCONV_TILE_128x128x64 (128, 128, 64, 2, 4, 4)
#define GCONV_TILE_128x256x64 (128, 256, 64, 2, 4, 3)
#define GCONV_TILE_64x128x64 (64, 128, 64, 1, 4, 4)

/* A configuration is a parenthesised list so that it passes through macros as one argument.
 * GCONV_IMPL_TILE_ARGS(t) unpacks it; GCONV_IMPL_TILE_THREADS(t) is its thread count and
 * GCONV_IMPL_TILE_OK(t) its constraints as a constant expression. */
#define GCONV_IMPL_TILE_ARGS(t) GCONV_IMPL_TILE_ARGS_ t
#define GCONV_IMPL_TILE_ARGS_(...) __VA_ARGS__
#define GCONV_IMPL_TILE_THREADS(t) GCONV_IMPL_TILE_NT_ t
#define GCONV_IMPL_TILE_NT_(bm, bn, bk, wm, wn, st) ((wm) * (wn) * 32)
#define GCONV_IMPL_TILE_OK(t) GCONV_IMPL_TILE_OK_ t
#define GCONV_IMPL_TILE_OK_(bm, bn, bk, wm, wn, st)                                              \
    ((bm) % (16 * (wm)) == 0 && (bn) % (8 * (wn)) == 0 && (bk) % 32 == 0 && (bk) <= 64 &&        \
     (bm) <= (wm) * (wn) * 32 && ((wm) * (wn) * 32) % (bm) == 0 && (bn) >= 16 &&                 \
     (bn) <= (wm) * (wn) * 32 && ((wm) * (wn) * 32) % (bn) == 0 &&                               \
     (bm) * (bn) / ((wm) * (wn) * 32) <= GCONV_IMPL_MAX_ACC && (bm) / (wm) <= 64 &&              \
     (bn) / (wn) <= 64 && (st) >= 2 && (bm) * (bk) / ((wm) * (wn) * 32) <= 64 &&                 \
     (bn) * (bk) / ((wm) * (wn) * 32) <= 64 && (bm) * (bk) / 4 <= 16 * (wm) * (wn) * 32 &&       \
     (bn) * (bk) / 4 <= 16 * (wm) * (wn) * 32)

typedef struct gconv_impl_tile {
    int bm, bn, bk, wm, wn, st;
} gconv_impl_tile;

/* Accumulators per thread are BM * BN / threads; register arrays are sized for this many. */
#define GCONV_IMPL_MAX_ACC 128
/* Padding (floats) of each staged C row: keeps the fragment stores of mma.sync conflict free. */
#define GCONV_IMPL_CPAD 8

/* ---- target choices -------------------------------------------------------------------- */

#define GCONV_IMPL_MATH_FMA 0
#define GCONV_IMPL_MATH_MMA 1
#define GCONV_IMPL_MATH_MFMA 2
#define GCONV_IMPL_MATH_WGMMA 3

/* Hopper warpgroup MMA (wgmma): sm_90a device passes only (nvcc -gencode
 * arch=compute_90a,code=sm_90a); plain sm_90 builds take mma.sync with the same tiles. */
#ifndef GCONV_IMPL_HAS_WGMMA
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define GCONV_IMPL_HAS_WGMMA 1
#else
#define GCONV_IMPL_HAS_WGMMA 0
#endif
#endif

/* The tensor-core family of the device pass (FMA in host passes, where it is never used). */
#ifndef GCONV_IMPL_IGEMM_MATH
#if GCONV_HAS_MMA_SYNC
#define GCONV_IMPL_IGEMM_MATH GCONV_IMPL_MATH_MMA
#elif GCONV_HAS_MFMA
#define GCONV_IMPL_IGEMM_MATH GCONV_IMPL_MATH_MFMA
#else
#define GCONV_IMPL_IGEMM_MATH GCONV_IMPL_MATH_FMA
#endif
#endif

/* cp.async (sm_80+): loads go straight to shared memory; elsewhere through registers. */
#ifndef GCONV_IMPL_IGEMM_CP_ASYNC
#define GCONV_IMPL_IGEMM_CP_ASYNC GCONV_HAS_MMA_SYNC
#endif

/* bf16 MFMA: gfx908 has only the 16x16x8 form, gfx90a / gfx940 the 16x16x16 "_1k" form. */
#if defined(__gfx908__)
#define GCONV_IMPL_MFMA_BF16_K 8
#else
#define GCONV_IMPL_MFMA_BF16_K 16
#endif

/* Shared memory. MAX: the most one block may have; BUDGET: what fp32 pipelines (and staged C
 * tiles beyond their pipeline) may take, so that two blocks still fit on an SM; MAX_STAGES: the
 * deepest pipeline. These depend on the platform, not on the device pass, so host and device
 * agree on them. */
#ifndef GCONV_IMPL_SMEM_MAX
#if defined(GCONV_PLATFORM_CUDA)
#define GCONV_IMPL_SMEM_MAX (227 * 1024)
#define GCONV_IMPL_SMEM_BUDGET (112 * 1024)
#define GCONV_IMPL_MAX_STAGES 8
#define GCONV_IMPL_MIN_WG_STAGES 3
#else
#define GCONV_IMPL_SMEM_MAX (64 * 1024)
#define GCONV_IMPL_SMEM_BUDGET (64 * 1024)
#define GCONV_IMPL_MAX_STAGES 2
#define GCONV_IMPL_MIN_WG_STAGES 2
#endif
#endif

/* Dynamic shared memory of a kernel, 16-byte aligned. */
#ifndef GCONV_IMPL_DYN_SMEM
#if defined(GCONV_PLATFORM_CUDA)
#define GCONV_IMPL_DYN_SMEM(name) extern __shared__ __align__(16) unsigned char name[]
#else
#define GCONV_IMPL_DYN_SMEM(name) extern __shared__ __attribute__((aligned(16))) unsigned char name[]
#endif
#endif

#if defined(__cplusplus)
#define GCONV_IMPL_STATIC_ASSERT(c, msg) static_assert(c, msg)
#else
#define GCONV_IMPL_STATIC_ASSERT(c, msg) _Static_assert(c, msg)
#endif

/* ---- tile arithmetic (host and device agree) ----------------------------------------------- */

static inline GCONV_HD int gconv_impl_tile_threads(gconv_impl_tile t)
{
    return t.wm * t.wn * 32;
}

/* Elements per 16-byte chunk. */
static inline GCONV_HD int gconv_impl_igemm_vec(int esize)
{
    return 16 / esize;
}

static inline GCONV_HD int gconv_impl_tile_stage_bytes(gconv_impl_tile t, int esize)
{
    return (t.bm + t.bn) * t.bk * esize;
}

/* Whether the tile has the shape of the wgmma path: one or more warpgroups of 64 rows each,
 * 128-byte rows of K (BK = 64 fp16 / bf16, 32 fp32: 128-byte swizzle) or 64-byte rows (BK = 32
 * fp16 / bf16: 64-byte swizzle), N of 64, 128 or 256. */
static inline GCONV_HD int gconv_impl_tile_wgmma_shape(gconv_impl_tile t, int esize)
{
    const int nt = gconv_impl_tile_threads(t);
    return (t.bk * esize == 128 || (t.bk * esize == 64 && esize == 2)) && nt % 128 == 0 &&
           t.bm == 64 * (nt / 128) &&
           (t.bn == 64 || t.bn == 128 || t.bn == 256);
}

static inline GCONV_HD int gconv_impl_tile_stages(gconv_impl_tile t, int esize)
{
    const int sb = gconv_impl_tile_stage_bytes(t, esize);
    const int fit = (esize == 4 ? GCONV_IMPL_SMEM_BUDGET : GCONV_IMPL_SMEM_MAX) / sb;
    const int lo = gconv_impl_tile_wgmma_shape(t, esize) ? GCONV_IMPL_MIN_WG_STAGES : 2;
    int s = t.st < fit ? t.st : fit;
    s = s < GCONV_IMPL_MAX_STAGES ? s : GCONV_IMPL_MAX_STAGES;
    return s < lo ? lo : s;
}

/* Bytes of the staged C tile when all BM rows fit at once. */
static inline GCONV_HD int gconv_impl_tile_cbytes(gconv_impl_tile t)
{
    return t.bm * (t.bn + GCONV_IMPL_CPAD) * 4;
}

/* Dynamic shared memory of a kernel: the pipeline, or the staged C tile if larger (up to the
 * budget; beyond it the C tile is staged in bands of rows). 1 KB extra on CUDA so that the
 * stages can start on a 1024-byte boundary (wgmma's swizzle pattern repeats every 1024 B). */
static inline GCONV_HD int gconv_impl_tile_smem(gconv_impl_tile t, int esize)
{
    int pipe = gconv_impl_tile_stages(t, esize) * gconv_impl_tile_stage_bytes(t, esize);
    int c = gconv_impl_tile_cbytes(t);
    int lim = pipe > GCONV_IMPL_SMEM_BUDGET ? pipe : GCONV_IMPL_SMEM_BUDGET;
    if (c > lim)
        c = lim;
#if defined(GCONV_PLATFORM_CUDA)
    return (pipe > c ? pipe : c) + 1024;
#else
    return pipe > c ? pipe : c;
#endif
}

/* Rows of C staged per band: BM halved until a band fits in the pipeline's shared memory. */
static inline GCONV_HD int gconv_impl_tile_band_rows(gconv_impl_tile t, int esize)
{
    int rows = t.bm;
    int pipe = gconv_impl_tile_stages(t, esize) * gconv_impl_tile_stage_bytes(t, esize);
    int c = gconv_impl_tile_cbytes(t);
    int lim = pipe > GCONV_IMPL_SMEM_BUDGET ? pipe : GCONV_IMPL_SMEM_BUDGET;
    int smem = pipe > (c < lim ? c : lim) ? pipe : (c < lim ? c : lim);
    while (rows > 16 && rows * (t.bn + GCONV_IMPL_CPAD) * 4 > smem)
        rows /= 2;
    return rows;
}

/* Byte offset of chunk q of row r in a [rows][cpr chunks] tile. The XOR spreads the 8 rows
 * that one ldmatrix (or one quarter-warp of 16-byte accesses) touches over all 8 16-byte
 * bank groups of a 128-byte line: with cpr chunks per row, 8/cpr consecutive rows share a
 * line, so the swizzle changes every 8/cpr rows. Rows 8 apart get the same swizzle. */
static __device__ __forceinline__ int gconv_impl_igemm_swz(int r, int cpr)
{
    if (cpr >= 8)
        return r & 7;
    if (cpr == 4)
        return (r >> 1) & 3;
    if (cpr == 2)
        return (r >> 2) & 1;
    return 0;
}

static __device__ __forceinline__ int gconv_impl_igemm_chunk_off(int r, int q, int cpr)
{
    return r * cpr * 16 + ((q ^ gconv_impl_igemm_swz(r, cpr)) << 4);
}

/* ---- copy primitives ------------------------------------------------------------------------
 * A CPU emulator used during development defines GCONV_IMPL_IGEMM_PRIMITIVES and supplies
 * these functions itself; kernels see the same interface either way. */
#ifndef GCONV_IMPL_IGEMM_PRIMITIVES

typedef struct gconv_impl_igemm_u4 {
    unsigned x, y, z, w;
} gconv_impl_igemm_u4;

/* 32-bit shared-memory address of a generic pointer into shared memory. */
static __device__ __forceinline__ unsigned gconv_impl_igemm_smem_addr(const void *p)
{
#if defined(GCONV_PLATFORM_CUDA)
    return (unsigned)__cvta_generic_to_shared(p);
#else
    return (unsigned)(unsigned long long)p;
#endif
}

/* 16 bytes global -> shared without passing through registers; zero-filled if !valid (then
 * g is not read; it must still be a valid address of the tensor). CA (a literal): 1 through L1
 * (cp.async.ca: for tiles whose rows the same block copies again soon, such as the halo
 * kernels' consecutive row bands, which share all but R of their rows), 0 around it (.cg). */
static __device__ __forceinline__ void gconv_impl_igemm_cp_async16_l1(unsigned s, const void *g,
                                                                      int valid, const int CA)
{
#if GCONV_IMPL_IGEMM_CP_ASYNC
    if (CA)
        asm volatile("cp.async.ca.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(g),
                     "r"(valid ? 16 : 0));
    else
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(g),
                     "r"(valid ? 16 : 0));
#else
    (void)s, (void)g, (void)valid, (void)CA;
#endif
}

/* The .cg form, for tiles a block reads once. */
static __device__ __forceinline__ void gconv_impl_igemm_cp_async16(unsigned s, const void *g, int valid)
{
    gconv_impl_igemm_cp_async16_l1(s, g, valid, 0);
}

/* The same for 8 bytes (cp.async.ca: the .cg form takes only 16). */
static __device__ __forceinline__ void gconv_impl_igemm_cp_async8(unsigned s, const void *g, int valid)
{
#if GCONV_IMPL_IGEMM_CP_ASYNC
    asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" ::"r"(s), "l"(g),
                 "r"(valid ? 8 : 0));
#else
    (void)s, (void)g, (void)valid;
#endif
}

static __device__ __forceinline__ void gconv_impl_igemm_cp_commit(void)
{
#if GCONV_IMPL_IGEMM_CP_ASYNC
    asm volatile("cp.async.commit_group;\n" ::);
#endif
}

/* Wait until at most n committed groups are still in flight (n is a compile-time constant
 * after inlining; the instruction needs an immediate). */
static __device__ __forceinline__ void gconv_impl_igemm_cp_wait(int n)
{
#if GCONV_IMPL_IGEMM_CP_ASYNC
    switch (n) {
    case 0: asm volatile("cp.async.wait_group 0;\n" ::); break;
    case 1: asm volatile("cp.async.wait_group 1;\n" ::); break;
    case 2: asm volatile("cp.async.wait_group 2;\n" ::); break;
    case 3: asm volatile("cp.async.wait_group 3;\n" ::); break;
    case 4: asm volatile("cp.async.wait_group 4;\n" ::); break;
    case 5: asm volatile("cp.async.wait_group 5;\n" ::); break;
    default: asm volatile("cp.async.wait_group 6;\n" ::); break;
    }
#else
    (void)n;
#endif
}

static __device__ __forceinline__ gconv_impl_igemm_u4 gconv_impl_igemm_ld_global16(const void *g)
{
    const uint4 v = *(const uint4 *)g;
    gconv_impl_igemm_u4 r;
    r.x = v.x, r.y = v.y, r.z = v.z, r.w = v.w;
    return r;
}

static __device__ __forceinline__ gconv_impl_igemm_u4 gconv_impl_igemm_ld_shared16(const unsigned char *s)
{
    const uint4 v = *(const uint4 *)s;
    gconv_impl_igemm_u4 r;
    r.x = v.x, r.y = v.y, r.z = v.z, r.w = v.w;
    return r;
}

static __device__ __forceinline__ void gconv_impl_igemm_st_shared16(unsigned char *s, gconv_impl_igemm_u4 v)
{
    uint4 w;
    w.x = v.x, w.y = v.y, w.z = v.z, w.w = v.w;
    *(uint4 *)s = w;
}

/* ---- mbarriers (CUDA sm_80+): in shared memory at the 32-bit address a; init with an
 * arrival count, arrive (release), and wait (acquire) for the completion of the phase of the
 * given parity. gconv_impl_mbar_try_wait (sm_90) lets the hardware suspend the waiting thread
 * instead of polling. */
#if GCONV_HAS_MMA_SYNC
static __device__ __forceinline__ void gconv_impl_mbar_init(unsigned a, int count)
{
    asm volatile("mbarrier.init.shared.b64 [%0], %1;\n" ::"r"(a), "r"(count) : "memory");
}

static __device__ __forceinline__ void gconv_impl_mbar_arrive(unsigned a)
{
    asm volatile("{\n .reg .b64 st;\n mbarrier.arrive.shared.b64 st, [%0];\n}\n" ::"r"(a)
                 : "memory");
}

/* suspend: 1 waits with try_wait (sm_90 and newer; elsewhere test_wait), 0 with test_wait */
static __device__ __forceinline__ void gconv_impl_mbar_wait_(unsigned a, unsigned parity,
                                                             int suspend)
{
    unsigned done;
    (void)suspend;
    do {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
        if (suspend)
            asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared.b64 p, [%1], %2;\n"
                         " selp.u32 %0, 1, 0, p;\n}\n"
                         : "=r"(done)
                         : "r"(a), "r"(parity)
                         : "memory");
        else
#endif
            asm volatile("{\n .reg .pred p;\n mbarrier.test_wait.parity.shared.b64 p, [%1], %2;\n"
                         " selp.u32 %0, 1, 0, p;\n}\n"
                         : "=r"(done)
                         : "r"(a), "r"(parity)
                         : "memory");
    } while (!done);
}

/* Arrive on the mbarrier at a once every cp.async this thread has issued so far has landed
 * (.noinc: the arrival counts against the barrier's expected count, as an arrive does). */
static __device__ __forceinline__ void gconv_impl_mbar_cp_arrive(unsigned a)
{
    asm volatile("cp.async.mbarrier.arrive.noinc.shared.b64 [%0];\n" ::"r"(a) : "memory");
}

static __device__ __forceinline__ void gconv_impl_mbar_wait(unsigned a, unsigned parity)
{
    gconv_impl_mbar_wait_(a, parity, 0);
}

static __device__ __forceinline__ void gconv_impl_mbar_try_wait(unsigned a, unsigned parity)
{
    gconv_impl_mbar_wait_(a, parity, 1);
}
#endif

#if GCONV_IMPL_HAS_WGMMA
/* Thread-block clusters (a kernel launched with a cluster dimension; sm_90): this block's rank
 * in its cluster, and a barrier of every thread of every block of the cluster (release /
 * acquire: shared-memory writes before it are seen after it, also through distributed shared
 * memory). */
static __device__ __forceinline__ unsigned gconv_impl_cluster_rank(void)
{
    unsigned r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
    return r;
}

static __device__ __forceinline__ void gconv_impl_cluster_sync(void)
{
    asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;\n" ::: "memory");
}

/* Arm the mbarrier at a for `bytes` of copy-engine copies and arrive (the phase completes when
 * they have landed; sm_90). */
static __device__ __forceinline__ void gconv_impl_ws_bar_expect(unsigned a, unsigned bytes)
{
    asm volatile("{\n.reg .b64 st;\nmbarrier.arrive.expect_tx.shared::cta.b64 st, [%0], %1;\n}\n"
                 ::"r"(a), "r"(bytes)
                 : "memory");
}
#endif

/* ---- NVIDIA tensor-core primitives (sm_80+) ---- */
#if GCONV_IMPL_IGEMM_MATH == GCONV_IMPL_MATH_MMA
/* Four 8x8 b16 matrices; thread i supplies the address of row i%8 of matrix i/8 and receives
 * row (lane/4), elements 2*(lane%4) and +1, of each matrix in r[0..3]. */
static __device__ __forceinline__ void gconv_impl_igemm_ldsm_x4(unsigned a, unsigned *r)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(a));
}

static __device__ __forceinline__ void gconv_impl_igemm_ldsm_x2(unsigned a, unsigned *r)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];\n"
                 : "=r"(r[0]), "=r"(r[1])
                 : "r"(a));
}

/* The same with .trans: each 8x8 matrix is delivered transposed, so a tile stored with the
 * GEMM's M (or N) index contiguous and K along the rows reads out in the fragment layout of a
 * K-contiguous one (gconv_impl_igemm_math_mma_t). */
static __device__ __forceinline__ void gconv_impl_igemm_ldsm_x4_t(unsigned a, unsigned *r)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(a));
}

static __device__ __forceinline__ void gconv_impl_igemm_ldsm_x2_t(unsigned a, unsigned *r)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];\n"
                 : "=r"(r[0]), "=r"(r[1])
                 : "r"(a));
}

/* d[0..3] += A (16x16, fragments a[0..3]) * B (16x8, fragments b[0..1]). */
static __device__ __forceinline__ void gconv_impl_igemm_mma_f16(float *d, const unsigned *a,
                                                          const unsigned *b)
{
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, "
                 "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

static __device__ __forceinline__ void gconv_impl_igemm_mma_bf16(float *d, const unsigned *a,
                                                           const unsigned *b)
{
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, "
                 "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

/* m16n8k8 (16-bit): A 16x8 in a[0..1] (rows 0-7, 8-15), B 8x8 in b. */
static __device__ __forceinline__ void gconv_impl_igemm_mma_k8_f16(float *d, const unsigned *a,
                                                                  unsigned b)
{
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, "
                 "{%4, %5}, {%6}, {%0, %1, %2, %3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(b));
}

static __device__ __forceinline__ void gconv_impl_igemm_mma_k8_bf16(float *d, const unsigned *a,
                                                                   unsigned b)
{
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, "
                 "{%4, %5}, {%6}, {%0, %1, %2, %3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(b));
}

/* d += A (16x8 tf32) * B (8x8 tf32): same fragment positions as the 16-bit form, in words. */
static __device__ __forceinline__ void gconv_impl_igemm_mma_tf32(float *d, const unsigned *a,
                                                           const unsigned *b)
{
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, "
                 "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

/* fp32 bits -> tf32 (round to nearest, ties away), still in a 32-bit register. */
static __device__ __forceinline__ unsigned gconv_impl_igemm_cvt_tf32(unsigned x)
{
    unsigned r;
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(__uint_as_float(x)));
    return r;
}
#endif /* MMA */

/* ---- AMD matrix-core primitives (gfx908 / gfx90a / gfx940, wave64) ----
 * 16x16 output blocks; lane l holds A[l%16][k..] and B[k..][l%16] with k = kgroup*(l/16),
 * and D[4*(l/16) + i][l%16] in d[i]. */
#if GCONV_IMPL_IGEMM_MATH == GCONV_IMPL_MATH_MFMA
typedef float gconv_impl_igemm_f32x4 __attribute__((ext_vector_type(4)));
typedef _Float16 gconv_impl_igemm_f16x4 __attribute__((ext_vector_type(4)));
typedef short gconv_impl_igemm_i16x4 __attribute__((ext_vector_type(4)));
typedef short gconv_impl_igemm_i16x2 __attribute__((ext_vector_type(2)));

static __device__ __forceinline__ gconv_impl_igemm_f32x4 gconv_impl_igemm_f32x4_load(const float *d)
{
    gconv_impl_igemm_f32x4 v;
    v.x = d[0], v.y = d[1], v.z = d[2], v.w = d[3];
    return v;
}

static __device__ __forceinline__ void gconv_impl_igemm_f32x4_store(float *d, gconv_impl_igemm_f32x4 v)
{
    d[0] = v.x, d[1] = v.y, d[2] = v.z, d[3] = v.w;
}

/* Two 32-bit words as one 64-bit value (HIP's uint2 is not trivially copyable for bit casts). */
static __device__ __forceinline__ unsigned long long gconv_impl_igemm_u64(uint2 v)
{
    return ((unsigned long long)v.y << 32) | v.x;
}

/* 16x16x16 fp16: a, b are 4 halves (k = 4*(l/16) + 0..3) packed in two words. */
static __device__ __forceinline__ void gconv_impl_igemm_mfma_f16(float *d, uint2 a, uint2 b)
{
    gconv_impl_igemm_f32x4 c = gconv_impl_igemm_f32x4_load(d);
    c = __builtin_amdgcn_mfma_f32_16x16x16f16(
        __builtin_bit_cast(gconv_impl_igemm_f16x4, gconv_impl_igemm_u64(a)),
        __builtin_bit_cast(gconv_impl_igemm_f16x4, gconv_impl_igemm_u64(b)), c, 0, 0, 0);
    gconv_impl_igemm_f32x4_store(d, c);
}

/* bf16: 16x16x16 (4 values, k = 4*(l/16)) on gfx90a / gfx940, 16x16x8 (2 values,
 * k = 2*(l/16)) on gfx908; the caller walks k in steps of GCONV_IMPL_MFMA_BF16_K. */
static __device__ __forceinline__ void gconv_impl_igemm_mfma_bf16(float *d, uint2 a, uint2 b)
{
    gconv_impl_igemm_f32x4 c = gconv_impl_igemm_f32x4_load(d);
#if GCONV_IMPL_MFMA_BF16_K == 8
    c = __builtin_amdgcn_mfma_f32_16x16x8bf16(__builtin_bit_cast(gconv_impl_igemm_i16x2, a.x),
                                              __builtin_bit_cast(gconv_impl_igemm_i16x2, b.x), c, 0, 0,
                                              0);
#else
    c = __builtin_amdgcn_mfma_f32_16x16x16bf16_1k(
        __builtin_bit_cast(gconv_impl_igemm_i16x4, gconv_impl_igemm_u64(a)),
        __builtin_bit_cast(gconv_impl_igemm_i16x4, gconv_impl_igemm_u64(b)), c, 0, 0, 0);
#endif
    gconv_impl_igemm_f32x4_store(d, c);
}

/* 16x16x4 fp32: one value each, k = l/16. */
static __device__ __forceinline__ void gconv_impl_igemm_mfma_f32(float *d, float a, float b)
{
    gconv_impl_igemm_f32x4 c = gconv_impl_igemm_f32x4_load(d);
    c = __builtin_amdgcn_mfma_f32_16x16x4f32(a, b, c, 0, 0, 0);
    gconv_impl_igemm_f32x4_store(d, c);
}
#endif /* MFMA */


/* ---- Hopper wgmma primitives (sm_90a) ----
 * A and B come from shared memory through 64-bit descriptors (start address, stride between
 * 8-row groups, 128-byte swizzle); the tiles are K-major with 128-byte rows, i.e. exactly the
 * swizzled [rows][8 chunks] format above with 1024-byte aligned stages. One warpgroup (4 warps,
 * 128 threads) computes 64 x N; thread lane l of warp w holds, for each 8-column block j,
 * D[16w + l/4 (+8)][8j + 2(l%4) (+1)] in d[4j .. 4j+3]. */
#if GCONV_IMPL_HAS_WGMMA
/* rb: bytes per row, 128 (128-byte swizzle) or 64 (64-byte swizzle). */
static __device__ __forceinline__ unsigned long long gconv_impl_igemm_wgmma_desc(unsigned saddr,
                                                                                int rb)
{
    /* bits 0-13 start >> 4, 16-29 leading byte offset (unused for swizzled K-major: 1),
     * 32-45 stride byte offset >> 4 (8 rows between 8-row groups), 62-63 swizzle (1 = 128 B,
     * 2 = 64 B) */
    return (unsigned long long)((saddr & 0x3ffffu) >> 4) | (1ull << 16) |
           ((unsigned long long)(rb * 8 >> 4) << 32) | ((rb == 128 ? 1ull : 2ull) << 62);
}

/* Descriptor of an MN-major operand, 128-byte swizzle: rows along the reduction index, each
 * 64 M / N elements (128 bytes), 8-row groups 1024 bytes apart (the stride byte offset); the
 * next 64 M / N elements start mn_bytes further on (the leading byte offset; used when the
 * instruction's M or N exceeds 64). saddr: 1024-byte aligned plus a multiple of 1024. */
static __device__ __forceinline__ unsigned long long gconv_impl_igemm_wgmma_desc_mn(unsigned saddr,
                                                                                   int mn_bytes)
{
    return (unsigned long long)((saddr & 0x3ffffu) >> 4) |
           ((unsigned long long)((unsigned)mn_bytes >> 4 & 0x3fffu) << 16) | (64ull << 32) |
           (1ull << 62);
}

static __device__ __forceinline__ void gconv_impl_igemm_wgmma_fence(void)
{
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}

static __device__ __forceinline__ void gconv_impl_igemm_wgmma_commit(void)
{
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}

/* Wait until at most n wgmma groups of this warpgroup are pending (n constant: 0 or 1). */
static __device__ __forceinline__ void gconv_impl_igemm_wgmma_wait(int n)
{
    if (n == 0)
        asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
    else
        asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");
}

/* Shared memory written through the generic proxy (cp.async, st.shared) becomes visible to the
 * tensor cores' async proxy: each writing thread fences before the barrier. */
static __device__ __forceinline__ void gconv_impl_igemm_fence_proxy_async(void)
{
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

/* Keep the compiler from moving accumulator reads or writes across a wgmma wait. */
static __device__ __forceinline__ void gconv_impl_igemm_reg_fence(float *x)
{
    asm volatile("" : "+f"(*x)::"memory");
}

/* wgmma with fp32 accumulators d[0 .. N/2-1] (thread layout above), operands from shared memory
 * through descriptors da, db; scale_d 0: d = A*B, else d += A*B. The register lists are spelled
 * out once per accumulator count (GCONV_IMPL_WG_D*, GCONV_IMPL_WG_O*), and each instruction is
 * one GCONV_IMPL_WGMMA_DEF line. imm: the immediates after the predicate, scale-a and scale-b
 * (1, 1), then for 16-bit types transpose-a and transpose-b: 0, 0 reads both operands K-major,
 * 1, 1 both MN-major (rows along the reduction index, 64 M / N elements a 128-byte row, as
 * gconv_impl_igemm_wgmma_desc_mn describes). */
#define GCONV_IMPL_WG_D32                                                                          \
    "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, "       \
    "%19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}"
#define GCONV_IMPL_WG_D64                                                                          \
    "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, "       \
    "%19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, "   \
    "%37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, "   \
    "%55, %56, %57, %58, %59, %60, %61, %62, %63}"
#define GCONV_IMPL_WG_D76                                                                          \
    "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, "       \
    "%19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, "        \
    "%36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, "        \
    "%53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, "        \
    "%70, %71, %72, %73, %74, %75}"
#define GCONV_IMPL_WG_D128                                                                         \
    "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, "       \
    "%19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, "   \
    "%37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, "   \
    "%55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, "   \
    "%73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, "   \
    "%91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, "      \
    "%107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, "   \
    "%122, %123, %124, %125, %126, %127}"
#define GCONV_IMPL_WG_O32(d)                                                                       \
    "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),            \
    "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),        \
    "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]),     \
    "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]),     \
    "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
#define GCONV_IMPL_WG_O64(d)                                                                       \
    GCONV_IMPL_WG_O32(d),                                                                          \
    "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]),     \
    "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]),     \
    "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]),     \
    "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]),     \
    "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
#define GCONV_IMPL_WG_O76(d)                                                                       \
    GCONV_IMPL_WG_O64(d),                                                                          \
    "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]),     \
    "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75])
#define GCONV_IMPL_WG_O128(d)                                                                      \
    GCONV_IMPL_WG_O64(d),                                                                          \
    "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]),     \
    "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]),     \
    "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]),     \
    "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]),     \
    "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]), "+f"(d[98]),     \
    "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), "+f"(d[104]),             \
    "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]),            \
    "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]),            \
    "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]), "+f"(d[122]),            \
    "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
/* NR: accumulators; ops: "%NR, %NR+1" (the descriptors); pr: "%NR+2" (scale_d) */
#define GCONV_IMPL_WGMMA_DEF(fname, NR, ops, pr, inst, imm)                                      \
    static __device__ __forceinline__ void fname(float *d, unsigned long long da,                \
                                                 unsigned long long db, int scale_d)             \
    {                                                                                            \
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " pr ", 0;\n" inst " " GCONV_IMPL_WG_D##NR \
                     ", " ops ", p, " imm ";\n}\n"                                               \
                     : GCONV_IMPL_WG_O##NR(d)                                                    \
                     : "l"(da), "l"(db), "r"(scale_d));                                          \
    }
/* K-major A and B */
GCONV_IMPL_WGMMA_DEF(gconv_impl_igemm_wgmma_n64_f16, 32, "%32, %33", "%34",
                     "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16", "1, 1, 0, 0")
GCONV_IMPL_WGMMA_DEF(gconv_impl_igemm_wgmma_n64_bf16, 32, "%32, %33", "%34",
                     "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16", "1, 1, 0, 0")
GCONV_IMPL_WGMMA_DEF(gconv_impl_igemm_wgmma_n64_tf32, 32, "%32, %33", "%34",
                     "wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32", "1, 1")
GCONV_IMPL_WGMMA_DEF(gconv_impl_igemm_wgmma_n128_f16, 64, "%64, %65", "%66",
                     "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16", "1, 1, 0, 0")
GCONV_IMPL_WGMMA_DEF(gconv_impl_igemm_wgmma_n128_bf16, 64, "%64, %65", "%66",
                     "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16", "1, 1, 0, 0")
GCONV_IMPL_WGMMA_DEF(gconv_impl_igemm_wgmma_n128_tf32, 64, "%64, %65", "%66",
                     "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32", "1, 1")
GCONV_IMPL_WGMMA_DEF(gconv_impl_igemm_wgmma_n256_f16, 128, "%128, %129", "%130",
                     "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16", "1, 1, 0, 0")
GCONV_IMPL_WGMMA_DEF(gconv_impl_igemm_wgmma_n256_bf16, 128, "%128, %129", "%130",
                     "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16", "1, 1, 0, 0")
GCONV_IMPL_WGMMA_DEF(gconv_impl_igemm_wgmma_n256_tf32, 128, "%128, %129", "%130",
                     "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32", "1, 1")
/* MN-major A and B (both transposed) */
GCONV_IMPL_WGMMA_DEF(gconv_impl_igemm_wgmma_n64_f16_mn, 32, "%32, %33", "%34",
                     "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16", "1, 1, 1, 1")
GCONV_IMPL_WGMMA_DEF(gconv_impl_igemm_wgmma_n64_bf16_mn, 32, "%32, %33", "%34",
                     "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16", "1, 1, 1, 1")
GCONV_IMPL_WGMMA_DEF(gconv_impl_igemm_wgmma_n128_f16_mn, 64, "%64, %65", "%66",
                     "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16", "1, 1, 1, 1")
GCONV_IMPL_WGMMA_DEF(gconv_impl_igemm_wgmma_n128_bf16_mn, 64, "%64, %65", "%66",
                     "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16", "1, 1, 1, 1")
GCONV_IMPL_WGMMA_DEF(gconv_impl_igemm_wgmma_n256_f16_mn, 128, "%128, %129", "%130",
                     "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16", "1, 1, 1, 1")
GCONV_IMPL_WGMMA_DEF(gconv_impl_igemm_wgmma_n256_bf16_mn, 128, "%128, %129", "%130",
                     "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16", "1, 1, 1, 1")
/* K-major A, MN-major B */
GCONV_IMPL_WGMMA_DEF(gconv_impl_igemm_wgmma_n128_f16_bmn, 64, "%64, %65", "%66",
                     "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16", "1, 1, 0, 1")
GCONV_IMPL_WGMMA_DEF(gconv_impl_igemm_wgmma_n128_bf16_bmn, 64, "%64, %65", "%66",
                     "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16", "1, 1, 0, 1")
GCONV_IMPL_WGMMA_DEF(gconv_impl_igemm_wgmma_n256_f16_bmn, 128, "%128, %129", "%130",
                     "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16", "1, 1, 0, 1")
GCONV_IMPL_WGMMA_DEF(gconv_impl_igemm_wgmma_n256_bf16_bmn, 128, "%128, %129", "%130",
                     "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16", "1, 1, 0, 1")

/* n = 152 (the transposed warp-specialised tile of gconv/igemm_ws.h: 152 output pixels as
 * the instruction's N): K-major A and B, and MN-major A with K-major B */
GCONV_IMPL_WGMMA_DEF(gconv_impl_igemm_wgmma_n152_f16, 76, "%76, %77", "%78",
                     "wgmma.mma_async.sync.aligned.m64n152k16.f32.f16.f16", "1, 1, 0, 0")
GCONV_IMPL_WGMMA_DEF(gconv_impl_igemm_wgmma_n152_bf16, 76, "%76, %77", "%78",
                     "wgmma.mma_async.sync.aligned.m64n152k16.f32.bf16.bf16", "1, 1, 0, 0")
GCONV_IMPL_WGMMA_DEF(gconv_impl_igemm_wgmma_n152_f16_amn, 76, "%76, %77", "%78",
                     "wgmma.mma_async.sync.aligned.m64n152k16.f32.f16.f16", "1, 1, 1, 0")
GCONV_IMPL_WGMMA_DEF(gconv_impl_igemm_wgmma_n152_bf16_amn, 76, "%76, %77", "%78",
                     "wgmma.mma_async.sync.aligned.m64n152k16.f32.bf16.bf16", "1, 1, 1, 0")

/* One wgmma of a warpgroup into acc: n columns (64, 128, 152 or 256), element type dt
 * (GCONV_F32 runs tf32), both operands K-major (mn 0), both MN-major (mn 1), A K-major and B
 * MN-major (mn 2) or A MN-major and B K-major (mn 3); mn 1: fp16 / bf16, n 64, 128 or 256;
 * mn 2: fp16 / bf16, n 128 or 256;
 * n 152: fp16 / bf16, mn 0 or 3. n, dt and mn are constants after inlining: one instruction
 * remains. */
static __device__ __forceinline__ void gconv_impl_igemm_wgmma(float *acc, unsigned long long da,
                                                              unsigned long long db, int sc,
                                                              const int n, const gconv_dtype dt,
                                                              const int mn)
{
    if (n == 152) {
        if (mn == 3) {
            if (dt == GCONV_BF16)
                gconv_impl_igemm_wgmma_n152_bf16_amn(acc, da, db, sc);
            else
                gconv_impl_igemm_wgmma_n152_f16_amn(acc, da, db, sc);
        } else {
            if (dt == GCONV_BF16)
                gconv_impl_igemm_wgmma_n152_bf16(acc, da, db, sc);
            else
                gconv_impl_igemm_wgmma_n152_f16(acc, da, db, sc);
        }
    } else if (mn == 2) {
        if (n == 256) {
            if (dt == GCONV_BF16)
                gconv_impl_igemm_wgmma_n256_bf16_bmn(acc, da, db, sc);
            else
                gconv_impl_igemm_wgmma_n256_f16_bmn(acc, da, db, sc);
        } else {
            if (dt == GCONV_BF16)
                gconv_impl_igemm_wgmma_n128_bf16_bmn(acc, da, db, sc);
            else
                gconv_impl_igemm_wgmma_n128_f16_bmn(acc, da, db, sc);
        }
    } else if (mn) {
        if (n == 256) {
            if (dt == GCONV_BF16)
                gconv_impl_igemm_wgmma_n256_bf16_mn(acc, da, db, sc);
            else
                gconv_impl_igemm_wgmma_n256_f16_mn(acc, da, db, sc);
        } else if (n == 64) {
            if (dt == GCONV_BF16)
                gconv_impl_igemm_wgmma_n64_bf16_mn(acc, da, db, sc);
            else
                gconv_impl_igemm_wgmma_n64_f16_mn(acc, da, db, sc);
        } else {
            if (dt == GCONV_BF16)
                gconv_impl_igemm_wgmma_n128_bf16_mn(acc, da, db, sc);
            else
                gconv_impl_igemm_wgmma_n128_f16_mn(acc, da, db, sc);
        }
    } else if (n == 256) {
        if (dt == GCONV_F16)
            gconv_impl_igemm_wgmma_n256_f16(acc, da, db, sc);
        else if (dt == GCONV_BF16)
            gconv_impl_igemm_wgmma_n256_bf16(acc, da, db, sc);
        else
            gconv_impl_igemm_wgmma_n256_tf32(acc, da, db, sc);
    } else if (n == 128) {
        if (dt == GCONV_F16)
            gconv_impl_igemm_wgmma_n128_f16(acc, da, db, sc);
        else if (dt == GCONV_BF16)
            gconv_impl_igemm_wgmma_n128_bf16(acc, da, db, sc);
        else
            gconv_impl_igemm_wgmma_n128_tf32(acc, da, db, sc);
    } else {
        if (dt == GCONV_F16)
            gconv_impl_igemm_wgmma_n64_f16(acc, da, db, sc);
        else if (dt == GCONV_BF16)
            gconv_impl_igemm_wgmma_n64_bf16(acc, da, db, sc);
        else
            gconv_impl_igemm_wgmma_n64_tf32(acc, da, db, sc);
    }
}

#endif /* GCONV_IMPL_HAS_WGMMA */

#endif /* GCONV_IMPL_IGEMM_PRIMITIVES */

/* ---- element helpers ------------------------------------------------------------------------ */

/* Element e of a 16-byte chunk of type dt, as float. */
static __device__ __forceinline__ float gconv_impl_igemm_u4_elem(gconv_impl_igemm_u4 v, int e, gconv_dtype dt)
{
    unsigned w;
    if (dt == GCONV_F32) {
        w = e == 0 ? v.x : e == 1 ? v.y : e == 2 ? v.z : v.w;
        return __uint_as_float(w);
    }
    w = (e >> 1) == 0 ? v.x : (e >> 1) == 1 ? v.y : (e >> 1) == 2 ? v.z : v.w;
    w = (e & 1) ? (w >> 16) : (w & 0xffffu);
    if (dt == GCONV_F16) {
        gconv_f16 h;
        h.bits = (uint16_t)w;
        return gconv_impl_to_float_f16(h);
    }
    return __uint_as_float(w << 16);
}

/* Raw bits of element i of a tensor of type dt (fp32: all 32 bits, 16-bit types: low half). */
static __device__ __forceinline__ unsigned gconv_impl_igemm_ld_bits(const void *p, int64_t i, gconv_dtype dt)
{
    if (dt == GCONV_F32)
        return ((const unsigned *)p)[i];
    return ((const unsigned short *)p)[i];
}

static __device__ __forceinline__ void gconv_impl_igemm_st_elem(void *p, int64_t i, float v, gconv_dtype dt)
{
    if (dt == GCONV_F32)
        ((float *)p)[i] = v;
    else if (dt == GCONV_F16)
        ((gconv_f16 *)p)[i] = gconv_impl_from_float_f16(v);
    else
        ((gconv_bf16 *)p)[i] = gconv_impl_from_float_bf16(v);
}

/* Bits of v converted to dt (fp32: the float's bits, 16-bit types: in the low half). */
static __device__ __forceinline__ unsigned gconv_impl_igemm_to_bits(float v, gconv_dtype dt)
{
    if (dt == GCONV_F32)
        return __float_as_uint(v);
    if (dt == GCONV_F16)
        return gconv_impl_from_float_f16(v).bits;
    return gconv_impl_from_float_bf16(v).bits;
}

/* 16 bytes of type dt from floats: v[0..3] for fp32, v[0..7] for fp16 / bf16. */
static __device__ __forceinline__ gconv_impl_igemm_u4 gconv_impl_igemm_pack16(const float *v,
                                                                              gconv_dtype dt)
{
    gconv_impl_igemm_u4 r;
    if (dt == GCONV_F32) {
        r.x = __float_as_uint(v[0]), r.y = __float_as_uint(v[1]);
        r.z = __float_as_uint(v[2]), r.w = __float_as_uint(v[3]);
    } else {
        unsigned b[8];
        int e;
#pragma unroll
        for (e = 0; e < 8; e++)
            b[e] = gconv_impl_igemm_to_bits(v[e], dt);
        r.x = b[0] | (b[1] << 16), r.y = b[2] | (b[3] << 16);
        r.z = b[4] | (b[5] << 16), r.w = b[6] | (b[7] << 16);
    }
    return r;
}

/* Store n raw elements (bits in w[], fp32 whole words or 16-bit in the low halves) to shared
 * memory at row r, elements e0..e0+n-1 of a swizzled [rows][cpr] tile. n * esize is a
 * multiple of 2 bytes; pieces of up to 16 bytes never cross a chunk because e0 is a multiple
 * of n (or of the chunk) by construction of the callers. */
static __device__ __forceinline__ void gconv_impl_igemm_st_elems(unsigned char *tile, int r,
                                                                 int e0, int n,
                                                                 const unsigned *w, int esize,
                                                                 int cpr)
{
    const int vec = 16 / esize;
    const int per = n < vec ? n : vec; /* elements per piece */
    int i, j;
#pragma unroll
    for (i = 0; i < 64; i++) {
        if (i * per >= n)
            break;
        {
            const int e = e0 + i * per;
            unsigned char *dst = tile + gconv_impl_igemm_chunk_off(r, e / vec, cpr) + (e % vec) * esize;
            unsigned pk[4] = {0u, 0u, 0u, 0u};
            if (esize == 4) {
#pragma unroll
                for (j = 0; j < 4; j++)
                    if (j < per)
                        pk[j] = w[i * per + j];
            } else {
#pragma unroll
                for (j = 0; j < 8; j++)
                    if (j < per)
                        pk[j >> 1] |= (w[i * per + j] & 0xffffu) << ((j & 1) * 16);
            }
            if (per * esize == 16) {
                gconv_impl_igemm_u4 v;
                v.x = pk[0], v.y = pk[1], v.z = pk[2], v.w = pk[3];
                gconv_impl_igemm_st_shared16(dst, v);
            } else if (per * esize == 8) {
                ((unsigned *)dst)[0] = pk[0];
                ((unsigned *)dst)[1] = pk[1];
            } else if (per * esize == 4) {
                ((unsigned *)dst)[0] = pk[0];
            } else {
                ((unsigned short *)dst)[0] = (unsigned short)pk[0];
            }
        }
    }
}

/* ---- the math of one stage ------------------------------------------------------------------
 * acc: this thread's accumulators; sa, sb: the stage's A and B tiles (generic pointers into
 * shared memory); math: GCONV_IMPL_MATH_*; tf32 selects the tf32 tensor-core form for fp32 on
 * NVIDIA (otherwise fp32 takes FMA there). The accumulator layout of each path is what
 * gconv_impl_igemm_acc_rc describes. */

/* The math path a kernel of tile t and element type dt actually takes on this device pass. */
static __device__ __forceinline__ int gconv_impl_igemm_math(gconv_impl_tile t, gconv_dtype dt,
                                                            int tf32)
{
    if (GCONV_IMPL_HAS_WGMMA && (dt != GCONV_F32 || tf32) &&
        gconv_impl_tile_wgmma_shape(t, dt == GCONV_F32 ? 4 : 2))
        return GCONV_IMPL_MATH_WGMMA;
    if (GCONV_IMPL_IGEMM_MATH == GCONV_IMPL_MATH_MMA && (dt != GCONV_F32 || tf32))
        return GCONV_IMPL_MATH_MMA;
    if (GCONV_IMPL_IGEMM_MATH == GCONV_IMPL_MATH_MFMA)
        return GCONV_IMPL_MATH_MFMA;
    return GCONV_IMPL_MATH_FMA;
}

/* FMA micro-tile of a thread: TM x TN outputs, rows ty + TY*i, columns tx + TX*j. */
static __device__ __forceinline__ int gconv_impl_igemm_fma_tn(gconv_impl_tile t)
{
    const int mt = t.bm * t.bn / gconv_impl_tile_threads(t);
    return mt >= 32 ? 8 : mt >= 16 ? 4 : 2;
}

/* Wave grid of the MFMA path: 32-thread warps pair up into 64-lane waves along N if possible. */
static __device__ __forceinline__ int gconv_impl_igemm_mfma_wvn(gconv_impl_tile t)
{
    return (t.wn % 2 == 0) ? t.wn / 2 : t.wn;
}

static __device__ __forceinline__ int gconv_impl_igemm_mfma_wvm(gconv_impl_tile t)
{
    return (t.wn % 2 == 0) ? t.wm : t.wm / 2;
}

/* Row and column (in the block's C tile) of accumulator idx of this thread. */
static __device__ __forceinline__ void gconv_impl_igemm_acc_rc(gconv_impl_tile t, int math,
                                                               int idx, int *r, int *c)
{
    const int tid = (int)threadIdx.x;
    if (math == GCONV_IMPL_MATH_WGMMA) {
        const int lane = tid & 31, warp = (tid >> 5) & 3, wg = tid >> 7;
        const int e = idx & 3, j = idx >> 2;
        *r = wg * 64 + warp * 16 + (lane >> 2) + ((e >> 1) << 3);
        *c = j * 8 + ((lane & 3) << 1) + (e & 1);
    } else if (math == GCONV_IMPL_MATH_MMA) {
        const int lane = tid & 31, warp = tid >> 5;
        const int wtm = t.bm / t.wm, wtn = t.bn / t.wn, nj = wtn / 8;
        const int e = idx & 3, j = (idx >> 2) % nj, i = (idx >> 2) / nj;
        *r = (warp / t.wn) * wtm + i * 16 + (lane >> 2) + ((e >> 1) << 3);
        *c = (warp % t.wn) * wtn + j * 8 + ((lane & 3) << 1) + (e & 1);
    } else if (math == GCONV_IMPL_MATH_MFMA) {
        const int lane = tid & 63, wave = tid >> 6;
        const int wvn = gconv_impl_igemm_mfma_wvn(t), wvm = gconv_impl_igemm_mfma_wvm(t);
        const int wtm = t.bm / wvm, wtn = t.bn / wvn, nj = wtn / 16;
        const int e = idx & 3, j = (idx >> 2) % nj, i = (idx >> 2) / nj;
        *r = (wave / wvn) * wtm + i * 16 + ((lane >> 4) << 2) + e;
        *c = (wave % wvn) * wtn + j * 16 + (lane & 15);
    } else {
        const int tn = gconv_impl_igemm_fma_tn(t);
        const int tm = t.bm * t.bn / gconv_impl_tile_threads(t) / tn;
        const int tx = t.bn / tn, ty = t.bm / tm;
        *r = (tid / tx) + ty * (idx / tn);
        *c = (tid % tx) + tx * (idx % tn);
    }
}

/* Zero the accumulators (not for wgmma, whose first instruction overwrites them). */
static __device__ __forceinline__ void gconv_impl_igemm_zero(float *acc, gconv_impl_tile t, int math)
{
    const int n = t.bm * t.bn / gconv_impl_tile_threads(t);
    int i;
    if (math == GCONV_IMPL_MATH_WGMMA)
        return;
#pragma unroll
    for (i = 0; i < GCONV_IMPL_MAX_ACC; i++)
        if (i < n)
            acc[i] = 0.0f;
}

#if GCONV_IMPL_IGEMM_MATH == GCONV_IMPL_MATH_MMA
/* mma.sync: warp (wm_i, wn_i) owns a (BM/WM) x (BN/WN) block of C as MI x NJ tiles of 16x8.
 * Per k step (two 16-byte chunks: 16 halves or 8 floats) it loads A with one ldmatrix.x4 per
 * 16 rows and B with one x4 per 16 columns (x2 for a last odd 8), then issues MI * NJ mma. */
static __device__ __forceinline__ void gconv_impl_igemm_math_mma(float *acc, const unsigned char *sa,
                                                                 const unsigned char *sb,
                                                                 gconv_impl_tile t, int cpr,
                                                                 gconv_dtype dt, int tf32)
{
    const int tid = (int)threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int wtm = t.bm / t.wm, wtn = t.bn / t.wn, mi = wtm / 16, nj = wtn / 8;
    const int rb = cpr * 16;
    const unsigned a0 = gconv_impl_igemm_smem_addr(sa), b0 = gconv_impl_igemm_smem_addr(sb);
    /* this lane's ldmatrix row: A rows lane%16 of each 16-row tile, B rows lane%8 (+8 for the
     * second 8 columns of a x4); swizzles are equal for rows 16 apart */
    const int ar = (warp / t.wn) * wtm + (lane & 15);
    const int br = (warp % t.wn) * wtn + (lane & 7) + ((lane >> 4) << 3);
    const int asw = gconv_impl_igemm_swz(ar, cpr), bsw = gconv_impl_igemm_swz(br, cpr);
    int ks, i, j;
#pragma unroll
    for (ks = 0; ks < 8; ks++) {
        unsigned af[4][4], bf[8][2];
        if (2 * ks >= cpr)
            break;
#pragma unroll
        for (i = 0; i < 4; i++)
            if (i < mi)
                gconv_impl_igemm_ldsm_x4(a0 + (ar + i * 16) * rb + (((2 * ks + (lane >> 4)) ^ asw) << 4),
                                   af[i]);
#pragma unroll
        for (j = 0; j < 8; j += 2) {
            if (j + 1 < nj) {
                unsigned r4[4];
                gconv_impl_igemm_ldsm_x4(b0 + (br + j * 8) * rb +
                                       (((2 * ks + ((lane >> 3) & 1)) ^ bsw) << 4),
                                   r4);
                bf[j][0] = r4[0], bf[j][1] = r4[1], bf[j + 1][0] = r4[2], bf[j + 1][1] = r4[3];
            } else if (j < nj) {
                gconv_impl_igemm_ldsm_x2(b0 + (br + j * 8) * rb +
                                       (((2 * ks + ((lane >> 3) & 1)) ^ bsw) << 4),
                                   bf[j]);
            }
        }
        if (dt == GCONV_F32) {
            (void)tf32;
#pragma unroll
            for (i = 0; i < 4; i++)
                if (i < mi) {
                    af[i][0] = gconv_impl_igemm_cvt_tf32(af[i][0]), af[i][1] = gconv_impl_igemm_cvt_tf32(af[i][1]);
                    af[i][2] = gconv_impl_igemm_cvt_tf32(af[i][2]), af[i][3] = gconv_impl_igemm_cvt_tf32(af[i][3]);
                }
#pragma unroll
            for (j = 0; j < 8; j++)
                if (j < nj)
                    bf[j][0] = gconv_impl_igemm_cvt_tf32(bf[j][0]), bf[j][1] = gconv_impl_igemm_cvt_tf32(bf[j][1]);
        }
#pragma unroll
        for (i = 0; i < 4; i++)
#pragma unroll
            for (j = 0; j < 8; j++)
                if (i < mi && j < nj) {
                    float *d = acc + (i * nj + j) * 4;
                    if (dt == GCONV_F16)
                        gconv_impl_igemm_mma_f16(d, af[i], bf[j]);
                    else if (dt == GCONV_BF16)
                        gconv_impl_igemm_mma_bf16(d, af[i], bf[j]);
                    else
                        gconv_impl_igemm_mma_tf32(d, af[i], bf[j]);
                }
    }
}
#endif

#if GCONV_IMPL_IGEMM_MATH == GCONV_IMPL_MATH_MMA
/* mma.sync on MN-major ("transposed") stages, fp16 / bf16 only: A stored as [BK][BM] and B as
 * [BK][BN], i.e. one row per k with the M (N) index contiguous, 16-byte chunks swizzled with
 * gconv_impl_igemm_chunk_off(k, chunk, BM / 8) (BN / 8 for B). This is the natural format when
 * the GEMM's K runs over pixels and M, N over channels (backward weight): every row is
 * 16-byte channel vectors of one pixel, copied with cp.async, no transposing gather. Warp
 * layout, accumulators and their order are those of gconv_impl_igemm_math_mma (so
 * gconv_impl_igemm_acc_rc and gconv_impl_igemm_acc_to_smem serve both).
 *
 * Per k step of 16: A of m tile i is one ldmatrix.x4.trans whose four 8x8 matrices are (m
 * 0-7, k 0-7), (m 8-15, k 0-7), (m 0-7, k 8-15), (m 8-15, k 8-15): matrix q = lane / 8 reads
 * rows k = 8 * (q / 2) + lane % 8 at chunk m / 8 + q % 2, and .trans hands lane l the
 * elements (m = l / 4, k = 2 * (l % 4), +1) of each, the row-major A fragment. B of n tiles
 * j, j + 1 is one x4.trans of (j, k 0-7), (j, k 8-15), (j + 1, k 0-7), (j + 1, k 8-15). */
static __device__ __forceinline__ void gconv_impl_igemm_math_mma_t(float *acc,
                                                                   const unsigned char *sa,
                                                                   const unsigned char *sb,
                                                                   gconv_impl_tile t,
                                                                   gconv_dtype dt)
{
    const int tid = (int)threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int wtm = t.bm / t.wm, wtn = t.bn / t.wn, mi = wtm / 16, nj = wtn / 8;
    const int cpa = t.bm / 8, cpb = t.bn / 8; /* 16-byte chunks per row (16-bit types) */
    const unsigned a0 = gconv_impl_igemm_smem_addr(sa), b0 = gconv_impl_igemm_smem_addr(sb);
    const int q = lane >> 3, r8 = lane & 7;
    const int ma = ((warp / t.wn) * wtm) / 8 + (q & 1); /* A chunk of this lane's matrix */
    const int nb = ((warp % t.wn) * wtn) / 8 + (q >> 1); /* B chunk */
    int ks, i, j;
#pragma unroll
    for (ks = 0; ks < 4; ks++) {
        unsigned af[4][4], bf[8][2];
        const int ka = ks * 16 + ((q >> 1) << 3) + r8, kb = ks * 16 + ((q & 1) << 3) + r8;
        if (ks * 16 >= t.bk)
            break;
#pragma unroll
        for (i = 0; i < 4; i++)
            if (i < mi)
                gconv_impl_igemm_ldsm_x4_t(a0 + gconv_impl_igemm_chunk_off(ka, ma + 2 * i, cpa),
                                           af[i]);
#pragma unroll
        for (j = 0; j < 8; j += 2) {
            if (j + 1 < nj) {
                unsigned r4[4];
                gconv_impl_igemm_ldsm_x4_t(b0 + gconv_impl_igemm_chunk_off(kb, nb + j, cpb), r4);
                bf[j][0] = r4[0], bf[j][1] = r4[1], bf[j + 1][0] = r4[2], bf[j + 1][1] = r4[3];
            } else if (j < nj) {
                /* x2: lanes 0-15 give the addresses, of matrices (j, k 0-7) and (j, k 8-15) */
                gconv_impl_igemm_ldsm_x2_t(b0 + gconv_impl_igemm_chunk_off(kb, nb - (q >> 1) + j,
                                                                           cpb),
                                           bf[j]);
            }
        }
#pragma unroll
        for (i = 0; i < 4; i++)
#pragma unroll
            for (j = 0; j < 8; j++)
                if (i < mi && j < nj) {
                    float *d = acc + (i * nj + j) * 4;
                    if (dt == GCONV_BF16)
                        gconv_impl_igemm_mma_bf16(d, af[i], bf[j]);
                    else
                        gconv_impl_igemm_mma_f16(d, af[i], bf[j]);
                }
    }
}
#endif

#if GCONV_IMPL_IGEMM_MATH == GCONV_IMPL_MATH_MFMA
/* MFMA: wave (wi, wj) owns a (BM/WVM) x (BN/WVN) block as MI x NJ tiles of 16x16; per k step
 * each lane reads its A and B values straight from the swizzled tiles (8, 4 or 4 bytes). */
static __device__ __forceinline__ void gconv_impl_igemm_math_mfma(float *acc, const unsigned char *sa,
                                                                  const unsigned char *sb,
                                                                  gconv_impl_tile t, int cpr,
                                                                  gconv_dtype dt)
{
    const int tid = (int)threadIdx.x, lane = tid & 63, wave = tid >> 6;
    const int wvn = gconv_impl_igemm_mfma_wvn(t), wvm = gconv_impl_igemm_mfma_wvm(t);
    const int wtm = t.bm / wvm, wtn = t.bn / wvn, mi = wtm / 16, nj = wtn / 16;
    const int rb = cpr * 16, kg = lane >> 4;
    const int ar = (wave / wvn) * wtm + (lane & 15), br = (wave % wvn) * wtn + (lane & 15);
    const int asw = gconv_impl_igemm_swz(ar, cpr), bsw = gconv_impl_igemm_swz(br, cpr);
    /* elements of K per MFMA and per lane, and bytes per lane read */
    const int kstep = dt == GCONV_F32 ? 4 : dt == GCONV_F16 ? 16 : GCONV_IMPL_MFMA_BF16_K;
    const int esize = dt == GCONV_F32 ? 4 : 2;
    const int per = kstep / 4; /* values per lane */
    const int vec = 16 / esize;
    int ks, i, j;
    (void)wvm;
#pragma unroll
    for (ks = 0; ks < 32; ks++) {
        uint2 av[4], bv[8];
        if (ks * kstep >= cpr * vec)
            break;
        {
            const int k = ks * kstep + kg * per; /* first K element of this lane */
            const int q = k / vec, within = (k % vec) * esize;
#pragma unroll
            for (i = 0; i < 4; i++)
                if (i < mi) {
                    const unsigned char *p = sa + (ar + 16 * i) * rb + ((q ^ asw) << 4) + within;
                    if (per * esize == 8)
                        av[i] = *(const uint2 *)p;
                    else
                        av[i].x = *(const unsigned *)p, av[i].y = 0u;
                }
#pragma unroll
            for (j = 0; j < 8; j++)
                if (j < nj) {
                    const unsigned char *p = sb + (br + 16 * j) * rb + ((q ^ bsw) << 4) + within;
                    if (per * esize == 8)
                        bv[j] = *(const uint2 *)p;
                    else
                        bv[j].x = *(const unsigned *)p, bv[j].y = 0u;
                }
        }
#pragma unroll
        for (i = 0; i < 4; i++)
#pragma unroll
            for (j = 0; j < 8; j++)
                if (i < mi && j < nj) {
                    float *d = acc + (i * nj + j) * 4;
                    if (dt == GCONV_F16)
                        gconv_impl_igemm_mfma_f16(d, av[i], bv[j]);
                    else if (dt == GCONV_BF16)
                        gconv_impl_igemm_mfma_bf16(d, av[i], bv[j]);
                    else
                        gconv_impl_igemm_mfma_f32(d, __uint_as_float(av[i].x), __uint_as_float(bv[j].x));
                }
    }
}
#endif

/* FMA: each thread reads its TM rows of A and TN rows of B one 16-byte chunk at a time and
 * accumulates the outer products in fp32. Rows ty + TY*i: a warp reads few distinct A rows
 * (broadcast) and 8 consecutive B rows per quarter (distinct bank groups by the swizzle). */
static __device__ __forceinline__ void gconv_impl_igemm_math_fma(float *acc, const unsigned char *sa,
                                                                 const unsigned char *sb,
                                                                 gconv_impl_tile t, int cpr,
                                                                 gconv_dtype dt)
{
    const int tid = (int)threadIdx.x;
    const int tn = gconv_impl_igemm_fma_tn(t), tm = t.bm * t.bn / gconv_impl_tile_threads(t) / tn;
    const int tx = t.bn / tn, ty = t.bm / tm;
    const int rb = cpr * 16, vec = dt == GCONV_F32 ? 4 : 8;
    const int r0 = tid / tx, c0 = tid % tx;
    int q, i, j, e;
#pragma unroll 1
    for (q = 0; q < cpr; q++) {
        gconv_impl_igemm_u4 av[16], bv[8];
#pragma unroll
        for (i = 0; i < 16; i++)
            if (i < tm)
                av[i] = gconv_impl_igemm_ld_shared16(sa + gconv_impl_igemm_chunk_off(r0 + ty * i, q, cpr));
#pragma unroll
        for (j = 0; j < 8; j++)
            if (j < tn)
                bv[j] = gconv_impl_igemm_ld_shared16(sb + gconv_impl_igemm_chunk_off(c0 + tx * j, q, cpr));
        (void)rb;
#pragma unroll
        for (e = 0; e < 8; e++) {
            if (e < vec) {
                float bf[8];
#pragma unroll
                for (j = 0; j < 8; j++)
                    if (j < tn)
                        bf[j] = gconv_impl_igemm_u4_elem(bv[j], e, dt);
#pragma unroll
                for (i = 0; i < 16; i++)
                    if (i < tm) {
                        const float a = gconv_impl_igemm_u4_elem(av[i], e, dt);
#pragma unroll
                        for (j = 0; j < 8; j++)
                            if (j < tn)
                                acc[i * tn + j] += a * bf[j];
                    }
            }
        }
    }
}

#if GCONV_IMPL_HAS_WGMMA
/* wgmma: warpgroup wg multiplies rows 64*wg .. +63 of A by all of B, one instruction per 32
 * bytes of K (k16 for 16-bit types, k8 for tf32); the descriptors advance by 32 bytes along
 * the 128-byte rows and the hardware applies the swizzle to the resulting addresses. Issued
 * asynchronously and committed as one group; gconv_impl_igemm_retire waits. */
static __device__ __forceinline__ void gconv_impl_igemm_math_wgmma(float *acc, const unsigned char *sa,
                                                                   const unsigned char *sb,
                                                                   gconv_impl_tile t, gconv_dtype dt,
                                                                   int first)
{
    const int wg = (int)threadIdx.x >> 7;
    const int rb = t.bk * (dt == GCONV_F32 ? 4 : 2); /* 128 or 64 bytes per row */
    const unsigned a0 = gconv_impl_igemm_smem_addr(sa) + (unsigned)(wg * 64 * rb);
    const unsigned b0 = gconv_impl_igemm_smem_addr(sb);
    const int n = t.bm * t.bn / gconv_impl_tile_threads(t);
    int ks, i;
    /* the accumulators are never written by ordinary instructions while wgmma owns them (ptxas
     * would serialise the pipeline, warning C7515): they are not zeroed, the first wgmma of
     * the first k-tile overwrites them instead (scale-d 0) */
#pragma unroll
    for (i = 0; i < GCONV_IMPL_MAX_ACC; i++)
        if (i < n)
            gconv_impl_igemm_reg_fence(&acc[i]);
    gconv_impl_igemm_wgmma_fence();
#pragma unroll
    for (ks = 0; ks < 4; ks++) {
        const unsigned long long da = gconv_impl_igemm_wgmma_desc(a0 + 32u * ks, rb);
        const unsigned long long db = gconv_impl_igemm_wgmma_desc(b0 + 32u * ks, rb);
        const int sc = !(first && ks == 0);
        if (ks * 32 >= rb)
            break;
        gconv_impl_igemm_wgmma(acc, da, db, sc, t.bn, dt, 0);
    }
    gconv_impl_igemm_wgmma_commit();
}
#endif

/* Let at most `pending` stages of asynchronous math (wgmma) stay in flight; no-op for the
 * synchronous paths. After it, the accumulators of the retired stages may be read. */
static __device__ __forceinline__ void gconv_impl_igemm_retire(float *acc, gconv_impl_tile t,
                                                               int math, int pending)
{
#if GCONV_IMPL_HAS_WGMMA
    if (math == GCONV_IMPL_MATH_WGMMA) {
        const int n = t.bm * t.bn / gconv_impl_tile_threads(t);
        int i;
        gconv_impl_igemm_wgmma_wait(pending);
#pragma unroll
        for (i = 0; i < GCONV_IMPL_MAX_ACC; i++)
            if (i < n)
                gconv_impl_igemm_reg_fence(&acc[i]);
    }
#else
    (void)acc, (void)t, (void)math, (void)pending;
#endif
}

/* Called by every thread after its writes of a stage and before the barrier that publishes it:
 * the wgmma path reads shared memory through the async proxy. */
static __device__ __forceinline__ void gconv_impl_igemm_publish(int math)
{
#if GCONV_IMPL_HAS_WGMMA
    if (math == GCONV_IMPL_MATH_WGMMA)
        gconv_impl_igemm_fence_proxy_async();
#else
    (void)math;
#endif
}

/* The math of one stage on the path `math`. */
static __device__ __forceinline__ void gconv_impl_igemm_stage_math(float *acc, const unsigned char *sa,
                                                                   const unsigned char *sb,
                                                                   gconv_impl_tile t, int esize,
                                                                   gconv_dtype dt, int math,
                                                                   int first)
{
    const int cpr = t.bk * esize / 16;
#if GCONV_IMPL_HAS_WGMMA
    if (math == GCONV_IMPL_MATH_WGMMA) {
        gconv_impl_igemm_math_wgmma(acc, sa, sb, t, dt, first);
        return;
    }
#endif
#if GCONV_IMPL_IGEMM_MATH == GCONV_IMPL_MATH_MMA
    if (math == GCONV_IMPL_MATH_MMA) {
        gconv_impl_igemm_math_mma(acc, sa, sb, t, cpr, dt, 1);
        return;
    }
#endif
#if GCONV_IMPL_IGEMM_MATH == GCONV_IMPL_MATH_MFMA
    if (math == GCONV_IMPL_MATH_MFMA) {
        gconv_impl_igemm_math_mfma(acc, sa, sb, t, cpr, dt);
        return;
    }
#endif
    (void)math, (void)first;
    gconv_impl_igemm_math_fma(acc, sa, sb, t, cpr, dt);
}

/* Write the accumulators whose rows lie in [row0, row0 + rows) into cs as fp32
 * [rows][BN + GCONV_IMPL_CPAD]. Callers put a barrier before (the stages are being reused)
 * and after (other threads read what this one wrote). */
static __device__ __forceinline__ void gconv_impl_igemm_acc_to_smem(const float *acc, float *cs,
                                                                    gconv_impl_tile t, int math,
                                                                    int row0, int rows)
{
    const int n = t.bm * t.bn / gconv_impl_tile_threads(t);
    const int ld = t.bn + GCONV_IMPL_CPAD;
    int i;
#pragma unroll
    for (i = 0; i < GCONV_IMPL_MAX_ACC; i++)
        if (i < n) {
            int r, c;
            gconv_impl_igemm_acc_rc(t, math, i, &r, &c);
            r -= row0;
            if (r >= 0 && r < rows)
                cs[r * ld + c] = acc[i];
        }
}

/* Block index -> (tile row, tile column) of a tm x tn grid, in bands of 8 tile rows so that
 * blocks running together share A rows and B columns in L2. */
static __device__ __forceinline__ void gconv_impl_igemm_raster(int64_t t, int tm, int tn, int *bm,
                                                               int *bn)
{
    const int64_t band = (int64_t)8 * tn;
    const int64_t first = (t / band) * 8;
    const int64_t rest = tm - first;
    const int h = rest < 8 ? (int)rest : 8;
    const int in = (int)(t % band);
    *bm = (int)first + in % h;
    *bn = in / h;
}

#endif /* GCONV_IGEMM_H */
