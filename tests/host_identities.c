/* tests/host_identities.c: properties that tie the reference's operations together, on
 * random problems (seeded, over every layout, 1D/2D/3D, strides, dilations, asymmetric pads,
 * groups):
 *   - each direction equals the textbook definition (every output, every tap, bounds tested
 *     per element, offsets from layout names), written here independently;
 *   - adjoints: <fwd(x, w), dy> = <x, bwd_data(dy, w)> = <w, bwd_weight(x, dy)>;
 *   - a grouped convolution equals G dense convolutions on sliced tensors;
 *   - the same problem in every layout gives the same values;
 *   - conv -> conv (gconv_ref_fwd_fwd) equals a grouped conv, bias + activation, and a 1x1
 *     conv composed here;
 *   - backward weight's alpha/beta semantics.
 * Data are multiples of 1/16 in [-1, 1]: every product and partial sum is exact in float and
 * double, so results agree to the last bit whatever the summation order, and the tolerances
 * (1e-9 relative) only absorb the final inner products.
 *
 * Build and run: gcc -std=c11 -Wall -Wextra -pedantic -Werror -O2 -I. tests/host_identities.c
 *                    -o build/host_identities -lcriterion -lm && build/host_identities
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gconv/reference.h"

/* ---- random numbers and problems -------------------------------------------------------- */

static uint64_t next_u64(uint64_t *s) /* splitmix64 */
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static int rnd(uint64_t *s, int lo, int hi) /* inclusive */
{
    return lo + (int)(next_u64(s) % (uint64_t)(hi - lo + 1));
}

static float *fmalloc(int64_t n)
{
    float *a = (float *)malloc((size_t)(n > 0 ? n : 1) * sizeof *a);
    cr_assert_not_null(a);
    return a;
}

static float *rnd_data(uint64_t *s, int64_t n) /* multiples of 1/16 in [-1, 1] */
{
    float *a = fmalloc(n);
    int64_t i;
    for (i = 0; i < n; i++)
        a[i] = (float)rnd(s, -16, 16) / 16.0f;
    return a;
}

/* The parameters of a test over `count` seeds from `first` (a static table: parameters are
 * copied into the test's process). */
#define SEED_PARAMS(suite, name, first, count)                                                    \
    ParameterizedTestParameters(suite, name)                                                      \
    {                                                                                             \
        static int seeds[count];                                                                  \
        int i;                                                                                    \
        for (i = 0; i < (count); i++)                                                             \
            seeds[i] = (first) + i;                                                               \
        return cr_make_param_array(int, seeds, count);                                            \
    }

static const gconv_layout act_families[3] = {GCONV_NHWGC, GCONV_GNHWC, GCONV_NGCHW};
static const gconv_layout wei_families[2] = {GCONV_GKYXC, GCONV_GKCYX};

/* A valid random problem; ndim cycles with the seed so every dimension is covered. */
static gconv_problem random_problem(uint64_t seed, int min_groups)
{
    uint64_t s = seed * 0x2545f4914f6cdd1dull + 1;
    gconv_problem p;
    int ndim = 1 + (int)(seed % 3), maxin = ndim == 3 ? 5 : ndim == 2 ? 7 : 13, a;
    do {
        int in[3], f[3], st[3], pd[3], dl[3];
        for (a = 0; a < ndim; a++) {
            in[a] = rnd(&s, 1, maxin), f[a] = rnd(&s, 1, 3), st[a] = rnd(&s, 1, 3);
            pd[a] = 0, dl[a] = rnd(&s, 1, 3);
        }
        gconv_problem_nd(&p, ndim, rnd(&s, min_groups, 3), rnd(&s, 1, 2), rnd(&s, 1, 4),
                         rnd(&s, 1, 4), in, f, st, pd, dl);
        for (a = 3 - ndim; a < 3; a++)
            p.pad_lo[a] = rnd(&s, 0, 2), p.pad_hi[a] = rnd(&s, 0, 2);
        p.in_layout = gconv_layout_for(act_families[rnd(&s, 0, 2)], ndim);
        p.out_layout = gconv_layout_for(act_families[rnd(&s, 0, 2)], ndim);
        p.wei_layout = gconv_layout_for(wei_families[rnd(&s, 0, 1)], ndim);
    } while (gconv_problem_check(&p, NULL, 0) != GCONV_OK);
    return p;
}

