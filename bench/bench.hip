/* bench/bench.hip: gconv against the vendor library, with a floor for every problem.
 *
 * What it does. For each problem of a suite (or one problem given on the command line) it
 * fills device buffers with random data (never zeros), checks gconv and the vendor library
 * (cuDNN on NVIDIA builds) against a naive GPU reference that accumulates in double, checks
 * gconv against cuDNN, then times both in the same process on the same data and prints
 *     time (us), floor (us), floor/time, speedup of gconv over the vendor library,
 * with geometric means, and writes every number to a CSV file. bench/NOTES.md has the method.
 *
 * Usage (tools/bench-gpu builds it and runs every suite):
 *     bench [--op fwd] [--type f16|bf16|f32] [--tf32] --suite FILE [--suite FILE ...]
 *           [--csv PATH] [--trials 7] [--min-ms 1] [--launch graph|stream]
 *           [--no-gconv] [--no-vendor] [--no-ref] [--rotate-mb MB]
 *           [--copy-gbs X] [--matrix-tflops X]        skip the probes, use these ceilings
 *     bench --profile [--op fwd] [--impl gconv|vendor] [--iters 20] [--type ...] SHAPE
 * SHAPE is the examples' (CK's) order, channels per group:
 *     2D: 2 G N K C Y X Hi Wi Sy Sx Dy Dx LPy LPx RPy RPx
 *     1D: 1 G N K C X Wi Sx Dx LPx RPx
 *     3D: 3 G N K C Z Y X Di Hi Wi Sz Sy Sx Dz Dy Dx LPz LPy LPx RPz RPy RPx
 * Profiler mode runs one implementation a fixed number of times with nothing else in between
 * (no cuDNN search when --impl gconv), for ncu:  ncu -k regex:gconv bench --profile ...
 *
 * Suite files: one problem per line, `N G Ctotal Ktotal H W Y X stride pad [dilation]`,
 * channels counted over all groups, '#' starts a comment.
 *
 * Operations. Everything per operation sits in one bench_op table entry (its tensors, its
 * reference kernel, its vendor setup and launch, its gconv launch); the driver around it
 * (data, rotation, checks, timing, floor, table, CSV) is shared. "fwd" is below; the other
 * operations live in bench/op_<op>.inc (BENCH_NO_<OP> leaves one out), with suites
 * bench/suites/<op>_*.txt.
 *
 * Build: nvcc -std=c++17 -O3 -arch=sm_90 -x cu -I. bench/bench.hip -lcudnn -lcublas (see
 * tools/bench-gpu). gconv/fwd.h is used when it exists (define BENCH_NO_GCONV to leave it
 * out, BENCH_F16_ONLY to instantiate fp16 alone); without it the program measures the vendor
 * library alone. Under hipcc there is no
 * vendor library yet (MIOpen would be the counterpart) and the ceilings must be given.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gconv/device.h"
#include "gconv/layout.h"
#include "gconv/platform.h"
#include "gconv/problem.h"

#if !defined(BENCH_NO_GCONV) && defined(__has_include)
#if __has_include("gconv/fwd.h")
#include "gconv/fwd.h"
#define BENCH_HAVE_GCONV_FWD 1
#endif
#endif
#ifndef BENCH_HAVE_GCONV_FWD
#define BENCH_HAVE_GCONV_FWD 0
#endif

#if defined(GCONV_PLATFORM_CUDA)
#include <cublas_v2.h>
#include <cudnn.h>
#define BENCH_HAVE_CUDNN 1
/* HIP names the benchmark uses beyond gconv/platform.h's list (graphs, versions). */
typedef cudaGraph_t hipGraph_t;
typedef cudaGraphExec_t hipGraphExec_t;
#define hipStreamCaptureModeRelaxed cudaStreamCaptureModeRelaxed
#define hipStreamBeginCapture cudaStreamBeginCapture
#define hipStreamEndCapture cudaStreamEndCapture
#define hipGraphInstantiateWithFlags cudaGraphInstantiateWithFlags
#define hipGraphLaunch cudaGraphLaunch
#define hipGraphExecDestroy cudaGraphExecDestroy
#define hipGraphDestroy cudaGraphDestroy
#define hipDriverGetVersion cudaDriverGetVersion
#define hipRuntimeGetVersion cudaRuntimeGetVersion
#else
#define BENCH_HAVE_CUDNN 0
#endif

/* ---- error checks: print where, make the calling function fail ----------------------------- */

#define HIPCHK(call)                                                                             \
    do {                                                                                         \
        hipError_t e_ = (call);                                                                  \
        if (e_ != hipSuccess) {                                                                  \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, hipGetErrorString(e_)); \
            return -1;                                                                           \
        }                                                                                        \
    } while (0)

#if BENCH_HAVE_CUDNN
#define DNNCHK(call)                                                                             \
    do {                                                                                         \
        cudnnStatus_t s_ = (call);                                                               \
        if (s_ != CUDNN_STATUS_SUCCESS) {                                                        \
            snprintf(why, len, "%s: %s", #call, cudnnGetErrorString(s_));                        \
            return -1;                                                                           \
        }                                                                                        \
    } while (0)
#endif

/* ---- options and global state -------------------------------------------------------------- */

typedef struct bench_opts {
    const char *op;
    gconv_dtype t;
    int tf32;
    int trials;
    double min_ms;
    int use_graph;
    int no_gconv, no_vendor, no_ref;
    double rotate_mb; /* rotate input sets until one cycle touches this many MB */
    double copy_gbs, matrix_tflops;
    const char *csv;
    int profile, iters;
    const char *impl;
    int k1; /* --k1: fused_fwd's pointwise channels in profiler mode */
} bench_opts;

static bench_opts g_opt;
static hipStream_t g_stream;
static hipDeviceProp_t g_prop;
#if BENCH_HAVE_CUDNN
static cudnnHandle_t g_dnn;
#endif

/* ---- device helpers: random fill, naive reference ------------------------------------------ */

static __device__ __forceinline__ void bench_store(gconv_dtype t, void *p, int64_t i, float v)
{
    if (t == GCONV_F16)
        ((gconv_f16 *)p)[i] = gconv_impl_from_float_f16(v);
    else if (t == GCONV_BF16)
        ((gconv_bf16 *)p)[i] = gconv_impl_from_float_bf16(v);
    else
        ((float *)p)[i] = v;
}

/* Uniform values in [-1, 1) from a counter hash (splitmix64): each (seed, index) its own. */
__global__ void bench_fill_kernel(void *p, gconv_dtype t, int64_t n, uint64_t seed)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (; i < n; i += step) {
        uint64_t z = seed + (uint64_t)i * 0x9E3779B97F4A7C15ull;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        bench_store(t, p, i, (float)(z >> 40) * (2.0f / 16777216.0f) - 1.0f);
    }
}

static int bench_fill(void *p, gconv_dtype t, int64_t n, uint64_t seed)
{
    hipLaunchKernelGGL(bench_fill_kernel, dim3(1024), dim3(256), 0, g_stream, p, t, n,
                       seed * 0xD1B54A32D192ED03ull + 12345u);
    HIPCHK(hipGetLastError());
    return 0;
}

/* Forward reference: one thread per output element, double accumulation, any layouts (the
 * strides come from gconv/layout.h). Output index i runs k fastest, then g, w, h, d, n, so
 * neighbouring threads share their input reads. Writes float at the output's own offsets. */
__global__ void bench_ref_fwd_kernel(gconv_problem p, gconv_dtype t, const void *in,
                                     const void *wei, float *out, gconv_act_strides si,
                                     gconv_act_strides so, gconv_wei_strides sw, int o0, int o1,
                                     int o2)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    int64_t total = (int64_t)p.N * o0 * o1 * o2 * p.G * p.K;
    int k, g, ow, oh, od, n, c, z, y, x;
    double acc = 0.0;
    if (i >= total)
        return;
    k = (int)(i % p.K), i /= p.K;
    g = (int)(i % p.G), i /= p.G;
    ow = (int)(i % o2), i /= o2;
    oh = (int)(i % o1), i /= o1;
    od = (int)(i % o0), i /= o0;
    n = (int)i;
    for (z = 0; z < p.filter[0]; z++) {
        int id = od * p.stride[0] - p.pad_lo[0] + z * p.dilation[0];
        if (id < 0 || id >= p.in[0])
            continue;
        for (y = 0; y < p.filter[1]; y++) {
            int ih = oh * p.stride[1] - p.pad_lo[1] + y * p.dilation[1];
            if (ih < 0 || ih >= p.in[1])
                continue;
            for (x = 0; x < p.filter[2]; x++) {
                int iw = ow * p.stride[2] - p.pad_lo[2] + x * p.dilation[2];
                if (iw < 0 || iw >= p.in[2])
                    continue;
                for (c = 0; c < p.C; c++)
                    acc += (double)gconv_impl_dev_load(t, in, gconv_act_offset(&si, g, n, c, id, ih, iw)) *
                           (double)gconv_impl_dev_load(t, wei, gconv_wei_offset(&sw, g, k, c, z, y, x));
            }
        }
    }
    out[gconv_act_offset(&so, g, n, k, od, oh, ow)] = (float)acc;
}

