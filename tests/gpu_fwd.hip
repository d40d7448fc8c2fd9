/* tests/gpu_fwd.hip: the forward operation (gconv/fwd.h) against the CPU reference.
 *
 * One Criterion suite, "fwd". Every test skips with the reason when there is no GPU and has a
 * timeout. What is tested:
 *   - sweep_*: seeded random problems (1D/2D/3D, every layout family, G = 1 / small / depthwise,
 *     C and K per group 1..70, strides and dilations 1..3, asymmetric pads, odd sizes, random
 *     epilogues), 400 per data type, every output element compared;
 *   - edge_*: fixed edge cases (C or K not a multiple of the vector width, 1x1, filter as large
 *     as the padded input, G = 1, depthwise, output of size 1, depthwise with large C) in every
 *     layout family;
 *   - epi_*: each epilogue (pass-through, scale, bias, residual add, ReLU, ReLU6, bilinear,
 *     bias + ReLU, scale + add, 4 D tensors, user op) for every data type;
 *   - tiled_*: nine pinned-tile instantiations (every tile the dispatch can pick and more;
 *     both, one or no operand vectorised), including their refusals;
 *   - tf32_sweep: fp32 on tf32 tensor cores; large_gather_tile: the big element-wise tile;
 *   - huge_*: inputs over 2 GB and 2^31 elements (GEMM with and without vector loads, the
 *     depthwise kernel), a sample of outputs checked exactly, every output checked written;
 *   - refuse_*: refusals with their exact status, and that a refusal launches nothing;
 *   - poison_guard: nothing is written outside the output, nothing into the inputs.
 *
 * Problems are generated inside the tests (seeded), never in Criterion's parameter generators,
 * which run in the parent process and must not touch the GPU. Sizes are kept small: the CPU
 * reference (about 1e8 multiply-adds per second) is the bottleneck, and the suite must finish
 * in well under 2 minutes.
 *
 * Build: nvcc -x cu -arch=sm_90 -O2 -Werror all-warnings -I. tests/gpu_fwd.hip -o gpu_fwd \
 *            -lcriterion -lm
 *        hipcc -x hip --offload-arch=gfx90a -O2 -Wall -Wextra -Werror -I. tests/gpu_fwd.hip \
 *            -o gpu_fwd -lcriterion -lm
 * Run: ./gpu_fwd  (--verbose to see skip reasons and per-test logs)
 * Coverage check: build with -DGT_PATH_DIAG to log which kernel path each problem took.
 */
#include "gpu_common.h"

#include "../gconv/fwd.h"
#include "../gconv/reference.h"

/* ---- the user op: leaky ReLU of alpha*acc + beta0*D0, plus a term made of the logical index,
 * so that a kernel passing wrong (g, n, k, d, h, w) to the op is caught. The arithmetic lives
 * in one host/device function so the host computes the expected value the same way. */
static inline GCONV_HD float gt_user_math(float acc, float alpha, float beta0, float d0, int g,
                                          int n, int k, int d, int h, int w)
{
    float y = alpha * acc + beta0 * d0;
    y = y > 0.0f ? y : 0.125f * y;
    return y + 0.5f * (float)(g % 3) + 0.25f * (float)(n % 2) + 0.125f * (float)(k % 5) +
           0.0625f * (float)(d % 2) + 0.03125f * (float)(h % 3) - 0.015625f * (float)(w % 4);
}

static __device__ float gt_user_op(const gconv_epilogue *e, gconv_dtype t, float acc, int g, int n,
                                   int k, int d, int h, int w)
{
    /* without D tensors (GT_EPI_USER_PLAIN: a plain epilogue struct) the D term is 0 */
    float d0 = e->num_d > 0 ? gconv_impl_dev_load(t, e->d[0].data,
                                                  gconv_act_offset(&e->d[0].strides, g, n, k,
                                                                   d, h, w))
                            : 0.0f;
    return gt_user_math(acc, e->alpha, e->num_d > 0 ? e->beta[0] : 0.0f, d0, g, n, k, d, h, w);
}

/* ---- instantiations ------------------------------------------------------------------------ */

GCONV_FWD(fwd_f32_nhwgc, GCONV_F32, GCONV_NHWGC, GCONV_GKYXC)
GCONV_FWD(fwd_f32_gnhwc, GCONV_F32, GCONV_GNHWC, GCONV_GKYXC)
GCONV_FWD(fwd_f32_ngchw, GCONV_F32, GCONV_NGCHW, GCONV_GKYXC)
GCONV_FWD(fwd_f32_ngchw_kcyx, GCONV_F32, GCONV_NGCHW, GCONV_GKCYX)
GCONV_FWD(fwd_f16_nhwgc, GCONV_F16, GCONV_NHWGC, GCONV_GKYXC)
GCONV_FWD(fwd_f16_gnhwc, GCONV_F16, GCONV_GNHWC, GCONV_GKYXC)
GCONV_FWD(fwd_f16_ngchw, GCONV_F16, GCONV_NGCHW, GCONV_GKYXC)
GCONV_FWD(fwd_f16_ngchw_kcyx, GCONV_F16, GCONV_NGCHW, GCONV_GKCYX)
GCONV_FWD(fwd_bf16_nhwgc, GCONV_BF16, GCONV_NHWGC, GCONV_GKYXC)
GCONV_FWD(fwd_bf16_gnhwc, GCONV_BF16, GCONV_GNHWC, GCONV_GKYXC)
GCONV_FWD(fwd_bf16_ngchw, GCONV_BF16, GCONV_NGCHW, GCONV_GKYXC)
GCONV_FWD(fwd_bf16_ngchw_kcyx, GCONV_BF16, GCONV_NGCHW, GCONV_GKCYX)

GCONV_FWD_USER_OP(fwd_f16_user, GCONV_F16, GCONV_NHWGC, GCONV_GKYXC, gt_user_op)
GCONV_FWD_USER_OP(fwd_f32_user_kcyx, GCONV_F32, GCONV_NGCHW, GCONV_GKCYX, gt_user_op)

/* Pinned tiles: every tile the default dispatch can pick (which picks only one of them for
 * the small problems a CPU reference can check), some it cannot, and the three gather
 * combinations (both operands vectorised, input only, neither). */
GCONV_FWD_TILED(fwd_f16_t128x128, GCONV_F16, GCONV_NHWGC, GCONV_GKYXC, GCONV_TILE_128x128x32)
GCONV_FWD_TILED(fwd_bf16_t64x128, GCONV_BF16, GCONV_GNHWC, GCONV_GKYXC, GCONV_TILE_64x128x32)
GCONV_FWD_TILED(fwd_f16_t64x64, GCONV_F16, GCONV_NHWGC, GCONV_GKYXC, GCONV_TILE_64x64x32)
GCONV_FWD_TILED(fwd_f32_t128x32, GCONV_F32, GCONV_NHWGC, GCONV_GKYXC, GCONV_TILE_128x32x32)
GCONV_FWD_TILED(fwd_bf16_t128x16, GCONV_BF16, GCONV_NHWGC, GCONV_GKYXC, GCONV_TILE_128x16x32)
GCONV_FWD_TILED(fwd_f16_t128x128w4, GCONV_F16, GCONV_NHWGC, GCONV_GKYXC,
                GCONV_TILE_128x128x32_W4)
GCONV_FWD_TILED(fwd_f16_t128x128x64, GCONV_F16, GCONV_NHWGC, GCONV_GKYXC,
                GCONV_TILE_128x128x64)
GCONV_FWD_TILED(fwd_bf16_t128x32_ngchw, GCONV_BF16, GCONV_NGCHW, GCONV_GKCYX,
                GCONV_TILE_128x32x32)
GCONV_FWD_TILED(fwd_f32_t64x64_kcyx, GCONV_F32, GCONV_NHWGC, GCONV_GKCYX, GCONV_TILE_64x64x32)

/* An instantiation seen through function pointers, so one driver runs them all. */
typedef struct gt_fwd_impl {
    const char *name;
    gconv_dtype t;
    gconv_layout act, wei; /* families */
    int user_op;           /* 1: the epilogue is gt_user_op */
    int may_refuse;        /* 1: supports() may say no to valid problems (pinned tiles) */
    int (*supports)(const gconv_problem *, char *, size_t);
    size_t (*workspace_size)(const gconv_problem *);
    gconv_status (*run)(const gconv_problem *, const gconv_fwd_args *, hipStream_t);
} gt_fwd_impl;

