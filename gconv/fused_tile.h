/* gconv/fused_tile.h: the tile kernel of the fused depthwise -> pointwise forward
 * (gconv/fused_fwd.h), for 3x3 depthwise blocks on small images with many channels and many
 * output channels (the last MobileNet layers: 7x7, 960 channels, K1 160), where the row kernel
 * (gconv/fused_rows.h) cannot keep w1 on chip and the band kernel (gconv/fused_band.h) gets
 * tiles of 32 pixels. Tried after the row kernel and before the band kernel, for K1 above
 * GCONV_IMPL_FT_MINK1.
 *
 * Scope (gconv_impl_ft_plan): the shared scope of gconv_impl_fb_scope (depthwise, G a multiple
 * of 8, NHWGC input, 2D, fp16 / bf16, in / w1 16-byte aligned, CUDA sm_80+), a 3x3 filter with
 * any stride, dilation and padding, at most 128 output columns (one segment), and G small
 * enough that a tile of at least one output row of intermediate values fits on chip.
 *
 * Work. A block takes one item: image n, output rows [h0, h0 + RT) (all OW columns: PT = RT * OW
 * pixels), and a tile [k10, k10 + K1t) of the pointwise channels (more than one only where the
 * accumulators would not fit; each recomputes stage 1). Two phases:
 *   stage 1: thread t owns channel vector cv = t % cvs for the whole item (its 9 taps and b0
 *     in registers) and the pixels p = t / cvs, + L, + 2L, ... (L = 256 / cvs lanes per
 *     vector); for each pixel the 9 input vectors come straight from global memory (16-byte
 *     loads; neighbours' overlapping windows hit L1), then + b0, act0, rounded to T, into the A
 *     tile (PT pixels x G channels, rows of AST bytes: an odd number of 16-byte chunks);
 *   stage 2: out[p][k1] = A[p][:] . w1[k1][:] on tensor cores (m16n8k16 mma.sync), w1 streamed
 *     through NS shared-memory buffers of 64 channels (cp.async, NS - 1 chunks ahead); warp w
 *     owns (16-pixel m-tile, 16-channel n-pair) units w, w + 8, ... (at most UMAX), their fp32
 *     accumulators in registers over the whole K; then + b1, the epilogue, stores.
 * One block per SM (registers); items are sized so that there are about as many as SMs.
 *
 * Used by gconv/fused_fwd.h; needs a HIP or CUDA compiler.
 */
#ifndef GCONV_FUSED_TILE_H
#define GCONV_FUSED_TILE_H

#include "fused_rows.h"

#define GCONV_IMPL_FT_THREADS 256
/* The default search takes the tile kernel only above this K1: there the band kernel's tiles
 * shrink to 32 pixels (H200, 960@7 -> 160: 43 against 54 us; 576@14 -> 96: 63 against 48) */
#define GCONV_IMPL_FT_MINK1 128
#define GCONV_IMPL_FT_UMAX 8       /* stage-2 units (16 x 16 outputs) per warp */
#define GCONV_IMPL_FT_PTMAX 128    /* pixels per item */
#define GCONV_IMPL_FT_SMEM GCONV_IMPL_SMEM_MAX /* one block per SM (registers) */
#define GCONV_IMPL_FT_NS 4         /* w1 chunk buffers (NS - 1 in flight) */
#define GCONV_IMPL_FT_KC 64        /* w1 channels per streamed chunk */
#define GCONV_IMPL_FT_WST 144      /* bytes per w1 chunk row: 8 chunks + 1 (odd) */

