/* tests/gpu_fused_fwd.hip: the fused grouped conv -> pointwise conv forward (gconv/fused_fwd.h)
 * against the CPU reference composition gconv_ref_fwd_fwd.
 *
 * One Criterion suite, "fused_fwd". Every test skips with the reason when there is no GPU and
 * has a timeout. What is tested:
 *   - sweep_*: 320 seeded random problems per data type (fp16, bf16, fp32): 1D/2D/3D, depthwise
 *     (most) and general groups (C, K per group 1..6), intermediate channels 8..1024, K1 1..1024,
 *     filters 1..7 per axis, strides 1..3, dilations 1..3, asymmetric pads, activations
 *     (none, ReLU, ReLU6, clamp), b0 / b1 present or not, final epilogues with 0..2 D tensors
 *     (residual-shaped or per-channel), alpha; every output element compared, nothing written
 *     outside the output (guard zones);
 *   - layouts: the same sweep (fewer problems) for GNHWC / GKYXC and NGCHW / GKCYX;
 *   - user_op / user_act: the user-op variants, checked against a host model of the same op;
 *   - tiled_*: pinned tiles (an engine tile with 128 threads, the 128x16 tile);
 *   - odd pointers: misaligned-by-16 (element-aligned) w1 / in / out take the element-wise paths;
 *   - no_workspace: the launcher allocates nothing (free device memory unchanged over many
 *     launches) and the argument struct has no workspace at all;
 *   - refuse_*: refusals with their exact status, and that a refusal launches nothing.
 *
 * Build: nvcc -x cu -arch=sm_90 -O2 -Werror all-warnings -I. tests/gpu_fused_fwd.hip \
 *            -o gpu_fused_fwd -lcriterion -lm     (or: ninja build/gpu/bin/gpu_fused_fwd)
 * Run: ./gpu_fused_fwd  (--verbose to see skip reasons)
 */
#include "gpu_common.h"

#include "../gconv/fused_fwd.h"
#include "../gconv/reference.h"

/* ---- user ops: host/device arithmetic in one function so the host model matches ---------- */
static inline GCONV_HD float gt_fused_user_math(float acc, float alpha, int n, int k, int h, int w)
{
    float y = alpha * acc;
    y = y > 0.0f ? y : 0.125f * y;
    return y + 0.25f * (float)(n % 2) + 0.125f * (float)(k % 5) + 0.03125f * (float)(h % 3) -
           0.015625f * (float)(w % 4);
}

static __device__ float gt_fused_user_op(const gconv_epilogue *e, gconv_dtype t, float acc, int g,
                                         int n, int k, int d, int h, int w)
{
    (void)t, (void)g, (void)d;
    return gt_fused_user_math(acc, e->alpha, n, k, h, w);
}

/* hard-swish, the MobileNetV3 activation, between the convolutions */
static inline GCONV_HD float gt_fused_hswish(float v)
{
    float r = v + 3.0f;
    r = r < 0.0f ? 0.0f : r > 6.0f ? 6.0f : r;
    return v * r * (1.0f / 6.0f);
}

static __device__ float gt_fused_user_act(const gconv_epilogue *e, gconv_dtype t, float v, int g,
                                          int n, int k, int d, int h, int w)
{
    (void)e, (void)t, (void)g, (void)n, (void)k, (void)d, (void)h, (void)w;
    return gt_fused_hswish(v);
}

/* ---- instantiations ------------------------------------------------------------------------ */

GCONV_FUSED_FWD(ff_f16, GCONV_F16, GCONV_NHWGC, GCONV_GKYXC)
GCONV_FUSED_FWD(ff_bf16, GCONV_BF16, GCONV_NHWGC, GCONV_GKYXC)
GCONV_FUSED_FWD(ff_f32, GCONV_F32, GCONV_NHWGC, GCONV_GKYXC)
GCONV_FUSED_FWD(ff_f16_gnhwc, GCONV_F16, GCONV_GNHWC, GCONV_GKYXC)
GCONV_FUSED_FWD(ff_f32_ngchw, GCONV_F32, GCONV_NGCHW, GCONV_GKCYX)
GCONV_FUSED_FWD_USER_OP(ff_f16_user, GCONV_F16, GCONV_NHWGC, GCONV_GKYXC, gt_fused_user_op)
GCONV_FUSED_FWD_USER_ACT(ff_f32_act, GCONV_F32, GCONV_NHWGC, GCONV_GKYXC, gt_fused_user_act)
GCONV_FUSED_FWD_USER_ACT(ff_f16_act, GCONV_F16, GCONV_NHWGC, GCONV_GKYXC, gt_fused_user_act)
GCONV_FUSED_FWD_TILED(ff_f16_t64, GCONV_F16, GCONV_NHWGC, GCONV_GKYXC, GCONV_TILE_64x64x32)
GCONV_FUSED_FWD_TILED(ff_bf16_t16, GCONV_BF16, GCONV_NHWGC, GCONV_GKYXC, GCONV_FUSED_TILE_128x16)

typedef gconv_status (*gt_fused_fn)(const gconv_problem *, int, const gconv_fused_fwd_args *,
                                    hipStream_t);

/* the same operations with the row and tile kernels skipped (the band kernel wherever it
 * applies), and with the row kernel skipped (the tile kernel wherever it applies) */
static gconv_status ff_f16_band(const gconv_problem *p, int K1, const gconv_fused_fwd_args *a,
                                hipStream_t s)
{
    return ff_f16_from(p, K1, a, s, GCONV_IMPL_FUSED_FROM_BAND);
}

static gconv_status ff_bf16_band(const gconv_problem *p, int K1, const gconv_fused_fwd_args *a,
                                 hipStream_t s)
{
    return ff_bf16_from(p, K1, a, s, GCONV_IMPL_FUSED_FROM_BAND);
}

static gconv_status ff_f16_tile(const gconv_problem *p, int K1, const gconv_fused_fwd_args *a,
                                hipStream_t s)
{
    return ff_f16_from(p, K1, a, s, GCONV_IMPL_FUSED_FROM_TILE);
}

static gconv_status ff_bf16_tile(const gconv_problem *p, int K1, const gconv_fused_fwd_args *a,
                                 hipStream_t s)
{
    return ff_bf16_from(p, K1, a, s, GCONV_IMPL_FUSED_FROM_TILE);
}

enum { GT_UOP_NONE = 0, GT_UOP_EPI = 1, GT_UOP_ACT = 2 };

/* ---- one problem ---------------------------------------------------------------------------- */

typedef struct gt_fcase {
    gconv_problem p;
    int K1;
    gconv_act act0;
    int has_b0, has_b1;
    int num_d;      /* 0..2 */
    int d_kind[2];  /* 0: residual-shaped, 1: per-K1-channel */
    float alpha, beta[2];
    gconv_act act;  /* final activation */
    int misalign;   /* offset the pointers by one element (element-wise paths) */
} gt_fcase;

/* Host model of the reference with a user op: reference without epilogue then the op. */
static void gt_fused_apply_user(const gt_fcase *c, float *ref)
{
    int o[3], n, k, d, h, w;
    gconv_act_strides so = gconv_fused_fwd_out_strides(&c->p, c->K1);
    gconv_out_sizes(&c->p, o);
    for (n = 0; n < c->p.N; n++)
        for (k = 0; k < c->K1; k++)
            for (d = 0; d < o[0]; d++)
                for (h = 0; h < o[1]; h++)
                    for (w = 0; w < o[2]; w++) {
                        int64_t i = gconv_act_offset(&so, 0, n, k, d, h, w);
                        ref[i] = gt_fused_user_math(ref[i], c->alpha, n, k, h, w);
                    }
}

