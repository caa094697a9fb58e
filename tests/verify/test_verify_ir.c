/* Verifier tests on IR built with the builder API (src/ir/ir.h): the structural checks (arity,
 * attributes, SSA dominance, isolation, terminators, symbols, function signatures, value types)
 * and a few op verifiers. The text-based tests (test_verify_text.c) cover the op families. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../common/check.h"
#include "ir/ir.h"

static cj_module *M;
static int line_no;

static const cj_type *tt(cj_dtype dt, int rank, ...) {
  int64_t dims[8];
  va_list ap;
  va_start(ap, rank);
  for (int i = 0; i < rank; i++) dims[i] = va_arg(ap, int64_t);
  va_end(ap);
  return cj_type_tensor_of(M, dt, rank, dims);
}

static void set_pos(cj_op *op) {
  op->pos.file = "t.mlir";
  op->pos.line = ++line_no;
  op->pos.col = 3;
}

/* An op appended to block b with the given operands and result types. */
static cj_op *mk(cj_block *b, cj_op_kind kind, uint32_t nopnds, cj_value *const *opnds,
                 uint32_t nres, const cj_type *const *rtypes, uint32_t nregions) {
  cj_op *op = cj_op_create(M, kind, NULL, nopnds, nres, nregions);
  for (uint32_t i = 0; i < nopnds; i++) cj_op_set_operand(op, i, opnds[i]);
  for (uint32_t i = 0; i < nres; i++) op->results[i].type = rtypes[i];
  set_pos(op);
  if (b) cj_block_append(b, op);
  return op;
}

/* func.func @name(ins) -> outs, returning its body block. */
static cj_block *mkfunc(const char *name, int nin, const cj_type *const *ins, int nout,
                        const cj_type *const *outs, cj_op **out_func) {
  cj_op *f = mk(cj_module_block(M), CJ_OP_FUNC, 0, NULL, 0, NULL, 1);
  CHECK_OK(cj_op_set_attr(M, f, "sym_name", cj_attr_string(M, name, strlen(name))));
  CHECK_OK(cj_op_set_attr(M, f, "function_type",
                 cj_attr_type(M, cj_type_function(M, nin, ins, nout, outs))));
  cj_block *b = cj_region_add_block(M, &f->regions[0], (uint32_t)nin, ins);
  if (out_func) *out_func = f;
  return b;
}

static cj_op *ret(cj_block *b, uint32_t n, cj_value *const *vals) {
  return mk(b, CJ_OP_FUNC_RETURN, n, vals, 0, NULL, 0);
}

static void fresh(void) {
  cj_module_free(M);
  M = cj_module_create("t.mlir");
  line_no = 0;
}

/* Verifies M and checks the outcome: expect NULL for success, else the exact message. */
static void expect_verify(const char *expect, int line) {
  cj_status st = cj_verify_module(M);
  const char *msg = cj_status_message(st);
  if (!expect) {
    CHECK_MSG(st == NULL, "line %d: expected success, got: %s", line, msg);
  } else {
    CHECK_MSG(st != NULL && strcmp(msg, expect) == 0, "line %d:\n   got: %s\n  want: %s", line,
              st ? msg : "(success)", expect);
    CHECK(cj_status_code(st) == CJ_INVALID_ARGUMENT || st == NULL);
  }
  cj_status_free(st);
}
#define EXPECT(msg) expect_verify((msg), __LINE__)

static void test_valid(void) {
  fresh();
  const cj_type *t2 = tt(CJ_F32, 1, (int64_t)2);
  cj_block *b = mkfunc("main", 1, &t2, 1, &t2, NULL);
  cj_value *a = &b->args[0];
  cj_value *ops[2] = {a, a};
  cj_op *add = mk(b, CJ_OP_ADD, 2, ops, 1, &t2, 0);
  ret(b, 1, (cj_value *[]){&add->results[0]});
  EXPECT(NULL);
  /* the single-op entry point too */
  CHECK(cj_verify_op(add) == NULL);
}

