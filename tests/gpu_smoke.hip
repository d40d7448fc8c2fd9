/* tests/gpu_smoke.hip: the smallest end-to-end GPU check of gconv's foundation.
 *
 * What it checks, through gconv/platform.h only (the same source builds with hipcc -x hip and
 * with nvcc -x cu):
 *   device      a GPU answers; prints its name, multiprocessor count and wave size
 *               (gconv_device_sm_count, gconv_device_wave_size);
 *   widen       GCONV_TO_FLOAT for every one of the 65536 fp16 and bf16 bit patterns agrees
 *               bit for bit with the host conversions of gconv/types.h;
 *   narrow      GCONV_FROM_FLOAT to fp16 and bf16 agrees bit for bit with the host on every
 *               rounding tie of both formats, the floats either side of each tie, and random
 *               bit patterns (overflow, underflow, subnormals); NaN must stay NaN;
 *   epilogue    gconv_impl_epilogue_apply with two D tensors (a residual in the output layout,
 *               a broadcast bias) and a clamp, for fp32, fp16 and bf16, input in NHWGC and
 *               output in NGCHW, launched on a stream, equals the same formula on the host
 *               bit for bit (the inputs are chosen so that every fp32 step is exact, whatever
 *               the order of operations or fused multiply-adds).
 * Without a GPU every test skips with the runtime's reason.
 *
 * Run: build/amd/gpu_smoke or build/nvidia/gpu_smoke (Criterion options apply: --verbose,
 * --filter 'smoke/epilogue').
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../gconv/device.h"
#include "../gconv/epilogue.h"
#include "../gconv/layout.h"
#include "../gconv/platform.h"
#include "../gconv/problem.h"
#include "../gconv/types.h"
#include "gpu_common.h"

enum { SMOKE_THREADS = 256 };

static unsigned smoke_blocks(int64_t n)
{
    return (unsigned)((n + SMOKE_THREADS - 1) / SMOKE_THREADS);
}

/* ---- device ------------------------------------------------------------------------------ */

Test(smoke, device, .timeout = 60)
{
    hipDeviceProp_t prop;
    int dev = 0, sms, wave;
    gt_require_gpu();
    GT_CHECK(hipGetDevice(&dev));
    GT_CHECK(hipGetDeviceProperties(&prop, dev));
    sms = gconv_device_sm_count();
    wave = gconv_device_wave_size();
    fprintf(stderr, "[smoke] device %d: %s, %d multiprocessors, wave size %d\n", dev, prop.name,
            sms, wave);
    cr_expect(sms > 0, "gconv_device_sm_count() returned %d", sms);
    cr_expect(wave == 32 || wave == 64, "gconv_device_wave_size() returned %d", wave);
}

/* ---- conversions ------------------------------------------------------------------------- */

__global__ void smoke_widen(const uint16_t *bits, float *f16_out, float *bf16_out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    gconv_f16 h;
    gconv_bf16 b;
    if (i >= n)
        return;
    h.bits = bits[i];
    b.bits = bits[i];
    f16_out[i] = GCONV_TO_FLOAT(GCONV_F16, h);
    bf16_out[i] = GCONV_TO_FLOAT(GCONV_BF16, b);
}

__global__ void smoke_narrow(const float *in, gconv_f16 *f16_out, gconv_bf16 *bf16_out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    f16_out[i] = GCONV_FROM_FLOAT(GCONV_F16, in[i]);
    bf16_out[i] = GCONV_FROM_FLOAT(GCONV_BF16, in[i]);
}

static int smoke_f32_is_nan(uint32_t u)
{
    return (u & 0x7fffffffu) > 0x7f800000u;
}

static int smoke_16_is_nan(int is_f16, uint16_t b)
{
    return is_f16 ? (b & 0x7fffu) > 0x7c00u : (b & 0x7fffu) > 0x7f80u;
}

