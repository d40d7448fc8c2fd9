/* gconv/direct_fwd.h: direct (non-GEMM) forward kernels for depthwise and few-channel groups.
 *
 * What is here: one instantiation macro used by gconv/fwd.h,
 *
 *     GCONV_IMPL_DIRECT_FWD(name, T, EPI_FN)
 *
 * with T a dtype token (GCONV_F32, GCONV_F16, GCONV_BF16) and EPI_FN a __device__ function with
 * the signature of gconv_impl_epilogue_apply (gconv/device.h). It defines
 *
 *     int name##_direct_fits(const gconv_problem *p);
 *         1 when the direct kernels should take p for speed (see gconv_impl_direct_fits:
 *         depthwise NHWGC problems)
 *     gconv_status name##_direct_launch(const gconv_problem *p, const void *in, const void *wei,
 *                                       void *out, const gconv_epilogue *epi, hipStream_t s);
 *         runs p (already validated; epi never NULL) on stream s, asynchronously; any problem
 *         in any layout is accepted (the generic kernel takes what the fast ones cannot).
 *         GCONV_ERR_RUNTIME if the launch failed (hipGetLastError, no synchronisation).
 *     gconv_status name##_direct_launch_path(..., int path);   (path | GCONV_IMPL_DIRECT_FLIP:
 *                                                               DW3 with reversed taps)
 *         the same with the kernel forced (gconv_impl_direct_path), for tests and benchmarks;
 *         GCONV_ERR_UNSUPPORTED if that kernel cannot take the problem.
 * and __global__ kernels named name##_*, so several instantiations share a translation unit.
 *
 * The kernels (all accumulate in fp32 and pass every output element through EPI_FN):
 *
 *   DW3      depthwise (C = K = 1) 3x3, stride 1 or 2 (both axes), no dilation, NHWGC in and
 *            out (3D with a trivial depth axis too), G a multiple of the 16-byte vector (8
 *            fp16/bf16 or 4 fp32 channels), 16-byte aligned tensors. A thread owns VEC channels
 *            x TW consecutive output columns x a run of output rows; its 9*VEC taps sit in
 *            registers. The input rows its 3x3 window needs stream through a per-thread ring
 *            in shared memory, copied with cp.async (sm_80+) two output rows ahead, so the
 *            bytes in flight cost no registers; each output row reads its 3 window rows from
 *            the ring, converts each element once for all the columns it feeds, and refills
 *            the slots that died. 16-byte loads and stores.
 *   FEWC     NHWGC with C = K = 1 (depthwise with any filter, stride, dilation, 1D/2D/3D, or
 *            unaligned / G not a multiple of the vector: one group per thread) or C = K = 4.
 *            A thread owns GV consecutive groups (16 bytes of input channels: 8 depthwise fp16
 *            channels, 2 groups of 4) and TW consecutive output columns and computes all GV*K
 *            outputs from the GV*C inputs. Taps live in shared memory as fp32, interleaved so a
 *            warp's 16-byte reads are conflict-free. For 3 taps at stride 1 along W, a filter
 *            row loads its TW + 2 input pixels once and uses each converted value for all 3
 *            taps.
 *   GENERIC  anything: one thread per output element, every tensor addressed through its
 *            layout strides (gconv/layout.h) in 64-bit. Correct everywhere, not fast; also the
 *            readable cross-check of the others.
 * Epilogues: DW3 and FEWC come in two forms each. "plain" (no D tensors) hands EPI_FN a copy
 * of the epilogue whose num_d is the constant 0 and, in DW3, whose activation kind is a
 * constant in each of four branches (the built-in epilogue then compiles to a multiply and a
 * min/max); "dten" (D tensors present) calls EPI_FN per element, unrolled, then stores 16
 * bytes. EPI_FN always receives an exact copy of the caller's epilogue. DW3 with the built-in
 * epilogue (EPI_FN is gconv_impl_epilogue_apply, detected by name at preprocessing) computes
 * it inline instead when every D tensor has channel stride 1 and 16-byte aligned vectors
 * (plan: dvec): D tensors that do not depend on h, w (a bias) are read as one 16-byte vector
 * per output row (L1 hits; a kernel of its own, "b", with the plain kernel's registers); a
 * per-pixel D (residual) comes through the input ring by cp.async, PD rows ahead, and starts
 * the accumulators (gconv_impl_dw_body). Other D tensors (two or more per-pixel ones, or not
 * vector-aligned) take a per-element path whose loads of one column issue together.
 *
 * Indexing: every kernel forms the address of an image row (or of an element, in GENERIC) in
 * 64-bit, so tensors of more than 2^31 elements work; offsets inside one row are 32-bit, which
 * the plan checks (a row of input or output must stay under 2 GB, else GENERIC). Work-item
 * numbers are split with 32-bit divisions when there are fewer than 2^31 of them.
 *
 * Tuning knobs (define before including; defaults measured on H100, see bench/NOTES.md):
 *   GCONV_DIRECT_DW_TW1 / GCONV_DIRECT_DW_TW2   output columns per thread, DW3 stride 1 / 2
 *                                               (stride 1, output width 2 mod 4: always 2,
 *                                               the dw3s1n / dw3s1nd kernels)
 *   GCONV_DIRECT_DW_PD / GCONV_DIRECT_DW_PDN     output rows of prefetch in the DW3 ring:
 *                                               stride-1 TW1-column kernels / the others
 *                                               (stride 2, and dw3s1n / dw3s1nd)
 *   GCONV_DIRECT_DW_THREADS_PER_SM              work items aimed at per SM when DW3 splits
 *                                               the image height into runs of rows
 *   GCONV_DIRECT_FC_BLOCKS_PER_SM               FEWC blocks per SM (each loops over tiles)
 *
 * Needs a HIP or CUDA compiler; include through gconv.h (or after gconv/device.h).
 */
#ifndef GCONV_DIRECT_FWD_H
#define GCONV_DIRECT_FWD_H

#include <limits.h>
#include <stdint.h>

#include "device.h"
#include "layout.h"
#include "problem.h"

#ifndef GCONV_DIRECT_DW_TW1
#define GCONV_DIRECT_DW_TW1 4
#endif
#ifndef GCONV_DIRECT_DW_TW2
#define GCONV_DIRECT_DW_TW2 2
#endif
#ifndef GCONV_DIRECT_DW_THREADS_PER_SM
#define GCONV_DIRECT_DW_THREADS_PER_SM 1024
#endif
#ifndef GCONV_DIRECT_FC_BLOCKS_PER_SM
#define GCONV_DIRECT_FC_BLOCKS_PER_SM 8
#endif
#ifndef GCONV_DIRECT_DW_PD
#define GCONV_DIRECT_DW_PD 2
#endif
/* H100, bench/NOTES.md (session 27): one row ahead is 3-7 % faster for the stride-2 and the
 * two-column stride-1 kernels (576@14 15.0 -> 14.0 us), 2 % slower for the four-column ones */
#ifndef GCONV_DIRECT_DW_PDN
#define GCONV_DIRECT_DW_PDN 1
#endif

#define GCONV_IMPL_DW_BLOCK 64    /* threads per block, DW3 (its ring is per thread) */
#define GCONV_IMPL_FC_BLOCK 128   /* threads per block (at most), FEWC */
#define GCONV_IMPL_GEN_BLOCK 256  /* threads per block, GENERIC */
#define GCONV_IMPL_FC_SMEM 32768  /* shared-memory bytes of taps per FEWC block, at most */
#define GCONV_IMPL_MAX_BLOCKS (1 << 20) /* grid cap; kernels loop over the rest */

/* Register arrays are declared at these maximum sizes; the bodies touch only the part their
 * compile-time sizes use, always with constant indices, so the rest does not exist. */
#define GCONV_IMPL_DW_MAXK 3      /* filter side of the DW3 kernels */
#define GCONV_IMPL_DW_MAXSPAN 12  /* input vectors per window row: (TW-1)*stride + 3 */
#define GCONV_IMPL_DW_MAXTW 8
#define GCONV_IMPL_FC_MAXTW 8
#define GCONV_IMPL_FC_MAXOUT 16   /* GV*K, outputs per thread per column */
#define GCONV_IMPL_FC_MAXRAW 16   /* 32-bit words of GV*C (or GV*K) elements */

typedef enum gconv_impl_direct_path {
    GCONV_IMPL_DIRECT_AUTO = 0,
    GCONV_IMPL_DIRECT_DW3 = 1,
    GCONV_IMPL_DIRECT_FEWC = 2,
    GCONV_IMPL_DIRECT_GENERIC = 3
} gconv_impl_direct_path;
/* Or'ed into the path of name_direct_launch_path: DW3 with its taps read in reverse order (the
 * filter rotated by 180 degrees, as backward data needs); only DW3 takes it. */
#define GCONV_IMPL_DIRECT_FLIP 0x100

/* The FEWC instantiations: (C, K) per group, and whether groups go GV at a time (vector) or
 * one at a time (the scalar depthwise variant). Each comes plain (no D tensors) and general. */
enum { GCONV_IMPL_FC_C1 = 0, GCONV_IMPL_FC_C1S, GCONV_IMPL_FC_C4, GCONV_IMPL_FC_COUNT };

/* Groups per thread in FEWC: as many as make 16 bytes of input channels (1 when C*size >= 16
 * or when the scalar variant is asked for). */
static inline GCONV_HD int gconv_impl_fc_gv(int C, int es, int scalar)
{
    return scalar || C * es >= 16 ? 1 : 16 / (C * es);
}

/* Output columns per thread in FEWC: at most 8, at most 64 accumulators (TW*GV*K) and 32 words
 * of raw input (TW*GV*C*size/4) in flight per thread. */
static inline GCONV_HD int gconv_impl_fc_tw(int gv, int C, int K, int es)
{
    int words = gv * C * es / 4, tw = 8;
    if (words < 1)
        words = 1;
    if (tw > 64 / (gv * K))
        tw = 64 / (gv * K);
    if (tw > 32 / words)
        tw = 32 / words;
    return tw < 1 ? 1 : tw;
}

/* ---- element access on raw 32-bit words ---------------------------------------------------- */

/* Load nb bytes (2, 4, 8 or a multiple of 16; p aligned to min(nb, 16)) into words w. */
static __device__ __forceinline__ void gconv_impl_ld_raw(uint32_t *w, const char *p, const int nb)
{
    if (nb >= 16) {
#pragma unroll
        for (int i = 0; i < nb / 16; i++) {
            uint4 v = ((const uint4 *)p)[i];
            w[4 * i] = v.x, w[4 * i + 1] = v.y, w[4 * i + 2] = v.z, w[4 * i + 3] = v.w;
        }
    } else if (nb == 8) {
        uint2 v = *(const uint2 *)p;
        w[0] = v.x, w[1] = v.y;
    } else if (nb == 4) {
        w[0] = *(const uint32_t *)p;
    } else {
        w[0] = *(const uint16_t *)p;
    }
}

static __device__ __forceinline__ void gconv_impl_st_raw(char *p, const uint32_t *w, const int nb)
{
    if (nb >= 16) {
#pragma unroll
        for (int i = 0; i < nb / 16; i++) {
            uint4 v;
            v.x = w[4 * i], v.y = w[4 * i + 1], v.z = w[4 * i + 2], v.w = w[4 * i + 3];
            ((uint4 *)p)[i] = v;
        }
    } else if (nb == 8) {
        uint2 v;
        v.x = w[0], v.y = w[1];
        *(uint2 *)p = v;
    } else if (nb == 4) {
        *(uint32_t *)p = w[0];
    } else {
        *(uint16_t *)p = (uint16_t)w[0];
    }
}