#define GT_IMPL(name, t, act, wei, user, refuse)                                                 \
    {#name, t, act, wei, user, refuse, name##_supports, name##_workspace_size, name}

/* [dtype][family]: families in the order of gt_families */
static const gt_fwd_impl gt_impls[3][4] = {
    {GT_IMPL(fwd_f32_nhwgc, GCONV_F32, GCONV_NHWGC, GCONV_GKYXC, 0, 0),
     GT_IMPL(fwd_f32_gnhwc, GCONV_F32, GCONV_GNHWC, GCONV_GKYXC, 0, 0),
     GT_IMPL(fwd_f32_ngchw, GCONV_F32, GCONV_NGCHW, GCONV_GKYXC, 0, 0),
     GT_IMPL(fwd_f32_ngchw_kcyx, GCONV_F32, GCONV_NGCHW, GCONV_GKCYX, 0, 0)},
    {GT_IMPL(fwd_f16_nhwgc, GCONV_F16, GCONV_NHWGC, GCONV_GKYXC, 0, 0),
     GT_IMPL(fwd_f16_gnhwc, GCONV_F16, GCONV_GNHWC, GCONV_GKYXC, 0, 0),
     GT_IMPL(fwd_f16_ngchw, GCONV_F16, GCONV_NGCHW, GCONV_GKYXC, 0, 0),
     GT_IMPL(fwd_f16_ngchw_kcyx, GCONV_F16, GCONV_NGCHW, GCONV_GKCYX, 0, 0)},
    {GT_IMPL(fwd_bf16_nhwgc, GCONV_BF16, GCONV_NHWGC, GCONV_GKYXC, 0, 0),
     GT_IMPL(fwd_bf16_gnhwc, GCONV_BF16, GCONV_GNHWC, GCONV_GKYXC, 0, 0),
     GT_IMPL(fwd_bf16_ngchw, GCONV_BF16, GCONV_NGCHW, GCONV_GKYXC, 0, 0),
     GT_IMPL(fwd_bf16_ngchw_kcyx, GCONV_BF16, GCONV_NGCHW, GCONV_GKCYX, 0, 0)},
};
static const gt_fwd_impl gt_impl_user_f16 =
    GT_IMPL(fwd_f16_user, GCONV_F16, GCONV_NHWGC, GCONV_GKYXC, 1, 0);
static const gt_fwd_impl gt_impl_user_f32 =
    GT_IMPL(fwd_f32_user_kcyx, GCONV_F32, GCONV_NGCHW, GCONV_GKCYX, 1, 0);
#define GT_NUM_TILED 9
static const gt_fwd_impl gt_tiled[GT_NUM_TILED] = {
    GT_IMPL(fwd_f16_t128x128, GCONV_F16, GCONV_NHWGC, GCONV_GKYXC, 0, 1),
    GT_IMPL(fwd_bf16_t64x128, GCONV_BF16, GCONV_GNHWC, GCONV_GKYXC, 0, 1),
    GT_IMPL(fwd_f16_t64x64, GCONV_F16, GCONV_NHWGC, GCONV_GKYXC, 0, 1),
    GT_IMPL(fwd_f32_t128x32, GCONV_F32, GCONV_NHWGC, GCONV_GKYXC, 0, 1),
    GT_IMPL(fwd_bf16_t128x16, GCONV_BF16, GCONV_NHWGC, GCONV_GKYXC, 0, 1),
    GT_IMPL(fwd_f16_t128x128w4, GCONV_F16, GCONV_NHWGC, GCONV_GKYXC, 0, 1),
    GT_IMPL(fwd_f16_t128x128x64, GCONV_F16, GCONV_NHWGC, GCONV_GKYXC, 0, 1),
    GT_IMPL(fwd_bf16_t128x32_ngchw, GCONV_BF16, GCONV_NGCHW, GCONV_GKCYX, 0, 1),
    GT_IMPL(fwd_f32_t64x64_kcyx, GCONV_F32, GCONV_NHWGC, GCONV_GKCYX, 0, 1),
};

enum { GT_T_F32 = 0, GT_T_F16 = 1, GT_T_BF16 = 2 };
enum { GT_FAM_NHWGC = 0, GT_FAM_GNHWC = 1, GT_FAM_NGCHW = 2, GT_FAM_NGCHW_KCYX = 3 };

/* ---- epilogues ---------------------------------------------------------------------------- */

enum {
    GT_EPI_NONE = 0,   /* NULL epilogue: plain store */
    GT_EPI_SCALE,      /* alpha * acc */
    GT_EPI_BIAS,       /* acc + bias[g, k] */
    GT_EPI_RESIDUAL,   /* acc + D */
    GT_EPI_RELU,       /* relu(acc) */
    GT_EPI_RELU6,      /* clamp(3 * acc, 0, 6) */
    GT_EPI_BILINEAR,   /* alpha * acc + beta * D */
    GT_EPI_BIAS_RELU,  /* relu(acc + bias) */
    GT_EPI_SCALE_ADD,  /* alpha * acc + D */
    GT_EPI_FOUR_D,     /* clamp(acc + bias + 0.5 R1 - 0.25 R2(other layout) + 2 S[n, g, k]) */
    GT_EPI_IDENTITY,   /* an explicit epilogue that is a plain store (alpha 1, nothing else) */
    GT_EPI_BIAS_RES,   /* relu(-0.5 acc + bias + 1.5 D) */
    GT_EPI_TWO_RES,    /* acc + D1 - 0.5 D2, both full tensors in the output's layout */
    GT_EPI_RES_CLAMP,  /* clamp(1.5 acc - 0.75 D, -1, 2) */
    GT_EPI_BUILTIN_COUNT,
    GT_EPI_USER = GT_EPI_BUILTIN_COUNT, /* gt_user_op with D0 a residual */
    GT_EPI_USER_PLAIN                   /* gt_user_op with a plain struct (alpha 1, no D) */
};

static const char *const gt_epi_names[] = {"none", "scale", "bias", "residual", "relu",
                                           "relu6", "bilinear", "bias+relu", "scale+add",
                                           "4 D tensors", "explicit identity",
                                           "alpha+bias+residual+relu", "two residuals",
                                           "alpha+residual+clamp",
                                           "user op", "user op, plain struct"};

/* Kinds of D tensor: how it is broadcast and laid out. */
enum {
    GT_D_BIAS = 0,   /* G*K vector, gconv_bias_strides */
    GT_D_FULL,       /* full output tensor in the output's layout */
    GT_D_OTHER,      /* full output tensor in another layout family (its own strides) */
    GT_D_NK          /* per (n, g, k), broadcast over space */
};

typedef struct gt_epi_spec {
    int null_epi;
    float alpha;
    int num_d;
    int dkind[GCONV_MAX_D];
    float beta[GCONV_MAX_D];
    gconv_act act;
} gt_epi_spec;

static gt_epi_spec gt_epi_make(int kind)
{
    gt_epi_spec s;
    memset(&s, 0, sizeof s);
    s.alpha = 1.0f;
    s.act = gconv_act_none();
    switch (kind) {
    case GT_EPI_NONE:
        s.null_epi = 1;
        break;
    case GT_EPI_SCALE:
        s.alpha = -1.75f;
        break;
    case GT_EPI_BIAS:
        s.num_d = 1, s.dkind[0] = GT_D_BIAS, s.beta[0] = 1.0f;
        break;
    case GT_EPI_RESIDUAL:
        s.num_d = 1, s.dkind[0] = GT_D_FULL, s.beta[0] = 1.0f;
        break;
    case GT_EPI_RELU:
        s.act = gconv_relu();
        break;
    case GT_EPI_RELU6:
        s.alpha = 3.0f, s.act = gconv_relu6();
        break;
    case GT_EPI_BILINEAR:
        s.alpha = 0.75f, s.num_d = 1, s.dkind[0] = GT_D_FULL, s.beta[0] = -1.25f;
        break;
    case GT_EPI_BIAS_RELU:
        s.num_d = 1, s.dkind[0] = GT_D_BIAS, s.beta[0] = 1.0f, s.act = gconv_relu();
        break;
    case GT_EPI_SCALE_ADD:
        s.alpha = 0.5f, s.num_d = 1, s.dkind[0] = GT_D_FULL, s.beta[0] = 1.0f;
        break;
    case GT_EPI_FOUR_D:
        s.num_d = 4;
        s.dkind[0] = GT_D_BIAS, s.beta[0] = 1.0f;
        s.dkind[1] = GT_D_FULL, s.beta[1] = 0.5f;
        s.dkind[2] = GT_D_OTHER, s.beta[2] = -0.25f;
        s.dkind[3] = GT_D_NK, s.beta[3] = 2.0f;
        s.act = gconv_clamp(-2.0f, 2.5f);
        break;
    case GT_EPI_IDENTITY:
        break;
    case GT_EPI_BIAS_RES:
        s.alpha = -0.5f, s.num_d = 2, s.act = gconv_relu();
        s.dkind[0] = GT_D_BIAS, s.beta[0] = 1.0f;
        s.dkind[1] = GT_D_FULL, s.beta[1] = 1.5f;
        break;
    case GT_EPI_RES_CLAMP:
        s.alpha = 1.5f, s.num_d = 1, s.act = gconv_clamp(-1.0f, 2.0f);
        s.dkind[0] = GT_D_FULL, s.beta[0] = -0.75f;
        break;
    case GT_EPI_TWO_RES:
        s.num_d = 2;
        s.dkind[0] = GT_D_FULL, s.beta[0] = 1.0f;
        s.dkind[1] = GT_D_FULL, s.beta[1] = -0.5f;
        break;
    case GT_EPI_USER:
        s.alpha = 1.5f, s.num_d = 1, s.dkind[0] = GT_D_FULL, s.beta[0] = -0.75f;
        break;
    case GT_EPI_USER_PLAIN:
        break;
    }
    return s;
}

/* Strides and element count of a D tensor of kind dk for problem p. */
static gconv_act_strides gt_d_strides(const gconv_problem *p, int dk, int64_t *elems)
{
    int out[3];
    gconv_act_strides st;
    gconv_out_sizes(p, out);
    switch (dk) {
    case GT_D_BIAS:
        *elems = (int64_t)p->G * p->K;
        return gconv_bias_strides(p);
    case GT_D_OTHER: {
        gconv_layout f = gconv_layout_family(gconv_out_layout(p));
        gconv_layout other = f == GCONV_NHWGC ? GCONV_NGCHW : GCONV_NHWGC;
        *elems = gconv_out_elems(p);
        return gconv_act_strides_make(gconv_layout_for(other, p->ndim), p->G, p->N, p->K, out);
    }
    case GT_D_NK:
        *elems = (int64_t)p->N * p->G * p->K;
        st.g = p->K, st.n = (int64_t)p->G * p->K, st.c = 1;
        st.s[0] = 0, st.s[1] = 0, st.s[2] = 0;
        return st;
    default:
        *elems = gconv_out_elems(p);
        return gconv_out_strides(p);
    }
}

/* ---- which kernel runs (diagnostics, -DGT_PATH_DIAG) ---------------------------------------
 *
 * With GT_PATH_DIAG defined, failure messages name the path the launcher takes for a problem
 * and the sweeps log how often each path ran, as this test infers it from the internal plan
 * functions of fwd.h, igemm_halo.h and direct_fwd.h (read-only use). Those are not public API
 * and change as the engine evolves, so this mirror is off by default: build with
 * -DGT_PATH_DIAG to check coverage, and update it when the dispatch changes. It never
 * affects pass or fail. */
enum {
    GT_PATH_DW3 = 0, GT_PATH_FEWC, GT_PATH_GENERIC,                      /* direct kernels */
    GT_PATH_HALO,                                                        /* halo tensor cores */
    GT_PATH_IG_V128x128, GT_PATH_IG_V128x64, GT_PATH_IG_V64x64, GT_PATH_IG_V128x32,
    GT_PATH_IG_V128x16, GT_PATH_IG_V128x128_64, GT_PATH_IG_G128x128, GT_PATH_IG_G64x64,
    GT_PATH_IG_G64x64_64,                                                /* implicit GEMM */
    GT_PATH_TILED, GT_PATH_UNKNOWN, GT_PATH_COUNT
};
static const char *const gt_path_names[GT_PATH_COUNT] = {
    "direct DW3", "direct FEWC", "direct GENERIC", "halo mma", "igemm vec 128x128",
    "igemm vec 128x64", "igemm vec 64x64", "igemm vec 128x32", "igemm vec 128x16",
    "igemm vec 128x128 idx64", "igemm gather 128x128", "igemm gather 64x64",
    "igemm gather 64x64 idx64", "igemm pinned tile", "path not inferred"};

static int gt_path_counts[GT_PATH_COUNT];

static int gt_path(const gt_fwd_impl *im, const gconv_problem *p, const gconv_fwd_args *a)
{
#if defined(GT_PATH_DIAG)
    gconv_impl_fwd_params P;
    int vec, vec_ok;
    if (im->may_refuse)
        return GT_PATH_TILED;
    if (gconv_impl_direct_fits(p)) {
        /* the launcher hands the direct planner a plain-store description for a NULL epi */
        const gconv_epilogue plain = gconv_epi_scale(1.0f);
        gconv_impl_direct_plan pl;
        if (!gconv_impl_direct_plan_make(p, im->t, a->in, a->wei, a->out,
                                         a->epi ? a->epi : &plain, GCONV_IMPL_DIRECT_AUTO, &pl))
            return GT_PATH_GENERIC;
        return pl.path == GCONV_IMPL_DIRECT_DW3    ? GT_PATH_DW3
               : pl.path == GCONV_IMPL_DIRECT_FEWC ? GT_PATH_FEWC
                                                   : GT_PATH_GENERIC;
    }
    {
        gconv_impl_halo_params H;
        if (gconv_impl_halo_plan(p, im->t, a->in, a->wei, a->out, a->epi, &H))
            return GT_PATH_HALO;
    }
    vec = 16 / (int)gconv_dtype_size(im->t);
    gconv_impl_fwd_fill(p, a, &P);
    vec_ok = (im->act == GCONV_NHWGC || im->act == GCONV_GNHWC) && im->wei == GCONV_GKYXC &&
             p->C % vec == 0 && ((uintptr_t)a->in | (uintptr_t)a->wei) % 16 == 0;
    return GT_PATH_IG_V128x128 +
           gconv_impl_fwd_kind(p, &P, vec_ok, (int)gconv_dtype_size(im->t));
#else
    (void)p, (void)a;
    return im->may_refuse ? GT_PATH_TILED : GT_PATH_UNKNOWN;
#endif
}

static void gt_log_paths(const char *what)
{
#if defined(GT_PATH_DIAG)
    char buf[1024];
    size_t n = 0;
    int i;
    buf[0] = '\0';
    for (i = 0; i < GT_PATH_COUNT; i++)
        if (gt_path_counts[i] && n < sizeof buf)
            n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s %d", n ? ", " : "",
                                  gt_path_names[i], gt_path_counts[i]);
    cr_log_info("%s: paths run: %s", what, buf);
#else
    (void)what;
#endif
}

/* ---- one forward run against the reference ----------------------------------------------- */

enum { GT_CASE_FAIL = 0, GT_CASE_PASS = 1, GT_CASE_UNSUPPORTED = 2 };

/* Run impl on problem p (whose layouts must already be of impl's families) with epilogue kind
 * epi on fresh random data (init kind, seed), compare every output element with the reference,
 * check the guard zones. Returns GT_CASE_*; on failure msg says what went wrong. HIP errors
 * abort the test (GT_CHECK). */
