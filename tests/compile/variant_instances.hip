/* tests/compile/variant_instances.hip: compile check of the variant instantiation macros of
 * every operation: the user-op, user-activation and pinned-tile forms of forward, backward data,
 * backward weight and the fused forward, once each.
 *
 * These forms instantiate the same kernel bodies as the default ones (tests/compile/
 * *_instances.hip, compiled for every target) with another epilogue function or a fixed tile,
 * so build.ninja compiles this file for one AMD target (gfx90a: matrix cores, 64-wide
 * wavefronts) and for every NVIDIA target, with warnings as errors: what the variants add is
 * target-independent, and compiling them for all four AMD targets took a quarter of CI's time.
 */
#include "gconv.h"
#include "gconv/bwd_data.h"
#include "gconv/bwd_weight.h"
#include "gconv/fused_fwd.h"

static __device__ float variant_instances_leaky(const gconv_epilogue *e, gconv_dtype t, float acc,
                                                int g, int n, int k, int d, int h, int w)
{
    float y = gconv_impl_epilogue_apply(e, t, acc, g, n, k, d, h, w);
    return y > 0.0f ? y : 0.125f * y;
}

static __device__ float variant_instances_clip(const gconv_epilogue *e, gconv_dtype t, float acc,
                                               int g, int n, int c, int d, int h, int w)
{
    float y = gconv_impl_epilogue_apply(e, t, acc, g, n, c, d, h, w);
    return y > 1.0f ? 1.0f : y < -1.0f ? -1.0f : y;
}

static __device__ float variant_instances_hswish(const gconv_epilogue *e, gconv_dtype t, float v,
                                                 int g, int n, int k, int d, int h, int w)
{
    float r = v + 3.0f;
    (void)e, (void)t, (void)g, (void)n, (void)k, (void)d, (void)h, (void)w;
    r = r < 0.0f ? 0.0f : r > 6.0f ? 6.0f : r;
    return v * r * (1.0f / 6.0f);
}

GCONV_FWD_USER_OP(variant_fwd_user, GCONV_F16, GCONV_NHWGC, GCONV_GKYXC, variant_instances_leaky)
GCONV_FWD_TILED(variant_fwd_tiled, GCONV_F16, GCONV_NHWGC, GCONV_GKYXC, GCONV_TILE_64x64x32)
GCONV_BWD_DATA_USER_OP(variant_bwd_data_user, GCONV_F16, GCONV_NHWGC, GCONV_GKCYX,
                       variant_instances_clip)
GCONV_BWD_DATA_TILED(variant_bwd_data_tiled, GCONV_BF16, GCONV_NHWGC, GCONV_GKYXC,
                     GCONV_TILE_64x64x32)
GCONV_BWD_WEIGHT_TILED(variant_bww_tiled, GCONV_F16, GCONV_NHWGC, GCONV_GKYXC,
                       GCONV_TILE_128x64x32)
GCONV_FUSED_FWD_USER_OP(variant_fused_user, GCONV_F16, GCONV_NHWGC, GCONV_GKYXC,
                        variant_instances_leaky)
GCONV_FUSED_FWD_USER_ACT(variant_fused_act, GCONV_BF16, GCONV_NHWGC, GCONV_GKYXC,
                         variant_instances_hswish)
GCONV_FUSED_FWD_TILED(variant_fused_tiled, GCONV_F32, GCONV_NHWGC, GCONV_GKYXC,
                      GCONV_FUSED_TILE_128x64)

/* Reference every launcher so that nothing is dropped as unused. */
int variant_instances_supported(const gconv_problem *p, int K1)
{
    return variant_fwd_user_supports(p, NULL, 0) + variant_fwd_tiled_supports(p, NULL, 0) +
           variant_bwd_data_user_supports(p, NULL, 0) +
           variant_bwd_data_tiled_supports(p, NULL, 0) +
           (int)variant_bwd_data_tiled_workspace_size(p) +
           variant_bww_tiled_supports(p, NULL, 0) +
           variant_fused_user_supports(p, K1, NULL, 0) +
           variant_fused_act_supports(p, K1, NULL, 0) +
           variant_fused_tiled_supports(p, K1, NULL, 0);
}

size_t variant_instances_workspace(const gconv_problem *p, const gconv_bwd_weight_args *a)
{
    return variant_bww_tiled_workspace_size(p, a);
}

gconv_status variant_instances_launch(const gconv_problem *p, int K1, const void *args, int which,
                                      hipStream_t s)
{
    switch (which) {
    case 0: return variant_fwd_user(p, (const gconv_fwd_args *)args, s);
    case 1: return variant_fwd_tiled(p, (const gconv_fwd_args *)args, s);
    case 2: return variant_bwd_data_user(p, (const gconv_bwd_data_args *)args, s);
    case 3: return variant_bwd_data_tiled(p, (const gconv_bwd_data_args *)args, s);
    case 4: return variant_bww_tiled(p, (const gconv_bwd_weight_args *)args, s);
    case 5: return variant_fused_user(p, K1, (const gconv_fused_fwd_args *)args, s);
    case 6: return variant_fused_act(p, K1, (const gconv_fused_fwd_args *)args, s);
    default: return variant_fused_tiled(p, K1, (const gconv_fused_fwd_args *)args, s);
    }
}
