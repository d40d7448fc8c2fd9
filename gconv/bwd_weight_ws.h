/* gconv/bwd_weight_ws.h: the warp-specialised backward-weight GEMM on Hopper (BWS).
 *
 * What is here: one kernel body, gconv_impl_bws_body, and its host plan, for the backward-weight
 * GEMM of gconv/bwd_weight.h (rows m = k, columns j = tap * C + c, reduction over the N *
 * output pixels) when the channels are plenty: NHWGC / GNHWC input and output gradient, fp16 /
 * bf16, C and K multiples of 8 and at least 64 (gconv_impl_bws_fits). gconv/bwd_weight.h tries it
 * ahead of its TC kernel, which runs mma.sync from ldmatrix.trans and measured 0.24-0.35x of
 * cuDNN on the dense layers (bench/NOTES.md).
 *
 * Block: 288 threads, as the forward's kernel of gconv/igemm_ws.h: two consumer warpgroups
 * (threads 0-255) run wgmma, one producer thread feeds a ring of stages with the copy engine
 * (TMA), and full / empty mbarriers pass the stages (the same protocol and helpers). One block
 * computes a 128 x BN tile of one group's d_wei: 128 output-gradient channels k (one m64 block
 * per consumer warpgroup) by BN input channels c of one tap (BN 64, 128 or 256), over one split's
 * run of stages of BK = GCONV_IMPL_BWS_BK (96) pixels (GCONV_IMPL_BWS_BK64 = 144 at BN 64):
 *   A  d_out, BK pixels x 64 channels per copy (two copies per stage), by a tiled copy of the
 *      output gradient seen as [pixels][G * K] (NHWGC) or [G][pixels][K] (GNHWC); pixels past
 *      the last one arrive as zeros, which zeroes their products whatever B holds;
 *   B  the input at those pixels' receptive-field positions for the block's tap, BK pixels x
 *      64 channels per copy (BN / 64 copies per stage), by the forward's im2col map
 *      (gconv_impl_ws_im2col) with the tap as the copy's offset.
 * Both operands land pixel-major: rows along the reduction index, 64 channels (128 bytes,
 * 128-byte swizzle) a row, i.e. MN-major for wgmma (the transpose immediates set; descriptors
 * from gconv_impl_igemm_wgmma_desc_mn: 8-row groups 1024 bytes apart, B's 64-channel blocks a
 * copy (BK * 128 bytes) apart). Channels past K or C in a tile (the next group's, or zeros)
 * make rows and columns that the epilogue does not write.
 *
 * Split-K: splits are runs of whole stages (P->ktc of them), so no stage straddles two splits
 * and only the last one reaches past the last pixel. The epilogue stages the fp32 tile in the
 * ring's memory and hands it over, each consumer thread one column quad of every RS-th row:
 * direct store with alpha / beta (one split) or one slab per split (in both reduction modes:
 * gconv_impl_bws_splits), four values at a time where the workspace is 16-byte aligned; then
 * gconv/bwd_weight.h's finalize kernel as for its other GEMM kernels. Or, where the tiles
 * fill whole rounds of the SMs and leave a tail (split-tail form, GCONV_IMPL_BWW_TAIL), only the
 * tail tiles are split: the whole tiles store final values, each tail part stores its fp32
 * tile whole into the workspace, and a finalize over the tail tiles sums the parts in order.
 * The number of splits comes from a cost model of rounds of blocks over the SMs, stage and
 * epilogue times and reduction traffic (gconv_impl_bws_splits).
 *
 * Where it runs: as gconv/igemm_ws.h (sm_90a device passes only; the host detects the real body
 * by its static shared memory; tensor maps encoded per launch). Include through
 * gconv/bwd_weight.h.
 */
/* Included first, this header includes gconv/bwd_weight.h, which includes it back at the point
 * where the parameters and helpers it uses are defined (that inner inclusion defines it). */
