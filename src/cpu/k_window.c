/* cjrt: reduce_window and select_and_scatter.
 *
 * reduce_window: the result's rows (all dims but the last) are independent; for each row the
 * kernel fills an accumulator row with the init value and, for every window position, combines
 * the input elements that position reads: along the last dim that is one strided run (its
 * bounds computed from padding, stride and dilation), so the combiner works on whole rows.
 * Padding elements hold the init value: they are combined like any element unless the body
 * makes that a no-op (max/min/and/or always; add/xor/multiply when the init value is their
 * identity, checked at run time). Bodies that are not one add/multiply/maximum/minimum/and/or/
 * xor, variadic reductions and promoted types run the body as a nested plan per element, in
 * window order.
 *
 * select_and_scatter: for every source element the window's in-bounds operand elements are
 * scanned in order (padding is never selected); a candidate replaces the selected one when
 * select(selected, candidate) is false; the source value is then scattered into the result at
 * the selected position. select bodies that are one GE/GT/LE/LT compare and scatter bodies that
 * are one add/... run as typed functions, any others as nested plans. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/k_gather.h"

/* ======================================================================== reduce_window */

/* select_and_scatter's compares on lanes (sas_lanes) */
enum { SAS_GE, SAS_GT, SAS_LE, SAS_LT, SAS_LANES_MAX = 1024 };

/* rw_rows' strided 16-bit runs are gathered this many at a time (see gather16) */
enum { RW_GATHER = 512 };

/* rw_slabs' runs of several rows (see rw_runs_lookup) */
typedef void (*rw2_fn)(char *acc, int64_t ab, const char *x, int64_t xb, int64_t C, int64_t rows);
/* rw_rows' runs (see rw_runs_lookup) */
typedef void (*rwr_fn)(char *acc, const char *x, int64_t s, int64_t n);

typedef struct rw_params {
  int32_t rank; /* >= 1 */
  int64_t odims[CJ_MAX_RANK], idims[CJ_MAX_RANK], istr[CJ_MAX_RANK];
  int64_t wdims[CJ_MAX_RANK], wstr[CJ_MAX_RANK], bdil[CJ_MAX_RANK], wdil[CJ_MAX_RANK];
  int64_t plo[CJ_MAX_RANK];
  int64_t nwin, nrows, olen;
  /* fast */
  kg_comb_fn comb;
  int32_t es;
  int pad_rule;
  unsigned char ident[16];
  /* a cumulative reduction (one dim with a window of its whole size padded to one side, e.g.
   * jnp.cumsum): a running combine when padding may be skipped */
  bool scan, scan_rev;
  int64_t scan_outer, scan_n, scan_inner;
  kg_scan_fn scan_fn; /* forward scans of contiguous lines (scan_inner == 1) */
  struct fscan *fscan; /* float sums and products: in f64 (see fscan_lines) */
  bool wide;           /* a float sum over a long window: in f64 (see rw_rows_wide) */
  bool cl;             /* channels last: see rw_slabs */
  rw2_fn rw2;          /* cl: runs of several rows in one call, NULL: comb per row */
  rwr_fn rwr;          /* rw_rows' in-bounds runs (f32/f64 add/max/min), NULL: comb */
  int64_t nslabs;      /* cl: the output without its last two dims */
  cj_dtype wide_dt;
  /* general */
  int32_t n;
  kg_body body;
  kg_cvt *in_cvt, *init_cvt; /* n each: input / init value -> body type */
  int32_t *in_es, *bes;
  /* slots: in = [inputs n][inits n][body args 2n, rets n]; out = results n */
  /* cumulative reductions with an elementwise body: the body again over RW_LANES lanes
   * (slots after the scalar body's: [args 2n, rets n]), folding that many lines at once */
  bool lanes;
  kg_body vbody;
} rw_params;

static inline int64_t floordiv(int64_t a, int64_t b) { /* b > 0 */
  int64_t q = a / b;
  return (a % b != 0 && a < 0) ? q - 1 : q;
}

typedef struct rw_run {
  const rw_params *p;
  char *out;
  const char *in, *init;
  bool skip;
} rw_run;

/* Window position w of output row o (all dims but the last): false when the leading dims
 * fall into padding (or between dilated elements), else the input offset of their elements */
static inline bool rw_base(const rw_params *p, const int64_t *o, const int64_t *w, int64_t *base) {
  int64_t b = 0;
  for (int32_t d = 0; d < p->rank - 1; d++) {
    int64_t q = o[d] * p->wstr[d] + w[d] * p->wdil[d] - p->plo[d];
    int64_t bd = p->bdil[d];
    if (bd != 1) { /* (dividing costs more than the rest when there is no dilation) */
      if (q % bd != 0) return false;
      q /= bd;
    }
    if (q < 0 || q >= p->idims[d]) return false;
    b += q * p->istr[d];
  }
  *base = b;
  return true;
}

/* along the last dim (no base dilation): output j reads input j * s + c, in bounds for
 * j in [lo, hi) */
static inline void rw_span(const rw_params *p, int64_t wl, int64_t *c, int64_t *lo, int64_t *hi) {
  int32_t last = p->rank - 1;
  int64_t cc = wl * p->wdil[last] - p->plo[last], s = p->wstr[last], id = p->idims[last];
  int64_t l, h;
  if (s == 1) {
    l = cc >= 0 ? 0 : -cc;
    h = id - 1 - cc < 0 ? 0 : id - cc;
  } else {
    l = cc >= 0 ? 0 : -floordiv(cc, s); /* ceil(-c / s) */
    h = id - 1 - cc < 0 ? 0 : floordiv(id - 1 - cc, s) + 1;
  }
  if (h > p->olen) h = p->olen;
  if (l > h) l = h;
  *c = cc, *lo = l, *hi = h;
}

/* o[0..rank-2]: the output index of row r (rows: the output without its last dimension) */
static inline void rw_row_index(const rw_params *p, int64_t r, int64_t *o) {
  for (int32_t d = p->rank - 2; d >= 0; d--) {
    o[d] = r % p->odims[d];
    r /= p->odims[d];
  }
}

/* o: the index of the next row */
static inline void rw_next_row(const rw_params *p, int64_t *o) {
  for (int32_t d = p->rank - 2; d >= 0; d--) {
    if (++o[d] < p->odims[d]) break;
    o[d] = 0;
  }
}

/* Float sums over long windows (RW_WIDE_MIN elements or more: sum and average pooling, a
 * moving sum along an axis) are accumulated blockwise: the terms of RW_WIDE_BLOCK consecutive
 * window positions are summed in f32 (bf16 and f16 terms too), each block's sum is then added
 * to an f64 accumulator, and each output is rounded once. A running sum in the element type
 * loses digits with the window's length (bf16 or f16 sums of 4096 values stall once the
 * running value's ulp outgrows the terms; an f32 running sum of 4096 values is off by ~3e-6
 * relative, XLA:CPU's by ~2e-7, these by ~8e-8); summing all in f64 would cost a third more
 * time than the f32 blocks. f64 sums carry Neumaier's compensation term instead. The output row
 * is done RW_WIDE_COLS columns at a time, each column's accumulator visiting the window
 * positions in order. Short windows keep the body's own arithmetic (one rounding per step in
 * the element type, as the reference interpreter computes them). */
enum { RW_WIDE_MIN = 64, RW_WIDE_COLS = 1024, RW_WIDE_BLOCK = 64 };

static inline double wide_load(cj_dtype dt, const char *x) {
  switch (dt) {
    case CJ_F32: { float v; memcpy(&v, x, 4); return v; }
    case CJ_F64: { double v; memcpy(&v, x, 8); return v; }
    case CJ_BF16: { uint16_t v; memcpy(&v, x, 2); return cj_bf16_to_f32(v); }
    default: { uint16_t v; memcpy(&v, x, 2); return cj_f16_to_f32(v); }
  }
}

static inline void wide_store(cj_dtype dt, char *x, double v) {
  switch (dt) {
    case CJ_F32: { float f = (float)v; memcpy(x, &f, 4); break; }
    case CJ_F64: memcpy(x, &v, 8); break;
    case CJ_BF16: { uint16_t h = cj_f32_to_bf16((float)v); memcpy(x, &h, 2); break; }
    default: { uint16_t h = cj_f32_to_f16((float)v); memcpy(x, &h, 2); break; }
  }
}

/* the loops below are vectorized for several instruction sets (function multiversioning, as
 * the combiners in k_gather_common.c); without trapping math (no value changes: only the
 * floating-point exception flags, which nothing reads) so that the selects of maximum and
 * minimum are if-converted: with it, only the AVX-512 clone (masks) vectorized them */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
#pragma GCC push_options
#pragma GCC optimize("tree-vectorize", "vect-cost-model=dynamic", "no-trapping-math")
#define RW_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#define RW_POP_OPTIONS 1
#else
#define RW_CLONES
#endif
/* blk[k] += x[k * s] for k < n */
RW_CLONES static void wide_add_f32(float *restrict blk, const float *restrict v, int64_t s,
                                   int64_t n) {
  if (s == 1)
    for (int64_t k = 0; k < n; k++) blk[k] += v[k];
  else
    for (int64_t k = 0; k < n; k++) blk[k] += v[k * s];
}
RW_CLONES static void wide_add_bf16(float *restrict blk, const uint16_t *restrict v, int64_t s,
                                    int64_t n) {
  for (int64_t k = 0; k < n; k++) {
    uint32_t u = (uint32_t)v[k * s] << 16;
    float f;
    memcpy(&f, &u, 4);
    blk[k] += f;
  }
}
/* acc[k] (= iv for the first block) += blk[k]; blk[k] = -0 (the identity of addition that
 * keeps the sign of zeros) */
