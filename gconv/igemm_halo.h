/* gconv/igemm_halo.h: forward grouped convolution for few channels per group, on tensor cores,
 * from an input tile with its halo held in shared memory (the ResNeXt case: 4 to 32 channels
 * per group, where an im2col GEMM reads every input pixel once per tap through L2; C = 64 is
 * left to the implicit GEMM).
 *
 * Scope (gconv_impl_halo_plan says whether a problem fits; everything else takes the implicit
 * GEMM of gconv/igemm.h or a direct kernel): NHWGC input and output, GKYXC weights, 1D or 2D,
 * fp16 / bf16, stride 1, any filter size, dilation and padding, C in {8, 16, 32} with K even
 * and at most 32, or C = K = 4 with an even group count; in / wei / out 16-byte aligned, fewer
 * than 2^31 elements per tensor, CUDA sm_80+ (mma.sync).
 *
 * Work units. A unit is R full output rows (a band) of one image for a chunk of GB = 64 / C
 * consecutive groups (64 input channels: 128 contiguous bytes per pixel). The grid is
 * persistent: each block takes a contiguous range of units, ordered chunk, image, band (band
 * fastest), so a block keeps its chunk's weights in shared memory across units and reloads
 * them only where its range crosses into the next chunk. The halo tile is double-buffered:
 * while the warps compute unit u from one buffer, cp.async fills the other with unit u + 1's
 * halo (one barrier per unit). Where the chunk changes, the block waits, then loads weights and
 * halo together.
 *
 * Stride 1 makes every tap a constant shift of a flattened tile: with Wp = OW + (X - 1) * dw
 * columns, the halo tile holds input rows oh0 - ph .. and columns -pw .. -pw + Wp - 1 as
 * pixels p = hr * Wp + hc (zero outside the image), and the "virtual" output pixel
 * q = r * Wp + c (r < R, any c < Wp) reads tap (ty, tx) at p = q + ty * dh * Wp + tx * dw.
 * Columns c >= OW are computed and thrown away ((X - 1) * dw / OW of the work; tensor cores
 * have it to spare). The per-group GEMM is then D[q][k] = sum over kk = tap * C + c of
 * A[q][kk] * B[kk][k] with A[q][kk] = halo[q + toff(tap)][g*C + c] and B[kk][k] =
 * wei[g][k][kk] (GKYXC keeps a (g, k) row's taps * C elements contiguous, in exactly this kk
 * order). With C >= 8 every 8 columns of a k-step of 16 belong to one tap: one 16-byte
 * ldmatrix row.
 *
 * C = K = 4 ("pair" mode): the kernel sees G / 2 groups of C = K = 8, each a pair of the
 * problem's groups (their 8 input and 8 output channels are adjacent in NHWGC), with the
 * block-diagonal weights B[tap * 8 + 4 * i + c][4 * j + k] = (i == j) ? wei[2 g' + j][k][tap][c]
 * : 0 built in shared memory; half the mma work is zeros, which these memory-bound shapes can
 * afford. The epilogue function receives the problem's own group and channel.
 *
 * Shared memory: two halo buffers [P pixels][64 channels + 8 pad] (144-byte rows: the 8 rows of
 * an ldmatrix, 8 consecutive pixels, fall in 8 distinct 16-byte bank groups; a wide plan of two
 * images a unit holds two such halos a buffer); weights
 * [GB * NT * 8 rows][KS * 16 + 8] (KS = ceil(taps * C / 16) k-steps; rows k >= K and the
 * padding are zero; the odd number of 16-byte chunks per row keeps B's ldmatrix conflict-free);
 * per-lane ldmatrix offsets of every k-step (the common 3x3 shapes keep them in registers and
 * unroll the k loop; backward data's in-place weights, gconv_impl_halo_plan_wtr, add B's);
 * per virtual pixel its output offset within the band (-1: a column thrown away); per halo
 * pixel its input offset and row (the copies' addresses). Halo and weights arrive by cp.async
 * with zero fill; the tables are built once per block, while the first weights are in flight.
 * Except (sm_90a device passes, one-n-tile plans, packed input): each
 * next halo of the same chunk is one copy-engine (TMA) copy issued by thread 0, a box of 72
 * channels (the chunk's 64 and the row pad's 8, so that it lands in the 144-byte rows as is)
 * by Wp columns by the band's halo rows, zeros outside the image, completing an mbarrier per
 * buffer (gconv_impl_halo_tma_setup in gconv/igemm_ws.h encodes the map; H100: ResNeXt 128@56
 * forward 57.0 -> 52.3 us, backward data 64.8 -> 56.5, with a residual 104 -> 93.5; the
 * C = K = 32 plans lost 3 % with it at 1024@7 and keep cp.async; bench/NOTES.md).
 *
 * Backward data (stride 1) runs this kernel on its forward view: the weights flipped in both
 * filter axes with C and K swapped. Where the view's K is a multiple of 8 and the weights are
 * GKYXC (gconv_impl_halo_plan_wtr), the kernel reads the problem's weights as they are, k-major,
 * through ldmatrix.trans; in pair mode with GKYXC weights its weight fill builds the view's
 * block-diagonal weights from them (P->wflip); otherwise a pre-pass kernel writes the view's
 * weights first.
 *
 * The math. A warp takes work items (group, MT consecutive 16-pixel m-tiles) and, for each
 * k-step, loads B for NT = ceil(K / 8) n-tiles (NT 1, 2 or 4, rounded up) and, per m-tile,
 * A with one ldmatrix.x4 straight from the halo (each lane addresses its own pixel and tap),
 * then issues MT x NT m16n8k16 mma.sync with MT = 4 / NT, or MT = 2 with four n-tiles in the
 * wide plans (gconv_impl_halo_plan_wide: a 32 x 32 warp tile, a third fewer shared-memory
 * reads a mma; units of two images where an image is one small band, e.g. 7x7; H200, ResNeXt
 * 1024@7 forward 16.2 -> 13.9 us, backward data 16.6 -> 14.2). The epilogue stores pairs of output
 * channels (32-bit) straight from the accumulators, except where a unit's GB * K <= 64
 * channels a pixel, every chunk is full and the output strides are 16-byte aligned: there the
 * warps pack their words into a staging tile in shared memory that the block then writes in
 * 16-byte pieces (a pixel's 128-byte line where GB * K = 64; gconv_impl_halo_plan_stage), for
 * a plain epilogue with one n-tile and for one D tensor in the output's layout with any (its
 * epilogue applied first, in fp32; gconv_impl_halo_res_word). Else: the plain store as is;
 * the built-in epilogue with every D tensor in the output's layout (a residual) reads D's
 * words at the same index (one D: loaded before the math, so the load overlaps it); anything
 * else (a bias, other strides, a user op) calls the epilogue function
 * per element from a rolled loop, so its code exists once.
 *
 * Used by gconv/fwd.h (GCONV_FWD dispatch) and gconv/bwd_data.h (stride-1 backward data as a
 * forward convolution); needs a HIP or CUDA compiler.
 */
#ifndef GCONV_IGEMM_HALO_H
#define GCONV_IGEMM_HALO_H

#include "igemm.h"
#if defined(GCONV_PLATFORM_CUDA)
#include <cuda.h> /* CUtensorMap (the copy-engine halo copies; encoded in gconv/igemm_ws.h) */
#endif

#define GCONV_IMPL_HALO_THREADS 256
#ifndef GCONV_IMPL_HALO_MIN_BLOCKS
#define GCONV_IMPL_HALO_MIN_BLOCKS 2          /* per SM: caps registers at 128 per thread */
#endif
/* the same for the second kernel of the one-n-tile plans (K <= 8: C = K = 8 and pairs of
 * C = K = 4, the ResNeXt 28x28 and 56x56 layers), whose few accumulators fit 80 registers: 3
 * blocks of 8 warps per SM where shared memory allows (the launcher takes it where the
 * epilogue reads D tensors: GCONV_IMPL_HALO_LAUNCH_ANY in gconv/fwd.h) */
#ifndef GCONV_IMPL_HALO_MIN_BLOCKS1
#define GCONV_IMPL_HALO_MIN_BLOCKS1 3
#endif
#define GCONV_IMPL_HALO_PS 144                /* bytes per halo pixel: 64 channels + 8 pad */
#define GCONV_IMPL_HALO_SROW 36               /* words per staged output pixel: 32 + 4 pad */
#define GCONV_IMPL_HALO_MAX_SMEM (110 * 1024) /* two halos + weights + tables (+ staging) */
#define GCONV_IMPL_HALO_MAX_TAPS 1024
/* the most data (before the mbarriers, GCONV_IMPL_HALO_BAR_BYTES 8-aligned) a block of the
 * three-blocks-per-SM kernel may have: three such blocks, and the 1 KB the runtime reserves for
 * each, fit the SM's 228 KB */
#define GCONV_IMPL_HALO_SMEM3 (75 * 1024 - 48)
/* 1: the forward kernel's halo copies go through L1 (cp.async.ca: a block's consecutive units
 * are consecutive row bands of one image, whose halos share all but R rows; H100, ResNeXt
 * 128@56 forward 68.5 -> 65.4 us, backward data 72.9 -> 69.0, the other layers within 1.5 %;
 * bench/NOTES.md), 0: .cg (L2 only). The backward-weight BWH kernel, slower with .ca (56.5 ->
 * 62-68 us at 128@56: its larger tiles leave L1 less room), always uses .cg. */
#ifndef GCONV_IMPL_HALO_CA
#define GCONV_IMPL_HALO_CA 1
#endif
/* most k-steps whose per-lane A offsets live in registers (loaded once per block) rather than
 * in shared memory (one LDS per k-step per item): 18 covers 3x3 at C = 32 */
#ifndef GCONV_IMPL_HALO_KO_MAX
#define GCONV_IMPL_HALO_KO_MAX 18
#endif
/* virtual output pixels per work unit, at most (a knob: smaller units balance the persistent
 * blocks better, larger ones re-read fewer halo rows). 0 (the default): for the one-n-tile
 * plans with a plain epilogue, the rows that best fill 64-pixel m-tile groups up to 128 pixels
 * (gconv_impl_halo_rows_packed: two rows at 56x56, four at 28x28); otherwise 64 where a row has
 * at least 24 virtual pixels, else 128 (gconv_impl_halo_target; H100 sweep of 64 / 96 / 128 /
 * 160 / 256 on the ResNeXt layers in session 10, bench/NOTES.md: then one 58-pixel row per unit
 * at 56x56 and two 30-pixel rows at 28x28 beat 128's two and four rows by 17 % and 6 %, while
 * 14x14 wants 7 rows of 16; the staged store of session 25 turned the first two around);
 * another value pins it. */
#ifndef GCONV_IMPL_HALO_TARGET
#define GCONV_IMPL_HALO_TARGET 0
#endif