typedef struct gconv_impl_ft_params {
    const void *in, *w0, *b0, *w1, *b1;
    void *out;
    gconv_epilogue epi;      /* final epilogue */
    gconv_epilogue mid;      /* alpha 1, no D, act0 */
    int GK, K1, H, W, OH, OW, ph, pw;
    int in_n, in_h, in_w;    /* input strides in elements (channels contiguous) */
    int out_n, out_h, out_w, out_c;
    int pair;                /* out_c == 1, K1 even: 32-bit stores of channel pairs */
    int plain;               /* the epilogue is a plain store (alpha 1, no D, no act) */
    int sh, sw, dh, dw;      /* stride, dilation */
    int cvs, L;              /* channel vectors, stage-1 lanes per vector */
    int RT, rblocks, K1t, k1tiles, items; /* item geometry */
    int PTp, AST, nps, units, nkc; /* GEMM: pixels (multiple of 16), A row bytes, n-pairs per
                                    * K1 tile, units, w1 chunks */
    float rnps, row;         /* 1 / nps, 1 / OW */
    int woff, b1off, smem;   /* shared memory: A at 0, NS w1 buffers, b1 */
} gconv_impl_ft_params;

/* Shared-memory plan for RT rows; returns the bytes. */
static inline int gconv_impl_ft_smem_plan(gconv_impl_ft_params *F, int RT)
{
    F->RT = RT;
    F->PTp = (RT * F->OW + 15) / 16 * 16;
    F->woff = F->PTp * F->AST;
    F->b1off = F->woff + GCONV_IMPL_FT_NS * ((F->K1t + 15) / 16 * 16) * GCONV_IMPL_FT_WST;
    F->smem = F->b1off + ((F->K1t + 15) / 16 * 16) * 4;
    return F->smem;
}

/* Plan the tile kernel for problem p (the fused launcher has validated it). Returns 1 and fills
 * F if the problem is in scope, else 0. sms: the device's SM count. */
static inline int gconv_impl_ft_plan(const gconv_problem *p, int K1,
                                     const gconv_fused_fwd_args *a, gconv_dtype dt, int sms,
                                     gconv_impl_ft_params *F)
{
    gconv_act_strides si, so;
    int o[3], RT;
    memset(F, 0, sizeof *F);
    if (!gconv_impl_fb_scope(p, K1, a, dt, o, &si, &so))
        return 0;
    if (p->filter[1] != 3 || p->filter[2] != 3 || o[2] > GCONV_IMPL_FT_PTMAX)
        return 0;
    if (sms <= 0)
        sms = 80;
    GCONV_IMPL_FB_FILL(F, p, K1, a, o, si, so);
    F->sh = p->stride[1], F->sw = p->stride[2], F->dh = p->dilation[1], F->dw = p->dilation[2];
    F->cvs = F->GK / 8;
    if (F->cvs > GCONV_IMPL_FT_THREADS)
        return 0;
    F->L = GCONV_IMPL_FT_THREADS / F->cvs;
    F->AST = (F->cvs + (F->cvs & 1) + 1) * 16;
    /* the most rows (pixels <= PTMAX) whose A tile fits, with the K1 tiles the accumulators
     * need at that height (k1tiles must stay as found for the lowered RT below: fewer m-tiles
     * need no more tiles) */
    for (RT = GCONV_IMPL_FT_PTMAX / F->OW; RT >= 1; RT--) {
        const int mt = (RT * F->OW + 15) / 16;
        int nps = (K1 + 15) / 16;
        F->k1tiles = 1;
        while (mt * ((nps + F->k1tiles - 1) / F->k1tiles) > 8 * GCONV_IMPL_FT_UMAX)
            F->k1tiles++;
        nps = (nps + F->k1tiles - 1) / F->k1tiles;
        F->K1t = nps * 16;
        F->nps = nps;
        if (gconv_impl_ft_smem_plan(F, RT) <= GCONV_IMPL_FT_SMEM)
            break;
    }
    if (RT < 1)
        return 0;
    /* rows per item: the fewest waves of one block per SM, each costing its rows + about one
     * (weights, pipeline start) */
    {
        int r, best = RT;
        int64_t bcost = -1;
        for (r = RT; r >= 1; r--) {
            const int64_t items = (int64_t)p->N * ((F->OH + r - 1) / r) * F->k1tiles;
            const int64_t cost = (items + sms - 1) / sms * (r + 1);
            if (bcost < 0 || cost < bcost)
                bcost = cost, best = r;
        }
        RT = best;
    }
    F->rblocks = (F->OH + RT - 1) / RT;
    F->RT = RT = (F->OH + F->rblocks - 1) / F->rblocks;
    gconv_impl_ft_smem_plan(F, RT);
    F->units = (F->PTp / 16) * F->nps;
    F->rnps = 1.0f / (float)F->nps;
    F->row = 1.0f / (float)F->OW;
    F->nkc = (F->GK + GCONV_IMPL_FT_KC - 1) / GCONV_IMPL_FT_KC;
    if ((int64_t)p->N * F->rblocks * F->k1tiles > 0x7fffffffLL)
        return 0;
    F->items = p->N * F->rblocks * F->k1tiles;
    return 1;
}

