/* libcjrt: host arrays, literals ("[[1, 2], [3, 4]]:f32") and numpy-style printing.
 *
 * The printer follows numpy's array2string with its default options (precision 8, 'maxprec'
 * float mode, line width 75, threshold 1000 with 3 edge items, ' ' separator), and the scalar
 * str() rules of numpy's float/complex scalars and of ml_dtypes' extension types, so `cjrt run`
 * output reads like `print(np.asarray(x))`. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cjrt/array.h"
#include "loader/util.h"
#pragma GCC visibility push(hidden)
#include "base/dtype.h"
#include "base/grow.h"
#pragma GCC visibility pop

/* ================================ arrays ================================ */

CJRT_API cjrt_error *cjrt_array_alloc(cjrt_dtype dtype, const int64_t *dims, size_t rank,
                                      cjrt_array *out) {
  memset(out, 0, sizeof *out);
  if (!cjrt__dtype_valid_array(dtype))
    return cjrt__error(CJRT_INVALID_ARGUMENT, "array: element type %d (%s) cannot be held in "
                       "a host array", (int)dtype, cjrt_dtype_name(dtype));
  if (rank && !dims) return cjrt__error(CJRT_INVALID_ARGUMENT, "array: dims is NULL for rank %zu", rank);
  size_t es = cjrt_dtype_size(dtype);
  int64_t n = cjrt__num_elements(dims, rank, es);
  if (n < 0) return cjrt__error(CJRT_INVALID_ARGUMENT, "array: negative dimension or size overflow");
  int64_t *d = NULL;
  if (rank) {
    d = malloc(rank * sizeof *d);
    if (!d) return cjrt__oom();
    memcpy(d, dims, rank * sizeof *d);
  }
  size_t nbytes = (size_t)n * es;
  void *data = calloc(nbytes ? nbytes : 1, 1);
  if (!data) {
    free(d);
    return cjrt__oom();
  }
  *out = (cjrt_array){.dtype = dtype, .rank = rank, .dims = d, .data = data, .nbytes = nbytes};
  return NULL;
}

CJRT_API void cjrt_array_free(cjrt_array *a) {
  if (!a) return;
  free(a->dims);
  free(a->data);
  memset(a, 0, sizeof *a);
}

CJRT_API int64_t cjrt_array_num_elements(const cjrt_array *a) {
  return cjrt__num_elements(a->dims, a->rank, 0);
}

CJRT_API cjrt_error *cjrt_array_describe(cjrt_dtype dtype, const int64_t *dims, size_t rank,
                                         char **out_text) {
  cjrt_sb sb = {0};
  cjrt_sb_printf(&sb, "%s[", cjrt_dtype_name(dtype));
  for (size_t i = 0; i < rank; i++) cjrt_sb_printf(&sb, i ? ",%lld" : "%lld", (long long)dims[i]);
  cjrt_sb_puts(&sb, "]");
  return cjrt_sb_finish(&sb, out_text);
}

/* ================================ literals ================================ */

typedef struct {
  double re, im;     /* the value as a number */
  int64_t i;         /* exact integer value when is_int */
  uint64_t u;        /* exact value when is_uint (above INT64_MAX) */
  bool is_int, is_uint, is_bool, is_complex;
  size_t pos;        /* offset in the literal, for messages */
} lit_value;

typedef struct {
  const char *s;
  size_t pos;
  int64_t dims[64];
  int rank; /* -1 until the first scalar fixes it */
  lit_value *vals;
  size_t n, cap;
} lit_parser;

static void skip_sep(lit_parser *p, bool *saw_comma) {
  for (;;) {
    char c = p->s[p->pos];
    if (c == ',' && saw_comma) {
      if (*saw_comma) return; /* a second comma is an error the caller reports */
      *saw_comma = true;
      p->pos++;
    } else if (isspace((unsigned char)c)) {
      p->pos++;
    } else {
      return;
    }
  }
}

static bool parse_real(const char *tok, size_t len, lit_value *v) {
  char buf[128];
  if (len == 0 || len >= sizeof buf) return false;
  memcpy(buf, tok, len);
  buf[len] = 0;
  if (!strcasecmp(buf, "true") || !strcasecmp(buf, "false")) {
    v->is_bool = v->is_int = true;
    v->i = (buf[0] == 't' || buf[0] == 'T');
    v->re = (double)v->i;
    return true;
  }
  char *end;
  /* exact integers: decimal or 0x hex, optional sign */
  const char *digits = buf + (buf[0] == '-' || buf[0] == '+');
  bool looks_int = *digits != 0;
  bool hex = digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X');
  for (const char *q = hex ? digits + 2 : digits; *q; q++)
    if (!(hex ? isxdigit((unsigned char)*q) : isdigit((unsigned char)*q))) looks_int = false;
  if (hex && !digits[2]) looks_int = false;
  if (looks_int) {
    errno = 0;
    long long ll = strtoll(buf, &end, 0);
    if (errno == 0 && *end == 0) {
      v->is_int = true;
      v->i = ll;
      v->re = (double)ll;
      return true;
    }
    if (buf[0] != '-') {
      errno = 0;
      unsigned long long ull = strtoull(buf, &end, 0);
      if (errno == 0 && *end == 0) {
        v->is_uint = true;
        v->u = ull;
        v->re = (double)ull;
        return true;
      }
    }
    /* too large: fall through to a float, which the range check then rejects for ints */
  }
  errno = 0;
  double d = strtod(buf, &end);
  if (end == buf || *end != 0) return false;
  v->re = d;
  return true;
}

