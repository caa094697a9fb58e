/* cjrt: checks shared by the op verifiers (shape_check.h). */
#include <stdarg.h>
#include <string.h>

#include "ir/shape_check.h"

/* ======================================================================== types */

cj_status cj_verify_check_tensor(const cj_op *op, const char *what, const cj_type *t, unsigned mask) {
  cjv_tbuf tb;
  char cat[160];
  if (!t || t->kind != CJ_TYPE_TENSOR ||
      (mask != CJ_EC_ANY && !(cj_shape_elem_category(t->elem) & mask)) ||
      !cj_shape_elem_category(t->elem)) {
    if (mask == CJ_EC_ANY)
      CJV_FAIL(op, "%s must be a ranked tensor, got %s", what, CJV_T(t, tb));
    CJV_FAIL(op, "%s must be a ranked %s, got %s", what,
             cj_shape_category_name(mask, cat, sizeof cat), CJV_T(t, tb));
  }
  return NULL;
}

cj_status cj_verify_check_tensors(const cj_op *op, unsigned mask, ...) {
  va_list ap;
  va_start(ap, mask);
  cj_status st = NULL;
  for (const char *what; !st && (what = va_arg(ap, const char *));)
    st = cj_verify_check_tensor(op, what, va_arg(ap, const cj_type *), mask);
  va_end(ap);
  return st;
}

cj_status cj_verify_check_scalar(const cj_op *op, const char *must, const cj_type *t,
                                 cj_dtype dt) {
  cjv_tbuf tb;
  if (!t || t->kind != CJ_TYPE_TENSOR || t->rank != 0 || t->elem->kind != CJ_TYPE_ELEM ||
      t->elem->dtype != dt)
    CJV_FAIL(op, "%s tensor<%s>, got %s", must, cj_dtype_get(dt)->mlir, CJV_T(t, tb));
  return NULL;
}

cj_status cj_verify_check_tensor_rank(const cj_op *op, const char *what, const cj_type *t,
                                unsigned mask, int32_t rank) {
  CJV_TRY(cj_verify_check_tensor(op, what, t, mask));
  cjv_tbuf tb;
  if (t->rank != rank) CJV_FAIL(op, "%s must have rank %d, got %s", what, rank, CJV_T(t, tb));
  return NULL;
}

cj_status cj_verify_check_token(const cj_op *op, const char *what, const cj_type *t) {
  cjv_tbuf tb;
  if (!t || t->kind != CJ_TYPE_TOKEN)
    CJV_FAIL(op, "%s must be !stablehlo.token, got %s", what, CJV_T(t, tb));
  return NULL;
}

cj_status cj_verify_check_same_shape(const cj_op *op, const char *wa, const cj_type *a, const char *wb,
                               const cj_type *b) {
  cjv_tbuf ta, tbb;
  if (!cj_shape_compatible(a, b))
    CJV_FAIL(op, "%s and %s must have the same shape, got %s and %s", wa, wb, CJV_T(a, ta),
             CJV_T(b, tbb));
  return NULL;
}

cj_status cj_verify_check_same_type(const cj_op *op, const char *wa, const cj_type *a, const char *wb,
                              const cj_type *b) {
  cjv_tbuf ta, tbb;
  if (a == b) return NULL;
  if (!cj_shape_type_compatible(a, b))
    CJV_FAIL(op, "%s and %s must have the same type, got %s and %s", wa, wb, CJV_T(a, ta),
             CJV_T(b, tbb));
  return NULL;
}

cj_status cj_verify_check_same_baseline(const cj_op *op, const char *wa, const cj_type *a,
                                  const char *wb, const cj_type *b) {
  cjv_tbuf ta, tbb;
  if (a == b) return NULL;
  if (!cj_shape_baseline_compatible(a, b))
    CJV_FAIL(op, "%s and %s must have the same type (up to quantization parameters), got %s and %s",
             wa, wb, CJV_T(a, ta), CJV_T(b, tbb));
  return NULL;
}

cj_status cj_verify_check_same_elem(const cj_op *op, const char *wa, const cj_type *a, const char *wb,
                              const cj_type *b) {
  cjv_tbuf ta, tbb;
  if (!a || !b || cj_shape_elem(a) != cj_shape_elem(b) || !cj_shape_elem(a))
    CJV_FAIL(op, "%s and %s must have the same element type, got %s and %s", wa, wb,
             CJV_T(a, ta), CJV_T(b, tbb));
  return NULL;
}

