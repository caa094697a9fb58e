/* cjrt: element type conversions (stablehlo.convert) and bitcasts between widths.
 *
 * Semantics (the spec fixes the exact cases; XLA's choices for the rest):
 *   bool -> x: 0/1. x -> bool: x != 0 (complex: real part != 0).
 *   int -> int: wraps to the destination width (two's complement).
 *   int -> float, float -> float: round to nearest even (once, from the exact value where the
 *     source fits a double).
 *   float -> int: truncate toward zero, saturate to the destination range, NaN -> 0.
 *   complex -> real: the real part; real -> complex: imaginary part 0.
 * Fast loops for the native pairs; every other pair goes through a generic element path with
 * per-type load/store functions chosen at compile time (never a per-element type switch).
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "cpu/ew.h"
#include "cpu/k_linalg.h"
#include "cpu/scalar.h"


/* The loops vectorize with the dynamic cost model and are compiled for AVX-512, AVX2 and
 * baseline x86-64 (as ew.c's kernels): a convert may run in place, and -O2's cheap model
 * leaves every loop that needs an alias check scalar (s32 -> u32 and bool -> u8 ran an
 * element at a time). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
#pragma GCC optimize("tree-vectorize", "vect-cost-model=dynamic")
#define CVT_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define CVT_CLONES
#endif

/* saturating float -> int */
#define SAT(T, TMIN, TMAX, v) \
  ((v) != (v) ? (T)0 : (v) <= (double)(TMIN) ? (T)(TMIN) : (v) >= (double)(TMAX) ? (T)(TMAX) : (T)(v))

#define CVT_FN(name, S, D, BODY)                                                         \
  static void name(void *o_, const void *a_, const void *b_, const void *c_, int64_t n,  \
                   const cj_ew_aux *aux) {                                              \
    (void)b_;                                                                           \
    (void)c_;                                                                           \
    (void)aux;                                                                          \
    D *o = o_;                                                                          \
    const S *a = a_;                                                                    \
    BODY;                                                                               \
  }
#define CVT(name, S, D, EXPR) \
  CVT_CLONES CVT_FN(name, S, D, for (int64_t i = 0; i < n; i++) { S x = a[i]; o[i] = (EXPR); })

/* float -> int with saturation, in the source precision (exact bounds) */
static inline int64_t f2s64(double v) {
  if (v != v) return 0;
  if (v >= 9223372036854775808.0) return INT64_MAX;
  if (v <= -9223372036854775808.0) return INT64_MIN;
  return (int64_t)v;
}
static inline uint64_t f2u64(double v) {
  if (v != v || v <= 0) return 0;
  if (v >= 18446744073709551616.0) return UINT64_MAX;
  return (uint64_t)v;
}
static inline int32_t f2s32(double v) {
  if (v != v) return 0;
  if (v >= 2147483647.0) return INT32_MAX;
  if (v <= -2147483648.0) return INT32_MIN;
  return (int32_t)v;
}

