/* gconv/bwd_weight.h: the backward-weight grouped convolution,
 *     d_wei[g] = alpha * correlation(in[g], d_out[g]) + beta * d_wei_old[g]   for every group g.
 *
 * Usage:
 *     GCONV_BWD_WEIGHT(bww_f16, GCONV_F16, GCONV_NHWGC, GCONV_GKYXC)      at file scope, once
 *
 *     gconv_bwd_weight_args a;
 *     memset(&a, 0, sizeof a);
 *     a.in = x; a.d_out = dy; a.d_wei = dw;      device pointers, in the problem's layouts
 *     a.alpha = 1.0f; a.beta = 0.0f;             d_wei = alpha*acc + beta*d_wei (beta 0: d_wei
 *                                                is never read)
 *     a.split_k = 0;                             0: automatic; n: split N*output pixels n ways
 *     a.deterministic = 1;                       bit-identical results run to run
 *     a.algo = 0;                                0: automatic (GCONV_BWD_WEIGHT_ALGO_*)
 *     a.workspace_size = bww_f16_workspace_size(&p, &a);
 *     a.workspace = ws;                          device memory of at least that many bytes
 *     gconv_status s = bww_f16(&p, &a, stream);  asynchronous; never synchronises
 *
 * Instantiations (ACT_FAMILY one of GCONV_NHWGC / GCONV_GNHWC / GCONV_NGCHW for both the input
 * and the output gradient, WEI_FAMILY GCONV_GKYXC / GCONV_GKCYX for the weight gradient; one
 * instantiation serves 1D, 2D and 3D problems of those families):
 *   GCONV_BWD_WEIGHT(name, T, ACT_FAMILY, WEI_FAMILY)
 *       inputs and weight gradient of type T; algorithm picked by shape at run time (or
 *       forced with a->algo, GCONV_BWD_WEIGHT_ALGO_GEMM / _DIRECT):
 *       1. depthwise (C = K = 1), NHWGC, G a multiple of the 16-byte vector, 16-byte aligned
 *          in / d_out: the direct kernels (DWR below for 3x3 stride 1 / 2, else DW);
 *       2. CUDA, fp16 / bf16, NHWGC or GNHWC, C and K multiples of 8 and at least 64, 16-byte
 *          aligned in / d_out, in an sm_90a build on Hopper: the warp-specialised TMA / wgmma
 *          GEMM (BWS below; where its copies cannot describe the problem, TC);
 *       3. CUDA, fp16 / bf16, NHWGC or GNHWC, C a multiple of 64, 16 < K <= 40 (K a multiple
 *          of 4), stride 1, 1D / 2D, 4 to 9 taps, automatic algorithm and split: the narrow-K
 *          halo kernel (BWN below);
 *       4. CUDA, fp16 / bf16, NHWGC or GNHWC, C a multiple of 8 and K of 4, 16-byte aligned
 *          in / d_out: the tensor-core GEMM on pixel-major tiles (TC below);
 *       5. C, K <= 8 per group, NHWGC: the few-channel direct kernels (FEWC / FEWC4T below;
 *          C = K = 4 with G even takes BWH's pair mode where it can);
 *       6. otherwise the implicit GEMM (GEMM below), tile 128x128x32 (K and C*taps >= 96) or
 *          64x64x32, with vector gathers where the channels allow them.
 *   GCONV_BWD_WEIGHT_OUT(name, T, TOUT, ACT_FAMILY, WEI_FAMILY)
 *       as above with a weight gradient of type TOUT (e.g. GCONV_BF16 inputs, GCONV_F32
 *       gradient: the fp32 master-weight case of mixed-precision training).
 *   GCONV_BWD_WEIGHT_TILED(name, T, ACT_FAMILY, WEI_FAMILY, TILE)
 *       implicit GEMM only, with the pinned tile TILE (a GCONV_TILE_* macro of gconv/igemm.h);
 *       a->algo is ignored.
 * Each defines
 *   int    name_supports(const gconv_problem *p, char *why, size_t len);   1, or 0 + reason
 *   size_t name_workspace_size(const gconv_problem *p, const gconv_bwd_weight_args *a);
 *          bytes of workspace a launch with a's split_k and deterministic fields needs (0: none;
 *          pointers in a are not looked at). a == NULL: enough for any split_k = 0 launch in
 *          either reduction mode.
 *   gconv_status name(const gconv_problem *p, const gconv_bwd_weight_args *a, hipStream_t s);
 *
 * The computation, per group g, as a GEMM: rows m = k (K of them), columns j = tap*C + c
 * (C * filter taps, the flat GKYXC order inside one (g, k)), reduction over
 * r = ((n*OD + od)*OH + oh)*OW + ow (N * output pixels):
 *     d_wei[g][k][j] = sum_r d_out[g][r][k] * in[g][n(r)][c(j)][o(r)*stride + tap(j)*dil - pad].
 *
 * Split-K. The reduction is cut into S contiguous ranges ("splits"), each summed by its own
 * blocks in fp32. S = 1: blocks apply the epilogue and store d_wei directly (no workspace).
 * S > 1: fast mode (deterministic = 0) adds each block's fp32 partial with atomics into an fp32
 * workspace of G*K*C*taps floats (zeroed first by the launcher with hipMemsetAsync), then a
 * finalize kernel applies alpha / beta and converts to TOUT (the depthwise DW kernel and the
 * warp-specialised BWS kernel use the slabs below in fast mode too: measured as fast or faster;
 * BWS also has a split-tail form, where only the tiles of the last round are split: see
 * gconv/bwd_weight_ws.h). Deterministic mode stores each
 * split's partial in a slab of its own (S slabs of G*K*C*taps floats) and the finalize kernel
 * sums the slabs in split order: no atomics, bit-identical results run to run. Partials are
 * always fp32, whatever T. split_k = 0 picks S from the work per split and the device's
 * compute-unit count (gconv_device_sm_count); split_k = n > 0 asks for n splits (it is lowered
 * to the number of reduction tiles when it exceeds it). split_k < 0 or > GCONV_BWD_WEIGHT_MAX_SPLIT:
 * GCONV_ERR_ARGUMENT.
 *
 * Kernels:
 *   GEMM  implicit GEMM on the engine of gconv/igemm.h (mma.sync for fp16 / bf16 on NVIDIA
 *         sm_80+, MFMA on gfx908 / 90a / 940, FMA for fp32 and gfx1030). Both operands are
 *         transposing gathers (the reduction runs over pixels, which no layout keeps
 *         contiguous next to the GEMM's M / N index), register-staged. Element-wise form (any
 *         layout): a thread loads E consecutive pixels of one row (one k of d_out or one
 *         (c, tap) of in) per stage. Vector form (NHWGC / GNHWC, C and / or K a multiple of the
 *         16-byte vector, 16-byte aligned pointers): a thread loads 16-byte channel vectors at
 *         one pixel and scatters their elements down a column of the shared-memory tile.
 *         Any stride, dilation, asymmetric pads.
 *   TC    implicit GEMM whose stages hold 32 pixels x the tile's channels, pixel-major, copied
 *         by cp.async in 16-byte channel chunks and read with ldmatrix.trans into mma.sync
 *         (gconv_impl_igemm_math_mma_t): no gather through registers. Tiles 128x128 (M = K)
 *         or, for K <= 64, 128 x 64 / 32 / 16 with M = C * taps and N = K. Any stride,
 *         dilation, asymmetric pads, 1D / 2D / 3D.
 *   BWS   (gconv/bwd_weight_ws.h; sm_90a device code, CUDA 12.5+ runtime) warp-specialised
 *         GEMM: one producer thread copies 96-pixel stages of d_out (tiled copies) and of the
 *         input at one tap (the copy engine's im2col mode) into a shared-memory ring, two
 *         consumer warpgroups run wgmma on them as MN-major operands; tiles of 128 k x 64, 128
 *         or 256 channels of one tap; splits from a cost model of rounds, stages and reduction
 *         traffic. Strides up to 8, dilation, asymmetric pads, 1D / 2D / 3D.
 *   BWN   (gconv/bwd_weight_nk.h; scope in 3. above) halo tiles for few output channels: a
 *         persistent block walks units of 64 input channels x a few output rows, input pixels
 *         with their halo and all K channels of d_out in shared memory (a ring of cp.async
 *         buffers), warps running ldmatrix.trans at their m-tiles' tap shifts into mma.sync on
 *         16 channels x 40 columns a tile; sums carried across a chunk's units, handed over as
 *         one slab per block (both modes). RetinaNet's K = 36 heads.
 *   BWH   (CUDA, fp16 / bf16, NHWGC, C = K in {8, 16, 32}, or C = K = 4 with G even, stride 1,
 *         1D / 2D, at most 10 taps, 16-byte aligned, automatic algorithm and split_k 0; taken
 *         ahead of TC, and for C = K = 4 ahead of FEWC) halo tiles on tensor cores: a
 *         persistent block walks units of R output rows x 64 channels, input rows with their
 *         halo and d_out rows in shared memory (a ring of buffers filled by the copy engine on
 *         sm_90a, else by cp.async), ldmatrix.trans at each lane's tap into mma.sync (C = 32:
 *         each warp 3 m-tiles x all 4 n-tiles); its sums stay in registers across the units of a
 *         group chunk and are handed over as one slab per block (both modes; at C = 32 on
 *         sm_90a a chunk's blocks as one thread-block cluster writing final values, or pairs
 *         writing a slab a pair: gconv_impl_bwh_cl_plan). C = K = 4 runs in
 *         pair mode: two adjacent groups are one group of 8 channels (the same bytes in NHWGC),
 *         and only the diagonal 4 x 4 blocks of its 8 x 8 sums are kept.
 *   DW    depthwise direct kernel: a thread owns 16 bytes of channels (8 fp16 / bf16, 4 fp32)
 *         and up to 9 taps of them in fp32 registers; each thread walks a contiguous run of
 *         its split's N*output pixels reading each d_out vector once and the taps' input
 *         vectors (L1 hits for neighbouring taps); the block reduces its threads in shared
 *         memory and emits one partial per split. Filters over 9 taps take several blocks along a tap-chunk axis.
 *         The fallback for depthwise problems that DWR does not take.
 *   DWR   depthwise 3x3, stride 1 or 2 (both axes), no dilation, 2D (or 3D with a trivial depth
 *         axis), any pads: a thread owns 4 channels (8 bytes; 16 for fp32: the 16-bit
 *         types then fit 3 blocks per SM) and TW adjacent output columns
 *         of a run of output rows; input and d_out rows stream through a per-thread
 *         shared-memory ring (cp.async on sm_80+), each element read from global memory once
 *         and converted to fp32 once, the 9 taps accumulated in fp32 registers; blocks cover
 *         (channel block, split), one partial per split (slabs), block sums in fixed order.
 *   FEWC  few-channel direct kernel (C, K <= 8 per group by default, any with ALGO_DIRECT;
 *         NHWGC, any filter / stride / dilation): a thread owns one group, one tap and a chunk
 *         of 4x4 or 8x8 (k, c) outputs; per pixel it reads the chunk's d_out values and input
 *         values (vector loads when C, K allow) and adds their outer product into fp32
 *         registers. FEWC4T: C, K <= 4 and at most 9 taps: a thread owns all taps of its group
 *         (144 accumulators), so the pixel walk and d_out load are shared by the taps.
 *   Block reductions (DW, FEWC) sum the threads' partials in shared memory in a fixed order,
 *   so a split's partial is the same bits on every run.
 *
 * Layouts: the problem's input and output layouts must both be members of ACT_FAMILY and its
 * weight layout a member of WEI_FAMILY (DEFAULT counts as NHWGC / GKYXC): else GCONV_ERR_LAYOUT.
 * Alignment: in and d_out aligned to their T elements, d_wei to its TOUT elements, workspace to
 * 4 bytes (GCONV_ERR_ALIGNMENT); the vector kernels are used only where 16-byte alignment
 * holds. Index width: offsets are 64-bit in every kernel, so tensors over 2 GB work.
 *
 * Precision: fp32 accumulation everywhere; fp32 inputs use FMA (no tf32).
 */
#ifndef GCONV_BWD_WEIGHT_H
#define GCONV_BWD_WEIGHT_H

#include "device.h"
#include "epilogue.h"
#include "fwd.h" /* gconv_impl_fwd_smem_attr */
#include "igemm.h"
#include "layout.h"
#include "problem.h"

#define GCONV_BWD_WEIGHT_MAX_SPLIT 4096

/* gconv_bwd_weight_args.algo: which kernel family runs (default instantiations). */
#define GCONV_BWD_WEIGHT_ALGO_AUTO 0   /* by shape (see the header comment) */
#define GCONV_BWD_WEIGHT_ALGO_GEMM 1   /* the implicit GEMM */
#define GCONV_BWD_WEIGHT_ALGO_DIRECT 2 /* DW or FEWC (NHWGC only, else GCONV_ERR_UNSUPPORTED) */

typedef struct gconv_bwd_weight_args {
    const void *in;      /* device pointers, in the problem's layouts */
    const void *d_out;
    void *d_wei;
    float alpha, beta;   /* d_wei = alpha * acc + beta * d_wei_old; beta 0: d_wei is not read */
    int split_k;         /* 0: automatic; n > 0: n splits of N * output pixels */
    int deterministic;   /* 1: two-stage reduction, bit-identical run to run */
    int algo;            /* GCONV_BWD_WEIGHT_ALGO_*; 0 = automatic */
    void *workspace;     /* if name_workspace_size > 0 */
    size_t workspace_size;
    char *why;           /* optional: reason of a refusal */
    size_t why_len;
} gconv_bwd_weight_args;

/* ---- kernel parameters ----------------------------------------------------------------------- */

#define GCONV_IMPL_BWW_DIRECT 0 /* mode: S = 1, blocks store d_wei with the epilogue */
#define GCONV_IMPL_BWW_ATOMIC 1 /* fp32 atomics into ws, then finalize */
#define GCONV_IMPL_BWW_SLABS 2  /* one ws slab per split, then finalize sums them in order */
/* BWS only: tiles 0 .. tail0 - 1 run whole (one block each, final values), the last ones in
 * `splits` parts each, whose partial tiles go to ws as [tail tile][split][BM x tbn] and a
 * finalize over those tiles sums them in split order (deterministic; gconv/bwd_weight_ws.h) */
#define GCONV_IMPL_BWW_TAIL 3
#define GCONV_IMPL_BWS_BM 128 /* BWS: k rows per tile, one m64 block per consumer warpgroup */

#define GCONV_IMPL_BWW_PATH_GEMM 0
#define GCONV_IMPL_BWW_PATH_DW 1
#define GCONV_IMPL_BWW_PATH_FEWC 2

#define GCONV_IMPL_BWW_DW_TAPS 9   /* taps per DW block */

typedef struct gconv_impl_bww_params {
    const void *in;
    const void *dout;
    void *dwei;
    float *ws;
    float alpha, beta;
    gconv_dtype tin, tout;
    int G, C, K, Ncol, taps; /* Ncol = C * taps */
    int in_sp[3], out_sp[3], flt[3], str[3], dil[3], pad[3];
    int64_t R;     /* reduction length N * output pixels */
    int64_t chunk; /* reduction elements per split */
    int64_t total; /* G * K * Ncol: elements of d_wei */
    int splits, mode;
    int fl;          /* finalize: lanes per element (1 or 32), or 8 (the vector forms,
                        gconv_impl_bww_finalize8_body / _finalize128_body by fvl) */
    int fvl;         /* the vector form's lanes per quad: 8, 32 over 32 slabs, 128 over
                        GCONV_IMPL_BWW_FIN128_FROM */
    int mt, nt, ktc; /* GEMM: tiles along K and Ncol, k-tiles per split */
    int tail0, tbn;  /* TAIL mode: the first split tile, columns of a tile */
    int cl, cb, tchunks; /* DW: channel lanes per block, channel blocks, tap chunks */
    int dwr;             /* DWR kernel: its stride (1 or 2), 0 = the DW kernel */
    int dwpl, wts, rh, hchunks; /* DWR: pixel lanes per block, column tiles, rows per item,
                                 * row chunks per plane */
    int64_t witems;      /* DWR: work items per channel vector, planes * hchunks * wts */
    int fk, fc, fchunks;  /* FEWC: k and c per thread chunk, chunks per group */
    int fvec;             /* FEWC: vector loads (C % fc == K % fk == 0, aligned pointers) */
    int fall;             /* FEWC: the all-taps kernel (FEWC4T) */
    int wflat;            /* d_wei packed as [g][k][tap][c] (GKYXC): flat index = offset */
    gconv_act_strides si, so;
    gconv_wei_strides sw;
} gconv_impl_bww_params;

/* ---- shared device pieces -------------------------------------------------------------------- */

/* r -> (n, od, oh, ow). */
static __device__ __forceinline__ void gconv_impl_bww_pix(const gconv_impl_bww_params *P,
                                                          int64_t r, int *n, int *d, int *h,
                                                          int *w)
{
    int64_t q;
    if (P->R <= 0x7fffffffLL) { /* 32-bit division: several times cheaper than 64-bit */
        unsigned u = (unsigned)r, v = u / (unsigned)P->out_sp[2];
        *w = (int)(u - v * (unsigned)P->out_sp[2]);
        u = v, v = u / (unsigned)P->out_sp[1];
        *h = (int)(u - v * (unsigned)P->out_sp[1]);
        u = v, v = u / (unsigned)P->out_sp[0];
        *d = (int)(u - v * (unsigned)P->out_sp[0]);
        *n = (int)v;
        return;
    }
    q = r / P->out_sp[2];
    *w = (int)(r - q * P->out_sp[2]);
    r = q, q = r / P->out_sp[1];
    *h = (int)(r - q * P->out_sp[1]);
    r = q, q = r / P->out_sp[0];
    *d = (int)(r - q * P->out_sp[0]);
    *n = (int)q;
}

/* Advance (n, d, h, w) by one output pixel. */
static __device__ __forceinline__ void gconv_impl_bww_pix_next(const gconv_impl_bww_params *P,
                                                               int *n, int *d, int *h, int *w)
{
    if (++*w == P->out_sp[2]) {
        *w = 0;
        if (++*h == P->out_sp[1]) {
            *h = 0;
            if (++*d == P->out_sp[0]) {
                *d = 0;
                ++*n;
            }
        }
    }
}

/* Store the final value of d_wei element (gk = g*K + k, j = tap*C + c), flat index
 * i = gk * Ncol + j: alpha*v + beta*old. In the GKYXC family the weight gradient is packed in
 * exactly that order (P->wflat), so i is the offset and nothing is divided. */
static __device__ __forceinline__ void gconv_impl_bww_final(const gconv_impl_bww_params *P,
                                                            int64_t i, float v)
{
    int64_t off = i;
    float out = P->alpha * v;
    if (!P->wflat) {
        const int64_t gk = i / P->Ncol;
        const int j = (int)(i - gk * P->Ncol);
        const int g = (int)(gk / P->K), k = (int)(gk - (int64_t)g * P->K);
        const int tap = j / P->C, c = j - tap * P->C;
        const int x = tap % P->flt[2], y = (tap / P->flt[2]) % P->flt[1];
        const int z = tap / (P->flt[2] * P->flt[1]);
        off = (int64_t)g * P->sw.g + (int64_t)k * P->sw.k + (int64_t)c * P->sw.c +
              (int64_t)z * P->sw.s[0] + (int64_t)y * P->sw.s[1] + (int64_t)x * P->sw.s[2];
    }
    if (P->beta != 0.0f)
        out += P->beta * gconv_impl_dev_load(P->tout, P->dwei, off);
    gconv_impl_igemm_st_elem(P->dwei, off, out, P->tout);
}

/* Hand over the sum v of split `split` for element (gk, j) as the plan's mode says. */
static __device__ __forceinline__ void gconv_impl_bww_emit(const gconv_impl_bww_params *P,
                                                           int split, int64_t gk, int j, float v)
{
    const int64_t i = gk * P->Ncol + j;
    if (P->mode == GCONV_IMPL_BWW_DIRECT)
        gconv_impl_bww_final(P, i, v);
    else if (P->mode == GCONV_IMPL_BWW_ATOMIC)
        atomicAdd(P->ws + i, v);
    else
        P->ws[(int64_t)split * P->total + i] = v;
}

/* Whether partials may go four at a time (gconv_impl_bww_emit4): a reduction mode with a
 * workspace (atomics or slabs), 16-byte aligned (the API asks only for 4), and rows of d_wei
 * (Ncol values) that keep 4-aligned runs 4-aligned. */
static __device__ __forceinline__ int gconv_impl_bww_vec4_ok(const gconv_impl_bww_params *P)
{
    return P->mode != GCONV_IMPL_BWW_DIRECT && ((uintptr_t)P->ws & 15u) == 0 && P->Ncol % 4 == 0;
}

/* Hand over the partial sums v of split `split` for flat d_wei elements i .. i + 3 (i a
 * multiple of 4; gconv_impl_bww_vec4_ok): one 16-byte fp32 reduction (sm_90: red.v4.f32;
 * four atomics elsewhere) or one 16-byte slab store. */
static __device__ __forceinline__ void gconv_impl_bww_emit4(const gconv_impl_bww_params *P,
                                                            int split, int64_t i, float4 v)
{
    float *w = P->ws + i;
    if (P->mode == GCONV_IMPL_BWW_SLABS) {
        *(float4 *)(w + (int64_t)split * P->total) = v;
        return;
    }
#if defined(GCONV_PLATFORM_CUDA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("red.global.add.v4.f32 [%0], {%1, %2, %3, %4};\n" ::"l"(w), "f"(v.x), "f"(v.y),
                 "f"(v.z), "f"(v.w)
                 : "memory");
#else
    atomicAdd(w, v.x);
    atomicAdd(w + 1, v.y);
    atomicAdd(w + 2, v.z);
    atomicAdd(w + 3, v.w);
#endif
}

/* Final values of the four flat d_wei elements i .. i + 3 (i a multiple of 4): one 8- or
 * 16-byte store where d_wei is packed (GKYXC) and aligned for it, else element by element. */
static __device__ __forceinline__ void gconv_impl_bww_final4(const gconv_impl_bww_params *P,
                                                             int64_t i, float4 v)
{
    const int esz = P->tout == GCONV_F32 ? 4 : 2;
    if (P->wflat && (uintptr_t)P->dwei % (4u * (unsigned)esz) == 0) {
        /* the old values as the first 4 or 8 bytes of a 16-byte chunk (elements 0..3) */
        gconv_impl_igemm_u4 old;
        float o[4];
        int e;
        o[0] = P->alpha * v.x, o[1] = P->alpha * v.y, o[2] = P->alpha * v.z, o[3] = P->alpha * v.w;
        if (P->beta != 0.0f) {
            if (esz == 4) {
                old = gconv_impl_igemm_ld_global16((const float *)P->dwei + i);
            } else {
                const uint2 h = *((const uint2 *)P->dwei + i / 4);
                old.x = h.x, old.y = h.y, old.z = old.w = 0u;
            }
#pragma unroll
            for (e = 0; e < 4; e++)
                o[e] += P->beta * gconv_impl_igemm_u4_elem(old, e, P->tout);
        }
        if (esz == 4) {
            *((float4 *)P->dwei + i / 4) = make_float4(o[0], o[1], o[2], o[3]);
        } else {
            unsigned b[4];
#pragma unroll
            for (e = 0; e < 4; e++)
                b[e] = gconv_impl_igemm_to_bits(o[e], P->tout);
            *((uint2 *)P->dwei + i / 4) = make_uint2(b[0] | (b[1] << 16), b[2] | (b[3] << 16));
        }
        return;
    }
    gconv_impl_bww_final(P, i, v.x);
    gconv_impl_bww_final(P, i + 1, v.y);
    gconv_impl_bww_final(P, i + 2, v.z);
    gconv_impl_bww_final(P, i + 3, v.w);
}

/* Finalize: the sum over splits (atomics: already summed; slabs: in split order), epilogue,
 * conversion. Thread tid = e * L + l (L = P->fl lanes per element, 1 or 32) sums slabs
 * l, l + L, ... of element base + e in order; lane 0 then adds the L lane sums in lane order.
 * Every step has a fixed order, so the result does not depend on scheduling. */
static __device__ __forceinline__ void gconv_impl_bww_finalize_body(const gconv_impl_bww_params *P)
{
    __shared__ float part[256];
    const int L = P->fl, tid = (int)threadIdx.x, e = tid / L, l = tid % L;
    const int epb = (int)blockDim.x / L;
    int64_t base;
    for (base = (int64_t)blockIdx.x * epb; base < P->total; base += (int64_t)gridDim.x * epb) {
        const int64_t i = base + e;
        float v = 0.0f;
        if (i < P->total) {
            if (P->mode == GCONV_IMPL_BWW_ATOMIC) {
                v = l == 0 ? P->ws[i] : 0.0f;
            } else {
                int s;
                for (s = l; s < P->splits; s += L)
                    v += P->ws[(int64_t)s * P->total + i];
            }
        }
        if (L > 1) {
            __syncthreads(); /* part[] of the previous round has been read */
            part[tid] = v;
            __syncthreads();
            if (l == 0) {
                int j;
                v = part[tid];
                for (j = 1; j < L; j++)
                    v += part[tid + j];
            }
        }
        if (l == 0 && i < P->total)
            gconv_impl_bww_final(P, i, v);
    }
}

/* The finalize kernel's vector form (where gconv_impl_bww_fin4): four consecutive elements a
 * thread, 16-byte loads, the slabs summed in split order as above (the one-element form keeps one 4-byte load
 * per slab in flight a thread and was latency-bound on the dense layers' millions of
 * elements). A kernel of its own: in the same kernel as the scalar form it raised that
 * form's registers, and the many-slab BWH reductions ran 11-17 % slower. */
static __device__ __forceinline__ void
gconv_impl_bww_finalize4_body(const gconv_impl_bww_params *P)
{
    const float4 *w = (const float4 *)P->ws;
    const int64_t nq = P->total / 4;
    const int S = P->mode == GCONV_IMPL_BWW_ATOMIC ? 1 : P->splits;
    int64_t q;
    for (q = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; q < nq;
         q += (int64_t)gridDim.x * blockDim.x) {
        float4 v = w[q];
        int s;
#pragma unroll 4
        for (s = 1; s < S; s++) {
            const float4 x = w[(int64_t)s * nq + q];
            v.x += x.x, v.y += x.y, v.z += x.z, v.w += x.w;
        }
        gconv_impl_bww_final4(P, q * 4, v);
    }
}

static __device__ __forceinline__ float gconv_impl_bww_shfl_down(float v, int d, int w)
{
#if defined(GCONV_PLATFORM_CUDA)
    return __shfl_down_sync(0xffffffffu, v, d, w);
#else
    return __shfl_down(v, d, w);
#endif
}

/* One lane's share of the vector forms: the sum of quad q (< nq, else none) over slabs l,
 * l + L, ... in order, by 16-byte loads (VEC) or 4-byte ones. */
static __device__ __forceinline__ float4 gconv_impl_bww_lane_sum(const gconv_impl_bww_params *P,
                                                                 int64_t nq, int64_t q, int l,
                                                                 const int L, const int VEC)
{
    const float4 *w = (const float4 *)P->ws;
    float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    int s;
#pragma unroll 4
    for (s = q < nq ? l : P->splits; s < P->splits; s += L) {
        float4 x;
        if (VEC) {
            x = w[(int64_t)s * nq + q];
        } else {
            const float *f = P->ws + ((int64_t)s * nq + q) * 4;
            x = make_float4(f[0], f[1], f[2], f[3]);
        }
        v.x += x.x, v.y += x.y, v.z += x.z, v.w += x.w;
    }
    return v;
}

/* Lanes l and l + d (d = L / 2, ..., 1) of each group of L lanes added: lane 0 of the group
 * ends with the group's sum (a fixed tree). */
static __device__ __forceinline__ float4 gconv_impl_bww_shfl_tree(float4 v, const int L)
{
    int d;
#pragma unroll
    for (d = L >> 1; d >= 1; d >>= 1) {
        v.x += gconv_impl_bww_shfl_down(v.x, d, L);
        v.y += gconv_impl_bww_shfl_down(v.y, d, L);
        v.z += gconv_impl_bww_shfl_down(v.z, d, L);
        v.w += gconv_impl_bww_shfl_down(v.w, d, L);
    }
    return v;
}

/* The finalize kernel's many-slab vector form (fl = 8, chosen by plans with many slabs over few
 * elements: BWN's, BWH's, DWR's): L = P->fvl lanes (8, or 32 from 32 slabs; 128: below) per four
 * consecutive elements, lane l summing slabs l, l + L, ... in order with 16-byte loads, then
 * the L lane sums added by a fixed shuffle tree, so the result is the same bits on every run.
 * 32 lanes keep a lane's loads to one round of the unrolled loop where 8 needed three (66
 * slabs: ResNeXt 128@56's; bench/NOTES.md, session 32). (The one-element form walks the slabs
 * one dependent load at a time, and its 32-lane form sums the lanes serially: 7.7 and 38 us for
 * 26 slabs of 83 K elements on an H100 under ncu.) Needs whole quads. VEC and L are literals
 * (a kernel each: L from P->fvl at run time cost the 8-lane plans 0.3 us). VEC 1: 16-byte
 * loads; 0 (a workspace that is not 16-byte aligned): the same sums in the same order from
 * 4-byte loads (a run-time test in the loop cost the aligned form 2-4 % on the K = 36 heads). */
static __device__ __forceinline__ void
gconv_impl_bww_finalize8_body(const gconv_impl_bww_params *P, const int VEC, const int L)
{
    const int ls = L == 32 ? 5 : 3;
    const int64_t nq = P->total / 4, step = ((int64_t)gridDim.x * blockDim.x) >> ls;
    const int l = (int)threadIdx.x & (L - 1);
    int64_t q = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> ls;
    /* qw: the wavefront's first quad, so that its lanes run the same rounds (CUDA's shuffle
     * names all 32) */
    int64_t qw = q - (((int)threadIdx.x & (GCONV_WAVE_SIZE - 1)) >> ls);
    for (; qw < nq; q += step, qw += step) {
        const float4 v = gconv_impl_bww_shfl_tree(gconv_impl_bww_lane_sum(P, nq, q, l, L, VEC), L);
        if (l == 0 && q < nq)
            gconv_impl_bww_final4(P, q * 4, v);
    }
}

