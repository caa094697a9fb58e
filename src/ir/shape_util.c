/* cjrt: facts about types and shapes (see shape_util.h). */
#include "ir/shape_util.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const cj_type *cj_shape_elem(const cj_type *t) {
  if (!t) return NULL;
  switch (t->kind) {
    case CJ_TYPE_ELEM:
    case CJ_TYPE_QUANT: return t;
    case CJ_TYPE_TENSOR:
    case CJ_TYPE_UNRANKED: return t->elem;
    default: return NULL;
  }
}

unsigned cj_shape_elem_category(const cj_type *e) {
  if (!e) return 0;
  if (e->kind == CJ_TYPE_QUANT) return cj_shape_is_per_axis(e) ? CJ_EC_QAXIS : CJ_EC_QTENSOR;
  if (e->kind != CJ_TYPE_ELEM) return 0;
  switch (cj_dtype_kindof(e->dtype)) {
    case CJ_DK_BOOL: return CJ_EC_BOOL;
    case CJ_DK_SINT: return CJ_EC_SINT;
    case CJ_DK_UINT: return CJ_EC_UINT;
    case CJ_DK_FLOAT: return CJ_EC_FLOAT;
    case CJ_DK_COMPLEX: return CJ_EC_COMPLEX;
    default: return 0;
  }
}

static void append(char *buf, size_t cap, size_t *len, const char *s) {
  size_t n = strlen(s);
  if (*len + 1 >= cap) return;
  if (n > cap - 1 - *len) n = cap - 1 - *len;
  memcpy(buf + *len, s, n);
  *len += n;
  buf[*len] = 0;
}

const char *cj_shape_category_name(unsigned mask, char *buf, size_t cap) {
  /* tensor kinds first ("boolean, integer, floating-point or complex type"), then quantized */
  const char *names[6];
  int n = 0;
  if (mask & CJ_EC_BOOL) names[n++] = "boolean";
  if ((mask & CJ_EC_INT) == CJ_EC_INT)
    names[n++] = "integer";
  else if (mask & CJ_EC_SINT)
    names[n++] = "signed integer";
  else if (mask & CJ_EC_UINT)
    names[n++] = "unsigned integer";
  if (mask & CJ_EC_FLOAT) names[n++] = "floating-point";
  if (mask & CJ_EC_COMPLEX) names[n++] = "complex";
  size_t len = 0;
  if (!cap) return buf;
  buf[0] = 0;
  if (n) {
    append(buf, cap, &len, "tensor of ");
    for (int i = 0; i < n; i++) {
      append(buf, cap, &len, i == 0 ? "" : i == n - 1 ? " or " : ", ");
      append(buf, cap, &len, names[i]);
    }
    append(buf, cap, &len, " type");
  }
  if (mask & CJ_EC_QUANT) {
    append(buf, cap, &len, n ? " or " : "");
    if ((mask & CJ_EC_QUANT) == CJ_EC_QUANT)
      append(buf, cap, &len, "quantized tensor");
    else if (mask & CJ_EC_QTENSOR)
      append(buf, cap, &len, "per-tensor quantized tensor");
    else
      append(buf, cap, &len, "per-axis quantized tensor");
  }
  return buf;
}

int cj_shape_bitwidth(const cj_type *e) {
  if (!e) return 0;
  if (e->kind == CJ_TYPE_QUANT) return e->quant ? cj_dtype_bits(e->quant->storage) : 0;
  if (e->kind != CJ_TYPE_ELEM) return 0;
  return cj_dtype_bits(e->dtype);
}

static bool quant_baseline_equal(const cj_quant *a, const cj_quant *b) {
  return a->storage == b->storage && a->expressed == b->expressed &&
         a->storage_min == b->storage_min && a->storage_max == b->storage_max &&
         a->axis == b->axis;
}

bool cj_shape_baseline_elem_equal(const cj_type *a, const cj_type *b) {
  if (a == b) return true;
  if (!a || !b) return false;
  if (a->kind == CJ_TYPE_QUANT && b->kind == CJ_TYPE_QUANT && a->quant && b->quant)
    return quant_baseline_equal(a->quant, b->quant);
  return false;
}

