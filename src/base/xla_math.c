/* cjrt: single-precision math as XLA:CPU computes it (see xla_math.h for why).
 *
 * Every step below is a float operation, rounded as XLA rounds it; fmaf marks the steps XLA
 * performs as fused multiply-adds (this file is compiled as ISO C, so nothing else is fused).
 *  - exp (XLA's polynomial is Cephes'): n = floor(x log2(e) + 1/2), a = x - n ln2 with ln2 in
 *    two parts (two fused steps), e^a = 1 + (a + a^2 P(a)) with P of degree 5 in Horner's form,
 *    then the product with 2^n.
 *  - log: x = 2^e m with m in [sqrt(1/2), sqrt(2)), f = m - 1 (exact), log(1 + f) =
 *    f - f^2/2 + f^3 Q(f) with Q of degree 8 evaluated in three interleaved strands, plus e ln2
 *    in the same two parts.
 *  - complex power, y = c + di: |x| as max sqrt(1 + (min/max)^2), theta = atan2(Im x, Re x),
 *    x^y = pow(|x|, c) e^(-d theta) (cos q + i sin q) with q = c theta + d log|x|, each function
 *    in float: exp and log above; atan2 as glibc's atan2f (fdlibm's single-precision
 *    algorithm, which XLA called for the expected values; written out below, so that a C
 *    library with another atan2f changes nothing: a correctly rounded one moves 178 of the
 *    1200 parts of the corpus' pow_complex64 case, 16 beyond its 1e-3); the C library's powf
 *    (glibc's; a correctly rounded pow moves 2 parts by an ulp or two); correctly rounded sin
 *    and cos (glibc's sinf and cosf move 16 parts by an ulp or two); 1 + t^2 and q fused.
 *    So computed, that case matches XLA's values bit for bit. The formula's accuracy is that of
 *    float arithmetic (q's rounding alone moves the result by |q| 2^-24 relative), and the
 *    expected values carry it: they are up to 9107 ulps from the exact power. */
#include "base/xla_math.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* ln 2 = LN2_HI + LN2_LO, LN2_HI with few bits so that n LN2_HI is exact */
static const float LN2_HI = 0.693359375f, LN2_LO = -2.12194440e-4f;

float cj_xla_expf(float x) {
  static const float p[6] = {1.9875691500e-4f, 1.3981999507e-3f, 8.3334519073e-3f,
                             4.1665795894e-2f, 1.6666665459e-1f, 5.0000001201e-1f};
  if (isnan(x)) return x + x;
  if (x < -104.0f) x = -104.0f; /* e^x rounds to 0 below, to inf above */
  if (x > 88.8f) x = 88.8f;
  float n = floorf(fmaf(x, 0x1.715476p+0f, 0.5f));
  float a = fmaf(-n, LN2_HI, x);
  a = fmaf(-n, LN2_LO, a);
  float poly = p[0];
  for (int i = 1; i < 6; i++) poly = fmaf(poly, a, p[i]);
  float z = fmaf(poly, a * a, a) + 1.0f;
  return ldexpf(z, (int)n); /* exact, or rounded once (subnormal results), or inf */
}

float cj_xla_logf(float x) {
  static const float q[9] = {7.0376836292e-2f,  -1.1514610310e-1f, 1.1676998740e-1f,
                             -1.2420140846e-1f, 1.4249322787e-1f,  -1.6668057665e-1f,
                             2.0000714765e-1f,  -2.4999993993e-1f, 3.3333331174e-1f};
  if (isnan(x)) return x + x;
  if (x < 0) return NAN;
  if (x == 0) return -INFINITY;
  if (isinf(x)) return x;
  int e;
  float m = frexpf(x, &e); /* [1/2, 1) */
  if (m < 0x1.6a09e6p-1f) { /* below sqrt(1/2): 2m in [1, sqrt(2)) */
    m = m + m;
    e -= 1;
  }
  float f = m - 1.0f, fe = (float)e;
  float f2 = f * f, f3 = f2 * f;
  float s1 = fmaf(fmaf(f, q[0], q[1]), f, q[2]);
  float s2 = fmaf(fmaf(f, q[3], q[4]), f, q[5]);
  float s3 = fmaf(fmaf(f, q[6], q[7]), f, q[8]);
  float tail = fmaf(fmaf(fmaf(s1, f3, s2), f3, s3), f3, LN2_LO * fe);
  float r = fmaf(-0.5f, f2, f) + tail;
  return fmaf(LN2_HI, fe, r);
}

/* atan(t), t >= 0, as fdlibm's single-precision atanf: t reduced around 0, 1/2, 1, 3/2 or inf
 * to u, atan(u) = u - u^3 (S1(u^4) + u S2(u^4)) with the odd and even coefficients in two
 * strands, plus atan of the centre in two parts */
