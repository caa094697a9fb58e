/* cjrt vmath: scalar-form, branch-free kernels of the real functions (double precision).
 *
 * This file is a "body": it compiles to nothing on its own and is included by each
 * vmath_isa_*.c translation unit, once per instruction set, with CJ_VM_BODY defined and
 * VM_HAVE_FMA saying whether fused multiply-add is an instruction there. Every kernel is a
 * static inline function of one element written without data-dependent branches (both sides
 * are computed and selected), so the block loops in vmath_loops.c vectorize.
 *
 * Algorithms: argument reduction + polynomial (coefficients fitted by tests/vmath/fit.py or
 * Taylor), in the classic structure of Cody & Waite and of Sun's fdlibm (which documents the
 * error analysis of these reductions); all code here is ours.
 */
#ifdef CJ_VM_BODY

#include <math.h>
#include <stdint.h>
#include <string.h>

#define VM_INLINE static inline __attribute__((always_inline))

/* The bit helpers of a float type F whose bits are the unsigned U with sign bit SIGN: BITS(x),
 * its bits; FROM(u), the F of bits u; ABS and COPYSIGN by the sign bit (so NaN's payload stays).
 * Defined here for double and in vmath_f32.c for float. */
#define VM_FLOAT_BITS(F, U, SIGN, BITS, FROM, ABS, COPYSIGN)                     \
  VM_INLINE U BITS(F x) {                                                        \
    U u;                                                                         \
    memcpy(&u, &x, sizeof u);                                                    \
    return u;                                                                    \
  }                                                                              \
  VM_INLINE F FROM(U u) {                                                        \
    F x;                                                                         \
    memcpy(&x, &u, sizeof x);                                                    \
    return x;                                                                    \
  }                                                                              \
  VM_INLINE F ABS(F x) { return FROM(BITS(x) & ~(SIGN)); }                       \
  VM_INLINE F COPYSIGN(F mag, F sgn) { return FROM((BITS(mag) & ~(SIGN)) | (BITS(sgn) & (SIGN))); }
VM_FLOAT_BITS(double, uint64_t, 0x8000000000000000ULL, vm_bits, vm_dbl, vm_abs, vm_copysign)
/* x with the sign flipped where s has its sign bit set */
VM_INLINE double vm_xorsign(double x, double s) {
  return vm_dbl(vm_bits(x) ^ (vm_bits(s) & 0x8000000000000000ULL));
}
VM_INLINE int vm_isnan(double x) { return x != x; }
VM_INLINE int vm_signbit(double x) { return (int)(vm_bits(x) >> 63); }
VM_INLINE double vm_sel(int c, double a, double b) { return c ? a : b; }
VM_INLINE void vm_two_prod(double a, double b, double *hi, double *lo);
/* Square root for use inside kernels, in software: a plain sqrt() call is not vectorized by
 * GCC unless the whole compilation has -fno-math-errno (its errno check is control flow, and
 * `#pragma GCC optimize` does not remove it). Three Newton steps on 1/sqrt from a bit-trick
 * estimate (3.4% -> 3e-11) and one exact-residual correction: error <= 0.5 ulp + 2^-60, i.e.
 * faithful and nearly always correctly rounded. The array sqrt uses the instruction itself. */
VM_INLINE double vm_sqrt(double x) {
  int tiny = x < 0x1p-900, huge = x > 0x1p900;
  double a = tiny ? x * 0x1p600 : (huge ? x * 0x1p-600 : x);
  a = x > 0.0 ? a : 1.0;
  a = x < INFINITY ? a : 1.0;
  double y = vm_dbl(0x5fe6eb50c7b537a9ULL - (vm_bits(a) >> 1));
  double h = 0.5 * a;
  y = y * (1.5 - h * y * y);
  y = y * (1.5 - h * y * y);
  y = y * (1.5 - h * y * y);
  double s = a * y, p, pl;
  vm_two_prod(s, s, &p, &pl);
  double d = (a - p) - pl;
  s = s + d * (0.5 * y);
  s = tiny ? s * 0x1p-300 : (huge ? s * 0x1p300 : s);
  s = x == 0.0 ? x : s;
  s = x == INFINITY ? x : s;
  s = x < 0.0 ? NAN : s;
  return vm_isnan(x) ? x + x : s;
}
/* round to nearest integer for |x| < 2^51 (other values come back unchanged or harmlessly) */
#define VM_SHIFT 0x1.8p52
VM_INLINE double vm_round(double x) { return (x + VM_SHIFT) - VM_SHIFT; }
/* round to nearest (ties to even) for any x: |x| >= 2^52 is already an integer */
VM_INLINE double vm_round_any(double x) {
  double a = vm_abs(x);
  double r = (a + 0x1p52) - 0x1p52;
  r = vm_copysign(r, x);
  return a < 0x1p52 ? r : x;
}
/* int64 -> double for |k| < 2^51 without a conversion instruction */
VM_INLINE double vm_i2d(int64_t k) {
  return vm_dbl(vm_bits(VM_SHIFT) + (uint64_t)k) - VM_SHIFT;
}
/* 2^k for k in [-1022, 1023] */
VM_INLINE double vm_pow2i(int64_t k) { return vm_dbl((uint64_t)(k + 1023) << 52); }
/* p * 2^k for k in [-2000, 2000], one rounding (two exact-then-rounding scalings) */
VM_INLINE double vm_scale(double p, int64_t k) {
  int64_t k1 = ((k + 2048) >> 1) - 1024;
  int64_t k2 = k - k1;
  return p * vm_pow2i(k1) * vm_pow2i(k2);
}

