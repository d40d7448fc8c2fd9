/* gconv/fused_fwd.h: fused grouped convolution -> pointwise (1x1) convolution forward, the
 * depthwise-separable block, with the intermediate tensor kept on chip.
 *
 *     out = epi(conv1x1(mid, w1) + b1, D...),   mid = act0(grouped_conv(in, w0) + b0)
 *
 * The grouped convolution is the problem p (any G, C, K per group, filter, stride, dilation,
 * asymmetric pads, 1D/2D/3D); mid has G*K channels and is never written to global memory; the
 * pointwise convolution maps those G*K channels to K1 output channels (stride 1, dense over all
 * groups). w1 is K1 x (G*K) row-major (w1[k1 * G*K + g*K + k]); b0 has G*K elements and b1 K1
 * (either may be NULL). out has N images, K1 channels, p's output spatial size and the layout
 * family of p->out_layout with G = 1; the epilogue's D tensors are read at (g = 0, n, k1, d, h,
 * w) with their own strides (e.g. the residual of an inverted-residual block:
 * gconv_fused_fwd_out_strides(&p, K1)). This is what gconv_ref_fwd_fwd (gconv/reference.h)
 * computes.
 *
 * Usage:
 *     GCONV_FUSED_FWD(dws_f16, GCONV_F16, GCONV_NHWGC, GCONV_GKYXC)       at file scope, once
 *
 *     gconv_fused_fwd_args a;
 *     memset(&a, 0, sizeof a);
 *     a.in = x; a.w0 = w_dw; a.b0 = b_dw; a.act0 = gconv_relu6();
 *     a.w1 = w_pw; a.b1 = b_pw; a.out = y;      device pointers
 *     a.epi = &e;                               NULL: plain store
 *     a.why = why; a.why_len = sizeof why;      optional: the reason of a refusal
 *     gconv_status s = dws_f16(&p, K1, &a, stream);   asynchronous; never synchronises
 *
 * Instantiations (ACT_FAMILY GCONV_NHWGC / GCONV_GNHWC / GCONV_NGCHW, WEI_FAMILY GCONV_GKYXC /
 * GCONV_GKCYX; one instantiation serves 1D, 2D and 3D):
 *   GCONV_FUSED_FWD(name, T, ACT_FAMILY, WEI_FAMILY)
 *       picks the tile (pixels x K1 columns) by shape at run time among GCONV_FUSED_TILE_*.
 *   GCONV_FUSED_FWD_TILED(name, T, ACT_FAMILY, WEI_FAMILY, TILE)
 *       the pinned tile TILE: a GCONV_FUSED_TILE_* macro or any (BM, BN, BK, WM, WN, ST) tile
 *       of gconv/igemm.h that passes GCONV_IMPL_TILE_OK (ST is ignored: the kernel double
 *       buffers on CUDA, single buffers on AMD).
 *   GCONV_FUSED_FWD_USER_OP(name, T, ACT_FAMILY, WEI_FAMILY, OPFN)
 *       OPFN replaces the final epilogue (signature of gconv_impl_epilogue_apply, gconv/device.h;
 *       it receives a->epi or a plain-store description, (g = 0, n, k1, d, h, w) and acc + b1).
 *   GCONV_FUSED_FWD_USER_ACT(name, T, ACT_FAMILY, WEI_FAMILY, ACTFN)
 *       ACTFN replaces the activation between the convolutions; same signature, it receives a
 *       description with alpha 1, no D tensors and act = a->act0, the value grouped conv + b0,
 *       and the intermediate's logical position (g, n, k, d, h, w).
 * Each defines
 *   int name_supports(const gconv_problem *p, int K1, char *why, size_t len);  1, or 0 + reason
 *   gconv_status name(const gconv_problem *p, int K1, const gconv_fused_fwd_args *a,
 *                     hipStream_t stream);
 *
 * No workspace: there is no workspace query and no workspace argument; the launcher allocates
 * nothing (the intermediate lives in shared memory / LDS, one tile at a time).
 *
 * Algorithm. Depthwise problems with the groups contiguous in the input (NHWGC, G a multiple
 * of 8), 2D (1D for the band kernel), fp16 / bf16, 16-byte aligned in / w1, on CUDA take one of
 * three specialised kernels (GCONV_FUSED_FWD, _USER_OP and _USER_ACT try them in this order):
 *   - the tile kernel (gconv/fused_tile.h), first for outputs of at most GCONV_IMPL_FT_FIRSTPX
 *     pixels per image (14x14 and smaller): 3x3, any stride / dilation: a block computes the
 *     depthwise conv of a few whole output rows for all channels into shared memory, then
 *     the pointwise GEMM with w1 streamed in 64-channel chunks;
 *   - the row kernel (gconv/fused_rows.h): 3x3, stride 1 or 2, no dilation, w1 of at most
 *     64 KB: each thread streams its input columns down the image through a cp.async ring
 *     (as the forward depthwise kernel does), the block turns each finished output row into
 *     pointwise outputs on tensor cores one row later, w1 resident in shared memory;
 *   - the tile kernel on larger outputs where K1 is above 128;
 *   - the band kernel (gconv/fused_band.h; also 16-byte aligned w0 / b0, any filter of at most
 *     64 taps): a persistent block reads a band of output rows' input with its halo once into
 *     shared memory by cp.async, several steps ahead, computes the depthwise conv for 32 or 64
 *     channels at a time into an on-chip tile and accumulates the pointwise conv from it.
 *
 * Every other problem takes the general kernels below (and GCONV_FUSED_FWD_TILED always does).
 * A block owns tiles of BM output pixels (flattened over N and space) x BN of the K1
 * output channels. It walks the G*K intermediate channels in chunks of BK: stage 1 computes the
 * grouped conv for BM pixels x BK channels in fp32 (+ b0, act0), rounds it to T and stores it
 * into shared memory in the engine's swizzled [pixels][BK] format (gconv/igemm.h); the w1 chunk
 * [BN][BK] arrives by 16-byte cp.async; stage 2 is the engine's stage math (mma.sync for fp16 /
 * bf16 on sm_80+, MFMA on gfx908/90a/940, FMA for fp32 on NVIDIA and on gfx1030) into fp32
 * accumulators. After the last chunk: + b1, epilogue, store (16-byte stores where the output
 * channels are contiguous). K1 above BN: one tile column per BN channels, each recomputing
 * stage 1 (recompute, never spill). Stage 1 has three forms, chosen at run time:
 *   - pipelined (depthwise C = K = 1 with the groups contiguous, i.e. NHWGC input, G a multiple
 *     of the 16-byte vector, at most 9 taps, 16-byte aligned in / w0 / b0 / w1, input under 2^31
 *     elements): a persistent grid (as many blocks as fit at once), each block a run of tiles;
 *     the loads of the next (tile, chunk) item (input taps into registers, w0 / b0 / w1 by
 *     cp.async) are issued before the current item's GEMM, barriers and epilogue, so memory
 *     latency overlaps work;
 *   - vector (the same depthwise shapes with more taps): 16-byte loads of 8 (fp16 / bf16) or
 *     4 (fp32) channels, w0 staged in shared memory as fp32, one tile per block;
 *   - element-wise (every other problem: any C, K, layout, alignment): the generic path.
 * Precision: fp32 accumulation in both stages; the intermediate is rounded to T once (as a
 * two-kernel sequence stores it), the reference keeps it exact.
 *
 * Speed (H200, fp16, MobileNetV2 blocks at N = 64; bench/results/fused_fwd-*, bench/NOTES.md):
 * 2.3x - 3.2x cuDNN's two-call sequence as a geomean (cuDNN's own search varies run to run);
 * faster than gconv's own two calls (direct depthwise kernel + implicit-GEMM 1x1) on 32@112,
 * 144@56 (stride 1 and 2) and 384@14, slower on 192@28, 576@14 and 960@7; 0.04 - 0.5 of the
 * fused floor.
 *
 * Errors (status, in this order): a NULL argument pointer GCONV_ERR_NULL; gconv_problem_check's
 * status; layouts not of the instantiation's families GCONV_ERR_LAYOUT; K1 <= 0 GCONV_ERR_SIZE;
 * K1 * G * K or the output's element count too large GCONV_ERR_OVERFLOW; null in, w0, w1 or out
 * GCONV_ERR_NULL; a pointer (in, w0, b0, w1, b1, out, D tensors) not aligned to its element
 * GCONV_ERR_ALIGNMENT; a bad epilogue or act0 as gconv_epilogue_check says (GCONV_ERR_NULL /
 * GCONV_ERR_ARGUMENT); too many blocks GCONV_ERR_UNSUPPORTED; launch failure GCONV_ERR_RUNTIME.
 * GCONV_FUSED_FWD_TILED also refuses a tile needing more shared memory than a block may have
 * (GCONV_ERR_UNSUPPORTED).
 *
 * Include through gconv.h (or this header); needs a HIP or CUDA compiler.
 */
#ifndef GCONV_FUSED_FWD_H
#define GCONV_FUSED_FWD_H

#include "device.h"
#include "epilogue.h"
#include "fwd.h"
#include "igemm.h"
#include "layout.h"
#include "problem.h"

typedef struct gconv_fused_fwd_args {
    const void *in;   /* input, p->in_layout */
    const void *w0;   /* grouped weights, p->wei_layout */
    const void *b0;   /* G*K per-channel bias of the grouped conv, or NULL */
    gconv_act act0;   /* activation between the convs (zeroed: identity) */
    const void *w1;   /* pointwise weights, K1 x (G*K) row-major */
    const void *b1;   /* K1 bias of the pointwise conv, or NULL */
    void *out;        /* N x K1 x output spatial, family of p->out_layout with G = 1 */
    const gconv_epilogue *epi; /* final epilogue, NULL = plain store */
    char *why;        /* optional: reason of a refusal */
    size_t why_len;
} gconv_fused_fwd_args;

/* Strides of the fused output (and of D tensors shaped like it) for problem p and K1. */
static inline gconv_act_strides gconv_fused_fwd_out_strides(const gconv_problem *p, int K1)
{
    int o[3];
    gconv_out_sizes(p, o);
    return gconv_act_strides_make(gconv_out_layout(p), 1, p->N, K1, o);
}