static void describe(const gconv_problem *p, char *buf, size_t len)
{
    snprintf(buf, len,
             "%dD G%d N%d C%d K%d in %dx%dx%d f %dx%dx%d s %d,%d,%d d %d,%d,%d pad %d-%d,%d-%d,"
             "%d-%d %s/%s/%s",
             p->ndim, p->G, p->N, p->C, p->K, p->in[0], p->in[1], p->in[2], p->filter[0],
             p->filter[1], p->filter[2], p->stride[0], p->stride[1], p->stride[2],
             p->dilation[0], p->dilation[1], p->dilation[2], p->pad_lo[0], p->pad_hi[0],
             p->pad_lo[1], p->pad_hi[1], p->pad_lo[2], p->pad_hi[2],
             gconv_layout_name(gconv_in_layout(p)), gconv_layout_name(gconv_wei_layout(p)),
             gconv_layout_name(gconv_out_layout(p)));
}

/* ---- tensors by layout name (independent of gconv/layout.h) ----------------------------- */

/* A tensor: six logical extents in the order of `names` (activations "GNCDHW", weights
 * "GKCZYX"), stored in the letter order `order`, outermost first. */
typedef struct tdesc {
    const char *names;
    const char *order;
    int ext[6];
} tdesc;

static int64_t t_count(const tdesc *t)
{
    int64_t n = 1;
    int i;
    for (i = 0; i < 6; i++)
        n *= t->ext[i];
    return n;
}

static int64_t t_off(const tdesc *t, const int idx[6])
{
    int64_t off = 0;
    const char *c;
    for (c = t->order; *c; c++) {
        int slot = (int)(strchr(t->names, *c) - t->names);
        off = off * t->ext[slot] + idx[slot];
    }
    return off;
}

/* The logical index of element number i in logical order. */
static void t_unflatten(const tdesc *t, int64_t i, int idx[6])
{
    int a;
    for (a = 5; a >= 0; a--) {
        idx[a] = (int)(i % t->ext[a]);
        i /= t->ext[a];
    }
}

static const char *act_order(gconv_layout l)
{
    gconv_layout f = gconv_layout_family(l);
    return f == GCONV_GNHWC ? "GNDHWC" : f == GCONV_NGCHW ? "NGCDHW" : "NDHWGC";
}

static tdesc act_desc(gconv_layout l, int G, int N, int ch, const int sp[3])
{
    tdesc t = {"GNCDHW", act_order(l), {G, N, ch, sp[0], sp[1], sp[2]}};
    return t;
}

static tdesc in_desc(const gconv_problem *p)
{
    return act_desc(gconv_in_layout(p), p->G, p->N, p->C, p->in);
}

static tdesc out_desc(const gconv_problem *p)
{
    int o[3] = {gconv_out_len(p, 0), gconv_out_len(p, 1), gconv_out_len(p, 2)};
    return act_desc(gconv_out_layout(p), p->G, p->N, p->K, o);
}

static tdesc wei_desc(const gconv_problem *p)
{
    tdesc t = {"GKCZYX",
               gconv_layout_family(gconv_wei_layout(p)) == GCONV_GKCYX ? "GKCZYX" : "GKZYXC",
               {p->G, p->K, p->C, p->filter[0], p->filter[1], p->filter[2]}};
    return t;
}

/* Copy every logical element of dst from src at the same index, group shifted by g0 (a slice
 * when dst has one group, a layout change when both have the same extents). */