RW_CLONES static void wide_flush(double *restrict acc, float *restrict blk, int64_t n, bool first,
                                 double iv) {
  for (int64_t k = 0; k < n; k++) {
    acc[k] = (first ? iv : acc[k]) + (double)blk[k];
    blk[k] = -0.0f;
  }
}
/* dst[k] = round(acc[k] (iv when no block was flushed) + blk[k]) for f32 and bf16 results */
RW_CLONES static void wide_store_f32(float *restrict dst, const double *restrict acc,
                                     const float *restrict blk, int64_t n, bool first, double iv) {
  for (int64_t k = 0; k < n; k++) dst[k] = (float)((first ? iv : acc[k]) + (double)blk[k]);
}
/* rw_slabs' runs: acc row r (ab bytes apart) combined with x row r (xb bytes apart), C
 * elements each, for the float sums and the float max/min of pooling: the combiners' values
 * (maximum/minimum: a NaN operand propagates, the first one when both are; max(-0, +0) = +0,
 * min = -0) as selects the vectorizer turns into blends (cj_maxf's bit operations do not
 * vectorize) */
#define RW2(NAME, T, EXPR)                                                                     \
  RW_CLONES static void NAME(char *acc, int64_t ab, const char *x, int64_t xb, int64_t C,      \
                             int64_t rows) {                                                   \
    for (int64_t r = 0; r < rows; r++) {                                                       \
      T *restrict A = (T *)(void *)(acc + r * ab);                                             \
      const T *restrict X = (const T *)(const void *)(x + r * xb);                             \
      for (int64_t c = 0; c < C; c++) {                                                        \
        T a = A[c], b = X[c];                                                                  \
        A[c] = (EXPR);                                                                         \
      }                                                                                        \
    }                                                                                          \
  }
/* maximum and minimum with cj_maxf's values (a NaN operand propagates, the first when both
 * are; max(-0, +0) = +0, min = -0), every value computed, then selected (as k_reduce_kern.h's
 * rk_maxf): the AVX2 and baseline clones were scalar loops with branches (1-D max pooling of
 * random data at 18x XLA's time on an AVX2 machine) */
#define RW_MINMAX(NAME, T, CMP, ZERO)                                                          \
  static inline T NAME(T a, T b) {                                                            \
    T m = a CMP b ? a : b, z = (ZERO);                                                        \
    m = ((a == b) & (a == 0)) ? z : m;                                                        \
    return a != a ? a : m;                                                                    \
  }
RW_MINMAX(rw_maxf, float, >, a + b)
RW_MINMAX(rw_minf, float, <, -(-a + -b))
RW_MINMAX(rw_maxd, double, >, a + b)
RW_MINMAX(rw_mind, double, <, -(-a + -b))
#undef RW_MINMAX
RW2(rw2_add_f32, float, a + b)
RW2(rw2_max_f32, float, rw_maxf(a, b))
RW2(rw2_min_f32, float, rw_minf(a, b))
RW2(rw2_add_f64, double, a + b)
RW2(rw2_max_f64, double, rw_maxd(a, b))
RW2(rw2_min_f64, double, rw_mind(a, b))
/* rw_rows' runs: acc[k] = acc[k] op x[k * s] for k < n, with pooling's strides 1, 2 and 3 as
 * constants so that the strided loads vectorize (as shuffles of contiguous loads); the
 * combiners' strided loops stay scalar, and cj_maxf's bit operations keep even their
 * contiguous loops scalar (1-D max pooling with stride 1 ran at 3.4x XLA's time) */
#define RWR_LOOP(T, EXPR, S)                                                                   \
  for (int64_t k = 0; k < n; k++) {                                                            \
    T a = A[k], b = X[k * (S)];                                                                \
    A[k] = (EXPR);                                                                             \
  }
#define RWR(NAME, T, EXPR)                                                                     \
  RW_CLONES static void NAME(char *acc, const char *x, int64_t s, int64_t n) {                 \
    T *restrict A = (T *)(void *)acc;                                                          \
    const T *restrict X = (const T *)(const void *)x;                                          \
    if (s == 1)                                                                                \
      RWR_LOOP(T, EXPR, 1)                                                                     \
    else if (s == 2)                                                                           \
      RWR_LOOP(T, EXPR, 2)                                                                     \
    else if (s == 3)                                                                           \
      RWR_LOOP(T, EXPR, 3)                                                                     \
    else                                                                                       \
      RWR_LOOP(T, EXPR, s)                                                                     \
  }
RWR(rwr_add_f32, float, a + b)
RWR(rwr_max_f32, float, rw_maxf(a, b))
RWR(rwr_min_f32, float, rw_minf(a, b))
RWR(rwr_add_f64, double, a + b)
RWR(rwr_max_f64, double, rw_maxd(a, b))
RWR(rwr_min_f64, double, rw_mind(a, b))
/* dst[k] = x[k * s] for 16-bit elements: rw_rows' strided f16/bf16 runs, gathered so that the
 * combiners' contiguous loops (vectorized) run on them */
RW_CLONES static void gather16(uint16_t *restrict dst, const uint16_t *restrict x, int64_t s,
                               int64_t n) {
  if (s == 2)
    for (int64_t k = 0; k < n; k++) dst[k] = x[2 * k];
  else if (s == 3)
    for (int64_t k = 0; k < n; k++) dst[k] = x[3 * k];
  else
    for (int64_t k = 0; k < n; k++) dst[k] = x[k * s];
}
#undef RWR
#undef RWR_LOOP
#undef RW2

/* sas_lanes' window step: lane c keeps its selected value sv[c] (at so[c]) when
 * sv[c] CMP xr[c], else takes xr[c] (at off + c) */
typedef void (*sas_step_fn)(float *sv, int64_t *so, const float *xr, int64_t off, int64_t C);
#define SAS_STEP(NAME, CMP)                                                                    \
  RW_CLONES static void NAME(float *restrict sv, int64_t *restrict so, const float *restrict xr, \
                             int64_t off, int64_t C) {                                         \
    for (int64_t c = 0; c < C; c++) {                                                          \
      bool keep = sv[c] CMP xr[c];                                                             \
      sv[c] = keep ? sv[c] : xr[c];                                                            \
      so[c] = keep ? so[c] : off + c;                                                          \
    }                                                                                          \
  }
SAS_STEP(sas_step_ge, >=)
SAS_STEP(sas_step_gt, >)
SAS_STEP(sas_step_le, <=)
SAS_STEP(sas_step_lt, <)
#undef SAS_STEP
#ifdef RW_POP_OPTIONS
#pragma GCC pop_options
#endif

/* the run loops of a float add/max/min: rw_slabs' (rw2) and rw_rows' (rwr); false: none */
static bool rw_runs_lookup(int kop, cj_dtype dt, rw2_fn *rw2, rwr_fn *rwr) {
  if (dt != CJ_F32 && dt != CJ_F64) return false;
  bool f = dt == CJ_F32;
  switch (kop) {
    case KG_ADD:
      *rw2 = f ? rw2_add_f32 : rw2_add_f64;
      *rwr = f ? rwr_add_f32 : rwr_add_f64;
      return true;
    case KG_MAX:
      *rw2 = f ? rw2_max_f32 : rw2_max_f64;
      *rwr = f ? rwr_max_f32 : rwr_max_f64;
      return true;
    case KG_MIN:
      *rw2 = f ? rw2_min_f32 : rw2_min_f64;
      *rwr = f ? rwr_min_f32 : rwr_min_f64;
      return true;
    default: return false;
  }
}

static void rw_rows(void *ctx, int64_t r0, int64_t r1) {
  const rw_run *R = ctx;
  const rw_params *p = R->p;
  int32_t es = p->es, last = p->rank - 1;
  int64_t olen = p->olen;
  int64_t o[CJ_MAX_RANK], w[CJ_MAX_RANK];
  rw_row_index(p, r0, o); /* o[0..last-1]: the row's output index, advanced like an odometer */
  for (int64_t row = r0; row < r1; row++) {
    if (row > r0) rw_next_row(p, o);
    char *acc = R->out + row * olen * es;
    cj_fill_value(acc, R->init, es, olen);
    for (int32_t d = 0; d <= last; d++) w[d] = 0;
    for (int64_t wi = 0; wi < p->nwin; wi++) {
      int64_t base = 0;
      if (!rw_base(p, o, w, &base)) {
        if (!R->skip) p->comb(acc, es, R->init, 0, olen);
      } else {
        int64_t s = p->wstr[last], bd = p->bdil[last], id = p->idims[last];
        if (bd == 1) {
          int64_t c, lo, hi;
          rw_span(p, w[last], &c, &lo, &hi);
          const char *xp = R->in + (base + lo * s + c) * es;
          if (lo < hi && p->rwr)
            p->rwr(acc + lo * es, xp, s, hi - lo);
          else if (lo < hi && es == 2 && s > 1)
            for (int64_t k0 = lo; k0 < hi; k0 += RW_GATHER) {
              int64_t n = hi - k0 < RW_GATHER ? hi - k0 : RW_GATHER;
              uint16_t tmp[RW_GATHER];
              gather16(tmp, (const uint16_t *)(const void *)(xp + (k0 - lo) * s * es), s, n);
              p->comb(acc + k0 * es, es, (const char *)tmp, es, n);
            }
          else if (lo < hi)
            p->comb(acc + lo * es, es, xp, s * es, hi - lo);
          if (!R->skip) {
            if (lo > 0) p->comb(acc, es, R->init, 0, lo);
            if (hi < olen) p->comb(acc + hi * es, es, R->init, 0, olen - hi);
          }
        } else {
          int64_t c = w[last] * p->wdil[last] - p->plo[last];
          for (int64_t j = 0; j < olen; j++) {
            int64_t q = j * s + c;
            if (q >= 0 && q % bd == 0 && q / bd < id)
              p->comb(acc + j * es, es, R->in + (base + q / bd) * es, es, 1);
            else if (!R->skip)
              p->comb(acc + j * es, es, R->init, 0, 1);
          }
        }
      }
      for (int32_t d = last; d >= 0; d--) {
        if (++w[d] < p->wdims[d]) break;
        w[d] = 0;
      }
    }
  }
}

