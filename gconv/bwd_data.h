/* gconv/bwd_data.h: grouped convolution backward data with a multiple-D fused epilogue,
 * d_in = epilogue(conv_bwd_data(d_out, wei)) per group.
 *
 * Usage:
 *     GCONV_BWD_DATA(bwdd_f16, GCONV_F16, GCONV_NHWGC, GCONV_GKYXC)     at file scope, once
 *
 *     size_t ws = bwdd_f16_workspace_size(&p);          bytes; 0 for some problems
 *     gconv_bwd_data_args a;
 *     memset(&a, 0, sizeof a);
 *     a.d_out = dy; a.wei = w; a.d_in = dx;             device pointers, in the problem's layouts
 *     a.epi = &e;                                       NULL: plain store
 *     a.workspace = ws_ptr; a.workspace_size = ws;      when ws > 0
 *     a.why = why; a.why_len = sizeof why;              optional: the reason of a refusal
 *     gconv_status s = bwdd_f16(&p, &a, stream);        asynchronous; never synchronises
 *
 * The epilogue (gconv/epilogue.h) is y = act(alpha*acc + sum beta_i * D_i) with each D tensor
 * read at the INPUT's logical position (g, n, c, d, h, w) through its own strides (a residual
 * gradient has gconv_in_strides(&p); broadcasts by zero strides). Built-ins: overwrite
 * (NULL / gconv_epi_scale(1)), scale, add one D (residual gradient), add two Ds, scale + add,
 * clamp (gradient clipping: act = gconv_clamp(lo, hi)), ReLU. Input positions that no output
 * reaches (pads larger than the dilated filter, strides larger than the filter) are written
 * too, with the epilogue applied to 0.
 *
 * Instantiations (ACT_FAMILY one of GCONV_NHWGC / GCONV_GNHWC / GCONV_NGCHW for d_in and d_out,
 * WEI_FAMILY one of GCONV_GKYXC / GCONV_GKCYX; the 2D name stands for its 1D/2D/3D family):
 *   GCONV_BWD_DATA(name, T, ACT_FAMILY, WEI_FAMILY)
 *       picks the algorithm at run time, in this order:
 *       1. NHWGC, all strides 1, pads at most the dilated filter span, and depthwise
 *          (C = K = 1) or C = K = 4 per group, or a forward view the halo tensor-core kernel
 *          of gconv/igemm_halo.h takes (K in {8, 16, 32}, C even and at most 32, or C = K = 4
 *          with G even; fp16 / bf16, 1D / 2D, CUDA): the halo kernel where it plans, else the
 *          forward direct kernels of gconv/direct_fwd.h (DW3 / FEWC); either
 *          the halo kernel run the equivalent forward convolution of d_out with the weights
 *          flipped and transposed by a pre-pass into the workspace (pads dil*(F-1) - pad);
 *          depthwise 3x3 (DW3) reads the user's weights in reverse tap order instead, and
 *          the halo kernel reads GKYXC weights in place where C is a multiple of 8 (the
 *          view's K; gconv_impl_halo_plan_wtr) or C = K = 4 (pair mode, whose weight fill
 *          builds the view's weights from them), both with no pre-pass (the workspace is then
 *          not touched).
 *          (GCONV_BWD_DATA_DW_VIA_FWD 0 leaves depthwise 3x3 to step 2.)
 *       2. C = 1 per group (depthwise, channel multipliers): direct kernels. NHWGC depthwise
 *          (C = K = 1) 3x3 with equal strides 1 or 2, no dilation, G a multiple of 4,
 *          16-byte aligned d_out / d_in: the DWB kernel (one thread = 4 channels, 8 bytes of
 *          fp16 / bf16; it loads only the d_out vectors its taps reach: the column runs are
 *          aligned to the stride phase, so which of the 3 horizontal taps feed a column is
 *          known at compile time; vectorised D-tensor epilogue). Stride 1: 4 input columns of
 *          one input row a thread. Stride 2, the rolling form: 2 input columns of a band of 8
 *          input rows (4 with vector D tensors), walking down the band with the two d_out rows it
 *          needs in registers, so each d_out row is loaded once per band and the next one's
 *          loads overlap the current row's work. Otherwise the GENERIC kernel (one thread
 *          per input element, gathering from the output side: taps whose offset misses the stride
 *          phase are skipped before any load; every tensor through its layout strides;
 *          64-bit offsets).
 *       3. Otherwise the implicit GEMM of gconv/igemm.h, decomposed by stride phase: for each
 *          phase (the input positions i = r + S*q with the same residue r per axis) only the
 *          taps f with (r + pad - f*dil) % S == 0 contribute, and the phase is a stride-1
 *          forward convolution of d_out with those taps flipped and transposed (M = N * the
 *          phase's input pixels, N = C, Kg = K * its taps), run on the forward kernels of
 *          gconv/fwd.h with the output and D-tensor strides multiplied by S and their origin
 *          moved to the phase. A pre-pass writes the phases' weights into the workspace as
 *          [G][C][taps][K] (16-byte B gathers); phases that no tap reaches are written by a
 *          fill kernel (f(0)). One launch per phase (prod S; strides up to 4, larger ones
 *          take GENERIC). Vector gathers (NHWGC / GNHWC, K a multiple of the 16-byte vector,
 *          aligned d_out and workspace) use tiles 128x128 or 128x32 (C <= 32); element-wise
 *          gathers 64x64; on sm_90a builds a phase with K a multiple of 64 and C >= 64 (fp16 /
 *          bf16, vector gathers) runs on the forward's warp-specialised TMA / wgmma kernel
 *          (gconv/igemm_ws.h); at stride 1 with GKYXC weights that kernel first tries to read
 *          the user's weights in place (one launch, no pre-pass: its B operand is then
 *          MN-major, the taps flipped in the copy coordinates), which needs C a multiple of
 *          8 (16-byte rows for the copy engine). Math as in forward: mma.sync on sm_80+
 *          (fp16 / bf16), MFMA on gfx908/90a/940, FMA elsewhere and for fp32.
 *   GCONV_BWD_DATA_TILED(name, T, ACT_FAMILY, WEI_FAMILY, TILE)
 *       implicit GEMM only (every problem, strides up to 4), pinned tile TILE (GCONV_TILE_*);
 *       for NHWGC / GNHWC it needs K a multiple of the vector and 16-byte aligned d_out, d_in
 *       and workspace (else GCONV_ERR_ALIGNMENT).
 *   GCONV_BWD_DATA_USER_OP(name, T, ACT_FAMILY, WEI_FAMILY, OPFN)
 *       as GCONV_BWD_DATA with the __device__ function OPFN in place of the built-in epilogue:
 *       float OPFN(const gconv_epilogue *e, gconv_dtype t, float acc, int g, int n, int c,
 *                  int d, int h, int w)
 *       (input coordinates). With a stride > 1 it runs the direct kernels (the phase GEMM
 *       passes phase coordinates to its epilogue, which only the built-in one can undo).
 * Each defines
 *   int    name_supports(const gconv_problem *p, char *why, size_t len);  1, or 0 + reason
 *   size_t name_workspace_size(const gconv_problem *p);  G*K*C*taps elements (the weights'
 *                                                        size) for routes 1 and 3, else 0
 *   gconv_status name(const gconv_problem *p, const gconv_bwd_data_args *a, hipStream_t stream);
 *
 * Refusals (nothing launched): the status of gconv_problem_check; GCONV_ERR_LAYOUT (a layout
 * not of the instantiation's families); GCONV_ERR_NULL (null args, d_out, wei, d_in, D
 * pointer); GCONV_ERR_ALIGNMENT (a pointer not aligned to its element; TILED as above);
 * GCONV_ERR_ARGUMENT (bad epilogue); GCONV_ERR_WORKSPACE (workspace_size > 0 and the
 * workspace is null or smaller); GCONV_ERR_UNSUPPORTED (sizes beyond the kernels' limits).
 *
 * Index width: 32-bit kernels when every tensor has fewer than 2^31 elements, 64-bit ones
 * otherwise (tensors over 2 GB work). Precision: fp32 accumulation; fp32 on FMA (no tf32).
 */
#ifndef GCONV_BWD_DATA_H
#define GCONV_BWD_DATA_H

#include "device.h"
#include "epilogue.h"
#include "fwd.h"
#include "layout.h"
#include "problem.h"

typedef struct gconv_bwd_data_args {
    const void *d_out;         /* device pointers, in the problem's layouts */
    const void *wei;
    void *d_in;
    const gconv_epilogue *epi; /* NULL = plain store */
    void *workspace;           /* if name_workspace_size > 0 */
    size_t workspace_size;
    char *why;                 /* optional: reason of a refusal */
    size_t why_len;
} gconv_bwd_data_args;

#define GCONV_IMPL_BWDD_MAXS 4     /* largest stride of the phase GEMM */
#define GCONV_IMPL_BWDD_MAXPH 64   /* phases: MAXS^3 */
#define GCONV_IMPL_BWDD_BLOCK 256  /* threads per block of the simple kernels */
#define GCONV_IMPL_BWDD_DW_BLOCK 128
#define GCONV_IMPL_BWDD_DW_TW_MAX 4 /* input columns per DWB thread, at most */
/* DWB's row form, built-in epilogue with D vectors: 1 loads the first D before the FMAs
 * (latency hidden, 8 more registers), 0 at the store (more blocks per SM); the rolling form
 * always loads it at the top of a step */
#ifndef GCONV_IMPL_BWDD_DQ_EARLY
#define GCONV_IMPL_BWDD_DQ_EARLY 0
#endif

/* Input columns per thread of DWB's row form (stride 1; with 8 at stride 2 it ran MobileNetV2
 * 96@112 s2 at 95.9 us, which the rolling form below took to 71.7). */
#define GCONV_IMPL_BWDD_DW_TW 4
/* The rolling form (stride 2, gconv_impl_bwdd_dwr_body): input columns per thread, and input
 * rows per band for epilogue mode (1 plain, 2 D vectors, 0 EPI_FN; even): see
 * GCONV_IMPL_BWDD_DWR_KERNEL for the measurements. */
#define GCONV_IMPL_BWDD_R2_TW 2
static inline GCONV_HD int gconv_impl_bwdd_dwr_rb(int mode)
{
    return mode == 2 ? 4 : 8;
}

/* ---- GENERIC: one thread per input element, gathering from the output side ----------------- */

typedef struct gconv_impl_bwdd_gen_params {
    int G, N, C, K;
    int in[3], out[3], f[3], st[3], dl[3], pl[3];
    int order;       /* 0 (n,d,h,w,g,c) NHWGC, 1 (g,n,d,h,w,c) GNHWC, 2 (n,g,c,d,h,w) NGCHW */
    long long total; /* input elements */
    gconv_act_strides si, so;
    gconv_wei_strides sw;
} gconv_impl_bwdd_gen_params;

/* d_in[g,n,c,i] = sum over taps f with i + pad - f*dil = o*stride (0 <= o < out) and over k of
 * d_out[g,n,k,o] * wei[g,k,c,f]. A tap whose offset misses the stride phase is skipped before
 * any load. */