/* Reference with a user activation between the convs (hard-swish): computed directly in
 * double, the same composition as gconv_ref_fwd_fwd, no epilogue, no biases. */
static void gt_fused_ref_hswish(const gconv_problem *p, int K1, const float *in, const float *w0,
                                const float *w1, float *out)
{
    gconv_act_strides si = gconv_in_strides(p), so = gconv_fused_fwd_out_strides(p, K1);
    gconv_wei_strides sw = gconv_weight_strides(p);
    int o[3], n, d, h, w, g, k, c, z, y, x, k1;
    const int GK = p->G * p->K;
    double *mid = (double *)malloc(sizeof(double) * (size_t)GK);
    gconv_out_sizes(p, o);
    for (n = 0; n < p->N; n++)
        for (d = 0; d < o[0]; d++)
            for (h = 0; h < o[1]; h++)
                for (w = 0; w < o[2]; w++) {
                    for (g = 0; g < p->G; g++)
                        for (k = 0; k < p->K; k++) {
                            double v = 0.0;
                            for (z = 0; z < p->filter[0]; z++)
                                for (y = 0; y < p->filter[1]; y++)
                                    for (x = 0; x < p->filter[2]; x++) {
                                        int id = d * p->stride[0] - p->pad_lo[0] + z * p->dilation[0];
                                        int ih = h * p->stride[1] - p->pad_lo[1] + y * p->dilation[1];
                                        int iw = w * p->stride[2] - p->pad_lo[2] + x * p->dilation[2];
                                        if (id < 0 || id >= p->in[0] || ih < 0 || ih >= p->in[1] ||
                                            iw < 0 || iw >= p->in[2])
                                            continue;
                                        for (c = 0; c < p->C; c++)
                                            v += (double)in[gconv_act_offset(&si, g, n, c, id, ih, iw)] *
                                                 w0[gconv_wei_offset(&sw, g, k, c, z, y, x)];
                                    }
                            mid[g * p->K + k] = gt_fused_hswish((float)v);
                        }
                    for (k1 = 0; k1 < K1; k1++) {
                        double acc = 0.0;
                        for (g = 0; g < GK; g++)
                            acc += (double)w1[(int64_t)k1 * GK + g] * mid[g];
                        out[gconv_act_offset(&so, 0, n, k1, d, h, w)] = (float)acc;
                    }
                }
    free(mid);
}

/* Run case c through fn (type t) and compare every output element. Returns 1 if it passed. */
static int gt_fused_run(const gt_fcase *c, gconv_dtype t, gt_fused_fn fn, int uop, const char *tag)
{
    const gconv_problem *p = &c->p;
    const size_t es = gconv_dtype_size(t);
    const int GK = p->G * p->K, K1 = c->K1, mis = c->misalign ? 1 : 0;
    const int64_t n_in = gconv_in_elems(p), n_w0 = gconv_wei_elems(p);
    const int64_t n_w1 = (int64_t)K1 * GK, n_out = gconv_fused_fwd_out_elems(p, K1);
    gt_rng r = gt_rng_make((uint64_t)(p->G * 131 + K1 * 7 + p->in[2] * 3 + p->C + 17 * uop));
    void *h_in = gt_host_alloc((size_t)n_in * es), *h_w0 = gt_host_alloc((size_t)n_w0 * es);
    void *h_w1 = gt_host_alloc((size_t)n_w1 * es), *h_b0 = gt_host_alloc((size_t)GK * es);
    void *h_b1 = gt_host_alloc((size_t)K1 * es), *h_out = gt_host_alloc((size_t)n_out * es);
    void *h_d[2];
    void *d_in, *d_w0, *d_w1, *d_b0 = NULL, *d_b1 = NULL, *d_d[2] = {NULL, NULL};
    float *ref = (float *)gt_host_alloc((size_t)n_out * sizeof(float));
    gt_guarded out;
    gconv_epilogue e = gconv_epi_scale(c->alpha);
    gconv_fused_fwd_args a;
    gconv_status s;
    char why[256], pb[256], rep[512];
    int i, ok = 1;
    long long first = 0;
    size_t guard_bad;
    gt_cmp cmp;
    gt_tol tol;
    double u_mid, scale;
    int o[3];

    gt_fill(t, h_in, (size_t)n_in, &r, GT_INIT_DECIMAL);
    gt_fill(t, h_w0, (size_t)n_w0, &r, GT_INIT_DECIMAL);
    gt_fill(t, h_w1, (size_t)n_w1, &r, GT_INIT_DECIMAL);
    gt_fill(t, h_b0, (size_t)GK, &r, GT_INIT_DECIMAL);
    gt_fill(t, h_b1, (size_t)K1, &r, GT_INIT_DECIMAL);
    /* element-misaligned copies (offset one element) when asked */
    d_in = (unsigned char *)gt_dev_alloc((size_t)(n_in + 1) * es) + mis * es;
    d_w0 = gt_dev_upload(h_w0, (size_t)n_w0 * es);
    d_w1 = (unsigned char *)gt_dev_alloc((size_t)(n_w1 + 1) * es) + mis * es;
    GT_CHECK(hipMemcpy(d_in, h_in, (size_t)n_in * es, hipMemcpyHostToDevice));
    GT_CHECK(hipMemcpy(d_w1, h_w1, (size_t)n_w1 * es, hipMemcpyHostToDevice));
    if (c->has_b0)
        d_b0 = gt_dev_upload(h_b0, (size_t)GK * es);
    if (c->has_b1)
        d_b1 = gt_dev_upload(h_b1, (size_t)K1 * es);
    for (i = 0; i < c->num_d; i++) {
        const int64_t nd = c->d_kind[i] ? K1 : n_out;
        gconv_act_strides st = gconv_fused_fwd_out_strides(p, K1);
        h_d[i] = gt_host_alloc((size_t)nd * es);
        gt_fill(t, h_d[i], (size_t)nd, &r, GT_INIT_DECIMAL);
        d_d[i] = gt_dev_upload(h_d[i], (size_t)nd * es);
        if (c->d_kind[i]) {
            memset(&st, 0, sizeof st);
            st.c = 1;
        }
        gconv_epi_add_d(&e, d_d[i], st, c->beta[i]);
    }
    e.act = c->act;
    out = gt_guarded_alloc((size_t)(n_out + 1) * es);
    memset(&a, 0, sizeof a);
    a.in = d_in, a.w0 = d_w0, a.b0 = d_b0, a.act0 = c->act0, a.w1 = d_w1, a.b1 = d_b1;
    a.out = (unsigned char *)out.p + mis * es;
    a.epi = &e;
    a.why = why, a.why_len = sizeof why;
    if (uop == GT_UOP_ACT) {
        a.b0 = NULL, a.b1 = NULL, a.epi = NULL;
    }
    gt_problem_str(p, pb, sizeof pb);
    s = fn(p, K1, &a, 0);
    if (s != GCONV_OK) {
        cr_log_error("%s: %s K1 %d: launcher returned %s: %s", tag, pb, K1, gconv_status_name(s),
                     why);
        ok = 0;
        goto done;
    }
    GT_CHECK(hipDeviceSynchronize());
    gt_dev_download(h_out, a.out, (size_t)n_out * es);

    /* reference: D tensors on the host, same pointers shape */
    if (uop == GT_UOP_ACT) {
        float *fin = gt_to_f32(t, h_in, (size_t)n_in), *fw0 = gt_to_f32(t, h_w0, (size_t)n_w0);
        float *fw1 = gt_to_f32(t, h_w1, (size_t)n_w1);
        gt_fused_ref_hswish(p, K1, fin, fw0, fw1, ref);
        free(fin), free(fw0), free(fw1);
    } else {
        /* the reference reads D tensors in its output type (fp32) */
        gconv_epilogue he = e;
        float *fd[2] = {NULL, NULL};
        for (i = 0; i < c->num_d; i++) {
            fd[i] = gt_to_f32(t, h_d[i], (size_t)(c->d_kind[i] ? K1 : n_out));
            he.d[i].data = fd[i];
        }
        s = gconv_ref_fwd_fwd(p, K1, t, h_in, h_w0, c->has_b0 ? h_b0 : NULL, c->act0, h_w1,
                              c->has_b1 ? h_b1 : NULL, ref, GCONV_F32,
                              uop == GT_UOP_EPI ? NULL : &he);
        free(fd[0]), free(fd[1]);
        cr_assert(s == GCONV_OK, "reference failed: %s", gconv_status_name(s));
        if (uop == GT_UOP_EPI)
            gt_fused_apply_user(c, ref);
    }
    /* tolerance: fp32 accumulation of both stages, plus the rounding of the intermediate to
     * t (relative u_mid, random signs over G*K channels of typical size sqrt(C*taps)) */
    u_mid = t == GCONV_F16 ? ldexp(1.0, -11) : t == GCONV_BF16 ? ldexp(1.0, -8) : ldexp(1.0, -22);
    scale = 3.0 * sqrt((double)p->C * gconv_filter_taps(p) + 1.0) * (fabs(c->alpha) + 1.0);
    tol = gt_tolerance(t, GK + p->C * gconv_filter_taps(p), scale, 0);
    tol.atol += u_mid * sqrt((double)GK * ((double)p->C * gconv_filter_taps(p) + 1.0)) *
                (fabs(c->alpha) + 1.0);
    tol.rtol *= 2.0;
    gconv_out_sizes(p, o);
    cmp = gt_compare_act("out", t, h_out, ref, gconv_fused_fwd_out_strides(p, K1), 1, p->N, K1, o,
                         tol);
    if (cmp.bad) {
        cr_log_error("%s: %s K1 %d act0 %d b0 %d b1 %d nd %d: %s", tag, pb, K1, (int)c->act0.kind,
                     c->has_b0, c->has_b1, c->num_d, gt_compare_report(&cmp, rep, sizeof rep));
        ok = 0;
    }
    guard_bad = gt_guarded_check(&out, &first);
    /* with a misaligned output the first element of the allocation is a poisoned pad */
    if (guard_bad) {
        cr_log_error("%s: %s K1 %d: %zu guard bytes written (first at %lld)", tag, pb, K1,
                     guard_bad, first);
        ok = 0;
    }
done:
    gt_guarded_free(&out);
    gt_dev_free((unsigned char *)d_in - mis * es);
    gt_dev_free(d_w0);
    gt_dev_free((unsigned char *)d_w1 - mis * es);
    gt_dev_free(d_b0);
    gt_dev_free(d_b1);
    for (i = 0; i < c->num_d; i++) {
        gt_dev_free(d_d[i]);
        free(h_d[i]);
    }
    free(h_in), free(h_w0), free(h_w1), free(h_b0), free(h_b1), free(h_out), free(ref);
    return ok;
}

