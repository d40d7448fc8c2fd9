/* gconv/reference.h: the CPU reference of every gconv operation (the oracle of the tests).
 *
 * What is here: four host functions, plain C11, that compute what the GPU operations compute,
 * accumulating in double:
 *
 *   gconv_ref_fwd(p, t, in, wei, out, out_t, epi)
 *       out[g,n,k,o] = epi(sum over c, tap of in[g,n,c,i] * wei[g,k,c,tap]) with
 *       i = o*stride - pad_lo + tap*dilation per axis, taps with i outside the input skipped
 *   gconv_ref_bwd_data(p, t, d_out, wei, d_in, d_in_t, epi)
 *       d_in[g,n,c,i] = epi(sum of d_out[g,n,k,o] * wei[g,k,c,tap] over every (k, tap, o) with
 *       i = o*stride - pad_lo + tap*dilation); an input element that no output reaches still
 *       gets epi(0), i.e. act(sum beta_j * D_j).
 *   gconv_ref_bwd_weight(p, t, in, d_out, d_wei, d_wei_t, alpha, beta)
 *       d_wei = alpha * sum_{n,o} in * d_out + beta * d_wei_old; with beta == 0 the old d_wei
 *       is not read (it may hold NaN or garbage).
 *   gconv_ref_fwd_fwd(p, K1, t, in, w0, b0, act0, w1, b1, out, out_t, epi)
 *       grouped conv -> mid = act0(acc + b0[g*K+k]) -> 1x1 conv over all G*K channels:
 *       out[n,k1,o] = epi(sum_{gk} w1[k1*G*K + gk] * mid[gk] + b1[k1]).
 *       The intermediate is kept in double, not rounded to t (a fused kernel that stores it
 *       as t in shared memory differs by that rounding; tests must allow for it).
 *
 * Tensors are host memory in the problem's layouts (gconv/layout.h): in, d_in with
 * p->in_layout, out, d_out with p->out_layout, weights with p->wei_layout. fwd_fwd's output
 * has N images, K1 channels, the output spatial size of p and the family of p->out_layout with
 * G = 1; its D tensors are read at (g = 0, n, k1, d, h, w). Inputs (in, wei, d_out, w0, b0,
 * w1, b1) have element type t; the result and the epilogue's D tensors have type out_t /
 * d_in_t / d_wei_t. The epilogue (gconv/epilogue.h; NULL = plain store) is evaluated in
 * double: y = act(alpha*acc + sum_j beta_j * D_j), then rounded to float and from float to
 * the output type (round to nearest even), as a kernel that computes in fp32 rounds.
 *
 * Errors: each function validates before it touches memory and returns, in this order:
 * the status of gconv_problem_check (GCONV_ERR_NULL for a null problem); GCONV_ERR_NULL for
 * a null required tensor pointer (b0, b1 may be NULL = no bias); GCONV_ERR_DTYPE for an
 * unknown type; the status of gconv_epilogue_check (act0 is checked the same way); for
 * fwd_fwd GCONV_ERR_SIZE for K1 <= 0 and GCONV_ERR_OVERFLOW for a too large output or w1.
 * Use gconv_problem_check directly for the reason in words. Nothing is allocated.
 *
 * Usage:
 *     gconv_problem p;
 *     gconv_problem_2d(&p, G, N, C, K, H, W, 3, 3, 1, 1, 1, 1, 1, 1);
 *     float *x = ..., *w = ..., *y = malloc(gconv_out_bytes(&p, GCONV_F32));
 *     gconv_status s = gconv_ref_fwd(&p, GCONV_F32, x, w, y, GCONV_F32, NULL);
 *
 * Speed: loops visit only taps that land inside the input (bounds solved per axis, not tested
 * per element), backward data gathers for each input element only the taps whose
 * (i + pad_lo - tap*dilation) is a multiple of the stride, and backward weight accumulates a
 * block of (k, c) sums per pass over the data. On one x86 core, about 1 G multiply-adds per
 * second for fp32 with channels innermost (backward weight up to 2.5 G), a third of that for
 * fp16 / bf16 data or NGCHW layouts, 0.1 to 0.4 G for depthwise problems.
 *
 * Compiles as C11 and as C++ (device translation units include it; these are host functions).
 */
#ifndef GCONV_REFERENCE_H
#define GCONV_REFERENCE_H

#include <stdint.h>
#include <string.h>

#include "epilogue.h"
#include "layout.h"
#include "problem.h"
#include "types.h"

