/* examples/grouped_conv_bwd_weight.hip: run, verify and time one grouped-convolution
 * backward-weight pass, d_wei = conv_bwd_weight(in, d_out) (gconv/bwd_weight.h).
 *
 * Arguments, in the order of Composable Kernel's grouped convolution examples:
 *
 *   grouped_conv_bwd_weight [verify init time [ndim G N K C filter... input... strides...
 *                            dilations... left-pads... right-pads... [type [layout [split_k
 *                            [det [algo]]]]]]]
 *
 *   verify   0 or 1: compare every weight-gradient element with the CPU reference
 *            (gconv_ref_bwd_weight of gconv/reference.h)
 *   init     0: leave the buffers as allocated, 1: integers in [-5, 5), 2: decimals in [-1, 1)
 *   time     0 or 1: time the launch (device events, warm-up, median of trials)
 *   shape    ndim (1, 2 or 3), G, N, K, C (per group), then ndim values each for the filter,
 *            the input, strides, dilations, left pads and right pads, outermost axis first;
 *            for 2D:  2 G N K C Y X Hi Wi Sy Sx Dy Dx LPy LPx RPy RPx
 *   type     fp32 | fp16 | bf16 | bf16-fp32 (bf16 inputs, fp32 weight gradient); default fp16
 *   layout   nhwgc (NHWGC/GKYXC/NHWGK, the default) | gnhwc (GNHWC/GKYXC/GNHWK) |
 *            ngchw (NGCHW/GKYXC/NGKHW) | ngchw-gkcyx (NGCHW/GKCYX/NGKHW); the names stand for
 *            their 1D and 3D members too
 *   split_k  0 (automatic, the default) or the number of splits of N * output pixels
 *   det      0 (fast: fp32 atomics, the default) or 1 (deterministic two-stage reduction)
 *   algo     0 automatic (default) | 1 implicit GEMM | 2 direct kernels (NHWGC only)
 *
 * With no arguments: verify 1, init 1, time 1 on the default problem
 *   2 32 4 32 32 3 3 28 28 1 1 1 1 1 1 1 1   (G 32, N 4, K = C = 32 per group, 28x28, 3x3)
 *
 * Examples:
 *   depthwise 3x3, 144 channels, batch 64, 56x56, fp16 (the direct depthwise kernel):
 *     grouped_conv_bwd_weight 1 2 1 2 144 64 1 1 3 3 56 56 1 1 1 1 1 1 1 1 fp16 nhwgc
 *   ResNeXt 32x4d, deterministic, timing only:
 *     grouped_conv_bwd_weight 0 2 1 2 32 64 4 4 3 3 56 56 1 1 1 1 1 1 1 1 fp16 nhwgc 0 1
 *   1D and 3D:
 *     grouped_conv_bwd_weight 1 1 1 1 4 2 16 8 5 100 2 1 2 2 fp32 ngchw
 *     grouped_conv_bwd_weight 1 1 1 3 2 2 8 8 3 3 3 8 12 12 1 1 1 1 1 1 1 1 1 1 1 1 bf16 gnhwc
 *
 * Prints the problem, PASS/FAIL of the verification, the median time per launch, TFLOP/s
 * (2 * G*N*K*C*out*taps flops) and GB/s (input + output gradient + weight gradient bytes).
 * Exit status: 0 on success, 1 on a failed verification or a runtime error or no GPU, 2 on bad
 * arguments.
 *
 * Build: nvcc -x cu -arch=sm_90 -O2 -I. examples/grouped_conv_bwd_weight.hip -o ... -lm
 *        hipcc -x hip --offload-arch=gfx90a -O2 -I. examples/grouped_conv_bwd_weight.hip -o ... -lm
 */
#include "common.h"

#include "../gconv/bwd_weight.h"
#include "../gconv/reference.h"

