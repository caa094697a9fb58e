/* cjrt: spec verifiers of elementwise ops (unary, binary, compare, select, clamp, conversions,
 * quantization) and of constants and iota. */
#include <math.h>
#include <string.h>

#include "ir/shape_check.h"
#include "ir/verify_fns.h"

#define NUMERIC (CJ_EC_INT | CJ_EC_FLOAT | CJ_EC_COMPLEX)
#define NONQUANT (CJ_EC_BOOL | NUMERIC)

static const cj_type *T0(const cj_op *op) { return cjv_operand_type(op, 0); }
static const cj_type *T1(const cj_op *op) { return cjv_operand_type(op, 1); }
static const cj_type *T2(const cj_op *op) { return cjv_operand_type(op, 2); }
static const cj_type *R0(const cj_op *op) { return cjv_result_type(op, 0); }

/* ======================================================================== unary */

static CJ_MUST_USE cj_status check_result_accuracy(const cj_op *op) {
  const cj_attr *ra = cjv_attr(op, "result_accuracy");
  if (!ra) return NULL;
  double atol = 0, rtol = 0;
  cj_attr_get_f64(cj_attr_field(ra, CJ_SK_RESULT_ACCURACY, CJ_SF_RESULT_ACCURACY_atol), &atol);
  cj_attr_get_f64(cj_attr_field(ra, CJ_SK_RESULT_ACCURACY, CJ_SF_RESULT_ACCURACY_rtol), &rtol);
  int64_t ulps = cj_verify_field_i64(ra, CJ_SK_RESULT_ACCURACY, CJ_SF_RESULT_ACCURACY_ulps, 0);
  int32_t mode = CJ_RESULT_ACCURACY_MODE_DEFAULT;
  cj_attr_get_enum(cj_attr_field(ra, CJ_SK_RESULT_ACCURACY, CJ_SF_RESULT_ACCURACY_mode),
                   CJ_EK_RESULT_ACCURACY_MODE, &mode);
  if (atol < 0 || rtol < 0 || ulps < 0 || signbit(atol) || signbit(rtol))
    CJV_FAIL(op, "result_accuracy tolerances must not be negative");
  if (mode != CJ_RESULT_ACCURACY_MODE_TOLERANCE && (atol != 0 || rtol != 0 || ulps != 0))
    CJV_FAIL(op, "result_accuracy with mode %s must have zero atol, rtol and ulps",
             cj_enum_case_name(CJ_EK_RESULT_ACCURACY_MODE, mode));
  return NULL;
}

/* operand and result: tensors of `mask`, baseline_type(operand) = baseline_type(result). */
static CJ_MUST_USE cj_status unary_same_baseline(const cj_op *op, unsigned mask) {
  CJV_TRY(cj_verify_check_tensor(op, "operand", T0(op), mask));
  CJV_TRY(cj_verify_check_tensor(op, "result", R0(op), mask));
  return cj_verify_check_same_baseline(op, "operand", T0(op), "result", R0(op));
}

/* operand and result: tensors of `mask` with equal types. */
static CJ_MUST_USE cj_status unary_same_type(const cj_op *op, unsigned mask) {
  CJV_TRY(cj_verify_check_tensor(op, "operand", T0(op), mask));
  CJV_TRY(cj_verify_check_tensor(op, "result", R0(op), mask));
  return cj_verify_check_same_type(op, "operand", T0(op), "result", R0(op));
}

cj_status cj_verify_unary_float(const cj_op *op) {
  CJV_TRY(unary_same_baseline(op, CJ_EC_FLOAT | CJ_EC_COMPLEX | CJ_EC_QTENSOR));
  return check_result_accuracy(op);
}

/* ceil, floor, round_*: no complex */
cj_status cj_verify_unary_rounding(const cj_op *op) {
  CJV_TRY(unary_same_baseline(op, CJ_EC_FLOAT | CJ_EC_QTENSOR));
  return check_result_accuracy(op);
}