/* A scalar token: a real, "2j", "1+2j", "(1-2.5j)". */
static bool parse_scalar(const char *tok, size_t len, lit_value *v) {
  memset(v, 0, sizeof *v);
  if (len >= 2 && tok[0] == '(' && tok[len - 1] == ')') {
    tok++;
    len -= 2;
  }
  if (len && (tok[len - 1] == 'j' || tok[len - 1] == 'J')) {
    v->is_complex = true;
    size_t body = len - 1;
    /* the split is the last sign that is not at the start and not an exponent's */
    size_t split = 0;
    for (size_t k = body; k-- > 1;) {
      if ((tok[k] == '+' || tok[k] == '-') && tok[k - 1] != 'e' && tok[k - 1] != 'E') {
        split = k;
        break;
      }
    }
    lit_value re = {0}, im = {0};
    if (split) {
      if (!parse_real(tok, split, &re)) return false;
      if (body - split == 1) { /* "1+j" */
        im.re = tok[split] == '-' ? -1.0 : 1.0;
      } else if (!parse_real(tok + split, body - split, &im)) {
        return false;
      }
    } else if (body == 0 || (body == 1 && (tok[0] == '+' || tok[0] == '-'))) {
      im.re = (body == 1 && tok[0] == '-') ? -1.0 : 1.0;
    } else if (!parse_real(tok, body, &im)) {
      return false;
    }
    if (re.is_bool || im.is_bool) return false;
    v->re = re.re;
    v->im = im.re;
    return true;
  }
  return parse_real(tok, len, v);
}

static cjrt_error *lit_push(lit_parser *p, const lit_value *v) {
  if (!cj_grow_n(&p->vals, &p->cap, p->n + 1, sizeof *p->vals, 64)) return cjrt__oom();
  p->vals[p->n++] = *v;
  return NULL;
}

static cjrt_error *lit_parse_item(lit_parser *p, int depth) {
  if (depth >= 64) return cjrt__error(CJRT_INVALID_ARGUMENT, "literal: nested deeper than 64 at offset %zu", p->pos);
  char c = p->s[p->pos];
  if (c == '[') {
    if (p->rank >= 0 && depth >= p->rank)
      return cjrt__error(CJRT_INVALID_ARGUMENT,
                         "literal: a list at offset %zu where a number was expected (ragged nesting)",
                         p->pos);
    p->pos++;
    int64_t count = 0;
    bool saw_comma = false;
    skip_sep(p, NULL);
    while (p->s[p->pos] != ']') {
      if (!p->s[p->pos])
        return cjrt__error(CJRT_INVALID_ARGUMENT, "literal: missing ']' at the end");
      if (count > 0 && p->s[p->pos] == ',')
        return cjrt__error(CJRT_INVALID_ARGUMENT, "literal: two commas at offset %zu", p->pos);
      CJRT_TRY(lit_parse_item(p, depth + 1));
      count++;
      saw_comma = false;
      skip_sep(p, &saw_comma);
      if (saw_comma && p->s[p->pos] == ',')
        return cjrt__error(CJRT_INVALID_ARGUMENT, "literal: two commas at offset %zu", p->pos);
    }
    p->pos++; /* ']' */
    if (count == 0 && p->rank < 0) {
      /* an empty list fixes the rank: this is the innermost dimension */
      p->rank = depth + 1;
    }
    if (p->rank >= 0 && depth >= p->rank)
      return cjrt__error(CJRT_INVALID_ARGUMENT, "literal: ragged nesting at offset %zu", p->pos);
    if (p->dims[depth] == -1) {
      p->dims[depth] = count;
    } else if (p->dims[depth] != count) {
      return cjrt__error(CJRT_INVALID_ARGUMENT,
                         "literal: not rectangular: a list of %lld items at offset %zu where "
                         "dimension %d has %lld",
                         (long long)count, p->pos, depth, (long long)p->dims[depth]);
    }
    return NULL;
  }
  /* a scalar token */
  size_t start = p->pos;
  while (p->s[p->pos] && p->s[p->pos] != ',' && p->s[p->pos] != ']' && p->s[p->pos] != '[' &&
         !isspace((unsigned char)p->s[p->pos]))
    p->pos++;
  if (p->pos == start)
    return cjrt__error(CJRT_INVALID_ARGUMENT, "literal: unexpected '%c' at offset %zu",
                       p->s[start] ? p->s[start] : '?', start);
  if (p->rank < 0) p->rank = depth;
  if (depth != p->rank)
    return cjrt__error(CJRT_INVALID_ARGUMENT,
                       "literal: ragged nesting: a number at depth %d at offset %zu, others at %d",
                       depth, start, p->rank);
  lit_value v;
  if (!parse_scalar(p->s + start, p->pos - start, &v))
    return cjrt__error(CJRT_INVALID_ARGUMENT, "literal: '%.*s' at offset %zu is not a number",
                       (int)(p->pos - start), p->s + start, start);
  v.pos = start;
  return lit_push(p, &v);
}

