/* cjrt: verifiers of the chlo ops (from ChloOps.td: operand element types, broadcasting rules,
 * ragged_dot, top_k and scan constraints). CHLO tensors may be unranked. */
#include <stdio.h>
#include <string.h>

#include "ir/shape_check.h"
#include "ir/verify_fns.h"

static const cj_type *T(const cj_op *op, uint32_t i) { return cjv_operand_type(op, i); }
static const cj_type *R(const cj_op *op, uint32_t i) { return cjv_result_type(op, i); }

#define ANY_NONQ (CJ_EC_BOOL | CJ_EC_INT | CJ_EC_FLOAT | CJ_EC_COMPLEX)

/* A ranked or unranked tensor whose element category is in mask. */
static CJ_MUST_USE cj_status check_any_tensor(const cj_op *op, const char *what, const cj_type *t,
                                  unsigned mask) {
  if (t && t->kind == CJ_TYPE_UNRANKED && (cj_shape_elem_category(t->elem) & mask)) return NULL;
  return cj_verify_check_tensor(op, what, t, mask);
}

static bool ranked(const cj_type *t) { return t && t->kind == CJ_TYPE_TENSOR; }

/* ======================================================================== elementwise */

/* operands and result of element classes mask (bool_result: a boolean result instead) */
static CJ_MUST_USE cj_status chlo_elementwise(const cj_op *op, unsigned mask, bool bool_result) {
  const cj_type *r = R(op, 0);
  char what[32];
  for (uint32_t i = 0; i < op->nopnds; i++) {
    snprintf(what, sizeof what, op->nopnds == 1 ? "operand" : "operand #%u", i);
    CJV_TRY(check_any_tensor(op, what, T(op, i), mask));
    if (i > 0) CJV_TRY(cj_verify_check_same_elem(op, "operand #0", T(op, 0), what, T(op, i)));
    if (ranked(T(op, i)) && ranked(r))
      CJV_TRY(cj_verify_check_same_shape(op, what, T(op, i), "result", r));
  }
  if (bool_result) return check_any_tensor(op, "result", r, CJ_EC_BOOL);
  CJV_TRY(check_any_tensor(op, "result", r, mask));
  return cj_verify_check_same_elem(op, "operand", T(op, 0), "result", r);
}

cj_status cj_verify_chlo_elementwise(const cj_op *op) {
  return chlo_elementwise(op, CJ_EC_FLOAT | CJ_EC_COMPLEX, false);
}
cj_status cj_verify_chlo_complex(const cj_op *op) { return chlo_elementwise(op, CJ_EC_COMPLEX, false); }
cj_status cj_verify_chlo_float(const cj_op *op) { return chlo_elementwise(op, CJ_EC_FLOAT, false); }
cj_status cj_verify_chlo_is_inf(const cj_op *op) { return chlo_elementwise(op, CJ_EC_FLOAT, true); }
cj_status cj_verify_chlo_int(const cj_op *op) { return chlo_elementwise(op, CJ_EC_INT, false); }

/* ======================================================================== broadcasting */

/* Numpy-style broadcasting of a and b (or through broadcast_dimensions); fills the expected
 * result dims (CJ_DYN where unknown). */
static CJ_MUST_USE cj_status broadcast_shape(const cj_op *op, const cj_type *a, const cj_type *b,
                                 int64_t *out, int32_t *out_rank) {
  cjv_tbuf t1, t2;
  const cj_type *big = a->rank >= b->rank ? a : b, *small = a->rank >= b->rank ? b : a;
  int64_t bd[CJV_MAX_DIMS], nbd;
  bool has_bd;
  CJV_TRY(cj_verify_get_i64s(op, "broadcast_dimensions", bd, &nbd, &has_bd));
  if (big->rank > CJV_MAX_DIMS) CJV_FAIL(op, "rank is too large");
  /* broadcast_dimensions only matter between operands of different ranks (upstream's own tests
   * carry it on equal ranks, where numpy broadcasting applies) */
  if (a->rank == b->rank) has_bd = false;
  if (!has_bd) {
    nbd = small->rank;
    for (int32_t i = 0; i < small->rank; i++) bd[i] = big->rank - small->rank + i;
  } else {
    if (nbd != small->rank)
      CJV_FAIL(op, "broadcast_dimensions has %lld entries but the lower-rank operand %s has rank %d",
               (long long)nbd, CJV_T(small, t1), small->rank);
    CJV_TRY(cj_verify_check_dims_in_range(op, "broadcast_dimensions", bd, nbd, big->rank));
    CJV_TRY(cj_verify_check_unique(op, "broadcast_dimensions", bd, nbd));
  }
  for (int32_t i = 0; i < big->rank; i++) out[i] = big->dims[i];
  for (int64_t i = 0; i < nbd; i++) {
    int64_t x = small->dims[i], y = big->dims[bd[i]];
    int64_t r;
    if (x == 1)
      r = y;
    else if (y == 1)
      r = x;
    else if (x == CJ_DYN || y == CJ_DYN)
      r = CJ_DYN;
    else if (x == y)
      r = x;
    else
      CJV_FAIL(op, "operands %s and %s cannot be broadcast together (dimension sizes %lld and %lld)",
               CJV_T(a, t1), CJV_T(b, t2), (long long)x, (long long)y);
    out[bd[i]] = r;
  }
  *out_rank = big->rank;
  return NULL;
}

