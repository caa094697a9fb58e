/* Hand-written tests of the text front end and the printer, for what the conformance corpus lacks:
 * locations as JAX dumps print them, go-xla-style generic text, every dense/type/attribute form,
 * the printer's naming and float formatting, Shardy and unknown dialects, and every error path
 * with its message. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../common/check.h"
#include "frontend/frontend.h"
#include "ir/ir.h"

/* ---- helpers ---- */

static cj_module *parse_ok_at(const char *text, int line) {
  cj_module *m = NULL;
  cj_status st = cj_parse_mlir_text(text, strlen(text), "t.mlir", &m);
  CHECK_MSG(st == NULL, "line %d: unexpected parse error: %s", line, cj_status_message(st));
  cj_status_free(st);
  return m;
}
#define parse_ok(text) parse_ok_at((text), __LINE__)

static void parse_err_at(const char *text, const char *want, int line) {
  cj_module *m = NULL;
  cj_status st = cj_parse_mlir_text(text, strlen(text), "t.mlir", &m);
  CHECK_MSG(st != NULL, "line %d: expected an error containing \"%s\"", line, want);
  CHECK_MSG(m == NULL, "line %d: a module was returned with an error", line);
  if (st) {
    CHECK_MSG(strstr(cj_status_message(st), want) != NULL,
              "line %d: \"%s\" does not contain \"%s\"", line, cj_status_message(st), want);
    CHECK(cj_status_code(st) == CJ_INVALID_ARGUMENT);
  }
  cj_status_free(st);
  cj_module_free(m);
}
#define parse_err(text, want) parse_err_at((text), (want), __LINE__)

static char *print_mod(const cj_module *m, unsigned flags) {
  char *s = NULL;
  size_t n = 0;
  cj_status st = cj_print_module(m, flags, &s, &n);
  CHECK_MSG(st == NULL, "print failed: %s", cj_status_message(st));
  cj_status_free(st);
  return s;
}

/* text -> print must give `want` exactly; and the printout (pretty, generic, with locations) must
 * read back to the same module */
static void expect_print_at(const char *text, const char *want, int line) {
  cj_module *m = parse_ok_at(text, line);
  if (!m) return;
  cj_status vst = cj_verify_module(m);
  CHECK_MSG(vst == NULL, "line %d: verify: %s", line, cj_status_message(vst));
  cj_status_free(vst);
  char *s = print_mod(m, 0);
  if (want) CHECK_MSG(s && strcmp(s, want) == 0, "line %d: printed\n%s\nwanted\n%s", line, s, want);
  unsigned flags[3] = {0, CJ_PRINT_GENERIC, CJ_PRINT_LOCS};
  for (int k = 0; k < 3; k++) {
    char *p1 = print_mod(m, flags[k]);
    cj_module *m2 = NULL;
    cj_status st = cj_parse_mlir_text(p1, strlen(p1), "t2.mlir", &m2);
    CHECK_MSG(st == NULL, "line %d: re-parse (flags %u): %s\n%s", line, flags[k],
              cj_status_message(st), p1);
    cj_status_free(st);
    if (m2) {
      char *p2 = print_mod(m2, flags[k] & ~(unsigned)CJ_PRINT_GENERIC);
      char *ref = flags[k] & CJ_PRINT_GENERIC ? s : p1;
      CHECK_MSG(p2 && ref && strcmp(ref, p2) == 0,
                "line %d: round trip (flags %u) differs:\n%s\nvs\n%s", line, flags[k], ref, p2);
      free(p2);
    }
    cj_module_free(m2);
    free(p1);
  }
  free(s);
  cj_module_free(m);
}
#define expect_print(text, want) expect_print_at((text), (want), __LINE__)
#define roundtrip(text) expect_print_at((text), NULL, __LINE__)

static cj_op *first_op(cj_module *m, const char *func) {
  cj_op *f = cj_module_lookup_symbol(m, func);
  cj_block *b = f ? cj_func_body(f) : NULL;
  return b ? b->first : NULL;
}

static cj_op *nth_op(cj_module *m, const char *func, int n) {
  cj_op *op = first_op(m, func);
  while (op && n-- > 0) op = op->next;
  return op;
}

static const cj_attr *value_of(cj_module *m, const char *func, int n) {
  cj_op *op = nth_op(m, func, n);
  return op ? cj_op_attr(op, "value") : NULL;
}

/* the bits of a dense attribute's element i */
static uint64_t dense_bits(const cj_attr *a, int64_t i) {
  if (!a || a->kind != CJ_ATTR_DENSE) return 0xDEADBEEF;
  int eb = cj_dtype_bytes(a->dense.type->dtype);
  if (a->dense.splat) i = 0;
  uint64_t v = 0;
  memcpy(&v, (const char *)a->dense.data + (size_t)i * (size_t)eb, (size_t)(eb > 8 ? 8 : eb));
  return v;
}

static char *attr_str(const cj_attr *a) {
  char *s = NULL;
  size_t n = 0;
  cj_status st = cj_print_attr(a, &s, &n);
  CHECK(st == NULL);
  cj_status_free(st);
  return s;
}

static char *type_str(const cj_type *t) {
  char *s = NULL;
  size_t n = 0;
  cj_status st = cj_print_type(t, &s, &n);
  CHECK(st == NULL);
  cj_status_free(st);
  return s;
}

/* ---- locations as JAX prints them (lowered.as_text(debug_info=True)) ---- */

static const char *jax_dump =
    "#loc = loc(unknown)\n"
    "#loc1 = loc(\"x\")\n"
    "module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {\n"
    "  func.func public @main(%arg0: tensor<3xf32> loc(\"x\")) -> (tensor<3xf32> {jax.result_info "
    "= \"\"}) {\n"
    "    %0 = stablehlo.sine %arg0 : tensor<3xf32> loc(#loc7)\n"
    "    %1 = stablehlo.add %0, %arg0 : tensor<3xf32> loc(#loc8)\n"
    "    %2 = stablehlo.multiply %1, %1 : tensor<3xf32> loc(#loc9)\n"
    "    return %2 : tensor<3xf32> loc(#loc)\n"
    "  } loc(#loc)\n"
    "} loc(#loc)\n"
    "#loc2 = loc(\"/tmp/t.py\":5:9)\n"
    "#loc3 = loc(\"/tmp/t.py\":8:0)\n"
    "#loc4 = loc(\"f\"(#loc2))\n"
    "#loc5 = loc(\"<module>\"(#loc3))\n"
    "#loc6 = loc(callsite(#loc4 at #loc5))\n"
    "#loc7 = loc(\"jit(f)/jit(main)/sin\"(#loc6))\n"
    "#loc8 = loc(\"jit(f)/jit(main)/add\"(#loc6))\n"
    "#loc9 = loc(fused<\"CSE\">[#loc7, #loc8, \"/tmp/t.py\":9:1])\n";

static void test_locations(void) {
  cj_module *m = parse_ok(jax_dump);
  if (!m) return;
  CHECK(m->loc && m->loc->kind == CJ_ATTR_LOC && m->loc->loc.lk == CJ_LOC_UNKNOWN);
  CHECK_EQ_STR(m->name, "jit_f");
  cj_op *f = cj_module_main(m);
  CHECK(f && f->loc && f->loc->loc.lk == CJ_LOC_UNKNOWN);
  cj_block *b = f ? cj_func_body(f) : NULL;
  CHECK(b && b->args[0].loc && b->args[0].loc->loc.lk == CJ_LOC_NAME);
  if (b && b->args[0].loc) CHECK_EQ_STR(b->args[0].loc->loc.name, "x");
  cj_op *sine = b ? b->first : NULL;
  CHECK(sine && sine->kind == CJ_OP_SINE);
  /* op->pos is where the op was read */
  CHECK(sine && sine->pos.line == 5 && sine->pos.col == 5);
  if (sine) CHECK_EQ_STR(sine->pos.file, "t.mlir");
  const cj_attr *l = sine ? sine->loc : NULL;
  CHECK(l && l->loc.lk == CJ_LOC_NAME && l->loc.n == 1);
  if (l && l->loc.n == 1) {
    CHECK_EQ_STR(l->loc.name, "jit(f)/jit(main)/sin");
    const cj_attr *cs = l->loc.children[0];
    CHECK(cs->loc.lk == CJ_LOC_CALLSITE && cs->loc.n == 2);
    const cj_attr *callee = cs->loc.children[0], *caller = cs->loc.children[1];
    CHECK(callee->loc.lk == CJ_LOC_NAME && !strcmp(callee->loc.name, "f"));
    CHECK(callee->loc.children[0]->loc.lk == CJ_LOC_FILE);
    CHECK(callee->loc.children[0]->loc.line == 5 && callee->loc.children[0]->loc.col == 9);
    CHECK_EQ_STR(callee->loc.children[0]->loc.name, "/tmp/t.py");
    CHECK(caller->loc.lk == CJ_LOC_NAME && caller->loc.children[0]->loc.line == 8);
  }
  cj_op *mul = sine && sine->next ? sine->next->next : NULL;
  const cj_attr *fu = mul ? mul->loc : NULL;
  CHECK(fu && fu->loc.lk == CJ_LOC_FUSED && fu->loc.n == 3 && fu->loc.metadata &&
        fu->loc.metadata->kind == CJ_ATTR_STRING);
  if (fu && fu->loc.n == 3) CHECK(fu->loc.children[2]->loc.lk == CJ_LOC_FILE);
  /* the error message of an op names its text position */
  cj_status st = cj_op_error(sine, CJ_INVALID_ARGUMENT, "boom");
  CHECK_EQ_STR(cj_status_message(st), "stablehlo.sine at t.mlir:5:5: boom");
  cj_status_free(st);
  /* printed with locations (inline), it reads back the same */
  char *s = print_mod(m, CJ_PRINT_LOCS);
  CHECK_CONTAINS(s,
                 "%0 = stablehlo.sine %arg0 : tensor<3xf32> "
                 "loc(\"jit(f)/jit(main)/sin\"(callsite(\"f\"(\"/tmp/t.py\":5:9) at "
                 "\"<module>\"(\"/tmp/t.py\":8:0))))");
  CHECK_CONTAINS(s, "loc(fused<\"CSE\">[");
  CHECK_CONTAINS(s, "%arg0: tensor<3xf32> loc(\"x\")");
  CHECK_CONTAINS(s, "} loc(unknown)\n");
  free(s);
  /* without locations they are not printed */
  s = print_mod(m, 0);
  CHECK(s && !strstr(s, "loc("));
  free(s);
  cj_module_free(m);
  roundtrip(jax_dump);

  /* other location forms */
  roundtrip(
      "func.func @f(%a: tensor<f32>) -> tensor<f32> {\n"
      "  %0 = stablehlo.abs %a : tensor<f32> loc(\"a.py\":1:2 to 3:4)\n"
      "  %1 = stablehlo.abs %0 : tensor<f32> loc(fused[\"a\", \"b\"])\n"
      "  %2 = stablehlo.abs %1 : tensor<f32> loc(\"only a name\")\n"
      "  %3 = stablehlo.abs %2 : tensor<f32> loc(callsite(\"f\"(\"a.py\":1:2 to :9) at "
      "callsite(\"g\"(\"b.py\":3:4) at \"c.py\":5:6)))\n"
      "  return %3 : tensor<f32>\n"
      "}\n");
  /* a location alias used but never defined */
  parse_err("func.func @f() {\n  return loc(#loc3)\n}\n",
            "t.mlir:2:14: undefined location alias '#loc3'");
  /* a location alias that is not a location */
  parse_err("#a = 1 : i32\nfunc.func @f() {\n  return loc(#a)\n}\n", "'#a' is not a location");
  /* alias definitions must not refer forward */
  parse_err("#l1 = loc(callsite(#l2 at #l2))\n#l2 = loc(unknown)\n",
            "undefined location alias '#l2'");
  parse_err("func.func @f() {\n  return loc(\"a\":1:2:3)\n}\n", "expected ')' to end the location");
}

