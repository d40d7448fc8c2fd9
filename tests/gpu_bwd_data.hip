/* tests/gpu_bwd_data.hip: backward data (gconv/bwd_data.h) against the CPU reference.
 *
 * One Criterion suite, "bwd_data". Every test skips with the reason when there is no GPU and
 * has a timeout. What is tested:
 *   - sweep_*: seeded random problems (1D/2D/3D, every layout family and both weight families,
 *     G = 1 / few / depthwise / few channels, C and K per group 1..70, strides and dilations
 *     1..3, asymmetric pads, odd sizes, inputs no output reaches), 100 per instantiation and
 *     400 per data type, with a random epilogue (0..4 D tensors, broadcast Ds) on about half of
 *     them; every d_in element compared, guard zones checked;
 *   - epi_*: each built-in epilogue (overwrite, scale, add one D, add two Ds, scale + add,
 *     clamp, bias, 4 D tensors with broadcasts) and the user op, on fixed problems that take
 *     every kernel (depthwise vector kernel, generic, phase GEMM vector and element-wise);
 *   - tiled: the pinned-tile instantiation on random problems;
 *   - huge_*: d_in over 2 GB and 2^31 elements (depthwise kernel, phase GEMM), a sample of
 *     d_in checked exactly, every element checked written;
 *   - refuse_*: refusals with their exact status, nothing launched.
 * The output is poisoned (NaN bytes) before every run.
 *
 * Build: nvcc -x cu -arch=sm_90 -O2 -Werror all-warnings -I. tests/gpu_bwd_data.hip \
 *            -o gpu_bwd_data -lcriterion -lm        (ninja build/gpu/bin/gpu_bwd_data)
 * Run: ./gpu_bwd_data  (--verbose for the logs)
 */
#include "gpu_common.h"

#include "../gconv/bwd_data.h"
#include "../gconv/reference.h"

/* ---- the user op: leaky clip of alpha*acc + beta0*D0 plus a term of the logical index, so a
 * kernel passing wrong (g, n, c, d, h, w) is caught */
static inline GCONV_HD float gt_user_math(float acc, float alpha, float beta0, float d0, int g,
                                          int n, int c, int d, int h, int w)
{
    float y = alpha * acc + beta0 * d0;
    y = y > 0.0f ? y : 0.125f * y;
    return y + 0.5f * (float)(g % 3) + 0.25f * (float)(n % 2) + 0.125f * (float)(c % 5) +
           0.0625f * (float)(d % 2) + 0.03125f * (float)(h % 3) - 0.015625f * (float)(w % 4);
}

static __device__ float gt_user_op(const gconv_epilogue *e, gconv_dtype t, float acc, int g, int n,
                                   int c, int d, int h, int w)
{
    float d0 = e->num_d > 0 ? gconv_impl_dev_load(t, e->d[0].data,
                                                  gconv_act_offset(&e->d[0].strides, g, n, c, d,
                                                                   h, w))
                            : 0.0f;
    return gt_user_math(acc, e->alpha, e->beta[0], d0, g, n, c, d, h, w);
}

/* ---- instantiations ------------------------------------------------------------------------ */

GCONV_BWD_DATA(bd_f32_nhwgc, GCONV_F32, GCONV_NHWGC, GCONV_GKYXC)
GCONV_BWD_DATA(bd_f32_gnhwc, GCONV_F32, GCONV_GNHWC, GCONV_GKCYX)
GCONV_BWD_DATA(bd_f32_ngchw, GCONV_F32, GCONV_NGCHW, GCONV_GKCYX)
GCONV_BWD_DATA(bd_f32_ngchw_kyxc, GCONV_F32, GCONV_NGCHW, GCONV_GKYXC)
GCONV_BWD_DATA(bd_f16_nhwgc, GCONV_F16, GCONV_NHWGC, GCONV_GKYXC)
GCONV_BWD_DATA(bd_f16_gnhwc, GCONV_F16, GCONV_GNHWC, GCONV_GKYXC)
GCONV_BWD_DATA(bd_f16_ngchw, GCONV_F16, GCONV_NGCHW, GCONV_GKCYX)
GCONV_BWD_DATA(bd_f16_nhwgc_kcyx, GCONV_F16, GCONV_NHWGC, GCONV_GKCYX)
GCONV_BWD_DATA(bd_bf16_nhwgc, GCONV_BF16, GCONV_NHWGC, GCONV_GKYXC)
GCONV_BWD_DATA(bd_bf16_gnhwc, GCONV_BF16, GCONV_GNHWC, GCONV_GKYXC)
GCONV_BWD_DATA(bd_bf16_ngchw, GCONV_BF16, GCONV_NGCHW, GCONV_GKCYX)
GCONV_BWD_DATA(bd_bf16_gnhwc_kcyx, GCONV_BF16, GCONV_GNHWC, GCONV_GKCYX)

GCONV_BWD_DATA_USER_OP(bd_f16_user, GCONV_F16, GCONV_NHWGC, GCONV_GKYXC, gt_user_op)
GCONV_BWD_DATA_USER_OP(bd_f32_user_ngchw, GCONV_F32, GCONV_NGCHW, GCONV_GKCYX, gt_user_op)

GCONV_BWD_DATA_TILED(bd_f16_t128x64, GCONV_F16, GCONV_NHWGC, GCONV_GKYXC, GCONV_TILE_128x64x32)

typedef struct gt_impl {
    const char *name;
    gconv_dtype t;
    gconv_layout act, wei;
    int user_op, may_refuse;
    int (*supports)(const gconv_problem *, char *, size_t);
    size_t (*workspace_size)(const gconv_problem *);
    gconv_status (*run)(const gconv_problem *, const gconv_bwd_data_args *, hipStream_t);
} gt_impl;