#if VM_HAVE_FMA
#define VM_FMA(a, b, c) __builtin_fma((a), (b), (c))
VM_INLINE void vm_two_prod(double a, double b, double *hi, double *lo) {
  double p = a * b;
  *hi = p;
  *lo = __builtin_fma(a, b, -p);
}
#else
#define VM_FMA(a, b, c) ((a) * (b) + (c))
VM_INLINE void vm_split(double a, double *h, double *l) {
  double c = 134217729.0 * a; /* 2^27 + 1 */
  double hh = c - (c - a);
  *h = hh;
  *l = a - hh;
}
VM_INLINE void vm_two_prod(double a, double b, double *hi, double *lo) {
  double p = a * b, ah, al, bh, bl;
  vm_split(a, &ah, &al);
  vm_split(b, &bh, &bl);
  *hi = p;
  *lo = ((ah * bh - p) + ah * bl + al * bh) + al * bl;
}
#endif

/* VM_HORNER(x, c_n, ..., c_1, c_0): the polynomial c_n x^n + ... + c_1 x + c_0 (2 to 16
 * coefficients, the highest degree first) in Horner form, one VM_FMA per degree: ((c_n x +
 * c_{n-1}) x + ...) x + c_0. */
#define VM_HORNER(x, ...) VM_HORNER_N(VM_NARGS(__VA_ARGS__), x, __VA_ARGS__)
#define VM_HORNER_N(n, x, ...) VM_HORNER_CAT(VM_H, n)(x, __VA_ARGS__)
#define VM_HORNER_CAT(a, n) a##n
#define VM_NARGS(...) VM_NARGS_(__VA_ARGS__, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define VM_NARGS_(a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, n, ...) n
#define VM_H2(x, a, b) VM_FMA(a, x, b)
#define VM_H3(x, a, b, ...) VM_H2(x, VM_FMA(a, x, b), __VA_ARGS__)
#define VM_H4(x, a, b, ...) VM_H3(x, VM_FMA(a, x, b), __VA_ARGS__)
#define VM_H5(x, a, b, ...) VM_H4(x, VM_FMA(a, x, b), __VA_ARGS__)
#define VM_H6(x, a, b, ...) VM_H5(x, VM_FMA(a, x, b), __VA_ARGS__)
#define VM_H7(x, a, b, ...) VM_H6(x, VM_FMA(a, x, b), __VA_ARGS__)
#define VM_H8(x, a, b, ...) VM_H7(x, VM_FMA(a, x, b), __VA_ARGS__)
#define VM_H9(x, a, b, ...) VM_H8(x, VM_FMA(a, x, b), __VA_ARGS__)
#define VM_H10(x, a, b, ...) VM_H9(x, VM_FMA(a, x, b), __VA_ARGS__)
#define VM_H11(x, a, b, ...) VM_H10(x, VM_FMA(a, x, b), __VA_ARGS__)
#define VM_H12(x, a, b, ...) VM_H11(x, VM_FMA(a, x, b), __VA_ARGS__)
#define VM_H13(x, a, b, ...) VM_H12(x, VM_FMA(a, x, b), __VA_ARGS__)
#define VM_H14(x, a, b, ...) VM_H13(x, VM_FMA(a, x, b), __VA_ARGS__)
#define VM_H15(x, a, b, ...) VM_H14(x, VM_FMA(a, x, b), __VA_ARGS__)
#define VM_H16(x, a, b, ...) VM_H15(x, VM_FMA(a, x, b), __VA_ARGS__)
VM_INLINE void vm_fast_two_sum(double a, double b, double *s, double *e) {
  double t = a + b;
  *s = t;
  *e = b - (t - a);
}
VM_INLINE void vm_two_sum(double a, double b, double *s, double *e) {
  double t = a + b;
  double bb = t - a;
  *s = t;
  *e = (a - (t - bb)) + (b - bb);
}

/* ---------------- constants ---------------- */
#define LN2_HI 0x1.62e42feep-1 /* 32 significant bits: k*LN2_HI exact for |k| < 2^21 */
#define LN2_LO 0x1.a39ef35793c76p-33
#define INV_LN2 0x1.71547652b82fep+0
#define LN2 0x1.62e42fefa39efp-1
#define PIO2_HI 0x1.921fb54442d18p+0
#define PIO2_LO 0x1.1a62633145c07p-54
#define PIO4_HI 0x1.921fb54442d18p-1
#define PIO4_LO 0x1.1a62633145c07p-55
#define PI_HI 0x1.921fb54442d18p+1
#define PI_LO 0x1.1a62633145c07p-53
#define TWO_OVER_PI 0x1.45f306dc9c883p-1
#define SQRT_HALF_BITS 0x3fe6a09e667f3bcdULL

/* ---------------- exp family ---------------- */

/* (e^r - 1 - r) / r^2 for |r| <= 0.35: Taylor to r^13 */
VM_INLINE double vm_em1_coef(double r) {
  return VM_HORNER(r, 7.6471637318198164e-13, 1.1470745597729725e-11, 1.6059043836821613e-10,
                      2.08767569878681e-09, 2.505210838544172e-08, 2.7557319223985888e-07,
                      2.7557319223985893e-06, 2.4801587301587302e-05, 0.00019841269841269841,
                      0.0013888888888888889, 0.0083333333333333332, 0.041666666666666664,
                      0.16666666666666666, 0.5);
}