/* Test hook, one per translation unit: nonzero keeps a staged residual's D on the items' own
 * global loads where the copy engine could bring it (gconv_impl_halo_dtma_setup), so that the
 * GPU tests cover both paths. */
static int gconv_impl_halo_no_dtma __attribute__((unused)) = 0;

typedef struct gconv_impl_halo_params {
#if defined(GCONV_PLATFORM_CUDA)
    CUtensorMap tmap;        /* tma: the input as [G * C][W][H][N], boxes of 72 channels (a
                                chunk's 64 and the pad of a halo pixel's 144-byte row) x Wp
                                columns x the band's halo rows (the backward-weight BWH
                                kernel's d_out view: d_out, R rows) */
    CUtensorMap dmap;        /* dtma: the one D tensor as [G * K][OW][OH][N], boxes of 72
                                channels x Wp columns x R rows: a unit's D words land in a
                                staging tile's layout (virtual pixel q = r * Wp + c, 144-byte
                                rows; columns past OW and rows past OH as zeros) */
#endif
    const void *in;
    const void *wei;
    void *out;
    gconv_epilogue epi;
    int plain;               /* epilogue is alpha 1, no D tensors, no activation */
    int dsame;               /* every D tensor has the output's strides, 4-byte aligned */
    int pair;                /* C = K = 4: each kernel group is a pair of the problem's groups */
    gconv_dtype dt;          /* fp16 or bf16 */
    int G, C, lc, K, GB;     /* kernel groups, their channels, log2 C, K, groups per chunk */
    int N, H, W, OH, OW;     /* images, input and output sizes (1D: H = OH = 1) */
    int X, dh, dw, ph, pw;   /* filter width, dilations, low pads (rows, columns) */
    int taps, TC, KS;        /* filter taps, taps * C, k-steps of 16 */
    int R, Wp, NT, MT, MTP;  /* band rows, tile width, n-tiles, m-tiles per item (4 / NT, or
                                2 for the wide four-n-tile plans), items per group and image */
    int IM, NIMG, himg;      /* images a unit (2: gconv_impl_halo_plan_wide), the batch's
                                images (N is then the units' image slots), bytes of one
                                image's halo in a buffer */
    int P;                   /* halo pixels (with slack for the last m-tile's taps) */
    int Q;                   /* virtual output pixels covered by the items */
    int wrow;                /* weight row length in shared memory (elements) */
    int bands;               /* row bands per image */
    int units, blocks;       /* work units (chunk, image, band); persistent blocks launched */
    int uq, ur;              /* units / blocks, units % blocks (block b takes uq units, one
                                more if b < ur: an even split without a 64-bit division) */
    unsigned mx, mwp;        /* gconv_impl_halo_magic of X and of Wp (the tables' divisions) */
    int wtr;                 /* weights as the problem's own GKYXC, read transposed (below) */
    int wkp, wgs;            /* wtr: bytes per weight row block k (taps * K * 2 + pad), per group */
    int wflip;               /* pair mode on backward data's view: the weight fill builds the
                                view's block-diagonal weights from the problem's own GKYXC ones
                                (flipped taps, C and K swapped), element by element */
    int halo_bytes, w_bytes; /* one halo buffer; the weights */
    int ostage, stage_off;   /* stores staged in shared memory at stage_off
                                (GCONV_IMPL_HALO_SROW words a virtual pixel) and written in
                                16-byte pieces (gconv_impl_halo_stage_out) */
    int in_n, in_h, in_w;    /* input strides of n, h, w (elements) */
    int out_n, out_h, out_w;
    int tma, tbytes, tbar_off; /* one-n-tile plans copy each next halo by the copy engine
                                  (one tiled copy of tbytes by one thread, completing an
                                  mbarrier at tbar_off: sm_90a device passes;
                                  gconv_impl_halo_tma_setup in gconv/igemm_ws.h; BWH: every
                                  unit, its S mbarriers from tbar_off, set by
                                  gconv_impl_bwh_tma_setup in gconv/bwd_weight.h) */
    int dtma, dbytes;        /* the staged one-D-tensor epilogue with two staging tiles: each
                                unit's D words come a unit ahead by one copy-engine copy of
                                dbytes into the unit's tile, completing its mbarrier at
                                tbar_off + 16 or + 24 (gconv_impl_halo_dtma_setup in
                                gconv/igemm_ws.h) */
} gconv_impl_halo_params;

/* Kernel parameter qualifier: the halo kernels' parameters stay in parameter space (CUDA), so
 * that the copy engine can read the tensor map from there. */
#if defined(GCONV_PLATFORM_CUDA)
#define GCONV_IMPL_GRID_CONST __grid_constant__
#else
#define GCONV_IMPL_GRID_CONST
#endif

/* The halo kernel needs mma.sync; it is planned only where the platform has it (CUDA). */
#ifndef GCONV_IMPL_HALO_ENABLE
#if defined(GCONV_PLATFORM_CUDA)
#define GCONV_IMPL_HALO_ENABLE 1
#else
#define GCONV_IMPL_HALO_ENABLE 0
#endif
#endif

/* Division by a divisor d known per launch, without the ~20-instruction integer division:
 * m = ceil(2^32 / d) for d >= 2 (0 marks d = 1), then n / d = umulhi(n, m) exactly for every
 * n < 2^32 / d (the error m * d - 2^32 < d times n stays below 2^32); the tables divide pixel
 * and tap indices below 2^16 by d below 2^16. */
static inline unsigned gconv_impl_halo_magic(int d)
{
    return d <= 1 ? 0u : (unsigned)((((uint64_t)1 << 32) + (uint64_t)d - 1) / (uint64_t)d);
}

static __device__ __forceinline__ int gconv_impl_halo_div(int n, unsigned m)
{
    return m ? (int)__umulhi((unsigned)n, m) : n;
}

#if GCONV_IMPL_IGEMM_MATH == GCONV_IMPL_MATH_MMA
static __device__ __forceinline__ void gconv_impl_halo_mma(float *d, const unsigned *a,
                                                           const unsigned *b, gconv_dtype dt)
{
    if (dt == GCONV_F16)
        gconv_impl_igemm_mma_f16(d, a, b);
    else
        gconv_impl_igemm_mma_bf16(d, a, b);
}

/* Two adjacent output channels as one 32-bit word of T. */
static __device__ __forceinline__ unsigned gconv_impl_halo_pack(float v0, float v1, gconv_dtype dt)
{
    if (dt == GCONV_F16)
        return (unsigned)gconv_impl_from_float_f16(v0).bits |
               ((unsigned)gconv_impl_from_float_f16(v1).bits << 16);
    return (unsigned)gconv_impl_from_float_bf16(v0).bits |
           ((unsigned)gconv_impl_from_float_bf16(v1).bits << 16);
}
#endif

#if GCONV_IMPL_IGEMM_MATH == GCONV_IMPL_MATH_MMA
/* The two elements of T in a 32-bit word, as floats. */
static __device__ __forceinline__ void gconv_impl_halo_unpack(unsigned x, gconv_dtype dt, float *f0,
                                                              float *f1)
{
    if (dt == GCONV_F16) {
        gconv_f16 h0, h1;
        h0.bits = (unsigned short)(x & 0xffffu), h1.bits = (unsigned short)(x >> 16);
        *f0 = gconv_impl_to_float_f16(h0), *f1 = gconv_impl_to_float_f16(h1);
    } else {
        *f0 = __uint_as_float(x << 16), *f1 = __uint_as_float(x & 0xffff0000u);
    }
}

/* The built-in epilogue (gconv_impl_epilogue_apply) on output channels k, k + 1 of group g at
 * (n, h, w), packed: one D offset per pair, and one 32-bit load for both elements where the D
 * tensor's channels are contiguous and the pair is 4-byte aligned (a residual in the output's
 * layout), two 16-bit loads otherwise. */
static __device__ __forceinline__ unsigned gconv_impl_halo_epi_pair(const gconv_epilogue *e,
                                                                    gconv_dtype dt, float v0,
                                                                    float v1, int g, int n, int k,
                                                                    int h, int w)
{
    float y0 = e->alpha * v0, y1 = e->alpha * v1;
    int i;
    for (i = 0; i < e->num_d; i++) {
        const unsigned short *d = (const unsigned short *)e->d[i].data;
        const int64_t o = gconv_act_offset(&e->d[i].strides, g, n, k, 0, h, w);
        const int64_t sc = e->d[i].strides.c;
        float d0, d1;
        gconv_impl_halo_unpack(sc == 1 && ((uintptr_t)(d + o) & 3) == 0
                                   ? *(const unsigned *)(d + o)
                                   : (unsigned)d[o] | ((unsigned)d[o + sc] << 16),
                               dt, &d0, &d1);
        y0 += e->beta[i] * d0, y1 += e->beta[i] * d1;
    }
    return gconv_impl_halo_pack(gconv_act_apply(e->act, y0), gconv_act_apply(e->act, y1), dt);
}
#endif

#if GCONV_IMPL_IGEMM_MATH == GCONV_IMPL_MATH_MMA
/* One k-step of an item: B of NT n-tiles from the weight rows at bs, A of MT m-tiles
 * from the halo at a0 (16 pixels further per m-tile), MT x NT mma into acc. tail: the k-step's
 * second 8 columns lie past taps * C (their A registers are zeroed). TR (a literal): the
 * weights are stored k-major (wtr) and B comes through ldmatrix.trans, n-tile pairs 32 bytes
 * apart in a row; else n-major, pairs 16 rows of wrow2 bytes apart. */
static __device__ __forceinline__ void gconv_impl_halo_kstep(float (*acc)[4][4], unsigned bs,
                                                             unsigned a0, int wrow2, int tail,
                                                             gconv_dtype dt, const int NT,
                                                             const int MT, const int TR)
{
    unsigned b[4][2];
    int mt, nt;
    if (NT == 1) {
        unsigned t2[2];
        if (TR)
            gconv_impl_igemm_ldsm_x2_t(bs, t2);
        else
            gconv_impl_igemm_ldsm_x2(bs, t2);
        b[0][0] = t2[0], b[0][1] = t2[1];
    } else {
#pragma unroll
        for (nt = 0; nt < NT; nt += 2) {
            unsigned t4[4];
            if (TR)
                gconv_impl_igemm_ldsm_x4_t(bs + nt * 16, t4);
            else
                gconv_impl_igemm_ldsm_x4(bs + nt * 8 * wrow2, t4);
            b[nt][0] = t4[0], b[nt][1] = t4[1], b[nt + 1][0] = t4[2], b[nt + 1][1] = t4[3];
        }
    }
#pragma unroll
    for (mt = 0; mt < MT; mt++) {
        unsigned a[4];
        gconv_impl_igemm_ldsm_x4(a0 + mt * 16 * GCONV_IMPL_HALO_PS, a);
        if (tail)
            a[2] = a[3] = 0u;
#pragma unroll
        for (nt = 0; nt < NT; nt++)
            gconv_impl_halo_mma(acc[mt][nt], a, b[nt], dt);
    }
}
#endif