cj_status cj_verify_check_same_baseline_elem(const cj_op *op, const char *wa, const cj_type *a,
                                       const char *wb, const cj_type *b) {
  cjv_tbuf ta, tbb;
  if (!a || !b || !cj_shape_elem(a) ||
      !cj_shape_baseline_elem_equal(cj_shape_elem(a), cj_shape_elem(b)))
    CJV_FAIL(op,
             "%s and %s must have the same element type (up to quantization parameters), got %s "
             "and %s",
             wa, wb, CJV_T(a, ta), CJV_T(b, tbb));
  return NULL;
}

cj_status cj_verify_check_exact_type(const cj_op *op, const char *wa, const cj_type *a, const char *wb,
                               const cj_type *b) {
  cjv_tbuf ta, tbb;
  if (a != b || !a)
    CJV_FAIL(op, "%s and %s must have the same type, got %s and %s", wa, wb, CJV_T(a, ta),
             CJV_T(b, tbb));
  return NULL;
}

cj_status cj_verify_check_shape_is(const cj_op *op, const char *what, const cj_type *t,
                             const int64_t *expect, int32_t rank) {
  cjv_tbuf ta, tbb;
  bool ok = t && t->kind == CJ_TYPE_TENSOR && t->rank == rank;
  for (int32_t i = 0; ok && i < rank; i++) {
    if (!cj_shape_dim_compatible(t->dims[i], expect[i])) ok = false;
    /* a static expected size must fit a bounded dynamic dimension */
    if (ok && t->dims[i] == CJ_DYN && expect[i] != CJ_DYN) {
      int64_t b = cj_shape_bound(t, i);
      if (b != CJ_DYN && b < expect[i]) ok = false;
    }
  }
  if (!ok)
    CJV_FAIL(op, "%s has shape %s but the op requires shape %s", what, CJV_T(t, ta),
             CJV_DIMS(expect, rank, tbb));
  return NULL;
}

/* ======================================================================== attributes */

cj_status cj_verify_get_i64s(const cj_op *op, const char *name, int64_t *buf, int64_t *n,
                       bool *present) {
  *n = 0;
  if (present) *present = false;
  const cj_attr *a = cjv_attr(op, name);
  if (!a) return NULL;
  if (!cj_attr_get_i64s(a, buf, CJV_MAX_DIMS, n))
    CJV_FAIL(op, "attribute '%s' must be a list of integers", name);
  if (*n > CJV_MAX_DIMS)
    CJV_FAIL(op, "attribute '%s' has %lld entries; the verifier supports at most %d", name,
             (long long)*n, CJV_MAX_DIMS);
  if (present) *present = true;
  return NULL;
}

cj_status cj_verify_get_field_i64s(const cj_op *op, const cj_attr *st, cj_struct_kind sk, int field,
                             const char *fname, int64_t *buf, int64_t *n) {
  *n = 0;
  const cj_attr *a = cj_attr_field(st, sk, field);
  if (!a) return NULL;
  if (!cj_attr_get_i64s(a, buf, CJV_MAX_DIMS, n))
    CJV_FAIL(op, "%s must be a list of integers", fname);
  if (*n > CJV_MAX_DIMS)
    CJV_FAIL(op, "%s has %lld entries; the verifier supports at most %d", fname, (long long)*n,
             CJV_MAX_DIMS);
  return NULL;
}

int64_t cj_verify_field_i64(const cj_attr *st, cj_struct_kind sk, int field, int64_t dflt) {
  int64_t v;
  const cj_attr *a = cj_attr_field(st, sk, field);
  return a && cj_attr_get_i64(a, &v) ? v : dflt;
}

cj_status cj_verify_check_dims_in_range(const cj_op *op, const char *what, const int64_t *v, int64_t n,
                                  int64_t limit) {
  for (int64_t i = 0; i < n; i++)
    if (v[i] < 0 || v[i] >= limit)
      CJV_FAIL(op, "%s: dimension %lld is out of range [0, %lld)", what, (long long)v[i],
               (long long)limit);
  return NULL;
}

cj_status cj_verify_check_unique(const cj_op *op, const char *what, const int64_t *v, int64_t n) {
  for (int64_t i = 1; i < n; i++)
    for (int64_t j = 0; j < i; j++)
      if (v[i] == v[j]) CJV_FAIL(op, "%s has duplicate dimension %lld", what, (long long)v[i]);
  return NULL;
}

