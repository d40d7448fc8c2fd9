/* gconv/fwd.h: the forward grouped convolution, out = epilogue(conv(in, wei)) per group.
 *
 * Usage:
 *     GCONV_FWD(fwd_f16, GCONV_F16, GCONV_NHWGC, GCONV_GKYXC)     at file scope, once
 *
 *     gconv_fwd_args a;
 *     memset(&a, 0, sizeof a);
 *     a.in = x; a.wei = w; a.out = y;            device pointers, in the problem's layouts
 *     a.epi = &e;                                NULL: plain store
 *     a.why = why; a.why_len = sizeof why;       optional: the reason of a refusal
 *     gconv_status s = fwd_f16(&p, &a, stream);  asynchronous; never synchronises
 *
 * Instantiations (ACT_FAMILY one of GCONV_NHWGC / GCONV_GNHWC / GCONV_NGCHW, WEI_FAMILY one of
 * GCONV_GKYXC / GCONV_GKCYX; the 2D name stands for its 1D / 2D / 3D family):
 *   GCONV_FWD(name, T, ACT_FAMILY, WEI_FAMILY)
 *       picks the algorithm by shape at run time, in this order:
 *       1. (CUDA; unless GCONV_FWD_HALO is defined to 0) the halo-tile tensor-core kernel of
 *          gconv/igemm_halo.h for few channels per group: NHWGC / GKYXC, fp16 / bf16, 1D / 2D,
 *          stride 1, C in {8, 16, 32} with K even and at most 32, or C = K = 4 with G even
 *          (pairs of groups on block-diagonal weights); a persistent grid;
 *       2. the direct kernels of gconv/direct_fwd.h where its _direct_fits says so (depthwise);
 *       3. its FEWC kernel for C = K = 4 in NHWGC (when it accepts the problem);
 *       4. (sm_90a builds, fp16 / bf16, NHWGC / GNHWC with GKYXC, C a multiple of 64, K >= 64,
 *          16-byte aligned in / wei, 32-bit offsets) the warp-specialised kernel of
 *          gconv/igemm_ws.h: tensor-copy (TMA im2col) producer, wgmma consumers, tiles 128x128
 *          (one or two blocks per SM), 256x128, 128x256 or 152x256 (152 pixels) by a model of
 *          rounds of tiles over the SMs (gconv_impl_ws_pick); where its tensor maps cannot
 *          describe the problem (im2col box corners or tap offsets out of range, strides over 8),
 *          step 5;
 *       5. the implicit GEMM of gconv/igemm.h: with 16-byte gathers (NHWGC / GNHWC + GKYXC, C a
 *          multiple of the vector, aligned pointers) the tile is chosen among 128x128, 128x64,
 *          64x64, 128x32, 128x16 by a wave-quantisation cost model over M = N * output pixels,
 *          N = K and G (gconv_impl_fwd_pick); element-wise gathers use 128x128 or 64x64.
 *       On sm_90a builds (nvcc -gencode arch=compute_90a,code=sm_90a) the GEMM tiles with 64 rows
 *       per warpgroup and N of 64/128/256 run on wgmma; plain sm_90 / sm_80 builds run the same
 *       tiles on mma.sync; AMD gfx908/90a/940 on MFMA; gfx1030 and fp32 without tf32 on FMA.
 *   GCONV_FWD_TILED(name, T, ACT_FAMILY, WEI_FAMILY, TILE)
 *       implicit GEMM only, with the pinned tile TILE (a GCONV_TILE_* macro of gconv/igemm.h).
 *   GCONV_FWD_USER_OP(name, T, ACT_FAMILY, WEI_FAMILY, OPFN)
 *       as GCONV_FWD, with the __device__ function OPFN in place of the built-in epilogue;
 *       its signature is that of gconv_impl_epilogue_apply (gconv/device.h):
 *       float OPFN(const gconv_epilogue *e, gconv_dtype t, float acc, int g, int n, int k,
 *                  int d, int h, int w)
 *       and it receives a->epi (or a plain-store description when a->epi is NULL).
 * Each defines
 *   int    name_supports(const gconv_problem *p, char *why, size_t len);  1, or 0 + reason
 *   size_t name_workspace_size(const gconv_problem *p);                   0 (no workspace yet)
 *   gconv_status name(const gconv_problem *p, const gconv_fwd_args *a, hipStream_t stream);
 *
 * Layouts: the problem's input and output layouts must both be members of ACT_FAMILY and its
 * weight layout a member of WEI_FAMILY (DEFAULT counts as NHWGC / GKYXC), else
 * GCONV_ERR_LAYOUT with the reason.
 *
 * Alignment. Element alignment (2 bytes for fp16 / bf16, 4 for fp32) of in, wei and out is
 * required everywhere (GCONV_ERR_ALIGNMENT). Beyond that:
 *   - GCONV_FWD / GCONV_FWD_USER_OP never refuse for alignment: the fast implicit GEMM (16-byte
 *     cp.async / vector loads, for NHWGC or GNHWC with GKYXC) is used when C is a multiple of
 *     the 16-byte vector (8 for 16-bit types, 4 for fp32) and in and wei are 16-byte aligned;
 *     otherwise the same engine runs with element-wise gathers. Output stores are 16 bytes
 *     wide when the channels are contiguous, K is a multiple of the vector and out is 16-byte
 *     aligned, element-wise otherwise.
 *   - GCONV_FWD_TILED pins the vectorised kernel for every operand whose family has contiguous
 *     channels (input and output for NHWGC / GNHWC, weights for GKYXC) and refuses with
 *     GCONV_ERR_ALIGNMENT when such a pointer (in, wei, out) is not 16-byte aligned or C is not
 *     a multiple of the vector. Operands of the other families (NGCHW, GKCYX) are gathered
 *     element-wise and need only element alignment.
 *
 * Precision: fp32 accumulation everywhere. fp32 inputs use FMA on NVIDIA unless
 * a->allow_tf32, then tf32 tensor cores (about 1e-3 relative error); on AMD matrix cores fp32
 * is computed in full fp32.
 *
 * Index width: kernels index in 32 bits when every tensor has fewer than 2^31 elements and in
 * 64 bits otherwise, so inputs and outputs over 2 GB (and 2^31 elements) work.
 *
 * Workspace: none (name_workspace_size returns 0; a->workspace is ignored).
 */
#ifndef GCONV_FWD_H
#define GCONV_FWD_H

#include "device.h"
#include "epilogue.h"
#include "igemm.h"
#include "layout.h"
#include "problem.h"

#include "direct_fwd.h"
#include "igemm_halo.h"

typedef struct gconv_fwd_args {
    const void *in;            /* device pointers, in the problem's layouts */
    const void *wei;
    void *out;
    const gconv_epilogue *epi; /* NULL = plain store */
    void *workspace;           /* if name_workspace_size > 0 */
    size_t workspace_size;
    int allow_tf32;            /* fp32 only: tensor cores in tf32 */
    char *why;                 /* optional: reason of a refusal */
    size_t why_len;
} gconv_fwd_args;

/* ---- kernel parameters --------------------------------------------------------------------- */

/* GEMM view per group g: row m = ((n*OD + od)*OH + oh)*OW + ow of M = N*OD*OH*OW, column k of
 * K, reduction index kk = ((z*Y + y)*X + x)*C + c of Kg = C*Z*Y*X (channels innermost, which
 * is also the flat weight index of GKYXC). */
typedef struct gconv_impl_fwd_params {
    const void *in;
    const void *wei;
    void *out;
    gconv_epilogue epi;
    int G, C, K, Kg;
    int in_sp[3], out_sp[3], flt[3], str[3], dil[3], pad[3];
    int64_t M;
    int mt, nt;  /* tiles per group along M and along K */
    int out_vec; /* 16-byte output stores allowed */
    int a_fast;  /* vector A gathers with C % BK == 0 and filter sides <= 32: every k-tile lies in
                    one tap, validity comes from per-row bit masks (set by the launcher) */
    int64_t tap_s[3]; /* dilation * input stride per spatial axis: offset of one tap step */
    gconv_act_strides si, so;
    gconv_wei_strides sw;
    int wtr; /* wei is not the view's [G][K][taps][C] but the GKYXC weights of the backward-data
              * problem whose stride-1 forward view this is: B[g][k][t][c] = wei[g][c][T-1-t][k]
              * (T taps, flattened). Only the warp-specialised kernel (gconv/igemm_ws.h) takes
              * it; sw is then unused. */
} gconv_impl_fwd_params;

#define GCONV_IMPL_LD_VEC 0    /* 16-byte chunks, channels contiguous */
#define GCONV_IMPL_LD_SCALAR 1 /* element-wise gather, any strides */

/* ---- gathers ------------------------------------------------------------------------------- */

/* The state of one thread's share of the A (input) or B (weight) tile loads.
 * Vector mode: the thread copies chunk column q (elements q*vec .. +vec-1 of each k-tile) of
 * `slots` rows, tid/cpr + i*(threads/cpr). Scalar mode: it gathers elements q .. q+E-1 of one
 * row, tid % rows, with E = rows*BK/threads. (kk, c, x, y, z) is the position of the thread's
 * first element in the next k-tile to be loaded. */
typedef struct gconv_impl_fwd_gather {
    int q, slots;
    int kk, c, x, y, z;
    int row[16], ok[16];
    int64_t base[16];
    int d0[16], h0[16], w0[16];
    unsigned md[16], mh[16], mw[16]; /* fast A: bit t set if tap t of that axis is inside */
    unsigned tm[16];                 /* fast A, at most 32 taps: bit (z*Y + y)*X + x set if inside */
    int64_t org[16];                 /* fast A: offset of the row's receptive-field origin */
    unsigned sdst[16];               /* vector: byte offset of the slot's chunk in a stage */
    gconv_impl_igemm_u4 rv[16];
    unsigned sv[64];
} gconv_impl_fwd_gather;

/* Step a (kk, c, x, y, z) position by `by` reduction elements. */
static __device__ __forceinline__ void gconv_impl_fwd_step(gconv_impl_fwd_gather *s, int by,
                                                           const gconv_impl_fwd_params *P)
{
    s->kk += by;
    s->c += by;
    while (s->c >= P->C) {
        s->c -= P->C;
        if (++s->x == P->flt[2]) {
            s->x = 0;
            if (++s->y == P->flt[1]) {
                s->y = 0;
                ++s->z;
            }
        }
    }
}

static __device__ __forceinline__ void gconv_impl_fwd_start(gconv_impl_fwd_gather *s, int kk0,
                                                            const gconv_impl_fwd_params *P)
{
    const int tap = kk0 / P->C;
    s->kk = kk0;
    s->c = kk0 % P->C;
    s->x = tap % P->flt[2];
    s->y = (tap / P->flt[2]) % P->flt[1];
    s->z = tap / (P->flt[2] * P->flt[1]);
}