Test(smoke, widen, .timeout = 60)
{
    enum { N = 65536 };
    uint16_t *bits;
    float *h16, *hb16;
    void *d_bits, *d16, *db16;
    int i, bad = 0;
    gt_require_gpu();
    bits = (uint16_t *)gt_host_alloc(N * sizeof(uint16_t));
    h16 = (float *)gt_host_alloc(N * sizeof(float));
    hb16 = (float *)gt_host_alloc(N * sizeof(float));
    for (i = 0; i < N; i++)
        bits[i] = (uint16_t)i;
    d_bits = gt_dev_upload(bits, N * sizeof(uint16_t));
    d16 = gt_dev_alloc(N * sizeof(float));
    db16 = gt_dev_alloc(N * sizeof(float));
    hipLaunchKernelGGL(smoke_widen, smoke_blocks(N), SMOKE_THREADS, 0, 0,
                       (const uint16_t *)d_bits, (float *)d16, (float *)db16, (int)N);
    GT_CHECK_LAUNCH();
    GT_CHECK(hipDeviceSynchronize());
    gt_dev_download(h16, d16, N * sizeof(float));
    gt_dev_download(hb16, db16, N * sizeof(float));
    for (i = 0; i < N; i++) {
        gconv_f16 h;
        gconv_bf16 b;
        uint32_t want16, wantb, got16 = gconv_impl_f32_bits(h16[i]), gotb;
        h.bits = (uint16_t)i;
        b.bits = (uint16_t)i;
        want16 = gconv_impl_f32_bits(gconv_f16_to_f32(h));
        wantb = gconv_impl_f32_bits(gconv_bf16_to_f32(b));
        gotb = gconv_impl_f32_bits(hb16[i]);
        /* NaN payloads may differ between hardware and the portable code: NaN-ness must not */
        if (smoke_f32_is_nan(want16) ? !smoke_f32_is_nan(got16) : got16 != want16) {
            if (bad++ < 5)
                cr_log_error("fp16 0x%04x widened to 0x%08x, want 0x%08x", i, (unsigned)got16,
                             (unsigned)want16);
        }
        if (smoke_f32_is_nan(wantb) ? !smoke_f32_is_nan(gotb) : gotb != wantb) {
            if (bad++ < 5)
                cr_log_error("bf16 0x%04x widened to 0x%08x, want 0x%08x", i, (unsigned)gotb,
                             (unsigned)wantb);
        }
    }
    cr_expect(bad == 0, "%d of %d widenings differ from gconv/types.h", bad, 2 * N);
    gt_dev_free(d_bits);
    gt_dev_free(d16);
    gt_dev_free(db16);
    free(bits);
    free(h16);
    free(hb16);
}

/* The floats to narrow: for every 16-bit pattern i, the bf16 tie (i << 16 | 0x8000) and the
 * floats one ulp below and above it; for every finite positive fp16 value, the midpoint to
 * the next one (an fp16 tie: 12 significant bits, exact in fp32) and its two neighbours, with
 * both signs; then random bit patterns. */
static int smoke_narrow_inputs(float *f, gt_rng *r)
{
    int n = 0, i, s;
    for (i = 0; i < 65536; i++) {
        uint32_t tie = (uint32_t)i << 16 | 0x8000u;
        f[n++] = gconv_impl_f32_from_bits(tie - 1u);
        f[n++] = gconv_impl_f32_from_bits(tie);
        f[n++] = gconv_impl_f32_from_bits(tie + 1u);
    }
    for (i = 0; i < 0x7c00; i++) {
        gconv_f16 lo, hi;
        float mid;
        lo.bits = (uint16_t)i;
        hi.bits = (uint16_t)(i + 1);
        /* above the largest finite fp16 (65504) the next step would be 65536 */
        mid = (gconv_f16_to_f32(lo) + (i == 0x7bff ? 65536.0f : gconv_f16_to_f32(hi))) * 0.5f;
        for (s = 0; s < 2; s++) {
            uint32_t u = gconv_impl_f32_bits(s ? -mid : mid);
            f[n++] = gconv_impl_f32_from_bits(u - 1u);
            f[n++] = gconv_impl_f32_from_bits(u);
            f[n++] = gconv_impl_f32_from_bits(u + 1u);
        }
    }
    for (i = 0; i < 65536; i++)
        f[n++] = gconv_impl_f32_from_bits((uint32_t)gt_rng_next(r));
    return n;
}