static cjrt_error *store_value(cjrt_dtype dt, void *data, size_t i, const lit_value *v) {
  cjrt__kind k = cjrt__dtype_kind(dt);
  const char *tn = cjrt_dtype_name(dt);
  if (v->is_complex && k != CJRT__K_COMPLEX && v->im != 0)
    return cjrt__error(CJRT_INVALID_ARGUMENT, "literal: complex value at offset %zu for a %s array",
                       v->pos, tn);
  switch (k) {
    case CJRT__K_BOOL: {
      double x = v->re;
      if (!(x == 0 || x == 1) || v->is_complex)
        return cjrt__error(CJRT_INVALID_ARGUMENT,
                           "literal: value at offset %zu is not a pred (true/false/0/1)", v->pos);
      ((uint8_t *)data)[i] = (uint8_t)(x != 0);
      return NULL;
    }
    case CJRT__K_SINT:
    case CJRT__K_UINT: {
      int bits = cjrt_dtype_bits(dt);
      bool is_signed = k == CJRT__K_SINT;
      if (v->is_uint) {
        if (is_signed || bits < 64)
          return cjrt__error(CJRT_OUT_OF_RANGE, "literal: %llu at offset %zu does not fit in %s",
                             (unsigned long long)v->u, v->pos, tn);
        memcpy((char *)data + i * 8, &v->u, 8);
        return NULL;
      }
      int64_t x;
      if (v->is_int) {
        x = v->i;
      } else {
        double d = v->re;
        if (!(d == floor(d)) || !(fabs(d) < 9.2e18))
          return cjrt__error(CJRT_INVALID_ARGUMENT,
                             "literal: %g at offset %zu is not an integer (the array is %s)", d,
                             v->pos, tn);
        x = (int64_t)d;
      }
      int64_t lo, hi;
      if (is_signed) {
        lo = bits >= 64 ? INT64_MIN : -((int64_t)1 << (bits - 1));
        hi = bits >= 64 ? INT64_MAX : ((int64_t)1 << (bits - 1)) - 1;
      } else {
        lo = 0;
        hi = bits >= 64 ? INT64_MAX : (int64_t)(((uint64_t)1 << bits) - 1);
      }
      if (x < lo || x > hi)
        return cjrt__error(CJRT_OUT_OF_RANGE, "literal: %lld at offset %zu does not fit in %s",
                           (long long)x, v->pos, tn);
      cj_elem_set_i64((cj_dtype)dt, data, i, x);
      return NULL;
    }
    case CJRT__K_FLOAT:
      if (dt == CJRT_F32) {
        float f = (float)v->re;
        memcpy((char *)data + i * 4, &f, 4);
      } else if (dt == CJRT_F64) {
        memcpy((char *)data + i * 8, &v->re, 8);
      } else {
        cj_elem_set_f64((cj_dtype)dt, data, i, v->re);
      }
      return NULL;
    case CJRT__K_COMPLEX:
      if (dt == CJRT_C64) {
        float f[2] = {(float)v->re, (float)v->im};
        memcpy((char *)data + i * 8, f, 8);
      } else {
        double d[2] = {v->re, v->im};
        memcpy((char *)data + i * 16, d, 16);
      }
      return NULL;
    default:
      return cjrt__error(CJRT_INVALID_ARGUMENT, "literal: type %s cannot hold values", tn);
  }
}

CJRT_API cjrt_error *cjrt_array_parse(const char *literal, cjrt_dtype dtype, cjrt_array *out) {
  memset(out, 0, sizeof *out);
  if (!literal) return cjrt__error(CJRT_INVALID_ARGUMENT, "literal: NULL");
  if (!cjrt__dtype_valid_array(dtype))
    return cjrt__error(CJRT_INVALID_ARGUMENT, "literal: type %s cannot hold values",
                       cjrt_dtype_name(dtype));
  lit_parser p = {.s = literal, .rank = -1};
  for (int i = 0; i < 64; i++) p.dims[i] = -1;
  skip_sep(&p, NULL);
  cjrt_error *err = NULL;
  if (!p.s[p.pos]) {
    err = cjrt__error(CJRT_INVALID_ARGUMENT, "literal: empty");
  } else {
    err = lit_parse_item(&p, 0);
    if (!err) {
      skip_sep(&p, NULL);
      if (p.s[p.pos])
        err = cjrt__error(CJRT_INVALID_ARGUMENT, "literal: unexpected '%c' at offset %zu after the value",
                          p.s[p.pos], p.pos);
    }
  }
  if (!err) {
    int rank = p.rank < 0 ? 0 : p.rank;
    for (int d = 0; d < rank; d++)
      if (p.dims[d] < 0) p.dims[d] = 0; /* below an empty list */
    err = cjrt_array_alloc(dtype, p.dims, (size_t)rank, out);
    if (!err && (int64_t)p.n != cjrt_array_num_elements(out))
      err = cjrt__error(CJRT_INTERNAL, "literal: %zu values for %lld elements", p.n,
                        (long long)cjrt_array_num_elements(out));
    for (size_t i = 0; !err && i < p.n; i++) err = store_value(dtype, out->data, i, &p.vals[i]);
    if (err) cjrt_array_free(out);
  }
  free(p.vals);
  return err;
}

