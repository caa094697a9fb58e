/* cjrt reference backend: elementwise ops (StableHLO and the chlo functions the compiler keeps).
 * One scalar function, rf_ew_scalar, gives every op's semantics on one element; rf_ew maps it
 * over tensors (a one-element operand is broadcast, as select's scalar predicate and clamp's
 * scalar bounds are). Floats are computed in double and rounded once when stored; integers wrap
 * to the result's width; division by zero, shifts by the bit width or more and INT_MIN / -1 follow
 * StableHLO (XLA) semantics. */
#include <complex.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reference/ref.h"

bool rf_is_ew(cj_op_kind k) {
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

int rf_compare_total(cj_dtype dt, rs a, rs b) {
  switch (cj_dtype_kindof(dt)) {
    case CJ_DK_FLOAT: {
      int64_t ka = total_key(a.f), kb = total_key(b.f);
      return ka < kb ? -1 : ka > kb;
    }
    case CJ_DK_UINT: return (uint64_t)a.i < (uint64_t)b.i ? -1 : (uint64_t)a.i > (uint64_t)b.i;
    case CJ_DK_COMPLEX: {
      rs ra = {creal(a.c), 0, 0}, rb = {creal(b.c), 0, 0};
      int c = rf_compare_total(CJ_F64, ra, rb);
      if (c) return c;
      ra.f = cimag(a.c);
      rb.f = cimag(b.c);
      return rf_compare_total(CJ_F64, ra, rb);
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
  c = rf_compare_total(dt, a, b);
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
  return rf_wrap(dt, (int64_t)r);
}

static CJ_MUST_USE cj_status int_op(const cj_op *op, cj_dtype dt, const rs *a, rs *r) {
  bool uns = cj_dtype_kindof(dt) == CJ_DK_UINT;
  int bits = cj_dtype_bits(dt);
  int64_t x = a[0].i, y = op->nopnds > 1 ? a[1].i : 0;
  uint64_t ux = (uint64_t)x, uy = (uint64_t)y;
  uint64_t mask = bits >= 64 ? ~0ull : (1ull << bits) - 1;
  int64_t v;
  switch (op->kind) {
    case CJ_OP_ADD: v = (int64_t)(ux + uy); break;
    case CJ_OP_SUBTRACT: v = (int64_t)(ux - uy); break;
    case CJ_OP_MULTIPLY: v = (int64_t)(ux * uy); break;
    case CJ_OP_DIVIDE:
      if (y == 0) v = -1;
      else if (uns) v = (int64_t)(ux / uy);
      else if (y == -1) v = (int64_t)(0 - ux);
      else v = x / y;
      break;
    case CJ_OP_REMAINDER:
      if (y == 0) v = x;
      else if (uns) v = (int64_t)(ux % uy);
      else if (y == -1) v = 0;
      else v = x % y;
      break;
    case CJ_OP_MAXIMUM: v = uns ? (ux > uy ? x : y) : (x > y ? x : y); break;
    case CJ_OP_MINIMUM: v = uns ? (ux < uy ? x : y) : (x < y ? x : y); break;
    case CJ_OP_POWER: v = ipow(dt, x, y); break;
    case CJ_OP_AND: v = x & y; break;
    case CJ_OP_OR: v = x | y; break;
    case CJ_OP_XOR: v = x ^ y; break;
    case CJ_OP_NOT: v = ~x; break;
    case CJ_OP_NEGATE: v = (int64_t)(0 - ux); break;
    case CJ_OP_ABS: v = x < 0 && !uns ? (int64_t)(0 - ux) : x; break;
    case CJ_OP_SIGN: v = uns ? (x != 0) : (x > 0) - (x < 0); break;
    case CJ_OP_SHIFT_LEFT: v = (uy >= (uint64_t)bits) ? 0 : (int64_t)(ux << uy); break;
    case CJ_OP_SHIFT_RIGHT_LOGICAL: v = (uy >= (uint64_t)bits) ? 0 : (int64_t)((ux & mask) >> uy); break;
    case CJ_OP_SHIFT_RIGHT_ARITHMETIC: {
      int64_t sx = rf_wrap(dt == CJ_U8 ? CJ_S8 : dt == CJ_U16 ? CJ_S16 : dt == CJ_U32 ? CJ_S32 : dt == CJ_U64 ? CJ_S64 : dt, x);
      if (uns) { /* sign bit of the width */
        sx = (ux >> (bits - 1)) & 1 ? (int64_t)(ux | ~mask) : x;
      }
      v = (uy >= (uint64_t)bits) ? (sx < 0 ? -1 : 0) : sx >> uy;
      break;
    }
    case CJ_OP_POPCNT: v = __builtin_popcountll(ux & mask); break;
    case CJ_OP_COUNT_LEADING_ZEROS: {
      uint64_t m = ux & mask;
      v = m ? __builtin_clzll(m) - (64 - bits) : bits;
      break;
    }
    case CJ_OP_CLAMP: { /* clamp(min, x, max) */
      int64_t lo = a[0].i, xv = a[1].i, hi = a[2].i;
      if (uns) {
        uint64_t t = (uint64_t)xv < (uint64_t)lo ? (uint64_t)lo : (uint64_t)xv;
        v = (int64_t)(t > (uint64_t)hi ? (uint64_t)hi : t);
      } else {
        int64_t t = xv < lo ? lo : xv;
        v = t > hi ? hi : t;
      }
      break;
    }
    case CJ_OP_CHLO_MULHI: {
      if (uns) {
        unsigned __int128 p = (unsigned __int128)(ux & mask) * (uy & mask);
        v = (int64_t)(uint64_t)(p >> bits);
      } else {
        __int128 p = (__int128)x * y;
        v = (int64_t)(p >> bits);
      }
      break;
    }
    default:
      return cj_op_error(op, CJ_UNIMPLEMENTED, "%s on integers is not supported by the reference backend", op->name);
  }
  r->i = rf_wrap(dt, v);
  return NULL;
}

static CJ_MUST_USE cj_status bool_op(const cj_op *op, const rs *a, rs *r) {
  int64_t x = a[0].i != 0, y = op->nopnds > 1 ? a[1].i != 0 : 0;
  switch (op->kind) {
    case CJ_OP_AND:
    case CJ_OP_MULTIPLY:
    case CJ_OP_MINIMUM: r->i = x & y; return NULL;
    case CJ_OP_OR:
    case CJ_OP_ADD:
    case CJ_OP_MAXIMUM: r->i = x | y; return NULL;
    case CJ_OP_XOR:
    case CJ_OP_SUBTRACT: r->i = x ^ y; return NULL;
    case CJ_OP_NOT: r->i = !x; return NULL;
    case CJ_OP_CLAMP: {
      int64_t lo = a[0].i != 0, v = a[1].i != 0, hi = a[2].i != 0;
      v = v < lo ? lo : v;
      r->i = v > hi ? hi : v;
      return NULL;
    }
    default: return cj_op_error(op, CJ_UNIMPLEMENTED, "%s on booleans is not supported by the reference backend", op->name);
  }
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

static CJ_MUST_USE cj_status float_op(const cj_op *op, cj_dtype dt, const rs *a, rs *r) {
  double x = a[0].f, y = op->nopnds > 1 ? a[1].f : 0, v;
  switch (op->kind) {
    case CJ_OP_ADD: v = x + y; break;
    case CJ_OP_SUBTRACT: v = x - y; break;
    case CJ_OP_MULTIPLY: v = x * y; break;
    case CJ_OP_DIVIDE: v = x / y; break;
    case CJ_OP_REMAINDER: v = fmod(x, y); break;
    case CJ_OP_MAXIMUM: v = fmax_nan(x, y); break;
    case CJ_OP_MINIMUM: v = fmin_nan(x, y); break;
    case CJ_OP_POWER: v = pow(x, y); break;
    case CJ_OP_ATAN2: v = atan2(x, y); break;
    case CJ_OP_NEGATE: v = -x; break;
    case CJ_OP_ABS: v = fabs(x); break;
    case CJ_OP_SIGN: v = isnan(x) ? x : x > 0 ? 1 : x < 0 ? -1 : x; break;
    case CJ_OP_CEIL: v = ceil(x); break;
    case CJ_OP_FLOOR: v = floor(x); break;
    case CJ_OP_ROUND_NEAREST_AFZ: v = round(x); break;
    case CJ_OP_ROUND_NEAREST_EVEN: v = nearbyint(x); break;
    case CJ_OP_SQRT: v = sqrt(x); break;
    case CJ_OP_RSQRT: v = 1 / sqrt(x); break;
    case CJ_OP_CBRT: v = cbrt(x); break;
    case CJ_OP_EXPONENTIAL: v = exp(x); break;
    case CJ_OP_EXPONENTIAL_MINUS_ONE: v = expm1(x); break;
    case CJ_OP_LOG: v = log(x); break;
    case CJ_OP_LOG_PLUS_ONE: v = log1p(x); break;
    case CJ_OP_LOGISTIC: v = 1 / (1 + exp(-x)); break;
    case CJ_OP_SINE: v = sin(x); break;
    case CJ_OP_COSINE: v = cos(x); break;
    case CJ_OP_TAN:
    case CJ_OP_CHLO_TAN: v = tan(x); break;
    case CJ_OP_TANH: v = tanh(x); break;
    case CJ_OP_CLAMP: v = fmin_nan(fmax_nan(a[1].f, a[0].f), a[2].f); break;
    case CJ_OP_REDUCE_PRECISION: {
      int64_t eb = 8, mb = 23;
      cj_op_get_i64(op, "exponent_bits", &eb);
      cj_op_get_i64(op, "mantissa_bits", &mb);
      v = reduce_precision(dt, x, (int)eb, (int)mb);
      break;
    }
    case CJ_OP_CHLO_ACOS: v = acos(x); break;
    case CJ_OP_CHLO_ACOSH: v = acosh(x); break;
    case CJ_OP_CHLO_ASIN: v = asin(x); break;
    case CJ_OP_CHLO_ASINH: v = asinh(x); break;
    case CJ_OP_CHLO_ATAN: v = atan(x); break;
    case CJ_OP_CHLO_ATANH: v = atanh(x); break;
    case CJ_OP_CHLO_COSH: v = cosh(x); break;
    case CJ_OP_CHLO_SINH: v = sinh(x); break;
    case CJ_OP_CHLO_ERF: v = erf(x); break;
    case CJ_OP_CHLO_ERFC: v = erfc(x); break;
    case CJ_OP_CHLO_ERF_INV: v = erfinv(x); break;
    case CJ_OP_CHLO_LGAMMA: v = isinf(x) ? INFINITY : lgamma(x); break;
    case CJ_OP_CHLO_DIGAMMA: v = digamma(x); break;
    case CJ_OP_CHLO_BESSEL_I1E: v = bessel_i1e(x); break;
    case CJ_OP_CHLO_SQUARE: v = x * x; break;
    case CJ_OP_CHLO_CONJ: v = x; break;
    case CJ_OP_CHLO_NEXT_AFTER: v = next_after(dt, x, y); break;
    case CJ_OP_CHLO_POLYGAMMA: v = polygamma(x, y); break;
    case CJ_OP_CHLO_ZETA: v = zeta(x, y); break;
    default:
      return cj_op_error(op, CJ_UNIMPLEMENTED, "%s on floats is not supported by the reference backend", op->name);
  }
  r->f = v;
  return NULL;
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

static CJ_MUST_USE cj_status complex_op(const cj_op *op, const rs *a, rs *r) {
  double complex x = a[0].c, y = op->nopnds > 1 ? a[1].c : 0, v;
  bool f32 = op->results[0].type->dtype == CJ_C64;
  switch (op->kind) {
    case CJ_OP_ADD: v = x + y; break;
    case CJ_OP_SUBTRACT: v = x - y; break;
    case CJ_OP_MULTIPLY: v = cmul(f32, x, y); break;
    case CJ_OP_DIVIDE: v = x / y; break;
    case CJ_OP_POWER: v = f32 ? (double complex)cpowf((float complex)x, (float complex)y) : cpow(x, y); break;
    case CJ_OP_ATAN2: v = -I * clog((y + I * x) / csqrt(x * x + y * y)); break;
    case CJ_OP_CBRT: v = cpow(x, 1.0 / 3); break;
    case CJ_OP_MAXIMUM:
    case CJ_OP_MINIMUM: { /* lexicographic on (real, imaginary) */
      bool lt = creal(x) < creal(y) || (creal(x) == creal(y) && cimag(x) < cimag(y));
      v = (op->kind == CJ_OP_MAXIMUM) == lt ? y : x;
      break;
    }
    case CJ_OP_NEGATE: v = -x; break;
    case CJ_OP_SIGN: {
      double m = cabs(x);
      if (isnan(creal(x)) || isnan(cimag(x))) v = CMPLX(NAN, NAN);
      else v = m == 0 ? 0 : x / m;
      break;
    }
    case CJ_OP_SQRT: v = csqrt(x); break;
    case CJ_OP_RSQRT: v = 1 / csqrt(x); break;
    case CJ_OP_EXPONENTIAL: v = cexp_xla(x); break;
    case CJ_OP_EXPONENTIAL_MINUS_ONE: {
      /* exp(x) - 1 accurately: expm1(re) * cos(im) + cos(im) - 1 + i exp(re) sin(im) */
      double re = creal(x), im = cimag(x);
      double c = cos(im), s = sin(im);
      double cm1 = -2 * sin(im / 2) * sin(im / 2);
      v = CMPLX(expm1(re) * c + cm1, exp(re) * s);
      break;
    }
    case CJ_OP_LOG: v = clog(x); break;
    case CJ_OP_LOG_PLUS_ONE: {
      double re = creal(x), im = cimag(x);
      double l = log1p(re * re + 2 * re + im * im) / 2; /* log|1+x| */
      if (fabs(re) > 1e8 || fabs(im) > 1e8) l = log(cabs(1 + x));
      v = CMPLX(l, atan2(im, 1 + re));
      break;
    }
    case CJ_OP_LOGISTIC: v = 1 / (1 + cexp(-x)); break;
    case CJ_OP_SINE: v = f32 ? CMPLX(sinf((float)creal(x)) * coshf((float)cimag(x)), cosf((float)creal(x)) * sinhf((float)cimag(x))) : csin(x); break;
    case CJ_OP_COSINE: v = f32 ? CMPLX(cosf((float)creal(x)) * coshf((float)cimag(x)), -sinf((float)creal(x)) * sinhf((float)cimag(x))) : ccos(x); break;
    case CJ_OP_TAN:
    case CJ_OP_CHLO_TAN: v = ctan(x); break;
    case CJ_OP_TANH: v = ctanh(x); break;
    case CJ_OP_CHLO_ACOS: v = cacos(x); break;
    case CJ_OP_CHLO_ACOSH: v = cacosh(x); break;
    case CJ_OP_CHLO_ASIN: v = casin(x); break;
    case CJ_OP_CHLO_ASINH: v = casinh(x); break;
    case CJ_OP_CHLO_ATAN: v = catan(x); break;
    case CJ_OP_CHLO_ATANH: v = catanh(x); break;
    case CJ_OP_CHLO_COSH: v = ccosh(x); break;
    case CJ_OP_CHLO_SINH: v = csinh(x); break;
    case CJ_OP_CHLO_SQUARE: { /* (re - im)(re + im) + 2 re im i, exact 0 when |re| == |im| */
      double re = creal(x), im = cimag(x);
      double rr = fabs(re) == fabs(im) && isfinite(re) ? 0 : (re - im) * (re + im);
      v = CMPLX(rr, (re * im) * 2);
      break;
    }
    case CJ_OP_CHLO_CONJ: v = conj(x); break;
    default:
      return cj_op_error(op, CJ_UNIMPLEMENTED, "%s on complex numbers is not supported by the reference backend", op->name);
  }
  r->c = v;
  return NULL;
}

/* ---------------------------------------------------------------- dispatch */

cj_status rf_ew_scalar(const cj_op *op, const rs *a, rs *r) {
  cj_dtype in = op->operands[0]->type->dtype, out = op->results[0].type->dtype;
  cj_dtype_kind ik = cj_dtype_kindof(in), ok = cj_dtype_kindof(out);
  memset(r, 0, sizeof *r);
  switch (op->kind) {
    case CJ_OP_CONVERT: *r = rs_convert(in, out, a[0]); return NULL;
    case CJ_OP_COMPARE: r->i = compare(op, in, a[0], a[1]); return NULL;
    case CJ_OP_SELECT: *r = a[0].i ? a[1] : a[2]; return NULL;
    case CJ_OP_REAL:
      if (ik == CJ_DK_COMPLEX) r->f = creal(a[0].c);
      else *r = a[0];
      return NULL;
    case CJ_OP_IMAG:
      r->f = ik == CJ_DK_COMPLEX ? cimag(a[0].c) : 0;
      return NULL;
    case CJ_OP_COMPLEX: r->c = CMPLX(a[0].f, a[1].f); return NULL;
    case CJ_OP_IS_FINITE: r->i = isfinite(a[0].f); return NULL;
    case CJ_OP_CHLO_IS_INF: r->i = isinf(a[0].f); return NULL;
    case CJ_OP_CHLO_IS_NEG_INF: r->i = isinf(a[0].f) && a[0].f < 0; return NULL;
    case CJ_OP_CHLO_IS_POS_INF: r->i = isinf(a[0].f) && a[0].f > 0; return NULL;
    case CJ_OP_ABS:
      if (ik == CJ_DK_COMPLEX) {
        r->f = cabs(a[0].c);
        return NULL;
      }
      break;
    default: break;
  }
  cj_dtype dt = op->kind == CJ_OP_CLAMP ? op->operands[1]->type->dtype : in;
  cj_dtype_kind k = cj_dtype_kindof(dt);
  (void)ok;
  switch (k) {
    case CJ_DK_BOOL: return bool_op(op, a, r);
    case CJ_DK_SINT:
    case CJ_DK_UINT: return int_op(op, dt, a, r);
    case CJ_DK_FLOAT: return float_op(op, out, a, r);
    case CJ_DK_COMPLEX: return complex_op(op, a, r);
    default: return cj_op_error(op, CJ_UNIMPLEMENTED, "%s on this element type", op->name);
  }
}

cj_status rf_ew(rf_exec *x, cj_op *op, rv **ins, rv *out) {
  (void)x;
  uint32_t n = op->nopnds;
  if (n > 4) return cj_op_error(op, CJ_UNIMPLEMENTED, "elementwise op with %u operands", n);
  rs a[4], r;
  for (int64_t i = 0; i < out->n; i++) {
    for (uint32_t k = 0; k < n; k++) a[k] = rs_get(ins[k]->dt, ins[k]->data, ins[k]->n == out->n ? i : 0);
    CJ_RETURN_IF_ERROR(rf_ew_scalar(op, a, &r));
    rs_set(out->dt, out->data, i, r);
  }
  return NULL;
}
