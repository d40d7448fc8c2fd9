/* gconv/types.h: element types and conversions.
 *
 * What is here: the three storage types gconv computes with (fp32, fp16, bf16), the
 * gconv_dtype tag that names them at run time, their sizes, and exact conversions between
 * float and the two 16-bit formats (round to nearest even; NaN stays NaN, infinities and
 * subnormals are handled), usable from host C11 and from device code (GCONV_HD).
 *
 * The 16-bit types are structs around the bit pattern so that they cannot be mixed up with
 * integers or with each other by accident. Kernels that care about speed convert with the
 * hardware instructions in gconv/platform.h; these functions are the portable definition and
 * what the host side (reference, tests) uses.
 *
 * Compiles as C11 (gcc -std=c11 -Wall -Wextra -pedantic) and as HIP/CUDA device code.
 */
#ifndef GCONV_TYPES_H
#define GCONV_TYPES_H

#include <stddef.h>
#include <stdint.h>

/* GCONV_HD marks functions usable on host and device when a GPU compiler reads the file. */
#if defined(__HIPCC__) || defined(__CUDACC__)
#define GCONV_HD __host__ __device__
#else
#define GCONV_HD
#endif

/* The data types. GCONV_F32 is 0 so that a zeroed field means fp32. */
typedef enum gconv_dtype { GCONV_F32 = 0, GCONV_F16 = 1, GCONV_BF16 = 2 } gconv_dtype;

typedef struct gconv_f16 { uint16_t bits; } gconv_f16;
typedef struct gconv_bf16 { uint16_t bits; } gconv_bf16;

static inline GCONV_HD size_t gconv_dtype_size(gconv_dtype t)
{
    return t == GCONV_F32 ? 4u : 2u;
}

static inline const char *gconv_dtype_name(gconv_dtype t)
{
    return t == GCONV_F32 ? "fp32" : t == GCONV_F16 ? "fp16" : t == GCONV_BF16 ? "bf16" : "?";
}

static inline GCONV_HD uint32_t gconv_impl_f32_bits(float f)
{
    /* union punning: defined in C11, and supported by hipcc and nvcc in device code, where
     * memcpy is not available on every platform */
    union { float f; uint32_t u; } v;
    v.f = f;
    return v.u;
}

static inline GCONV_HD float gconv_impl_f32_from_bits(uint32_t u)
{
    union { float f; uint32_t u; } v;
    v.u = u;
    return v.f;
}

/* fp16 (1 sign, 5 exponent bits with bias 15, 10 mantissa bits) to float: exact. */
static inline GCONV_HD float gconv_f16_to_f32(gconv_f16 h)
{
    uint32_t sign = (uint32_t)(h.bits & 0x8000u) << 16;
    uint32_t e = (h.bits >> 10) & 0x1fu;
    uint32_t m = h.bits & 0x3ffu;
    uint32_t u;
    if (e == 0x1f) {
        u = sign | 0x7f800000u | (m << 13); /* Inf, or NaN keeping its payload */
    } else if (e == 0) {
        if (m == 0) {
            u = sign;
        } else {
            /* subnormal m * 2^-24: shift m up until its leading one sits at bit 10 */
            uint32_t fe = 113; /* float exponent of 2^-14, the smallest normal fp16 */
            while (!(m & 0x400u)) {
                m <<= 1;
                fe--;
            }
            u = sign | (fe << 23) | ((m & 0x3ffu) << 13);
        }
    } else {
        u = sign | ((e + 112u) << 23) | (m << 13); /* rebias 15 -> 127 */
    }
    return gconv_impl_f32_from_bits(u);
}

/* float to fp16, round to nearest even; overflow gives Inf, NaN gives a quiet NaN. */
static inline GCONV_HD gconv_f16 gconv_f32_to_f16(float f)
{
    uint32_t x = gconv_impl_f32_bits(f);
    uint32_t sign = (x >> 16) & 0x8000u;
    uint32_t ax = x & 0x7fffffffu;
    uint32_t h;
    gconv_f16 r;
    if (ax >= 0x7f800000u) {
        h = ax > 0x7f800000u ? (0x7e00u | ((ax >> 13) & 0x3ffu)) : 0x7c00u;
    } else if (ax >= 0x477ff000u) {
        h = 0x7c00u; /* |f| >= 65520 rounds to Inf */
    } else if (ax < 0x38800000u) {
        /* below 2^-14: an fp16 subnormal, counted in units of 2^-24 */
        if (ax < 0x33000000u) {
            h = 0; /* below 2^-25, or exactly 2^-25 which ties to the even 0 */
        } else {
            uint32_t e = ax >> 23;
            uint32_t m = (ax & 0x7fffffu) | 0x800000u;
            uint32_t shift = 126u - e; /* m * 2^(e-150) / 2^-24 = m >> (126-e) */
            uint32_t rem = m & ((1u << shift) - 1u);
            uint32_t half = 1u << (shift - 1u);
            h = m >> shift;
            if (rem > half || (rem == half && (h & 1u)))
                h++;
        }
    } else {
        /* normal: rebias the exponent (127 -> 15) and drop 13 mantissa bits; a carry out of
         * the mantissa correctly bumps the exponent, up to Inf */
        uint32_t rem = ax & 0x1fffu;
        h = (ax - 0x38000000u) >> 13;
        if (rem > 0x1000u || (rem == 0x1000u && (h & 1u)))
            h++;
    }
    r.bits = (uint16_t)(h | sign);
    return r;
}

/* bf16 is the top half of a float: widening is exact. */
static inline GCONV_HD float gconv_bf16_to_f32(gconv_bf16 b)
{
    return gconv_impl_f32_from_bits((uint32_t)b.bits << 16);
}

/* float to bf16, round to nearest even; NaN stays a (quiet) NaN. */
static inline GCONV_HD gconv_bf16 gconv_f32_to_bf16(float f)
{
    uint32_t x = gconv_impl_f32_bits(f);
    gconv_bf16 r;
    if ((x & 0x7fffffffu) > 0x7f800000u)
        r.bits = (uint16_t)((x >> 16) | 0x40u);
    else
        r.bits = (uint16_t)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
    return r;
}

/* Element access through a type tag (host side: reference, tests, examples). */
static inline float gconv_load_f32(gconv_dtype t, const void *p, size_t i)
{
    if (t == GCONV_F16)
        return gconv_f16_to_f32(((const gconv_f16 *)p)[i]);
    if (t == GCONV_BF16)
        return gconv_bf16_to_f32(((const gconv_bf16 *)p)[i]);
    return ((const float *)p)[i];
}

static inline void gconv_store_f32(gconv_dtype t, void *p, size_t i, float v)
{
    if (t == GCONV_F16)
        ((gconv_f16 *)p)[i] = gconv_f32_to_f16(v);
    else if (t == GCONV_BF16)
        ((gconv_bf16 *)p)[i] = gconv_f32_to_bf16(v);
    else
        ((float *)p)[i] = v;
}

#endif /* GCONV_TYPES_H */