/* e^r - 1 for |r| <= 0.35: Taylor to r^15 (truncation < 1e-19 relative) */
VM_INLINE double vm_em1_poly(double r) { return VM_FMA(r * r, vm_em1_coef(r), r); }

/* e^r - 1 - r for |r| <= 0.35 */
VM_INLINE double vm_em1_tail(double r) { return r * r * vm_em1_coef(r); }

/* e^(x + xl) = 2^k * (1 + r + t), |r| <= 0.35, |t| < 0.07 (r exact, t carries the rest);
 * x must be clamped to about [-1500, 1500] (NaN is fine) */
VM_INLINE void vm_exp_rt(double x, double xl, int64_t *k, double *r, double *t) {
  double kd = VM_FMA(x, INV_LN2, VM_SHIFT);
  *k = (int64_t)(vm_bits(kd) - vm_bits(VM_SHIFT));
  kd -= VM_SHIFT;
  double hi = x - kd * LN2_HI; /* exact */
  double lo = kd * LN2_LO - xl;
  double rr = hi - lo;
  double c = (hi - rr) - lo;
  double tt = vm_em1_tail(rr);
  *r = rr;
  *t = tt + VM_FMA(c, rr + tt, c);
}
/* e^x = 2^k (h + l) with h + l = 1 + r + t (vm_exp_rt) as a double-double, unscaled */
VM_INLINE int64_t vm_exp_dd(double x, double *h, double *l) {
  int64_t k;
  double r, t;
  vm_exp_rt(x, 0.0, &k, &r, &t);
  vm_fast_two_sum(1.0, r, h, l);
  vm_fast_two_sum(*h, *l + t, h, l);
  return k;
}
/* e^(x + xl) = 2^k * (1 + q) */
VM_INLINE void vm_exp_parts(double x, double xl, int64_t *k, double *q) {
  double r, t;
  vm_exp_rt(x, xl, k, &r, &t);
  *q = r + t;
}
/* e^x - 1 as hi + lo for x clamped to [-60, 720]: exact when |k| small */
VM_INLINE void vm_expm1_hl(double x, double *hi, double *lo, int64_t *kout, double *qout) {
  int64_t k;
  double r, t;
  vm_exp_rt(x, 0.0, &k, &r, &t);
  double two_k = vm_scale(1.0, k);
  /* (2^k - 1) + 2^k r + 2^k t */
  double S, E;
  vm_two_sum(two_k - 1.0, vm_scale(r, k), &S, &E);
  double h0, l0;
  vm_fast_two_sum(S, E + vm_scale(t, k), &h0, &l0);
  /* k > 56: 2^k (1 + q) - 1 = 2^k(1+q) */
  double big = vm_scale(1.0 + (r + t), k);
  *hi = k > 56 ? big : h0;
  *lo = k > 56 ? 0.0 : l0;
  *kout = k;
  *qout = r + t;
}

VM_INLINE double vm_clamp(double x, double lo, double hi) {
  x = x < lo ? lo : x;
  return x > hi ? hi : x; /* NaN stays NaN */
}

VM_INLINE double k_exp(double x) {
  double xc = vm_clamp(x, -760.0, 720.0);
  int64_t k;
  double q;
  vm_exp_parts(xc, 0.0, &k, &q);
  double r = vm_scale(1.0 + q, k);
  return vm_isnan(x) ? x + x : r;
}

VM_INLINE double k_exp2(double x) {
  double xc = vm_clamp(x, -1100.0, 1100.0);
  double kd = xc + VM_SHIFT;
  int64_t k = (int64_t)(vm_bits(kd) - vm_bits(VM_SHIFT));
  kd -= VM_SHIFT;
  double f = xc - kd; /* exact, |f| <= 0.5 */
  /* e^(f ln2) with f*ln2 as a double-double */
  double h, l;
  vm_two_prod(f, LN2, &h, &l);
  l = VM_FMA(f, 0x1.abc9e3b39803fp-56, l);
  double r, c;
  vm_fast_two_sum(h, l, &r, &c);
  double e = vm_em1_poly(r);
  double q = e + VM_FMA(c, e, c);
  double res = vm_scale(1.0 + q, k);
  return vm_isnan(x) ? x + x : res;
}

VM_INLINE double k_expm1(double x) {
  double xc = vm_clamp(x, -60.0, 720.0);
  double h, l, q;
  int64_t k;
  vm_expm1_hl(xc, &h, &l, &k, &q);
  double r = h + l;
  r = x == 0.0 ? x : r; /* expm1(-0) = -0 */
  return vm_isnan(x) ? x + x : r;
}

/* ---------------- log family ---------------- */

/* (2 atanh(s) - 2 s) / s^3 as a polynomial in z = s^2, z <= 0.0295 (fit.py log 7) */
VM_INLINE double vm_log_poly1(double z) { /* (P(z) - 2/3) / z */
  return VM_HORNER(z, 0.13086566680969558, 0.13268780227363869, 0.15386239377058045,
                      0.18181795647447949, 0.22222222391630583, 0.28571428570804058,
                      0.40000000000000874);
}
VM_INLINE double vm_log_poly(double z) { return VM_FMA(z, vm_log_poly1(z), 0.66666666666666663); }

