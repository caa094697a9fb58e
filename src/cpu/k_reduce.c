/* cjrt: stablehlo.reduce. Bodies that are one add/multiply/maximum/minimum/and/or/xor of the two
 * arguments run as fast kernels (k_reduce_kern.h, one variant per instruction set): each output
 * folds its elements in a fixed tree of short runs combined pairwise (see "fast path"), bf16
 * and f16 in f32. JAX's argmax/argmin body (a variadic reduce of values and indices) runs as
 * typed folds (see "argmax / argmin"). Reductions over the same dims of one input and of
 * elementwise functions of it (statistics: sum(x) and sum(x * x)), and variadic reduces whose
 * body combines each input with its own accumulator, run as one step that reads the input once
 * (see "sibling reductions"). Any other body (other variadic reductions, promoted types) runs
 * as a nested plan per element, in index order. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/lower.h"
#include "cpu/scalar.h"
#include "cpu/k_reduce_am.h"
#include "cpu/k_reduce_kern_api.h"
#include "cpu/vmath.h"



enum {
  R_ADD = CJ_RED_ADD, R_MUL = CJ_RED_MUL, R_MAX = CJ_RED_MAX, R_MIN = CJ_RED_MIN,
  R_AND = CJ_RED_AND, R_OR = CJ_RED_OR, R_XOR = CJ_RED_XOR, R_COUNT
};

/* vertical: acc[j] = acc[j] op x[j]; horizontal: *acc = fold(*acc, x[0..n) with byte stride) */
typedef void (*vfn_t)(void *acc, const void *x, int64_t n);


#define RED(name, T, EXPR)                                                              \
  static void v_##name(void *acc_, const void *x_, int64_t n) {                          \
    T *acc = acc_;                                                                       \
    const T *xs = x_;                                                                    \
    for (int64_t j = 0; j < n; j++) {                                                    \
      T a = acc[j], b = xs[j];                                                           \
      acc[j] = (EXPR);                                                                   \
    }                                                                                    \
  }

