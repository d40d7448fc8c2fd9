/* gconv/igemm_ws.h: the warp-specialised implicit GEMM of the forward direction on Hopper.
 *
 * What is here: one kernel body, gconv_impl_ws_fwd_body, for the forward GEMM view of
 * gconv/fwd.h (M = N * output pixels, N = K, reduction = C * taps per group) when the
 * channels are plenty: NHWGC / GNHWC input and output, GKYXC weights, fp16 / bf16, C a
 * multiple of 64, K at least 64, 32-bit offsets. It exists because the engine's all-threads
 * pipeline (gconv/igemm.h) leaves the tensor cores idle on dense layers: every warp issues both
 * the im2col gather and the math between block-wide barriers, measured latency-bound at
 * 0.2-0.45 of the matrix rate (bench/NOTES.md).
 *
 * Block: 288 threads = two consumer warpgroups (threads 0-255) and one producer warp (one thread
 * of it works; a producer warpgroup in the transposed form). The producer fills a ring of S stages
 * with the copy engine (TMA): A, BM output pixels x 64 channels of one tap, by an im2col tensor
 * copy (the input's tensor map knows the padding box and the stride; the tap is the copy's offset;
 * padding and pixels past the last image arrive as zeros; in GNHWC, whose groups' images form one
 * batch axis of the map, rows past a group's last pixel read the next group's, which the store
 * never writes out), and B, BN output channels x the same 64 reduction elements, by a tiled copy
 * of the weights seen as a [G * K][C * taps] matrix. Both land in the
 * 128-byte-swizzled format that wgmma reads through descriptors (that of gconv/igemm.h).
 * The consumers only wait, issue wgmma (m64 x BN x 16, fp32 accumulators in registers) and
 * give stages back. Stages change hands through two mbarriers each:
 *   full[s]   one arrival (the producer's arrive.expect_tx with the stage's bytes) plus the
 *             copies' transaction bytes: complete when both copies have landed;
 *   empty[s]  8 arrivals: lane 0 of each consumer warp, once the wgmma that read the stage
 *             has retired (wgmma.wait_group 1 after the next stage's wgmma was issued).
 * Phase parities follow the use count of a stage: the n-th fill of stage s waits for the
 * (n-1)-th completion of empty[s]; the n-th read waits for the n-th completion of full[s].
 * The copy engine writes through the async proxy that wgmma reads, so no proxy fence is needed.
 * (A first version gathered with 16-byte cp.async from a producer warpgroup: 1.3x slower than
 * the engine; its producer alone, without math, took 109 us on the 100x100 dense layer where
 * the whole engine takes 98: one warpgroup's cp.async cannot keep enough bytes in flight;
 * bench/NOTES.md.)
 *
 * Backward data at stride 1 runs this kernel on its forward view. There (P.wtr) B comes from
 * the user's GKYXC weights [G][C'][taps][K'] as they are: the view's B[k][t][c] is
 * wei[c][T - 1 - t][k], so per k-tile the producer copies BN / 64 boxes of 64 reduction rows
 * (c) x 64 output channels (k, contiguous) at the flipped tap, and the consumers read B
 * MN-major (wgmma's transpose-B immediate; one copy of the main loop per form, since a branch
 * between the two instructions inside the loop makes ptxas serialise the wgmma).
 *
 * Reduction order: k-tile kt is (channel chunk cc, tap t) with the taps innermost, so that
 * consecutive k-tiles read input rows shifted by one tap (L2-local); B follows the same order
 * (GKYXC: column t * C + 64 * cc).
 *
 * Configurations (BM pixels x BN channels): 128x128 (each consumer warpgroup one m64n128 block: 64
 * accumulators), 256x128 (two m64n128 blocks: 128), 128x256 (one m64n256: 128), 128x128 with two
 * blocks per SM, and 152x256 transposed (gconv_impl_ws_tr: the channels are the wgmma's M, each
 * warpgroup two m64n152 blocks of 128 channels, 152 accumulators, a producer warpgroup handing
 * registers over by setmaxnreg); the ring takes what shared memory allows (7, 4, 4, 3, 4 stages);
 * gconv_impl_ws_pick chooses by rounds of tiles over the SMs. The epilogue stages the fp32 tile
 * and a per-row table of output offsets and coordinates in the ring's memory, then stores 16 bytes
 * a thread through the epilogue op (gconv_impl_ws_store: D tensors, user op; no index maths per
 * element: the generic store of gconv/fwd.h cost 26 of the 70 us of the 100x100
 * dense layer, bench/NOTES.md).
 *
 * Where it runs: the body exists only in sm_90a device passes (nvcc -gencode
 * arch=compute_90a,code=sm_90a), where wgmma is available; elsewhere the kernel is empty.
 * The host tells the two apart by the kernel's static shared memory (the mbarriers live there
 * only in the real body): gconv_impl_ws_available. The tensor maps are encoded per launch on
 * the host (gconv_impl_ws_plan, through the driver's encoders found with
 * cudaGetDriverEntryPointByVersion: no link to libcuda). Launchers fall back to the engine of
 * gconv/igemm.h when the kernel is not in the binary or the maps cannot describe the problem.
 *
 * Include through gconv/fwd.h (or gconv.h); needs a HIP or CUDA compiler.
 */
#ifndef GCONV_IGEMM_WS_H
#define GCONV_IGEMM_WS_H

/* gconv/fwd.h includes this header after its kernel body (it needs the forward parameters and
 * the output store); included first, this one includes fwd.h, which then skips it. */
#include "fwd.h"
#include "igemm.h"
#if defined(GCONV_PLATFORM_CUDA)
#include <cuda.h> /* the tensor-map types (the encoders are found at run time) */
#endif

#define GCONV_IMPL_WS_THREADS 288   /* two consumer warpgroups, then the producer warp */
#define GCONV_IMPL_WS_THREADS_TR 384 /* transposed form: a producer warpgroup (gconv_impl_ws_tr) */
#define GCONV_IMPL_WS_CONSUMERS 256
#define GCONV_IMPL_WS_MAX_STAGES 8
#define GCONV_IMPL_WS_ACC 152 /* accumulators a consumer thread holds at most (152x256T) */
/* rows of the tile a consumer thread stores at most in gconv_impl_ws_store_d: 152 rows, 8 a
 * pass at 256 columns (152x256T; the others 16 = 128 / 8 or 256 / 16) */
#define GCONV_IMPL_WS_DROWS 19
/* static shared memory of the real body: its 2 * MAX_STAGES mbarriers */
#define GCONV_IMPL_WS_STATIC_SMEM (2 * GCONV_IMPL_WS_MAX_STAGES * 8)

/* The host side needs the CUDA 12.5+ runtime (cudaGetDriverEntryPointByVersion); with an
 * older one the kernel is not instantiated and the engine of gconv/igemm.h runs. */
#if defined(GCONV_PLATFORM_CUDA) && defined(CUDART_VERSION) && CUDART_VERSION >= 12050
#define GCONV_IMPL_WS_HOST 1
#else
#define GCONV_IMPL_WS_HOST 0
#endif

/* configurations; _2: two blocks per SM (a shorter ring each), so that one block's epilogue
 * and pipeline fill overlap the other's main loop */
enum {
    GCONV_IMPL_WS_128x128 = 0,
    GCONV_IMPL_WS_256x128,
    GCONV_IMPL_WS_128x256,
    GCONV_IMPL_WS_128x128_2,
    GCONV_IMPL_WS_152x256_T, /* transposed: pixels as wgmma's N (gconv_impl_ws_tr) */
    GCONV_IMPL_WS_COUNT
};

static inline GCONV_HD int gconv_impl_ws_bm(int cfg)
{
    return cfg == GCONV_IMPL_WS_256x128 ? 256 : cfg == GCONV_IMPL_WS_152x256_T ? 152 : 128;
}