static void test_arity_and_attrs(void) {
  fresh();
  const cj_type *t2 = tt(CJ_F32, 1, (int64_t)2);
  cj_block *b = mkfunc("main", 1, &t2, 1, &t2, NULL);
  cj_value *a = &b->args[0];
  cj_op *add = mk(b, CJ_OP_ADD, 3, (cj_value *[]){a, a, a}, 1, &t2, 0);
  ret(b, 1, (cj_value *[]){&add->results[0]});
  EXPECT("stablehlo.add at t.mlir:2:3: expects 2 operands, got 3");

  fresh();
  t2 = tt(CJ_F32, 1, (int64_t)2);
  b = mkfunc("main", 0, NULL, 1, &t2, NULL);
  cj_op *iota = mk(b, CJ_OP_IOTA, 0, NULL, 1, &t2, 0);
  ret(b, 1, (cj_value *[]){&iota->results[0]});
  EXPECT("stablehlo.iota at t.mlir:2:3: requires attribute 'iota_dimension'");
  CHECK_OK(cj_op_set_attr(M, iota, "iota_dimension", cj_attr_string(M, "0", 1)));
  EXPECT("stablehlo.iota at t.mlir:2:3: attribute 'iota_dimension' must be an integer of type "
         "i64, got a string");
  CHECK_OK(cj_op_set_attr(M, iota, "iota_dimension", cj_attr_int(M, 0, cj_type_elem(M, CJ_S32))));
  EXPECT("stablehlo.iota at t.mlir:2:3: attribute 'iota_dimension' must be an integer of type "
         "i64, got an integer of type i32");
  CHECK_OK(cj_op_set_attr(M, iota, "iota_dimension", cj_attr_int(M, 1, cj_type_elem(M, CJ_S64))));
  EXPECT("stablehlo.iota at t.mlir:2:3: iota_dimension 1 is out of range [0, 1) for "
         "tensor<2xf32>");
  CHECK_OK(cj_op_set_attr(M, iota, "iota_dimension", cj_attr_int(M, 0, NULL))); /* untyped = i64 */
  EXPECT(NULL);

  /* an enum of the wrong kind */
  fresh();
  t2 = tt(CJ_F32, 1, (int64_t)2);
  const cj_type *b2 = tt(CJ_PRED, 1, (int64_t)2);
  b = mkfunc("main", 1, &t2, 1, &b2, NULL);
  a = &b->args[0];
  cj_op *cmp = mk(b, CJ_OP_COMPARE, 2, (cj_value *[]){a, a}, 1, &b2, 0);
  CHECK_OK(cj_op_set_attr(M, cmp, "comparison_direction", cj_attr_enum(M, CJ_EK_PRECISION, 0)));
  ret(b, 1, (cj_value *[]){&cmp->results[0]});
  EXPECT("stablehlo.compare at t.mlir:2:3: attribute 'comparison_direction' must be a "
         "#stablehlo<comparison_direction> enum, got a #stablehlo<precision> enum");
  CHECK_OK(cj_op_set_attr(M, cmp, "comparison_direction",
                 cj_attr_enum(M, CJ_EK_COMPARISON_DIRECTION, CJ_COMPARISON_DIRECTION_LT)));
  EXPECT(NULL);
  CHECK_OK(cj_op_set_attr(M, cmp, "compare_type",
                 cj_attr_enum(M, CJ_EK_COMPARISON_TYPE, CJ_COMPARISON_TYPE_SIGNED)));
  /* the spec ties compare_type to the element type, but StableHLO does not enforce it and the
   * conformance corpus compares f32 as SIGNED: accepted (see verify_elementwise.c) */
  EXPECT(NULL);

  /* a struct attribute with a field of the wrong kind */
  fresh();
  const cj_type *m23 = tt(CJ_F32, 2, (int64_t)2, (int64_t)3), *m34 = tt(CJ_F32, 2, (int64_t)3, (int64_t)4);
  const cj_type *m24 = tt(CJ_F32, 2, (int64_t)2, (int64_t)4);
  b = mkfunc("main", 2, (const cj_type *[]){m23, m34}, 1, &m24, NULL);
  cj_op *dot = mk(b, CJ_OP_DOT_GENERAL, 2, (cj_value *[]){&b->args[0], &b->args[1]}, 1, &m24, 0);
  const cj_attr *fields[CJ_SF_DOT__COUNT] = {0};
  int64_t one = 1, zero = 0;
  fields[CJ_SF_DOT_lhs_contracting_dimensions] = cj_attr_i64_array(M, 1, &one);
  fields[CJ_SF_DOT_rhs_contracting_dimensions] = cj_attr_int(M, 0, NULL);
  CHECK_OK(cj_op_set_attr(M, dot, "dot_dimension_numbers", cj_attr_struct(M, CJ_SK_DOT, fields)));
  ret(b, 1, (cj_value *[]){&dot->results[0]});
  EXPECT("stablehlo.dot_general at t.mlir:2:3: attribute 'dot_dimension_numbers': field "
         "'rhs_contracting_dimensions' must be a list of integers, got an integer of type i64 "
         "(untyped)");
  fields[CJ_SF_DOT_rhs_contracting_dimensions] = cj_attr_i64_array(M, 1, &zero);
  CHECK_OK(cj_op_set_attr(M, dot, "dot_dimension_numbers", cj_attr_struct(M, CJ_SK_DOT, fields)));
  EXPECT(NULL);
  fields[CJ_SF_DOT_rhs_contracting_dimensions] = cj_attr_i64_array(M, 1, &one);
  CHECK_OK(cj_op_set_attr(M, dot, "dot_dimension_numbers", cj_attr_struct(M, CJ_SK_DOT, fields)));
  EXPECT("stablehlo.dot_general at t.mlir:2:3: lhs contracting dimension 1 has size 3 but rhs "
         "contracting dimension 1 has size 4");
}