/* slabs from which the finalize's vector form takes 128 lanes a quad */
#ifndef GCONV_IMPL_BWW_FIN128_FROM
#define GCONV_IMPL_BWW_FIN128_FROM 96
#endif
/* The same over 128 lanes a quad (P->fvl 128, from GCONV_IMPL_BWW_FIN128_FROM slabs): four
 * warps a quad, two quads a 256-thread block, lane l summing slabs l, l + 128, ...
 * in order, each warp's lanes added by the shuffle tree, then the four warp sums in warp order
 * through shared memory (the same bits on every run). A lane has one or two loads where the
 * 32-lane form's had four or more. H200 (bench/NOTES.md session 36): DWR's many-slab plans
 * gained (MobileNetV2 96@112 s2 57.5 -> 55.4 us); ResNeXt 128@56's finalize (132 slabs,
 * 4.9 MB) only went 5.0 -> 4.7 us, so it is not bound by a lane's loads; from 48 slabs 256@28
 * lost 1.7 us. Every thread of the block runs the same rounds (the barriers). */
static __device__ __forceinline__ void
gconv_impl_bww_finalize128_body(const gconv_impl_bww_params *P, const int VEC)
{
    /* blocks of 256 threads (GCONV_IMPL_BWW_FINISH): two quads of four 32-lane warps */
    __shared__ float4 part[8];
    const int64_t nq = P->total / 4;
    const int tid = (int)threadIdx.x, l = tid & 127, qi = tid >> 7, warp = tid >> 5;
    int64_t qb;
    for (qb = (int64_t)blockIdx.x * 2; qb < nq; qb += (int64_t)gridDim.x * 2) {
        const int64_t q = qb + qi;
        float4 v = gconv_impl_bww_shfl_tree(gconv_impl_bww_lane_sum(P, nq, q, l, 128, VEC), 32);
        if ((tid & 31) == 0)
            part[warp] = v;
        __syncthreads(); /* the four warp sums of each quad */
        if (l == 0 && q < nq) {
            const float4 a = part[4 * qi], b = part[4 * qi + 1], c = part[4 * qi + 2],
                         e = part[4 * qi + 3];
            v = make_float4(((a.x + b.x) + c.x) + e.x, ((a.y + b.y) + c.y) + e.y,
                            ((a.z + b.z) + c.z) + e.z, ((a.w + b.w) + c.w) + e.w);
            gconv_impl_bww_final4(P, q * 4, v);
        }
        __syncthreads(); /* part[] read before the next round writes it */
    }
}

/* TAIL mode's split tiles (the BWS plan's tiles tail0 .. G * mt * nt - 1). */
static inline GCONV_HD int64_t gconv_impl_bww_tail_tiles(const gconv_impl_bww_params *P)
{
    return (int64_t)P->G * P->mt * P->nt - P->tail0;
}

/* BWS tile L of a plan with tiles of BM x tbn: group g, first k m0, tap, first channel c0
 * (order: group, k tile, then tap, then channel tile, fastest last; nt = taps x channel
 * tiles). Shared by the BWS kernel and TAIL mode's finalize. */
static __device__ __forceinline__ void gconv_impl_bws_tile(const gconv_impl_bww_params *P, int L,
                                                           int *g, int *m0, int *tap, int *c0)
{
    const int tpg = P->mt * P->nt, ct = P->nt / P->taps;
    int mi, tn;
    *g = L / tpg;
    mi = (L - *g * tpg) / P->nt;
    tn = L - *g * tpg - mi * P->nt;
    *m0 = mi * GCONV_IMPL_BWS_BM;
    *tap = tn / ct;
    *c0 = (tn - *tap * ct) * P->tbn;
}

/* The finalize of TAIL mode (gconv/bwd_weight_ws.h): four consecutive elements of one split
 * tile a thread, the tile's split parts summed in split order (deterministic), then the final
 * values of those of them inside d_wei. Quad q is elements 4 (q % (BM tbn / 4)) .. + 3 (row
 * rr, columns cc .. cc + 3 of the tile: tbn is a multiple of 4) of split tile q / (BM tbn / 4),
 * i.e. tile tail0 + that (gconv_impl_bws_tile). */
static __device__ __forceinline__ void
gconv_impl_bww_finalize_tail_body(const gconv_impl_bww_params *P)
{
    const int tq = GCONV_IMPL_BWS_BM * P->tbn / 4; /* quads of a tile */
    const int64_t nq = gconv_impl_bww_tail_tiles(P) * tq;
    const int vec = ((uintptr_t)P->ws & 15u) == 0;
    int64_t q;
    for (q = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; q < nq;
         q += (int64_t)gridDim.x * blockDim.x) {
        const int tt = (int)(q / tq), e = (int)(q - (int64_t)tt * tq) * 4;
        int g, m0, tap, c0;
        gconv_impl_bws_tile(P, P->tail0 + tt, &g, &m0, &tap, &c0);
        const int k = m0 + e / P->tbn, c = c0 + e % P->tbn;
        const float *w = P->ws + (int64_t)tt * P->splits * (tq * 4) + e;
        float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        int s;
        if (k >= P->K || c >= P->C)
            continue;
        /* the parts' loads unrolled apart from the adds (in split order) */
        if (vec) {
#pragma unroll 4
            for (s = 0; s < P->splits; s++) {
                const float4 u = *(const float4 *)(w + (int64_t)s * (tq * 4));
                v.x += u.x, v.y += u.y, v.z += u.z, v.w += u.w;
            }
        } else {
#pragma unroll 4
            for (s = 0; s < P->splits; s++) {
                const float *u = w + (int64_t)s * (tq * 4);
                v.x += u[0], v.y += u[1], v.z += u[2], v.w += u[3];
            }
        }
        /* C is a multiple of 8 (gconv_impl_bws_fits), so c + 3 < C too and the flat index
         * (a multiple of 4) starts a quad: one 8- or 16-byte store where d_wei allows */
        gconv_impl_bww_final4(P, ((int64_t)g * P->K + k) * P->Ncol + tap * P->C + c, v);
    }
}

/* Hand a GEMM block's accumulators to gconv_impl_bww_emit: staged through shared memory (the
 * pipeline's, free by now: callers wait for their copies and barrier first) in bands of rows.
 * Tile rows are k = x0 + row and columns j = y0 + column (sw = 0), or rows j = y0 + row and
 * columns k = x0 + column (sw = 1, the TC kernel's narrow-K tiles). Consecutive threads take
 * consecutive j, d_wei's inner index in GKYXC. */
static __device__ __forceinline__ void gconv_impl_bww_tile_out(const gconv_impl_bww_params *P,
                                                               const float *acc,
                                                               unsigned char *smem,
                                                               const gconv_impl_tile t,
                                                               const int math, const int esize,
                                                               int split, int g, int x0, int y0,
                                                               const int sw)
{
    const int band = gconv_impl_tile_band_rows(t, esize);
    const int ld = t.bn + GCONV_IMPL_CPAD, nth = gconv_impl_tile_threads(t);
    /* four consecutive j a thread where they are four consecutive floats of a staged row
     * (sw = 0; in the sw = 1 tiles they lie down a column: four loads 4 rows apart meet in one
     * bank, measured 6 % slower on ResNeXt 1024@7) */
    const int v4 = gconv_impl_bww_vec4_ok(P) && !sw && t.bn % 4 == 0;
    float *cs = (float *)smem;
    int b0, e;
    for (b0 = 0; b0 < t.bm; b0 += band) {
        if (b0 > 0)
            __syncthreads(); /* the previous band has been read */
        gconv_impl_igemm_acc_to_smem(acc, cs, t, math, b0, band);
        __syncthreads();
        if (v4) {
            for (e = (int)threadIdx.x; e < band * t.bn / 4; e += nth) {
                const int rr = e / (t.bn / 4), cc = e % (t.bn / 4) * 4;
                const int k = x0 + b0 + rr, j = y0 + cc;
                /* j % 4 == 0 and Ncol % 4 == 0: j < Ncol covers j + 3 */
                if (k < P->K && j < P->Ncol)
                    gconv_impl_bww_emit4(P, split, ((int64_t)g * P->K + k) * P->Ncol + j,
                                         *(const float4 *)(cs + rr * ld + cc));
            }
            continue;
        }
        for (e = (int)threadIdx.x; e < band * t.bn; e += nth) {
            const int rr = sw ? e % band : e / t.bn, cc = sw ? e / band : e % t.bn;
            const int k = sw ? x0 + cc : x0 + b0 + rr;
            const int j = sw ? y0 + b0 + rr : y0 + cc;
            if (k < P->K && j < P->Ncol)
                gconv_impl_bww_emit(P, split, (int64_t)g * P->K + k, j, cs[rr * ld + cc]);
        }
    }
}

/* ---- GEMM kernel -----------------------------------------------------------------------------
 * One block computes a BM x BN tile (k rows m0.., columns j n0..) of one group over the
 * reduction range of its split (blockIdx.y). A thread gathers, per stage, E consecutive
 * reduction elements of one row of A (d_out, channel k = m0 + tid % BM) and of B (input,
 * column j = n0 + tid % BN, whose c and tap are fixed for the whole kernel). */

typedef struct gconv_impl_bww_gather {
    int row, q, ok;
    int64_t base;
    int oz, oy, ox; /* B: tap offset minus pad per axis */
    unsigned sv[64];
} gconv_impl_bww_gather;

/* Load the E elements of A for reduction range starting at r (A: a = 1, B: a = 0). */
static __device__ __forceinline__ void gconv_impl_bww_load(const gconv_impl_bww_params *P,
                                                           gconv_impl_bww_gather *s, int E,
                                                           int64_t r, int64_t r_end, int a,
                                                           gconv_dtype dt)
{
    int n, d, h, w, i;
    gconv_impl_bww_pix(P, r, &n, &d, &h, &w);
#pragma unroll
    for (i = 0; i < 64; i++)
        if (i < E) {
            int valid = s->ok && r + i < r_end;
            int64_t off;
            if (a) {
                off = s->base + (int64_t)n * P->so.n + (int64_t)d * P->so.s[0] +
                      (int64_t)h * P->so.s[1] + (int64_t)w * P->so.s[2];
            } else {
                const int id = d * P->str[0] + s->oz, ih = h * P->str[1] + s->oy;
                const int iw = w * P->str[2] + s->ox;
                valid = valid && (unsigned)id < (unsigned)P->in_sp[0] &&
                        (unsigned)ih < (unsigned)P->in_sp[1] && (unsigned)iw < (unsigned)P->in_sp[2];
                off = s->base + (int64_t)n * P->si.n + (int64_t)id * P->si.s[0] +
                      (int64_t)ih * P->si.s[1] + (int64_t)iw * P->si.s[2];
            }
            s->sv[i] = valid ? gconv_impl_igemm_ld_bits(a ? P->dout : P->in, off, dt) : 0u;
            gconv_impl_bww_pix_next(P, &n, &d, &h, &w);
        }
}

/* Vector gathers (channels contiguous, NHWGC / GNHWC): a 16-byte vector holds vec consecutive
 * rows of a tile (consecutive k of d_out for A, consecutive c of one tap of the input for B),
 * all at one reduction index (pixel). Thread tid loads, per k-tile, pixel column pr = tid % BK
 * and vectors vi = tid / BK + i * (threads / BK), i < nv; it stores each element into its row at
 * column pr (2- or 4-byte shared stores: a warp covers 32 consecutive columns of one row, so
 * the stores are free of bank conflicts; the global loads are 16 bytes per lane). */
typedef struct gconv_impl_bww_vgather {
    int pr, nv;
    int row0[4], ok[4];
    int64_t cb[4];
    int oz[4], oy[4], ox[4];
    gconv_impl_igemm_u4 v[4];
} gconv_impl_bww_vgather;

static __device__ __forceinline__ void gconv_impl_bww_vinit(const gconv_impl_bww_params *P,
                                                            gconv_impl_bww_vgather *s,
                                                            gconv_impl_tile t, int rows, int esize,
                                                            int a, int g, int first)
{
    const int nth = gconv_impl_tile_threads(t), tid = (int)threadIdx.x, vec = 16 / esize;
    int i;
    s->pr = tid % t.bk;
    s->nv = (rows / vec) * t.bk / nth;
#pragma unroll
    for (i = 0; i < 4; i++) {
        const int vi = tid / t.bk + i * (nth / t.bk);
        const int j0 = first + vi * vec; /* k (A) or column j (B) of the vector's first row */
        s->row0[i] = vi * vec;
        s->oz[i] = s->oy[i] = s->ox[i] = 0;
        if (a) {
            s->ok[i] = i < s->nv && j0 < P->K;
            s->cb[i] = (int64_t)g * P->so.g + j0;
        } else {
            const int tap = j0 / P->C, c0 = j0 - tap * P->C;
            s->ok[i] = i < s->nv && j0 < P->Ncol;
            s->cb[i] = (int64_t)g * P->si.g + c0;
            s->ox[i] = (tap % P->flt[2]) * P->dil[2] - P->pad[2];
            s->oy[i] = ((tap / P->flt[2]) % P->flt[1]) * P->dil[1] - P->pad[1];
            s->oz[i] = (tap / (P->flt[2] * P->flt[1])) * P->dil[0] - P->pad[0];
        }
    }
}

static __device__ __forceinline__ void gconv_impl_bww_vload(const gconv_impl_bww_params *P,
                                                            gconv_impl_bww_vgather *s, int64_t r0,
                                                            int64_t r_end, int a, int esize)
{
    const int64_t r = r0 + s->pr;
    const int rok = r < r_end;
    int n = 0, d = 0, h = 0, w = 0, i;
    if (rok)
        gconv_impl_bww_pix(P, r, &n, &d, &h, &w);
#pragma unroll
    for (i = 0; i < 4; i++)
        if (i < s->nv) {
            int valid = rok && s->ok[i];
            int64_t off;
            const unsigned char *base;
            if (a) {
                off = s->cb[i] + (int64_t)n * P->so.n + (int64_t)d * P->so.s[0] +
                      (int64_t)h * P->so.s[1] + (int64_t)w * P->so.s[2];
                base = (const unsigned char *)P->dout;
            } else {
                const int id = d * P->str[0] + s->oz[i], ih = h * P->str[1] + s->oy[i];
                const int iw = w * P->str[2] + s->ox[i];
                valid = valid && (unsigned)id < (unsigned)P->in_sp[0] &&
                        (unsigned)ih < (unsigned)P->in_sp[1] && (unsigned)iw < (unsigned)P->in_sp[2];
                off = s->cb[i] + (int64_t)n * P->si.n + (int64_t)id * P->si.s[0] +
                      (int64_t)ih * P->si.s[1] + (int64_t)iw * P->si.s[2];
                base = (const unsigned char *)P->in;
            }
            if (valid) {
                s->v[i] = gconv_impl_igemm_ld_global16(base + off * esize);
            } else {
                s->v[i].x = s->v[i].y = s->v[i].z = s->v[i].w = 0u;
            }
        }
}

static __device__ __forceinline__ void gconv_impl_bww_vstore(const gconv_impl_bww_vgather *s,
                                                             unsigned char *tile,
                                                             gconv_impl_tile t, int esize)
{
    const int vec = 16 / esize, cpr = t.bk * esize / 16;
    const int coff = (s->pr % vec) * esize;
    int i, e;
#pragma unroll
    for (i = 0; i < 4; i++)
        if (i < s->nv) {
            const unsigned wd[4] = {s->v[i].x, s->v[i].y, s->v[i].z, s->v[i].w};
#pragma unroll
            for (e = 0; e < 8; e++)
                if (e < vec) {
                    unsigned char *dst =
                        tile + gconv_impl_igemm_chunk_off(s->row0[i] + e, s->pr / vec, cpr) + coff;
                    if (esize == 4)
                        *(unsigned *)dst = wd[e];
                    else
                        *(unsigned short *)dst = (unsigned short)(wd[e >> 1] >> ((e & 1) * 16));
                }
        }
}

static __device__ __forceinline__ void gconv_impl_bww_gemm_body(const gconv_impl_bww_params *P,
                                                                const gconv_impl_tile t,
                                                                const gconv_dtype dt, const int av,
                                                                const int bv)
{
    GCONV_IMPL_DYN_SMEM(smem_raw);
    const int esize = dt == GCONV_F32 ? 4 : 2;
    const int S = gconv_impl_tile_stages(t, esize);
    const int sbytes = gconv_impl_tile_stage_bytes(t, esize);
    const int abytes = t.bm * t.bk * esize;
    const int math = gconv_impl_igemm_math(t, dt, 0);
    const int lag = math == GCONV_IMPL_MATH_WGMMA && S >= 4 ? 2 : 1;
    const int nth = gconv_impl_tile_threads(t), tid = (int)threadIdx.x;
    const int EA = t.bm * t.bk / nth, EB = t.bn * t.bk / nth;
    const int cpr = t.bk * esize / 16;
    const int split = (int)blockIdx.y;
    const int KT = (int)((P->R + t.bk - 1) / t.bk);
    const int kt0 = split * P->ktc;
    const int kt1 = kt0 + P->ktc < KT ? kt0 + P->ktc : KT;
    const int nk = kt1 > kt0 ? kt1 - kt0 : 0;
    const int64_t r_end = (int64_t)kt1 * t.bk < P->R ? (int64_t)kt1 * t.bk : P->R;
    unsigned char *smem = smem_raw;
    float acc[GCONV_IMPL_MAX_ACC];
    gconv_impl_bww_gather ga, gb;
    gconv_impl_bww_vgather va, vb;
    int g, tm, tn, m0, n0, kt, s, rd, wr;
#if defined(GCONV_PLATFORM_CUDA)
    smem += (1024u - (gconv_impl_igemm_smem_addr(smem_raw) & 1023u)) & 1023u;
#endif
    {
        const int64_t tpg = (int64_t)P->mt * P->nt;
        const int64_t L = (int64_t)blockIdx.x;
        g = (int)(L / tpg);
        gconv_impl_igemm_raster(L - (int64_t)g * tpg, P->mt, P->nt, &tm, &tn);
    }
    m0 = tm * t.bm;
    n0 = tn * t.bn;
    {
        const int k = m0 + tid % t.bm;
        ga.row = tid % t.bm;
        ga.q = (tid / t.bm) * EA;
        ga.ok = k < P->K;
        ga.base = (int64_t)g * P->so.g + (int64_t)k * P->so.c;
        ga.oz = ga.oy = ga.ox = 0;
    }
    {
        const int j = n0 + tid % t.bn;
        const int tap = j / P->C, c = j - tap * P->C;
        gb.row = tid % t.bn;
        gb.q = (tid / t.bn) * EB;
        gb.ok = j < P->Ncol;
        gb.base = (int64_t)g * P->si.g + (int64_t)c * P->si.c;
        gb.ox = (tap % P->flt[2]) * P->dil[2] - P->pad[2];
        gb.oy = ((tap / P->flt[2]) % P->flt[1]) * P->dil[1] - P->pad[1];
        gb.oz = (tap / (P->flt[2] * P->flt[1])) * P->dil[0] - P->pad[0];
    }
    if (av)
        gconv_impl_bww_vinit(P, &va, t, t.bm, esize, 1, g, m0);
    if (bv)
        gconv_impl_bww_vinit(P, &vb, t, t.bn, esize, 0, g, n0);
    gconv_impl_igemm_zero(acc, t, math);

    /* prologue: k-tiles 0 .. S-1-lag of this split */
#pragma unroll
    for (s = 0; s < 8; s++)
        if (s < S - lag) {
            if (s < nk) {
                unsigned char *st = smem + s * sbytes;
                const int64_t r0 = (int64_t)(kt0 + s) * t.bk;
                if (av) {
                    gconv_impl_bww_vload(P, &va, r0, r_end, 1, esize);
                    gconv_impl_bww_vstore(&va, st, t, esize);
                } else {
                    gconv_impl_bww_load(P, &ga, EA, r0 + ga.q, r_end, 1, dt);
                    gconv_impl_igemm_st_elems(st, ga.row, ga.q, EA, ga.sv, esize, cpr);
                }
                if (bv) {
                    gconv_impl_bww_vload(P, &vb, r0, r_end, 0, esize);
                    gconv_impl_bww_vstore(&vb, st + abytes, t, esize);
                } else {
                    gconv_impl_bww_load(P, &gb, EB, r0 + gb.q, r_end, 0, dt);
                    gconv_impl_igemm_st_elems(st + abytes, gb.row, gb.q, EB, gb.sv, esize, cpr);
                }
            }
            gconv_impl_igemm_cp_commit();
        }

    /* main loop (as gconv/fwd.h): stage rd holds k-tile kt, stage wr receives k-tile
     * kt + S - lag, loaded into registers before the math and stored after it. The barrier
     * at the top tells every thread that the math of k-tile kt - lag (the last reader of
     * stage wr) has finished everywhere. */
    rd = 0, wr = S - lag;
    for (kt = 0; kt < nk; kt++) {
        unsigned char *cur = smem + rd * sbytes;
        unsigned char *nxt = smem + wr * sbytes;
        const int more = kt + S - lag < nk;
        gconv_impl_igemm_cp_wait(S - lag - 1);
        gconv_impl_igemm_publish(math);
        __syncthreads();
        if (more) {
            const int64_t r0 = (int64_t)(kt0 + kt + S - lag) * t.bk;
            if (av)
                gconv_impl_bww_vload(P, &va, r0, r_end, 1, esize);
            else
                gconv_impl_bww_load(P, &ga, EA, r0 + ga.q, r_end, 1, dt);
            if (bv)
                gconv_impl_bww_vload(P, &vb, r0, r_end, 0, esize);
            else
                gconv_impl_bww_load(P, &gb, EB, r0 + gb.q, r_end, 0, dt);
        }
        gconv_impl_igemm_cp_commit();
        gconv_impl_igemm_stage_math(acc, cur, cur + abytes, t, esize, dt, math, kt == 0);
        gconv_impl_igemm_retire(acc, t, math, lag - 1);
        if (more) {
            if (av)
                gconv_impl_bww_vstore(&va, nxt, t, esize);
            else
                gconv_impl_igemm_st_elems(nxt, ga.row, ga.q, EA, ga.sv, esize, cpr);
            if (bv)
                gconv_impl_bww_vstore(&vb, nxt + abytes, t, esize);
            else
                gconv_impl_igemm_st_elems(nxt + abytes, gb.row, gb.q, EB, gb.sv, esize, cpr);
        }
        rd = rd + 1 == S ? 0 : rd + 1;
        wr = wr + 1 == S ? 0 : wr + 1;
    }
    if (nk == 0) {
        /* no k-tile: the accumulators must still be zeros (wgmma zeroes in its first step) */
        int z;
#pragma unroll
        for (z = 0; z < GCONV_IMPL_MAX_ACC; z++)
            acc[z] = 0.0f;
    }
    gconv_impl_igemm_retire(acc, t, math, 0);
    gconv_impl_igemm_cp_wait(0);
    __syncthreads(); /* every thread is done reading the stages: reuse them for C */

    gconv_impl_bww_tile_out(P, acc, smem, t, math, esize, split, g, m0, n0, 0);
}

/* ---- TC kernel: tensor cores on pixel-major tiles (CUDA sm_80+, fp16 / bf16) ----------------
 * For NHWGC / GNHWC tensors with C a multiple of 8 (K of 4) the GEMM's reduction index (pixels) is
 * the outer one in memory and both M and N are channel indices, contiguous per pixel. So a
 * stage is stored pixel-major, as the engine's transposed format (gconv_impl_igemm_math_mma_t):
 * BK = 32 pixel rows, each row the tile's channels of that pixel as 16-byte chunks, copied
 * with cp.async straight from global memory (zero-filled for pads, pixels past the split and
 * channels past K / C * taps), read out with ldmatrix.trans. Nothing goes through registers.
 *
 * Two operand sides: X, the output gradient (channel k; offset g*so.g + k + r * pso: the
 * layouts keep the N*output pixels in one uniform stride pso, which the launcher checks), and
 * Y, the input (column j = tap*C + c; a 16-byte chunk never straddles taps since C % 8 == 0;
 * offset of the pixel's receptive-field origin plus a per-chunk tap constant, bounds-checked
 * per axis). sw = 0: A = X (M = K), B = Y (N = C * taps); sw = 1: A = Y, B = X, for small K
 * (the tile's N then covers K with little waste). Block (blockIdx.x, blockIdx.y) = (group *
 * tiles + tile, split). Thread tid copies, per stage, pixel row kr = tid / TPR (TPR = threads /
 * 32) and chunks tq, tq + TPR, ... (tq = tid % TPR) of each side; its pixel (n, d, h, w) is
 * advanced by 32 per stage with a carry loop, no division. */
#define GCONV_IMPL_BWW_TC_BK 32 /* pixels per stage (64 measured slower: bench/NOTES.md) */
#define GCONV_IMPL_BWW_TC_ST 4  /* pipeline stages */
/* most chunks per thread per side and stage: 16 chunks of a 128-wide row over 8 threads */
#define GCONV_IMPL_BWW_TC_MAXQ 2

/* Per-thread constants of the copies: for each chunk it copies, whether it is in range (X:
 * how many of its two 8-byte halves are, 0 to 2; K % 8 == 4 leaves one at the end), its
 * shared-memory offset in a stage, its byte offset from the thread's pixel pointer, and (Y) the
 * tap's offsets from the receptive-field origin (pads included). */
typedef struct gconv_impl_bww_tcg {
    int nx, ny; /* chunks this thread copies per side */
    int xok[GCONV_IMPL_BWW_TC_MAXQ], yok[GCONV_IMPL_BWW_TC_MAXQ];
    unsigned xs[GCONV_IMPL_BWW_TC_MAXQ], ys[GCONV_IMPL_BWW_TC_MAXQ];
    int64_t xo[GCONV_IMPL_BWW_TC_MAXQ], yo[GCONV_IMPL_BWW_TC_MAXQ];
    int tz[GCONV_IMPL_BWW_TC_MAXQ], ty[GCONV_IMPL_BWW_TC_MAXQ], tx[GCONV_IMPL_BWW_TC_MAXQ];
} gconv_impl_bww_tcg;

/* The thread's pixel walk: pixel r (left = r_end - r pixels of the split remain from it) at
 * (n, d, h, w); xp: its d_out pixel (byte pointer), yp: its input receptive-field origin
 * (d*stride, h*stride, w*stride, pads not applied), iz / iy / ix the origin's coordinates.
 * Both pointers move by constant byte steps, so a stage costs no multiplication. */
typedef struct gconv_impl_bww_tcw {
    const unsigned char *xp, *yp;
    int64_t left;
    int n, d, h, w, iz, iy, ix;
} gconv_impl_bww_tcw;

static __device__ __forceinline__ void gconv_impl_bww_tc_start(const gconv_impl_bww_params *P,
                                                               gconv_impl_bww_tcw *s, int64_t r,
                                                               int64_t r_end)
{
    gconv_impl_bww_pix(P, r, &s->n, &s->d, &s->h, &s->w);
    s->iz = s->d * P->str[0], s->iy = s->h * P->str[1], s->ix = s->w * P->str[2];
    s->left = r_end - r;
    s->xp = (const unsigned char *)P->dout + r * P->so.s[2] * 2;
    s->yp = (const unsigned char *)P->in +
            ((int64_t)s->n * P->si.n + (int64_t)s->iz * P->si.s[0] +
             (int64_t)s->iy * P->si.s[1] + (int64_t)s->ix * P->si.s[2]) * 2;
}

/* Move the walk on by `step` pixels: w, ix and the pointers by constant steps, then a carry
 * loop (one pass per output row crossed) into h, d, n. */
static __device__ __forceinline__ void gconv_impl_bww_tc_next(const gconv_impl_bww_params *P,
                                                              gconv_impl_bww_tcw *s, int step)
{
    const int OD = P->out_sp[0], OH = P->out_sp[1], OW = P->out_sp[2];
    s->left -= step;
    s->xp += (int64_t)step * P->so.s[2] * 2;
    s->w += step;
    s->ix += step * P->str[2];
    s->yp += (int64_t)step * P->str[2] * P->si.s[2] * 2;
    while (s->w >= OW) {
        s->w -= OW;
        s->ix -= OW * P->str[2];
        s->iy += P->str[1];
        s->yp += ((int64_t)P->str[1] * P->si.s[1] - (int64_t)OW * P->str[2] * P->si.s[2]) * 2;
        if (++s->h == OH) {
            s->h = 0;
            s->iy = 0;
            s->iz += P->str[0];
            s->yp += ((int64_t)P->str[0] * P->si.s[0] - (int64_t)OH * P->str[1] * P->si.s[1]) * 2;
            if (++s->d == OD) {
                s->d = 0;
                s->iz = 0;
                s->yp += (P->si.n - (int64_t)OD * P->str[0] * P->si.s[0]) * 2;
                ++s->n;
            }
        }
    }
}

/* Issue the cp.async copies of one stage (shared address st) for the walk's pixel; pixels past
 * the split, pads and out-of-range channels are zero-filled (their source is then the tensor's
 * base, never read). */
