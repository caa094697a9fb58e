/* cjrt reference backend: elementwise ops (StableHLO and the chlo functions the compiler keeps).
 * One scalar function, cj_rf_ew_scalar, gives every op's semantics on one element; cj_rf_ew maps it
 * over tensors (a one-element operand is broadcast, as select's scalar predicate and clamp's
 * scalar bounds are). Floats are computed in double and rounded once when stored (but for a few
 * f32 and complex<f32> functions, computed in float as XLA:CPU does); integers wrap
 * to the result's width; division by zero, shifts by the bit width or more and INT_MIN / -1 follow
 * StableHLO (XLA) semantics. */
#include <complex.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/xla_math.h"
#include "reference/ref.h"

bool cj_rf_is_ew(cj_op_kind k) {
  if (k == CJ_OP_UNIFORM_QUANTIZE || k == CJ_OP_UNIFORM_DEQUANTIZE) return false;
  return (cj_op_info_get(k)->flags & CJ_OPF_ELEMENTWISE) != 0;
}

/* ---------------------------------------------------------------- special functions */

static double digamma(double x) {
  if (isnan(x) || x == -INFINITY) return NAN;
  if (x <= 0 && x == floor(x)) return NAN;
  double r = 0;
  if (x < 0.5) { /* reflection */
    double t = M_PI / tan(M_PI * x);
    return digamma(1 - x) - t;
  }
  while (x < 8) {
    r -= 1 / x;
    x += 1;
  }
  double f = 1 / (x * x);
  double t = f * (-1.0 / 12 + f * (1.0 / 120 + f * (-1.0 / 252 + f * (1.0 / 240 + f * (-1.0 / 132)))));
  return r + log(x) - 0.5 / x + t;
}

/* Hurwitz zeta(s, q) by Euler-Maclaurin summation */
static double zeta(double s, double q) {
  if (s == 1) return INFINITY;
  if (s < 1 || isnan(s) || isnan(q)) return NAN;
  if (q <= 0) {
    if (q == floor(q)) return INFINITY;
    return NAN; /* XLA: not defined for negative q unless s is an integer; keep NaN */
  }
  const int N = 12;
  double sum = 0;
  for (int k = 0; k < N; k++) sum += pow(q + k, -s);
  double a = q + N;
  sum += pow(a, 1 - s) / (s - 1) + 0.5 * pow(a, -s);
  /* Bernoulli terms B2k / (2k)! * s(s+1)...(s+2k-2) * a^(-s-2k+1) */
  static const double b2k[] = {1.0 / 6, -1.0 / 30, 1.0 / 42, -1.0 / 30, 5.0 / 66, -691.0 / 2730,
                               7.0 / 6, -3617.0 / 510};
  double fact = 1, poch = s, apow = pow(a, -s - 1);
  for (int k = 1; k <= 8; k++) {
    fact *= (2.0 * k - 1) * (2.0 * k);
    sum += b2k[k - 1] / fact * poch * apow;
    poch *= (s + 2 * k - 1) * (s + 2 * k);
    apow /= a * a;
  }
  return sum;
}

static double polygamma(double n, double x) {
  if (n != floor(n) || n < 0) return NAN;
  if (n == 0) return digamma(x);
  double f = tgamma(n + 1);
  return (fmod(n + 1, 2) == 0 ? 1 : -1) * f * zeta(n + 1, x);
}

static double erfinv(double y) {
  if (isnan(y) || y < -1 || y > 1) return NAN;
  if (y == 1) return INFINITY;
  if (y == -1) return -INFINITY;
  /* an initial guess (Giles' single-precision approximation), then Newton steps on erf */
  double w = -log((1 - y) * (1 + y)), x;
  if (w < 5) {
    w -= 2.5;
    double p = 2.81022636e-08;
    p = 3.43273939e-07 + p * w; p = -3.5233877e-06 + p * w; p = -4.39150654e-06 + p * w;
    p = 0.00021858087 + p * w; p = -0.00125372503 + p * w; p = -0.00417768164 + p * w;
    p = 0.246640727 + p * w; p = 1.50140941 + p * w;
    x = p * y;
  } else {
    w = sqrt(w) - 3;
    double p = -0.000200214257;
    p = 0.000100950558 + p * w; p = 0.00134934322 + p * w; p = -0.00367342844 + p * w;
    p = 0.00573950773 + p * w; p = -0.0076224613 + p * w; p = 0.00943887047 + p * w;
    p = 1.00167406 + p * w; p = 2.83297682 + p * w;
    x = p * y;
  }
  for (int k = 0; k < 4; k++) {
    double e = erf(x) - y;
    double d = 2 / sqrt(M_PI) * exp(-x * x);
    if (d == 0) break;
    x -= e / d;
  }
  return x;
}

