/* gconv/igemm_halo.h: forward grouped convolution for few channels per group, on tensor cores,
 * from an input tile with its halo held in shared memory (the ResNeXt case: 8 to 32 channels
 * per group, where an im2col GEMM reads every input pixel once per tap through L2; for
 * C = K = 4 the direct FEWC kernel measured faster, C = 64 is left to the implicit GEMM).
 *
 * Scope (gconv_impl_halo_plan says whether a problem fits; everything else takes the implicit
 * GEMM of gconv/igemm.h or a direct kernel): NHWGC input and output, GKYXC weights, 1D or 2D,
 * fp16 / bf16, stride 1, any filter size, dilation and padding, C in {8, 16, 32}, K even
 * and at most 32, in / wei / out 16-byte aligned, fewer than 2^31 elements per tensor, CUDA
 * sm_80+ (mma.sync).
 *
 * The block. One block computes R full output rows (a band) of one image for a chunk of
 * GB = 64 / C consecutive groups (64 input channels: 128 contiguous bytes per pixel). Stride 1
 * makes every tap a constant shift of a flattened tile: with Wp = OW + (X - 1) * dw columns,
 * the halo tile holds input rows oh0 - ph .. and columns -pw .. -pw + Wp - 1 as pixels
 * p = hr * Wp + hc (zero outside the image), and the "virtual" output pixel q = r * Wp + c
 * (r < R, any c < Wp) reads tap (ty, tx) at p = q + ty * dh * Wp + tx * dw. Columns c >= OW
 * are computed and thrown away ((X - 1) * dw / OW of the work; tensor cores have it to spare).
 * The per-group GEMM is then D[q][k] = sum over kk = tap * C + c of A[q][kk] * B[kk][k] with
 * A[q][kk] = halo[q + toff(tap)][g*C + c] and B[kk][k] = wei[g][k][kk] (GKYXC keeps a (g, k)
 * row's taps * C elements contiguous, in exactly this kk order). With C >= 8 every 8 columns
 * of a k-step of 16 belong to one tap: one 16-byte ldmatrix row.
 *
 * Shared memory: halo [P pixels][64 channels + 8 pad] (144-byte rows: the 8 rows of an
 * ldmatrix, 8 consecutive pixels, fall in 8 distinct 16-byte bank groups); weights
 * [GB * NT * 8 rows][KS * 16 + 8] (KS = ceil(taps * C / 16) k-steps; rows k >= K and the
 * padding are zero; the odd number of 16-byte chunks per row keeps B's ldmatrix conflict-free);
 * per-lane ldmatrix offsets of every k-step; per virtual pixel its output offset (-1: thrown
 * away) and position. Everything is loaded once per block by 16-byte cp.async with zero fill.
 *
 * The math. A warp takes work items (group, MT consecutive 16-pixel m-tiles) and, for each
 * k-step, loads B for NT = ceil(K / 8) n-tiles (NT 1, 2 or 4, rounded up) and, per m-tile,
 * A with one ldmatrix.x4 straight from the halo (each lane addresses its own pixel and tap),
 * then issues MT x NT m16n8k16 mma.sync with MT = 4 / NT. The epilogue applies the epilogue
 * function per element and stores pairs of output channels (32-bit) straight from the
 * accumulators; the plain store skips the function.
 *
 * Used by gconv/fwd.h (GCONV_FWD dispatch); needs a HIP or CUDA compiler.
 */
#ifndef GCONV_IGEMM_HALO_H
#define GCONV_IGEMM_HALO_H

#include "igemm.h"

#define GCONV_IMPL_HALO_THREADS 256
#define GCONV_IMPL_HALO_MIN_BLOCKS 3         /* per SM: caps registers at 85 per thread */
#define GCONV_IMPL_HALO_PS 144                /* bytes per halo pixel: 64 channels + 8 pad */
#define GCONV_IMPL_HALO_MAX_SMEM (100 * 1024) /* halo + weights + tables, at most */
#define GCONV_IMPL_HALO_MAX_TAPS 1024
#define GCONV_IMPL_HALO_TARGET 160            /* virtual output pixels per block, about */