#if GCONV_IMPL_IGEMM_MATH == GCONV_IMPL_MATH_MMA

/* Issue the copy of w1 chunk kc (channels kc * KC .., rows k10 .. k10 + K1t - 1) into the
 * buffer at shared address wb: rows of WST bytes, 16-byte pieces, zeros past K1 or G. */
static __device__ __forceinline__ void gconv_impl_ft_issue_w1(const gconv_impl_ft_params *F,
                                                              unsigned wb, int k10, int kc)
{
    const unsigned short *w1 = (const unsigned short *)F->w1;
    const int rows = (F->K1t + 15) / 16 * 16;
    for (int idx = (int)threadIdx.x; idx < rows * 8; idx += GCONV_IMPL_FT_THREADS) {
        const int r = idx >> 3, c = idx & 7, k1 = k10 + r, ch = kc * GCONV_IMPL_FT_KC + c * 8;
        const int ok = r < F->K1t && k1 < F->K1 && ch < F->GK;
        gconv_impl_igemm_cp_async16(wb + (unsigned)(r * GCONV_IMPL_FT_WST + c * 16),
                                    ok ? w1 + (size_t)k1 * F->GK + ch : w1, ok);
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
    const int cv = tid % cvs, pl = tid / cvs;
    /* the item: image n, row block rb, K1 tile kt */
    const int kt = (int)blockIdx.x % F->k1tiles;
    const int nr = (int)blockIdx.x / F->k1tiles;
    const int n = nr / F->rblocks, rb = nr - n * F->rblocks;
    const int h0 = rb * F->RT, npx = min(F->RT, F->OH - h0) * OW;
    const int k10 = kt * F->K1t;
    const unsigned smb = gconv_impl_igemm_smem_addr(gconv_impl_ft_sm);
    float *b1s = (float *)(gconv_impl_ft_sm + F->b1off);
    if (dt == GCONV_F32)
        return;
    /* w1 chunks 0 .. NS - 2 fly during stage 1, one commit group each */
    for (int kc = 0; kc < GCONV_IMPL_FT_NS - 1; kc++) {
        if (kc < F->nkc)
            gconv_impl_ft_issue_w1(F,
                                   smb + (unsigned)(F->woff + kc * ((F->K1t + 15) / 16 * 16) *
                                                                  GCONV_IMPL_FT_WST),
                                   k10, kc);
        gconv_impl_igemm_cp_commit();
    }
    for (int idx = tid; idx < (F->K1t + 15) / 16 * 16; idx += GCONV_IMPL_FT_THREADS)
        b1s[idx] = F->b1 && idx < F->K1t && k10 + idx < F->K1
                       ? gconv_impl_dev_load(dt, F->b1, k10 + idx)
                       : 0.0f;
    /* an odd cvs: the pad chunk of every A row is zero */
    if (cvs & 1)
        for (int idx = tid; idx < F->PTp; idx += GCONV_IMPL_FT_THREADS)
            *(uint4 *)(gconv_impl_ft_sm + idx * AST + cvs * 16) = make_uint4(0u, 0u, 0u, 0u);
    /* stage 1 */
    if (pl < F->L) {
        const unsigned short *in = (const unsigned short *)F->in;
        float tap[9][8], bv[8];
        int p = pl, r = 0, c = pl;
#pragma unroll
        for (int j = 0; j < 8; j++) {
#pragma unroll
            for (int t = 0; t < 9; t++)
                tap[t][j] = gconv_impl_dev_load(dt, F->w0, (cv * 8 + j) * 9 + t);
            bv[j] = F->b0 ? gconv_impl_dev_load(dt, F->b0, cv * 8 + j) : 0.0f;
        }
        while (c >= OW)
            c -= OW, r++;
        /* one pixel per pass (two per pass with 18 loads in flight measured the same) */
#pragma unroll 1
        for (; p < npx; p += F->L) {
            const int ih0 = (h0 + r) * F->sh - F->ph, iw0 = c * F->sw - F->pw;
            const unsigned short *base = in + n * F->in_n + cv * 8;
            uint32_t x[9][4];
            float m[8];
#pragma unroll
            for (int ky = 0; ky < 3; ky++) {
                const int ih = ih0 + ky * F->dh;
#pragma unroll
                for (int kx = 0; kx < 3; kx++) {
                    const int iw = iw0 + kx * F->dw;
                    const int ok = (unsigned)ih < (unsigned)F->H && (unsigned)iw < (unsigned)F->W;
                    gconv_impl_ld_raw(x[ky * 3 + kx],
                                      (const char *)(ok ? base + ih * F->in_h + iw * F->in_w : base),
                                      16);
                    if (!ok)
                        x[ky * 3 + kx][0] = x[ky * 3 + kx][1] = x[ky * 3 + kx][2] =
                            x[ky * 3 + kx][3] = 0u;
                }
            }
#pragma unroll
            for (int j = 0; j < 8; j++)
                m[j] = bv[j];
#pragma unroll
            for (int t = 0; t < 9; t++)
#pragma unroll
                for (int j = 0; j < 8; j++)
                    m[j] = fmaf(gconv_impl_raw_elem(x[t], j, dt), tap[t][j], m[j]);
            *(uint4 *)(gconv_impl_ft_sm + p * AST + cv * 16) =
                gconv_impl_fb_mid8(m, &F->mid, dt, midfn, MIDB, cv * 8, n, h0 + r, c, 8);
            c += F->L;
            while (c >= OW)
                c -= OW, r++;
        }
    }
    /* stage 2: K in chunks of KC channels, NS - 1 chunks in flight while one computes */
    {
        const int wbytes = (F->K1t + 15) / 16 * 16 * GCONV_IMPL_FT_WST;
        float acc[GCONV_IMPL_FT_UMAX][2][4];
        const int nw = GCONV_IMPL_FT_THREADS / 32, nks = (cvs + 1) / 2;
#pragma unroll
        for (int i = 0; i < GCONV_IMPL_FT_UMAX; i++)
#pragma unroll
            for (int h = 0; h < 2; h++)
#pragma unroll
                for (int e = 0; e < 4; e++)
                    acc[i][h][e] = 0.0f;
#pragma unroll 1
        for (int kc = 0; kc < F->nkc; kc++) {
            const unsigned wb = smb + (unsigned)F->woff + (unsigned)(kc % GCONV_IMPL_FT_NS * wbytes);
            /* chunk kc has landed (all groups but the newest NS - 2) ... */
            gconv_impl_igemm_cp_wait(GCONV_IMPL_FT_NS - 2);
            /* ... for every thread; the A tile is complete (the first time); every warp is done
             * with chunk kc - 1, whose buffer the next copy reuses */
            __syncthreads();
            if (kc + GCONV_IMPL_FT_NS - 1 < F->nkc)
                gconv_impl_ft_issue_w1(F,
                                       smb + (unsigned)F->woff +
                                           (unsigned)((kc + GCONV_IMPL_FT_NS - 1) %
                                                      GCONV_IMPL_FT_NS * wbytes),
                                       k10, kc + GCONV_IMPL_FT_NS - 1);
            gconv_impl_igemm_cp_commit();
#pragma unroll 1
            for (int ks = 0; ks < GCONV_IMPL_FT_KC / 16; ks++) {
                const int kg = kc * (GCONV_IMPL_FT_KC / 16) + ks; /* global k-step */
                if (kg >= nks)
                    break;
#pragma unroll
                for (int i = 0; i < GCONV_IMPL_FT_UMAX; i++) {
                    const int u = warp + i * nw;
                    if (u < F->units) {
                        /* exact: u < 2^16 */
                        const int mt = (int)(((float)u + 0.5f) * F->rnps), np = u - mt * F->nps;
                        unsigned a[4], b[4];
                        gconv_impl_igemm_ldsm_x4(
                            smb + (unsigned)((mt * 16 + (lane & 15)) * AST +
                                             ((2 * kg + (lane >> 4)) << 4)),
                            a);
                        gconv_impl_igemm_ldsm_x4(
                            wb + (unsigned)((np * 16 + ((lane >> 4) << 3) + (lane & 7)) *
                                                GCONV_IMPL_FT_WST +
                                            ((2 * ks + ((lane >> 3) & 1)) << 4)),
                            b);
                        gconv_impl_halo_mma(acc[i][0], a, b, dt);
                        gconv_impl_halo_mma(acc[i][1], a, b + 2, dt);
                    }
                }
            }
        }
        /* + b1, the epilogue, stores: acc[i][nt][e] is pixel mt*16 + lane/4 (+8 for e >= 2),
         * channel k10 + np*16 + nt*8 + 2*(lane%4) (+1 for odd e) */
#pragma unroll
        for (int i = 0; i < GCONV_IMPL_FT_UMAX; i++) {
            const int u = warp + i * nw;
            if (u < F->units) {
                const int mt = (int)(((float)u + 0.5f) * F->rnps), np = u - mt * F->nps;
#pragma unroll
                for (int h = 0; h < 2; h++) {
                    const int px = mt * 16 + (lane >> 2) + 8 * h;
                    if (px < npx) {
                        const int r = (int)(((float)px + 0.5f) * F->row), c = px - r * OW;
                        const int oh = h0 + r;
                        const int pbase = n * F->out_n + oh * F->out_h + c * F->out_w;
#pragma unroll
                        for (int nt = 0; nt < 2; nt++) {
                            const int kl = np * 16 + nt * 8 + 2 * (lane & 3), k1 = k10 + kl;
                            if (kl < F->K1t && k1 < F->K1)
                                gconv_impl_fb_out2(&F->epi, epifn, EPIB && F->plain, dt, F->out,
                                                   F->pair, F->out_c, F->K1, pbase, k1,
                                                   acc[i][nt][2 * h] + b1s[kl],
                                                   acc[i][nt][2 * h + 1] + b1s[kl + 1], n, oh, c);
                        }
                    }
                }
            }
        }
    }
    gconv_impl_igemm_cp_wait(0);
}

#define GCONV_IMPL_FT_KERNEL(kname, T, MIDFN, EPIFN, MIDB, EPIB)                                 \
    static __global__ void __launch_bounds__(GCONV_IMPL_FT_THREADS, 1)                           \
        kname(gconv_impl_ft_params F)                                                            \
    {                                                                                            \
        gconv_impl_ft_body(&F, T, MIDFN, EPIFN, MIDB, EPIB);                                     \
    }

#else /* no mma.sync: the tile kernel is never planned (GCONV_IMPL_FB_ENABLE is 0) */

#define GCONV_IMPL_FT_KERNEL(kname, T, MIDFN, EPIFN, MIDB, EPIB)                                 \
    static __global__ void kname(gconv_impl_ft_params F)                                         \
    {                                                                                            \
        (void)F;                                                                                 \
    }

#endif

#endif /* GCONV_FUSED_TILE_H */
