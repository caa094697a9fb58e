/* cjrt: spec verifiers of shape and data-movement ops: broadcasts, reshapes, transpose, reverse,
 * slices, pad, concatenate, dimension sizes, gather and scatter. */
#include <stdio.h>
#include <string.h>

#include "ir/shape_check.h"
#include "ir/verify_fns.h"

#define PER_TENSOR (CJ_EC_BOOL | CJ_EC_INT | CJ_EC_FLOAT | CJ_EC_COMPLEX | CJ_EC_QTENSOR)

static const cj_type *T(const cj_op *op, uint32_t i) { return cjv_operand_type(op, i); }
static const cj_type *R0(const cj_op *op) { return cjv_result_type(op, 0); }

static bool same_quant_params(const cj_quant *a, const cj_quant *b) {
  if (a->nscales != b->nscales) return false;
  return memcmp(a->scales, b->scales, sizeof(double) * (size_t)a->nscales) == 0 &&
         memcmp(a->zero_points, b->zero_points, sizeof(int64_t) * (size_t)a->nscales) == 0;
}

/* Element types of ops that move data: equal, except that per-axis quantized types may differ
 * in quantization dimension (and, for broadcasts, in scales and zero points). */
static CJ_MUST_USE cj_status check_moved_elem(const cj_op *op, const cj_type *x, const cj_type *r,
                                  bool params_may_differ) {
  const cj_type *ex = x->elem, *er = r->elem;
  if (ex == er) return NULL;
  cjv_tbuf t1, t2;
  if (cj_shape_is_per_axis(ex) && cj_shape_is_per_axis(er)) {
    const cj_quant *qa = ex->quant, *qb = er->quant;
    if (qa->storage == qb->storage && qa->expressed == qb->expressed &&
        qa->storage_min == qb->storage_min && qa->storage_max == qb->storage_max &&
        (params_may_differ || same_quant_params(qa, qb)))
      return NULL;
  }
  CJV_FAIL(op, "operand and result must have the same element type, got %s and %s",
           CJV_T(x, t1), CJV_T(r, t2));
}

/* ======================================================================== broadcasts */

/* broadcast_in_dim and dynamic_broadcast_in_dim share C1-C6. */
static CJ_MUST_USE cj_status check_broadcast_dims(const cj_op *op, const cj_type *x, const cj_type *r,
                                      const int64_t *dims, int64_t n) {
  cjv_tbuf t1, t2;
  if (n != x->rank)
    CJV_FAIL(op, "broadcast_dimensions has %lld entries but the operand %s has rank %d",
             (long long)n, CJV_T(x, t1), x->rank);
  CJV_TRY(cj_verify_check_unique(op, "broadcast_dimensions", dims, n));
  CJV_TRY(cj_verify_check_dims_in_range(op, "broadcast_dimensions", dims, n, r->rank));
  for (int64_t d = 0; d < n; d++) {
    int64_t od = x->dims[d], rd = r->dims[dims[d]];
    if (od != 1 && !cj_shape_dim_compatible(od, rd))
      CJV_FAIL(op,
               "operand dimension %lld has size %lld, which is neither 1 nor the size %lld of "
               "result dimension %lld",
               (long long)d, (long long)od, (long long)rd, (long long)dims[d]);
  }
  CJV_TRY(check_moved_elem(op, x, r, true));
  if (cj_shape_is_per_axis(r->elem)) {
    const cj_quant *qx = x->elem->quant, *qr = r->elem->quant;
    if (qr->axis != dims[qx->axis])
      CJV_FAIL(op, "result quantization dimension %d must be broadcast_dimensions[%d] = %lld",
               qr->axis, qx->axis, (long long)dims[qx->axis]);
    if (x->dims[qx->axis] == 1) {
      for (int32_t i = 0; i < qr->nscales; i++)
        if (qr->scales[i] != qx->scales[0] || qr->zero_points[i] != qx->zero_points[0])
          CJV_FAIL(op,
                   "result scale/zero point #%d (%g:%lld) must repeat the operand's only "
                   "scale/zero point (%g:%lld)",
                   i, qr->scales[i], (long long)qr->zero_points[i], qx->scales[0],
                   (long long)qx->zero_points[0]);
    }
  }
  (void)t2;
  return NULL;
}

cj_status cj_verify_broadcast_in_dim(const cj_op *op) {
  const cj_type *x = T(op, 0), *r = R0(op);
  CJV_TRY(cj_verify_check_tensor(op, "operand", x, CJ_EC_ANY));
  CJV_TRY(cj_verify_check_tensor(op, "result", r, CJ_EC_ANY));
  CJV_TRY(cj_verify_check_static_or_single_bounded(op, "result", r));
  int64_t dims[CJV_MAX_DIMS], n;
  CJV_TRY(cj_verify_get_i64s(op, "broadcast_dimensions", dims, &n, NULL));
  return check_broadcast_dims(op, x, r, dims, n);
}

cj_status cj_verify_dynamic_broadcast_in_dim(const cj_op *op) {
  const cj_type *x = T(op, 0), *r = R0(op);
  CJV_TRY(cj_verify_check_tensor(op, "operand", x, CJ_EC_ANY));
  CJV_TRY(cj_verify_check_tensor(op, "result", r, CJ_EC_ANY));
  int64_t dims[CJV_MAX_DIMS], n;
  CJV_TRY(cj_verify_get_i64s(op, "broadcast_dimensions", dims, &n, NULL));
  CJV_TRY(check_broadcast_dims(op, x, r, dims, n));
  CJV_TRY(cj_verify_check_shape_operand(op, 1, "output_dimensions", r));
  int64_t ke[CJV_MAX_DIMS], nke, kn[CJV_MAX_DIMS], nkn;
  CJV_TRY(cj_verify_get_i64s(op, "known_expanding_dimensions", ke, &nke, NULL));
  CJV_TRY(cj_verify_get_i64s(op, "known_nonexpanding_dimensions", kn, &nkn, NULL));
  CJV_TRY(cj_verify_check_unique_disjoint(op, "known_expanding_dimensions", ke, nke,
                                    "known_nonexpanding_dimensions", kn, nkn));
  CJV_TRY(cj_verify_check_dims_in_range(op, "known_expanding_dimensions", ke, nke, x->rank));
  CJV_TRY(cj_verify_check_dims_in_range(op, "known_nonexpanding_dimensions", kn, nkn, x->rank));
  /* with a constant shape operand, static operand dimensions must be 1 or match it */
  int64_t shape[CJV_MAX_DIMS], ns;
  if (cj_verify_constant_operand_i64s(op, 1, shape, &ns) && ns == r->rank) {
    for (int64_t d = 0; d < n; d++) {
      int64_t od = x->dims[d];
      if (od != CJ_DYN && od != 1 && od != shape[dims[d]])
        CJV_FAIL(op,
                 "operand dimension %lld has size %lld, which is neither 1 nor the value %lld "
                 "of output_dimensions[%lld]",
                 (long long)d, (long long)od, (long long)shape[dims[d]], (long long)dims[d]);
    }
  }
  return NULL;
}

