/* examples/grouped_conv_conv_fwd.hip: run, verify and time one fused grouped convolution ->
 * pointwise (1x1) convolution forward pass (gconv/fused_fwd.h), the depthwise-separable block:
 *
 *     out = conv1x1(relu6(grouped_conv(in, w0) + b0), w1) + b1
 *
 * Arguments, in the order of Composable Kernel's grouped convolution examples:
 *
 *   grouped_conv_conv_fwd [verify init time [ndim G N K C filter... input... strides...
 *                          dilations... left-pads... right-pads... K1 [type]]]
 *
 *   verify   0 or 1: compare every output element with the CPU reference gconv_ref_fwd_fwd
 *   init     0: leave the buffers as allocated, 1: integers in [-5, 5), 2: decimals in [-1, 1)
 *   time     0 or 1: time the launch (device events, warm-up, median of trials)
 *   shape    ndim (1, 2 or 3), G, N, K, C (per group, of the grouped conv), then ndim values each
 *            for the filter, the input, strides, dilations, left pads and right pads, outermost
 *            axis first, then K1 (output channels of the 1x1 conv over all G*K channels);
 *            for 2D:  2 G N K C Y X Hi Wi Sy Sx Dy Dx LPy LPx RPy RPx K1
 *   type     fp32 | fp16 | bf16 (default fp16); layouts NHWGC / GKYXC, output NHWC (G = 1)
 *
 * With no arguments: verify 1, init 2, time 1 on a MobileNetV2 block
 *   2 144 8 1 1 3 3 56 56 1 1 1 1 1 1 1 1 24   (depthwise 3x3 over 144 channels, 56x56, -> 24)
 *
 * Example: MobileNetV2's last block at batch 64, bf16, timing only:
 *     grouped_conv_conv_fwd 0 2 1 2 960 64 1 1 3 3 7 7 1 1 1 1 1 1 1 1 160 bf16
 *
 * Prints the problem, PASS/FAIL of the verification, the median time per launch, TFLOP/s (both
 * convolutions' flops) and GB/s (input + weights + output bytes: the intermediate never leaves
 * the chip). No workspace is needed. Exit status: 0 on success, 1 on a failed verification or
 * a runtime error or no GPU, 2 on bad arguments.
 *
 * Build: nvcc -x cu -arch=sm_90 -O2 -I. examples/grouped_conv_conv_fwd.hip -o ... -lm
 *        hipcc -x hip --offload-arch=gfx90a -O2 -I. examples/grouped_conv_conv_fwd.hip -o ... -lm
 */
#include "common.h"

#include "../gconv/fused_fwd.h"
#include "../gconv/reference.h"

GCONV_FUSED_FWD(ex_fused_f32, GCONV_F32, GCONV_NHWGC, GCONV_GKYXC)
GCONV_FUSED_FWD(ex_fused_f16, GCONV_F16, GCONV_NHWGC, GCONV_GKYXC)
GCONV_FUSED_FWD(ex_fused_bf16, GCONV_BF16, GCONV_NHWGC, GCONV_GKYXC)

typedef gconv_status (*ex_fused_fn)(const gconv_problem *, int, const gconv_fused_fwd_args *,
                                    hipStream_t);
typedef int (*ex_supports_fn)(const gconv_problem *, int, char *, size_t);

static const ex_fused_fn ex_runs[3] = {ex_fused_f32, ex_fused_f16, ex_fused_bf16};
static const ex_supports_fn ex_supports[3] = {ex_fused_f32_supports, ex_fused_f16_supports,
                                              ex_fused_bf16_supports};
static const char *const ex_type_names[3] = {"fp32", "fp16", "bf16"};
static const gconv_dtype ex_types[3] = {GCONV_F32, GCONV_F16, GCONV_BF16};

static void ex_usage(const char *prog)
{
    fprintf(stderr,
            "usage: %s [verify init time [ndim G N K C filter... input... strides... "
            "dilations... left-pads... right-pads... K1 [type]]]\n"
            "  verify  0|1    compare with the CPU reference\n"
            "  init    0|1|2  none | integers in [-5,5) | decimals in [-1,1)\n"
            "  time    0|1    time the launch\n"
            "  ndim 1|2|3, then G N K C, then ndim values each for filter, input, strides,\n"
            "  dilations, left pads, right pads (outermost axis first), then K1, e.g. for 2D:\n"
            "    2 G N K C Y X Hi Wi Sy Sx Dy Dx LPy LPx RPy RPx K1\n"
            "  type    fp32|fp16|bf16 (default fp16)\n"
            "  no arguments: 1 2 1 2 144 8 1 1 3 3 56 56 1 1 1 1 1 1 1 1 24 fp16\n",
            prog);
}