static __device__ __forceinline__ void gconv_impl_zero_raw(uint32_t *w, const int nb)
{
#pragma unroll
    for (int i = 0; i < (nb + 3) / 4; i++)
        w[i] = 0;
}

/* Element v (a constant after inlining) of a packed word array, as float. */
static __device__ __forceinline__ float gconv_impl_raw_elem(const uint32_t *w, const int v,
                                                            const int dt)
{
    if (dt == GCONV_F32)
        return __uint_as_float(w[v]);
    if (dt == GCONV_BF16)
        return __uint_as_float((v & 1) ? (w[v >> 1] & 0xffff0000u) : (w[v >> 1] << 16));
    {
#if defined(GCONV_PLATFORM_CUDA)
        /* one conversion instruction straight from the register half */
        union { uint32_t u; __half2 h; } c;
        c.u = w[v >> 1];
        return (v & 1) ? __high2float(c.h) : __low2float(c.h);
#else
        gconv_f16 h;
        h.bits = (uint16_t)((v & 1) ? (w[v >> 1] >> 16) : (w[v >> 1] & 0xffffu));
        return gconv_impl_to_float_f16(h);
#endif
    }
}

/* Store f as element v of a packed word array; elements must be put in increasing v. */
static __device__ __forceinline__ void gconv_impl_put_elem(uint32_t *w, const int v, float f,
                                                           const int dt)
{
    uint32_t b;
    if (dt == GCONV_F32) {
        w[v] = __float_as_uint(f);
        return;
    }
    b = dt == GCONV_BF16 ? (uint32_t)gconv_impl_from_float_bf16(f).bits
                         : (uint32_t)gconv_impl_from_float_f16(f).bits;
    if (v & 1)
        w[v >> 1] |= b << 16;
    else
        w[v >> 1] = b;
}

/* Pack n floats (n a constant) into the storage words of type dt; on CUDA two 16-bit values
 * take one conversion instruction. */
static __device__ __forceinline__ void gconv_impl_pack(uint32_t *o, const float *y, const int n,
                                                       const int dt)
{
    if (dt == GCONV_F32) {
#pragma unroll
        for (int v = 0; v < n; v++)
            o[v] = __float_as_uint(y[v]);
        return;
    }
#pragma unroll
    for (int w = 0; w < n / 2; w++) {
#if defined(GCONV_PLATFORM_CUDA)
        if (dt == GCONV_F16) {
            union { __half2 h; uint32_t u; } c;
            c.h = __floats2half2_rn(y[2 * w], y[2 * w + 1]);
            o[w] = c.u;
        } else {
            union { __nv_bfloat162 h; uint32_t u; } c;
            c.h = __floats2bfloat162_rn(y[2 * w], y[2 * w + 1]);
            o[w] = c.u;
        }
#else
        gconv_impl_put_elem(o, 2 * w, y[2 * w], dt);
        gconv_impl_put_elem(o, 2 * w + 1, y[2 * w + 1], dt);
#endif
    }
    if (n & 1)
        gconv_impl_put_elem(o, n - 1, y[n - 1], dt);
}

/* One element of type dt at element index i (scalar paths). */
static __device__ __forceinline__ float gconv_impl_ld_elem(const char *p, int64_t i, const int dt)
{
    if (dt == GCONV_F32)
        return ((const float *)p)[i];
    if (dt == GCONV_BF16)
        return gconv_impl_to_float_bf16(((const gconv_bf16 *)p)[i]);
    return gconv_impl_to_float_f16(((const gconv_f16 *)p)[i]);
}

static __device__ __forceinline__ void gconv_impl_st_elem(char *p, int64_t i, float f, const int dt)
{
    if (dt == GCONV_F32)
        ((float *)p)[i] = f;
    else if (dt == GCONV_BF16)
        ((gconv_bf16 *)p)[i] = gconv_impl_from_float_bf16(f);
    else
        ((gconv_f16 *)p)[i] = gconv_impl_from_float_f16(f);
}

/* ---- DW3: depthwise 3x3, a per-thread ring of input rows in shared memory ----------------- */

typedef struct gconv_impl_dw_params {
    int H, W;        /* input rows, columns */
    int Ho, Wo;      /* output rows, columns */
    int D;           /* depth of a 3D problem with a trivial depth axis (folded into the batch) */
    int GC;          /* channels per pixel (= G, as C = K = 1) */
    int ph, pw;      /* pads before the first row / column */
    int cvs;         /* channel vectors per pixel, GC / VEC */
    int wts;         /* column tiles, ceil(Wo / TW) */
    int rh;          /* output rows per work item */
    int hchunks;     /* ceil(Ho / rh) */
    int wei_vec;     /* weights 16-byte aligned: load the taps as vectors */
    int dvec;        /* every D tensor takes 16-byte loads: channel stride 1, base and the
                      * n, d, h, w strides aligned to the vector, h, w strides in bytes < 2^31;
                      * at most one of them per pixel */
    unsigned dbc;    /* bit i: D tensor i does not depend on h, w (a bias): read once per item */
    long long items; /* work items: N*D * hchunks * wts * cvs */
    int flip;        /* taps read in reverse order (backward data's flipped filter, no pre-pass) */
    int l2pf;        /* ring copies ask L2 for 256 bytes (gconv_impl_l2pf) */
} gconv_impl_dw_params;

/* acc[px][v] += row[px*SW + kx][v] * tap[kx][v]: each input element is converted once and used
 * by every output column whose window covers it. */
static __device__ __forceinline__ void gconv_impl_dw_fma_row(float (*acc)[8], uint32_t (*row)[4],
                                                             float (*tap)[8], const int dt,
                                                             const int VEC, const int X,
                                                             const int SW, const int TW)
{
    const int SPAN = (TW - 1) * SW + X;
#pragma unroll
    for (int j = 0; j < SPAN; j++) {
#pragma unroll
        for (int v = 0; v < VEC; v++) {
            const float x = gconv_impl_raw_elem(row[j], v, dt);
#pragma unroll
            for (int kx = 0; kx < X; kx++) {
                const int q = j - kx; /* = px * SW for the output column px this tap feeds */
                if (q >= 0 && q % SW == 0 && q / SW < TW)
                    acc[q / SW][v] = fmaf(x, tap[kx][v], acc[q / SW][v]);
            }
        }
    }
}

/* 16 bytes global -> shared. On sm_80+ asynchronously (cp.async, completion tracked per thread
 * by commit/wait groups); elsewhere a plain load and store. ok = 0 writes zeros (padding) and
 * reads nothing (src must still be a valid address). CA (a literal): 1 through L1
 * (cp.async.ca, for rings whose halo columns neighbouring threads read again soon: the
 * backward-weight DWR kernel), 0 around it (.cg). */
static __device__ __forceinline__ void gconv_impl_cp16_l1(uint4 *dst, const char *src, int ok,
                                                          const int CA)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    const unsigned sa = (unsigned)__cvta_generic_to_shared(dst);
    if (CA)
        asm volatile("cp.async.ca.shared.global [%0], [%1], 16, %2;\n" ::"r"(sa), "l"(src),
                     "r"(ok ? 16 : 0)
                     : "memory");
    else
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(sa), "l"(src),
                     "r"(ok ? 16 : 0)
                     : "memory");
#else
    uint4 v;
    (void)CA;
    v.x = v.y = v.z = v.w = 0;
    if (ok)
        v = *(const uint4 *)src;
    *dst = v;
#endif
}

/* The same for 8 bytes (through L1: cp.async takes 8 bytes only as .ca), asking L2 to fetch
 * the 256 bytes around each copy (the backward-weight DWR kernel's 16-bit rings, whose warps
 * read a pixel's channels in 8-byte vectors: H100, MobileNetV2 144@56 52.7-53.4 -> 50.5-51.4
 * us, 96@112 s2 77.5-77.9 -> 76.2-77.3; .L2::128B gave about half of that; bench/NOTES.md) */
static __device__ __forceinline__ void gconv_impl_cp8_ca(uint2 *dst, const char *src, int ok)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    const unsigned sa = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.ca.shared.global.L2::256B [%0], [%1], 8, %2;\n" ::"r"(sa), "l"(src),
                 "r"(ok ? 8 : 0)
                 : "memory");
#else
    uint2 v;
    v.x = v.y = 0;
    if (ok)
        v = *(const uint2 *)src;
    *dst = v;
#endif
}

/* The .cg form. */
static __device__ __forceinline__ void gconv_impl_cp16(uint4 *dst, const char *src, int ok)
{
    gconv_impl_cp16_l1(dst, src, ok, 0);
}

/* The .cg form, asking L2 to fetch the 256 bytes around each copy where pf (the rings of
 * forward DW3 and of the fused row kernel on large images; gconv_impl_l2pf). */
static __device__ __forceinline__ void gconv_impl_cp16_pf(uint4 *dst, const char *src, int ok,
                                                          int pf)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    if (pf) {
        asm volatile("cp.async.cg.shared.global.L2::256B [%0], [%1], 16, %2;\n" ::"r"(
                         (unsigned)__cvta_generic_to_shared(dst)),
                     "l"(src), "r"(ok ? 16 : 0)
                     : "memory");
        return;
    }
#endif
    (void)pf;
    gconv_impl_cp16_l1(dst, src, ok, 0);
}

static __device__ __forceinline__ void gconv_impl_cp_commit(void)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}

/* Wait until at most n of this thread's most recent copy groups are still in flight. */
static __device__ __forceinline__ void gconv_impl_cp_wait(const int n)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    if (n <= 0)
        asm volatile("cp.async.wait_group 0;\n" ::: "memory");
    else if (n == 1)
        asm volatile("cp.async.wait_group 1;\n" ::: "memory");
    else if (n == 2)
        asm volatile("cp.async.wait_group 2;\n" ::: "memory");
    else if (n == 3)
        asm volatile("cp.async.wait_group 3;\n" ::: "memory");
    else if (n == 4)
        asm volatile("cp.async.wait_group 4;\n" ::: "memory");
    else if (n == 5)
        asm volatile("cp.async.wait_group 5;\n" ::: "memory");
    else
        asm volatile("cp.async.wait_group 6;\n" ::: "memory");
#else
    (void)n;
#endif
}

/* Bytes of the DW3 ring of one block of `block` threads; dring adds the PD + 1 slots of TW
 * D vectors. */
static inline GCONV_HD unsigned gconv_impl_dw_smem(int Y, int X, int SH, int SW, int TW, int PD,
                                                   int block, int dring)
{
    return (unsigned)(((Y + PD * SH) * ((TW - 1) * SW + X) + (dring ? (PD + 1) * TW : 0)) *
                      block * 16);
}

/* Start the copy of one window row (input row ih) into ring slot `slot`. rt = the thread's
 * column of the ring (ring + threadIdx.x; the block has GCONV_IMPL_DW_BLOCK threads); cb =
 * address of the work item's first window column in image row 0 of its plane (only formed
 * into loads where valid); cmask bit j = window column j inside the image. Zeros elsewhere. */
static __device__ __forceinline__ void gconv_impl_dw_issue(uint4 *rt, int slot, const char *in,
                                                           const char *cb, int64_t rowbytes,
                                                           int ih, int H, unsigned cmask,
                                                           int cstride, int pf, const int SPAN)
{
    const int rowok = (unsigned)ih < (unsigned)H;
    const char *rp = cb + (rowok ? ih : 0) * rowbytes;
#pragma unroll
    for (int j = 0; j < SPAN; j++) {
        const int ok = rowok && ((cmask >> j) & 1u);
        gconv_impl_cp16_pf(rt + (slot * SPAN + j) * GCONV_IMPL_DW_BLOCK,
                           ok ? rp + j * cstride : in, ok, pf);
    }
}

/* Start the copy of one output row's TW vectors of the ring's D tensor (dp: its address at
 * column wo0 of output row 0 of the plane, dqs1 / dqs2: row / column strides in bytes) into the
 * D slot `slot` (the thread's column); columns past the image's nw valid ones get zeros. */
