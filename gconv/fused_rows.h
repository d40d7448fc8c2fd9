/* gconv/fused_rows.h: the row kernel of the fused depthwise -> pointwise forward
 * (gconv/fused_fwd.h), for 3x3 depthwise blocks whose pointwise weights fit on chip: each
 * thread streams its own input columns down the image as the forward depthwise kernel does
 * (gconv/direct_fwd.h, DW3), one output row at a time, and the block turns every finished
 * row into pointwise outputs on tensor cores. Tried before the band kernel
 * (gconv/fused_band.h), which keeps every other depthwise shape.
 *
 * Scope (gconv_impl_fr_plan says whether a problem fits): depthwise (C = K = 1 per group), G a
 * multiple of 8, groups contiguous in the input (NHWGC), 2D (3D with a trivial depth axis),
 * 3x3 filter, stride 1 or 2 on both axes, no dilation, any padding, fp16 / bf16, in / w1 16-byte
 * aligned, input and output under 2^31 elements, CUDA sm_80+ (cp.async, ldmatrix, mma.sync),
 * G / 8 * ceil(OWt / TW) <= 256 threads for a column segment of OWt outputs, and the whole
 * pointwise weight w1 (K1 x G) in shared memory next to the rest. Any output layout of the
 * family and any epilogue (applied per element).
 *
 * Work. A block takes one item: image n, column segment [ow0, ow0 + OWt), output rows
 * [h0, h0 + RH). Thread t owns channel vector cv = t % cvs (8 channels, 16 bytes) and output
 * columns ow0 + wt * TW .. + TW - 1 (wt = t / cvs) for the whole item, so its window columns,
 * taps and A-tile slots never change. Output row s of the item:
 *   stage 1: the thread's TW x 8 outputs of the 3x3 depthwise in fp32 from its ring (below),
 *     + b0, act0, rounded to T, into A[s % NA] (pixels x G channels); then the thread arrives
 *     on mbarrier s % NA;
 *   stage 2 of row s - 1 (one row behind, so that a warp rarely waits for the others): wait for
 *     mbarrier (s - 1) % NA (every thread has written that A), then (16-pixel m-tile,
 *     16-channel n-pair) units of the row's pointwise GEMM spread over the warps (m16n8k16
 *     mma.sync over all G channels, A and w1 by ldmatrix), + b1, the epilogue, stores of
 *     channel pairs.
 *   With NA = 4 A tiles no other barrier is needed: a thread writes A[s % NA] after it has
 *   waited on row s - 2, i.e. after every thread finished stage 1 of row s - 2, which each
 *   thread does after its stage 2 of row s - 4, the last reader of that tile. (Two tiles with
 *   a second mbarrier for "free again" fit more blocks per SM but couple the warps tighter:
 *   slower on every layer measured, bench/NOTES.md.) Phases cannot run ahead: arriving on
 *   mbarrier b for row s + NA needs the wait on row s + NA - 2, which completes only after
 *   every thread has arrived for row s.
 *
 * The ring. Each thread keeps NR = 3 + PD * SH input rows of its SPAN = (TW - 1) * SH + 3
 * window columns in shared memory ([slot][column][thread] in 16-byte units: a warp's accesses
 * are consecutive). Row k of the item's window goes to slot k % NR by cp.async, one commit
 * group per row; after the first NR groups, every output row commits SH more (empty past the
 * item's last window row), so "rows 0 .. s * SH + 2 have landed before output row s" is
 * always "all groups but the newest PD * SH". The row r's refill goes into the SH slots that
 * output row r read last.
 *
 * Shared memory: the rings (NR * SPAN * BT * 16 bytes), NA A tiles (OWp pixels, OWp = OWt
 * rounded up to 16, rows of AST bytes: the G channels padded to an odd number of 16-byte
 * chunks, so ldmatrix's 8 rows at one chunk fall in distinct bank groups), w1 (K1p rows of
 * AST bytes, zero rows past K1), b1 in fp32 and the NA mbarriers. The thread's taps and b0
 * live in registers.
 *
 * Used by gconv/fused_fwd.h; needs a HIP or CUDA compiler.
 */
#ifndef GCONV_FUSED_ROWS_H
#define GCONV_FUSED_ROWS_H

#include "fused_band.h"