#define RED_INT(S, T)                 \
  RED(add_##S, T, (T)(a + b))         \
  RED(mul_##S, T, (T)(a * b))         \
  RED(max_##S, T, a > b ? a : b)      \
  RED(min_##S, T, a < b ? a : b)      \
  RED(and_##S, T, (T)(a & b))         \
  RED(or_##S, T, (T)(a | b))          \
  RED(xor_##S, T, (T)(a ^ b))
/* unsigned arithmetic for the wrapping ops on signed types */
RED(add_s8, int8_t, (int8_t)(uint8_t)((unsigned)(uint8_t)a + (unsigned)(uint8_t)b))
RED(mul_s8, int8_t, (int8_t)(uint8_t)((unsigned)(uint8_t)a * (unsigned)(uint8_t)b))
RED(max_s8, int8_t, a > b ? a : b)
RED(min_s8, int8_t, a < b ? a : b)
RED(and_s8, int8_t, (int8_t)(a & b))
RED(or_s8, int8_t, (int8_t)(a | b))
RED(xor_s8, int8_t, (int8_t)(a ^ b))
RED(add_s16, int16_t, (int16_t)(uint16_t)((unsigned)(uint16_t)a + (unsigned)(uint16_t)b))
RED(mul_s16, int16_t, (int16_t)(uint16_t)((unsigned)(uint16_t)a * (unsigned)(uint16_t)b))
RED(max_s16, int16_t, a > b ? a : b)
RED(min_s16, int16_t, a < b ? a : b)
RED(and_s16, int16_t, (int16_t)(a & b))
RED(or_s16, int16_t, (int16_t)(a | b))
RED(xor_s16, int16_t, (int16_t)(a ^ b))
RED(add_s32, int32_t, (int32_t)((uint32_t)a + (uint32_t)b))
RED(mul_s32, int32_t, (int32_t)((uint32_t)a * (uint32_t)b))
RED(max_s32, int32_t, a > b ? a : b)
RED(min_s32, int32_t, a < b ? a : b)
RED(and_s32, int32_t, a & b)
RED(or_s32, int32_t, a | b)
RED(xor_s32, int32_t, a ^ b)
RED(add_s64, int64_t, (int64_t)((uint64_t)a + (uint64_t)b))
RED(mul_s64, int64_t, (int64_t)((uint64_t)a * (uint64_t)b))
RED(max_s64, int64_t, a > b ? a : b)
RED(min_s64, int64_t, a < b ? a : b)
RED(and_s64, int64_t, a & b)
RED(or_s64, int64_t, a | b)
RED(xor_s64, int64_t, a ^ b)
RED(add_u8, uint8_t, (uint8_t)((unsigned)a + b))
RED(mul_u8, uint8_t, (uint8_t)((unsigned)a * b))
RED(max_u8, uint8_t, a > b ? a : b)
RED(min_u8, uint8_t, a < b ? a : b)
RED(and_u8, uint8_t, (uint8_t)(a & b))
RED(or_u8, uint8_t, (uint8_t)(a | b))
RED(xor_u8, uint8_t, (uint8_t)(a ^ b))
RED(add_u16, uint16_t, (uint16_t)((unsigned)a + b))
RED(mul_u16, uint16_t, (uint16_t)((unsigned)a * b))
RED(max_u16, uint16_t, a > b ? a : b)
RED(min_u16, uint16_t, a < b ? a : b)
RED(and_u16, uint16_t, (uint16_t)(a & b))
RED(or_u16, uint16_t, (uint16_t)(a | b))
RED(xor_u16, uint16_t, (uint16_t)(a ^ b))
RED_INT(u32, uint32_t)
RED_INT(u64, uint64_t)
RED(or_pred, uint8_t, (uint8_t)(a | b))
RED(and_pred, uint8_t, (uint8_t)(a & b))
RED(xor_pred, uint8_t, (uint8_t)(a ^ b))
RED(add_f32, float, a + b)
RED(mul_f32, float, a *b)
RED(max_f32, float, cj_maxf(a, b))
RED(min_f32, float, cj_minf(a, b))
RED(add_f64, double, a + b)
RED(mul_f64, double, a *b)
RED(max_f64, double, cj_maxd(a, b))
RED(min_f64, double, cj_mind(a, b))
RED(add_c64, c64_t, ((c64_t){a.re + b.re, a.im + b.im}))
RED(mul_c64, c64_t, ((c64_t){a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re}))
RED(add_c128, c128_t, ((c128_t){a.re + b.re, a.im + b.im}))
RED(mul_c128, c128_t, ((c128_t){a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re}))

/* bf16/f16 element by element (collectives): each step rounded, as the body computes */
#define RED_SMALL(name, LOAD, STORE, EXPR)                                               \
  static void v_##name(void *acc_, const void *x_, int64_t n) {                          \
    uint16_t *acc = acc_;                                                                \
    const uint16_t *xs = x_;                                                             \
    for (int64_t j = 0; j < n; j++) {                                                    \
      float a = LOAD(acc[j]), b = LOAD(xs[j]);                                           \
      acc[j] = STORE(EXPR);                                                              \
    }                                                                                    \
  }
RED_SMALL(add_bf16, cj_bf16_to_f32, cj_f32_to_bf16, a + b)
RED_SMALL(mul_bf16, cj_bf16_to_f32, cj_f32_to_bf16, a *b)
RED_SMALL(max_bf16, cj_bf16_to_f32, cj_f32_to_bf16, cj_maxf(a, b))
RED_SMALL(min_bf16, cj_bf16_to_f32, cj_f32_to_bf16, cj_minf(a, b))
RED_SMALL(add_f16, cj_f16_to_f32, cj_f32_to_f16, a + b)
RED_SMALL(mul_f16, cj_f16_to_f32, cj_f32_to_f16, a *b)
RED_SMALL(max_f16, cj_f16_to_f32, cj_f32_to_f16, cj_maxf(a, b))
RED_SMALL(min_f16, cj_f16_to_f32, cj_f32_to_f16, cj_minf(a, b))

static bool red_fns(int rop, cj_dtype dt, vfn_t *v) {
#define CASE(DT, S)                                        \
  case CJ_##DT:                                            \
    switch (rop) {                                         \
      case R_ADD: *v = v_add_##S; return true; \
      case R_MUL: *v = v_mul_##S; return true; \
      case R_MAX: *v = v_max_##S; return true; \
      case R_MIN: *v = v_min_##S; return true; \
      case R_AND: *v = v_and_##S; return true; \
      case R_OR: *v = v_or_##S; return true;    \
      case R_XOR: *v = v_xor_##S; return true; \
      default: return false;                               \
    }
  switch (dt) {
    CASE(S8, s8)
    CASE(S16, s16)
    CASE(S32, s32)
    CASE(S64, s64)
    CASE(U8, u8)
    CASE(U16, u16)
    CASE(U32, u32)
    CASE(U64, u64)
    case CJ_PRED:
      switch (rop) {
        case R_ADD: case R_MAX: case R_OR: *v = v_or_pred; return true;
        case R_MUL: case R_MIN: case R_AND: *v = v_and_pred; return true;
        case R_XOR: *v = v_xor_pred; return true;
        default: return false;
      }
    case CJ_F32:
      switch (rop) {
        case R_ADD: *v = v_add_f32; return true;
        case R_MUL: *v = v_mul_f32; return true;
        case R_MAX: *v = v_max_f32; return true;
        case R_MIN: *v = v_min_f32; return true;
        default: return false;
      }
    case CJ_F64:
      switch (rop) {
        case R_ADD: *v = v_add_f64; return true;
        case R_MUL: *v = v_mul_f64; return true;
        case R_MAX: *v = v_max_f64; return true;
        case R_MIN: *v = v_min_f64; return true;
        default: return false;
      }
    case CJ_BF16:
      switch (rop) {
        case R_ADD: *v = v_add_bf16; return true;
        case R_MUL: *v = v_mul_bf16; return true;
        case R_MAX: *v = v_max_bf16; return true;
        case R_MIN: *v = v_min_bf16; return true;
        default: return false;
      }
    case CJ_F16:
      switch (rop) {
        case R_ADD: *v = v_add_f16; return true;
        case R_MUL: *v = v_mul_f16; return true;
        case R_MAX: *v = v_max_f16; return true;
        case R_MIN: *v = v_min_f16; return true;
        default: return false;
      }
    case CJ_C64:
      if (rop == R_ADD) { *v = v_add_c64; return true; }
      if (rop == R_MUL) { *v = v_mul_c64; return true; }
      return false;
    case CJ_C128:
      if (rop == R_ADD) { *v = v_add_c128; return true; }
      if (rop == R_MUL) { *v = v_mul_c128; return true; }
      return false;
    default: return false;
  }
#undef CASE
}

/* ======================================================================== index spaces */

typedef struct space {
  int32_t rank;
  int64_t dims[CJ_MAX_RANK];
  int64_t str[CJ_MAX_RANK]; /* bytes */
} space;

static void space_push(space *s, int64_t dim, int64_t str) {
  if (dim == 1) return;
  if (s->rank > 0 && s->str[s->rank - 1] == str * dim) {
    s->dims[s->rank - 1] *= dim;
    s->str[s->rank - 1] = str;
    return;
  }
  s->dims[s->rank] = dim;
  s->str[s->rank] = str;
  s->rank++;
}

/* byte offset of linear index i in space s */
static int64_t space_off(const space *s, int64_t i) {
  int64_t off = 0;
  for (int32_t d = s->rank - 1; d >= 0; d--) {
    off += (i % s->dims[d]) * s->str[d];
    i /= s->dims[d];
  }
  return off;
}

/* ======================================================================== fast path */

/* Accuracy: every output folds its elements in a fixed tree, never in one long running chain.
 * Kept innermost dim ("vertical"): outputs go in chunks of RV_BYTES of accumulators (256 f32:
 * whole cache lines of each row, few rows in flight); each chunk's reduced rows
 * are combined RV_LEAF at a time, the leaves pairwise. Reduced innermost dim ("horizontal"):
 * runs of up to RH_LEAF contiguous elements fold in RK_LANES lanes (k_reduce_kern.h), the
 * lanes and then the leaves pairwise. So an output of n elements sees about
 * RV_LEAF + log2(n) (or RH_LEAF / RK_LANES + 5 + log2(n)) roundings instead of n, as XLA's
 * tree of windows does; bf16 and f16 accumulate in f32. The tree depends only on the shape, not
 * on the thread count: results are the same with any pool. */
enum { RV_BYTES = 1024, RV_LEAF = 8, RH_LEAF = 512, RACC_MAX = 16, RSPLIT_DEPTH = 5,
       RH_GROUP = RV_BYTES / RACC_MAX };
/* a computed input (input fusion) goes in wider chunks: its runs are computed one row of a
 * chunk at a call, and 1 KiB calls cost more than their elements; the accumulator arrays
 * hold either */
enum { RVF_BYTES = 4096, RVA_BYTES = RVF_BYTES };
_Static_assert((int)RH_GROUP <= (int)RK_HROWS, "a group of outputs is one hrows call");

typedef struct fast_params {
  space kept, red;   /* input strides; kept in output order */
  int esize;
  bool vertical;     /* innermost input dim kept (stride esize, last of kept) */
  int64_t vlen;      /* vertical: the innermost kept run */
  int64_t nred;      /* elements folded into each output */
  int64_t vchunk;    /* vertical: outputs per chunk (RV_BYTES of accumulators; RVF_BYTES) */
  const rk_fns *f;
  int64_t nout;
  /* horizontal: the reduced space as runs */
  space ored;        /* the reduced dims but the innermost */
  int64_t run, rstr; /* the innermost reduced dim: length, byte stride */
  /* vertical, planned from a short contiguous innermost reduced run (fold > 1) beside a kept
   * dim: kept's innermost entry covers kept dim x run, red the other reduced dims; each chunk
   * accumulates vertically over those lanes, then every `fold` adjacent lanes (one output's
   * run) combine pairwise (fast_fin) */
  int64_t fold;
  cj_ew_src src;     /* src.prog: the input is computed (input fusion), not read */
} fast_params;

typedef struct fast_run {
  const fast_params *p;
  cj_exec_ctx *ctx;
  char *out;
  const char *in, *init;
  int64_t nchunks; /* vertical: chunks per output row */
  char *sin[CJ_EW_SRC_MAX_IN]; /* a computed input's sources */
} fast_run;

/* Input fusion: the input's elements come from cj_ew_src_eval in runs of at most RSRC_BYTES,
 * folded by the same kernels in the same tree as a stored input's (the same bits). */
enum { RSRC_BYTES = 16384 };
_Static_assert((int)RH_LEAF * 16 <= (int)RSRC_BYTES && (int)RVF_BYTES <= (int)RSRC_BYTES,
               "a leaf's run fits");

/* the n elements at byte offset `off` of the input (row-major): in place, or computed into tmp */
static const char *in_run(const fast_run *R, int64_t off, int64_t n, char *tmp) {
  const fast_params *p = R->p;
  if (!p->src.prog) return R->in + off;
  cj_ew_src_eval(p->src.prog, R->ctx, R->sin, off / p->esize, n, tmp);
  return tmp;
}

/* ---- vertical: rows [r0, r1) of the reduced space, n elements at offset `boff` of each ---- */
static void v_leaf(const fast_run *R, int64_t boff, int64_t r0, int64_t r1, void *acc,
                   int64_t n) {
  const fast_params *p = R->p;
  const space *rs = &p->red;
  int64_t inner = rs->rank ? rs->dims[rs->rank - 1] : 1;
  int64_t istr = rs->rank ? rs->str[rs->rank - 1] : 0;
  bool first = true;
  _Alignas(64) char tmp[RVA_BYTES];
  for (int64_t r = r0; r < r1;) {
    int64_t e = (r / inner + 1) * inner;
    if (e > r1) e = r1;
    int64_t off = boff + space_off(rs, r);
    if (p->src.prog) { /* computed rows: as many at a time as tmp holds when they are
                          * adjacent (a narrow kept block: one row at a time cost batch-norm
                          * statistics ~2x XLA's time), else one */
      int64_t rb = n * p->esize, per = istr == rb ? (int64_t)sizeof tmp / rb : 1;
      for (int64_t k = 0; k < e - r;) {
        int64_t c = e - r - k < per ? e - r - k : per;
        const char *x = in_run(R, off + k * istr, c * n, tmp);
        if (first) {
          p->f->vload(acc, x, n);
          if (c > 1) p->f->vacc(acc, x + rb, n, c - 1, rb);
          first = false;
        } else {
          p->f->vacc(acc, x, n, c, rb);
        }
        k += c;
      }
    } else if (first) {
      const char *x = R->in + off;
      p->f->vload(acc, x, n);
      if (e - r > 1) p->f->vacc(acc, x + istr, n, e - r - 1, istr);
      first = false;
    } else {
      p->f->vacc(acc, R->in + off, n, e - r, istr);
    }
    r = e;
  }
}

static bool v_is_leaf(int64_t r0, int64_t r1) { return r1 - r0 <= RV_LEAF; }
static int64_t v_split(int64_t r0, int64_t r1) {
  int64_t h = (r1 - r0) / 2;
  return r0 + (h + RV_LEAF - 1) / RV_LEAF * RV_LEAF;
}

static void v_pair(const fast_run *R, int64_t boff, int64_t r0, int64_t r1, void *acc,
                   int64_t n) {
  if (v_is_leaf(r0, r1)) {
    v_leaf(R, boff, r0, r1, acc, n);
    return;
  }
  int64_t mid = v_split(r0, r1);
  v_pair(R, boff, r0, mid, acc, n);
  _Alignas(64) char tmp[RVA_BYTES];
  v_pair(R, boff, mid, r1, tmp, n);
  R->p->f->vcomb(acc, tmp, n);
}

/* ---- horizontal: elements [i0, i1) of the reduced space, runs of p->run ---- */
static bool h_is_leaf(const fast_params *p, int64_t i0, int64_t i1) {
  return i0 / p->run == (i1 - 1) / p->run && i1 - i0 <= RH_LEAF;
}
static int64_t h_split(const fast_params *p, int64_t i0, int64_t i1) {
  int64_t run = p->run, q0 = i0 / run, q1 = (i1 - 1) / run;
  if (q0 != q1) { /* at a run boundary near the middle */
    int64_t mid = (i0 + (i1 - i0) / 2) / run * run;
    return mid <= i0 ? (q0 + 1) * run : mid;
  }
  int64_t h = (i1 - i0) / 2;
  return i0 + (h + RH_LEAF - 1) / RH_LEAF * RH_LEAF;
}
static void h_leaf(const fast_run *R, int64_t boff, int64_t i0, int64_t i1, void *out) {
  const fast_params *p = R->p;
  int64_t q = i0 / p->run;
  _Alignas(64) char tmp[RSRC_BYTES];
  /* a computed input's runs are contiguous (rstr == esize: the innermost dim is reduced) */
  const char *x = in_run(R, boff + space_off(&p->ored, q) + (i0 - q * p->run) * p->rstr,
                         i1 - i0, tmp);
  p->f->hfold(out, x, i1 - i0, p->rstr);
}
static void h_pair(const fast_run *R, int64_t boff, int64_t i0, int64_t i1, void *out) {
  const fast_params *p = R->p;
  if (h_is_leaf(p, i0, i1)) {
    h_leaf(R, boff, i0, i1, out);
    return;
  }
  int64_t mid = h_split(p, i0, i1);
  h_pair(R, boff, i0, mid, out);
  _Alignas(16) char tmp[RACC_MAX];
  h_pair(R, boff, mid, i1, tmp);
  p->f->vcomb(out, tmp, 1);
}

/* horizontal outputs [g, g + m) whose runs are at one stride ks: their folds side by side */
static void h_group(const fast_run *R, int64_t g, int64_t m, int64_t ks, bool rows, void *acc) {
  const fast_params *p = R->p;
  int64_t es = p->esize, ab = p->f->abytes;
  if (!p->src.prog || ks != p->run * es) { /* in place (a computed input: one run at a time) */
    int64_t step = p->src.prog ? 1 : m;
    _Alignas(64) char tmp[RSRC_BYTES];
    for (int64_t k = 0; k < m; k += step) {
      int64_t mm = m - k < step ? m - k : step;
      const char *x = in_run(R, (g + k) * ks, p->run, tmp);
      if (rows)
        p->f->hrows((char *)acc + k * ab, x, p->run, mm, ks);
      else
        p->f->hshort((char *)acc + k * ab, x, p->run, mm, ks, p->rstr);
    }
    return;
  }
  /* computed, contiguous runs: as many whole runs a call as fit */
  int64_t per = RSRC_BYTES / (p->run * es);
  _Alignas(64) char tmp[RSRC_BYTES];
  for (int64_t k = 0; k < m; k += per) {
    int64_t mm = m - k < per ? m - k : per;
    const char *x = in_run(R, (g + k) * ks, mm * p->run, tmp);
    if (rows)
      p->f->hrows((char *)acc + k * ab, x, p->run, mm, ks);
    else
      p->f->hshort((char *)acc + k * ab, x, p->run, mm, ks, p->rstr);
  }
}

/* A stored input whose reduced space is one contiguous run of a few leaves (a global pool over
 * the two minor dims: 1024 elements, two leaves) and whose outputs are at one stride: the leaves
 * of a group of outputs fold as rows (hrows: several outputs' chains in flight, where hfold runs
 * one output at a time), then each output's leaves combine in h_pair's tree, across the group
 * at once (the same tree for every output: the same bits as h_pair's). */
enum { RH_LEAVES_MAX = 8 };
static bool h_leaf_rows(const fast_params *p, bool kstride) {
  return !p->src.prog && p->ored.rank == 0 && p->rstr == p->esize && kstride &&
         p->run > RH_LEAF && p->run <= RH_LEAVES_MAX * RH_LEAF;
}
static void h_tree_rows(const fast_params *p, char (*leaf)[RH_GROUP * RACC_MAX], int64_t m,
                        int64_t i0, int64_t i1, void *acc) {
  if (h_is_leaf(p, i0, i1)) {
    memcpy(acc, leaf[i0 / RH_LEAF], (size_t)(m * p->f->abytes));
    return;
  }
  int64_t mid = h_split(p, i0, i1);
  h_tree_rows(p, leaf, m, i0, mid, acc);
  _Alignas(64) char tmp[RH_GROUP * RACC_MAX];
  h_tree_rows(p, leaf, m, mid, i1, tmp);
  p->f->vcomb(acc, tmp, m);
}
static void h_group_leaves(const fast_run *R, int64_t g, int64_t m, int64_t ks, void *acc) {
  const fast_params *p = R->p;
  int64_t es = p->esize, ab = p->f->abytes;
  _Alignas(64) char leaf[RH_LEAVES_MAX][RH_GROUP * RACC_MAX];
  const char *x = R->in + g * ks;
  for (int64_t l = 0, i = 0; i < p->run; l++, i += RH_LEAF) {
    int64_t n = p->run - i < RH_LEAF ? p->run - i : RH_LEAF;
    if (n >= 16) {
      p->f->hrows(leaf[l], x + i * es, n, m, ks);
    } else {
      for (int64_t k = 0; k < m; k++) p->f->hfold(leaf[l] + k * ab, x + k * ks + i * es, n, es);
    }
  }
  h_tree_rows(p, leaf, m, 0, p->run, acc);
}

/* lanes [i0, i1) of acc (one output's run) combined pairwise into out */
static void fold_lanes(const fast_params *p, const char *acc, int64_t i0, int64_t i1,
                       void *out) {
  int64_t ab = p->f->abytes;
  if (i1 - i0 == 1) {
    memmove(out, acc + i0 * ab, (size_t)ab); /* (out may be lane i0) */
    return;
  }
  int64_t mid = i0 + (i1 - i0) / 2;
  fold_lanes(p, acc, i0, mid, out);
  _Alignas(16) char tmp[RACC_MAX];
  fold_lanes(p, acc, mid, i1, tmp);
  p->f->vcomb(out, tmp, 1);
}

/* vertical results: the n accumulators of acc (p->fold lanes an output when folded) into the
 * outputs at element index o of out */
static void fast_fin(const fast_params *p, char *out, const char *init, char *acc, int64_t o,
                     int64_t n) {
  if (p->fold > 1) {
    int64_t ab = p->f->abytes, m = n / p->fold;
    for (int64_t j = 0; j < m; j++) /* in place: lane j * fold is read before j is written */
      fold_lanes(p, acc, j * p->fold, (j + 1) * p->fold, acc + j * ab);
    o /= p->fold;
    n = m;
  }
  p->f->fin(out + o * p->esize, init, acc, n);
}

/* units of work: vertical (output row, chunk) pairs; horizontal outputs */
static void fast_range(fast_run *R, int64_t u0, int64_t u1) {
  const fast_params *p = R->p;
  int es = p->esize;
  _Alignas(64) char acc[RVA_BYTES];
  if (p->vertical) {
    space outer = p->kept;
    outer.rank--; /* drop the innermost run */
    for (int64_t u = u0; u < u1; u++) {
      int64_t o = u / R->nchunks, c = (u % R->nchunks) * p->vchunk;
      int64_t n = p->vlen - c < p->vchunk ? p->vlen - c : p->vchunk;
      v_pair(R, space_off(&outer, o) + c * es, 0, p->nred, acc, n);
      fast_fin(p, R->out, R->init, acc, o * p->vlen + c, n);
    }
    return;
  }
  /* outputs in groups of RH_GROUP: their folds side by side in acc, rounded together */
  int32_t ab = p->f->abytes;
  bool one_run = p->ored.rank == 0 && p->run <= RH_LEAF, kstride = p->kept.rank <= 1;
  int64_t ks = p->kept.rank == 1 ? p->kept.str[0] : 0;
  bool rows = one_run && kstride && p->rstr == es && p->run >= 16;
  /* runs hfold folds in index order (short or strided), at one stride: across the outputs */
  bool cols = one_run && kstride && (p->run < 16 || p->rstr != es);
  bool leaves = h_leaf_rows(p, kstride);
  for (int64_t g = u0; g < u1; g += RH_GROUP) {
    int64_t m = u1 - g < RH_GROUP ? u1 - g : RH_GROUP;
    if (leaves) {
      h_group_leaves(R, g, m, ks, acc);
      p->f->fin(R->out + g * es, R->init, acc, m);
      continue;
    }
    if (rows || cols) { /* runs at one stride: their folds side by side */
      h_group(R, g, m, ks, rows, acc);
      p->f->fin(R->out + g * es, R->init, acc, m);
      continue;
    }
    for (int64_t k = 0; k < m; k++) {
      int64_t o = g + k;
      int64_t boff = kstride ? o * ks : space_off(&p->kept, o);
      if (one_run)
        h_leaf(R, boff, 0, p->run, acc + k * ab);
      else
        h_pair(R, boff, 0, p->nred, acc + k * ab);
    }
    p->f->fin(R->out + g * es, R->init, acc, m);
  }
}

static void fast_body(void *ctx, int64_t b, int64_t e) { fast_range(ctx, b, e); }

/* One unit of much work (e.g. the sum of a whole array): the nodes of its tree at depth
 * RSPLIT_DEPTH (or leaves above it) run on the pool, and their partial results are combined
 * in the tree's order, so the result is the one the serial fold gives. */
enum { RSPLIT_MAX = 1 << RSPLIT_DEPTH };
typedef struct split_run {
  const fast_run *R;
  int64_t boff;
  int64_t n; /* vertical: elements of the chunk */
  int64_t lo[RSPLIT_MAX], hi[RSPLIT_MAX];
  int32_t nparts, next;
  _Alignas(64) char partial[RSPLIT_MAX][RVA_BYTES];
} split_run;

static bool is_leaf(const fast_params *p, int64_t a, int64_t b) {
  return p->vertical ? v_is_leaf(a, b) : h_is_leaf(p, a, b);
}
static int64_t split_at(const fast_params *p, int64_t a, int64_t b) {
  return p->vertical ? v_split(a, b) : h_split(p, a, b);
}
static void split_collect(split_run *S, int64_t a, int64_t b, int depth) {
  const fast_params *p = S->R->p;
  if (depth == RSPLIT_DEPTH || is_leaf(p, a, b)) {
    S->lo[S->nparts] = a;
    S->hi[S->nparts++] = b;
    return;
  }
  int64_t mid = split_at(p, a, b);
  split_collect(S, a, mid, depth + 1);
  split_collect(S, mid, b, depth + 1);
}
static void split_body(void *ctx, int64_t b, int64_t e) {
  split_run *S = ctx;
  const fast_params *p = S->R->p;
  for (int64_t k = b; k < e; k++) {
    if (p->vertical)
      v_pair(S->R, S->boff, S->lo[k], S->hi[k], S->partial[k], S->n);
    else
      h_pair(S->R, S->boff, S->lo[k], S->hi[k], S->partial[k]);
  }
}
static void split_combine(split_run *S, int64_t a, int64_t b, int depth, void *out) {
  const fast_params *p = S->R->p;
  int64_t n = p->vertical ? S->n : 1;
  if (depth == RSPLIT_DEPTH || is_leaf(p, a, b)) {
    memcpy(out, S->partial[S->next++], (size_t)(n * p->f->abytes));
    return;
  }
  int64_t mid = split_at(p, a, b);
  split_combine(S, a, mid, depth + 1, out);
  _Alignas(64) char tmp[RVA_BYTES];
  split_combine(S, mid, b, depth + 1, tmp);
  p->f->vcomb(out, tmp, n);
}

/* the units of work of p (vertical: sets R->nchunks) and the elements folded per unit */
static int64_t fast_units(const fast_params *p, fast_run *R, int64_t *per) {
  *per = p->nred;
  if (!p->vertical) return p->nout;
  R->nchunks = (p->vlen + p->vchunk - 1) / p->vchunk;
  *per = p->nred * (p->vlen < p->vchunk ? p->vlen : p->vchunk);
  return p->nout / p->vlen * R->nchunks;
}

/* one unit of much work: its tree's nodes at depth RSPLIT_DEPTH on the pool; false when that
 * could not be set up (then the caller folds it serially) */
static void split_setup(split_run *S, const fast_run *R) {
  const fast_params *p = R->p;
  S->R = R;
  S->n = p->vertical ? p->vlen : 1;
  S->boff = space_off(&p->kept, 0);
  S->nparts = S->next = 0;
  split_collect(S, 0, p->nred, 0);
}
static bool fast_split(cj_exec_ctx *ctx, fast_run *R) {
  const fast_params *p = R->p;
  split_run *S = malloc(sizeof *S);
  if (!S) return false;
  split_setup(S, R);
  cj_pool_parallel_for(ctx->pool, S->nparts, 1, split_body, S);
  _Alignas(64) char acc[RVA_BYTES];
  split_combine(S, 0, p->nred, 0, acc);
  if (p->vertical)
    fast_fin(p, R->out, R->init, acc, 0, S->n);
  else
    p->f->fin(R->out, R->init, acc, 1);
  free(S);
  return true;
}

/* the whole reduction R (its out, in or sources, and init set) */
static void fast_exec(cj_exec_ctx *ctx, fast_run *R) {
  const fast_params *p = R->p;
  if (p->nout == 0) return;
  if (p->nred == 0) { /* empty reduction: every output is the init value */
    for (int64_t o = 0; o < p->nout; o++) memcpy(R->out + o * p->esize, R->init, (size_t)p->esize);
    return;
  }
  int64_t per, nunits = fast_units(p, R, &per);
  int64_t work = nunits * per;
  bool pool = ctx->pool && cj_pool_size(ctx->pool) > 1 && work >= CJ_PAR_MIN_ELEMS * 4;
  if (pool && nunits == 1 && fast_split(ctx, R)) return;
  if (pool && nunits > 1) {
    int64_t grain = CJ_PAR_MIN_ELEMS / (per ? per : 1);
    cj_pool_parallel_for(ctx->pool, nunits, grain < 1 ? 1 : grain, fast_body, R);
  } else {
    fast_range(R, 0, nunits);
  }
}

static CJ_MUST_USE cj_status k_reduce_fast(cj_exec_ctx *ctx, const cj_step *st) {
  const fast_params *p = st->params;
  fast_run R = {.p = p, .ctx = ctx, .out = CJ_PTR(ctx, st->out[0]), .nchunks = 1};
  if (p->src.prog) { /* in = [init, the source's inputs] */
    R.init = CJ_PTR(ctx, st->in[0]);
    for (int32_t k = 0; k < p->src.nin; k++) R.sin[k] = CJ_PTR(ctx, st->in[1 + k]);
  } else {
    R.in = CJ_PTR(ctx, st->in[0]);
    R.init = CJ_PTR(ctx, st->in[1]);
  }
  fast_exec(ctx, &R);
  return NULL;
}

/* ---- sibling reductions: several reductions over the same dims of inputs of one shape and
 * element type, in one step: sum, max, ... of one array, and reductions of elementwise
 * functions of it (BatchNorm's statistics: sum(x) and sum(x * x), the square computed from x
 * as it is read: cj_lw_ew_take), or the inputs of a variadic reduce whose body is one combiner
 * per input. Each member keeps its own kernels and tree (the bits of its own step: every
 * kernel acts lane by lane, so the shared chunk width changes no result); the input is read
 * from memory once and from the L1 cache by the others:
 *  - "tree": the members walk their common tree together, every member over a leaf (a few
 *    rows of a chunk, a run of at most RH_LEAF) before the next leaf. Vertical reductions
 *    (a whole BatchNorm is one unit of all N*H*W rows) and horizontal units too large for the
 *    L1 cache;
 *  - "blocks": block by block of units (outputs), every member over a block before the next
 *    (short rows: each member keeps its multi-output kernels). ---- */
enum { RMULTI_MAX = 8, RMULTI_BYTES = 16384 };

typedef struct multi_params {
  int32_t n;                            /* reductions, 2..RMULTI_MAX */
  const fast_params *p[RMULTI_MAX];     /* the same dims, shape and element type */
  int32_t at[RMULTI_MAX];               /* in-slot of member k's input (computed: its first
                                         * source input) */
  int64_t mb;                           /* tree: bytes of a member's accumulators in a block */
  bool tree;
  /* slots: in = [init 0 .. init n-1, the members' inputs], out = [result 0 .. result n-1] */
} multi_params;

typedef struct multi_run {
  int32_t n;
  int64_t mb;
  fast_run R[RMULTI_MAX];
  int64_t nunits, block; /* units per block */
} multi_run;

static void multi_body(void *ctx, int64_t b0, int64_t b1) {
  multi_run *M = ctx;
  for (int64_t b = b0; b < b1; b++) {
    int64_t u0 = b * M->block, u1 = u0 + M->block < M->nunits ? u0 + M->block : M->nunits;
    for (int32_t k = 0; k < M->n; k++) fast_range(&M->R[k], u0, u1);
  }
}

/* v_pair for every member at once: member k's accumulators at acc + k * mb */
static void v_pair_multi(const multi_run *M, int64_t boff, int64_t r0, int64_t r1, char *acc,
                         int64_t n) {
  if (v_is_leaf(r0, r1)) {
    for (int32_t k = 0; k < M->n; k++) v_leaf(&M->R[k], boff, r0, r1, acc + k * M->mb, n);
    return;
  }
  int64_t mid = v_split(r0, r1);
  v_pair_multi(M, boff, r0, mid, acc, n);
  _Alignas(64) char tmp[RVA_BYTES];
  v_pair_multi(M, boff, mid, r1, tmp, n);
  for (int32_t k = 0; k < M->n; k++) M->R[k].p->f->vcomb(acc + k * M->mb, tmp + k * M->mb, n);
}

/* h_pair for every member at once: member k's accumulator at out + k * RACC_MAX */
static void h_pair_multi(const multi_run *M, int64_t boff, int64_t i0, int64_t i1, char *out) {
  const fast_params *p = M->R[0].p;
  if (h_is_leaf(p, i0, i1)) {
    for (int32_t k = 0; k < M->n; k++) h_leaf(&M->R[k], boff, i0, i1, out + k * RACC_MAX);
    return;
  }
  int64_t mid = h_split(p, i0, i1);
  h_pair_multi(M, boff, i0, mid, out);
  _Alignas(16) char tmp[RMULTI_MAX * RACC_MAX];
  h_pair_multi(M, boff, mid, i1, tmp);
  for (int32_t k = 0; k < M->n; k++) M->R[k].p->f->vcomb(out + k * RACC_MAX, tmp + k * RACC_MAX, 1);
}

/* the members' pairs over [a, b) of unit boff's tree into acc (their layout as above) */
static void pair_multi(const multi_run *M, int64_t boff, int64_t a, int64_t b, char *acc,
                       int64_t n) {
  if (M->R[0].p->vertical)
    v_pair_multi(M, boff, a, b, acc, n);
  else
    h_pair_multi(M, boff, a, b, acc);
}

/* the members' results of a unit from acc: vertical at element o, horizontal output o */
static void fin_multi(const multi_run *M, const char *acc, int64_t o, int64_t n) {
  for (int32_t k = 0; k < M->n; k++) {
    const fast_run *R = &M->R[k];
    char *a = (char *)acc + k * M->mb;
    if (R->p->vertical)
      fast_fin(R->p, R->out, R->init, a, o, n);
    else
      R->p->f->fin(R->out + o * R->p->esize, R->init, a, 1);
  }
}

/* tree: units [u0, u1), the members together */
static void multi_tree_range(const multi_run *M, int64_t u0, int64_t u1) {
  const fast_params *p = M->R[0].p;
  _Alignas(64) char acc[RVA_BYTES];
  space outer = p->kept;
  if (p->vertical) outer.rank--; /* drop the innermost run */
  for (int64_t u = u0; u < u1; u++) {
    if (p->vertical) {
      int64_t o = u / M->R[0].nchunks, c = (u % M->R[0].nchunks) * p->vchunk;
      int64_t n = p->vlen - c < p->vchunk ? p->vlen - c : p->vchunk;
      v_pair_multi(M, space_off(&outer, o) + c * p->esize, 0, p->nred, acc, n);
      fin_multi(M, acc, o * p->vlen + c, n);
    } else {
      h_pair_multi(M, space_off(&p->kept, u), 0, p->nred, acc);
      fin_multi(M, acc, u, 1);
    }
  }
}

static void multi_tree_body(void *ctx, int64_t b, int64_t e) { multi_tree_range(ctx, b, e); }

/* tree, one unit of much work: fast_split's parts, every member over each part */
typedef struct multi_split {
  split_run S; /* S.R: member 0 (the tree's shape) */
  const multi_run *M;
} multi_split;

static void multi_split_body(void *ctx, int64_t b, int64_t e) {
  multi_split *X = ctx;
  for (int64_t k = b; k < e; k++)
    pair_multi(X->M, X->S.boff, X->S.lo[k], X->S.hi[k], X->S.partial[k], X->S.n);
}

static void multi_split_combine(multi_split *X, int64_t a, int64_t b, int depth, char *out) {
  split_run *S = &X->S;
  const multi_run *M = X->M;
  const fast_params *p = S->R->p;
  int64_t n = p->vertical ? S->n : 1;
  if (depth == RSPLIT_DEPTH || is_leaf(p, a, b)) {
    memcpy(out, S->partial[S->next++], (size_t)(M->n * M->mb));
    return;
  }
  int64_t mid = split_at(p, a, b);
  multi_split_combine(X, a, mid, depth + 1, out);
  _Alignas(64) char tmp[RVA_BYTES];
  multi_split_combine(X, mid, b, depth + 1, tmp);
  for (int32_t k = 0; k < M->n; k++) M->R[k].p->f->vcomb(out + k * M->mb, tmp + k * M->mb, n);
}

static bool multi_split_run(cj_exec_ctx *ctx, const multi_run *M) {
  const fast_params *p = M->R[0].p;
  multi_split *X = malloc(sizeof *X);
  if (!X) return false;
  split_run *S = &X->S;
  X->M = M;
  split_setup(S, &M->R[0]); /* (member 0: the tree's shape) */
  cj_pool_parallel_for(ctx->pool, S->nparts, 1, multi_split_body, X);
  _Alignas(64) char acc[RVA_BYTES];
  multi_split_combine(X, 0, p->nred, 0, acc);
  fin_multi(M, acc, 0, S->n);
  free(X);
  return true;
}

static CJ_MUST_USE cj_status k_reduce_multi(cj_exec_ctx *ctx, const cj_step *st) {
  const multi_params *m = st->params;
  multi_run M = {.n = m->n, .mb = m->mb};
  for (int32_t k = 0; k < m->n; k++) {
    const fast_params *p = m->p[k];
    fast_run *R = &M.R[k];
    *R = (fast_run){.p = p, .ctx = ctx, .out = CJ_PTR(ctx, st->out[k]),
                    .init = CJ_PTR(ctx, st->in[k]), .nchunks = 1};
    if (p->src.prog)
      for (int32_t j = 0; j < p->src.nin; j++) R->sin[j] = CJ_PTR(ctx, st->in[m->at[k] + j]);
    else
      R->in = CJ_PTR(ctx, st->in[m->at[k]]);
  }
  const fast_params *p = m->p[0];
  int64_t per = 1;
  M.nunits = p->nout > 0 && p->nred > 0 ? fast_units(p, &M.R[0], &per) : 0;
  bool same = M.nunits > 0;
  for (int32_t k = 1; k < m->n && same; k++) {
    int64_t per_k;
    same = fast_units(m->p[k], &M.R[k], &per_k) == M.nunits && per_k == per;
  }
  if (!same || (!m->tree && M.nunits == 1)) { /* nothing to share (not planned), or one unit
                                                * of stored inputs (the pool splits its tree) */
    for (int32_t k = 0; k < m->n; k++) fast_exec(ctx, &M.R[k]);
    return NULL;
  }
  bool pool = ctx->pool && cj_pool_size(ctx->pool) > 1 &&
              M.nunits * per * m->n >= CJ_PAR_MIN_ELEMS * 4;
  if (m->tree) {
    if (pool && M.nunits == 1 && multi_split_run(ctx, &M)) return NULL;
    if (pool && M.nunits > 1) {
      int64_t grain = CJ_PAR_MIN_ELEMS / (per * m->n);
      cj_pool_parallel_for(ctx->pool, M.nunits, grain < 1 ? 1 : grain, multi_tree_body, &M);
    } else {
      multi_tree_range(&M, 0, M.nunits);
    }
    return NULL;
  }
  int64_t ub = per * p->esize;
  M.block = ub >= RMULTI_BYTES ? 1 : RMULTI_BYTES / ub;
  int64_t nblocks = (M.nunits + M.block - 1) / M.block;
  if (pool && nblocks > 1) {
    int64_t grain = CJ_PAR_MIN_ELEMS / (per * M.block);
    cj_pool_parallel_for(ctx->pool, nblocks, grain < 1 ? 1 : grain, multi_body, &M);
  } else {
    multi_body(&M, 0, nblocks);
  }
  return NULL;
}

/* ======================================================================== general path */

typedef struct gen_params {
  int32_t n;          /* number of inputs */
  space kept, red;    /* element-index spaces (strides in elements) */
  int64_t nout, nred;
  int32_t *in_es;     /* input element bytes */
  int32_t *body_es;   /* body argument element bytes */
  cj_ew_fn *cvt;      /* input -> body type conversions (NULL = same type) */
  cj_ew_aux *cvt_aux;
  cj_plan body;
  const cj_lw_group *grp; /* the body's buffers: copies for concurrent runs */
  int64_t lanes;          /* > 1: the body runs on vectors of `lanes` output positions */
  /* slots in the step: in = [inputs n][inits n][acc n][x n][ret n][stage n], out = results n;
   * stage (lanes only): the gathered inputs before their conversion to the body's type */
} gen_params;

/* outputs [o0, o1): inputs, inits and results through `outer`, the body's buffers (acc, x,
 * ret and everything its plan uses) through `inner` */
static CJ_MUST_USE cj_status gen_range(const cj_exec_ctx *outer, cj_exec_ctx *inner, const cj_step *st,
                           int64_t o0, int64_t o1) {
  const gen_params *p = st->params;
  int32_t n = p->n;
  const cj_slot *in = st->in, *init = st->in + n, *acc = st->in + 2 * n, *x = st->in + 3 * n,
                *ret = st->in + 4 * n;
  for (int64_t o = o0; o < o1; o++) {
    int64_t ko = space_off(&p->kept, o);
    for (int32_t i = 0; i < n; i++) {
      char *a = CJ_PTR(inner, acc[i]);
      const char *iv = CJ_PTR(outer, init[i]);
      if (p->cvt[i])
        p->cvt[i](a, iv, NULL, NULL, 1, &p->cvt_aux[i]);
      else
        memcpy(a, iv, (size_t)p->body_es[i]);
    }
    for (int64_t r = 0; r < p->nred; r++) {
      int64_t off = ko + space_off(&p->red, r);
      for (int32_t i = 0; i < n; i++) {
        char *xv = CJ_PTR(inner, x[i]);
        const char *src = CJ_PTR(outer, in[i]) + off * p->in_es[i];
        if (p->cvt[i])
          p->cvt[i](xv, src, NULL, NULL, 1, &p->cvt_aux[i]);
        else
          memcpy(xv, src, (size_t)p->in_es[i]);
      }
      cj_status s = cj_plan_run(inner, &p->body);
      if (s) return s;
      for (int32_t i = 0; i < n; i++) {
        char *a = CJ_PTR(inner, acc[i]);
        const char *rv = CJ_PTR(inner, ret[i]);
        if (a != rv) memmove(a, rv, (size_t)p->body_es[i]);
      }
    }
    for (int32_t i = 0; i < n; i++)
      memcpy(CJ_PTR(outer, st->out[i]) + o * p->body_es[i], CJ_PTR(inner, acc[i]),
             (size_t)p->body_es[i]);
  }
  return NULL;
}

/* the body on vectors: outputs [o0, o1) in chunks of `lanes`, every body value a vector whose
 * lane l belongs to output o0 + l (lanes past the end repeat lane 0's input) */
static CJ_MUST_USE cj_status lanes_range(const cj_exec_ctx *outer, cj_exec_ctx *inner, const cj_step *st,
                             int64_t o0, int64_t o1) {
  const gen_params *p = st->params;
  int32_t n = p->n;
  int64_t K = p->lanes;
  const cj_slot *in = st->in, *init = st->in + n, *acc = st->in + 2 * n, *x = st->in + 3 * n,
                *ret = st->in + 4 * n, *stage = st->in + 5 * n;
  for (int64_t c0 = o0; c0 < o1; c0 += K) {
    int64_t m = o1 - c0 < K ? o1 - c0 : K;
    for (int32_t i = 0; i < n; i++) {
      char *a = CJ_PTR(inner, acc[i]);
      const char *iv = CJ_PTR(outer, init[i]);
      int es = p->body_es[i];
      if (p->cvt[i])
        p->cvt[i](a, iv, NULL, NULL, 1, &p->cvt_aux[i]);
      else
        memcpy(a, iv, (size_t)es);
      for (int64_t l = 1; l < K; l++) memcpy(a + l * es, a, (size_t)es);
    }
    for (int64_t r = 0; r < p->nred; r++) {
      int64_t roff = space_off(&p->red, r);
      for (int32_t i = 0; i < n; i++) {
        int ies = p->in_es[i];
        char *dst = p->cvt[i] ? CJ_PTR(inner, stage[i]) : CJ_PTR(inner, x[i]);
        const char *src = CJ_PTR(outer, in[i]);
        if (p->kept.rank == 1) { /* one stride: typed strided copies */
          int64_t ks = p->kept.str[0];
          const char *s0 = src + (c0 * ks + roff) * ies;
          switch (ies) {
#define GATHER(T)                                                                       \
  for (int64_t l = 0; l < m; l++) ((T *)dst)[l] = ((const T *)s0)[l * ks];             \
  break;
            case 1: GATHER(uint8_t)
            case 2: GATHER(uint16_t)
            case 4: GATHER(uint32_t)
            case 8: GATHER(uint64_t)
#undef GATHER
            default:
              for (int64_t l = 0; l < m; l++) memcpy(dst + l * ies, s0 + l * ks * ies, (size_t)ies);
          }
        } else {
          for (int64_t l = 0; l < m; l++)
            memcpy(dst + l * ies, src + (space_off(&p->kept, c0 + l) + roff) * ies, (size_t)ies);
        }
        for (int64_t l = m; l < K; l++) memcpy(dst + l * ies, dst, (size_t)ies);
        if (p->cvt[i]) p->cvt[i](CJ_PTR(inner, x[i]), dst, NULL, NULL, K, &p->cvt_aux[i]);
      }
      cj_status s = cj_plan_run(inner, &p->body);
      if (s) return s;
      for (int32_t i = 0; i < n; i++) {
        char *a = CJ_PTR(inner, acc[i]);
        const char *rv = CJ_PTR(inner, ret[i]);
        if (a != rv) memmove(a, rv, (size_t)(K * p->body_es[i]));
      }
    }
    for (int32_t i = 0; i < n; i++)
      memcpy(CJ_PTR(outer, st->out[i]) + c0 * p->body_es[i], CJ_PTR(inner, acc[i]),
             (size_t)(m * p->body_es[i]));
  }
  return NULL;
}

static CJ_MUST_USE cj_status run_outputs(const cj_exec_ctx *outer, cj_exec_ctx *inner, const cj_step *st,
                             int64_t o0, int64_t o1) {
  const gen_params *p = st->params;
  return p->lanes > 1 ? lanes_range(outer, inner, st, o0, o1) : gen_range(outer, inner, st, o0, o1);
}

/* the parallel path: range k of nranges runs on copy k of the body's buffers */
typedef struct gen_par {
  const cj_exec_ctx *ctx;
  const cj_step *st;
  int64_t per;
  _Atomic(cj_status) err;
} gen_par;

enum { GEN_MAX_BASES = 512 };

static void gen_par_body(void *vp, int64_t b, int64_t e) {
  gen_par *G = vp;
  const gen_params *p = G->st->params;
  char *bases[GEN_MAX_BASES];
  for (int64_t k = b; k < e; k++) {
    if (atomic_load(&G->err)) return;
    cj_exec_ctx inner;
    if (!cj_exec_ctx_shifted(G->ctx, k * p->grp->stride, bases, &inner)) return;
    int64_t o0 = k * G->per, o1 = o0 + G->per < p->nout ? o0 + G->per : p->nout;
    cj_status s = run_outputs(G->ctx, &inner, G->st, o0, o1);
    if (s) {
      cj_status expected = NULL; /* the first error wins */
      if (!atomic_compare_exchange_strong(&G->err, &expected, s)) cj_status_ignore(s);
    }
  }
}

static CJ_MUST_USE cj_status k_reduce_general(cj_exec_ctx *ctx, const cj_step *st) {
  const gen_params *p = st->params;
  int nthreads = ctx->pool ? cj_pool_size(ctx->pool) : 1;
  int64_t work = p->nout * p->nred * (int64_t)(p->body.nsteps + 2);
  int32_t copies = p->grp ? p->grp->copies : 1;
  if (nthreads > copies) nthreads = copies;
  if (p->lanes > 1) work /= p->lanes; /* (per element it costs about a vector op's lane) */
  if (p->grp && p->grp->isolated && nthreads > 1 && p->nout >= 2 && work >= 4096 &&
      ctx->nbases > 0 && ctx->nbases <= GEN_MAX_BASES) {
    int64_t nranges = p->nout < nthreads ? p->nout : nthreads;
    int64_t per = (p->nout + nranges - 1) / nranges;
    if (p->lanes > 1) per = (per + p->lanes - 1) / p->lanes * p->lanes; /* whole chunks */
    gen_par G = {ctx, st, per, NULL};
    nranges = (p->nout + G.per - 1) / G.per;
    cj_pool_parallel_for(ctx->pool, nranges, 1, gen_par_body, &G);
    return atomic_load(&G.err);
  }
  return run_outputs(ctx, ctx, st, 0, p->nout);
}

/* ======================================================================== argmax / argmin */

/* The variadic reduce JAX writes for argmax/argmin (lax.argmax_p's lowering, the same in JAX
 * 0.7 and 0.12) has this body, with (a, ia) the accumulator and (b, ib) the element:
 *   pick   = compare(GT, a, b) | compare(NE, a, a)        (LT for argmin)
 *   pick_i = pick | (compare(EQ, a, b) & compare(LT, ia, ib))
 *   return select(pick, a, b), select(pick_i, ia, ib)
 * That step is associative (a fold keeps the first NaN met, else the largest value with the
 * smallest index among its equals, and as value the last of those equals met): any grouping
 * that keeps the elements in order gives what the in-order fold of the general path gives,
 * bit for bit. So it runs as typed folds: across contiguous outputs at once when the kept
 * innermost dim is contiguous ("vertical"), else output by output along the reduced elements
 * in four interleaved contiguous segments (combined in order), and for few outputs with many
 * elements in ordered parts across the pool. Anything else keeps the general path. */

/* (the typed folds below are compiled at O3: their selects then vectorize) */
#pragma GCC push_options
#pragma GCC optimize("O3")

typedef void (*am_run_fn)(const char *x, const char *xi, int64_t stride, int64_t n, void *va,
                          void *ia, bool have);
typedef void (*am_comb_fn)(void *va, void *ia, const void *vb, const void *ib);
typedef struct am_fns {
  am_run_fn run;
  rk_am_rows_fn rows;
  am_comb_fn comb;
} am_fns;

static inline float am_ld_bf16(uint16_t h) { return cj_bf16_to_f32(h); }
static inline float am_ld_f16(uint16_t h) { return cj_f16_to_f32(h); }

#define AM_DEF(name, ST, IT, OP, LD)                                                        \
  static void am_comb_##name(void *va_, void *ia_, const void *vb_, const void *ib_) {      \
    ST va, vb;                                                                              \
    IT ia, ib;                                                                              \
    memcpy(&va, va_, sizeof va);                                                            \
    memcpy(&ia, ia_, sizeof ia);                                                            \
    memcpy(&vb, vb_, sizeof vb);                                                            \
    memcpy(&ib, ib_, sizeof ib);                                                            \
    AM_STEP(OP, LD, va, ia, vb, ib);                                                        \
    memcpy(va_, &va, sizeof va);                                                            \
    memcpy(ia_, &ia, sizeof ia);                                                            \
  }                                                                                         \
  AM_ROWS(name, ST, IT, OP, LD)                                                             \
  static void am_run_##name(const char *x_, const char *xi_, int64_t s, int64_t n, void *va_, \
                            void *ia_, bool have) {                                         \
    const ST *x = (const ST *)(const void *)x_;                                             \
    const IT *xi = (const IT *)(const void *)xi_;                                           \
    if (n <= 0) return;                                                                     \
    ST v;                                                                                   \
    IT i;                                                                                   \
    if (s == 1 && n >= 64) { /* four contiguous segments side by side, combined in order */ \
      int64_t q = n / 4;                                                                    \
      ST v0 = x[0], v1 = x[q], v2 = x[2 * q], v3 = x[3 * q];                                \
      IT i0 = xi[0], i1 = xi[q], i2 = xi[2 * q], i3 = xi[3 * q];                            \
      for (int64_t j = 1; j < q; j++) {                                                     \
        AM_STEP(OP, LD, v0, i0, x[j], xi[j]);                                               \
        AM_STEP(OP, LD, v1, i1, x[q + j], xi[q + j]);                                       \
        AM_STEP(OP, LD, v2, i2, x[2 * q + j], xi[2 * q + j]);                               \
        AM_STEP(OP, LD, v3, i3, x[3 * q + j], xi[3 * q + j]);                               \
      }                                                                                     \
      for (int64_t j = 4 * q; j < n; j++) AM_STEP(OP, LD, v3, i3, x[j], xi[j]);             \
      AM_STEP(OP, LD, v0, i0, v1, i1);                                                      \
      AM_STEP(OP, LD, v0, i0, v2, i2);                                                      \
      AM_STEP(OP, LD, v0, i0, v3, i3);                                                      \
      v = v0;                                                                               \
      i = i0;                                                                               \
    } else {                                                                                \
      v = x[0];                                                                             \
      i = xi[0];                                                                            \
      for (int64_t j = 1; j < n; j++) AM_STEP(OP, LD, v, i, x[j * s], xi[j * s]);           \
    }                                                                                       \
    if (have) {                                                                             \
      ST a;                                                                                 \
      IT ai;                                                                                \
      memcpy(&a, va_, sizeof a);                                                            \
      memcpy(&ai, ia_, sizeof ai);                                                          \
      AM_STEP(OP, LD, a, ai, v, i);                                                         \
      v = a;                                                                                \
      i = ai;                                                                               \
    }                                                                                       \
    memcpy(va_, &v, sizeof v);                                                              \
    memcpy(ia_, &i, sizeof i);                                                              \
  }

#define AM_ID(x) (x)
#define AM_FNAN(c) ((c) != (c))
#define AM_NONAN(c) false
#define AM_TYPE(tn, ST, LD)                      \
  AM_DEF(gt_##tn##_s32, ST, int32_t, >, LD)      \
  AM_DEF(gt_##tn##_s64, ST, int64_t, >, LD)      \
  AM_DEF(lt_##tn##_s32, ST, int32_t, <, LD)      \
  AM_DEF(lt_##tn##_s64, ST, int64_t, <, LD)
#undef AM_NAN
#define AM_NAN(c) AM_FNAN(c)
AM_TYPE(f32, float, AM_ID)
#undef AM_NAN
#define AM_NAN(c) AM_FNAN(c)
AM_TYPE(f64, double, AM_ID)
#undef AM_NAN
#define AM_NAN(c) AM_FNAN(c)
AM_TYPE(bf16, uint16_t, am_ld_bf16)
#undef AM_NAN
#define AM_NAN(c) AM_FNAN(c)
AM_TYPE(f16, uint16_t, am_ld_f16)
#undef AM_NAN
#define AM_NAN(c) AM_NONAN(c)
AM_TYPE(s8, int8_t, AM_ID)
#undef AM_NAN
#define AM_NAN(c) AM_NONAN(c)
AM_TYPE(s16, int16_t, AM_ID)
#undef AM_NAN
#define AM_NAN(c) AM_NONAN(c)
AM_TYPE(s32, int32_t, AM_ID)
#undef AM_NAN
#define AM_NAN(c) AM_NONAN(c)
AM_TYPE(s64, int64_t, AM_ID)
#undef AM_NAN
#define AM_NAN(c) AM_NONAN(c)
AM_TYPE(u8, uint8_t, AM_ID)
#undef AM_NAN
#define AM_NAN(c) AM_NONAN(c)
AM_TYPE(u16, uint16_t, AM_ID)
#undef AM_NAN
#define AM_NAN(c) AM_NONAN(c)
AM_TYPE(u32, uint32_t, AM_ID)
#undef AM_NAN
#define AM_NAN(c) AM_NONAN(c)
AM_TYPE(u64, uint64_t, AM_ID)

#pragma GCC pop_options

static bool am_lookup(cj_dtype vt, cj_dtype it, bool gt, am_fns *f) {
#define AM_F(name) (*f = (am_fns){am_run_##name, am_rows_##name, am_comb_##name}, true)
#define AM_T(tn)                                                             \
  return it == CJ_S32 ? (gt ? AM_F(gt_##tn##_s32) : AM_F(lt_##tn##_s32))     \
                      : (gt ? AM_F(gt_##tn##_s64) : AM_F(lt_##tn##_s64))
  if (it != CJ_S32 && it != CJ_S64) return false;
  switch (vt) {
    case CJ_F32: AM_T(f32);
    case CJ_F64: AM_T(f64);
    case CJ_BF16: AM_T(bf16);
    case CJ_F16: AM_T(f16);
    case CJ_S8: AM_T(s8);
    case CJ_S16: AM_T(s16);
    case CJ_S32: AM_T(s32);
    case CJ_S64: AM_T(s64);
    case CJ_U8: AM_T(u8);
    case CJ_U16: AM_T(u16);
    case CJ_U32: AM_T(u32);
    case CJ_U64: AM_T(u64);
    default: return false;
  }
#undef AM_T
#undef AM_F
}

enum { AM_CHUNK = 256, AM_MAX_PARTS = 64, AM_BLOCK = 16 };

/* n = 2: an argmax and an argmin (or two of either) of one input over the same dims, found at
 * lowering (lower_argm), run as one step: each block of the input is folded by both while it
 * is in cache, each member with its own fold (the same bits as two steps) */
typedef struct am_params {
  am_fns f[2];
  int32_t n;
  int32_t ves, ies;
  space kept, red; /* element strides */
  int64_t nout, nred;
  bool vertical; /* AM_CHUNK outputs of the kept innermost dim at a time (see lower_argm) */
  bool iota;     /* the indices are an iota along the one reduced dim: never read */
  /* slots: in = [values, indices, then per member: init value, init index],
   * out = per member: [value, index] */
} am_params;

typedef struct am_run {
  const am_params *p;
  const char *x, *xi, *iv[2], *ii[2];
  char *ov[2], *oi[2];
  /* parts (few outputs): part k folds reduced elements [k * per, ...) of output 0.. of
   * member m */
  int64_t per;
  int32_t m;
  unsigned char pv[AM_MAX_PARTS][8], pi[AM_MAX_PARTS][8];
  bool have[AM_MAX_PARTS];
} am_run;

/* fold reduced elements [r0, r1) of the output at kept offset ko into (va, ia) */
static void am_fold(const am_params *p, const am_run *R, int32_t mb, int64_t ko, int64_t r0,
                    int64_t r1, void *va, void *ia, bool have) {
  int32_t last = p->red.rank - 1;
  int64_t run = last >= 0 ? p->red.dims[last] : 1, rstr = last >= 0 ? p->red.str[last] : 1;
  for (int64_t r = r0; r < r1;) {
    int64_t len = run - r % run;
    if (len > r1 - r) len = r1 - r;
    int64_t off = ko + space_off(&p->red, r);
    p->f[mb].run(R->x + off * p->ves, R->xi + off * p->ies, rstr, len, va, ia, have);
    have = true;
    r += len;
  }
}

static void am_outputs(void *ctx, int64_t o0, int64_t o1) {
  const am_run *R = ctx;
  const am_params *p = R->p;
  for (int64_t o = o0; o < o1; o++)
    for (int32_t mb = 0; mb < p->n; mb++) {
      char *va = R->ov[mb] + o * p->ves, *ia = R->oi[mb] + o * p->ies;
      memcpy(va, R->iv[mb], (size_t)p->ves);
      memcpy(ia, R->ii[mb], (size_t)p->ies);
      am_fold(p, R, mb, space_off(&p->kept, o), 0, p->nred, va, ia, true);
    }
}

/* vertical: chunk c covers outputs [c * AM_CHUNK, ...) of one kept row, side by side */
static void am_chunks(void *ctx, int64_t c0, int64_t c1) {
  const am_run *R = ctx;
  const am_params *p = R->p;
  int32_t kl = p->kept.rank - 1;
  int64_t inner = p->kept.dims[kl], per_row = (inner + AM_CHUNK - 1) / AM_CHUNK;
  for (int64_t c = c0; c < c1; c++) {
    int64_t row = c / per_row, j0 = (c % per_row) * AM_CHUNK;
    int64_t m = inner - j0 < AM_CHUNK ? inner - j0 : AM_CHUNK;
    int64_t o = row * inner + j0;
    for (int32_t mb = 0; mb < p->n; mb++) {
      cj_fill_elems(R->ov[mb] + o * p->ves, R->iv[mb], p->ves, m);
      cj_fill_elems(R->oi[mb] + o * p->ies, R->ii[mb], p->ies, m);
    }
    int64_t ko = space_off(&p->kept, o);
    /* the reduced space as runs of rows at one stride (its innermost dim), AM_BLOCK rows at a
     * time for each member when there are two */
    int32_t rl = p->red.rank - 1;
    int64_t run = rl >= 0 ? p->red.dims[rl] : 1, rs = rl >= 0 ? p->red.str[rl] : 0;
    int64_t blk = p->n > 1 ? AM_BLOCK : run;
    for (int64_t r = 0; r < p->nred; r += run)
      for (int64_t b = 0; b < run; b += blk) {
        int64_t off = ko + space_off(&p->red, r) + b * rs, nb = run - b < blk ? run - b : blk;
        for (int32_t mb = 0; mb < p->n; mb++)
          p->f[mb].rows(R->ov[mb] + o * p->ves, R->oi[mb] + o * p->ies, R->x + off * p->ves,
                        p->iota ? NULL : R->xi + off * p->ies, p->kept.str[kl], rs * p->ves,
                        rs * p->ies, nb, r + b, m);
      }
  }
}

static void am_parts(void *ctx, int64_t k0, int64_t k1) {
  am_run *R = ctx;
  const am_params *p = R->p;
  for (int64_t k = k0; k < k1; k++) {
    int64_t r0 = k * R->per, r1 = r0 + R->per < p->nred ? r0 + R->per : p->nred;
    R->have[k] = r0 < r1;
    if (r0 < r1)
      am_fold(p, R, R->m, space_off(&p->kept, 0), r0, r1, R->pv[k], R->pi[k], false);
  }
}

static CJ_MUST_USE cj_status k_argm(cj_exec_ctx *ctx, const cj_step *st) {
  const am_params *p = st->params;
  am_run R = {.p = p, .x = CJ_PTR(ctx, st->in[0]), .xi = CJ_PTR(ctx, st->in[1])};
  for (int32_t mb = 0; mb < p->n; mb++) {
    R.iv[mb] = CJ_PTR(ctx, st->in[2 + 2 * mb]);
    R.ii[mb] = CJ_PTR(ctx, st->in[3 + 2 * mb]);
    R.ov[mb] = CJ_PTR(ctx, st->out[2 * mb]);
    R.oi[mb] = CJ_PTR(ctx, st->out[2 * mb + 1]);
  }
  if (p->nout == 0) return NULL;
  int nthreads = ctx->pool ? cj_pool_size(ctx->pool) : 1;
  bool par = nthreads > 1 && p->nout * p->nred >= CJ_PAR_MIN_ELEMS;
  if (p->nred == 0) {
    am_outputs(&R, 0, p->nout);
  } else if (p->vertical) {
    int64_t inner = p->kept.dims[p->kept.rank - 1];
    int64_t nchunks = (p->nout / inner) * ((inner + AM_CHUNK - 1) / AM_CHUNK);
    if (par && nchunks > 1) {
      int64_t grain = CJ_PAR_MIN_ELEMS / (AM_CHUNK * p->nred);
      cj_pool_parallel_for(ctx->pool, nchunks, grain < 1 ? 1 : grain, am_chunks, &R);
    } else {
      am_chunks(&R, 0, nchunks);
    }
  } else if (par && p->nout == 1 && p->nred >= 4 * CJ_PAR_MIN_ELEMS) {
    int64_t nparts = nthreads * 2 < AM_MAX_PARTS ? nthreads * 2 : AM_MAX_PARTS;
    R.per = (p->nred + nparts - 1) / nparts;
    for (R.m = 0; R.m < p->n; R.m++) {
      cj_pool_parallel_for(ctx->pool, nparts, 1, am_parts, &R);
      memcpy(R.ov[R.m], R.iv[R.m], (size_t)p->ves);
      memcpy(R.oi[R.m], R.ii[R.m], (size_t)p->ies);
      for (int64_t k = 0; k < nparts; k++)
        if (R.have[k]) p->f[R.m].comb(R.ov[R.m], R.oi[R.m], R.pv[k], R.pi[k]);
    }
  } else if (par && p->nout > 1) {
    int64_t grain = CJ_PAR_MIN_ELEMS / p->nred;
    cj_pool_parallel_for(ctx->pool, p->nout, grain < 1 ? 1 : grain, am_outputs, &R);
  } else {
    am_outputs(&R, 0, p->nout);
  }
  return NULL;
}

/* the op defining v when it is of kind k in block b */
static const cj_op *am_def(const cj_value *v, const cj_block *b, int k) {
  const cj_op *d = v ? v->def : NULL;
  return d && d->block == b && (int)d->kind == k ? d : NULL;
}

/* v = compare(dir, x, y) with a compare type that fits a value of dt */
static bool am_cmp(const cj_value *v, const cj_block *b, int32_t dir, const cj_value *x,
                   const cj_value *y, cj_dtype dt) {
  const cj_op *c = am_def(v, b, CJ_OP_COMPARE);
  int32_t d = -1, ct = -1;
  if (!c || c->nopnds != 2 || c->operands[0] != x || c->operands[1] != y ||
      !cj_op_get_enum(c, "comparison_direction", CJ_EK_COMPARISON_DIRECTION, &d) || d != dir)
    return false;
  if (!cj_op_get_enum(c, "compare_type", CJ_EK_COMPARISON_TYPE, &ct)) return true;
  if (ct == CJ_COMPARISON_TYPE_NOTYPE) return true;
  if (cj_dtype_is_float(dt)) return ct == CJ_COMPARISON_TYPE_FLOAT;
  return ct == (cj_dtype_kindof(dt) == CJ_DK_SINT ? CJ_COMPARISON_TYPE_SIGNED
                                                  : CJ_COMPARISON_TYPE_UNSIGNED);
}

/* v = kind(p, q) or kind(q, p) for a binary op kind; the operands in *l, *r (in that order) */
static bool am_bin(const cj_value *v, const cj_block *b, int k, const cj_value **l,
                   const cj_value **r) {
  const cj_op *o = am_def(v, b, k);
  if (!o || o->nopnds != 2) return false;
  *l = o->operands[0];
  *r = o->operands[1];
  return true;
}

/* Is the body JAX's argmax (*gt) / argmin body on (values of vt, indices of it)? */
static bool am_pattern(const cj_op *op, cj_dtype vt, cj_dtype it, bool *gt) {
  const cj_block *b = op->regions[0].first;
  if (!b || b->next || b->nargs != 4 || !b->last || b->last->nopnds != 2) return false;
  const cj_value *a = &b->args[0], *ia = &b->args[1], *x = &b->args[2], *ix = &b->args[3];
  const cj_op *s0 = am_def(b->last->operands[0], b, CJ_OP_SELECT);
  const cj_op *s1 = am_def(b->last->operands[1], b, CJ_OP_SELECT);
  if (!s0 || !s1 || s0->nopnds != 3 || s1->nopnds != 3 || s0->operands[1] != a ||
      s0->operands[2] != x || s1->operands[1] != ia || s1->operands[2] != ix)
    return false;
  const cj_value *pick = s0->operands[0], *l, *r;
  /* pick = or(compare(GT|LT, a, x), compare(NE, a, a)), either order */
  if (!am_bin(pick, b, CJ_OP_OR, &l, &r)) return false;
  if (am_cmp(l, b, CJ_COMPARISON_DIRECTION_NE, a, a, vt)) {
    const cj_value *t = l;
    l = r;
    r = t;
  }
  if (!am_cmp(r, b, CJ_COMPARISON_DIRECTION_NE, a, a, vt)) return false;
  if (am_cmp(l, b, CJ_COMPARISON_DIRECTION_GT, a, x, vt))
    *gt = true;
  else if (am_cmp(l, b, CJ_COMPARISON_DIRECTION_LT, a, x, vt))
    *gt = false;
  else
    return false;
  /* pick_i = or(pick, and(compare(EQ, a, x), compare(LT, ia, ix))), either order each */
  if (!am_bin(s1->operands[0], b, CJ_OP_OR, &l, &r)) return false;
  if (r == pick) {
    r = l;
    l = pick;
  }
  if (l != pick || !am_bin(r, b, CJ_OP_AND, &l, &r)) return false;
  if (am_cmp(r, b, CJ_COMPARISON_DIRECTION_EQ, a, x, vt)) {
    const cj_value *t = l;
    l = r;
    r = t;
  }
  return am_cmp(l, b, CJ_COMPARISON_DIRECTION_EQ, a, x, vt) &&
         am_cmp(r, b, CJ_COMPARISON_DIRECTION_LT, ia, ix, it);
}

/* Is v an iota along the one reduced dim of size > 1 (or along a reduced dim of size 1 when
 * none is larger)? Then the index of reduced element r is r (JAX's argmax/argmin indices). */
static bool am_iota_along_red(const cj_value *v, int32_t rank, const int64_t *dims,
                              const bool *isred) {
  const cj_op *d = v->def;
  int64_t dim = -1;
  if (!d || d->kind != CJ_OP_IOTA || d->nresults != 1 || !cj_op_get_i64(d, "iota_dimension", &dim) ||
      dim < 0 || dim >= rank || !isred[dim])
    return false;
  for (int32_t k = 0; k < rank; k++)
    if (k != dim && isred[k] && dims[k] != 1) return false;
  return true;
}

/* Is op an argmax/argmin (a 2-result reduce with that body on static operands)? Its value and
 * index types in *vt, *it, its folds in *f */
static bool am_match(const cj_op *op, cj_dtype *vt, cj_dtype *it, bool *gt, am_fns *f) {
  if (op->nresults != 2 || op->nopnds != 4 || op->nregions != 1) return false;
  const cj_block *b = op->regions[0].first;
  if (!b || b->nargs != 4) return false;
  for (uint32_t i = 0; i < 4; i++) {
    const cj_type *t = b->args[i].type;
    if (!cj_type_is_static(t) || t->rank != 0) return false;
  }
  *vt = b->args[0].type->dtype;
  *it = b->args[1].type->dtype;
  if (b->args[2].type->dtype != *vt || b->args[3].type->dtype != *it ||
      !am_pattern(op, *vt, *it, gt) || !am_lookup(*vt, *it, *gt, f))
    return false;
  for (uint32_t i = 0; i < 4; i++) /* (virtual values are materialized by cj_lw_operand) */
    if (!cj_type_is_static(op->operands[i]->type)) return false;
  return true;
}

/* does op reduce over exactly the dims marked in isred? */
static bool same_dims(const cj_op *op, int32_t rank, const bool *isred) {
  int64_t dims[CJ_MAX_RANK], nd = 0;
  if (!cj_op_get_i64s(op, "dimensions", dims, CJ_MAX_RANK, &nd)) return false;
  bool red[CJ_MAX_RANK] = {false};
  for (int64_t i = 0; i < nd; i++) {
    if (dims[i] < 0 || dims[i] >= rank || dims[i] >= CJ_MAX_RANK || red[dims[i]]) return false;
    red[dims[i]] = true;
  }
  return memcmp(red, isred, sizeof red) == 0;
}

static bool init_ready(cj_lw *L, const cj_op *op, cj_value *v);

/* a later argmax/argmin of op's block (the argmax/argmin of values vt, indices it) over the
 * same values and dims whose indices hold the same numbers (the same value, or both an iota
 * along the reduced dim) and whose inits are ready: it can run in op's step (folds in *f) */
static cj_op *am_sibling(cj_lw *L, const cj_op *op, cj_dtype vt, cj_dtype it, const bool *isred,
                         bool *gt, am_fns *f) {
  enum { SCAN = 512 }; /* ops looked at after op */
  const cj_type *xt = op->operands[0]->type;
  int32_t seen = 0;
  for (cj_op *s = op->next; s && seen < SCAN; s = s->next, seen++) {
    cj_dtype svt, sit;
    if (s->kind != CJ_OP_REDUCE || s->operands[0] != op->operands[0] ||
        !am_match(s, &svt, &sit, gt, f) || svt != vt || sit != it ||
        s->operands[2]->type->num_elements != 1 || s->operands[3]->type->num_elements != 1 ||
        !same_dims(s, xt->rank, isred))
      continue;
    if (s->operands[1] != op->operands[1] &&
        !(am_iota_along_red(op->operands[1], xt->rank, xt->dims, isred) &&
          am_iota_along_red(s->operands[1], xt->rank, xt->dims, isred)))
      continue;
    if (init_ready(L, op, s->operands[2]) && init_ready(L, op, s->operands[3])) return s;
  }
  return NULL;
}

static CJ_MUST_USE cj_status sib_operand(cj_lw *L, cj_op *s, uint32_t i, cj_lw_tensor *t);

/* lowers op as an argmax/argmin when its body is that pattern (*done), else leaves it; with a
 * later sibling (am_sibling) as one step */
static CJ_MUST_USE cj_status lower_argm(cj_lw *L, cj_op *op, const bool *isred, bool *done) {
  *done = false;
  cj_lw_tensor x, xi, iv, ii, rv, ri;
  cj_dtype vt, it;
  am_fns f, f2;
  bool gts[2] = {false, false};
  if (!am_match(op, &vt, &it, &gts[0], &f)) return NULL;
  cj_op *sib = am_sibling(L, op, vt, it, isred, &gts[1], &f2);
  CJ_RETURN_IF_ERROR(cj_lw_operand(L, op, 0, &x));
  CJ_RETURN_IF_ERROR(cj_lw_operand(L, op, 1, &xi));
  CJ_RETURN_IF_ERROR(cj_lw_operand(L, op, 2, &iv));
  CJ_RETURN_IF_ERROR(cj_lw_operand(L, op, 3, &ii));
  if (x.dtype != vt || iv.dtype != vt || xi.dtype != it || ii.dtype != it || x.rank != xi.rank ||
      iv.nelems != 1 || ii.nelems != 1)
    return NULL;
  for (int32_t d = 0; d < x.rank; d++)
    if (x.dims[d] != xi.dims[d]) return NULL;
  CJ_RETURN_IF_ERROR(cj_lw_result(L, op, 0, &rv));
  CJ_RETURN_IF_ERROR(cj_lw_result(L, op, 1, &ri));
  if (rv.dtype != vt || ri.dtype != it) return cj_op_error(op, CJ_INVALID_ARGUMENT, "result types");
  am_params *p = cj_lw_alloc(L, sizeof *p);
  if (!p) return cj_oom();
  p->f[0] = f;
  p->f[1] = f2;
  p->n = sib ? 2 : 1;
  p->ves = cj_dtype_bytes(vt);
  p->ies = cj_dtype_bytes(it);
  int64_t xs[CJ_MAX_RANK];
  cj_row_strides(x.rank, x.dims, xs);
  p->nred = 1;
  for (int32_t d = 0; d < x.rank; d++) {
    if (isred[d]) {
      space_push(&p->red, x.dims[d], xs[d]);
      p->nred *= x.dims[d];
    } else {
      space_push(&p->kept, x.dims[d], xs[d]);
    }
  }
  p->nout = rv.nelems;
  if (p->kept.rank == 0) { /* one output */
    p->kept.dims[0] = 1;
    p->kept.str[0] = 1;
    p->kept.rank = 1;
  }
  int32_t kl = p->kept.rank - 1;
  /* outputs side by side when the kept innermost dim is contiguous, or when each output
   * reduces few elements (short chains one after the other would wait on each other) */
  p->vertical = p->kept.dims[kl] > 1 && (p->kept.str[kl] == 1 || p->nred <= 128);
  if (p->vertical) { /* the fold across outputs in this CPU's vectors, where there is one */
    cj_vm_isa isa = cj_vm_get_isa();
    for (int32_t mb = 0; mb < p->n; mb++) {
      bool gt = gts[mb];
      rk_am_rows_fn v = isa == CJ_VM_ISA_AVX512 ? cj_rk_am_avx512(vt, it, gt)
                        : isa == CJ_VM_ISA_AVX2 ? cj_rk_am_avx2(vt, it, gt)
                                                : cj_rk_am_generic(vt, it, gt);
      if (v) p->f[mb].rows = v;
    }
    p->iota = am_iota_along_red(op->operands[1], x.rank, x.dims, isred);
  }
  cj_lw_add_cost(L, 4.0 * (double)x.nelems * p->n, 0);
  int32_t ins[6] = {x.buf, xi.buf, iv.buf, ii.buf}, outs[4] = {rv.buf, ri.buf};
  if (sib) { /* the sibling's inits and results; its op is taken by this step */
    CJ_RETURN_IF_ERROR(sib_operand(L, sib, 2, &iv));
    CJ_RETURN_IF_ERROR(sib_operand(L, sib, 3, &ii));
    CJ_RETURN_IF_ERROR(cj_lw_result(L, sib, 0, &rv));
    CJ_RETURN_IF_ERROR(cj_lw_result(L, sib, 1, &ri));
    if (rv.dtype != vt || ri.dtype != it || iv.nelems != 1 || ii.nelems != 1)
      return cj_op_error(sib, CJ_INVALID_ARGUMENT, "result types");
    ins[4] = iv.buf;
    ins[5] = ii.buf;
    outs[2] = rv.buf;
    outs[3] = ri.buf;
    if (!cj_lw_take_op(L, sib)) return cj_oom();
  }
  if (!cj_lw_emit(L, op, k_argm, p, 2 + 2 * (uint32_t)p->n, ins, 2 * (uint32_t)p->n, outs))
    return cj_oom();
  *done = true;
  return NULL;
}

/* ======================================================================== lowering */

int cj_reduce_region_op(const cj_op *op, cj_dtype dt) {
  if (op->nregions != 1) return -1;
  cj_block *b = op->regions[0].first;
  if (!b || b->nargs != 2 || b->nops != 2) return -1;
  cj_op *f = b->first, *ret = b->last;
  if (!f || !ret || f->nopnds != 2 || f->nresults != 1 || ret->nopnds != 1 ||
      ret->operands[0] != &f->results[0])
    return -1;
  bool args = (f->operands[0] == &b->args[0] && f->operands[1] == &b->args[1]) ||
              (f->operands[0] == &b->args[1] && f->operands[1] == &b->args[0]);
  if (!args) return -1;
  if (b->args[0].type->dtype != dt || b->args[1].type->dtype != dt ||
      f->results[0].type->dtype != dt || b->args[0].type->rank != 0)
    return -1;
  switch (f->kind) {
    case CJ_OP_ADD: return R_ADD;
    case CJ_OP_MULTIPLY: return R_MUL;
    case CJ_OP_MAXIMUM: return R_MAX;
    case CJ_OP_MINIMUM: return R_MIN;
    case CJ_OP_AND: return R_AND;
    case CJ_OP_OR: return R_OR;
    case CJ_OP_XOR: return R_XOR;
    default: return -1;
  }
}

static int body_pattern(cj_op *op, cj_dtype dt) {
  return op->nopnds == 2 ? cj_reduce_region_op(op, dt) : -1;
}

cj_combine_fn cj_reduce_combiner(int op, cj_dtype dt) {
  vfn_t v;
  return red_fns(op, dt, &v) ? v : NULL;
}

/* ---- the body on vectors of output positions ----
 * A body of elementwise ops and constants on scalars computes each output position
 * independently of the others: the same ops on vectors of `lanes` positions (one lane per
 * output) give the same results, with one kernel call per op for `lanes` outputs. */
enum { REDUCE_LANES = 256 };

static bool body_is_elementwise(cj_block *body) {
  for (cj_op *o = body->first; o; o = o->next) {
    if (o == body->last) return (cj_op_info_get(o->kind)->flags & CJ_OPF_TERMINATOR) != 0;
    if (o->nregions) return false;
    for (uint32_t i = 0; i < o->nresults; i++)
      if (!cj_type_is_static(o->results[i].type) || o->results[i].type->rank != 0) return false;
    if (o->kind == CJ_OP_CONSTANT) {
      const cj_attr *a = cj_op_attr(o, "value");
      if (!a || a->kind != CJ_ATTR_DENSE || !a->dense.nbytes) return false;
      continue;
    }
    if (!cj_lw_ew_is_fusible(o)) return false;
    for (uint32_t i = 0; i < o->nopnds; i++) {
      const cj_value *v = o->operands[i];
      if (!cj_type_is_static(v->type) || v->type->rank != 0) return false;
      if ((v->def ? v->def->block : v->block) != body) return false; /* a captured value */
    }
  }
  return false;
}

/* the body with every value a vector of K lanes, in a block of a detached holder op */
static CJ_MUST_USE cj_status lanes_body(cj_lw *L, const cj_op *op, cj_block *body, int64_t K, cj_block **out) {
  cj_module *m = cj_lw_module(L);
  cj_op *holder = cj_op_create(m, CJ_OP_REDUCE, NULL, 0, 0, 1);
  if (!holder) return cj_oom();
  holder->pos = op->pos;
  uint32_t na = body->nargs;
  const cj_type **at = malloc(sizeof(cj_type *) * (na ? na : 1));
  uint32_t cap = na + 64, nm = 0;
  cj_value **from = malloc(sizeof(cj_value *) * cap), **to = malloc(sizeof(cj_value *) * cap);
  cj_status st = NULL;
  cj_block *blk = NULL;
  if (!at || !from || !to) st = cj_oom();
  for (uint32_t i = 0; !st && i < na; i++) {
    at[i] = cj_type_tensor(m, body->args[i].type->elem, 1, &K, NULL, NULL);
    if (!at[i]) st = cj_oom();
  }
  if (!st) {
    blk = cj_region_add_block(m, &holder->regions[0], na, at);
    if (!blk) st = cj_oom();
  }
  for (uint32_t i = 0; !st && i < na; i++) {
    from[nm] = &body->args[i];
    to[nm++] = &blk->args[i];
  }
  for (cj_op *o = body->first; !st && o; o = o->next) {
    if (o == body->last) {
      cj_op *ret = cj_op_create(m, CJ_OP_RETURN, NULL, o->nopnds, 0, 0);
      if (!ret) {
        st = cj_oom();
        break;
      }
      for (uint32_t i = 0; i < o->nopnds; i++) {
        cj_value *v = o->operands[i];
        for (uint32_t k = nm; k-- > 0;)
          if (from[k] == v) {
            v = to[k];
            break;
          }
        ret->operands[i] = v;
      }
      cj_block_append(blk, ret);
      break;
    }
    cj_op *c = cj_op_clone(m, o, nm, from, to);
    if (!c) {
      st = cj_oom();
      break;
    }
    for (uint32_t i = 0; i < c->nresults; i++) {
      c->results[i].type = cj_type_tensor(m, o->results[i].type->elem, 1, &K, NULL, NULL);
      if (!c->results[i].type) st = cj_oom();
    }
    if (!st && o->kind == CJ_OP_CONSTANT) {
      const cj_attr *a = cj_op_attr(o, "value");
      const cj_attr *d = cj_attr_dense(m, c->results[0].type, a->dense.data,
                                       (size_t)cj_dtype_bytes(c->results[0].type->dtype), true);
      st = d ? cj_op_set_attr(m, c, "value", d) : cj_oom();
    }
    cj_block_append(blk, c);
    if (!cj_value_map_add_results(&from, &to, &nm, &cap, o, c)) {
      st = cj_oom();
      break;
    }
  }
  free(at);
  free(from);
  free(to);
  if (!st) st = cj_lw_adopt_block(L, blk);
  *out = blk;
  return st;
}

/* Input fusion pays where it saves memory traffic and the computed runs are long: inputs of
 * RFUSE_MIN_BYTES or more (smaller ones stay in the L2 cache, where storing the chain costs
 * about what computing it in short runs does), with a kept innermost run of RFUSE_VRUN or more
 * (vertical), or reduced runs of RFUSE_HRUN or more, or reduced axes that are all the innermost
 * ones (their runs computed many outputs at a call). Other inputs are stored first, as before. */
enum { RFUSE_MIN_BYTES = 1 << 20, RFUSE_VRUN = 256, RFUSE_HRUN = 64 };
static bool fuse_worth(const cj_type *xt, const bool *isred) {
  if (xt->num_elements * cj_dtype_bytes(xt->dtype) < RFUSE_MIN_BYTES) return false;
  int32_t last = xt->rank - 1;
  while (last >= 0 && xt->dims[last] == 1) last--;
  if (last < 0) return false;
  int64_t run = 1;
  int32_t d = last;
  for (; d >= 0 && (xt->dims[d] == 1 || isred[d] == isred[last]); d--) run *= xt->dims[d];
  if (!isred[last]) return run >= RFUSE_VRUN;
  bool trailing = true; /* no reduced axis before the innermost reduced block */
  for (; d >= 0; d--)
    if (isred[d] && xt->dims[d] != 1) trailing = false;
  return run >= RFUSE_HRUN || trailing;
}

/* A horizontal reduction whose innermost reduced run is short and contiguous, right inside a
 * kept dim, with reduced dims outside (GroupNorm's statistics: [N, H, W, G, C/G] over H, W and
 * C/G): one leaf of a few elements per hfold call, thousands an output, cost ~3x XLA's time.
 * Planned vertical instead: rows of kept dim x run contiguous lanes, accumulated over the other
 * reduced dims in v_pair's tree (RV_LEAF + log2 roundings a lane), then each output's run of
 * lanes pairwise (fast_fin): the accuracy class of the horizontal tree. */
enum { RFOLD_MAX_RUN = 16 };
static void plan_fold(fast_params *p) {
  space *k = &p->kept;
  int es = p->esize;
  if (p->rstr != es || p->run < 2 || p->run > RFOLD_MAX_RUN || p->ored.rank == 0 ||
      k->rank == 0 || k->str[k->rank - 1] != p->run * es || p->nred == 0 || p->nout == 0)
    return;
  p->vertical = true;
  p->fold = p->run;
  p->red = p->ored;
  p->nred /= p->run;
  k->dims[k->rank - 1] *= p->run;
  k->str[k->rank - 1] = es;
  p->vlen = k->dims[k->rank - 1];
  p->nout *= p->run;
  p->vchunk = p->vchunk / p->run * p->run;
}

/* the fast path's parameters for a reduction of x0 by rf into nout outputs */
static fast_params *fast_plan(cj_lw *L, const rk_fns *rf, cj_lw_tensor x0, const bool *isred,
                              int64_t nred, int64_t nout, bool computed) {
  int64_t xs[CJ_MAX_RANK];
  cj_row_strides(x0.rank, x0.dims, xs);
  fast_params *p = cj_lw_alloc(L, sizeof *p);
  if (!p) return NULL;
  int es = cj_dtype_bytes(x0.dtype);
  p->esize = es;
  p->f = rf;
  p->vchunk = (computed ? RVF_BYTES : RV_BYTES) / rf->abytes;
  p->nout = nout;
  p->nred = nred;
  int32_t last = x0.rank - 1;
  while (last >= 0 && x0.dims[last] == 1) last--;
  p->vertical = last < 0 || !isred[last];
  for (int32_t d = 0; d < x0.rank; d++) {
    if (isred[d])
      space_push(&p->red, x0.dims[d], xs[d] * es);
    else
      space_push(&p->kept, x0.dims[d], xs[d] * es);
  }
  if (p->vertical) {
    if (p->kept.rank == 0) {
      p->kept.dims[0] = 1;
      p->kept.str[0] = es;
      p->kept.rank = 1;
    }
    p->vlen = p->kept.dims[p->kept.rank - 1];
    if (p->kept.str[p->kept.rank - 1] != es) { /* not contiguous: one element at a time */
      p->kept.dims[p->kept.rank] = 1;
      p->kept.str[p->kept.rank] = es;
      p->kept.rank++;
      p->vlen = 1;
    }
  } else {
    p->ored = p->red;
    p->ored.rank--;
    p->run = p->red.dims[p->red.rank - 1];
    p->rstr = p->red.str[p->red.rank - 1];
    plan_fold(p);
  }
  return p;
}

/* the fast path: one input, a body of one combiner (fused: the input is computed by src) */
static CJ_MUST_USE cj_status lower_fast(cj_lw *L, cj_op *op, const rk_fns *rf, cj_lw_tensor x0,
                                        const bool *isred, int64_t nred, const cj_ew_src *src) {
  cj_lw_tensor init, r;
  CJ_RETURN_IF_ERROR(cj_lw_operand(L, op, 1, &init));
  CJ_RETURN_IF_ERROR(cj_lw_result(L, op, 0, &r));
  fast_params *p = fast_plan(L, rf, x0, isred, nred, r.nelems, src->prog != NULL);
  if (!p) return cj_oom();
  cj_lw_add_cost(L, (double)x0.nelems, 0);
  if (src->prog) { /* in = [init, the source's inputs] */
    p->src = *src;
    int32_t ins[1 + CJ_EW_SRC_MAX_IN];
    ins[0] = init.buf;
    memcpy(ins + 1, src->in_bufs, sizeof(int32_t) * (size_t)src->nin);
    if (!cj_lw_emit(L, op, k_reduce_fast, p, 1 + (uint32_t)src->nin, ins, 1, &r.buf))
      return cj_oom();
    return NULL;
  }
  int32_t ins[2] = {x0.buf, init.buf};
  if (!cj_lw_emit(L, op, k_reduce_fast, p, 2, ins, 1, &r.buf)) return cj_oom();
  return NULL;
}

/* the fast kernels of combiner rop on dt for this CPU (NULL: none) */
static const rk_fns *rk_for(int rop, cj_dtype dt) {
  cj_vm_isa isa = cj_vm_get_isa();
  return isa == CJ_VM_ISA_AVX512 ? cj_rk_avx512(rop, dt)
         : isa == CJ_VM_ISA_AVX2 ? cj_rk_avx2(rop, dt)
                                 : cj_rk_generic(rop, dt);
}

/* the fast kernels of a one-input reduce whose body is one combiner of its type, else NULL */
static const rk_fns *fast_fns(cj_op *op) {
  if (op->nresults != 1 || op->nopnds != 2) return NULL;
  int rop = body_pattern(op, op->operands[0]->type->dtype);
  if (rop < 0) return NULL;
  return rk_for(rop, op->operands[0]->type->dtype);
}

/* a sibling's init is lowered (not pending in an elementwise group), or a scalar constant of
 * op's block that lower_multi lowers ahead */
static bool init_ready(cj_lw *L, const cj_op *op, cj_value *v) {
  if (cj_lw_value_is_bound(L, v)) return !cj_lw_ew_pending_value(L, v);
  const cj_op *d = v->def;
  return d && d->kind == CJ_OP_CONSTANT && d->block == op->block && d->nresults == 1 &&
         cj_type_is_static(v->type) && v->type->num_elements == 1;
}

/* One reduction of a multi step: input operands[i] of op, init operands[nresults + i], result
 * results[i], kernels f. */
typedef struct red_member {
  cj_op *op;
  uint32_t i;
  const rk_fns *f;
} red_member;

/* a later reduce of op's block over the same dims with a fast body and an init already
 * lowered, whose input is op's, or is of op's input type and computed by the pending
 * elementwise group (an elementwise function of values lowered before op: BatchNorm's x * x,
 * which JAX writes before sum(x)): its step can run with op's (its kernels in *rf) */
static bool is_sibling(cj_lw *L, const cj_op *op, cj_op *s, const bool *isred, const rk_fns **rf) {
  if (s->kind != CJ_OP_REDUCE || s->nopnds != 2 || !cj_type_is_static(s->results[0].type))
    return false;
  cj_value *x = op->operands[0], *y = s->operands[0];
  if (y != x && (y->type != x->type || !cj_lw_ew_pending_value(L, y))) return false;
  if (!same_dims(s, op->operands[0]->type->rank, isred)) return false;
  if (!init_ready(L, op, s->operands[1])) return false;
  *rf = fast_fns(s);
  return *rf != NULL;
}

/* operand i (an init) of a sibling s: a scalar constant after op is lowered here */
static CJ_MUST_USE cj_status sib_operand(cj_lw *L, cj_op *s, uint32_t i, cj_lw_tensor *t) {
  cj_value *v = s->operands[i];
  if (!cj_lw_value_is_bound(L, v)) {
    CJ_RETURN_IF_ERROR(cj_lower_constant(L, v->def));
    if (!cj_lw_take_op(L, v->def)) return cj_oom();
  }
  return cj_lw_operand(L, s, i, t);
}

/* An input of a multi step that the pending group computes is computed as it is read (from the
 * other inputs in the L1 cache) where input fusion pays, and where the kept run is wide enough
 * that a leaf's rows are one long computed run (BatchNorm's channels); else it is stored first. */
enum { RMULTI_FUSE_MIN_BYTES = 1 << 18, RMULTI_FUSE_VRUN = 32 };
static bool multi_take_worth(const cj_type *xt, const bool *isred) {
  if (fuse_worth(xt, isred)) return true;
  if (xt->num_elements * cj_dtype_bytes(xt->dtype) < RMULTI_FUSE_MIN_BYTES) return false;
  int64_t run = 1;
  int32_t d = xt->rank - 1;
  for (; d >= 0 && (xt->dims[d] == 1 || !isred[d]); d--) run *= xt->dims[d];
  return run >= RMULTI_FUSE_VRUN && run < xt->num_elements;
}

/* members mem[0..n) (inputs of one type and shape, the same reduced dims; op's first) as one
 * step k_reduce_multi: at most one input computed by the pending group, the others stored */
static CJ_MUST_USE cj_status lower_multi(cj_lw *L, cj_op *op, int32_t n, const red_member *mem,
                                         const bool *isred, int64_t nred) {
  const cj_type *xt = mem[0].op->operands[mem[0].i]->type;
  int32_t c = -1; /* the member whose input is taken from the pending group */
  for (int32_t k = 0; k < n && c < 0; k++) {
    cj_value *v = mem[k].op->operands[mem[k].i];
    if (cj_lw_ew_pending_value(L, v) && cj_lw_num_uses(L, v) == 1 && multi_take_worth(xt, isred))
      c = k;
  }
  cj_ew_src src = {NULL, 0, NULL};
  bool taken = false;
  if (c >= 0)
    CJ_RETURN_IF_ERROR(cj_lw_ew_take(L, mem[c].op->operands[mem[c].i], &src, &taken));
  else
    CJ_RETURN_IF_ERROR(cj_lw_ew_flush(L));
  if (!taken) c = -1;
  multi_params *m = cj_lw_alloc(L, sizeof *m);
  if (!m) return cj_oom();
  m->n = n;
  int32_t ins[2 * RMULTI_MAX + CJ_EW_SRC_MAX_IN], outs[RMULTI_MAX], nin = n;
  int32_t amax = 1;
  cj_lw_tensor xv = {.buf = -1, .dtype = xt->dtype, .rank = xt->rank, .dims = xt->dims,
                     .nelems = xt->num_elements, .type = xt};
  for (int32_t k = 0; k < n; k++) {
    cj_op *o = mem[k].op;
    uint32_t i = mem[k].i;
    cj_lw_tensor init, r;
    CJ_RETURN_IF_ERROR(sib_operand(L, o, o->nresults + i, &init));
    CJ_RETURN_IF_ERROR(cj_lw_result(L, o, i, &r));
    ins[k] = init.buf;
    outs[k] = r.buf;
    fast_params *p = fast_plan(L, mem[k].f, xv, isred, nred, r.nelems, c >= 0);
    if (!p) return cj_oom();
    m->p[k] = p;
    if (mem[k].f->abytes > amax) amax = mem[k].f->abytes;
    if (k == c) {
      p->src = src;
      m->at[k] = nin;
      memcpy(ins + nin, src.in_bufs, sizeof(int32_t) * (size_t)src.nin);
      nin += src.nin;
    } else {
      cj_lw_tensor x;
      CJ_RETURN_IF_ERROR(cj_lw_operand(L, o, i, &x));
      m->at[k] = -1;
      for (int32_t j = 0; j < k; j++) /* an input read by an earlier member shares its slot */
        if (j != c && ins[m->at[j]] == x.buf) m->at[k] = m->at[j];
      if (m->at[k] < 0) {
        m->at[k] = nin;
        ins[nin++] = x.buf;
      }
    }
    if (o != op && (k == 0 || mem[k - 1].op != o) && !cj_lw_take_op(L, o)) return cj_oom();
  }
  /* one chunk width for all (the same units; every kernel acts lane by lane, so the width
   * changes no bits): the members' accumulators of a chunk side by side in RVA_BYTES */
  int64_t vc = (c >= 0 ? RVF_BYTES : RV_BYTES) / amax, cap = RVA_BYTES / n / amax;
  if (vc > cap) vc = cap;
  for (int32_t k = 0; k < n; k++) {
    fast_params *p = (fast_params *)m->p[k];
    p->vchunk = p->fold > 1 ? vc / p->fold * p->fold : vc;
  }
  const fast_params *p0 = m->p[0];
  m->mb = p0->vertical ? vc * amax : RACC_MAX;
  /* horizontal: the tree for units too large for the cache (each member's multi-output
   * kernels for short ones) */
  m->tree = p0->vertical || (p0->nred * p0->esize > RMULTI_BYTES &&
                             !(p0->ored.rank == 0 && p0->run <= RH_LEAF));
  cj_lw_add_cost(L, (double)xt->num_elements * n, 0);
  if (!cj_lw_emit(L, op, k_reduce_multi, m, (uint32_t)nin, ins, (uint32_t)n, outs))
    return cj_oom();
  return NULL;
}

/* op (a fast reduce) and its later siblings (sum, max, min, ... of the same input, or of an
 * elementwise function of it) as one step; *done = false when op has none */
static CJ_MUST_USE cj_status lower_siblings(cj_lw *L, cj_op *op, const rk_fns *rf,
                                            const bool *isred, int64_t nred, bool *done) {
  enum { SCAN = 512 }; /* ops looked at after op */
  *done = false;
  red_member mem[RMULTI_MAX];
  int32_t n = 1, seen = 0;
  mem[0] = (red_member){op, 0, rf};
  for (cj_op *s = op->next; s && n < RMULTI_MAX && seen < SCAN; s = s->next, seen++) {
    const rk_fns *f;
    if (is_sibling(L, op, s, isred, &f)) mem[n++] = (red_member){s, 0, f};
  }
  if (n == 1) return NULL;
  *done = true;
  return lower_multi(L, op, n, mem, isred, nred);
}

/* a variadic reduce of inputs of one type whose body combines each input with its own
 * accumulator by one combiner (return f0(a0, b0), f1(a1, b1), ...): one multi step */
static CJ_MUST_USE cj_status lower_separable(cj_lw *L, cj_op *op, const bool *isred, int64_t nred,
                                             bool *done) {
  *done = false;
  uint32_t n = op->nresults;
  cj_block *b = op->regions[0].first;
  if (n < 2 || n > RMULTI_MAX || !b || b->nargs != 2 * n || b->nops != n + 1 || !b->last ||
      b->last->nopnds != n)
    return NULL;
  const cj_type *xt = op->operands[0]->type;
  if (!cj_type_is_static(xt)) return NULL;
  red_member mem[RMULTI_MAX];
  for (uint32_t i = 0; i < n; i++) {
    const cj_value *x = op->operands[i], *init = op->operands[n + i];
    if (x->type != xt || !cj_type_is_static(init->type) || init->type->num_elements != 1 ||
        init->type->dtype != xt->dtype || !cj_type_is_static(op->results[i].type) ||
        op->results[i].type->dtype != xt->dtype)
      return NULL;
    const cj_value *rv = b->last->operands[i];
    cj_op *f = rv->def;
    if (!f || f->block != b || f->nopnds != 2 || f->nresults != 1 || f->nregions) return NULL;
    bool args = (f->operands[0] == &b->args[i] && f->operands[1] == &b->args[n + i]) ||
                (f->operands[0] == &b->args[n + i] && f->operands[1] == &b->args[i]);
    if (!args || b->args[i].type->dtype != xt->dtype || b->args[i].type->rank != 0 ||
        b->args[n + i].type->dtype != xt->dtype || rv->type->dtype != xt->dtype ||
        rv->type->rank != 0)
      return NULL;
    int rop = f->kind == CJ_OP_ADD        ? R_ADD
              : f->kind == CJ_OP_MULTIPLY ? R_MUL
              : f->kind == CJ_OP_MAXIMUM  ? R_MAX
              : f->kind == CJ_OP_MINIMUM  ? R_MIN
              : f->kind == CJ_OP_AND      ? R_AND
              : f->kind == CJ_OP_OR       ? R_OR
              : f->kind == CJ_OP_XOR      ? R_XOR
                                          : -1;
    if (rop < 0) return NULL;
    mem[i] = (red_member){op, i, rk_for(rop, xt->dtype)};
    if (!mem[i].f) return NULL;
  }
  *done = true;
  return lower_multi(L, op, (int32_t)n, mem, isred, nred);
}

cj_status cj_lower_reduce(cj_lw *L, cj_op *op) {
  uint32_t n = op->nresults;
  if (n == 0 || op->nopnds != 2 * n || op->nregions != 1)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "reduce needs N inputs, N inits and N results");
  int64_t dims[CJ_MAX_RANK], nd = 0;
  if (!cj_op_get_i64s(op, "dimensions", dims, CJ_MAX_RANK, &nd))
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "no dimensions");
  const cj_type *xt = op->operands[0]->type;
  bool isred[CJ_MAX_RANK] = {false};
  for (int64_t i = 0; i < nd; i++) {
    if (dims[i] < 0 || dims[i] >= xt->rank || dims[i] >= CJ_MAX_RANK)
      return cj_op_error(op, CJ_INVALID_ARGUMENT, "bad dimension");
    isred[dims[i]] = true;
  }
  const rk_fns *rf = n == 1 ? fast_fns(op) : NULL;
  if (cj_type_is_static(xt)) { /* with its siblings, or a variadic reduce of several */
    int64_t sred = 1;
    for (int32_t d = 0; d < xt->rank; d++)
      if (isred[d]) sred *= xt->dims[d];
    bool done = false;
    if (rf)
      CJ_RETURN_IF_ERROR(lower_siblings(L, op, rf, isred, sred, &done));
    else
      CJ_RETURN_IF_ERROR(lower_separable(L, op, isred, sred, &done));
    if (done) return NULL;
  }
  /* a fast body takes the pending elementwise group computing its input (input fusion) */
  cj_ew_src src = {NULL, 0, NULL};
  bool fused = false;
  if (rf && cj_type_is_static(xt) && fuse_worth(xt, isred))
    CJ_RETURN_IF_ERROR(cj_lw_ew_take(L, op->operands[0], &src, &fused));
  else
    CJ_RETURN_IF_ERROR(cj_lw_ew_flush(L));
  cj_lw_tensor x0;
  if (fused)
    x0 = (cj_lw_tensor){.buf = -1, .dtype = xt->dtype, .rank = xt->rank, .dims = xt->dims,
                        .nelems = xt->num_elements, .type = xt};
  else
    CJ_RETURN_IF_ERROR(cj_lw_operand(L, op, 0, &x0));
  int64_t xs[CJ_MAX_RANK];
  cj_row_strides(x0.rank, x0.dims, xs);
  int64_t nred = 1;
  for (int32_t d = 0; d < x0.rank; d++)
    if (isred[d]) nred *= x0.dims[d];

  if (rf) return lower_fast(L, op, rf, x0, isred, nred, &src);

  if (n == 2) { /* argmax / argmin */
    bool done = false;
    CJ_RETURN_IF_ERROR(lower_argm(L, op, isred, &done));
    if (done) return NULL;
  }

  /* general: the body as a nested plan per element */
  cj_block *body = op->regions[0].first;
  if (!body || body->nargs != 2 * n) return cj_op_error(op, CJ_INVALID_ARGUMENT, "bad reduce body");
  gen_params *p = cj_lw_alloc(L, sizeof *p);
  int32_t *slots = cj_lw_alloc(L, sizeof(int32_t) * 6 * n);
  int32_t *outs = cj_lw_alloc(L, sizeof(int32_t) * n);
  if (!p || !slots || !outs) return cj_oom();
  p->n = (int32_t)n;
  p->in_es = cj_lw_alloc(L, sizeof(int32_t) * n);
  p->body_es = cj_lw_alloc(L, sizeof(int32_t) * n);
  p->cvt = cj_lw_alloc(L, sizeof(cj_ew_fn) * n);
  p->cvt_aux = cj_lw_alloc(L, sizeof(cj_ew_aux) * n);
  if (!p->in_es || !p->body_es || !p->cvt || !p->cvt_aux) return cj_oom();
  for (uint32_t i = 0; i < n; i++) {
    cj_lw_tensor x, init;
    CJ_RETURN_IF_ERROR(cj_lw_operand(L, op, i, &x));
    CJ_RETURN_IF_ERROR(cj_lw_operand(L, op, n + i, &init));
    if (x.rank != x0.rank) return cj_op_error(op, CJ_INVALID_ARGUMENT, "inputs differ in shape");
    slots[i] = x.buf;
    slots[n + i] = init.buf;
    const cj_type *bt = body->args[i].type;
    if (!cj_type_is_static(bt) || bt->num_elements != 1)
      return cj_op_error(op, CJ_INVALID_ARGUMENT, "reduce body arguments must be scalars");
    p->in_es[i] = cj_dtype_bytes(x.dtype);
    p->body_es[i] = cj_dtype_bytes(bt->dtype);
    if (bt->dtype != x.dtype) {
      p->cvt[i] = cj_cvt_lookup(x.dtype, bt->dtype);
      p->cvt_aux[i].src = x.dtype;
      p->cvt_aux[i].dt = bt->dtype;
      if (!p->cvt[i]) return cj_op_error(op, CJ_UNIMPLEMENTED, "unsupported promotion");
    }
  }
  for (int32_t d = 0; d < x0.rank; d++) { /* element strides; contiguous dims merged */
    if (isred[d])
      space_push(&p->red, x0.dims[d], xs[d]);
    else
      space_push(&p->kept, x0.dims[d], xs[d]);
  }
  p->nred = nred;
  int32_t start = cj_lw_advance(L);
  for (uint32_t i = 0; i < n; i++) {
    cj_lw_tensor r;
    CJ_RETURN_IF_ERROR(cj_lw_result(L, op, i, &r));
    outs[i] = r.buf;
    cj_lw_def_at(L, r.buf, start);
    p->nout = r.nelems;
  }
  /* a body of elementwise ops runs on vectors of output positions */
  p->lanes = 1;
  if (p->nout > 1 && body_is_elementwise(body)) {
    int64_t K = p->nout < REDUCE_LANES ? p->nout : REDUCE_LANES;
    cj_block *vb = NULL;
    CJ_RETURN_IF_ERROR(lanes_body(L, op, body, K, &vb));
    body = vb;
    p->lanes = K;
  }
  /* body arguments: acc then x; they and the body's buffers form a group, copied for the
   * threads that run the body at once */
  int32_t grp = cj_lw_group_begin(L);
  for (uint32_t i = 0; i < 2 * n; i++) {
    const cj_type *bt = body->args[i].type;
    int32_t b = cj_lw_new_buf(L, cj_dtype_bytes(bt->dtype) * (bt->num_elements > 0 ? bt->num_elements : 1),
                              CJ_BK_ARENA);
    cj_lw_def_at(L, b, start);
    slots[2 * n + i] = b;
    CJ_RETURN_IF_ERROR(cj_lw_bind(L, &body->args[i], 1, &b));
  }
  /* staging for inputs converted to the body's type (lanes) */
  for (uint32_t i = 0; i < n; i++) {
    int32_t b = cj_lw_new_buf(L, p->lanes > 1 && p->cvt[i] ? p->in_es[i] * p->lanes : 0, CJ_BK_ARENA);
    cj_lw_def_at(L, b, start);
    slots[5 * n + i] = b;
  }
  cj_lw_saved saved;
  cj_lw_plan_begin(L, &saved);
  cj_op *term = NULL;
  cj_status st = cj_lw_block(L, body, &term);
  if (!st && (!term || term->nopnds != n))
    st = cj_op_error(op, CJ_INVALID_ARGUMENT, "reduce body must return %u values", n);
  for (uint32_t i = 0; !st && i < n; i++) {
    int32_t nl;
    const int32_t *lv;
    st = cj_lw_leaves(L, term, term->operands[i], &nl, &lv);
    if (!st) slots[4 * n + i] = lv[0];
  }
  cj_status st2 = cj_lw_plan_end(L, &saved, &p->body);
  /* acc, x, ret and stage are read through the body's copy too: they must be the group's */
  if (!st && !st2 && !cj_lw_slots(L, 4 * n, slots + 2 * n, true)) st = cj_oom();
  p->grp = cj_lw_group_end(L, grp, 16);
  if (st) {
    cj_status_ignore(st2); /* the first error is the one to report */
    return st;
  }
  CJ_RETURN_IF_ERROR(st2);
  cj_lw_add_cost(L, (double)x0.nelems * (double)(p->body.nsteps ? p->body.nsteps : 1), 0);
  if (!cj_lw_emit(L, op, k_reduce_general, p, 6 * n, slots, n, outs)) return cj_oom();
  cj_lw_extend_region(L, start);
  return NULL;
}
