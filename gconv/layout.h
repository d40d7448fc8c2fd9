/* gconv/layout.h: layouts as strides, and element offsets.
 *
 * What is here: every tensor of a problem described as six element strides over its logical
 * dimensions, whatever its layout:
 *   activations (input, output, D tensors): gconv_act_strides  {g, n, c, s[3]}
 *       logical element (g, n, c, d, h, w), c < C for the input, c < K for the output;
 *   weights: gconv_wei_strides {g, k, c, s[3]}
 *       logical element (g, k, c, z, y, x).
 * s[] follows the problem's spatial slots ([0] = D/Z, [1] = H/Y, [2] = W/X); an unused slot
 * has extent 1, so its stride never matters. Strides of 0 broadcast: a per-channel bias over
 * the output is {g = K, n = 0, c = 1, s = {0, 0, 0}} (gconv_bias_strides).
 *
 * Usage:
 *     gconv_act_strides si = gconv_in_strides(&p);
 *     int64_t off = gconv_act_offset(&si, g, n, c, d, h, w);   element index into the input
 *
 * Compiles as C11 and as HIP/CUDA (offsets are GCONV_HD so kernels can use them too).
 */
#ifndef GCONV_LAYOUT_H
#define GCONV_LAYOUT_H

#include <stdint.h>

#include "problem.h"
#include "types.h"

typedef struct gconv_act_strides {
    int64_t g, n, c;
    int64_t s[3];
} gconv_act_strides;

typedef struct gconv_wei_strides {
    int64_t g, k, c;
    int64_t s[3];
} gconv_wei_strides;

/* Strides of an activation tensor with G groups of `ch` channels, N images, spatial sizes
 * sp[3], stored in layout l (any dimension's member of a family). DEFAULT means NHWGC. */
static inline gconv_act_strides gconv_act_strides_make(gconv_layout l, int G, int N, int ch,
                                                     const int sp[3])
{
    gconv_act_strides st;
    int64_t plane = (int64_t)sp[0] * sp[1] * sp[2]; /* elements of one spatial volume */
    gconv_layout f = gconv_layout_family(l);
    (void)N;
    st.s[2] = 0, st.s[1] = 0, st.s[0] = 0;
    if (f == GCONV_GNHWC) {
        /* [G][N][D][H][W][C] */
        st.c = 1;
        st.s[2] = ch;
        st.s[1] = (int64_t)sp[2] * ch;
        st.s[0] = (int64_t)sp[1] * sp[2] * ch;
        st.n = plane * ch;
        st.g = (int64_t)N * plane * ch;
    } else if (f == GCONV_NGCHW) {
        /* [N][G][C][D][H][W] */
        st.s[2] = 1;
        st.s[1] = sp[2];
        st.s[0] = (int64_t)sp[1] * sp[2];
        st.c = plane;
        st.g = (int64_t)ch * plane;
        st.n = (int64_t)G * ch * plane;
    } else {
        /* NHWGC (and DEFAULT): [N][D][H][W][G][C] */
        st.c = 1;
        st.g = ch;
        st.s[2] = (int64_t)G * ch;
        st.s[1] = (int64_t)sp[2] * G * ch;
        st.s[0] = (int64_t)sp[1] * sp[2] * G * ch;
        st.n = plane * G * ch;
    }
    return st;
}

/* Strides of a weight tensor (G, K, C, taps f[3]) in layout l. DEFAULT means GKYXC. */
static inline gconv_wei_strides gconv_wei_strides_make(gconv_layout l, int G, int K, int C,
                                                     const int f[3])
{
    gconv_wei_strides st;
    int64_t taps = (int64_t)f[0] * f[1] * f[2];
    (void)G;
    if (gconv_layout_family(l) == GCONV_GKCYX) {
        /* [G][K][C][Z][Y][X] */
        st.s[2] = 1;
        st.s[1] = f[2];
        st.s[0] = (int64_t)f[1] * f[2];
        st.c = taps;
    } else {
        /* GKYXC: [G][K][Z][Y][X][C] */
        st.c = 1;
        st.s[2] = C;
        st.s[1] = (int64_t)f[2] * C;
        st.s[0] = (int64_t)f[1] * f[2] * C;
    }
    st.k = taps * C;
    st.g = (int64_t)K * taps * C;
    return st;
}

/* Output spatial sizes of a problem, in the slots of p->in. */
static inline void gconv_out_sizes(const gconv_problem *p, int out[3])
{
    out[0] = gconv_out_len(p, 0);
    out[1] = gconv_out_len(p, 1);
    out[2] = gconv_out_len(p, 2);
}

static inline gconv_act_strides gconv_in_strides(const gconv_problem *p)
{
    return gconv_act_strides_make(gconv_in_layout(p), p->G, p->N, p->C, p->in);
}

static inline gconv_act_strides gconv_out_strides(const gconv_problem *p)
{
    int out[3];
    gconv_out_sizes(p, out);
    return gconv_act_strides_make(gconv_out_layout(p), p->G, p->N, p->K, out);
}

static inline gconv_wei_strides gconv_weight_strides(const gconv_problem *p)
{
    return gconv_wei_strides_make(gconv_wei_layout(p), p->G, p->K, p->C, p->filter);
}

/* A per-output-channel vector of G*K elements (bias), broadcast over N and space. */
static inline gconv_act_strides gconv_bias_strides(const gconv_problem *p)
{
    gconv_act_strides st;
    st.g = p->K;
    st.n = 0;
    st.c = 1;
    st.s[0] = 0, st.s[1] = 0, st.s[2] = 0;
    return st;
}

static inline GCONV_HD int64_t gconv_act_offset(const gconv_act_strides *st, int g, int n, int c,
                                                int d, int h, int w)
{
    return g * st->g + n * st->n + c * st->c + d * st->s[0] + h * st->s[1] + w * st->s[2];
}

static inline GCONV_HD int64_t gconv_wei_offset(const gconv_wei_strides *st, int g, int k, int c,
                                                int z, int y, int x)
{
    return g * st->g + k * st->k + c * st->c + z * st->s[0] + y * st->s[1] + x * st->s[2];
}

#endif /* GCONV_LAYOUT_H */
