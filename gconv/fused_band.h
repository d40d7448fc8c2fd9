/* gconv/fused_band.h: the band kernel of the fused depthwise -> pointwise forward
 * (gconv/fused_fwd.h), for the shapes MobileNet / EfficientNet / ConvNeXt blocks have: the
 * input read once from global memory into a shared-memory band with its halo, the intermediate
 * never leaving the SM, the pointwise GEMM on tensor cores.
 *
 * Scope (gconv_impl_fb_plan says whether a problem fits; everything else keeps the general
 * kernels of gconv/fused_fwd.h): depthwise (C = K = 1 per group), G a multiple of 8, groups
 * contiguous in the input (NHWGC), 1D or 2D (3D with a trivial depth axis), any filter of at most
 * GCONV_IMPL_FB_MAXTAPS taps, any stride, dilation and padding, fp16 / bf16, in / w0 / b0 / w1
 * 16-byte aligned, input and output under 2^31 elements, CUDA sm_80+ (cp.async, ldmatrix,
 * mma.sync). Any output layout of the family and any epilogue (applied per element).
 *
 * Work items. An item is (image n, band of RB output rows, segment of OWt output columns, tile
 * of K1t pointwise channels). A block walks its items (persistent grid, item = blockIdx.x +
 * j * gridDim.x) and, for each, the GK intermediate channels in chunks of CC = 32 or 64: one
 * "step" per (item, chunk). Step s's copies (input patch, w1 / w0 / b0 chunks) are issued S - 1
 * steps ahead by cp.async, one commit group per step, so S - 1 steps of data are in flight while
 * a step computes. The fp32 accumulators of the pointwise GEMM (2 x NT m16n8 tiles per warp) stay
 * in registers across an item's chunks: that bounds a block's tile to PT = 32 * WM pixels by
 * K1t = 64 * WN channels (WM * WN = 8 warps).
 *
 * The plan (host): WN from K1 (K1 above 256 in tiles, each recomputing stage 1); the tallest
 * band of at most PT pixels whose stages fit (three, else two), lowered only while there are
 * fewer items than half the SMs (per-step costs are fixed, so pixels per step are what
 * pays); CC = 64 where G >= 128 and the band stays as tall; th, stage 1's rows per lane, 4
 * unless that idles more than a quarter of the threads.
 *
 * Shared memory of one stage (S stages):
 *   input patch: the IR x IC input pixels the band's windows cover (zero outside the image), CC
 *     channels as CC / 8 planes of 16-byte vectors, plane v = channels 8v .. 8v+7, pixel
 *     (ir, ic) at (ir * IC + ic) * 16 within its plane. Plane stride = 32 (4 planes) or 16
 *     (8 planes) mod 128 bytes: the consecutive lanes copying one pixel's CC channels hit
 *     distinct bank groups; stage 1's lanes read consecutive columns of a plane.
 *   w1 chunk: K1rows rows (pointwise output channels) x CC channels, 16-byte chunks swizzled
 *     (gconv_impl_fb_swz) so that ldmatrix reads 8 rows at one chunk without bank conflicts;
 *   raw w0 ([CC][taps], contiguous in both weight layouts when C = K = 1) and b0.
 * plus, once: the A tile (PT pixels x CC channels, the intermediate, swizzled like w1), two
 * buffers of a chunk's w0 / b0 as fp32 ([tap][CC] then [CC]) and a ring of the S steps' items.
 * A step's raw w0 / b0 travel one commit group earlier than its patch, so that the step before
 * converts them.
 *
 * One step: wait for its copies, barrier, issue the copies of step s + S - 1 (and the raw w0 /
 * b0 of step s + S), stage 1 (a lane takes a (plane, strip, column) position: th output rows
 * of one column for 8 channels in fp32 from the patch, + b0, act0, rounded to T, stored to the
 * A tile; 3x3 filters with row stride 1 or 2 keep a column's taps in registers and read each
 * patch row once), convert step s + 1's w0 / b0 to fp32, barrier, stage 2 (m16n8k16 mma.sync,
 * CC / 16 k-steps). After an item's last chunk: + b1, the epilogue function per element
 * (skipped for a plain store), 32-bit stores of channel pairs (16-bit elements where the
 * output's channels are not contiguous).
 *
 * Speed (H100, fp16, MobileNetV2 blocks at N = 64; bench/NOTES.md): about half the time of the
 * general kernels, but still slower than gconv's own two calls on every problem of the suite:
 * the fused kernel spends several instructions of bookkeeping per multiply-add of stage 1.
 *
 * Included by gconv/fused_fwd.h after gconv_fused_fwd_args (the plans take the launcher's
 * arguments); needs a HIP or CUDA compiler.
 */
#ifndef GCONV_FUSED_BAND_H
#define GCONV_FUSED_BAND_H

#include "direct_fwd.h"
#include "igemm.h"
#include "igemm_halo.h"

#define GCONV_IMPL_FB_THREADS 256
#define GCONV_IMPL_FB_CCMAX 64      /* intermediate channels per chunk: 32 or 64 */
#define GCONV_IMPL_FB_TH 4          /* output rows per stage-1 lane */
#define GCONV_IMPL_FB_NTMAX 4       /* n-tiles of 8 channels per warp */
#define GCONV_IMPL_FB_MAXTAPS 64    /* filter taps (a w0 chunk per stage in shared memory) */
#define GCONV_IMPL_FB_SMEM (110 * 1024) /* per block: two blocks per SM */

/* Bands are lowered while items < SMs * GCONV_IMPL_FB_MIN_ITEMS / 100 (a tuning knob). */
#ifndef GCONV_IMPL_FB_MIN_ITEMS
#define GCONV_IMPL_FB_MIN_ITEMS 50
#endif

#ifndef GCONV_IMPL_FB_ENABLE
#if defined(GCONV_PLATFORM_CUDA)
#define GCONV_IMPL_FB_ENABLE 1
#else
#define GCONV_IMPL_FB_ENABLE 0
#endif
#endif