#ifndef GCONV_BWD_WEIGHT_WS_H
#include "bwd_weight.h"
#endif
#ifndef GCONV_BWD_WEIGHT_WS_H
#define GCONV_BWD_WEIGHT_WS_H

#include "igemm_ws.h"

/* pixels per stage at BN 128 and 256 (a multiple of 16, at most 256). 96: three 72 KB stages at
 * BN 256 (four of 48 KB at BN 128). H100, 2026-11-26, RetinaNet layers against 64 (four / five
 * stages) and 128 (two / three): K2376@100 357 / 314 / 484 us, K2376@50 106 / 97.5 / 144,
 * K256@100 46 / 42.4 / 54, K256@25 11.2 / 11.2 / 12.5 (bench/NOTES.md) */
#ifndef GCONV_IMPL_BWS_BK
#define GCONV_IMPL_BWS_BK 96
#endif
/* pixels per stage at BN 64 (a multiple of 16, at most 256). 144: four 54 KB stages. A stage's
 * copies, not its math, set its time at BN 64, and each stage has a fixed cost: H100,
 * 2026-11-27, K256@25 with one split 10.2-10.4 us at 96, 8.5 at 144, 8.9-9.4 at 192
 * (bench/NOTES.md) */
#ifndef GCONV_IMPL_BWS_BK64
#define GCONV_IMPL_BWS_BK64 144
#endif
/* pixels per stage of BN = bn, and one copy: that many pixel rows of 64 channels, 128 bytes
 * each */
#define GCONV_IMPL_BWS_BKN(bn) ((bn) == 64 ? GCONV_IMPL_BWS_BK64 : GCONV_IMPL_BWS_BK)
#define GCONV_IMPL_BWS_BOXN(bn) (GCONV_IMPL_BWS_BKN(bn) * 128)

/* Bytes of one stage: two d_out copies and bn / 64 input copies (the ring around it:
 * gconv_impl_ws_ring_stages / _ok / _smem with one block per SM). */
static inline GCONV_HD int gconv_impl_bws_stage_bytes(int bn)
{
    return (GCONV_IMPL_BWS_BM + bn) / 64 * GCONV_IMPL_BWS_BOXN(bn);
}

#if defined(GCONV_PLATFORM_CUDA)
/* Kernel parameters (a __grid_constant__): the two tensor maps, the backward-weight
 * parameters (P->mt, P->nt tiles per group, P->ktc stages per split, P->splits, P->mode), the
 * input map's rank and coordinate bases (gconv_impl_ws_im2col), the d_out map's rank (2:
 * [pixels][G * K], coordinates (g * K + k, pixel); 3: [G][pixels][K], coordinates (k, pixel,
 * g)). */
typedef struct gconv_impl_bws_params {
    CUtensorMap ta;
    CUtensorMap tb;
    gconv_impl_bww_params P;
    int rank, cbase, nbase;
    int drank;
} gconv_impl_bws_params;
#endif

#if GCONV_IMPL_HAS_WGMMA
/* The producer: stages k0 .. k0 + KT - 1 of tap `tap` for the tile (g, k rows m0.., channels
 * c0..). Stage q holds pixels BK q .. BK q + BK - 1: A at the stage's start (two copies of
 * BK * 128 bytes, k m0.. and m0 + 64..), B after it (BN / 64 copies, channels c0 + 64 b..). */
