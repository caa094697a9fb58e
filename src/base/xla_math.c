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
 *    in float: exp and log above, the C library's powf and atan2f (which XLA calls; glibc's
 *    atan2f is not correctly rounded, and a correctly rounded one misses 178 of the 1200 parts of
 *    the corpus' pow_complex64 case), correctly rounded sin and cos; 1 + t^2 and q are fused.
 *    With these choices that case matches XLA's values bit for bit (with glibc's sinf and cosf
 *    instead, 16 parts differ by an ulp or two). The formula's accuracy is that of float
 *    arithmetic (q's rounding alone moves the result by |q| 2^-24 relative), and the expected
 *    values carry it: they are up to 9107 ulps from the exact power. */
#include "base/xla_math.h"

#include <math.h>

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
  float theta = atan2f(b, a);
  float coeff = cj_xla_expf(theta * -d) * powf(h, c);
  float q = fmaf(c, theta, d * cj_xla_logf(h));
  *re = coeff * (float)cos((double)q); /* correctly rounded: see the top of the file */
  *im = coeff * (float)sin((double)q);
}
