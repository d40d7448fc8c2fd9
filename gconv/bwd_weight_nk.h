/* gconv/bwd_weight_nk.h: the backward-weight BWN kernel ("narrow K"): many input channels and
 * few output channels per group (C a multiple of 64, 16 < K <= 40: detection heads such as
 * RetinaNet's K = 36) on tensor cores, each input pixel read from global memory once per unit
 * rather than once per filter tap. Included by gconv/bwd_weight.h, whose parameters, hand-over
 * (gconv_impl_bww_emit, slabs) and finalize kernels it uses; not meant to be included alone.
 *
 * Scope (gconv_impl_bwn_plan says whether a problem fits; the TC kernel takes the rest): CUDA
 * sm_80+ (mma.sync), fp16 / bf16 inputs (any weight-gradient type), input and output gradient
 * both NHWGC or both GNHWC, 1D / 2D, stride 1, any dilation and pads, 4 to 9 filter taps, C a
 * multiple of 64, K a multiple of 4 with 16 < K <= 40, input 16-byte and d_out 8-byte aligned
 * (16 where K % 8 == 0), fewer than 2^31 elements per tensor; the automatic algorithm without a
 * user split.
 *
 * Why. The TC kernel runs these layers as an im2col GEMM with M = C * taps: each tap's tile
 * copies the same input pixels again (9x the input through L2 for 3x3), and its 64-wide K tile
 * leaves 28 of 64 columns idle at K = 36 (H100: 46 us at 100x100 against a 4.4 us floor).
 *
 * Work units. A unit is one chunk, 64 of one group's input channels at TG of the filter's taps
 * (chunk = (g * C / 64 + c / 64) * NTG + tap group; TG is all taps, or 3 where that gives small
 * images more blocks), over R output rows and SW output columns (a segment: rows wider than 64
 * columns are cut into equal segments) of one image. Shared memory holds the unit's input
 * pixels with their halo, flattened to Wp = SW + (X - 1) * dw columns (pixel p = hr * Wp + hc
 * is input row oh0 - ph + hr, column ow0 - pw + hc; zero outside the image), and the unit's
 * d_out pixels as "virtual" pixels q = r * Wp + c (r < R, c < Wp; zero where c >= SW, past
 * the image, or q >= R * Wp): tap (ty, tx) of virtual pixel q reads halo pixel q + ty * dh *
 * Wp + tx * dw, as in the halo kernels of gconv/igemm_halo.h. Per unit the GEMM is
 *     d_wei[g][k][tap][c0 + c] += sum over q of halo[q + toff(tap)][c] * d_out[q][k],
 * M = the chunk's taps * 64 rows (tap-major, d_wei's GKYXC order), N = K (5 n-tiles of 8, the
 * columns past K zero), reduction over the unit's virtual pixels in k-steps of 16.
 *
 * The math. The chunk's 4 * TG m-tiles (16 channels at one tap each) are dealt out MTW = 3
 * to a warp (12 warps for all 9 taps of a 3x3: a multiple of the 4 schedulers, whose tensor
 * pipes the barrier at each unit makes wait for the busiest; 9 warps of 4 m-tiles ran 3 on one
 * scheduler), each with all 5 n-tiles: 60 fp32 accumulators a thread. Per k-step a warp
 * loads B (16 pixels x 40 k) with two ldmatrix.x4.trans and one x2.trans from the d_out tile
 * and, per m-tile, A (16 channels x 16 pixels) with one ldmatrix.x4.trans straight from the
 * halo at the m-tile's tap shift, then issues 15 m16n8k16 mma.sync; the next k-step's
 * fragments are loaded before this one's products. Slabs: one block per SM; the grid is
 * persistent, each block taking a contiguous range of units (ordered chunk, image, band,
 * segment), so its accumulators carry across the units of a chunk. Direct: one block per
 * chunk, its range the chunk's units. Units arrive by cp.async into a ring of S = 3 buffers
 * (2 where three do not fit): the next two units' copies run under a unit's math (one barrier
 * per unit).
 *
 * Hand-over, two ways (the plan picks one). Slabs (as the BWH kernel's): at the end of its
 * range or of a chunk a block stores its sums as slab `rank among the blocks sharing the
 * chunk` of the workspace (both reduction modes: each block's order is fixed, so the result is
 * deterministic either way), the chunk's last block zero-filling the slabs no block of that
 * chunk reached, and the finalize kernel sums the slabs in order and applies the epilogue.
 * Direct (small images, where the finalize's launch and the slabs' round trip cost more than
 * the work): one block per chunk runs all of the chunk's units, stages its sums in shared
 * memory and stores final d_wei with the epilogue (gconv_impl_bwn_direct); no workspace, one
 * launch, deterministic.
 *
 * Non-finite inputs: the thrown-away virtual pixels (columns past the segment, rows past the
 * band) multiply their zero d_out by real input pixels next to the unit, so an Inf or NaN
 * input there turns sums NaN that the reference leaves finite (as in the other halo kernels).
 * Inputs are assumed finite.
 *
 * Shared memory per buffer: P halo pixels of 144 bytes (64 channels + 8 pad: the 8 pixels of
 * an ldmatrix fall in distinct 16-byte bank groups) then Q d_out pixels of 80 bytes (40
 * channels, an odd number of 16-byte chunks, likewise; channels K .. 39 zeroed once and never
 * copied); after the buffers, per halo pixel its (row, column) in the tile and per virtual
 * pixel its (row, column) of d_out (row -1: outside the band's R x SW). Direct mode stages its
 * final sums (K rows of TG * 64 + 4 floats) over buffers and tables, once they are done with.
 */