static __device__ __forceinline__ void gconv_impl_bwdd_gen_body(
    const gconv_impl_bwdd_gen_params *pp, const char *dout, const char *wei, char *din,
    const gconv_epilogue *e, gconv_impl_epi_fn epi, const int dt)
{
    int64_t idx;
    for (idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; idx < pp->total;
         idx += (int64_t)gridDim.x * blockDim.x) {
        int64_t r = idx;
        int g, n, c, i0, i1, i2, z, y, x, k;
        float acc = 0.0f;
        if (pp->order == 2) {
            i2 = (int)(r % pp->in[2]), r /= pp->in[2];
            i1 = (int)(r % pp->in[1]), r /= pp->in[1];
            i0 = (int)(r % pp->in[0]), r /= pp->in[0];
            c = (int)(r % pp->C), r /= pp->C;
            g = (int)(r % pp->G), n = (int)(r / pp->G);
        } else {
            c = (int)(r % pp->C), r /= pp->C;
            g = 0;
            if (pp->order == 0)
                g = (int)(r % pp->G), r /= pp->G;
            i2 = (int)(r % pp->in[2]), r /= pp->in[2];
            i1 = (int)(r % pp->in[1]), r /= pp->in[1];
            i0 = (int)(r % pp->in[0]), r /= pp->in[0];
            if (pp->order == 0)
                n = (int)r;
            else
                n = (int)(r % pp->N), g = (int)(r / pp->N);
        }
        for (z = 0; z < pp->f[0]; z++) {
            const int t0 = i0 + pp->pl[0] - z * pp->dl[0];
            int o0;
            if (t0 < 0 || t0 % pp->st[0])
                continue;
            o0 = t0 / pp->st[0];
            if (o0 >= pp->out[0])
                continue;
            for (y = 0; y < pp->f[1]; y++) {
                const int t1 = i1 + pp->pl[1] - y * pp->dl[1];
                int o1;
                if (t1 < 0 || t1 % pp->st[1])
                    continue;
                o1 = t1 / pp->st[1];
                if (o1 >= pp->out[1])
                    continue;
                for (x = 0; x < pp->f[2]; x++) {
                    const int t2 = i2 + pp->pl[2] - x * pp->dl[2];
                    int o2;
                    int64_t ob, wb;
                    if (t2 < 0 || t2 % pp->st[2])
                        continue;
                    o2 = t2 / pp->st[2];
                    if (o2 >= pp->out[2])
                        continue;
                    ob = gconv_act_offset(&pp->so, g, n, 0, o0, o1, o2);
                    wb = gconv_wei_offset(&pp->sw, g, 0, c, z, y, x);
                    for (k = 0; k < pp->K; k++)
                        acc = fmaf(gconv_impl_ld_elem(dout, ob + k * pp->so.c, dt),
                                   gconv_impl_ld_elem(wei, wb + k * pp->sw.k, dt), acc);
                }
            }
        }
        gconv_impl_st_elem(din, gconv_act_offset(&pp->si, g, n, c, i0, i1, i2),
                           epi(e, (gconv_dtype)dt, acc, g, n, c, i0, i1, i2), dt);
    }
}

/* ---- DWB: depthwise 3x3 (C = K = 1), NHWGC, stride 1 or 2, 16-byte channel vectors ---------- */

typedef struct gconv_impl_bwdd_dw_params {
    int H, W;         /* input (d_in) rows, columns */
    int Ho, Wo;       /* output (d_out) rows, columns */
    int D;            /* depth of a 3D problem with a trivial depth axis (folded into the batch) */
    int GC;           /* channels per pixel (= G) */
    int ph, pw;       /* pads before the first row / column */
    int cvs;          /* channel vectors per pixel */
    int ub;           /* first column tile start in u = iw + pw space (a multiple of TW) */
    int wts;          /* column tiles */
    int wei_vec;      /* weights 16-byte aligned */
    int ur, hbs;      /* rolling form (stride 2): first band's row in u = ih + ph space (even),
                       * bands (of gconv_impl_bwdd_dwr_rb rows); hbs 0: the row form */
    long long items;  /* N*D * H * wts * cvs, or N*D * hbs * wts * cvs (rolling) */
} gconv_impl_bwdd_dw_params;

/* A DWB item's indices, channel vector fastest: item = ((nd * rows + r) * wts + wt) * cvs + cv
 * (rows: input rows, or bands in the rolling form); 32-bit divisions where the items fit. */
static __device__ __forceinline__ void gconv_impl_bwdd_dw_item(const gconv_impl_bwdd_dw_params *pp,
                                                              int64_t item, int rows, int *cv,
                                                              int *wt, int *r, int *nd)
{
    if (pp->items <= INT_MAX) {
        unsigned t = (unsigned)item;
        *cv = (int)(t % (unsigned)pp->cvs);
        t /= (unsigned)pp->cvs;
        *wt = (int)(t % (unsigned)pp->wts);
        t /= (unsigned)pp->wts;
        *r = (int)(t % (unsigned)rows);
        *nd = (int)(t / (unsigned)rows);
    } else {
        int64_t t = item;
        *cv = (int)(t % pp->cvs);
        t /= pp->cvs;
        *wt = (int)(t % pp->wts);
        t /= pp->wts;
        *r = (int)(t % rows);
        *nd = (int)(t / rows);
    }
}

/* The first D tensor's vectors at input row ih, columns iw = u0 + j - pw (j < TW), channels
 * c0 .. c0 + 3, into dq[j] (zeros outside the row; nothing without D tensors). */
static __device__ __forceinline__ void gconv_impl_bwdd_dw_dq(
    const gconv_impl_bwdd_dw_params *pp, const gconv_epilogue *e, const int dt, const int TW,
    uint32_t (*dq)[4], const int c0, const int n, const int d, const int ih, const int u0)
{
    const int es = dt == GCONV_F32 ? 4 : 2;
    if (e->num_d > 0) {
        const gconv_act_strides *ds = &e->d[0].strides;
#pragma unroll
        for (int j = 0; j < TW; j++) {
            const int iw = u0 + j - pp->pw;
            if ((unsigned)iw < (unsigned)pp->W)
                gconv_impl_ld_raw(dq[j], (const char *)e->d[0].data +
                                             gconv_act_offset(ds, c0, n, 0, d, ih, iw) * es,
                                  4 * es);
            else
                gconv_impl_zero_raw(dq[j], 4 * es);
        }
    }
}

/* Epilogue and store of one row piece of the DWB kernels: input row ih (op: its pixel 0's
 * channel c0 in d_in), columns iw = u0 + j - pw for j < TW (those inside the row), channels
 * c0 .. c0 + 3 from acc[j][v]. mode: 1 plain (e0: e without D tensors), 2 built-in epilogue
 * with 16-byte D vectors (early: the first D's vectors are in dq already), 0 EPI_FN per
 * element. */
static __device__ __forceinline__ void gconv_impl_bwdd_dw_out(
    const gconv_impl_bwdd_dw_params *pp, char *op, const gconv_epilogue *e,
    const gconv_epilogue *e0, gconv_impl_epi_fn epi, const int dt, const int mode, const int TW,
    float (*acc)[4], const uint32_t (*dq)[4], const int early, const int c0, const int n,
    const int d, const int ih, const int u0)
{
    const int es = dt == GCONV_F32 ? 4 : 2;
    const int VEC = 4, VB = 4 * es;
    const int pix = pp->GC * es;
#pragma unroll
    for (int j = 0; j < TW; j++) {
        const int iw = u0 + j - pp->pw;
        if ((unsigned)iw < (unsigned)pp->W) {
            uint32_t o[4];
            float y[8];
            if (mode == 1 && epi == gconv_impl_epilogue_apply) {
                /* the built-in function's alpha and act, the act's kind tested once for the
                 * vector (gconv_act_apply per value made two branches a value: 12 % of the
                 * rolling form's instructions at MobileNetV2 96@112 s2 were branches;
                 * bench/NOTES.md) */
#pragma unroll
                for (int v = 0; v < VEC; v++)
                    y[v] = e0->alpha * acc[j][v];
                gconv_impl_act_n(e0->act, y, VEC);
            } else if (mode == 1) {
#pragma unroll
                for (int v = 0; v < VEC; v++)
                    y[v] = epi(e0, (gconv_dtype)dt, acc[j][v], c0 + v, n, 0, d, ih, iw);
            } else if (mode == 2) {
#pragma unroll
                for (int v = 0; v < VEC; v++)
                    y[v] = e->alpha * acc[j][v];
#pragma unroll
                for (int i = 0; i < GCONV_MAX_D; i++) {
                    if (i < e->num_d) {
                        uint32_t w[4];
                        if (early && i == 0) {
#pragma unroll
                            for (int q = 0; q < 4; q++)
                                w[q] = dq[j][q];
                        } else {
                            const int64_t doff =
                                gconv_act_offset(&e->d[i].strides, c0, n, 0, d, ih, iw);
                            gconv_impl_ld_raw(w, (const char *)e->d[i].data + doff * es, VB);
                        }
#pragma unroll
                        for (int v = 0; v < VEC; v++)
                            y[v] = fmaf(e->beta[i], gconv_impl_raw_elem(w, v, dt), y[v]);
                    }
                }
                gconv_impl_act_n(e->act, y, VEC);
            } else {
#pragma unroll
                for (int v = 0; v < VEC; v++)
                    y[v] = epi(e, (gconv_dtype)dt, acc[j][v], c0 + v, n, 0, d, ih, iw);
            }
            gconv_impl_pack(o, y, VEC, dt);
            gconv_impl_st_raw(op + (int64_t)iw * pix, o, VB);
        }
    }
}

/* Bit q (q < NS) set where d_out column owb + q is inside the row (Wo columns). */
static __device__ __forceinline__ unsigned gconv_impl_bwdd_dwr_cols(const int owb, const int Wo,
                                                                    const int NS)
{
    unsigned cm = 0;
#pragma unroll
    for (int q = 0; q < NS; q++)
        if ((unsigned)(owb + q) < (unsigned)Wo)
            cm |= 1u << q;
    return cm;
}

/* One d_out row's vectors for the rolling form: ok 0 (a row outside d_out) gives zeros; else
 * vector q (q < NS) is at byte offset ro + q * pix from dout where bit q of cm is set (its
 * column inside the row), zero elsewhere. The thread computes ro, pix and cm once and steps ro
 * by a row (64-bit index products per row and vector were ~45 instructions a row at
 * MobileNetV2 96@112 s2 fp16, sm_90a). */
static __device__ __forceinline__ void gconv_impl_bwdd_dwr_rowo(uint32_t (*r)[4], const char *dout,
                                                               const int64_t ro, const int pix,
                                                               const unsigned cm, const int ok,
                                                               const int NS, const int es)
{
#pragma unroll
    for (int q = 0; q < NS; q++) {
        if (ok && ((cm >> q) & 1u))
            gconv_impl_ld_raw(r[q], dout + (ro + (int64_t)q * pix), 4 * es);
        else
            gconv_impl_zero_raw(r[q], 4 * es);
    }
}

/* One d_out row's vectors for DWB's row form: row oh, columns ow = owb + q (q < NS), channels
 * c0 .. c0 + 3; zeros outside the row, or for a row outside d_out (gconv_impl_bwdd_dwr_rowo
 * with this row's offset and columns). */
static __device__ __forceinline__ void gconv_impl_bwdd_dwr_row(
    uint32_t (*r)[4], const gconv_impl_bwdd_dw_params *pp, const char *dout, const int dt,
    const int NS, const int nd, const int oh, const int owb, const int c0)
{
    const int es = dt == GCONV_F32 ? 4 : 2;
    const int pix = pp->GC * es;
    const unsigned cm = gconv_impl_bwdd_dwr_cols(owb, pp->Wo, NS);
    gconv_impl_bwdd_dwr_rowo(r, dout,
                             (((int64_t)nd * pp->Ho + oh) * pp->Wo + owb) * pix + (int64_t)c0 * es,
                             pix, cm, (unsigned)oh < (unsigned)pp->Ho, NS, es);
}

/* DWB's row form, stride 1 (stride 2 takes the rolling form below). One thread: channels
 * c0 .. c0 + 3, input row ih, input columns iw = u0 + j - pw for j < TW. Column j takes tap kx
 * from d_out column ow = u0 + j - kx, so the thread loads the TW + 2 d_out vectors ow = u0 - 2
 * .. u0 + TW - 1 of each d_out row oh = ih + ph - ky its three tap rows reach. mode: 1 plain
 * (no D tensors), 2 built-in epilogue with 16-byte D vectors (GCONV_IMPL_BWDD_DQ_EARLY: the
 * first D loaded before the FMAs), 0 EPI_FN per element. */