/* m -> (n, od, oh, ow). */
static __device__ __forceinline__ void gconv_impl_fwd_split_m(const gconv_impl_fwd_params *P,
                                                              int64_t m, int idx64, int *n,
                                                              int *d, int *h, int *w)
{
    if (idx64) {
        int64_t q = m / P->out_sp[2];
        *w = (int)(m - q * P->out_sp[2]);
        m = q, q = m / P->out_sp[1];
        *h = (int)(m - q * P->out_sp[1]);
        m = q, q = m / P->out_sp[0];
        *d = (int)(m - q * P->out_sp[0]);
        *n = (int)q;
    } else {
        unsigned u = (unsigned)m, q = u / (unsigned)P->out_sp[2];
        *w = (int)(u - q * (unsigned)P->out_sp[2]);
        u = q, q = u / (unsigned)P->out_sp[1];
        *h = (int)(u - q * (unsigned)P->out_sp[1]);
        u = q, q = u / (unsigned)P->out_sp[0];
        *d = (int)(u - q * (unsigned)P->out_sp[0]);
        *n = (int)q;
    }
}

/* Offset sum a + b*sb + c*sc + d*sd in the kernel's index width. */
static __device__ __forceinline__ int64_t gconv_impl_fwd_off4(int64_t a, int b, int64_t sb, int c,
                                                          int64_t sc, int d, int64_t sd, int idx64)
{
    if (idx64)
        return a + (int64_t)b * sb + (int64_t)c * sc + (int64_t)d * sd;
    return (int64_t)((int)a + b * (int)sb + c * (int)sc + d * (int)sd);
}

/* A: rows of the tile are output pixels m0 + r; each row remembers the input origin of its
 * receptive field (od*stride - pad, ...) and the offset of its (g, n). */
static __device__ __forceinline__ void gconv_impl_fwd_a_init(const gconv_impl_fwd_params *P,
                                                             gconv_impl_fwd_gather *s,
                                                             gconv_impl_tile t, int esize,
                                                             int mode, int idx64, int g,
                                                             int64_t m0)
{
    const int nt = gconv_impl_tile_threads(t), tid = (int)threadIdx.x;
    const int vec = 16 / esize, cpr = t.bk / vec;
    int first, step, i;
    if (mode == GCONV_IMPL_LD_VEC) {
        s->q = (tid % cpr) * vec;
        s->slots = (t.bm * cpr + nt - 1) / nt;
        first = tid / cpr, step = nt / cpr;
    } else {
        s->q = (tid / t.bm) * (t.bm * t.bk / nt);
        s->slots = 1;
        first = tid % t.bm, step = 0;
    }
#pragma unroll
    for (i = 0; i < 16; i++)
        if (i < s->slots) {
            const int r = first + i * step;
            const int64_t m = m0 + r;
            int n = 0, d = 0, h = 0, w = 0;
            s->row[i] = r;
            s->ok[i] = r < t.bm && m < P->M;
            if (s->ok[i])
                gconv_impl_fwd_split_m(P, m, idx64, &n, &d, &h, &w);
            s->d0[i] = d * P->str[0] - P->pad[0];
            s->h0[i] = h * P->str[1] - P->pad[1];
            s->w0[i] = w * P->str[2] - P->pad[2];
            s->base[i] = idx64 ? (int64_t)g * P->si.g + (int64_t)n * P->si.n
                               : (int64_t)(g * (int)P->si.g + n * (int)P->si.n);
            if (mode == GCONV_IMPL_LD_VEC && P->a_fast) {
                unsigned b;
                int j;
                s->md[i] = s->mh[i] = s->mw[i] = 0u;
                for (j = 0, b = 1u; j < P->flt[0]; j++, b <<= 1)
                    if ((unsigned)(s->d0[i] + j * P->dil[0]) < (unsigned)P->in_sp[0])
                        s->md[i] |= b;
                for (j = 0, b = 1u; j < P->flt[1]; j++, b <<= 1)
                    if ((unsigned)(s->h0[i] + j * P->dil[1]) < (unsigned)P->in_sp[1])
                        s->mh[i] |= b;
                for (j = 0, b = 1u; j < P->flt[2]; j++, b <<= 1)
                    if ((unsigned)(s->w0[i] + j * P->dil[2]) < (unsigned)P->in_sp[2])
                        s->mw[i] |= b;
                if (!s->ok[i])
                    s->md[i] = 0u;
                s->tm[i] = 0u;
                if (P->a_fast == 2) {
                    /* all taps in one word: bit (z*Y + y)*X + x */
                    int z, y, x;
                    for (z = 0, b = 1u; z < P->flt[0]; z++)
                        for (y = 0; y < P->flt[1]; y++)
                            for (x = 0; x < P->flt[2]; x++, b <<= 1)
                                if ((s->md[i] >> z) & (s->mh[i] >> y) & (s->mw[i] >> x) & 1u)
                                    s->tm[i] |= b;
                }
                s->org[i] = gconv_impl_fwd_off4(s->base[i], s->d0[i], P->si.s[0], s->h0[i],
                                                P->si.s[1], s->w0[i], P->si.s[2], idx64);
            }
            if (mode == GCONV_IMPL_LD_VEC)
                s->sdst[i] = (unsigned)gconv_impl_igemm_chunk_off(r, s->q / vec, cpr);
        }
    gconv_impl_fwd_start(s, s->q, P);
}

/* Issue the loads of the next k-tile of A into stage tile `st` (cp.async) or registers. */
static __device__ __forceinline__ void gconv_impl_fwd_a_issue(const gconv_impl_fwd_params *P,
                                                              gconv_impl_fwd_gather *s,
                                                              unsigned char *st, gconv_impl_tile t,
                                                              int esize, int mode, int idx64,
                                                              gconv_dtype dt)
{
    const int vec = 16 / esize, cpr = t.bk / vec;
    const unsigned char *in = (const unsigned char *)P->in;
    int i;
    if (mode == GCONV_IMPL_LD_VEC && P->a_fast) {
        /* the whole k-tile is channels c .. of tap (z, y, x): one offset for every row; every
         * k-tile is inside Kg (C % BK == 0) */
        const int64_t tap = gconv_impl_fwd_off4(s->c, s->z, P->tap_s[0], s->y, P->tap_s[1], s->x,
                                                P->tap_s[2], idx64);
        const int tbit = (s->z * P->flt[1] + s->y) * P->flt[2] + s->x;
        const int all = (t.bm * cpr) % gconv_impl_tile_threads(t) == 0; /* every slot exists */
#if GCONV_IMPL_IGEMM_CP_ASYNC
        const unsigned sbase = gconv_impl_igemm_smem_addr(st);
#endif
#pragma unroll
        for (i = 0; i < 16; i++)
            if (i < s->slots && (all || s->row[i] < t.bm)) {
                const unsigned valid =
                    P->a_fast == 2 ? (s->tm[i] >> tbit) & 1u
                                   : (s->md[i] >> s->z) & (s->mh[i] >> s->y) &
                                         (s->mw[i] >> s->x) & 1u;
                const int64_t off = idx64 ? s->org[i] + tap : (int64_t)((int)s->org[i] + (int)tap);
                const unsigned char *src = valid ? in + off * esize : in;
#if GCONV_IMPL_IGEMM_CP_ASYNC
                gconv_impl_igemm_cp_async16(sbase + s->sdst[i], src, (int)valid);
#else
                {
                    gconv_impl_igemm_u4 z0;
                    z0.x = z0.y = z0.z = z0.w = 0u;
                    s->rv[i] = valid ? gconv_impl_igemm_ld_global16(src) : z0;
                }
                (void)st;
#endif
            }
    } else if (mode == GCONV_IMPL_LD_VEC) {
        const int zd = s->z * P->dil[0], yd = s->y * P->dil[1], xd = s->x * P->dil[2];
        const int kok = s->kk < P->Kg;
#pragma unroll
        for (i = 0; i < 16; i++)
            if (i < s->slots && s->row[i] < t.bm) {
                const int id = s->d0[i] + zd, ih = s->h0[i] + yd, iw = s->w0[i] + xd;
                const int valid = s->ok[i] && kok && (unsigned)id < (unsigned)P->in_sp[0] &&
                                  (unsigned)ih < (unsigned)P->in_sp[1] &&
                                  (unsigned)iw < (unsigned)P->in_sp[2];
                const int64_t off = gconv_impl_fwd_off4(s->base[i] + s->c, id, P->si.s[0], ih,
                                                    P->si.s[1], iw, P->si.s[2], idx64);
                const unsigned char *src = valid ? in + off * esize : in;
#if GCONV_IMPL_IGEMM_CP_ASYNC
                gconv_impl_igemm_cp_async16(
                    gconv_impl_igemm_smem_addr(
                        st + gconv_impl_igemm_chunk_off(s->row[i], s->q / vec, cpr)),
                    src, valid);
#else
                {
                    gconv_impl_igemm_u4 z0;
                    z0.x = z0.y = z0.z = z0.w = 0u;
                    s->rv[i] = valid ? gconv_impl_igemm_ld_global16(src) : z0;
                }
                (void)st;
#endif
            }
    } else {
        const int E = t.bm * t.bk / gconv_impl_tile_threads(t);
        gconv_impl_fwd_gather w = *s; /* walks the E elements */
        (void)st;
#pragma unroll
        for (i = 0; i < 64; i++)
            if (i < E) {
                const int id = s->d0[0] + w.z * P->dil[0], ih = s->h0[0] + w.y * P->dil[1];
                const int iw = s->w0[0] + w.x * P->dil[2];
                const int valid = s->ok[0] && w.kk < P->Kg && (unsigned)id < (unsigned)P->in_sp[0] &&
                                  (unsigned)ih < (unsigned)P->in_sp[1] &&
                                  (unsigned)iw < (unsigned)P->in_sp[2];
                const int64_t off = gconv_impl_fwd_off4(
                    gconv_impl_fwd_off4(s->base[0], w.c, P->si.c, 0, 0, 0, 0, idx64), id, P->si.s[0],
                    ih, P->si.s[1], iw, P->si.s[2], idx64);
                s->sv[i] = valid ? gconv_impl_igemm_ld_bits(P->in, off, dt) : 0u;
                gconv_impl_fwd_step(&w, 1, P);
            }
    }
    gconv_impl_fwd_step(s, t.bk, P);
}

