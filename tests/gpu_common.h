/* tests/gpu_common.h: helpers shared by every GPU test (forward, backward data, backward weight,
 * conv->conv).
 *
 * What is here (prefix gt_):
 *   GT_CHECK(call)            run a HIP call; on error fail the test with the call's text, the
 *                             error name and string, file and line
 *   GT_CHECK_LAUNCH()         the same for the last kernel launch (hipGetLastError)
 *   gt_require_gpu()          skip the test, with the reason, when no GPU can be used
 *   gt_rng                    a seeded generator (splitmix64): uniform doubles, integers
 *   gt_fill / gt_fill_d       random tensors of any dtype: integers in [-5, 5) or decimals in
 *                             [-1, 1), never an all-zero tensor
 *   gt_poison_host, gt_is_poison     the NaN poison pattern (all bits set: 0xFFFF for 16-bit
 *                             types, 0xFFFFFFFF for fp32) so that unwritten outputs show
 *   gt_dev_*                  device buffers: allocate, upload, download, free
 *   gt_guarded_*              an output buffer with poisoned guard zones on both sides, to
 *                             catch writes outside the tensor
 *   gt_tolerance, gt_compare_act, gt_compare_report    compare a GPU activation tensor with an
 *                             fp32 reference of the same layout element by element; report the
 *                             worst element by its logical index (g, n, c, d, h, w)
 *   device helpers for huge tensors: gt_dev_fill_hash (values that are a pure function of the
 *                             element index, so the host can recompute any one) and
 *                             gt_dev_count_poison (how many elements still hold the poison)
 *
 * Usage (inside a Criterion test):
 *     gt_require_gpu();
 *     gt_rng r = gt_rng_make(1234);
 *     void *h = gt_host_alloc(bytes);  gt_fill(GCONV_F16, h, n, &r, GT_INIT_DECIMAL);
 *     void *d = gt_dev_upload(h, bytes);
 *     ...
 *     gt_cmp c = gt_compare_act(GCONV_F16, got, ref, st, G, N, K, sp, gt_tolerance(...));
 *     if (c.bad) cr_expect_fail("%s", gt_compare_report(&c, buf, sizeof buf));
 *
 * C style (no templates or classes). Compiled as HIP by hipcc (-x hip) and as CUDA by nvcc
 * (-x cu) through gconv/platform.h; test binaries are one translation unit each, so the few
 * kernels here are defined (not only declared) in the header.
 */
#ifndef GCONV_TESTS_GPU_COMMON_H
#define GCONV_TESTS_GPU_COMMON_H

#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../gconv/device.h"
#include "../gconv/epilogue.h"
#include "../gconv/layout.h"
#include "../gconv/platform.h"
#include "../gconv/problem.h"
#include "../gconv/types.h"

/* ---- HIP error checking ----------------------------------------------------------------- */

#define GT_CHECK(call)                                                                           \
    do {                                                                                         \
        hipError_t gt_err = (call);                                                              \
        if (gt_err != hipSuccess)                                                                \
            cr_assert_fail("%s:%d: %s failed: %s (%s)", __FILE__, __LINE__, #call,               \
                           hipGetErrorName(gt_err), hipGetErrorString(gt_err));                  \
    } while (0)

/* After a kernel launch: the launch error, if any (does not synchronise). */
#define GT_CHECK_LAUNCH() GT_CHECK(hipGetLastError())

/* Skip the calling test, saying why, when there is no usable GPU. */
static inline void gt_require_gpu(void)
{
    int n = 0;
    hipError_t e = hipGetDeviceCount(&n);
    if (e != hipSuccess)
        cr_skip_test("no GPU: hipGetDeviceCount failed: %s (%s)", hipGetErrorName(e),
                     hipGetErrorString(e));
    if (n <= 0)
        cr_skip_test("no GPU: hipGetDeviceCount reports %d devices", n);
}

/* ---- random numbers ------------------------------------------------------------------------ */

typedef struct gt_rng {
    uint64_t s;
} gt_rng;

/* splitmix64's output function: a 64-bit value mixed so that near inputs give unrelated
 * outputs. */