cj_status cj_verify_broadcast(const cj_op *op) {
  const cj_type *x = T(op, 0), *r = R0(op);
  CJV_TRY(cj_verify_check_tensor(op, "operand", x, PER_TENSOR));
  CJV_TRY(cj_verify_check_tensor(op, "result", r, PER_TENSOR));
  int64_t sizes[CJV_MAX_DIMS], n;
  CJV_TRY(cj_verify_get_i64s(op, "broadcast_sizes", sizes, &n, NULL));
  int64_t expect[CJV_MAX_DIMS];
  if (n + x->rank > CJV_MAX_DIMS) CJV_FAIL(op, "result rank is too large");
  for (int64_t i = 0; i < n; i++) {
    if (sizes[i] < 0) CJV_FAIL(op, "broadcast_sizes has negative size %lld", (long long)sizes[i]);
    expect[i] = sizes[i];
  }
  for (int32_t i = 0; i < x->rank; i++) expect[n + i] = x->dims[i];
  CJV_TRY(cj_verify_check_same_elem(op, "operand", x, "result", r));
  return cj_verify_check_shape_is(op, "result", r, expect, (int32_t)(n + x->rank));
}

/* ======================================================================== reshapes */

static int64_t prod_dims(const int64_t *d, int32_t from, int32_t to) {
  int64_t p = 1;
  for (int32_t i = from; i < to; i++) {
    if (d[i] == CJ_DYN) return CJ_DYN;
    p *= d[i];
  }
  return p;
}

static CJ_MUST_USE cj_status check_reshape_elems(const cj_op *op, const cj_type *x, const cj_type *r) {
  CJV_TRY(check_moved_elem(op, x, r, false));
  cjv_tbuf t1, t2;
  if (cj_shape_is_per_axis(x->elem) && cj_shape_is_per_axis(r->elem)) {
    int32_t ax = x->elem->quant->axis, ar = r->elem->quant->axis;
    if (!cj_shape_dim_compatible(x->dims[ax], r->dims[ar]))
      CJV_FAIL(op, "the quantized dimension must keep its size: %s and %s", CJV_T(x, t1),
               CJV_T(r, t2));
    int64_t pa = prod_dims(x->dims, 0, ax), pb = prod_dims(r->dims, 0, ar);
    if (pa != CJ_DYN && pb != CJ_DYN && pa != pb)
      CJV_FAIL(op,
               "the product of the dimensions before the quantized dimension must be the same "
               "in operand and result: %s and %s",
               CJV_T(x, t1), CJV_T(r, t2));
  }
  return NULL;
}

cj_status cj_verify_reshape(const cj_op *op) {
  const cj_type *x = T(op, 0), *r = R0(op);
  CJV_TRY(cj_verify_check_tensor(op, "operand", x, CJ_EC_ANY));
  CJV_TRY(cj_verify_check_tensor(op, "result", r, CJ_EC_ANY));
  CJV_TRY(cj_verify_check_static_or_single_bounded(op, "result", r));
  cjv_tbuf t1, t2;
  if (x->num_elements >= 0 && r->num_elements >= 0 && x->num_elements != r->num_elements)
    CJV_FAIL(op, "operand %s has %lld elements but result %s has %lld", CJV_T(x, t1),
             (long long)x->num_elements, CJV_T(r, t2), (long long)r->num_elements);
  return check_reshape_elems(op, x, r);
}

cj_status cj_verify_dynamic_reshape(const cj_op *op) {
  const cj_type *x = T(op, 0), *r = R0(op);
  CJV_TRY(cj_verify_check_tensor(op, "operand", x, CJ_EC_ANY));
  CJV_TRY(cj_verify_check_tensor(op, "result", r, CJ_EC_ANY));
  cjv_tbuf t1, t2;
  if (x->num_elements >= 0 && r->num_elements >= 0 && x->num_elements != r->num_elements)
    CJV_FAIL(op, "operand %s has %lld elements but result %s has %lld", CJV_T(x, t1),
             (long long)x->num_elements, CJV_T(r, t2), (long long)r->num_elements);
  CJV_TRY(cj_verify_check_shape_operand(op, 1, "output_shape", r));
  int64_t shape[CJV_MAX_DIMS], ns;
  if (x->num_elements >= 0 && cj_verify_constant_operand_i64s(op, 1, shape, &ns)) {
    int64_t p = 1;
    for (int64_t i = 0; i < ns; i++) p *= shape[i];
    if (p != x->num_elements)
      CJV_FAIL(op, "output_shape %s has %lld elements but the operand %s has %lld",
               CJV_DIMS(shape, ns, t2), (long long)p, CJV_T(x, t1), (long long)x->num_elements);
  }
  return check_reshape_elems(op, x, r);
}

cj_status cj_verify_transpose(const cj_op *op) {
  const cj_type *x = T(op, 0), *r = R0(op);
  CJV_TRY(cj_verify_check_tensor(op, "operand", x, CJ_EC_ANY));
  CJV_TRY(cj_verify_check_tensor(op, "result", r, CJ_EC_ANY));
  int64_t perm[CJV_MAX_DIMS], n;
  CJV_TRY(cj_verify_get_i64s(op, "permutation", perm, &n, NULL));
  cjv_tbuf t1, t2;
  if (n != x->rank)
    CJV_FAIL(op, "permutation %s must have one entry per operand dimension (%d)",
             CJV_DIMS(perm, n, t1), x->rank);
  CJV_TRY(cj_verify_check_dims_in_range(op, "permutation", perm, n, x->rank));
  CJV_TRY(cj_verify_check_unique(op, "permutation", perm, n));
  int64_t expect[CJV_MAX_DIMS];
  for (int64_t i = 0; i < n; i++) expect[i] = x->dims[perm[i]];
  CJV_TRY(cj_verify_check_shape_is(op, "result", r, expect, (int32_t)n));
  CJV_TRY(check_moved_elem(op, x, r, false));
  if (cj_shape_is_per_axis(r->elem)) {
    int32_t ar = r->elem->quant->axis, ax = x->elem->quant->axis;
    if (perm[ar] != ax)
      CJV_FAIL(op, "operand quantization dimension %d must be permutation[%d] = %lld", ax, ar,
               (long long)perm[ar]);
  }
  (void)t2;
  return NULL;
}