static __device__ __forceinline__ void gconv_impl_dw_issue_d(uint4 *slot, const char *dp, int h,
                                                             int dqs1, int dqs2, int nw,
                                                             const int TW)
{
    const char *cp = dp + (int64_t)h * dqs1;
#pragma unroll
    for (int px = 0; px < TW; px++) {
        gconv_impl_cp16(slot + px * GCONV_IMPL_DW_BLOCK, px < nw ? cp : dp, px < nw);
        cp += dqs2;
    }
}

/* Epilogue and 16-byte stores of one DW3 output row segment (TW columns, VEC channels). */
static __device__ __forceinline__ void gconv_impl_dw_store(char *op, float (*acc)[8],
                                                           const gconv_epilogue *e,
                                                           gconv_impl_epi_fn epi,
                                                           const gconv_impl_dw_params *pp, int n,
                                                           int d, int h, int wo0, int c0,
                                                           const int dt, const int TW)
{
    const int es = dt == GCONV_F32 ? 4 : 2;
    const int VEC = 16 / es;
#pragma unroll
    for (int px = 0; px < TW; px++) {
        const int wo = wo0 + px;
        if (wo < pp->Wo) {
            uint32_t o[4];
            float y[8];
#pragma unroll
            for (int v = 0; v < VEC; v++)
                y[v] = epi(e, (gconv_dtype)dt, acc[px][v], c0 + v, n, 0, d, h, wo);
            gconv_impl_pack(o, y, VEC, dt);
            gconv_impl_st_raw(op + (wo * pp->GC + c0) * es, o, 16);
        }
    }
}

/* Activation and 16-byte stores of one DW3 output row segment whose values (alpha, D tensors
 * already applied) are in acc; the callers pass an act whose kind is a constant. */
static __device__ __forceinline__ void gconv_impl_dw_act_store(char *op, float (*acc)[8],
                                                               const gconv_act a,
                                                               const gconv_impl_dw_params *pp,
                                                               int wo0, int c0, const int dt,
                                                               const int TW)
{
    const int es = dt == GCONV_F32 ? 4 : 2;
    const int VEC = 16 / es;
#pragma unroll
    for (int px = 0; px < TW; px++) {
        if (wo0 + px < pp->Wo) {
            uint32_t o[4];
            float y[8];
#pragma unroll
            for (int v = 0; v < VEC; v++)
                y[v] = gconv_act_apply(a, acc[px][v]);
            gconv_impl_pack(o, y, VEC, dt);
            gconv_impl_st_raw(op + ((wo0 + px) * pp->GC + c0) * es, o, 16);
        }
    }
}

/* plain: 1 no D tensors; 0 D tensors through EPI_FN; 2 built-in epilogue with D tensors
 * (vector path, the residual through the ring, when pp->dvec); 4 built-in epilogue whose D
 * tensors are all broadcast vectors (the plan's variants 5, 6). */

/* DW3 kernel body: Y x X filter (3 x 3 instantiated), strides SH, SW, TW columns per thread.
 *
 * A work item (channel vector cv, column tile wt, run of output rows h0..h1-1) needs input rows
 * r0 .. r0 + M - 1 (window row m = input row r0 + m). Each thread keeps a private ring of
 * NR = Y + PD*SH row slots in shared memory ([slot][column][thread] in 16-byte units, so a
 * warp's accesses are consecutive and free of bank conflicts). Rows are copied into the ring
 * PD output rows ahead of their use (cp.async on sm_80+): the bytes in flight sit in shared
 * memory, not in registers, so an SM keeps enough of them moving to stream at full bandwidth.
 * One copy group per row; before output row s (relative) the rows 0 .. s*SH + Y - 1 must have
 * landed, i.e. all groups but the newest NR - Y = PD*SH, a constant. Each output row reads its
 * Y window rows from the ring (each element converted once and used by every column it
 * feeds), then refills the SH slots that just died with the rows PD steps ahead.
 *
 * With the built-in epilogue and vector D tensors of which one is per pixel (plain 2 and
 * pp->dvec: a residual), that D tensor's rows come through the ring too, in PD + 1 slots of
 * TW vectors after the row slots: output row s's D vectors travel in the copy group of window
 * row s*SH + Y - 1 (the last row that output row s waits for), so the same wait covers them.
 * The accumulators start at beta * D + the broadcast D tensors and the taps are scaled by
 * alpha, so nothing of the epilogue but the activation is left for the store and no D
 * register lives across the row's arithmetic (read into registers at the row's start, the
 * residual's vectors and the epilogue's state cost 58 registers at fp16: 226, 4 blocks of 64
 * per SM instead of 6). */
