/* gconv/igemm_halo.h: forward grouped convolution for few channels per group, on tensor cores,
 * from an input tile with its halo held in shared memory.
 *
 * For C in {8, 16, 32, 64} channels per group and K a multiple of 8 up to 64, im2col-style
 * implicit GEMM reads every input pixel once per filter tap (9x for 3x3) in 16 to 128-byte
 * pieces; here a block loads, once, the input rows (plus halo) that a band of output pixels
 * needs, for a chunk of GB = 64 / C consecutive groups (128 contiguous bytes of channels per
 * pixel in NHWGC), and the weights of those groups. Each warp then computes (group, 16-pixel)
 * units with mma.sync: for every tap, ldmatrix gathers the 16 pixels' input rows straight from
 * the halo (each lane gives the address of its own pixel) and multiplies them by the tap's
 * weights (m16n8k16, or m16n8k8 for C = 8). Results go through shared memory to 16-byte
 * stores, with the epilogue applied per element.
 *
 * Scope: NHWGC input and output, GKYXC weights, 1D or 2D, fp16 / bf16, any filter size, stride,
 * dilation and padding whose halo fits (the launcher sizes the band), in / wei / out 16-byte
 * aligned, on CUDA (sm_80+). Everything else takes the implicit GEMM of gconv/igemm.h.
 *
 * Shared memory: halo [pixels][8 chunks of 16 B] with chunk ^= pixel % 8 (ldmatrix reads 8
 * pixels' same chunk: distinct bank groups); weights [GB*K rows][taps*C (+8)] with the row
 * length an odd number of 16-byte chunks (conflict-free ldmatrix of 8 rows).
 *
 * Used by gconv/fwd.h (GCONV_FWD dispatch); needs a HIP or CUDA compiler.
 */
#ifndef GCONV_IGEMM_HALO_H
#define GCONV_IGEMM_HALO_H

#include "igemm.h"

#define GCONV_IMPL_HALO_THREADS 128
#define GCONV_IMPL_HALO_PIX 128            /* output pixels per block, at most */
#define GCONV_IMPL_HALO_MAX_SMEM (96 * 1024) /* halo + weights, at most */