static void test_dominance(void) {
  const cj_type *t2;
  /* use before definition in the same block */
  fresh();
  t2 = tt(CJ_F32, 1, (int64_t)2);
  cj_block *b = mkfunc("main", 1, &t2, 1, &t2, NULL);
  cj_value *a = &b->args[0];
  cj_op *neg = cj_op_create(M, CJ_OP_NEGATE, NULL, 1, 1, 0);
  neg->results[0].type = t2;
  neg->results[0].name = "late";
  cj_op *add = mk(b, CJ_OP_ADD, 2, (cj_value *[]){a, &neg->results[0]}, 1, &t2, 0);
  cj_op_set_operand(neg, 0, a);
  set_pos(neg);
  cj_block_append(b, neg);
  ret(b, 1, (cj_value *[]){&add->results[0]});
  EXPECT("stablehlo.add at t.mlir:2:3: operand #1 (%late) is used before its definition");

  /* a value of one function used in another */
  fresh();
  t2 = tt(CJ_F32, 1, (int64_t)2);
  cj_block *b1 = mkfunc("f", 1, &t2, 1, &t2, NULL);
  ret(b1, 1, (cj_value *[]){&b1->args[0]});
  cj_block *b2 = mkfunc("g", 1, &t2, 1, &t2, NULL);
  ret(b2, 1, (cj_value *[]){&b1->args[0]});
  EXPECT("func.return at t.mlir:4:3: operand #0 does not dominate this use (it is not defined in "
         "an enclosing scope)");

  /* a value defined inside a while body used after the loop */
  fresh();
  t2 = tt(CJ_F32, 1, (int64_t)2);
  const cj_type *i1 = tt(CJ_PRED, 0);
  b = mkfunc("main", 2, (const cj_type *[]){t2, i1}, 1, &t2, NULL);
  cj_op *w = mk(b, CJ_OP_WHILE, 1, (cj_value *[]){&b->args[0]}, 1, &t2, 2);
  cj_block *cond = cj_region_add_block(M, &w->regions[0], 1, &t2);
  mk(cond, CJ_OP_RETURN, 1, (cj_value *[]){&b->args[1]}, 0, NULL, 0); /* outer value: fine */
  cj_block *body = cj_region_add_block(M, &w->regions[1], 1, &t2);
  cj_op *inner = mk(body, CJ_OP_NEGATE, 1, (cj_value *[]){&body->args[0]}, 1, &t2, 0);
  mk(body, CJ_OP_RETURN, 1, (cj_value *[]){&inner->results[0]}, 0, NULL, 0);
  cj_op *r = ret(b, 1, (cj_value *[]){&w->results[0]});
  EXPECT(NULL);
  cj_op_set_operand(r, 0, &inner->results[0]);
  EXPECT("func.return at t.mlir:6:3: operand #0 does not dominate this use (it is not defined in "
         "an enclosing scope)");

  /* a region isolated from above (sdy.manual_computation) cannot see the function's values */
  fresh();
  t2 = tt(CJ_F32, 1, (int64_t)2);
  b = mkfunc("main", 1, &t2, 1, &t2, NULL);
  cj_op *mc = mk(b, CJ_OP_SDY_MANUAL_COMPUTATION, 1, (cj_value *[]){&b->args[0]}, 1, &t2, 1);
  CHECK_OK(cj_op_set_attr(M, mc, "in_shardings", cj_attr_opaque(M, "#sdy<x>", 7)));
  CHECK_OK(cj_op_set_attr(M, mc, "out_shardings", cj_attr_opaque(M, "#sdy<x>", 7)));
  CHECK_OK(cj_op_set_attr(M, mc, "manual_axes", cj_attr_opaque(M, "#sdy<x>", 7)));
  cj_block *mb = cj_region_add_block(M, &mc->regions[0], 1, &t2);
  cj_op *sret = mk(mb, CJ_OP_SDY_RETURN, 1, (cj_value *[]){&mb->args[0]}, 0, NULL, 0);
  ret(b, 1, (cj_value *[]){&mc->results[0]});
  EXPECT(NULL);
  cj_op_set_operand(sret, 0, &b->args[0]);
  EXPECT("sdy.return at t.mlir:3:3: operand #0 is defined outside the region of "
         "sdy.manual_computation, which is isolated from above");
}