typedef struct gconv_impl_halo_params {
    const void *in;
    const void *wei;
    void *out;
    gconv_epilogue epi;
    int plain;               /* epilogue is alpha 1, no D tensors, no activation */
    int G, C, lc, K, GB;     /* channels per group, log2 C, groups per block */
    int H, W, OH, OW;        /* input and output sizes (1D: H = OH = 1) */
    int Y, X, dh, dw, ph, pw;
    int taps, TC, KS;        /* filter taps, taps * C, k-steps of 16 */
    int R, Wp, mtiles, NT, MT, MTP; /* band rows, tile width, m-tiles, n-tiles, m-tiles per
                                       item, items per group */
    int P;                   /* halo pixels (with slack for the last m-tile's taps) */
    int Q;                   /* virtual output pixels covered by the items */
    int wrow;                /* weight row length in shared memory (elements) */
    int bands, bg;           /* blocks along output rows and along group chunks */
    int halo_bytes, w_bytes; /* shared-memory offsets: weights, then the tap table */
    int in_n, in_h, in_w;    /* input strides of n, h, w (elements) */
    int out_n, out_h, out_w;
} gconv_impl_halo_params;

/* The halo kernel needs mma.sync; it is planned only where the platform has it (CUDA). */
#ifndef GCONV_IMPL_HALO_ENABLE
#if defined(GCONV_PLATFORM_CUDA)
#define GCONV_IMPL_HALO_ENABLE 1
#else
#define GCONV_IMPL_HALO_ENABLE 0
#endif
#endif

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

/* The items of one block for NT n-tiles (a literal: 1, 2 or 4) and MT = 4 / NT m-tiles per
 * item, so that every loop unrolls and the accumulators stay in registers. */
static __device__ __forceinline__ void gconv_impl_halo_items(
    const gconv_impl_halo_params *P, gconv_dtype dt, gconv_impl_epi_fn epi, int plain,
    const unsigned char *smem, const unsigned char *wsm, const int *offs, const int *pixoff,
    const int *pixrc, int n, int oh0, int g0, int gv, const int NT)
{
#if GCONV_IMPL_IGEMM_MATH == GCONV_IMPL_MATH_MMA
    const int MT = 4 / NT;
    const int lane = (int)threadIdx.x & 31, warp = (int)threadIdx.x >> 5;
    const int r8 = lane >> 2, q2 = (lane & 3) * 2;
    const int C = P->C, K = P->K, wrow2 = P->wrow * 2, mtp = P->MTP;
    const int items = gv * mtp, ksf = P->TC & 15 ? P->TC >> 4 : -1, ksteps = P->KS;
    const int nbase = n * P->out_n;
    const unsigned sbase = gconv_impl_igemm_smem_addr(smem), wbase_s = gconv_impl_igemm_smem_addr(wsm);
    int it;
    for (it = warp; it < items; it += GCONV_IMPL_HALO_THREADS / 32) {
        const int gl = it / mtp, m0 = (it - gl * mtp) * MT * 16;
        /* ldmatrix rows of this lane: A from m-tile pixels m0 + 16 * mt (+ the lane's row and
         * tap offset from offs), channels of group gl; B from weight rows
         * gl * NT * 8 + 8 * (nt + (lane >> 4)) + (lane & 7), k half (lane >> 3) & 1 (x2: lanes
         * 0-15 only; rows k >= K are zero in shared memory) */
        const unsigned asm0 = sbase + (unsigned)(m0 * GCONV_IMPL_HALO_PS + gl * C * 2);
        const unsigned bsm = wbase_s + (unsigned)((gl * NT * 8 + ((lane >> 4) << 3) + (lane & 7)) *
                                                  wrow2 + ((lane >> 3) & 1) * 16);
        float acc[4][4][4];
        int ks, mt, nt, e;
#pragma unroll
        for (mt = 0; mt < 4; mt++)
#pragma unroll
            for (nt = 0; nt < 4; nt++)
#pragma unroll
                for (e = 0; e < 4; e++)
                    acc[mt][nt][e] = 0.0f;
        /* full k-steps, then the tail (C >= 8 makes taps * C a multiple of 8: a tail is the
         * first 8 columns of a k-step, whose second half, a2 / a3, is zeroed) */
        for (ks = 0; ks < ksteps; ks++) {
            const int o = offs[ks * 32 + lane];
            unsigned b[4][2];
            const unsigned bs = bsm + ks * 32;
            if (NT == 1) {
                unsigned t2[2];
                gconv_impl_igemm_ldsm_x2(bs, t2);
                b[0][0] = t2[0], b[0][1] = t2[1];
            } else {
#pragma unroll
                for (nt = 0; nt < NT; nt += 2) {
                    unsigned t4[4];
                    gconv_impl_igemm_ldsm_x4(bs + nt * 8 * wrow2, t4);
                    b[nt][0] = t4[0], b[nt][1] = t4[1], b[nt + 1][0] = t4[2], b[nt + 1][1] = t4[3];
                }
            }
#pragma unroll
            for (mt = 0; mt < MT; mt++) {
                unsigned a[4];
                gconv_impl_igemm_ldsm_x4(asm0 + mt * 16 * GCONV_IMPL_HALO_PS + o, a);
                if (ks == ksf)
                    a[2] = a[3] = 0u;
#pragma unroll
                for (nt = 0; nt < NT; nt++)
                    gconv_impl_halo_mma(acc[mt][nt], a, b[nt], dt);
            }
        }
        /* epilogue: accumulators e, e + 1 of tile (mt, nt) are virtual pixel
         * m0 + 16 * mt + r8 (+8 for e = 2), output channels k = 8 * nt + q2, k + 1 */
        {
            unsigned *out = (unsigned *)P->out;
            const int g = g0 + gl, cbase = nbase + g * K;
#pragma unroll
            for (mt = 0; mt < MT; mt++) {
#pragma unroll
                for (e = 0; e < 4; e += 2) {
                    const int q = m0 + mt * 16 + r8 + (e ? 8 : 0);
                    const int po = pixoff[q];
                    if (po < 0)
                        continue;
#pragma unroll
                    for (nt = 0; nt < NT; nt++) {
                        const int k = nt * 8 + q2;
                        float v0 = acc[mt][nt][e], v1 = acc[mt][nt][e + 1];
                        if (k >= K)
                            continue;
                        if (!plain) {
                            const int rc = pixrc[q], oh = oh0 + (rc >> 16), ow = rc & 0xffff;
                            v0 = epi(&P->epi, dt, v0, g, n, k, 0, oh, ow);
                            v1 = epi(&P->epi, dt, v1, g, n, k + 1, 0, oh, ow);
                        }
                        out[(unsigned)(cbase + po + k) >> 1] = gconv_impl_halo_pack(v0, v1, dt);
                    }
                }
            }
        }
    }
#else
    (void)P, (void)dt, (void)epi, (void)plain, (void)smem, (void)wsm, (void)offs, (void)pixoff;
    (void)pixrc, (void)n, (void)oh0, (void)g0, (void)gv, (void)NT;
#endif
}