typedef struct wide_acc {
  cj_dtype dt;
  float *blk;           /* the current block's sums (not for f64) */
  double *acc, *comp;   /* the f64 sums (and for f64, the compensation terms) */
} wide_acc;

/* terms x[k * s] (of type dt) added to columns [k0, k0 + n) */
static inline __attribute__((always_inline)) void wide_add(const wide_acc *W, int64_t k0,
                                                          const char *x, int64_t s, int64_t n) {
  switch (W->dt) {
    case CJ_F32: wide_add_f32(W->blk + k0, (const float *)x, s, n); break;
    case CJ_BF16: wide_add_bf16(W->blk + k0, (const uint16_t *)x, s, n); break;
    case CJ_F16: {
      const uint16_t *v = (const uint16_t *)x;
      float *blk = W->blk + k0;
      for (int64_t k = 0; k < n; k++) blk[k] += cj_f16_to_f32(v[k * s]);
      break;
    }
    default: {
      const double *v = (const double *)x;
      double *acc = W->acc + k0, *comp = W->comp + k0;
      for (int64_t k = 0; k < n; k++) {
        double a = acc[k], y = v[k * s], t = a + y;
        comp[k] += fabs(a) >= fabs(y) ? (a - t) + y : (y - t) + a;
        acc[k] = t;
      }
    }
  }
}

static void rw_rows_wide(void *ctx, int64_t r0, int64_t r1) {
  const rw_run *R = ctx;
  const rw_params *p = R->p;
  int32_t es = p->es, last = p->rank - 1;
  int64_t olen = p->olen, s = p->wstr[last], bd = p->bdil[last], id = p->idims[last];
  float blk[RW_WIDE_COLS];
  double acc[RW_WIDE_COLS], comp[RW_WIDE_COLS];
  wide_acc W = {p->wide_dt, blk, acc, comp};
  bool f64 = W.dt == CJ_F64;
  const char *init = R->init; /* padding terms: the init value, stride 0 */
  double iv = wide_load(W.dt, init);
  int64_t o[CJ_MAX_RANK], w[CJ_MAX_RANK];
  rw_row_index(p, r0, o);
  for (int64_t row = r0; row < r1; row++) {
    if (row > r0) rw_next_row(p, o);
    for (int64_t j0 = 0; j0 < olen; j0 += RW_WIDE_COLS) {
      int64_t m = olen - j0 < RW_WIDE_COLS ? olen - j0 : RW_WIDE_COLS, j1 = j0 + m;
      if (f64)
        for (int64_t k = 0; k < m; k++) acc[k] = iv, comp[k] = 0;
      else
        for (int64_t k = 0; k < m; k++) blk[k] = -0.0f;
      for (int32_t d = 0; d <= last; d++) w[d] = 0;
      int64_t inblk = 0;
      bool first = true; /* no block flushed into acc yet */
      for (int64_t wi = 0; wi < p->nwin; wi++) {
        int64_t base = 0;
        if (!rw_base(p, o, w, &base)) {
          if (!R->skip) wide_add(&W, 0, init, 0, m);
        } else if (bd == 1) {
          int64_t c, lo, hi;
          rw_span(p, w[last], &c, &lo, &hi);
          int64_t a = lo > j0 ? lo : j0, b = hi < j1 ? hi : j1;
          if (a < b) wide_add(&W, a - j0, R->in + (base + a * s + c) * es, s, b - a);
          if (!R->skip) {
            if (a > j0) wide_add(&W, 0, init, 0, (a < j1 ? a : j1) - j0);
            if (b < j1) {
              int64_t b0 = b > j0 ? b : j0;
              wide_add(&W, b0 - j0, init, 0, j1 - b0);
            }
          }
        } else {
          int64_t c = w[last] * p->wdil[last] - p->plo[last];
          for (int64_t j = j0; j < j1; j++) {
            int64_t q = j * s + c;
            if (q >= 0 && q % bd == 0 && q / bd < id)
              wide_add(&W, j - j0, R->in + (base + q / bd) * es, 1, 1);
            else if (!R->skip)
              wide_add(&W, j - j0, init, 0, 1);
          }
        }
        if (!f64 && ++inblk == RW_WIDE_BLOCK && wi + 1 < p->nwin) {
          wide_flush(acc, blk, m, first, iv);
          inblk = 0;
          first = false;
        }
        for (int32_t d = last; d >= 0; d--) {
          if (++w[d] < p->wdims[d]) break;
          w[d] = 0;
        }
      }
      char *dst = R->out + (row * olen + j0) * es;
      if (W.dt == CJ_F32) {
        wide_store_f32((float *)dst, acc, blk, m, first, iv);
      } else if (!f64) {
        for (int64_t k = 0; k < m; k++)
          wide_store(W.dt, dst + k * es, (first ? iv : acc[k]) + (double)blk[k]);
      } else {
        /* the compensation: not where it is zero (-0 + +0 would lose the sign) nor past an
         * infinity (it is NaN there: inf - inf) */
        for (int64_t k = 0; k < m; k++)
          wide_store(W.dt, dst + k * es, comp[k] != 0 && isfinite(acc[k]) ? acc[k] + comp[k] : acc[k]);
      }
    }
  }
}

/* Cumulative sums and products of floats (jnp.cumsum over a long axis is a reduce_window
 * whose window spans the axis) keep their running value in f64 and round each output once:
 * f32, bf16 and f16 outputs are then correctly rounded but for a last-place tie, better than
 * XLA:CPU's tree of windows (a running f32 sum of 2^20 values is off by ~2e-5 relative). f64
 * sums carry Neumaier's compensation term, which holds them near one rounding too. Lines are
 * walked along the scan dim with up to FSCAN_COLS of the dims after it at a time. Short scans
 * (under FSCAN_MIN_N) keep the body's own arithmetic, one rounding per step in the element type,
 * as the reference interpreter and XLA:CPU compute them (the conformance corpus expects those
 * values within a few ulps, also where a prefix cancels). */
enum { FSCAN_COLS = 256, FSCAN_MIN_N = 64 };
typedef double (*fscan_load)(const char *x);
typedef void (*fscan_store)(char *x, double v);
typedef struct fscan {
  fscan_load load;
  fscan_store store;
  bool mul, compensate;
} fscan;

static double fs_ld_f32(const char *x) { float v; memcpy(&v, x, 4); return v; }
static double fs_ld_f64(const char *x) { double v; memcpy(&v, x, 8); return v; }
static double fs_ld_bf16(const char *x) { uint16_t v; memcpy(&v, x, 2); return cj_bf16_to_f32(v); }
static double fs_ld_f16(const char *x) { uint16_t v; memcpy(&v, x, 2); return cj_f16_to_f32(v); }
static void fs_st_f32(char *x, double v) { float f = (float)v; memcpy(x, &f, 4); }
static void fs_st_f64(char *x, double v) { memcpy(x, &v, 8); }
static void fs_st_bf16(char *x, double v) { uint16_t h = cj_f32_to_bf16((float)v); memcpy(x, &h, 2); }
static void fs_st_f16(char *x, double v) { uint16_t h = cj_f32_to_f16((float)v); memcpy(x, &h, 2); }

static bool fscan_init(fscan *f, int kop, cj_dtype dt) {
  if (kop != KG_ADD && kop != KG_MUL) return false;
  f->mul = kop == KG_MUL;
  f->compensate = false;
  switch (dt) {
    case CJ_F32: f->load = fs_ld_f32; f->store = fs_st_f32; return true;
    case CJ_BF16: f->load = fs_ld_bf16; f->store = fs_st_bf16; return true;
    case CJ_F16: f->load = fs_ld_f16; f->store = fs_st_f16; return true;
    case CJ_F64: f->load = fs_ld_f64; f->store = fs_st_f64; f->compensate = !f->mul; return true;
    default: return false;
  }
}

/* line o of the scan: n rows of `inner` elements */
static void fscan_lines(const rw_params *p, const fscan *f, char *out, const char *in,
                        const char *init) {
  int32_t es = p->es;
  int64_t n = p->scan_n, inner = p->scan_inner, row = inner * es;
  double acc[FSCAN_COLS], comp[FSCAN_COLS];
  double iv = f->load(init);
  for (int64_t c0 = 0; c0 < inner; c0 += FSCAN_COLS) {
    int64_t m = inner - c0 < FSCAN_COLS ? inner - c0 : FSCAN_COLS;
    for (int64_t k = 0; k < m; k++) acc[k] = iv, comp[k] = 0;
    for (int64_t j = 0; j < n; j++) {
      int64_t i = p->scan_rev ? n - 1 - j : j;
      const char *src = in + i * row + c0 * es;
      char *dst = out + i * row + c0 * es;
      if (f->mul) {
        for (int64_t k = 0; k < m; k++) {
          acc[k] *= f->load(src + k * es);
          f->store(dst + k * es, acc[k]);
        }
      } else if (f->compensate) {
        for (int64_t k = 0; k < m; k++) {
          double x = f->load(src + k * es), t = acc[k] + x;
          /* no compensation past an infinity (it would be inf - inf: NaN) nor where it is zero
           * (-0 + +0 would lose the sign) */
          if (isfinite(t)) comp[k] += fabs(acc[k]) >= fabs(x) ? (acc[k] - t) + x : (x - t) + acc[k];
          acc[k] = t;
          f->store(dst + k * es, comp[k] != 0 && isfinite(t) ? t + comp[k] : t);
        }
      } else {
        for (int64_t k = 0; k < m; k++) {
          acc[k] += f->load(src + k * es);
          f->store(dst + k * es, acc[k]);
        }
      }
    }
  }
}

