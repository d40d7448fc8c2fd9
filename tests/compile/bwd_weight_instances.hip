/* tests/compile/bwd_weight_instances.hip: compile check of the backward-weight kernels.
 *
 * gconv/bwd_weight.h compiled on its own instantiates nothing; this translation unit
 * instantiates each data type, each activation family (NHWGC with GKYXC, GNHWC with GKYXC,
 * NGCHW with GKCYX, NGCHW with GKYXC) and the bf16-in / fp32-out variant once, and build.ninja
 * compiles it for every AMD and NVIDIA target with warnings as errors. The pinned-tile variant
 * is in tests/compile/variant_instances.hip.
 */
#include "gconv/bwd_weight.h"

GCONV_BWD_WEIGHT(bww_instances_f16, GCONV_F16, GCONV_NHWGC, GCONV_GKYXC)
GCONV_BWD_WEIGHT(bww_instances_bf16, GCONV_BF16, GCONV_GNHWC, GCONV_GKYXC)
GCONV_BWD_WEIGHT(bww_instances_f32, GCONV_F32, GCONV_NGCHW, GCONV_GKCYX)
GCONV_BWD_WEIGHT(bww_instances_f32y, GCONV_F32, GCONV_NGCHW, GCONV_GKYXC)
GCONV_BWD_WEIGHT_OUT(bww_instances_bf16f32, GCONV_BF16, GCONV_F32, GCONV_NHWGC, GCONV_GKYXC)

/* Reference every launcher so that nothing is dropped as unused. */
int bww_instances_supported(const gconv_problem *p)
{
    return bww_instances_f16_supports(p, NULL, 0) + bww_instances_bf16_supports(p, NULL, 0) +
           bww_instances_f32_supports(p, NULL, 0) + bww_instances_f32y_supports(p, NULL, 0) +
           bww_instances_bf16f32_supports(p, NULL, 0);
}

size_t bww_instances_workspace(const gconv_problem *p, const gconv_bwd_weight_args *a)
{
    return bww_instances_f16_workspace_size(p, a) + bww_instances_bf16_workspace_size(p, a) +
           bww_instances_f32_workspace_size(p, a) + bww_instances_f32y_workspace_size(p, a) +
           bww_instances_bf16f32_workspace_size(p, a);
}

gconv_status bww_instances_launch(const gconv_problem *p, const gconv_bwd_weight_args *a,
                                  int which, hipStream_t s)
{
    switch (which) {
    case 0: return bww_instances_f16(p, a, s);
    case 1: return bww_instances_bf16(p, a, s);
    case 2: return bww_instances_f32(p, a, s);
    case 3: return bww_instances_f32y(p, a, s);
    default: return bww_instances_bf16f32(p, a, s);
    }
}