enum chlo_result { SAME_ELEM, BOOL_ELEM, COMPLEX_ELEM };

/* lhs and rhs of element classes mask; the result of the same element type, or bool, or the
 * complex type of the operands' */
static CJ_MUST_USE cj_status chlo_broadcast(const cj_op *op, unsigned mask, enum chlo_result res) {
  const cj_type *a = T(op, 0), *b = T(op, 1), *r = R(op, 0);
  CJV_TRY(check_any_tensor(op, "lhs", a, mask));
  CJV_TRY(check_any_tensor(op, "rhs", b, mask));
  CJV_TRY(cj_verify_check_same_baseline_elem(op, "lhs", a, "rhs", b));
  cjv_tbuf t1, t2;
  /* result element type */
  if (res == BOOL_ELEM) {
    CJV_TRY(check_any_tensor(op, "result", r, CJ_EC_BOOL));
  } else if (res == COMPLEX_ELEM) {
    CJV_TRY(check_any_tensor(op, "result", r, CJ_EC_COMPLEX));
    if (cj_dtype_component(r->dtype) != a->dtype)
      CJV_FAIL(op, "result %s must be complex<%s>", CJV_T(r, t1), CJV_T(a->elem, t2));
  } else {
    CJV_TRY(check_any_tensor(op, "result", r, mask));
    CJV_TRY(cj_verify_check_same_baseline_elem(op, "lhs", a, "result", r));
  }
  if (!ranked(a) || !ranked(b)) return NULL;
  int64_t expect[CJV_MAX_DIMS];
  int32_t rank = 0;
  CJV_TRY(broadcast_shape(op, a, b, expect, &rank));
  if (!ranked(r)) return NULL;
  return cj_verify_check_shape_is(op, "result", r, expect, rank);
}

cj_status cj_verify_chlo_broadcast(const cj_op *op) {
  /* the broadcast shifts, like most broadcast ops, take any tensor in ChloOps.td */
  return chlo_broadcast(op, ANY_NONQ | CJ_EC_QUANT, SAME_ELEM);
}
cj_status cj_verify_chlo_broadcast_logical(const cj_op *op) {
  return chlo_broadcast(op, CJ_EC_BOOL | CJ_EC_INT, SAME_ELEM);
}
cj_status cj_verify_chlo_broadcast_float(const cj_op *op) {
  return chlo_broadcast(op, CJ_EC_FLOAT, SAME_ELEM);
}
cj_status cj_verify_chlo_broadcast_complex(const cj_op *op) {
  return chlo_broadcast(op, CJ_EC_FLOAT, COMPLEX_ELEM);
}
cj_status cj_verify_chlo_broadcast_compare(const cj_op *op) {
  return chlo_broadcast(op, ANY_NONQ | CJ_EC_QUANT, BOOL_ELEM);
}

