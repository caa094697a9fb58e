/* cjrt: the assertions of the conformance corpus, with the corpus' semantics
 * (../shared/reference/stablehlo-formats.md):
 *   expect_eq        exact (floats: IEEE equality, and NaN matches NaN)
 *   expect_almost_eq |actual - expected| <= tolerance on finite values, equal non-finite
 *                    values, NaN matches NaN; complex per part (tolerance 1e-4 for the check
 *                    ops, 1e-3 for custom_call @check.expect_almost_eq)
 *   expect_close     ULP distance within [min, max] (custom_call: [0, 3]); bit-equal values are
 *                    0 apart, any NaN matches any NaN, other non-finite mismatches are infinitely
 *                    far; complex: the larger of the parts' distances
 *   check.eq         (custom_call, returns i1) integers exact, floats almost equal with 1e-4
 * A failed check fails the execution with a message naming the check, its location, the first
 * differing element and both values. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/k_lapack.h"
#include "cpu/k_linalg_house.h"
#include "cpu/k_rng.h"
#include "cpu/lower.h"
#include "runtime/ffi.h"

enum { CK_EQ, CK_ALMOST, CK_CLOSE };

typedef struct check_params {
  int mode;
  cj_dtype dt;
  int64_t n;
  int32_t rank;
  const int64_t *dims;
  double tol;
  uint64_t min_ulp, max_ulp;
  bool int_exact;  /* check.eq: integers are compared exactly */
  bool has_result; /* check.eq: writes an i1 */
  const char *name;
} check_params;

static bool approx(double f, double g, double tol) {
  if (f == g) return true;
  if (isnan(f) || isnan(g)) return isnan(f) && isnan(g);
  if (!isfinite(f) || !isfinite(g)) return false;
  return fabs(f - g) <= tol;
}

static void fmt_value(char *buf, size_t cap, cj_dtype dt, const void *p, int64_t i) {
  cj_dtype_kind k = cj_dtype_kindof(dt);
  switch (k) {
    case CJ_DK_BOOL: snprintf(buf, cap, "%s", ((const uint8_t *)p)[i] ? "true" : "false"); break;
    case CJ_DK_SINT: snprintf(buf, cap, "%" PRId64, cj_elem_get_i64(dt, p, (size_t)i)); break;
    case CJ_DK_UINT: snprintf(buf, cap, "%" PRIu64, (uint64_t)cj_elem_get_i64(dt, p, (size_t)i)); break;
    case CJ_DK_FLOAT:
      snprintf(buf, cap, "%.*g (0x%0*" PRIX64 ")", dt == CJ_F64 ? 17 : 9,
               cj_elem_get_f64(dt, p, (size_t)i), cj_dtype_bytes(dt) * 2, cj_elem_get_bits(dt, p, i));
      break;
    case CJ_DK_COMPLEX:
      if (dt == CJ_C64)
        snprintf(buf, cap, "(%.9g, %.9g)", ((const float *)p)[2 * i], ((const float *)p)[2 * i + 1]);
      else
        snprintf(buf, cap, "(%.17g, %.17g)", ((const double *)p)[2 * i], ((const double *)p)[2 * i + 1]);
      break;
    default: snprintf(buf, cap, "?");
  }
}

static void fmt_index(char *buf, size_t cap, const check_params *p, int64_t i) {
  int64_t idx[CJ_MAX_RANK];
  int64_t rem = i;
  for (int32_t d = p->rank - 1; d >= 0; d--) {
    idx[d] = p->dims[d] ? rem % p->dims[d] : 0;
    rem = p->dims[d] ? rem / p->dims[d] : 0;
  }
  size_t n = 0;
  n += (size_t)snprintf(buf + n, cap - n, "[");
  for (int32_t d = 0; d < p->rank && n < cap; d++)
    n += (size_t)snprintf(buf + n, cap - n, "%s%" PRId64, d ? ", " : "", idx[d]);
  if (n < cap) snprintf(buf + n, cap - n, "]");
}