/* ---- random problems ------------------------------------------------------------------------ */

static int gt_pick(gt_rng *r, const int *v, int n)
{
    return v[gt_rng_int(r, 0, n - 1)];
}

/* A random case. family: the activation family of the instantiation (weights follow). Sizes
 * keep the CPU reference cheap: (G*K*C*taps + K1*G*K) * output pixels below ~2e6. */
static gt_fcase gt_fused_random(gt_rng *r, gconv_layout act_family, gconv_layout wei_family)
{
    static const int chans[] = {8, 16, 24, 32, 40, 48, 64, 96, 128, 144, 160, 192, 256, 384, 576, 960, 1024};
    static const int k1s[] = {1, 3, 8, 16, 17, 24, 32, 40, 64, 96, 100, 128, 160, 200, 256, 320, 512, 1000, 1024};
    gt_fcase c;
    int ndim = gt_rng_int(r, 0, 9) < 7 ? 2 : gt_rng_int(r, 0, 1) ? 1 : 3;
    int in[3], f[3], st[3], pd[3], dl[3], i, G, C, K;
    int64_t work, pix;
    memset(&c, 0, sizeof c);
    if (gt_rng_int(r, 0, 4) > 0) { /* depthwise */
        G = gt_pick(r, chans, (int)(sizeof chans / sizeof chans[0]));
        if (gt_rng_int(r, 0, 6) == 0)
            G = gt_rng_int(r, 1, 70); /* odd channel counts */
        C = 1;
        K = gt_rng_int(r, 0, 5) == 0 ? 2 : 1;
    } else {
        G = gt_rng_int(r, 1, 24);
        C = gt_rng_int(r, 1, 6);
        K = gt_rng_int(r, 1, 6);
    }
    c.K1 = gt_pick(r, k1s, (int)(sizeof k1s / sizeof k1s[0]));
    if (gt_rng_int(r, 0, 5) == 0)
        c.K1 = gt_rng_int(r, 1, 70);
    for (i = 0; i < ndim; i++) {
        const int fs[] = {1, 3, 3, 3, 5, 7, 2, 4};
        f[i] = ndim == 3 ? gt_pick(r, fs, 4) : gt_pick(r, fs, 8);
        st[i] = gt_rng_int(r, 0, 3) == 0 ? 2 : gt_rng_int(r, 0, 9) == 0 ? 3 : 1;
        dl[i] = gt_rng_int(r, 0, 5) == 0 ? gt_rng_int(r, 2, 3) : 1;
        pd[i] = gt_rng_int(r, 0, (f[i] - 1) * dl[i] / 2 + 1);
        in[i] = ndim == 3 ? gt_rng_int(r, 2, 7) : ndim == 2 ? gt_rng_int(r, 3, 14) : gt_rng_int(r, 4, 40);
        if (in[i] + 2 * pd[i] < (f[i] - 1) * dl[i] + 1)
            in[i] = (f[i] - 1) * dl[i] + 1;
    }
    gconv_problem_nd(&c.p, ndim, G, 1, C, K, in, f, st, pd, dl);
    for (i = 3 - ndim; i < 3; i++) {
        const int span = (c.p.filter[i] - 1) * c.p.dilation[i] + 1;
        if (gt_rng_int(r, 0, 2) == 0 && c.p.pad_hi[i] > 0)
            c.p.pad_hi[i] = gt_rng_int(r, 0, c.p.pad_hi[i] - 1); /* asymmetric */
        if (c.p.in[i] + c.p.pad_lo[i] + c.p.pad_hi[i] < span)
            c.p.in[i] = span - c.p.pad_lo[i] - c.p.pad_hi[i];
    }
    c.p.N = gt_rng_int(r, 1, 3);
    gconv_problem_set_layouts(&c.p, act_family, wei_family);
    /* shrink until the reference is cheap */
    for (;;) {
        pix = (int64_t)c.p.N * gconv_out_spatial(&c.p);
        work = ((int64_t)G * K * C * gconv_filter_taps(&c.p) + (int64_t)c.K1 * G * K) * pix;
        if (work <= 2000000 || pix <= 2)
            break;
        if (c.p.N > 1)
            c.p.N--;
        else {
            int ax = 2, best = 0;
            for (i = 0; i < 3; i++)
                if (gconv_out_len(&c.p, i) > best)
                    best = gconv_out_len(&c.p, i), ax = i;
            if (c.p.in[ax] <= 1 || gconv_out_len(&c.p, ax) <= 1)
                break;
            c.p.in[ax]--;
            if (gconv_out_len(&c.p, ax) < 1) {
                c.p.in[ax]++;
                break;
            }
        }
    }
    {
        const int k = gt_rng_int(r, 0, 3);
        c.act0 = k == 0 ? gconv_act_none() : k == 1 ? gconv_relu() : k == 2 ? gconv_relu6()
                                                                             : gconv_clamp(-0.5f, 0.75f);
    }
    c.has_b0 = gt_rng_int(r, 0, 1);
    c.has_b1 = gt_rng_int(r, 0, 1);
    c.num_d = gt_rng_int(r, 0, 2);
    for (i = 0; i < c.num_d; i++) {
        c.d_kind[i] = gt_rng_int(r, 0, 1);
        c.beta[i] = (float)gt_rng_int(r, -2, 2) * 0.5f;
    }
    c.alpha = gt_rng_int(r, 0, 2) == 0 ? 0.5f : 1.0f;
    c.act = gt_rng_int(r, 0, 3) == 0 ? gconv_relu() : gconv_act_none();
    return c;
}

