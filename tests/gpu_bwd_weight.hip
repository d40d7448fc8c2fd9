/* tests/gpu_bwd_weight.hip: the backward-weight operation (gconv/bwd_weight.h) against the CPU
 * reference (gconv_ref_bwd_weight).
 *
 * One Criterion suite, "bwd_weight". Every test skips with the reason when there is no GPU and
 * has a timeout. What is tested:
 *   - sweep_*: seeded random problems (1D/2D/3D, the four layout combinations NHWGC/GKYXC,
 *     GNHWC/GKYXC, NGCHW/GKYXC, NGCHW/GKCYX, G = 1 / a few / depthwise / few channels, strides
 *     and dilations 1..3, asymmetric pads, odd sizes), 320 per data type (fp32, fp16, bf16 and
 *     bf16 in / fp32 out), each with a random split_k (automatic, 1 .. 64), reduction mode
 *     (fast / deterministic), epilogue (overwrite, scale, bilinear) and workspace alignment
 *     (16 bytes, or 4 bytes only: partials element by element); every weight element
 *     compared, nothing written outside d_wei (guard zones); deterministic cases run twice and
 *     must be bit-identical;
 *   - paths_*: fixed problems for each kernel (GEMM 128x128 and 64x64 tiles, the TC kernel's
 *     four tiles, depthwise DW with more than 9 taps, depthwise DWR 3x3 at the edges of its
 *     tiling, few-channel FEWC 4 and 8) with every split mode;
 *   - tiled: the pinned-tile instantiation;
 *   - determinism: a large-split deterministic run repeated 5 times, bit-identical;
 *   - bws_*: fixed problems for the warp-specialised Hopper kernel, each tile width pinned and
 *     automatic, every split mode, three type / layout variants;
 *   - refuse: refusals with their exact status and nothing launched;
 *   - huge: an input over 2 GB and 2^31 elements (FEWC, TC, BWS, GEMM and DWR paths), exact
 *     integer check.
 *
 * Tolerances (gt_tolerance of tests/gpu_common.h): fp32 accumulation over L = N * output pixels
 * products (the longest partial sum is at most that long), scaled by max|in| * max|d_out| *
 * |alpha| + |beta| * max|d_wei_old|, plus half an ulp of the output type.
 *
 * Build: ninja build/gpu/bin/gpu_bwd_weight   (nvcc sm_90) or see build.ninja.
 * Run: ./gpu_bwd_weight  (--verbose for per-test logs)
 */
#include "gpu_common.h"

#include "../gconv/bwd_weight.h"
#include "../gconv/reference.h"

/* ---- instantiations ------------------------------------------------------------------------ */

GCONV_BWD_WEIGHT(bww_f32_nhwgc, GCONV_F32, GCONV_NHWGC, GCONV_GKYXC)
GCONV_BWD_WEIGHT(bww_f32_gnhwc, GCONV_F32, GCONV_GNHWC, GCONV_GKYXC)
GCONV_BWD_WEIGHT(bww_f32_ngchw, GCONV_F32, GCONV_NGCHW, GCONV_GKYXC)
GCONV_BWD_WEIGHT(bww_f32_kcyx, GCONV_F32, GCONV_NGCHW, GCONV_GKCYX)
GCONV_BWD_WEIGHT(bww_f16_nhwgc, GCONV_F16, GCONV_NHWGC, GCONV_GKYXC)
GCONV_BWD_WEIGHT(bww_f16_gnhwc, GCONV_F16, GCONV_GNHWC, GCONV_GKYXC)
GCONV_BWD_WEIGHT(bww_f16_ngchw, GCONV_F16, GCONV_NGCHW, GCONV_GKYXC)
GCONV_BWD_WEIGHT(bww_f16_kcyx, GCONV_F16, GCONV_NGCHW, GCONV_GKCYX)
GCONV_BWD_WEIGHT(bww_bf16_nhwgc, GCONV_BF16, GCONV_NHWGC, GCONV_GKYXC)
GCONV_BWD_WEIGHT(bww_bf16_gnhwc, GCONV_BF16, GCONV_GNHWC, GCONV_GKYXC)
GCONV_BWD_WEIGHT(bww_bf16_ngchw, GCONV_BF16, GCONV_NGCHW, GCONV_GKYXC)
GCONV_BWD_WEIGHT(bww_bf16_kcyx, GCONV_BF16, GCONV_NGCHW, GCONV_GKCYX)
GCONV_BWD_WEIGHT_OUT(bww_bf32_nhwgc, GCONV_BF16, GCONV_F32, GCONV_NHWGC, GCONV_GKYXC)
GCONV_BWD_WEIGHT_OUT(bww_bf32_gnhwc, GCONV_BF16, GCONV_F32, GCONV_GNHWC, GCONV_GKYXC)
GCONV_BWD_WEIGHT_OUT(bww_bf32_ngchw, GCONV_BF16, GCONV_F32, GCONV_NGCHW, GCONV_GKYXC)
GCONV_BWD_WEIGHT_OUT(bww_bf32_kcyx, GCONV_BF16, GCONV_F32, GCONV_NGCHW, GCONV_GKCYX)
GCONV_BWD_WEIGHT_TILED(bww_tiled, GCONV_F16, GCONV_NHWGC, GCONV_GKYXC, GCONV_TILE_128x64x32)

typedef struct gt_bww_impl {
    const char *name;
    gconv_dtype t, tout;
    gconv_layout act, wei;
    int (*supports)(const gconv_problem *, char *, size_t);
    size_t (*ws)(const gconv_problem *, const gconv_bwd_weight_args *);
    gconv_status (*run)(const gconv_problem *, const gconv_bwd_weight_args *, hipStream_t);
} gt_bww_impl;

#define GT_IMPL(n, T, TO, A, W) {#n, T, TO, A, W, n##_supports, n##_workspace_size, n}
enum { GT_T_F32 = 0, GT_T_F16, GT_T_BF16, GT_T_BF32, GT_T_COUNT };
static const gt_bww_impl gt_impls[GT_T_COUNT][4] = {
    {GT_IMPL(bww_f32_nhwgc, GCONV_F32, GCONV_F32, GCONV_NHWGC, GCONV_GKYXC),
     GT_IMPL(bww_f32_gnhwc, GCONV_F32, GCONV_F32, GCONV_GNHWC, GCONV_GKYXC),
     GT_IMPL(bww_f32_ngchw, GCONV_F32, GCONV_F32, GCONV_NGCHW, GCONV_GKYXC),
     GT_IMPL(bww_f32_kcyx, GCONV_F32, GCONV_F32, GCONV_NGCHW, GCONV_GKCYX)},
    {GT_IMPL(bww_f16_nhwgc, GCONV_F16, GCONV_F16, GCONV_NHWGC, GCONV_GKYXC),
     GT_IMPL(bww_f16_gnhwc, GCONV_F16, GCONV_F16, GCONV_GNHWC, GCONV_GKYXC),
     GT_IMPL(bww_f16_ngchw, GCONV_F16, GCONV_F16, GCONV_NGCHW, GCONV_GKYXC),
     GT_IMPL(bww_f16_kcyx, GCONV_F16, GCONV_F16, GCONV_NGCHW, GCONV_GKCYX)},
    {GT_IMPL(bww_bf16_nhwgc, GCONV_BF16, GCONV_BF16, GCONV_NHWGC, GCONV_GKYXC),
     GT_IMPL(bww_bf16_gnhwc, GCONV_BF16, GCONV_BF16, GCONV_GNHWC, GCONV_GKYXC),
     GT_IMPL(bww_bf16_ngchw, GCONV_BF16, GCONV_BF16, GCONV_NGCHW, GCONV_GKYXC),
     GT_IMPL(bww_bf16_kcyx, GCONV_BF16, GCONV_BF16, GCONV_NGCHW, GCONV_GKCYX)},
    {GT_IMPL(bww_bf32_nhwgc, GCONV_BF16, GCONV_F32, GCONV_NHWGC, GCONV_GKYXC),
     GT_IMPL(bww_bf32_gnhwc, GCONV_BF16, GCONV_F32, GCONV_GNHWC, GCONV_GKYXC),
     GT_IMPL(bww_bf32_ngchw, GCONV_BF16, GCONV_F32, GCONV_NGCHW, GCONV_GKYXC),
     GT_IMPL(bww_bf32_kcyx, GCONV_BF16, GCONV_F32, GCONV_NGCHW, GCONV_GKCYX)},
};
static const gt_bww_impl gt_tiled_impl =
    GT_IMPL(bww_tiled, GCONV_F16, GCONV_F16, GCONV_NHWGC, GCONV_GKYXC);

/* ---- one case -------------------------------------------------------------------------------- */

enum { GT_EPI_OVERWRITE = 0, GT_EPI_SCALE, GT_EPI_BILINEAR, GT_EPI_COUNT };

typedef struct gt_opts {
    int epi;      /* GT_EPI_* */
    int split_k;  /* 0 = automatic */
    int det;      /* deterministic mode */
    int init;     /* GT_INIT_* */
    int repeats;  /* extra deterministic runs compared bit for bit (det only) */
    int algo;     /* GCONV_BWD_WEIGHT_ALGO_* */
    int ws_off;   /* bytes the workspace pointer is moved by (4: 4- but not 16-byte aligned) */
} gt_opts;

static int gt_paths[3];

/* Run p on impl im with options o; compare with the reference. Returns 1 on pass; on failure
 * records a Criterion expectation failure with the problem and the worst element. */
