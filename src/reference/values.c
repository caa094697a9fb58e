/* cjrt reference backend: values (dense host tensors, tuples, tokens) and the generic element
 * readers and writers every op uses. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reference/ref.h"

static CJ_MUST_USE cj_status rv_alloc(rv *v) {
  size_t nb = (size_t)v->n * (size_t)v->esize;
  v->data = calloc(nb ? nb : 1, 1);
  return v->data ? NULL : cj_oom();
}

cj_status cj_rv_new(cj_dtype dt, int32_t rank, const int64_t *dims, rv **out) {
  *out = NULL;
  if (rank > RF_MAX_RANK) return cj_unimplemented("reference backend: rank %d > %d", rank, RF_MAX_RANK);
  rv *v = calloc(1, sizeof *v);
  if (!v) return cj_oom();
  v->kind = RV_TENSOR;
  v->dt = dt;
  v->rank = rank;
  v->n = 1;
  for (int32_t d = 0; d < rank; d++) {
    v->dims[d] = dims[d];
    v->n *= dims[d];
  }
  v->esize = cj_dtype_bytes(dt);
  cj_status st = rv_alloc(v);
  if (st) {
    free(v);
    return st;
  }
  *out = v;
  return NULL;
}

/* Makes the v->nmem members of tuple v: values of `types`, or else clones of `srcs`. On failure v
 * is freed. */
static CJ_MUST_USE cj_status tuple_members(rv *v, const cj_type *const *types, rv *const *srcs) {
  v->mem = calloc((size_t)(v->nmem ? v->nmem : 1), sizeof(rv *));
  cj_status st = v->mem ? NULL : cj_oom();
  for (int32_t i = 0; i < v->nmem && !st; i++)
    st = types ? cj_rv_new_type(types[i], &v->mem[i]) : cj_rv_clone(srcs[i], &v->mem[i]);
  if (st) cj_rv_free(v);
  return st;
}

cj_status cj_rv_new_type(const cj_type *t, rv **out) {
  *out = NULL;
  if (t && t->kind == CJ_TYPE_TOKEN) {
    rv *v = calloc(1, sizeof *v);
    if (!v) return cj_oom();
    v->kind = RV_TOKEN;
    v->dt = CJ_TOKEN;
    *out = v;
    return NULL;
  }
  if (t && t->kind == CJ_TYPE_TUPLE) {
    rv *v = calloc(1, sizeof *v);
    if (!v) return cj_oom();
    v->kind = RV_TUPLE;
    v->nmem = t->rank;
    CJ_RETURN_IF_ERROR(tuple_members(v, t->members, NULL));
    *out = v;
    return NULL;
  }
  if (!cj_type_is_static(t)) return cj_unimplemented("reference backend: a value of a dynamic or non-tensor type");
  return cj_rv_new(t->dtype, t->rank, t->dims, out);
}

cj_status cj_rv_clone(const rv *s, rv **out) {
  *out = NULL;
  rv *v = calloc(1, sizeof *v);
  if (!v) return cj_oom();
  *v = *s;
  v->data = NULL;
  v->mem = NULL;
  if (s->kind == RV_TENSOR) {
    cj_status st = rv_alloc(v);
    if (st) {
      free(v);
      return st;
    }
    if (s->n) memcpy(v->data, s->data, (size_t)s->n * (size_t)s->esize);
  } else if (s->kind == RV_TUPLE) {
    CJ_RETURN_IF_ERROR(tuple_members(v, NULL, s->mem));
  }
  *out = v;
  return NULL;
}

void cj_rv_free(rv *v) {
  if (!v) return;
  if (v->mem)
    for (int32_t i = 0; i < v->nmem; i++) cj_rv_free(v->mem[i]);
  free(v->mem);
  free(v->data);
  free(v);
}

/* ---------------------------------------------------------------- elements */