static void gt_fused_sweep(gconv_dtype t, gt_fused_fn fn, gconv_layout act, gconv_layout wei,
                           int count, uint64_t seed, const char *tag)
{
    gt_rng r = gt_rng_make(seed);
    int i, bad = 0;
    gt_require_gpu();
    for (i = 0; i < count; i++) {
        gt_fcase c = gt_fused_random(&r, act, wei);
        if (!gt_fused_run(&c, t, fn, GT_UOP_NONE, tag))
            bad++;
    }
    cr_expect(bad == 0, "%s: %d of %d problems failed (see the log)", tag, bad, count);
}

Test(fused_fwd, sweep_f16, .timeout = 120)
{
    gt_fused_sweep(GCONV_F16, ff_f16, GCONV_NHWGC, GCONV_GKYXC, 320, 101, "sweep_f16");
}
Test(fused_fwd, sweep_bf16, .timeout = 120)
{
    gt_fused_sweep(GCONV_BF16, ff_bf16, GCONV_NHWGC, GCONV_GKYXC, 320, 202, "sweep_bf16");
}
Test(fused_fwd, sweep_f32, .timeout = 120)
{
    gt_fused_sweep(GCONV_F32, ff_f32, GCONV_NHWGC, GCONV_GKYXC, 320, 303, "sweep_f32");
}
Test(fused_fwd, layout_gnhwc_f16, .timeout = 120)
{
    gt_fused_sweep(GCONV_F16, ff_f16_gnhwc, GCONV_GNHWC, GCONV_GKYXC, 60, 404, "gnhwc_f16");
}
Test(fused_fwd, layout_ngchw_f32, .timeout = 120)
{
    gt_fused_sweep(GCONV_F32, ff_f32_ngchw, GCONV_NGCHW, GCONV_GKCYX, 60, 505, "ngchw_f32");
}
Test(fused_fwd, tiled_f16_64x64, .timeout = 120)
{
    gt_fused_sweep(GCONV_F16, ff_f16_t64, GCONV_NHWGC, GCONV_GKYXC, 60, 606, "tiled_64x64");
}
Test(fused_fwd, tiled_bf16_128x16, .timeout = 120)
{
    gt_fused_sweep(GCONV_BF16, ff_bf16_t16, GCONV_NHWGC, GCONV_GKYXC, 60, 707, "tiled_128x16");
}

/* element-misaligned pointers (in, w1, out offset by one element): element-wise paths */
Test(fused_fwd, misaligned_f16, .timeout = 120)
{
    gt_rng r = gt_rng_make(808);
    int i, bad = 0;
    gt_require_gpu();
    for (i = 0; i < 40; i++) {
        gt_fcase c = gt_fused_random(&r, GCONV_NHWGC, GCONV_GKYXC);
        c.misalign = 1;
        if (!gt_fused_run(&c, GCONV_F16, ff_f16, GT_UOP_NONE, "misaligned_f16"))
            bad++;
    }
    cr_expect(bad == 0, "%d problems failed", bad);
}

Test(fused_fwd, user_op_f16, .timeout = 120)
{
    gt_rng r = gt_rng_make(909);
    int i, bad = 0;
    gt_require_gpu();
    for (i = 0; i < 40; i++) {
        gt_fcase c = gt_fused_random(&r, GCONV_NHWGC, GCONV_GKYXC);
        if (!gt_fused_run(&c, GCONV_F16, ff_f16_user, GT_UOP_EPI, "user_op"))
            bad++;
    }
    cr_expect(bad == 0, "%d problems failed", bad);
}

Test(fused_fwd, user_act_f32, .timeout = 120)
{
    gt_rng r = gt_rng_make(1010);
    int i, bad = 0;
    gt_require_gpu();
    for (i = 0; i < 40; i++) {
        gt_fcase c = gt_fused_random(&r, GCONV_NHWGC, GCONV_GKYXC);
        if (!gt_fused_run(&c, GCONV_F32, ff_f32_act, GT_UOP_ACT, "user_act"))
            bad++;
    }
    cr_expect(bad == 0, "%d problems failed", bad);
}

/* A user act0 in fp16: the row, tile and band kernels' per-element act0 (the built-in one is
 * their inlined form), each pinned, on random problems and on shapes each of them takes (row
 * kernel stride 1 and 2, with columns past the output width in the last segment; tile kernel;
 * band kernel with a 5x5 filter). {G, H = W, filter, stride, K1, N} */
static gconv_status ff_f16_act_tile(const gconv_problem *p, int K1, const gconv_fused_fwd_args *a,
                                    hipStream_t s)
{
    return ff_f16_act_from(p, K1, a, s, GCONV_IMPL_FUSED_FROM_TILE);
}

static gconv_status ff_f16_act_band(const gconv_problem *p, int K1, const gconv_fused_fwd_args *a,
                                    hipStream_t s)
{
    return ff_f16_act_from(p, K1, a, s, GCONV_IMPL_FUSED_FROM_BAND);
}

Test(fused_fwd, user_act_f16, .timeout = 120)
{
    static const int sh[][6] = {{32, 41, 3, 1, 16, 2}, {144, 29, 3, 2, 32, 3},
                                {256, 12, 3, 1, 24, 2}, {576, 14, 3, 1, 96, 4},
                                {40, 33, 5, 1, 17, 2},  {960, 7, 3, 1, 160, 3}};
    gt_rng r = gt_rng_make(1111);
    int i, bad = 0;
    gt_require_gpu();
    for (i = 0; i < 20; i++) {
        gt_fcase c = gt_fused_random(&r, GCONV_NHWGC, GCONV_GKYXC);
        if (!gt_fused_run(&c, GCONV_F16, ff_f16_act, GT_UOP_ACT, "user_act_f16"))
            bad++;
    }
    for (i = 0; i < (int)(sizeof sh / sizeof sh[0]); i++) {
        gt_fcase c;
        const int pad = sh[i][2] / 2;
        memset(&c, 0, sizeof c);
        gconv_problem_2d(&c.p, sh[i][0], sh[i][5], 1, 1, sh[i][1], sh[i][1], sh[i][2], sh[i][2],
                         sh[i][3], sh[i][3], pad, pad, 1, 1);
        c.K1 = sh[i][4];
        if (!gt_fused_run(&c, GCONV_F16, ff_f16_act, GT_UOP_ACT, "user_act_f16_shape"))
            bad++;
        if (!gt_fused_run(&c, GCONV_F16, ff_f16_act_tile, GT_UOP_ACT, "user_act_f16_tile"))
            bad++;
        if (!gt_fused_run(&c, GCONV_F16, ff_f16_act_band, GT_UOP_ACT, "user_act_f16_band"))
            bad++;
    }
    cr_expect(bad == 0, "%d runs failed", bad);
}