static double bessel_i1e(double x) {
  double ax = fabs(x);
  if (isnan(x)) return NAN;
  if (ax > 40) {
    /* asymptotic expansion of e^-x I1(x) */
    double t = 1 / (8 * ax), s = 1, term = 1;
    for (int k = 1; k < 12; k++) {
      term *= -((4.0 - (2.0 * k - 1) * (2.0 * k - 1)) * t) / k;
      s += term;
    }
    double r = s / sqrt(2 * M_PI * ax);
    return x < 0 ? -r : r;
  }
  double h = ax / 2, term = h, s = h;
  for (int k = 1; k < 200; k++) {
    term *= h * h / ((double)k * (k + 1));
    s += term;
    if (term < s * 1e-17) break;
  }
  double r = s * exp(-ax);
  return x < 0 ? -r : r;
}

/* the neighbour of a (of dtype dt) in the direction of b */
static double next_after(cj_dtype dt, double a, double b) {
  if (isnan(a) || isnan(b)) return NAN;
  if (a == b) return b;
  if (dt == CJ_F64) return nextafter(a, b);
  if (dt == CJ_F32) return nextafterf((float)a, (float)b);
  /* other formats: step the encoding */
  int bits = cj_dtype_bits(dt);
  uint64_t sign = 1ull << (bits - 1);
  uint64_t u = cj_float_encode(dt, a);
  if (a == 0) {
    u = 1 | (b < 0 ? sign : 0);
  } else if ((a < b) == !(u & sign)) {
    u++;
  } else {
    u--;
  }
  return cj_float_decode(dt, u);
}

/* ---------------------------------------------------------------- reduce_precision */

static double reduce_precision(cj_dtype dt, double x, int ebits, int mbits) {
  if (isnan(x)) return mbits > 0 ? x : copysign(INFINITY, x); /* no mantissa: no NaN */
  uint64_t u, sign = 0;
  memcpy(&u, &x, 8);
  sign = u & (1ull << 63);
  u &= ~(1ull << 63); /* round the magnitude */
  if (mbits < 52) {
    int drop = 52 - mbits;
    uint64_t last = (u >> drop) & 1, half = (1ull << (drop - 1)) - 1 + last;
    u += half;
    u &= ~((1ull << drop) - 1);
  }
  int src_ebits = cj_dtype_get(dt)->ebits;
  if (ebits < src_ebits) {
    int64_t max_exp = (1ll << (ebits - 1)) - 1, min_exp = 1 - max_exp;
    int64_t e = (int64_t)((u >> 52) & 0x7ff) - 1023;
    uint64_t s = 0;
    if (e > max_exp) u = s | 0x7ff0000000000000ull;
    else if (e < min_exp) u = s;
  }
  u |= sign;
  double r;
  memcpy(&r, &u, 8);
  return r;
}

/* ---------------------------------------------------------------- comparisons */

/* -NaN < -inf < ... < -0 < +0 < ... < inf < NaN: negative patterns have their magnitude bits
 * flipped so that larger magnitudes order first */
static int64_t total_key(double f) {
  int64_t b;
  memcpy(&b, &f, 8);
  return b < 0 ? b ^ INT64_MAX : b;
}

