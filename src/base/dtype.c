#include "base/dtype.h"

#include <math.h>

static const cj_dtype_info invalid_info = {"INVALID", NULL, 0, 0, CJ_DK_INVALID, 0, 0, 0, 0};

static const cj_dtype_info *info_table(int code) {
  static cj_dtype_info table[CJ_DTYPE_LIMIT];
  static int ready = 0; /* benign: every thread writes identical bytes */
  if (!ready) {
#define X(id_, code_, name_, bits_, bytes_, kind_, eb_, mb_, bias_, ff_, xla_) \
  table[code_] = (cj_dtype_info){#id_, name_, bits_, bytes_, kind_, eb_, mb_, bias_, ff_, xla_};
#include "base/dtypes.def"
#undef X
    __atomic_store_n(&ready, 1, __ATOMIC_RELEASE);
  }
  if (code < 0 || code >= CJ_DTYPE_LIMIT || table[code].id == NULL) return &invalid_info;
  return &table[code];
}

const cj_dtype_info *cj_dtype_get(cj_dtype dt) { return info_table((int)dt); }

cj_dtype cj_dtype_from_mlir(const char *s, size_t n) {
#define X(id_, code_, name_, bits_, bytes_, kind_, eb_, mb_, bias_, ff_, xla_)           \
  if (name_ && strlen(name_ ? name_ : "") == n && memcmp(s, name_ ? name_ : "", n) == 0) \
    return CJ_##id_;
#include "base/dtypes.def"
#undef X
  /* signed spellings used by VHLO and the builtin dialect */
  if (n >= 3 && s[0] == 's' && s[1] == 'i') {
    char buf[8];
    if (n - 1 >= sizeof buf) return CJ_INVALID;
    buf[0] = 'i';
    memcpy(buf + 1, s + 2, n - 2);
    cj_dtype d = cj_dtype_from_mlir(buf, n - 1);
    return d == CJ_PRED ? CJ_S1 : d;
  }
  if (n == 13 && memcmp(s, "complex<f32>", 12) == 0) return CJ_INVALID;
  return CJ_INVALID;
}

cj_dtype cj_dtype_component(cj_dtype dt) {
  if (dt == CJ_C64) return CJ_F32;
  if (dt == CJ_C128) return CJ_F64;
  return dt;
}

/* ---- generic small-float codec ---- */

/* a float's bits and back, through a union (C11 6.5.2.3) */
typedef union { float f; uint32_t u; } f32_pun;
typedef union { double d; uint64_t u; } f64_pun;

double cj_float_decode(cj_dtype dt, uint64_t bits) {
  const cj_dtype_info *in = cj_dtype_get(dt);
  if (dt == CJ_F32) return (f32_pun){.u = (uint32_t)bits}.f;
  if (dt == CJ_F64) return (f64_pun){.u = bits}.d;
  if (in->kind != CJ_DK_FLOAT) return NAN;
  int eb = in->ebits, mb = in->mbits;
  if (dt == CJ_TF32) return (f32_pun){.u = (uint32_t)bits & 0xffffe000u}.f; /* held as an f32 */
  if (in->fflags == CJ_FF_E8M0) {
    unsigned e = (unsigned)(bits & 0xff);
    if (e == 0xff) return NAN;
    return ldexp(1.0, (int)e - in->bias);
  }
  uint64_t mmask = (1ull << mb) - 1, emask = (1ull << eb) - 1;
  int sign = (int)((bits >> (eb + mb)) & 1);
  uint64_t e = (bits >> mb) & emask, m = bits & mmask;
  double v;
  switch (in->fflags) {
    case CJ_FF_IEEE:
      if (e == emask) return m ? (sign ? -NAN : NAN) : (sign ? -INFINITY : INFINITY);
      break;
    case CJ_FF_FN:
      if (e == emask && m == mmask) return sign ? -NAN : NAN;
      break;
    case CJ_FF_FNUZ:
      if (sign && e == 0 && m == 0) return NAN;
      break;
    default:
      break;
  }
  if (e == 0)
    v = ldexp((double)m, 1 - in->bias - mb);
  else
    v = ldexp((double)(m | (1ull << mb)), (int)e - in->bias - mb);
  return sign ? -v : v;
}

uint64_t cj_float_encode(cj_dtype dt, double v) {
  const cj_dtype_info *in = cj_dtype_get(dt);
  if (dt == CJ_F32) return (f32_pun){.f = (float)v}.u;
  if (dt == CJ_F64) return (f64_pun){.d = v}.u;
  if (dt == CJ_TF32) {
    uint32_t u = (f32_pun){.f = (float)v}.u;
    if ((u & 0x7fffffffu) > 0x7f800000u) return u | 0x00400000u;
    u += 0xfffu + ((u >> 13) & 1u);
    return u & 0xffffe000u;
  }
  if (in->kind != CJ_DK_FLOAT) return 0;
  int eb = in->ebits, mb = in->mbits, bias = in->bias, ff = in->fflags;
  uint64_t emask = (1ull << eb) - 1, mmask = (1ull << mb) - 1;
  uint64_t signbit = 1ull << (eb + mb);

  if (ff == CJ_FF_E8M0) {
    if (isnan(v) || v <= 0 || isinf(v)) return 0xff;
    int e2;
    double f = frexp(v, &e2); /* v = f * 2^e2, f in [0.5, 1) */
    int e = e2 - 1;           /* v = (2f) * 2^e, 2f in [1, 2) */
    if (2 * f >= 1.5) e++;    /* ties round up */
    int biased = e + bias;
    if (biased < 0) biased = 0;
    if (biased > 254) return 0xff;
    return (uint64_t)biased;
  }

  int neg = signbit(v) ? 1 : 0;
  uint64_t sgn = neg ? signbit : 0;
  /* the largest finite value's biased exponent and mantissa */
  uint64_t max_e = emask, max_m = mmask;
  if (ff == CJ_FF_IEEE) max_e = emask - 1;
  if (ff == CJ_FF_FN) max_m = mmask - 1;
  uint64_t nan_bits;
  switch (ff) {
    case CJ_FF_IEEE: nan_bits = sgn | (emask << mb) | (mb ? 1ull << (mb - 1) : 0); break;
    case CJ_FF_FN: nan_bits = sgn | (emask << mb) | mmask; break;
    case CJ_FF_FNUZ: nan_bits = signbit; break;
    default: nan_bits = signbit; break; /* FINITE formats: ml_dtypes gives -0 */
  }
  uint64_t overflow_bits;
  switch (ff) {
    case CJ_FF_IEEE: overflow_bits = sgn | (emask << mb); break;
    case CJ_FF_FN:
    case CJ_FF_FNUZ: overflow_bits = nan_bits; break;
    default: overflow_bits = sgn | (max_e << mb) | max_m; break;
  }
  if (isnan(v)) return nan_bits;
  double a = fabs(v);
  if (isinf(a)) return overflow_bits;
  if (a == 0) return ff == CJ_FF_FNUZ ? 0 : sgn;

  int e2;
  (void)frexp(a, &e2);
  int e = e2 - 1; /* a in [2^e, 2^(e+1)) */
  int64_t biased = (int64_t)e + bias;
  uint64_t m;
  if (biased >= 1) {
    double frac = ldexp(a, -e) - 1.0; /* exact */
    double r = nearbyint(ldexp(frac, mb));
    m = (uint64_t)r;
    if (m > mmask) {
      m = 0;
      biased++;
    }
  } else {
    double r = nearbyint(ldexp(a, mb - (1 - bias)));
    m = (uint64_t)r;
    if (m > mmask) { /* rounded up into the smallest normal */
      m = 0;
      biased = 1;
    } else {
      biased = 0;
    }
  }
  if (biased == 0 && m == 0) return ff == CJ_FF_FNUZ ? 0 : sgn;
  if ((uint64_t)biased > max_e || ((uint64_t)biased == max_e && m > max_m)) return overflow_bits;
  return sgn | ((uint64_t)biased << mb) | m;
}

float cj_f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t e = (h >> 10) & 0x1f, m = h & 0x3ffu;
  uint32_t u;
  if (e == 0x1f) {
    u = sign | 0x7f800000u | (m << 13);
  } else if (e == 0) {
    if (m == 0) {
      u = sign;
    } else { /* subnormal: normalize */
      int sh = 0;
      while (!(m & 0x400u)) {
        m <<= 1;
        sh++;
      }
      m &= 0x3ffu;
      u = sign | ((uint32_t)(127 - 15 + 1 - sh) << 23) | (m << 13);
    }
  } else {
    u = sign | ((e + 127 - 15) << 23) | (m << 13);
  }
  return (f32_pun){.u = u}.f;
}

