/* cjrt: helpers shared by the gather, sort and window families (see k_gather.h).
 *
 * The combiners are compiled for several instruction sets (function multiversioning) and
 * vectorized with the dynamic cost model, as the elementwise kernels are (ew.c). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
#pragma GCC optimize("tree-vectorize", "vect-cost-model=dynamic")
#define KG_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define KG_CLONES
#endif
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/k_gather.h"
#include "cpu/scalar.h"

/* ======================================================================== tensors */

static CJ_MUST_USE cj_status describe(cj_lw *L, cj_op *op, cj_value *v, bool allow_quant, cj_lw_tensor *out) {
  const cj_type *t = v->type;
  if (!allow_quant || !cj_type_is_quant(t)) return cj_lw_tensor_of(L, op, v, out);
  if (cj_type_is_static(t) && t->elem->quant && t->elem->quant->axis >= 0)
    return cj_op_error(op, CJ_UNIMPLEMENTED, "per-axis quantized types are not supported here");
  return cj_lw_storage_tensor_of(L, op, v, out);
}

cj_status cj_kg_operand(cj_lw *L, cj_op *op, uint32_t i, bool allow_quant, cj_lw_tensor *out) {
  if (i >= op->nopnds) return cj_op_error(op, CJ_INTERNAL, "operand %u missing", i);
  return describe(L, op, op->operands[i], allow_quant, out);
}

cj_status cj_kg_result(cj_lw *L, cj_op *op, uint32_t i, bool allow_quant, cj_lw_tensor *out) {
  if (i >= op->nresults) return cj_op_error(op, CJ_INTERNAL, "result %u missing", i);
  cj_value *v = &op->results[i];
  if (!cj_type_is_quant(v->type) || !allow_quant) return cj_lw_result(L, op, i, out);
  int64_t bytes = cj_lw_type_bytes(v->type);
  if (bytes < 0)
    return cj_op_error(op, CJ_UNIMPLEMENTED, "result %u has a dynamic or unsupported type", i);
  int32_t b = cj_lw_new_buf(L, bytes, CJ_BK_ARENA);
  CJ_RETURN_IF_ERROR(cj_lw_bind(L, v, 1, &b));
  return describe(L, op, v, true, out);
}

cj_dtype cj_kg_scalar_dtype(const cj_type *t) {
  if (!cj_type_is_static(t) || t->rank != 0 || cj_type_is_quant(t)) return CJ_INVALID;
  return t->dtype;
}

bool cj_kg_i64s(const cj_op *op, const char *name, int64_t *out, int64_t cap, int64_t *n) {
  int64_t k = 0;
  if (!cj_op_get_i64s(op, name, out, cap, &k)) return false;
  if (k > cap) return false;
  *n = k;
  return true;
}

cj_status cj_kg_padding(const cj_op *op, int32_t rank, int64_t *lo, int64_t *hi) {
  for (int32_t d = 0; d < rank; d++) lo[d] = hi[d] = 0;
  const cj_attr *a = cj_op_attr(op, "padding");
  if (!a) return NULL;
  int64_t v[2 * CJ_MAX_RANK], n = 0;
  if (!cj_attr_get_i64s(a, v, 2 * CJ_MAX_RANK, &n) || n != 2 * (int64_t)rank)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "padding must hold %d x 2 values", rank);
  for (int32_t d = 0; d < rank; d++) {
    lo[d] = v[2 * d];
    hi[d] = v[2 * d + 1];
  }
  return NULL;
}

/* ======================================================================== index readers */

#define RD(name, T)                          \
  static int64_t rd_##name(const char *p) {  \
    T v;                                     \
    memcpy(&v, p, sizeof v);                 \
    return (int64_t)v;                       \
  }
