/* tests/compile/bwd_data_instances.hip: compile check of the backward-data kernels.
 *
 * Instantiates each data type, each layout family, the user-op and the pinned-tile variants of
 * gconv/bwd_data.h once; build.ninja compiles it for every AMD and NVIDIA target with
 * warnings as errors. Kept lean: one instantiation per variant.
 */
#include "gconv/bwd_data.h"

static __device__ float bwd_data_instances_clip(const gconv_epilogue *e, gconv_dtype t, float acc,
                                                int g, int n, int c, int d, int h, int w)
{
    float y = gconv_impl_epilogue_apply(e, t, acc, g, n, c, d, h, w);
    return y > 1.0f ? 1.0f : y < -1.0f ? -1.0f : y;
}

GCONV_BWD_DATA(bwd_data_instances_f16, GCONV_F16, GCONV_NHWGC, GCONV_GKYXC)
GCONV_BWD_DATA(bwd_data_instances_bf16, GCONV_BF16, GCONV_GNHWC, GCONV_GKYXC)
GCONV_BWD_DATA(bwd_data_instances_f32, GCONV_F32, GCONV_NGCHW, GCONV_GKCYX)
GCONV_BWD_DATA_USER_OP(bwd_data_instances_user, GCONV_F16, GCONV_NHWGC, GCONV_GKCYX,
                       bwd_data_instances_clip)
GCONV_BWD_DATA_TILED(bwd_data_instances_tiled, GCONV_BF16, GCONV_NHWGC, GCONV_GKYXC,
                     GCONV_TILE_64x64x32)

/* Reference every launcher so that nothing is dropped as unused. */
int bwd_data_instances_supported(const gconv_problem *p)
{
    return bwd_data_instances_f16_supports(p, NULL, 0) +
           bwd_data_instances_bf16_supports(p, NULL, 0) +
           bwd_data_instances_f32_supports(p, NULL, 0) +
           bwd_data_instances_user_supports(p, NULL, 0) +
           bwd_data_instances_tiled_supports(p, NULL, 0) +
           (int)bwd_data_instances_f16_workspace_size(p) +
           (int)bwd_data_instances_tiled_workspace_size(p);
}

gconv_status bwd_data_instances_launch(const gconv_problem *p, const gconv_bwd_data_args *a,
                                       int which, hipStream_t s)
{
    switch (which) {
    case 0: return bwd_data_instances_f16(p, a, s);
    case 1: return bwd_data_instances_bf16(p, a, s);
    case 2: return bwd_data_instances_f32(p, a, s);
    case 3: return bwd_data_instances_user(p, a, s);
    default: return bwd_data_instances_tiled(p, a, s);
    }
}