/* ---- the benchmark case and the operation table -------------------------------------------- */

#define BENCH_MAX_SETS 256
#define BENCH_MAX_T 6 /* operands + the output */

typedef struct bench_case bench_case;
typedef int (*bench_launch_fn)(bench_case *c, int set, hipStream_t s);

typedef struct bench_op {
    const char *name;
    int nin;                                              /* operands read; tensor nin is the output */
    int64_t (*elems)(const bench_case *c, int tensor);   /* element count of tensor 0..nin */
    int (*ref)(bench_case *c, float *out);                /* reference of set 0 into out (floats) */
    int (*vendor_prepare)(bench_case *c, char *why, size_t len);
    bench_launch_fn vendor_launch;
    void (*vendor_release)(bench_case *c);
    int (*gconv_prepare)(bench_case *c, char *why, size_t len);
    bench_launch_fn gconv_launch;
    double (*flops)(const bench_case *c); /* NULL: gconv_flops(&c->p) */
} bench_op;

struct bench_case {
    const bench_op *op;
    gconv_problem p;
    int k1; /* fused_fwd: channels of the pointwise conv (suite token k1=N, --k1 N) */
    gconv_dtype t;
    int nsets;
    int64_t elems[BENCH_MAX_T];
    void *buf[BENCH_MAX_SETS][BENCH_MAX_T];
    void *gws;
    size_t gws_size;
    void *vws;
    size_t vws_size;
    char vendor_algo[64];
    void *vendor; /* the operation's vendor descriptors */
};

static double bench_case_bytes(const bench_case *c)
{
    double b = 0;
    int i;
    for (i = 0; i <= c->op->nin; i++)
        b += (double)c->elems[i] * (double)gconv_dtype_size(c->t);
    return b;
}

/* ---- fwd ---------------------------------------------------------------------------------- */

static int64_t fwd_elems(const bench_case *c, int tensor)
{
    const gconv_problem *p = &c->p;
    return tensor == 0 ? gconv_in_elems(p) : tensor == 1 ? gconv_wei_elems(p) : gconv_out_elems(p);
}

static int fwd_ref(bench_case *c, float *out)
{
    const gconv_problem *p = &c->p;
    int o0 = gconv_out_len(p, 0), o1 = gconv_out_len(p, 1), o2 = gconv_out_len(p, 2);
    int64_t total = gconv_out_elems(p);
    hipLaunchKernelGGL(bench_ref_fwd_kernel, dim3((unsigned)((total + 255) / 256)), dim3(256), 0,
                       g_stream, *p, c->t, c->buf[0][0], c->buf[0][1], out, gconv_in_strides(p),
                       gconv_out_strides(p), gconv_weight_strides(p), o0, o1, o2);
    HIPCHK(hipGetLastError());
    return 0;
}

#if BENCH_HAVE_CUDNN
typedef struct fwd_dnn {
    cudnnTensorDescriptor_t x, y;
    cudnnFilterDescriptor_t w;
    cudnnConvolutionDescriptor_t conv;
    cudnnConvolutionFwdAlgo_t algo;
} fwd_dnn;

static const char *fwd_algo_name(cudnnConvolutionFwdAlgo_t a)
{
    switch (a) {
    case CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM: return "IMPLICIT_GEMM";
    case CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM: return "IMPLICIT_PRECOMP_GEMM";
    case CUDNN_CONVOLUTION_FWD_ALGO_GEMM: return "GEMM";
    case CUDNN_CONVOLUTION_FWD_ALGO_DIRECT: return "DIRECT";
    case CUDNN_CONVOLUTION_FWD_ALGO_FFT: return "FFT";
    case CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING: return "FFT_TILING";
    case CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD: return "WINOGRAD";
    case CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED: return "WINOGRAD_NONFUSED";
    default: return "?";
    }
}

static cudnnDataType_t dnn_type(gconv_dtype t)
{
    return t == GCONV_F16 ? CUDNN_DATA_HALF : t == GCONV_BF16 ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_FLOAT;
}

static void fwd_vendor_release(bench_case *c)
{
    fwd_dnn *d = (fwd_dnn *)c->vendor;
    if (!d)
        return;
    if (d->x) cudnnDestroyTensorDescriptor(d->x);
    if (d->y) cudnnDestroyTensorDescriptor(d->y);
    if (d->w) cudnnDestroyFilterDescriptor(d->w);
    if (d->conv) cudnnDestroyConvolutionDescriptor(d->conv);
    free(d);
    c->vendor = NULL;
}

/* NHWC descriptors: cuDNN takes dims in N, C, (D,) H, W order and the format says where C
 * lives. Input N x G*C, filter G*K x C x taps in NHWC = KRSC = GKYXC, output N x G*K. 1D and
 * 2D problems are 4D tensors (the problem's unused slot 0, and slot 1 for 1D, are size 1). */
static int fwd_vendor_prepare(bench_case *c, char *why, size_t len)
{
    const gconv_problem *p = &c->p;
    fwd_dnn *d;
    int nb = p->ndim == 3 ? 5 : 4, ns = nb - 2, first = 3 - ns, i, returned = 0, best = -1;
    int xdim[5], wdim[5], ydim[5], ygot[5], pad[3], str[3], dil[3];
    cudnnDataType_t dt = dnn_type(c->t);
    cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    size_t wsmax = 0, cap = (size_t)4 << 30, fr = 0, tot = 0;
    void *ws = NULL;
    cudnnStatus_t st;

    for (i = 0; i < 3; i++)
        if (p->pad_lo[i] != p->pad_hi[i]) {
            snprintf(why, len, "cuDNN: asymmetric padding");
            return -1;
        }
    if (gconv_in_layout(p) != gconv_layout_for(GCONV_NHWGC, p->ndim) ||
        gconv_wei_layout(p) != gconv_layout_for(GCONV_GKYXC, p->ndim) ||
        gconv_out_layout(p) != gconv_layout_for(GCONV_NHWGC, p->ndim)) {
        snprintf(why, len, "cuDNN: only NHWGC/GKYXC here");
        return -1;
    }
    d = (fwd_dnn *)calloc(1, sizeof *d);
    c->vendor = d;
    xdim[0] = p->N, xdim[1] = p->G * p->C;
    wdim[0] = p->G * p->K, wdim[1] = p->C;
    ydim[0] = p->N, ydim[1] = p->G * p->K;
    for (i = 0; i < ns; i++) {
        xdim[2 + i] = p->in[first + i];
        wdim[2 + i] = p->filter[first + i];
        ydim[2 + i] = gconv_out_len(p, first + i);
        pad[i] = p->pad_lo[first + i];
        str[i] = p->stride[first + i];
        dil[i] = p->dilation[first + i];
    }
    DNNCHK(cudnnCreateTensorDescriptor(&d->x));
    DNNCHK(cudnnCreateTensorDescriptor(&d->y));
    DNNCHK(cudnnCreateFilterDescriptor(&d->w));
    DNNCHK(cudnnCreateConvolutionDescriptor(&d->conv));
    DNNCHK(cudnnSetTensorNdDescriptorEx(d->x, CUDNN_TENSOR_NHWC, dt, nb, xdim));
    DNNCHK(cudnnSetFilterNdDescriptor(d->w, dt, CUDNN_TENSOR_NHWC, nb, wdim));
    DNNCHK(cudnnSetConvolutionNdDescriptor(d->conv, ns, pad, str, dil, CUDNN_CROSS_CORRELATION,
                                           CUDNN_DATA_FLOAT));
    DNNCHK(cudnnSetConvolutionGroupCount(d->conv, p->G));
    DNNCHK(cudnnSetConvolutionMathType(
        d->conv, c->t == GCONV_F32 && !g_opt.tf32 ? CUDNN_FMA_MATH : CUDNN_TENSOR_OP_MATH));
    DNNCHK(cudnnGetConvolutionNdForwardOutputDim(d->conv, d->x, d->w, nb, ygot));
    for (i = 0; i < nb; i++)
        if (ygot[i] != ydim[i]) {
            snprintf(why, len, "cuDNN output dim %d is %d, gconv's %d", i, ygot[i], ydim[i]);
            return -1;
        }
    DNNCHK(cudnnSetTensorNdDescriptorEx(d->y, CUDNN_TENSOR_NHWC, dt, nb, ydim));

    /* workspace for the search: the most any algorithm asks for, within a cap */
    for (i = 0; i < CUDNN_CONVOLUTION_FWD_ALGO_COUNT; i++) {
        size_t s = 0;
        if (cudnnGetConvolutionForwardWorkspaceSize(g_dnn, d->x, d->w, d->conv, d->y,
                                                    (cudnnConvolutionFwdAlgo_t)i, &s) ==
                CUDNN_STATUS_SUCCESS &&
            s > wsmax)
            wsmax = s;
    }
    if (hipMemGetInfo(&fr, &tot) == hipSuccess && fr / 3 < cap)
        cap = fr / 3;
    if (wsmax > cap)
        wsmax = cap;
    if (wsmax && hipMalloc(&ws, wsmax) != hipSuccess) {
        snprintf(why, len, "cannot allocate %zu bytes of search workspace", wsmax);
        return -1;
    }
    st = cudnnFindConvolutionForwardAlgorithmEx(
        g_dnn, d->x, c->buf[0][0], d->w, c->buf[0][1], d->conv, d->y, c->buf[0][2],
        CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &returned, perf, ws, wsmax);
    if (ws)
        hipFree(ws);
    if (st != CUDNN_STATUS_SUCCESS) {
        snprintf(why, len, "cudnnFindConvolutionForwardAlgorithmEx: %s", cudnnGetErrorString(st));
        return -1;
    }
    for (i = 0; i < returned && best < 0; i++)
        if (perf[i].status == CUDNN_STATUS_SUCCESS)
            best = i;
    if (best < 0) {
        snprintf(why, len, "cuDNN: no algorithm ran");
        return -1;
    }
    d->algo = perf[best].algo;
    DNNCHK(cudnnSetConvolutionMathType(d->conv, perf[best].mathType));
    c->vws_size = perf[best].memory;
    if (c->vws_size && hipMalloc(&c->vws, c->vws_size) != hipSuccess) {
        snprintf(why, len, "cannot allocate %zu bytes of cuDNN workspace", c->vws_size);
        return -1;
    }
    snprintf(c->vendor_algo, sizeof c->vendor_algo, "%s%s", fwd_algo_name(d->algo),
             perf[best].mathType == CUDNN_TENSOR_OP_MATH ? "" :
             perf[best].mathType == CUDNN_FMA_MATH ? "/fma" : "/dflt");
    return 0;
}