static int gt_fwd_case(const gt_fwd_impl *im, const gconv_problem *p, int epi_kind, int init,
                       uint64_t seed, int tf32, char *msg, size_t len)
{
    gconv_dtype t = im->t;
    size_t es = gconv_dtype_size(t);
    int64_t n_in = gconv_in_elems(p), n_wei = gconv_wei_elems(p), n_out = gconv_out_elems(p);
    gt_rng r = gt_rng_make(seed);
    gt_epi_spec es_ = gt_epi_make(!im->user_op ? epi_kind
                                  : epi_kind == GT_EPI_USER_PLAIN ? GT_EPI_USER_PLAIN
                                                                  : GT_EPI_USER);
    gconv_epilogue epi_dev, epi_host;
    void *h_in, *h_wei, *h_out, *h_d[GCONV_MAX_D] = {0}, *d_d[GCONV_MAX_D] = {0};
    float *ref, *ref_d[GCONV_MAX_D] = {0};
    void *d_in, *d_wei, *ws = NULL;
    size_t ws_size;
    gt_guarded out;
    gconv_fwd_args a;
    gconv_status s;
    hipStream_t stream;
    char why[512], pstr[320], cbuf[512];
    int i, result = GT_CASE_PASS, out_sp[3], path;
    long long first_bad = 0;
    size_t guard_bad;
    gt_cmp c;

    gt_problem_str(p, pstr, sizeof pstr);
    why[0] = '\0';
    if (!im->supports(p, why, sizeof why)) {
        if (im->may_refuse)
            return GT_CASE_UNSUPPORTED;
        snprintf(msg, len, "%s [%s, epi %s]: supports() says no: %s", im->name, pstr,
                 gt_epi_names[epi_kind], why);
        return GT_CASE_FAIL;
    }

    h_in = gt_host_alloc((size_t)n_in * es);
    h_wei = gt_host_alloc((size_t)n_wei * es);
    h_out = gt_host_alloc((size_t)n_out * es);
    ref = (float *)gt_host_alloc((size_t)n_out * sizeof(float));
    gt_fill(t, h_in, (size_t)n_in, &r, init);
    gt_fill(t, h_wei, (size_t)n_wei, &r, init);
    d_in = gt_dev_upload(h_in, (size_t)n_in * es);
    d_wei = gt_dev_upload(h_wei, (size_t)n_wei * es);
    out = gt_guarded_alloc((size_t)n_out * es);

    /* the epilogue twice: device pointers of type t for the GPU, fp32 host copies for the
     * reference (asked for an fp32 result, whose D tensors are fp32) */
    epi_dev = gconv_epi_scale(es_.alpha);
    epi_dev.act = es_.act;
    epi_host = epi_dev;
    for (i = 0; i < es_.num_d; i++) {
        int64_t ne;
        gconv_act_strides st = gt_d_strides(p, es_.dkind[i], &ne);
        h_d[i] = gt_host_alloc((size_t)ne * es);
        gt_fill(t, h_d[i], (size_t)ne, &r, init);
        ref_d[i] = gt_to_f32(t, h_d[i], (size_t)ne);
        d_d[i] = gt_dev_upload(h_d[i], (size_t)ne * es);
        gconv_epi_add_d(&epi_dev, d_d[i], st, es_.beta[i]);
        gconv_epi_add_d(&epi_host, ref_d[i], st, es_.beta[i]);
    }

    ws_size = im->workspace_size(p);
    if (ws_size)
        ws = gt_dev_alloc(ws_size);
    GT_CHECK(hipStreamCreate(&stream));

    memset(&a, 0, sizeof a);
    a.in = d_in;
    a.wei = d_wei;
    a.out = out.p;
    a.epi = es_.null_epi ? NULL : &epi_dev;
    a.workspace = ws;
    a.workspace_size = ws_size;
    a.allow_tf32 = tf32;
    a.why = why;
    a.why_len = sizeof why;
    why[0] = '\0';
    path = gt_path(im, p, &a);
    gt_path_counts[path]++;
    snprintf(pstr + strlen(pstr), sizeof pstr - strlen(pstr), ", %s%s", gt_path_names[path],
             tf32 && t == GCONV_F32 ? " tf32" : "");
    s = im->run(p, &a, stream);
    if (s != GCONV_OK) {
        snprintf(msg, len, "%s [%s, epi %s]: launcher returned %s: %s", im->name, pstr,
                 gt_epi_names[epi_kind], gconv_status_name(s), why);
        result = GT_CASE_FAIL;
        goto done;
    }
    {
        /* a fault here leaves the context unusable: stop the test, naming the problem */
        hipError_t e1 = hipGetLastError(), e2 = hipStreamSynchronize(stream);
        if (e1 != hipSuccess || e2 != hipSuccess)
            cr_assert_fail("%s [%s, epi %s, seed %llu]: the launch failed: %s / %s", im->name,
                           pstr, gt_epi_names[epi_kind], (unsigned long long)seed,
                           hipGetErrorString(e1), hipGetErrorString(e2));
    }
    gt_dev_download(h_out, out.p, (size_t)n_out * es);

    /* the expected result */
    if (im->user_op) {
        /* reference accumulation only, then the user op on the host */
        int g, n, k, d, h, w;
        gconv_act_strides so = gconv_out_strides(p);
        s = gconv_ref_fwd(p, t, h_in, h_wei, ref, GCONV_F32, NULL);
        gconv_out_sizes(p, out_sp);
        for (g = 0; g < p->G; g++)
            for (n = 0; n < p->N; n++)
                for (k = 0; k < p->K; k++)
                    for (d = 0; d < out_sp[0]; d++)
                        for (h = 0; h < out_sp[1]; h++)
                            for (w = 0; w < out_sp[2]; w++) {
                                int64_t o = gconv_act_offset(&so, g, n, k, d, h, w);
                                float d0 = 0.0f;
                                if (es_.num_d > 0)
                                    d0 = ref_d[0][gconv_act_offset(&epi_host.d[0].strides, g, n,
                                                                   k, d, h, w)];
                                ref[o] = gt_user_math(ref[o], es_.alpha, es_.beta[0], d0, g, n, k,
                                                      d, h, w);
                            }
    } else {
        s = gconv_ref_fwd(p, t, h_in, h_wei, ref, GCONV_F32, es_.null_epi ? NULL : &epi_host);
    }
    cr_assert(s == GCONV_OK, "reference refused %s: %s", pstr, gconv_status_name(s));

    gconv_out_sizes(p, out_sp);
    {
        /* scale of the accumulation error: |alpha| * max|x| * max|w| (+1 for the user op's
         * extra index terms, which are exact) */
        double m = gt_init_max(init);
        double scale = fabs((double)es_.alpha) * m * m;
        gt_tol tol = gt_tolerance(t, (int64_t)p->C * gconv_filter_taps(p), scale, tf32);
        c = gt_compare_act("out", t, h_out, ref, gconv_out_strides(p), p->G, p->N, p->K, out_sp,
                           tol);
    }
    guard_bad = gt_guarded_check(&out, &first_bad);
    if (c.bad || guard_bad) {
        char gbuf[128] = "";
        if (guard_bad)
            snprintf(gbuf, sizeof gbuf, "; %zu guard bytes written, first at byte offset %lld",
                     guard_bad, first_bad);
        snprintf(msg, len, "%s [%s, epi %s, seed %llu]: %s%s", im->name, pstr,
                 gt_epi_names[epi_kind], (unsigned long long)seed,
                 c.bad ? gt_compare_report(&c, cbuf, sizeof cbuf) : "all elements match", gbuf);
        result = GT_CASE_FAIL;
    }

done:
    GT_CHECK(hipStreamDestroy(stream));
    for (i = 0; i < es_.num_d; i++) {
        free(h_d[i]);
        free(ref_d[i]);
        gt_dev_free(d_d[i]);
    }
    gt_dev_free(ws);
    gt_guarded_free(&out);
    gt_dev_free(d_in);
    gt_dev_free(d_wei);
    free(h_in);
    free(h_wei);
    free(h_out);
    free(ref);
    return result;
}

/* Run one case and record a failure without stopping the test (so a sweep reports every
 * failing problem; the message count is capped to keep logs readable). */
static int gt_fail_count;

static int gt_run_case(const gt_fwd_impl *im, const gconv_problem *p, int epi_kind, int init,
                       uint64_t seed, int tf32)
{
    char msg[1024];
    int r = gt_fwd_case(im, p, epi_kind, init, seed, tf32, msg, sizeof msg);
    if (r == GT_CASE_FAIL) {
        gt_fail_count++;
        if (gt_fail_count <= 12)
            cr_expect_fail("%s", msg);
        else if (gt_fail_count == 13)
            cr_expect_fail("more failures follow; only the first 12 are reported");
        else
            cr_expect_fail("(failure %d)", gt_fail_count);
    }
    return r;
}

/* ---- problems ------------------------------------------------------------------------------ */

static void gt_set_layouts(gconv_problem *p, const gt_fwd_impl *im)
{
    gconv_problem_set_layouts(p, im->act, im->wei);
}

/* Channels per group: often awkward values around multiples of 8, otherwise uniform 1..70. */
static int gt_rand_channels(gt_rng *r)
{
    static const int special[] = {1, 2, 3, 4, 5, 7, 8, 9, 12, 15, 16, 17,
                                  24, 31, 32, 33, 40, 48, 63, 64, 65, 70};
    if (gt_rng_int(r, 0, 9) < 4)
        return special[gt_rng_int(r, 0, (int)(sizeof special / sizeof special[0]) - 1)];
    return gt_rng_int(r, 1, 70);
}

static double gt_macs(const gconv_problem *p)
{
    return gconv_flops(p) / 2.0;
}

/* A random valid problem of at most max_macs multiply-adds (the CPU reference's cost) and at
 * least a few output elements. Layouts are left default (the caller sets them). */
static void gt_random_problem(gt_rng *r, gconv_problem *p, double max_macs)
{
    for (;;) {
        int nd = gt_rng_int(r, 0, 99), kind = gt_rng_int(r, 0, 99);
        int ndim = nd < 30 ? 1 : nd < 75 ? 2 : 3;
        int G, C, K, N, i;
        int in[3], f[3], s[3], dl[3], pl[3], ph[3], halo = 0;
        if (kind < 20) { /* dense */
            G = 1, C = gt_rand_channels(r), K = gt_rand_channels(r);
        } else if (kind < 45) { /* a few groups */
            G = gt_rng_int(r, 2, 6), C = gt_rand_channels(r), K = gt_rand_channels(r);
        } else if (kind < 70) { /* depthwise, channel multiplier 1 or 2 */
            G = gt_rng_int(r, 1, 96), C = 1, K = gt_rng_int(r, 0, 3) ? 1 : 2;
        } else if (kind < 78) { /* C = K = 2 or 4 per group */
            G = gt_rng_int(r, 1, 40), C = gt_rng_int(r, 0, 1) ? 2 : 4, K = C;
            if (gt_rng_int(r, 0, 1))
                G = 8 * gt_rng_int(r, 1, 5); /* vector-friendly group counts */
        } else if (kind < 90) {
            /* the tensor-core halo kernel's shapes (C in {8, 16, 32}, K even and at most 32,
             * stride 1: forced below for most of them) and their neighbours, which must fall
             * back (C 2, 4, 64 or not a power of two, odd K, K over 32) */
            static const int cs[6] = {2, 4, 8, 16, 32, 64};
            C = cs[gt_rng_int(r, 0, 5)];
            K = 2 * gt_rng_int(r, 1, 16);
            if (gt_rng_int(r, 0, 5) == 0)
                K += gt_rng_int(r, 0, 1) ? 1 : 32;
            if (gt_rng_int(r, 0, 7) == 0)
                C += 1;
            G = gt_rng_int(r, 0, 1) ? (64 / cs[gt_rng_int(r, 0, 5)]) * gt_rng_int(r, 1, 3)
                                    : gt_rng_int(r, 1, 9);
            halo = gt_rng_int(r, 0, 3) != 0;
        } else { /* many groups with few channels */
            G = gt_rng_int(r, 2, 40), C = gt_rng_int(r, 1, 8), K = gt_rng_int(r, 1, 8);
        }
        N = gt_rng_int(r, 1, 3);
        for (i = 0; i < ndim; i++) {
            int maxf = ndim == 3 ? 3 : 5, span, extra = ndim == 1 ? 100 : ndim == 2 ? 24 : 9;
            f[i] = gt_rng_int(r, 0, 4) ? gt_rng_int(r, 1, maxf) : 1;
            s[i] = halo ? 1 : gt_rng_int(r, 1, 3);
            dl[i] = gt_rng_int(r, 0, 1) ? 1 : gt_rng_int(r, 2, 3);
            pl[i] = gt_rng_int(r, 0, 2);
            ph[i] = gt_rng_int(r, 0, 2);
            span = dl[i] * (f[i] - 1) + 1;
            in[i] = span - pl[i] - ph[i];
            if (in[i] < 1)
                in[i] = 1;
            in[i] += gt_rng_int(r, 0, extra);
        }
        if (kind >= 45 && kind < 70 && K == 1 && ndim >= 2 && gt_rng_int(r, 0, 2) == 0) {
            /* the depthwise 3x3 kernel's shapes: 3x3 (depth filter 1, no depth pad or stride),
             * equal strides 1 or 2, no dilation, group count a multiple of 8 */
            int st = gt_rng_int(r, 1, 2);
            G = 8 * gt_rng_int(r, 1, 12);
            for (i = ndim - 2; i < ndim; i++) {
                f[i] = 3, s[i] = st, dl[i] = 1;
                in[i] = gt_rng_int(r, 1, 30);
            }
            if (ndim == 3)
                f[0] = 1, s[0] = 1, dl[0] = 1, pl[0] = 0, ph[0] = 0;
            for (i = ndim - 2; i < ndim; i++)
                if (in[i] + pl[i] + ph[i] < 3)
                    in[i] = 3;
        }
        gconv_problem_nd(p, ndim, G, N, C, K, in, f, s, pl, dl);
        for (i = 0; i < ndim; i++)
            p->pad_hi[3 - ndim + i] = ph[i];
        if (gconv_problem_check(p, NULL, 0) != GCONV_OK)
            continue;
        if (gt_macs(p) > max_macs || gconv_out_elems(p) > 1000000 || gconv_in_elems(p) > 1000000)
            continue;
        return;
    }
}

#define GT_SWEEP_PER_FAMILY 100
#define GT_SWEEP_MAX_MACS 8e6

/* 100 random problems for one instantiation (400 per data type over the four families);
 * 40% of them with a random built-in epilogue. */
static void gt_sweep(int ti, int fi)
{
    const gt_fwd_impl *im = &gt_impls[ti][fi];
    gt_rng r = gt_rng_make(0x5EED0000u + (uint64_t)ti * 16 + (uint64_t)fi);
    int i, pass = 0;
    double macs = 0;
    gt_require_gpu();
    gt_fail_count = 0;
    for (i = 0; i < GT_SWEEP_PER_FAMILY; i++) {
        gconv_problem p;
        int epi = gt_rng_int(&r, 0, 9) < 6 ? GT_EPI_NONE
                                            : gt_rng_int(&r, 1, GT_EPI_BUILTIN_COUNT - 1);
        int init = gt_rng_int(&r, 0, 4) ? GT_INIT_DECIMAL : GT_INIT_INT;
        gt_random_problem(&r, &p, GT_SWEEP_MAX_MACS);
        gt_set_layouts(&p, im);
        macs += gt_macs(&p);
        pass += gt_run_case(im, &p, epi, init, gt_rng_next(&r), 0) == GT_CASE_PASS;
    }
    cr_log_info("%s: %d of %d random problems pass (%.3g multiply-adds in all)", im->name, pass,
                GT_SWEEP_PER_FAMILY, macs);
    gt_log_paths(im->name);
}

Test(fwd, sweep_f32_nhwgc, .timeout = 90) { gt_sweep(GT_T_F32, GT_FAM_NHWGC); }
Test(fwd, sweep_f32_gnhwc, .timeout = 90) { gt_sweep(GT_T_F32, GT_FAM_GNHWC); }
Test(fwd, sweep_f32_ngchw, .timeout = 90) { gt_sweep(GT_T_F32, GT_FAM_NGCHW); }
Test(fwd, sweep_f32_ngchw_kcyx, .timeout = 90) { gt_sweep(GT_T_F32, GT_FAM_NGCHW_KCYX); }
Test(fwd, sweep_f16_nhwgc, .timeout = 90) { gt_sweep(GT_T_F16, GT_FAM_NHWGC); }
Test(fwd, sweep_f16_gnhwc, .timeout = 90) { gt_sweep(GT_T_F16, GT_FAM_GNHWC); }
Test(fwd, sweep_f16_ngchw, .timeout = 90) { gt_sweep(GT_T_F16, GT_FAM_NGCHW); }
Test(fwd, sweep_f16_ngchw_kcyx, .timeout = 90) { gt_sweep(GT_T_F16, GT_FAM_NGCHW_KCYX); }
Test(fwd, sweep_bf16_nhwgc, .timeout = 90) { gt_sweep(GT_T_BF16, GT_FAM_NHWGC); }
Test(fwd, sweep_bf16_gnhwc, .timeout = 90) { gt_sweep(GT_T_BF16, GT_FAM_GNHWC); }
Test(fwd, sweep_bf16_ngchw, .timeout = 90) { gt_sweep(GT_T_BF16, GT_FAM_NGCHW); }
Test(fwd, sweep_bf16_ngchw_kcyx, .timeout = 90) { gt_sweep(GT_T_BF16, GT_FAM_NGCHW_KCYX); }

