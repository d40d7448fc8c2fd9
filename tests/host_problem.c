/* tests/host_problem.c: problem validation, sizes, layouts and status strings of
 * gconv/problem.h and gconv/layout.h, checked against hand-written expectations.
 *
 * Build and run: gcc -std=c11 -Wall -Wextra -pedantic -Werror -O2 -I. tests/host_problem.c
 *                    -o build/host_problem -lcriterion -lm && build/host_problem
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <limits.h>
#include <string.h>

#include "gconv/layout.h"
#include "gconv/problem.h"

/* A valid 2D problem: G 2, N 3, C 4, K 5, 8x9 input, 3x3 filter, stride 1, pad 1, dilation 1. */
static gconv_problem base_2d(void)
{
    gconv_problem p;
    gconv_problem_2d(&p, 2, 3, 4, 5, 8, 9, 3, 3, 1, 1, 1, 1, 1, 1);
    return p;
}

static gconv_problem base_3d(void)
{
    gconv_problem p;
    gconv_problem_3d(&p, 2, 1, 3, 4, 5, 6, 7, 3, 3, 3, 1, 2, 1, 1, 1, 1, 1, 1, 2);
    return p;
}

/* ---- rejections ------------------------------------------------------------------------- */

/* Every way of breaking a problem, with the status and a word the reason must contain. */
enum mutation {
    M_G0, M_NNEG, M_C0, M_K0, M_W0, M_HFILTER0, M_ZFILTERNEG, M_STRIDE_W0, M_STRIDE_HNEG,
    M_DIL_D0, M_DIL_WNEG, M_PADLO_WNEG, M_PADHI_HNEG, M_2D_USES_D, M_2D_PAD_D, M_1D_STRIDE_H,
    M_NDIM0, M_NDIM4, M_FILTER_TOO_BIG, M_DILATED_TOO_BIG, M_IN_OVERFLOW, M_WEI_OVERFLOW,
    M_EXTENT_OVERFLOW, M_IN_WEIGHT_LAYOUT, M_IN_1D_LAYOUT, M_WEI_ACT_LAYOUT, M_OUT_3D_LAYOUT,
    M_WEI_3D_LAYOUT, M_LAYOUT_OUT_OF_RANGE
};

struct bad_case {
    enum mutation m;
    gconv_status want;
    char needle[24]; /* a piece of the reason (arrays, not pointers: params are copied) */
};

static gconv_problem mutate(enum mutation m)
{
    gconv_problem p = base_2d();
    gconv_problem q = base_3d();
    switch (m) {
    case M_G0: p.G = 0; break;
    case M_NNEG: p.N = -1; break;
    case M_C0: p.C = 0; break;
    case M_K0: p.K = 0; break;
    case M_W0: p.in[2] = 0; break;
    case M_HFILTER0: p.filter[1] = 0; break;
    case M_ZFILTERNEG: q.filter[0] = -3; return q;
    case M_STRIDE_W0: p.stride[2] = 0; break;
    case M_STRIDE_HNEG: p.stride[1] = -2; break;
    case M_DIL_D0: q.dilation[0] = 0; return q;
    case M_DIL_WNEG: p.dilation[2] = -1; break;
    case M_PADLO_WNEG: p.pad_lo[2] = -1; break;
    case M_PADHI_HNEG: p.pad_hi[1] = -1; break;
    case M_2D_USES_D: p.in[0] = 2; break;
    case M_2D_PAD_D: p.pad_hi[0] = 1; break;
    case M_1D_STRIDE_H: gconv_problem_1d(&p, 1, 1, 1, 1, 10, 3, 1, 0, 1); p.stride[1] = 2; break;
    case M_NDIM0: p.ndim = 0; break;
    case M_NDIM4: p.ndim = 4; break;
    case M_FILTER_TOO_BIG: p.filter[2] = 12; break; /* W 9 + 2 pad = 11 < 12 */
    case M_DILATED_TOO_BIG: p.dilation[1] = 5; break; /* span 11 > 8 + 2 */
    case M_IN_OVERFLOW:
        p.G = 1 << 20, p.N = 1 << 20, p.C = 1 << 20, p.in[1] = 1 << 10, p.in[2] = 1 << 10;
        break;
    case M_WEI_OVERFLOW:
        /* input and output stay near 2^35; the weights are (2^31 - 1)^2 * 9 > 2^62 */
        p.G = 1, p.N = 1, p.C = INT_MAX, p.K = INT_MAX, p.in[1] = 4, p.in[2] = 4;
        break;
    case M_EXTENT_OVERFLOW: p.in[2] = INT_MAX; break; /* INT_MAX + 2 pads */
    case M_IN_WEIGHT_LAYOUT: p.in_layout = GCONV_GKYXC; break;
    case M_IN_1D_LAYOUT: p.in_layout = GCONV_NWGC; break;
    case M_WEI_ACT_LAYOUT: p.wei_layout = GCONV_NHWGC; break;
    case M_OUT_3D_LAYOUT: p.out_layout = GCONV_GNDHWC; break;
    case M_WEI_3D_LAYOUT: p.wei_layout = GCONV_GKCZYX; break;
    case M_LAYOUT_OUT_OF_RANGE: p.out_layout = (gconv_layout)99; break;
    }
    return p;
}

