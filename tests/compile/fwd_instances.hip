/* tests/compile/fwd_instances.hip: compile check of the forward kernels themselves.
 *
 * A header compiled on its own (tests/compile/header.c) instantiates nothing, so the kernels in
 * gconv/fwd.h, igemm.h, igemm_halo.h and direct_fwd.h are only compiled where an operation is
 * instantiated. This translation unit instantiates each data type, each layout family, the
 * user-op and the pinned-tile variants once, and build.ninja compiles it for every AMD and
 * NVIDIA target with warnings as errors. It is cheap next to tests/gpu_fwd.hip, which builds
 * only where a GPU will run it (see tools/test).
 */
#include "gconv.h"

static __device__ float fwd_instances_leaky(const gconv_epilogue *e, gconv_dtype t, float acc,
                                            int g, int n, int k, int d, int h, int w)
{
    float y = gconv_impl_epilogue_apply(e, t, acc, g, n, k, d, h, w);
    return y > 0.0f ? y : 0.125f * y;
}

GCONV_FWD(fwd_instances_f16, GCONV_F16, GCONV_NHWGC, GCONV_GKYXC)
GCONV_FWD(fwd_instances_bf16, GCONV_BF16, GCONV_GNHWC, GCONV_GKYXC)
GCONV_FWD(fwd_instances_f32, GCONV_F32, GCONV_NGCHW, GCONV_GKCYX)
GCONV_FWD_USER_OP(fwd_instances_user, GCONV_F16, GCONV_NHWGC, GCONV_GKYXC, fwd_instances_leaky)
GCONV_FWD_TILED(fwd_instances_tiled, GCONV_F16, GCONV_NHWGC, GCONV_GKYXC, GCONV_TILE_64x64x32)

/* Reference every launcher so that nothing is dropped as unused. */
int fwd_instances_supported(const gconv_problem *p)
{
    return fwd_instances_f16_supports(p, NULL, 0) + fwd_instances_bf16_supports(p, NULL, 0) +
           fwd_instances_f32_supports(p, NULL, 0) + fwd_instances_user_supports(p, NULL, 0) +
           fwd_instances_tiled_supports(p, NULL, 0);
}

gconv_status fwd_instances_launch(const gconv_problem *p, const gconv_fwd_args *a, int which,
                                  hipStream_t s)
{
    switch (which) {
    case 0: return fwd_instances_f16(p, a, s);
    case 1: return fwd_instances_bf16(p, a, s);
    case 2: return fwd_instances_f32(p, a, s);
    case 3: return fwd_instances_user(p, a, s);
    default: return fwd_instances_tiled(p, a, s);
    }
}