static int fwd_vendor_launch(bench_case *c, int set, hipStream_t s)
{
    fwd_dnn *d = (fwd_dnn *)c->vendor;
    float one = 1.0f, zero = 0.0f;
    (void)s; /* the handle is bound to g_stream */
    return cudnnConvolutionForward(g_dnn, &one, d->x, c->buf[set][0], d->w, c->buf[set][1],
                                   d->conv, d->algo, c->vws, c->vws_size, &zero, d->y,
                                   c->buf[set][2]) == CUDNN_STATUS_SUCCESS
               ? 0
               : -1;
}
#define FWD_VENDOR_PREPARE fwd_vendor_prepare
#define FWD_VENDOR_LAUNCH fwd_vendor_launch
#define FWD_VENDOR_RELEASE fwd_vendor_release
#else
#define FWD_VENDOR_PREPARE NULL
#define FWD_VENDOR_LAUNCH NULL
#define FWD_VENDOR_RELEASE NULL
#endif

#if BENCH_HAVE_GCONV_FWD
/* fp16 always; fp32 and bf16 unless BENCH_F16_ONLY (compile time) */
GCONV_FWD(bench_fwd_f16, GCONV_F16, GCONV_NHWGC, GCONV_GKYXC)
#ifndef BENCH_F16_ONLY
GCONV_FWD(bench_fwd_f32, GCONV_F32, GCONV_NHWGC, GCONV_GKYXC)
GCONV_FWD(bench_fwd_bf16, GCONV_BF16, GCONV_NHWGC, GCONV_GKYXC)
#endif

typedef struct fwd_gconv_fns {
    int (*supports)(const gconv_problem *p, char *why, size_t len);
    size_t (*workspace_size)(const gconv_problem *p);
    gconv_status (*run)(const gconv_problem *p, const gconv_fwd_args *a, hipStream_t s);
} fwd_gconv_fns;

static fwd_gconv_fns fwd_gconv_for(gconv_dtype t)
{
    fwd_gconv_fns f;
    memset(&f, 0, sizeof f);
    if (t == GCONV_F16)
        f.supports = bench_fwd_f16_supports, f.workspace_size = bench_fwd_f16_workspace_size,
        f.run = bench_fwd_f16;
#ifndef BENCH_F16_ONLY
    else if (t == GCONV_BF16)
        f.supports = bench_fwd_bf16_supports, f.workspace_size = bench_fwd_bf16_workspace_size,
        f.run = bench_fwd_bf16;
    else
        f.supports = bench_fwd_f32_supports, f.workspace_size = bench_fwd_f32_workspace_size,
        f.run = bench_fwd_f32;
#endif
    return f;
}

static int fwd_gconv_prepare(bench_case *c, char *why, size_t len)
{
    fwd_gconv_fns f = fwd_gconv_for(c->t);
    if (!f.run) {
        snprintf(why, len, "%s not built in (BENCH_F16_ONLY)", gconv_dtype_name(c->t));
        return -1;
    }
    if (!f.supports(&c->p, why, len))
        return -1;
    c->gws_size = f.workspace_size(&c->p);
    if (c->gws_size && hipMalloc(&c->gws, c->gws_size) != hipSuccess) {
        snprintf(why, len, "cannot allocate %zu bytes of gconv workspace", c->gws_size);
        return -1;
    }
    return 0;
}

static int fwd_gconv_launch(bench_case *c, int set, hipStream_t s)
{
    fwd_gconv_fns f = fwd_gconv_for(c->t);
    gconv_fwd_args a;
    gconv_status st;
    char why[256];
    memset(&a, 0, sizeof a);
    a.in = c->buf[set][0];
    a.wei = c->buf[set][1];
    a.out = c->buf[set][2];
    a.epi = NULL;
    /* BENCH_ACT=relu6 (environment, for timing only): ReLU6 in the epilogue; the results then
     * differ from cuDNN's and from the reference */
    if (getenv("BENCH_ACT") && !strcmp(getenv("BENCH_ACT"), "relu6")) {
        static gconv_epilogue e;
        e = gconv_epi_scale(1.0f);
        e.act = gconv_relu6();
        a.epi = &e;
    }
    a.workspace = c->gws;
    a.workspace_size = c->gws_size;
    a.allow_tf32 = g_opt.tf32;
    a.why = why;
    a.why_len = sizeof why;
    why[0] = '\0';
    st = f.run(&c->p, &a, s);
    if (st != GCONV_OK) {
        fprintf(stderr, "gconv: %s: %s\n", gconv_status_name(st), why);
        return -1;
    }
    return 0;
}
#define FWD_GCONV_PREPARE fwd_gconv_prepare
#define FWD_GCONV_LAUNCH fwd_gconv_launch
#else
#define FWD_GCONV_PREPARE NULL
#define FWD_GCONV_LAUNCH NULL
#endif

/* The other operations, one file each: each defines BENCH_OPS_<OP> as its table entries
 * (each followed by a comma). */
#ifndef BENCH_NO_BWD_WEIGHT
#include "op_bwd_weight.inc"
#endif
#ifndef BENCH_NO_BWD_DATA
#include "op_bwd_data.inc"
#endif
#ifndef BENCH_NO_FUSED_FWD
#include "op_fused_fwd.inc"
#endif
#ifndef BENCH_OPS_BWD_WEIGHT
#define BENCH_OPS_BWD_WEIGHT
#endif
#ifndef BENCH_OPS_BWD_DATA
#define BENCH_OPS_BWD_DATA
#endif
#ifndef BENCH_OPS_FUSED_FWD
#define BENCH_OPS_FUSED_FWD
#endif