static int gt_case(const gt_bww_impl *im, const gconv_problem *p, const gt_opts *o, uint64_t seed)
{
    char pb[256], why[256], rb[512];
    gt_rng r = gt_rng_make(seed);
    const size_t esz = gconv_dtype_size(im->t), osz = gconv_dtype_size(im->tout);
    const int64_t n_in = gconv_in_elems(p), n_out = gconv_out_elems(p), n_w = gconv_wei_elems(p);
    void *h_in = gt_host_alloc((size_t)n_in * esz), *h_dout = gt_host_alloc((size_t)n_out * esz);
    void *h_old = gt_host_alloc((size_t)n_w * osz), *h_got = gt_host_alloc((size_t)n_w * osz);
    float *ref = (float *)gt_host_alloc((size_t)n_w * sizeof(float));
    void *d_in, *d_dout, *d_ws = NULL;
    gt_guarded gw;
    gconv_bwd_weight_args a;
    gconv_status s;
    size_t wsb;
    float alpha = 1.0f, beta = 0.0f;
    double maxold = 0.0, scale;
    int ok = 1, rep;
    int64_t i, bad = 0, unwritten = 0, worst_i = -1;
    double worst = -1.0;
    gt_tol tol;

    gt_problem_str(p, pb, sizeof pb);
    if (o->epi == GT_EPI_SCALE)
        alpha = gt_rng_int(&r, 0, 1) ? -1.5f : 0.5f;
    else if (o->epi == GT_EPI_BILINEAR)
        alpha = 0.75f, beta = gt_rng_int(&r, 0, 1) ? -0.5f : 1.0f;
    gt_fill(im->t, h_in, (size_t)n_in, &r, o->init);
    gt_fill(im->t, h_dout, (size_t)n_out, &r, o->init);
    if (beta != 0.0f) {
        gt_fill(im->tout, h_old, (size_t)n_w, &r, o->init);
    } else {
        gt_poison_host(h_old, (size_t)n_w * osz); /* beta 0: d_wei must not be read */
    }
    for (i = 0; i < n_w; i++) {
        ref[i] = beta != 0.0f ? gconv_load_f32(im->tout, h_old, (size_t)i) : 0.0f;
        if (fabs(ref[i]) > maxold)
            maxold = fabs(ref[i]);
    }
    s = gconv_ref_bwd_weight(p, im->t, h_in, h_dout, ref, GCONV_F32, alpha, beta);
    cr_assert(s == GCONV_OK, "reference failed: %s", gconv_status_name(s));

    d_in = gt_dev_upload(h_in, (size_t)n_in * esz);
    d_dout = gt_dev_upload(h_dout, (size_t)n_out * esz);
    gw = gt_guarded_alloc((size_t)n_w * osz);
    memset(&a, 0, sizeof a);
    a.in = d_in, a.d_out = d_dout, a.d_wei = gw.p;
    a.alpha = alpha, a.beta = beta;
    a.split_k = o->split_k, a.deterministic = o->det, a.algo = o->algo;
    a.why = why, a.why_len = sizeof why;
    wsb = im->ws(p, &a);
    if (wsb) {
        d_ws = gt_dev_alloc(wsb + 16);
        GT_CHECK(hipMemset(d_ws, 0xFF, wsb + 16)); /* poison: the launcher must zero what it sums */
    }
    a.workspace = d_ws ? (char *)d_ws + o->ws_off : NULL, a.workspace_size = wsb;
    {
        const int pa = gconv_impl_bww_path_algo(p, im->t, d_in, d_dout, o->algo);
        gt_paths[pa < 0 ? 0 : pa]++;
    }

    for (rep = 0; rep <= (o->det ? o->repeats : 0) && ok; rep++) {
        GT_CHECK(hipMemcpy(gw.p, h_old, (size_t)n_w * osz, hipMemcpyHostToDevice));
        if (rep > 0 && wsb)
            GT_CHECK(hipMemset(d_ws, 0xFF, wsb + 16));
        s = im->run(p, &a, 0);
        if (s != GCONV_OK) {
            cr_expect_fail("%s: %s: launch refused: %s (%s)", im->name, pb,
                           gconv_status_name(s), why);
            ok = 0;
            break;
        }
        GT_CHECK(hipDeviceSynchronize());
        if (rep == 0) {
            gt_dev_download(h_got, gw.p, (size_t)n_w * osz);
        } else {
            void *again = gt_host_alloc((size_t)n_w * osz);
            gt_dev_download(again, gw.p, (size_t)n_w * osz);
            if (memcmp(again, h_got, (size_t)n_w * osz)) {
                cr_expect_fail("%s: %s: deterministic run %d differs from run 0 (split_k %d)",
                               im->name, pb, rep, o->split_k);
                ok = 0;
            }
            free(again);
        }
    }
    if (ok) {
        long long first = 0;
        size_t gb = gt_guarded_check(&gw, &first);
        if (gb) {
            cr_expect_fail("%s: %s: %zu guard bytes written (first at %lld)", im->name, pb, gb,
                           first);
            ok = 0;
        }
    }
    if (ok) {
        scale = gt_init_max(o->init) * gt_init_max(o->init) * fabs(alpha) +
                fabs(beta) * maxold;
        tol = gt_tolerance(im->tout, (int64_t)p->N * gconv_out_spatial(p), scale, 0);
        for (i = 0; i < n_w; i++) {
            const double v = gconv_load_f32(im->tout, h_got, (size_t)i), rv = ref[i];
            const double allowed = tol.atol + tol.rtol * fabs(rv);
            const double ratio = v == v ? fabs(v - rv) / allowed : INFINITY;
            if (gt_is_poison(im->tout, h_got, (size_t)i))
                unwritten++;
            if (!(ratio <= 1.0))
                bad++;
            if (ratio > worst)
                worst = ratio, worst_i = i;
        }
        if (bad) {
            snprintf(rb, sizeof rb,
                     "%lld of %lld weights out of tolerance (%lld unwritten); worst flat index "
                     "%lld: got %.9g want %.9g allowed %.3g",
                     (long long)bad, (long long)n_w, (long long)unwritten, (long long)worst_i,
                     gconv_load_f32(im->tout, h_got, (size_t)worst_i), ref[worst_i],
                     tol.atol + tol.rtol * fabs(ref[worst_i]));
            cr_expect_fail("%s: %s: split_k %d det %d epi %d algo %d path %d: %s", im->name, pb,
                           o->split_k, o->det, o->epi, o->algo,
                           gconv_impl_bww_path_algo(p, im->t, d_in, d_dout, o->algo), rb);
            ok = 0;
        }
    }
    gt_dev_free(d_in);
    gt_dev_free(d_dout);
    gt_dev_free(d_ws);
    gt_guarded_free(&gw);
    free(h_in), free(h_dout), free(h_old), free(h_got), free(ref);
    return ok;
}

/* ---- random problems ------------------------------------------------------------------------- */

static double gt_macs(const gconv_problem *p)
{
    return (double)gconv_wei_elems(p) * p->N * gconv_out_spatial(p);
}

static void gt_random_problem(gt_rng *r, gconv_problem *p, double max_macs)
{
    for (;;) {
        int nd = gt_rng_int(r, 0, 99), kind = gt_rng_int(r, 0, 99);
        int ndim = nd < 30 ? 1 : nd < 75 ? 2 : 3;
        int G, C, K, N, i;
        int in[3], f[3], s[3], dl[3], pl[3], ph[3];
        if (kind < 25) { /* dense, GEMM */
            G = 1, C = gt_rng_int(r, 1, 48), K = gt_rng_int(r, 1, 48);
        } else if (kind < 45) { /* a few groups */
            G = gt_rng_int(r, 2, 5), C = gt_rng_int(r, 1, 40), K = gt_rng_int(r, 1, 40);
        } else if (kind < 70) { /* depthwise, vector-friendly G half of the time */
            G = gt_rng_int(r, 0, 1) ? 8 * gt_rng_int(r, 1, 12) : gt_rng_int(r, 1, 70);
            C = 1, K = 1;
        } else { /* few channels per group (FEWC: C, K <= 8; a few above) */
            G = gt_rng_int(r, 1, 40), C = gt_rng_int(r, 1, 10), K = gt_rng_int(r, 1, 10);
            if (gt_rng_int(r, 0, 1))
                C = C < 5 ? 4 : 8, K = C; /* vector loads */
        }
        if (kind < 45 && gt_rng_int(r, 0, 1)) {
            /* multiples of 8 (C, and K half of the time): the vector gathers */
            C = 8 * ((C + 7) / 8);
            if (gt_rng_int(r, 0, 1))
                K = 8 * ((K + 7) / 8);
        }
        N = gt_rng_int(r, 1, 3);
        for (i = 0; i < ndim; i++) {
            int maxf = ndim == 3 ? 3 : 5, span, extra = ndim == 1 ? 60 : ndim == 2 ? 14 : 6;
            f[i] = gt_rng_int(r, 0, 4) ? gt_rng_int(r, 1, maxf) : 1;
            s[i] = gt_rng_int(r, 1, 3);
            dl[i] = gt_rng_int(r, 0, 2) ? 1 : gt_rng_int(r, 2, 3);
            pl[i] = gt_rng_int(r, 0, 2);
            ph[i] = gt_rng_int(r, 0, 2);
            span = dl[i] * (f[i] - 1) + 1;
            in[i] = span - pl[i] - ph[i];
            if (in[i] < 1)
                in[i] = 1;
            in[i] += gt_rng_int(r, 0, extra);
        }
        gconv_problem_nd(p, ndim, G, N, C, K, in, f, s, pl, dl);
        for (i = 0; i < ndim; i++)
            p->pad_hi[3 - ndim + i] = ph[i];
        if (gconv_problem_check(p, NULL, 0) != GCONV_OK)
            continue;
        if (gt_macs(p) > max_macs || gconv_out_elems(p) > 300000 || gconv_in_elems(p) > 300000)
            continue;
        return;
    }
}

static void gt_set_layouts(gconv_problem *p, const gt_bww_impl *im)
{
    gconv_problem_set_layouts(p, im->act, im->wei);
}

static const int gt_splits[10] = {0, 0, 0, 1, 2, 3, 5, 16, 33, 64};

static gt_opts gt_random_opts(gt_rng *r)
{
    gt_opts o;
    memset(&o, 0, sizeof o);
    o.split_k = gt_splits[gt_rng_int(r, 0, 9)];
    o.det = gt_rng_int(r, 0, 1);
    o.epi = gt_rng_int(r, 0, GT_EPI_COUNT - 1);
    o.init = gt_rng_int(r, 0, 4) ? GT_INIT_DECIMAL : GT_INIT_INT;
    o.repeats = o.det && gt_rng_int(r, 0, 3) == 0 ? 1 : 0;
    o.algo = GCONV_BWD_WEIGHT_ALGO_AUTO;
    o.ws_off = gt_rng_int(r, 0, 3) == 0 ? 4 : 0; /* a 4- but not 16-byte aligned workspace */
    return o;
}

#define GT_SWEEP_PER_FAMILY 80
#define GT_SWEEP_MAX_MACS 1.5e6

static void gt_sweep(int ti, int fi)
{
    const gt_bww_impl *im = &gt_impls[ti][fi];
    gt_rng r = gt_rng_make(0xB00E0000u + (uint64_t)ti * 16 + (uint64_t)fi);
    int i, pass = 0;
    gt_require_gpu();
    memset(gt_paths, 0, sizeof gt_paths);
    for (i = 0; i < GT_SWEEP_PER_FAMILY; i++) {
        gconv_problem p;
        gt_opts o = gt_random_opts(&r);
        gt_random_problem(&r, &p, GT_SWEEP_MAX_MACS);
        gt_set_layouts(&p, im);
        pass += gt_case(im, &p, &o, gt_rng_next(&r));
    }
    cr_log_info("%s: %d of %d random problems pass (paths GEMM %d DW %d FEWC %d)", im->name,
                pass, GT_SWEEP_PER_FAMILY, gt_paths[0], gt_paths[1], gt_paths[2]);
}

Test(bwd_weight, sweep_f32_nhwgc, .timeout = 60) { gt_sweep(GT_T_F32, 0); }
Test(bwd_weight, sweep_f32_gnhwc, .timeout = 60) { gt_sweep(GT_T_F32, 1); }
Test(bwd_weight, sweep_f32_ngchw, .timeout = 60) { gt_sweep(GT_T_F32, 2); }
Test(bwd_weight, sweep_f32_ngchw_kcyx, .timeout = 60) { gt_sweep(GT_T_F32, 3); }
Test(bwd_weight, sweep_f16_nhwgc, .timeout = 60) { gt_sweep(GT_T_F16, 0); }
Test(bwd_weight, sweep_f16_gnhwc, .timeout = 60) { gt_sweep(GT_T_F16, 1); }
Test(bwd_weight, sweep_f16_ngchw, .timeout = 60) { gt_sweep(GT_T_F16, 2); }
Test(bwd_weight, sweep_f16_ngchw_kcyx, .timeout = 60) { gt_sweep(GT_T_F16, 3); }
Test(bwd_weight, sweep_bf16_nhwgc, .timeout = 60) { gt_sweep(GT_T_BF16, 0); }
Test(bwd_weight, sweep_bf16_gnhwc, .timeout = 60) { gt_sweep(GT_T_BF16, 1); }
Test(bwd_weight, sweep_bf16_ngchw, .timeout = 60) { gt_sweep(GT_T_BF16, 2); }
Test(bwd_weight, sweep_bf16_ngchw_kcyx, .timeout = 60) { gt_sweep(GT_T_BF16, 3); }
Test(bwd_weight, sweep_bf16_f32_nhwgc, .timeout = 60) { gt_sweep(GT_T_BF32, 0); }
Test(bwd_weight, sweep_bf16_f32_gnhwc, .timeout = 60) { gt_sweep(GT_T_BF32, 1); }
Test(bwd_weight, sweep_bf16_f32_ngchw, .timeout = 60) { gt_sweep(GT_T_BF32, 2); }
Test(bwd_weight, sweep_bf16_f32_ngchw_kcyx, .timeout = 60) { gt_sweep(GT_T_BF32, 3); }