static __device__ __forceinline__ void gconv_impl_bws_produce(const gconv_impl_bws_params *W,
                                                              const int bn, const int S,
                                                              unsigned sbase, unsigned full0,
                                                              unsigned empty0, int g, int m0,
                                                              int tap, int c0, int k0, int KT)
{
    const gconv_impl_bww_params *P = &W->P;
    const int SB = gconv_impl_bws_stage_bytes(bn);
    const int x = tap % P->flt[2], y = tap / P->flt[2] % P->flt[1];
    const int z = tap / (P->flt[2] * P->flt[1]);
    const unsigned short ox = (unsigned short)(x * P->dil[2]);
    const unsigned short oy = (unsigned short)(y * P->dil[1]);
    const unsigned short oz = (unsigned short)(z * P->dil[0]);
    const int cch = g * W->cbase + c0;
    int kt, s = 0, use = 0, b;
    for (kt = 0; kt < KT; kt++) {
        const unsigned st = sbase + (unsigned)(s * SB), bar = full0 + 8u * (unsigned)s;
        const int r = (k0 + kt) * GCONV_IMPL_BWS_BKN(bn);
        int cw, ch, cd, cn;
        gconv_impl_ws_origin(P->out_sp, P->str, P->pad, r, g * W->nbase, &cw, &ch, &cd, &cn);
        if (kt >= S)
            gconv_impl_mbar_try_wait(empty0 + 8u * (unsigned)s, (unsigned)(use - 1) & 1u);
        gconv_impl_ws_bar_expect(bar, (unsigned)SB);
        if (W->drank == 2) {
            gconv_impl_ws_tma_b(st, &W->ta, bar, g * P->K + m0, r);
            gconv_impl_ws_tma_b(st + GCONV_IMPL_BWS_BOXN(bn), &W->ta, bar, g * P->K + m0 + 64,
                                r);
        } else {
            gconv_impl_ws_tma_3d(st, &W->ta, bar, m0, r, g);
            gconv_impl_ws_tma_3d(st + GCONV_IMPL_BWS_BOXN(bn), &W->ta, bar, m0 + 64, r, g);
        }
        for (b = 0; b < bn / 64; b++)
            gconv_impl_ws_tma_a(st + (unsigned)((2 + b) * GCONV_IMPL_BWS_BOXN(bn)), &W->tb, bar,
                                W->rank, cch + 64 * b, cw, ch, cd, cn, ox, oy, oz);
        if (++s == S)
            s = 0, ++use;
    }
}
#endif /* GCONV_IMPL_HAS_WGMMA */

#if defined(GCONV_PLATFORM_CUDA)
/* One block: one tile (gconv_impl_bws_tile) over one split: tile blockIdx.x over split
 * blockIdx.y, or in TAIL mode as described at the top of the body. bn: 64, 128 or 256, a literal
 * constant (the plan's P->tbn). */
