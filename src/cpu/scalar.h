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

static inline uint32_t cj_f32_bits(float x) {
  uint32_t u;
  memcpy(&u, &x, 4);
  return u;
}
static inline uint64_t cj_f64_bits(double x) {
  uint64_t u;
  memcpy(&u, &x, 8);
  return u;
}
static inline float cj_bits_f32(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}
static inline double cj_bits_f64(uint64_t u) {
  double d;
  memcpy(&d, &u, 8);
  return d;
}

/* maximum/minimum as the spec defines them: a NaN operand gives that NaN (the first one when
 * both are), max(-0, +0) = +0 and min(-0, +0) = -0. Written with selects rather than branches,
 * so that loops over them vectorize. */
static inline float cj_maxf(float a, float b) {
  float m = a > b ? a : b;
  m = a == b ? cj_bits_f32(cj_f32_bits(a) & cj_f32_bits(b)) : m;
  m = b != b ? b : m;
  return a != a ? a : m;
}
static inline float cj_minf(float a, float b) {
  float m = a < b ? a : b;
  m = a == b ? cj_bits_f32(cj_f32_bits(a) | cj_f32_bits(b)) : m;
  m = b != b ? b : m;
  return a != a ? a : m;
}
static inline double cj_maxd(double a, double b) {
  double m = a > b ? a : b;
  m = a == b ? cj_bits_f64(cj_f64_bits(a) & cj_f64_bits(b)) : m;
  m = b != b ? b : m;
  return a != a ? a : m;
}
static inline double cj_mind(double a, double b) {
  double m = a < b ? a : b;
  m = a == b ? cj_bits_f64(cj_f64_bits(a) | cj_f64_bits(b)) : m;
  m = b != b ? b : m;
  return a != a ? a : m;
}

#endif
