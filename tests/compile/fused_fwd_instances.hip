/* tests/compile/fused_fwd_instances.hip: compile check of the fused grouped conv -> pointwise
 * conv kernels (gconv/fused_fwd.h).
 *
 * A header compiled on its own instantiates nothing; this translation unit instantiates every
 * variant once (each data type, each activation family, both weight families), and build.ninja
 * compiles it for every AMD and NVIDIA target with warnings as errors. The user-op,
 * user-activation and pinned-tile variants are in tests/compile/variant_instances.hip.
 */
#include "gconv.h"
#include "gconv/fused_fwd.h"

GCONV_FUSED_FWD(fused_instances_f16, GCONV_F16, GCONV_NHWGC, GCONV_GKYXC)
GCONV_FUSED_FWD(fused_instances_bf16, GCONV_BF16, GCONV_GNHWC, GCONV_GKYXC)
GCONV_FUSED_FWD(fused_instances_f32, GCONV_F32, GCONV_NGCHW, GCONV_GKCYX)

/* Reference every launcher so that nothing is dropped as unused. */
int fused_instances_supported(const gconv_problem *p, int K1)
{
    return fused_instances_f16_supports(p, K1, NULL, 0) +
           fused_instances_bf16_supports(p, K1, NULL, 0) +
           fused_instances_f32_supports(p, K1, NULL, 0);
}

gconv_status fused_instances_launch(const gconv_problem *p, int K1, const gconv_fused_fwd_args *a,
                                    int which, hipStream_t s)
{
    switch (which) {
    case 0: return fused_instances_f16(p, K1, a, s);
    case 1: return fused_instances_bf16(p, K1, a, s);
    default: return fused_instances_f32(p, K1, a, s);
    }
}