/* native pairs */
CVT(f32_to_f64, float, double, (double)x)
CVT(f64_to_f32, double, float, (float)x)
CVT(f32_to_s32, float, int32_t, f2s32(x))
CVT(f64_to_s32, double, int32_t, f2s32(x))
CVT(f32_to_s64, float, int64_t, f2s64(x))
CVT(f64_to_s64, double, int64_t, f2s64(x))
CVT(s32_to_f32, int32_t, float, (float)x)
CVT(s32_to_f64, int32_t, double, (double)x)
CVT(s64_to_f32, int64_t, float, (float)x)
CVT(s64_to_f64, int64_t, double, (double)x)
CVT(u32_to_f32, uint32_t, float, (float)x)
CVT(u32_to_f64, uint32_t, double, (double)x)
CVT(s32_to_s64, int32_t, int64_t, (int64_t)x)
CVT(s64_to_s32, int64_t, int32_t, (int32_t)(uint32_t)(uint64_t)x)
CVT(u32_to_s32, uint32_t, int32_t, (int32_t)x)
CVT(s32_to_u32, int32_t, uint32_t, (uint32_t)x)
CVT(pred_to_f32, uint8_t, float, (float)(x != 0))
CVT(pred_to_s32, uint8_t, int32_t, (int32_t)(x != 0))
CVT(f32_to_pred, float, uint8_t, (uint8_t)(x != 0))
CVT(s32_to_pred, int32_t, uint8_t, (uint8_t)(x != 0))
/* bf16/f16 <-> f32: the GEMMs' vectorized row conversions (k_dot.c), same values */
CVT_FN(bf16_to_f32, uint16_t, float, cj_la_cvi_pick()(a, 0, o, 0, 1, n, true))
CVT_FN(f32_to_bf16, float, uint16_t, cj_la_cvo_pick()(a, o, n, true))
CVT_FN(f16_to_f32, uint16_t, float, cj_la_cvi_pick()(a, 0, o, 0, 1, n, false))
CVT_FN(f32_to_f16, float, uint16_t, cj_la_cvo_pick()(a, o, n, false))
CVT(f32_to_c64, float, c64_t, ((c64_t){x, 0.0f}))
CVT(f64_to_c128, double, c128_t, ((c128_t){x, 0.0}))
CVT(c64_to_c128, c64_t, c128_t, ((c128_t){x.re, x.im}))
CVT(c128_to_c64, c128_t, c64_t, ((c64_t){(float)x.re, (float)x.im}))
CVT(c64_to_f32, c64_t, float, x.re)
CVT(c128_to_f64, c128_t, double, x.re)

/* ---- the generic path ---- */

typedef struct uval {
  int kind; /* 0 signed int, 1 unsigned int, 2 float, 3 complex */
  int64_t i;
  double re, im;
} uval;

typedef uval (*load_fn)(const void *p, int64_t i, cj_dtype dt);
typedef void (*store_fn)(void *p, int64_t i, cj_dtype dt, uval v);

static uval ld_pred(const void *p, int64_t i, cj_dtype dt) {
  (void)dt;
  uval v = {1, ((const uint8_t *)p)[i] != 0, 0, 0};
  return v;
}
static uval ld_sint(const void *p, int64_t i, cj_dtype dt) {
  uval v = {0, cj_elem_get_i64(dt, p, (size_t)i), 0, 0};
  return v;
}
static uval ld_uint(const void *p, int64_t i, cj_dtype dt) {
  uval v = {1, cj_elem_get_i64(dt, p, (size_t)i), 0, 0};
  return v;
}
static uval ld_float(const void *p, int64_t i, cj_dtype dt) {
  uval v = {2, 0, cj_elem_get_f64(dt, p, (size_t)i), 0};
  return v;
}
static uval ld_c64(const void *p, int64_t i, cj_dtype dt) {
  (void)dt;
  const float *f = p;
  uval v = {3, 0, f[2 * i], f[2 * i + 1]};
  return v;
}
static uval ld_c128(const void *p, int64_t i, cj_dtype dt) {
  (void)dt;
  const double *f = p;
  uval v = {3, 0, f[2 * i], f[2 * i + 1]};
  return v;
}

static double uval_real(uval v) {
  if (v.kind == 0) return (double)v.i;
  if (v.kind == 1) return (double)(uint64_t)v.i;
  return v.re;
}

