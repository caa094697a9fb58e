/* cjrt tests: accuracy and special values of the vectorized math library (src/cpu/vmath.h).
 *
 * Every real function is compared against an 80-bit long double reference (glibc's *l
 * functions, or our own long double code where libm has none) on a dense sweep: f32 over an
 * evenly spaced subset of all 2^32 bit patterns plus focused ranges and every special value;
 * f64 over random bit patterns, focused ranges and specials. The error is measured in ulps of
 * the correctly rounded result's type; non-finite results must match exactly (any NaN matches
 * any NaN) and zero results must carry the reference's sign. Each function has a bound.
 * Every instruction-set variant the CPU supports is checked.
 *
 * The f32 exp, log, expm1 (x > 2.5), logistic (x >= 0) and erf must also equal XLA:CPU's to the bit
 * (src/cpu/vmath_f32.c says why): 100000 inputs each against fingerprints made with jax
 * (tests/vmath/xla_ref.py). complex<f32> pow follows XLA's formula: its special cases here, its
 * values in the corpus test (test_vmath_corpus.c, pow_complex64).
 *
 * Environment: CJ_VMATH_EXHAUSTIVE=1 checks all 2^32 f32 inputs (minutes per function);
 * CJ_VMATH_ONLY=name restricts to one function; CJ_VMATH_VERBOSE=1 prints every max. */
#include <complex.h>
/* glibc defines CMPLXL for GCC only; clang has the builtin it stands for */
#ifndef CMPLXL
#define CMPLXL(x, y) __builtin_complex((long double)(x), (long double)(y))
#endif
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/check.h"
#include "cpu/vmath.h"

typedef long double ld;

/* ---------------- long double references for what libm lacks ---------------- */

static ld ref_logistic(ld x) { return 1.0L / (1.0L + expl(-x)); }
static ld ref_rsqrt(ld x) { return 1.0L / sqrtl(x); }

static ld ref_digamma(ld x) {
  if (isnan(x)) return x;
  /* near the positive root x0 the recurrence below cancels: Taylor series about x0 */
  const ld x0 = 1.46163214496836234126265954232572133L;
  if (fabsl(x - x0) < 0.02L) {
    static const ld c[] = {0.96767224544762117042744476170965074L, -0.44276316898359210609286528185250925L,
                           0.258499760955651010624401385700954228L, -0.163942705442406527504251292746656393L,
                           0.107824050691262365757182948866756971L, -0.0721995612564547109261217836051120763L,
                           0.0488042881641431072250925255079069185L, -0.0331611264748473592922583984044751833L,
                           0.0225976482322181046596248251178293953L};
    ld d = x - x0, s = 0;
    for (int k = 8; k >= 0; k--) s = s * d + c[k];
    return s * d;
  }
  if (x == INFINITY) return x;
  if (x == -INFINITY) return NAN;
  if (x <= 0 && x == floorl(x)) return NAN;
  ld acc = 0;
  if (x < 0) { /* reflection: psi(x) = psi(1-x) - pi / tan(pi x) */
    ld pix = 3.14159265358979323846264338327950288L * (x - 2.0L * roundl(x / 2.0L));
    acc = -3.14159265358979323846264338327950288L / tanl(pix);
    x = 1.0L - x;
  }
  while (x < 30.0L) {
    acc -= 1.0L / x;
    x += 1.0L;
  }
  ld z = 1.0L / (x * x);
  /* B2k/(2k) */
  ld s = z * (1.0L / 12 - z * (1.0L / 120 - z * (1.0L / 252 - z * (1.0L / 240 - z * (1.0L / 132 - z * (691.0L / 32760 - z / 12.0L))))));
  return acc + logl(x) - 0.5L / x - s;
}

static ld ref_i1e(ld x) {
  if (isnan(x)) return x;
  ld a = fabsl(x);
  if (a == INFINITY) return x > 0 ? 0.0L : -0.0L;
  ld r;
  if (a <= 700.0L) {
    ld h = a / 2, term = h, sum = h;
    for (int k = 1; k < 2000; k++) {
      term *= h * h / ((ld)k * (ld)(k + 1));
      sum += term;
      if (term < sum * 1e-22L) break;
    }
    r = sum * expl(-a);
  } else {
    /* asymptotic: e^-x I1(x) ~ 1/sqrt(2 pi x) * sum_k (-1)^k prod_{j<=k} (4 - (2j-1)^2) / (k! (8x)^k) */
    ld sum = 1, term = 1;
    for (int k = 1; k < 30; k++) {
      ld j = 2.0L * k - 1;
      term *= -(4.0L - j * j) / ((ld)k * 8.0L * a);
      sum += term;
    }
    r = sum / sqrtl(2.0L * 3.14159265358979323846264338327950288L * a);
  }
  return signbit(x) ? -r : r;
}