CJRT_API cjrt_error *cjrt_array_parse_typed(const char *spec, cjrt_array *out) {
  memset(out, 0, sizeof *out);
  if (!spec) return cjrt__error(CJRT_INVALID_ARGUMENT, "literal: NULL");
  const char *colon = strrchr(spec, ':');
  if (!colon)
    return cjrt__error(CJRT_INVALID_ARGUMENT,
                       "'%s' has no ':TYPE' suffix (e.g. '[[1, 2], [3, 4]]:f32' or '3:i32')", spec);
  const char *tname = colon + 1;
  while (isspace((unsigned char)*tname)) tname++;
  char name[64];
  size_t n = strlen(tname);
  while (n && isspace((unsigned char)tname[n - 1])) n--;
  if (n >= sizeof name) n = sizeof name - 1;
  memcpy(name, tname, n);
  name[n] = 0;
  cjrt_dtype dt = cjrt_dtype_from_name(name);
  if (!cjrt__dtype_valid_array(dt))
    return cjrt__error(CJRT_INVALID_ARGUMENT,
                       "'%s': unknown element type '%s' (f32, f64, f16, bf16, i8..i64, u8..u64, "
                       "pred, c64, c128, f8e4m3fn, ...)",
                       spec, name);
  size_t len = (size_t)(colon - spec);
  char *lit = malloc(len + 1);
  if (!lit) return cjrt__oom();
  memcpy(lit, spec, len);
  lit[len] = 0;
  cjrt_error *err = cjrt_array_parse(lit, dt, out);
  free(lit);
  return err;
}

/* ================================ printing ================================ */

typedef enum { F_BOOL, F_INT, F_UINT64, F_FLOAT, F_COMPLEX, F_ML_FLOAT, F_ML_INT } fkind;

static fkind format_kind(cjrt_dtype dt) {
  switch (dt) {
    case CJRT_PRED: return F_BOOL;
    case CJRT_S8: case CJRT_S16: case CJRT_S32: case CJRT_S64:
    case CJRT_U8: case CJRT_U16: case CJRT_U32: return F_INT;
    case CJRT_U64: return F_UINT64;
    case CJRT_F16: case CJRT_F32: case CJRT_F64: return F_FLOAT;
    case CJRT_C64: case CJRT_C128: return F_COMPLEX;
    case CJRT_S4: case CJRT_U4: case CJRT_S2: case CJRT_U2: case CJRT_S1: case CJRT_U1:
      return F_ML_INT;
    default: return F_ML_FLOAT;
  }
}

/* Whether `s` (a decimal) reads back as exactly the value `bits` of type ft. */
static bool round_trips(cjrt_dtype ft, const char *s, double v) {
  if (ft == CJRT_F64) return strtod(s, NULL) == v;
  if (ft == CJRT_F32) return strtof(s, NULL) == (float)v;
  uint64_t want = cj_float_encode((cj_dtype)ft, v);
  return cj_float_encode((cj_dtype)ft, strtod(s, NULL)) == want;
}

/* The shortest significant digits that identify finite nonzero v in type ft: digits (no dot,
 * no sign) and the decimal exponent of the first digit (v = d.ddd x 10^exp). */
static void shortest_digits(cjrt_dtype ft, double v, char *digits, int *exp10) {
  char buf[64];
  double a = fabs(v);
  for (int p = 1; p <= 17; p++) {
    snprintf(buf, sizeof buf, "%.*e", p - 1, a);
    if (round_trips(ft, buf, a) || p == 17) break;
  }
  /* buf is "d.ddde[+-]xx" */
  char *e = strchr(buf, 'e');
  *exp10 = atoi(e + 1);
  size_t n = 0;
  for (char *q = buf; q < e; q++)
    if (isdigit((unsigned char)*q)) digits[n++] = *q;
  while (n > 1 && digits[n - 1] == '0') n--;
  digits[n] = 0;
}

/* The start of positional and scientific: sign is what to print before the digits; a zero is
 * written out ("0", no fraction digits) and false returned, else digits and *e10 are v's
 * shortest digits and decimal exponent. */
static bool start_digits(cjrt_dtype ft, double v, bool plus, char sign[2], char *ip, char *fp,
                         char digits[32], int *e10) {
  double a = fabs(v);
  sign[0] = signbit(v) ? '-' : (plus ? '+' : 0);
  sign[1] = 0;
  if (a == 0) {
    sprintf(ip, "%s0", sign);
    fp[0] = 0;
    return false;
  }
  shortest_digits(ft, a, digits, e10);
  return true;
}

/* Splits a printf-rounded "int.frac" in buf (changed) into ip (sign first) and fp (frac without
 * trailing zeros). */
static void split_rounded(char *buf, const char *sign, char *ip, char *fp) {
  char *dot = strchr(buf, '.');
  size_t flen = 0;
  if (dot) {
    *dot = 0;
    flen = strlen(dot + 1);
    while (flen && dot[flen] == '0') flen--;
    dot[flen + 1] = 0;
  }
  sprintf(ip, "%s%s", sign, buf);
  strcpy(fp, dot ? dot + 1 : "");
}

/* numpy's dragon4_positional(unique=True, precision=prec, fractional) for finite v, trim '.':
 * int part (with sign) and fraction digits (possibly empty). */
static void positional(cjrt_dtype ft, double v, int prec, bool plus, char *ip, char *fp) {
  char digits[32], sign[2];
  int e10 = 0;
  double a = fabs(v);
  if (!start_digits(ft, v, plus, sign, ip, fp, digits, &e10)) return;
  int nd = (int)strlen(digits);
  int frac_digits = nd - 1 - e10; /* digits after the point */
  if (frac_digits > prec) {
    /* cut off: round the exact value at prec fractional digits */
    char buf[400];
    snprintf(buf, sizeof buf, "%.*f", prec, a);
    split_rounded(buf, sign, ip, fp);
    return;
  }
  /* integer part */
  char *q = ip;
  if (sign[0]) *q++ = sign[0];
  if (e10 < 0) {
    *q++ = '0';
  } else {
    for (int k = 0; k <= e10; k++) *q++ = k < nd ? digits[k] : '0';
  }
  *q = 0;
  /* fraction */
  q = fp;
  for (int k = e10 + 1; k < nd; k++) *q++ = k < 0 ? '0' : digits[k];
  if (e10 < -1) {
    /* leading zeros after the point */
    q = fp;
    for (int k = 0; k < -e10 - 1; k++) *q++ = '0';
    for (int k = 0; k < nd; k++) *q++ = digits[k];
  }
  *q = 0;
}