/* Element count of the fused output. */
static inline int64_t gconv_fused_fwd_out_elems(const gconv_problem *p, int K1)
{
    return (int64_t)p->N * K1 * gconv_out_spatial(p);
}

/* The band kernel (depthwise groups contiguous in the input, fp16 / bf16, CUDA): tried first by
 * GCONV_FUSED_FWD and its _USER_OP / _USER_ACT forms. */
#include "fused_band.h"
#include "fused_rows.h"
#include "fused_tile.h"

/* Named tiles (BM pixels, BN output channels, BK intermediate channels per chunk, warps along
 * M and N, ST unused); all 256 threads. GCONV_FUSED_FWD picks among the 64-pixel ones. */
#define GCONV_FUSED_TILE_64x16 (64, 16, 32, 4, 2, 2)
#define GCONV_FUSED_TILE_64x32 (64, 32, 32, 4, 2, 2)
#define GCONV_FUSED_TILE_64x64 (64, 64, 32, 2, 4, 2)
#define GCONV_FUSED_TILE_64x128 (64, 128, 32, 2, 4, 2)
#define GCONV_FUSED_TILE_64x256 (64, 256, 32, 2, 4, 2)
/* 128-pixel tiles (two 16-byte slots per thread in stage 1), for GCONV_FUSED_FWD_TILED */
#define GCONV_FUSED_TILE_128x16 (128, 16, 32, 8, 1, 2)
#define GCONV_FUSED_TILE_128x32 (128, 32, 32, 4, 2, 2)
#define GCONV_FUSED_TILE_128x64 (128, 64, 32, 4, 2, 2)

/* Buffers per pipeline object: 2 on CUDA (one barrier pair per chunk overlaps nothing but
 * saves a barrier), 1 on AMD (LDS is 64 KB). */
#ifndef GCONV_IMPL_FUSED_NBUF
#if defined(GCONV_PLATFORM_CUDA)
#define GCONV_IMPL_FUSED_NBUF 2
#else
#define GCONV_IMPL_FUSED_NBUF 1
#endif
#endif
/* Blocks per SM the register allocation aims for (__launch_bounds__). */
#ifndef GCONV_IMPL_FUSED_MINBLOCKS
#define GCONV_IMPL_FUSED_MINBLOCKS 2
#endif
/* What the staged C tile may take beyond the pipeline (bands of rows if more is needed). */
#define GCONV_IMPL_FUSED_CCAP (32 * 1024)

typedef struct gconv_impl_fused_params {
    const void *in, *w0, *b0, *w1, *b1;
    void *out;
    gconv_epilogue epi; /* final epilogue */
    gconv_epilogue mid; /* alpha 1, no D, act0 */
    int G, C, K, GK, K1, taps;
    int in_sp[3], out_sp[3], flt[3], str[3], dil[3], pad[3];
    int64_t M;     /* N * output pixels */
    int mt, nt;    /* tiles along M and along K1 */
    int a_vec;     /* vector stage 1 (depthwise, contiguous groups) */
    int a_pipe;    /* ... pipelined: taps <= 9, 32-bit input offsets, raw w0 / b0 copies */
    int b_vec;     /* w1 chunks by 16-byte copies */
    int out_vec;   /* 16-byte output stores */
    int off_b, off_ws, off_b0; /* byte offsets in shared memory: w1 tiles, w0 taps, b0 */
    int off_tap;   /* pipelined path: input offset of each tap (ints) */
    int off_c;     /* pipelined path: the staged C tile */
    int tpb;       /* pipelined path: tiles per block */
    int abytes, bbytes, wsbytes; /* bytes of one buffer of each */
    int band;      /* rows of C staged at once */
    gconv_act_strides si, so;
    gconv_wei_strides sw;
} gconv_impl_fused_params;

/* ---- host-side plan (host and device agree through the params) --------------------------- */

static inline GCONV_HD int gconv_impl_fused_align128(int x)
{
    return (x + 127) / 128 * 128;
}

/* Fill the shared-memory plan of tile t for element size es; returns the bytes a block needs. */
static inline int gconv_impl_fused_plan_smem(gconv_impl_fused_params *P, gconv_impl_tile t,
                                             int es)
{
    const int nb = GCONV_IMPL_FUSED_NBUF;
    int pipe, cfull, cap, rows;
    P->abytes = gconv_impl_fused_align128(t.bm * t.bk * es);
    P->bbytes = gconv_impl_fused_align128(t.bn * t.bk * es);
    /* w0 of a chunk: fp32 [tap][BK] (vector path) or raw [BK][taps] copies (pipelined) */
    P->wsbytes = P->a_pipe  ? gconv_impl_fused_align128(P->taps * t.bk * es)
                 : P->a_vec ? gconv_impl_fused_align128(P->taps * t.bk * 4)
                            : 0;
    P->off_b = nb * P->abytes;
    P->off_ws = P->off_b + nb * P->bbytes;
    P->off_b0 = P->off_ws + nb * P->wsbytes;
    P->off_tap = P->off_b0 + nb * gconv_impl_fused_align128(t.bk * 4);
    pipe = P->off_tap + 128;
    if (P->a_pipe) {
        /* the C tile has its own space: the next item's copies are in flight meanwhile */
        P->off_c = pipe;
        rows = t.bm;
        while (rows > 1 && (rows * (t.bn + GCONV_IMPL_CPAD) * 4 > GCONV_IMPL_FUSED_CCAP * 2 ||
                            pipe + rows * (t.bn + GCONV_IMPL_CPAD) * 4 > GCONV_IMPL_SMEM_MAX))
            rows /= 2;
        P->band = rows;
        return pipe + rows * (t.bn + GCONV_IMPL_CPAD) * 4;
    }
    cfull = t.bm * (t.bn + GCONV_IMPL_CPAD) * 4;
    cap = pipe > GCONV_IMPL_FUSED_CCAP ? pipe : GCONV_IMPL_FUSED_CCAP;
    if (cap > GCONV_IMPL_SMEM_MAX)
        cap = GCONV_IMPL_SMEM_MAX;
    rows = t.bm;
    while (rows > 1 && rows * (t.bn + GCONV_IMPL_CPAD) * 4 > cap)
        rows /= 2;
    P->band = rows;
    if (cfull > cap)
        cfull = rows * (t.bn + GCONV_IMPL_CPAD) * 4;
    return pipe > cfull ? pipe : cfull;
}

/* Fill everything but the tile-dependent fields. */
static inline void gconv_impl_fused_fill(const gconv_problem *p, int K1,
                                         const gconv_fused_fwd_args *a, gconv_dtype dt,
                                         gconv_impl_fused_params *P)
{
    const int vec = 16 / (int)gconv_dtype_size(dt);
    int i;
    memset(P, 0, sizeof *P);
    P->in = a->in, P->w0 = a->w0, P->b0 = a->b0, P->w1 = a->w1, P->b1 = a->b1, P->out = a->out;
    P->epi = a->epi ? *a->epi : gconv_epi_scale(1.0f);
    P->mid = gconv_epi_scale(1.0f);
    P->mid.act = a->act0;
    P->G = p->G, P->C = p->C, P->K = p->K, P->GK = p->G * p->K, P->K1 = K1;
    P->taps = (int)gconv_filter_taps(p);
    for (i = 0; i < 3; i++) {
        P->in_sp[i] = p->in[i];
        P->out_sp[i] = gconv_out_len(p, i);
        P->flt[i] = p->filter[i];
        P->str[i] = p->stride[i];
        P->dil[i] = p->dilation[i];
        P->pad[i] = p->pad_lo[i];
    }
    P->M = (int64_t)p->N * gconv_out_spatial(p);
    P->si = gconv_in_strides(p);
    P->so = gconv_fused_fwd_out_strides(p, K1);
    P->sw = gconv_weight_strides(p);
    P->a_vec = p->C == 1 && p->K == 1 && P->si.c == 1 && P->si.g == 1 && p->G % vec == 0 &&
               (uintptr_t)a->in % 16 == 0;
    P->b_vec = P->GK % vec == 0 && (uintptr_t)a->w1 % 16 == 0;
    P->a_pipe = P->a_vec && P->b_vec && P->taps <= 9 && gconv_in_elems(p) < 0x7fffffffLL &&
                (uintptr_t)a->w0 % 16 == 0 && (uintptr_t)a->b0 % 16 == 0;
    P->out_vec = P->so.c == 1 && K1 % vec == 0 && (uintptr_t)a->out % 16 == 0;
}

/* Checks that do not depend on the tile. a may be NULL (supports). */
static inline gconv_status gconv_impl_fused_check(const gconv_problem *p, int K1,
                                                  const gconv_fused_fwd_args *a, gconv_dtype dt,
                                                  gconv_layout act, gconv_layout wei, char *why,
                                                  size_t len)
{
    gconv_status s = gconv_problem_check(p, why, len);
    const size_t esz = gconv_dtype_size(dt);
    gconv_epilogue mid;
    int i;
    if (s != GCONV_OK)
        return s;
    s = gconv_impl_check_families(p, act, wei, why, len);
    if (s != GCONV_OK)
        return s;
    if (K1 <= 0)
        return gconv_impl_fail(GCONV_ERR_SIZE, why, len,
                               "K1 (pointwise output channels) is %d; it must be positive", K1);
    if (!gconv_impl_count_ok(K1, p->G, p->K, 1, 1, 1) ||
        !gconv_impl_count_ok(p->N, K1, gconv_out_len(p, 0), gconv_out_len(p, 1),
                             gconv_out_len(p, 2), 1))
        return gconv_impl_fail(GCONV_ERR_OVERFLOW, why, len,
                               "K1 * G * K or N * K1 * output pixels is too large");
    if ((int64_t)p->G * p->K > 0x7fffffffLL - 1024 || (int64_t)p->C * gconv_filter_taps(p) > 0x7fffffffLL)
        return gconv_impl_fail(GCONV_ERR_UNSUPPORTED, why, len,
                               "G * K or C * filter taps is too large for 32-bit loop counters");
    if (!a)
        return GCONV_OK;
    if (!a->in || !a->w0 || !a->w1 || !a->out)
        return gconv_impl_fail(GCONV_ERR_NULL, why, len, "the %s pointer is null",
                               !a->in ? "input" : !a->w0 ? "w0" : !a->w1 ? "w1" : "output");
    if (((uintptr_t)a->in | (uintptr_t)a->w0 | (uintptr_t)a->b0 | (uintptr_t)a->w1 |
         (uintptr_t)a->b1 | (uintptr_t)a->out) % esz)
        return gconv_impl_fail(GCONV_ERR_ALIGNMENT, why, len,
                               "in, w0, b0, w1, b1 and out must be aligned to their %d-byte "
                               "elements",
                               (int)esz);
    s = gconv_epilogue_check(a->epi, why, len);
    if (s != GCONV_OK)
        return s;
    if (a->epi)
        for (i = 0; i < a->epi->num_d; i++)
            if ((uintptr_t)a->epi->d[i].data % esz)
                return gconv_impl_fail(GCONV_ERR_ALIGNMENT, why, len,
                                       "D tensor %d is not aligned to its %d-byte elements", i,
                                       (int)esz);
    mid = gconv_epi_scale(1.0f);
    mid.act = a->act0;
    s = gconv_epilogue_check(&mid, why, len);
    if (s != GCONV_OK)
        return gconv_impl_fail(s, why, len, "act0 is invalid (kind %d, lo %g, hi %g)",
                               (int)a->act0.kind, (double)a->act0.lo, (double)a->act0.hi);
    return GCONV_OK;
}