#define GCONV_IMPL_FR_THREADS 256 /* at most, per block */
/* At stride 2 at most this many a block: more column segments, more and smaller blocks (H100,
 * 144@56 s2 -> 32: 30.2-30.4 -> 29.4-29.6 us; at stride 1 144@56 and 192@28 lost 5 %,
 * bench/NOTES.md session 33) */
#define GCONV_IMPL_FR_THREADS_S2 128
/* The narrow form (stride 1, two output columns a thread): at most this many threads a block,
 * and registers for two such blocks a SM (gconv_impl_fr_plan says where it runs) */
#define GCONV_IMPL_FR_THREADS_N 192
#define GCONV_IMPL_FR_SMEM GCONV_IMPL_SMEM_MAX
#define GCONV_IMPL_FR_NA 4      /* A tiles (see the barrier argument above) */
#define GCONV_IMPL_FR_TWMAX 4  /* output columns per thread (stride 1: 4, or 2 in the narrow
                                * form; stride 2: 2) */
#define GCONV_IMPL_FR_SPANMAX 6 /* window columns per thread: (TW - 1) * SH + 3 */

/* 0 leaves the row kernel out of the search (for measurements). */
#ifndef GCONV_IMPL_FR_ENABLE
#define GCONV_IMPL_FR_ENABLE 1
#endif

/* Output rows of prefetch in the rings (a tuning knob, 1 .. 3). H100, session 33: one row
 * against two, 32@112 55.5-56.0 -> 54.6-55.3 us, 144@56 54.5 -> 53.9-54.0, 144@56 s2 30.9-31.6
 * -> 30.2-30.4, 192@28 27.8 -> 27.5 (bench/NOTES.md) */
#ifndef GCONV_IMPL_FR_PD
#define GCONV_IMPL_FR_PD 1
#endif

typedef struct gconv_impl_fr_params {
    const void *in, *w0, *b0, *w1, *b1;
    void *out;
    gconv_epilogue epi;      /* final epilogue */
    gconv_epilogue mid;      /* alpha 1, no D, act0 */
    int GK, K1, H, W, OH, OW, ph, pw;
    int in_n, in_h, in_w;    /* input strides in elements (channels contiguous) */
    int out_n, out_h, out_w, out_c;
    int pair;                /* out_c == 1, K1 even: 32-bit stores of channel pairs */
    int plain;               /* the epilogue is a plain store (alpha 1, no D, no act) */
    int SH, TW, NR, SPAN;    /* stride, output columns per thread, ring slots, window columns */
    int l2pf;                /* ring copies ask L2 for 256 bytes (gconv_impl_l2pf) */
    int cvs, wts, BT;        /* channel vectors, column tiles, threads (cvs * wts rounded up) */
    int OWt, segs, RH, hchunks, items; /* item geometry */
    int OWp, K1p, AST, units; /* GEMM: pixels, channels (multiples of 16), A / w1 row bytes,
                               * 16 x 16 units */
    float rnps;              /* 16 / K1p: a unit's m-tile by multiplication */
    int aoff, w1off, b1off, baroff, smem; /* shared memory */
} gconv_impl_fr_params;

/* Shared-memory plan of F for its BT, TW, NR; returns the bytes. */
static inline int gconv_impl_fr_smem_plan(gconv_impl_fr_params *F)
{
    F->aoff = F->NR * F->SPAN * F->BT * 16;
    F->w1off = F->aoff + GCONV_IMPL_FR_NA * F->OWp * F->AST;
    F->b1off = F->w1off + F->K1p * F->AST;
    F->baroff = F->b1off + F->K1p * 4; /* 8-byte aligned: K1p is a multiple of 16 */
    F->smem = F->baroff + GCONV_IMPL_FR_NA * 8;
    return F->smem;
}

/* Column segments, block threads, A / w1 rows and shared memory of F (F->SH, NR, cvs, OW set)
 * for TW output columns a thread and blocks of at most cap threads (cvs <= cap). 0 if the
 * shared memory does not fit or w1 is over 64 KB. */