/* Store what a_issue left in registers (register-staged vector loads, scalar gathers). */
static __device__ __forceinline__ void gconv_impl_fwd_store(gconv_impl_fwd_gather *s,
                                                            unsigned char *st, int rows,
                                                            gconv_impl_tile t, int esize, int mode)
{
    const int vec = 16 / esize, cpr = t.bk / vec;
    int i;
    if (mode == GCONV_IMPL_LD_VEC) {
#if !GCONV_IMPL_IGEMM_CP_ASYNC
#pragma unroll
        for (i = 0; i < 16; i++)
            if (i < s->slots && s->row[i] < rows)
                gconv_impl_igemm_st_shared16(
                    st + gconv_impl_igemm_chunk_off(s->row[i], s->q / vec, cpr), s->rv[i]);
#else
        (void)s, (void)st, (void)rows, (void)i, (void)cpr;
#endif
    } else {
        const int E = rows * t.bk / gconv_impl_tile_threads(t);
        gconv_impl_igemm_st_elems(st, s->row[0], s->q, E, s->sv, esize, cpr);
    }
}

/* B: rows of the tile are output channels n0 + r of group g; the reduction index kk walks the
 * weights of (g, k) in the order (z, y, x, c). */
static __device__ __forceinline__ void gconv_impl_fwd_b_init(const gconv_impl_fwd_params *P,
                                                             gconv_impl_fwd_gather *s,
                                                             gconv_impl_tile t, int esize,
                                                             int mode, int idx64, int g, int n0)
{
    const int nt = gconv_impl_tile_threads(t), tid = (int)threadIdx.x;
    const int vec = 16 / esize, cpr = t.bk / vec;
    int first, step, i;
    if (mode == GCONV_IMPL_LD_VEC) {
        s->q = (tid % cpr) * vec;
        s->slots = (t.bn * cpr + nt - 1) / nt;
        first = tid / cpr, step = nt / cpr;
    } else {
        s->q = (tid / t.bn) * (t.bn * t.bk / nt);
        s->slots = 1;
        first = tid % t.bn, step = 0;
    }
#pragma unroll
    for (i = 0; i < 16; i++)
        if (i < s->slots) {
            const int r = first + i * step;
            const int k = n0 + r;
            s->row[i] = r;
            s->ok[i] = r < t.bn && k < P->K;
            s->base[i] = idx64 ? (int64_t)g * P->sw.g + (int64_t)k * P->sw.k
                               : (int64_t)(g * (int)P->sw.g + k * (int)P->sw.k);
            s->d0[i] = s->h0[i] = s->w0[i] = 0;
            if (mode == GCONV_IMPL_LD_VEC)
                s->sdst[i] = (unsigned)gconv_impl_igemm_chunk_off(r, s->q / vec, cpr);
        }
    gconv_impl_fwd_start(s, s->q, P);
}

static __device__ __forceinline__ void gconv_impl_fwd_b_issue(const gconv_impl_fwd_params *P,
                                                              gconv_impl_fwd_gather *s,
                                                              unsigned char *st, gconv_impl_tile t,
                                                              int esize, int mode, int idx64,
                                                              gconv_dtype dt)
{
    const int vec = 16 / esize, cpr = t.bk / vec;
    const unsigned char *wei = (const unsigned char *)P->wei;
    int i;
    if (mode == GCONV_IMPL_LD_VEC) {
        /* GKYXC: the flat offset of (g, k, kk) is base + kk */
        const int kok = s->kk < P->Kg;
        const int all = (t.bn * cpr) % gconv_impl_tile_threads(t) == 0; /* every slot exists */
#if GCONV_IMPL_IGEMM_CP_ASYNC
        const unsigned sbase = gconv_impl_igemm_smem_addr(st);
#endif
#pragma unroll
        for (i = 0; i < 16; i++)
            if (i < s->slots && (all || s->row[i] < t.bn)) {
                const int valid = s->ok[i] & kok;
                const int64_t off = idx64 ? s->base[i] + s->kk : (int64_t)((int)s->base[i] + s->kk);
                const unsigned char *src = valid ? wei + off * esize : wei;
#if GCONV_IMPL_IGEMM_CP_ASYNC
                gconv_impl_igemm_cp_async16(sbase + s->sdst[i], src, valid);
#else
                {
                    gconv_impl_igemm_u4 z0;
                    z0.x = z0.y = z0.z = z0.w = 0u;
                    s->rv[i] = valid ? gconv_impl_igemm_ld_global16(src) : z0;
                }
                (void)st;
#endif
            }
    } else {
        const int E = t.bn * t.bk / gconv_impl_tile_threads(t);
        gconv_impl_fwd_gather w = *s;
        (void)st;
#pragma unroll
        for (i = 0; i < 64; i++)
            if (i < E) {
                const int valid = s->ok[0] && w.kk < P->Kg;
                const int64_t off = gconv_impl_fwd_off4(
                    gconv_impl_fwd_off4(s->base[0], w.c, P->sw.c, 0, 0, 0, 0, idx64), w.z, P->sw.s[0],
                    w.y, P->sw.s[1], w.x, P->sw.s[2], idx64);
                s->sv[i] = valid ? gconv_impl_igemm_ld_bits(P->wei, off, dt) : 0u;
                gconv_impl_fwd_step(&w, 1, P);
            }
    }
    gconv_impl_fwd_step(s, t.bk, P);
}

/* ---- epilogue: staged C rows -> output ------------------------------------------------------ */

/* Channels contiguous (NHWGC, GNHWC): a thread takes `ve` consecutive channels of one row,
 * applies the epilogue to each and stores them with one 16-byte store when it may. */
static __device__ __forceinline__ void gconv_impl_fwd_store_cc(const gconv_impl_fwd_params *P,
                                                               const float *cs, gconv_impl_tile t,
                                                               gconv_dtype dt, int idx64, int g,
                                                               int64_t m0, int n0, int rows,
                                                               gconv_impl_epi_fn epi)
{
    const int esize = dt == GCONV_F32 ? 4 : 2, ve = 16 / esize;
    const int nt = gconv_impl_tile_threads(t), cr = t.bn / ve, rpp = nt / cr;
    const int ld = t.bn + GCONV_IMPL_CPAD, tid = (int)threadIdx.x;
    const int ch = tid % cr, k0 = n0 + ch * ve;
    int r;
    for (r = tid / cr; r < rows; r += rpp) {
        const int64_t m = m0 + r;
        int n, d, h, w, e;
        int64_t ob;
        unsigned bits[8];
        if (m >= P->M)
            break;
        gconv_impl_fwd_split_m(P, m, idx64, &n, &d, &h, &w);
        ob = idx64 ? (int64_t)g * P->so.g + (int64_t)n * P->so.n + (int64_t)d * P->so.s[0] +
                         (int64_t)h * P->so.s[1] + (int64_t)w * P->so.s[2]
                   : (int64_t)(g * (int)P->so.g + n * (int)P->so.n + d * (int)P->so.s[0] +
                               h * (int)P->so.s[1] + w * (int)P->so.s[2]);
#pragma unroll
        for (e = 0; e < 8; e++)
            if (e < ve) {
                const int k = k0 + e;
                bits[e] = 0u;
                if (k < P->K)
                    bits[e] = gconv_impl_igemm_to_bits(
                        epi(&P->epi, dt, cs[r * ld + ch * ve + e], g, n, k, d, h, w), dt);
            }
        if (P->out_vec && k0 + ve <= P->K) {
            gconv_impl_igemm_u4 v;
            if (esize == 4) {
                v.x = bits[0], v.y = bits[1], v.z = bits[2], v.w = bits[3];
            } else {
                v.x = bits[0] | (bits[1] << 16), v.y = bits[2] | (bits[3] << 16);
                v.z = bits[4] | (bits[5] << 16), v.w = bits[6] | (bits[7] << 16);
            }
            {
                uint4 u;
                u.x = v.x, u.y = v.y, u.z = v.z, u.w = v.w;
                *(uint4 *)((unsigned char *)P->out + (ob + k0) * esize) = u;
            }
        } else {
#pragma unroll
            for (e = 0; e < 8; e++)
                if (e < ve && k0 + e < P->K) {
                    const int64_t o = ob + (int64_t)(k0 + e) * P->so.c;
                    if (esize == 4)
                        ((unsigned *)P->out)[o] = bits[e];
                    else
                        ((unsigned short *)P->out)[o] = (unsigned short)bits[e];
                }
        }
    }
}

/* Spatial innermost (NGCHW): consecutive threads take consecutive rows (pixels), which are
 * mostly contiguous in memory; one element per store. */
static __device__ __forceinline__ void gconv_impl_fwd_store_sp(const gconv_impl_fwd_params *P,
                                                               const float *cs, gconv_impl_tile t,
                                                               gconv_dtype dt, int idx64, int g,
                                                               int64_t m0, int n0, int rows,
                                                               gconv_impl_epi_fn epi)
{
    const int nt = gconv_impl_tile_threads(t), tid = (int)threadIdx.x;
    const int ld = t.bn + GCONV_IMPL_CPAD, cpp = nt / rows;
    const int r = tid % rows;
    const int64_t m = m0 + r;
    int n, d, h, w, col;
    int64_t ob;
    if (m >= P->M)
        return;
    gconv_impl_fwd_split_m(P, m, idx64, &n, &d, &h, &w);
    ob = idx64 ? (int64_t)g * P->so.g + (int64_t)n * P->so.n + (int64_t)d * P->so.s[0] +
                     (int64_t)h * P->so.s[1] + (int64_t)w * P->so.s[2]
               : (int64_t)(g * (int)P->so.g + n * (int)P->so.n + d * (int)P->so.s[0] +
                           h * (int)P->so.s[1] + w * (int)P->so.s[2]);
    for (col = tid / rows; col < t.bn; col += cpp) {
        const int k = n0 + col;
        if (k >= P->K)
            break;
        gconv_impl_igemm_st_elem(P->out, ob + (int64_t)k * P->so.c,
                           epi(&P->epi, dt, cs[r * ld + col], g, n, k, d, h, w), dt);
    }
}

/* ---- the kernel body ------------------------------------------------------------------------
 * One block computes a BM x BN tile of one group's C. amode / bmode: GCONV_IMPL_LD_*; idx64:
 * 64-bit offsets; tf32: fp32 on tf32 tensor cores (NVIDIA); outcc: output channels contiguous. */
