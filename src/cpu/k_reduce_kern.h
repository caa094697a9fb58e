/* cjrt: the inner loops of stablehlo.reduce's fast path, one set per instruction set.
 *
 * Included by k_reduce_isa_{generic,avx2,avx512}.c, each under its own target options, with
 * RK_TABLE naming the lookup function it defines. The loops are written for the compiler's
 * vectorizer (fixed lane counts, no branches in the bodies); k_reduce.c holds the pairwise
 * structure around them and picks a variant by CPUID (cj_vm_get_isa).
 *
 * Every kernel works in an accumulation type A: the element type itself, except bf16 and f16,
 * which accumulate in f32 and round once at the end (as a careful library does; a bf16 running
 * sum stops growing after 256 steps of ~1).
 *   vload(acc, x, n)              acc[j] = A(x[j])                          j < n
 *   vacc(acc, x, n, rows, rs)     acc[j] = acc[j] op A(x[k*rs + j])         k < rows (rs bytes)
 *   vcomb(acc, b, n)              acc[j] = acc[j] op b[j]                   (both A)
 *   hfold(out, x, n, s)           *out = x[0] op ... op x[n-1] (A), n >= 1, s bytes apart: in
 *                                 lanes when contiguous, the lanes combined pairwise
 *   hrows(out, x, n, m, rs)       out[o] = hfold(x + o*rs, n, sizeof(T)) for o < m <= RK_HROWS,
 *                                 16 <= n <= 512: the same lanes, their trees run across the m
 *                                 outputs at once (the same bits: the same tree)
 *   hshort(out, x, n, m, rs, s)   out[o] = hfold(x + o*rs, n, s) for o < m <= RK_HROWS, where
 *                                 hfold folds in index order (n < 16, or strided): the
 *                                 outputs side by side (short runs such as xyz triples)
 *   fin(out, init, acc, n)        out[j] = T(A(init) op acc[j])
 */
#ifndef CJ_RK_TEMPLATE
#error "k_reduce_kern.h is a template: include it from a k_reduce_isa_*.c file"
#endif
#include <stdint.h>
#include <string.h>

#include "cpu/k_reduce_am.h"
#include "cpu/k_reduce_kern_api.h"
#include "cpu/scalar.h"

enum { RK_LANES = 32 };
_Static_assert(RK_HROWS > 0, "RK_HROWS (k_reduce_kern_api.h)");

/* f16 -> f32 on the bits, without branches, so that the loops over it vectorize (F16C's
 * scalar instruction kept every f16 maximum/minimum, and on AVX2 every f16 fold, one element at
 * a time: ~9x XLA's time). The values are F16C's, NaN payloads aside, and fin's cj_f32_to_f16
 * makes every NaN the one quiet NaN of its sign: the same results. */
static inline float rk_f16(uint16_t v) { return cj_f16_bits_to_f32(v); }
/* StableHLO's maximum/minimum (cj_maxf's results: NaN operands propagate, max(-0, +0) = +0,
 * min(-0, +0) = -0) as selects on values only, which the vectorizer turns into compares and
 * blends (the bit operations of cj_maxf kept these loops scalar). Equal zeros: their sum is +0
 * unless both are -0, which is the maximum; the negated sum of the negations is the minimum.
 * A NaN b needs no select of its own: a CMP NaN is false, so m is b already. */
#define RK_MINMAX(NAME, T, CMP, ZERO)                        \
  static inline T NAME(T a, T b) {                           \
    T m = a CMP b ? a : b, z = (ZERO);                       \
    m = ((a == b) & (a == 0)) ? z : m;                       \
    return a != a ? a : m;                                   \
  }
RK_MINMAX(rk_maxf, float, >, a + b)
RK_MINMAX(rk_minf, float, <, -(-a + -b))
RK_MINMAX(rk_maxd, double, >, a + b)
RK_MINMAX(rk_mind, double, <, -(-a + -b))
#define RK_ID(x) (x)
/* the lane loops stay loops until the loop vectorizer (which if-converts the selects of max and
 * min) has seen them; unrolled early they went to the straight-line vectorizer, which did not */