/* One block: load halo and weights, build the tables, compute every (group, m-tiles) item. */
static __device__ __forceinline__ void gconv_impl_halo_body(const gconv_impl_halo_params *P,
                                                            gconv_dtype dt, gconv_impl_epi_fn epi)
{
#if GCONV_IMPL_IGEMM_MATH == GCONV_IMPL_MATH_MMA
    GCONV_IMPL_DYN_SMEM(smem);
    const int tid = (int)threadIdx.x;
    const int C = P->C, K = P->K, GB = P->GB, Wp = P->Wp, NT = P->NT;
    unsigned char *wsm = smem + P->halo_bytes;
    int *offs = (int *)(wsm + P->w_bytes);       /* [KS][32 lanes]: A ldmatrix row offsets */
    int *pixoff = offs + P->KS * 32;              /* [Q] output offset of a virtual pixel, -1 */
    int *pixrc = pixoff + P->Q;                   /* [Q] (row << 16) | column */
    /* block -> (image n, band, group chunk), chunk fastest: neighbouring bands (which share
     * halo rows) run close together and find those rows in L2 */
    const int bgi = (int)(blockIdx.x % (unsigned)P->bg);
    const int rest = (int)(blockIdx.x / (unsigned)P->bg);
    const int band = rest % P->bands, n = rest / P->bands;
    const int oh0 = band * P->R, g0 = bgi * GB;
    const int gv = P->G - g0 < GB ? P->G - g0 : GB; /* groups present in this chunk */
    const int rows = P->OH - oh0 < P->R ? P->OH - oh0 : P->R;
    /* the plain store skips the epilogue function, unless it is a user op */
    const int plain = P->plain && epi == gconv_impl_epilogue_apply;
    int i;

    /* halo: pixel p = (hr, hc) of the band's window, 8 chunks of 16 bytes (8 channels) each;
     * chunks past the last group and pixels outside the image are zero-filled */
    {
        const unsigned char *in = (const unsigned char *)P->in;
        const int cvalid = gv * C / 8;
        const int ih0 = oh0 - P->ph;
        const int64_t base = (int64_t)n * P->in_n + (int64_t)g0 * C;
        const int q = tid & 7;
        /* thread tid copies chunk q of pixels tid / 8, + 32, ...: (hr, hc) advanced without
         * dividing */
        int p = tid >> 3, hr = p / Wp, hc = p - hr * Wp;
        for (; p < P->P; p += GCONV_IMPL_HALO_THREADS / 8) {
            const int ih = ih0 + hr, iw = hc - P->pw;
            const int ok = q < cvalid && (unsigned)ih < (unsigned)P->H && (unsigned)iw < (unsigned)P->W;
            const unsigned char *src =
                ok ? in + (base + (int64_t)ih * P->in_h + (int64_t)iw * P->in_w + q * 8) * 2 : in;
            gconv_impl_igemm_cp_async16(gconv_impl_igemm_smem_addr(smem + p * GCONV_IMPL_HALO_PS + q * 16),
                                        src, ok);
            hc += GCONV_IMPL_HALO_THREADS / 8;
            while (hc >= Wp)
                hc -= Wp, hr++;
        }
    }
    /* weights of groups g0 .. g0+gv-1: row gl * NT * 8 + k holds (g0 + gl, k)'s taps * C
     * elements (GKYXC: contiguous in global memory), zero-padded to wrow; rows k >= K and
     * groups past gv are zero. C >= 8 makes a row a whole number of 16-byte copies. */
    {
        const int rows_w = GB * NT * 8, lnt = NT == 1 ? 3 : NT == 2 ? 4 : 5; /* log2(NT * 8) */
        const int cpr = P->TC >> 3, wc = P->wrow >> 3;
        const unsigned char *w = (const unsigned char *)P->wei + (int64_t)g0 * K * P->TC * 2;
        const int lane = tid & 31;
        int r;
        for (r = tid >> 5; r < rows_w; r += GCONV_IMPL_HALO_THREADS / 32) {
            const int gl = r >> lnt, k = r & ((1 << lnt) - 1), rok = gl < gv && k < K;
            int c;
            for (c = lane; c < wc; c += 32) {
                const int ok = rok && c < cpr;
                gconv_impl_igemm_cp_async16(
                    gconv_impl_igemm_smem_addr(wsm + r * P->wrow * 2 + c * 16),
                    ok ? w + ((int64_t)(gl * K + k) * cpr + c) * 16 : w, ok);
            }
        }
        gconv_impl_igemm_cp_commit();
    }
    /* per-lane ldmatrix offsets of every k-step: lane l gives row (l & 7) + 8 * ((l >> 3) & 1)
     * of the m-tile and the 8 columns kk = 16 ks + 8 * ((l >> 4) & 1), i.e. tap kk >> lc,
     * channels (kk & (C - 1)) .. +7 (one tap, C >= 8); columns past taps * C point at tap 0
     * (their registers are zeroed) */
    for (i = tid; i < P->KS * 32; i += GCONV_IMPL_HALO_THREADS) {
        const int ks = i >> 5, l = i & 31;
        const int kk = ks * 16 + ((l >> 4) & 1) * 8, row = (l & 7) + ((l >> 3) & 1) * 8;
        const int tap = kk < P->TC ? kk >> P->lc : 0, c = kk < P->TC ? kk & (C - 1) : 0;
        const int ty = tap / P->X, tx = tap - ty * P->X;
        offs[i] = (row + ty * P->dh * Wp + tx * P->dw) * GCONV_IMPL_HALO_PS + c * 2;
    }
    /* virtual pixel q = r * Wp + c: its output offset (without n and channels), or -1 */
    for (i = tid; i < P->Q; i += GCONV_IMPL_HALO_THREADS) {
        const int r = i / Wp, c = i - r * Wp;
        const int ok = r < rows && c < P->OW;
        pixoff[i] = ok ? (oh0 + r) * P->out_h + c * P->out_w : -1;
        pixrc[i] = (r << 16) | c;
    }
    gconv_impl_igemm_cp_wait(0);
    __syncthreads(); /* halo, weights and tables visible to every warp */

    if (NT == 1)
        gconv_impl_halo_items(P, dt, epi, plain, smem, wsm, offs, pixoff, pixrc, n, oh0, g0, gv, 1);
    else if (NT == 2)
        gconv_impl_halo_items(P, dt, epi, plain, smem, wsm, offs, pixoff, pixrc, n, oh0, g0, gv, 2);
    else
        gconv_impl_halo_items(P, dt, epi, plain, smem, wsm, offs, pixoff, pixrc, n, oh0, g0, gv, 4);
#else
    (void)P, (void)dt, (void)epi;
#endif
}