static __device__ __forceinline__ void gconv_impl_bww_tc_copy(const gconv_impl_bww_params *P,
                                                              const gconv_impl_bww_tcg *c,
                                                              const gconv_impl_bww_tcw *s,
                                                              unsigned st, const int mq)
{
    const int rv = s->left > 0;
    int i;
#pragma unroll
    for (i = 0; i < GCONV_IMPL_BWW_TC_MAXQ; i++)
        if (i < mq && i < c->nx) {
            const unsigned char *x0 = (const unsigned char *)P->dout;
            const int v = rv && c->xok[i];
            if (P->K % 8) { /* 8-byte halves: d_out's pixels are only 8-byte aligned */
                const int v1 = rv && c->xok[i] == 2;
                gconv_impl_igemm_cp_async8(st + c->xs[i], v ? s->xp + c->xo[i] : x0, v);
                gconv_impl_igemm_cp_async8(st + c->xs[i] + 8, v1 ? s->xp + c->xo[i] + 8 : x0, v1);
            } else {
                gconv_impl_igemm_cp_async16(st + c->xs[i], v ? s->xp + c->xo[i] : x0, v);
            }
        }
#pragma unroll
    for (i = 0; i < GCONV_IMPL_BWW_TC_MAXQ; i++)
        if (i < mq && i < c->ny) {
            const int v = rv && c->yok[i] &&
                          (unsigned)(s->iz + c->tz[i]) < (unsigned)P->in_sp[0] &&
                          (unsigned)(s->iy + c->ty[i]) < (unsigned)P->in_sp[1] &&
                          (unsigned)(s->ix + c->tx[i]) < (unsigned)P->in_sp[2];
            gconv_impl_igemm_cp_async16(st + c->ys[i],
                                        v ? s->yp + c->yo[i] : (const unsigned char *)P->in, v);
        }
}

static __device__ __forceinline__ void gconv_impl_bww_tc_body(const gconv_impl_bww_params *P,
                                                              const gconv_impl_tile t,
                                                              const gconv_dtype dt, const int sw)
{
#if GCONV_IMPL_IGEMM_MATH == GCONV_IMPL_MATH_MMA && GCONV_IMPL_IGEMM_CP_ASYNC
    GCONV_IMPL_DYN_SMEM(smem_raw);
    const int BK = t.bk;
    const int S = gconv_impl_tile_stages(t, 2);
    const int sbytes = gconv_impl_tile_stage_bytes(t, 2), abytes = t.bm * BK * 2;
    const int nth = gconv_impl_tile_threads(t), tid = (int)threadIdx.x;
    const int tpr = nth / BK, kr = tid / tpr, tq = tid % tpr;
    const int xw = sw ? t.bn : t.bm, yw = sw ? t.bm : t.bn; /* side widths (elements) */
    /* chunks per thread on the wider side: a constant, so unused slots of cg vanish */
    const int mq = ((xw > yw ? xw : yw) / 8 + tpr - 1) / tpr;
    const int split = (int)blockIdx.y;
    const int KT = (int)((P->R + BK - 1) / BK);
    const int kt0 = split * P->ktc;
    const int kt1 = kt0 + P->ktc < KT ? kt0 + P->ktc : KT;
    const int nk = kt1 > kt0 ? kt1 - kt0 : 0;
    const int64_t r_end = (int64_t)kt1 * BK < P->R ? (int64_t)kt1 * BK : P->R;
    unsigned char *smem = smem_raw;
    unsigned sbase, swr;
    float acc[GCONV_IMPL_MAX_ACC];
    gconv_impl_bww_tcg cg;
    gconv_impl_bww_tcw wk;
    int g, tm, tn, x0, y0, i, kt, rd, wr;
    smem += (1024u - (gconv_impl_igemm_smem_addr(smem_raw) & 1023u)) & 1023u;
    sbase = gconv_impl_igemm_smem_addr(smem);
    {
        const int64_t tpg = (int64_t)P->mt * P->nt, L = (int64_t)blockIdx.x;
        g = (int)(L / tpg);
        gconv_impl_igemm_raster(L - (int64_t)g * tpg, P->mt, P->nt, &tm, &tn);
    }
    x0 = sw ? tn * t.bn : tm * t.bm; /* first k of the tile */
    y0 = sw ? tm * t.bm : tn * t.bn; /* first column j */
    cg.nx = cg.ny = 0;
#pragma unroll
    for (i = 0; i < GCONV_IMPL_BWW_TC_MAXQ; i++) {
        const int q = tq + i * tpr;
        if (i < mq && q < xw / 8) {
            const int k = x0 + q * 8;
            cg.xok[i] = P->K - k >= 8 ? 2 : P->K - k >= 4 ? 1 : 0;
            cg.xo[i] = ((int64_t)g * P->so.g + (int64_t)k * P->so.c) * 2;
            cg.xs[i] = (unsigned)((sw ? abytes : 0) + gconv_impl_igemm_chunk_off(kr, q, xw / 8));
            cg.nx = i + 1;
        }
        if (i < mq && q < yw / 8) {
            const int j = y0 + q * 8, tap = j / P->C, c = j - tap * P->C;
            cg.yok[i] = j < P->Ncol;
            cg.tx[i] = (tap % P->flt[2]) * P->dil[2] - P->pad[2];
            cg.ty[i] = ((tap / P->flt[2]) % P->flt[1]) * P->dil[1] - P->pad[1];
            cg.tz[i] = (tap / (P->flt[2] * P->flt[1])) * P->dil[0] - P->pad[0];
            cg.yo[i] = ((int64_t)g * P->si.g + (int64_t)c * P->si.c +
                        (int64_t)cg.tz[i] * P->si.s[0] + (int64_t)cg.ty[i] * P->si.s[1] +
                        (int64_t)cg.tx[i] * P->si.s[2]) * 2;
            cg.ys[i] = (unsigned)((sw ? 0 : abytes) + gconv_impl_igemm_chunk_off(kr, q, yw / 8));
            cg.ny = i + 1;
        }
    }
    gconv_impl_bww_tc_start(P, &wk, (int64_t)kt0 * BK + kr, r_end);
    gconv_impl_igemm_zero(acc, t, GCONV_IMPL_MATH_MMA);

    /* prologue: k-tiles 0 .. S-2 of this split, one commit group each (empty past nk) */
    swr = sbase;
#pragma unroll
    for (i = 0; i < 8; i++)
        if (i < S - 1) {
            if (i < nk) {
                gconv_impl_bww_tc_copy(P, &cg, &wk, swr, mq);
                gconv_impl_bww_tc_next(P, &wk, BK);
            }
            swr += (unsigned)sbytes;
            gconv_impl_igemm_cp_commit();
        }

    /* main loop: stage rd holds k-tile kt; stage wr (address swr) receives k-tile kt + S - 1.
     * The barrier after the wait publishes k-tile kt's copies to every thread and tells each
     * that all threads finished the math of k-tile kt - 1, the last reader of stage wr. */
    rd = 0, wr = S - 1;
    for (kt = 0; kt < nk; kt++) {
        gconv_impl_igemm_cp_wait(S - 2);
        __syncthreads();
        if (kt + S - 1 < nk) {
            gconv_impl_bww_tc_copy(P, &cg, &wk, swr, mq);
            gconv_impl_bww_tc_next(P, &wk, BK);
        }
        gconv_impl_igemm_cp_commit();
        gconv_impl_igemm_math_mma_t(acc, smem + rd * sbytes, smem + rd * sbytes + abytes, t, dt);
        rd = rd + 1 == S ? 0 : rd + 1;
        wr = wr + 1 == S ? 0 : wr + 1;
        swr = sbase + (unsigned)(wr * sbytes);
    }
    gconv_impl_igemm_cp_wait(0);
    __syncthreads(); /* every thread is done reading the stages: reuse them for C */

    gconv_impl_bww_tile_out(P, acc, smem, t, GCONV_IMPL_MATH_MMA, 2, split, g, x0, y0, sw);
#else
    (void)P, (void)t, (void)dt, (void)sw; /* never launched without mma.sync and cp.async */
#endif
}

/* ---- DW kernel (depthwise, NHWGC, 16-byte channel vectors) -----------------------------------
 * Block (blockIdx.x, blockIdx.y, blockIdx.z) = (channel block, split, tap chunk); thread
 * tid = pl * CL + cl owns channel vector cb*CL + cl and a contiguous run of the split's pixels
 * (run pl of PL equal runs), walked with an incremental (n, d, h, w) counter. Accumulators
 * acc[tap][e] for the chunk's taps (at most 9) and VEC channels; each tap's input address is
 * the pixel's receptive-field origin plus a per-tap constant. The block sums its pixel lanes
 * in shared memory in lane order (fixed order: deterministic), one tap per round. */
static __device__ __forceinline__ void gconv_impl_bww_dw_body(const gconv_impl_bww_params *P,
                                                              const gconv_dtype dt)
{
    __shared__ float red[128 * 8];
    const int esize = dt == GCONV_F32 ? 4 : 2, VEC = 16 / esize;
    const int CL = P->cl, PL = (int)blockDim.x / CL, tid = (int)threadIdx.x;
    const int cl = tid % CL, pl = tid / CL;
    const int cv = (int)blockIdx.x * CL + cl;
    const int split = (int)blockIdx.y, t0 = (int)blockIdx.z * GCONV_IMPL_BWW_DW_TAPS;
    const int ntap = P->taps - t0 < GCONV_IMPL_BWW_DW_TAPS ? P->taps - t0 : GCONV_IMPL_BWW_DW_TAPS;
    const int active = cv * VEC < P->G;
    const int64_t rb = (int64_t)split * P->chunk;
    const int64_t re = rb + P->chunk < P->R ? rb + P->chunk : P->R;
    const int64_t len = (re - rb + PL - 1) / PL;
    const int64_t r0 = rb + (int64_t)pl * len;
    const int64_t r1 = r0 + len < re ? r0 + len : re;
    const unsigned char *in = (const unsigned char *)P->in + (int64_t)cv * VEC * esize;
    const unsigned char *dout = (const unsigned char *)P->dout + (int64_t)cv * VEC * esize;
    float acc[GCONV_IMPL_BWW_DW_TAPS][8];
    int tz[GCONV_IMPL_BWW_DW_TAPS], ty[GCONV_IMPL_BWW_DW_TAPS], tx[GCONV_IMPL_BWW_DW_TAPS];
    int64_t toff[GCONV_IMPL_BWW_DW_TAPS];
    int t, e, i;
#pragma unroll
    for (t = 0; t < GCONV_IMPL_BWW_DW_TAPS; t++) {
        const int tap = t0 + t;
        tx[t] = (tap % P->flt[2]) * P->dil[2];
        ty[t] = ((tap / P->flt[2]) % P->flt[1]) * P->dil[1];
        tz[t] = (tap / (P->flt[2] * P->flt[1])) * P->dil[0];
        toff[t] = (int64_t)tz[t] * P->si.s[0] + (int64_t)ty[t] * P->si.s[1] +
                  (int64_t)tx[t] * P->si.s[2];
#pragma unroll
        for (e = 0; e < 8; e++)
            acc[t][e] = 0.0f;
    }
    if (active && r0 < r1) {
        int n, d, h, w;
        int64_t r;
        gconv_impl_bww_pix(P, r0, &n, &d, &h, &w);
        for (r = r0; r < r1; r++) {
            const int id0 = d * P->str[0] - P->pad[0], ih0 = h * P->str[1] - P->pad[1];
            const int iw0 = w * P->str[2] - P->pad[2];
            const int64_t ob = (int64_t)n * P->so.n + (int64_t)d * P->so.s[0] +
                               (int64_t)h * P->so.s[1] + (int64_t)w * P->so.s[2];
            const int64_t ib = (int64_t)n * P->si.n + (int64_t)id0 * P->si.s[0] +
                               (int64_t)ih0 * P->si.s[1] + (int64_t)iw0 * P->si.s[2];
            float o[8];
            const gconv_impl_igemm_u4 v = gconv_impl_igemm_ld_global16(dout + ob * esize);
#pragma unroll
            for (e = 0; e < 8; e++)
                if (e < VEC)
                    o[e] = gconv_impl_igemm_u4_elem(v, e, dt);
#pragma unroll
            for (t = 0; t < GCONV_IMPL_BWW_DW_TAPS; t++)
                if (t < ntap && (unsigned)(id0 + tz[t]) < (unsigned)P->in_sp[0] &&
                    (unsigned)(ih0 + ty[t]) < (unsigned)P->in_sp[1] &&
                    (unsigned)(iw0 + tx[t]) < (unsigned)P->in_sp[2]) {
                    const gconv_impl_igemm_u4 x =
                        gconv_impl_igemm_ld_global16(in + (ib + toff[t]) * esize);
#pragma unroll
                    for (e = 0; e < 8; e++)
                        if (e < VEC)
                            acc[t][e] += gconv_impl_igemm_u4_elem(x, e, dt) * o[e];
                }
            gconv_impl_bww_pix_next(P, &n, &d, &h, &w);
        }
    }
    /* fixed-order block reduction, one tap per round: red[pl][cl*VEC + e] */
#pragma unroll
    for (t = 0; t < GCONV_IMPL_BWW_DW_TAPS; t++)
        if (t < ntap) {
#pragma unroll
            for (e = 0; e < 8; e++)
                if (e < VEC)
                    red[(pl * CL + cl) * VEC + e] = acc[t][e];
            __syncthreads();
            for (i = tid; i < CL * VEC; i += (int)blockDim.x) {
                const int g = ((int)blockIdx.x * CL + i / VEC) * VEC + i % VEC;
                float v = 0.0f;
                int q;
                for (q = 0; q < PL; q++)
                    v += red[q * CL * VEC + i];
                if (g < P->G)
                    gconv_impl_bww_emit(P, split, (int64_t)g, t0 + t, v);
            }
            __syncthreads(); /* red[] is rewritten by the next round */
        }
}

/* ---- DWR kernel (depthwise 3x3, stride 1 or 2: input rows streamed once) ---------------------
 * Work item q = (plane * hchunks + hc) * wts + wt: output rows h0 = hc * rh .. h0 + nrow - 1 of
 * plane (n, d) (a 3D problem with a trivial depth axis folds its depth into the planes), output
 * columns wo0 = wt * TW .. wo0 + TW - 1, one channel vector of VB bytes (4 channels,
 * gconv_impl_bww_dwr_vb). Block (blockIdx.x, blockIdx.y) = (channel block, split); thread tid =
 * pl * CL + cl owns channel vector blockIdx.x * CL + cl and the items q = split * PL + pl + i *
 * splits * PL (adjacent pixel lanes take adjacent column tiles of the same rows, which share
 * their halo columns in L1 / L2).
 *
 * The item reads window rows m = 0 .. M - 1 (input row r0 + m, r0 = h0 * S - pad, M = (nrow -
 * 1) * S + 3), each SPAN = (TW - 1) * S + 3 vectors wide starting at input column wo0 * S -
 * pad, and d_out rows 0 .. nrow - 1, TW vectors each. Like the forward DW3 kernel, each thread
 * keeps a private ring in shared memory ([vector][thread], VB-byte units: a warp's accesses are
 * consecutive) of NR = 3 + PD * S input row slots and PD + 1 d_out row slots, filled PD output
 * rows ahead by cp.async (sm_80+), so the bytes in flight sit in shared memory rather than in
 * registers. Copy group k holds d_out row k and the input rows that output row k needs first
 * (k = 0: window rows 0..2; k > 0: rows 3 + (k - 1) * S .. 2 + k * S); window row m lives in
 * slot m % NR, d_out row k in slot k % (PD + 1). Step k converts d_out row k into a register
 * window o[d] = d_out row k - d (d < 3, fp32), then converts each of window rows k * S ..
 * k * S + S - 1 once and multiplies it with every d_out row and column its taps meet (row m
 * feeds d_out row (m - ky) / S through tap row ky), accumulating acc[ky][kx][e] in fp32; those
 * rows and the d_out slot then die and copy group k + PD + 1 refills them. So each input and
 * d_out element is converted to fp32 once (the first version converted each input row once
 * per tap row, and the fp16 conversions, not the FMAs, bounded it). 2 / S steps past the
 * item's last d_out row finish its last input rows. Out-of-image rows and columns and d_out
 * columns past the right edge arrive as zeros, so they add nothing; the d_out slots of those
 * last steps are zeroed by plain stores (no test per element in the step). Each element of in
 * and d_out is read from global memory once per item (input halo columns and the 3 - S halo
 * rows of an item again, mostly from L2).
 *
 * The block then sums its pixel lanes in shared memory (the ring's memory) in lane order and
 * emits one partial per split (fixed order: deterministic). */
/* Output rows copied ahead (1..3). H100, MobileNetV2 fp16, 4 channels a thread at 3 blocks
 * per SM, PD 1 / 2 / 3: 144@56 53.3-54.6 / 54.0 / 54.8-56.0 us, 96@112 s2 77.2-78.1 /
 * 78.7-78.9 / 85.6-85.7, 576@14 22.5-23.0 / 23.6-24.0 / 25.3; probably because a deeper ring
 * takes shared memory from the L1 that serves the input's halo columns (not measured;
 * bench/NOTES.md) */
#ifndef GCONV_IMPL_BWW_DWR_PD
#define GCONV_IMPL_BWW_DWR_PD 1
#endif
#ifndef GCONV_IMPL_BWW_DWR_TW1
#define GCONV_IMPL_BWW_DWR_TW1 4 /* output columns per thread, stride 1 (at most 4) */
#endif
#ifndef GCONV_IMPL_BWW_DWR_TW2
#define GCONV_IMPL_BWW_DWR_TW2 2 /* output columns per thread, stride 2 (at most 4) */
#endif
/* Blocks per SM the registers are capped for, by data type token T: 3 for the 16-bit types,
 * whose threads own 4 channels (162 registers at stride 1), 2 for fp32 (4 channels in 16 bytes,
 * 254 registers). H100, MobileNetV2: 8 channels a thread at 2 blocks per SM, 4 at 4 (128
 * registers) and 4 at 3: 144@56 54.4 / 56.9 / 54.3 us, 96@112 s2 78.5 / 82.5 / 78.7, 576@14
 * 27.6 / 28.8 / 24.2 (bench/NOTES.md) */
#define GCONV_IMPL_BWW_DWR_MINB(T) ((T) == GCONV_F32 ? 2 : 3)
#ifndef GCONV_IMPL_BWW_DWR_CA
#define GCONV_IMPL_BWW_DWR_CA 1 /* 1: input rows copied through L1 (cp.async.ca), 0: .cg */
#endif
#define GCONV_IMPL_BWW_DWR_THREADS 128 /* most threads of a block */

/* The blocks sharing chunk `chunk` when U units, `per` to a chunk in chunk order, are dealt to
 * B blocks in equal ranges (block b takes units floor(b U / B) .. floor((b + 1) U / B) - 1, so
 * the block holding unit u is floor(((u + 1) B - 1) / U)): the first (*b0) and the last (*b1).
 * The halo kernels BWH and BWN hand their sums over so, one slab per block of a chunk (BWH at
 * C = 32 in clusters: one a pair of blocks, or none, gconv_impl_bwh_cl_plan). */
static inline GCONV_HD void gconv_impl_bww_chunk_blocks(int64_t chunk, int64_t per, int64_t B,
                                                        int64_t U, int64_t *b0, int64_t *b1)
{
    *b0 = ((chunk * per + 1) * B - 1) / U;
    *b1 = ((chunk + 1) * per * B - 1) / U;
}

/* The most blocks that share one of `chunks` chunks: the slabs such a plan needs. */
static inline int gconv_impl_bww_chunk_slabs(int64_t chunks, int64_t per, int64_t B, int64_t U)
{
    int64_t i, b0, b1, most = 0;
    for (i = 0; i < chunks; i++) {
        gconv_impl_bww_chunk_blocks(i, per, B, U, &b0, &b1);
        if (b1 - b0 + 1 > most)
            most = b1 - b0 + 1;
    }
    return (int)most;
}

/* Output columns per thread of the DWR kernel for stride S. */
static inline GCONV_HD int gconv_impl_bww_dwr_tw(int S)
{
    return S == 1 ? GCONV_IMPL_BWW_DWR_TW1 : GCONV_IMPL_BWW_DWR_TW2;
}

/* Bytes of a thread's channel vector: 4 channels (8 bytes; 16 for fp32). */
static inline GCONV_HD int gconv_impl_bww_dwr_vb(gconv_dtype dt)
{
    return dt == GCONV_F32 ? 16 : 8;
}

/* Channel vectors of one thread's ring. */
static inline GCONV_HD int gconv_impl_bww_dwr_vecs(int S)
{
    const int TW = gconv_impl_bww_dwr_tw(S), SPAN = (TW - 1) * S + 3;
    return (3 + GCONV_IMPL_BWW_DWR_PD * S) * SPAN + (GCONV_IMPL_BWW_DWR_PD + 1) * TW;
}

/* One ring vector of VB bytes (a literal: 8 or 16) at p, widened to a 16-byte unit (zeros past
 * VB). */
static __device__ __forceinline__ gconv_impl_igemm_u4 gconv_impl_bww_dwr_ld(const unsigned char *p,
                                                                            const int VB)
{
    gconv_impl_igemm_u4 v;
    if (VB == 8) {
        const uint2 u = *(const uint2 *)p;
        v.x = u.x, v.y = u.y, v.z = 0u, v.w = 0u;
    } else {
        const uint4 u = *(const uint4 *)p;
        v.x = u.x, v.y = u.y, v.z = u.z, v.w = u.w;
    }
    return v;
}

/* Copy `cols` vectors of VB bytes (a literal: 8 or 16) of one row into the ring at dst (vector
 * j at dst + j * nth * VB): byte address a0 + j * csb, where bit j of mask says the column
 * exists and rowok the row; zeros elsewhere. a0 is integer arithmetic, and the addresses of
 * out-of-image rows and columns (pads) may lie outside the tensor: an address becomes a pointer
 * only where the vector exists, t (the tensor) elsewhere. The address steps by one 64-bit add a
 * column: the per-column 64-bit element offsets (multiply, shift, add) were most of the
 * copies' instructions. */
static __device__ __forceinline__ void gconv_impl_bww_dwr_row(unsigned char *dst, int nth,
                                                              const unsigned char *t,
                                                              uintptr_t a0, uintptr_t csb,
                                                              int rowok, unsigned mask,
                                                              const int cols, const int l1,
                                                              const int VB)
{
    int j;
#pragma unroll
    for (j = 0; j < cols; j++) {
        const int ok = rowok && ((mask >> j) & 1u);
        const char *src = ok ? (const char *)a0 : (const char *)t;
        if (VB == 16)
            gconv_impl_cp16_l1((uint4 *)(dst + j * nth * VB), src, ok, l1);
        else
            gconv_impl_cp8_ca((uint2 *)(dst + j * nth * VB), src, ok);
        a0 += csb;
    }
}

/* Zeros into `cols` ring vectors at dst (as gconv_impl_bww_dwr_row): the d_out slots of the
 * steps past an item's last d_out row, so that those steps read zeros without a test per
 * element. A plain store: the slot has no copy in flight (its last row was read this step;
 * or, in the prologue, the item has not copied into it and the item before left no copies in
 * flight, its copy groups past its last d_out row being empty). */
static __device__ __forceinline__ void gconv_impl_bww_dwr_zero(unsigned char *dst, int nth,
                                                               const int cols, const int VB)
{
    int j;
#pragma unroll
    for (j = 0; j < cols; j++) {
        if (VB == 16)
            *(uint4 *)(dst + j * nth * VB) = make_uint4(0u, 0u, 0u, 0u);
        else
            *(uint2 *)(dst + j * nth * VB) = make_uint2(0u, 0u);
    }
}

static __device__ __forceinline__ void gconv_impl_bww_dwr_body(const gconv_impl_bww_params *P,
                                                               const gconv_dtype dt, const int S,
                                                               const int TW)
{
    GCONV_IMPL_DYN_SMEM(smem_raw);
    const int es = dt == GCONV_F32 ? 4 : 2, VB = gconv_impl_bww_dwr_vb(dt), VEC = VB / es;
    const int PD = GCONV_IMPL_BWW_DWR_PD;
    const int SPAN = (TW - 1) * S + 3, NR = 3 + PD * S, ND = PD + 1;
    const int nth = (int)blockDim.x, tid = (int)threadIdx.x;
    const int CL = P->cl, cl = tid % CL, pl = tid / CL, PL = nth / CL;
    const int c0 = ((int)blockIdx.x * CL + cl) * VEC;
    const int split = (int)blockIdx.y;
    const int H = P->in_sp[1], W = P->in_sp[2], OH = P->out_sp[1], OW = P->out_sp[2];
    const unsigned char *in = (const unsigned char *)P->in;
    const unsigned char *dout = (const unsigned char *)P->dout;
    /* this thread's ring: vector i at rt + i * nth * VB (a warp's accesses are consecutive) */
    unsigned char *rt = smem_raw + tid * VB;
    unsigned char *dr = rt + NR * SPAN * nth * VB; /* its d_out slots */
    float *red = (float *)smem_raw;
    /* byte strides of input and d_out rows and columns */
    const uintptr_t irs = (uintptr_t)(P->si.s[1] * es), ics = (uintptr_t)(P->si.s[2] * es);
    const uintptr_t ors = (uintptr_t)(P->so.s[1] * es), ocs = (uintptr_t)(P->so.s[2] * es);
    float acc[3][3][8];
    int64_t q;
    int a, b, e, i;
#pragma unroll
    for (a = 0; a < 3; a++)
#pragma unroll
        for (b = 0; b < 3; b++)
#pragma unroll
            for (e = 0; e < 8; e++)
                acc[a][b][e] = 0.0f;
    for (q = (int64_t)split * PL + pl; c0 < P->G && pl < PL && q < P->witems;
         q += (int64_t)gridDim.y * PL) {
        int wt, hc, pn, k, sb = 0, ds = 0;
        unsigned cmask = 0, omask = 0;
        float o[3][4][8]; /* d_out rows k, k - 1, k - 2 of the item, as fp32 */
        if (P->witems <= 0x7fffffffLL) {
            unsigned u = (unsigned)q;
            wt = (int)(u % (unsigned)P->wts);
            u /= (unsigned)P->wts;
            hc = (int)(u % (unsigned)P->hchunks);
            pn = (int)(u / (unsigned)P->hchunks);
        } else {
            int64_t u = q;
            wt = (int)(u % P->wts);
            u /= P->wts;
            hc = (int)(u % P->hchunks);
            pn = (int)(u / P->hchunks);
        }
        {
            const int n = pn / P->out_sp[0], d = pn - n * P->out_sp[0];
            const int h0 = hc * P->rh, nrow = OH - h0 < P->rh ? OH - h0 : P->rh;
            const int M = (nrow - 1) * S + 3, r0 = h0 * S - P->pad[1];
            const int wo0 = wt * TW, iw0 = wo0 * S - P->pad[2];
            /* element offsets of (row r0 / h0, column iw0 / wo0, channel c0) of the plane */
            const int64_t ib = (int64_t)n * P->si.n + (int64_t)d * P->si.s[0] +
                               (int64_t)r0 * P->si.s[1] + (int64_t)iw0 * P->si.s[2] + c0;
            const int64_t ob = (int64_t)n * P->so.n + (int64_t)d * P->so.s[0] +
                               (int64_t)h0 * P->so.s[1] + (int64_t)wo0 * P->so.s[2] + c0;
            /* their byte addresses (unsigned arithmetic: with pads, ib may lie outside the
             * tensor) */
            const uintptr_t ia = (uintptr_t)in + (uintptr_t)(ib * es);
            const uintptr_t oa = (uintptr_t)dout + (uintptr_t)(ob * es);
#pragma unroll
            for (i = 0; i < SPAN; i++)
                cmask |= (unsigned)((unsigned)(iw0 + i) < (unsigned)W) << i;
#pragma unroll
            for (i = 0; i < TW; i++)
                omask |= (unsigned)(wo0 + i < OW) << i;
#pragma unroll
            for (a = 0; a < 3; a++)
#pragma unroll
                for (b = 0; b < 4; b++)
#pragma unroll
                    for (e = 0; e < 8; e++)
                        o[a][b][e] = 0.0f;
            /* prologue: copy groups 0 .. PD (window rows 0 .. 2 + PD * S sit in slots of
             * their own number, d_out row k in slot k) */
#pragma unroll
            for (k = 0; k <= PD; k++) {
                const int m0 = k == 0 ? 0 : 3 + (k - 1) * S, m1 = 3 + k * S;
                int m;
#pragma unroll
                for (m = m0; m < m1; m++)
                    if (m < M)
                        gconv_impl_bww_dwr_row(rt + m * SPAN * nth * VB, nth, in,
                                               ia + (uintptr_t)m * irs, ics,
                                               (unsigned)(r0 + m) < (unsigned)H, cmask, SPAN,
                                               GCONV_IMPL_BWW_DWR_CA, VB);
                if (k < nrow)
                    gconv_impl_bww_dwr_row(dr + k * TW * nth * VB, nth, dout,
                                           oa + (uintptr_t)k * ors, ocs, 1, omask, TW, 0, VB);
                else
                    gconv_impl_bww_dwr_zero(dr + k * TW * nth * VB, nth, TW, VB);
                gconv_impl_cp_commit();
            }
            /* step k (rows past the item: the last 2 / S steps only finish its input rows):
             * d_out row k enters the window o (o[d] = d_out row k - d, zeros outside the
             * item), then window rows m = k * S + i, i < S, meet every d_out row of the window
             * they feed (m = (k - d) * S + ky) and die */
            /* three steps unrolled: the window o's rows then change roles by renaming, not by
             * 32 register moves a step (with the copies' addresses stepped in bytes, 416 ->
             * 343 SASS instructions a stride-1 fp16 step; H200, bench/NOTES.md session 33) */
#pragma unroll 3
            for (k = 0; k < nrow + 2 / S; k++) {
                /* groups 0 .. k have landed; k + 1 .. k + PD may still fly */
                gconv_impl_cp_wait(PD);
#pragma unroll
                for (a = 2; a > 0; a--)
#pragma unroll
                    for (b = 0; b < TW; b++)
#pragma unroll
                        for (e = 0; e < 8; e++)
                            o[a][b][e] = o[a - 1][b][e];
#pragma unroll
                for (b = 0; b < TW; b++) {
                    const gconv_impl_igemm_u4 v =
                        gconv_impl_bww_dwr_ld(dr + (ds * TW + b) * nth * VB, VB);
#pragma unroll
                    for (e = 0; e < 8; e++)
                        o[0][b][e] = e < VEC ? gconv_impl_igemm_u4_elem(v, e, dt) : 0.0f;
                }
#pragma unroll
                for (i = 0; i < S; i++) {
                    const int slot = sb + i < NR ? sb + i : sb + i - NR;
                    const unsigned char *rp = rt + slot * SPAN * nth * VB;
                    int j;
                    if (k * S + i >= M)
                        break; /* never copied: the slot holds an older row */
#pragma unroll
                    for (j = 0; j < SPAN; j++) {
                        const gconv_impl_igemm_u4 v = gconv_impl_bww_dwr_ld(rp + j * nth * VB, VB);
#pragma unroll
                        for (e = 0; e < 8; e++)
                            if (e < VEC) {
                                const float x = gconv_impl_igemm_u4_elem(v, e, dt);
#pragma unroll
                                for (a = i; a < 3; a += S) {
                                    /* tap row a: d_out row k - (a - i) / S */
#pragma unroll
                                    for (b = 0; b < 3; b++) {
                                        /* column j meets tap b of output column (j - b) / S */
                                        const int c = j - b;
                                        if (c >= 0 && c % S == 0 && c / S < TW)
                                            acc[a][b][e] = fmaf(x, o[(a - i) / S][c / S][e],
                                                                acc[a][b][e]);
                                    }
                                }
                            }
                    }
                }
                /* group k + PD + 1: window rows 3 + (k + PD) * S + i go where rows k * S + i
                 * (dead now) were, slots sb + i; d_out row k + PD + 1 where row k was */
                {
                    const int kn = k + PD + 1, mn = 3 + (k + PD) * S;
#pragma unroll
                    for (i = 0; i < S; i++) {
                        const int slot = sb + i < NR ? sb + i : sb + i - NR;
                        if (mn + i < M)
                            gconv_impl_bww_dwr_row(rt + slot * SPAN * nth * VB, nth, in,
                                                   ia + (uintptr_t)(mn + i) * irs, ics,
                                                   (unsigned)(r0 + mn + i) < (unsigned)H, cmask,
                                                   SPAN, GCONV_IMPL_BWW_DWR_CA, VB);
                    }
                    if (kn < nrow)
                        gconv_impl_bww_dwr_row(dr + ds * TW * nth * VB, nth, dout,
                                               oa + (uintptr_t)kn * ors, ocs, 1, omask, TW, 0,
                                               VB);
                    else if (kn < nrow + 2 / S)
                        gconv_impl_bww_dwr_zero(dr + ds * TW * nth * VB, nth, TW, VB);
                    gconv_impl_cp_commit();
                }
                sb = sb + S < NR ? sb + S : sb + S - NR;
                ds = ds + 1 == ND ? 0 : ds + 1;
            }
        }
    }
    gconv_impl_cp_wait(0);
    __syncthreads(); /* every thread is done with its ring: reuse the memory for the sums */
#pragma unroll
    for (a = 0; a < 9; a++)
#pragma unroll
        for (e = 0; e < 8; e++)
            if (e < VEC)
                red[(tid * 9 + a) * VEC + e] = acc[a / 3][a % 3][e];
    __syncthreads();
    /* i = (cl * 9 + tap) * VEC + e; lane pl's value at red[pl * CL * 9 * VEC + i] */
    for (i = tid; i < CL * 9 * VEC; i += nth) {
        const int lane = i / (9 * VEC), r = i - lane * 9 * VEC;
        const int g = ((int)blockIdx.x * CL + lane) * VEC + r % VEC;
        float v = 0.0f;
        int p;
        for (p = 0; p < PL; p++)
            v += red[p * CL * 9 * VEC + i];
        if (g < P->G)
            gconv_impl_bww_emit(P, split, (int64_t)g, r / VEC, v);
    }
}