#define GT_IMPL(name, t, act, wei, user, refuse)                                                 \
    {#name, t, act, wei, user, refuse, name##_supports, name##_workspace_size, name}

static const gt_impl gt_impls[3][4] = {
    {GT_IMPL(bd_f32_nhwgc, GCONV_F32, GCONV_NHWGC, GCONV_GKYXC, 0, 0),
     GT_IMPL(bd_f32_gnhwc, GCONV_F32, GCONV_GNHWC, GCONV_GKCYX, 0, 0),
     GT_IMPL(bd_f32_ngchw, GCONV_F32, GCONV_NGCHW, GCONV_GKCYX, 0, 0),
     GT_IMPL(bd_f32_ngchw_kyxc, GCONV_F32, GCONV_NGCHW, GCONV_GKYXC, 0, 0)},
    {GT_IMPL(bd_f16_nhwgc, GCONV_F16, GCONV_NHWGC, GCONV_GKYXC, 0, 0),
     GT_IMPL(bd_f16_gnhwc, GCONV_F16, GCONV_GNHWC, GCONV_GKYXC, 0, 0),
     GT_IMPL(bd_f16_ngchw, GCONV_F16, GCONV_NGCHW, GCONV_GKCYX, 0, 0),
     GT_IMPL(bd_f16_nhwgc_kcyx, GCONV_F16, GCONV_NHWGC, GCONV_GKCYX, 0, 0)},
    {GT_IMPL(bd_bf16_nhwgc, GCONV_BF16, GCONV_NHWGC, GCONV_GKYXC, 0, 0),
     GT_IMPL(bd_bf16_gnhwc, GCONV_BF16, GCONV_GNHWC, GCONV_GKYXC, 0, 0),
     GT_IMPL(bd_bf16_ngchw, GCONV_BF16, GCONV_NGCHW, GCONV_GKCYX, 0, 0),
     GT_IMPL(bd_bf16_gnhwc_kcyx, GCONV_BF16, GCONV_GNHWC, GCONV_GKCYX, 0, 0)},
};
static const gt_impl gt_user_f16 = GT_IMPL(bd_f16_user, GCONV_F16, GCONV_NHWGC, GCONV_GKYXC, 1, 0);
static const gt_impl gt_user_f32 =
    GT_IMPL(bd_f32_user_ngchw, GCONV_F32, GCONV_NGCHW, GCONV_GKCYX, 1, 0);
static const gt_impl gt_tiled = GT_IMPL(bd_f16_t128x64, GCONV_F16, GCONV_NHWGC, GCONV_GKYXC, 0, 1);

enum { GT_T_F32 = 0, GT_T_F16 = 1, GT_T_BF16 = 2 };

/* ---- epilogues ------------------------------------------------------------------------------ */

enum {
    GT_EPI_NONE = 0,  /* NULL: overwrite */
    GT_EPI_SCALE,     /* alpha * acc */
    GT_EPI_ADD1,      /* acc + D (residual gradient) */
    GT_EPI_ADD2,      /* acc + D0 + 0.5 * D1 (D1 in another layout) */
    GT_EPI_SCALE_ADD, /* 0.5 * acc + D */
    GT_EPI_CLAMP,     /* clamp(acc, -1.5, 1.25): gradient clipping */
    GT_EPI_BIAS_RELU, /* relu(acc + bias[g, c]) */
    GT_EPI_FOUR_D,    /* clamp(acc + bias + 0.5 R - 0.25 R(other layout) + 2 S[n, g, c]) */
    GT_EPI_RELU,      /* relu(acc): an activation without D tensors */
    GT_EPI_ADD1_CLAMP, /* clamp(acc + D): an activation with one D in the output's layout */
    GT_EPI_BUILTIN_COUNT,
    GT_EPI_USER = GT_EPI_BUILTIN_COUNT,
    GT_EPI_USER0 /* the user op without D tensors */
};
static const char *const gt_epi_names[] = {"none", "scale", "add 1 D", "add 2 Ds", "scale+add",
                                           "clamp", "bias+relu", "4 D tensors", "relu",
                                           "add 1 D + clamp", "user op", "user op, no D"};

enum { GT_D_BIAS = 0, GT_D_FULL, GT_D_OTHER, GT_D_NC };

typedef struct gt_epi_spec {
    int null_epi;
    float alpha;
    int num_d;
    int dkind[GCONV_MAX_D];
    float beta[GCONV_MAX_D];
    gconv_act act;
} gt_epi_spec;

static gt_epi_spec gt_epi_make(int kind)
{
    gt_epi_spec s;
    memset(&s, 0, sizeof s);
    s.alpha = 1.0f;
    switch (kind) {
    case GT_EPI_NONE: s.null_epi = 1; break;
    case GT_EPI_SCALE: s.alpha = -1.75f; break;
    case GT_EPI_ADD1: s.num_d = 1, s.dkind[0] = GT_D_FULL, s.beta[0] = 1.0f; break;
    case GT_EPI_ADD2:
        s.num_d = 2, s.dkind[0] = GT_D_FULL, s.beta[0] = 1.0f;
        s.dkind[1] = GT_D_OTHER, s.beta[1] = 0.5f;
        break;
    case GT_EPI_SCALE_ADD: s.alpha = 0.5f, s.num_d = 1, s.dkind[0] = GT_D_FULL, s.beta[0] = 1.0f; break;
    case GT_EPI_CLAMP: s.act = gconv_clamp(-1.5f, 1.25f); break;
    case GT_EPI_BIAS_RELU:
        s.num_d = 1, s.dkind[0] = GT_D_BIAS, s.beta[0] = 1.0f, s.act = gconv_relu();
        break;
    case GT_EPI_FOUR_D:
        s.num_d = 4;
        s.dkind[0] = GT_D_BIAS, s.beta[0] = 1.0f;
        s.dkind[1] = GT_D_FULL, s.beta[1] = 0.5f;
        s.dkind[2] = GT_D_OTHER, s.beta[2] = -0.25f;
        s.dkind[3] = GT_D_NC, s.beta[3] = 2.0f;
        s.act = gconv_clamp(-2.0f, 2.5f);
        break;
    case GT_EPI_RELU: s.act = gconv_relu(); break;
    case GT_EPI_ADD1_CLAMP:
        s.num_d = 1, s.dkind[0] = GT_D_FULL, s.beta[0] = 1.0f, s.act = gconv_clamp(-1.0f, 1.5f);
        break;
    case GT_EPI_USER: s.alpha = 1.5f, s.num_d = 1, s.dkind[0] = GT_D_FULL, s.beta[0] = -0.75f; break;
    case GT_EPI_USER0: s.alpha = 1.5f; break;
    }
    return s;
}

/* D tensors live over the input's logical dims (g, n, c, d, h, w). */
static gconv_act_strides gt_d_strides(const gconv_problem *p, int dk, int64_t *elems)
{
    gconv_act_strides st;
    switch (dk) {
    case GT_D_BIAS:
        *elems = (int64_t)p->G * p->C;
        st.g = p->C, st.n = 0, st.c = 1, st.s[0] = st.s[1] = st.s[2] = 0;
        return st;
    case GT_D_OTHER: {
        gconv_layout f = gconv_layout_family(gconv_in_layout(p));
        gconv_layout other = f == GCONV_NHWGC ? GCONV_NGCHW : GCONV_NHWGC;
        *elems = gconv_in_elems(p);
        return gconv_act_strides_make(gconv_layout_for(other, p->ndim), p->G, p->N, p->C, p->in);
    }
    case GT_D_NC:
        *elems = (int64_t)p->N * p->G * p->C;
        st.g = p->C, st.n = (int64_t)p->G * p->C, st.c = 1, st.s[0] = st.s[1] = st.s[2] = 0;
        return st;
    default:
        *elems = gconv_in_elems(p);
        return gconv_in_strides(p);
    }
}

/* ---- one run against the reference ---------------------------------------------------------- */

enum { GT_CASE_FAIL = 0, GT_CASE_PASS = 1, GT_CASE_UNSUPPORTED = 2 };

static int gt_case(const gt_impl *im, const gconv_problem *p, int epi_kind, int init,
                   uint64_t seed, char *msg, size_t len)
{
    gconv_dtype t = im->t;
    size_t es = gconv_dtype_size(t);
    int64_t n_in = gconv_in_elems(p), n_wei = gconv_wei_elems(p), n_out = gconv_out_elems(p);
    gt_rng r = gt_rng_make(seed);
    const int sk = im->user_op ? (epi_kind == GT_EPI_USER0 ? GT_EPI_USER0 : GT_EPI_USER)
                               : epi_kind;
    gt_epi_spec sp = gt_epi_make(sk);
    gconv_epilogue epi_dev, epi_host;
    void *h_dout, *h_wei, *h_din, *h_d[GCONV_MAX_D] = {0}, *d_d[GCONV_MAX_D] = {0};
    float *ref, *ref_d[GCONV_MAX_D] = {0};
    void *d_dout, *d_wei, *ws = NULL;
    size_t ws_size;
    gt_guarded din;
    gconv_bwd_data_args a;
    gconv_status s;
    hipStream_t stream;
    char why[512], pstr[320], cbuf[512];
    int i, result = GT_CASE_PASS;
    long long first_bad = 0;
    size_t guard_bad;
    gt_cmp c;

    gt_problem_str(p, pstr, sizeof pstr);
    why[0] = '\0';
    if (!im->supports(p, why, sizeof why)) {
        if (im->may_refuse)
            return GT_CASE_UNSUPPORTED;
        snprintf(msg, len, "%s [%s]: supports() says no: %s", im->name, pstr, why);
        return GT_CASE_FAIL;
    }
    h_dout = gt_host_alloc((size_t)n_out * es);
    h_wei = gt_host_alloc((size_t)n_wei * es);
    h_din = gt_host_alloc((size_t)n_in * es);
    ref = (float *)gt_host_alloc((size_t)n_in * sizeof(float));
    gt_fill(t, h_dout, (size_t)n_out, &r, init);
    gt_fill(t, h_wei, (size_t)n_wei, &r, init);
    d_dout = gt_dev_upload(h_dout, (size_t)n_out * es);
    d_wei = gt_dev_upload(h_wei, (size_t)n_wei * es);
    din = gt_guarded_alloc((size_t)n_in * es); /* poisoned */

    epi_dev = gconv_epi_scale(sp.alpha);
    epi_dev.act = sp.act;
    epi_host = epi_dev;
    for (i = 0; i < sp.num_d; i++) {
        int64_t ne;
        gconv_act_strides st = gt_d_strides(p, sp.dkind[i], &ne);
        h_d[i] = gt_host_alloc((size_t)ne * es);
        gt_fill(t, h_d[i], (size_t)ne, &r, init);
        ref_d[i] = gt_to_f32(t, h_d[i], (size_t)ne);
        d_d[i] = gt_dev_upload(h_d[i], (size_t)ne * es);
        gconv_epi_add_d(&epi_dev, d_d[i], st, sp.beta[i]);
        gconv_epi_add_d(&epi_host, ref_d[i], st, sp.beta[i]);
    }
    ws_size = im->workspace_size(p);
    if (ws_size) {
        /* poisoned: every element the kernels read must have been written by the pre-pass */
        ws = gt_dev_alloc(ws_size);
        GT_CHECK(hipMemset(ws, 0xFF, ws_size));
    }
    GT_CHECK(hipStreamCreate(&stream));
    memset(&a, 0, sizeof a);
    a.d_out = d_dout, a.wei = d_wei, a.d_in = din.p;
    a.epi = sp.null_epi ? NULL : &epi_dev;
    a.workspace = ws, a.workspace_size = ws_size;
    a.why = why, a.why_len = sizeof why;
    s = im->run(p, &a, stream);
    if (s != GCONV_OK) {
        snprintf(msg, len, "%s [%s, epi %s]: launcher returned %s: %s", im->name, pstr,
                 gt_epi_names[epi_kind], gconv_status_name(s), why);
        result = GT_CASE_FAIL;
        goto done;
    }
    {
        hipError_t e1 = hipGetLastError(), e2 = hipStreamSynchronize(stream);
        if (e1 != hipSuccess || e2 != hipSuccess)
            cr_assert_fail("%s [%s, epi %s, seed %llu]: the launch failed: %s / %s", im->name,
                           pstr, gt_epi_names[epi_kind], (unsigned long long)seed,
                           hipGetErrorString(e1), hipGetErrorString(e2));
    }
    gt_dev_download(h_din, din.p, (size_t)n_in * es);
    if (im->user_op) {
        int g, n, ch, d, h, w;
        gconv_act_strides si = gconv_in_strides(p);
        s = gconv_ref_bwd_data(p, t, h_dout, h_wei, ref, GCONV_F32, NULL);
        for (g = 0; g < p->G; g++)
            for (n = 0; n < p->N; n++)
                for (ch = 0; ch < p->C; ch++)
                    for (d = 0; d < p->in[0]; d++)
                        for (h = 0; h < p->in[1]; h++)
                            for (w = 0; w < p->in[2]; w++) {
                                int64_t o = gconv_act_offset(&si, g, n, ch, d, h, w);
                                const float d0 =
                                    sp.num_d > 0
                                        ? ref_d[0][gconv_act_offset(&epi_host.d[0].strides, g, n,
                                                                    ch, d, h, w)]
                                        : 0.0f;
                                ref[o] = gt_user_math(ref[o], sp.alpha, sp.beta[0], d0, g, n, ch,
                                                      d, h, w);
                            }
    } else {
        s = gconv_ref_bwd_data(p, t, h_dout, h_wei, ref, GCONV_F32, sp.null_epi ? NULL : &epi_host);
    }
    cr_assert(s == GCONV_OK, "reference refused %s: %s", pstr, gconv_status_name(s));
    {
        double m = gt_init_max(init);
        double scale = fabs((double)sp.alpha) * m * m;
        gt_tol tol = gt_tolerance(t, (int64_t)p->K * gconv_filter_taps(p), scale, 0);
        c = gt_compare_act("d_in", t, h_din, ref, gconv_in_strides(p), p->G, p->N, p->C, p->in,
                           tol);
    }
    guard_bad = gt_guarded_check(&din, &first_bad);
    if (c.bad || guard_bad) {
        char gbuf[128] = "";
        if (guard_bad)
            snprintf(gbuf, sizeof gbuf, "; %zu guard bytes written, first at byte offset %lld",
                     guard_bad, first_bad);
        snprintf(msg, len, "%s [%s, epi %s, seed %llu]: %s%s", im->name, pstr,
                 gt_epi_names[epi_kind], (unsigned long long)seed,
                 c.bad ? gt_compare_report(&c, cbuf, sizeof cbuf) : "all elements match", gbuf);
        result = GT_CASE_FAIL;
    }
done:
    GT_CHECK(hipStreamDestroy(stream));
    for (i = 0; i < sp.num_d; i++) {
        free(h_d[i]);
        free(ref_d[i]);
        gt_dev_free(d_d[i]);
    }
    gt_dev_free(ws);
    gt_guarded_free(&din);
    gt_dev_free(d_dout);
    gt_dev_free(d_wei);
    free(h_dout);
    free(h_wei);
    free(h_din);
    free(ref);
    return result;
}

static int gt_fail_count;

static int gt_run_case(const gt_impl *im, const gconv_problem *p, int epi_kind, int init,
                       uint64_t seed)
{
    char msg[1024];
    int r = gt_case(im, p, epi_kind, init, seed, msg, sizeof msg);
    if (r == GT_CASE_FAIL) {
        gt_fail_count++;
        if (gt_fail_count <= 12)
            cr_expect_fail("%s", msg);
        else if (gt_fail_count == 13)
            cr_expect_fail("more failures follow; only the first 12 are reported");
    }
    return r;
}

/* ---- problems ------------------------------------------------------------------------------- */

static int gt_rand_channels(gt_rng *r)
{
    static const int special[] = {1, 2, 3, 4, 5, 7, 8, 9, 12, 15, 16, 17,
                                  24, 31, 32, 33, 40, 48, 63, 64, 65, 70};
    if (gt_rng_int(r, 0, 9) < 4)
        return special[gt_rng_int(r, 0, (int)(sizeof special / sizeof special[0]) - 1)];
    return gt_rng_int(r, 1, 70);
}

/* A random valid problem of at most max_macs multiply-adds. */
static void gt_random_problem(gt_rng *r, gconv_problem *p, double max_macs)
{
    for (;;) {
        int nd = gt_rng_int(r, 0, 99), kind = gt_rng_int(r, 0, 99);
        int ndim = nd < 30 ? 1 : nd < 75 ? 2 : 3;
        int G, C, K, N, i;
        int in[3], f[3], s[3], dl[3], pl[3], ph[3];
        if (kind < 20) {
            G = 1, C = gt_rand_channels(r), K = gt_rand_channels(r);
        } else if (kind < 45) {
            G = gt_rng_int(r, 2, 6), C = gt_rand_channels(r), K = gt_rand_channels(r);
        } else if (kind < 70) { /* depthwise, channel multiplier 1 or 2 */
            G = gt_rng_int(r, 1, 96), C = 1, K = gt_rng_int(r, 0, 3) ? 1 : 2;
        } else if (kind < 85) { /* vector-friendly K (16-byte gathers of d_out) */
            G = gt_rng_int(r, 1, 4), C = gt_rand_channels(r), K = 8 * gt_rng_int(r, 1, 6);
        } else {
            G = gt_rng_int(r, 2, 40), C = gt_rng_int(r, 1, 8), K = gt_rng_int(r, 1, 8);
        }
        N = gt_rng_int(r, 1, 3);
        for (i = 0; i < ndim; i++) {
            int maxf = ndim == 3 ? 3 : 5, span, extra = ndim == 1 ? 60 : ndim == 2 ? 16 : 7;
            f[i] = gt_rng_int(r, 0, 4) ? gt_rng_int(r, 1, maxf) : 1;
            s[i] = gt_rng_int(r, 1, 3);
            dl[i] = gt_rng_int(r, 0, 1) ? 1 : gt_rng_int(r, 2, 3);
            pl[i] = gt_rng_int(r, 0, 3);
            ph[i] = gt_rng_int(r, 0, 3);
            span = dl[i] * (f[i] - 1) + 1;
            in[i] = span - pl[i] - ph[i];
            if (in[i] < 1)
                in[i] = 1;
            in[i] += gt_rng_int(r, 0, extra);
        }
        if (kind >= 45 && kind < 70 && K == 1 && ndim >= 2 && gt_rng_int(r, 0, 1) == 0) {
            /* the depthwise vector kernel's shapes */
            int st = gt_rng_int(r, 1, 2);
            G = 8 * gt_rng_int(r, 1, 8);
            for (i = ndim - 2; i < ndim; i++) {
                f[i] = 3, s[i] = st, dl[i] = 1;
                in[i] = gt_rng_int(r, 1, 24);
            }
            if (ndim == 3)
                f[0] = 1, s[0] = 1, dl[0] = 1, pl[0] = 0, ph[0] = 0;
            for (i = ndim - 2; i < ndim; i++)
                if (in[i] + pl[i] + ph[i] < 3)
                    in[i] = 3;
        }
        gconv_problem_nd(p, ndim, G, N, C, K, in, f, s, pl, dl);
        for (i = 0; i < ndim; i++)
            p->pad_hi[3 - ndim + i] = ph[i];
        if (gconv_problem_check(p, NULL, 0) != GCONV_OK)
            continue;
        if (gconv_flops(p) / 2 > max_macs || gconv_out_elems(p) > 400000 ||
            gconv_in_elems(p) > 400000)
            continue;
        return;
    }
}

#define GT_SWEEP_PER_IMPL 100
#define GT_SWEEP_MAX_MACS 1.5e6

static void gt_sweep(const gt_impl *im, uint64_t seed0)
{
    gt_rng r = gt_rng_make(seed0);
    int i, pass = 0;
    gt_require_gpu();
    gt_fail_count = 0;
    for (i = 0; i < GT_SWEEP_PER_IMPL; i++) {
        gconv_problem p;
        int epi = gt_rng_int(&r, 0, 9) < 5 ? GT_EPI_NONE
                                            : gt_rng_int(&r, 1, GT_EPI_BUILTIN_COUNT - 1);
        int init = gt_rng_int(&r, 0, 4) ? GT_INIT_DECIMAL : GT_INIT_INT;
        gt_random_problem(&r, &p, GT_SWEEP_MAX_MACS);
        gconv_problem_set_layouts(&p, im->act, im->wei);
        pass += gt_run_case(im, &p, epi, init, gt_rng_next(&r)) == GT_CASE_PASS;
    }
    cr_log_info("%s: %d of %d random problems pass", im->name, pass, GT_SWEEP_PER_IMPL);
}

#define GT_SWEEP_TEST(tn, ti, fi)                                                                \
    Test(bwd_data, sweep_##tn, .timeout = 90)                                                   \
    {                                                                                            \
        gt_sweep(&gt_impls[ti][fi], 0xBD000000u + (uint64_t)(ti) * 16 + (fi));                   \
    }
GT_SWEEP_TEST(f32_nhwgc, GT_T_F32, 0)
GT_SWEEP_TEST(f32_gnhwc_kcyx, GT_T_F32, 1)
GT_SWEEP_TEST(f32_ngchw_kcyx, GT_T_F32, 2)
GT_SWEEP_TEST(f32_ngchw_kyxc, GT_T_F32, 3)
GT_SWEEP_TEST(f16_nhwgc, GT_T_F16, 0)
GT_SWEEP_TEST(f16_gnhwc, GT_T_F16, 1)
GT_SWEEP_TEST(f16_ngchw_kcyx, GT_T_F16, 2)
GT_SWEEP_TEST(f16_nhwgc_kcyx, GT_T_F16, 3)
GT_SWEEP_TEST(bf16_nhwgc, GT_T_BF16, 0)
GT_SWEEP_TEST(bf16_gnhwc, GT_T_BF16, 1)
GT_SWEEP_TEST(bf16_ngchw_kcyx, GT_T_BF16, 2)
GT_SWEEP_TEST(bf16_gnhwc_kcyx, GT_T_BF16, 3)

/* ---- each epilogue on fixed problems that take every kernel ---------------------------------- */

typedef struct gt_fixed {
    int ndim, G, N, C, K;
    int in[3], f[3], s[3], d[3], pl[3], ph[3];
} gt_fixed;

static const gt_fixed gt_fixed_problems[] = {
    /* depthwise vector kernel, stride 1 and 2, odd sizes */
    {2, 16, 2, 1, 1, {1, 13, 11}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 1, 1}, {0, 1, 1}},
    {2, 24, 2, 1, 1, {1, 15, 17}, {1, 3, 3}, {1, 2, 2}, {1, 1, 1}, {0, 1, 0}, {0, 0, 2}},
    /* the stride-2 kernel's rolling form: several bands of rows and a partial one; top pad 2
     * and 0 (the first band starts at the image, d_out row m0 - 1 outside it), 3 (the first
     * band starts a row above the image and its row m0 - 1 is d_out's first) */
    {2, 32, 3, 1, 1, {1, 37, 29}, {1, 3, 3}, {1, 2, 2}, {1, 1, 1}, {0, 2, 1}, {0, 1, 0}},
    {2, 8, 1, 1, 1, {1, 20, 6}, {1, 3, 3}, {1, 2, 2}, {1, 1, 1}, {0, 0, 0}, {0, 1, 2}},
    {2, 16, 2, 1, 1, {1, 23, 13}, {1, 3, 3}, {1, 2, 2}, {1, 1, 1}, {0, 3, 2}, {0, 2, 1}},
    /* the rolling form in 3D (a trivial depth axis: 3 depths of 2 images folded into the
     * batch) */
    {3, 16, 2, 1, 1, {3, 13, 11}, {1, 3, 3}, {1, 2, 2}, {1, 1, 1}, {0, 1, 2}, {0, 2, 1}},
    /* depthwise generic (5x5 dilated), 3D */
    {3, 8, 1, 1, 1, {5, 7, 6}, {3, 3, 3}, {2, 1, 2}, {1, 2, 1}, {1, 2, 0}, {0, 1, 1}},
    /* phase GEMM with vector gathers: stride 2 (4 phases), stride 1 */
    {2, 2, 2, 24, 16, {1, 11, 9}, {1, 3, 3}, {1, 2, 2}, {1, 1, 1}, {0, 1, 1}, {0, 1, 1}},
    {2, 1, 2, 40, 32, {1, 9, 10}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 1, 1}, {0, 1, 1}},
    /* phase GEMM element-wise, stride 3 > filter: unreached phases filled with f(0) */
    {1, 3, 2, 5, 7, {1, 1, 23}, {1, 1, 2}, {1, 1, 3}, {1, 1, 1}, {0, 0, 1}, {0, 0, 0}},
    {2, 2, 1, 6, 3, {1, 8, 9}, {1, 1, 1}, {1, 2, 2}, {1, 1, 1}, {0, 0, 0}, {0, 0, 0}},
    /* stride 1, 8 to 32 channels per group: the forward halo tensor-core kernel on the
     * flipped weights (fp16 / bf16 NHWGC), the GEMM elsewhere; dilated, asymmetric pads, 1D */
    {2, 8, 2, 8, 8, {1, 14, 13}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 1, 1}, {0, 1, 1}},
    {2, 3, 1, 32, 32, {1, 7, 7}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 1, 1}, {0, 1, 1}},
    {2, 4, 2, 6, 16, {1, 9, 11}, {1, 3, 2}, {1, 1, 1}, {1, 2, 1}, {0, 2, 0}, {0, 1, 1}},
    {1, 5, 2, 16, 16, {1, 1, 30}, {1, 1, 5}, {1, 1, 1}, {1, 1, 2}, {0, 0, 3}, {0, 0, 8}},
    /* the halo kernel reading the weights in place (no pre-pass, ldmatrix.trans): 24 outputs
     * per group (the fourth n-tile half past the row), a partial chunk of 3 groups of K = 8, a
     * 3x2 filter dilated along x; K = 32 (two groups per chunk) with a 1x3 filter */
    {2, 3, 2, 24, 8, {1, 10, 9}, {1, 3, 2}, {1, 1, 1}, {1, 1, 2}, {0, 1, 0}, {0, 1, 2}},
    /* the same with a 3x3 filter: 9 taps of 8 channels end in half a k-step (the tail) on
     * the x4.trans path */
    {2, 2, 2, 24, 8, {1, 9, 11}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 1, 1}, {0, 0, 2}},
    {2, 3, 1, 16, 32, {1, 8, 7}, {1, 1, 3}, {1, 1, 1}, {1, 1, 1}, {0, 0, 1}, {0, 0, 1}},
    /* C = K = 4, G even: the halo kernel's pair mode (block-diagonal weights of two groups),
     * a partial group chunk; 1D dilated with asymmetric pads; G odd falls back to FEWC */
    {2, 6, 2, 4, 4, {1, 12, 10}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 1, 1}, {0, 1, 1}},
    {1, 4, 3, 4, 4, {1, 1, 40}, {1, 1, 3}, {1, 1, 1}, {1, 1, 2}, {0, 0, 2}, {0, 0, 1}},
    {2, 5, 1, 4, 4, {1, 9, 8}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 1, 1}, {0, 1, 1}},
    /* K a multiple of 64 and C >= 64 (fp16 / bf16 NHWGC, sm_90a build): the phases run on the
     * warp-specialised forward kernel; stride 1 with C not a multiple of the tile, stride 2
     * (four phases of 2x2 / 2x1 / 1x2 / 1x1 taps) with asymmetric pads, 3D. At stride 1 with
     * GKYXC weights it reads them in place (MN-major B, flipped taps, no pre-pass): C = 72 (a
     * partial 64-channel box), 3D; two groups of two 64-channel reduction chunks with
     * dilation and asymmetric pads; C = 100 (rows of 200 bytes: the copy engine refuses the
     * in-place map, the pre-pass runs) */
    {2, 1, 2, 72, 64, {1, 13, 11}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 1, 1}, {0, 1, 1}},
    {2, 2, 2, 64, 128, {1, 15, 13}, {1, 3, 3}, {1, 2, 2}, {1, 1, 1}, {0, 1, 1}, {0, 0, 1}},
    {3, 1, 1, 96, 64, {4, 5, 6}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}},
    {2, 2, 2, 64, 128, {1, 11, 12}, {1, 3, 3}, {1, 1, 1}, {1, 2, 1}, {0, 2, 0}, {0, 1, 2}},
    {2, 1, 2, 100, 64, {1, 9, 8}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 1, 1}, {0, 1, 1}},
};