/* MobileNetV2-like shapes (N = 2) with every tile the picker has */
Test(fused_fwd, mobilenet_shapes, .timeout = 120)
{
    static const int sh[][4] = {{32, 28, 1, 16}, {144, 14, 2, 24}, {192, 14, 1, 32},
                                {384, 7, 1, 64}, {576, 7, 1, 96}, {960, 4, 1, 160},
                                {960, 4, 1, 320}, {64, 9, 1, 1024}};
    int i, bad = 0;
    gt_require_gpu();
    for (i = 0; i < (int)(sizeof sh / sizeof sh[0]); i++) {
        gt_fcase c;
        memset(&c, 0, sizeof c);
        gconv_problem_2d(&c.p, sh[i][0], 2, 1, 1, sh[i][1], sh[i][1], 3, 3, sh[i][2], sh[i][2], 1,
                         1, 1, 1);
        c.K1 = sh[i][3];
        c.act0 = gconv_relu6();
        c.has_b0 = c.has_b1 = 1;
        c.alpha = 1.0f;
        c.num_d = 1, c.d_kind[0] = 0, c.beta[0] = 1.0f;
        if (!gt_fused_run(&c, GCONV_F16, ff_f16, GT_UOP_NONE, "mobilenet_f16"))
            bad++;
        if (!gt_fused_run(&c, GCONV_BF16, ff_bf16, GT_UOP_NONE, "mobilenet_bf16"))
            bad++;
    }
    cr_expect(bad == 0, "%d runs failed", bad);
}

/* Larger shapes for the band kernel (gconv/fused_band.h; fp16 / bf16 depthwise, NHWGC): several
 * bands and column segments per image, K1 tiles, 5x5 / 7x7 filters, dilation, G not a multiple
 * of the channel chunk, odd K1, a 1D problem, and MobileNet-sized batches whose plans have
 * multi-row bands. {G, H = W, filter, stride, dilation, K1, N} */
Test(fused_fwd, band_shapes, .timeout = 120)
{
    static const int sh[][7] = {{144, 56, 3, 1, 1, 24, 2}, {32, 112, 3, 1, 1, 16, 1},
                                {144, 56, 3, 2, 1, 32, 2}, {64, 56, 3, 1, 1, 200, 1},
                                {40, 33, 5, 2, 1, 17, 2},  {96, 30, 7, 1, 1, 64, 1},
                                {48, 29, 3, 1, 2, 40, 2},  {24, 45, 3, 3, 1, 8, 2},
                                {256, 20, 3, 1, 1, 600, 1}, {72, 0, 5, 1, 1, 33, 2},
                                /* batches large enough for bands of several rows (items >=
                                 * SMs): 4-row lanes with a short last strip, 2-row lanes,
                                 * 64-channel chunks, two stages (stride 2) */
                                {192, 30, 3, 1, 1, 32, 32}, {384, 14, 3, 1, 1, 64, 64},
                                {144, 28, 3, 2, 1, 32, 48}, {576, 13, 3, 1, 1, 96, 40}};
    int i, bad = 0;
    gt_require_gpu();
    for (i = 0; i < (int)(sizeof sh / sizeof sh[0]); i++) {
        gt_fcase c;
        const int pad = (sh[i][2] - 1) * sh[i][4] / 2;
        memset(&c, 0, sizeof c);
        if (sh[i][1] == 0)
            gconv_problem_1d(&c.p, sh[i][0], sh[i][6], 1, 1, 300, sh[i][2], sh[i][3], pad,
                             sh[i][4]);
        else
            gconv_problem_2d(&c.p, sh[i][0], sh[i][6], 1, 1, sh[i][1], sh[i][1], sh[i][2],
                             sh[i][2], sh[i][3], sh[i][3], pad, pad, sh[i][4], sh[i][4]);
        c.K1 = sh[i][5];
        c.act0 = i % 2 ? gconv_relu6() : gconv_clamp(-0.5f, 0.75f);
        c.has_b0 = i % 3 != 0;
        c.has_b1 = i % 2;
        c.alpha = i % 2 ? 1.0f : 0.5f;
        c.num_d = i % 3, c.d_kind[0] = 0, c.beta[0] = 1.0f, c.d_kind[1] = 1, c.beta[1] = -0.5f;
        if (!gt_fused_run(&c, GCONV_F16, ff_f16_band, GT_UOP_NONE, "band_f16"))
            bad++;
        if (!gt_fused_run(&c, GCONV_BF16, ff_bf16_band, GT_UOP_NONE, "band_bf16"))
            bad++;
        /* the same problem through the default search (the row kernel where it applies) */
        if (!gt_fused_run(&c, GCONV_F16, ff_f16, GT_UOP_NONE, "band_auto_f16"))
            bad++;
        if (!gt_fused_run(&c, GCONV_BF16, ff_bf16_tile, GT_UOP_NONE, "band_tile_bf16"))
            bad++;
    }
    cr_expect(bad == 0, "%d runs failed", bad);
}

/* Shapes for the row kernel (gconv/fused_rows.h; also run through the tile kernel,
 * gconv/fused_tile.h; 3x3, stride 1 / 2, fp16 / bf16 depthwise,
 * NHWGC): an odd number of channel vectors (the zero pad chunk of the k-steps), column
 * segments (G / 8 * column tiles > 256 threads), output widths that are not a multiple of the
 * columns per thread, K1 of several 32-channel groups and odd, asymmetric pads, tall and short
 * row chunks, bands of one output row, a problem just above the row kernel's shared memory
 * (band kernel), the MobileNetV2 blocks, the narrow form (two columns a thread: 256 channels at
 * 12x40, 192 at 28x28), and narrow G (8 to 64: blocks of few threads);
 * each also with a plain final epilogue. {G, H, W, stride, pad lo, pad hi, K1, N} */
