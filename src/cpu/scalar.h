/* cjrt: scalar helpers the CPU kernels share (private to src/cpu/): the layouts of complex
 * elements, floats as their bits, and StableHLO's maximum/minimum on floats. */
#ifndef CJ_CPU_SCALAR_H
#define CJ_CPU_SCALAR_H

#include <stdint.h>
#include <string.h>

typedef struct c64_t {
  float re, im;
} c64_t;
typedef struct c128_t {
  double re, im;
} c128_t;

/* cj_fW_bits: a float's bits; cj_bits_fW: the float of those bits */
#define CJ_SCALAR_BITS(W, F, U)               \
  static inline U cj_f##W##_bits(F x) {       \
    U u;                                      \
    memcpy(&u, &x, sizeof u);                 \
    return u;                                 \
  }                                           \
  static inline F cj_bits_f##W(U u) {         \
    F f;                                      \
    memcpy(&f, &u, sizeof f);                 \
    return f;                                 \
  }
CJ_SCALAR_BITS(32, float, uint32_t)
CJ_SCALAR_BITS(64, double, uint64_t)
#undef CJ_SCALAR_BITS

/* f16 bits to f32 as base/dtype.h's cj_f16_to_f32 (the same bits for every input, checked
 * exhaustively), as selects without branches or calls, so that loops over it vectorize:
 * subnormal f16 are their integer significand times 2^-24 (exact) */
static inline float cj_f16_bits_to_f32(uint16_t h) {
  uint32_t em = h & 0x7fffu, sign = (uint32_t)(h & 0x8000u) << 16, u = em << 13;
  uint32_t sub = cj_f32_bits((float)(int32_t)em * 0x1p-24f); /* every lane: masks, not branches */
  uint32_t big = 0u - (uint32_t)(em >= 0x7c00u), small = 0u - (uint32_t)(em < 0x400u);
  u += (112u << 23) + (big & (112u << 23));
  return cj_bits_f32((sub & small) | (u & ~small) | sign);
}

/* maximum/minimum as the spec defines them: a NaN operand gives that NaN (the first one when
 * both are), max(-0, +0) = +0 and min(-0, +0) = -0. Written with selects rather than branches,
 * so that loops over them vectorize. */
#define CJ_SCALAR_MINMAX(S, T, W)                                   \
  static inline T cj_max##S(T a, T b) {                             \
    T m = a > b ? a : b;                                            \
    m = a == b ? cj_bits_f##W(cj_f##W##_bits(a) & cj_f##W##_bits(b)) : m; \
    m = b != b ? b : m;                                             \
    return a != a ? a : m;                                          \
  }                                                                 \
  static inline T cj_min##S(T a, T b) {                             \
    T m = a < b ? a : b;                                            \
    m = a == b ? cj_bits_f##W(cj_f##W##_bits(a) | cj_f##W##_bits(b)) : m; \
    m = b != b ? b : m;                                             \
    return a != a ? a : m;                                          \
  }
CJ_SCALAR_MINMAX(f, float, 32)
CJ_SCALAR_MINMAX(d, double, 64)
#undef CJ_SCALAR_MINMAX

#endif