/* fp32 on tf32 tensor cores, with the looser tolerance of 10-bit operands. */
Test(fwd, tf32_sweep, .timeout = 90)
{
    gt_rng r = gt_rng_make(0x7F32);
    int i;
    gt_require_gpu();
    gt_fail_count = 0;
    for (i = 0; i < 40; i++) {
        gconv_problem p;
        const gt_fwd_impl *im = &gt_impls[GT_T_F32][i % 4];
        gt_random_problem(&r, &p, GT_SWEEP_MAX_MACS);
        if (i % 3 == 0) { /* make some of them GEMM-sized channels */
            p.C = 32 + gt_rng_int(&r, 0, 40), p.K = 32 + gt_rng_int(&r, 0, 40);
            while (gt_macs(&p) > 4e6 && p.N > 1)
                p.N--;
            if (gt_macs(&p) > 4e6)
                continue;
        }
        gt_set_layouts(&p, im);
        gt_run_case(im, &p, GT_EPI_NONE, GT_INIT_DECIMAL, gt_rng_next(&r), 1);
    }
    gt_log_paths("tf32");
}

/* ---- fixed edge cases -------------------------------------------------------------------- */

typedef struct gt_edge {
    const char *what;
    int ndim, G, N, C, K;
    int in[3], f[3], s[3], d[3], pl[3], ph[3]; /* in slot order D, H, W (unused: neutral) */
} gt_edge;

/* Slots not used by ndim must be neutral: in 1, f 1, s 1, d 1, pads 0. */
static const gt_edge gt_edges[] = {
    {"C, K not multiples of 8", 2, 2, 2, 3, 5, {1, 9, 11}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1},
     {0, 1, 1}, {0, 1, 1}},
    {"C 13 K 29 1x1", 2, 3, 2, 13, 29, {1, 7, 9}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0},
     {0, 0, 0}},
    {"1x1 stride 2", 2, 2, 2, 16, 24, {1, 9, 10}, {1, 1, 1}, {1, 2, 2}, {1, 1, 1}, {0, 0, 0},
     {0, 0, 0}},
    {"filter = padded input (out 1x1)", 2, 2, 2, 6, 7, {1, 5, 4}, {1, 7, 4}, {1, 1, 1},
     {1, 1, 1}, {0, 1, 0}, {0, 1, 0}},
    {"dilated filter = padded input", 2, 1, 1, 9, 11, {1, 6, 7}, {1, 3, 4}, {1, 2, 3},
     {1, 3, 2}, {0, 1, 1}, {0, 0, 0}},
    {"G 1 dense 3x3", 2, 1, 1, 64, 64, {1, 8, 8}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 1, 1},
     {0, 1, 1}},
    {"G 1 C 1 K 1", 2, 1, 3, 1, 1, {1, 13, 17}, {1, 3, 5}, {1, 1, 2}, {1, 1, 1}, {0, 1, 2},
     {0, 1, 2}},
    {"depthwise 3x3", 2, 32, 2, 1, 1, {1, 14, 14}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 1, 1},
     {0, 1, 1}},
    {"depthwise 7x7 s2 odd", 2, 24, 1, 1, 1, {1, 15, 13}, {1, 7, 7}, {1, 2, 2}, {1, 1, 1},
     {0, 3, 3}, {0, 2, 3}},
    {"depthwise multiplier 2", 2, 40, 1, 1, 2, {1, 11, 9}, {1, 3, 3}, {1, 2, 1}, {1, 1, 1},
     {0, 1, 1}, {0, 1, 1}},
    {"depthwise large C", 2, 2048, 1, 1, 1, {1, 9, 9}, {1, 5, 5}, {1, 1, 1}, {1, 1, 1},
     {0, 2, 2}, {0, 2, 2}},
    {"depthwise large C 1D", 1, 1000, 2, 1, 1, {1, 1, 33}, {1, 1, 7}, {1, 1, 2}, {1, 1, 1},
     {0, 0, 3}, {0, 0, 3}},
    {"output of size 1 (3D, 1x1x1)", 3, 3, 2, 5, 6, {1, 1, 1}, {1, 1, 1}, {1, 1, 1},
     {1, 1, 1}, {0, 0, 0}, {0, 0, 0}},
    {"output of size 1 from padding only", 2, 2, 1, 4, 4, {1, 1, 1}, {1, 3, 3}, {1, 2, 2},
     {1, 1, 1}, {0, 1, 1}, {0, 1, 1}},
    {"pads beyond the filter (zero outputs)", 1, 2, 1, 3, 4, {1, 1, 6}, {1, 1, 2}, {1, 1, 1},
     {1, 1, 1}, {0, 0, 4}, {0, 0, 5}},
    {"1D long dilated", 1, 2, 2, 5, 6, {1, 1, 300}, {1, 1, 7}, {1, 1, 1}, {1, 1, 3},
     {0, 0, 9}, {0, 0, 0}},
    {"3D 3x3x3 stride 2", 3, 2, 1, 8, 8, {5, 7, 6}, {3, 3, 3}, {2, 2, 2}, {1, 1, 1},
     {1, 1, 1}, {1, 0, 1}},
    {"3D depthwise", 3, 16, 1, 1, 1, {6, 7, 8}, {3, 3, 3}, {1, 1, 1}, {1, 1, 2}, {1, 1, 2},
     {1, 1, 2}},
    {"C 70 K 70 stride 3 dilation 2", 2, 2, 1, 70, 70, {1, 11, 10}, {1, 3, 3}, {1, 3, 3},
     {1, 2, 2}, {0, 2, 1}, {0, 1, 2}},
    {"tile-sized C K 128", 2, 2, 1, 128, 128, {1, 7, 7}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1},
     {0, 1, 1}, {0, 1, 1}},
    {"several M tiles", 2, 1, 3, 32, 96, {1, 16, 16}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1},
     {0, 1, 1}, {0, 1, 1}},
    {"K 1 with wide C", 2, 4, 2, 67, 1, {1, 6, 5}, {1, 2, 2}, {1, 1, 1}, {1, 1, 1}, {0, 0, 1},
     {0, 1, 0}},
    {"C 8 K 8 exact vectors", 2, 8, 2, 8, 8, {1, 10, 10}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1},
     {0, 1, 1}, {0, 1, 1}},
    {"depthwise 3x3 s2, G 8, odd sizes", 2, 8, 2, 1, 1, {1, 7, 5}, {1, 3, 3}, {1, 2, 2},
     {1, 1, 1}, {0, 1, 0}, {0, 0, 1}},
    {"depthwise 3x3, no pads, tiny image", 2, 16, 1, 1, 1, {1, 3, 4}, {1, 3, 3}, {1, 1, 1},
     {1, 1, 1}, {0, 0, 0}, {0, 0, 0}},
    {"depthwise 3x3 3D (depth filter 1)", 3, 8, 1, 1, 1, {3, 6, 9}, {1, 3, 3}, {1, 1, 1},
     {1, 1, 1}, {0, 1, 1}, {0, 1, 1}},
    {"depthwise G 12 (no vector groups)", 2, 12, 2, 1, 1, {1, 9, 8}, {1, 3, 3}, {1, 1, 1},
     {1, 1, 1}, {0, 1, 1}, {0, 1, 1}},
    {"depthwise 5x5 G 8 dilated", 2, 8, 1, 1, 1, {1, 12, 11}, {1, 5, 5}, {1, 1, 2},
     {1, 2, 1}, {0, 4, 2}, {0, 4, 2}},
    {"C = K = 2, G 6", 2, 6, 2, 2, 2, {1, 8, 7}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 1, 1},
     {0, 1, 1}},
    {"C = K = 2, G 16 dilated 1D", 1, 16, 2, 2, 2, {1, 1, 31}, {1, 1, 3}, {1, 1, 1},
     {1, 1, 3}, {0, 0, 3}, {0, 0, 3}},
    {"C = K = 4, G 8, 3D", 3, 8, 1, 4, 4, {4, 5, 6}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1},
     {1, 1, 1}, {1, 1, 1}},
    {"C = K = 4, G 3, 7x7", 2, 3, 1, 4, 4, {1, 9, 10}, {1, 7, 7}, {1, 1, 2}, {1, 1, 1},
     {0, 3, 3}, {0, 3, 3}},
    {"C = K = 16 (GEMM)", 2, 4, 2, 16, 16, {1, 9, 9}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1},
     {0, 1, 1}, {0, 1, 1}},
    {"more tiles than one wave", 2, 64, 3, 16, 16, {1, 16, 16}, {1, 3, 3}, {1, 1, 1},
     {1, 1, 1}, {0, 1, 1}, {0, 1, 1}},
    /* the halo tensor-core kernel: ResNeXt-like layers (several row bands, group chunks with
     * a partial last chunk, K below 8) */
    {"ResNeXt-like C = K = 4, 56x56", 2, 32, 1, 4, 4, {1, 56, 56}, {1, 3, 3}, {1, 1, 1},
     {1, 1, 1}, {0, 1, 1}, {0, 1, 1}},
    {"ResNeXt-like C = K = 8, 28x28, G 24", 2, 24, 2, 8, 8, {1, 28, 28}, {1, 3, 3}, {1, 1, 1},
     {1, 1, 1}, {0, 1, 1}, {0, 1, 1}},
    {"ResNeXt-like C = K = 16, 14x14, G 6", 2, 6, 2, 16, 16, {1, 14, 14}, {1, 3, 3},
     {1, 1, 1}, {1, 1, 1}, {0, 1, 1}, {0, 1, 1}},
    {"ResNeXt-like C = K = 32, 7x7", 2, 5, 3, 32, 32, {1, 7, 7}, {1, 3, 3}, {1, 1, 1},
     {1, 1, 1}, {0, 1, 1}, {0, 1, 1}},
    {"C 8 K 2, 5x5 dilated, wide", 2, 16, 1, 8, 2, {1, 9, 70}, {1, 5, 5}, {1, 1, 1},
     {1, 2, 1}, {0, 3, 0}, {0, 1, 4}},
    /* the halo kernel's pair mode (C = K = 4, G even): a partial group chunk, 1D dilated */
    {"C = K = 4 pairs, G 18, 13x17", 2, 18, 2, 4, 4, {1, 13, 17}, {1, 3, 3}, {1, 1, 1},
     {1, 1, 1}, {0, 1, 1}, {0, 1, 1}},
    {"C = K = 4 pairs, 1D 5 taps dilated", 1, 8, 3, 4, 4, {1, 1, 70}, {1, 1, 5}, {1, 1, 1},
     {1, 1, 2}, {0, 0, 3}, {0, 0, 5}},
};

static void gt_edge_problem(const gt_edge *e, gconv_problem *p)
{
    int i;
    memset(p, 0, sizeof *p);
    p->ndim = e->ndim, p->G = e->G, p->N = e->N, p->C = e->C, p->K = e->K;
    for (i = 0; i < 3; i++) {
        p->in[i] = e->in[i], p->filter[i] = e->f[i], p->stride[i] = e->s[i];
        p->dilation[i] = e->d[i], p->pad_lo[i] = e->pl[i], p->pad_hi[i] = e->ph[i];
    }
}

static void gt_edges_for(int ti)
{
    size_t i;
    int fi;
    gt_require_gpu();
    gt_fail_count = 0;
    for (i = 0; i < sizeof gt_edges / sizeof gt_edges[0]; i++) {
        gconv_problem p;
        char why[256];
        gt_edge_problem(&gt_edges[i], &p);
        cr_assert(gconv_problem_check(&p, why, sizeof why) == GCONV_OK,
                  "edge case \"%s\" is not a valid problem: %s", gt_edges[i].what, why);
        for (fi = 0; fi < 4; fi++) {
            const gt_fwd_impl *im = &gt_impls[ti][fi];
            gt_set_layouts(&p, im);
            gt_run_case(im, &p, GT_EPI_NONE, fi & 1 ? GT_INIT_INT : GT_INIT_DECIMAL,
                        0xED6E0000u + i * 8 + (uint64_t)fi, 0);
        }
    }
    gt_log_paths(gconv_dtype_name(gt_impls[ti][0].t));
}

Test(fwd, edge_f32, .timeout = 90) { gt_edges_for(GT_T_F32); }
Test(fwd, edge_f16, .timeout = 90) { gt_edges_for(GT_T_F16); }
Test(fwd, edge_bf16, .timeout = 90) { gt_edges_for(GT_T_BF16); }

/* Output large enough (G * M * K >= 4096 * 128 * 128) for the big gather tile of the
 * implicit GEMM: 16 groups, C = 2 (no vector loads), K = 64, 1x1 over 260 x 256, with a bias.
 * 68 million outputs: the largest CPU check of the suite (a few seconds). */
