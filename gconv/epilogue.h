/* gconv/epilogue.h: the elementwise epilogue applied to a convolution result before the store.
 *
 * What is here: gconv_epilogue, the description every operation takes (NULL means a plain
 * store), built from small constructors; and the activation function, usable on host and
 * device. The description is plain data: a kernel receives it by value.
 *
 * The built-in epilogue computes, for every output element with convolution result acc,
 *
 *     y = act(alpha * acc + beta[0] * D0 + ... + beta[num_d-1] * D(num_d-1))
 *
 * where each D tensor is read at the output element's logical position (g, n, k, d, h, w)
 * through its own strides (zeros broadcast: a bias is a D with gconv_bias_strides) and act is
 * identity, ReLU or clamp(lo, hi) (ReLU6 is clamp(0, 6)). That one form gives pass-through,
 * scale, bias, residual add, bias + ReLU, scale + add, bilinear (alpha * acc + beta * D0) and
 * clamping. D tensors have the operation's output element type; the arithmetic is fp32.
 *
 * Usage:
 *     gconv_epilogue e = gconv_epi_scale(1.0f);
 *     gconv_epi_add_d(&e, d_bias, gconv_bias_strides(&p), 1.0f);
 *     gconv_epi_add_d(&e, d_residual, gconv_out_strides(&p), 1.0f);
 *     e.act = gconv_relu();
 *
 * A user-defined operation replaces this formula at compile time (see the operation headers:
 * the *_USER_OP instantiation variants take a device function name).
 *
 * Compiles as C11 and as HIP/CUDA.
 */
#ifndef GCONV_EPILOGUE_H
#define GCONV_EPILOGUE_H

#include "layout.h"
#include "problem.h"
#include "types.h"

#define GCONV_MAX_D 4

typedef enum gconv_act_kind { GCONV_ACT_NONE = 0, GCONV_ACT_RELU = 1, GCONV_ACT_CLAMP = 2 } gconv_act_kind;

/* An activation: kind, and the bounds of a clamp. Zeroed means none. */
typedef struct gconv_act {
    gconv_act_kind kind;
    float lo, hi;
} gconv_act;

/* An extra input of the epilogue: device pointer and strides over the output's logical
 * dimensions. Its elements have the operation's output type. */
typedef struct gconv_dtensor {
    const void *data;
    gconv_act_strides strides;
} gconv_dtensor;

typedef struct gconv_epilogue {
    float alpha;              /* scale of the convolution result */
    int num_d;                /* 0..GCONV_MAX_D tensors used */
    float beta[GCONV_MAX_D];  /* scale of each D tensor */
    gconv_dtensor d[GCONV_MAX_D];
    gconv_act act;            /* applied last */
} gconv_epilogue;

static inline gconv_act gconv_act_none(void)
{
    gconv_act a = {GCONV_ACT_NONE, 0.0f, 0.0f};
    return a;
}
static inline gconv_act gconv_relu(void)
{
    gconv_act a = {GCONV_ACT_RELU, 0.0f, 0.0f};
    return a;
}
static inline gconv_act gconv_clamp(float lo, float hi)
{
    gconv_act a = {GCONV_ACT_CLAMP, lo, hi};
    return a;
}
static inline gconv_act gconv_relu6(void)
{
    return gconv_clamp(0.0f, 6.0f);
}

/* ReLU and clamp of one value. On NVIDIA devices without conditionals: nvcc 13 made the
 * conditional forms (v > 0 ? v : 0; v < lo ? lo : v > hi ? hi : v) a branch per value inside
 * several kernels (H100, ReLU6 epilogues 35-60 % slower, bench/NOTES.md). The results are the
 * same, NaN included: ReLU sends it to 0, the clamp passes it on (max.NaN / min.NaN); only the
 * sign of a zero result may differ (max(-0, +0) is +0 here, -0 in the conditional form). */
static inline GCONV_HD float gconv_impl_relu(float v)
{
#if defined(__CUDA_ARCH__)
    return fmaxf(v, 0.0f);
#else
    return v > 0.0f ? v : 0.0f;
#endif
}