/* out[i] = init op x[0] op ... op x[i] along the scan dim (reversed: from the end), which is
 * what the window computes when its padding elements change nothing */
static void rw_scan(void *ctx, int64_t o0, int64_t o1) {
  const rw_run *R = ctx;
  const rw_params *p = R->p;
  int32_t es = p->es;
  int64_t n = p->scan_n, inner = p->scan_inner, row = inner * es;
  if (p->fscan) {
    for (int64_t o = o0; o < o1; o++)
      fscan_lines(p, p->fscan, R->out + o * n * row, R->in + o * n * row, R->init);
    return;
  }
  if (p->scan_fn) {
    for (int64_t o = o0; o < o1; o++) p->scan_fn(R->out + o * n * es, R->in + o * n * es, n, R->init);
    return;
  }
  for (int64_t o = o0; o < o1; o++) {
    const char *prev = NULL;
    for (int64_t j = 0; j < n; j++) {
      int64_t i = p->scan_rev ? n - 1 - j : j;
      char *dst = R->out + (o * n + i) * row;
      const char *src = R->in + (o * n + i) * row;
      if (!prev) {
        for (int64_t k = 0; k < inner; k++) memcpy(dst + k * es, R->init, (size_t)es);
      } else {
        memcpy(dst, prev, (size_t)row);
      }
      p->comb(dst, es, src, es, inner);
      prev = dst;
    }
  }
}

/* Channels last (pooling of NWC/NHWC data): the last dim has a unit window and is neither
 * padded nor dilated, so every window position reads whole runs of C = olen contiguous
 * elements. A slab is the output's last two dims [m, C]; for each window position (in the same
 * order as rw_rows: each output combines its window in the same order, so the same bits) the
 * runs of the in-bounds outputs along dim D = rank - 2 are combined, with a row's offset
 * computed once per slab and position, not once per run of C elements (rw_rows' per-run
 * overhead made 1-D pooling of [16, 994, 32] 4x XLA's time). */
/* Window position w of slab o (dims below D = rank - 2): the outputs [lo, hi) within [j0, j1)
 * along D whose input rows are in bounds (output j reads input row j * s + c); returns the
 * element offset of input row c (lo == hi when the leading dims fall into padding) */
static int64_t slab_span(const rw_params *p, const int64_t *o, const int64_t *w, int64_t j0,
                         int64_t j1, int64_t *lo, int64_t *hi) {
  int32_t D = p->rank - 2;
  int64_t base = 0;
  *lo = *hi = j0;
  for (int32_t d = 0; d < D; d++) {
    int64_t q = o[d] * p->wstr[d] + w[d] * p->wdil[d] - p->plo[d];
    if (p->bdil[d] != 1) {
      if (q % p->bdil[d] != 0) return 0;
      q /= p->bdil[d];
    }
    if (q < 0 || q >= p->idims[d]) return 0;
    base += q * p->istr[d];
  }
  int64_t s = p->wstr[D], id = p->idims[D];
  int64_t c = w[D] * p->wdil[D] - p->plo[D];
  int64_t l = c >= 0 ? 0 : (-c + s - 1) / s;
  int64_t h = id - 1 - c < 0 ? 0 : floordiv(id - 1 - c, s) + 1;
  if (l < j0) l = j0;
  if (h > j1) h = j1;
  if (l > h) l = h;
  *lo = l, *hi = h;
  return base + c * p->istr[D];
}

static void rw_slabs(void *ctx, int64_t r0, int64_t r1) {
  const rw_run *R = ctx;
  const rw_params *p = R->p;
  int32_t es = p->es, D = p->rank - 2;
  int64_t C = p->olen, m = p->odims[D], cb = C * es;
  int64_t s = p->wstr[D], rs = p->istr[D];
  int64_t J = cb >= 8192 ? 1 : 8192 / cb;
  int64_t o[CJ_MAX_RANK], w[CJ_MAX_RANK];
  for (int64_t row = r0; row < r1; row++) {
    int64_t t = row;
    for (int32_t d = D - 1; d >= 0; d--) {
      o[d] = t % p->odims[d];
      t /= p->odims[d];
    }
    char *acc = R->out + row * m * cb;
    for (int64_t j0 = 0; j0 < m; j0 += J) { /* J outputs at a time: their runs stay in L1 */
      int64_t j1 = m - j0 < J ? m : j0 + J;
      cj_fill_value(acc + j0 * cb, R->init, es, (j1 - j0) * C);
      for (int32_t d = 0; d <= D + 1; d++) w[d] = 0;
      for (int64_t wi = 0; wi < p->nwin; wi++) {
        int64_t lo, hi, x = slab_span(p, o, w, j0, j1, &lo, &hi);
        const char *xp = R->in + x * es;
        if (p->rw2 && hi > lo)
          p->rw2(acc + lo * cb, cb, xp + lo * s * rs * es, s * rs * es, C, hi - lo);
        else
          for (int64_t j = lo; j < hi; j++) p->comb(acc + j * cb, es, xp + j * s * rs * es, es, C);
        if (!R->skip) {
          if (lo > j0) p->comb(acc + j0 * cb, es, R->init, 0, (lo - j0) * C);
          if (hi < j1) p->comb(acc + hi * cb, es, R->init, 0, (j1 - hi) * C);
        }
        for (int32_t d = D; d >= 0; d--) {
          if (++w[d] < p->wdims[d]) break;
          w[d] = 0;
        }
      }
    }
  }
}

/* whether rw_slabs applies (see there) and is worth it: runs of at most 256 elements (longer
 * ones amortize rw_rows' overhead) and slabs enough to share among threads */
static bool rw_slabs_detect(const rw_params *p, const int64_t *phi) {
  int32_t L = p->rank - 1;
  if (p->rank < 2 || p->wdims[L] != 1 || p->wstr[L] != 1 || p->bdil[L] != 1 || p->plo[L] != 0 ||
      phi[L] != 0 || p->bdil[L - 1] != 1 || p->olen > 256 || p->scan || p->wide)
    return false;
  int64_t slabs = p->nrows / (p->odims[L - 1] ? p->odims[L - 1] : 1);
  return slabs >= 8 || p->nrows * p->olen < 32768;
}

static CJ_MUST_USE cj_status k_reduce_window_fast(cj_exec_ctx *ctx, const cj_step *st) {
  const rw_params *p = st->params;
  rw_run R = {p, CJ_PTR(ctx, st->out[0]), CJ_PTR(ctx, st->in[0]), CJ_PTR(ctx, st->in[1]), false};
  if (p->nrows == 0 || p->olen == 0) return NULL;
  R.skip = p->pad_rule == KG_PAD_ALWAYS ||
           (p->pad_rule == KG_PAD_IF_IDENTITY && memcmp(R.init, p->ident, (size_t)p->es) == 0);
  if (p->scan && R.skip) {
    int64_t work = p->scan_outer * p->scan_n * p->scan_inner;
    if (work >= CJ_PAR_MIN_ELEMS * 2 && p->scan_outer > 1 && ctx->pool &&
        cj_pool_size(ctx->pool) > 1) {
      int64_t grain = CJ_PAR_MIN_ELEMS / (p->scan_n * p->scan_inner);
      cj_pool_parallel_for(ctx->pool, p->scan_outer, grain < 1 ? 1 : grain, rw_scan, &R);
    } else {
      rw_scan(&R, 0, p->scan_outer);
    }
    return NULL;
  }
  int64_t work = p->nrows * p->olen * p->nwin;
  if (p->cl) {
    if (work >= CJ_PAR_MIN_ELEMS * 2 && p->nslabs > 1 && ctx->pool && cj_pool_size(ctx->pool) > 1) {
      int64_t per = p->nrows / p->nslabs * p->olen * p->nwin;
      int64_t grain = CJ_PAR_MIN_ELEMS / (per ? per : 1);
      cj_pool_parallel_for(ctx->pool, p->nslabs, grain < 1 ? 1 : grain, rw_slabs, &R);
    } else {
      rw_slabs(&R, 0, p->nslabs);
    }
    return NULL;
  }
  if (work >= CJ_PAR_MIN_ELEMS * 2 && p->nrows > 1 && ctx->pool && cj_pool_size(ctx->pool) > 1) {
    int64_t per = p->olen * p->nwin;
    int64_t grain = CJ_PAR_MIN_ELEMS / (per ? per : 1);
    cj_pool_parallel_for(ctx->pool, p->nrows, grain < 1 ? 1 : grain,
                         p->wide ? rw_rows_wide : rw_rows, &R);
  } else {
    (p->wide ? rw_rows_wide : rw_rows)(&R, 0, p->nrows);
  }
  return NULL;
}

/* ---- cumulative reductions ----
 * A window of a dim's whole size n, padded by n - 1 on one side (stride and dilations 1, every
 * other dim a unit window): output i along that dim reduces the prefix x[0..i] (padding before
 * it) or, padded after, the suffix x[i..n). Sets p->scan, scan_rev and the line geometry. */
static bool rw_scan_detect(rw_params *p, const int64_t *phi, int32_t xrank) {
  int32_t sd = -1;
  for (int32_t d = 0; d < p->rank; d++) {
    bool unit = p->wstr[d] == 1 && p->bdil[d] == 1 && p->wdil[d] == 1;
    if (p->wdims[d] == 1 && unit && p->plo[d] == 0 && (xrank == 0 || phi[d] == 0)) continue;
    int64_t n = p->idims[d];
    if (sd < 0 && unit && n > 1 && p->wdims[d] == n &&
        ((p->plo[d] == n - 1 && phi[d] == 0) || (p->plo[d] == 0 && phi[d] == n - 1))) {
      sd = d;
    } else {
      return false;
    }
  }
  if (sd < 0) return false;
  p->scan = true;
  p->scan_rev = p->plo[sd] == 0;
  p->scan_n = p->idims[sd];
  p->scan_outer = p->scan_inner = 1;
  for (int32_t d = 0; d < sd; d++) p->scan_outer *= p->idims[d];
  for (int32_t d = sd + 1; d < p->rank; d++) p->scan_inner *= p->idims[d];
  return true;
}