cj_status cj_verify_unary_int(const cj_op *op) { return unary_same_type(op, CJ_EC_INT); }

cj_status cj_verify_unary_int_or_bool(const cj_op *op) {
  return unary_same_type(op, CJ_EC_BOOL | CJ_EC_INT);
}

cj_status cj_verify_unary_numeric(const cj_op *op) {
  return unary_same_baseline(op, NUMERIC | CJ_EC_QTENSOR);
}

cj_status cj_verify_sign(const cj_op *op) {
  return unary_same_baseline(op, CJ_EC_SINT | CJ_EC_FLOAT | CJ_EC_COMPLEX | CJ_EC_QTENSOR);
}

/* The real type of a complex element (complex<f32> -> f32); others unchanged. */
static bool is_component_of(const cj_type *complex_elem, const cj_type *real_elem) {
  return complex_elem && real_elem && complex_elem->kind == CJ_TYPE_ELEM &&
         real_elem->kind == CJ_TYPE_ELEM &&
         cj_dtype_component(complex_elem->dtype) == real_elem->dtype;
}

cj_status cj_verify_abs(const cj_op *op) {
  const cj_type *x = T0(op), *r = R0(op);
  CJV_TRY(cj_verify_check_tensor(op, "operand", x,
                           CJ_EC_SINT | CJ_EC_FLOAT | CJ_EC_COMPLEX | CJ_EC_QTENSOR));
  CJV_TRY(cj_verify_check_tensor(op, "result", r, CJ_EC_SINT | CJ_EC_FLOAT | CJ_EC_QTENSOR));
  CJV_TRY(cj_verify_check_same_shape(op, "operand", x, "result", r));
  cjv_tbuf t1, t2;
  if (cj_shape_elem_category(x->elem) == CJ_EC_COMPLEX) {
    if (!is_component_of(x->elem, r->elem))
      CJV_FAIL(op, "the result of abs on %s must have element type %s, got %s", CJV_T(x, t1),
               cj_dtype_get(cj_dtype_component(x->dtype))->mlir, CJV_T(r, t2));
    return NULL;
  }
  return cj_verify_check_same_baseline_elem(op, "operand", x, "result", r);
}

cj_status cj_verify_real_imag(const cj_op *op) {
  const cj_type *x = T0(op), *r = R0(op);
  CJV_TRY(cj_verify_check_tensor(op, "operand", x, CJ_EC_FLOAT | CJ_EC_COMPLEX));
  CJV_TRY(cj_verify_check_tensor(op, "result", r, CJ_EC_FLOAT));
  CJV_TRY(cj_verify_check_same_shape(op, "operand", x, "result", r));
  cjv_tbuf t1, t2;
  if (cj_shape_elem_category(x->elem) == CJ_EC_COMPLEX) {
    if (!is_component_of(x->elem, r->elem))
      CJV_FAIL(op, "result element type must be the component type %s of %s, got %s",
               cj_dtype_get(cj_dtype_component(x->dtype))->mlir, CJV_T(x, t1), CJV_T(r, t2));
    return NULL;
  }
  return cj_verify_check_same_elem(op, "operand", x, "result", r);
}

cj_status cj_verify_is_finite(const cj_op *op) {
  CJV_TRY(cj_verify_check_tensor(op, "x", T0(op), CJ_EC_FLOAT | CJ_EC_QTENSOR));
  CJV_TRY(cj_verify_check_tensor(op, "y", R0(op), CJ_EC_BOOL));
  return cj_verify_check_same_shape(op, "x", T0(op), "y", R0(op));
}

cj_status cj_verify_convert(const cj_op *op) {
  CJV_TRY(cj_verify_check_tensor(op, "operand", T0(op), NONQUANT));
  CJV_TRY(cj_verify_check_tensor(op, "result", R0(op), NONQUANT));
  return cj_verify_check_same_shape(op, "operand", T0(op), "result", R0(op));
}

