/* gconv.h: grouped-convolution GPU kernels for HIP, as a header-only C library.
 *
 * WHAT IT IS
 *   Forward, backward-data and backward-weight grouped convolutions in 1D, 2D and 3D, and the
 *   fused grouped conv -> pointwise conv forward (depthwise separable, intermediate on chip), for
 *   fp32, fp16 and bf16 (fp32 accumulation), in the NHWGC / GNHWC / NGCHW activation and
 *   GKYXC / GKCYX weight layout families, with a fused epilogue (scale, up to four extra "D"
 *   tensors such as bias or residual, ReLU / clamp, or your own device function). There is no
 *   prebuilt library: one macro line instantiates an operation, and its kernels and launcher
 *   compile into your translation unit. The same source builds for AMD GPUs (hipcc) and for
 *   NVIDIA GPUs (nvcc). README.md lists which operations exist today.
 *
 * USAGE (the forward operation; the others follow the same pattern)
 *     #include "gconv.h"
 *     GCONV_FWD(fwd_f16, GCONV_F16, GCONV_NHWGC, GCONV_GKYXC)   one line: kernels + launcher
 *
 *     gconv_problem p;   G 32, N 64, C = K = 4 per group, 56x56, 3x3, stride 1, pad 1
 *     gconv_problem_2d(&p, 32, 64, 4, 4, 56, 56, 3, 3, 1, 1, 1, 1, 1, 1);
 *     char why[256];
 *     gconv_fwd_args a = {0};
 *     a.in = d_x; a.wei = d_w; a.out = d_y; a.why = why; a.why_len = sizeof why;
 *     gconv_status s = fwd_f16(&p, &a, stream);          asynchronous on stream
 *     if (s != GCONV_OK) fprintf(stderr, "%s\n", why);   the reason, in words
 *
 *   Compile with  hipcc -x hip --offload-arch=gfx90a ...  or  nvcc -x cu -arch=sm_90 ...
 *   On H100 / H200 prefer  nvcc -x cu -gencode arch=compute_90a,code=sm_90a ...: only that
 *   target has the wgmma / tensor-copy kernels of the dense forward (gconv/igemm_ws.h); plain
 *   sm_90 builds run the same problems on slower mma.sync kernels.
 *   Host-only code (problem setup, sizes, layouts) may include gconv/problem.h, layout.h,
 *   epilogue.h and types.h alone: they are plain C11.
 *
 * CONFIGURATION MACROS (define before including gconv.h)
 *   GCONV_USE_HIP_ON_CUDA   under nvcc, include the real <hip/hip_runtime.h> (a ROCm
 *                           HIP-on-CUDA install whose NVIDIA headers match your CUDA) instead of
 *                           gconv's own small mapping of HIP names onto the CUDA runtime.
 *   Per-instantiation choices (data type, layouts, tile, user epilogue) are macro arguments.
 *
 * ERROR MODEL
 *   Every launcher returns a gconv_status (gconv/problem.h; gconv_status_string gives its
 *   message). It validates everything (problem, layouts against the instantiation, pointers,
 *   alignment, workspace, epilogue) before launching anything, and on refusal writes the
 *   reason in words into the caller's buffer; the *_supports query answers the same question
 *   without launching. gconv never prints, exits, aborts, allocates or synchronises: launches
 *   are asynchronous on your stream, workspace sizes are queried and the memory is yours to
 *   pass in, and a failed launch reported by the runtime comes back as GCONV_ERR_RUNTIME.
 *
 * This file is only a list of includes: host description first, then the device side, then
 * one header per operation.
 */
#ifndef GCONV_UMBRELLA_H
#define GCONV_UMBRELLA_H

/* the problem description (plain C11) */
#include "gconv/types.h"
#include "gconv/problem.h"
#include "gconv/layout.h"
#include "gconv/epilogue.h"

/* the device side: HIP or HIP names on CUDA, conversions, the device epilogue */
#include "gconv/platform.h"
#include "gconv/device.h"

/* the operations, one header each */
#include "gconv/fwd.h"
#include "gconv/bwd_data.h"
#include "gconv/bwd_weight.h"
#include "gconv/fused_fwd.h"

#endif /* GCONV_UMBRELLA_H */
