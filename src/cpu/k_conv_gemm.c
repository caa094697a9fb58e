/* cjrt: the f32 GEMM path of convolution (see k_conv.h).
 *
 * Implicit im2col: the patch matrix is never materialized. A task owns a block of output rows
 * (batch x spatial positions) of one group and a tile of output features. For each block of K
 * (a run of kernel positions over all input features, or one kernel position over a run of
 * features) it looks up, for every row, where that row's window reads the lhs (a pointer into
 * the lhs, whose features are contiguous, or into a zero buffer for padding and dilation
 * holes), and a micro-kernel multiplies 8 such rows by a 32-column panel of the packed weights,
 * broadcasting lhs values straight from those pointers. The 8 x 32 accumulator tile lives in
 * registers (16 zmm on AVX-512); sums over several K blocks go through an f32 tile in the
 * thread's temporary area, which is finally converted and scattered into the result (any
 * layout, f32/bf16/f16). Tasks run in parallel on the client's pool.
 */
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "cpu/k_conv.h"
#include "cpu/k_dot_bf.h"
#include "cpu/k_linalg.h"


/* K block (floats of K per micro-kernel call: the weight panel, KB x 32 floats, is read from L2),
 * rows per task, panels per task tile, kernel positions per K block at most */
enum { KB = 1024, MB = 128, PT = 8, MAXSEG = 64, KSPLIT = 4 };

typedef void (*kg_ukr)(int64_t nseg, int64_t seglen, const void *const *ptrs,
                       const float *const *bptrs, int64_t bstride, float *c, int64_t ldc, bool acc);

typedef struct kg_params {
  kc_geom g;
  int64_t npan, ntile, mblocks, ntasks;
  int64_t nqb, cblk; /* kernel positions per K block; features per K block */
  cj_dtype out_dt;
  bool direct;       /* f32 result, contiguous features, full panels: row groups whose 8 rows
                      * are rs elements apart accumulate straight into the result */
  int64_t rs;
  cj_ew_fn cvt;      /* f32 -> out_dt rows */
  cj_la_cvo cvo;     /* f32 -> bf16/f16 rows (vectorized) */
  cj_ew_aux aux;
  int osz;
  kg_ukr ukr;
  cj_bd_ukr_rows ubf; /* g.bf: the pair kernel */
  int64_t xsz;        /* bytes of an lhs element */
  int64_t ksplit;     /* tasks summing disjoint ranges of kernel positions into partial tiles
                       * (few output rows and columns over a long K: a kernel gradient), or 1 */
  int64_t qper;       /* kernel positions per range */
  int64_t tls_f32;    /* bytes of the temporary area the f32 path uses (then the pair rows) */
  bool inplace;       /* the weights read where they are (f32, output features contiguous), not
                       * packed: a kernel gradient's "weights" are the whole output gradient */
  int64_t bstr[KC_MAXS + 1]; /* in place: input feature stride, then the spatial strides */
} kg_params;

/* ======================================================================== micro-kernels */

static void ukr_generic(int64_t nseg, int64_t seglen, const void *const *ptrs,
                        const float *const *bptrs, int64_t bstride, float *c, int64_t ldc, bool acc) {
  float t[KC_MR][KC_NR];
  memset(t, 0, sizeof t);
  for (int64_t s = 0; s < nseg; s++) {
    const void *const *a = ptrs + s * KC_MR;
    const float *bp = bptrs[s];
    for (int64_t k = 0; k < seglen; k++, bp += bstride)
      for (int i = 0; i < KC_MR; i++) {
        float av = ((const float *)a[i])[k];
        for (int j = 0; j < KC_NR; j++) t[i][j] += av * bp[j];
      }
  }
  for (int i = 0; i < KC_MR; i++)
    for (int j = 0; j < KC_NR; j++) c[i * ldc + j] = acc ? c[i * ldc + j] + t[i][j] : t[i][j];
}

