/* gconv/fused_tile.h: the tile kernel of the fused depthwise -> pointwise forward
 * (gconv/fused_fwd.h), for 3x3 depthwise blocks on small images with many channels (the deep
 * MobileNet layers: 14x14 or 7x7, 384-960 channels, K1 64-160), where the row kernel
 * (gconv/fused_rows.h) cannot keep w1 on chip and the band kernel (gconv/fused_band.h) spends
 * most of its instructions on per-step bookkeeping.
 *
 * Scope (gconv_impl_ft_plan): the shared scope of gconv_impl_fb_scope (depthwise, G a multiple
 * of 8, NHWGC input, 2D, fp16 / bf16, in / w1 16-byte aligned, CUDA sm_80+), a 3x3 filter with
 * any stride, dilation and padding, at most 128 output columns, and G small enough that a tile
 * of at least one output row of intermediate values fits on chip.
 *
 * Work. A block of 512 threads takes one item: image n, output rows [h0, h0 + RT) (all OW
 * columns: at most PT = RT * OW pixels), and a tile [k10, k10 + K1t) of the pointwise channels
 * (more than one only where the accumulators would not fit; each recomputes stage 1). Two
 * phases:
 *   stage 1: a thread works on 4 channels (one 8-byte channel vector cv4; lanes of a warp on
 *     neighbouring vectors, so that a warp's loads are contiguous), its 9 taps and b0 in fp32
 *     registers. Each input element is converted to fp32 once per load and feeds every output
 *     of the thread whose window covers it. Two forms:
 *     - rolling (stride 1, dilation 1, the MobileNet case): a unit is a channel vector and two
 *       output columns; a piece is a run of output rows [ra, rb) of one unit, walked top to
 *       bottom: each input row is loaded once (4 window columns, two rows ahead of its use)
 *       and added into the (up to) three output rows it feeds, whose accumulators rotate
 *       through three slots; an output row is complete after its last input row (per output,
 *       9 FMA and 1.5-2 conversions, against 4.5 when each task loads its own three rows).
 *       Units go to threads in whole-column pieces
 *       for as many rounds as every thread gets one, the rest in shorter pieces spread over
 *       all threads (gconv_impl_ft_roll).
 *     - per task (any other stride or dilation): thread t owns channel vector cv4 = t % cv4s
 *       and the tasks pl, pl + L, ... (pl = t / cv4s, L = 512 / cv4s lanes per vector); a task
 *       is a run of TW output columns of one output row whose three input rows come straight
 *       from global memory; the next task's rows are loaded as soon as this task's row of the
 *       same ky is consumed. Forms: stride 1 and no column dilation (TW 4, 6 window columns),
 *       stride 2 and no column dilation (TW 2, 5), anything else (TW 1, 3 window columns at
 *       the dilated positions).
 *     + b0, act0, rounded to T, into the A tile (pixels x G channels, rows of AST bytes: an
 *     odd number of 16-byte chunks).
 *   stage 2: out[p][k1] = A[p][:] . w1[k1][:] on tensor cores (m16n8k16 mma.sync), w1 streamed
 *     through NS shared-memory buffers of 64 channels, NS chunks ahead, the first ones during
 *     stage 1, each buffer handed over by a full and an empty mbarrier (no block-wide barrier
 *     per chunk): on sm_90a one copy-engine copy per chunk, issued by one thread, into
 *     128-byte rows with the 128-byte swizzle (gconv_impl_ft_w1_setup; H100: 960@7 -> 160
 *     20.7 -> 16.6 us, the copy warps' cp.async instructions had been slowing the GEMM warps
 *     sharing their schedulers), else cp.async by the warps outside the GEMM grid into the
 *     same rows (or 144-byte unswizzled ones where no map is made); the first GW = 8 warps form
 *     a WM x (8 / WM) grid over (16-pixel m-tiles, 16-channel n-pairs), each warp MT x NP of
 *     them (MT <= 2, NP <= 4): per k-step MT + NP ldmatrix.x4 feed 2 * MT * NP mma (for small
 *     warp shapes a chunk's four k-steps unrolled, so that the next step's fragments load
 *     during this step's mma); the fp32 accumulators stay in registers over the whole K; then
 *     all 16 warps: + b1, the epilogue, stores.
 * One block per SM (128 registers a thread: the 4-channel stage 1 fits them, and 16 warps hide
 * the latencies that 8 warps of the 8-channel form left exposed, bench/NOTES.md); the plan
 * picks the rows per item from a cost model (stage-1 work, w1 bytes from L2, GEMM shared-memory
 * traffic, waves of one block per SM).
 *
 * Used by gconv/fused_fwd.h; needs a HIP or CUDA compiler.
 */
#ifndef GCONV_FUSED_TILE_H
#define GCONV_FUSED_TILE_H

#include "fused_rows.h"

#define GCONV_IMPL_FT_THREADS 512
#define GCONV_IMPL_FT_NW (GCONV_IMPL_FT_THREADS / 32) /* warps */
/* warps that run stage 2's mma (the others only issue w1 copies and meet the barriers): a grid
 * of 16 warps reads twice the fragments from shared memory per mma of a grid of 8, and the
 * k-loop is bound by shared-memory bandwidth (bench/NOTES.md) */
#define GCONV_IMPL_FT_GW 8
/* the threads of the other warps, which copy w1 */
#define GCONV_IMPL_FT_CT (GCONV_IMPL_FT_THREADS - GCONV_IMPL_FT_GW * 32)
/* The default search tries the tile kernel first for outputs of at most FIRSTPX pixels per
 * image (there it beats the row kernel, whose columns are short: H100, MobileNetV2 384@14 ->
 * 64 19 against 23 us; 192@28 -> 32 43 against 32), else after the row kernel for K1 above
 * MINK1 (bench/NOTES.md) */
#define GCONV_IMPL_FT_FIRSTPX 256
#define GCONV_IMPL_FT_MINK1 128
#define GCONV_IMPL_FT_MTMAX 2      /* m-tiles per warp */
#define GCONV_IMPL_FT_NPMAX 4      /* n-pairs (16 channels) per warp */
#define GCONV_IMPL_FT_PTMAX 128    /* pixels per item */
#define GCONV_IMPL_FT_SMEM GCONV_IMPL_SMEM_MAX /* one block per SM (registers) */
#ifndef GCONV_IMPL_FT_NS
/* w1 chunk buffers, all in flight during stage 1. H100, 384@14 / 576@14 / 960@7 with 3 / 4 / 6
 * of them (NS - 1 then flying during stage 1): 15.3-15.4 / 15.4-15.6 / 15.9-16.0 us, 21.8 /
 * 21.9-22.1 / 22.5, 20.7 / 20.8 / 20.9: more buffers leave less L1 to stage 1; 2 buffers let
 * the GEMM wait on w1 (960@7 21.8; bench/NOTES.md) */
#define GCONV_IMPL_FT_NS 3
#endif
#define GCONV_IMPL_FT_KC 64        /* w1 channels per streamed chunk */
#define GCONV_IMPL_FT_WST 144      /* bytes per w1 chunk row: 8 chunks + 1 (odd) */
#define GCONV_IMPL_FT_SPANMAX 6    /* stage-1 window columns per task */