/* Whether the configuration is transposed: the tile's output channels are the wgmma's M (the
 * weights its A operand) and its pixels the wgmma's N (the im2col rows its B), so that a tile
 * can hold a pixel count that is not a multiple of 64 (152: the 20000 pixels of a batch of two
 * 100x100 images in 132 tiles, one round of the H100's SMs, where 128-pixel tiles take 157).
 * Its 152 accumulators a consumer thread need more registers than a block of 288 threads may
 * have: ptxas bounds such a block at 168 registers a thread (96 at two blocks per SM), and the
 * runtime refused a 178-register one. That fits registers split among an SM's four schedulers,
 * 16384 each, with warp w of a block on scheduler w % 4 (our reading, not documented): 9 warps
 * put three on one scheduler, two of them consumers.
 * So this form has a producer warpgroup (384 threads, one thread of them works) that gives
 * registers to the consumers through setmaxnreg (which acts on whole warpgroups): each
 * scheduler then holds one producer warp at 40 and two consumer warps at 232
 * ((40 + 2 x 232) x 32 = 16128). */
static inline GCONV_HD int gconv_impl_ws_tr(int cfg)
{
    return cfg == GCONV_IMPL_WS_152x256_T;
}

static inline GCONV_HD int gconv_impl_ws_bn(int cfg)
{
    return cfg == GCONV_IMPL_WS_128x256 || cfg == GCONV_IMPL_WS_152x256_T ? 256 : 128;
}

static inline GCONV_HD int gconv_impl_ws_threads(int cfg)
{
    return gconv_impl_ws_tr(cfg) ? GCONV_IMPL_WS_THREADS_TR : GCONV_IMPL_WS_THREADS;
}

/* blocks per SM the configuration is built for */
static inline GCONV_HD int gconv_impl_ws_bps(int cfg)
{
    return cfg == GCONV_IMPL_WS_128x128_2 ? 2 : 1;
}

/* One stage: A [BM][64] then B [BN][64], 128 bytes a row. */
static inline GCONV_HD int gconv_impl_ws_stage_bytes(int bm, int bn)
{
    return (bm + bn) * 128;
}

/* The ring of a warp-specialised kernel whose stages take sb bytes, bps blocks per SM: its
 * stages (each block costs 1 KB of reserved shared memory beside its own, and 1 KB of its own
 * goes to alignment; at most GCONV_IMPL_WS_MAX_STAGES), whether it has at least two and holds
 * the staged fp32 C tile of bm x bn (false only where GCONV_IMPL_SMEM_MAX has been lowered),
 * and the dynamic shared memory: the ring and 1 KB to align it to 1024 bytes (the period of
 * the 128-byte swizzle). */
static inline GCONV_HD int gconv_impl_ws_ring_stages(int sb, int bps)
{
    const int s = ((GCONV_IMPL_SMEM_MAX + 1024) / bps - 2048 - GCONV_IMPL_WS_STATIC_SMEM) / sb;
    return s > GCONV_IMPL_WS_MAX_STAGES ? GCONV_IMPL_WS_MAX_STAGES : s;
}

static inline GCONV_HD int gconv_impl_ws_ring_ok(int sb, int bps, int bm, int bn)
{
    const int S = gconv_impl_ws_ring_stages(sb, bps);
    return S >= 2 && S * sb >= bm * (bn + GCONV_IMPL_CPAD) * 4;
}

static inline GCONV_HD int gconv_impl_ws_ring_smem(int sb, int bps)
{
    return gconv_impl_ws_ring_stages(sb, bps) * sb + 1024;
}

/* The forward configurations' rings (stages of gconv_impl_ws_stage_bytes). */
static inline GCONV_HD int gconv_impl_ws_stages(int bm, int bn, int bps)
{
    return gconv_impl_ws_ring_stages(gconv_impl_ws_stage_bytes(bm, bn), bps);
}

/* The epilogue's per-row table (gconv_impl_ws_store): five ints a row after the staged C tile. */
static inline GCONV_HD int gconv_impl_ws_table_bytes(int bm)
{
    return 5 * 4 * bm;
}

static inline GCONV_HD int gconv_impl_ws_sized(int bm, int bn, int bps)
{
    const int sb = gconv_impl_ws_stage_bytes(bm, bn);
    return gconv_impl_ws_ring_ok(sb, bps, bm, bn) &&
           gconv_impl_ws_ring_stages(sb, bps) * sb >=
               bm * (bn + GCONV_IMPL_CPAD) * 4 + gconv_impl_ws_table_bytes(bm);
}

static inline GCONV_HD int gconv_impl_ws_smem(int bm, int bn, int bps)
{
    return gconv_impl_ws_ring_smem(gconv_impl_ws_stage_bytes(bm, bn), bps);
}

#if defined(GCONV_PLATFORM_CUDA)
/* Kernel parameters: the forward parameters and the two tensor maps (passed by value as a
 * __grid_constant__, where the copy engine reads them). rank: 3, 4, 5 for 1D, 2D, 3D; A's
 * channel coordinate of group g is g * cbase (NHWGC: C; GNHWC: 0) and its image coordinate
 * n + g * nbase (NHWGC: 0; GNHWC: N, the groups' images folded into one batch axis). */
typedef struct gconv_impl_ws_params {
    CUtensorMap ta; /* A: im2col map of the input, 64 channels x BM pixels, 128-byte swizzle */
    CUtensorMap tb; /* B: tiled map of the weights as [G * K][Kg], 64 x BN boxes; with P.wtr
                     * (the backward-data problem's own GKYXC weights) a 3D map of them as
                     * [G * C rows][taps][K], boxes of 64 rows x 1 tap x 64 K (MN-major) */
    gconv_impl_fwd_params P;
    int rank, cbase, nbase;
    /* the built-in epilogue's D tensors all take 16-byte loads (gconv_impl_ws_store_d): each
     * either in the output's layout (read at the output's offset) or, bit i of dbias, a
     * per-channel vector broadcast over n, d, h, w (a bias: read at g * its g stride + k) */
    int dfast;
    unsigned dbias;
} gconv_impl_ws_params;
#endif

#if GCONV_IMPL_HAS_WGMMA
/* Register budget moves between warpgroups (every thread of the warpgroup executes it, n a
 * literal multiple of 8 in 24 .. 256). */
#define GCONV_IMPL_WS_SETMAXNREG(op, n)                                                            \
    asm volatile("setmaxnreg." op ".sync.aligned.u32 " #n ";\n" ::: "memory")

/* Barrier of the 256 consumer threads only (named barrier 1; 0 is __syncthreads). */
static __device__ __forceinline__ void gconv_impl_ws_sync_consumers(void)
{
    asm volatile("bar.sync 1, 256;\n" ::: "memory");
}

/* TMA im2col copy of A: pixelsPerColumn pixels x 64 channels from coordinates c (channel),
 * w, h, d, n (the first pixel's receptive-field origin) with tap offsets ow, oh, od, for a
 * tensor of rank 3 (1D), 4 (2D) or 5 (3D). */
static __device__ __forceinline__ void gconv_impl_ws_tma_a(unsigned dst, const void *map,
                                                           unsigned bar, int rank, int c, int w,
                                                           int h, int d, int n, unsigned short ow,
                                                           unsigned short oh, unsigned short od)
{
    const unsigned long long m = (unsigned long long)map;
    if (rank == 3)
        asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes"
                     " [%0], [%1, {%2, %3, %4}], [%5], {%6};\n" ::"r"(dst), "l"(m), "r"(c), "r"(w),
                     "r"(n), "r"(bar), "h"(ow)
                     : "memory");
    else if (rank == 4)
        asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes"
                     " [%0], [%1, {%2, %3, %4, %5}], [%6], {%7, %8};\n" ::"r"(dst), "l"(m), "r"(c),
                     "r"(w), "r"(h), "r"(n), "r"(bar), "h"(ow), "h"(oh)
                     : "memory");
    else
        asm volatile("cp.async.bulk.tensor.5d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes"
                     " [%0], [%1, {%2, %3, %4, %5, %6}], [%7], {%8, %9, %10};\n" ::"r"(dst), "l"(m),
                     "r"(c), "r"(w), "r"(h), "r"(d), "r"(n), "r"(bar), "h"(ow), "h"(oh), "h"(od)
                     : "memory");
}