cj_status cj_verify_uniform_quantize(const cj_op *op) {
  const cj_type *x = T0(op), *r = R0(op);
  CJV_TRY(cj_verify_check_tensor(op, "operand", x, CJ_EC_FLOAT | CJ_EC_QUANT));
  CJV_TRY(cj_verify_check_tensor(op, "result", r, CJ_EC_QUANT));
  CJV_TRY(cj_verify_check_same_shape(op, "operand", x, "result", r));
  cj_dtype want = x->elem->kind == CJ_TYPE_QUANT ? x->elem->quant->expressed : x->elem->dtype;
  if (r->elem->quant->expressed != want)
    CJV_FAIL(op, "result expressed type must be %s, got %s", cj_dtype_get(want)->mlir,
             cj_dtype_get(r->elem->quant->expressed)->mlir);
  return NULL;
}

cj_status cj_verify_uniform_dequantize(const cj_op *op) {
  const cj_type *x = T0(op), *r = R0(op);
  CJV_TRY(cj_verify_check_tensor(op, "operand", x, CJ_EC_QUANT));
  CJV_TRY(cj_verify_check_tensor(op, "result", r, CJ_EC_FLOAT));
  CJV_TRY(cj_verify_check_same_shape(op, "operand", x, "result", r));
  if (r->elem->dtype != x->elem->quant->expressed)
    CJV_FAIL(op, "result element type must be the expressed type %s of the operand, got %s",
             cj_dtype_get(x->elem->quant->expressed)->mlir, cj_dtype_get(r->elem->dtype)->mlir);
  return NULL;
}

cj_status cj_verify_reduce_precision(const cj_op *op) {
  CJV_TRY(unary_same_baseline(op, CJ_EC_FLOAT | CJ_EC_QTENSOR));
  int64_t e = 1, m = 0;
  cjv_get_i64(op, "exponent_bits", &e);
  cjv_get_i64(op, "mantissa_bits", &m);
  if (e < 1) CJV_FAIL(op, "exponent_bits must be at least 1, got %lld", (long long)e);
  if (m < 0) CJV_FAIL(op, "mantissa_bits must not be negative, got %lld", (long long)m);
  return NULL;
}

cj_status cj_verify_bitcast_convert(const cj_op *op) {
  const cj_type *x = T0(op), *r = R0(op);
  CJV_TRY(cj_verify_check_tensor(op, "operand", x, CJ_EC_ANY));
  CJV_TRY(cj_verify_check_tensor(op, "result", r, CJ_EC_ANY));
  cjv_tbuf t1, t2;
  bool xc = cj_shape_elem_category(x->elem) == CJ_EC_COMPLEX;
  bool rc = cj_shape_elem_category(r->elem) == CJ_EC_COMPLEX;
  if (xc != rc)
    CJV_FAIL(op, "cannot convert between real and complex types, got %s and %s", CJV_T(x, t1),
             CJV_T(r, t2));
  int bx = cj_shape_bitwidth(x->elem), br = cj_shape_bitwidth(r->elem);
  if (bx == br) return cj_verify_check_same_shape(op, "operand", x, "result", r);
  /* the side with the smaller element type has one more (innermost) dimension */
  const cj_type *small = bx < br ? x : r, *big = bx < br ? r : x;
  int bs = bx < br ? bx : br, bb = bx < br ? br : bx;
  if (small->rank != big->rank + 1)
    CJV_FAIL(op,
             "the shape with the smaller element type must have rank one more than the other: "
             "%s and %s",
             CJV_T(x, t1), CJV_T(r, t2));
  int64_t last = small->dims[small->rank - 1];
  if (last != CJ_DYN && last * bs != bb)
    CJV_FAIL(op, "bit widths do not match: %s and %s (%lld x %d bits != %d bits)", CJV_T(x, t1),
             CJV_T(r, t2), (long long)last, bs, bb);
  for (int32_t i = 0; i < big->rank; i++)
    if (!cj_shape_dim_compatible(small->dims[i], big->dims[i]))
      CJV_FAIL(op,
               "operand and result shapes must match except for the innermost dimension of the "
               "one with the smaller element type: %s and %s",
               CJV_T(x, t1), CJV_T(r, t2));
  return NULL;
}