Test(fused_fwd, rows_shapes, .timeout = 120)
{
    static const int sh[][8] = {{24, 17, 19, 1, 1, 1, 16, 3},   {40, 23, 9, 2, 1, 1, 33, 2},
                                {120, 15, 15, 1, 0, 2, 70, 2},  {256, 12, 40, 1, 1, 1, 24, 2},
                                {256, 11, 41, 2, 2, 0, 8, 1},   {8, 5, 130, 1, 1, 1, 1, 2},
                                {64, 1, 9, 1, 1, 1, 48, 3},     {32, 112, 112, 1, 1, 1, 16, 2},
                                {96, 112, 112, 2, 0, 1, 24, 1}, {144, 56, 56, 1, 1, 1, 24, 4},
                                {144, 56, 56, 2, 0, 1, 32, 4},  {192, 28, 28, 1, 1, 1, 32, 8},
                                {384, 14, 14, 1, 1, 1, 64, 16}, {16, 40, 40, 1, 1, 1, 200, 2},
                                {32, 41, 45, 2, 1, 1, 40, 2},   {16, 19, 70, 2, 0, 1, 8, 3},
                                {64, 20, 20, 1, 1, 1, 48, 2}};
    int i, bad = 0;
    gt_require_gpu();
    for (i = 0; i < (int)(sizeof sh / sizeof sh[0]); i++) {
        gt_fcase c;
        memset(&c, 0, sizeof c);
        gconv_problem_2d(&c.p, sh[i][0], sh[i][7], 1, 1, sh[i][1], sh[i][2], 3, 3, sh[i][3],
                         sh[i][3], sh[i][4], sh[i][4], 1, 1);
        c.p.pad_hi[1] = c.p.pad_hi[2] = sh[i][5];
        c.K1 = sh[i][6];
        {
            /* the narrow form (two columns a thread) is planned exactly for 256 channels at
             * 12x40 and 192 at 28x28 (shared memory alone decides: any device); stand-in
             * 16-byte aligned addresses, the plan reads none */
            gconv_fused_fwd_args fa;
            gconv_impl_fr_params F;
            const int narrow = sh[i][3] == 1 && (sh[i][0] == 256 || sh[i][0] == 192);
            memset(&fa, 0, sizeof fa);
            fa.in = (const void *)(uintptr_t)0x1000, fa.w1 = (const void *)(uintptr_t)0x2000;
            fa.out = (void *)(uintptr_t)0x3000;
            if (gconv_impl_fr_plan(&c.p, c.K1, &fa, GCONV_F16, gconv_device_sm_count(), &F))
                cr_expect((F.SH == 1 && F.TW == 2) == narrow, "G %d %dx%d s%d: TW %d",
                          sh[i][0], sh[i][1], sh[i][2], sh[i][3], F.TW);
            else
                cr_expect(!narrow, "G %d %dx%d: no row plan", sh[i][0], sh[i][1], sh[i][2]);
        }
        c.act0 = i % 3 == 0 ? gconv_relu6() : i % 3 == 1 ? gconv_clamp(-0.5f, 0.75f) : gconv_act_none();
        c.has_b0 = i % 4 != 0;
        c.has_b1 = i % 2;
        c.alpha = i % 2 ? 1.0f : 0.5f;
        c.num_d = i % 3, c.d_kind[0] = 0, c.beta[0] = 1.0f, c.d_kind[1] = 1, c.beta[1] = -0.5f;
        if (!gt_fused_run(&c, GCONV_F16, ff_f16, GT_UOP_NONE, "rows_f16"))
            bad++;
        if (!gt_fused_run(&c, GCONV_BF16, ff_bf16, GT_UOP_NONE, "rows_bf16"))
            bad++;
        /* the tile kernel on the same problems */
        if (!gt_fused_run(&c, GCONV_F16, ff_f16_tile, GT_UOP_NONE, "tile_f16"))
            bad++;
        /* a plain final epilogue (alpha 1, no D, no activation): the row kernel's own store
         * form for even K1, the general one for odd K1 */
        c.alpha = 1.0f, c.num_d = 0, c.act = gconv_act_none();
        if (!gt_fused_run(&c, i % 2 ? GCONV_BF16 : GCONV_F16, i % 2 ? ff_bf16 : ff_f16,
                          GT_UOP_NONE, "rows_plain"))
            bad++;
    }
    cr_expect(bad == 0, "%d runs failed", bad);
}

/* Shapes for the tile kernel (gconv/fused_tile.h): the deep MobileNet blocks (K1 of 10 n-pairs,
 * items of a few 14- or 7-wide rows), an odd number of channel vectors with K1 not a multiple
 * of 16, K1 above one tile (several K1 tiles, each recomputing stage 1), asymmetric pads, the
 * general form (column dilation, stride 3), anisotropic stride and dilation, 128 output columns
 * with two channel vectors (planes of a chunk), tall items with the 4-column form; each also
 * with a plain final epilogue.
 * {G, H, W, stride h, stride w, pad lo, pad hi, dilation h, dilation w, K1, N} */
static void gt_tile_shapes(void)
{
    static const int sh[][11] = {
        {960, 7, 7, 1, 1, 1, 1, 1, 1, 160, 40},  {576, 14, 14, 1, 1, 1, 1, 1, 1, 96, 20},
        {968, 7, 9, 1, 1, 1, 1, 1, 1, 170, 36},  {256, 9, 11, 2, 2, 1, 0, 1, 1, 40, 60},
        {200, 10, 10, 1, 1, 2, 2, 2, 2, 24, 3},  {512, 6, 100, 1, 1, 1, 1, 1, 1, 520, 2},
        {64, 20, 20, 3, 3, 1, 1, 1, 1, 48, 2},   {16, 4, 128, 1, 1, 1, 1, 1, 1, 32, 2},
        {384, 14, 14, 1, 1, 1, 1, 1, 1, 64, 30}, {96, 12, 13, 2, 1, 1, 1, 1, 1, 40, 24},
        {64, 11, 11, 1, 1, 2, 1, 2, 1, 24, 30},  {144, 15, 15, 1, 1, 0, 2, 1, 1, 72, 50}};
    int i, bad = 0;
    gt_require_gpu();
    for (i = 0; i < (int)(sizeof sh / sizeof sh[0]); i++) {
        gt_fcase c;
        memset(&c, 0, sizeof c);
        gconv_problem_2d(&c.p, sh[i][0], sh[i][10], 1, 1, sh[i][1], sh[i][2], 3, 3, sh[i][3],
                         sh[i][4], sh[i][5], sh[i][5], sh[i][7], sh[i][8]);
        c.p.pad_hi[1] = c.p.pad_hi[2] = sh[i][6];
        c.K1 = sh[i][9];
        c.act0 = i % 3 == 0 ? gconv_relu6() : i % 3 == 1 ? gconv_clamp(-0.5f, 0.75f) : gconv_act_none();
        c.has_b0 = i % 4 != 1;
        c.has_b1 = i % 2 == 0;
        c.alpha = i % 2 ? 1.0f : 0.5f;
        c.num_d = i % 3, c.d_kind[0] = 0, c.beta[0] = 1.0f, c.d_kind[1] = 1, c.beta[1] = -0.5f;
        if (!gt_fused_run(&c, GCONV_F16, ff_f16_tile, GT_UOP_NONE, "tile_f16"))
            bad++;
        if (!gt_fused_run(&c, GCONV_BF16, ff_bf16_tile, GT_UOP_NONE, "tile_bf16"))
            bad++;
        if (!gt_fused_run(&c, GCONV_F16, ff_f16, GT_UOP_NONE, "tile_auto_f16"))
            bad++;
        /* a plain final epilogue: 16-byte stores where K1 is a multiple of 8 */
        c.alpha = 1.0f, c.num_d = 0, c.act = gconv_act_none();
        if (!gt_fused_run(&c, i % 2 ? GCONV_BF16 : GCONV_F16, i % 2 ? ff_bf16_tile : ff_f16_tile,
                          GT_UOP_NONE, "tile_plain"))
            bad++;
    }
    cr_expect(bad == 0, "%d runs failed", bad);
}

/* The tile_shapes problems, and a check that the plans take the copy engine's w1 ring where
 * it can run (a CUDA 12.5+ runtime with the driver's encoder, an sm_90 device), so that a
 * fallback to the copy warps' cp.async cannot pass for it: the deep MobileNet blocks and K1
 * above one tile */
Test(fused_fwd, tile_shapes, .timeout = 120)
{
#if GCONV_IMPL_WS_HOST
    static const int sh[3][5] = {{960, 7, 7, 160, 40}, {576, 14, 14, 96, 20},
                                 {512, 6, 100, 520, 2}};
    hipDeviceProp_t prop;
    void *buf = NULL;
    int i;
    gt_require_gpu();
    /* the map encoder wants a real device address for w1: one buffer stands in for every
     * tensor (only the plan is made here) */
    if (hipGetDeviceProperties(&prop, 0) == hipSuccess && prop.major >= 9 &&
        hipMalloc(&buf, (size_t)1 << 20) == hipSuccess)
        for (i = 0; i < 3; i++) {
            gconv_problem p;
            gconv_fused_fwd_args a;
            gconv_impl_ft_params F;
            gconv_problem_2d(&p, sh[i][0], sh[i][4], 1, 1, sh[i][1], sh[i][2], 3, 3, 1, 1, 1, 1,
                             1, 1);
            memset(&a, 0, sizeof a);
            a.in = a.w0 = a.w1 = buf, a.out = buf;
            cr_expect(gconv_impl_ft_plan(&p, sh[i][3], &a, GCONV_F16, gconv_device_sm_count(),
                                         &F),
                      "problem %d: no tile plan", i);
            gconv_impl_ft_w1_setup(&F, GCONV_F16);
            cr_expect(F.twm, "problem %d: the w1 ring did not take the copy engine", i);
        }
    if (buf)
        (void)hipFree(buf);
#endif
    gt_tile_shapes();
}

