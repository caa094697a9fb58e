/* cjrt: spec verifiers of ops with regions: if, case, while, map, reduce, reduce_window,
 * select_and_scatter, sort. (scatter is in verify_shape.c, collectives in verify_collective.c.) */
#include <stdio.h>
#include <string.h>

#include "ir/shape_check.h"
#include "ir/verify_fns.h"

#define PER_TENSOR (CJ_EC_BOOL | CJ_EC_INT | CJ_EC_FLOAT | CJ_EC_COMPLEX | CJ_EC_QTENSOR)

static const cj_type *T(const cj_op *op, uint32_t i) { return cjv_operand_type(op, i); }

/* Value types agree: tensors with compatible shapes and equal element types; anything else
 * (tokens, tuples) exactly equal. */
static bool value_types_agree(const cj_type *a, const cj_type *b) {
  if (a == b) return a != NULL;
  if (a && b && a->kind == CJ_TYPE_TENSOR && b->kind == CJ_TYPE_TENSOR)
    return cj_shape_type_compatible(a, b);
  return false;
}

static CJ_MUST_USE cj_status check_agree(const cj_op *op, const char *wa, uint32_t ia, const cj_type *a,
                             const char *wb, uint32_t ib, const cj_type *b) {
  if (value_types_agree(a, b)) return NULL;
  cjv_tbuf t1, t2;
  CJV_FAIL(op, "%s #%u has type %s but %s #%u has type %s", wa, ia, CJV_T(a, t1), wb, ib,
           CJV_T(b, t2));
}

/* ======================================================================== if, case */

/* Every branch takes no arguments and returns the types of the op's results. */
static CJ_MUST_USE cj_status check_branches(const cj_op *op, const char *noun) {
  const cj_type *p = T(op, 0);
  if (op->kind == CJ_OP_IF)
    CJV_TRY(cj_verify_check_scalar(op, "pred must be", p, CJ_PRED));
  else
    CJV_TRY(cj_verify_check_scalar(op, "index must be", p, CJ_S32));
  if (op->nregions == 0) CJV_FAIL(op, "needs at least one branch");
  char rname[48], what[64];
  for (uint32_t r = 0; r < op->nregions; r++) {
    if (op->kind == CJ_OP_IF)
      snprintf(rname, sizeof rname, "%s", r == 0 ? "true_branch" : "false_branch");
    else
      snprintf(rname, sizeof rname, "%s %u", noun, r);
    const cj_block *b;
    const cj_op *ret;
    CJV_TRY(cj_verify_region_return(op, r, rname, &b, &ret));
    CJV_TRY(cj_verify_check_region_nargs(op, rname, b, 0));
    if (ret->nopnds != op->nresults)
      CJV_FAIL(op, "%s returns %u value%s but the op has %u result%s", rname, ret->nopnds,
               ret->nopnds == 1 ? "" : "s", op->nresults, op->nresults == 1 ? "" : "s");
    snprintf(what, sizeof what, "%s value", rname);
    for (uint32_t i = 0; i < ret->nopnds; i++)
      CJV_TRY(check_agree(op, "result", i, cjv_result_type(op, i), what, i,
                          ret->operands[i]->type));
  }
  return NULL;
}

cj_status cj_verify_if(const cj_op *op) { return check_branches(op, "if"); }

cj_status cj_verify_case(const cj_op *op) { return check_branches(op, "branch"); }

/* ======================================================================== while */

cj_status cj_verify_while(const cj_op *op) {
  if (op->nresults != op->nopnds)
    CJV_FAIL(op, "has %u operands but %u results; they must correspond one to one", op->nopnds,
             op->nresults);
  const cj_block *cb, *bb;
  const cj_op *cret, *bret;
  CJV_TRY(cj_verify_region_return(op, 0, "cond", &cb, &cret));
  CJV_TRY(cj_verify_region_return(op, 1, "body", &bb, &bret));
  CJV_TRY(cj_verify_check_region_nargs(op, "cond", cb, op->nopnds));
  CJV_TRY(cj_verify_check_region_nargs(op, "body", bb, op->nopnds));
  for (uint32_t i = 0; i < op->nopnds; i++) {
    const cj_type *t = T(op, i);
    CJV_TRY(check_agree(op, "operand", i, t, "cond argument", i, cb->args[i].type));
    CJV_TRY(check_agree(op, "operand", i, t, "body argument", i, bb->args[i].type));
    CJV_TRY(check_agree(op, "operand", i, t, "result", i, cjv_result_type(op, i)));
  }
  if (bret->nopnds != op->nopnds)
    CJV_FAIL(op, "body returns %u values but the loop carries %u", bret->nopnds, op->nopnds);
  for (uint32_t i = 0; i < op->nopnds; i++)
    CJV_TRY(check_agree(op, "operand", i, T(op, i), "body value", i, bret->operands[i]->type));
  if (cret->nopnds != 1) CJV_FAIL(op, "cond must return a single value, got %u", cret->nopnds);
  const cj_type *ct = cret->operands[0]->type;
  return cj_verify_check_scalar(op, "cond must return", ct, CJ_PRED);
}

