/* libcjrt: .npy reader and writer (numpy's format: magic "\x93NUMPY", version, header length,
 * a Python dict literal {'descr', 'fortran_order', 'shape'} padded to 64 bytes, then raw data). */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cjrt/npy.h"
#include "loader/util.h"

/* ---- descr <-> dtype ---- */

CJRT_API const char *cjrt_npy_descr(cjrt_dtype dt) {
  switch (dt) {
    case CJRT_PRED: return "|b1";
    case CJRT_S8: return "|i1";
    case CJRT_S16: return "<i2";
    case CJRT_S32: return "<i4";
    case CJRT_S64: return "<i8";
    case CJRT_U8: return "|u1";
    case CJRT_U16: return "<u2";
    case CJRT_U32: return "<u4";
    case CJRT_U64: return "<u8";
    case CJRT_F16: return "<f2";
    case CJRT_F32: return "<f4";
    case CJRT_F64: return "<f8";
    case CJRT_C64: return "<c8";
    case CJRT_C128: return "<c16";
    case CJRT_BF16: return "<V2"; /* as ml_dtypes writes it */
    default:
      if (cjrt__dtype_valid_array(dt) && cjrt_dtype_size(dt) == 1) return "<V1";
      return NULL;
  }
}

typedef struct {
  cjrt_dtype dt;      /* the numeric type, or INVALID for raw 'V' */
  size_t size;        /* item size in bytes */
  bool swap;          /* big-endian data */
  bool raw;           /* 'V' (void) data: the type must come from elsewhere */
  cjrt_dtype raw_default; /* for raw/f1 descrs: the type ml_dtypes' writer implies, if unique */
} descr_info;

static bool parse_descr(const char *d, descr_info *out) {
  memset(out, 0, sizeof *out);
  char order = d[0];
  if (order != '<' && order != '>' && order != '|' && order != '=') return false;
  char kind = d[1];
  if (!kind) return false;
  const char *num = d + 2;
  if (!*num) return false;
  for (const char *q = num; *q; q++)
    if (!isdigit((unsigned char)*q)) return false;
  long n = strtol(num, NULL, 10);
  if (n <= 0 || n > 1 << 20) return false;
  out->size = (size_t)n;
  out->swap = order == '>' && n > 1;
  switch (kind) {
    case 'b':
      if (n != 1) return false;
      out->dt = CJRT_PRED;
      return true;
    case 'i':
      out->dt = n == 1 ? CJRT_S8 : n == 2 ? CJRT_S16 : n == 4 ? CJRT_S32 : n == 8 ? CJRT_S64 : CJRT_INVALID;
      return out->dt != CJRT_INVALID;
    case 'u':
      out->dt = n == 1 ? CJRT_U8 : n == 2 ? CJRT_U16 : n == 4 ? CJRT_U32 : n == 8 ? CJRT_U64 : CJRT_INVALID;
      return out->dt != CJRT_INVALID;
    case 'f':
      if (n == 1) { /* ml_dtypes writes float8_e5m2 as '<f1' */
        out->raw = true;
        out->raw_default = CJRT_F8E5M2;
        return true;
      }
      out->dt = n == 2 ? CJRT_F16 : n == 4 ? CJRT_F32 : n == 8 ? CJRT_F64 : CJRT_INVALID;
      return out->dt != CJRT_INVALID;
    case 'c':
      out->dt = n == 8 ? CJRT_C64 : n == 16 ? CJRT_C128 : CJRT_INVALID;
      out->swap = order == '>';
      return out->dt != CJRT_INVALID;
    case 'V':
      out->raw = true;
      out->swap = false;
      out->raw_default = n == 2 ? CJRT_BF16 : CJRT_INVALID;
      return true;
    default: return false;
  }
}

/* ---- header parsing: a small reader for the Python dict literal numpy writes ---- */

typedef struct {
  const char *s;
  size_t pos, len;
} hdr;

static void hskip(hdr *h) {
  while (h->pos < h->len && isspace((unsigned char)h->s[h->pos])) h->pos++;
}
static bool hchar(hdr *h, char c) {
  hskip(h);
  if (h->pos < h->len && h->s[h->pos] == c) {
    h->pos++;
    return true;
  }
  return false;
}
static bool hstring(hdr *h, char *buf, size_t cap) {
  hskip(h);
  if (h->pos >= h->len) return false;
  char q = h->s[h->pos];
  if (q != '\'' && q != '"') return false;
  h->pos++;
  size_t n = 0;
  while (h->pos < h->len && h->s[h->pos] != q) {
    if (n + 1 >= cap) return false;
    buf[n++] = h->s[h->pos++];
  }
  if (h->pos >= h->len) return false;
  h->pos++;
  buf[n] = 0;
  return true;
}