/* ---- generic text as go-xla (gomlx/stablehlo) writes it ---- */

static void test_goxla(void) {
  const char *t =
      "module @test_program {\n"
      "func.func @main(%lhs: tensor<f64>, %rhs: tensor<2x3xf32>) -> (tensor<f64>, tensor<3xf32>) "
      "{\n"
      "  %0 = \"stablehlo.constant\"(){value = dense<1.0> : tensor<f64>} : () -> tensor<f64>\n"
      "  %1 = \"stablehlo.add\"(%lhs, %0) : (tensor<f64>, tensor<f64>) -> tensor<f64>\n"
      "  %2 = \"stablehlo.constant\"() { value = dense<0.0> : tensor<f32> } : () -> tensor<f32>\n"
      "  %3 = \"stablehlo.reduce\"(%rhs, %2) ({\n"
      "    ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"
      "      %4 = \"stablehlo.maximum\"(%x, %y) : (tensor<f32>, tensor<f32>) -> tensor<f32>\n"
      "      \"stablehlo.return\"(%4) : (tensor<f32>) -> ()\n"
      "  }) {\n"
      "    dimensions = array<i64: 0>\n"
      "  } : (tensor<2x3xf32>, tensor<f32>) -> tensor<3xf32>\n"
      "  %5 = \"stablehlo.broadcast_in_dim\"(%2) {\n"
      "    broadcast_dimensions = array<i64>\n"
      "  } : (tensor<f32>) -> tensor<2x3xf32>\n"
      "  %6 = \"stablehlo.batch_norm_inference\"(%rhs, %3, %3, %3, %3) {\n"
      "    epsilon = 1e-05 : f32,\n"
      "    feature_index = 1 : i64\n"
      "  } : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> "
      "tensor<2x3xf32>\n"
      "  \"func.return\"(%1, %3) : (tensor<f64>, tensor<3xf32>) -> ()\n"
      "}\n"
      "}\n";
  cj_module *m = parse_ok(t);
  if (m) {
    cj_block *b = cj_func_body(cj_module_main(m));
    CHECK(b && b->nargs == 2);
    if (b) {
      CHECK_EQ_STR(b->args[0].name, "lhs");
      CHECK(b->first->kind == CJ_OP_CONSTANT);
      const cj_attr *v = cj_op_attr(b->first, "value");
      CHECK(v && v->kind == CJ_ATTR_DENSE && cj_dense_get_f64(v, 0) == 1.0);
      cj_op *red = b->first->next->next->next;
      CHECK(red && red->kind == CJ_OP_REDUCE && red->nregions == 1);
      int64_t d[4], n = 0;
      CHECK(red && cj_op_get_i64s(red, "dimensions", d, 4, &n) && n == 1 && d[0] == 0);
      cj_op *bn = red ? red->next->next : NULL;
      const cj_attr *eps = bn ? cj_op_attr(bn, "epsilon") : NULL;
      CHECK(eps && eps->kind == CJ_ATTR_FLOAT && eps->f.v == (double)1e-05f);
    }
    cj_status st = cj_verify_module(m);
    CHECK_MSG(st == NULL, "%s", cj_status_message(st));
    cj_status_free(st);
    char *s = print_mod(m, 0);
    /* printed back in the pretty form, named the MLIR way */
    CHECK_CONTAINS(s,
                   "func.func @main(%arg0: tensor<f64>, %arg1: tensor<2x3xf32>) -> (tensor<f64>, "
                   "tensor<3xf32>) {\n");
    CHECK_CONTAINS(s, "%cst = stablehlo.constant dense<1.000000e+00> : tensor<f64>\n");
    CHECK_CONTAINS(s,
                   "%1 = stablehlo.reduce(%arg1 init: %cst_0) applies stablehlo.maximum across "
                   "dimensions = [0] : (tensor<2x3xf32>, tensor<f32>) -> tensor<3xf32>\n");
    CHECK_CONTAINS(
        s,
        "%2 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<2x3xf32>\n");
    CHECK_CONTAINS(s, "{epsilon = 9.99999974E-6 : f32, feature_index = 1 : i64}");
    CHECK_CONTAINS(s, "    return %0, %1 : tensor<f64>, tensor<3xf32>\n");
    free(s);
    cj_module_free(m);
  }
  roundtrip(t);
  /* a function may end with stablehlo.return, as go-xla wrote it */
  cj_module *m2 = parse_ok(
      "func.func @main(%a: tensor<i32>) -> tensor<i32> {\n"
      "  \"stablehlo.return\"(%a) : (tensor<i32>) -> ()\n}\n");
  if (m2) CHECK(first_op(m2, "main") && first_op(m2, "main")->kind == CJ_OP_RETURN);
  cj_module_free(m2);
}

/* ---- dense literals ---- */