static uint64_t raw(cj_dtype dt, const void *data, int64_t i) {
  int b = cj_dtype_bytes(dt);
  uint64_t u = 0;
  memcpy(&u, (const unsigned char *)data + (size_t)i * (size_t)b, (size_t)b);
  int bits = cj_dtype_bits(dt);
  if (bits < 64) u &= (1ull << bits) - 1;
  return u;
}

static void put_raw(cj_dtype dt, void *data, int64_t i, uint64_t u) {
  int b = cj_dtype_bytes(dt);
  int bits = cj_dtype_bits(dt);
  if (bits < 64) u &= (1ull << bits) - 1;
  memcpy((unsigned char *)data + (size_t)i * (size_t)b, &u, (size_t)b);
}

int64_t cj_rf_wrap(cj_dtype dt, int64_t v) {
  int bits = cj_dtype_bits(dt);
  cj_dtype_kind k = cj_dtype_kindof(dt);
  if (k == CJ_DK_BOOL) return v != 0;
  if (bits >= 64) return v;
  uint64_t u = (uint64_t)v & ((1ull << bits) - 1);
  if (k == CJ_DK_SINT && (u >> (bits - 1)) & 1) u |= ~((1ull << bits) - 1);
  return (int64_t)u;
}

double cj_rf_getf(cj_dtype dt, const void *data, int64_t i) {
  if (dt == CJ_F32) {
    float f;
    memcpy(&f, (const char *)data + 4 * i, 4);
    return f;
  }
  if (dt == CJ_F64) {
    double f;
    memcpy(&f, (const char *)data + 8 * i, 8);
    return f;
  }
  return cj_float_decode(dt, raw(dt, data, i));
}

void cj_rf_setf(cj_dtype dt, void *data, int64_t i, double v) {
  if (dt == CJ_F32) {
    float f = (float)v;
    memcpy((char *)data + 4 * i, &f, 4);
  } else if (dt == CJ_F64) {
    memcpy((char *)data + 8 * i, &v, 8);
  } else {
    put_raw(dt, data, i, cj_float_encode(dt, v));
  }
}

int64_t cj_rf_geti(cj_dtype dt, const void *data, int64_t i) {
  return cj_rf_wrap(dt, (int64_t)raw(dt, data, i));
}

void cj_rf_seti(cj_dtype dt, void *data, int64_t i, int64_t v) { put_raw(dt, data, i, (uint64_t)v); }

double complex cj_rf_getc(cj_dtype dt, const void *data, int64_t i) {
  cj_dtype c = cj_dtype_component(dt);
  return CMPLX(cj_rf_getf(c, data, 2 * i), cj_rf_getf(c, data, 2 * i + 1));
}

void cj_rf_setc(cj_dtype dt, void *data, int64_t i, double complex v) {
  cj_dtype c = cj_dtype_component(dt);
  cj_rf_setf(c, data, 2 * i, creal(v));
  cj_rf_setf(c, data, 2 * i + 1, cimag(v));
}

rs cj_rs_get(cj_dtype dt, const void *data, int64_t i) {
  rs r = {0, 0, 0};
  switch (cj_dtype_kindof(dt)) {
    case CJ_DK_FLOAT: r.f = cj_rf_getf(dt, data, i); break;
    case CJ_DK_COMPLEX: r.c = cj_rf_getc(dt, data, i); break;
    case CJ_DK_BOOL: r.i = ((const unsigned char *)data)[i] != 0; break;
    case CJ_DK_SINT:
    case CJ_DK_UINT: r.i = cj_rf_geti(dt, data, i); break;
    default: break;
  }
  return r;
}

void cj_rs_set(cj_dtype dt, void *data, int64_t i, rs v) {
  switch (cj_dtype_kindof(dt)) {
    case CJ_DK_FLOAT: cj_rf_setf(dt, data, i, v.f); break;
    case CJ_DK_COMPLEX: cj_rf_setc(dt, data, i, v.c); break;
    case CJ_DK_BOOL: ((unsigned char *)data)[i] = v.i != 0; break;
    case CJ_DK_SINT:
    case CJ_DK_UINT: cj_rf_seti(dt, data, i, v.i); break;
    default: break;
  }
}