static __device__ __forceinline__ void gconv_impl_fwd_body(const gconv_impl_fwd_params *P,
                                                           const gconv_impl_tile t,
                                                           const gconv_dtype dt, const int amode,
                                                           const int bmode, const int idx64,
                                                           const int tf32, const int outcc,
                                                           gconv_impl_epi_fn epi)
{
    GCONV_IMPL_DYN_SMEM(smem_raw);
    const int esize = dt == GCONV_F32 ? 4 : 2;
    const int S = gconv_impl_tile_stages(t, esize);
    const int sbytes = gconv_impl_tile_stage_bytes(t, esize);
    const int abytes = t.bm * t.bk * esize;
    const int math = gconv_impl_igemm_math(t, dt, tf32);
    /* asynchronous math (wgmma) keeps one stage in flight, so loads run one stage less ahead */
    const int lag = math == GCONV_IMPL_MATH_WGMMA && S >= 4 ? 2 : 1;
    const int KT = (P->Kg + t.bk - 1) / t.bk;
    unsigned char *smem = smem_raw;
    float acc[GCONV_IMPL_MAX_ACC];
    gconv_impl_fwd_gather ga, gb;
    int g, tm, tn, n0, kt, s, rd, wr;
    int64_t m0;
#if defined(GCONV_PLATFORM_CUDA)
    /* stages start on a 1024-byte boundary (the launch adds 1 KB for this) */
    smem += (1024u - (gconv_impl_igemm_smem_addr(smem_raw) & 1023u)) & 1023u;
#endif
    {
        const int64_t tpg = (int64_t)P->mt * P->nt;
        const int64_t L = (int64_t)blockIdx.x;
        g = (int)(L / tpg);
        gconv_impl_igemm_raster(L - (int64_t)g * tpg, P->mt, P->nt, &tm, &tn);
    }
    m0 = (int64_t)tm * t.bm;
    n0 = tn * t.bn;
    gconv_impl_fwd_a_init(P, &ga, t, esize, amode, idx64, g, m0);
    gconv_impl_fwd_b_init(P, &gb, t, esize, bmode, idx64, g, n0);
    gconv_impl_igemm_zero(acc, t, math);

    /* prologue: k-tiles 0 .. S-1-lag */
#pragma unroll
    for (s = 0; s < 8; s++)
        if (s < S - lag) {
            if (s < KT) {
                unsigned char *st = smem + s * sbytes;
                gconv_impl_fwd_a_issue(P, &ga, st, t, esize, amode, idx64, dt);
                gconv_impl_fwd_b_issue(P, &gb, st + abytes, t, esize, bmode, idx64, dt);
                gconv_impl_fwd_store(&ga, st, t.bm, t, esize, amode);
                gconv_impl_fwd_store(&gb, st + abytes, t.bn, t, esize, bmode);
            }
            gconv_impl_igemm_cp_commit();
        }

    /* main loop: stage rd holds k-tile kt, stage wr receives k-tile kt + S - lag. The barrier
     * at the top also tells every thread that the math of k-tile kt - lag, the last reader of
     * stage wr, has finished everywhere. */
    rd = 0, wr = S - lag;
    for (kt = 0; kt < KT; kt++) {
        unsigned char *cur = smem + rd * sbytes;
        unsigned char *nxt = smem + wr * sbytes;
        const int more = kt + S - lag < KT;
        gconv_impl_igemm_cp_wait(S - lag - 1);
        gconv_impl_igemm_publish(math);
        __syncthreads();
        if (more) {
            gconv_impl_fwd_a_issue(P, &ga, nxt, t, esize, amode, idx64, dt);
            gconv_impl_fwd_b_issue(P, &gb, nxt + abytes, t, esize, bmode, idx64, dt);
        }
        gconv_impl_igemm_cp_commit();
        gconv_impl_igemm_stage_math(acc, cur, cur + abytes, t, esize, dt, math, kt == 0);
        gconv_impl_igemm_retire(acc, t, math, lag - 1);
        if (more) {
            gconv_impl_fwd_store(&ga, nxt, t.bm, t, esize, amode);
            gconv_impl_fwd_store(&gb, nxt + abytes, t.bn, t, esize, bmode);
        }
        rd = rd + 1 == S ? 0 : rd + 1;
        wr = wr + 1 == S ? 0 : wr + 1;
    }
    gconv_impl_igemm_retire(acc, t, math, 0);
    gconv_impl_igemm_cp_wait(0);
    __syncthreads(); /* every thread is done reading the stages: reuse them for C */

    {
        const int band = gconv_impl_tile_band_rows(t, esize);
        float *cs = (float *)smem;
        int r0;
        for (r0 = 0; r0 < t.bm; r0 += band) {
            if (r0 > 0)
                __syncthreads(); /* the previous band has been read */
            gconv_impl_igemm_acc_to_smem(acc, cs, t, math, r0, band);
            __syncthreads();
            if (outcc)
                gconv_impl_fwd_store_cc(P, cs, t, dt, idx64, g, m0 + r0, n0, band, epi);
            else
                gconv_impl_fwd_store_sp(P, cs, t, dt, idx64, g, m0 + r0, n0, band, epi);
        }
    }
}

/* The warp-specialised Hopper kernel (needs the parameters and the store above). */
#include "igemm_ws.h"

/* ---- host side: validation, plan, tile choice ------------------------------------------------ */

/* Kernel kinds of an instantiation (see GCONV_IMPL_FWD_KERNELS). */
enum {
    GCONV_IMPL_FWD_K_128x128 = 0, /* vector gathers, 32-bit */
    GCONV_IMPL_FWD_K_128x64,
    GCONV_IMPL_FWD_K_64x64,
    GCONV_IMPL_FWD_K_128x32,
    GCONV_IMPL_FWD_K_128x16,
    GCONV_IMPL_FWD_K_128x128_64, /* vector gathers, 64-bit */
    GCONV_IMPL_FWD_K_GEN_128x128, /* element-wise gathers, 32-bit */
    GCONV_IMPL_FWD_K_GEN_64x64,
    GCONV_IMPL_FWD_K_GEN_64x64_64, /* element-wise gathers, 64-bit */
    GCONV_IMPL_FWD_K_COUNT
};

/* The problem's input and output layouts are of the activation family act and its weight
 * layout of the family wei (an instantiation's); else GCONV_ERR_LAYOUT with the reason. Shared
 * by the forward, backward-data and fused launchers. */
static inline gconv_status gconv_impl_check_families(const gconv_problem *p, gconv_layout act,
                                                     gconv_layout wei, char *why, size_t len)
{
    if (gconv_layout_family(gconv_in_layout(p)) != act)
        return gconv_impl_fail(GCONV_ERR_LAYOUT, why, len,
                               "the input layout %s is not of this instantiation's %s family",
                               gconv_layout_name(gconv_in_layout(p)), gconv_layout_name(act));
    if (gconv_layout_family(gconv_out_layout(p)) != act)
        return gconv_impl_fail(GCONV_ERR_LAYOUT, why, len,
                               "the output layout %s is not of this instantiation's %s family",
                               gconv_layout_name(gconv_out_layout(p)), gconv_layout_name(act));
    if (gconv_layout_family(gconv_wei_layout(p)) != wei)
        return gconv_impl_fail(GCONV_ERR_LAYOUT, why, len,
                               "the weight layout %s is not of this instantiation's %s family",
                               gconv_layout_name(gconv_wei_layout(p)), gconv_layout_name(wei));
    return GCONV_OK;
}

/* Check everything that does not depend on the kernel: problem, layouts, pointers, epilogue,
 * size limits. act / wei: the instantiation's families. */
static inline gconv_status gconv_impl_fwd_check(const gconv_problem *p, const gconv_fwd_args *a,
                                                gconv_dtype dt, gconv_layout act,
                                                gconv_layout wei, char *why, size_t len)
{
    gconv_status s = gconv_problem_check(p, why, len);
    size_t esz = gconv_dtype_size(dt);
    int64_t kg;
    if (s != GCONV_OK)
        return s;
    s = gconv_impl_check_families(p, act, wei, why, len);
    if (s != GCONV_OK)
        return s;
    kg = (int64_t)p->C * gconv_filter_taps(p);
    if (kg > 0x7fffffffLL - 1024)
        return gconv_impl_fail(GCONV_ERR_UNSUPPORTED, why, len,
                               "C * filter taps is %lld; the kernels need it below 2^31 - 1024",
                               (long long)kg);
    if ((int64_t)p->G * ((gconv_out_elems(p) / p->G / p->K + 15) / 16) > 0x7fffffffLL)
        return gconv_impl_fail(GCONV_ERR_UNSUPPORTED, why, len,
                               "G * N * output pixels / 16 is over 2^31: too many blocks");
    if (!a)
        return s;
    if (!a->in || !a->wei || !a->out)
        return gconv_impl_fail(GCONV_ERR_NULL, why, len, "%s pointer is null",
                               !a->in ? "the input" : !a->wei ? "the weight" : "the output");
    if (((uintptr_t)a->in | (uintptr_t)a->wei | (uintptr_t)a->out) % esz)
        return gconv_impl_fail(GCONV_ERR_ALIGNMENT, why, len,
                               "in, wei and out must be aligned to their %d-byte elements",
                               (int)esz);
    s = gconv_epilogue_check(a->epi, why, len);
    if (s != GCONV_OK)
        return s;
    if (a->epi) {
        int i;
        for (i = 0; i < a->epi->num_d; i++)
            if ((uintptr_t)a->epi->d[i].data % esz)
                return gconv_impl_fail(GCONV_ERR_ALIGNMENT, why, len,
                                       "D tensor %d is not aligned to its %d-byte elements", i,
                                       (int)esz);
    }
    return GCONV_OK;
}

/* Fill the kernel parameters except the tile counts. */
static inline void gconv_impl_fwd_fill(const gconv_problem *p, const gconv_fwd_args *a,
                                       gconv_impl_fwd_params *P)
{
    int i;
    memset(P, 0, sizeof *P);
    P->in = a->in, P->wei = a->wei, P->out = a->out;
    P->epi = a->epi ? *a->epi : gconv_epi_scale(1.0f);
    P->G = p->G, P->C = p->C, P->K = p->K;
    P->Kg = (int)(p->C * gconv_filter_taps(p));
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
    P->so = gconv_out_strides(p);
    P->sw = gconv_weight_strides(p);
    for (i = 0; i < 3; i++)
        P->tap_s[i] = (int64_t)p->dilation[i] * P->si.s[i];
}

/* Whether the vector A gathers of a kernel with BK = bk can take the per-tap fast path: 2 with
 * one mask word for all taps (at most 32), 1 with a word per axis (sides at most 32), 0 not. */
static inline int gconv_impl_fwd_a_fast(const gconv_impl_fwd_params *P, int bk)
{
    if (P->C % bk || P->flt[0] > 32 || P->flt[1] > 32 || P->flt[2] > 32)
        return 0;
    return P->flt[0] * P->flt[1] * P->flt[2] <= 32 ? 2 : 1;
}

/* 64-bit indexing needed: some tensor has 2^31 elements or more. */
static inline int gconv_impl_fwd_needs64(const gconv_problem *p)
{
    const int64_t lim = (int64_t)1 << 31;
    return gconv_in_elems(p) >= lim || gconv_out_elems(p) >= lim || gconv_wei_elems(p) >= lim;
}