/* Block sizes of the local accumulators (doubles on the stack). */
enum {
    GCONV_IMPL_REF_KB = 16,  /* output channels per bwd_weight block */
    GCONV_IMPL_REF_CB = 32,  /* input channels per bwd_weight block */
    GCONV_IMPL_REF_FB = 128  /* channels per fwd_fwd block (intermediate and K1) */
};

static inline int gconv_impl_ref_dtype_ok(gconv_dtype t)
{
    return t == GCONV_F32 || t == GCONV_F16 || t == GCONV_BF16;
}

/* n elements p[off + i*stride] of type t, converted to double into dst. */
static inline void gconv_impl_ref_row(gconv_dtype t, const void *p, int64_t off, int64_t stride,
                                      int n, double *dst)
{
    int i;
    if (t == GCONV_F16) {
        const gconv_f16 *q = (const gconv_f16 *)p + off;
        for (i = 0; i < n; i++)
            dst[i] = gconv_f16_to_f32(q[i * stride]);
    } else if (t == GCONV_BF16) {
        const gconv_bf16 *q = (const gconv_bf16 *)p + off;
        for (i = 0; i < n; i++)
            dst[i] = gconv_bf16_to_f32(q[i * stride]);
    } else {
        const float *q = (const float *)p + off;
        for (i = 0; i < n; i++)
            dst[i] = q[i * stride];
    }
}

/* sum_{i<n} a[ia + i*sa] * b[ib + i*sb] in double, both of type t (products of two floats are
 * exact in double, so only the additions round). */
static inline double gconv_impl_ref_dot(gconv_dtype t, const void *a, int64_t ia, int64_t sa,
                                        const void *b, int64_t ib, int64_t sb, int n)
{
    double acc = 0.0;
    int i;
    if (t == GCONV_F16) {
        const gconv_f16 *x = (const gconv_f16 *)a + ia, *y = (const gconv_f16 *)b + ib;
        for (i = 0; i < n; i++)
            acc += (double)gconv_f16_to_f32(x[i * sa]) * gconv_f16_to_f32(y[i * sb]);
    } else if (t == GCONV_BF16) {
        const gconv_bf16 *x = (const gconv_bf16 *)a + ia, *y = (const gconv_bf16 *)b + ib;
        for (i = 0; i < n; i++)
            acc += (double)gconv_bf16_to_f32(x[i * sa]) * gconv_bf16_to_f32(y[i * sb]);
    } else {
        const float *x = (const float *)a + ia, *y = (const float *)b + ib;
        for (i = 0; i < n; i++)
            acc += (double)x[i * sa] * y[i * sb];
    }
    return acc;
}

/* The activation in double, with the comparisons of gconv_act_apply (so NaN behaves alike:
 * ReLU maps it to 0, clamp passes it through). */
static inline double gconv_impl_ref_act(gconv_act a, double v)
{
    if (a.kind == GCONV_ACT_RELU)
        return v > 0.0 ? v : 0.0;
    if (a.kind == GCONV_ACT_CLAMP)
        return v < a.lo ? (double)a.lo : v > a.hi ? (double)a.hi : v;
    return v;
}

/* Apply epilogue e (NULL = identity) to acc for the element at logical (g, n, c, d, h, w) and
 * store it, rounded to type t, at dst[off]. D tensors have type t. */
static inline void gconv_impl_ref_put(gconv_dtype t, void *dst, int64_t off,
                                      const gconv_epilogue *e, double acc, int g, int n, int c,
                                      int d, int h, int w)
{
    double y = acc;
    int i;
    if (e) {
        y = (double)e->alpha * acc;
        for (i = 0; i < e->num_d; i++)
            y += (double)e->beta[i] *
                 gconv_load_f32(t, e->d[i].data,
                                (size_t)gconv_act_offset(&e->d[i].strides, g, n, c, d, h, w));
        y = gconv_impl_ref_act(e->act, y);
    }
    gconv_store_f32(t, dst, (size_t)off, (float)y);
}

/* A run of indices j = lo, lo + step, ... < hi along one axis (empty when lo >= hi), and the
 * coordinate each j pairs with on the other side: first at j = lo, changing by delta per step.
 * For the taps of an output position the coordinate is the input index the tap reads; for the
 * output positions one tap reaches, also the input index; for the taps that reach an input
 * index (backward data), the output index they come from. */