#if GCONV_IMPL_IGEMM_MATH == GCONV_IMPL_MATH_MMA
/* A staged word of a one-D-tensor epilogue: alpha * (y0, y1) + beta * the D word dw, the
 * activation, packed (fp32 until the one rounding, as the direct store does). */
static __device__ __forceinline__ unsigned gconv_impl_halo_res_word(const gconv_impl_halo_params *P,
                                                                    gconv_dtype dt, float y0,
                                                                    float y1, unsigned dw)
{
    const int ak = (int)P->epi.act.kind;
    float d0, d1;
    gconv_impl_halo_unpack(dw, dt, &d0, &d1);
    y0 = gconv_impl_act_sel(ak, P->epi.act.lo, P->epi.act.hi,
                            fmaf(P->epi.alpha, y0, P->epi.beta[0] * d0));
    y1 = gconv_impl_act_sel(ak, P->epi.act.lo, P->epi.act.hi,
                            fmaf(P->epi.alpha, y1, P->epi.beta[0] * d1));
    return gconv_impl_halo_pack(y0, y1, dt);
}

/* The stores of an item from its accumulators (see gconv_impl_halo_items): FAST 0 the plain
 * store; FAST 1 the built-in epilogue with every D tensor in the output's layout, whose word
 * is the output word's index from D's base (the plan checked strides and 4-byte alignment;
 * with one D, dv holds the item's words, loaded before the math). */
static __device__ __forceinline__ void gconv_impl_halo_store(const gconv_impl_halo_params *P,
                                                             gconv_dtype dt, float (*acc)[4][4],
                                                             const unsigned *dv, unsigned *og,
                                                             const int *pixrel, int m0, int r8,
                                                             int q2, int qlim, const int NT,
                                                             const int MT, const int FAST)
{
    const int K = P->K;
    const int64_t wo = og - (unsigned *)P->out;
    /* the activation's kind and bounds once (H100, ResNeXt with ReLU6: +22-30 % over none
     * with the kind tested per value, bench/NOTES.md) */
    const int ak = (int)P->epi.act.kind;
    const float lo = P->epi.act.lo, hi = P->epi.act.hi;
    int mt, nt, e, i;
#pragma unroll
    for (mt = 0; mt < MT; mt++)
#pragma unroll
        for (e = 0; e < 4; e += 2) {
            const int q = m0 + mt * 16 + r8 + (e ? 8 : 0);
            const int po = pixrel[q];
            unsigned *orow;
            if (po < 0 || q >= qlim)
                continue;
            /* the pixel's words: one 64-bit address, the n-tiles at immediate offsets */
            orow = og + (unsigned)po;
#pragma unroll
            for (nt = 0; nt < NT; nt++) {
                float y0 = acc[mt][nt][e], y1 = acc[mt][nt][e + 1];
                if (nt * 8 + q2 >= K)
                    continue;
                if (FAST) {
                    y0 *= P->epi.alpha, y1 *= P->epi.alpha;
                    for (i = 0; i < P->epi.num_d; i++) {
                        float d0, d1;
                        gconv_impl_halo_unpack(
                            P->epi.num_d == 1
                                ? dv[(mt * 2 + e / 2) * NT + nt]
                                : ((const unsigned *)P->epi.d[i].data)[wo + (unsigned)po + nt * 4],
                            dt, &d0, &d1);
                        y0 += P->epi.beta[i] * d0, y1 += P->epi.beta[i] * d1;
                    }
                    y0 = gconv_impl_act_sel(ak, lo, hi, y0);
                    y1 = gconv_impl_act_sel(ak, lo, hi, y1);
                }
                orow[nt * 4] = gconv_impl_halo_pack(y0, y1, dt);
            }
        }
}
#endif

/* The items of one unit for NT n-tiles (a literal: 1, 2 or 4) and MT m-tiles per item (a
 * literal: 4 / NT, or 2 with four n-tiles, the wide plans), so that every loop unrolls and the
 * accumulators stay in registers. XI (a literal): the unit may hold ni = 2 images (wide plans;
 * items ordered image, group, m-tile group; image 1's halo himg bytes after image 0's, its
 * outputs an image stride on), else ni is 1. KSL: 0, or the k-step count as a literal (the
 * common 3x3 shapes): the k loop then unrolls completely and takes the lanes' A offsets from ko
 * (registers, loaded once per block) instead of shared memory. halo: this unit's halo buffer;
 * ob2: output offset of (image n, band row 0) in 32-bit words; qlim: virtual pixels of the
 * band's rows (rows * Wp). TR: the weights are wtr's (B's per-lane row offsets of every k-step
 * from boffs, one LDS per k-step). F1: the two-block kernel's one-n-tile loops (plain stores
 * staged, the items' advance without a loop); SD: the three-block kernel's and the dtma loops'
 * (D tensors: their epilogue applied, then the words staged; dbar nonzero: D's words from the
 * staging tile, else from the items' own loads). */
static __device__ __forceinline__ void gconv_impl_halo_items(
    const gconv_impl_halo_params *P, gconv_dtype dt, gconv_impl_epi_fn epi, int plain, int fastd,
    const unsigned char *halo, const unsigned char *wsm, const int *offs, const int *ko,
    const int *boffs, const int *pixrel, unsigned *stage, int n, int ni, int oh0, int qlim,
    int ob2, int g0, int gv, int gl0, int mi0, const int NT, const int MT, const int XI,
    const int KSL, const int TR, const int F1, const int SD, unsigned dbar, unsigned dph)
{
#if GCONV_IMPL_IGEMM_MATH == GCONV_IMPL_MATH_MMA
    const int lane = (int)threadIdx.x & 31, warp = (int)threadIdx.x >> 5;
    const int r8 = lane >> 2, q2 = (lane & 3) * 2;
    const int C = P->C, K = P->K, wrow2 = P->wrow * 2, mtp = P->MTP;
    const int items = ni * gv * mtp, ksf = P->TC & 15 ? P->TC >> 4 : -1, ksteps = P->KS;
    const unsigned sbase = gconv_impl_igemm_smem_addr(halo), wbase_s = gconv_impl_igemm_smem_addr(wsm);
    /* this lane's output words: channel pair q2 / 2 of every n-tile's 4 */
    unsigned *out = (unsigned *)P->out + ob2 + (q2 >> 1);
    int it, gl = gl0, mi = mi0, img = 0;
    if (XI) /* gl0 counts groups over the unit's images */
        while (gl >= gv)
            gl -= gv, img++;
    for (it = warp; it < items; it += GCONV_IMPL_HALO_THREADS / 32) {
        /* item it = (group gl, m-tiles from mi * MT): advanced without dividing */
        const int m0 = mi * MT * 16;
        /* ldmatrix rows of this lane: A from m-tile pixels m0 + 16 * mt (+ the lane's row and
         * tap offset from offs / ko), channels of group gl; B from weight rows
         * gl * NT * 8 + 8 * (nt + (lane >> 4)) + (lane & 7), k half (lane >> 3) & 1 (x2: lanes
         * 0-15 only; rows k >= K are zero in shared memory); wtr (TR): from group gl's block
         * plus boffs */
        const unsigned asm0 = sbase + (unsigned)((XI ? img * P->himg : 0) +
                                                 m0 * GCONV_IMPL_HALO_PS + gl * C * 2);
        const unsigned bsm =
            TR ? wbase_s + (unsigned)(gl * P->wgs)
               : wbase_s + (unsigned)((gl * NT * 8 + ((lane >> 4) << 3) + (lane & 7)) * wrow2 +
                                      ((lane >> 3) & 1) * 16);
        const int g = g0 + gl, nimg = n + (XI ? img : 0);
        unsigned *og = out + ((g * K) >> 1) + (XI ? img * (P->out_n >> 1) : 0);
        float acc[4][4][4];
        unsigned dv[16]; /* one D tensor in the output's layout: its words, loaded before the
                           math so that their latency overlaps it */
        int ks, mt, nt, e;
        if (fastd && P->epi.num_d == 1 && !dbar) {
            const unsigned *dw = (const unsigned *)P->epi.d[0].data + (og - (unsigned *)P->out);
#pragma unroll
            for (mt = 0; mt < MT; mt++)
#pragma unroll
                for (e = 0; e < 2; e++) {
                    const int q = m0 + mt * 16 + r8 + e * 8;
                    const int po = pixrel[q];
#pragma unroll
                    for (nt = 0; nt < NT; nt++)
                        dv[(mt * 2 + e) * NT + nt] =
                            po >= 0 && q < qlim && nt * 8 + q2 < K ? dw[(unsigned)po + nt * 4] : 0u;
                }
        }
#pragma unroll
        for (mt = 0; mt < 4; mt++)
#pragma unroll
            for (nt = 0; nt < 4; nt++)
#pragma unroll
                for (e = 0; e < 4; e++)
                    acc[mt][nt][e] = 0.0f;
        /* full k-steps, then the tail (C >= 8 makes taps * C a multiple of 8: a tail is the
         * first 8 columns of a k-step, whose second half, a2 / a3, is zeroed) */
#pragma unroll
        for (ks = 0; ks < KSL; ks++) {
            /* offsets from registers up to GCONV_IMPL_HALO_KO_MAX k-steps, else one LDS each */
            const int o = KSL <= GCONV_IMPL_HALO_KO_MAX ? ko[ks] : offs[ks * 32 + lane];
            gconv_impl_halo_kstep(acc, bsm + (TR ? (unsigned)boffs[ks * 32 + lane] : ks * 32u),
                                  asm0 + o, wrow2, ks == KSL - 1 && ksf >= 0, dt, NT, MT, TR);
        }
        if (!KSL)
            for (ks = 0; ks < ksteps; ks++)
                gconv_impl_halo_kstep(acc,
                                      bsm + (TR ? (unsigned)boffs[ks * 32 + lane] : ks * 32u),
                                      asm0 + offs[ks * 32 + lane], wrow2, ks == ksf, dt, NT, MT,
                                      TR);
        /* epilogue: accumulators e, e + 1 of tile (mt, nt) are virtual pixel
         * q = m0 + 16 * mt + r8 (+8 for e = 2), output channels k = 8 * nt + q2, k + 1 of
         * group g: the 32-bit word (g * K + k) / 2 past the pixel's (pixrel holds its offset
         * from the band's first row in words; K, k even) */
        if (!XI && (F1 || SD || NT > 1) && P->ostage && epi == gconv_impl_epilogue_apply) {
            /* pack into the unit's staging tile: word (gl K + 8 nt + q2) / 2 of pixel q. Only
             * for the built-in epilogue (ostage: a plain struct, or D tensors in the output's
             * layout): a user op gets every value. The test is on epi, a constant here, not on
             * plain: testing the run-time plain cost 3 us at ResNeXt 128@56 (H100). F1 (the
             * two-block kernel's one n-tile) stages the plain words; SD (the three-block
             * kernel's one n-tile) and several n-tiles the one D tensor's epilogue (the plan
             * staged only those) */
            unsigned *st = stage + gl * (K >> 1) + (q2 >> 1);
#if GCONV_IMPL_HAS_WGMMA
            /* dbar: the unit's D words are in the staging tile (the copy engine's, in this
             * word's place): each lane reads its words and writes the results over them */
            if (dbar)
                gconv_impl_mbar_try_wait(dbar, dph);
#endif
#pragma unroll
            for (mt = 0; mt < MT; mt++)
#pragma unroll
                for (e = 0; e < 4; e += 2)
#pragma unroll
                    for (nt = 0; nt < NT; nt++)
                        if (nt * 8 + q2 < K) {
                            unsigned *w = st + (m0 + mt * 16 + r8 + (e ? 8 : 0)) *
                                                   GCONV_IMPL_HALO_SROW +
                                          nt * 4;
                            *w = SD || NT > 1 || dbar
                                     ? gconv_impl_halo_res_word(
                                           P, dt, acc[mt][nt][e], acc[mt][nt][e + 1],
                                           dbar ? *w : dv[(mt * 2 + e / 2) * NT + nt])
                                     : gconv_impl_halo_pack(acc[mt][nt][e], acc[mt][nt][e + 1],
                                                            dt);
                        }
        } else {
            if (plain)
                gconv_impl_halo_store(P, dt, acc, dv, og, pixrel, m0, r8, q2, qlim, NT, MT, 0);
            else if (fastd)
                gconv_impl_halo_store(P, dt, acc, dv, og, pixrel, m0, r8, q2, qlim, NT, MT, 1);
            else {
                /* the epilogue function, rolled: its code exists once, not once per unrolled
                 * accumulator (that filled the instruction cache and slowed the plain path
                 * too); the accumulators go through a local array on this path only */
                float t[4 * 4 * 4];
                int j;
#pragma unroll
                for (mt = 0; mt < MT; mt++)
#pragma unroll
                    for (nt = 0; nt < NT; nt++)
#pragma unroll
                        for (e = 0; e < 4; e++)
                            t[(mt * NT + nt) * 4 + e] = acc[mt][nt][e];
#pragma unroll 1
                for (j = 0; j < MT * 2 * NT; j++) {
                    /* j = (mt, row half, nt) */
                    const int jm = j / (2 * NT), jh = (j / NT) & 1, jn = j % NT;
                    const int q = m0 + jm * 16 + r8 + jh * 8, k = jn * 8 + q2;
                    const int po = pixrel[q];
                    if (po >= 0 && q < qlim && k < K) {
                        /* pair mode: kernel channel k of pair g is channel k % 4 of the
                         * problem's group 2 g + k / 4 (k, k + 1 share the group) */
                        const int gg = P->pair ? 2 * g + (k >> 2) : g;
                        const int kk = P->pair ? k & 3 : k;
                        const int r = q / P->Wp, oh = oh0 + r, ow = q - r * P->Wp;
                        const float *v = t + (jm * NT + jn) * 4 + jh * 2;
                        og[(unsigned)po + jn * 4] =
                            epi == gconv_impl_epilogue_apply
                                ? gconv_impl_halo_epi_pair(&P->epi, dt, v[0], v[1], gg, nimg,
                                                           kk, oh, ow)
                                : gconv_impl_halo_pack(
                                      epi(&P->epi, dt, v[0], gg, nimg, kk, 0, oh, ow),
                                      epi(&P->epi, dt, v[1], gg, nimg, kk + 1, 0, oh, ow), dt);
                    }
                }
            }
        }
        mi += GCONV_IMPL_HALO_THREADS / 32;
        if (F1 && mtp == 1) /* one m-tile group a unit: the next item is 8 groups on */
            gl += mi, mi = 0;
        else
            while (mi >= mtp)
                mi -= mtp, gl++;
        if (XI)
            while (gl >= gv)
                gl -= gv, img++;
    }
#else
    (void)P, (void)dt, (void)epi, (void)plain, (void)fastd, (void)halo, (void)wsm, (void)offs, (void)ko;
    (void)pixrel, (void)n, (void)ni, (void)MT, (void)XI, (void)oh0, (void)qlim, (void)ob2;
    (void)g0, (void)gv, (void)gl0, (void)mi0, (void)NT, (void)boffs, (void)TR, (void)F1, (void)SD;
    (void)stage;
    (void)KSL, (void)dbar, (void)dph;
#endif
}