static __device__ __forceinline__ void gconv_impl_dw_body(const gconv_impl_dw_params *pp,
                                                          const char *in, const char *wei,
                                                          char *out, const gconv_epilogue *e,
                                                          gconv_impl_epi_fn epi, const int dt,
                                                          const int Y, const int X, const int SH,
                                                          const int SW, const int TW, const int PD,
                                                          const int plain)
{
    extern __shared__ uint4 gconv_impl_dw_ring[];
    const int es = dt == GCONV_F32 ? 4 : 2;
    const int VEC = 16 / es;
    const int SPAN = (TW - 1) * SW + X;
    const int YX = Y * X;
    const int NR = Y + PD * SH;
    uint4 *ring = gconv_impl_dw_ring;
    int64_t item;
    for (item = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; item < pp->items;
         item += (int64_t)gridDim.x * blockDim.x) {
        int cv, wt, hc, nd;
        if (pp->items <= INT_MAX) {
            unsigned t = (unsigned)item;
            cv = (int)(t % (unsigned)pp->cvs);
            t /= (unsigned)pp->cvs;
            wt = (int)(t % (unsigned)pp->wts);
            t /= (unsigned)pp->wts;
            hc = (int)(t % (unsigned)pp->hchunks);
            nd = (int)(t / (unsigned)pp->hchunks);
        } else {
            int64_t t = item;
            cv = (int)(t % pp->cvs);
            t /= pp->cvs;
            wt = (int)(t % pp->wts);
            t /= pp->wts;
            hc = (int)(t % pp->hchunks);
            nd = (int)(t / pp->hchunks);
        }
        {
            const int c0 = cv * VEC;
            const int h0 = hc * pp->rh;
            const int h1 = min(h0 + pp->rh, pp->Ho);
            const int M = (h1 - h0 - 1) * SH + Y; /* window rows this item reads */
            const int r0 = h0 * SH - pp->ph;
            const int wo0 = wt * TW;
            const int iw0 = wo0 * SW - pp->pw;
            const int n = nd / pp->D, d = nd - n * pp->D;
            const int64_t pin = (int64_t)nd * pp->H, pout = (int64_t)nd * pp->Ho;
            const int cstride = pp->GC * es; /* bytes from one pixel to the next */
            const int64_t rowbytes = (int64_t)pp->W * cstride;
            const char *cb = in + pin * rowbytes + ((int64_t)iw0 * pp->GC + c0) * es;
            uint4 *rt = ring + threadIdx.x;
            unsigned cmask = 0;
            /* plain (no D tensors): a copy whose num_d is the constant 0 lets the compiler
             * drop the epilogue's D loop from the 8*TW inlined copies */
            gconv_epilogue e0 = *e;
            float tap[GCONV_IMPL_DW_MAXK][GCONV_IMPL_DW_MAXK][8];
            int sb = 0; /* ring slot of the window's top row */
            /* built-in epilogue with vector D tensors (plain == 2 and dvec): the broadcast
             * ones (bias) summed once per item into bsum; the first per-pixel one (residual)
             * dq comes through the ring (the plan made room for its slots; with two or more
             * per-pixel ones it takes the scalar path: their parameters, hoisted out of the
             * row loop, would cost 30 registers, a block per SM) */
            const int fast = plain >= 2 && pp->dvec;
            const int bonly = plain == 4; /* every D broadcast over h, w (bias): no per-item
                                           * registers, the 16-byte D vectors (L1 hits) are
                                           * re-read at each row's store */
            const int dring = fast && !bonly; /* dq through the ring */
            uint4 *dsp = rt + NR * SPAN * GCONV_IMPL_DW_BLOCK; /* the D slots */
            int dsl = 0; /* D slot of the current output row */
            float bsum[8];
            const char *dq = in;
            int dqs1 = 0, dqs2 = 0, dqi = -1;
            float dqb = 0.0f;
            e0.num_d = 0;
            if (fast && !bonly) {
#pragma unroll
                for (int v = 0; v < VEC; v++)
                    bsum[v] = 0.0f;
#pragma unroll
                for (int i = 0; i < GCONV_MAX_D; i++) {
                    if (i < e->num_d) {
                        const gconv_act_strides *ds = &e->d[i].strides;
                        const char *dp = (const char *)e->d[i].data +
                                         (c0 + (int64_t)n * ds->n + (int64_t)d * ds->s[0] +
                                          (int64_t)wo0 * ds->s[2]) * es;
                        if ((pp->dbc >> i) & 1u) {
                            uint32_t w[4];
                            gconv_impl_ld_raw(w, dp, 16);
#pragma unroll
                            for (int v = 0; v < VEC; v++)
                                bsum[v] = fmaf(e->beta[i], gconv_impl_raw_elem(w, v, dt), bsum[v]);
                        } else if (dqi < 0) {
                            dqi = i;
                            dq = dp;
                            dqs1 = (int)(ds->s[1] * es);
                            dqs2 = (int)(ds->s[2] * es);
                            dqb = e->beta[i];
                        }
                    }
                }
            }
#pragma unroll
            for (int j = 0; j < SPAN; j++)
                cmask |= (unsigned)((unsigned)(iw0 + j) < (unsigned)pp->W) << j;
#pragma unroll
            for (int m = 0; m < NR; m++) {
                if (m < M)
                    gconv_impl_dw_issue(rt, m, in, cb, rowbytes, r0 + m, pp->H, cmask, cstride,
                                        pp->l2pf, SPAN);
                /* output row s = (m - Y + 1) / SH's D vectors with its last window row */
                if (dring && m >= Y - 1 && (m - Y + 1) % SH == 0 && h0 + (m - Y + 1) / SH < h1)
                    gconv_impl_dw_issue_d(dsp + (m - Y + 1) / SH * TW * GCONV_IMPL_DW_BLOCK, dq,
                                          h0 + (m - Y + 1) / SH, dqs1, dqs2, pp->Wo - wo0, TW);
                gconv_impl_cp_commit();
            }
            /* taps of channels c0..c0+VEC-1: with C = K = 1 both weight layouts store group g's
             * Y*X taps contiguously at g*Y*X, so the block is VEC*Y*X contiguous elements */
            if (pp->wei_vec) {
                uint32_t tr[GCONV_IMPL_DW_MAXK * GCONV_IMPL_DW_MAXK * 4];
                const char *wp = wei + (int64_t)c0 * YX * es;
#pragma unroll
                for (int i = 0; i < YX; i++)
                    gconv_impl_ld_raw(&tr[4 * i], wp + 16 * i, 16);
#pragma unroll
                for (int v = 0; v < VEC; v++)
#pragma unroll
                    for (int t = 0; t < YX; t++)
                        tap[t / X][t % X][v] =
                            gconv_impl_raw_elem(tr, v * YX + (pp->flip ? YX - 1 - t : t), dt);
            } else {
#pragma unroll
                for (int v = 0; v < VEC; v++)
#pragma unroll
                    for (int t = 0; t < YX; t++)
                        tap[t / X][t % X][v] = gconv_impl_ld_elem(
                            wei, (int64_t)(c0 + v) * YX + (pp->flip ? YX - 1 - t : t), dt);
            }
            if (dring) {
#pragma unroll
                for (int ky = 0; ky < Y; ky++)
#pragma unroll
                    for (int kx = 0; kx < X; kx++)
#pragma unroll
                        for (int v = 0; v < VEC; v++)
                            tap[ky][kx][v] *= e->alpha;
            }
            for (int h = h0; h < h1; h++) {
                const int mb = (h - h0) * SH; /* window row of the top of output row h */
                float acc[GCONV_IMPL_DW_MAXTW][8];
#pragma unroll
                for (int px = 0; px < TW; px++)
#pragma unroll
                    for (int v = 0; v < VEC; v++)
                        acc[px][v] = 0.0f;
                gconv_impl_cp_wait(PD * SH);
                if (dring) {
                    /* acc = beta * D + the broadcast ones; the slot is refilled below, after
                     * these reads have been consumed */
                    const uint4 *ds = dsp + dsl * TW * GCONV_IMPL_DW_BLOCK;
#pragma unroll
                    for (int px = 0; px < TW; px++) {
                        const uint4 w = ds[px * GCONV_IMPL_DW_BLOCK];
                        const uint32_t wr[4] = {w.x, w.y, w.z, w.w};
#pragma unroll
                        for (int v = 0; v < VEC; v++)
                            acc[px][v] = fmaf(dqb, gconv_impl_raw_elem(wr, v, dt), bsum[v]);
                    }
                }
#pragma unroll
                for (int ky = 0; ky < Y; ky++) {
                    uint32_t row[GCONV_IMPL_DW_MAXSPAN][4];
                    int slot = sb + ky;
                    if (slot >= NR)
                        slot -= NR;
#pragma unroll
                    for (int j = 0; j < SPAN; j++) {
                        const uint4 v = rt[(slot * SPAN + j) * GCONV_IMPL_DW_BLOCK];
                        row[j][0] = v.x, row[j][1] = v.y, row[j][2] = v.z, row[j][3] = v.w;
                    }
                    gconv_impl_dw_fma_row(acc, row, tap[ky], dt, VEC, X, SW, TW);
                }
                /* the SH top rows are dead: refill their slots with the rows PD steps ahead
                 * (after the arithmetic above, which consumed their last reads) */
#pragma unroll
                for (int q = 0; q < SH; q++) {
                    const int m = mb + NR + q;
                    int slot = sb + q;
                    if (slot >= NR)
                        slot -= NR;
                    if (m < M)
                        gconv_impl_dw_issue(rt, slot, in, cb, rowbytes, r0 + m, pp->H, cmask,
                                            cstride, pp->l2pf, SPAN);
                    /* output row h + PD + 1's D vectors ride with its last window row,
                     * m = mb + NR + SH - 1, into the slot row h just read */
                    if (dring && q == SH - 1 && h + PD + 1 < h1)
                        gconv_impl_dw_issue_d(dsp + dsl * TW * GCONV_IMPL_DW_BLOCK, dq,
                                              h + PD + 1, dqs1, dqs2, pp->Wo - wo0, TW);
                    gconv_impl_cp_commit();
                }
                sb += SH;
                if (sb >= NR)
                    sb -= NR;
                dsl = dsl == PD ? 0 : dsl + 1;
                {
                    char *op = out + (pout + h) * pp->Wo * pp->GC * es;
                    if (plain == 1) {
                        /* one copy of the stores per activation kind: e0 keeps its value, but
                         * as a constant the inlined built-in epilogue drops its kind tests */
                        const int kind = (int)e0.act.kind;
                        if (kind == GCONV_ACT_NONE) {
                            e0.act.kind = GCONV_ACT_NONE;
                            gconv_impl_dw_store(op, acc, &e0, epi, pp, n, d, h, wo0, c0, dt, TW);
                        } else if (kind == GCONV_ACT_RELU) {
                            e0.act.kind = GCONV_ACT_RELU;
                            gconv_impl_dw_store(op, acc, &e0, epi, pp, n, d, h, wo0, c0, dt, TW);
                        } else if (kind == GCONV_ACT_CLAMP) {
                            e0.act.kind = GCONV_ACT_CLAMP;
                            gconv_impl_dw_store(op, acc, &e0, epi, pp, n, d, h, wo0, c0, dt, TW);
                        } else {
                            gconv_impl_dw_store(op, acc, &e0, epi, pp, n, d, h, wo0, c0, dt, TW);
                        }
                    } else if (bonly && pp->dvec) {
                        gconv_act a = e->act;
#pragma unroll
                        for (int i = 0; i < GCONV_MAX_D; i++) {
                            if (i < e->num_d) {
                                const gconv_act_strides *ds = &e->d[i].strides;
                                uint32_t w[4];
                                gconv_impl_ld_raw(w, (const char *)e->d[i].data +
                                                         (c0 + (int64_t)n * ds->n +
                                                          (int64_t)d * ds->s[0]) * es, 16);
#pragma unroll
                                for (int v = 0; v < VEC; v++) {
                                    const float b = e->beta[i] * gconv_impl_raw_elem(w, v, dt);
#pragma unroll
                                    for (int px = 0; px < TW; px++)
                                        acc[px][v] = i == 0 ? fmaf(e->alpha, acc[px][v], b)
                                                            : acc[px][v] + b;
                                }
                            }
                        }
                        if (a.kind == GCONV_ACT_NONE) {
                            a.kind = GCONV_ACT_NONE;
                            gconv_impl_dw_act_store(op, acc, a, pp, wo0, c0, dt, TW);
                        } else if (a.kind == GCONV_ACT_RELU) {
                            a.kind = GCONV_ACT_RELU;
                            gconv_impl_dw_act_store(op, acc, a, pp, wo0, c0, dt, TW);
                        } else if (a.kind == GCONV_ACT_CLAMP) {
                            a.kind = GCONV_ACT_CLAMP;
                            gconv_impl_dw_act_store(op, acc, a, pp, wo0, c0, dt, TW);
                        } else {
                            gconv_impl_dw_act_store(op, acc, a, pp, wo0, c0, dt, TW);
                        }
                    } else if (dring) {
                        /* alpha, the broadcast D tensors and dq are in acc already */
                        gconv_act a = e->act;
                        /* one copy of the activation per kind, as in the plain path */
                        if (a.kind == GCONV_ACT_NONE) {
                            a.kind = GCONV_ACT_NONE;
                            gconv_impl_dw_act_store(op, acc, a, pp, wo0, c0, dt, TW);
                        } else if (a.kind == GCONV_ACT_RELU) {
                            a.kind = GCONV_ACT_RELU;
                            gconv_impl_dw_act_store(op, acc, a, pp, wo0, c0, dt, TW);
                        } else if (a.kind == GCONV_ACT_CLAMP) {
                            a.kind = GCONV_ACT_CLAMP;
                            gconv_impl_dw_act_store(op, acc, a, pp, wo0, c0, dt, TW);
                        } else {
                            gconv_impl_dw_act_store(op, acc, a, pp, wo0, c0, dt, TW);
                        }
                    } else if (plain >= 2 && !bonly) {
                        /* built-in epilogue, D tensors not vectorisable: per D tensor the VEC
                         * loads of a column are independent and issue together */
#pragma unroll
                        for (int px = 0; px < TW; px++) {
                            const int wo = wo0 + px;
                            if (wo < pp->Wo) {
                                uint32_t o[4];
                                float y[8];
#pragma unroll
                                for (int v = 0; v < VEC; v++)
                                    y[v] = e->alpha * acc[px][v];
#pragma unroll
                                for (int i = 0; i < GCONV_MAX_D; i++) {
                                    if (i < e->num_d) {
                                        const gconv_act_strides *ds = &e->d[i].strides;
                                        const int64_t off =
                                            gconv_act_offset(ds, c0, n, 0, d, h, wo);
                                        float dv[8];
#pragma unroll
                                        for (int v = 0; v < VEC; v++)
                                            dv[v] = gconv_impl_dev_load((gconv_dtype)dt,
                                                                        e->d[i].data,
                                                                        off + v * ds->g);
#pragma unroll
                                        for (int v = 0; v < VEC; v++)
                                            y[v] = fmaf(e->beta[i], dv[v], y[v]);
                                    }
                                }
#pragma unroll
                                for (int v = 0; v < VEC; v++)
                                    y[v] = gconv_act_apply(e->act, y[v]);
                                gconv_impl_pack(o, y, VEC, dt);
                                gconv_impl_st_raw(op + (wo * pp->GC + c0) * es, o, 16);
                            }
                        }
                    } else {
                        /* a user operation: EPI_FN per element, unrolled so the loads of its
                         * VEC x TW calls can overlap */
                        gconv_impl_dw_store(op, acc, e, epi, pp, n, d, h, wo0, c0, dt, TW);
                    }
                }
            }
        }
    }
    gconv_impl_cp_wait(0); /* no copy may outlive the block (only empty groups remain) */
}

/* ---- FEWC: few channels per group, taps in shared memory ------------------------------------- */

typedef struct gconv_impl_fc_params {
    int G;
    int Di, Hi, Wi, Do, Ho, Wo;
    int Z, Y, X;
    int sd, sh, sw, dd, dh, dw, pd, ph, pw;
    int GB;          /* groups per block (GVB * GV) */
    int GVB;         /* group vectors per block: threadIdx % GVB picks the vector */
    int PT;          /* column tiles per block and pass: threadIdx / GVB picks the tile */
    int ngb;         /* group blocks: blockIdx % ngb picks one */
    int wts;         /* column tiles per output row, ceil(Wo / TW) */
    long long tiles; /* N * Do * Ho * wts */
    long long wg, wk, wc, wz, wy, wx; /* weight strides, elements */
} gconv_impl_fc_params;

/* Epilogue and vector stores of one FEWC tile (TW columns x GV groups x K outputs). */
static __device__ __forceinline__ void gconv_impl_fc_store(
    char *op, float (*acc)[GCONV_IMPL_FC_MAXOUT], const gconv_epilogue *e, gconv_impl_epi_fn epi,
    const gconv_impl_fc_params *pp, int n, int dq, int ho, int wo0, int g0, const int dt,
    const int C, const int K, const int scalar)
{
    const int es = dt == GCONV_F32 ? 4 : 2;
    const int GV = gconv_impl_fc_gv(C, es, scalar);
    const int TW = gconv_impl_fc_tw(GV, C, K, es);
    const int GK = pp->G * K;
#pragma unroll
    for (int px = 0; px < TW; px++) {
        const int wo = wo0 + px;
        if (wo < pp->Wo) {
            uint32_t o[GCONV_IMPL_FC_MAXRAW];
            float y[GCONV_IMPL_FC_MAXOUT];
#pragma unroll
            for (int gv = 0; gv < GV; gv++)
#pragma unroll
                for (int k = 0; k < K; k++)
                    y[gv * K + k] =
                        epi(e, (gconv_dtype)dt, acc[px][gv * K + k], g0 + gv, n, k, dq, ho, wo);
            gconv_impl_pack(o, y, GV * K, dt);
            gconv_impl_st_raw(op + wo * GK * es, o, GV * K * es);
        }
    }
}

/* The TW input pixels (columns wi0, wi0 + sw, ...) of one filter tap, GV*C channels each. */
static __device__ __forceinline__ void gconv_impl_fc_load(uint32_t (*raw)[GCONV_IMPL_FC_MAXRAW],
                                                          const char *rp, int wi0,
                                                          const gconv_impl_fc_params *pp, int GC,
                                                          const int es, const int NBI,
                                                          const int TW)
{
#pragma unroll
    for (int px = 0; px < TW; px++) {
        const int wi = wi0 + px * pp->sw;
        const int ok = (unsigned)wi < (unsigned)pp->Wi;
        /* branch-free: load from a valid address, then select zeros for padding */
        gconv_impl_ld_raw(raw[px], ok ? rp + wi * GC * es : rp, NBI);
#pragma unroll
        for (int w = 0; w < (NBI + 3) / 4; w++)
            raw[px][w] = ok ? raw[px][w] : 0u;
    }
}