/* Run-time tile choice of the default instantiation, index into GCONV_FUSED_TILE_* (0: 64x16,
 * 1: 64x32, 2: 64x64, 3: 64x128, 4: 64x256). Cost model: blocks run in waves of
 * sms * 2; a block costs its pixels times (stage-1 work per intermediate channel, which the
 * tile repeats per block column, plus its share of the 1x1 GEMM). */
static inline int gconv_impl_fused_pick(int64_t M, int K1, int GK, int taps, int sms)
{
    static const int bm[5] = {64, 64, 64, 64, 64}, bn[5] = {16, 32, 64, 128, 256};
    double best = 0.0;
    int i, pick = 4;
    if (sms <= 0)
        sms = 80;
    for (i = 0; i < 5; i++) {
        const int64_t blocks = (M + bm[i] - 1) / bm[i] * ((K1 + bn[i] - 1) / bn[i]);
        const int64_t waves = (blocks + 2 * sms - 1) / (2 * sms);
        /* stage 1: a 16-byte load and vec FMAs per tap and 8 channels ~ taps + 16 units per
         * channel; stage 2 on tensor cores: ~ BN / 16 units per channel (padded columns too) */
        const double per = (double)bm[i] * GK * ((double)taps + 16.0 + bn[i] / 16.0);
        const double cost = (double)waves * per + 1e-3 * (double)blocks;
        if (i == 0 || cost < best) {
            best = cost;
            pick = i;
        }
    }
    return pick;
}

/* ---- device code --------------------------------------------------------------------------- */

/* The stage-2 math path of this device pass: tensor / matrix cores for 16-bit types, fp32 on
 * MFMA where present, FMA otherwise (never wgmma: the chunks are produced by the block itself,
 * the synchronous paths need no async-proxy fences). */
static __device__ __forceinline__ int gconv_impl_fused_math(gconv_dtype dt)
{
#if GCONV_IMPL_IGEMM_MATH == GCONV_IMPL_MATH_MMA
    return dt == GCONV_F32 ? GCONV_IMPL_MATH_FMA : GCONV_IMPL_MATH_MMA;
#elif GCONV_IMPL_IGEMM_MATH == GCONV_IMPL_MATH_MFMA
    (void)dt;
    return GCONV_IMPL_MATH_MFMA;
#else
    (void)dt;
    return GCONV_IMPL_MATH_FMA;
#endif
}

/* 16 bytes global -> shared: cp.async where available, else through registers. */
static __device__ __forceinline__ void gconv_impl_fused_copy16(unsigned char *s, const void *g,
                                                               int valid)
{
#if GCONV_IMPL_IGEMM_CP_ASYNC
    gconv_impl_igemm_cp_async16(gconv_impl_igemm_smem_addr(s), g, valid);
#else
    gconv_impl_igemm_u4 v;
    v.x = v.y = v.z = v.w = 0u;
    if (valid)
        v = gconv_impl_igemm_ld_global16(g);
    gconv_impl_igemm_st_shared16(s, v);
#endif
}

/* m -> (n, d, h, w) of the output. */
static __device__ __forceinline__ void gconv_impl_fused_split(const gconv_impl_fused_params *P,
                                                              int64_t m, int *n, int *d, int *h,
                                                              int *w)
{
    int64_t q;
    if (P->M <= 0x7fffffffLL) { /* 32-bit divisions where every pixel index fits */
        unsigned u = (unsigned)m, v = u / (unsigned)P->out_sp[2];
        *w = (int)(u - v * (unsigned)P->out_sp[2]);
        u = v, v = u / (unsigned)P->out_sp[1];
        *h = (int)(u - v * (unsigned)P->out_sp[1]);
        u = v, v = u / (unsigned)P->out_sp[0];
        *d = (int)(u - v * (unsigned)P->out_sp[0]);
        *n = (int)v;
        return;
    }
    q = m / P->out_sp[2];
    *w = (int)(m - q * P->out_sp[2]);
    m = q, q = m / P->out_sp[1];
    *h = (int)(m - q * P->out_sp[1]);
    m = q, q = m / P->out_sp[0];
    *d = (int)(m - q * P->out_sp[0]);
    *n = (int)q;
}

/* Stage the chunk's w0 taps (fp32, [tap][BK]) and b0 (fp32, [BK]) for the vector stage 1. */
static __device__ __forceinline__ void gconv_impl_fused_stage_w0(const gconv_impl_fused_params *P,
                                                                 float *ws, float *b0s, int c0,
                                                                 int bk, int nt, gconv_dtype dt)
{
    const int tid = (int)threadIdx.x, n = P->taps * bk;
    int e;
    for (e = tid; e < n; e += nt) {
        const int col = e % bk, tap = e / bk, j = c0 + col;
        float v = 0.0f;
        if (j < P->GK) {
            const int x = tap % P->flt[2], y = (tap / P->flt[2]) % P->flt[1],
                      z = tap / (P->flt[2] * P->flt[1]);
            v = gconv_impl_dev_load(dt, P->w0, gconv_wei_offset(&P->sw, j, 0, 0, z, y, x));
        }
        ws[e] = v;
    }
    for (e = tid; e < bk; e += nt)
        b0s[e] = (P->b0 && c0 + e < P->GK) ? gconv_impl_dev_load(dt, P->b0, c0 + e) : 0.0f;
}

/* ---- the pipelined stage 1 (depthwise, at most 9 taps) --------------------------------------
 * Chunk c+1's loads are issued right after chunk c's stage 1, so they fly during chunk c's
 * 1x1 GEMM and barriers: the input taps into registers (up to 2 slots x 9 taps x 16 bytes per
 * thread), w0 and b0 of the chunk (contiguous: [channel][taps] for C = K = 1) and the w1 tile
 * into shared memory by cp.async. */

/* The w1 tile of chunk c0 (rows k10 .. k10 + BN - 1, channels c0 .. c0 + BK - 1) into sb. */
static __device__ __forceinline__ void gconv_impl_fused_load_w1(const gconv_impl_fused_params *P,
                                                                gconv_impl_tile t, gconv_dtype dt,
                                                                unsigned char *sb, int k10, int c0)
{
    const int es = dt == GCONV_F32 ? 4 : 2, vec = 16 / es, cpr = t.bk * es / 16;
    const int nt = t.wm * t.wn * 32;
    int e;
    for (e = (int)threadIdx.x; e < t.bn * cpr; e += nt) {
        const int rr = e / cpr, qq = e % cpr;
        const int k1 = k10 + rr, jj = c0 + qq * vec;
        unsigned char *dst = sb + gconv_impl_igemm_chunk_off(rr, qq, cpr);
        if (P->b_vec) {
            const int ok = k1 < P->K1 && jj < P->GK;
            const unsigned char *src =
                (const unsigned char *)P->w1 + (ok ? ((int64_t)k1 * P->GK + jj) * es : 0);
            gconv_impl_fused_copy16(dst, src, ok);
        } else {
            float v[8];
            int x;
#pragma unroll
            for (x = 0; x < 8; x++) {
                v[x] = 0.0f;
                if (x < vec && k1 < P->K1 && jj + x < P->GK)
                    v[x] = gconv_impl_dev_load(dt, P->w1, (int64_t)k1 * P->GK + jj + x);
            }
            gconv_impl_igemm_st_shared16(dst, gconv_impl_igemm_pack16(v, dt));
        }
    }
}

/* Issue chunk c0's loads: w1 tile, raw w0 and b0 (cp.async, one group), input taps of this
 * thread's slots into R[s * 9 + tap] (zero where the tap is outside or the row is invalid). */
static __device__ __forceinline__ void gconv_impl_fused_issue(
    const gconv_impl_fused_params *P, gconv_impl_tile t, gconv_dtype dt, unsigned char *sb,
    unsigned char *sw, unsigned char *sb0, int k10, int c0, int slots, int q, const int *sv,
    const unsigned *smask, const int *sbase, const int *tapoff, gconv_impl_igemm_u4 *R)
{
    const int es = dt == GCONV_F32 ? 4 : 2, vec = 16 / es, nt = t.wm * t.wn * 32;
    const int nch = P->GK - c0 < t.bk ? P->GK - c0 : t.bk; /* a multiple of vec */
    const int j0 = c0 + q * vec;
    const unsigned char *in = (const unsigned char *)P->in;
    int e, s, k;
    gconv_impl_fused_load_w1(P, t, dt, sb, k10, c0);
    for (e = (int)threadIdx.x; e < nch * P->taps * es / 16; e += nt)
        gconv_impl_fused_copy16(sw + 16 * e,
                                (const unsigned char *)P->w0 + (int64_t)c0 * P->taps * es + 16 * e,
                                1);
    if (P->b0)
        for (e = (int)threadIdx.x; e < nch * es / 16; e += nt)
            gconv_impl_fused_copy16(sb0 + 16 * e, (const unsigned char *)P->b0 + c0 * es + 16 * e,
                                    1);
    gconv_impl_igemm_cp_commit();
#pragma unroll
    for (s = 0; s < 2; s++)
        if (s < slots) {
            const int ok = sv[s] && j0 < P->GK;
#pragma unroll
            for (k = 0; k < 9; k++) {
                gconv_impl_igemm_u4 v;
                v.x = v.y = v.z = v.w = 0u;
                if (k < P->taps && ok && ((smask[s] >> k) & 1u))
                    v = gconv_impl_igemm_ld_global16(in + (int64_t)(sbase[s] + tapoff[k] + j0) * es);
                R[s * 9 + k] = v;
            }
        }
}