RD(s8, int8_t)
RD(s16, int16_t)
RD(s32, int32_t)
RD(s64, int64_t)
RD(u8, uint8_t)
RD(u16, uint16_t)
RD(u32, uint32_t)
static int64_t rd_u64(const char *p) {
  uint64_t v;
  memcpy(&v, p, sizeof v);
  return v > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)v;
}
/* sub-byte integers take one byte, the value in the low bits */
static int64_t rd_s4(const char *p) { return (int64_t)(int8_t)(uint8_t)((uint8_t)*p << 4) >> 4; }
static int64_t rd_u4(const char *p) { return (int64_t)((uint8_t)*p & 0xf); }
static int64_t rd_s2(const char *p) { return (int64_t)(int8_t)(uint8_t)((uint8_t)*p << 6) >> 6; }
static int64_t rd_u2(const char *p) { return (int64_t)((uint8_t)*p & 0x3); }
static int64_t rd_u1(const char *p) { return (int64_t)((uint8_t)*p & 0x1); }
static int64_t rd_s1(const char *p) { return ((uint8_t)*p & 1) ? -1 : 0; }

#define RDB(name, T)                                                                   \
  static void rdb_##name(const char *p, int64_t stride, int64_t n, int64_t *out) {    \
    for (int64_t i = 0; i < n; i++) {                                                 \
      T v;                                                                            \
      memcpy(&v, p + i * stride, sizeof v);                                           \
      out[i] = (int64_t)v;                                                            \
    }                                                                                 \
  }
RDB(s8, int8_t)
RDB(s16, int16_t)
RDB(s32, int32_t)
RDB(s64, int64_t)
RDB(u8, uint8_t)
RDB(u16, uint16_t)
RDB(u32, uint32_t)
static void rdb_u64(const char *p, int64_t stride, int64_t n, int64_t *out) {
  for (int64_t i = 0; i < n; i++) out[i] = rd_u64(p + i * stride);
}

kg_idx_block_fn cj_kg_idx_block_reader(cj_dtype dt) {
  switch (dt) {
    case CJ_S8: return rdb_s8;
    case CJ_S16: return rdb_s16;
    case CJ_S32: return rdb_s32;
    case CJ_S64: return rdb_s64;
    case CJ_U8: return rdb_u8;
    case CJ_U16: return rdb_u16;
    case CJ_U32: return rdb_u32;
    case CJ_U64: return rdb_u64;
    default: return NULL;
  }
}

kg_idx_fn cj_kg_idx_reader(cj_dtype dt) {
  switch (dt) {
    case CJ_S8: return rd_s8;
    case CJ_S16: return rd_s16;
    case CJ_S32: return rd_s32;
    case CJ_S64: return rd_s64;
    case CJ_U8: return rd_u8;
    case CJ_U16: return rd_u16;
    case CJ_U32: return rd_u32;
    case CJ_U64: return rd_u64;
    case CJ_S4: return rd_s4;
    case CJ_U4: return rd_u4;
    case CJ_S2: return rd_s2;
    case CJ_U2: return rd_u2;
    case CJ_U1: return rd_u1;
    case CJ_S1: return rd_s1;
    default: return NULL;
  }
}

/* ======================================================================== combiners */



/* f16 / bf16 maximum and minimum on the bit patterns: the values of the round trip through f32
 * and cj_maxf / cj_minf, with integer compares and selects only, so that the run loops below
 * vectorize (the scalar conversions were most of f16 max pooling's time). h16_key orders
 * sign-magnitude patterns as unsigned integers (-0 just below +0, so max(-0, +0) = +0 and
 * min(-0, +0) = -0 as cj_maxf's bit and/or give). A NaN operand gives that NaN quieted as the
 * conversion back does (f16: sign kept, payload dropped; bf16: payload kept, quiet bit set), a
 * NaN a before a NaN b. `inf` is the format's infinity pattern. */
static inline uint16_t h16_key(uint16_t h) {
  return (uint16_t)(h ^ ((0u - (uint32_t)(h >> 15)) | 0x8000u));
}
static inline uint16_t h16_qnan_f16(uint16_t h) { return (uint16_t)((h & 0x8000u) | 0x7e00u); }
static inline uint16_t h16_qnan_bf16(uint16_t h) { return (uint16_t)(h | 0x40u); }
static inline uint16_t h16_nan_sel(uint16_t a, uint16_t b, uint16_t m, uint16_t inf,
                                   uint16_t qa, uint16_t qb) {
  m = (b & 0x7fffu) > inf ? qb : m;
  return (a & 0x7fffu) > inf ? qa : m;
}
static inline uint16_t h16_max(uint16_t a, uint16_t b, uint16_t inf, uint16_t qa, uint16_t qb) {
  return h16_nan_sel(a, b, h16_key(a) >= h16_key(b) ? a : b, inf, qa, qb);
}
static inline uint16_t h16_min(uint16_t a, uint16_t b, uint16_t inf, uint16_t qa, uint16_t qb) {
  return h16_nan_sel(a, b, h16_key(a) <= h16_key(b) ? a : b, inf, qa, qb);
}

