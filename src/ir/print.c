/* cjrt: the printer: modules, ops, types and attributes in MLIR's textual syntax.
 *
 * Ops are printed in the pretty form upstream's printer (stablehlo-opt) uses, or in the generic
 * form for ops that have none (and for every op with CJ_PRINT_GENERIC). Values are named the way
 * MLIR names them (%0, %arg0, %cst, %c_1, %iterArg, per isolated region), dictionaries are sorted
 * by name, and float values are printed the way MLIR prints them: "%e"-like with 6 digits when that
 * reads back to the same value, else with enough digits, else as a hex bit pattern. The output
 * parses back (src/frontend/mlir_text.c) to the same module.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/decimal.h"
#include "base/grow.h"
#include "base/hash.h"
#include "ir/ir.h"

/* ======================================================================== output buffer */

typedef struct out {
  char *buf;
  size_t len, cap;
  bool oom;
} out;

static bool grow(out *o, size_t need) {
  if (o->oom) return false;
  if (!cj_grow(&o->buf, &o->cap, o->len + need + 1, 4096)) o->oom = true;
  return !o->oom;
}

static void put(out *o, const char *s, size_t n) {
  if (!grow(o, n)) return;
  memcpy(o->buf + o->len, s, n);
  o->len += n;
  o->buf[o->len] = 0;
}
static void puts_(out *o, const char *s) { put(o, s, strlen(s)); }
static void putc_(out *o, char c) {
  if (!grow(o, 1)) return;
  o->buf[o->len++] = c;
  o->buf[o->len] = 0;
}
static void putf(out *o, const char *fmt, ...) CJ_PRINTF(2, 3);
/* Formats straight into the buffer: into the room there is (at least 255 bytes), again after
 * growing when that was not enough. */
static void putf(out *o, const char *fmt, ...) {
  va_list ap;
  for (int pass = 0; pass < 2; pass++) {
    if (!grow(o, 255)) return;
    va_start(ap, fmt);
    int n = vsnprintf(o->buf + o->len, o->cap - o->len, fmt, ap);
    va_end(ap);
    if (n < 0) {
      o->buf[o->len] = 0;
      return;
    }
    if ((size_t)n < o->cap - o->len) {
      o->len += (size_t)n;
      return;
    }
    if (!grow(o, (size_t)n)) return;
  }
}
static void put_i64(out *o, int64_t v) {
  char tmp[24];
  int i = 23;
  tmp[i] = 0;
  uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
  do {
    tmp[--i] = (char)('0' + u % 10);
    u /= 10;
  } while (u);
  if (v < 0) tmp[--i] = '-';
  put(o, tmp + i, (size_t)(23 - i));
}
static void put_u64(out *o, uint64_t u) {
  char tmp[24];
  int i = 23;
  do {
    tmp[--i] = (char)('0' + u % 10);
    u /= 10;
  } while (u);
  put(o, tmp + i, (size_t)(23 - i));
}
static void indent(out *o, int n) {
  if (!grow(o, (size_t)n)) return;
  memset(o->buf + o->len, ' ', (size_t)n);
  o->len += (size_t)n;
  o->buf[o->len] = 0;
}

/* ======================================================================== floats
 *
 * MLIR prints a float element with llvm::APFloat::toString: first with 6 significant digits in
 * "%e" style, used if it reads back to the same value; else with the type's natural number of
 * digits (2 + precision*59/196), trailing zeros dropped; if that has no '.', or the value is not
 * finite, as the hex bit pattern. The digit generation below follows toString's algorithm exactly
 * (truncation to a working precision, then round-half-up on one digit), so that the text matches
 * upstream's byte for byte. */

typedef struct big {
  uint32_t w[80]; /* enough for 2^2560 */
  int n;
} big;

static void big_set(big *b, uint64_t v) {
  b->n = 0;
  while (v) {
    b->w[b->n++] = (uint32_t)v;
    v >>= 32;
  }
}
static bool big_mul(big *b, uint32_t m) {
  uint64_t carry = 0;
  for (int i = 0; i < b->n; i++) {
    uint64_t x = (uint64_t)b->w[i] * m + carry;
    b->w[i] = (uint32_t)x;
    carry = x >> 32;
  }
  if (carry) {
    if (b->n == 80) return false;
    b->w[b->n++] = (uint32_t)carry;
  }
  return true;
}
static uint32_t big_div(big *b, uint32_t d) {
  uint64_t r = 0;
  for (int i = b->n - 1; i >= 0; i--) {
    uint64_t x = (r << 32) | b->w[i];
    b->w[i] = (uint32_t)(x / d);
    r = x % d;
  }
  while (b->n && !b->w[b->n - 1]) b->n--;
  return (uint32_t)r;
}
static bool big_shl(big *b, int s) {
  int words = s / 32, bits = s % 32;
  if (b->n + words + 1 > 80) return false;
  if (!b->n) return true;
  for (int i = b->n - 1; i >= 0; i--) b->w[i + words] = b->w[i];
  for (int i = 0; i < words; i++) b->w[i] = 0;
  b->n += words;
  if (bits) {
    uint32_t carry = 0;
    for (int i = words; i < b->n; i++) {
      uint32_t x = b->w[i];
      b->w[i] = (x << bits) | carry;
      carry = x >> (32 - bits);
    }
    if (carry) b->w[b->n++] = carry;
  }
  return true;
}
static unsigned big_bits(const big *b) {
  if (!b->n) return 0;
  return (unsigned)(32 * (b->n - 1) + (32 - __builtin_clz(b->w[b->n - 1])));
}

/* The APFloat view of a finite nonzero value: value = sig * 2^exp2 with the semantics' precision */
typedef struct fparts {
  bool neg, zero, inf, nan;
  uint64_t sig;
  int exp2; /* exponent of the least significant bit */
  int precision;
} fparts;

static fparts float_parts(cj_dtype dt, uint64_t bits) {
  fparts f;
  memset(&f, 0, sizeof f);
  const cj_dtype_info *in = cj_dtype_get(dt);
  int eb = in->ebits, mb = in->mbits, bias = in->bias;
  if (dt == CJ_TF32) {
    bits >>= 13;
    eb = 8;
    mb = 10;
  }
  f.precision = mb + 1;
  double v = cj_float_decode(dt, bits << (dt == CJ_TF32 ? 13 : 0));
  if (isnan(v)) {
    f.nan = true;
    return f;
  }
  if (isinf(v)) {
    f.inf = true;
    f.neg = v < 0;
    return f;
  }
  if (in->fflags == CJ_FF_E8M0) {
    f.sig = 1;
    f.exp2 = (int)(bits & 0xff) - bias;
    return f;
  }
  f.neg = (bits >> (eb + mb)) & 1;
  uint64_t e = (bits >> mb) & ((1ull << eb) - 1), m = bits & ((1ull << mb) - 1);
  if (e == 0) {
    f.sig = m;
    f.exp2 = 1 - bias - mb;
  } else {
    f.sig = m | (1ull << mb);
    f.exp2 = (int)e - bias - mb;
  }
  if (f.sig == 0) f.zero = true;
  if (in->fflags == CJ_FF_FNUZ && f.zero) f.neg = false;
  return f;
}

/* llvm::APFloat::toString(Str, FormatPrecision, FormatMaxPadding, TruncateZero) for finite
 * values; returns false if the number cannot be formatted (never for our types). */
static bool apfloat_to_string(const fparts *f, unsigned prec, unsigned maxpad, bool truncz,
                              char *outs, size_t cap) {
  char tmp[1200];
  size_t k = 0;
#define EMIT(c)                            \
  do {                                     \
    if (k + 1 >= sizeof tmp) return false; \
    tmp[k++] = (c);                        \
  } while (0)
  if (f->zero) {
    if (f->neg) EMIT('-');
    if (!maxpad) {
      if (truncz) {
        const char *z = "0.0E+0";
        while (*z) EMIT(*z++);
      } else {
        EMIT('0');
        EMIT('.');
        EMIT('0');
        for (unsigned i = 1; i < prec; i++) EMIT('0');
        EMIT('e');
        EMIT('+');
        EMIT('0');
        EMIT('0');
      }
    } else {
      EMIT('0');
    }
    tmp[k] = 0;
    if (k >= cap) return false;
    memcpy(outs, tmp, k + 1);
    return true;
  }
  if (f->neg) EMIT('-');
  int exp = f->exp2;
  if (!prec) prec = 2 + (unsigned)f->precision * 59 / 196;
  uint64_t sig = f->sig;
  int tz = __builtin_ctzll(sig);
  exp += tz;
  sig >>= tz;
  big b;
  big_set(&b, sig);
  if (exp > 0) {
    if (!big_shl(&b, exp)) return false;
    exp = 0;
  } else if (exp < 0) {
    int texp = -exp;
    while (texp >= 13) {
      if (!big_mul(&b, 1220703125u)) return false; /* 5^13 */
      texp -= 13;
    }
    uint32_t p5 = 1;
    while (texp--) p5 *= 5;
    if (!big_mul(&b, p5)) return false;
  }
  /* AdjustToPrecision on the integer: drop digits by truncation */
  unsigned bits = big_bits(&b);
  unsigned required = (prec * 196 + 58) / 59;
  if (bits > required) {
    unsigned tens = (bits - required) * 59 / 196;
    exp += (int)tens;
    while (tens >= 9) {
      big_div(&b, 1000000000u);
      tens -= 9;
    }
    uint32_t d = 1;
    while (tens--) d *= 10;
    if (d > 1) big_div(&b, d);
  }
  /* digits, least significant first, dropping trailing zeros */
  char dig[1100];
  unsigned nd = 0;
  bool trail = true;
  while (b.n) {
    uint32_t r = big_div(&b, 10);
    if (trail && r == 0) {
      exp++;
      continue;
    }
    trail = false;
    if (nd >= sizeof dig) return false;
    dig[nd++] = (char)('0' + r);
  }
  if (!nd) return false;
  /* AdjustToPrecision on the digits: round half up */
  if (nd > prec) {
    unsigned first = nd - prec;
    if (dig[first - 1] < '5') {
      while (first < nd && dig[first] == '0') first++;
      exp += (int)first;
      memmove(dig, dig + first, nd - first);
      nd -= first;
    } else {
      unsigned i = first;
      for (; i != nd; i++) {
        if (dig[i] == '9') {
          first++;
        } else {
          dig[i]++;
          break;
        }
      }
      if (first == nd) {
        exp += (int)first;
        dig[0] = '1';
        nd = 1;
      } else {
        exp += (int)first;
        memmove(dig, dig + first, nd - first);
        nd -= first;
      }
    }
  }
  bool sci;
  if (!maxpad) {
    sci = true;
  } else if (exp >= 0) {
    sci = (unsigned)exp > maxpad || nd + (unsigned)exp > prec;
  } else {
    int msd = exp + (int)nd - 1;
    sci = msd >= 0 ? false : (unsigned)(-msd) > maxpad;
  }
  if (sci) {
    exp += (int)nd - 1;
    EMIT(dig[nd - 1]);
    EMIT('.');
    if (nd == 1 && truncz) {
      EMIT('0');
    } else {
      for (unsigned i = 1; i != nd; i++) EMIT(dig[nd - 1 - i]);
    }
    if (!truncz && prec > nd - 1)
      for (unsigned i = 0; i < prec - nd + 1; i++) EMIT('0');
    EMIT(truncz ? 'E' : 'e');
    EMIT(exp >= 0 ? '+' : '-');
    if (exp < 0) exp = -exp;
    char eb[8];
    int ne = 0;
    do {
      eb[ne++] = (char)('0' + exp % 10);
      exp /= 10;
    } while (exp);
    if (!truncz && ne < 2) eb[ne++] = '0';
    while (ne) EMIT(eb[--ne]);
  } else if (exp >= 0) {
    for (unsigned i = 0; i != nd; i++) EMIT(dig[nd - 1 - i]);
    for (int i = 0; i != exp; i++) EMIT('0');
  } else {
    int whole = exp + (int)nd;
    unsigned i = 0;
    if (whole > 0) {
      for (; i != (unsigned)whole; i++) EMIT(dig[nd - i - 1]);
      EMIT('.');
    } else {
      unsigned nz = 1 + (unsigned)(-whole);
      EMIT('0');
      EMIT('.');
      for (unsigned z = 1; z != nz; z++) EMIT('0');
    }
    for (; i != nd; i++) EMIT(dig[nd - i - 1]);
  }
#undef EMIT
  tmp[k] = 0;
  if (k >= cap) return false;
  memcpy(outs, tmp, k + 1);
  return true;
}

/* Prints the float of dtype dt with bit pattern `bits` as MLIR does. */
static void put_float(out *o, cj_dtype dt, uint64_t bits) {
  fparts f = float_parts(dt, bits);
  char s[1200];
  if (!f.inf && !f.nan) {
    if (apfloat_to_string(&f, 6, 0, false, s, sizeof s) && cj_float_from_decimal(dt, s) == bits) {
      puts_(o, s);
      return;
    }
    if (apfloat_to_string(&f, 0, 3, true, s, sizeof s) && strchr(s, '.')) {
      puts_(o, s);
      return;
    }
  }
  putf(o, "0x%llX", (unsigned long long)bits);
}

static void put_double(out *o, double v) {
  uint64_t b;
  memcpy(&b, &v, 8);
  put_float(o, CJ_F64, b);
}

/* ======================================================================== strings, names */

static bool is_bare_id(const char *s, size_t n) {
  if (!n) return false;
  unsigned char c = (unsigned char)s[0];
  if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_')) return false;
  for (size_t i = 1; i < n; i++) {
    c = (unsigned char)s[i];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
          c == '$' || c == '.'))
      return false;
  }
  return true;
}

static void put_escaped(out *o, const char *s, size_t n) {
  static const char hex[] = "0123456789ABCDEF";
  putc_(o, '"');
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == '\\') {
      put(o, "\\\\", 2);
    } else if (c >= 32 && c < 127 && c != '"') {
      putc_(o, (char)c);
    } else {
      char e[3] = {'\\', hex[c >> 4], hex[c & 15]};
      put(o, e, 3);
    }
  }
  putc_(o, '"');
}