#ifndef GCONV_BWD_WEIGHT_NK_H
#define GCONV_BWD_WEIGHT_NK_H

#define GCONV_IMPL_BWN_MTW 3           /* m-tiles a warp holds */
#define GCONV_IMPL_BWN_NT 5            /* n-tiles a warp holds: K <= 40 */
#define GCONV_IMPL_BWN_PS 144          /* bytes per halo pixel in shared memory */
#define GCONV_IMPL_BWN_DS 80           /* bytes per d_out pixel in shared memory */
#define GCONV_IMPL_BWN_MAX_TAPS 9      /* 4 * taps / 3 warps: 12 at most (384 threads) */
#define GCONV_IMPL_BWN_MAX_WARPS ((4 * GCONV_IMPL_BWN_MAX_TAPS + GCONV_IMPL_BWN_MTW - 1) / GCONV_IMPL_BWN_MTW)
#define GCONV_IMPL_BWN_MAX_SMEM (200 * 1024)
#ifndef GCONV_IMPL_BWN_TARGET
#define GCONV_IMPL_BWN_TARGET 256      /* virtual pixels per unit, at most */
#endif

typedef struct gconv_impl_bwn_params {
    gconv_impl_bww_params w;  /* d_wei, workspace, reduction mode (splits = slabs) */
    int CH, K;                /* 64-channel chunks per group; output channels per group */
    int TG, NTG;              /* taps a block's chunk covers, tap groups (CH * NTG chunks a
                               * group) */
    int direct;               /* 1: one block per chunk stores final d_wei (no slabs) */
    int H, W, OH, OW;         /* input and output sizes (1D: H = OH = 1) */
    int X, taps, dh, dw, ph, pw;
    int R, SW, Wp, Q, P;      /* band rows, segment columns, tile width, virtual and halo pixels */
    int bands, segs, per;     /* per image; units per chunk (N * bands * segs) */
    int units, blocks;        /* work units; persistent blocks launched */
    int kc, kcb;              /* d_out copies per pixel and their bytes (16, or 8: K % 8 == 4) */
    int warps, S;             /* warps a block (4 * taps m-tiles, MTW each); buffers (2 or 3) */
    int smax;                 /* the shared memory a plan may use on this device */
    int buf_bytes;            /* one buffer: halo (P * PS bytes) then d_out (Q * DS) */
    int in_n, in_h, in_w, in_g; /* element strides */
    int out_n, out_h, out_w, out_g;
} gconv_impl_bwn_params;

/* Floats per row of the direct way's staged sums: TG taps of 64 channels, 4 more so that rows
 * start in different banks. */
static inline GCONV_HD int gconv_impl_bwn_srow(const gconv_impl_bwn_params *P)
{
    return P->TG * 64 + 4;
}

#if GCONV_IMPL_IGEMM_MATH == GCONV_IMPL_MATH_MMA
/* Chunk -> its group, 64-channel chunk within the group, first tap and number of taps (tap
 * group tgi covers taps TG * tgi .. + TG - 1, the last group possibly fewer). */
static __device__ __forceinline__ void gconv_impl_bwn_chunk(const gconv_impl_bwn_params *P,
                                                            int chunk, int *g, int *cc, int *t0,
                                                            int *tn)
{
    const int ct = P->CH * P->NTG, gg = chunk / ct, r = chunk - gg * ct, c = r / P->NTG;
    const int t = (r - c * P->NTG) * P->TG;
    *g = gg, *cc = c, *t0 = t, *tn = P->taps - t < P->TG ? P->taps - t : P->TG;
}

/* Unit u -> its chunk, image, first output row and first output column. */
static __device__ __forceinline__ void gconv_impl_bwn_unit(const gconv_impl_bwn_params *P, int u,
                                                           int *chunk, int *n, int *oh0, int *ow0)
{
    const int c = u / P->per, r = u - c * P->per, bs = P->bands * P->segs;
    const int nn = r / bs, t = r - nn * bs, band = t / P->segs;
    *chunk = c, *n = nn, *oh0 = band * P->R, *ow0 = (t - band * P->segs) * P->SW;
}

/* Issue the cp.async copies of unit u into the buffer at buf: its halo (8 threads a pixel, 16
 * bytes each), then its d_out pixels (kc copies of kcb bytes a pixel), zero-filled outside the
 * image and the band. */