typedef struct gconv_impl_ref_run {
    int lo, hi, step;
    int first, delta;
} gconv_impl_ref_run;

/* The j in [0, count) with 0 <= base + j*step < extent, for step > 0, paired with
 * base + j*step: the taps of one output position (base = o*stride - pad_lo, step = dilation,
 * count = filter), or the output positions one tap reaches (base = tap*dilation - pad_lo,
 * step = stride, count = out). */
static inline gconv_impl_ref_run gconv_impl_ref_inside(int64_t base, int64_t step, int64_t extent,
                                                       int64_t count)
{
    gconv_impl_ref_run r;
    int64_t lo = base < 0 ? (-base + step - 1) / step : 0;
    int64_t hi = base >= extent ? 0 : (extent - 1 - base) / step + 1;
    if (hi > count)
        hi = count;
    if (lo > hi)
        lo = hi;
    r.lo = (int)lo;
    r.hi = (int)hi;
    r.step = 1;
    r.first = (int)(base + lo * step);
    r.delta = (int)step;
    return r;
}

/* The taps of output position o[] that land inside the input, per axis. */
static inline void gconv_impl_ref_taps(const gconv_problem *p, const int o[3],
                                       gconv_impl_ref_run r[3])
{
    int a;
    for (a = 0; a < 3; a++)
        r[a] = gconv_impl_ref_inside((int64_t)o[a] * p->stride[a] - p->pad_lo[a],
                                     p->dilation[a], p->in[a], p->filter[a]);
}

/* The taps z that reach input index i[a] from some output o in [0, osz[a]), per axis:
 * v - z*dil = o*stride with v = i + pad_lo. Such z lie in [zmin, zmax] and form an arithmetic
 * progression of period stride / gcd(stride, dil), along which o falls by period*dil/stride;
 * the first z is found by trying at most one period. */
static inline void gconv_impl_ref_gather(const gconv_problem *p, const int i[3],
                                         const int osz[3], gconv_impl_ref_run r[3])
{
    int a;
    for (a = 0; a < 3; a++) {
        int64_t v = (int64_t)i[a] + p->pad_lo[a];
        int64_t dil = p->dilation[a], s = p->stride[a];
        int64_t zmax = v / dil;                       /* o >= 0 */
        int64_t over = v - (int64_t)(osz[a] - 1) * s; /* o <= out - 1 */
        int64_t zmin = over > 0 ? (over + dil - 1) / dil : 0;
        int64_t x = s, y = dil, z;
        while (y) {
            int64_t m = x % y;
            x = y;
            y = m;
        }
        if (zmax > p->filter[a] - 1)
            zmax = p->filter[a] - 1;
        r[a].lo = r[a].hi = r[a].first = 0;
        r[a].step = (int)(s / x);
        r[a].delta = (int)-(dil / x);
        for (z = zmin; z <= zmax && z < zmin + r[a].step; z++)
            if ((v - z * dil) % s == 0) {
                r[a].lo = (int)z;
                r[a].hi = (int)zmax + 1;
                r[a].first = (int)((v - z * dil) / s);
                break;
            }
    }
}

/* sum over the taps of runs r[] of the dot product (over n channels) between the activation
 * act at (act_off + its spatial offset of the run's coordinate; channel stride act_cs) and the
 * weights at (wei_off + tap offset; channel stride wei_cs). Forward: act = input, channels C;
 * backward data: act = d_out, channels K. */
static inline double gconv_impl_ref_point(gconv_dtype t, const void *act,
                                          const gconv_act_strides *sa, int64_t act_off,
                                          int64_t act_cs, const void *wei,
                                          const gconv_wei_strides *sw, int64_t wei_off,
                                          int64_t wei_cs, int n, const gconv_impl_ref_run r[3])
{
    double acc = 0.0;
    int z, y, x, c0, c1, c2;
    for (z = r[0].lo, c0 = r[0].first; z < r[0].hi; z += r[0].step, c0 += r[0].delta)
        for (y = r[1].lo, c1 = r[1].first; y < r[1].hi; y += r[1].step, c1 += r[1].delta)
            for (x = r[2].lo, c2 = r[2].first; x < r[2].hi; x += r[2].step, c2 += r[2].delta)
                acc += gconv_impl_ref_dot(
                    t, act, act_off + c0 * sa->s[0] + c1 * sa->s[1] + c2 * sa->s[2], act_cs, wei,
                    wei_off + z * sw->s[0] + y * sw->s[1] + x * sw->s[2], wei_cs, n);
    return acc;
}