Test(fwd, large_gather_tile, .timeout = 120)
{
    gconv_problem p;
    gt_require_gpu();
    gt_fail_count = 0;
    gconv_problem_2d(&p, 16, 1, 2, 64, 260, 256, 1, 1, 1, 1, 0, 0, 1, 1);
    gt_set_layouts(&p, &gt_impls[GT_T_F16][GT_FAM_NHWGC]);
    gt_run_case(&gt_impls[GT_T_F16][GT_FAM_NHWGC], &p, GT_EPI_BIAS, GT_INIT_DECIMAL, 0x1A26E, 0);
    gt_set_layouts(&p, &gt_impls[GT_T_F32][GT_FAM_NGCHW]);
    gt_run_case(&gt_impls[GT_T_F32][GT_FAM_NGCHW], &p, GT_EPI_NONE, GT_INIT_DECIMAL, 0x1A26F, 0);
    gt_log_paths("large");
}

/* The halo kernel's persistent grid with several units per block and group chunks changing
 * inside a block's range (more units than the device holds blocks): C = K = 8 and C = K = 4
 * pairs, 128 channels, 16 images of 56x56, plain and with bias + ReLU, fp16 and bf16. */
Test(fwd, halo_persistent, .timeout = 180)
{
    static const int cs[2] = {8, 4};
    int i, ti;
    gt_require_gpu();
    gt_fail_count = 0;
    for (i = 0; i < 2; i++)
        for (ti = GT_T_F16; ti <= GT_T_BF16; ti++) {
            gconv_problem p;
            const gt_fwd_impl *im = &gt_impls[ti][GT_FAM_NHWGC];
            /* 128 channels: two group chunks of 64 */
            gconv_problem_2d(&p, 128 / cs[i], 16, cs[i], cs[i], 56, 56, 3, 3, 1, 1, 1, 1, 1, 1);
            gt_set_layouts(&p, im);
            gt_run_case(im, &p, ti == GT_T_F16 ? GT_EPI_NONE : GT_EPI_BIAS_RELU, GT_INIT_DECIMAL,
                        0x4A10u + (uint64_t)(i * 4 + ti), 0);
        }
    gt_log_paths("halo persistent");
}

/* The halo kernel's wide plans (gconv_impl_halo_plan_wide: four n-tiles, two m-tiles an item): two
 * images a unit where the band is the whole image (7x7 with a batch large enough that blocks run
 * two units, one of them across a group chunk on a 132-SM part: 77 slots of 153 images a chunk,
 * 308 units on 264 blocks; odd, so that the last unit has one image; K = 24 with dilation 2 and
 * asymmetric pads, 5 groups: a chunk of one group; 1D), and one image a unit (14x14, two bands;
 * 27x28, bands of two rows made four, the last short). The plan the launcher makes must be wide
 * with the images a unit expected; fp16 plain, bf16 bias + ReLU, and the fp16 user op without D
 * tensors (an unstaged plan: its per-element epilogue gets each item's own image, which its result
 * depends on) and with a residual. */
static const gt_edge gt_wide_problems[] = {
    {"7x7, 8 groups, 153 images", 2, 8, 153, 32, 32, {1, 7, 7}, {1, 3, 3}, {1, 1, 1},
     {1, 1, 1}, {0, 1, 1}, {0, 1, 1}},
    {"K 24, dilation 2, asymmetric pads", 2, 5, 9, 32, 24, {1, 6, 5}, {1, 3, 3}, {1, 1, 1},
     {1, 2, 2}, {0, 2, 1}, {0, 1, 3}},
    {"1D, 5 taps", 1, 2, 5, 32, 32, {1, 1, 20}, {1, 1, 5}, {1, 1, 1}, {1, 1, 1}, {0, 0, 2},
     {0, 0, 2}},
    {"14x14, one image a unit", 2, 4, 6, 32, 32, {1, 14, 14}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1},
     {0, 1, 1}, {0, 1, 1}},
    {"27x28, bands of four rows", 2, 2, 3, 32, 32, {1, 27, 28}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1},
     {0, 1, 1}, {0, 1, 1}},
};

Test(fwd, halo_wide, .timeout = 180)
{
#if GCONV_IMPL_HALO_ENABLE
    static const int ims[] = {2, 2, 2, 1, 1}; /* images a unit the plans take */
#endif
    size_t i;
    int ti;
    gt_require_gpu();
    gt_fail_count = 0;
    for (i = 0; i < sizeof gt_wide_problems / sizeof gt_wide_problems[0]; i++) {
        gconv_problem p;
        gt_edge_problem(&gt_wide_problems[i], &p);
#if GCONV_IMPL_HALO_ENABLE
        {
            void *a16 = (void *)(uintptr_t)4096;
            gconv_impl_halo_params H;
            gt_set_layouts(&p, &gt_impls[GT_T_F16][GT_FAM_NHWGC]);
            cr_assert(gconv_impl_halo_plan(&p, GCONV_F16, a16, a16, a16, NULL, &H),
                      "%s: not the halo kernel", gt_wide_problems[i].what);
            gconv_impl_halo_plan_stage(&H);
            gconv_impl_halo_plan_wide(&H);
            cr_assert(H.MT == 2 && H.IM == ims[i], "%s: MT %d, %d images a unit; expected 2, %d",
                      gt_wide_problems[i].what, H.MT, H.IM, ims[i]);
        }
#endif
        for (ti = GT_T_F16; ti <= GT_T_BF16; ti++) {
            const gt_fwd_impl *im = &gt_impls[ti][GT_FAM_NHWGC];
            gt_set_layouts(&p, im);
            gt_run_case(im, &p, ti == GT_T_F16 ? GT_EPI_NONE : GT_EPI_BIAS_RELU, GT_INIT_DECIMAL,
                        0x4A40u + (uint64_t)(i * 4 + ti), 0);
        }
        gt_set_layouts(&p, &gt_impl_user_f16);
        gt_run_case(&gt_impl_user_f16, &p, GT_EPI_USER_PLAIN, GT_INIT_DECIMAL,
                    0x4A70u + (uint64_t)i, 0);
        gt_run_case(&gt_impl_user_f16, &p, GT_EPI_USER, GT_INIT_DECIMAL, 0x4A60u + (uint64_t)i,
                    0);
    }
    gt_log_paths("halo wide");
}

/* ---- the warp-specialised Hopper kernel (gconv/igemm_ws.h) --------------------------------- */

/* Problems it takes (C a multiple of 64, K >= 64, at most 32 taps): partial M and N tiles,
 * stride, dilation, asymmetric pads, 1D / 3D, groups, 1x1, a long reduction, a wide filter. */
static const gt_edge gt_ws_problems[] = {
    {"dense 3x3, partial M tile", 2, 1, 2, 64, 128, {1, 20, 21}, {1, 3, 3}, {1, 1, 1},
     {1, 1, 1}, {0, 1, 1}, {0, 1, 1}},
    {"K 72, stride 2, dilation 2, asymmetric pads", 2, 1, 3, 128, 72, {1, 17, 15}, {1, 3, 3},
     {1, 2, 2}, {1, 2, 2}, {0, 2, 1}, {0, 1, 2}},
    {"1D 5 taps dilated, G 2", 1, 2, 2, 64, 64, {1, 1, 300}, {1, 1, 5}, {1, 1, 1}, {1, 1, 3},
     {0, 0, 6}, {0, 0, 6}},
    {"3D 3x3x3", 3, 1, 1, 64, 96, {5, 6, 7}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1},
     {1, 1, 1}},
    {"G 3", 2, 3, 2, 64, 64, {1, 9, 11}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 1, 1},
     {0, 1, 1}},
    {"1x1 stride 2, K 136", 2, 1, 2, 192, 136, {1, 18, 18}, {1, 1, 1}, {1, 2, 2}, {1, 1, 1},
     {0, 0, 0}, {0, 0, 0}},
    {"C 256, K 264: long reduction, several N tiles", 2, 1, 2, 256, 264, {1, 12, 12},
     {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 1, 1}, {0, 1, 1}},
    {"7x4 filter (28 taps)", 2, 1, 1, 64, 64, {1, 12, 10}, {1, 7, 4}, {1, 1, 1}, {1, 1, 1},
     {0, 3, 1}, {0, 3, 2}},
    {"K 100: 2-byte stores, a partial column chunk", 2, 1, 2, 64, 100, {1, 11, 13}, {1, 3, 3},
     {1, 1, 1}, {1, 1, 1}, {0, 1, 1}, {0, 1, 1}},
};

#define GT_NUM_WS (sizeof gt_ws_problems / sizeof gt_ws_problems[0])

/* Whether this binary has the kernel's real body for this device (an sm_90a build on a Hopper
 * GPU); without it these problems take the engine kernels, still checked. */
static int gt_ws_in_binary(void)
{
#if GCONV_IMPL_FWD_WS /* the readiness functions exist only where the kernel can be built */
    const int in = fwd_f16_nhwgc_ws_ready() && fwd_bf16_gnhwc_ws_ready();
#else
    const int in = 0;
#endif
    cr_log_info("warp-specialised kernel %s", in ? "in this binary: these problems run on it"
                                                 : "not in this binary (needs an sm_90a build "
                                                   "on a Hopper GPU): the engine runs instead");
    return in;
}

/* Every problem through each configuration pinned (0 .. 4) and the automatic choice (-1):
 * fp16 NHWGC plain, bf16 GNHWC with bias + ReLU, and the fp16 user op on two problems. */
static void gt_ws_run(int pin)
{
    size_t i;
    gt_require_gpu();
    gt_fail_count = 0;
    (void)gt_ws_in_binary();
    gconv_impl_fwd_ws_pin = pin;
    for (i = 0; i < GT_NUM_WS; i++) {
        gconv_problem p;
        const gt_fwd_impl *a = &gt_impls[GT_T_F16][GT_FAM_NHWGC];
        const gt_fwd_impl *b = &gt_impls[GT_T_BF16][GT_FAM_GNHWC];
        gt_edge_problem(&gt_ws_problems[i], &p);
        gt_set_layouts(&p, a);
        gt_run_case(a, &p, GT_EPI_NONE, i & 1 ? GT_INIT_INT : GT_INIT_DECIMAL,
                    0x3A5000u + (uint64_t)(pin + 1) * 64 + i, 0);
        gt_set_layouts(&p, b);
        gt_run_case(b, &p, GT_EPI_BIAS_RELU, GT_INIT_DECIMAL,
                    0x3A5800u + (uint64_t)(pin + 1) * 64 + i, 0);
        if (i < 2) {
            gt_set_layouts(&p, &gt_impl_user_f16);
            gt_run_case(&gt_impl_user_f16, &p, GT_EPI_USER, GT_INIT_DECIMAL,
                        0x3A5F00u + (uint64_t)(pin + 1) * 64 + i, 0);
        }
    }
    gconv_impl_fwd_ws_pin = -1;
}

Test(fwd, ws_auto, .timeout = 120) { gt_ws_run(-1); }
Test(fwd, ws_128x128, .timeout = 120) { gt_ws_run(GCONV_IMPL_WS_128x128); }
Test(fwd, ws_256x128, .timeout = 120) { gt_ws_run(GCONV_IMPL_WS_256x128); }
Test(fwd, ws_128x256, .timeout = 120) { gt_ws_run(GCONV_IMPL_WS_128x256); }
Test(fwd, ws_128x128_2, .timeout = 120) { gt_ws_run(GCONV_IMPL_WS_128x128_2); }
Test(fwd, ws_152x256_t, .timeout = 120) { gt_ws_run(GCONV_IMPL_WS_152x256_T); }

/* Every built-in epilogue kind on the kernel, with D tensors in the output's layout and
 * broadcast, on two problems, fp16 and bf16 (NHWGC). */
Test(fwd, ws_epilogues, .timeout = 120)
{
    int kind, ti;
    size_t i;
    gt_require_gpu();
    gt_fail_count = 0;
    (void)gt_ws_in_binary();
    for (kind = 0; kind < GT_EPI_BUILTIN_COUNT; kind++)
        for (ti = GT_T_F16; ti <= GT_T_BF16; ti++)
            for (i = 0; i < 2; i++) {
                gconv_problem p;
                const gt_fwd_impl *im = &gt_impls[ti][GT_FAM_NHWGC];
                gt_edge_problem(&gt_ws_problems[i == 0 ? 0 : 4], &p);
                gt_set_layouts(&p, im);
                gt_run_case(im, &p, kind, GT_INIT_DECIMAL,
                            0x3A6000u + (uint64_t)kind * 16 + (uint64_t)ti * 4 + i, 0);
            }
}

/* ---- epilogues ----------------------------------------------------------------------------- */

/* Problems each epilogue runs on: a GEMM-sized one, a depthwise one, a 1D and a 3D one, and
 * halo ones (one n-tile, pairs of groups, four n-tiles). */
static const gt_edge gt_epi_problems[] = {
    {"gemm-sized", 2, 2, 2, 24, 40, {1, 9, 10}, {1, 3, 3}, {1, 1, 2}, {1, 1, 1}, {0, 1, 1},
     {0, 1, 0}},
    {"depthwise", 2, 48, 2, 1, 1, {1, 12, 11}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 1, 1},
     {0, 1, 1}},
    {"1D", 1, 3, 2, 5, 7, {1, 1, 40}, {1, 1, 5}, {1, 1, 2}, {1, 1, 2}, {0, 0, 2}, {0, 0, 3}},
    {"3D", 3, 2, 1, 6, 9, {4, 5, 6}, {2, 3, 2}, {1, 2, 1}, {2, 1, 1}, {1, 1, 0}, {0, 1, 1}},
    {"halo C = K = 8", 2, 16, 2, 8, 8, {1, 9, 11}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 1, 1},
     {0, 1, 1}},
    {"halo pairs C = K = 4", 2, 18, 2, 4, 4, {1, 10, 12}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1},
     {0, 1, 1}, {0, 1, 1}},
    {"halo C = K = 32 (four n-tiles)", 2, 4, 2, 32, 32, {1, 9, 11}, {1, 3, 3}, {1, 1, 1},
     {1, 1, 1}, {0, 1, 1}, {0, 1, 1}},
    {"halo C = K = 32, two images a unit", 2, 3, 3, 32, 32, {1, 7, 7}, {1, 3, 3}, {1, 1, 1},
     {1, 1, 1}, {0, 1, 1}, {0, 1, 1}},
};