#if defined(__GNUC__) && !defined(__clang__)
#define RK_NO_UNROLL _Pragma("GCC unroll 1")
#else
#define RK_NO_UNROLL
#endif

/* p[k] = x[k] op x[k + LN] op x[k + 2 LN] op ... (in A), k < LN, over the n >= LN elements of
 * x: the lanes of a contiguous fold */
#define RK_LANES_FOLD(LN, A, LOAD, OP, p, x, n)                                             \
  do {                                                                                      \
    for (int k = 0; k < LN; k++) p[k] = LOAD(x[k]);                                         \
    int64_t j = LN;                                                                         \
    for (; j + LN <= n; j += LN)                                                            \
      RK_NO_UNROLL for (int k = 0; k < LN; k++) {                                           \
        A a = p[k], b = LOAD(x[j + k]);                                                     \
        p[k] = (OP);                                                                        \
      }                                                                                     \
    for (int k = 0; j + k < n; k++) {                                                       \
      A a = p[k], b = LOAD(x[j + k]);                                                       \
      p[k] = (OP);                                                                          \
    }                                                                                       \
  } while (0)

/* RK_LANES_FOLD of two runs side by side (q over x, r over y, both n elements): each run's
 * lanes as RK_LANES_FOLD's (the same bits), two chains per lane in flight instead of one */
#define RK_LANES_FOLD2(LN, A, LOAD, OP, q, x, r, y, n)                                      \
  do {                                                                                      \
    for (int k = 0; k < LN; k++) {                                                          \
      q[k] = LOAD(x[k]);                                                                    \
      r[k] = LOAD(y[k]);                                                                    \
    }                                                                                       \
    int64_t j = LN;                                                                         \
    for (; j + LN <= n; j += LN) {                                                          \
      RK_NO_UNROLL for (int k = 0; k < LN; k++) {                                           \
        A a = q[k], b = LOAD(x[j + k]);                                                     \
        q[k] = (OP);                                                                        \
      }                                                                                     \
      RK_NO_UNROLL for (int k = 0; k < LN; k++) {                                           \
        A a = r[k], b = LOAD(y[j + k]);                                                     \
        r[k] = (OP);                                                                        \
      }                                                                                     \
    }                                                                                       \
    for (int k = 0; j + k < n; k++) {                                                       \
      A a = q[k], b = LOAD(x[j + k]);                                                       \
      q[k] = (OP);                                                                          \
      a = r[k];                                                                             \
      b = LOAD(y[j + k]);                                                                   \
      r[k] = (OP);                                                                          \
    }                                                                                       \
  } while (0)

/* hrows with LN lanes (a constant, so the lanes stay in registers): each output's lanes into
 * column o of P (two outputs at a time: their chains overlap), then the lane tree on whole
 * rows of P */
#define RK_HROWS_BODY(LN, T, A, LOAD, OP)                                                   \
  {                                                                                         \
    int64_t o0 = 0;                                                                         \
    for (; o0 + 2 <= m; o0 += 2) {                                                          \
      const T *restrict x = (const T *)(x_ + o0 * rs);                                      \
      const T *restrict y = (const T *)(x_ + (o0 + 1) * rs);                                \
      A q[LN], r[LN];                                                                       \
      RK_LANES_FOLD2(LN, A, LOAD, OP, q, x, r, y, n);                                       \
      for (int k = 0; k < LN; k++) {                                                        \
        P[k][o0] = q[k];                                                                    \
        P[k][o0 + 1] = r[k];                                                                \
      }                                                                                     \
    }                                                                                       \
    for (int64_t o = o0; o < m; o++) {                                                      \
      const T *restrict x = (const T *)(x_ + o * rs);                                       \
      A p[LN];                                                                              \
      RK_LANES_FOLD(LN, A, LOAD, OP, p, x, n);                                              \
      for (int k = 0; k < LN; k++) P[k][o] = p[k];                                          \
    }                                                                                       \
    for (int w = LN / 2; w >= 1; w /= 2)                                                    \
      for (int k = 0; k < w; k++)                                                           \
        RK_NO_UNROLL for (int64_t o = 0; o < m; o++) {                                      \
          A a = P[k][o], b = P[k + w][o];                                                   \
          P[k][o] = (OP);                                                                   \
        }                                                                                   \
  }