/* Stage 1 of a chunk from the registers: 8 (4 for fp32) channels per slot, + b0, MIDFN, into
 * the swizzled A tile. w0 is [channel][taps] raw in sw, b0 raw in sb0. */
#define GCONV_IMPL_FUSED_STAGE1_PIPE(P, t, dt, MIDFN, sa, sw, sb0, c0, slots, q, sv, sn, spos, R) \
    do {                                                                                         \
        const int es1_ = (dt) == GCONV_F32 ? 4 : 2, vec1_ = 16 / es1_;                           \
        const int cpr1_ = (t).bk * es1_ / 16, nt1_ = (t).wm * (t).wn * 32;                       \
        const int j01_ = (c0) + (q) * vec1_;                                                     \
        int s1_, k1_, e1_;                                                                       \
        _Pragma("unroll") for (s1_ = 0; s1_ < 2; s1_++) if (s1_ < (slots))                       \
        {                                                                                        \
            const int r1_ = (int)threadIdx.x / cpr1_ + s1_ * (nt1_ / cpr1_);                     \
            float a1_[8];                                                                        \
            _Pragma("unroll") for (e1_ = 0; e1_ < 8; e1_++) a1_[e1_] = 0.0f;                     \
            if ((sv)[s1_] && j01_ < (P).GK) {                                                    \
                _Pragma("unroll") for (k1_ = 0; k1_ < 9; k1_++) if (k1_ < (P).taps)              \
                {                                                                                \
                    _Pragma("unroll") for (e1_ = 0; e1_ < 8; e1_++) if (e1_ < vec1_)             \
                    {                                                                            \
                        const int wi1_ = ((q) * vec1_ + e1_) * (P).taps + k1_;                   \
                        const float w1_ = es1_ == 4 ? ((const float *)(sw))[wi1_]                \
                            : gconv_impl_igemm_u4_elem(gconv_impl_fused_bits16(                  \
                                  ((const unsigned short *)(sw))[wi1_]), 0, (dt));               \
                        a1_[e1_] += gconv_impl_igemm_u4_elem((R)[s1_ * 9 + k1_], e1_, (dt)) * w1_; \
                    }                                                                            \
                }                                                                                \
                _Pragma("unroll") for (e1_ = 0; e1_ < 8; e1_++) if (e1_ < vec1_)                 \
                {                                                                                \
                    float v1_ = a1_[e1_];                                                        \
                    if ((P).b0)                                                                  \
                        v1_ += es1_ == 4 ? ((const float *)(sb0))[(q) * vec1_ + e1_]             \
                            : gconv_impl_igemm_u4_elem(gconv_impl_fused_bits16(                  \
                                  ((const unsigned short *)(sb0))[(q) * vec1_ + e1_]), 0, (dt)); \
                    a1_[e1_] = MIDFN(&(P).mid, (dt), v1_, j01_ + e1_, (sn)[s1_], 0,              \
                                     (spos)[s1_ * 3], (spos)[s1_ * 3 + 1], (spos)[s1_ * 3 + 2]); \
                }                                                                                \
            }                                                                                    \
            gconv_impl_igemm_st_shared16((sa) + gconv_impl_igemm_chunk_off(r1_, (q), cpr1_),     \
                                         gconv_impl_igemm_pack16(a1_, (dt)));                      \
        }                                                                                        \
    } while (0)

/* The slot state of this thread for the tile at pixel m0: validity, image, output position,
 * input offset of the receptive field's origin, and the bit mask of taps inside the input. */
static __device__ __forceinline__ void gconv_impl_fused_slots(const gconv_impl_fused_params *P,
                                                              gconv_impl_tile t, gconv_dtype dt,
                                                              int64_t m0, int slots, int *pv,
                                                              int *pn, int *ppos, int *pbase,
                                                              unsigned *pmask)
{
    const int es = dt == GCONV_F32 ? 4 : 2, cpr = t.bk * es / 16, nt = t.wm * t.wn * 32;
    int s;
#pragma unroll
    for (s = 0; s < 2; s++) {
        const int r = (int)threadIdx.x / cpr + s * (nt / cpr);
        const int64_t m = m0 + r;
        int n = 0, d = 0, h = 0, w = 0, k, z = 0, y = 0, x = 0;
        unsigned mk = 0u;
        pv[s] = s < slots && m < P->M;
        if (pv[s])
            gconv_impl_fused_split(P, m, &n, &d, &h, &w);
        pn[s] = n, ppos[s * 3] = d, ppos[s * 3 + 1] = h, ppos[s * 3 + 2] = w;
        d = d * P->str[0] - P->pad[0];
        h = h * P->str[1] - P->pad[1];
        w = w * P->str[2] - P->pad[2];
        pbase[s] = (int)((int64_t)n * P->si.n + (int64_t)d * P->si.s[0] +
                         (int64_t)h * P->si.s[1] + (int64_t)w * P->si.s[2]);
        for (k = 0; k < P->taps; k++) {
            const int id = d + z * P->dil[0], ih = h + y * P->dil[1], iw = w + x * P->dil[2];
            if (id >= 0 && id < P->in_sp[0] && ih >= 0 && ih < P->in_sp[1] && iw >= 0 &&
                iw < P->in_sp[2])
                mk |= 1u << k;
            if (++x == P->flt[2]) {
                x = 0;
                if (++y == P->flt[1])
                    y = 0, ++z;
            }
        }
        pmask[s] = mk;
    }
}

/* The pipelined loop: this block runs tiles tile0 .. tile0 + P.tpb - 1 (K1 tile fastest), each
 * over all chunks, as one sequence of (tile, chunk) items; item i+1's loads are issued right
 * after item i's stage 1, so they fly during item i's GEMM, barriers and, at the end of a tile,
 * its epilogue (which stages C in its own shared memory, P.off_c, away from the buffers in
 * flight). */