#if defined(__x86_64__) && defined(__GNUC__)
#include "cpu/gemm_tile.h"

__attribute__((target("avx512f"))) static void ukr_avx512(int64_t nseg, int64_t seglen,
                                                           const void *const *ptrs,
                                                           const float *const *bptrs,
                                                           int64_t bstride, float *c, int64_t ldc,
                                                           bool acc) {
  GT_ROWS(GT_DECL512)
#define GT_SEG_T float
#define GT_A(i) a##i[k]
  GT_SEGMENTS_B(seglen, __m512 b0 = _mm512_loadu_ps(bp); __m512 b1 = _mm512_loadu_ps(bp + 16);,
                GT_FMA512)
#undef GT_A
#undef GT_SEG_T
  GT_ROWS(GT_STORE512)
}

/* Only the first 16 columns of the panel (a group's output features are 16 or fewer): one
 * vector per row, half the products of ukr_avx512; columns 16..31 of c are left alone. */
__attribute__((target("avx512f"))) static void ukr_avx512_half(int64_t nseg, int64_t seglen,
                                                                const void *const *ptrs,
                                                                const float *const *bptrs,
                                                                int64_t bstride, float *c,
                                                                int64_t ldc, bool acc) {
#define HDECL(i) __m512 h##i = _mm512_setzero_ps();
  GT_ROWS(HDECL)
#undef HDECL
#define HFMA(i) h##i = _mm512_fmadd_ps(_mm512_set1_ps(a##i[k]), b0, h##i);
#define GT_SEG_T float
  GT_SEGMENTS_B(seglen, __m512 b0 = _mm512_loadu_ps(bp);, HFMA)
#undef GT_SEG_T
#undef HFMA
#define HST(i)                                                                   \
  {                                                                              \
    __m512 v = h##i;                                                             \
    if (acc) v = _mm512_add_ps(v, _mm512_loadu_ps(c + i * ldc));                 \
    _mm512_storeu_ps(c + i * ldc, v);                                            \
  }
  GT_ROWS(HST)
#undef HST
}

/* AVX2 (16 ymm registers): the 8 x 32 tile in passes of 4 rows x 16 columns (8 accumulators, the
 * two rhs vectors and the broadcast; the 8 rows x 2 vectors of one pass kept six accumulators on
 * the stack, loaded and stored around every FMA). NH halves of 16 columns: 2, or 1 for a group
 * with 16 or fewer output features (columns 16..31 of c are then left alone). Each element's sum
 * is the same as before: segments and k in order, one FMA per term, then added to c when acc. */
#define KG_ROWS4(X) X(0) X(1) X(2) X(3)
#define KG_AVX2(NAME, NH)                                                                      \
  __attribute__((target("avx2,fma"))) static void NAME(int64_t nseg, int64_t seglen,           \
                                                        const void *const *ptrs,                \
                                                        const float *const *bptrs,              \
                                                        int64_t bstride, float *c, int64_t ldc, \
                                                        bool acc) {                             \
    for (int half = 0; half < (NH); half++)                                                    \
      for (int r0 = 0; r0 < KC_MR; r0 += 4) {                                                  \
        KG_ROWS4(GT_DECL256)                                                                   \
        for (int64_t s = 0; s < nseg; s++) {                                                   \
          const void *const *a = ptrs + s * KC_MR + r0;                                        \
          const float *a0 = a[0], *a1 = a[1], *a2 = a[2], *a3 = a[3];                          \
          const float *bp = bptrs[s] + half * 16;                                              \
          for (int64_t k = 0; k < seglen; k++, bp += bstride) {                                \
            __m256 b0 = _mm256_loadu_ps(bp), b1 = _mm256_loadu_ps(bp + 8);                     \
            KG_ROWS4(GT_FMA256)                                                                \
          }                                                                                    \
        }                                                                                      \
        KG_ROWS4(KG_STORE)                                                                     \
      }                                                                                        \
  }