static __device__ __forceinline__ void gconv_impl_bws_body(const gconv_impl_bws_params *W,
                                                           const int bn, const gconv_dtype dt)
{
#if GCONV_IMPL_HAS_WGMMA
    GCONV_IMPL_DYN_SMEM(smem_raw);
    __shared__ __align__(8) unsigned long long bars[2 * GCONV_IMPL_WS_MAX_STAGES];
    const gconv_impl_bww_params *P = &W->P;
    const int SB = gconv_impl_bws_stage_bytes(bn), S = gconv_impl_ws_ring_stages(SB, 1);
    const int tid = (int)threadIdx.x;
    const int64_t RT = (P->R + GCONV_IMPL_BWS_BKN(bn) - 1) / GCONV_IMPL_BWS_BKN(bn);
    /* TAIL mode: blocks 0 .. tail0 - 1 are whole tiles of their own index; block tail0 + q
     * is part q % splits of tile tail0 + q / splits. Otherwise blockIdx.y is the split */
    const int tail = P->mode == GCONV_IMPL_BWW_TAIL;
    const int part = tail && (int)blockIdx.x >= P->tail0;
    const int L = part ? P->tail0 + ((int)blockIdx.x - P->tail0) / P->splits : (int)blockIdx.x;
    const int split = part ? ((int)blockIdx.x - P->tail0) % P->splits
                           : tail ? 0 : (int)blockIdx.y;
    const int k0 = tail && !part ? 0 : split * P->ktc;
    const int KT = tail && !part ? (int)RT : (int)(RT - k0 < P->ktc ? RT - k0 : P->ktc);
    unsigned char *smem = smem_raw;
    unsigned sbase, full0, empty0;
    int g, m0, tap, c0;
    smem += (1024u - (gconv_impl_igemm_smem_addr(smem_raw) & 1023u)) & 1023u;
    sbase = gconv_impl_igemm_smem_addr(smem);
    full0 = gconv_impl_igemm_smem_addr(&bars[0]);
    empty0 = full0 + 8u * (unsigned)S;
    gconv_impl_bws_tile(P, L, &g, &m0, &tap, &c0); /* P->tbn == bn */
    gconv_impl_ws_init_bars(full0, empty0, S);

    if (tid >= GCONV_IMPL_WS_CONSUMERS) {
        if (tid == GCONV_IMPL_WS_CONSUMERS)
            gconv_impl_bws_produce(W, bn, S, sbase, full0, empty0, g, m0, tap, c0, k0, KT);
        return;
    }
    {
        const int wg = tid >> 7;
        const int NA = bn / 2; /* accumulators of the warpgroup's m64 x bn block */
        float acc[128];
        int kt, s = 0, use = 0, ps = 0, e;
        for (kt = 0; kt < KT; kt++) {
            const unsigned st = sbase + (unsigned)(s * SB);
            int ks;
            gconv_impl_mbar_try_wait(full0 + 8u * (unsigned)s, (unsigned)use & 1u);
            gconv_impl_ws_fence_acc(acc, NA);
            gconv_impl_igemm_wgmma_fence();
#pragma unroll
            for (ks = 0; ks < GCONV_IMPL_BWS_BKN(bn) / 16; ks++) {
                /* 16 pixels a step: two 8-row groups, 2048 bytes; B's 64-channel blocks a copy
                 * apart */
                const int box = GCONV_IMPL_BWS_BOXN(bn);
                const unsigned a = st + (unsigned)(wg * box + ks * 2048);
                const unsigned b = st + (unsigned)(2 * box + ks * 2048);
                const unsigned long long da = gconv_impl_igemm_wgmma_desc_mn(a, box);
                const unsigned long long db = gconv_impl_igemm_wgmma_desc_mn(b, box);
                gconv_impl_igemm_wgmma(acc, da, db, kt > 0 || ks > 0, bn, dt, 1);
            }
            gconv_impl_igemm_wgmma_commit();
            gconv_impl_ws_retire(acc, NA, kt, empty0 + 8u * (unsigned)ps);
            ps = s;
            if (++s == S)
                s = 0, ++use;
        }
        gconv_impl_igemm_wgmma_wait(0);
        gconv_impl_ws_fence_acc(acc, NA);
        gconv_impl_ws_sync_consumers(); /* no consumer reads the ring any more: stage C in it */
        {
            float *cs = (float *)smem;
            const int ld = bn + GCONV_IMPL_CPAD;
            gconv_impl_ws_stage_acc(acc, NA, cs, ld, wg * 64);
            gconv_impl_ws_sync_consumers();
            /* The hand-over. Consumer thread tid keeps one column quad (four consecutive c,
             * q = tid % NQ) and takes rows r0 = tid / NQ, r0 + RS, ... (RS = 256 / NQ): its
             * addresses step by a constant, so the unrolled loops below issue their loads and
             * stores independently. As one loop over flat quads with per-quad index maths it
             * was a chain of dependent integer instructions on 8 warps a SM: 3.5 us a block
             * for a one-split 128 x 128 fp16 tile, 6.8 us for 128 x 256 (H100, bench/NOTES.md
             * session 31; now 1.8 and 3.1). */
            const int NQ = bn / 4, RS = GCONV_IMPL_WS_CONSUMERS / NQ, q = tid % NQ;
            const int r0 = tid / NQ, c = c0 + 4 * q;
            const float *src = cs + r0 * ld + 4 * q;
            /* rows of d_wei this thread stores: k = m0 + r0 + RS it < K */
            const int nit = P->K - m0 - r0 <= 0 ? 0
                            : (P->K - m0 - r0 + RS - 1) / RS < GCONV_IMPL_BWS_BM / RS
                                ? (P->K - m0 - r0 + RS - 1) / RS
                                : GCONV_IMPL_BWS_BM / RS;
            /* flat d_wei index of (g, k = m0 + r0, tap, c): a multiple of 4 (C, c0 and c are);
             * c < C covers c + 3 */
            const int64_t i0 = ((int64_t)g * P->K + m0 + r0) * P->Ncol + tap * P->C + c;
            const int64_t istep = (int64_t)RS * P->Ncol;
            int it;
            if (part) {
                /* the whole partial tile as this part's slab of the split tile (rows and
                 * columns outside d_wei too: the finalize skips them), coalesced */
                float *w = P->ws + ((int64_t)(L - P->tail0) * P->splits + split) *
                                       (GCONV_IMPL_BWS_BM * bn);
                if (((uintptr_t)P->ws & 15u) == 0) {
                    float *d = w + r0 * bn + 4 * q;
#pragma unroll 8
                    for (it = 0; it < GCONV_IMPL_BWS_BM / RS; it++)
                        *(float4 *)(d + it * RS * bn) = *(const float4 *)(src + it * RS * ld);
                } else {
                    for (e = tid; e < GCONV_IMPL_BWS_BM * bn; e += GCONV_IMPL_WS_CONSUMERS)
                        w[e] = cs[e / bn * ld + e % bn];
                }
            } else if (c >= P->C) {
                /* columns past C: nothing of this thread's is in d_wei */
            } else if (tail || P->mode == GCONV_IMPL_BWW_DIRECT) {
                /* a whole tile (TAIL mode, or one split): final values, one 8- or 16-byte store
                 * a quad where d_wei is packed GKYXC and aligned (gconv_impl_bww_final4). The
                 * common case (beta 0, 16-bit d_wei) with the operands in registers: through
                 * gconv_impl_bww_final4 alone K256@13 s2 took 5.1 against 4.7 us, K2376@50
                 * 95.5 against 93.5 (H100, bench/NOTES.md session 31) */
                if (P->wflat && P->beta == 0.0f && P->tout != GCONV_F32 &&
                    (uintptr_t)P->dwei % 8u == 0) {
                    uint2 *d = (uint2 *)P->dwei + i0 / 4;
                    const int64_t dstep = istep / 4;
                    const float al = P->alpha;
                    const gconv_dtype to = P->tout;
#pragma unroll 8
                    for (it = 0; it < nit; it++) {
                        const float4 v = *(const float4 *)(src + it * RS * ld);
                        d[it * dstep] =
                            make_uint2(gconv_impl_igemm_to_bits(al * v.x, to) |
                                           (gconv_impl_igemm_to_bits(al * v.y, to) << 16),
                                       gconv_impl_igemm_to_bits(al * v.z, to) |
                                           (gconv_impl_igemm_to_bits(al * v.w, to) << 16));
                    }
                } else {
#pragma unroll 4
                    for (it = 0; it < nit; it++)
                        gconv_impl_bww_final4(P, i0 + it * istep,
                                              *(const float4 *)(src + it * RS * ld));
                }
            } else if (gconv_impl_bww_vec4_ok(P)) {
                /* partials: one 16-byte store a quad into this split's slab (the plan asks for
                 * slabs in both reduction modes: gconv_impl_bws_splits) */
                float *d = P->ws + (int64_t)split * P->total + i0;
#pragma unroll 8
                for (it = 0; it < nit; it++)
                    *(float4 *)(d + it * istep) = *(const float4 *)(src + it * RS * ld);
            } else {
                /* partials into a workspace that is not 16-byte aligned, element by element */
                for (it = 0; it < nit; it++) {
                    const float4 v = *(const float4 *)(src + it * RS * ld);
                    const int64_t gk = (int64_t)g * P->K + m0 + r0 + it * RS;
                    gconv_impl_bww_emit(P, split, gk, tap * P->C + c, v.x);
                    gconv_impl_bww_emit(P, split, gk, tap * P->C + c + 1, v.y);
                    gconv_impl_bww_emit(P, split, gk, tap * P->C + c + 2, v.z);
                    gconv_impl_bww_emit(P, split, gk, tap * P->C + c + 3, v.w);
                }
            }
        }
    }
#else
    (void)W, (void)bn, (void)dt;
#endif
}
#endif /* GCONV_PLATFORM_CUDA */