static CJ_MUST_USE cj_status k_reduce_window_general(cj_exec_ctx *ctx, const cj_step *st);

/* A cumulative reduction with any body (lax.cumlogsumexp, variadic bodies) as a running fold,
 * once per element instead of once per window element: out[i] = body(out[i-1], x[i]) from
 * out[-1] = init (reversed: from the end). The window of output i folds (in window order) n-1-i
 * padding elements, which hold init, before x[0..i]: when body(init, init) is init, bit for bit
 * (checked at run time, else the general kernel runs), that padding folds to init and the
 * running fold is exactly the window's fold. Reversed, the padding comes after the suffix and
 * the suffix is folded from its end (a reduce_window's combine order is the implementation's;
 * XLA evaluates cumulative reductions as scans too). An elementwise body, lowered a second time
 * over RW_LANES lanes, folds that many lines per plan run (gscan_lanes; the same ops per lane). */
enum { RW_LANES = 64, RW_LANES_MIN_LINES = 8 };

static inline void copy_elem(char *dst, const char *src, int32_t es) {
  switch (es) {
    case 1: memcpy(dst, src, 1); break;
    case 2: memcpy(dst, src, 2); break;
    case 4: memcpy(dst, src, 4); break;
    case 8: memcpy(dst, src, 8); break;
    default: memcpy(dst, src, (size_t)es); break;
  }
}

/* The running fold of k_reduce_window_gscan over RW_LANES lines at a time with the lanes body:
 * lane l of a run is line l0 + l (lines are (outer, inner) pairs, inner fastest), whose
 * elements are base[l] + i * inner along the scan dim; consecutive inner positions make the
 * lanes contiguous, else (inner shorter than the lanes) they are gathered and scattered one by
 * one. Lanes past the last line fold init values, their results unused. */
static CJ_MUST_USE cj_status gscan_lanes(cj_exec_ctx *ctx, const cj_step *st,
                                         unsigned char (*iv)[16]) {
  const rw_params *p = st->params;
  const kg_body *b = &p->vbody;
  int32_t n = p->n;
  int64_t len = p->scan_n, inner = p->scan_inner, lines = p->scan_outer * inner;
  int64_t base[RW_LANES];
  for (int64_t l0 = 0; l0 < lines; l0 += RW_LANES) {
    int64_t m = lines - l0 < RW_LANES ? lines - l0 : RW_LANES;
    for (int64_t l = 0; l < m; l++) base[l] = ((l0 + l) / inner) * len * inner + (l0 + l) % inner;
    bool contig = base[m - 1] - base[0] == m - 1;
    for (int32_t i = 0; i < n; i++) {
      int32_t es = p->bes[i];
      char *a = KG_ARG(ctx, st, b, i), *x = KG_ARG(ctx, st, b, n + i);
      for (int64_t l = 0; l < RW_LANES; l++) copy_elem(a + l * es, (const char *)iv[i], es);
      for (int64_t l = m; l < RW_LANES; l++) copy_elem(x + l * es, (const char *)iv[i], es);
    }
    for (int64_t j = 0; j < len; j++) {
      int64_t off = (p->scan_rev ? len - 1 - j : j) * inner;
      for (int32_t i = 0; i < n; i++) {
        char *x = KG_ARG(ctx, st, b, n + i);
        int32_t ies = p->in_es[i], es = p->bes[i];
        const char *src = CJ_PTR(ctx, st->in[i]) + off * ies;
        if (contig) {
          kg_cvt_run(&p->in_cvt[i], x, src + base[0] * ies, m);
        } else if (!p->in_cvt[i].fn) {
          for (int64_t l = 0; l < m; l++) copy_elem(x + l * es, src + base[l] * ies, es);
        } else {
          for (int64_t l = 0; l < m; l++) kg_cvt_run(&p->in_cvt[i], x + l * es, src + base[l] * ies, 1);
        }
      }
      CJ_RETURN_IF_ERROR(cj_plan_run(ctx, &b->plan));
      for (int32_t i = 0; i < n; i++) {
        int32_t es = p->bes[i];
        char *a = KG_ARG(ctx, st, b, i);
        const char *rv = KG_RET(ctx, st, b, i);
        if (a != rv) memmove(a, rv, (size_t)(RW_LANES * es));
        char *dst = CJ_PTR(ctx, st->out[i]) + off * es;
        if (contig) {
          memcpy(dst + base[0] * es, a, (size_t)(m * es));
        } else {
          for (int64_t l = 0; l < m; l++) copy_elem(dst + base[l] * es, a + l * es, es);
        }
      }
    }
  }
  return NULL;
}

static CJ_MUST_USE cj_status k_reduce_window_gscan(cj_exec_ctx *ctx, const cj_step *st) {
  const rw_params *p = st->params;
  const kg_body *b = &p->body;
  int32_t n = p->n;
  unsigned char iv[KG_MAX_BODY_VALUES][16];
  for (int32_t i = 0; i < n; i++) {
    if (p->bes[i] > 16) return k_reduce_window_general(ctx, st);
    kg_cvt_run(&p->init_cvt[i], (char *)iv[i], CJ_PTR(ctx, st->in[n + i]), 1);
    memcpy(KG_ARG(ctx, st, b, i), iv[i], (size_t)p->bes[i]);
    memcpy(KG_ARG(ctx, st, b, n + i), iv[i], (size_t)p->bes[i]);
  }
  CJ_RETURN_IF_ERROR(cj_plan_run(ctx, &b->plan));
  for (int32_t i = 0; i < n; i++)
    if (memcmp(KG_RET(ctx, st, b, i), iv[i], (size_t)p->bes[i]) != 0)
      return k_reduce_window_general(ctx, st);
  int64_t len = p->scan_n, inner = p->scan_inner;
  if (p->lanes && p->scan_outer * inner >= RW_LANES_MIN_LINES) return gscan_lanes(ctx, st, iv);
  for (int64_t o = 0; o < p->scan_outer; o++) {
    for (int64_t k = 0; k < inner; k++) {
      for (int32_t i = 0; i < n; i++) memcpy(KG_ARG(ctx, st, b, i), iv[i], (size_t)p->bes[i]);
      for (int64_t j = 0; j < len; j++) {
        int64_t e = (o * len + (p->scan_rev ? len - 1 - j : j)) * inner + k;
        for (int32_t i = 0; i < n; i++)
          kg_cvt_run(&p->in_cvt[i], KG_ARG(ctx, st, b, n + i),
                     CJ_PTR(ctx, st->in[i]) + e * p->in_es[i], 1);
        CJ_RETURN_IF_ERROR(cj_plan_run(ctx, &b->plan));
        for (int32_t i = 0; i < n; i++) {
          char *a = KG_ARG(ctx, st, b, i);
          const char *rv = KG_RET(ctx, st, b, i);
          if (a != rv) memmove(a, rv, (size_t)p->bes[i]);
          memcpy(CJ_PTR(ctx, st->out[i]) + e * p->bes[i], a, (size_t)p->bes[i]);
        }
      }
    }
  }
  return NULL;
}

static CJ_MUST_USE cj_status k_reduce_window_general(cj_exec_ctx *ctx, const cj_step *st) {
  const rw_params *p = st->params;
  const kg_body *b = &p->body;
  int32_t n = p->n, rank = p->rank;
  int64_t total = p->nrows * p->olen;
  int64_t o[CJ_MAX_RANK], w[CJ_MAX_RANK];
  for (int32_t d = 0; d < rank; d++) o[d] = 0;
  for (int64_t e = 0; e < total; e++) {
    for (int32_t i = 0; i < n; i++)
      kg_cvt_run(&p->init_cvt[i], KG_ARG(ctx, st, b, i), CJ_PTR(ctx, st->in[n + i]), 1);
    for (int32_t d = 0; d < rank; d++) w[d] = 0;
    for (int64_t wi = 0; wi < p->nwin; wi++) {
      bool valid = true;
      int64_t off = 0;
      for (int32_t d = 0; d < rank; d++) {
        int64_t q = o[d] * p->wstr[d] + w[d] * p->wdil[d] - p->plo[d];
        if (q < 0 || q % p->bdil[d] != 0 || q / p->bdil[d] >= p->idims[d]) {
          valid = false;
          break;
        }
        off += (q / p->bdil[d]) * p->istr[d];
      }
      for (int32_t i = 0; i < n; i++) {
        char *x = KG_ARG(ctx, st, b, n + i);
        if (valid)
          kg_cvt_run(&p->in_cvt[i], x, CJ_PTR(ctx, st->in[i]) + off * p->in_es[i], 1);
        else
          kg_cvt_run(&p->init_cvt[i], x, CJ_PTR(ctx, st->in[n + i]), 1);
      }
      cj_status s = cj_plan_run(ctx, &b->plan);
      if (s) return s;
      for (int32_t i = 0; i < n; i++) {
        char *a = KG_ARG(ctx, st, b, i);
        const char *rv = KG_RET(ctx, st, b, i);
        if (a != rv) memmove(a, rv, (size_t)p->bes[i]);
      }
      for (int32_t d = rank - 1; d >= 0; d--) {
        if (++w[d] < p->wdims[d]) break;
        w[d] = 0;
      }
    }
    for (int32_t i = 0; i < n; i++)
      memcpy(CJ_PTR(ctx, st->out[i]) + e * p->bes[i], KG_ARG(ctx, st, b, i), (size_t)p->bes[i]);
    for (int32_t d = rank - 1; d >= 0; d--) {
      if (++o[d] < p->odims[d]) break;
      o[d] = 0;
    }
  }
  return NULL;
}