static const bench_op bench_ops[] = {
    {"fwd", 2, fwd_elems, fwd_ref, FWD_VENDOR_PREPARE, FWD_VENDOR_LAUNCH, FWD_VENDOR_RELEASE,
     FWD_GCONV_PREPARE, FWD_GCONV_LAUNCH, NULL},
    BENCH_OPS_BWD_WEIGHT
    BENCH_OPS_BWD_DATA
    BENCH_OPS_FUSED_FWD
};

static const bench_op *bench_find_op(const char *name)
{
    size_t i;
    for (i = 0; i < sizeof bench_ops / sizeof bench_ops[0]; i++)
        if (!strcmp(bench_ops[i].name, name))
            return &bench_ops[i];
    return NULL;
}

/* ---- setup, checks -------------------------------------------------------------------------- */

static void bench_case_free(bench_case *c)
{
    int s, i;
    if (c->op->vendor_release)
        c->op->vendor_release(c);
    for (s = 0; s < BENCH_MAX_SETS; s++)
        for (i = 0; i < BENCH_MAX_T; i++)
            if (c->buf[s][i]) {
                hipFree(c->buf[s][i]);
                c->buf[s][i] = NULL;
            }
    if (c->gws) hipFree(c->gws);
    if (c->vws) hipFree(c->vws);
    c->gws = c->vws = NULL;
}

/* Allocate the data sets: enough that one pass over all of them touches rotate_mb (several
 * times the L2), so back-to-back launches never find their operands in the cache. */
static int bench_case_alloc(bench_case *c, int want_sets)
{
    int s, i, n = c->op->nin;
    double set_bytes;
    size_t fr = 0, tot = 0;
    for (i = 0; i <= n; i++)
        c->elems[i] = c->op->elems(c, i);
    set_bytes = bench_case_bytes(c);
    if (want_sets <= 0) {
        want_sets = (int)ceil(g_opt.rotate_mb * 1e6 / set_bytes);
        if (want_sets < 1) want_sets = 1;
        if (want_sets > BENCH_MAX_SETS) want_sets = BENCH_MAX_SETS;
    }
    if (hipMemGetInfo(&fr, &tot) == hipSuccess) {
        int fit = (int)((double)fr * 0.6 / set_bytes);
        if (fit < 1) {
            fprintf(stderr, "problem needs %.0f MB, %.0f MB free\n", set_bytes / 1e6, fr / 1e6);
            return -1;
        }
        if (want_sets > fit) want_sets = fit;
    }
    c->nsets = want_sets;
    for (s = 0; s < c->nsets; s++)
        for (i = 0; i <= n; i++) {
            size_t bytes = (size_t)c->elems[i] * gconv_dtype_size(c->t);
            HIPCHK(hipMalloc(&c->buf[s][i], bytes));
            if (i < n) {
                if (bench_fill(c->buf[s][i], c->t, c->elems[i], (uint64_t)s * 16 + (uint64_t)i + 1))
                    return -1;
            } else {
                HIPCHK(hipMemsetAsync(c->buf[s][i], 0xff, bytes, g_stream)); /* NaN poison */
            }
        }
    HIPCHK(hipStreamSynchronize(g_stream));
    return 0;
}

/* The output of set 0 as floats on the host (NULL on failure). */
static float *bench_fetch_out(bench_case *c)
{
    int n = c->op->nin;
    int64_t e = c->elems[n], i;
    size_t bytes = (size_t)e * gconv_dtype_size(c->t);
    void *raw = malloc(bytes);
    float *f = (float *)malloc((size_t)e * sizeof(float));
    if (!raw || !f || hipMemcpy(raw, c->buf[0][n], bytes, hipMemcpyDeviceToHost) != hipSuccess) {
        free(raw), free(f);
        return NULL;
    }
    for (i = 0; i < e; i++)
        f[i] = gconv_load_f32(c->t, raw, (size_t)i);
    free(raw);
    return f;
}