static ld ref_erf_inv(ld y) {
  if (isnan(y) || fabsl(y) > 1) return NAN;
  if (y == 1) return INFINITY;
  if (y == -1) return -INFINITY;
  if (y == 0) return y;
  ld a = fabsl(y);
  /* initial guess by bisection on erfc/erf, then Newton */
  ld lo = 0, hi = 30;
  for (int i = 0; i < 80; i++) {
    ld mid = 0.5L * (lo + hi);
    int below = a > 0.5L ? (erfcl(mid) > 1.0L - a) : (erfl(mid) < a);
    if (below) lo = mid; else hi = mid;
  }
  ld x = 0.5L * (lo + hi);
  for (int i = 0; i < 40; i++) { /* each step gains >= 60 bits relative to the previous x */
    ld f = a > 0.5L ? -(erfcl(x) - (1.0L - a)) : erfl(x) - a;
    ld d = 1.1283791670955125738961589031215452L * expl(-x * x);
    if (d == 0) break;
    x -= f / d;
  }
  return y < 0 ? -x : x;
}

static ld ref_lgamma(ld x) {
  if (isinf(x)) return INFINITY;
  int s;
  return lgammal_r(x, &s);
}

/* ---------------- the function table ---------------- */

typedef void (*fn32)(const float *, float *, int64_t);
typedef void (*fn64)(const double *, double *, int64_t);
typedef ld (*reff)(ld);

typedef struct {
  const char *name;
  fn32 f32;
  fn64 f64;
  reff ref;
  double bound32, bound64; /* max ulp allowed */
  double lo, hi;           /* focused range */
  int negabs; /* for x < 0 measure in ulps of max(|result|, 1): lgamma and digamma have zeros
                 between the poles there that no fixed-precision formula resolves relatively */
} ufunc;

#define U(n, r, b32, b64, lo, hi) {#n, cj_vm_##n##_f32, cj_vm_##n##_f64, r, b32, b64, lo, hi, 0}
#define UNEG(n, r, b32, b64, lo, hi) {#n, cj_vm_##n##_f32, cj_vm_##n##_f64, r, b32, b64, lo, hi, 1}
static const ufunc ufuncs[] = {
    U(exp, expl, 1, 1, -760, 720),
    U(exp2, exp2l, 1, 1, -1100, 1100),
    U(expm1, expm1l, 2, 1.5, -40, 710),
    U(log, logl, 1.5, 1, 0, 4),
    U(log2, log2l, 1, 1, 0, 4),
    U(log10, log10l, 1, 1, 0, 4),
    U(log1p, log1pl, 1.5, 1, -1, 4),
    U(sin, sinl, 1, 1, -10, 10),
    U(cos, cosl, 1, 1, -10, 10),
    U(tan, tanl, 1, 2, -10, 10),
    U(tanh, tanhl, 4.5, 2, -20, 20), /* f32: XLA:CPU's own rational approximation, bit for bit */
    U(sinh, sinhl, 1, 2, -720, 720),
    U(cosh, coshl, 1, 2, -720, 720),
    U(asin, asinl, 1, 1, -1, 1),
    U(acos, acosl, 1, 1, -1, 1),
    U(atan, atanl, 1, 1, -8, 8),
    U(asinh, asinhl, 1, 1.5, -8, 8),
    U(acosh, acoshl, 1, 1.5, 1, 8),
    U(atanh, atanhl, 1, 1.5, -1, 1),
    U(sqrt, sqrtl, 0.5, 0.5, 0, 4),
    U(rsqrt, ref_rsqrt, 1, 1, 0, 4),
    U(cbrt, cbrtl, 1, 1, -8, 8),
    U(logistic, ref_logistic, 2, 2, -750, 50),
    U(erf, erfl, 5.5, 2, -6, 6), /* f32: XLA:CPU's own rational approximation, bit for bit */
    U(erfc, erfcl, 1, 3, -6, 28),
    U(erf_inv, ref_erf_inv, 1, 3, -1, 1),
    UNEG(lgamma, ref_lgamma, 2, 3, -20, 20),
    UNEG(digamma, ref_digamma, 2, 8, -20, 20),
    U(bessel_i1e, ref_i1e, 1, 3, -50, 50),
};
#define NU ((int)(sizeof ufuncs / sizeof ufuncs[0]))

/* ---------------- ulp measurement ---------------- */

/* error of y against the exact r, in ulps of the type (digits p, min exponent emin); -1 means a
 * special-value mismatch */
static double ulp_err(ld y, ld r, int p, int emin, ld maxv) {
  if (isnan(r)) return isnan(y) ? 0 : -1;
  if (isnan(y)) return -1;
  if (fabsl(r) > maxv) {
    /* beyond the largest finite value: the correctly rounded result is inf or max */
    ld ovf = ldexpl(1.0L, emin == -125 ? 128 : 1024);
    ld rr = fabsl(r) >= ovf - ldexpl(1.0L, (emin == -125 ? 128 : 1024) - p - 1) ? INFINITY : maxv;
    rr = r < 0 ? -rr : rr;
    if (isinf(y) || isinf(rr)) return y == rr ? 0 : -1;
  }
  if (isinf(y)) return -1;
  if (r == 0 && y == 0) return signbit(r) == signbit(y) ? 0 : -1;
  int e;
  frexpl(r, &e); /* |r| in [2^(e-1), 2^e) */
  int ue = e - p;
  if (e - 1 < emin) ue = emin - p + 1; /* subnormal spacing */
  ld u = ldexpl(1.0L, ue);
  return (double)(fabsl(y - r) / u);
}