static inline int gconv_impl_fr_geom(gconv_impl_fr_params *F, int K1, int TW, int cap)
{
    F->TW = TW;
    F->SPAN = (TW - 1) * F->SH + 3;
    /* column segments: as few as keep a block within cap threads */
    F->wts = (F->OW + TW - 1) / TW;
    F->segs = (F->cvs * F->wts + cap - 1) / cap;
    for (;;) {
        F->OWt = (F->OW + F->segs - 1) / F->segs;
        F->OWt = (F->OWt + TW - 1) / TW * TW;
        F->wts = F->OWt / TW;
        if (F->cvs * F->wts <= cap)
            break;
        F->segs++;
    }
    F->segs = (F->OW + F->OWt - 1) / F->OWt;
    F->BT = (F->cvs * F->wts + 31) / 32 * 32;
    F->OWp = (F->OWt + 15) / 16 * 16;
    F->K1p = (K1 + 15) / 16 * 16;
    /* 16-byte chunks per row: cvs rounded up to even (whole 16-channel k-steps; the pad
     * chunk is zero in A and w1), + 1 (odd) */
    F->AST = (F->cvs + (F->cvs & 1) + 1) * 16;
    F->units = (F->OWp / 16) * (F->K1p / 16);
    F->rnps = 16.0f / (float)F->K1p;
    /* w1 above 64 KB (deep layers: few pixels per row, one block of few warps per SM) runs
     * faster in the band kernel (H200: 576@14 -> 96, 71 against 48 us) */
    return gconv_impl_fr_smem_plan(F) <= GCONV_IMPL_FR_SMEM && F->K1p * F->AST <= 64 * 1024;
}

/* Blocks of a planned F a SM by shared memory (1 KB reserved a block) and threads. */
static inline int gconv_impl_fr_bpsm(const gconv_impl_fr_params *F)
{
    int b = (228 * 1024) / (F->smem + 1024);
    if (b > 2048 / F->BT)
        b = 2048 / F->BT;
    return b < 1 ? 1 : b;
}

/* Plan the row kernel for problem p (the fused launcher has validated it). Returns 1 and fills
 * F if the problem is in scope, else 0. sms: the device's SM count. */
static inline int gconv_impl_fr_plan(const gconv_problem *p, int K1,
                                     const gconv_fused_fwd_args *a, gconv_dtype dt, int sms,
                                     gconv_impl_fr_params *F)
{
    gconv_act_strides si, so;
    int o[3], bpsm, best, hc, cap;
    memset(F, 0, sizeof *F);
    if (!GCONV_IMPL_FR_ENABLE || !gconv_impl_fb_scope(p, K1, a, dt, o, &si, &so))
        return 0;
    if (p->filter[1] != 3 || p->filter[2] != 3 || p->dilation[1] != 1 || p->dilation[2] != 1 ||
        p->stride[1] != p->stride[2] || (p->stride[1] != 1 && p->stride[1] != 2))
        return 0;
    if (sms <= 0)
        sms = 80;
    GCONV_IMPL_FB_FILL(F, p, K1, a, o, si, so);
    /* stride 1: 4 columns per thread (6 window columns: each converted element feeds 2 of
     * the 3 taps on average; 2 in the narrow form below); stride 2: 2 (5 window columns) to
     * keep the ring small */
    F->SH = p->stride[1];
    F->l2pf = gconv_impl_l2pf((long long)p->in[1] * p->in[2]);
    F->NR = 3 + GCONV_IMPL_FR_PD * F->SH;
    F->cvs = F->GK / 8;
    if (F->cvs > GCONV_IMPL_FR_THREADS)
        return 0;
    cap = F->SH == 2 && F->cvs <= GCONV_IMPL_FR_THREADS_S2 ? GCONV_IMPL_FR_THREADS_S2
                                                          : GCONV_IMPL_FR_THREADS;
    if (!gconv_impl_fr_geom(F, K1, F->SH == 1 ? 4 : 2, cap))
        return 0;
    bpsm = gconv_impl_fr_bpsm(F);
    /* stride 1 where the rings and A tiles of many channels leave one four-column block of
     * fewer than 8 warps a SM: the narrow form, two columns a thread in blocks of at most
     * GCONV_IMPL_FR_THREADS_N, if two of those fit a SM (H100, 192@28 -> 32: one block of 6
     * warps, 27.2 us, against two, 25.2-25.8; where the four-column blocks already had 8
     * warps, 144@56 and 32@112, two columns lost 20-27 %: each output converts 6 inputs
     * instead of 4.5; bench/NOTES.md session 33) */
    if (F->SH == 1 && bpsm == 1 && F->BT < 256 && F->cvs <= GCONV_IMPL_FR_THREADS_N) {
        gconv_impl_fr_params N2 = *F;
        if (gconv_impl_fr_geom(&N2, K1, 2, GCONV_IMPL_FR_THREADS_N) &&
            gconv_impl_fr_bpsm(&N2) >= 2) {
            *F = N2;
            bpsm = gconv_impl_fr_bpsm(F);
        }
    }
    /* rows per item: the fewest waves of (blocks per SM x SMs) slots, counting about two rows
     * of ring fill per item */
    best = -1;
    for (hc = 1; hc <= F->OH; hc++) {
        const int rh = (F->OH + hc - 1) / hc;
        const int64_t items = (int64_t)p->N * F->segs * hc;
        const int64_t slots = (int64_t)sms * bpsm;
        const int64_t cost = (items + slots - 1) / slots * (rh + 2);
        if (items > 0x7fffffffLL)
            break;
        if (best < 0 || cost < best) {
            best = (int)cost;
            F->hchunks = hc;
        }
        if (items >= 8 * slots)
            break;
    }
    if (best < 0)
        return 0;
    F->RH = (F->OH + F->hchunks - 1) / F->hchunks;
    F->hchunks = (F->OH + F->RH - 1) / F->RH;
    F->items = p->N * F->segs * F->hchunks;
    return 1;
}