static void gt_fixed_problem(const gt_fixed *e, gconv_problem *p)
{
    int i;
    gconv_problem_nd(p, 3, e->G, e->N, e->C, e->K, e->in, e->f, e->s, e->pl, e->d);
    p->ndim = e->ndim;
    for (i = 0; i < 3; i++)
        p->pad_hi[i] = e->ph[i];
}

static void gt_epi_test(int kind)
{
    int ti, fi;
    size_t j;
    gt_require_gpu();
    gt_fail_count = 0;
    for (ti = 0; ti < 3; ti++)
        for (fi = 0; fi < 4; fi += 2)
            for (j = 0; j < sizeof gt_fixed_problems / sizeof gt_fixed_problems[0]; j++) {
                gconv_problem p;
                gt_fixed_problem(&gt_fixed_problems[j], &p);
                gconv_problem_set_layouts(&p, gt_impls[ti][fi].act, gt_impls[ti][fi].wei);
                gt_run_case(&gt_impls[ti][fi], &p, kind, GT_INIT_DECIMAL, 77 + j);
            }
}

Test(bwd_data, epi_overwrite, .timeout = 60) { gt_epi_test(GT_EPI_NONE); }
Test(bwd_data, epi_scale, .timeout = 60) { gt_epi_test(GT_EPI_SCALE); }
Test(bwd_data, epi_add_one_d, .timeout = 60) { gt_epi_test(GT_EPI_ADD1); }
Test(bwd_data, epi_add_two_d, .timeout = 60) { gt_epi_test(GT_EPI_ADD2); }
Test(bwd_data, epi_scale_add, .timeout = 60) { gt_epi_test(GT_EPI_SCALE_ADD); }
Test(bwd_data, epi_clamp, .timeout = 60) { gt_epi_test(GT_EPI_CLAMP); }
Test(bwd_data, epi_bias_relu, .timeout = 60) { gt_epi_test(GT_EPI_BIAS_RELU); }
Test(bwd_data, epi_four_d, .timeout = 60) { gt_epi_test(GT_EPI_FOUR_D); }
Test(bwd_data, epi_relu, .timeout = 60) { gt_epi_test(GT_EPI_RELU); }
Test(bwd_data, epi_add_clamp, .timeout = 60) { gt_epi_test(GT_EPI_ADD1_CLAMP); }