cj_status cj_verify_chlo_broadcast_select(const cj_op *op) {
  const cj_type *p = T(op, 0), *a = T(op, 1), *b = T(op, 2), *r = R(op, 0);
  CJV_TRY(check_any_tensor(op, "pred", p, CJ_EC_BOOL));
  CJV_TRY(check_any_tensor(op, "on_true", a, ANY_NONQ | CJ_EC_QUANT));
  CJV_TRY(check_any_tensor(op, "on_false", b, ANY_NONQ | CJ_EC_QUANT));
  CJV_TRY(check_any_tensor(op, "result", r, ANY_NONQ | CJ_EC_QUANT));
  CJV_TRY(cj_verify_check_same_elem(op, "on_true", a, "on_false", b));
  CJV_TRY(cj_verify_check_same_elem(op, "on_true", a, "result", r));
  if (!ranked(p) || !ranked(a) || !ranked(b) || !ranked(r)) return NULL;
  /* numpy broadcasting of all three operands */
  int32_t rank = p->rank;
  if (a->rank > rank) rank = a->rank;
  if (b->rank > rank) rank = b->rank;
  if (rank > CJV_MAX_DIMS) CJV_FAIL(op, "rank is too large");
  int64_t expect[CJV_MAX_DIMS];
  for (int32_t i = 0; i < rank; i++) expect[i] = 1;
  const cj_type *all[3] = {p, a, b};
  cjv_tbuf t1;
  for (int k = 0; k < 3; k++) {
    const cj_type *t = all[k];
    for (int32_t i = 0; i < t->rank; i++) {
      int32_t d = rank - t->rank + i;
      int64_t x = t->dims[i], y = expect[d];
      if (x == 1) continue;
      if (y == 1 || y == x)
        expect[d] = x;
      else if (x == CJ_DYN || y == CJ_DYN)
        expect[d] = CJ_DYN;
      else
        CJV_FAIL(op, "operand %s does not broadcast with the others in dimension %d", CJV_T(t, t1), d);
    }
  }
  return cj_verify_check_shape_is(op, "result", r, expect, rank);
}

/* ======================================================================== constants */

cj_status cj_verify_chlo_constant_like(const cj_op *op) {
  const cj_attr *v = cjv_attr(op, "value");
  const cj_type *x = T(op, 0), *r = R(op, 0);
  CJV_TRY(check_any_tensor(op, "operand", x, CJ_EC_ANY));
  CJV_TRY(check_any_tensor(op, "result", r, CJ_EC_ANY));
  const cj_type *vt = NULL;
  if (v->kind == CJ_ATTR_INT) vt = v->i.type;
  if (v->kind == CJ_ATTR_FLOAT) vt = v->f.type;
  if (v->kind == CJ_ATTR_BOOL) vt = NULL;
  if (v->kind == CJ_ATTR_DENSE && v->dense.type) vt = v->dense.type->elem; /* complex values */
  cjv_tbuf t1, t2;
  if (vt && vt != r->elem)
    CJV_FAIL(op, "value of type %s does not match the result element type %s", CJV_T(vt, t1),
             CJV_T(r->elem, t2));
  if (ranked(x) && ranked(r)) CJV_TRY(cj_verify_check_same_shape(op, "operand", x, "result", r));
  return NULL;
}

/* ======================================================================== ragged_dot */