#if GCONV_IMPL_IGEMM_MATH == GCONV_IMPL_MATH_MMA

/* Issue the ring copy of window row k (input row ih) into slot k % NR: the thread's SPAN
 * window columns (bit j of cmask: column j inside the image), zeros outside the image. */
static __device__ __forceinline__ void gconv_impl_fr_issue(uint4 *rt, int slot, int BT,
                                                           const unsigned short *in,
                                                           const unsigned short *cb, int ih,
                                                           int H, int in_h, int in_w,
                                                           unsigned cmask, int pf,
                                                           const int SPAN)
{
    const int rowok = (unsigned)ih < (unsigned)H;
    const unsigned short *rp = cb + (rowok ? ih * in_h : 0);
#pragma unroll
    for (int j = 0; j < SPAN; j++) {
        const int ok = rowok && ((cmask >> j) & 1u);
        gconv_impl_cp16_pf(rt + (slot * SPAN + j) * BT,
                           (const char *)(ok ? rp + j * in_w : in), ok, pf);
    }
}

/* Stage 2 of output row s (relative to the item): wait until every thread has written
 * A[s % NA], then units (m-tile mt, n-pair np: 16 pixels x 16 channels) of
 * out[px][k1] = A[px][:] . w1[k1][:], spread over the warps (the starting warp rotates with
 * s so that leftover units do not always fall on the same warps), + b1, the epilogue, stores. */