/* n (4 or 8, a constant) consecutive elements of type dt at element offset off, with 8- or
 * 16-byte vector loads (the caller guarantees off * esize is a multiple of n * esize and the
 * pointer 16-byte aligned), widened into v[0..n-1]. */
static __device__ __forceinline__ void gconv_impl_bww_ld_run(gconv_dtype dt, const void *p,
                                                             int64_t off, int n, float *v)
{
    int e;
    if (dt == GCONV_F32) {
        const float4 *q = (const float4 *)((const float *)p + off);
        const float4 a = q[0];
        v[0] = a.x, v[1] = a.y, v[2] = a.z, v[3] = a.w;
        if (n == 8) {
            const float4 b = q[1];
            v[4] = b.x, v[5] = b.y, v[6] = b.z, v[7] = b.w;
        }
        return;
    }
    {
        unsigned wd[4];
        const unsigned short *q = (const unsigned short *)p + off;
        if (n == 8) {
            const uint4 a = *(const uint4 *)q;
            wd[0] = a.x, wd[1] = a.y, wd[2] = a.z, wd[3] = a.w;
        } else {
            const uint2 a = *(const uint2 *)q;
            wd[0] = a.x, wd[1] = a.y, wd[2] = 0u, wd[3] = 0u;
        }
#pragma unroll
        for (e = 0; e < 8; e++)
            if (e < n) {
                const unsigned h = (wd[e >> 1] >> ((e & 1) * 16)) & 0xffffu;
                if (dt == GCONV_F16) {
                    gconv_f16 x;
                    x.bits = (uint16_t)h;
                    v[e] = gconv_impl_to_float_f16(x);
                } else {
                    v[e] = __uint_as_float(h << 16);
                }
            }
    }
}

/* ---- FEWC kernel (C, K <= 16 per group, NHWGC) -----------------------------------------------
 * Work item it = ((q * taps + tap) * G + g): group g, filter tap `tap`, output chunk q, which
 * covers k in [k0, k0 + FK) and c in [c0, c0 + FC) (FK, FC compile-time, 4 or 8; the last
 * chunk is partial). A thread owns one work item and FK x FC fp32 accumulators; per pixel it
 * reads FK values of d_out and FC values of the input at its tap (8- or 16-byte vectors when
 * P->fvec) and adds their outer product. Block = 32 consecutive work items (lanes: consecutive
 * groups, whose channels are neighbours in NHWGC) x blockDim.x / 32 pixel lanes (warps), each
 * walking a contiguous run of the split's pixels (blockIdx.y) with an incremental counter.
 * The block sums its warps in shared memory in warp order (deterministic), one k per round. */
static __device__ __forceinline__ void gconv_impl_bww_few_body(const gconv_impl_bww_params *P,
                                                               const gconv_dtype dt,
                                                               const int FK, const int FC)
{
    __shared__ float red[8 * 8 * 32];
    const int tid = (int)threadIdx.x, lane = tid % 32, pl = tid / 32, PL = (int)blockDim.x / 32;
    const int64_t items = (int64_t)P->G * P->taps * P->fchunks;
    const int64_t item = (int64_t)blockIdx.x * 32 + lane;
    const int active = item < items;
    const int kch = (P->K + FK - 1) / FK;
    const int split = (int)blockIdx.y;
    const int64_t rb = (int64_t)split * P->chunk;
    const int64_t re = rb + P->chunk < P->R ? rb + P->chunk : P->R;
    const int64_t len = (re - rb + PL - 1) / PL;
    const int64_t r0 = rb + (int64_t)pl * len;
    const int64_t r1 = r0 + len < re ? r0 + len : re;
    float acc[8][8];
    int g = 0, tap = 0, k0 = 0, c0 = 0, nk = 0, nc = 0, oz = 0, oy = 0, ox = 0;
    int a, b, i;
    if (active) {
        const int64_t rest = item / P->G;
        const int q = (int)(rest / P->taps);
        g = (int)(item - rest * P->G);
        tap = (int)(rest - (int64_t)q * P->taps);
        k0 = (q % kch) * FK, c0 = (q / kch) * FC;
        nk = P->K - k0 < FK ? P->K - k0 : FK;
        nc = P->C - c0 < FC ? P->C - c0 : FC;
        ox = (tap % P->flt[2]) * P->dil[2] - P->pad[2];
        oy = ((tap / P->flt[2]) % P->flt[1]) * P->dil[1] - P->pad[1];
        oz = (tap / (P->flt[2] * P->flt[1])) * P->dil[0] - P->pad[0];
    }
#pragma unroll
    for (a = 0; a < 8; a++)
#pragma unroll
        for (b = 0; b < 8; b++)
            acc[a][b] = 0.0f;
    if (active && r0 < r1) {
        int n, d, h, w;
        int64_t r;
        gconv_impl_bww_pix(P, r0, &n, &d, &h, &w);
        for (r = r0; r < r1; r++) {
            const int id = d * P->str[0] + oz, ih = h * P->str[1] + oy, iw = w * P->str[2] + ox;
            if ((unsigned)id < (unsigned)P->in_sp[0] && (unsigned)ih < (unsigned)P->in_sp[1] &&
                (unsigned)iw < (unsigned)P->in_sp[2]) {
                float o[8], x[8];
                const int64_t ob = (int64_t)g * P->so.g + (int64_t)n * P->so.n +
                                   (int64_t)d * P->so.s[0] + (int64_t)h * P->so.s[1] +
                                   (int64_t)w * P->so.s[2] + k0;
                const int64_t ib = (int64_t)g * P->si.g + (int64_t)n * P->si.n +
                                   (int64_t)id * P->si.s[0] + (int64_t)ih * P->si.s[1] +
                                   (int64_t)iw * P->si.s[2] + c0;
                if (P->fvec) {
                    gconv_impl_bww_ld_run(dt, P->dout, ob, FK, o);
                    gconv_impl_bww_ld_run(dt, P->in, ib, FC, x);
                } else {
#pragma unroll
                    for (a = 0; a < 8; a++)
                        if (a < FK)
                            o[a] = a < nk ? gconv_impl_dev_load(dt, P->dout, ob + a) : 0.0f;
#pragma unroll
                    for (b = 0; b < 8; b++)
                        if (b < FC)
                            x[b] = b < nc ? gconv_impl_dev_load(dt, P->in, ib + b) : 0.0f;
                }
#pragma unroll
                for (a = 0; a < 8; a++)
#pragma unroll
                    for (b = 0; b < 8; b++)
                        if (a < FK && b < FC)
                            acc[a][b] += o[a] * x[b];
            }
            gconv_impl_bww_pix_next(P, &n, &d, &h, &w);
        }
    }
    /* fixed-order block reduction, one k (row a) per round: red[pl][b][lane] */
#pragma unroll
    for (a = 0; a < 8; a++)
        if (a < FK) {
#pragma unroll
            for (b = 0; b < 8; b++)
                if (b < FC)
                    red[(pl * FC + b) * 32 + lane] = acc[a][b];
            __syncthreads();
            for (i = tid; i < FC * 32; i += (int)blockDim.x) {
                const int bb = i / 32, ln = i % 32;
                const int64_t it = (int64_t)blockIdx.x * 32 + ln;
                float v = 0.0f;
                int q;
                for (q = 0; q < PL; q++)
                    v += red[(q * FC + bb) * 32 + ln];
                if (it < items) {
                    const int64_t rest = it / P->G;
                    const int qq = (int)(rest / P->taps);
                    const int gg = (int)(it - rest * P->G), tt = (int)(rest - (int64_t)qq * P->taps);
                    const int kk = (qq % kch) * FK + a, cc = (qq / kch) * FC + bb;
                    if (kk < P->K && cc < P->C)
                        gconv_impl_bww_emit(P, split, (int64_t)gg * P->K + kk, tt * P->C + cc, v);
                }
            }
            __syncthreads(); /* red[] is rewritten by the next round */
        }
}

/* ---- FEWC4T kernel (C, K <= 4 per group, at most 9 taps, NHWGC) -------------------------------
 * As FEWC with FK = FC = 4, but a thread owns all taps of its (group, chunk) work item, so the
 * pixel walk, the d_out vector and the bounds arithmetic are shared by the 9 * 16 accumulators,
 * and a tap costs one input load, its conversion and 16 FMAs. Work item it = q * G + g; block
 * = 32 items (lanes) x blockDim.x / 32 pixel lanes (warps). */
static __device__ __forceinline__ void gconv_impl_bww_few4t_body(const gconv_impl_bww_params *P,
                                                                 const gconv_dtype dt)
{
    __shared__ float red[8 * 4 * 32];
    const int tid = (int)threadIdx.x, lane = tid % 32, pl = tid / 32, PL = (int)blockDim.x / 32;
    const int64_t items = (int64_t)P->G * P->fchunks;
    const int64_t item = (int64_t)blockIdx.x * 32 + lane;
    const int active = item < items;
    const int kch = (P->K + 3) / 4;
    const int split = (int)blockIdx.y;
    const int64_t rb = (int64_t)split * P->chunk;
    const int64_t re = rb + P->chunk < P->R ? rb + P->chunk : P->R;
    const int64_t len = (re - rb + PL - 1) / PL;
    const int64_t r0 = rb + (int64_t)pl * len;
    const int64_t r1 = r0 + len < re ? r0 + len : re;
    float acc[9][4][4];
    int tz[9], ty[9], tx[9];
    int toff[9]; /* the plan checks that the filter's span fits in int */
    int g = 0, k0 = 0, c0 = 0, nk = 0, nc = 0;
    int a, b, t, i;
    if (active) {
        const int q = (int)(item / P->G);
        g = (int)(item - (int64_t)q * P->G);
        k0 = (q % kch) * 4, c0 = (q / kch) * 4;
        nk = P->K - k0 < 4 ? P->K - k0 : 4;
        nc = P->C - c0 < 4 ? P->C - c0 : 4;
    }
#pragma unroll
    for (t = 0; t < 9; t++) {
        tx[t] = (t % P->flt[2]) * P->dil[2];
        ty[t] = ((t / P->flt[2]) % P->flt[1]) * P->dil[1];
        tz[t] = (t / (P->flt[2] * P->flt[1])) * P->dil[0];
        toff[t] = (int)((int64_t)tz[t] * P->si.s[0] + (int64_t)ty[t] * P->si.s[1] +
                        (int64_t)tx[t] * P->si.s[2]);
#pragma unroll
        for (a = 0; a < 4; a++)
#pragma unroll
            for (b = 0; b < 4; b++)
                acc[t][a][b] = 0.0f;
    }
    if (active && r0 < r1) {
        int n, d, h, w;
        int64_t r;
        gconv_impl_bww_pix(P, r0, &n, &d, &h, &w);
        for (r = r0; r < r1; r++) {
            const int id0 = d * P->str[0] - P->pad[0], ih0 = h * P->str[1] - P->pad[1];
            const int iw0 = w * P->str[2] - P->pad[2];
            const int64_t ob = (int64_t)g * P->so.g + (int64_t)n * P->so.n +
                               (int64_t)d * P->so.s[0] + (int64_t)h * P->so.s[1] +
                               (int64_t)w * P->so.s[2] + k0;
            const int64_t ib = (int64_t)g * P->si.g + (int64_t)n * P->si.n +
                               (int64_t)id0 * P->si.s[0] + (int64_t)ih0 * P->si.s[1] +
                               (int64_t)iw0 * P->si.s[2] + c0;
            float o[4];
            if (P->fvec) {
                gconv_impl_bww_ld_run(dt, P->dout, ob, 4, o);
            } else {
#pragma unroll
                for (a = 0; a < 4; a++)
                    o[a] = a < nk ? gconv_impl_dev_load(dt, P->dout, ob + a) : 0.0f;
            }
#pragma unroll
            for (t = 0; t < 9; t++)
                if (t < P->taps && (unsigned)(id0 + tz[t]) < (unsigned)P->in_sp[0] &&
                    (unsigned)(ih0 + ty[t]) < (unsigned)P->in_sp[1] &&
                    (unsigned)(iw0 + tx[t]) < (unsigned)P->in_sp[2]) {
                    float x[4];
                    if (P->fvec) {
                        gconv_impl_bww_ld_run(dt, P->in, ib + toff[t], 4, x);
                    } else {
#pragma unroll
                        for (b = 0; b < 4; b++)
                            x[b] = b < nc ? gconv_impl_dev_load(dt, P->in, ib + toff[t] + b) : 0.0f;
                    }
#pragma unroll
                    for (a = 0; a < 4; a++)
#pragma unroll
                        for (b = 0; b < 4; b++)
                            acc[t][a][b] += o[a] * x[b];
                }
            gconv_impl_bww_pix_next(P, &n, &d, &h, &w);
        }
    }
    /* fixed-order block reduction, one (tap, k) per round: red[pl][b][lane] */
#pragma unroll
    for (t = 0; t < 9; t++)
        if (t < P->taps) {
#pragma unroll
            for (a = 0; a < 4; a++) {
#pragma unroll
                for (b = 0; b < 4; b++)
                    red[(pl * 4 + b) * 32 + lane] = acc[t][a][b];
                __syncthreads();
                for (i = tid; i < 4 * 32; i += (int)blockDim.x) {
                    const int bb = i / 32, ln = i % 32;
                    const int64_t it = (int64_t)blockIdx.x * 32 + ln;
                    float v = 0.0f;
                    int q;
                    for (q = 0; q < PL; q++)
                        v += red[(q * 4 + bb) * 32 + ln];
                    if (it < items) {
                        const int qq = (int)(it / P->G), gg = (int)(it - (int64_t)qq * P->G);
                        const int kk = (qq % kch) * 4 + a, cc = (qq / kch) * 4 + bb;
                        if (kk < P->K && cc < P->C)
                            gconv_impl_bww_emit(P, split, (int64_t)gg * P->K + kk,
                                                t * P->C + cc, v);
                    }
                }
                __syncthreads(); /* red[] is rewritten by the next round */
            }
        }
}

/* ---- BWH kernel: halo tiles on tensor cores (CUDA sm_80+, fp16 / bf16, NHWGC) ----------------
 * For few channels per group (C = K in {8, 16, 32}: ResNeXt), stride 1, 1D / 2D, at most 10
 * taps. The forward halo kernel's geometry (gconv/igemm_halo.h) read the other way round: a work
 * unit is R output rows of one image for a chunk of GB = 64 / C groups; shared memory holds the
 * unit's input rows with their halo (flattened to Wp = OW + (X - 1) * dw columns, so tap
 * (ty, tx) of virtual pixel q = r * Wp + c is halo pixel q + ty * dh * Wp + tx * dw) and its
 * d_out rows as the same virtual pixels (columns c >= OW and rows past the image zero-filled, so
 * they add nothing). Per group the GEMM is
 *     d_wei[k][j = tap * C + c] = sum over q of d_out[q][k] * halo[q + toff(tap)][c],
 * M = j (taps * C rows, in d_wei's own order), N = k, reduction over q. A (16 rows j x 16
 * pixels) is one ldmatrix.x4.trans straight from the halo, each lane addressing its pixel at
 * its rows' tap (8 rows j share a tap since C >= 8); B (16 pixels x 8 k) one x2.trans of d_out.
 * The accumulators live across units: warp w owns group w / WPG (WPG = C / 8 warps per group)
 * and MTW = 5 consecutive m-tiles of it (5 x 16 rows: 9 taps x C over WPG warps, a little
 * over), all N = K columns. For C = K = 32 a warp takes MTW = GCONV_IMPL_BWH_MTW32 = 3
 * m-tiles x all 4 n-tiles (48 accumulators; 3x3: 6 warps a group, 12 a block of two groups):
 * per k-step 3 A and 2 B loads for 12 mma, where the kernel before it (two warps per range of
 * 5 m-tiles, each with 2 n-tiles) loaded 6 for 10 and was bound by those loads (H100, ResNeXt
 * 1024@7: 21.9-22.2 -> 18.9-19.2 us; 8 warps of 5 x 4 held 80 accumulators and spilled). The
 * grid is persistent (units in order chunk, image, band: each
 * block's range crosses few chunks); at the end of its range or of a chunk a block hands its
 * sums to gconv_impl_bww_emit as split "slab" = its rank among the blocks that share the chunk
 * (deterministic: each block's order is fixed, slabs are summed in order), the last such block
 * zero-filling the slabs no block of that chunk reached. Halo and d_out arrive in a ring of S
 * buffers (2; GCONV_IMPL_BWH_S32 for C = 32): the next S - 1 units' copies run under this
 * unit's math. On sm_90a each unit's two copies are tiled copy-engine copies issued by one
 * thread, completing an mbarrier per buffer (gconv_impl_bwh_tma_setup, gconv_impl_bwh_tfill;
 * H100, ResNeXt 128@56 / 1024@7: 59.6-60.5 / 22.9-23.4 us with cp.async, 57.2-57.8 /
 * 21.6-21.9 with them; bench/NOTES.md); elsewhere, and where the tensors are not packed, the
 * first 256 threads issue cp.async through two pixel tables. */

#define GCONV_IMPL_BWH_MTW 5           /* m-tiles per warp */
#define GCONV_IMPL_BWH_MAX_SMEM (110 * 1024)
/* the C = 32 kernel's most (one block per SM; the cluster form's tiles included) */
#define GCONV_IMPL_BWH4_MAX_SMEM (160 * 1024)
#define GCONV_IMPL_BWH_CL 2 /* blocks of a cluster in the cluster form's pairs */
#define GCONV_IMPL_BWH_CLMAX 8 /* most blocks of a cluster (the portable limit) */
/* the whole-chunk form (a chunk's blocks one cluster, final values) is taken while its blocks
 * have at most this many units more than the slab plan's (H200, 7x7 C = K = 32, G = 32: N = 16
 * with 2 -> 3 units a block gained 0.9 us, N = 32 with 4 -> 6 and N = 64 with 8 -> 11 lost) */
#ifndef GCONV_IMPL_BWH_CLW_MORE
#define GCONV_IMPL_BWH_CLW_MORE 1
#endif
/* static shared memory that only the cluster form's device code declares (its host-side sign):
 * 128 bytes aligned to 128, so that the dynamic shared memory after it (aligned to 16 only)
 * stays 128-byte aligned, as the kernel's copy-engine buffers need (a 16-byte mark put it 16
 * bytes off and the kernel fell back to cp.async: gconv_impl_bwh_body's tma test) */
#ifndef GCONV_IMPL_BWH_CL_MARK
#define GCONV_IMPL_BWH_CL_MARK 128
#endif
#define GCONV_IMPL_BWH_TARGET 128      /* virtual pixels per unit, at most */
#ifndef GCONV_IMPL_BWH_S32
#define GCONV_IMPL_BWH_S32 3           /* halo buffers of the C = K = 32 kernel */
#endif
#ifndef GCONV_IMPL_BWH_QPB
#define GCONV_IMPL_BWH_QPB 16          /* k-steps per n-tile a block runs, at least */
#endif

typedef struct gconv_impl_bwh_params {
    gconv_impl_bww_params w;   /* d_wei, workspace, reduction mode (splits = slabs) */
    gconv_impl_halo_params hi; /* input halo: geometry and the unit decomposition */
    gconv_impl_halo_params ho; /* d_out rows: the same units, no halo (its P is Q) */
    int wpg, mtg;              /* warps per group, m-tiles per group (ceil(taps * C / 16)) */
    int buf_bytes;             /* one buffer: halo (hi.P pixels) then d_out (Q pixels) */
    int hoff;                  /* bytes from a buffer's halo to its d_out rows */
    int pair;                  /* C = K = 4: hi / ho see pairs of groups as groups of 8 */
    int threads;               /* of a block: 256, or for C = 32 2 * wpg warps */
    int stg;                   /* C = 32 in clusters (gconv_impl_bwh_cl_plan): bytes from the
                                * shared memory's start to the tiles the blocks sum
                                * (gconv_impl_bwh_emit_cluster); 0: not in clusters */
    int cl;                    /* blocks of a cluster there (2 .. GCONV_IMPL_BWH_CLMAX; 0: none) */
} gconv_impl_bwh_params;

/* m-tiles per warp of the C = 32 wide-warp kernel (each warp all four n-tiles of K = 32) */
#define GCONV_IMPL_BWH_MTW32 3
/* its most threads: 2 groups x ceil(20 m-tiles (10 taps) / 3) warps */
#define GCONV_IMPL_BWH_W32_MAX (2 * 7 * 32)
/* Halo buffers of the kernel for C channels per kernel group (its S). */
static inline GCONV_HD int gconv_impl_bwh_bufs(int C)
{
    return C == 32 ? GCONV_IMPL_BWH_S32 : 2;
}

#if GCONV_IMPL_IGEMM_MATH == GCONV_IMPL_MATH_MMA
static __device__ __forceinline__ void gconv_impl_bwh_zero(float (*acc)[4][4], const int MTW)
{
    int i, nt, e;
#pragma unroll
    for (i = 0; i < MTW; i++)
#pragma unroll
        for (nt = 0; nt < 4; nt++)
#pragma unroll
            for (e = 0; e < 4; e++)
                acc[i][nt][e] = 0.0f;
}

/* Store a warp's accumulators at base (its lane's first element: row c2, column (mlo * 16 +
 * r8) of a [k][j] table with rows ld floats apart): accumulator (i, nt, e) is row k = nt * 8 +
 * c2 + (e & 1), column j = (mlo + i) * 16 + r8 + (e >> 1) * 8; columns past ncol and rows past
 * K are left out. Each value straight from its accumulator (a select between sums and zeros
 * made every store wait for the previous one to read its register), through one pointer per
 * row (an address formed per store made each store wait for the previous one to read its
 * address registers). */
static __device__ __forceinline__ void gconv_impl_bwh_put(float *base, int64_t ld,
                                                          float (*acc)[4][4], int mlo, int r8,
                                                          int c2, int ncol, int K, const int NT,
                                                          const int MTW)
{
    float *rows[8];
    int i, nt, e;
#pragma unroll
    for (nt = 0; nt < NT; nt++)
#pragma unroll
        for (e = 0; e < 2; e++)
            rows[nt * 2 + e] = base + (nt * 8 + e) * ld;
#pragma unroll
    for (i = 0; i < MTW; i++)
#pragma unroll
        for (e = 0; e < 4; e++) {
            if ((mlo + i) * 16 + r8 + (e >> 1) * 8 >= ncol)
                continue;
#pragma unroll
            for (nt = 0; nt < NT; nt++)
                if (nt * 8 + c2 + (e & 1) < K)
                    rows[nt * 2 + (e & 1)][i * 16 + (e >> 1) * 8] = acc[i][nt][e];
        }
}

/* Hand the accumulators of chunk `chunk` over as this block's slab; the chunk's last block
 * also zero-fills the slabs nobody wrote (slab mode only). Pair mode: the sums are the 8 x 8
 * blocks of a pair of groups (rows tap * 8 + c', columns k'); the diagonal 4 x 4 blocks
 * (c' / 4 = k' / 4) are group 2 g + k' / 4's, the rest (products across the two groups) are
 * dropped. The warp holds all NT n-tiles of the group. */
static __device__ __forceinline__ void gconv_impl_bwh_emit(const gconv_impl_bwh_params *P,
                                                           float (*acc)[4][4], int chunk, int gl,
                                                           int mlo, const int NT, const int MTW)
{
    const gconv_impl_halo_params *hi = &P->hi;
    const gconv_impl_bww_params *w = &P->w;
    const int lane = (int)threadIdx.x & 31, r8 = lane >> 2, c2 = (lane & 3) * 2;
    const int g = chunk * hi->GB + gl, ncol = hi->taps * hi->C, K = hi->K;
    int64_t b0, b1;
    int slab;
    gconv_impl_bww_chunk_blocks(chunk, (int64_t)hi->N * hi->bands, hi->blocks, hi->units, &b0,
                                &b1);
    slab = (int)blockIdx.x - (int)b0;
    int s, i, nt, e;
    if (g >= hi->G)
        return;
    if (w->mode == GCONV_IMPL_BWW_SLABS && !P->pair) {
        /* the plain slab stores, unrolled (the mode test hoisted: gconv_impl_bww_emit's
         * final-value path, inlined for every accumulator, made the kernel's loop body
         * thousands of instructions long). Accumulator (i, nt, e) is d_wei row
         * k = nt * 8 + c2 + (e & 1) of group g, column j = (mlo + i) * 16 + r8 +
         * (e >> 1) * 8: from one base pointer, NT * 2 row offsets and immediates (the index
         * maths of each store, with the pair-mode tests, was ~1,000 instructions a warp for
         * C = 32: more than its 8 units of math) */
        const int64_t nc = w->Ncol;
        float *base = w->ws + (int64_t)slab * w->total + ((int64_t)g * K + c2) * nc + mlo * 16 +
                      r8;
        gconv_impl_bwh_put(base, nc, acc, mlo, r8, c2, ncol, K, NT, MTW);
        if ((int)blockIdx.x == b1) {
            /* the chunk's last block: zeros in the slabs past its own (rare: rolled) */
            int x;
#pragma unroll 1
            for (s = slab + 1; s < w->splits; s++) {
                base += w->total;
#pragma unroll 1
                for (x = 0; x < MTW * NT * 4; x++) {
                    const int xi = x / (NT * 4), xn = (x >> 2) % NT, xe = x & 3;
                    if ((mlo + xi) * 16 + r8 + (xe >> 1) * 8 < ncol &&
                        xn * 8 + c2 + (xe & 1) < K)
                        base[(xn * 8 + (xe & 1)) * nc + xi * 16 + (xe >> 1) * 8] = 0.0f;
                }
            }
        }
    } else if (w->mode == GCONV_IMPL_BWW_SLABS) {
        /* pair mode's slabs: the diagonal blocks of each pair, per element */
        const int s1 = (int)blockIdx.x == b1 ? w->splits : slab + 1;
        for (s = slab; s < s1; s++) {
            float *ws = w->ws + (int64_t)s * w->total;
#pragma unroll
            for (i = 0; i < MTW; i++)
#pragma unroll
                for (nt = 0; nt < NT; nt++)
#pragma unroll
                    for (e = 0; e < 4; e++) {
                        const int j = (mlo + i) * 16 + r8 + (e >> 1) * 8;
                        const int k = nt * 8 + c2 + (e & 1);
                        if (j >= ncol || k >= K || ((j & 7) >> 2) != (k >> 2))
                            continue;
                        ws[((int64_t)(2 * g + (k >> 2)) * 4 + (k & 3)) * w->Ncol +
                           (j >> 3) * 4 + (j & 3)] = s == slab ? acc[i][nt][e] : 0.0f;
                    }
        }
    } else {
        /* one block per chunk (final values; the plan never asks for atomics):
         * gconv_impl_bww_emit from a rolled loop over a copy of the accumulators, so that its
         * code exists once */
        float t[GCONV_IMPL_BWH_MTW * 4 * 4];
        int x;
#pragma unroll
        for (i = 0; i < MTW; i++)
#pragma unroll
            for (nt = 0; nt < NT; nt++)
#pragma unroll
                for (e = 0; e < 4; e++)
                    t[(i * NT + nt) * 4 + e] = acc[i][nt][e];
#pragma unroll 1
        for (x = 0; x < MTW * NT * 4; x++) {
            const int xi = x / (NT * 4), xn = (x >> 2) % NT, xe = x & 3;
            const int j = (mlo + xi) * 16 + r8 + (xe >> 1) * 8;
            const int k = xn * 8 + c2 + (xe & 1);
            if (j >= ncol || k >= K || (P->pair && ((j & 7) >> 2) != (k >> 2)))
                continue;
            gconv_impl_bww_emit(w, slab,
                                P->pair ? (int64_t)(2 * g + (k >> 2)) * 4 + (k & 3)
                                        : (int64_t)g * K + k,
                                P->pair ? (j >> 3) * 4 + (j & 3) : j, t[x]);
        }
    }
}
#endif