/* numpy's dragon4_scientific(unique=True, precision=prec) for finite v: mantissa int part (sign
 * and one digit), fraction digits, exponent value. Returns the exponent. */
static int scientific(cjrt_dtype ft, double v, int prec, bool plus, char *ip, char *fp) {
  char digits[32], sign[2];
  int e10 = 0;
  double a = fabs(v);
  if (!start_digits(ft, v, plus, sign, ip, fp, digits, &e10)) return 0;
  int nd = (int)strlen(digits);
  if (nd - 1 > prec) {
    char buf[64];
    snprintf(buf, sizeof buf, "%.*e", prec, a);
    char *e = strchr(buf, 'e');
    e10 = atoi(e + 1);
    *e = 0;
    split_rounded(buf, sign, ip, fp);
    return e10;
  }
  sprintf(ip, "%s%c", sign, digits[0]);
  strcpy(fp, digits + 1);
  return e10;
}

/* The data-dependent float format numpy's FloatingFormat computes over the shown values. */
typedef struct {
  cjrt_dtype ft; /* F16, F32 or F64 */
  bool plus;     /* sign '+' (complex imaginary parts) */
  bool exp_format;
  int precision, min_digits;
  int pad_left, pad_right, exp_size;
  bool trim_k; /* trim 'k' (keep zeros) vs '.' */
} float_fmt;

static double round_to(cjrt_dtype ft, double v) {
  if (ft == CJRT_F32) return (double)(float)v;
  if (ft == CJRT_F16) return cj_float_decode(CJ_F16, cj_float_encode(CJ_F16, v));
  return v;
}

static void float_fmt_fill(float_fmt *f, cjrt_dtype ft, bool plus, const double *vals, size_t n) {
  memset(f, 0, sizeof *f);
  f->ft = ft;
  f->plus = plus;
  f->precision = 8;
  double maxv = 0, minv = INFINITY;
  size_t nfinite = 0, nnz = 0;
  bool neginf = false;
  for (size_t i = 0; i < n; i++) {
    double v = vals[i];
    if (isinf(v) && v < 0) neginf = true;
    if (!isfinite(v)) continue;
    nfinite++;
    if (v == 0) continue;
    nnz++;
    double a = fabs(v);
    if (a > maxv) maxv = a;
    if (a < minv) minv = a;
  }
  if (nnz) {
    double ratio = round_to(ft, maxv / minv);
    /* numpy >= 2.3 takes the type's precision into account: 10^min(8, finfo.precision) */
    double cutoff = ft == CJRT_F16 ? 1e3 : ft == CJRT_F32 ? 1e6 : 1e8;
    if (maxv >= cutoff || minv < 0.0001 || ratio > 1000.) f->exp_format = true;
  }
  char ip[400], fp[400];
  if (nfinite == 0) {
    f->pad_left = f->pad_right = 0;
    f->exp_size = -1;
    f->min_digits = 0;
  } else if (f->exp_format) {
    int max_frac = 0, max_int = 0, max_exp = 0;
    for (size_t i = 0; i < n; i++) {
      if (!isfinite(vals[i])) continue;
      int e = scientific(ft, vals[i], 8, plus, ip, fp);
      char eb[16];
      snprintf(eb, sizeof eb, "%d", abs(e));
      int el = (int)strlen(eb) < 2 ? 2 : (int)strlen(eb);
      if (el > max_exp) max_exp = el;
      if ((int)strlen(fp) > max_frac) max_frac = (int)strlen(fp);
      if ((int)strlen(ip) > max_int) max_int = (int)strlen(ip);
    }
    f->exp_size = max_exp;
    f->trim_k = true;
    f->precision = max_frac;
    f->min_digits = max_frac;
    f->pad_left = max_int;
    f->pad_right = f->exp_size + 2 + f->precision;
  } else {
    int max_frac = 0, max_int = 0;
    for (size_t i = 0; i < n; i++) {
      if (!isfinite(vals[i])) continue;
      positional(ft, vals[i], 8, plus, ip, fp);
      if ((int)strlen(fp) > max_frac) max_frac = (int)strlen(fp);
      if ((int)strlen(ip) > max_int) max_int = (int)strlen(ip);
    }
    f->pad_left = max_int;
    f->pad_right = max_frac;
    f->exp_size = -1;
    f->min_digits = 0;
    f->trim_k = false;
  }
  if (nfinite != n) {
    bool ni = plus || neginf;
    int offset = f->pad_right + 1;
    if (3 - offset > f->pad_left) f->pad_left = 3 - offset;
    if (3 + (int)ni - offset > f->pad_left) f->pad_left = 3 + (int)ni - offset;
  }
}