/* window attributes shared by reduce_window and select_and_scatter */
static CJ_MUST_USE cj_status window_attrs(const cj_op *op, int32_t rank, int64_t *wdims, int64_t *wstr,
                              int64_t *bdil, int64_t *wdil, int64_t *plo, int64_t *phi,
                              bool wd_optional) {
  int64_t k = 0;
  if (wd_optional && !cj_op_attr(op, "window_dimensions")) {
    for (int32_t d = 0; d < rank; d++) wdims[d] = 1;
  } else if (!cj_kg_i64s(op, "window_dimensions", wdims, CJ_MAX_RANK, &k) || k != rank) {
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "window_dimensions must have %d entries", rank);
  }
  struct {
    const char *name;
    int64_t *v;
  } opt[3] = {{"window_strides", wstr}, {"base_dilations", bdil}, {"window_dilations", wdil}};
  for (int j = 0; j < 3; j++) {
    if (!opt[j].v) continue;
    for (int32_t d = 0; d < rank; d++) opt[j].v[d] = 1;
    if (cj_op_attr(op, opt[j].name) &&
        (!cj_kg_i64s(op, opt[j].name, opt[j].v, CJ_MAX_RANK, &k) || k != rank))
      return cj_op_error(op, CJ_INVALID_ARGUMENT, "%s must have %d entries", opt[j].name, rank);
  }
  CJ_RETURN_IF_ERROR(cj_kg_padding(op, rank, plo, phi));
  const int64_t big = (int64_t)1 << 31, bigpad = (int64_t)1 << 40; /* no overflow below */
  for (int32_t d = 0; d < rank; d++) {
    if (wdims[d] < 1 || wstr[d] < 1 || (bdil && bdil[d] < 1) || (wdil && wdil[d] < 1))
      return cj_op_error(op, CJ_INVALID_ARGUMENT, "window sizes, strides and dilations must be "
                                                  "positive");
    if (wdims[d] > big || wstr[d] > big || (bdil && bdil[d] > big) || (wdil && wdil[d] > big) ||
        plo[d] > bigpad || plo[d] < -bigpad || phi[d] > bigpad || phi[d] < -bigpad)
      return cj_op_error(op, CJ_UNIMPLEMENTED, "window attributes of dim %d are too large", d);
  }
  return NULL;
}

/* A last dim the window passes through (size 1, stride 1, no padding or dilation) joins the
 * dim before it when that one has stride 1 and no base dilation: output (o, c) reads input
 * (o + w * dil - lo, c), which is merged index o * C + c plus w * dil * C - lo * C, so the two
 * are one dim with the window's dilation and padding scaled by C. The same elements combined in
 * the same order, in rows of O * C instead of C (NHWC pooling gradients: rows of the channels
 * alone cost a call per 32 elements) */
static void rw_merge_last(rw_params *p) {
  while (p->rank >= 2) {
    int32_t l = p->rank - 1, d = l - 1;
    if (p->wdims[l] != 1 || p->wstr[l] != 1 || p->bdil[l] != 1 || p->wdil[l] != 1 ||
        p->plo[l] != 0 || p->odims[l] != p->idims[l] || p->istr[l] != 1 || p->wstr[d] != 1 ||
        p->bdil[d] != 1)
      return;
    int64_t c = p->idims[l];
    p->idims[d] *= c;
    p->odims[d] *= c;
    p->wdil[d] *= c;
    p->plo[d] *= c;
    p->istr[d] = 1;
    p->rank = l;
    p->nrows /= p->odims[d] / c > 0 ? p->odims[d] / c : 1;
    p->olen = p->odims[d];
  }
}

cj_status cj_lower_reduce_window(cj_lw *L, cj_op *op) {
  int32_t n = (int32_t)op->nresults;
  if (n == 0 || (int32_t)op->nopnds != 2 * n || op->nregions != 1)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "reduce_window needs N inputs, N inits, N results");
  if (n > KG_MAX_BODY_VALUES / 3)
    return cj_op_error(op, CJ_UNIMPLEMENTED, "more than %d inputs", KG_MAX_BODY_VALUES / 3);
  cj_lw_tensor x0;
  CJ_RETURN_IF_ERROR(cj_lw_operand(L, op, 0, &x0));
  rw_params *p = cj_lw_alloc(L, sizeof *p);
  int32_t *ins = cj_lw_alloc(L, sizeof(int32_t) * (size_t)(8 * n));
  int32_t *outs = cj_lw_alloc(L, sizeof(int32_t) * (size_t)n);
  if (!p || !ins || !outs) return cj_oom();
  int32_t rank = x0.rank;
  int64_t phi[CJ_MAX_RANK];
  if (rank > 0) {
    CJ_RETURN_IF_ERROR(
        window_attrs(op, rank, p->wdims, p->wstr, p->bdil, p->wdil, p->plo, phi, false));
  }
  /* output shape (C15) */
  const cj_type *rt = op->results[0].type;
  if (!cj_type_is_static(rt) || rt->rank != rank)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "result rank must be %d", rank);
  for (int32_t d = 0; d < rank; d++) {
    int64_t dil = x0.dims[d] == 0 ? 0 : (x0.dims[d] - 1) * p->bdil[d] + 1;
    int64_t padded = p->plo[d] + dil + phi[d];
    int64_t dw = (p->wdims[d] - 1) * p->wdil[d] + 1;
    int64_t nw = padded <= 0 || dw > padded ? 0 : (padded - dw) / p->wstr[d] + 1;
    if (rt->dims[d] != nw)
      return cj_op_error(op, CJ_INVALID_ARGUMENT, "result dim %d must be %lld", d, (long long)nw);
    p->odims[d] = nw;
    p->idims[d] = x0.dims[d];
  }
  cj_row_strides(rank, x0.dims, p->istr);
  if (rank == 0) { /* one window of one element */
    rank = 1;
    p->odims[0] = p->idims[0] = p->wdims[0] = p->wstr[0] = p->bdil[0] = p->wdil[0] = 1;
    p->istr[0] = 1;
    p->plo[0] = 0;
  }
  p->rank = rank;
  p->nwin = 1;
  p->nrows = 1;
  for (int32_t d = 0; d < rank; d++) {
    p->nwin *= p->wdims[d];
    if (d < rank - 1) p->nrows *= p->odims[d];
  }
  p->olen = p->odims[rank - 1];
  p->n = n;
  cj_block *blk = op->regions[0].first;
  if (!blk || blk->nargs != (uint32_t)(2 * n))
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "the body needs %d arguments", 2 * n);
  p->in_cvt = cj_lw_alloc(L, sizeof(kg_cvt) * (size_t)n);
  p->init_cvt = cj_lw_alloc(L, sizeof(kg_cvt) * (size_t)n);
  p->in_es = cj_lw_alloc(L, sizeof(int32_t) * (size_t)n);
  p->bes = cj_lw_alloc(L, sizeof(int32_t) * (size_t)n);
  if (!p->in_cvt || !p->init_cvt || !p->in_es || !p->bes) return cj_oom();
  for (int32_t i = 0; i < n; i++) {
    cj_lw_tensor x, init;
    CJ_RETURN_IF_ERROR(cj_lw_operand(L, op, (uint32_t)i, &x));
    CJ_RETURN_IF_ERROR(cj_lw_operand(L, op, (uint32_t)(n + i), &init));
    if (x.nelems != x0.nelems || x.rank != x0.rank || init.nelems != 1)
      return cj_op_error(op, CJ_INVALID_ARGUMENT, "inputs differ in shape or init not a scalar");
    cj_dtype bt = cj_kg_scalar_dtype(blk->args[i].type);
    if (bt == CJ_INVALID || cj_kg_scalar_dtype(blk->args[n + i].type) != bt)
      return cj_op_error(op, CJ_UNIMPLEMENTED, "body argument types");
    if (op->results[i].type->dtype != bt)
      return cj_op_error(op, CJ_INVALID_ARGUMENT, "result %d must have the body's type", i);
    if (!cj_kg_cvt_init(&p->in_cvt[i], x.dtype, bt) || !cj_kg_cvt_init(&p->init_cvt[i], init.dtype, bt))
      return cj_op_error(op, CJ_UNIMPLEMENTED, "unsupported promotion");
    p->in_es[i] = cj_dtype_bytes(x.dtype);
    p->bes[i] = cj_dtype_bytes(bt);
    ins[i] = x.buf;
    ins[n + i] = init.buf;
  }
  cj_lw_add_cost(L, (double)p->nrows * (double)p->olen * (double)p->nwin * n, 0);
  int kop = -1;
  if (n == 1) {
    cj_lw_tensor init;
    CJ_RETURN_IF_ERROR(cj_lw_operand(L, op, 1, &init));
    if (init.dtype == x0.dtype) kop = cj_kg_body_binop(op, 0, x0.dtype);
  }
  kg_comb_fn comb = kop >= 0 ? cj_kg_comb_lookup(kop, x0.dtype) : NULL;
  if (comb) {
    p->comb = comb;
    p->es = cj_dtype_bytes(x0.dtype);
    p->pad_rule = cj_kg_pad_rule(kop, x0.dtype, p->ident);
    /* a cumulative reduction? */
    if (kop != KG_KEEP && rw_scan_detect(p, phi, x0.rank)) {
      fscan f;
      if (p->scan_n >= FSCAN_MIN_N && fscan_init(&f, kop, x0.dtype)) {
        p->fscan = cj_lw_alloc(L, sizeof f);
        if (!p->fscan) return cj_oom();
        *p->fscan = f;
      } else if (p->scan_inner == 1 && !p->scan_rev) {
        p->scan_fn = cj_kg_scan_lookup(kop, x0.dtype);
      }
    }
    if (!p->scan) rw_merge_last(p);
    cj_dtype dt = x0.dtype;
    p->wide = kop == KG_ADD && p->nwin >= RW_WIDE_MIN &&
              (dt == CJ_F32 || dt == CJ_F64 || dt == CJ_BF16 || dt == CJ_F16);
    p->wide_dt = dt;
    rw2_fn rw2 = NULL;
    rwr_fn rwr = NULL;
    rw_runs_lookup(kop, dt, &rw2, &rwr);
    p->rwr = rwr;
    p->cl = rw_slabs_detect(p, phi);
    if (p->cl) {
      p->nslabs = p->nrows / p->odims[p->rank - 2];
      p->rw2 = rw2;
    }
    cj_lw_tensor r;
    CJ_RETURN_IF_ERROR(cj_lw_result(L, op, 0, &r));
    if (!cj_lw_emit(L, op, k_reduce_window_fast, p, 2, ins, 1, &r.buf)) return cj_oom();
    return NULL;
  }
  int32_t start = cj_lw_advance(L);
  for (int32_t i = 0; i < n; i++) {
    cj_lw_tensor r;
    CJ_RETURN_IF_ERROR(cj_lw_result(L, op, (uint32_t)i, &r));
    outs[i] = r.buf;
    cj_lw_def_at(L, r.buf, start);
  }
  CJ_RETURN_IF_ERROR(cj_kg_body_lower(L, op, 0, start, &p->body, ins + 2 * n));
  if (p->body.nrets != (uint32_t)n)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "the body must return %d values", n);
  for (int32_t i = 0; i < n; i++)
    if (p->body.ret_types[i]->dtype != p->body.arg_types[i]->dtype)
      return cj_op_error(op, CJ_INVALID_ARGUMENT, "the body's result %d has another type", i);
  p->body.slot0 = (uint32_t)(2 * n);
  bool scan = rw_scan_detect(p, phi, x0.rank);
  uint32_t nins = (uint32_t)(5 * n);
  if (scan && !getenv("CJRT_NO_SCAN_LANES")) {
    cj_status vs = cj_kg_body_lower_lanes(L, op, 0, start, RW_LANES, &p->vbody, ins + 5 * n,
                                          &p->lanes);
    if (vs) { /* the scalar body lowered: without the lanes body, the fold is only slower */
      cj_status_ignore(vs);
      p->lanes = false;
    }
    if (p->lanes) {
      p->vbody.slot0 = nins;
      nins = (uint32_t)(8 * n);
    }
  }
  cj_kernel_fn kf = scan ? k_reduce_window_gscan : k_reduce_window_general;
  if (!cj_lw_emit(L, op, kf, p, nins, ins, (uint32_t)n, outs)) return cj_oom();
  cj_lw_extend_region(L, start);
  return NULL;
}