/* cj_f16_to_f32 and cj_f32_to_f16 (the same bits for every input, checked exhaustively) as
 * selects without branches or calls, so that f16 sums and products over runs vectorize
 * (the first is scalar.h's cj_f16_bits_to_f32): f32 below 2^-14 round to
 * f16 subnormals by the f32 addition of 0.5 (whose ulp is 2^-24, ties to even); the others
 * round on the bits (the carry may reach the exponent, and from 65520 up it gives inf). */
static inline float h16_to_f32(uint16_t h) { return cj_f16_bits_to_f32(h); }
static inline uint16_t h16_from_f32(float f) {
  uint32_t x = cj_f32_bits(f), ax = x & 0x7fffffffu, sign = (x >> 16) & 0x8000u;
  uint32_t hs = cj_f32_bits(cj_bits_f32(ax) + 0.5f) - 0x3f000000u;
  uint32_t hn = (ax + 0xc8000fffu + ((ax >> 13) & 1u)) >> 13;
  uint32_t sub = 0u - (uint32_t)(ax < 0x38800000u), inf = 0u - (uint32_t)(ax >= 0x477ff000u);
  uint32_t nan = 0u - (uint32_t)(ax > 0x7f800000u);
  uint32_t h = (hs & sub) | (hn & ~sub);
  h = (h & ~inf) | (0x7c00u & inf);
  h = (h & ~nan) | (0x7e00u & nan);
  return (uint16_t)(sign | h);
}
/* a NaN operand quieted, b's before a's, as the scalar path gave (x86's addss/mulss keep their
 * first source's NaN, and the compiler had put b there), whichever order the vector
 * instructions take them in; masks rather than selects keep the loops vectorized */
static inline uint16_t h16_arith_nan(uint16_t a, uint16_t b, uint16_t r) {
  uint32_t an = 0u - (uint32_t)((a & 0x7fffu) > 0x7c00u), bn = 0u - (uint32_t)((b & 0x7fffu) > 0x7c00u);
  uint32_t q = (bn & h16_qnan_f16(b)) | (~bn & h16_qnan_f16(a));
  return (uint16_t)(((an | bn) & q) | (~(an | bn) & r));
}

/* T: storage type; the body runs on a and b loaded from storage and stores EXPR */
#define COMB(name, T, EXPR)                                                            \
  KG_CLONES static void c_##name(char *acc, int64_t as, const char *x, int64_t xs,      \
                                 int64_t n) {                                           \
    if (as == (int64_t)sizeof(T) && xs == (int64_t)sizeof(T)) {                         \
      char *restrict A = acc;                                                           \
      const char *restrict X = x;                                                       \
      for (int64_t i = 0; i < n; i++) {                                                 \
        T a, b;                                                                         \
        memcpy(&a, A + i * (int64_t)sizeof(T), sizeof(T));                              \
        memcpy(&b, X + i * (int64_t)sizeof(T), sizeof(T));                              \
        a = (EXPR);                                                                     \
        memcpy(A + i * (int64_t)sizeof(T), &a, sizeof(T));                              \
      }                                                                                 \
      return;                                                                           \
    }                                                                                   \
    for (int64_t i = 0; i < n; i++) {                                                   \
      T a, b;                                                                           \
      memcpy(&a, acc + i * as, sizeof(T));                                              \
      memcpy(&b, x + i * xs, sizeof(T));                                                \
      a = (EXPR);                                                                       \
      memcpy(acc + i * as, &a, sizeof(T));                                              \
    }                                                                                   \
  }                                                                                     \
  static void s_##name(char *res, const int64_t *off, const char *x, int64_t xs,        \
                       int64_t n) {                                                     \
    for (int64_t i = 0; i < n; i++) {                                                   \
      if (off[i] < 0) continue;                                                         \
      char *r = res + off[i] * (int64_t)sizeof(T);                                      \
      T a, b;                                                                           \
      memcpy(&a, r, sizeof(T));                                                         \
      memcpy(&b, x + i * xs, sizeof(T));                                                \
      a = (EXPR);                                                                       \
      memcpy(r, &a, sizeof(T));                                                         \
    }                                                                                   \
  }                                                                                     \
  static void p_##name(char *dst, const char *src, int64_t n, const char *init) {       \
    T a, b;                                                                             \
    memcpy(&a, init, sizeof(T));                                                        \
    for (int64_t i = 0; i < n; i++) {                                                   \
      memcpy(&b, src + i * (int64_t)sizeof(T), sizeof(T));                              \
      a = (EXPR);                                                                       \
      memcpy(dst + i * (int64_t)sizeof(T), &a, sizeof(T));                              \
    }                                                                                   \
  }