static void put_symbol(out *o, const char *s) {
  putc_(o, '@');
  size_t n = strlen(s);
  if (is_bare_id(s, n))
    put(o, s, n);
  else
    put_escaped(o, s, n);
}

static void put_key(out *o, const char *s) {
  size_t n = strlen(s);
  if (is_bare_id(s, n))
    put(o, s, n);
  else
    put_escaped(o, s, n);
}

/* ======================================================================== types */

static void put_type(out *o, const cj_type *t);
static void put_attr(out *o, const cj_attr *a);

static void put_dim(out *o, int64_t d) {
  if (d == CJ_DYN)
    putc_(o, '?');
  else
    put_i64(o, d);
}

static void put_quant(out *o, const cj_quant *q) {
  puts_(o, "!quant.uniform<");
  const cj_dtype_info *si = cj_dtype_get(q->storage);
  bool is_signed = si->kind == CJ_DK_SINT;
  putc_(o, is_signed ? 'i' : 'u');
  put_i64(o, si->bits);
  int bits = si->bits;
  int64_t dmin = is_signed ? -(int64_t)(1ull << (bits - 1)) : 0;
  int64_t dmax = is_signed ? (int64_t)((1ull << (bits - 1)) - 1)
                           : (bits >= 64 ? INT64_MAX : (int64_t)((1ull << bits) - 1));
  if (q->storage_min != dmin || q->storage_max != dmax) {
    putc_(o, '<');
    put_i64(o, q->storage_min);
    putc_(o, ':');
    put_i64(o, q->storage_max);
    putc_(o, '>');
  }
  putc_(o, ':');
  puts_(o, cj_dtype_get(q->expressed)->mlir ? cj_dtype_get(q->expressed)->mlir : "?");
  if (q->axis >= 0) {
    putc_(o, ':');
    put_i64(o, q->axis);
    puts_(o, ", {");
    for (int i = 0; i < q->nscales; i++) {
      if (i) putc_(o, ',');
      put_double(o, q->scales[i]);
      if (q->zero_points[i]) {
        putc_(o, ':');
        put_i64(o, q->zero_points[i]);
      }
    }
    puts_(o, "}>");
    return;
  }
  puts_(o, ", ");
  if (q->nscales > 0) {
    put_double(o, q->scales[0]);
    if (q->zero_points[0]) {
      putc_(o, ':');
      put_i64(o, q->zero_points[0]);
    }
  }
  putc_(o, '>');
}

static void put_type_list(out *o, const cj_type *const *ts, int n) {
  for (int i = 0; i < n; i++) {
    if (i) puts_(o, ", ");
    put_type(o, ts[i]);
  }
}

/* the types of op's operands (of its results), separated by commas */
static void put_operand_types(out *o, const cj_op *op) {
  for (uint32_t i = 0; i < op->nopnds; i++) {
    if (i) puts_(o, ", ");
    put_type(o, op->operands[i] ? op->operands[i]->type : NULL);
  }
}

static void put_result_type_list(out *o, const cj_op *op) {
  for (uint32_t i = 0; i < op->nresults; i++) {
    if (i) puts_(o, ", ");
    put_type(o, op->results[i].type);
  }
}

/* the results of a function type: a single non-function type bare, else in parentheses */
static void put_result_types(out *o, const cj_type *const *ts, int n) {
  bool wrap = n != 1 || (ts[0] && ts[0]->kind == CJ_TYPE_FUNCTION);
  if (wrap) putc_(o, '(');
  put_type_list(o, ts, n);
  if (wrap) putc_(o, ')');
}

static void put_type(out *o, const cj_type *t) {
  if (!t) {
    puts_(o, "<<NULL TYPE>>");
    return;
  }
  switch (t->kind) {
    case CJ_TYPE_ELEM: {
      const char *n = cj_dtype_get(t->dtype)->mlir;
      if (t->dtype == CJ_S1) n = "si1";
      puts_(o, n ? n : "<<unknown dtype>>");
      return;
    }
    case CJ_TYPE_QUANT:
      put_quant(o, t->quant);
      return;
    case CJ_TYPE_TENSOR:
      puts_(o, "tensor<");
      for (int i = 0; i < t->rank; i++) {
        put_dim(o, t->dims[i]);
        putc_(o, 'x');
      }
      put_type(o, t->elem);
      if (t->bounds) {
        puts_(o, ", #stablehlo.bounds<");
        for (int i = 0; i < t->rank; i++) {
          if (i) puts_(o, ", ");
          put_dim(o, t->bounds[i]);
        }
        putc_(o, '>');
      } else if (t->encoding) {
        puts_(o, ", ");
        put_attr(o, t->encoding);
      }
      putc_(o, '>');
      return;
    case CJ_TYPE_UNRANKED:
      puts_(o, "tensor<*x");
      put_type(o, t->elem);
      putc_(o, '>');
      return;
    case CJ_TYPE_TOKEN:
      puts_(o, "!stablehlo.token");
      return;
    case CJ_TYPE_TUPLE:
      puts_(o, "tuple<");
      put_type_list(o, t->members, t->rank);
      putc_(o, '>');
      return;
    case CJ_TYPE_FUNCTION:
      putc_(o, '(');
      put_type_list(o, t->members, t->rank);
      puts_(o, ") -> ");
      put_result_types(o, t->members + t->rank, t->nresults);
      return;
    case CJ_TYPE_NONE:
      puts_(o, "none");
      return;
    case CJ_TYPE_OPAQUE:
      puts_(o, t->text ? t->text : "<<opaque>>");
      return;
  }
}

/* ======================================================================== attributes */

static void put_dense_elem(out *o, cj_dtype dt, const unsigned char *p) {
  const cj_dtype_info *in = cj_dtype_get(dt);
  uint64_t v = 0;
  switch (in->kind) {
    case CJ_DK_BOOL:
      puts_(o, *p ? "true" : "false");
      return;
    case CJ_DK_SINT:
      put_i64(o, cj_elem_get_i64(dt, p, 0));
      return;
    case CJ_DK_UINT:
      put_u64(o, (uint64_t)cj_elem_get_i64(dt, p, 0));
      return;
    case CJ_DK_FLOAT:
      memcpy(&v, p, (size_t)in->bytes);
      if (in->bits < 64 && dt != CJ_TF32) v &= (1ull << in->bits) - 1;
      put_float(o, dt, v);
      return;
    case CJ_DK_COMPLEX: {
      cj_dtype c = cj_dtype_component(dt);
      int cb = cj_dtype_bytes(c);
      uint64_t re = 0, im = 0;
      memcpy(&re, p, (size_t)cb);
      memcpy(&im, p + cb, (size_t)cb);
      putc_(o, '(');
      put_float(o, c, re);
      putc_(o, ',');
      put_float(o, c, im);
      putc_(o, ')');
      return;
    }
    default:
      puts_(o, "?");
      return;
  }
}

/* dims-nested list of elements [[..], [..]] */
static void put_dense_list(out *o, const cj_type *t, const unsigned char *data, int eb) {
  int rank = t->rank;
  int64_t idx[64] = {0};
  if (rank > 64) return;
  int64_t total = t->num_elements;
  for (int d = 0; d < rank; d++) putc_(o, '[');
  if (total == 0) {
    for (int d = 0; d < rank; d++) putc_(o, ']');
    return;
  }
  for (int64_t i = 0; i < total && !o->oom; i++) {
    put_dense_elem(o, t->dtype, data + (size_t)i * (size_t)eb);
    /* advance the index; close and reopen brackets */
    int d = rank - 1;
    int closed = 0;
    while (d >= 0) {
      idx[d]++;
      if (idx[d] < t->dims[d]) break;
      idx[d] = 0;
      closed++;
      d--;
    }
    for (int k = 0; k < closed; k++) putc_(o, ']');
    if (d < 0) break;
    puts_(o, ", ");
    for (int k = 0; k < closed; k++) putc_(o, '[');
  }
}

static void put_dense(out *o, const cj_attr *a) {
  const cj_type *t = a->dense.type;
  puts_(o, "dense<");
  if (!t || t->kind != CJ_TYPE_TENSOR) {
    puts_(o, ">");
    return;
  }
  int eb = cj_dtype_bytes(t->dtype);
  int64_t n = t->num_elements;
  const unsigned char *d = a->dense.data;
  bool splat = a->dense.splat || n == 1;
  if (!splat && n > 1 && eb > 0 && a->dense.nbytes == (size_t)n * (size_t)eb) {
    splat = true; /* all elements equal: MLIR keeps (and prints) a splat */
    for (int64_t i = 1; i < n; i++)
      if (memcmp(d, d + (size_t)i * (size_t)eb, (size_t)eb) != 0) {
        splat = false;
        break;
      }
  }
  if (n == 0 && !a->dense.splat) {
    /* empty */
  } else if (splat) {
    if (a->dense.nbytes >= (size_t)eb && eb > 0) put_dense_elem(o, t->dtype, d);
  } else if (n > 100) {
    static const char hex[] = "0123456789ABCDEF";
    puts_(o, "\"0x");
    size_t nb = a->dense.nbytes;
    if (grow(o, nb * 2)) {
      char *w = o->buf + o->len;
      for (size_t i = 0; i < nb; i++) {
        w[2 * i] = hex[d[i] >> 4];
        w[2 * i + 1] = hex[d[i] & 15];
      }
      o->len += nb * 2;
      o->buf[o->len] = 0;
    }
    putc_(o, '"');
  } else if (eb > 0 && a->dense.nbytes == (size_t)n * (size_t)eb) {
    put_dense_list(o, t, d, eb);
  }
  puts_(o, "> : ");
  put_type(o, t);
}

static void put_loc_inner(out *o, const cj_attr *a, int depth) {
  if (!a || a->kind != CJ_ATTR_LOC || depth > 64) {
    puts_(o, "unknown");
    return;
  }
  switch (a->loc.lk) {
    case CJ_LOC_UNKNOWN:
      puts_(o, "unknown");
      return;
    case CJ_LOC_FILE:
      put_escaped(o, a->loc.name ? a->loc.name : "", a->loc.name ? strlen(a->loc.name) : 0);
      putc_(o, ':');
      put_i64(o, a->loc.line);
      putc_(o, ':');
      put_i64(o, a->loc.col);
      return;
    case CJ_LOC_NAME:
      put_escaped(o, a->loc.name ? a->loc.name : "", a->loc.name ? strlen(a->loc.name) : 0);
      if (a->loc.n > 0) {
        putc_(o, '(');
        put_loc_inner(o, a->loc.children[0], depth + 1);
        putc_(o, ')');
      }
      return;
    case CJ_LOC_CALLSITE:
      puts_(o, "callsite(");
      put_loc_inner(o, a->loc.n > 0 ? a->loc.children[0] : NULL, depth + 1);
      puts_(o, " at ");
      put_loc_inner(o, a->loc.n > 1 ? a->loc.children[1] : NULL, depth + 1);
      putc_(o, ')');
      return;
    case CJ_LOC_FUSED:
      puts_(o, "fused");
      if (a->loc.metadata) {
        putc_(o, '<');
        put_attr(o, a->loc.metadata);
        putc_(o, '>');
      }
      putc_(o, '[');
      for (int i = 0; i < a->loc.n; i++) {
        if (i) puts_(o, ", ");
        put_loc_inner(o, a->loc.children[i], depth + 1);
      }
      putc_(o, ']');
      return;
  }
}

static void put_loc(out *o, const cj_attr *a) {
  puts_(o, "loc(");
  put_loc_inner(o, a, 0);
  putc_(o, ')');
}

static void put_i64_list(out *o, const cj_attr *a) {
  /* [1, 2, ?] from any integer-list spelling */
  int64_t small[32], *v = small, n = 0;
  putc_(o, '[');
  if (a && cj_attr_get_i64s(a, small, 32, &n)) {
    if (n > 32) {
      v = malloc(sizeof(int64_t) * (size_t)n);
      if (!v) {
        o->oom = true;
        return;
      }
      cj_attr_get_i64s(a, v, n, &n);
    }
    for (int64_t i = 0; i < n; i++) {
      if (i) puts_(o, ", ");
      put_dim(o, v[i]);
    }
    if (v != small) free(v);
  }
  putc_(o, ']');
}

static void put_enum_value(out *o, const cj_attr *a) {
  const char *c = cj_enum_case_name(a->en.ek, a->en.v);
  if (c)
    puts_(o, c);
  else
    put_i64(o, a->en.v);
}

static void put_enum(out *o, const cj_attr *a) {
  putc_(o, '#');
  puts_(o, cj_enum_dialect(a->en.ek) ? cj_enum_dialect(a->en.ek) : "?");
  if (a->en.ek == CJ_EK_RESULT_ACCURACY_MODE) {
    putc_(o, '.');
    puts_(o, cj_enum_keyword(a->en.ek));
    putc_(o, '<');
    put_enum_value(o, a);
    putc_(o, '>');
    return;
  }
  putc_(o, '<');
  puts_(o, cj_enum_keyword(a->en.ek) ? cj_enum_keyword(a->en.ek) : "?");
  putc_(o, ' ');
  put_enum_value(o, a);
  putc_(o, '>');
}

static bool field_i64(const cj_attr *f, int64_t *v) {
  *v = 0;
  return f ? cj_attr_get_i64(f, v) : false;
}

static bool list_empty(const cj_attr *f) {
  int64_t tmp[1], n = 0;
  return !f || !cj_attr_get_i64s(f, tmp, 1, &n) || n == 0;
}