/* ---- host side ------------------------------------------------------------------------------ */

/* Test and tuning hook: -1 (default) lets gconv_impl_bws_pick choose the tile, 0 pins 128 x 128,
 * 1 pins 128 x 256, 3 pins 128 x 64, 2 turns the kernel off (the TC kernel runs instead). One
 * per translation unit. */
static int gconv_impl_bww_ws_pin GCONV_IMPL_FWD_UNUSED = -1;

/* Whether the BWS kernel may take p (pointers NULL: assumed aligned): CUDA with the 12.5+
 * runtime, fp16 / bf16, input and output gradient both NHWGC or both GNHWC with contiguous
 * channels and the N * output pixels in one stride, C and K multiples of 8 and at least 64
 * (every copy's first channel 16-byte aligned: the copy engine faults otherwise, measured with
 * C = 66 in NHWGC), 16-byte aligned pointers and pixel strides, fewer than 2^31 - 64 reduction
 * pixels (32-bit copy coordinates). */
static inline int gconv_impl_bws_fits(const gconv_problem *p, gconv_dtype dt, const void *in,
                                      const void *dout)
{
#if GCONV_IMPL_WS_HOST
    const gconv_layout fi = gconv_layout_family(gconv_in_layout(p));
    const gconv_layout fo = gconv_layout_family(gconv_out_layout(p));
    gconv_act_strides si, so;
    if (dt == GCONV_F32 || fi != fo || (fi != GCONV_NHWGC && fi != GCONV_GNHWC) || p->C < 64 ||
        p->K < 64 || p->C % 8 || p->K % 8 || ((uintptr_t)in | (uintptr_t)dout) % 16 ||
        (int64_t)p->N * gconv_out_spatial(p) >= 0x7fffffffLL - 64)
        return 0;
    si = gconv_in_strides(p), so = gconv_out_strides(p);
    if (si.c != 1 || so.c != 1 || si.s[2] % 8 || so.s[2] % 8 || so.g % 8 ||
        so.s[1] != (int64_t)gconv_out_len(p, 2) * so.s[2] ||
        so.s[0] != (int64_t)gconv_out_len(p, 1) * so.s[1] ||
        so.n != (int64_t)gconv_out_len(p, 0) * so.s[0])
        return 0;
    return 1;
#else
    (void)p, (void)dt, (void)in, (void)dout;
    return 0;
#endif
}