/* f32 -> f16, nearest even, on the bits: cj_float_encode's values (NaN: quiet, sign kept,
 * payload dropped; overflow: inf) without its trip through double and frexp, which made every
 * scalar f16 store (f16 max pooling's combiner, f16 scatters) cost ~40 ns. */
uint16_t cj_f32_to_f16(float f) {
  uint32_t x = (f32_pun){.f = f}.u, ax = x & 0x7fffffffu;
  uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
  if (ax > 0x7f800000u) return (uint16_t)(sign | 0x7e00u);
  if (ax >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* >= 65520: rounds to inf */
  if (ax < 0x33000000u) return sign;                        /* < 2^-25: rounds to 0 */
  uint32_t e = ax >> 23, h, rem, half;
  if (ax < 0x38800000u) { /* below 2^-14: an f16 subnormal, in units of 2^-24 */
    uint32_t m = (ax & 0x7fffffu) | 0x800000u, sh = 126 - e; /* 1 <= sh <= 24 */
    h = m >> sh;
    rem = m & ((1u << sh) - 1);
    half = 1u << (sh - 1);
  } else {
    h = (ax - (112u << 23)) >> 13;
    rem = ax & 0x1fffu;
    half = 0x1000u;
  }
  if (rem > half || (rem == half && (h & 1u))) h++; /* a carry moves into the exponent */
  return (uint16_t)(sign | h);
}

/* ---- element access for folding, printing and tests ---- */

static uint64_t load_bits(const void *data, size_t i, int bytes) {
  const unsigned char *p = (const unsigned char *)data + i * (size_t)bytes;
  uint64_t v = 0;
  memcpy(&v, p, (size_t)bytes); /* little-endian host */
  return v;
}

static void store_bits(void *data, size_t i, int bytes, uint64_t v) {
  memcpy((unsigned char *)data + i * (size_t)bytes, &v, (size_t)bytes);
}

int64_t cj_elem_get_i64(cj_dtype dt, const void *data, size_t i) {
  const cj_dtype_info *in = cj_dtype_get(dt);
  switch (in->kind) {
    case CJ_DK_BOOL: return load_bits(data, i, 1) ? 1 : 0;
    case CJ_DK_SINT: {
      uint64_t v = load_bits(data, i, in->bytes);
      int bits = in->bits;
      if (bits < 64) {
        v &= (1ull << bits) - 1;
        if (v >> (bits - 1)) v |= ~((1ull << bits) - 1);
      }
      return (int64_t)v;
    }
    case CJ_DK_UINT: {
      uint64_t v = load_bits(data, i, in->bytes);
      if (in->bits < 64) v &= (1ull << in->bits) - 1;
      return (int64_t)v;
    }
    case CJ_DK_FLOAT:
    case CJ_DK_COMPLEX: {
      double d = cj_elem_get_f64(dt, data, i);
      if (isnan(d)) return 0;
      if (d >= 9.2233720368547758e18) return INT64_MAX;
      if (d <= -9.2233720368547758e18) return INT64_MIN;
      return (int64_t)d;
    }
    default: return 0;
  }
}

double cj_elem_get_f64(cj_dtype dt, const void *data, size_t i) {
  const cj_dtype_info *in = cj_dtype_get(dt);
  switch (in->kind) {
    case CJ_DK_FLOAT:
      if (dt == CJ_BF16) return cj_bf16_to_f32((uint16_t)load_bits(data, i, 2));
      if (dt == CJ_F16) return cj_f16_to_f32((uint16_t)load_bits(data, i, 2));
      return cj_float_decode(dt, load_bits(data, i, in->bytes));
    case CJ_DK_COMPLEX:
      if (dt == CJ_C64) return cj_float_decode(CJ_F32, load_bits(data, 2 * i, 4));
      return cj_float_decode(CJ_F64, load_bits(data, 2 * i, 8));
    case CJ_DK_UINT: return (double)(uint64_t)cj_elem_get_i64(dt, data, i);
    case CJ_DK_SINT:
    case CJ_DK_BOOL: return (double)cj_elem_get_i64(dt, data, i);
    default: return 0;
  }
}

void cj_elem_set_i64(cj_dtype dt, void *data, size_t i, int64_t v) {
  const cj_dtype_info *in = cj_dtype_get(dt);
  switch (in->kind) {
    case CJ_DK_BOOL: store_bits(data, i, 1, v != 0); break;
    case CJ_DK_SINT:
    case CJ_DK_UINT: {
      uint64_t u = (uint64_t)v;
      if (in->bits < 64) u &= (1ull << in->bits) - 1;
      store_bits(data, i, in->bytes, u);
      break;
    }
    case CJ_DK_FLOAT:
    case CJ_DK_COMPLEX: cj_elem_set_f64(dt, data, i, (double)v); break;
    default: break;
  }
}

void cj_elem_set_f64(cj_dtype dt, void *data, size_t i, double v) {
  const cj_dtype_info *in = cj_dtype_get(dt);
  switch (in->kind) {
    case CJ_DK_FLOAT: store_bits(data, i, in->bytes, cj_float_encode(dt, v)); break;
    case CJ_DK_COMPLEX:
      if (dt == CJ_C64) {
        store_bits(data, 2 * i, 4, cj_float_encode(CJ_F32, v));
        store_bits(data, 2 * i + 1, 4, 0);
      } else {
        store_bits(data, 2 * i, 8, cj_float_encode(CJ_F64, v));
        store_bits(data, 2 * i + 1, 8, 0);
      }
      break;
    case CJ_DK_BOOL: store_bits(data, i, 1, v != 0); break;
    case CJ_DK_SINT:
    case CJ_DK_UINT: {
      int64_t x;
      if (isnan(v)) x = 0;
      else if (in->kind == CJ_DK_UINT && v >= 9.2233720368547758e18) x = (int64_t)(uint64_t)v;
      else if (v >= 9.2233720368547758e18) x = INT64_MAX;
      else if (v <= -9.2233720368547758e18) x = INT64_MIN;
      else x = (int64_t)v;
      cj_elem_set_i64(dt, data, i, x);
      break;
    }
    default: break;
  }
}

cj_dtype cj_dtype_from_xla(int64_t primitive_type) {
  if (primitive_type <= 0) return CJ_INVALID;
#define X(id_, code_, name_, bits_, bytes_, kind_, eb_, mb_, bias_, ff_, xla_) \
  if (xla_ == primitive_type) return CJ_##id_;
#include "base/dtypes.def"
#undef X
  return CJ_INVALID;
}

uint64_t cj_elem_get_bits(cj_dtype dt, const void *data, int64_t i) {
  int b = cj_dtype_bytes(dt);
  uint64_t v = 0;
  memcpy(&v, (const char *)data + (size_t)i * (size_t)b, (size_t)b);
  int bits = cj_dtype_bits(dt);
  if (bits < 64) v &= (1ull << bits) - 1;
  return v;
}

uint64_t cj_elem_ulp_distance(cj_dtype dt, const void *da, const void *db, int64_t i) {
  uint64_t a = cj_elem_get_bits(dt, da, i), b = cj_elem_get_bits(dt, db, i);
  if (a == b) return 0;
  double fa = cj_float_decode(dt, a), fb = cj_float_decode(dt, b);
  if (isnan(fa) && isnan(fb)) return 0;
  if (!isfinite(fa) || !isfinite(fb)) return UINT64_MAX;
  const cj_dtype_info *in = cj_dtype_get(dt);
  uint64_t sign = in->fflags == CJ_FF_E8M0 ? 0 : 1ull << (in->bits - 1);
  uint64_t ma = a & ~sign, mb = b & ~sign;
  if (((a & sign) != 0) != ((b & sign) != 0)) return ma + mb;
  return ma > mb ? ma - mb : mb - ma;
}
