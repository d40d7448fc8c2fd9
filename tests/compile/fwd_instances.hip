/* tests/compile/fwd_instances.hip: compile check of the forward kernels themselves.
 *
 * A header compiled on its own (tests/compile/header.c) instantiates nothing, so the kernels in
 * gconv/fwd.h, igemm.h, igemm_halo.h and direct_fwd.h are only compiled where an operation is
 * instantiated. This translation unit instantiates each data type and each layout family once,
 * and build.ninja compiles it for every AMD and NVIDIA target with warnings as errors. It is cheap next to tests/gpu_fwd.hip, which builds
 * only where a GPU will run it (see tools/test). The user-op and pinned-tile variants are in
 * tests/compile/variant_instances.hip.
 */
#include "gconv.h"

GCONV_FWD(fwd_instances_f16, GCONV_F16, GCONV_NHWGC, GCONV_GKYXC)
GCONV_FWD(fwd_instances_bf16, GCONV_BF16, GCONV_GNHWC, GCONV_GKYXC)
GCONV_FWD(fwd_instances_f32, GCONV_F32, GCONV_NGCHW, GCONV_GKCYX)

/* Reference every launcher so that nothing is dropped as unused. */
int fwd_instances_supported(const gconv_problem *p)
{
    return fwd_instances_f16_supports(p, NULL, 0) + fwd_instances_bf16_supports(p, NULL, 0) +
           fwd_instances_f32_supports(p, NULL, 0);
}

gconv_status fwd_instances_launch(const gconv_problem *p, const gconv_fwd_args *a, int which,
                                  hipStream_t s)
{
    switch (which) {
    case 0: return fwd_instances_f16(p, a, s);
    case 1: return fwd_instances_bf16(p, a, s);
    default: return fwd_instances_f32(p, a, s);
    }
}