/* Test hook: a positive value replaces the device's SM count in the BWS plan (so that small
 * problems take the split-tail form); one per translation unit. */
static int gconv_impl_bws_sms_pin GCONV_IMPL_FWD_UNUSED = 0;
/* Tuning hook: 1 leaves the split-tail form out of the automatic choice (A/B runs). */
static int gconv_impl_bws_tail_off GCONV_IMPL_FWD_UNUSED = 0;

/* Splits and tile counts of the BWS kernel with BN = bn for a filled P (mode set too), by a
 * cost model in units of one 128 x 256 x BK stage (fitted at BK 64: 0.88 us on H100; the fit
 * was kept for BK 96, whose measured picks are the committed ones): rounds of blocks over
 * the SMs (one block each) times each block's stages (a 128 x 128 stage costs 0.7 of that, a
 * 128 x 64 one of GCONV_IMPL_BWS_BK64 = 144 pixels 0.45: H100, 2026-11-27)
 * plus its epilogue (hand-over of 128 x bn fp32 values, about 1.6 stages at bn = 256), plus
 * the reduction traffic of more than one split (slab writes at about 1.9 MB per stage time,
 * i.e. 2.2 TB/s, and half again for the finalize's reads). Fitted to split sweeps of the dense
 * RetinaNet layers (bench/NOTES.md, 2026-11-24). Partials always go to slabs, in fast mode too:
 * on every dense RetinaNet layer the slabs were as fast as the fp32 atomics or faster (K256@25:
 * 11.0 against 12.6-13.0 us, no workspace clearing before the launch; H100, 2026-11-26), at
 * `splits` times the workspace. Two forms:
 *   uniform: every tile in s parts of whole stages (the user's split_k, at most one per stage,
 *     or the best s of 1 .. min(RT, 256));
 *   split tail (automatic choice only, GCONV_IMPL_BWW_TAIL): where the tiles fill r0 >= 1
 *     whole rounds of the SMs and leave Tt more, the first r0 * sms tiles run whole and only
 *     the last Tt are split, s parts each, so the last round is not one of Tt long blocks on
 *     an idle machine (K2376@50: 171 tiles on 132 SMs, two rounds of 79 stages; with the 39
 *     tail tiles in 3 parts, 79 + 27). Deterministic as slabs are.
 * Returns the model's cost. */