#if defined(GCONV_PLATFORM_CUDA)
/* Blocks of the BWH kernels whose plan had the copy engine but whose dynamic shared memory was
 * not 128-byte aligned, so they fell back to cp.async (sm_90a passes; a test reads it: such a
 * fallback is silent otherwise, and a static shared-memory declaration once caused it). */
static __device__ unsigned gconv_impl_bwh_tma_missed;
#endif

#if GCONV_IMPL_IGEMM_MATH == GCONV_IMPL_MATH_MMA && GCONV_IMPL_HAS_WGMMA
/* *u = the float4 at shared-memory address off of the cluster's block b. */
static __device__ __forceinline__ void gconv_impl_bwh_ld_peer(unsigned off, int b, float4 *u)
{
    asm volatile("{\n.reg .b32 ra;\nmapa.shared::cluster.u32 ra, %4, %5;\n"
                 "ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [ra];\n}\n"
                 : "=f"(u->x), "=f"(u->y), "=f"(u->z), "=f"(u->w)
                 : "r"(off), "r"(b)
                 : "memory");
}

/* The C = 32 kernel's hand-over in the cluster form (P->stg set; gconv_impl_bwh_cl_plan): a
 * chunk's blocks (each with its own images) are clusters of GCONV_IMPL_BWH_CL, and a cluster
 * hands over one slab instead of one a block; or (WH, the kernel of its own that the plan's
 * whole chunks launch) a chunk's blocks are one cluster of P->cl and hand over the final values,
 * with no slab and no finalize (its own kernel: compiled into the pairs' kernel, that code
 * made the pairs ~0.4 us slower at ResNeXt 1024@7, H200). Every warp stages its
 * accumulators as rows k of its group's [K][ncol + 4] fp32 tile at smem + P->stg (the pitch of
 * ncol + 4 floats puts a store's 4 rows x 8 columns in 32 banks: ncol is a multiple of 32);
 * after a cluster barrier, block r of the cluster sums its 1 / P->cl of the chunk's quads over
 * the cluster's tiles through distributed shared memory, in rank order (the same bits on every
 * run), and stores them into the cluster's slab (16-byte stores; the workspace is 16-byte
 * aligned) or as final values (gconv_impl_bww_final4: the epilogue, the conversion); a second
 * cluster barrier keeps every block's tiles alive until the others have read them. With a slab
 * a block, all 128 blocks of ResNeXt 1024@7 wrote 9.4 MB of fp32 partials at once at their end
 * (~2.5 us of a ~12.5 us block) and the finalize read them back (~3.5 us); in pairs,
 * 18.7-18.8 -> 18.0-18.1 us (H200, bench/NOTES.md). Every thread of the block calls it. */
static __device__ __forceinline__ void gconv_impl_bwh_emit_cluster(const gconv_impl_bwh_params *P,
                                                                   float (*acc)[4][4],
                                                                   unsigned char *smem, int chunk,
                                                                   int gl, int mlo, const int NT,
                                                                   const int MTW, const int WH)
{
    const gconv_impl_halo_params *hi = &P->hi;
    const int lane = (int)threadIdx.x & 31, r8 = lane >> 2, c2 = (lane & 3) * 2;
    const int ncol = hi->taps * hi->C, K = hi->K, ld = ncol + 4, nq = ncol / 4;
    const int cl = WH ? P->cl : GCONV_IMPL_BWH_CL;
    const int ng = hi->G - chunk * hi->GB < hi->GB ? hi->G - chunk * hi->GB : hi->GB;
    const int tot = ng * K * nq, rank = (int)gconv_impl_cluster_rank();
    const int q0 = rank * tot / cl, q1 = (rank + 1) * tot / cl;
    float *stg = (float *)(smem + P->stg);
    const unsigned sa = gconv_impl_igemm_smem_addr(stg);
    const int64_t row0 = (int64_t)chunk * hi->GB * K; /* the chunk's first row of d_wei */
    int64_t b0, b1;
    float *ws = NULL;
    int q;
    gconv_impl_bww_chunk_blocks(chunk, (int64_t)hi->N * hi->bands, hi->blocks, hi->units, &b0,
                                &b1);
    /* the cluster's slab, at the chunk's first row */
    if (!WH)
        ws = P->w.ws + (int64_t)(((int)blockIdx.x - (int)b0) / GCONV_IMPL_BWH_CL) * P->w.total +
             row0 * P->w.Ncol;
    (void)b1;
    gconv_impl_bwh_put(stg + (gl * K + c2) * ld + mlo * 16 + r8, ld, acc, mlo, r8, c2, ncol, K,
                       NT, MTW); /* group gl's tile */
    /* the host's sign that this kernel's device code has the cluster form (gconv_impl_bwh_cl_plan:
     * static shared memory only this function declares) */
    __shared__ __align__(128) unsigned mark[GCONV_IMPL_BWH_CL_MARK / 4];
    if (threadIdx.x == 0)
        asm volatile("st.shared.u32 [%0], %1;\n" ::"r"(gconv_impl_igemm_smem_addr(mark)),
                     "r"(rank)
                     : "memory");
    gconv_impl_cluster_sync(); /* every block's tiles staged */
    for (q = q0 + (int)threadIdx.x; q < q1; q += (int)blockDim.x) {
        const int row = q / nq, j4 = q - row * nq; /* row: gg * K + k */
        const unsigned off = sa + (unsigned)((row * ld + j4 * 4) * 4);
        float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        int b0q, b;
        /* the cluster's blocks in rank order, four blocks' loads issued before their adds
         * (blocks past cl: none; for pairs cl is the literal GCONV_IMPL_BWH_CL) */
#pragma unroll
        for (b0q = 0; b0q < GCONV_IMPL_BWH_CLMAX; b0q += 4) {
            float4 u[4];
#pragma unroll
            for (b = 0; b < 4; b++)
                if (b0q + b < cl)
                    gconv_impl_bwh_ld_peer(off, b0q + b, &u[b]);
#pragma unroll
            for (b = 0; b < 4; b++)
                if (b0q + b < cl)
                    v.x += u[b].x, v.y += u[b].y, v.z += u[b].z, v.w += u[b].w;
        }
        if (WH)
            gconv_impl_bww_final4(&P->w, (row0 + row) * P->w.Ncol + j4 * 4, v);
        else /* pairs (the plan's only slab form) */
            *(float4 *)(ws + (int64_t)row * P->w.Ncol + j4 * 4) = v;
    }
    gconv_impl_cluster_sync(); /* the other blocks are done reading this block's tiles */
}
#endif

#if GCONV_IMPL_IGEMM_MATH == GCONV_IMPL_MATH_MMA
/* Issue the copies of unit (chunk, n, band) into the buffer at buf: its halo, then its d_out
 * rows. The copy loops stride by GCONV_IMPL_HALO_THREADS, so in a larger block only the first
 * 256 threads issue them (the others commit empty groups). */
static __device__ __forceinline__ void gconv_impl_bwh_fill(const gconv_impl_bwh_params *P,
                                                           unsigned char *buf, const int2 *pin,
                                                           const int2 *pout, int chunk, int n,
                                                           int band)
{
    const gconv_impl_halo_params *hi = &P->hi;
    int g0;
    const int gv = gconv_impl_halo_gv(hi, chunk, &g0);
    if ((int)threadIdx.x >= GCONV_IMPL_HALO_THREADS)
        return;
    gconv_impl_halo_fill(hi, buf, pin, n, band * hi->R, g0, gv, 0, 1);
    gconv_impl_halo_fill(&P->ho, buf + P->hoff, pout, n, band * hi->R, g0, gv,
                         0, 1);
}

#if GCONV_IMPL_HAS_WGMMA
/* The same unit's copies by the copy engine (P->hi.tma, one thread): the halo box of hi.tmap
 * at (channel g0 * C, column -pw, row band * R - ph, image n) and the d_out box of ho.tmap at
 * (g0 * K, 0, band * R, n), both completing the mbarrier at bar (initialised for two
 * arrivals: one arm per copy). The boxes are 72 channels wide (the chunk's 64, then the 8 of a
 * 144-byte pixel row's pad), so they land in the layout the cp.async path makes; pixels and
 * channels outside the tensors (pads, d_out columns OW .. Wp - 1, rows past the image, the
 * channels past the last group) arrive as the engine's zeros. */
static __device__ __forceinline__ void gconv_impl_bwh_tfill(const gconv_impl_bwh_params *P,
                                                            unsigned buf, unsigned bar, int chunk,
                                                            int n, int band)
{
    const gconv_impl_halo_params *hi = &P->hi;
    const int g0 = chunk * hi->GB, r0 = band * hi->R;
    gconv_impl_halo_tma(buf, &hi->tmap, bar, (unsigned)hi->tbytes, g0 * hi->C, -hi->pw,
                        r0 - hi->ph, n);
    gconv_impl_halo_tma(buf + (unsigned)P->hoff, &P->ho.tmap, bar, (unsigned)P->ho.tbytes,
                        g0 * hi->K, 0, r0, n);
}
#endif

/* Issue unit (chunk, n, band)'s copies into buffer b: by the copy engine (tma: thread 0,
 * completing mbarrier tbar + 8 b) or by cp.async (the caller commits the group). */
static __device__ __forceinline__ void gconv_impl_bwh_issue(const gconv_impl_bwh_params *P,
                                                            int tma, unsigned char *smem, int b,
                                                            unsigned tbar, const int2 *pin,
                                                            const int2 *pout, int chunk, int n,
                                                            int band)
{
    if (!tma)
        gconv_impl_bwh_fill(P, smem + b * P->buf_bytes, pin, pout, chunk, n, band);
#if GCONV_IMPL_HAS_WGMMA
    else if (threadIdx.x == 0)
        gconv_impl_bwh_tfill(P, gconv_impl_igemm_smem_addr(smem + b * P->buf_bytes),
                             tbar + 8u * (unsigned)b, chunk, n, band);
#else
    (void)tbar;
#endif
}

#endif

/* Literals: NT n-tiles per warp (1, 2, or 4 for C = K = 32), all of the group's; S halo
 * buffers (S - 1 units' copies in flight under the current unit's math); MTW m-tiles per warp;
 * WH 1: the cluster form's whole chunks (a kernel of its own, gconv_impl_bwh_emit_cluster).
 * The block has P->threads threads (GB * wpg warps). */
static __device__ __forceinline__ void gconv_impl_bwh_body(const gconv_impl_bwh_params *P,
                                                           gconv_dtype dt, const int NT,
                                                           const int S, const int MTW,
                                                           const int WH)
{
#if GCONV_IMPL_IGEMM_MATH == GCONV_IMPL_MATH_MMA
    GCONV_IMPL_DYN_SMEM(smem);
    const gconv_impl_halo_params *hi = &P->hi, *ho = &P->ho;
#if !GCONV_IMPL_HAS_WGMMA
    if (WH) /* the whole-chunk kernel exists only in sm_90a passes (the host never launches
             * this body: gconv_impl_bwh_cl_plan) */
        return;
#endif
    const int tid = (int)threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int nthr = (int)blockDim.x;
    const int Wp = hi->Wp, C = hi->C, bb = P->buf_bytes, hb = P->hoff;
    int2 *pin = (int2 *)(smem + S * bb); /* [hi.P] halo pixel: input offset, row */
    int2 *pout = pin + hi->P;            /* [Q] virtual pixel: d_out offset (-1 past OW), row */
    int u = (int)((int64_t)blockIdx.x * hi->units / hi->blocks);
    const int uend = (int)((int64_t)(blockIdx.x + 1) * hi->units / hi->blocks);
    const int gl = warp / P->wpg, mlo = (warp - gl * P->wpg) * MTW;
    const int qsteps = ho->P >> 4;
    int aoff[GCONV_IMPL_BWH_MTW], boff, i, nt, buf, chunk, n, band, fchunk, fn, fband;
    float acc[GCONV_IMPL_BWH_MTW][4][4];
    /* tma: every unit's copies by the copy engine (gconv_impl_bwh_tfill; the buffers 128-byte
     * aligned), its arrival on mbarrier tbar + 8 * buffer; else cp.async by the first 256
     * threads through the pixel tables */
#if GCONV_IMPL_HAS_WGMMA
    const int tma = hi->tma && (gconv_impl_igemm_smem_addr(smem) & 127u) == 0;
    const unsigned tbar = gconv_impl_igemm_smem_addr(smem + hi->tbar_off);
    unsigned tph = 0u; /* bit b: the phase parity tbar + 8 b completes next */
    if (hi->tma && !tma && tid == 0) /* planned but misaligned: counted for the tests */
        atomicAdd(&gconv_impl_bwh_tma_missed, 1u);
#else
    const int tma = 0;
    const unsigned tbar = 0u;
#endif
    if (u >= uend)
        return;
    if (tma) {
#if GCONV_IMPL_HAS_WGMMA
        /* the boxes cover a buffer's first (R + (Y - 1) dh) Wp halo pixels and R Wp d_out
         * pixels; the rest (the slack that the last m-tile's taps and the rounding of Q to
         * 16 read) stays zero from here: d_out zeros there make those products vanish */
        uint4 *z = (uint4 *)smem;
        for (i = tid; i < S * bb / 16; i += nthr)
            z[i] = make_uint4(0u, 0u, 0u, 0u);
        if (tid == 0) {
            for (i = 0; i < S; i++)
                gconv_impl_mbar_init(tbar + 8u * (unsigned)i, 2);
            asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
        }
        /* the zeros must be in before the copy engine writes the same bytes (async proxy) */
        asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
    } else {
        for (i = tid; i < hi->P; i += nthr) {
            const int hr = i / Wp, iw = i - hr * Wp - hi->pw;
            pin[i] = make_int2((unsigned)iw < (unsigned)hi->W ? hr * hi->in_h + iw * hi->in_w
                                                              : -1,
                               hr);
        }
        for (i = tid; i < ho->P; i += nthr) {
            const int r = i / Wp, c = i - r * Wp;
            /* -1 past OW and past the band's R rows (Q rounds R * Wp up to 16: those pixels
             * are the next band's and must add nothing here) */
            pout[i] = make_int2(c < hi->OW && r < hi->R ? r * ho->in_h + c * ho->in_w : -1, r);
        }
    }
    /* A rows of this lane (ldmatrix.x4.trans: matrix lane / 8 = (j half (lane / 8) % 2,
     * pixel half lane / 16), row lane % 8 of it = a pixel): m-tile mlo + i, rows
     * j0 = 16 (mlo + i) + 8 ((lane / 8) % 2) .. + 7 = tap j0 / C, channels j0 % C ..; rows past
     * taps * C read tap 0 (never emitted). B: pixel (lane % 8) + 8 ((lane / 8) % 2), channels
     * 8 (lane / 16) of the group's K (x2: lanes 0-15; x4 at n-tiles 0, 2). */
#pragma unroll
    for (i = 0; i < MTW; i++) {
        const int j0 = (mlo + i) * 16 + ((lane >> 3) & 1) * 8;
        const int ncol = hi->taps * C; /* rows j of the (paired) groups */
        const int tap = j0 < ncol ? j0 >> hi->lc : 0, c0 = j0 < ncol ? j0 & (C - 1) : 0;
        const int ty = tap / hi->X, tx = tap - ty * hi->X;
        aoff[i] = (ty * hi->dh * Wp + tx * hi->dw + (lane & 7) + (lane >> 4) * 8) *
                      GCONV_IMPL_HALO_PS + (gl * C + c0) * 2;
    }
    boff = ((lane & 7) + ((lane >> 3) & 1) * 8) * GCONV_IMPL_HALO_PS +
           (gl * ho->C + (lane >> 4) * 8) * 2;
    gconv_impl_bwh_zero(acc, MTW);
    __syncthreads(); /* the tables (tma: the zeros and the mbarriers), for the first copies */
    gconv_impl_halo_unit(hi, u, &chunk, &n, &band);
    /* the first S - 1 units' copies, one commit group each (empty past the range) */
    fchunk = chunk, fn = n, fband = band;
    for (i = 0; i < S - 1; i++) {
        if (u + i < uend) {
            gconv_impl_bwh_issue(P, tma, smem, i, tbar, pin, pout, fchunk, fn, fband);
            gconv_impl_halo_next(hi, &fchunk, &fn, &fband);
        }
        gconv_impl_igemm_cp_commit();
    }
    for (buf = 0; u < uend; u++, buf = buf + 1 == S ? 0 : buf + 1) {
        const unsigned sa = gconv_impl_igemm_smem_addr(smem + buf * bb);
        const unsigned sb = sa + (unsigned)hb;
        int nchunk = chunk, nn = n, nband = band, s;
        gconv_impl_halo_next(hi, &nchunk, &nn, &nband);
        /* this unit's copies are in (S - 2 later groups may still be in flight); every warp is
         * done with the previous unit, whose buffer unit u + S - 1's copies overwrite */
        if (tma) {
#if GCONV_IMPL_HAS_WGMMA
            gconv_impl_mbar_try_wait(tbar + 8u * (unsigned)buf, (tph >> buf) & 1u);
            tph ^= 1u << buf;
#endif
        } else {
            gconv_impl_igemm_cp_wait(S - 2);
        }
        __syncthreads();
        if (u + S - 1 < uend) {
            gconv_impl_bwh_issue(P, tma, smem, buf == 0 ? S - 1 : buf - 1, tbar, pin, pout,
                                 fchunk, fn, fband);
            gconv_impl_halo_next(hi, &fchunk, &fn, &fband);
        }
        gconv_impl_igemm_cp_commit();
        for (s = 0; s < qsteps; s++) {
            const unsigned so = (unsigned)(s * 16 * GCONV_IMPL_HALO_PS);
            unsigned b[4][2];
            if (NT == 1) {
                unsigned t2[2];
                gconv_impl_igemm_ldsm_x2_t(sb + boff + so, t2);
                b[0][0] = t2[0], b[0][1] = t2[1];
            } else {
#pragma unroll
                for (nt = 0; nt < NT; nt += 2) {
                    unsigned t4[4];
                    gconv_impl_igemm_ldsm_x4_t(sb + boff + so + nt * 16, t4);
                    b[nt][0] = t4[0], b[nt][1] = t4[1], b[nt + 1][0] = t4[2], b[nt + 1][1] = t4[3];
                }
            }
#pragma unroll
            for (i = 0; i < MTW; i++) {
                unsigned a[4];
                gconv_impl_igemm_ldsm_x4_t(sa + aoff[i] + so, a);
#pragma unroll
                for (nt = 0; nt < NT; nt++)
                    gconv_impl_halo_mma(acc[i][nt], a, b[nt], dt);
            }
        }
        if (u + 1 == uend || nchunk != chunk) {
#if GCONV_IMPL_HAS_WGMMA
            if (NT == 4 && (WH || P->stg)) /* the cluster form: a block's units one chunk's */
                gconv_impl_bwh_emit_cluster(P, acc, smem, chunk, gl, mlo, NT, MTW, WH);
            else
#endif
                gconv_impl_bwh_emit(P, acc, chunk, gl, mlo, NT, MTW);
            gconv_impl_bwh_zero(acc, MTW);
        }
        chunk = nchunk, n = nn, band = nband;
    }
    gconv_impl_igemm_cp_wait(0); /* only empty groups remain; none may outlive the block */
#else
    (void)P, (void)dt, (void)NT, (void)S, (void)MTW, (void)WH;
#endif
}

/* ---- host side ------------------------------------------------------------------------------- */

static inline gconv_status gconv_impl_bww_check(const gconv_problem *p,
                                                const gconv_bwd_weight_args *a, gconv_dtype dt,
                                                gconv_dtype tout, gconv_layout act,
                                                gconv_layout wei, char *why, size_t len)
{
    gconv_status s = gconv_problem_check(p, why, len);
    const size_t esz = gconv_dtype_size(dt), osz = gconv_dtype_size(tout);
    int64_t ncol;
    if (s != GCONV_OK)
        return s;
    if (gconv_layout_family(gconv_in_layout(p)) != act)
        return gconv_impl_fail(GCONV_ERR_LAYOUT, why, len,
                               "the input layout %s is not of this instantiation's %s family",
                               gconv_layout_name(gconv_in_layout(p)), gconv_layout_name(act));
    if (gconv_layout_family(gconv_out_layout(p)) != act)
        return gconv_impl_fail(GCONV_ERR_LAYOUT, why, len,
                               "the output-gradient layout %s is not of this instantiation's %s "
                               "family",
                               gconv_layout_name(gconv_out_layout(p)), gconv_layout_name(act));
    if (gconv_layout_family(gconv_wei_layout(p)) != wei)
        return gconv_impl_fail(GCONV_ERR_LAYOUT, why, len,
                               "the weight-gradient layout %s is not of this instantiation's %s "
                               "family",
                               gconv_layout_name(gconv_wei_layout(p)), gconv_layout_name(wei));
    ncol = (int64_t)p->C * gconv_filter_taps(p);
    if (ncol > 0x7fffffffLL - 1024 || p->K > 0x7fffffff - 1024)
        return gconv_impl_fail(GCONV_ERR_UNSUPPORTED, why, len,
                               "C * filter taps is %lld; the kernels need it below 2^31 - 1024",
                               (long long)ncol);
    if (!a)
        return GCONV_OK;
    if (!a->in || !a->d_out || !a->d_wei)
        return gconv_impl_fail(GCONV_ERR_NULL, why, len, "%s pointer is null",
                               !a->in ? "the input" : !a->d_out ? "the output-gradient"
                                                                : "the weight-gradient");
    if (((uintptr_t)a->in | (uintptr_t)a->d_out) % esz || (uintptr_t)a->d_wei % osz)
        return gconv_impl_fail(GCONV_ERR_ALIGNMENT, why, len,
                               "in and d_out must be aligned to their %d-byte elements, d_wei to "
                               "its %d-byte elements", (int)esz, (int)osz);
    if (a->split_k < 0 || a->split_k > GCONV_BWD_WEIGHT_MAX_SPLIT)
        return gconv_impl_fail(GCONV_ERR_ARGUMENT, why, len,
                               "split_k is %d; it must be 0 (automatic) or 1 .. %d", a->split_k,
                               GCONV_BWD_WEIGHT_MAX_SPLIT);
    if (a->algo < GCONV_BWD_WEIGHT_ALGO_AUTO || a->algo > GCONV_BWD_WEIGHT_ALGO_DIRECT)
        return gconv_impl_fail(GCONV_ERR_ARGUMENT, why, len, "algo is %d; it must be 0, 1 or 2",
                               a->algo);
    if (!(a->alpha - a->alpha == 0.0f) || !(a->beta - a->beta == 0.0f))
        return gconv_impl_fail(GCONV_ERR_ARGUMENT, why, len, "alpha and beta must be finite");
    return GCONV_OK;
}

/* Fill everything but the plan. */
static inline void gconv_impl_bww_fill(const gconv_problem *p, gconv_dtype dt, gconv_dtype tout,
                                       gconv_impl_bww_params *P)
{
    int i;
    memset(P, 0, sizeof *P);
    P->tin = dt, P->tout = tout;
    P->G = p->G, P->C = p->C, P->K = p->K;
    P->taps = (int)gconv_filter_taps(p);
    P->Ncol = p->C * P->taps;
    for (i = 0; i < 3; i++) {
        P->in_sp[i] = p->in[i];
        P->out_sp[i] = gconv_out_len(p, i);
        P->flt[i] = p->filter[i];
        P->str[i] = p->stride[i];
        P->dil[i] = p->dilation[i];
        P->pad[i] = p->pad_lo[i];
    }
    P->R = (int64_t)p->N * gconv_out_spatial(p);
    P->total = (int64_t)p->G * p->K * P->Ncol;
    P->si = gconv_in_strides(p);
    P->so = gconv_out_strides(p);
    P->sw = gconv_weight_strides(p);
    P->wflat = P->sw.c == 1 && P->sw.s[2] == P->C && P->sw.s[1] == (int64_t)P->flt[2] * P->C &&
               P->sw.s[0] == (int64_t)P->flt[1] * P->flt[2] * P->C && P->sw.k == P->Ncol &&
               P->sw.g == (int64_t)P->K * P->Ncol;
}

/* TC kernel tiles (gconv_impl_tile order: BM, BN, BK, WARPS_M, WARPS_N, STAGES; 256 threads).
 * Kind 0, sw = 0: M = K, N = C * taps, for K > 64 (a 256 x 128 tile, 64 x 64 per warp at one
 * block per SM, measured slower: bench/NOTES.md). Kinds 1-3, sw = 1: M = C * taps, N = K, for
 * K up to 64, 32, 16 (the narrow N tile wastes little of a small K). */
#define GCONV_IMPL_BWW_TC_TILE0 (128, 128, GCONV_IMPL_BWW_TC_BK, 2, 4, GCONV_IMPL_BWW_TC_ST)
#define GCONV_IMPL_BWW_TC_TILE1 (128, 64, GCONV_IMPL_BWW_TC_BK, 4, 2, GCONV_IMPL_BWW_TC_ST)
#define GCONV_IMPL_BWW_TC_TILE2 (128, 32, GCONV_IMPL_BWW_TC_BK, 4, 2, GCONV_IMPL_BWW_TC_ST)
#define GCONV_IMPL_BWW_TC_TILE3 (128, 16, GCONV_IMPL_BWW_TC_BK, 8, 1, GCONV_IMPL_BWW_TC_ST)
/* 0 turns the TC kernel off (the element- and vector-gather GEMM kernels then run). */
#ifndef GCONV_IMPL_BWW_TC_ENABLE
#define GCONV_IMPL_BWW_TC_ENABLE 1
#endif

/* The TC kernel's tile kind for p, or -1 when it cannot take p: CUDA, fp16 / bf16, input and
 * output gradient both NHWGC or both GNHWC with the N*output pixels in one stride (true of
 * these layouts; checked anyway), C a multiple of 8 (16-byte chunks) and K of 4 (8-byte
 * halves of chunks where K % 8 == 4), 16-byte aligned pointers (NULL: assumed aligned). */
static inline int gconv_impl_bww_tc_kind(const gconv_problem *p, gconv_dtype dt, const void *in,
                                         const void *dout)
{
#if defined(GCONV_PLATFORM_CUDA) && GCONV_IMPL_BWW_TC_ENABLE
    const gconv_layout fi = gconv_layout_family(gconv_in_layout(p));
    const gconv_layout fo = gconv_layout_family(gconv_out_layout(p));
    gconv_act_strides si, so;
    if (dt == GCONV_F32 || fi != fo || (fi != GCONV_NHWGC && fi != GCONV_GNHWC) || p->C % 8 ||
        p->K % 4 || ((uintptr_t)in | (uintptr_t)dout) % 16)
        return -1;
    si = gconv_in_strides(p), so = gconv_out_strides(p);
    if (si.c != 1 || so.c != 1 || so.s[1] != (int64_t)gconv_out_len(p, 2) * so.s[2] ||
        so.s[0] != (int64_t)gconv_out_len(p, 1) * so.s[1] ||
        so.n != (int64_t)gconv_out_len(p, 0) * so.s[0])
        return -1;
    return p->K > 64 ? 0 : p->K > 32 ? 1 : p->K > 16 ? 2 : 3;
#else
    (void)p, (void)dt, (void)in, (void)dout;
    return -1;
#endif
}

/* Which path the default instantiation takes (pointers may be NULL: then assumed aligned). */
static inline int gconv_impl_bww_path(const gconv_problem *p, gconv_dtype dt, const void *in,
                                      const void *dout)
{
    const int vec = 16 / (int)gconv_dtype_size(dt);
    const int nhwgc = gconv_layout_family(gconv_in_layout(p)) == GCONV_NHWGC &&
                      gconv_layout_family(gconv_out_layout(p)) == GCONV_NHWGC;
    if (!nhwgc)
        return GCONV_IMPL_BWW_PATH_GEMM;
    if (p->C == 1 && p->K == 1 && p->G % vec == 0 && ((uintptr_t)in | (uintptr_t)dout) % 16 == 0)
        return GCONV_IMPL_BWW_PATH_DW;
    if (p->C <= 8 && p->K <= 8 &&
        !(p->C == 8 && p->K == 8 && gconv_impl_bww_tc_kind(p, dt, in, dout) >= 0))
        return GCONV_IMPL_BWW_PATH_FEWC; /* C = K = 8 goes to the TC kernel where it can */
    return GCONV_IMPL_BWW_PATH_GEMM;
}