static void test_terminators(void) {
  const cj_type *t2;
  fresh();
  t2 = tt(CJ_F32, 1, (int64_t)2);
  cj_block *b = mkfunc("main", 1, &t2, 1, &t2, NULL);
  mk(b, CJ_OP_NEGATE, 1, (cj_value *[]){&b->args[0]}, 1, &t2, 0);
  EXPECT("func.func at t.mlir:1:3: region #0 must end with func.return, got stablehlo.negate");

  fresh();
  t2 = tt(CJ_F32, 1, (int64_t)2);
  b = mkfunc("main", 1, &t2, 1, &t2, NULL);
  EXPECT("func.func at t.mlir:1:3: region #0 must end with func.return, but its block is empty");

  /* a terminator in the middle of a block */
  fresh();
  t2 = tt(CJ_F32, 1, (int64_t)2);
  b = mkfunc("main", 1, &t2, 1, &t2, NULL);
  ret(b, 1, (cj_value *[]){&b->args[0]});
  ret(b, 1, (cj_value *[]){&b->args[0]});
  EXPECT("func.return at t.mlir:2:3: is a terminator and must be the last op of its block");

  /* go-xla ends functions with stablehlo.return: accepted, types still checked */
  fresh();
  t2 = tt(CJ_F32, 1, (int64_t)2);
  const cj_type *t3 = tt(CJ_F32, 1, (int64_t)3);
  b = mkfunc("main", 1, &t2, 1, &t3, NULL);
  mk(b, CJ_OP_RETURN, 1, (cj_value *[]){&b->args[0]}, 0, NULL, 0);
  EXPECT("stablehlo.return at t.mlir:2:3: operand #0 has type tensor<2xf32> but function @main "
         "returns tensor<3xf32>");

  /* wrong number of returned values */
  fresh();
  t2 = tt(CJ_F32, 1, (int64_t)2);
  b = mkfunc("main", 1, &t2, 1, &t2, NULL);
  ret(b, 0, NULL);
  EXPECT("func.return at t.mlir:2:3: returns 0 values but function @main has 1 result");

  /* regions of stablehlo ops end with stablehlo.return */
  fresh();
  t2 = tt(CJ_F32, 1, (int64_t)2);
  const cj_type *i1 = tt(CJ_PRED, 0);
  b = mkfunc("main", 2, (const cj_type *[]){t2, i1}, 1, &t2, NULL);
  cj_op *w = mk(b, CJ_OP_WHILE, 1, (cj_value *[]){&b->args[0]}, 1, &t2, 2);
  cj_block *cond = cj_region_add_block(M, &w->regions[0], 1, &t2);
  mk(cond, CJ_OP_FUNC_RETURN, 1, (cj_value *[]){&b->args[1]}, 0, NULL, 0);
  cj_block *body = cj_region_add_block(M, &w->regions[1], 1, &t2);
  mk(body, CJ_OP_RETURN, 1, (cj_value *[]){&body->args[0]}, 0, NULL, 0);
  ret(b, 1, (cj_value *[]){&w->results[0]});
  EXPECT("stablehlo.while at t.mlir:2:3: region #0 must end with stablehlo.return, got "
         "func.return");
}