/* TMA tiled copy of B: a [rows][64] box of the 2-D weight view at (k, row). */
static __device__ __forceinline__ void gconv_impl_ws_tma_b(unsigned dst, const void *map,
                                                           unsigned bar, int k, int row)
{
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3}], [%4];\n" ::"r"(dst), "l"((unsigned long long)map), "r"(k),
                 "r"(row), "r"(bar)
                 : "memory");
}

/* Thread 0 initialises the ring's barriers: full[s] (one arrival plus the copies' bytes) and
 * empty[s] (lane 0 of each consumer warp); then the whole block synchronises. */
static __device__ __forceinline__ void gconv_impl_ws_init_bars(unsigned full0, unsigned empty0,
                                                               int S)
{
    if (threadIdx.x == 0) {
        int s;
        for (s = 0; s < S; s++) {
            gconv_impl_mbar_init(full0 + 8u * (unsigned)s, 1);
            gconv_impl_mbar_init(empty0 + 8u * (unsigned)s, GCONV_IMPL_WS_CONSUMERS / 32);
        }
        /* the copy engine (async proxy) completes full[s]: make the initialised barriers
         * visible to it, not only to this block's threads */
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads(); /* barriers initialised */
}

/* TMA tiled copy of a box of a 3-D map at (c0, c1, c2), innermost first. */
static __device__ __forceinline__ void gconv_impl_ws_tma_3d(unsigned dst, const void *map,
                                                            unsigned bar, int c0, int c1, int c2)
{
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3, %4}], [%5];\n" ::"r"(dst), "l"((unsigned long long)map),
                 "r"(c0), "r"(c1), "r"(c2), "r"(bar)
                 : "memory");
}

/* Receptive-field origin of output pixel r (inside the im2col bounding box): the copy's
 * spatial coordinates cw, ch, cd and image coordinate cn (plus nadd, a group's image base). */
static __device__ __forceinline__ void gconv_impl_ws_origin(const int *out_sp, const int *str,
                                                            const int *pad, int r, int nadd,
                                                            int *cw, int *ch, int *cd, int *cn)
{
    unsigned u = (unsigned)r, q;
    q = u / (unsigned)out_sp[2], *cw = (int)(u - q * (unsigned)out_sp[2]) * str[2] - pad[2], u = q;
    q = u / (unsigned)out_sp[1], *ch = (int)(u - q * (unsigned)out_sp[1]) * str[1] - pad[1], u = q;
    q = u / (unsigned)out_sp[0], *cd = (int)(u - q * (unsigned)out_sp[0]) * str[0] - pad[0];
    *cn = (int)q + nadd;
}

/* Keep the compiler from moving the first n accumulators across a wgmma fence or wait (n a
 * constant after inlining, at most GCONV_IMPL_WS_ACC). */
static __device__ __forceinline__ void gconv_impl_ws_fence_acc(float *acc, const int n)
{
    int i;
#pragma unroll
    for (i = 0; i < GCONV_IMPL_WS_ACC; i++)
        if (i < n)
            gconv_impl_igemm_reg_fence(&acc[i]);
}

/* After a stage's wgmma group is committed: wait until the previous group has retired, then
 * (lane 0 of each warp, from the second stage on) give the previous stage back to the
 * producer through its empty barrier. */
static __device__ __forceinline__ void gconv_impl_ws_retire(float *acc, const int n, int kt,
                                                            unsigned empty_prev)
{
    gconv_impl_igemm_wgmma_wait(1);
    gconv_impl_ws_fence_acc(acc, n);
    if (kt > 0 && (threadIdx.x & 31) == 0)
        gconv_impl_mbar_arrive(empty_prev);
}

/* Stage a warpgroup's m64 x (2 n) block of accumulators (n of them a thread) as fp32 rows
 * row0 .. row0 + 63 of cs (ld floats a row): accumulator 4 j + e is row 16 warp + lane / 4
 * (+ 8 if e >= 2), column 8 j + 2 (lane % 4) (+ 1 if e odd). */
static __device__ __forceinline__ void gconv_impl_ws_stage_acc(const float *acc, const int n,
                                                               float *cs, int ld, int row0)
{
    const int warp = ((int)threadIdx.x >> 5) & 3, lane = (int)threadIdx.x & 31;
    int i;
#pragma unroll
    for (i = 0; i < 128; i += 2)
        if (i < n) {
            /* accumulators i, i + 1 are neighbouring columns: one 8-byte store (ld % 32 == 8
             * puts the 16 lanes of each half-warp phase on distinct banks) */
            const int r = row0 + warp * 16 + (lane >> 2) + ((i & 2) << 2);
            const int c = (i >> 2) * 8 + ((lane & 3) << 1);
            float2 v;
            v.x = acc[i], v.y = acc[i + 1];
            *(float2 *)&cs[r * ld + c] = v;
        }
}

/* The transposed form: a warpgroup's accumulators are D[channel][pixel] (m64 channels from
 * ch0, n pixels; accumulator 4 j + e of lane l in warp w is channel 16 w + l / 4 (+ 8 if
 * e >= 2), pixel 8 j + 2 (l % 4) (+ 1 if e odd)), staged as cs[pixel][channel] so that the
 * store reads rows of pixels as in the plain form. Neighbouring accumulators are neighbouring
 * pixels, a row apart in cs: 4-byte stores, ld % 32 == 4 puts a warp's 32 on distinct banks
 * (8 channels x 4 pixel pairs: bank 4 * 2 (l % 4) + l / 4). */
static __device__ __forceinline__ void gconv_impl_ws_stage_acc_t(const float *acc, const int n,
                                                                 float *cs, int ld, int ch0)
{
    const int warp = ((int)threadIdx.x >> 5) & 3, lane = (int)threadIdx.x & 31;
    int i;
#pragma unroll
    for (i = 0; i < 128; i++)
        if (i < n) {
            const int c = ch0 + warp * 16 + (lane >> 2) + ((i & 2) << 2);
            const int r = (i >> 2) * 8 + ((lane & 3) << 1) + (i & 1);
            cs[r * ld + c] = acc[i];
        }
}

/* Eight staged fp32 values at p (16-byte aligned) into v. */
static __device__ __forceinline__ void gconv_impl_ws_ld8(const float *p, float *v)
{
    const float4 a = *(const float4 *)p, b = *(const float4 *)(p + 4);
    v[0] = a.x, v[1] = a.y, v[2] = a.z, v[3] = a.w;
    v[4] = b.x, v[5] = b.y, v[6] = b.z, v[7] = b.w;
}

/* Store 16 bytes (a gconv_impl_igemm_pack16 result) to global memory at p. */
static __device__ __forceinline__ void gconv_impl_ws_st16(void *p, gconv_impl_igemm_u4 v)
{
    *(uint4 *)p = make_uint4(v.x, v.y, v.z, v.w);
}

/* Row r of the tile (threads r < bm, one row each): its output offset in the elements of the
 * output (group g's channel 0; -1 past M) and its n, d, h, w, as tab[r], tab[bm + r], ...
 * tab[4 bm + r]; the store then does no index maths. */
static __device__ __forceinline__ void gconv_impl_ws_row_table(const gconv_impl_fwd_params *P,
                                                               int *tab, const int bm, int g,
                                                               int m0)
{
    const int r = (int)threadIdx.x;
    if (r < bm) {
        int n = 0, d = 0, h = 0, w = 0, ob = -1;
        if (m0 + r < P->M) {
            gconv_impl_fwd_split_m(P, m0 + r, 0, &n, &d, &h, &w);
            ob = g * (int)P->so.g + n * (int)P->so.n + d * (int)P->so.s[0] +
                 h * (int)P->so.s[1] + w * (int)P->so.s[2];
        }
        tab[r] = ob, tab[bm + r] = n, tab[2 * bm + r] = d, tab[3 * bm + r] = h;
        tab[4 * bm + r] = w;
    }
}