/* The path for a requested algo: -1 when the direct kernels are asked for a family they do not
 * serve. */
static inline int gconv_impl_bww_path_algo(const gconv_problem *p, gconv_dtype dt,
                                           const void *in, const void *dout, int algo)
{
    int path = gconv_impl_bww_path(p, dt, in, dout);
    if (algo == GCONV_BWD_WEIGHT_ALGO_GEMM)
        return GCONV_IMPL_BWW_PATH_GEMM;
    if (algo == GCONV_BWD_WEIGHT_ALGO_DIRECT) {
        if (gconv_layout_family(gconv_in_layout(p)) != GCONV_NHWGC ||
            gconv_layout_family(gconv_out_layout(p)) != GCONV_NHWGC)
            return -1;
        return path == GCONV_IMPL_BWW_PATH_DW ? path : GCONV_IMPL_BWW_PATH_FEWC;
    }
    return path;
}

/* Number of splits: the user's, capped at `most`, or enough blocks for about `want` waves
 * of the device while every split keeps at least `least` units of work. */
static inline int gconv_impl_bww_splits(int user, int64_t base_blocks, int64_t units, int least,
                                        int want_blocks)
{
    int64_t s;
    if (units < 1)
        units = 1;
    if (user > 0) {
        s = user;
    } else {
        s = (want_blocks + base_blocks - 1) / base_blocks;
        if (s > units / least)
            s = units / least;
    }
    if (s > units)
        s = units;
    if (s > GCONV_BWD_WEIGHT_MAX_SPLIT)
        s = GCONV_BWD_WEIGHT_MAX_SPLIT;
    return s < 1 ? 1 : (int)s;
}

/* The finalize's vector form for a slab plan over 8 slabs (whole quads only): 8 lanes a quad,
 * 32 from 32 slabs (gconv_impl_bww_finalize8_body), 128 from GCONV_IMPL_BWW_FIN128_FROM
 * (gconv_impl_bww_finalize128_body). */
static inline void gconv_impl_bww_fin_vec(gconv_impl_bww_params *P)
{
    if (P->mode == GCONV_IMPL_BWW_SLABS && P->splits > 8 && P->total % 4 == 0)
        P->fl = 8, P->fvl = P->splits >= GCONV_IMPL_BWW_FIN128_FROM ? 128
                            : P->splits >= 32                      ? 32
                                                                   : 8;
}

/* Reduction mode from the splits: direct stores for one split, else slabs (deterministic, or
 * asked for) or fp32 atomics; the finalize kernel's form (fl, fvl). */
static inline void gconv_impl_bww_set_mode(gconv_impl_bww_params *P, int slabs)
{
    P->mode = P->splits == 1 ? GCONV_IMPL_BWW_DIRECT
              : slabs        ? GCONV_IMPL_BWW_SLABS
                             : GCONV_IMPL_BWW_ATOMIC;
    P->fl = P->mode == GCONV_IMPL_BWW_SLABS && P->splits >= 32 ? 32 : 1;
    P->fvl = 8;
    /* from 32 slabs, where d_wei is whole quads: the vector form's 32 (or 128) lanes a quad
     * rather than the one-element form's 32 lanes an element, summed serially (every such slab
     * plan: DWR's depthwise ones, and DW / FEWC / GEMM / TC / BWS plans with 32 splits or
     * more); fewer slabs keep the one-element or four-element forms here (BWH / BWN take the
     * vector form from 9 slabs) */
    if (P->splits >= 32)
        gconv_impl_bww_fin_vec(P);
}

/* Whether the DWR kernel takes a depthwise problem: 3x3 filter, stride 1 or 2 on both axes,
 * no dilation, no depth axis (or a trivial one: filter 1, stride 1, no pads), any pads. */
static inline int gconv_impl_bww_dwr_ok(const gconv_impl_bww_params *P)
{
    return P->flt[0] == 1 && P->flt[1] == 3 && P->flt[2] == 3 && P->str[0] == 1 &&
           P->str[1] == P->str[2] && (P->str[1] == 1 || P->str[1] == 2) && P->dil[1] == 1 &&
           P->dil[2] == 1 && P->pad[0] == 0 && P->out_sp[0] == P->in_sp[0];
}

/* DWR plan: channel blocks as the DW kernel; pixel lanes to fill a block of at most 128
 * threads whose rings fit the shared memory; splits for one wave of resident blocks (or the
 * user's); rows per item (rh) from a score: balance of items over the wave's pixel lanes times
 * rh / (rh + PD + (3 - S) / S), the share of an item's time spent on its own rows rather than
 * on filling the ring (PD rows) and on halo rows. */
static inline void gconv_impl_bww_dwr_plan(gconv_impl_bww_params *P, int user_split, int sms)
{
    const int S = P->str[1], TW = gconv_impl_bww_dwr_tw(S);
    const int vb = gconv_impl_bww_dwr_vb(P->tin), minb = GCONV_IMPL_BWW_DWR_MINB(P->tin);
    const int vec = vb / (P->tin == GCONV_F32 ? 4 : 2), gv = P->G / vec;
    const int rb = gconv_impl_bww_dwr_vecs(S) * vb; /* ring bytes per thread */
    const int OH = P->out_sp[1];
    const int64_t planes = P->R / ((int64_t)OH * P->out_sp[2]);
    int nth = GCONV_IMPL_SMEM_MAX / rb, bps, h, wave;
    int64_t lanes, items;
    double best = -1.0;
    P->dwr = S;
    P->cb = (gv + 31) / 32;
    P->cl = (gv + P->cb - 1) / P->cb;
    if (nth > GCONV_IMPL_BWW_DWR_THREADS)
        nth = GCONV_IMPL_BWW_DWR_THREADS;
    P->dwpl = nth / P->cl > 1 ? nth / P->cl : 1;
    nth = P->dwpl * P->cl;
    /* resident blocks per SM by shared memory (1 KB reserved per block) and threads */
    bps = (GCONV_IMPL_SMEM_MAX + 1024) / (nth * rb + 1024);
    if (bps > minb) /* registers: the kernel is capped for MINB blocks */
        bps = minb;
    if (bps < 1)
        bps = 1;
    wave = (sms * bps + P->cb - 1) / P->cb;
    if (user_split > 0)
        wave = user_split;
    lanes = (int64_t)wave * P->dwpl;
    P->wts = (P->out_sp[2] + TW - 1) / TW;
    P->rh = OH, P->hchunks = 1;
    for (h = 1; h <= OH; h++) {
        const int rh = (OH + h - 1) / h;
        int64_t rounds;
        double score;
        if ((OH + rh - 1) / rh != h)
            continue; /* the same rh as a smaller h */
        items = planes * h * P->wts;
        rounds = (items + lanes - 1) / lanes;
        score = (double)items / ((double)rounds * (double)lanes) * rh /
                (rh + GCONV_IMPL_BWW_DWR_PD + (3.0 - S) / S);
        if (score > best + 1e-9)
            best = score, P->rh = rh, P->hchunks = h;
    }
    P->witems = planes * P->hchunks * P->wts;
    items = (P->witems + P->dwpl - 1) / P->dwpl;
    P->splits = (int)(wave < items ? wave : items);
    if (P->splits > GCONV_BWD_WEIGHT_MAX_SPLIT)
        P->splits = GCONV_BWD_WEIGHT_MAX_SPLIT;
    if (P->splits < 1)
        P->splits = 1;
    P->chunk = (P->R + P->splits - 1) / P->splits; /* not used by the kernel */
}

/* Plan: path, tile (GEMM: 0 = 128x128x32, 1 = 64x64x32, or the pinned tile's bm/bn/bk when
 * pinned), splits, mode, chunk. tbm, tbn, tbk: the GEMM tile to plan for. */
static inline void gconv_impl_bww_plan(gconv_impl_bww_params *P, int path, int tbm, int tbn,
                                       int tbk, int user_split, int det)
{
    int sms = gconv_device_sm_count();
    if (sms <= 0)
        sms = 80;
    if (path == GCONV_IMPL_BWW_PATH_DW && gconv_impl_bww_dwr_ok(P)) {
        gconv_impl_bww_dwr_plan(P, user_split, sms);
    } else if (path == GCONV_IMPL_BWW_PATH_DW) {
        const int vec = P->tin == GCONV_F32 ? 4 : 8;
        const int gv = P->G / vec;
        int64_t base;
        P->cb = (gv + 31) / 32;
        P->cl = (gv + P->cb - 1) / P->cb;
        P->tchunks = (P->taps + GCONV_IMPL_BWW_DW_TAPS - 1) / GCONV_IMPL_BWW_DW_TAPS;
        base = (int64_t)P->cb * P->tchunks;
        /* blocks of about 128 threads, about 3 per SM resident, two waves; at least 32 pixels
         * per thread */
        P->splits = gconv_impl_bww_splits(user_split, base, P->R, 32 * (128 / P->cl),
                                          sms * 6);
        P->chunk = (P->R + P->splits - 1) / P->splits;
        P->splits = (int)((P->R + P->chunk - 1) / P->chunk);
    } else if (path == GCONV_IMPL_BWW_PATH_FEWC) {
        int64_t base;
        P->fk = P->fc = P->C <= 4 && P->K <= 4 ? 4 : 8;
        P->fchunks = ((P->K + P->fk - 1) / P->fk) * ((P->C + P->fc - 1) / P->fc);
        /* FEWC4T: all taps per thread, when they fit and the filter's span fits in int */
        P->fall = P->fk == 4 && P->taps <= 9 &&
                  (int64_t)(P->flt[0] - 1) * P->dil[0] * P->si.s[0] +
                          (int64_t)(P->flt[1] - 1) * P->dil[1] * P->si.s[1] +
                          (int64_t)(P->flt[2] - 1) * P->dil[2] * P->si.s[2] <
                      0x7fffffffLL;
        P->fvec = P->C % P->fc == 0 && P->K % P->fk == 0 &&
                  ((uintptr_t)P->in | (uintptr_t)P->dout) % 16 == 0;
        base = ((int64_t)P->G * (P->fall ? 1 : P->taps) * P->fchunks + 31) / 32;
        P->splits = gconv_impl_bww_splits(user_split, base, P->R, P->fall ? 128 : 256,
                                          P->fall ? sms * 4 : sms * 8);
        P->chunk = (P->R + P->splits - 1) / P->splits;
        P->splits = (int)((P->R + P->chunk - 1) / P->chunk);
    } else {
        const int KT = (int)((P->R + tbk - 1) / tbk);
        int64_t tiles;
        P->mt = (P->K + tbm - 1) / tbm;
        P->nt = (P->Ncol + tbn - 1) / tbn;
        tiles = (int64_t)P->G * P->mt * P->nt;
        /* measured on H100 (bench/NOTES.md): the gathers are latency-bound, so more blocks
         * in flight win until each split has few k-tiles left */
        P->splits = gconv_impl_bww_splits(user_split, tiles, KT, 4,
                                          tbm * tbn >= 128 * 128 ? sms * 4 : sms * 8);
        P->ktc = (KT + P->splits - 1) / P->splits;
        P->splits = (KT + P->ktc - 1) / P->ktc;
        P->chunk = (int64_t)P->ktc * tbk;
    }
    /* DW: slabs even in fast mode (measured faster on H100 than hundreds of splits adding
     * into the same few weights with atomics) */
    gconv_impl_bww_set_mode(P, det || path == GCONV_IMPL_BWW_PATH_DW);
}

/* Plan of the TC kernel of tile kind `kind` (gconv_impl_bww_tc_kind). */
static inline void gconv_impl_bww_plan_tc(gconv_impl_bww_params *P, int kind, int user_split,
                                          int det)
{
    const int bn = kind == 0 ? 128 : kind == 1 ? 64 : kind == 2 ? 32 : 16, sw = kind > 0;
    const int KT = (int)((P->R + GCONV_IMPL_BWW_TC_BK - 1) / GCONV_IMPL_BWW_TC_BK);
    int sms = gconv_device_sm_count();
    if (sms <= 0)
        sms = 80;
    P->mt = ((sw ? P->Ncol : P->K) + 127) / 128;
    P->nt = ((sw ? P->K : P->Ncol) + bn - 1) / bn;
    /* 128x128 tile (two resident blocks per SM: 64 accumulators a thread, 70 KB of shared
     * memory): about two waves, at least 8 k-tiles a split; 128x64 / 128x32 (three per SM):
     * about one wave, at least 2 k-tiles a split (small reductions want the parallelism);
     * 128x16 (60 registers): about eight blocks per SM; deterministic mode at most 16 slabs.
     * From the H200 split sweep in bench/NOTES.md: past that, splits cost more in reduction
     * traffic than they win. */
    P->splits = gconv_impl_bww_splits(user_split, (int64_t)P->G * P->mt * P->nt, KT,
                                      kind == 0 ? 8 : 2,
                                      sms * (kind == 0 ? 4 : kind == 3 ? 8 : 3));
    if (det && user_split <= 0 && P->splits > 16)
        P->splits = 16;
    if ((kind == 1 || kind == 2) && user_split <= 0) {
        /* 128x64 / 128x32 on H100 (split sweep of 2026-11-24, bench/NOTES.md): no more blocks
         * than one round of three per SM (a second, partial round lost 15 % on ResNeXt 1024@7)
         * and at most 12 splits (the K = 36 heads ran 4-23 % faster at 12 than at the ~22 a full
         * round gives, in both modes) */
        const int64_t base = (int64_t)P->G * P->mt * P->nt;
        int s = (int)((int64_t)sms * 3 / base);
        s = s < 1 ? 1 : s > 12 ? 12 : s;
        P->splits = s < P->splits ? s : P->splits;
    }
    P->ktc = (KT + P->splits - 1) / P->splits;
    P->splits = (KT + P->ktc - 1) / P->ktc;
    P->chunk = (int64_t)P->ktc * GCONV_IMPL_BWW_TC_BK;
    gconv_impl_bww_set_mode(P, det);
}

/* Tuning hook: > 0 pins the BWH kernel's persistent grid to that many blocks (at most one per
 * unit; the slab count follows); 0 (default) lets gconv_impl_bwh_plan choose. One per
 * translation unit. */
static int gconv_impl_bwh_blocks __attribute__((unused)) = 0;

/* Test hook: nonzero keeps the BWH kernel's copies on cp.async where the copy engine could take
 * them (gconv_impl_bwh_tma_setup), so that the GPU tests cover both paths. One per translation
 * unit. */
static int gconv_impl_bwh_no_tma __attribute__((unused)) = 0;

/* Plan of the BWH kernel (the halo tensor-core kernel) for a filled P: 1 and B, or 0 when it
 * does not take the problem (see its section for the scope; the user's split_k and the algo
 * choices other than automatic keep the other kernels). Geometry as the forward halo kernel:
 * bands of R = 128 / Wp rows (at least one), halved until the buffers fit; a persistent grid of
 * two blocks per SM (one of 2 * wpg warps for C = 32); slabs = the most blocks that share a
 * group chunk. */
static inline int gconv_impl_bwh_plan(const gconv_problem *p, const gconv_impl_bww_params *W,
                                      int det, gconv_impl_bwh_params *B)
{
#if GCONV_IMPL_HALO_ENABLE
    /* pair mode: in NHWGC the channels of groups 2 g' and 2 g' + 1 (4 each) are the 8 channels
     * of group g' of a G / 2-group problem, in and d_out alike */
    const int pair = p->C == 4 && p->K == 4 && p->G % 2 == 0;
    const int C = pair ? 8 : p->C, K = pair ? 8 : p->K, G = pair ? p->G / 2 : p->G;
    int lc, OH, OW, Wp, R, Q, Pn, bytes, sms, nb, taps, nbuf;
    int64_t units, per, chunks, blocks;
    gconv_act_strides si, so;
    if (W->tin == GCONV_F32 || W->tin != W->tout || p->ndim > 2 || C != K)
        return 0;
    if (gconv_layout_family(gconv_in_layout(p)) != GCONV_NHWGC ||
        gconv_layout_family(gconv_out_layout(p)) != GCONV_NHWGC)
        return 0;
    for (lc = 3; lc <= 5 && (1 << lc) != C; lc++)
        ;
    taps = p->filter[1] * p->filter[2];
    nbuf = gconv_impl_bwh_bufs(C);
    if (lc > 5 || p->stride[1] != 1 || p->stride[2] != 1 || taps > 10 ||
        ((uintptr_t)W->in | (uintptr_t)W->dout) % 16)
        return 0;
    if (gconv_in_elems(p) >= ((int64_t)1 << 31) || gconv_out_elems(p) >= ((int64_t)1 << 31))
        return 0;
    si = gconv_in_strides(p), so = gconv_out_strides(p);
    OH = gconv_out_len(p, 1), OW = gconv_out_len(p, 2);
    Wp = OW + (p->filter[2] - 1) * p->dilation[2];
    R = gconv_impl_halo_rows(OH, GCONV_IMPL_BWH_TARGET / Wp);
    for (;;) {
        nb = (OH + R - 1) / R;
        Q = (R * Wp + 15) / 16 * 16;
        Pn = Q + (p->filter[1] - 1) * p->dilation[1] * Wp + (p->filter[2] - 1) * p->dilation[2];
        bytes = nbuf * (Pn + Q) * GCONV_IMPL_HALO_PS + (Pn + Q) * 8;
        if (bytes <= GCONV_IMPL_BWH_MAX_SMEM)
            break;
        if (R == 1)
            return 0;
        R = gconv_impl_halo_rows(OH, (R + 1) / 2);
    }
    chunks = (G + 64 / C - 1) / (64 / C);
    per = (int64_t)p->N * nb;
    units = chunks * per;
    if (units >= 0x7fffffffLL)
        return 0;
    memset(B, 0, sizeof *B);
    B->w = *W;
    {
        gconv_impl_halo_params *h = &B->hi;
        h->in = W->in, h->dt = W->tin, h->G = G, h->C = C, h->lc = lc, h->K = K, h->GB = 64 / C;
        h->N = p->N, h->H = p->in[1], h->W = p->in[2], h->OH = OH, h->OW = OW;
        h->X = p->filter[2], h->dh = p->dilation[1], h->dw = p->dilation[2];
        h->ph = p->pad_lo[1], h->pw = p->pad_lo[2], h->taps = taps;
        h->R = R, h->Wp = Wp, h->P = Pn, h->Q = Q, h->bands = nb;
        h->units = (int)units;
        h->in_n = (int)si.n, h->in_h = (int)si.s[1], h->in_w = (int)si.s[2];
        h->out_n = (int)so.n, h->out_h = (int)so.s[1], h->out_w = (int)so.s[2];
    }
    /* the d_out view: rows oh0 .., no pad, no halo; only its copy fields are read */
    B->ho = B->hi;
    B->ho.in = W->dout, B->ho.C = K, B->ho.ph = 0, B->ho.pw = 0, B->ho.H = OH, B->ho.W = OW;
    B->ho.P = Q, B->ho.in_n = (int)so.n, B->ho.in_h = (int)so.s[1], B->ho.in_w = (int)so.s[2];
    B->pair = pair;
    B->mtg = (taps * C + 15) / 16;
    /* warps a group: C / 8 of GCONV_IMPL_BWH_MTW m-tiles (8 warps a block), or for C = 32
     * those of GCONV_IMPL_BWH_MTW32 m-tiles the group's taps need (at least 4: the cp.async
     * fill wants 256 threads) */
    B->wpg = C == 32 ? (B->mtg + GCONV_IMPL_BWH_MTW32 - 1) / GCONV_IMPL_BWH_MTW32 : C / 8;
    if (C == 32 && B->wpg < 4)
        B->wpg = 4;
    B->threads = C == 32 ? 2 * B->wpg * 32 : GCONV_IMPL_HALO_THREADS;
    B->buf_bytes = (Pn + Q) * GCONV_IMPL_HALO_PS;
    B->hoff = Pn * GCONV_IMPL_HALO_PS;
    sms = gconv_device_sm_count();
    if (sms <= 0)
        sms = 80;
    /* two blocks per SM (launch bounds (256, 2), <= 110 KB each; C = 32: one), but at least
     * GCONV_IMPL_BWH_QPB k-steps per n-tile for each block: a block's hand-over (20 * NT sums
     * a thread) costs about as much as that many k-steps of its math (H200 sweep of 16 / 32 /
     * 64: fewer blocks only lost); both modes use slabs, so they run alike */
    blocks = (int64_t)sms * (C == 32 ? 1 : 2);
    {
        /* the divisor: k-steps per block and n-tile, times n-tiles a warp holds (K / 8). For
         * C = 32 (4 n-tiles a warp, 48 sums a thread, a cheaper hand-over) a quarter of
         * GCONV_IMPL_BWH_QPB times 2, tuned (H100, ResNeXt 1024@7 with N = 8 / 16: 24.0-24.8
         * -> 10.2-10.6 / 15.3-15.5 -> 13.1 us; N = 64 keeps its 128 blocks) */
        const int64_t q32 = GCONV_IMPL_BWH_QPB / 4 > 0 ? GCONV_IMPL_BWH_QPB / 4 : 1;
        const int64_t qb = units * (Q / 16) /
                           (K == 32 ? q32 * 2 : (int64_t)GCONV_IMPL_BWH_QPB * (K / 8));
        if (blocks > qb)
            blocks = qb;
    }
    if (blocks < 1)
        blocks = 1;
    if (C == 32) {
        /* one block per SM: no more blocks than the longest block's unit count needs (as
         * fast, fewer slabs; H100, ResNeXt 1024@7: 132 blocks of 7-8 units 21.5-23.0 us, 128 of
         * 8 20.1-20.3. With two blocks per SM this lost: 512@14 224 -> 205 blocks, 23.0 ->
         * 28.0) */
        const int64_t most = (units + blocks - 1) / blocks;
        blocks = (units + most - 1) / most;
    }
    if (gconv_impl_bwh_blocks > 0)
        blocks = gconv_impl_bwh_blocks;
    if (blocks > units)
        blocks = units;
    if (blocks < 1)
        blocks = 1;
    B->hi.blocks = B->ho.blocks = (int)blocks;
    B->w.splits = gconv_impl_bww_chunk_slabs(chunks, per, blocks, units);
    B->w.chunk = 0; /* not used */
    /* slabs in both modes (det or not): the blocks of a chunk add the same sums, which
     * atomics serialise; so the fast mode is deterministic here too */
    (void)det;
    gconv_impl_bww_set_mode(&B->w, 1);
    /* over 8 slabs the finalize's vector form, as BWN's: 8 lanes a quad, 32 from 32 slabs, 128
     * from GCONV_IMPL_BWW_FIN128_FROM (the one-element form walks the slabs one dependent load
     * at a time; ResNeXt 512@14 has ~29 slabs a chunk, 256@28 ~66, 128@56 ~132) */
    gconv_impl_bww_fin_vec(&B->w);
    return 1;
#else
    (void)p, (void)W, (void)det, (void)B;
    return 0;
#endif
}

/* Whether a C = K = 4 problem on the few-channel path goes to the BWH kernel's pair mode
 * instead (the automatic algorithm without a user split, where the BWH plan takes it: two
 * groups of 4 as one of 8 on tensor cores, the cross-group products dropped; measured 6x
 * faster than FEWC4T on ResNeXt 128@56, bench/NOTES.md). */
static inline int gconv_impl_bww_pair_bwh(const gconv_problem *p, const gconv_impl_bww_params *W,
                                          int path, const gconv_bwd_weight_args *a)
{
    gconv_impl_bwh_params B;
    return path == GCONV_IMPL_BWW_PATH_FEWC && p->C == 4 && p->K == 4 &&
           a->algo == GCONV_BWD_WEIGHT_ALGO_AUTO && a->split_k <= 0 &&
           gconv_impl_bwh_plan(p, W, a->deterministic, &B);
}

/* Shared memory of a planned BWH launch: its buffers, the two copy tables and (hi.tma) one
 * mbarrier a buffer. */
static inline int gconv_impl_bwh_smem(const gconv_impl_bwh_params *B)
{
    const int S = gconv_impl_bwh_bufs(B->hi.C);
    return S * B->buf_bytes + (B->hi.P + B->ho.P) * 8 + (B->hi.tma ? 8 * S : 0);
}

/* Tuning hook: 1 keeps the C = 32 kernel off the cluster form, 2 off its whole-chunk clusters
 * (pairs only), 3 off its pairs (whole chunks only) (A/B runs, tests); one per translation unit. */
static int gconv_impl_bwh_cl_off __attribute__((unused)) = 0;

#if GCONV_IMPL_WS_HOST
/* Launch configuration of BWH kernel k for planned B with smem bytes in clusters of B->cl
 * blocks (at[0] receives the cluster attribute). */
static inline cudaLaunchConfig_t gconv_impl_bwh_cl_config(const gconv_impl_bwh_params *B,
                                                          int smem, hipStream_t stream,
                                                          cudaLaunchAttribute *at)
{
    cudaLaunchConfig_t c;
    memset(at, 0, sizeof *at);
    at->id = cudaLaunchAttributeClusterDimension;
    at->val.clusterDim.x = (unsigned)B->cl, at->val.clusterDim.y = 1, at->val.clusterDim.z = 1;
    c.gridDim = dim3((unsigned)B->hi.blocks); /* every member of c set here */
    c.blockDim = dim3((unsigned)B->threads);
    c.dynamicSmemBytes = (size_t)smem;
    c.stream = stream;
    c.attrs = at;
    c.numAttrs = 1;
    return c;
}

/* Whether the device holds `clusters` clusters of B->cl blocks of kernel k with smem bytes at
 * once (cudaOccupancyMaxActiveClusters). The answers are kept per cluster size and kernel (the
 * pairs' and the whole chunks' kernels in separate slots) and asked again when the device, size
 * or block changes; a failed query is not kept. A cache for speed only, not guarded against
 * threads: a torn entry costs a wrong guess, which the launch then reports. */
static inline int gconv_impl_bwh_cl_fits(const gconv_impl_bwh_params *B, const void *k, int smem,
                                         int dev, int64_t clusters, int whole)
{
    /* the last answer for (whole, cluster size): kernel, device, shared memory, threads, n */
    static struct {
        const void *k;
        int dev, smem, thr, n;
    } known[2][GCONV_IMPL_BWH_CLMAX + 1];
    const int i = B->cl, w = whole ? 1 : 0;
    if (known[w][i].k != k || known[w][i].dev != dev || known[w][i].smem != smem ||
        known[w][i].thr != B->threads) {
        cudaLaunchAttribute a;
        const cudaLaunchConfig_t c = gconv_impl_bwh_cl_config(B, smem, 0, &a);
        int n = 0;
        if (cudaOccupancyMaxActiveClusters(&n, k, &c) != cudaSuccess) {
            (void)cudaGetLastError(); /* the query's own error, not a launch's */
            return 0;
        }
        known[w][i].k = k, known[w][i].dev = dev, known[w][i].smem = smem;
        known[w][i].thr = B->threads, known[w][i].n = n;
    }
    return known[w][i].n >= clusters;
}
#endif

/* The cluster form of the C = 32 kernel (gconv_impl_bwh_emit_cluster) for planned B with its
 * workspace set, whose kernels k (pairs) and kw (whole chunks) take *smem bytes of shared
 * memory (their attributes already raised to GCONV_IMPL_BWH4_MAX_SMEM). Where slab mode gives
 * every chunk the same number of blocks, each with units of that chunk only (not pair mode),
 * the tiles fit, the kernel's device code has the form (an sm_90a pass: its
 * GCONV_IMPL_BWH_CL_MARK bytes of static shared memory, asked through
 * gconv_impl_kernel_smem_at_least with the caller's known[0] / yes[0] for k, [1] for kw;
 * elsewhere k would write a slab a block while the finalize summed fewer, and kw is empty),
 * and the device holds every cluster at once (gconv_impl_bwh_cl_fits):
 * - whole chunks: a chunk's blocks one cluster of cl = 8 .. 2 blocks (the largest that fits)
 *   of kernel kw (the same kernel with the whole-chunk hand-over), final values, no finalize
 *   and no use of the workspace (mode GCONV_IMPL_BWW_DIRECT; the caller has checked it all
 *   the same, as the workspace size the API reports does not depend on the device), where its
 *   blocks' most units (ceil(per / cl)) exceed the slab plan's by at most
 *   GCONV_IMPL_BWH_CLW_MORE (H200, ResNeXt 7x7 C = K = 32 with N = 8: 13.2 -> 11.8 us; N = 64
 *   would need 16 clusters of 7 or 8, and that H200 holds 15);
 * - else pairs: clusters of GCONV_IMPL_BWH_CL where that divides the chunk's blocks and the
 *   workspace is 16-byte aligned, a slab a pair (B->w.splits: the chunk's clusters).
 * Then sets B->stg, B->cl, *smem (for whole chunks also the blocks and mode, for pairs the
 * finalize's form for their slabs) and returns 1. The
 * sums' order differs from the slab-a-block form's: deterministic runs repeat bit for bit on
 * one device and workspace alignment. */