int cj_rf_compare_total(cj_dtype dt, rs a, rs b) {
  switch (cj_dtype_kindof(dt)) {
    case CJ_DK_FLOAT: {
      int64_t ka = total_key(a.f), kb = total_key(b.f);
      return ka < kb ? -1 : ka > kb;
    }
    case CJ_DK_UINT: return (uint64_t)a.i < (uint64_t)b.i ? -1 : (uint64_t)a.i > (uint64_t)b.i;
    case CJ_DK_COMPLEX: {
      rs ra = {creal(a.c), 0, 0}, rb = {creal(b.c), 0, 0};
      int c = cj_rf_compare_total(CJ_F64, ra, rb);
      if (c) return c;
      ra.f = cimag(a.c);
      rb.f = cimag(b.c);
      return cj_rf_compare_total(CJ_F64, ra, rb);
    }
    default: return a.i < b.i ? -1 : a.i > b.i;
  }
}

static int64_t compare(const cj_op *op, cj_dtype dt, rs a, rs b) {
  int32_t dir = 0, ty = CJ_COMPARISON_TYPE_NOTYPE;
  cj_op_get_enum(op, "comparison_direction", CJ_EK_COMPARISON_DIRECTION, &dir);
  cj_op_get_enum(op, "compare_type", CJ_EK_COMPARISON_TYPE, &ty);
  int c;
  cj_dtype_kind k = cj_dtype_kindof(dt);
  if (k == CJ_DK_FLOAT && ty != CJ_COMPARISON_TYPE_TOTALORDER) {
    switch (dir) {
      case CJ_COMPARISON_DIRECTION_EQ: return a.f == b.f;
      case CJ_COMPARISON_DIRECTION_NE: return a.f != b.f;
      case CJ_COMPARISON_DIRECTION_GE: return a.f >= b.f;
      case CJ_COMPARISON_DIRECTION_GT: return a.f > b.f;
      case CJ_COMPARISON_DIRECTION_LE: return a.f <= b.f;
      default: return a.f < b.f;
    }
  }
  if (k == CJ_DK_COMPLEX && (dir == CJ_COMPARISON_DIRECTION_EQ || dir == CJ_COMPARISON_DIRECTION_NE)) {
    bool eq = a.c == b.c;
    return dir == CJ_COMPARISON_DIRECTION_EQ ? eq : !eq;
  }
  c = cj_rf_compare_total(dt, a, b);
  switch (dir) {
    case CJ_COMPARISON_DIRECTION_EQ: return c == 0;
    case CJ_COMPARISON_DIRECTION_NE: return c != 0;
    case CJ_COMPARISON_DIRECTION_GE: return c >= 0;
    case CJ_COMPARISON_DIRECTION_GT: return c > 0;
    case CJ_COMPARISON_DIRECTION_LE: return c <= 0;
    default: return c < 0;
  }
}

/* ---------------------------------------------------------------- integers */

static int64_t ipow(cj_dtype dt, int64_t b, int64_t e) {
  bool uns = cj_dtype_kindof(dt) == CJ_DK_UINT;
  if (!uns && e < 0) {
    if (b == 1) return 1;
    if (b == -1) return (e & 1) ? -1 : 1;
    return 0;
  }
  uint64_t r = 1, x = (uint64_t)b, k = (uint64_t)e;
  while (k) {
    if (k & 1) r *= x;
    x *= x;
    k >>= 1;
  }
  return cj_rf_wrap(dt, (int64_t)r);
}

/* Integer scalars: operands as int64 (zero-extended for unsigned), the result wrapped to dt. */
typedef struct iarg {
  bool uns;
  int bits;
  int64_t x, y;
  uint64_t ux, uy, mask;
} iarg;

static iarg iarg_of(const cj_op *op, cj_dtype dt, const rs *a) {
  iarg A;
  A.uns = cj_dtype_kindof(dt) == CJ_DK_UINT;
  A.bits = cj_dtype_bits(dt);
  A.x = a[0].i;
  A.y = op->nopnds > 1 ? a[1].i : 0;
  A.ux = (uint64_t)A.x;
  A.uy = (uint64_t)A.y;
  A.mask = A.bits >= 64 ? ~0ull : (1ull << A.bits) - 1;
  return A;
}