/* What every operation derives from its problem: the tensors' strides and the output size. */
typedef struct gconv_impl_ref_dims {
    gconv_act_strides si, so;
    gconv_wei_strides sw;
    int osz[3];
    int64_t in_pos, out_pos; /* N times the input / output spatial size */
} gconv_impl_ref_dims;

/* Checks shared by every operation (problem, pointers, types, epilogue); on success fills d
 * (zeroed otherwise). */
static inline gconv_status gconv_impl_ref_begin(const gconv_problem *p, gconv_dtype t,
                                                gconv_dtype out_t, const void *a, const void *b,
                                                const void *c, const gconv_epilogue *epi,
                                                gconv_impl_ref_dims *d)
{
    gconv_status s = gconv_problem_check(p, NULL, 0);
    memset(d, 0, sizeof *d);
    if (s != GCONV_OK)
        return s;
    if (!a || !b || !c)
        return GCONV_ERR_NULL;
    if (!gconv_impl_ref_dtype_ok(t) || !gconv_impl_ref_dtype_ok(out_t))
        return GCONV_ERR_DTYPE;
    s = gconv_epilogue_check(epi, NULL, 0);
    if (s != GCONV_OK)
        return s;
    d->si = gconv_in_strides(p);
    d->so = gconv_out_strides(p);
    d->sw = gconv_weight_strides(p);
    gconv_out_sizes(p, d->osz);
    d->in_pos = p->N * gconv_in_spatial(p);
    d->out_pos = p->N * gconv_out_spatial(p);
    return GCONV_OK;
}

/* Image and spatial position x[] of the pos-th of N * sz[0]*sz[1]*sz[2] positions, W fastest. */
static inline int gconv_impl_ref_position(int64_t pos, const int sz[3], int x[3])
{
    x[2] = (int)(pos % sz[2]);
    pos /= sz[2];
    x[1] = (int)(pos % sz[1]);
    pos /= sz[1];
    x[0] = (int)(pos % sz[0]);
    return (int)(pos / sz[0]);
}

/* Forward and backward data are one loop seen from either side. Forward: for every output
 * position, its taps inside the input; each output channel k sums over the input channels C
 * of in, with weights (g, k, c). Backward data: for every input position, the taps that reach
 * it; each input channel c sums over the output channels K of d_out, with weights (g, k, c).
 * Each destination element is computed once, with the epilogue, and stored. */
static inline gconv_status gconv_impl_ref_fwd_or_bwd_data(const gconv_problem *p, int bwd,
                                                          gconv_dtype t, const void *src,
                                                          const void *wei, void *dst,
                                                          gconv_dtype dst_t,
                                                          const gconv_epilogue *epi)
{
    gconv_impl_ref_dims d;
    gconv_impl_ref_run r[3];
    gconv_status st = gconv_impl_ref_begin(p, t, dst_t, src, wei, dst, epi, &d);
    const gconv_act_strides *ss = bwd ? &d.so : &d.si, *ds = bwd ? &d.si : &d.so;
    int64_t pos, w_ch = bwd ? d.sw.c : d.sw.k, w_sum = bwd ? d.sw.k : d.sw.c;
    int x[3], n, g, ch;
    if (st != GCONV_OK)
        return st;
    for (pos = 0; pos < (bwd ? d.in_pos : d.out_pos); pos++) {
        n = gconv_impl_ref_position(pos, bwd ? p->in : d.osz, x);
        if (bwd)
            gconv_impl_ref_gather(p, x, d.osz, r);
        else
            gconv_impl_ref_taps(p, x, r);
        for (g = 0; g < p->G; g++)
            for (ch = 0; ch < (bwd ? p->C : p->K); ch++)
                gconv_impl_ref_put(dst_t, dst, gconv_act_offset(ds, g, n, ch, x[0], x[1], x[2]),
                                   epi,
                                   gconv_impl_ref_point(t, src, ss,
                                                        gconv_act_offset(ss, g, n, 0, 0, 0, 0),
                                                        ss->c, wei, &d.sw, g * d.sw.g + ch * w_ch,
                                                        w_sum, bwd ? p->K : p->C, r),
                                   g, n, ch, x[0], x[1], x[2]);
    }
    return GCONV_OK;
}