/* ======================================================================== map */

cj_status cj_verify_map(const cj_op *op) {
  if (op->nopnds == 0) CJV_FAIL(op, "needs at least one input");
  const cj_type *r = cjv_result_type(op, 0);
  CJV_TRY(cj_verify_check_tensor(op, "result", r, PER_TENSOR));
  char what[48];
  for (uint32_t i = 0; i < op->nopnds; i++) {
    snprintf(what, sizeof what, "inputs[%u]", i);
    CJV_TRY(cj_verify_check_tensor(op, what, T(op, i), PER_TENSOR));
    CJV_TRY(cj_verify_check_same_shape(op, what, T(op, i), "result", r));
  }
  int64_t dims[CJV_MAX_DIMS], n;
  CJV_TRY(cj_verify_get_i64s(op, "dimensions", dims, &n, NULL));
  cjv_tbuf t1, t2;
  bool iota = n == T(op, 0)->rank;
  for (int64_t i = 0; iota && i < n; i++)
    if (dims[i] != i) iota = false;
  if (!iota)
    CJV_FAIL(op, "dimensions %s must be [0, 1, ..., %d] (every dimension of the inputs, in order)",
             CJV_DIMS(dims, n, t1), T(op, 0)->rank - 1);
  const cj_block *b;
  const cj_op *ret;
  CJV_TRY(cj_verify_region_return(op, 0, "computation", &b, &ret));
  CJV_TRY(cj_verify_check_region_nargs(op, "computation", b, op->nopnds));
  for (uint32_t i = 0; i < op->nopnds; i++) {
    const cj_type *a = b->args[i].type;
    if (!a || a->kind != CJ_TYPE_TENSOR || a->rank != 0 || a->elem != T(op, i)->elem)
      CJV_FAIL(op, "computation argument #%u must be tensor<%s>, got %s", i,
               CJV_T(T(op, i)->elem, t1), CJV_T(a, t2));
  }
  if (ret->nopnds != 1)
    CJV_FAIL(op, "computation must return a single value, got %u", ret->nopnds);
  const cj_type *rt = ret->operands[0]->type;
  if (!rt || rt->kind != CJ_TYPE_TENSOR || rt->rank != 0 || rt->elem != r->elem)
    CJV_FAIL(op, "computation must return tensor<%s> (the result element type), got %s",
             CJV_T(r->elem, t1), CJV_T(rt, t2));
  return NULL;
}

/* ======================================================================== reduce */

static CJ_MUST_USE cj_status count_inputs(const cj_op *op, uint32_t *n) {
  if (op->nopnds == 0 || op->nopnds % 2)
    CJV_FAIL(op, "takes N inputs and N init values (N >= 1), got %u operands", op->nopnds);
  *n = op->nopnds / 2;
  if (op->nresults != *n) CJV_FAIL(op, "has %u inputs but %u results", *n, op->nresults);
  if (*n > CJV_MAX_DIMS) CJV_FAIL(op, "has too many inputs (%u)", *n);
  return NULL;
}

/* N inputs followed by N init values (*np = N): checks the inputs share a shape and the init
 * values are 0-D of the inputs' element types. */
