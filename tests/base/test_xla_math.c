/* Unit tests for src/base/xla_math.c: XLA's float32 algorithms as scalar functions (the
 * reference backend's) agree bit for bit with the CPU backend's vectorized kernels of the same
 * algorithms (src/cpu/vmath_f32.c), so that the two backends stay in step, and give the special
 * values. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../common/check.h"
#include "base/xla_math.h"
#include "cpu/vmath.h"

static float from_bits(uint32_t b) {
  float f;
  memcpy(&f, &b, sizeof f);
  return f;
}
static uint32_t to_bits(float f) {
  uint32_t b;
  memcpy(&b, &f, sizeof b);
  return b;
}

enum { N = 4096 };

typedef float scalar_fn(float);
typedef void vector_fn(const float *, float *, int64_t);

/* every 4099th float bit pattern in [lo, hi] (both signs when lo < 0): the scalar function
 * against the vector kernel, bit for bit (NaN against NaN) */
static void sweep(const char *name, scalar_fn *f, vector_fn *v, float lo, float hi) {
  static float x[N], y[N];
  int n = 0;
  int64_t bad = 0, total = 0;
  for (uint64_t b = 0; b <= 0xffffffffu; b += 4099) {
    float t = from_bits((uint32_t)b);
    if (!(t >= lo && t <= hi)) continue;
    x[n++] = t;
    if (n < N && b + 4099 <= 0xffffffffu) continue;
    v(x, y, n);
    for (int i = 0; i < n; i++) {
      float s = f(x[i]);
      bool same = to_bits(s) == to_bits(y[i]) || (isnan(s) && isnan(y[i]));
      if (!same && bad++ < 3)
        fprintf(stderr, "%s(%a): scalar %a, vector %a\n", name, (double)x[i], (double)s, (double)y[i]);
    }
    total += n;
    n = 0;
  }
  CHECK_MSG(bad == 0, "%s: %lld of %lld inputs differ", name, (long long)bad, (long long)total);
  CHECK(total > 1000);
}

static void test_against_cpu(void) {
  sweep("exp", cj_xla_expf, cj_vm_exp_f32, -INFINITY, INFINITY);
  sweep("log", cj_xla_logf, cj_vm_log_f32, 0.0f, INFINITY);
  /* expm1 is XLA's above 2.5 only (below, both are accurate but not the same) */
  sweep("expm1", cj_xla_expm1f, cj_vm_expm1_f32, 2.5f, INFINITY);
}

static void test_values(void) {
  CHECK(cj_xla_expf(0.0f) == 1.0f);
  CHECK(cj_xla_expf(-INFINITY) == 0.0f);
  CHECK(cj_xla_expf(INFINITY) == INFINITY);
  CHECK(cj_xla_expf(89.0f) == INFINITY);
  CHECK(isnan(cj_xla_expf(NAN)));
  CHECK(cj_xla_logf(1.0f) == 0.0f);
  CHECK(cj_xla_logf(0.0f) == -INFINITY);
  CHECK(isnan(cj_xla_logf(-1.0f)));
  CHECK(cj_xla_logf(INFINITY) == INFINITY);
  CHECK(fabsf(cj_xla_logf(0x1p-149f) - (float)(-149 * M_LN2)) < 1e-4f); /* subnormal input */
  CHECK(cj_xla_expm1f(0.0f) == 0.0f && signbit(cj_xla_expm1f(-0.0f)));
  float re, im;
  cj_xla_cpowf(0, 0, 0, 0, &re, &im); /* 0^0 = 1 */
  CHECK(re == 1 && im == 0);
  cj_xla_cpowf(0, 0, 2, 0, &re, &im); /* 0^2 = 0 */
  CHECK(re == 0 && im == 0);
  cj_xla_cpowf(INFINITY, 0, -1, 0, &re, &im);
  CHECK(re == 0 && im == 0);
  cj_xla_cpowf(0, 1, 2, 0, &re, &im); /* i^2 = -1 */
  CHECK(fabsf(re + 1) < 1e-6f && fabsf(im) < 1e-6f);
  cj_xla_cpowf(-8, 0, 1.0f / 3, 0, &re, &im); /* the principal cube root 1 + i sqrt(3) */
  CHECK(fabsf(re - 1) < 1e-5f && fabsf(im - sqrtf(3)) < 1e-5f);
}

/* atan2: fdlibm's arithmetic (glibc's atan2f, bit for bit over 2e7 inputs when written):
 * within 2 ulps of atan2 everywhere, and not the correctly rounded value where fdlibm is not */
static void test_atan2(void) {
  int64_t far = 0;
  uint32_t s = 12345;
  for (int i = 0; i < 200000; i++) {
    s = s * 1664525u + 1013904223u;
    float y = (float)((int32_t)(s >> 8) - (1 << 23)) / 1024, x = (float)((int32_t)(s & 0xffff) - 32768) / 64;
    double e = atan2(y, x);
    float r = cj_xla_atan2f(y, x);
    if (fabs(r - e) > 2 * fabs(nextafterf((float)e, INFINITY) - (float)e)) far++;
  }
  CHECK_MSG(far == 0, "atan2: %lld results beyond 2 ulps", (long long)far);
  CHECK(to_bits(cj_xla_atan2f(0x1.0624dep-10f, 0x1.7ffb52p+1f)) == to_bits(0x1.5d8acp-12f)); /* cr: ...abep-12 */
  CHECK(to_bits(cj_xla_atan2f(0x1.0624dep-9f, 0x1.7ff6a4p+1f)) == to_bits(0x1.5d8efep-11f)); /* cr: ...8fp-11 */
  const float pi = 0x1.921fb6p+1f;
  CHECK(cj_xla_atan2f(0.0f, -1.0f) == pi && cj_xla_atan2f(-0.0f, -1.0f) == -pi);
  CHECK(cj_xla_atan2f(0.0f, 0.0f) == 0.0f && cj_xla_atan2f(0.0f, -0.0f) == pi);
  CHECK(cj_xla_atan2f(1.0f, 0.0f) == pi / 2 && cj_xla_atan2f(-INFINITY, 5.0f) == -pi / 2);
  CHECK(cj_xla_atan2f(INFINITY, -INFINITY) == 3 * (pi / 4) && cj_xla_atan2f(-2.0f, INFINITY) == 0.0f);
  CHECK(cj_xla_atan2f(1.0f, 1.0f) == pi / 4);
  CHECK(isnan(cj_xla_atan2f(NAN, 1.0f)) && isnan(cj_xla_atan2f(1.0f, NAN)));
}

int main(void) {
  test_values();
  test_atan2();
  test_against_cpu();
  return check_report("test_xla_math");
}