/* Each configuration of the warp-specialised forward kernel pinned (gconv_impl_fwd_ws_pin,
 * 0 .. GCONV_IMPL_WS_COUNT - 1) on the fixed problems that take it: in-place weights (MN-major B) and the pre-pass's,
 * stride 1 and 2, with a residual D and with none. Elsewhere (no sm_90a build or no Hopper
 * GPU) the same problems run on the other kernels, still checked. */
Test(bwd_data, ws_configs, .timeout = 120)
{
    int pin, ti;
    size_t j;
    gt_require_gpu();
    gt_fail_count = 0;
    for (pin = 0; pin < GCONV_IMPL_WS_COUNT; pin++) {
        gconv_impl_fwd_ws_pin = pin;
        for (ti = 1; ti < 3; ti++)
            for (j = 0; j < sizeof gt_fixed_problems / sizeof gt_fixed_problems[0]; j++) {
                gconv_problem p;
                gt_fixed_problem(&gt_fixed_problems[j], &p);
                if (p.K % 64 || p.C < 64)
                    continue;
                gconv_problem_set_layouts(&p, gt_impls[ti][0].act, gt_impls[ti][0].wei);
                gt_run_case(&gt_impls[ti][0], &p, (j + pin) & 1 ? GT_EPI_ADD1 : GT_EPI_NONE,
                            GT_INIT_DECIMAL, 0x3C00u + 16u * (unsigned)pin + (unsigned)j);
            }
    }
    gconv_impl_fwd_ws_pin = -1;
}