/* The same with the w1 ring on the copy warps' cp.async (gconv_impl_ft_no_w1tma), the form
 * the plans take where the copy engine's map cannot be made (tile_shapes takes the copy
 * engine's swizzled ring on sm_90a builds, and the copy warps' cp.async into the same swizzled
 * rows on other builds) */
Test(fused_fwd, tile_shapes_cpasync, .timeout = 120)
{
    gconv_impl_ft_no_w1tma = 1;
    gt_tile_shapes();
    gconv_impl_ft_no_w1tma = 0;
}

/* ---- no workspace ---------------------------------------------------------------------------
 * 1. The argument struct has no workspace field: its size is exactly that of in, w0, b0, act0,
 *    w1, b1, out, epi, why, why_len.
 * 2. A launch is exactly one kernel and nothing else: captured into a graph (after warm-up
 *    launches have set the kernels' attributes), each call yields one kernel node and no
 *    memset, memcpy or memory-allocation node; over the default tile choices, K1 above one tile
 *    (recompute), the pipelined, vector and element-wise stage 1.
 * 3. Free device memory is unchanged over many launches. Free memory is device-wide and other
 *    test processes (criterion -j) allocate at the same time, so this check retries and only
 *    warns when it never sees a quiet window; run the test alone for the strict check. */
#if defined(GCONV_PLATFORM_CUDA)
#define gt_graph_nodes cudaGraphGetNodes
#define gt_node_type cudaGraphNodeGetType
typedef cudaGraphNode_t gt_graph_node;
typedef cudaGraphNodeType gt_graph_node_type;
#define GT_NODE_KERNEL cudaGraphNodeTypeKernel
#else
#define gt_graph_nodes hipGraphGetNodes
#define gt_node_type hipGraphNodeGetType
typedef hipGraphNode_t gt_graph_node;
typedef hipGraphNodeType gt_graph_node_type;
#define GT_NODE_KERNEL hipGraphNodeTypeKernel
#endif

Test(fused_fwd, no_workspace, .timeout = 60)
{
    static const int k1s[] = {16, 24, 64, 160, 300, 1024};
    gconv_problem p[3];
    gconv_fused_fwd_args a;
    size_t free0 = 0, free1 = 0, total = 0;
    void *x, *w0, *w1, *y;
    hipStream_t st;
    int i, j, quiet = 0, tries;
    gt_require_gpu();
    /* in, w0, b0, act0 (padded to a pointer), w1, b1, out, epi, why, why_len: nothing else */
    cr_assert(sizeof(gconv_fused_fwd_args) ==
                  sizeof(void *) * 8 + sizeof(size_t) +
                      (sizeof(gconv_act) + sizeof(void *) - 1) / sizeof(void *) * sizeof(void *),
              "gconv_fused_fwd_args has fields beyond in, w0, b0, act0, w1, b1, out, epi, why, "
              "why_len");
    gconv_problem_2d(&p[0], 384, 8, 1, 1, 28, 28, 3, 3, 1, 1, 1, 1, 1, 1); /* pipelined */
    gconv_problem_2d(&p[1], 384, 8, 1, 1, 28, 28, 5, 5, 2, 2, 2, 2, 1, 1); /* vector, 25 taps */
    gconv_problem_2d(&p[2], 96, 8, 2, 4, 28, 28, 3, 3, 1, 1, 1, 1, 1, 1);  /* element-wise */
    x = gt_dev_alloc((size_t)8 * 28 * 28 * 384 * 2);
    w0 = gt_dev_alloc((size_t)384 * 25 * 2);
    w1 = gt_dev_alloc((size_t)384 * 1024 * 2);
    y = gt_dev_alloc((size_t)gconv_fused_fwd_out_elems(&p[0], 1024) * 2);
    GT_CHECK(hipMemset(x, 0, (size_t)8 * 28 * 28 * 384 * 2));
    GT_CHECK(hipMemset(w0, 0, (size_t)384 * 25 * 2));
    GT_CHECK(hipMemset(w1, 0, (size_t)384 * 1024 * 2));
    GT_CHECK(hipStreamCreate(&st));
    memset(&a, 0, sizeof a);
    a.in = x, a.w0 = w0, a.w1 = w1, a.out = y;
    /* warm up every kernel the calls below use (first launches set function attributes) */
    for (i = 0; i < 3; i++)
        for (j = 0; j < 6; j++)
            cr_assert(ff_f16(&p[i], k1s[j], &a, st) == GCONV_OK);
    GT_CHECK(hipStreamSynchronize(st));
    for (i = 0; i < 3; i++)
        for (j = 0; j < 6; j++) {
            hipGraph_t g = NULL;
            gt_graph_node nodes[4];
            size_t n = 4;
            gt_graph_node_type ty;
            gconv_status s;
            GT_CHECK(hipStreamBeginCapture(st, hipStreamCaptureModeRelaxed));
            s = ff_f16(&p[i], k1s[j], &a, st);
            GT_CHECK(hipStreamEndCapture(st, &g));
            cr_expect(s == GCONV_OK, "problem %d K1 %d: %s", i, k1s[j], gconv_status_name(s));
            GT_CHECK(gt_graph_nodes(g, nodes, &n));
            cr_expect(n == 1, "problem %d K1 %d: the launch captured %zu graph nodes, want 1", i,
                      k1s[j], n);
            if (n >= 1) {
                GT_CHECK(gt_node_type(nodes[0], &ty));
                cr_expect(ty == GT_NODE_KERNEL, "problem %d K1 %d: the node is not a kernel", i,
                          k1s[j]);
            }
            GT_CHECK(hipGraphDestroy(g));
        }
    for (tries = 0; tries < 10 && !quiet; tries++) {
        GT_CHECK(hipDeviceSynchronize());
        GT_CHECK(hipMemGetInfo(&free0, &total));
        for (i = 0; i < 30; i++)
            cr_assert(ff_f16(&p[i % 3], k1s[i % 6], &a, st) == GCONV_OK);
        GT_CHECK(hipDeviceSynchronize());
        GT_CHECK(hipMemGetInfo(&free1, &total));
        quiet = free1 == free0;
    }
    if (!quiet)
        /* an info line, not a warning: Criterion exits 1 when a test logs a warning */
        cr_log_info("free device memory changed around the launches in 10 tries (%zu -> %zu); "
                    "other processes allocate too: run this test alone for the strict check",
                    free0, free1);
    GT_CHECK(hipStreamDestroy(st));
    gt_dev_free(x), gt_dev_free(w0), gt_dev_free(w1), gt_dev_free(y);
}

/* ---- refusals -------------------------------------------------------------------------------- */

/* A valid problem and args whose pointers are poison-filled device buffers; a refusal must
 * return its status and write nothing (the output stays poisoned). */
typedef struct gt_rfx {
    gconv_problem p;
    gconv_fused_fwd_args a;
    void *x, *w0, *w1, *y;
    size_t ybytes;
    char why[256];
} gt_rfx;