static inline uint64_t gt_mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* The seed is hashed into the state: the state steps by the same constant at every draw, so
 * an unhashed seed * constant made seed + 1's stream seed's shifted by one draw (neighbouring
 * seeds, as the sweeps use per type and layout, drew nearly the same problems). */
static inline gt_rng gt_rng_make(uint64_t seed)
{
    gt_rng r;
    r.s = gt_mix64(seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull);
    return r;
}

/* splitmix64: good enough statistics for test data, one multiply-xorshift chain per draw. */
static inline uint64_t gt_rng_next(gt_rng *r)
{
    return gt_mix64(r->s += 0x9E3779B97F4A7C15ull);
}

/* uniform in [0, 1) with 53 random bits */
static inline double gt_rng_unit(gt_rng *r)
{
    return (double)(gt_rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

/* uniform integer in [lo, hi] (inclusive) */
static inline int gt_rng_int(gt_rng *r, int lo, int hi)
{
    return lo + (int)(gt_rng_next(r) % (uint64_t)(hi - lo + 1));
}

/* ---- fill, poison ------------------------------------------------------------------------ */

enum { GT_INIT_NONE = 0, GT_INIT_INT = 1, GT_INIT_DECIMAL = 2 };

/* Largest magnitude gt_fill produces for an init kind (used to scale tolerances). */
static inline double gt_init_max(int init)
{
    return init == GT_INIT_INT ? 5.0 : 1.0;
}

/* Fill n elements of type t: integers in [-5, 5) (exact in every type) or decimals uniform in
 * [-1, 1) rounded to t. Never leaves the tensor all zeros: if every draw was 0 (possible only
 * for tiny integer tensors) element 0 is set to 1. */
static inline void gt_fill(gconv_dtype t, void *h, size_t n, gt_rng *r, int init)
{
    size_t i;
    int nonzero = 0;
    for (i = 0; i < n; i++) {
        float v = init == GT_INIT_INT ? (float)gt_rng_int(r, -5, 4)
                                      : (float)(2.0 * gt_rng_unit(r) - 1.0);
        gconv_store_f32(t, h, i, v);
        nonzero |= gconv_load_f32(t, h, i) != 0.0f;
    }
    if (n && !nonzero)
        gconv_store_f32(t, h, 0, 1.0f);
}

/* Every byte 0xFF: a NaN in fp32, fp16 and bf16 alike (exponent all ones, mantissa non-zero),
 * which no kernel produces from finite data, so an element still holding it was not written. */
static inline void gt_poison_host(void *h, size_t bytes)
{
    memset(h, 0xFF, bytes);
}

static inline int gt_is_poison(gconv_dtype t, const void *h, size_t i)
{
    if (t == GCONV_F32)
        return ((const uint32_t *)h)[i] == 0xFFFFFFFFu;
    return ((const uint16_t *)h)[i] == 0xFFFFu;
}

/* Widen n elements of type t into a new fp32 array (the caller frees it). */
static inline float *gt_to_f32(gconv_dtype t, const void *h, size_t n)
{
    size_t i;
    float *f = (float *)malloc((n ? n : 1) * sizeof(float));
    cr_assert(f != NULL, "out of host memory (%zu floats)", n);
    for (i = 0; i < n; i++)
        f[i] = gconv_load_f32(t, h, i);
    return f;
}

/* ---- host and device buffers ------------------------------------------------------------- */

static inline void *gt_host_alloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    cr_assert(p != NULL, "out of host memory (%zu bytes)", bytes);
    return p;
}

static inline void *gt_dev_alloc(size_t bytes)
{
    void *p = NULL;
    GT_CHECK(hipMalloc(&p, bytes ? bytes : 1));
    return p;
}

static inline void *gt_dev_upload(const void *h, size_t bytes)
{
    void *p = gt_dev_alloc(bytes);
    if (bytes)
        GT_CHECK(hipMemcpy(p, h, bytes, hipMemcpyHostToDevice));
    return p;
}

static inline void gt_dev_download(void *h, const void *d, size_t bytes)
{
    if (bytes)
        GT_CHECK(hipMemcpy(h, d, bytes, hipMemcpyDeviceToHost));
}

static inline void gt_dev_free(void *p)
{
    if (p)
        GT_CHECK(hipFree(p));
}

/* An output buffer with guard zones: [guard][tensor][guard], everything poisoned. hipMalloc
 * returns 256-byte aligned memory and the guard is a multiple of 256 bytes, so the tensor
 * keeps the alignment a plain allocation would have. */
#define GT_GUARD_BYTES 4096

typedef struct gt_guarded {
    unsigned char *base; /* what hipMalloc returned */
    void *p;             /* the tensor */
    size_t bytes;        /* the tensor's size */
} gt_guarded;

static inline gt_guarded gt_guarded_alloc(size_t bytes)
{
    gt_guarded g;
    g.bytes = bytes;
    g.base = (unsigned char *)gt_dev_alloc(bytes + 2 * GT_GUARD_BYTES);
    g.p = g.base + GT_GUARD_BYTES;
    GT_CHECK(hipMemset(g.base, 0xFF, bytes + 2 * GT_GUARD_BYTES));
    return g;
}

/* Poison the tensor again (guards keep their poison unless something wrote there). */
static inline void gt_guarded_poison(gt_guarded *g)
{
    GT_CHECK(hipMemset(g->p, 0xFF, g->bytes));
}

/* Number of guard bytes that no longer hold 0xFF (0 when nothing wrote outside the tensor).
 * *first gets the offset of the first such byte relative to the tensor start (negative:
 * before it), if first is not NULL. */
static inline size_t gt_guarded_check(const gt_guarded *g, long long *first)
{
    unsigned char h[2 * GT_GUARD_BYTES];
    size_t i, bad = 0;
    gt_dev_download(h, g->base, GT_GUARD_BYTES);
    gt_dev_download(h + GT_GUARD_BYTES, g->base + GT_GUARD_BYTES + g->bytes, GT_GUARD_BYTES);
    for (i = 0; i < 2 * GT_GUARD_BYTES; i++) {
        if (h[i] != 0xFF) {
            if (!bad && first)
                *first = i < GT_GUARD_BYTES ? (long long)i - GT_GUARD_BYTES
                                            : (long long)(g->bytes + (i - GT_GUARD_BYTES));
            bad++;
        }
    }
    return bad;
}

static inline void gt_guarded_free(gt_guarded *g)
{
    gt_dev_free(g->base);
    g->base = NULL;
    g->p = NULL;
}

/* ---- tolerances ----------------------------------------------------------------------------
 *
 * The GPU and the CPU reference read the same stored inputs, so input rounding is no error
 * source. The reference accumulates in double and is asked for an fp32 result; the GPU
 * accumulates in fp32 and rounds once to its output type. What differs:
 *
 *   1. fp32 accumulation of L = C * filter taps products. Products of fp16 or bf16 values are
 *      exact in fp32 (11+11 and 8+8 significant bits), products of fp32 values round once.
 *      Each addition rounds by at most u = 2^-24 of the running sum. With random signs the
 *      partial sums grow like sqrt(i) * m (m = rms product, at most scale = max|x| * max|w|)
 *      and the rounding errors add like a random walk, giving an error near
 *      u * m * L / sqrt(2); tile-wise or tree-like summation, as the GPU kernels do, only
 *      shortens the partial sums. We allow 1e-5 * sqrt(L) * scale (which is 168 u * sqrt(L),
 *      far above the random walk for the L of these tests, L < 10^4) plus u * L * scale for
 *      very long sums, where the random-walk term takes over.
 *   2. The final rounding to the output type: at most half an ulp, relative 2^-24 for fp32,
 *      2^-11 for fp16 (11 significant bits) and 2^-8 for bf16 (8 significant bits). This is
 *      rtol. A rounding tie can break differently after the tiny error of 1., which is still
 *      within half an ulp plus that error.
 *   3. The epilogue adds alpha * acc + sum beta_i * D_i in fp32: a few more roundings of
 *      u * |y|, covered by doubling rtol's fp32 floor, and alpha scales the accumulation error
 *      (the caller folds |alpha| into scale).
 *
 * fp16 subnormals and results near zero (cancellation with a bias) fall under atol. With
 * tf32 tensor cores (fp32 only, allow_tf32) each operand keeps 10 mantissa bits, truncated or
 * rounded: each product is off by up to 2 * 2^-10 relative, so the accumulation term becomes
 * 2^-9 * sqrt(L) * scale * 4 (four standard deviations of a random walk of such errors,
 * with rms product at most scale). */
typedef struct gt_tol {
    double atol, rtol;
} gt_tol;

static inline gt_tol gt_tolerance(gconv_dtype out_t, int64_t L, double scale, int tf32)
{
    gt_tol t;
    double l = (double)(L > 0 ? L : 1);
    t.atol = 1e-5 * sqrt(l) * scale + ldexp(1.0, -24) * l * scale;
    if (tf32)
        t.atol += ldexp(1.0, -9) * sqrt(l) * scale * 4.0;
    t.rtol = out_t == GCONV_F16 ? ldexp(1.0, -11) : out_t == GCONV_BF16 ? ldexp(1.0, -8) : 0.0;
    t.rtol += ldexp(1.0, -22);
    return t;
}

/* ---- comparison ---------------------------------------------------------------------------- */

typedef struct gt_cmp {
    int64_t checked;    /* elements compared */
    int64_t bad;        /* elements out of tolerance (NaN and poison included) */
    int64_t unwritten;  /* elements still holding the poison */
    double worst_ratio; /* max |got - ref| / allowed; > 1 fails; infinite for NaN */
    int worst[6];       /* logical index (g, n, c, d, h, w) of the worst element */
    double worst_got, worst_ref, worst_allowed;
    const char *what;   /* name of the tensor for the report */
} gt_cmp;

/* Compare got (type got_t) with ref (fp32), both stored with strides st over the logical
 * dimensions G x N x ch x sp[0] x sp[1] x sp[2]. Every element is visited through its logical
 * index, so a dense layout is covered completely. */
static inline gt_cmp gt_compare_act(const char *what, gconv_dtype got_t, const void *got,
                                    const float *ref, gconv_act_strides st, int G, int N, int ch,
                                    const int sp[3], gt_tol tol)
{
    gt_cmp c;
    int g, n, k, d, h, w;
    memset(&c, 0, sizeof c);
    c.what = what;
    c.worst_ratio = -1.0;
    for (g = 0; g < G; g++)
        for (n = 0; n < N; n++)
            for (k = 0; k < ch; k++)
                for (d = 0; d < sp[0]; d++)
                    for (h = 0; h < sp[1]; h++)
                        for (w = 0; w < sp[2]; w++) {
                            int64_t o = gconv_act_offset(&st, g, n, k, d, h, w);
                            double r = ref[o];
                            double v = gconv_load_f32(got_t, got, (size_t)o);
                            double allowed = tol.atol + tol.rtol * fabs(r);
                            double ratio;
                            if (gt_is_poison(got_t, got, (size_t)o))
                                c.unwritten++;
                            ratio = (v == v) ? fabs(v - r) / allowed : INFINITY;
                            if (!(ratio <= 1.0))
                                c.bad++;
                            if (ratio > c.worst_ratio) {
                                c.worst_ratio = ratio;
                                c.worst[0] = g, c.worst[1] = n, c.worst[2] = k;
                                c.worst[3] = d, c.worst[4] = h, c.worst[5] = w;
                                c.worst_got = v, c.worst_ref = r, c.worst_allowed = allowed;
                            }
                            c.checked++;
                        }
    return c;
}

/* One line describing a comparison: counts and the worst element. Returns buf. */
static inline const char *gt_compare_report(const gt_cmp *c, char *buf, size_t len)
{
    snprintf(buf, len,
             "%s: %lld of %lld elements out of tolerance (%lld unwritten); worst at "
             "(g %d, n %d, c %d, d %d, h %d, w %d): got %.9g, want %.9g, |diff| %.3g, "
             "allowed %.3g",
             c->what ? c->what : "tensor", (long long)c->bad, (long long)c->checked,
             (long long)c->unwritten, c->worst[0], c->worst[1], c->worst[2], c->worst[3],
             c->worst[4], c->worst[5], c->worst_got, c->worst_ref,
             fabs(c->worst_got - c->worst_ref), c->worst_allowed);
    return buf;
}

/* A problem in one line, for failure messages: "2D G 4 N 2 C 3 K 5 in 1x7x9 f 1x3x3 s 1x2x1
 * d 1x1x3 pl 0x1x0 ph 0x2x1 NGCHW/GKCYX/NGKHW". Returns buf. */
static inline const char *gt_problem_str(const gconv_problem *p, char *buf, size_t len)
{
    snprintf(buf, len,
             "%dD G %d N %d C %d K %d in %dx%dx%d f %dx%dx%d s %dx%dx%d d %dx%dx%d "
             "pl %dx%dx%d ph %dx%dx%d %s/%s/%s",
             p->ndim, p->G, p->N, p->C, p->K, p->in[0], p->in[1], p->in[2], p->filter[0],
             p->filter[1], p->filter[2], p->stride[0], p->stride[1], p->stride[2],
             p->dilation[0], p->dilation[1], p->dilation[2], p->pad_lo[0], p->pad_lo[1],
             p->pad_lo[2], p->pad_hi[0], p->pad_hi[1], p->pad_hi[2],
             gconv_layout_name(gconv_in_layout(p)), gconv_layout_name(gconv_wei_layout(p)),
             gconv_layout_name(gconv_out_layout(p)));
    return buf;
}

/* ---- huge tensors: device fill by hash, poison count --------------------------------------
 *
 * A tensor of billions of elements is filled on the device with integers in [lo, lo + range)
 * that depend only on (seed, element index), so the host recomputes any element it needs
 * without holding the tensor. Integers keep the sums exact (see the > 2 GB test). */

static inline GCONV_HD int gt_hash_int(uint64_t seed, uint64_t i, int lo, int range)
{
    uint64_t z = seed * 0x9E3779B97F4A7C15ull + i * 0xD1B54A32D192ED03ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return lo + (int)(z % (uint64_t)range);
}

__global__ void gt_fill_hash_kernel(void *p, int64_t n, gconv_dtype t, uint64_t seed, int lo,
                                    int range)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (; i < n; i += step) {
        float v = (float)gt_hash_int(seed, (uint64_t)i, lo, range);
        if (t == GCONV_F16)
            ((gconv_f16 *)p)[i] = gconv_impl_from_float_f16(v);
        else if (t == GCONV_BF16)
            ((gconv_bf16 *)p)[i] = gconv_impl_from_float_bf16(v);
        else
            ((float *)p)[i] = v;
    }
}