/* ---- fixed problems per kernel path ------------------------------------------------------------ */

typedef struct gt_fixed {
    const char *what;
    int ndim, G, N, C, K, in[3], f[3], s[3], d[3], pl[3], ph[3];
} gt_fixed;

static const gt_fixed gt_fixed_cases[] = {
    /* GEMM 128x128 tile (K >= 96, C*taps >= 96), partial tiles */
    {"gemm128", 2, 1, 2, 40, 100, {1, 9, 11}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 1, 1}, {0, 1, 0}},
    {"gemm128 g2", 2, 2, 1, 13, 130, {1, 7, 6}, {1, 3, 3}, {1, 2, 1}, {1, 1, 2}, {0, 2, 1}, {0, 0, 2}},
    {"gemm128 vec", 2, 1, 2, 16, 128, {1, 9, 10}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 1, 1}, {0, 1, 1}},
    {"gemm64 vec", 2, 2, 2, 24, 40, {1, 11, 9}, {1, 3, 3}, {1, 2, 1}, {1, 1, 2}, {0, 1, 2}, {0, 2, 1}},
    {"gemm64 bvec", 2, 1, 2, 32, 36, {1, 8, 9}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 1, 1}, {0, 1, 1}},
    /* GEMM 64x64, dense and grouped */
    {"gemm64", 2, 1, 3, 33, 20, {1, 10, 9}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 1, 1}, {0, 1, 1}},
    {"gemm64 3d", 3, 3, 2, 17, 18, {5, 6, 7}, {3, 3, 3}, {2, 1, 1}, {1, 1, 1}, {1, 1, 1}, {0, 1, 2}},
    /* DW: 3x3 s1, 5x5 (two tap chunks), 1D 7 taps, stride 2 */
    {"dw 3x3", 2, 64, 2, 1, 1, {1, 13, 12}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 1, 1}, {0, 1, 1}},
    {"dw 5x5 s2", 2, 40, 2, 1, 1, {1, 15, 14}, {1, 5, 5}, {1, 2, 2}, {1, 1, 1}, {0, 2, 2}, {0, 1, 2}},
    {"dw 1d", 1, 24, 3, 1, 1, {1, 1, 50}, {1, 1, 7}, {1, 1, 1}, {1, 1, 2}, {0, 0, 3}, {0, 0, 5}},
    {"dw 3d", 3, 16, 1, 1, 1, {4, 6, 7}, {3, 3, 3}, {1, 2, 1}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}},
    /* DWR (3x3, stride 1 / 2, rows streamed): widths not a multiple of the columns per thread
     * (4 at stride 1, 2 at stride 2), one-row images, pads 0 and 2 (asymmetric), a trivial
     * depth axis, several channel blocks (G = 200: 50 vectors of 4 channels) */
    {"dwr s1 w13", 2, 64, 3, 1, 1, {1, 11, 13}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 1, 1}, {0, 1, 1}},
    {"dwr s1 one row", 2, 16, 5, 1, 1, {1, 1, 9}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 1, 1}, {0, 1, 1}},
    {"dwr s1 pad0", 2, 40, 2, 1, 1, {1, 7, 6}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0}, {0, 0, 0}},
    {"dwr s1 pad2", 2, 8, 2, 1, 1, {1, 10, 17}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 2, 2}, {0, 0, 1}},
    {"dwr s2 pad0", 2, 24, 2, 1, 1, {1, 12, 15}, {1, 3, 3}, {1, 2, 2}, {1, 1, 1}, {0, 0, 0}, {0, 0, 0}},
    {"dwr s2 pad2", 2, 32, 3, 1, 1, {1, 9, 10}, {1, 3, 3}, {1, 2, 2}, {1, 1, 1}, {0, 2, 2}, {0, 2, 1}},
    {"dwr s2 one row", 2, 8, 3, 1, 1, {1, 2, 7}, {1, 3, 3}, {1, 2, 2}, {1, 1, 1}, {0, 1, 1}, {0, 0, 1}},
    {"dwr 3d depth", 3, 16, 2, 1, 1, {3, 5, 6}, {1, 3, 3}, {1, 1, 1}, {2, 1, 1}, {0, 1, 1}, {0, 1, 1}},
    {"dwr g200", 2, 200, 2, 1, 1, {1, 6, 7}, {1, 3, 3}, {1, 2, 2}, {1, 1, 1}, {0, 1, 1}, {0, 1, 1}},
    {"dwr tall", 2, 16, 1, 1, 1, {1, 70, 5}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 1, 1}, {0, 1, 1}},
    /* FEWC 4 and 8: ResNeXt-like */
    {"fewc4", 2, 32, 2, 4, 4, {1, 12, 11}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 1, 1}, {0, 1, 1}},
    {"fewc8", 2, 32, 2, 8, 8, {1, 9, 10}, {1, 3, 3}, {1, 2, 2}, {1, 1, 1}, {0, 1, 1}, {0, 1, 1}},
    {"gemm c16", 2, 8, 2, 16, 16, {1, 7, 7}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 1, 1}, {0, 1, 1}},
    {"fewc odd", 2, 7, 2, 5, 7, {1, 8, 9}, {1, 3, 2}, {1, 1, 2}, {1, 2, 1}, {0, 1, 0}, {0, 2, 1}},
    {"fewc4 5x5", 2, 16, 2, 4, 4, {1, 9, 9}, {1, 5, 5}, {1, 1, 1}, {1, 1, 1}, {0, 2, 2}, {0, 2, 2}},
    {"fewc4t odd", 2, 9, 2, 3, 2, {1, 9, 8}, {1, 3, 3}, {1, 2, 1}, {1, 1, 2}, {0, 1, 2}, {0, 0, 1}},
    /* TC kernel (CUDA, fp16 / bf16, NHWGC / GNHWC, C and K multiples of 8): each tile kind,
     * partial tiles, strides, dilations, asymmetric pads, 1D / 3D, output rows narrower than
     * the 32-pixel stage (several carries per stage) and wider */
    {"tc k80", 2, 1, 2, 16, 80, {1, 9, 11}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 1, 1}, {0, 1, 0}},
    {"tc k136 g2", 2, 2, 1, 24, 136, {1, 7, 40}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 1, 1}, {0, 1, 1}},
    {"tc k48 s2 d2", 2, 2, 3, 8, 48, {1, 13, 12}, {1, 3, 3}, {1, 2, 2}, {1, 2, 2}, {0, 2, 1}, {0, 0, 2}},
    {"tc k24 3d", 3, 3, 2, 16, 24, {5, 6, 7}, {1, 3, 3}, {2, 1, 1}, {1, 1, 1}, {1, 1, 1}, {0, 1, 2}},
    {"tc k8 g4", 2, 4, 2, 8, 8, {1, 5, 3}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 1, 1}, {0, 1, 1}},
    {"tc k16 1d", 1, 2, 3, 32, 16, {1, 1, 50}, {1, 1, 5}, {1, 1, 1}, {1, 1, 3}, {0, 0, 4}, {0, 0, 7}},
    {"tc k64 5x5", 2, 1, 2, 40, 64, {1, 12, 9}, {1, 5, 5}, {1, 1, 2}, {1, 1, 1}, {0, 2, 2}, {0, 1, 2}},
    /* K % 8 == 4: d_out chunks in 8-byte halves, the last half zero-filled */
    {"tc k36", 2, 1, 2, 32, 36, {1, 10, 9}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 1, 1}, {0, 1, 1}},
    {"tc k68 s2", 2, 2, 1, 16, 68, {1, 9, 13}, {1, 3, 3}, {1, 2, 2}, {1, 1, 1}, {0, 1, 0}, {0, 0, 1}},
    {"tc k4 c16", 2, 3, 2, 16, 4, {1, 6, 7}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 1, 1}, {0, 1, 1}},
    /* BWH kernel (CUDA, fp16 / bf16, NHWGC, C = K in {8, 16, 32}, stride 1, <= 10 taps, the
     * automatic algorithm without a user split): several group chunks, a partial chunk,
     * dilation with asymmetric pads, 1D, a short last band; "tc k8 g4" and "gemm c16" above
     * take it too, and "fewc4" (C = K = 4, G even: pair mode) with split_k 0 */
    {"bwh c8 g16", 2, 16, 2, 8, 8, {1, 12, 11}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 1, 1}, {0, 1, 1}},
    {"bwh c16 g6", 2, 6, 2, 16, 16, {1, 9, 10}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 1, 1}, {0, 1, 1}},
    {"bwh c16 d2", 2, 3, 2, 16, 16, {1, 9, 9}, {1, 3, 3}, {1, 1, 1}, {1, 2, 2}, {0, 2, 1}, {0, 1, 2}},
    {"bwh c8 1d", 1, 8, 3, 8, 8, {1, 1, 40}, {1, 1, 5}, {1, 1, 1}, {1, 1, 2}, {0, 0, 3}, {0, 0, 1}},
    {"bwh c16 tall", 2, 4, 1, 16, 16, {1, 23, 6}, {1, 3, 2}, {1, 1, 1}, {1, 1, 1}, {0, 1, 0}, {0, 1, 1}},
    /* C = K = 32 (16 warps, two per m-tile range): a partial chunk, 1D with dilation, 10 taps */
    {"bwh c32 g3", 2, 3, 2, 32, 32, {1, 9, 10}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 1, 1}, {0, 1, 1}},
    {"bwh c32 1d d2", 1, 2, 3, 32, 32, {1, 1, 30}, {1, 1, 5}, {1, 1, 1}, {1, 1, 2}, {0, 0, 3}, {0, 0, 1}},
    {"bwh c32 5x2", 2, 2, 2, 32, 32, {1, 11, 8}, {1, 5, 2}, {1, 1, 1}, {1, 1, 1}, {0, 2, 0}, {0, 2, 1}},
    /* pair mode: G = 6 (three pairs, a partial chunk), dilation, 1D */
    {"bwh pair g6 d2", 2, 6, 2, 4, 4, {1, 9, 10}, {1, 3, 3}, {1, 1, 1}, {1, 2, 2}, {0, 2, 1}, {0, 1, 2}},
    {"bwh pair 1d", 1, 34, 2, 4, 4, {1, 1, 37}, {1, 1, 5}, {1, 1, 1}, {1, 1, 1}, {0, 0, 2}, {0, 0, 2}},
};