static void t_copy(const tdesc *dd, float *dst, const tdesc *sd, const float *src, int g0)
{
    int64_t i, n = t_count(dd);
    int idx[6], sidx[6];
    for (i = 0; i < n; i++) {
        t_unflatten(dd, i, idx);
        memcpy(sidx, idx, sizeof idx);
        sidx[0] += g0;
        dst[t_off(dd, idx)] = src[t_off(sd, sidx)];
    }
}

static float *t_converted(const tdesc *dd, const tdesc *sd, const float *src)
{
    float *dst = fmalloc(t_count(dd));
    t_copy(dd, dst, sd, src, 0);
    return dst;
}

/* |got - want| <= tol * (1 + |want|) over n elements */
static void expect_close(const float *got, const double *want, int64_t n, double tol,
                         const char *what, const char *desc)
{
    int64_t i;
    for (i = 0; i < n; i++)
        cr_assert(fabs(got[i] - want[i]) <= tol * (1.0 + fabs(want[i])),
                  "%s element %lld: got %.9g want %.9g (%s)", what, (long long)i,
                  (double)got[i], want[i], desc);
}

static void expect_same(const float *got, const float *want, int64_t n, const char *what,
                        const char *desc)
{
    int64_t i;
    for (i = 0; i < n; i++)
        cr_assert(got[i] == want[i], "%s element %lld: got %.9g want %.9g (%s)", what,
                  (long long)i, (double)got[i], (double)want[i], desc);
}

/* got (described by gd) must equal want (described by wd) at every logical index of gd, with
 * want's group index shifted by g0 */
static void expect_converted(const tdesc *gd, const float *got, const tdesc *wd,
                             const float *want, int g0, const char *what, const char *desc)
{
    float *w = fmalloc(t_count(gd));
    t_copy(gd, w, wd, want, g0);
    expect_same(got, w, t_count(gd), what, desc);
    free(w);
}

static double dot(const float *a, const float *b, int64_t n, double *scale)
{
    double s = 0.0, m = 0.0;
    int64_t i;
    for (i = 0; i < n; i++) {
        s += (double)a[i] * b[i];
        m += fabs((double)a[i] * b[i]);
    }
    *scale = m;
    return s;
}

/* ---- the three directions on one problem ------------------------------------------------ */

typedef struct run3 {
    int64_t nx, nw, ny;
    float *x, *w, *dy; /* random inputs in the problem's layouts */
    float *y, *dx, *dw; /* reference results */
} run3;

static float *nan_filled(int64_t n) /* poison: an element left unwritten shows */
{
    float *a = fmalloc(n);
    int64_t i;
    for (i = 0; i < n; i++)
        a[i] = NAN;
    return a;
}

/* Run the three directions of p on r's inputs x, w, dy into new y, dx, dw, with epilogue ef
 * on fwd and eb on bwd_data (NULL for none). */
static void run_dirs(const gconv_problem *p, run3 *r, const gconv_epilogue *ef,
                     const gconv_epilogue *eb)
{
    r->nx = gconv_in_elems(p), r->nw = gconv_wei_elems(p), r->ny = gconv_out_elems(p);
    r->y = nan_filled(r->ny), r->dx = nan_filled(r->nx), r->dw = nan_filled(r->nw);
    cr_assert_eq(gconv_ref_fwd(p, GCONV_F32, r->x, r->w, r->y, GCONV_F32, ef), GCONV_OK);
    cr_assert_eq(gconv_ref_bwd_data(p, GCONV_F32, r->dy, r->w, r->dx, GCONV_F32, eb), GCONV_OK);
    cr_assert_eq(gconv_ref_bwd_weight(p, GCONV_F32, r->x, r->dy, r->dw, GCONV_F32, 1.0f, 0.0f),
                 GCONV_OK);
}

static run3 random_inputs(const gconv_problem *p, uint64_t seed)
{
    run3 r;
    uint64_t s = seed ^ 0x5bd1e995u;
    r.x = rnd_data(&s, gconv_in_elems(p));
    r.w = rnd_data(&s, gconv_wei_elems(p));
    r.dy = rnd_data(&s, gconv_out_elems(p));
    return r;
}