/* One instantiation per data type and layout family: the program picks one at run time. */
GCONV_BWD_WEIGHT(ex_f32_nhwgc, GCONV_F32, GCONV_NHWGC, GCONV_GKYXC)
GCONV_BWD_WEIGHT(ex_f32_gnhwc, GCONV_F32, GCONV_GNHWC, GCONV_GKYXC)
GCONV_BWD_WEIGHT(ex_f32_ngchw, GCONV_F32, GCONV_NGCHW, GCONV_GKYXC)
GCONV_BWD_WEIGHT(ex_f32_ngchw_kcyx, GCONV_F32, GCONV_NGCHW, GCONV_GKCYX)
GCONV_BWD_WEIGHT(ex_f16_nhwgc, GCONV_F16, GCONV_NHWGC, GCONV_GKYXC)
GCONV_BWD_WEIGHT(ex_f16_gnhwc, GCONV_F16, GCONV_GNHWC, GCONV_GKYXC)
GCONV_BWD_WEIGHT(ex_f16_ngchw, GCONV_F16, GCONV_NGCHW, GCONV_GKYXC)
GCONV_BWD_WEIGHT(ex_f16_ngchw_kcyx, GCONV_F16, GCONV_NGCHW, GCONV_GKCYX)
GCONV_BWD_WEIGHT(ex_bf16_nhwgc, GCONV_BF16, GCONV_NHWGC, GCONV_GKYXC)
GCONV_BWD_WEIGHT(ex_bf16_gnhwc, GCONV_BF16, GCONV_GNHWC, GCONV_GKYXC)
GCONV_BWD_WEIGHT(ex_bf16_ngchw, GCONV_BF16, GCONV_NGCHW, GCONV_GKYXC)
GCONV_BWD_WEIGHT(ex_bf16_ngchw_kcyx, GCONV_BF16, GCONV_NGCHW, GCONV_GKCYX)
GCONV_BWD_WEIGHT_OUT(ex_bf32_nhwgc, GCONV_BF16, GCONV_F32, GCONV_NHWGC, GCONV_GKYXC)
GCONV_BWD_WEIGHT_OUT(ex_bf32_gnhwc, GCONV_BF16, GCONV_F32, GCONV_GNHWC, GCONV_GKYXC)
GCONV_BWD_WEIGHT_OUT(ex_bf32_ngchw, GCONV_BF16, GCONV_F32, GCONV_NGCHW, GCONV_GKYXC)
GCONV_BWD_WEIGHT_OUT(ex_bf32_ngchw_kcyx, GCONV_BF16, GCONV_F32, GCONV_NGCHW, GCONV_GKCYX)

typedef gconv_status (*ex_bww_fn)(const gconv_problem *, const gconv_bwd_weight_args *,
                                  hipStream_t);
typedef size_t (*ex_ws_fn)(const gconv_problem *, const gconv_bwd_weight_args *);
typedef int (*ex_supports_fn)(const gconv_problem *, char *, size_t);

typedef struct ex_variant {
    ex_bww_fn run;
    ex_ws_fn workspace_size;
    ex_supports_fn supports;
} ex_variant;

#define EX_VARIANT(name) {name, name##_workspace_size, name##_supports}

/* [type: fp32, fp16, bf16, bf16-fp32][layout: nhwgc, gnhwc, ngchw, ngchw-gkcyx] */
static const ex_variant ex_variants[4][4] = {
    {EX_VARIANT(ex_f32_nhwgc), EX_VARIANT(ex_f32_gnhwc), EX_VARIANT(ex_f32_ngchw),
     EX_VARIANT(ex_f32_ngchw_kcyx)},
    {EX_VARIANT(ex_f16_nhwgc), EX_VARIANT(ex_f16_gnhwc), EX_VARIANT(ex_f16_ngchw),
     EX_VARIANT(ex_f16_ngchw_kcyx)},
    {EX_VARIANT(ex_bf16_nhwgc), EX_VARIANT(ex_bf16_gnhwc), EX_VARIANT(ex_bf16_ngchw),
     EX_VARIANT(ex_bf16_ngchw_kcyx)},
    {EX_VARIANT(ex_bf32_nhwgc), EX_VARIANT(ex_bf32_gnhwc), EX_VARIANT(ex_bf32_ngchw),
     EX_VARIANT(ex_bf32_ngchw_kcyx)},
};