typedef struct gconv_impl_fb_params {
    const void *in, *w0, *b0, *w1, *b1;
    void *out;
    gconv_epilogue epi;      /* final epilogue */
    gconv_epilogue mid;      /* alpha 1, no D, act0 */
    int GK, K1, H, W, OH, OW, Y, X, sh, sw, dh, dw, ph, pw, taps;
    int in_n, in_h, in_w;    /* input strides in elements (channels contiguous) */
    int out_n, out_h, out_w, out_c;
    int pair;                /* out_c == 1, K1 even: 32-bit stores of channel pairs */
    int plain;               /* the epilogue is a plain store (alpha 1, no D, no act) */
    int WM, WN, NT, K1t, k1tiles, K1rows; /* warp grid, n-tiles per warp, K1 tiling */
    int OWt, wseg, RB, bands, IR, IC, strips, qw, nch; /* band geometry, chunks */
    int th;                  /* stage-1 output rows per lane (<= GCONV_IMPL_FB_TH) */
    float rsq, rowt;         /* 1 / (strips * OWt), 1 / OWt */
    int CC, lp;              /* channels per chunk (32 or 64), log2 of its 16-byte planes */
    int items;
    int S, plane, w1off, w0off, b0off, stage, aoff, woff, ioff, smem; /* shared memory */
    int variant;             /* stage-1 form: 1 = 3x3 stride 1, 2 = 3x3 stride 2 (rows, no
                              * row dilation), 0 = any filter */
} gconv_impl_fb_params;

static inline int gconv_impl_fb_round(int x, int m)
{
    return (x + m - 1) / m * m;
}

/* 16-byte chunk swizzle of row r of a [rows][CC] tile (64-byte rows: 4 chunks, two rows per
 * 128-byte line; 128-byte rows: 8 chunks): ldmatrix's 8 rows at one logical chunk, and stage
 * 1's 8 consecutive pixels at one, fall in 8 distinct 16-byte bank groups. */
static inline GCONV_HD int gconv_impl_fb_swz(int r, int lp)
{
    return lp == 2 ? (r >> 1) & 3 : r & 7;
}

/* Shared-memory plan for band rows RB with S stages; returns the bytes. */
static inline int gconv_impl_fb_smem_plan(gconv_impl_fb_params *F, int RB, int S)
{
    const int PT = F->WM * 32;
    F->RB = RB;
    F->IR = (RB - 1) * F->sh + (F->Y - 1) * F->dh + 1;
    F->IC = (F->OWt - 1) * F->sw + (F->X - 1) * F->dw + 1;
    F->S = S;
    /* plane stride 32 (4 planes) or 16 (8 planes) mod 128: one pixel's planes in distinct
     * 16-byte bank groups */
    F->plane = gconv_impl_fb_round(F->IR * F->IC * 16, 128) + (F->lp == 2 ? 32 : 16);
    F->w1off = gconv_impl_fb_round((1 << F->lp) * F->plane, 128);
    F->w0off = F->w1off + F->K1rows * F->CC * 2;
    F->b0off = F->w0off + gconv_impl_fb_round(F->taps * F->CC * 2, 16);
    F->stage = gconv_impl_fb_round(F->b0off + F->CC * 2, 128);
    F->aoff = S * F->stage;
    F->woff = F->aoff + PT * F->CC * 2;
    F->ioff = F->woff + 2 * (F->taps + 1) * F->CC * 4;
    F->smem = F->ioff + 3 * 32; /* item ring: S entries of 6 ints */
    return F->smem;
}

/* Band rows for chunks of CC channels: the tallest band (at most PT pixels) whose stages fit
 * in GCONV_IMPL_FB_SMEM (three stages, else two), lowered while there are fewer items than
 * SMs * GCONV_IMPL_FB_MIN_ITEMS / 100. Fills the geometry and shared-memory plan of F;
 * returns RB, or 0 if nothing fits. */
static inline int gconv_impl_fb_fit(gconv_impl_fb_params *F, int N, int sms, int CC)
{
    const int PT = F->WM * 32, rbmax = PT / F->OWt < F->OH ? PT / F->OWt : F->OH;
    int RB = rbmax, S = 3, bands;
    int64_t items;
    F->CC = CC;
    F->lp = CC == 64 ? 3 : 2;
    for (;;) {
        bands = (F->OH + RB - 1) / RB;
        RB = (F->OH + bands - 1) / bands;
        items = (int64_t)N * bands * F->wseg * F->k1tiles;
        if (gconv_impl_fb_smem_plan(F, RB, S) > GCONV_IMPL_FB_SMEM) {
            /* two stages before a lower band */
            if (S == 3) {
                S = 2;
                continue;
            }
            if (RB > 1) {
                RB = (RB + 1) / 2;
                S = 3;
                continue;
            }
            return 0;
        }
        /* enough items for the SMs (taller bands beat idle SMs down to about half of them),
         * unless the band is one row */
        if (RB > 1 && items * 100 < (int64_t)sms * GCONV_IMPL_FB_MIN_ITEMS) {
            RB = (RB + 1) / 2;
            S = 3;
            continue;
        }
        break;
    }
    if (items > 0x7fffffffLL / 64)
        return 0;
    F->bands = bands;
    F->items = (int)items;
    return RB;
}

/* The scope both fused depthwise kernels (band, rows) share: fp16 / bf16, depthwise with G a
 * multiple of 8, 2D (or a trivial depth axis), input / output under 2^31 elements, groups
 * contiguous in the input with 16-byte aligned pixels, in and w1 16-byte aligned, CUDA. Fills
 * the output sizes o and the input / output strides (the fused output: N images, K1 channels,
 * G = 1, as gconv_fused_fwd_out_strides). */