#define GCONV_IMPL_FUSED_PIPE_LOOP(P, t, dt, MIDFN, EPIFN)                                       \
    do {                                                                                         \
        int *tapoff_ = (int *)(gconv_impl_sm_ + (P).off_tap);                                    \
        int pv_[2], pn_[2], ppos_[6], pbase_[2], xv_[2], xn_[2], xpos_[6], xbase_[2];            \
        unsigned pmask_[2], xmask_[2];                                                           \
        gconv_impl_igemm_u4 R_[18];                                                              \
        const int b0b_ = gconv_impl_fused_align128((t).bk * 4);                                  \
        const int64_t tiles_ = (int64_t)(P).mt * (P).nt;                                         \
        const int64_t tile0_ = (int64_t)blockIdx.x * (P).tpb;                                    \
        const int64_t tend_ = tile0_ + (P).tpb < tiles_ ? tile0_ + (P).tpb : tiles_;             \
        const int64_t items_ = (tend_ - tile0_) * nchunks_;                                      \
        int64_t it_;                                                                             \
        int s3_;                                                                                 \
        if (tid_ < (P).taps) {                                                                   \
            const int x_ = tid_ % (P).flt[2], y_ = (tid_ / (P).flt[2]) % (P).flt[1],             \
                      z_ = tid_ / ((P).flt[2] * (P).flt[1]);                                     \
            tapoff_[tid_] = (int)(z_ * (P).dil[0] * (P).si.s[0] + y_ * (P).dil[1] * (P).si.s[1] + \
                                  x_ * (P).dil[2] * (P).si.s[2]);                                \
        }                                                                                        \
        gconv_impl_fused_slots(&(P), (t), (dt), (tile0_ / (P).nt) * (t).bm, slots_, pv_, pn_,    \
                               ppos_, pbase_, pmask_);                                           \
        __syncthreads(); /* the tap table */                                                     \
        if (items_ > 0)                                                                          \
            gconv_impl_fused_issue(&(P), (t), (dt), gconv_impl_sm_ + (P).off_b,                  \
                                   gconv_impl_sm_ + (P).off_ws, gconv_impl_sm_ + (P).off_b0,     \
                                   (int)(tile0_ % (P).nt) * (t).bn, 0, slots_, q_, pv_, pmask_,  \
                                   pbase_, tapoff_, R_);                                         \
        for (it_ = 0; it_ < items_; it_++) {                                                     \
            const int64_t ti_ = tile0_ + it_ / nchunks_;                                         \
            const int c_ = (int)(it_ % nchunks_);                                                \
            const int64_t tm0_ = (ti_ / (P).nt) * (t).bm;                                        \
            const int tk10_ = (int)(ti_ % (P).nt) * (t).bn;                                      \
            const int last_ = c_ + 1 == nchunks_, more_ = it_ + 1 < items_;                      \
            /* the next item: chunk c + 1 of this tile, or chunk 0 of the next tile */           \
            const int nc0_ = last_ ? 0 : (c_ + 1) * (t).bk;                                      \
            const int nk10_ = last_ ? (int)((ti_ + 1) % (P).nt) * (t).bn : tk10_;                \
            const int b_ = (int)(it_ % GCONV_IMPL_FUSED_NBUF);                                   \
            const int nb_ = (int)((it_ + 1) % GCONV_IMPL_FUSED_NBUF);                            \
            unsigned char *sa_ = gconv_impl_sm_ + b_ * (P).abytes;                               \
            unsigned char *sbt_ = gconv_impl_sm_ + (P).off_b + b_ * (P).bbytes;                  \
            gconv_impl_igemm_cp_wait(0);                                                         \
            __syncthreads(); /* item i's w0, b0, w1 landed; item i-1's GEMM is done */          \
            GCONV_IMPL_FUSED_STAGE1_PIPE(P, t, dt, MIDFN, sa_,                                   \
                                         gconv_impl_sm_ + (P).off_ws + b_ * (P).wsbytes,         \
                                         gconv_impl_sm_ + (P).off_b0 + b_ * b0b_, c_ * (t).bk,  \
                                         slots_, q_, pv_, pn_, ppos_, R_);                       \
            if (more_ && last_)                                                                  \
                gconv_impl_fused_slots(&(P), (t), (dt), ((ti_ + 1) / (P).nt) * (t).bm, slots_,   \
                                       xv_, xn_, xpos_, xbase_, xmask_);                         \
            if (GCONV_IMPL_FUSED_NBUF == 2 && more_)                                             \
                gconv_impl_fused_issue(&(P), (t), (dt), gconv_impl_sm_ + (P).off_b + nb_ * (P).bbytes, \
                                       gconv_impl_sm_ + (P).off_ws + nb_ * (P).wsbytes,          \
                                       gconv_impl_sm_ + (P).off_b0 + nb_ * b0b_, nk10_, nc0_,    \
                                       slots_, q_, last_ ? xv_ : pv_, last_ ? xmask_ : pmask_,   \
                                       last_ ? xbase_ : pbase_, tapoff_, R_);                    \
            __syncthreads(); /* item i's mid tile is complete */                                 \
            gconv_impl_igemm_stage_math(acc_, sa_, sbt_, (t), es_, (dt), math_, c_ == 0);        \
            if (last_) {                                                                         \
                GCONV_IMPL_FUSED_EPILOGUE(P, t, dt, EPIFN, acc_, gconv_impl_sm_ + (P).off_c,     \
                                          tm0_, tk10_);                                          \
                gconv_impl_igemm_zero(acc_, (t), math_);                                         \
            }                                                                                    \
            if (GCONV_IMPL_FUSED_NBUF == 1 && more_) {                                           \
                __syncthreads(); /* single buffers: item i's GEMM is done everywhere */         \
                gconv_impl_fused_issue(&(P), (t), (dt), gconv_impl_sm_ + (P).off_b + nb_ * (P).bbytes, \
                                       gconv_impl_sm_ + (P).off_ws + nb_ * (P).wsbytes,          \
                                       gconv_impl_sm_ + (P).off_b0 + nb_ * b0b_, nk10_, nc0_,    \
                                       slots_, q_, last_ ? xv_ : pv_, last_ ? xmask_ : pmask_,   \
                                       last_ ? xbase_ : pbase_, tapoff_, R_);                    \
            }                                                                                    \
            if (more_ && last_)                                                                  \
                _Pragma("unroll") for (s3_ = 0; s3_ < 2; s3_++)                                  \
                {                                                                                \
                    pv_[s3_] = xv_[s3_], pn_[s3_] = xn_[s3_], pbase_[s3_] = xbase_[s3_];         \
                    pmask_[s3_] = xmask_[s3_];                                                   \
                    ppos_[s3_ * 3] = xpos_[s3_ * 3], ppos_[s3_ * 3 + 1] = xpos_[s3_ * 3 + 1];    \
                    ppos_[s3_ * 3 + 2] = xpos_[s3_ * 3 + 2];                                     \
                }                                                                                \
        }                                                                                        \
    } while (0)

/* A 16-bit element's bits as the first element of a 16-byte chunk (for u4_elem). */
static __device__ __forceinline__ gconv_impl_igemm_u4 gconv_impl_fused_bits16(unsigned short b)
{
    gconv_impl_igemm_u4 v;
    v.x = b, v.y = v.z = v.w = 0u;
    return v;
}

/* Epilogue of a tile: stage the accumulators in bands of rows at csb, + b1, EPIFN, store.
 * Needs es_, vec_, nt_, tid_, math_ of the enclosing body. */
#define GCONV_IMPL_FUSED_EPILOGUE(P, t, dt, EPIFN, accv, csb, m0v, k10v)                      \
    do {                                                                                         \
        {                                                                                        \
            float *cs_ = (float *)(csb);                                                         \
            const int ld_ = (t).bn + GCONV_IMPL_CPAD;                                            \
            int row0_;                                                                           \
            for (row0_ = 0; row0_ < (t).bm; row0_ += (P).band) {                                 \
                int e_;                                                                          \
                __syncthreads(); /* the pipeline (or the last band) is no longer read */        \
                gconv_impl_igemm_acc_to_smem((accv), cs_, (t), math_, row0_, (P).band);            \
                __syncthreads();                                                                 \
                if ((P).out_vec) {                                                               \
                    const int per_ = (t).bn / vec_;                                              \
                    for (e_ = tid_; e_ < (P).band * per_; e_ += nt_) {                           \
                        const int r_ = e_ / per_, cc_ = (e_ % per_) * vec_;                      \
                        const int64_t m_ = (m0v) + row0_ + r_;                                     \
                        const int k1_ = (k10v) + cc_;                                              \
                        if (m_ < (P).M && k1_ < (P).K1) {                                        \
                            int n_, d_, h_, w_, x_;                                              \
                            float v_[8];                                                         \
                            gconv_impl_fused_split(&(P), m_, &n_, &d_, &h_, &w_);                \
                            _Pragma("unroll") for (x_ = 0; x_ < 8; x_++) if (x_ < vec_)          \
                            {                                                                    \
                                float y_ = cs_[r_ * ld_ + cc_ + x_];                             \
                                if ((P).b1)                                                      \
                                    y_ += gconv_impl_dev_load((dt), (P).b1, k1_ + x_);           \
                                v_[x_] = EPIFN(&(P).epi, (dt), y_, 0, n_, k1_ + x_, d_, h_, w_); \
                            }                                                                    \
                            {                                                                    \
                                const gconv_impl_igemm_u4 pk_ = gconv_impl_igemm_pack16(v_, (dt)); \
                                uint4 o_;                                                        \
                                o_.x = pk_.x, o_.y = pk_.y, o_.z = pk_.z, o_.w = pk_.w;          \
                                *(uint4 *)((unsigned char *)(P).out +                            \
                                           gconv_act_offset(&(P).so, 0, n_, k1_, d_, h_, w_) *   \
                                               es_) = o_;                                        \
                            }                                                                    \
                        }                                                                        \
                    }                                                                            \
                } else {                                                                         \
                    for (e_ = tid_; e_ < (P).band * (t).bn; e_ += nt_) {                         \
                        const int r_ = e_ / (t).bn, cc_ = e_ % (t).bn;                           \
                        const int64_t m_ = (m0v) + row0_ + r_;                                     \
                        const int k1_ = (k10v) + cc_;                                              \
                        if (m_ < (P).M && k1_ < (P).K1) {                                        \
                            int n_, d_, h_, w_;                                                  \
                            float y_ = cs_[r_ * ld_ + cc_];                                      \
                            gconv_impl_fused_split(&(P), m_, &n_, &d_, &h_, &w_);                \
                            if ((P).b1)                                                          \
                                y_ += gconv_impl_dev_load((dt), (P).b1, k1_);                    \
                            gconv_impl_igemm_st_elem(                                            \
                                (P).out, gconv_act_offset(&(P).so, 0, n_, k1_, d_, h_, w_),      \
                                EPIFN(&(P).epi, (dt), y_, 0, n_, k1_, d_, h_, w_), (dt));        \
                        }                                                                        \
                    }                                                                            \
                }                                                                                \
            }                                                                                    \
        }                                                                                        \
    } while (0)

/* The fused kernel body for tile t, type dt, mid activation MIDFN, final epilogue EPIFN; PIPE
 * (a literal) selects the pipelined depthwise path (the launcher sets it where P.a_pipe). */