static void gt_rfx_make(gt_rfx *f)
{
    memset(f, 0, sizeof *f);
    gconv_problem_2d(&f->p, 32, 2, 1, 1, 8, 8, 3, 3, 1, 1, 1, 1, 1, 1);
    f->x = gt_dev_alloc(4096 * 4);
    f->w0 = gt_dev_alloc(4096 * 4);
    f->w1 = gt_dev_alloc(4096 * 4);
    f->ybytes = 4096 * 4;
    f->y = gt_dev_alloc(f->ybytes);
    GT_CHECK(hipMemset(f->y, 0xFF, f->ybytes));
    f->a.in = f->x, f->a.w0 = f->w0, f->a.w1 = f->w1, f->a.out = f->y;
    f->a.why = f->why, f->a.why_len = sizeof f->why;
}

static void gt_rfx_done(gt_rfx *f)
{
    unsigned char *h = (unsigned char *)gt_host_alloc(f->ybytes);
    size_t i;
    GT_CHECK(hipDeviceSynchronize());
    gt_dev_download(h, f->y, f->ybytes);
    for (i = 0; i < f->ybytes; i++)
        if (h[i] != 0xFF)
            break;
    cr_expect(i == f->ybytes, "a refused call wrote the output (byte %zu)", i);
    free(h);
    gt_dev_free(f->x), gt_dev_free(f->w0), gt_dev_free(f->w1), gt_dev_free(f->y);
}

#define GT_EXPECT_STATUS(call, want)                                                             \
    do {                                                                                         \
        gconv_status s_ = (call);                                                                \
        cr_expect(s_ == (want), "%s returned %s, want %s (%s)", #call, gconv_status_name(s_),    \
                  gconv_status_name(want), f.why);                                               \
        if (s_ != GCONV_OK)                                                                      \
            cr_expect(f.why[0] != '\0', "%s: no reason given", #call);                           \
    } while (0)

Test(fused_fwd, refuse_args, .timeout = 30)
{
    gt_rfx f;
    gconv_fused_fwd_args b;
    gconv_epilogue e;
    gt_require_gpu();
    gt_rfx_make(&f);
    cr_expect(ff_f16(&f.p, 16, NULL, 0) == GCONV_ERR_NULL);
    GT_EXPECT_STATUS(ff_f16(&f.p, 16, &f.a, 0), GCONV_OK);
    GT_CHECK(hipDeviceSynchronize());
    GT_CHECK(hipMemset(f.y, 0xFF, f.ybytes));
    GT_EXPECT_STATUS(ff_f16(&f.p, 0, &f.a, 0), GCONV_ERR_SIZE);
    GT_EXPECT_STATUS(ff_f16(&f.p, -3, &f.a, 0), GCONV_ERR_SIZE);
    {
        gconv_problem q = f.p;
        q.N = 1 << 30; /* N * K1 * output pixels over 2^62 */
        GT_EXPECT_STATUS(ff_f16(&q, 0x7fffffff, &f.a, 0), GCONV_ERR_OVERFLOW);
    }
    b = f.a, b.in = NULL;
    GT_EXPECT_STATUS(ff_f16(&f.p, 16, &b, 0), GCONV_ERR_NULL);
    b = f.a, b.w0 = NULL;
    GT_EXPECT_STATUS(ff_f16(&f.p, 16, &b, 0), GCONV_ERR_NULL);
    b = f.a, b.w1 = NULL;
    GT_EXPECT_STATUS(ff_f16(&f.p, 16, &b, 0), GCONV_ERR_NULL);
    b = f.a, b.out = NULL;
    GT_EXPECT_STATUS(ff_f16(&f.p, 16, &b, 0), GCONV_ERR_NULL);
    b = f.a, b.w1 = (const unsigned char *)f.w1 + 1;
    GT_EXPECT_STATUS(ff_f16(&f.p, 16, &b, 0), GCONV_ERR_ALIGNMENT);
    b = f.a, b.b0 = (const unsigned char *)f.w0 + 1;
    GT_EXPECT_STATUS(ff_f16(&f.p, 16, &b, 0), GCONV_ERR_ALIGNMENT);
    b = f.a, b.out = (unsigned char *)f.y + 2;
    GT_EXPECT_STATUS(ff_f32(&f.p, 16, &b, 0), GCONV_ERR_ALIGNMENT);
    b = f.a, b.act0 = gconv_clamp(1.0f, -1.0f);
    GT_EXPECT_STATUS(ff_f16(&f.p, 16, &b, 0), GCONV_ERR_ARGUMENT);
    b = f.a, b.act0.kind = (gconv_act_kind)7;
    GT_EXPECT_STATUS(ff_f16(&f.p, 16, &b, 0), GCONV_ERR_ARGUMENT);
    e = gconv_epi_scale(1.0f);
    e.num_d = 1; /* null D */
    b = f.a, b.epi = &e;
    GT_EXPECT_STATUS(ff_f16(&f.p, 16, &b, 0), GCONV_ERR_NULL);
    e.num_d = 5;
    GT_EXPECT_STATUS(ff_f16(&f.p, 16, &b, 0), GCONV_ERR_ARGUMENT);
    e = gconv_epi_scale(1.0f);
    gconv_epi_add_d(&e, (const unsigned char *)f.x + 1, gconv_fused_fwd_out_strides(&f.p, 16), 1.0f);
    GT_EXPECT_STATUS(ff_f16(&f.p, 16, &b, 0), GCONV_ERR_ALIGNMENT);
    gt_rfx_done(&f);
}

Test(fused_fwd, refuse_problem_layout, .timeout = 30)
{
    gt_rfx f;
    gconv_problem q;
    char why[256];
    gt_require_gpu();
    gt_rfx_make(&f);
    q = f.p, q.G = 0;
    GT_EXPECT_STATUS(ff_f16(&q, 16, &f.a, 0), GCONV_ERR_SIZE);
    q = f.p, q.ndim = 4;
    GT_EXPECT_STATUS(ff_f16(&q, 16, &f.a, 0), GCONV_ERR_NDIM);
    q = f.p, q.stride[1] = 0;
    GT_EXPECT_STATUS(ff_f16(&q, 16, &f.a, 0), GCONV_ERR_STRIDE);
    q = f.p, q.dilation[2] = 0;
    GT_EXPECT_STATUS(ff_f16(&q, 16, &f.a, 0), GCONV_ERR_DILATION);
    q = f.p, q.pad_lo[1] = -1;
    GT_EXPECT_STATUS(ff_f16(&q, 16, &f.a, 0), GCONV_ERR_PAD);
    q = f.p, q.filter[1] = 20;
    GT_EXPECT_STATUS(ff_f16(&q, 16, &f.a, 0), GCONV_ERR_EMPTY_OUTPUT);
    q = f.p;
    gconv_problem_set_layouts(&q, GCONV_GNHWC, GCONV_GKYXC);
    GT_EXPECT_STATUS(ff_f16(&q, 16, &f.a, 0), GCONV_ERR_LAYOUT);
    q = f.p;
    gconv_problem_set_layouts(&q, GCONV_NHWGC, GCONV_GKCYX);
    GT_EXPECT_STATUS(ff_f16(&q, 16, &f.a, 0), GCONV_ERR_LAYOUT);
    q = f.p, q.out_layout = GCONV_NGCHW;
    GT_EXPECT_STATUS(ff_f16(&q, 16, &f.a, 0), GCONV_ERR_LAYOUT);
    cr_expect(ff_f16_supports(&f.p, 16, why, sizeof why) == 1);
    cr_expect(ff_f16_supports(&f.p, 0, why, sizeof why) == 0);
    cr_expect(why[0] != '\0');
    cr_expect(ff_f16_gnhwc_supports(&f.p, 16, why, sizeof why) == 0);
    cr_expect(ff_f16_t64_supports(&f.p, 16, why, sizeof why) == 1);
    gt_rfx_done(&f);
}