static inline double gconv_impl_bws_splits(gconv_impl_bww_params *P, int bn, int user_split,
                                           int sms)
{
    const int64_t RT = (P->R + GCONV_IMPL_BWS_BKN(bn) - 1) / GCONV_IMPL_BWS_BKN(bn);
    const double ts = bn == 256 ? 1.0 : bn == 128 ? 0.7 : 0.45;
    const double te = bn == 256 ? 1.6 : bn == 128 ? 0.8 : 0.5;
    /* the user's count (at most RT), or 1 .. min(RT, 256) */
    const int64_t lo = user_split > 0 ? (user_split < RT ? user_split : RT) : 1;
    const int64_t hi = user_split > 0 ? lo : RT < 256 ? RT : 256;
    int64_t s, best_s = lo, tiles, r0, tt, tail_s = 0;
    double best = 0;
    if (gconv_impl_bws_sms_pin > 0)
        sms = gconv_impl_bws_sms_pin;
    if (sms <= 0)
        sms = 80;
    P->mt = (P->K + GCONV_IMPL_BWS_BM - 1) / GCONV_IMPL_BWS_BM;
    P->nt = P->taps * ((P->C + bn - 1) / bn);
    tiles = (int64_t)P->G * P->mt * P->nt;
    for (s = lo; s <= hi; s++) {
        const int64_t kps = (RT + s - 1) / s, s2 = (RT + kps - 1) / kps;
        const double rounds = (double)((tiles * s2 + sms - 1) / sms);
        double cost = rounds * ((double)kps * ts + te);
        if (s2 > 1)
            cost += (double)s2 * (double)P->total * 4.0 * 1.5 / 1.9e6;
        if (s == lo || cost < best)
            best = cost, best_s = s;
    }
    r0 = tiles / sms, tt = tiles - r0 * sms;
    if (user_split <= 0 && !gconv_impl_bws_tail_off && r0 >= 1 && tt > 0) {
        for (s = 2; s <= (RT < 64 ? RT : 64); s++) {
            const int64_t kps = (RT + s - 1) / s, s2 = (RT + kps - 1) / kps;
            const double rounds = (double)((tt * s2 + sms - 1) / sms);
            const double cost = (double)r0 * ((double)RT * ts + te) +
                                rounds * ((double)kps * ts + te) +
                                (double)(tt * s2) * GCONV_IMPL_BWS_BM * bn * 4.0 * 1.5 / 1.9e6;
            if (s2 > 1 && cost < best)
                best = cost, tail_s = s2, best_s = s;
        }
    }
    P->ktc = (int)((RT + best_s - 1) / best_s);
    P->splits = (int)((RT + P->ktc - 1) / P->ktc);
    P->chunk = (int64_t)P->ktc * GCONV_IMPL_BWS_BKN(bn);
    gconv_impl_bww_set_mode(P, 1); /* slabs in both reduction modes (above) */
    P->tail0 = 0, P->tbn = bn;
    if (tail_s > 0) {
        P->mode = GCONV_IMPL_BWW_TAIL, P->fl = 1;
        P->tail0 = (int)(r0 * sms);
    }
    return best;
}