static void gt_fixed_problem(const gt_fixed *e, gconv_problem *p)
{
    int i;
    memset(p, 0, sizeof *p);
    p->ndim = e->ndim, p->G = e->G, p->N = e->N, p->C = e->C, p->K = e->K;
    for (i = 0; i < 3; i++) {
        p->in[i] = e->in[i], p->filter[i] = e->f[i], p->stride[i] = e->s[i];
        p->dilation[i] = e->d[i], p->pad_lo[i] = e->pl[i], p->pad_hi[i] = e->ph[i];
    }
}

static void gt_paths_for(int ti)
{
    const int nf = (int)(sizeof gt_fixed_cases / sizeof gt_fixed_cases[0]);
    static const int splits[4] = {0, 1, 7, 64};
    int i, j, fi, pass = 0, total = 0;
    gt_rng r = gt_rng_make(0xF1C5u + (uint64_t)ti);
    gt_require_gpu();
    for (i = 0; i < nf; i++)
        for (fi = 0; fi < 4; fi += 3) /* NHWGC (direct kernels) and NGCHW/GKCYX */
            for (j = 0; j < 8; j++) {
                gconv_problem p;
                gt_opts o;
                memset(&o, 0, sizeof o);
                gt_fixed_problem(&gt_fixed_cases[i], &p);
                gt_set_layouts(&p, &gt_impls[ti][fi]);
                o.split_k = splits[j % 4], o.det = j / 4, o.epi = j % 3;
                o.init = GT_INIT_DECIMAL, o.repeats = o.det;
                o.algo = GCONV_BWD_WEIGHT_ALGO_AUTO;
                pass += gt_case(&gt_impls[ti][fi], &p, &o, gt_rng_next(&r));
                total++;
            }
    cr_log_info("paths type %d: %d of %d pass", ti, pass, total);
}

Test(bwd_weight, paths_f32, .timeout = 60) { gt_paths_for(GT_T_F32); }
Test(bwd_weight, paths_f16, .timeout = 60) { gt_paths_for(GT_T_F16); }
Test(bwd_weight, paths_bf16, .timeout = 60) { gt_paths_for(GT_T_BF16); }
Test(bwd_weight, paths_bf16_f32, .timeout = 60) { gt_paths_for(GT_T_BF32); }

/* Forced algorithms: every fixed problem through the GEMM and through the direct kernels. */
static void gt_algos_for(int ti)
{
    const int nf = (int)(sizeof gt_fixed_cases / sizeof gt_fixed_cases[0]);
    int i, j;
    gt_rng r = gt_rng_make(0xA160u + (uint64_t)ti);
    gt_require_gpu();
    for (i = 0; i < nf; i++)
        for (j = 0; j < 4; j++) {
            gconv_problem p;
            gt_opts o = gt_random_opts(&r);
            gt_fixed_problem(&gt_fixed_cases[i], &p);
            gt_set_layouts(&p, &gt_impls[ti][0]);
            o.algo = j % 2 ? GCONV_BWD_WEIGHT_ALGO_DIRECT : GCONV_BWD_WEIGHT_ALGO_GEMM;
            o.det = j / 2;
            o.repeats = o.det;
            gt_case(&gt_impls[ti][0], &p, &o, gt_rng_next(&r));
        }
}

Test(bwd_weight, algos_f16, .timeout = 60) { gt_algos_for(GT_T_F16); }
Test(bwd_weight, algos_f32, .timeout = 60) { gt_algos_for(GT_T_F32); }

Test(bwd_weight, tiled, .timeout = 60)
{
    gt_rng r = gt_rng_make(0x711Eu);
    int i;
    gt_require_gpu();
    for (i = 0; i < 24; i++) {
        gconv_problem p;
        gt_opts o = gt_random_opts(&r);
        gt_random_problem(&r, &p, GT_SWEEP_MAX_MACS);
        gt_set_layouts(&p, &gt_tiled_impl);
        gt_case(&gt_tiled_impl, &p, &o, gt_rng_next(&r));
    }
}

/* Deterministic mode over many splits (atomics would reorder): 5 runs, bit-identical. */
Test(bwd_weight, determinism, .timeout = 60)
{
    static const int which[4][2] = {{GT_T_F16, 0}, {GT_T_F32, 3}, {GT_T_BF16, 0}, {GT_T_BF32, 1}};
    static const gt_fixed cs[4] = {
        {"dense", 2, 1, 4, 24, 40, {1, 20, 20}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 1, 1}, {0, 1, 1}},
        {"dense kcyx", 2, 2, 4, 9, 20, {1, 16, 16}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 1, 1}, {0, 1, 1}},
        {"dw", 2, 96, 4, 1, 1, {1, 24, 24}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 1, 1}, {0, 1, 1}},
        {"fewc", 2, 16, 4, 4, 4, {1, 20, 20}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 1, 1}, {0, 1, 1}},
    };
    int i, j;
    gt_require_gpu();
    for (i = 0; i < 4; i++)
        for (j = 0; j < 2; j++) {
            gconv_problem p;
            gt_opts o;
            memset(&o, 0, sizeof o);
            const gt_bww_impl *im = &gt_impls[which[i][0]][which[i][1]];
            gt_fixed_problem(&cs[i], &p);
            gt_set_layouts(&p, im);
            o.split_k = j ? 0 : 64, o.det = 1, o.epi = GT_EPI_BILINEAR;
            o.init = GT_INIT_DECIMAL, o.repeats = 4, o.algo = GCONV_BWD_WEIGHT_ALGO_AUTO;
            gt_case(im, &p, &o, 77 + (uint64_t)i);
        }
}

/* That no BWH block of this test process fell back from the copy engine that its plan had (a
 * dynamic shared-memory base off 128 bytes: silent but for gconv_impl_bwh_tma_missed, which
 * sm_90a device code counts; a 16-byte static declaration once caused it on every C = 32
 * launch). Criterion runs each test in a process of its own, so the count is the test's; the
 * counter is static, one per translation unit, and this file's kernels are its own. Without
 * sm_90a code nothing is counted and the check passes vacuously. */
static void gt_bwh_tma_check(void)
{
#if defined(GCONV_PLATFORM_CUDA)
    unsigned missed = 0u;
    cr_assert(cudaMemcpyFromSymbol(&missed, gconv_impl_bwh_tma_missed, sizeof missed) ==
              cudaSuccess);
    cr_expect(missed == 0u, "%u BWH blocks fell back from the copy engine to cp.async", missed);
#endif
}

/* The finalize's 128-lane vector form (from GCONV_IMPL_BWW_FIN128_FROM slabs: four warps a
 * quad, their sums added through shared memory): a BWH problem (C = K = 8, 28x28, 448 units)
 * pinned to 400 blocks, 100 slabs a chunk, fp16 and bf16, deterministic (repeated, bit for
 * bit) and fast, the three epilogues, the workspace 16-byte aligned (16-byte loads) and not
 * (the 4-byte-load kernel); and on every platform the direct depthwise kernel (5x5: not DWR)
 * with a user split_k of 300 (over 128 slabs: a lane's loop runs twice), fp32 with G = 260 (an
 * odd number of quads, 1625) and fp16 with G = 256, both modes. The plans are asked that they
 * take the form, so the test cannot pass on another finalize. */
Test(bwd_weight, fin128, .timeout = 120)
{
    static const int types[2] = {GT_T_F16, GT_T_BF16};
    int t, j, n = 0;
    gt_require_gpu();
    gconv_impl_bwh_blocks = 400;
    for (t = 0; t < 2; t++)
        for (j = 0; j < 4; j++) {
            gconv_problem p;
            gconv_impl_bww_params P;
            gconv_impl_bwh_params B;
            gt_opts o;
            const gt_bww_impl *im = &gt_impls[types[t]][0];
            memset(&o, 0, sizeof o);
            gconv_problem_2d(&p, 32, 16, 8, 8, 28, 28, 3, 3, 1, 1, 1, 1, 1, 1);
            gt_set_layouts(&p, im);
            o.split_k = 0, o.det = j & 1, o.epi = (t + j) % GT_EPI_COUNT;
            o.ws_off = j >= 2 ? 4 : 0;
            o.init = GT_INIT_DECIMAL, o.repeats = o.det ? 2 : 0;
            o.algo = GCONV_BWD_WEIGHT_ALGO_AUTO;
#if defined(GCONV_PLATFORM_CUDA) /* BWH: mma.sync */
            gconv_impl_bww_fill(&p, im->t, im->tout, &P);
            P.in = P.dout = (const void *)(uintptr_t)4096;
            cr_assert(gconv_impl_bwh_plan(&p, &P, o.det, &B), "not BWH");
            cr_assert(B.w.splits >= GCONV_IMPL_BWW_FIN128_FROM && B.w.fl == 8 && B.w.fvl == 128,
                      "%d slabs, finalize form %d / %d lanes, not 128 lanes a quad", B.w.splits,
                      B.w.fl, B.w.fvl);
#else
            (void)P, (void)B;
#endif
            gt_case(im, &p, &o, 0xF128u + (uint64_t)n++);
        }
    gconv_impl_bwh_blocks = 0;
    for (t = 0; t < 2; t++)
        for (j = 0; j < 2; j++) {
            gconv_problem p;
            gconv_impl_bww_params P;
            gt_opts o;
            const gt_bww_impl *im = &gt_impls[t ? GT_T_F16 : GT_T_F32][0];
            const int G = t ? 256 : 260;
            int path;
            memset(&o, 0, sizeof o);
            gconv_problem_2d(&p, G, 4, 1, 1, 96, 96, 5, 5, 1, 1, 2, 2, 1, 1);
            gt_set_layouts(&p, im);
            o.split_k = 300, o.det = j, o.epi = (t + j) % GT_EPI_COUNT;
            o.init = GT_INIT_DECIMAL, o.repeats = o.det;
            o.algo = GCONV_BWD_WEIGHT_ALGO_DIRECT;
            gconv_impl_bww_fill(&p, im->t, im->tout, &P);
            P.in = P.dout = (const void *)(uintptr_t)4096;
            path = gconv_impl_bww_path_algo(&p, im->t, P.in, P.dout, o.algo);
            cr_assert(path == GCONV_IMPL_BWW_PATH_DW, "G %d: path %d, not the depthwise kernel",
                      G, path);
            gconv_impl_bww_plan(&P, path, 0, 0, 0, o.split_k, o.det);
            cr_assert(P.splits > 128 && P.fl == 8 && P.fvl == 128,
                      "G %d: %d slabs, finalize form %d / %d lanes, not 128 lanes over more than "
                      "128 slabs", G, P.splits, P.fl, P.fvl);
            gt_case(im, &p, &o, 0xF128u + (uint64_t)n++);
        }
}

/* The BWH kernel's persistent grid: more units than resident blocks, so block ranges cross
 * group chunks and several blocks share a chunk (slabs; at C = 32 on sm_90a the cluster
 * forms, bwh_cluster); C = K = 8, 16, 32 ResNeXt-like (and
 * 4, G = 64, in pair mode), 16 images, deterministic (repeated, bit for bit) and fast, fp16
 * and bf16; each with its copies by the copy engine where the build has it (checked: the
 * plan takes it; the kernel still falls back to cp.async on a device pass without sm_90a or
 * a misaligned shared-memory base, which this does not see) and on cp.async
 * (gconv_impl_bwh_no_tma). The other BWH problems of this file run with the copy engine where
 * it takes them. */