static void float_fmt_apply(const float_fmt *f, double v, cjrt_sb *sb) {
  char ip[400], fp[400];
  if (!isfinite(v)) {
    const char *s = isnan(v) ? (f->plus ? "+nan" : "nan")
                             : (v < 0 ? "-inf" : (f->plus ? "+inf" : "inf"));
    int w = f->pad_left + f->pad_right + 1 - (int)strlen(s);
    if (w > 0) cjrt_sb_spaces(sb, (size_t)w);
    cjrt_sb_puts(sb, s);
    return;
  }
  if (f->exp_format) {
    int e = scientific(f->ft, v, f->precision, f->plus, ip, fp);
    size_t fl = strlen(fp);
    int lw = f->pad_left - (int)strlen(ip);
    if (lw > 0) cjrt_sb_spaces(sb, (size_t)lw);
    cjrt_sb_puts(sb, ip);
    cjrt_sb_puts(sb, ".");
    cjrt_sb_puts(sb, fp);
    for (int k = (int)fl; k < f->min_digits; k++) cjrt_sb_puts(sb, "0");
    cjrt_sb_printf(sb, "e%c%0*d", e < 0 ? '-' : '+', f->exp_size, abs(e));
    return;
  }
  positional(f->ft, v, f->precision, f->plus, ip, fp);
  int lw = f->pad_left - (int)strlen(ip);
  if (lw > 0) cjrt_sb_spaces(sb, (size_t)lw);
  cjrt_sb_puts(sb, ip);
  cjrt_sb_puts(sb, ".");
  cjrt_sb_puts(sb, fp);
  int rw = f->pad_right - (int)strlen(fp);
  if (rw > 0) cjrt_sb_spaces(sb, (size_t)rw);
}

/* numpy's scalar str() of a float (repr rules: positional between 1e-4 and a per-type bound,
 * else scientific; always a digit after the point in positional form). */
static void float_scalar_str(cjrt_dtype ft, double v, bool trim_zero_frac, cjrt_sb *sb) {
  if (isnan(v)) {
    cjrt_sb_puts(sb, "nan");
    return;
  }
  if (isinf(v)) {
    cjrt_sb_puts(sb, v < 0 ? "-inf" : "inf");
    return;
  }
  double bound = ft == CJRT_F16 ? 1e3 : ft == CJRT_F32 ? 1e6 : 1e16;
  double a = fabs(v);
  char ip[400], fp[400];
  if (a == 0 || (a >= 1e-4 && a < bound)) {
    positional(ft, v, 400, false, ip, fp);
    cjrt_sb_puts(sb, ip);
    if (fp[0]) {
      cjrt_sb_printf(sb, ".%s", fp);
    } else if (!trim_zero_frac) {
      cjrt_sb_puts(sb, ".0");
    }
    return;
  }
  int e = scientific(ft, v, 400, false, ip, fp);
  cjrt_sb_puts(sb, ip);
  if (fp[0]) cjrt_sb_printf(sb, ".%s", fp);
  cjrt_sb_printf(sb, "e%c%02d", e < 0 ? '-' : '+', abs(e));
}

/* ml_dtypes' str() of its scalars: C++ stream output of the value as a float (%g). */
static void ml_float_str(double v, cjrt_sb *sb) {
  if (isnan(v)) {
    cjrt_sb_puts(sb, "nan");
  } else if (isinf(v)) {
    cjrt_sb_puts(sb, v < 0 ? "-inf" : "inf");
  } else {
    cjrt_sb_printf(sb, "%g", (double)(float)v);
  }
}

typedef struct {
  const cjrt_array *a;
  fkind kind;
  cjrt_dtype comp; /* component float type for floats/complex */
  size_t es;
  float_fmt re, im;
  int int_width;
  bool summarize;
  int64_t strides[64];
} printer;

static double get_float(const printer *pr, int64_t i, int part) {
  const char *p = (const char *)pr->a->data;
  cjrt_dtype dt = pr->a->dtype;
  switch (dt) {
    case CJRT_F32: {
      float f;
      memcpy(&f, p + i * 4, 4);
      return f;
    }
    case CJRT_F64: {
      double d;
      memcpy(&d, p + i * 8, 8);
      return d;
    }
    case CJRT_C64: {
      float f;
      memcpy(&f, p + i * 8 + part * 4, 4);
      return f;
    }
    case CJRT_C128: {
      double d;
      memcpy(&d, p + i * 16 + part * 8, 8);
      return d;
    }
    default: return cj_elem_get_f64((cj_dtype)dt, p, (size_t)i);
  }
}

static void format_elem(const printer *pr, int64_t i, cjrt_sb *sb) {
  const cjrt_array *a = pr->a;
  switch (pr->kind) {
    case F_BOOL:
      cjrt_sb_puts(sb, ((const uint8_t *)a->data)[i] ? " True" : "False");
      break;
    case F_INT:
      cjrt_sb_printf(sb, "%*lld", pr->int_width,
                     (long long)cj_elem_get_i64((cj_dtype)a->dtype, a->data, (size_t)i));
      break;
    case F_UINT64: {
      uint64_t u;
      memcpy(&u, (const char *)a->data + i * 8, 8);
      cjrt_sb_printf(sb, "%*llu", pr->int_width, (unsigned long long)u);
      break;
    }
    case F_ML_INT:
      cjrt_sb_printf(sb, "%lld", (long long)cj_elem_get_i64((cj_dtype)a->dtype, a->data, (size_t)i));
      break;
    case F_ML_FLOAT: ml_float_str(get_float(pr, i, 0), sb); break;
    case F_FLOAT: float_fmt_apply(&pr->re, get_float(pr, i, 0), sb); break;
    case F_COMPLEX: {
      float_fmt_apply(&pr->re, get_float(pr, i, 0), sb);
      cjrt_sb im = {0};
      float_fmt_apply(&pr->im, get_float(pr, i, 1), &im);
      if (im.failed) {
        sb->failed = true;
      } else if (im.p) {
        size_t end = im.len;
        while (end && im.p[end - 1] == ' ') end--;
        cjrt_sb_add(sb, im.p, end);
        cjrt_sb_puts(sb, "j");
        cjrt_sb_spaces(sb, im.len - end);
      }
      cjrt_sb_free(&im);
      break;
    }
  }
}