typedef struct gconv_impl_ft_params {
#if defined(GCONV_PLATFORM_CUDA)
    CUtensorMap w1map;       /* twm: w1 as [K1][GK], boxes of 64 channels x K1t rows, 128-byte
                                swizzle (gconv_impl_ft_w1_setup) */
#endif
    const void *in, *w0, *b0, *w1, *b1;
    void *out;
    gconv_epilogue epi;      /* final epilogue */
    gconv_epilogue mid;      /* alpha 1, no D, act0 */
    int GK, K1, H, W, OH, OW, ph, pw;
    int in_n, in_h, in_w;    /* input strides in elements (channels contiguous) */
    int out_n, out_h, out_w, out_c;
    int pair;                /* out_c == 1, K1 even: 32-bit stores of channel pairs */
    int plain;               /* the epilogue is a plain store (alpha 1, no D, no act) */
    int vec;                 /* pair, and 8 channels of a pixel are one aligned 16-byte store */
    int sh, sw, dh, dw;      /* stride, dilation */
    int form, segs;          /* stage-1 form (3: rolling, stride and dilation 1, TW 2; per
                              * task: 1: column stride 1, TW 4; 2: column stride 2, TW 2; 0:
                              * any, TW 1), units / tasks (runs of TW output columns) per
                              * output row */
    int w0vec;               /* w0 16-byte aligned: the taps by 16-byte loads */
    int cvs, cv4s, L;        /* 8-channel vectors (A tile chunks), 4-channel vectors (stage-1
                              * threads per pixel), stage-1 lanes per vector (per task) */
    int RT, rblocks, K1t, k1tiles, items; /* item geometry */
    int PTp, AST, mtiles, nps, WM, MT, NP, nkc; /* GEMM: pixels (multiple of 16), A row
                                                 * bytes, m-tiles, n-pairs per K1 tile, warp
                                                 * grid, tiles per warp, w1 chunks */
    int twm, wst;            /* twm: the w1 ring's rows are 128 bytes, their 16-byte chunks
                              * swizzled (chunk c of row r at c ^ (r % 8)), each chunk one
                              * copy-engine copy by one thread where it can run (sm_90a, buffers
                              * 1024-byte aligned), else the copy warps' cp.async to the same
                              * places; wst: bytes per ring row, set from twm by
                              * gconv_impl_ft_smem_plan (kept in the parameters so that the
                              * kernel reads it as a constant: selecting it from twm there cost
                              * 20 bytes of spills) */
    float row;               /* 1 / OW */
    int woff, b1off, mbo, smem; /* shared memory: A at 0, NS w1 buffers, b1, 2 NS mbarriers */
} gconv_impl_ft_params;

/* Shared-memory plan for RT rows and the ring form F->twm (the C tile of the epilogue reuses
 * the A tile and w1 buffers; the swizzled ring starts 1024-byte aligned); returns the bytes. */
static inline int gconv_impl_ft_smem_plan(gconv_impl_ft_params *F, int RT)
{
    const int k1r = (F->K1t + 15) / 16 * 16;
    int cbytes;
    F->RT = RT;
    F->PTp = (RT * F->OW + 15) / 16 * 16;
    cbytes = F->PTp * (F->K1t + (F->K1t % 32 == 0 ? 8 : 24)) * 4; /* C tile */
    F->woff = F->twm ? (F->PTp * F->AST + 1023) & ~1023 : F->PTp * F->AST;
    F->wst = F->twm ? GCONV_IMPL_FT_KC * 2 : GCONV_IMPL_FT_WST; /* 8 chunks, or 8 + 1 */
    F->b1off = F->woff + GCONV_IMPL_FT_NS * k1r * F->wst;
    if (F->b1off < cbytes)
        F->b1off = cbytes;
    F->mbo = (F->b1off + k1r * 4 + 7) / 8 * 8;
    F->smem = F->mbo + 2 * GCONV_IMPL_FT_NS * 8;
    return F->smem;
}

/* The warp grid for mtiles x nps (16 x 16) tiles: WM warps along m (8 / WM along n), MT x NP
 * tiles per warp (at most MTMAX x NPMAX); the fewest mma per warp, then the fewest ldmatrix.
 * Returns 0 if no grid covers the tiles. */
static inline int gconv_impl_ft_warps(gconv_impl_ft_params *F, int mtiles, int nps)
{
    int wm, best = -1;
    for (wm = 1; wm <= GCONV_IMPL_FT_GW; wm *= 2) {
        const int wn = GCONV_IMPL_FT_GW / wm, mt = (mtiles + wm - 1) / wm, np = (nps + wn - 1) / wn;
        const int score = mt * np * 64 + mt + np;
        if (mt > GCONV_IMPL_FT_MTMAX || np > GCONV_IMPL_FT_NPMAX)
            continue;
        if (best < 0 || score < best)
            best = score, F->WM = wm, F->MT = mt, F->NP = np;
    }
    F->mtiles = mtiles, F->nps = nps;
    return best >= 0;
}

/* Fill F's K1 tiling and warp grid for RT rows: the fewest K1 tiles whose warp grid and
 * shared memory fit. Returns 0 if none does. */
static inline int gconv_impl_ft_fit(gconv_impl_ft_params *F, int RT)
{
    const int npall = (F->K1 + 15) / 16, mtiles = (RT * F->OW + 15) / 16;
    for (F->k1tiles = 1; F->k1tiles <= npall; F->k1tiles++) {
        const int nps = (npall + F->k1tiles - 1) / F->k1tiles;
        F->K1t = nps * 16;
        if (gconv_impl_ft_warps(F, mtiles, nps) &&
            gconv_impl_ft_smem_plan(F, RT) <= GCONV_IMPL_FT_SMEM)
            return 1;
    }
    return 0;
}

/* Tuning hook (internal, one per translation unit): r > 0 pins the tile kernel's rows per
 * item to r; where r is not an even cut of the output the tile kernel refuses the problem (the
 * search moves on to the next kernel). */
static int gconv_impl_ft_force_rt __attribute__((unused)) = 0;

/* Plan the tile kernel for problem p (the fused launcher has validated it). Returns 1 and fills
 * F if the problem is in scope, else 0. sms: the device's SM count. */