Test(bwd_weight, bwh_persistent, .timeout = 180)
{
    static const int cs[4] = {8, 16, 32, 4}, hw[4] = {28, 14, 7, 40};
    int i, j, t;
    gt_require_gpu();
    for (t = 0; t < 2; t++)
        for (i = 0; i < 4; i++)
            for (j = 0; j < 2; j++) {
                gconv_problem p;
                gt_opts o;
                memset(&o, 0, sizeof o);
                const gt_bww_impl *im = &gt_impls[j ? GT_T_BF16 : GT_T_F16][0];
                gconv_problem_2d(&p, 256 / cs[i], 16, cs[i], cs[i], hw[i], hw[i], 3, 3, 1, 1, 1,
                                 1, 1, 1);
                gt_set_layouts(&p, im);
                gconv_impl_bwh_no_tma = t;
                o.split_k = 0, o.det = j == 0;
                o.epi = i == 1 ? GT_EPI_BILINEAR : GT_EPI_OVERWRITE;
                o.init = GT_INIT_DECIMAL, o.repeats = o.det ? 2 : 0;
                o.algo = GCONV_BWD_WEIGHT_ALGO_AUTO;
                gt_case(im, &p, &o, 0xB3A0u + (uint64_t)(i * 2 + j));
#if GCONV_IMPL_WS_HOST
                {
                    /* which path that was (asked after the case: the encoder wants the CUDA
                     * context, which the case's allocations made); the maps only record the
                     * pointers, so any 16-byte aligned ones do */
                    gconv_impl_bww_params P;
                    gconv_impl_bwh_params B;
                    gconv_impl_bww_fill(&p, im->t, im->tout, &P);
                    P.in = P.dout = (const void *)(uintptr_t)4096;
                    cr_assert(gconv_impl_bwh_plan(&p, &P, o.det, &B), "C = %d: not BWH", cs[i]);
                    gconv_impl_bwh_tma_setup(&B, &p);
                    cr_expect(B.hi.tma == !t, "C = %d: copy engine %d, expected %d", cs[i],
                              B.hi.tma, !t);
                }
#endif
            }
    gconv_impl_bwh_no_tma = 0;
    gt_bwh_tma_check();
}

/* The C = 32 BWH kernel's cluster form (gconv_impl_bwh_cl_plan): a chunk's blocks in thread-block
 * clusters that sum their tiles through distributed shared memory, either the whole chunk as one
 * cluster writing final values (the workspace unused, no finalize) or pairs of blocks writing a
 * slab a pair. ResNeXt 7x7 / 14x14-like problems, one with an odd G (a short last chunk), fp16 and
 * bf16, the three epilogues, deterministic ones repeated (bit for bit), with a workspace 16-byte
 * aligned and not (pairs need it). Each problem runs with both forms allowed, with pairs only, and
 * with the form off (gconv_impl_bwh_cl_off 0 / 2 / 1). The plan is asked after each case which
 * form it took (the kernel's device code and the device's cluster occupancy decide too); on a
 * 132-SM Hopper part with the sm_90a code, problems 3, 5 and 6 (8 chunks of 16 images: 8 clusters
 * of 8; the three epilogues in each type) must take whole chunks, and at least four cases pairs
 * where whole chunks are off. Problem 4 (16 chunks of 16 images) takes whole chunks of as many
 * blocks as the part's GPCs hold 16 clusters of (6 on an H200 that holds 15 of 7: 2 or 3 images a
 * block), problem 0 (64 images a chunk) pairs (logged). Not covered: whole chunks into strided
 * (GKCYX) or unaligned d_wei (gconv_impl_bww_final4's element path), which this file's NHWGC
 * instantiations do not have. */
Test(bwd_weight, bwh_cluster, .timeout = 240)
{
    /* 5 and 6: problem 3 again, for the other epilogues in each type */
    static const int ns[7] = {64, 32, 16, 16, 16, 16, 16}, hw[7] = {7, 7, 14, 7, 7, 7, 7};
    static const int gs[7] = {32, 16, 8, 15, 32, 15, 15};
    static const int types[2] = {GT_T_F16, GT_T_BF16}; /* BWH: d_wei in the input's type */
    static const int offs[3] = {0, 2, 1};
    int i, t, oi, n = 0;
#if GCONV_IMPL_WS_HOST
    int whole = 0, pairs = 0;
    /* each type's pairs' and whole chunks' kernels' sm_90a answers, by device */
    unsigned ck[2][2] = {{0u, 0u}, {0u, 0u}}, cy[2][2] = {{0u, 0u}, {0u, 0u}};
    cudaDeviceProp pr;
    int dev = 0, hopper = 0;
#endif
    gt_require_gpu();
#if GCONV_IMPL_WS_HOST
    hopper = cudaGetDevice(&dev) == cudaSuccess &&
             cudaGetDeviceProperties(&pr, dev) == cudaSuccess && pr.major == 9;
#endif
    for (oi = 0; oi < 3; oi++)
        for (i = 0; i < 7; i++)
            for (t = 0; t < 2; t++) {
                gconv_problem p;
                gt_opts o;
                const gt_bww_impl *im = &gt_impls[types[t]][0];
                const int off = offs[oi];
                memset(&o, 0, sizeof o);
                gconv_problem_2d(&p, gs[i], ns[i], 32, 32, hw[i], hw[i], 3, 3, 1, 1, 1, 1, 1, 1);
                gt_set_layouts(&p, im);
                gconv_impl_bwh_cl_off = off;
                o.split_k = 0, o.det = (i + t) & 1;
                o.epi = (i + t + oi + (i >= 5 ? 2 : 0)) % GT_EPI_COUNT;
                o.ws_off = i == 1 ? 4 : 0;
                o.init = GT_INIT_DECIMAL, o.repeats = o.det ? 2 : 0;
                o.algo = GCONV_BWD_WEIGHT_ALGO_AUTO;
                gt_case(im, &p, &o, 0xC1A5u + (uint64_t)n++);
#if GCONV_IMPL_WS_HOST
                if (off != 1) {
                    gconv_impl_bww_params P;
                    gconv_impl_bwh_params B;
                    const void *k = t == 0 ? (const void *)bww_f16_nhwgc_bwh4
                                           : (const void *)bww_bf16_nhwgc_bwh4;
                    const void *kw = t == 0 ? (const void *)bww_f16_nhwgc_bwh4w
                                            : (const void *)bww_bf16_nhwgc_bwh4w;
                    int smem, cl, units;
                    gconv_impl_bww_fill(&p, im->t, im->tout, &P);
                    P.in = P.dout = (const void *)(uintptr_t)4096;
                    P.ws = (float *)(uintptr_t)(4096 + o.ws_off); /* as the case's alignment */
                    cr_assert(gconv_impl_bwh_plan(&p, &P, o.det, &B), "problem %d: not BWH", i);
                    gconv_impl_bwh_tma_setup(&B, &p);
                    smem = gconv_impl_bwh_smem(&B);
                    units = B.hi.units;
                    cl = gconv_impl_bwh_cl_plan(&B, &smem, k, kw, ck[t], cy[t]);
                    {
                        int mac = -1;
                        if (cl) {
                            cudaLaunchAttribute at;
                            const cudaLaunchConfig_t c =
                                gconv_impl_bwh_cl_config(&B, smem, 0, &at);
                            (void)cudaOccupancyMaxActiveClusters(
                                &mac, B.w.mode == GCONV_IMPL_BWW_DIRECT ? kw : k, &c);
                            (void)cudaGetLastError(); /* not a later case's launch error */
                        }
                        cr_log_info("problem %d (off %d): %d units, %d blocks, %d B shared; "
                                    "%s (%d clusters of %d at once)", i, off, units,
                                    B.hi.blocks, smem, !cl ? "no cluster form"
                                    : B.w.mode == GCONV_IMPL_BWW_DIRECT ? "whole chunks"
                                                                        : "pairs",
                                    mac, B.cl);
                    }
                    if (i == 0 && t == 0 && off == 0 && hopper) {
                        /* the device's room for clusters of each size at this kernel's size */
                        char line[128];
                        int c, at = 0;
                        for (c = 2; c <= GCONV_IMPL_BWH_CLMAX; c++) {
                            gconv_impl_bwh_params Bc = B;
                            cudaLaunchAttribute a;
                            cudaLaunchConfig_t lc;
                            int m = -1;
                            Bc.cl = c, Bc.hi.blocks = 8 * 7 * 6 * 5; /* a multiple of each */
                            lc = gconv_impl_bwh_cl_config(&Bc, smem, 0, &a);
                            (void)cudaOccupancyMaxActiveClusters(&m, k, &lc);
                            (void)cudaGetLastError();
                            at += snprintf(line + at, sizeof line - (size_t)at, " %d:%d", c, m);
                        }
                        cr_log_info("clusters at once by size (%d B shared):%s", smem, line);
                    }
                    if (cl && B.w.mode == GCONV_IMPL_BWW_DIRECT) {
                        cr_expect(off == 0 && B.cl >= 2, "problem %d: whole chunks with off %d",
                                  i, off);
                        whole += i == 3 || i >= 5;
                    } else if (cl) {
                        cr_expect(B.cl == GCONV_IMPL_BWH_CL, "problem %d: pairs of %d", i, B.cl);
                        pairs += off == 2;
                    }
                }
#endif
            }
    gconv_impl_bwh_cl_off = 0;
    gt_bwh_tma_check();
#if GCONV_IMPL_WS_HOST
    cr_log_info("%d of 6 whole-chunk cases of problems 3, 5, 6, %d of 12 pair cases (2 have an "
                "unaligned workspace)", whole, pairs);
    /* where the forms are expected: the kernels' sm_90a code on a 132-SM Hopper part (H100
     * SXM, H200: room for 8 clusters of 8 and 64 pairs); elsewhere they may be refused, and
     * every problem above ran the slab form, checked all the same */
    if (hopper && pr.multiProcessorCount == 132 &&
        gconv_impl_kernel_smem_at_least((const void *)bww_f16_nhwgc_bwh4, GCONV_IMPL_BWH_CL_MARK,
                                        &ck[0][0], &cy[0][0])) {
        cr_assert(whole == 6, "only %d whole-chunk cases", whole);
        cr_assert(pairs >= 4, "only %d pair cases", pairs);
    }
#endif
}

/* ---- the narrow-K halo kernel (BWN, gconv/bwd_weight_nk.h) ------------------------------------
 * Problems it takes (C a multiple of 64, 16 < K <= 40, stride 1, 4 to 9 taps): K % 8 == 4 (the
 * 8-byte d_out copies) and K % 8 == 0, rows cut into segments (OW > 64, one shorter), several
 * 64-channel chunks and groups, dilation with asymmetric pads, 1D with 7 taps and a 2x2 filter
 * (a last warp with m-tiles past the taps), a 3x2 filter, one long enough for many units a
 * chunk whose 64-column rows with dilation 2 leave room for two buffers only (three
 * elsewhere). Each runs with the planner's choice; with slabs over 3 and 16 blocks (ranges
 * crossing chunks, several slabs a chunk, the last block zero-filling the others; over 8 slabs
 * the finalize's vector form, 8 lanes a quad, with 16-byte loads or, from a workspace that is
 * not 16-byte aligned, 4-byte ones); with slabs over 40 blocks at all taps (the long case's 40
 * slabs on the H100: the vector form's 32 lanes a quad, asserted for every plan of 32 slabs or
 * more, both load widths); with chunks of 3 taps (a last tap group of fewer taps for the 2x2
 * and 7-tap filters) both stored directly and through slabs; and with all taps stored
 * directly (one block per chunk, final values staged in shared memory: 12 warps and the
 * widest staging at 3x3), for fp16 NHWGC, bf16 GNHWC and bf16 in / fp32 out, alternating
 * reduction modes (deterministic repeated, bit for bit) and epilogues. That the plan takes
 * each problem is asserted, so the test cannot pass on another kernel. Last, a problem in its
 * scope whose dilation makes the halo of one row too large for shared memory (the plan's
 * sizes once overflowed 32 bits there) must be refused by the plan and run correctly
 * elsewhere. */