static inline int gconv_impl_fb_scope(const gconv_problem *p, int K1,
                                      const gconv_fused_fwd_args *a, gconv_dtype dt, int *o,
                                      gconv_act_strides *si, gconv_act_strides *so)
{
    if (!GCONV_IMPL_FB_ENABLE || (dt != GCONV_F16 && dt != GCONV_BF16))
        return 0;
    if (p->C != 1 || p->K != 1 || p->G % 8 || K1 <= 0)
        return 0;
    gconv_out_sizes(p, o);
    if (p->in[0] != 1 || p->filter[0] != 1 || o[0] != 1)
        return 0;
    if (gconv_in_elems(p) >= 0x7fffffffLL ||
        (int64_t)p->N * K1 * gconv_out_spatial(p) >= 0x7fffffffLL ||
        (int64_t)K1 * p->G >= 0x7fffffffLL)
        return 0;
    *si = gconv_in_strides(p);
    *so = gconv_act_strides_make(gconv_out_layout(p), 1, p->N, K1, o);
    return si->g == 1 && si->n % 8 == 0 && si->s[1] % 8 == 0 && si->s[2] % 8 == 0 &&
           (uintptr_t)a->in % 16 == 0 && (uintptr_t)a->w1 % 16 == 0;
}

/* The fields both kernels' parameter blocks F share (names alike), from a problem in
 * gconv_impl_fb_scope with output sizes o and strides si, so. */
#define GCONV_IMPL_FB_FILL(F, p, K1_, a, o, si, so)                                              \
    do {                                                                                         \
        (F)->in = (a)->in, (F)->w0 = (a)->w0, (F)->b0 = (a)->b0, (F)->w1 = (a)->w1;              \
        (F)->b1 = (a)->b1, (F)->out = (a)->out;                                                  \
        (F)->epi = (a)->epi ? *(a)->epi : gconv_epi_scale(1.0f);                                 \
        (F)->mid = gconv_epi_scale(1.0f);                                                        \
        (F)->mid.act = (a)->act0;                                                                \
        (F)->plain = (F)->epi.alpha == 1.0f && (F)->epi.num_d == 0 &&                            \
                     (F)->epi.act.kind == GCONV_ACT_NONE;                                        \
        (F)->GK = (p)->G, (F)->K1 = K1_;                                                         \
        (F)->H = (p)->in[1], (F)->W = (p)->in[2], (F)->OH = (o)[1], (F)->OW = (o)[2];            \
        (F)->ph = (p)->pad_lo[1], (F)->pw = (p)->pad_lo[2];                                      \
        (F)->in_n = (int)(si).n, (F)->in_h = (int)(si).s[1], (F)->in_w = (int)(si).s[2];         \
        (F)->out_n = (int)(so).n, (F)->out_h = (int)(so).s[1], (F)->out_w = (int)(so).s[2];      \
        (F)->out_c = (int)(so).c;                                                                \
        (F)->pair = (so).c == 1 && (K1_) % 2 == 0 && (so).n % 2 == 0 && (so).s[1] % 2 == 0 &&    \
                    (so).s[2] % 2 == 0 && (uintptr_t)(a)->out % 4 == 0;                          \
    } while (0)

/* Plan the band kernel for problem p (the fused launcher has validated it). Returns 1 and
 * fills F if the problem is in scope, else 0. sms: the device's SM count. */
static inline int gconv_impl_fb_plan(const gconv_problem *p, int K1,
                                     const gconv_fused_fwd_args *a, gconv_dtype dt, int sms,
                                     gconv_impl_fb_params *F)
{
    gconv_act_strides si, so;
    int o[3], PT, RB;
    memset(F, 0, sizeof *F);
    if (!gconv_impl_fb_scope(p, K1, a, dt, o, &si, &so))
        return 0;
    if ((int64_t)p->filter[1] * p->filter[2] > GCONV_IMPL_FB_MAXTAPS || (uintptr_t)a->w0 % 16 ||
        (uintptr_t)a->b0 % 16)
        return 0;
    if (sms <= 0)
        sms = 80;
    GCONV_IMPL_FB_FILL(F, p, K1, a, o, si, so);
    F->Y = p->filter[1], F->X = p->filter[2];
    F->sh = p->stride[1], F->sw = p->stride[2];
    F->dh = p->dilation[1], F->dw = p->dilation[2];
    F->taps = F->Y * F->X;
    /* channels: a warp covers at most NTMAX * 8 = 32 of K1; K1 above 256 in tiles (each
     * recomputes stage 1) */
    F->WN = K1 <= 32 ? 1 : K1 <= 64 ? 2 : K1 <= 128 ? 4 : 8;
    F->k1tiles = (K1 + 255) / 256;
    F->K1t = (K1 + F->k1tiles - 1) / F->k1tiles;
    F->NT = (F->K1t + 8 * F->WN - 1) / (8 * F->WN);
    F->K1t = F->WN * F->NT * 8;
    F->K1rows = F->K1t + 8; /* the last n-tile pair may read one tile past the end */
    F->WM = 8 / F->WN;
    PT = F->WM * 32;
    /* pixels: OWt columns x RB rows <= PT */
    F->OWt = F->OW < PT ? F->OW : PT;
    F->wseg = (F->OW + F->OWt - 1) / F->OWt;
    F->OWt = (F->OW + F->wseg - 1) / F->wseg;
    /* 64-channel chunks halve the steps (each with its fixed costs) where the channels are
     * many, if the band stays as tall as with 32 */
    RB = 0;
    if (F->GK >= 128) {
        gconv_impl_fb_params F32 = *F;
        const int rb32 = gconv_impl_fb_fit(&F32, p->N, sms, 32);
        RB = gconv_impl_fb_fit(F, p->N, sms, 64);
        if (RB < rb32)
            RB = 0;
    }
    if (!RB)
        RB = gconv_impl_fb_fit(F, p->N, sms, 32);
    if (!RB)
        return 0;
    /* stage-1 rows per lane: 4 (most reuse of each loaded row) unless that leaves more than a
     * quarter of the threads without a (plane, strip, column) position */
    for (F->th = GCONV_IMPL_FB_TH; F->th > 1; F->th /= 2)
        if ((((F->RB + F->th - 1) / F->th) * F->OWt << F->lp) >= GCONV_IMPL_FB_THREADS * 3 / 4)
            break;
    F->strips = (F->RB + F->th - 1) / F->th;
    F->qw = ((F->strips * F->OWt << F->lp) + 31) / 32;
    F->rsq = 1.0f / (float)(F->strips * F->OWt);
    F->rowt = 1.0f / (float)F->OWt;
    if (F->qw * 32 >= 65536)
        return 0;
    F->nch = (F->GK + F->CC - 1) / F->CC;
    F->variant = F->Y == 3 && F->X == 3 && F->dh == 1 ? (F->sh == 1 ? 1 : F->sh == 2 ? 2 : 0) : 0;
    return 1;
}