/* One filter row of a 3-tap, stride-1, undilated FEWC tile: the TW + 2 input pixels the row
 * needs are loaded once, each (group, channel) value converted once and used by the 3 taps of
 * every output column it feeds. tpr = the thread's taps of the row's first tap. */
static __device__ __forceinline__ void gconv_impl_fc_row3(float (*acc)[GCONV_IMPL_FC_MAXOUT],
                                                          const char *rp, const float *tpr,
                                                          int wi0, const gconv_impl_fc_params *pp,
                                                          int GC, int per_tap, const int dt,
                                                          const int C, const int K, const int GV,
                                                          const int TW, const int CS)
{
    const int es = dt == GCONV_F32 ? 4 : 2;
    const int NBI = GV * C * es;
    uint32_t raw[GCONV_IMPL_FC_MAXTW + 2][GCONV_IMPL_FC_MAXRAW];
#pragma unroll
    for (int p = 0; p < TW + 2; p++) {
        const int wi = wi0 + p;
        const int ok = (unsigned)wi < (unsigned)pp->Wi;
        gconv_impl_ld_raw(raw[p], ok ? rp + wi * GC * es : rp, NBI);
#pragma unroll
        for (int w = 0; w < (NBI + 3) / 4; w++)
            raw[p][w] = ok ? raw[p][w] : 0u;
    }
#pragma unroll
    for (int gv = 0; gv < GV; gv++) {
#pragma unroll
        for (int c = 0; c < C; c++) {
            float xv[GCONV_IMPL_FC_MAXTW + 2];
#pragma unroll
            for (int p = 0; p < TW + 2; p++)
                xv[p] = gconv_impl_raw_elem(raw[p], gv * C + c, dt);
#pragma unroll
            for (int x = 0; x < 3; x++) {
                const float *tp = tpr + x * per_tap;
                float tc[16];
#pragma unroll
                for (int k = 0; k < K; k++) {
                    const int ev = (gv * C + c) * K + k; /* index in the thread's tap vector */
                    if (CS == 4 && K % 4 == 0) {
                        if (k % 4 == 0) {
                            const float4 f = *(const float4 *)(tp + (ev / 4) * pp->GVB * 4);
                            tc[k] = f.x, tc[k + 1] = f.y, tc[k + 2] = f.z, tc[k + 3] = f.w;
                        }
                    } else {
                        tc[k] = tp[(ev / CS) * pp->GVB * CS + ev % CS];
                    }
                }
#pragma unroll
                for (int px = 0; px < TW; px++)
#pragma unroll
                    for (int k = 0; k < K; k++)
                        acc[px][gv * K + k] = fmaf(xv[px + x], tc[k], acc[px][gv * K + k]);
            }
        }
    }
}

static __device__ __forceinline__ void gconv_impl_fc_body(const gconv_impl_fc_params *pp,
                                                          const char *in, const char *wei,
                                                          char *out, const gconv_epilogue *e,
                                                          gconv_impl_epi_fn epi, const int dt,
                                                          const int C, const int K,
                                                          const int scalar, const int plain)
{
    extern __shared__ float gconv_impl_fc_smem[];
    const int es = dt == GCONV_F32 ? 4 : 2;
    const int GV = gconv_impl_fc_gv(C, es, scalar);
    const int TW = gconv_impl_fc_tw(GV, C, K, es);
    const int NBI = GV * C * es, NBO = GV * K * es;
    const int CK = C * K;
    const int TV = GV * CK;                   /* taps of one filter tap for one thread */
    const int CS = TV % 4 == 0 ? 4 : 1;       /* chunk of that vector read at once */
    const int per_tap = pp->GB * CK; /* floats of one tap for all the block's groups */
    const int taps = pp->Z * pp->Y * pp->X;
    const int gb = (int)(blockIdx.x % (unsigned)pp->ngb);
    const int gvl = (int)threadIdx.x % pp->GVB, ptl = (int)threadIdx.x / pp->GVB;
    const int gbase = gb * pp->GB;
    const int g0 = gbase + gvl * GV;
    const int GC = pp->G * C, GK = pp->G * K;
    float *sm = gconv_impl_fc_smem;
    gconv_epilogue e0 = *e; /* plain: launched only when num_d == 0, which e0 makes a constant */
    int i;
    e0.num_d = 0;
    /* stage the block's taps as fp32. A thread's taps for one filter tap form a vector of
     * TV = GV*C*K values in (gv, c, k) order, cut into chunks of CS = 4 (or 1) values; the
     * layout [tap][chunk][group vector][CS] puts the same chunk of consecutive threads at
     * consecutive addresses, so a warp's 16-byte reads are free of bank conflicts. */
    for (int t = 0; t < taps; t++) {
        const int x = t % pp->X, yz = t / pp->X, y = yz % pp->Y, z = yz / pp->Y;
        const int64_t wt0 = z * pp->wz + y * pp->wy + x * pp->wx;
        float *st = sm + t * per_tap;
#pragma unroll 4
        for (i = (int)threadIdx.x; i < per_tap; i += (int)blockDim.x) {
            const int q = i / (pp->GVB * CS), r2 = i - q * (pp->GVB * CS);
            const int gvi = r2 / CS, ev = q * CS + (r2 - gvi * CS); /* thread, index in vector */
            const int gv = ev / CK, ck = ev - gv * CK;
            const int c = ck / K, k = ck - c * K;
            const int g = gbase + gvi * GV + gv;
            st[i] = g < pp->G ? gconv_impl_ld_elem(wei, g * pp->wg + k * pp->wk + c * pp->wc + wt0,
                                                   dt)
                              : 0.0f;
        }
    }
    __syncthreads(); /* all taps staged before any thread reads them; no barrier follows */
    if (g0 >= pp->G)
        return; /* past the last group (G % GV == 0, so a vector is all in or all out) */
    {
        const float *tps = sm + gvl * CS; /* + tap * per_tap + chunk * GVB * CS */
        /* 3 taps, stride 1, no dilation along W (most grouped convs): the row path */
        const int x3 = pp->X == 3 && pp->sw == 1 && pp->dw == 1;
        const int64_t tstep = (int64_t)(gridDim.x / (unsigned)pp->ngb) * pp->PT;
        int64_t tile;
        for (tile = (int64_t)(blockIdx.x / (unsigned)pp->ngb) * pp->PT + ptl; tile < pp->tiles;
             tile += tstep) {
            int wt, ho, dq, n;
            float acc[GCONV_IMPL_FC_MAXTW][GCONV_IMPL_FC_MAXOUT];
            if (pp->tiles <= INT_MAX) {
                unsigned t = (unsigned)tile;
                wt = (int)(t % (unsigned)pp->wts);
                t /= (unsigned)pp->wts;
                ho = (int)(t % (unsigned)pp->Ho);
                t /= (unsigned)pp->Ho;
                dq = (int)(t % (unsigned)pp->Do);
                n = (int)(t / (unsigned)pp->Do);
            } else {
                int64_t t = tile;
                wt = (int)(t % pp->wts);
                t /= pp->wts;
                ho = (int)(t % pp->Ho);
                t /= pp->Ho;
                dq = (int)(t % pp->Do);
                n = (int)(t / pp->Do);
            }
#pragma unroll
            for (int px = 0; px < TW; px++)
#pragma unroll
                for (int o = 0; o < GV * K; o++)
                    acc[px][o] = 0.0f;
            for (int z = 0; z < pp->Z; z++) {
                const int di = dq * pp->sd - pp->pd + z * pp->dd;
                if ((unsigned)di >= (unsigned)pp->Di)
                    continue;
                for (int y = 0; y < pp->Y; y++) {
                    const int hi = ho * pp->sh - pp->ph + y * pp->dh;
                    const char *rp;
                    const float *tpr;
                    if ((unsigned)hi >= (unsigned)pp->Hi)
                        continue;
                    rp = in + ((((int64_t)n * pp->Di + di) * pp->Hi + hi) * pp->Wi * GC +
                               (int64_t)g0 * C) * es;
                    tpr = tps + (int64_t)((z * pp->Y + y) * pp->X) * per_tap;
                    if (x3) {
                        gconv_impl_fc_row3(acc, rp, tpr, wt * TW - pp->pw, pp, GC, per_tap, dt, C,
                                           K, GV, TW, CS);
                        continue;
                    }
                    for (int x = 0; x < pp->X; x++) {
                        const float *tp = tpr + x * per_tap;
                        uint32_t raw[GCONV_IMPL_FC_MAXTW][GCONV_IMPL_FC_MAXRAW];
                        float tk[16];
                        gconv_impl_fc_load(raw, rp, wt * TW * pp->sw - pp->pw + x * pp->dw, pp, GC,
                                           es, NBI, TW);
                        if (TV <= 16) {
                            /* the thread's whole tap vector for this tap */
#pragma unroll
                            for (int q = 0; q < TV / CS; q++) {
                                if (CS == 4) {
                                    const float4 f = *(const float4 *)(tp + q * pp->GVB * 4);
                                    tk[4 * q] = f.x, tk[4 * q + 1] = f.y, tk[4 * q + 2] = f.z,
                                    tk[4 * q + 3] = f.w;
                                } else {
                                    tk[q] = tp[q * pp->GVB];
                                }
                            }
                        }
#pragma unroll
                        for (int gv = 0; gv < GV; gv++) {
#pragma unroll
                            for (int c = 0; c < C; c++) {
                                const int base = (gv * C + c) * K; /* index in the vector */
                                float tc[16];
#pragma unroll
                                for (int k = 0; k < K; k++) {
                                    const int ev = base + k;
                                    if (TV <= 16)
                                        tc[k] = tk[ev];
                                    else if (CS == 4 && K % 4 == 0 && ev % 4 == 0) {
                                        const float4 f =
                                            *(const float4 *)(tp + (ev / 4) * pp->GVB * 4);
                                        tc[k] = f.x;
                                        if (k + 1 < K)
                                            tc[k + 1] = f.y;
                                        if (k + 2 < K)
                                            tc[k + 2] = f.z;
                                        if (k + 3 < K)
                                            tc[k + 3] = f.w;
                                    } else if (CS == 1 || K % 4 != 0)
                                        tc[k] = tp[(ev / CS) * pp->GVB * CS + ev % CS];
                                }
#pragma unroll
                                for (int px = 0; px < TW; px++) {
                                    const float xv = gconv_impl_raw_elem(raw[px], gv * C + c, dt);
#pragma unroll
                                    for (int k = 0; k < K; k++)
                                        acc[px][gv * K + k] =
                                            fmaf(xv, tc[k], acc[px][gv * K + k]);
                                }
                            }
                        }
                    }
                }
            }
            {
                char *op = out + ((((int64_t)n * pp->Do + dq) * pp->Ho + ho) * pp->Wo * GK +
                                  (int64_t)g0 * K) * es;
                if (plain) {
                    gconv_impl_fc_store(op, acc, &e0, epi, pp, n, dq, ho, wt * TW, g0, dt, C, K,
                                        scalar);
                } else {
#pragma unroll
                    for (int px = 0; px < TW; px++) {
                        const int wo = wt * TW + px;
                        /* with D tensors: one rolled copy of the epilogue per column, on a
                         * small thread-private staging array, then the usual vector store */
                        float stg[GCONV_IMPL_FC_MAXOUT];
                        uint32_t o[GCONV_IMPL_FC_MAXRAW];
                        int oi;
                        if (wo >= pp->Wo)
                            continue;
#pragma unroll
                        for (oi = 0; oi < GV * K; oi++)
                            stg[oi] = acc[px][oi];
#pragma unroll 1
                        for (oi = 0; oi < GV * K; oi++)
                            stg[oi] = epi(e, (gconv_dtype)dt, stg[oi], g0 + oi / K, n, oi % K, dq,
                                          ho, wo);
                        gconv_impl_pack(o, stg, GV * K, dt);
                        gconv_impl_st_raw(op + wo * GK * es, o, NBO);
                    }
                }
            }
        }
    }
}