static inline GCONV_HD float gconv_impl_clamp(float v, float lo, float hi)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    float r;
    __asm__("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(v), "f"(lo));
    __asm__("min.NaN.f32 %0, %0, %1;" : "+f"(r) : "f"(hi));
    return r;
#else
    return v < lo ? lo : v > hi ? hi : v;
#endif
}

/* The activation of kind `kind` with both forms computed and the kind selecting, for store
 * loops where the kind is a run-time value: no branch per value (gconv_act_apply tests the
 * kind first, which inside an unrolled store loop became branches per value). */
static inline GCONV_HD float gconv_impl_act_sel(int kind, float lo, float hi, float v)
{
    const float r = gconv_impl_relu(v), c = gconv_impl_clamp(v, lo, hi);
    return kind == GCONV_ACT_CLAMP ? c : kind == GCONV_ACT_RELU ? r : v;
}

/* Activation a over the n values v (n a constant after inlining): the kind tested once for
 * all of them, the loops branch-free (for the kernels' vector stores and act0 of the fused
 * kernels; a test per value inside an unrolled loop became a branch region per value). */
static inline GCONV_HD void gconv_impl_act_n(gconv_act a, float *v, int n)
{
    int i;
    if (a.kind == GCONV_ACT_RELU) {
        for (i = 0; i < n; i++)
            v[i] = gconv_impl_relu(v[i]);
    } else if (a.kind == GCONV_ACT_CLAMP) {
        const float lo = a.lo, hi = a.hi;
        for (i = 0; i < n; i++)
            v[i] = gconv_impl_clamp(v[i], lo, hi);
    }
}

static inline GCONV_HD float gconv_act_apply(gconv_act a, float v)
{
    if (a.kind == GCONV_ACT_RELU)
        return gconv_impl_relu(v);
    if (a.kind == GCONV_ACT_CLAMP)
        return gconv_impl_clamp(v, a.lo, a.hi);
    return v;
}

/* y = alpha * acc; no D tensors, no activation. gconv_epi_scale(1) is a plain store. */
static inline gconv_epilogue gconv_epi_scale(float alpha)
{
    gconv_epilogue e;
    memset(&e, 0, sizeof e);
    e.alpha = alpha;
    return e;
}

/* Append a D tensor with its scale. GCONV_ERR_ARGUMENT if all GCONV_MAX_D slots are taken,
 * GCONV_ERR_NULL for a null pointer; e is unchanged then. */
static inline gconv_status gconv_epi_add_d(gconv_epilogue *e, const void *data,
                                           gconv_act_strides strides, float beta)
{
    if (!e || !data)
        return GCONV_ERR_NULL;
    if (e->num_d < 0 || e->num_d >= GCONV_MAX_D)
        return GCONV_ERR_ARGUMENT;
    e->d[e->num_d].data = data;
    e->d[e->num_d].strides = strides;
    e->beta[e->num_d] = beta;
    e->num_d++;
    return GCONV_OK;
}

/* Validate an epilogue description against nothing but itself (pointers and counts). */
static inline gconv_status gconv_epilogue_check(const gconv_epilogue *e, char *why, size_t len)
{
    int i;
    if (!e)
        return GCONV_OK;
    if (e->num_d < 0 || e->num_d > GCONV_MAX_D)
        return gconv_impl_fail(GCONV_ERR_ARGUMENT, why, len,
                               "the epilogue has %d D tensors; at most %d are allowed", e->num_d,
                               GCONV_MAX_D);
    for (i = 0; i < e->num_d; i++)
        if (!e->d[i].data)
            return gconv_impl_fail(GCONV_ERR_NULL, why, len, "D tensor %d has a null pointer", i);
    if (e->act.kind != GCONV_ACT_NONE && e->act.kind != GCONV_ACT_RELU &&
        e->act.kind != GCONV_ACT_CLAMP)
        return gconv_impl_fail(GCONV_ERR_ARGUMENT, why, len, "unknown activation kind %d",
                               (int)e->act.kind);
    if (e->act.kind == GCONV_ACT_CLAMP && !(e->act.lo <= e->act.hi))
        return gconv_impl_fail(GCONV_ERR_ARGUMENT, why, len,
                               "clamp bounds are reversed or NaN (lo %g, hi %g)", (double)e->act.lo,
                               (double)e->act.hi);
    return GCONV_OK;
}

#endif /* GCONV_EPILOGUE_H */
