/* examples/common.h: small helpers shared by the example programs (prefix ex_).
 *
 * What is here:
 *   EX_CHECK(call)        run a HIP call; on error print the call, the error and exit(1)
 *   ex_have_gpu()         1 if a GPU can be used; else prints why and returns 0
 *   ex_dev_fill()         fill a device tensor with pseudo-random values (integers in [-5, 5) or
 *                         decimals in [-1, 1)) computed on the device from a hash of the element
 *                         index, so even large tensors fill instantly
 *   ex_parse_int()        strict integer parsing for command lines
 *   ex_compare()          compare a device result (downloaded) with an fp32 reference of the
 *                         same layout; prints the worst element with its logical index
 *   ex_timer_*            device-event timing: warm-up, trials, median
 *
 * Examples are plain programs (no test framework); they include this after gconv.h.
 */
#ifndef GCONV_EXAMPLES_COMMON_H
#define GCONV_EXAMPLES_COMMON_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../gconv.h"

#define EX_CHECK(call)                                                                           \
    do {                                                                                         \
        hipError_t ex_err = (call);                                                              \
        if (ex_err != hipSuccess) {                                                              \
            fprintf(stderr, "%s:%d: %s failed: %s (%s)\n", __FILE__, __LINE__, #call,            \
                    hipGetErrorName(ex_err), hipGetErrorString(ex_err));                         \
            exit(1);                                                                             \
        }                                                                                        \
    } while (0)

static inline int ex_have_gpu(void)
{
    int n = 0;
    hipError_t e = hipGetDeviceCount(&n);
    if (e != hipSuccess) {
        fprintf(stderr, "no GPU: hipGetDeviceCount failed: %s (%s)\n", hipGetErrorName(e),
                hipGetErrorString(e));
        return 0;
    }
    if (n <= 0) {
        fprintf(stderr, "no GPU: no device found\n");
        return 0;
    }
    return 1;
}

/* Parse a whole string as an int in [lo, hi]; 1 on success. */
static inline int ex_parse_int(const char *s, int lo, int hi, int *v)
{
    char *end;
    long x = strtol(s, &end, 10);
    if (end == s || *end != '\0' || x < lo || x > hi)
        return 0;
    *v = (int)x;
    return 1;
}

/* ---- device fill ------------------------------------------------------------------------ */

enum { EX_INIT_NONE = 0, EX_INIT_INT = 1, EX_INIT_DECIMAL = 2 };

static inline GCONV_HD uint64_t ex_hash(uint64_t seed, uint64_t i)
{
    uint64_t z = seed * 0x9E3779B97F4A7C15ull + i * 0xD1B54A32D192ED03ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

__global__ void ex_fill_kernel(void *p, int64_t n, gconv_dtype t, uint64_t seed, int init)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (; i < n; i += step) {
        uint64_t z = ex_hash(seed, (uint64_t)i);
        /* integers -5..4, or 24 random bits scaled to [-1, 1) */
        float v = init == EX_INIT_INT ? (float)((int)(z % 10u) - 5)
                                      : (float)(z >> 40) * (2.0f / 16777216.0f) - 1.0f;
        if (t == GCONV_F16)
            ((gconv_f16 *)p)[i] = gconv_impl_from_float_f16(v);
        else if (t == GCONV_BF16)
            ((gconv_bf16 *)p)[i] = gconv_impl_from_float_bf16(v);
        else
            ((float *)p)[i] = v;
    }
}

/* Fill n elements of type t at device pointer p (init EX_INIT_NONE leaves them alone). */
static inline void ex_dev_fill(void *p, int64_t n, gconv_dtype t, uint64_t seed, int init)
{
    if (init == EX_INIT_NONE || n == 0)
        return;
    hipLaunchKernelGGL(ex_fill_kernel, dim3(2048), dim3(256), 0, 0, p, n, t, seed, init);
    EX_CHECK(hipGetLastError());
}

static inline void *ex_dev_alloc(size_t bytes)
{
    void *p = NULL;
    EX_CHECK(hipMalloc(&p, bytes ? bytes : 1));
    return p;
}

static inline void *ex_host_alloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        fprintf(stderr, "out of host memory (%zu bytes)\n", bytes);
        exit(1);
    }
    return p;
}

/* ---- comparison -------------------------------------------------------------------------- */

/* Compare got (type t, layout st over G x N x ch x sp) with the fp32 reference ref. The
 * allowed error is atol + rtol * |ref| with (see tests/gpu_common.h for the derivation)
 * atol = (1e-5 sqrt(L) + 2^-24 L) * scale, rtol = half an ulp of t (+ 2^-22); L is the
 * accumulation length, scale bounds |input * weight| times |alpha|. Prints a summary and the
 * worst element; returns the number of elements out of tolerance. */
static inline int64_t ex_compare(gconv_dtype t, const void *got, const float *ref,
                                 gconv_act_strides st, int G, int N, int ch, const int sp[3],
                                 int64_t L, double scale)
{
    double l = (double)(L > 0 ? L : 1);
    double atol = 1e-5 * sqrt(l) * scale + ldexp(1.0, -24) * l * scale;
    double rtol = (t == GCONV_F16 ? ldexp(1.0, -11) : t == GCONV_BF16 ? ldexp(1.0, -8) : 0.0) +
                  ldexp(1.0, -22);
    double worst = -1, wg = 0, wr = 0;
    int wi[6] = {0, 0, 0, 0, 0, 0};
    int64_t bad = 0, total = 0;
    int g, n, c, d, h, w;
    for (g = 0; g < G; g++)
        for (n = 0; n < N; n++)
            for (c = 0; c < ch; c++)
                for (d = 0; d < sp[0]; d++)
                    for (h = 0; h < sp[1]; h++)
                        for (w = 0; w < sp[2]; w++) {
                            int64_t o = gconv_act_offset(&st, g, n, c, d, h, w);
                            double r = ref[o], v = gconv_load_f32(t, got, (size_t)o);
                            double ratio = v == v ? fabs(v - r) / (atol + rtol * fabs(r))
                                                  : INFINITY;
                            if (!(ratio <= 1.0))
                                bad++;
                            if (ratio > worst) {
                                worst = ratio, wg = v, wr = r;
                                wi[0] = g, wi[1] = n, wi[2] = c, wi[3] = d, wi[4] = h, wi[5] = w;
                            }
                            total++;
                        }
    printf("verify: %lld of %lld elements out of tolerance; worst at (g %d, n %d, k %d, d %d, "
           "h %d, w %d): got %.7g, want %.7g (error %.3g of the allowed)\n",
           (long long)bad, (long long)total, wi[0], wi[1], wi[2], wi[3], wi[4], wi[5], wg, wr,
           worst);
    return bad;
}

/* ---- timing ------------------------------------------------------------------------------- */

static int ex_cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : x > y;
}

/* Median of n floats (sorts them). */
static inline float ex_median(float *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, ex_cmp_float);
    return n % 2 ? v[n / 2] : 0.5f * (v[n / 2 - 1] + v[n / 2]);
}

#endif /* GCONV_EXAMPLES_COMMON_H */