static __device__ __forceinline__ void gconv_impl_fr_gemm(const gconv_impl_fr_params *F,
                                                          const gconv_dtype dt,
                                                          gconv_impl_epi_fn epifn, const int EPIB,
                                                          unsigned smb, const float *b1s,
                                                          int s, unsigned fbar, int n, int h0,
                                                          int ow0, int wr, int lane)
{
    const int AST = F->AST, cvs = F->cvs, nw = F->BT / 32;
    const unsigned b = (unsigned)s % GCONV_IMPL_FR_NA;
    const unsigned abase = smb + (unsigned)F->aoff + b * (unsigned)(F->OWp * AST);
    const unsigned bbase = smb + (unsigned)F->w1off;
    const int oh = h0 + s, nks = cvs / 2 + (cvs & 1), nps = F->K1p / 16;
    gconv_impl_mbar_try_wait(fbar + b * 8u, ((unsigned)s / GCONV_IMPL_FR_NA) & 1u);
#pragma unroll 1
    for (int u = wr; u < F->units; u += nw) {
        /* exact: u < 2^16, so u + 0.5 stays 0.5 / nps away from a multiple of nps */
        const int mt = (int)(((float)u + 0.5f) * F->rnps), np = u - mt * nps;
        float acc[2][4], bq[2][2];
#pragma unroll
        for (int i = 0; i < 2; i++)
#pragma unroll
            for (int e = 0; e < 4; e++)
                acc[i][e] = 0.0f;
#pragma unroll 2
        for (int ks = 0; ks < nks; ks++) {
            unsigned a[4], r[4];
            /* a 16-channel k-step; an odd cvs's last one reads the zero pad chunk */
            gconv_impl_igemm_ldsm_x4(
                abase + (unsigned)((mt * 16 + (lane & 15)) * AST + ((2 * ks + (lane >> 4)) << 4)), a);
            gconv_impl_igemm_ldsm_x4(
                bbase + (unsigned)((np * 16 + ((lane >> 4) << 3) + (lane & 7)) * AST +
                                   ((2 * ks + ((lane >> 3) & 1)) << 4)),
                r);
            gconv_impl_halo_mma(acc[0], a, r, dt);
            gconv_impl_halo_mma(acc[1], a, r + 2, dt);
        }
        /* acc[nt][e]: pixel mt*16 + lane/4 (+8 for e >= 2), channel np*16 + nt*8 + 2*(lane%4)
         * (+1 for odd e); b1 of those channels (zeros past K1) */
#pragma unroll
        for (int nt = 0; nt < 2; nt++) {
            const float2 v = *(const float2 *)(b1s + np * 16 + nt * 8 + 2 * (lane & 3));
            bq[nt][0] = v.x, bq[nt][1] = v.y;
        }
        if (EPIB && F->plain && F->pair) {
            /* the plain store on its own, with the address formed once per unit: the general
             * form below (per-pair tests of plain / pair around the inlined epilogue) cost
             * more than the unit's mma and sent the hot loop across its cold code (H100,
             * 32@112 -> 16: 43 % of the stall samples, bench/NOTES.md). Channel pairs:
             * K1 is even, so k1 < K1 covers both. */
            const int k1 = np * 16 + 2 * (lane & 3), px = mt * 16 + (lane >> 2);
            unsigned *o = (unsigned *)F->out +
                          ((n * F->out_n + oh * F->out_h + (ow0 + px) * F->out_w + k1) >> 1);
            const int hw = 4 * F->out_w; /* 8 pixels on, in 32-bit words */
#pragma unroll
            for (int h = 0; h < 2; h++)
                if (px + 8 * h < F->OWt && ow0 + px + 8 * h < F->OW)
#pragma unroll
                    for (int nt = 0; nt < 2; nt++)
                        if (k1 + 8 * nt < F->K1)
                            o[h * hw + 4 * nt] =
                                gconv_impl_fb_pack(acc[nt][2 * h] + bq[nt][0],
                                                   acc[nt][2 * h + 1] + bq[nt][1], dt);
            continue;
        }
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int px = mt * 16 + (lane >> 2) + 8 * h, ow = ow0 + px;
            if (px < F->OWt && ow < F->OW) {
                const int pbase = n * F->out_n + oh * F->out_h + ow * F->out_w;
#pragma unroll
                for (int nt = 0; nt < 2; nt++) {
                    const int k1 = np * 16 + nt * 8 + 2 * (lane & 3);
                    if (k1 < F->K1)
                        gconv_impl_fb_out2(&F->epi, epifn, EPIB && F->plain, dt, F->out, F->pair,
                                           F->out_c, F->K1, pbase, k1, acc[nt][2 * h] + bq[nt][0],
                                           acc[nt][2 * h + 1] + bq[nt][1], n, oh, ow);
                }
            }
        }
    }
}

/* The kernel body for stride SH and TW columns per thread (literals). MIDB / EPIB as in the
 * band kernel: midfn / epifn are the built-in act0 / epilogue (cheaper inlined forms). */