static const gt_fixed gt_bwn_cases[] = {
    {"bwn k36", 2, 1, 2, 64, 36, {1, 13, 13}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 1, 1}, {0, 1, 1}},
    {"bwn k40 segs", 2, 1, 1, 128, 40, {1, 9, 70}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 1, 1}, {0, 1, 1}},
    {"bwn g2 k20 d2", 2, 2, 2, 64, 20, {1, 9, 11}, {1, 3, 3}, {1, 1, 1}, {1, 2, 2}, {0, 2, 0}, {0, 1, 2}},
    {"bwn 1d k24", 1, 1, 3, 64, 24, {1, 1, 150}, {1, 1, 7}, {1, 1, 1}, {1, 1, 1}, {0, 0, 3}, {0, 0, 1}},
    {"bwn 2x2 k28", 2, 3, 1, 64, 28, {1, 8, 10}, {1, 2, 2}, {1, 1, 1}, {1, 1, 1}, {0, 0, 1}, {0, 1, 0}},
    {"bwn 3x2 k32", 2, 1, 2, 192, 32, {1, 7, 9}, {1, 3, 2}, {1, 1, 1}, {1, 1, 1}, {0, 1, 1}, {0, 1, 0}},
    {"bwn long k36 d2", 2, 1, 2, 64, 36, {1, 40, 64}, {1, 3, 3}, {1, 1, 1}, {1, 2, 2}, {0, 2, 2}, {0, 2, 2}},
};

Test(bwd_weight, bwn, .timeout = 300)
{
    /* {blocks, taps a chunk, way}: the plan's choice; slabs over 3 and 16 blocks; chunks of 3
     * taps stored directly and through slabs (a last group of fewer taps where 3 does not
     * divide the filter's); all taps stored directly; slabs over 40 blocks at all taps */
    static const int pins[7][3] = {{0, 0, -1}, {3, 0, 0}, {16, 0, 0}, {0, 3, 1},
                                   {0, 3, 0},  {0, 9, 1}, {40, 9, 0}};
    static const int types[3] = {GT_T_F16, GT_T_BF16, GT_T_BF32};
    static const int fams[3] = {0, 1, 0};
    const int nf = (int)(sizeof gt_bwn_cases / sizeof gt_bwn_cases[0]);
    int i, j, t;
    gt_rng r = gt_rng_make(0xB4E0u);
    gt_require_gpu();
    for (i = 0; i < nf; i++)
        for (t = 0; t < 3; t++)
            for (j = 0; j < 7; j++) {
                gconv_problem p;
                gconv_impl_bww_params P;
                gconv_impl_bwn_params B;
                gt_opts o;
                int took;
                const gt_bww_impl *im = &gt_impls[types[t]][fams[t]];
                memset(&o, 0, sizeof o);
                gt_fixed_problem(&gt_bwn_cases[i], &p);
                gt_set_layouts(&p, im);
                gconv_impl_bww_fill(&p, im->t, im->tout, &P);
                gconv_impl_bwn_blocks = pins[j][0];
                gconv_impl_bwn_tg = pins[j][1];
                gconv_impl_bwn_mode = pins[j][2];
                took = gconv_impl_bwn_plan(&p, &P, &B);
                cr_expect(took, "%s: the BWN plan does not take it", gt_bwn_cases[i].what);
                if (took && pins[j][0] > 0)
                    cr_expect(B.blocks == (pins[j][0] < B.units ? pins[j][0] : B.units),
                              "%s: %d blocks, not the pinned %d", gt_bwn_cases[i].what,
                              B.blocks, pins[j][0]);
                if (took && pins[j][1] > 0) /* the hook clamps to the filter's taps */
                    cr_expect(B.TG == (pins[j][1] < B.taps ? pins[j][1] : B.taps),
                              "%s: %d taps a chunk, not %d", gt_bwn_cases[i].what, B.TG,
                              pins[j][1]);
                if (took && pins[j][2] >= 0)
                    cr_expect(B.direct == pins[j][2], "%s: direct %d, not %d",
                              gt_bwn_cases[i].what, B.direct, pins[j][2]);
                if (took && B.w.splits >= 32)
                    cr_expect(B.w.fl == 8 &&
                                  B.w.fvl ==
                                      (B.w.splits >= GCONV_IMPL_BWW_FIN128_FROM ? 128 : 32),
                              "%s: %d slabs, finalize form %d / %d lanes, not 32 (128) lanes a "
                              "quad", gt_bwn_cases[i].what, B.w.splits, B.w.fl, B.w.fvl);
                /* the long case at all taps: 40 units of 2-row bands where the planner takes
                 * them (H100: it does), so 40 slabs */
                if (took && j == 6 && i == nf - 1 && B.w.splits < 32)
                    cr_log_warn("%s: %d slabs only: the finalize's 32-lane form not run",
                                gt_bwn_cases[i].what, B.w.splits);
                if (took && t == 0)
                    cr_log_info("%s pin %d: %d units, %d blocks, %d buffers, %d warps, TG %d, "
                                "%s", gt_bwn_cases[i].what, j, B.units, B.blocks, B.S, B.warps,
                                B.TG, B.direct ? "direct" : "slabs");
                o.split_k = 0, o.det = (i + j + t) & 1, o.epi = (i + j + t) % 3;
                /* workspaces not 16-byte aligned: the finalize's 4-byte-load forms (the
                 * one-lane kernel, or the vector form's own kernels: 8 lanes a quad over 16
                 * blocks, 32 over 40) */
                o.ws_off = (j == 2 && t == 1) || (j == 6 && t == 2) ? 4 : 0;
                o.init = GT_INIT_DECIMAL, o.repeats = o.det;
                o.algo = GCONV_BWD_WEIGHT_ALGO_AUTO;
                gt_case(im, &p, &o, gt_rng_next(&r));
            }
    gconv_impl_bwn_tg = 0, gconv_impl_bwn_mode = -1;
    gconv_impl_bwn_blocks = 0;
    {
        gconv_problem p;
        gconv_impl_bww_params P;
        gconv_impl_bwn_params B;
        gt_opts o;
        const gt_bww_impl *im = &gt_impls[GT_T_F16][0];
        gconv_problem_2d(&p, 1, 2, 64, 36, 1, 1, 3, 3, 1, 1, 1500, 1500, 1500, 1500);
        gt_set_layouts(&p, im);
        gconv_impl_bww_fill(&p, im->t, im->tout, &P);
        cr_expect(!gconv_impl_bwn_plan(&p, &P, &B), "dilation 1500: the BWN plan took it");
        memset(&o, 0, sizeof o);
        o.init = GT_INIT_DECIMAL, o.algo = GCONV_BWD_WEIGHT_ALGO_AUTO;
        gt_case(im, &p, &o, gt_rng_next(&r));
    }
}

/* ---- the warp-specialised kernel (BWS, gconv/bwd_weight_ws.h) --------------------------------
 * Problems it takes (fp16 / bf16, NHWGC / GNHWC, C and K >= 64): partial k and channel tiles
 * (K = 80, 200; C = 72, 136), groups whose tiles reach into the next group's channels
 * (NHWGC), strides 2 and 3 with dilation and asymmetric pads, 1D, 3D, a 5x5 filter, reduction
 * lengths not a multiple of the stage (GCONV_IMPL_BWS_BK or _BK64 pixels), one long enough for
 * many splits. Each runs with BN pinned to 64, 128 and 256 and with the automatic choice, for fp16
 * NHWGC, bf16 GNHWC and bf16 in / fp32 out, each with split_k automatic, 1, 3 and 64 in
 * alternating reduction modes (deterministic repeated, bit for bit) and epilogues. Without the
 * kernel in the binary (not an sm_90a build on Hopper) the same problems run on the TC kernel,
 * still checked. */
static const gt_fixed gt_bws_cases[] = {
    {"bws k80 c72", 2, 1, 2, 72, 80, {1, 9, 11}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 1, 1}, {0, 1, 0}},
    {"bws g2 k200", 2, 2, 1, 64, 200, {1, 12, 10}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 1, 1}, {0, 1, 1}},
    {"bws s2 d2", 2, 1, 3, 136, 64, {1, 13, 12}, {1, 3, 3}, {1, 2, 2}, {1, 2, 2}, {0, 2, 1}, {0, 0, 2}},
    {"bws s3 1x1", 2, 2, 2, 64, 96, {1, 17, 19}, {1, 1, 1}, {1, 3, 3}, {1, 1, 1}, {0, 0, 1}, {0, 1, 0}},
    {"bws 1d", 1, 1, 3, 128, 64, {1, 1, 150}, {1, 1, 5}, {1, 1, 1}, {1, 1, 2}, {0, 0, 3}, {0, 0, 1}},
    {"bws 3d", 3, 1, 2, 64, 128, {5, 6, 7}, {3, 3, 3}, {2, 1, 1}, {1, 1, 1}, {1, 1, 1}, {0, 1, 2}},
    {"bws 5x5", 2, 1, 1, 256, 72, {1, 10, 9}, {1, 5, 5}, {1, 1, 1}, {1, 1, 1}, {0, 2, 2}, {0, 1, 2}},
    {"bws long", 2, 1, 2, 64, 64, {1, 24, 24}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 1, 1}, {0, 1, 1}},
    /* C = 66 (not a multiple of 8): another kernel, not the copy engine */
    {"bws c66 g4", 2, 4, 2, 66, 64, {1, 8, 7}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 1, 1}, {0, 1, 1}},
};

static void gt_bws_run(int pin)
{
    static const int splits[4] = {0, 1, 3, 64};
    static const int types[3] = {GT_T_F16, GT_T_BF16, GT_T_BF32};
    static const int fams[3] = {0, 1, 0};
    const int nf = (int)(sizeof gt_bws_cases / sizeof gt_bws_cases[0]);
    int i, j, t, in = 1;
    gt_rng r = gt_rng_make(0xB5C0u + (uint64_t)(pin + 1));
    gt_require_gpu();
    for (t = 0; t < 3; t++)
        in = in && (t == 0 ? bww_f16_nhwgc_bws_ready() : t == 1 ? bww_bf16_gnhwc_bws_ready()
                                                               : bww_bf32_nhwgc_bws_ready());
    cr_log_info("BWS kernel %s", in ? "in this binary: these problems run on it"
                                    : "not in this binary (needs an sm_90a build on a Hopper "
                                      "GPU): the TC kernel runs instead");
    gconv_impl_bww_ws_pin = pin;
    for (i = 0; i < nf; i++)
        for (t = 0; t < 3; t++)
            for (j = 0; j < 4; j++) {
                gconv_problem p;
                gt_opts o;
                memset(&o, 0, sizeof o);
                const gt_bww_impl *im = &gt_impls[types[t]][fams[t]];
                gt_fixed_problem(&gt_bws_cases[i], &p);
                gt_set_layouts(&p, im);
                o.split_k = splits[j], o.det = (i + j + t) & 1, o.epi = (i + j + t) % 3;
                o.ws_off = j == 2 ? 4 : 0; /* partials element by element (not 16-byte aligned) */
                o.init = GT_INIT_DECIMAL, o.repeats = o.det;
                o.algo = GCONV_BWD_WEIGHT_ALGO_AUTO;
                gt_case(im, &p, &o, gt_rng_next(&r));
            }
    gconv_impl_bww_ws_pin = -1;
}