static void st_pred(void *p, int64_t i, cj_dtype dt, uval v) {
  (void)dt;
  ((uint8_t *)p)[i] = (uint8_t)(v.kind <= 1 ? v.i != 0 : v.re != 0);
}
static void st_int(void *p, int64_t i, cj_dtype dt, uval v) {
  const cj_dtype_info *in = cj_dtype_get(dt);
  int bits = in->bits;
  bool sgn = in->kind == CJ_DK_SINT;
  uint64_t u;
  if (v.kind <= 1) {
    u = (uint64_t)v.i; /* wraps */
  } else {
    double d = v.re;
    if (sgn) {
      double lo = -ldexp(1.0, bits - 1), hi = ldexp(1.0, bits - 1);
      int64_t x = d != d ? 0 : d <= lo ? (int64_t)lo : d >= hi ? (int64_t)(hi - 1) : (int64_t)d;
      if (bits == 64) x = f2s64(d);
      u = (uint64_t)x;
    } else {
      double hi = ldexp(1.0, bits);
      uint64_t x = (d != d || d <= 0) ? 0 : d >= hi ? (uint64_t)(hi - 1) : (uint64_t)d;
      if (bits == 64) x = f2u64(d);
      u = x;
    }
  }
  if (bits < 64) u &= (1ull << bits) - 1;
  memcpy((char *)p + i * in->bytes, &u, (size_t)in->bytes);
}
static void st_float(void *p, int64_t i, cj_dtype dt, uval v) {
  const cj_dtype_info *in = cj_dtype_get(dt);
  uint64_t bits;
  if (v.kind == 1 && dt != CJ_F64 && dt != CJ_F32) {
    bits = cj_float_encode(dt, (double)(uint64_t)v.i);
  } else if (v.kind == 0 && (dt == CJ_F32)) {
    float f = (float)v.i;
    memcpy(&bits, &f, 4);
  } else if (v.kind == 1 && dt == CJ_F32) {
    float f = (float)(uint64_t)v.i;
    memcpy(&bits, &f, 4);
  } else if (v.kind == 0 && dt == CJ_F64) {
    double d = (double)v.i;
    memcpy(&bits, &d, 8);
  } else if (v.kind == 1 && dt == CJ_F64) {
    double d = (double)(uint64_t)v.i;
    memcpy(&bits, &d, 8);
  } else {
    bits = cj_float_encode(dt, uval_real(v));
  }
  memcpy((char *)p + i * in->bytes, &bits, (size_t)in->bytes);
}
static void st_c64(void *p, int64_t i, cj_dtype dt, uval v) {
  (void)dt;
  float *f = p;
  f[2 * i] = v.kind == 1 ? (float)(uint64_t)v.i : v.kind == 0 ? (float)v.i : (float)v.re;
  f[2 * i + 1] = v.kind == 3 ? (float)v.im : 0.0f;
}
static void st_c128(void *p, int64_t i, cj_dtype dt, uval v) {
  (void)dt;
  double *f = p;
  f[2 * i] = uval_real(v);
  f[2 * i + 1] = v.kind == 3 ? v.im : 0.0;
}

static load_fn loader(cj_dtype dt) {
  switch (cj_dtype_kindof(dt)) {
    case CJ_DK_BOOL: return ld_pred;
    case CJ_DK_SINT: return ld_sint;
    case CJ_DK_UINT: return ld_uint;
    case CJ_DK_FLOAT: return ld_float;
    case CJ_DK_COMPLEX: return dt == CJ_C64 ? ld_c64 : ld_c128;
    default: return NULL;
  }
}
static store_fn storer(cj_dtype dt) {
  switch (cj_dtype_kindof(dt)) {
    case CJ_DK_BOOL: return st_pred;
    case CJ_DK_SINT:
    case CJ_DK_UINT: return st_int;
    case CJ_DK_FLOAT: return st_float;
    case CJ_DK_COMPLEX: return dt == CJ_C64 ? st_c64 : st_c128;
    default: return NULL;
  }
}

static void cvt_generic(void *o, const void *a, const void *b, const void *c, int64_t n,
                        const cj_ew_aux *aux) {
  (void)b;
  (void)c;
  load_fn ld = loader(aux->src);
  store_fn st = storer(aux->dt);
  for (int64_t i = 0; i < n; i++) st(o, i, aux->dt, ld(a, i, aux->src));
}

/* same-width integer reinterpretation and identical types: a copy */
static void cvt_copy(void *o, const void *a, const void *b, const void *c, int64_t n,
                     const cj_ew_aux *aux) {
  (void)b;
  (void)c;
  if (o != a) memmove(o, a, (size_t)n * (size_t)cj_dtype_bytes(aux->dt));
}

/* integer -> integer of 8..64 bits: two's complement wrap (truncation, sign or zero
 * extension), what the generic path computes, as a cast the compiler vectorizes (JAX's
 * threefry converts its u64 counters to u32 halves on every random draw) */
#define ICVT_SRCS(X) \
  X(S8, int8_t) X(S16, int16_t) X(S32, int32_t) X(S64, int64_t) \
  X(U8, uint8_t) X(U16, uint16_t) X(U32, uint32_t) X(U64, uint64_t)
