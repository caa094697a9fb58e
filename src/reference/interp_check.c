/* cjrt reference backend: the assertions of the conformance corpus (check.* ops and the
 * custom_call @check.* targets), with the corpus' semantics
 * (../shared/reference/stablehlo-formats.md):
 *   expect_eq        exact; floats compare as numbers with NaN matching NaN
 *   expect_almost_eq |actual - expected| <= tolerance (1e-4 for the check ops, 1e-3 for the
 *                    custom call), equal non-finite values, NaN matching NaN; complex per part
 *   expect_close     ULP distance within [min, max] (custom call: [0, 3]); any NaN matches any
 *                    NaN; complex: the larger of the parts' distances
 *   check.eq         returns an i1: integers exact, floats almost equal with 1e-4
 * A failed check (other than check.eq) fails the execution naming the check, the element and
 * both values. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reference/ref.h"

enum { MODE_EQ, MODE_ALMOST, MODE_CLOSE };

static bool near(double a, double e, double tol) {
  if (a == e) return true;
  if (isnan(a) || isnan(e)) return isnan(a) && isnan(e);
  if (!isfinite(a) || !isfinite(e)) return false;
  return fabs(a - e) <= tol;
}

static bool same(double a, double e) { return a == e || (isnan(a) && isnan(e)); }

static bool elem_ok(int mode, cj_dtype dt, const rv *a, const rv *e, int64_t i, double tol,
                    uint64_t lo, uint64_t hi) {
  switch (cj_dtype_kindof(dt)) {
    case CJ_DK_FLOAT:
      if (mode == MODE_CLOSE) {
        uint64_t u = cj_elem_ulp_distance(dt, a->data, e->data, i);
        return u >= lo && u <= hi;
      }
      if (mode == MODE_EQ) return same(cj_rf_getf(dt, a->data, i), cj_rf_getf(dt, e->data, i));
      return near(cj_rf_getf(dt, a->data, i), cj_rf_getf(dt, e->data, i), tol);
    case CJ_DK_COMPLEX: {
      cj_dtype c = cj_dtype_component(dt);
      if (mode == MODE_CLOSE) {
        uint64_t u1 = cj_elem_ulp_distance(c, a->data, e->data, 2 * i);
        uint64_t u2 = cj_elem_ulp_distance(c, a->data, e->data, 2 * i + 1);
        uint64_t u = u1 > u2 ? u1 : u2;
        return u >= lo && u <= hi;
      }
      double complex x = cj_rf_getc(dt, a->data, i), y = cj_rf_getc(dt, e->data, i);
      if (mode == MODE_EQ) return same(creal(x), creal(y)) && same(cimag(x), cimag(y));
      return near(creal(x), creal(y), tol) && near(cimag(x), cimag(y), tol);
    }
    default: return cj_elem_get_bits(dt, a->data, i) == cj_elem_get_bits(dt, e->data, i);
  }
}

static void fmt(char *buf, size_t cap, const rv *v, int64_t i) {
  switch (cj_dtype_kindof(v->dt)) {
    case CJ_DK_FLOAT: snprintf(buf, cap, "%.17g", cj_rf_getf(v->dt, v->data, i)); break;
    case CJ_DK_COMPLEX: {
      double complex c = cj_rf_getc(v->dt, v->data, i);
      snprintf(buf, cap, "(%.17g, %.17g)", creal(c), cimag(c));
      break;
    }
    case CJ_DK_UINT: snprintf(buf, cap, "%" PRIu64, (uint64_t)cj_rf_geti(v->dt, v->data, i)); break;
    default: snprintf(buf, cap, "%" PRId64, cj_rf_geti(v->dt, v->data, i)); break;
  }
}

static CJ_MUST_USE cj_status check(cj_op *op, const char *name, int mode, const rv *a, const rv *e, double tol,
                       uint64_t lo, uint64_t hi, rv *result) {
  if (a->kind != RV_TENSOR || e->kind != RV_TENSOR || a->dt != e->dt || a->n != e->n)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "%s: the compared tensors differ in type or shape", name);
  int64_t bad = -1, nbad = 0;
  for (int64_t i = 0; i < a->n; i++)
    if (!elem_ok(mode, a->dt, a, e, i, tol, lo, hi)) {
      if (bad < 0) bad = i;
      nbad++;
    }
  if (result) {
    result->data[0] = bad < 0;
    return NULL;
  }
  if (bad < 0) return NULL;
  char va[96], ve[96];
  fmt(va, sizeof va, a, bad);
  fmt(ve, sizeof ve, e, bad);
  return cj_op_error(op, CJ_INVALID_ARGUMENT,
                     "%s failed: element %" PRId64 " (%" PRId64 " of %" PRId64 " differ): actual %s, expected %s",
                     name, bad, nbad, a->n, va, ve);
}

cj_status cj_rf_check_equal(cj_op *op, const char *name, const rv *a, const rv *e);
cj_status cj_rf_check_equal(cj_op *op, const char *name, const rv *a, const rv *e) {
  return check(op, name, MODE_EQ, a, e, 0, 0, 0, NULL);
}

/* the expected value of a *_const check, as a tensor like `like` */
static CJ_MUST_USE cj_status expected_const(cj_op *op, const rv *like, rv **out) {
  const cj_attr *v = cj_op_attr(op, "value");
  if (!v || v->kind != CJ_ATTR_DENSE) return cj_op_error(op, CJ_INVALID_ARGUMENT, "no expected value");
  CJ_RETURN_IF_ERROR(cj_rv_new(like->dt, like->rank, like->dims, out));
  rv *e = *out;
  size_t nb = (size_t)e->n * (size_t)e->esize;
  if (v->dense.splat) {
    for (int64_t i = 0; i < e->n; i++) memcpy(e->data + (size_t)i * (size_t)e->esize, v->dense.data, (size_t)e->esize);
  } else if (v->dense.nbytes == nb) {
    if (nb) memcpy(e->data, v->dense.data, nb);
  } else {
    cj_rv_free(e);
    *out = NULL;
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "expected value has %zu bytes, the operand %zu", v->dense.nbytes, nb);
  }
  return NULL;
}