cj_status cj_verify_check_disjoint(const cj_op *op, const char *wa, const int64_t *a, int64_t na,
                             const char *wb, const int64_t *b, int64_t nb) {
  for (int64_t i = 0; i < na; i++)
    if (cjv_contains(b, nb, a[i]))
      CJV_FAIL(op, "dimension %lld appears in both %s and %s", (long long)a[i], wa, wb);
  return NULL;
}

cj_status cj_verify_check_dot_dims(const cj_op *op, const cj_type *l, const cj_type *r,
                             const int64_t *lb, int64_t nlb, const int64_t *rb, int64_t nrb,
                             const int64_t *lc, int64_t nlc, const int64_t *rc, int64_t nrc) {
  if (nlb != nrb)
    CJV_FAIL(op, "lhs and rhs must have the same number of batching dimensions, got %lld and %lld",
             (long long)nlb, (long long)nrb);
  if (nlc != nrc)
    CJV_FAIL(op,
             "lhs and rhs must have the same number of contracting dimensions, got %lld and %lld",
             (long long)nlc, (long long)nrc);
  CJV_TRY(cj_verify_check_unique_disjoint(op, "lhs_batching_dimensions", lb, nlb,
                                    "lhs_contracting_dimensions", lc, nlc));
  CJV_TRY(cj_verify_check_unique_disjoint(op, "rhs_batching_dimensions", rb, nrb,
                                    "rhs_contracting_dimensions", rc, nrc));
  CJV_TRY(cj_verify_check_dims_in_range(op, "lhs_batching_dimensions", lb, nlb, l->rank));
  CJV_TRY(cj_verify_check_dims_in_range(op, "lhs_contracting_dimensions", lc, nlc, l->rank));
  CJV_TRY(cj_verify_check_dims_in_range(op, "rhs_batching_dimensions", rb, nrb, r->rank));
  CJV_TRY(cj_verify_check_dims_in_range(op, "rhs_contracting_dimensions", rc, nrc, r->rank));
  CJV_TRY(cj_verify_check_paired_dims(op, "lhs batching", l, lb, "rhs batching", r, rb, nlb));
  return cj_verify_check_paired_dims(op, "lhs contracting", l, lc, "rhs contracting", r, rc, nlc);
}

cj_status cj_verify_check_unique_disjoint(const cj_op *op, const char *wa, const int64_t *a,
                                    int64_t na, const char *wb, const int64_t *b, int64_t nb) {
  CJV_TRY(cj_verify_check_unique(op, wa, a, na));
  CJV_TRY(cj_verify_check_unique(op, wb, b, nb));
  return cj_verify_check_disjoint(op, wa, a, na, wb, b, nb);
}

cj_status cj_verify_check_paired_dims(const cj_op *op, const char *an, const cj_type *a,
                                const int64_t *ad, const char *bn, const cj_type *b,
                                const int64_t *bd, int64_t n) {
  for (int64_t i = 0; i < n; i++)
    if (!cj_shape_dim_compatible(a->dims[ad[i]], b->dims[bd[i]]))
      CJV_FAIL(op, "%s dimension %lld has size %lld but %s dimension %lld has size %lld", an,
               (long long)ad[i], (long long)a->dims[ad[i]], bn, (long long)bd[i],
               (long long)b->dims[bd[i]]);
  return NULL;
}

cj_status cj_verify_check_sorted(const cj_op *op, const char *what, const int64_t *v, int64_t n) {
  for (int64_t i = 1; i < n; i++)
    if (v[i] <= v[i - 1]) {
      cjv_tbuf tb;
      CJV_FAIL(op, "%s %s must be sorted in increasing order", what, CJV_DIMS(v, n, tb));
    }
  return NULL;
}

bool cj_verify_dense_readable(const cj_attr *a, bool integer) {
  if (!a || a->kind != CJ_ATTR_DENSE || !a->dense.type || a->dense.type->kind != CJ_TYPE_TENSOR)
    return false;
  const cj_type *t = a->dense.type;
  if (integer && !cj_dtype_is_int(t->dtype)) return false;
  if (t->num_elements < 0 || (t->num_elements > 0 && !a->dense.data)) return false;
  size_t eb = (size_t)cj_dtype_bytes(t->dtype);
  size_t need = a->dense.splat ? (t->num_elements > 0 ? eb : 0) : (size_t)t->num_elements * eb;
  return a->dense.nbytes >= need;
}