/* ======================================================================== select_and_scatter */

typedef bool (*sel_fn)(const char *a, const char *b);
#define SEL(name, T, LOAD)                                                         \
  static bool sel_ge_##name(const char *a, const char *b) {                        \
    T x, y;                                                                        \
    memcpy(&x, a, sizeof x);                                                       \
    memcpy(&y, b, sizeof y);                                                       \
    return LOAD(x) >= LOAD(y);                                                     \
  }                                                                                \
  static bool sel_gt_##name(const char *a, const char *b) {                        \
    T x, y;                                                                        \
    memcpy(&x, a, sizeof x);                                                       \
    memcpy(&y, b, sizeof y);                                                       \
    return LOAD(x) > LOAD(y);                                                      \
  }                                                                                \
  static bool sel_le_##name(const char *a, const char *b) {                        \
    T x, y;                                                                        \
    memcpy(&x, a, sizeof x);                                                       \
    memcpy(&y, b, sizeof y);                                                       \
    return LOAD(x) <= LOAD(y);                                                     \
  }                                                                                \
  static bool sel_lt_##name(const char *a, const char *b) {                        \
    T x, y;                                                                        \
    memcpy(&x, a, sizeof x);                                                       \
    memcpy(&y, b, sizeof y);                                                       \
    return LOAD(x) < LOAD(y);                                                      \
  }
#define ID(x) (x)
SEL(s8, int8_t, ID)
SEL(s16, int16_t, ID)
SEL(s32, int32_t, ID)
SEL(s64, int64_t, ID)
SEL(u8, uint8_t, ID)
SEL(u16, uint16_t, ID)
SEL(u32, uint32_t, ID)
SEL(u64, uint64_t, ID)
SEL(f32, float, ID)
SEL(f64, double, ID)
SEL(bf16, uint16_t, cj_bf16_to_f32)
SEL(f16, uint16_t, cj_f16_to_f32)

/* the select body as one GE/GT/LE/LT compare of (arg0, arg1), else NULL */
static sel_fn select_fast(const cj_op *op, cj_dtype dt) {
  cj_block *b = op->regions[0].first;
  if (!b || b->next || b->nargs != 2 || b->nops != 2) return NULL;
  if (cj_kg_scalar_dtype(b->args[0].type) != dt || cj_kg_scalar_dtype(b->args[1].type) != dt)
    return NULL;
  cj_op *c = b->first, *ret = b->last;
  if (c->kind != CJ_OP_COMPARE || c->nopnds != 2 || ret->nopnds != 1 ||
      ret->operands[0] != &c->results[0])
    return NULL;
  int32_t dir = -1, ct = -1;
  if (!cj_op_get_enum(c, "comparison_direction", CJ_EK_COMPARISON_DIRECTION, &dir)) return NULL;
  cj_op_get_enum(c, "compare_type", CJ_EK_COMPARISON_TYPE, &ct);
  bool f = cj_dtype_is_float(dt), s = cj_dtype_kindof(dt) == CJ_DK_SINT;
  int32_t want = f ? CJ_COMPARISON_TYPE_FLOAT
                   : s ? CJ_COMPARISON_TYPE_SIGNED : CJ_COMPARISON_TYPE_UNSIGNED;
  if (ct >= 0 && ct != CJ_COMPARISON_TYPE_NOTYPE && ct != want) return NULL;
  bool swapped;
  if (c->operands[0] == &b->args[0] && c->operands[1] == &b->args[1])
    swapped = false;
  else if (c->operands[0] == &b->args[1] && c->operands[1] == &b->args[0])
    swapped = true;
  else
    return NULL;
  if (swapped) {
    if (dir == CJ_COMPARISON_DIRECTION_GE) dir = CJ_COMPARISON_DIRECTION_LE;
    else if (dir == CJ_COMPARISON_DIRECTION_GT) dir = CJ_COMPARISON_DIRECTION_LT;
    else if (dir == CJ_COMPARISON_DIRECTION_LE) dir = CJ_COMPARISON_DIRECTION_GE;
    else if (dir == CJ_COMPARISON_DIRECTION_LT) dir = CJ_COMPARISON_DIRECTION_GT;
  }
#define DIRS(S)                                              \
  switch (dir) {                                             \
    case CJ_COMPARISON_DIRECTION_GE: return sel_ge_##S;      \
    case CJ_COMPARISON_DIRECTION_GT: return sel_gt_##S;      \
    case CJ_COMPARISON_DIRECTION_LE: return sel_le_##S;      \
    case CJ_COMPARISON_DIRECTION_LT: return sel_lt_##S;      \
    default: return NULL;                                    \
  }
  switch (dt) {
    case CJ_S8: DIRS(s8)
    case CJ_S16: DIRS(s16)
    case CJ_S32: DIRS(s32)
    case CJ_S64: DIRS(s64)
    case CJ_U8: DIRS(u8)
    case CJ_U16: DIRS(u16)
    case CJ_U32: DIRS(u32)
    case CJ_U64: DIRS(u64)
    case CJ_F32: DIRS(f32)
    case CJ_F64: DIRS(f64)
    case CJ_BF16: DIRS(bf16)
    case CJ_F16: DIRS(f16)
    default: return NULL;
  }
#undef DIRS
}

typedef struct sas_params {
  int32_t rank;
  int64_t xdims[CJ_MAX_RANK], xstr[CJ_MAX_RANK], sdims[CJ_MAX_RANK];
  int64_t wdims[CJ_MAX_RANK], wstr[CJ_MAX_RANK], plo[CJ_MAX_RANK];
  int64_t nsrc, nwin, nres;
  int32_t xes, ses, res; /* operand, source, result element bytes */
  sel_fn sel;            /* NULL: the select body */
  kg_comb_fn comb;       /* NULL: the scatter body */
  kg_cvt init_cvt;       /* init value -> result type */
  kg_cvt src_cvt;        /* source -> scatter body type */
  kg_body sbody, cbody;  /* select, scatter */
  int32_t lanes;         /* f32 channels last (sas_lanes): 1 + the select's SAS_* compare, 0: no */
  /* slots: in = [operand, source, init][select args 2, ret 1][scatter args 2, ret 1];
   * out = result */
} sas_params;

/* f32 pooling gradients of channels-last data (the last dim has a unit window, stride 1, no
 * padding; select one GE/GT/LE/LT compare, scatter an add): the C channels of a source row
 * scan their windows side by side, the row offsets computed once per window position and the
 * compares as selects over the lanes, then scatter in source order (the order of the scalar
 * walk, so the same sums). The scalar walk's index arithmetic per element made a 1-D max
 * pool's gradient 3x XLA's time. */