/* conv dims in the compact form [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]; false if invalid */
static bool conv_group(out *o, const cj_attr *a, int fa, int fb, int fs, char ca, char cb) {
  const cj_attr *const *F = a->st.fields;
  int64_t x, y, sp[64], n = 0;
  field_i64(F[fa], &x);
  field_i64(F[fb], &y);
  if (F[fs] && !cj_attr_get_i64s(F[fs], sp, 64, &n)) return false;
  if (n > 62) return false;
  int64_t total = n + 2;
  int64_t dims[64];
  for (int64_t i = 0; i < total; i++) dims[i] = INT64_MIN;
  if (x < 0 || x >= total || y < 0 || y >= total || x == y) return false;
  dims[x] = -1;
  dims[y] = -2;
  for (int64_t i = 0; i < n; i++) {
    if (sp[i] < 0 || sp[i] >= total || dims[sp[i]] != INT64_MIN) return false;
    dims[sp[i]] = i;
  }
  putc_(o, '[');
  for (int64_t i = 0; i < total; i++) {
    if (i) puts_(o, ", ");
    if (dims[i] == -1)
      putc_(o, ca);
    else if (dims[i] == -2)
      putc_(o, cb);
    else
      put_i64(o, dims[i]);
  }
  putc_(o, ']');
  return true;
}

static bool put_conv_dims(out *o, const cj_attr *a) {
  size_t mark = o->len;
  bool ok = conv_group(o, a, CJ_SF_CONV_input_batch_dimension, CJ_SF_CONV_input_feature_dimension,
                       CJ_SF_CONV_input_spatial_dimensions, 'b', 'f');
  if (ok) putc_(o, 'x');
  ok = ok && conv_group(o, a, CJ_SF_CONV_kernel_input_feature_dimension,
                        CJ_SF_CONV_kernel_output_feature_dimension,
                        CJ_SF_CONV_kernel_spatial_dimensions, 'i', 'o');
  if (ok) puts_(o, "->");
  ok =
      ok && conv_group(o, a, CJ_SF_CONV_output_batch_dimension, CJ_SF_CONV_output_feature_dimension,
                       CJ_SF_CONV_output_spatial_dimensions, 'b', 'f');
  if (!ok && !o->oom) {
    o->len = mark;
    if (o->buf) o->buf[mark] = 0;
  }
  return ok;
}

/* the raw `field = value, ...` form of any struct (all fields present are printed) */
static void put_struct_fields(out *o, const cj_attr *a, bool skip_defaults) {
  int nf = cj_struct_num_fields(a->st.sk);
  bool first = true;
  for (int i = 0; i < nf; i++) {
    const cj_attr *f = a->st.fields[i];
    cj_field_kind fk = cj_struct_field_kind(a->st.sk, i);
    if (skip_defaults) {
      int64_t v;
      if (!f) continue;
      if (fk == CJ_FK_I64ARR && list_empty(f)) continue;
      if (fk == CJ_FK_I64 && field_i64(f, &v) && v == 0) continue;
    }
    if (!first) puts_(o, ", ");
    first = false;
    puts_(o, cj_struct_field_name(a->st.sk, i));
    puts_(o, " = ");
    int64_t v = 0;
    double d = 0;
    bool b = false;
    switch (fk) {
      case CJ_FK_I64:
        field_i64(f, &v);
        put_i64(o, v);
        break;
      case CJ_FK_I64ARR:
        put_i64_list(o, f);
        break;
      case CJ_FK_BOOL:
        if (f) cj_attr_get_bool(f, &b);
        puts_(o, b ? "true" : "false");
        break;
      case CJ_FK_F64:
        if (f) cj_attr_get_f64(f, &d);
        put_double(o, d);
        break;
      case CJ_FK_TYPE:
        if (f && f->kind == CJ_ATTR_TYPE)
          put_type(o, f->type);
        else
          puts_(o, "none");
        break;
      case CJ_FK_ENUM_RESULT_ACCURACY_MODE:
        if (f && f->kind == CJ_ATTR_ENUM)
          put_enum(o, f);
        else
          puts_(o, "#stablehlo.result_accuracy_mode<DEFAULT>");
        break;
    }
  }
}

static void put_struct(out *o, const cj_attr *a) {
  cj_struct_kind sk = a->st.sk;
  const cj_attr *const *F = a->st.fields;
  putc_(o, '#');
  puts_(o, cj_struct_dialect(sk));
  if (sk == CJ_SK_TYPE_EXTENSIONS) {
    puts_(o, ".bounds<");
    const cj_attr *b = F[CJ_SF_TYPE_EXTENSIONS_bounds];
    int64_t v[64], n = 0;
    if (b && cj_attr_get_i64s(b, v, 64, &n))
      for (int64_t i = 0; i < n && i < 64; i++) {
        if (i) puts_(o, ", ");
        put_dim(o, v[i]);
      }
    putc_(o, '>');
    return;
  }
  putc_(o, '.');
  puts_(o, cj_struct_mnemonic(sk));
  putc_(o, '<');
  switch (sk) {
    case CJ_SK_GATHER:
    case CJ_SK_SCATTER:
    case CJ_SK_DOT:
    case CJ_SK_RAGGED_DOT:
      put_struct_fields(o, a, true);
      break;
    case CJ_SK_CONV:
      if (!put_conv_dims(o, a)) {
        puts_(o, "raw ");
        put_struct_fields(o, a, false);
      }
      break;
    case CJ_SK_RESULT_ACCURACY: {
      double atol = 0, rtol = 0;
      int64_t ulps = 0;
      if (F[CJ_SF_RESULT_ACCURACY_atol]) cj_attr_get_f64(F[CJ_SF_RESULT_ACCURACY_atol], &atol);
      if (F[CJ_SF_RESULT_ACCURACY_rtol]) cj_attr_get_f64(F[CJ_SF_RESULT_ACCURACY_rtol], &rtol);
      field_i64(F[CJ_SF_RESULT_ACCURACY_ulps], &ulps);
      if (atol != 0) {
        puts_(o, "atol = ");
        put_double(o, atol);
        puts_(o, ", ");
      }
      if (rtol != 0) {
        puts_(o, "rtol = ");
        put_double(o, rtol);
        puts_(o, ", ");
      }
      if (ulps != 0) {
        puts_(o, "ulps = ");
        put_i64(o, ulps);
        puts_(o, ", ");
      }
      puts_(o, "mode = ");
      const cj_attr *m = F[CJ_SF_RESULT_ACCURACY_mode];
      if (m && m->kind == CJ_ATTR_ENUM)
        put_enum(o, m);
      else
        puts_(o, "#stablehlo.result_accuracy_mode<DEFAULT>");
      break;
    }
    default:
      put_struct_fields(o, a, false);
      break;
  }
  putc_(o, '>');
}

static void put_dict_entries(out *o, const cj_named_attr *items, int n) {
  for (int i = 0; i < n; i++) {
    if (i) puts_(o, ", ");
    put_key(o, items[i].name);
    if (items[i].value && items[i].value->kind == CJ_ATTR_UNIT) continue;
    puts_(o, " = ");
    put_attr(o, items[i].value);
  }
}

static void put_attr(out *o, const cj_attr *a) {
  if (!a) {
    puts_(o, "<<NULL ATTRIBUTE>>");
    return;
  }
  switch (a->kind) {
    case CJ_ATTR_UNIT:
      puts_(o, "unit");
      return;
    case CJ_ATTR_BOOL:
      puts_(o, a->b ? "true" : "false");
      return;
    case CJ_ATTR_INT: {
      const cj_type *t = a->i.type;
      cj_dtype dt = t && t->kind == CJ_TYPE_ELEM ? t->dtype : CJ_S64;
      if (dt == CJ_PRED) {
        puts_(o, a->i.v ? "true" : "false");
        return;
      }
      if (cj_dtype_kindof(dt) == CJ_DK_UINT)
        put_u64(o, (uint64_t)a->i.v);
      else
        put_i64(o, a->i.v);
      puts_(o, " : ");
      if (t)
        put_type(o, t);
      else
        puts_(o, "i64");
      return;
    }
    case CJ_ATTR_FLOAT: {
      const cj_type *t = a->f.type;
      cj_dtype dt = t && t->kind == CJ_TYPE_ELEM && cj_dtype_is_float(t->dtype) ? t->dtype : CJ_F64;
      put_float(o, dt, cj_float_encode(dt, a->f.v));
      puts_(o, " : ");
      if (t)
        put_type(o, t);
      else
        puts_(o, "f64");
      return;
    }
    case CJ_ATTR_STRING:
      put_escaped(o, a->str.s, a->str.len);
      return;
    case CJ_ATTR_TYPE:
      put_type(o, a->type);
      return;
    case CJ_ATTR_SYMREF:
      put_symbol(o, a->sym.root);
      for (int i = 0; i < a->sym.nnested; i++) {
        puts_(o, "::");
        put_symbol(o, a->sym.nested[i]);
      }
      return;
    case CJ_ATTR_ARRAY:
      putc_(o, '[');
      for (int i = 0; i < a->arr.n; i++) {
        if (i) puts_(o, ", ");
        put_attr(o, a->arr.items[i]);
      }
      putc_(o, ']');
      return;
    case CJ_ATTR_DICT:
      putc_(o, '{');
      put_dict_entries(o, a->dict.items, a->dict.n);
      putc_(o, '}');
      return;
    case CJ_ATTR_DENSE_ARRAY: {
      cj_dtype dt = a->darr.dtype;
      puts_(o, "array<");
      puts_(o, cj_dtype_get(dt)->mlir ? cj_dtype_get(dt)->mlir : "?");
      int eb = cj_dtype_bytes(dt);
      for (int64_t i = 0; i < a->darr.n; i++) {
        puts_(o, i ? ", " : ": ");
        put_dense_elem(o, dt, (const unsigned char *)a->darr.data + (size_t)i * (size_t)eb);
      }
      putc_(o, '>');
      return;
    }
    case CJ_ATTR_DENSE:
      put_dense(o, a);
      return;
    case CJ_ATTR_ENUM:
      put_enum(o, a);
      return;
    case CJ_ATTR_STRUCT:
      put_struct(o, a);
      return;
    case CJ_ATTR_LOC:
      put_loc(o, a);
      return;
    case CJ_ATTR_OPAQUE:
      put(o, a->opaque.text, a->opaque.len);
      return;
  }
}

/* ======================================================================== SSA names
 *
 * As MLIR's SSANameState: each isolated op's regions number their values from 0; block arguments
 * of entry blocks are %argN, other values %N; stablehlo.constant results are %cst / %c and
 * stablehlo.while arguments %iterArg (pretty printing only), made unique with _N suffixes; nested
 * regions continue the counters of their parent region after all of its values. */

typedef struct nslot {
  const void *key;
  const char *str; /* custom name, or NULL: numbered */
  uint32_t num;
} nslot;

typedef struct used {
  const char *s;
  uint32_t h, next; /* next: index+1 in the bucket chain */
} used;

typedef struct names {
  nslot *slots;
  uint32_t cap, count;
  used *u;
  uint32_t nu, capu;
  uint32_t *ub; /* bucket heads: index+1 */
  uint32_t nub;
  char **strs;
  uint32_t nstrs, capstrs;
  bool oom, generic;
} names;

typedef struct ctr {
  uint32_t value, arg, conflict;
} ctr;

static uint32_t str_hash(const char *s) {
  uint32_t h = 2166136261u;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 16777619u;
  return h;
}

static nslot *ns_find(const names *ns, const void *key) {
  if (!ns->cap) return NULL;
  uint32_t j = cj_hash_ptr(key) & (ns->cap - 1);
  while (ns->slots[j].key) {
    if (ns->slots[j].key == key) return &ns->slots[j];
    j = (j + 1) & (ns->cap - 1);
  }
  return NULL;
}

static nslot *ns_insert(names *ns, const void *key) {
  if ((ns->count + 1) * 2 > ns->cap) {
    uint32_t nc = ns->cap ? ns->cap * 2 : 256;
    nslot *s = calloc(nc, sizeof *s);
    if (!s) {
      ns->oom = true;
      return NULL;
    }
    for (uint32_t i = 0; i < ns->cap; i++) {
      if (!ns->slots[i].key) continue;
      uint32_t j = cj_hash_ptr(ns->slots[i].key) & (nc - 1);
      while (s[j].key) j = (j + 1) & (nc - 1);
      s[j] = ns->slots[i];
    }
    free(ns->slots);
    ns->slots = s;
    ns->cap = nc;
  }
  uint32_t j = cj_hash_ptr(key) & (ns->cap - 1);
  while (ns->slots[j].key && ns->slots[j].key != key) j = (j + 1) & (ns->cap - 1);
  if (!ns->slots[j].key) ns->count++;
  ns->slots[j].key = key;
  return &ns->slots[j];
}

static bool used_has(const names *ns, const char *s) {
  if (!ns->nub) return false;
  uint32_t h = str_hash(s);
  for (uint32_t i = ns->ub[h & (ns->nub - 1)]; i; i = ns->u[i - 1].next)
    if (ns->u[i - 1].h == h && strcmp(ns->u[i - 1].s, s) == 0) return true;
  return false;
}

static void used_rebucket(names *ns) {
  memset(ns->ub, 0, sizeof(uint32_t) * ns->nub);
  for (uint32_t i = 0; i < ns->nu; i++) {
    uint32_t j = ns->u[i].h & (ns->nub - 1);
    ns->u[i].next = ns->ub[j];
    ns->ub[j] = i + 1;
  }
}

static void used_add(names *ns, const char *s) {
  if (ns->nu == ns->capu) {
    uint32_t nc = ns->capu ? ns->capu * 2 : 64;
    used *nu = realloc(ns->u, sizeof *nu * nc);
    if (!nu) {
      ns->oom = true;
      return;
    }
    ns->u = nu;
    ns->capu = nc;
  }
  if (ns->nu + 1 > ns->nub) {
    uint32_t nb = ns->nub ? ns->nub * 2 : 64;
    uint32_t *b = realloc(ns->ub, sizeof *b * nb);
    if (!b) {
      ns->oom = true;
      return;
    }
    ns->ub = b;
    ns->nub = nb;
    used_rebucket(ns);
  }
  uint32_t h = str_hash(s);
  ns->u[ns->nu].s = s;
  ns->u[ns->nu].h = h;
  ns->u[ns->nu].next = ns->ub[h & (ns->nub - 1)];
  ns->ub[h & (ns->nub - 1)] = ns->nu + 1;
  ns->nu++;
}