bool cj_shape_is_promotable(const cj_type *x, const cj_type *y) {
  if (!x || !y) return false;
  unsigned cx = cj_shape_elem_category(x), cy = cj_shape_elem_category(y);
  if (!cx || !cy) return false;
  if ((cx & CJ_EC_QUANT) || (cy & CJ_EC_QUANT)) {
    if (!(cx & CJ_EC_QUANT) || !(cy & CJ_EC_QUANT)) return false;
    if (x->quant->expressed != y->quant->expressed) return false;
    return cj_dtype_bits(x->quant->storage) <= cj_dtype_bits(y->quant->storage);
  }
  if (cx == CJ_EC_BOOL || cy == CJ_EC_BOOL) return cx == cy;
  bool same = ((cx & CJ_EC_INT) && (cy & CJ_EC_INT)) || (cx == CJ_EC_FLOAT && cy == CJ_EC_FLOAT) ||
              (cx == CJ_EC_COMPLEX && cy == CJ_EC_COMPLEX);
  if (!same) return false;
  return cj_dtype_bits(x->dtype) <= cj_dtype_bits(y->dtype);
}

bool cj_shape_compatible(const cj_type *a, const cj_type *b) {
  if (!a || !b) return false;
  if (a->kind == CJ_TYPE_UNRANKED || b->kind == CJ_TYPE_UNRANKED)
    return (a->kind == CJ_TYPE_UNRANKED || a->kind == CJ_TYPE_TENSOR) &&
           (b->kind == CJ_TYPE_UNRANKED || b->kind == CJ_TYPE_TENSOR);
  if (a->kind != CJ_TYPE_TENSOR || b->kind != CJ_TYPE_TENSOR) return false;
  if (a == b) return true;
  if (a->rank != b->rank) return false;
  for (int32_t i = 0; i < a->rank; i++) {
    int64_t da = a->dims[i], db = b->dims[i];
    if (!cj_shape_dim_compatible(da, db)) return false;
    if (da != CJ_DYN && db == CJ_DYN) {
      int64_t bb = cj_shape_bound(b, i);
      if (bb != CJ_DYN && bb < da) return false;
    }
    if (db != CJ_DYN && da == CJ_DYN) {
      int64_t ba = cj_shape_bound(a, i);
      if (ba != CJ_DYN && ba < db) return false;
    }
  }
  return true;
}

bool cj_shape_type_compatible(const cj_type *a, const cj_type *b) {
  return cj_shape_compatible(a, b) && a->elem == b->elem;
}

bool cj_shape_baseline_compatible(const cj_type *a, const cj_type *b) {
  return cj_shape_compatible(a, b) && cj_shape_baseline_elem_equal(a->elem, b->elem);
}

int64_t cj_shape_dilated(int64_t n, int64_t dilation) {
  if (n == CJ_DYN) return CJ_DYN;
  if (n <= 0) return 0;
  int64_t r;
  if (__builtin_mul_overflow(n - 1, dilation, &r) || __builtin_add_overflow(r, 1, &r))
    return INT64_MAX; /* saturate: no real dimension is this large, so checks then fail */
  return r;
}

int64_t cj_shape_num_windows(int64_t padded, int64_t window, int64_t stride) {
  if (padded == CJ_DYN || window == CJ_DYN) return CJ_DYN;
  if (padded <= 0 || window > padded || stride <= 0) return 0;
  return (padded - window) / stride + 1;
}

/* ---- printing ---- */

typedef struct sbuf {
  char *p;
  size_t len, cap;
  bool full;
} sbuf;

static void sb_printf(sbuf *b, const char *fmt, ...) CJ_PRINTF(2, 3);
static void sb_printf(sbuf *b, const char *fmt, ...) {
  if (b->full) return;
  va_list ap;
  va_start(ap, fmt);
  int w = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
  va_end(ap);
  if (w < 0) return;
  if ((size_t)w >= b->cap - b->len) {
    b->full = true;
    b->len = b->cap - 1;
    if (b->cap >= 4) memcpy(b->p + b->cap - 4, "...", 4);
    return;
  }
  b->len += (size_t)w;
}

static void sb_dtype(sbuf *b, cj_dtype dt) {
  const char *m = cj_dtype_get(dt)->mlir;
  if (dt == CJ_S1) m = "si1";
  sb_printf(b, "%s", m ? m : "<invalid>");
}

static void sb_type(sbuf *b, const cj_type *t, int depth);