Test(bwd_data, epi_user_op, .timeout = 90)
{
    size_t j;
    int i;
    gt_rng r = gt_rng_make(0x05E7);
    gt_require_gpu();
    gt_fail_count = 0;
    for (j = 0; j < sizeof gt_fixed_problems / sizeof gt_fixed_problems[0]; j++) {
        gconv_problem p;
        gt_fixed_problem(&gt_fixed_problems[j], &p);
        gconv_problem_set_layouts(&p, GCONV_NHWGC, GCONV_GKYXC);
        gt_run_case(&gt_user_f16, &p, GT_EPI_USER, GT_INIT_DECIMAL, 5 + j);
        gt_run_case(&gt_user_f16, &p, GT_EPI_USER0, GT_INIT_DECIMAL, 7 + j);
        gconv_problem_set_layouts(&p, GCONV_NGCHW, GCONV_GKCYX);
        gt_run_case(&gt_user_f32, &p, GT_EPI_USER, GT_INIT_DECIMAL, 9 + j);
    }
    for (i = 0; i < 40; i++) {
        gconv_problem p;
        gt_random_problem(&r, &p, GT_SWEEP_MAX_MACS);
        gconv_problem_set_layouts(&p, GCONV_NHWGC, GCONV_GKYXC);
        gt_run_case(&gt_user_f16, &p, GT_EPI_USER, GT_INIT_DECIMAL, gt_rng_next(&r));
    }
}

Test(bwd_data, tiled_f16_128x64, .timeout = 90)
{
    gt_rng r = gt_rng_make(0x711E);
    int i, ran = 0;
    gt_require_gpu();
    gt_fail_count = 0;
    for (i = 0; i < 80; i++) {
        gconv_problem p;
        int epi = gt_rng_int(&r, 0, GT_EPI_BUILTIN_COUNT - 1);
        gt_random_problem(&r, &p, GT_SWEEP_MAX_MACS);
        if (gt_rng_int(&r, 0, 1))
            p.K = 8 * gt_rng_int(&r, 1, 4);
        gconv_problem_set_layouts(&p, GCONV_NHWGC, GCONV_GKYXC);
        if (gconv_problem_check(&p, NULL, 0) != GCONV_OK)
            continue;
        ran += gt_run_case(&gt_tiled, &p, epi, GT_INIT_DECIMAL, gt_rng_next(&r)) == GT_CASE_PASS;
    }
    cr_expect(ran > 10, "the pinned tile ran only %d problems", ran);
}

/* ---- tensors over 2 GB ---------------------------------------------------------------------- *
 * d_out is filled on the device with integers in [-2, 2] hashed from the element index, the
 * weights with small integers: every sum is an exact integer. Every d_in element is checked
 * written; a sample is recomputed on the host. */