static void test_dense(void) {
  const char *t =
      "func.func @c() {\n"
      "  %0 = stablehlo.constant dense<1> : tensor<2x3xi32>\n"                    /* 0 splat */
      "  %1 = stablehlo.constant dense<[[1, -2], [3, 4]]> : tensor<2x2xi8>\n"     /* 1 */
      "  %2 = stablehlo.constant dense<true> : tensor<4xi1>\n"                    /* 2 */
      "  %3 = stablehlo.constant dense<(1.5, -2.0)> : tensor<complex<f32>>\n"     /* 3 */
      "  %4 = stablehlo.constant dense<0xFF800000> : tensor<f32>\n"               /* 4 -inf */
      "  %5 = stablehlo.constant dense<\"0x0100000002000000\"> : tensor<2xi32>\n" /* 5 blob */
      "  %6 = stablehlo.constant dense<[0x7F80, 1.0, -0.0]> : tensor<3xbf16>\n"   /* 6 */
      "  %7 = stablehlo.constant dense<[(0x7FC00000, 1.0), (2.5, 0x80000000)]> : "
      "tensor<2xcomplex<f32>>\n"
      "  %8 = stablehlo.constant dense<> : tensor<0x3xf32>\n"                  /* 8 */
      "  %9 = stablehlo.constant dense<18446744073709551615> : tensor<ui64>\n" /* 9 */
      "  %10 = stablehlo.constant dense<-9223372036854775808> : tensor<i64>\n" /* 10 */
      "  %11 = stablehlo.constant dense<[true, false, 1, 0]> : tensor<4xi1>\n" /* 11 */
      "  %12 = stablehlo.constant dense<\"0x0000803F\"> : tensor<3xf32>\n"     /* 12 hex splat */
      "  %13 = stablehlo.constant dense<[[]]> : tensor<1x0xi32>\n"             /* 13 */
      "  %14 = stablehlo.constant dense<-7> : tensor<i4>\n"                    /* 14 */
      "  %15 = stablehlo.constant dense<255> : tensor<i8>\n"                   /* 15 */
      "  %16 = stablehlo.constant dense<[1.0e+00, 2.5E-1,\n"
      "      3.0]> : tensor<3xf64>\n"                                 /* 16 multi-line */
      "  %17 = stablehlo.constant dense<0x7F> : tensor<f8E4M3FN>\n"   /* 17 */
      "  %18 = stablehlo.constant dense<\"0x0100\"> : tensor<2xi1>\n" /* 18 */
      "  return\n"
      "}\n";
  cj_module *m = parse_ok(t);
  if (!m) return;
  const cj_attr *a;
  a = value_of(m, "c", 0);
  CHECK(a && a->dense.splat && a->dense.nbytes == 4 && cj_dense_get_i64(a, 5) == 1);
  a = value_of(m, "c", 1);
  CHECK(a && !a->dense.splat && a->dense.nbytes == 4 && cj_dense_get_i64(a, 1) == -2 &&
        cj_dense_get_i64(a, 3) == 4);
  a = value_of(m, "c", 2);
  CHECK(a && a->dense.splat && dense_bits(a, 0) == 1);
  a = value_of(m, "c", 3);
  CHECK(a && a->dense.nbytes == 8);
  if (a) {
    float re, im;
    memcpy(&re, a->dense.data, 4);
    memcpy(&im, (const char *)a->dense.data + 4, 4);
    CHECK(re == 1.5f && im == -2.0f);
  }
  CHECK(dense_bits(value_of(m, "c", 4), 0) == 0xFF800000u);
  a = value_of(m, "c", 5);
  CHECK(a && !a->dense.splat && cj_dense_get_i64(a, 0) == 1 && cj_dense_get_i64(a, 1) == 2);
  a = value_of(m, "c", 6);
  CHECK(dense_bits(a, 0) == 0x7F80 && dense_bits(a, 1) == 0x3F80 && dense_bits(a, 2) == 0x8000);
  a = value_of(m, "c", 7);
  if (a) {
    uint32_t w[4];
    memcpy(w, a->dense.data, 16);
    CHECK(w[0] == 0x7FC00000u && w[1] == 0x3F800000u && w[2] == 0x40200000u && w[3] == 0x80000000u);
  }
  a = value_of(m, "c", 8);
  CHECK(a && a->dense.nbytes == 0 && cj_dense_num_elements(a) == 0);
  CHECK(dense_bits(value_of(m, "c", 9), 0) == UINT64_MAX);
  CHECK(cj_dense_get_i64(value_of(m, "c", 10), 0) == INT64_MIN);
  a = value_of(m, "c", 11);
  CHECK(a && dense_bits(a, 0) == 1 && dense_bits(a, 1) == 0 && dense_bits(a, 2) == 1);
  a = value_of(m, "c", 12);
  CHECK(a && a->dense.splat && cj_dense_get_f64(a, 2) == 1.0);
  CHECK(cj_dense_get_i64(value_of(m, "c", 14), 0) == -7);
  CHECK(cj_dense_get_i64(value_of(m, "c", 15), 0) == -1); /* signless: 255 is the bits of -1 */
  a = value_of(m, "c", 16);
  CHECK(a && cj_dense_get_f64(a, 1) == 0.25 && cj_dense_get_f64(a, 2) == 3.0);
  CHECK(dense_bits(value_of(m, "c", 17), 0) == 0x7F);
  a = value_of(m, "c", 18);
  CHECK(a && dense_bits(a, 0) == 1 && dense_bits(a, 1) == 0);
  cj_module_free(m);

  /* printed as upstream prints them */
  expect_print(
      "func.func @c() -> (tensor<2x2xf32>, tensor<3xbf16>, tensor<2xcomplex<f64>>, tensor<4xi32>, "
      "tensor<f32>, tensor<i1>) {\n"
      "  %0 = stablehlo.constant dense<[[1.0, 1.0], [1.0, 1.0]]> : tensor<2x2xf32>\n"
      "  %1 = stablehlo.constant dense<[0.1, 1.3671875, 0x7FC0]> : tensor<3xbf16>\n"
      "  %2 = stablehlo.constant dense<[(1.0, 0.54030230586813977), (0x7FF0000000000000, -0.0)]> : "
      "tensor<2xcomplex<f64>>\n"
      "  %3 = stablehlo.constant dense<\"0x01000000020000000300000004000000\"> : tensor<4xi32>\n"
      "  %4 = stablehlo.constant dense<123456789.0> : tensor<f32>\n"
      "  %5 = stablehlo.constant dense<false> : tensor<i1>\n"
      "  return %0, %1, %2, %3, %4, %5 : tensor<2x2xf32>, tensor<3xbf16>, tensor<2xcomplex<f64>>, "
      "tensor<4xi32>, tensor<f32>, tensor<i1>\n"
      "}\n",
      "module {\n"
      "  func.func @c() -> (tensor<2x2xf32>, tensor<3xbf16>, tensor<2xcomplex<f64>>, "
      "tensor<4xi32>, tensor<f32>, tensor<i1>) {\n"
      "    %cst = stablehlo.constant dense<1.000000e+00> : tensor<2x2xf32>\n"
      "    %cst_0 = stablehlo.constant dense<[1.000980e-01, 1.367190e+00, 0x7FC0]> : "
      "tensor<3xbf16>\n"
      "    %cst_1 = stablehlo.constant dense<[(1.000000e+00,0.54030230586813977), "
      "(0x7FF0000000000000,-0.000000e+00)]> : tensor<2xcomplex<f64>>\n"
      "    %c = stablehlo.constant dense<[1, 2, 3, 4]> : tensor<4xi32>\n"
      "    %cst_2 = stablehlo.constant dense<0x4CEB79A3> : tensor<f32>\n"
      "    %c_3 = stablehlo.constant dense<false> : tensor<i1>\n"
      "    return %cst, %cst_0, %cst_1, %c, %cst_2, %c_3 : tensor<2x2xf32>, tensor<3xbf16>, "
      "tensor<2xcomplex<f64>>, tensor<4xi32>, tensor<f32>, tensor<i1>\n"
      "  }\n"
      "}\n");
  /* more than 100 elements are printed as a hex blob */
  {
    char buf[4096];
    int k = snprintf(buf, sizeof buf,
                     "func.func @c() -> tensor<101xi8> {\n  %%0 = stablehlo.constant dense<[");
    for (int i = 0; i < 101; i++)
      k += snprintf(buf + k, sizeof buf - (size_t)k, "%s%d", i ? ", " : "", i);
    snprintf(buf + k, sizeof buf - (size_t)k,
             "]> : tensor<101xi8>\n  return %%0 : tensor<101xi8>\n}\n");
    cj_module *mm = parse_ok(buf);
    char *s = mm ? print_mod(mm, 0) : NULL;
    if (s) CHECK_CONTAINS(s, "dense<\"0x000102030405060708090A0B0C");
    free(s);
    cj_module_free(mm);
    roundtrip(buf);
  }
  /* all the narrow float formats, rounded once (nearest, ties to even) */
  struct {
    const char *type, *lit;
    uint64_t bits;
  } fl[] = {
      {"bf16", "1.00390625", 0x3F80},      /* exactly halfway between 1 and 1+2^-7: even */
      {"bf16", "1.0039062500001", 0x3F81}, /* just above the midpoint */
      {"bf16", "1.01171875", 0x3F82},      /* halfway between 0x3F81 and 0x3F82: even */
      {"bf16", "3.4e38", 0x7F80},          /* above the largest finite bf16 after rounding */
      {"f16", "65520.0", 0x7C00},          /* rounds to infinity */
      {"f16", "65519.99", 0x7BFF},
      {"f16", "5.9604644775390625e-8", 0x0001},  /* smallest subnormal */
      {"f16", "2.98023223876953125e-8", 0x0000}, /* half of it: ties to even (zero) */
      {"f16", "2.9802322387695313e-8", 0x0001},  /* slightly above: rounds up */
      {"f8E4M3FN", "448.0", 0x7E},
      {"f8E4M3FN", "464.0", 0x7E}, /* ties to even (0x7E); 0x7F is NaN */
      {"f8E4M3FN", "500.0", 0x7F}, /* overflow: NaN (no infinity) */
      {"f8E5M2", "57344.0", 0x7B},
      {"f8E5M2", "1.0e6", 0x7C},    /* infinity */
      {"f8E4M3FNUZ", "-0.0", 0x00}, /* no negative zero */
      {"f8E5M2FNUZ", "1.0", 0x40},
      {"f8E4M3B11FNUZ", "1.0", 0x58},
      {"f8E4M3", "1.0", 0x38},
      {"f8E3M4", "1.0", 0x30},
      {"f8E8M0FNU", "1.0", 0x7F},
      {"f4E2M1FN", "6.0", 0x7},
      {"f4E2M1FN", "100.0", 0x7}, /* saturates */
      {"f4E2M1FN", "-0.25", 0x8}, /* halfway between -0 and -0.5: ties to even (-0) */
      {"f6E2M3FN", "7.5", 0x1F},
      {"f6E3M2FN", "28.0", 0x1F},
      {"tf32", "1.0", 0x3F800000},
      {"f64", "0.1", 0x3FB999999999999A},
      {"f32", "0.1", 0x3DCCCCCD},
  };
  for (size_t i = 0; i < sizeof fl / sizeof fl[0]; i++) {
    char buf[512];
    snprintf(buf, sizeof buf,
             "func.func @c() -> tensor<%s> {\n  %%0 = stablehlo.constant dense<%s> : tensor<%s>\n"
             "  return %%0 : tensor<%s>\n}\n",
             fl[i].type, fl[i].lit, fl[i].type, fl[i].type);
    cj_module *mm = parse_ok(buf);
    uint64_t got = mm ? dense_bits(value_of(mm, "c", 0), 0) : 0;
    CHECK_MSG(got == fl[i].bits, "dense<%s> : tensor<%s>: got 0x%llX, want 0x%llX", fl[i].lit,
              fl[i].type, (unsigned long long)got, (unsigned long long)fl[i].bits);
    cj_module_free(mm);
    roundtrip(buf);
  }
}

/* ---- types ---- */

static void test_types(void) {
  cj_module *m = cj_module_create("types");
  static const char *const ok[] = {
      "i1",
      "i2",
      "i4",
      "i8",
      "i16",
      "i32",
      "i64",
      "ui1",
      "ui2",
      "ui4",
      "ui8",
      "ui16",
      "ui32",
      "ui64",
      "bf16",
      "f16",
      "f32",
      "f64",
      "tf32",
      "f8E4M3FN",
      "f8E5M2",
      "f8E4M3FNUZ",
      "f8E5M2FNUZ",
      "f8E4M3B11FNUZ",
      "f8E4M3",
      "f8E3M4",
      "f8E8M0FNU",
      "f4E2M1FN",
      "f6E2M3FN",
      "f6E3M2FN",
      "complex<f32>",
      "complex<f64>",
      "index",
      "none",
      "!stablehlo.token",
      "si1",
      "tensor<f32>",
      "tensor<2x0x3xi4>",
      "tensor<?x4xf32>",
      "tensor<*xf32>",
      "tensor<?x4xf32, #stablehlo.bounds<8, ?>>",
      "tensor<4x!quant.uniform<i8:f32, 0.0039215482917486456:-128>>",
      "!quant.uniform<i8<-127:127>:f32:1, {1.000000e-01:-30,5.000000e-01:-20}>",
      "!quant.uniform<u8:f16, 2.000000e+00>",
      "!quant.uniform<i32:f32, 1.5377370458777768E-5>",
      "tuple<tensor<2xf64>, tuple<tensor<i64>>>",
      "tuple<>",
      "(tensor<f32>, i32) -> tensor<f32>",
      "() -> ()",
      "(i32) -> (i32, i32)",
      "() -> ((i32) -> i32)",
      "!sdy.something<[\"a\"=2], x>",
      "tensor<16xf32, #sparse_tensor.encoding<{map = (d0) -> (d0 : compressed)}>>",
  };
  for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
    const cj_type *t = NULL;
    cj_status st = cj_parse_type_text(m, ok[i], strlen(ok[i]), &t);
    CHECK_MSG(st == NULL && t, "type %s: %s", ok[i], cj_status_message(st));
    cj_status_free(st);
    if (!t) continue;
    char *s = type_str(t);
    CHECK_MSG(s && strcmp(s, ok[i]) == 0, "type %s printed as %s", ok[i], s);
    /* and it reads back to the same (interned) type */
    const cj_type *t2 = NULL;
    st = cj_parse_type_text(m, s, strlen(s), &t2);
    CHECK(st == NULL && t2 == t);
    cj_status_free(st);
    free(s);
  }
  /* details */
  const cj_type *t = NULL;
  cj_status st = cj_parse_type_text(
      m, "tensor<?x4xf32, #stablehlo.type_extensions<bounds = [8, ?]>>",
      strlen("tensor<?x4xf32, #stablehlo.type_extensions<bounds = [8, ?]>>"), &t);
  CHECK(st == NULL && t && t->kind == CJ_TYPE_TENSOR && t->bounds && t->bounds[0] == 8 &&
        t->bounds[1] == CJ_DYN && t->dims[0] == CJ_DYN && t->num_elements == -1);
  cj_status_free(st);
  st = cj_parse_type_text(m, "!quant.uniform<i8:f32:0, {0.1:-30,0.5:-20}>",
                          strlen("!quant.uniform<i8:f32:0, {0.1:-30,0.5:-20}>"), &t);
  CHECK(st == NULL && t && t->kind == CJ_TYPE_QUANT && t->quant->axis == 0 &&
        t->quant->nscales == 2 && t->quant->zero_points[1] == -20 && t->quant->scales[0] == 0.1 &&
        t->quant->storage == CJ_S8 && t->quant->storage_min == -128);
  cj_status_free(st);
  /* type errors */
  static const struct {
    const char *text, *msg;
  } bad[] = {
      {"tensor<4xfoo>", "1:10: unknown type 'foo'"},
      {"tensor<4x>", "expected a type, found '>'"},
      {"tensor<4", "expected 'x' in dimension list"},
      {"tensor<2x3xf32, #stablehlo.bounds<1>>",
       "bounds must have one entry per dimension (rank 2)"},
      {"complex<f16>", "unsupported complex element type"},
      {"!quant.uniform<f32:f32, 1.0>", "invalid quantized storage type 'f32'"},
      {"!quant.uniform<i8:i8, 1.0>", "expected a float expressed type"},
      {"!quant.uniform<i8:f32:0, 1.0>", "expected '{' for per-axis scales"},
      {"!undefined_alias", "undefined type alias '!undefined_alias'"},
      {"tensor<*x4xf32>", "expected a type, found '4'"},
      {"(i32 -> i32", "expected ')', found '->'"},
      {"f32 f32", "unexpected 'f32' after the type"},
      {"tensor<99999999999999999999xf32>", "dimension size too large"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    st = cj_parse_type_text(m, bad[i].text, strlen(bad[i].text), &t);
    CHECK_MSG(st && strstr(cj_status_message(st), bad[i].msg), "type %s: got \"%s\", want \"%s\"",
              bad[i].text, st ? cj_status_message(st) : "(ok)", bad[i].msg);
    cj_status_free(st);
  }
  /* a raw NUL byte inside a dialect type's body */
  static const char nul[] = "!foo.t<a\0b>";
  st = cj_parse_type_text(m, nul, sizeof nul - 1, &t);
  CHECK(st && strstr(cj_status_message(st), "a NUL byte in a dialect attribute or type"));
  cj_status_free(st);
  /* nesting is bounded */
  char deep[4000];
  size_t k = 0;
  for (int i = 0; i < 400; i++) k += (size_t)snprintf(deep + k, sizeof deep - k, "tuple<");
  st = cj_parse_type_text(m, deep, k, &t);
  CHECK(st && strstr(cj_status_message(st), "nesting too deep"));
  cj_status_free(st);
  cj_module_free(m);
}