cj_status cj_verify_reverse(const cj_op *op) {
  const cj_type *x = T(op, 0), *r = R0(op);
  CJV_TRY(cj_verify_check_tensor(op, "operand", x, PER_TENSOR));
  CJV_TRY(cj_verify_check_tensor(op, "result", r, PER_TENSOR));
  CJV_TRY(cj_verify_check_same_type(op, "operand", x, "result", r));
  int64_t dims[CJV_MAX_DIMS], n;
  CJV_TRY(cj_verify_get_i64s(op, "dimensions", dims, &n, NULL));
  CJV_TRY(cj_verify_check_unique(op, "dimensions", dims, n));
  return cj_verify_check_dims_in_range(op, "dimensions", dims, n, r->rank);
}

/* ======================================================================== slices */

cj_status cj_verify_slice(const cj_op *op) {
  const cj_type *x = T(op, 0), *r = R0(op);
  CJV_TRY(cj_verify_check_tensor(op, "operand", x, PER_TENSOR));
  CJV_TRY(cj_verify_check_tensor(op, "result", r, PER_TENSOR));
  CJV_TRY(cj_verify_check_same_elem(op, "operand", x, "result", r));
  int64_t st[CJV_MAX_DIMS], li[CJV_MAX_DIMS], sd[CJV_MAX_DIMS], ns, nl, nd;
  CJV_TRY(cj_verify_get_i64s(op, "start_indices", st, &ns, NULL));
  CJV_TRY(cj_verify_get_i64s(op, "limit_indices", li, &nl, NULL));
  CJV_TRY(cj_verify_get_i64s(op, "strides", sd, &nd, NULL));
  cjv_tbuf t1;
  if (ns != x->rank || nl != x->rank || nd != x->rank)
    CJV_FAIL(op,
             "start_indices, limit_indices and strides must each have one entry per operand "
             "dimension (%d), got %lld, %lld and %lld",
             x->rank, (long long)ns, (long long)nl, (long long)nd);
  int64_t expect[CJV_MAX_DIMS];
  for (int32_t i = 0; i < x->rank; i++) {
    if (st[i] < 0)
      CJV_FAIL(op, "start index %lld in dimension %d is negative", (long long)st[i], i);
    if (st[i] > li[i])
      CJV_FAIL(op, "start index %lld is larger than limit index %lld in dimension %d",
               (long long)st[i], (long long)li[i], i);
    int64_t size = x->dims[i] != CJ_DYN ? x->dims[i] : cj_shape_bound(x, i);
    if (size != CJ_DYN && li[i] > size)
      CJV_FAIL(op, "limit index %lld is larger than the size %lld of dimension %d of %s",
               (long long)li[i], (long long)size, i, CJV_T(x, t1));
    if (sd[i] <= 0) CJV_FAIL(op, "stride %lld in dimension %d must be positive", (long long)sd[i], i);
    expect[i] = (li[i] - st[i] + sd[i] - 1) / sd[i];
  }
  return cj_verify_check_shape_is(op, "result", r, expect, x->rank);
}

/* start_indices operands of dynamic_slice / dynamic_update_slice: 0-D integer tensors of one
 * type, one per operand dimension. */
static CJ_MUST_USE cj_status check_start_indices(const cj_op *op, uint32_t first, int32_t rank) {
  uint32_t n = op->nopnds - first;
  if ((int32_t)n != rank)
    CJV_FAIL(op, "takes %d start indices (one per operand dimension), got %u", rank, n);
  char what[48];
  for (uint32_t i = 0; i < n; i++) {
    snprintf(what, sizeof what, "start index #%u", i);
    CJV_TRY(cj_verify_check_tensor_rank(op, what, T(op, first + i), CJ_EC_INT, 0));
    if (T(op, first + i)->elem != T(op, first)->elem)
      CJV_TRY(cj_verify_check_same_elem(op, "start index #0", T(op, first), what, T(op, first + i)));
  }
  return NULL;
}

cj_status cj_verify_dynamic_slice(const cj_op *op) {
  if (op->nopnds < 1) CJV_FAIL(op, "needs an operand");
  const cj_type *x = T(op, 0), *r = R0(op);
  CJV_TRY(cj_verify_check_tensor(op, "operand", x, PER_TENSOR));
  CJV_TRY(cj_verify_check_tensor(op, "result", r, PER_TENSOR));
  CJV_TRY(cj_verify_check_same_elem(op, "operand", x, "result", r));
  int64_t sizes[CJV_MAX_DIMS], n;
  CJV_TRY(cj_verify_get_i64s(op, "slice_sizes", sizes, &n, NULL));
  if (n != x->rank)
    CJV_FAIL(op, "slice_sizes has %lld entries but the operand has rank %d", (long long)n,
             x->rank);
  CJV_TRY(check_start_indices(op, 1, x->rank));
  for (int32_t i = 0; i < x->rank; i++) {
    if (sizes[i] < 0) CJV_FAIL(op, "slice size %lld is negative", (long long)sizes[i]);
    if (x->dims[i] != CJ_DYN && sizes[i] > x->dims[i])
      CJV_FAIL(op, "slice size %lld is larger than the size %lld of operand dimension %d",
               (long long)sizes[i], (long long)x->dims[i], i);
  }
  return cj_verify_check_shape_is(op, "result", r, sizes, (int32_t)n);
}

cj_status cj_verify_dynamic_update_slice(const cj_op *op) {
  if (op->nopnds < 2) CJV_FAIL(op, "needs an operand and an update");
  const cj_type *x = T(op, 0), *u = T(op, 1), *r = R0(op);
  CJV_TRY(cj_verify_check_tensors(op, PER_TENSOR, "operand", x, "update", u, "result", r, NULL));
  CJV_TRY(cj_verify_check_same_type(op, "operand", x, "result", r));
  CJV_TRY(cj_verify_check_same_elem(op, "update", u, "operand", x));
  cjv_tbuf t1, t2;
  if (u->rank != x->rank)
    CJV_FAIL(op, "update %s must have the rank of the operand %s", CJV_T(u, t1), CJV_T(x, t2));
  CJV_TRY(check_start_indices(op, 2, x->rank));
  for (int32_t i = 0; i < x->rank; i++)
    if (u->dims[i] != CJ_DYN && x->dims[i] != CJ_DYN && u->dims[i] > x->dims[i])
      CJV_FAIL(op, "update dimension %d has size %lld, larger than the operand's %lld", i,
               (long long)u->dims[i], (long long)x->dims[i]);
  return NULL;
}