/* The built-in epilogue with D tensors, where W->dfast: as gconv_impl_ws_store, but the op is
 * computed here, 8 columns at a time: alpha * acc + sum of beta_i * D_i (one 16-byte load per
 * D tensor, at the output's offset or, for a bias, at g * its g stride + k), then the
 * activation, chosen once per chunk. out_vec holds (K % 8 == 0), so a chunk is all inside K or
 * all outside. The first D tensor's vectors for all of a thread's rows (bm / rows per pass: 8
 * or 16) are loaded before any store: the compiler may not move a load above a store that
 * could alias it, and one DRAM round trip per row cost ~10 us on the 100x100 dense layer. */
static __device__ __forceinline__ void gconv_impl_ws_store_d(const gconv_impl_ws_params *W,
                                                             const float *cs, const int *tab,
                                                             const int bm, const int bn,
                                                             const int ld, gconv_dtype dt, int g,
                                                             int n0)
{
    const gconv_impl_fwd_params *P = &W->P;
    const gconv_epilogue *e = &P->epi;
    const int cr = bn / 8, rpp = GCONV_IMPL_WS_CONSUMERS / cr;
    /* rows per thread, at most GCONV_IMPL_WS_DROWS (the last may be past bm) */
    const int nr = (bm + rpp - 1) / rpp;
    const int tid = (int)threadIdx.x, ch = tid % cr, k0 = n0 + ch * 8, r0 = tid / cr;
    gconv_impl_igemm_u4 dv[GCONV_IMPL_WS_DROWS];
    int ri;
    if (k0 >= P->K)
        return;
#pragma unroll
    for (ri = 0; ri < GCONV_IMPL_WS_DROWS; ri++)
        if (ri < nr) {
            const int ob = r0 + ri * rpp < bm ? tab[r0 + ri * rpp] : -1;
            const int64_t off = (W->dbias & 1u) ? (int64_t)g * e->d[0].strides.g + k0
                                                : (int64_t)ob + k0;
            dv[ri].x = dv[ri].y = dv[ri].z = dv[ri].w = 0u; /* rows past M: not used */
            if (ob >= 0)
                dv[ri] = gconv_impl_igemm_ld_global16((const unsigned short *)e->d[0].data + off);
        }
#pragma unroll
    for (ri = 0; ri < GCONV_IMPL_WS_DROWS; ri++)
        if (ri < nr) {
            const int r = r0 + ri * rpp, ob = r < bm ? tab[r] : -1;
            float y[8];
            int i, j;
            if (ob < 0)
                break; /* rows past M are the tile's last */
            gconv_impl_ws_ld8(&cs[r * ld + ch * 8], y);
#pragma unroll
            for (i = 0; i < 8; i++)
                y[i] = e->alpha * y[i] + e->beta[0] * gconv_impl_igemm_u4_elem(dv[ri], i, dt);
            for (j = 1; j < e->num_d && j < GCONV_MAX_D; j++) {
                const int64_t off = ((W->dbias >> j) & 1u)
                                        ? (int64_t)g * e->d[j].strides.g + k0
                                        : (int64_t)ob + k0;
                const gconv_impl_igemm_u4 dj =
                    gconv_impl_igemm_ld_global16((const unsigned short *)e->d[j].data + off);
#pragma unroll
                for (i = 0; i < 8; i++)
                    y[i] += e->beta[j] * gconv_impl_igemm_u4_elem(dj, i, dt);
            }
            gconv_impl_act_n(e->act, y, 8);
            gconv_impl_ws_st16((unsigned short *)P->out + ob + k0,
                               gconv_impl_igemm_pack16(y, dt));
        }
}

/* Store the staged fp32 tile cs (bm x bn, ld = bn + CPAD floats a row) through the epilogue:
 * the 256 consumer threads take 8 consecutive columns of a row each (two 16-byte shared
 * loads, one 16-byte global store where out_vec allows and the 8 columns are inside K),
 * rows from the table of gconv_impl_ws_row_table. e: the epilogue, or (no D tensors) the
 * caller's copy of it whose num_d and activation kind are constants (no D tensor loads are
 * compiled, and for the built-in op the coordinates are dead: a plain store is a multiply,
 * at most a max and a convert). */
static __device__ __forceinline__ void gconv_impl_ws_store(const gconv_impl_fwd_params *P,
                                                           const gconv_epilogue *e,
                                                           const float *cs, const int *tab,
                                                           const int bm, const int bn,
                                                           const int ld, gconv_dtype dt, int g,
                                                           int n0, gconv_impl_epi_fn epi)
{
    const int cr = bn / 8, rpp = GCONV_IMPL_WS_CONSUMERS / cr;
    const int tid = (int)threadIdx.x, ch = tid % cr, k0 = n0 + ch * 8;
    const int vec = P->out_vec && k0 + 8 <= P->K;
    int r;
    for (r = tid / cr; r < bm; r += rpp) {
        const int ob = tab[r];
        float v[8], y[8];
        int i;
        if (ob < 0)
            break; /* rows past M are the tile's last */
        gconv_impl_ws_ld8(&cs[r * ld + ch * 8], v);
        if (k0 + 8 <= P->K) {
#pragma unroll
            for (i = 0; i < 8; i++)
                y[i] = epi(e, dt, v[i], g, tab[bm + r], k0 + i, tab[2 * bm + r], tab[3 * bm + r],
                           tab[4 * bm + r]);
        } else {
#pragma unroll
            for (i = 0; i < 8; i++)
                y[i] = k0 + i < P->K ? epi(e, dt, v[i], g, tab[bm + r], k0 + i, tab[2 * bm + r],
                                           tab[3 * bm + r], tab[4 * bm + r])
                                     : 0.0f;
        }
        if (vec) {
            gconv_impl_ws_st16((unsigned short *)P->out + ob + k0,
                               gconv_impl_igemm_pack16(y, dt));
        } else {
#pragma unroll
            for (i = 0; i < 8; i++)
                if (k0 + i < P->K)
                    ((unsigned short *)P->out)[ob + (k0 + i) * (int)P->so.c] =
                        (unsigned short)gconv_impl_igemm_to_bits(y[i], dt);
        }
    }
}

/* The producer (one thread): for every k-tile, once the consumers have given its stage back,
 * arm full[s] with the stage's bytes and issue the two tensor copies; the copy engine
 * completes the barrier's transaction count when both have landed (zero-filled outside the
 * tensors: padding, rows past M, channels past K). */