cj_status cj_verify_chlo_ragged_dot(const cj_op *op) {
  const cj_type *l = T(op, 0), *r = T(op, 1), *g = T(op, 2), *o = R(op, 0);
  CJV_TRY(cj_verify_check_tensor(op, "lhs", l, ANY_NONQ | CJ_EC_QUANT));
  CJV_TRY(cj_verify_check_tensor(op, "rhs", r, ANY_NONQ | CJ_EC_QUANT));
  CJV_TRY(cj_verify_check_tensor(op, "group_sizes", g, CJ_EC_INT));
  CJV_TRY(cj_verify_check_tensor(op, "result", o, ANY_NONQ | CJ_EC_QUANT));
  const cj_attr *dn = cjv_attr(op, "ragged_dot_dimension_numbers");
  int64_t lb[CJV_MAX_DIMS], rb[CJV_MAX_DIMS], lc[CJV_MAX_DIMS], rc[CJV_MAX_DIMS],
      lr[CJV_MAX_DIMS], rg[CJV_MAX_DIMS];
  int64_t nlb, nrb, nlc, nrc, nlr, nrg;
  CJV_TRY(cj_verify_get_field_i64s(op, dn, CJ_SK_RAGGED_DOT, CJ_SF_RAGGED_DOT_lhs_batching_dimensions,
                             "lhs_batching_dimensions", lb, &nlb));
  CJV_TRY(cj_verify_get_field_i64s(op, dn, CJ_SK_RAGGED_DOT, CJ_SF_RAGGED_DOT_rhs_batching_dimensions,
                             "rhs_batching_dimensions", rb, &nrb));
  CJV_TRY(cj_verify_get_field_i64s(op, dn, CJ_SK_RAGGED_DOT,
                             CJ_SF_RAGGED_DOT_lhs_contracting_dimensions,
                             "lhs_contracting_dimensions", lc, &nlc));
  CJV_TRY(cj_verify_get_field_i64s(op, dn, CJ_SK_RAGGED_DOT,
                             CJ_SF_RAGGED_DOT_rhs_contracting_dimensions,
                             "rhs_contracting_dimensions", rc, &nrc));
  CJV_TRY(cj_verify_get_field_i64s(op, dn, CJ_SK_RAGGED_DOT, CJ_SF_RAGGED_DOT_lhs_ragged_dimensions,
                             "lhs_ragged_dimensions", lr, &nlr));
  CJV_TRY(cj_verify_get_field_i64s(op, dn, CJ_SK_RAGGED_DOT, CJ_SF_RAGGED_DOT_rhs_group_dimensions,
                             "rhs_group_dimensions", rg, &nrg));
  const cj_attr *pc = cjv_attr(op, "precision_config");
  if (pc && pc->arr.n > 2)
    CJV_FAIL(op, "precision_config must have at most 2 entries, got %d", pc->arr.n);
  /* the dot_general constraints */
  CJV_TRY(cj_verify_check_dot_dims(op, l, r, lb, nlb, rb, nrb, lc, nlc, rc, nrc));
  /* the ragged constraints */
  if (nlr != 1) CJV_FAIL(op, "lhs must have exactly one ragged dimension, got %lld", (long long)nlr);
  int64_t rd = lr[0];
  CJV_TRY(cj_verify_check_dims_in_range(op, "lhs_ragged_dimensions", lr, 1, l->rank));
  enum { NONCONTRACTING, CONTRACTING, BATCH } mode =
      cjv_contains(lb, nlb, rd) ? BATCH : cjv_contains(lc, nlc, rd) ? CONTRACTING : NONCONTRACTING;
  int64_t prefix[CJV_MAX_DIMS], np = 0;
  if (mode == BATCH) {
    for (int64_t i = 0; i < nlb && lb[i] != rd; i++) prefix[np++] = l->dims[lb[i]];
  } else {
    for (int64_t i = 0; i < nlb; i++) prefix[np++] = l->dims[lb[i]];
    if (mode == CONTRACTING) {
      for (int64_t i = 0; i < nlc && lc[i] != rd; i++) prefix[np++] = l->dims[lc[i]];
    } else {
      for (int64_t i = 0; i < rd; i++)
        if (!cjv_contains(lb, nlb, i) && !cjv_contains(lc, nlc, i)) prefix[np++] = l->dims[i];
    }
  }
  cjv_tbuf t1;
  if (g->rank != 1) {
    if (g->rank != np + 1)
      CJV_FAIL(op, "group_sizes must have rank %lld, got %s", (long long)np + 1, CJV_T(g, t1));
    for (int64_t i = 0; i < np; i++)
      if (g->dims[i] != prefix[i])
        CJV_FAIL(op, "group_sizes %s does not match the lhs dimensions before the ragged one",
                 CJV_T(g, t1));
  }
  int64_t groups = g->dims[g->rank - 1];
  CJV_TRY(cj_verify_check_dims_in_range(op, "rhs_group_dimensions", rg, nrg, r->rank));
  CJV_TRY(cj_verify_check_disjoint(op, "rhs_group_dimensions", rg, nrg, "rhs_batching_dimensions", rb,
                             nrb));
  CJV_TRY(cj_verify_check_disjoint(op, "rhs_group_dimensions", rg, nrg, "rhs_contracting_dimensions",
                             rc, nrc));
  if (mode != NONCONTRACTING && nrg != 0)
    CJV_FAIL(op, "rhs must have no group dimension when the lhs ragged dimension is a batch or "
                 "contracting dimension");
  if (mode == NONCONTRACTING) {
    if (nrg != 1)
      CJV_FAIL(op, "rhs must have exactly one group dimension when the lhs ragged dimension is "
                   "not contracting");
    if (!cj_shape_dim_compatible(groups, r->dims[rg[0]]))
      CJV_FAIL(op, "rhs group dimension has size %lld but there are %lld groups",
               (long long)r->dims[rg[0]], (long long)groups);
  }
  int64_t expect[CJV_MAX_DIMS];
  int32_t k = 0;
  if (mode == CONTRACTING) expect[k++] = groups;
  for (int64_t i = 0; i < nlb; i++) expect[k++] = l->dims[lb[i]];
  for (int32_t i = 0; i < l->rank; i++)
    if (!cjv_contains(lb, nlb, i) && !cjv_contains(lc, nlc, i)) expect[k++] = l->dims[i];
  for (int32_t i = 0; i < r->rank; i++)
    if (!cjv_contains(rb, nrb, i) && !cjv_contains(rc, nrc, i) && !cjv_contains(rg, nrg, i))
      expect[k++] = r->dims[i];
  return cj_verify_check_shape_is(op, "result", o, expect, k);
}