/* compares element i; on mismatch returns false and sets *ulp for close checks */
static bool elem_ok(const check_params *p, const void *a, const void *e, int64_t i, uint64_t *ulp) {
  cj_dtype dt = p->dt;
  cj_dtype_kind k = cj_dtype_kindof(dt);
  if (k == CJ_DK_BOOL || k == CJ_DK_SINT || k == CJ_DK_UINT)
    return cj_elem_get_bits(dt, a, i) == cj_elem_get_bits(dt, e, i);
  if (k == CJ_DK_FLOAT) {
    if (p->mode == CK_CLOSE) {
      *ulp = cj_elem_ulp_distance(dt, a, e, i);
      return *ulp >= p->min_ulp && *ulp <= p->max_ulp;
    }
    double x = cj_elem_get_f64(dt, a, (size_t)i), y = cj_elem_get_f64(dt, e, (size_t)i);
    if (p->mode == CK_EQ) return x == y || (isnan(x) && isnan(y));
    return approx(x, y, p->tol);
  }
  if (k == CJ_DK_COMPLEX) {
    cj_dtype c = cj_dtype_component(dt);
    if (p->mode == CK_CLOSE) {
      uint64_t u1 = cj_elem_ulp_distance(c, a, e, 2 * i);
      uint64_t u2 = cj_elem_ulp_distance(c, a, e, 2 * i + 1);
      *ulp = u1 > u2 ? u1 : u2;
      return *ulp >= p->min_ulp && *ulp <= p->max_ulp;
    }
    double xr = cj_elem_get_f64(c, a, (size_t)(2 * i)), xi = cj_elem_get_f64(c, a, (size_t)(2 * i + 1));
    double yr = cj_elem_get_f64(c, e, (size_t)(2 * i)), yi = cj_elem_get_f64(c, e, (size_t)(2 * i + 1));
    if (p->mode == CK_EQ)
      return (xr == yr || (isnan(xr) && isnan(yr))) && (xi == yi || (isnan(xi) && isnan(yi)));
    return approx(xr, yr, p->tol) && approx(xi, yi, p->tol);
  }
  return false;
}

static CJ_MUST_USE cj_status k_check(cj_exec_ctx *ctx, const cj_step *st) {
  const check_params *p = st->params;
  const char *a = CJ_PTR(ctx, st->in[0]), *e = CJ_PTR(ctx, st->in[1]);
  int64_t bad = -1, nbad = 0;
  uint64_t bad_ulp = 0;
  for (int64_t i = 0; i < p->n; i++) {
    uint64_t ulp = 0;
    if (!elem_ok(p, a, e, i, &ulp)) {
      if (bad < 0) {
        bad = i;
        bad_ulp = ulp;
      }
      nbad++;
    }
  }
  if (p->has_result) *(uint8_t *)CJ_PTR(ctx, st->out[0]) = bad < 0;
  if (bad < 0) return NULL;
  char va[96], ve[96], idx[160], extra[96] = "";
  fmt_value(va, sizeof va, p->dt, a, bad);
  fmt_value(ve, sizeof ve, p->dt, e, bad);
  fmt_index(idx, sizeof idx, p, bad);
  if (p->mode == CK_CLOSE) {
    if (bad_ulp == UINT64_MAX)
      snprintf(extra, sizeof extra, ", ULP difference infinite (allowed %" PRIu64 "..%" PRIu64 ")",
               p->min_ulp, p->max_ulp);
    else
      snprintf(extra, sizeof extra, ", ULP difference %" PRIu64 " (allowed %" PRIu64 "..%" PRIu64 ")",
               bad_ulp, p->min_ulp, p->max_ulp);
  } else if (p->mode == CK_ALMOST) {
    snprintf(extra, sizeof extra, ", tolerance %g", p->tol);
  }
  return cj_status_make(CJ_INVALID_ARGUMENT,
                        "%s failed (%s): element %s (%" PRId64 " of %" PRId64
                        " differ): actual %s, expected %s%s",
                        p->name, st->what, idx, nbad, p->n, va, ve, extra);
}