/* ---- attributes ---- */

static void test_attrs(void) {
  cj_module *m = cj_module_create("attrs");
  static const char *const ok[] = {
      "1 : i64",
      "-5 : i32",
      "255 : ui8",
      "18446744073709551615 : ui64",
      "true",
      "false",
      "unit",
      "1.000000e-03 : f32",
      "\"a\\22b\\0A\"",
      "@foo",
      "@foo::@bar",
      "@\"a b\"",
      "[1 : i64, \"x\"]",
      "{a = 1 : i32, b, c = {d = \"e\"}}",
      "array<i64: 1, 2, 3>",
      "array<i64>",
      "array<i1: true, false>",
      "array<f32: 1.500000e+00>",
      "dense<[1, 2]> : tensor<2xi64>",
      "tensor<f32>",
      "#stablehlo<comparison_direction GT>",
      "#chlo<comparison_type TOTALORDER>",
      "#stablehlo<precision HIGHEST>",
      "#stablehlo<fft_type IRFFT>",
      "#stablehlo.result_accuracy_mode<TOLERANCE>",
      "#stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], "
      "index_vector_dim = 1>",
      "#stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], "
      "input_batching_dims = [2], scatter_indices_batching_dims = [0], "
      "scatter_dims_to_operand_dims = [0], index_vector_dim = 1>",
      "#stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], "
      "lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>",
      "#stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>",
      "#stablehlo.conv<[f, 1, 0, b]x[o, i, 0, 1]->[0, b, 1, f]>",
      "#stablehlo.channel_handle<handle = 1, type = 2>",
      "#stablehlo.dot_algorithm<lhs_precision_type = tf32, rhs_precision_type = tf32, "
      "accumulation_type = f32, lhs_component_count = 1, rhs_component_count = 1, "
      "num_primitive_operations = 3, allow_imprecise_accumulation = false>",
      "#stablehlo.result_accuracy<atol = 1.000000e-05, rtol = 0.000000e+00, ulps = 2, mode = "
      "#stablehlo.result_accuracy_mode<TOLERANCE>>",
      "#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 1, "
      "operand_tuple_indices = []>",
      "#stablehlo.bounds<4, ?>",
      "#chlo.ragged_dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], "
      "lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1], lhs_ragged_dimensions = "
      "[1], rhs_group_dimensions = [0]>",
      "#sdy.sharding<@mesh, [{\"a\"}, {}]>",
      "#stablehlo.replica_group_mesh_axes<mesh = @mesh, axes = [#stablehlo.axis_ref<name = \"x\", "
      "sub_axis_info = (1)2>]>",
      "affine_map<(d0) -> (d0)>",
      "loc(\"f.py\":1:2)",
      "(i32) -> i32",
  };
  /* the spelling each is printed back in (NULL = the same) */
  static const char *const printed[] = {
      [32] =
          "#stablehlo.result_accuracy<atol = 1.000000e-05, ulps = 2, mode = "
          "#stablehlo.result_accuracy_mode<TOLERANCE>>",
  };
  for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
    const cj_attr *a = NULL;
    cj_status st = cj_parse_attr_text(m, ok[i], strlen(ok[i]), &a);
    CHECK_MSG(st == NULL && a, "attr %s: %s", ok[i], cj_status_message(st));
    cj_status_free(st);
    if (!a) continue;
    char *s = attr_str(a);
    const char *want = i < sizeof printed / sizeof printed[0] && printed[i] ? printed[i] : ok[i];
    CHECK_MSG(s && strcmp(s, want) == 0, "attr %s printed as %s", ok[i], s);
    const cj_attr *a2 = NULL;
    st = cj_parse_attr_text(m, s, strlen(s), &a2);
    CHECK_MSG(st == NULL && cj_attr_equal(a, a2), "attr %s does not read back equal", s);
    cj_status_free(st);
    free(s);
  }
  /* structure */
  const cj_attr *a = NULL;
  cj_status st =
      cj_parse_attr_text(m, "#stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>",
                         strlen("#stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>"), &a);
  CHECK(st == NULL && a && a->kind == CJ_ATTR_STRUCT && a->st.sk == CJ_SK_CONV);
  if (a) {
    int64_t v;
    CHECK(cj_attr_get_i64(cj_attr_field(a, CJ_SK_CONV, CJ_SF_CONV_input_feature_dimension), &v) &&
          v == 3);
    CHECK(cj_attr_get_i64(cj_attr_field(a, CJ_SK_CONV, CJ_SF_CONV_kernel_output_feature_dimension),
                          &v) &&
          v == 3);
    int64_t sp[4], n;
    CHECK(cj_attr_get_i64s(cj_attr_field(a, CJ_SK_CONV, CJ_SF_CONV_kernel_spatial_dimensions), sp,
                           4, &n) &&
          n == 2 && sp[0] == 0 && sp[1] == 1);
  }
  cj_status_free(st);
  st = cj_parse_attr_text(
      m, "#stablehlo.conv<raw input_batch_dimension = 0, input_feature_dimension = 1>",
      strlen("#stablehlo.conv<raw input_batch_dimension = 0, input_feature_dimension = 1>"), &a);
  CHECK(st == NULL && a && a->st.sk == CJ_SK_CONV);
  cj_status_free(st);
  st = cj_parse_attr_text(m, "#stablehlo.comparison_direction<LT>",
                          strlen("#stablehlo.comparison_direction<LT>"), &a);
  CHECK(st == NULL && a && a->kind == CJ_ATTR_ENUM && a->en.ek == CJ_EK_COMPARISON_DIRECTION &&
        a->en.v == CJ_COMPARISON_DIRECTION_LT);
  cj_status_free(st);
  st = cj_parse_attr_text(m, "{b = 1 : i32, a = 2 : i32, b = 3 : i32}",
                          strlen("{b = 1 : i32, a = 2 : i32, b = 3 : i32}"), &a);
  CHECK(st == NULL && a && a->dict.n == 2 && !strcmp(a->dict.items[0].name, "a") &&
        a->dict.items[1].value->i.v == 3);
  cj_status_free(st);
  st = cj_parse_attr_text(m, "@a::@b::@c", strlen("@a::@b::@c"), &a);
  CHECK(st == NULL && a && a->sym.nnested == 2 && !strcmp(a->sym.nested[1], "c"));
  cj_status_free(st);
  /* attribute errors */
  static const struct {
    const char *text, *msg;
  } bad[] = {
      {"#stablehlo.gather<offset_dims = [1], bogus = 2>",
       "unknown field 'bogus' of #stablehlo.gather; expected one of: `offset_dims`"},
      {"#stablehlo.dot<lhs_batching_dimensions = [], lhs_batching_dimensions = []>",
       "duplicated `lhs_batching_dimensions` entry"},
      {"#stablehlo.conv<[b, 0, f]x[0, i, i]->[b, 0, f]>", "Unexpected dimension i"},
      {"#stablehlo.conv<[b, 0, 0, f]x[0, i, o]->[b, 0, f]>",
       "Duplicate entries for spatial dimension 0"},
      {"#stablehlo.conv<[b, 1, f]x[0, i, o]->[b, 0, f]>",
       "Expected spatial dimensions 0 not specified"},
      {"#stablehlo.conv<[b, 0]x[0, i, o]->[b, 0, f]>", "Expected dimensions b and f not specified"},
      {"#stablehlo<comparison_direction XX>", "expected a comparison_direction value, found 'XX'"},
      {"#undefined", "undefined attribute alias '#undefined'"},
      {"array<tensor<f32>: 1>", "array<...> needs an integer or float element type"},
      {"array<i8: 300>", "integer constant out of range for element type i8"},
      {"300 : i8", "integer constant out of range for type i8"},
      {"-1 : ui8", "integer constant out of range for type ui8"},
      {"2 : i1", "integer constant out of range for type i1"},
      {"1.5 : i32", "float literal needs a float type"},
      {"\"abc", "unterminated string literal"},
      {"\"a\\q\"", "unknown escape in string literal"},
      {"[1 : i64", "expected ',' or ']' in array attribute"},
      {"{a = }", "expected an attribute, found '}'"},
      {"{1 = 2}", "expected an attribute name, found '1'"},
      {"1 : tensor<f32>", "a number attribute needs an integer or float type"},
      {"dense<[1, 2]> : tensor<3xi32>",
       "dense literal has 2 elements in dimension 0, the type has 3"},
      {"dense<[1, 2, 3, 4]> : tensor<3xi32>",
       "dense literal has more than 3 elements in dimension 0"},
      {"dense<[[1], [2]]> : tensor<2xi32>", "dense literal nested deeper than the type's rank 1"},
      {"dense<[1, 2]> : tensor<2x1xi32>", "expected '[' (the type has rank 2)"},
      {"dense<[1 2]> : tensor<2xi32>", "expected ',' or ']' in dense literal"},
      {"dense<256> : tensor<i8>", "1:7: integer constant out of range for element type i8"},
      {"dense<-129> : tensor<i8>", "1:7: integer constant out of range for element type i8"},
      {"dense<-1> : tensor<ui32>", "integer constant out of range for element type ui32"},
      {"dense<2> : tensor<i1>", "expected 'true' or 'false' for an i1 element"},
      {"dense<1.5> : tensor<i32>", "expected an integer for element type i32"},
      {"dense<true> : tensor<f32>", "expected a float for element type f32"},
      {"dense<0x1FFFF> : tensor<bf16>", "hexadecimal float constant out of range for type bf16"},
      {"dense<-0x1> : tensor<f32>", "hexadecimal float literal should not have a leading minus"},
      {"dense<\"0x010203\"> : tensor<2xi16>",
       "elements hex data size is invalid for provided type: 3 bytes for 2 elements of 2 bytes"},
      {"dense<\"0x0G\"> : tensor<i8>", "invalid hex digit in dense literal"},
      {"dense<\"0x012\"> : tensor<i8>", "odd number of hex digits in dense literal"},
      {"dense<> : tensor<2xf32>", "empty dense literal for a type with 2 elements"},
      {"dense<(1.0, 2.0> : tensor<complex<f32>>", "expected ')' to end complex value"},
      {"dense<1.0> : tensor<complex<f32>>", "expected '(' for a complex value"},
      {"dense<[1]> : tensor<i32>", "nested list for a rank-0 tensor"},
      {"dense<[[1]]> : tensor<99999999999x1xi32>",
       "dense literal is too short for the 99999999999 elements of its type"},
      {"dense<1 : tensor<i32>", "expected ':' and a type after dense literal"},
      {"dense<1", "unterminated dense literal"},
      {"dense<1>", "expected ':' and a type after dense literal"},
      {"dense<1> : tuple<>",
       "dense literal needs a tensor type of integer, float or complex elements"},
      {"dense<abc> : tensor<i32>", "expected a number or boolean in dense literal"},
      {"loc(callsite(\"a\" \"b\"))", "expected 'at', found"},
      {"loc(#nope)", "undefined location alias '#nope'"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    st = cj_parse_attr_text(m, bad[i].text, strlen(bad[i].text), &a);
    CHECK_MSG(st && strstr(cj_status_message(st), bad[i].msg), "attr %s: got \"%s\", want \"%s\"",
              bad[i].text, st ? cj_status_message(st) : "(ok)", bad[i].msg);
    cj_status_free(st);
  }
  cj_module_free(m);
}