static inline int gconv_impl_bwh_cl_plan(gconv_impl_bwh_params *B, int *smem, const void *k,
                                         const void *kw, unsigned *known, unsigned *yes)
{
#if GCONV_IMPL_WS_HOST
    int dev = 0, cl;
    gconv_impl_halo_params *hi = &B->hi;
    const int64_t per = (int64_t)hi->N * hi->bands;
    const int64_t nch = per > 0 ? hi->units / per : 0;
    const int64_t bpc = nch > 0 ? hi->blocks / nch : 0; /* blocks a chunk */
    const int64_t most = bpc > 0 ? (per + bpc - 1) / bpc : 0; /* the slab plan's units a block */
    const int at = (*smem + 15) & ~15;
    const int need = at + hi->GB * hi->K * (hi->taps * hi->C + 4) * 4;
    B->stg = 0, B->cl = 0;
    if (gconv_impl_bwh_cl_off == 1 || B->pair || B->w.mode != GCONV_IMPL_BWW_SLABS || nch < 1 ||
        hi->units != nch * per || hi->blocks != bpc * nch || per % bpc || bpc > B->w.splits ||
        (hi->taps * hi->C) % 32 || B->w.Ncol != hi->taps * hi->C ||
        need > GCONV_IMPL_BWH4_MAX_SMEM)
        return 0;
    if (!gconv_impl_kernel_smem_at_least(k, GCONV_IMPL_BWH_CL_MARK, known, yes) ||
        cudaGetDevice(&dev) != cudaSuccess)
        return 0;
    /* whole chunks (kernel kw, whose device code has the form where k's has): blocks nch * cl
     * put exactly cl blocks on each chunk (gconv_impl_bww_chunk_blocks), block b of a chunk
     * taking its units floor(b per / cl) .. floor((b + 1) per / cl) - 1 */
    for (cl = per < GCONV_IMPL_BWH_CLMAX ? (int)per : GCONV_IMPL_BWH_CLMAX;
         gconv_impl_bwh_cl_off != 2 && cl >= 2 &&
         gconv_impl_kernel_smem_at_least(kw, GCONV_IMPL_BWH_CL_MARK, known + 1, yes + 1);
         cl--) {
        const int blocks = hi->blocks;
        if ((per + cl - 1) / cl > most + GCONV_IMPL_BWH_CLW_MORE)
            break; /* fewer blocks only get slower */
        B->cl = cl, hi->blocks = B->ho.blocks = (int)(nch * cl);
        if (gconv_impl_bwh_cl_fits(B, kw, need, dev, nch, 1)) {
            B->stg = at, *smem = need;
            B->w.splits = 1, B->w.mode = GCONV_IMPL_BWW_DIRECT, B->w.fl = 1, B->w.fvl = 8;
            return 1;
        }
        hi->blocks = B->ho.blocks = blocks;
    }
    B->cl = GCONV_IMPL_BWH_CL;
    if (gconv_impl_bwh_cl_off == 3 || bpc % GCONV_IMPL_BWH_CL || ((uintptr_t)B->w.ws & 15u) ||
        !gconv_impl_bwh_cl_fits(B, k, need, dev, hi->blocks / GCONV_IMPL_BWH_CL, 0)) {
        B->cl = 0;
        return 0;
    }
    B->stg = at, *smem = need;
    B->w.splits = (int)(bpc / GCONV_IMPL_BWH_CL);
    /* the finalize's form for the halved slab count (slab mode stays: pairs write slabs) */
    B->w.fl = 1, B->w.fvl = 8;
    gconv_impl_bww_fin_vec(&B->w);
    return 1;
#else
    (void)B, (void)smem, (void)k, (void)kw, (void)known, (void)yes;
    return 0;
#endif
}

/* Launch BWH kernel k for B in the cluster form (gconv_impl_bwh_cl_plan said yes; a launch
 * error is read by gconv_impl_bww_launched). */
static inline void gconv_impl_bwh_cl_launch(const void *k, gconv_impl_bwh_params *B, int smem,
                                            hipStream_t stream)
{
#if GCONV_IMPL_WS_HOST
    cudaLaunchAttribute at;
    const cudaLaunchConfig_t c = gconv_impl_bwh_cl_config(B, smem, stream, &at);
    void *args[1];
    args[0] = B;
    (void)cudaLaunchKernelExC(&c, k, args);
#else
    (void)k, (void)B, (void)smem, (void)stream;
#endif
}

/* The BWH kernel's copies by the copy engine (sm_90a device passes; gconv_impl_bwh_tfill): the
 * input and d_out maps, the buffers' parts rounded up to the 128 bytes the engine's
 * destinations need, the mbarriers after the tables. Leaves hi.tma 0 (cp.async) where the
 * tensors are not packed NHWGC pixels, a box would pass 256 rows or columns, the rounded
 * buffers would not fit, or an encoder refuses. */
static inline void gconv_impl_bwh_tma_setup(gconv_impl_bwh_params *B, const gconv_problem *p)
{
#if GCONV_IMPL_WS_HOST
    gconv_impl_halo_params *hi = &B->hi, *ho = &B->ho;
    const int S = gconv_impl_bwh_bufs(hi->C);
    const int rows = hi->R + (p->filter[1] - 1) * hi->dh;
    const int hoff = (hi->P * GCONV_IMPL_HALO_PS + 127) & ~127;
    const int bb = (hoff + ho->P * GCONV_IMPL_HALO_PS + 127) & ~127;
    const int tbar = S * bb + (hi->P + ho->P) * 8;
    hi->tma = 0;
    if (gconv_impl_bwh_no_tma || hi->in_w != hi->G * hi->C || ho->in_w != hi->G * hi->K ||
        rows > 256 || hi->Wp > 256 || tbar + 8 * S > GCONV_IMPL_BWH_MAX_SMEM)
        return;
    if (!gconv_impl_halo_map(&hi->tmap, hi->dt, hi->in, hi->G * hi->C, hi->W, hi->H, hi->N,
                             hi->in_w, hi->in_h, hi->in_n, hi->Wp, rows) ||
        !gconv_impl_halo_map(&ho->tmap, hi->dt, ho->in, hi->G * hi->K, hi->OW, hi->OH, hi->N,
                             ho->in_w, ho->in_h, ho->in_n, hi->Wp, hi->R))
        return;
    hi->tbytes = GCONV_IMPL_HALO_PS * hi->Wp * rows;
    ho->tbytes = GCONV_IMPL_HALO_PS * hi->Wp * hi->R;
    hi->tbar_off = tbar;
    B->hoff = hoff, B->buf_bytes = bb;
    hi->tma = 1;
#else
    (void)p;
    B->hi.tma = 0;
#endif
}

/* the narrow-K halo kernel and the warp-specialised kernel (need the parameters,
 * gconv_impl_bww_emit and the plan helpers above) */
#include "bwd_weight_nk.h"
#include "bwd_weight_ws.h"

static inline size_t gconv_impl_bww_ws_bytes(const gconv_impl_bww_params *P)
{
    if (P->mode == GCONV_IMPL_BWW_DIRECT)
        return 0;
    if (P->mode == GCONV_IMPL_BWW_TAIL)
        return (size_t)gconv_impl_bww_tail_tiles(P) * (size_t)P->splits * GCONV_IMPL_BWS_BM *
               (size_t)P->tbn * sizeof(float);
    return (size_t)P->total * sizeof(float) *
           (P->mode == GCONV_IMPL_BWW_SLABS ? (size_t)P->splits : 1u);
}

/* Whether the vector gathers fit tile (bm, bn, bk, threads nth) for element size esize. */
static inline int gconv_impl_bww_vtile_ok(int bm, int bn, int bk, int nth, int esize)
{
    const int vec = 16 / esize;
    if (nth % bk || bm % vec || bn % vec)
        return 0;
    return (bm / vec) % (nth / bk) == 0 && (bn / vec) % (nth / bk) == 0 &&
           (bm / vec) * bk / nth >= 1 && (bm / vec) * bk / nth <= 4 &&
           (bn / vec) * bk / nth >= 1 && (bn / vec) * bk / nth <= 4;
}

/* Gather modes of the GEMM for (p, pointers): 0 element-wise both, 1 B vector (input channels
 * contiguous, C a multiple of the vector), 2 both vector (also K a multiple of the vector). */
static inline int gconv_impl_bww_vmode(const gconv_problem *p, gconv_dtype dt, int famvec,
                                       const void *in, const void *dout)
{
    const int vec = 16 / (int)gconv_dtype_size(dt);
    if (!famvec || p->C % vec || (uintptr_t)in % 16)
        return 0;
    return p->K % vec == 0 && (uintptr_t)dout % 16 == 0 ? 2 : 1;
}

/* GEMM tile of the default instantiation: 0 = 128x128x32, 1 = 64x64x32. */
static inline int gconv_impl_bww_gemm_kind(const gconv_problem *p)
{
    const int64_t ncol = (int64_t)p->C * gconv_filter_taps(p);
    return p->K >= 96 && ncol >= 96 ? 0 : 1;
}

/* Workspace of the default instantiation for (p, a): the largest over the paths the launch may
 * take (DW needs 16-byte aligned pointers, unknown here: a depthwise problem may take FEWC). */
static inline size_t gconv_impl_bww_ws_default(const gconv_problem *p, gconv_dtype dt,
                                               gconv_dtype tout, const gconv_bwd_weight_args *a)
{
    gconv_impl_bww_params P;
    size_t most = 0, b;
    int det, path;
    const int user = a ? a->split_k : 0, algo = a ? a->algo : GCONV_BWD_WEIGHT_ALGO_AUTO;
    const int nhwgc = gconv_layout_family(gconv_in_layout(p)) == GCONV_NHWGC &&
                      gconv_layout_family(gconv_out_layout(p)) == GCONV_NHWGC;
    const int aligned = gconv_impl_bww_path(p, dt, NULL, NULL);
    int take[3];
    if (gconv_problem_check(p, NULL, 0) != GCONV_OK || user < 0)
        return 0;
    take[GCONV_IMPL_BWW_PATH_GEMM] = algo != GCONV_BWD_WEIGHT_ALGO_DIRECT &&
                                     (algo == GCONV_BWD_WEIGHT_ALGO_GEMM ||
                                      aligned == GCONV_IMPL_BWW_PATH_GEMM);
    take[GCONV_IMPL_BWW_PATH_DW] = algo != GCONV_BWD_WEIGHT_ALGO_GEMM &&
                                   aligned == GCONV_IMPL_BWW_PATH_DW;
    /* (C = K = 8, which the TC kernel takes when aligned, falls back to FEWC when not) */
    take[GCONV_IMPL_BWW_PATH_FEWC] = algo != GCONV_BWD_WEIGHT_ALGO_GEMM && nhwgc &&
                                     (algo == GCONV_BWD_WEIGHT_ALGO_DIRECT ||
                                      aligned != GCONV_IMPL_BWW_PATH_GEMM ||
                                      (p->C <= 8 && p->K <= 8));
    for (det = 0; det < 2; det++) {
        if (a && det != (a->deterministic != 0))
            continue;
        for (path = 0; path < 3; path++) {
            if (!take[path])
                continue;
            gconv_impl_bww_fill(p, dt, tout, &P);
            if (path == GCONV_IMPL_BWW_PATH_GEMM) {
                const int k = gconv_impl_bww_gemm_kind(p);
                gconv_impl_bww_plan(&P, path, k ? 64 : 128, k ? 64 : 128, 32, user, det);
            } else {
                gconv_impl_bww_plan(&P, path, 0, 0, 0, user, det);
            }
            b = gconv_impl_bww_ws_bytes(&P);
            most = b > most ? b : most;
        }
        /* the BWH kernel, when the pointers turn out aligned */
        if (algo == GCONV_BWD_WEIGHT_ALGO_AUTO && user <= 0) {
            gconv_impl_bwh_params B;
            gconv_impl_bww_fill(p, dt, tout, &P);
            if (gconv_impl_bwh_plan(p, &P, det, &B)) {
                b = gconv_impl_bww_ws_bytes(&B.w);
                most = b > most ? b : most;
            }
        }
        /* the BWN kernel, when the pointers turn out aligned */
        if (algo == GCONV_BWD_WEIGHT_ALGO_AUTO && user <= 0) {
            gconv_impl_bwn_params B;
            gconv_impl_bww_fill(p, dt, tout, &P);
            if (gconv_impl_bwn_plan(p, &P, &B)) {
                b = gconv_impl_bww_ws_bytes(&B.w);
                most = b > most ? b : most;
            }
        }
        /* the BWS kernel, when the pointers turn out aligned */
        if (algo != GCONV_BWD_WEIGHT_ALGO_DIRECT && gconv_impl_bws_fits(p, dt, NULL, NULL)) {
            gconv_impl_bww_fill(p, dt, tout, &P);
            gconv_impl_bws_splits(&P, gconv_impl_bws_pick(&P, user), user,
                                  gconv_device_sm_count());
            b = gconv_impl_bww_ws_bytes(&P);
            most = b > most ? b : most;
        }
        /* the TC kernel, when the pointers turn out aligned */
        if (algo != GCONV_BWD_WEIGHT_ALGO_DIRECT && gconv_impl_bww_tc_kind(p, dt, NULL, NULL) >= 0) {
            gconv_impl_bww_fill(p, dt, tout, &P);
            gconv_impl_bww_plan_tc(&P, gconv_impl_bww_tc_kind(p, dt, NULL, NULL), user, det);
            b = gconv_impl_bww_ws_bytes(&P);
            most = b > most ? b : most;
        }
    }
    return most;
}

/* Check the workspace, zero it for atomics. */
static inline gconv_status gconv_impl_bww_ws_prepare(gconv_impl_bww_params *P,
                                                     const gconv_bwd_weight_args *a,
                                                     hipStream_t stream, char *why, size_t len)
{
    const size_t need = gconv_impl_bww_ws_bytes(P);
    if (!need)
        return GCONV_OK;
    if (!a->workspace || a->workspace_size < need)
        return gconv_impl_fail(GCONV_ERR_WORKSPACE, why, len,
                               "%zu bytes of workspace are needed (%d splits, %s mode); %s", need,
                               P->splits,
                               P->mode == GCONV_IMPL_BWW_SLABS  ? "deterministic"
                               : P->mode == GCONV_IMPL_BWW_TAIL ? "split-tail"
                                                                : "fast",
                               a->workspace ? "fewer were given" : "none was given");
    if ((uintptr_t)a->workspace % 4)
        return gconv_impl_fail(GCONV_ERR_ALIGNMENT, why, len,
                               "the workspace must be 4-byte aligned");
    P->ws = (float *)a->workspace;
    if (P->mode == GCONV_IMPL_BWW_ATOMIC &&
        hipMemsetAsync(P->ws, 0, need, stream) != hipSuccess)
        return gconv_impl_fail(GCONV_ERR_RUNTIME, why, len, "hipMemsetAsync failed");
    return GCONV_OK;
}

static inline gconv_status gconv_impl_bww_launched(char *why, size_t len)
{
    hipError_t e = hipGetLastError();
    if (e != hipSuccess)
        return gconv_impl_fail(GCONV_ERR_RUNTIME, why, len, "kernel launch failed: %s",
                               hipGetErrorString(e));
    return GCONV_OK;
}

#define GCONV_IMPL_BWW_UNUSED __attribute__((unused))

#define GCONV_IMPL_BWW_NHWGC_GCONV_NHWGC 1
#define GCONV_IMPL_BWW_NHWGC_GCONV_GNHWC 0
#define GCONV_IMPL_BWW_NHWGC_GCONV_NGCHW 0
#define GCONV_IMPL_BWW_IS_NHWGC(f) GCONV_IMPL_CAT(GCONV_IMPL_BWW_NHWGC_, f)
#define GCONV_IMPL_BWW_VECFAM_GCONV_NHWGC 1
#define GCONV_IMPL_BWW_VECFAM_GCONV_GNHWC 1
#define GCONV_IMPL_BWW_VECFAM_GCONV_NGCHW 0
#define GCONV_IMPL_BWW_VECFAM(f) GCONV_IMPL_CAT(GCONV_IMPL_BWW_VECFAM_, f)
#define GCONV_IMPL_BWW_IF_1(...) __VA_ARGS__
#define GCONV_IMPL_BWW_IF_0(...)
#define GCONV_IMPL_BWW_IF(c) GCONV_IMPL_CAT(GCONV_IMPL_BWW_IF_, c)

/* One GEMM kernel with a compile-time tile and gather modes (AV, BV: vector gathers of A, B). */
#define GCONV_IMPL_BWW_GEMM_KERNEL(kname, T, TILE, AV, BV)                                       \
    GCONV_IMPL_STATIC_ASSERT(GCONV_IMPL_TILE_OK(TILE), "tile configuration out of range");     \
    static __global__ void __launch_bounds__(GCONV_IMPL_TILE_THREADS(TILE))                      \
        kname(gconv_impl_bww_params P)                                                           \
    {                                                                                            \
        const gconv_impl_tile t = {GCONV_IMPL_TILE_ARGS(TILE)};                                  \
        gconv_impl_bww_gemm_body(&P, t, T, AV, BV);                                              \
    }

/* Launch GEMM kernel k (tile TILE) for planned P, then the finalize kernel fin if needed. */
#define GCONV_IMPL_BWW_GEMM_LAUNCH(k, fin, T, TILE, P, a, stream, why, len)                      \
    do {                                                                                         \
        static unsigned gconv_impl_done_ = 0;                                                    \
        const gconv_impl_tile t_ = {GCONV_IMPL_TILE_ARGS(TILE)};                                 \
        const int smem_ = gconv_impl_tile_smem(t_, (T) == GCONV_F32 ? 4 : 2);                    \
        const int64_t blocks_ = (int64_t)(P).G * (P).mt * (P).nt;                                \
        gconv_status s_;                                                                         \
        if (blocks_ > 0x7fffffffLL)                                                              \
            return gconv_impl_fail(GCONV_ERR_UNSUPPORTED, why, len,                              \
                                   "%lld blocks of %dx%d are too many for one launch",          \
                                   (long long)blocks_, t_.bm, t_.bn);                            \
        if (gconv_impl_fwd_smem_attr((const void *)k, smem_, &gconv_impl_done_) != GCONV_OK)    \
            return gconv_impl_fail(GCONV_ERR_RUNTIME, why, len,                                  \
                                   "cannot raise the shared-memory limit to %d bytes", smem_);   \
        s_ = gconv_impl_bww_ws_prepare(&(P), a, stream, why, len);                               \
        if (s_ != GCONV_OK)                                                                      \
            return s_;                                                                           \
        hipLaunchKernelGGL(k, dim3((unsigned)blocks_, (unsigned)(P).splits),                     \
                           dim3(gconv_impl_tile_threads(t_)), (size_t)smem_, stream, P);         \
        GCONV_IMPL_BWW_FINISH(fin, &(P), stream, why, len);                                      \
    } while (0)

/* Whether the finalize of planned P runs the four-element kernel: one lane per element,
 * atomics or at most 8 slabs (more slabs: the one-element kernel's 4x more threads win,
 * bench/NOTES.md), whole quads, a 16-byte aligned workspace. */
static inline int gconv_impl_bww_fin4(const gconv_impl_bww_params *P)
{
    return P->fl == 1 && (P->mode == GCONV_IMPL_BWW_ATOMIC || P->splits <= 8) &&
           P->total % 4 == 0 && ((uintptr_t)P->ws & 15u) == 0;
}

/* After a kernel launch: return its error if it failed, else run the finalize kernel when the
 * plan has one, and return (a statement). */