static inline int gconv_impl_ft_plan(const gconv_problem *p, int K1,
                                     const gconv_fused_fwd_args *a, gconv_dtype dt, int sms,
                                     gconv_impl_ft_params *F)
{
    gconv_act_strides si, so;
    int o[3], RT, best = -1;
    int64_t bcost = -1;
    memset(F, 0, sizeof *F);
    if (!gconv_impl_fb_scope(p, K1, a, dt, o, &si, &so))
        return 0;
    if (p->filter[1] != 3 || p->filter[2] != 3 || o[2] > GCONV_IMPL_FT_PTMAX)
        return 0;
    if (sms <= 0)
        sms = 80;
    GCONV_IMPL_FB_FILL(F, p, K1, a, o, si, so);
    F->vec = F->pair && K1 % 8 == 0 && so.n % 8 == 0 && so.s[1] % 8 == 0 && so.s[2] % 8 == 0 &&
             (uintptr_t)a->out % 16 == 0;
    F->sh = p->stride[1], F->sw = p->stride[2], F->dh = p->dilation[1], F->dw = p->dilation[2];
    F->form = F->dw != 1 ? 0 : F->sw == 1 ? 1 : F->sw == 2 ? 2 : 0;
    if (F->form == 1 && F->sh == 1 && F->dh == 1)
        F->form = 3;
    F->segs = F->form == 1 ? (F->OW + 3) / 4 : F->form >= 2 ? (F->OW + 1) / 2 : F->OW;
    F->w0vec = (uintptr_t)a->w0 % 16 == 0;
    F->cvs = F->GK / 8, F->cv4s = F->GK / 4;
    if (F->cv4s > GCONV_IMPL_FT_THREADS)
        return 0;
    F->L = GCONV_IMPL_FT_THREADS / F->cv4s;
    F->AST = (F->cvs + (F->cvs & 1) + 1) * 16;
    F->row = 1.0f / (float)F->OW;
    /* rows per item by a cost model in SM cycles (H100 / H200 orders of magnitude): stage 1
     * ~2 cycles per (pixel, channel vector); w1 from L2 at ~32 bytes per cycle per SM; the
     * GEMM's ldmatrix.x4 at 4 cycles each (512 bytes at 128 bytes per cycle), GW warps x
     * (MT + NP) per k-step; about 1500 cycles of fixed cost per item; waves of one block per
     * SM. */
    for (RT = GCONV_IMPL_FT_PTMAX / F->OW < F->OH ? GCONV_IMPL_FT_PTMAX / F->OW : F->OH; RT >= 1;
         RT--) {
        const int rblocks = (F->OH + RT - 1) / RT, rt = (F->OH + rblocks - 1) / rblocks;
        int64_t items, waves, s1, w1, gm, cost;
        if (rt != RT || (gconv_impl_ft_force_rt > 0 && RT != gconv_impl_ft_force_rt) ||
            !gconv_impl_ft_fit(F, RT))
            continue;
        items = (int64_t)p->N * rblocks * F->k1tiles;
        waves = (items + sms - 1) / sms;
        s1 = (int64_t)RT * F->OW * F->cvs * 2;
        w1 = (int64_t)F->K1t * F->GK / 16;
        gm = (int64_t)((F->cvs + 1) / 2) * 4 * GCONV_IMPL_FT_GW * (F->MT + F->NP);
        cost = waves * (s1 + (w1 > gm ? w1 : gm) + 1500);
        if (bcost < 0 || cost < bcost)
            bcost = cost, best = RT;
    }
    if (best < 0 || !gconv_impl_ft_fit(F, best))
        return 0;
    F->rblocks = (F->OH + best - 1) / best;
    F->nkc = (F->GK + GCONV_IMPL_FT_KC - 1) / GCONV_IMPL_FT_KC;
    if ((int64_t)p->N * F->rblocks * F->k1tiles > 0x7fffffffLL)
        return 0;
    F->items = p->N * F->rblocks * F->k1tiles;
    return 1;
}

/* Whether the default search tries the tile kernel before the row kernel (see FIRSTPX). */
static inline int gconv_impl_ft_first(const gconv_problem *p)
{
    int o[3];
    gconv_out_sizes(p, o);
    return (int64_t)o[0] * o[1] * o[2] <= GCONV_IMPL_FT_FIRSTPX;
}

/* Test hook (internal, one per translation unit): nonzero keeps the w1 ring on the copy
 * warps' cp.async in the unswizzled 144-byte rows (gconv_impl_ft_w1_setup). */
static int gconv_impl_ft_no_w1tma __attribute__((unused)) = 0;

/* The w1 ring by the copy engine: each 64-channel chunk of the K1 tile's w1 rows is one tiled
 * copy issued by one thread (a 2-D map of w1, boxes of 64 channels x K1t rows, rows past K1
 * and channels past GK as the engine's zeros) into 128-byte rows with the 128-byte swizzle,
 * the GEMM's ldmatrix addresses XORed to match. It replaces the 256 copy threads' ~70
 * instructions per chunk (160 rows of 16-byte cp.async with their tests, at 960@7 more
 * instructions than the GEMM warps issue in the k loop) with one. Lays the ring out again
 * (1024-byte aligned, 128-byte rows) and sets F->twm where the map encodes and the shared
 * memory fits; the kernel falls back to cp.async into the same swizzled rows in device passes
 * without the copy engine. dt: the 16-bit type. */
static inline void gconv_impl_ft_w1_setup(gconv_impl_ft_params *F, gconv_dtype dt)
{
#if GCONV_IMPL_WS_HOST
    const int k1r = (F->K1t + 15) / 16 * 16;
    cuuint64_t dim[2], gs[1];
    cuuint32_t box[2];
    if (gconv_impl_ft_no_w1tma || k1r > 256)
        return;
    dim[0] = (cuuint64_t)F->GK, dim[1] = (cuuint64_t)F->K1;
    gs[0] = (cuuint64_t)F->GK * 2;
    box[0] = GCONV_IMPL_FT_KC, box[1] = (cuuint32_t)k1r;
    F->twm = 1;
    if (gconv_impl_ft_smem_plan(F, F->RT) <= GCONV_IMPL_FT_SMEM &&
        gconv_impl_ws_tiled(&F->w1map, dt, F->w1, 2, dim, gs, box, CU_TENSOR_MAP_SWIZZLE_128B,
                            CU_TENSOR_MAP_L2_PROMOTION_L2_256B))
        return;
    F->twm = 0; /* the plan's own layout back */
    (void)gconv_impl_ft_smem_plan(F, F->RT);
#else
    (void)F, (void)dt;
#endif
}

#if GCONV_IMPL_IGEMM_MATH == GCONV_IMPL_MATH_MMA

/* Issue the copy of w1 chunk kc (channels kc * KC .., rows k10 .. k10 + K1t - 1) into the
 * buffer at shared address wb: rows of WST bytes, 16-byte pieces, zeros past K1 or G. Thread t
 * of the CT copy threads copies piece t % 8 of rows t / 8, t / 8 + CT / 8, ... (pointers
 * stepped, no divisions). */
static __device__ __forceinline__ void gconv_impl_ft_issue_w1(const gconv_impl_ft_params *F,
                                                              unsigned wb, int k10, int kc, int t)
{
    const int RSTEP = GCONV_IMPL_FT_CT / 8;
    const unsigned short *w1 = (const unsigned short *)F->w1;
    const int rows = (F->K1t + 15) / 16 * 16, kmax = min(F->K1t, F->K1 - k10);
    const int c = t & 7, ch = kc * GCONV_IMPL_FT_KC + c * 8, chok = ch < F->GK;
    const int wst = F->wst;
    int r = t >> 3;
    const unsigned short *src = w1 + ((size_t)(k10 + r) * F->GK + ch);
    /* twm: chunk c of row r at c ^ (r % 8); RSTEP is a multiple of 8, so r % 8 stays */
    unsigned dst = wb + (unsigned)(r * wst + (F->twm ? c ^ (r & 7) : c) * 16);
    for (; r < rows; r += RSTEP, src += (size_t)RSTEP * F->GK, dst += RSTEP * wst) {
        const int ok = chok && r < kmax;
        gconv_impl_igemm_cp_async16(dst, ok ? src : w1, ok);
    }
}

/* Load one input row of a stage-1 task: SPAN 8-byte vectors (4 channels) at columns iw0 + j *
 * cstep of input row ih (zeros outside the image) into x[j][0..1]; base points at the thread's
 * channels of image n. inside: the task's whole window is inside the image (no tests). */