#if GCONV_IMPL_IGEMM_MATH == GCONV_IMPL_MATH_MMA

/* Where an item is. */
typedef struct gconv_impl_fb_item {
    int n, oh0, rows, ow0, cols, k1base;
} gconv_impl_fb_item;

static __device__ __forceinline__ gconv_impl_fb_item gconv_impl_fb_decode(
    const gconv_impl_fb_params *F, int item)
{
    gconv_impl_fb_item r;
    unsigned t = (unsigned)item, seg = 0, band;
    r.k1base = 0;
    if (F->k1tiles > 1) {
        const unsigned q = t / (unsigned)F->k1tiles;
        r.k1base = (int)(t - q * (unsigned)F->k1tiles) * F->K1t;
        t = q;
    }
    if (F->wseg > 1) {
        const unsigned q = t / (unsigned)F->wseg;
        seg = t - q * (unsigned)F->wseg;
        t = q;
    }
    r.n = (int)(t / (unsigned)F->bands);
    band = t - (unsigned)r.n * (unsigned)F->bands;
    r.oh0 = (int)band * F->RB;
    r.rows = min(F->RB, F->OH - r.oh0);
    r.ow0 = (int)seg * F->OWt;
    r.cols = min(F->OWt, F->OW - r.ow0);
    return r;
}

/* Issue the copies of one step (item it, channels c0..c0+CC-1) into stage sb. */
static __device__ __forceinline__ void gconv_impl_fb_issue(const gconv_impl_fb_params *F,
                                                           unsigned sb, gconv_impl_fb_item it,
                                                           int c0)
{
    const unsigned short *in = (const unsigned short *)F->in;
    const unsigned short *w1 = (const unsigned short *)F->w1;
    const int ih0 = it.oh0 * F->sh - F->ph, iw0 = it.ow0 * F->sw - F->pw;
    const int IC = F->IC, IR = F->IR, GK = F->GK, lp = F->lp;
    const int v = (int)threadIdx.x & ((1 << lp) - 1);
    const int vok = c0 + 8 * v < GK;
    /* element offsets fit in 32 bits (the plan checks the input's size) */
    const int ib = it.n * F->in_n + c0 + 8 * v;
    const unsigned sd = sb + (unsigned)(v * F->plane);
    int ic, idx;
    /* 4 or 8 consecutive threads copy one pixel's CC channels (contiguous bytes); a thread
     * owns patch columns ic, ic + 256 / planes, ... and walks their rows */
#pragma unroll 1
    for (ic = (int)threadIdx.x >> lp; ic < IC; ic += GCONV_IMPL_FB_THREADS >> lp) {
        const int iw = iw0 + ic;
        const int cok = vok && (unsigned)iw < (unsigned)F->W;
        const unsigned short *src = in + (cok ? ib + iw * F->in_w : 0);
        unsigned dst = sd + (unsigned)(ic * 16);
        int ir;
#pragma unroll 1
        for (ir = 0; ir < IR; ir++, dst += (unsigned)(IC * 16)) {
            const int ih = ih0 + ir;
            const int ok = cok && (unsigned)ih < (unsigned)F->H;
            gconv_impl_igemm_cp_async16(dst, ok ? src + ih * F->in_h : in, ok);
        }
    }
    for (idx = (int)threadIdx.x; idx < F->K1rows << lp; idx += GCONV_IMPL_FB_THREADS) {
        const int vv = idx & ((1 << lp) - 1), row = idx >> lp, k1 = it.k1base + row;
        const int ok = k1 < F->K1 && c0 + 8 * vv < GK;
        gconv_impl_igemm_cp_async16(sb + (unsigned)(F->w1off + (row << (lp + 4)) +
                                                    ((vv ^ gconv_impl_fb_swz(row, lp)) << 4)),
                                    w1 + (ok ? k1 * GK + c0 + 8 * vv : 0), ok);
    }
}

/* Issue the copies of the raw w0 of channels c0..c0+CC-1 and their b0 into stage sb. With
 * C = K = 1 both weight layouts keep channel g's taps contiguous at g * taps, so the chunk is
 * CC * taps contiguous elements (16-byte pieces: GK is a multiple of 8); b0's CC elements
 * (zeros without b0). */
static __device__ __forceinline__ void gconv_impl_fb_issue_w0(const gconv_impl_fb_params *F,
                                                              unsigned sb, int c0)
{
    const int GK = F->GK, lp = F->lp;
    int idx;
    {
        const int w0n = F->CC * F->taps / 8, w0v = (GK - c0) * F->taps / 8;
        const unsigned short *w0 = (const unsigned short *)F->w0 + c0 * F->taps;
        const unsigned short *b0 = (const unsigned short *)F->b0;
#pragma unroll 1
        for (idx = (int)threadIdx.x; idx < w0n + (1 << lp); idx += GCONV_IMPL_FB_THREADS) {
            if (idx < w0n) {
                const int ok = idx < w0v;
                gconv_impl_igemm_cp_async16(sb + (unsigned)(F->w0off + idx * 16),
                                            ok ? w0 + idx * 8 : (const unsigned short *)F->w0,
                                            ok);
            } else {
                const int j = idx - w0n, ok = b0 && c0 + 8 * j < GK;
                gconv_impl_igemm_cp_async16(sb + (unsigned)(F->b0off + j * 16),
                                            ok ? b0 + c0 + 8 * j : (const unsigned short *)F->w0,
                                            ok);
            }
        }
    }
}