cj_status cj_verify_real_dynamic_slice(const cj_op *op) {
  const cj_type *x = T(op, 0), *r = R0(op);
  CJV_TRY(cj_verify_check_tensor(op, "operand", x, PER_TENSOR));
  CJV_TRY(cj_verify_check_tensor(op, "result", r, PER_TENSOR));
  CJV_TRY(cj_verify_check_same_elem(op, "operand", x, "result", r));
  static const char *const names[3] = {"start_indices", "limit_indices", "strides"};
  cjv_tbuf t1;
  for (uint32_t k = 0; k < 3; k++) {
    const cj_type *t = T(op, 1 + k);
    CJV_TRY(cj_verify_check_tensor_rank(op, names[k], t, CJ_EC_INT, 1));
    if (t->dims[0] != CJ_DYN && t->dims[0] != x->rank)
      CJV_FAIL(op, "%s %s must have one entry per operand dimension (%d)", names[k],
               CJV_T(t, t1), x->rank);
  }
  if (r->rank != x->rank)
    CJV_FAIL(op, "result %s must have the rank of the operand (%d)", CJV_T(r, t1), x->rank);
  /* with constant operands, the result shape is known */
  int64_t st[CJV_MAX_DIMS], li[CJV_MAX_DIMS], sd[CJV_MAX_DIMS], a, b, c;
  if (cj_verify_constant_operand_i64s(op, 1, st, &a) && cj_verify_constant_operand_i64s(op, 2, li, &b) &&
      cj_verify_constant_operand_i64s(op, 3, sd, &c) && a == x->rank && b == a && c == a) {
    int64_t expect[CJV_MAX_DIMS];
    for (int64_t i = 0; i < a; i++) {
      if (sd[i] <= 0)
        CJV_FAIL(op, "stride %lld in dimension %lld must be positive", (long long)sd[i],
                 (long long)i);
      if (st[i] < 0 || st[i] > li[i] || (x->dims[i] != CJ_DYN && li[i] > x->dims[i]))
        CJV_FAIL(op, "slice [%lld, %lld) of dimension %lld is out of bounds of %s",
                 (long long)st[i], (long long)li[i], (long long)i, CJV_T(x, t1));
      expect[i] = (li[i] - st[i] + sd[i] - 1) / sd[i];
    }
    CJV_TRY(cj_verify_check_shape_is(op, "result", r, expect, (int32_t)a));
  }
  return NULL;
}

/* ======================================================================== pad, concatenate */

cj_status cj_verify_pad(const cj_op *op) {
  const cj_type *x = T(op, 0), *pv = T(op, 1), *r = R0(op);
  CJV_TRY(cj_verify_check_tensor(op, "operand", x, PER_TENSOR));
  CJV_TRY(cj_verify_check_tensor_rank(op, "padding_value", pv, PER_TENSOR, 0));
  CJV_TRY(cj_verify_check_tensor(op, "result", r, PER_TENSOR));
  CJV_TRY(cj_verify_check_same_elem(op, "operand", x, "padding_value", pv));
  CJV_TRY(cj_verify_check_same_elem(op, "operand", x, "result", r));
  int64_t lo[CJV_MAX_DIMS], hi[CJV_MAX_DIMS], in[CJV_MAX_DIMS], nl, nh, ni;
  CJV_TRY(cj_verify_get_i64s(op, "edge_padding_low", lo, &nl, NULL));
  CJV_TRY(cj_verify_get_i64s(op, "edge_padding_high", hi, &nh, NULL));
  CJV_TRY(cj_verify_get_i64s(op, "interior_padding", in, &ni, NULL));
  if (nl != x->rank || nh != x->rank || ni != x->rank)
    CJV_FAIL(op,
             "edge_padding_low, edge_padding_high and interior_padding must each have one entry "
             "per operand dimension (%d), got %lld, %lld and %lld",
             x->rank, (long long)nl, (long long)nh, (long long)ni);
  int64_t expect[CJV_MAX_DIMS];
  for (int32_t i = 0; i < x->rank; i++) {
    if (in[i] < 0)
      CJV_FAIL(op, "interior padding %lld in dimension %d is negative", (long long)in[i], i);
    int64_t d = x->dims[i];
    expect[i] = CJ_DYN;
    if (d == CJ_DYN) {
      int64_t b = cj_shape_bound(x, i);
      if (b != CJ_DYN && b + lo[i] + hi[i] + (b > 0 ? b - 1 : 0) * in[i] < 0)
        CJV_FAIL(op, "padding gives a negative bound in dimension %d", i);
      continue;
    }
    int64_t size = d + lo[i] + hi[i] + (d > 0 ? d - 1 : 0) * in[i];
    if (size < 0) CJV_FAIL(op, "padding gives a negative size %lld in dimension %d", (long long)size, i);
    expect[i] = size;
  }
  return cj_verify_check_shape_is(op, "result", r, expect, x->rank);
}

cj_status cj_verify_dynamic_pad(const cj_op *op) {
  const cj_type *x = T(op, 0), *pv = T(op, 1), *r = R0(op);
  CJV_TRY(cj_verify_check_tensor(op, "operand", x, PER_TENSOR));
  CJV_TRY(cj_verify_check_tensor_rank(op, "padding_value", pv, PER_TENSOR, 0));
  CJV_TRY(cj_verify_check_tensor(op, "result", r, PER_TENSOR));
  CJV_TRY(cj_verify_check_same_elem(op, "operand", x, "padding_value", pv));
  CJV_TRY(cj_verify_check_same_elem(op, "operand", x, "result", r));
  static const char *const names[3] = {"edge_padding_low", "edge_padding_high",
                                       "interior_padding"};
  cjv_tbuf t1;
  int64_t v[3][CJV_MAX_DIMS], n[3];
  bool known = true;
  for (uint32_t k = 0; k < 3; k++) {
    const cj_type *t = T(op, 2 + k);
    CJV_TRY(cj_verify_check_tensor_rank(op, names[k], t, CJ_EC_INT, 1));
    if (t->dims[0] != x->rank)
      CJV_FAIL(op, "%s %s must have one entry per operand dimension (%d)", names[k],
               CJV_T(t, t1), x->rank);
    if (!cj_verify_constant_operand_i64s(op, 2 + k, v[k], &n[k]) || n[k] != x->rank) known = false;
  }
  if (r->rank != x->rank)
    CJV_FAIL(op, "result %s must have the rank of the operand (%d)", CJV_T(r, t1), x->rank);
  int64_t in[CJV_MAX_DIMS], ni;
  if (cj_verify_constant_operand_i64s(op, 4, in, &ni))
    for (int64_t i = 0; i < ni; i++)
      if (in[i] < 0)
        CJV_FAIL(op, "interior_padding %lld in dimension %lld is negative", (long long)in[i],
                 (long long)i);
  if (known) {
    int64_t expect[CJV_MAX_DIMS];
    for (int32_t i = 0; i < x->rank; i++) {
      int64_t d = x->dims[i];
      expect[i] = d == CJ_DYN ? CJ_DYN : d + v[0][i] + v[1][i] + (d > 0 ? d - 1 : 0) * v[2][i];
    }
    CJV_TRY(cj_verify_check_shape_is(op, "result", r, expect, x->rank));
  }
  return NULL;
}