static void gt_epi_test(int kind)
{
    int ti, fi;
    size_t i;
    gt_require_gpu();
    gt_fail_count = 0;
    for (ti = 0; ti < 3; ti++)
        for (fi = 0; fi < 4; fi += 3) /* NHWGC/GKYXC and NGCHW/GKCYX */
            for (i = 0; i < sizeof gt_epi_problems / sizeof gt_epi_problems[0]; i++) {
                gconv_problem p;
                const gt_fwd_impl *im = &gt_impls[ti][fi];
                gt_edge_problem(&gt_epi_problems[i], &p);
                gt_set_layouts(&p, im);
                gt_run_case(im, &p, kind, GT_INIT_DECIMAL,
                            0xE91000u + (uint64_t)kind * 64 + (uint64_t)ti * 16 + fi * 4 + i, 0);
            }
}

Test(fwd, epi_none, .timeout = 60) { gt_epi_test(GT_EPI_NONE); }
Test(fwd, epi_scale, .timeout = 60) { gt_epi_test(GT_EPI_SCALE); }
Test(fwd, epi_bias, .timeout = 60) { gt_epi_test(GT_EPI_BIAS); }
Test(fwd, epi_residual, .timeout = 60) { gt_epi_test(GT_EPI_RESIDUAL); }
Test(fwd, epi_relu, .timeout = 60) { gt_epi_test(GT_EPI_RELU); }
Test(fwd, epi_relu6, .timeout = 60) { gt_epi_test(GT_EPI_RELU6); }
Test(fwd, epi_bilinear, .timeout = 60) { gt_epi_test(GT_EPI_BILINEAR); }
Test(fwd, epi_bias_relu, .timeout = 60) { gt_epi_test(GT_EPI_BIAS_RELU); }
Test(fwd, epi_scale_add, .timeout = 60) { gt_epi_test(GT_EPI_SCALE_ADD); }
Test(fwd, epi_four_d, .timeout = 60) { gt_epi_test(GT_EPI_FOUR_D); }

Test(fwd, epi_explicit_identity, .timeout = 60) { gt_epi_test(GT_EPI_IDENTITY); }
Test(fwd, epi_bias_residual, .timeout = 60) { gt_epi_test(GT_EPI_BIAS_RES); }
Test(fwd, epi_two_residuals, .timeout = 60) { gt_epi_test(GT_EPI_TWO_RES); }
Test(fwd, epi_residual_clamp, .timeout = 60) { gt_epi_test(GT_EPI_RES_CLAMP); }

/* DW3 with D tensors on items of many rows: the split hook (gconv_impl_dw3_tps, one work item
 * aimed at per SM) makes the items as tall as the split allows (these problems have fewer
 * column tiles and channel vectors than SMs, so 6 to 12 rows on H100), so the residual's
 * ring slots wrap; then the default split. Stride 1 (four and two columns a thread) and 2,
 * odd sizes, a pad of 0 on one side, every type; the epilogues that take the ring (residual,
 * alpha with a bias and a residual, scale + add, bilinear), the ones that take the
 * per-element path (two residuals, four D tensors) and the user op (fp16 instantiation). */
static const gt_edge gt_dw3_ring_problems[] = {
    {"dw3 stride 1", 2, 48, 2, 1, 1, {1, 23, 19}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 1, 1},
     {0, 1, 1}},
    {"dw3 stride 2", 2, 40, 3, 1, 1, {1, 26, 21}, {1, 3, 3}, {1, 2, 2}, {1, 1, 1}, {0, 1, 0},
     {0, 1, 1}},
    {"dw3 two columns (width 2 mod 4)", 2, 32, 2, 1, 1, {1, 17, 14}, {1, 3, 3}, {1, 1, 1},
     {1, 1, 1}, {0, 1, 1}, {0, 1, 1}},
};

Test(fwd, dw3_ring, .timeout = 120)
{
    static const int kinds[] = {GT_EPI_RESIDUAL, GT_EPI_BIAS_RES, GT_EPI_SCALE_ADD,
                                GT_EPI_BILINEAR, GT_EPI_TWO_RES,  GT_EPI_FOUR_D,
                                GT_EPI_RES_CLAMP};
    int tps, ti;
    size_t i, k;
    gt_require_gpu();
    gt_fail_count = 0;
    for (tps = 1; tps >= 0; tps--) {
        gconv_impl_dw3_tps = tps;
        for (i = 0; i < sizeof gt_dw3_ring_problems / sizeof gt_dw3_ring_problems[0]; i++) {
            gconv_problem p;
            gt_edge_problem(&gt_dw3_ring_problems[i], &p);
            for (ti = 0; ti < 3; ti++)
                for (k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
                    const gt_fwd_impl *im = &gt_impls[ti][GT_FAM_NHWGC];
                    gt_set_layouts(&p, im);
                    gt_run_case(im, &p, kinds[k], GT_INIT_DECIMAL,
                                0xD3A000u + (uint64_t)tps * 256 + i * 64 + ti * 16 + k, 0);
                }
            gt_set_layouts(&p, &gt_impl_user_f16);
            gt_run_case(&gt_impl_user_f16, &p, GT_EPI_USER, GT_INIT_DECIMAL,
                        0xD3A800u + (uint64_t)tps * 16 + i, 0);
        }
    }
    gconv_impl_dw3_tps = 0;
    /* the small problems above put the 16-bit types' D epilogues on the two-column kernel
     * (dw3s1d would run in under two waves); this one has 2048 blocks of dw3s1d */
    {
        static const gt_edge big = {"dw3 four columns, many blocks", 2, 256, 16, 1, 1,
                                    {1, 64, 64}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 1, 1},
                                    {0, 1, 1}};
        gconv_problem p;
        gt_edge_problem(&big, &p);
        for (ti = 0; ti < 3; ti++)
            for (k = 0; k < 2; k++) {
                const gt_fwd_impl *im = &gt_impls[ti][GT_FAM_NHWGC];
                gt_set_layouts(&p, im);
                gt_run_case(im, &p, k ? GT_EPI_BIAS_RES : GT_EPI_RESIDUAL, GT_INIT_DECIMAL,
                            0xD3AC00u + (uint64_t)ti * 4 + k, 0);
            }
    }
    gt_log_paths("dw3 ring");
}

/* The user op: every data path it can take (edge table, random problems) through the two
 * user-op instantiations (fp16 NHWGC/GKYXC and fp32 NGCHW/GKCYX). */
Test(fwd, epi_user_op, .timeout = 90)
{
    gt_rng r = gt_rng_make(0x05E7);
    size_t i;
    gt_require_gpu();
    gt_fail_count = 0;
    for (i = 0; i < sizeof gt_epi_problems / sizeof gt_epi_problems[0]; i++) {
        gconv_problem p;
        gt_edge_problem(&gt_epi_problems[i], &p);
        gt_set_layouts(&p, &gt_impl_user_f16);
        gt_run_case(&gt_impl_user_f16, &p, GT_EPI_USER, GT_INIT_DECIMAL, 0x05E70 + i, 0);
        gt_set_layouts(&p, &gt_impl_user_f32);
        gt_run_case(&gt_impl_user_f32, &p, GT_EPI_USER, GT_INIT_DECIMAL, 0x05E78 + i, 0);
    }
    for (i = 0; i < 40; i++) {
        gconv_problem p;
        const gt_fwd_impl *im = i & 1 ? &gt_impl_user_f32 : &gt_impl_user_f16;
        gt_random_problem(&r, &p, GT_SWEEP_MAX_MACS);
        gt_set_layouts(&p, im);
        gt_run_case(im, &p, GT_EPI_USER, GT_INIT_DECIMAL, gt_rng_next(&r), 0);
    }
    gt_log_paths("user op");
}

/* The user op with a plain epilogue struct (alpha 1, no D tensors, no activation): kernels
 * with a fast path for the built-in plain store (the halo kernel's staged store) must still
 * call the op. The halo problems of the edge table, and random ones. */
Test(fwd, epi_user_op_plain, .timeout = 90)
{
    gt_rng r = gt_rng_make(0x05E8);
    size_t i;
    gt_require_gpu();
    gt_fail_count = 0;
    for (i = 0; i < sizeof gt_epi_problems / sizeof gt_epi_problems[0]; i++) {
        gconv_problem p;
        gt_edge_problem(&gt_epi_problems[i], &p);
        gt_set_layouts(&p, &gt_impl_user_f16);
        gt_run_case(&gt_impl_user_f16, &p, GT_EPI_USER_PLAIN, GT_INIT_DECIMAL, 0x05E80 + i, 0);
    }
    for (i = 0; i < 20; i++) {
        gconv_problem p;
        gt_random_problem(&r, &p, GT_SWEEP_MAX_MACS);
        gt_set_layouts(&p, &gt_impl_user_f16);
        gt_run_case(&gt_impl_user_f16, &p, GT_EPI_USER_PLAIN, GT_INIT_DECIMAL, gt_rng_next(&r),
                    0);
    }
    gt_log_paths("user op, plain struct");
}

/* ---- pinned tile --------------------------------------------------------------------------- */

/* Each TILED instantiation on random problems (half of them with channel counts a multiple of
 * 8 and GEMM-sized), several epilogues, fp32 also on tf32; problems a pinned vector kernel
 * cannot take (C not a multiple of the vector) must be refused by supports() with a reason,
 * and the launcher must refuse them with GCONV_ERR_ALIGNMENT. */
static void gt_tiled_sweep(int ti)
{
    const gt_fwd_impl *im = &gt_tiled[ti];
    gt_rng r = gt_rng_make(0x711ED00u + (uint64_t)ti);
    int i, ran = 0, refused = 0;
    gt_require_gpu();
    gt_fail_count = 0;
    for (i = 0; i < 30; i++) {
        gconv_problem p;
        int res, epi = i % GT_EPI_BUILTIN_COUNT;
        gt_random_problem(&r, &p, GT_SWEEP_MAX_MACS);
        if (i % 2 == 0) { /* vector-friendly channels, GEMM-sized */
            p.C = 8 * gt_rng_int(&r, 1, 12), p.K = 8 * gt_rng_int(&r, 1, 24);
            if (i % 4 == 0)
                p.K += gt_rng_int(&r, 1, 7); /* K not a multiple of the tile or vector */
            while (gt_macs(&p) > 6e6 && p.N > 1)
                p.N--;
            if (gt_macs(&p) > 6e6)
                continue;
        }
        gt_set_layouts(&p, im);
        res = gt_run_case(im, &p, epi, GT_INIT_DECIMAL, gt_rng_next(&r),
                          im->t == GCONV_F32 && i % 3 == 0);
        if (res == GT_CASE_UNSUPPORTED) {
            char why[256];
            gconv_fwd_args a;
            refused++;
            memset(&a, 0, sizeof a);
            a.in = (const void *)(uintptr_t)256, a.wei = (const void *)(uintptr_t)256;
            a.out = (void *)(uintptr_t)256, a.why = why, a.why_len = sizeof why;
            why[0] = '\0';
            cr_expect(!im->supports(&p, why, sizeof why) && why[0] != '\0',
                      "%s: supports() refused without a reason", im->name);
            /* the launcher refuses before touching the (fake, never dereferenced) pointers */
            cr_expect(im->run(&p, &a, 0) == GCONV_ERR_ALIGNMENT,
                      "%s: a problem supports() refuses is not refused with "
                      "GCONV_ERR_ALIGNMENT", im->name);
        } else {
            ran++;
        }
    }
    cr_log_info("%s: %d problems ran, %d refused by supports()", im->name, ran, refused);
    cr_expect(ran >= 8, "%s ran only %d of 30 problems", im->name, ran);
}

Test(fwd, tiled_f16_128x128, .timeout = 60) { gt_tiled_sweep(0); }
Test(fwd, tiled_bf16_64x128_gnhwc, .timeout = 60) { gt_tiled_sweep(1); }
Test(fwd, tiled_f16_64x64, .timeout = 60) { gt_tiled_sweep(2); }
Test(fwd, tiled_f32_128x32, .timeout = 60) { gt_tiled_sweep(3); }
Test(fwd, tiled_bf16_128x16, .timeout = 60) { gt_tiled_sweep(4); }
Test(fwd, tiled_f16_128x128_w4, .timeout = 60) { gt_tiled_sweep(5); }
Test(fwd, tiled_f16_128x128x64, .timeout = 60) { gt_tiled_sweep(6); }
Test(fwd, tiled_bf16_128x32_ngchw_gkcyx, .timeout = 60) { gt_tiled_sweep(7); }
Test(fwd, tiled_f32_64x64_gkcyx, .timeout = 60) { gt_tiled_sweep(8); }