bool cj_rf_is_check_target(const char *t, size_t n);
bool cj_rf_is_check_target(const char *t, size_t n) {
#define IS(s) (n == strlen(s) && memcmp(t, s, n) == 0)
  return IS("check.expect_eq") || IS("check.expect_close") || IS("check.expect_almost_eq") || IS("check.eq") ||
         IS("shape_assertion") || IS("dce_sink");
#undef IS
}

/* ---------------------------------------------------------------- ref.def's rows */

static double tolerance(const cj_op *op) {
  double tol = 1e-4;
  cj_attr_get_f64(cj_op_attr(op, "tolerance"), &tol);
  return tol;
}

cj_status cj_rf_x_expect_eq(rf_exec *x, cj_op *op, rv **ins, rv **outs) {
  return check(op, "check.expect_eq", MODE_EQ, ins[0], ins[1], 0, 0, 0, NULL);
}

cj_status cj_rf_x_expect_almost_eq(rf_exec *x, cj_op *op, rv **ins, rv **outs) {
  return check(op, "check.expect_almost_eq", MODE_ALMOST, ins[0], ins[1], tolerance(op), 0, 0, NULL);
}

cj_status cj_rf_x_expect_close(rf_exec *x, cj_op *op, rv **ins, rv **outs) {
  int64_t mx = 0, mn = 0;
  cj_op_get_i64(op, "max_ulp_difference", &mx);
  cj_op_get_i64(op, "min_ulp_difference", &mn);
  return check(op, "check.expect_close", MODE_CLOSE, ins[0], ins[1], 0, (uint64_t)mn, (uint64_t)mx, NULL);
}

/* check.expect_eq_const and check.expect_almost_eq_const */
cj_status cj_rf_x_expect_eq_const(rf_exec *x, cj_op *op, rv **ins, rv **outs) {
  rv *e = NULL;
  CJ_RETURN_IF_ERROR(expected_const(op, ins[0], &e));
  bool eq = op->kind == CJ_OP_CHECK_EXPECT_EQ_CONST;
  cj_status st = check(op, eq ? "check.expect_eq_const" : "check.expect_almost_eq_const",
                       eq ? MODE_EQ : MODE_ALMOST, ins[0], e, tolerance(op), 0, 0, NULL);
  cj_rv_free(e);
  return st;
}

/* custom_call @check.* (the targets cj_rf_is_check_target accepts) */
cj_status cj_rf_x_custom_call(rf_exec *x, cj_op *op, rv **ins, rv **outs) {
  const char *t = NULL;
  size_t n = 0;
  cj_attr_get_str(cj_op_attr(op, "call_target_name"), &t, &n);
#define IS(s) (n == strlen(s) && memcmp(t, s, n) == 0)
  if (t && IS("check.expect_eq") && op->nopnds == 2)
    return check(op, "custom_call @check.expect_eq", MODE_EQ, ins[0], ins[1], 0, 0, 0, NULL);
  if (t && IS("check.expect_close") && op->nopnds == 2)
    return check(op, "custom_call @check.expect_close", MODE_CLOSE, ins[0], ins[1], 0, 0, 3, NULL);
  if (t && IS("check.expect_almost_eq") && op->nopnds == 2)
    return check(op, "custom_call @check.expect_almost_eq", MODE_ALMOST, ins[0], ins[1], 1e-3, 0, 0, NULL);
  if (t && IS("check.eq") && op->nopnds == 2) {
    int mode = cj_dtype_is_float(ins[0]->dt) || cj_dtype_is_complex(ins[0]->dt) ? MODE_ALMOST : MODE_EQ;
    return check(op, "custom_call @check.eq", mode, ins[1], ins[0], 1e-4, 0, 0, op->nresults ? outs[0] : NULL);
  }
  if (t && IS("dce_sink")) return NULL;
  if (t && IS("shape_assertion")) {
    if (op->nopnds >= 1 && ins[0]->n >= 1 && ins[0]->data[0]) return NULL;
    const char *msg = "shape assertion failed";
    size_t ml = strlen(msg);
    cj_attr_get_str(cj_op_attr(op, "error_message"), &msg, &ml);
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "custom_call @shape_assertion failed: %.*s", (int)ml, msg);
  }
#undef IS
  return cj_op_error(op, CJ_UNIMPLEMENTED, "custom_call @%.*s is not supported by the reference backend", (int)n, t ? t : "");
}