/* Skips one Python value (used to describe an unsupported descr in the error message). */
static size_t hvalue_end(hdr *h) {
  int depth = 0;
  size_t p = h->pos;
  char q = 0;
  for (; p < h->len; p++) {
    char c = h->s[p];
    if (q) {
      if (c == q) q = 0;
      continue;
    }
    if (c == '\'' || c == '"') q = c;
    else if (c == '[' || c == '(' || c == '{') depth++;
    else if (c == ']' || c == ')' || c == '}') {
      if (depth == 0) break;
      depth--;
    } else if (c == ',' && depth == 0) break;
  }
  return p;
}

static cjrt_error *parse_header(const char *what, const char *s, size_t len, char *descr,
                                size_t dcap, bool *fortran, int64_t *dims, size_t *rank) {
  hdr h = {s, 0, len};
  bool have_descr = false, have_fortran = false, have_shape = false;
  if (!hchar(&h, '{')) return cjrt__error(CJRT_INVALID_ARGUMENT, "%s: header is not a dict", what);
  for (;;) {
    if (hchar(&h, '}')) break;
    char key[32];
    if (!hstring(&h, key, sizeof key) || !hchar(&h, ':'))
      return cjrt__error(CJRT_INVALID_ARGUMENT, "%s: malformed header at byte %zu", what, h.pos);
    hskip(&h);
    if (!strcmp(key, "descr")) {
      size_t start = h.pos;
      if (!hstring(&h, descr, dcap)) {
        size_t end = hvalue_end(&h);
        return cjrt__error(CJRT_INVALID_ARGUMENT,
                           "%s: unsupported dtype %.*s (only plain numeric types are read)", what,
                           (int)(end - start > 80 ? 80 : end - start), s + start);
      }
      have_descr = true;
    } else if (!strcmp(key, "fortran_order")) {
      if (h.len - h.pos >= 4 && !strncmp(s + h.pos, "True", 4)) {
        *fortran = true;
        h.pos += 4;
      } else if (h.len - h.pos >= 5 && !strncmp(s + h.pos, "False", 5)) {
        *fortran = false;
        h.pos += 5;
      } else {
        return cjrt__error(CJRT_INVALID_ARGUMENT, "%s: fortran_order is not True/False", what);
      }
      have_fortran = true;
    } else if (!strcmp(key, "shape")) {
      if (!hchar(&h, '('))
        return cjrt__error(CJRT_INVALID_ARGUMENT, "%s: shape is not a tuple", what);
      *rank = 0;
      for (;;) {
        if (hchar(&h, ')')) break;
        hskip(&h);
        char *end;
        errno = 0;
        long long v = strtoll(s + h.pos, &end, 10);
        if (end == s + h.pos || errno || v < 0)
          return cjrt__error(CJRT_INVALID_ARGUMENT, "%s: bad dimension in shape at byte %zu", what,
                             h.pos);
        h.pos = (size_t)(end - s);
        if (h.pos < h.len && (s[h.pos] == 'L' || s[h.pos] == 'l')) h.pos++; /* Python 2 longs */
        if (*rank >= 64) return cjrt__error(CJRT_INVALID_ARGUMENT, "%s: rank above 64", what);
        dims[(*rank)++] = v;
        if (hchar(&h, ',')) continue;
        if (hchar(&h, ')')) break;
        return cjrt__error(CJRT_INVALID_ARGUMENT, "%s: malformed shape at byte %zu", what, h.pos);
      }
      have_shape = true;
    } else {
      return cjrt__error(CJRT_INVALID_ARGUMENT, "%s: unexpected header key '%s'", what, key);
    }
    if (hchar(&h, ',')) continue;
    if (hchar(&h, '}')) break;
    return cjrt__error(CJRT_INVALID_ARGUMENT, "%s: malformed header at byte %zu", what, h.pos);
  }
  if (!have_descr || !have_fortran || !have_shape)
    return cjrt__error(CJRT_INVALID_ARGUMENT, "%s: header lacks %s", what,
                       !have_descr ? "'descr'" : !have_fortran ? "'fortran_order'" : "'shape'");
  return NULL;
}

static void swap_bytes(uint8_t *p, size_t n, size_t unit) {
  for (size_t i = 0; i < n; i += unit)
    for (size_t a = 0, b = unit - 1; a < b; a++, b--) {
      uint8_t t = p[i + a];
      p[i + a] = p[i + b];
      p[i + b] = t;
    }
}

