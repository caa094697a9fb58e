/* Integer conversions and logical right shifts of the elementwise kernels (ew_cvt.c, ew.c),
 * against a model written here with 64-bit arithmetic: every pair of 8..64-bit integer types
 * (two's complement wrap: truncation, sign or zero extension) on boundary values and random bit
 * patterns, including odd lengths (vector bodies and tails); shift_right_logical on every integer
 * type for shifts 0..width+3 (width or more gives 0), at the type's width and at a narrower
 * storage width (i4 in s32); population_count and count_leading_zeros on every integer type
 * (the whole-width SWAR kernels and the float-exponent ones of 8..32 bits) and at a narrower
 * storage width; divide and remainder on every integer type (8..32 bits divide through floats)
 * for every pair of boundary values, random bit patterns and small divisors, with the spec's
 * x / 0, x % 0 and INT_MIN / -1; bool, f32 and f64 to and from every integer type (truncation
 * toward zero, saturation, NaN -> 0) and bool <-> f64. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../common/check.h"
#include "cpu/ew.h"

static const cj_dtype INTS[] = {CJ_S8, CJ_S16, CJ_S32, CJ_S64, CJ_U8, CJ_U16, CJ_U32, CJ_U64};
enum { NV = 67 };

static int width(cj_dtype t) { return cj_dtype_bytes(t) * 8; }
static int is_signed(cj_dtype t) { return t == CJ_S8 || t == CJ_S16 || t == CJ_S32 || t == CJ_S64; }

/* the value of element i of an integer array as 64 bits (sign- or zero-extended) */
static uint64_t load(cj_dtype t, const void *p, int i) {
  uint64_t u = 0;
  int w = width(t);
  memcpy(&u, (const char *)p + (size_t)i * (size_t)(w / 8), (size_t)(w / 8));
  if (is_signed(t) && w < 64 && (u >> (w - 1) & 1)) u |= ~0ull << w;
  return u;
}

static void store(cj_dtype t, void *p, int i, uint64_t u) {
  memcpy((char *)p + (size_t)i * (size_t)(width(t) / 8), &u, (size_t)(width(t) / 8));
}

static uint64_t wrap(cj_dtype t, uint64_t u) { /* u as type t, extended back to 64 bits */
  int w = width(t);
  if (w == 64) return u;
  u &= (1ull << w) - 1;
  if (is_signed(t) && (u >> (w - 1) & 1)) u |= ~0ull << w;
  return u;
}

static void test_convert(void) {
  static const uint64_t edges[] = {0, 1, 2, 0x7f, 0x80, 0xff, 0x100, 0x7fff, 0x8000, 0xffff,
                                   0x7fffffff, 0x80000000, 0xffffffff, 0x100000000ull,
                                   0x7fffffffffffffffull, 0x8000000000000000ull, ~0ull, ~1ull,
                                   0xdeadbeefcafef00dull};
  uint64_t vals[NV];
  uint32_t s = 12345;
  for (int i = 0; i < NV; i++) {
    s = s * 1664525u + 1013904223u;
    uint64_t r = (uint64_t)s << 32 | (s ^ 0x9e3779b9u);
    vals[i] = i < (int)(sizeof edges / sizeof *edges) ? edges[i] : r >> (i % 64);
  }
  for (size_t a = 0; a < 8; a++) {
    for (size_t b = 0; b < 8; b++) {
      cj_dtype src = INTS[a], dst = INTS[b];
      unsigned char in[NV * 8], out[NV * 8 + 8];
      for (int i = 0; i < NV; i++) store(src, in, i, vals[i]);
      memset(out, 0xa5, sizeof out);
      cj_ew_fn fn = cj_cvt_lookup(src, dst);
      CHECK_MSG(fn != NULL, "convert %s -> %s has a kernel", cj_dtype_get(src)->mlir, cj_dtype_get(dst)->mlir);
      if (!fn) continue;
      cj_ew_aux aux = {.dt = dst, .src = src};
      fn(out, in, NULL, NULL, NV, &aux);
      int bad = -1;
      for (int i = 0; i < NV && bad < 0; i++)
        if (load(dst, out, i) != wrap(dst, load(src, in, i))) bad = i;
      CHECK_MSG(bad < 0, "convert %s -> %s: element %d", cj_dtype_get(src)->mlir, cj_dtype_get(dst)->mlir, bad);
      CHECK_MSG(out[NV * (width(dst) / 8)] == 0xa5, "convert %s -> %s writes past its end",
            cj_dtype_get(src)->mlir, cj_dtype_get(dst)->mlir);
    }
  }
}