/* Tile choice for the vector kernels: for each candidate, the time of its waves of tiles
 * (blocks resident per SM `occ`, relative throughput `eff` of its math) is modelled as
 * ceil(tiles / (SMs * occ)) * occ * BM * BN / eff, and the cheapest wins. The eff values are
 * rough, from H100 timings (bench/NOTES.md): 128x64 at 0.7 of 128x128 keeps dense 3x3 C=256
 * problems on 128x128 (measured 99 vs 111 us), N <= 32 per group goes to 128x16 / 128x32. */
static inline int gconv_impl_fwd_pick(int64_t M, int N, int G, int sms)
{
    static const int bm[5] = {128, 128, 64, 128, 128};
    static const int bn[5] = {128, 64, 64, 32, 16};
    static const int occ[5] = {2, 2, 4, 4, 4};
    static const double eff[5] = {1.0, 0.7, 0.7, 0.55, 0.4};
    int best = 0, i;
    double bcost = 0;
    if (sms <= 0)
        sms = 80;
    for (i = 0; i < 5; i++) {
        const double tiles = (double)G * (double)((M + bm[i] - 1) / bm[i]) *
                             (double)((N + bn[i] - 1) / bn[i]);
        const double slots = (double)sms * occ[i];
        const double waves = (double)(int64_t)((tiles + slots - 1) / slots);
        const double cost = waves * occ[i] * bm[i] * bn[i] / eff[i];
        if (i == 0 || cost < bcost)
            best = i, bcost = cost;
    }
    return best;
}

/* ---- instantiation macros ------------------------------------------------------------------- */

#define GCONV_IMPL_FAMVEC_GCONV_NHWGC 1
#define GCONV_IMPL_FAMVEC_GCONV_GNHWC 1
#define GCONV_IMPL_FAMVEC_GCONV_NGCHW 0
#define GCONV_IMPL_WEIVEC_GCONV_GKYXC 1
#define GCONV_IMPL_WEIVEC_GCONV_GKCYX 0
#define GCONV_IMPL_ISF32_GCONV_F32 1
#define GCONV_IMPL_ISF32_GCONV_F16 0
#define GCONV_IMPL_ISF32_GCONV_BF16 0
#define GCONV_IMPL_AND_1_1 1
#define GCONV_IMPL_AND_1_0 0
#define GCONV_IMPL_AND_0_1 0
#define GCONV_IMPL_AND_0_0 0
#define GCONV_IMPL_AND(a, b) GCONV_IMPL_CAT(GCONV_IMPL_AND_, GCONV_IMPL_CAT(a, GCONV_IMPL_CAT(_, b)))
#define GCONV_IMPL_IF_1(...) __VA_ARGS__
#define GCONV_IMPL_IF_0(...)
#define GCONV_IMPL_IF(c) GCONV_IMPL_CAT(GCONV_IMPL_IF_, c)
#define GCONV_IMPL_FAMVEC(f) GCONV_IMPL_CAT(GCONV_IMPL_FAMVEC_, f)
#define GCONV_IMPL_WEIVEC(f) GCONV_IMPL_CAT(GCONV_IMPL_WEIVEC_, f)
#define GCONV_IMPL_ISF32(T) GCONV_IMPL_CAT(GCONV_IMPL_ISF32_, T)
#define GCONV_IMPL_BOTHVEC(A, W) GCONV_IMPL_AND(GCONV_IMPL_FAMVEC(A), GCONV_IMPL_WEIVEC(W))
/* tf32 kernel variants exist for fp32 on CUDA only */
#ifndef GCONV_IMPL_FWD_TF32
#if defined(GCONV_PLATFORM_CUDA)
#define GCONV_IMPL_FWD_TF32 1
#else
#define GCONV_IMPL_FWD_TF32 0
#endif
#endif
#define GCONV_IMPL_HAS_TF32(T) GCONV_IMPL_AND(GCONV_IMPL_ISF32(T), GCONV_IMPL_FWD_TF32)
#define GCONV_IMPL_NOT_0 1
#define GCONV_IMPL_NOT_1 0
#define GCONV_IMPL_NOT(a) GCONV_IMPL_CAT(GCONV_IMPL_NOT_, a)
/* warp-specialised kernels (gconv/igemm_ws.h) exist on CUDA for fp16 / bf16 with contiguous
 * channels on both operands; their body is real only in sm_90a device passes */
#ifndef GCONV_IMPL_FWD_WS
#if GCONV_IMPL_WS_HOST
#define GCONV_IMPL_FWD_WS 1
#else
#define GCONV_IMPL_FWD_WS 0
#endif
#endif
#define GCONV_IMPL_HAS_WS(T, A, W)                                                               \
    GCONV_IMPL_AND(GCONV_IMPL_AND(GCONV_IMPL_BOTHVEC(A, W), GCONV_IMPL_NOT(GCONV_IMPL_ISF32(T))), \
                   GCONV_IMPL_FWD_WS)

/* GCONV_FWD_HALO (default 1): let GCONV_FWD take the halo-tile tensor-core kernel of
 * gconv/igemm_halo.h for few channels per group (C in {8, 16, 32} with K even and <= 32, or
 * C = K = 4 with G even; stride 1, NHWGC fp16 / bf16); define it to 0 to send those problems to
 * the direct FEWC kernel (C = K = 4) or the implicit GEMM. */
#ifndef GCONV_FWD_HALO
#define GCONV_FWD_HALO 1
#endif
#if GCONV_FWD_HALO
/* TRM: 1 where the kernel may get backward data's wtr plans (gconv_impl_halo_plan_wtr). Two
 * kernels: name_halo1 for one-n-tile plans with D tensors (K <= 8, 3 blocks per SM), name_halo
 * for the rest (GCONV_IMPL_HALO_LAUNCH_ANY picks). */
#define GCONV_IMPL_FWD_HALO_KERNEL(name, T, EPI_FN, TRM)                                         \
    static __global__ void __launch_bounds__(GCONV_IMPL_HALO_THREADS, GCONV_IMPL_HALO_MIN_BLOCKS)   \
        name##_halo(const GCONV_IMPL_GRID_CONST gconv_impl_halo_params P)                        \
    {                                                                                            \
        gconv_impl_halo_body(&P, T, EPI_FN, TRM, 0);                                             \
    }                                                                                            \
    static __global__ void __launch_bounds__(GCONV_IMPL_HALO_THREADS,                            \
                                             GCONV_IMPL_HALO_MIN_BLOCKS1)                        \
        name##_halo1(const GCONV_IMPL_GRID_CONST gconv_impl_halo_params P)                       \
    {                                                                                            \
        gconv_impl_halo_body(&P, T, EPI_FN, TRM, 1);                                             \
    }
#define GCONV_IMPL_FWD_TRY_HALO(name, T, p, a, stream, why, len)                                 \
    {                                                                                            \
        gconv_impl_halo_params H_;                                                           \
        if (gconv_impl_halo_plan(p, T, a->in, a->wei, a->out, a->epi, &H_))                      \
            GCONV_IMPL_HALO_LAUNCH_ANY(name, p, H_, stream, why, len, 0);                        \
    }
#else
#define GCONV_IMPL_FWD_HALO_KERNEL(name, T, EPI_FN, TRM)
#define GCONV_IMPL_FWD_TRY_HALO(name, T, p, a, stream, why, len)
#endif

/* Instantiated host functions may go unused in a translation unit (nvcc warns then). */
#define GCONV_IMPL_FWD_UNUSED __attribute__((unused))

/* One kernel: kname(params), with compile-time tile, gather modes, index width, math. */
#define GCONV_IMPL_FWD_KERNEL(kname, T, TILE, AMODE, BMODE, IDX64, TF32, OUTCC, EPI_FN)         \
    GCONV_IMPL_STATIC_ASSERT(GCONV_IMPL_TILE_OK(TILE), "tile configuration out of range");     \
    static __global__ void __launch_bounds__(GCONV_IMPL_TILE_THREADS(TILE))                      \
        kname(gconv_impl_fwd_params P)                                                           \
    {                                                                                            \
        const gconv_impl_tile t = {GCONV_IMPL_TILE_ARGS(TILE)};                                  \
        gconv_impl_fwd_body(&P, t, T, AMODE, BMODE, IDX64, TF32, OUTCC, EPI_FN);                 \
    }

/* Launch k<<<blocks, threads, smem, stream>>>(arg) and return from the enclosing function:
 * GCONV_OK, or GCONV_ERR_RUNTIME with the runtime's reason. */
#define GCONV_IMPL_LAUNCH_RETURN(k, blocks, threads, smem, stream, why, len, arg)               \
    do {                                                                                         \
        hipError_t le_;                                                                          \
        hipLaunchKernelGGL(k, dim3((unsigned)(blocks)), dim3((unsigned)(threads)),               \
                           (size_t)(smem), stream, arg);                                         \
        le_ = hipGetLastError();                                                                 \
        if (le_ != hipSuccess)                                                                   \
            return gconv_impl_fail(GCONV_ERR_RUNTIME, why, len, "kernel launch failed: %s",      \
                                   hipGetErrorString(le_));                                      \
        return GCONV_OK;                                                                         \
    } while (0)

/* Make CUDA accept more than 48 KB of dynamic shared memory for kernel k (once per device). */
static inline gconv_status gconv_impl_fwd_smem_attr(const void *k, int bytes, unsigned *done)
{
#if defined(GCONV_PLATFORM_CUDA)
    int dev = 0;
    if (bytes <= 48 * 1024)
        return GCONV_OK;
    if (hipGetDevice(&dev) != hipSuccess)
        return GCONV_ERR_RUNTIME;
    if (dev < 32 && (*done >> dev) & 1u)
        return GCONV_OK;
    if (hipFuncSetAttribute(k, hipFuncAttributeMaxDynamicSharedMemorySize, bytes) != hipSuccess)
        return GCONV_ERR_RUNTIME;
    if (dev < 32)
        *done |= 1u << dev;
#else
    (void)k, (void)bytes, (void)done;
#endif
    return GCONV_OK;
}

/* Blocks of kernel k (threads, smem bytes of dynamic shared memory) resident on one SM at
 * once, 0 if it cannot be asked. Raise the kernel's shared-memory limit first. */
static inline int gconv_impl_occupancy(const void *k, int threads, int smem)
{
    int n = 0;
#if defined(GCONV_PLATFORM_CUDA)
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, k, threads, (size_t)smem) != cudaSuccess)
        return 0;
#else
    if (hipOccupancyMaxActiveBlocksPerMultiprocessor(&n, k, threads, (size_t)smem) != hipSuccess)
        return 0;
#endif
    return n;
}