/* ---- ops: pretty forms the corpus does not print, normalization, naming ---- */

static void test_ops(void) {
  /* every pretty form reads back from its printout (and from the generic printout) */
  roundtrip(
      "func.func @f(%a: tensor<4x4xf32>, %b: tensor<4xi32>, %t: !stablehlo.token, %s: tensor<f32>, "
      "%c: tensor<2xui64>, %in: tensor<1x4x1xf32>, %k: tensor<2x1x1xf32>) -> tensor<4x4xf32> {\n"
      "  %0 = stablehlo.einsum %a, %a, config = \"ab,bc->ac\" : (tensor<4x4xf32>, tensor<4x4xf32>) "
      "-> tensor<4x4xf32>\n"
      "  %1 = stablehlo.unary_einsum %0, config = \"ab->ba\" : (tensor<4x4xf32>) -> "
      "tensor<4x4xf32>\n"
      "  %2 = stablehlo.cholesky %1, lower = true : tensor<4x4xf32>\n"
      "  %3 = stablehlo.dot %2, %2, precision = [DEFAULT, HIGHEST] : (tensor<4x4xf32>, "
      "tensor<4x4xf32>) -> tensor<4x4xf32>\n"
      "  %4 = stablehlo.dot_general %3, %3, batching_dims = [0] x [0], contracting_dims = [1] x "
      "[1], precision = [DEFAULT, DEFAULT], algorithm = <lhs_precision_type = tf32, "
      "rhs_precision_type = tf32, accumulation_type = f32, lhs_component_count = 1, "
      "rhs_component_count = 1, num_primitive_operations = 3, allow_imprecise_accumulation = "
      "false> : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4xf32>\n"
      "  %5 = stablehlo.broadcast %4, sizes = [4] : (tensor<4xf32>) -> tensor<4x4xf32>\n"
      "  %6 = stablehlo.reduce_precision %5, format = e5m10 : tensor<4x4xf32>\n"
      "  %7 = stablehlo.rng %s, %s, %b, distribution = NORMAL : (tensor<f32>, tensor<f32>, "
      "tensor<4xi32>) -> tensor<4x4x4x4xf32>\n"
      "  %8, %9 = stablehlo.rng_bit_generator %c, algorithm = PHILOX : (tensor<2xui64>) -> "
      "(tensor<2xui64>, tensor<4xui64>)\n"
      "  %10 = stablehlo.create_token : !stablehlo.token\n"
      "  %11 = stablehlo.after_all %t, %10 : !stablehlo.token\n"
      "  %12 = stablehlo.replica_id : tensor<ui32>\n"
      "  %13:2 = stablehlo.optimization_barrier %6, %b : tensor<4x4xf32>, tensor<4xi32>\n"
      "  %14 = stablehlo.tuple %13#0, %13#1 : tuple<tensor<4x4xf32>, tensor<4xi32>>\n"
      "  %15 = stablehlo.get_tuple_element %14[0] : (tuple<tensor<4x4xf32>, tensor<4xi32>>) -> "
      "tensor<4x4xf32>\n"
      "  %16 = stablehlo.compare  GE, %15, %15,  TOTALORDER : (tensor<4x4xf32>, tensor<4x4xf32>) "
      "-> tensor<4x4xi1>\n"
      "  %17 = stablehlo.select %16, %15, %15 : tensor<4x4xi1>, tensor<4x4xf32>\n"
      "  %18 = stablehlo.sine %17 {result_accuracy = #stablehlo.result_accuracy<ulps = 2, mode = "
      "#stablehlo.result_accuracy_mode<TOLERANCE>>} : tensor<4x4xf32>\n"
      "  %19 = stablehlo.exponential %18 {result_accuracy = #stablehlo.result_accuracy<mode = "
      "#stablehlo.result_accuracy_mode<DEFAULT>>} : tensor<4x4xf32>\n"
      "  %20 = stablehlo.slice %19 [0:4:2, 1:3] : (tensor<4x4xf32>) -> tensor<2x2xf32>\n"
      "  %i = stablehlo.constant dense<4> : tensor<i32>\n"
      "  %21 = stablehlo.set_dimension_size %19, %i, dim = 0 : (tensor<4x4xf32>, tensor<i32>) -> "
      "tensor<4x4xf32>\n"
      "  %22 = stablehlo.convolution(%in, %k) dim_numbers = [b, 0, f]x[0, i, o]->[b, 0, f], window "
      "= {stride = [1], pad = [[0, 1]], lhs_dilate = [1], rhs_dilate = [1], reverse = [true]} "
      "{batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x1xf32>, "
      "tensor<2x1x1xf32>) -> tensor<1x4x1xf32>\n"
      "  return %21 : tensor<4x4xf32>\n"
      "}\n");
  /* the printout of the forms above (stablehlo-opt style), with defaults elided */
  expect_print(
      "func.func @f(%a: tensor<4x4xf32>, %z: tensor<4xcomplex<f32>>) -> tensor<4x4xf32> {\n"
      "  %0 = stablehlo.exponential %a {result_accuracy = #stablehlo.result_accuracy<mode = "
      "#stablehlo.result_accuracy_mode<DEFAULT>>} : tensor<4x4xf32>\n"
      "  %1 = stablehlo.compare  LT, %0, %a : (tensor<4x4xf32>, tensor<4x4xf32>) -> "
      "tensor<4x4xi1>\n"
      "  %2 = stablehlo.cholesky %0, lower = false : tensor<4x4xf32>\n"
      "  %3 = stablehlo.fft %z, type = FFT, length = [4] : (tensor<4xcomplex<f32>>) -> "
      "tensor<4xcomplex<f32>>\n"
      "  %4 = \"stablehlo.custom_call\"(%2) {call_target_name = \"x y\", has_side_effect = false, "
      "api_version = 1 : i32} : (tensor<4x4xf32>) -> tensor<4x4xf32>\n"
      "  return %4 : tensor<4x4xf32>\n"
      "}\n",
      "module {\n"
      "  func.func @f(%arg0: tensor<4x4xf32>, %arg1: tensor<4xcomplex<f32>>) -> tensor<4x4xf32> {\n"
      "    %0 = stablehlo.exponential %arg0 : tensor<4x4xf32>\n"
      "    %1 = stablehlo.compare  LT, %0, %arg0 : (tensor<4x4xf32>, tensor<4x4xf32>) -> "
      "tensor<4x4xi1>\n"
      "    %2 = stablehlo.cholesky %0 : tensor<4x4xf32>\n"
      "    %3 = stablehlo.fft %arg1, type =  FFT, length = [4] : (tensor<4xcomplex<f32>>) -> "
      "tensor<4xcomplex<f32>>\n"
      "    %4 = stablehlo.custom_call @\"x y\"(%2) : (tensor<4x4xf32>) -> tensor<4x4xf32>\n"
      "    return %4 : tensor<4x4xf32>\n"
      "  }\n"
      "}\n");
  /* while: iterArg names; reduce with a region (the non-compact form) */
  expect_print(
      "func.func @w(%n: tensor<i64>) -> tensor<i64> {\n"
      "  %z = stablehlo.constant dense<0> : tensor<i64>\n"
      "  %r:2 = stablehlo.while(%i = %z, %a = %n) : tensor<i64>, tensor<i64>\n"
      "  cond {\n"
      "    %c = stablehlo.compare LT, %i, %a : (tensor<i64>, tensor<i64>) -> tensor<i1>\n"
      "    stablehlo.return %c : tensor<i1>\n"
      "  } do {\n"
      "    %one = stablehlo.constant dense<1> : tensor<i64>\n"
      "    %j = stablehlo.add %i, %one : tensor<i64>\n"
      "    stablehlo.return %j, %a : tensor<i64>, tensor<i64>\n"
      "  }\n"
      "  %s = stablehlo.reduce(%r#0 init: %z) across dimensions = [] : (tensor<i64>, tensor<i64>) "
      "-> tensor<i64>\n"
      "    reducer(%x: tensor<i64>, %y: tensor<i64>) {\n"
      "    %m = stablehlo.subtract %x, %y : tensor<i64>\n"
      "    stablehlo.return %m : tensor<i64>\n"
      "  }\n"
      "  return %s : tensor<i64>\n"
      "}\n",
      "module {\n"
      "  func.func @w(%arg0: tensor<i64>) -> tensor<i64> {\n"
      "    %c = stablehlo.constant dense<0> : tensor<i64>\n"
      "    %0:2 = stablehlo.while(%iterArg = %c, %iterArg_0 = %arg0) : tensor<i64>, tensor<i64>\n"
      "    cond {\n"
      "      %2 = stablehlo.compare  LT, %iterArg, %iterArg_0 : (tensor<i64>, tensor<i64>) -> "
      "tensor<i1>\n"
      "      stablehlo.return %2 : tensor<i1>\n"
      "    } do {\n"
      "      %c_1 = stablehlo.constant dense<1> : tensor<i64>\n"
      "      %2 = stablehlo.add %iterArg, %c_1 : tensor<i64>\n"
      "      stablehlo.return %2, %iterArg_0 : tensor<i64>, tensor<i64>\n"
      "    }\n"
      "    %1 = stablehlo.reduce(%0#0 init: %c) across dimensions = [] : (tensor<i64>, "
      "tensor<i64>) -> tensor<i64>\n"
      "     reducer(%arg1: tensor<i64>, %arg2: tensor<i64>)  {\n"
      "      %2 = stablehlo.subtract %arg1, %arg2 : tensor<i64>\n"
      "      stablehlo.return %2 : tensor<i64>\n"
      "    }\n"
      "    return %1 : tensor<i64>\n"
      "  }\n"
      "}\n");
  /* legacy spellings are normalized to the kinds ops.def declares */
  cj_module *m = parse_ok(
      "func.func @n(%a: tensor<2xf32>) -> tensor<3x2xf32> {\n"
      "  %0 = \"stablehlo.broadcast_in_dim\"(%a) {broadcast_dimensions = dense<[1]> : "
      "tensor<1xi64>} : (tensor<2xf32>) -> tensor<3x2xf32>\n"
      "  %1 = \"stablehlo.transpose\"(%0) {permutation = [1 : i64, 0 : i64]} : (tensor<3x2xf32>) "
      "-> tensor<2x3xf32>\n"
      "  %2 = \"stablehlo.iota\"() {iota_dimension = 0 : i32} : () -> tensor<3xi32>\n"
      "  %3 = \"stablehlo.get_tuple_element\"(%t) {index = 0 : i64} : (tuple<tensor<2xf32>>) -> "
      "tensor<2xf32>\n"
      "  %t = \"stablehlo.tuple\"(%a) : (tensor<2xf32>) -> tuple<tensor<2xf32>>\n"
      "  return %0 : tensor<3x2xf32>\n"
      "}\n");
  if (m) {
    cj_op *op = first_op(m, "n");
    const cj_attr *a = op ? cj_op_attr(op, "broadcast_dimensions") : NULL;
    CHECK(a && a->kind == CJ_ATTR_DENSE_ARRAY && a->darr.dtype == CJ_S64 && a->darr.n == 1);
    op = op ? op->next : NULL;
    a = op ? cj_op_attr(op, "permutation") : NULL;
    CHECK(a && a->kind == CJ_ATTR_DENSE_ARRAY && a->darr.n == 2);
    op = op ? op->next : NULL;
    a = op ? cj_op_attr(op, "iota_dimension") : NULL;
    CHECK(a && a->kind == CJ_ATTR_INT && a->i.type->dtype == CJ_S64);
    op = op ? op->next : NULL;
    a = op ? cj_op_attr(op, "index") : NULL;
    CHECK(a && a->kind == CJ_ATTR_INT && a->i.type->dtype == CJ_S32);
    /* %t is used before its definition: a forward reference, resolved */
    CHECK(op && op->operands[0]->def == op->next);
    CHECK_EQ_STR(op ? op->next->results[0].name : NULL, "t");
    cj_module_free(m);
  }
  /* packs: %x:2 and %x#1 */
  m = parse_ok(
      "func.func @p(%a: tensor<f32>) -> tensor<f32> {\n"
      "  %x:2 = stablehlo.optimization_barrier %a, %a : tensor<f32>, tensor<f32>\n"
      "  %y, %z = stablehlo.optimization_barrier %x#1, %x#0 : tensor<f32>, tensor<f32>\n"
      "  return %z : tensor<f32>\n}\n");
  if (m) {
    cj_op *op = first_op(m, "p");
    CHECK(op && op->nresults == 2 && op->next->operands[0] == &op->results[1]);
    CHECK(op && op->next->next->operands[0] == &op->next->results[1]);
    cj_module_free(m);
  }
  /* chlo, check and interpreter pretty forms */
  roundtrip(
      "func.func @c(%a: tensor<4xf32>, %i: tensor<4xi32>) {\n"
      "  %0 = chlo.lgamma %a : tensor<4xf32> -> tensor<4xf32>\n"
      "  %1 = chlo.next_after %0, %a : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>\n"
      "  %2 = chlo.broadcast_add %1, %a {broadcast_dimensions = array<i64: 0>} : (tensor<4xf32>, "
      "tensor<4xf32>) -> tensor<4xf32>\n"
      "  %3:2 = chlo.top_k(%2, k = 2) : tensor<4xf32> -> (tensor<2xf32>, tensor<2xi32>)\n"
      "  %4 = chlo.broadcast_compare %1, %a {comparison_direction = #chlo<comparison_direction "
      "GT>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>\n"
      "  %5 = chlo.constant dense<1.0> : tensor<f32>\n"
      "  %6 = interpreter.probe %2, probe_id = \"p\" : tensor<4xf32>\n"
      "  interpreter.print %6 : tensor<4xf32>\n"
      "  check.expect_almost_eq_const %6, dense<1.0> : tensor<4xf32>, tolerance = 0.5\n"
      "  check.expect_eq_const %i, dense<[1, 2, 3, 4]> : tensor<4xi32>\n"
      "  check.expect_close %6, %a, max_ulp_difference = 18446744073709551615, min_ulp_difference "
      "= 3 : tensor<4xf32>, tensor<4xf32>\n"
      "  check.expect_almost_eq %6, %a, tolerance = 1.000000e-01 : tensor<4xf32>\n"
      "  check.expect_eq %i, %i : tensor<4xi32>\n"
      "  check.expect_serialized_eq %i, probe_id = \"q\", iter = 2 : tensor<4xi32>\n"
      "  %7:2 = chlo.scan(%a) inits(%5) dimension=0 attributes {is_reverse = true} {\n"
      "  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"
      "    %8 = stablehlo.add %x, %y : tensor<f32>\n"
      "    stablehlo.return %8, %8 : tensor<f32>, tensor<f32>\n"
      "  } : (tensor<4xf32>, tensor<f32>) -> (tensor<4xf32>, tensor<f32>)\n"
      "  return\n"
      "}\n");
  /* a single op prints with the names it has in the module's printout */
  m = parse_ok(
      "func.func @g(%a: tensor<f32>) -> tensor<f32> {\n"
      "  %c = stablehlo.constant dense<1.0> : tensor<f32>\n"
      "  %x = stablehlo.add %a, %c : tensor<f32>\n"
      "  return %x : tensor<f32>\n}\n");
  if (m) {
    cj_op *add = nth_op(m, "g", 1);
    char *s = NULL;
    size_t n = 0;
    cj_status st = cj_print_op(add, 0, &s, &n);
    CHECK(st == NULL);
    CHECK_EQ_STR(s, "%0 = stablehlo.add %arg0, %cst : tensor<f32>");
    free(s);
    cj_status_free(st);
    s = NULL;
    st = cj_print_op(add, CJ_PRINT_GENERIC, &s, &n);
    CHECK_EQ_STR(s,
                 "%1 = \"stablehlo.add\"(%arg0, %0) : (tensor<f32>, tensor<f32>) -> tensor<f32>");
    cj_status_free(st);
    free(s);
    /* appending to a buffer */
    s = malloc(4);
    memcpy(s, "x: ", 4);
    n = 3;
    st = cj_print_type(add->results[0].type, &s, &n);
    CHECK(st == NULL && n == 14);
    CHECK_EQ_STR(s, "x: tensor<f32>");
    cj_status_free(st);
    free(s);
    cj_module_free(m);
  }
  /* some generators write 1e-05 (no '.') and typed strings */
  m = parse_ok(
      "func.func @l() attributes {eps = 1e-05 : f32, s = \"t\" : tensor<3xf32>} {\n"
      "  %0 = stablehlo.constant dense<[1e-05, 2E+3]> : tensor<2xf32>\n  return\n}\n");
  if (m) {
    const cj_attr *v = value_of(m, "l", 0);
    CHECK(v && cj_dense_get_f64(v, 0) == (double)1e-05f && cj_dense_get_f64(v, 1) == 2000.0);
    cj_module_free(m);
  }
  /* composite with its decomposition; func.call; symbol visibility; func attributes */
  roundtrip(
      "func.func private @dec(%x: tensor<f32>) -> tensor<f32> attributes {foo = 1 : i32} {\n"
      "  return %x : tensor<f32>\n}\n"
      "func.func public @main(%x: tensor<f32> {mhlo.sharding = \"{replicated}\"}) -> (tensor<f32> "
      "{jax.result_info = \"r\"}) {\n"
      "  %0 = stablehlo.composite \"my.op\" %x {composite_attributes = {n = 2 : i64}, "
      "decomposition = @dec, version = 1 : i32} : (tensor<f32>) -> tensor<f32>\n"
      "  %1 = func.call @dec(%0) : (tensor<f32>) -> tensor<f32>\n"
      "  return %1 : tensor<f32>\n}\n"
      "func.func private @decl(tensor<f32>, tensor<i1> {a.b = 1 : i64}) -> tensor<f32>\n");
}