/* ||a - b|| / ||b||; non-finite elements of a (unwritten poison, overflow) counted apart. */
static double bench_rel_err(const float *a, const float *b, int64_t n, int64_t *bad)
{
    double num = 0, den = 0;
    int64_t i;
    *bad = 0;
    for (i = 0; i < n; i++) {
        double d;
        if (!isfinite(a[i])) {
            (*bad)++;
            continue;
        }
        d = (double)a[i] - b[i];
        num += d * d;
        den += (double)b[i] * b[i];
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

static double bench_tol(gconv_dtype t)
{
    return t == GCONV_F16 ? 5e-3 : t == GCONV_BF16 ? 3e-2 : g_opt.tf32 ? 5e-3 : 1e-5;
}

static int bench_poison_out(bench_case *c)
{
    int n = c->op->nin;
    HIPCHK(hipMemsetAsync(c->buf[0][n], 0xff, (size_t)c->elems[n] * gconv_dtype_size(c->t), g_stream));
    return 0;
}

/* ---- timing --------------------------------------------------------------------------------- */

typedef struct bench_timing {
    double us;     /* median time per launch */
    double spread; /* (max - min) / median over the trials */
    int launches;  /* per trial (graph: nodes x replays) */
    int graph;     /* 1 when timed as graph replays */
} bench_timing;

static int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int bench_run_batch(bench_case *c, bench_launch_fn fn, int L, int *next)
{
    int i;
    for (i = 0; i < L; i++) {
        if (fn(c, *next, g_stream))
            return -1;
        *next = (*next + 1) % c->nsets;
    }
    return 0;
}

/* Warm up, size a trial to >= min_ms, then time `trials` trials of L back-to-back launches
 * (rotating over the data sets) with events; in graph mode the L launches are captured once
 * and each trial is one replay, which removes the host's launch cost from the numbers. */
static int bench_time(bench_case *c, bench_launch_fn fn, bench_timing *t)
{
    hipEvent_t e0, e1;
    float ms = 0;
    double est, v[64];
    int L, R = 1, i, next = 0, trials = g_opt.trials < 64 ? g_opt.trials : 64;
    hipGraph_t graph = NULL;
    hipGraphExec_t exec = NULL;
    memset(t, 0, sizeof *t);
    HIPCHK(hipEventCreate(&e0));
    HIPCHK(hipEventCreate(&e1));
    if (bench_run_batch(c, fn, 3, &next))
        return -1;
    HIPCHK(hipStreamSynchronize(g_stream));
    HIPCHK(hipGetLastError());
    HIPCHK(hipEventRecord(e0, g_stream));
    if (bench_run_batch(c, fn, 5, &next))
        return -1;
    HIPCHK(hipEventRecord(e1, g_stream));
    HIPCHK(hipEventSynchronize(e1));
    HIPCHK(hipEventElapsedTime(&ms, e0, e1));
    est = ms / 5.0;
    L = (int)ceil(g_opt.min_ms / (est > 1e-4 ? est : 1e-4));
    if (g_opt.use_graph && L < c->nsets)
        L = c->nsets; /* one graph visits every data set */
    if (L < 1) L = 1;
    if (L > 2000) L = 2000;
    if (g_opt.use_graph) {
        int ok = hipStreamBeginCapture(g_stream, hipStreamCaptureModeRelaxed) == hipSuccess;
        int launched = ok && bench_run_batch(c, fn, L, &next) == 0;
        if (ok)
            ok = hipStreamEndCapture(g_stream, &graph) == hipSuccess && launched && graph;
        if (ok)
            ok = hipGraphInstantiateWithFlags(&exec, graph, 0) == hipSuccess;
        if (ok)
            ok = hipGraphLaunch(exec, g_stream) == hipSuccess &&
                 hipStreamSynchronize(g_stream) == hipSuccess;
        if (!ok) {
            (void)hipGetLastError(); /* fall back to plain launches */
            if (exec) hipGraphExecDestroy(exec);
            if (graph) hipGraphDestroy(graph);
            exec = NULL, graph = NULL;
        }
        t->graph = ok;
        if (ok) {
            /* replays run faster than the stream launches the estimate came from: time one
             * and repeat the replay until a trial lasts min_ms */
            HIPCHK(hipEventRecord(e0, g_stream));
            HIPCHK(hipGraphLaunch(exec, g_stream));
            HIPCHK(hipEventRecord(e1, g_stream));
            HIPCHK(hipEventSynchronize(e1));
            HIPCHK(hipEventElapsedTime(&ms, e0, e1));
            R = (int)ceil(g_opt.min_ms / (ms > 1e-4 ? ms : 1e-4));
            if (R < 1) R = 1;
            if (R > 1000) R = 1000;
        }
    }
    t->launches = L * R;
    for (i = 0; i < trials; i++) {
        int j;
        HIPCHK(hipEventRecord(e0, g_stream));
        if (exec) {
            for (j = 0; j < R; j++)
                HIPCHK(hipGraphLaunch(exec, g_stream));
        } else if (bench_run_batch(c, fn, L, &next)) {
            return -1;
        }
        HIPCHK(hipEventRecord(e1, g_stream));
        HIPCHK(hipEventSynchronize(e1));
        HIPCHK(hipEventElapsedTime(&ms, e0, e1));
        v[i] = ms * 1e3 / (L * R);
    }
    HIPCHK(hipGetLastError());
    qsort(v, (size_t)trials, sizeof v[0], bench_cmp_double);
    t->us = v[trials / 2];
    t->spread = (v[trials - 1] - v[0]) / t->us;
    if (exec) hipGraphExecDestroy(exec);
    if (graph) hipGraphDestroy(graph);
    hipEventDestroy(e0);
    hipEventDestroy(e1);
    return 0;
}

/* ---- ceilings: copy bandwidth and matrix rate ---------------------------------------------- */

static double g_copy_bw;   /* bytes/s, read + write counted */
static double g_mat_rate;  /* flop/s */
static char g_mat_how[96];

static int bench_probe_copy(void)
{
    size_t bytes = (size_t)1 << 30;
    void *a, *b;
    hipEvent_t e0, e1;
    float ms;
    double v[10];
    int i;
    HIPCHK(hipMalloc(&a, bytes));
    HIPCHK(hipMalloc(&b, bytes));
    if (bench_fill(a, GCONV_F32, (int64_t)(bytes / 4), 99))
        return -1;
    HIPCHK(hipEventCreate(&e0));
    HIPCHK(hipEventCreate(&e1));
    for (i = -2; i < 10; i++) {
        HIPCHK(hipEventRecord(e0, g_stream));
        HIPCHK(hipMemcpyAsync(b, a, bytes, hipMemcpyDeviceToDevice, g_stream));
        HIPCHK(hipEventRecord(e1, g_stream));
        HIPCHK(hipEventSynchronize(e1));
        HIPCHK(hipEventElapsedTime(&ms, e0, e1));
        if (i >= 0)
            v[i] = ms;
    }
    qsort(v, 10, sizeof v[0], bench_cmp_double);
    g_copy_bw = 2.0 * (double)bytes / (v[5] * 1e-3);
    hipEventDestroy(e0);
    hipEventDestroy(e1);
    hipFree(a);
    hipFree(b);
    return 0;
}

#if BENCH_HAVE_CUDNN
/* Matrix rate: cublasGemmEx on random 8192^3 (4096^3 for fp32 FMA) in the benchmark's type,
 * fp32 accumulation, median of 10 after 2 warm-ups. */
static int bench_probe_matrix(gconv_dtype t)
{
    int n = t == GCONV_F32 && !g_opt.tf32 ? 4096 : 8192, i;
    size_t bytes = (size_t)n * n * gconv_dtype_size(t);
    void *a, *b, *cc;
    cublasHandle_t h;
    cudaDataType_t ct = t == GCONV_F16 ? CUDA_R_16F : t == GCONV_BF16 ? CUDA_R_16BF : CUDA_R_32F;
    cublasComputeType_t comp = t == GCONV_F32 && g_opt.tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32
                                                             : CUBLAS_COMPUTE_32F;
    float one = 1.0f, zero = 0.0f, ms;
    double v[10];
    hipEvent_t e0, e1;
    HIPCHK(hipMalloc(&a, bytes));
    HIPCHK(hipMalloc(&b, bytes));
    HIPCHK(hipMalloc(&cc, bytes));
    if (bench_fill(a, t, (int64_t)n * n, 7) || bench_fill(b, t, (int64_t)n * n, 8))
        return -1;
    if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) {
        fprintf(stderr, "cublasCreate failed\n");
        return -1;
    }
    cublasSetStream(h, g_stream);
    HIPCHK(hipEventCreate(&e0));
    HIPCHK(hipEventCreate(&e1));
    for (i = -2; i < 10; i++) {
        cublasStatus_t s;
        HIPCHK(hipEventRecord(e0, g_stream));
        s = cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, ct, n, b, ct, n, &zero, cc,
                         ct, n, comp, CUBLAS_GEMM_DEFAULT);
        HIPCHK(hipEventRecord(e1, g_stream));
        HIPCHK(hipEventSynchronize(e1));
        if (s != CUBLAS_STATUS_SUCCESS) {
            fprintf(stderr, "cublasGemmEx failed: %d\n", (int)s);
            return -1;
        }
        HIPCHK(hipEventElapsedTime(&ms, e0, e1));
        if (i >= 0)
            v[i] = ms;
    }
    qsort(v, 10, sizeof v[0], bench_cmp_double);
    g_mat_rate = 2.0 * n * (double)n * n / (v[5] * 1e-3);
    snprintf(g_mat_how, sizeof g_mat_how, "cublasGemmEx %s %d^3%s with fp32 accumulation",
             gconv_dtype_name(t), n, comp == CUBLAS_COMPUTE_32F_FAST_TF32 ? " tf32" : "");
    cublasDestroy(h);
    hipEventDestroy(e0);
    hipEventDestroy(e1);
    hipFree(a);
    hipFree(b);
    hipFree(cc);
    return 0;
}
#endif

/* ---- environment ---------------------------------------------------------------------------- */

static char g_date[32], g_driver[64], g_env[512];

static void bench_environment(void)
{
    int dev = 0, drv = 0, rt = 0;
    FILE *f;
    time_t now = time(NULL);
    strftime(g_date, sizeof g_date, "%Y-%m-%d %H:%M UTC", gmtime(&now));
    strcpy(g_driver, "?");
    /* "NVRM version: NVIDIA UNIX ... Kernel Module ...  580.159.04  <date>": the first word
     * of the form digits.digits is the driver's version */
    f = fopen("/proc/driver/nvidia/version", "r");
    if (f) {
        char line[256], *tok, *save = NULL;
        if (fgets(line, sizeof line, f))
            for (tok = strtok_r(line, " \t\n", &save); tok; tok = strtok_r(NULL, " \t\n", &save)) {
                unsigned a, b;
                char dot;
                if (sscanf(tok, "%u%c%u", &a, &dot, &b) == 3 && dot == '.') {
                    snprintf(g_driver, sizeof g_driver, "%s", tok);
                    break;
                }
            }
        fclose(f);
    }
    hipGetDevice(&dev);
    hipGetDeviceProperties(&g_prop, dev);
    hipDriverGetVersion(&drv);
    hipRuntimeGetVersion(&rt);
#if BENCH_HAVE_CUDNN
    {
        size_t v = cudnnGetVersion();
        snprintf(g_env, sizeof g_env,
                 "device %s (sm_%d%d, %d SMs, L2 %d MB), driver %s (CUDA %d.%d), runtime %d.%d, "
                 "cuDNN %zu.%zu.%zu, %s",
                 g_prop.name, g_prop.major, g_prop.minor, g_prop.multiProcessorCount,
                 g_prop.l2CacheSize >> 20, g_driver, drv / 1000, drv % 1000 / 10, rt / 1000,
                 rt % 1000 / 10, v / 10000, v % 10000 / 100, v % 100, g_date);
    }
#else
    snprintf(g_env, sizeof g_env, "device %s, %d CUs, L2 %d MB, runtime %d, %s", g_prop.name,
             g_prop.multiProcessorCount, g_prop.l2CacheSize >> 20, rt, g_date);
#endif
}

/* ---- one problem ---------------------------------------------------------------------------- */

typedef struct bench_row {
    char suite[64], label[96];
    double bytes, flops, floor_us;
    const char *bound;
    bench_timing g, v;
    int have_g, have_v;
    double err_gv, err_vr, err_gr;
    int64_t bad_g;
    char algo[64], note[256];
    const char *check;
} bench_row;

/* geometric means of gconv floor/time, vendor floor/time, speedup: [0] this suite, [1] all */
typedef struct bench_geo {
    double sum[3];
    int n[3];
} bench_geo;
static bench_geo g_geo[2];

static void bench_geo_add(int i, double v)
{
    int s;
    for (s = 0; s < 2; s++)
        g_geo[s].sum[i] += log(v), g_geo[s].n[i]++;
}