/* The chunk's raw w0 ([CC][taps]) and b0 of stage stg as fp32 [tap][CC] then [CC] in ws. */
static __device__ __forceinline__ void gconv_impl_fb_wconv(const gconv_impl_fb_params *F,
                                                           const unsigned char *stg, float *ws,
                                                           gconv_dtype dt)
{
    const int taps = F->taps, nv = (taps + 1) * F->CC, lc = F->lp + 3;
    const unsigned short *w0 = (const unsigned short *)(stg + F->w0off);
    const unsigned short *b0 = (const unsigned short *)(stg + F->b0off);
    for (int idx = (int)threadIdx.x; idx < nv; idx += GCONV_IMPL_FB_THREADS) {
        const int tap = idx >> lc, c = idx & (F->CC - 1);
        const unsigned short bits = tap < taps ? w0[c * taps + tap] : b0[c];
        uint32_t raw = bits;
        ws[idx] = gconv_impl_raw_elem(&raw, 0, dt);
    }
}

/* acc[t][j] += x[j] * w[j] for the 8 channels of one 16-byte input vector x. */
static __device__ __forceinline__ void gconv_impl_fb_fma8(float *acc, const uint4 xv,
                                                          const float4 w0, const float4 w1,
                                                          gconv_dtype dt)
{
    const uint32_t x[4] = {xv.x, xv.y, xv.z, xv.w};
    acc[0] = fmaf(gconv_impl_raw_elem(x, 0, dt), w0.x, acc[0]);
    acc[1] = fmaf(gconv_impl_raw_elem(x, 1, dt), w0.y, acc[1]);
    acc[2] = fmaf(gconv_impl_raw_elem(x, 2, dt), w0.z, acc[2]);
    acc[3] = fmaf(gconv_impl_raw_elem(x, 3, dt), w0.w, acc[3]);
    acc[4] = fmaf(gconv_impl_raw_elem(x, 4, dt), w1.x, acc[4]);
    acc[5] = fmaf(gconv_impl_raw_elem(x, 5, dt), w1.y, acc[5]);
    acc[6] = fmaf(gconv_impl_raw_elem(x, 6, dt), w1.z, acc[6]);
    acc[7] = fmaf(gconv_impl_raw_elem(x, 7, dt), w1.w, acc[7]);
}

/* Stage 1 of a 3x3 filter with row stride SH (a literal, 1 or 2) and no row dilation, for TV
 * (a literal) valid output rows r0 .. r0 + TV - 1 of the lane's column c (patch column c * sw,
 * + kx * dw). Column kx's 3 taps stay in registers while the (TV - 1) * SH + 3 patch rows of the
 * strip stream through once, each element converted once and used by every output row whose
 * window covers it. Everything unrolls: no branches around the FMAs. */
static __device__ __forceinline__ void gconv_impl_fb_s1_3x3(const gconv_impl_fb_params *F,
                                                            float (*acc)[8],
                                                            const unsigned char *pl,
                                                            const float *ws, int v, int r0,
                                                            int c, gconv_dtype dt, const int SH,
                                                            const int TV)
{
    const int IRS = (TV - 1) * SH + 3, rb = F->IC * 16;
#pragma unroll 1
    for (int kx = 0; kx < 3; kx++) {
        float4 w[3][2];
        const unsigned char *col = pl + (r0 * SH * F->IC + c * F->sw + kx * F->dw) * 16;
#pragma unroll
        for (int ky = 0; ky < 3; ky++) {
            w[ky][0] = *(const float4 *)(ws + (ky * 3 + kx) * F->CC + v * 8);
            w[ky][1] = *(const float4 *)(ws + (ky * 3 + kx) * F->CC + v * 8 + 4);
        }
#pragma unroll
        for (int j = 0; j < IRS; j++) {
            const uint4 x = *(const uint4 *)(col + j * rb);
#pragma unroll
            for (int t = 0; t < TV; t++) {
                const int ky = j - t * SH;
                if (ky >= 0 && ky < 3)
                    gconv_impl_fb_fma8(acc[t], x, w[ky][0], w[ky][1], dt);
            }
        }
    }
}

static __device__ __forceinline__ void gconv_impl_fb_s1_3x3_tv(const gconv_impl_fb_params *F,
                                                               float (*acc)[8],
                                                               const unsigned char *pl,
                                                               const float *ws, int v, int r0,
                                                               int c, int tv, gconv_dtype dt,
                                                               const int SH)
{
    if (tv >= 4)
        gconv_impl_fb_s1_3x3(F, acc, pl, ws, v, r0, c, dt, SH, 4);
    else if (tv == 3)
        gconv_impl_fb_s1_3x3(F, acc, pl, ws, v, r0, c, dt, SH, 3);
    else if (tv == 2)
        gconv_impl_fb_s1_3x3(F, acc, pl, ws, v, r0, c, dt, SH, 2);
    else
        gconv_impl_fb_s1_3x3(F, acc, pl, ws, v, r0, c, dt, SH, 1);
}

/* Stage 1 for any filter, stride and dilation: every (tap, output row) reads its vector. */
static __device__ __forceinline__ void gconv_impl_fb_s1_any(const gconv_impl_fb_params *F,
                                                            float (*acc)[8],
                                                            const unsigned char *pl,
                                                            const float *ws, int v, int r0,
                                                            int c, int tv, gconv_dtype dt)
{
    const int IC = F->IC;
    for (int ky = 0; ky < F->Y; ky++) {
        for (int kx = 0; kx < F->X; kx++) {
            const float4 wa = *(const float4 *)(ws + (ky * F->X + kx) * F->CC + v * 8);
            const float4 wb = *(const float4 *)(ws + (ky * F->X + kx) * F->CC + v * 8 + 4);
            const unsigned char *col =
                pl + ((r0 * F->sh + ky * F->dh) * IC + c * F->sw + kx * F->dw) * 16;
#pragma unroll
            for (int t = 0; t < GCONV_IMPL_FB_TH; t++)
                if (t < tv)
                    gconv_impl_fb_fma8(acc[t], *(const uint4 *)(col + t * F->sh * IC * 16), wa,
                                       wb, dt);
        }
    }
}