/* Launch kernel k with tile TILE over the whole problem. */
#define GCONV_IMPL_FWD_LAUNCH_ONE(k, T, TILE, P, stream, why, len)                               \
    do {                                                                                         \
        static unsigned gconv_impl_done_ = 0;                                                    \
        const gconv_impl_tile t_ = {GCONV_IMPL_TILE_ARGS(TILE)};                                 \
        const int es_ = (T) == GCONV_F32 ? 4 : 2;                                                \
        const int smem_ = gconv_impl_tile_smem(t_, es_);                                         \
        int64_t blocks_;                                                                         \
        (P).mt = (int)(((P).M + t_.bm - 1) / t_.bm);                                             \
        (P).a_fast = gconv_impl_fwd_a_fast(&(P), t_.bk);                                         \
        (P).nt = ((P).K + t_.bn - 1) / t_.bn;                                                    \
        blocks_ = (int64_t)(P).G * (P).mt * (P).nt;                                              \
        if (blocks_ > 0x7fffffffLL || (P).M > (int64_t)0x7fffffff * t_.bm)                       \
            return gconv_impl_fail(GCONV_ERR_UNSUPPORTED, why, len,                              \
                                   "%lld blocks of %dx%d are too many for one launch",          \
                                   (long long)blocks_, t_.bm, t_.bn);                            \
        if (gconv_impl_fwd_smem_attr((const void *)k, smem_, &gconv_impl_done_) != GCONV_OK)    \
            return gconv_impl_fail(GCONV_ERR_RUNTIME, why, len,                                  \
                                   "cannot raise the shared-memory limit to %d bytes", smem_);   \
        GCONV_IMPL_LAUNCH_RETURN(k, blocks_, gconv_impl_tile_threads(t_), smem_, stream, why,   \
                                 len, P);                                                        \
    } while (0)

/* Launch the halo kernel k for a planned problem: a persistent grid of as many blocks as
 * fit on the device (the occupancy of the last shared-memory size asked is remembered). */
#define GCONV_IMPL_HALO_LAUNCH(k, p, H, stream, why, len)                                        \
    do {                                                                                         \
        static unsigned gconv_impl_done_ = 0;                                                    \
        static int gconv_impl_occ_smem_ = -1, gconv_impl_occ_dev_ = -1, gconv_impl_occ_ = 0;     \
        int smem_;                                                                               \
        smem_ = gconv_impl_halo_smem(&(H));                                                      \
        int dev_ = 0;                                                                            \
        /* the size varies per problem: raise the limit once to the most any plan uses */       \
        if (gconv_impl_fwd_smem_attr((const void *)k, GCONV_IMPL_HALO_SMEM_LIMIT,               \
                                     &gconv_impl_done_) != GCONV_OK)                             \
            return gconv_impl_fail(GCONV_ERR_RUNTIME, why, len,                                  \
                                   "cannot raise the shared-memory limit to %d bytes", smem_);   \
        /* blocks per SM: asked again when the size or the device changes */                    \
        if (hipGetDevice(&dev_) != hipSuccess)                                                   \
            dev_ = -1;                                                                           \
        if (gconv_impl_occ_smem_ != smem_ || gconv_impl_occ_dev_ != dev_) {                      \
            gconv_impl_occ_ = gconv_impl_occupancy((const void *)k, GCONV_IMPL_HALO_THREADS,     \
                                                   smem_);                                       \
            gconv_impl_occ_smem_ = smem_, gconv_impl_occ_dev_ = dev_;                            \
        }                                                                                        \
        gconv_impl_halo_grid(&(H), gconv_impl_occ_);                                             \
        GCONV_IMPL_LAUNCH_RETURN(k, (H).blocks, GCONV_IMPL_HALO_THREADS, smem_, stream, why,    \
                                 len, H);                                                        \
    } while (0)

/* Launch the halo kernel of instantiation `name` for plan H, after planning its staged stores
 * and copy-engine copies: the 3-blocks-per-SM one for one-n-tile plans whose epilogue reads D
 * tensors with the items' own loads (those want more warps in flight: H100, ResNeXt 128@56
 * backward data with a residual 118.5 -> 103.5 us), else the 2-block one (the plain one-n-tile
 * layers lost with 3 blocks: 128@56 forward 65.2 -> 69.9 us, their .ca halo copies then find
 * less L1), which also takes a residual brought a unit ahead by the copy engine
 * (gconv_impl_halo_dtma_setup; bench/NOTES.md). TRM (a literal): the kernels are backward
 * data's (gconv_impl_halo_body), the only ones with loops for that residual: in the forward
 * kernel their code alone cost ResNeXt 1024@7 0.5 us (H100, 16.0 -> 16.5-16.7). */