/* ======================================================================== binary */

static CJ_MUST_USE cj_status check_add_quant(const cj_op *op, const cj_type *a, const cj_type *b,
                                 const cj_type *r) {
  const cj_type *ea = a->elem, *eb = b->elem, *er = r->elem;
  if (ea->kind != CJ_TYPE_QUANT || eb->kind != CJ_TYPE_QUANT || er->kind != CJ_TYPE_QUANT)
    CJV_FAIL(op, "operands and result must all be quantized or all be non-quantized");
  const cj_quant *qa = ea->quant, *qb = eb->quant, *qr = er->quant;
  if (qa->storage != qb->storage || qa->storage != qr->storage)
    CJV_FAIL(op, "operands and result must have the same quantization storage type");
  if (qa->expressed != qb->expressed || qa->expressed != qr->expressed)
    CJV_FAIL(op, "operands and result must have the same quantization expressed type");
  bool pa = qa->axis >= 0, pb = qb->axis >= 0, pr = qr->axis >= 0;
  if ((pa || pb) != pr)
    CJV_FAIL(op, "result must be per-axis quantized exactly when lhs or rhs is");
  if (pa && qa->axis != qr->axis)
    CJV_FAIL(op, "quantization dimension of lhs (%d) and result (%d) must match", qa->axis,
             qr->axis);
  if (pb && qb->axis != qr->axis)
    CJV_FAIL(op, "quantization dimension of rhs (%d) and result (%d) must match", qb->axis,
             qr->axis);
  return NULL;
}

/* lhs, rhs, result: tensors of `mask`, same baseline types. */
static CJ_MUST_USE cj_status binary_same_baseline(const cj_op *op, unsigned mask) {
  CJV_TRY(cj_verify_check_tensors(op, mask, "lhs", T0(op), "rhs", T1(op), "result", R0(op), NULL));
  CJV_TRY(cj_verify_check_same_baseline(op, "lhs", T0(op), "rhs", T1(op)));
  return cj_verify_check_same_baseline(op, "lhs", T0(op), "result", R0(op));
}

static CJ_MUST_USE cj_status binary_same_type(const cj_op *op, unsigned mask) {
  CJV_TRY(cj_verify_check_tensors(op, mask, "lhs", T0(op), "rhs", T1(op), "result", R0(op), NULL));
  CJV_TRY(cj_verify_check_same_type(op, "lhs", T0(op), "rhs", T1(op)));
  return cj_verify_check_same_type(op, "lhs", T0(op), "result", R0(op));
}

cj_status cj_verify_add(const cj_op *op) {
  const cj_type *a = T0(op), *b = T1(op), *r = R0(op);
  CJV_TRY(cj_verify_check_tensors(op, CJ_EC_ANY, "lhs", a, "rhs", b, "result", r, NULL));
  CJV_TRY(cj_verify_check_same_shape(op, "lhs", a, "rhs", b));
  CJV_TRY(cj_verify_check_same_shape(op, "lhs", a, "result", r));
  if (cj_shape_is_quant_elem(a->elem) || cj_shape_is_quant_elem(b->elem) ||
      cj_shape_is_quant_elem(r->elem))
    return check_add_quant(op, a, b, r);
  CJV_TRY(cj_verify_check_same_elem(op, "lhs", a, "rhs", b));
  return cj_verify_check_same_elem(op, "lhs", a, "result", r);
}