static __device__ __forceinline__ unsigned gconv_impl_fb_pack(float a, float b, gconv_dtype dt)
{
    return gconv_impl_halo_pack(a, b, dt);
}

/* act0 of NV intermediate values m (b0 already added; NV a literal): with MIDB the built-in
 * act0 (its kind tested once for the NV values), else midfn per element (channels c .. c + NV -
 * 1 of image n at output (oh, ow)). */
static __device__ __forceinline__ void gconv_impl_fb_act(float *m, const gconv_epilogue *mid,
                                                         const gconv_dtype dt,
                                                         gconv_impl_epi_fn midfn, const int MIDB,
                                                         int c, int n, int oh, int ow,
                                                         const int NV)
{
    if (MIDB) {
        /* without conditionals (gconv/epilogue.h): the conditional form was a branch per
         * value here (H100, 32@112 -> 16 with ReLU6 59 -> 91 us) */
        gconv_impl_act_n(mid->act, m, NV);
    } else {
#pragma unroll
        for (int j = 0; j < NV; j++)
            m[j] = midfn(mid, dt, m[j], c + j, n, 0, 0, oh, ow);
    }
}

/* act0 of 8 intermediate values m (gconv_impl_fb_act) and their packing into 16 bytes;
 * channels from cvalid on become exact zeros (channels past G). */
static __device__ __forceinline__ uint4 gconv_impl_fb_mid8(float *m, const gconv_epilogue *mid,
                                                           const gconv_dtype dt,
                                                           gconv_impl_epi_fn midfn,
                                                           const int MIDB, int c, int n, int oh,
                                                           int ow, int cvalid)
{
    uint4 pk;
    gconv_impl_fb_act(m, mid, dt, midfn, MIDB, c, n, oh, ow, 8);
    if (cvalid < 8) {
#pragma unroll
        for (int j = 0; j < 8; j++)
            if (j >= cvalid)
                m[j] = 0.0f;
    }
    pk.x = gconv_impl_fb_pack(m[0], m[1], dt);
    pk.y = gconv_impl_fb_pack(m[2], m[3], dt);
    pk.z = gconv_impl_fb_pack(m[4], m[5], dt);
    pk.w = gconv_impl_fb_pack(m[6], m[7], dt);
    return pk;
}

/* Final outputs k1 and k1 + 1 (the latter only if k1 + 1 < K1) of one pixel whose channel 0
 * is element pbase of out: the epilogue per element unless plain, then one 32-bit store of the
 * pair (pair: channels contiguous, offsets even) or two 16-bit stores out_c elements apart. */
static __device__ __forceinline__ void gconv_impl_fb_out2(const gconv_epilogue *epi,
                                                          gconv_impl_epi_fn epifn, const int plain,
                                                          const gconv_dtype dt, void *out,
                                                          int pair, int out_c, int K1, int pbase,
                                                          int k1, float y0, float y1, int n,
                                                          int oh, int ow)
{
    const int has1 = k1 + 1 < K1;
    if (!plain) {
        y0 = epifn(epi, dt, y0, 0, n, k1, 0, oh, ow);
        if (has1)
            y1 = epifn(epi, dt, y1, 0, n, k1 + 1, 0, oh, ow);
    }
    if (pair) {
        ((unsigned *)out)[(pbase + k1) >> 1] = gconv_impl_fb_pack(y0, y1, dt);
    } else {
        unsigned short *o = (unsigned short *)out;
        o[pbase + k1 * out_c] = (unsigned short)(gconv_impl_fb_pack(y0, 0.0f, dt) & 0xffffu);
        if (has1)
            o[pbase + (k1 + 1) * out_c] =
                (unsigned short)(gconv_impl_fb_pack(y1, 0.0f, dt) & 0xffffu);
    }
}

static __device__ __forceinline__ void gconv_impl_fb_zero(float (*acc)[GCONV_IMPL_FB_NTMAX][4])
{
#pragma unroll
    for (int i = 0; i < 2; i++)
#pragma unroll
        for (int j = 0; j < GCONV_IMPL_FB_NTMAX; j++)
#pragma unroll
            for (int e = 0; e < 4; e++)
                acc[i][j][e] = 0.0f;
}

/* The kernel body. MIDB / EPIB (literals): midfn / epifn are the built-in act0 / epilogue,
 * which the body inlines in a cheaper form (the activation chosen once per row of 8 values; the
 * plain epilogue as a store). */