static void test_symbols(void) {
  const cj_type *t2, *t3;
  /* func.call: resolved, and its types must match the callee's */
  fresh();
  t2 = tt(CJ_F32, 1, (int64_t)2);
  t3 = tt(CJ_F32, 1, (int64_t)3);
  cj_block *fb = mkfunc("callee", 1, &t2, 1, &t2, NULL);
  ret(fb, 1, (cj_value *[]){&fb->args[0]});
  cj_block *b = mkfunc("main", 1, &t2, 1, &t2, NULL);
  cj_op *call = mk(b, CJ_OP_FUNC_CALL, 1, (cj_value *[]){&b->args[0]}, 1, &t2, 0);
  CHECK_OK(cj_op_set_attr(M, call, "callee", cj_attr_symref(M, "callee", 0, NULL)));
  ret(b, 1, (cj_value *[]){&call->results[0]});
  EXPECT(NULL);
  CHECK_OK(cj_op_set_attr(M, call, "callee", cj_attr_symref(M, "nowhere", 0, NULL)));
  EXPECT("func.call at t.mlir:4:3: 'callee' @nowhere does not name a function in this module");
  CHECK_OK(cj_op_set_attr(M, call, "callee", cj_attr_symref(M, "callee", 0, NULL)));
  call->results[0].type = t3;
  EXPECT("func.call at t.mlir:4:3: result #0 has type tensor<3xf32> but callee @callee returns "
         "tensor<2xf32>");

  /* duplicate symbols */
  fresh();
  t2 = tt(CJ_F32, 1, (int64_t)2);
  fb = mkfunc("main", 1, &t2, 1, &t2, NULL);
  ret(fb, 1, (cj_value *[]){&fb->args[0]});
  fb = mkfunc("main", 1, &t2, 1, &t2, NULL);
  ret(fb, 1, (cj_value *[]){&fb->args[0]});
  EXPECT("func.func at t.mlir:3:3: redefinition of symbol 'main' (first defined at t.mlir:1:3)");

  /* function body and signature disagree */
  fresh();
  t2 = tt(CJ_F32, 1, (int64_t)2);
  t3 = tt(CJ_F32, 1, (int64_t)3);
  cj_op *f;
  fb = mkfunc("main", 1, &t2, 1, &t2, &f);
  ret(fb, 1, (cj_value *[]){&fb->args[0]});
  CHECK_OK(cj_op_set_attr(M, f, "function_type", cj_attr_type(M, cj_type_function(M, 1, &t3, 1, &t2))));
  EXPECT("func.func at t.mlir:1:3: @main: body argument #0 has type tensor<2xf32> but the "
         "function type says tensor<3xf32>");

  /* declarations must be private */
  fresh();
  t2 = tt(CJ_F32, 1, (int64_t)2);
  f = mk(cj_module_block(M), CJ_OP_FUNC, 0, NULL, 0, NULL, 1);
  CHECK_OK(cj_op_set_attr(M, f, "sym_name", cj_attr_string(M, "ext", 3)));
  CHECK_OK(cj_op_set_attr(M, f, "function_type", cj_attr_type(M, cj_type_function(M, 1, &t2, 1, &t2))));
  EXPECT("func.func at t.mlir:1:3: function declaration @ext (no body) must be private");
  CHECK_OK(cj_op_set_attr(M, f, "sym_visibility", cj_attr_string(M, "private", 7)));
  EXPECT(NULL);
}