#define GT_A(i) a##i[k]
#define KG_STORE(i) GT_STORE(i, float, 256, ps, 8, c + (r0 + i) * ldc + half * 16)
KG_AVX2(ukr_avx2, 2)
KG_AVX2(ukr_avx2_half, 1)
#undef KG_STORE
#undef GT_A
#undef KG_AVX2
#undef KG_ROWS4

static kg_ukr pick_ukr(const kc_geom *g) {
  int isa = gt_isa();
  if (isa == 2 && g->Og <= 16) return ukr_avx512_half;
  if (isa == 1 && g->Og <= 16) return ukr_avx2_half;
  return (kg_ukr[]){ukr_generic, ukr_avx2, ukr_avx512}[isa];
}
#else
static kg_ukr pick_ukr(const kc_geom *g) { return ukr_generic; }
#endif

/* ======================================================================== packing */

bool cj_kc_gemm_wanted(const kc_geom *g) {
  double macs = (double)g->G * (double)g->M * (double)g->K * (double)g->Og;
  return g->Og >= 4 && g->K >= 1 && g->M >= KC_MR && macs >= 65536.0;
}

int64_t cj_kc_gemm_packed_floats(const kc_geom *g) {
  int64_t npan = (g->Og + KC_NR - 1) / KC_NR;
  return g->G * npan * g->K * KC_NR;
}

/* g->bf: pairs of consecutive k (k_dot_bf.h) in panels Wp[G][npan][K / 2][KC_NR] of 32-bit words,
 * the high halves of the f32 weights (they came from bf16) */
static void pack_pairs(const kc_geom *g, const float *w, uint32_t *wp) {
  int64_t npan = (g->Og + KC_NR - 1) / KC_NR;
  for (int64_t grp = 0; grp < g->G; grp++)
    for (int64_t j = 0; j < npan; j++) {
      int64_t o0 = j * KC_NR, n = g->Og - o0 < KC_NR ? g->Og - o0 : KC_NR;
      uint32_t *d = wp + (grp * npan + j) * (g->K / 2) * KC_NR;
      for (int64_t k = 0; k + 1 < g->K; k += 2, d += KC_NR) {
        const float *s0 = w + (grp * g->K + k) * g->Og + o0, *s1 = s0 + g->Og;
        for (int64_t o = 0; o < KC_NR; o++) {
          uint32_t lo = 0, hi = 0;
          if (o < n) {
            memcpy(&lo, s0 + o, 4);
            memcpy(&hi, s1 + o, 4);
          }
          d[o] = (lo >> 16) | (hi & 0xffff0000u);
        }
      }
    }
}

void cj_kc_gemm_pack(const kc_geom *g, const float *w, float *wp) {
  int64_t npan = (g->Og + KC_NR - 1) / KC_NR;
  if (g->bf) {
    pack_pairs(g, w, (uint32_t *)wp);
    return;
  }
  for (int64_t grp = 0; grp < g->G; grp++)
    for (int64_t j = 0; j < npan; j++) {
      int64_t o0 = j * KC_NR, n = g->Og - o0 < KC_NR ? g->Og - o0 : KC_NR;
      float *d = wp + (grp * npan + j) * g->K * KC_NR;
      for (int64_t k = 0; k < g->K; k++) {
        const float *s = w + (grp * g->K + k) * g->Og + o0;
        memcpy(d + k * KC_NR, s, sizeof(float) * (size_t)n);
        if (n < KC_NR) memset(d + k * KC_NR + n, 0, sizeof(float) * (size_t)(KC_NR - n));
      }
    }
}

/* ======================================================================== the step */

typedef struct kg_run {
  const kg_params *p;
  const char *x; /* f32, or bf16 read in place (g.bf == KC_BF_LHS16) */
  const float *wp, *zero;
  char *out;
  float *part; /* ksplit > 1: partial results [ksplit][G][M][Og] */
  cj_exec_ctx *ctx;
  int64_t pt, ntile; /* panels per task tile (PT, or 1 to have a task per panel), tiles */
} kg_run;