static __device__ __forceinline__ void gconv_impl_bwn_fill(const gconv_impl_bwn_params *P,
                                                           unsigned char *buf, const int2 *th,
                                                           const int2 *tq, int u)
{
    const int tid = (int)threadIdx.x, nth = (int)blockDim.x, q = tid & 7;
    const unsigned short *in = (const unsigned short *)P->w.in;
    const unsigned short *dout = (const unsigned short *)P->w.dout;
    const unsigned hs = gconv_impl_igemm_smem_addr(buf) + (unsigned)q * 16u;
    const unsigned ds = gconv_impl_igemm_smem_addr(buf + P->P * GCONV_IMPL_BWN_PS);
    int chunk, n, oh0, ow0, p, i;
    gconv_impl_bwn_unit(P, u, &chunk, &n, &oh0, &ow0);
    {
        int g, cc, t0, tn;
        gconv_impl_bwn_chunk(P, chunk, &g, &cc, &t0, &tn);
        const int ih0 = oh0 - P->ph, iw0 = ow0 - P->pw;
        const int base = n * P->in_n + g * P->in_g + cc * 64 + q * 8;
        const int obase = n * P->out_n + g * P->out_g;
        const int kce = P->kcb >> 1; /* elements per d_out copy */
        for (p = tid >> 3; p < P->P; p += nth >> 3) {
            const int2 t = th[p];
            const int ih = ih0 + t.x, iw = iw0 + t.y;
            const int ok = (unsigned)ih < (unsigned)P->H && (unsigned)iw < (unsigned)P->W;
            gconv_impl_igemm_cp_async16(hs + (unsigned)(p * GCONV_IMPL_BWN_PS),
                                        in + (ok ? base + ih * P->in_h + iw * P->in_w : 0), ok);
        }
        /* thread tid copies piece tid % kc of pixels tid / kc, + nth / kc, ... (the threads
         * past a whole number of pixels a pass copy nothing) */
        const int pc = tid % P->kc, pstep = nth / P->kc;
        for (i = tid / P->kc; i < P->Q && tid < pstep * P->kc; i += pstep) {
            const int2 t = tq[i];
            const int oh = oh0 + t.x, ow = ow0 + t.y;
            const int ok = t.x >= 0 && oh < P->OH && ow < P->OW;
            const unsigned short *src =
                dout + (ok ? obase + oh * P->out_h + ow * P->out_w + pc * kce : 0);
            const unsigned dst = ds + (unsigned)(i * GCONV_IMPL_BWN_DS + pc * P->kcb);
            if (P->kcb == 16)
                gconv_impl_igemm_cp_async16(dst, src, ok);
            else
                gconv_impl_igemm_cp_async8(dst, src, ok);
        }
    }
}

/* Hand the accumulators of chunk `chunk` over as this block's slab (see the header comment):
 * lane (r8, c2) holds, for m-tile mt = MTW * warp + i (tap t0 + mt / 4, channels 16 (mt % 4)
 * ..), rows r8 (+ 8) and columns k = 8 nt + c2 (+ 1) of the chunk's GEMM; m-tiles past the
 * chunk's taps (the last warp's, where 4 * TG is not a multiple of MTW, and those of a last
 * tap group with fewer taps) are not handed over. */
static __device__ __forceinline__ void
gconv_impl_bwn_emit(const gconv_impl_bwn_params *P,
                    float (*acc)[GCONV_IMPL_BWN_NT][4], int chunk, int warp)
{
    const gconv_impl_bww_params *w = &P->w;
    const int lane = (int)threadIdx.x & 31, r8 = lane >> 2, c2 = (lane & 3) * 2;
    int g, cc, t0, tn;
    gconv_impl_bwn_chunk(P, chunk, &g, &cc, &t0, &tn);
    int64_t b0, b1;
    gconv_impl_bww_chunk_blocks(chunk, P->per, P->blocks, P->units, &b0, &b1);
    const int slab = (int)blockIdx.x - (int)b0;
    const int s1 = (int)blockIdx.x == (int)b1 ? w->splits : slab + 1;
    const int mts = 4 * tn; /* m-tiles handed over */
    float *base = w->ws + (int64_t)slab * w->total + ((int64_t)g * P->K + c2) * w->Ncol;
    int jb[GCONV_IMPL_BWN_MTW], s, i, nt, e;
#pragma unroll
    for (i = 0; i < GCONV_IMPL_BWN_MTW; i++) {
        const int mt = GCONV_IMPL_BWN_MTW * warp + i;
        /* d_wei column of the m-tile's row r8; -1: not handed over */
        jb[i] = mt < mts ? (t0 + (mt >> 2)) * w->C + cc * 64 + (mt & 3) * 16 + r8 : -1;
    }
    /* per accumulator row (nt, e) its slab row, then the zeros of the later slabs (the
     * chunk's last block only): the row address is used at once, never held across */
#pragma unroll
    for (nt = 0; nt < GCONV_IMPL_BWN_NT; nt++)
#pragma unroll
        for (e = 0; e < 4; e++) {
            const int k = nt * 8 + c2 + (e & 1);
            float *row = base + (int64_t)(nt * 8 + (e & 1)) * w->Ncol + (e >> 1) * 8;
            if (k >= P->K)
                continue;
#pragma unroll
            for (i = 0; i < GCONV_IMPL_BWN_MTW; i++)
                if (jb[i] >= 0)
                    row[jb[i]] = acc[i][nt][e];
#pragma unroll 1
            for (s = slab + 1; s < s1; s++) {
                row += w->total;
#pragma unroll
                for (i = 0; i < GCONV_IMPL_BWN_MTW; i++)
                    if (jb[i] >= 0)
                        row[jb[i]] = 0.0f;
            }
        }
}