static __device__ __forceinline__ void gconv_impl_fb_body(const gconv_impl_fb_params *F,
                                                          const gconv_dtype dt,
                                                          gconv_impl_epi_fn midfn,
                                                          gconv_impl_epi_fn epifn, const int MIDB,
                                                          const int EPIB)
{
    extern __shared__ __align__(128) unsigned char gconv_impl_fb_sm[];
    const int tid = (int)threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int nch = F->nch, S = F->S;
    const int myitems = (F->items - (int)blockIdx.x + (int)gridDim.x - 1) / (int)gridDim.x;
    const int nsteps = myitems * nch;
    const int WM = F->WM, NT = F->NT;
    const int wm = warp % WM, wn = warp / WM;
    const unsigned smb = gconv_impl_igemm_smem_addr(gconv_impl_fb_sm);
    unsigned char *asm_ = gconv_impl_fb_sm + F->aoff;
    float *wsb = (float *)(gconv_impl_fb_sm + F->woff);
    float acc[2][GCONV_IMPL_FB_NTMAX][4];
    int st;
    if (dt == GCONV_F32)
        return;
    gconv_impl_fb_zero(acc);
    /* Two cursors walk the block's steps: the issue cursor S - 1 steps ahead (its item decoded
     * once per item, kept in registers, and published in the item ring of shared memory for
     * the compute side), the compute cursor. st < 0: the prologue. */
    {
        int ichunk = 0, iitem = (int)blockIdx.x, istage = 0, cchunk = 0, cstage = 0;
        gconv_impl_fb_item iit = gconv_impl_fb_decode(F, iitem);
        gconv_impl_fb_item *ring = (gconv_impl_fb_item *)(gconv_impl_fb_sm + F->ioff);
#pragma unroll 1
    for (st = 1 - S; st < nsteps; st++) {
        if (st >= 0) {
            /* this step's copies have landed (S - 2 newer groups may still fly) ... */
            if (S == 3)
                gconv_impl_igemm_cp_wait(1);
            else
                gconv_impl_igemm_cp_wait(0);
            /* ... for every thread; and every warp is done with the previous step's A tile,
             * w0 / b0, ring entry and the stage the next issue overwrites */
            __syncthreads();
        }
        /* the first step's w0 / b0 (landed with its group) to fp32 before anything is
         * copied over their raw form */
        if (st == 0) {
            gconv_impl_fb_wconv(F, gconv_impl_fb_sm, wsb, dt);
            __syncthreads();
        }
        /* one commit group: the patch and w1 chunk of step st + S - 1, the raw w0 / b0 of
         * step st + S (one step earlier than its patch, so that step st + S - 1 can convert
         * them; stage k % S holds step k's), and in the first group also step 0's */
        if (st + S - 1 < nsteps) {
            if (tid == 0)
                ring[istage] = iit;
            gconv_impl_fb_issue(F, smb + (unsigned)(istage * F->stage), iit,
                                ichunk * F->CC);
            istage = istage + 1 == S ? 0 : istage + 1;
            if (++ichunk == nch) {
                ichunk = 0;
                iitem += (int)gridDim.x;
                if (iitem < F->items)
                    iit = gconv_impl_fb_decode(F, iitem);
            }
        }
        if (st == 1 - S)
            gconv_impl_fb_issue_w0(F, smb, 0);
        if (st + S < nsteps)
            gconv_impl_fb_issue_w0(F, smb + (unsigned)((st + S) % S * F->stage),
                                   (st + S) % nch * F->CC);
        gconv_impl_igemm_cp_commit();
        if (st < 0)
            continue;
        {
            const int chunk = cchunk, c0 = chunk * F->CC, cst = cstage;
            const gconv_impl_fb_item it = ring[cst];
            const unsigned char *stg = gconv_impl_fb_sm + cst * F->stage;
            const float *ws = wsb + (st & 1) * (F->taps + 1) * F->CC;
            cstage = cstage + 1 == S ? 0 : cstage + 1;
            cchunk = cchunk + 1 == nch ? 0 : cchunk + 1;
            /* stage 1: warp-unit u = 32 consecutive flat (plane, strip, column) positions */
            {
                const int OWt = F->OWt, sq = F->strips * OWt, th = F->th;
#pragma unroll 1
                for (int u = warp; u < F->qw; u += GCONV_IMPL_FB_THREADS / 32) {
                    /* f = (v * strips + s) * OWt + c; the quotients by multiplication with
                     * the reciprocals (exact: f < 2^16, so f + 0.5 stays 0.5 / divisor
                     * away from a multiple) */
                    const int f = u * 32 + lane;
                    const int v = (int)(((float)f + 0.5f) * F->rsq);
                    const int q = f - v * sq, sv = (int)(((float)q + 0.5f) * F->rowt);
                    const int c = q - sv * OWt, r0 = sv * th;
                    const int tv = min(th, it.rows - r0);
                    const int cvalid = F->GK - (c0 + 8 * v); /* channels of this vector */
                    float a1[GCONV_IMPL_FB_TH][8];
                    if (v >= (1 << F->lp) || c >= it.cols || tv <= 0)
                        continue;
#pragma unroll
                    for (int t = 0; t < GCONV_IMPL_FB_TH; t++)
#pragma unroll
                        for (int j = 0; j < 8; j++)
                            a1[t][j] = 0.0f;
                    /* a vector wholly past G (the last chunk) only stores its zeros */
                    if (cvalid > 0) {
                        const unsigned char *pl = stg + v * F->plane;
                        if (F->variant == 1)
                            gconv_impl_fb_s1_3x3_tv(F, a1, pl, ws, v, r0, c, tv, dt, 1);
                        else if (F->variant == 2)
                            gconv_impl_fb_s1_3x3_tv(F, a1, pl, ws, v, r0, c, tv, dt, 2);
                        else
                            gconv_impl_fb_s1_any(F, a1, pl, ws, v, r0, c, tv, dt);
                    }
                    {
                        const float4 ba = *(const float4 *)(ws + F->taps * F->CC + v * 8);
                        const float4 bb = *(const float4 *)(ws + F->taps * F->CC + v * 8 + 4);
                        const float bv[8] = {ba.x, ba.y, ba.z, ba.w, bb.x, bb.y, bb.z, bb.w};
#pragma unroll
                        for (int t = 0; t < GCONV_IMPL_FB_TH; t++) {
                            if (t < tv) {
                                const int pix = (r0 + t) * OWt + c;
                                float m[8];
                                uint4 pk;
#pragma unroll
                                for (int j = 0; j < 8; j++)
                                    m[j] = a1[t][j] + bv[j];
                                pk = gconv_impl_fb_mid8(m, &F->mid, dt, midfn, MIDB,
                                                        c0 + 8 * v, it.n, it.oh0 + r0 + t,
                                                        it.ow0 + c, cvalid);
                                *(uint4 *)(asm_ + (pix << (F->lp + 4)) +
                                           ((v ^ gconv_impl_fb_swz(pix, F->lp)) << 4)) = pk;
                            }
                        }
                    }
                }
            }
            /* the next step's w0 / b0 (its group has landed: it came with this step's patch)
             * into the other fp32 buffer */
            if (st + 1 < nsteps)
                gconv_impl_fb_wconv(F, gconv_impl_fb_sm + cstage * F->stage,
                                    wsb + ((st + 1) & 1) * (F->taps + 1) * F->CC, dt);
            /* the A tile and that buffer are complete */
            __syncthreads();
            /* stage 2: acc[mt][nt] += A[wm*32 + 16mt ..][CC] * w1[(wn*NT + nt)*8 ..][CC] */
            {
                const int npix = (it.rows - 1) * F->OWt + it.cols;
                const unsigned abase = smb + (unsigned)F->aoff;
                const unsigned bbase = smb + (unsigned)(cst * F->stage + F->w1off);
                if (wm * 32 < npix) {
#pragma unroll
                    for (int ks = 0; ks < GCONV_IMPL_FB_CCMAX / 16; ks++) {
                        if (ks >= (F->CC >> 4))
                            break;
                        unsigned a[2][4], b[GCONV_IMPL_FB_NTMAX][2];
#pragma unroll
                        for (int mt = 0; mt < 2; mt++) {
                            const int row = wm * 32 + mt * 16 + (lane & 15);
                            const int ch = 2 * ks + (lane >> 4);
                            gconv_impl_igemm_ldsm_x4(
                                abase + (unsigned)((row << (F->lp + 4)) +
                                                   ((ch ^ gconv_impl_fb_swz(row, F->lp)) << 4)),
                                a[mt]);
                        }
#pragma unroll
                        for (int np = 0; np < GCONV_IMPL_FB_NTMAX / 2; np++) {
                            if (2 * np < NT) {
                                const int row =
                                    (wn * NT + 2 * np) * 8 + ((lane >> 4) << 3) + (lane & 7);
                                const int ch = 2 * ks + ((lane >> 3) & 1);
                                unsigned r[4];
                                gconv_impl_igemm_ldsm_x4(
                                    bbase + (unsigned)((row << (F->lp + 4)) +
                                                       ((ch ^ gconv_impl_fb_swz(row, F->lp)) << 4)),
                                    r);
                                b[2 * np][0] = r[0], b[2 * np][1] = r[1];
                                b[2 * np + 1][0] = r[2], b[2 * np + 1][1] = r[3];
                            }
                        }
#pragma unroll
                        for (int mt = 0; mt < 2; mt++)
#pragma unroll
                            for (int nt = 0; nt < GCONV_IMPL_FB_NTMAX; nt++)
                                if (nt < NT)
                                    gconv_impl_halo_mma(acc[mt][nt], a[mt], b[nt], dt);
                    }
                }
                /* the item's last chunk: + b1, epilogue, store; accumulators back to zero.
                 * Accumulators e, e + 1 of (mt, nt) are pixel wm*32 + 16mt + lane/4 (+8 for
                 * e >= 2) and channels k1 = base + 2 * (lane % 4), + 1. */
                if (chunk == nch - 1) {
                    const int OWt = F->OWt;
                    const int plain = EPIB && F->plain;
                    float bq[GCONV_IMPL_FB_NTMAX][2]; /* b1 of the lane's channel pairs */
#pragma unroll
                    for (int nt = 0; nt < GCONV_IMPL_FB_NTMAX; nt++) {
                        const int k1 = it.k1base + (wn * NT + nt) * 8 + 2 * (lane & 3);
                        bq[nt][0] = bq[nt][1] = 0.0f;
                        if (F->b1 && nt < NT && k1 < F->K1) {
                            bq[nt][0] = gconv_impl_dev_load(dt, F->b1, k1);
                            if (k1 + 1 < F->K1)
                                bq[nt][1] = gconv_impl_dev_load(dt, F->b1, k1 + 1);
                        }
                    }
#pragma unroll
                    for (int mt = 0; mt < 2; mt++) {
#pragma unroll
                        for (int h = 0; h < 2; h++) {
                            const int pix = wm * 32 + mt * 16 + (lane >> 2) + 8 * h;
                            const int r = (int)(((float)pix + 0.5f) * F->rowt);
                            const int c = pix - r * OWt;
                            if (r < it.rows && c < it.cols) {
                                const int oh = it.oh0 + r, ow = it.ow0 + c;
                                const int pbase = it.n * F->out_n + oh * F->out_h + ow * F->out_w;
#pragma unroll
                                for (int nt = 0; nt < GCONV_IMPL_FB_NTMAX; nt++) {
                                    const int k1 = it.k1base + (wn * NT + nt) * 8 + 2 * (lane & 3);
                                    if (nt < NT && k1 < F->K1)
                                        gconv_impl_fb_out2(&F->epi, epifn, plain, dt, F->out,
                                                           F->pair, F->out_c, F->K1, pbase, k1,
                                                           acc[mt][nt][2 * h] + bq[nt][0],
                                                           acc[mt][nt][2 * h + 1] + bq[nt][1],
                                                           it.n, oh, ow);
                                }
                            }
                        }
                    }
                    gconv_impl_fb_zero(acc);
                }
            }
        }
    }
    }
    /* nothing is left in flight past the end (the last groups issued were empty) */
    gconv_impl_igemm_cp_wait(0);
}

/* MIDB / EPIB: 1 if MIDFN / EPIFN is the built-in act0 / epilogue function. */
#define GCONV_IMPL_FB_KERNEL(kname, T, MIDFN, EPIFN, MIDB, EPIB)                                 \
    static __global__ void __launch_bounds__(GCONV_IMPL_FB_THREADS, 2)                           \
        kname(gconv_impl_fb_params F)                                                            \
    {                                                                                            \
        gconv_impl_fb_body(&F, T, MIDFN, EPIFN, MIDB, EPIB);                                     \
    }

#else /* no mma.sync: the band kernel is never planned (GCONV_IMPL_FB_ENABLE is 0) */

#define GCONV_IMPL_FB_KERNEL(kname, T, MIDFN, EPIFN, MIDB, EPIB)                                 \
    static __global__ void kname(gconv_impl_fb_params F)                                         \
    {                                                                                            \
        (void)F;                                                                                 \
    }

#endif

#endif /* GCONV_FUSED_BAND_H */