/* per-row data of a task (obase < 0: a row beyond the end) */
typedef kc_rowinfo kg_row;

/* One K block with the pair kernel: the rows' f32 runs converted to pairs (half as many words
 * after the pointer table of the same layout), then every panel as in task */
static void bf_block(const kg_params *p, const kg_run *R, int64_t grp, int64_t j0, int64_t npt,
                     int64_t k0, int64_t nq, int64_t cl, int64_t mpad, const void **ptrs,
                     uint32_t *mem, float *const *cdst, const int64_t *cld, bool first) {
  const kc_geom *g = &p->g;
  int64_t n = mpad * nq, kp = cl / 2;
  const void **wptrs = ptrs; /* bf16 lhs: its runs are pairs already */
  if (g->bf == KC_BF_LHS32) {
    wptrs = (const void **)mem;
    uint32_t *rows = mem + n * (int64_t)((sizeof(void *) + 3) / 4);
    for (int64_t r = 0; r < n; r++) {
      cj_bd_from_f32(ptrs[r], cl, rows + r * kp);
      wptrs[r] = rows + r * kp;
    }
  }
  for (int64_t j = 0; j < npt; j++) {
    const uint32_t *bp = (const uint32_t *)R->wp + ((grp * p->npan + j0 + j) * g->K + k0) / 2 * KC_NR;
    for (int64_t rg = 0; rg < mpad; rg += KC_MR)
      p->ubf(nq, kp, wptrs + rg * nq, bp, cdst[rg / KC_MR] + j * KC_NR, cld[rg / KC_MR], !first);
  }
}

/* kc_row_info of rows m0 .. m0 + n - 1 (their first result element moved by oadd): the output
 * coordinates of m0 divided out once, then stepped (a division per row and dimension cost small
 * convolutions a few percent) */
static void rows_info(const kc_geom *g, int64_t grp, int64_t m0, int64_t n, int64_t oadd,
                      kg_row *rows) {
  int64_t b = m0 / g->P, p = m0 % g->P, o[KC_MAXS];
  for (int32_t i = g->ns - 1; i >= 0; i--) {
    o[i] = p % g->odim[i];
    p /= g->odim[i];
  }
  for (int64_t r = 0; r < n; r++) {
    kg_row *w = &rows[r];
    int64_t oo = b * g->ob + grp * g->Og * g->of + oadd;
    w->xbase = kc_lhs_base(g, grp, b);
    for (int32_t i = 0; i < g->ns; i++) {
      oo += o[i] * g->os[i];
      w->rt[i] = g->tab[i] + o[i] * g->kdim[i];
    }
    w->obase = oo;
    int32_t i = g->ns - 1;
    for (; i >= 0; i--) {
      if (++o[i] < g->odim[i]) break;
      o[i] = 0;
    }
    if (i < 0) b++;
  }
}

/* ncol f32 sums of one result row into the result (its features `of` elements apart) */
static void store_row(const kg_params *p, char *dst, const float *src, int64_t ncol) {
  const kc_geom *g = &p->g;
  if (g->of == 1 && (p->out_dt == CJ_BF16 || p->out_dt == CJ_F16)) {
    p->cvo(src, (uint16_t *)dst, ncol, p->out_dt == CJ_BF16);
  } else if (g->of == 1) {
    p->cvt(dst, src, NULL, NULL, ncol, &p->aux);
  } else if (p->out_dt == CJ_F32) {
    float *d = (float *)dst;
    for (int64_t o = 0; o < ncol; o++) d[o * g->of] = src[o];
  } else {
    uint16_t *d = (uint16_t *)dst;
    for (int64_t o = 0; o < ncol; o++)
      d[o * g->of] = p->out_dt == CJ_BF16 ? cj_f32_to_bf16(src[o]) : cj_f32_to_f16(src[o]);
  }
}