/* splits a positive finite x (subnormals too) into 2^e * (1 + f), 1+f in [sqrt(1/2), sqrt(2)) */
VM_INLINE void vm_log_split(double x, double *ed, double *f) {
  int sub = x < 0x1p-1022;
  double xs = sub ? x * 0x1p54 : x;
  uint64_t ix = vm_bits(xs);
  int64_t e = (int64_t)((ix + (0x3ff0000000000000ULL - SQRT_HALF_BITS)) >> 52) - 1023;
  double m = vm_dbl(ix - ((uint64_t)e << 52));
  *ed = vm_i2d(e - (sub ? 54 : 0));
  *f = m - 1.0;
}

/* log(1+f) - f as the pair used by log/log2/log10: returns (hfsq, tail) with
 * log(1+f) = f - (hfsq - tail) */
VM_INLINE void vm_log_core(double f, double *hfsq, double *tail) {
  double s = f / (2.0 + f);
  double z = s * s;
  double R = z * vm_log_poly(z);
  double h = 0.5 * f * f;
  *hfsq = h;
  *tail = s * (h + R);
}

VM_INLINE double vm_log_special(double x, double r) {
  r = x == 0.0 ? -INFINITY : r;
  r = x < 0.0 ? NAN : r;
  r = x == INFINITY ? x : r;
  return vm_isnan(x) ? x + x : r;
}

VM_INLINE double k_log(double x) {
  double e, f, h, t;
  vm_log_split(x, &e, &f);
  vm_log_core(f, &h, &t);
  double r = VM_FMA(e, LN2_HI, (f - (h - VM_FMA(e, LN2_LO, t))));
  return vm_log_special(x, r);
}

/* log_b(x) = e*c + log(1+f)*d with c = log_b(2), d = 1/ln(b), both in two parts */
VM_INLINE double vm_log_base(double x, double c_hi, double c_lo, double d_hi, double d_lo) {
  double e, f, h, t;
  vm_log_split(x, &e, &f);
  vm_log_core(f, &h, &t);
  double hi = vm_dbl(vm_bits(f - h) & 0xffffffff00000000ULL);
  double lo = (f - hi) - h + t;
  double val_hi = hi * d_hi;
  double val_lo = VM_FMA(lo + hi, d_lo, lo * d_hi);
  double y = e * c_hi;
  double w = y + val_hi;
  val_lo += (y - w) + val_hi;
  val_lo = VM_FMA(e, c_lo, val_lo);
  return vm_log_special(x, val_lo + w);
}

VM_INLINE double k_log2(double x) {
  return vm_log_base(x, 1.0, 0.0, 0x1.7154700000000p+0, 0x1.94ae0bf85ddf4p-22);
}
VM_INLINE double k_log10(double x) {
  return vm_log_base(x, 0x1.3441300000000p-2, 0x1.427de7fbcc47cp-24, 0x1.bcb7b00000000p-2,
                     0x1.526e50e32a6abp-26);
}

/* log1p(v + dv) + eadd*ln2 for v >= -1, |dv| tiny against v (a correction the caller knows);
 * all special values of v handled */
VM_INLINE double vm_log1p_e(double v, double dv, double eadd) {
  double u = 1.0 + v;
  double e, f;
  vm_log_split(u, &e, &f);
  /* 1 + v = u + c exactly: u - 1 and v - (u - 1) are exact while u < 2^53 */
  double c = v - (u - 1.0);
  c = (c + dv) / u;
  c = e < 52.0 ? c : 0.0;
  /* log(1+f) = f - h + s(h + R), h = f^2/2 as hh + hl exactly */
  double s = f / (2.0 + f);
  double z = s * s;
  double R = z * vm_log_poly(z);
  double hh, hl;
  vm_two_prod(f, f, &hh, &hl);
  hh *= 0.5;
  hl *= 0.5;
  double lm, lml; /* f - hh */
  vm_fast_two_sum(f, -hh, &lm, &lml);
  lml = lml - hl + s * (hh + R);
  e += eadd;
  double S, E;
  vm_two_sum(e * LN2_HI, lm, &S, &E);
  double r = S + (E + (lml + VM_FMA(e, LN2_LO, c)));
  r = v == 0.0 ? v : r; /* log1p(-0) = -0 */
  r = u == 0.0 ? -INFINITY : r;
  r = v < -1.0 ? NAN : r;
  r = v == INFINITY ? v : r;
  return vm_isnan(v) ? v + v : r;
}
VM_INLINE double k_log1p(double x) { return vm_log1p_e(x, 0.0, 0.0); }

/* ---------------- trigonometric ---------------- */

#define SINCOS_LIMIT 1.0e6 /* above this |x| the fix-up pass calls libm */
#define PIO2_1 0x1.921fb54400000p+0
#define PIO2_2 0x1.0b4611a600000p-34
#define PIO2_3 0x1.3198a2e000000p-69
#define PIO2_4 0x1.b839a252049c1p-104

/* x = k*pi/2 + (r + rl), |r| <= pi/4 (+ tiny), for |x| < SINCOS_LIMIT */
VM_INLINE int64_t vm_rem_pio2(double x, double *r, double *rl) {
  double xc = vm_abs(x) < SINCOS_LIMIT ? x : 0.0;
  double kd = VM_FMA(xc, TWO_OVER_PI, VM_SHIFT);
  int64_t k = (int64_t)(vm_bits(kd) - vm_bits(VM_SHIFT));
  kd -= VM_SHIFT;
  double y1 = xc - kd * PIO2_1; /* exact */
  double w2 = kd * PIO2_2;      /* exact */
  double y2, e2;
  vm_two_sum(y1, -w2, &y2, &e2);
  double w3 = kd * PIO2_3; /* exact */
  double y3, e3;
  vm_two_sum(y2, -w3, &y3, &e3);
  double tail = (e2 + e3) - kd * PIO2_4;
  double rr, rrl;
  vm_fast_two_sum(y3, tail, &rr, &rrl);
  *r = rr;
  *rl = rrl;
  return k;
}