const cj_attr *cj_verify_constant_operand(const cj_op *op, uint32_t i) {
  if (i >= op->nopnds || !op->operands[i]) return NULL;
  const cj_op *d = op->operands[i]->def;
  if (!d || (d->kind != CJ_OP_CONSTANT && d->kind != CJ_OP_CHLO_CONSTANT)) return NULL;
  const cj_attr *v = cjv_attr(d, "value");
  return v && v->kind == CJ_ATTR_DENSE && v->dense.type ? v : NULL;
}

bool cj_verify_constant_operand_i64s(const cj_op *op, uint32_t i, int64_t *buf, int64_t *n) {
  const cj_attr *v = cj_verify_constant_operand(op, i);
  if (!cj_verify_dense_readable(v, true)) return false;
  int64_t cnt = cj_dense_num_elements(v);
  if (cnt < 0 || cnt > CJV_MAX_DIMS) return false;
  for (int64_t k = 0; k < cnt; k++) buf[k] = cj_dense_get_i64(v, k);
  *n = cnt;
  return true;
}

/* Shape operands (dynamic_iota, dynamic_reshape, dynamic_broadcast_in_dim): a 1-D integer tensor
 * with one entry per result dimension; when it is a constant its values must fit the result. */
cj_status cj_verify_check_shape_operand(const cj_op *op, uint32_t i, const char *what,
                                  const cj_type *result) {
  const cj_type *s = cjv_operand_type(op, i);
  CJV_TRY(cj_verify_check_tensor_rank(op, what, s, CJ_EC_INT, 1));
  cjv_tbuf t1, t2;
  if (s->dims[0] == CJ_DYN) CJV_FAIL(op, "%s must have a static shape, got %s", what, CJV_T(s, t1));
  if (s->dims[0] != CJ_DYN && s->dims[0] != result->rank)
    CJV_FAIL(op, "%s has %lld entries but the result %s has rank %d", what, (long long)s->dims[0],
             CJV_T(result, t1), result->rank);
  int64_t v[CJV_MAX_DIMS], n;
  if (cj_verify_constant_operand_i64s(op, i, v, &n) && n == result->rank) {
    bool bad = false;
    for (int64_t k = 0; k < n; k++)
      if (v[k] < 0 || !cj_shape_dim_compatible(v[k], result->dims[k])) bad = true;
    if (bad)
      CJV_FAIL(op, "%s %s does not fit the result type %s", what, CJV_DIMS(v, n, t2),
               CJV_T(result, t1));
  }
  return NULL;
}

cj_status cj_verify_check_static_or_single_bounded(const cj_op *op, const char *what,
                                             const cj_type *t) {
  if (t->num_elements >= 0) return NULL;
  int ndyn = 0, nbounded = 0;
  for (int32_t i = 0; i < t->rank; i++)
    if (t->dims[i] == CJ_DYN) {
      ndyn++;
      if (cj_shape_bound(t, i) != CJ_DYN) nbounded++;
    }
  cjv_tbuf t1;
  if (ndyn != 1 || nbounded != 1)
    CJV_FAIL(op,
             "%s must have a static shape or exactly one dynamic dimension with a bound, got %s",
             what, CJV_T(t, t1));
  return NULL;
}

/* ======================================================================== regions */

cj_status cj_verify_region_return(const cj_op *op, uint32_t r, const char *rname,
                            const cj_block **out_b, const cj_op **out_ret) {
  const cj_block *b = cjv_region_block(op, r);
  if (!b) CJV_FAIL(op, "%s region is missing", rname);
  const cj_op *t = b->last;
  if (!t || (t->kind != CJ_OP_RETURN && t->kind != CJ_OP_FUNC_RETURN))
    CJV_FAIL(op, "%s region must end with stablehlo.return", rname);
  for (uint32_t i = 0; i < t->nopnds; i++)
    if (!t->operands[i] || !t->operands[i]->type)
      CJV_FAIL(op, "%s region returns an undefined value", rname);
  for (uint32_t i = 0; i < b->nargs; i++)
    if (!b->args[i].type) CJV_FAIL(op, "%s region argument #%u has no type", rname, i);
  *out_b = b;
  *out_ret = t;
  return NULL;
}

cj_status cj_verify_check_region_nargs(const cj_op *op, const char *rname, const cj_block *b,
                                 uint32_t n) {
  if (b->nargs != n)
    CJV_FAIL(op, "%s region must take %u argument%s, got %u", rname, n, n == 1 ? "" : "s",
             b->nargs);
  return NULL;
}