/* multiply, maximum, minimum: booleans too */
cj_status cj_verify_binary_or_bool(const cj_op *op) {
  return binary_same_baseline(op, NONQUANT | CJ_EC_QTENSOR);
}

cj_status cj_verify_binary(const cj_op *op) { return binary_same_baseline(op, NUMERIC | CJ_EC_QTENSOR); }

cj_status cj_verify_binary_float(const cj_op *op) {
  return binary_same_baseline(op, CJ_EC_FLOAT | CJ_EC_COMPLEX | CJ_EC_QTENSOR);
}

cj_status cj_verify_binary_int(const cj_op *op) { return binary_same_type(op, CJ_EC_INT); }

cj_status cj_verify_binary_logical(const cj_op *op) {
  return binary_same_type(op, CJ_EC_BOOL | CJ_EC_INT);
}

cj_status cj_verify_complex(const cj_op *op) {
  const cj_type *a = T0(op), *b = T1(op), *r = R0(op);
  cjv_tbuf t1, t2;
  CJV_TRY(cj_verify_check_tensor(op, "lhs", a, CJ_EC_FLOAT));
  if (a->dtype != CJ_F32 && a->dtype != CJ_F64)
    CJV_FAIL(op, "lhs must be a tensor of f32 or f64, got %s", CJV_T(a, t1));
  CJV_TRY(cj_verify_check_tensor(op, "rhs", b, CJ_EC_FLOAT));
  CJV_TRY(cj_verify_check_same_type(op, "lhs", a, "rhs", b));
  CJV_TRY(cj_verify_check_tensor(op, "result", r, CJ_EC_COMPLEX));
  CJV_TRY(cj_verify_check_same_shape(op, "lhs", a, "result", r));
  if (cj_dtype_component(r->dtype) != a->dtype)
    CJV_FAIL(op, "result element type must be complex<%s>, got %s", cj_dtype_get(a->dtype)->mlir,
             CJV_T(r, t2));
  return NULL;
}

cj_status cj_verify_compare(const cj_op *op) {
  const cj_type *a = T0(op), *b = T1(op), *r = R0(op);
  unsigned mask = NONQUANT | CJ_EC_QTENSOR;
  CJV_TRY(cj_verify_check_tensor(op, "lhs", a, mask));
  CJV_TRY(cj_verify_check_tensor(op, "rhs", b, mask));
  CJV_TRY(cj_verify_check_tensor(op, "result", r, CJ_EC_BOOL));
  CJV_TRY(cj_verify_check_same_baseline_elem(op, "lhs", a, "rhs", b));
  CJV_TRY(cj_verify_check_same_shape(op, "lhs", a, "rhs", b));
  CJV_TRY(cj_verify_check_same_shape(op, "lhs", a, "result", r));
  /* The spec's C3 ties compare_type to the element type (SIGNED for signed integers, ...), but
   * StableHLO's own verifier does not enforce it and its serialization tests (part of the
   * conformance corpus) compare f32 with SIGNED; the comparison semantics follow the element
   * type, so any compare_type is accepted. */
  return NULL;
}

/* `wa` a must be a scalar or have the shape of `wb` b (select's pred, clamp's bounds) */
static CJ_MUST_USE cj_status scalar_or_shape_of(const cj_op *op, const char *wa, const cj_type *a,
                                                const char *wb, const cj_type *b) {
  cjv_tbuf t1, t2;
  if (a->rank != 0 && !cj_shape_compatible(a, b))
    CJV_FAIL(op, "%s must be a scalar or have the shape of %s, got %s and %s", wa, wb, CJV_T(a, t1),
             CJV_T(b, t2));
  return NULL;
}