#define GCONV_IMPL_FUSED_BODY(P, t, dt, MIDFN, EPIFN, PIPE)                                      \
    do {                                                                                         \
        GCONV_IMPL_DYN_SMEM(gconv_impl_sm_);                                                     \
        const int es_ = (dt) == GCONV_F32 ? 4 : 2, vec_ = 16 / es_;                              \
        const int nt_ = (t).wm * (t).wn * 32, tid_ = (int)threadIdx.x;                           \
        const int cpr_ = (t).bk * es_ / 16; /* 16-byte chunks per row */                       \
        const int math_ = gconv_impl_fused_math(dt);                                             \
        const int64_t bid_ = (int64_t)blockIdx.x;                                                \
        const int tn_ = (int)(bid_ % (P).nt);                                                    \
        const int64_t m0_ = (bid_ / (P).nt) * (t).bm;                                            \
        const int k10_ = tn_ * (t).bn;                                                           \
        const int nchunks_ = ((P).GK + (t).bk - 1) / (t).bk;                                     \
        float acc_[GCONV_IMPL_MAX_ACC];                                                          \
        /* vector stage 1: this thread's slots (fixed rows, fixed chunk column q) */            \
        const int slots_ = (t).bm * cpr_ / nt_;                                                  \
        const int q_ = tid_ % cpr_;                                                              \
        int sv_[8], sn_[8], sd_[8], sh_[8], sw_[8];                                              \
        int64_t sb_[8];                                                                          \
        int ci_, s_;                                                                             \
        gconv_impl_igemm_zero(acc_, (t), math_);                                                 \
        if (PIPE)                                                                                \
            GCONV_IMPL_FUSED_PIPE_LOOP(P, t, dt, MIDFN, EPIFN);                                  \
        if (!(PIPE) && (P).a_vec) {                                                              \
            _Pragma("unroll") for (s_ = 0; s_ < 8; s_++) if (s_ < slots_)                        \
            {                                                                                    \
                const int r_ = tid_ / cpr_ + s_ * (nt_ / cpr_);                                  \
                const int64_t m_ = m0_ + r_;                                                     \
                int n_ = 0, d_ = 0, h_ = 0, w_ = 0;                                              \
                sv_[s_] = m_ < (P).M;                                                            \
                if (sv_[s_])                                                                     \
                    gconv_impl_fused_split(&(P), m_, &n_, &d_, &h_, &w_);                        \
                sn_[s_] = n_;                                                                    \
                sd_[s_] = d_ * (P).str[0] - (P).pad[0];                                          \
                sh_[s_] = h_ * (P).str[1] - (P).pad[1];                                          \
                sw_[s_] = w_ * (P).str[2] - (P).pad[2];                                          \
                sb_[s_] = (int64_t)n_ * (P).si.n;                                                \
            }                                                                                    \
        }                                                                                        \
        for (ci_ = 0; ci_ < ((PIPE) ? 0 : nchunks_); ci_++) {                                    \
            const int buf_ = ci_ % GCONV_IMPL_FUSED_NBUF;                                        \
            const int c0_ = ci_ * (t).bk;                                                        \
            unsigned char *sa_ = gconv_impl_sm_ + buf_ * (P).abytes;                             \
            unsigned char *sbt_ = gconv_impl_sm_ + (P).off_b + buf_ * (P).bbytes;                \
            float *ws_ = (float *)(gconv_impl_sm_ + (P).off_ws + buf_ * (P).wsbytes);            \
            float *b0s_ = (float *)(gconv_impl_sm_ + (P).off_b0 +                                \
                                    buf_ * gconv_impl_fused_align128((t).bk * 4));               \
            int e_;                                                                              \
            if (GCONV_IMPL_FUSED_NBUF == 1 && ci_ > 0)                                           \
                __syncthreads(); /* single buffers: the last chunk's math is done */            \
            /* w1 chunk: rows k10 + rr, intermediate channels c0 .. c0 + BK - 1 */              \
            for (e_ = tid_; e_ < (t).bn * cpr_; e_ += nt_) {                                     \
                const int rr_ = e_ / cpr_, qq_ = e_ % cpr_;                                      \
                const int k1_ = k10_ + rr_, jj_ = c0_ + qq_ * vec_;                              \
                unsigned char *dst_ = sbt_ + gconv_impl_igemm_chunk_off(rr_, qq_, cpr_);         \
                if ((P).b_vec) {                                                                 \
                    const int ok_ = k1_ < (P).K1 && jj_ < (P).GK;                                \
                    const unsigned char *src_ = (const unsigned char *)(P).w1 +                  \
                        (ok_ ? ((int64_t)k1_ * (P).GK + jj_) * es_ : 0);                         \
                    gconv_impl_fused_copy16(dst_, src_, ok_);                                    \
                } else {                                                                         \
                    float v_[8];                                                                 \
                    int x_;                                                                      \
                    _Pragma("unroll") for (x_ = 0; x_ < 8; x_++) v_[x_] = 0.0f;                  \
                    _Pragma("unroll") for (x_ = 0; x_ < 8; x_++) if (x_ < vec_ &&                \
                                                                    k1_ < (P).K1 &&              \
                                                                    jj_ + x_ < (P).GK)           \
                        v_[x_] = gconv_impl_dev_load((dt), (P).w1,                               \
                                                     (int64_t)k1_ * (P).GK + jj_ + x_);          \
                    gconv_impl_igemm_st_shared16(dst_, gconv_impl_igemm_pack16(v_, (dt)));         \
                }                                                                                \
            }                                                                                    \
            gconv_impl_igemm_cp_commit();                                                        \
            if ((P).a_vec) {                                                                     \
                gconv_impl_fused_stage_w0(&(P), ws_, b0s_, c0_, (t).bk, nt_, (dt));              \
                __syncthreads(); /* w0 taps visible */                                           \
                {                                                                                \
                    const int j0_ = c0_ + q_ * vec_;                                             \
                    const unsigned char *inb_ = (const unsigned char *)(P).in;                   \
                    _Pragma("unroll") for (s_ = 0; s_ < 8; s_++) if (s_ < slots_)                \
                    {                                                                            \
                        const int r_ = tid_ / cpr_ + s_ * (nt_ / cpr_);                          \
                        float a_[8];                                                             \
                        int z_, y_, x_, e2_;                                                     \
                        _Pragma("unroll") for (e2_ = 0; e2_ < 8; e2_++) a_[e2_] = 0.0f;          \
                        if (sv_[s_] && j0_ < (P).GK) {                                           \
                            for (z_ = 0; z_ < (P).flt[0]; z_++) {                                \
                                const int id_ = sd_[s_] + z_ * (P).dil[0];                       \
                                if (id_ < 0 || id_ >= (P).in_sp[0])                              \
                                    continue;                                                    \
                                for (y_ = 0; y_ < (P).flt[1]; y_++) {                            \
                                    const int ih_ = sh_[s_] + y_ * (P).dil[1];                   \
                                    const int64_t rowo_ = sb_[s_] + (int64_t)id_ * (P).si.s[0] + \
                                                          (int64_t)ih_ * (P).si.s[1] + j0_;      \
                                    const float *wt_ =                                           \
                                        ws_ + ((z_ * (P).flt[1] + y_) * (P).flt[2]) * (t).bk +   \
                                        q_ * vec_;                                               \
                                    if (ih_ < 0 || ih_ >= (P).in_sp[1])                          \
                                        continue;                                                \
                                    _Pragma("unroll 4") for (x_ = 0; x_ < (P).flt[2]; x_++)      \
                                    {                                                            \
                                        const int iw_ = sw_[s_] + x_ * (P).dil[2];               \
                                        if (iw_ >= 0 && iw_ < (P).in_sp[2]) {                    \
                                            const gconv_impl_igemm_u4 v_ =                       \
                                                gconv_impl_igemm_ld_global16(                    \
                                                    inb_ + (rowo_ + (int64_t)iw_ * (P).si.s[2]) * \
                                                               es_);                             \
                                            _Pragma("unroll") for (e2_ = 0; e2_ < 8; e2_++)      \
                                                if (e2_ < vec_) a_[e2_] +=                       \
                                                    gconv_impl_igemm_u4_elem(v_, e2_, (dt)) *    \
                                                    wt_[x_ * (t).bk + e2_];                      \
                                        }                                                        \
                                    }                                                            \
                                }                                                                \
                            }                                                                    \
                            _Pragma("unroll") for (e2_ = 0; e2_ < 8; e2_++) if (e2_ < vec_)      \
                                a_[e2_] = MIDFN(&(P).mid, (dt), a_[e2_] + b0s_[q_ * vec_ + e2_], \
                                                j0_ + e2_, sn_[s_], 0,                           \
                                                (sd_[s_] + (P).pad[0]) / (P).str[0],             \
                                                (sh_[s_] + (P).pad[1]) / (P).str[1],             \
                                                (sw_[s_] + (P).pad[2]) / (P).str[2]);            \
                        }                                                                        \
                        gconv_impl_igemm_st_shared16(sa_ +                                       \
                                                         gconv_impl_igemm_chunk_off(r_, q_, cpr_), \
                                                     gconv_impl_igemm_pack16(a_, (dt)));           \
                    }                                                                            \
                }                                                                                \
            } else {                                                                             \
                /* element-wise stage 1: any C, K and layout */                                  \
                for (e_ = tid_; e_ < (t).bm * (t).bk; e_ += nt_) {                               \
                    const int r_ = e_ / (t).bk, col_ = e_ % (t).bk;                              \
                    const int64_t m_ = m0_ + r_;                                                 \
                    const int j_ = c0_ + col_;                                                   \
                    float v_ = 0.0f;                                                             \
                    unsigned char *dst_ = sa_ + gconv_impl_igemm_chunk_off(r_, col_ / vec_, cpr_) + \
                                          (col_ % vec_) * es_;                                   \
                    if (m_ < (P).M && j_ < (P).GK) {                                             \
                        const int g_ = j_ / (P).K, k_ = j_ % (P).K;                              \
                        int n_, d_, h_, w_, c_, z_, y_, x_;                                      \
                        int64_t ib_, wb_;                                                        \
                        gconv_impl_fused_split(&(P), m_, &n_, &d_, &h_, &w_);                    \
                        ib_ = (int64_t)g_ * (P).si.g + (int64_t)n_ * (P).si.n;                   \
                        wb_ = (int64_t)g_ * (P).sw.g + (int64_t)k_ * (P).sw.k;                   \
                        for (z_ = 0; z_ < (P).flt[0]; z_++) {                                    \
                            const int id_ = d_ * (P).str[0] - (P).pad[0] + z_ * (P).dil[0];      \
                            if (id_ < 0 || id_ >= (P).in_sp[0])                                  \
                                continue;                                                        \
                            for (y_ = 0; y_ < (P).flt[1]; y_++) {                                \
                                const int ih_ = h_ * (P).str[1] - (P).pad[1] + y_ * (P).dil[1];  \
                                if (ih_ < 0 || ih_ >= (P).in_sp[1])                              \
                                    continue;                                                    \
                                for (x_ = 0; x_ < (P).flt[2]; x_++) {                            \
                                    const int iw_ = w_ * (P).str[2] - (P).pad[2] + x_ * (P).dil[2]; \
                                    int64_t io_, wo_;                                            \
                                    if (iw_ < 0 || iw_ >= (P).in_sp[2])                          \
                                        continue;                                                \
                                    io_ = ib_ + (int64_t)id_ * (P).si.s[0] +                     \
                                          (int64_t)ih_ * (P).si.s[1] + (int64_t)iw_ * (P).si.s[2]; \
                                    wo_ = wb_ + (int64_t)z_ * (P).sw.s[0] +                      \
                                          (int64_t)y_ * (P).sw.s[1] + (int64_t)x_ * (P).sw.s[2]; \
                                    for (c_ = 0; c_ < (P).C; c_++)                               \
                                        v_ += gconv_impl_dev_load((dt), (P).in,                  \
                                                                  io_ + (int64_t)c_ * (P).si.c) * \
                                              gconv_impl_dev_load((dt), (P).w0,                  \
                                                                  wo_ + (int64_t)c_ * (P).sw.c); \
                                }                                                                \
                            }                                                                    \
                        }                                                                        \
                        if ((P).b0)                                                              \
                            v_ += gconv_impl_dev_load((dt), (P).b0, j_);                         \
                        v_ = MIDFN(&(P).mid, (dt), v_, g_, n_, k_, d_, h_, w_);                  \
                    }                                                                            \
                    if (es_ == 4)                                                                \
                        *(float *)dst_ = v_;                                                     \
                    else                                                                         \
                        *(unsigned short *)dst_ =                                                \
                            (unsigned short)gconv_impl_igemm_to_bits(v_, (dt));                  \
                }                                                                                \
            }                                                                                    \
            gconv_impl_igemm_cp_wait(0);                                                         \
            __syncthreads(); /* the chunk's mid tile and w1 tile are complete */                 \
            gconv_impl_igemm_stage_math(acc_, sa_, sbt_, (t), es_, (dt), math_, ci_ == 0);       \
        }                                                                                        \
        if (!(PIPE))                                                                             \
            GCONV_IMPL_FUSED_EPILOGUE(P, t, dt, EPIFN, acc_, gconv_impl_sm_, m0_, k10_);            \
    } while (0)