static void bench_geo_print(const char *what, const bench_geo *g)
{
    static const char *const names[3] = {"gconv floor/time", "vendor floor/time", "speedup"};
    int i;
    printf("geomean %s:", what);
    for (i = 0; i < 3; i++)
        if (g->n[i])
            printf("  %s %.3f (%d)", names[i], exp(g->sum[i] / g->n[i]), g->n[i]);
        else
            printf("  %s -", names[i]);
    printf("\n");
}

static void bench_case_run(const bench_op *op, const gconv_problem *p, int k1, bench_row *r)
{
    static bench_case c; /* large (set table): static, cleared per problem */
    float *ref = NULL, *hr = NULL, *hv = NULL, *hg = NULL;
    int64_t n_out, bad = 0;
    char why[256];
    double tol = bench_tol(g_opt.t);

    memset(&c, 0, sizeof c);
    c.op = op;
    c.p = *p;
    c.k1 = k1;
    c.t = g_opt.t;
    r->err_gv = r->err_vr = r->err_gr = -1;
    r->check = "-";
    strcpy(r->algo, "-");
    if (gconv_problem_check(p, why, sizeof why) != GCONV_OK) {
        snprintf(r->note, sizeof r->note, "%s", why);
        r->check = "INVALID";
        return;
    }
    if (bench_case_alloc(&c, 0)) {
        snprintf(r->note, sizeof r->note, "allocation failed");
        r->check = "ERROR";
        bench_case_free(&c);
        return;
    }
    n_out = c.elems[op->nin];
    r->bytes = bench_case_bytes(&c);
    r->flops = op->flops ? op->flops(&c) : gconv_flops(p);
    {
        double tm = r->bytes / g_copy_bw * 1e6, tc = g_mat_rate > 0 ? r->flops / g_mat_rate * 1e6 : 0;
        r->floor_us = tm > tc ? tm : tc;
        r->bound = tm > tc ? "mem" : "math";
    }

    /* reference of set 0 */
    if (!g_opt.no_ref) {
        if (hipMalloc((void **)&ref, (size_t)n_out * sizeof(float)) == hipSuccess &&
            op->ref(&c, ref) == 0 && hipStreamSynchronize(g_stream) == hipSuccess) {
            hr = (float *)malloc((size_t)n_out * sizeof(float));
            if (hr && hipMemcpy(hr, ref, (size_t)n_out * sizeof(float), hipMemcpyDeviceToHost) != hipSuccess) {
                free(hr);
                hr = NULL;
            }
        }
        if (ref) hipFree(ref);
        (void)hipGetLastError();
    }

    /* vendor: search, check, time */
    if (!g_opt.no_vendor && op->vendor_prepare) {
        why[0] = '\0';
        if (op->vendor_prepare(&c, why, sizeof why) == 0 && bench_poison_out(&c) == 0 &&
            op->vendor_launch(&c, 0, g_stream) == 0 && hipStreamSynchronize(g_stream) == hipSuccess &&
            (hv = bench_fetch_out(&c)) != NULL) {
            snprintf(r->algo, sizeof r->algo, "%s", c.vendor_algo);
            if (hr)
                r->err_vr = bench_rel_err(hv, hr, n_out, &bad);
            if (bench_time(&c, op->vendor_launch, &r->v) == 0)
                r->have_v = 1;
        } else {
            snprintf(r->note + strlen(r->note), sizeof r->note - strlen(r->note), "[vendor] %s ", why);
        }
        (void)hipGetLastError();
    }

    /* gconv: check, time */
    if (!g_opt.no_gconv && op->gconv_prepare) {
        why[0] = '\0';
        if (op->gconv_prepare(&c, why, sizeof why) == 0 && bench_poison_out(&c) == 0 &&
            op->gconv_launch(&c, 0, g_stream) == 0 && hipStreamSynchronize(g_stream) == hipSuccess &&
            hipGetLastError() == hipSuccess && (hg = bench_fetch_out(&c)) != NULL) {
            const float *base = hv ? hv : hr;
            r->check = "ok";
            if (hr)
                r->err_gr = bench_rel_err(hg, hr, n_out, &r->bad_g);
            if (hv)
                r->err_gv = bench_rel_err(hg, hv, n_out, &r->bad_g);
            if (r->bad_g)
                r->check = "UNWRITTEN";
            else if (base && (r->err_gv > tol || (hr && r->err_gr > tol)))
                r->check = "WARN";
            if (bench_time(&c, op->gconv_launch, &r->g) == 0)
                r->have_g = 1;
        } else {
            snprintf(r->note + strlen(r->note), sizeof r->note - strlen(r->note), "[gconv] %s ", why);
            r->check = "n/a";
        }
        (void)hipGetLastError();
    } else if (!op->gconv_prepare) {
        r->check = "no-gconv";
    }
    if (r->have_v && r->err_vr > tol)
        snprintf(r->note + strlen(r->note), sizeof r->note - strlen(r->note),
                 "[vendor differs from reference] ");
    if (r->have_g)
        bench_geo_add(0, r->floor_us / r->g.us);
    if (r->have_v)
        bench_geo_add(1, r->floor_us / r->v.us);
    if (r->have_g && r->have_v)
        bench_geo_add(2, r->v.us / r->g.us);
    free(hr), free(hv), free(hg);
    bench_case_free(&c);
}

/* ---- output --------------------------------------------------------------------------------- */

static FILE *g_csv;

static void bench_print_header(void)
{
    printf("%-44s %9s %9s %-26s %9s %4s %7s %7s %7s %8s %8s %s\n", "problem", "gconv_us",
           "vendor_us", "vendor_algo", "floor_us", "bnd", "g/floor", "v/floor", "speedup",
           "err_g-v", "err_v-ref", "check");
}

static void bench_print_row(const bench_row *r)
{
    char gs[16] = "-", vs[16] = "-", gf[16] = "-", vf[16] = "-", sp[16] = "-", e1[16] = "-",
         e2[16] = "-";
    if (r->have_g) snprintf(gs, sizeof gs, "%.1f", r->g.us), snprintf(gf, sizeof gf, "%.2f", r->floor_us / r->g.us);
    if (r->have_v) snprintf(vs, sizeof vs, "%.1f", r->v.us), snprintf(vf, sizeof vf, "%.2f", r->floor_us / r->v.us);
    if (r->have_g && r->have_v) snprintf(sp, sizeof sp, "%.2fx", r->v.us / r->g.us);
    if (r->err_gv >= 0) snprintf(e1, sizeof e1, "%.1e", r->err_gv);
    if (r->err_vr >= 0) snprintf(e2, sizeof e2, "%.1e", r->err_vr);
    printf("%-44s %9s %9s %-26s %9.1f %4s %7s %7s %7s %8s %8s %s%s%s\n", r->label, gs, vs, r->algo,
           r->floor_us, r->bound ? r->bound : "-", gf, vf, sp, e1, e2, r->check,
           r->note[0] ? "  " : "", r->note);
    fflush(stdout);
}

static void bench_csv_row(const bench_row *r, const gconv_problem *p)
{
    if (!g_csv)
        return;
    fprintf(g_csv,
            "%s,%s,\"%s\",%s,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%.0f,%.0f,"
            "%.3f,%s,",
            g_opt.op, r->suite, r->label, gconv_dtype_name(g_opt.t), p->ndim, p->G, p->N, p->C,
            p->K, p->in[0], p->in[1], p->in[2], p->filter[0], p->filter[1], p->filter[2],
            p->stride[0], p->stride[1], p->stride[2], p->dilation[1], p->dilation[2],
            p->pad_lo[1], p->pad_lo[2], p->pad_hi[1], p->pad_hi[2], r->bytes, r->flops,
            r->floor_us, r->bound ? r->bound : "");
    if (r->have_g)
        fprintf(g_csv, "%.3f,%.4f,%.3f,%d,%d,", r->g.us, r->floor_us / r->g.us, r->g.spread,
                r->g.launches, r->g.graph);
    else
        fprintf(g_csv, ",,,,,");
    if (r->have_v)
        fprintf(g_csv, "%.3f,%.4f,%.3f,%d,%d,", r->v.us, r->floor_us / r->v.us, r->v.spread,
                r->v.launches, r->v.graph);
    else
        fprintf(g_csv, ",,,,,");
    fprintf(g_csv, "%s,", r->algo);
    if (r->have_g && r->have_v)
        fprintf(g_csv, "%.4f,", r->v.us / r->g.us);
    else
        fprintf(g_csv, ",");
    {
        char e[3][16];
        const double ev[3] = {r->err_gv, r->err_gr, r->err_vr};
        int i;
        for (i = 0; i < 3; i++) {
            e[i][0] = '\0';
            if (ev[i] >= 0)
                snprintf(e[i], sizeof e[i], "%.3e", ev[i]);
        }
        fprintf(g_csv, "%s,%s,%s,%lld,%s,\"%s\"\n", e[0], e[1], e[2], (long long)r->bad_g,
                r->check, r->note);
    }
    fflush(g_csv);
}