#define RF_INT(name, expr)                                              \
  static void name(const cj_op *op, cj_dtype dt, const rs *a, rs *r) { \
    iarg A = iarg_of(op, dt, a);                                        \
    int64_t v = (expr);                                                 \
    r->i = cj_rf_wrap(dt, v);                                              \
  }

RF_INT(i_add, (int64_t)(A.ux + A.uy))
RF_INT(i_sub, (int64_t)(A.ux - A.uy))
RF_INT(i_mul, (int64_t)(A.ux * A.uy))
RF_INT(i_div, A.y == 0 ? -1 : A.uns ? (int64_t)(A.ux / A.uy) : A.y == -1 ? (int64_t)(0 - A.ux) : A.x / A.y)
RF_INT(i_rem, A.y == 0 ? A.x : A.uns ? (int64_t)(A.ux % A.uy) : A.y == -1 ? 0 : A.x % A.y)
RF_INT(i_max, A.uns ? (A.ux > A.uy ? A.x : A.y) : (A.x > A.y ? A.x : A.y))
RF_INT(i_min, A.uns ? (A.ux < A.uy ? A.x : A.y) : (A.x < A.y ? A.x : A.y))
RF_INT(i_pow, ipow(dt, A.x, A.y))
RF_INT(i_and, A.x & A.y)
RF_INT(i_or, A.x | A.y)
RF_INT(i_xor, A.x ^ A.y)
RF_INT(i_not, ~A.x)
RF_INT(i_neg, (int64_t)(0 - A.ux))
RF_INT(i_abs, A.x < 0 && !A.uns ? (int64_t)(0 - A.ux) : A.x)
RF_INT(i_sign, A.uns ? (A.x != 0) : (A.x > 0) - (A.x < 0))
RF_INT(i_shl, (A.uy >= (uint64_t)A.bits) ? 0 : (int64_t)(A.ux << A.uy))
RF_INT(i_shrl, (A.uy >= (uint64_t)A.bits) ? 0 : (int64_t)((A.ux & A.mask) >> A.uy))
RF_INT(i_popcnt, __builtin_popcountll(A.ux & A.mask))
RF_INT(i_clz, (A.ux & A.mask) ? __builtin_clzll(A.ux & A.mask) - (64 - A.bits) : A.bits)
#undef RF_INT

static void i_shra(const cj_op *op, cj_dtype dt, const rs *a, rs *r) {
  iarg A = iarg_of(op, dt, a);
  int64_t sx = cj_rf_wrap(dt == CJ_U8 ? CJ_S8 : dt == CJ_U16 ? CJ_S16 : dt == CJ_U32 ? CJ_S32 : dt == CJ_U64 ? CJ_S64 : dt, A.x);
  if (A.uns) { /* sign bit of the width */
    sx = (A.ux >> (A.bits - 1)) & 1 ? (int64_t)(A.ux | ~A.mask) : A.x;
  }
  int64_t v = (A.uy >= (uint64_t)A.bits) ? (sx < 0 ? -1 : 0) : sx >> A.uy;
  r->i = cj_rf_wrap(dt, v);
}

static void i_clamp(const cj_op *op, cj_dtype dt, const rs *a, rs *r) { /* clamp(min, x, max) */
  bool uns = cj_dtype_kindof(dt) == CJ_DK_UINT;
  int64_t lo = a[0].i, xv = a[1].i, hi = a[2].i, v;
  if (uns) {
    uint64_t t = (uint64_t)xv < (uint64_t)lo ? (uint64_t)lo : (uint64_t)xv;
    v = (int64_t)(t > (uint64_t)hi ? (uint64_t)hi : t);
  } else {
    int64_t t = xv < lo ? lo : xv;
    v = t > hi ? hi : t;
  }
  r->i = cj_rf_wrap(dt, v);
}

static void i_mulhi(const cj_op *op, cj_dtype dt, const rs *a, rs *r) {
  iarg A = iarg_of(op, dt, a);
  int64_t v;
  if (A.uns) {
    unsigned __int128 p = (unsigned __int128)(A.ux & A.mask) * (A.uy & A.mask);
    v = (int64_t)(uint64_t)(p >> A.bits);
  } else {
    __int128 p = (__int128)A.x * A.y;
    v = (int64_t)(p >> A.bits);
  }
  r->i = cj_rf_wrap(dt, v);
}