enum { EDGE = 3, LINE_WIDTH = 75, THRESHOLD = 1000 };

/* Visits the shown elements (all, or the edge items of each axis when summarizing). */
typedef void (*visit_fn)(void *ctx, int64_t flat);
static void visit_shown(const printer *pr, size_t axis, int64_t off, visit_fn fn, void *ctx) {
  const cjrt_array *a = pr->a;
  if (axis == a->rank) {
    fn(ctx, off);
    return;
  }
  int64_t n = a->dims[axis];
  bool sum = pr->summarize && n > 2 * EDGE;
  for (int64_t i = 0; i < n; i++) {
    if (sum && i == EDGE) i = n - EDGE;
    visit_shown(pr, axis + 1, off + i * pr->strides[axis], fn, ctx);
  }
}

typedef struct {
  const printer *pr;
  double *re, *im;
  size_t n;
  int64_t imin, imax;
  uint64_t umax;
} gather_ctx;

static void gather(void *vctx, int64_t flat) {
  gather_ctx *g = vctx;
  const printer *pr = g->pr;
  if (pr->kind == F_FLOAT || pr->kind == F_COMPLEX) {
    g->re[g->n] = get_float(pr, flat, 0);
    if (pr->kind == F_COMPLEX) g->im[g->n] = get_float(pr, flat, 1);
  } else if (pr->kind == F_INT) {
    int64_t v = cj_elem_get_i64((cj_dtype)pr->a->dtype, pr->a->data, (size_t)flat);
    if (g->n == 0 || v < g->imin) g->imin = v;
    if (g->n == 0 || v > g->imax) g->imax = v;
  } else if (pr->kind == F_UINT64) {
    uint64_t u;
    memcpy(&u, (const char *)pr->a->data + flat * 8, 8);
    if (g->n == 0 || u > g->umax) g->umax = u;
  }
  g->n++;
}

static void extend_line(cjrt_sb *s, cjrt_sb *line, const char *word, size_t wlen, int width,
                        size_t indent) {
  bool wrap = (int)(line->len + wlen) > width;
  if (line->len <= indent) wrap = false;
  if (wrap) {
    size_t end = line->len;
    while (end && line->p[end - 1] == ' ') end--;
    cjrt_sb_add(s, line->p ? line->p : "", end);
    cjrt_sb_puts(s, "\n");
    line->len = 0;
    if (line->p) line->p[0] = 0;
    cjrt_sb_spaces(line, indent);
  }
  cjrt_sb_add(line, word, wlen);
}

/* numpy's _formatArray recursion; appends the text of the sub-array at `off` to out. */
static void recurse(const printer *pr, size_t axis, int64_t off, size_t indent, int width,
                    cjrt_sb *out) {
  const cjrt_array *a = pr->a;
  if (axis == a->rank) {
    format_elem(pr, off, out);
    return;
  }
  size_t axes_left = a->rank - axis;
  int next_width = width - 1;
  int64_t n = a->dims[axis];
  bool show_summary = pr->summarize && 2 * EDGE < n;
  int64_t lead = show_summary ? EDGE : 0;
  int64_t trail = show_summary ? EDGE : n;
  cjrt_sb s = {0};
  if (axes_left == 1) {
    int elem_width = width - 1;
    cjrt_sb line = {0};
    cjrt_sb_spaces(&line, indent);
    cjrt_sb word = {0};
    for (int64_t i = 0; i < lead; i++) {
      word.len = 0;
      recurse(pr, axis + 1, off + i * pr->strides[axis], indent + 1, next_width, &word);
      extend_line(&s, &line, word.p ? word.p : "", word.len, elem_width, indent);
      cjrt_sb_puts(&line, " ");
    }
    if (show_summary) {
      extend_line(&s, &line, "...", 3, elem_width, indent);
      cjrt_sb_puts(&line, " ");
    }
    for (int64_t i = trail; i > 1; i--) {
      word.len = 0;
      recurse(pr, axis + 1, off + (n - i) * pr->strides[axis], indent + 1, next_width, &word);
      extend_line(&s, &line, word.p ? word.p : "", word.len, elem_width, indent);
      cjrt_sb_puts(&line, " ");
    }
    word.len = 0;
    recurse(pr, axis + 1, off + (n - 1) * pr->strides[axis], indent + 1, next_width, &word);
    extend_line(&s, &line, word.p ? word.p : "", word.len, elem_width, indent);
    cjrt_sb_add(&s, line.p ? line.p : "", line.len);
    if (line.failed || word.failed) s.failed = true;
    cjrt_sb_free(&line);
    cjrt_sb_free(&word);
  } else {
    char sep[70];
    size_t nl = axes_left - 1 < sizeof sep - 1 ? axes_left - 1 : sizeof sep - 1;
    memset(sep, '\n', nl);
    sep[nl] = 0;
    for (int64_t i = 0; i < lead; i++) {
      cjrt_sb_spaces(&s, indent);
      recurse(pr, axis + 1, off + i * pr->strides[axis], indent + 1, next_width, &s);
      cjrt_sb_puts(&s, sep);
    }
    if (show_summary) {
      cjrt_sb_spaces(&s, indent);
      cjrt_sb_puts(&s, "...");
      cjrt_sb_puts(&s, sep);
    }
    for (int64_t i = trail; i > 1; i--) {
      cjrt_sb_spaces(&s, indent);
      recurse(pr, axis + 1, off + (n - i) * pr->strides[axis], indent + 1, next_width, &s);
      cjrt_sb_puts(&s, sep);
    }
    cjrt_sb_spaces(&s, indent);
    recurse(pr, axis + 1, off + (n - 1) * pr->strides[axis], indent + 1, next_width, &s);
  }
  cjrt_sb_puts(out, "[");
  if (s.p && s.len >= indent) cjrt_sb_add(out, s.p + indent, s.len - indent);
  cjrt_sb_puts(out, "]");
  if (s.failed) out->failed = true;
  cjrt_sb_free(&s);
}