/* ---- suites --------------------------------------------------------------------------------- */

static void bench_basename(const char *path, char *out, size_t len)
{
    const char *b = strrchr(path, '/');
    char *dot;
    snprintf(out, len, "%s", b ? b + 1 : path);
    dot = strrchr(out, '.');
    if (dot)
        *dot = '\0';
}

static int bench_suite(const bench_op *op, const char *path)
{
    FILE *f = fopen(path, "r");
    char line[512], name[64];
    int lineno = 0;
    if (!f) {
        fprintf(stderr, "cannot open suite %s\n", path);
        return -1;
    }
    bench_basename(path, name, sizeof name);
    printf("\n== %s (%s, %s)\n", name, op->name, gconv_dtype_name(g_opt.t));
    bench_print_header();
    while (fgets(line, sizeof line, f)) {
        int v[11], got, k1 = 0;
        char *hash = strchr(line, '#'), *kk;
        gconv_problem p;
        bench_row r;
        lineno++;
        if (hash)
            *hash = '\0';
        kk = strstr(line, "k1=");
        if (kk) { /* fused_fwd's pointwise channels: read, then blank out for the numbers */
            k1 = atoi(kk + 3);
            while (*kk && *kk != ' ' && *kk != '\t' && *kk != '\n')
                *kk++ = ' ';
        }
        v[10] = 1;
        got = sscanf(line, "%d %d %d %d %d %d %d %d %d %d %d", &v[0], &v[1], &v[2], &v[3], &v[4],
                     &v[5], &v[6], &v[7], &v[8], &v[9], &v[10]);
        if (got <= 0)
            continue;
        if (got < 10 || v[1] <= 0 || v[2] % v[1] || v[3] % v[1]) {
            fprintf(stderr, "%s:%d: want `N G Ctotal Ktotal H W Y X stride pad [dil]` with "
                            "Ctotal and Ktotal multiples of G\n", path, lineno);
            continue;
        }
        gconv_problem_2d(&p, v[1], v[0], v[2] / v[1], v[3] / v[1], v[4], v[5], v[6], v[7], v[8],
                         v[8], v[9], v[9], v[10], v[10]);
        memset(&r, 0, sizeof r);
        snprintf(r.suite, sizeof r.suite, "%s", name);
        snprintf(r.label, sizeof r.label, "N%d G%d C%d K%d %dx%d %dx%d s%d p%d%s", v[0], v[1],
                 v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10] != 1 ? " d" : "");
        if (v[10] != 1)
            snprintf(r.label + strlen(r.label), sizeof r.label - strlen(r.label), "%d", v[10]);
        if (k1)
            snprintf(r.label + strlen(r.label), sizeof r.label - strlen(r.label), " >%d", k1);
        bench_case_run(op, &p, k1, &r);
        bench_print_row(&r);
        bench_csv_row(&r, &p);
    }
    fclose(f);
    bench_geo_print(name, &g_geo[0]);
    memset(&g_geo[0], 0, sizeof g_geo[0]);
    return 0;
}

/* ---- profiler mode -------------------------------------------------------------------------- */

/* CK order: ndim G N K C filter[ndim] in[ndim] stride[ndim] dil[ndim] lpad[ndim] rpad[ndim] */
static int bench_parse_shape(int argc, char **argv, gconv_problem *p)
{
    int v[40], i, nd, need, f[3], in[3], s[3], d[3], lp[3], zero[3] = {0, 0, 0};
    if (argc < 1)
        return -1;
    nd = atoi(argv[0]);
    if (nd < 1 || nd > 3)
        return -1;
    need = 5 + 6 * nd;
    if (argc != need)
        return -1;
    for (i = 0; i < need; i++)
        v[i] = atoi(argv[i]);
    for (i = 0; i < nd; i++) {
        f[i] = v[5 + i], in[i] = v[5 + nd + i], s[i] = v[5 + 2 * nd + i];
        d[i] = v[5 + 3 * nd + i], lp[i] = v[5 + 4 * nd + i];
    }
    gconv_problem_nd(p, nd, v[1], v[2], v[4], v[3], in, f, s, zero, d);
    for (i = 0; i < nd; i++) {
        p->pad_lo[3 - nd + i] = lp[i];
        p->pad_hi[3 - nd + i] = v[5 + 5 * nd + i];
    }
    return 0;
}

static int bench_profile(const bench_op *op, const gconv_problem *p)
{
    static bench_case c;
    char why[256] = "";
    int use_g = !strcmp(g_opt.impl, "gconv"), i;
    bench_launch_fn fn;
    hipEvent_t e0, e1;
    float ms;
    if (gconv_problem_check(p, why, sizeof why) != GCONV_OK) {
        fprintf(stderr, "bad problem: %s\n", why);
        return -1;
    }
    memset(&c, 0, sizeof c);
    c.op = op, c.p = *p, c.t = g_opt.t, c.k1 = g_opt.k1;
    if (bench_case_alloc(&c, 1))
        return -1;
    if (use_g ? !op->gconv_prepare || op->gconv_prepare(&c, why, sizeof why)
              : !op->vendor_prepare || op->vendor_prepare(&c, why, sizeof why)) {
        fprintf(stderr, "%s cannot run this problem: %s\n", g_opt.impl, why[0] ? why : "not built in");
        return -1;
    }
    fn = use_g ? op->gconv_launch : op->vendor_launch;
    HIPCHK(hipEventCreate(&e0));
    HIPCHK(hipEventCreate(&e1));
    HIPCHK(hipEventRecord(e0, g_stream));
    for (i = 0; i < g_opt.iters; i++)
        if (fn(&c, 0, g_stream))
            return -1;
    HIPCHK(hipEventRecord(e1, g_stream));
    HIPCHK(hipEventSynchronize(e1));
    HIPCHK(hipGetLastError());
    HIPCHK(hipEventElapsedTime(&ms, e0, e1));
    printf("profile %s %s %s: %d launches, %.2f us each (first included)%s%s\n", op->name,
           g_opt.impl, gconv_dtype_name(g_opt.t), g_opt.iters, ms * 1e3 / g_opt.iters,
           use_g ? "" : ", algo ", use_g ? "" : c.vendor_algo);
    bench_case_free(&c);
    return 0;
}

/* ---- main ----------------------------------------------------------------------------------- */

static void bench_usage(void)
{
    fprintf(stderr,
            "usage: bench [--op fwd] [--type f16|bf16|f32] [--tf32] --suite FILE [--suite FILE...]\n"
            "             [--csv PATH] [--trials 7] [--min-ms 1] [--launch graph|stream]\n"
            "             [--no-gconv] [--no-vendor] [--no-ref] [--rotate-mb 200]\n"
            "             [--copy-gbs X] [--matrix-tflops X]\n"
            "       bench --profile [--op fwd] [--impl gconv|vendor] [--iters 20] [--type T]\n"
            "             ndim G N K C <filter> <in> <stride> <dilation> <lpad> <rpad>\n");
}