/* ---- tensors over 2 GB ---------------------------------------------------------------------
 *
 * The input has more than 2^31 elements and more than 2^31 bytes (and so does the output),
 * filled on the device with integers in [-5, 5) that are a hash of the element index; the
 * weights are small integers too, so every sum is an exact integer (|sum| <= C*taps*25 < 2048,
 * exact in fp16, bf16 needs |sum| < 256 for exactness: bf16 is compared with its rounding).
 * Every output is checked for the poison on the device; a sample of outputs (corners, the
 * last elements, random ones) is recomputed on the host from the hash. */
static void gt_huge(const gt_fwd_impl *im, const gconv_problem *p0, int with_bias)
{
    gconv_problem p = *p0;
    gconv_dtype t = im->t;
    size_t es = gconv_dtype_size(t);
    int64_t n_in, n_wei, n_out;
    size_t need, free_b = 0, total_b = 0;
    void *d_in, *d_wei, *d_out, *h_wei, *h_bias = NULL, *d_bias = NULL;
    gconv_epilogue epi;
    gconv_fwd_args a;
    gconv_status s;
    char why[512], pstr[256];
    unsigned long long unwritten;
    const uint64_t seed = 0xB16B00B5u;
    gt_rng r = gt_rng_make(0x2B);
    gconv_act_strides si, so;
    gconv_wei_strides sw;
    int out_sp[3], i, bad = 0, checked = 0;
    size_t ws_size;
    void *ws = NULL;

    gt_require_gpu();
    gt_set_layouts(&p, im);
    gt_problem_str(&p, pstr, sizeof pstr);
    cr_assert(gconv_problem_check(&p, why, sizeof why) == GCONV_OK, "%s", why);
    n_in = gconv_in_elems(&p), n_wei = gconv_wei_elems(&p), n_out = gconv_out_elems(&p);
    cr_assert(n_in > ((int64_t)1 << 31) && n_in * (int64_t)es > ((int64_t)1 << 31),
              "the huge problem is not huge: %lld elements", (long long)n_in);
    ws_size = im->workspace_size(&p);
    need = (size_t)(n_in + n_out + n_wei) * es + ws_size + ((size_t)512 << 20);
    GT_CHECK(hipMemGetInfo(&free_b, &total_b));
    if (free_b < need)
        cr_skip_test("not enough GPU memory for the > 2 GB test: %zu MiB free, %zu MiB needed",
                     free_b >> 20, need >> 20);
    why[0] = '\0';
    cr_assert(im->supports(&p, why, sizeof why), "%s does not support %s: %s", im->name, pstr,
              why);

    d_in = gt_dev_alloc((size_t)n_in * es);
    d_out = gt_dev_alloc((size_t)n_out * es);
    if (ws_size)
        ws = gt_dev_alloc(ws_size);
    gt_dev_fill_hash(d_in, n_in, t, seed, -5, 10);
    GT_CHECK(hipMemset(d_out, 0xFF, (size_t)n_out * es));
    h_wei = gt_host_alloc((size_t)n_wei * es);
    gt_fill(t, h_wei, (size_t)n_wei, &r, GT_INIT_INT);
    d_wei = gt_dev_upload(h_wei, (size_t)n_wei * es);
    epi = gconv_epi_scale(1.0f);
    if (with_bias) {
        h_bias = gt_host_alloc((size_t)p.G * p.K * es);
        gt_fill(t, h_bias, (size_t)p.G * p.K, &r, GT_INIT_INT);
        d_bias = gt_dev_upload(h_bias, (size_t)p.G * p.K * es);
        gconv_epi_add_d(&epi, d_bias, gconv_bias_strides(&p), 1.0f);
    }
    GT_CHECK(hipDeviceSynchronize());

    memset(&a, 0, sizeof a);
    a.in = d_in, a.wei = d_wei, a.out = d_out, a.epi = with_bias ? &epi : NULL;
    a.workspace = ws, a.workspace_size = ws_size, a.why = why, a.why_len = sizeof why;
    s = im->run(&p, &a, 0);
    cr_assert(s == GCONV_OK, "%s refused %s: %s: %s", im->name, pstr, gconv_status_name(s), why);
    GT_CHECK_LAUNCH();
    GT_CHECK(hipDeviceSynchronize());

    unwritten = gt_dev_count_poison(d_out, n_out, t);
    cr_expect(unwritten == 0, "%s [%s]: %llu of %lld output elements were not written", im->name,
              pstr, unwritten, (long long)n_out);

    si = gconv_in_strides(&p), so = gconv_out_strides(&p), sw = gconv_weight_strides(&p);
    gconv_out_sizes(&p, out_sp);
    for (i = 0; i < 3000; i++) {
        int o[6], c, z, y, x, j;
        double acc = 0;
        float got, want;
        unsigned char raw[4];
        int64_t off;
        if (i < 64) { /* corners and the last elements of the buffer */
            o[0] = (i & 1) ? p.G - 1 : 0, o[1] = (i & 2) ? p.N - 1 : 0;
            o[2] = (i & 4) ? p.K - 1 : 0, o[3] = (i & 8) ? out_sp[0] - 1 : 0;
            o[4] = (i & 16) ? out_sp[1] - 1 : 0, o[5] = (i & 32) ? out_sp[2] - 1 : 0;
        } else {
            o[0] = gt_rng_int(&r, 0, p.G - 1), o[1] = gt_rng_int(&r, 0, p.N - 1);
            o[2] = gt_rng_int(&r, 0, p.K - 1), o[3] = gt_rng_int(&r, 0, out_sp[0] - 1);
            o[4] = gt_rng_int(&r, 0, out_sp[1] - 1), o[5] = gt_rng_int(&r, 0, out_sp[2] - 1);
            if (i < 200) /* bias towards the far end, where 32-bit offsets overflow */
                o[4] = out_sp[1] - 1 - gt_rng_int(&r, 0, out_sp[1] / 8);
        }
        for (c = 0; c < p.C; c++)
            for (z = 0; z < p.filter[0]; z++)
                for (y = 0; y < p.filter[1]; y++)
                    for (x = 0; x < p.filter[2]; x++) {
                        int pos[3], in_range = 1;
                        int tap[3];
                        tap[0] = z, tap[1] = y, tap[2] = x;
                        for (j = 0; j < 3; j++) {
                            pos[j] = o[3 + j] * p.stride[j] - p.pad_lo[j] + tap[j] * p.dilation[j];
                            in_range &= pos[j] >= 0 && pos[j] < p.in[j];
                        }
                        if (!in_range)
                            continue;
                        off = gconv_act_offset(&si, o[0], o[1], c, pos[0], pos[1], pos[2]);
                        acc += (double)gt_hash_int(seed, (uint64_t)off, -5, 10) *
                               gconv_load_f32(t, h_wei,
                                              (size_t)gconv_wei_offset(&sw, o[0], o[2], c, z,
                                                                       y, x));
                    }
        if (with_bias)
            acc += gconv_load_f32(t, h_bias, (size_t)o[0] * p.K + o[2]);
        off = gconv_act_offset(&so, o[0], o[1], o[2], o[3], o[4], o[5]);
        gt_dev_download(raw, (const unsigned char *)d_out + off * (int64_t)es, es);
        got = gconv_load_f32(t, raw, 0);
        {
            unsigned char wbuf[4];
            gconv_store_f32(t, wbuf, 0, (float)acc); /* the exact sum rounded to t once */
            want = gconv_load_f32(t, wbuf, 0);
        }
        checked++;
        if (got != want) {
            if (bad < 8)
                cr_expect_fail("%s [%s]: out(g %d, n %d, k %d, d %d, h %d, w %d) at element "
                               "offset %lld: got %g, want %g",
                               im->name, pstr, o[0], o[1], o[2], o[3], o[4], o[5],
                               (long long)off, (double)got, (double)want);
            bad++;
        }
    }
    cr_expect(bad == 0, "%s [%s]: %d of %d sampled outputs wrong", im->name, pstr, bad, checked);
    cr_log_info("%s [%s]: %d sampled outputs checked, %lld elements in, %lld out", im->name, pstr,
                checked, (long long)n_in, (long long)n_out);

    gt_dev_free(d_in);
    gt_dev_free(d_out);
    gt_dev_free(d_wei);
    gt_dev_free(d_bias);
    gt_dev_free(ws);
    free(h_wei);
    free(h_bias);
}

/* fp16 NHWGC: one image of 11586 x 11586 pixels x 16 channels = 2,147,766,336 elements
 * (4.3 GB), so offsets inside a single image pass 2^31; output the same size. */
Test(fwd, huge_f16_nhwgc, .timeout = 180)
{
    gconv_problem p;
    gconv_problem_2d(&p, 2, 1, 8, 8, 11586, 11586, 3, 3, 1, 1, 1, 1, 1, 1);
    gt_huge(&gt_impls[GT_T_F16][GT_FAM_NHWGC], &p, 1);
}

/* fp16 depthwise 3x3 NHWGC, G 64 (the direct depthwise kernel): 1 x 5800 x 5800 x 64 =
 * 2,152,960,000 elements in and out, with a bias. */
Test(fwd, huge_f16_depthwise, .timeout = 180)
{
    gconv_problem p;
    gconv_problem_2d(&p, 64, 1, 1, 1, 5800, 5800, 3, 3, 1, 1, 1, 1, 1, 1);
    gt_huge(&gt_impls[GT_T_F16][GT_FAM_NHWGC], &p, 1);
}

/* bf16 NGCHW/GKCYX, dense channels (the GEMM path): 1 x 32 x 8200 x 8200 = 2.15e9 elements,
 * stride 2 so the output is a quarter of it. |sums| reach 32*9*25: bf16 compares against
 * the exact sum rounded to bf16 once. */
Test(fwd, huge_bf16_ngchw_kcyx, .timeout = 180)
{
    gconv_problem p;
    gconv_problem_2d(&p, 1, 1, 32, 32, 8200, 8200, 3, 3, 2, 2, 1, 1, 1, 1);
    gt_huge(&gt_impls[GT_T_BF16][GT_FAM_NGCHW_KCYX], &p, 0);
}

/* ---- refusals ------------------------------------------------------------------------------
 *
 * Every refusal must return the exact status, give a reason, and launch nothing: the output,
 * poisoned before, still holds the poison after a device synchronisation. */

typedef struct gt_refusal_env {
    gconv_problem p;
    void *d_in, *d_wei;
    gt_guarded out;
    void *ws;
    size_t ws_size;
    void *d_res; /* a residual D tensor */
} gt_refusal_env;

static void gt_refusal_setup(gt_refusal_env *env, const gt_fwd_impl *im, int C, int K)
{
    gt_rng r = gt_rng_make(0x8EF);
    size_t es = gconv_dtype_size(im->t);
    void *h;
    int64_t n;
    gconv_problem_2d(&env->p, 2, 2, C, K, 9, 10, 3, 3, 1, 1, 1, 1, 1, 1);
    gt_set_layouts(&env->p, im);
    n = gconv_in_elems(&env->p);
    h = gt_host_alloc((size_t)n * es);
    gt_fill(im->t, h, (size_t)n, &r, GT_INIT_DECIMAL);
    env->d_in = gt_dev_upload(h, (size_t)n * es);
    free(h);
    n = gconv_wei_elems(&env->p);
    h = gt_host_alloc((size_t)n * es);
    gt_fill(im->t, h, (size_t)n, &r, GT_INIT_DECIMAL);
    env->d_wei = gt_dev_upload(h, (size_t)n * es);
    free(h);
    n = gconv_out_elems(&env->p);
    h = gt_host_alloc((size_t)n * es);
    gt_fill(im->t, h, (size_t)n, &r, GT_INIT_DECIMAL);
    env->d_res = gt_dev_upload(h, (size_t)n * es);
    free(h);
    /* a little more than the output, so problems with a larger output stay inside it */
    env->out = gt_guarded_alloc((size_t)n * es * 4);
    env->ws_size = im->workspace_size(&env->p);
    env->ws = env->ws_size ? gt_dev_alloc(env->ws_size) : NULL;
}

static gconv_fwd_args gt_refusal_args(gt_refusal_env *env, char *why, size_t len)
{
    gconv_fwd_args a;
    memset(&a, 0, sizeof a);
    a.in = env->d_in, a.wei = env->d_wei, a.out = env->out.p;
    a.workspace = env->ws, a.workspace_size = env->ws_size;
    a.why = why, a.why_len = len;
    return a;
}

static void gt_refusal_teardown(gt_refusal_env *env)
{
    gt_dev_free(env->d_in);
    gt_dev_free(env->d_wei);
    gt_dev_free(env->d_res);
    gt_dev_free(env->ws);
    gt_guarded_free(&env->out);
}

/* Call the launcher, expect status `want` with a reason, and that nothing was launched. */
static void gt_expect_refusal(const gt_fwd_impl *im, gt_refusal_env *env, const gconv_problem *p,
                              const gconv_fwd_args *a, gconv_status want, const char *what)
{
    char *why = a ? a->why : NULL;
    gconv_status s;
    unsigned long long untouched;
    long long first = 0;
    if (why)
        why[0] = '\0';
    s = im->run(p, a, 0);
    cr_expect(s == want, "%s: %s: expected %s, got %s (%s)", im->name, what,
              gconv_status_name(want), gconv_status_name(s), why ? why : "");
    if (why && s != GCONV_OK)
        cr_expect(why[0] != '\0', "%s: %s: refused with %s but no reason", im->name, what,
                  gconv_status_name(s));
    GT_CHECK(hipDeviceSynchronize());
    GT_CHECK(hipGetLastError());
    untouched = gt_dev_count_poison(env->out.p, (int64_t)(env->out.bytes / gconv_dtype_size(im->t)),
                                    im->t);
    cr_expect(untouched * gconv_dtype_size(im->t) == env->out.bytes,
              "%s: %s: the refused call wrote %llu output elements", im->name, what,
              (unsigned long long)(env->out.bytes / gconv_dtype_size(im->t) - untouched));
    cr_expect(gt_guarded_check(&env->out, &first) == 0,
              "%s: %s: the refused call wrote outside the output (byte %lld)", im->name, what,
              first);
}