static void used_pop(names *ns, uint32_t mark) {
  while (ns->nu > mark) {
    ns->nu--;
    uint32_t j = ns->u[ns->nu].h & (ns->nub - 1);
    ns->ub[j] = ns->u[ns->nu].next; /* LIFO: the head of its chain */
  }
}

static const char *ns_keep(names *ns, const char *s) {
  if (ns->nstrs == ns->capstrs) {
    uint32_t nc = ns->capstrs ? ns->capstrs * 2 : 64;
    char **n = realloc(ns->strs, sizeof *n * nc);
    if (!n) {
      ns->oom = true;
      return NULL;
    }
    ns->strs = n;
    ns->capstrs = nc;
  }
  char *d = strdup(s);
  if (!d) {
    ns->oom = true;
    return NULL;
  }
  ns->strs[ns->nstrs++] = d;
  return d;
}

static void ns_set_name(names *ns, ctr *c, const void *key, const char *name) {
  char buf[96];
  const char *use = name;
  if (used_has(ns, name)) {
    for (;;) {
      snprintf(buf, sizeof buf, "%s_%u", name, c->conflict++);
      if (!used_has(ns, buf)) break;
    }
    use = buf;
  }
  const char *kept = ns_keep(ns, use);
  if (!kept) return;
  used_add(ns, kept);
  nslot *s = ns_insert(ns, key);
  if (s) s->str = kept;
}

static void ns_set_num(names *ns, ctr *c, const void *key) {
  nslot *s = ns_insert(ns, key);
  if (!s) return;
  s->str = NULL;
  s->num = c->value++;
}

static void number_region(names *ns, const cj_region *r, ctr c);

static uint32_t scan_ninputs(const cj_op *op) {
  const cj_attr *seg = cj_op_attr(op, "operandSegmentSizes");
  int64_t v[2], n = 0;
  if (seg && cj_attr_get_i64s(seg, v, 2, &n) && n == 2 && v[0] >= 0) return (uint32_t)v[0];
  return op->nopnds / 2;
}

static void number_region(names *ns, const cj_region *r, ctr c) {
  uint32_t mark = ns->nu;
  const cj_op *parent = r->op;
  if (!ns->generic && parent && r->first) {
    const cj_block *eb = r->first;
    if (parent->kind == CJ_OP_WHILE) {
      for (uint32_t i = 0; i < eb->nargs; i++) ns_set_name(ns, &c, &eb->args[i], "iterArg");
    } else if (parent->kind == CJ_OP_CHLO_SCAN) {
      uint32_t nin = scan_ninputs(parent);
      for (uint32_t i = 0; i < eb->nargs; i++)
        ns_set_name(ns, &c, &eb->args[i], i < nin ? "input" : "carry");
    }
  }
  for (const cj_block *b = r->first; b; b = b->next) {
    bool entry = b == r->first;
    for (uint32_t i = 0; i < b->nargs; i++) {
      if (ns_find(ns, &b->args[i])) continue;
      if (entry) {
        char nm[32];
        snprintf(nm, sizeof nm, "arg%u", c.arg++);
        ns_set_name(ns, &c, &b->args[i], nm);
      } else {
        ns_set_num(ns, &c, &b->args[i]);
      }
    }
    for (const cj_op *op = b->first; op; op = op->next) {
      if (!op->nresults) continue;
      if (!ns->generic && op->kind == CJ_OP_CONSTANT && op->results[0].type) {
        const cj_type *t = op->results[0].type;
        cj_dtype dt = t->elem && t->elem->kind == CJ_TYPE_ELEM ? t->elem->dtype : CJ_INVALID;
        bool isint = cj_dtype_is_int(dt) || dt == CJ_PRED;
        ns_set_name(ns, &c, op, isint ? "c" : "cst");
      } else {
        ns_set_num(ns, &c, op);
      }
    }
  }
  for (const cj_block *b = r->first; b; b = b->next)
    for (const cj_op *op = b->first; op; op = op->next)
      for (uint32_t k = 0; k < op->nregions; k++) number_region(ns, &op->regions[k], c);
  used_pop(ns, mark);
}

static void names_free(names *ns) {
  free(ns->slots);
  free(ns->u);
  free(ns->ub);
  for (uint32_t i = 0; i < ns->nstrs; i++) free(ns->strs[i]);
  free(ns->strs);
}

/* ======================================================================== ops */

typedef struct pr {
  out *o;
  names *ns;
  unsigned flags;
} pr;

static void print_op(pr *P, const cj_op *op, int ind);

static void put_value(pr *P, const cj_value *v) {
  out *o = P->o;
  if (!v) {
    puts_(o, "%<<NULL VALUE>>");
    return;
  }
  const nslot *s = ns_find(P->ns, v->def ? (const void *)v->def : (const void *)v);
  if (!s) {
    puts_(o, "<<UNKNOWN SSA VALUE>>");
    return;
  }
  putc_(o, '%');
  if (s->str)
    puts_(o, s->str);
  else
    put_u64(o, s->num);
  if (v->def && v->def->nresults > 1) {
    putc_(o, '#');
    put_u64(o, v->index);
  }
}

static void put_operands(pr *P, const cj_op *op, uint32_t from, uint32_t to) {
  for (uint32_t i = from; i < to; i++) {
    if (i > from) puts_(P->o, ", ");
    put_value(P, op->operands[i]);
  }
}

static void put_block_label(pr *P, const cj_block *b) {
  uint32_t id = 0;
  if (b->region)
    for (const cj_block *x = b->region->first; x && x != b; x = x->next) id++;
  putf(P->o, "^bb%u", id);
}

static int cmp_named(const void *x, const void *y) {
  return strcmp(((const cj_named_attr *)x)->name, ((const cj_named_attr *)y)->name);
}

/* the op's attributes sorted by name (malloc'ed; NULL if none) */
static cj_named_attr *sorted_attrs(const cj_op *op, bool *oom) {
  if (!op->nattrs) return NULL;
  cj_named_attr *s = malloc(sizeof *s * op->nattrs);
  if (!s) {
    *oom = true;
    return NULL;
  }
  memcpy(s, op->attrs, sizeof *s * op->nattrs);
  qsort(s, op->nattrs, sizeof *s, cmp_named);
  return s;
}

static bool attr_is_default(const cj_op *op, const char *name, const cj_attr *v) {
  bool b;
  int64_t i;
  double d;
  if (!v) return true;
  if (!strcmp(name, "result_accuracy")) {
    if (v->kind != CJ_ATTR_STRUCT || v->st.sk != CJ_SK_RESULT_ACCURACY) return false;
    const cj_attr *const *F = v->st.fields;
    double a = 0, r = 0;
    int64_t u = 0;
    int32_t mode = 0;
    if (F[CJ_SF_RESULT_ACCURACY_atol]) cj_attr_get_f64(F[CJ_SF_RESULT_ACCURACY_atol], &a);
    if (F[CJ_SF_RESULT_ACCURACY_rtol]) cj_attr_get_f64(F[CJ_SF_RESULT_ACCURACY_rtol], &r);
    if (F[CJ_SF_RESULT_ACCURACY_ulps]) cj_attr_get_i64(F[CJ_SF_RESULT_ACCURACY_ulps], &u);
    if (F[CJ_SF_RESULT_ACCURACY_mode])
      cj_attr_get_enum(F[CJ_SF_RESULT_ACCURACY_mode], CJ_EK_RESULT_ACCURACY_MODE, &mode);
    return a == 0 && r == 0 && u == 0 && mode == CJ_RESULT_ACCURACY_MODE_DEFAULT;
  }
  if (!strcmp(name, "has_side_effect") || !strcmp(name, "is_host_transfer") ||
      !strcmp(name, "lower") || !strcmp(name, "indices_are_sorted") ||
      !strcmp(name, "unique_indices") || !strcmp(name, "is_reverse"))
    return v->kind == CJ_ATTR_BOOL && cj_attr_get_bool(v, &b) && !b;
  if (!strcmp(name, "is_stable")) {
    bool def = op->kind == CJ_OP_CHLO_TOP_K;
    return v->kind == CJ_ATTR_BOOL && cj_attr_get_bool(v, &b) && b == def;
  }
  if (!strcmp(name, "version") || !strcmp(name, "min_ulp_difference") || !strcmp(name, "iteration"))
    return v->kind == CJ_ATTR_INT && cj_attr_get_i64(v, &i) && i == 0;
  if (!strcmp(name, "api_version"))
    return v->kind == CJ_ATTR_INT && cj_attr_get_i64(v, &i) && i == 1;
  if (op->kind == CJ_OP_SORT && !strcmp(name, "dimension"))
    return v->kind == CJ_ATTR_INT && cj_attr_get_i64(v, &i) && i == -1;
  if (!strcmp(name, "composite_attributes")) return v->kind == CJ_ATTR_DICT && v->dict.n == 0;
  if (!strcmp(name, "called_computations") || !strcmp(name, "output_operand_aliases"))
    return v->kind == CJ_ATTR_ARRAY && v->arr.n == 0;
  if (!strcmp(name, "infeed_config") || !strcmp(name, "outfeed_config"))
    return v->kind == CJ_ATTR_STRING && v->str.len == 0;
  if (!strcmp(name, "tolerance") &&
      (op->kind == CJ_OP_CHECK_EXPECT_ALMOST_EQ || op->kind == CJ_OP_CHECK_EXPECT_ALMOST_EQ_CONST))
    return v->kind == CJ_ATTR_FLOAT && cj_attr_get_f64(v, &d) && d == 1e-4;
  return false;
}

static bool in_list(const char *name, const char *const *list) {
  for (; list && *list; list++)
    if (!strcmp(*list, name)) return true;
  return false;
}

/* " {a = 1, b}" with the attributes not in `elide` (and not at their default value) */
static void put_attr_dict(pr *P, const cj_op *op, const char *const *elide, bool keyword) {
  bool oom = false;
  cj_named_attr *s = sorted_attrs(op, &oom);
  if (oom) P->o->oom = true;
  bool any = false;
  for (uint32_t i = 0; i < op->nattrs && s; i++) {
    if (in_list(s[i].name, elide) || attr_is_default(op, s[i].name, s[i].value)) continue;
    if (!any)
      puts_(P->o, keyword ? " attributes {" : " {");
    else
      puts_(P->o, ", ");
    any = true;
    put_key(P->o, s[i].name);
    if (s[i].value && s[i].value->kind == CJ_ATTR_UNIT) continue;
    puts_(P->o, " = ");
    put_attr(P->o, s[i].value);
  }
  if (any) putc_(P->o, '}');
  free(s);
}

static void put_functional(pr *P, const cj_op *op) {
  out *o = P->o;
  putc_(o, '(');
  put_operand_types(o, op);
  puts_(o, ") -> ");
  bool wrap =
      op->nresults != 1 || (op->results[0].type && op->results[0].type->kind == CJ_TYPE_FUNCTION);
  if (wrap) putc_(o, '(');
  put_result_type_list(o, op);
  if (wrap) putc_(o, ')');
}

/* custom<SameOperandsAndResultType> */
static void put_same_type(pr *P, const cj_op *op) {
  const cj_type *r = op->nresults ? op->results[0].type : NULL;
  bool same = op->nresults == 1;
  for (uint32_t i = 0; i < op->nopnds && same; i++)
    same = op->operands[i] && op->operands[i]->type == r;
  if (same && r && r->kind != CJ_TYPE_FUNCTION)
    put_type(P->o, r);
  else
    put_functional(P, op);
}

/* Is block b the target of a branch in its region? (Then its label must be printed.) */
static bool is_branch_target(const cj_region *r, const cj_block *b) {
  for (const cj_block *x = r->first; x; x = x->next)
    for (const cj_op *op = x->first; op; op = op->next)
      for (uint32_t i = 0; i < op->nsuccessors; i++)
        if (op->successors[i] == b) return true;
  return false;
}

static void print_region(pr *P, const cj_region *r, int ind, bool entry_args, bool empty_block) {
  out *o = P->o;
  puts_(o, "{\n");
  for (const cj_block *b = r->first; b; b = b->next) {
    bool header = b != r->first || (entry_args && b->nargs) || (empty_block && !b->first) ||
                  is_branch_target(r, b);
    if (header) {
      indent(o, ind);
      put_block_label(P, b);
      if (b->nargs) {
        putc_(o, '(');
        for (uint32_t i = 0; i < b->nargs; i++) {
          if (i) puts_(o, ", ");
          put_value(P, &b->args[i]);
          puts_(o, ": ");
          put_type(o, b->args[i].type);
          if ((P->flags & CJ_PRINT_LOCS) && b->args[i].loc) {
            putc_(o, ' ');
            put_loc(o, b->args[i].loc);
          }
        }
        putc_(o, ')');
      }
      puts_(o, ":\n");
    }
    for (const cj_op *op = b->first; op && !o->oom; op = op->next) {
      print_op(P, op, ind + 2);
      putc_(o, '\n');
    }
  }
  indent(o, ind);
  putc_(o, '}');
}

static bool is_inherent(const cj_op *op, const char *name) {
  return op->kind != CJ_OP_UNKNOWN && cj_op_attr_spec(op->kind, name) != NULL;
}