/* Direct mode (the block ran every unit of its chunk): the sums are final. They are staged in
 * shared memory at st as rows k of srow floats (column (tap - t0) * 64 + channel; srow = TG *
 * 64 + 4, so that the 8 rows x 4 column pairs of a warp's writes fall in distinct banks), then
 * every thread stores runs of four consecutive d_wei elements (four channels of one k and tap)
 * through gconv_impl_bww_final4: the epilogue, and 8-byte (16-bit) or 16-byte (fp32) stores
 * where d_wei is packed. The caller has made the buffers free (no copies in flight, every warp
 * past its last products). */
static __device__ __forceinline__ void
gconv_impl_bwn_direct(const gconv_impl_bwn_params *P, float (*acc)[GCONV_IMPL_BWN_NT][4],
                      int chunk, int warp, float *st)
{
    const int tid = (int)threadIdx.x, nth = (int)blockDim.x;
    const int lane = tid & 31, r8 = lane >> 2, c2 = (lane & 3) * 2;
    const int srow = gconv_impl_bwn_srow(P);
    int g, cc, t0, tn, i, nt, e;
    gconv_impl_bwn_chunk(P, chunk, &g, &cc, &t0, &tn);
#pragma unroll
    for (i = 0; i < GCONV_IMPL_BWN_MTW; i++) {
        const int mt = GCONV_IMPL_BWN_MTW * warp + i;
        if (mt >= 4 * tn)
            continue;
        float *col = st + (mt >> 2) * 64 + (mt & 3) * 16 + r8;
#pragma unroll
        for (nt = 0; nt < GCONV_IMPL_BWN_NT; nt++)
#pragma unroll
            for (e = 0; e < 4; e++) {
                const int k = nt * 8 + c2 + (e & 1);
                if (k < P->K)
                    col[k * srow + (e >> 1) * 8] = acc[i][nt][e];
            }
    }
    __syncthreads(); /* every sum staged before any is read */
    {
        /* thread t stores channels c4 .. c4 + 3 (c4 = 4 (t % 16)) of row segments rs = t / 16,
         * + nth / 16, ... (segment rs: k = rs / tn, tap t0 + rs % tn; 64 channels each), the
         * segment's (k, tap) stepped without divisions */
        const int c4 = (tid & 15) * 4, step = nth >> 4, sk = step / tn, stl = step - sk * tn;
        const int64_t Ncol = P->w.Ncol, C = P->w.C;
        const int64_t row0 = (int64_t)g * P->K * Ncol + (int64_t)t0 * C + cc * 64 + c4;
        int k = (tid >> 4) / tn, tl = (tid >> 4) - k * tn;
        for (; k < P->K; k += sk, tl += stl) {
            if (tl >= tn)
                tl -= tn, k++;
            if (k >= P->K)
                break;
            gconv_impl_bww_final4(&P->w, row0 + k * Ncol + tl * C,
                                  *(const float4 *)(st + k * srow + tl * 64 + c4));
        }
    }
}

/* The A fragments (MTW m-tiles) and B fragments (5 n-tiles) of k-step s: sa is the buffer's
 * halo address, ao the lane's offsets of its m-tiles, sb the d_out address with the lane's
 * offset added. */
static __device__ __forceinline__ void gconv_impl_bwn_frags(unsigned sa, const int *ao,
                                                            unsigned sb, int s,
                                                            unsigned (*a)[4], unsigned (*b)[2])
{
    const unsigned bs = sb + (unsigned)(s * 16 * GCONV_IMPL_BWN_DS);
    const unsigned as = sa + (unsigned)(s * 16 * GCONV_IMPL_BWN_PS);
    unsigned t4[4];
    int i;
    gconv_impl_igemm_ldsm_x4_t(bs, t4);
    b[0][0] = t4[0], b[0][1] = t4[1], b[1][0] = t4[2], b[1][1] = t4[3];
    gconv_impl_igemm_ldsm_x4_t(bs + 32, t4);
    b[2][0] = t4[0], b[2][1] = t4[1], b[3][0] = t4[2], b[3][1] = t4[3];
    gconv_impl_igemm_ldsm_x2_t(bs + 64, t4); /* lanes 0-15's addresses: n-tile 4 */
    b[4][0] = t4[0], b[4][1] = t4[1];
#pragma unroll
    for (i = 0; i < GCONV_IMPL_BWN_MTW; i++)
        gconv_impl_igemm_ldsm_x4_t(as + (unsigned)ao[i], a[i]);
}

static __device__ __forceinline__ void gconv_impl_bwn_zero(float (*acc)[GCONV_IMPL_BWN_NT][4])
{
    int i, nt, e;
#pragma unroll
    for (i = 0; i < GCONV_IMPL_BWN_MTW; i++)
#pragma unroll
        for (nt = 0; nt < GCONV_IMPL_BWN_NT; nt++)
#pragma unroll
            for (e = 0; e < 4; e++)
                acc[i][nt][e] = 0.0f;
}