/* ---- GENERIC: one thread per output element, any layout ------------------------------------- */

typedef struct gconv_impl_gen_params {
    int G, N, C, K;
    int in[3], out[3], f[3], st[3], dl[3], pl[3];
    int order;        /* index order: 0 (n,d,h,w,g,k) NHWGC, 1 (g,n,d,h,w,k) GNHWC,
                         2 (n,g,k,d,h,w) NGCHW: the output's memory order, so stores coalesce */
    long long total;  /* output elements */
    gconv_act_strides si, so;
    gconv_wei_strides sw;
} gconv_impl_gen_params;

static __device__ __forceinline__ void gconv_impl_gen_body(const gconv_impl_gen_params *pp,
                                                           const char *in, const char *wei,
                                                           char *out, const gconv_epilogue *e,
                                                           gconv_impl_epi_fn epi, const int dt)
{
    int64_t idx;
    for (idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; idx < pp->total;
         idx += (int64_t)gridDim.x * blockDim.x) {
        int64_t r = idx;
        int g, n, k, o0, o1, o2, z, y, x, c;
        float acc = 0.0f;
        if (pp->order == 2) {
            o2 = (int)(r % pp->out[2]), r /= pp->out[2];
            o1 = (int)(r % pp->out[1]), r /= pp->out[1];
            o0 = (int)(r % pp->out[0]), r /= pp->out[0];
            k = (int)(r % pp->K), r /= pp->K;
            g = (int)(r % pp->G), n = (int)(r / pp->G);
        } else {
            k = (int)(r % pp->K), r /= pp->K;
            g = 0;
            if (pp->order == 0)
                g = (int)(r % pp->G), r /= pp->G;
            o2 = (int)(r % pp->out[2]), r /= pp->out[2];
            o1 = (int)(r % pp->out[1]), r /= pp->out[1];
            o0 = (int)(r % pp->out[0]), r /= pp->out[0];
            if (pp->order == 0)
                n = (int)r;
            else
                n = (int)(r % pp->N), g = (int)(r / pp->N);
        }
        for (z = 0; z < pp->f[0]; z++) {
            const int i0 = o0 * pp->st[0] - pp->pl[0] + z * pp->dl[0];
            if ((unsigned)i0 >= (unsigned)pp->in[0])
                continue;
            for (y = 0; y < pp->f[1]; y++) {
                const int i1 = o1 * pp->st[1] - pp->pl[1] + y * pp->dl[1];
                if ((unsigned)i1 >= (unsigned)pp->in[1])
                    continue;
                for (x = 0; x < pp->f[2]; x++) {
                    const int i2 = o2 * pp->st[2] - pp->pl[2] + x * pp->dl[2];
                    int64_t ib, wb;
                    if ((unsigned)i2 >= (unsigned)pp->in[2])
                        continue;
                    ib = gconv_act_offset(&pp->si, g, n, 0, i0, i1, i2);
                    wb = gconv_wei_offset(&pp->sw, g, k, 0, z, y, x);
                    for (c = 0; c < pp->C; c++)
                        acc = fmaf(gconv_impl_ld_elem(in, ib + c * pp->si.c, dt),
                                   gconv_impl_ld_elem(wei, wb + c * pp->sw.c, dt), acc);
                }
            }
        }
        gconv_impl_st_elem(out, gconv_act_offset(&pp->so, g, n, k, o0, o1, o2),
                           epi(e, (gconv_dtype)dt, acc, g, n, k, o0, o1, o2), dt);
    }
}

/* ---- host side: which kernel, with which parameters ----------------------------------------- */

typedef struct gconv_impl_direct_plan {
    int path;      /* gconv_impl_direct_path */
    int variant;   /* DW3: stride + 2 (D tensors) or + 4 (only broadcast vector D tensors),
                    * 7 / 8: stride 1, two columns per thread, plain / D tensors;
                    * FEWC: 2 * GCONV_IMPL_FC_* + (D) */
    unsigned grid, block, smem;
    unsigned dring_bytes; /* DW3: the part of smem that is the D slots (the residual ring) */
    gconv_impl_dw_params dw;
    gconv_impl_fc_params fc;
    gconv_impl_gen_params gen;
} gconv_impl_direct_plan;

static inline int gconv_impl_ptr_aligned(const void *p, unsigned a)
{
    return ((uintptr_t)p & (uintptr_t)(a - 1)) == 0;
}

static inline unsigned gconv_impl_grid(long long items, int block)
{
    long long b = (items + block - 1) / block;
    return (unsigned)(b < 1 ? 1 : b > GCONV_IMPL_MAX_BLOCKS ? GCONV_IMPL_MAX_BLOCKS : b);
}

static inline int gconv_impl_is_nhwgc(const gconv_problem *p)
{
    return gconv_layout_family(gconv_in_layout(p)) == GCONV_NHWGC &&
           gconv_layout_family(gconv_out_layout(p)) == GCONV_NHWGC;
}

/* Whether the input rings of forward DW3 and of the fused row kernel ask L2 for 256 bytes a
 * copy (.L2::256B): where the input plane has at least GCONV_IMPL_L2PF_PIXELS pixels, or as
 * pinned by gconv_impl_l2pf_pin (a tuning hook: -1 the rule, 0 off, 1 on; one per translation
 * unit). */
#ifndef GCONV_IMPL_L2PF_PIXELS
#define GCONV_IMPL_L2PF_PIXELS 1024
#endif
static int gconv_impl_l2pf_pin __attribute__((unused)) = -1;
static inline int gconv_impl_l2pf(long long pixels)
{
    return gconv_impl_l2pf_pin >= 0 ? gconv_impl_l2pf_pin : pixels >= GCONV_IMPL_L2PF_PIXELS;
}

/* DW3 parameters for tw output columns per thread, aiming at threads_per_sm work items per
 * multiprocessor (the instantiated kernels use the GCONV_DIRECT_DW_* values; the benchmark's
 * sweeps pass others through gconv_impl_dw3_tps). */
static inline int gconv_impl_plan_dw3_ex(const gconv_problem *p, int es, const void *in,
                                         const void *wei, const void *out,
                                         const gconv_epilogue *epi, int tw, int pd,
                                         int threads_per_sm, gconv_impl_direct_plan *pl)
{
    const int vec = 16 / es;
    const int s = p->stride[GCONV_AXIS_H];
    int Ho, Wo, sm, i, npix;
    long long nd, base, target, chunks;
    gconv_impl_dw_params *d = &pl->dw;
    if (!gconv_impl_is_nhwgc(p) || p->C != 1 || p->K != 1 || p->ndim < 2)
        return 0;
    if (p->filter[0] != 1 || p->filter[1] != 3 || p->filter[2] != 3)
        return 0;
    if (p->dilation[1] != 1 || p->dilation[2] != 1 || p->stride[2] != s || (s != 1 && s != 2))
        return 0;
    /* a 3D problem qualifies when its depth axis maps output plane d to input plane d */
    if (p->stride[0] != 1 || p->pad_lo[0] != 0 || p->pad_hi[0] != 0)
        return 0;
    if (p->G % vec || !gconv_impl_ptr_aligned(in, 16) || !gconv_impl_ptr_aligned(out, 16))
        return 0;
    Ho = gconv_out_len(p, 1);
    Wo = gconv_out_len(p, 2);
    if ((long long)p->in[2] * p->G * es >= INT_MAX || (long long)Wo * p->G * es >= INT_MAX)
        return 0;
    sm = gconv_device_sm_count();
    if (sm <= 0)
        sm = 100;
    memset(d, 0, sizeof *d);
    d->H = p->in[1], d->W = p->in[2], d->Ho = Ho, d->Wo = Wo;
    d->D = p->in[0];
    d->GC = p->G;
    d->ph = p->pad_lo[1], d->pw = p->pad_lo[2];
    d->l2pf = gconv_impl_l2pf((long long)p->in[1] * p->in[2]);
    d->cvs = p->G / vec;
    d->wts = (Wo + tw - 1) / tw;
    /* split the height into runs of rh rows only as far as the GPU needs work items: each run
     * reloads the Y - SH rows above it, so long runs move fewer bytes. Where that leaves runs
     * of under 4 rows (small images: a run of 2 or 3 rows reads 1.7-2x its input), runs of up
     * to 7 rows instead, as long as every SM keeps 256 items (H100, bench/NOTES.md: 8-12 %
     * faster on the 28x28, 14x14 and 7x7 depthwise layers; capping every layer's runs at 7 rows
     * lost 3-5 % on 112x112 and 56x56 stride 2, whose runs were 4-6 rows) */
    nd = (long long)p->N * p->in[0];
    base = nd * d->cvs * d->wts;
    target = (long long)sm * threads_per_sm;
    chunks = base >= target ? 1 : (target + base - 1) / base;
    if (chunks > Ho)
        chunks = Ho;
    if ((Ho + chunks - 1) / chunks < 4) {
        const long long few = ((long long)sm * 256 + base - 1) / base;
        const long long c7 = (Ho + 6) / 7;
        const long long c = c7 > few ? c7 : few;
        if (c < chunks)
            chunks = c;
    }
    d->rh = (int)((Ho + chunks - 1) / chunks);
    d->hchunks = (Ho + d->rh - 1) / d->rh;
    d->wei_vec = gconv_impl_ptr_aligned(wei, 16);
    d->dvec = 1;
    d->dbc = 0;
    npix = 0;
    for (i = 0; i < epi->num_d; i++) {
        const gconv_act_strides *ds = &epi->d[i].strides;
        if (ds->g != 1 || !gconv_impl_ptr_aligned(epi->d[i].data, 16) || ds->n % vec ||
            ds->s[0] % vec || ds->s[1] % vec || ds->s[2] % vec ||
            ds->s[1] * es >= INT_MAX || ds->s[1] * es <= -INT_MAX ||
            ds->s[2] * es >= INT_MAX || ds->s[2] * es <= -INT_MAX)
            d->dvec = 0;
        if (ds->s[1] == 0 && ds->s[2] == 0)
            d->dbc |= 1u << i;
        else
            npix++;
    }
    if (npix > 1)
        d->dvec = 0; /* the vector path takes one per-pixel D tensor (gconv_impl_dw_body) */
    /* that path scales the taps by alpha (gconv_impl_dw_body): a non-finite alpha (0 * inf
     * taps) or one large enough to overflow a tap where alpha * acc would not takes the
     * per-element path, which applies alpha to the sum */
    if (epi->num_d > 0 && !(epi->alpha <= 1e19f && epi->alpha >= -1e19f))
        d->dvec = 0;
    d->items = base * d->hchunks;
    pl->path = GCONV_IMPL_DIRECT_DW3;
    /* 1, 2: stride 1, 2 plain; 3, 4: with D tensors; 5, 6: only broadcast vector D tensors;
     * gconv_impl_plan_dw3 makes 1, 3 into 7, 8 for two columns per thread */
    pl->variant = s + (epi->num_d == 0                                                  ? 0
                       : d->dvec && d->dbc == (1u << epi->num_d) - 1u ? 4
                                                                        : 2);
    pl->block = GCONV_IMPL_DW_BLOCK;
    pl->grid = gconv_impl_grid(d->items, GCONV_IMPL_DW_BLOCK);
    pl->smem = gconv_impl_dw_smem(3, 3, s, s, tw, pd, GCONV_IMPL_DW_BLOCK, 0);
    if (pl->smem > 48 * 1024)
        return 0; /* more would need an opt-in attribute; the instantiated sizes stay under */
    /* vector D tensors with a per-pixel one (variants 3, 4): the kernel takes its rows
     * through the ring, which needs the D slots; where they do not fit (tile macros set
     * high), the scalar D path. A user epilogue's launcher drops them again
     * (gconv_impl_dw_no_dring). */
    pl->dring_bytes = 0;
    if (pl->variant == s + 2 && d->dvec) {
        const unsigned full = gconv_impl_dw_smem(3, 3, s, s, tw, pd, GCONV_IMPL_DW_BLOCK, 1);
        if (full <= 48 * 1024)
            pl->dring_bytes = full - pl->smem, pl->smem = full;
        else
            d->dvec = 0;
    }
    return 1;
}