#define GCONV_IMPL_HALO_LAUNCH_ANY(name, p, H, stream, why, len, TRM)                            \
    do {                                                                                         \
        gconv_impl_halo_plan_stage(&(H)); /* stores staged in 16-byte pieces where they can be */ \
        gconv_impl_halo_tma_setup(&(H), p); /* the next halos by the copy engine */              \
        (H).dtma = 0; /* a staged residual's D by the copy engine: backward data's kernels */    \
        if (TRM)                                                                                 \
            gconv_impl_halo_dtma_setup(&(H));                                                    \
        gconv_impl_halo_plan_wide(&(H)); /* four n-tiles: two m-tiles an item */                 \
        if ((H).NT == 1 && (H).epi.num_d > 0 && !(H).dtma)                                       \
            GCONV_IMPL_HALO_LAUNCH(name##_halo1, p, H, stream, why, len);                        \
        GCONV_IMPL_HALO_LAUNCH(name##_halo, p, H, stream, why, len);                             \
    } while (0)

/* Problems the warp-specialised kernel may take (the caller has checked the type and the
 * 16-byte gathers; gconv_impl_ws_plan checks the rest): C a multiple of 64, K at least 64,
 * 32-bit offsets. */
static inline int gconv_impl_fwd_ws_fits(const gconv_impl_fwd_params *P, int big)
{
    return P->C % 64 == 0 && P->K >= 64 && !big;
}

/* Test and tuning hook: -1 (default) lets gconv_impl_ws_pick choose the warp-specialised
 * configuration, 0 .. GCONV_IMPL_WS_COUNT - 1 pins one, GCONV_IMPL_WS_COUNT turns the kernel
 * off (the engine of gconv/igemm.h runs instead). One per translation unit. */
static int gconv_impl_fwd_ws_pin GCONV_IMPL_FWD_UNUSED = -1;

/* Launch bounds of the warp-specialised kernels, BPS blocks per SM; TR 1: the transposed form,
 * 384 threads (gconv_impl_ws_tr). */
#define GCONV_IMPL_WS_BOUNDS_0(BPS) __launch_bounds__(GCONV_IMPL_WS_THREADS, BPS)
#define GCONV_IMPL_WS_BOUNDS_1(BPS) __launch_bounds__(GCONV_IMPL_WS_THREADS_TR, BPS)

/* One warp-specialised kernel: BM x BN tiles, BPS blocks per SM of 288 threads (384 in the
 * transposed form); WTR 1: it also takes backward data's in-place weights (P.wtr;
 * backward-data instantiations only, so that the forward's kernels keep one main loop); TR 1:
 * the transposed form (gconv_impl_ws_tr). */
#define GCONV_IMPL_FWD_WS_KERNEL(kname, T, BM, BN, BPS, EPI_FN, WTR, TR)                         \
    static __global__ void GCONV_IMPL_WS_BOUNDS_##TR(BPS)                                        \
        kname(const __grid_constant__ gconv_impl_ws_params W)                                    \
    {                                                                                            \
        gconv_impl_ws_fwd_body(&W, BM, BN, BPS, T, EPI_FN, WTR, TR);                             \
    }

/* Launch warp-specialised kernel k (configuration cfg, element type T) for the parameters P;
 * falls through (no return) when its tensor maps cannot describe the problem. */
#define GCONV_IMPL_WS_LAUNCH(k, cfg, T, P, stream, why, len)                                     \
    do {                                                                                         \
        static unsigned gconv_impl_done_ = 0;                                                    \
        const int bm_ = gconv_impl_ws_bm(cfg), bn_ = gconv_impl_ws_bn(cfg);                      \
        const int smem_ = gconv_impl_ws_smem(bm_, bn_, gconv_impl_ws_bps(cfg));                  \
        gconv_impl_ws_params W_;                                                                 \
        int64_t blocks_;                                                                         \
        (P).mt = (int)(((P).M + bm_ - 1) / bm_);                                                 \
        (P).nt = ((P).K + bn_ - 1) / bn_;                                                        \
        blocks_ = (int64_t)(P).G * (P).mt * (P).nt;                                              \
        if (blocks_ > 0x7fffffffLL || !gconv_impl_ws_sized(bm_, bn_, gconv_impl_ws_bps(cfg)) ||  \
            !gconv_impl_ws_plan(&W_, &(P), T, bm_, bn_))                                         \
            break;                                                                               \
        if (gconv_impl_fwd_smem_attr((const void *)k, smem_, &gconv_impl_done_) != GCONV_OK)    \
            return gconv_impl_fail(GCONV_ERR_RUNTIME, why, len,                                  \
                                   "cannot raise the shared-memory limit to %d bytes", smem_);   \
        GCONV_IMPL_LAUNCH_RETURN(k, blocks_, gconv_impl_ws_threads(cfg), smem_, stream, why, len, \
                                 W_);                                                            \
    } while (0)

/* The warp-specialised kernels of a default instantiation and their launcher. */
#define GCONV_IMPL_FWD_WS_KERNELS(name, T, EPI_FN, WTR)                                          \
    GCONV_IMPL_FWD_WS_KERNEL(name##_ws0, T, 128, 128, 1, EPI_FN, WTR, 0)                         \
    GCONV_IMPL_FWD_WS_KERNEL(name##_ws1, T, 256, 128, 1, EPI_FN, WTR, 0)                         \
    GCONV_IMPL_FWD_WS_KERNEL(name##_ws2, T, 128, 256, 1, EPI_FN, WTR, 0)                         \
    GCONV_IMPL_FWD_WS_KERNEL(name##_ws3, T, 128, 128, 2, EPI_FN, WTR, 0)                         \
    GCONV_IMPL_FWD_WS_KERNEL(name##_ws4, T, 152, 256, 1, EPI_FN, WTR, 1)                         \
    GCONV_IMPL_FWD_UNUSED static inline int name##_ws_ready(void)                                \
    {                                                                                            \
        static unsigned known_ = 0, yes_ = 0;                                                    \
        return gconv_impl_ws_available((const void *)name##_ws0, &known_, &yes_);               \
    }                                                                                            \
    /* GCONV_ERR_UNSUPPORTED (nothing launched) when the tensor maps cannot describe P */     \
    GCONV_IMPL_FWD_UNUSED static inline gconv_status name##_ws_run(                              \
        int cfg, gconv_impl_fwd_params *P, hipStream_t stream, char *why, size_t len)            \
    {                                                                                            \
        switch (cfg) {                                                                           \
        case GCONV_IMPL_WS_128x128:                                                              \
            GCONV_IMPL_WS_LAUNCH(name##_ws0, GCONV_IMPL_WS_128x128, T, *P, stream, why, len);    \
            break;                                                                               \
        case GCONV_IMPL_WS_256x128:                                                              \
            GCONV_IMPL_WS_LAUNCH(name##_ws1, GCONV_IMPL_WS_256x128, T, *P, stream, why, len);    \
            break;                                                                               \
        case GCONV_IMPL_WS_128x128_2:                                                            \
            GCONV_IMPL_WS_LAUNCH(name##_ws3, GCONV_IMPL_WS_128x128_2, T, *P, stream, why, len);  \
            break;                                                                               \
        case GCONV_IMPL_WS_152x256_T:                                                            \
            GCONV_IMPL_WS_LAUNCH(name##_ws4, GCONV_IMPL_WS_152x256_T, T, *P, stream, why, len);  \
            break;                                                                               \
        default:                                                                                 \
            GCONV_IMPL_WS_LAUNCH(name##_ws2, GCONV_IMPL_WS_128x256, T, *P, stream, why, len);    \
            break;                                                                               \
        }                                                                                        \
        return GCONV_ERR_UNSUPPORTED;                                                            \
    }

/* In a default launcher, after the parameters are filled: the warp-specialised kernel where
 * it fits and the binary has it. */
#define GCONV_IMPL_FWD_TRY_WS(name, big, P, vec_ok, stream, why, len)                            \
    if ((vec_ok) && gconv_impl_fwd_ws_pin != GCONV_IMPL_WS_COUNT &&                              \
        gconv_impl_fwd_ws_fits(&(P), big) && name##_ws_ready()) {                                \
        const gconv_status ws_ = name##_ws_run(                                                  \
            gconv_impl_fwd_ws_pin >= 0 ? gconv_impl_fwd_ws_pin                                   \
                                       : gconv_impl_ws_pick((P).M, (P).K, (P).G,                 \
                                                            gconv_device_sm_count()),            \
            &(P), stream, why, len);                                                             \
        if (ws_ != GCONV_ERR_UNSUPPORTED)                                                        \
            return ws_;                                                                          \
    }

/* The kernels of a default instantiation, for one tf32 setting (suffix sfx). Vector kinds only
 * for families with contiguous channels on both operands. */
#define GCONV_IMPL_FWD_KERNELS(name, sfx, T, ACT, WEI, TF32, EPI_FN)                             \
    GCONV_IMPL_IF(GCONV_IMPL_BOTHVEC(ACT, WEI))(                                                 \
        GCONV_IMPL_FWD_KERNEL(name##_k0##sfx, T, GCONV_TILE_128x128x32, GCONV_IMPL_LD_VEC,       \
                              GCONV_IMPL_LD_VEC, 0, TF32, 1, EPI_FN)                             \
        GCONV_IMPL_FWD_KERNEL(name##_k1##sfx, T, GCONV_TILE_128x64x32, GCONV_IMPL_LD_VEC,        \
                              GCONV_IMPL_LD_VEC, 0, TF32, 1, EPI_FN)                             \
        GCONV_IMPL_FWD_KERNEL(name##_k2##sfx, T, GCONV_TILE_64x64x32, GCONV_IMPL_LD_VEC,         \
                              GCONV_IMPL_LD_VEC, 0, TF32, 1, EPI_FN)                             \
        GCONV_IMPL_FWD_KERNEL(name##_k3##sfx, T, GCONV_TILE_128x32x32, GCONV_IMPL_LD_VEC,        \
                              GCONV_IMPL_LD_VEC, 0, TF32, 1, EPI_FN)                             \
        GCONV_IMPL_FWD_KERNEL(name##_k4##sfx, T, GCONV_TILE_128x16x32, GCONV_IMPL_LD_VEC,        \
                              GCONV_IMPL_LD_VEC, 0, TF32, 1, EPI_FN)                             \
        GCONV_IMPL_FWD_KERNEL(name##_k5##sfx, T, GCONV_TILE_128x128x32, GCONV_IMPL_LD_VEC,       \
                              GCONV_IMPL_LD_VEC, 1, TF32, 1, EPI_FN))                            \
    GCONV_IMPL_FWD_KERNEL(name##_k6##sfx, T, GCONV_TILE_128x128x32, GCONV_IMPL_LD_SCALAR,        \
                          GCONV_IMPL_LD_SCALAR, 0, TF32, GCONV_IMPL_FAMVEC(ACT), EPI_FN)         \
    GCONV_IMPL_FWD_KERNEL(name##_k7##sfx, T, GCONV_TILE_64x64x32, GCONV_IMPL_LD_SCALAR,          \
                          GCONV_IMPL_LD_SCALAR, 0, TF32, GCONV_IMPL_FAMVEC(ACT), EPI_FN)         \
    GCONV_IMPL_FWD_KERNEL(name##_k8##sfx, T, GCONV_TILE_64x64x32, GCONV_IMPL_LD_SCALAR,          \
                          GCONV_IMPL_LD_SCALAR, 1, TF32, GCONV_IMPL_FAMVEC(ACT), EPI_FN)         \
    GCONV_IMPL_FWD_UNUSED static inline gconv_status name##_run##sfx(                            \
        int kind, gconv_impl_fwd_params *P, hipStream_t stream, char *why, size_t len)           \
    {                                                                                            \
        switch (kind) {                                                                          \
            GCONV_IMPL_IF(GCONV_IMPL_BOTHVEC(ACT, WEI))(                                         \
            case GCONV_IMPL_FWD_K_128x128:                                                       \
                GCONV_IMPL_FWD_LAUNCH_ONE(name##_k0##sfx, T, GCONV_TILE_128x128x32, *P, stream,  \
                                          why, len);                                             \
            case GCONV_IMPL_FWD_K_128x64:                                                        \
                GCONV_IMPL_FWD_LAUNCH_ONE(name##_k1##sfx, T, GCONV_TILE_128x64x32, *P, stream,   \
                                          why, len);                                             \
            case GCONV_IMPL_FWD_K_64x64:                                                         \
                GCONV_IMPL_FWD_LAUNCH_ONE(name##_k2##sfx, T, GCONV_TILE_64x64x32, *P, stream,    \
                                          why, len);                                             \
            case GCONV_IMPL_FWD_K_128x32:                                                        \
                GCONV_IMPL_FWD_LAUNCH_ONE(name##_k3##sfx, T, GCONV_TILE_128x32x32, *P, stream,   \
                                          why, len);                                             \
            case GCONV_IMPL_FWD_K_128x16:                                                        \
                GCONV_IMPL_FWD_LAUNCH_ONE(name##_k4##sfx, T, GCONV_TILE_128x16x32, *P, stream,   \
                                          why, len);                                             \
            case GCONV_IMPL_FWD_K_128x128_64:                                                    \
                GCONV_IMPL_FWD_LAUNCH_ONE(name##_k5##sfx, T, GCONV_TILE_128x128x32, *P, stream,  \
                                          why, len);)                                            \
        case GCONV_IMPL_FWD_K_GEN_128x128:                                                       \
            GCONV_IMPL_FWD_LAUNCH_ONE(name##_k6##sfx, T, GCONV_TILE_128x128x32, *P, stream, why, \
                                      len);                                                      \
        case GCONV_IMPL_FWD_K_GEN_64x64:                                                         \
            GCONV_IMPL_FWD_LAUNCH_ONE(name##_k7##sfx, T, GCONV_TILE_64x64x32, *P, stream, why,   \
                                      len);                                                      \
        default:                                                                                 \
            GCONV_IMPL_FWD_LAUNCH_ONE(name##_k8##sfx, T, GCONV_TILE_64x64x32, *P, stream, why,   \
                                      len);                                                      \
        }                                                                                        \
    }

/* The kernel kind a default instantiation runs for problem p (vector families: vec_ok says
 * whether C and the pointers allow the vector gathers). */
static inline int gconv_impl_fwd_kind(const gconv_problem *p, const gconv_impl_fwd_params *P,
                                      int vec_ok)
{
    const int big = gconv_impl_fwd_needs64(p);
    if (vec_ok) {
        if (big)
            return GCONV_IMPL_FWD_K_128x128_64;
        return gconv_impl_fwd_pick(P->M, P->K, P->G, gconv_device_sm_count());
    }
    if (big)
        return GCONV_IMPL_FWD_K_GEN_64x64_64;
    return (double)P->M * P->K * P->G >= 4096.0 * 128 * 128 ? GCONV_IMPL_FWD_K_GEN_128x128
                                                            : GCONV_IMPL_FWD_K_GEN_64x64;
}

/* The common part of the default and user-op instantiations. */
#define GCONV_IMPL_FWD_DEFAULT(name, T, ACT, WEI, EPI_FN)                                        \
    GCONV_IMPL_FWD_KERNELS(name, _f, T, ACT, WEI, 0, EPI_FN)                                     \
    GCONV_IMPL_IF(GCONV_IMPL_HAS_TF32(T))(GCONV_IMPL_FWD_KERNELS(name, _t, T, ACT, WEI, 1, EPI_FN)) \
    GCONV_IMPL_FWD_DIRECT(name, T, EPI_FN)                                                       \
    GCONV_IMPL_FWD_HALO_KERNEL(name, T, EPI_FN, 0)                                               \
    GCONV_IMPL_IF(GCONV_IMPL_HAS_WS(T, ACT, WEI))(GCONV_IMPL_FWD_WS_KERNELS(name, T, EPI_FN, 0)) \
    GCONV_IMPL_FWD_UNUSED static inline int name##_supports(const gconv_problem *p, char *why,   \
                                                            size_t len)                          \
    {                                                                                            \
        return gconv_impl_fwd_check(p, NULL, T, ACT, WEI, why, len) == GCONV_OK;                 \
    }                                                                                            \
    GCONV_IMPL_FWD_UNUSED static inline size_t name##_workspace_size(const gconv_problem *p)    \
    {                                                                                            \
        (void)p;                                                                                 \
        return 0;                                                                                \
    }                                                                                            \
    GCONV_IMPL_FWD_UNUSED static inline gconv_status name(const gconv_problem *p,                \
                                                          const gconv_fwd_args *a,               \
                                                          hipStream_t stream)                    \
    {                                                                                            \
        char *why_ = a ? a->why : NULL;                                                          \
        size_t len_ = a ? a->why_len : 0;                                                        \
        gconv_impl_fwd_params P;                                                                 \
        gconv_status s_;                                                                         \
        int vec_ok_, kind_;                                                                      \
        if (!a)                                                                                  \
            return gconv_impl_fail(GCONV_ERR_NULL, NULL, 0, "the argument pointer is null");     \
        s_ = gconv_impl_fwd_check(p, a, T, ACT, WEI, why_, len_);                                \
        if (s_ != GCONV_OK)                                                                      \
            return s_;                                                                           \
        if (why_ && len_)                                                                        \
            why_[0] = '\0';                                                                      \
        GCONV_IMPL_FWD_TRY_HALO(name, T, p, a, stream, why_, len_)                               \
        GCONV_IMPL_FWD_TRY_DIRECT(name, p, a, stream)                                            \
        gconv_impl_fwd_fill(p, a, &P);                                                           \
        vec_ok_ = GCONV_IMPL_BOTHVEC(ACT, WEI) &&                                                \
                  p->C % (16 / (int)gconv_dtype_size(T)) == 0 &&                                 \
                  ((uintptr_t)a->in | (uintptr_t)a->wei) % 16 == 0;                              \
        P.out_vec = GCONV_IMPL_FAMVEC(ACT) && p->K % (16 / (int)gconv_dtype_size(T)) == 0 &&     \
                    (uintptr_t)a->out % 16 == 0;                                                 \
        GCONV_IMPL_IF(GCONV_IMPL_HAS_WS(T, ACT, WEI))(                                           \
            if (!a->allow_tf32) GCONV_IMPL_FWD_TRY_WS(name, gconv_impl_fwd_needs64(p), P,       \
                                                      vec_ok_, stream, why_, len_))              \
        kind_ = gconv_impl_fwd_kind(p, &P, vec_ok_);                                             \
        GCONV_IMPL_IF(GCONV_IMPL_HAS_TF32(T))(                                                   \
            if (a->allow_tf32) return name##_run_t(kind_, &P, stream, why_, len_);)              \
        return name##_run_f(kind_, &P, stream, why_, len_);                                      \
    }

/* Direct kernels (gconv/direct_fwd.h) for few channels per group, when available. */
#if defined(GCONV_IMPL_DIRECT_FWD)
#define GCONV_IMPL_FWD_DIRECT(name, T, EPI_FN) GCONV_IMPL_DIRECT_FWD(name, T, EPI_FN)
/* Direct kernels where gconv/direct_fwd.h says they fit; also C = K = 4 NHWGC (ResNeXt
 * 32x4d's first stage), where its FEWC kernel beats the implicit GEMM by far (an element-wise
 * gather: C is not a multiple of the 16-byte vector); if FEWC refuses, the GEMM runs. */
#define GCONV_IMPL_FWD_TRY_DIRECT(name, p, a, stream)                                            \
    {                                                                                            \
        const gconv_epilogue plain_ = gconv_epi_scale(1.0f);                                     \
        if (name##_direct_fits(p))                                                               \
            return name##_direct_launch(p, a->in, a->wei, a->out, a->epi ? a->epi : &plain_,     \
                                        stream);                                                 \
        if ((p)->C == 4 && (p)->K == 4 &&                                                        \
            gconv_layout_family(gconv_in_layout(p)) == GCONV_NHWGC &&                            \
            gconv_layout_family(gconv_out_layout(p)) == GCONV_NHWGC) {                           \
            gconv_status ds_ = name##_direct_launch_path(p, a->in, a->wei, a->out,                \
                                                        a->epi ? a->epi : &plain_, stream,       \
                                                        GCONV_IMPL_DIRECT_FEWC);                 \
            if (ds_ != GCONV_ERR_UNSUPPORTED)                                                    \
                return ds_;                                                                      \
        }                                                                                        \
    }
#else
#define GCONV_IMPL_FWD_DIRECT(name, T, EPI_FN)
#define GCONV_IMPL_FWD_TRY_DIRECT(name, p, a, stream)
#endif

#define GCONV_FWD(name, T, ACT_FAMILY, WEI_FAMILY)                                               \
    GCONV_IMPL_FWD_DEFAULT(name, T, ACT_FAMILY, WEI_FAMILY, gconv_impl_epilogue_apply)

#define GCONV_FWD_USER_OP(name, T, ACT_FAMILY, WEI_FAMILY, OPFN)                                 \
    GCONV_IMPL_FWD_DEFAULT(name, T, ACT_FAMILY, WEI_FAMILY, OPFN)

/* Gather modes of a pinned instantiation: vectors for the families with contiguous channels. */
#define GCONV_IMPL_AMODE(A) (GCONV_IMPL_FAMVEC(A) ? GCONV_IMPL_LD_VEC : GCONV_IMPL_LD_SCALAR)
#define GCONV_IMPL_BMODE(W) (GCONV_IMPL_WEIVEC(W) ? GCONV_IMPL_LD_VEC : GCONV_IMPL_LD_SCALAR)

/* Pinned tile: implicit GEMM only; vector gathers for the families that allow them, with the
 * alignment they need checked (GCONV_ERR_ALIGNMENT). */
#define GCONV_FWD_TILED(name, T, ACT_FAMILY, WEI_FAMILY, TILE)                                   \
    GCONV_IMPL_FWD_KERNEL(name##_k32, T, TILE,                                                   \
                          GCONV_IMPL_AMODE(ACT_FAMILY), \
                          GCONV_IMPL_BMODE(WEI_FAMILY), \
                          0, 0, GCONV_IMPL_FAMVEC(ACT_FAMILY), gconv_impl_epilogue_apply)        \
    GCONV_IMPL_FWD_KERNEL(name##_k64, T, TILE,                                                   \
                          GCONV_IMPL_AMODE(ACT_FAMILY), \
                          GCONV_IMPL_BMODE(WEI_FAMILY), \
                          1, 0, GCONV_IMPL_FAMVEC(ACT_FAMILY), gconv_impl_epilogue_apply)        \
    GCONV_IMPL_IF(GCONV_IMPL_HAS_TF32(T))(                                                       \
        GCONV_IMPL_FWD_KERNEL(name##_k32t, T, TILE,                                              \
                              GCONV_IMPL_AMODE(ACT_FAMILY), \
                              GCONV_IMPL_BMODE(WEI_FAMILY), \
                              0, 1, GCONV_IMPL_FAMVEC(ACT_FAMILY), gconv_impl_epilogue_apply)    \
        GCONV_IMPL_FWD_KERNEL(name##_k64t, T, TILE,                                              \
                              GCONV_IMPL_AMODE(ACT_FAMILY), \
                              GCONV_IMPL_BMODE(WEI_FAMILY), \
                              1, 1, GCONV_IMPL_FAMVEC(ACT_FAMILY), gconv_impl_epilogue_apply))   \
    GCONV_IMPL_FWD_UNUSED static inline gconv_status name##_tiled_check(                         \
        const gconv_problem *p, const gconv_fwd_args *a, char *why, size_t len)                  \
    {                                                                                            \
        const int vec_ = 16 / (int)gconv_dtype_size(T);                                          \
        const int av_ = GCONV_IMPL_FAMVEC(ACT_FAMILY), wv_ = GCONV_IMPL_WEIVEC(WEI_FAMILY);      \
        gconv_status s_ = gconv_impl_fwd_check(p, a, T, ACT_FAMILY, WEI_FAMILY, why, len);       \
        if (s_ != GCONV_OK)                                                                      \
            return s_;                                                                           \
        if ((av_ || wv_) && p->C % vec_)                                                         \
            return gconv_impl_fail(GCONV_ERR_ALIGNMENT, why, len,                                \
                                   "this pinned vector kernel needs C (%d) to be a multiple of " \
                                   "%d", p->C, vec_);                                            \
        if (a && av_ && ((uintptr_t)a->in | (uintptr_t)a->out) % 16)                             \
            return gconv_impl_fail(GCONV_ERR_ALIGNMENT, why, len,                                \
                                   "this pinned vector kernel needs 16-byte aligned input and "  \
                                   "output pointers");                                           \
        if (a && wv_ && (uintptr_t)a->wei % 16)                                                  \
            return gconv_impl_fail(GCONV_ERR_ALIGNMENT, why, len,                                \
                                   "this pinned vector kernel needs a 16-byte aligned weight "   \
                                   "pointer");                                                   \
        return GCONV_OK;                                                                         \
    }                                                                                            \
    GCONV_IMPL_FWD_UNUSED static inline int name##_supports(const gconv_problem *p, char *why,   \
                                                            size_t len)                          \
    {                                                                                            \
        return name##_tiled_check(p, NULL, why, len) == GCONV_OK;                                \
    }                                                                                            \
    GCONV_IMPL_FWD_UNUSED static inline size_t name##_workspace_size(const gconv_problem *p)    \
    {                                                                                            \
        (void)p;                                                                                 \
        return 0;                                                                                \
    }                                                                                            \
    GCONV_IMPL_FWD_UNUSED static inline gconv_status name##_launch_(                             \
        const gconv_problem *p, gconv_impl_fwd_params *P, int tf32, hipStream_t stream, char *why, \
        size_t len)                                                                              \
    {                                                                                            \
        const int big_ = gconv_impl_fwd_needs64(p);                                              \
        (void)tf32;                                                                              \
        GCONV_IMPL_IF(GCONV_IMPL_HAS_TF32(T))(                                                   \
            if (tf32 && big_)                                                                    \
                GCONV_IMPL_FWD_LAUNCH_ONE(name##_k64t, T, TILE, *P, stream, why, len);           \
            if (tf32)                                                                            \
                GCONV_IMPL_FWD_LAUNCH_ONE(name##_k32t, T, TILE, *P, stream, why, len);)          \
        if (big_)                                                                                \
            GCONV_IMPL_FWD_LAUNCH_ONE(name##_k64, T, TILE, *P, stream, why, len);                \
        GCONV_IMPL_FWD_LAUNCH_ONE(name##_k32, T, TILE, *P, stream, why, len);                    \
    }                                                                                            \
    GCONV_IMPL_FWD_UNUSED static inline gconv_status name(const gconv_problem *p,                \
                                                          const gconv_fwd_args *a,               \
                                                          hipStream_t stream)                    \
    {                                                                                            \
        char *why_ = a ? a->why : NULL;                                                          \
        size_t len_ = a ? a->why_len : 0;                                                        \
        gconv_impl_fwd_params P;                                                                 \
        gconv_status s_;                                                                         \
        if (!a)                                                                                  \
            return gconv_impl_fail(GCONV_ERR_NULL, NULL, 0, "the argument pointer is null");     \
        s_ = name##_tiled_check(p, a, why_, len_);                                               \
        if (s_ != GCONV_OK)                                                                      \
            return s_;                                                                           \
        if (why_ && len_)                                                                        \
            why_[0] = '\0';                                                                      \
        gconv_impl_fwd_fill(p, a, &P);                                                           \
        P.out_vec = GCONV_IMPL_FAMVEC(ACT_FAMILY) && p->K % (16 / (int)gconv_dtype_size(T)) == 0; \
        return name##_launch_(p, &P, a->allow_tf32, stream, why_, len_);                         \
    }

#endif /* GCONV_FWD_H */