/* The first weight of kernel positions q0 .. q0 + nq - 1 (features from c0; k0 the K index of
 * q0's) from the start of a panel: packed, consecutive runs of K; in place, at the rhs strides */
static void kb_offsets(const kg_params *p, int64_t q0, int64_t nq, int64_t c0, int64_t k0,
                       int64_t *boff) {
  const kc_geom *g = &p->g;
  if (!p->inplace) {
    for (int64_t s = 0; s < nq; s++) boff[s] = (k0 + s * g->Cg) * KC_NR;
    return;
  }
  int64_t kc[KC_MAXS], qq = q0;
  for (int32_t i = g->ns - 1; i >= 0; i--) {
    kc[i] = qq % g->kdim[i];
    qq /= g->kdim[i];
  }
  for (int64_t s = 0; s < nq; s++) {
    int64_t o = c0 * p->bstr[0];
    for (int32_t i = 0; i < g->ns; i++) o += kc[i] * p->bstr[1 + i];
    boff[s] = o;
    for (int32_t d = g->ns - 1; d >= 0; d--) {
      if (++kc[d] < g->kdim[d]) break;
      kc[d] = 0;
    }
  }
}

static void task(void *vr, int64_t t, char *mem) {
  const kg_run *R = vr;
  const kg_params *p = R->p;
  const kc_geom *g = &p->g;
  int64_t ks = t % p->ksplit;
  t /= p->ksplit;
  int64_t per_grp = p->mblocks * R->ntile;
  int64_t grp = t / per_grp, rem = t % per_grp, mbk = rem / R->ntile, nt = rem % R->ntile;
  int64_t qa = ks * p->qper, qb = qa + p->qper < g->Q ? qa + p->qper : g->Q;
  int64_t m0 = mbk * MB, mrows = g->M - m0 < MB ? g->M - m0 : MB;
  int64_t j0 = nt * R->pt, npt = p->npan - j0 < R->pt ? p->npan - j0 : R->pt;
  int64_t ldt = npt * KC_NR;
  int64_t mpad = (mrows + KC_MR - 1) / KC_MR * KC_MR;
  /* memory: tile [MB][PT*NR] floats, pointers [MB][nqb], rows [MB], per row group its C and ldc */
  float *tile = (float *)mem;
  const void **ptrs = (const void **)(mem + sizeof(float) * MB * PT * KC_NR);
  kg_row *rows = (kg_row *)(ptrs + p->nqb * MB);
  float **cdst = (float **)(rows + MB);
  int64_t *cld = (int64_t *)(cdst + MB / KC_MR);
  bool *gdirect = (bool *)(cld + MB / KC_MR);
  rows_info(g, grp, m0, mrows, j0 * KC_NR * g->of, rows);
  for (int64_t r = mrows; r < mpad; r++) rows[r].obase = -1;
  /* where each row group accumulates: the result itself, or the tile */
  for (int64_t rg = 0; rg < mpad; rg += KC_MR) {
    bool d = p->direct && p->ksplit == 1 && rg + KC_MR <= mrows;
    for (int64_t i = 1; d && i < KC_MR; i++) d = rows[rg + i].obase - rows[rg + i - 1].obase == p->rs;
    cdst[rg / KC_MR] = d ? (float *)R->out + rows[rg].obase : tile + rg * ldt;
    cld[rg / KC_MR] = d ? p->rs : ldt;
    gdirect[rg / KC_MR] = d;
  }
  bool first = true;
  for (int64_t q0 = qa; q0 < qb; q0 += p->nqb) {
    int64_t nq = qb - q0 < p->nqb ? qb - q0 : p->nqb;
    for (int64_t c0 = 0; c0 < g->Cg; c0 += p->cblk) {
      int64_t cl = g->Cg - c0 < p->cblk ? g->Cg - c0 : p->cblk;
      int64_t k0 = q0 * g->Cg + c0;
      /* the lhs pointers of every row for kernel positions q0..q0+nq: ptrs[rg][s][i] */
      for (int64_t rg = 0; rg < mpad; rg += KC_MR) {
        int64_t kc[KC_MAXS];
        int64_t qq = q0;
        for (int32_t i = g->ns - 1; i >= 0; i--) {
          kc[i] = qq % g->kdim[i];
          qq /= g->kdim[i];
        }
        const void **pr = ptrs + rg * nq;
        for (int64_t s = 0; s < nq; s++) {
          const void **po = pr + s * KC_MR;
          const char *xc0 = R->x + c0 * p->xsz;
          if (g->ns == 2) { /* the common case, without the loop over dimensions */
            for (int64_t i = 0; i < KC_MR; i++) {
              const kg_row *w = &rows[rg + i];
              po[i] = R->zero;
              if (w->obase < 0) continue;
              int64_t v0 = w->rt[0][kc[0]], v1 = w->rt[1][kc[1]];
              if ((v0 | v1) >= 0) po[i] = xc0 + (w->xbase + v0 + v1) * p->xsz;
            }
          } else {
            for (int64_t i = 0; i < KC_MR; i++) {
              const kg_row *w = &rows[rg + i];
              const void *ptr = R->zero;
              if (w->obase >= 0) {
                int64_t off = 0;
                int32_t d;
                for (d = 0; d < g->ns; d++) {
                  int64_t v = w->rt[d][kc[d]];
                  if (v < 0) break;
                  off += v;
                }
                if (d == g->ns) ptr = xc0 + (w->xbase + off) * p->xsz;
              }
              po[i] = ptr;
            }
          }
          for (int32_t d = g->ns - 1; d >= 0; d--) {
            if (++kc[d] < g->kdim[d]) break;
            kc[d] = 0;
          }
        }
      }
      /* where each kernel position's run of weights starts, from its panel's start */
      int64_t boff[MAXSEG];
      const float *bptrs[MAXSEG];
      kb_offsets(p, q0, nq, c0, k0, boff);
      if (p->ubf) {
        bf_block(p, R, grp, j0, npt, k0, nq, cl, mpad, ptrs, (uint32_t *)(mem + p->tls_f32), cdst, cld, first);
        first = false;
        continue;
      }
      /* each weight panel stays in cache while every row group goes through it */
      for (int64_t j = 0; j < npt; j++) {
        const float *pan = p->inplace ? R->wp + grp * g->Og + (j0 + j) * KC_NR
                                      : R->wp + (grp * p->npan + j0 + j) * g->K * KC_NR;
        for (int64_t s = 0; s < nq; s++) bptrs[s] = pan + boff[s];
        int64_t bstride = p->inplace ? p->bstr[0] : KC_NR;
        for (int64_t rg = 0; rg < mpad; rg += KC_MR)
          p->ukr(nq, cl, ptrs + rg * nq, bptrs, bstride, cdst[rg / KC_MR] + j * KC_NR,
                 cld[rg / KC_MR], !first);
      }
      first = false;
    }
  }
  /* store the valid part of the tile */
  int64_t ncol = g->Og - j0 * KC_NR < ldt ? g->Og - j0 * KC_NR : ldt;
  if (p->ksplit > 1) { /* into this range's partial result */
    float *pt = R->part + ((ks * g->G + grp) * g->M + m0) * g->Og + j0 * KC_NR;
    for (int64_t r = 0; r < mrows; r++) memcpy(pt + r * g->Og, tile + r * ldt, sizeof(float) * (size_t)ncol);
    return;
  }
  for (int64_t r = 0; r < mrows; r++) {
    if (gdirect[r / KC_MR]) { /* a row group that accumulated in the result */
      r += KC_MR - 1;
      continue;
    }
    store_row(p, R->out + rows[r].obase * p->osz, tile + r * ldt, ncol);
  }
}