/* The MTW * 5 products of one k-step. */
static __device__ __forceinline__ void gconv_impl_bwn_mmas(float (*acc)[GCONV_IMPL_BWN_NT][4],
                                                           unsigned (*a)[4], unsigned (*b)[2],
                                                           gconv_dtype dt)
{
    int i, nt;
#pragma unroll
    for (i = 0; i < GCONV_IMPL_BWN_MTW; i++)
#pragma unroll
        for (nt = 0; nt < GCONV_IMPL_BWN_NT; nt++)
            gconv_impl_halo_mma(acc[i][nt], a[i], b[nt], dt);
}
/* A rows of this lane for its m-tiles mt of chunk `chunk` (ldmatrix.x4.trans: matrix lane / 8
 * = (channel half (lane / 8) % 2, pixel half lane / 16), row lane % 8 of it = a pixel): tap
 * t0 + mt / 4 (tap 0 past the chunk's taps: never handed over), channels 16 (mt % 4) .. */
static __device__ __forceinline__ void gconv_impl_bwn_aoff(const gconv_impl_bwn_params *P,
                                                           int chunk, int warp, int *aoff)
{
    const int lane = (int)threadIdx.x & 31;
    int g, cc, t0, tn, i;
    gconv_impl_bwn_chunk(P, chunk, &g, &cc, &t0, &tn);
#pragma unroll
    for (i = 0; i < GCONV_IMPL_BWN_MTW; i++) {
        const int mt = GCONV_IMPL_BWN_MTW * warp + i, tl = mt >> 2;
        const int tap = tl < tn ? t0 + tl : 0;
        const int ty = tap / P->X, tx = tap - ty * P->X;
        aoff[i] = (ty * P->dh * P->Wp + tx * P->dw + (lane & 7) + (lane >> 4) * 8) *
                      GCONV_IMPL_BWN_PS + (mt & 3) * 32 + ((lane >> 3) & 1) * 16;
    }
}
#endif

static __device__ __forceinline__ void gconv_impl_bwn_body(const gconv_impl_bwn_params *P,
                                                           gconv_dtype dt)
{
#if GCONV_IMPL_IGEMM_MATH == GCONV_IMPL_MATH_MMA
    GCONV_IMPL_DYN_SMEM(smem);
    const int tid = (int)threadIdx.x, lane = tid & 31, warp = tid >> 5, nth = (int)blockDim.x;
    const int Wp = P->Wp, bb = P->buf_bytes, hb = P->P * GCONV_IMPL_BWN_PS;
    int2 *th = (int2 *)(smem + P->S * bb); /* [P] halo pixel: row, column in the tile */
    int2 *tq = th + P->P;               /* [Q] virtual pixel: row (-1: none), column */
    int u = (int)((int64_t)blockIdx.x * P->units / P->blocks);
    const int uend = (int)((int64_t)(blockIdx.x + 1) * P->units / P->blocks);
    const int qsteps = P->Q >> 4;
    const int S = P->S;
    float acc[GCONV_IMPL_BWN_MTW][GCONV_IMPL_BWN_NT][4];
    unsigned fa[2][GCONV_IMPL_BWN_MTW][4], fb[2][GCONV_IMPL_BWN_NT][2];
    int aoff[GCONV_IMPL_BWN_MTW], i, buf, chunk, boff;
    if (u >= uend)
        return;
    for (i = tid; i < P->P; i += nth) {
        const int hr = i / Wp;
        th[i] = make_int2(hr, i - hr * Wp);
    }
    for (i = tid; i < P->Q; i += nth) {
        const int r = i / Wp, c = i - r * Wp;
        tq[i] = make_int2(r < P->R && c < P->SW ? r : -1, c);
    }
    /* d_out channels K .. 39 of every buffer: zero for good (no copy writes them) */
    for (i = tid; i < S * P->Q; i += nth) {
        const int b = i / P->Q;
        unsigned *d = (unsigned *)(smem + b * bb + hb + (i - b * P->Q) * GCONV_IMPL_BWN_DS);
        int wd;
        for (wd = P->K / 2; wd < GCONV_IMPL_BWN_DS / 4; wd++)
            d[wd] = 0u;
    }
    chunk = u / P->per;
    gconv_impl_bwn_aoff(P, chunk, warp, aoff);
    /* B: pixel (lane % 8) + 8 ((lane / 8) % 2), n-tile lane / 16 of each x4 pair (16 bytes),
     * pair nt / 2 adding 32 bytes */
    boff = ((lane & 7) + ((lane >> 3) & 1) * 8) * GCONV_IMPL_BWN_DS + (lane >> 4) * 16;
    gconv_impl_bwn_zero(acc);
    __syncthreads(); /* the tables and the zeroed channels, before the first copies */
    /* the first S - 1 units' copies, one commit group each (empty past the range) */
    for (i = 0; i < S - 1; i++) {
        if (u + i < uend)
            gconv_impl_bwn_fill(P, smem + i * bb, th, tq, u + i);
        gconv_impl_igemm_cp_commit();
    }
    for (buf = 0; u < uend; u++, buf = buf + 1 == S ? 0 : buf + 1) {
        const unsigned sa = gconv_impl_igemm_smem_addr(smem + buf * bb);
        const unsigned sb = gconv_impl_igemm_smem_addr(smem + buf * bb + hb) + (unsigned)boff;
        const int nchunk = (u + 1) / P->per;
        int s;
        /* this unit's copies are in (S - 2 later groups may still be in flight), and every
         * warp is done with unit u - 1, whose buffer unit u + S - 1's copies overwrite */
        gconv_impl_igemm_cp_wait(S - 2);
        __syncthreads();
        if (u + S - 1 < uend)
            gconv_impl_bwn_fill(P, smem + (buf == 0 ? S - 1 : buf - 1) * bb, th, tq, u + S - 1);
        gconv_impl_igemm_cp_commit();
        /* fragments of k-step s + 1 are loaded before the products of k-step s are issued
         * (two register sets, the loop unrolled by two): the asm statements keep their order,
         * and an mma right behind its ldmatrix waits for it */
        gconv_impl_bwn_frags(sa, aoff, sb, 0, fa[0], fb[0]);
#pragma unroll 1
        for (s = 0; s < qsteps; s += 2) {
            if (s + 1 < qsteps)
                gconv_impl_bwn_frags(sa, aoff, sb, s + 1, fa[1], fb[1]);
            gconv_impl_bwn_mmas(acc, fa[0], fb[0], dt);
            if (s + 1 == qsteps)
                break;
            if (s + 2 < qsteps)
                gconv_impl_bwn_frags(sa, aoff, sb, s + 2, fa[0], fb[0]);
            gconv_impl_bwn_mmas(acc, fa[1], fb[1], dt);
        }
        if (!P->direct && (u + 1 == uend || nchunk != chunk)) {
            gconv_impl_bwn_emit(P, acc, chunk, warp);
            gconv_impl_bwn_zero(acc);
            if (u + 1 < uend)
                gconv_impl_bwn_aoff(P, nchunk, warp, aoff); /* its taps may differ */
        }
        chunk = nchunk;
    }
    gconv_impl_igemm_cp_wait(0); /* only empty groups remain; none may outlive the block */
    if (P->direct) {
        /* the block's range is its chunk's units (chunk = the block); the staged sums
         * overwrite the buffers and tables: every warp must be past its last products */
        __syncthreads();
        gconv_impl_bwn_direct(P, acc, (int)blockIdx.x, warp, (float *)smem);
    }
#else
    (void)P, (void)dt;
#endif
}