static __device__ __forceinline__ void gconv_impl_bwdd_dw_body(
    const gconv_impl_bwdd_dw_params *pp, const char *dout, const char *wei, char *din,
    const gconv_epilogue *e, gconv_impl_epi_fn epi, const int dt, const int mode)
{
    const int es = dt == GCONV_F32 ? 4 : 2;
    const int VEC = 4, VB = 4 * es; /* 4 channels (8 or 16 bytes) per thread */
    const int TW = GCONV_IMPL_BWDD_DW_TW, NS = TW + 2;
    int64_t item;
    for (item = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; item < pp->items;
         item += (int64_t)gridDim.x * blockDim.x) {
        int cv, wt, ih, nd;
        gconv_impl_bwdd_dw_item(pp, item, pp->H, &cv, &wt, &ih, &nd);
        {
            const int c0 = cv * VEC;
            const int u0 = pp->ub + wt * TW;
            const int n = nd / pp->D, d = nd - n * pp->D;
            float tap[3][3][4];
            float acc[GCONV_IMPL_BWDD_DW_TW_MAX][4];
            uint32_t dq[GCONV_IMPL_BWDD_DW_TW_MAX][4];
            gconv_epilogue e0 = *e;
            e0.num_d = 0;
            /* taps of channels c0..: with C = K = 1 both weight layouts keep group g's 9 taps
             * contiguous at g*9, so the block is VEC*9 contiguous elements (144 bytes) */
            if (pp->wei_vec) {
                uint32_t tr[36];
                const char *wp = wei + (int64_t)c0 * 9 * es;
#pragma unroll
                for (int i = 0; i < 9; i++)
                    gconv_impl_ld_raw(&tr[(VB / 4) * i], wp + VB * i, VB);
#pragma unroll
                for (int v = 0; v < VEC; v++)
#pragma unroll
                    for (int t = 0; t < 9; t++)
                        tap[t / 3][t % 3][v] = gconv_impl_raw_elem(tr, v * 9 + t, dt);
            } else {
#pragma unroll
                for (int v = 0; v < VEC; v++)
#pragma unroll
                    for (int t = 0; t < 9; t++)
                        tap[t / 3][t % 3][v] =
                            gconv_impl_ld_elem(wei, (int64_t)(c0 + v) * 9 + t, dt);
            }
#pragma unroll
            for (int j = 0; j < TW; j++)
#pragma unroll
                for (int v = 0; v < VEC; v++)
                    acc[j][v] = 0.0f;
            /* the first D tensor's vectors, loaded early (mode 2) */
            if (GCONV_IMPL_BWDD_DQ_EARLY && mode == 2)
                gconv_impl_bwdd_dw_dq(pp, e, dt, TW, dq, c0, n, d, ih, u0);
#pragma unroll
            for (int ky = 0; ky < 3; ky++) {
                const int oh = ih + pp->ph - ky;
                if ((unsigned)oh < (unsigned)pp->Ho) {
                    uint32_t dv[GCONV_IMPL_BWDD_DW_TW_MAX + 2][4];
                    gconv_impl_bwdd_dwr_row(dv, pp, dout, dt, NS, nd, oh, u0 - 2, c0);
#pragma unroll
                    for (int q = 0; q < NS; q++)
#pragma unroll
                        for (int v = 0; v < VEC; v++) {
                            const float xv = gconv_impl_raw_elem(dv[q], v, dt);
#pragma unroll
                            for (int kx = 0; kx < 3; kx++) {
                                const int j = q - 2 + kx; /* the column (q, kx) feeds */
                                if (j >= 0 && j < TW)
                                    acc[j][v] = fmaf(xv, tap[ky][kx][v], acc[j][v]);
                            }
                        }
                }
            }
            gconv_impl_bwdd_dw_out(pp,
                                   din + ((int64_t)nd * pp->H + ih) * pp->W * pp->GC * es +
                                       (int64_t)c0 * es,
                                   e, &e0, epi, dt, mode, TW, acc, dq, GCONV_IMPL_BWDD_DQ_EARLY,
                                   c0, n, d, ih, u0);
        }
    }
}

/* ---- DWB rolling form at stride 2: a band of input rows per thread ------------------------- */

/* acc[j][v] += the row's vectors times tap row ky of the taps tp (raw words in the weights'
 * order, element v * 9 + ky * 3 + kx; 16-bit pairs stay packed until this use, which keeps 18
 * registers of taps instead of 36): column j takes vector q with tap kx where j = (q - 1) * 2 +
 * kx (stride 2, the run starting one vector left). */
static __device__ __forceinline__ void gconv_impl_bwdd_dwr_fma(float (*acc)[4],
                                                              const uint32_t (*r)[4],
                                                              const uint32_t *tp, const int ky,
                                                              const int NS, const int TW,
                                                              const int dt)
{
    float t[3][4];
#pragma unroll
    for (int kx = 0; kx < 3; kx++)
#pragma unroll
        for (int v = 0; v < 4; v++)
            t[kx][v] = gconv_impl_raw_elem(tp, v * 9 + ky * 3 + kx, dt);
#pragma unroll
    for (int q = 0; q < NS; q++)
#pragma unroll
        for (int v = 0; v < 4; v++) {
            const float xv = gconv_impl_raw_elem(r[q], v, dt);
#pragma unroll
            for (int kx = 0; kx < 3; kx++) {
                const int j = (q - 1) * 2 + kx;
                if (j >= 0 && j < TW)
                    acc[j][v] = fmaf(xv, t[kx][v], acc[j][v]);
            }
        }
}

/* Rolling DWB at stride 2 (3x3, no dilation). In u = ih + ph space, input row u = 2m takes d_out
 * row m with tap row 0 and row m - 1 with tap row 2; row u = 2m + 1 takes row m with tap row 1.
 * A thread owns 4 channels x TW columns (column runs aligned as in the row form) of RB
 * consecutive rows u = ur + hb * RB .. + RB - 1 (an even start) and walks m upward with d_out
 * rows m - 1 and m in registers: each d_out row is loaded once per band (RB / 2 + 1 rows for RB
 * output rows, against 3 / 2 a row with one row a thread), and row m + 1's loads are issued
 * before row m's FMAs, so their latency overlaps a step of work. EARLY (mode 2): the first D's
 * vectors of both rows of a step are loaded at the step's top too. */
static __device__ __forceinline__ void gconv_impl_bwdd_dwr_body(
    const gconv_impl_bwdd_dw_params *pp, const char *dout, const char *wei, char *din,
    const gconv_epilogue *e, gconv_impl_epi_fn epi, const int dt, const int mode, const int TW,
    const int EARLY, const int RB)
{
    const int es = dt == GCONV_F32 ? 4 : 2;
    const int VEC = 4;
    const int NS = (TW - 1) / 2 + 2;
    const int early = mode == 2 && EARLY;
    int64_t item;
    for (item = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; item < pp->items;
         item += (int64_t)gridDim.x * blockDim.x) {
        int cv, wt, hb, nd;
        gconv_impl_bwdd_dw_item(pp, item, pp->hbs, &cv, &wt, &hb, &nd);
        {
            const int c0 = cv * VEC;
            const int u0 = pp->ub + wt * TW;
            const int owb = u0 / 2 - 1;
            const int m0 = (pp->ur + hb * RB) / 2;
            const int n = nd / pp->D, d = nd - n * pp->D;
            uint32_t tp[36]; /* the 36 taps of channels c0..: 18 words for 16-bit types */
            /* d_out rows m - 1 and m, (TW - 1) / 2 + 2 vectors each */
            uint32_t ra[GCONV_IMPL_BWDD_DW_TW_MAX / 2 + 2][4];
            uint32_t rb[GCONV_IMPL_BWDD_DW_TW_MAX / 2 + 2][4];
            gconv_epilogue e0 = *e;
            e0.num_d = 0;
            /* with C = K = 1 both weight layouts keep group g's 9 taps contiguous at g * 9, so
             * channels c0.. are 36 contiguous elements */
            if (pp->wei_vec) {
                const char *wp = wei + (int64_t)c0 * 9 * es;
#pragma unroll
                for (int i = 0; i < 9; i++)
                    gconv_impl_ld_raw(&tp[es * i], wp + 4 * es * i, 4 * es);
            } else {
#pragma unroll
                for (int i = 0; i < 36; i++)
                    gconv_impl_put_elem(tp, i, gconv_impl_ld_elem(wei, (int64_t)c0 * 9 + i, dt),
                                        dt);
            }
            /* d_out offsets: row m0 - 1's vector at column owb, a row's bytes, the columns
             * inside the row (the same for every row). After the first two loads ro is row m's
             * offset at every step, and it moves with the slide below. */
            const int pix = pp->GC * es;
            const int64_t orow = (int64_t)pp->Wo * pix;
            int64_t ro = ((int64_t)nd * pp->Ho + (m0 - 1)) * orow + (int64_t)owb * pix +
                         (int64_t)c0 * es;
            const unsigned cm = gconv_impl_bwdd_dwr_cols(owb, pp->Wo, NS);
            /* d_in offset of row u = 2 * m0 (ih = 2 * m0 - ph), pixel 0, channel c0; a row's
             * bytes */
            const int64_t irow = (int64_t)pp->W * pix;
            int64_t oo = ((int64_t)nd * pp->H + (2 * m0 - pp->ph)) * irow + (int64_t)c0 * es;
            gconv_impl_bwdd_dwr_rowo(ra, dout, ro, pix, cm, (unsigned)(m0 - 1) < (unsigned)pp->Ho,
                                     NS, es);
            ro += orow;
            gconv_impl_bwdd_dwr_rowo(rb, dout, ro, pix, cm, (unsigned)m0 < (unsigned)pp->Ho, NS,
                                     es);
#pragma unroll
            for (int i = 0; i < RB / 2; i++) {
                const int m = m0 + i;
                const int ih0 = 2 * m - pp->ph, ih1 = ih0 + 1;
                uint32_t rc[GCONV_IMPL_BWDD_DW_TW_MAX / 2 + 2][4];
                uint32_t dq0[GCONV_IMPL_BWDD_DW_TW_MAX][4], dq1[GCONV_IMPL_BWDD_DW_TW_MAX][4];
                float acc[GCONV_IMPL_BWDD_DW_TW_MAX][4];
                if (i + 1 < RB / 2)
                    gconv_impl_bwdd_dwr_rowo(rc, dout, ro + orow, pix, cm,
                                             (unsigned)(m + 1) < (unsigned)pp->Ho, NS, es);
                if (early) {
                    if ((unsigned)ih0 < (unsigned)pp->H)
                        gconv_impl_bwdd_dw_dq(pp, e, dt, TW, dq0, c0, n, d, ih0, u0);
                    if ((unsigned)ih1 < (unsigned)pp->H)
                        gconv_impl_bwdd_dw_dq(pp, e, dt, TW, dq1, c0, n, d, ih1, u0);
                }
                if ((unsigned)ih0 < (unsigned)pp->H) {
#pragma unroll
                    for (int j = 0; j < TW; j++)
#pragma unroll
                        for (int v = 0; v < VEC; v++)
                            acc[j][v] = 0.0f;
                    gconv_impl_bwdd_dwr_fma(acc, rb, tp, 0, NS, TW, dt);
                    gconv_impl_bwdd_dwr_fma(acc, ra, tp, 2, NS, TW, dt);
                    gconv_impl_bwdd_dw_out(pp, din + oo, e, &e0, epi, dt, mode, TW, acc, dq0,
                                           early, c0, n, d, ih0, u0);
                }
                if ((unsigned)ih1 < (unsigned)pp->H) {
#pragma unroll
                    for (int j = 0; j < TW; j++)
#pragma unroll
                        for (int v = 0; v < VEC; v++)
                            acc[j][v] = 0.0f;
                    gconv_impl_bwdd_dwr_fma(acc, rb, tp, 1, NS, TW, dt);
                    gconv_impl_bwdd_dw_out(pp, din + (oo + irow), e, &e0, epi, dt, mode, TW, acc,
                                           dq1, early, c0, n, d, ih1, u0);
                }
                /* slide: row m becomes m - 1, row m + 1 becomes m, and the offsets move a step
                 * (not after the last step, where rc was not loaded) */
                if (i + 1 < RB / 2) {
#pragma unroll
                    for (int q = 0; q < NS; q++)
#pragma unroll
                        for (int w = 0; w < 4; w++) {
                            ra[q][w] = rb[q][w];
                            rb[q][w] = rc[q][w];
                        }
                    ro += orow;
                    oo += 2 * irow;
                }
            }
        }
    }
}

/* ---- phase GEMM helpers: weight pre-pass and the fill of unreached phases ------------------- */

/* Per axis and residue r: the phase's tap count J (0: no tap reaches it), its forward view's
 * dilation and pad. Taps of phase r are f = f0 + j*T (T = S / gcd(dil, S)), flipped. */
