/* bench_vmath: ns per element of the vectorized math library (src/cpu/vmath.h) against a plain
 * scalar loop over glibc's libm (or the obvious scalar formula where libm has no such function),
 * f32 and f64, on blocks of 4096 elements that stay in L1/L2 (as the executor calls it).
 *
 *   bench_vmath [seconds-per-case=0.05] [isa=best|generic|avx2|avx512] [filter]
 *
 * Prints one line per function and type: vmath ns/elem, libm ns/elem, speedup. Times are this
 * thread's CPU time, so other load on the machine does not count (its cache effects still do). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cpu/vmath.h"

#define N 4096

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts); /* CPU time: robust on a shared, loaded machine */
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static uint64_t rs = 88172645463325252ULL;
static double rnd(void) {
  rs ^= rs << 13;
  rs ^= rs >> 7;
  rs ^= rs << 17;
  return (double)(rs >> 11) * 0x1p-53;
}

/* scalar references */
static float lf_logistic(float x) { return 1.0f / (1.0f + expf(-x)); }
static double ld_logistic(double x) { return 1.0 / (1.0 + exp(-x)); }
static float lf_rsqrt(float x) { return 1.0f / sqrtf(x); }
static double ld_rsqrt(double x) { return 1.0 / sqrt(x); }
static float lf_lgamma(float x) { int s; return lgammaf_r(x, &s); }
static double ld_lgamma(double x) { int s; return lgamma_r(x, &s); }
/* no libm function: a short scalar series/Newton loop of the usual kind */
static double ld_digamma(double x) {
  double acc = 0;
  while (x < 6) acc -= 1 / x, x += 1;
  double z = 1 / (x * x);
  return acc + log(x) - 0.5 / x - z * (1.0 / 12 - z * (1.0 / 120 - z / 252));
}
static float lf_digamma(float x) { return (float)ld_digamma(x); }
static double ld_erf_inv(double y) {
  double x = 0;
  for (int i = 0; i < 6; i++) x -= (erf(x) - y) / (1.1283791670955126 * exp(-x * x));
  return x;
}
static float lf_erf_inv(float y) { return (float)ld_erf_inv(y); }
static double ld_i1e(double x) {
  double a = fabs(x), h = a / 2, t = h, s = h;
  for (int k = 1; k < 60 && t > s * 1e-17; k++) t *= h * h / (k * (k + 1.0)), s += t;
  return copysign(s * exp(-a), x);
}
static float lf_i1e(float x) { return (float)ld_i1e(x); }

typedef struct {
  const char *name;
  void (*v32)(const float *, float *, int64_t);
  void (*v64)(const double *, double *, int64_t);
  float (*s32)(float);
  double (*s64)(double);
  double lo, hi;
} ucase;

#define C(n, sf, sd, lo, hi) {#n, cj_vm_##n##_f32, cj_vm_##n##_f64, sf, sd, lo, hi}
static const ucase ucases[] = {
    C(exp, expf, exp, -80, 80),          C(exp2, exp2f, exp2, -100, 100),
    C(expm1, expm1f, expm1, -5, 5),      C(log, logf, log, 1e-3, 1e3),
    C(log2, log2f, log2, 1e-3, 1e3),     C(log10, log10f, log10, 1e-3, 1e3),
    C(log1p, log1pf, log1p, -0.9, 10),   C(sin, sinf, sin, -10, 10),
    C(cos, cosf, cos, -10, 10),          C(tan, tanf, tan, -10, 10),
    C(tanh, tanhf, tanh, -10, 10),       C(sinh, sinhf, sinh, -10, 10),
    C(cosh, coshf, cosh, -10, 10),       C(asin, asinf, asin, -1, 1),
    C(acos, acosf, acos, -1, 1),         C(atan, atanf, atan, -10, 10),
    C(asinh, asinhf, asinh, -10, 10),    C(acosh, acoshf, acosh, 1, 10),
    C(atanh, atanhf, atanh, -1, 1),      C(sqrt, sqrtf, sqrt, 0, 100),
    C(rsqrt, lf_rsqrt, ld_rsqrt, 0, 100), C(cbrt, cbrtf, cbrt, -100, 100),
    C(logistic, lf_logistic, ld_logistic, -10, 10), C(erf, erff, erf, -4, 4),
    C(erfc, erfcf, erfc, -4, 10),        C(erf_inv, lf_erf_inv, ld_erf_inv, -1, 1),
    C(lgamma, lf_lgamma, ld_lgamma, -10, 20), C(digamma, lf_digamma, ld_digamma, 0.1, 20),
    C(bessel_i1e, lf_i1e, ld_i1e, -20, 20),
};

static volatile double sink;