cj_status cj_verify_concatenate(const cj_op *op) {
  if (op->nopnds == 0) CJV_FAIL(op, "needs at least one input");
  const cj_type *x0 = T(op, 0), *r = R0(op);
  CJV_TRY(cj_verify_check_tensor(op, "input #0", x0, PER_TENSOR));
  CJV_TRY(cj_verify_check_tensor(op, "result", r, PER_TENSOR));
  int64_t dim = 0;
  cjv_get_i64(op, "dimension", &dim);
  cjv_tbuf t1, t2;
  if (x0->rank == 0) CJV_FAIL(op, "cannot concatenate 0-dimensional tensors");
  if (dim < 0 || dim >= x0->rank)
    CJV_FAIL(op, "dimension %lld is out of range [0, %d)", (long long)dim, x0->rank);
  int64_t expect[CJV_MAX_DIMS];
  for (int32_t d = 0; d < x0->rank; d++) expect[d] = x0->dims[d];
  expect[dim] = 0;
  char what[48];
  for (uint32_t i = 0; i < op->nopnds; i++) {
    const cj_type *x = T(op, i);
    snprintf(what, sizeof what, "input #%u", i);
    CJV_TRY(cj_verify_check_tensor(op, what, x, PER_TENSOR));
    CJV_TRY(cj_verify_check_same_elem(op, "input #0", x0, what, x));
    if (x->rank != x0->rank)
      CJV_FAIL(op, "input #%u %s must have the rank of input #0 %s", i, CJV_T(x, t1),
               CJV_T(x0, t2));
    for (int32_t d = 0; d < x->rank; d++) {
      if (d == dim) continue;
      if (!cj_shape_dim_compatible(expect[d], x->dims[d]))
        CJV_FAIL(op, "input #%u %s and input #0 %s differ in dimension %d", i, CJV_T(x, t1),
                 CJV_T(x0, t2), d);
      if (expect[d] == CJ_DYN) expect[d] = x->dims[d];
    }
    if (expect[dim] != CJ_DYN) expect[dim] = x->dims[dim] == CJ_DYN ? CJ_DYN : expect[dim] + x->dims[dim];
  }
  CJV_TRY(cj_verify_check_same_elem(op, "input #0", x0, "result", r));
  return cj_verify_check_shape_is(op, "result", r, expect, x0->rank);
}

/* ======================================================================== dimension sizes */

cj_status cj_verify_get_dimension_size(const cj_op *op) {
  const cj_type *x = T(op, 0), *r = R0(op);
  CJV_TRY(cj_verify_check_tensor(op, "operand", x, CJ_EC_ANY));
  int64_t dim = 0;
  cjv_get_i64(op, "dimension", &dim);
  if (dim < 0 || dim >= x->rank)
    CJV_FAIL(op, "dimension %lld is out of range [0, %d)", (long long)dim, x->rank);
  return cj_verify_check_scalar(op, "result must be", r, CJ_S32);
}

cj_status cj_verify_set_dimension_size(const cj_op *op) {
  const cj_type *x = T(op, 0), *s = T(op, 1), *r = R0(op);
  CJV_TRY(cj_verify_check_tensor(op, "operand", x, CJ_EC_ANY));
  CJV_TRY(cj_verify_check_tensor_rank(op, "size", s, CJ_EC_INT, 0));
  CJV_TRY(cj_verify_check_tensor(op, "result", r, CJ_EC_ANY));
  int64_t dim = 0;
  cjv_get_i64(op, "dimension", &dim);
  if (dim < 0 || dim >= x->rank)
    CJV_FAIL(op, "dimension %lld is out of range [0, %d)", (long long)dim, x->rank);
  CJV_TRY(cj_verify_check_same_elem(op, "operand", x, "result", r));
  int64_t expect[CJV_MAX_DIMS];
  for (int32_t i = 0; i < x->rank; i++) expect[i] = x->dims[i];
  expect[dim] = CJ_DYN; /* the new size is a runtime value unless the constant says */
  int64_t v[1], n;
  if (cj_verify_constant_operand_i64s(op, 1, v, &n) && n == 1) expect[dim] = v[0];
  cjv_tbuf t1, t2;
  if (r->rank != x->rank)
    CJV_FAIL(op, "result %s must have the rank of the operand %s", CJV_T(r, t1), CJV_T(x, t2));
  for (int32_t i = 0; i < x->rank; i++)
    if (i != dim && !cj_shape_dim_compatible(expect[i], r->dims[i]))
      CJV_FAIL(op, "result %s must keep the operand's dimension %d (%s)", CJV_T(r, t1), i,
               CJV_T(x, t2));
  return NULL;
}

/* ======================================================================== gather */

typedef struct gather_dims {
  int64_t offset[CJV_MAX_DIMS], collapsed[CJV_MAX_DIMS], obatch[CJV_MAX_DIMS],
      ibatch[CJV_MAX_DIMS], start_map[CJV_MAX_DIMS];
  int64_t noffset, ncollapsed, nobatch, nibatch, nstart_map;
  int64_t index_vector_dim;
} gather_dims;

