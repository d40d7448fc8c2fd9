/* tests/host_reference.c: the CPU reference (gconv/reference.h) on tiny problems whose results
 * are worked out by hand in the comments, for each direction in 1D, 2D and 3D with stride,
 * dilation and asymmetric padding; the epilogue; 16-bit types; refusals.
 *
 * Build and run: gcc -std=c11 -Wall -Wextra -pedantic -Werror -O2 -I. tests/host_reference.c
 *                    -o build/host_reference -lcriterion -lm && build/host_reference
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gconv/reference.h"

#define COUNT(a) (int)(sizeof(a) / sizeof((a)[0]))

static void expect_f32(const float *got, const float *want, int n)
{
    int i;
    for (i = 0; i < n; i++)
        cr_assert_eq(got[i], want[i], "element %d: got %g, want %g", i, (double)got[i],
                     (double)want[i]);
}

enum direction { FWD, BWD_DATA, BWD_WEIGHT };

/* Run one direction on fp32 tensors a, b (fwd: in, wei; bwd_data: d_out, wei; bwd_weight:
 * in, d_out) into a NaN-poisoned result, which must have n elements equal to want. */
static void expect_dir(enum direction dir, const gconv_problem *p, const float *a,
                       const float *b, const float *want, int n)
{
    int64_t count = dir == FWD        ? gconv_out_elems(p)
                    : dir == BWD_DATA ? gconv_in_elems(p)
                                      : gconv_wei_elems(p);
    float *got = (float *)malloc((size_t)count * sizeof *got);
    gconv_status s;
    cr_assert_eq(count, n, "the result has %lld elements, the test expects %d", (long long)count,
                 n);
    memset(got, 0xff, (size_t)count * sizeof *got);
    s = dir == FWD        ? gconv_ref_fwd(p, GCONV_F32, a, b, got, GCONV_F32, NULL)
        : dir == BWD_DATA ? gconv_ref_bwd_data(p, GCONV_F32, a, b, got, GCONV_F32, NULL)
                          : gconv_ref_bwd_weight(p, GCONV_F32, a, b, got, GCONV_F32, 1.0f, 0.0f);
    cr_assert_eq(s, GCONV_OK, "%s", gconv_status_name(s));
    expect_f32(got, want, n);
    free(got);
}

/* 1D, W 5, X 3, stride 2, pads 1 (left) and 2 (right): output length (5+1+2-3)/2+1 = 3.
 * Output o reads inputs 2o-1, 2o, 2o+1. */
static gconv_problem p1d_stride_asym(void)
{
    gconv_problem p;
    gconv_problem_1d(&p, 1, 1, 1, 1, 5, 3, 2, 1, 1);
    p.pad_hi[2] = 2;
    return p;
}

static const float in1d[5] = {1, 2, 3, 4, 5};
static const float w1d[3] = {1, 10, 100};

/* ---- forward ---------------------------------------------------------------------------- */

Test(ref_fwd, stride_and_asymmetric_pad_1d)
{
    gconv_problem p = p1d_stride_asym();
    /* o0: 0*1 + 1*10 + 2*100; o1: 2 + 3*10 + 4*100; o2: 4 + 5*10 + 0*100 */
    const float want[3] = {210, 432, 54};
    cr_assert_eq(gconv_out_len(&p, 2), 3);
    expect_dir(FWD, &p, in1d, w1d, want, 3);
}

Test(ref_fwd, groups_channels_and_dilation_1d)
{
    /* G 2, C 2, K 1, W 4, X 2, dilation 2: outputs o read inputs o and o+2.
     * group 0: c0 = 1 2 3 4, c1 = 5 6 7 8; taps (x0: 1, 2) (x1: 3, 4)
     *   o0 = 1*1 + 5*2 + 3*3 + 7*4 = 48, o1 = 2*1 + 6*2 + 4*3 + 8*4 = 58
     * group 1: c0 = -1 0 1 2, c1 = 3 3 3 3; taps (x0: 1, 0) (x1: 0, -1)
     *   o0 = -1 + 0 + 0 - 3 = -4, o1 = 0 + 0 + 0 - 3 = -3 */
    gconv_problem p;
    const float in[16] = {1, 5, -1, 3, 2, 6, 0, 3, 3, 7, 1, 3, 4, 8, 2, 3}; /* NWGC */
    const float w[8] = {1, 2, 3, 4, 1, 0, 0, -1};                          /* GKXC */
    const float want[4] = {48, -4, 58, -3};                                /* NWGK */
    gconv_problem_1d(&p, 2, 1, 2, 1, 4, 2, 1, 0, 2);
    expect_dir(FWD, &p, in, w, want, 4);
}