/* ======================================================================== top_k, scan */

cj_status cj_verify_chlo_top_k(const cj_op *op) {
  const cj_type *x = T(op, 0), *v = R(op, 0), *idx = R(op, 1);
  CJV_TRY(check_any_tensor(op, "operand", x, ANY_NONQ | CJ_EC_QUANT));
  CJV_TRY(check_any_tensor(op, "values", v, ANY_NONQ | CJ_EC_QUANT));
  CJV_TRY(check_any_tensor(op, "indices", idx, CJ_EC_INT));
  CJV_TRY(cj_verify_check_same_elem(op, "operand", x, "values", v));
  cjv_tbuf t1;
  if (idx->elem->kind != CJ_TYPE_ELEM || idx->dtype != CJ_S32)
    CJV_FAIL(op, "indices must have element type i32, got %s", CJV_T(idx, t1));
  if (!ranked(x)) return NULL;
  int64_t k = 0;
  cjv_get_i64(op, "k", &k);
  if (k < 0) CJV_FAIL(op, "k must not be negative, got %lld", (long long)k);
  if (x->rank < 1) CJV_FAIL(op, "operand must have rank at least 1, got %s", CJV_T(x, t1));
  int32_t last = x->rank - 1;
  if (x->dims[last] != CJ_DYN && x->dims[last] < k)
    CJV_FAIL(op, "the last dimension of operand %s must be at least k = %lld", CJV_T(x, t1),
             (long long)k);
  int64_t expect[CJV_MAX_DIMS];
  for (int32_t i = 0; i < x->rank; i++) expect[i] = x->dims[i];
  expect[last] = k;
  if (ranked(v)) CJV_TRY(cj_verify_check_shape_is(op, "values", v, expect, x->rank));
  if (ranked(idx)) CJV_TRY(cj_verify_check_shape_is(op, "indices", idx, expect, x->rank));
  return NULL;
}

/* segment sizes of an AttrSizedOperandSegments/ResultSegments op: [first, second] */
static bool segments(const cj_op *op, const char *name, int64_t *a, int64_t *b) {
  int64_t v[2], n;
  if (!cj_attr_get_i64s(cjv_attr(op, name), v, 2, &n) || n != 2) return false;
  *a = v[0];
  *b = v[1];
  return true;
}