static void scalar_str(const printer *pr, cjrt_sb *sb) {
  const cjrt_array *a = pr->a;
  switch (pr->kind) {
    case F_BOOL: cjrt_sb_puts(sb, ((const uint8_t *)a->data)[0] ? "True" : "False"); break;
    case F_INT:
    case F_ML_INT:
      cjrt_sb_printf(sb, "%lld", (long long)cj_elem_get_i64((cj_dtype)a->dtype, a->data, 0));
      break;
    case F_UINT64: {
      uint64_t u;
      memcpy(&u, a->data, 8);
      cjrt_sb_printf(sb, "%llu", (unsigned long long)u);
      break;
    }
    case F_ML_FLOAT: ml_float_str(get_float(pr, 0, 0), sb); break;
    case F_FLOAT: float_scalar_str(a->dtype, get_float(pr, 0, 0), false, sb); break;
    case F_COMPLEX: {
      double re = get_float(pr, 0, 0), im = get_float(pr, 0, 1);
      if (re == 0 && !signbit(re)) {
        float_scalar_str(pr->comp, im, true, sb);
        cjrt_sb_puts(sb, "j");
      } else {
        cjrt_sb_puts(sb, "(");
        float_scalar_str(pr->comp, re, true, sb);
        if (!(signbit(im) && !isnan(im))) cjrt_sb_puts(sb, "+");
        float_scalar_str(pr->comp, im, true, sb);
        cjrt_sb_puts(sb, "j)");
      }
      break;
    }
  }
}

CJRT_API cjrt_error *cjrt_array_format(const cjrt_array *a, char **out_text) {
  *out_text = NULL;
  if (!a || !cjrt__dtype_valid_array(a->dtype))
    return cjrt__error(CJRT_INVALID_ARGUMENT, "format: not an array of values");
  if (a->rank > 64) return cjrt__error(CJRT_INVALID_ARGUMENT, "format: rank %zu above 64", a->rank);
  int64_t n = cjrt_array_num_elements(a);
  if (n < 0) return cjrt__error(CJRT_INVALID_ARGUMENT, "format: bad dims");
  if ((size_t)n * cjrt_dtype_size(a->dtype) > a->nbytes || (n && !a->data))
    return cjrt__error(CJRT_INVALID_ARGUMENT, "format: %zu data bytes for %lld elements of %s",
                       a->nbytes, (long long)n, cjrt_dtype_name(a->dtype));
  printer pr = {.a = a, .kind = format_kind(a->dtype), .es = cjrt_dtype_size(a->dtype)};
  pr.comp = a->dtype == CJRT_C64 ? CJRT_F32 : a->dtype == CJRT_C128 ? CJRT_F64 : a->dtype;
  cjrt_sb sb = {0};
  if (a->rank == 0) {
    scalar_str(&pr, &sb);
    return cjrt_sb_finish(&sb, out_text);
  }
  if (n == 0) {
    cjrt_sb_puts(&sb, "[]");
    return cjrt_sb_finish(&sb, out_text);
  }
  int64_t st = 1;
  for (size_t d = a->rank; d-- > 0;) {
    pr.strides[d] = st;
    st *= a->dims[d];
  }
  pr.summarize = n > THRESHOLD;
  gather_ctx g = {.pr = &pr};
  if (pr.kind == F_FLOAT || pr.kind == F_COMPLEX) {
    g.re = malloc((size_t)n * sizeof(double));
    g.im = malloc((size_t)n * sizeof(double));
    if (!g.re || !g.im) {
      free(g.re);
      free(g.im);
      return cjrt__oom();
    }
  }
  visit_shown(&pr, 0, 0, gather, &g);
  if (pr.kind == F_FLOAT || pr.kind == F_COMPLEX) {
    float_fmt_fill(&pr.re, pr.comp, false, g.re, g.n);
    if (pr.kind == F_COMPLEX) float_fmt_fill(&pr.im, pr.comp, true, g.im, g.n);
  } else if (pr.kind == F_INT) {
    char b1[32], b2[32];
    int l1 = snprintf(b1, sizeof b1, "%lld", (long long)g.imin);
    int l2 = snprintf(b2, sizeof b2, "%lld", (long long)g.imax);
    pr.int_width = l1 > l2 ? l1 : l2;
  } else if (pr.kind == F_UINT64) {
    char b1[32];
    int l1 = snprintf(b1, sizeof b1, "%llu", (unsigned long long)g.umax);
    pr.int_width = l1 > 1 ? l1 : 1;
  }
  free(g.re);
  free(g.im);
  recurse(&pr, 0, 0, 1, LINE_WIDTH, &sb);
  return cjrt_sb_finish(&sb, out_text);
}