#define ICVT_FROM(SN, ST)                                              \
  CVT(ic_##SN##_S8, ST, int8_t, (int8_t)(uint8_t)(uint64_t)x)          \
  CVT(ic_##SN##_S16, ST, int16_t, (int16_t)(uint16_t)(uint64_t)x)      \
  CVT(ic_##SN##_S32, ST, int32_t, (int32_t)(uint32_t)(uint64_t)x)      \
  CVT(ic_##SN##_S64, ST, int64_t, (int64_t)(uint64_t)x)                \
  CVT(ic_##SN##_U8, ST, uint8_t, (uint8_t)(uint64_t)x)                 \
  CVT(ic_##SN##_U16, ST, uint16_t, (uint16_t)(uint64_t)x)              \
  CVT(ic_##SN##_U32, ST, uint32_t, (uint32_t)(uint64_t)x)              \
  CVT(ic_##SN##_U64, ST, uint64_t, (uint64_t)x)
ICVT_SRCS(ICVT_FROM)
#define ICVT_ROW(SN, ST) {ic_##SN##_S8, ic_##SN##_S16, ic_##SN##_S32, ic_##SN##_S64, \
                          ic_##SN##_U8, ic_##SN##_U16, ic_##SN##_U32, ic_##SN##_U64},
static const cj_ew_fn icvt_table[8][8] = {ICVT_SRCS(ICVT_ROW)};
#undef ICVT_ROW
#undef ICVT_FROM
#undef ICVT_SRCS
_Static_assert(CJ_S16 == CJ_S8 + 1 && CJ_S32 == CJ_S8 + 2 && CJ_S64 == CJ_S8 + 3 &&
                   CJ_U8 == CJ_S8 + 4 && CJ_U16 == CJ_S8 + 5 && CJ_U32 == CJ_S8 + 6 &&
                   CJ_U64 == CJ_S8 + 7,
               "icvt_table is indexed by dtype - CJ_S8");

static cj_ew_fn int_cvt(cj_dtype src, cj_dtype dst) {
  if (src < CJ_S8 || src > CJ_U64 || dst < CJ_S8 || dst > CJ_U64) return NULL;
  return icvt_table[src - CJ_S8][dst - CJ_S8];
}

/* bool, f32 and f64 to and from every integer width, and bool to and from f64: the generic
 * path's values as loops the compiler vectorizes (masks turned into u8 or i64, u8 images
 * into f32, f32 into s8/u8 quantized values; the generic path's per-element calls cost
 * ~100x XLA's time on jnp.unpackbits). float -> int truncates toward zero and saturates to
 * the destination range, NaN -> 0, as the generic path does. */
#define SATI(T, TMIN, TMAX, v) SAT(T, TMIN, TMAX, (double)(v))
#define NCVT_INTS(X)                                                                 \
  X(S8, int8_t, SATI(int8_t, INT8_MIN, INT8_MAX, x))                                  \
  X(S16, int16_t, SATI(int16_t, INT16_MIN, INT16_MAX, x))                             \
  X(S32, int32_t, f2s32((double)x))                                                   \
  X(S64, int64_t, f2s64((double)x))                                                   \
  X(U8, uint8_t, SATI(uint8_t, 0, UINT8_MAX, x))                                      \
  X(U16, uint16_t, SATI(uint16_t, 0, UINT16_MAX, x))                                  \
  X(U32, uint32_t, SATI(uint32_t, 0, UINT32_MAX, x))                                  \
  X(U64, uint64_t, f2u64((double)x))
#define NCVT_FNS(IN, IT, FROMF)                                \
  CVT(pred_to_##IN, uint8_t, IT, (IT)(x != 0))               \
  CVT(IN##_to_pred, IT, uint8_t, (uint8_t)(x != 0))          \
  CVT(IN##_to_f32x, IT, float, (float)x)                     \
  CVT(IN##_to_f64x, IT, double, (double)x)                   \
  CVT(f32_to_##IN##x, float, IT, FROMF)                      \
  CVT(f64_to_##IN##x, double, IT, FROMF)
NCVT_INTS(NCVT_FNS)
#undef NCVT_FNS
CVT(pred_to_f64, uint8_t, double, (double)(x != 0))
CVT(f64_to_pred, double, uint8_t, (uint8_t)(x != 0))

/* the pairs above with an integer on one side; NULL for others */
static cj_ew_fn num_cvt(cj_dtype src, cj_dtype dst) {
#define NCVT_PICK(IN, IT, FROMF)                       \
  if (src == CJ_##IN) {                                 \
    if (dst == CJ_PRED) return IN##_to_pred;            \
    if (dst == CJ_F32) return IN##_to_f32x;             \
    if (dst == CJ_F64) return IN##_to_f64x;             \
  }                                                     \
  if (dst == CJ_##IN) {                                 \
    if (src == CJ_PRED) return pred_to_##IN;            \
    if (src == CJ_F32) return f32_to_##IN##x;           \
    if (src == CJ_F64) return f64_to_##IN##x;           \
  }
  NCVT_INTS(NCVT_PICK)
#undef NCVT_PICK
  if (src == CJ_PRED && dst == CJ_F64) return pred_to_f64;
  if (src == CJ_F64 && dst == CJ_PRED) return f64_to_pred;
  return NULL;
}
#undef NCVT_INTS
#undef SATI

cj_ew_fn cj_cvt_lookup(cj_dtype src, cj_dtype dst) {
  if (!loader(src) || !storer(dst)) return NULL;
  if (src == dst) return cvt_copy;
#define P(a, b) (src == CJ_##a && dst == CJ_##b)
  if (P(F32, F64)) return f32_to_f64;
  if (P(F64, F32)) return f64_to_f32;
  if (P(F32, S32)) return f32_to_s32;
  if (P(F64, S32)) return f64_to_s32;
  if (P(F32, S64)) return f32_to_s64;
  if (P(F64, S64)) return f64_to_s64;
  if (P(S32, F32)) return s32_to_f32;
  if (P(S32, F64)) return s32_to_f64;
  if (P(S64, F32)) return s64_to_f32;
  if (P(S64, F64)) return s64_to_f64;
  if (P(U32, F32)) return u32_to_f32;
  if (P(U32, F64)) return u32_to_f64;
  if (P(S32, S64)) return s32_to_s64;
  if (P(S64, S32)) return s64_to_s32;
  if (P(U32, S32)) return u32_to_s32;
  if (P(S32, U32)) return s32_to_u32;
  if (P(PRED, F32)) return pred_to_f32;
  if (P(PRED, S32)) return pred_to_s32;
  if (P(F32, PRED)) return f32_to_pred;
  if (P(S32, PRED)) return s32_to_pred;
  if (P(BF16, F32)) return bf16_to_f32;
  if (P(F32, BF16)) return f32_to_bf16;
  if (P(F16, F32)) return f16_to_f32;
  if (P(F32, F16)) return f32_to_f16;
  if (P(F32, C64)) return f32_to_c64;
  if (P(F64, C128)) return f64_to_c128;
  if (P(C64, C128)) return c64_to_c128;
  if (P(C128, C64)) return c128_to_c64;
  if (P(C64, F32)) return c64_to_f32;
  if (P(C128, F64)) return c128_to_f64;
#undef P
  cj_ew_fn ic = int_cvt(src, dst);
  if (!ic) ic = num_cvt(src, dst);
  return ic ? ic : cvt_generic;
}

/* ---- bitcasts between widths ---- */

void cj_bitcast_copy(void *out, const void *in, int64_t nbytes_out, int in_bits, int out_bits,
                     int64_t n_out) {
  if (in_bits % 8 == 0 && out_bits % 8 == 0) {
    memcpy(out, in, (size_t)nbytes_out);
    return;
  }
  /* sub-byte: elements of in_bits each stored in ceil(in_bits/8) bytes; repack the bit stream */
  int in_bytes = (in_bits + 7) / 8, out_bytes = (out_bits + 7) / 8;
  const uint8_t *src = in;
  uint8_t *dst = out;
  memset(dst, 0, (size_t)nbytes_out);
  for (int64_t i = 0; i < n_out; i++) {
    uint64_t v = 0;
    for (int b = 0; b < out_bits; b++) {
      int64_t bit = i * out_bits + b;
      int64_t e = bit / in_bits, eb = bit % in_bits;
      uint64_t word = 0;
      memcpy(&word, src + e * in_bytes, (size_t)in_bytes);
      v |= ((word >> eb) & 1ull) << b;
    }
    memcpy(dst + i * out_bytes, &v, (size_t)out_bytes);
  }
}