static CJ_MUST_USE cj_status read_gather_dims(const cj_op *op, gather_dims *g) {
  const cj_attr *dn = cjv_attr(op, "dimension_numbers");
  CJV_TRY(cj_verify_get_field_i64s(op, dn, CJ_SK_GATHER, CJ_SF_GATHER_offset_dims, "offset_dims",
                             g->offset, &g->noffset));
  CJV_TRY(cj_verify_get_field_i64s(op, dn, CJ_SK_GATHER, CJ_SF_GATHER_collapsed_slice_dims,
                             "collapsed_slice_dims", g->collapsed, &g->ncollapsed));
  CJV_TRY(cj_verify_get_field_i64s(op, dn, CJ_SK_GATHER, CJ_SF_GATHER_operand_batching_dims,
                             "operand_batching_dims", g->obatch, &g->nobatch));
  CJV_TRY(cj_verify_get_field_i64s(op, dn, CJ_SK_GATHER, CJ_SF_GATHER_start_indices_batching_dims,
                             "start_indices_batching_dims", g->ibatch, &g->nibatch));
  CJV_TRY(cj_verify_get_field_i64s(op, dn, CJ_SK_GATHER, CJ_SF_GATHER_start_index_map,
                             "start_index_map", g->start_map, &g->nstart_map));
  g->index_vector_dim = cj_verify_field_i64(dn, CJ_SK_GATHER, CJ_SF_GATHER_index_vector_dim, 0);
  return NULL;
}

/* gather and dynamic_gather: C1-C23; `sizes` NULL when the slice sizes are not known. */
static CJ_MUST_USE cj_status check_gather(const cj_op *op, const gather_dims *g, const cj_type *x,
                              const cj_type *idx, const cj_type *r, const int64_t *sizes,
                              int64_t nsizes) {
  cjv_tbuf t1, t2;
  int32_t rank = x->rank;
  if (g->noffset + g->ncollapsed + g->nobatch != rank)
    CJV_FAIL(op,
             "offset_dims (%lld), collapsed_slice_dims (%lld) and operand_batching_dims (%lld) "
             "must together have one entry per operand dimension (%d)",
             (long long)g->noffset, (long long)g->ncollapsed, (long long)g->nobatch, rank);
  int64_t ivd = g->index_vector_dim;
  if (ivd < 0 || ivd > idx->rank)
    CJV_FAIL(op, "index_vector_dim %lld is out of range [0, %d]", (long long)ivd, idx->rank);
  int64_t index_size = ivd == idx->rank ? 1 : idx->dims[ivd];
  if (index_size != CJ_DYN && index_size != g->nstart_map)
    CJV_FAIL(op,
             "start_index_map has %lld entries but dimension index_vector_dim = %lld of "
             "start_indices %s has size %lld",
             (long long)g->nstart_map, (long long)ivd, CJV_T(idx, t1), (long long)index_size);
  CJV_TRY(cj_verify_check_sorted(op, "offset_dims", g->offset, g->noffset));
  CJV_TRY(cj_verify_check_disjoint(op, "collapsed_slice_dims", g->collapsed, g->ncollapsed,
                             "operand_batching_dims", g->obatch, g->nobatch));
  CJV_TRY(cj_verify_check_sorted(op, "collapsed_slice_dims", g->collapsed, g->ncollapsed));
  CJV_TRY(cj_verify_check_dims_in_range(op, "collapsed_slice_dims", g->collapsed, g->ncollapsed, rank));
  CJV_TRY(cj_verify_check_sorted(op, "operand_batching_dims", g->obatch, g->nobatch));
  CJV_TRY(cj_verify_check_dims_in_range(op, "operand_batching_dims", g->obatch, g->nobatch, rank));
  CJV_TRY(cj_verify_check_unique(op, "start_indices_batching_dims", g->ibatch, g->nibatch));
  CJV_TRY(cj_verify_check_dims_in_range(op, "start_indices_batching_dims", g->ibatch, g->nibatch,
                                  idx->rank));
  if (cjv_contains(g->ibatch, g->nibatch, ivd))
    CJV_FAIL(op, "start_indices_batching_dims must not contain index_vector_dim %lld",
             (long long)ivd);
  if (g->nobatch != g->nibatch)
    CJV_FAIL(op,
             "operand_batching_dims (%lld entries) and start_indices_batching_dims (%lld) must "
             "have the same size",
             (long long)g->nobatch, (long long)g->nibatch);
  CJV_TRY(cj_verify_check_paired_dims(op, "operand batching", x, g->obatch, "start_indices batching",
                                idx, g->ibatch, g->nobatch));
  CJV_TRY(cj_verify_check_unique(op, "start_index_map", g->start_map, g->nstart_map));
  CJV_TRY(cj_verify_check_disjoint(op, "start_index_map", g->start_map, g->nstart_map,
                             "operand_batching_dims", g->obatch, g->nobatch));
  CJV_TRY(cj_verify_check_dims_in_range(op, "start_index_map", g->start_map, g->nstart_map, rank));
  if (nsizes != rank)
    CJV_FAIL(op, "slice_sizes has %lld entries but the operand has rank %d", (long long)nsizes,
             rank);
  if (sizes) {
    for (int64_t i = 0; i < g->ncollapsed; i++)
      if (sizes[g->collapsed[i]] > 1)
        CJV_FAIL(op, "slice_sizes[%lld] = %lld must be at most 1 for a collapsed dimension",
                 (long long)g->collapsed[i], (long long)sizes[g->collapsed[i]]);
    for (int64_t i = 0; i < g->nobatch; i++)
      if (sizes[g->obatch[i]] > 1)
        CJV_FAIL(op, "slice_sizes[%lld] = %lld must be at most 1 for a batching dimension",
                 (long long)g->obatch[i], (long long)sizes[g->obatch[i]]);
    for (int32_t i = 0; i < rank; i++)
      if (sizes[i] < 0 || (x->dims[i] != CJ_DYN && sizes[i] > x->dims[i]))
        CJV_FAIL(op, "slice_sizes[%d] = %lld is out of bounds for operand dimension of size %lld",
                 i, (long long)sizes[i], (long long)x->dims[i]);
  }
  /* the result: batch dims from start_indices (less index_vector_dim) and offset dims from the
   * slice sizes (less collapsed and batching dims) */
  int64_t idx_rank = idx->rank + (ivd == idx->rank ? 1 : 0);
  int64_t rrank = g->noffset + idx_rank - 1;
  if (rrank > CJV_MAX_DIMS) CJV_FAIL(op, "result rank is too large");
  CJV_TRY(cj_verify_check_dims_in_range(op, "offset_dims", g->offset, g->noffset, rrank));
  int64_t expect[CJV_MAX_DIMS];
  int64_t bi = 0, si = 0;
  for (int64_t d = 0; d < rrank; d++) {
    if (cjv_contains(g->offset, g->noffset, d)) {
      while (si < rank && (cjv_contains(g->collapsed, g->ncollapsed, si) ||
                           cjv_contains(g->obatch, g->nobatch, si)))
        si++;
      expect[d] = sizes && si < rank ? sizes[si] : CJ_DYN;
      si++;
    } else {
      if (bi == ivd) bi++;
      expect[d] = bi < idx->rank ? idx->dims[bi] : 1;
      bi++;
    }
  }
  CJV_TRY(cj_verify_check_same_elem(op, "operand", x, "result", r));
  (void)t2;
  return cj_verify_check_shape_is(op, "result", r, expect, (int32_t)rrank);
}