cj_status cj_verify_chlo_scan(const cj_op *op) {
  int64_t ninputs, ninits, noutputs, ncarries;
  if (!segments(op, "operandSegmentSizes", &ninputs, &ninits)) {
    ninputs = op->nopnds;
    ninits = 0;
  }
  if (ninputs < 0 || ninits < 0 || ninputs + ninits != (int64_t)op->nopnds)
    CJV_FAIL(op, "operandSegmentSizes [%lld, %lld] does not add up to its %u operands",
             (long long)ninputs, (long long)ninits, op->nopnds);
  if (!segments(op, "resultSegmentSizes", &noutputs, &ncarries)) {
    ncarries = ninits;
    noutputs = (int64_t)op->nresults - ncarries;
  }
  if (noutputs < 0 || ncarries < 0 || noutputs + ncarries != (int64_t)op->nresults)
    CJV_FAIL(op, "resultSegmentSizes [%lld, %lld] does not add up to its %u results",
             (long long)noutputs, (long long)ncarries, op->nresults);
  if (ncarries != ninits)
    CJV_FAIL(op, "has %lld inits but %lld carries", (long long)ninits, (long long)ncarries);
  if (ninputs == 0 && noutputs == 0) CJV_FAIL(op, "needs at least one input or output");
  int64_t dim = 0, dim_size = CJ_DYN, given;
  cjv_get_i64(op, "dimension", &dim);
  if (dim < 0) CJV_FAIL(op, "dimension must not be negative, got %lld", (long long)dim);
  if (cjv_get_i64(op, "scan_dim_size", &given)) dim_size = given;
  char what[48];
  cjv_tbuf t1, t2;
  for (int64_t i = 0; i < ninputs; i++) {
    const cj_type *x = T(op, (uint32_t)i);
    snprintf(what, sizeof what, "input #%lld", (long long)i);
    CJV_TRY(cj_verify_check_tensor(op, what, x, ANY_NONQ | CJ_EC_QUANT));
    if (dim >= x->rank)
      CJV_FAIL(op, "dimension %lld is out of range for %s %s", (long long)dim, what, CJV_T(x, t1));
    if (x->dims[dim] == CJ_DYN) continue;
    if (dim_size != CJ_DYN && dim_size != x->dims[dim])
      CJV_FAIL(op, "%s %s has scan dimension size %lld, expected %lld", what, CJV_T(x, t1),
               (long long)x->dims[dim], (long long)dim_size);
    dim_size = x->dims[dim];
  }
  const cj_block *b;
  const cj_op *ret;
  CJV_TRY(cj_verify_region_return(op, 0, "body", &b, &ret));
  CJV_TRY(cj_verify_check_region_nargs(op, "body", b, op->nopnds));
  /* body arguments: one slice of each input (the scan dimension removed), then the carries */
  for (uint32_t i = 0; i < op->nopnds; i++) {
    const cj_type *x = T(op, i), *a = b->args[i].type;
    snprintf(what, sizeof what, "init #%lld", (long long)i - ninputs);
    if ((int64_t)i >= ninputs) CJV_TRY(cj_verify_check_tensor(op, what, x, ANY_NONQ | CJ_EC_QUANT));
    if (!ranked(a) || a->elem != x->elem) goto bad_arg;
    if ((int64_t)i < ninputs) {
      if (a->rank != x->rank - 1) goto bad_arg;
      for (int32_t d = 0, k = 0; d < x->rank; d++) {
        if (d == dim) continue;
        if (!cj_shape_dim_compatible(x->dims[d], a->dims[k++])) goto bad_arg;
      }
    } else if (!cj_shape_compatible(x, a)) {
      goto bad_arg;
    }
    continue;
  bad_arg:
    CJV_FAIL(op, "body argument #%u %s does not fit operand #%u %s", i, CJV_T(a, t1), i,
             CJV_T(x, t2));
  }
  /* results: outputs (a scan dimension inserted into the returned value) then the carries */
  if (ret->nopnds != op->nresults)
    CJV_FAIL(op, "body returns %u values but the op has %u results", ret->nopnds, op->nresults);
  for (uint32_t i = 0; i < op->nresults; i++) {
    const cj_type *v = ret->operands[i]->type, *r = R(op, i);
    snprintf(what, sizeof what, "result #%u", i);
    CJV_TRY(cj_verify_check_tensor(op, what, r, ANY_NONQ | CJ_EC_QUANT));
    if (!ranked(v) || v->elem != r->elem)
      CJV_FAIL(op, "body value #%u %s does not fit %s %s", i, CJV_T(v, t1), what, CJV_T(r, t2));
    if ((int64_t)i < noutputs) {
      if (v->rank + 1 > CJV_MAX_DIMS || dim > v->rank)
        CJV_FAIL(op, "body value #%u %s cannot take the scan dimension %lld", i, CJV_T(v, t1),
                 (long long)dim);
      int64_t expect[CJV_MAX_DIMS];
      for (int32_t d = 0, k = 0; d <= v->rank; d++) expect[d] = d == dim ? dim_size : v->dims[k++];
      CJV_TRY(cj_verify_check_shape_is(op, what, r, expect, v->rank + 1));
    } else if (!cj_shape_compatible(v, r)) {
      CJV_FAIL(op, "body value #%u %s does not fit %s %s", i, CJV_T(v, t1), what, CJV_T(r, t2));
    }
  }
  return NULL;
}