static void test_value_types(void) {
  /* per-axis quantization: the quantized dimension's size must equal the number of scales */
  fresh();
  double scales[2] = {0.5, 0.25};
  int64_t zps[2] = {0, 1};
  cj_quant q = {CJ_S8, CJ_F32, -128, 127, 0, 2, scales, zps};
  const cj_type *qe = cj_type_quant(M, &q);
  int64_t d3 = 3, d2 = 2;
  const cj_type *q3 = cj_type_tensor(M, qe, 1, &d3, NULL, NULL);
  cj_block *b = mkfunc("main", 1, &q3, 1, &q3, NULL);
  ret(b, 1, (cj_value *[]){&b->args[0]});
  EXPECT("func.func at t.mlir:1:3: argument #0 of region #0: quantized dimension 0 has size 3 "
         "but the type has 2 scales in tensor<3x!quant.uniform<i8:f32:0, {0.5,0.25:1}>>");
  fresh();
  q.storage_min = -200;
  qe = cj_type_quant(M, &q);
  const cj_type *q2 = cj_type_tensor(M, qe, 1, &d2, NULL, NULL);
  b = mkfunc("main", 1, &q2, 1, &q2, NULL);
  ret(b, 1, (cj_value *[]){&b->args[0]});
  EXPECT("func.func at t.mlir:1:3: argument #0 of region #0: quantization storage range [-200, "
         "127] must lie within [-128, 127] with min < max in "
         "tensor<2x!quant.uniform<i8<-200:127>:f32:0, {0.5,0.25:1}>>");

  /* bounds only on dynamic dimensions */
  fresh();
  int64_t dims[2] = {CJ_DYN, 3}, bounds[2] = {4, 3};
  const cj_type *bt = cj_type_tensor(M, cj_type_elem(M, CJ_F32), 2, dims, bounds, NULL);
  b = mkfunc("main", 1, &bt, 1, &bt, NULL);
  ret(b, 1, (cj_value *[]){&b->args[0]});
  EXPECT("func.func at t.mlir:1:3: argument #0 of region #0: static dimension 1 cannot have a "
         "bound in tensor<?x3xf32, #stablehlo.bounds<4, 3>>");
}

static void test_single_op(void) {
  fresh();
  const cj_type *t2 = tt(CJ_F32, 1, (int64_t)2);
  cj_block *b = mkfunc("main", 1, &t2, 1, &t2, NULL);
  cj_value *a = &b->args[0];
  /* a detached call: its callee cannot be resolved, the rest is checked */
  cj_op *call = mk(NULL, CJ_OP_FUNC_CALL, 1, (cj_value *[]){a}, 1, &t2, 0);
  CHECK_OK(cj_op_set_attr(M, call, "callee", cj_attr_symref(M, "anything", 0, NULL)));
  cj_status st = cj_verify_op(call);
  CHECK_MSG(st == NULL, "%s", cj_status_message(st));
  cj_status_free(st);
  CHECK_OK(cj_op_set_attr(M, call, "callee", NULL));
  st = cj_verify_op(call);
  CHECK_EQ_STR(cj_status_message(st), "func.call at t.mlir:2:3: requires attribute 'callee'");
  cj_status_free(st);
  /* a missing operand and a missing result type */
  cj_op *add = mk(NULL, CJ_OP_ADD, 2, (cj_value *[]){a, NULL}, 1, &t2, 0);
  st = cj_verify_op(add);
  CHECK_EQ_STR(cj_status_message(st), "stablehlo.add at t.mlir:3:3: operand #1 is missing");
  cj_status_free(st);
  cj_op_set_operand(add, 1, a);
  add->results[0].type = NULL;
  st = cj_verify_op(add);
  CHECK_EQ_STR(cj_status_message(st), "stablehlo.add at t.mlir:3:3: result #0 has no type");
  cj_status_free(st);
  add->results[0].type = t2;
  st = cj_verify_op(add);
  CHECK(st == NULL);
  cj_status_free(st);
  st = cj_verify_op(NULL);
  CHECK(cj_status_code(st) == CJ_INVALID_ARGUMENT);
  cj_status_free(st);
  ret(b, 1, (cj_value *[]){a});
  EXPECT(NULL);
}

int main(void) {
  test_valid();
  test_arity_and_attrs();
  test_dominance();
  test_terminators();
  test_symbols();
  test_value_types();
  test_single_op();
  cj_module_free(M);
  return check_report("verify_ir");
}