static double time_vm32(const ucase *c, const float *x, float *y, double secs) {
  long reps = 0;
  double t0 = now(), t;
  do {
    for (int r = 0; r < 16; r++) c->v32(x, y, N);
    reps += 16;
    t = now();
  } while (t - t0 < secs);
  sink = y[N / 2];
  return (t - t0) / ((double)reps * N) * 1e9;
}
static double time_vm64(const ucase *c, const double *x, double *y, double secs) {
  long reps = 0;
  double t0 = now(), t;
  do {
    for (int r = 0; r < 16; r++) c->v64(x, y, N);
    reps += 16;
    t = now();
  } while (t - t0 < secs);
  sink = y[N / 2];
  return (t - t0) / ((double)reps * N) * 1e9;
}
static double time_s32(const ucase *c, const float *x, float *y, double secs) {
  long reps = 0;
  double t0 = now(), t;
  do {
    for (int i = 0; i < N; i++) y[i] = c->s32(x[i]);
    reps++;
    t = now();
  } while (t - t0 < secs);
  sink = y[N / 2];
  return (t - t0) / ((double)reps * N) * 1e9;
}
static double time_s64(const ucase *c, const double *x, double *y, double secs) {
  long reps = 0;
  double t0 = now(), t;
  do {
    for (int i = 0; i < N; i++) y[i] = c->s64(x[i]);
    reps++;
    t = now();
  } while (t - t0 < secs);
  sink = y[N / 2];
  return (t - t0) / ((double)reps * N) * 1e9;
}

int main(int argc, char **argv) {
  double secs = argc > 1 ? atof(argv[1]) : 0.05;
  if (argc > 2 && strcmp(argv[2], "best") != 0) {
    cj_vm_isa isa = strcmp(argv[2], "generic") == 0 ? CJ_VM_ISA_GENERIC
                    : strcmp(argv[2], "avx2") == 0  ? CJ_VM_ISA_AVX2
                                                    : CJ_VM_ISA_AVX512;
    cj_vm_set_isa(isa);
  }
  const char *filter = argc > 3 ? argv[3] : NULL;
  /* outputs offset from the inputs by a non-multiple of 4 KiB: arrays exactly 4 KiB-multiples
   * apart make loads falsely wait on earlier stores ("4K aliasing") and skew a run by 5x */
  static float x32[N], y32b[N + 64];
  static double x64[N], y64b[N + 64];
  float *y32 = y32b + 24;
  double *y64 = y64b + 24;
  printf("bench_vmath [%s], blocks of %d, ns per element (lower is better)\n",
         cj_vm_isa_name(cj_vm_get_isa()), N);
  printf("%-11s %9s %9s %7s   %9s %9s %7s\n", "function", "f32 vm", "f32 libm", "x", "f64 vm",
         "f64 libm", "x");
  double g32 = 0, g64 = 0;
  int cnt = 0;
  for (size_t k = 0; k < sizeof ucases / sizeof ucases[0]; k++) {
    const ucase *c = &ucases[k];
    if (filter && !strstr(c->name, filter)) continue;
    for (int i = 0; i < N; i++) {
      x64[i] = c->lo + (c->hi - c->lo) * rnd();
      x32[i] = (float)x64[i];
    }
    double v32 = time_vm32(c, x32, y32, secs), s32 = time_s32(c, x32, y32, secs);
    double v64 = time_vm64(c, x64, y64, secs), s64 = time_s64(c, x64, y64, secs);
    printf("%-11s %9.3f %9.3f %6.1fx   %9.3f %9.3f %6.1fx\n", c->name, v32, s32, s32 / v32, v64,
           s64, s64 / v64);
    g32 += log(s32 / v32);
    g64 += log(s64 / v64);
    cnt++;
  }
  if (cnt)
    printf("geometric mean speedup: f32 %.1fx, f64 %.1fx\n", exp(g32 / cnt), exp(g64 / cnt));
  /* complex, a few: ns per complex element */
  static float c32[2 * N], o32[2 * N];
  static double c64[2 * N], o64[2 * N];
  for (int i = 0; i < 2 * N; i++) {
    c64[i] = 4 * (rnd() - 0.5);
    c32[i] = (float)c64[i];
  }
  struct {
    const char *name;
    void (*f64)(const float *, float *, int64_t);
    void (*f128)(const double *, double *, int64_t);
  } cc[] = {{"c exp", cj_vm_exp_c64, cj_vm_exp_c128},   {"c log", cj_vm_log_c64, cj_vm_log_c128},
            {"c sqrt", cj_vm_sqrt_c64, cj_vm_sqrt_c128}, {"c sin", cj_vm_sin_c64, cj_vm_sin_c128},
            {"c tanh", cj_vm_tanh_c64, cj_vm_tanh_c128}, {"c asin", cj_vm_asin_c64, cj_vm_asin_c128},
            {"c atanh", cj_vm_atanh_c64, cj_vm_atanh_c128}};
  printf("%-11s %9s %9s\n", "complex", "c64 vm", "c128 vm");
  for (size_t k = 0; k < sizeof cc / sizeof cc[0]; k++) {
    if (filter && !strstr(cc[k].name, filter)) continue;
    long reps = 0;
    double t0 = now(), t;
    do {
      cc[k].f64(c32, o32, N);
      reps++;
      t = now();
    } while (t - t0 < secs);
    double a = (t - t0) / ((double)reps * N) * 1e9;
    reps = 0;
    t0 = now();
    do {
      cc[k].f128(c64, o64, N);
      reps++;
      t = now();
    } while (t - t0 < secs);
    double b = (t - t0) / ((double)reps * N) * 1e9;
    printf("%-11s %9.3f %9.3f\n", cc[k].name, a, b);
  }
  sink = o32[0] + o64[0];
  return 0;
}