typedef struct gconv_impl_bwdd_phase {
    int S[3], T[3], dil2[3];
    int J[3][GCONV_IMPL_BWDD_MAXS];
    int pad2[3][GCONV_IMPL_BWDD_MAXS];
    int nph;
    int64_t woff[GCONV_IMPL_BWDD_MAXPH]; /* element offset of each phase's weights */
} gconv_impl_bwdd_phase;

typedef struct gconv_impl_bwdd_wpre_params {
    int G, K, C;
    int f[3], dil[3], pad[3];
    gconv_wei_strides sw;
    gconv_impl_bwdd_phase ph;
} gconv_impl_bwdd_wpre_params;

/* ws[phase][g][c][j'z][j'y][j'x][k] = wei[g][k][c][f]: a transpose of each group's and tap's
 * [K][C] weights into [C][K]. A block (GCONV_IMPL_BWDD_BLOCK = 256 threads, 8 rows of 32)
 * moves one 32 x 32 (k, c) tile of one (g, f) at a time through shared memory, so that the
 * reads run along c (contiguous in GKYXC) and the writes along k (contiguous in ws); the tile
 * number splits into (g, f, k tile, c tile) once per tile, in 32 bits where it fits. (The
 * first version, one thread per weight with 64-bit divisions, took ~10 us of the 60 of the
 * 100x100 dense layer on H100: bench/NOTES.md.) */
static inline GCONV_HD unsigned long long
gconv_impl_bwdd_wpre_tiles(const gconv_impl_bwdd_wpre_params *pp)
{
    return (unsigned long long)pp->G * (unsigned long long)(pp->f[0] * pp->f[1] * pp->f[2]) *
           (unsigned long long)((pp->K + 31) / 32) * (unsigned long long)((pp->C + 31) / 32);
}

static __device__ __forceinline__ void gconv_impl_bwdd_wpre_body(
    const gconv_impl_bwdd_wpre_params *pp, const char *wei, char *ws, const int dt)
{
    __shared__ uint32_t tile[32][33]; /* [k][c], padded: the column reads are conflict-free */
    const int lx = (int)threadIdx.x & 31, ly = (int)threadIdx.x >> 5;
    const int ct = (pp->C + 31) / 32, kt = (pp->K + 31) / 32;
    const int taps = pp->f[0] * pp->f[1] * pp->f[2];
    const unsigned long long tiles = gconv_impl_bwdd_wpre_tiles(pp);
    unsigned long long b;
    for (b = blockIdx.x; b < tiles; b += gridDim.x) {
        int ci, ki, ft, g, f[3], jp[3], J[3], a, i, phase;
        int64_t dbase;
        if (b < 0x80000000ull) {
            unsigned u = (unsigned)b;
            ci = (int)(u % (unsigned)ct), u /= (unsigned)ct;
            ki = (int)(u % (unsigned)kt), u /= (unsigned)kt;
            ft = (int)(u % (unsigned)taps), g = (int)(u / (unsigned)taps);
        } else {
            unsigned long long u = b;
            ci = (int)(u % (unsigned)ct), u /= (unsigned)ct;
            ki = (int)(u % (unsigned)kt), u /= (unsigned)kt;
            ft = (int)(u % (unsigned)taps), g = (int)(u / (unsigned)taps);
        }
        f[2] = ft % pp->f[2], f[1] = ft / pp->f[2] % pp->f[1], f[0] = ft / (pp->f[2] * pp->f[1]);
        phase = 0;
        for (a = 0; a < 3; a++) {
            const int S = pp->ph.S[a], T = pp->ph.T[a];
            int m = (f[a] * pp->dil[a] - pp->pad[a]) % S, rr;
            rr = m < 0 ? m + S : m;
            J[a] = pp->ph.J[a][rr];
            jp[a] = J[a] - 1 - f[a] / T;
            phase = phase * S + rr;
        }
        /* element (c, k) of the tile goes to dbase + c * jt * K + k */
        dbase = pp->ph.woff[phase] + ((int64_t)jp[0] * J[1] + jp[1]) * J[2] * pp->K + jp[2] * pp->K;
        for (i = 0; i < 4; i++) {
            const int k = ki * 32 + ly + 8 * i, c = ci * 32 + lx;
            if (k < pp->K && c < pp->C) {
                const int64_t src = gconv_wei_offset(&pp->sw, g, k, c, f[0], f[1], f[2]);
                tile[ly + 8 * i][lx] = dt == GCONV_F32 ? ((const uint32_t *)wei)[src]
                                                       : ((const uint16_t *)wei)[src];
            }
        }
        __syncthreads(); /* the tile is in shared memory */
        {
            const int64_t jt = (int64_t)J[0] * J[1] * J[2];
            for (i = 0; i < 4; i++) {
                const int c = ci * 32 + ly + 8 * i, k = ki * 32 + lx;
                if (k < pp->K && c < pp->C) {
                    const int64_t dst = dbase + ((int64_t)g * pp->C + c) * jt * pp->K + k;
                    if (dt == GCONV_F32)
                        ((uint32_t *)ws)[dst] = tile[lx][ly + 8 * i];
                    else
                        ((uint16_t *)ws)[dst] = (uint16_t)tile[lx][ly + 8 * i];
                }
            }
        }
        __syncthreads(); /* the tile is free for the next one */
    }
}

typedef struct gconv_impl_bwdd_fill_params {
    int G, N, C;
    int q[3], r[3], S[3];
    int64_t total;
    gconv_act_strides si;
} gconv_impl_bwdd_fill_params;

/* Positions of a phase no tap reaches: d_in = f(0). */
static __device__ __forceinline__ void gconv_impl_bwdd_fill_body(
    const gconv_impl_bwdd_fill_params *pp, char *din, const gconv_epilogue *e,
    gconv_impl_epi_fn epi, const int dt)
{
    int64_t idx;
    for (idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; idx < pp->total;
         idx += (int64_t)gridDim.x * blockDim.x) {
        int64_t r = idx;
        int c, g, n, i0, i1, i2;
        c = (int)(r % pp->C), r /= pp->C;
        g = (int)(r % pp->G), r /= pp->G;
        i2 = pp->r[2] + pp->S[2] * (int)(r % pp->q[2]), r /= pp->q[2];
        i1 = pp->r[1] + pp->S[1] * (int)(r % pp->q[1]), r /= pp->q[1];
        i0 = pp->r[0] + pp->S[0] * (int)(r % pp->q[0]), r /= pp->q[0];
        n = (int)r;
        gconv_impl_st_elem(din, gconv_act_offset(&pp->si, g, n, c, i0, i1, i2),
                           epi(e, (gconv_dtype)dt, 0.0f, g, n, c, i0, i1, i2), dt);
    }
}

/* ---- host side ------------------------------------------------------------------------------ */