static void print_generic(pr *P, const cj_op *op, int ind, bool with_name) {
  out *o = P->o;
  if (with_name) put_escaped(o, op->name, strlen(op->name));
  putc_(o, '(');
  put_operands(P, op, 0, op->nopnds);
  putc_(o, ')');
  if (op->nsuccessors) {
    putc_(o, '[');
    for (uint32_t i = 0; i < op->nsuccessors; i++) {
      if (i) puts_(o, ", ");
      put_block_label(P, op->successors[i]);
    }
    putc_(o, ']');
  }
  bool oom = false;
  cj_named_attr *s = sorted_attrs(op, &oom);
  if (oom) o->oom = true;
  bool any = false;
  for (uint32_t i = 0; i < op->nattrs && s; i++) {
    if (!is_inherent(op, s[i].name)) continue;
    puts_(o, any ? ", " : " <{");
    any = true;
    put_key(o, s[i].name);
    if (s[i].value && s[i].value->kind == CJ_ATTR_UNIT) continue;
    puts_(o, " = ");
    put_attr(o, s[i].value);
  }
  if (any) puts_(o, "}>");
  if (op->nregions) {
    puts_(o, " (");
    for (uint32_t i = 0; i < op->nregions; i++) {
      if (i) puts_(o, ", ");
      print_region(P, &op->regions[i], ind, true, true);
    }
    putc_(o, ')');
  }
  any = false;
  for (uint32_t i = 0; i < op->nattrs && s; i++) {
    if (is_inherent(op, s[i].name)) continue;
    puts_(o, any ? ", " : " {");
    any = true;
    put_key(o, s[i].name);
    if (s[i].value && s[i].value->kind == CJ_ATTR_UNIT) continue;
    puts_(o, " = ");
    put_attr(o, s[i].value);
  }
  if (any) putc_(o, '}');
  free(s);
  puts_(o, " : ");
  put_functional(P, op);
}

/* ---- pretty forms ---- */

static const cj_attr *A(const cj_op *op, const char *name) { return cj_op_attr(op, name); }

static bool int_attr(const cj_op *op, const char *name, int64_t *v) {
  const cj_attr *a = A(op, name);
  return a && a->kind == CJ_ATTR_INT && cj_attr_get_i64(a, v);
}

static bool list_attr(const cj_op *op, const char *name) {
  const cj_attr *a = A(op, name);
  int64_t t[1], n;
  return a && (a->kind == CJ_ATTR_DENSE_ARRAY || a->kind == CJ_ATTR_DENSE) &&
         cj_attr_get_i64s(a, t, 1, &n) && (a->kind != CJ_ATTR_DENSE || a->dense.type->rank == 1);
}

static bool enum_attr(const cj_op *op, const char *name, cj_enum_kind ek) {
  const cj_attr *a = A(op, name);
  return a && a->kind == CJ_ATTR_ENUM && a->en.ek == ek;
}

static void put_kw_list(pr *P, const char *kw, const cj_attr *a) {
  puts_(P->o, kw);
  puts_(P->o, " = ");
  put_i64_list(P->o, a);
}

static bool types_equal_all(const cj_op *op) {
  for (uint32_t i = 0; i < op->nopnds; i++)
    if (!op->operands[i] || !op->operands[i]->type) return false;
  return true;
}

static const cj_type *real_type_of(const cj_type *t, const cj_type *const *pool, uint32_t n) {
  /* the component (real) type of complex tensor t, found among `pool` (types are interned, so a
   * matching shape and element type is the same pointer) */
  if (!t || (t->kind != CJ_TYPE_TENSOR && t->kind != CJ_TYPE_UNRANKED)) return NULL;
  cj_dtype c = cj_dtype_component(t->dtype);
  for (uint32_t i = 0; i < n; i++) {
    const cj_type *x = pool[i];
    if (!x || x->kind != t->kind || x->dtype != c) continue;
    if (t->kind == CJ_TYPE_UNRANKED) return x;
    if (x->rank != t->rank || memcmp(x->dims, t->dims, sizeof(int64_t) * (size_t)t->rank)) continue;
    if ((x->bounds == NULL) != (t->bounds == NULL)) continue;
    if (x->bounds && memcmp(x->bounds, t->bounds, sizeof(int64_t) * (size_t)t->rank)) continue;
    if (x->encoding != t->encoding) continue;
    return x;
  }
  return NULL;
}

static const cj_type *sdy_strip(const cj_attr *a, const char *prefix, const char **s, size_t *n) {
  /* the text of an opaque sdy attribute without its `#sdy.xxx` prefix */
  size_t pl = strlen(prefix);
  if (!a || a->kind != CJ_ATTR_OPAQUE || a->opaque.len < pl ||
      memcmp(a->opaque.text, prefix, pl) != 0)
    return NULL;
  *s = a->opaque.text + pl;
  *n = a->opaque.len - pl;
  return (const cj_type *)1;
}

/* reduce's compact form: the region is `^bb0(%a, %b): %r = stablehlo.X %a, %b; return %r` */
static const cj_op *reduce_compact_inner(const cj_op *op) {
  if (op->nregions != 1 || op->nopnds < 2) return NULL;
  const cj_region *r = &op->regions[0];
  if (r->nblocks != 1 || !r->first) return NULL;
  const cj_block *b = r->first;
  const cj_op *in = b->first;
  if (!in || !in->next || in->next->next) return NULL;
  const cj_op *ret = in->next;
  const cj_op_info *ii = cj_op_info_get(in->kind);
  if (in->kind == CJ_OP_UNKNOWN || strncmp(in->name, "stablehlo.", 10) != 0) return NULL;
  if (!(ii->flags & CJ_OPF_COMMUTATIVE) || in->nopnds != 2 || in->nresults != 1 ||
      in->nregions != 0 || in->nattrs != 0)
    return NULL;
  const cj_type *t = in->results[0].type;
  for (uint32_t i = 0; i < 2; i++)
    if (!in->operands[i] || in->operands[i]->type != t) return NULL;
  const cj_type *t0 = op->operands[0] ? op->operands[0]->type : NULL;
  if (!t || !t0 || t->kind != CJ_TYPE_TENSOR || t->rank != 0 || !t0->elem || t->elem != t0->elem ||
      t->bounds || t->encoding)
    return NULL;
  if (b->nargs != 2 || in->operands[0] != &b->args[0] || in->operands[1] != &b->args[1])
    return NULL;
  size_t rl = strlen(ret->name);
  if (rl < 6 || strcmp(ret->name + rl - 6, "return") != 0 || ret->nopnds != 1 ||
      ret->operands[0] != &in->results[0] || ret->nattrs)
    return NULL;
  return in;
}

static bool print_func(pr *P, const cj_op *op, int ind) {
  out *o = P->o;
  const cj_attr *name = A(op, "sym_name"), *ft = A(op, "function_type");
  const cj_attr *vis = A(op, "sym_visibility"), *aa = A(op, "arg_attrs"), *ra = A(op, "res_attrs");
  if (!name || name->kind != CJ_ATTR_STRING || !ft || ft->kind != CJ_ATTR_TYPE || !ft->type ||
      ft->type->kind != CJ_TYPE_FUNCTION || op->nregions != 1 || op->nopnds || op->nresults)
    return false;
  if (strlen(name->str.s) != name->str.len) return false;
  const cj_type *f = ft->type;
  if (vis && vis->kind != CJ_ATTR_STRING) return false;
  if (vis && !(!strcmp(vis->str.s, "public") || !strcmp(vis->str.s, "private") ||
               !strcmp(vis->str.s, "nested")))
    return false;
  if (aa && (aa->kind != CJ_ATTR_ARRAY || aa->arr.n != f->rank)) return false;
  if (ra && (ra->kind != CJ_ATTR_ARRAY || ra->arr.n != f->nresults)) return false;
  for (int i = 0; aa && i < aa->arr.n; i++)
    if (!aa->arr.items[i] || aa->arr.items[i]->kind != CJ_ATTR_DICT) return false;
  for (int i = 0; ra && i < ra->arr.n; i++)
    if (!ra->arr.items[i] || ra->arr.items[i]->kind != CJ_ATTR_DICT) return false;
  const cj_region *r = &op->regions[0];
  const cj_block *eb = r->first;
  if (r->nblocks > 1) return false; /* kept simple: one block */
  if (eb) {
    if (eb->nargs != (uint32_t)f->rank) return false;
    for (uint32_t i = 0; i < eb->nargs; i++)
      if (eb->args[i].type != f->members[i]) return false;
  }
  puts_(o, "func.func ");
  if (vis) {
    puts_(o, vis->str.s);
    putc_(o, ' ');
  }
  put_symbol(o, name->str.s);
  putc_(o, '(');
  for (int i = 0; i < f->rank; i++) {
    if (i) puts_(o, ", ");
    if (eb) {
      put_value(P, &eb->args[i]);
      puts_(o, ": ");
    }
    put_type(o, f->members[i]);
    if (aa && aa->arr.items[i]->dict.n) {
      puts_(o, " {");
      put_dict_entries(o, aa->arr.items[i]->dict.items, aa->arr.items[i]->dict.n);
      putc_(o, '}');
    }
    if (eb && (P->flags & CJ_PRINT_LOCS) && eb->args[i].loc) {
      putc_(o, ' ');
      put_loc(o, eb->args[i].loc);
    }
  }
  putc_(o, ')');
  if (f->nresults) {
    bool any_ra = false;
    for (int i = 0; ra && i < ra->arr.n; i++) any_ra |= ra->arr.items[i]->dict.n > 0;
    const cj_type *const *rs = f->members + f->rank;
    bool wrap = f->nresults > 1 || rs[0]->kind == CJ_TYPE_FUNCTION || any_ra;
    puts_(o, " -> ");
    if (wrap) putc_(o, '(');
    for (int i = 0; i < f->nresults; i++) {
      if (i) puts_(o, ", ");
      put_type(o, rs[i]);
      if (ra && ra->arr.items[i]->dict.n) {
        puts_(o, " {");
        put_dict_entries(o, ra->arr.items[i]->dict.items, ra->arr.items[i]->dict.n);
        putc_(o, '}');
      }
    }
    if (wrap) putc_(o, ')');
  }
  static const char *const el[] = {"sym_name",  "function_type", "sym_visibility",
                                   "arg_attrs", "res_attrs",     NULL};
  put_attr_dict(P, op, el, true);
  if (eb) {
    putc_(o, ' ');
    print_region(P, r, ind, false, false);
  }
  return true;
}

/* ---- the pretty form of each syntax form (syntax.def), dispatched by print_pretty ---- */

/* The pieces most pretty forms share: `name %a, %b` (the first n operands), and
 * ` {attrs} : (T, T) -> T` or ` {attrs} : T` after them (el: the attributes the form wrote). */
static void put_head(pr *P, const cj_op *op, const char *nm, uint32_t n) {
  puts_(P->o, nm);
  putc_(P->o, ' ');
  put_operands(P, op, 0, n);
}

static bool put_tail_functional(pr *P, const cj_op *op, const char *const *el) {
  put_attr_dict(P, op, el, false);
  puts_(P->o, " : ");
  put_functional(P, op);
  return true;
}

static bool put_tail_same(pr *P, const cj_op *op, const char *const *el) {
  put_attr_dict(P, op, el, false);
  puts_(P->o, " : ");
  put_same_type(P, op);
  return true;
}

static bool put_tail_type(pr *P, const cj_op *op, const char *const *el, const cj_type *t) {
  put_attr_dict(P, op, el, false);
  puts_(P->o, " : ");
  put_type(P->o, t);
  return true;
}

typedef bool (*pretty_fn)(pr *P, const cj_op *op, const char *nm, int ind);

/* FUNC */
static bool pp_func(pr *P, const cj_op *op, const char *nm, int ind) {
  return print_func(P, op, ind);
}

/* EW, VARIADIC_SAME */
static bool pp_ew(pr *P, const cj_op *op, const char *nm, int ind) {
  out *o = P->o;
  if (op->nresults != 1) return false;
  puts_(o, nm);
  if (op->nopnds) putc_(o, ' ');
  put_operands(P, op, 0, op->nopnds);
  return put_tail_same(P, op, NULL);
}

/* COMPLEX */
static bool pp_complex(pr *P, const cj_op *op, const char *nm, int ind) {
  out *o = P->o;
  if (op->nopnds != 2 || op->nresults != 1) return false;
  put_head(P, op, nm, 2);
  put_attr_dict(P, op, NULL, false);
  puts_(o, " : ");
  const cj_type *pool[2] = {op->operands[0]->type, op->operands[1]->type};
  const cj_type *re = real_type_of(op->results[0].type, pool, 2);
  if (re && pool[0] == re && pool[1] == re)
    put_type(o, op->results[0].type);
  else
    put_functional(P, op);
  return true;
}

/* SELECT */
static bool pp_select(pr *P, const cj_op *op, const char *nm, int ind) {
  out *o = P->o;
  put_head(P, op, nm, 3);
  put_attr_dict(P, op, NULL, false);
  puts_(o, " : ");
  if (op->operands[1]->type == op->results[0].type &&
      op->operands[2]->type == op->results[0].type) {
    put_type(o, op->operands[0]->type);
    puts_(o, ", ");
    put_type(o, op->results[0].type);
  } else {
    put_functional(P, op);
  }
  return true;
}

/* FUNCTIONAL, CHLO_BINARY, CHLO_BROADCAST_SELECT */
static bool pp_functional(pr *P, const cj_op *op, const char *nm, int ind) {
  out *o = P->o;
  puts_(o, nm);
  if (op->nopnds) putc_(o, ' ');
  put_operands(P, op, 0, op->nopnds);
  return put_tail_functional(P, op, NULL);
}

/* CONSTANT, CHLO_CONSTANT */
static bool pp_constant(pr *P, const cj_op *op, const char *nm, int ind) {
  out *o = P->o;
  const cj_op_info *info = cj_op_info_get(op->kind);
  const cj_attr *v = A(op, "value");
  if (!v) return false;
  if (v->kind != CJ_ATTR_DENSE || v->dense.type != op->results[0].type) {
    if (info->syntax == CJ_SYN_CHLO_CONSTANT) return false;
    puts_(o, nm);
    print_generic(P, op, ind, false);
    return true;
  }
  static const char *const el[] = {"value", NULL};
  puts_(o, nm);
  put_attr_dict(P, op, el, false);
  putc_(o, ' ');
  put_attr(o, v);
  return true;
}

/* IOTA */
static bool pp_iota(pr *P, const cj_op *op, const char *nm, int ind) {
  out *o = P->o;
  int64_t d;
  if (!int_attr(op, "iota_dimension", &d)) return false;
  static const char *const el[] = {"iota_dimension", NULL};
  puts_(o, nm);
  puts_(o, " dim = ");
  put_i64(o, d);
  return put_tail_type(P, op, el, op->results[0].type);
}