static CJ_MUST_USE cj_status check_inputs_inits(const cj_op *op, uint32_t *np, const cj_type **ins,
                                    const cj_type **inits) {
  CJV_TRY(count_inputs(op, np));
  uint32_t n = *np;
  char w1[48], w2[48];
  for (uint32_t i = 0; i < n; i++) {
    ins[i] = T(op, i);
    inits[i] = T(op, n + i);
    snprintf(w1, sizeof w1, "inputs[%u]", i);
    snprintf(w2, sizeof w2, "init_values[%u]", i);
    CJV_TRY(cj_verify_check_tensor(op, w1, ins[i], PER_TENSOR));
    /* 0-D per the spec; the body's accumulator shape decides (cj_verify_check_reducer) */
    CJV_TRY(cj_verify_check_tensor(op, w2, inits[i], PER_TENSOR));
    CJV_TRY(cj_verify_check_same_shape(op, "inputs[0]", ins[0], w1, ins[i]));
    CJV_TRY(cj_verify_check_same_baseline_elem(op, w1, ins[i], w2, inits[i]));
  }
  return NULL;
}

/* The n results of a reduction: tensors of shape expect[0..rank) whose element types are what
 * the body returns (elems). */
static CJ_MUST_USE cj_status check_reduce_results(const cj_op *op, uint32_t n,
                                                  const int64_t *expect, int32_t rank,
                                                  const cj_type *const *elems) {
  char what[48];
  cjv_tbuf t1, t2;
  for (uint32_t i = 0; i < n; i++) {
    const cj_type *r = cjv_result_type(op, i);
    snprintf(what, sizeof what, "result #%u", i);
    CJV_TRY(cj_verify_check_tensor(op, what, r, PER_TENSOR));
    CJV_TRY(cj_verify_check_shape_is(op, what, r, expect, rank));
    if (r->elem != elems[i])
      CJV_FAIL(op, "%s has element type %s but the body returns %s", what, CJV_T(r, t1),
               CJV_T(elems[i], t2));
  }
  return NULL;
}

cj_status cj_verify_reduce(const cj_op *op) {
  uint32_t n = 0;
  const cj_type *ins[CJV_MAX_DIMS], *inits[CJV_MAX_DIMS], *elems[CJV_MAX_DIMS];
  CJV_TRY(check_inputs_inits(op, &n, ins, inits));
  int64_t dims[CJV_MAX_DIMS], nd;
  CJV_TRY(cj_verify_get_i64s(op, "dimensions", dims, &nd, NULL));
  int32_t rank = ins[0]->rank;
  CJV_TRY(cj_verify_check_dims_in_range(op, "dimensions", dims, nd, rank));
  CJV_TRY(cj_verify_check_unique(op, "dimensions", dims, nd));
  int64_t expect[CJV_MAX_DIMS];
  int32_t k = 0;
  for (int32_t d = 0; d < rank; d++)
    if (!cjv_contains(dims, nd, d)) expect[k++] = ins[0]->dims[d];
  CJV_TRY(cj_verify_check_reducer(op, 0, "body", n, ins, NULL, inits, expect, k, elems));
  return check_reduce_results(op, n, expect, k, elems);
}

/* window attributes of reduce_window and select_and_scatter (and their padding) */
typedef struct window {
  int64_t dims[CJV_MAX_DIMS], strides[CJV_MAX_DIMS], base[CJV_MAX_DIMS], wdil[CJV_MAX_DIMS],
      lo[CJV_MAX_DIMS], hi[CJV_MAX_DIMS];
} window;

/* Reads an optional per-dimension list: absent means all `dflt`; present must have rank entries
 * each >= min. */
static CJ_MUST_USE cj_status read_window_list(const cj_op *op, const char *name, int32_t rank, int64_t dflt,
                                  int64_t min, int64_t *out) {
  int64_t n;
  bool present;
  CJV_TRY(cj_verify_get_i64s(op, name, out, &n, &present));
  if (!present || (n == 0 && rank != 0 && dflt == 1)) { /* absent or empty: the default */
    for (int32_t i = 0; i < rank; i++) out[i] = dflt;
    return NULL;
  }
  if (n != rank)
    CJV_FAIL(op, "%s has %lld entries but the input rank is %d", name, (long long)n, rank);
  for (int32_t i = 0; i < rank; i++)
    if (out[i] < min)
      CJV_FAIL(op, "%s[%d] = %lld must be %s", name, i, (long long)out[i],
               min == 1 ? "positive" : "non-negative");
  return NULL;
}

/* window_dimensions (rank entries, each positive; `of` names what has that rank) and
 * window_strides. */