static void gt_huge(const gt_impl *im, gconv_problem p, int residual)
{
    gconv_dtype t = im->t;
    size_t es = gconv_dtype_size(t);
    int64_t n_in, n_wei, n_out;
    size_t need, free_b = 0, total_b = 0, ws_size;
    void *d_in, *d_wei, *d_dout, *h_wei, *ws = NULL, *d_res = NULL;
    gconv_epilogue epi;
    gconv_bwd_data_args a;
    gconv_status s;
    char why[512], pstr[256];
    unsigned long long unwritten;
    const uint64_t seed = 0xBADDA7Au, rseed = 0x5E5Du;
    gt_rng r = gt_rng_make(0x2C);
    gconv_act_strides si, so;
    gconv_wei_strides sw;
    int out_sp[3], i, bad = 0;

    gt_require_gpu();
    gconv_problem_set_layouts(&p, im->act, im->wei);
    gt_problem_str(&p, pstr, sizeof pstr);
    cr_assert(gconv_problem_check(&p, why, sizeof why) == GCONV_OK, "%s", why);
    n_in = gconv_in_elems(&p), n_wei = gconv_wei_elems(&p), n_out = gconv_out_elems(&p);
    cr_assert(n_in > ((int64_t)1 << 31), "not huge: %lld", (long long)n_in);
    ws_size = im->workspace_size(&p);
    need = (size_t)(n_in * (residual ? 2 : 1) + n_out + n_wei) * es + ws_size + ((size_t)512 << 20);
    GT_CHECK(hipMemGetInfo(&free_b, &total_b));
    if (free_b < need)
        cr_skip_test("not enough GPU memory: %zu MiB free, %zu MiB needed", free_b >> 20,
                     need >> 20);
    d_in = gt_dev_alloc((size_t)n_in * es);
    d_dout = gt_dev_alloc((size_t)n_out * es);
    if (ws_size)
        ws = gt_dev_alloc(ws_size);
    gt_dev_fill_hash(d_dout, n_out, t, seed, -2, 5);
    GT_CHECK(hipMemset(d_in, 0xFF, (size_t)n_in * es));
    h_wei = gt_host_alloc((size_t)n_wei * es);
    for (i = 0; i < n_wei; i++)
        gconv_store_f32(t, h_wei, (size_t)i, (float)gt_rng_int(&r, -2, 2));
    d_wei = gt_dev_upload(h_wei, (size_t)n_wei * es);
    epi = gconv_epi_scale(1.0f);
    if (residual) {
        d_res = gt_dev_alloc((size_t)n_in * es);
        gt_dev_fill_hash(d_res, n_in, t, rseed, -3, 7);
        gconv_epi_add_d(&epi, d_res, gconv_in_strides(&p), 1.0f);
    }
    GT_CHECK(hipDeviceSynchronize());
    memset(&a, 0, sizeof a);
    a.d_out = d_dout, a.wei = d_wei, a.d_in = d_in, a.epi = residual ? &epi : NULL;
    a.workspace = ws, a.workspace_size = ws_size, a.why = why, a.why_len = sizeof why;
    s = im->run(&p, &a, 0);
    cr_assert(s == GCONV_OK, "%s refused %s: %s: %s", im->name, pstr, gconv_status_name(s), why);
    GT_CHECK_LAUNCH();
    GT_CHECK(hipDeviceSynchronize());
    unwritten = gt_dev_count_poison(d_in, n_in, t);
    cr_expect(unwritten == 0, "%s [%s]: %llu of %lld d_in elements not written", im->name, pstr,
              unwritten, (long long)n_in);
    si = gconv_in_strides(&p), so = gconv_out_strides(&p), sw = gconv_weight_strides(&p);
    gconv_out_sizes(&p, out_sp);
    for (i = 0; i < 2000; i++) {
        int x[6], c, k, z, y, xx, j, tap[3], o[3];
        double acc = 0;
        float got, want;
        unsigned char raw[4], wbuf[4];
        int64_t off;
        x[0] = gt_rng_int(&r, 0, p.G - 1), x[1] = gt_rng_int(&r, 0, p.N - 1);
        x[2] = gt_rng_int(&r, 0, p.C - 1), x[3] = gt_rng_int(&r, 0, p.in[0] - 1);
        x[4] = gt_rng_int(&r, 0, p.in[1] - 1), x[5] = gt_rng_int(&r, 0, p.in[2] - 1);
        if (i < 500)
            x[4] = p.in[1] - 1 - gt_rng_int(&r, 0, p.in[1] / 8);
        c = x[2];
        for (z = 0; z < p.filter[0]; z++)
            for (y = 0; y < p.filter[1]; y++)
                for (xx = 0; xx < p.filter[2]; xx++) {
                    int ok = 1;
                    tap[0] = z, tap[1] = y, tap[2] = xx;
                    for (j = 0; j < 3; j++) {
                        int tt = x[3 + j] + p.pad_lo[j] - tap[j] * p.dilation[j];
                        ok &= tt >= 0 && tt % p.stride[j] == 0 && tt / p.stride[j] < out_sp[j];
                        o[j] = ok ? tt / p.stride[j] : 0;
                    }
                    if (!ok)
                        continue;
                    for (k = 0; k < p.K; k++) {
                        off = gconv_act_offset(&so, x[0], x[1], k, o[0], o[1], o[2]);
                        acc += (double)gt_hash_int(seed, (uint64_t)off, -2, 5) *
                               gconv_load_f32(t, h_wei,
                                              (size_t)gconv_wei_offset(&sw, x[0], k, c, z, y, xx));
                    }
                }
        off = gconv_act_offset(&si, x[0], x[1], x[2], x[3], x[4], x[5]);
        if (residual)
            acc += (double)gt_hash_int(rseed, (uint64_t)off, -3, 7);
        gt_dev_download(raw, (const unsigned char *)d_in + off * (int64_t)es, es);
        got = gconv_load_f32(t, raw, 0);
        gconv_store_f32(t, wbuf, 0, (float)acc);
        want = gconv_load_f32(t, wbuf, 0);
        if (got != want) {
            if (bad < 8)
                cr_expect_fail("%s [%s]: d_in(g %d n %d c %d d %d h %d w %d) offset %lld: got "
                               "%g, want %g", im->name, pstr, x[0], x[1], x[2], x[3], x[4], x[5],
                               (long long)off, (double)got, (double)want);
            bad++;
        }
    }
    cr_expect(bad == 0, "%s [%s]: %d of 2000 sampled d_in elements wrong", im->name, pstr, bad);
    gt_dev_free(d_in);
    gt_dev_free(d_dout);
    gt_dev_free(d_wei);
    gt_dev_free(d_res);
    gt_dev_free(ws);
    free(h_wei);
}

/* The halo kernel's persistent grid on backward data's forward view: more units than the
 * device holds blocks, group chunks (and so the weights) changing inside a block's range; the
 * weights read in place (C = K = 16 at 56x56, C = K = 32 at 28x28, and C = K = 4 pairs, whose
 * weight fill builds the view's weights) and through the pre-pass (the GKCYX weights of the
 * NHWGC / GKCYX fp16 instantiation, all three); fp16 and bf16, plain and with a residual D. */
Test(bwd_data, halo_persistent, .timeout = 180)
{
    static const int sh[3][5] = {/* C = K, G, N, H = W */ {16, 8, 8, 56}, {32, 4, 40, 28},
                                 {4, 32, 8, 56}};
    int i, ti;
    gt_require_gpu();
    gt_fail_count = 0;
    for (i = 0; i < 3; i++)
        for (ti = GT_T_F16; ti <= GT_T_BF16; ti++) {
            const gt_impl *im = &gt_impls[ti][0];
            gconv_problem p;
            gconv_problem_2d(&p, sh[i][1], sh[i][2], sh[i][0], sh[i][0], sh[i][3], sh[i][3], 3, 3,
                             1, 1, 1, 1, 1, 1);
            gconv_problem_set_layouts(&p, im->act, im->wei);
            gt_run_case(im, &p, ti == GT_T_F16 ? GT_EPI_NONE : GT_EPI_ADD1, GT_INIT_DECIMAL,
                        0x4B10u + (uint64_t)(i * 4 + ti));
            if (ti == GT_T_F16) {
                im = &gt_impls[ti][3];
                gconv_problem_set_layouts(&p, im->act, im->wei);
                gt_run_case(im, &p, GT_EPI_ADD1, GT_INIT_DECIMAL, 0x4B20u + (uint64_t)i);
            }
        }
}