/* sin(r + rl), |r| <= pi/4: Taylor to r^17 */
VM_INLINE double vm_sin_kern(double r, double rl) {
  double z = r * r;
  /* from 1/17! */
  double p = VM_HORNER(z, 2.8114572543455206e-15, -7.6471637318198164e-13, 1.6059043836821613e-10,
                          -2.505210838544172e-08, 2.7557319223985888e-06, -0.00019841269841269841,
                          0.0083333333333333332);
  double v = z * r;
  /* r - r^3/6 + r^5 p + rl*(1 - z/2) */
  return r + ((v * VM_FMA(z, p, -0.16666666666666666)) + VM_FMA(-0.5 * z, rl, rl));
}

/* cos(r + rl), |r| <= pi/4: Taylor to r^18 */
VM_INLINE double vm_cos_kern(double r, double rl) {
  double z = r * r;
  /* from -1/18! */
  double p = VM_HORNER(z, -1.5619206968586225e-16, 4.7794773323873853e-14, -1.1470745597729725e-11,
                          2.08767569878681e-09, -2.7557319223985888e-07, 2.4801587301587302e-05,
                          -0.0013888888888888889, 0.041666666666666664);
  double hz = 0.5 * z;
  double w = 1.0 - hz;
  return w + (((1.0 - w) - hz) + (z * z * p - r * rl));
}

/* the sine and cosine of x's reduction (vm_rem_pio2) and its quadrant k */
VM_INLINE int64_t vm_sincos_red(double x, double *s, double *c) {
  double r, rl;
  int64_t k = vm_rem_pio2(x, &r, &rl);
  *s = vm_sin_kern(r, rl);
  *c = vm_cos_kern(r, rl);
  return k;
}

VM_INLINE double k_sin(double x) {
  double s, c;
  int64_t k = vm_sincos_red(x, &s, &c);
  double v = (k & 1) ? c : s;
  v = (k & 2) ? -v : v;
  v = x == 0.0 ? x : v; /* sin(-0) = -0 */
  v = vm_abs(x) == INFINITY ? x - x : v;
  return vm_isnan(x) ? x + x : v;
}

VM_INLINE double k_cos(double x) {
  double s, c;
  int64_t k = vm_sincos_red(x, &s, &c);
  double v = (k & 1) ? s : c;
  v = ((k + 1) & 2) ? -v : v;
  v = vm_abs(x) == INFINITY ? x - x : v;
  return vm_isnan(x) ? x + x : v;
}

VM_INLINE double k_tan(double x) {
  double s, c;
  int64_t k = vm_sincos_red(x, &s, &c);
  double v = (k & 1) ? -c / s : s / c;
  v = x == 0.0 ? x : v;
  v = vm_abs(x) == INFINITY ? x - x : v;
  return vm_isnan(x) ? x + x : v;
}

/* ---------------- inverse trigonometric ---------------- */

/* (atan(u) - u)/u^3 in z = u^2 <= 0.1915 (fit.py atan 11) */
VM_INLINE double vm_atan_poly(double z) {
  return VM_HORNER(z, 0.01475890600208604, -0.033113386863198077, 0.044916017105540516,
                      -0.052165140770482218, 0.058769205472833715, -0.066662393207043993,
                      0.076922853870080382, -0.090909083488518158, 0.1111111109648666,
                      -0.14285714285564899, 0.19999999999999402, -0.33333333333333331);
}

/* atan(a) for a >= 0 (inf and nan too): a = c + (u), reduced around c in {0, 1/2, 1, 3/2, inf}
 * so that |u| <= 7/16, with atan(c) in two parts (the interval scheme of fdlibm's atan) */
VM_INLINE double vm_atan_pos(double a) {
  int i1 = a >= 0.4375, i2 = a >= 0.6875, i3 = a >= 1.1875, i4 = a >= 2.4375;
  double num = a, den = 1.0, bh = 0.0, bl = 0.0;
  num = i1 ? 2.0 * a - 1.0 : num;
  den = i1 ? 2.0 + a : den;
  bh = i1 ? 0x1.dac670561bb4fp-2 : bh;
  bl = i1 ? 0x1.a2b7f222f65e2p-56 : bl;
  num = i2 ? a - 1.0 : num;
  den = i2 ? a + 1.0 : den;
  bh = i2 ? PIO4_HI : bh;
  bl = i2 ? PIO4_LO : bl;
  num = i3 ? a - 1.5 : num;
  den = i3 ? VM_FMA(1.5, a, 1.0) : den;
  bh = i3 ? 0x1.f730bd281f69bp-1 : bh;
  bl = i3 ? 0x1.007887af0cbbdp-56 : bl;
  num = i4 ? -1.0 : num;
  den = i4 ? a : den;
  bh = i4 ? PIO2_HI : bh;
  bl = i4 ? PIO2_LO : bl;
  double u = num / den;
  double z = u * u;
  double r = bh + ((VM_FMA(u * z, vm_atan_poly(z), bl)) + u);
  return r;
}