/* Plan a problem for the halo kernel: 1 and the parameters, or 0 if it does not fit. */
static inline int gconv_impl_halo_plan(const gconv_problem *p, gconv_dtype dt, const void *in,
                                       const void *wei, void *out, const gconv_epilogue *epi,
                                       gconv_impl_halo_params *P)
{
#if GCONV_IMPL_HALO_ENABLE
    const int C = p->C, K = p->K;
    int lc, GB, taps, TC, KS, wrow, OH, OW, Wp, R, mtiles, NT, MT, MTP, Pn, halo, wbytes;
    if (dt == GCONV_F32 || p->ndim > 2)
        return 0;
    if (gconv_layout_family(gconv_in_layout(p)) != GCONV_NHWGC ||
        gconv_layout_family(gconv_out_layout(p)) != GCONV_NHWGC ||
        gconv_layout_family(gconv_wei_layout(p)) != GCONV_GKYXC)
        return 0;
    for (lc = 3; lc <= 5 && (1 << lc) != C; lc++)
        ;
    if (lc > 5 || K % 2 || K > 32 || (p->G * C) % 8)
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
    /* band rows: about GCONV_IMPL_HALO_TARGET virtual pixels, bands of nearly equal height */
    {
        int nb = (OH * Wp + GCONV_IMPL_HALO_TARGET - 1) / GCONV_IMPL_HALO_TARGET;
        if (nb < 1)
            nb = 1;
        if (nb > OH)
            nb = OH;
        R = (OH + nb - 1) / nb;
    }
    for (;;) {
        mtiles = (R * Wp + 15) / 16;
        MTP = (mtiles + MT - 1) / MT;
        /* the last item's m-tiles read up to 16 * MT * MTP - 1 plus the largest tap offset */
        Pn = 16 * MT * MTP + (p->filter[1] - 1) * p->dilation[1] * Wp +
             (p->filter[2] - 1) * p->dilation[2];
        halo = Pn * GCONV_IMPL_HALO_PS;
        if (halo + wbytes + KS * 128 + 16 * MT * MTP * 8 <= GCONV_IMPL_HALO_MAX_SMEM)
            break;
        if (R == 1)
            return 0;
        R = (R + 1) / 2;
    }
    memset(P, 0, sizeof *P);
    P->in = in, P->wei = wei, P->out = out;
    P->epi = epi ? *epi : gconv_epi_scale(1.0f);
    P->plain = P->epi.alpha == 1.0f && P->epi.num_d == 0 && P->epi.act.kind == GCONV_ACT_NONE;
    P->G = p->G, P->C = C, P->lc = lc, P->K = K, P->GB = GB;
    P->H = p->in[1], P->W = p->in[2], P->OH = OH, P->OW = OW;
    P->Y = p->filter[1], P->X = p->filter[2];
    P->dh = p->dilation[1], P->dw = p->dilation[2];
    P->ph = p->pad_lo[1], P->pw = p->pad_lo[2];
    P->taps = taps, P->TC = TC, P->KS = KS;
    P->R = R, P->Wp = Wp, P->mtiles = mtiles, P->NT = NT, P->MT = MT, P->MTP = MTP;
    P->P = Pn, P->Q = 16 * MT * MTP, P->wrow = wrow;
    P->bands = (OH + R - 1) / R, P->bg = (p->G + GB - 1) / GB;
    P->halo_bytes = halo, P->w_bytes = wbytes;
    {
        gconv_act_strides si = gconv_in_strides(p), so = gconv_out_strides(p);
        P->in_n = (int)si.n, P->in_h = (int)si.s[1], P->in_w = (int)si.s[2];
        P->out_n = (int)so.n, P->out_h = (int)so.s[1], P->out_w = (int)so.s[2];
    }
    return (int64_t)p->N * P->bands * P->bg < 0x7fffffffLL;
#else
    (void)p, (void)dt, (void)in, (void)wei, (void)out, (void)epi, (void)P;
    return 0;
#endif
}

/* Shared memory of a planned launch: halo, weights, A offsets, pixel tables. */
static inline int gconv_impl_halo_smem(const gconv_impl_halo_params *P)
{
    return P->halo_bytes + P->w_bytes + P->KS * 128 + P->Q * 8;
}

/* Blocks of a planned launch. */
static inline int64_t gconv_impl_halo_blocks(const gconv_problem *p, const gconv_impl_halo_params *P)
{
    return (int64_t)p->N * P->bands * P->bg;
}

/* The most any plan asks for (the launcher raises the kernel's limit to this once). */
#define GCONV_IMPL_HALO_SMEM_LIMIT GCONV_IMPL_HALO_MAX_SMEM

#endif /* GCONV_IGEMM_HALO_H */
