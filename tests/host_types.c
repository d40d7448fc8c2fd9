/* tests/host_types.c: fp16 and bf16 conversions of gconv/types.h against independent
 * computations (exact values from the bit fields with ldexp, nearest representable value found
 * by search, hand-picked rounding cases).
 *
 * Build and run: gcc -std=c11 -Wall -Wextra -pedantic -Werror -O2 -I. tests/host_types.c
 *                    -o build/host_types -lcriterion -lm && build/host_types
 */
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <stdint.h>

#include "gconv/types.h"

static float f_bits(uint32_t u)
{
    return gconv_impl_f32_from_bits(u);
}

static uint16_t to_h(float f)
{
    return gconv_f32_to_f16(f).bits;
}

static uint16_t to_b(float f)
{
    return gconv_f32_to_bf16(f).bits;
}

static float from_h(uint16_t bits)
{
    gconv_f16 h = {bits};
    return gconv_f16_to_f32(h);
}

static int h_is_nan(uint16_t h)
{
    return (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0;
}

/* Value of a finite fp16 magnitude pattern from its fields; 0x7c00 is taken as 65536, the next
 * step above the largest finite value, which is where rounding to Inf is decided. */
static double h_value(uint32_t mag)
{
    uint32_t e = mag >> 10, m = mag & 0x3ffu;
    return e == 0 ? ldexp((double)m, -24) : ldexp((double)(1024u + m), (int)e - 25);
}

/* The fp16 pattern nearest to x (ties to the even pattern), by binary search over the
 * increasing magnitudes 0 .. 0x7c00; independent of the shift-and-round code under test. */
static uint16_t nearest_h(double x)
{
    uint32_t sign = signbit(x) ? 0x8000u : 0u;
    double a = fabs(x);
    uint32_t lo = 0, hi = 0x7c00u, mid;
    if (a >= 65536.0)
        return (uint16_t)(sign | 0x7c00u);
    while (hi - lo > 1) { /* invariant: h_value(lo) <= a < h_value(hi) */
        mid = (lo + hi) / 2;
        if (h_value(mid) <= a)
            lo = mid;
        else
            hi = mid;
    }
    if (a - h_value(lo) < h_value(hi) - a || (a - h_value(lo) == h_value(hi) - a && !(lo & 1)))
        return (uint16_t)(sign | lo);
    return (uint16_t)(sign | hi);
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint32_t rnd32(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 16);
}

Test(f16, every_pattern_round_trips)
{
    uint32_t h;
    for (h = 0; h < 0x10000u; h++) {
        float f = from_h((uint16_t)h);
        uint16_t back = to_h(f);
        if (h_is_nan((uint16_t)h)) {
            cr_assert(isnan(f), "pattern %04x should widen to NaN", h);
            cr_assert(h_is_nan(back), "NaN %04x came back as %04x", h, back);
            cr_assert_eq(back & 0x8000u, h & 0x8000u, "NaN %04x lost its sign", h);
        } else {
            cr_assert_eq(back, h, "pattern %04x -> %a -> %04x", h, (double)f, back);
        }
    }
}

Test(f16, widening_matches_field_formula)
{
    uint32_t h;
    for (h = 0; h < 0x10000u; h++) {
        uint32_t mag = h & 0x7fffu;
        double want;
        if (mag > 0x7c00u)
            continue;
        want = mag == 0x7c00u ? INFINITY : h_value(mag);
        if (h & 0x8000u)
            want = -want;
        cr_assert_eq((double)from_h((uint16_t)h), want, "pattern %04x", h);
    }
    cr_assert(signbit(from_h(0x8000u)) && from_h(0x8000u) == 0.0f);
}

Test(f16, narrowing_matches_nearest_search_on_every_midpoint)
{
    /* the exact midpoint between every pair of neighbouring fp16 magnitudes, and the floats
     * just below and above it, both signs */
    uint32_t mag;
    for (mag = 0; mag < 0x7c00u; mag++) {
        float mid = (float)((h_value(mag) + h_value(mag + 1)) / 2); /* exact: 12 bits */
        float v[3];
        int i, s;
        v[0] = nextafterf(mid, 0.0f), v[1] = mid, v[2] = nextafterf(mid, INFINITY);
        for (s = 0; s < 2; s++)
            for (i = 0; i < 3; i++) {
                float x = s ? -v[i] : v[i];
                cr_assert_eq(to_h(x), nearest_h(x), "%a: got %04x want %04x", (double)x, to_h(x),
                             nearest_h(x));
            }
    }
}

Test(f16, narrowing_matches_nearest_search_on_random_floats)
{
    int i;
    for (i = 0; i < 2000000; i++) {
        /* exponents around the fp16 range (2^-30 .. 2^18), any mantissa and sign */
        uint32_t e = 97u + rnd32() % 48u;
        float x = f_bits((rnd32() & 0x80000000u) | (e << 23) | (rnd32() & 0x7fffffu));
        cr_assert_eq(to_h(x), nearest_h(x), "%a: got %04x want %04x", (double)x, to_h(x),
                     nearest_h(x));
    }
}

Test(f16, ties_go_to_even_in_the_normal_range)
{
    cr_assert_eq(to_h(1.0f + 0x1p-11f), 0x3c00u);        /* between 0x3c00 and 0x3c01 */
    cr_assert_eq(to_h(1.0f + 3 * 0x1p-11f), 0x3c02u);    /* between 0x3c01 and 0x3c02 */
    cr_assert_eq(to_h(-(1.0f + 3 * 0x1p-11f)), 0xbc02u);
    cr_assert_eq(to_h(1024.0f + 0.5f), 0x6400u);         /* 1024.5: ulp 1 there, tie to even */
    cr_assert_eq(to_h(1025.5f), 0x6402u);                /* -> 1026 */
    cr_assert_eq(to_h(nextafterf(1.0f + 0x1p-11f, 2.0f)), 0x3c01u); /* just above half */
    cr_assert_eq(to_h(nextafterf(1.0f + 3 * 0x1p-11f, 0.0f)), 0x3c01u); /* just below */
}

Test(f16, rounding_carries_into_the_exponent)
{
    cr_assert_eq(to_h(2.0f - 0x1p-11f), 0x4000u); /* 0x3fff is odd: the tie goes up to 2.0 */
    cr_assert_eq(to_h(2.0f - 0x1p-10f), 0x3fffu); /* largest below 2, exact */
    cr_assert_eq(to_h(1.0f - 0x1p-12f), 0x3c00u); /* 0x3bff (1 - 2^-11) is odd: tie up to 1 */
    cr_assert_eq(to_h(2047.9f), 0x6800u);         /* 2048 */
    cr_assert_eq(to_h(0x1p-14f - 0x1p-25f), 0x0400u); /* tie between 0x03ff and 0x0400: even */
}

Test(f16, overflow_goes_to_infinity_at_65520)
{
    cr_assert_eq(to_h(65504.0f), 0x7bffu);
    cr_assert_eq(to_h(65519.99f), 0x7bffu); /* nearest float below 65520 */
    cr_assert_eq(to_h(nextafterf(65520.0f, 0.0f)), 0x7bffu);
    cr_assert_eq(to_h(65520.0f), 0x7c00u);
    cr_assert_eq(to_h(-65520.0f), 0xfc00u);
    cr_assert_eq(to_h(1e10f), 0x7c00u);
    cr_assert_eq(to_h(FLT_MAX), 0x7c00u);
    cr_assert_eq(to_h(-FLT_MAX), 0xfc00u);
    cr_assert_eq(to_h(INFINITY), 0x7c00u);
    cr_assert_eq(to_h(-INFINITY), 0xfc00u);
}

Test(f16, subnormals_and_underflow)
{
    cr_assert_eq(to_h(0x1p-24f), 0x0001u);                      /* smallest subnormal */
    cr_assert_eq(to_h(0x1p-25f), 0x0000u);                      /* tie with 0: even is 0 */
    cr_assert_eq(to_h(nextafterf(0x1p-25f, 1.0f)), 0x0001u);    /* just above the tie */
    cr_assert_eq(to_h(3 * 0x1p-25f), 0x0002u);                  /* tie 1|2 -> 2 */
    cr_assert_eq(to_h(5 * 0x1p-25f), 0x0002u);                  /* tie 2|3 -> 2 */
    cr_assert_eq(to_h(0x1p-14f - 0x1p-24f), 0x03ffu);           /* largest subnormal */
    cr_assert_eq(to_h(0x1p-14f), 0x0400u);                      /* smallest normal */
    cr_assert_eq(to_h(0x1p-26f), 0x0000u);
    cr_assert_eq(to_h(f_bits(1)), 0x0000u);                     /* float subnormal */
    cr_assert_eq(to_h(-0x1p-24f), 0x8001u);
    cr_assert_eq((double)from_h(0x0001u), 0x1p-24);
    cr_assert_eq((double)from_h(0x03ffu), 0x1p-14 - 0x1p-24);
}

Test(f16, signed_zero_is_kept)
{
    cr_assert_eq(to_h(0.0f), 0x0000u);
    cr_assert_eq(to_h(-0.0f), 0x8000u);
    cr_assert_eq(to_h(-0x1p-26f), 0x8000u); /* underflow keeps the sign */
    cr_assert(signbit(from_h(0x8000u)));
    cr_assert(!signbit(from_h(0x0000u)));
}

Test(f16, nan_stays_nan)
{
    cr_assert(h_is_nan(to_h(NAN)));
    cr_assert(h_is_nan(to_h(f_bits(0x7f800001u)))); /* payload only below fp16's bits */
    cr_assert(h_is_nan(to_h(f_bits(0x7fa00000u)))); /* signalling NaN */
    cr_assert(to_h(f_bits(0x7fa00000u)) & 0x200u, "the quiet bit should be set");
    cr_assert_eq(to_h(f_bits(0xffc00000u)) & 0x8000u, 0x8000u);
    cr_assert(isnan(from_h(0x7c01u)) && isnan(from_h(0xfe00u)));
    cr_assert(isinf(from_h(0x7c00u)) && from_h(0xfc00u) < 0.0f);
}

Test(bf16, every_pattern_round_trips)
{
    uint32_t b;
    for (b = 0; b < 0x10000u; b++) {
        gconv_bf16 v = {(uint16_t)b};
        float f = gconv_bf16_to_f32(v);
        cr_assert_eq(gconv_impl_f32_bits(f), b << 16, "bf16 %04x widens exactly", b);
        if ((b & 0x7f80u) == 0x7f80u && (b & 0x7fu))
            cr_assert(isnan(f) && (to_b(f) & 0x7f80u) == 0x7f80u && (to_b(f) & 0x7fu),
                      "NaN %04x", b);
        else
            cr_assert_eq(to_b(f), b, "%04x -> %04x", b, to_b(f));
    }
}

/* nearest bf16 of x by comparing the two bracketing truncations in double */
static uint16_t nearest_b(float x)
{
    uint32_t u = gconv_impl_f32_bits(x), lo = u & 0xffff0000u, hi = lo + 0x10000u;
    double a = fabs((double)x), dl = fabs((double)f_bits(lo)), dh;
    if ((hi & 0x7f800000u) == 0x7f800000u) /* above the largest finite: 2^128 */
        dh = ldexp(1.0, 128);
    else
        dh = fabs((double)f_bits(hi));
    if (a - dl < dh - a || (a - dl == dh - a && !((lo >> 16) & 1u)))
        return (uint16_t)(lo >> 16);
    return (uint16_t)(hi >> 16);
}

Test(bf16, narrowing_matches_nearest_on_random_finite_floats)
{
    int i;
    for (i = 0; i < 2000000; i++) {
        uint32_t u = rnd32();
        float x;
        if ((u & 0x7f800000u) == 0x7f800000u)
            continue;
        x = f_bits(u);
        cr_assert_eq(to_b(x), nearest_b(x), "%a: got %04x want %04x", (double)x, to_b(x),
                     nearest_b(x));
    }
}

Test(bf16, ties_to_even_carry_and_overflow)
{
    cr_assert_eq(to_b(f_bits(0x3f808000u)), 0x3f80u); /* 1 + 2^-8: tie, even is down */
    cr_assert_eq(to_b(f_bits(0x3f818000u)), 0x3f82u); /* tie, odd -> up */
    cr_assert_eq(to_b(f_bits(0x3f808001u)), 0x3f81u); /* just above half */
    cr_assert_eq(to_b(f_bits(0x3f807fffu)), 0x3f80u); /* just below half */
    cr_assert_eq(to_b(f_bits(0x3fff8000u)), 0x4000u); /* carry into the exponent: 2.0 */
    cr_assert_eq(to_b(f_bits(0xbfff8000u)), 0xc000u);
    cr_assert_eq(to_b(FLT_MAX), 0x7f80u);             /* rounds up past the largest: Inf */
    cr_assert_eq(to_b(f_bits(0x7f7f7fffu)), 0x7f7fu);
    cr_assert_eq(to_b(INFINITY), 0x7f80u);
    cr_assert_eq(to_b(-0.0f), 0x8000u);
    cr_assert_eq(to_b(f_bits(0x00008000u)), 0x0000u); /* subnormal tie to even 0 */
    cr_assert_eq(to_b(f_bits(0x00018000u)), 0x0002u);
}

Test(bf16, nan_is_quieted_not_turned_into_infinity)
{
    cr_assert_eq(to_b(f_bits(0x7f800001u)), 0x7fc0u); /* payload below bf16's bits */
    cr_assert_eq(to_b(f_bits(0xff800001u)), 0xffc0u);
    cr_assert_eq(to_b(f_bits(0x7f810000u)), 0x7fc1u); /* payload kept, quiet bit set */
    cr_assert_eq(to_b(f_bits(0x7fffffffu)), 0x7fffu); /* no carry out of a NaN */
    cr_assert_eq(to_b(NAN) & 0x7fc0u, 0x7fc0u);
}

Test(access, load_and_store_by_type_tag)
{
    float f[2] = {0};
    gconv_f16 h[2] = {{0}};
    gconv_bf16 b[2] = {{0}};
    gconv_store_f32(GCONV_F32, f, 1, 1.5f);
    gconv_store_f32(GCONV_F16, h, 1, 1.0f + 0x1p-11f);
    gconv_store_f32(GCONV_BF16, b, 1, -3.0f);
    cr_assert_eq(f[0], 0.0f);
    cr_assert_eq(f[1], 1.5f);
    cr_assert_eq(h[0].bits, 0u);
    cr_assert_eq(h[1].bits, 0x3c00u);
    cr_assert_eq(b[0].bits, 0u);
    cr_assert_eq(b[1].bits, 0xc040u);
    cr_assert_eq(gconv_load_f32(GCONV_F32, f, 1), 1.5f);
    cr_assert_eq(gconv_load_f32(GCONV_F16, h, 1), 1.0f);
    cr_assert_eq(gconv_load_f32(GCONV_BF16, b, 1), -3.0f);
    cr_assert_eq(gconv_dtype_size(GCONV_F32), 4u);
    cr_assert_eq(gconv_dtype_size(GCONV_F16), 2u);
    cr_assert_eq(gconv_dtype_size(GCONV_BF16), 2u);
    cr_assert_str_eq(gconv_dtype_name(GCONV_F16), "fp16");
    cr_assert_str_eq(gconv_dtype_name(GCONV_BF16), "bf16");
    cr_assert_str_eq(gconv_dtype_name(GCONV_F32), "fp32");
}