static run3 run_all(const gconv_problem *p, uint64_t seed)
{
    run3 r = random_inputs(p, seed);
    run_dirs(p, &r, NULL, NULL);
    return r;
}

static void run_free(run3 *r)
{
    free(r->x), free(r->w), free(r->dy), free(r->y), free(r->dx), free(r->dw);
}

static void check_adjoint(const gconv_problem *p, uint64_t seed)
{
    char desc[256];
    run3 r = run_all(p, seed);
    double m1, m2, m3;
    double a = dot(r.y, r.dy, r.ny, &m1), b = dot(r.x, r.dx, r.nx, &m2),
           c = dot(r.w, r.dw, r.nw, &m3);
    double scale = 1.0 + fmax(m1, fmax(m2, m3));
    describe(p, desc, sizeof desc);
    cr_assert(fabs(a - b) <= 1e-9 * scale, "<fwd, dy> %.17g vs <x, bwd_data> %.17g (%s)", a, b,
              desc);
    cr_assert(fabs(a - c) <= 1e-9 * scale, "<fwd, dy> %.17g vs <w, bwd_weight> %.17g (%s)", a, c,
              desc);
    run_free(&r);
}

/* ---- the textbook definition ------------------------------------------------------------ */

/* Visit every (g, n, k, c, output position, tap) whose input position lies inside the input,
 * and accumulate the three directions by their definitions: y[o] += x[i] w, dx[i] += dy[o] w,
 * dw += dy[o] x[i]. Offsets come from the layout names. */
static void textbook(const gconv_problem *p, const run3 *r, double *y, double *dx, double *dw)
{
    tdesc ti = in_desc(p), to = out_desc(p), tw = wei_desc(p);
    int64_t i, j;
    int ix[6], ox[6], wx[6], a;
    memset(y, 0, (size_t)r->ny * sizeof *y);
    memset(dx, 0, (size_t)r->nx * sizeof *dx);
    memset(dw, 0, (size_t)r->nw * sizeof *dw);
    for (i = 0; i < r->ny; i++) { /* ox = g, n, k, d, h, w */
        t_unflatten(&to, i, ox);
        for (j = 0; j < r->nw / p->G / p->K; j++) { /* c and taps */
            int64_t oi, oo, ow, tap = j;
            int inside = 1;
            wx[0] = ox[0], wx[1] = ox[2];
            wx[5] = (int)(tap % p->filter[2]), tap /= p->filter[2];
            wx[4] = (int)(tap % p->filter[1]), tap /= p->filter[1];
            wx[3] = (int)(tap % p->filter[0]), tap /= p->filter[0];
            wx[2] = (int)tap;
            ix[0] = ox[0], ix[1] = ox[1], ix[2] = wx[2];
            for (a = 0; a < 3; a++) {
                ix[3 + a] = ox[3 + a] * p->stride[a] - p->pad_lo[a] + wx[3 + a] * p->dilation[a];
                inside &= ix[3 + a] >= 0 && ix[3 + a] < p->in[a];
            }
            if (!inside)
                continue;
            oi = t_off(&ti, ix), oo = t_off(&to, ox), ow = t_off(&tw, wx);
            y[oo] += (double)r->x[oi] * r->w[ow];
            dx[oi] += (double)r->dy[oo] * r->w[ow];
            dw[ow] += (double)r->dy[oo] * r->x[oi];
        }
    }
}

SEED_PARAMS(definition, all_directions, 100, 36)

static void check_definition(const gconv_problem *p, uint64_t seed)
{
    run3 r = run_all(p, seed);
    double *y = (double *)malloc((size_t)r.ny * sizeof(double));
    double *dx = (double *)malloc((size_t)r.nx * sizeof(double));
    double *dw = (double *)malloc((size_t)r.nw * sizeof(double));
    char desc[256];
    describe(p, desc, sizeof desc);
    textbook(p, &r, y, dx, dw);
    expect_close(r.y, y, r.ny, 1e-9, "fwd", desc);
    expect_close(r.dx, dx, r.nx, 1e-9, "bwd_data", desc);
    expect_close(r.dw, dw, r.nw, 1e-9, "bwd_weight", desc);
    free(y), free(dx), free(dw);
    run_free(&r);
}