static __device__ __forceinline__ void gconv_impl_ft_row(uint32_t (*x)[4],
                                                         const unsigned short *base,
                                                         const gconv_impl_ft_params *F, int ih,
                                                         int iw0, int cstep, int inside,
                                                         const int SPAN)
{
    if (inside) {
        const unsigned short *rp = base + ih * F->in_h + iw0 * F->in_w;
        const int step = cstep * F->in_w;
#pragma unroll
        for (int j = 0; j < SPAN; j++) {
            const uint2 v = *(const uint2 *)(rp + j * step);
            x[j][0] = v.x, x[j][1] = v.y;
        }
    } else {
        const int rowok = (unsigned)ih < (unsigned)F->H;
        const unsigned short *rp = base + (rowok ? ih * F->in_h : 0);
#pragma unroll
        for (int j = 0; j < SPAN; j++) {
            const int iw = iw0 + j * cstep;
            uint2 v = make_uint2(0u, 0u);
            if (rowok && (unsigned)iw < (unsigned)F->W)
                v = *(const uint2 *)(rp + iw * F->in_w);
            x[j][0] = v.x, x[j][1] = v.y;
        }
    }
}

/* Whether task (output row h, first window column iw0) reads only inside the image. */
static __device__ __forceinline__ int gconv_impl_ft_inside(const gconv_impl_ft_params *F, int h,
                                                           int iw0, int cstep, const int SPAN)
{
    const int ih0 = h * F->sh - F->ph;
    return ih0 >= 0 && ih0 + 2 * F->dh < F->H && iw0 >= 0 && iw0 + (SPAN - 1) * cstep < F->W;
}

/* The 9 taps and b0 of channels cv4 * 4 .. + 3 in fp32 (tap[t][0 .. 3], bv[0 .. 3]: rows of
 * 8 as gconv_impl_dw_fma_row takes them; the unused half is never touched and costs no
 * registers). C = K = 1: both weight layouts keep channel g's 9 taps at g * 9 .. g * 9 + 8,
 * so the thread's 36 taps are 72 contiguous bytes (8-byte aligned where w0 is 16-byte
 * aligned). */
static __device__ __forceinline__ void gconv_impl_ft_taps(const gconv_impl_ft_params *F,
                                                          const gconv_dtype dt, int cv4,
                                                          float (*tap)[8], float *bv)
{
    if (F->w0vec) {
        uint32_t w[18];
        const char *src = (const char *)((const unsigned short *)F->w0 + cv4 * 36);
#pragma unroll
        for (int i = 0; i < 9; i++)
            gconv_impl_ld_raw(w + 2 * i, src + 8 * i, 8);
#pragma unroll
        for (int j = 0; j < 4; j++)
#pragma unroll
            for (int t = 0; t < 9; t++)
                tap[t][j] = gconv_impl_raw_elem(w, j * 9 + t, dt);
    } else {
#pragma unroll
        for (int j = 0; j < 4; j++)
#pragma unroll
            for (int t = 0; t < 9; t++)
                tap[t][j] = gconv_impl_dev_load(dt, F->w0, (cv4 * 4 + j) * 9 + t);
    }
#pragma unroll
    for (int j = 0; j < 4; j++)
        bv[j] = F->b0 ? gconv_impl_dev_load(dt, F->b0, cv4 * 4 + j) : 0.0f;
}

/* 4 intermediate values m (act0 applied), rounded to T, as 8 bytes at dst. */
static __device__ __forceinline__ void gconv_impl_ft_st4(unsigned char *dst, const float *m,
                                                         const gconv_dtype dt)
{
    *(uint2 *)dst =
        make_uint2(gconv_impl_fb_pack(m[0], m[1], dt), gconv_impl_fb_pack(m[2], m[3], dt));
}

/* act0 of 4 intermediate values m, rounded to T, stored as 8 bytes into the A tile at byte
 * offset off (pixel (oh, ow) of image n, channels c .. c + 3). */
static __device__ __forceinline__ void gconv_impl_ft_put4(const gconv_impl_ft_params *F,
                                                          const gconv_dtype dt,
                                                          gconv_impl_epi_fn midfn,
                                                          const int MIDB, unsigned char *A,
                                                          int off, float *m, int c, int n,
                                                          int oh, int ow)
{
    gconv_impl_fb_act(m, &F->mid, dt, midfn, MIDB, c, n, oh, ow, 4);
    gconv_impl_ft_st4(A + off, m, dt);
}

/* Stage 1 of one item in a per-task form (SW, TW) (literals; SW = TW = 1 is the general form,
 * whose window columns are cstep = dw apart): see the header. */
static __device__ __forceinline__ void gconv_impl_ft_stage1(
    const gconv_impl_ft_params *F, const gconv_dtype dt, gconv_impl_epi_fn midfn, const int MIDB,
    unsigned char *A, float (*tap)[8], const float *bv, int n, int h0, int rows, int cv4, int pl,
    const int SW, const int TW)
{
    const int SPAN = (TW - 1) * SW + 3;
    const int segs = F->segs, L = F->L, ntasks = rows * segs, OW = F->OW;
    const int cstep = TW == 1 ? F->dw : 1, colstep = TW == 1 ? F->sw : TW * SW;
    const unsigned short *base = (const unsigned short *)F->in + n * F->in_n + cv4 * 4;
    uint32_t x[3][GCONV_IMPL_FT_SPANMAX][4];
    int task = pl, r = pl / segs, s = pl - (pl / segs) * segs;
    if (task < ntasks) {
        const int in0 = gconv_impl_ft_inside(F, h0 + r, s * colstep - F->pw, cstep, SPAN);
#pragma unroll
        for (int ky = 0; ky < 3; ky++)
            gconv_impl_ft_row(x[ky], base, F, (h0 + r) * F->sh - F->ph + ky * F->dh,
                              s * colstep - F->pw, cstep, in0, SPAN);
    }
#pragma unroll 1
    while (task < ntasks) {
        /* the next task (rows of segs tasks; L may exceed segs) */
        int tn = task + L, rn = r, sn = s + L, inn;
        float acc[4][8];
        while (sn >= segs)
            sn -= segs, rn++;
        inn = gconv_impl_ft_inside(F, h0 + rn, sn * colstep - F->pw, cstep, SPAN);
#pragma unroll
        for (int t = 0; t < TW; t++)
#pragma unroll
            for (int j = 0; j < 4; j++)
                acc[t][j] = bv[j];
#pragma unroll
        for (int ky = 0; ky < 3; ky++) {
            gconv_impl_dw_fma_row(acc, x[ky], tap + 3 * ky, dt, 4, 3, SW, TW);
            /* this row is consumed: the next task's row ky flies from here */
            if (tn < ntasks)
                gconv_impl_ft_row(x[ky], base, F, (h0 + rn) * F->sh - F->ph + ky * F->dh,
                                  sn * colstep - F->pw, cstep, inn, SPAN);
        }
#pragma unroll
        for (int t = 0; t < TW; t++) {
            const int c = s * TW + t;
            if (TW == 1 || c < OW)
                gconv_impl_ft_put4(F, dt, midfn, MIDB, A, (r * OW + c) * F->AST + cv4 * 8,
                                   acc[t], cv4 * 4, n, h0 + r, c);
        }
        task = tn, r = rn, s = sn;
    }
}

/* Rolling form, one input row into x: 4 window columns of 8 bytes (4 channels) at input row
 * ih; wb points at window column 0 of input row 0 (possibly outside the image), column j is
 * j * in_w further, read where the row is inside the image and bit j of colok is set, zeros
 * elsewhere. The addresses are a row base and a stride (nothing to keep per column). */