/* Booleans: 0 or 1. */
#define RF_BOOL(name, expr)                                             \
  static void name(const cj_op *op, cj_dtype dt, const rs *a, rs *r) { \
    int64_t x = a[0].i != 0, y = op->nopnds > 1 ? a[1].i != 0 : 0;      \
    (void)y;                                                            \
    r->i = (expr);                                                      \
  }
RF_BOOL(b_and, x & y)
RF_BOOL(b_or, x | y)
RF_BOOL(b_xor, x ^ y)
RF_BOOL(b_not, !x)
#undef RF_BOOL

static void b_clamp(const cj_op *op, cj_dtype dt, const rs *a, rs *r) {
  int64_t lo = a[0].i != 0, v = a[1].i != 0, hi = a[2].i != 0;
  v = v < lo ? lo : v;
  r->i = v > hi ? hi : v;
}

/* ---------------------------------------------------------------- floats */

static double fmax_nan(double x, double y) {
  if (isnan(x) || isnan(y)) return NAN;
  if (x == 0 && y == 0) return signbit(x) ? y : x;
  return x > y ? x : y;
}
static double fmin_nan(double x, double y) {
  if (isnan(x) || isnan(y)) return NAN;
  if (x == 0 && y == 0) return signbit(x) ? x : y;
  return x < y ? x : y;
}


/* Floats: computed in double, rounded to the result type (dt) when stored; f32 exp, expm1 and
 * log are XLA's float algorithms (base/xla_math.c), whose roundings the corpus' values carry. */
#define RF_FLT(name, expr)                                              \
  static void name(const cj_op *op, cj_dtype dt, const rs *a, rs *r) { \
    double x = a[0].f, y = op->nopnds > 1 ? a[1].f : 0;                 \
    (void)x;                                                            \
    (void)y;                                                            \
    (void)dt;                                                           \
    r->f = (expr);                                                      \
  }
RF_FLT(f_add, x + y)
RF_FLT(f_sub, x - y)
RF_FLT(f_mul, x * y)
RF_FLT(f_div, x / y)
RF_FLT(f_rem, fmod(x, y))
RF_FLT(f_max, fmax_nan(x, y))
RF_FLT(f_min, fmin_nan(x, y))
RF_FLT(f_pow, pow(x, y))
RF_FLT(f_atan2, atan2(x, y))
RF_FLT(f_neg, -x)
RF_FLT(f_abs, fabs(x))
RF_FLT(f_sign, isnan(x) ? x : x > 0 ? 1 : x < 0 ? -1 : x)
RF_FLT(f_ceil, ceil(x))
RF_FLT(f_floor, floor(x))
RF_FLT(f_round_afz, round(x))
RF_FLT(f_round_even, nearbyint(x))
RF_FLT(f_sqrt, sqrt(x))
RF_FLT(f_rsqrt, 1 / sqrt(x))
RF_FLT(f_cbrt, cbrt(x))
RF_FLT(f_exp, dt == CJ_F32 ? cj_xla_expf((float)x) : exp(x))
RF_FLT(f_expm1, dt == CJ_F32 ? cj_xla_expm1f((float)x) : expm1(x))
RF_FLT(f_log, dt == CJ_F32 ? cj_xla_logf((float)x) : log(x))
RF_FLT(f_log1p, log1p(x))
RF_FLT(f_logistic, 1 / (1 + exp(-x)))
RF_FLT(f_sin, sin(x))
RF_FLT(f_cos, cos(x))
RF_FLT(f_tan, tan(x))
RF_FLT(f_tanh, tanh(x))
RF_FLT(f_clamp, fmin_nan(fmax_nan(a[1].f, a[0].f), a[2].f))
RF_FLT(f_acos, acos(x))
RF_FLT(f_acosh, acosh(x))
RF_FLT(f_asin, asin(x))
RF_FLT(f_asinh, asinh(x))
RF_FLT(f_atan, atan(x))
RF_FLT(f_atanh, atanh(x))
RF_FLT(f_cosh, cosh(x))
RF_FLT(f_sinh, sinh(x))
RF_FLT(f_erf, erf(x))
RF_FLT(f_erfc, erfc(x))
RF_FLT(f_erf_inv, erfinv(x))
RF_FLT(f_lgamma, isinf(x) ? INFINITY : lgamma(x))
RF_FLT(f_digamma, digamma(x))
RF_FLT(f_bessel_i1e, bessel_i1e(x))
RF_FLT(f_square, x * x)
RF_FLT(f_conj, x)
RF_FLT(f_next_after, next_after(dt, x, y))
RF_FLT(f_polygamma, polygamma(x, y))
RF_FLT(f_zeta, zeta(x, y))
#undef RF_FLT