/* DYNAMIC_IOTA */
static bool pp_dynamic_iota(pr *P, const cj_op *op, const char *nm, int ind) {
  out *o = P->o;
  int64_t d;
  if (!int_attr(op, "iota_dimension", &d)) return false;
  static const char *const el[] = {"iota_dimension", NULL};
  put_head(P, op, nm, 1);
  puts_(o, ", dim = ");
  put_i64(o, d);
  return put_tail_functional(P, op, el);
}

/* NULLARY */
static bool pp_nullary(pr *P, const cj_op *op, const char *nm, int ind) {
  out *o = P->o;
  puts_(o, nm);
  put_attr_dict(P, op, NULL, false);
  puts_(o, " : ");
  put_result_type_list(o, op);
  return true;
}

/* WHILE */
static bool pp_while(pr *P, const cj_op *op, const char *nm, int ind) {
  out *o = P->o;
  if (op->nresults != op->nopnds) return false;
  for (uint32_t k = 0; k < 2; k++) {
    const cj_region *r = &op->regions[k];
    if (r->nblocks != 1 || r->first->nargs != op->nopnds) return false;
    for (uint32_t i = 0; i < op->nopnds; i++)
      if (r->first->args[i].type != op->operands[i]->type) return false;
  }
  for (uint32_t i = 0; i < op->nopnds; i++)
    if (op->results[i].type != op->operands[i]->type) return false;
  const cj_block *body = op->regions[1].first;
  puts_(o, nm);
  putc_(o, '(');
  for (uint32_t i = 0; i < op->nopnds; i++) {
    if (i) puts_(o, ", ");
    put_value(P, &body->args[i]);
    puts_(o, " = ");
    put_value(P, op->operands[i]);
  }
  putc_(o, ')');
  if (op->nopnds) {
    puts_(o, " : ");
    put_operand_types(o, op);
  }
  put_attr_dict(P, op, NULL, true);
  putc_(o, '\n');
  indent(o, ind);
  puts_(o, "cond ");
  print_region(P, &op->regions[0], ind, false, false);
  puts_(o, " do ");
  print_region(P, &op->regions[1], ind, false, false);
  return true;
}

/* REDUCE */
static bool pp_reduce(pr *P, const cj_op *op, const char *nm, int ind) {
  out *o = P->o;
  if (op->nopnds % 2 || !op->nopnds || !list_attr(op, "dimensions")) return false;
  uint32_t np = op->nopnds / 2;
  const cj_region *r = &op->regions[0];
  const cj_op *inner = reduce_compact_inner(op);
  if (!inner && (r->nblocks != 1 || r->first->nargs != op->nopnds)) return false;
  puts_(o, nm);
  for (uint32_t i = 0; i < np; i++) {
    if (i) puts_(o, ", ");
    putc_(o, '(');
    put_value(P, op->operands[i]);
    puts_(o, " init: ");
    put_value(P, op->operands[i + np]);
    putc_(o, ')');
  }
  if (inner) {
    puts_(o, " applies ");
    puts_(o, inner->name);
  }
  puts_(o, " across ");
  put_kw_list(P, "dimensions", A(op, "dimensions"));
  static const char *const el[] = {"dimensions", NULL};
  put_attr_dict(P, op, el, false);
  puts_(o, " : ");
  put_functional(P, op);
  if (!inner) {
    putc_(o, '\n');
    indent(o, ind);
    puts_(o, " reducer");
    const cj_block *b = r->first;
    for (uint32_t i = 0; i < np; i++) {
      putc_(o, '(');
      put_value(P, &b->args[i]);
      puts_(o, ": ");
      put_type(o, b->args[i].type);
      puts_(o, ", ");
      put_value(P, &b->args[i + np]);
      puts_(o, ": ");
      put_type(o, b->args[i + np].type);
      puts_(o, ") ");
    }
    putc_(o, ' ');
    print_region(P, r, ind, false, false);
  }
  return true;
}

/* GET_TUPLE_ELEMENT */
static bool pp_get_tuple_element(pr *P, const cj_op *op, const char *nm, int ind) {
  out *o = P->o;
  int64_t i;
  if (!int_attr(op, "index", &i)) return false;
  static const char *const el[] = {"index", NULL};
  put_head(P, op, nm, 1);
  putc_(o, '[');
  put_i64(o, i);
  putc_(o, ']');
  return put_tail_functional(P, op, el);
}

/* TUPLE */
static bool pp_tuple(pr *P, const cj_op *op, const char *nm, int ind) {
  out *o = P->o;
  const cj_type *t = op->results[0].type;
  if (!t || t->kind != CJ_TYPE_TUPLE || (uint32_t)t->rank != op->nopnds) return false;
  for (uint32_t i = 0; i < op->nopnds; i++)
    if (t->members[i] != op->operands[i]->type) return false;
  puts_(o, nm);
  if (op->nopnds) putc_(o, ' ');
  put_operands(P, op, 0, op->nopnds);
  return put_tail_type(P, op, NULL, t);
}

/* COMPARE */
static bool pp_compare(pr *P, const cj_op *op, const char *nm, int ind) {
  out *o = P->o;
  bool chlo = op->kind == CJ_OP_CHLO_BROADCAST_COMPARE;
  cj_enum_kind dk = chlo ? CJ_EK_CHLO_COMPARISON_DIRECTION : CJ_EK_COMPARISON_DIRECTION;
  cj_enum_kind tk = chlo ? CJ_EK_CHLO_COMPARISON_TYPE : CJ_EK_COMPARISON_TYPE;
  if (!enum_attr(op, "comparison_direction", dk)) return false;
  const cj_attr *ct = A(op, "compare_type");
  if (ct && !enum_attr(op, "compare_type", tk)) return false;
  static const char *const el[] = {"comparison_direction", "compare_type", NULL};
  puts_(o, nm);
  puts_(o, "  ");
  put_enum_value(o, A(op, "comparison_direction"));
  puts_(o, ", ");
  put_operands(P, op, 0, 2);
  if (ct) {
    puts_(o, ",  ");
    put_enum_value(o, ct);
  }
  return put_tail_functional(P, op, el);
}

/* SLICE */
static bool pp_slice(pr *P, const cj_op *op, const char *nm, int ind) {
  out *o = P->o;
  int64_t a[64], b[64], c[64], na, nb, nc;
  const cj_attr *s0 = A(op, "start_indices"), *s1 = A(op, "limit_indices"),
                *s2 = A(op, "strides");
  if (!s0 || !s1 || !s2 || !cj_attr_get_i64s(s0, a, 64, &na) ||
      !cj_attr_get_i64s(s1, b, 64, &nb) || !cj_attr_get_i64s(s2, c, 64, &nc) || na != nb ||
      na != nc || na > 64)
    return false;
  static const char *const el[] = {"start_indices", "limit_indices", "strides", NULL};
  put_head(P, op, nm, 1);
  puts_(o, " [");
  for (int64_t i = 0; i < na; i++) {
    if (i) puts_(o, ", ");
    put_i64(o, a[i]);
    putc_(o, ':');
    put_i64(o, b[i]);
    if (c[i] != 1) {
      putc_(o, ':');
      put_i64(o, c[i]);
    }
  }
  putc_(o, ']');
  return put_tail_functional(P, op, el);
}

const cj_dims_form *cj_syntax_dims_form(cj_syntax syn) {
  static const cj_dims_form forms[CJ_SYN_COUNT] = {
      [CJ_SYN_DYNAMIC_SLICE] = {0, false, "sizes", "slice_sizes"},
      [CJ_SYN_BROADCAST] = {1, false, "sizes", "broadcast_sizes"},
      [CJ_SYN_BROADCAST_IN_DIM] = {1, false, "dims", "broadcast_dimensions"},
      [CJ_SYN_DYNAMIC_BROADCAST_IN_DIM] = {2, false, "dims", "broadcast_dimensions"},
      [CJ_SYN_TRANSPOSE] = {1, false, "dims", "permutation"},
      [CJ_SYN_REVERSE] = {1, true, "dims", "dimensions"},
  };
  return (unsigned)syn < CJ_SYN_COUNT && forms[syn].kw ? &forms[syn] : NULL;
}

/* DYNAMIC_SLICE, BROADCAST, BROADCAST_IN_DIM, DYNAMIC_BROADCAST_IN_DIM, TRANSPOSE, REVERSE */
static bool pp_dims_form(pr *P, const cj_op *op, const char *nm, int ind) {
  const cj_dims_form *f = cj_syntax_dims_form(cj_op_info_get(op->kind)->syntax);
  uint32_t nlead = f->nlead ? f->nlead : op->nopnds;
  if (!list_attr(op, f->attr) || op->nopnds < nlead || op->nopnds < 1) return false;
  const char *const el[] = {f->attr, NULL};
  put_head(P, op, nm, nlead);
  puts_(P->o, ", ");
  put_kw_list(P, f->kw, A(op, f->attr));
  return f->same_type ? put_tail_same(P, op, el) : put_tail_functional(P, op, el);
}

/* CHOLESKY */
static bool pp_cholesky(pr *P, const cj_op *op, const char *nm, int ind) {
  out *o = P->o;
  const cj_attr *lo = A(op, "lower");
  bool lower = false;
  if (lo && !cj_attr_get_bool(lo, &lower)) return false;
  if (lo && lo->kind != CJ_ATTR_BOOL) return false;
  static const char *const el[] = {"lower", NULL};
  put_head(P, op, nm, 1);
  if (lower) puts_(o, ", lower = true");
  return put_tail_same(P, op, el);
}

/* CONCATENATE */
static bool pp_concatenate(pr *P, const cj_op *op, const char *nm, int ind) {
  out *o = P->o;
  int64_t d;
  if (!int_attr(op, "dimension", &d)) return false;
  static const char *const el[] = {"dimension", NULL};
  puts_(o, nm);
  putc_(o, ' ');
  for (uint32_t i = 0; i < op->nopnds; i++) {
    put_value(P, op->operands[i]);
    puts_(o, ", ");
  }
  puts_(o, "dim = ");
  put_i64(o, d);
  return put_tail_functional(P, op, el);
}

/* COMPOSITE */
static bool pp_composite(pr *P, const cj_op *op, const char *nm, int ind) {
  out *o = P->o;
  const cj_attr *n = A(op, "name");
  if (!n || n->kind != CJ_ATTR_STRING) return false;
  static const char *const el[] = {"name", NULL};
  puts_(o, nm);
  putc_(o, ' ');
  put_escaped(o, n->str.s, n->str.len);
  if (op->nopnds) putc_(o, ' ');
  put_operands(P, op, 0, op->nopnds);
  if (op->nregions) {
    puts_(o, " (");
    for (uint32_t i = 0; i < op->nregions; i++) {
      if (i) puts_(o, ", ");
      print_region(P, &op->regions[i], ind, true, true);
    }
    putc_(o, ')');
  }
  return put_tail_functional(P, op, el);
}

/* CONVOLUTION */
static bool pp_convolution(pr *P, const cj_op *op, const char *nm, int ind) {
  out *o = P->o;
  const cj_attr *dn = A(op, "dimension_numbers");
  if (!dn || dn->kind != CJ_ATTR_STRUCT || dn->st.sk != CJ_SK_CONV) return false;
  const cj_attr *pad = A(op, "padding"), *rev = A(op, "window_reversal");
  if (pad && (pad->kind != CJ_ATTR_DENSE || !cj_dtype_is_int(pad->dense.type->dtype) ||
              pad->dense.type->rank != 2 || pad->dense.type->dims[1] != 2))
    return false;
  if (rev && rev->kind != CJ_ATTR_DENSE_ARRAY) return false;
  static const char *const wn[] = {"window_strides", "lhs_dilation", "rhs_dilation"};
  for (int i = 0; i < 3; i++)
    if (A(op, wn[i]) && !list_attr(op, wn[i])) return false;
  size_t mark = o->len;
  puts_(o, nm);
  putc_(o, '(');
  put_operands(P, op, 0, op->nopnds);
  puts_(o, ") dim_numbers = ");
  if (!put_conv_dims(o, dn)) {
    o->len = mark;
    return false;
  }
  puts_(o, ", window = {");
  bool first = true;
  if (A(op, "window_strides")) {
    put_kw_list(P, "stride", A(op, "window_strides"));
    first = false;
  }
  if (pad) {
    if (!first) puts_(o, ", ");
    first = false;
    puts_(o, "pad = [");
    int64_t rows = pad->dense.type->dims[0];
    for (int64_t i = 0; i < rows; i++) {
      if (i) puts_(o, ", ");
      putc_(o, '[');
      put_i64(o, cj_dense_get_i64(pad, 2 * i));
      puts_(o, ", ");
      put_i64(o, cj_dense_get_i64(pad, 2 * i + 1));
      putc_(o, ']');
    }
    putc_(o, ']');
  }
  if (A(op, "lhs_dilation")) {
    if (!first) puts_(o, ", ");
    first = false;
    put_kw_list(P, "lhs_dilate", A(op, "lhs_dilation"));
  }
  if (A(op, "rhs_dilation")) {
    if (!first) puts_(o, ", ");
    first = false;
    put_kw_list(P, "rhs_dilate", A(op, "rhs_dilation"));
  }
  if (rev) {
    if (!first) puts_(o, ", ");
    puts_(o, "reverse = [");
    for (int64_t i = 0; i < rev->darr.n; i++) {
      if (i) puts_(o, ", ");
      int64_t v = cj_elem_get_i64(rev->darr.dtype, rev->darr.data, (size_t)i);
      puts_(o, v ? "true" : "false");
    }
    putc_(o, ']');
  }
  putc_(o, '}');
  static const char *const el[] = {
      "dimension_numbers", "window_strides",  "padding", "lhs_dilation",
      "rhs_dilation",      "window_reversal", NULL};
  return put_tail_functional(P, op, el);
}