static inline gconv_status gconv_ref_fwd(const gconv_problem *p, gconv_dtype t, const void *in,
                                         const void *wei, void *out, gconv_dtype out_t,
                                         const gconv_epilogue *epi)
{
    return gconv_impl_ref_fwd_or_bwd_data(p, 0, t, in, wei, out, out_t, epi);
}

static inline gconv_status gconv_ref_bwd_data(const gconv_problem *p, gconv_dtype t,
                                              const void *d_out, const void *wei, void *d_in,
                                              gconv_dtype d_in_t, const gconv_epilogue *epi)
{
    return gconv_impl_ref_fwd_or_bwd_data(p, 1, t, d_out, wei, d_in, d_in_t, epi);
}

/* Backward weight for one group, one tap and one block of kn x cn weights starting at (k0, c0):
 * sums, over every image and every output position the tap reaches (runs r[], paired with the
 * input index they read), the outer product d_out[k0..] x in[c0..], then stores
 * alpha*acc + beta*old. */
static inline void gconv_impl_ref_bwdw_block(const gconv_problem *p, gconv_dtype t, const void *in,
                                             const void *d_out, void *d_wei, gconv_dtype d_wei_t,
                                             const gconv_impl_ref_dims *d, double alpha,
                                             double beta, int g, const int tap[3],
                                             const gconv_impl_ref_run r[3], int k0, int kn,
                                             int c0, int cn)
{
    double acc[GCONV_IMPL_REF_KB][GCONV_IMPL_REF_CB];
    double dy[GCONV_IMPL_REF_KB], xv[GCONV_IMPL_REF_CB];
    int64_t in_step = d->si.s[2] * r[2].delta; /* input elements between consecutive o2 */
    int n, o0, o1, o2, i0, i1, kk, cc;
    memset(acc, 0, sizeof acc);
    for (n = 0; n < p->N; n++)
        for (o0 = r[0].lo, i0 = r[0].first; o0 < r[0].hi; o0++, i0 += r[0].delta)
            for (o1 = r[1].lo, i1 = r[1].first; o1 < r[1].hi; o1++, i1 += r[1].delta) {
                int64_t oi = gconv_act_offset(&d->si, g, n, c0, i0, i1, r[2].first);
                int64_t oo = gconv_act_offset(&d->so, g, n, k0, o0, o1, r[2].lo);
                for (o2 = r[2].lo; o2 < r[2].hi; o2++, oi += in_step, oo += d->so.s[2]) {
                    gconv_impl_ref_row(t, d_out, oo, d->so.c, kn, dy);
                    gconv_impl_ref_row(t, in, oi, d->si.c, cn, xv);
                    for (kk = 0; kk < kn; kk++)
                        for (cc = 0; cc < cn; cc++)
                            acc[kk][cc] += dy[kk] * xv[cc];
                }
            }
    for (kk = 0; kk < kn; kk++)
        for (cc = 0; cc < cn; cc++) {
            int64_t off = gconv_wei_offset(&d->sw, g, k0 + kk, c0 + cc, tap[0], tap[1], tap[2]);
            double v = alpha * acc[kk][cc];
            if (beta != 0.0)
                v += beta * gconv_load_f32(d_wei_t, d_wei, (size_t)off);
            gconv_store_f32(d_wei_t, d_wei, (size_t)off, (float)v);
        }
}

static inline gconv_status gconv_ref_bwd_weight(const gconv_problem *p, gconv_dtype t,
                                                const void *in, const void *d_out, void *d_wei,
                                                gconv_dtype d_wei_t, float alpha, float beta)
{
    gconv_impl_ref_dims d;
    gconv_impl_ref_run r[3];
    gconv_status st = gconv_impl_ref_begin(p, t, d_wei_t, in, d_out, d_wei, NULL, &d);
    int tap[3], g, a, k0, c0;
    if (st != GCONV_OK)
        return st;
    for (g = 0; g < p->G; g++)
        for (tap[0] = 0; tap[0] < p->filter[0]; tap[0]++)
            for (tap[1] = 0; tap[1] < p->filter[1]; tap[1]++)
                for (tap[2] = 0; tap[2] < p->filter[2]; tap[2]++) {
                    for (a = 0; a < 3; a++)
                        r[a] = gconv_impl_ref_inside(
                            (int64_t)tap[a] * p->dilation[a] - p->pad_lo[a], p->stride[a],
                            p->in[a], d.osz[a]);
                    for (k0 = 0; k0 < p->K; k0 += GCONV_IMPL_REF_KB)
                        for (c0 = 0; c0 < p->C; c0 += GCONV_IMPL_REF_CB)
                            gconv_impl_ref_bwdw_block(
                                p, t, in, d_out, d_wei, d_wei_t, &d, alpha, beta, g, tap, r, k0,
                                p->K - k0 < GCONV_IMPL_REF_KB ? p->K - k0 : GCONV_IMPL_REF_KB, c0,
                                p->C - c0 < GCONV_IMPL_REF_CB ? p->C - c0 : GCONV_IMPL_REF_CB);
                }
    return GCONV_OK;
}