static void f_reduce_precision(const cj_op *op, cj_dtype dt, const rs *a, rs *r) {
  int64_t eb = 8, mb = 23;
  cj_op_get_i64(op, "exponent_bits", &eb);
  cj_op_get_i64(op, "mantissa_bits", &mb);
  r->f = reduce_precision(dt, a[0].f, (int)eb, (int)mb);
}

/* e^x (cos y + i sin y), with XLA's special values: exp(x + 0i) = e^x + 0i, a non-finite y gives
 * NaN + NaN i (also for x = -inf) */
static double complex cexp_xla(double complex z) {
  double x = creal(z), y = cimag(z);
  if (y == 0) return CMPLX(exp(x), y);
  if (!isfinite(y)) return CMPLX(NAN, NAN);
  double e = exp(x);
  if (isinf(e) && isfinite(x)) { /* e^x overflows, e^x cos y may not */
    double h = exp(x / 2);
    return CMPLX(h * cos(y) * h, h * sin(y) * h);
  }
  return CMPLX(e * cos(y), e * sin(y));
}

/* complex products as XLA computes them: re = fma(a.re, b.re, -(a.im b.im)),
 * im = fma(a.im, b.re, a.re b.im), in the element type's precision (what the corpus' expected
 * values were computed with, e.g. cumulative products) */
static double complex cmul(bool f32, double complex x, double complex y) {
  double ar = creal(x), ai = cimag(x), br = creal(y), bi = cimag(y);
  if (!f32) return CMPLX(fma(ar, br, -(ai * bi)), fma(ai, br, ar * bi));
  float rr = fmaf((float)ar, (float)br, -(float)(ai * bi)), ri = fmaf((float)ai, (float)br, (float)(ar * bi));
  return CMPLX(rr, ri);
}

/* complex<f32> power: XLA's formula in float (base/xla_math.c) */
static double complex cpow_c64(double complex x, double complex y) {
  float re, im;
  cj_xla_cpowf((float)creal(x), (float)cimag(x), (float)creal(y), (float)cimag(y), &re, &im);
  return CMPLX(re, im);
}

/* Complex numbers: computed in double complex (c64 products and powers in float, as XLA does). */
#define RF_CPX(name, expr)                                              \
  static void name(const cj_op *op, cj_dtype dt, const rs *a, rs *r) { \
    double complex x = a[0].c, y = op->nopnds > 1 ? a[1].c : 0;         \
    bool f32 = op->results[0].type->dtype == CJ_C64;                    \
    (void)x;                                                            \
    (void)y;                                                            \
    (void)f32;                                                          \
    r->c = (expr);                                                      \
  }