/* ---- Shardy and other dialects we only carry ---- */

static void test_carried(void) {
  const char *t =
      "module @m attributes {mhlo.frontend_attributes = {xla.sdy.meshes = \"{}\"}} {\n"
      "  sdy.mesh @mesh = <[\"a\"=2, \"b\"=4]>\n"
      "  sdy.mesh @maximal = <[], device_ids=[3]>\n"
      "  func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"a\"}, "
      "{}]>}) -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {\"b\"}]>}) {\n"
      "    %0 = sdy.sharding_constraint %arg0 <@mesh, [{\"a\", ?}, {?}]> : tensor<8x8xf32>\n"
      "    %1 = sdy.reshard %0 <@mesh, [{}, {\"b\"}]> : tensor<8x8xf32>\n"
      "    %2 = sdy.manual_computation(%1) in_shardings=[<@mesh, [{\"a\"}, {}]>] "
      "out_shardings=[<@mesh, [{\"a\"}, {}]>] manual_axes={\"a\"} (%arg1: tensor<4x8xf32>) {\n"
      "      %3 = stablehlo.add %arg1, %arg1 : tensor<4x8xf32>\n"
      "      sdy.return %3 : tensor<4x8xf32>\n"
      "    } : (tensor<8x8xf32>) -> tensor<8x8xf32>\n"
      "    %4 = \"foo.bar\"(%2) <{x = 1 : i32}> {y = !foo.type<1>} : (tensor<8x8xf32>) -> "
      "!foo.type<2>\n"
      "    %5 = arith.addf %2, %2 : tensor<8x8xf32>\n"
      "    return %5 : tensor<8x8xf32>\n"
      "  }\n"
      "}\n";
  cj_module *m = parse_ok(t);
  if (m) {
    cj_op *mesh = cj_module_lookup_symbol(m, "mesh");
    CHECK(mesh && mesh->kind == CJ_OP_SDY_MESH);
    const cj_attr *ma = mesh ? cj_op_attr(mesh, "mesh") : NULL;
    CHECK(ma && ma->kind == CJ_ATTR_OPAQUE &&
          !strcmp(ma->opaque.text, "#sdy.mesh<[\"a\"=2, \"b\"=4]>"));
    cj_op *f = cj_module_main(m);
    const cj_attr *d = f ? cj_func_arg_attrs(f, 0) : NULL;
    CHECK(d && d->dict.n == 1 && d->dict.items[0].value->kind == CJ_ATTR_OPAQUE);
    cj_op *op = nth_op(m, "main", 3);
    CHECK(op && op->kind == CJ_OP_UNKNOWN && !strcmp(op->name, "foo.bar") &&
          op->results[0].type->kind == CJ_TYPE_OPAQUE);
    op = op ? op->next : NULL;
    CHECK(op && op->kind == CJ_OP_UNKNOWN && !strcmp(op->name, "arith.addf") && op->nopnds == 2);
    char *s = print_mod(m, 0);
    CHECK_CONTAINS(s, "  sdy.mesh @mesh = <[\"a\"=2, \"b\"=4]>\n");
    CHECK_CONTAINS(
        s, "%0 = sdy.sharding_constraint %arg0 <@mesh, [{\"a\", ?}, {?}]> : tensor<8x8xf32>\n");
    CHECK_CONTAINS(
        s,
        "%2 = sdy.manual_computation(%1) in_shardings=[<@mesh, [{\"a\"}, {}]>] "
        "out_shardings=[<@mesh, [{\"a\"}, {}]>] manual_axes={\"a\"} (%arg1: tensor<4x8xf32>) {\n");
    CHECK_CONTAINS(s,
                   "%3 = \"foo.bar\"(%2) {x = 1 : i32, y = !foo.type<1>} : (tensor<8x8xf32>) -> "
                   "!foo.type<2>\n");
    CHECK_CONTAINS(
        s, "%4 = \"arith.addf\"(%2, %2) : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>\n");
    free(s);
    cj_module_free(m);
  }
  roundtrip(t);
  /* a few other dialects' pretty forms are known */
  roundtrip(
      "func.func @o(%arg0: tensor<2xf32>) -> tensor<2xf32> {\n"
      "  %c0 = arith.constant 0 : index\n  %c1 = arith.constant 1 : index\n"
      "  %cst = arith.constant 0.0 : f32\n"
      "  %r = scf.for %i = %c0 to %c1 step %c1 iter_args(%a = %arg0) -> tensor<2xf32> {\n"
      "    %n = tensor.insert %cst into %a[%i] : tensor<2xf32>\n"
      "    scf.yield %n : tensor<2xf32>\n  }\n"
      "  return %r : tensor<2xf32>\n}\n");
}