static void test_shrl(void) {
  for (size_t a = 0; a < 8; a++) {
    cj_dtype t = INTS[a];
    int w = width(t);
    for (int bits = w; bits >= 4; bits = bits == w && w == 32 ? 4 : 0) {
      cj_ew_fn fn = cj_ew_lookup(CJ_EW_SHRL, t);
      CHECK_MSG(fn != NULL, "shift_right_logical on %s has a kernel", cj_dtype_get(t)->mlir);
      if (!fn) break;
      enum { N = 4 * 70 };
      unsigned char x[N * 8], y[N * 8], o[N * 8];
      uint64_t mask = bits >= 64 ? ~0ull : (1ull << bits) - 1;
      for (int i = 0; i < N; i++) {
        uint64_t v = i % 4 == 0 ? ~0ull : i % 4 == 1 ? 1ull << (bits - 1) : 0x5a5a5a5a5a5a5a5aull ^ (uint64_t)i;
        if (bits < w) v = wrap(t, (v & mask) | ((v >> (bits - 1) & 1) ? ~mask : 0)); /* i4 in s32 */
        store(t, x, i, v);
        store(t, y, i, (uint64_t)(i / 4) % (uint64_t)(bits + 4));
      }
      cj_ew_aux aux = {.bits = bits == w ? 0 : bits};
      fn(o, x, y, NULL, N, &aux);
      int bad = -1;
      for (int i = 0; i < N && bad < 0; i++) {
        uint64_t sh = load(t, y, i), v = load(t, x, i) & mask;
        uint64_t want = sh >= (uint64_t)bits ? 0 : wrap(t, v >> sh);
        if (load(t, o, i) != want) bad = i;
      }
      CHECK_MSG(bad < 0, "shift_right_logical %s (width %d): element %d", cj_dtype_get(t)->mlir, bits, bad);
    }
  }
}

/* the same random and boundary bit patterns test_convert uses */
static void patterns(uint64_t *vals) {
  static const uint64_t edges[] = {0, 1, 2, 0x7f, 0x80, 0xff, 0x100, 0x7fff, 0x8000, 0xffff,
                                   0x7fffffff, 0x80000000, 0xffffffff, 0x100000000ull,
                                   0x7fffffffffffffffull, 0x8000000000000000ull, ~0ull, ~1ull,
                                   0xdeadbeefcafef00dull};
  uint32_t s = 777;
  for (int i = 0; i < NV; i++) {
    s = s * 1664525u + 1013904223u;
    uint64_t r = (uint64_t)s << 32 | (s ^ 0x9e3779b9u);
    vals[i] = i < (int)(sizeof edges / sizeof *edges) ? edges[i] : r >> (i % 64);
  }
}

static void test_popcnt_clz(void) {
  uint64_t vals[NV];
  patterns(vals);
  for (size_t a = 0; a < 8; a++) {
    cj_dtype t = INTS[a];
    int w = width(t);
    for (int bits = w; bits >= 4; bits = bits == w && w == 32 ? 4 : 0) {
      for (int op = 0; op < 2; op++) {
        cj_ew_fn fn = cj_ew_lookup(op ? CJ_EW_CLZ : CJ_EW_POPCNT, t);
        CHECK_MSG(fn != NULL, "popcnt/clz on %s has a kernel", cj_dtype_get(t)->mlir);
        if (!fn) continue;
        unsigned char x[NV * 8], o[NV * 8];
        uint64_t mask = bits >= 64 ? ~0ull : (1ull << bits) - 1;
        for (int i = 0; i < NV; i++) store(t, x, i, wrap(t, vals[i]));
        cj_ew_aux aux = {.bits = bits == w ? 0 : bits};
        fn(o, x, NULL, NULL, NV, &aux);
        int bad = -1;
        for (int i = 0; i < NV && bad < 0; i++) {
          uint64_t v = load(t, x, i) & mask, want = 0;
          if (op == 0) {
            for (int b = 0; b < bits; b++) want += v >> b & 1;
          } else {
            while (want < (uint64_t)bits && !(v >> (bits - 1 - want) & 1)) want++;
          }
          if (load(t, o, i) != want) bad = i;
        }
        CHECK_MSG(bad < 0, "%s %s (width %d): element %d", op ? "clz" : "popcnt",
                  cj_dtype_get(t)->mlir, bits, bad);
      }
    }
  }
}