RF_CPX(c_add, x + y)
RF_CPX(c_sub, x - y)
RF_CPX(c_mul, cmul(f32, x, y))
RF_CPX(c_div, x / y)
RF_CPX(c_pow, f32 ? cpow_c64(x, y) : cpow(x, y))
RF_CPX(c_atan2, -I * clog((y + I * x) / csqrt(x * x + y * y)))
RF_CPX(c_cbrt, cpow(x, 1.0 / 3))
/* maximum / minimum: lexicographic on (real, imaginary) */
RF_CPX(c_max, (creal(x) < creal(y) || (creal(x) == creal(y) && cimag(x) < cimag(y))) ? y : x)
RF_CPX(c_min, (creal(x) < creal(y) || (creal(x) == creal(y) && cimag(x) < cimag(y))) ? x : y)
RF_CPX(c_neg, -x)
RF_CPX(c_sqrt, csqrt(x))
RF_CPX(c_rsqrt, 1 / csqrt(x))
RF_CPX(c_exp, cexp_xla(x))
RF_CPX(c_log, clog(x))
RF_CPX(c_logistic, 1 / (1 + cexp(-x)))
RF_CPX(c_sin, f32 ? CMPLX(sinf((float)creal(x)) * coshf((float)cimag(x)), cosf((float)creal(x)) * sinhf((float)cimag(x))) : csin(x))
RF_CPX(c_cos, f32 ? CMPLX(cosf((float)creal(x)) * coshf((float)cimag(x)), -sinf((float)creal(x)) * sinhf((float)cimag(x))) : ccos(x))
RF_CPX(c_tan, ctan(x))
RF_CPX(c_tanh, ctanh(x))
RF_CPX(c_acos, cacos(x))
RF_CPX(c_acosh, cacosh(x))
RF_CPX(c_asin, casin(x))
RF_CPX(c_asinh, casinh(x))
RF_CPX(c_atan, catan(x))
RF_CPX(c_atanh, catanh(x))
RF_CPX(c_cosh, ccosh(x))
RF_CPX(c_sinh, csinh(x))
RF_CPX(c_conj, conj(x))
#undef RF_CPX

static void c_abs(const cj_op *op, cj_dtype dt, const rs *a, rs *r) { r->f = cabs(a[0].c); } /* a real result */

static void c_sign(const cj_op *op, cj_dtype dt, const rs *a, rs *r) {
  double complex x = a[0].c;
  double m = cabs(x);
  if (isnan(creal(x)) || isnan(cimag(x))) r->c = CMPLX(NAN, NAN);
  else r->c = m == 0 ? 0 : x / m;
}

static void c_expm1(const cj_op *op, cj_dtype dt, const rs *a, rs *r) {
  /* exp(x) - 1 accurately: expm1(re) * cos(im) + cos(im) - 1 + i exp(re) sin(im) */
  double re = creal(a[0].c), im = cimag(a[0].c);
  double c = cos(im), s = sin(im);
  double cm1 = -2 * sin(im / 2) * sin(im / 2);
  r->c = CMPLX(expm1(re) * c + cm1, exp(re) * s);
}

static void c_log1p(const cj_op *op, cj_dtype dt, const rs *a, rs *r) {
  double complex x = a[0].c;
  double re = creal(x), im = cimag(x);
  double l = log1p(re * re + 2 * re + im * im) / 2; /* log|1+x| */
  if (fabs(re) > 1e8 || fabs(im) > 1e8) l = log(cabs(1 + x));
  r->c = CMPLX(l, atan2(im, 1 + re));
}

static void c_square(const cj_op *op, cj_dtype dt, const rs *a, rs *r) {
  /* (re - im)(re + im) + 2 re im i, exact 0 when |re| == |im| */
  double re = creal(a[0].c), im = cimag(a[0].c);
  double rr = fabs(re) == fabs(im) && isfinite(re) ? 0 : (re - im) * (re + im);
  r->c = CMPLX(rr, (re * im) * 2);
}

/* ---------------------------------------------------------------- every dtype class */