#if GCONV_IMPL_IGEMM_MATH == GCONV_IMPL_MATH_MMA
/* Unit u of the grid's order (group chunk, then image, then row band): its chunk, image and
 * band. */
static __device__ __forceinline__ void gconv_impl_halo_unit(const gconv_impl_halo_params *P, int u,
                                                            int *chunk, int *n, int *band)
{
    const int per = P->N * P->bands, c = u / per, r = u - c * per;
    *chunk = c;
    *n = r / P->bands;
    *band = r - *n * P->bands;
}

/* The unit after (chunk, n, band) in the grid's order (band fastest, then image, then chunk). */
static __device__ __forceinline__ void gconv_impl_halo_next(const gconv_impl_halo_params *P,
                                                            int *chunk, int *n, int *band)
{
    if (++*band == P->bands) {
        *band = 0;
        if (++*n == P->N)
            *n = 0, ++*chunk;
    }
}

/* The groups of chunk `chunk`: the first one, and how many (the last chunk may be short). */
static __device__ __forceinline__ int gconv_impl_halo_gv(const gconv_impl_halo_params *P,
                                                         int chunk, int *g0)
{
    *g0 = chunk * P->GB;
    return P->G - *g0 < P->GB ? P->G - *g0 : P->GB;
}

/* Issue the cp.async copies of a unit's halo: pixel p = (hr, hc) of the band's window, 8
 * chunks of 16 bytes (8 channels) each; chunks past the last group and pixels outside the
 * image are zero-filled. pixin[p] = {offset of (hr, hc) from the window's row -ph... i.e.
 * hr * in_h + (hc - pw) * in_w, or -1 for a column outside the image; hr}: the same for every
 * unit, so a copy costs one table load, two tests and an add. Offsets fit in 32 bits (the plan
 * asks for fewer than 2^31 input elements). CA: through L1 (cp.async.ca), else .cg. */
static __device__ __forceinline__ void gconv_impl_halo_fill(const gconv_impl_halo_params *P,
                                                            unsigned char *halo, const int2 *pixin,
                                                            int n, int oh0, int g0, int gv,
                                                            const int CA, const int FB)
{
    const int tid = (int)threadIdx.x, q = tid & 7;
    const unsigned short *in = (const unsigned short *)P->in;
    const int ih0 = oh0 - P->ph, okq = q < gv * P->C / 8;
    /* element offset of (n, ih0, column -pw... + 0, channel g0 * C + 8 q) less the column part,
     * which pixin carries (negative for the top pad rows: only valid copies use it) */
    const int uoff = n * P->in_n + ih0 * P->in_h + g0 * P->C + q * 8;
    const unsigned hs = gconv_impl_igemm_smem_addr(halo) + (unsigned)q * 16u;
    const int PS = GCONV_IMPL_HALO_THREADS / 8; /* pixels a pass of the block */
    int p, j;
    if (FB == 1) {
        for (p = tid >> 3; p < P->P; p += PS) {
            const int2 t = pixin[p];
            const int ok = okq && t.x >= 0 && (unsigned)(ih0 + t.y) < (unsigned)P->H;
            gconv_impl_igemm_cp_async16_l1(hs + (unsigned)(p * GCONV_IMPL_HALO_PS),
                                           in + (ok ? (unsigned)(uoff + t.x) : 0u), ok, CA);
        }
        return;
    }
    /* batches of FB (a literal, at most 8) pixels a thread: the FB table loads first, then the
     * FB copies, so that the loads' latency is paid once a batch, not once a copy (the copies'
     * asm statements keep them in program order) */
    for (p = tid >> 3; p < P->P; p += FB * PS) {
        int2 t[8];
#pragma unroll
        for (j = 0; j < FB; j++)
            t[j] = p + j * PS < P->P ? pixin[p + j * PS] : make_int2(-1, 0);
#pragma unroll
        for (j = 0; j < FB; j++) {
            const int ok = okq && t[j].x >= 0 && (unsigned)(ih0 + t[j].y) < (unsigned)P->H;
            if (p + j * PS < P->P)
                gconv_impl_igemm_cp_async16_l1(hs + (unsigned)((p + j * PS) * GCONV_IMPL_HALO_PS),
                                               in + (ok ? (unsigned)(uoff + t[j].x) : 0u), ok, CA);
        }
    }
}

/* The halo copies of a unit whose image slot is `slot`: images slot * IM .. (P->IM: two in a
 * wide plan, the second, himg bytes on in the buffer, only where the batch has it). XI (a
 * literal): the caller may have a wide plan. */
static __device__ __forceinline__ void gconv_impl_halo_fill_unit(const gconv_impl_halo_params *P,
                                                                 unsigned char *halo,
                                                                 const int2 *pixin, int slot,
                                                                 int oh0, int g0, int gv,
                                                                 const int CA, const int FB,
                                                                 const int XI)
{
    const int n0 = XI ? slot * P->IM : slot;
    gconv_impl_halo_fill(P, halo, pixin, n0, oh0, g0, gv, CA, FB);
    if (XI && P->IM == 2 && n0 + 1 < P->NIMG)
        gconv_impl_halo_fill(P, halo + P->himg, pixin, n0 + 1, oh0, g0, gv, CA, FB);
}

/* Issue the cp.async copies of a chunk's weights (groups g0 .. g0 + gv - 1): row
 * gl * NT * 8 + k holds (g0 + gl, k)'s taps * C elements (GKYXC: contiguous in global memory),
 * zero-padded to wrow; rows k >= K and groups past gv are zero. C >= 8 makes a row a whole
 * number of 16-byte copies. Pair mode builds the block-diagonal rows from 8-byte runs (one
 * tap of one (group, k) of the problem: 4 channels). wtr: each group's weights as the problem
 * stores them (see gconv_impl_halo_plan_wtr), one contiguous run of 16-byte copies. */
