/* gconv/problem.h: the problem description, its validation, and the status codes.
 *
 * What is here:
 *   gconv_status    every result code, with a message string for each (one X-macro list);
 *   gconv_layout    the tensor layouts, one enum value per layout and dimension;
 *   gconv_problem   one flat description of a grouped convolution in 1D, 2D or 3D;
 *   gconv_problem_1d/2d/3d   fill a problem (symmetric pads, NHWGC/GKYXC/NHWGK family);
 *   gconv_problem_check      validate, with the reason in words;
 *   gconv_out_len, gconv_*_elems, gconv_*_bytes   sizes in 64-bit.
 *
 * Conventions. C and K are channels per group: the input holds G*C channels, the output G*K,
 * the weights G*K*C*Z*Y*X elements. Spatial arrays are indexed [0] = D (depth), [1] = H,
 * [2] = W, with the filter sizes Z, Y, X in the same slots. A 2D problem keeps slot 0 neutral
 * (size 1, filter 1, stride 1, dilation 1, no pad); a 1D problem slots 0 and 1. Every
 * operation can therefore treat every problem as 3D.
 *
 * Output length per axis: out = (in + pad_lo + pad_hi - dilation * (filter - 1) - 1) / stride + 1.
 *
 * Usage:
 *     gconv_problem p;
 *     char why[256];
 *     gconv_problem_2d(&p, 32, 64, 4, 4, 56, 56, 3, 3, 1, 1, 1, 1, 1, 1);
 *     p.pad_hi[2] = 0;                                  asymmetric pad on W
 *     if (gconv_problem_check(&p, why, sizeof why) != GCONV_OK) ... why says what is wrong
 *
 * Compiles as C11 (gcc -std=c11 -Wall -Wextra -pedantic) and as HIP/CUDA.
 */
#ifndef GCONV_PROBLEM_H
#define GCONV_PROBLEM_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "types.h"

/* ---- status codes ------------------------------------------------------------------------ */

#define GCONV_STATUS_LIST(X)                                                                     \
    X(GCONV_OK, "success")                                                                       \
    X(GCONV_ERR_NULL, "a required pointer is null")                                              \
    X(GCONV_ERR_NDIM, "the number of spatial dimensions is not 1, 2 or 3")                       \
    X(GCONV_ERR_SIZE, "a size is not positive")                                                  \
    X(GCONV_ERR_STRIDE, "a stride is not positive")                                              \
    X(GCONV_ERR_DILATION, "a dilation is not positive")                                          \
    X(GCONV_ERR_PAD, "a pad is negative")                                                        \
    X(GCONV_ERR_UNUSED_DIM, "an unused spatial dimension is not neutral")                        \
    X(GCONV_ERR_EMPTY_OUTPUT, "the dilated filter is larger than the padded input")              \
    X(GCONV_ERR_OVERFLOW, "an element count is too large")                                       \
    X(GCONV_ERR_LAYOUT, "a layout is not valid for its tensor or dimension")                     \
    X(GCONV_ERR_DTYPE, "the data type is not supported")                                         \
    X(GCONV_ERR_ARGUMENT, "an argument is out of range")                                         \
    X(GCONV_ERR_ALIGNMENT, "a pointer or stride is not aligned as the kernel requires")          \
    X(GCONV_ERR_WORKSPACE, "the workspace is missing or too small")                              \
    X(GCONV_ERR_UNSUPPORTED, "this instantiation does not support the problem")                  \
    X(GCONV_ERR_NO_DEVICE, "no GPU device is available")                                         \
    X(GCONV_ERR_RUNTIME, "the GPU runtime reported an error")

#define GCONV_IMPL_ENUM(name, msg) name,
typedef enum gconv_status { GCONV_STATUS_LIST(GCONV_IMPL_ENUM) GCONV_STATUS_COUNT } gconv_status;
#undef GCONV_IMPL_ENUM

/* The message of a status: a static string, never NULL. */
static inline const char *gconv_status_string(gconv_status s)
{
#define GCONV_IMPL_MSG(name, msg) msg,
    static const char *const msgs[] = {GCONV_STATUS_LIST(GCONV_IMPL_MSG)};
#undef GCONV_IMPL_MSG
    return (unsigned)s < (unsigned)GCONV_STATUS_COUNT ? msgs[s] : "unknown status";
}