/* x / y and x % y on the model: truncating division of the values as 64-bit integers; x / 0 is
 * all ones, x % 0 is x, INT_MIN / -1 wraps to INT_MIN and INT_MIN % -1 is 0 */
static void divrem_model(cj_dtype t, uint64_t x, uint64_t y, uint64_t *q, uint64_t *r) {
  if (y == 0) {
    *q = wrap(t, ~0ull);
    *r = x;
  } else if (is_signed(t)) {
    int64_t a = (int64_t)x, b = (int64_t)y;
    if (b == -1) {
      *q = wrap(t, 0 - x);
      *r = 0;
    } else {
      *q = wrap(t, (uint64_t)(a / b));
      *r = wrap(t, (uint64_t)(a % b));
    }
  } else {
    *q = x / y;
    *r = x % y;
  }
}

static void test_divrem(void) {
  uint64_t vals[NV];
  patterns(vals);
  static const int64_t small[] = {1, -1, 2, -2, 3, 7, -7, 10, 1000, -1000, 65521, 2147483647};
  enum { NS = sizeof small / sizeof *small, NY = NV + NS };
  for (size_t a = 0; a < 8; a++) {
    cj_dtype t = INTS[a];
    int w = width(t);
    cj_ew_fn fdiv = cj_ew_lookup(CJ_EW_DIV, t), frem = cj_ew_lookup(CJ_EW_REM, t);
    CHECK_MSG(fdiv && frem, "divide/remainder on %s have kernels", cj_dtype_get(t)->mlir);
    if (!fdiv || !frem) continue;
    /* every x against every y: a row of NV dividends per divisor, an odd length (tails) */
    unsigned char x[NV * 8], y[NV * 8], q[NV * 8], r[NV * 8];
    for (int i = 0; i < NV; i++) store(t, x, i, wrap(t, vals[i]));
    int bad = -1;
    uint64_t bx = 0, by = 0;
    for (int j = 0; j < NY && bad < 0; j++) {
      uint64_t yv = wrap(t, j < NV ? vals[j] : (uint64_t)small[j - NV]);
      for (int i = 0; i < NV; i++) store(t, y, i, yv);
      fdiv(q, x, y, NULL, NV, NULL);
      frem(r, x, y, NULL, NV, NULL);
      for (int i = 0; i < NV && bad < 0; i++) {
        uint64_t wq, wr;
        divrem_model(t, load(t, x, i), yv, &wq, &wr);
        if (load(t, q, i) != wq || load(t, r, i) != wr) {
          bad = i;
          bx = load(t, x, i);
          by = yv;
        }
      }
    }
    CHECK_MSG(bad < 0, "divide/remainder %s (width %d): %llx by %llx", cj_dtype_get(t)->mlir, w,
              (unsigned long long)bx, (unsigned long long)by);
  }
}

/* the value a float d converts to in integer type t: truncated toward zero, saturated, NaN 0 */
static uint64_t f2int_model(cj_dtype t, double d) {
  int w = width(t);
  if (d != d) return 0;
  if (is_signed(t)) {
    double lo = -ldexp(1.0, w - 1), hi = ldexp(1.0, w - 1);
    if (d <= lo) return wrap(t, (uint64_t)1 << (w - 1));
    if (d >= hi) return wrap(t, ((uint64_t)1 << (w - 1)) - 1);
    return (uint64_t)(int64_t)d;
  }
  if (d <= 0) return 0;
  if (d >= ldexp(1.0, w)) return w == 64 ? ~0ull : (1ull << w) - 1;
  return (uint64_t)d;
}