Test(bwd_weight, bws_auto, .timeout = 180) { gt_bws_run(-1); }
Test(bwd_weight, bws_128, .timeout = 180) { gt_bws_run(0); }
Test(bwd_weight, bws_256, .timeout = 180) { gt_bws_run(1); }
Test(bwd_weight, bws_64, .timeout = 180) { gt_bws_run(3); }

/* The split-tail form (GCONV_IMPL_BWW_TAIL: whole tiles for full rounds of the SMs, the tail
 * tiles split, a finalize over them): with the plan's SM count pinned to 3, 5 and 7 and BN
 * automatic, 128, 256 and 64, the BWS problems above whose tiles leave a tail take it (asserted
 * through the plan, at least three for each BN, so the test cannot pass without running it);
 * automatic split, both reduction modes (deterministic repeated, bit for bit), the three
 * epilogues, 16-byte and 4-byte aligned workspaces. */
Test(bwd_weight, bws_tail, .timeout = 180)
{
    static const int sms[3] = {3, 5, 7};
    static const int pins[4] = {-1, 0, 1, 3}; /* BN automatic, 128, 256, 64 */
    static const int types[3] = {GT_T_F16, GT_T_BF16, GT_T_BF32};
    static const int fams[3] = {0, 1, 0};
    const int nf = (int)(sizeof gt_bws_cases / sizeof gt_bws_cases[0]) - 1; /* not C = 66 */
    int i, j, t, k, n = 0, tails = 0, bn[3] = {0, 0, 0};
    gt_require_gpu();
    if (!bww_f16_nhwgc_bws_ready() || !bww_bf16_gnhwc_bws_ready() || !bww_bf32_nhwgc_bws_ready())
        cr_skip_test("BWS kernel not in this binary (needs an sm_90a build on a Hopper GPU)");
    for (k = 0; k < 4; k++)
        for (i = 0; i < nf; i++)
            for (t = 0; t < 3; t++)
                for (j = 0; j < 3; j++) {
                    gconv_problem p;
                    gconv_impl_bww_params P;
                    gt_opts o;
                    const gt_bww_impl *im = &gt_impls[types[t]][fams[t]];
                    const int det = (i + j + t) & 1;
                    memset(&o, 0, sizeof o);
                    gt_fixed_problem(&gt_bws_cases[i], &p);
                    gt_set_layouts(&p, im);
                    gconv_impl_bws_sms_pin = sms[j];
                    gconv_impl_bww_ws_pin = pins[k];
                    gconv_impl_bww_fill(&p, im->t, im->tout, &P);
                    gconv_impl_bws_splits(&P, gconv_impl_bws_pick(&P, 0), 0, 0);
                    if (P.mode != GCONV_IMPL_BWW_TAIL)
                        continue;
                    tails++;
                    bn[P.tbn == 64 ? 0 : P.tbn == 128 ? 1 : 2]++;
                    o.split_k = 0, o.det = det, o.epi = (i + j + t) % 3;
                    o.ws_off = (i + t) % 2 ? 4 : 0;
                    o.init = GT_INIT_DECIMAL, o.repeats = o.det;
                    o.algo = GCONV_BWD_WEIGHT_ALGO_AUTO;
                    gt_case(im, &p, &o, 0xB7A1u + (uint64_t)n++);
                }
    gconv_impl_bws_sms_pin = 0;
    gconv_impl_bww_ws_pin = -1;
    cr_log_info("%d problems ran in the split-tail form (BN 64 / 128 / 256: %d / %d / %d)", tails,
                bn[0], bn[1], bn[2]);
    cr_assert(tails >= 10, "only %d problems took the split-tail form", tails);
    cr_assert(bn[0] >= 3 && bn[1] >= 3 && bn[2] >= 3,
              "split-tail problems with BN 64 / 128 / 256: %d / %d / %d", bn[0], bn[1], bn[2]);
}

/* ---- refusals -------------------------------------------------------------------------------- */

Test(bwd_weight, refuse, .timeout = 60)
{
    const gt_bww_impl *im = &gt_impls[GT_T_F16][0];
    gconv_problem p, q;
    gconv_bwd_weight_args a;
    char why[256];
    void *d_in, *d_dout, *d_ws;
    gt_guarded gw;
    size_t need;
    gconv_status s;
    gt_require_gpu();
    gconv_problem_2d(&p, 2, 2, 24, 40, 9, 9, 3, 3, 1, 1, 1, 1, 1, 1);
    d_in = gt_dev_alloc((size_t)gconv_in_bytes(&p, GCONV_F16) + 64);
    d_dout = gt_dev_alloc((size_t)gconv_out_bytes(&p, GCONV_F16) + 64);
    gw = gt_guarded_alloc((size_t)gconv_wei_bytes(&p, GCONV_F16));
    GT_CHECK(hipMemset(d_in, 0, (size_t)gconv_in_bytes(&p, GCONV_F16)));
    GT_CHECK(hipMemset(d_dout, 0, (size_t)gconv_out_bytes(&p, GCONV_F16)));
    memset(&a, 0, sizeof a);
    a.in = d_in, a.d_out = d_dout, a.d_wei = gw.p, a.alpha = 1.0f;
    a.why = why, a.why_len = sizeof why;
    a.split_k = 4, a.deterministic = 1;
    need = im->ws(&p, &a);
    cr_expect(need > 0, "split_k 4 deterministic must need a workspace");
    d_ws = gt_dev_alloc(need + 16);

#define GT_REFUSE(expr_args, problem, want)                                                      \
    do {                                                                                         \
        why[0] = '\0';                                                                           \
        s = im->run(problem, expr_args, 0);                                                      \
        cr_expect(s == (want), "line %d: got %s (%s), want %s", __LINE__, gconv_status_name(s),  \
                  why, gconv_status_name(want));                                                 \
    } while (0)

    GT_REFUSE(NULL, &p, GCONV_ERR_NULL);
    GT_REFUSE(&a, NULL, GCONV_ERR_NULL);
    a.workspace = NULL, a.workspace_size = 0;
    GT_REFUSE(&a, &p, GCONV_ERR_WORKSPACE);
    a.workspace = d_ws, a.workspace_size = need - 4;
    GT_REFUSE(&a, &p, GCONV_ERR_WORKSPACE);
    a.workspace_size = need;
    a.workspace = (char *)d_ws + 2;
    GT_REFUSE(&a, &p, GCONV_ERR_ALIGNMENT);
    a.workspace = d_ws;
    a.in = NULL;
    GT_REFUSE(&a, &p, GCONV_ERR_NULL);
    a.in = d_in, a.d_out = NULL;
    GT_REFUSE(&a, &p, GCONV_ERR_NULL);
    a.d_out = d_dout, a.d_wei = NULL;
    GT_REFUSE(&a, &p, GCONV_ERR_NULL);
    a.d_wei = gw.p;
    a.in = (char *)d_in + 1;
    GT_REFUSE(&a, &p, GCONV_ERR_ALIGNMENT);
    a.in = d_in, a.d_wei = (char *)gw.p + 1;
    GT_REFUSE(&a, &p, GCONV_ERR_ALIGNMENT);
    a.d_wei = gw.p;
    a.split_k = -1;
    GT_REFUSE(&a, &p, GCONV_ERR_ARGUMENT);
    a.split_k = GCONV_BWD_WEIGHT_MAX_SPLIT + 1;
    GT_REFUSE(&a, &p, GCONV_ERR_ARGUMENT);
    a.split_k = 4;
    a.alpha = NAN;
    GT_REFUSE(&a, &p, GCONV_ERR_ARGUMENT);
    a.alpha = 1.0f, a.beta = INFINITY;
    GT_REFUSE(&a, &p, GCONV_ERR_ARGUMENT);
    a.beta = 0.0f;
    a.algo = 3;
    GT_REFUSE(&a, &p, GCONV_ERR_ARGUMENT);
    a.algo = GCONV_BWD_WEIGHT_ALGO_DIRECT;
    {
        /* the direct kernels exist for NHWGC only */
        const gt_bww_impl *ng = &gt_impls[GT_T_F16][2];
        gconv_problem pn = p;
        gconv_problem_set_layouts(&pn, GCONV_NGCHW, GCONV_GKYXC);
        s = ng->run(&pn, &a, 0);
        cr_expect(s == GCONV_ERR_UNSUPPORTED, "direct on NGCHW: got %s", gconv_status_name(s));
    }
    a.algo = GCONV_BWD_WEIGHT_ALGO_AUTO;
    q = p, q.C = 0;
    GT_REFUSE(&a, &q, GCONV_ERR_SIZE);
    q = p, q.stride[2] = 0;
    GT_REFUSE(&a, &q, GCONV_ERR_STRIDE);
    q = p;
    gconv_problem_set_layouts(&q, GCONV_NGCHW, GCONV_GKYXC);
    GT_REFUSE(&a, &q, GCONV_ERR_LAYOUT);
    q = p;
    gconv_problem_set_layouts(&q, GCONV_NHWGC, GCONV_GKCYX);
    GT_REFUSE(&a, &q, GCONV_ERR_LAYOUT);
    cr_expect(!im->supports(&q, why, sizeof why) && strlen(why) > 0,
              "supports must refuse a layout mismatch with a reason");
    cr_expect(im->supports(&p, NULL, 0), "supports must accept the problem");
    /* nothing was launched: d_wei still holds its poison everywhere */
    GT_CHECK(hipDeviceSynchronize());
    cr_expect(gt_dev_count_poison(gw.p, gconv_wei_elems(&p), GCONV_F16) ==
                  (unsigned long long)gconv_wei_elems(&p),
              "a refused launch wrote d_wei");
    /* and the accepted launch works */
    GT_REFUSE(&a, &p, GCONV_OK);
    GT_CHECK(hipDeviceSynchronize());
    cr_expect(gt_dev_count_poison(gw.p, gconv_wei_elems(&p), GCONV_F16) == 0,
              "an accepted launch left d_wei elements unwritten");
    /* pinned tile: layout refusal */
    q = p;
    gconv_problem_set_layouts(&q, GCONV_GNHWC, GCONV_GKYXC);
    s = gt_tiled_impl.run(&q, &a, 0);
    cr_expect(s == GCONV_ERR_LAYOUT, "tiled: got %s", gconv_status_name(s));
#undef GT_REFUSE
    gt_dev_free(d_in);
    gt_dev_free(d_dout);
    gt_dev_free(d_ws);
    gt_guarded_free(&gw);
}

/* ---- > 2 GB --------------------------------------------------------------------------------
 * bf16 input of 16448 x W x C (over 2^31 elements, 4.3 / 12.9 GB) filled on the device by hash,
 * 1x1 filter with stride S (64, or 8 for the BWS kernel, whose copies take strides up to 8) so
 * that d_out (filled on the host) and the host's exact sum stay small while the kernel reads
 * input rows past 2^31 elements. Integers in [-2, 2]: every partial sum is an exact fp32
 * integer, so the fp32 gradient must match exactly. */