static inline void gt_dev_fill_hash(void *p, int64_t n, gconv_dtype t, uint64_t seed, int lo,
                                    int range)
{
    hipLaunchKernelGGL(gt_fill_hash_kernel, dim3(4096), dim3(256), 0, 0, p, n, t, seed, lo,
                       range);
    GT_CHECK_LAUNCH();
}

__global__ void gt_count_poison_kernel(const void *p, int64_t n, int wide,
                                       unsigned long long *count)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    int64_t step = (int64_t)gridDim.x * blockDim.x;
    unsigned long long c = 0;
    for (; i < n; i += step)
        c += wide ? ((const uint32_t *)p)[i] == 0xFFFFFFFFu : ((const uint16_t *)p)[i] == 0xFFFFu;
    if (c)
        atomicAdd(count, c);
}

/* How many of the n elements of type t at device pointer p still hold the poison. */
static inline unsigned long long gt_dev_count_poison(const void *p, int64_t n, gconv_dtype t)
{
    unsigned long long *dc = (unsigned long long *)gt_dev_alloc(sizeof *dc);
    unsigned long long c = 0;
    GT_CHECK(hipMemset(dc, 0, sizeof *dc));
    hipLaunchKernelGGL(gt_count_poison_kernel, dim3(4096), dim3(256), 0, 0, p, n,
                       t == GCONV_F32 ? 1 : 0, dc);
    GT_CHECK_LAUNCH();
    gt_dev_download(&c, dc, sizeof c);
    gt_dev_free(dc);
    return c;
}

#endif /* GCONV_TESTS_GPU_COMMON_H */