static int ex_lookup(const char *s, const char *const *names, int n)
{
    int i;
    for (i = 0; i < n; i++)
        if (strcmp(s, names[i]) == 0)
            return i;
    return -1;
}

int main(int argc, char **argv)
{
    int verify = 1, init = EX_INIT_DECIMAL, do_time = 1, ti = 1;
    int ndim = 2, G = 144, N = 8, K = 1, C = 1, K1 = 24;
    int f[3] = {3, 3, 1}, in[3] = {56, 56, 1}, st[3] = {1, 1, 1}, dl[3] = {1, 1, 1};
    int lp[3] = {1, 1, 0}, rp[3] = {1, 1, 0};
    int i, ai, ok = 1;
    gconv_problem p;
    gconv_dtype t;
    char why[512];
    gconv_status s;

    /* ---- arguments ---- */
    if (argc != 1 && argc < 4) {
        ex_usage(argv[0]);
        return 2;
    }
    if (argc >= 4) {
        ok &= ex_parse_int(argv[1], 0, 1, &verify);
        ok &= ex_parse_int(argv[2], 0, 2, &init);
        ok &= ex_parse_int(argv[3], 0, 1, &do_time);
    }
    ai = 4;
    if (ok && argc > 4) {
        int *arrays[6];
        int a;
        arrays[0] = f, arrays[1] = in, arrays[2] = st, arrays[3] = dl, arrays[4] = lp;
        arrays[5] = rp;
        ok &= ex_parse_int(argv[ai++], 1, 3, &ndim);
        if (ok && argc < ai + 5 + 6 * ndim) {
            fprintf(stderr, "%s: a %dD shape needs %d numbers after ndim, got %d\n", argv[0],
                    ndim, 5 + 6 * ndim, argc - ai);
            ok = 0;
        }
        if (ok) {
            ok &= ex_parse_int(argv[ai++], 1, 1 << 30, &G);
            ok &= ex_parse_int(argv[ai++], 1, 1 << 30, &N);
            ok &= ex_parse_int(argv[ai++], 1, 1 << 30, &K);
            ok &= ex_parse_int(argv[ai++], 1, 1 << 30, &C);
            for (a = 0; a < 6 && ok; a++)
                for (i = 0; i < ndim; i++)
                    ok &= ex_parse_int(argv[ai++], a < 4 ? 1 : 0, 1 << 30, &arrays[a][i]);
            ok &= ex_parse_int(argv[ai++], 1, 1 << 30, &K1);
        }
        if (ok && ai < argc && (ti = ex_lookup(argv[ai++], ex_type_names, 3)) < 0) {
            fprintf(stderr, "%s: unknown type \"%s\"\n", argv[0], argv[ai - 1]);
            ok = 0;
        }
        if (ok && ai < argc) {
            fprintf(stderr, "%s: unexpected argument \"%s\"\n", argv[0], argv[ai]);
            ok = 0;
        }
    }
    if (!ok) {
        ex_usage(argv[0]);
        return 2;
    }

    /* ---- the problem ---- */
    {
        int zero[3] = {0, 0, 0};
        gconv_problem_nd(&p, ndim, G, N, C, K, in, f, st, zero, dl);
        for (i = 0; i < ndim; i++) {
            p.pad_lo[3 - ndim + i] = lp[i];
            p.pad_hi[3 - ndim + i] = rp[i];
        }
    }
    t = ex_types[ti];
    printf("problem: %dD G %d N %d K %d C %d, input %dx%dx%d, filter %dx%dx%d, stride %dx%dx%d, "
           "dilation %dx%dx%d, pads %dx%dx%d / %dx%dx%d (D x H x W), output %dx%dx%d, then 1x1 "
           "%d -> %d channels\n",
           p.ndim, p.G, p.N, p.K, p.C, p.in[0], p.in[1], p.in[2], p.filter[0], p.filter[1],
           p.filter[2], p.stride[0], p.stride[1], p.stride[2], p.dilation[0], p.dilation[1],
           p.dilation[2], p.pad_lo[0], p.pad_lo[1], p.pad_lo[2], p.pad_hi[0], p.pad_hi[1],
           p.pad_hi[2], gconv_out_len(&p, 0), gconv_out_len(&p, 1), gconv_out_len(&p, 2),
           p.G * p.K, K1);
    printf("type %s, NHWGC / GKYXC -> NHWC, act0 ReLU6, biases b0 and b1, verify %d, init %d, "
           "time %d\n",
           ex_type_names[ti], verify, init, do_time);
    s = gconv_problem_check(&p, why, sizeof why);
    if (s != GCONV_OK) {
        fprintf(stderr, "invalid problem: %s\n", why);
        return 2;
    }
    if (!ex_have_gpu())
        return 1;
    if (!ex_supports[ti](&p, K1, why, sizeof why)) {
        fprintf(stderr, "not supported: %s\n", why);
        return 1;
    }

    {
        size_t es = gconv_dtype_size(t);
        const int GK = p.G * p.K;
        int64_t n_in = gconv_in_elems(&p), n_w0 = gconv_wei_elems(&p), n_w1 = (int64_t)K1 * GK,
                n_out = gconv_fused_fwd_out_elems(&p, K1);
        void *d_in = ex_dev_alloc((size_t)n_in * es), *d_w0 = ex_dev_alloc((size_t)n_w0 * es);
        void *d_w1 = ex_dev_alloc((size_t)n_w1 * es), *d_b0 = ex_dev_alloc((size_t)GK * es);
        void *d_b1 = ex_dev_alloc((size_t)K1 * es), *d_out = ex_dev_alloc((size_t)n_out * es);
        double flops = gconv_flops(&p) + 2.0 * (double)gconv_out_spatial(&p) * p.N * K1 * GK;
        double bytes = (double)(n_in + n_w0 + n_w1 + GK + K1 + n_out) * (double)es;
        gconv_fused_fwd_args a;
        hipStream_t stream;
        int failed = 0;

        EX_CHECK(hipStreamCreate(&stream));
        ex_dev_fill(d_in, n_in, t, 1, init);
        ex_dev_fill(d_w0, n_w0, t, 2, init);
        ex_dev_fill(d_w1, n_w1, t, 3, init);
        ex_dev_fill(d_b0, GK, t, 4, init);
        ex_dev_fill(d_b1, K1, t, 5, init);
        EX_CHECK(hipMemset(d_out, 0xFF, (size_t)n_out * es)); /* NaN: unwritten outputs show */
        EX_CHECK(hipDeviceSynchronize());

        memset(&a, 0, sizeof a);
        a.in = d_in, a.w0 = d_w0, a.b0 = d_b0, a.act0 = gconv_relu6();
        a.w1 = d_w1, a.b1 = d_b1, a.out = d_out;
        a.why = why, a.why_len = sizeof why;
        s = ex_runs[ti](&p, K1, &a, stream);
        if (s != GCONV_OK) {
            fprintf(stderr, "launch refused: %s\n", why);
            return 1;
        }
        EX_CHECK(hipGetLastError());
        EX_CHECK(hipStreamSynchronize(stream));

        if (verify) {
            void *h_in = ex_host_alloc((size_t)n_in * es), *h_w0 = ex_host_alloc((size_t)n_w0 * es);
            void *h_w1 = ex_host_alloc((size_t)n_w1 * es), *h_b0 = ex_host_alloc((size_t)GK * es);
            void *h_b1 = ex_host_alloc((size_t)K1 * es), *h_out = ex_host_alloc((size_t)n_out * es);
            float *ref = (float *)ex_host_alloc((size_t)n_out * sizeof(float));
            int sp[3];
            double m = init == EX_INIT_INT ? 5.0 : 1.0;
            double L1 = (double)p.C * gconv_filter_taps(&p);
            EX_CHECK(hipMemcpy(h_in, d_in, (size_t)n_in * es, hipMemcpyDeviceToHost));
            EX_CHECK(hipMemcpy(h_w0, d_w0, (size_t)n_w0 * es, hipMemcpyDeviceToHost));
            EX_CHECK(hipMemcpy(h_w1, d_w1, (size_t)n_w1 * es, hipMemcpyDeviceToHost));
            EX_CHECK(hipMemcpy(h_b0, d_b0, (size_t)GK * es, hipMemcpyDeviceToHost));
            EX_CHECK(hipMemcpy(h_b1, d_b1, (size_t)K1 * es, hipMemcpyDeviceToHost));
            EX_CHECK(hipMemcpy(h_out, d_out, (size_t)n_out * es, hipMemcpyDeviceToHost));
            printf("verify: CPU reference, %.3g multiply-adds (about 1e8 per second)...\n",
                   flops / 2);
            fflush(stdout);
            s = gconv_ref_fwd_fwd(&p, K1, t, h_in, h_w0, h_b0, gconv_relu6(), h_w1, h_b1, ref,
                                  GCONV_F32, NULL);
            if (s != GCONV_OK) {
                fprintf(stderr, "the reference refused: %s\n", gconv_status_string(s));
                return 1;
            }
            gconv_out_sizes(&p, sp);
            /* the intermediate is clamped to [0, 6] (ReLU6) and rounded to the type on chip:
             * the scale is |w1| * 6 per term; ex_compare's accumulation model with L = G*K
             * covers fp32, the intermediate's rounding adds half an ulp of 6 per term */
            failed = ex_compare(t, h_out, ref, gconv_fused_fwd_out_strides(&p, K1), 1, p.N, K1, sp,
                                (int64_t)(GK + L1), 6.0 * m * m * (1.0 + (t == GCONV_F32 ? 0.0 :
                                (t == GCONV_F16 ? 64.0 : 512.0) * sqrt((double)GK)))) != 0;
            printf("verify: %s\n", failed ? "FAIL" : "PASS");
            free(h_in), free(h_w0), free(h_w1), free(h_b0), free(h_b1), free(h_out), free(ref);
        }
        if (do_time) {
            enum { WARMUP = 3, TRIALS = 11 };
            float ms[TRIALS], first = 0, med;
            int iters, r;
            hipEvent_t e0, e1;
            EX_CHECK(hipEventCreate(&e0));
            EX_CHECK(hipEventCreate(&e1));
            for (r = 0; r < WARMUP; r++)
                ex_runs[ti](&p, K1, &a, stream);
            /* one timed launch to choose how many back-to-back launches make a trial of
             * about 20 ms (launch gaps amortised, trials long enough for event resolution) */
            EX_CHECK(hipEventRecord(e0, stream));
            ex_runs[ti](&p, K1, &a, stream);
            EX_CHECK(hipEventRecord(e1, stream));
            EX_CHECK(hipEventSynchronize(e1));
            EX_CHECK(hipEventElapsedTime(&first, e0, e1));
            iters = first > 0 ? (int)(20.0f / first) : 100;
            iters = iters < 1 ? 1 : iters > 1000 ? 1000 : iters;
            for (r = 0; r < TRIALS; r++) {
                int k;
                EX_CHECK(hipEventRecord(e0, stream));
                for (k = 0; k < iters; k++)
                    ex_runs[ti](&p, K1, &a, stream);
                EX_CHECK(hipEventRecord(e1, stream));
                EX_CHECK(hipEventSynchronize(e1));
                EX_CHECK(hipEventElapsedTime(&ms[r], e0, e1));
                ms[r] /= (float)iters;
            }
            EX_CHECK(hipGetLastError());
            med = ex_median(ms, TRIALS);
            printf("time: %.4f ms (median of %d trials x %d launches), %.2f TFLOP/s, %.1f GB/s\n",
                   (double)med, TRIALS, iters, flops / ((double)med * 1e-3) / 1e12,
                   bytes / ((double)med * 1e-3) / 1e9);
            EX_CHECK(hipEventDestroy(e0));
            EX_CHECK(hipEventDestroy(e1));
        }

        EX_CHECK(hipStreamDestroy(stream));
        EX_CHECK(hipFree(d_in));
        EX_CHECK(hipFree(d_w0));
        EX_CHECK(hipFree(d_w1));
        EX_CHECK(hipFree(d_b0));
        EX_CHECK(hipFree(d_b1));
        EX_CHECK(hipFree(d_out));
        return failed ? 1 : 0;
    }
}