static __device__ __forceinline__ void gconv_impl_halo_wfill(const gconv_impl_halo_params *P,
                                                             unsigned char *wsm, int g0, int gv)
{
    const int tid = (int)threadIdx.x, lane = tid & 31, NT = P->NT;
    const int rows_w = P->GB * NT * 8, lnt = NT == 1 ? 3 : NT == 2 ? 4 : 5; /* log2(NT * 8) */
    const unsigned ws = gconv_impl_igemm_smem_addr(wsm);
    int r;
    if (P->wtr) {
        /* row r0 = gl * C + k (C rows per group, the reduction channels) at r0 * wkp, its
         * taps * K elements (K % 8 == 0: cpr whole copies) contiguous in global memory, and
         * the groups' rows one after another there too: copy i is global chunk i */
        const int cpr = (P->taps * P->K) >> 3, total = gv * P->C * cpr;
        const unsigned char *w = (const unsigned char *)P->wei + (int64_t)g0 * P->C * cpr * 16;
        int i = tid, r0 = tid / cpr, c0 = tid - r0 * cpr;
        const int dr = GCONV_IMPL_HALO_THREADS / cpr, dc = GCONV_IMPL_HALO_THREADS - dr * cpr;
        for (; i < total; i += GCONV_IMPL_HALO_THREADS) {
            gconv_impl_igemm_cp_async16(ws + (unsigned)(r0 * P->wkp + c0 * 16), w + (int64_t)i * 16,
                                        1);
            r0 += dr, c0 += dc;
            if (c0 >= cpr)
                c0 -= cpr, r0++;
        }
        return;
    }
    if (P->pair && P->wflip) {
        /* as below, for backward data's view of the problem's weights wei[g][k][tap][c]: the
         * view's row r = 8 gl + 4 j + c, 8-byte column u = 2 tap' + i holds, for i == j,
         * wei[2 (g0 + gl) + j][k][taps - 1 - tap'][c] for k = 0..3 (taps * 4 elements apart).
         * Plain loads and stores (the block's barrier before the first unit, or after a chunk
         * change, publishes them); a warp takes RW rows at a time, all their loads before
         * their stores (one row at a time left a block's first unit waiting on a round trip
         * per row) */
        enum { RW = 4 };
        const int cu = P->wrow >> 2, taps = P->taps;
        const unsigned short *w = (const unsigned short *)P->wei;
        const int nw = GCONV_IMPL_HALO_THREADS / 32;
#pragma unroll 1
        for (r = tid >> 5; r < rows_w; r += RW * nw) {
            int u;
#pragma unroll 1
            for (u = lane; u < cu; u += 32) {
                const int tap = u >> 1;
                uint2 v[RW];
                int q;
#pragma unroll
                for (q = 0; q < RW; q++) {
                    const int rr = r + q * nw, gl = rr >> 3, j = (rr >> 2) & 1, c = rr & 3;
                    v[q] = make_uint2(0u, 0u);
                    if (rr < rows_w && gl < gv && tap < taps && (u & 1) == j) {
                        const unsigned short *e =
                            w + ((int64_t)(2 * (g0 + gl) + j) * 4 * taps + (taps - 1 - tap)) * 4 +
                            c;
                        v[q].x = e[0] | (unsigned)e[taps * 4] << 16;
                        v[q].y = e[taps * 8] | (unsigned)e[taps * 12] << 16;
                    }
                }
#pragma unroll
                for (q = 0; q < RW; q++)
                    if (r + q * nw < rows_w)
                        *(uint2 *)(wsm + (r + q * nw) * P->wrow * 2 + u * 8) = v[q];
            }
        }
    } else if (P->pair) {
        /* kernel row r = 8 gl + 4 j + k, 8-byte column u = 2 tap + i: problem group
         * 2 (g0 + gl) + j, channel k, tap, nonzero only for i == j */
        const int cu = P->wrow >> 2, taps = P->taps;
        const unsigned char *w = (const unsigned char *)P->wei;
        for (r = tid >> 5; r < rows_w; r += GCONV_IMPL_HALO_THREADS / 32) {
            const int gl = r >> 3, j = (r >> 2) & 1, k = r & 3;
            const int64_t grow = ((int64_t)(2 * (g0 + gl) + j) * 4 + k) * taps;
            int u;
            for (u = lane; u < cu; u += 32) {
                const int tap = u >> 1, ok = gl < gv && tap < taps && (u & 1) == j;
                gconv_impl_igemm_cp_async8(ws + (unsigned)(r * P->wrow * 2 + u * 8),
                                           ok ? w + (grow + tap) * 8 : w, ok);
            }
        }
    } else {
        /* 16-byte chunk i of the block's rows: row i / wc, chunk i % wc (threads walk them
         * flat, so short rows keep every lane busy) */
        const int cpr = P->TC >> 3, wc = P->wrow >> 3, K = P->K, total = rows_w * wc;
        const unsigned char *w = (const unsigned char *)P->wei + (int64_t)g0 * K * P->TC * 2;
        int i = tid, r0 = tid / wc, c0 = tid - r0 * wc;
        const int dr = GCONV_IMPL_HALO_THREADS / wc, dc = GCONV_IMPL_HALO_THREADS - dr * wc;
        (void)lane;
        for (; i < total; i += GCONV_IMPL_HALO_THREADS) {
            const int gl = r0 >> lnt, k = r0 & ((1 << lnt) - 1);
            const int ok = gl < gv && k < K && c0 < cpr;
            gconv_impl_igemm_cp_async16(ws + (unsigned)(i * 16), /* rows are wc chunks long */
                                        ok ? w + ((int64_t)(gl * K + k) * cpr + c0) * 16 : w, ok);
            r0 += dr, c0 += dc;
            if (c0 >= wc)
                c0 -= wc, r0++;
        }
    }
}
#endif

#if GCONV_IMPL_IGEMM_MATH == GCONV_IMPL_MATH_MMA
/* Write a unit's staged plain outputs (P->ostage): virtual pixels q < qlim that are real
 * (pixrel[q] >= 0), GB * K channels each in 16-byte pieces from the staging tile (rows of
 * GCONV_IMPL_HALO_SROW words: a quarter warp's 8 pieces of one row, 128 bytes, hit every bank
 * once). The plan checked that every piece's global word offset is a multiple of 4. */
static __device__ __forceinline__ void gconv_impl_halo_stage_out(const gconv_impl_halo_params *P,
                                                                const unsigned *stage,
                                                                const int *pixrel, int qlim,
                                                                int ob2, int g0)
{
    const int cw = (P->GB * P->K) >> 3; /* 16-byte pieces a pixel */
    unsigned *og = (unsigned *)P->out + ob2 + ((g0 * P->K) >> 1);
    int i;
    for (i = (int)threadIdx.x; i < qlim * cw; i += GCONV_IMPL_HALO_THREADS) {
        const int q = cw == 8 ? i >> 3 : i / cw, c = i - q * cw;
        const int po = pixrel[q];
        if (po >= 0)
            *(uint4 *)(og + po + 4 * c) =
                *(const uint4 *)(stage + q * GCONV_IMPL_HALO_SROW + 4 * c);
    }
}

#if GCONV_IMPL_HAS_WGMMA
/* The copy engine's halo copy (tma plans): arm the mbarrier at bar for `bytes` and arrive, then
 * one tiled copy of the map's box at (channel c, column w, row h, image n) into dst. */
static __device__ __forceinline__ void gconv_impl_halo_tma(unsigned dst, const void *map,
                                                           unsigned bar, unsigned bytes, int c,
                                                           int w, int h, int n)
{
    gconv_impl_ws_bar_expect(bar, bytes);
    asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3, %4, %5}], [%6];\n" ::"r"(dst),
                 "l"((unsigned long long)map), "r"(c), "r"(w), "r"(h), "r"(n), "r"(bar)
                 : "memory");
}
#endif

/* The unit loop of a block for NT n-tiles, MT m-tiles an item, XI and KSL (see
 * gconv_impl_halo_items; literals): units [u, uend), the first one's weights and halo already
 * issued into buffer 0; TR: wtr; DT (a literal): the plan's dtma (a residual's D by the copy
 * engine; its own instantiation, so that the other loops keep their code). */