static inline int gconv_impl_bwdd_gcd(int a, int b)
{
    while (b) {
        int t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* Phase table of p (strides up to GCONV_IMPL_BWDD_MAXS); 0 if a stride is larger. */
static inline int gconv_impl_bwdd_phases(const gconv_problem *p, gconv_impl_bwdd_phase *ph)
{
    int a, r, i0, i1, i2;
    int64_t off = 0, gkc = (int64_t)p->G * p->K * p->C;
    memset(ph, 0, sizeof *ph);
    for (a = 0; a < 3; a++) {
        const int S = p->stride[a], d = p->dilation[a], F = p->filter[a], pad = p->pad_lo[a];
        const int g = gconv_impl_bwdd_gcd(d, S), T = S / g;
        if (S > GCONV_IMPL_BWDD_MAXS)
            return 0;
        ph->S[a] = S, ph->T[a] = T, ph->dil2[a] = d / g;
        for (r = 0; r < S; r++) {
            int f0 = -1, f;
            ph->J[a][r] = 0;
            for (f = 0; f < T && f < F; f++)
                if (((r + pad - f * d) % S + S) % S == 0) {
                    f0 = f;
                    break;
                }
            if (f0 < 0)
                continue;
            ph->J[a][r] = (F - f0 + T - 1) / T;
            /* o = q + c0 - j*dil2 with c0 = (r + pad - f0*d) / S; flipped j' = J-1-j gives a
             * forward view with pad2 = (J-1)*dil2 - c0 */
            ph->pad2[a][r] = (ph->J[a][r] - 1) * ph->dil2[a] - (r + pad - f0 * d) / S;
        }
    }
    ph->nph = ph->S[0] * ph->S[1] * ph->S[2];
    for (i0 = 0; i0 < ph->S[0]; i0++)
        for (i1 = 0; i1 < ph->S[1]; i1++)
            for (i2 = 0; i2 < ph->S[2]; i2++) {
                const int k = (i0 * ph->S[1] + i1) * ph->S[2] + i2;
                ph->woff[k] = off;
                off += gkc * ph->J[0][i0] * ph->J[1][i1] * ph->J[2][i2];
            }
    return 1;
}

/* The route of a default instantiation: 1 direct kernels, 0 phase GEMM. */
static inline int gconv_impl_bwdd_direct(const gconv_problem *p, int user_op)
{
    int a, s1 = 1;
    for (a = 0; a < 3; a++) {
        if (p->stride[a] > GCONV_IMPL_BWDD_MAXS)
            return 1;
        s1 &= p->stride[a] == 1;
    }
    if (p->C == 1)
        return 1;
    return user_op && !s1;
}

static inline size_t gconv_impl_bwdd_ws(const gconv_problem *p, gconv_dtype t)
{
    return (size_t)gconv_wei_elems(p) * gconv_dtype_size(t);
}

static inline int gconv_impl_bwdd_needs64(const gconv_problem *p)
{
    const int64_t lim = (int64_t)1 << 31;
    return gconv_in_elems(p) >= lim || gconv_out_elems(p) >= lim || gconv_wei_elems(p) >= lim;
}

/* Everything that does not depend on the kernel: problem, layouts, pointers, epilogue,
 * workspace (need_ws: bytes the route needs). */
static inline gconv_status gconv_impl_bwdd_check(const gconv_problem *p,
                                                 const gconv_bwd_data_args *a, gconv_dtype dt,
                                                 gconv_layout act, gconv_layout wei,
                                                 size_t need_ws, char *why, size_t len)
{
    gconv_status s = gconv_problem_check(p, why, len);
    size_t esz = gconv_dtype_size(dt);
    int i;
    if (s != GCONV_OK)
        return s;
    s = gconv_impl_check_families(p, act, wei, why, len);
    if (s != GCONV_OK)
        return s;
    if ((int64_t)p->K * gconv_filter_taps(p) > 0x7fffffffLL - 1024)
        return gconv_impl_fail(GCONV_ERR_UNSUPPORTED, why, len,
                               "K * filter taps is %lld; the kernels need it below 2^31 - 1024",
                               (long long)p->K * gconv_filter_taps(p));
    for (i = 0; i < 3; i++)
        if ((int64_t)p->in[i] + p->pad_lo[i] + p->pad_hi[i] + (int64_t)p->dilation[i] * p->filter[i] >
            0x3fffffffLL)
            return gconv_impl_fail(GCONV_ERR_UNSUPPORTED, why, len,
                                   "axis %d: padded size and filter span over 2^30", i);
    if ((int64_t)p->G * ((gconv_in_elems(p) / p->G / p->C + 15) / 16) > 0x7fffffffLL)
        return gconv_impl_fail(GCONV_ERR_UNSUPPORTED, why, len,
                               "G * N * input pixels / 16 is over 2^31: too many blocks");
    if (!a)
        return GCONV_OK;
    if (!a->d_out || !a->wei || !a->d_in)
        return gconv_impl_fail(GCONV_ERR_NULL, why, len, "%s pointer is null",
                               !a->d_out ? "the d_out" : !a->wei ? "the weight" : "the d_in");
    if (((uintptr_t)a->d_out | (uintptr_t)a->wei | (uintptr_t)a->d_in) % esz)
        return gconv_impl_fail(GCONV_ERR_ALIGNMENT, why, len,
                               "d_out, wei and d_in must be aligned to their %d-byte elements",
                               (int)esz);
    s = gconv_epilogue_check(a->epi, why, len);
    if (s != GCONV_OK)
        return s;
    if (a->epi)
        for (i = 0; i < a->epi->num_d; i++)
            if ((uintptr_t)a->epi->d[i].data % esz)
                return gconv_impl_fail(GCONV_ERR_ALIGNMENT, why, len,
                                       "D tensor %d is not aligned to its %d-byte elements", i,
                                       (int)esz);
    if (need_ws && (!a->workspace || a->workspace_size < need_ws))
        return gconv_impl_fail(GCONV_ERR_WORKSPACE, why, len,
                               "this problem needs a workspace of %zu bytes (given %zu%s)",
                               need_ws, a->workspace_size, a->workspace ? "" : ", null pointer");
    if (need_ws && (uintptr_t)a->workspace % esz)
        return gconv_impl_fail(GCONV_ERR_ALIGNMENT, why, len,
                               "the workspace must be aligned to %d bytes", (int)esz);
    return GCONV_OK;
}


/* DWB plan: 1 when the depthwise vector kernel takes p. */
static inline int gconv_impl_bwdd_plan_dw(const gconv_problem *p, gconv_dtype t,
                                          const gconv_bwd_data_args *a, const gconv_epilogue *epi,
                                          int builtin, gconv_impl_bwdd_dw_params *d, int *mode)
{
    const int vec = 4; /* channels per DWB thread */
    const int s = p->stride[1];
    int i, dvec = 1, tw;
    if (gconv_layout_family(gconv_in_layout(p)) != GCONV_NHWGC || p->C != 1 || p->K != 1 ||
        p->ndim < 2)
        return 0;
    /* the kernels keep a pixel's bytes (G elements) in 32 bits */
    if ((long long)p->G * (long long)gconv_dtype_size(t) > INT_MAX)
        return 0;
    if (p->filter[0] != 1 || p->filter[1] != 3 || p->filter[2] != 3)
        return 0;
    if (p->dilation[1] != 1 || p->dilation[2] != 1 || p->stride[2] != s || (s != 1 && s != 2))
        return 0;
    if (p->stride[0] != 1 || p->pad_lo[0] != 0 || p->pad_hi[0] != 0)
        return 0;
    if (p->G % vec || ((uintptr_t)a->d_out | (uintptr_t)a->d_in) % 16)
        return 0;
    memset(d, 0, sizeof *d);
    d->H = p->in[1], d->W = p->in[2];
    d->Ho = gconv_out_len(p, 1), d->Wo = gconv_out_len(p, 2);
    d->D = p->in[0];
    d->GC = p->G;
    d->ph = p->pad_lo[1], d->pw = p->pad_lo[2];
    d->cvs = p->G / vec;
    d->wei_vec = (uintptr_t)a->wei % 16 == 0;
    for (i = 0; i < epi->num_d; i++) {
        const gconv_act_strides *ds = &epi->d[i].strides;
        if (ds->g != 1 || (uintptr_t)epi->d[i].data % 16 || ds->n % vec || ds->s[0] % vec ||
            ds->s[1] % vec || ds->s[2] % vec)
            dvec = 0;
    }
    *mode = epi->num_d == 0 ? 1 : builtin && dvec ? 2 : 0;
    if (s == 2) {
        /* rolling form: bands of rb rows in u = ih + ph space from the even row at or below
         * ph */
        const int rb = gconv_impl_bwdd_dwr_rb(*mode);
        tw = GCONV_IMPL_BWDD_R2_TW;
        d->ur = p->pad_lo[1] & ~1;
        d->hbs = (p->pad_lo[1] + p->in[1] - d->ur + rb - 1) / rb;
    } else {
        tw = GCONV_IMPL_BWDD_DW_TW;
    }
    d->ub = (p->pad_lo[2] / tw) * tw;
    d->wts = (p->pad_lo[2] + p->in[2] - d->ub + tw - 1) / tw;
    d->items = (long long)p->N * p->in[0] * (d->hbs ? d->hbs : p->in[1]) * d->wts * d->cvs;
    return 1;
}

static inline unsigned gconv_impl_bwdd_grid(long long items, int block)
{
    long long b = (items + block - 1) / block;
    return (unsigned)(b < 1 ? 1 : b > GCONV_IMPL_MAX_BLOCKS ? GCONV_IMPL_MAX_BLOCKS : b);
}

static inline void gconv_impl_bwdd_plan_gen(const gconv_problem *p, gconv_impl_bwdd_gen_params *g)
{
    gconv_layout fi = gconv_layout_family(gconv_in_layout(p));
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
    g->order = fi == GCONV_GNHWC ? 1 : fi == GCONV_NGCHW ? 2 : 0;
    g->total = gconv_in_elems(p);
    g->si = gconv_in_strides(p);
    g->so = gconv_out_strides(p);
    g->sw = gconv_weight_strides(p);
}

/* Forward-engine parameters of phase (r0, r1, r2): in = d_out, wei = the phase's weights,
 * out = d_in at the phase's first position with strides times S; D tensors shifted alike. */
static inline void gconv_impl_bwdd_phase_params(const gconv_problem *p, gconv_dtype t,
                                                const gconv_bwd_data_args *a,
                                                const gconv_impl_bwdd_phase *ph, const int r[3],
                                                gconv_impl_fwd_params *P)
{
    const int es = (int)gconv_dtype_size(t);
    const int k = (r[0] * ph->S[1] + r[1]) * ph->S[2] + r[2];
    gconv_act_strides si = gconv_in_strides(p);
    int i, J[3];
    int64_t shift = 0;
    memset(P, 0, sizeof *P);
    for (i = 0; i < 3; i++) {
        J[i] = ph->J[i][r[i]];
        P->in_sp[i] = gconv_out_len(p, i);
        P->out_sp[i] = (p->in[i] - r[i] + ph->S[i] - 1) / ph->S[i];
        P->flt[i] = J[i];
        P->str[i] = 1;
        P->dil[i] = ph->dil2[i];
        P->pad[i] = ph->pad2[i][r[i]];
        shift += (int64_t)r[i] * si.s[i];
    }
    P->in = a->d_out;
    P->wei = (const char *)a->workspace + ph->woff[k] * es;
    P->out = (char *)a->d_in + shift * es;
    P->epi = a->epi ? *a->epi : gconv_epi_scale(1.0f);
    for (i = 0; i < P->epi.num_d; i++) {
        gconv_act_strides *ds = &P->epi.d[i].strides;
        P->epi.d[i].data = (const char *)P->epi.d[i].data +
                           ((int64_t)r[0] * ds->s[0] + (int64_t)r[1] * ds->s[1] +
                            (int64_t)r[2] * ds->s[2]) * es;
        ds->s[0] *= ph->S[0], ds->s[1] *= ph->S[1], ds->s[2] *= ph->S[2];
    }
    P->G = p->G, P->C = p->K, P->K = p->C;
    P->Kg = (int)(p->K * J[0] * J[1] * J[2]);
    P->M = (int64_t)p->N * P->out_sp[0] * P->out_sp[1] * P->out_sp[2];
    P->si = gconv_out_strides(p);
    P->so = si;
    for (i = 0; i < 3; i++)
        P->so.s[i] *= ph->S[i];
    P->sw = gconv_wei_strides_make(gconv_layout_for(GCONV_GKYXC, p->ndim), p->G, p->C, p->K, J);
    for (i = 0; i < 3; i++)
        P->tap_s[i] = (int64_t)P->dil[i] * P->si.s[i];
}

/* Stride-1 backward data is the forward convolution of d_out with the weights flipped and
 * transposed ([G][C][taps][K], what the weight pre-pass writes for one phase) and pads
 * dil*(F-1) - pad. q gets that forward problem; 0 if p has a stride > 1 or a pad larger than
 * the dilated filter (a negative forward pad). */
static inline int gconv_impl_bwdd_fwd_view(const gconv_problem *p, gconv_problem *q)
{
    int i;
    *q = *p;
    for (i = 0; i < 3; i++) {
        const int span = p->dilation[i] * (p->filter[i] - 1);
        if (p->stride[i] != 1 || p->pad_lo[i] > span || p->pad_hi[i] > span)
            return 0;
        q->in[i] = gconv_out_len(p, i);
        q->pad_lo[i] = span - p->pad_lo[i];
        q->pad_hi[i] = span - p->pad_hi[i];
    }
    q->C = p->K, q->K = p->C;
    q->in_layout = p->out_layout, q->out_layout = p->in_layout;
    q->wei_layout = gconv_layout_for(GCONV_GKYXC, p->ndim);
    return gconv_problem_check(q, NULL, 0) == GCONV_OK;
}

/* GCONV_BWD_DATA_DW_VIA_FWD (default 1): stride-1 NHWGC depthwise problems run the forward
 * direct kernels (DW3 for 3x3, FEWC otherwise) on the flipped weights; 0 leaves 3x3 ones to
 * the DWB kernel here. */
#ifndef GCONV_BWD_DATA_DW_VIA_FWD
#define GCONV_BWD_DATA_DW_VIA_FWD 1
#endif
/* GCONV_BWD_DATA_DW_FWD_MIN_ELEMS: depthwise 3x3 stride-1 problems with fewer d_in elements
 * than this take the DWB kernel instead (0: never). */
#ifndef GCONV_BWD_DATA_DW_FWD_MIN_ELEMS
#define GCONV_BWD_DATA_DW_FWD_MIN_ELEMS 0
#endif

/* The forward-direct route: NHWGC instantiations, stride 1, and a forward view the halo
 * kernel plans (4 to 32 channels per group), or depthwise (C = K = 1: DW3 / the direct
 * kernels), or C = K = 4 the halo kernel does not take (G odd: the forward FEWC kernel). */
static inline int gconv_impl_bwdd_fd_route(const gconv_problem *p, gconv_dtype t,
                                            int nhwgc_inst)
{
    gconv_problem q;
    if (!nhwgc_inst || gconv_layout_family(gconv_in_layout(p)) != GCONV_NHWGC)
        return 0;
    /* few channels per group whose forward view the halo kernel takes (pointers not known
     * here: the launcher checks their alignment and falls back to the GEMM) */
    if (p->C != 1 && gconv_impl_bwdd_fwd_view(p, &q)) {
        gconv_impl_halo_params H;
        if (GCONV_FWD_HALO && gconv_impl_halo_plan(&q, t, NULL, NULL, NULL, NULL, &H))
            return 1;
        if (p->C != 4)
            return 0;
    }
    if (!((GCONV_BWD_DATA_DW_VIA_FWD && p->C == 1 && p->K == 1) || (p->C == 4 && p->K == 4)))
        return 0;
    /* small depthwise 3x3: the DWB kernel needs no weight pre-pass (one launch fewer) */
    if (p->C == 1 && p->filter[0] == 1 && p->filter[1] == 3 && p->filter[2] == 3 &&
        p->dilation[1] == 1 && p->dilation[2] == 1 && p->G % 4 == 0 && p->ndim >= 2 &&
        gconv_in_elems(p) < (int64_t)GCONV_BWD_DATA_DW_FWD_MIN_ELEMS)
        return 0;
    return gconv_impl_bwdd_fwd_view(p, &q);
}

/* ---- instantiation -------------------------------------------------------------------------- */

/* The forward halo kernel of the forward-direct route (gconv/fwd.h instantiates it only with
 * GCONV_FWD_HALO; without it the route never plans it). */
#if GCONV_FWD_HALO
#define GCONV_IMPL_BWDD_HALO_LAUNCH(name, q, H, stream, why, len)                                 \
    GCONV_IMPL_HALO_LAUNCH_ANY(name##_fd, q, H, stream, why, len, 1)
#else
#define GCONV_IMPL_BWDD_HALO_LAUNCH(name, q, H, stream, why, len) (void)(H)
#endif

#define GCONV_IMPL_BWDD_NHWGC_GCONV_NHWGC 1
#define GCONV_IMPL_BWDD_NHWGC_GCONV_GNHWC 0
#define GCONV_IMPL_BWDD_NHWGC_GCONV_NGCHW 0
#define GCONV_IMPL_BWDD_ISNHWGC(f) GCONV_IMPL_CAT(GCONV_IMPL_BWDD_NHWGC_, f)
#define GCONV_IMPL_BWDD_UNUSED __attribute__((unused))

/* GEMM kernel kinds of a default instantiation. */
enum {
    GCONV_IMPL_BWDD_K_V128 = 0, /* vector gathers 128x128, 32-bit */
    GCONV_IMPL_BWDD_K_V32,      /* vector gathers 128x32, 32-bit */
    GCONV_IMPL_BWDD_K_V64,      /* vector gathers 128x128, 64-bit */
    GCONV_IMPL_BWDD_K_S,        /* element-wise 64x64, 32-bit */
    GCONV_IMPL_BWDD_K_S64       /* element-wise 64x64, 64-bit */
};

/* The small kernels every instantiation has: generic, weight pre-pass, fill; DWB for NHWGC. */
#define GCONV_IMPL_BWDD_SMALL(name, T, ACT, EPI_FN, DW)                                              \
    static __global__ void __launch_bounds__(GCONV_IMPL_BWDD_BLOCK)                              \
        name##_gen(const gconv_impl_bwdd_gen_params pp, const void *dout, const void *wei,       \
                   void *din, const gconv_epilogue e)                                            \
    {                                                                                            \
        gconv_impl_bwdd_gen_body(&pp, (const char *)dout, (const char *)wei, (char *)din, &e,    \
                                 EPI_FN, T);                                                     \
    }                                                                                            \
    static __global__ void __launch_bounds__(GCONV_IMPL_BWDD_BLOCK)                              \
        name##_wpre(const gconv_impl_bwdd_wpre_params pp, const void *wei, void *ws)             \
    {                                                                                            \
        gconv_impl_bwdd_wpre_body(&pp, (const char *)wei, (char *)ws, T);                        \
    }                                                                                            \
    static __global__ void __launch_bounds__(GCONV_IMPL_BWDD_BLOCK)                              \
        name##_fill(const gconv_impl_bwdd_fill_params pp, void *din, const gconv_epilogue e)     \
    {                                                                                            \
        gconv_impl_bwdd_fill_body(&pp, (char *)din, &e, EPI_FN, T);                              \
    }                                                                                            \
    GCONV_IMPL_IF(DW)(                                                                           \
        GCONV_IMPL_BWDD_DW_KERNEL(name, T, EPI_FN, 1, p1)                                        \
        GCONV_IMPL_BWDD_DW_KERNEL(name, T, EPI_FN, 0, g1)                                        \
        GCONV_IMPL_BWDD_DWR_KERNEL(name, T, EPI_FN, 1, rp)                                       \
        GCONV_IMPL_BWDD_DWR_KERNEL(name, T, EPI_FN, 0, rg)                                       \
        GCONV_IMPL_IF(GCONV_IMPL_IS_BUILTIN_EPI(EPI_FN))(                                        \
            GCONV_IMPL_BWDD_DW_KERNEL(name, T, EPI_FN, 2, v1)                                    \
            GCONV_IMPL_BWDD_DWR_KERNEL(name, T, EPI_FN, 2, rv)))                                 \
    /* direct route: DWB where it fits, else GENERIC */                                          \
    GCONV_IMPL_BWDD_UNUSED static inline gconv_status name##_direct(                             \
        const gconv_problem *p, const gconv_bwd_data_args *a, hipStream_t stream, char *why,     \
        size_t len)                                                                              \
    {                                                                                            \
        const gconv_epilogue plain_ = gconv_epi_scale(1.0f);                                     \
        const gconv_epilogue *e_ = a->epi ? a->epi : &plain_;                                    \
        hipError_t err_;                                                                         \
        GCONV_IMPL_IF(DW)({                                            \
            gconv_impl_bwdd_dw_params dw_;                                                       \
            int mode_ = 0;                                                                       \
            if (gconv_impl_bwdd_plan_dw(p, T, a, e_, GCONV_IMPL_IS_BUILTIN_EPI(EPI_FN), &dw_,    \
                                        &mode_)) {                                               \
                const dim3 gr_(gconv_impl_bwdd_grid(dw_.items, GCONV_IMPL_BWDD_DW_BLOCK));       \
                const dim3 bl_(GCONV_IMPL_BWDD_DW_BLOCK);                                        \
                /* stride 2: the rolling form (plan_dw set hbs); stride 1: the row form */      \
                if (dw_.hbs && mode_ == 1)                                                       \
                    hipLaunchKernelGGL(name##_dw_rp, gr_, bl_, 0, stream, dw_, a->d_out, a->wei, \
                                       a->d_in, *e_);                                            \
                GCONV_IMPL_IF(GCONV_IMPL_IS_BUILTIN_EPI(EPI_FN))(                                \
                else if (dw_.hbs && mode_ == 2)                                                  \
                    hipLaunchKernelGGL(name##_dw_rv, gr_, bl_, 0, stream, dw_, a->d_out, a->wei, \
                                       a->d_in, *e_);)                                           \
                else if (dw_.hbs)                                                                \
                    hipLaunchKernelGGL(name##_dw_rg, gr_, bl_, 0, stream, dw_, a->d_out, a->wei, \
                                       a->d_in, *e_);                                            \
                else if (mode_ == 1)                                                             \
                    hipLaunchKernelGGL(name##_dw_p1, gr_, bl_, 0, stream, dw_, a->d_out, a->wei, \
                                       a->d_in, *e_);                                            \
                GCONV_IMPL_IF(GCONV_IMPL_IS_BUILTIN_EPI(EPI_FN))(                                \
                else if (mode_ == 2)                                                             \
                    hipLaunchKernelGGL(name##_dw_v1, gr_, bl_, 0, stream, dw_, a->d_out, a->wei, \
                                       a->d_in, *e_);)                                           \
                else                                                                             \
                    hipLaunchKernelGGL(name##_dw_g1, gr_, bl_, 0, stream, dw_, a->d_out, a->wei, \
                                       a->d_in, *e_);                                            \
                err_ = hipGetLastError();                                                        \
                if (err_ != hipSuccess)                                                          \
                    return gconv_impl_fail(GCONV_ERR_RUNTIME, why, len,                          \
                                           "kernel launch failed: %s", hipGetErrorString(err_)); \
                return GCONV_OK;                                                                 \
            }                                                                                    \
        })                                                                                       \
        {                                                                                        \
            gconv_impl_bwdd_gen_params gp_;                                                      \
            gconv_impl_bwdd_plan_gen(p, &gp_);                                                   \
            hipLaunchKernelGGL(name##_gen,                                                       \
                               dim3(gconv_impl_bwdd_grid(gp_.total, GCONV_IMPL_BWDD_BLOCK)),     \
                               dim3(GCONV_IMPL_BWDD_BLOCK), 0, stream, gp_, a->d_out, a->wei,    \
                               a->d_in, *e_);                                                    \
            err_ = hipGetLastError();                                                            \
            if (err_ != hipSuccess)                                                              \
                return gconv_impl_fail(GCONV_ERR_RUNTIME, why, len, "kernel launch failed: %s",  \
                                       hipGetErrorString(err_));                                 \
            return GCONV_OK;                                                                     \
        }                                                                                        \
    }                                                                                            \
    /* phase GEMM: pre-pass, then per phase a GEMM (or the fill), via name##_gemm_one */         \
    GCONV_IMPL_BWDD_UNUSED static inline gconv_status name##_phased(                             \
        const gconv_problem *p, const gconv_bwd_data_args *a, int kind, hipStream_t stream,      \
        char *why, size_t len)                                                                   \
    {                                                                                            \
        gconv_impl_bwdd_wpre_params wp_;                                                         \
        const gconv_epilogue plain_ = gconv_epi_scale(1.0f);                                     \
        const gconv_epilogue *e_ = a->epi ? a->epi : &plain_;                                    \
        hipError_t err_;                                                                         \
        int r_[3], i_;                                                                           \
        memset(&wp_, 0, sizeof wp_);                                                             \
        if (!gconv_impl_bwdd_phases(p, &wp_.ph))                                                 \
            return gconv_impl_fail(GCONV_ERR_UNSUPPORTED, why, len,                              \
                                   "the phase GEMM takes strides up to %d",                      \
                                   GCONV_IMPL_BWDD_MAXS);                                        \
        wp_.G = p->G, wp_.K = p->K, wp_.C = p->C;                                                \
        for (i_ = 0; i_ < 3; i_++)                                                               \
            wp_.f[i_] = p->filter[i_], wp_.dil[i_] = p->dilation[i_], wp_.pad[i_] = p->pad_lo[i_]; \
        wp_.sw = gconv_weight_strides(p);                                                        \
        /* stride 1 with GKYXC weights (sw.c == 1): the warp-specialised kernel may read them   \
         * in place (no pre-pass) */                                                             \
        if (wp_.ph.S[0] * wp_.ph.S[1] * wp_.ph.S[2] == 1 && wp_.sw.c == 1) {                     \
            gconv_impl_fwd_params P_;                                                            \
            gconv_status st_;                                                                    \
            r_[0] = r_[1] = r_[2] = 0;                                                           \
            gconv_impl_bwdd_phase_params(p, T, a, &wp_.ph, r_, &P_);                             \
            P_.out_vec = GCONV_IMPL_FAMVEC(ACT) && p->C % (16 / (int)gconv_dtype_size(T)) == 0 && \
                         (uintptr_t)P_.out % 16 == 0;                                            \
            P_.wei = a->wei, P_.wtr = 1;                                                         \
            st_ = name##_gemm_ws(kind, &P_, stream, why, len);                                    \
            if (st_ != GCONV_ERR_UNSUPPORTED)                                                    \
                return st_;                                                                      \
        }                                                                                        \
        hipLaunchKernelGGL(name##_wpre,                                                          \
                           dim3(gconv_impl_bwdd_grid((long long)gconv_impl_bwdd_wpre_tiles(&wp_), 1)), \
                           dim3(GCONV_IMPL_BWDD_BLOCK), 0, stream, wp_, a->wei, a->workspace);   \
        err_ = hipGetLastError();                                                                \
        if (err_ != hipSuccess)                                                                  \
            return gconv_impl_fail(GCONV_ERR_RUNTIME, why, len, "kernel launch failed: %s",      \
                                   hipGetErrorString(err_));                                     \
        for (r_[0] = 0; r_[0] < wp_.ph.S[0]; r_[0]++)                                            \
            for (r_[1] = 0; r_[1] < wp_.ph.S[1]; r_[1]++)                                        \
                for (r_[2] = 0; r_[2] < wp_.ph.S[2]; r_[2]++) {                                  \
                    int q_[3], none_ = 0, empty_ = 0;                                            \
                    gconv_status st_;                                                            \
                    for (i_ = 0; i_ < 3; i_++) {                                                 \
                        q_[i_] = (p->in[i_] - r_[i_] + wp_.ph.S[i_] - 1) / wp_.ph.S[i_];         \
                        empty_ |= q_[i_] <= 0;                                                   \
                        none_ |= wp_.ph.J[i_][r_[i_]] == 0;                                      \
                    }                                                                            \
                    if (empty_)                                                                  \
                        continue;                                                                \
                    if (none_) {                                                                 \
                        gconv_impl_bwdd_fill_params fp_;                                         \
                        memset(&fp_, 0, sizeof fp_);                                             \
                        fp_.G = p->G, fp_.N = p->N, fp_.C = p->C;                                \
                        for (i_ = 0; i_ < 3; i_++)                                               \
                            fp_.q[i_] = q_[i_], fp_.r[i_] = r_[i_], fp_.S[i_] = wp_.ph.S[i_];    \
                        fp_.total = (int64_t)p->N * p->G * p->C * q_[0] * q_[1] * q_[2];         \
                        fp_.si = gconv_in_strides(p);                                            \
                        hipLaunchKernelGGL(name##_fill,                                          \
                                           dim3(gconv_impl_bwdd_grid(fp_.total, GCONV_IMPL_BWDD_BLOCK)), \
                                           dim3(GCONV_IMPL_BWDD_BLOCK), 0, stream, fp_, a->d_in, \
                                           *e_);                                                 \
                        err_ = hipGetLastError();                                                \
                        if (err_ != hipSuccess)                                                  \
                            return gconv_impl_fail(GCONV_ERR_RUNTIME, why, len,                  \
                                                   "kernel launch failed: %s",                   \
                                                   hipGetErrorString(err_));                     \
                        continue;                                                                \
                    }                                                                            \
                    {                                                                            \
                        gconv_impl_fwd_params P_;                                                \
                        gconv_impl_bwdd_phase_params(p, T, a, &wp_.ph, r_, &P_);                 \
                        P_.out_vec = GCONV_IMPL_FAMVEC(ACT) &&                                   \
                                     p->C % (16 / (int)gconv_dtype_size(T)) == 0 &&              \
                                     (uintptr_t)P_.out % 16 == 0;                                \
                        st_ = name##_gemm_one(kind, &P_, stream, why, len);                      \
                        if (st_ != GCONV_OK)                                                     \
                            return st_;                                                          \
                    }                                                                            \
                }                                                                                \
        return GCONV_OK;                                                                         \
    }