static CJ_MUST_USE cj_status read_window_dims(const cj_op *op, int32_t rank, const char *of,
                                              window *w) {
  int64_t nd;
  CJV_TRY(cj_verify_get_i64s(op, "window_dimensions", w->dims, &nd, NULL));
  if (nd != rank)
    CJV_FAIL(op, "window_dimensions has %lld entries but the %s rank is %d", (long long)nd, of,
             rank);
  for (int32_t i = 0; i < rank; i++)
    if (w->dims[i] <= 0)
      CJV_FAIL(op, "window_dimensions[%d] = %lld must be positive", i, (long long)w->dims[i]);
  return read_window_list(op, "window_strides", rank, 1, 1, w->strides);
}

cj_status cj_verify_read_padding(const cj_op *op, int32_t rank, int64_t *lo, int64_t *hi) {
  const cj_attr *p = cjv_attr(op, "padding");
  for (int32_t i = 0; i < rank; i++) lo[i] = hi[i] = 0;
  if (!p) return NULL;
  cjv_tbuf t1;
  if (!cj_verify_dense_readable(p, true)) CJV_FAIL(op, "padding must be a dense integer tensor");
  const cj_type *pt = p->dense.type;
  /* an empty padding (tensor<0xi64>) means no padding */
  if (pt->num_elements == 0) return NULL;
  if (pt->rank != 2 || pt->dims[0] != rank || pt->dims[1] != 2)
    CJV_FAIL(op, "padding must have shape [%d, 2], got %s", rank, CJV_T(pt, t1));
  for (int32_t i = 0; i < rank; i++) {
    lo[i] = cj_dense_get_i64(p, 2 * i);
    hi[i] = cj_dense_get_i64(p, 2 * i + 1);
  }
  return NULL;
}

cj_status cj_verify_reduce_window(const cj_op *op) {
  uint32_t n = 0;
  const cj_type *ins[CJV_MAX_DIMS], *inits[CJV_MAX_DIMS], *elems[CJV_MAX_DIMS];
  CJV_TRY(check_inputs_inits(op, &n, ins, inits));
  int32_t rank = ins[0]->rank;
  window w;
  CJV_TRY(read_window_dims(op, rank, "input", &w));
  CJV_TRY(read_window_list(op, "base_dilations", rank, 1, 1, w.base));
  CJV_TRY(read_window_list(op, "window_dilations", rank, 1, 1, w.wdil));
  CJV_TRY(cj_verify_read_padding(op, rank, w.lo, w.hi));
  CJV_TRY(cj_verify_check_reducer(op, 0, "body", n, ins, NULL, inits, w.dims, rank, elems));
  int64_t expect[CJV_MAX_DIMS];
  for (int32_t d = 0; d < rank; d++) {
    int64_t in = ins[0]->dims[d];
    if (in == CJ_DYN) {
      expect[d] = CJ_DYN;
      continue;
    }
    int64_t padded = w.lo[d] + cj_shape_dilated(in, w.base[d]) + w.hi[d];
    expect[d] = cj_shape_num_windows(padded, cj_shape_dilated(w.dims[d], w.wdil[d]), w.strides[d]);
  }
  return check_reduce_results(op, n, expect, rank, elems);
}

