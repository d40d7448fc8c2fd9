/* gconv/device.h: device-side building blocks shared by every kernel.
 *
 * What is here:
 *   - data-type tokens (GCONV_F32, GCONV_F16, GCONV_BF16 as written in instantiation macros)
 *     mapped at compile time to storage types and conversions:
 *         GCONV_STORAGE(T)         float, gconv_f16 or gconv_bf16
 *         GCONV_TO_FLOAT(T, v)     storage -> float (device)
 *         GCONV_FROM_FLOAT(T, f)   float -> storage, round to nearest even (device)
 *     using the hardware conversions of each platform;
 *   - gconv_impl_dev_load: a run-time typed load, for epilogue D tensors;
 *   - gconv_impl_epilogue_apply: the built-in epilogue of gconv/epilogue.h on device.
 *
 * Include through gconv.h; needs a HIP or CUDA compiler.
 */
#ifndef GCONV_DEVICE_H
#define GCONV_DEVICE_H

#include "epilogue.h"
#include "layout.h"
#include "platform.h"
#include "types.h"

#if defined(GCONV_PLATFORM_CUDA)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#endif

#define GCONV_IMPL_CAT2(a, b) a##b
#define GCONV_IMPL_CAT(a, b) GCONV_IMPL_CAT2(a, b)

#define GCONV_IMPL_STORAGE_GCONV_F32 float
#define GCONV_IMPL_STORAGE_GCONV_F16 gconv_f16
#define GCONV_IMPL_STORAGE_GCONV_BF16 gconv_bf16
#define GCONV_IMPL_SUFFIX_GCONV_F32 f32
#define GCONV_IMPL_SUFFIX_GCONV_F16 f16
#define GCONV_IMPL_SUFFIX_GCONV_BF16 bf16

#define GCONV_STORAGE(T) GCONV_IMPL_CAT(GCONV_IMPL_STORAGE_, T)
#define GCONV_TYPE_SUFFIX(T) GCONV_IMPL_CAT(GCONV_IMPL_SUFFIX_, T)
#define GCONV_TO_FLOAT(T, v) GCONV_IMPL_CAT(gconv_impl_to_float_, GCONV_TYPE_SUFFIX(T))(v)
#define GCONV_FROM_FLOAT(T, f) GCONV_IMPL_CAT(gconv_impl_from_float_, GCONV_TYPE_SUFFIX(T))(f)

static __device__ __forceinline__ float gconv_impl_to_float_f32(float v)
{
    return v;
}
static __device__ __forceinline__ float gconv_impl_from_float_f32(float f)
{
    return f;
}

static __device__ __forceinline__ float gconv_impl_to_float_f16(gconv_f16 v)
{
#if defined(GCONV_PLATFORM_CUDA)
    return __half2float(__ushort_as_half(v.bits));
#else
    return (float)__builtin_bit_cast(_Float16, v.bits);
#endif
}

static __device__ __forceinline__ gconv_f16 gconv_impl_from_float_f16(float f)
{
    gconv_f16 r;
#if defined(GCONV_PLATFORM_CUDA)
    r.bits = __half_as_ushort(__float2half_rn(f));
#else
    r.bits = __builtin_bit_cast(unsigned short, (_Float16)f);
#endif
    return r;
}

/* bf16 widening is a shift; narrowing is the round-to-nearest-even of gconv/types.h (a few
 * integer operations), except on CUDA where the hardware instruction does the same. */
static __device__ __forceinline__ float gconv_impl_to_float_bf16(gconv_bf16 v)
{
    return __uint_as_float((unsigned)v.bits << 16);
}

static __device__ __forceinline__ gconv_bf16 gconv_impl_from_float_bf16(float f)
{
#if defined(GCONV_PLATFORM_CUDA)
    gconv_bf16 r;
    r.bits = __bfloat16_as_ushort(__float2bfloat16_rn(f));
    return r;
#else
    return gconv_f32_to_bf16(f);
#endif
}

/* A load whose type is known only at run time (uniform across the grid, so the branch is
 * free); used for the epilogue's D tensors. */
static __device__ __forceinline__ float gconv_impl_dev_load(gconv_dtype t, const void *p,
                                                            int64_t i)
{
    if (t == GCONV_F16)
        return gconv_impl_to_float_f16(((const gconv_f16 *)p)[i]);
    if (t == GCONV_BF16)
        return gconv_impl_to_float_bf16(((const gconv_bf16 *)p)[i]);
    return ((const float *)p)[i];
}

/* The epilogue function type: gconv_impl_epilogue_apply or a user op (same signature). */
typedef float (*gconv_impl_epi_fn)(const gconv_epilogue *, gconv_dtype, float, int, int, int,
                                   int, int, int);

/* The built-in epilogue y = act(alpha*acc + sum beta_i * D_i) for the output element at
 * logical position (g, n, k, d, h, w); D tensors have element type t. */
static __device__ __forceinline__ float gconv_impl_epilogue_apply(const gconv_epilogue *e,
                                                                  gconv_dtype t, float acc, int g,
                                                                  int n, int k, int d, int h,
                                                                  int w)
{
    float y = e->alpha * acc;
    int i;
    for (i = 0; i < e->num_d; i++)
        y += e->beta[i] *
             gconv_impl_dev_load(t, e->d[i].data, gconv_act_offset(&e->d[i].strides, g, n, k, d, h, w));
    return gconv_act_apply(e->act, y);
}

#endif /* GCONV_DEVICE_H */