/* NAME: the kernels' suffix; T storage, A accumulation; LOAD: T -> A, STORE: A -> T;
 * OP(a, b) on A */
#define RK_DEF(NAME, T, A, LOAD, STORE, OP)                                                   \
  static void vload_##NAME(void *acc_, const char *x_, int64_t n) {                          \
    A *restrict acc = acc_;                                                                  \
    const T *restrict x = (const T *)x_;                                                     \
    for (int64_t j = 0; j < n; j++) acc[j] = LOAD(x[j]);                                     \
  }                                                                                          \
  static void vacc_##NAME(void *acc_, const char *x_, int64_t n, int64_t rows, int64_t rs) { \
    A *restrict acc = acc_;                                                                  \
    int64_t k = 0;                                                                           \
    for (; k + 2 <= rows; k += 2) {                                                          \
      const T *restrict x0 = (const T *)(x_ + k * rs);                                       \
      const T *restrict x1 = (const T *)(x_ + (k + 1) * rs);                                 \
      for (int64_t j = 0; j < n; j++) {                                                      \
        A a = acc[j], b = LOAD(x0[j]);                                                       \
        A c = (OP);                                                                          \
        a = c;                                                                               \
        b = LOAD(x1[j]);                                                                     \
        acc[j] = (OP);                                                                       \
      }                                                                                      \
    }                                                                                        \
    for (; k < rows; k++) {                                                                  \
      const T *restrict x0 = (const T *)(x_ + k * rs);                                       \
      for (int64_t j = 0; j < n; j++) {                                                      \
        A a = acc[j], b = LOAD(x0[j]);                                                       \
        acc[j] = (OP);                                                                       \
      }                                                                                      \
    }                                                                                        \
  }                                                                                          \
  static void vcomb_##NAME(void *acc_, const void *b_, int64_t n) {                          \
    A *restrict acc = acc_;                                                                  \
    const A *restrict bs = b_;                                                               \
    for (int64_t j = 0; j < n; j++) {                                                        \
      A a = acc[j], b = bs[j];                                                               \
      acc[j] = (OP);                                                                         \
    }                                                                                        \
  }                                                                                          \
  static void hfold_##NAME(void *out, const char *x_, int64_t n, int64_t s) {                \
    A r;                                                                                     \
    if (s == (int64_t)sizeof(T) && n >= 2 * RK_LANES) {                                      \
      const T *restrict x = (const T *)x_;                                                   \
      A p[RK_LANES];                                                                         \
      RK_LANES_FOLD(RK_LANES, A, LOAD, OP, p, x, n);                                         \
      for (int w = RK_LANES / 2; w >= 1; w /= 2)                                             \
        for (int k = 0; k < w; k++) {                                                        \
          A a = p[k], b = p[k + w];                                                          \
          p[k] = (OP);                                                                       \
        }                                                                                    \
      r = p[0];                                                                              \
    } else if (s == (int64_t)sizeof(T) && n >= 16) { /* 8 lanes, combined pairwise */      \
      const T *restrict x = (const T *)x_;                                                   \
      A p[8];                                                                                \
      RK_LANES_FOLD(8, A, LOAD, OP, p, x, n);                                                \
      for (int w = 4; w >= 1; w /= 2)                                                        \
        for (int k = 0; k < w; k++) {                                                        \
          A a = p[k], b = p[k + w];                                                          \
          p[k] = (OP);                                                                       \
        }                                                                                    \
      r = p[0];                                                                              \
    } else { /* short or strided: in index order */                                                   \
      T v;                                                                                   \
      memcpy(&v, x_, sizeof(T));                                                             \
      r = LOAD(v);                                                                           \
      for (int64_t j = 1; j < n; j++) {                                                      \
        memcpy(&v, x_ + j * s, sizeof(T));                                                   \
        A a = r, b = LOAD(v);                                                                \
        r = (OP);                                                                            \
      }                                                                                      \
    }                                                                                        \
    memcpy(out, &r, sizeof(A));                                                              \
  }                                                                                          \
  static void fin_##NAME(char *out_, const char *init_, const void *acc_, int64_t n) {      \
    const A *acc = acc_;                                                                     \
    T iv;                                                                                    \
    memcpy(&iv, init_, sizeof(T));                                                           \
    for (int64_t j = 0; j < n; j++) {                                                        \
      A a = LOAD(iv), b = acc[j];                                                            \
      T r = STORE(OP);                                                                       \
      memcpy(out_ + j * (int64_t)sizeof(T), &r, sizeof(T));                                  \
    }                                                                                        \
  }                                                                                          \
  static void hrows_##NAME(void *out_, const char *x_, int64_t n, int64_t m, int64_t rs) {   \
    A *restrict out = out_;                                                                  \
    A P[RK_LANES][RK_HROWS];                                                                 \
    if (n >= 2 * RK_LANES)                                                                   \
      RK_HROWS_BODY(RK_LANES, T, A, LOAD, OP)                                                \
    else                                                                                     \
      RK_HROWS_BODY(8, T, A, LOAD, OP)                                                       \
    for (int64_t o = 0; o < m; o++) out[o] = P[0][o];                                        \
  }                                                                                          \
  static void hshort_##NAME(void *out_, const char *x_, int64_t n, int64_t m, int64_t rs,      \
                            int64_t s) {                                                     \
    A *restrict out = out_;                                                                  \
    if (n == 3 && rs == 3 * (int64_t)sizeof(T) && s == (int64_t)sizeof(T)) { /* xyz */     \
      const T *restrict x = (const T *)x_;                                                   \
      for (int64_t o = 0; o < m; o++) {                                                      \
        A a = LOAD(x[3 * o]), b = LOAD(x[3 * o + 1]);                                        \
        a = (OP);                                                                            \
        b = LOAD(x[3 * o + 2]);                                                              \
        out[o] = (OP);                                                                       \
      }                                                                                      \
      return;                                                                                \
    }                                                                                        \
    for (int64_t o = 0; o < m; o++) {                                                        \
      T v;                                                                                   \
      memcpy(&v, x_ + o * rs, sizeof(T));                                                    \
      out[o] = LOAD(v);                                                                      \
    }                                                                                        \
    for (int64_t j = 1; j < n; j++)                                                          \
      for (int64_t o = 0; o < m; o++) {                                                      \
        T v;                                                                                 \
        memcpy(&v, x_ + o * rs + j * s, sizeof(T));                                          \
        A a = out[o], b = LOAD(v);                                                           \
        out[o] = (OP);                                                                       \
      }                                                                                      \
  }                                                                                          \
  static const rk_fns fns_##NAME = {vload_##NAME, vacc_##NAME,  vcomb_##NAME,              \
                                    hfold_##NAME, hrows_##NAME, hshort_##NAME,             \
                                    fin_##NAME,   (int32_t)sizeof(A)};