static __device__ __forceinline__ void gconv_impl_ws_produce(const gconv_impl_ws_params *W,
                                                             const int bm, const int bn,
                                                             const int S, unsigned sbase,
                                                             unsigned full0, unsigned empty0,
                                                             int g, int m0, int n0, int KT,
                                                             const int WTR)
{
    const gconv_impl_fwd_params *P = &W->P;
    const int SB = gconv_impl_ws_stage_bytes(bm, bn);
    const int T = P->flt[0] * P->flt[1] * P->flt[2];
    int kt, s = 0, use = 0, tap = 0, cc = 0, x = 0, y = 0, z = 0;
    int cw, ch, cd, cn;
    gconv_impl_ws_origin(P->out_sp, P->str, P->pad, m0, g * W->nbase, &cw, &ch, &cd, &cn);
    for (kt = 0; kt < KT; kt++) {
        const unsigned st = sbase + (unsigned)(s * SB), bar = full0 + 8u * (unsigned)s;
        if (kt >= S)
            gconv_impl_mbar_try_wait(empty0 + 8u * (unsigned)s, (unsigned)(use - 1) & 1u);
        gconv_impl_ws_bar_expect(bar, (unsigned)SB);
        gconv_impl_ws_tma_a(st, &W->ta, bar, W->rank, g * W->cbase + cc * 64, cw, ch, cd, cn,
                            (unsigned short)(x * P->dil[2]), (unsigned short)(y * P->dil[1]),
                            (unsigned short)(z * P->dil[0]));
        if (WTR && P->wtr) {
            /* B MN-major: per 64 output channels of the view (the weights' innermost axis) a
             * box of the 64 reduction rows of chunk cc at the flipped tap, 8 KB apart */
            int j;
            for (j = 0; j < bn / 64; j++)
                gconv_impl_ws_tma_3d(st + (unsigned)(bm * 128 + j * 8192), &W->tb, bar,
                                     n0 + 64 * j, T - 1 - tap, g * P->C + cc * 64);
        } else {
            gconv_impl_ws_tma_b(st + (unsigned)(bm * 128), &W->tb, bar, tap * P->C + cc * 64,
                                g * P->K + n0);
        }
        /* next k-tile: taps innermost (z, y, x order, as in GKYXC), then channel chunks */
        if (++tap == T) {
            tap = x = y = z = 0;
            ++cc;
        } else if (++x == P->flt[2]) {
            x = 0;
            if (++y == P->flt[1])
                y = 0, ++z;
        }
        if (++s == S)
            s = 0, ++use;
    }
}
/* The consumers' main loop: per k-tile wait for its stage, issue its wgmma (4 k-steps per m64
 * block, MW blocks of NA accumulators), commit, and give the previous stage back. MN (a
 * literal): 0 B K-major ([BN][64] rows of 128 bytes, k-step ks 32 bytes on), 2 B MN-major (the
 * in-place backward-data weights: BN / 64 boxes of 64 reduction rows x 64 channels, 8 KB
 * apart, k-step ks 16 rows = 2 KB on). TR (a literal): the transposed tile, the stage's
 * weights are the wgmma's A (m64 block mb of warpgroup wg: the 64 channels from 64 (MW wg +
 * mb), weight rows there or with MN 2 that box read MN-major) and its bm im2col rows the B of
 * m64 x bm instructions. Returns with every wgmma retired. */
static __device__ __forceinline__ void gconv_impl_ws_mainloop(float *acc, unsigned sbase,
                                                              unsigned full0, unsigned empty0,
                                                              const int S, const int SB, int KT,
                                                              int wg, const int bm, const int bn,
                                                              const int MW, const int NA,
                                                              const gconv_dtype dt, const int MN,
                                                              const int TR)
{
    int kt, s = 0, use = 0, ps = 0;
    for (kt = 0; kt < KT; kt++) {
        const unsigned st = sbase + (unsigned)(s * SB);
        int mb, ks;
        gconv_impl_mbar_try_wait(full0 + 8u * (unsigned)s, (unsigned)use & 1u);
        gconv_impl_ws_fence_acc(acc, MW * NA);
        gconv_impl_igemm_wgmma_fence();
        if (TR) {
            /* m64 block mb of the warpgroup: channels 64 (MW wg + mb) on */
#pragma unroll
            for (mb = 0; mb < 2; mb++)
                if (mb < MW) {
                    const unsigned w = st + (unsigned)(bm * 128);
                    const int cb = MW * wg + mb;
#pragma unroll
                    for (ks = 0; ks < 4; ks++) {
                        const unsigned long long da =
                            MN ? gconv_impl_igemm_wgmma_desc_mn(
                                     w + (unsigned)(cb * 8192 + 2048 * ks), 8192)
                               : gconv_impl_igemm_wgmma_desc(
                                     w + (unsigned)(cb * 64 * 128 + 32 * ks), 128);
                        const unsigned long long db =
                            gconv_impl_igemm_wgmma_desc(st + (unsigned)(32 * ks), 128);
                        gconv_impl_igemm_wgmma(acc + mb * NA, da, db, kt > 0 || ks > 0, bm, dt,
                                               MN ? 3 : 0);
                    }
                }
        }
#pragma unroll
        for (mb = 0; mb < 2; mb++)
            if (!TR && mb < MW) {
#pragma unroll
                for (ks = 0; ks < 4; ks++) {
                    const unsigned a = st + (unsigned)((wg * (bm / 2) + mb * 64) * 128 + 32 * ks);
                    const unsigned long long da = gconv_impl_igemm_wgmma_desc(a, 128);
                    const unsigned long long db =
                        MN ? gconv_impl_igemm_wgmma_desc_mn(st + (unsigned)(bm * 128 + 2048 * ks),
                                                            8192)
                           : gconv_impl_igemm_wgmma_desc(st + (unsigned)(bm * 128 + 32 * ks), 128);
                    gconv_impl_igemm_wgmma(acc + mb * 64, da, db, kt > 0 || ks > 0, bn, dt, MN);
                }
            }
        gconv_impl_igemm_wgmma_commit();
        gconv_impl_ws_retire(acc, MW * NA, kt, empty0 + 8u * (unsigned)ps);
        ps = s;
        if (++s == S)
            s = 0, ++use;
    }
    gconv_impl_igemm_wgmma_wait(0);
}

#endif /* GCONV_IMPL_HAS_WGMMA */

/* One block computes a BM x BN tile of one group's output (grid: G * mt * nt blocks, tiles in
 * gconv_impl_igemm_raster order). W: the kernel's __grid_constant__ parameters; bm, bn: a
 * configuration's, as literal constants; WTR (a literal): 1 where the kernel also takes
 * backward data's in-place weights (W->P.wtr), 0 for the forward's (one main loop); TR (a
 * literal): the transposed form (gconv_impl_ws_tr; each consumer warpgroup bn / 2 of the
 * channels for all bm pixels; 384 threads). The stage layout and the producer are the same in
 * both forms. */