/* DWB register budgets on CUDA (blocks of 128 threads per SM): the row form (stride 1) 6
 * blocks (80 registers); the rolling form (stride 2) 8 (64 registers: its 16-bit taps stay
 * packed, 2 columns a thread; H100, bench/NOTES.md session 25: 4 to 6 blocks with 4 columns
 * and 10 or 12 blocks were all slower), fp32 (whose taps take 36 registers) 5. AMD keeps its
 * default (the second argument means waves per EU there). */
#if defined(GCONV_PLATFORM_CUDA)
#define GCONV_IMPL_BWDD_DW_BOUNDS __launch_bounds__(GCONV_IMPL_BWDD_DW_BLOCK, 6)
#define GCONV_IMPL_BWDD_DWR_BOUNDS(T)                                                            \
    __launch_bounds__(GCONV_IMPL_BWDD_DW_BLOCK, (T) == GCONV_F32 ? 5 : 8)
#else
#define GCONV_IMPL_BWDD_DW_BOUNDS __launch_bounds__(GCONV_IMPL_BWDD_DW_BLOCK)
#define GCONV_IMPL_BWDD_DWR_BOUNDS(T) __launch_bounds__(GCONV_IMPL_BWDD_DW_BLOCK)
#endif

/* The rolling form for one epilogue mode (1 plain, 2 D vectors, 0 EPI_FN per element): 2
 * columns a thread, the taps packed; 8 rows a band without D tensors, 4 with them (the first
 * D's vectors of a step's two rows loaded at the step's top). H100, MobileNetV2 96@112 s2 plain
 * / + residual: bands of 6 / 8 / 10 / 12 rows 71.8 / 71.7 / 73.5 / 77.1 us, with a residual 2 /
 * 4 / 8 rows 140.4 / 133.4 / 155.3 (bench/NOTES.md). */