/* ksplit > 1: the partial results added pairwise (in an order fixed by ksplit alone), then
 * each row converted into the result */
static void sum_parts(const kg_params *p, const kg_run *R) {
  const kc_geom *g = &p->g;
  int64_t n = g->G * g->M * g->Og;
  for (int64_t h = 1; h < p->ksplit; h *= 2)
    for (int64_t s = 0; s + h < p->ksplit; s += 2 * h) {
      float *a = R->part + s * n;
      const float *b = R->part + (s + h) * n;
      for (int64_t i = 0; i < n; i++) a[i] += b[i];
    }
  for (int64_t grp = 0; grp < g->G; grp++)
    for (int64_t m = 0; m < g->M; m++) {
      kc_rowinfo ri;
      kc_row_info(g, grp, m, &ri);
      store_row(p, R->out + ri.obase * p->osz, R->part + (grp * g->M + m) * g->Og, g->Og);
    }
}

static void kg_body(void *vctx, int64_t b, int64_t e) {
  cj_tls_tasks(((kg_run *)vctx)->ctx, b, e, task, vctx);
}

static CJ_MUST_USE cj_status k_conv_gemm(cj_exec_ctx *ctx, const cj_step *st) {
  const kg_params *p = st->params;
  kg_run R = {p, CJ_PTR(ctx, st->in[0]), (const float *)CJ_PTR(ctx, st->in[1]),
              (const float *)CJ_PTR(ctx, st->in[2]), CJ_PTR(ctx, st->out[0]),
              p->ksplit > 1 ? (float *)CJ_PTR(ctx, st->out[1]) : NULL, ctx, PT, p->ntile};
  if (p->ntasks == 0) return NULL;
  int nthreads = ctx->pool ? cj_pool_size(ctx->pool) : 1;
  int64_t ntasks = p->ntasks;
  /* few tasks for the threads (a kernel gradient: few rows, a long K; 3 tasks kept one of 2
   * threads idle a third of the time): one task per weight panel, each reading its own part of
   * the weights */
  if (nthreads > 1 && ntasks < 2 * nthreads && p->ntile < p->npan) {
    R.pt = 1;
    R.ntile = p->npan;
    ntasks = p->g.G * p->mblocks * p->npan * p->ksplit;
  }
  if (nthreads > 1 && ntasks > 1)
    cj_pool_parallel_for(ctx->pool, ntasks, 1, kg_body, &R);
  else
    kg_body(&R, 0, ntasks);
  if (p->ksplit > 1) sum_parts(p, &R);
  return NULL;
}