static void gt_huge_case(const gt_bww_impl *im, void *d_in, int C, int K, int W, int S,
                         uint64_t seed, int algo)
{
    gconv_problem p;
    gconv_bwd_weight_args a;
    char why[256], pb[256];
    const int H = 16448;
    int64_t o, n_out;
    float *h_dout, *ref, *got;
    void *d_dout, *d_wei, *d_ws = NULL;
    size_t wsb;
    gconv_status s;
    int oh, ow, k, c, OH, OW, bad = 0;
    gconv_problem_2d(&p, 1, 1, C, K, H, W, 1, 1, S, S, 0, 0, 1, 1);
    gt_problem_str(&p, pb, sizeof pb);
    cr_assert(gconv_in_elems(&p) > ((int64_t)1 << 31), "not huge: %s", pb);
    OH = gconv_out_len(&p, 1), OW = gconv_out_len(&p, 2);
    n_out = gconv_out_elems(&p);
    h_dout = (float *)gt_host_alloc((size_t)n_out * sizeof(float));
    {
        /* d_out as bf16 of small integers; stored as bf16 bits on the device */
        uint16_t *hb = (uint16_t *)gt_host_alloc((size_t)n_out * 2);
        for (o = 0; o < n_out; o++) {
            h_dout[o] = (float)gt_hash_int(seed, (uint64_t)o, -2, 5);
            hb[o] = gconv_f32_to_bf16(h_dout[o]).bits;
        }
        d_dout = gt_dev_upload(hb, (size_t)n_out * 2);
        free(hb);
    }
    ref = (float *)gt_host_alloc((size_t)K * C * sizeof(float));
    got = (float *)gt_host_alloc((size_t)K * C * sizeof(float));
    memset(ref, 0, (size_t)K * C * sizeof(float));
    for (oh = 0; oh < OH; oh++)
        for (ow = 0; ow < OW; ow++)
            for (c = 0; c < C; c++) {
                const int64_t ii = ((int64_t)(oh * S) * W + (int64_t)ow * S) * C + c;
                const float x = (float)gt_hash_int(1234, (uint64_t)ii, -2, 5);
                for (k = 0; k < K; k++)
                    ref[k * C + c] += x * h_dout[((int64_t)oh * OW + ow) * K + k];
            }
    d_wei = gt_dev_alloc((size_t)K * C * 4);
    GT_CHECK(hipMemset(d_wei, 0xFF, (size_t)K * C * 4));
    memset(&a, 0, sizeof a);
    a.in = d_in, a.d_out = d_dout, a.d_wei = d_wei, a.alpha = 1.0f, a.algo = algo;
    a.why = why, a.why_len = sizeof why;
    wsb = im->ws(&p, &a);
    if (wsb)
        d_ws = gt_dev_alloc(wsb);
    a.workspace = d_ws, a.workspace_size = wsb;
    s = im->run(&p, &a, 0);
    cr_assert(s == GCONV_OK, "%s: %s (%s)", pb, gconv_status_name(s), why);
    GT_CHECK(hipDeviceSynchronize());
    gt_dev_download(got, d_wei, (size_t)K * C * 4);
    for (k = 0; k < K * C; k++)
        bad += got[k] != ref[k];
    cr_expect(bad == 0, "huge %s path %d algo %d: %d of %d weights differ (first: got %g want %g)",
              pb, gconv_impl_bww_path_algo(&p, im->t, d_in, d_dout, algo), algo, bad, K * C, got[0],
              ref[0]);
    gt_dev_free(d_dout);
    gt_dev_free(d_wei);
    gt_dev_free(d_ws);
    free(h_dout), free(ref), free(got);
}

/* DWR over 2 GB: depthwise 3x3 stride S pad 1 on one bf16 image of 16448 x W x G (the huge
 * input buffer); d_out zero except output rows 0, 1, OH - 2 and OH - 1 (small integers), so
 * the kernel reads input rows past 2^32 elements while the host's exact sum stays cheap. */
static void gt_huge_dw_case(const gt_bww_impl *im, void *d_in, int G, int W, int S,
                            uint64_t seed)
{
    gconv_problem p;
    gconv_bwd_weight_args a;
    char why[256], pb[256];
    const int H = 16448;
    int OH, OW, ri, ow, g, t, bad = 0;
    int rows[4];
    int64_t n_out;
    float *ref, *got, *h_dout;
    uint16_t *hb;
    void *d_dout, *d_wei, *d_ws = NULL;
    size_t wsb;
    gconv_status s;
    gconv_problem_2d(&p, G, 1, 1, 1, H, W, 3, 3, S, S, 1, 1, 1, 1);
    gt_problem_str(&p, pb, sizeof pb);
    cr_assert(gconv_in_elems(&p) > ((int64_t)1 << 31), "not huge: %s", pb);
    OH = gconv_out_len(&p, 1), OW = gconv_out_len(&p, 2);
    rows[0] = 0, rows[1] = 1, rows[2] = OH - 2, rows[3] = OH - 1;
    n_out = gconv_out_elems(&p);
    d_dout = gt_dev_alloc((size_t)n_out * 2);
    GT_CHECK(hipMemset(d_dout, 0, (size_t)n_out * 2));
    h_dout = (float *)gt_host_alloc((size_t)4 * OW * G * sizeof(float));
    hb = (uint16_t *)gt_host_alloc((size_t)OW * G * 2);
    for (ri = 0; ri < 4; ri++) {
        for (t = 0; t < OW * G; t++) {
            h_dout[(int64_t)ri * OW * G + t] =
                (float)gt_hash_int(seed, (uint64_t)ri * OW * G + t, -2, 5);
            hb[t] = gconv_f32_to_bf16(h_dout[(int64_t)ri * OW * G + t]).bits;
        }
        GT_CHECK(hipMemcpy((uint16_t *)d_dout + (int64_t)rows[ri] * OW * G, hb,
                           (size_t)OW * G * 2, hipMemcpyHostToDevice));
    }
    ref = (float *)gt_host_alloc((size_t)G * 9 * sizeof(float));
    got = (float *)gt_host_alloc((size_t)G * 9 * sizeof(float));
    memset(ref, 0, (size_t)G * 9 * sizeof(float));
    for (ri = 0; ri < 4; ri++)
        for (ow = 0; ow < OW; ow++)
            for (t = 0; t < 9; t++) {
                const int ih = rows[ri] * S - 1 + t / 3, iw = ow * S - 1 + t % 3;
                if (ih < 0 || ih >= H || iw < 0 || iw >= W)
                    continue;
                for (g = 0; g < G; g++) {
                    const int64_t ii = ((int64_t)ih * W + iw) * G + g;
                    const float x = (float)gt_hash_int(1234, (uint64_t)ii, -2, 5);
                    ref[g * 9 + t] += x * h_dout[((int64_t)ri * OW + ow) * G + g];
                }
            }
    d_wei = gt_dev_alloc((size_t)G * 9 * 4);
    GT_CHECK(hipMemset(d_wei, 0xFF, (size_t)G * 9 * 4));
    memset(&a, 0, sizeof a);
    a.in = d_in, a.d_out = d_dout, a.d_wei = d_wei, a.alpha = 1.0f;
    a.why = why, a.why_len = sizeof why;
    wsb = im->ws(&p, &a);
    if (wsb)
        d_ws = gt_dev_alloc(wsb);
    a.workspace = d_ws, a.workspace_size = wsb;
    s = im->run(&p, &a, 0);
    cr_assert(s == GCONV_OK, "%s: %s (%s)", pb, gconv_status_name(s), why);
    GT_CHECK(hipDeviceSynchronize());
    gt_dev_download(got, d_wei, (size_t)G * 9 * 4);
    for (t = 0; t < G * 9; t++)
        bad += got[t] != ref[t];
    cr_expect(bad == 0, "huge %s path %d: %d of %d weights differ (first: got %g want %g)", pb,
              gconv_impl_bww_path(&p, im->t, d_in, d_dout), bad, G * 9, got[0], ref[0]);
    gt_dev_free(d_dout);
    gt_dev_free(d_wei);
    gt_dev_free(d_ws);
    free(h_dout), free(hb), free(ref), free(got);
}

Test(bwd_weight, huge, .timeout = 120)
{
    const int64_t n = (int64_t)16448 * 16400 * 24;
    size_t fr = 0, tot = 0;
    void *d_in;
    gt_require_gpu();
    GT_CHECK(hipMemGetInfo(&fr, &tot));
    if (fr < (size_t)n * 2 + ((size_t)1 << 30))
        cr_skip_test("needs %.1f GB of free device memory, %.1f GB free", n * 2 / 1e9, fr / 1e9);
    d_in = gt_dev_alloc((size_t)n * 2);
    gt_dev_fill_hash(d_in, n, GCONV_BF16, 1234, -2, 5);
    /* C = K = 8 (W tripled: the same bytes): the TC kernel on CUDA (FEWC elsewhere), and
     * FEWC forced */
    gt_huge_case(&gt_impls[GT_T_BF32][0], d_in, 8, 8, 16400 * 3, 64, 9,
                 GCONV_BWD_WEIGHT_ALGO_AUTO);
    gt_huge_case(&gt_impls[GT_T_BF32][0], d_in, 8, 8, 16400 * 3, 64, 9,
                 GCONV_BWD_WEIGHT_ALGO_DIRECT);
    /* GEMM path: C = K = 24 and K = 20 (TC on CUDA, 16- and 8-byte d_out copies); K = 18 (the
     * vector-gather GEMM) */
    gt_huge_case(&gt_impls[GT_T_BF32][0], d_in, 24, 24, 16400, 64, 10,
                 GCONV_BWD_WEIGHT_ALGO_AUTO);
    gt_huge_case(&gt_impls[GT_T_BF32][0], d_in, 24, 20, 16400, 64, 11,
                 GCONV_BWD_WEIGHT_ALGO_AUTO);
    gt_huge_case(&gt_impls[GT_T_BF32][0], d_in, 24, 18, 16400, 64, 12,
                 GCONV_BWD_WEIGHT_ALGO_AUTO);
    /* C = K = 64, stride 8 (2.2e9 input elements): the BWS kernel in an sm_90a build on Hopper
     * (the copy engine addresses past 2^31 elements; 540 K reduction pixels over several
     * splits), TC elsewhere */
    gt_huge_case(&gt_impls[GT_T_BF32][0], d_in, 64, 64, 2100, 8, 13, GCONV_BWD_WEIGHT_ALGO_AUTO);
    /* DWR, stride 2 (G = 24: 6 vectors of 4 channels) and, if the output fits, stride 1 (G = 8) */
    gt_huge_dw_case(&gt_impls[GT_T_BF32][0], d_in, 24, 16400, 2, 11);
    GT_CHECK(hipMemGetInfo(&fr, &tot));
    if (fr > (size_t)n * 2 + ((size_t)1 << 30))
        gt_huge_dw_case(&gt_impls[GT_T_BF32][0], d_in, 8, 16400 * 3, 1, 12);
    else
        cr_log_info("huge: DWR stride 1 skipped (%.1f GB free)", fr / 1e9);
    gt_dev_free(d_in);
}