static __device__ __forceinline__ void gconv_impl_halo_loop(const gconv_impl_halo_params *P,
                                                            gconv_dtype dt, gconv_impl_epi_fn epi,
                                                            int plain, int fastd,
                                                            unsigned char *smem, int u,
                                                            int uend, const int NT, const int MT,
                                                            const int XI, const int KSL,
                                                            const int TR, const int FB,
                                                            const int DT)
{
    const int hb = P->halo_bytes;
    const unsigned char *wsm = smem + 2 * hb;
    const int *offs = (const int *)(wsm + P->w_bytes);
    const int *pixrel = offs + P->KS * 32;
    const int2 *pixin = (const int2 *)(pixrel + P->Q);
    const int *boffs = (const int *)(pixin + P->P);
    unsigned *stage = (unsigned *)(smem + P->stage_off);
    int ko[GCONV_IMPL_HALO_KO_MAX];
    /* this warp's first item (group gl0, m-tile group mi0): the same in every unit, so the
     * division is done once per block, not per unit */
    const int gl0 = ((int)threadIdx.x >> 5) / P->MTP;
    const int mi0 = ((int)threadIdx.x >> 5) - gl0 * P->MTP;
    int i, chunk, n, band;
    /* tma: the next unit's halo (same chunk) by one copy-engine copy, its arrival on mbarrier
     * tbar[buffer] (needs the buffers 128-byte aligned in shared memory); tin: this unit's
     * halo came so (the first unit's and those after a chunk change come by cp.async) */
#if GCONV_IMPL_HAS_WGMMA
    const int al128 = (gconv_impl_igemm_smem_addr(smem) & 127u) == 0;
    const int tma = P->tma && al128;
    /* dtma: each unit's D words by the copy engine into staging tile j & 1 (unit j of the
     * block's range), issued as unit j - 1 starts, completing mbarrier tbar + 16 + 8 (j & 1)
     * (phase parity (j >> 1) & 1); the two-block kernel only, which the launcher picks for
     * these plans */
    const int dtma = DT && al128 && epi == gconv_impl_epilogue_apply;
    const unsigned tbar = gconv_impl_igemm_smem_addr(smem + P->tbar_off);
#else
    const int tma = 0, dtma = 0;
    const unsigned tbar = 0u;
    (void)DT;
#endif
    /* j: the unit's place in the block's range; its halo is in buffer j & 1, whose mbarrier
     * (tma) completes once per use, by the copy or by thread 0's arrival where the halo came by
     * cp.async, so that its phase parity is (j >> 1) & 1 (derived, not a live register: the
     * three-block kernel spilled a parity word and waited on the reload every unit) */
    int j = 0;
    int tin = 0;
    if (KSL && KSL <= GCONV_IMPL_HALO_KO_MAX) {
#pragma unroll
        for (i = 0; i < KSL; i++)
            ko[i] = offs[i * 32 + ((int)threadIdx.x & 31)];
    }
#if GCONV_IMPL_HAS_WGMMA
    if ((tma || dtma) && threadIdx.x == 0) {
        gconv_impl_mbar_init(tbar, 1);
        gconv_impl_mbar_init(tbar + 8u, 1);
        gconv_impl_mbar_init(tbar + 16u, 1);
        gconv_impl_mbar_init(tbar + 24u, 1);
        /* the copy engine (async proxy) completes them: make the initialised barriers
         * visible to it (the first unit's barrier below makes them visible to the block) */
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
#endif
    gconv_impl_halo_unit(P, u, &chunk, &n, &band);
    for (; u < uend; u++, j++) {
        const int buf = j & 1;
        int g0;
        const int gv = gconv_impl_halo_gv(P, chunk, &g0);
        const int oh0 = band * P->R, rows = P->OH - oh0 < P->R ? P->OH - oh0 : P->R;
        /* n is the unit's image slot: its first image n0, ni images (wide plans: two, but one
         * in the last slot of an odd batch) */
        const int n0 = XI ? n * P->IM : n, ni = XI && P->IM == 2 && n0 + 1 < P->NIMG ? 2 : 1;
        const int ob2 = (n0 * P->out_n + oh0 * P->out_h) >> 1;
        const unsigned char *cur = smem + buf * hb;
        unsigned char *nxt = smem + (buf ^ 1) * hb;
        int nchunk = chunk, nn = n, nband = band, same;
        gconv_impl_halo_next(P, &nchunk, &nn, &nband);
        same = u + 1 < uend && nchunk == chunk;
        int tnext = 0;
        if (tin) {
#if GCONV_IMPL_HAS_WGMMA
            gconv_impl_mbar_wait(tbar + 8u * (unsigned)buf, (unsigned)(j >> 1) & 1u);
#endif
        }
#if GCONV_IMPL_HAS_WGMMA
        else if (tma && threadIdx.x == 0) /* a cp.async halo: this use's phase, completed */
            gconv_impl_mbar_arrive(tbar + 8u * (unsigned)buf);
#endif
        /* this unit's halo (and, first time, the weights and tables) are in; every warp is done
         * with the previous unit, whose buffer the next halo overwrites */
        gconv_impl_igemm_cp_wait(0);
        __syncthreads();
        if (same && tma) {
#if GCONV_IMPL_HAS_WGMMA
            if (threadIdx.x == 0)
                gconv_impl_halo_tma(gconv_impl_igemm_smem_addr(nxt), &P->tmap,
                                    tbar + 8u * (unsigned)(buf ^ 1), (unsigned)P->tbytes,
                                    g0 * P->C, -P->pw, nband * P->R - P->ph, nn);
#endif
            tnext = 1;
        } else if (same) {
            gconv_impl_halo_fill_unit(P, nxt, pixin, nn, nband * P->R, g0, gv, GCONV_IMPL_HALO_CA,
                                      FB, XI);
        }
#if GCONV_IMPL_HAS_WGMMA
        if (dtma && threadIdx.x == 0) {
            /* the next unit's tile was last read (and written) by the generic proxy in the
             * previous unit, which the barrier above closed: order those accesses before the
             * copy engine's writes */
            const unsigned sb = gconv_impl_igemm_smem_addr(stage);
            const unsigned tb = (unsigned)P->Q * (GCONV_IMPL_HALO_SROW * 4);
            asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
            if (j == 0) /* the block's first unit: its own D, into tile 0 */
                gconv_impl_halo_tma(sb, &P->dmap, tbar + 16u, (unsigned)P->dbytes, g0 * P->K,
                                    0, oh0, n);
            if (u + 1 < uend)
                gconv_impl_halo_tma(sb + ((j + 1) & 1) * tb, &P->dmap,
                                    tbar + 16u + 8u * ((j + 1) & 1), (unsigned)P->dbytes,
                                    nchunk * P->GB * P->K, 0, nband * P->R, nn);
        }
#endif
        gconv_impl_igemm_cp_commit();
        {
            unsigned *st = stage + (dtma ? (j & 1) * P->Q * GCONV_IMPL_HALO_SROW : 0);
            gconv_impl_halo_items(P, dt, epi, plain, fastd, cur, wsm, offs, ko, boffs, pixrel,
                                  st, n0, ni, oh0, rows * P->Wp, ob2, g0, gv, gl0, mi0, NT, MT,
                                  XI, KSL, TR, FB == 8, (FB == 1 && NT == 1) || DT,
                                  dtma ? tbar + 16u + 8u * (unsigned)(j & 1) : 0u,
                                  (unsigned)(j >> 1) & 1u);
            if (P->ostage && epi == gconv_impl_epilogue_apply) {
                __syncthreads(); /* every warp's words of the unit are in the staging tile */
                gconv_impl_halo_stage_out(P, st, pixrel, rows * P->Wp, ob2, g0);
            }
        }
        if (u + 1 < uend && !same) {
            /* the next unit is in the next chunk: its weights replace these once every warp
             * is done with them */
            int ng0;
            const int ngv = gconv_impl_halo_gv(P, nchunk, &ng0);
            __syncthreads();
            gconv_impl_halo_wfill(P, smem + 2 * hb, ng0, ngv);
            gconv_impl_halo_fill_unit(P, nxt, pixin, nn, nband * P->R, ng0, ngv,
                                      GCONV_IMPL_HALO_CA, FB, XI);
            gconv_impl_igemm_cp_commit();
        }
        chunk = nchunk, n = nn, band = nband, tin = tnext;
    }
}
#endif

/* One persistent block: build the tables, issue the first unit's loads, then run its range
 * of units with the next unit's halo loading while the current one computes. TRM (a literal):
 * the instantiation may be given wtr plans (backward data's; forward's leaves that code out).
 * NT1 (a literal): the kernel of the one-n-tile plans only (see GCONV_IMPL_HALO_MIN_BLOCKS1);
 * 0: every plan. */
static __device__ __forceinline__ void gconv_impl_halo_body(const gconv_impl_halo_params *P,
                                                            gconv_dtype dt, gconv_impl_epi_fn epi,
                                                            const int TRM, const int NT1)
{
#if GCONV_IMPL_IGEMM_MATH == GCONV_IMPL_MATH_MMA
    GCONV_IMPL_DYN_SMEM(smem);
    const int tid = (int)threadIdx.x;
    const int Wp = P->Wp, NT = P->NT;
    unsigned char *wsm = smem + 2 * P->halo_bytes;
    int *offs = (int *)(wsm + P->w_bytes);        /* [KS][32 lanes]: A ldmatrix row offsets */
    int *pixrel = offs + P->KS * 32;              /* [Q] output word offset within the band */
    int2 *pixin = (int2 *)(pixrel + P->Q);        /* [P] halo pixel: input offset, row */
    /* this block's units [u, uend): an even share of all, in order chunk, image, band */
    const int bid = (int)blockIdx.x;
    const int u = bid * P->uq + (bid < P->ur ? bid : P->ur);
    const int uend = u + P->uq + (bid < P->ur);
    /* the plain store skips the epilogue function, unless it is a user op */
    const int plain = P->plain && epi == gconv_impl_epilogue_apply;
    /* the built-in epilogue whose D tensors all share the output's layout */
    const int fastd = P->dsame && epi == gconv_impl_epilogue_apply;
    int i;
    if (u >= uend)
        return;

    /* the first unit's weights need no table: their copies go out first, so that the tables
     * below are built while they are in flight (37 KB at C = 32, the longest wait of a block) */
    {
        int chunk, n, band, g0, gv;
        gconv_impl_halo_unit(P, u, &chunk, &n, &band);
        gv = gconv_impl_halo_gv(P, chunk, &g0);
        gconv_impl_halo_wfill(P, wsm, g0, gv);
        gconv_impl_igemm_cp_commit();
    }
    /* per-lane ldmatrix offsets of every k-step: lane l gives row (l & 7) + 8 * ((l >> 3) & 1)
     * of the m-tile and the 8 columns kk = 16 ks + 8 * ((l >> 4) & 1), i.e. tap kk >> lc,
     * channels (kk & (C - 1)) .. +7 (one tap, C >= 8); columns past taps * C point at tap 0
     * (their registers are zeroed) */
    for (i = tid; i < P->KS * 32; i += GCONV_IMPL_HALO_THREADS) {
        const int ks = i >> 5, l = i & 31;
        const int kk = ks * 16 + ((l >> 4) & 1) * 8, row = (l & 7) + ((l >> 3) & 1) * 8;
        const int tap = kk < P->TC ? kk >> P->lc : 0, c = kk < P->TC ? kk & (P->C - 1) : 0;
        const int ty = gconv_impl_halo_div(tap, P->mx), tx = tap - ty * P->X;
        offs[i] = (row + ty * P->dh * Wp + tx * P->dw) * GCONV_IMPL_HALO_PS + c * 2;
    }
    /* virtual pixel q = r * Wp + c: its output offset from the band's first row in 32-bit
     * words (without n and channels; out_h, out_w even), -1 for columns past OW; rows past a
     * short last band are dropped per unit */
    for (i = tid; i < P->Q; i += GCONV_IMPL_HALO_THREADS) {
        const int r = gconv_impl_halo_div(i, P->mwp), c = i - r * Wp;
        pixrel[i] = c < P->OW ? (r * P->out_h + c * P->out_w) >> 1 : -1;
    }
    /* halo pixel p = hr * Wp + hc: see gconv_impl_halo_fill */
    for (i = tid; i < P->P; i += GCONV_IMPL_HALO_THREADS) {
        const int hr = gconv_impl_halo_div(i, P->mwp), iw = i - hr * Wp - P->pw;
        pixin[i] = make_int2((unsigned)iw < (unsigned)P->W ? hr * P->in_h + iw * P->in_w : -1, hr);
    }
    /* wtr: B's per-lane ldmatrix.trans row of every k-step, from the group's block: lane l
     * gives k row kk = 16 ks + 8 * ((l >> 3) & 1) + (l & 7) (matrices 0 / 1: the k halves),
     * i.e. view tap kk >> lc, whose weights are the problem's tap taps - 1 - that (both filter
     * axes flipped), channel row kk & (C - 1), and n-tile (l >> 4) of the pair (16 bytes on);
     * rows past taps * C (a tail: A is zero there) point at a real row so that B stays finite */
    if (TRM && P->wtr) {
        int *boffs = (int *)(pixin + P->P);
        for (i = tid; i < P->KS * 32; i += GCONV_IMPL_HALO_THREADS) {
            const int ks = i >> 5, l = i & 31;
            const int kk0 = ks * 16 + ((l >> 3) & 1) * 8 + (l & 7);
            const int kk = kk0 < P->TC ? kk0 : (l & 7);
            boffs[i] = (kk & (P->C - 1)) * P->wkp + (P->taps - 1 - (kk >> P->lc)) * P->K * 2 +
                       (l >> 4) * 16;
        }
    }
    __syncthreads(); /* the tables, for the first unit's copies */
    {
        int chunk, n, band, g0, gv;
        gconv_impl_halo_unit(P, u, &chunk, &n, &band);
        gv = gconv_impl_halo_gv(P, chunk, &g0);
        gconv_impl_halo_fill_unit(P, smem, pixin, n, band * P->R, g0, gv, GCONV_IMPL_HALO_CA, 1,
                                  !NT1 && NT == 4);
        gconv_impl_igemm_cp_commit();
    }
    /* the 3x3 shapes with C = K (8: 5 k-steps, 16: 9, 32: 18) unroll their k loop. FB = 8 (the
     * two-block kernel's one-n-tile loops only): halo copies in batches of 8 and the items'
     * advance without a loop where a unit has one m-tile group. H100, ResNeXt 128@56 / 256@28:
     * forward 65.5-66.3 -> 62.3-63.1 / 34.0-34.1 -> 32.7-32.9 us, backward data 69.2-70.3 ->
     * 66.5-67.3 / 35.1-35.4 -> 33.7-33.9; the same code in the three-block kernel (backward
     * data + residual), with more n-tiles (forward 512@14, 1024@7) or in BWH's fill lost 1-10 %
     * (bench/NOTES.md) */
    /* dtma plans (gconv_impl_halo_dtma_setup: backward data's two-block kernel, the unrolled
     * shapes) get loops of their own, in every device pass: where the copy engine cannot run
     * (no sm_90a code, or a shared-memory base not 128-byte aligned) those loops stage the
     * epilogue's words from the items' own D loads (SD), as the plan's kernel choice needs */
    /* wide plans (gconv_impl_halo_plan_wide: four n-tiles, two m-tiles an item) have loops of
     * their own, never dtma (the plan is not staged) */
#define GCONV_IMPL_HALO_GO1(nt_, mt_, ksl_, tr_)                                                 \
    do {                                                                                         \
        if (TRM && !NT1 && (ksl_) && (nt_) * (mt_) == 4 && P->dtma)                              \
            gconv_impl_halo_loop(P, dt, epi, plain, fastd, smem, u, uend, nt_, mt_, 0, ksl_,     \
                                 tr_, (nt_) == 1 && !NT1 ? 8 : 1, 1);                            \
        else                                                                                     \
            gconv_impl_halo_loop(P, dt, epi, plain, fastd, smem, u, uend, nt_, mt_,              \
                                 (nt_) * (mt_) == 8, ksl_, tr_, (nt_) == 1 && !NT1 ? 8 : 1, 0);  \
    } while (0)
#define GCONV_IMPL_HALO_GO(nt_, mt_, ksl_)                                                       \
    do {                                                                                         \
        if (TRM && P->wtr)                                                                       \
            GCONV_IMPL_HALO_GO1(nt_, mt_, ksl_, 1);                                              \
        else                                                                                     \
            GCONV_IMPL_HALO_GO1(nt_, mt_, ksl_, 0);                                              \
    } while (0)
    if (NT1 || NT == 1) {
        if (P->KS == 5)
            GCONV_IMPL_HALO_GO(1, 4, 5);
        else
            GCONV_IMPL_HALO_GO(1, 4, 0);
    } else if (NT == 2) {
        if (P->KS == 9)
            GCONV_IMPL_HALO_GO(2, 2, 9);
        else
            GCONV_IMPL_HALO_GO(2, 2, 0);
    } else if (P->MT == 2) {
        if (P->KS == 18)
            GCONV_IMPL_HALO_GO(4, 2, 18);
        else
            GCONV_IMPL_HALO_GO(4, 2, 0);
    } else {
        if (P->KS == 18)
            GCONV_IMPL_HALO_GO(4, 1, 18);
        else
            GCONV_IMPL_HALO_GO(4, 1, 0);
    }
#undef GCONV_IMPL_HALO_GO
#undef GCONV_IMPL_HALO_GO1
#else
    (void)P, (void)dt, (void)epi, (void)TRM, (void)NT1;
#endif
}

/* Band height for OH output rows from a wished-for height R (clamped to 1 .. OH): the
 * fewest bands of at most R rows, then rows spread evenly over them. Shared by the forward
 * halo kernel and the backward-weight BWH kernel (gconv/bwd_weight.h). */
static inline int gconv_impl_halo_target(int Wp)
{
    return GCONV_IMPL_HALO_TARGET > 0 ? GCONV_IMPL_HALO_TARGET : Wp >= 24 ? 64 : 128;
}

/* Rows per unit for the one-n-tile plans with a plain epilogue (the two-block kernel's staged
 * store): of the bands of at most 128 virtual pixels, the one that wastes the least of its
 * 64-pixel m-tile groups, the tallest of those that tie. H100, ResNeXt forward / backward data
 * (session 26, bench/NOTES.md): 56x56 (Wp 58) two rows against one, 128@56 59.5 -> 56.5 us /
 * 66.9 -> 64.0; 28x28 (Wp 30) four rows against two (and three or five, which waste 30 % /
 * 22 % of their last group), 256@28 31.5 -> 28.0. With a residual (the three-block kernel) two
 * rows lost (103.7 -> 113.8 us at 128@56): those plans keep gconv_impl_halo_target. */
static inline int gconv_impl_halo_rows_packed(int Wp)
{
    int r, best = 1;
    double beff = 0.0;
    for (r = 1; r * Wp <= 128; r++) {
        const double eff = (double)(r * Wp) / (double)((r * Wp + 63) / 64 * 64);
        if (eff >= beff - 1e-9)
            beff = eff > beff ? eff : beff, best = r;
    }
    return best;
}

static inline int gconv_impl_halo_rows(int OH, int R)
{
    int nb;
    if (R < 1)
        R = 1;
    if (R > OH)
        R = OH;
    nb = (OH + R - 1) / R;
    return (OH + nb - 1) / nb;
}

/* Whether an epilogue (NULL: none) is a plain store: alpha 1, no D tensors, no activation. */
static inline int gconv_impl_halo_plain(const gconv_epilogue *e)
{
    return !e || (e->alpha == 1.0f && e->num_d == 0 && e->act.kind == GCONV_ACT_NONE);
}

/* Plan a problem for the halo kernel: 1 and the parameters, or 0 if it does not fit. The
 * launcher sets P->blocks (gconv_impl_halo_grid). Band rows: gconv_impl_halo_rows_packed for
 * the one-n-tile plans with a plain epilogue, else at most gconv_impl_halo_target virtual
 * pixels; halved until two halo buffers, the weights and the tables fit. */
static inline int gconv_impl_halo_plan(const gconv_problem *p, gconv_dtype dt, const void *in,
                                       const void *wei, void *out, const gconv_epilogue *epi,
                                       gconv_impl_halo_params *P)
{
#if GCONV_IMPL_HALO_ENABLE
    int C = p->C, K = p->K, G = p->G, pair = 0;
    int lc, GB, taps, TC, KS, wrow, OH, OW, Wp, R, mtiles, NT, MT, MTP, Pn, halo, wbytes;
    int64_t units;
    if (dt == GCONV_F32 || p->ndim > 2)
        return 0;
    if (gconv_layout_family(gconv_in_layout(p)) != GCONV_NHWGC ||
        gconv_layout_family(gconv_out_layout(p)) != GCONV_NHWGC ||
        gconv_layout_family(gconv_wei_layout(p)) != GCONV_GKYXC)
        return 0;
    if (C == 4 && K == 4 && G % 2 == 0)
        pair = 1, C = 8, K = 8, G /= 2;
    for (lc = 3; lc <= 5 && (1 << lc) != C; lc++)
        ;
    if (lc > 5 || K % 2 || K > 32 || (G * C) % 8)
        return 0;
    if (p->stride[1] != 1 || p->stride[2] != 1)
        return 0;
    if (((uintptr_t)in | (uintptr_t)wei | (uintptr_t)out) % 16)
        return 0;
    if (gconv_in_elems(p) >= ((int64_t)1 << 31) || gconv_out_elems(p) >= ((int64_t)1 << 31) ||
        gconv_wei_elems(p) >= ((int64_t)1 << 31))
        return 0;
    GB = 64 / C;
    OH = gconv_out_len(p, 1), OW = gconv_out_len(p, 2);
    taps = p->filter[1] * p->filter[2];
    if (taps > GCONV_IMPL_HALO_MAX_TAPS)
        return 0;
    TC = taps * C;
    KS = (TC + 15) / 16;
    wrow = KS * 16 + 8;
    NT = K <= 8 ? 1 : K <= 16 ? 2 : 4;
    MT = 4 / NT;
    wbytes = GB * NT * 8 * wrow * 2;
    Wp = OW + (p->filter[2] - 1) * p->dilation[2];
    if (GCONV_IMPL_HALO_TARGET == 0 && NT == 1 && Wp >= 24 && gconv_impl_halo_plain(epi))
        R = gconv_impl_halo_rows(OH, gconv_impl_halo_rows_packed(Wp));
    else
        R = gconv_impl_halo_rows(OH, gconv_impl_halo_target(Wp) / Wp);
    for (;;) {
        mtiles = (R * Wp + 15) / 16;
        MTP = (mtiles + MT - 1) / MT;
        /* the last item's m-tiles read up to 16 * MT * MTP - 1 plus the largest tap offset */
        Pn = 16 * MT * MTP + (p->filter[1] - 1) * p->dilation[1] * Wp +
             (p->filter[2] - 1) * p->dilation[2];
        halo = (Pn * GCONV_IMPL_HALO_PS + 127) / 128 * 128; /* copy-engine destinations */
        if (2 * halo + wbytes + KS * 128 + 16 * MT * MTP * 4 + Pn * 8 <= GCONV_IMPL_HALO_MAX_SMEM)
            break;
        if (R == 1)
            return 0;
        R = gconv_impl_halo_rows(OH, (R + 1) / 2);
    }
    units = (int64_t)((G + GB - 1) / GB) * p->N * ((OH + R - 1) / R);
    if (units >= 0x7fffffffLL)
        return 0;
    memset(P, 0, sizeof *P);
    P->in = in, P->wei = wei, P->out = out;
    P->epi = epi ? *epi : gconv_epi_scale(1.0f);
    P->plain = gconv_impl_halo_plain(&P->epi);
    {
        const gconv_act_strides so = gconv_out_strides(p);
        int i;
        P->dsame = 1;
        for (i = 0; i < P->epi.num_d; i++) {
            const gconv_act_strides *sd = &P->epi.d[i].strides;
            P->dsame &= (uintptr_t)P->epi.d[i].data % 4 == 0 && sd->g == so.g && sd->n == so.n &&
                        sd->c == so.c && sd->s[0] == so.s[0] && sd->s[1] == so.s[1] &&
                        sd->s[2] == so.s[2];
        }
    }
    P->pair = pair, P->dt = dt;
    P->G = G, P->C = C, P->lc = lc, P->K = K, P->GB = GB;
    P->N = p->N, P->H = p->in[1], P->W = p->in[2], P->OH = OH, P->OW = OW;
    P->X = p->filter[2];
    P->dh = p->dilation[1], P->dw = p->dilation[2];
    P->ph = p->pad_lo[1], P->pw = p->pad_lo[2];
    P->taps = taps, P->TC = TC, P->KS = KS;
    P->R = R, P->Wp = Wp, P->NT = NT, P->MT = MT, P->MTP = MTP;
    P->IM = 1, P->NIMG = p->N, P->himg = halo;
    P->P = Pn, P->Q = 16 * MT * MTP, P->wrow = wrow;
    P->bands = (OH + R - 1) / R;
    P->units = (int)units, P->blocks = (int)units, P->uq = 1, P->ur = 0;
    P->mx = gconv_impl_halo_magic(P->X), P->mwp = gconv_impl_halo_magic(Wp);
    P->halo_bytes = halo, P->w_bytes = wbytes;
    {
        gconv_act_strides si = gconv_in_strides(p), so = gconv_out_strides(p);
        P->in_n = (int)si.n, P->in_h = (int)si.s[1], P->in_w = (int)si.s[2];
        P->out_n = (int)so.n, P->out_h = (int)so.s[1], P->out_w = (int)so.s[2];
    }
    return 1;
#else
    (void)p, (void)dt, (void)in, (void)wei, (void)out, (void)epi, (void)P;
    return 0;
#endif
}

/* The copy engine's mbarriers of the halo kernel: the two halo buffers' and the two D tiles' */
#define GCONV_IMPL_HALO_BAR_BYTES 32

/* Shared memory of a planned launch before the mbarriers: two halos, weights, A offsets, pixel
 * tables (wtr: and B offsets), the staging tile where gconv_impl_halo_plan_stage set one. */
static inline int gconv_impl_halo_data_end(const gconv_impl_halo_params *P)
{
    const int tables = 2 * P->halo_bytes + P->w_bytes + P->KS * 128 * (P->wtr ? 2 : 1) +
                       P->Q * 4 + P->P * 8;
    return P->ostage ? P->stage_off + P->Q * GCONV_IMPL_HALO_SROW * 4 * (P->dtma ? 2 : 1)
                     : tables;
}

/* Shared memory of a planned launch: the above, and the copy engine's mbarriers where
 * gconv_impl_halo_tma_setup or gconv_impl_halo_dtma_setup set them. */
static inline int gconv_impl_halo_smem(const gconv_impl_halo_params *P)
{
    return P->tma || P->dtma ? P->tbar_off + GCONV_IMPL_HALO_BAR_BYTES
                             : gconv_impl_halo_data_end(P);
}

/* Stage a planned launch's stores (P->ostage, P->stage_off; see gconv_impl_halo_params)
 * where they can go out in 16-byte pieces: the chunk's GB * K <= 64 channels a whole number
 * of pieces, every chunk full, output 16-byte aligned with pixel, row and image strides
 * multiples of 8 elements, and the shared memory there. One n-tile: a plain epilogue (the
 * two-block kernel), or one D tensor in the output's layout (a residual: the three-block
 * kernel, which applies its epilogue before staging; its three blocks must keep fitting an
 * SM). Several n-tiles: only that residual (H100, ResNeXt 1024@7 with a residual 24.5 ->
 * 21.8 us; their plain stores lost when staged, forward 512@14 20.1 -> 21.3, 1024@7 16.0 ->
 * 17.3). Called after gconv_impl_halo_plan and gconv_impl_halo_plan_wtr. */
static inline void gconv_impl_halo_plan_stage(gconv_impl_halo_params *P)
{
    if (P->NT == 4 && P->MT == 2)
        return; /* a wide plan (gconv_impl_halo_plan_wide) has no staged loops */
    /* three blocks of the D kernel, each with its copy-engine barriers and the 1 KB the
     * runtime reserves, in 228 KB */
    const int lim = P->plain || P->NT > 1 ? GCONV_IMPL_HALO_MAX_SMEM : GCONV_IMPL_HALO_SMEM3;
    int off;
    P->ostage = 0, P->stage_off = 0;
    off = (gconv_impl_halo_data_end(P) + 15) & ~15; /* after the tables */
    if (P->GB * P->K > 64 || !(P->NT == 1 ? P->plain || (P->epi.num_d == 1 && P->dsame)
                                          : !P->plain && P->epi.num_d == 1 && P->dsame) ||
        (P->GB * P->K) % 8 ||
        P->G % P->GB || (uintptr_t)P->out % 16 || P->out_w % 8 || P->out_h % 8 ||
        P->out_n % 8 || off + P->Q * GCONV_IMPL_HALO_SROW * 4 > lim)
        return;
    P->ostage = 1, P->stage_off = off;
}

/* Wide warp tiles for the four-n-tile plans (K > 16, in practice C = K = 32): an item of two
 * m-tiles (32 x 32 outputs: per k-step two A and two B ldmatrix.x4 for 8 mma, against one A and
 * two B for 4: the k loop is bound by those shared-memory reads; H100, a probe without a third
 * of them ran ResNeXt 1024@7 forward 16.2 -> 13.7 us, bench/NOTES.md). An item is then twice
 * the work, so a unit has half the items: where its band is the whole image (a 7x7 layer: 4
 * m-tiles a group, 4 items instead of 8 for 8 warps) the unit takes two images (P->IM = 2; N
 * becomes the units' image slots, the halo buffers hold both images' halos, himg bytes apart);
 * where the image has several bands of too few rows (28x28: two rows, 4 m-tiles) the bands
 * get twice the rows (unless GCONV_IMPL_HALO_TARGET pins them). Taken where the wide unit has
 * at least as many items as the warps (or as the plain plan), for unstaged plans without the
 * copy engine (staged or dtma plans keep one image a unit; those setups run before this and
 * leave wide plans alone), and where the shared memory holds it. Called last in the launch.
 * GCONV_IMPL_HALO_WIDE 0 turns it off. */
#ifndef GCONV_IMPL_HALO_WIDE
#define GCONV_IMPL_HALO_WIDE 1
#endif
static inline void gconv_impl_halo_plan_wide(gconv_impl_halo_params *P)
{
    const int warps = GCONV_IMPL_HALO_THREADS / 32, ext = P->P - P->Q; /* the taps' reach */
    const int gb = P->G < P->GB ? P->G : P->GB; /* groups a unit */
    const int items1 = gb * ((P->R * P->Wp + 15) / 16), lim = items1 < warps ? items1 : warps;
    int R = P->R, bands = P->bands, mtp = ((R * P->Wp + 15) / 16 + 1) / 2, im = 1;
    gconv_impl_halo_params W;
    if (!GCONV_IMPL_HALO_WIDE || P->NT != 4 || P->MT != 1 || P->ostage || P->tma || P->dtma)
        return;
    if (gb * mtp < warps && bands == 1 && P->N >= 2)
        im = 2;
    else if (gb * mtp < warps && bands > 1 && GCONV_IMPL_HALO_TARGET == 0) {
        R = gconv_impl_halo_rows(P->OH, 2 * R);
        bands = (P->OH + R - 1) / R;
        mtp = ((R * P->Wp + 15) / 16 + 1) / 2;
    }
    if (im * gb * mtp < lim)
        return;
    W = *P;
    W.MT = 2, W.MTP = mtp, W.Q = 32 * mtp, W.P = W.Q + ext;
    W.himg = (W.P * GCONV_IMPL_HALO_PS + 127) / 128 * 128, W.halo_bytes = im * W.himg;
    W.IM = im, W.N = (W.NIMG + im - 1) / im, W.R = R, W.bands = bands;
    W.units = (W.G + W.GB - 1) / W.GB * W.N * W.bands;
    W.blocks = W.units, W.uq = 1, W.ur = 0;
    if (gconv_impl_halo_data_end(&W) <= GCONV_IMPL_HALO_MAX_SMEM)
        *P = W;
}

/* Backward data through its forward view (gconv/bwd_data.h): switch a plan of the view to
 * read p's own GKYXC weights wei[g][k][tap][c], with no pre-pass making the view's weights.
 * In the view the reduction channels (P->C) are p's K and the outputs (P->K) p's C, and
 * B[kk = tap' * P->C + k][n = c] = wei[g][k][taps - 1 - tap'][c] (both filter axes flipped
 * reverse the flattened tap): per group P->C rows of taps * P->K elements, i.e. B stored
 * k-major, whose fragments ldmatrix.trans reads. In shared memory row k of group gl starts at
 * gl * wgs + k * wkp, wkp = taps * P->K * 2 bytes padded by 16 or 32 to an odd number of
 * 16-byte chunks (the 8 rows of an ldmatrix, 8 consecutive k, fall in distinct bank groups;
 * the pad also keeps the last n-tile of K = 24 inside the block). Pair mode (C = K = 4)
 * keeps its block-diagonal layout, built from p's weights by the weight fill (P->wflip). 1 if
 * switched, 0 and P unchanged where it does not apply: P->K not a multiple of 8 (rows must be
 * whole 16-byte copies), weights not GKYXC or not 16-byte aligned (pair mode: 2-byte), or the
 * shared memory short. */
static inline int gconv_impl_halo_plan_wtr(const gconv_problem *p, const void *wei,
                                           gconv_impl_halo_params *P)
{
    int wkp, wbytes;
    if (gconv_layout_family(gconv_wei_layout(p)) != GCONV_GKYXC)
        return 0;
    if (P->pair) {
        if ((uintptr_t)wei % 2)
            return 0;
        P->wflip = 1, P->wei = wei;
        return 1;
    }
    if (P->K % 8 || (uintptr_t)wei % 16)
        return 0;
    wkp = P->taps * P->K * 2 + 16;
    if ((wkp / 16) % 2 == 0)
        wkp += 16;
    wbytes = P->GB * P->C * wkp;
    if (2 * P->halo_bytes + wbytes + 2 * P->KS * 128 + P->Q * 4 + P->P * 8 >
        GCONV_IMPL_HALO_MAX_SMEM)
        return 0;
    P->wtr = 1, P->wei = wei, P->wkp = wkp, P->wgs = P->C * wkp, P->w_bytes = wbytes;
    return 1;
}

/* The persistent grid of a planned launch: as many blocks as fit on the device at once
 * (resident: blocks per SM, 0 if unknown), at most one per unit. */
static inline void gconv_impl_halo_grid(gconv_impl_halo_params *P, int resident)
{
    const int64_t b = (int64_t)(resident > 0 ? resident : 1) * gconv_device_sm_count();
    P->blocks = b <= 0 || b >= P->units ? P->units : (int)b;
    P->uq = P->units / P->blocks, P->ur = P->units % P->blocks;
}

/* The most any plan asks for (the launcher raises the kernel's limit to this once). */
#define GCONV_IMPL_HALO_SMEM_LIMIT GCONV_IMPL_HALO_MAX_SMEM

#endif /* GCONV_IGEMM_HALO_H */