Test(fwd, refuse_null, .timeout = 30)
{
    const gt_fwd_impl *im = &gt_impls[GT_T_F16][GT_FAM_NHWGC];
    gt_refusal_env env;
    gconv_fwd_args a;
    gconv_epilogue e;
    char why[256];
    gt_require_gpu();
    gt_refusal_setup(&env, im, 16, 16);
    a = gt_refusal_args(&env, why, sizeof why);
    gt_expect_refusal(im, &env, NULL, &a, GCONV_ERR_NULL, "null problem");
    gt_expect_refusal(im, &env, &env.p, NULL, GCONV_ERR_NULL, "null args");
    a = gt_refusal_args(&env, why, sizeof why), a.in = NULL;
    gt_expect_refusal(im, &env, &env.p, &a, GCONV_ERR_NULL, "null input");
    a = gt_refusal_args(&env, why, sizeof why), a.wei = NULL;
    gt_expect_refusal(im, &env, &env.p, &a, GCONV_ERR_NULL, "null weights");
    a = gt_refusal_args(&env, why, sizeof why);
    a.out = NULL;
    gt_expect_refusal(im, &env, &env.p, &a, GCONV_ERR_NULL, "null output");
    /* a D tensor with a null pointer (built by hand: gconv_epi_add_d refuses it) */
    e = gconv_epi_scale(1.0f);
    e.num_d = 1, e.beta[0] = 1.0f, e.d[0].data = NULL, e.d[0].strides = gconv_out_strides(&env.p);
    a = gt_refusal_args(&env, why, sizeof why), a.epi = &e;
    gt_expect_refusal(im, &env, &env.p, &a, GCONV_ERR_NULL, "null D tensor");
    /* why may be NULL: still the status, no crash */
    a = gt_refusal_args(&env, NULL, 0), a.in = NULL;
    gt_expect_refusal(im, &env, &env.p, &a, GCONV_ERR_NULL, "null input, no why buffer");
    gt_refusal_teardown(&env);
}

Test(fwd, refuse_problem, .timeout = 30)
{
    const gt_fwd_impl *im = &gt_impls[GT_T_F32][GT_FAM_NHWGC];
    gt_refusal_env env;
    gconv_fwd_args a;
    gconv_problem q;
    char why[256];
    gt_require_gpu();
    gt_refusal_setup(&env, im, 8, 8);
    a = gt_refusal_args(&env, why, sizeof why);
#define GT_BAD_PROBLEM(stmt, what)                                                               \
    do {                                                                                         \
        q = env.p;                                                                               \
        stmt;                                                                                    \
        gt_expect_refusal(im, &env, &q, &a, gconv_problem_check(&q, NULL, 0), what);             \
        cr_expect(gconv_problem_check(&q, NULL, 0) != GCONV_OK, "%s is not invalid", what);      \
    } while (0)
    GT_BAD_PROBLEM(q.ndim = 4, "ndim 4");
    GT_BAD_PROBLEM(q.G = 0, "G 0");
    GT_BAD_PROBLEM(q.C = -1, "C -1");
    GT_BAD_PROBLEM(q.stride[2] = 0, "stride 0");
    GT_BAD_PROBLEM(q.dilation[1] = 0, "dilation 0");
    GT_BAD_PROBLEM(q.pad_lo[1] = -1, "negative pad");
    GT_BAD_PROBLEM((q.filter[2] = 13, q.pad_lo[2] = 0, q.pad_hi[2] = 0), "empty output");
    GT_BAD_PROBLEM(q.in[0] = 2, "unused D axis not neutral");
    GT_BAD_PROBLEM(q.in_layout = GCONV_NDHWGC, "3D layout on a 2D problem");
    GT_BAD_PROBLEM(q.wei_layout = GCONV_NHWGC, "activation layout for the weights");
#undef GT_BAD_PROBLEM
    gt_refusal_teardown(&env);
}

/* A problem whose layouts are valid but of another family than the instantiation's: fwd.h
 * documents GCONV_ERR_LAYOUT. */
#define GT_LAYOUT_REFUSAL GCONV_ERR_LAYOUT

Test(fwd, refuse_layout, .timeout = 30)
{
    const gt_fwd_impl *im = &gt_impls[GT_T_F16][GT_FAM_NHWGC];
    gt_refusal_env env;
    gconv_fwd_args a;
    gconv_problem q;
    char why[256];
    gt_require_gpu();
    gt_refusal_setup(&env, im, 8, 8);
    a = gt_refusal_args(&env, why, sizeof why);
    q = env.p;
    gconv_problem_set_layouts(&q, GCONV_GNHWC, GCONV_GKYXC);
    gt_expect_refusal(im, &env, &q, &a, GT_LAYOUT_REFUSAL, "GNHWC problem, NHWGC instantiation");
    q = env.p;
    gconv_problem_set_layouts(&q, GCONV_NHWGC, GCONV_GKCYX);
    gt_expect_refusal(im, &env, &q, &a, GT_LAYOUT_REFUSAL, "GKCYX weights, GKYXC instantiation");
    q = env.p;
    q.out_layout = GCONV_NGCHW; /* output of another family than the input */
    gt_expect_refusal(im, &env, &q, &a, GT_LAYOUT_REFUSAL, "NGCHW output, NHWGC instantiation");
    /* and supports() says no with a reason */
    q = env.p;
    gconv_problem_set_layouts(&q, GCONV_NGCHW, GCONV_GKYXC);
    why[0] = '\0';
    cr_expect(im->supports(&q, why, sizeof why) == 0 && why[0] != '\0',
              "supports() accepts an NGCHW problem for an NHWGC instantiation");
    gt_refusal_teardown(&env);
}

Test(fwd, refuse_epilogue, .timeout = 30)
{
    const gt_fwd_impl *im = &gt_impls[GT_T_BF16][GT_FAM_NGCHW];
    gt_refusal_env env;
    gconv_fwd_args a;
    gconv_epilogue e;
    char why[256];
    int i;
    gt_require_gpu();
    gt_refusal_setup(&env, im, 8, 8);
    e = gconv_epi_scale(1.0f);
    for (i = 0; i < GCONV_MAX_D; i++)
        cr_assert(gconv_epi_add_d(&e, env.d_res, gconv_out_strides(&env.p), 0.5f) == GCONV_OK);
    e.num_d = GCONV_MAX_D + 1; /* too many D tensors */
    e.d[GCONV_MAX_D - 1].data = env.d_res;
    a = gt_refusal_args(&env, why, sizeof why), a.epi = &e;
    gt_expect_refusal(im, &env, &env.p, &a, GCONV_ERR_ARGUMENT, "5 D tensors");
    e.num_d = -1;
    gt_expect_refusal(im, &env, &env.p, &a, GCONV_ERR_ARGUMENT, "-1 D tensors");
    e.num_d = 0;
    e.act = gconv_clamp(2.0f, 1.0f);
    gt_expect_refusal(im, &env, &env.p, &a, GCONV_ERR_ARGUMENT, "reversed clamp");
    e.act.kind = (gconv_act_kind)7;
    gt_expect_refusal(im, &env, &env.p, &a, GCONV_ERR_ARGUMENT, "unknown activation");
    gt_refusal_teardown(&env);
}

/* The vectorised TILED instantiation refuses pointers it cannot load in vectors. */
Test(fwd, refuse_misaligned, .timeout = 30)
{
    const gt_fwd_impl *im = &gt_tiled[0];
    gt_refusal_env env;
    gconv_fwd_args a;
    char why[256];
    gt_require_gpu();
    gt_refusal_setup(&env, im, 64, 64);
    why[0] = '\0';
    cr_assert(im->supports(&env.p, why, sizeof why), "the tiled instantiation does not support "
              "the aligned problem: %s", why);
    a = gt_refusal_args(&env, why, sizeof why);
    a.in = (const char *)env.d_in + 2; /* one fp16 element off */
    gt_expect_refusal(im, &env, &env.p, &a, GCONV_ERR_ALIGNMENT, "input one element off");
    a = gt_refusal_args(&env, why, sizeof why);
    a.wei = (const char *)env.d_wei + 2;
    gt_expect_refusal(im, &env, &env.p, &a, GCONV_ERR_ALIGNMENT, "weights one element off");
    a = gt_refusal_args(&env, why, sizeof why);
    a.out = (char *)env.out.p + 2;
    gt_expect_refusal(im, &env, &env.p, &a, GCONV_ERR_ALIGNMENT, "output one element off");
    gt_refusal_teardown(&env);
}

/* ---- nothing written where it should not be ----------------------------------------------- */

/* Guard zones around the output stay poisoned, and the inputs, weights and D tensors are
 * unchanged, for a direct-kernel shape and a GEMM shape in each family. */
Test(fwd, poison_guard, .timeout = 60)
{
    static const gt_edge shapes[] = {
        {"depthwise", 2, 33, 1, 1, 1, {1, 7, 9}, {1, 3, 3}, {1, 2, 1}, {1, 1, 1}, {0, 1, 1},
         {0, 0, 1}},
        {"gemm", 2, 2, 2, 40, 72, {1, 9, 7}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 1, 1},
         {0, 1, 1}},
        {"3D few channels", 3, 5, 1, 3, 2, {3, 5, 4}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1},
         {0, 0, 0}, {1, 1, 1}},
    };
    int fi;
    size_t si;
    gt_require_gpu();
    for (fi = 0; fi < 4; fi++)
        for (si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
            const gt_fwd_impl *im = &gt_impls[GT_T_F16][fi];
            gt_rng r = gt_rng_make(0x9015 + fi * 8 + si);
            gconv_problem p;
            size_t es = 2;
            int64_t n_in, n_wei, n_out;
            void *h_in, *h_wei, *h_res, *h_chk, *d_in, *d_wei, *d_res, *ws = NULL;
            gt_guarded out;
            gconv_epilogue e;
            gconv_fwd_args a;
            gconv_status s;
            size_t ws_size, bad;
            long long first = 0;
            char why[256], pstr[256];
            unsigned long long unwritten;
            gt_edge_problem(&shapes[si], &p);
            gt_set_layouts(&p, im);
            gt_problem_str(&p, pstr, sizeof pstr);
            n_in = gconv_in_elems(&p), n_wei = gconv_wei_elems(&p), n_out = gconv_out_elems(&p);
            h_in = gt_host_alloc((size_t)n_in * es);
            h_wei = gt_host_alloc((size_t)n_wei * es);
            h_res = gt_host_alloc((size_t)n_out * es);
            h_chk = gt_host_alloc((size_t)(n_in > n_out ? n_in : n_out) * es +
                                  (size_t)n_wei * es);
            gt_fill(im->t, h_in, (size_t)n_in, &r, GT_INIT_DECIMAL);
            gt_fill(im->t, h_wei, (size_t)n_wei, &r, GT_INIT_DECIMAL);
            gt_fill(im->t, h_res, (size_t)n_out, &r, GT_INIT_DECIMAL);
            d_in = gt_dev_upload(h_in, (size_t)n_in * es);
            d_wei = gt_dev_upload(h_wei, (size_t)n_wei * es);
            d_res = gt_dev_upload(h_res, (size_t)n_out * es);
            out = gt_guarded_alloc((size_t)n_out * es);
            ws_size = im->workspace_size(&p);
            if (ws_size)
                ws = gt_dev_alloc(ws_size);
            e = gconv_epi_scale(1.0f);
            gconv_epi_add_d(&e, d_res, gconv_out_strides(&p), 1.0f);
            memset(&a, 0, sizeof a);
            a.in = d_in, a.wei = d_wei, a.out = out.p, a.epi = &e;
            a.workspace = ws, a.workspace_size = ws_size, a.why = why, a.why_len = sizeof why;
            s = im->run(&p, &a, 0);
            cr_expect(s == GCONV_OK, "%s [%s]: %s: %s", im->name, pstr, gconv_status_name(s), why);
            GT_CHECK_LAUNCH();
            GT_CHECK(hipDeviceSynchronize());
            bad = gt_guarded_check(&out, &first);
            cr_expect(bad == 0, "%s [%s] (%s): %zu guard bytes written, first at %lld", im->name,
                      pstr, shapes[si].what, bad, first);
            unwritten = gt_dev_count_poison(out.p, n_out, im->t);
            cr_expect(unwritten == 0, "%s [%s] (%s): %llu output elements not written",
                      im->name, pstr, shapes[si].what, unwritten);
            gt_dev_download(h_chk, d_in, (size_t)n_in * es);
            cr_expect(memcmp(h_chk, h_in, (size_t)n_in * es) == 0, "%s [%s]: input modified",
                      im->name, pstr);
            gt_dev_download(h_chk, d_wei, (size_t)n_wei * es);
            cr_expect(memcmp(h_chk, h_wei, (size_t)n_wei * es) == 0,
                      "%s [%s]: weights modified", im->name, pstr);
            gt_dev_download(h_chk, d_res, (size_t)n_out * es);
            cr_expect(memcmp(h_chk, h_res, (size_t)n_out * es) == 0,
                      "%s [%s]: D tensor modified", im->name, pstr);
            gt_dev_free(d_in);
            gt_dev_free(d_wei);
            gt_dev_free(d_res);
            gt_dev_free(ws);
            gt_guarded_free(&out);
            free(h_in);
            free(h_wei);
            free(h_res);
            free(h_chk);
        }
}