Test(ref_fwd, stride_and_asymmetric_pads_2d)
{
    /* 3x3 input 1..9, 2x2 filter (1 2 / 3 4), stride (2, 1), pads top 1 bottom 0, left 0
     * right 1: output 2x3. Row 0 of the output sees the pad row and input row 0:
     *   (0,ow) = 3*in[0][ow] + 4*in[0][ow+1]  -> 11, 18, 9
     * row 1 sees input rows 1 and 2:
     *   (1,0) = 4 + 2*5 + 3*7 + 4*8 = 67, (1,1) = 5 + 12 + 24 + 36 = 77, (1,2) = 6 + 27 = 33 */
    gconv_problem p;
    const float in[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    const float w[4] = {1, 2, 3, 4};
    const float want[6] = {11, 18, 9, 67, 77, 33};
    gconv_problem_2d(&p, 1, 1, 1, 1, 3, 3, 2, 2, 2, 1, 0, 0, 1, 1);
    p.pad_lo[1] = 1, p.pad_hi[2] = 1;
    cr_assert_eq(gconv_out_len(&p, 1), 2);
    cr_assert_eq(gconv_out_len(&p, 2), 3);
    expect_dir(FWD, &p, in, w, want, 6);
}

/* 3D: D 3, H 2, W 2, in[d][h][w] = 1 + 4d + 2h + w; filter Z 2, Y 1, X 2 = (1 2 / 10 20);
 * dilation 2 on D (taps at depth 0 and 2), stride 2 and pad 1 on W: output 1x2x2. */
static gconv_problem p3d_hand(void)
{
    gconv_problem p;
    gconv_problem_3d(&p, 1, 1, 1, 1, 3, 2, 2, 2, 1, 2, 1, 1, 2, 0, 0, 1, 2, 1, 1);
    return p;
}

Test(ref_fwd, dilation_stride_and_pad_3d)
{
    /* ow 0 reads w = -1 (pad), 0 with taps x0, x1; ow 1 reads w = 1, 2 (pad):
     *   (oh, 0) = 2*in[0][oh][0] + 20*in[2][oh][0]; (oh, 1) = 1*in[0][oh][1] + 10*in[2][oh][1]
     *   oh 0: 2*1 + 20*9 = 182, 2 + 10*10 = 102; oh 1: 2*3 + 20*11 = 226, 4 + 10*12 = 124 */
    gconv_problem p = p3d_hand();
    float in[12];
    const float w[4] = {1, 2, 10, 20};
    const float want[4] = {182, 102, 226, 124};
    int i;
    for (i = 0; i < 12; i++)
        in[i] = (float)(i + 1);
    cr_assert_eq(gconv_out_spatial(&p), 4);
    expect_dir(FWD, &p, in, w, want, 4);
}

/* ---- backward data ---------------------------------------------------------------------- */

Test(ref_bwd_data, stride_and_asymmetric_pad_1d)
{
    /* the problem of ref_fwd.stride_and_asymmetric_pad_1d; input i gets dy[o]*w[z] for
     * i = 2o - 1 + z: i0 = 1*10; i1 = 1*100 + 2*1; i2 = 2*10; i3 = 2*100 + 3*1; i4 = 3*10 */
    gconv_problem p = p1d_stride_asym();
    const float dy[3] = {1, 2, 3};
    const float want[5] = {10, 102, 20, 203, 30};
    expect_dir(BWD_DATA, &p, dy, w1d, want, 5);
}

Test(ref_bwd_data, gaps_get_the_epilogue_of_zero)
{
    /* W 8, X 2, stride 3, dilation 2, pad left 1: output 3; output o reads 3o - 1 and 3o + 1.
     * Reached: i1 (o0 z1), i2 (o1 z0), i4 (o1 z1), i5 (o2 z0), i7 (o2 z1); i0, i3, i6 none.
     * With w = (2, 5), dy = (1, 10, 100): plain result 0 5 20 0 50 200 0 500; then
     * relu(acc + D) with D = -1 -1 -1 7 -100 0.5 3 0. */
    gconv_problem p;
    const float w[2] = {2, 5}, dy[3] = {1, 10, 100};
    const float plain[8] = {0, 5, 20, 0, 50, 200, 0, 500};
    const float d[8] = {-1, -1, -1, 7, -100, 0.5f, 3, 0};
    const float want[8] = {0, 4, 19, 7, 0, 200.5f, 3, 500};
    float dx[8];
    gconv_epilogue e = gconv_epi_scale(1.0f);
    gconv_problem_1d(&p, 1, 1, 1, 1, 8, 2, 3, 1, 2);
    p.pad_hi[2] = 0;
    cr_assert_eq(gconv_out_len(&p, 2), 3);
    expect_dir(BWD_DATA, &p, dy, w, plain, 8);
    gconv_epi_add_d(&e, d, gconv_in_strides(&p), 1.0f);
    e.act = gconv_relu();
    memset(dx, 0xff, sizeof dx); /* NaN poison: every element must be written */
    cr_assert_eq(gconv_ref_bwd_data(&p, GCONV_F32, dy, w, dx, GCONV_F32, &e), GCONV_OK);
    expect_f32(dx, want, 8);
}

Test(ref_bwd_data, stride_and_dilation_with_a_common_factor_1d)
{
    /* W 5, X 3, stride 2, dilation 2, pad 2: output 3; output o reads 2o - 2 + 2z.
     * i0 <- (o0 z1), (o1 z0); i2 <- (o0 z2), (o1 z1), (o2 z0); i4 <- (o1 z2), (o2 z1); odd i
     * get nothing. With w = (1, 10, 100), dy = (1, 2, 3): 10 + 2, 0, 100 + 20 + 3, 0, 200 + 30 */
    gconv_problem p;
    const float dy[3] = {1, 2, 3};
    const float want[5] = {12, 0, 123, 0, 230};
    gconv_problem_1d(&p, 1, 1, 1, 1, 5, 3, 2, 2, 2);
    expect_dir(BWD_DATA, &p, dy, w1d, want, 5);
}

Test(ref_bwd_data, two_output_channels_2d)
{
    /* 3x3 input, 2x2 filter, stride 2, no pad: a single output pixel covering the top-left
     * 2x2 window. K 2 with dy = (3, -1), weights k0 = (1 2 / 3 4), k1 = (1 1 / 0 2):
     * dx = 3*k0 - k1 on the window = (2 5 / 9 10), zeros elsewhere. */
    gconv_problem p;
    const float dy[2] = {3, -1};
    const float w[8] = {1, 2, 3, 4, 1, 1, 0, 2};
    const float want[9] = {2, 5, 0, 9, 10, 0, 0, 0, 0};
    gconv_problem_2d(&p, 1, 1, 1, 2, 3, 3, 2, 2, 2, 2, 0, 0, 1, 1);
    expect_dir(BWD_DATA, &p, dy, w, want, 9);
}

/* 3D with a batch: D 2, H 1, W 3; filter Z 2, X 2; stride 2 and pads (1, 0) on W. Output
 * 1x1x2; output ow reads w = 2ow - 1 + x at depth z. */
static gconv_problem p3d_batch(int N)
{
    gconv_problem p;
    gconv_problem_3d(&p, 1, N, 1, 1, 2, 1, 3, 2, 1, 2, 1, 1, 2, 0, 0, 1, 1, 1, 1);
    p.pad_hi[2] = 0;
    return p;
}

Test(ref_bwd_data, stride_and_pad_3d)
{
    /* weights (z, x) = (1 2 / 3 4), dy = (1, 2): input w0 gets dy0*w[z][1] (ow0 x1), w1 gets
     * dy1*w[z][0] (ow1 x0), w2 gets dy1*w[z][1] (ow1 x1): depth 0: 2 2 4, depth 1: 4 6 8 */
    gconv_problem p = p3d_batch(1);
    const float w[4] = {1, 2, 3, 4}, dy[2] = {1, 2};
    const float want[6] = {2, 2, 4, 4, 6, 8};
    cr_assert_eq(gconv_out_spatial(&p), 2);
    expect_dir(BWD_DATA, &p, dy, w, want, 6);
}

/* ---- backward weight -------------------------------------------------------------------- */

Test(ref_bwd_weight, stride_and_asymmetric_pad_1d)
{
    /* dw[z] = sum_o dy[o] * in[2o - 1 + z] with in = 1..5, zero outside:
     * z0 = 0 + 2*2 + 3*4 = 16, z1 = 1 + 2*3 + 3*5 = 22, z2 = 2 + 2*4 + 0 = 10 */
    gconv_problem p = p1d_stride_asym();
    const float dy[3] = {1, 2, 3};
    const float want[3] = {16, 22, 10};
    expect_dir(BWD_WEIGHT, &p, in1d, dy, want, 3);
}

Test(ref_bwd_weight, dilation_two_channels_gkcyx_2d)
{
    /* 3x3 input, 2x2 filter with dilation 2: one output pixel whose taps read the corners.
     * Channel 0 = 1..9, channel 1 = 10 x that; dy = 2: dw[c][y][x] = 2 * in[c][2y][2x]. */
    gconv_problem p;
    float in[18];
    const float dy[1] = {2};
    const float want[8] = {2, 6, 14, 18, 20, 60, 140, 180};
    int i;
    for (i = 0; i < 9; i++)
        in[2 * i] = (float)(i + 1), in[2 * i + 1] = (float)(10 * (i + 1)); /* NHWGC */
    gconv_problem_2d(&p, 1, 1, 2, 1, 3, 3, 2, 2, 1, 1, 0, 0, 2, 2);
    p.wei_layout = GCONV_GKCYX;
    expect_dir(BWD_WEIGHT, &p, in, dy, want, 8);
}

Test(ref_bwd_weight, sums_over_the_batch_3d)
{
    /* the problem of ref_bwd_data.stride_and_pad_3d with N 2:
     * n0: depth0 = 1 2 3, depth1 = 4 5 6, dy = (1, 2); n1: 0 1 0, 2 0 -1, dy = (3, -1)
     * dw[z][x] = sum_n (ow0: dy0 * in[z][x-1]) + (ow1: dy1 * in[z][x+1])
     *   (0,0) = 2*2 + -1*1 = 3;       (0,1) = 1*1 + 2*3 + 3*0 + -1*0 = 7
     *   (1,0) = 2*5 + -1*0 = 10;      (1,1) = 1*4 + 2*6 + 3*2 + -1*-1 = 23 */
    gconv_problem p = p3d_batch(2);
    const float in[12] = {1, 2, 3, 4, 5, 6, 0, 1, 0, 2, 0, -1};
    const float dy[4] = {1, 2, 3, -1};
    const float want[4] = {3, 7, 10, 23};
    expect_dir(BWD_WEIGHT, &p, in, dy, want, 4);
}

Test(ref_bwd_weight, alpha_beta_and_unread_old_values)
{
    gconv_problem p = p1d_stride_asym();
    const float dy[3] = {1, 2, 3};
    float dw[3] = {1, -2, 4};
    /* 0.5 * (16 22 10) + 2 * (1 -2 4) */
    const float want[3] = {10, 7, 13};
    const float zeros[3] = {0, 0, 0};
    cr_assert_eq(gconv_ref_bwd_weight(&p, GCONV_F32, in1d, dy, dw, GCONV_F32, 0.5f, 2.0f),
                 GCONV_OK);
    expect_f32(dw, want, 3);
    /* beta 0: NaN in the old values must not leak */
    dw[0] = NAN, dw[1] = INFINITY, dw[2] = NAN;
    cr_assert_eq(gconv_ref_bwd_weight(&p, GCONV_F32, in1d, dy, dw, GCONV_F32, 0.0f, 0.0f),
                 GCONV_OK);
    expect_f32(dw, zeros, 3);
}

Test(ref_bwd_weight, bf16_inputs_fp32_weights)
{
    /* the 1D hand case with bf16 data (all values exact in bf16) and fp32 gradient */
    gconv_problem p = p1d_stride_asym();
    gconv_bf16 x[5], dy[3];
    float dw[3];
    const float want[3] = {16, 22, 10};
    int i;
    for (i = 0; i < 5; i++)
        x[i] = gconv_f32_to_bf16(in1d[i]);
    for (i = 0; i < 3; i++)
        dy[i] = gconv_f32_to_bf16((float)(i + 1));
    cr_assert_eq(gconv_ref_bwd_weight(&p, GCONV_BF16, x, dy, dw, GCONV_F32, 1.0f, 0.0f),
                 GCONV_OK);
    expect_f32(dw, want, 3);
}

/* ---- epilogue --------------------------------------------------------------------------- */

/* 1D, G 2, K 2, N 2, C 1, W 2, 1x1 filter, input all ones: acc[g][k] = w[g][k] at every
 * (n, w), with w = (1, -2 | 3, 0.5). Output NWGK, 16 elements: ((n*2 + w)*2 + g)*2 + k. */
static gconv_problem p_epi(void)
{
    gconv_problem p;
    gconv_problem_1d(&p, 2, 2, 1, 2, 2, 1, 1, 0, 1);
    return p;
}
static const float ones_epi[8] = {1, 1, 1, 1, 1, 1, 1, 1};
static const float w_epi[4] = {1, -2, 3, 0.5f};

Test(ref_epilogue, bias_by_broadcast_strides_and_relu)
{
    /* relu(acc + bias[g*K + k]) with bias 10 1 -4 -1: 11, 0, 0, 0 at every (n, w) */
    gconv_problem p = p_epi();
    const float bias[4] = {10, 1, -4, -1};
    const float want4[4] = {11, 0, 0, 0};
    float out[16];
    int i;
    gconv_epilogue e = gconv_epi_scale(1.0f);
    cr_assert_eq(gconv_epi_add_d(&e, bias, gconv_bias_strides(&p), 1.0f), GCONV_OK);
    e.act = gconv_relu();
    cr_assert_eq(gconv_ref_fwd(&p, GCONV_F32, ones_epi, w_epi, out, GCONV_F32, &e), GCONV_OK);
    for (i = 0; i < 16; i++)
        cr_assert_eq(out[i], want4[i % 4], "element %d: %g", i, (double)out[i]);
}

Test(ref_epilogue, scale_and_residual_add)
{
    /* 0.5*acc + 2*r with r = 0..15 (full output strides) */
    gconv_problem p = p_epi();
    float r[16], out[16];
    const float want[16] = {0.5f,  1,  5.5f,  6.25f,  8.5f,  9,  13.5f, 14.25f,
                            16.5f, 17, 21.5f, 22.25f, 24.5f, 25, 29.5f, 30.25f};
    int i;
    gconv_epilogue e = gconv_epi_scale(0.5f);
    for (i = 0; i < 16; i++)
        r[i] = (float)i;
    gconv_epi_add_d(&e, r, gconv_out_strides(&p), 2.0f);
    cr_assert_eq(gconv_ref_fwd(&p, GCONV_F32, ones_epi, w_epi, out, GCONV_F32, &e), GCONV_OK);
    expect_f32(out, want, 16);
}

Test(ref_epilogue, clamp_and_relu6)
{
    /* clamp(3*acc, -1.5, 2): 3 -6 9 1.5 -> 2 -1.5 2 1.5; relu6(3*acc) -> 3 0 6 1.5 */
    gconv_problem p = p_epi();
    float out[16];
    const float want_clamp[4] = {2, -1.5f, 2, 1.5f}, want_relu6[4] = {3, 0, 6, 1.5f};
    int i;
    gconv_epilogue e = gconv_epi_scale(3.0f);
    e.act = gconv_clamp(-1.5f, 2.0f);
    cr_assert_eq(gconv_ref_fwd(&p, GCONV_F32, ones_epi, w_epi, out, GCONV_F32, &e), GCONV_OK);
    for (i = 0; i < 16; i++)
        cr_assert_eq(out[i], want_clamp[i % 4], "element %d", i);
    e.act = gconv_relu6();
    cr_assert_eq(gconv_ref_fwd(&p, GCONV_F32, ones_epi, w_epi, out, GCONV_F32, &e), GCONV_OK);
    for (i = 0; i < 16; i++)
        cr_assert_eq(out[i], want_relu6[i % 4], "element %d", i);
}

Test(ref_epilogue, four_d_tensors_with_their_own_broadcasts)
{
    /* y = 2*acc + 1*bias[gk] - 1*r[full] + 0.5*pn[n] + 0.25*pw[w], no activation.
     * pn broadcasts over everything but n, pw over everything but the spatial position. */
    gconv_problem p = p_epi();
    const float bias[4] = {10, 20, 30, 40}, pn[2] = {100, 200}, pw[2] = {4, 8};
    float r[16], out[16];
    gconv_act_strides s_n = {0, 1, 0, {0, 0, 0}}, s_w = {0, 0, 0, {0, 0, 1}};
    gconv_epilogue e = gconv_epi_scale(2.0f);
    int n, w, g, k;
    for (n = 0; n < 16; n++)
        r[n] = (float)(3 * n);
    cr_assert_eq(gconv_epi_add_d(&e, bias, gconv_bias_strides(&p), 1.0f), GCONV_OK);
    cr_assert_eq(gconv_epi_add_d(&e, r, gconv_out_strides(&p), -1.0f), GCONV_OK);
    cr_assert_eq(gconv_epi_add_d(&e, pn, s_n, 0.5f), GCONV_OK);
    cr_assert_eq(gconv_epi_add_d(&e, pw, s_w, 0.25f), GCONV_OK);
    cr_assert_eq(gconv_ref_fwd(&p, GCONV_F32, ones_epi, w_epi, out, GCONV_F32, &e), GCONV_OK);
    for (n = 0; n < 2; n++)
        for (w = 0; w < 2; w++)
            for (g = 0; g < 2; g++)
                for (k = 0; k < 2; k++) {
                    int i = ((n * 2 + w) * 2 + g) * 2 + k;
                    float want = 2 * w_epi[g * 2 + k] + bias[g * 2 + k] - r[i] + 0.5f * pn[n] +
                                 0.25f * pw[w];
                    cr_assert_eq(out[i], want, "element %d: %g want %g", i, (double)out[i],
                                 (double)want);
                }
    /* spot checks by hand: element 0 = 2 + 10 - 0 + 50 + 1 = 63;
     * element 7 (n0 w1 g1 k1) = 1 + 40 - 21 + 50 + 2 = 72 */
    cr_assert_eq(out[0], 63.0f);
    cr_assert_eq(out[7], 72.0f);
}

/* ---- fused grouped conv -> 1x1 conv ----------------------------------------------------- */

Test(ref_fwd_fwd, depthwise_relu_then_pointwise_1d)
{
    /* G 2, C 1, K 1, W 3, X 2: group 0 in 1 2 3, taps (1, 1) -> 3 5; group 1 in -1 0 4,
     * taps (1, -1) -> -1 -4. b0 = (0.5, 2), relu: mid = (3.5, 1) at ow0, (5.5, 0) at ow1.
     * w1 = (1 2 / -1 0.5), b1 = (0, 10):
     *   k1 0: 3.5 + 2 = 5.5, 5.5 + 0 = 5.5; k1 1: -3.5 + 0.5 + 10 = 7, -5.5 + 10 = 4.5
     * Output NWGK with G 1, K1 2: (ow, k1) = 5.5 7 5.5 4.5; with clamp(0, 6): 5.5 6 5.5 4.5 */
    gconv_problem p;
    const float in[6] = {1, -1, 2, 0, 3, 4}; /* NWGC */
    const float w0[4] = {1, 1, 1, -1};
    const float b0[2] = {0.5f, 2}, w1[4] = {1, 2, -1, 0.5f}, b1[2] = {0, 10};
    const float want[4] = {5.5f, 7, 5.5f, 4.5f}, want_clamped[4] = {5.5f, 6, 5.5f, 4.5f};
    /* without biases: mid = relu(3, -1) = (3, 0), relu(5, -4) = (5, 0) -> 3 -3 5 -5 */
    const float want_nobias[4] = {3, -3, 5, -5};
    float out[4];
    gconv_epilogue e = gconv_epi_scale(1.0f);
    gconv_problem_1d(&p, 2, 1, 1, 1, 3, 2, 1, 0, 1);
    cr_assert_eq(gconv_ref_fwd_fwd(&p, 2, GCONV_F32, in, w0, b0, gconv_relu(), w1, b1, out,
                                   GCONV_F32, NULL),
                 GCONV_OK);
    expect_f32(out, want, 4);
    e.act = gconv_clamp(0.0f, 6.0f);
    cr_assert_eq(gconv_ref_fwd_fwd(&p, 2, GCONV_F32, in, w0, b0, gconv_relu(), w1, b1, out,
                                   GCONV_F32, &e),
                 GCONV_OK);
    expect_f32(out, want_clamped, 4);
    cr_assert_eq(gconv_ref_fwd_fwd(&p, 2, GCONV_F32, in, w0, NULL, gconv_relu(), w1, NULL, out,
                                   GCONV_F32, NULL),
                 GCONV_OK);
    expect_f32(out, want_nobias, 4);
}

/* ---- 16-bit types ----------------------------------------------------------------------- */

Test(ref_types, fp16_and_bf16_outputs_round_to_nearest_even)
{
    gconv_problem p;
    const float in[2] = {1, 1};
    float w[2];
    gconv_f16 h;
    gconv_bf16 b;
    gconv_problem_1d(&p, 1, 1, 2, 1, 1, 1, 1, 0, 1); /* out = in0*w0 + in1*w1 */
    w[0] = 1, w[1] = 0x1p-11f;                       /* fp16 tie between 1 and 1 + 2^-10 */
    cr_assert_eq(gconv_ref_fwd(&p, GCONV_F32, in, w, &h, GCONV_F16, NULL), GCONV_OK);
    cr_assert_eq(h.bits, 0x3c00u);
    w[1] = 0x1p-11f + 0x1p-20f; /* just above: up */
    cr_assert_eq(gconv_ref_fwd(&p, GCONV_F32, in, w, &h, GCONV_F16, NULL), GCONV_OK);
    cr_assert_eq(h.bits, 0x3c01u);
    w[0] = 1 + 0x1p-10f, w[1] = 0x1p-11f; /* tie between 0x3c01 and 0x3c02: even, up */
    cr_assert_eq(gconv_ref_fwd(&p, GCONV_F32, in, w, &h, GCONV_F16, NULL), GCONV_OK);
    cr_assert_eq(h.bits, 0x3c02u);
    w[0] = 60000, w[1] = 6000; /* overflow to Inf */
    cr_assert_eq(gconv_ref_fwd(&p, GCONV_F32, in, w, &h, GCONV_F16, NULL), GCONV_OK);
    cr_assert_eq(h.bits, 0x7c00u);
    w[0] = 1, w[1] = 0x1p-8f; /* bf16 tie between 1 and 1 + 2^-7: even, down */
    cr_assert_eq(gconv_ref_fwd(&p, GCONV_F32, in, w, &b, GCONV_BF16, NULL), GCONV_OK);
    cr_assert_eq(b.bits, 0x3f80u);
    w[1] = 3 * 0x1p-8f; /* tie between 0x3f81 and 0x3f82: up */
    cr_assert_eq(gconv_ref_fwd(&p, GCONV_F32, in, w, &b, GCONV_BF16, NULL), GCONV_OK);
    cr_assert_eq(b.bits, 0x3f82u);
}

Test(ref_types, fp16_and_bf16_inputs_and_typed_d_tensors)
{
    /* out = 1*0.5 + 2*(-1) = -1.5 (0xbe00); with an fp16 bias D of 0.25: -1.25 (0xbd00) */
    gconv_problem p;
    const gconv_f16 xh[2] = {{0x3c00u}, {0x4000u}}, wh[2] = {{0x3800u}, {0xbc00u}};
    const gconv_bf16 xb[2] = {{0x3f80u}, {0x4000u}}, wb[2] = {{0x3f00u}, {0xbf80u}};
    const gconv_f16 bias_h[1] = {{0x3400u}};
    const gconv_bf16 bias_b[1] = {{0x3e80u}};
    gconv_f16 oh;
    gconv_bf16 ob;
    float of;
    gconv_epilogue e = gconv_epi_scale(1.0f);
    gconv_problem_1d(&p, 1, 1, 2, 1, 1, 1, 1, 0, 1);
    cr_assert_eq(gconv_ref_fwd(&p, GCONV_F16, xh, wh, &oh, GCONV_F16, NULL), GCONV_OK);
    cr_assert_eq(oh.bits, 0xbe00u);
    cr_assert_eq(gconv_ref_fwd(&p, GCONV_BF16, xb, wb, &of, GCONV_F32, NULL), GCONV_OK);
    cr_assert_eq(of, -1.5f);
    gconv_epi_add_d(&e, bias_h, gconv_bias_strides(&p), 1.0f);
    cr_assert_eq(gconv_ref_fwd(&p, GCONV_F16, xh, wh, &oh, GCONV_F16, &e), GCONV_OK);
    cr_assert_eq(oh.bits, 0xbd00u);
    e.d[0].data = bias_b; /* the D tensor has the output type: bf16 here */
    cr_assert_eq(gconv_ref_fwd(&p, GCONV_F16, xh, wh, &ob, GCONV_BF16, &e), GCONV_OK);
    cr_assert_eq(ob.bits, 0xbfa0u);
}

/* ---- refusals --------------------------------------------------------------------------- */

/* Operation op (0 fwd, 1 bwd_data, 2 bwd_weight, 3 fwd_fwd with K1 1) on problem p with its
 * required pointers v[0..]: 3 of them, 4 for fwd_fwd (in, w0, w1, out; biases NULL). */
static gconv_status call_with(int op, const gconv_problem *p, void *const v[4])
{
    if (op == 0)
        return gconv_ref_fwd(p, GCONV_F32, v[0], v[1], v[2], GCONV_F32, NULL);
    if (op == 1)
        return gconv_ref_bwd_data(p, GCONV_F32, v[0], v[1], v[2], GCONV_F32, NULL);
    if (op == 2)
        return gconv_ref_bwd_weight(p, GCONV_F32, v[0], v[1], v[2], GCONV_F32, 1.0f, 0.0f);
    return gconv_ref_fwd_fwd(p, 1, GCONV_F32, v[0], v[1], NULL, gconv_relu(), v[2], NULL, v[3],
                             GCONV_F32, NULL);
}

Test(ref_refuse, null_pointers)
{
    gconv_problem p = p1d_stride_asym();
    float a[8] = {0}, b[8] = {0}, c[8] = {0}, d[8] = {0};
    int op, j;
    for (op = 0; op < 4; op++) {
        void *v[4];
        v[0] = a, v[1] = b, v[2] = c, v[3] = d;
        cr_assert_eq(call_with(op, &p, v), GCONV_OK, "operation %d", op);
        cr_assert_eq(call_with(op, NULL, v), GCONV_ERR_NULL, "operation %d, no problem", op);
        for (j = 0; j < (op == 3 ? 4 : 3); j++) {
            void *keep = v[j];
            v[j] = NULL;
            cr_assert_eq(call_with(op, &p, v), GCONV_ERR_NULL, "operation %d, pointer %d", op,
                         j);
            v[j] = keep;
        }
    }
}

Test(ref_refuse, bad_problem_type_epilogue_and_nothing_written)
{
    gconv_problem p = p1d_stride_asym();
    float y[3] = {7, 7, 7}, w1[1] = {1};
    const float seven[3] = {7, 7, 7};
    gconv_epilogue e = gconv_epi_scale(1.0f);
    p.stride[2] = 0;
    cr_assert_eq(gconv_ref_fwd(&p, GCONV_F32, in1d, w1d, y, GCONV_F32, NULL), GCONV_ERR_STRIDE);
    cr_assert_eq(gconv_ref_bwd_data(&p, GCONV_F32, in1d, w1d, y, GCONV_F32, NULL),
                 GCONV_ERR_STRIDE);
    cr_assert_eq(gconv_ref_bwd_weight(&p, GCONV_F32, in1d, in1d, y, GCONV_F32, 1, 0),
                 GCONV_ERR_STRIDE);
    cr_assert_eq(gconv_ref_fwd_fwd(&p, 1, GCONV_F32, in1d, w1d, NULL, gconv_relu(), w1, NULL, y,
                                   GCONV_F32, NULL),
                 GCONV_ERR_STRIDE);
    p = p1d_stride_asym();
    p.filter[2] = 9; /* longer than the padded input (8) */
    cr_assert_eq(gconv_ref_fwd(&p, GCONV_F32, in1d, w1d, y, GCONV_F32, NULL),
                 GCONV_ERR_EMPTY_OUTPUT);
    p = p1d_stride_asym();
    p.in_layout = GCONV_NHWGC; /* 2D layout on a 1D problem */
    cr_assert_eq(gconv_ref_bwd_data(&p, GCONV_F32, in1d, w1d, y, GCONV_F32, NULL),
                 GCONV_ERR_LAYOUT);
    p = p1d_stride_asym();
    cr_assert_eq(gconv_ref_fwd(&p, (gconv_dtype)3, in1d, w1d, y, GCONV_F32, NULL),
                 GCONV_ERR_DTYPE);
    cr_assert_eq(gconv_ref_bwd_weight(&p, GCONV_F32, in1d, in1d, y, (gconv_dtype)-1, 1, 0),
                 GCONV_ERR_DTYPE);
    e.num_d = 5;
    cr_assert_eq(gconv_ref_fwd(&p, GCONV_F32, in1d, w1d, y, GCONV_F32, &e), GCONV_ERR_ARGUMENT);
    e.num_d = 1; /* with a null D pointer */
    cr_assert_eq(gconv_ref_bwd_data(&p, GCONV_F32, in1d, w1d, y, GCONV_F32, &e), GCONV_ERR_NULL);
    e.num_d = 0;
    e.act = gconv_clamp(2.0f, 1.0f);
    cr_assert_eq(gconv_ref_fwd(&p, GCONV_F32, in1d, w1d, y, GCONV_F32, &e), GCONV_ERR_ARGUMENT);
    e.act.kind = (gconv_act_kind)9;
    cr_assert_eq(gconv_ref_fwd_fwd(&p, 1, GCONV_F32, in1d, w1d, NULL, gconv_relu(), w1, NULL, y,
                                   GCONV_F32, &e),
                 GCONV_ERR_ARGUMENT);
    /* fwd_fwd's own arguments */
    cr_assert_eq(gconv_ref_fwd_fwd(&p, 1, GCONV_F32, in1d, w1d, NULL, gconv_clamp(1.0f, NAN), w1,
                                   NULL, y, GCONV_F32, NULL),
                 GCONV_ERR_ARGUMENT);
    cr_assert_eq(gconv_ref_fwd_fwd(&p, 0, GCONV_F32, in1d, w1d, NULL, gconv_relu(), w1, NULL, y,
                                   GCONV_F32, NULL),
                 GCONV_ERR_SIZE);
    cr_assert_eq(gconv_ref_fwd_fwd(&p, -3, GCONV_F32, in1d, w1d, NULL, gconv_relu(), w1, NULL, y,
                                   GCONV_F32, NULL),
                 GCONV_ERR_SIZE);
    expect_f32(y, seven, 3);
}