bool cj_kc_gemm_inplace_ok(const kc_geom *g) {
  /* short runs, or weights that many row groups go through: packed panels read faster (a
   * weight row read in place lies a batch stride from the next, often a multiple of a large
   * power of two, so rows evict each other from the caches before the next row group comes) */
  if (g->bf || g->Cg < 8 || g->M > 2 * KC_MR) return false;
  if (g->Og % KC_NR == 0) return true;
#if defined(__x86_64__) && defined(__GNUC__)
  if (g->Og == 16 && (pick_ukr(g) == ukr_avx512_half || pick_ukr(g) == ukr_avx2_half))
    return true; /* reads 16 columns */
#endif
  return false;
}

cj_status cj_kc_gemm_emit(cj_lw *L, cj_op *op, const kc_geom *g, int32_t xbuf, int32_t wbuf,
                       int32_t zbuf, int32_t obuf, cj_dtype out_dt, const int64_t *bstr) {
  kg_params *p = cj_lw_alloc(L, sizeof *p);
  if (!p) return cj_oom();
  p->g = *g;
  p->npan = (g->Og + KC_NR - 1) / KC_NR;
  p->ntile = (p->npan + PT - 1) / PT;
  p->mblocks = (g->M + MB - 1) / MB;
  p->ntasks = g->G * p->mblocks * p->ntile;
  if (g->Cg >= KB) {
    p->cblk = KB;
    p->nqb = 1;
  } else {
    p->cblk = g->Cg;
    p->nqb = KB / g->Cg;
    if (p->nqb > MAXSEG) p->nqb = MAXSEG;
    if (p->nqb > g->Q) p->nqb = g->Q;
  }
  if (p->nqb < 1) p->nqb = 1;
  /* Few row blocks and panels over many K blocks (a kernel gradient: the kernel's few
   * positions x features as rows, the batch and the image as K): up to KSPLIT tasks per tile
   * over ranges of kernel positions, their partial results added at the end. How many depends
   * on the geometry alone, so the sums do not depend on the thread count. */
  p->ksplit = 1;
  p->qper = g->Q;
  int64_t base = g->G * p->mblocks * p->npan, kblocks = (g->Q + p->nqb - 1) / p->nqb;
  double macs = (double)g->G * (double)g->M * (double)g->K * (double)g->Og;
  if (!g->bf && base < KSPLIT && kblocks > 1 && macs >= 4e6 && g->G * g->M * g->Og <= (1 << 18)) {
    int64_t want = (KSPLIT + base - 1) / base;
    if (want > kblocks) want = kblocks;
    p->qper = (kblocks + want - 1) / want * p->nqb;
    p->ksplit = (g->Q + p->qper - 1) / p->qper;
  }
  p->ntasks *= p->ksplit;
  p->out_dt = out_dt;
  p->osz = cj_dtype_bytes(out_dt);
  p->cvt = cj_cvt_lookup(CJ_F32, out_dt);
  p->aux.src = CJ_F32;
  p->aux.dt = out_dt;
  p->ukr = pick_ukr(g);
  p->inplace = bstr != NULL;
  if (bstr) {
    if (!cj_kc_gemm_inplace_ok(g)) return cj_op_error(op, CJ_INTERNAL, "weights not readable in place");
    memcpy(p->bstr, bstr, sizeof(int64_t) * (size_t)(g->ns + 1));
  }
  p->cvo = cj_la_cvo_pick();
  if (!p->cvt) return cj_op_error(op, CJ_INTERNAL, "no f32 conversion");
  p->direct = out_dt == CJ_F32 && g->of == 1 && g->Og % KC_NR == 0;
  /* consecutive rows of one output image row: the innermost output spatial dimension's stride
   * (or the batch stride without spatial dimensions) */
  p->rs = g->ns ? g->os[g->ns - 1] : g->ob;
  p->ubf = g->bf ? cj_bd_pick_rows() : NULL;
  p->xsz = g->bf == KC_BF_LHS16 ? 2 : 4;
  if (cj_bd_pick()) p->cvo = cj_bd_cvo;
  if (g->bf && !p->ubf) return cj_op_error(op, CJ_INTERNAL, "no bf16 pair kernel");
  p->tls_f32 = ((int64_t)sizeof(float) * MB * PT * KC_NR + (int64_t)sizeof(float *) * p->nqb * MB +
                (int64_t)sizeof(kg_row) * MB + (int64_t)(sizeof(float *) + 8) * MB + 64 + 63) / 64 * 64;
  /* the pair rows of a K block: pointers and words (nq * cblk <= KB) */
  int64_t bf_bytes = p->ubf ? (int64_t)(sizeof(uint32_t *) * p->nqb * MB) + 2 * (p->nqb * p->cblk) * MB : 0;
  cj_lw_set_tls_bytes(L, p->tls_f32 + bf_bytes);
  int32_t ins[3] = {xbuf, wbuf, zbuf}, outs[2] = {obuf, -1};
  if (p->ksplit > 1) {
    outs[1] = cj_lw_new_buf(L, (int64_t)sizeof(float) * p->ksplit * g->G * g->M * g->Og, CJ_BK_ARENA);
  }
  if (!cj_lw_emit(L, op, k_conv_gemm, p, 3, ins, p->ksplit > 1 ? 2 : 1, outs)) return cj_oom();
  return NULL;
}