#define GCONV_IMPL_BWDD_DWR_KERNEL(name, T, EPI_FN, MODE, tag)                                   \
    static __global__ void GCONV_IMPL_BWDD_DWR_BOUNDS(T)                                         \
        name##_dw_##tag(const gconv_impl_bwdd_dw_params pp, const void *dout, const void *wei,   \
                        void *din, const gconv_epilogue e)                                       \
    {                                                                                            \
        gconv_impl_bwdd_dwr_body(&pp, (const char *)dout, (const char *)wei, (char *)din, &e,    \
                                 EPI_FN, T, MODE, GCONV_IMPL_BWDD_R2_TW, (MODE) == 2,            \
                                 gconv_impl_bwdd_dwr_rb(MODE));                                  \
    }

#define GCONV_IMPL_BWDD_DW_KERNEL(name, T, EPI_FN, MODE, tag)                                    \
    static __global__ void GCONV_IMPL_BWDD_DW_BOUNDS                                              \
        name##_dw_##tag(const gconv_impl_bwdd_dw_params pp, const void *dout, const void *wei,   \
                        void *din, const gconv_epilogue e)                                       \
    {                                                                                            \
        gconv_impl_bwdd_dw_body(&pp, (const char *)dout, (const char *)wei, (char *)din, &e,     \
                                EPI_FN, T, MODE);                                                \
    }

/* The GEMM kernels of a default instantiation (vector kinds only for NHWGC / GNHWC). */
#define GCONV_IMPL_BWDD_GEMMS(name, T, ACT, EPI_FN)                                              \
    GCONV_IMPL_IF(GCONV_IMPL_FAMVEC(ACT))(                                                       \
        GCONV_IMPL_FWD_KERNEL(name##_gv128, T, GCONV_TILE_128x128x32, GCONV_IMPL_LD_VEC,         \
                              GCONV_IMPL_LD_VEC, 0, 0, 1, EPI_FN)                                \
        GCONV_IMPL_FWD_KERNEL(name##_gv32, T, GCONV_TILE_128x32x32, GCONV_IMPL_LD_VEC,           \
                              GCONV_IMPL_LD_VEC, 0, 0, 1, EPI_FN)                                \
        GCONV_IMPL_FWD_KERNEL(name##_gv64, T, GCONV_TILE_128x128x32, GCONV_IMPL_LD_VEC,          \
                              GCONV_IMPL_LD_VEC, 1, 0, 1, EPI_FN))                               \
    GCONV_IMPL_FWD_KERNEL(name##_gs, T, GCONV_TILE_64x64x32, GCONV_IMPL_LD_SCALAR,               \
                          GCONV_IMPL_LD_SCALAR, 0, 0, GCONV_IMPL_FAMVEC(ACT), EPI_FN)            \
    GCONV_IMPL_FWD_KERNEL(name##_gs64, T, GCONV_TILE_64x64x32, GCONV_IMPL_LD_SCALAR,             \
                          GCONV_IMPL_LD_SCALAR, 1, 0, GCONV_IMPL_FAMVEC(ACT), EPI_FN)            \
    GCONV_IMPL_IF(GCONV_IMPL_HAS_WS(T, ACT, GCONV_GKYXC))(                                       \
        GCONV_IMPL_FWD_WS_KERNELS(name, T, EPI_FN, 1))                                           \
    /* a phase with K a multiple of 64 and C >= 64 on a Hopper build: the warp-specialised      \
     * forward kernel (gconv/igemm_ws.h), reading the phase's weights from the workspace or,   \
     * at stride 1 (P with wtr set), the problem's GKYXC weights in place; GCONV_ERR_UNSUPPORTED \
     * (nothing launched) where it does not run */                                               \
    GCONV_IMPL_BWDD_UNUSED static inline gconv_status name##_gemm_ws(                            \
        int kind, gconv_impl_fwd_params *P, hipStream_t stream, char *why, size_t len)           \
    {                                                                                            \
        GCONV_IMPL_IF(GCONV_IMPL_HAS_WS(T, ACT, GCONV_GKYXC))(                                   \
            GCONV_IMPL_FWD_TRY_WS(name, 0, *P, kind == GCONV_IMPL_BWDD_K_V128, stream, why,     \
                                  len))                                                          \
        (void)kind, (void)P, (void)stream, (void)why, (void)len;                                 \
        return GCONV_ERR_UNSUPPORTED;                                                            \
    }                                                                                            \
    GCONV_IMPL_BWDD_UNUSED static inline gconv_status name##_gemm_one(                           \
        int kind, gconv_impl_fwd_params *P, hipStream_t stream, char *why, size_t len)           \
    {                                                                                            \
        const gconv_status ws_ = name##_gemm_ws(kind, P, stream, why, len);                      \
        if (ws_ != GCONV_ERR_UNSUPPORTED)                                                        \
            return ws_;                                                                          \
        switch (kind) {                                                                          \
            GCONV_IMPL_IF(GCONV_IMPL_FAMVEC(ACT))(                                               \
            case GCONV_IMPL_BWDD_K_V128:                                                         \
                GCONV_IMPL_FWD_LAUNCH_ONE(name##_gv128, T, GCONV_TILE_128x128x32, *P, stream,    \
                                          why, len);                                             \
            case GCONV_IMPL_BWDD_K_V32:                                                          \
                GCONV_IMPL_FWD_LAUNCH_ONE(name##_gv32, T, GCONV_TILE_128x32x32, *P, stream, why, \
                                          len);                                                  \
            case GCONV_IMPL_BWDD_K_V64:                                                          \
                GCONV_IMPL_FWD_LAUNCH_ONE(name##_gv64, T, GCONV_TILE_128x128x32, *P, stream,     \
                                          why, len);)                                            \
        case GCONV_IMPL_BWDD_K_S:                                                                \
            GCONV_IMPL_FWD_LAUNCH_ONE(name##_gs, T, GCONV_TILE_64x64x32, *P, stream, why, len);  \
        default:                                                                                 \
            GCONV_IMPL_FWD_LAUNCH_ONE(name##_gs64, T, GCONV_TILE_64x64x32, *P, stream, why,      \
                                      len);                                                      \
        }                                                                                        \
    }

/* The GEMM kind for p: vectors when the family, K and the pointers allow. */
static inline int gconv_impl_bwdd_kind(const gconv_problem *p, gconv_dtype t, int famvec,
                                       const gconv_bwd_data_args *a)
{
    const int vec = 16 / (int)gconv_dtype_size(t);
    const int big = gconv_impl_bwdd_needs64(p);
    if (famvec && p->K % vec == 0 && ((uintptr_t)a->d_out | (uintptr_t)a->workspace) % 16 == 0)
        return big ? GCONV_IMPL_BWDD_K_V64 : p->C <= 32 ? GCONV_IMPL_BWDD_K_V32 : GCONV_IMPL_BWDD_K_V128;
    return big ? GCONV_IMPL_BWDD_K_S64 : GCONV_IMPL_BWDD_K_S;
}

/* The forward-direct route of an NHWGC instantiation: weight pre-pass (stride 1: one phase),
 * then the forward direct kernels on the forward view (FEWC forced for C = K = 4; it may
 * refuse, GCONV_ERR_UNSUPPORTED, and the caller goes on to the GEMM). */
#define GCONV_IMPL_BWDD_FD_FN(name, T)                                                           \
    GCONV_IMPL_BWDD_UNUSED static inline gconv_status name##_fwd_direct(                         \
        const gconv_problem *p, const gconv_bwd_data_args *a, hipStream_t stream, char *why,     \
        size_t len)                                                                              \
    {                                                                                            \
        gconv_problem q_;                                                                        \
        gconv_impl_bwdd_wpre_params wp_;                                                         \
        const gconv_epilogue plain_ = gconv_epi_scale(1.0f);                                     \
        const gconv_epilogue *e_ = a->epi ? a->epi : &plain_;                                    \
        gconv_impl_halo_params H_;                                                               \
        gconv_status s_;                                                                         \
        int i_, halo_, wtr_;                                                                     \
        hipError_t err_;                                                                         \
        if (!gconv_impl_bwdd_fwd_view(p, &q_))                                                   \
            return GCONV_ERR_UNSUPPORTED;                                                        \
        /* depthwise: the weights, flipped, are already what DW3 reads (each group's taps are   \
         * contiguous in either weight layout when C = K = 1), so DW3 reads them in reverse     \
         * order and no pre-pass runs; otherwise (not DW3) the pre-pass below */                \
        if (p->C == 1 && p->K == 1) {                                                            \
            s_ = name##_fd_direct_launch_path(&q_, a->d_out, a->wei, a->d_in, e_, stream,        \
                                              GCONV_IMPL_DIRECT_DW3 | GCONV_IMPL_DIRECT_FLIP);   \
            if (s_ != GCONV_ERR_UNSUPPORTED)                                                     \
                return s_ == GCONV_OK ? GCONV_OK                                                 \
                                      : gconv_impl_fail(s_, why, len,                            \
                                                        "the forward direct kernel failed: %s",  \
                                                        gconv_status_string(s_));                \
        }                                                                                        \
        memset(&wp_, 0, sizeof wp_);                                                             \
        if (!gconv_impl_bwdd_phases(p, &wp_.ph))                                                 \
            return GCONV_ERR_UNSUPPORTED;                                                        \
        /* the halo kernel: on the problem's own weights where it can read them in place (no   \
         * pre-pass; the workspace is not touched, so its alignment does not matter), else on   \
         * the pre-pass's copy in the workspace */                                               \
        wtr_ = GCONV_FWD_HALO && p->C != 1 &&                                                    \
               gconv_impl_halo_plan(&q_, T, a->d_out, a->wei, a->d_in, e_, &H_) &&               \
               gconv_impl_halo_plan_wtr(p, a->wei, &H_);                                         \
        if (wtr_)                                                                                \
            GCONV_IMPL_BWDD_HALO_LAUNCH(name, &q_, H_, stream, why, len);                        \
        halo_ = GCONV_FWD_HALO && p->C != 1 &&                                                   \
                gconv_impl_halo_plan(&q_, T, a->d_out, a->workspace, a->d_in, e_, &H_);          \
        if (p->C != 1 && p->C != 4 && !halo_)                                                    \
            return GCONV_ERR_UNSUPPORTED; /* misaligned pointers: the GEMM takes it */           \
        if (p->C == 4 && !halo_) {                                                               \
            gconv_impl_direct_plan pl_;                                                          \
            if (!gconv_impl_direct_plan_make(&q_, T, a->d_out, a->workspace, a->d_in, e_,        \
                                             GCONV_IMPL_DIRECT_FEWC, &pl_))                      \
                return GCONV_ERR_UNSUPPORTED;                                                    \
        }                                                                                        \
        wp_.G = p->G, wp_.K = p->K, wp_.C = p->C;                                                \
        for (i_ = 0; i_ < 3; i_++)                                                               \
            wp_.f[i_] = p->filter[i_], wp_.dil[i_] = p->dilation[i_], wp_.pad[i_] = p->pad_lo[i_]; \
        wp_.sw = gconv_weight_strides(p);                                                        \
        hipLaunchKernelGGL(name##_wpre,                                                          \
                           dim3(gconv_impl_bwdd_grid((long long)gconv_impl_bwdd_wpre_tiles(&wp_), 1)), \
                           dim3(GCONV_IMPL_BWDD_BLOCK), 0, stream, wp_, a->wei, a->workspace);   \
        err_ = hipGetLastError();                                                                \
        if (err_ != hipSuccess)                                                                  \
            return gconv_impl_fail(GCONV_ERR_RUNTIME, why, len, "kernel launch failed: %s",      \
                                   hipGetErrorString(err_));                                     \
        if (halo_)                                                                               \
            GCONV_IMPL_BWDD_HALO_LAUNCH(name, &q_, H_, stream, why, len);                        \
        s_ = name##_fd_direct_launch_path(&q_, a->d_out, a->workspace, a->d_in, e_, stream,      \
                                          p->C == 4 ? GCONV_IMPL_DIRECT_FEWC                     \
                                                    : GCONV_IMPL_DIRECT_AUTO);                   \
        if (s_ != GCONV_OK)                                                                      \
            return gconv_impl_fail(s_, why, len, "the forward direct kernel failed: %s",         \
                                   gconv_status_string(s_));                                     \
        return GCONV_OK;                                                                         \
    }