/* ---- canonical forms shared with the bytecode reader ---- */

static void test_canonical(void) {
  /* dense literals with all elements equal (one element included) are stored as splats, as
   * MLIR (and our bytecode reader) keep them */
  const char *t =
      "func.func @c() {\n"
      "  %0 = stablehlo.constant dense<[7, 7, 7]> : tensor<3xi32>\n"                    /* 0 */
      "  %1 = stablehlo.constant dense<\"0x0700000007000000\"> : tensor<2xi32>\n"       /* 1 */
      "  %2 = stablehlo.constant dense<[[2.5]]> : tensor<1x1xf32>\n"                     /* 2 */
      "  %3 = stablehlo.constant dense<5> : tensor<i32>\n"                               /* 3 */
      "  %4 = stablehlo.constant dense<[0.0, -0.0]> : tensor<2xf32>\n"                   /* 4 */
      "  %5 = stablehlo.constant dense<[(1.0, 2.0), (1.0, 2.0)]> : tensor<2xcomplex<f32>>\n"
      "  %6 = stablehlo.constant dense<[true, true, 1]> : tensor<3xi1>\n"                /* 6 */
      "  %7 = stablehlo.constant dense<[1, 1, 2]> : tensor<3xi8>\n"                      /* 7 */
      "  %8 = stablehlo.constant dense<\"0x0000803F\"> : tensor<1xf32>\n"                /* 8 */
      "  return\n"
      "}\n";
  cj_module *m = parse_ok(t);
  if (m) {
    const cj_attr *a = value_of(m, "c", 0);
    CHECK(a && a->dense.splat && a->dense.nbytes == 4 && cj_dense_get_i64(a, 2) == 7);
    a = value_of(m, "c", 1);
    CHECK(a && a->dense.splat && a->dense.nbytes == 4 && cj_dense_get_i64(a, 1) == 7);
    a = value_of(m, "c", 2);
    CHECK(a && a->dense.splat && a->dense.nbytes == 4 && cj_dense_get_f64(a, 0) == 2.5);
    a = value_of(m, "c", 3);
    CHECK(a && a->dense.splat && cj_dense_get_i64(a, 0) == 5);
    a = value_of(m, "c", 4); /* -0.0 and 0.0 differ in bits: not a splat */
    CHECK(a && !a->dense.splat && a->dense.nbytes == 8 && dense_bits(a, 1) == 0x80000000u);
    a = value_of(m, "c", 5);
    CHECK(a && a->dense.splat && a->dense.nbytes == 8);
    a = value_of(m, "c", 6);
    CHECK(a && a->dense.splat && a->dense.nbytes == 1 && dense_bits(a, 2) == 1);
    a = value_of(m, "c", 7);
    CHECK(a && !a->dense.splat && a->dense.nbytes == 3 && cj_dense_get_i64(a, 2) == 2);
    a = value_of(m, "c", 8);
    CHECK(a && a->dense.splat && a->dense.nbytes == 4 && dense_bits(a, 0) == 0x3F800000u);
    /* the same literal written as a list and as a splat is one attribute */
    cj_module *m2 = parse_ok(
        "func.func @c() {\n  %0 = stablehlo.constant dense<7> : tensor<3xi32>\n  return\n}\n");
    if (m2) CHECK(cj_attr_equal(value_of(m, "c", 0), value_of(m2, "c", 0)));
    cj_module_free(m2);
    char *s = print_mod(m, 0);
    CHECK_CONTAINS(s, "%c = stablehlo.constant dense<7> : tensor<3xi32>\n");
    CHECK_CONTAINS(s, "stablehlo.constant dense<[0.000000e+00, -0.000000e+00]> : tensor<2xf32>\n");
    free(s);
    cj_module_free(m);
  }
  roundtrip(t);
  /* dialect attribute and type text: blanks collapse to one and go before any closing bracket,
   * '>' included, as the bytecode reader spells them */
  const char *o =
      "func.func @o(%a: !foo.t< 1 ,  [ 2 ] >) attributes {x = #foo.a<[#foo.b<n = \"x  y\" > ] >, "
      "y = #stablehlo.replica_group_mesh_axes<mesh = @mesh, axes = [#stablehlo.axis_ref<name = "
      "\"y\">] >} {\n  return\n}\n";
  m = parse_ok(o);
  if (m) {
    cj_op *f = cj_module_lookup_symbol(m, "o");
    const cj_attr *x = f ? cj_op_attr(f, "x") : NULL, *y = f ? cj_op_attr(f, "y") : NULL;
    CHECK(x && x->kind == CJ_ATTR_OPAQUE && !strcmp(x->opaque.text, "#foo.a<[#foo.b<n = \"x  y\">]>"));
    CHECK(y && y->kind == CJ_ATTR_OPAQUE &&
          !strcmp(y->opaque.text,
                  "#stablehlo.replica_group_mesh_axes<mesh = @mesh, axes = "
                  "[#stablehlo.axis_ref<name = \"y\">]>"));
    const cj_type *ft = f ? cj_func_type(f) : NULL;
    char *ts = ft && ft->rank == 1 ? type_str(ft->members[0]) : NULL;
    CHECK_MSG(ts && !strcmp(ts, "!foo.t<1 , [2]>"), "printed %s", ts ? ts : "(null)");
    free(ts);
    cj_module_free(m);
  }
  roundtrip(o);
}

/* ---- splits, implicit modules, aliases ---- */

static void test_structure(void) {
  const char *t =
      "// RUN: x\nfunc.func @a() {\n  return\n}\n\n// -----\n\n"
      "func.func @b() {\n  return\n}\n// -----\nfunc.func @c() {\n  %0 = \"x.y\"() : () -> i32\n  "
      "return\n}\n";
  cj_module **mods = NULL;
  size_t n = 0;
  cj_status st = cj_parse_mlir_text_split(t, strlen(t), "s.mlir", &mods, &n);
  CHECK(st == NULL && n == 3);
  if (n == 3) {
    CHECK(cj_module_lookup_symbol(mods[1], "b") != NULL);
    cj_op *op = first_op(mods[2], "c");
    CHECK(op && op->pos.line == 13 && op->pos.col == 3); /* whole-file line numbers */
  }
  for (size_t i = 0; i < n; i++) cj_module_free(mods[i]);
  free(mods);
  cj_status_free(st);
  /* an error in a split names the whole-file line and the split */
  const char *bad = "func.func @a() {\n  return\n}\n// -----\nfunc.func @b() {\n  retur\n}\n";
  st = cj_parse_mlir_text_split(bad, strlen(bad), "s.mlir", &mods, &n);
  CHECK(st && mods == NULL && n == 0);
  if (st) CHECK_EQ_STR(cj_status_message(st), "s.mlir:6:3: unknown operation 'retur' (in split 2)");
  cj_status_free(st);
  parse_err(
      t,
      "t.mlir:6:1: the text holds '// -----' separators; parse it with cj_parse_mlir_text_split");
  /* only a line that is exactly `// -----` splits */
  const char *not_split =
      "func.func @a() {\n  return\n}\n/// -----\n// ----- x\n  // -----\nfunc.func @b() {\n  "
      "return\n}\n";
  st = cj_parse_mlir_text_split(not_split, strlen(not_split), "s.mlir", &mods, &n);
  CHECK(st == NULL && n == 2); /* the indented one splits */
  for (size_t i = 0; i < n; i++) cj_module_free(mods[i]);
  free(mods);
  cj_status_free(st);
  /* blocks and successors of carried ops; labels are per region */
  roundtrip(
      "func.func @f(%a: i32) -> i32 {\n"
      "  \"x.op\"() ({\n"
      "    \"cf.br\"()[^bb2] : () -> ()\n"
      "  ^bb1(%q: i32):\n"
      "    \"x.inner\"() ({\n"
      "    ^bb0(%z: i32):\n"
      "      \"cf.br\"()[^bb1] : () -> ()\n"
      "    ^bb1:\n"
      "      \"x.end\"() : () -> ()\n"
      "    }) : () -> ()\n"
      "    \"cf.br\"()[^bb2] : () -> ()\n"
      "  ^bb2:\n"
      "    \"x.end\"() : () -> ()\n"
      "  }) : () -> ()\n"
      "  return %a : i32\n}\n");
  parse_err(
      "func.func @f() {\n  \"x.op\"() ({\n  ^bb0:\n    \"x.inner\"() ({\n      \"cf.br\"()[^bb7] : "
      "() -> ()\n    }) : () -> ()\n"
      "  ^bb7:\n    \"x.end\"() : () -> ()\n  }) : () -> ()\n  return\n}\n",
      "t.mlir:5:17: reference to an undefined block");
  /* aliases */
  roundtrip(
      "#map = affine_map<(d0) -> (d0)>\n!t = tensor<4xf32>\n#cd = #stablehlo<comparison_direction "
      "EQ>\n"
      "func.func @f(%a: !t) -> tensor<4xi1> attributes {m = #map} {\n"
      "  %0 = \"stablehlo.compare\"(%a, %a) {comparison_direction = #cd} : (!t, !t) -> "
      "tensor<4xi1>\n"
      "  return %0 : tensor<4xi1>\n}\n");
  /* dialect resources are skipped; an empty input is an empty module */
  cj_module *m = parse_ok("module {\n}\n{-#\n  dialect_resources: {\n    builtin: {}\n  }\n#-}\n");
  cj_module_free(m);
  m = parse_ok("");
  if (m) CHECK(m->body.first && m->body.first->first == NULL);
  char *s = m ? print_mod(m, 0) : NULL;
  CHECK_EQ_STR(s, "module {\n}\n");
  free(s);
  cj_module_free(m);
  /* cj_read_program tells text from bytecode */
  m = NULL;
  const char *prog = "func.func @f() {\n  return\n}\n";
  st = cj_read_program(prog, strlen(prog), "p.mlir", &m);
  CHECK(st == NULL && m);
  cj_status_free(st);
  cj_module_free(m);
}

/* ---- every error path of the op and module parser, with its message ---- */