/* ---- host side ------------------------------------------------------------------------------- */

/* Tuning hooks, one each per translation unit: gconv_impl_bwn_blocks > 0 pins the BWN kernel's
 * persistent grid to that many blocks (at most one per unit; slabs only, so that together with
 * gconv_impl_bwn_mode 1 the plan refuses); gconv_impl_bwn_tg > 0 pins the taps of a chunk
 * (clamped to the filter's); gconv_impl_bwn_mode 0 / 1 pins slabs / direct (other values
 * refuse). Defaults (0, 0, -1) let gconv_impl_bwn_plan choose. */
static int gconv_impl_bwn_blocks __attribute__((unused)) = 0;
static int gconv_impl_bwn_tg __attribute__((unused)) = 0;
static int gconv_impl_bwn_mode __attribute__((unused)) = -1;

/* The model's cost of the finalize kernel that a slab plan adds, ns: small, as launches back
 * to back overlap it with the main kernel's tail (H100: the K = 36 head at 7x7 took 7.4 us
 * through slabs against 7.8 direct, a 4x4 one 6.4 against 5.8; bench/NOTES.md, session 32). */
#ifndef GCONV_IMPL_BWN_FIN_NS
#define GCONV_IMPL_BWN_FIN_NS 300.0
#endif

/* Plan of the BWN kernel for a filled W: 1 and B, or 0 when it does not take the problem (scope
 * in the header comment). Geometry: segments of at most 64 columns, bands of R rows (evened
 * out over the image) with R * Wp <= GCONV_IMPL_BWN_TARGET whose buffers fit. A chunk covers
 * TG taps: all of the filter's, or 3 (a 3x3 filter's row) where 3 divides them (more, smaller
 * blocks for small images). Two ways to sum: slabs (persistent blocks, one per SM at most, each
 * a contiguous range of units; the finalize sums) or direct (one block per chunk over all its
 * units, storing final d_wei itself). R, TG, the way and the block count minimise a model of
 * the time: the most units a block runs, each costing its mma.sync (taken at 0.5 a cycle per
 * SM, 1.7 GHz) or its copies (at 3 TB/s over 132 SMs), whichever is longer, and 300 ns; plus
 * for slabs the slabs written and summed again (at 6 TB/s: they stay in L2), one block's slab
 * stores (at 50 bytes a ns: one SM's store rate) and GCONV_IMPL_BWN_FIN_NS, for direct one
 * block's final stores. (H100, K36@50: 3 TB/s for the slabs picked 52 blocks of two units,
 * 15.9 us, against 14.3 for 104 of one.) */