static const char *const ex_type_names[4] = {"fp32", "fp16", "bf16", "bf16-fp32"};
static const gconv_dtype ex_types[4] = {GCONV_F32, GCONV_F16, GCONV_BF16, GCONV_BF16};
static const gconv_dtype ex_out_types[4] = {GCONV_F32, GCONV_F16, GCONV_BF16, GCONV_F32};
static const char *const ex_layout_names[4] = {"nhwgc", "gnhwc", "ngchw", "ngchw-gkcyx"};
static const gconv_layout ex_act_families[4] = {GCONV_NHWGC, GCONV_GNHWC, GCONV_NGCHW,
                                                GCONV_NGCHW};
static const gconv_layout ex_wei_families[4] = {GCONV_GKYXC, GCONV_GKYXC, GCONV_GKYXC,
                                                GCONV_GKCYX};

static void ex_usage(const char *prog)
{
    fprintf(stderr,
            "usage: %s [verify init time [ndim G N K C filter... input... strides... "
            "dilations... left-pads... right-pads... [type [layout [split_k [det [algo]]]]]]]\n"
            "  verify  0|1    compare with the CPU reference\n"
            "  init    0|1|2  none | integers in [-5,5) | decimals in [-1,1)\n"
            "  time    0|1    time the launch\n"
            "  ndim 1|2|3, then G N K C, then ndim values each for filter, input, strides,\n"
            "  dilations, left pads, right pads (outermost axis first), e.g. for 2D:\n"
            "    2 G N K C Y X Hi Wi Sy Sx Dy Dx LPy LPx RPy RPx\n"
            "  type    fp32|fp16|bf16|bf16-fp32 (default fp16)\n"
            "  layout  nhwgc|gnhwc|ngchw|ngchw-gkcyx (default nhwgc)\n"
            "  split_k 0 (automatic) | n (splits of N * output pixels)\n"
            "  det     0 (fast, atomics) | 1 (deterministic)\n"
            "  algo    0 (automatic) | 1 (implicit GEMM) | 2 (direct, NHWGC only)\n"
            "  no arguments: 1 1 1 2 32 4 32 32 3 3 28 28 1 1 1 1 1 1 1 1 fp16 nhwgc\n",
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
    int verify = 1, init = EX_INIT_INT, do_time = 1, ti = 1, li = 0, split_k = 0, det = 0, algo = 0;
    int ndim = 2, G = 32, N = 4, K = 32, C = 32;
    int f[3] = {3, 3, 1}, in[3] = {28, 28, 1}, st[3] = {1, 1, 1}, dl[3] = {1, 1, 1};
    int lp[3] = {1, 1, 0}, rp[3] = {1, 1, 0};
    int i, ai, ok = 1;
    gconv_problem p;
    gconv_dtype t;
    const ex_variant *v;
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
        if (ok && argc < ai + 4 + 6 * ndim) {
            fprintf(stderr, "%s: a %dD shape needs %d numbers after ndim, got %d\n", argv[0],
                    ndim, 4 + 6 * ndim, argc - ai);
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
        }
        if (ok && ai < argc && (ti = ex_lookup(argv[ai++], ex_type_names, 4)) < 0) {
            fprintf(stderr, "%s: unknown type \"%s\"\n", argv[0], argv[ai - 1]);
            ok = 0;
        }
        if (ok && ai < argc && (li = ex_lookup(argv[ai++], ex_layout_names, 4)) < 0) {
            fprintf(stderr, "%s: unknown layout \"%s\"\n", argv[0], argv[ai - 1]);
            ok = 0;
        }
        if (ok && ai < argc)
            ok &= ex_parse_int(argv[ai++], 0, GCONV_BWD_WEIGHT_MAX_SPLIT, &split_k);
        if (ok && ai < argc)
            ok &= ex_parse_int(argv[ai++], 0, 1, &det);
        if (ok && ai < argc)
            ok &= ex_parse_int(argv[ai++], 0, 2, &algo);
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
    gconv_problem_set_layouts(&p, ex_act_families[li], ex_wei_families[li]);
    t = ex_types[ti];
    v = &ex_variants[ti][li];
    printf("problem: %dD G %d N %d K %d C %d, input %dx%dx%d, filter %dx%dx%d, stride %dx%dx%d, "
           "dilation %dx%dx%d, pads %dx%dx%d / %dx%dx%d (D x H x W), output %dx%dx%d\n",
           p.ndim, p.G, p.N, p.K, p.C, p.in[0], p.in[1], p.in[2], p.filter[0], p.filter[1],
           p.filter[2], p.stride[0], p.stride[1], p.stride[2], p.dilation[0], p.dilation[1],
           p.dilation[2], p.pad_lo[0], p.pad_lo[1], p.pad_lo[2], p.pad_hi[0], p.pad_hi[1],
           p.pad_hi[2], gconv_out_len(&p, 0), gconv_out_len(&p, 1), gconv_out_len(&p, 2));
    printf("type %s, layouts %s / %s / %s, verify %d, init %d, time %d, split_k %d%s, %s mode, "
           "algo %d\n",
           ex_type_names[ti], gconv_layout_name(gconv_in_layout(&p)),
           gconv_layout_name(gconv_wei_layout(&p)), gconv_layout_name(gconv_out_layout(&p)),
           verify, init, do_time, split_k, split_k ? "" : " (automatic)",
           det ? "deterministic" : "fast", algo);
    s = gconv_problem_check(&p, why, sizeof why);
    if (s != GCONV_OK) {
        fprintf(stderr, "invalid problem: %s\n", why);
        return 2;
    }
    if (!ex_have_gpu())
        return 1;
    if (!v->supports(&p, why, sizeof why)) {
        fprintf(stderr, "not supported: %s\n", why);
        return 1;
    }

    {
        const gconv_dtype tw = ex_out_types[ti];
        size_t es = gconv_dtype_size(t), ew = gconv_dtype_size(tw);
        int64_t n_in = gconv_in_elems(&p), n_wei = gconv_wei_elems(&p),
                n_out = gconv_out_elems(&p);
        gconv_bwd_weight_args a;
        size_t ws_size;
        void *d_in = ex_dev_alloc((size_t)n_in * es), *d_wei = ex_dev_alloc((size_t)n_wei * ew);
        void *d_out = ex_dev_alloc((size_t)n_out * es), *ws = NULL;
        double flops = gconv_flops(&p);
        double bytes = (double)(n_in + n_out) * (double)es + (double)n_wei * (double)ew;
        hipStream_t stream;
        int failed = 0;

        memset(&a, 0, sizeof a);
        a.in = d_in, a.d_out = d_out, a.d_wei = d_wei;
        a.alpha = 1.0f, a.beta = 0.0f; /* plain overwrite */
        a.split_k = split_k, a.deterministic = det, a.algo = algo;
        ws_size = v->workspace_size(&p, &a);
        if (ws_size)
            ws = ex_dev_alloc(ws_size);
        printf("workspace: %zu bytes\n", ws_size);
        EX_CHECK(hipStreamCreate(&stream));
        ex_dev_fill(d_in, n_in, t, 1, init);
        ex_dev_fill(d_out, n_out, t, 2, init);
        EX_CHECK(hipMemset(d_wei, 0xFF, (size_t)n_wei * ew)); /* NaN: unwritten outputs show */
        EX_CHECK(hipDeviceSynchronize());

        a.workspace = ws, a.workspace_size = ws_size;
        a.why = why, a.why_len = sizeof why;
        s = v->run(&p, &a, stream);
        if (s != GCONV_OK) {
            fprintf(stderr, "launch refused: %s\n", why);
            return 1;
        }
        EX_CHECK(hipGetLastError());
        EX_CHECK(hipStreamSynchronize(stream));

        if (verify) {
            void *h_in = ex_host_alloc((size_t)n_in * es);
            void *h_out = ex_host_alloc((size_t)n_out * es);
            void *h_wei = ex_host_alloc((size_t)n_wei * ew);
            float *ref = (float *)ex_host_alloc((size_t)n_wei * sizeof(float));
            const gconv_wei_strides sw = gconv_weight_strides(&p);
            gconv_act_strides as;
            double m = init == EX_INIT_INT ? 5.0 : 1.0;
            EX_CHECK(hipMemcpy(h_in, d_in, (size_t)n_in * es, hipMemcpyDeviceToHost));
            EX_CHECK(hipMemcpy(h_out, d_out, (size_t)n_out * es, hipMemcpyDeviceToHost));
            EX_CHECK(hipMemcpy(h_wei, d_wei, (size_t)n_wei * ew, hipMemcpyDeviceToHost));
            printf("verify: CPU reference, %.3g multiply-adds (about 1e8 per second)...\n",
                   flops / 2);
            fflush(stdout);
            s = gconv_ref_bwd_weight(&p, t, h_in, h_out, ref, GCONV_F32, 1.0f, 0.0f);
            if (s != GCONV_OK) {
                fprintf(stderr, "the reference refused: %s\n", gconv_status_string(s));
                return 1;
            }
            /* the weight tensor seen as an activation-like tensor: groups g, "images" k,
             * channels c, spatial = filter taps (the report's n is k, its k is c) */
            as.g = sw.g, as.n = sw.k, as.c = sw.c;
            as.s[0] = sw.s[0], as.s[1] = sw.s[1], as.s[2] = sw.s[2];
            failed = ex_compare(tw, h_wei, ref, as, p.G, p.K, p.C, p.filter,
                                (int64_t)p.N * gconv_out_spatial(&p), m * m) != 0;
            printf("verify: %s\n", failed ? "FAIL" : "PASS");
            free(h_in), free(h_wei), free(h_out), free(ref);
        }

        if (do_time) {
            enum { WARMUP = 3, TRIALS = 11 };
            float ms[TRIALS], first = 0, med;
            int iters, r;
            hipEvent_t e0, e1;
            EX_CHECK(hipEventCreate(&e0));
            EX_CHECK(hipEventCreate(&e1));
            for (r = 0; r < WARMUP; r++)
                v->run(&p, &a, stream);
            /* one timed launch to choose how many back-to-back launches make a trial of
             * about 20 ms (launch gaps amortised, trials long enough for event resolution) */
            EX_CHECK(hipEventRecord(e0, stream));
            v->run(&p, &a, stream);
            EX_CHECK(hipEventRecord(e1, stream));
            EX_CHECK(hipEventSynchronize(e1));
            EX_CHECK(hipEventElapsedTime(&first, e0, e1));
            iters = first > 0 ? (int)(20.0f / first) : 100;
            iters = iters < 1 ? 1 : iters > 1000 ? 1000 : iters;
            for (r = 0; r < TRIALS; r++) {
                int k;
                EX_CHECK(hipEventRecord(e0, stream));
                for (k = 0; k < iters; k++)
                    v->run(&p, &a, stream);
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
        EX_CHECK(hipFree(d_wei));
        EX_CHECK(hipFree(d_out));
        if (ws)
            EX_CHECK(hipFree(ws));
        return failed ? 1 : 0;
    }
}