Test(smoke, narrow, .timeout = 60)
{
    enum { CAP = 3 * 65536 + 6 * 0x7c00 + 65536 };
    float *in;
    gconv_f16 *h16;
    gconv_bf16 *hb16;
    gt_rng r = gt_rng_make(20240601);
    void *d_in, *d16, *db16;
    int i, n, bad = 0;
    gt_require_gpu();
    in = (float *)gt_host_alloc(CAP * sizeof(float));
    h16 = (gconv_f16 *)gt_host_alloc(CAP * sizeof(gconv_f16));
    hb16 = (gconv_bf16 *)gt_host_alloc(CAP * sizeof(gconv_bf16));
    n = smoke_narrow_inputs(in, &r);
    cr_assert(n <= CAP, "input table overflow: %d > %d", n, (int)CAP);
    d_in = gt_dev_upload(in, (size_t)n * sizeof(float));
    d16 = gt_dev_alloc((size_t)n * sizeof(gconv_f16));
    db16 = gt_dev_alloc((size_t)n * sizeof(gconv_bf16));
    hipLaunchKernelGGL(smoke_narrow, smoke_blocks(n), SMOKE_THREADS, 0, 0, (const float *)d_in,
                       (gconv_f16 *)d16, (gconv_bf16 *)db16, n);
    GT_CHECK_LAUNCH();
    GT_CHECK(hipDeviceSynchronize());
    gt_dev_download(h16, d16, (size_t)n * sizeof(gconv_f16));
    gt_dev_download(hb16, db16, (size_t)n * sizeof(gconv_bf16));
    for (i = 0; i < n; i++) {
        uint16_t want16 = gconv_f32_to_f16(in[i]).bits, wantb = gconv_f32_to_bf16(in[i]).bits;
        uint16_t got16 = h16[i].bits, gotb = hb16[i].bits;
        if (smoke_16_is_nan(1, want16) ? !smoke_16_is_nan(1, got16) : got16 != want16) {
            if (bad++ < 5)
                cr_log_error("float 0x%08x (%.9g) to fp16 gave 0x%04x, want 0x%04x",
                             (unsigned)gconv_impl_f32_bits(in[i]), (double)in[i], got16, want16);
        }
        if (smoke_16_is_nan(0, wantb) ? !smoke_16_is_nan(0, gotb) : gotb != wantb) {
            if (bad++ < 5)
                cr_log_error("float 0x%08x (%.9g) to bf16 gave 0x%04x, want 0x%04x",
                             (unsigned)gconv_impl_f32_bits(in[i]), (double)in[i], gotb, wantb);
        }
    }
    cr_expect(bad == 0, "%d of %d narrowings differ from gconv/types.h", bad, 2 * n);
    gt_dev_free(d_in);
    gt_dev_free(d16);
    gt_dev_free(db16);
    free(in);
    free(h16);
    free(hb16);
}

/* ---- epilogue ---------------------------------------------------------------------------- */

/* The logical extent of the output and where things live; C == K, 1x1 "filter" = identity. */
typedef struct smoke_shape {
    int G, N, K, H, W;
    gconv_act_strides in, out;
} smoke_shape;

/* One thread per output element: acc is the input element at the same logical position, the
 * result y = epilogue(acc) is stored in the output layout. The D tensors have type T too. */
#define SMOKE_EPILOGUE_KERNEL(T)                                                                 \
    __global__ void GCONV_IMPL_CAT(smoke_epilogue_, GCONV_TYPE_SUFFIX(T))(                       \
        const GCONV_STORAGE(T) *in, GCONV_STORAGE(T) *out, smoke_shape s, gconv_epilogue e)      \
    {                                                                                            \
        int i = blockIdx.x * blockDim.x + threadIdx.x;                                           \
        int w = i % s.W, h = i / s.W % s.H, k = i / (s.W * s.H) % s.K;                           \
        int n = i / (s.W * s.H * s.K) % s.N, g = i / (s.W * s.H * s.K * s.N);                    \
        float acc, y;                                                                            \
        if (g >= s.G)                                                                            \
            return;                                                                              \
        acc = GCONV_TO_FLOAT(T, in[gconv_act_offset(&s.in, g, n, k, 0, h, w)]);                  \
        y = gconv_impl_epilogue_apply(&e, T, acc, g, n, k, 0, h, w);                             \
        out[gconv_act_offset(&s.out, g, n, k, 0, h, w)] = GCONV_FROM_FLOAT(T, y);                \
    }