static __device__ __forceinline__ void gconv_impl_fr_body(const gconv_impl_fr_params *F,
                                                          const gconv_dtype dt,
                                                          gconv_impl_epi_fn midfn,
                                                          gconv_impl_epi_fn epifn, const int MIDB,
                                                          const int EPIB, const int SH,
                                                          const int TW)
{
    extern __shared__ __align__(128) unsigned char gconv_impl_fr_sm[];
    const int SPAN = (TW - 1) * SH + 3, NR = 3 + GCONV_IMPL_FR_PD * SH;
    const int tid = (int)threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int BT = F->BT, cvs = F->cvs, AST = F->AST;
    const int cv = tid % cvs, wt = tid / cvs;
    const int active = tid < cvs * F->wts;
    /* the item: image n, segment seg, row chunk hc (consecutive blocks: neighbouring rows) */
    const int hc = (int)blockIdx.x % F->hchunks;
    const int ns = (int)blockIdx.x / F->hchunks;
    const int n = ns / F->segs, seg = ns - n * F->segs;
    const int h0 = hc * F->RH, rows = min(F->RH, F->OH - h0);
    const int ow0 = seg * F->OWt;
    const int M = (rows - 1) * SH + 3;   /* window rows of the item */
    const int r0 = h0 * SH - F->ph;      /* input row of window row 0 */
    const int wo = ow0 + wt * TW;        /* the thread's first output column */
    const unsigned short *in = (const unsigned short *)F->in;
    uint4 *rt = (uint4 *)gconv_impl_fr_sm + tid;
    float *b1s = (float *)(gconv_impl_fr_sm + F->b1off);
    const unsigned smb = gconv_impl_igemm_smem_addr(gconv_impl_fr_sm);
    /* NA mbarriers: A[b] is full */
    const unsigned fbar = smb + (unsigned)F->baroff;
    const unsigned short *cb = in;
    float tap[9][8], bv[8];
    unsigned cmask = 0;
    int k = 0;     /* window rows issued */
    int kslot = 0; /* the ring slot of window row k (k % NR) */
    int sb = 0;    /* the ring slot of output row s's top window row (s * SH % NR) */
    int wr = warp; /* this warp's first stage-2 unit (rotates with the row) */
    if (dt == GCONV_F32)
        return;
    /* the ring's first NR rows fly while the weights are staged */
    if (active) {
        const int iw0 = wo * SH - F->pw;
#pragma unroll
        for (int j = 0; j < SPAN; j++)
            if ((unsigned)(iw0 + j) < (unsigned)F->W)
                cmask |= 1u << j;
        cb = in + n * F->in_n + iw0 * F->in_w + cv * 8;
    }
#pragma unroll 1
    for (; k < NR; k++) {
        if (active && k < M)
            gconv_impl_fr_issue(rt, k, BT, in, cb, r0 + k, F->H, F->in_h, F->in_w, cmask,
                                F->l2pf, SPAN);
        gconv_impl_cp_commit();
    }
    /* w1 (K1p rows of G channels, zeros past K1) by 16-byte vectors; b1 to fp32; the
     * mbarriers */
    {
        const uint4 *w1 = (const uint4 *)F->w1;
        int idx;
        const int ce = cvs + (cvs & 1); /* chunks read by the k-steps */
        for (idx = tid; idx < F->K1p * ce; idx += BT) {
            const int r = idx / ce, c = idx - r * ce;
            uint4 v = make_uint4(0u, 0u, 0u, 0u);
            if (r < F->K1 && c < cvs)
                v = w1[(size_t)r * cvs + c];
            *(uint4 *)(gconv_impl_fr_sm + F->w1off + r * AST + c * 16) = v;
        }
        /* an odd cvs: the pad chunk of every A row is zero (NaN garbage times a zero weight
         * would not be) */
        if (cvs & 1)
            for (idx = tid; idx < GCONV_IMPL_FR_NA * F->OWp; idx += BT)
                *(uint4 *)(gconv_impl_fr_sm + F->aoff + idx * AST + cvs * 16) =
                    make_uint4(0u, 0u, 0u, 0u);
        for (idx = tid; idx < F->K1p; idx += BT)
            b1s[idx] = F->b1 && idx < F->K1 ? gconv_impl_dev_load(dt, F->b1, idx) : 0.0f;
        if (tid < GCONV_IMPL_FR_NA)
            gconv_impl_mbar_init(fbar + (unsigned)tid * 8u, BT);
    }
    /* the thread's 9 taps and b0 of its 8 channels stay in registers for the item (with
     * C = K = 1 both weight layouts keep channel g's taps at g * 9 .. g * 9 + 8) */
#pragma unroll
    for (int j = 0; j < 8; j++) {
#pragma unroll
        for (int t = 0; t < 9; t++)
            tap[t][j] = gconv_impl_dev_load(dt, F->w0, (cv * 8 + j) * 9 + t);
        bv[j] = F->b0 ? gconv_impl_dev_load(dt, F->b0, cv * 8 + j) : 0.0f;
    }
    __syncthreads();
#pragma unroll 1
    for (int s = 0; s < rows; s++) {
        unsigned char *A =
            gconv_impl_fr_sm + F->aoff + (unsigned)s % GCONV_IMPL_FR_NA * (unsigned)(F->OWp * AST);
        /* stage 1: rows s*SH .. s*SH + 2 of the window have landed (all groups but the newest
         * NR - 3 = PD * SH) */
        gconv_impl_cp_wait(GCONV_IMPL_FR_PD * SH);
        if (active) {
            float acc[GCONV_IMPL_FR_TWMAX][8];
#pragma unroll
            for (int t = 0; t < GCONV_IMPL_FR_TWMAX; t++)
#pragma unroll
                for (int j = 0; j < 8; j++)
                    acc[t][j] = 0.0f;
#pragma unroll
            for (int ky = 0; ky < 3; ky++) {
                const int slot = sb + ky < NR ? sb + ky : sb + ky - NR;
                uint32_t row[GCONV_IMPL_FR_SPANMAX][4];
#pragma unroll
                for (int j = 0; j < SPAN; j++) {
                    const uint4 x = rt[(slot * SPAN + j) * BT];
                    row[j][0] = x.x, row[j][1] = x.y, row[j][2] = x.z, row[j][3] = x.w;
                }
                gconv_impl_dw_fma_row(acc, row, tap + 3 * ky, dt, 8, 3, SH, TW);
            }
            {
#pragma unroll
                for (int t = 0; t < TW; t++) {
                    const int px = wt * TW + t;
                    float m[8];
                    uint4 pk;
#pragma unroll
                    for (int j = 0; j < 8; j++)
                        m[j] = acc[t][j] + bv[j];
                    /* a user act0 only sees real positions: columns past OW (the last
                     * segment's padding, never stored) stay zero */
                    if (!MIDB && wo + t >= F->OW)
                        pk = make_uint4(0u, 0u, 0u, 0u);
                    else
                        pk = gconv_impl_fb_mid8(m, &F->mid, dt, midfn, MIDB, cv * 8, n, h0 + s,
                                                wo + t, 8);
                    *(uint4 *)(A + px * AST + cv * 16) = pk;
                }
            }
        }
        /* refill the SH slots whose rows output row s read last (always SH groups, some
         * empty, so that the wait above stays a constant) */
#pragma unroll
        for (int i = 0; i < SH; i++) {
            if (active && k < M)
                gconv_impl_fr_issue(rt, kslot, BT, in, cb, r0 + k, F->H, F->in_h, F->in_w,
                                    cmask, F->l2pf, SPAN);
            k++;
            kslot = kslot + 1 == NR ? 0 : kslot + 1;
            gconv_impl_cp_commit();
        }
        sb = sb + SH < NR ? sb + SH : sb + SH - NR;
        /* this thread's part of A[s % NA] is written: arrive; then the GEMM of the row
         * before, once every thread has arrived on it */
        gconv_impl_mbar_arrive(fbar + (unsigned)s % GCONV_IMPL_FR_NA * 8u);
        if (s > 0) {
            gconv_impl_fr_gemm(F, dt, epifn, EPIB, smb, b1s, s - 1, fbar, n, h0, ow0, wr, lane);
            wr = wr + 1 == BT / 32 ? 0 : wr + 1;
        }
    }
    if (rows > 0)
        gconv_impl_fr_gemm(F, dt, epifn, EPIB, smb, b1s, rows - 1, fbar, n, h0, ow0, wr, lane);
    gconv_impl_cp_wait(0);
}

/* One row kernel: stride SH, TW columns a thread, blocks of at most MAXT threads and MINB a SM
 * (the narrow form: GCONV_IMPL_FR_THREADS_N, 2, so that its registers fit two blocks). */
#define GCONV_IMPL_FR_KERNEL(kname, T, MIDFN, EPIFN, MIDB, EPIB, SH, TW, MAXT, MINB)             \
    static __global__ void __launch_bounds__(MAXT, MINB) kname(gconv_impl_fr_params F)           \
    {                                                                                            \
        gconv_impl_fr_body(&F, T, MIDFN, EPIFN, MIDB, EPIB, SH, TW);                             \
    }

#else /* no mma.sync: the row kernel is never planned (GCONV_IMPL_FB_ENABLE is 0) */

#define GCONV_IMPL_FR_KERNEL(kname, T, MIDFN, EPIFN, MIDB, EPIB, SH, TW, MAXT, MINB)             \
    static __global__ void kname(gconv_impl_fr_params F)                                         \
    {                                                                                            \
        (void)F;                                                                                 \
    }

#endif

#endif /* GCONV_FUSED_ROWS_H */