static void test_convert_float_bool(void) {
  uint64_t vals[NV];
  patterns(vals);
  static const double fl[] = {0.0, -0.0, 0.5, -0.5, 0.99, -1.5, 126.7, 127.5, 128.0, -128.9,
                              -129.0, 255.9, 256.0, 32767.9, 32768.0, -32769.0, 65535.5,
                              65536.0, 2147483520.0, 2147483648.0, -2147483904.0, 4294967040.0,
                              4294967296.0, 9.2233720368547748e18, -9.3e18, 1.8446744073709552e19,
                              1e30, -1e30, INFINITY, -INFINITY, NAN, 3.0, -7.0};
  enum { NF = sizeof fl / sizeof *fl };
  for (size_t a = 0; a < 8; a++) {
    cj_dtype t = INTS[a];
    const char *tn = cj_dtype_get(t)->mlir;
    unsigned char x[NV * 8], o[NV * 8 + 8];
    double od[NV];
    float of[NV];
    for (int i = 0; i < NV; i++) store(t, x, i, wrap(t, vals[i]));
    /* int -> bool, f32, f64 */
    cj_ew_aux aux = {.src = t, .dt = CJ_PRED};
    cj_cvt_lookup(t, CJ_PRED)(o, x, NULL, NULL, NV, &aux);
    for (int i = 0; i < NV; i++)
      CHECK_MSG(o[i] == (load(t, x, i) != 0), "convert %s -> i1: element %d", tn, i);
    aux.dt = CJ_F32;
    cj_cvt_lookup(t, CJ_F32)(of, x, NULL, NULL, NV, &aux);
    aux.dt = CJ_F64;
    cj_cvt_lookup(t, CJ_F64)(od, x, NULL, NULL, NV, &aux);
    for (int i = 0; i < NV; i++) {
      uint64_t u = load(t, x, i);
      float wf = is_signed(t) ? (float)(int64_t)u : (float)u;
      double wd = is_signed(t) ? (double)(int64_t)u : (double)u;
      CHECK_MSG(of[i] == wf && od[i] == wd, "convert %s -> f32/f64: element %d", tn, i);
    }
    /* bool -> int */
    unsigned char p[NV];
    for (int i = 0; i < NV; i++) p[i] = (unsigned char)(i % 3 == 0 ? 0 : i % 3 == 1 ? 1 : 7);
    aux = (cj_ew_aux){.src = CJ_PRED, .dt = t};
    memset(o, 0xa5, sizeof o);
    cj_cvt_lookup(CJ_PRED, t)(o, p, NULL, NULL, NV, &aux);
    for (int i = 0; i < NV; i++)
      CHECK_MSG(load(t, o, i) == (p[i] != 0), "convert i1 -> %s: element %d", tn, i);
    CHECK_MSG(o[NV * (width(t) / 8)] == 0xa5, "convert i1 -> %s writes past its end", tn);
    /* f32, f64 -> int */
    for (int k = 0; k < 2; k++) {
      float ff[NF];
      for (int i = 0; i < NF; i++) ff[i] = (float)fl[i];
      aux = (cj_ew_aux){.src = k ? CJ_F64 : CJ_F32, .dt = t};
      cj_cvt_lookup(aux.src, t)(o, k ? (const void *)fl : (const void *)ff, NULL, NULL, NF, &aux);
      for (int i = 0; i < NF; i++) {
        uint64_t want = f2int_model(t, k ? fl[i] : (double)ff[i]);
        CHECK_MSG(load(t, o, i) == want, "convert %s -> %s: element %d (%g)", k ? "f64" : "f32",
                  tn, i, fl[i]);
      }
    }
  }
  /* bool <-> f64 */
  double d[NF];
  unsigned char b[NF];
  static const double fl2[] = {0.0, -0.0, 1.0, NAN, -INFINITY, 1e-320, 0.5};
  cj_ew_aux aux = {.src = CJ_F64, .dt = CJ_PRED};
  cj_cvt_lookup(CJ_F64, CJ_PRED)(b, fl2, NULL, NULL, 7, &aux);
  for (int i = 0; i < 7; i++) CHECK_MSG(b[i] == (fl2[i] != 0), "convert f64 -> i1: element %d", i);
  aux = (cj_ew_aux){.src = CJ_PRED, .dt = CJ_F64};
  cj_cvt_lookup(CJ_PRED, CJ_F64)(d, b, NULL, NULL, 7, &aux);
  for (int i = 0; i < 7; i++) CHECK_MSG(d[i] == (double)b[i], "convert i1 -> f64: element %d", i);
}

int main(void) {
  test_convert();
  test_shrl();
  test_popcnt_clz();
  test_divrem();
  test_convert_float_bool();
  return check_report("test_int_ops");
}