cj_status cj_verify_check_reducer(const cj_op *op, uint32_t r, const char *rname, uint32_t n,
                            const cj_type *const *inputs, const cj_type *const *promote,
                            const cj_type *const *inits, const int64_t *allowed,
                            int64_t nallowed, const cj_type **out_elems) {
  const cj_block *b;
  const cj_op *ret;
  CJV_TRY(cj_verify_region_return(op, r, rname, &b, &ret));
  CJV_TRY(cj_verify_check_region_nargs(op, rname, b, 2 * n));
  if (ret->nopnds != n)
    CJV_FAIL(op, "%s region must return %u value%s, got %u", rname, n, n == 1 ? "" : "s",
             ret->nopnds);
  cjv_tbuf t1, t2;
  for (uint32_t i = 0; i < n; i++) {
    const cj_type *rt = ret->operands[i]->type;
    if (!rt || rt->kind != CJ_TYPE_TENSOR || !cj_shape_elem_category(rt->elem))
      CJV_FAIL(op, "%s region must return tensors, but value #%u is %s", rname, i, CJV_T(rt, t1));
    if (!allowed && rt->rank != 0)
      CJV_FAIL(op, "%s region must return 0-dimensional tensors, but value #%u is %s", rname, i,
               CJV_T(rt, t1));
    if (allowed) {
      /* the accumulator's dimensions, in order, must each match one of allowed[] */
      int64_t k = 0;
      for (int64_t d = 0; d < nallowed && k < rt->rank; d++)
        if (cj_shape_dim_compatible(allowed[d], rt->dims[k])) k++;
      if (k != rt->rank) {
        cjv_tbuf t3;
        CJV_FAIL(op, "%s region value #%u %s does not fit the result dimensions %s", rname, i,
                 CJV_T(rt, t1), CJV_DIMS(allowed, nallowed, t3));
      }
    }
    const cj_type *acc = b->args[i].type, *val = b->args[n + i].type;
    if (!cj_shape_type_compatible(acc, rt))
      CJV_FAIL(op, "%s region argument #%u has type %s but the region returns %s in position %u",
               rname, i, CJV_T(acc, t1), CJV_T(rt, t2), i);
    if (!cj_shape_type_compatible(val, rt))
      CJV_FAIL(op, "%s region argument #%u has type %s but the region returns %s in position %u",
               rname, n + i, CJV_T(val, t1), CJV_T(rt, t2), i);
    const cj_type *in = inputs ? inputs[i] : NULL;
    if (in && !cj_shape_is_promotable(cj_shape_elem(in), rt->elem))
      CJV_FAIL(op, "%s region computes in %s, which element type %s of input #%u cannot be "
                   "promoted to",
               rname, CJV_T(rt->elem, t1), CJV_T(cj_shape_elem(in), t2), i);
    const cj_type *pv = promote ? promote[i] : NULL;
    if (pv && !cj_shape_is_promotable(cj_shape_elem(pv), rt->elem))
      CJV_FAIL(op, "%s region computes in %s, which element type %s of operand #%u cannot be "
                   "promoted to",
               rname, CJV_T(rt->elem, t1), CJV_T(cj_shape_elem(pv), t2), i);
    const cj_type *iv = inits ? inits[i] : NULL;
    if (iv) {
      if (!cj_shape_is_promotable(cj_shape_elem(iv), rt->elem))
        CJV_FAIL(op, "%s region computes in %s, which element type %s of init value #%u cannot "
                     "be promoted to",
                 rname, CJV_T(rt->elem, t1), CJV_T(cj_shape_elem(iv), t2), i);
      if (!cj_shape_compatible(iv, rt))
        CJV_FAIL(op, "init value #%u %s must have the shape of the %s region's value %s", i,
                 CJV_T(iv, t1), rname, CJV_T(rt, t2));
    }
    if (out_elems) out_elems[i] = rt->elem;
  }
  return NULL;
}

/* ======================================================================== symbols */

const cj_op *cj_verify_lookup_symbol(const cj_op *from, const char *name, bool *in_module) {
  *in_module = false;
  if (!from || !name) return NULL;
  const cj_op *o = from;
  const cj_block *b = o->block;
  int guard = 0;
  while (b && b->region && b->region->op && guard++ < 4096) {
    o = b->region->op;
    b = o->block;
  }
  if (!b || !b->region || b->region->op) return NULL; /* detached */
  *in_module = true;
  size_t len = strlen(name);
  for (const cj_op *x = b->first; x; x = x->next) {
    const cj_attr *a = cjv_attr(x, "sym_name");
    if (a && a->kind == CJ_ATTR_STRING && a->str.len == len && memcmp(a->str.s, name, len) == 0)
      return x;
  }
  return NULL;
}