static CJ_MUST_USE cj_status emit_check(cj_lw *L, cj_op *op, const char *name, int mode, double tol,
                            uint64_t min_ulp, uint64_t max_ulp, bool has_const, bool int_exact) {
  cj_lw_tensor a, e;
  CJ_RETURN_IF_ERROR(cj_lw_operand(L, op, 0, &a));
  if (has_const) {
    const cj_attr *v = cj_op_attr(op, "value");
    if (!v || v->kind != CJ_ATTR_DENSE) return cj_op_error(op, CJ_INVALID_ARGUMENT, "no expected value");
    int es = cj_dtype_bytes(a.dtype);
    if (v->dense.type && v->dense.type->dtype != a.dtype)
      return cj_op_error(op, CJ_INVALID_ARGUMENT, "expected value has another element type");
    char *buf = malloc((size_t)(a.nbytes ? a.nbytes : 1));
    if (!buf) return cj_oom();
    if (v->dense.splat) {
      for (int64_t i = 0; i < a.nelems; i++) memcpy(buf + i * es, v->dense.data, (size_t)es);
    } else {
      if ((int64_t)v->dense.nbytes != a.nbytes) {
        free(buf);
        return cj_op_error(op, CJ_INVALID_ARGUMENT, "expected value has %zu bytes, the operand %lld",
                           v->dense.nbytes, (long long)a.nbytes);
      }
      memcpy(buf, v->dense.data, (size_t)a.nbytes);
    }
    e.buf = cj_lw_const(L, buf, a.nbytes);
    free(buf);
  } else {
    CJ_RETURN_IF_ERROR(cj_lw_operand(L, op, 1, &e));
    if (e.dtype != a.dtype || e.nelems != a.nelems)
      return cj_op_error(op, CJ_INVALID_ARGUMENT, "the compared tensors differ in type or shape");
  }
  cj_dtype_kind k = cj_dtype_kindof(a.dtype);
  if (mode == CK_CLOSE && k != CJ_DK_FLOAT && k != CJ_DK_COMPLEX)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "expect_close needs floating-point operands");
  if (int_exact && k != CJ_DK_FLOAT && k != CJ_DK_COMPLEX) mode = CK_EQ;
  check_params *p = cj_lw_alloc(L, sizeof *p);
  if (!p) return cj_oom();
  p->mode = mode;
  p->dt = a.dtype;
  p->n = a.nelems;
  p->rank = a.rank;
  int64_t *dims = cj_lw_alloc(L, sizeof(int64_t) * (size_t)(a.rank ? a.rank : 1));
  if (!dims) return cj_oom();
  if (a.rank) memcpy(dims, a.dims, sizeof(int64_t) * (size_t)a.rank);
  p->dims = dims; /* the IR dies after compilation */
  p->tol = tol;
  p->min_ulp = min_ulp;
  p->max_ulp = max_ulp;
  p->name = name; /* a static string */
  int32_t ins[2] = {a.buf, e.buf};
  if (strcmp(name, "custom_call @check.eq") == 0) { /* check.eq(%expected, %actual) */
    ins[0] = e.buf;
    ins[1] = a.buf;
  }
  int32_t out = -1;
  if (op->nresults >= 1) {
    cj_lw_tensor r;
    CJ_RETURN_IF_ERROR(cj_lw_result(L, op, 0, &r));
    if (r.nelems != 1 || r.dtype != CJ_PRED)
      return cj_op_error(op, CJ_INVALID_ARGUMENT, "check.eq returns a tensor<i1>");
    out = r.buf;
    p->has_result = true;
  }
  if (!cj_lw_emit(L, op, k_check, p, 2, ins, out >= 0 ? 1 : 0, out >= 0 ? &out : NULL))
    return cj_oom();
  return NULL;
}

cj_status cj_lower_check(cj_lw *L, cj_op *op) {
  double tol = 1e-4;
  const cj_attr *t = cj_op_attr(op, "tolerance");
  if (t) cj_attr_get_f64(t, &tol);
  switch (op->kind) {
    case CJ_OP_CHECK_EXPECT_EQ: return emit_check(L, op, "check.expect_eq", CK_EQ, 0, 0, 0, false, false);
    case CJ_OP_CHECK_EXPECT_EQ_CONST:
      return emit_check(L, op, "check.expect_eq_const", CK_EQ, 0, 0, 0, true, false);
    case CJ_OP_CHECK_EXPECT_ALMOST_EQ:
      return emit_check(L, op, "check.expect_almost_eq", CK_ALMOST, tol, 0, 0, false, false);
    case CJ_OP_CHECK_EXPECT_ALMOST_EQ_CONST:
      return emit_check(L, op, "check.expect_almost_eq_const", CK_ALMOST, tol, 0, 0, true, false);
    case CJ_OP_CHECK_EXPECT_CLOSE: {
      int64_t mx = 0, mn = 0;
      cj_op_get_i64(op, "max_ulp_difference", &mx);
      cj_op_get_i64(op, "min_ulp_difference", &mn);
      return emit_check(L, op, "check.expect_close", CK_CLOSE, 0, (uint64_t)mn, (uint64_t)mx, false,
                        false);
    }
    default: return cj_op_error(op, CJ_INTERNAL, "not a check op");
  }
}

/* ---- @shape_assertion (JAX's shape-polymorphic exports): fails the execution with its message,
 * "{k}" replaced by the value of operand k+1, when its i1 operand is false ---- */

typedef struct assert_params {
  const char *message; /* in the program arena */
  int32_t nvals;
  cj_dtype *dts;       /* the value operands' element types */
} assert_params;

static CJ_MUST_USE cj_status k_shape_assertion(cj_exec_ctx *ctx, const cj_step *st) {
  const assert_params *p = st->params;
  if (*(const uint8_t *)CJ_PTR(ctx, st->in[0])) return NULL;
  char out[1024];
  size_t o = 0;
  for (const char *c = p->message; *c && o + 1 < sizeof out;) {
    int k = -1, used = 0;
    if (c[0] == '{' && sscanf(c, "{%d}%n", &k, &used) == 1 && used > 0 && k >= 0 && k < p->nvals) {
      int64_t v = cj_elem_get_i64(p->dts[k], CJ_PTR(ctx, st->in[k + 1]), 0);
      int w = snprintf(out + o, sizeof out - o, "%" PRId64, v);
      if (w > 0) o += (size_t)w < sizeof out - o ? (size_t)w : sizeof out - o - 1;
      c += used;
    } else {
      out[o++] = *c++;
    }
  }
  out[o] = 0;
  return cj_status_make(CJ_INVALID_ARGUMENT, "custom_call @shape_assertion failed (%s): %s", st->what,
                        out);
}