typedef struct gconv_impl_halo_params {
    const void *in;
    const void *wei;
    void *out;
    gconv_epilogue epi;
    int G, C, K, GB;         /* channels per group, groups per block */
    int H, W, OH, OW;        /* input and output sizes (1D: H = OH = 1) */
    int Y, X, sh, sw, dh, dw, ph, pw;
    int TH, TW;              /* output rows and columns per block */
    int HR, HC;              /* halo rows and columns */
    int wrow;                /* elements per weight row in shared memory (taps*C + pad) */
    int bh, bw, bg;          /* blocks along output rows, output columns, group chunks */
    int halo_bytes;          /* offset of the weights in shared memory */
    unsigned rowc_m, tw_m;   /* ceil(2^32 / d) for d = weight row chunks, TW */
    unsigned cpp_m[16];      /* ceil(2^32 / d) for d = g*K/8 chunks per pixel, g = 1..GB */
    int64_t in_n, in_h, in_w; /* input strides of n, h, w (elements) */
    int64_t out_n, out_h, out_w;
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
static __device__ __forceinline__ void gconv_impl_halo_mma_k8(float *d, const unsigned *a,
                                                              unsigned b, gconv_dtype dt)
{
    if (dt == GCONV_F16)
        gconv_impl_igemm_mma_k8_f16(d, a, b);
    else
        gconv_impl_igemm_mma_k8_bf16(d, a, b);
}
#endif

/* i / d for the small non-negative i of this kernel, with m = ceil(2^32 / d) from the host
 * (exact while i * (m * d - 2^32) < 2^32: i < 2^21 for d < 2^11; here i < 2^20), m = 0 for
 * d = 1. */
static __device__ __forceinline__ int gconv_impl_halo_div(int i, unsigned m)
{
    return m ? (int)__umulhi((unsigned)i, m) : i;
}

/* One block: load halo and weights, compute, stage, store. Shared memory: halo | weights |
 * staged output (16-bit) | pixel table. */
static __device__ __forceinline__ void gconv_impl_halo_body(const gconv_impl_halo_params *P,
                                                            gconv_dtype dt, gconv_impl_epi_fn epi)
{
#if GCONV_IMPL_IGEMM_MATH == GCONV_IMPL_MATH_MMA
    GCONV_IMPL_DYN_SMEM(smem);
    const int tid = (int)threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int C = P->C, K = P->K, GB = P->GB;
    const unsigned char *in = (const unsigned char *)P->in;
    const unsigned char *wei = (const unsigned char *)P->wei;
    unsigned char *wsm = smem + P->halo_bytes;
    const int ld = GB * K + 8; /* staged row (16-bit): all output channels of a pixel (+pad) */
    unsigned short *cs = (unsigned short *)(wsm + GB * K * P->wrow * 2);
    int *pixtab = (int *)(cs + P->TH * P->TW * ld); /* per band pixel: halo index of tap 0 */
    int *outtab = pixtab + GCONV_IMPL_HALO_PIX;      /* per band pixel: (row << 16) | col, -1 */
    int64_t L = (int64_t)blockIdx.x;
    int n, bhi, bwi, bgi, oh0, ow0, g0, npix, gvalid, i;
    bgi = (int)(L % P->bg), L /= P->bg;
    bwi = (int)(L % P->bw), L /= P->bw;
    bhi = (int)(L % P->bh), n = (int)(L / P->bh);
    oh0 = bhi * P->TH, ow0 = bwi * P->TW, g0 = bgi * GB;
    npix = (P->OH - oh0 < P->TH ? P->OH - oh0 : P->TH) * P->TW;
    gvalid = P->G - g0 < GB ? P->G - g0 : GB;

    /* halo: row r, column c of the band's input window, 8 chunks of the group chunk's channels */
    {
        const int ih0 = oh0 * P->sh - P->ph, iw0 = ow0 * P->sw - P->pw;
        const int per_row = P->HC * 8, cvalid = gvalid * C / 8;
        const int64_t base = (int64_t)n * P->in_n + (int64_t)g0 * C;
        int r;
        for (r = 0; r < P->HR; r++) {
            const int ih = ih0 + r;
            const int rok = (unsigned)ih < (unsigned)P->H;
            const int64_t rbase = base + (int64_t)ih * P->in_h;
            for (i = tid; i < per_row; i += GCONV_IMPL_HALO_THREADS) {
                const int c = i >> 3, q = i & 7, pix = r * P->HC + c, iw = iw0 + c;
                const int ok = rok && q < cvalid && (unsigned)iw < (unsigned)P->W;
                gconv_impl_igemm_cp_async16(
                    gconv_impl_igemm_smem_addr(smem + pix * 128 + ((q ^ (pix & 7)) << 4)),
                    ok ? in + (rbase + (int64_t)iw * P->in_w + q * 8) * 2 : in, ok);
            }
        }
    }
    /* weights of groups g0 .. g0+GB-1: GB*K rows of taps*C, contiguous in GKYXC */
    {
        const int rowc = P->Y * P->X * C / 8; /* 16-byte chunks per row */
        const int rows = gvalid * K, nchunks = rows * rowc;
        const unsigned char *wbase = wei + (int64_t)g0 * K * P->Y * P->X * C * 2;
        for (i = tid; i < nchunks; i += GCONV_IMPL_HALO_THREADS) {
            const int r = gconv_impl_halo_div(i, P->rowc_m), q = i - r * rowc;
            gconv_impl_igemm_cp_async16(gconv_impl_igemm_smem_addr(wsm + (r * P->wrow + q * 8) * 2),
                                        wbase + (int64_t)i * 16, 1);
        }
    }
    gconv_impl_igemm_cp_commit();
    /* pixel tables while the copies fly */
    for (i = tid; i < GCONV_IMPL_HALO_PIX; i += GCONV_IMPL_HALO_THREADS) {
        const int jr = gconv_impl_halo_div(i, P->tw_m), jc = i - jr * P->TW;
        const int ok = i < npix && ow0 + jc < P->OW;
        pixtab[i] = i < npix ? jr * P->sh * P->HC + jc * P->sw : 0;
        outtab[i] = ok ? (jr << 16) | jc : -1;
    }
    gconv_impl_igemm_cp_wait(0);
    __syncthreads();

    {
        const unsigned hs = gconv_impl_igemm_smem_addr(smem), ws = gconv_impl_igemm_smem_addr(wsm);
        const int mt_count = (npix + 15) >> 4, units = mt_count * gvalid, nj = K >> 3;
        const int ksteps = C >= 16 ? C >> 4 : 1;
        const int hstep = P->dh * P->HC;
        int u, mt = 0, g = warp;
        /* units (m-tile mt, group g) in the order g fastest; warp w takes w, w+4, ... */
        while (g >= gvalid)
            g -= gvalid, mt++;
        for (u = warp; u < units; u += GCONV_IMPL_HALO_THREADS / 32) {
            /* this lane's ldmatrix row: pixel lane % 16 of the 16-pixel tile */
            const int hp0 = pixtab[mt * 16 + (lane & 15)];
            /* B rows of this lane: output channels g*K + 8*jj + (lane & 7) (+8 in the second
             * half-warp for x4, lane & 15 for the k8 x2); clamped into the group */
            const int wr4 = g * K + (lane & 7) + ((lane >> 4) << 3);
            const int wr2 = g * K + (lane & 15);
            const unsigned wb4 = ws + (unsigned)wr4 * P->wrow * 2 + ((lane >> 3) & 1) * 16;
            const unsigned wb2 = ws + (unsigned)wr2 * P->wrow * 2;
            const int qa = g * (C >> 3) + (lane >> 4);
            float d[32];
            int ty, tx, ks, jj, e;
#pragma unroll
            for (jj = 0; jj < 32; jj++)
                d[jj] = 0.0f;
            for (ty = 0; ty < P->Y; ty++) {
                int hp = hp0 + ty * hstep;
                for (tx = 0; tx < P->X; tx++, hp += P->dw) {
                    const unsigned abase = hs + hp * 128;
                    const unsigned koff = (unsigned)(ty * P->X + tx) * C * 2;
                    for (ks = 0; ks < ksteps; ks++) {
                        unsigned a[4];
                        if (C == 8)
                            gconv_impl_igemm_ldsm_x2(abase + ((g ^ (hp & 7)) << 4), a);
                        else
                            gconv_impl_igemm_ldsm_x4(abase + (((qa + 2 * ks) ^ (hp & 7)) << 4), a);
#pragma unroll
                        for (jj = 0; jj < 8; jj += 2) {
                            unsigned b[4];
                            if (jj >= nj)
                                break;
                            if (C == 8) {
                                /* k8: x2 gives tiles jj (lanes 0-7) and jj+1 (8-15) */
                                const unsigned rowoff = (unsigned)(jj * 8 + (lane & 15) < K ? jj * 8 : jj * 8 - 8);
                                gconv_impl_igemm_ldsm_x2(wb2 + rowoff * P->wrow * 2 + koff, b);
                                gconv_impl_halo_mma_k8(d + jj * 4, a, b[0], dt);
                                if (jj + 1 < nj)
                                    gconv_impl_halo_mma_k8(d + jj * 4 + 4, a, b[1], dt);
                            } else {
                                const unsigned rowoff = (unsigned)(jj * 8 + (lane & 7) + ((lane >> 4) << 3) < K ? jj * 8 : jj * 8 - 8);
                                gconv_impl_igemm_ldsm_x4(wb4 + rowoff * P->wrow * 2 + koff + ks * 32, b);
                                if (dt == GCONV_F16) {
                                    gconv_impl_igemm_mma_f16(d + jj * 4, a, b);
                                    if (jj + 1 < nj)
                                        gconv_impl_igemm_mma_f16(d + jj * 4 + 4, a, b + 2);
                                } else {
                                    gconv_impl_igemm_mma_bf16(d + jj * 4, a, b);
                                    if (jj + 1 < nj)
                                        gconv_impl_igemm_mma_bf16(d + jj * 4 + 4, a, b + 2);
                                }
                            }
                        }
                    }
                }
            }
            /* epilogue from the fragments: rows r0 = 16*mt + lane/4 and r0 + 8, columns
             * 8*jj + 2*(lane%4) + {0,1} of the unit's 16 x K tile */
            {
                const int r0 = mt * 16 + (lane >> 2);
                const int o0 = outtab[r0], o1 = outtab[r0 + 8];
#pragma unroll
                for (jj = 0; jj < 8; jj++)
#pragma unroll
                    for (e = 0; e < 4; e++)
                        if (jj < nj) {
                            const int o = (e >> 1) ? o1 : o0;
                            const int r = r0 + ((e >> 1) << 3);
                            const int k = jj * 8 + ((lane & 3) << 1) + (e & 1);
                            float v = 0.0f;
                            if (o >= 0)
                                v = epi(&P->epi, dt, d[jj * 4 + e], g0 + g, n, k, 0, oh0 + (o >> 16),
                                        ow0 + (o & 0xffff));
                            if (r < npix)
                                cs[r * ld + g * K + k] = (unsigned short)gconv_impl_igemm_to_bits(v, dt);
                        }
            }
            g += GCONV_IMPL_HALO_THREADS / 32;
            while (g >= gvalid)
                g -= gvalid, mt++;
        }
        __syncthreads();
        /* store: a thread copies 8 consecutive channels (16 bytes) of one pixel */
        {
            const int cpp = gvalid * K / 8, items = npix * cpp;
            int it;
            for (it = tid; it < items; it += GCONV_IMPL_HALO_THREADS) {
                const int pix = gconv_impl_halo_div(it, P->cpp_m[gvalid - 1]), ch = (it - pix * cpp) * 8;
                const int o = outtab[pix];
                int64_t off;
                if (o < 0)
                    continue;
                off = (int64_t)n * P->out_n + (int64_t)(oh0 + (o >> 16)) * P->out_h +
                      (int64_t)(ow0 + (o & 0xffff)) * P->out_w + (int64_t)g0 * K + ch;
                *(uint4 *)((unsigned char *)P->out + off * 2) = *(const uint4 *)(cs + pix * ld + ch);
            }
        }
    }
#else
    (void)P, (void)dt, (void)epi;
#endif
}

/* ceil(2^32 / d) for d >= 2, 0 for d = 1 (see gconv_impl_halo_div). */
static inline unsigned gconv_impl_halo_magic(int d)
{
    if (d <= 1)
        return 0u;
    return (unsigned)((((uint64_t)1 << 32) + (uint64_t)d - 1) / (uint64_t)d);
}

/* Plan a problem for the halo kernel: 1 and the parameters, or 0 if it does not fit. */
static inline int gconv_impl_halo_plan(const gconv_problem *p, gconv_dtype dt, const void *in,
                                       const void *wei, void *out, const gconv_epilogue *epi,
                                       gconv_impl_halo_params *P)
{
#if GCONV_IMPL_HALO_ENABLE
    const int C = p->C, K = p->K;
    int GB, TH, TW, HR, HC, taps, wrow, halo, wbytes, OH, OW;
    if (dt == GCONV_F32 || p->ndim > 2)
        return 0;
    if (gconv_layout_family(gconv_in_layout(p)) != GCONV_NHWGC ||
        gconv_layout_family(gconv_out_layout(p)) != GCONV_NHWGC ||
        gconv_layout_family(gconv_wei_layout(p)) != GCONV_GKYXC)
        return 0;
    if (!(C == 8 || C == 16 || C == 32 || C == 64) || K % 8 || K > 64)
        return 0;
    GB = 64 / C;
    if (GB * K > 128) /* staged row */
        return 0;
    if (((uintptr_t)in | (uintptr_t)wei | (uintptr_t)out) % 16)
        return 0;
    if (gconv_in_elems(p) >= ((int64_t)1 << 31) || gconv_out_elems(p) >= ((int64_t)1 << 31))
        return 0;
    OH = gconv_out_len(p, 1), OW = gconv_out_len(p, 2);
    taps = p->filter[1] * p->filter[2];
    wrow = taps * C + ((taps * C / 8) % 2 == 0 ? 8 : 0);
    wbytes = GB * K * wrow * 2;
    /* band: whole output rows while they fit 128 pixels, else a segment of one row */
    TW = OW < GCONV_IMPL_HALO_PIX ? OW : GCONV_IMPL_HALO_PIX;
    TH = GCONV_IMPL_HALO_PIX / TW;
    if (TH > OH)
        TH = OH;
    for (;;) {
        HR = (TH - 1) * p->stride[1] + (p->filter[1] - 1) * p->dilation[1] + 1;
        HC = (TW - 1) * p->stride[2] + (p->filter[2] - 1) * p->dilation[2] + 1;
        halo = HR * HC * 128;
        if (halo + wbytes <= GCONV_IMPL_HALO_MAX_SMEM)
            break;
        if (TH > 1)
            TH = (TH + 1) / 2;
        else if (TW > 16)
            TW = (TW + 1) / 2;
        else
            return 0;
    }
    memset(P, 0, sizeof *P);
    P->in = in, P->wei = wei, P->out = out;
    P->epi = epi ? *epi : gconv_epi_scale(1.0f);
    P->G = p->G, P->C = C, P->K = K, P->GB = GB;
    P->H = p->in[1], P->W = p->in[2], P->OH = OH, P->OW = OW;
    P->Y = p->filter[1], P->X = p->filter[2];
    P->sh = p->stride[1], P->sw = p->stride[2], P->dh = p->dilation[1], P->dw = p->dilation[2];
    P->ph = p->pad_lo[1], P->pw = p->pad_lo[2];
    P->TH = TH, P->TW = TW, P->HR = HR, P->HC = HC, P->wrow = wrow;
    P->bh = (OH + TH - 1) / TH, P->bw = (OW + TW - 1) / TW, P->bg = (p->G + GB - 1) / GB;
    P->halo_bytes = halo;
    P->rowc_m = gconv_impl_halo_magic(taps * C / 8);
    P->tw_m = gconv_impl_halo_magic(TW);
    {
        int g;
        for (g = 1; g <= GB; g++)
            P->cpp_m[g - 1] = gconv_impl_halo_magic(g * K / 8);
    }
    {
        gconv_act_strides si = gconv_in_strides(p), so = gconv_out_strides(p);
        P->in_n = si.n, P->in_h = si.s[1], P->in_w = si.s[2];
        P->out_n = so.n, P->out_h = so.s[1], P->out_w = so.s[2];
    }
    return (int64_t)p->N * P->bh * P->bw * P->bg < 0x7fffffffLL;
#else
    (void)p, (void)dt, (void)in, (void)wei, (void)out, (void)epi, (void)P;
    return 0;
#endif
}

/* Shared memory of a planned launch: halo, weights, staged 16-bit output, pixel tables. */
static inline int gconv_impl_halo_smem(const gconv_impl_halo_params *P)
{
    return P->halo_bytes + P->GB * P->K * P->wrow * 2 + P->TH * P->TW * (P->GB * P->K + 8) * 2 +
           2 * GCONV_IMPL_HALO_PIX * 4;
}

/* The most any plan asks for (the launcher raises the kernel's limit to this once). */
#define GCONV_IMPL_HALO_SMEM_LIMIT                                                               \
    (GCONV_IMPL_HALO_MAX_SMEM + GCONV_IMPL_HALO_PIX * (128 + 8) * 2 + 2 * GCONV_IMPL_HALO_PIX * 4)

#endif /* GCONV_IGEMM_HALO_H */