static float atan_fdlibm(float t) {
  static const float hi[4] = {4.6364760399e-01f, 7.8539812565e-01f, 9.8279368877e-01f, 1.5707962513e+00f};
  static const float lo[4] = {5.0121582440e-09f, 3.7748947079e-08f, 3.4473217170e-08f, 7.5497894159e-08f};
  static const float odd[6] = {3.3333334327e-01f, 1.4285714924e-01f, 9.0908870101e-02f,
                               6.6610731184e-02f, 4.9768779427e-02f, 1.6285819933e-02f};
  static const float even[5] = {-2.0000000298e-01f, -1.1111110449e-01f, -7.6918758452e-02f,
                                -5.8335702866e-02f, -3.6531571299e-02f};
  if (t >= 0x1p25f) return 1.5707963705e+00f; /* hi[3] + lo[3] */
  int id = -1;
  float u = t;
  if (t >= 2.4375f) id = 3, u = -1.0f / t;
  else if (t >= 1.1875f) id = 2, u = (t - 1.5f) / (1.0f + 1.5f * t);
  else if (t >= 0.6875f) id = 1, u = (t - 1.0f) / (t + 1.0f);
  else if (t >= 0.4375f) id = 0, u = (2.0f * t - 1.0f) / (2.0f + t);
  float z = u * u, w = z * z;
  float s1 = odd[5], s2 = even[4];
  for (int i = 4; i >= 0; i--) s1 = odd[i] + w * s1;
  for (int i = 3; i >= 0; i--) s2 = even[i] + w * s2;
  float us = u * (z * s1 + w * s2);
  return id < 0 ? u - us : hi[id] - ((us - lo[id]) - u);
}

float cj_xla_atan2f(float y, float x) {
  static const float pi = 0x1.921fb6p+1f, pi_lo = -0x1.777a5cp-24f; /* pi = pi + pi_lo */
  if (isnan(x) || isnan(y)) return x + y;
  if (x == 1.0f) return copysignf(atan_fdlibm(fabsf(y)), y);
  bool xneg = signbit(x);
  if (y == 0) return xneg ? copysignf(pi, y) : y;
  if (x == 0) return copysignf(pi / 2, y);
  if (isinf(x)) {
    float r = isinf(y) ? (xneg ? 3 * (pi / 4) : pi / 4) : (xneg ? pi : 0.0f);
    return copysignf(r, y);
  }
  if (isinf(y)) return copysignf(pi / 2, y);
  /* fdlibm compares the exponents by the difference of the magnitudes' bit patterns, shifted
   * down by 23: k > 60 or k < -60 */
  uint32_t bx, by;
  float ax = fabsf(x), ay = fabsf(y);
  memcpy(&bx, &ax, sizeof bx);
  memcpy(&by, &ay, sizeof by);
  int64_t d = (int64_t)by - (int64_t)bx;
  float z; /* atan |y/x| */
  if (d >= (int64_t)61 << 23) z = pi / 2 + 0.5f * pi_lo;
  else if (d < -((int64_t)60 << 23) && xneg) z = 0;
  else z = atan_fdlibm(fabsf(y / x));
  float r = xneg ? pi - (z - pi_lo) : z;
  return copysignf(r, y);
}

float cj_xla_expm1f(float x) {
  if (x > 2.5f) return cj_xla_expf(x) - 1.0f;
  return (float)expm1((double)x);
}

void cj_xla_cpowf(float a, float b, float c, float d, float *re, float *im) {
  /* the special cases XLA selects before the formula */
  if (c == 0 && d == 0) { /* x^0 = 1, also for x = 0, inf, NaN */
    *re = 1, *im = 0;
    return;
  }
  if (a == 1 && b == 0) {
    *re = 1, *im = 0;
    return;
  }
  if (a == 0 && b == 0 && d == 0 && c > 0) { /* 0^c = 0 */
    *re = 0, *im = 0;
    return;
  }
  if (a == INFINITY && b == 0 && d == 0) { /* inf^c: inf (c > 0), 0 (c < 0) */
    *re = c > 0 ? INFINITY : 0, *im = 0;
    return;
  }
  float h; /* |x| */
  if (isnan(a) || isnan(b)) h = NAN;
  else {
    float mx = fmaxf(fabsf(a), fabsf(b)), mn = fminf(fabsf(a), fabsf(b));
    float t = mn / mx;
    h = mx * sqrtf(fmaf(t, t, 1.0f));
    if (isnan(h)) h = mn; /* 0/0 or inf/inf: |x| is the smaller part (0 or inf) */
  }
  float theta = cj_xla_atan2f(b, a);
  float coeff = cj_xla_expf(theta * -d) * powf(h, c);
  float q = fmaf(c, theta, d * cj_xla_logf(h));
  *re = coeff * (float)cos((double)q); /* correctly rounded: see the top of the file */
  *im = coeff * (float)sin((double)q);
}