cj_status cj_verify_gather(const cj_op *op) {
  const cj_type *x = T(op, 0), *idx = T(op, 1), *r = R0(op);
  CJV_TRY(cj_verify_check_tensor(op, "operand", x, PER_TENSOR));
  CJV_TRY(cj_verify_check_tensor(op, "start_indices", idx, CJ_EC_INT));
  CJV_TRY(cj_verify_check_tensor(op, "result", r, PER_TENSOR));
  gather_dims g;
  CJV_TRY(read_gather_dims(op, &g));
  int64_t sizes[CJV_MAX_DIMS], n;
  CJV_TRY(cj_verify_get_i64s(op, "slice_sizes", sizes, &n, NULL));
  return check_gather(op, &g, x, idx, r, sizes, n);
}

cj_status cj_verify_dynamic_gather(const cj_op *op) {
  const cj_type *x = T(op, 0), *idx = T(op, 1), *ss = T(op, 2), *r = R0(op);
  CJV_TRY(cj_verify_check_tensor(op, "operand", x, PER_TENSOR));
  CJV_TRY(cj_verify_check_tensor(op, "start_indices", idx, CJ_EC_INT));
  CJV_TRY(cj_verify_check_tensor_rank(op, "slice_sizes", ss, CJ_EC_INT, 1));
  CJV_TRY(cj_verify_check_tensor(op, "result", r, PER_TENSOR));
  gather_dims g;
  CJV_TRY(read_gather_dims(op, &g));
  int64_t sizes[CJV_MAX_DIMS], n;
  bool known = cj_verify_constant_operand_i64s(op, 2, sizes, &n);
  if (!known) n = ss->dims[0] == CJ_DYN ? x->rank : ss->dims[0];
  return check_gather(op, &g, x, idx, r, known ? sizes : NULL, n);
}

cj_status cj_verify_torch_index_select(const cj_op *op) {
  const cj_type *x = T(op, 0), *idx = T(op, 1), *r = R0(op);
  CJV_TRY(cj_verify_check_tensor(op, "operand", x, PER_TENSOR));
  CJV_TRY(cj_verify_check_tensor(op, "index", idx, CJ_EC_INT));
  CJV_TRY(cj_verify_check_tensor(op, "result", r, PER_TENSOR));
  CJV_TRY(cj_verify_check_same_elem(op, "operand", x, "result", r));
  int64_t dim = 0, bd = 0;
  cjv_get_i64(op, "dim", &dim);
  cjv_get_i64(op, "batch_dims", &bd);
  if (dim < 0 || dim >= x->rank)
    CJV_FAIL(op, "dim %lld is out of range [0, %d)", (long long)dim, x->rank);
  if (bd < 0 || bd > dim || bd > idx->rank)
    CJV_FAIL(op, "batch_dims %lld must be in [0, min(dim = %lld, rank(index) = %d)]", (long long)bd,
             (long long)dim, idx->rank);
  int64_t expect[CJV_MAX_DIMS];
  int64_t rr = x->rank - 1 + idx->rank - bd;
  if (rr > CJV_MAX_DIMS) CJV_FAIL(op, "result rank is too large");
  int64_t k = 0;
  for (int64_t i = 0; i < dim; i++) expect[k++] = x->dims[i];
  for (int64_t i = bd; i < idx->rank; i++) expect[k++] = idx->dims[i];
  for (int64_t i = dim + 1; i < x->rank; i++) expect[k++] = x->dims[i];
  for (int64_t i = 0; i < bd; i++)
    if (!cj_shape_dim_compatible(x->dims[i], idx->dims[i]))
      CJV_FAIL(op, "batch dimension %lld has size %lld in the operand but %lld in the index",
               (long long)i, (long long)x->dims[i], (long long)idx->dims[i]);
  return cj_verify_check_shape_is(op, "result", r, expect, (int32_t)rr);
}

/* ======================================================================== scatter */

