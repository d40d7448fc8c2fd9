/* tests/compile/fused_fwd_instances.hip: compile check of the fused grouped conv -> pointwise
 * conv kernels (gconv/fused_fwd.h).
 *
 * A header compiled on its own instantiates nothing; this translation unit instantiates every
 * variant once (each data type, each activation family, both weight families, the user-op,
 * user-activation and pinned-tile variants), and build.ninja compiles it for every AMD and
 * NVIDIA target with warnings as errors.
 */
#include "gconv.h"
#include "gconv/fused_fwd.h"

static __device__ float fused_instances_leaky(const gconv_epilogue *e, gconv_dtype t, float acc,
                                              int g, int n, int k, int d, int h, int w)
{
    float y = gconv_impl_epilogue_apply(e, t, acc, g, n, k, d, h, w);
    return y > 0.0f ? y : 0.125f * y;
}

static __device__ float fused_instances_hswish(const gconv_epilogue *e, gconv_dtype t, float v,
                                               int g, int n, int k, int d, int h, int w)
{
    float r = v + 3.0f;
    (void)e, (void)t, (void)g, (void)n, (void)k, (void)d, (void)h, (void)w;
    r = r < 0.0f ? 0.0f : r > 6.0f ? 6.0f : r;
    return v * r * (1.0f / 6.0f);
}

GCONV_FUSED_FWD(fused_instances_f16, GCONV_F16, GCONV_NHWGC, GCONV_GKYXC)
GCONV_FUSED_FWD(fused_instances_bf16, GCONV_BF16, GCONV_GNHWC, GCONV_GKYXC)
GCONV_FUSED_FWD(fused_instances_f32, GCONV_F32, GCONV_NGCHW, GCONV_GKCYX)
GCONV_FUSED_FWD_USER_OP(fused_instances_user, GCONV_F16, GCONV_NHWGC, GCONV_GKYXC,
                        fused_instances_leaky)
GCONV_FUSED_FWD_USER_ACT(fused_instances_act, GCONV_BF16, GCONV_NHWGC, GCONV_GKYXC,
                         fused_instances_hswish)
GCONV_FUSED_FWD_TILED(fused_instances_tiled, GCONV_F32, GCONV_NHWGC, GCONV_GKYXC,
                      GCONV_FUSED_TILE_128x64)

/* Reference every launcher so that nothing is dropped as unused. */
int fused_instances_supported(const gconv_problem *p, int K1)
{
    return fused_instances_f16_supports(p, K1, NULL, 0) +
           fused_instances_bf16_supports(p, K1, NULL, 0) +
           fused_instances_f32_supports(p, K1, NULL, 0) +
           fused_instances_user_supports(p, K1, NULL, 0) +
           fused_instances_act_supports(p, K1, NULL, 0) +
           fused_instances_tiled_supports(p, K1, NULL, 0);
}

gconv_status fused_instances_launch(const gconv_problem *p, int K1, const gconv_fused_fwd_args *a,
                                    int which, hipStream_t s)
{
    switch (which) {
    case 0: return fused_instances_f16(p, K1, a, s);
    case 1: return fused_instances_bf16(p, K1, a, s);
    case 2: return fused_instances_f32(p, K1, a, s);
    case 3: return fused_instances_user(p, K1, a, s);
    case 4: return fused_instances_act(p, K1, a, s);
    default: return fused_instances_tiled(p, K1, a, s);
    }
}