/* The enum name of a status ("GCONV_ERR_PAD"), for logs and tests. */
static inline const char *gconv_status_name(gconv_status s)
{
#define GCONV_IMPL_NAME(name, msg) #name,
    static const char *const names[] = {GCONV_STATUS_LIST(GCONV_IMPL_NAME)};
#undef GCONV_IMPL_NAME
    return (unsigned)s < (unsigned)GCONV_STATUS_COUNT ? names[s] : "GCONV_?";
}

/* Write "message: detail" into why (if why is not NULL and len > 0) and return s. The detail
 * is a printf format with its arguments; every refusal in the library goes through here so
 * that callers always get words. */
static inline gconv_status gconv_impl_fail(gconv_status s, char *why, size_t len, const char *fmt,
                                           ...)
{
    if (why && len) {
        char detail[224];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(detail, sizeof detail, fmt, ap);
        va_end(ap);
        snprintf(why, len, "%s: %s", gconv_status_string(s), detail);
    }
    return s;
}

/* ---- layouts ----------------------------------------------------------------------------- */

/* Activation layouts (input and output; the output's channel letter is K where these say C)
 * and weight layouts, one value per dimension. The letters list dimensions from outermost to
 * innermost: NHWGC stores, for each image and pixel, all groups' channels together.
 * GCONV_LAYOUT_DEFAULT (0) in a problem means the NHWGC / GKYXC family of its dimension. */
typedef enum gconv_layout {
    GCONV_LAYOUT_DEFAULT = 0,
    GCONV_NWGC, GCONV_NHWGC, GCONV_NDHWGC,      /* channels innermost, groups next */
    GCONV_GNWC, GCONV_GNHWC, GCONV_GNDHWC,      /* group outermost, channels innermost */
    GCONV_NGCW, GCONV_NGCHW, GCONV_NGCDHW,      /* channel planes: spatial innermost */
    GCONV_GKXC, GCONV_GKYXC, GCONV_GKZYXC,      /* weights, input channel innermost */
    GCONV_GKCX, GCONV_GKCYX, GCONV_GKCZYX,      /* weights, filter taps innermost */
    GCONV_LAYOUT_COUNT
} gconv_layout;

/* Families: the 2D name stands for the family (GCONV_NHWGC for NWGC, NHWGC and NDHWGC). */
static inline gconv_layout gconv_layout_family(gconv_layout l)
{
    if (l <= GCONV_LAYOUT_DEFAULT || l >= GCONV_LAYOUT_COUNT)
        return GCONV_LAYOUT_DEFAULT;
    return (gconv_layout)(GCONV_NWGC + ((l - GCONV_NWGC) / 3) * 3 + 1);
}

/* Number of spatial dimensions a layout is for (1..3), 0 for DEFAULT. */
static inline int gconv_layout_ndim(gconv_layout l)
{
    if (l <= GCONV_LAYOUT_DEFAULT || l >= GCONV_LAYOUT_COUNT)
        return 0;
    return (int)((l - GCONV_NWGC) % 3) + 1;
}

static inline int gconv_layout_is_weight(gconv_layout l)
{
    return l >= GCONV_GKXC && l < GCONV_LAYOUT_COUNT;
}

/* The member of a family (given by any of its members) for ndim dimensions. */
static inline gconv_layout gconv_layout_for(gconv_layout family, int ndim)
{
    gconv_layout f = gconv_layout_family(family);
    if (f == GCONV_LAYOUT_DEFAULT || ndim < 1 || ndim > 3)
        return GCONV_LAYOUT_DEFAULT;
    return (gconv_layout)(f - 2 + ndim);
}

static inline const char *gconv_layout_name(gconv_layout l)
{
    static const char *const names[] = {
        "default", "NWGC", "NHWGC", "NDHWGC", "GNWC", "GNHWC", "GNDHWC", "NGCW", "NGCHW",
        "NGCDHW", "GKXC", "GKYXC", "GKZYXC", "GKCX", "GKCYX", "GKCZYX"};
    return (unsigned)l < (unsigned)GCONV_LAYOUT_COUNT ? names[l] : "?";
}

/* ---- the problem ------------------------------------------------------------------------- */

/* Slots of the spatial arrays: p->in[GCONV_AXIS_H] is the input height. */
enum { GCONV_AXIS_D = 0, GCONV_AXIS_H = 1, GCONV_AXIS_W = 2 };