#define GCONV_IMPL_BWW_FINISH(fin, P, stream, why, len)                                          \
    do {                                                                                         \
        const gconv_status l_ = gconv_impl_bww_launched(why, len);                               \
        if (l_ != GCONV_OK)                                                                      \
            return l_;                                                                           \
        if ((P)->mode == GCONV_IMPL_BWW_TAIL) {                                                  \
            const int64_t nb_ =                                                                  \
                (gconv_impl_bww_tail_tiles(P) * GCONV_IMPL_BWS_BM * (P)->tbn / 4 + 255) / 256;   \
            hipLaunchKernelGGL(fin##t, dim3((unsigned)(nb_ < 8192 ? nb_ : 8192)), dim3(256), 0,  \
                               stream, *(P));                                                    \
            return gconv_impl_bww_launched(why, len);                                            \
        }                                                                                        \
        if ((P)->fl == 8) {                                                                      \
            /* quads a block */                                                                  \
            const int64_t qpb_ = (P)->fvl == 128 ? 2 : (P)->fvl == 32 ? 8 : 32;                  \
            const int64_t nb_ = ((P)->total / 4 + qpb_ - 1) / qpb_;                              \
            const dim3 g8_((unsigned)(nb_ < 8192 ? nb_ : 8192));                                 \
            const int a16_ = ((uintptr_t)(P)->ws & 15u) == 0;                                    \
            if ((P)->fvl == 128 && a16_)                                                         \
                hipLaunchKernelGGL(fin##128, g8_, dim3(256), 0, stream, *(P));                   \
            else if ((P)->fvl == 128)                                                            \
                hipLaunchKernelGGL(fin##128u, g8_, dim3(256), 0, stream, *(P));                  \
            else if ((P)->fvl == 32 && a16_)                                                     \
                hipLaunchKernelGGL(fin##32, g8_, dim3(256), 0, stream, *(P));                    \
            else if ((P)->fvl == 32)                                                             \
                hipLaunchKernelGGL(fin##32u, g8_, dim3(256), 0, stream, *(P));                   \
            else if (a16_)                                                                       \
                hipLaunchKernelGGL(fin##8, g8_, dim3(256), 0, stream, *(P));                     \
            else                                                                                 \
                hipLaunchKernelGGL(fin##8u, g8_, dim3(256), 0, stream, *(P));                    \
            return gconv_impl_bww_launched(why, len);                                            \
        }                                                                                        \
        if ((P)->mode != GCONV_IMPL_BWW_DIRECT) {                                                \
            const int fv_ = gconv_impl_bww_fin4(P);                                              \
            const int64_t epb_ = fv_ ? 1024 : 256 / (P)->fl;                                     \
            const int64_t nb_ = ((P)->total + epb_ - 1) / epb_;                                  \
            if (fv_)                                                                             \
                hipLaunchKernelGGL(fin##4, dim3((unsigned)(nb_ < 8192 ? nb_ : 8192)), dim3(256), \
                                   0, stream, *(P));                                             \
            else                                                                                 \
                hipLaunchKernelGGL(fin, dim3((unsigned)(nb_ < 8192 ? nb_ : 8192)), dim3(256), 0, \
                                   stream, *(P));                                                \
            return gconv_impl_bww_launched(why, len);                                            \
        }                                                                                        \
        return GCONV_OK;                                                                         \
    } while (0)

/* The finalize's vector form, one kernel per load width VEC and lane count L (literals). */
#define GCONV_IMPL_BWW_FIN_VEC_KERNEL(kname, VEC, L)                                             \
    static __global__ void __launch_bounds__(256) kname(gconv_impl_bww_params P)                 \
    {                                                                                            \
        gconv_impl_bww_finalize8_body(&P, VEC, L);                                               \
    }

/* Kernels shared by every instantiation kind: finalize (one element or four a thread, four
 * over 8, 32 or 128 slab lanes, split-tail tiles). */
#define GCONV_IMPL_BWW_FIN_KERNEL(name)                                                          \
    static __global__ void __launch_bounds__(256) name##_fin(gconv_impl_bww_params P)            \
    {                                                                                            \
        gconv_impl_bww_finalize_body(&P);                                                        \
    }                                                                                            \
    static __global__ void __launch_bounds__(256) name##_fin4(gconv_impl_bww_params P)           \
    {                                                                                            \
        gconv_impl_bww_finalize4_body(&P);                                                       \
    }                                                                                            \
    GCONV_IMPL_BWW_FIN_VEC_KERNEL(name##_fin8, 1, 8)                                             \
    GCONV_IMPL_BWW_FIN_VEC_KERNEL(name##_fin8u, 0, 8)                                            \
    GCONV_IMPL_BWW_FIN_VEC_KERNEL(name##_fin32, 1, 32)                                           \
    GCONV_IMPL_BWW_FIN_VEC_KERNEL(name##_fin32u, 0, 32)                                          \
    static __global__ void __launch_bounds__(256) name##_fin128(gconv_impl_bww_params P)         \
    {                                                                                            \
        gconv_impl_bww_finalize128_body(&P, 1);                                                  \
    }                                                                                            \
    static __global__ void __launch_bounds__(256) name##_fin128u(gconv_impl_bww_params P)        \
    {                                                                                            \
        gconv_impl_bww_finalize128_body(&P, 0);                                                  \
    }                                                                                            \
    static __global__ void __launch_bounds__(256) name##_fint(gconv_impl_bww_params P)           \
    {                                                                                            \
        gconv_impl_bww_finalize_tail_body(&P);                                                   \
    }

/* The direct kernels (NHWGC instantiations only). */
#define GCONV_IMPL_BWW_DIRECT_KERNELS(name, T)                                                   \
    static __global__ void __launch_bounds__(128, 3) name##_dw(gconv_impl_bww_params P)          \
    {                                                                                            \
        gconv_impl_bww_dw_body(&P, T);                                                           \
    }                                                                                            \
    static __global__ void __launch_bounds__(GCONV_IMPL_BWW_DWR_THREADS,                       \
                                             GCONV_IMPL_BWW_DWR_MINB(T))                         \
        name##_dwr1(gconv_impl_bww_params P)                                                     \
    {                                                                                            \
        gconv_impl_bww_dwr_body(&P, T, 1, GCONV_IMPL_BWW_DWR_TW1);                               \
    }                                                                                            \
    static __global__ void __launch_bounds__(GCONV_IMPL_BWW_DWR_THREADS,                       \
                                             GCONV_IMPL_BWW_DWR_MINB(T))                         \
        name##_dwr2(gconv_impl_bww_params P)                                                     \
    {                                                                                            \
        gconv_impl_bww_dwr_body(&P, T, 2, GCONV_IMPL_BWW_DWR_TW2);                               \
    }                                                                                            \
    static __global__ void __launch_bounds__(256) name##_few4(gconv_impl_bww_params P)           \
    {                                                                                            \
        gconv_impl_bww_few_body(&P, T, 4, 4);                                                    \
    }                                                                                            \
    static __global__ void __launch_bounds__(256) name##_few8(gconv_impl_bww_params P)           \
    {                                                                                            \
        gconv_impl_bww_few_body(&P, T, 8, 8);                                                    \
    }                                                                                            \
    static __global__ void __launch_bounds__(128) name##_few4t(gconv_impl_bww_params P)          \
    {                                                                                            \
        gconv_impl_bww_few4t_body(&P, T);                                                        \
    }                                                                                            \
    GCONV_IMPL_BWW_UNUSED static inline gconv_status name##_direct(                              \
        gconv_impl_bww_params *P, int path, const gconv_bwd_weight_args *a, hipStream_t stream,  \
        char *why, size_t len)                                                                   \
    {                                                                                            \
        gconv_status s_ = gconv_impl_bww_ws_prepare(P, a, stream, why, len);                     \
        if (s_ != GCONV_OK)                                                                      \
            return s_;                                                                           \
        if (path == GCONV_IMPL_BWW_PATH_DW && P->dwr) {                                          \
            static unsigned done1_ = 0, done2_ = 0;                                              \
            const int nth_ = P->dwpl * P->cl;                                                    \
            const int vb_ = gconv_impl_bww_dwr_vb(P->tin);                                       \
            const int smem_ = nth_ * gconv_impl_bww_dwr_vecs(P->dwr) * vb_;                      \
            const void *k_ = P->dwr == 1 ? (const void *)name##_dwr1 : (const void *)name##_dwr2; \
            /* the attribute is set once per device: to what the largest block may need */     \
            if (gconv_impl_fwd_smem_attr(k_, GCONV_IMPL_BWW_DWR_THREADS * vb_ *                 \
                                                 gconv_impl_bww_dwr_vecs(P->dwr),                \
                                         P->dwr == 1 ? &done1_ : &done2_) != GCONV_OK)           \
                return gconv_impl_fail(GCONV_ERR_RUNTIME, why, len,                              \
                                       "cannot raise the shared-memory limit to %d bytes", smem_); \
            if (P->dwr == 1)                                                                     \
                hipLaunchKernelGGL(name##_dwr1, dim3((unsigned)P->cb, (unsigned)P->splits),      \
                                   dim3((unsigned)nth_), (size_t)smem_, stream, *P);             \
            else                                                                                 \
                hipLaunchKernelGGL(name##_dwr2, dim3((unsigned)P->cb, (unsigned)P->splits),      \
                                   dim3((unsigned)nth_), (size_t)smem_, stream, *P);             \
        } else if (path == GCONV_IMPL_BWW_PATH_DW) {                                             \
            const int pl_ = 128 / P->cl;                                                         \
            hipLaunchKernelGGL(name##_dw, dim3((unsigned)P->cb, (unsigned)P->splits,             \
                                               (unsigned)P->tchunks),                            \
                               dim3((unsigned)(pl_ * P->cl)), 0, stream, *P);                    \
        } else {                                                                                 \
            const dim3 grid_((unsigned)(((int64_t)P->G * P->taps * P->fchunks + 31) / 32),       \
                             (unsigned)P->splits);                                               \
            if (P->fall)                                                                         \
                hipLaunchKernelGGL(name##_few4t,                                                 \
                                   dim3((unsigned)(((int64_t)P->G * P->fchunks + 31) / 32),      \
                                        (unsigned)P->splits),                                    \
                                   dim3(128), 0, stream, *P);                                    \
            else if (P->fk == 4)                                                                 \
                hipLaunchKernelGGL(name##_few4, grid_, dim3(256), 0, stream, *P);                \
            else                                                                                 \
                hipLaunchKernelGGL(name##_few8, grid_, dim3(256), 0, stream, *P);                \
        }                                                                                        \
        GCONV_IMPL_BWW_FINISH(name##_fin, P, stream, why, len);                                  \
    }

#define GCONV_IMPL_BWW_TRY_DIRECT(name, ACT, P, path, a, stream, why, len)                       \
    GCONV_IMPL_BWW_IF(GCONV_IMPL_BWW_IS_NHWGC(ACT))(                                             \
        if ((path) != GCONV_IMPL_BWW_PATH_GEMM) return name##_direct(&(P), path, a, stream, why, \
                                                                     len);)

#define GCONV_IMPL_BWW_VEC_KERNELS(name, T)                                                      \
    GCONV_IMPL_BWW_GEMM_KERNEL(name##_g0b, T, GCONV_TILE_128x128x32, 0, 1)                       \
    GCONV_IMPL_BWW_GEMM_KERNEL(name##_g1b, T, GCONV_TILE_64x64x32, 0, 1)                         \
    GCONV_IMPL_BWW_GEMM_KERNEL(name##_g0v, T, GCONV_TILE_128x128x32, 1, 1)                       \
    GCONV_IMPL_BWW_GEMM_KERNEL(name##_g1v, T, GCONV_TILE_64x64x32, 1, 1)

/* TC kernels (fp16 / bf16 instantiations of the NHWGC and GNHWC families). */
#define GCONV_IMPL_BWW_TC_KERNEL(kname, T, TILE, SW)                                             \
    static __global__ void __launch_bounds__(256) kname(gconv_impl_bww_params P)                 \
    {                                                                                            \
        const gconv_impl_tile t = {GCONV_IMPL_TILE_ARGS(TILE)};                                  \
        gconv_impl_bww_tc_body(&P, t, T, SW);                                                    \
    }
#define GCONV_IMPL_BWW_BWH_KERNEL(kname, T, NT)                                                  \
    static __global__ void __launch_bounds__(GCONV_IMPL_HALO_THREADS, 2)                         \
        kname(const GCONV_IMPL_GRID_CONST gconv_impl_bwh_params P)                               \
    {                                                                                            \
        gconv_impl_bwh_body(&P, T, NT, gconv_impl_bwh_bufs(8), GCONV_IMPL_BWH_MTW, 0);           \
    }
/* C = K = 32, wide warps: GCONV_IMPL_BWH_MTW32 m-tiles x 4 n-tiles a warp (48 accumulators),
 * ceil(taps * 2 / MTW32) warps a group but at least 4 (the cp.async fill wants 256 threads),
 * two groups a block, one block per SM */
#define GCONV_IMPL_BWW_BWH4_KERNEL(kname, T, WH)                                                 \
    static __global__ void __launch_bounds__(GCONV_IMPL_BWH_W32_MAX, 1)                          \
        kname(const GCONV_IMPL_GRID_CONST gconv_impl_bwh_params P)                               \
    {                                                                                            \
        gconv_impl_bwh_body(&P, T, 4, gconv_impl_bwh_bufs(32), GCONV_IMPL_BWH_MTW32, WH);        \
    }
/* the narrow-K halo kernel: 4 * TG / 3 warps (TG: taps a chunk), one block per SM */
#define GCONV_IMPL_BWW_BWN_KERNEL(kname, T)                                                      \
    static __global__ void __launch_bounds__(32 * GCONV_IMPL_BWN_MAX_WARPS, 1)                   \
        kname(gconv_impl_bwn_params P)                                                           \
    {                                                                                            \
        gconv_impl_bwn_body(&P, T);                                                              \
    }
#define GCONV_IMPL_BWW_TC_KERNELS(name, T)                                                       \
    GCONV_IMPL_BWW_BWN_KERNEL(name##_bwn, T)                                                     \
    GCONV_IMPL_BWW_BWH_KERNEL(name##_bwh1, T, 1)                                                 \
    GCONV_IMPL_BWW_BWH_KERNEL(name##_bwh2, T, 2)                                                 \
    GCONV_IMPL_BWW_BWH4_KERNEL(name##_bwh4, T, 0)                                                \
    GCONV_IMPL_BWW_BWH4_KERNEL(name##_bwh4w, T, 1)                                               \
    GCONV_IMPL_BWW_TC_KERNEL(name##_tc0, T, GCONV_IMPL_BWW_TC_TILE0, 0)                          \
    GCONV_IMPL_BWW_TC_KERNEL(name##_tc1, T, GCONV_IMPL_BWW_TC_TILE1, 1)                          \
    GCONV_IMPL_BWW_TC_KERNEL(name##_tc2, T, GCONV_IMPL_BWW_TC_TILE2, 1)                          \
    GCONV_IMPL_BWW_TC_KERNEL(name##_tc3, T, GCONV_IMPL_BWW_TC_TILE3, 1)

/* BWS kernels (gconv/bwd_weight_ws.h): fp16 / bf16 instantiations of the NHWGC and GNHWC
 * families on CUDA with the 12.5+ runtime; the body is real only in sm_90a device passes. */
#define GCONV_IMPL_BWW_WS_KERNEL(kname, T, BN)                                                   \
    static __global__ void __launch_bounds__(GCONV_IMPL_WS_THREADS, 1)                           \
        kname(const __grid_constant__ gconv_impl_bws_params W)                                   \
    {                                                                                            \
        gconv_impl_bws_body(&W, BN, T);                                                          \
    }
#define GCONV_IMPL_BWW_WS_KERNELS(name, T)                                                       \
    GCONV_IMPL_BWW_WS_KERNEL(name##_bws0, T, 128)                                                \
    GCONV_IMPL_BWW_WS_KERNEL(name##_bws1, T, 256)                                                \
    GCONV_IMPL_BWW_WS_KERNEL(name##_bws2, T, 64)                                                 \
    GCONV_IMPL_BWW_UNUSED static inline int name##_bws_ready(void)                               \
    {                                                                                            \
        static unsigned known_ = 0, yes_ = 0;                                                    \
        return gconv_impl_ws_available((const void *)name##_bws0, &known_, &yes_);              \
    }

/* Plan and launch the BWS kernel when it takes the problem and the binary has it (a statement
 * that returns then; it falls through when the tensor maps cannot describe the problem). */
#define GCONV_IMPL_BWW_TRY_WS(name, T, p, P, path, a, stream, why, len)                          \
    do {                                                                                         \
        gconv_impl_bws_params W_;                                                                \
        int bn_;                                                                                 \
        if ((path) != GCONV_IMPL_BWW_PATH_GEMM || gconv_impl_bww_ws_pin == 2 ||                  \
            !gconv_impl_bws_fits(p, T, (a)->in, (a)->d_out) || !name##_bws_ready())              \
            break;                                                                               \
        bn_ = gconv_impl_bws_pick(&(P), (a)->split_k);                                           \
        if (!gconv_impl_bws_plan(&W_, &(P), bn_, (a)->split_k))                                  \
            break;                                                                               \
        {                                                                                        \
            static unsigned d0_ = 0, d1_ = 0, d2_ = 0;                                           \
            const void *k_ = bn_ == 256  ? (const void *)name##_bws1                             \
                             : bn_ == 64 ? (const void *)name##_bws2                             \
                                         : (const void *)name##_bws0;                            \
            const int smem_ = gconv_impl_ws_ring_smem(gconv_impl_bws_stage_bytes(bn_), 1);       \
            const int tl_ = W_.P.mode == GCONV_IMPL_BWW_TAIL;                                    \
            const dim3 grid_(                                                                    \
                (unsigned)(tl_ ? W_.P.tail0 + gconv_impl_bww_tail_tiles(&W_.P) * W_.P.splits     \
                               : (int64_t)W_.P.G * W_.P.mt * W_.P.nt),                           \
                tl_ ? 1u : (unsigned)W_.P.splits);                                               \
            gconv_status s_;                                                                     \
            if (gconv_impl_fwd_smem_attr(k_, smem_,                                              \
                                         bn_ == 256 ? &d1_ : bn_ == 64 ? &d2_ : &d0_) != GCONV_OK) \
                return gconv_impl_fail(GCONV_ERR_RUNTIME, why, len,                              \
                                       "cannot raise the shared-memory limit to %d bytes",       \
                                       smem_);                                                   \
            s_ = gconv_impl_bww_ws_prepare(&W_.P, a, stream, why, len);                          \
            if (s_ != GCONV_OK)                                                                  \
                return s_;                                                                       \
            if (bn_ == 256)                                                                      \
                hipLaunchKernelGGL(name##_bws1, grid_, dim3(GCONV_IMPL_WS_THREADS),              \
                                   (size_t)smem_, stream, W_);                                   \
            else if (bn_ == 64)                                                                  \
                hipLaunchKernelGGL(name##_bws2, grid_, dim3(GCONV_IMPL_WS_THREADS),              \
                                   (size_t)smem_, stream, W_);                                   \
            else                                                                                 \
                hipLaunchKernelGGL(name##_bws0, grid_, dim3(GCONV_IMPL_WS_THREADS),              \
                                   (size_t)smem_, stream, W_);                                   \
            GCONV_IMPL_BWW_FINISH(name##_fin, &W_.P, stream, why, len);                          \
        }                                                                                        \
    } while (0)

/* Plan and launch the TC kernel when it takes the problem (a statement that returns then). */
#define GCONV_IMPL_BWW_TRY_TC(name, T, p, P, path, a, stream, why, len)                          \
    do {                                                                                         \
        const int tck_ = (path) == GCONV_IMPL_BWW_PATH_GEMM                                      \
                             ? gconv_impl_bww_tc_kind(p, T, (a)->in, (a)->d_out)                 \
                             : -1;                                                               \
        if (tck_ >= 0)                                                                           \
            gconv_impl_bww_plan_tc(&(P), tck_, (a)->split_k, (a)->deterministic);                \
        if (tck_ == 0)                                                                           \
            GCONV_IMPL_BWW_GEMM_LAUNCH(name##_tc0, name##_fin, T,                                \
                                       GCONV_IMPL_BWW_TC_TILE0, P, a, stream, why, len);         \
        if (tck_ == 1)                                                                           \
            GCONV_IMPL_BWW_GEMM_LAUNCH(name##_tc1, name##_fin, T,                                \
                                       GCONV_IMPL_BWW_TC_TILE1, P, a, stream, why, len);         \
        if (tck_ == 2)                                                                           \
            GCONV_IMPL_BWW_GEMM_LAUNCH(name##_tc2, name##_fin, T,                                \
                                       GCONV_IMPL_BWW_TC_TILE2, P, a, stream, why, len);         \
        if (tck_ == 3)                                                                           \
            GCONV_IMPL_BWW_GEMM_LAUNCH(name##_tc3, name##_fin, T,                                \
                                       GCONV_IMPL_BWW_TC_TILE3, P, a, stream, why, len);         \
    } while (0)

/* Plan and launch the BWN kernel when it takes the problem (a statement that returns then):
 * the automatic algorithm without a user split only. */
#define GCONV_IMPL_BWW_TRY_BWN(name, T, p, P, path, a, stream, why, len)                         \
    do {                                                                                         \
        gconv_impl_bwn_params B_;                                                                \
        if ((path) == GCONV_IMPL_BWW_PATH_GEMM && (a)->algo == GCONV_BWD_WEIGHT_ALGO_AUTO &&     \
            (a)->split_k <= 0 && gconv_impl_bwn_plan(p, &(P), &B_)) {                            \
            static unsigned d_ = 0;                                                              \
            const int smem_ = gconv_impl_bwn_smem(&B_);                                          \
            gconv_status s_;                                                                     \
            /* the attribute is set once: to the most a plan may use on the device */           \
            if (gconv_impl_fwd_smem_attr((const void *)name##_bwn, B_.smax, &d_) != GCONV_OK)    \
                return gconv_impl_fail(GCONV_ERR_RUNTIME, why, len,                              \
                                       "cannot raise the shared-memory limit to %d bytes",       \
                                       B_.smax);                                                 \
            s_ = gconv_impl_bww_ws_prepare(&B_.w, a, stream, why, len);                          \
            if (s_ != GCONV_OK)                                                                  \
                return s_;                                                                       \
            hipLaunchKernelGGL(name##_bwn, dim3((unsigned)B_.blocks), dim3(32 * B_.warps),       \
                               (size_t)smem_, stream, B_);                                       \
            GCONV_IMPL_BWW_FINISH(name##_fin, &B_.w, stream, why, len);                          \
        }                                                                                        \
    } while (0)

/* Plan and launch the BWH kernel when it takes the problem (a statement that returns then):
 * the automatic algorithm without a user split only. */
#define GCONV_IMPL_BWW_TRY_BWH(name, T, p, P, path, a, stream, why, len)                         \
    do {                                                                                         \
        gconv_impl_bwh_params B_;                                                                \
        if ((path) == GCONV_IMPL_BWW_PATH_GEMM && (a)->algo == GCONV_BWD_WEIGHT_ALGO_AUTO &&     \
            (a)->split_k <= 0 && gconv_impl_bwh_plan(p, &(P), (a)->deterministic, &B_)) {        \
            static unsigned d1_ = 0, d2_ = 0, d4_ = 0, d4w_ = 0, ck_[2] = {0u, 0u},              \
                            cy_[2] = {0u, 0u};                                                   \
            int smem_, nt_ = B_.hi.K / 8;                                                        \
            const void *k_ = nt_ == 1   ? (const void *)name##_bwh1                              \
                             : nt_ == 2 ? (const void *)name##_bwh2                              \
                                        : (const void *)name##_bwh4;                             \
            gconv_status s_;                                                                     \
            const int mx_ = nt_ == 4 ? GCONV_IMPL_BWH4_MAX_SMEM : GCONV_IMPL_BWH_MAX_SMEM;       \
            gconv_impl_bwh_tma_setup(&B_, p); /* the copies by the copy engine */                \
            smem_ = gconv_impl_bwh_smem(&B_);                                                    \
            /* the attribute is set once per device and kernel: to the most a plan uses */       \
            if (gconv_impl_fwd_smem_attr(k_, mx_, nt_ == 1 ? &d1_ : nt_ == 2 ? &d2_ : &d4_) !=   \
                GCONV_OK)                                                                        \
                return gconv_impl_fail(GCONV_ERR_RUNTIME, why, len,                              \
                                       "cannot raise the shared-memory limit to %d bytes", mx_); \
            if (nt_ == 4 && gconv_impl_fwd_smem_attr((const void *)name##_bwh4w, mx_, &d4w_) !=  \
                                GCONV_OK)                                                        \
                return gconv_impl_fail(GCONV_ERR_RUNTIME, why, len,                              \
                                       "cannot raise the shared-memory limit to %d bytes", mx_); \
            s_ = gconv_impl_bww_ws_prepare(&B_.w, a, stream, why, len);                          \
            if (s_ != GCONV_OK)                                                                  \
                return s_;                                                                       \
            if (nt_ == 4 &&                                                                      \
                gconv_impl_bwh_cl_plan(&B_, &smem_, k_, (const void *)name##_bwh4w, ck_, cy_)) {   \
                /* the cluster form: whole chunks (final values) or a slab a pair */             \
                gconv_impl_bwh_cl_launch(B_.w.mode == GCONV_IMPL_BWW_DIRECT                      \
                                             ? (const void *)name##_bwh4w                        \
                                             : k_,                                               \
                                         &B_, smem_, stream);                                    \
                GCONV_IMPL_BWW_FINISH(name##_fin, &B_.w, stream, why, len);                      \
            }                                                                                    \
            if (nt_ == 1)                                                                        \
                hipLaunchKernelGGL(name##_bwh1, dim3((unsigned)B_.hi.blocks),                    \
                                   dim3(GCONV_IMPL_HALO_THREADS), (size_t)smem_, stream, B_);    \
            else if (nt_ == 2)                                                                   \
                hipLaunchKernelGGL(name##_bwh2, dim3((unsigned)B_.hi.blocks),                    \
                                   dim3(GCONV_IMPL_HALO_THREADS), (size_t)smem_, stream, B_);    \
            else                                                                                 \
                hipLaunchKernelGGL(name##_bwh4, dim3((unsigned)B_.hi.blocks),                    \
                                   dim3((unsigned)B_.threads), (size_t)smem_, stream, B_);       \
            GCONV_IMPL_BWW_FINISH(name##_fin, &B_.w, stream, why, len);                          \
        }                                                                                        \
    } while (0)

/* Whether an instantiation has TC kernels: T 16-bit and ACT_FAMILY NHWGC or GNHWC. */
#define GCONV_IMPL_BWW_T16_GCONV_F16 1
#define GCONV_IMPL_BWW_T16_GCONV_BF16 1
#define GCONV_IMPL_BWW_T16_GCONV_F32 0
#define GCONV_IMPL_BWW_AND_00 0
#define GCONV_IMPL_BWW_AND_01 0
#define GCONV_IMPL_BWW_AND_10 0
#define GCONV_IMPL_BWW_AND_11 1
#define GCONV_IMPL_BWW_HAS_TC(T, F)                                                              \
    GCONV_IMPL_CAT(GCONV_IMPL_BWW_AND_, GCONV_IMPL_CAT(GCONV_IMPL_CAT(GCONV_IMPL_BWW_T16_, T),   \
                                                       GCONV_IMPL_BWW_VECFAM(F)))

/* Whether an instantiation has BWS kernels: as TC, and the CUDA 12.5+ runtime (gconv/fwd.h's
 * GCONV_IMPL_FWD_WS: the forward's warp-specialised kernels exist). */
#define GCONV_IMPL_BWW_HAS_WS(T, F) GCONV_IMPL_AND(GCONV_IMPL_BWW_HAS_TC(T, F), GCONV_IMPL_FWD_WS)

/* Launch the vector GEMM kernels (vector families only). */
#define GCONV_IMPL_BWW_TRY_VEC(name, T, kind, vm, P, a, stream, why, len)                        \
    if ((vm) == 2 && (kind) == 0)                                                                \
        GCONV_IMPL_BWW_GEMM_LAUNCH(name##_g0v, name##_fin, T, GCONV_TILE_128x128x32, P, a, stream, \
                                   why, len);                                                    \
    if ((vm) == 2)                                                                               \
        GCONV_IMPL_BWW_GEMM_LAUNCH(name##_g1v, name##_fin, T, GCONV_TILE_64x64x32, P, a, stream, \
                                   why, len);                                                    \
    if ((vm) == 1 && (kind) == 0)                                                                \
        GCONV_IMPL_BWW_GEMM_LAUNCH(name##_g0b, name##_fin, T, GCONV_TILE_128x128x32, P, a, stream, \
                                   why, len);                                                    \
    if ((vm) == 1)                                                                               \
        GCONV_IMPL_BWW_GEMM_LAUNCH(name##_g1b, name##_fin, T, GCONV_TILE_64x64x32, P, a, stream, \
                                   why, len);

#define GCONV_BWD_WEIGHT_OUT(name, T, TOUT, ACT_FAMILY, WEI_FAMILY)                              \
    GCONV_IMPL_BWW_GEMM_KERNEL(name##_g0, T, GCONV_TILE_128x128x32, 0, 0)                        \
    GCONV_IMPL_BWW_GEMM_KERNEL(name##_g1, T, GCONV_TILE_64x64x32, 0, 0)                          \
    GCONV_IMPL_BWW_IF(GCONV_IMPL_BWW_VECFAM(ACT_FAMILY))(GCONV_IMPL_BWW_VEC_KERNELS(name, T))        \
    GCONV_IMPL_BWW_IF(GCONV_IMPL_BWW_HAS_TC(T, ACT_FAMILY))(GCONV_IMPL_BWW_TC_KERNELS(name, T))     \
    GCONV_IMPL_BWW_IF(GCONV_IMPL_BWW_HAS_WS(T, ACT_FAMILY))(GCONV_IMPL_BWW_WS_KERNELS(name, T))     \
    GCONV_IMPL_BWW_IF(GCONV_IMPL_NOT(GCONV_IMPL_BWW_HAS_WS(T, ACT_FAMILY)))(                     \
        GCONV_IMPL_BWW_UNUSED static inline int name##_bws_ready(void) { return 0; })            \
    GCONV_IMPL_BWW_FIN_KERNEL(name)                                                              \
    GCONV_IMPL_BWW_IF(GCONV_IMPL_BWW_IS_NHWGC(ACT_FAMILY))(GCONV_IMPL_BWW_DIRECT_KERNELS(name, T)) \
    GCONV_IMPL_BWW_UNUSED static inline int name##_supports(const gconv_problem *p, char *why,   \
                                                            size_t len)                          \
    {                                                                                            \
        return gconv_impl_bww_check(p, NULL, T, TOUT, ACT_FAMILY, WEI_FAMILY, why, len) ==       \
               GCONV_OK;                                                                         \
    }                                                                                            \
    GCONV_IMPL_BWW_UNUSED static inline size_t name##_workspace_size(                            \
        const gconv_problem *p, const gconv_bwd_weight_args *a)                                  \
    {                                                                                            \
        if (gconv_impl_bww_check(p, NULL, T, TOUT, ACT_FAMILY, WEI_FAMILY, NULL, 0) != GCONV_OK) \
            return 0;                                                                            \
        return gconv_impl_bww_ws_default(p, T, TOUT, a);                                         \
    }                                                                                            \
    GCONV_IMPL_BWW_UNUSED static inline gconv_status name(                                       \
        const gconv_problem *p, const gconv_bwd_weight_args *a, hipStream_t stream)              \
    {                                                                                            \
        char *why_ = a ? a->why : NULL;                                                          \
        size_t len_ = a ? a->why_len : 0;                                                        \
        gconv_impl_bww_params P;                                                                 \
        gconv_status s_;                                                                         \
        int path_, kind_;                                                                        \
        if (!a)                                                                                  \
            return gconv_impl_fail(GCONV_ERR_NULL, NULL, 0, "the argument pointer is null");     \
        s_ = gconv_impl_bww_check(p, a, T, TOUT, ACT_FAMILY, WEI_FAMILY, why_, len_);            \
        if (s_ != GCONV_OK)                                                                      \
            return s_;                                                                           \
        if (why_ && len_)                                                                        \
            why_[0] = '\0';                                                                      \
        gconv_impl_bww_fill(p, T, TOUT, &P);                                                     \
        P.in = a->in, P.dout = a->d_out, P.dwei = a->d_wei;                                      \
        P.alpha = a->alpha, P.beta = a->beta;                                                    \
        path_ = gconv_impl_bww_path_algo(p, T, a->in, a->d_out, a->algo);                        \
        if (path_ < 0)                                                                           \
            return gconv_impl_fail(GCONV_ERR_UNSUPPORTED, why_, len_,                            \
                                   "the direct kernels need the NHWGC family");                  \
        GCONV_IMPL_BWW_IF(GCONV_IMPL_BWW_HAS_TC(T, ACT_FAMILY))(                                 \
            if (gconv_impl_bww_pair_bwh(p, &P, path_, a)) path_ = GCONV_IMPL_BWW_PATH_GEMM;)    \
        if (path_ != GCONV_IMPL_BWW_PATH_GEMM) {                                                 \
            gconv_impl_bww_plan(&P, path_, 0, 0, 0, a->split_k, a->deterministic);               \
            GCONV_IMPL_BWW_TRY_DIRECT(name, ACT_FAMILY, P, path_, a, stream, why_, len_)         \
            gconv_impl_bww_fill(p, T, TOUT, &P);                                                 \
            P.in = a->in, P.dout = a->d_out, P.dwei = a->d_wei;                                  \
            P.alpha = a->alpha, P.beta = a->beta;                                                \
        }                                                                                        \
        GCONV_IMPL_BWW_IF(GCONV_IMPL_BWW_HAS_WS(T, ACT_FAMILY))(                                 \
            GCONV_IMPL_BWW_TRY_WS(name, T, p, P, path_, a, stream, why_, len_);)                 \
        GCONV_IMPL_BWW_IF(GCONV_IMPL_BWW_HAS_TC(T, ACT_FAMILY))(                                 \
            GCONV_IMPL_BWW_TRY_BWN(name, T, p, P, path_, a, stream, why_, len_);                 \
            GCONV_IMPL_BWW_TRY_BWH(name, T, p, P, path_, a, stream, why_, len_);                 \
            GCONV_IMPL_BWW_TRY_TC(name, T, p, P, path_, a, stream, why_, len_);)                 \
        kind_ = gconv_impl_bww_gemm_kind(p);                                                     \
        if (kind_ == 0) {                                                                        \
            gconv_impl_bww_plan(&P, GCONV_IMPL_BWW_PATH_GEMM, 128, 128, 32, a->split_k,          \
                                a->deterministic);                                               \
            GCONV_IMPL_BWW_IF(GCONV_IMPL_BWW_VECFAM(ACT_FAMILY))(                                    \
                GCONV_IMPL_BWW_TRY_VEC(name, T, kind_,                                           \
                                   gconv_impl_bww_vmode(p, T, 1, a->in, a->d_out), P, a, stream, \
                                   why_, len_))           \
            GCONV_IMPL_BWW_GEMM_LAUNCH(name##_g0, name##_fin, T, GCONV_TILE_128x128x32, P, a,    \
                                       stream, why_, len_);                                      \
        }                                                                                        \
        gconv_impl_bww_plan(&P, GCONV_IMPL_BWW_PATH_GEMM, 64, 64, 32, a->split_k,                \
                            a->deterministic);                                                   \
        GCONV_IMPL_BWW_IF(GCONV_IMPL_BWW_VECFAM(ACT_FAMILY))(                                        \
            GCONV_IMPL_BWW_TRY_VEC(name, T, kind_,                                           \
                                   gconv_impl_bww_vmode(p, T, 1, a->in, a->d_out), P, a, stream, \
                                   why_, len_))               \
        GCONV_IMPL_BWW_GEMM_LAUNCH(name##_g1, name##_fin, T, GCONV_TILE_64x64x32, P, a, stream,  \
                                   why_, len_);                                                  \
    }

#define GCONV_BWD_WEIGHT(name, T, ACT_FAMILY, WEI_FAMILY)                                        \
    GCONV_BWD_WEIGHT_OUT(name, T, T, ACT_FAMILY, WEI_FAMILY)

/* Pinned tile: implicit GEMM only. */
#define GCONV_BWD_WEIGHT_TILED(name, T, ACT_FAMILY, WEI_FAMILY, TILE)                            \
    GCONV_IMPL_BWW_GEMM_KERNEL(name##_gt, T, TILE, 0, 0)                                         \
    GCONV_IMPL_BWW_IF(GCONV_IMPL_BWW_VECFAM(ACT_FAMILY))(                                            \
        GCONV_IMPL_BWW_GEMM_KERNEL(name##_gtv, T, TILE, 1, 1))                                   \
    GCONV_IMPL_BWW_FIN_KERNEL(name)                                                              \
    GCONV_IMPL_BWW_UNUSED static inline int name##_supports(const gconv_problem *p, char *why,   \
                                                            size_t len)                          \
    {                                                                                            \
        return gconv_impl_bww_check(p, NULL, T, T, ACT_FAMILY, WEI_FAMILY, why, len) ==          \
               GCONV_OK;                                                                         \
    }                                                                                            \
    GCONV_IMPL_BWW_UNUSED static inline size_t name##_workspace_size(                            \
        const gconv_problem *p, const gconv_bwd_weight_args *a)                                  \
    {                                                                                            \
        const gconv_impl_tile t_ = {GCONV_IMPL_TILE_ARGS(TILE)};                                 \
        gconv_impl_bww_params P;                                                                 \
        size_t w0_, w1_;                                                                         \
        if (gconv_impl_bww_check(p, NULL, T, T, ACT_FAMILY, WEI_FAMILY, NULL, 0) != GCONV_OK ||  \
            (a && a->split_k < 0))                                                               \
            return 0;                                                                            \
        gconv_impl_bww_fill(p, T, T, &P);                                                        \
        gconv_impl_bww_plan(&P, GCONV_IMPL_BWW_PATH_GEMM, t_.bm, t_.bn, t_.bk,                   \
                            a ? a->split_k : 0, 1);                                              \
        w1_ = gconv_impl_bww_ws_bytes(&P);                                                       \
        gconv_impl_bww_plan(&P, GCONV_IMPL_BWW_PATH_GEMM, t_.bm, t_.bn, t_.bk,                   \
                            a ? a->split_k : 0, 0);                                              \
        w0_ = gconv_impl_bww_ws_bytes(&P);                                                       \
        if (a)                                                                                   \
            return a->deterministic ? w1_ : w0_;                                                 \
        return w1_ > w0_ ? w1_ : w0_;                                                            \
    }                                                                                            \
    GCONV_IMPL_BWW_UNUSED static inline gconv_status name(                                       \
        const gconv_problem *p, const gconv_bwd_weight_args *a, hipStream_t stream)              \
    {                                                                                            \
        const gconv_impl_tile tt_ = {GCONV_IMPL_TILE_ARGS(TILE)};                                \
        char *why_ = a ? a->why : NULL;                                                          \
        size_t len_ = a ? a->why_len : 0;                                                        \
        gconv_impl_bww_params P;                                                                 \
        gconv_status s_;                                                                         \
        if (!a)                                                                                  \
            return gconv_impl_fail(GCONV_ERR_NULL, NULL, 0, "the argument pointer is null");     \
        s_ = gconv_impl_bww_check(p, a, T, T, ACT_FAMILY, WEI_FAMILY, why_, len_);               \
        if (s_ != GCONV_OK)                                                                      \
            return s_;                                                                           \
        if (why_ && len_)                                                                        \
            why_[0] = '\0';                                                                      \
        gconv_impl_bww_fill(p, T, T, &P);                                                        \
        P.in = a->in, P.dout = a->d_out, P.dwei = a->d_wei;                                      \
        P.alpha = a->alpha, P.beta = a->beta;                                                    \
        gconv_impl_bww_plan(&P, GCONV_IMPL_BWW_PATH_GEMM, tt_.bm, tt_.bn, tt_.bk, a->split_k,    \
                            a->deterministic);                                                   \
        GCONV_IMPL_BWW_IF(GCONV_IMPL_BWW_VECFAM(ACT_FAMILY))(                                        \
            if (gconv_impl_bww_vmode(p, T, 1, a->in, a->d_out) == 2 &&                           \
                gconv_impl_bww_vtile_ok(tt_.bm, tt_.bn, tt_.bk, gconv_impl_tile_threads(tt_),    \
                                        (int)gconv_dtype_size(T)))                               \
                GCONV_IMPL_BWW_GEMM_LAUNCH(name##_gtv, name##_fin, T, TILE, P, a, stream, why_,  \
                                           len_);)                                               \
        GCONV_IMPL_BWW_GEMM_LAUNCH(name##_gt, name##_fin, T, TILE, P, a, stream, why_, len_);    \
    }

#endif /* GCONV_BWD_WEIGHT_H */