VM_INLINE double k_atan(double x) {
  double r = vm_atan_pos(vm_abs(x));
  r = vm_copysign(r, x);
  return vm_isnan(x) ? x + x : r;
}

VM_INLINE double k_atan2(double y, double x) {
  double ax = vm_abs(x), ay = vm_abs(y);
  int both_inf = (ax == INFINITY) & (ay == INFINITY);
  int both_zero = (ax == 0.0) & (ay == 0.0);
  double t = ay / ax;
  t = both_inf ? 1.0 : t;
  t = both_zero ? 0.0 : t;
  double r = vm_atan_pos(t);
  /* x negative (sign bit): pi - r */
  double rn = (PI_HI - r) + PI_LO;
  r = vm_signbit(x) ? rn : r;
  r = vm_copysign(r, y);
  r = vm_isnan(x) ? x + y : r;
  return vm_isnan(y) ? x + y : r;
}

/* (asin(x) - x)/x^3 in z = x^2 <= 0.25 (fit.py asin 12) */
VM_INLINE double vm_asin_poly(double z) {
  return VM_HORNER(z, 0.028762690011846594, -0.0148590684677662, 0.017405537716215381,
                      0.0054557729970128779, 0.010323222974141113, 0.01147911390775028,
                      0.013971219544977282, 0.017352392274299411, 0.022372172961334005,
                      0.030381944138046662, 0.044642857146361729, 0.074999999999984301,
                      0.16666666666666669);
}

VM_INLINE double k_asin(double x) {
  double a = vm_abs(x);
  /* |x| <= 0.5 */
  double z1 = x * x;
  double r1 = VM_FMA(x * z1, vm_asin_poly(z1), x);
  /* |x| > 0.5: asin = pi/2 - 2 asin(s), s = sqrt((1-|x|)/2) */
  double z = 0.5 * (1.0 - a); /* exact */
  double zc = a > 0.5 ? z : 0.25;
  double s = vm_sqrt(zc);
  double sh = vm_dbl(vm_bits(s) & 0xffffffff00000000ULL);
  double c = (zc - sh * sh) / (s + sh + 0x1p-1000); /* s = sh + c closely */
  double pz = zc * vm_asin_poly(zc);     /* asin(s) = s + s*pz */
  /* pi/2 - 2(sh + c + s*pz) = (pi/4 - 2sh) + (pi/4 - 2(c + s*pz)) */
  double p = 2.0 * s * pz - (PIO2_LO - 2.0 * c);
  double q = PIO4_HI - 2.0 * sh;
  double r2 = PIO4_HI - (p - q);
  r2 = vm_copysign(r2, x);
  double r = a > 0.5 ? r2 : r1;
  r = a > 1.0 ? NAN : r;
  return vm_isnan(x) ? x + x : r;
}

VM_INLINE double k_acos(double x) {
  double a = vm_abs(x);
  /* |x| <= 0.5: pi/2 - (x + x z P) */
  double z1 = x * x;
  double r1 = PIO2_HI - (x - (PIO2_LO - x * z1 * vm_asin_poly(z1)));
  double z = 0.5 * (1.0 - a);
  double zc = a > 0.5 ? z : 0.25;
  double s = vm_sqrt(zc);
  double pz = zc * vm_asin_poly(zc);
  /* x > 0.5: 2 asin(s) = 2(sh + c + s pz) */
  double sh = vm_dbl(vm_bits(s) & 0xffffffff00000000ULL);
  double c = (zc - sh * sh) / (s + sh + 0x1p-1000);
  double rpos = 2.0 * (sh + (c + s * pz));
  /* x < -0.5: pi - 2 asin(s) */
  double rneg = PI_HI - 2.0 * (s + (s * pz - PIO2_LO));
  double r = a > 0.5 ? (x > 0.0 ? rpos : rneg) : r1;
  r = a > 1.0 ? NAN : r;
  return vm_isnan(x) ? x + x : r;
}

/* ---------------- hyperbolic ---------------- */

/* (nh + nl) / (dh + dl) to about 0.5 ulp: one division and a residual correction */
VM_INLINE double vm_div_dd(double nh, double nl, double dh, double dl) {
  double q = nh / dh;
  double ph, pl;
  vm_two_prod(q, dh, &ph, &pl);
  double rem = ((nh - ph) - pl) + (nl - q * dl);
  return q + rem / dh;
}

VM_INLINE double k_sinh(double x) {
  double a = vm_clamp(vm_abs(x), 0.0, 720.0);
  double th, tl, q;
  int64_t k;
  vm_expm1_hl(a, &th, &tl, &k, &q); /* t = expm1(a) */
  /* a < 22: (t + t/(t+1)) / 2 */
  double dh, dl;
  vm_two_sum(th, 1.0, &dh, &dl);
  double w = vm_div_dd(th, tl, dh, dl + tl);
  double sh, sl;
  vm_two_sum(th, w, &sh, &sl);
  double small = 0.5 * (sh + (sl + tl));
  double big = vm_scale(1.0 + q, k - 1);
  double r = a < 22.0 ? small : big;
  r = vm_copysign(r, x);
  return vm_isnan(x) ? x + x : r;
}

VM_INLINE double k_cosh(double x) {
  double a = vm_clamp(vm_abs(x), 0.0, 720.0);
  /* E = 2^k (eh + el), cosh = E/2 + 1/(2E) */
  double eh, el;
  int64_t k = vm_exp_dd(a, &eh, &el);
  double inv = vm_div_dd(1.0, 0.0, eh, el);
  double r = vm_scale(eh + el, k - 1) + vm_scale(inv, -k - 1);
  return vm_isnan(x) ? x + x : r;
}

