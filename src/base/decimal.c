#include "base/decimal.h"

#include <fenv.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* strtod under a rounding mode */
static double strtod_mode(const char *s, int mode) {
  int old = fegetround();
  fesetround(mode);
  volatile double d = strtod(s, NULL);
  fesetround(old);
  return d;
}

/* The magnitude's bits: strtod rounds once into f64 (strtof into f32); a narrower format rounds
 * that double again, which goes wrong only when it lies exactly halfway between two values of
 * the format (it then has at most mbits+2 significant bits): rounding the decimal up and down
 * says on which side of that midpoint the exact value lies. */
static uint64_t decimal_magnitude_bits(cj_dtype dt, const char *s) {
  if (dt == CJ_F64) {
    double d = strtod(s, NULL);
    uint64_t u;
    memcpy(&u, &d, 8);
    return u;
  }
  if (dt == CJ_F32) {
    float f = strtof(s, NULL);
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
  }
  double d = strtod(s, NULL);
  uint64_t bits = cj_float_encode(dt, d);
  if (!isfinite(d) || d == 0) return bits;
  uint64_t u;
  memcpy(&u, &d, 8);
  uint64_t mant = (u & ((1ull << 52) - 1)) | (((u >> 52) & 0x7ff) ? (1ull << 52) : 0);
  int sig = mant ? 53 - __builtin_ctzll(mant) : 0;
  if (sig > cj_dtype_get(dt)->mbits + 2) return bits;
  uint64_t lo = cj_float_encode(dt, nextafter(d, 0.0));
  uint64_t hi = cj_float_encode(dt, nextafter(d, INFINITY));
  if (lo == hi) return bits; /* not a rounding boundary */
  double up = strtod_mode(s, FE_UPWARD), down = strtod_mode(s, FE_DOWNWARD);
  if (up > d) return hi;   /* the exact value lies above the midpoint */
  if (down < d) return lo; /* below */
  return bits;             /* exactly the midpoint: ties to even */
}

uint64_t cj_float_from_decimal(cj_dtype dt, const char *s) {
  bool neg = *s == '-';
  uint64_t bits = decimal_magnitude_bits(dt, neg || *s == '+' ? s + 1 : s);
  if (neg) bits = cj_float_encode(dt, -cj_float_decode(dt, bits));
  return bits;
}