#if defined(GCONV_PLATFORM_CUDA)
static __device__ __forceinline__ void gconv_impl_ws_fwd_body(const gconv_impl_ws_params *W,
                                                              const int bm, const int bn,
                                                              const int bps,
                                                              const gconv_dtype dt,
                                                              gconv_impl_epi_fn epi, const int WTR,
                                                              const int TR)
{
#if GCONV_IMPL_HAS_WGMMA
    GCONV_IMPL_DYN_SMEM(smem_raw);
    __shared__ __align__(8) unsigned long long bars[2 * GCONV_IMPL_WS_MAX_STAGES];
    const gconv_impl_fwd_params *P = &W->P;
    const int S = gconv_impl_ws_stages(bm, bn, bps), SB = gconv_impl_ws_stage_bytes(bm, bn);
    const int tid = (int)threadIdx.x;
    const int KT = P->flt[0] * P->flt[1] * P->flt[2] * (P->C / 64);
    unsigned char *smem = smem_raw;
    unsigned sbase, full0, empty0;
    int g, tm, tn, m0, n0;
    smem += (1024u - (gconv_impl_igemm_smem_addr(smem_raw) & 1023u)) & 1023u;
    sbase = gconv_impl_igemm_smem_addr(smem);
    full0 = gconv_impl_igemm_smem_addr(&bars[0]);
    empty0 = full0 + 8u * (unsigned)S;
    {
        const int tpg = P->mt * P->nt;
        const int L = (int)blockIdx.x;
        g = L / tpg;
        gconv_impl_igemm_raster(L - g * tpg, P->mt, P->nt, &tm, &tn);
    }
    m0 = tm * bm;
    n0 = tn * bn;
    gconv_impl_ws_init_bars(full0, empty0, S);

    if (tid >= GCONV_IMPL_WS_CONSUMERS) {
        if (TR) /* a producer warpgroup gives registers away (gconv_impl_ws_tr) */
            GCONV_IMPL_WS_SETMAXNREG("dec", 40);
        if (tid == GCONV_IMPL_WS_CONSUMERS)
            gconv_impl_ws_produce(W, bm, bn, S, sbase, full0, empty0, g, m0, n0, KT, WTR);
        return;
    }
    if (TR)
        GCONV_IMPL_WS_SETMAXNREG("inc", 232);
    {
        const int wg = tid >> 7;
        /* m64 blocks per warpgroup, accumulators each */
        const int MW = TR ? bn / 128 : bm / 128, NA = TR ? bm / 2 : bn / 2;
        float acc[GCONV_IMPL_WS_ACC];
        /* one copy of the main loop per B form (the transpose immediate is part of the
         * instruction; a branch inside the loop makes ptxas serialise the wgmma) */
        if (WTR && P->wtr)
            gconv_impl_ws_mainloop(acc, sbase, full0, empty0, S, SB, KT, wg, bm, bn, MW, NA, dt, 2,
                                   TR);
        else
            gconv_impl_ws_mainloop(acc, sbase, full0, empty0, S, SB, KT, wg, bm, bn, MW, NA, dt, 0,
                                   TR);
        gconv_impl_ws_fence_acc(acc, MW * NA);
        gconv_impl_ws_sync_consumers(); /* no consumer reads the ring any more: stage C in it */
        {
            float *cs = (float *)smem;
            /* row stride of the staged tile: % 32 == 8 for the plain form's 8-byte stores, 4
             * for the transposed form's 4-byte ones (GCONV_IMPL_CPAD is 8) */
            const int ld = bn + (TR ? 4 : GCONV_IMPL_CPAD);
            int *tab = (int *)(smem + bm * ld * 4); /* gconv_impl_ws_sized counted it */
            if (TR) {
                gconv_impl_ws_stage_acc_t(acc, NA, cs, ld, wg * (bn / 2));
                if (MW > 1)
                    gconv_impl_ws_stage_acc_t(acc + NA, NA, cs, ld, wg * (bn / 2) + 64);
            } else {
                /* block mb of the warpgroup: accumulators mb * NA .. */
                gconv_impl_ws_stage_acc(acc, NA, cs, ld, wg * (bm / 2));
                if (MW > 1)
                    gconv_impl_ws_stage_acc(acc + NA, NA, cs, ld, wg * (bm / 2) + 64);
            }
            gconv_impl_ws_row_table(P, tab, bm, g, m0);
            gconv_impl_ws_sync_consumers(); /* C and the row table staged */
            if (P->epi.num_d == 0) {
                /* an exact copy of the epilogue whose num_d and (for the common kinds)
                 * activation kind are constants: the built-in op then compiles to a multiply
                 * and at most a max, without a branch per element */
                gconv_epilogue e0 = P->epi;
                e0.num_d = 0;
                if (e0.act.kind == GCONV_ACT_NONE) {
                    e0.act.kind = GCONV_ACT_NONE;
                    gconv_impl_ws_store(P, &e0, cs, tab, bm, bn, ld, dt, g, n0, epi);
                } else if (e0.act.kind == GCONV_ACT_RELU) {
                    e0.act.kind = GCONV_ACT_RELU;
                    gconv_impl_ws_store(P, &e0, cs, tab, bm, bn, ld, dt, g, n0, epi);
                } else {
                    gconv_impl_ws_store(P, &e0, cs, tab, bm, bn, ld, dt, g, n0, epi);
                }
            } else if (W->dfast && epi == gconv_impl_epilogue_apply) {
                gconv_impl_ws_store_d(W, cs, tab, bm, bn, ld, dt, g, n0);
            } else {
                gconv_impl_ws_store(P, &P->epi, cs, tab, bm, bn, ld, dt, g, n0, epi);
            }
        }
    }
#else
    (void)W, (void)bm, (void)bn, (void)bps, (void)dt, (void)epi, (void)WTR, (void)TR;
#endif
}
#endif /* GCONV_PLATFORM_CUDA */

/* ---- host side ------------------------------------------------------------------------------ */

/* Whether kernel k's code in the binary the runtime picks for the current device declares at
 * least `bytes` of static shared memory: how the host tells a kernel's sm_90a body (whose
 * device code alone declares it) from the empty or simpler one of other device passes.
 * known / yes: bit d set once device d (< 32) has been asked, and if the answer was yes;
 * devices 32 and up are asked every time. */
static inline int gconv_impl_kernel_smem_at_least(const void *k, size_t bytes, unsigned *known,
                                                  unsigned *yes)
{
#if GCONV_IMPL_WS_HOST
    int dev = 0, ok;
    cudaFuncAttributes fa;
    if (cudaGetDevice(&dev) != cudaSuccess)
        return 0;
    if (dev < 32 && (*known >> dev) & 1u)
        return (int)((*yes >> dev) & 1u);
    ok = cudaFuncGetAttributes(&fa, k) == cudaSuccess && fa.sharedSizeBytes >= bytes;
    if (dev < 32) {
        *yes |= (unsigned)ok << dev;
        *known |= 1u << dev;
    }
    return ok;
#else
    (void)k, (void)bytes, (void)known, (void)yes;
    return 0;
#endif
}

/* Whether kernel k (a gconv_impl_ws_fwd_body instance) has its real body in the binary the
 * runtime picks for the current device (sm_90a SASS): only then does it have the static
 * shared memory of the body. */
static inline int gconv_impl_ws_available(const void *k, unsigned *known, unsigned *yes)
{
    return gconv_impl_kernel_smem_at_least(k, GCONV_IMPL_WS_STATIC_SMEM, known, yes);
}

#if GCONV_IMPL_WS_HOST
/* The driver's tensor-map encoders, found once through the runtime (no link to libcuda). */
typedef CUresult (*gconv_impl_ws_im2col_fn)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *,
                                            const cuuint64_t *, const cuuint64_t *, const int *,
                                            const int *, cuuint32_t, cuuint32_t,
                                            const cuuint32_t *, CUtensorMapInterleave,
                                            CUtensorMapSwizzle, CUtensorMapL2promotion,
                                            CUtensorMapFloatOOBfill);
typedef CUresult (*gconv_impl_ws_tiled_fn)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *,
                                           const cuuint64_t *, const cuuint64_t *,
                                           const cuuint32_t *, const cuuint32_t *,
                                           CUtensorMapInterleave, CUtensorMapSwizzle,
                                           CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

static inline int gconv_impl_ws_encoders(gconv_impl_ws_im2col_fn *im, gconv_impl_ws_tiled_fn *ti)
{
    /* resolved into locals and published with the state last, so that a thread that sees
     * state 1 also sees the pointers (racing first calls write the same values) */
    static volatile int state = -1;
    static void *volatile fi, *volatile ft;
    if (state < 0) {
        enum cudaDriverEntryPointQueryResult q1 = cudaDriverEntryPointSymbolNotFound, q2 = q1;
        void *a = NULL, *b = NULL;
        const int ok = cudaGetDriverEntryPointByVersion("cuTensorMapEncodeIm2col", &a, 12000,
                                                        cudaEnableDefault, &q1) == cudaSuccess &&
                       cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &b, 12000,
                                                        cudaEnableDefault, &q2) == cudaSuccess &&
                       q1 == cudaDriverEntryPointSuccess && q2 == cudaDriverEntryPointSuccess &&
                       a && b;
        fi = a, ft = b;
        state = ok;
    }
    *im = (gconv_impl_ws_im2col_fn)fi;
    *ti = (gconv_impl_ws_tiled_fn)ft;
    return state;
}

/* Encode m, the im2col tensor map of an NHWGC / GNHWC input (in, strides si, G groups of C
 * channels, N images) for a convolution of the given geometry: copies of `pixels` output
 * positions x 64 channels. *rank: 3, 4, 5 for 1D, 2D, 3D; the channel coordinate of group g is
 * g * *cbase (NHWGC: C; GNHWC: 0) and the image coordinate n + g * *nbase (NHWGC: 0; GNHWC: N,
 * the groups' images folded into one batch axis). 0 when the problem is outside what the copy
 * engine's im2col mode takes (channels not contiguous, bounding-box corners, strides or tap
 * offsets out of its ranges, an encoder missing or refusing). The box of each spatial axis
 * spans the receptive-field origins of the output positions: lower corner -pad, upper corner
 * chosen so that stepping by the stride from the lower one reaches exactly out - 1 steps
 * inside the input's extent. */