static CJ_MUST_USE cj_status lower_shape_assertion(cj_lw *L, cj_op *op) {
  if (op->nopnds < 1) return cj_op_error(op, CJ_INVALID_ARGUMENT, "shape_assertion without a condition");
  const char *msg = NULL;
  size_t mlen = 0;
  if (!cj_attr_get_str(cj_op_attr(op, "error_message"), &msg, &mlen)) {
    msg = "shape assertion failed";
    mlen = strlen(msg);
  }
  assert_params *p = cj_lw_alloc(L, sizeof *p);
  char *m = cj_lw_alloc(L, mlen + 1);
  cj_dtype *dts = cj_lw_alloc(L, sizeof(cj_dtype) * op->nopnds);
  int32_t *ins = cj_lw_alloc(L, sizeof(int32_t) * op->nopnds);
  if (!p || !m || !dts || !ins) return cj_oom();
  memcpy(m, msg, mlen);
  p->message = m;
  p->nvals = (int32_t)op->nopnds - 1;
  p->dts = dts;
  for (uint32_t i = 0; i < op->nopnds; i++) {
    cj_lw_tensor t;
    CJ_RETURN_IF_ERROR(cj_lw_operand(L, op, i, &t));
    if (t.nelems != 1 || (i == 0 && t.dtype != CJ_PRED) || (i > 0 && !cj_dtype_is_int(t.dtype)))
      return cj_op_error(op, CJ_INVALID_ARGUMENT,
                         "shape_assertion takes an i1 condition and integer scalars");
    ins[i] = t.buf;
    if (i > 0) dts[i - 1] = t.dtype;
  }
  if (!cj_lw_emit(L, op, k_shape_assertion, p, op->nopnds, ins, 0, NULL)) return cj_oom();
  return NULL;
}

cj_status cj_lower_custom_call(cj_lw *L, cj_op *op) {
  const char *target = NULL;
  size_t len = 0;
  if (!cj_attr_get_str(cj_op_attr(op, "call_target_name"), &target, &len))
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "custom_call without a call_target_name");
#define IS(s) (len == strlen(s) && memcmp(target, s, len) == 0)
  if (op->nopnds == 2 && IS("check.expect_eq"))
    return emit_check(L, op, "custom_call @check.expect_eq", CK_EQ, 0, 0, 0, false, false);
  if (op->nopnds == 2 && IS("check.expect_close"))
    return emit_check(L, op, "custom_call @check.expect_close", CK_CLOSE, 0, 0, 3, false, false);
  if (op->nopnds == 2 && IS("check.expect_almost_eq"))
    return emit_check(L, op, "custom_call @check.expect_almost_eq", CK_ALMOST, 1e-3, 0, 0, false,
                      false);
  if (op->nopnds == 2 && IS("check.eq"))
    return emit_check(L, op, "custom_call @check.eq", CK_ALMOST, 1e-4, 0, 0, false, true);
  if (IS("shape_assertion")) return lower_shape_assertion(L, op);
  if (IS("Qr")) return cj_lower_cc_qr(L, op); /* k_linalg_house.c */
  if (IS("ProductOfElementaryHouseholderReflectors")) return cj_lower_cc_householder_product(L, op);
  if (IS("Eigh")) return cj_lower_cc_eigh(L, op);
  /* jaxlib's LAPACK targets, which JAX emits for platform cpu (k_lapack.c) */
  if (cj_lapack_is_target(target, len)) return cj_lower_cc_lapack(L, op, target, len);
  if (IS("tridiagonal_solve_perturbed_ffi")) return cj_lower_cc_tridiagonal_perturbed(L, op);
  if (IS("cjrt_lu_pivots_to_permutation")) return cj_lower_cc_lu_permutation(L, op);
  if (IS("cjrt_threefry2x32")) return cj_lower_cc_threefry2x32(L, op); /* k_rng.c */
  /* jax.lax.dce_sink: marks its operands as used so that nothing upstream drops them; there is
   * nothing to run (the operands were computed by then) */
  if (IS("dce_sink") && op->nresults == 0) return NULL;
  /* handlers registered through the FFI (jax.ffi.register_ffi_target, k_ffi.c) */
  if (cj_ffi_find_handler(target, len, &(XLA_FFI_Handler_Bundle){0})) return cj_lower_cc_ffi(L, op, target, len);
#undef IS
  return cj_op_error(op, CJ_UNIMPLEMENTED, "custom_call @%.*s is not supported by the CPU backend",
                     (int)len, target);
}
