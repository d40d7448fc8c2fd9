/* tests/compile/bwd_data_instances.hip: compile check of the backward-data kernels.
 *
 * Instantiates each data type and each layout family of gconv/bwd_data.h once; build.ninja
 * compiles it for every AMD and NVIDIA target with warnings as errors. Kept lean: one
 * instantiation per variant; the user-op and pinned-tile variants are in
 * tests/compile/variant_instances.hip.
 */
#include "gconv/bwd_data.h"

GCONV_BWD_DATA(bwd_data_instances_f16, GCONV_F16, GCONV_NHWGC, GCONV_GKYXC)
GCONV_BWD_DATA(bwd_data_instances_bf16, GCONV_BF16, GCONV_GNHWC, GCONV_GKYXC)
GCONV_BWD_DATA(bwd_data_instances_f32, GCONV_F32, GCONV_NGCHW, GCONV_GKCYX)

/* Reference every launcher so that nothing is dropped as unused. */
int bwd_data_instances_supported(const gconv_problem *p)
{
    return bwd_data_instances_f16_supports(p, NULL, 0) +
           bwd_data_instances_bf16_supports(p, NULL, 0) +
           bwd_data_instances_f32_supports(p, NULL, 0) +
           (int)bwd_data_instances_f16_workspace_size(p);
}

gconv_status bwd_data_instances_launch(const gconv_problem *p, const gconv_bwd_data_args *a,
                                       int which, hipStream_t s)
{
    switch (which) {
    case 0: return bwd_data_instances_f16(p, a, s);
    case 1: return bwd_data_instances_bf16(p, a, s);
    default: return bwd_data_instances_f32(p, a, s);
    }
}