ParameterizedTest(int *seed, definition, all_directions)
{
    gconv_problem p = random_problem((uint64_t)*seed, 1);
    check_definition(&p, (uint64_t)*seed);
}

Test(definition, accumulator_block_edges)
{
    /* K 17 and C 33 cross the backward-weight blocks (16 x 32); stride 2, dilation 2, pads */
    gconv_problem p;
    gconv_problem_2d(&p, 2, 2, 33, 17, 6, 7, 3, 2, 2, 1, 1, 2, 2, 1);
    p.pad_hi[1] = 0;
    p.wei_layout = GCONV_GKCYX;
    check_definition(&p, 7);
}

/* ---- adjoint identities ----------------------------------------------------------------- */

SEED_PARAMS(adjoint, random_problems, 1, 48)

ParameterizedTest(int *seed, adjoint, random_problems)
{
    gconv_problem p = random_problem((uint64_t)*seed, 1);
    check_adjoint(&p, (uint64_t)*seed);
}

Test(adjoint, real_sizes_2d_and_3d, .timeout = 60)
{
    /* about 150 M multiply-adds per direction in 2D and 50 M in 3D: the reference must be
     * fast enough for GPU tests of this size */
    gconv_problem p;
    gconv_problem_2d(&p, 8, 2, 32, 32, 32, 32, 3, 3, 1, 1, 1, 1, 1, 1);
    check_adjoint(&p, 11);
    gconv_problem_3d(&p, 4, 1, 16, 16, 12, 12, 12, 3, 3, 3, 2, 1, 1, 1, 1, 1, 1, 1, 2);
    gconv_problem_set_layouts(&p, GCONV_NGCHW, GCONV_GKCYX);
    check_adjoint(&p, 12);
}

/* ---- grouped = G dense convolutions ----------------------------------------------------- */

SEED_PARAMS(grouped, equals_dense_per_group, 200, 18)

ParameterizedTest(int *seed, grouped, equals_dense_per_group)
{
    gconv_problem p = random_problem((uint64_t)*seed, 2), q = p;
    run3 r = run_all(&p, (uint64_t)*seed), d;
    tdesc ti = in_desc(&p), to = out_desc(&p), tw = wei_desc(&p), qi, qo, qw;
    char desc[256];
    int g;
    describe(&p, desc, sizeof desc);
    q.G = 1;
    qi = in_desc(&q), qo = out_desc(&q), qw = wei_desc(&q);
    for (g = 0; g < p.G; g++) {
        /* slice group g's inputs, run dense, compare with group g's slice of the results */
        d.x = fmalloc(t_count(&qi)), d.w = fmalloc(t_count(&qw)), d.dy = fmalloc(t_count(&qo));
        t_copy(&qi, d.x, &ti, r.x, g);
        t_copy(&qw, d.w, &tw, r.w, g);
        t_copy(&qo, d.dy, &to, r.dy, g);
        run_dirs(&q, &d, NULL, NULL);
        expect_converted(&qo, d.y, &to, r.y, g, "fwd", desc);
        expect_converted(&qi, d.dx, &ti, r.dx, g, "bwd_data", desc);
        expect_converted(&qw, d.dw, &tw, r.dw, g, "bwd_weight", desc);
        run_free(&d);
    }
    run_free(&r);
}

/* ---- every layout gives the same values ------------------------------------------------- */

SEED_PARAMS(layouts, agree, 300, 9)