static inline int gconv_impl_ws_im2col(CUtensorMap *m, gconv_dtype dt, const void *in,
                                       const gconv_act_strides *si, const int *in_sp,
                                       const int *out_sp, const int *flt, const int *str,
                                       const int *dil, const int *pad, int G, int C, int64_t N,
                                       int pixels, int *rank, int *cbase, int *nbase)
{
    const CUtensorMapDataType ty =
        dt == GCONV_BF16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    const int d3 = in_sp[0] > 1 || flt[0] > 1 || out_sp[0] > 1 || pad[0] != 0;
    const int d2 = d3 || in_sp[1] > 1 || flt[1] > 1 || out_sp[1] > 1 || pad[1] != 0;
    const int r = d3 ? 5 : d2 ? 4 : 3, nsp = r - 2;
    /* the copy engine's ranges: bounding-box corners and tap offsets (PTX im2col offsets are
     * 16, 8 and 5 bits wide for 3-, 4- and 5-dimensional tensors) */
    const int lim = r == 3 ? 32768 : r == 4 ? 128 : 16;
    const int olim = r == 3 ? 0xffff : r == 4 ? 255 : 31;
    gconv_impl_ws_im2col_fn enc_a;
    gconv_impl_ws_tiled_fn enc_b;
    cuuint64_t dim[5], gs[4];
    cuuint32_t es[5];
    int lo[3], up[3], i;
    int64_t nimg;
    *rank = r;
    if (!gconv_impl_ws_encoders(&enc_a, &enc_b) || si->c != 1 || N <= 0)
        return 0;
    if (si->g == C && si->s[2] == (int64_t)G * C) {
        *cbase = C, *nbase = 0, nimg = N; /* NHWGC */
    } else if (si->s[2] == C && si->g == N * si->n) {
        *cbase = 0, *nbase = (int)N, nimg = (int64_t)G * N; /* GNHWC */
    } else {
        return 0;
    }
    /* dims innermost first: channels of a pixel, W, H, D (as used), images */
    dim[0] = (cuuint64_t)si->s[2];
    es[0] = 1;
    for (i = 0; i < nsp; i++) {
        const int a = 2 - i; /* W, H, D slots */
        dim[1 + i] = (cuuint64_t)in_sp[a];
        gs[i] = (cuuint64_t)si->s[a] * 2;
        es[1 + i] = (cuuint32_t)str[a];
        lo[i] = -pad[a];
        up[i] = lo[i] + (out_sp[a] - 1) * str[a] - (in_sp[a] - 1);
        if (str[a] > 8 || lo[i] < -lim || lo[i] >= lim || up[i] < -lim || up[i] >= lim ||
            (int64_t)(flt[a] - 1) * dil[a] > olim)
            return 0;
    }
    dim[r - 1] = (cuuint64_t)nimg;
    gs[r - 2] = (cuuint64_t)si->n * 2;
    es[r - 1] = 1;
    return enc_a(m, ty, (cuuint32_t)r, (void *)in, dim, gs, lo, up, 64, (cuuint32_t)pixels, es,
                 CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                 CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) ==
           CUDA_SUCCESS;
}

/* Encode m, a tiled map of a 16-bit tensor of rank dims (at most 5; sizes dim, innermost
 * first; byte strides gs of the outer dims) whose copies are boxes of box[] elements with
 * swizzle sw (128-byte: box[0] = 64). Elements outside the tensor arrive as zeros. 0 when the
 * encoder refuses. */