/* The built-in activation between the convolutions: act0 of the value (alpha 1, no D). */
static __device__ __forceinline__ float gconv_impl_fused_mid_apply(const gconv_epilogue *e,
                                                                   gconv_dtype t, float acc, int g,
                                                                   int n, int k, int d, int h,
                                                                   int w)
{
    (void)t, (void)g, (void)n, (void)k, (void)d, (void)h, (void)w;
    return gconv_act_apply(e->act, acc);
}

#define GCONV_IMPL_FUSED_UNUSED __attribute__((unused))

/* The two kernels of tile TILE: kname (vector or element-wise stage 1) and kname_p (pipelined
 * depthwise stage 1). */
#define GCONV_IMPL_FUSED_KERNEL(kname, T, TILE, MIDFN, EPIFN)                                    \
    GCONV_IMPL_STATIC_ASSERT(GCONV_IMPL_TILE_OK(TILE), "tile configuration out of range");     \
    static __global__ void __launch_bounds__(GCONV_IMPL_TILE_THREADS(TILE),                     \
                                             GCONV_IMPL_FUSED_MINBLOCKS)                         \
        kname(gconv_impl_fused_params P)                                                         \
    {                                                                                            \
        const gconv_impl_tile t = {GCONV_IMPL_TILE_ARGS(TILE)};                                  \
        GCONV_IMPL_FUSED_BODY(P, t, T, MIDFN, EPIFN, 0);                                         \
    }                                                                                            \
    static __global__ void __launch_bounds__(GCONV_IMPL_TILE_THREADS(TILE),                     \
                                             GCONV_IMPL_FUSED_MINBLOCKS)                         \
        kname##_p(gconv_impl_fused_params P)                                                     \
    {                                                                                            \
        const gconv_impl_tile t = {GCONV_IMPL_TILE_ARGS(TILE)};                                  \
        GCONV_IMPL_FUSED_BODY(P, t, T, MIDFN, EPIFN, 1);                                         \
    }