/* The plan without the D slots (a user epilogue reads its D tensors itself). */
static inline void gconv_impl_dw_no_dring(gconv_impl_direct_plan *pl)
{
    if (pl->path == GCONV_IMPL_DIRECT_DW3) {
        pl->smem -= pl->dring_bytes;
        pl->dring_bytes = 0;
    }
}

/* Tuning hook: work items aimed at per SM by the DW3 split (0: GCONV_DIRECT_DW_THREADS_PER_SM).
 * One per translation unit; the benchmark sets it for sweeps. */
static int gconv_impl_dw3_tps __attribute__((unused)) = 0;

static inline int gconv_impl_plan_dw3(const gconv_problem *p, int es, const void *in,
                                      const void *wei, const void *out,
                                      const gconv_epilogue *epi, gconv_impl_direct_plan *pl)
{
    const int s1 = p->stride[GCONV_AXIS_H] == 1, wo = gconv_out_len(p, GCONV_AXIS_W);
    /* stride 1, output width 2 mod 4 (14x14 layers): 2 columns per thread leave no idle
     * column (the dw3s1n kernel, and dw3s1nd with D tensors; H100 c576@14: 16.8 -> 15.7 us,
     * with a residual 23.8 -> 21.1); not for broadcast-only D tensors (no such kernel).
     * dw3s1nd (fp16: 167 registers, 6 blocks of 64 per SM) aims at 192 items per SM, which
     * leaves c576@14 one wave of whole-height items (19.5 us) where 1024 gave 1.27 waves of
     * 7-row ones, and c384@14 its 7-row items (14.3 us; 19.0 with dw3s1d). */
    const int tps = gconv_impl_dw3_tps > 0 ? gconv_impl_dw3_tps : GCONV_DIRECT_DW_THREADS_PER_SM;
    int narrow = s1 && wo % 4 == 2;
    if (s1 && !narrow && epi->num_d && es == 2) {
        /* 16-bit D tensors: dw3s1d holds 4 blocks per SM (199 registers), dw3s1nd 6. Where
         * dw3s1d would run in under two waves of 4, the two-column kernel, whatever the
         * width (H100, with a residual: c192@28 28.2 -> 24.5 us, c960@7 14.3 -> 11.2; with
         * many waves it loses, c144@56 66.8 -> 68.0, c32@112 59.8 -> 61.9) */
        const int sm = gconv_device_sm_count();
        if (!gconv_impl_plan_dw3_ex(p, es, in, wei, out, epi, GCONV_DIRECT_DW_TW1,
                                    GCONV_DIRECT_DW_PD, tps, pl))
            return 0;
        if (pl->variant != 3 || (long long)pl->grid >= 8LL * (sm > 0 ? sm : 100))
            return 1;
        narrow = 1;
    }
    if (narrow) {
        if (!gconv_impl_plan_dw3_ex(p, es, in, wei, out, epi, 2, GCONV_DIRECT_DW_PDN,
                                    epi->num_d && gconv_impl_dw3_tps <= 0 ? 192 : tps, pl))
            return 0;
        if (pl->variant == 1 || pl->variant == 3) {
            pl->variant = pl->variant == 1 ? 7 : 8;
            return 1;
        }
    }
    return gconv_impl_plan_dw3_ex(p, es, in, wei, out, epi,
                                  s1 ? GCONV_DIRECT_DW_TW1 : GCONV_DIRECT_DW_TW2,
                                  s1 ? GCONV_DIRECT_DW_PD : GCONV_DIRECT_DW_PDN, tps, pl);
}

static inline int gconv_impl_plan_fewc(const gconv_problem *p, int es, const void *in,
                                       const void *wei, const void *out,
                                       const gconv_epilogue *epi, gconv_impl_direct_plan *pl)
{
    const int C = p->C, K = p->K;
    int variant, gv, tw, nbi, nbo, gvb, maxg, pt, taps;
    long long tiles, tb, cap;
    gconv_impl_fc_params *f = &pl->fc;
    gconv_wei_strides ws;
    (void)wei;
    if (!gconv_impl_is_nhwgc(p) || C != K)
        return 0;
    if (C == 1) {
        gv = gconv_impl_fc_gv(1, es, 0);
        variant = p->G % gv == 0 && gconv_impl_ptr_aligned(in, 16) &&
                          gconv_impl_ptr_aligned(out, 16)
                      ? GCONV_IMPL_FC_C1
                      : GCONV_IMPL_FC_C1S;
    } else if (C == 4) {
        variant = GCONV_IMPL_FC_C4;
    } else {
        return 0;
    }
    gv = gconv_impl_fc_gv(C, es, variant == GCONV_IMPL_FC_C1S);
    tw = gconv_impl_fc_tw(gv, C, K, es);
    nbi = gv * C * es;
    nbo = gv * K * es;
    if (p->G % gv || !gconv_impl_ptr_aligned(in, nbi < 16 ? nbi : 16) ||
        !gconv_impl_ptr_aligned(out, nbo < 16 ? nbo : 16))
        return 0;
    if ((long long)p->in[2] * p->G * C * es >= INT_MAX ||
        (long long)gconv_out_len(p, 2) * p->G * K * es >= INT_MAX)
        return 0;
    taps = (int)gconv_filter_taps(p);
    if ((long long)taps * gv * C * K * 4 > GCONV_IMPL_FC_SMEM)
        return 0;
    gvb = p->G / gv;
    if (gvb > 32)
        gvb = 32;
    maxg = (int)(GCONV_IMPL_FC_SMEM / ((long long)taps * gv * C * K * 4));
    if (gvb > maxg)
        gvb = maxg;
    pt = GCONV_IMPL_FC_BLOCK / gvb;
    memset(f, 0, sizeof *f);
    f->G = p->G;
    f->Di = p->in[0], f->Hi = p->in[1], f->Wi = p->in[2];
    f->Do = gconv_out_len(p, 0), f->Ho = gconv_out_len(p, 1), f->Wo = gconv_out_len(p, 2);
    f->Z = p->filter[0], f->Y = p->filter[1], f->X = p->filter[2];
    f->sd = p->stride[0], f->sh = p->stride[1], f->sw = p->stride[2];
    f->dd = p->dilation[0], f->dh = p->dilation[1], f->dw = p->dilation[2];
    f->pd = p->pad_lo[0], f->ph = p->pad_lo[1], f->pw = p->pad_lo[2];
    f->GVB = gvb;
    f->GB = gvb * gv;
    f->PT = pt;
    f->ngb = (p->G + f->GB - 1) / f->GB;
    f->wts = (f->Wo + tw - 1) / tw;
    tiles = (long long)p->N * f->Do * f->Ho * f->wts;
    f->tiles = tiles;
    ws = gconv_weight_strides(p);
    f->wg = ws.g, f->wk = ws.k, f->wc = ws.c;
    f->wz = ws.s[0], f->wy = ws.s[1], f->wx = ws.s[2];
    tb = (tiles + pt - 1) / pt;
    /* a few waves of blocks that each loop over several tile groups: the taps are staged once
     * per block, so fewer, longer-lived blocks stage them less often */
    {
        int sm = gconv_device_sm_count();
        long long want = (long long)(sm > 0 ? sm : 100) * GCONV_DIRECT_FC_BLOCKS_PER_SM / f->ngb;
        if (want < 1)
            want = 1;
        if (tb > want)
            tb = want;
    }
    cap = GCONV_IMPL_MAX_BLOCKS / f->ngb;
    if (cap < 1)
        return 0;
    if (tb > cap)
        tb = cap;
    pl->path = GCONV_IMPL_DIRECT_FEWC;
    pl->variant = 2 * variant + (epi->num_d != 0); /* even: plain, odd: with D tensors */
    pl->block = (unsigned)(gvb * pt);
    pl->grid = (unsigned)(f->ngb * tb);
    pl->smem = (unsigned)((long long)taps * f->GB * C * K * 4);
    return 1;
}

static inline int gconv_impl_plan_generic(const gconv_problem *p, gconv_impl_direct_plan *pl)
{
    gconv_impl_gen_params *g = &pl->gen;
    gconv_layout fo = gconv_layout_family(gconv_out_layout(p));
    int i;
    memset(g, 0, sizeof *g);
    g->G = p->G, g->N = p->N, g->C = p->C, g->K = p->K;
    for (i = 0; i < 3; i++) {
        g->in[i] = p->in[i];
        g->out[i] = gconv_out_len(p, i);
        g->f[i] = p->filter[i];
        g->st[i] = p->stride[i];
        g->dl[i] = p->dilation[i];
        g->pl[i] = p->pad_lo[i];
    }
    g->order = fo == GCONV_GNHWC ? 1 : fo == GCONV_NGCHW ? 2 : 0;
    g->total = gconv_out_elems(p);
    g->si = gconv_in_strides(p);
    g->so = gconv_out_strides(p);
    g->sw = gconv_weight_strides(p);
    pl->path = GCONV_IMPL_DIRECT_GENERIC;
    pl->variant = 0;
    pl->block = GCONV_IMPL_GEN_BLOCK;
    pl->grid = gconv_impl_grid(g->total, GCONV_IMPL_GEN_BLOCK);
    pl->smem = 0;
    return 1;
}

/* Choose the kernel (path AUTO: the fastest that applies) and fill its parameters; 0 if the
 * asked-for kernel cannot take the problem. */
static inline int gconv_impl_direct_plan_make(const gconv_problem *p, gconv_dtype t,
                                              const void *in, const void *wei, const void *out,
                                              const gconv_epilogue *epi, int path,
                                              gconv_impl_direct_plan *pl)
{
    const int es = (int)gconv_dtype_size(t);
    pl->dring_bytes = 0;
    if ((path == GCONV_IMPL_DIRECT_AUTO || path == GCONV_IMPL_DIRECT_DW3) &&
        gconv_impl_plan_dw3(p, es, in, wei, out, epi, pl))
        return 1;
    if ((path == GCONV_IMPL_DIRECT_AUTO || path == GCONV_IMPL_DIRECT_FEWC) &&
        gconv_impl_plan_fewc(p, es, in, wei, out, epi, pl))
        return 1;
    if (path == GCONV_IMPL_DIRECT_AUTO || path == GCONV_IMPL_DIRECT_GENERIC)
        return gconv_impl_plan_generic(p, pl);
    return 0;
}