static void sb_quant(sbuf *b, const cj_quant *q) {
  sb_printf(b, "!quant.uniform<");
  sb_dtype(b, q->storage);
  /* print the range only when it differs from the storage type's full range */
  int bits = cj_dtype_bits(q->storage);
  bool is_signed = cj_dtype_kindof(q->storage) == CJ_DK_SINT;
  int64_t lo = 0, hi = 0;
  if (bits >= 64) {
    lo = is_signed ? INT64_MIN : 0;
    hi = INT64_MAX;
  } else if (bits > 0) {
    lo = is_signed ? -((int64_t)1 << (bits - 1)) : 0;
    hi = is_signed ? ((int64_t)1 << (bits - 1)) - 1 : ((int64_t)1 << bits) - 1;
  }
  if (q->storage_min != lo || q->storage_max != hi)
    sb_printf(b, "<%lld:%lld>", (long long)q->storage_min, (long long)q->storage_max);
  sb_printf(b, ":");
  sb_dtype(b, q->expressed);
  if (q->axis >= 0) sb_printf(b, ":%d", q->axis);
  sb_printf(b, ", ");
  if (q->axis >= 0) sb_printf(b, "{");
  for (int32_t i = 0; i < q->nscales; i++) {
    sb_printf(b, "%s%g", i ? "," : "", q->scales[i]);
    if (q->zero_points[i]) sb_printf(b, ":%lld", (long long)q->zero_points[i]);
  }
  if (q->axis >= 0) sb_printf(b, "}");
  sb_printf(b, ">");
}

/* types[0..n), comma-separated */
static void sb_types(sbuf *b, const cj_type *const *types, int32_t n, int depth) {
  for (int32_t i = 0; i < n; i++) {
    if (i) sb_printf(b, ", ");
    sb_type(b, types[i], depth);
  }
}

static void sb_type(sbuf *b, const cj_type *t, int depth) {
  if (!t) {
    sb_printf(b, "<null>");
    return;
  }
  if (depth > 16) {
    sb_printf(b, "...");
    return;
  }
  switch (t->kind) {
    case CJ_TYPE_ELEM: sb_dtype(b, t->dtype); return;
    case CJ_TYPE_QUANT:
      if (t->quant) sb_quant(b, t->quant);
      return;
    case CJ_TYPE_TENSOR:
      sb_printf(b, "tensor<");
      for (int32_t i = 0; i < t->rank; i++) {
        if (t->dims[i] == CJ_DYN)
          sb_printf(b, "?x");
        else
          sb_printf(b, "%lldx", (long long)t->dims[i]);
      }
      sb_type(b, t->elem, depth + 1);
      if (t->bounds) {
        sb_printf(b, ", #stablehlo.bounds<");
        for (int32_t i = 0; i < t->rank; i++) {
          if (t->bounds[i] == CJ_DYN)
            sb_printf(b, "%s?", i ? ", " : "");
          else
            sb_printf(b, "%s%lld", i ? ", " : "", (long long)t->bounds[i]);
        }
        sb_printf(b, ">");
      }
      sb_printf(b, ">");
      return;
    case CJ_TYPE_UNRANKED:
      sb_printf(b, "tensor<*x");
      sb_type(b, t->elem, depth + 1);
      sb_printf(b, ">");
      return;
    case CJ_TYPE_TOKEN: sb_printf(b, "!stablehlo.token"); return;
    case CJ_TYPE_TUPLE:
      sb_printf(b, "tuple<");
      sb_types(b, t->members, t->rank, depth + 1);
      sb_printf(b, ">");
      return;
    case CJ_TYPE_FUNCTION:
      sb_printf(b, "(");
      sb_types(b, t->members, t->rank, depth + 1);
      sb_printf(b, ") -> ");
      if (t->nresults != 1) sb_printf(b, "(");
      sb_types(b, t->members + t->rank, t->nresults, depth + 1);
      if (t->nresults != 1) sb_printf(b, ")");
      return;
    case CJ_TYPE_NONE: sb_printf(b, "none"); return;
    case CJ_TYPE_OPAQUE: sb_printf(b, "%s", t->text ? t->text : "<opaque>"); return;
  }
  sb_printf(b, "<type?>");
}

const char *cj_shape_type_str(const cj_type *t, char *buf, size_t cap) {
  if (!cap) return buf;
  sbuf b = {buf, 0, cap, false};
  buf[0] = 0;
  sb_type(&b, t, 0);
  return buf;
}

const char *cj_shape_dims_str(const int64_t *v, int64_t n, char *buf, size_t cap) {
  if (!cap) return buf;
  sbuf b = {buf, 0, cap, false};
  buf[0] = 0;
  sb_printf(&b, "[");
  for (int64_t i = 0; i < n; i++) {
    if (v[i] == CJ_DYN)
      sb_printf(&b, "%s?", i ? ", " : "");
    else
      sb_printf(&b, "%s%lld", i ? ", " : "", (long long)v[i]);
  }
  sb_printf(&b, "]");
  return buf;
}