#define GCONV_IMPL_BWDD_DEFAULT(name, T, ACT, WEI, EPI_FN, USER)                                 \
    GCONV_IMPL_BWDD_GEMMS(name, T, ACT, EPI_FN)                                                  \
    GCONV_IMPL_BWDD_SMALL(name, T, ACT, EPI_FN, GCONV_IMPL_BWDD_ISNHWGC(ACT))                                               \
    GCONV_IMPL_IF(GCONV_IMPL_BWDD_ISNHWGC(ACT))(GCONV_IMPL_DIRECT_FWD(name##_fd, T, EPI_FN))     \
    GCONV_IMPL_IF(GCONV_IMPL_BWDD_ISNHWGC(ACT))(GCONV_IMPL_FWD_HALO_KERNEL(name##_fd, T, EPI_FN, 1)) \
    GCONV_IMPL_BWDD_UNUSED static inline size_t name##_workspace_size(const gconv_problem *p)   \
    {                                                                                            \
        if (!p || gconv_problem_check(p, NULL, 0) != GCONV_OK)                                   \
            return 0;                                                                            \
        if (gconv_impl_bwdd_fd_route(p, T, GCONV_IMPL_BWDD_ISNHWGC(ACT)))                           \
            return gconv_impl_bwdd_ws(p, T);                                                     \
        if (gconv_impl_bwdd_direct(p, USER))                                                     \
            return 0;                                                                            \
        return gconv_impl_bwdd_ws(p, T);                                                         \
    }                                                                                            \
    GCONV_IMPL_BWDD_UNUSED static inline int name##_supports(const gconv_problem *p, char *why,  \
                                                             size_t len)                         \
    {                                                                                            \
        return gconv_impl_bwdd_check(p, NULL, T, ACT, WEI, 0, why, len) == GCONV_OK;             \
    }                                                                                            \
    GCONV_IMPL_IF(GCONV_IMPL_BWDD_ISNHWGC(ACT))(GCONV_IMPL_BWDD_FD_FN(name, T))                   \
    GCONV_IMPL_BWDD_UNUSED static inline gconv_status name(const gconv_problem *p,               \
                                                           const gconv_bwd_data_args *a,         \
                                                           hipStream_t stream)                   \
    {                                                                                            \
        char *why_ = a ? a->why : NULL;                                                          \
        size_t len_ = a ? a->why_len : 0;                                                        \
        gconv_status s_;                                                                         \
        if (!a)                                                                                  \
            return gconv_impl_fail(GCONV_ERR_NULL, NULL, 0, "the argument pointer is null");     \
        s_ = gconv_impl_bwdd_check(p, a, T, ACT, WEI, name##_workspace_size(p), why_, len_);     \
        if (s_ != GCONV_OK)                                                                      \
            return s_;                                                                           \
        if (why_ && len_)                                                                        \
            why_[0] = '\0';                                                                      \
        GCONV_IMPL_IF(GCONV_IMPL_BWDD_ISNHWGC(ACT))(                                             \
            if (gconv_impl_bwdd_fd_route(p, T, 1)) {                                                \
                gconv_status fs_ = name##_fwd_direct(p, a, stream, why_, len_);                  \
                if (fs_ != GCONV_ERR_UNSUPPORTED)                                                \
                    return fs_;                                                                  \
            })                                                                                   \
        if (gconv_impl_bwdd_direct(p, USER))                                                     \
            return name##_direct(p, a, stream, why_, len_);                                      \
        return name##_phased(p, a, gconv_impl_bwdd_kind(p, T, GCONV_IMPL_FAMVEC(ACT), a), stream, \
                             why_, len_);                                                        \
    }

#define GCONV_BWD_DATA(name, T, ACT_FAMILY, WEI_FAMILY)                                          \
    GCONV_IMPL_BWDD_DEFAULT(name, T, ACT_FAMILY, WEI_FAMILY, gconv_impl_epilogue_apply, 0)

#define GCONV_BWD_DATA_USER_OP(name, T, ACT_FAMILY, WEI_FAMILY, OPFN)                            \
    GCONV_IMPL_BWDD_DEFAULT(name, T, ACT_FAMILY, WEI_FAMILY, OPFN, 1)

/* Pinned tile: the phase GEMM only, vector gathers for NHWGC / GNHWC. */
#define GCONV_BWD_DATA_TILED(name, T, ACT_FAMILY, WEI_FAMILY, TILE)                              \
    GCONV_IMPL_FWD_KERNEL(name##_k32, T, TILE, GCONV_IMPL_AMODE(ACT_FAMILY),                     \
                          GCONV_IMPL_AMODE(ACT_FAMILY), 0, 0, GCONV_IMPL_FAMVEC(ACT_FAMILY),     \
                          gconv_impl_epilogue_apply)                                             \
    GCONV_IMPL_FWD_KERNEL(name##_k64, T, TILE, GCONV_IMPL_AMODE(ACT_FAMILY),                     \
                          GCONV_IMPL_AMODE(ACT_FAMILY), 1, 0, GCONV_IMPL_FAMVEC(ACT_FAMILY),     \
                          gconv_impl_epilogue_apply)                                             \
    GCONV_IMPL_BWDD_UNUSED static inline gconv_status name##_gemm_one(                           \
        int kind, gconv_impl_fwd_params *P, hipStream_t stream, char *why, size_t len)           \
    {                                                                                            \
        if (kind)                                                                                \
            GCONV_IMPL_FWD_LAUNCH_ONE(name##_k64, T, TILE, *P, stream, why, len);                \
        GCONV_IMPL_FWD_LAUNCH_ONE(name##_k32, T, TILE, *P, stream, why, len);                    \
    }                                                                                            \
    /* a pinned tile always runs the pre-pass and its own engine tile */                        \
    GCONV_IMPL_BWDD_UNUSED static inline gconv_status name##_gemm_ws(                           \
        int kind, gconv_impl_fwd_params *P, hipStream_t stream, char *why, size_t len)           \
    {                                                                                            \
        (void)kind, (void)P, (void)stream, (void)why, (void)len;                                 \
        return GCONV_ERR_UNSUPPORTED;                                                            \
    }                                                                                            \
    GCONV_IMPL_BWDD_SMALL(name, T, ACT_FAMILY, gconv_impl_epilogue_apply, 0)                \
    GCONV_IMPL_BWDD_UNUSED static inline size_t name##_workspace_size(const gconv_problem *p)   \
    {                                                                                            \
        if (!p || gconv_problem_check(p, NULL, 0) != GCONV_OK)                                   \
            return 0;                                                                            \
        return gconv_impl_bwdd_ws(p, T);                                                         \
    }                                                                                            \
    GCONV_IMPL_BWDD_UNUSED static inline gconv_status name##_tiled_check(                        \
        const gconv_problem *p, const gconv_bwd_data_args *a, char *why, size_t len)             \
    {                                                                                            \
        const int vec_ = 16 / (int)gconv_dtype_size(T), av_ = GCONV_IMPL_FAMVEC(ACT_FAMILY);     \
        int i_;                                                                                  \
        gconv_status s_ = gconv_impl_bwdd_check(p, a, T, ACT_FAMILY, WEI_FAMILY,                 \
                                                a ? name##_workspace_size(p) : 0, why, len);     \
        if (s_ != GCONV_OK)                                                                      \
            return s_;                                                                           \
        for (i_ = 0; i_ < 3; i_++)                                                               \
            if (p->stride[i_] > GCONV_IMPL_BWDD_MAXS)                                            \
                return gconv_impl_fail(GCONV_ERR_UNSUPPORTED, why, len,                          \
                                       "this pinned GEMM takes strides up to %d (axis %d: %d)",  \
                                       GCONV_IMPL_BWDD_MAXS, i_, p->stride[i_]);                 \
        if (av_ && p->K % vec_)                                                                  \
            return gconv_impl_fail(GCONV_ERR_ALIGNMENT, why, len,                                \
                                   "this pinned vector kernel needs K (%d) to be a multiple of " \
                                   "%d", p->K, vec_);                                            \
        if (a && av_ && ((uintptr_t)a->d_out | (uintptr_t)a->d_in | (uintptr_t)a->workspace) % 16) \
            return gconv_impl_fail(GCONV_ERR_ALIGNMENT, why, len,                                \
                                   "this pinned vector kernel needs 16-byte aligned d_out, d_in " \
                                   "and workspace pointers");                                    \
        return GCONV_OK;                                                                         \
    }                                                                                            \
    GCONV_IMPL_BWDD_UNUSED static inline int name##_supports(const gconv_problem *p, char *why,  \
                                                             size_t len)                         \
    {                                                                                            \
        return name##_tiled_check(p, NULL, why, len) == GCONV_OK;                                \
    }                                                                                            \
    GCONV_IMPL_BWDD_UNUSED static inline gconv_status name(const gconv_problem *p,               \
                                                           const gconv_bwd_data_args *a,         \
                                                           hipStream_t stream)                   \
    {                                                                                            \
        char *why_ = a ? a->why : NULL;                                                          \
        size_t len_ = a ? a->why_len : 0;                                                        \
        gconv_status s_;                                                                         \
        if (!a)                                                                                  \
            return gconv_impl_fail(GCONV_ERR_NULL, NULL, 0, "the argument pointer is null");     \
        s_ = name##_tiled_check(p, a, why_, len_);                                               \
        if (s_ != GCONV_OK)                                                                      \
            return s_;                                                                           \
        if (why_ && len_)                                                                        \
            why_[0] = '\0';                                                                      \
        return name##_phased(p, a, gconv_impl_bwdd_needs64(p), stream, why_, len_);              \
    }

#endif /* GCONV_BWD_DATA_H */