cj_status cj_verify_scatter(const cj_op *op) {
  if (op->nopnds < 3 || op->nopnds % 2 == 0)
    CJV_FAIL(op, "takes N inputs, scatter_indices and N updates (N >= 1), got %u operands",
             op->nopnds);
  uint32_t n = (op->nopnds - 1) / 2;
  if (op->nresults != n) CJV_FAIL(op, "has %u inputs but %u results", n, op->nresults);
  const cj_type *idx = T(op, n);
  const cj_type *ins[CJV_MAX_DIMS], *ups[CJV_MAX_DIMS];
  if (n > CJV_MAX_DIMS) CJV_FAIL(op, "has too many inputs (%u)", n);
  char w1[48], w2[48];
  CJV_TRY(cj_verify_check_tensor(op, "scatter_indices", idx, CJ_EC_INT));
  for (uint32_t i = 0; i < n; i++) {
    ins[i] = T(op, i);
    ups[i] = T(op, n + 1 + i);
    snprintf(w1, sizeof w1, "inputs[%u]", i);
    snprintf(w2, sizeof w2, "updates[%u]", i);
    CJV_TRY(cj_verify_check_tensor(op, w1, ins[i], PER_TENSOR));
    CJV_TRY(cj_verify_check_tensor(op, w2, ups[i], PER_TENSOR));
    CJV_TRY(cj_verify_check_same_shape(op, "inputs[0]", ins[0], w1, ins[i]));
    CJV_TRY(cj_verify_check_same_shape(op, "updates[0]", ups[0], w2, ups[i]));
    CJV_TRY(cj_verify_check_same_elem(op, w1, ins[i], w2, ups[i]));
  }
  const cj_attr *dn = cjv_attr(op, "scatter_dimension_numbers");
  int64_t uwd[CJV_MAX_DIMS], iwd[CJV_MAX_DIMS], ib[CJV_MAX_DIMS], sib[CJV_MAX_DIMS],
      s2o[CJV_MAX_DIMS];
  int64_t nuwd, niwd, nib, nsib, ns2o;
  CJV_TRY(cj_verify_get_field_i64s(op, dn, CJ_SK_SCATTER, CJ_SF_SCATTER_update_window_dims,
                             "update_window_dims", uwd, &nuwd));
  CJV_TRY(cj_verify_get_field_i64s(op, dn, CJ_SK_SCATTER, CJ_SF_SCATTER_inserted_window_dims,
                             "inserted_window_dims", iwd, &niwd));
  CJV_TRY(cj_verify_get_field_i64s(op, dn, CJ_SK_SCATTER, CJ_SF_SCATTER_input_batching_dims,
                             "input_batching_dims", ib, &nib));
  CJV_TRY(cj_verify_get_field_i64s(op, dn, CJ_SK_SCATTER, CJ_SF_SCATTER_scatter_indices_batching_dims,
                             "scatter_indices_batching_dims", sib, &nsib));
  CJV_TRY(cj_verify_get_field_i64s(op, dn, CJ_SK_SCATTER, CJ_SF_SCATTER_scatter_dims_to_operand_dims,
                             "scatter_dims_to_operand_dims", s2o, &ns2o));
  int64_t ivd = cj_verify_field_i64(dn, CJ_SK_SCATTER, CJ_SF_SCATTER_index_vector_dim, 0);
  const cj_type *x = ins[0], *u = ups[0];
  int32_t rank = x->rank;
  cjv_tbuf t1, t2;
  if (ivd < 0 || ivd > idx->rank)
    CJV_FAIL(op, "index_vector_dim %lld is out of range [0, %d]", (long long)ivd, idx->rank);
  if (nuwd + niwd + nib != rank)
    CJV_FAIL(op,
             "update_window_dims (%lld), inserted_window_dims (%lld) and input_batching_dims "
             "(%lld) must together have one entry per input dimension (%d)",
             (long long)nuwd, (long long)niwd, (long long)nib, rank);
  int64_t idx_rank = idx->rank + (ivd == idx->rank ? 1 : 0);
  int64_t urank = idx_rank - 1 + nuwd;
  if (u->rank != urank)
    CJV_FAIL(op,
             "updates %s must have rank %lld (rank of scatter_indices less the index vector "
             "dimension, plus the update window dimensions)",
             CJV_T(u, t1), (long long)urank);
  CJV_TRY(cj_verify_check_sorted(op, "update_window_dims", uwd, nuwd));
  CJV_TRY(cj_verify_check_dims_in_range(op, "update_window_dims", uwd, nuwd, u->rank));
  CJV_TRY(cj_verify_check_disjoint(op, "inserted_window_dims", iwd, niwd, "input_batching_dims", ib,
                             nib));
  CJV_TRY(cj_verify_check_sorted(op, "inserted_window_dims", iwd, niwd));
  CJV_TRY(cj_verify_check_dims_in_range(op, "inserted_window_dims", iwd, niwd, rank));
  CJV_TRY(cj_verify_check_sorted(op, "input_batching_dims", ib, nib));
  CJV_TRY(cj_verify_check_dims_in_range(op, "input_batching_dims", ib, nib, rank));
  CJV_TRY(cj_verify_check_unique(op, "scatter_indices_batching_dims", sib, nsib));
  CJV_TRY(cj_verify_check_dims_in_range(op, "scatter_indices_batching_dims", sib, nsib, idx->rank));
  if (cjv_contains(sib, nsib, ivd))
    CJV_FAIL(op, "scatter_indices_batching_dims must not contain index_vector_dim %lld",
             (long long)ivd);
  if (nib != nsib)
    CJV_FAIL(op,
             "input_batching_dims (%lld entries) and scatter_indices_batching_dims (%lld) must "
             "have the same size",
             (long long)nib, (long long)nsib);
  CJV_TRY(cj_verify_check_paired_dims(op, "input batching", x, ib, "scatter_indices batching", idx,
                                sib, nib));
  int64_t index_size = ivd == idx->rank ? 1 : idx->dims[ivd];
  if (index_size != CJ_DYN && index_size != ns2o)
    CJV_FAIL(op,
             "scatter_dims_to_operand_dims has %lld entries but dimension index_vector_dim = "
             "%lld of scatter_indices %s has size %lld",
             (long long)ns2o, (long long)ivd, CJV_T(idx, t1), (long long)index_size);
  CJV_TRY(cj_verify_check_unique(op, "scatter_dims_to_operand_dims", s2o, ns2o));
  CJV_TRY(cj_verify_check_disjoint(op, "scatter_dims_to_operand_dims", s2o, ns2o,
                             "input_batching_dims", ib, nib));
  CJV_TRY(cj_verify_check_dims_in_range(op, "scatter_dims_to_operand_dims", s2o, ns2o, rank));
  /* update shape: window dims no larger than the input's non-inserted, non-batching dims;
   * scatter dims equal to scatter_indices' dims (less index_vector_dim) */
  int64_t wi = 0, si = 0;
  for (int64_t d = 0; d < u->rank; d++) {
    if (cjv_contains(uwd, nuwd, d)) {
      while (wi < rank && (cjv_contains(iwd, niwd, wi) || cjv_contains(ib, nib, wi))) wi++;
      if (wi < rank && u->dims[d] != CJ_DYN && x->dims[wi] != CJ_DYN && u->dims[d] > x->dims[wi])
        CJV_FAIL(op,
                 "update window dimension %lld has size %lld, larger than input dimension %lld "
                 "(%lld)",
                 (long long)d, (long long)u->dims[d], (long long)wi, (long long)x->dims[wi]);
      wi++;
    } else {
      if (si == ivd) si++;
      int64_t want = si < idx->rank ? idx->dims[si] : 1;
      if (!cj_shape_dim_compatible(u->dims[d], want))
        CJV_FAIL(op,
                 "update scatter dimension %lld has size %lld but the matching dimension of "
                 "scatter_indices %s has size %lld",
                 (long long)d, (long long)u->dims[d], CJV_T(idx, t2), (long long)want);
      si++;
    }
  }
  const cj_type *elems[CJV_MAX_DIMS];
  CJV_TRY(cj_verify_check_reducer(op, 0, "update_computation", n, ins, ups, NULL, NULL, 0, elems));
  for (uint32_t i = 0; i < n; i++) {
    const cj_type *r = cjv_result_type(op, i);
    snprintf(w1, sizeof w1, "result #%u", i);
    snprintf(w2, sizeof w2, "inputs[%u]", i);
    CJV_TRY(cj_verify_check_tensor(op, w1, r, PER_TENSOR));
    CJV_TRY(cj_verify_check_same_shape(op, w2, ins[i], w1, r));
    if (r->elem != elems[i])
      CJV_FAIL(op, "%s has element type %s but update_computation returns %s", w1, CJV_T(r, t1),
               CJV_T(elems[i], t2));
  }
  return NULL;
}