int main(int argc, char **argv)
{
    const char *suites[32];
    int nsuites = 0, i, shape_at = -1;
    const bench_op *op;
    memset(&g_opt, 0, sizeof g_opt);
    g_opt.op = "fwd", g_opt.t = GCONV_F16, g_opt.trials = 7, g_opt.min_ms = 1.0;
    g_opt.use_graph = 1, g_opt.rotate_mb = 0, g_opt.iters = 20;
    g_opt.impl = BENCH_HAVE_GCONV_FWD ? "gconv" : "vendor";
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        int more = i + 1 < argc;
        if (!strcmp(a, "--op") && more) g_opt.op = argv[++i];
        else if (!strcmp(a, "--type") && more) {
            const char *t = argv[++i];
            g_opt.t = !strcmp(t, "f32") ? GCONV_F32 : !strcmp(t, "bf16") ? GCONV_BF16 : GCONV_F16;
            if (strcmp(t, "f32") && strcmp(t, "bf16") && strcmp(t, "f16")) {
                bench_usage();
                return 2;
            }
        } else if (!strcmp(a, "--tf32")) g_opt.tf32 = 1;
        else if (!strcmp(a, "--suite") && more && nsuites < 32) suites[nsuites++] = argv[++i];
        else if (!strcmp(a, "--csv") && more) g_opt.csv = argv[++i];
        else if (!strcmp(a, "--trials") && more) g_opt.trials = atoi(argv[++i]);
        else if (!strcmp(a, "--min-ms") && more) g_opt.min_ms = atof(argv[++i]);
        else if (!strcmp(a, "--launch") && more) g_opt.use_graph = !strcmp(argv[++i], "graph");
        else if (!strcmp(a, "--no-gconv")) g_opt.no_gconv = 1;
        else if (!strcmp(a, "--no-vendor")) g_opt.no_vendor = 1;
        else if (!strcmp(a, "--no-ref")) g_opt.no_ref = 1;
        else if (!strcmp(a, "--rotate-mb") && more) g_opt.rotate_mb = atof(argv[++i]);
        else if (!strcmp(a, "--copy-gbs") && more) g_opt.copy_gbs = atof(argv[++i]);
        else if (!strcmp(a, "--matrix-tflops") && more) g_opt.matrix_tflops = atof(argv[++i]);
        else if (!strcmp(a, "--profile")) g_opt.profile = 1;
        else if (!strcmp(a, "--impl") && more) g_opt.impl = argv[++i];
        else if (!strcmp(a, "--iters") && more) g_opt.iters = atoi(argv[++i]);
        else if (!strcmp(a, "--k1") && more) g_opt.k1 = atoi(argv[++i]);
        else if (g_opt.profile && a[0] != '-') {
            shape_at = i;
            break;
        } else {
            bench_usage();
            return 2;
        }
    }
    if (g_opt.trials < 1) g_opt.trials = 1;
    if (g_opt.iters < 1) g_opt.iters = 1;
    op = bench_find_op(g_opt.op);
    if (!op) {
        size_t j;
        fprintf(stderr, "unknown op %s (have:", g_opt.op);
        for (j = 0; j < sizeof bench_ops / sizeof bench_ops[0]; j++)
            fprintf(stderr, " %s", bench_ops[j].name);
        fprintf(stderr, ")\n");
        return 2;
    }
    if (hipStreamCreate(&g_stream) != hipSuccess) {
        fprintf(stderr, "no GPU\n");
        return 1;
    }
    bench_environment();
#ifdef GCONV_IMPL_L2PF_PIXELS
    /* tuning knob: BENCH_L2PF=0 / 1 pins whether the input rings of forward DW3 and of the
     * fused row kernel ask L2 for 256 bytes a copy (library-internal gconv_impl_l2pf_pin; unset:
     * the library's rule by input plane size) */
    if (getenv("BENCH_L2PF"))
        gconv_impl_l2pf_pin = atoi(getenv("BENCH_L2PF"));
#endif
#ifdef GCONV_IMPL_BWH_CL
    /* tuning knob: BENCH_BWH_CL_OFF=1 keeps backward weight's C = 32 BWH kernel off its
     * cluster forms, 2 off its whole-chunk clusters (pairs only), 3 off its pairs
     * (library-internal gconv_impl_bwh_cl_off) */
    if (getenv("BENCH_BWH_CL_OFF"))
        gconv_impl_bwh_cl_off = atoi(getenv("BENCH_BWH_CL_OFF"));
#endif
#if BENCH_HAVE_GCONV_FWD
    /* tuning knob: BENCH_DW_TPS=n aims the depthwise DW3 split (forward, and backward data's
     * stride-1 view) at n work items per SM (library-internal gconv_impl_dw3_tps; 0 = the
     * built-in value) */
    if (getenv("BENCH_DW_TPS"))
        gconv_impl_dw3_tps = atoi(getenv("BENCH_DW_TPS"));
    /* tuning knob: BENCH_WS_PIN=0 .. 4 pins the warp-specialised configuration (forward, and
     * backward data's GEMM view: 128x128, 256x128, 128x256, 128x128 two blocks per SM, 152x256
     * transposed), GCONV_IMPL_WS_COUNT (5) turns that kernel off (the engine runs;
     * library-internal gconv_impl_fwd_ws_pin) */
    if (getenv("BENCH_WS_PIN"))
        gconv_impl_fwd_ws_pin = atoi(getenv("BENCH_WS_PIN"));
#endif
#if BENCH_HAVE_CUDNN
    if (cudnnCreate(&g_dnn) != CUDNN_STATUS_SUCCESS || cudnnSetStream(g_dnn, g_stream) != CUDNN_STATUS_SUCCESS) {
        fprintf(stderr, "cudnnCreate failed\n");
        return 1;
    }
#endif

    if (g_opt.profile) {
        gconv_problem p;
        if (shape_at < 0 || bench_parse_shape(argc - shape_at, argv + shape_at, &p)) {
            bench_usage();
            return 2;
        }
        printf("%s\n", g_env);
        return bench_profile(op, &p) ? 1 : 0;
    }
    if (!nsuites) {
        bench_usage();
        return 2;
    }
    if (g_opt.rotate_mb <= 0)
        g_opt.rotate_mb = 4.0 * g_prop.l2CacheSize / 1e6;

    /* ceilings */
    if (g_opt.copy_gbs > 0)
        g_copy_bw = g_opt.copy_gbs * 1e9;
    else if (bench_probe_copy())
        return 1;
    if (g_opt.matrix_tflops > 0) {
        g_mat_rate = g_opt.matrix_tflops * 1e12;
        snprintf(g_mat_how, sizeof g_mat_how, "given on the command line");
    } else {
#if BENCH_HAVE_CUDNN
        if (bench_probe_matrix(g_opt.t))
            return 1;
#else
        snprintf(g_mat_how, sizeof g_mat_how, "not measured (give --matrix-tflops)");
#endif
    }

    printf("gconv bench: op %s, %s%s, gconv %s\n", op->name, gconv_dtype_name(g_opt.t),
           g_opt.tf32 ? " (tf32 allowed)" : "", BENCH_HAVE_GCONV_FWD ? "built in" : "NOT built in");
    printf("%s\n", g_env);
    printf("copy bandwidth %.0f GB/s (cudaMemcpy D2D 1 GiB, read+write); matrix rate %.1f TFLOP/s (%s)\n",
           g_copy_bw / 1e9, g_mat_rate / 1e12, g_mat_how);
    printf("timing: median of %d trials, each >= %.2f ms of back-to-back launches%s, data sets "
           "rotated so a cycle touches >= %.0f MB (L2 %d MB); floor = max(bytes/copy bw, flops/matrix rate)\n",
           g_opt.trials, g_opt.min_ms, g_opt.use_graph ? " replayed as a graph" : "",
           g_opt.rotate_mb, g_prop.l2CacheSize >> 20);
    if (g_opt.csv) {
        g_csv = fopen(g_opt.csv, "w");
        if (!g_csv) {
            fprintf(stderr, "cannot write %s\n", g_opt.csv);
            return 1;
        }
        fprintf(g_csv, "# gconv bench; op %s; %s\n# ", op->name, gconv_dtype_name(g_opt.t));
        for (i = 0; g_env[i]; i++)
            fputc(g_env[i] == ',' ? ';' : g_env[i], g_csv);
        fprintf(g_csv, "\n# copy_bw_GBs %.1f; matrix_TFLOPs %.2f (%s); trials %d; min_ms %.2f; graph %d; rotate_MB %.0f\n",
                g_copy_bw / 1e9, g_mat_rate / 1e12, g_mat_how, g_opt.trials, g_opt.min_ms,
                g_opt.use_graph, g_opt.rotate_mb);
        fprintf(g_csv,
                "op,suite,problem,dtype,ndim,G,N,C,K,Di,Hi,Wi,Z,Y,X,Sd,Sh,Sw,Dh,Dw,LPh,LPw,RPh,RPw,"
                "bytes,flops,floor_us,bound,gconv_us,gconv_floor_frac,gconv_spread,gconv_launches,"
                "gconv_graph,vendor_us,vendor_floor_frac,vendor_spread,vendor_launches,vendor_graph,"
                "vendor_algo,speedup,err_gconv_vs_vendor,err_gconv_vs_ref,err_vendor_vs_ref,"
                "gconv_nonfinite,check,note\n");
    }
    for (i = 0; i < nsuites; i++)
        bench_suite(op, suites[i]);
    printf("\n");
    bench_geo_print("all suites", &g_geo[1]);
    if (g_csv)
        fclose(g_csv);
#if BENCH_HAVE_CUDNN
    cudnnDestroy(g_dnn);
#endif
    hipStreamDestroy(g_stream);
    return 0;
}