/* The halo kernel's wide plans on backward data's forward view (four n-tiles, two m-tiles an item;
 * gconv_impl_halo_plan_wide): the view's C = K = 32 at 7x7, two images a unit, with a batch large
 * enough that blocks run two units, one of them across a group chunk on a 132-SM part (153 images:
 * 308 units on 264 blocks), and odd (the last unit has one image); the view's K = 24 (the
 * problem's C) at 6x5 with 3 groups (a chunk of one); one image a unit at 14x14. Weights read in
 * place (fp16 plain, bf16 clamp: the plan must be wide with the images a unit expected) and
 * through the pre-pass (the NHWGC / GKCYX fp16 instantiation, scale). */
Test(bwd_data, halo_wide, .timeout = 180)
{
    static const int sh[3][7] = {/* C, K, G, N, H, W, images a unit */ {32, 32, 8, 153, 7, 7, 2},
                                 {24, 32, 3, 9, 6, 5, 2}, {32, 32, 4, 6, 14, 14, 1}};
    int i, ti;
    gt_require_gpu();
    gt_fail_count = 0;
    for (i = 0; i < 3; i++) {
        gconv_problem p;
        gconv_problem_2d(&p, sh[i][2], sh[i][3], sh[i][0], sh[i][1], sh[i][4], sh[i][5], 3, 3, 1,
                         1, 1, 1, 1, 1);
#if GCONV_IMPL_HALO_ENABLE
        {
            void *a16 = (void *)(uintptr_t)4096;
            gconv_impl_halo_params H;
            gconv_problem q;
            gconv_problem_set_layouts(&p, GCONV_NHWGC, GCONV_GKYXC);
            cr_assert(gconv_impl_bwdd_fwd_view(&p, &q));
            cr_assert(gconv_impl_halo_plan(&q, GCONV_F16, a16, a16, a16, NULL, &H) &&
                          gconv_impl_halo_plan_wtr(&p, a16, &H),
                      "C = %d, K = %d, %dx%d: not the halo kernel on the weights in place",
                      sh[i][0], sh[i][1], sh[i][4], sh[i][5]);
            gconv_impl_halo_plan_stage(&H);
            gconv_impl_halo_plan_wide(&H);
            cr_assert(H.MT == 2 && H.IM == sh[i][6],
                      "C = %d, K = %d, %dx%d: MT %d, %d images a unit; expected 2, %d", sh[i][0],
                      sh[i][1], sh[i][4], sh[i][5], H.MT, H.IM, sh[i][6]);
        }
#endif
        for (ti = GT_T_F16; ti <= GT_T_BF16; ti++) {
            const gt_impl *im = &gt_impls[ti][0];
            gconv_problem_set_layouts(&p, im->act, im->wei);
            gt_run_case(im, &p, ti == GT_T_F16 ? GT_EPI_NONE : GT_EPI_CLAMP, GT_INIT_DECIMAL,
                        0x4B40u + (uint64_t)(i * 4 + ti));
        }
        gconv_problem_set_layouts(&p, gt_impls[GT_T_F16][3].act, gt_impls[GT_T_F16][3].wei);
        gt_run_case(&gt_impls[GT_T_F16][3], &p, GT_EPI_SCALE, GT_INIT_DECIMAL,
                    0x4B50u + (uint64_t)i);
    }
}

/* The halo kernel's staged residual with D brought a unit ahead by the copy engine into two
 * staging tiles (gconv_impl_halo_dtma_setup, sm_90a builds; the two-block kernel) and with the
 * items' own loads (gconv_impl_halo_no_dtma; the three-block kernel for one n-tile): C = K = 4
 * pairs at 28x28 and C = K = 8 at 27x27 (two-row units), C = K = 32 at 7x7 and 11x11, C = K =
 * 16 at 14x14 and 13x13 (short last bands, whose missing rows come as the engine's zeros);
 * batches large enough that every block of the persistent grid runs several units (both
 * staging tiles, their barriers' phases, group chunks changing inside a block's range); fp16
 * and bf16; residual and scale + residual. Where the build has the copy engine (CUDA 12.5+
 * runtime), the plan the launcher makes must have taken it (asked after the case: the map's
 * encoder wants the CUDA context, which the case's allocations made; the map only records the
 * pointers, so any 16-byte aligned ones do). */
Test(bwd_data, halo_residual_dtma, .timeout = 240)
{
    static const int sh[6][5] = {/* C = K, G, N, H = W */ {4, 32, 32, 28}, {8, 16, 24, 27},
                                 {32, 4, 256, 7}, {32, 2, 200, 11}, {16, 8, 96, 14},
                                 {16, 8, 96, 13}};
    int i, ti, t;
    gt_require_gpu();
    gt_fail_count = 0;
    for (t = 0; t < 2; t++)
        for (i = 0; i < 6; i++)
            for (ti = GT_T_F16; ti <= GT_T_BF16; ti++) {
                const gt_impl *im = &gt_impls[ti][0];
                gconv_problem p;
                gconv_problem_2d(&p, sh[i][1], sh[i][2], sh[i][0], sh[i][0], sh[i][3], sh[i][3],
                                 3, 3, 1, 1, 1, 1, 1, 1);
                gconv_problem_set_layouts(&p, im->act, im->wei);
                gconv_impl_halo_no_dtma = t;
                gt_run_case(im, &p, ti == GT_T_F16 ? GT_EPI_ADD1 : GT_EPI_SCALE_ADD,
                            GT_INIT_DECIMAL, 0x4C10u + (uint64_t)(t * 12 + i * 2 + ti));
#if GCONV_IMPL_WS_HOST
                {
                    void *a16 = (void *)(uintptr_t)4096;
                    gconv_epilogue e = gconv_epi_scale(1.0f);
                    gconv_impl_halo_params H;
                    gconv_problem q;
                    gconv_epi_add_d(&e, a16, gconv_in_strides(&p), 1.0f);
                    cr_assert(gconv_impl_bwdd_fwd_view(&p, &q));
                    cr_assert(gconv_impl_halo_plan(&q, im->t, a16, a16, a16, &e, &H) &&
                                  gconv_impl_halo_plan_wtr(&p, a16, &H),
                              "C = %d, %dx%d: not the halo kernel on the weights in place",
                              sh[i][0], sh[i][3], sh[i][3]);
                    gconv_impl_halo_plan_stage(&H);
                    gconv_impl_halo_tma_setup(&H, &q);
                    gconv_impl_halo_dtma_setup(&H);
                    cr_expect(H.dtma == !t, "C = %d, %dx%d: copy engine for D %d, expected %d",
                              sh[i][0], sh[i][3], sh[i][3], H.dtma, !t);
                }
#endif
            }
    gconv_impl_halo_no_dtma = 0;
}

/* depthwise 3x3 stride 2, fp16 NHWGC, 1 x 4100 x 4100 x 128 = 2,151,680,000 d_in elements
 * (4.3 GB), residual D of the same size: the depthwise vector kernel */
Test(bwd_data, huge_f16_depthwise_s2, .timeout = 180)
{
    gconv_problem p;
    gconv_problem_2d(&p, 128, 1, 1, 1, 4100, 4100, 3, 3, 2, 2, 1, 1, 1, 1);
    gt_huge(&gt_impls[GT_T_F16][0], p, 1);
}

/* C = K = 8, G = 16, 3x3 stride 1, fp16 NHWGC: 1 x 4100 x 4100 x 128 elements: 64-bit phase
 * GEMM with vector gathers */
Test(bwd_data, huge_f16_gemm, .timeout = 180)
{
    gconv_problem p;
    gconv_problem_2d(&p, 16, 1, 8, 8, 4100, 4100, 3, 3, 1, 1, 1, 1, 1, 1);
    gt_huge(&gt_impls[GT_T_F16][0], p, 0);
}

/* ---- refusals: exact status, nothing launched ------------------------------------------------ */