/* Should the direct kernels take p (rather than implicit GEMM)? Yes for depthwise problems
 * (C = K = 1 per group) whose input and output are NHWGC; no otherwise.
 *  - Depthwise: a GEMM's reduction would be only the filter taps (9 for 3x3) and its N
 *    dimension one channel, far too small for matrix units, while the problem is pure
 *    bandwidth. DW3 (3x3, stride 1/2) streams it at 0.8-0.88 of the copy-bandwidth floor on
 *    H100 for the large MobileNetV2 layers and beats cuDNN on all eight (1.02x-2.04x, geomean
 *    1.25x); FEWC's depthwise variants take the other filters, strides and dilations.
 *  - Few channels per group (C = K = 4, 8, 16, 32: ResNeXt): the direct kernels need
 *    C*K*taps fp32 FMAs per output pixel and group, 0.93 G FMAs for every ResNeXt-50 grouped
 *    layer at N = 64. Measured on H100: FEWC 4/group 122 us vs cuDNN's tensor-core implicit
 *    GEMM 83 us (0.68x); 8/group 168 vs 57 us. So they go to implicit GEMM (matrix units),
 *    and FEWC's C = K = 4 kernel stays only as the direct path's own fallback.
 *  - Other layouts (GNHWC, NGCHW) and channel multipliers (C = 1, K > 1) run on the generic
 *    kernel here, which is correct for everything but not fast (one thread per output, 64-bit
 *    strides: about 19 outputs/ns), so they are left to implicit GEMM as well.
 * (bench/NOTES.md, "forward direct kernels", has the numbers.) */
static inline int gconv_impl_direct_fits(const gconv_problem *p)
{
    if (!p)
        return 0;
    return p->C == 1 && p->K == 1 && gconv_impl_is_nhwgc(p);
}

/* ---- the instantiation -------------------------------------------------------------------- */

/* The instantiated host functions may go unused in a translation unit (nvcc warns then). */
#define GCONV_IMPL_UNUSED __attribute__((unused))

#define GCONV_IMPL_DIRECT_FWD(name, T, EPI_FN)                                                   \
    GCONV_IMPL_DW_KERNEL(name, T, EPI_FN, 1, GCONV_DIRECT_DW_TW1, GCONV_DIRECT_DW_PD, 1, s1)     \
    GCONV_IMPL_DW_KERNEL(name, T, EPI_FN, 2, GCONV_DIRECT_DW_TW2, GCONV_DIRECT_DW_PDN, 1, s2)    \
    GCONV_IMPL_DW_KERNEL(name, T, EPI_FN, 1, GCONV_DIRECT_DW_TW1, GCONV_DIRECT_DW_PD, 0, s1d)    \
    GCONV_IMPL_DW_KERNEL(name, T, EPI_FN, 2, GCONV_DIRECT_DW_TW2, GCONV_DIRECT_DW_PDN, 0, s2d)   \
    GCONV_IMPL_DW_KERNEL(name, T, EPI_FN, 1, GCONV_DIRECT_DW_TW1, GCONV_DIRECT_DW_PD, 4, s1b)    \
    GCONV_IMPL_DW_KERNEL(name, T, EPI_FN, 2, GCONV_DIRECT_DW_TW2, GCONV_DIRECT_DW_PDN, 4, s2b)   \
    GCONV_IMPL_DW_KERNEL(name, T, EPI_FN, 1, 2, GCONV_DIRECT_DW_PDN, 1, s1n)                     \
    GCONV_IMPL_DW_KERNEL(name, T, EPI_FN, 1, 2, GCONV_DIRECT_DW_PDN, 0, s1nd)                    \
    GCONV_IMPL_FC_KERNEL(name, T, EPI_FN, 1, 1, 0, c1)                                           \
    GCONV_IMPL_FC_KERNEL(name, T, EPI_FN, 1, 1, 1, c1s)                                          \
    GCONV_IMPL_FC_KERNEL(name, T, EPI_FN, 4, 4, 0, c4)                                           \
    __global__ void __launch_bounds__(GCONV_IMPL_GEN_BLOCK)                                      \
        name##_gen_kernel(const gconv_impl_gen_params pp, const void *in, const void *wei,      \
                          void *out, const gconv_epilogue e)                                     \
    {                                                                                            \
        gconv_impl_gen_body(&pp, (const char *)in, (const char *)wei, (char *)out, &e, EPI_FN,   \
                            T);                                                                  \
    }                                                                                            \
    GCONV_IMPL_UNUSED static inline int name##_direct_fits(const gconv_problem *p)               \
    {                                                                                            \
        return gconv_impl_direct_fits(p);                                                        \
    }                                                                                            \
    GCONV_IMPL_UNUSED static inline gconv_status name##_direct_launch_path(                      \
        const gconv_problem *p, const void *in, const void *wei, void *out,                     \
        const gconv_epilogue *epi, hipStream_t s, int path)                                      \
    {                                                                                            \
        gconv_impl_direct_plan pl;                                                               \
        const int flip_ = (path & GCONV_IMPL_DIRECT_FLIP) != 0;                                  \
        if (!p || !in || !wei || !out || !epi)                                                   \
            return GCONV_ERR_NULL;                                                               \
        if (!gconv_impl_direct_plan_make(p, T, in, wei, out, epi,                                \
                                         path & ~GCONV_IMPL_DIRECT_FLIP, &pl) ||                 \
            (flip_ && pl.path != GCONV_IMPL_DIRECT_DW3))                                         \
            return GCONV_ERR_UNSUPPORTED;                                                        \
        pl.dw.flip = flip_;                                                                      \
        if (!GCONV_IMPL_IS_BUILTIN_EPI(EPI_FN))                                                  \
            gconv_impl_dw_no_dring(&pl);                                                         \
        switch (pl.path * 16 + pl.variant) {                                                     \
        case GCONV_IMPL_DIRECT_DW3 * 16 + 1: GCONV_IMPL_DW_LAUNCH(name, s1); break;              \
        case GCONV_IMPL_DIRECT_DW3 * 16 + 2: GCONV_IMPL_DW_LAUNCH(name, s2); break;              \
        case GCONV_IMPL_DIRECT_DW3 * 16 + 3: GCONV_IMPL_DW_LAUNCH(name, s1d); break;             \
        case GCONV_IMPL_DIRECT_DW3 * 16 + 4: GCONV_IMPL_DW_LAUNCH(name, s2d); break;             \
        case GCONV_IMPL_DIRECT_DW3 * 16 + 5: GCONV_IMPL_DW_LAUNCH(name, s1b); break;             \
        case GCONV_IMPL_DIRECT_DW3 * 16 + 6: GCONV_IMPL_DW_LAUNCH(name, s2b); break;             \
        case GCONV_IMPL_DIRECT_DW3 * 16 + 7: GCONV_IMPL_DW_LAUNCH(name, s1n); break;             \
        case GCONV_IMPL_DIRECT_DW3 * 16 + 8: GCONV_IMPL_DW_LAUNCH(name, s1nd); break;            \
        case GCONV_IMPL_DIRECT_FEWC * 16 + 0: GCONV_IMPL_FC_LAUNCH(name, c1, plain); break;      \
        case GCONV_IMPL_DIRECT_FEWC * 16 + 1: GCONV_IMPL_FC_LAUNCH(name, c1, dten); break;       \
        case GCONV_IMPL_DIRECT_FEWC * 16 + 2: GCONV_IMPL_FC_LAUNCH(name, c1s, plain); break;     \
        case GCONV_IMPL_DIRECT_FEWC * 16 + 3: GCONV_IMPL_FC_LAUNCH(name, c1s, dten); break;      \
        case GCONV_IMPL_DIRECT_FEWC * 16 + 4: GCONV_IMPL_FC_LAUNCH(name, c4, plain); break;      \
        case GCONV_IMPL_DIRECT_FEWC * 16 + 5: GCONV_IMPL_FC_LAUNCH(name, c4, dten); break;       \
        default:                                                                                 \
            hipLaunchKernelGGL(name##_gen_kernel, dim3(pl.grid), dim3(pl.block), 0, s, pl.gen,   \
                               in, wei, out, *epi);                                              \
            break;                                                                               \
        }                                                                                        \
        return hipGetLastError() == hipSuccess ? GCONV_OK : GCONV_ERR_RUNTIME;                   \
    }                                                                                            \
    GCONV_IMPL_UNUSED static inline gconv_status name##_direct_launch(                           \
        const gconv_problem *p, const void *in, const void *wei, void *out,                     \
        const gconv_epilogue *epi, hipStream_t s)                                                \
    {                                                                                            \
        return name##_direct_launch_path(p, in, wei, out, epi, s, GCONV_IMPL_DIRECT_AUTO);       \
    }

/* GCONV_IMPL_IS_BUILTIN_EPI(f): 1 when the token f is gconv_impl_epilogue_apply, else 0 (the
 * probe macro turns that one name into "~, 1", shifting the 1 into second place). */
#define GCONV_IMPL_PROBE_gconv_impl_epilogue_apply ~, 1
#define GCONV_IMPL_SECOND2(a, b, ...) b
#define GCONV_IMPL_SECOND(...) GCONV_IMPL_SECOND2(__VA_ARGS__)
#define GCONV_IMPL_IS_BUILTIN_EPI(f) GCONV_IMPL_SECOND(GCONV_IMPL_CAT(GCONV_IMPL_PROBE_, f), 0, 0)

/* One DW3 kernel: 3x3, stride S (both axes), TW output columns per thread, rows copied PD
 * output rows ahead; PLAIN 1 for epilogues without D tensors, 0 for the others (which take
 * the vector D path when EPI_FN is the built-in epilogue). */
#define GCONV_IMPL_DW_KERNEL(name, T, EPI_FN, S, TW, PD, PLAIN, tag)                             \
    __global__ void __launch_bounds__(GCONV_IMPL_DW_BLOCK)                                       \
        name##_dw3##tag##_kernel(const gconv_impl_dw_params pp, const void *in, const void *wei, \
                                 void *out, const gconv_epilogue e)                              \
    {                                                                                            \
        gconv_impl_dw_body(&pp, (const char *)in, (const char *)wei, (char *)out, &e, EPI_FN, T, \
                           3, 3, S, S, TW, PD,                                                   \
                           (PLAIN) == 1 ? 1 : ((PLAIN) ? 4 : 2) * GCONV_IMPL_IS_BUILTIN_EPI(EPI_FN)); \
    }

/* A FEWC kernel pair: C, K per group, SCALAR 1 for one group per thread; _plain for epilogues
 * without D tensors, _dten for the others. */
#define GCONV_IMPL_FC_KERNEL(name, T, EPI_FN, C, K, SCALAR, tag)                                 \
    __global__ void __launch_bounds__(GCONV_IMPL_FC_BLOCK)                                       \
        name##_fc_##tag##_plain_kernel(const gconv_impl_fc_params pp, const void *in,            \
                                       const void *wei, void *out, const gconv_epilogue e)       \
    {                                                                                            \
        gconv_impl_fc_body(&pp, (const char *)in, (const char *)wei, (char *)out, &e, EPI_FN, T, \
                           C, K, SCALAR, 1);                                                     \
    }                                                                                            \
    __global__ void __launch_bounds__(GCONV_IMPL_FC_BLOCK)                                       \
        name##_fc_##tag##_dten_kernel(const gconv_impl_fc_params pp, const void *in,             \
                                      const void *wei, void *out, const gconv_epilogue e)        \
    {                                                                                            \
        gconv_impl_fc_body(&pp, (const char *)in, (const char *)wei, (char *)out, &e, EPI_FN, T, \
                           C, K, SCALAR, 0);                                                     \
    }

#define GCONV_IMPL_DW_LAUNCH(name, tag)                                                          \
    hipLaunchKernelGGL(name##_dw3##tag##_kernel, dim3(pl.grid), dim3(pl.block), pl.smem, s,      \
                       pl.dw, in, wei, out, *epi)

#define GCONV_IMPL_FC_LAUNCH(name, tag, kind)                                                    \
    hipLaunchKernelGGL(name##_fc_##tag##_##kind##_kernel, dim3(pl.grid), dim3(pl.block),         \
                       pl.smem, s, pl.fc, in, wei, out, *epi)

#endif /* GCONV_DIRECT_FWD_H */