static __device__ __forceinline__ void gconv_impl_ft_rrow(uint32_t (*x)[2],
                                                         const unsigned short *wb,
                                                         const gconv_impl_ft_params *F, int ih,
                                                         unsigned colok)
{
    const int rowok = (unsigned)ih < (unsigned)F->H;
    const unsigned short *rp = wb + ih * F->in_h; /* read only where rowok */
#pragma unroll
    for (int j = 0; j < 4; j++) {
        uint2 v = make_uint2(0u, 0u);
        if (rowok && ((colok >> j) & 1u))
            v = *(const uint2 *)(rp + j * F->in_w);
        x[j][0] = v.x, x[j][1] = v.y;
    }
}

/* Rolling form, output row r of the item (columns c0, c0 + 1, channels cv4 * 4 ..): act0 of
 * m, rounded, into the A tile (column c0 + 1 only inside the image). With the built-in act0
 * the kind is tested once for both columns. */
static __device__ __forceinline__ void gconv_impl_ft_rput(const gconv_impl_ft_params *F,
                                                         const gconv_dtype dt,
                                                         gconv_impl_epi_fn midfn,
                                                         const int MIDB, unsigned char *A,
                                                         float (*m)[4], int r, int c0, int cv4,
                                                         int n, int h0)
{
    const int two = c0 + 1 < F->OW, off = (r * F->OW + c0) * F->AST + cv4 * 8;
    if (MIDB) {
        gconv_impl_fb_act(&m[0][0], &F->mid, dt, midfn, 1, cv4 * 4, n, h0 + r, c0, 8);
    } else {
        gconv_impl_fb_act(m[0], &F->mid, dt, midfn, 0, cv4 * 4, n, h0 + r, c0, 4);
        if (two)
            gconv_impl_fb_act(m[1], &F->mid, dt, midfn, 0, cv4 * 4, n, h0 + r, c0 + 1, 4);
    }
    gconv_impl_ft_st4(A + off, m[0], dt);
    if (two)
        gconv_impl_ft_st4(A + off + F->AST, m[1], dt);
}

/* Rolling form: one filter row's taps (tap[0..2], 4 channels) over the converted window xf
 * into the accumulators a of one output row (columns 0, 1: window columns t .. t + 2). */
static __device__ __forceinline__ void gconv_impl_ft_rfma(float (*a)[4], float (*xf)[4],
                                                          float (*tap)[8])
{
#pragma unroll
    for (int t = 0; t < 2; t++)
#pragma unroll
        for (int kx = 0; kx < 3; kx++)
#pragma unroll
            for (int v = 0; v < 4; v++)
                a[t][v] = fmaf(xf[t + kx][v], tap[kx][v], a[t][v]);
}

/* Rolling form, piece-local input row j (in buffer xb[P], P = j % 3 a literal: the caller
 * unrolls the walk by 3): converted once, then the loads of row j + 2 (if any) are issued into
 * the buffer of row j - 1 (consumed), so that two rows of loads are in flight. Row j starts
 * output row j in slot S0 = P (b0 + its taps of filter row 0), adds filter row 1 into row j - 1
 * (slot S1 = (P + 2) % 3) and filter row 2 into row j - 2 (slot S2 = (P + 1) % 3), which is
 * then complete and goes to the A tile (item row ra + j - 2). Rows outside [0, nr) do not
 * exist. Padding rows and columns arrive as zeros (as in the per-task form). */
static __device__ __forceinline__ void gconv_impl_ft_rstep(
    const gconv_impl_ft_params *F, const gconv_dtype dt, gconv_impl_epi_fn midfn, const int MIDB,
    unsigned char *A, float (*tap)[8], const float *bv, float (*acc)[2][4],
    uint32_t (*xb)[4][2], int j, int nr, int ra, int n, int h0, int c0, int cv4,
    const unsigned short *wb, int ih0, unsigned colok, const int P)
{
    const int S0 = P, S1 = (P + 2) % 3, S2 = (P + 1) % 3;
    float xf[4][4];
#pragma unroll
    for (int q = 0; q < 4; q++)
#pragma unroll
        for (int v = 0; v < 4; v++)
            xf[q][v] = gconv_impl_raw_elem(xb[P][q], v, dt);
    if (j + 2 < nr + 2)
        gconv_impl_ft_rrow(xb[(P + 2) % 3], wb, F, ih0 + j + 2, colok);
    /* output column t of a row takes window columns t .. t + 2 (kx = q - t) */
    if (j < nr) {
#pragma unroll
        for (int t = 0; t < 2; t++)
#pragma unroll
            for (int v = 0; v < 4; v++)
                acc[S0][t][v] = bv[v];
        gconv_impl_ft_rfma(acc[S0], xf, tap);
    }
    if (j >= 1 && j <= nr)
        gconv_impl_ft_rfma(acc[S1], xf, tap + 3);
    if (j >= 2) {
        gconv_impl_ft_rfma(acc[S2], xf, tap + 6);
        gconv_impl_ft_rput(F, dt, midfn, MIDB, A, acc[S2], ra + j - 2, c0, cv4, n, h0);
    }
}

/* Stage 1 of one item in the rolling form (stride 1, dilation 1): see the header. Units u =
 * s * cv4s + cv4 (channel vector cv4, output columns 2s, 2s + 1): in rounds q < full, thread t
 * walks unit q * THREADS + t over all the item's rows; the R units left are cut into pieces of
 * `size` rows, piece t going to thread t (R * chunks <= THREADS). */
static __device__ __forceinline__ void gconv_impl_ft_roll(const gconv_impl_ft_params *F,
                                                          const gconv_dtype dt,
                                                          gconv_impl_epi_fn midfn,
                                                          const int MIDB, unsigned char *A,
                                                          int n, int h0, int rows)
{
    const int tid = (int)threadIdx.x, T = GCONV_IMPL_FT_THREADS;
    const int U = F->cv4s * F->segs, full = U / T, R = U - full * T;
    int size = rows, chunks = 1;
    if (R > 0) {
        chunks = min(rows, T / R);
        size = (rows + chunks - 1) / chunks;
        chunks = (rows + size - 1) / size;
    }
#pragma unroll 1
    for (int q = 0; q <= full; q++) {
        int u, ra, rb;
        if (q < full) {
            u = q * T + tid, ra = 0, rb = rows;
        } else {
            const int ch = tid / max(R, 1);
            if (R == 0 || ch >= chunks)
                break;
            u = full * T + tid - ch * R, ra = ch * size, rb = min(rows, ra + size);
        }
        {
            const int s = u / F->cv4s, cv4 = u - s * F->cv4s, c0 = 2 * s, iw0 = c0 - F->pw;
            const int nr = rb - ra, ih0 = h0 + ra - F->ph;
            const unsigned short *base =
                (const unsigned short *)F->in + n * F->in_n + cv4 * 4;
            float tap[9][8], bv[8], acc[3][2][4];
            uint32_t xb[3][4][2];
            /* window column 0 of input row 0 (read only inside the image) */
            const unsigned short *wb = base + iw0 * F->in_w;
            unsigned colok = 0;
#pragma unroll
            for (int j = 0; j < 4; j++)
                colok |= (unsigned)((unsigned)(iw0 + j) < (unsigned)F->W) << j;
            gconv_impl_ft_rrow(xb[0], wb, F, ih0, colok);
            gconv_impl_ft_rrow(xb[1], wb, F, ih0 + 1, colok); /* nr + 2 >= 3 rows */
            gconv_impl_ft_taps(F, dt, cv4, tap, bv);
            /* input rows j = 0 .. nr + 1, unrolled by 3 (buffers and slots rotate) */
#pragma unroll 1
            for (int j = 0; j < nr + 2; j += 3) {
                gconv_impl_ft_rstep(F, dt, midfn, MIDB, A, tap, bv, acc, xb, j, nr, ra, n, h0, c0,
                                    cv4, wb, ih0, colok, 0);
                if (j + 1 >= nr + 2)
                    break;
                gconv_impl_ft_rstep(F, dt, midfn, MIDB, A, tap, bv, acc, xb, j + 1, nr, ra, n, h0,
                                    c0, cv4, wb, ih0, colok, 1);
                if (j + 2 >= nr + 2)
                    break;
                gconv_impl_ft_rstep(F, dt, midfn, MIDB, A, tap, bv, acc, xb, j + 2, nr, ra, n, h0,
                                    c0, cv4, wb, ih0, colok, 2);
            }
        }
    }
}