#define RK_INT(S, T, U)                              \
  RK_DEF(add_##S, T, T, RK_ID, RK_ID, (T)(U)((U)a + (U)b)) \
  RK_DEF(mul_##S, T, T, RK_ID, RK_ID, (T)(U)((U)a * (U)b)) \
  RK_DEF(max_##S, T, T, RK_ID, RK_ID, a > b ? a : b)       \
  RK_DEF(min_##S, T, T, RK_ID, RK_ID, a < b ? a : b)       \
  RK_DEF(and_##S, T, T, RK_ID, RK_ID, (T)(a & b))          \
  RK_DEF(or_##S, T, T, RK_ID, RK_ID, (T)(a | b))           \
  RK_DEF(xor_##S, T, T, RK_ID, RK_ID, (T)(a ^ b))
RK_INT(s8, int8_t, uint32_t)
RK_INT(s16, int16_t, uint32_t)
RK_INT(s32, int32_t, uint32_t)
RK_INT(s64, int64_t, uint64_t)
RK_INT(u8, uint8_t, uint32_t)
RK_INT(u16, uint16_t, uint32_t)
RK_INT(u32, uint32_t, uint32_t)
RK_INT(u64, uint64_t, uint64_t)
RK_DEF(and_pred, uint8_t, uint8_t, RK_ID, RK_ID, (uint8_t)(a & b))
RK_DEF(or_pred, uint8_t, uint8_t, RK_ID, RK_ID, (uint8_t)(a | b))
RK_DEF(xor_pred, uint8_t, uint8_t, RK_ID, RK_ID, (uint8_t)(a ^ b))
/* add/mul of f32/f64 and of the 16-bit floats (in f32): an instruction set file may define
 * RK_VARITH(NAME, T, A), which gives fns_NAME its own horizontal kernels (hrows, hfold: the same
 * lanes and tree, so the same bits) and the template's NAME_t for the rest */
#ifdef RK_VARITH
#define RK_AR_DEF(NAME, T, A, LOAD, STORE, OP) RK_DEF(NAME##_t, T, A, LOAD, STORE, OP) RK_VARITH(NAME, T, A)
#else
#define RK_AR_DEF(NAME, T, A, LOAD, STORE, OP) RK_DEF(NAME, T, A, LOAD, STORE, OP)
#endif
RK_AR_DEF(add_f32, float, float, RK_ID, RK_ID, a + b)
RK_AR_DEF(mul_f32, float, float, RK_ID, RK_ID, a * b)
/* f32/f64 maximum/minimum: an instruction set file may define RK_VMINMAX(NAME, T, OP), which
 * gives fns_NAME its own vector kernels for some slots and the template's NAME_t for the rest */
#ifdef RK_VMINMAX
#define RK_MM_DEF(NAME, T, OP) RK_DEF(NAME##_t, T, T, RK_ID, RK_ID, OP(a, b)) RK_VMINMAX(NAME, T, OP)
#else
#define RK_MM_DEF(NAME, T, OP) RK_DEF(NAME, T, T, RK_ID, RK_ID, OP(a, b))
#endif
RK_MM_DEF(max_f32, float, rk_maxf)
RK_MM_DEF(min_f32, float, rk_minf)
RK_AR_DEF(add_f64, double, double, RK_ID, RK_ID, a + b)
RK_AR_DEF(mul_f64, double, double, RK_ID, RK_ID, a * b)
RK_MM_DEF(max_f64, double, rk_maxd)
RK_MM_DEF(min_f64, double, rk_mind)
RK_AR_DEF(add_bf16, uint16_t, float, cj_bf16_to_f32, cj_f32_to_bf16, a + b)
RK_AR_DEF(mul_bf16, uint16_t, float, cj_bf16_to_f32, cj_f32_to_bf16, a * b)
RK_DEF(max_bf16, uint16_t, float, cj_bf16_to_f32, cj_f32_to_bf16, rk_maxf(a, b))
RK_DEF(min_bf16, uint16_t, float, cj_bf16_to_f32, cj_f32_to_bf16, rk_minf(a, b))
RK_AR_DEF(add_f16, uint16_t, float, rk_f16, cj_f32_to_f16, a + b)
RK_AR_DEF(mul_f16, uint16_t, float, rk_f16, cj_f32_to_f16, a * b)
RK_DEF(max_f16, uint16_t, float, rk_f16, cj_f32_to_f16, rk_maxf(a, b))
RK_DEF(min_f16, uint16_t, float, rk_f16, cj_f32_to_f16, rk_minf(a, b))
RK_DEF(add_c64, c64_t, c64_t, RK_ID, RK_ID, ((c64_t){a.re + b.re, a.im + b.im}))
RK_DEF(mul_c64, c64_t, c64_t, RK_ID, RK_ID,
       ((c64_t){a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re}))
RK_DEF(add_c128, c128_t, c128_t, RK_ID, RK_ID, ((c128_t){a.re + b.re, a.im + b.im}))
RK_DEF(mul_c128, c128_t, c128_t, RK_ID, RK_ID,
       ((c128_t){a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re}))

const rk_fns *RK_TABLE(int rop, cj_dtype dt) {
#define RK_CASE(DT, S)                    \
  case CJ_##DT:                           \
    switch (rop) {                        \
      case RK_ADD: return &fns_add_##S;   \
      case RK_MUL: return &fns_mul_##S;   \
      case RK_MAX: return &fns_max_##S;   \
      case RK_MIN: return &fns_min_##S;   \
      case RK_AND: return &fns_and_##S;   \
      case RK_OR: return &fns_or_##S;     \
      case RK_XOR: return &fns_xor_##S;   \
      default: return NULL;               \
    }
#define RK_FCASE(DT, S)                   \
  case CJ_##DT:                           \
    switch (rop) {                        \
      case RK_ADD: return &fns_add_##S;   \
      case RK_MUL: return &fns_mul_##S;   \
      case RK_MAX: return &fns_max_##S;   \
      case RK_MIN: return &fns_min_##S;   \
      default: return NULL;               \
    }
  switch (dt) {
    RK_CASE(S8, s8)
    RK_CASE(S16, s16)
    RK_CASE(S32, s32)
    RK_CASE(S64, s64)
    RK_CASE(U8, u8)
    RK_CASE(U16, u16)
    RK_CASE(U32, u32)
    RK_CASE(U64, u64)
    case CJ_PRED:
      switch (rop) {
        case RK_ADD: case RK_MAX: case RK_OR: return &fns_or_pred;
        case RK_MUL: case RK_MIN: case RK_AND: return &fns_and_pred;
        case RK_XOR: return &fns_xor_pred;
        default: return NULL;
      }
    RK_FCASE(F32, f32)
    RK_FCASE(F64, f64)
    RK_FCASE(BF16, bf16)
    RK_FCASE(F16, f16)
    case CJ_C64:
      return rop == RK_ADD ? &fns_add_c64 : rop == RK_MUL ? &fns_mul_c64 : NULL;
    case CJ_C128:
      return rop == RK_ADD ? &fns_add_c128 : rop == RK_MUL ? &fns_mul_c128 : NULL;
    default: return NULL;
  }
#undef RK_CASE
#undef RK_FCASE
}

/* argmax / argmin across outputs side by side (k_reduce.c's am_chunks), vectorized for this
 * instruction set: the same step as k_reduce.c's typed folds, so the same bits */
#define AM_NAN(c) ((c) != (c))
#define AM_VTYPE(tn, ST)                              \
  AM_ROWS(gt_##tn##_s32, ST, int32_t, >, RK_ID) \
  AM_ROWS(gt_##tn##_s64, ST, int64_t, >, RK_ID) \
  AM_ROWS(lt_##tn##_s32, ST, int32_t, <, RK_ID) \
  AM_ROWS(lt_##tn##_s64, ST, int64_t, <, RK_ID)
AM_VTYPE(f32, float)
AM_VTYPE(f64, double)
#undef AM_VTYPE
#undef AM_NAN

rk_am_rows_fn RK_AM_TABLE(cj_dtype vt, cj_dtype it, bool gt) {
#define AM_V(tn)                                                                     \
  return it == CJ_S32 ? (gt ? am_rows_gt_##tn##_s32 : am_rows_lt_##tn##_s32)        \
                      : (gt ? am_rows_gt_##tn##_s64 : am_rows_lt_##tn##_s64)
#ifdef RK_AM_VROWS /* this instruction set's own kernels, where it has them */
  rk_am_rows_fn v = RK_AM_VROWS(vt, it, gt);
  if (v) return v;
#endif
  if (it != CJ_S32 && it != CJ_S64) return NULL;
  if (vt == CJ_F32) AM_V(f32);
  if (vt == CJ_F64) AM_V(f64);
  return NULL;
#undef AM_V
}