static inline int gconv_impl_bwn_plan(const gconv_problem *p, const gconv_impl_bww_params *W,
                                      gconv_impl_bwn_params *B)
{
#if GCONV_IMPL_HALO_ENABLE
    const gconv_layout fi = gconv_layout_family(gconv_in_layout(p));
    const gconv_layout fo = gconv_layout_family(gconv_out_layout(p));
    const int taps = p->filter[1] * p->filter[2];
    const int eo = W->tout == GCONV_F32 ? 4 : 2;
    int OH, OW, segs, SW, Wp, R = 0, bands = 0, Q = 0, Pn = 0, S = 0, sms, smax, m, r, mbest = 0;
    int tg, tgs[2], ntg, it, dm, TG = 0, direct = 0;
    int64_t chunks, per, units = 0, bytes;
    double slab_ns, best = 0.0;
    gconv_act_strides si, so;
    if (W->tin == GCONV_F32 || p->ndim > 2 || fi != fo || (fi != GCONV_NHWGC && fi != GCONV_GNHWC))
        return 0;
    if (p->C % 64 || p->K % 4 || p->K <= 16 || p->K > 8 * GCONV_IMPL_BWN_NT || taps < 4 ||
        taps > GCONV_IMPL_BWN_MAX_TAPS || p->stride[1] != 1 || p->stride[2] != 1)
        return 0;
    if ((uintptr_t)W->in % 16 || (uintptr_t)W->dout % (p->K % 8 ? 8u : 16u))
        return 0;
    if (gconv_in_elems(p) >= ((int64_t)1 << 31) || gconv_out_elems(p) >= ((int64_t)1 << 31))
        return 0;
    si = gconv_in_strides(p), so = gconv_out_strides(p);
    if (si.c != 1 || so.c != 1)
        return 0;
    OH = gconv_out_len(p, 1), OW = gconv_out_len(p, 2);
    segs = (OW + 63) / 64;
    SW = (OW + segs - 1) / segs;
    Wp = SW + (p->filter[2] - 1) * p->dilation[2];
    sms = gconv_device_sm_count();
    if (sms <= 0)
        sms = 80;
    /* shared memory: GCONV_IMPL_BWN_MAX_SMEM or the device's opt-in limit if lower (sm_86 /
     * sm_89: 99 KB, A100: 163 KB) */
    smax = gconv_impl_device_attr(hipDeviceAttributeMaxSharedMemoryPerBlock);
    smax = smax <= 0 || smax > GCONV_IMPL_BWN_MAX_SMEM ? GCONV_IMPL_BWN_MAX_SMEM : smax;
    tgs[0] = taps, tgs[1] = taps % 3 == 0 && taps > 3 ? 3 : 0;
    if (gconv_impl_bwn_tg > 0)
        tgs[0] = gconv_impl_bwn_tg < taps ? gconv_impl_bwn_tg : taps, tgs[1] = 0;
    for (it = 0; it < 2; it++) {
        if ((tg = tgs[it]) <= 0)
            continue;
        ntg = (taps + tg - 1) / tg;
        chunks = (int64_t)p->G * (p->C / 64) * ntg;
        slab_ns = (double)tg * 64 * p->K * 4 * 2.0 / 6000.0;
        /* the model (see above) over the band height R (GCONV_IMPL_BWN_TARGET / Wp down to 1),
         * the way of summing (dm) and for slabs the most units a block runs (m) */
        for (r = GCONV_IMPL_BWN_TARGET / Wp > 1 ? GCONV_IMPL_BWN_TARGET / Wp : 1; r >= 1; r--) {
            int rr = r < OH ? r : OH, nb_, q_, s_;
            int64_t u_, pn_, st_;
            double un;
            nb_ = (OH + rr - 1) / rr;
            rr = (OH + nb_ - 1) / nb_; /* the same bands, rows evened out */
            if (rr != (r < OH ? r : OH))
                continue;              /* the same plan as a taller r */
            q_ = (rr * Wp + 15) / 16 * 16;
            /* 64-bit: a large dilation makes the halo of a 1-row band huge (refused below) */
            pn_ = q_ + (int64_t)(p->filter[1] - 1) * p->dilation[1] * Wp +
                  (int64_t)(p->filter[2] - 1) * p->dilation[2];
            /* three buffers where they fit, else two */
            bytes = pn_ * GCONV_IMPL_BWN_PS + q_ * GCONV_IMPL_BWN_DS;
            s_ = 3 * bytes + (pn_ + q_) * 8 <= smax ? 3 : 2;
            if (s_ * bytes + (pn_ + q_) * 8 > smax)
                continue;
            u_ = chunks * p->N * nb_ * segs;
            if (u_ >= 0x7fffffffLL)
                continue;
            /* a unit: its products or its copies (at 23 bytes a ns per SM: 3 TB/s over 132
             * SMs), whichever is longer, and 300 ns */
            un = (double)(q_ / 16) * ((4 * tg + GCONV_IMPL_BWN_MTW - 1) / GCONV_IMPL_BWN_MTW) *
                 GCONV_IMPL_BWN_MTW * GCONV_IMPL_BWN_NT * 2.0 / 1.7;
            un = (un > bytes / 23.0 ? un : bytes / 23.0) + 300.0;
            for (dm = 0; dm < 2; dm++) {
                if (gconv_impl_bwn_mode >= 0 && dm != gconv_impl_bwn_mode)
                    continue;
                if (dm == 1) {
                    /* direct: one block per chunk (in waves of one a SM, the blocks being
                     * that large); its staged sums must fit */
                    const int64_t per_ = u_ / chunks, waves = (chunks + sms - 1) / sms;
                    const double t =
                        (double)waves * (per_ * un + (double)p->K * tg * 64 * eo / 50.0);
                    st_ = (int64_t)p->K * (tg * 64 + 4) * 4;
                    if (st_ > smax || gconv_impl_bwn_blocks > 0)
                        continue;
                    if (mbest == 0 || t < best)
                        best = t, mbest = (int)per_, R = rr, bands = nb_, Q = q_, Pn = (int)pn_,
                        S = s_, units = u_, TG = tg, direct = 1;
                    continue;
                }
                for (m = (int)((u_ + sms - 1) / sms); m <= u_; m++) {
                    const int64_t nb = (u_ + m - 1) / m;
                    const double t = m * un + (double)(nb + chunks) * slab_ns +
                                     (double)tg * 64 * p->K * 4 / 50.0 + GCONV_IMPL_BWN_FIN_NS;
                    if (mbest == 0 || t < best)
                        best = t, mbest = m, R = rr, bands = nb_, Q = q_, Pn = (int)pn_, S = s_,
                        units = u_, TG = tg, direct = 0;
                    if (m * un > best)
                        break;
                }
            }
        }
    }
    if (mbest == 0)
        return 0;
    per = (int64_t)p->N * bands * segs;
    memset(B, 0, sizeof *B);
    B->w = *W;
    B->CH = p->C / 64, B->K = p->K;
    B->TG = TG, B->NTG = (taps + TG - 1) / TG;
    B->direct = direct;
    B->H = p->in[1], B->W = p->in[2], B->OH = OH, B->OW = OW;
    B->X = p->filter[2], B->taps = taps;
    B->dh = p->dilation[1], B->dw = p->dilation[2], B->ph = p->pad_lo[1], B->pw = p->pad_lo[2];
    B->R = R, B->SW = SW, B->Wp = Wp, B->Q = Q, B->P = Pn;
    B->bands = bands, B->segs = segs, B->per = (int)per, B->units = (int)units;
    B->kcb = p->K % 8 ? 8 : 16, B->kc = p->K * 2 / B->kcb;
    B->warps = (4 * TG + GCONV_IMPL_BWN_MTW - 1) / GCONV_IMPL_BWN_MTW, B->S = S, B->smax = smax;
    B->buf_bytes = Pn * GCONV_IMPL_BWN_PS + Q * GCONV_IMPL_BWN_DS;
    B->in_n = (int)si.n, B->in_h = (int)si.s[1], B->in_w = (int)si.s[2], B->in_g = (int)si.g;
    B->out_n = (int)so.n, B->out_h = (int)so.s[1], B->out_w = (int)so.s[2], B->out_g = (int)so.g;
    chunks = (int64_t)p->G * B->CH * B->NTG;
    B->w.chunk = 0; /* not used */
    if (direct) {
        /* one block per chunk, the sums final: no workspace, no finalize */
        B->blocks = (int)chunks;
        B->w.splits = 1;
        B->w.mode = GCONV_IMPL_BWW_DIRECT;
        B->w.fl = 1;
        return 1;
    }
    B->blocks = (int)((units + mbest - 1) / mbest);
    if (gconv_impl_bwn_blocks > 0)
        B->blocks = gconv_impl_bwn_blocks < units ? gconv_impl_bwn_blocks : (int)units;
    /* slabs: the most blocks that share a chunk */
    B->w.splits = gconv_impl_bww_chunk_slabs(chunks, per, B->blocks, units);
    /* slabs even for one split: the finalize applies the epilogue (this way has no
     * final-value store) */
    B->w.mode = GCONV_IMPL_BWW_SLABS;
    /* the finalize: over 8 slabs its vector form (whole quads: K % 4 == 0 keeps total a
     * multiple of 4; any workspace alignment, so that the summation order, and with it every
     * bit of a deterministic result, does not depend on the workspace pointer), else the
     * one-lane forms (both sum the slabs in order) */
    B->w.fl = 1, B->w.fvl = 8;
    gconv_impl_bww_fin_vec(&B->w);
    return 1;
#else
    (void)p, (void)W, (void)B;
    return 0;
#endif
}

/* Shared memory of a planned BWN launch: its buffers and the two tables, or in direct mode
 * the staged sums where they need more. */
static inline int gconv_impl_bwn_smem(const gconv_impl_bwn_params *B)
{
    const int run = B->S * B->buf_bytes + (B->P + B->Q) * 8;
    const int st = B->direct ? B->K * gconv_impl_bwn_srow(B) * 4 : 0;
    return run > st ? run : st;
}

#endif /* GCONV_BWD_WEIGHT_NK_H */