cj_status cj_verify_select(const cj_op *op) {
  const cj_type *p = T0(op), *a = T1(op), *b = T2(op), *r = R0(op);
  unsigned mask = NONQUANT | CJ_EC_QTENSOR;
  CJV_TRY(cj_verify_check_tensor(op, "pred", p, CJ_EC_BOOL));
  CJV_TRY(cj_verify_check_tensors(op, mask, "on_true", a, "on_false", b, "result", r, NULL));
  CJV_TRY(cj_verify_check_same_baseline(op, "on_true", a, "on_false", b));
  CJV_TRY(cj_verify_check_same_baseline(op, "on_true", a, "result", r));
  return scalar_or_shape_of(op, "pred", p, "on_true", a);
}

cj_status cj_verify_clamp(const cj_op *op) {
  const cj_type *mn = T0(op), *x = T1(op), *mx = T2(op), *r = R0(op);
  unsigned mask = NONQUANT | CJ_EC_QTENSOR;
  CJV_TRY(cj_verify_check_tensors(op, mask, "min", mn, "operand", x, "max", mx, "result", r, NULL));
  CJV_TRY(scalar_or_shape_of(op, "min", mn, "operand", x));
  CJV_TRY(scalar_or_shape_of(op, "max", mx, "operand", x));
  CJV_TRY(cj_verify_check_same_baseline_elem(op, "min", mn, "operand", x));
  CJV_TRY(cj_verify_check_same_baseline_elem(op, "max", mx, "operand", x));
  return cj_verify_check_same_baseline(op, "operand", x, "result", r);
}

/* ======================================================================== constants, iota */

cj_status cj_verify_constant(const cj_op *op) {
  const cj_type *r = R0(op);
  const cj_attr *v = cjv_attr(op, "value");
  cjv_tbuf t1, t2;
  CJV_TRY(cj_verify_check_tensor(op, "result", r, CJ_EC_ANY));
  if (r->num_elements < 0) CJV_FAIL(op, "result must have a static shape, got %s", CJV_T(r, t1));
  if (!v || v->kind != CJ_ATTR_DENSE) return NULL; /* reported by the attribute check */
  const cj_type *vt = v->dense.type;
  if (vt == r) return NULL;
  /* a quantized constant holds its storage values */
  bool ok = vt && vt->kind == CJ_TYPE_TENSOR && vt->rank == r->rank &&
            memcmp(vt->dims, r->dims, sizeof(int64_t) * (size_t)r->rank) == 0 &&
            r->elem->kind == CJ_TYPE_QUANT && vt->elem->kind == CJ_TYPE_ELEM &&
            vt->elem->dtype == r->elem->quant->storage;
  if (!ok)
    CJV_FAIL(op, "value has type %s but the result has type %s", CJV_T(vt, t1), CJV_T(r, t2));
  return NULL;
}

/* iota and dynamic_iota: a numeric result with iota_dimension in range; iota's is a static
 * non-scalar. */
static CJ_MUST_USE cj_status check_iota(const cj_op *op, bool dynamic) {
  const cj_type *r = R0(op);
  CJV_TRY(cj_verify_check_tensor(op, "result", r, NUMERIC | CJ_EC_QTENSOR));
  int64_t d = 0;
  cjv_get_i64(op, "iota_dimension", &d);
  cjv_tbuf t1;
  if (!dynamic && r->rank == 0) CJV_FAIL(op, "result must not be a scalar, got %s", CJV_T(r, t1));
  if (!dynamic && r->num_elements < 0)
    CJV_FAIL(op, "result must have a static shape (dynamic_iota makes dynamic ones), got %s",
             CJV_T(r, t1));
  if (d < 0 || d >= r->rank)
    CJV_FAIL(op, "iota_dimension %lld is out of range [0, %d) for %s", (long long)d, r->rank,
             CJV_T(r, t1));
  return NULL;
}

cj_status cj_verify_iota(const cj_op *op) { return check_iota(op, false); }

cj_status cj_verify_dynamic_iota(const cj_op *op) {
  CJV_TRY(check_iota(op, true));
  return cj_verify_check_shape_operand(op, 0, "output_shape", R0(op));
}