static inline int gconv_impl_ws_tiled(CUtensorMap *m, gconv_dtype dt, const void *base, int dims,
                                      const cuuint64_t *dim, const cuuint64_t *gs,
                                      const cuuint32_t *box, CUtensorMapSwizzle sw,
                                      CUtensorMapL2promotion l2)
{
    const CUtensorMapDataType ty =
        dt == GCONV_BF16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    const cuuint32_t es[5] = {1, 1, 1, 1, 1};
    gconv_impl_ws_im2col_fn enc_a;
    gconv_impl_ws_tiled_fn enc_b;
    if (!gconv_impl_ws_encoders(&enc_a, &enc_b))
        return 0;
    return enc_b(m, ty, (cuuint32_t)dims, (void *)base, dim, gs, box, es,
                 CU_TENSOR_MAP_INTERLEAVE_NONE, sw, l2,
                 CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

/* Fill W for the forward parameters P (16-bit type dt, tiles bm x bn): the tensor maps and
 * coordinate bases. 0 when the problem is outside what the copy engine takes (a layout other
 * than NHWGC / GNHWC with GKYXC-dense weights, or gconv_impl_ws_im2col refusing); the caller
 * then runs the engine of gconv/igemm.h. */
static inline int gconv_impl_ws_plan(gconv_impl_ws_params *W, const gconv_impl_fwd_params *P,
                                     gconv_dtype dt, int bm, int bn)
{
    const int64_t opix = (int64_t)P->out_sp[0] * P->out_sp[1] * P->out_sp[2];
    const int64_t N = opix > 0 ? P->M / opix : 0;
    cuuint64_t bdim[2], bstr[1];
    cuuint32_t box[2];
    int i;
    memset(W, 0, sizeof *W);
    W->P = *P;
    /* D tensors for the vector epilogue: 16-byte aligned, channel stride 1, and either the
     * output's strides or broadcast over n, d, h, w (with a g stride that keeps 16 bytes) */
    W->dfast = P->out_vec && P->so.c == 1;
    for (i = 0; i < P->epi.num_d && i < GCONV_MAX_D; i++) {
        const gconv_act_strides *sd = &P->epi.d[i].strides;
        const int same = sd->g == P->so.g && sd->n == P->so.n && sd->c == P->so.c &&
                         sd->s[0] == P->so.s[0] && sd->s[1] == P->so.s[1] &&
                         sd->s[2] == P->so.s[2];
        const int bias = sd->n == 0 && sd->s[0] == 0 && sd->s[1] == 0 && sd->s[2] == 0 &&
                         sd->c == 1 && sd->g % 8 == 0;
        if ((uintptr_t)P->epi.d[i].data % 16 != 0 || (!same && !bias))
            W->dfast = 0;
        if (!same && bias)
            W->dbias |= 1u << i;
    }
    if (!P->wtr && (P->sw.c != 1 || P->sw.g != (int64_t)P->K * P->sw.k || P->sw.k < P->Kg))
        return 0;
    if (!gconv_impl_ws_im2col(&W->ta, dt, P->in, &P->si, P->in_sp, P->out_sp, P->flt, P->str,
                              P->dil, P->pad, P->G, P->C, N, bm, &W->rank, &W->cbase, &W->nbase))
        return 0;
    if (P->wtr) {
        /* B: the backward-data problem's dense GKYXC weights [G][C'][taps][K'] (C' = the
         * view's C, K' = its K) as [G * C' rows][taps][K']: boxes of 64 K' x 1 tap x 64 rows.
         * K' past the end reads zeros; rows never cross a group (C % 64 == 0) */
        const int T = P->flt[0] * P->flt[1] * P->flt[2];
        cuuint64_t tdim[3], tstr[2];
        cuuint32_t tbox[3];
        tdim[0] = (cuuint64_t)P->K;
        tdim[1] = (cuuint64_t)T;
        tdim[2] = (cuuint64_t)P->G * P->C;
        tstr[0] = (cuuint64_t)P->K * 2;
        tstr[1] = (cuuint64_t)T * P->K * 2;
        tbox[0] = 64, tbox[1] = 1, tbox[2] = 64;
        return gconv_impl_ws_tiled(&W->tb, dt, P->wei, 3, tdim, tstr, tbox,
                                   CU_TENSOR_MAP_SWIZZLE_128B,
                                   CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
    }
    /* B: the weights as [G * K rows][sw.k], 64 x BN boxes (rows past G * K read as zeros) */
    bdim[0] = (cuuint64_t)P->Kg;
    bdim[1] = (cuuint64_t)P->G * P->K;
    bstr[0] = (cuuint64_t)P->sw.k * 2;
    box[0] = 64;
    box[1] = (cuuint32_t)bn;
    return gconv_impl_ws_tiled(&W->tb, dt, P->wei, 2, bdim, bstr, box,
                               CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
}
/* The halo kernel's copy-engine copies (gconv/igemm_halo.h, plans of one n-tile: with more,
 * ResNeXt 1024@7 backward data with a residual lost 3 %): a tiled map of the input (p: the
 * problem the plan is of) as [G * C][W][H][N] whose box is a halo tile in the kernel's
 * shared-memory layout, 72 channels a pixel (the chunk's 64, then the 8 of the 144-byte row's
 * pad: the next chunk's or, past the last channel, zeros) x Wp columns from -pw x the band's
 * R + (Y - 1) * dh rows, pixels outside the image as zeros; and the two mbarriers after the
 * rest of the shared memory. Leaves H->tma 0 where the input's pixels are not packed or the
 * encoder refuses. */
/* A tiled map of a packed NHWGC tensor (16-bit type dt) of n images of h x w pixels, ch
 * channels a pixel (element strides: pixel ws, row hs, image ns), as [ch][w][h][n] with boxes
 * of a halo pixel's 72 channels x bw columns x bh rows x 1 image: the halo kernels' copies (the
 * forward one's input, backward weight BWH's input and d_out). 0 where the encoder refuses. */
static inline int gconv_impl_halo_map(CUtensorMap *m, gconv_dtype dt, const void *base, int ch,
                                      int w, int h, int n, int ws, int hs, int64_t ns, int bw,
                                      int bh)
{
    cuuint64_t dim[4], gs[3];
    cuuint32_t box[4];
    dim[0] = (cuuint64_t)ch, dim[1] = (cuuint64_t)w, dim[2] = (cuuint64_t)h;
    dim[3] = (cuuint64_t)n;
    /* one row (1D problems): its stride is never used, but must be a valid one */
    gs[0] = (cuuint64_t)ws * 2, gs[1] = (cuuint64_t)(h > 1 ? hs : ns) * 2;
    gs[2] = (cuuint64_t)ns * 2;
    box[0] = GCONV_IMPL_HALO_PS / 2, box[1] = (cuuint32_t)bw, box[2] = (cuuint32_t)bh, box[3] = 1;
    return gconv_impl_ws_tiled(m, dt, base, 4, dim, gs, box, CU_TENSOR_MAP_SWIZZLE_NONE,
                               CU_TENSOR_MAP_L2_PROMOTION_L2_128B);
}

static inline void gconv_impl_halo_tma_setup(gconv_impl_halo_params *H, const gconv_problem *p)
{
    const int rows = H->R + (p->filter[1] - 1) * H->dh, end = gconv_impl_halo_data_end(H);
    H->tma = 0;
    if (H->NT != 1 || H->in_w != H->G * H->C || rows > 256 || H->Wp > 256 ||
        ((end + 7) & ~7) + GCONV_IMPL_HALO_BAR_BYTES > GCONV_IMPL_HALO_MAX_SMEM)
        return;
    if (!gconv_impl_halo_map(&H->tmap, H->dt, H->in, H->G * H->C, H->W, H->H, H->N, H->in_w,
                             H->in_h, H->in_n, H->Wp, rows))
        return;
    H->tbytes = GCONV_IMPL_HALO_PS * H->Wp * rows;
    H->tbar_off = (end + 7) & ~7;
    H->tma = 1;
}

/* The staged one-D-tensor epilogue (gconv_impl_halo_plan_stage: the D tensor in the output's
 * layout, the words staged) in the two-block kernel with two staging tiles: each unit's D words
 * come by one copy-engine copy straight into its tile, issued as the unit before starts, so that
 * the items read D from shared memory a unit after it was asked for (no per-item global loads
 * whose latency the short math of a unit cannot hide, no D registers held across the math).
 * Needs the tiles 128-byte aligned (the first moved up), both in the two-block kernel's shared
 * memory, a box of at most 256 columns and rows, and an unrolled 3x3 shape. Called after
 * gconv_impl_halo_tma_setup; the launcher then takes the two-block kernel
 * (GCONV_IMPL_HALO_LAUNCH_ANY). H100, ResNeXt
 * backward data with a residual, us: 256@28 (C = K = 8, two-row units) 43.3 -> 40.0, 512@14
 * 27.9 -> 26.1, 1024@7 21.4 -> 20.1; but 128@56 (pairs of C = K = 4, one-row units) 85.8 ->
 * 88-90 against the three-block kernel's own loads (with one tile, D asked as each unit
 * starts, 91), so one-n-tile plans of one-row units keep those. */
static inline void gconv_impl_halo_dtma_setup(gconv_impl_halo_params *H)
{
    int off, end;
    H->dtma = 0;
    if (H->NT == 4 && H->MT == 2) /* wide plans (gconv_impl_halo_plan_wide): no dtma loops */
        return;
    if (gconv_impl_halo_no_dtma || !H->ostage || H->plain || H->epi.num_d != 1 || !H->dsame ||
        (H->NT == 1 && H->R < 2) || H->R > 256 || H->Wp > 256 ||
        (uintptr_t)H->epi.d[0].data % 16)
        return;
    /* the kernel has these loops for the unrolled 3x3 shapes only (C = K = 8 or pairs of 4,
     * 16, 32: gconv_impl_halo_body) */
    if (H->KS != (H->NT == 1 ? 5 : H->NT == 2 ? 9 : 18))
        return;
    off = (H->stage_off + 127) & ~127;
    end = off + 2 * H->Q * GCONV_IMPL_HALO_SROW * 4;
    if (((end + 7) & ~7) + GCONV_IMPL_HALO_BAR_BYTES > GCONV_IMPL_HALO_MAX_SMEM)
        return;
    if (!gconv_impl_halo_map(&H->dmap, H->dt, H->epi.d[0].data, H->G * H->K, H->OW, H->OH,
                             H->N, H->out_w, H->out_h, H->out_n, H->Wp, H->R))
        return;
    H->stage_off = off;
    H->dbytes = GCONV_IMPL_HALO_PS * H->Wp * H->R;
    H->tbar_off = (end + 7) & ~7;
    H->dtma = 1;
}
#else
/* Without the 12.5+ runtime the halo kernel copies every halo with cp.async. */
static inline void gconv_impl_halo_tma_setup(gconv_impl_halo_params *H, const gconv_problem *p)
{
    H->tma = 0;
    (void)p;
}

static inline void gconv_impl_halo_dtma_setup(gconv_impl_halo_params *H)
{
    H->dtma = 0;
}
#endif /* GCONV_IMPL_WS_HOST */

/* Configuration for a problem: each one's time in tile times (rounds of tiles over the SMs,
 * bps blocks each: a full round of two co-resident blocks takes two tile times, a last round
 * that leaves one block per SM one) times the tile's area, over its relative rate per tile
 * measured on H100 (bench/NOTES.md, 2026-11-24 session 10, with the row-table epilogue:
 * 128x128 alone 0.855, 256x128 1.0, 128x256 1.045, 128x128 two per SM 0.86; 152x256
 * transposed 1.0, session 24: 35.1 us for one round of it against 90.4 for three rounds of
 * 256x128, per output 0.90 against 0.92 ns). */
static inline int gconv_impl_ws_pick(int64_t M, int K, int G, int sms)
{
    static const double eff[GCONV_IMPL_WS_COUNT] = {0.855, 1.0, 1.045, 0.86, 1.0};
    int best = 0, c;
    double bcost = 0;
    if (sms <= 0)
        sms = 80;
    for (c = 0; c < GCONV_IMPL_WS_COUNT; c++) {
        const int bm = gconv_impl_ws_bm(c), bn = gconv_impl_ws_bn(c), bps = gconv_impl_ws_bps(c);
        const int64_t tiles = (int64_t)G * ((M + bm - 1) / bm) * ((K + bn - 1) / bn);
        const int64_t slots = (int64_t)sms * bps, full = tiles / slots, left = tiles % slots;
        const double times = (double)full * bps + (left == 0 ? 0.0 : left <= sms ? 1.0 : bps);
        const double cost = times * bm * bn / eff[c];
        if (c == 0 || cost < bcost)
            best = c, bcost = cost;
    }
    return best;
}

#endif /* GCONV_IGEMM_WS_H */