/* BN for a filled P: the pinned one, else the cheaper by the cost model. */
static inline int gconv_impl_bws_pick(const gconv_impl_bww_params *P, int user_split)
{
    gconv_impl_bww_params Q = *P;
    const int sms = gconv_device_sm_count();
    double c64, c128, c256;
    /* (gconv_impl_bws_splits applies gconv_impl_bws_sms_pin) */
    if (gconv_impl_bww_ws_pin == 0 || gconv_impl_bww_ws_pin == 1 || gconv_impl_bww_ws_pin == 3)
        return gconv_impl_bww_ws_pin == 3 ? 64 : gconv_impl_bww_ws_pin ? 256 : 128;
    c128 = gconv_impl_bws_splits(&Q, 128, user_split, sms);
    c256 = gconv_impl_bws_splits(&Q, 256, user_split, sms);
    c64 = gconv_impl_bws_splits(&Q, 64, user_split, sms);
    return c256 <= c128 && c256 <= c64 ? 256 : c128 <= c64 ? 128 : 64;
}

#if GCONV_IMPL_WS_HOST
/* Fill W for a filled P (pointers set) and BN = bn: the plan (splits, tiles, mode) and the two
 * tensor maps. 0 when the copy engine cannot describe the problem or the ring does not fit a
 * lowered GCONV_IMPL_SMEM_MAX (the TC kernel runs then). */
static inline int gconv_impl_bws_plan(gconv_impl_bws_params *W, const gconv_impl_bww_params *P,
                                      int bn, int user_split)
{
    const int64_t N = P->R / ((int64_t)P->out_sp[0] * P->out_sp[1] * P->out_sp[2]);
    cuuint64_t dim[3], gs[2];
    cuuint32_t box[3];
    memset(W, 0, sizeof *W);
    W->P = *P;
    if (!gconv_impl_ws_ring_ok(gconv_impl_bws_stage_bytes(bn), 1, GCONV_IMPL_BWS_BM, bn))
        return 0;
    gconv_impl_bws_splits(&W->P, bn, user_split, gconv_device_sm_count());
    if ((int64_t)P->G * W->P.mt * W->P.nt > 0x7fffffffLL || W->P.splits > 65535)
        return 0;
    if (!gconv_impl_ws_im2col(&W->tb, P->tin, P->in, &P->si, P->in_sp, P->out_sp, P->flt,
                              P->str, P->dil, P->pad, P->G, P->C, N, GCONV_IMPL_BWS_BKN(bn),
                              &W->rank, &W->cbase, &W->nbase))
        return 0;
    box[0] = 64, box[1] = (cuuint32_t)GCONV_IMPL_BWS_BKN(bn), box[2] = 1;
    if (P->so.g == P->K) {
        /* NHWGC: [pixels][G * K]; a tile's channels past its group's K are the next group's */
        W->drank = 2;
        dim[0] = (cuuint64_t)P->G * P->K, dim[1] = (cuuint64_t)P->R;
        gs[0] = (cuuint64_t)P->so.s[2] * 2;
    } else {
        /* GNHWC: [G][pixels][K], channels past K read as zeros */
        W->drank = 3;
        dim[0] = (cuuint64_t)P->K, dim[1] = (cuuint64_t)P->R, dim[2] = (cuuint64_t)P->G;
        gs[0] = (cuuint64_t)P->so.s[2] * 2, gs[1] = (cuuint64_t)P->so.g * 2;
    }
    return gconv_impl_ws_tiled(&W->ta, P->tin, P->dout, W->drank, dim, gs, box,
                               CU_TENSOR_MAP_SWIZZLE_128B,
                               CU_TENSOR_MAP_L2_PROMOTION_L2_128B);
}
#endif /* GCONV_IMPL_WS_HOST */

#endif /* GCONV_BWD_WEIGHT_WS_H */