static void test_errors(void) {
  static const struct {
    const char *text, *msg;
  } bad[] = {
      {"func.func @f() {\n  return %x : tensor<f32>\n}\n",
       "t.mlir:2:10: use of undefined SSA value '%x'"},
      {"func.func @f(%a: tensor<f32>) {\n  %a = stablehlo.abs %a : tensor<f32>\n  return\n}\n",
       "t.mlir:2:3: redefinition of SSA value '%a'"},
      {"func.func @f(%a: tensor<f32>) {\n  %0:2 = stablehlo.optimization_barrier %a, %a : "
       "tensor<f32>, tensor<f32>\n  return %0#2 : tensor<f32>\n}\n",
       "result number 2 out of range: '%0' has 2 results"},
      {"func.func @f(%a: tensor<f32>) {\n  %0 = stablehlo.abs %a : tensor<i32>\n  return\n}\n",
       "t.mlir:2:22: use of value '%a' as tensor<i32>, but it has type tensor<f32>"},
      {"func.func @f(%a: tensor<f32>) {\n  %0 = stablehlo.bogus %a : tensor<f32>\n  return\n}\n",
       "unknown operation 'stablehlo.bogus'"},
      {"func.func @f(%a: tensor<f32>) {\n  %0 = stablehlo.gather %a : tensor<f32>\n  return\n}\n",
       "'stablehlo.gather' has no pretty form; write it in the generic form"},
      {"func.func @f(%a: tensor<f32>) {\n  %0, %1 = stablehlo.abs %a : tensor<f32>\n  return\n}\n",
       "t.mlir:2:3: operation defines 1 result but 2 were given names"},
      {"func.func @f(%a: tensor<f32>) {\n  %0 = \"stablehlo.abs\"(%a) : (tensor<f32>, tensor<f32>) "
       "-> tensor<f32>\n  return\n}\n",
       "2 operand types given for 1 operand"},
      {"func.func @f(%a: tensor<f32>) {\n  %0 = \"stablehlo.abs\"(%a) : tensor<f32>\n  return\n}\n",
       "expected a function type '(...) -> ...'"},
      {"func.func @f(%a: tensor<f32>) {\n  %0 = \"stablehlo.abs\"(%a : (tensor<f32>) -> "
       "tensor<f32>\n  return\n}\n",
       "expected ')' to end the operand list"},
      {"func.func @f() {\n  \"x.y\"() ({\n  ^bb0:\n    \"x.z\"()[^bb3] : () -> ()\n  }) : () -> "
       "()\n  return\n}\n",
       "reference to an undefined block"},
      {"func.func @f() {\n  \"x.y\"() ({\n  ^bb0:\n    \"x.z\"() : () -> ()\n  ^bb0:\n    "
       "\"x.z\"() : () -> ()\n  }) : () -> ()\n  return\n}\n",
       "redefinition of block '^bb0'"},
      {"func.func @f() {\n  return\n", "expected '}' to end the region"},
      {"func.func @f() {\n  return\n}}\n", "expected an operation, found '}'"},
      {"module {\n  module {\n  }\n}\n", "nested modules are not supported"},
      {"module {\n}\nfunc.func @f() {\n  return\n}\n", "unexpected operation after the module"},
      {"func.func @f() {\n  %0 = stablehlo.iota dim = x : tensor<4xi32>\n  return\n}\n",
       "expected integer, found 'x'"},
      {"func.func @f(%a: tensor<4xf32>) {\n  %0 = stablehlo.reduce_precision %a, format = e5x10 : "
       "tensor<4xf32>\n  return\n}\n",
       "expected exponent mantissa in format e#m#, saw e5x10"},
      {"func.func @f(%a: tensor<4xf32>) {\n  %0 = stablehlo.compare FOO, %a, %a : (tensor<4xf32>, "
       "tensor<4xf32>) -> tensor<4xi1>\n  return\n}\n",
       "expected a comparison_direction value, found 'FOO'"},
      {"func.func @f(%a: tensor<4xf32>) {\n  %0 = stablehlo.reduce(%a init: %a) applies "
       "stablehlo.abs across dimensions = [0] : (tensor<4xf32>, tensor<4xf32>) -> tensor<f32>\n  "
       "return\n}\n",
       "expected the inner-op to be a binary-op from the stablehlo dialect"},
      {"func.func @f(%a: tensor<4xf32>) {\n  %0 = stablehlo.convolution(%a, %a) dim_numbers = [b, "
       "0, f]x[0, i, o]->[b, 0, f], window = {bogus = [1]} : (tensor<4xf32>, tensor<4xf32>) -> "
       "tensor<4xf32>\n  return\n}\n",
       "Unexpected keyword bogus"},
      {"func.func @f(%a: tensor<4xf32>) {\n  %0 = stablehlo.convolution(%a, %a) dim_numbers = [b, "
       "0, f]x[0, i, o]->[b, 0, f], window = {pad = [[1, 2, 3]]} : (tensor<4xf32>, tensor<4xf32>) "
       "-> tensor<4xf32>\n  return\n}\n",
       "expected ']' (pad pairs have 2 elements)"},
      {"func.func @f(%a: tensor<4xf32>) {\n  %0 = stablehlo.complex %a, %a : tensor<4xf32>\n  "
       "return\n}\n",
       "expected tensor with complex element type"},
      {"func.func @f(%a: tensor<4xf32>) {\n  %0 = stablehlo.select %a, %a, %a : tensor<4xf32>\n  "
       "return\n}\n",
       "expected functional type or list of two types"},
      {"func.func @f(%a: tensor<4xf32>) {\n  %0 = stablehlo.tuple %a : tensor<4xf32>\n  "
       "return\n}\n",
       "expected tuple type"},
      {"func.func @f() {\n  %0 = stablehlo.constant 1 : tensor<f32>\n  return\n}\n",
       "a number attribute needs an integer or float type"},
      {"func.func @f() {\n  %0 = stablehlo.constant \"x\"\n  return\n}\n",
       "expected a dense elements attribute"},
      {"func.func @f() {\n  %0 = stablehlo.constant dense<1> : tensor<f32\n  return\n}\n",
       "expected '>' to end the tensor type"},
      {"func.func @f(%a: tensor<4xf32>, %a: tensor<4xf32>) {\n  return\n}\n",
       "redefinition of SSA value '%a'"},
      {"func.func @f(tensor<4xf32>) {\n  return\n}\n",
       "a function with a body needs named arguments"},
      {"func.func f() {\n  return\n}\n", "expected function name '@name', found 'f'"},
      {"func.func @f() {\n  %0 = \"x.y\"() : () -> (i32, i32)\n  return\n}\n",
       "operation defines 2 results but 1 was given names"},
      {"func.func @f() {\n  %0 = \"\"() : () -> ()\n}\n", "empty operation name"},
      {"func.func @f() {\n  return\n}\n\x01", "unexpected character '\\x?'"},
      {"func.func @f() {\n  %0 = \"stablehlo.abs\n}\n", "unterminated string literal"},
      {"#a = 1 : i32\n#a = 2 : i32\n", "redefinition of alias '#a'"},
      {"{-# dialect_resources: {}\n", "unterminated file metadata '{-#'"},
      {"func.func @", "expected a symbol name after '@'"},
      {"func.func @f() {\n  stablehlo.custom_call @", "expected a symbol name after '@'"},
      {"func.func @f(%a: tensor<4xf32>) {\n  %0 = \"stablehlo.abs\"(%a) : (tensor<4xf32>) -> "
       "tensor<4xf32>\n  %1 = \"stablehlo.abs\"(%0) : (tensor<4xi32>) -> tensor<4xf32>\n  "
       "return\n}\n",
       "t.mlir:3:24: use of value '%0' as tensor<4xi32>, but it has type tensor<4xf32>"},
      {"func.func @f() {\n  %0 = \"stablehlo.abs\"(%1) : (tensor<4xi32>) -> tensor<4xf32>\n  %1 = "
       "\"stablehlo.abs\"(%0) : (tensor<4xf32>) -> tensor<4xf32>\n  return\n}\n",
       "t.mlir:2:24: use of value '%1' expects type tensor<4xi32> but it is defined as "
       "tensor<4xf32>"},
      {"func.func @f() {\n  %0 = \"x.y\"(%1#3) : (i32) -> i32\n  %1:2 = \"x.y\"() : () -> (i32, "
       "i32)\n  return\n}\n",
       "result number 3 out of range: '%1' has 2 results"},
      {"func.func @f(%a: tensor<f32>) {\n  %0 = stablehlo.abs %a : tensor<f32>\n  return %0 "
       "tensor<f32>\n}\n",
       "expected ':' and the result types"},
      {"func.func @f(%a: tensor<4xf32>) {\n  %0 = stablehlo.slice %a [0:2:] : (tensor<4xf32>) -> "
       "tensor<2xf32>\n  return\n}\n",
       "expected integer, found ']'"},
      {"func.func @f(%a: tensor<f32>) {\n  check.expect_close %a, %a, max_ulp_difference = -1 : "
       "tensor<f32>, tensor<f32>\n  return\n}\n",
       "expected a non-negative integer, found '-'"},
      {"func.func @f() {\n  %0 = stablehlo.constant dense<99999999999999999999> : tensor<i64>\n  "
       "return\n}\n",
       "integer constant out of range for element type i64"},
      {"func.func @f() {\n  %0 = \"a\\00b\"() : () -> i32\n  return\n}\n",
       "t.mlir:2:8: a name cannot contain a NUL byte"},
      {"func.func @\"f\\00\"() {\n  return\n}\n", "a name cannot contain a NUL byte"},
      {"func.func @f() attributes {\"a\\00\" = 1 : i32} {\n  return\n}\n",
       "a name cannot contain a NUL byte"},
      {"func.func @f() {\n  return loc(\"\\00\":1:2)\n}\n", "a name cannot contain a NUL byte"},
      /* types of our own dialects are checked, not carried */
      {"func.func @f(%a: !stablehlo.foobar) {\n  return\n}\n",
       "t.mlir:1:18: unknown type '!stablehlo.foobar'"},
      {"func.func @f(%a: tensor<2x!stablehlo.foobar<1>>) {\n  return\n}\n",
       "t.mlir:1:27: unknown type '!stablehlo.foobar'"},
      {"func.func @f(%a: !stablehlo.token<1>) {\n  return\n}\n",
       "unexpected '<' after the type '!stablehlo.token'"},
      {"func.func @f(%a: !stablehlo.future) {\n  return\n}\n",
       "expected '<' after the type '!stablehlo.future'"},
      {"func.func @f(%a: tensor<!quant.uniform>) {\n  return\n}\n",
       "expected '<' after the type '!quant.uniform'"},
      {"func.func @f(%a: !quant.bogus<i8:f32, 1.0>) {\n  return\n}\n",
       "unknown type '!quant.bogus'"},
      {"func.func @f(%a: !chlo.t) {\n  return\n}\n", "unknown type '!chlo.t'"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    parse_err_at(bad[i].text, bad[i].msg, (int)i);
  /* bad arguments */
  cj_module *m = NULL;
  cj_status st = cj_parse_mlir_text(NULL, 3, "x", &m);
  CHECK(st && m == NULL);
  cj_status_free(st);
  st = cj_parse_mlir_text("x", 1, "x", NULL);
  CHECK(st != NULL);
  cj_status_free(st);
  /* truncations of a valid program never crash, and each fails or succeeds cleanly */
  size_t len = strlen(jax_dump);
  for (size_t k = 0; k < len; k += 7) {
    st = cj_parse_mlir_text(jax_dump, k, "trunc.mlir", &m);
    CHECK((st == NULL) == (m != NULL));
    cj_status_free(st);
    cj_module_free(m);
    m = NULL;
  }
}

int main(void) {
  test_locations();
  test_goxla();
  test_dense();
  test_types();
  test_attrs();
  test_ops();
  test_carried();
  test_structure();
  test_canonical();
  test_errors();
  return check_report("text");
}