typedef struct gt_renv {
    gconv_problem p;
    void *d_dout, *d_wei, *ws;
    size_t ws_size;
    gt_guarded din;
} gt_renv;

static void gt_renv_setup(gt_renv *env, const gt_impl *im, int C, int K)
{
    size_t es = gconv_dtype_size(im->t);
    gconv_problem_2d(&env->p, 2, 2, C, K, 9, 10, 3, 3, 1, 1, 1, 1, 1, 1);
    gconv_problem_set_layouts(&env->p, im->act, im->wei);
    env->d_dout = gt_dev_alloc((size_t)gconv_out_elems(&env->p) * es);
    env->d_wei = gt_dev_alloc((size_t)gconv_wei_elems(&env->p) * es);
    GT_CHECK(hipMemset(env->d_dout, 0, (size_t)gconv_out_elems(&env->p) * es));
    GT_CHECK(hipMemset(env->d_wei, 0, (size_t)gconv_wei_elems(&env->p) * es));
    env->din = gt_guarded_alloc((size_t)gconv_in_elems(&env->p) * es * 4);
    env->ws_size = im->workspace_size(&env->p);
    env->ws = env->ws_size ? gt_dev_alloc(env->ws_size) : NULL;
}

static gconv_bwd_data_args gt_rargs(gt_renv *env, char *why, size_t len)
{
    gconv_bwd_data_args a;
    memset(&a, 0, sizeof a);
    a.d_out = env->d_dout, a.wei = env->d_wei, a.d_in = env->din.p;
    a.workspace = env->ws, a.workspace_size = env->ws_size;
    a.why = why, a.why_len = len;
    return a;
}

static void gt_renv_free(gt_renv *env)
{
    gt_dev_free(env->d_dout);
    gt_dev_free(env->d_wei);
    gt_dev_free(env->ws);
    gt_guarded_free(&env->din);
}

static void gt_expect_refusal(const gt_impl *im, gt_renv *env, const gconv_problem *p,
                              const gconv_bwd_data_args *a, gconv_status want, const char *what)
{
    char *why = a ? a->why : NULL;
    gconv_status s;
    unsigned long long untouched;
    long long first = 0;
    int64_t n = (int64_t)(env->din.bytes / gconv_dtype_size(im->t));
    if (why)
        why[0] = '\0';
    s = im->run(p, a, 0);
    cr_expect(s == want, "%s: %s: expected %s, got %s (%s)", im->name, what,
              gconv_status_name(want), gconv_status_name(s), why ? why : "");
    if (why && s != GCONV_OK)
        cr_expect(why[0] != '\0', "%s: %s: refused with %s but no reason", im->name, what,
                  gconv_status_name(s));
    GT_CHECK(hipDeviceSynchronize());
    GT_CHECK(hipGetLastError());
    untouched = gt_dev_count_poison(env->din.p, n, im->t);
    cr_expect((int64_t)untouched == n, "%s: %s: the refused call wrote %lld elements", im->name,
              what, (long long)(n - (int64_t)untouched));
    cr_expect(gt_guarded_check(&env->din, &first) == 0, "%s: %s: wrote outside (byte %lld)",
              im->name, what, first);
}

Test(bwd_data, refuse_args, .timeout = 30)
{
    const gt_impl *im = &gt_impls[GT_T_F16][0];
    gt_renv env;
    gconv_bwd_data_args a;
    gconv_epilogue e;
    gconv_problem q;
    char why[256];
    gt_require_gpu();
    gt_renv_setup(&env, im, 16, 16);
    cr_expect(env.ws_size > 0, "a stride-1 C=16 problem should need a workspace");
    a = gt_rargs(&env, why, sizeof why);
    gt_expect_refusal(im, &env, NULL, &a, GCONV_ERR_NULL, "null problem");
    gt_expect_refusal(im, &env, &env.p, NULL, GCONV_ERR_NULL, "null args");
    a = gt_rargs(&env, why, sizeof why), a.d_out = NULL;
    gt_expect_refusal(im, &env, &env.p, &a, GCONV_ERR_NULL, "null d_out");
    a = gt_rargs(&env, why, sizeof why), a.wei = NULL;
    gt_expect_refusal(im, &env, &env.p, &a, GCONV_ERR_NULL, "null weights");
    a = gt_rargs(&env, why, sizeof why), a.d_in = NULL;
    gt_expect_refusal(im, &env, &env.p, &a, GCONV_ERR_NULL, "null d_in");
    e = gconv_epi_scale(1.0f);
    e.num_d = 1, e.beta[0] = 1.0f, e.d[0].data = NULL, e.d[0].strides = gconv_in_strides(&env.p);
    a = gt_rargs(&env, why, sizeof why), a.epi = &e;
    gt_expect_refusal(im, &env, &env.p, &a, GCONV_ERR_NULL, "null D tensor");
    e = gconv_epi_scale(1.0f);
    e.num_d = 5;
    a = gt_rargs(&env, why, sizeof why), a.epi = &e;
    gt_expect_refusal(im, &env, &env.p, &a, GCONV_ERR_ARGUMENT, "5 D tensors");
    e = gconv_epi_scale(1.0f);
    e.act = gconv_clamp(2.0f, -2.0f);
    a = gt_rargs(&env, why, sizeof why), a.epi = &e;
    gt_expect_refusal(im, &env, &env.p, &a, GCONV_ERR_ARGUMENT, "reversed clamp");
    a = gt_rargs(&env, why, sizeof why), a.d_in = (char *)env.din.p + 1;
    gt_expect_refusal(im, &env, &env.p, &a, GCONV_ERR_ALIGNMENT, "odd d_in address");
    a = gt_rargs(&env, why, sizeof why), a.workspace = NULL;
    gt_expect_refusal(im, &env, &env.p, &a, GCONV_ERR_WORKSPACE, "no workspace");
    a = gt_rargs(&env, why, sizeof why), a.workspace_size = env.ws_size - 2;
    gt_expect_refusal(im, &env, &env.p, &a, GCONV_ERR_WORKSPACE, "small workspace");
    a = gt_rargs(&env, why, sizeof why);
    q = env.p, q.stride[1] = 0;
    gt_expect_refusal(im, &env, &q, &a, GCONV_ERR_STRIDE, "stride 0");
    q = env.p, q.pad_lo[2] = -1;
    gt_expect_refusal(im, &env, &q, &a, GCONV_ERR_PAD, "negative pad");
    q = env.p, q.in_layout = GCONV_NGCHW, q.out_layout = GCONV_NGCHW;
    gt_expect_refusal(im, &env, &q, &a, GCONV_ERR_LAYOUT, "NGCHW into an NHWGC instantiation");
    q = env.p, q.wei_layout = GCONV_GKCYX;
    gt_expect_refusal(im, &env, &q, &a, GCONV_ERR_LAYOUT, "GKCYX into a GKYXC instantiation");
    a = gt_rargs(&env, NULL, 0), a.d_out = NULL;
    gt_expect_refusal(im, &env, &env.p, &a, GCONV_ERR_NULL, "null d_out, no why buffer");
    cr_expect(!im->supports(&q, why, sizeof why), "supports() accepted a wrong layout");
    gt_renv_free(&env);
}

Test(bwd_data, refuse_tiled, .timeout = 30)
{
    const gt_impl *im = &gt_tiled;
    gt_renv env;
    gconv_bwd_data_args a;
    gconv_problem q;
    char why[256];
    gt_require_gpu();
    gt_renv_setup(&env, im, 16, 12);
    a = gt_rargs(&env, why, sizeof why);
    gt_expect_refusal(im, &env, &env.p, &a, GCONV_ERR_ALIGNMENT, "K = 12 not a vector multiple");
    gt_renv_free(&env);
    gt_renv_setup(&env, im, 16, 16);
    a = gt_rargs(&env, why, sizeof why), a.d_in = (char *)env.din.p + 2;
    gt_expect_refusal(im, &env, &env.p, &a, GCONV_ERR_ALIGNMENT, "d_in not 16-byte aligned");
    a = gt_rargs(&env, why, sizeof why);
    q = env.p, q.stride[1] = 5;
    gt_expect_refusal(im, &env, &q, &a, GCONV_ERR_UNSUPPORTED, "stride 5");
    gt_renv_free(&env);
}