/* Copies between C order and Fortran order: dst[c-index] = src[f-index] when to_c. */
static void reorder(const uint8_t *src, uint8_t *dst, const int64_t *dims, size_t rank, size_t es,
                    int64_t n, bool to_c) {
  int64_t fstr[64], idx[64];
  int64_t st = 1;
  for (size_t d = 0; d < rank; d++) {
    fstr[d] = st;
    st *= dims[d];
    idx[d] = 0;
  }
  int64_t foff = 0;
  for (int64_t c = 0; c < n; c++) {
    if (to_c) memcpy(dst + (size_t)c * es, src + (size_t)foff * es, es);
    else memcpy(dst + (size_t)foff * es, src + (size_t)c * es, es);
    for (size_t d = rank; d-- > 0;) { /* advance the C-order index, last dim fastest */
      idx[d]++;
      foff += fstr[d];
      if (idx[d] < dims[d]) break;
      foff -= fstr[d] * idx[d];
      idx[d] = 0;
    }
  }
}

CJRT_API cjrt_error *cjrt_npy_read_mem(const void *bytes, size_t size, cjrt_dtype type,
                                       const char *what, cjrt_array *out) {
  memset(out, 0, sizeof *out);
  if (!what) what = "npy";
  const uint8_t *b = bytes;
  if (!b || size < 10 || memcmp(b, "\x93NUMPY", 6) != 0)
    return cjrt__error(CJRT_INVALID_ARGUMENT, "%s: not a .npy file (no \\x93NUMPY magic)", what);
  int major = b[6];
  size_t hlen, hstart;
  if (major == 1) {
    hlen = (size_t)b[8] | (size_t)b[9] << 8;
    hstart = 10;
  } else if (major == 2 || major == 3) {
    if (size < 12) return cjrt__error(CJRT_INVALID_ARGUMENT, "%s: truncated header", what);
    hlen = (size_t)b[8] | (size_t)b[9] << 8 | (size_t)b[10] << 16 | (size_t)b[11] << 24;
    hstart = 12;
  } else {
    return cjrt__error(CJRT_UNIMPLEMENTED, "%s: .npy format version %d.%d is not supported", what,
                       major, b[7]);
  }
  if (hlen > size - hstart)
    return cjrt__error(CJRT_INVALID_ARGUMENT, "%s: truncated header (%zu bytes announced, %zu present)",
                       what, hlen, size - hstart);
  char descr[64];
  bool fortran = false;
  int64_t dims[64];
  size_t rank = 0;
  /* parsed from a NUL-terminated copy: number parsing must not run past the header */
  char *header = malloc(hlen + 1);
  if (!header) return cjrt__oom();
  memcpy(header, b + hstart, hlen);
  header[hlen] = 0;
  cjrt_error *herr = parse_header(what, header, hlen, descr, sizeof descr, &fortran, dims, &rank);
  free(header);
  if (herr) return herr;
  descr_info di;
  if (!parse_descr(descr, &di))
    return cjrt__error(CJRT_INVALID_ARGUMENT,
                       "%s: unsupported dtype '%s' (bool, integer, float, complex and ml_dtypes' "
                       "types are read)",
                       what, descr);
  cjrt_dtype dt;
  if (di.raw) {
    if (type != CJRT_INVALID) {
      if (!cjrt__dtype_valid_array(type) || cjrt_dtype_size(type) != di.size)
        return cjrt__error(CJRT_INVALID_ARGUMENT,
                           "%s: dtype '%s' holds %zu-byte elements; %s has %zu", what, descr,
                           di.size, cjrt_dtype_name(type), cjrt_dtype_size(type));
      dt = type;
    } else if (di.raw_default != CJRT_INVALID) {
      dt = di.raw_default;
    } else if (di.size == 1) {
      return cjrt__error(CJRT_INVALID_ARGUMENT,
                         "%s: dtype '%s' is a 1-byte ml_dtypes type (float8_*, float6_*, "
                         "float4_e2m1fn, int4, uint4, int2, ...) that the file does not name; "
                         "give the type (e.g. FILE.npy:f8e4m3fn)",
                         what, descr);
    } else {
      return cjrt__error(CJRT_INVALID_ARGUMENT,
                         "%s: dtype '%s' is raw %zu-byte data; give the element type", what, descr,
                         di.size);
    }
  } else {
    dt = di.dt;
    if (type != CJRT_INVALID && type != dt)
      return cjrt__error(CJRT_INVALID_ARGUMENT, "%s: the file holds %s ('%s'), not %s", what,
                         cjrt_dtype_name(dt), descr, cjrt_dtype_name(type));
  }
  size_t es = cjrt_dtype_size(dt);
  int64_t n = cjrt__num_elements(dims, rank, es);
  if (n < 0) return cjrt__error(CJRT_INVALID_ARGUMENT, "%s: shape too large", what);
  size_t nbytes = (size_t)n * es;
  size_t dstart = hstart + hlen;
  if (size - dstart < nbytes)
    return cjrt__error(CJRT_DATA_LOSS, "%s: truncated data: %zu bytes for %lld elements of %s need %zu",
                       what, size - dstart, (long long)n, cjrt_dtype_name(dt), nbytes);
  CJRT_TRY(cjrt_array_alloc(dt, dims, rank, out));
  const uint8_t *src = b + dstart;
  if (fortran && rank > 1) reorder(src, out->data, dims, rank, es, n, true);
  else if (nbytes) memcpy(out->data, src, nbytes);
  if (di.swap) swap_bytes(out->data, nbytes, dt == CJRT_C64 ? 4 : dt == CJRT_C128 ? 8 : es);
  return NULL;
}