VM_INLINE double k_tanh(double x) {
  double a = vm_clamp(vm_abs(x), 0.0, 40.0);
  double th, tl, q;
  int64_t k;
  vm_expm1_hl(2.0 * a, &th, &tl, &k, &q); /* t = expm1(2a) */
  double dh, dl;
  vm_two_sum(th, 2.0, &dh, &dl);
  double r = vm_div_dd(th, tl, dh, dl + tl); /* t / (t + 2) */
  r = a >= 20.0 ? 1.0 : r;
  r = vm_copysign(r, x);
  return vm_isnan(x) ? x + x : r;
}

VM_INLINE double k_logistic(double x) {
  double a = vm_clamp(vm_abs(x), 0.0, 800.0);
  /* e = e^-|x| = 2^k (mh + ml) = eh + el */
  double mh, ml;
  int64_t k = vm_exp_dd(-a, &mh, &ml);
  double eh = vm_scale(mh, k), el = vm_scale(ml, k);
  double dh, dl;
  vm_fast_two_sum(1.0, eh, &dh, &dl); /* 1 + e */
  dl += el;
  double pos = vm_div_dd(1.0, 0.0, dh, dl);
  double neg = vm_div_dd(eh, el, dh, dl);
  double r = vm_signbit(x) ? neg : pos;
  return vm_isnan(x) ? x + x : r;
}

VM_INLINE double k_asinh(double x) {
  double a = vm_abs(x);
  double t = a * a;
  double w = t / (1.0 + vm_sqrt(1.0 + t));
  double vs, dvs;
  vm_fast_two_sum(a, w, &vs, &dvs);
  double v_mid = (2.0 * a - 1.0) + 1.0 / (vm_sqrt(t + 1.0) + a);
  int big = a > 0x1p28;
  double v = big ? a - 1.0 : (a > 2.0 ? v_mid : vs);
  double dv = a > 2.0 ? 0.0 : dvs;
  double r = vm_log1p_e(v, dv, big ? 1.0 : 0.0);
  r = vm_copysign(r, x);
  return vm_isnan(x) ? x + x : r;
}

VM_INLINE double k_acosh(double x) {
  double t = x - 1.0;
  double sq = vm_sqrt(VM_FMA(t, t, 2.0 * t));
  double vs, dvs;
  vm_two_sum(t, sq, &vs, &dvs);
  double v_mid = (2.0 * x - 1.0) - 1.0 / (x + vm_sqrt(x * x - 1.0));
  int big = x > 0x1p28;
  double v = big ? x - 1.0 : (x > 2.0 ? v_mid : vs);
  double dv = x > 2.0 ? 0.0 : dvs;
  double r = vm_log1p_e(v, dv, big ? 1.0 : 0.0);
  r = x < 1.0 ? NAN : r;
  return vm_isnan(x) ? x + x : r;
}

VM_INLINE double k_atanh(double x) {
  double a = vm_abs(x);
  double t = 2.0 * a;
  double d = 1.0 - a;
  double dl = (1.0 - d) - a; /* 1 - a = d + dl exactly */
  double v = t / d;
  /* exact quotient t/(d - dl): residual of v */
  double ph, pl;
  vm_two_prod(v, d, &ph, &pl);
  double dv = (((t - ph) - pl) - v * dl) / d;
  dv = d == 0.0 ? 0.0 : dv;
  double r = 0.5 * vm_log1p_e(v, dv, 0.0);
  r = a > 1.0 ? NAN : r;
  r = vm_copysign(r, x);
  return vm_isnan(x) ? x + x : r;
}

/* ---------------- roots ---------------- */

VM_INLINE double k_sqrt(double x) { return vm_sqrt(x); }

VM_INLINE double k_rsqrt(double x) {
  int tiny = vm_abs(x) < 0x1p-1000, huge = vm_abs(x) > 0x1p1000;
  double xs = tiny ? x * 0x1p200 : (huge ? x * 0x1p-200 : x); /* keeps y*y*x in range */
  double y = 1.0 / vm_sqrt(xs);
  /* y' = y (1 + e/2 + 3e^2/8), e = 1 - x y^2 computed exactly enough */
  double p, pl;
  vm_two_prod(y, y, &p, &pl);
  double e = VM_FMA(-xs, p, 1.0) - xs * pl;
  double r = VM_FMA(y * e, VM_FMA(0.375, e, 0.5), y);
  r = tiny ? r * 0x1p100 : (huge ? r * 0x1p-100 : r);
  r = x == 0.0 ? y : r; /* +-0 -> +-inf */
  r = x == INFINITY ? 0.0 : r;
  r = x < 0.0 ? NAN : r;
  return vm_isnan(x) ? x + x : r;
}