ParameterizedTestParameters(problem_check, rejects)
{
    static struct bad_case cases[] = {
        {M_G0, GCONV_ERR_SIZE, "are 0, 3, 4, 5"},
        {M_NNEG, GCONV_ERR_SIZE, "are 2, -1, 4, 5"},
        {M_C0, GCONV_ERR_SIZE, "are 2, 3, 0, 5"},
        {M_K0, GCONV_ERR_SIZE, "are 2, 3, 4, 0"},
        {M_W0, GCONV_ERR_SIZE, "axis W: input size 0"},
        {M_HFILTER0, GCONV_ERR_SIZE, "filter size 0"},
        {M_ZFILTERNEG, GCONV_ERR_SIZE, "filter size -3"},
        {M_STRIDE_W0, GCONV_ERR_STRIDE, "axis W: stride 0"},
        {M_STRIDE_HNEG, GCONV_ERR_STRIDE, "axis H: stride -2"},
        {M_DIL_D0, GCONV_ERR_DILATION, "axis D: dilation 0"},
        {M_DIL_WNEG, GCONV_ERR_DILATION, "axis W: dilation -1"},
        {M_PADLO_WNEG, GCONV_ERR_PAD, "axis W: pads -1 and 1"},
        {M_PADHI_HNEG, GCONV_ERR_PAD, "axis H: pads 1 and -1"},
        {M_2D_USES_D, GCONV_ERR_UNUSED_DIM, "axis D is unused"},
        {M_2D_PAD_D, GCONV_ERR_UNUSED_DIM, "axis D is unused"},
        {M_1D_STRIDE_H, GCONV_ERR_UNUSED_DIM, "axis H is unused"},
        {M_NDIM0, GCONV_ERR_NDIM, "ndim is 0"},
        {M_NDIM4, GCONV_ERR_NDIM, "ndim is 4"},
        {M_FILTER_TOO_BIG, GCONV_ERR_EMPTY_OUTPUT, "spans 12"},
        {M_DILATED_TOO_BIG, GCONV_ERR_EMPTY_OUTPUT, "input is 10"},
        {M_IN_OVERFLOW, GCONV_ERR_OVERFLOW, "input"},
        {M_WEI_OVERFLOW, GCONV_ERR_OVERFLOW, "weights"},
        {M_EXTENT_OVERFLOW, GCONV_ERR_OVERFLOW, "axis W"},
        {M_IN_WEIGHT_LAYOUT, GCONV_ERR_LAYOUT, "input layout GKYXC"},
        {M_IN_1D_LAYOUT, GCONV_ERR_LAYOUT, "input layout NWGC"},
        {M_WEI_ACT_LAYOUT, GCONV_ERR_LAYOUT, "weight layout NHWGC"},
        {M_OUT_3D_LAYOUT, GCONV_ERR_LAYOUT, "output layout GNDHWC"},
        {M_WEI_3D_LAYOUT, GCONV_ERR_LAYOUT, "weight layout GKCZYX"},
        {M_LAYOUT_OUT_OF_RANGE, GCONV_ERR_LAYOUT, "output layout ?"},
    };
    return cr_make_param_array(struct bad_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(struct bad_case *bc, problem_check, rejects)
{
    gconv_problem p = mutate(bc->m);
    char why[256];
    gconv_status s;
    memset(why, 0, sizeof why);
    s = gconv_problem_check(&p, why, sizeof why);
    cr_assert_eq(s, bc->want, "case %d: got %s (%s), want %s", (int)bc->m, gconv_status_name(s),
                 why, gconv_status_name(bc->want));
    /* "message: detail", detail naming the axis or value */
    cr_assert_eq(strncmp(why, gconv_status_string(s), strlen(gconv_status_string(s))), 0,
                 "reason '%s' should start with the status message", why);
    cr_assert_neq(strstr(why, bc->needle), NULL, "case %d: reason '%s' should contain '%s'",
                  (int)bc->m, why, bc->needle);
}

Test(problem_check, null_problem_and_reason_buffers)
{
    gconv_problem p = base_2d();
    char why[64] = "untouched";
    cr_assert_eq(gconv_problem_check(NULL, why, sizeof why), GCONV_ERR_NULL);
    cr_assert_neq(strstr(why, "null"), NULL, "%s", why);
    /* no buffer, or an empty one: status only, nothing written */
    cr_assert_eq(gconv_problem_check(NULL, NULL, 0), GCONV_ERR_NULL);
    p.stride[2] = 0;
    strcpy(why, "untouched");
    cr_assert_eq(gconv_problem_check(&p, why, 0), GCONV_ERR_STRIDE);
    cr_assert_str_eq(why, "untouched");
    /* a short buffer is truncated and terminated */
    cr_assert_eq(gconv_problem_check(&p, why, 8), GCONV_ERR_STRIDE);
    cr_assert_eq(strlen(why), 7u);
}

Test(problem_check, first_error_wins_in_reading_order)
{
    gconv_problem p = base_2d();
    p.stride[2] = 0;
    p.pad_lo[1] = -1; /* H is checked before W */
    cr_assert_eq(gconv_problem_check(&p, NULL, 0), GCONV_ERR_PAD);
    p.G = 0;
    cr_assert_eq(gconv_problem_check(&p, NULL, 0), GCONV_ERR_SIZE);
}

/* ---- accepted edge cases ---------------------------------------------------------------- */

Test(problem_check, accepts_edge_cases)
{
    gconv_problem p;
    char why[256] = "stale";
    /* filter exactly as large as the padded input: one output */
    gconv_problem_2d(&p, 1, 1, 1, 1, 3, 4, 5, 6, 1, 1, 1, 1, 1, 1);
    cr_assert_eq(gconv_problem_check(&p, why, sizeof why), GCONV_OK, "%s", why);
    cr_assert_str_eq(why, "", "success clears the reason");
    cr_assert_eq(gconv_out_len(&p, 1), 1);
    cr_assert_eq(gconv_out_len(&p, 2), 1);
    /* dilated span exactly the padded input: (3-1)*4 + 1 = 9 = 7 + 2 */
    gconv_problem_1d(&p, 1, 1, 1, 1, 7, 3, 1, 1, 4);
    cr_assert_eq(gconv_problem_check(&p, why, sizeof why), GCONV_OK, "%s", why);
    cr_assert_eq(gconv_out_len(&p, 2), 1);
    /* asymmetric pads, one of them zero; pad larger than the filter */
    gconv_problem_2d(&p, 3, 2, 1, 1, 5, 5, 2, 2, 2, 2, 0, 0, 1, 1);
    p.pad_lo[1] = 0, p.pad_hi[1] = 3, p.pad_lo[2] = 4, p.pad_hi[2] = 0;
    cr_assert_eq(gconv_problem_check(&p, why, sizeof why), GCONV_OK, "%s", why);
    /* stride larger than the input, 1x1x1 3D, explicit layouts of the right dimension */
    gconv_problem_3d(&p, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 7, 7, 7, 0, 0, 0, 1, 1, 1);
    gconv_problem_set_layouts(&p, GCONV_NGCHW, GCONV_GKCYX);
    cr_assert_eq(gconv_problem_check(&p, why, sizeof why), GCONV_OK, "%s", why);
    cr_assert_eq(p.in_layout, GCONV_NGCDHW);
    cr_assert_eq(p.wei_layout, GCONV_GKCZYX);
    cr_assert_eq(gconv_out_spatial(&p), 1);
}

Test(problem_fill, constructors_keep_unused_slots_neutral)
{
    gconv_problem p;
    int i;
    gconv_problem_1d(&p, 2, 3, 4, 5, 17, 3, 2, 1, 3);
    cr_assert_eq(p.ndim, 1);
    for (i = 0; i < 2; i++)
        cr_assert(p.in[i] == 1 && p.filter[i] == 1 && p.stride[i] == 1 && p.dilation[i] == 1 &&
                  p.pad_lo[i] == 0 && p.pad_hi[i] == 0, "slot %d", i);
    cr_assert(p.in[2] == 17 && p.filter[2] == 3 && p.stride[2] == 2 && p.pad_lo[2] == 1 &&
              p.pad_hi[2] == 1 && p.dilation[2] == 3);
    cr_assert(p.in_layout == GCONV_LAYOUT_DEFAULT && p.wei_layout == GCONV_LAYOUT_DEFAULT);
    gconv_problem_2d(&p, 1, 1, 1, 1, 10, 11, 2, 3, 4, 5, 6, 7, 8, 9);
    cr_assert(p.in[0] == 1 && p.filter[0] == 1 && p.stride[0] == 1 && p.dilation[0] == 1);
    cr_assert(p.in[1] == 10 && p.in[2] == 11 && p.filter[1] == 2 && p.filter[2] == 3);
    cr_assert(p.stride[1] == 4 && p.stride[2] == 5 && p.pad_lo[1] == 6 && p.pad_hi[2] == 7);
    cr_assert(p.dilation[1] == 8 && p.dilation[2] == 9);
    gconv_problem_3d(&p, 1, 1, 1, 1, 10, 11, 12, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12);
    cr_assert(p.in[0] == 10 && p.filter[0] == 1 && p.filter[2] == 3 && p.stride[0] == 4);
    cr_assert(p.pad_lo[0] == 7 && p.pad_hi[2] == 9 && p.dilation[0] == 10 && p.dilation[2] == 12);
}

/* ---- sizes ------------------------------------------------------------------------------ */

Test(sizes, output_length_on_hand_cases)
{
    gconv_problem p;
    /* (7 + 1 + 1 - 3) / 2 + 1 = 4 */
    gconv_problem_1d(&p, 1, 1, 1, 1, 7, 3, 2, 1, 1);
    cr_assert_eq(gconv_out_len(&p, 2), 4);
    /* dilation 2: span 5, (7 + 2 - 5) / 2 + 1 = 3 */
    gconv_problem_1d(&p, 1, 1, 1, 1, 7, 3, 2, 1, 2);
    cr_assert_eq(gconv_out_len(&p, 2), 3);
    /* floor: (10 - 3) / 4 + 1 = 2 */
    gconv_problem_1d(&p, 1, 1, 1, 1, 10, 3, 4, 0, 1);
    cr_assert_eq(gconv_out_len(&p, 2), 2);
    /* asymmetric: (5 + 1 + 0 - 2) / 3 + 1 = 2 */
    gconv_problem_1d(&p, 1, 1, 1, 1, 5, 2, 3, 0, 1);
    p.pad_lo[2] = 1;
    cr_assert_eq(gconv_out_len(&p, 2), 2);
    /* 3D, each axis different: D (4+0-1)/1+1 = 4, H (9+2-5)/2+1 = 4, W (6+6-7)/3+1 = 2 */
    gconv_problem_3d(&p, 1, 1, 1, 1, 4, 9, 6, 1, 3, 4, 1, 2, 3, 0, 1, 3, 1, 2, 2);
    cr_assert_eq(gconv_out_len(&p, 0), 4);
    cr_assert_eq(gconv_out_len(&p, 1), 4);
    cr_assert_eq(gconv_out_len(&p, 2), 2);
    cr_assert_eq(gconv_out_spatial(&p), 32);
    cr_assert_eq(gconv_in_spatial(&p), 216);
    cr_assert_eq(gconv_filter_taps(&p), 12);
    /* unused slots always give 1 */
    gconv_problem_1d(&p, 1, 1, 1, 1, 5, 1, 1, 0, 1);
    cr_assert(gconv_out_len(&p, 0) == 1 && gconv_out_len(&p, 1) == 1);
}

Test(sizes, element_and_byte_counts_are_64_bit)
{
    gconv_problem p;
    /* input 17 * 1024 * 512 * 512 = 4 563 402 752 elements (> 2^32) */
    gconv_problem_2d(&p, 1, 17, 1024, 2048, 512, 512, 1, 1, 1, 1, 0, 0, 1, 1);
    cr_assert_eq(gconv_problem_check(&p, NULL, 0), GCONV_OK);
    cr_assert_eq(gconv_in_elems(&p), 4563402752LL);
    cr_assert_eq(gconv_in_bytes(&p, GCONV_F16), 9126805504LL);
    cr_assert_eq(gconv_in_bytes(&p, GCONV_F32), 18253611008LL);
    cr_assert_eq(gconv_out_elems(&p), 9126805504LL);
    cr_assert_eq(gconv_out_bytes(&p, GCONV_BF16), 18253611008LL);
    cr_assert_eq(gconv_wei_elems(&p), 2097152LL);
    cr_assert_eq(gconv_wei_bytes(&p, GCONV_F32), 8388608LL);
    /* flops: 2 * N * K * C * out spatial * taps */
    cr_assert_eq(gconv_flops(&p), 2.0 * 17 * 2048 * 1024 * 262144.0);
    /* groups multiply everything */
    gconv_problem_2d(&p, 3, 2, 5, 7, 4, 4, 3, 3, 1, 1, 1, 1, 1, 1);
    cr_assert_eq(gconv_in_elems(&p), 3 * 2 * 5 * 16);
    cr_assert_eq(gconv_out_elems(&p), 3 * 2 * 7 * 16);
    cr_assert_eq(gconv_wei_elems(&p), 3 * 7 * 5 * 9);
    cr_assert_eq(gconv_flops(&p), 2.0 * 3 * 2 * 7 * 5 * 16 * 9);
}

/* ---- layouts ---------------------------------------------------------------------------- */

/* Hand-written index formulas, outermost letter first. */
static int64_t act_index(gconv_layout family, int64_t G, int64_t N, int64_t C, const int sp[3],
                         int g, int n, int c, int d, int h, int w)
{
    int64_t D = sp[0], H = sp[1], W = sp[2];
    (void)N;
    if (family == GCONV_GNHWC)
        return ((((g * N + n) * D + d) * H + h) * W + w) * C + c;
    if (family == GCONV_NGCHW)
        return ((((n * G + g) * C + c) * D + d) * H + h) * W + w;
    return ((((n * D + d) * H + h) * W + w) * G + g) * C + c;
}

static int64_t wei_index(gconv_layout family, int64_t K, int64_t C, const int f[3], int g, int k,
                         int c, int z, int y, int x)
{
    int64_t Z = f[0], Y = f[1], X = f[2];
    if (family == GCONV_GKCYX)
        return ((((g * K + k) * C + c) * Z + z) * Y + y) * X + x;
    return ((((g * K + k) * Z + z) * Y + y) * X + x) * C + c;
}

Test(layout, strides_of_every_layout_match_index_formulas)
{
    /* activations: G 3, N 2, C 5; weights: G 2, K 3, C 4; spatial 4x3x7 or filter 2x3x5,
     * cut to the layout's dimension */
    int l;
    for (l = GCONV_NWGC; l < GCONV_LAYOUT_COUNT; l++) {
        gconv_layout lay = (gconv_layout)l, fam = gconv_layout_family(lay);
        int nd = gconv_layout_ndim(lay), wei = gconv_layout_is_weight(lay);
        int ext[6], x[6];
        int64_t i, total = 1, sum = 0;
        ext[0] = wei ? 2 : 3, ext[1] = wei ? 3 : 2, ext[2] = wei ? 4 : 5;
        ext[3] = nd == 3 ? (wei ? 2 : 4) : 1, ext[4] = nd >= 2 ? 3 : 1, ext[5] = wei ? 5 : 7;
        for (i = 0; i < 6; i++)
            total *= ext[i];
        for (i = 0; i < total; i++) {
            int64_t got, want, rest = i;
            int a;
            for (a = 5; a >= 0; a--) { /* logical index number i, last letter fastest */
                x[a] = (int)(rest % ext[a]);
                rest /= ext[a];
            }
            if (wei) {
                gconv_wei_strides st = gconv_wei_strides_make(lay, ext[0], ext[1], ext[2], ext + 3);
                got = gconv_wei_offset(&st, x[0], x[1], x[2], x[3], x[4], x[5]);
                want = wei_index(fam, ext[1], ext[2], ext + 3, x[0], x[1], x[2], x[3], x[4], x[5]);
            } else {
                gconv_act_strides st = gconv_act_strides_make(lay, ext[0], ext[1], ext[2], ext + 3);
                got = gconv_act_offset(&st, x[0], x[1], x[2], x[3], x[4], x[5]);
                want = act_index(fam, ext[0], ext[1], ext[2], ext + 3, x[0], x[1], x[2], x[3], x[4],
                                 x[5]);
            }
            cr_assert_eq(got, want, "%s at (%d %d %d %d %d %d)", gconv_layout_name(lay), x[0],
                         x[1], x[2], x[3], x[4], x[5]);
            sum += want;
        }
        /* the formula is a bijection onto [0, total): the offsets sum to total(total-1)/2 */
        cr_assert_eq(sum, total * (total - 1) / 2, "%s", gconv_layout_name(lay));
    }
}

Test(layout, problem_strides_use_the_problem_layouts_and_sizes)
{
    gconv_problem p;
    gconv_act_strides si, so, sb;
    gconv_wei_strides sw;
    int osz[3];
    /* G 2, N 3, C 4, K 5, 6x7 input, 3x3 filter, stride 2, pad 1: output 3x4 */
    gconv_problem_2d(&p, 2, 3, 4, 5, 6, 7, 3, 3, 2, 2, 1, 1, 1, 1);
    gconv_out_sizes(&p, osz);
    cr_assert(osz[0] == 1 && osz[1] == 3 && osz[2] == 4);
    si = gconv_in_strides(&p); /* DEFAULT = NHWGC: [N][H][W][G][C] */
    cr_assert(si.c == 1 && si.g == 4 && si.s[2] == 8 && si.s[1] == 56 && si.n == 336);
    so = gconv_out_strides(&p); /* NHWGK with K 5 over 3x4 */
    cr_assert(so.c == 1 && so.g == 5 && so.s[2] == 10 && so.s[1] == 40 && so.n == 120);
    sw = gconv_weight_strides(&p); /* GKYXC */
    cr_assert(sw.c == 1 && sw.s[2] == 4 && sw.s[1] == 12 && sw.k == 36 && sw.g == 180);
    /* mixed: input GNHWC, output NGKHW, weights GKCYX */
    p.in_layout = GCONV_GNHWC, p.out_layout = GCONV_NGCHW, p.wei_layout = GCONV_GKCYX;
    cr_assert_eq(gconv_problem_check(&p, NULL, 0), GCONV_OK);
    si = gconv_in_strides(&p);
    cr_assert(si.c == 1 && si.s[2] == 4 && si.s[1] == 28 && si.n == 168 && si.g == 504);
    so = gconv_out_strides(&p);
    cr_assert(so.s[2] == 1 && so.s[1] == 4 && so.c == 12 && so.g == 60 && so.n == 120);
    sw = gconv_weight_strides(&p);
    cr_assert(sw.s[2] == 1 && sw.s[1] == 3 && sw.c == 9 && sw.k == 36 && sw.g == 180);
    /* bias: g*K + k everywhere */
    sb = gconv_bias_strides(&p);
    cr_assert_eq(gconv_act_offset(&sb, 1, 2, 3, 0, 2, 3), 8);
    cr_assert_eq(gconv_act_offset(&sb, 0, 0, 4, 0, 0, 0), 4);
}

Test(layout, family_dimension_and_role_helpers)
{
    int l;
    cr_assert_eq(gconv_layout_family(GCONV_NWGC), GCONV_NHWGC);
    cr_assert_eq(gconv_layout_family(GCONV_NDHWGC), GCONV_NHWGC);
    cr_assert_eq(gconv_layout_family(GCONV_GNWC), GCONV_GNHWC);
    cr_assert_eq(gconv_layout_family(GCONV_NGCDHW), GCONV_NGCHW);
    cr_assert_eq(gconv_layout_family(GCONV_GKXC), GCONV_GKYXC);
    cr_assert_eq(gconv_layout_family(GCONV_GKCZYX), GCONV_GKCYX);
    cr_assert_eq(gconv_layout_family(GCONV_LAYOUT_DEFAULT), GCONV_LAYOUT_DEFAULT);
    cr_assert_eq(gconv_layout_for(GCONV_NDHWGC, 1), GCONV_NWGC);
    cr_assert_eq(gconv_layout_for(GCONV_GNHWC, 3), GCONV_GNDHWC);
    cr_assert_eq(gconv_layout_for(GCONV_GKCX, 2), GCONV_GKCYX);
    cr_assert_eq(gconv_layout_for(GCONV_NGCHW, 4), GCONV_LAYOUT_DEFAULT);
    for (l = GCONV_NWGC; l < GCONV_LAYOUT_COUNT; l++) {
        gconv_layout x = (gconv_layout)l;
        cr_assert_eq(gconv_layout_ndim(x), (l - 1) % 3 + 1, "%s", gconv_layout_name(x));
        cr_assert_eq(gconv_layout_is_weight(x), l >= GCONV_GKXC, "%s", gconv_layout_name(x));
        cr_assert_eq(gconv_layout_for(x, gconv_layout_ndim(x)), x);
        cr_assert_eq(strlen(gconv_layout_name(x)), (size_t)(gconv_layout_ndim(x) + 3));
    }
    cr_assert_eq(gconv_layout_ndim(GCONV_LAYOUT_DEFAULT), 0);
    cr_assert_str_eq(gconv_layout_name(GCONV_NGCDHW), "NGCDHW");
    cr_assert_str_eq(gconv_layout_name(GCONV_GKYXC), "GKYXC");
}

/* ---- status strings --------------------------------------------------------------------- */

Test(status, every_status_has_a_distinct_message_and_name)
{
    int a, b;
    for (a = 0; a < GCONV_STATUS_COUNT; a++) {
        const char *m = gconv_status_string((gconv_status)a);
        const char *nm = gconv_status_name((gconv_status)a);
        cr_assert(m && m[0], "status %d has no message", a);
        cr_assert(nm && strncmp(nm, "GCONV_", 6) == 0, "status %d name '%s'", a, nm);
        for (b = 0; b < a; b++) {
            cr_assert_str_neq(m, gconv_status_string((gconv_status)b), "%d and %d", a, b);
            cr_assert_str_neq(nm, gconv_status_name((gconv_status)b), "%d and %d", a, b);
        }
    }
    cr_assert_str_eq(gconv_status_name(GCONV_ERR_PAD), "GCONV_ERR_PAD");
    cr_assert_eq(GCONV_OK, 0);
    cr_assert_str_eq(gconv_status_string(GCONV_STATUS_COUNT), "unknown status");
    cr_assert_str_eq(gconv_status_string((gconv_status)-1), "unknown status");
}

Test(status, fail_writes_message_and_detail)
{
    char why[64];
    cr_assert_eq(gconv_impl_fail(GCONV_ERR_ARGUMENT, why, sizeof why, "x is %d", 7),
                 GCONV_ERR_ARGUMENT);
    cr_assert_str_eq(why, "an argument is out of range: x is 7");
    cr_assert_eq(gconv_impl_fail(GCONV_ERR_ARGUMENT, NULL, 10, "x"), GCONV_ERR_ARGUMENT);
}