/* One k-step of stage 2: fragments af / bf (loaded for this step) into 2 * MT * NP mma. */
static __device__ __forceinline__ void gconv_impl_ft_mma(float (*acc)[GCONV_IMPL_FT_NPMAX][2][4],
                                                         unsigned (*af)[4], unsigned (*bf)[4],
                                                         const gconv_dtype dt, const int MT,
                                                         const int NP)
{
#pragma unroll
    for (int i = 0; i < MT; i++)
#pragma unroll
        for (int j = 0; j < NP; j++) {
            gconv_impl_halo_mma(acc[i][j][0], af[i], bf[j], dt);
            gconv_impl_halo_mma(acc[i][j][1], af[i], bf[j] + 2, dt);
        }
}

/* The fragments of global k-step kg for warp shape MT x NP: A from the A tile, B from buffer
 * wb, the lane's row ba[j] and its 16-byte chunk of the step at bo (see the caller). */
static __device__ __forceinline__ void gconv_impl_ft_frags(unsigned (*af)[4], unsigned (*bf)[4],
                                                           const unsigned *aa, const unsigned *ba,
                                                           unsigned wb, int kg, unsigned bo,
                                                           const int MT, const int NP)
{
#pragma unroll
    for (int i = 0; i < MT; i++)
        gconv_impl_igemm_ldsm_x4(aa[i] + (unsigned)(kg * 32), af[i]);
#pragma unroll
    for (int j = 0; j < NP; j++)
        gconv_impl_igemm_ldsm_x4(wb + ba[j] + bo, bf[j]);
}

/* Stage 2's k-loop for warp shape (MT, NP) (literals). w1 chunk kc lives in buffer b = kc % NS;
 * two mbarriers a buffer hand it over, so that no block-wide barrier paces the loop (15 of them
 * cost ~3 us at 960@7, bench/NOTES.md): full[b] completes when the copy threads' cp.async of the
 * chunk have landed (each copy thread arrives through cp.async.mbarrier.arrive), empty[b] when
 * every GEMM thread is done reading it. The copy warps (mma = 0) issue chunks NS .. nkc - 1,
 * chunk kc once empty says chunk kc - NS is consumed (chunks 0 .. NS - 1 flew during stage 1);
 * the GEMM warps wait on full, run the chunk's k-steps, MT + NP ldmatrix.x4 and 2 * MT * NP mma
 * each, into acc (aa / ba: the warp's ldmatrix addresses, see the caller), and arrive on empty.
 * For warp shapes of up to 4 tiles a whole chunk's four k-steps are unrolled
 * with two fragment sets, step ks + 1's loads issued before step ks's mma (one set and one
 * step at a time, each mma waited on its loads: bench/NOTES.md); larger shapes have the
 * registers of one set only, and enough mma per step to cover the loads. */
static __device__ __forceinline__ void gconv_impl_ft_gemm(
    const gconv_impl_ft_params *F, const gconv_dtype dt,
    float (*acc)[GCONV_IMPL_FT_NPMAX][2][4], const unsigned *aa, const unsigned *ba,
    unsigned bo0, unsigned smb, int k10, int mma, int tmaw, const int MT, const int NP)
{
    const int nks = (F->cvs + 1) / 2, KS = GCONV_IMPL_FT_KC / 16, NS = GCONV_IMPL_FT_NS;
    const int wbytes = (F->K1t + 15) / 16 * 16 * F->wst;
    const unsigned full0 = smb + (unsigned)F->mbo, empty0 = full0 + 8u * (unsigned)NS;
    if (!mma) {
        const int t = (int)threadIdx.x - GCONV_IMPL_FT_GW * 32;
        if (tmaw && t != 0)
            return;
#pragma unroll 1
        for (int kc = NS; kc < F->nkc; kc++) {
            const int b = kc % NS;
            gconv_impl_mbar_try_wait(empty0 + 8u * (unsigned)b, (unsigned)((kc - NS) / NS) & 1u);
#if GCONV_IMPL_HAS_WGMMA
            if (tmaw) {
                /* the chunk by one copy: the GEMM warps' generic reads of this buffer (ordered
                 * before by the empty barrier) before the engine's writes */
                asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
                gconv_impl_ws_bar_expect(full0 + 8u * (unsigned)b, (unsigned)wbytes);
                gconv_impl_ws_tma_b(smb + (unsigned)(F->woff + b * wbytes), &F->w1map,
                                    full0 + 8u * (unsigned)b, kc * GCONV_IMPL_FT_KC, k10);
                continue;
            }
#endif
            gconv_impl_ft_issue_w1(F, smb + (unsigned)(F->woff + b * wbytes), k10, kc, t);
            gconv_impl_mbar_cp_arrive(full0 + 8u * (unsigned)b);
        }
        return;
    }
#pragma unroll 1
    for (int kc = 0; kc < F->nkc; kc++) {
        const int b = kc % NS;
        const unsigned wb = smb + (unsigned)(F->woff + b * wbytes);
        const int kse = min(KS, nks - kc * KS), kg0 = kc * KS;
        gconv_impl_mbar_try_wait(full0 + 8u * (unsigned)b, (unsigned)(kc / NS) & 1u);
        if (kse == KS && MT * NP <= 4) {
            unsigned af[2][GCONV_IMPL_FT_MTMAX][4], bf[2][GCONV_IMPL_FT_NPMAX][4];
            gconv_impl_ft_frags(af[0], bf[0], aa, ba, wb, kg0, bo0, MT, NP);
#pragma unroll
            for (int ks = 0; ks < KS; ks++) {
                if (ks + 1 < KS)
                    gconv_impl_ft_frags(af[(ks + 1) & 1], bf[(ks + 1) & 1], aa, ba, wb,
                                        kg0 + ks + 1, bo0 ^ (unsigned)((ks + 1) << 5), MT, NP);
                gconv_impl_ft_mma(acc, af[ks & 1], bf[ks & 1], dt, MT, NP);
            }
        } else {
#pragma unroll 1
            for (int ks = 0; ks < kse; ks++) {
                unsigned af[GCONV_IMPL_FT_MTMAX][4], bf[GCONV_IMPL_FT_NPMAX][4];
                gconv_impl_ft_frags(af, bf, aa, ba, wb, kg0 + ks, bo0 ^ (unsigned)(ks << 5), MT,
                                    NP);
                gconv_impl_ft_mma(acc, af, bf, dt, MT, NP);
            }
        }
        /* this thread's reads of the buffer are done (the fragments are in registers) */
        gconv_impl_mbar_arrive(empty0 + 8u * (unsigned)b);
    }
}