/* Plan and launch kernel k of tile TILE (returns from the enclosing function). */
#define GCONV_IMPL_FUSED_LAUNCH(k, T, TILE, P, stream, why, len)                                 \
    do {                                                                                         \
        const gconv_impl_tile t_ = {GCONV_IMPL_TILE_ARGS(TILE)};                                 \
        const int es_ = (T) == GCONV_F32 ? 4 : 2;                                                \
        int smem_;                                                                               \
        int64_t mt_, blocks_;                                                                    \
        {                                                                                        \
            /* the vector stage 1 needs whole 16-byte chunks per thread, at most 8 of them */   \
            const int cpr_ = t_.bk * es_ / 16, nt_ = gconv_impl_tile_threads(t_);                \
            if (nt_ % cpr_ || (t_.bm * cpr_) % nt_ || t_.bm * cpr_ / nt_ > 8)                    \
                (P).a_vec = 0;                                                                   \
            if (!(P).a_vec || t_.bm * cpr_ / nt_ > 2)                                            \
                (P).a_pipe = 0;                                                                  \
        }                                                                                        \
        smem_ = gconv_impl_fused_plan_smem(&(P), t_, es_);                                       \
        if (smem_ > GCONV_IMPL_SMEM_MAX && (P).a_vec) {                                          \
            (P).a_vec = (P).a_pipe = 0; /* the taps do not fit: element-wise stage 1 */         \
            smem_ = gconv_impl_fused_plan_smem(&(P), t_, es_);                                   \
        }                                                                                        \
        if (smem_ > GCONV_IMPL_SMEM_MAX)                                                         \
            return gconv_impl_fail(GCONV_ERR_UNSUPPORTED, why, len,                              \
                                   "tile %dx%dx%d needs %d bytes of shared memory, over %d",    \
                                   t_.bm, t_.bn, t_.bk, smem_, GCONV_IMPL_SMEM_MAX);             \
        mt_ = ((P).M + t_.bm - 1) / t_.bm;                                                       \
        (P).nt = ((P).K1 + t_.bn - 1) / t_.bn;                                                   \
        blocks_ = mt_ * (P).nt;                                                                  \
        if (blocks_ > 0x7fffffffLL)                                                              \
            return gconv_impl_fail(GCONV_ERR_UNSUPPORTED, why, len,                              \
                                   "%lld blocks of %dx%d are too many for one launch",          \
                                   (long long)blocks_, t_.bm, t_.bn);                            \
        (P).mt = (int)mt_;                                                                       \
        (P).tpb = 1;                                                                             \
        if ((P).a_pipe) {                                                                        \
            /* as many blocks as fit on the device at once, each a run of tiles */              \
            static int occ_smem_ = -1, occ_n_ = 0; /* cached per shared-memory size */         \
            int per_sm_;                                                                         \
            if (occ_smem_ != smem_) {                                                            \
                occ_n_ = gconv_impl_fused_occupancy((const void *)k##_p,                         \
                                                    gconv_impl_tile_threads(t_), smem_);         \
                occ_smem_ = smem_;                                                               \
            }                                                                                    \
            per_sm_ = occ_n_;                                                                    \
            int64_t grid_ = (int64_t)gconv_device_sm_count() * (per_sm_ > 0 ? per_sm_ : 1);      \
            if (grid_ < 1)                                                                       \
                grid_ = 1;                                                                       \
            if (grid_ > blocks_)                                                                 \
                grid_ = blocks_;                                                                 \
            (P).tpb = (int)((blocks_ + grid_ - 1) / grid_);                                      \
            blocks_ = (blocks_ + (P).tpb - 1) / (P).tpb;                                         \
            GCONV_IMPL_FUSED_GO(k##_p, t_, P, smem_, blocks_, stream, why, len);                 \
        }                                                                                        \
        GCONV_IMPL_FUSED_GO(k, t_, P, smem_, blocks_, stream, why, len);                         \
    } while (0)

/* Blocks of kernel k (threads, smem bytes) that fit on one SM; 0 if it cannot be asked. The
 * shared-memory limit is raised first (as the launch will). */
static inline int gconv_impl_fused_occupancy(const void *k, int threads, int smem)
{
    unsigned done = 0;
    if (gconv_impl_fwd_smem_attr(k, GCONV_IMPL_SMEM_MAX, &done) != GCONV_OK)
        return 0;
    return gconv_impl_occupancy(k, threads, smem);
}

/* Launch kernel k on blocks_ x threads_ with smem_ bytes of dynamic shared memory and the
 * parameter block P (returns from the enclosing function). */
#define GCONV_IMPL_FUSED_GO_N(k, blocks_, threads_, smem_, stream, P, why, len)                  \
    do {                                                                                         \
        static unsigned gconv_impl_done_ = 0;                                                    \
        if (gconv_impl_fwd_smem_attr((const void *)k, GCONV_IMPL_SMEM_MAX, &gconv_impl_done_) != \
            GCONV_OK)                                                                            \
            return gconv_impl_fail(GCONV_ERR_RUNTIME, why, len,                                  \
                                   "cannot raise the shared-memory limit to %d bytes",          \
                                   GCONV_IMPL_SMEM_MAX);                                         \
        GCONV_IMPL_LAUNCH_RETURN(k, blocks_, threads_, smem_, stream, why, len, P);              \
    } while (0)

/* Launch kernel k of tile t_ (returns from the enclosing function). */
#define GCONV_IMPL_FUSED_GO(k, t_, P, smem_, blocks_, stream, why, len)                          \
    GCONV_IMPL_FUSED_GO_N(k, blocks_, gconv_impl_tile_threads(t_), smem_, stream, P, why, len)

/* Launch band kernel k with plan F: a persistent grid of as many blocks as fit on the device
 * at once, at most one per item (returns from the enclosing function). */
#define GCONV_IMPL_FB_GO(k, F, stream, why, len)                                                 \
    do {                                                                                         \
        static int occ_smem_ = -1, occ_n_ = 0; /* cached per shared-memory size */             \
        int grid_;                                                                               \
        if (occ_smem_ != (F).smem) {                                                             \
            occ_n_ = gconv_impl_fused_occupancy((const void *)k, GCONV_IMPL_FB_THREADS,         \
                                                (F).smem);                                       \
            occ_smem_ = (F).smem;                                                                \
        }                                                                                        \
        grid_ = gconv_device_sm_count() * (occ_n_ > 0 ? occ_n_ : 1);                             \
        if (grid_ > (F).items)                                                                   \
            grid_ = (F).items;                                                                   \
        if (grid_ < 1)                                                                           \
            grid_ = 1;                                                                           \
        GCONV_IMPL_FUSED_GO_N(k, grid_, GCONV_IMPL_FB_THREADS, (F).smem, stream, F, why, len);   \
    } while (0)

/* The launcher's common head: validate, fill P. */
#define GCONV_IMPL_FUSED_HEAD(T, ACT, WEI)                                                       \
    char *why_ = a ? a->why : NULL;                                                              \
    size_t len_ = a ? a->why_len : 0;                                                            \
    gconv_impl_fused_params P;                                                                   \
    gconv_status s_;                                                                             \
    if (!a)                                                                                      \
        return gconv_impl_fail(GCONV_ERR_NULL, NULL, 0, "the argument pointer is null");         \
    s_ = gconv_impl_fused_check(p, K1, a, T, ACT, WEI, why_, len_);                              \
    if (s_ != GCONV_OK)                                                                          \
        return s_;                                                                               \
    if (why_ && len_)                                                                            \
        why_[0] = '\0';                                                                          \
    gconv_impl_fused_fill(p, K1, a, T, &P);

/* Where a launch starts its search for a kernel (internal: tests pin kernels with it): the row
 * kernel (preceded by the tile kernel on small outputs, gconv_impl_ft_first), then the tile
 * kernel (by default only for K1 > GCONV_IMPL_FT_MINK1, where it beats the band kernel), then
 * the band kernel, then the general kernels, each taken if the problem is in its scope. */
enum {
    GCONV_IMPL_FUSED_FROM_ROWS = 0,
    GCONV_IMPL_FUSED_FROM_TILE = 1,
    GCONV_IMPL_FUSED_FROM_BAND = 2,
    GCONV_IMPL_FUSED_FROM_GENERAL = 3
};

/* Launch row kernel name##_fr1 / _fr2 / _fr3 (stride 1 / stride 2 / stride 1 narrow, two
 * columns a thread) with plan F: one block per item (returns from the enclosing function). */
#define GCONV_IMPL_FR_GO(name, F, stream, why, len)                                              \
    do {                                                                                         \
        if ((F).SH == 1 && (F).TW == 4)                                                          \
            GCONV_IMPL_FUSED_GO_N(name##_fr1, (F).items, (F).BT, (F).smem, stream, F, why, len); \
        if ((F).SH == 1) /* the narrow form */                                                   \
            GCONV_IMPL_FUSED_GO_N(name##_fr3, (F).items, (F).BT, (F).smem, stream, F, why, len); \
        GCONV_IMPL_FUSED_GO_N(name##_fr2, (F).items, (F).BT, (F).smem, stream, F, why, len);     \
    } while (0)

/* Plan tile kernel name##_ft and launch it: one block per item (returns from the enclosing
 * function if the problem is in the kernel's scope). */
#define GCONV_IMPL_FT_GO(name, p, K1, a, T, stream, why, len)                                    \
    do {                                                                                         \
        gconv_impl_ft_params F_;                                                                 \
        if (gconv_impl_ft_plan(p, K1, a, T, gconv_device_sm_count(), &F_)) {                     \
            gconv_impl_ft_w1_setup(&F_, T);                                                      \
            GCONV_IMPL_FUSED_GO_N(name##_ft, F_.items, GCONV_IMPL_FT_THREADS, F_.smem, stream,   \
                                  F_, why, len);                                                 \
        }                                                                                        \
    } while (0)

#define GCONV_IMPL_FUSED_DEFINE(name, T, ACT, WEI, MIDFN, EPIFN, MIDB, EPIB)                     \
    GCONV_IMPL_FUSED_KERNEL(name##_k0, T, GCONV_FUSED_TILE_64x16, MIDFN, EPIFN)                 \
    GCONV_IMPL_FUSED_KERNEL(name##_k1, T, GCONV_FUSED_TILE_64x32, MIDFN, EPIFN)                 \
    GCONV_IMPL_FUSED_KERNEL(name##_k2, T, GCONV_FUSED_TILE_64x64, MIDFN, EPIFN)                 \
    GCONV_IMPL_FUSED_KERNEL(name##_k3, T, GCONV_FUSED_TILE_64x128, MIDFN, EPIFN)                 \
    GCONV_IMPL_FUSED_KERNEL(name##_k4, T, GCONV_FUSED_TILE_64x256, MIDFN, EPIFN)                 \
    GCONV_IMPL_FB_KERNEL(name##_fb, T, MIDFN, EPIFN, MIDB, EPIB)                                 \
    GCONV_IMPL_FR_KERNEL(name##_fr1, T, MIDFN, EPIFN, MIDB, EPIB, 1, 4, GCONV_IMPL_FR_THREADS,   \
                         1)                                                                      \
    GCONV_IMPL_FR_KERNEL(name##_fr2, T, MIDFN, EPIFN, MIDB, EPIB, 2, 2, GCONV_IMPL_FR_THREADS,   \
                         1)                                                                      \
    GCONV_IMPL_FR_KERNEL(name##_fr3, T, MIDFN, EPIFN, MIDB, EPIB, 1, 2, GCONV_IMPL_FR_THREADS_N, \
                         2)                                                                      \
    GCONV_IMPL_FT_KERNEL(name##_ft, T, MIDFN, EPIFN, MIDB, EPIB)                                 \
    GCONV_IMPL_FUSED_UNUSED static inline int name##_supports(const gconv_problem *p, int K1,    \
                                                              char *why, size_t len)             \
    {                                                                                            \
        return gconv_impl_fused_check(p, K1, NULL, T, ACT, WEI, why, len) == GCONV_OK;           \
    }                                                                                            \
    GCONV_IMPL_FUSED_UNUSED static inline gconv_status name##_from(                              \
        const gconv_problem *p, int K1, const gconv_fused_fwd_args *a, hipStream_t stream,       \
        int from)                                                                                \
    {                                                                                            \
        GCONV_IMPL_FUSED_HEAD(T, ACT, WEI)                                                       \
        if (from <= GCONV_IMPL_FUSED_FROM_ROWS && gconv_impl_ft_first(p))                        \
            GCONV_IMPL_FT_GO(name, p, K1, a, T, stream, why_, len_);                             \
        if (from <= GCONV_IMPL_FUSED_FROM_ROWS) {                                                \
            gconv_impl_fr_params F_;                                                             \
            if (gconv_impl_fr_plan(p, K1, a, T, gconv_device_sm_count(), &F_))                   \
                GCONV_IMPL_FR_GO(name, F_, stream, why_, len_);                                  \
        }                                                                                        \
        if (from == GCONV_IMPL_FUSED_FROM_TILE ||                                                \
            (from < GCONV_IMPL_FUSED_FROM_TILE && K1 > GCONV_IMPL_FT_MINK1))                     \
            GCONV_IMPL_FT_GO(name, p, K1, a, T, stream, why_, len_);                             \
        if (from <= GCONV_IMPL_FUSED_FROM_BAND) {                                                \
            gconv_impl_fb_params F_;                                                             \
            if (gconv_impl_fb_plan(p, K1, a, T, gconv_device_sm_count(), &F_))                   \
                GCONV_IMPL_FB_GO(name##_fb, F_, stream, why_, len_);                             \
        }                                                                                        \
        switch (gconv_impl_fused_pick(P.M, K1, P.GK, P.taps, gconv_device_sm_count())) {         \
        case 0:                                                                                  \
            GCONV_IMPL_FUSED_LAUNCH(name##_k0, T, GCONV_FUSED_TILE_64x16, P, stream, why_, len_); \
        case 1:                                                                                  \
            GCONV_IMPL_FUSED_LAUNCH(name##_k1, T, GCONV_FUSED_TILE_64x32, P, stream, why_, len_); \
        case 2:                                                                                  \
            GCONV_IMPL_FUSED_LAUNCH(name##_k2, T, GCONV_FUSED_TILE_64x64, P, stream, why_, len_); \
        case 3:                                                                                  \
            GCONV_IMPL_FUSED_LAUNCH(name##_k3, T, GCONV_FUSED_TILE_64x128, P, stream, why_, len_); \
        default:                                                                                 \
            GCONV_IMPL_FUSED_LAUNCH(name##_k4, T, GCONV_FUSED_TILE_64x256, P, stream, why_, len_); \
        }                                                                                        \
    }                                                                                            \
    GCONV_IMPL_FUSED_UNUSED static inline gconv_status name(                                     \
        const gconv_problem *p, int K1, const gconv_fused_fwd_args *a, hipStream_t stream)       \
    {                                                                                            \
        return name##_from(p, K1, a, stream, GCONV_IMPL_FUSED_FROM_ROWS);                        \
    }

#define GCONV_FUSED_FWD(name, T, ACT_FAMILY, WEI_FAMILY)                                         \
    GCONV_IMPL_FUSED_DEFINE(name, T, ACT_FAMILY, WEI_FAMILY, gconv_impl_fused_mid_apply,         \
                            gconv_impl_epilogue_apply, 1, 1)

#define GCONV_FUSED_FWD_USER_OP(name, T, ACT_FAMILY, WEI_FAMILY, OPFN)                           \
    GCONV_IMPL_FUSED_DEFINE(name, T, ACT_FAMILY, WEI_FAMILY, gconv_impl_fused_mid_apply, OPFN, 1, \
                            0)

#define GCONV_FUSED_FWD_USER_ACT(name, T, ACT_FAMILY, WEI_FAMILY, ACTFN)                         \
    GCONV_IMPL_FUSED_DEFINE(name, T, ACT_FAMILY, WEI_FAMILY, ACTFN, gconv_impl_epilogue_apply, 0, \
                            1)

#define GCONV_FUSED_FWD_TILED(name, T, ACT_FAMILY, WEI_FAMILY, TILE)                             \
    GCONV_IMPL_FUSED_KERNEL(name##_k, T, TILE, gconv_impl_fused_mid_apply,                       \
                            gconv_impl_epilogue_apply)                                           \
    GCONV_IMPL_FUSED_UNUSED static inline int name##_supports(const gconv_problem *p, int K1,    \
                                                              char *why, size_t len)             \
    {                                                                                            \
        return gconv_impl_fused_check(p, K1, NULL, T, ACT_FAMILY, WEI_FAMILY, why, len) ==       \
               GCONV_OK;                                                                         \
    }                                                                                            \
    GCONV_IMPL_FUSED_UNUSED static inline gconv_status name(                                     \
        const gconv_problem *p, int K1, const gconv_fused_fwd_args *a, hipStream_t stream)       \
    {                                                                                            \
        GCONV_IMPL_FUSED_HEAD(T, ACT_FAMILY, WEI_FAMILY)                                         \
        GCONV_IMPL_FUSED_LAUNCH(name##_k, T, TILE, P, stream, why_, len_);                       \
    }

#endif /* GCONV_FUSED_FWD_H */