ParameterizedTest(int *seed, layouts, agree)
{
    /* the problem in NHWGC/GKYXC with an epilogue (bias, residual, ReLU on fwd; residual and
     * clamp on bwd_data), then in each of the 18 (input, output, weight) family combinations
     * with every tensor converted here; results converted back must be identical */
    gconv_problem p = random_problem((uint64_t)*seed, 1), q;
    uint64_t s = (uint64_t)*seed;
    int64_t nb;
    float *bias, *res_out, *res_in;
    run3 r;
    gconv_epilogue ef = gconv_epi_scale(0.5f), eb = gconv_epi_scale(2.0f);
    tdesc ti, to, tw;
    char desc[256];
    int a, b, c;
    gconv_problem_set_layouts(&p, GCONV_NHWGC, GCONV_GKYXC);
    nb = (int64_t)p.G * p.K;
    bias = rnd_data(&s, nb);
    res_out = rnd_data(&s, gconv_out_elems(&p));
    res_in = rnd_data(&s, gconv_in_elems(&p));
    gconv_epi_add_d(&ef, bias, gconv_bias_strides(&p), 1.0f);
    gconv_epi_add_d(&ef, res_out, gconv_out_strides(&p), -1.0f);
    ef.act = gconv_relu();
    gconv_epi_add_d(&eb, res_in, gconv_in_strides(&p), 0.25f);
    eb.act = gconv_clamp(-0.75f, 0.5f);
    r = random_inputs(&p, s);
    run_dirs(&p, &r, &ef, &eb);
    ti = in_desc(&p), to = out_desc(&p), tw = wei_desc(&p);
    for (a = 0; a < 3; a++)
        for (b = 0; b < 3; b++)
            for (c = 0; c < 2; c++) {
                run3 v;
                tdesc vi, vo, vw;
                float *v_res_out, *v_res_in;
                gconv_epilogue vf = ef, vb = eb;
                q = p;
                q.in_layout = gconv_layout_for(act_families[a], p.ndim);
                q.out_layout = gconv_layout_for(act_families[b], p.ndim);
                q.wei_layout = gconv_layout_for(wei_families[c], p.ndim);
                describe(&q, desc, sizeof desc);
                vi = in_desc(&q), vo = out_desc(&q), vw = wei_desc(&q);
                v.x = t_converted(&vi, &ti, r.x);
                v.w = t_converted(&vw, &tw, r.w);
                v.dy = t_converted(&vo, &to, r.dy);
                v_res_out = t_converted(&vo, &to, res_out);
                v_res_in = t_converted(&vi, &ti, res_in);
                vf.d[1].data = v_res_out, vf.d[1].strides = gconv_out_strides(&q);
                vb.d[0].data = v_res_in, vb.d[0].strides = gconv_in_strides(&q);
                run_dirs(&q, &v, &vf, &vb);
                expect_converted(&vo, v.y, &to, r.y, 0, "fwd", desc);
                expect_converted(&vi, v.dx, &ti, r.dx, 0, "bwd_data", desc);
                expect_converted(&vw, v.dw, &tw, r.dw, 0, "bwd_weight", desc);
                free(v_res_out), free(v_res_in);
                run_free(&v);
            }
    free(bias), free(res_out), free(res_in);
    run_free(&r);
}

/* ---- conv -> conv ----------------------------------------------------------------------- */

/* fwd_fwd against: grouped fwd; mid = act0(y + b0) merged into one G*K-channel tensor (G = 1)
 * in the output's layout family; a 1x1 G = 1 fwd with weights w1 (K1 x G*K row-major is
 * GKYXC with one group and one tap) and b1 added as one more D tensor scaled like acc. */