/* float -> integer: truncation toward zero, saturating at the type's range, NaN -> 0 */
static int64_t f2i(cj_dtype to, double f) {
  if (isnan(f)) return 0;
  f = trunc(f);
  int bits = cj_dtype_bits(to);
  if (cj_dtype_kindof(to) == CJ_DK_UINT) {
    if (f <= 0) return 0;
    double mx = bits >= 64 ? 18446744073709551615.0 : (double)((1ull << bits) - 1);
    if (f >= mx) return bits >= 64 ? (int64_t)UINT64_MAX : (int64_t)((1ull << bits) - 1);
    return (int64_t)(uint64_t)f;
  }
  double lo = -ldexp(1.0, bits - 1), hi = ldexp(1.0, bits - 1);
  if (f <= lo) return bits >= 64 ? INT64_MIN : -(int64_t)(1ull << (bits - 1));
  if (f >= hi) return bits >= 64 ? INT64_MAX : (int64_t)((1ull << (bits - 1)) - 1);
  return (int64_t)f;
}

/* integer -> float, rounded once to the target */
static double i2f(cj_dtype from, cj_dtype to, int64_t i) {
  bool u = cj_dtype_kindof(from) == CJ_DK_UINT;
  if (to == CJ_F32) return u ? (double)(float)(uint64_t)i : (double)(float)i;
  return u ? (double)(uint64_t)i : (double)i;
}

rs cj_rs_convert(cj_dtype from, cj_dtype to, rs v) {
  cj_dtype_kind fk = cj_dtype_kindof(from), tk = cj_dtype_kindof(to);
  rs r = {0, 0, 0};
  bool fint = fk == CJ_DK_SINT || fk == CJ_DK_UINT || fk == CJ_DK_BOOL;
  bool tint = tk == CJ_DK_SINT || tk == CJ_DK_UINT;
  if (tk == CJ_DK_BOOL) {
    r.i = fint ? v.i != 0 : fk == CJ_DK_FLOAT ? v.f != 0 : (creal(v.c) != 0 || cimag(v.c) != 0);
  } else if (tint) {
    if (fint) r.i = cj_rf_wrap(to, v.i);
    else if (fk == CJ_DK_FLOAT) r.i = f2i(to, v.f);
    else r.i = f2i(to, creal(v.c));
  } else if (tk == CJ_DK_FLOAT) {
    if (fint) r.f = i2f(from, to, v.i);
    else if (fk == CJ_DK_FLOAT) r.f = v.f;
    else r.f = creal(v.c);
  } else if (tk == CJ_DK_COMPLEX) {
    if (fint) r.c = i2f(from, cj_dtype_component(to), v.i);
    else if (fk == CJ_DK_FLOAT) r.c = v.f;
    else r.c = v.c;
  }
  return r;
}

rs cj_rs_round(cj_dtype dt, rs v) {
  unsigned char tmp[16];
  cj_rs_set(dt, tmp, 0, v);
  return cj_rs_get(dt, tmp, 0);
}

void cj_rf_strides(int32_t rank, const int64_t *dims, int64_t *strides) {
  int64_t s = 1;
  for (int32_t d = rank - 1; d >= 0; d--) {
    strides[d] = s;
    s *= dims[d];
  }
}

int64_t cj_rf_ravel(int32_t rank, const int64_t *dims, const int64_t *idx) {
  int64_t k = 0;
  for (int32_t d = 0; d < rank; d++) k = k * dims[d] + idx[d];
  return k;
}

bool cj_rf_in_list(int64_t d, const int64_t *l, int64_t n) {
  for (int64_t i = 0; i < n; i++)
    if (l[i] == d) return true;
  return false;
}

void cj_rf_unravel(int64_t i, int32_t rank, const int64_t *dims, int64_t *idx) {
  for (int32_t d = rank - 1; d >= 0; d--) {
    if (dims[d] > 0) {
      idx[d] = i % dims[d];
      i /= dims[d];
    } else {
      idx[d] = 0;
    }
  }
}