typedef struct gconv_problem {
    int ndim;          /* 1, 2 or 3 */
    int G;             /* groups */
    int N;             /* batch */
    int C;             /* input channels per group */
    int K;             /* output channels per group */
    int in[3];         /* input D, H, W (1 where unused) */
    int filter[3];     /* filter Z, Y, X (1 where unused) */
    int stride[3];
    int dilation[3];
    int pad_lo[3];     /* padding before the first element (left/top/front) */
    int pad_hi[3];     /* padding after the last element (right/bottom/back) */
    gconv_layout in_layout;  /* NHWGC / GNHWC / NGCHW families; DEFAULT means NHWGC */
    gconv_layout wei_layout; /* GKYXC / GKCYX families; DEFAULT means GKYXC */
    gconv_layout out_layout; /* as in_layout, with K channels */
} gconv_problem;

/* Fill p for an ndim-dimensional problem. Sizes come in the order D, H, W (only the used ones);
 * pads are symmetric (set pad_hi afterwards for asymmetric ones); layouts are left DEFAULT. */
static inline void gconv_problem_nd(gconv_problem *p, int ndim, int G, int N, int C, int K,
                                    const int *in, const int *filter, const int *stride,
                                    const int *pad, const int *dilation)
{
    int i;
    memset(p, 0, sizeof *p);
    p->ndim = ndim;
    p->G = G;
    p->N = N;
    p->C = C;
    p->K = K;
    for (i = 0; i < 3; i++) {
        int j = i - (3 - ndim); /* index into the caller's arrays, negative for unused slots */
        int used = j >= 0;
        p->in[i] = used ? in[j] : 1;
        p->filter[i] = used ? filter[j] : 1;
        p->stride[i] = used ? stride[j] : 1;
        p->dilation[i] = used ? dilation[j] : 1;
        p->pad_lo[i] = used ? pad[j] : 0;
        p->pad_hi[i] = used ? pad[j] : 0;
    }
}

static inline void gconv_problem_1d(gconv_problem *p, int G, int N, int C, int K, int W, int X,
                                    int stride_w, int pad_w, int dil_w)
{
    gconv_problem_nd(p, 1, G, N, C, K, &W, &X, &stride_w, &pad_w, &dil_w);
}

static inline void gconv_problem_2d(gconv_problem *p, int G, int N, int C, int K, int H, int W,
                                    int Y, int X, int stride_h, int stride_w, int pad_h,
                                    int pad_w, int dil_h, int dil_w)
{
    int in[2], f[2], s[2], pd[2], d[2];
    in[0] = H, in[1] = W, f[0] = Y, f[1] = X, s[0] = stride_h, s[1] = stride_w;
    pd[0] = pad_h, pd[1] = pad_w, d[0] = dil_h, d[1] = dil_w;
    gconv_problem_nd(p, 2, G, N, C, K, in, f, s, pd, d);
}

static inline void gconv_problem_3d(gconv_problem *p, int G, int N, int C, int K, int D, int H,
                                    int W, int Z, int Y, int X, int stride_d, int stride_h,
                                    int stride_w, int pad_d, int pad_h, int pad_w, int dil_d,
                                    int dil_h, int dil_w)
{
    int in[3], f[3], s[3], pd[3], d[3];
    in[0] = D, in[1] = H, in[2] = W, f[0] = Z, f[1] = Y, f[2] = X;
    s[0] = stride_d, s[1] = stride_h, s[2] = stride_w;
    pd[0] = pad_d, pd[1] = pad_h, pd[2] = pad_w, d[0] = dil_d, d[1] = dil_h, d[2] = dil_w;
    gconv_problem_nd(p, 3, G, N, C, K, in, f, s, pd, d);
}

/* Set all three layouts from families (any member names its family, DEFAULT keeps default). */
static inline void gconv_problem_set_layouts(gconv_problem *p, gconv_layout act_family,
                                             gconv_layout wei_family)
{
    p->in_layout = gconv_layout_for(act_family, p->ndim);
    p->out_layout = p->in_layout;
    p->wei_layout = gconv_layout_for(wei_family, p->ndim);
}

/* Effective layouts (DEFAULT resolved to the NHWGC / GKYXC member of the right dimension). */
static inline gconv_layout gconv_in_layout(const gconv_problem *p)
{
    return p->in_layout ? p->in_layout : gconv_layout_for(GCONV_NHWGC, p->ndim);
}
static inline gconv_layout gconv_out_layout(const gconv_problem *p)
{
    return p->out_layout ? p->out_layout : gconv_layout_for(GCONV_NHWGC, p->ndim);
}
static inline gconv_layout gconv_wei_layout(const gconv_problem *p)
{
    return p->wei_layout ? p->wei_layout : gconv_layout_for(GCONV_GKYXC, p->ndim);
}