/* The kernel body (3x3 filter). MIDB / EPIB as in the band kernel. */
static __device__ __forceinline__ void gconv_impl_ft_body(const gconv_impl_ft_params *F,
                                                          const gconv_dtype dt,
                                                          gconv_impl_epi_fn midfn,
                                                          gconv_impl_epi_fn epifn, const int MIDB,
                                                          const int EPIB)
{
    extern __shared__ __align__(128) unsigned char gconv_impl_ft_sm[];
    const int tid = (int)threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int cvs = F->cvs, AST = F->AST, OW = F->OW;
    const int cv4 = tid % F->cv4s, pl = tid / F->cv4s;
    /* the item: image n, row block rb, K1 tile kt */
    const int kt = (int)blockIdx.x % F->k1tiles;
    const int nr = (int)blockIdx.x / F->k1tiles;
    const int n = nr / F->rblocks, rb = nr - n * F->rblocks;
    const int h0 = rb * F->RT, rows = min(F->RT, F->OH - h0), npx = rows * OW;
    const int k10 = kt * F->K1t, k1r = (F->K1t + 15) / 16 * 16;
    const int wbytes = k1r * F->wst;
    const unsigned smb = gconv_impl_igemm_smem_addr(gconv_impl_ft_sm);
    float *b1s = (float *)(gconv_impl_ft_sm + F->b1off);
#if GCONV_IMPL_HAS_WGMMA
    /* w1 chunks by the copy engine (F->twm; the swizzle needs 1024-byte aligned buffers) */
    const int tmaw = F->twm && ((smb + (unsigned)F->woff) & 1023u) == 0;
#else
    const int tmaw = 0;
#endif
    if (dt == GCONV_F32)
        return;
    /* the w1 ring's mbarriers (see gconv_impl_ft_gemm): full[b] takes the arrivals of the CT
     * copy threads (or the one copy thread's with its bytes, tmaw), empty[b] those of the GEMM
     * warps' threads */
    if (tid == 0)
        for (int b = 0; b < GCONV_IMPL_FT_NS; b++) {
            gconv_impl_mbar_init(smb + (unsigned)(F->mbo + 8 * b), tmaw ? 1 : GCONV_IMPL_FT_CT);
            gconv_impl_mbar_init(smb + (unsigned)(F->mbo + 8 * (GCONV_IMPL_FT_NS + b)),
                                 GCONV_IMPL_FT_GW * 32);
        }
#if GCONV_IMPL_HAS_WGMMA
    /* the copy engine (async proxy) completes full[b]: make the initialised barriers visible
     * to it (the barrier below makes them visible to the block) */
    if (tmaw && tid == 0)
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
#endif
    __syncthreads();
    /* w1 chunks 0 .. NS - 1 fly during stage 1 */
#if GCONV_IMPL_HAS_WGMMA
    if (tmaw && tid == GCONV_IMPL_FT_GW * 32)
        for (int kc = 0; kc < GCONV_IMPL_FT_NS && kc < F->nkc; kc++) {
            gconv_impl_ws_bar_expect(smb + (unsigned)(F->mbo + 8 * kc), (unsigned)wbytes);
            gconv_impl_ws_tma_b(smb + (unsigned)(F->woff + kc * wbytes), &F->w1map,
                                smb + (unsigned)(F->mbo + 8 * kc), kc * GCONV_IMPL_FT_KC, k10);
        }
#endif
    if (!tmaw && warp >= GCONV_IMPL_FT_GW)
        for (int kc = 0; kc < GCONV_IMPL_FT_NS && kc < F->nkc; kc++) {
            gconv_impl_ft_issue_w1(F, smb + (unsigned)(F->woff + kc * wbytes), k10, kc,
                                   tid - GCONV_IMPL_FT_GW * 32);
            gconv_impl_mbar_cp_arrive(smb + (unsigned)(F->mbo + 8 * kc));
        }
    for (int idx = tid; idx < k1r; idx += GCONV_IMPL_FT_THREADS)
        b1s[idx] = F->b1 && idx < F->K1t && k10 + idx < F->K1
                       ? gconv_impl_dev_load(dt, F->b1, k10 + idx)
                       : 0.0f;
    /* an odd cvs: the pad chunk of every A row is zero (a k-step reads it against zero w1;
     * garbage could be NaN) */
    if (cvs & 1)
        for (int idx = tid; idx < F->PTp; idx += GCONV_IMPL_FT_THREADS)
            *(uint4 *)(gconv_impl_ft_sm + idx * AST + cvs * 16) = make_uint4(0u, 0u, 0u, 0u);
    /* stage 1 */
    if (F->form == 3) {
        gconv_impl_ft_roll(F, dt, midfn, MIDB, gconv_impl_ft_sm, n, h0, rows);
    } else if (pl < F->L) {
        float tap[9][8], bv[8];
        gconv_impl_ft_taps(F, dt, cv4, tap, bv);
        if (F->form == 1)
            gconv_impl_ft_stage1(F, dt, midfn, MIDB, gconv_impl_ft_sm, tap, bv, n, h0, rows, cv4,
                                 pl, 1, 4);
        else if (F->form == 2)
            gconv_impl_ft_stage1(F, dt, midfn, MIDB, gconv_impl_ft_sm, tap, bv, n, h0, rows, cv4,
                                 pl, 2, 2);
        else
            gconv_impl_ft_stage1(F, dt, midfn, MIDB, gconv_impl_ft_sm, tap, bv, n, h0, rows, cv4,
                                 pl, 1, 1);
    }
    /* stage 2: K in chunks of KC channels, NS - 1 chunks in flight while one computes. Warp
     * (wm, wn) owns m-tiles wm * MT .. + MT - 1 and n-pairs wn * NP .. + NP - 1, of which mtn x
     * npn exist (warp-uniform); the others are clamped to the last tile (computed, never
     * stored) so that the k-loop runs without guards */
    {
        const int WN = GCONV_IMPL_FT_GW / F->WM, wm = warp / WN, wn = warp - wm * WN;
        const int mt0 = wm * F->MT, np0 = wn * F->NP;
        /* warps from GW on: mtn <= 0, no mma and no C tile */
        const int mma = warp < GCONV_IMPL_FT_GW;
        const int mtn = mma ? min(F->MT, F->mtiles - mt0) : 0, npn = min(F->NP, F->nps - np0);
        const int CST = F->K1t + (F->K1t % 32 == 0 ? 8 : 24); /* C row stride (floats) */
        float acc[GCONV_IMPL_FT_MTMAX][GCONV_IMPL_FT_NPMAX][2][4];
        unsigned aa[GCONV_IMPL_FT_MTMAX], ba[GCONV_IMPL_FT_NPMAX];
        /* ldmatrix row addresses: A rows mt * 16 + lane % 16 at chunk lane / 16 (+ 2 per
         * k-step); w1 rows np * 16 + (lane / 16) * 8 + lane % 8 (ba, wst bytes each), the
         * chunk-local k-step ks's 16-byte chunk 2 ks + (lane / 8) % 2 (with twm XORed with the
         * row % 8 = lane % 8, the copy engine's 128-byte swizzle) at bo0 ^ (ks << 5): 2 ks
         * has bit 0 clear, so ((2 ks + h) ^ x) << 4 == ((h ^ x) << 4) ^ (ks << 5) */
        const unsigned bo0 = (unsigned)((((lane >> 3) & 1) ^ (F->twm ? lane & 7 : 0)) << 4);
#pragma unroll
        for (int i = 0; i < GCONV_IMPL_FT_MTMAX; i++) {
            const int mt = min(mt0 + i, F->mtiles - 1);
            aa[i] = smb + (unsigned)((mt * 16 + (lane & 15)) * AST + ((lane >> 4) << 4));
        }
#pragma unroll
        for (int j = 0; j < GCONV_IMPL_FT_NPMAX; j++) {
            const int np = min(np0 + j, F->nps - 1);
            ba[j] = (unsigned)((np * 16 + ((lane >> 4) << 3) + (lane & 7)) * F->wst);
        }
#pragma unroll
        for (int i = 0; i < GCONV_IMPL_FT_MTMAX; i++)
#pragma unroll
            for (int j = 0; j < GCONV_IMPL_FT_NPMAX; j++)
#pragma unroll
                for (int h = 0; h < 2; h++)
#pragma unroll
                    for (int e = 0; e < 4; e++)
                        acc[i][j][h][e] = 0.0f;
        /* the A tile is complete (and the pad chunks and b1 written) */
        __syncthreads();
        /* one copy of the k-loop per warp shape (literals: no guards, no reconvergence) */
        switch (F->MT * 8 + F->NP) {
        case 9: gconv_impl_ft_gemm(F, dt, acc, aa, ba, bo0, smb, k10, mma, tmaw, 1, 1); break;
        case 10: gconv_impl_ft_gemm(F, dt, acc, aa, ba, bo0, smb, k10, mma, tmaw, 1, 2); break;
        case 11: gconv_impl_ft_gemm(F, dt, acc, aa, ba, bo0, smb, k10, mma, tmaw, 1, 3); break;
        case 12: gconv_impl_ft_gemm(F, dt, acc, aa, ba, bo0, smb, k10, mma, tmaw, 1, 4); break;
        case 17: gconv_impl_ft_gemm(F, dt, acc, aa, ba, bo0, smb, k10, mma, tmaw, 2, 1); break;
        case 18: gconv_impl_ft_gemm(F, dt, acc, aa, ba, bo0, smb, k10, mma, tmaw, 2, 2); break;
        case 19: gconv_impl_ft_gemm(F, dt, acc, aa, ba, bo0, smb, k10, mma, tmaw, 2, 3); break;
        default: gconv_impl_ft_gemm(F, dt, acc, aa, ba, bo0, smb, k10, mma, tmaw, 2, 4); break;
        }
        /* the accumulators through shared memory (C tile: npx rows of CST floats over the A
         * tile and w1 buffers, which every warp has finished reading after this barrier), so
         * that the epilogue is one rolled loop (a small kernel: the unrolled per-fragment form
         * was mostly instruction-cache misses) and the stores are coalesced. acc[i][j][nt][e]
         * is pixel (mt0 + i) * 16 + lane / 4 (+ 8 for e >= 2), channel (np0 + j) * 16 +
         * nt * 8 + 2 * (lane % 4) (+ 1 for odd e) */
        __syncthreads();
        {
            float *C = (float *)gconv_impl_ft_sm;
#pragma unroll
            for (int i = 0; i < GCONV_IMPL_FT_MTMAX; i++)
#pragma unroll
                for (int j = 0; j < GCONV_IMPL_FT_NPMAX; j++)
                    if (i < mtn && j < npn)
#pragma unroll
                        for (int h = 0; h < 2; h++)
#pragma unroll
                            for (int nt = 0; nt < 2; nt++)
                                *(float2 *)(C + ((mt0 + i) * 16 + (lane >> 2) + 8 * h) * CST +
                                            (np0 + j) * 16 + nt * 8 + 2 * (lane & 3)) =
                                    make_float2(acc[i][j][nt][2 * h], acc[i][j][nt][2 * h + 1]);
            __syncthreads();
            if (EPIB && F->plain && F->vec) {
                /* a plain store of 16-byte vectors (8 channels; K1 and the tile start are
                 * multiples of 8): thread t takes vectors t, t + THREADS, ... of the item's npx x
                 * cpp. Cheaper than the per-pair form below, whose run-time tests sit around
                 * the inlined epilogue of every pair (bench/NOTES.md) */
                const int cpp = min(F->K1t, F->K1 - k10) / 8, nv = npx * cpp;
                const float rc = 1.0f / (float)cpp;
#pragma unroll 1
                for (int q = tid; q < nv; q += GCONV_IMPL_FT_THREADS) {
                    /* exact: q < 2^16 */
                    const int px = (int)(((float)q + 0.5f) * rc), v = q - px * cpp;
                    const int r = (int)(((float)px + 0.5f) * F->row), c = px - r * OW;
                    const float4 x0 = *(const float4 *)(C + px * CST + 8 * v);
                    const float4 x1 = *(const float4 *)(C + px * CST + 8 * v + 4);
                    const float4 c0 = *(const float4 *)(b1s + 8 * v);
                    const float4 c1 = *(const float4 *)(b1s + 8 * v + 4);
                    uint4 pk;
                    pk.x = gconv_impl_fb_pack(x0.x + c0.x, x0.y + c0.y, dt);
                    pk.y = gconv_impl_fb_pack(x0.z + c0.z, x0.w + c0.w, dt);
                    pk.z = gconv_impl_fb_pack(x1.x + c1.x, x1.y + c1.y, dt);
                    pk.w = gconv_impl_fb_pack(x1.z + c1.z, x1.w + c1.w, dt);
                    *(uint4 *)((unsigned short *)F->out + n * F->out_n + (h0 + r) * F->out_h +
                               c * F->out_w + k10 + 8 * v) = pk;
                }
            } else {
                /* warp w takes pixels w, w + NW, ...; lane l channel pairs l, l + 32, ... */
                const int hk = (min(F->K1t, F->K1 - k10) + 1) / 2;
#pragma unroll 1
                for (int px = warp; px < npx; px += GCONV_IMPL_FT_NW) {
                    /* exact: px < 2^16 */
                    const int r = (int)(((float)px + 0.5f) * F->row), c = px - r * OW;
                    const int oh = h0 + r;
                    const int pbase = n * F->out_n + oh * F->out_h + c * F->out_w;
#pragma unroll 1
                    for (int kp = lane; kp < hk; kp += 32) {
                        const float2 v = *(const float2 *)(C + px * CST + 2 * kp);
                        gconv_impl_fb_out2(&F->epi, epifn, EPIB && F->plain, dt, F->out, F->pair,
                                           F->out_c, F->K1, pbase, k10 + 2 * kp, v.x + b1s[2 * kp],
                                           v.y + b1s[2 * kp + 1], n, oh, c);
                    }
                }
            }
        }
    }
    gconv_impl_igemm_cp_wait(0);
}

#define GCONV_IMPL_FT_KERNEL(kname, T, MIDFN, EPIFN, MIDB, EPIB)                                 \
    static __global__ void __launch_bounds__(GCONV_IMPL_FT_THREADS, 1)                           \
        kname(const GCONV_IMPL_GRID_CONST gconv_impl_ft_params F)                                \
    {                                                                                            \
        gconv_impl_ft_body(&F, T, MIDFN, EPIFN, MIDB, EPIB);                                     \
    }

#else /* no mma.sync: the tile kernel is never planned (GCONV_IMPL_FB_ENABLE is 0) */

#define GCONV_IMPL_FT_KERNEL(kname, T, MIDFN, EPIFN, MIDB, EPIB)                                 \
    static __global__ void kname(const GCONV_IMPL_GRID_CONST gconv_impl_ft_params F)             \
    {                                                                                            \
        (void)F;                                                                                 \
    }

#endif

#endif /* GCONV_FUSED_TILE_H */