/* CUSTOM_CALL */
static bool pp_custom_call(pr *P, const cj_op *op, const char *nm, int ind) {
  out *o = P->o;
  const cj_attr *t = A(op, "call_target_name");
  if (!t || t->kind != CJ_ATTR_STRING || strlen(t->str.s) != t->str.len) return false;
  static const char *const el[] = {"call_target_name", NULL};
  puts_(o, nm);
  putc_(o, ' ');
  put_symbol(o, t->str.s);
  putc_(o, '(');
  put_operands(P, op, 0, op->nopnds);
  putc_(o, ')');
  return put_tail_functional(P, op, el);
}

/* DOT, DOT_GENERAL */
static bool pp_dot(pr *P, const cj_op *op, const char *nm, int ind) {
  out *o = P->o;
  const cj_op_info *info = cj_op_info_get(op->kind);
  const cj_attr *pc = A(op, "precision_config"), *alg = A(op, "algorithm");
  const cj_attr *dd = A(op, "dot_dimension_numbers");
  bool general = info->syntax == CJ_SYN_DOT_GENERAL;
  if (pc && pc->kind != CJ_ATTR_ARRAY) return false;
  for (int i = 0; pc && i < pc->arr.n; i++)
    if (!pc->arr.items[i] || pc->arr.items[i]->kind != CJ_ATTR_ENUM ||
        pc->arr.items[i]->en.ek != CJ_EK_PRECISION)
      return false;
  if (general && (!dd || dd->kind != CJ_ATTR_STRUCT || dd->st.sk != CJ_SK_DOT)) return false;
  if (alg && (!general || alg->kind != CJ_ATTR_STRUCT || alg->st.sk != CJ_SK_DOT_ALGORITHM))
    return false;
  put_head(P, op, nm, 2);
  if (general) {
    const cj_attr *const *F = dd->st.fields;
    puts_(o, ", ");
    if (!list_empty(F[CJ_SF_DOT_lhs_batching_dimensions]) ||
        !list_empty(F[CJ_SF_DOT_rhs_batching_dimensions])) {
      puts_(o, "batching_dims = ");
      put_i64_list(o, F[CJ_SF_DOT_lhs_batching_dimensions]);
      puts_(o, " x ");
      put_i64_list(o, F[CJ_SF_DOT_rhs_batching_dimensions]);
      puts_(o, ", ");
    }
    puts_(o, "contracting_dims = ");
    put_i64_list(o, F[CJ_SF_DOT_lhs_contracting_dimensions]);
    puts_(o, " x ");
    put_i64_list(o, F[CJ_SF_DOT_rhs_contracting_dimensions]);
  }
  if (pc) {
    puts_(o, ", precision = [");
    for (int i = 0; i < pc->arr.n; i++) {
      if (i) puts_(o, ", ");
      put_enum_value(o, pc->arr.items[i]);
    }
    putc_(o, ']');
  }
  if (alg) {
    puts_(o, ", algorithm = <");
    put_struct_fields(o, alg, false);
    putc_(o, '>');
  }
  static const char *const el[] = {"dot_dimension_numbers", "precision_config", "algorithm",
                                   NULL};
  return put_tail_functional(P, op, el);
}

/* EINSUM, UNARY_EINSUM */
static bool pp_einsum(pr *P, const cj_op *op, const char *nm, int ind) {
  out *o = P->o;
  const cj_attr *c = A(op, "einsum_config");
  if (!c || c->kind != CJ_ATTR_STRING) return false;
  static const char *const el[] = {"einsum_config", NULL};
  put_head(P, op, nm, op->nopnds);
  puts_(o, ", config = ");
  put_escaped(o, c->str.s, c->str.len);
  return put_tail_functional(P, op, el);
}

/* FFT */
static bool pp_fft(pr *P, const cj_op *op, const char *nm, int ind) {
  out *o = P->o;
  if (!enum_attr(op, "fft_type", CJ_EK_FFT_TYPE) || !list_attr(op, "fft_length")) return false;
  static const char *const el[] = {"fft_type", "fft_length", NULL};
  put_head(P, op, nm, 1);
  puts_(o, ", type =  ");
  put_enum_value(o, A(op, "fft_type"));
  puts_(o, ", ");
  put_kw_list(P, "length", A(op, "fft_length"));
  return put_tail_functional(P, op, el);
}

/* GET_DIMENSION_SIZE, SET_DIMENSION_SIZE */
static bool pp_get_dimension_size(pr *P, const cj_op *op, const char *nm, int ind) {
  out *o = P->o;
  int64_t d;
  if (!int_attr(op, "dimension", &d)) return false;
  static const char *const el[] = {"dimension", NULL};
  put_head(P, op, nm, op->nopnds);
  puts_(o, ", dim = ");
  put_i64(o, d);
  return put_tail_functional(P, op, el);
}

/* PAD */
static bool pp_pad(pr *P, const cj_op *op, const char *nm, int ind) {
  out *o = P->o;
  if (!list_attr(op, "edge_padding_low") || !list_attr(op, "edge_padding_high") ||
      !list_attr(op, "interior_padding"))
    return false;
  static const char *const el[] = {"edge_padding_low", "edge_padding_high", "interior_padding",
                                   NULL};
  put_head(P, op, nm, 2);
  puts_(o, ", ");
  put_kw_list(P, "low", A(op, "edge_padding_low"));
  puts_(o, ", ");
  put_kw_list(P, "high", A(op, "edge_padding_high"));
  puts_(o, ", ");
  put_kw_list(P, "interior", A(op, "interior_padding"));
  return put_tail_functional(P, op, el);
}

/* RETURN */
static bool pp_return(pr *P, const cj_op *op, const char *nm, int ind) {
  out *o = P->o;
  puts_(o, nm);
  if (op->nopnds) putc_(o, ' ');
  put_operands(P, op, 0, op->nopnds);
  put_attr_dict(P, op, NULL, false);
  if (op->nopnds) {
    puts_(o, " : ");
    put_operand_types(o, op);
  }
  return true;
}

/* OPTIMIZATION_BARRIER */
static bool pp_optimization_barrier(pr *P, const cj_op *op, const char *nm, int ind) {
  out *o = P->o;
  if (op->nresults != op->nopnds) return false;
  for (uint32_t i = 0; i < op->nopnds; i++)
    if (op->results[i].type != op->operands[i]->type) return false;
  puts_(o, nm);
  put_attr_dict(P, op, NULL, false);
  if (!op->nopnds) {
    puts_(o, " ()");
    return true;
  }
  putc_(o, ' ');
  put_operands(P, op, 0, op->nopnds);
  puts_(o, " : ");
  put_operand_types(o, op);
  return true;
}

/* RNG, RNG_BIT_GENERATOR */
static bool pp_rng(pr *P, const cj_op *op, const char *nm, int ind) {
  out *o = P->o;
  const cj_op_info *info = cj_op_info_get(op->kind);
  bool rng = info->syntax == CJ_SYN_RNG;
  const char *an = rng ? "rng_distribution" : "rng_algorithm";
  if (!enum_attr(op, an, rng ? CJ_EK_RNG_DISTRIBUTION : CJ_EK_RNG_ALGORITHM)) return false;
  const char *const el[] = {an, NULL};
  put_head(P, op, nm, op->nopnds);
  puts_(o, rng ? ", distribution =  " : ", algorithm =  ");
  put_enum_value(o, A(op, an));
  return put_tail_functional(P, op, el);
}

/* REDUCE_PRECISION */
static bool pp_reduce_precision(pr *P, const cj_op *op, const char *nm, int ind) {
  out *o = P->o;
  int64_t e, m;
  if (!int_attr(op, "exponent_bits", &e) || !int_attr(op, "mantissa_bits", &m) || e < 0 ||
      m < 0)
    return false;
  static const char *const el[] = {"exponent_bits", "mantissa_bits", NULL};
  put_head(P, op, nm, 1);
  putf(o, ", format = e%lldm%lld", (long long)e, (long long)m);
  return put_tail_same(P, op, el);
}

/* CALL */
static bool pp_call(pr *P, const cj_op *op, const char *nm, int ind) {
  out *o = P->o;
  const cj_attr *c = A(op, "callee");
  if (!c || c->kind != CJ_ATTR_SYMREF) return false;
  static const char *const el[] = {"callee", NULL};
  puts_(o, nm);
  putc_(o, ' ');
  put_attr(o, c);
  putc_(o, '(');
  put_operands(P, op, 0, op->nopnds);
  putc_(o, ')');
  return put_tail_functional(P, op, el);
}

/* CHLO_UNARY, CHLO_BINARY_ARROW: `: T -> R`, `: T, T -> R` */
static bool pp_chlo_arrow(pr *P, const cj_op *op, const char *nm, int ind) {
  out *o = P->o;
  put_head(P, op, nm, op->nopnds);
  put_attr_dict(P, op, NULL, false);
  puts_(o, " : ");
  put_operand_types(o, op);
  puts_(o, " -> ");
  put_type(o, op->results[0].type);
  return true;
}

/* CHLO_TOP_K */
static bool pp_chlo_top_k(pr *P, const cj_op *op, const char *nm, int ind) {
  out *o = P->o;
  int64_t k;
  if (!int_attr(op, "k", &k)) return false;
  const cj_attr *st = A(op, "is_stable");
  if (st && st->kind != CJ_ATTR_BOOL) return false;
  static const char *const el[] = {"k", "is_stable", NULL};
  puts_(o, nm);
  putc_(o, '(');
  put_operands(P, op, 0, 1);
  puts_(o, ", k = ");
  put_i64(o, k);
  if (st && !attr_is_default(op, "is_stable", st))
    puts_(o, st->b ? ", is_stable = true" : ", is_stable = false");
  putc_(o, ')');
  put_attr_dict(P, op, el, false);
  puts_(o, " : ");
  put_type(o, op->operands[0]->type);
  puts_(o, " -> (");
  put_type(o, op->results[0].type);
  puts_(o, ", ");
  put_type(o, op->results[1].type);
  putc_(o, ')');
  return true;
}

/* CHLO_SCAN */
static bool pp_chlo_scan(pr *P, const cj_op *op, const char *nm, int ind) {
  out *o = P->o;
  int64_t d;
  if (!int_attr(op, "dimension", &d) || op->nregions != 1) return false;
  uint32_t nin = scan_ninputs(op);
  if (nin > op->nopnds) return false;
  static const char *const el[] = {"dimension", "operandSegmentSizes", "resultSegmentSizes",
                                   NULL};
  puts_(o, nm);
  putc_(o, '(');
  put_operands(P, op, 0, nin);
  puts_(o, ") inits (");
  put_operands(P, op, nin, op->nopnds);
  puts_(o, ") dimension=");
  put_i64(o, d);
  putc_(o, ' ');
  put_attr_dict(P, op, el, true);
  putc_(o, ' ');
  print_region(P, &op->regions[0], ind, true, false);
  puts_(o, " : ");
  put_functional(P, op);
  return true;
}

/* CHECK_EXPECT_CONST */
static bool pp_check_expect_const(pr *P, const cj_op *op, const char *nm, int ind) {
  out *o = P->o;
  const cj_attr *v = A(op, "value"), *tol = A(op, "tolerance");
  if (!v || v->kind != CJ_ATTR_DENSE || v->dense.type != op->operands[0]->type) return false;
  if (tol && tol->kind != CJ_ATTR_FLOAT) return false;
  static const char *const el[] = {"value", "tolerance", NULL};
  put_head(P, op, nm, 1);
  puts_(o, ", ");
  put_attr(o, v);
  if (tol && !attr_is_default(op, "tolerance", tol)) {
    puts_(o, ", tolerance = ");
    put_double(o, tol->f.v);
  }
  put_attr_dict(P, op, el, false);
  return true;
}

/* CHECK_EXPECT */
static bool pp_check_expect(pr *P, const cj_op *op, const char *nm, int ind) {
  out *o = P->o;
  const cj_attr *tol = A(op, "tolerance");
  if (tol && tol->kind != CJ_ATTR_FLOAT) return false;
  if (op->operands[0]->type != op->operands[1]->type) return false;
  static const char *const el[] = {"tolerance", NULL};
  put_head(P, op, nm, 2);
  if (tol && !attr_is_default(op, "tolerance", tol)) {
    puts_(o, ", tolerance = ");
    put_double(o, tol->f.v);
  }
  return put_tail_type(P, op, el, op->operands[0]->type);
}

/* CHECK_EXPECT_CLOSE */
static bool pp_check_expect_close(pr *P, const cj_op *op, const char *nm, int ind) {
  out *o = P->o;
  int64_t mx, mn = 0;
  if (!int_attr(op, "max_ulp_difference", &mx)) return false;
  const cj_attr *mna = A(op, "min_ulp_difference");
  if (mna && !int_attr(op, "min_ulp_difference", &mn)) return false;
  static const char *const el[] = {"max_ulp_difference", "min_ulp_difference", NULL};
  put_head(P, op, nm, 2);
  puts_(o, ", max_ulp_difference = ");
  put_u64(o, (uint64_t)mx); /* a ui64 attribute upstream, kept as its bits */
  if (mna && mn != 0) {
    puts_(o, ", min_ulp_difference = ");
    put_u64(o, (uint64_t)mn);
  }
  puts_(o, " :");
  put_attr_dict(P, op, el, false);
  putc_(o, ' ');
  put_type(o, op->operands[0]->type);
  puts_(o, ", ");
  put_type(o, op->operands[1]->type);
  return true;
}

/* CHECK_EXPECT_SERIALIZED */
static bool pp_check_expect_serialized(pr *P, const cj_op *op, const char *nm, int ind) {
  out *o = P->o;
  const cj_attr *id = A(op, "probe_id");
  int64_t it = 0;
  if (!id || id->kind != CJ_ATTR_STRING || op->nopnds != 1) return false;
  const cj_attr *ita = A(op, "iteration");
  if (ita && !int_attr(op, "iteration", &it)) return false;
  static const char *const el[] = {"probe_id", "iteration", NULL};
  put_head(P, op, nm, 1);
  puts_(o, ", probe_id = ");
  put_escaped(o, id->str.s, id->str.len);
  if (ita && it != 0) {
    puts_(o, ", iter = ");
    put_i64(o, it);
  }
  return put_tail_type(P, op, el, op->operands[0]->type);
}