static inline gconv_status gconv_ref_fwd_fwd(const gconv_problem *p, int K1, gconv_dtype t,
                                             const void *in, const void *w0, const void *b0,
                                             gconv_act act0, const void *w1, const void *b1,
                                             void *out, gconv_dtype out_t,
                                             const gconv_epilogue *epi)
{
    gconv_impl_ref_dims d;
    gconv_impl_ref_run r[3];
    /* w1 is as required as out: a null one reads as a null out */
    gconv_status st = gconv_impl_ref_begin(p, t, out_t, in, w0, w1 ? out : NULL, epi, &d);
    gconv_epilogue act_only = gconv_epi_scale(1.0f);
    double mid[GCONV_IMPL_REF_FB], acc[GCONV_IMPL_REF_FB], w1row[GCONV_IMPL_REF_FB];
    int o[3], n, j, q, qn, jn;
    int64_t pos, gk_all, q0, j0;
    if (st != GCONV_OK)
        return st;
    act_only.act = act0;
    st = gconv_epilogue_check(&act_only, NULL, 0);
    if (st != GCONV_OK)
        return st;
    if (K1 <= 0)
        return GCONV_ERR_SIZE;
    if (!gconv_impl_count_ok(p->N, K1, d.osz[0], d.osz[1], d.osz[2], 1) ||
        !gconv_impl_count_ok(K1, p->G, p->K, 1, 1, 1))
        return GCONV_ERR_OVERFLOW;
    d.so = gconv_act_strides_make(gconv_out_layout(p), 1, p->N, K1, d.osz);
    gk_all = (int64_t)p->G * p->K;
    for (pos = 0; pos < d.out_pos; pos++) {
        n = gconv_impl_ref_position(pos, d.osz, o);
        gconv_impl_ref_taps(p, o, r);
        /* blocks of K1 outputs; the intermediate is recomputed per block when K1 exceeds one
         * block, which keeps everything on the stack */
        for (q0 = 0; q0 < K1; q0 += GCONV_IMPL_REF_FB) {
            qn = K1 - q0 < GCONV_IMPL_REF_FB ? (int)(K1 - q0) : GCONV_IMPL_REF_FB;
            for (q = 0; q < qn; q++)
                acc[q] = 0.0;
            for (j0 = 0; j0 < gk_all; j0 += GCONV_IMPL_REF_FB) {
                jn = gk_all - j0 < GCONV_IMPL_REF_FB ? (int)(gk_all - j0) : GCONV_IMPL_REF_FB;
                for (j = 0; j < jn; j++) {
                    int g = (int)((j0 + j) / p->K), k = (int)((j0 + j) % p->K);
                    double v = gconv_impl_ref_point(
                        t, in, &d.si, gconv_act_offset(&d.si, g, n, 0, 0, 0, 0), d.si.c, w0,
                        &d.sw, gconv_wei_offset(&d.sw, g, k, 0, 0, 0, 0), d.sw.c, p->C, r);
                    if (b0)
                        v += gconv_load_f32(t, b0, (size_t)(j0 + j));
                    mid[j] = gconv_impl_ref_act(act0, v);
                }
                for (q = 0; q < qn; q++) {
                    gconv_impl_ref_row(t, w1, (q0 + q) * gk_all + j0, 1, jn, w1row);
                    for (j = 0; j < jn; j++)
                        acc[q] += w1row[j] * mid[j];
                }
            }
            for (q = 0; q < qn; q++) {
                int k1 = (int)q0 + q;
                double v = acc[q] + (b1 ? gconv_load_f32(t, b1, (size_t)k1) : 0.0);
                gconv_impl_ref_put(out_t, out, gconv_act_offset(&d.so, 0, n, k1, o[0], o[1], o[2]),
                                   epi, v, 0, n, k1, o[0], o[1], o[2]);
            }
        }
    }
    return GCONV_OK;
}

#endif /* GCONV_REFERENCE_H */