static void check_fwd_fwd(const gconv_problem *p, int K1, uint64_t seed, int with_biases,
                          gconv_act act0, const gconv_epilogue *epi_in)
{
    uint64_t s = seed;
    int osz[3] = {gconv_out_len(p, 0), gconv_out_len(p, 1), gconv_out_len(p, 2)};
    int GK = p->G * p->K, zero[3] = {0, 0, 0}, one[3] = {1, 1, 1}, a;
    gconv_problem q;
    tdesc to = out_desc(p), tm = act_desc(gconv_out_layout(p), 1, p->N, GK, osz), tq;
    float *x = rnd_data(&s, gconv_in_elems(p)), *w0 = rnd_data(&s, gconv_wei_elems(p));
    float *b0 = rnd_data(&s, GK), *w1 = rnd_data(&s, (int64_t)K1 * GK), *b1 = rnd_data(&s, K1);
    float *y = fmalloc(gconv_out_elems(p));
    float *mid = fmalloc(t_count(&tm));
    float *fused, *composed;
    double *want;
    int64_t i, n;
    int idx[6], midx[6];
    gconv_epilogue epi = *epi_in, epi2;
    char desc[256];
    describe(p, desc, sizeof desc);
    gconv_problem_nd(&q, p->ndim, 1, p->N, GK, K1, osz + 3 - p->ndim, one, one, zero, one);
    q.in_layout = q.out_layout = gconv_layout_for(gconv_out_layout(p), p->ndim);
    tq = out_desc(&q);
    n = t_count(&tq);
    fused = rnd_data(&s, n), composed = rnd_data(&s, n);
    want = (double *)malloc((size_t)n * sizeof(double));
    for (a = 0; a < epi.num_d; a++) /* D tensors sized for fwd_fwd's output */
        epi.d[a].data = rnd_data(&s, n), epi.d[a].strides = gconv_out_strides(&q);
    cr_assert_eq(gconv_ref_fwd_fwd(p, K1, GCONV_F32, x, w0, with_biases ? b0 : NULL, act0, w1,
                                   with_biases ? b1 : NULL, fused, GCONV_F32, &epi),
                 GCONV_OK);
    /* the composition */
    cr_assert_eq(gconv_ref_fwd(p, GCONV_F32, x, w0, y, GCONV_F32, NULL), GCONV_OK);
    for (i = 0; i < t_count(&to); i++) {
        float v;
        t_unflatten(&to, i, idx);
        v = y[t_off(&to, idx)] + (with_biases ? b0[idx[0] * p->K + idx[2]] : 0.0f);
        if (act0.kind == GCONV_ACT_RELU)
            v = v > 0 ? v : 0;
        else if (act0.kind == GCONV_ACT_CLAMP)
            v = v < act0.lo ? act0.lo : v > act0.hi ? act0.hi : v;
        memcpy(midx, idx, sizeof idx);
        midx[0] = 0, midx[2] = idx[0] * p->K + idx[2];
        mid[t_off(&tm, midx)] = v;
    }
    epi2 = epi;
    if (with_biases)
        gconv_epi_add_d(&epi2, b1, gconv_bias_strides(&q), epi.alpha);
    cr_assert_eq(gconv_ref_fwd(&q, GCONV_F32, mid, w1, composed, GCONV_F32, &epi2), GCONV_OK);
    for (i = 0; i < n; i++)
        want[i] = composed[i];
    expect_close(fused, want, n, 1e-6, "fwd_fwd", desc);
    for (a = 0; a < epi.num_d; a++)
        free((void *)epi.d[a].data);
    free(x), free(w0), free(b0), free(w1), free(b1), free(y), free(mid), free(fused);
    free(composed), free(want);
}

SEED_PARAMS(fwd_fwd, equals_composition, 400, 15)

ParameterizedTest(int *seed, fwd_fwd, equals_composition)
{
    uint64_t s = (uint64_t)*seed;
    gconv_problem p = random_problem(s, 1);
    gconv_act acts[3];
    gconv_epilogue e = gconv_epi_scale(*seed % 2 ? 1.0f : 0.5f);
    int choice = *seed % 3, K1 = 1 + *seed % 5;
    acts[0] = gconv_act_none(), acts[1] = gconv_relu(), acts[2] = gconv_clamp(-0.25f, 0.75f);
    e.num_d = *seed % 4; /* filled with random tensors by check_fwd_fwd */
    {
        int d;
        for (d = 0; d < e.num_d; d++)
            e.beta[d] = d == 0 ? 1.0f : -0.5f;
    }
    e.act = acts[(choice + 1) % 3];
    check_fwd_fwd(&p, K1, s, *seed % 5 != 0, acts[choice], &e);
}