static void e_convert(const cj_op *op, cj_dtype in, const rs *a, rs *r) {
  *r = cj_rs_convert(in, op->results[0].type->dtype, a[0]);
}
static void e_compare(const cj_op *op, cj_dtype in, const rs *a, rs *r) { r->i = compare(op, in, a[0], a[1]); }
static void e_select(const cj_op *op, cj_dtype in, const rs *a, rs *r) { *r = a[0].i ? a[1] : a[2]; }
static void e_real(const cj_op *op, cj_dtype in, const rs *a, rs *r) {
  if (cj_dtype_kindof(in) == CJ_DK_COMPLEX) r->f = creal(a[0].c);
  else *r = a[0];
}
static void e_imag(const cj_op *op, cj_dtype in, const rs *a, rs *r) {
  r->f = cj_dtype_kindof(in) == CJ_DK_COMPLEX ? cimag(a[0].c) : 0;
}
static void e_complex(const cj_op *op, cj_dtype in, const rs *a, rs *r) { r->c = CMPLX(a[0].f, a[1].f); }
static void e_is_finite(const cj_op *op, cj_dtype in, const rs *a, rs *r) { r->i = isfinite(a[0].f); }
static void e_is_inf(const cj_op *op, cj_dtype in, const rs *a, rs *r) { r->i = isinf(a[0].f); }
static void e_is_neg_inf(const cj_op *op, cj_dtype in, const rs *a, rs *r) { r->i = isinf(a[0].f) && a[0].f < 0; }
static void e_is_pos_inf(const cj_op *op, cj_dtype in, const rs *a, rs *r) { r->i = isinf(a[0].f) && a[0].f > 0; }

/* ---------------------------------------------------------------- dispatch */

typedef void rf_scalar_fn(const cj_op *op, cj_dtype dt, const rs *a, rs *r);

/* an elementwise op's row of ref.def: one function for every class, or one per class */
typedef struct ew_row {
  rf_scalar_fn *any, *i, *f, *c, *b;
  bool transcendental;
} ew_row;

static const ew_row ew_rows[CJ_OP_COUNT] = {
#define REF_EW(OP, I, F, C, B) [CJ_OP_##OP] = {NULL, I, F, C, B, false},
#define REF_EWT(OP, I, F, C, B) [CJ_OP_##OP] = {NULL, I, F, C, B, true},
#define REF_EW_ANY(OP, FN) [CJ_OP_##OP] = {FN, NULL, NULL, NULL, NULL, false},
#include "reference/ref.def"
};

bool cj_rf_is_transcendental(cj_op_kind k) { return (unsigned)k < CJ_OP_COUNT && ew_rows[k].transcendental; }

cj_status cj_rf_ew_scalar(const cj_op *op, const rs *a, rs *r) {
  cj_dtype in = op->operands[0]->type->dtype, out = op->results[0].type->dtype;
  static const ew_row none;
  const ew_row *w = (unsigned)op->kind < CJ_OP_COUNT ? &ew_rows[op->kind] : &none;
  memset(r, 0, sizeof *r);
  if (w->any) {
    w->any(op, in, a, r);
    return NULL;
  }
  cj_dtype dt = op->kind == CJ_OP_CLAMP ? op->operands[1]->type->dtype : in;
  rf_scalar_fn *fn;
  const char *what;
  switch (cj_dtype_kindof(dt)) {
    case CJ_DK_BOOL: fn = w->b, what = "booleans"; break;
    case CJ_DK_SINT:
    case CJ_DK_UINT: fn = w->i, what = "integers"; break;
    case CJ_DK_FLOAT: fn = w->f, what = "floats", dt = out; break;
    case CJ_DK_COMPLEX: fn = w->c, what = "complex numbers"; break;
    default: return cj_op_error(op, CJ_UNIMPLEMENTED, "%s on this element type", op->name);
  }
  if (!fn) return cj_op_error(op, CJ_UNIMPLEMENTED, "%s on %s is not supported by the reference backend", op->name, what);
  fn(op, dt, a, r);
  return NULL;
}

cj_status cj_rf_ew(rf_exec *x, cj_op *op, rv **ins, rv **outs) {
  (void)x;
  rv *out = outs[0];
  uint32_t n = op->nopnds;
  if (n > 4) return cj_op_error(op, CJ_UNIMPLEMENTED, "elementwise op with %u operands", n);
  rs a[4], r;
  for (int64_t i = 0; i < out->n; i++) {
    for (uint32_t k = 0; k < n; k++) a[k] = cj_rs_get(ins[k]->dt, ins[k]->data, ins[k]->n == out->n ? i : 0);
    CJ_RETURN_IF_ERROR(cj_rf_ew_scalar(op, a, &r));
    cj_rs_set(out->dt, out->data, i, r);
  }
  return NULL;
}