/* Output length along axis i (0 = D, 1 = H, 2 = W); may be <= 0 for an invalid problem. */
static inline int gconv_out_len(const gconv_problem *p, int i)
{
    long long span = (long long)p->in[i] + p->pad_lo[i] + p->pad_hi[i] -
                     (long long)p->dilation[i] * (p->filter[i] - 1) - 1;
    if (span < 0 || p->stride[i] <= 0)
        return 0;
    return (int)(span / p->stride[i] + 1);
}

/* Element counts (products of validated sizes fit in int64; see gconv_problem_check). */
static inline int64_t gconv_in_spatial(const gconv_problem *p)
{
    return (int64_t)p->in[0] * p->in[1] * p->in[2];
}
static inline int64_t gconv_out_spatial(const gconv_problem *p)
{
    return (int64_t)gconv_out_len(p, 0) * gconv_out_len(p, 1) * gconv_out_len(p, 2);
}
static inline int64_t gconv_filter_taps(const gconv_problem *p)
{
    return (int64_t)p->filter[0] * p->filter[1] * p->filter[2];
}
static inline int64_t gconv_in_elems(const gconv_problem *p)
{
    return (int64_t)p->G * p->N * p->C * gconv_in_spatial(p);
}
static inline int64_t gconv_out_elems(const gconv_problem *p)
{
    return (int64_t)p->G * p->N * p->K * gconv_out_spatial(p);
}
static inline int64_t gconv_wei_elems(const gconv_problem *p)
{
    return (int64_t)p->G * p->K * p->C * gconv_filter_taps(p);
}
static inline int64_t gconv_in_bytes(const gconv_problem *p, gconv_dtype t)
{
    return gconv_in_elems(p) * (int64_t)gconv_dtype_size(t);
}
static inline int64_t gconv_out_bytes(const gconv_problem *p, gconv_dtype t)
{
    return gconv_out_elems(p) * (int64_t)gconv_dtype_size(t);
}
static inline int64_t gconv_wei_bytes(const gconv_problem *p, gconv_dtype t)
{
    return gconv_wei_elems(p) * (int64_t)gconv_dtype_size(t);
}

/* Multiply-accumulates of the forward pass (the same count for every direction); 2x flops. */
static inline double gconv_flops(const gconv_problem *p)
{
    return 2.0 * (double)p->G * p->N * p->K * p->C * (double)gconv_out_spatial(p) *
           (double)gconv_filter_taps(p);
}

/* a*b*... products checked against this bound: every tensor's element count must stay under
 * 2^62 so that byte sizes (up to 4x) and index arithmetic in int64 cannot overflow. */
#define GCONV_MAX_ELEMS ((int64_t)1 << 62)

static inline int gconv_impl_mul_ok(int64_t *acc, int64_t v)
{
    if (v <= 0 || *acc > GCONV_MAX_ELEMS / v)
        return 0;
    *acc *= v;
    return 1;
}

static inline int gconv_impl_count_ok(int64_t a, int64_t b, int64_t c, int64_t d, int64_t e,
                                      int64_t f)
{
    int64_t acc = 1;
    return gconv_impl_mul_ok(&acc, a) && gconv_impl_mul_ok(&acc, b) &&
           gconv_impl_mul_ok(&acc, c) && gconv_impl_mul_ok(&acc, d) &&
           gconv_impl_mul_ok(&acc, e) && gconv_impl_mul_ok(&acc, f);
}

/* Validate a problem. Returns GCONV_OK, or the first problem found with the reason written into
 * why (a buffer of len bytes; why may be NULL). */