CJRT_API cjrt_error *cjrt_npy_read_file(const char *path, cjrt_dtype type, cjrt_array *out) {
  memset(out, 0, sizeof *out);
  void *bytes;
  size_t size;
  CJRT_TRY(cjrt__read_file(path, &bytes, &size));
  cjrt_error *err = cjrt_npy_read_mem(bytes, size, type, path, out);
  free(bytes);
  return err;
}

CJRT_API cjrt_error *cjrt_npy_write_mem(const cjrt_array *a, bool fortran_order, void **out_bytes,
                                        size_t *out_size) {
  *out_bytes = NULL;
  *out_size = 0;
  const char *descr = a ? cjrt_npy_descr(a->dtype) : NULL;
  if (!descr)
    return cjrt__error(CJRT_INVALID_ARGUMENT, "npy: cannot write element type %s",
                       a ? cjrt_dtype_name(a->dtype) : "(null array)");
  size_t es = cjrt_dtype_size(a->dtype);
  int64_t n = cjrt__num_elements(a->dims, a->rank, es);
  if (n < 0 || a->rank > 64) return cjrt__error(CJRT_INVALID_ARGUMENT, "npy: bad shape");
  size_t nbytes = (size_t)n * es;
  if (a->nbytes < nbytes || (nbytes && !a->data))
    return cjrt__error(CJRT_INVALID_ARGUMENT, "npy: array has %zu data bytes, its shape needs %zu",
                       a->nbytes, nbytes);
  cjrt_sb h = {0};
  cjrt_sb_printf(&h, "{'descr': '%s', 'fortran_order': %s, 'shape': (", descr,
                 fortran_order ? "True" : "False");
  for (size_t d = 0; d < a->rank; d++)
    cjrt_sb_printf(&h, d ? ", %lld" : "%lld", (long long)a->dims[d]);
  if (a->rank == 1) cjrt_sb_puts(&h, ",");
  cjrt_sb_puts(&h, "), }");
  if (h.failed) {
    cjrt_sb_free(&h);
    return cjrt__oom();
  }
  /* version 1.0 unless the header needs more than 65535 bytes; total padded to 64 */
  size_t pre = 10;
  size_t total_hdr = (pre + h.len + 1 + 63) / 64 * 64;
  int version = 1;
  if (total_hdr - pre > 65535) {
    pre = 12;
    total_hdr = (pre + h.len + 1 + 63) / 64 * 64;
    version = 2;
  }
  size_t hlen = total_hdr - pre;
  uint8_t *buf = malloc(total_hdr + nbytes);
  if (!buf) {
    cjrt_sb_free(&h);
    return cjrt__oom();
  }
  memcpy(buf, "\x93NUMPY", 6);
  buf[6] = (uint8_t)version;
  buf[7] = 0;
  if (version == 1) {
    buf[8] = (uint8_t)(hlen & 0xff);
    buf[9] = (uint8_t)(hlen >> 8);
  } else {
    for (int k = 0; k < 4; k++) buf[8 + k] = (uint8_t)(hlen >> (8 * k));
  }
  memcpy(buf + pre, h.p, h.len);
  memset(buf + pre + h.len, ' ', hlen - h.len - 1);
  buf[total_hdr - 1] = '\n';
  cjrt_sb_free(&h);
  if (fortran_order && a->rank > 1) reorder(a->data, buf + total_hdr, a->dims, a->rank, es, n, false);
  else if (nbytes) memcpy(buf + total_hdr, a->data, nbytes);
  *out_bytes = buf;
  *out_size = total_hdr + nbytes;
  return NULL;
}

CJRT_API cjrt_error *cjrt_npy_write_file(const char *path, const cjrt_array *a,
                                         bool fortran_order) {
  void *bytes;
  size_t size;
  CJRT_TRY(cjrt_npy_write_mem(a, fortran_order, &bytes, &size));
  FILE *f = fopen(path, "wb");
  if (!f) {
    free(bytes);
    return cjrt__error(CJRT_PERMISSION_DENIED, "cannot create '%s': %s", path, strerror(errno));
  }
  size_t wrote = fwrite(bytes, 1, size, f);
  int cerr = fclose(f);
  free(bytes);
  if (wrote != size || cerr != 0)
    return cjrt__error(CJRT_DATA_LOSS, "error writing '%s'", path);
  return NULL;
}