Test(fwd_fwd, blocks_of_intermediate_and_output_channels)
{
    /* G*K = 130 and K1 = 131 cross the 128-channel blocks of the reference */
    gconv_problem p;
    gconv_epilogue e = gconv_epi_scale(1.0f);
    gconv_problem_1d(&p, 65, 2, 1, 2, 6, 3, 2, 1, 1);
    p.pad_hi[2] = 2;
    gconv_problem_set_layouts(&p, GCONV_GNHWC, GCONV_GKCYX);
    check_fwd_fwd(&p, 131, 99, 1, gconv_relu(), &e);
    p.out_layout = GCONV_NGCW;
    check_fwd_fwd(&p, 131, 98, 1, gconv_clamp(-0.5f, 0.5f), &e);
}

/* ---- backward weight: alpha and beta ---------------------------------------------------- */

SEED_PARAMS(bwd_weight, alpha_beta, 500, 6)

ParameterizedTest(int *seed, bwd_weight, alpha_beta)
{
    uint64_t s = (uint64_t)*seed;
    gconv_problem p = random_problem(s, 1);
    run3 r = run_all(&p, s);
    float *old = rnd_data(&s, r.nw), *dw = fmalloc(r.nw);
    double *want = (double *)malloc((size_t)r.nw * sizeof(double));
    gconv_f16 *dw16 = (gconv_f16 *)malloc((size_t)r.nw * sizeof(gconv_f16));
    char desc[256];
    int64_t i;
    describe(&p, desc, sizeof desc);
    /* alpha * acc + beta * old */
    memcpy(dw, old, (size_t)r.nw * sizeof(float));
    cr_assert_eq(gconv_ref_bwd_weight(&p, GCONV_F32, r.x, r.dy, dw, GCONV_F32, 2.0f, -0.5f),
                 GCONV_OK);
    for (i = 0; i < r.nw; i++)
        want[i] = 2.0 * r.dw[i] - 0.5 * old[i];
    expect_close(dw, want, r.nw, 1e-9, "alpha 2 beta -0.5", desc);
    /* alpha 0, beta 1 leaves the old values */
    memcpy(dw, old, (size_t)r.nw * sizeof(float));
    cr_assert_eq(gconv_ref_bwd_weight(&p, GCONV_F32, r.x, r.dy, dw, GCONV_F32, 0.0f, 1.0f),
                 GCONV_OK);
    expect_same(dw, old, r.nw, "alpha 0 beta 1", desc);
    /* beta 0 never reads: NaN old values vanish */
    for (i = 0; i < r.nw; i++)
        dw[i] = NAN;
    cr_assert_eq(gconv_ref_bwd_weight(&p, GCONV_F32, r.x, r.dy, dw, GCONV_F32, -1.0f, 0.0f),
                 GCONV_OK);
    for (i = 0; i < r.nw; i++)
        want[i] = -r.dw[i];
    expect_close(dw, want, r.nw, 1e-9, "alpha -1 beta 0", desc);
    /* fp16 gradient: old read as fp16, result rounded once to fp16 */
    for (i = 0; i < r.nw; i++)
        dw16[i] = gconv_f32_to_f16(old[i]);
    cr_assert_eq(gconv_ref_bwd_weight(&p, GCONV_F32, r.x, r.dy, dw16, GCONV_F16, 1.0f, 1.0f),
                 GCONV_OK);
    for (i = 0; i < r.nw; i++)
        cr_assert_eq(dw16[i].bits, gconv_f32_to_f16(r.dw[i] + old[i]).bits, "fp16 element %lld",
                     (long long)i);
    free(old), free(dw), free(want), free(dw16);
    run_free(&r);
}