SMOKE_EPILOGUE_KERNEL(GCONV_F32)
SMOKE_EPILOGUE_KERNEL(GCONV_F16)
SMOKE_EPILOGUE_KERNEL(GCONV_BF16)

/* Values k * 2^-7 with |k| < 1024: 11 significant bits, exact in fp32 and fp16 (bf16 rounds
 * them once when they are stored, and both sides then read the same stored bits). With
 * alpha 0.75, betas 0.5 and -1.5, every product and sum below has at most 15 significant
 * bits, so fp32 evaluates it exactly in any order; only the final narrowing rounds. */
static void smoke_fill(gconv_dtype t, void *p, int64_t n, gt_rng *r)
{
    int64_t i;
    for (i = 0; i < n; i++)
        gconv_store_f32(t, p, (size_t)i, (float)gt_rng_int(r, -1023, 1023) / 128.0f);
}

static void smoke_epilogue_case(gconv_dtype t)
{
    gconv_problem p;
    smoke_shape s;
    gconv_epilogue e;
    gconv_act_strides sb;
    hipStream_t stream;
    gt_rng r = gt_rng_make(7 + (uint64_t)t);
    char why[256];
    size_t es = gconv_dtype_size(t);
    int64_t nin, nout, nbias, count;
    void *h_in, *h_res, *h_bias, *h_out, *h_want, *d_in, *d_res, *d_bias, *d_out;
    int g, n, k, h, w, bad = 0;
    gt_require_gpu();

    /* 2D, G 3, N 2, C = K 5, 4 x 7 pixels, 1x1 filter; input NHWGC, output NGCHW */
    gconv_problem_2d(&p, 3, 2, 5, 5, 4, 7, 1, 1, 1, 1, 0, 0, 1, 1);
    p.in_layout = GCONV_NHWGC;
    p.out_layout = GCONV_NGCHW;
    cr_assert(gconv_problem_check(&p, why, sizeof why) == GCONV_OK, "%s", why);
    s.G = p.G, s.N = p.N, s.K = p.K, s.H = p.in[1], s.W = p.in[2];
    s.in = gconv_in_strides(&p);
    s.out = gconv_out_strides(&p);
    sb = gconv_bias_strides(&p);
    nin = gconv_in_elems(&p);
    nout = gconv_out_elems(&p);
    nbias = (int64_t)p.G * p.K;
    count = (int64_t)s.G * s.N * s.K * s.H * s.W;

    h_in = gt_host_alloc((size_t)nin * es);
    h_res = gt_host_alloc((size_t)nout * es);
    h_bias = gt_host_alloc((size_t)nbias * es);
    h_out = gt_host_alloc((size_t)nout * es);
    h_want = gt_host_alloc((size_t)nout * es);
    smoke_fill(t, h_in, nin, &r);
    smoke_fill(t, h_res, nout, &r);
    smoke_fill(t, h_bias, nbias, &r);
    gt_poison_host(h_out, (size_t)nout * es);

    GT_CHECK(hipStreamCreate(&stream));
    d_in = gt_dev_alloc((size_t)nin * es);
    d_res = gt_dev_alloc((size_t)nout * es);
    d_bias = gt_dev_alloc((size_t)nbias * es);
    d_out = gt_dev_alloc((size_t)nout * es);
    GT_CHECK(hipMemcpyAsync(d_in, h_in, (size_t)nin * es, hipMemcpyHostToDevice, stream));
    GT_CHECK(hipMemcpyAsync(d_res, h_res, (size_t)nout * es, hipMemcpyHostToDevice, stream));
    GT_CHECK(hipMemcpyAsync(d_bias, h_bias, (size_t)nbias * es, hipMemcpyHostToDevice, stream));
    GT_CHECK(hipMemsetAsync(d_out, 0xFF, (size_t)nout * es, stream));

    e = gconv_epi_scale(0.75f);
    cr_assert(gconv_epi_add_d(&e, d_res, s.out, 0.5f) == GCONV_OK);
    cr_assert(gconv_epi_add_d(&e, d_bias, sb, -1.5f) == GCONV_OK);
    e.act = gconv_clamp(-6.0f, 6.0f);
    cr_assert(gconv_epilogue_check(&e, why, sizeof why) == GCONV_OK, "%s", why);

    if (t == GCONV_F16)
        hipLaunchKernelGGL(smoke_epilogue_f16, smoke_blocks(count), SMOKE_THREADS, 0, stream,
                           (const gconv_f16 *)d_in, (gconv_f16 *)d_out, s, e);
    else if (t == GCONV_BF16)
        hipLaunchKernelGGL(smoke_epilogue_bf16, smoke_blocks(count), SMOKE_THREADS, 0, stream,
                           (const gconv_bf16 *)d_in, (gconv_bf16 *)d_out, s, e);
    else
        hipLaunchKernelGGL(smoke_epilogue_f32, smoke_blocks(count), SMOKE_THREADS, 0, stream,
                           (const float *)d_in, (float *)d_out, s, e);
    GT_CHECK_LAUNCH();
    GT_CHECK(hipMemcpyAsync(h_out, d_out, (size_t)nout * es, hipMemcpyDeviceToHost, stream));
    GT_CHECK(hipStreamSynchronize(stream));

    /* the same formula on the host, element by element through the logical index */
    for (g = 0; g < s.G; g++)
        for (n = 0; n < s.N; n++)
            for (k = 0; k < s.K; k++)
                for (h = 0; h < s.H; h++)
                    for (w = 0; w < s.W; w++) {
                        size_t oi = (size_t)gconv_act_offset(&s.in, g, n, k, 0, h, w);
                        size_t oo = (size_t)gconv_act_offset(&s.out, g, n, k, 0, h, w);
                        size_t ob = (size_t)gconv_act_offset(&sb, g, n, k, 0, h, w);
                        float y = 0.75f * gconv_load_f32(t, h_in, oi);
                        y += 0.5f * gconv_load_f32(t, h_res, oo);
                        y += -1.5f * gconv_load_f32(t, h_bias, ob);
                        y = gconv_act_apply(gconv_clamp(-6.0f, 6.0f), y);
                        gconv_store_f32(t, h_want, oo, y);
                        if (memcmp((char *)h_want + oo * es, (char *)h_out + oo * es, es)) {
                            if (bad++ < 5)
                                cr_log_error("%s (g %d, n %d, k %d, h %d, w %d): got %.9g "
                                             "want %.9g%s",
                                             gconv_dtype_name(t), g, n, k, h, w,
                                             (double)gconv_load_f32(t, h_out, oo), (double)y,
                                             gt_is_poison(t, h_out, oo) ? " (unwritten)" : "");
                        }
                    }
    cr_expect(bad == 0, "%s: %d of %lld outputs differ from the host", gconv_dtype_name(t), bad,
              (long long)count);

    GT_CHECK(hipStreamDestroy(stream));
    gt_dev_free(d_in);
    gt_dev_free(d_res);
    gt_dev_free(d_bias);
    gt_dev_free(d_out);
    free(h_in);
    free(h_res);
    free(h_bias);
    free(h_out);
    free(h_want);
}

Test(smoke, epilogue_f32, .timeout = 60)
{
    smoke_epilogue_case(GCONV_F32);
}

Test(smoke, epilogue_f16, .timeout = 60)
{
    smoke_epilogue_case(GCONV_F16);
}

Test(smoke, epilogue_bf16, .timeout = 60)
{
    smoke_epilogue_case(GCONV_BF16);
}