static inline gconv_status gconv_problem_check(const gconv_problem *p, char *why, size_t len)
{
    static const char *const axis[3] = {"D", "H", "W"};
    int i;
    gconv_layout l;
    if (!p)
        return gconv_impl_fail(GCONV_ERR_NULL, why, len, "the problem pointer is null");
    if (p->ndim < 1 || p->ndim > 3)
        return gconv_impl_fail(GCONV_ERR_NDIM, why, len, "ndim is %d", p->ndim);
    if (p->G <= 0 || p->N <= 0 || p->C <= 0 || p->K <= 0)
        return gconv_impl_fail(GCONV_ERR_SIZE, why, len,
                               "G, N, C and K must be positive; they are %d, %d, %d, %d", p->G,
                               p->N, p->C, p->K);
    for (i = 0; i < 3; i++) {
        long long span, padded;
        if (i < 3 - p->ndim) {
            if (p->in[i] != 1 || p->filter[i] != 1 || p->stride[i] != 1 || p->dilation[i] != 1 ||
                p->pad_lo[i] != 0 || p->pad_hi[i] != 0)
                return gconv_impl_fail(GCONV_ERR_UNUSED_DIM, why, len,
                                       "axis %s is unused in a %dD problem: it needs size 1, "
                                       "filter 1, stride 1, dilation 1 and no padding",
                                       axis[i], p->ndim);
            continue;
        }
        if (p->in[i] <= 0 || p->filter[i] <= 0)
            return gconv_impl_fail(GCONV_ERR_SIZE, why, len,
                                   "axis %s: input size %d and filter size %d must be positive",
                                   axis[i], p->in[i], p->filter[i]);
        if (p->stride[i] <= 0)
            return gconv_impl_fail(GCONV_ERR_STRIDE, why, len, "axis %s: stride %d", axis[i],
                                   p->stride[i]);
        if (p->dilation[i] <= 0)
            return gconv_impl_fail(GCONV_ERR_DILATION, why, len, "axis %s: dilation %d", axis[i],
                                   p->dilation[i]);
        if (p->pad_lo[i] < 0 || p->pad_hi[i] < 0)
            return gconv_impl_fail(GCONV_ERR_PAD, why, len, "axis %s: pads %d and %d", axis[i],
                                   p->pad_lo[i], p->pad_hi[i]);
        span = (long long)p->dilation[i] * (p->filter[i] - 1) + 1;
        padded = (long long)p->in[i] + p->pad_lo[i] + p->pad_hi[i];
        if (span > padded)
            return gconv_impl_fail(GCONV_ERR_EMPTY_OUTPUT, why, len,
                                   "axis %s: the dilated filter spans %lld but the padded input "
                                   "is %lld, so the output would be empty",
                                   axis[i], span, padded);
        /* coordinates (padded positions, dilated filter offsets) are int in the kernels */
        if (padded > 0x7fffffffLL || span > 0x7fffffffLL)
            return gconv_impl_fail(GCONV_ERR_OVERFLOW, why, len,
                                   "axis %s: the padded extent %lld does not fit in int", axis[i],
                                   padded > span ? padded : span);
    }
    l = gconv_in_layout(p);
    if (gconv_layout_is_weight(l) || gconv_layout_ndim(l) != p->ndim)
        return gconv_impl_fail(GCONV_ERR_LAYOUT, why, len,
                               "the input layout %s is not an activation layout for %dD",
                               gconv_layout_name(l), p->ndim);
    l = gconv_out_layout(p);
    if (gconv_layout_is_weight(l) || gconv_layout_ndim(l) != p->ndim)
        return gconv_impl_fail(GCONV_ERR_LAYOUT, why, len,
                               "the output layout %s is not an activation layout for %dD",
                               gconv_layout_name(l), p->ndim);
    l = gconv_wei_layout(p);
    if (!gconv_layout_is_weight(l) || gconv_layout_ndim(l) != p->ndim)
        return gconv_impl_fail(GCONV_ERR_LAYOUT, why, len,
                               "the weight layout %s is not a weight layout for %dD",
                               gconv_layout_name(l), p->ndim);
    if (!gconv_impl_count_ok(p->G, p->N, p->C, p->in[0], p->in[1], p->in[2]))
        return gconv_impl_fail(GCONV_ERR_OVERFLOW, why, len,
                               "the input has 2^62 elements or more");
    if (!gconv_impl_count_ok(p->G, p->N, p->K, gconv_out_len(p, 0), gconv_out_len(p, 1),
                             gconv_out_len(p, 2)))
        return gconv_impl_fail(GCONV_ERR_OVERFLOW, why, len,
                               "the output has 2^62 elements or more");
    if (!gconv_impl_count_ok(p->G, p->K, p->C, p->filter[0], p->filter[1], p->filter[2]))
        return gconv_impl_fail(GCONV_ERR_OVERFLOW, why, len,
                               "the weights have 2^62 elements or more");
    if (why && len)
        why[0] = '\0';
    return GCONV_OK;
}

#endif /* GCONV_PROBLEM_H */