VM_INLINE double k_cbrt(double x) {
  double a = vm_abs(x);
  int sub = a < 0x1p-1022;
  double as = sub ? a * 0x1p54 : a;
  int huge = as > 0x1p1000;
  as = huge ? as * 0x1p-300 : as;
  uint32_t hi = (uint32_t)(vm_bits(as) >> 32);
  uint32_t third = (uint32_t)(((uint64_t)hi * 0xAAAAAAABULL) >> 33); /* hi / 3 */
  double y = vm_dbl((uint64_t)(third + 0x2a9f7893u) << 32);
  /* two Halley steps: y <- y (y^3 + 2a) / (2 y^3 + a) */
  double y3 = y * y * y;
  y = y * ((y3 + 2.0 * as) / (2.0 * y3 + as));
  y3 = y * y * y;
  y = y * ((y3 + 2.0 * as) / (2.0 * y3 + as));
  /* a final Newton step */
  y = y + (as / (y * y) - y) * (1.0 / 3.0);
  y = sub ? y * 0x1p-18 : y;
  y = huge ? y * 0x1p100 : y;
  y = a == 0.0 ? a : y;
  y = a == INFINITY ? a : y;
  y = vm_copysign(y, x);
  return vm_isnan(x) ? x + x : y;
}

/* ---------------- pow ---------------- */

/* log(x) as hi + lo with about 2^-64 relative accuracy, x positive finite */
VM_INLINE void vm_log_dd(double x, double *hi, double *lo) {
  double e, f;
  vm_log_split(x, &e, &f);
  double den = 2.0 + f;
  double den_l = (2.0 - den) + f;
  double s = f / den;
  double ph, pl;
  vm_two_prod(s, den, &ph, &pl);
  double s_l = (((f - ph) - pl) - s * den_l) / den;
  /* 2 atanh(s) = 2s + (2/3) s^3 + s^5 P'(z) */
  double zh, zl;
  vm_two_prod(s, s, &zh, &zl);
  double s3h, s3l;
  vm_two_prod(zh, s, &s3h, &s3l);
  s3l = VM_FMA(zl, s, s3l);
  s3l = VM_FMA(s_l, 3.0 * zh, s3l);
  double t3h, t3l; /* (2/3) s^3 */
  vm_two_prod(0x1.5555555555555p-1, s3h, &t3h, &t3l);
  t3l = VM_FMA(0x1.5555555555555p-1, s3l, t3l);
  t3l = VM_FMA(0x1.5555555555555p-55, s3h, t3l);
  double z = zh;
  double rest = s3h * z * vm_log_poly1(z); /* s^5 P'(z) */
  double A = e * LN2_HI, B = 2.0 * s;
  double h, l;
  vm_two_sum(A, B, &h, &l);
  double h2, l2;
  vm_two_sum(h, t3h, &h2, &l2);
  double tail = l + l2 + (t3l + rest + 2.0 * s_l + e * LN2_LO);
  vm_fast_two_sum(h2, tail, hi, lo);
}

VM_INLINE double k_pow(double x, double y) {
  /* flags are kept as doubles (1/0) and combined by selects: GCC 12 does not vectorize
   * selects between boolean values */
  double ax = vm_abs(x), ay = vm_abs(y);
  double ayr = vm_round_any(ay);
  double fint = ayr == ay ? 1.0 : 0.0; /* y is an integer (nan/inf handled below) */
  double par = ay < 0x1p52 ? ay + 0x1p52 : ay;
  double fodd = (vm_bits(par) & 1) ? 1.0 : 0.0;
  fodd = ay < 0x1p53 ? fodd : 0.0;
  fodd = fint != 0.0 ? fodd : 0.0;
  /* |x|^y */
  double axc = ax == 0.0 ? 1.0 : ax;
  axc = ax == INFINITY ? 1.0 : axc;
  axc = vm_isnan(ax) ? 1.0 : axc;
  double lh, ll;
  vm_log_dd(axc, &lh, &ll);
  /* |y| > 2^64 with x != 1 over/underflows anyway; the clamp keeps the products finite */
  double yc = vm_clamp(y, -0x1p64, 0x1p64);
  double ph, pl;
  vm_two_prod(yc, lh, &ph, &pl);
  pl = VM_FMA(yc, ll, pl);
  double phc = vm_clamp(ph, -1100.0, 1100.0);
  pl = phc == ph ? pl : 0.0;
  phc = vm_isnan(phc) ? 0.0 : phc;
  int64_t k;
  double q;
  vm_exp_parts(phc, pl, &k, &q);
  double r = vm_scale(1.0 + q, k);
  double fneg = x < 0.0 ? fodd : 0.0;       /* negative x, odd y: negate */
  double fnan = x < 0.0 ? 1.0 - fint : 0.0; /* negative x, non-integer y: nan */
  r = fneg != 0.0 ? -r : r;
  r = fnan != 0.0 ? NAN : r;
  /* zeros and infinities of x */
  double zpos = fodd != 0.0 ? x : 0.0;
  double zneg = fodd != 0.0 ? vm_copysign(INFINITY, x) : INFINITY;
  double zres = y > 0.0 ? zpos : zneg;
  r = ax == 0.0 ? zres : r;
  double ires = y > 0.0 ? INFINITY : 0.0;
  ires = fneg != 0.0 ? -ires : ires;
  r = ax == INFINITY ? ires : r;
  /* infinite y */
  double yinf = ax < 1.0 ? (y > 0.0 ? 0.0 : INFINITY) : (y > 0.0 ? INFINITY : 0.0);
  yinf = ax == 1.0 ? 1.0 : yinf;
  r = ay == INFINITY ? yinf : r;
  r = vm_isnan(x) ? x + y : r;
  r = vm_isnan(y) ? x + y : r;
  r = y == 0.0 ? 1.0 : r;
  r = x == 1.0 ? 1.0 : r;
  return r;
}

#endif /* CJ_VM_BODY */