static void sas_lanes(const sas_params *p, float *res, const float *x, const float *src) {
  int32_t L = p->rank - 1, dir = p->lanes - 1;
  sas_step_fn step = dir == SAS_GE ? sas_step_ge : dir == SAS_GT ? sas_step_gt
                   : dir == SAS_LE ? sas_step_le : sas_step_lt;
  int64_t C = p->xdims[L], nrows = p->nsrc / C;
  float sv[SAS_LANES_MAX];
  int64_t so[SAS_LANES_MAX];
  int64_t o[CJ_MAX_RANK], w[CJ_MAX_RANK];
  for (int32_t d = 0; d < L; d++) o[d] = 0;
  for (int64_t row = 0; row < nrows; row++) {
    bool any = false;
    for (int32_t d = 0; d < L; d++) w[d] = 0;
    for (int64_t wi = 0; wi < p->nwin; wi++) {
      int64_t off = 0;
      bool valid = true;
      for (int32_t d = 0; d < L && valid; d++) {
        int64_t q = o[d] * p->wstr[d] + w[d] - p->plo[d];
        valid = q >= 0 && q < p->xdims[d];
        off += q * p->xstr[d];
      }
      if (valid && !any) {
        memcpy(sv, x + off, sizeof(float) * (size_t)C);
        for (int64_t c = 0; c < C; c++) so[c] = off + c;
        any = true;
      } else if (valid) {
        step(sv, so, x + off, off, C);
      }
      for (int32_t d = L - 1; d >= 0; d--) {
        if (++w[d] < p->wdims[d]) break;
        w[d] = 0;
      }
    }
    if (any)
      for (int64_t c = 0; c < C; c++) res[so[c]] = res[so[c]] + src[row * C + c];
    for (int32_t d = L - 1; d >= 0; d--) {
      if (++o[d] < p->sdims[d]) break;
      o[d] = 0;
    }
  }
}

static CJ_MUST_USE cj_status k_select_and_scatter(cj_exec_ctx *ctx, const cj_step *st) {
  const sas_params *p = st->params;
  char *res = CJ_PTR(ctx, st->out[0]);
  const char *x = CJ_PTR(ctx, st->in[0]), *src = CJ_PTR(ctx, st->in[1]),
             *init = CJ_PTR(ctx, st->in[2]);
  if (p->nres > 0) {
    kg_cvt_run(&p->init_cvt, res, init, 1);
    cj_fill_value(res + p->res, res, p->res, p->nres - 1);
  }
  if (p->lanes) {
    if (p->nsrc > 0) sas_lanes(p, (float *)(void *)res, (const float *)(const void *)x,
                               (const float *)(const void *)src);
    return NULL;
  }
  int32_t rank = p->rank;
  int64_t o[CJ_MAX_RANK], w[CJ_MAX_RANK];
  for (int32_t d = 0; d < rank; d++) o[d] = 0;
  for (int64_t e = 0; e < p->nsrc; e++) {
    int64_t sel = -1;
    for (int32_t d = 0; d < rank; d++) w[d] = 0;
    for (int64_t wi = 0; wi < p->nwin; wi++) {
      int64_t off = 0;
      bool valid = true;
      for (int32_t d = 0; d < rank; d++) {
        int64_t q = o[d] * p->wstr[d] + w[d] - p->plo[d];
        if (q < 0 || q >= p->xdims[d]) {
          valid = false;
          break;
        }
        off += q * p->xstr[d];
      }
      if (valid) {
        if (sel < 0) {
          sel = off;
        } else {
          bool keep;
          if (p->sel) {
            keep = p->sel(x + sel * p->xes, x + off * p->xes);
          } else {
            memcpy(KG_ARG(ctx, st, &p->sbody, 0), x + sel * p->xes, (size_t)p->xes);
            memcpy(KG_ARG(ctx, st, &p->sbody, 1), x + off * p->xes, (size_t)p->xes);
            cj_status s = cj_plan_run(ctx, &p->sbody.plan);
            if (s) return s;
            keep = (*KG_RET(ctx, st, &p->sbody, 0) & 1) != 0;
          }
          if (!keep) sel = off;
        }
      }
      for (int32_t d = rank - 1; d >= 0; d--) {
        if (++w[d] < p->wdims[d]) break;
        w[d] = 0;
      }
    }
    if (sel >= 0) {
      char *r = res + sel * p->res;
      if (p->comb) {
        p->comb(r, p->res, src + e * p->ses, p->ses, 1);
      } else {
        memcpy(KG_ARG(ctx, st, &p->cbody, 0), r, (size_t)p->res);
        kg_cvt_run(&p->src_cvt, KG_ARG(ctx, st, &p->cbody, 1), src + e * p->ses, 1);
        cj_status s = cj_plan_run(ctx, &p->cbody.plan);
        if (s) return s;
        memcpy(r, KG_RET(ctx, st, &p->cbody, 0), (size_t)p->res);
      }
    }
    for (int32_t d = rank - 1; d >= 0; d--) {
      if (++o[d] < p->sdims[d]) break;
      o[d] = 0;
    }
  }
  return NULL;
}

cj_status cj_lower_select_and_scatter(cj_lw *L, cj_op *op) {
  if (op->nopnds != 3 || op->nresults != 1 || op->nregions != 2)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "select_and_scatter needs 3 operands, 2 bodies");
  cj_lw_tensor x, src, init;
  CJ_RETURN_IF_ERROR(cj_lw_operand(L, op, 0, &x));
  CJ_RETURN_IF_ERROR(cj_lw_operand(L, op, 1, &src));
  CJ_RETURN_IF_ERROR(cj_lw_operand(L, op, 2, &init));
  if (init.nelems != 1 || src.rank != x.rank)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "bad operand shapes");
  sas_params *p = cj_lw_alloc(L, sizeof *p);
  if (!p) return cj_oom();
  int32_t rank = x.rank;
  p->rank = rank;
  int64_t phi[CJ_MAX_RANK];
  if (rank > 0)
    CJ_RETURN_IF_ERROR(window_attrs(op, rank, p->wdims, p->wstr, NULL, NULL, p->plo, phi, true));
  p->nsrc = 1;
  p->nwin = 1;
  for (int32_t d = 0; d < rank; d++) {
    int64_t padded = p->plo[d] + x.dims[d] + phi[d];
    int64_t nw = padded <= 0 || p->wdims[d] > padded ? 0 : (padded - p->wdims[d]) / p->wstr[d] + 1;
    if (src.dims[d] != nw)
      return cj_op_error(op, CJ_INVALID_ARGUMENT, "source dim %d must be %lld", d, (long long)nw);
    p->xdims[d] = x.dims[d];
    p->sdims[d] = nw;
    p->nsrc *= nw;
    p->nwin *= p->wdims[d];
  }
  cj_row_strides(rank, x.dims, p->xstr);
  const cj_type *rt = op->results[0].type;
  if (!cj_type_is_static(rt) || rt->num_elements != x.nelems)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "the result must have the operand's shape");
  cj_dtype E = rt->dtype;
  p->nres = x.nelems;
  p->xes = cj_dtype_bytes(x.dtype);
  p->ses = cj_dtype_bytes(src.dtype);
  p->res = cj_dtype_bytes(E);
  if (!cj_kg_cvt_init(&p->init_cvt, init.dtype, E) || !cj_kg_cvt_init(&p->src_cvt, src.dtype, E))
    return cj_op_error(op, CJ_UNIMPLEMENTED, "unsupported promotion");
  p->sel = select_fast(op, x.dtype);
  int kop = src.dtype == E ? cj_kg_body_binop(op, 1, E) : -1;
  p->comb = kop >= 0 ? cj_kg_comb_lookup(kop, E) : NULL;
  cj_lw_add_cost(L, (double)p->nsrc * (double)p->nwin, 0);
  int32_t ins[9] = {x.buf, src.buf, init.buf, -1, -1, -1, -1, -1, -1};
  cj_lw_tensor r;
  if (p->sel && p->comb) {
    int32_t last = rank - 1;
    if (x.dtype == CJ_F32 && src.dtype == CJ_F32 && E == CJ_F32 && kop == KG_ADD && rank >= 1 &&
        p->wdims[last] == 1 && p->wstr[last] == 1 && p->plo[last] == 0 &&
        src.dims[last] == x.dims[last] && x.dims[last] <= SAS_LANES_MAX)
      p->lanes = p->sel == sel_ge_f32 ? 1 + SAS_GE : p->sel == sel_gt_f32 ? 1 + SAS_GT
               : p->sel == sel_le_f32 ? 1 + SAS_LE : p->sel == sel_lt_f32 ? 1 + SAS_LT : 0;
    CJ_RETURN_IF_ERROR(cj_lw_result(L, op, 0, &r));
    if (!cj_lw_emit(L, op, k_select_and_scatter, p, 3, ins, 1, &r.buf)) return cj_oom();
    return NULL;
  }
  int32_t start = cj_lw_advance(L);
  CJ_RETURN_IF_ERROR(cj_lw_result(L, op, 0, &r));
  cj_lw_def_at(L, r.buf, start);
  uint32_t nin = 3;
  if (!p->sel) {
    CJ_RETURN_IF_ERROR(cj_kg_body_lower(L, op, 0, start, &p->sbody, ins + nin));
    if (p->sbody.nargs != 2 || p->sbody.nrets != 1 || p->sbody.ret_types[0]->dtype != CJ_PRED ||
        p->sbody.arg_types[0]->dtype != x.dtype || p->sbody.arg_types[1]->dtype != x.dtype)
      return cj_op_error(op, CJ_INVALID_ARGUMENT, "select must be (E, E) -> i1");
    p->sbody.slot0 = nin;
    nin += 3;
  }
  if (!p->comb) {
    CJ_RETURN_IF_ERROR(cj_kg_body_lower(L, op, 1, start, &p->cbody, ins + nin));
    if (p->cbody.nargs != 2 || p->cbody.nrets != 1 || p->cbody.ret_types[0]->dtype != E ||
        p->cbody.arg_types[0]->dtype != E || p->cbody.arg_types[1]->dtype != E)
      return cj_op_error(op, CJ_INVALID_ARGUMENT, "scatter must be (E, E) -> E");
    p->cbody.slot0 = nin;
    nin += 3;
  }
  if (!cj_lw_emit(L, op, k_select_and_scatter, p, nin, ins, 1, &r.buf)) return cj_oom();
  cj_lw_extend_region(L, start);
  return NULL;
}