cj_status cj_verify_select_and_scatter(const cj_op *op) {
  const cj_type *x = T(op, 0), *src = T(op, 1), *init = T(op, 2), *r = cjv_result_type(op, 0);
  CJV_TRY(cj_verify_check_tensor(op, "operand", x, PER_TENSOR));
  CJV_TRY(cj_verify_check_tensor(op, "source", src, PER_TENSOR));
  CJV_TRY(cj_verify_check_tensor_rank(op, "init_value", init, PER_TENSOR, 0));
  CJV_TRY(cj_verify_check_tensor(op, "result", r, PER_TENSOR));
  CJV_TRY(cj_verify_check_same_elem(op, "operand", x, "source", src));
  CJV_TRY(cj_verify_check_same_elem(op, "operand", x, "init_value", init));
  int32_t rank = x->rank;
  window w;
  /* window_dimensions is optional in the op's syntax but an absent one is an empty list */
  CJV_TRY(read_window_dims(op, rank, "operand", &w));
  CJV_TRY(cj_verify_read_padding(op, rank, w.lo, w.hi));
  int64_t expect[CJV_MAX_DIMS];
  for (int32_t d = 0; d < rank; d++) {
    int64_t in = x->dims[d];
    expect[d] = in == CJ_DYN ? CJ_DYN
                             : cj_shape_num_windows(w.lo[d] + in + w.hi[d], w.dims[d], w.strides[d]);
  }
  CJV_TRY(cj_verify_check_shape_is(op, "source", src, expect, rank));
  /* select: (tensor<E>, tensor<E>) -> tensor<i1> */
  const cj_block *b;
  const cj_op *ret;
  cjv_tbuf t1, t2;
  CJV_TRY(cj_verify_region_return(op, 0, "select", &b, &ret));
  CJV_TRY(cj_verify_check_region_nargs(op, "select", b, 2));
  for (uint32_t i = 0; i < 2; i++) {
    const cj_type *a = b->args[i].type;
    if (!a || a->kind != CJ_TYPE_TENSOR || a->rank != 0 || a->elem != x->elem)
      CJV_FAIL(op, "select argument #%u must be tensor<%s>, got %s", i, CJV_T(x->elem, t1),
               CJV_T(a, t2));
  }
  if (ret->nopnds != 1) CJV_FAIL(op, "select must return a single value, got %u", ret->nopnds);
  const cj_type *st = ret->operands[0]->type;
  CJV_TRY(cj_verify_check_scalar(op, "select must return", st, CJ_PRED));
  const cj_type *elem;
  const cj_type *ins[1] = {src}, *inits[1] = {init};
  CJV_TRY(cj_verify_check_reducer(op, 1, "scatter", 1, ins, NULL, inits, NULL, 0, &elem));
  CJV_TRY(cj_verify_check_same_shape(op, "operand", x, "result", r));
  if (r->elem != elem)
    CJV_FAIL(op, "result has element type %s but scatter returns %s", CJV_T(r, t1),
             CJV_T(elem, t2));
  return NULL;
}

/* ======================================================================== sort */

cj_status cj_verify_sort(const cj_op *op) {
  if (op->nopnds == 0) CJV_FAIL(op, "needs at least one input");
  if (op->nresults != op->nopnds)
    CJV_FAIL(op, "has %u inputs but %u results", op->nopnds, op->nresults);
  char w1[48], w2[48];
  for (uint32_t i = 0; i < op->nopnds; i++) {
    snprintf(w1, sizeof w1, "inputs[%u]", i);
    snprintf(w2, sizeof w2, "result #%u", i);
    CJV_TRY(cj_verify_check_tensor(op, w1, T(op, i), PER_TENSOR));
    CJV_TRY(cj_verify_check_same_shape(op, "inputs[0]", T(op, 0), w1, T(op, i)));
    CJV_TRY(cj_verify_check_tensor(op, w2, cjv_result_type(op, i), PER_TENSOR));
    CJV_TRY(cj_verify_check_same_type(op, w1, T(op, i), w2, cjv_result_type(op, i)));
  }
  int32_t rank = T(op, 0)->rank;
  int64_t dim = -1;
  cjv_get_i64(op, "dimension", &dim);
  if (dim < -rank || dim >= rank)
    CJV_FAIL(op, "dimension %lld is out of range [%d, %d)", (long long)dim, -rank, rank);
  const cj_block *b;
  const cj_op *ret;
  cjv_tbuf t1, t2;
  CJV_TRY(cj_verify_region_return(op, 0, "comparator", &b, &ret));
  CJV_TRY(cj_verify_check_region_nargs(op, "comparator", b, 2 * op->nopnds));
  for (uint32_t i = 0; i < 2 * op->nopnds; i++) {
    const cj_type *a = b->args[i].type, *e = T(op, i / 2)->elem;
    if (!a || a->kind != CJ_TYPE_TENSOR || a->rank != 0 || a->elem != e)
      CJV_FAIL(op, "comparator argument #%u must be tensor<%s>, got %s", i, CJV_T(e, t1),
               CJV_T(a, t2));
  }
  if (ret->nopnds != 1)
    CJV_FAIL(op, "comparator must return a single value, got %u", ret->nopnds);
  const cj_type *ct = ret->operands[0]->type;
  return cj_verify_check_scalar(op, "comparator must return", ct, CJ_PRED);
}