typedef struct {
  double max;
  double at;
  long bad;  /* special-value mismatches */
  double bad_at;
  double bad_y;
  long n;
} stats;

static void stat_add(stats *s, double err, double x, double y) {
  s->n++;
  if (err < 0) {
    if (s->bad++ == 0) {
      s->bad_at = x;
      s->bad_y = y;
    }
    return;
  }
  if (err > s->max) {
    s->max = err;
    s->at = x;
  }
}

/* ---------------- input generation ---------------- */

static uint64_t rng_state = 0x9E3779B97F4A7C15ULL;
static uint64_t rnd64(void) {
  uint64_t z = (rng_state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}
static double rndu(void) { return (double)(rnd64() >> 11) * 0x1p-53; }

static const double specials[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, -NAN, 1.0, -1.0, 0.5,
                                  -0.5, 2.0, -2.0, 3.0, -3.0, 0.25, 1e-300, -1e-300, 5e-324,
                                  -5e-324, 2.2250738585072014e-308, DBL_MAX, -DBL_MAX, 1e-45,
                                  1.4e-45, FLT_MIN, FLT_MAX, -FLT_MAX, 1e-8, -1e-8, 0.75, -0.75,
                                  0.999999, 1.000001, 709.782712893384, 709.79, -708.4, -745.13,
                                  -745.2, 88.72283, 88.7229, -87.33, -103.97, -104.0, 710.4758,
                                  710.476, 1e6, 1e7, 1e22, -1e22, 1.5707963267948966,
                                  3.141592653589793, 1e300, 4.5, -4.5, 30.0, 100.0, -100.5,
                                  171.6, 2.5e305, 1e-20, 0.9375, -0.9375, 6.0, 27.0, 28.0};
#define NSPEC ((int)(sizeof specials / sizeof specials[0]))

static int env_on(const char *name) {
  const char *v = getenv(name);
  return v && *v && strcmp(v, "0") != 0;
}

/* lgamma and digamma for x < 0 come from the reflection formula, a difference of terms of the
 * size of f(|x|) and the log/cot term; near their zeros between the poles no double formula
 * keeps relative accuracy, so the error there is measured in ulps of the terms' size */
static double neg_scaled_err(const ufunc *f, double x, double y, ld r, int p) {
  ld scale = fabsl(f->ref(-(ld)x)) + 1.0L;
  if (fabsl(r) >= scale) return ulp_err((ld)y, r, p, p == 24 ? -125 : -1021, p == 24 ? FLT_MAX : DBL_MAX);
  int e;
  frexpl(scale, &e);
  return (double)(fabsl((ld)y - r) / ldexpl(1.0L, e - p));
}

/* one f32 batch: run the function, compare */
static void run32(const ufunc *f, const float *x, float *y, int64_t n, stats *st) {
  f->f32(x, y, n);
  for (int64_t i = 0; i < n; i++) {
    ld r = f->ref((ld)x[i]);
    double e = ulp_err((ld)y[i], r, 24, -125, (ld)FLT_MAX);
    if (f->negabs && x[i] < 0 && e > 0) e = neg_scaled_err(f, x[i], y[i], r, 24);
    stat_add(st, e, x[i], y[i]);
  }
}
static void run64(const ufunc *f, const double *x, double *y, int64_t n, stats *st) {
  f->f64(x, y, n);
  for (int64_t i = 0; i < n; i++) {
    ld r = f->ref((ld)x[i]);
    double e = ulp_err((ld)y[i], r, 53, -1021, (ld)DBL_MAX);
    if (f->negabs && x[i] < 0 && e > 0) e = neg_scaled_err(f, x[i], y[i], r, 53);
    stat_add(st, e, x[i], y[i]);
  }
}

#define BATCH 4096

static int quick = 0; /* fewer points: the other ISA variants, sanitizer builds */

static void test_unary(const ufunc *f, int exhaustive, int verbose) {
  static float x32[BATCH], y32[BATCH];
  static double x64[BATCH], y64[BATCH];
  stats s32 = {0}, s64 = {0};
  /* f32: every 2^k-th bit pattern (all of them when exhaustive), specials, focused range */
  /* odd step: varied low bits; exhaustive on the best instruction set only */
  uint64_t step = exhaustive && !quick ? 1 : (quick ? 16381 : 1021);
  int64_t k = 0;
  for (uint64_t b = 0; b < (1ULL << 32); b += step) {
    uint32_t u = (uint32_t)b;
    memcpy(&x32[k], &u, 4);
    if (++k == BATCH) {
      run32(f, x32, y32, k, &s32);
      k = 0;
    }
  }
  for (int i = 0; i < NSPEC; i++) {
    x32[k] = (float)specials[i];
    if (++k == BATCH) {
      run32(f, x32, y32, k, &s32);
      k = 0;
    }
  }
  for (int i = 0; i < (quick ? 20000 : 200000); i++) {
    x32[k] = (float)(f->lo + (f->hi - f->lo) * rndu());
    if (++k == BATCH) {
      run32(f, x32, y32, k, &s32);
      k = 0;
    }
  }
  if (k) run32(f, x32, y32, k, &s32);
  /* f64: random bit patterns, specials, focused range, and near-integers/half-integers */
  k = 0;
  for (int i = 0; i < (quick ? 30000 : 300000) + NSPEC; i++) {
    double v;
    if (i < NSPEC) v = specials[i];
    else if (i % 3 == 0) {
      uint64_t b = rnd64();
      memcpy(&v, &b, 8);
    } else if (i % 3 == 1) v = f->lo + (f->hi - f->lo) * rndu();
    else { /* small magnitudes with random exponents */
      v = ldexp(1.0 + rndu(), -(int)(rnd64() % 80)) * ((rnd64() & 1) ? 1 : -1);
    }
    x64[k] = v;
    if (++k == BATCH) {
      run64(f, x64, y64, k, &s64);
      k = 0;
    }
  }
  if (k) run64(f, x64, y64, k, &s64);
  if (verbose || s32.max > f->bound32 || s32.bad)
    printf("  %-11s f32: max %.3f ulp at %.9g (%ld points)\n", f->name, s32.max, s32.at, s32.n);
  if (verbose || s64.max > f->bound64 || s64.bad)
    printf("  %-11s f64: max %.3f ulp at %.17g (%ld points)\n", f->name, s64.max, s64.at, s64.n);
  CHECK_MSG(s32.max <= f->bound32, "%s f32: max %.3f ulp > %.1f at x = %.9g", f->name, s32.max,
            f->bound32, s32.at);
  CHECK_MSG(s32.bad == 0, "%s f32: %ld special-value mismatches, first x = %.9g -> %.9g", f->name,
            s32.bad, s32.bad_at, s32.bad_y);
  CHECK_MSG(s64.max <= f->bound64, "%s f64: max %.3f ulp > %.1f at x = %.17g", f->name, s64.max,
            f->bound64, s64.at);
  CHECK_MSG(s64.bad == 0, "%s f64: %ld special-value mismatches, first x = %.17g -> %.17g",
            f->name, s64.bad, s64.bad_at, s64.bad_y);
}

/* ---------------- binary: atan2, pow ---------------- */

static ld ref_atan2(ld y, ld x) { return atan2l(y, x); }
static ld ref_pow(ld x, ld y) { return powl(x, y); }

typedef struct {
  const char *name;
  void (*f32)(const float *, const float *, float *, int64_t);
  void (*f64)(const double *, const double *, double *, int64_t);
  ld (*ref)(ld, ld);
  double bound32, bound64;
} bfunc;

static void test_binary(const bfunc *f, int verbose) {
  enum { N = 200000 };
  static double a[N], b[N], o[N];
  static float af[N], bf[N], of[N];
  int64_t n = 0;
  for (int i = 0; i < NSPEC; i++)
    for (int j = 0; j < NSPEC; j++) {
      a[n] = specials[i];
      b[n] = specials[j];
      n++;
    }
  while (n < N) {
    int kind = (int)(rnd64() % 4);
    double x, y;
    if (kind == 0) {
      uint64_t u = rnd64(), v = rnd64();
      memcpy(&x, &u, 8);
      memcpy(&y, &v, 8);
    } else if (kind == 1) {
      x = (rndu() - 0.5) * 20;
      y = (rndu() - 0.5) * 20;
    } else if (kind == 2) {
      x = ldexp(rndu(), (int)(rnd64() % 200) - 100);
      y = (rndu() - 0.5) * 200;
    } else {
      x = -ldexp(1.0 + rndu(), (int)(rnd64() % 20) - 10);
      y = (double)(int)(rnd64() % 200) - 100;
    }
    a[n] = x;
    b[n] = y;
    n++;
  }
  stats s32 = {0}, s64 = {0};
  f->f64(a, b, o, n);
  for (int64_t i = 0; i < n; i++) {
    double e = ulp_err((ld)o[i], f->ref(a[i], b[i]), 53, -1021, (ld)DBL_MAX);
    if (e < 0 && s64.bad == 0) printf("  %s f64 (%.17g, %.17g) -> %.17g, want %.17Lg\n", f->name, a[i], b[i], o[i], f->ref(a[i], b[i]));
    if (e > s64.max) s64.bad_y = b[i];
    stat_add(&s64, e, a[i], o[i]);
  }
  for (int64_t i = 0; i < n; i++) {
    af[i] = (float)a[i];
    bf[i] = (float)b[i];
  }
  f->f32(af, bf, of, n);
  for (int64_t i = 0; i < n; i++) {
    double e = ulp_err((ld)of[i], f->ref(af[i], bf[i]), 24, -125, (ld)FLT_MAX);
    if (e < 0 && s32.bad == 0) printf("  %s f32 (%.9g, %.9g) -> %.9g, want %.9Lg\n", f->name, af[i], bf[i], of[i], f->ref(af[i], bf[i]));
    if (e > s32.max) s32.bad_y = bf[i];
    stat_add(&s32, e, af[i], of[i]);
  }
  if (verbose || s32.max > f->bound32 || s32.bad)
    printf("  %-11s f32: max %.3f ulp (%ld points)\n", f->name, s32.max, s32.n);
  if (verbose || s64.max > f->bound64 || s64.bad)
    printf("  %-11s f64: max %.3f ulp (%ld points)\n", f->name, s64.max, s64.n);
  CHECK_MSG(s32.max <= f->bound32, "%s f32: max %.3f ulp at (%.9g, %.9g)", f->name, s32.max,
            s32.at, s32.bad_y);
  CHECK_MSG(s32.bad == 0, "%s f32: %ld special-value mismatches", f->name, s32.bad);
  CHECK_MSG(s64.max <= f->bound64, "%s f64: max %.3f ulp at (%.17g, %.17g)", f->name, s64.max,
            s64.at, s64.bad_y);
  CHECK_MSG(s64.bad == 0, "%s f64: %ld special-value mismatches", f->name, s64.bad);
}

static const bfunc bfuncs[] = {
    {"atan2", cj_vm_atan2_f32, cj_vm_atan2_f64, ref_atan2, 1, 2},
    {"pow", cj_vm_pow_f32, cj_vm_pow_f64, ref_pow, 1, 2},
};

/* ---------------- contract: n = 0, unaligned, in place, every length ---------------- */

static void test_contract(void) {
  double buf[80], out[80], ref[80];
  float fb[80], fo[80], fr[80];
  for (int i = 0; i < 80; i++) {
    buf[i] = (i - 40) * 0.37;
    fb[i] = (float)buf[i];
  }
  cj_vm_exp_f64(buf, out, 0);  /* nothing happens */
  cj_vm_exp_f64(NULL, NULL, 0);
  cj_vm_exp_f64(buf, ref, 80);
  cj_vm_exp_f32(fb, fr, 80);
  for (int n = 0; n <= 40; n++)
    for (int off = 0; off < 3; off++) {
      double tmp[80];
      memcpy(tmp, buf, sizeof tmp);
      for (int i = 0; i < 80; i++) out[i] = -7;
      cj_vm_exp_f64(buf + off, out + off, n);
      int ok = 1;
      for (int i = 0; i < 80; i++) {
        double want = (i >= off && i < off + n) ? ref[i] : -7;
        if (memcmp(&out[i], &want, 8) != 0) ok = 0;
      }
      CHECK_MSG(ok, "exp_f64 n=%d off=%d wrote the wrong elements", n, off);
      cj_vm_exp_f64(tmp + off, tmp + off, n); /* in place */
      ok = 1;
      for (int i = off; i < off + n; i++) ok &= memcmp(&tmp[i], &ref[i], 8) == 0;
      CHECK_MSG(ok, "exp_f64 in place n=%d off=%d", n, off);
      /* f32 through an unaligned (odd) address */
      char raw[80 * 4 + 8];
      float *mis = (float *)(void *)(raw + 4 + 0);
      memcpy(mis, fb + off, sizeof(float) * (size_t)n);
      cj_vm_exp_f32(mis, mis, n);
      ok = 1;
      for (int i = 0; i < n; i++) ok &= memcmp(&mis[i], &fr[i + off], 4) == 0;
      CHECK_MSG(ok, "exp_f32 in place n=%d off=%d", n, off);
      (void)fo;
    }
}

/* ---------------- agreement with XLA:CPU's f32 arithmetic ---------------- */

/* tests/vmath/xla_ref.py: the same inputs, the FNV-1a hash of jax's (XLA:CPU) result bits */
static const struct {
  const char *name;
  double lo, hi;
  uint64_t hash;
} xla_refs[] = {
    {"exp", -87.3, 88.3, 0x3564f20286821a30ULL},
    {"log", -125.9, 127.9, 0xb019cbe2c6047121ULL},
    {"expm1", 2.5, 88.3, 0x7590a4fdf4ed9594ULL},
    {"logistic", 0.0, 80.0, 0x8863f88151d2404aULL},
    {"erf", -5.0, 5.0, 0xabe7cf37b5fa9bb5ULL}, /* printed with jaxlib 0.12.0.1 */
};

static void test_xla_compat(void) {
  enum { N = 100000 };
  static float x[N], y[N];
  for (size_t c = 0; c < sizeof xla_refs / sizeof xla_refs[0]; c++) {
    uint64_t st = 0x243F6A8885A308D3ULL;
    for (int i = 0; i < N; i++) {
      st += 0x9E3779B97F4A7C15ULL;
      uint64_t z = st;
      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
      z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
      z ^= z >> 31;
      double v = xla_refs[c].lo + (xla_refs[c].hi - xla_refs[c].lo) * ((double)(z >> 11) * 0x1p-53);
      x[i] = strcmp(xla_refs[c].name, "log") == 0 ? (float)pow(2.0, v) : (float)v;
    }
    const char *nm = xla_refs[c].name;
    if (strcmp(nm, "exp") == 0) cj_vm_exp_f32(x, y, N);
    else if (strcmp(nm, "log") == 0) cj_vm_log_f32(x, y, N);
    else if (strcmp(nm, "expm1") == 0) cj_vm_expm1_f32(x, y, N);
    else if (strcmp(nm, "erf") == 0) cj_vm_erf_f32(x, y, N);
    else cj_vm_logistic_f32(x, y, N);
    uint64_t h = 0xCBF29CE484222325ULL;
    for (int i = 0; i < N; i++) {
      uint32_t b;
      memcpy(&b, &y[i], 4);
      h = (h ^ b) * 0x100000001B3ULL;
    }
    CHECK_MSG(h == xla_refs[c].hash, "%s f32 on [%g, %g): results differ from XLA:CPU's (hash %016llx)",
              nm, xla_refs[c].lo, xla_refs[c].hi, (unsigned long long)h);
  }
}

/* complex<f32> pow: XLA's special cases (and a plain value) */
static void test_pow_c64_special(void) {
  const float in[][4] = {
      {0, 0, 0, 0},         /* 0^0 = 1 */
      {0, 0, 2, 0},         /* 0^2 = 0 */
      {0, 0, 0.5f, 0},      /* 0^0.5 = 0 */
      {1, 0, 3, 4},         /* 1^y = 1 */
      {2.5f, -1, 0, 0},     /* x^0 = 1 */
      {INFINITY, 0, 2, 0},  /* inf^2 = inf */
      {INFINITY, 0, -2, 0}, /* inf^-2 = 0 */
      {0, 1, 2, 0},         /* i^2 = -1 (+ float noise) */
      {3, 4, 0.5f, 0},      /* sqrt(3 + 4i) = 2 + i */
  };
  const float want[][2] = {{1, 0}, {0, 0}, {0, 0}, {1, 0}, {1, 0}, {INFINITY, 0}, {0, 0},
                           {-1, 0}, {2, 1}};
  enum { K = sizeof in / sizeof in[0] };
  float x[2 * K], y[2 * K], o[2 * K];
  for (int i = 0; i < K; i++) {
    x[2 * i] = in[i][0];
    x[2 * i + 1] = in[i][1];
    y[2 * i] = in[i][2];
    y[2 * i + 1] = in[i][3];
  }
  cj_vm_pow_c64(x, y, o, K);
  for (int i = 0; i < K; i++) {
    int ok = fabsf(o[2 * i] - want[i][0]) <= 1e-6f * (1 + fabsf(want[i][0])) &&
             fabsf(o[2 * i + 1] - want[i][1]) <= 1e-6f;
    if (isinf(want[i][0])) ok = o[2 * i] == want[i][0] && o[2 * i + 1] == 0;
    CHECK_MSG(ok, "pow_c64 (%g%+gi)^(%g%+gi) = (%g, %g), want (%g, %g)", in[i][0], in[i][1],
              in[i][2], in[i][3], o[2 * i], o[2 * i + 1], want[i][0], want[i][1]);
  }
}

/* complex sqrt at the ends of the range (subnormal, huge, one part far below the other, signed
 * zeros, infinities and NaNs): glibc's csqrtl (C99 Annex G) rounded to the type is the
 * reference; each part within 1 ulp, non-finite parts equal (any NaN for a NaN), zero parts
 * with the reference's sign. */
static int64_t ord64(double v) {
  int64_t b;
  memcpy(&b, &v, 8);
  return b < 0 ? INT64_MIN - b : b;
}
static int64_t ord32(float v) {
  int32_t b;
  memcpy(&b, &v, 4);
  return b < 0 ? (int64_t)INT32_MIN - b : b;
}
static int part_ok(double got, double want, int f32) {
  if (isnan(want) || isnan(got)) return isnan(want) && isnan(got);
  if (isinf(want) || isinf(got) || want == 0 || got == 0)
    if (want == got && signbit(want) == signbit(got)) return 1;
  int64_t d = f32 ? ord32((float)got) - ord32((float)want) : ord64(got) - ord64(want);
  return signbit(want) == signbit(got) && d >= -1 && d <= 1;
}
static void test_sqrt_complex_extremes(void) {
  enum { NS = 27, NR = 4000, N = NS * NS + NR };
  static double z64[2 * N], y64[2 * N];
  static float z32[2 * N], y32[2 * N];
  for (int f32 = 0; f32 < 2; f32++) {
    const double tiny = f32 ? FLT_TRUE_MIN : DBL_TRUE_MIN, mn = f32 ? FLT_MIN : DBL_MIN;
    const double mx = f32 ? FLT_MAX : DBL_MAX;
    const double sv[NS] = {0.0, -0.0, tiny, -tiny, 3 * tiny, -5 * tiny, mn, -mn, mn / 2, -mn / 3,
                           1.0, -1.0, 4.0, -2.0, mx, -mx, mx / 3, -mx / 2, INFINITY, -INFINITY,
                           NAN, -NAN, f32 ? 1e30 : 1e300, f32 ? -1e-30 : -1e-300, 0.75, 1e-3, -7e5};
    int k = 0;
    for (int i = 0; i < NS; i++)
      for (int j = 0; j < NS; j++, k++) z64[2 * k] = sv[i], z64[2 * k + 1] = sv[j];
    /* random magnitudes over the whole exponent range, either sign */
    int emin = f32 ? -149 : -1074, emax = f32 ? 127 : 1023;
    for (; k < N; k++)
      for (int p = 0; p < 2; p++) {
        int e = emin + (int)(rnd64() % (uint64_t)(emax - emin + 1));
        double v = ldexp(1.0 + rndu(), e);
        z64[2 * k + p] = (rnd64() & 1) ? -v : v;
      }
    if (f32) {
      for (int i = 0; i < 2 * N; i++) z32[i] = (float)z64[i], z64[i] = z32[i];
      cj_vm_sqrt_c64(z32, y32, N);
    } else {
      cj_vm_sqrt_c128(z64, y64, N);
    }
    int bad = 0;
    for (int i = 0; i < N; i++) {
      long double complex r = csqrtl(CMPLXL(z64[2 * i], z64[2 * i + 1]));
      double wr = f32 ? (double)(float)creall(r) : (double)creall(r);
      double wi = f32 ? (double)(float)cimagl(r) : (double)cimagl(r);
      double gr = f32 ? y32[2 * i] : y64[2 * i], gi = f32 ? y32[2 * i + 1] : y64[2 * i + 1];
      if (part_ok(gr, wr, f32) && part_ok(gi, wi, f32)) continue;
      if (bad++ < 5)
        CHECK_MSG(0, "sqrt_%s(%a%+ai) = (%a, %a), C99 csqrt (%a, %a)", f32 ? "c64" : "c128",
                  z64[2 * i], z64[2 * i + 1], gr, gi, wr, wi);
    }
    CHECK_MSG(bad == 0, "sqrt_%s: %d of %d extreme inputs off by more than 1 ulp", f32 ? "c64" : "c128",
              bad, N);
  }
}

#if defined(__SANITIZE_ADDRESS__)
static const int sanitized = 1;
#else
static const int sanitized = 0;
#endif

/* f32 bit patterns at the edges of exp, expm1, logistic, log, log1p and rsqrt: overflow, the last
 * finite, subnormal and zero results, the sqrt(2) split of log's mantissa, the branch points
 * (expm1 2.5, -30; logistic -80; log1p -1), subnormal, zero and negative inputs, NaNs */
static const uint32_t f32_edges[] = {
    0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u, 0x7fc00000u, 0xffc00000u, 0x7fa00001u,
    0x7fc12345u, 0x00000001u, 0x80000001u, 0x007fffffu, 0x00800000u, 0x00800001u, 0x3f800000u,
    0x3f7fffffu, 0x3f800001u, 0x3fb504f2u, 0x3fb504f3u, 0x3fb504f4u, 0x3f3504f2u, 0x3f3504f3u,
    0x3f3504f4u, 0x7f7fffffu, 0xff7fffffu, 0x42b17217u, 0x42b17218u, 0x42b17219u, 0x42b1999au,
    0x42b20000u, 0xc2aeac4fu, 0xc2aeac50u, 0xc2aeac51u, 0xc2cff1b3u, 0xc2cff1b4u, 0xc2cff1b5u,
    0xc2d00000u, 0xc2d00001u, 0xc2ce8ed0u, 0xc2ce8ed1u, 0x33800000u, 0xb3800000u, 0x42b0c0a8u,
    0xbf800000u, 0xbf7fffffu, 0xbf800001u, 0xc2b17218u, 0x401fffffu, 0x40200000u, 0x40200001u,
    0xc1f00000u, 0xc1f00001u, 0xc2a00000u, 0xc2a00001u, 0xc29fffffu, 0x3f000000u, 0xbf000000u,
    0x4b800000u, 0xcb800000u, 0x33000000u, 0xb3000000u};
#define NEDGE ((int)(sizeof f32_edges / sizeof f32_edges[0]))

typedef struct {
  const char *name;
  void (*f)(const float *, float *, int64_t);
  ld (*ref)(ld);
  int64_t ulps; /* the test's bound, in whole ulps from the correctly rounded value */
} edge_fn;
static const edge_fn edge_fns[] = {
    {"exp", cj_vm_exp_f32, expl, 1},           {"expm1", cj_vm_expm1_f32, expm1l, 2},
    {"logistic", cj_vm_logistic_f32, ref_logistic, 2}, {"log", cj_vm_log_f32, logl, 1},
    {"log1p", cj_vm_log1p_f32, log1pl, 1},     {"rsqrt", cj_vm_rsqrt_f32, ref_rsqrt, 1}};
#define NEDGE_FN ((int)(sizeof edge_fns / sizeof edge_fns[0]))

/* the AVX-512 functions (vmath_avx512.c, and rsqrt's in vmath_loops.c) give the kernel loops' bits (the AVX2 build of the same
 * arithmetic) on every edge and on a sweep of bit patterns, NaN payloads included, and on
 * partial vectors */
static void test_x512_same_bits(void) {
  if (cj_vm_set_isa(CJ_VM_ISA_AVX512) != CJ_VM_ISA_AVX512) return;
  enum { N = 4096 };
  static float x[N], a[N], b[N];
  uint64_t step = sanitized ? 65537 : 509;
  for (int f = 0; f < NEDGE_FN; f++) {
    long bad = 0;
    uint64_t b0 = 0;
    for (int blk = 0;; blk++) {
      int64_t k = 0;
      if (blk == 0)
        for (int i = 0; i < NEDGE; i++) memcpy(&x[k++], &f32_edges[i], 4);
      for (; k < N && b0 < (1ULL << 32); k++, b0 += step) {
        uint32_t u = (uint32_t)b0;
        memcpy(&x[k], &u, 4);
      }
      if (k == 0) break;
      memset(a, 0, sizeof a);
      memset(b, 0, sizeof b);
      for (int isa = CJ_VM_ISA_AVX512; isa >= CJ_VM_ISA_AVX2; isa--) {
        float *o = isa == CJ_VM_ISA_AVX512 ? a : b;
        cj_vm_set_isa((cj_vm_isa)isa);
        edge_fns[f].f(x, o, k);
        for (int t = 1; t <= 17 && blk == 0; t++) edge_fns[f].f(x + 3, o + N - 17, t);
      }
      for (int64_t i = 0; i < N; i++)
        if (memcmp(&a[i], &b[i], 4) != 0 && bad++ < 5)
          printf("  %s f32: avx512 %a != avx2 %a at x = %a\n", edge_fns[f].name, (double)a[i],
                 (double)b[i], (double)x[i < k ? i : 0]);
    }
    CHECK_MSG(bad == 0, "%s f32: the AVX-512 function differs from the kernel loop on %ld inputs",
              edge_fns[f].name, bad);
  }
  cj_vm_set_isa(CJ_VM_ISA_AVX512);
}

/* the edges against long double references, on every instruction set: zero, infinite and NaN
 * results exactly, the others within the function's bound */
static void test_edges(void) {
  float x[NEDGE], y[NEDGE];
  for (int i = 0; i < NEDGE; i++) memcpy(&x[i], &f32_edges[i], 4);
  for (int f = 0; f < NEDGE_FN; f++) {
    edge_fns[f].f(x, y, NEDGE);
    for (int i = 0; i < NEDGE; i++) {
      float want = (float)edge_fns[f].ref((ld)x[i]); /* one rounding: correctly rounded */
      int ok;
      if (isnan(want)) ok = isnan(y[i]);
      else if (want == 0 || isinf(want)) ok = memcmp(&want, &y[i], 4) == 0;
      else ok = llabs((long long)(ord32(y[i]) - ord32(want))) <= edge_fns[f].ulps;
      CHECK_MSG(ok, "%s f32 at %a: %a, want %a", edge_fns[f].name, (double)x[i], (double)y[i],
                (double)want);
    }
  }
}

int main(void) {
  int exhaustive = env_on("CJ_VMATH_EXHAUSTIVE");
  int verbose = env_on("CJ_VMATH_VERBOSE");
  const char *only = getenv("CJ_VMATH_ONLY");
  cj_vm_isa best = cj_vm_get_isa();
  test_x512_same_bits();
  for (int isa = best; isa >= 0; isa--) {
    cj_vm_isa got = cj_vm_set_isa((cj_vm_isa)isa);
    CHECK_EQ_INT(got, isa);
    quick = isa != (int)best || sanitized;
    printf("vmath [%s]%s\n", cj_vm_isa_name(got), quick ? " (reduced sweep)" : "");
    rng_state = 0x9E3779B97F4A7C15ULL;
    test_contract();
    test_edges();
    if (isa != CJ_VM_ISA_GENERIC) test_xla_compat(); /* the baseline has no fused multiply-add */
    test_pow_c64_special();
    test_sqrt_complex_extremes();
    for (int i = 0; i < NU; i++)
      if (!only || strcmp(only, ufuncs[i].name) == 0) test_unary(&ufuncs[i], exhaustive, verbose);
    for (int i = 0; i < 2; i++)
      if (!only || strcmp(only, bfuncs[i].name) == 0) test_binary(&bfuncs[i], verbose);
  }
  /* every table entry is filled (a missing designated initializer would be NULL) */
  cj_vm_set_isa(CJ_VM_ISA_AVX512);
  return check_report("vmath");
}