#define COMB_INT(S, T, U)                               \
  COMB(add_##S, T, (T)(U)((U)a + (U)b))                 \
  COMB(mul_##S, T, (T)(U)((U)a * (U)b))                 \
  COMB(max_##S, T, a > b ? a : b)                       \
  COMB(min_##S, T, a < b ? a : b)                       \
  COMB(and_##S, T, (T)(a & b))                          \
  COMB(or_##S, T, (T)(a | b))                           \
  COMB(xor_##S, T, (T)(a ^ b))
COMB_INT(s8, int8_t, uint32_t)
COMB_INT(s16, int16_t, uint32_t)
COMB_INT(s32, int32_t, uint32_t)
COMB_INT(s64, int64_t, uint64_t)
COMB_INT(u8, uint8_t, uint32_t)
COMB_INT(u16, uint16_t, uint32_t)
COMB_INT(u32, uint32_t, uint32_t)
COMB_INT(u64, uint64_t, uint64_t)
COMB(and_pred, uint8_t, (uint8_t)((a & b) & 1))
COMB(or_pred, uint8_t, (uint8_t)((a | b) & 1))
COMB(xor_pred, uint8_t, (uint8_t)((a ^ b) & 1))
COMB(add_f32, float, a + b)
COMB(mul_f32, float, a *b)
COMB(max_f32, float, cj_maxf(a, b))
COMB(min_f32, float, cj_minf(a, b))
COMB(add_f64, double, a + b)
COMB(mul_f64, double, a *b)
COMB(max_f64, double, cj_maxd(a, b))
COMB(min_f64, double, cj_mind(a, b))
COMB(add_bf16, uint16_t, cj_f32_to_bf16(cj_bf16_to_f32(a) + cj_bf16_to_f32(b)))
COMB(mul_bf16, uint16_t, cj_f32_to_bf16(cj_bf16_to_f32(a) * cj_bf16_to_f32(b)))
COMB(max_bf16, uint16_t, h16_max(a, b, 0x7f80u, h16_qnan_bf16(a), h16_qnan_bf16(b)))
COMB(min_bf16, uint16_t, h16_min(a, b, 0x7f80u, h16_qnan_bf16(a), h16_qnan_bf16(b)))
COMB(add_f16, uint16_t, h16_arith_nan(a, b, h16_from_f32(h16_to_f32(a) + h16_to_f32(b))))
COMB(mul_f16, uint16_t, h16_arith_nan(a, b, h16_from_f32(h16_to_f32(a) * h16_to_f32(b))))
COMB(max_f16, uint16_t, h16_max(a, b, 0x7c00u, h16_qnan_f16(a), h16_qnan_f16(b)))
COMB(min_f16, uint16_t, h16_min(a, b, 0x7c00u, h16_qnan_f16(a), h16_qnan_f16(b)))
COMB(add_c64, c64_t, ((c64_t){a.re + b.re, a.im + b.im}))
/* complex products with XLA:CPU's contraction (one product fused per part): these match the
 * values XLA computes, e.g. for cumulative products */
COMB(mul_c64, c64_t, ((c64_t){fmaf(a.re, b.re, -(a.im * b.im)), fmaf(a.im, b.re, a.re * b.im)}))
COMB(add_c128, c128_t, ((c128_t){a.re + b.re, a.im + b.im}))
COMB(mul_c128, c128_t, ((c128_t){fma(a.re, b.re, -(a.im * b.im)), fma(a.im, b.re, a.re * b.im)}))

/* replace: acc = x, any element size */
#define REPL(name, ES)                                                                  \
  static void c_##name(char *acc, int64_t as, const char *x, int64_t xs, int64_t n) {   \
    if (as == ES && xs == ES) {                                                         \
      memmove(acc, x, (size_t)(n * ES));                                                \
      return;                                                                           \
    }                                                                                   \
    for (int64_t i = 0; i < n; i++) memcpy(acc + i * as, x + i * xs, ES);               \
  }                                                                                     \
  static void s_##name(char *res, const int64_t *off, const char *x, int64_t xs,        \
                       int64_t n) {                                                     \
    for (int64_t i = 0; i < n; i++)                                                     \
      if (off[i] >= 0) memcpy(res + off[i] * ES, x + i * xs, ES);                       \
  }
REPL(repl1, 1)
REPL(repl2, 2)
REPL(repl4, 4)
REPL(repl8, 8)
REPL(repl16, 16)
static void c_keep(char *acc, int64_t as, const char *x, int64_t xs, int64_t n) {
  (void)acc, (void)as, (void)x, (void)xs, (void)n;
}
static void s_keep(char *res, const int64_t *off, const char *x, int64_t xs, int64_t n) {
  (void)res, (void)off, (void)x, (void)xs, (void)n;
}

#define GOT(S)                  \
  do {                          \
    if (c) *c = c_##S;          \
    if (sc) *sc = s_##S;        \
    if (ps) *ps = p_##S;        \
    return true;                \
  } while (0)
#define GOT2(S)                 \
  do {                          \
    if (c) *c = c_##S;          \
    if (sc) *sc = s_##S;        \
    if (ps) *ps = NULL;         \
    return true;                \
  } while (0)
static bool lookup(int kop, cj_dtype dt, kg_comb_fn *c, kg_sc_fn *sc, kg_scan_fn *ps) {
  if (kop == KG_KEEP) GOT2(keep);
  if (kop == KG_REPLACE) {
    switch (cj_dtype_bytes(dt)) {
      case 1: GOT2(repl1);
      case 2: GOT2(repl2);
      case 4: GOT2(repl4);
      case 8: GOT2(repl8);
      case 16: GOT2(repl16);
      default: return false;
    }
  }
#define ARITH(S)                                    \
  case KG_ADD: GOT(add_##S);                        \
  case KG_MUL: GOT(mul_##S);                        \
  case KG_MAX: GOT(max_##S);                        \
  case KG_MIN: GOT(min_##S);
#define INTS(DT, S)                                 \
  case CJ_##DT:                                     \
    switch (kop) {                                  \
      ARITH(S)                                      \
      case KG_AND: GOT(and_##S);                    \
      case KG_OR: GOT(or_##S);                      \
      case KG_XOR: GOT(xor_##S);                    \
      default: return false;                        \
    }
#define FLOATS(DT, S)                               \
  case CJ_##DT:                                     \
    switch (kop) {                                  \
      ARITH(S)                                      \
      default: return false;                        \
    }
  switch (dt) {
    INTS(S8, s8)
    INTS(S16, s16)
    INTS(S32, s32)
    INTS(S64, s64)
    INTS(U8, u8)
    INTS(U16, u16)
    INTS(U32, u32)
    INTS(U64, u64)
    FLOATS(F32, f32)
    FLOATS(F64, f64)
    FLOATS(BF16, bf16)
    FLOATS(F16, f16)
    case CJ_PRED:
      switch (kop) {
        case KG_ADD: case KG_MAX: case KG_OR: GOT(or_pred);
        case KG_MUL: case KG_MIN: case KG_AND: GOT(and_pred);
        case KG_XOR: GOT(xor_pred);
        default: return false;
      }
    case CJ_C64:
      if (kop == KG_ADD) GOT(add_c64);
      if (kop == KG_MUL) GOT(mul_c64);
      return false;
    case CJ_C128:
      if (kop == KG_ADD) GOT(add_c128);
      if (kop == KG_MUL) GOT(mul_c128);
      return false;
    default: return false;
  }
#undef INTS
#undef FLOATS
#undef ARITH
}
#undef GOT
#undef GOT2

kg_comb_fn cj_kg_comb_lookup(int kop, cj_dtype dt) {
  kg_comb_fn c = NULL;
  return lookup(kop, dt, &c, NULL, NULL) ? c : NULL;
}

kg_sc_fn cj_kg_sc_lookup(int kop, cj_dtype dt) {
  kg_sc_fn sc = NULL;
  return lookup(kop, dt, NULL, &sc, NULL) ? sc : NULL;
}

kg_scan_fn cj_kg_scan_lookup(int kop, cj_dtype dt) {
  kg_scan_fn ps = NULL;
  return lookup(kop, dt, NULL, NULL, &ps) ? ps : NULL;
}

int cj_kg_body_binop(const cj_op *op, uint32_t r, cj_dtype dt) {
  if (r >= op->nregions) return -1;
  cj_block *b = op->regions[r].first;
  if (!b || b->next || b->nargs != 2) return -1;
  if (cj_kg_scalar_dtype(b->args[0].type) != dt || cj_kg_scalar_dtype(b->args[1].type) != dt) return -1;
  cj_op *ret = b->last;
  if (!ret || !(cj_op_info_get(ret->kind)->flags & CJ_OPF_TERMINATOR) || ret->nopnds != 1)
    return -1;
  if (b->nops == 1) {
    if (ret->operands[0] == &b->args[1]) return KG_REPLACE;
    if (ret->operands[0] == &b->args[0]) return KG_KEEP;
    return -1;
  }
  if (b->nops != 2) return -1;
  cj_op *f = b->first;
  if (f->nopnds != 2 || f->nresults != 1 || f->nregions != 0 || ret->operands[0] != &f->results[0])
    return -1;
  if (cj_kg_scalar_dtype(f->results[0].type) != dt) return -1;
  bool args = (f->operands[0] == &b->args[0] && f->operands[1] == &b->args[1]) ||
              (f->operands[0] == &b->args[1] && f->operands[1] == &b->args[0]);
  if (!args) return -1;
  switch (f->kind) {
    case CJ_OP_ADD: return KG_ADD;
    case CJ_OP_MULTIPLY: return KG_MUL;
    case CJ_OP_MAXIMUM: return KG_MAX;
    case CJ_OP_MINIMUM: return KG_MIN;
    case CJ_OP_AND: return KG_AND;
    case CJ_OP_OR: return KG_OR;
    case CJ_OP_XOR: return KG_XOR;
    default: return -1;
  }
}

int cj_kg_pad_rule(int kop, cj_dtype dt, unsigned char ident[16]) {
  memset(ident, 0, 16);
  switch (kop) {
    case KG_MAX: case KG_MIN: case KG_AND: case KG_KEEP: return KG_PAD_ALWAYS;
    case KG_OR: return dt == CJ_PRED ? KG_PAD_ALWAYS : KG_PAD_IF_IDENTITY;
    case KG_ADD: case KG_XOR: return KG_PAD_IF_IDENTITY; /* zero bits (+0.0 for floats) */
    case KG_MUL: {
      switch (dt) {
        case CJ_PRED: case CJ_S8: case CJ_S16: case CJ_S32: case CJ_S64: case CJ_U8: case CJ_U16:
        case CJ_U32: case CJ_U64:
          ident[0] = 1; /* little-endian one */
          return KG_PAD_IF_IDENTITY;
        case CJ_F32: {
          float one = 1.0f;
          memcpy(ident, &one, 4);
          return KG_PAD_IF_IDENTITY;
        }
        case CJ_F64: case CJ_C128: {
          double one = 1.0;
          memcpy(ident, &one, 8);
          return KG_PAD_IF_IDENTITY;
        }
        case CJ_C64: {
          float one = 1.0f;
          memcpy(ident, &one, 4);
          return KG_PAD_IF_IDENTITY;
        }
        case CJ_BF16: ident[0] = 0x80, ident[1] = 0x3f; return KG_PAD_IF_IDENTITY;
        case CJ_F16: ident[0] = 0x00, ident[1] = 0x3c; return KG_PAD_IF_IDENTITY;
        default: return KG_PAD_NEVER;
      }
    }
    default: return KG_PAD_NEVER;
  }
}

/* ======================================================================== conversions */

bool cj_kg_cvt_init(kg_cvt *c, cj_dtype src, cj_dtype dst) {
  memset(c, 0, sizeof *c);
  c->ses = cj_dtype_bytes(src);
  c->des = cj_dtype_bytes(dst);
  if (src == dst) return true;
  c->fn = cj_cvt_lookup(src, dst);
  c->aux.src = src;
  c->aux.dt = dst;
  return c->fn != NULL;
}

/* ======================================================================== bodies */

/* a body value's type: a scalar, or (lanes > 0) a tensor<lanes x T> */
static cj_dtype body_value_dtype(const cj_type *t, int64_t lanes) {
  if (lanes == 0) return cj_kg_scalar_dtype(t);
  if (!cj_type_is_static(t) || t->rank != 1 || t->dims[0] != lanes || cj_type_is_quant(t))
    return CJ_INVALID;
  return t->dtype;
}

static CJ_MUST_USE cj_status body_lower(cj_lw *L, cj_op *op, uint32_t r, int32_t start, kg_body *b,
                                        int32_t *bufs, int64_t lanes) {
  if (r >= op->nregions) return cj_op_error(op, CJ_INVALID_ARGUMENT, "region %u missing", r);
  cj_block *blk = op->regions[r].first;
  if (!blk) return cj_op_error(op, CJ_INVALID_ARGUMENT, "region %u has no block", r);
  if (blk->nargs > KG_MAX_BODY_VALUES)
    return cj_op_error(op, CJ_UNIMPLEMENTED, "a body with more than %d arguments",
                       KG_MAX_BODY_VALUES);
  b->nargs = blk->nargs;
  const cj_type **at = cj_lw_alloc(L, sizeof(cj_type *) * (blk->nargs + 1));
  if (!at) return cj_oom();
  for (uint32_t i = 0; i < blk->nargs; i++) {
    const cj_type *t = blk->args[i].type;
    if (body_value_dtype(t, lanes) == CJ_INVALID)
      return cj_op_error(op, CJ_UNIMPLEMENTED,
                         "body argument %u must be a 0-dimensional tensor of a non-quantized type",
                         i);
    at[i] = t;
    int32_t buf = cj_lw_new_buf(L, cj_dtype_bytes(t->dtype) * (lanes ? lanes : 1), CJ_BK_ARENA);
    cj_lw_def_at(L, buf, start);
    bufs[i] = buf;
    CJ_RETURN_IF_ERROR(cj_lw_bind(L, &blk->args[i], 1, &buf));
  }
  b->arg_types = at;
  cj_lw_saved saved;
  cj_lw_plan_begin(L, &saved);
  cj_op *term = NULL;
  cj_status st = cj_lw_block(L, blk, &term);
  if (!st && !term) st = cj_op_error(op, CJ_INVALID_ARGUMENT, "body without terminator");
  if (!st && term->nopnds > KG_MAX_BODY_VALUES)
    st = cj_op_error(op, CJ_UNIMPLEMENTED, "a body returning more than %d values",
                     KG_MAX_BODY_VALUES);
  const cj_type **rt = NULL;
  if (!st) {
    b->nrets = term->nopnds;
    rt = cj_lw_alloc(L, sizeof(cj_type *) * (term->nopnds + 1));
    if (!rt) st = cj_oom();
  }
  for (uint32_t i = 0; !st && i < b->nrets; i++) {
    const cj_type *t = term->operands[i]->type;
    if (body_value_dtype(t, lanes) == CJ_INVALID) {
      st = cj_op_error(op, CJ_UNIMPLEMENTED, "body result %u must be a 0-dimensional tensor", i);
      break;
    }
    rt[i] = t;
    int32_t nl;
    const int32_t *lv;
    st = cj_lw_leaves(L, term, term->operands[i], &nl, &lv);
    if (!st) bufs[b->nargs + i] = lv[0];
  }
  b->ret_types = rt;
  cj_status st2 = cj_lw_plan_end(L, &saved, &b->plan);
  if (st) {
    cj_status_ignore(st2); /* the first error is the one to report */
    return st;
  }
  return st2;
}

cj_status cj_kg_body_lower(cj_lw *L, cj_op *op, uint32_t r, int32_t start, kg_body *b,
                        int32_t *bufs) {
  return body_lower(L, op, r, start, b, bufs, 0);
}

/* a value's type with `lanes` elements of its dtype */
static bool retype_lanes(cj_module *m, cj_value *v, int64_t lanes) {
  const cj_type *t = cj_type_tensor_of(m, v->type->dtype, 1, &lanes);
  if (!t) return false;
  v->type = t;
  return true;
}

/* whether every op of the block is elementwise over scalars, a scalar constant, or the
 * terminator (then each lane of a vector run computes what a scalar run computes) */
static bool body_is_elementwise(const cj_block *blk) {
  for (uint32_t i = 0; i < blk->nargs; i++)
    if (cj_kg_scalar_dtype(blk->args[i].type) == CJ_INVALID) return false;
  for (const cj_op *o = blk->first; o; o = o->next) {
    if (o->nregions) return false;
    if (o == blk->last && o->kind == CJ_OP_RETURN) {
      for (uint32_t k = 0; k < o->nopnds; k++) /* a constant's buffer may hold one element */
        if (o->operands[k]->def && o->operands[k]->def->kind == CJ_OP_CONSTANT) return false;
      continue;
    }
    bool ew = cj_op_info_get(o->kind)->flags & CJ_OPF_ELEMENTWISE;
    if (!ew && o->kind != CJ_OP_CONSTANT) return false;
    for (uint32_t k = 0; k < o->nopnds; k++)
      if (o->operands[k]->block != blk && (!o->operands[k]->def || o->operands[k]->def->block != blk))
        return false; /* a value from outside the body */
    for (uint32_t k = 0; k < o->nresults; k++)
      if (cj_kg_scalar_dtype(o->results[k].type) == CJ_INVALID) return false;
    if (o->kind == CJ_OP_CONSTANT) {
      const cj_attr *a = cj_op_attr(o, "value");
      if (!a || a->kind != CJ_ATTR_DENSE) return false;
    }
  }
  return true;
}

cj_status cj_kg_body_lower_lanes(cj_lw *L, cj_op *op, uint32_t r, int32_t start, int64_t lanes,
                                 kg_body *b, int32_t *bufs, bool *done) {
  *done = false;
  if (r >= op->nregions || !op->regions[r].first || op->regions[r].first != op->regions[r].last ||
      !body_is_elementwise(op->regions[r].first) || lanes < 1)
    return NULL;
  cj_module *m = cj_lw_module(L);
  cj_op *c = cj_op_clone(m, op, 0, NULL, NULL);
  if (!c) return cj_oom();
  cj_block *blk = c->regions[r].first;
  for (uint32_t i = 0; i < blk->nargs; i++)
    if (!retype_lanes(m, &blk->args[i], lanes)) return cj_oom();
  for (cj_op *o = blk->first; o; o = o->next) {
    for (uint32_t k = 0; k < o->nresults; k++)
      if (!retype_lanes(m, &o->results[k], lanes)) return cj_oom();
    if (o->kind == CJ_OP_CONSTANT) { /* its one element, splat over the lanes */
      const cj_attr *a = cj_op_attr(o, "value");
      const cj_attr *s = cj_attr_dense(m, o->results[0].type, a->dense.data,
                                       (size_t)cj_dtype_bytes(o->results[0].type->dtype), true);
      if (!s) return cj_oom();
      CJ_RETURN_IF_ERROR(cj_op_set_attr(m, o, "value", s));
    }
  }
  CJ_RETURN_IF_ERROR(cj_lw_adopt_block(L, blk));
  CJ_RETURN_IF_ERROR(body_lower(L, c, r, start, b, bufs, lanes));
  *done = true;
  return NULL;
}