/* INTERP_PRINT */
static bool pp_interp_print(pr *P, const cj_op *op, const char *nm, int ind) {
  put_head(P, op, nm, 1);
  return put_tail_type(P, op, NULL, op->operands[0]->type);
}

/* INTERP_PROBE */
static bool pp_interp_probe(pr *P, const cj_op *op, const char *nm, int ind) {
  out *o = P->o;
  const cj_attr *id = A(op, "probe_id");
  if (!id || id->kind != CJ_ATTR_STRING || op->results[0].type != op->operands[0]->type)
    return false;
  static const char *const el[] = {"probe_id", NULL};
  put_head(P, op, nm, 1);
  puts_(o, ", probe_id = ");
  put_escaped(o, id->str.s, id->str.len);
  return put_tail_type(P, op, el, op->results[0].type);
}

/* SDY_MESH */
static bool pp_sdy_mesh(pr *P, const cj_op *op, const char *nm, int ind) {
  out *o = P->o;
  const cj_attr *n = A(op, "sym_name");
  const char *ms;
  size_t mn;
  if (!n || n->kind != CJ_ATTR_STRING || !sdy_strip(A(op, "mesh"), "#sdy.mesh", &ms, &mn))
    return false;
  static const char *const el[] = {"sym_name", "mesh", NULL};
  puts_(o, nm);
  putc_(o, ' ');
  put_symbol(o, n->str.s);
  puts_(o, " = ");
  put(o, ms, mn);
  put_attr_dict(P, op, el, false);
  return true;
}

/* SDY_SHARDING_CONSTRAINT */
static bool pp_sdy_sharding_constraint(pr *P, const cj_op *op, const char *nm, int ind) {
  out *o = P->o;
  const char *ss;
  size_t sn;
  if (!sdy_strip(A(op, "sharding"), "#sdy.sharding", &ss, &sn) ||
      op->results[0].type != op->operands[0]->type)
    return false;
  static const char *const el[] = {"sharding", NULL};
  put_head(P, op, nm, 1);
  putc_(o, ' ');
  put(o, ss, sn);
  return put_tail_type(P, op, el, op->results[0].type);
}

/* SDY_MANUAL_COMPUTATION */
static bool pp_sdy_manual_computation(pr *P, const cj_op *op, const char *nm, int ind) {
  out *o = P->o;
  const char *is, *os_, *as;
  size_t in, on, an;
  if (!sdy_strip(A(op, "in_shardings"), "#sdy.sharding_per_value<", &is, &in) ||
      !sdy_strip(A(op, "out_shardings"), "#sdy.sharding_per_value<", &os_, &on) ||
      !sdy_strip(A(op, "manual_axes"), "#sdy<manual_axes", &as, &an) || in < 1 || on < 1 ||
      an < 1 || op->nregions != 1 || op->regions[0].nblocks != 1)
    return false;
  static const char *const el[] = {"in_shardings", "out_shardings", "manual_axes", NULL};
  const cj_block *b = op->regions[0].first;
  puts_(o, nm);
  putc_(o, '(');
  put_operands(P, op, 0, op->nopnds);
  puts_(o, ") in_shardings=");
  put(o, is, in - 1);
  puts_(o, " out_shardings=");
  put(o, os_, on - 1);
  puts_(o, " manual_axes=");
  put(o, as, an - 1);
  puts_(o, " (");
  for (uint32_t i = 0; i < b->nargs; i++) {
    if (i) puts_(o, ", ");
    put_value(P, &b->args[i]);
    puts_(o, ": ");
    put_type(o, b->args[i].type);
  }
  puts_(o, ") ");
  print_region(P, &op->regions[0], ind, false, false);
  return put_tail_functional(P, op, el);
}

static const pretty_fn pretty_forms[CJ_SYN_COUNT] = {
    [CJ_SYN_FUNC] = pp_func,
    [CJ_SYN_EW] = pp_ew,
    [CJ_SYN_VARIADIC_SAME] = pp_ew,
    [CJ_SYN_COMPLEX] = pp_complex,
    [CJ_SYN_SELECT] = pp_select,
    [CJ_SYN_FUNCTIONAL] = pp_functional,
    [CJ_SYN_CHLO_BINARY] = pp_functional,
    [CJ_SYN_CHLO_BROADCAST_SELECT] = pp_functional,
    [CJ_SYN_CONSTANT] = pp_constant,
    [CJ_SYN_CHLO_CONSTANT] = pp_constant,
    [CJ_SYN_IOTA] = pp_iota,
    [CJ_SYN_DYNAMIC_IOTA] = pp_dynamic_iota,
    [CJ_SYN_NULLARY] = pp_nullary,
    [CJ_SYN_WHILE] = pp_while,
    [CJ_SYN_REDUCE] = pp_reduce,
    [CJ_SYN_GET_TUPLE_ELEMENT] = pp_get_tuple_element,
    [CJ_SYN_TUPLE] = pp_tuple,
    [CJ_SYN_COMPARE] = pp_compare,
    [CJ_SYN_SLICE] = pp_slice,
    [CJ_SYN_DYNAMIC_SLICE] = pp_dims_form,
    [CJ_SYN_BROADCAST] = pp_dims_form,
    [CJ_SYN_BROADCAST_IN_DIM] = pp_dims_form,
    [CJ_SYN_DYNAMIC_BROADCAST_IN_DIM] = pp_dims_form,
    [CJ_SYN_TRANSPOSE] = pp_dims_form,
    [CJ_SYN_REVERSE] = pp_dims_form,
    [CJ_SYN_CHOLESKY] = pp_cholesky,
    [CJ_SYN_CONCATENATE] = pp_concatenate,
    [CJ_SYN_COMPOSITE] = pp_composite,
    [CJ_SYN_CONVOLUTION] = pp_convolution,
    [CJ_SYN_CUSTOM_CALL] = pp_custom_call,
    [CJ_SYN_DOT] = pp_dot,
    [CJ_SYN_DOT_GENERAL] = pp_dot,
    [CJ_SYN_EINSUM] = pp_einsum,
    [CJ_SYN_UNARY_EINSUM] = pp_einsum,
    [CJ_SYN_FFT] = pp_fft,
    [CJ_SYN_GET_DIMENSION_SIZE] = pp_get_dimension_size,
    [CJ_SYN_SET_DIMENSION_SIZE] = pp_get_dimension_size,
    [CJ_SYN_PAD] = pp_pad,
    [CJ_SYN_RETURN] = pp_return,
    [CJ_SYN_OPTIMIZATION_BARRIER] = pp_optimization_barrier,
    [CJ_SYN_RNG] = pp_rng,
    [CJ_SYN_RNG_BIT_GENERATOR] = pp_rng,
    [CJ_SYN_REDUCE_PRECISION] = pp_reduce_precision,
    [CJ_SYN_CALL] = pp_call,
    [CJ_SYN_CHLO_UNARY] = pp_chlo_arrow,
    [CJ_SYN_CHLO_BINARY_ARROW] = pp_chlo_arrow,
    [CJ_SYN_CHLO_TOP_K] = pp_chlo_top_k,
    [CJ_SYN_CHLO_SCAN] = pp_chlo_scan,
    [CJ_SYN_CHECK_EXPECT_CONST] = pp_check_expect_const,
    [CJ_SYN_CHECK_EXPECT] = pp_check_expect,
    [CJ_SYN_CHECK_EXPECT_CLOSE] = pp_check_expect_close,
    [CJ_SYN_CHECK_EXPECT_SERIALIZED] = pp_check_expect_serialized,
    [CJ_SYN_INTERP_PRINT] = pp_interp_print,
    [CJ_SYN_INTERP_PROBE] = pp_interp_probe,
    [CJ_SYN_SDY_MESH] = pp_sdy_mesh,
    [CJ_SYN_SDY_SHARDING_CONSTRAINT] = pp_sdy_sharding_constraint,
    [CJ_SYN_SDY_MANUAL_COMPUTATION] = pp_sdy_manual_computation,
};

static bool print_pretty(pr *P, const cj_op *op, int ind) {
  const cj_op_info *info = cj_op_info_get(op->kind);
  if (op->kind == CJ_OP_UNKNOWN || op->nsuccessors) return false;
  /* fixed arities from the table must hold for the pretty form */
  if ((info->nopnds >= 0 && op->nopnds != (uint32_t)info->nopnds) ||
      (info->nresults >= 0 && op->nresults != (uint32_t)info->nresults) ||
      (info->nregions >= 0 && op->nregions != (uint32_t)info->nregions))
    return false;
  for (uint32_t i = 0; i < op->nopnds; i++)
    if (!op->operands[i]) return false;
  if (!types_equal_all(op)) return false;
  const char *nm = op->name;
  const cj_op *parent = op->block && op->block->region ? op->block->region->op : NULL;
  if (parent && parent->kind == CJ_OP_FUNC && !strncmp(nm, "func.", 5)) nm += 5;
  pretty_fn f = info->syntax < CJ_SYN_COUNT ? pretty_forms[info->syntax] : NULL;
  return f && f(P, op, nm, ind);
}

static void print_op(pr *P, const cj_op *op, int ind) {
  out *o = P->o;
  indent(o, ind);
  if (op->nresults) {
    const nslot *s = ns_find(P->ns, op);
    putc_(o, '%');
    if (s && s->str)
      puts_(o, s->str);
    else if (s)
      put_u64(o, s->num);
    else
      puts_(o, "<<UNNAMED>>");
    if (op->nresults > 1) {
      putc_(o, ':');
      put_u64(o, op->nresults);
    }
    puts_(o, " = ");
  }
  size_t mark = o->len;
  bool pretty = !(P->flags & CJ_PRINT_GENERIC) && print_pretty(P, op, ind);
  if (!pretty && !o->oom) {
    o->len = mark;
    if (o->buf) o->buf[mark] = 0;
    print_generic(P, op, ind, true);
  }
  if ((P->flags & CJ_PRINT_LOCS) && op->loc) {
    putc_(o, ' ');
    put_loc(o, op->loc);
  }
}

/* ======================================================================== entry points */

static out out_begin(char **buf, size_t *len) {
  out o;
  memset(&o, 0, sizeof o);
  o.buf = *buf;
  o.len = *buf ? *len : 0;
  o.cap = o.len; /* unknown capacity: the first append reallocates */
  return o;
}

static CJ_MUST_USE cj_status out_end(out *o, char **buf, size_t *len) {
  if (o->oom) {
    *buf = o->buf;
    return cj_oom();
  }
  if (!o->buf) {
    o->buf = malloc(1);
    if (!o->buf) return cj_oom();
    o->buf[0] = 0;
  }
  *buf = o->buf;
  *len = o->len;
  return NULL;
}

cj_status cj_print_type(const cj_type *t, char **buf, size_t *len) {
  if (!buf || !len) return cj_invalid("cj_print_type: buf or len is NULL");
  out o = out_begin(buf, len);
  put_type(&o, t);
  return out_end(&o, buf, len);
}

cj_status cj_print_attr(const cj_attr *a, char **buf, size_t *len) {
  if (!buf || !len) return cj_invalid("cj_print_attr: buf or len is NULL");
  out o = out_begin(buf, len);
  put_attr(&o, a);
  return out_end(&o, buf, len);
}

cj_status cj_print_module(const cj_module *m, unsigned flags, char **buf, size_t *len) {
  if (!m || !buf || !len) return cj_invalid("cj_print_module: bad arguments");
  out o = out_begin(buf, len);
  names ns;
  memset(&ns, 0, sizeof ns);
  ns.generic = (flags & CJ_PRINT_GENERIC) != 0;
  ctr c = {0, 0, 0};
  number_region(&ns, &m->body, c);
  pr P = {&o, &ns, flags};
  puts_(&o, "module");
  if (m->name) {
    putc_(&o, ' ');
    put_symbol(&o, m->name);
  }
  if (m->nattrs) {
    cj_named_attr *s = malloc(sizeof *s * m->nattrs);
    if (!s) {
      o.oom = true;
    } else {
      memcpy(s, m->attrs, sizeof *s * m->nattrs);
      qsort(s, m->nattrs, sizeof *s, cmp_named);
      puts_(&o, " attributes {");
      put_dict_entries(&o, s, (int)m->nattrs);
      putc_(&o, '}');
      free(s);
    }
  }
  puts_(&o, " {\n");
  for (const cj_block *b = m->body.first; b; b = b->next)
    for (const cj_op *op = b->first; op && !o.oom; op = op->next) {
      print_op(&P, op, 2);
      putc_(&o, '\n');
    }
  putc_(&o, '}');
  if ((flags & CJ_PRINT_LOCS) && m->loc) {
    putc_(&o, ' ');
    put_loc(&o, m->loc);
  }
  putc_(&o, '\n');
  if (ns.oom) o.oom = true;
  names_free(&ns);
  return out_end(&o, buf, len);
}

cj_status cj_print_op(const cj_op *op, unsigned flags, char **buf, size_t *len) {
  if (!op || !buf || !len) return cj_invalid("cj_print_op: bad arguments");
  out o = out_begin(buf, len);
  names ns;
  memset(&ns, 0, sizeof ns);
  ns.generic = (flags & CJ_PRINT_GENERIC) != 0;
  /* number from the outermost enclosing op, so that names match the module's printout */
  const cj_op *top = op;
  for (int guard = 0; guard < 1000; guard++) {
    const cj_block *b = top->block;
    if (!b || !b->region || !b->region->op) break;
    top = b->region->op;
  }
  ctr c = {0, 0, 0};
  if (top->nresults) ns_set_num(&ns, &c, top);
  for (uint32_t k = 0; k < top->nregions; k++) number_region(&ns, &top->regions[k], c);
  pr P = {&o, &ns, flags};
  int ind = 0;
  print_op(&P, op, ind);
  if (ns.oom) o.oom = true;
  names_free(&ns);
  return out_end(&o, buf, len);
}
