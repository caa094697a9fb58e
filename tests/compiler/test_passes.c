/* The compiler passes (src/compiler/): inlining (nested calls, composites, recursion), the
 * sharding identities (sdy ops, JAX custom calls, manual_computation), chlo decompositions
 * (broadcasting binary ops with and without broadcast_dimensions, broadcast_select, constants,
 * constant_like, sinh/cosh), folding, dead code elimination, loop-invariant code motion, and
 * the whole pipeline. Checked on
 * the resulting IR (op kinds and counts) and, where it matters, by running the result. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/check.h"
#include "compiler/compiler.h"
#include "frontend/frontend.h"
#include "runtime/backend.h"
#include "runtime/compile.h"

static cj_module *parse(const char *text) {
  cj_module *m = NULL;
  cj_status st = cj_parse_mlir_text(text, strlen(text), "p.mlir", &m);
  if (!st) st = cj_verify_module(m);
  CHECK_MSG(st == NULL, "parse: %s", cj_status_message(st));
  if (st) {
    cj_status_free(st);
    cj_module_free(m);
    return NULL;
  }
  return m;
}

typedef struct counter {
  const char *name;
  int n;
} counter;

static CJ_MUST_USE cj_status count_fn(cj_op *op, void *ctx) {
  counter *c = ctx;
  if (op->name && !strcmp(op->name, c->name)) c->n++;
  return NULL;
}

static int count(cj_module *m, const char *name) {
  counter c = {name, 0};
  CHECK_OK(cj_walk_module(m, count_fn, &c));
  return c.n;
}

static int nfuncs(cj_module *m) { return count(m, "func.func"); }

static bool native_none(const cj_op *op, void *ctx) {
  (void)op;
  (void)ctx;
  return false;
}

static CJ_MUST_USE cj_status run_passes(cj_module *m, cj_op **main) {
  cj_compile_hooks h = {native_none, NULL};
  return cj_compile_passes(m, &h, main);
}

static void test_inline(void) {
  cj_module *m = parse(
      "func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {\n"
      "  %0 = func.call @f(%x) : (tensor<2xf32>) -> tensor<2xf32>\n"
      "  %1 = func.call @f(%0) : (tensor<2xf32>) -> tensor<2xf32>\n"
      "  return %1 : tensor<2xf32>\n}\n"
      "func.func private @f(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
      "  %0 = func.call @g(%a, %a) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>\n"
      "  return %0 : tensor<2xf32>\n}\n"
      "func.func private @g(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2xf32> {\n"
      "  %0 = stablehlo.add %a, %b : tensor<2xf32>\n"
      "  return %0 : tensor<2xf32>\n}\n");
  if (!m) return;
  cj_op *main = NULL;
  cj_status st = run_passes(m, &main);
  CHECK_MSG(st == NULL, "%s", cj_status_message(st));
  cj_status_free(st);
  CHECK_EQ_INT(count(m, "func.call"), 0);
  CHECK_EQ_INT(count(m, "stablehlo.add"), 2);
  CHECK_EQ_INT(nfuncs(m), 1);
  CHECK(main && !strcmp(cj_func_name(main), "main"));
  cj_module_free(m);

  /* composite: a call of its decomposition */
  m = parse("func.func @main(%x: tensor<f32>) -> tensor<f32> {\n"
            "  %0 = stablehlo.composite \"my.op\" %x {decomposition = @dec} : (tensor<f32>) -> tensor<f32>\n"
            "  return %0 : tensor<f32>\n}\n"
            "func.func private @dec(%a: tensor<f32>) -> tensor<f32> {\n"
            "  %0 = stablehlo.multiply %a, %a : tensor<f32>\n"
            "  return %0 : tensor<f32>\n}\n");
  if (m) {
    st = run_passes(m, &main);
    CHECK_MSG(st == NULL, "%s", cj_status_message(st));
    cj_status_free(st);
    CHECK_EQ_INT(count(m, "stablehlo.composite"), 0);
    CHECK_EQ_INT(count(m, "stablehlo.multiply"), 1);
    cj_module_free(m);
  }

  /* recursion fails naming the call */
  m = parse("func.func @main(%x: tensor<f32>) -> tensor<f32> {\n"
            "  %0 = func.call @main(%x) : (tensor<f32>) -> tensor<f32>\n"
            "  return %0 : tensor<f32>\n}\n");
  if (m) {
    st = run_passes(m, &main);
    CHECK(cj_status_code(st) == CJ_UNIMPLEMENTED);
    CHECK_CONTAINS(cj_status_message(st), "func.call");
    CHECK_CONTAINS(cj_status_message(st), "recursion");
    cj_status_free(st);
    cj_module_free(m);
  }

  /* calls inside regions are inlined too */
  m = parse("func.func @main(%p: tensor<i1>, %x: tensor<f32>) -> tensor<f32> {\n"
            "  %0 = \"stablehlo.if\"(%p) ({\n"
            "    %1 = func.call @neg(%x) : (tensor<f32>) -> tensor<f32>\n"
            "    stablehlo.return %1 : tensor<f32>\n"
            "  }, {\n"
            "    stablehlo.return %x : tensor<f32>\n"
            "  }) : (tensor<i1>) -> tensor<f32>\n"
            "  return %0 : tensor<f32>\n}\n"
            "func.func private @neg(%a: tensor<f32>) -> tensor<f32> {\n"
            "  %0 = stablehlo.negate %a : tensor<f32>\n"
            "  return %0 : tensor<f32>\n}\n");
  if (m) {
    st = run_passes(m, &main);
    CHECK_MSG(st == NULL, "%s", cj_status_message(st));
    cj_status_free(st);
    CHECK_EQ_INT(count(m, "func.call"), 0);
    CHECK_EQ_INT(count(m, "stablehlo.negate"), 1);
    cj_module_free(m);
  }
}

/* Calls marked inlineable = "xla_late" stay calls (their functions compiled too) until
 * cj_compile_late_inline; other calls are inlined at once. */
static void test_late_calls(void) {
  cj_module *m = parse(
      "func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {\n"
      "  %0 = func.call @late(%x) {mhlo.frontend_attributes = {inlineable = \"xla_late\"}} : "
      "(tensor<2xf32>) -> tensor<2xf32>\n"
      "  %1 = func.call @early(%0) {mhlo.frontend_attributes = {inlineable = \"xla_early\"}} : "
      "(tensor<2xf32>) -> tensor<2xf32>\n"
      "  return %1 : tensor<2xf32>\n}\n"
      "func.func private @late(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
      "  %c = chlo.constant dense<2.0> : tensor<2xf32>\n"
      "  %u = stablehlo.add %a, %a : tensor<2xf32>\n"
      "  %0 = func.call @g(%a, %c) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>\n"
      "  return %0 : tensor<2xf32>\n}\n"
      "func.func private @early(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
      "  %0 = stablehlo.negate %a : tensor<2xf32>\n"
      "  return %0 : tensor<2xf32>\n}\n"
      "func.func private @g(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2xf32> {\n"
      "  %0 = stablehlo.multiply %a, %b : tensor<2xf32>\n"
      "  return %0 : tensor<2xf32>\n}\n");
  if (!m) return;
  cj_op *main = NULL;
  cj_status st = run_passes(m, &main);
  CHECK_MSG(st == NULL, "%s", cj_status_message(st));
  cj_status_free(st);
  CHECK_EQ_INT(count(m, "func.call"), 1);         /* @late's call stays, @g's was inlined */
  CHECK_EQ_INT(nfuncs(m), 2);                     /* main and @late */
  CHECK_EQ_INT(count(m, "stablehlo.negate"), 1);  /* @early inlined */
  CHECK_EQ_INT(count(m, "chlo.constant"), 0);     /* @late went through the passes */
  CHECK_EQ_INT(count(m, "stablehlo.add"), 0);     /* (dead code too) */
  st = cj_compile_late_inline(m, main);
  CHECK_MSG(st == NULL, "%s", cj_status_message(st));
  cj_status_free(st);
  CHECK_EQ_INT(count(m, "func.call"), 0);
  CHECK_EQ_INT(nfuncs(m), 1);
  CHECK_EQ_INT(count(m, "stablehlo.multiply"), 1);
  cj_module_free(m);

  /* a late call of dynamic types is inlined at once (late calls need static functions) */
  m = parse(
      "func.func @main(%x: tensor<2xf32>) -> tensor<?xf32> {\n"
      "  %d = stablehlo.convert %x : (tensor<2xf32>) -> tensor<?xf32>\n"
      "  %0 = func.call @late(%d) {mhlo.frontend_attributes = {inlineable = \"xla_late\"}} : "
      "(tensor<?xf32>) -> tensor<?xf32>\n"
      "  return %0 : tensor<?xf32>\n}\n"
      "func.func private @late(%a: tensor<?xf32>) -> tensor<?xf32> {\n"
      "  return %a : tensor<?xf32>\n}\n");
  if (!m) return;
  st = run_passes(m, &main);
  CHECK_MSG(st == NULL, "%s", cj_status_message(st));
  cj_status_free(st);
  CHECK_EQ_INT(count(m, "func.call"), 0);
  cj_module_free(m);
}

static void test_identities(void) {
  cj_module *m = parse(
      "func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
      "  %0 = stablehlo.custom_call @Sharding(%x) {mhlo.sharding = \"{replicated}\"} : (tensor<4xf32>) -> tensor<4xf32>\n"
      "  %1 = stablehlo.custom_call @SPMDFullToShardShape(%0) : (tensor<4xf32>) -> tensor<4xf32>\n"
      "  %2 = stablehlo.abs %1 : tensor<4xf32>\n"
      "  %3 = stablehlo.custom_call @SPMDShardToFullShape(%2) : (tensor<4xf32>) -> tensor<4xf32>\n"
      "  return %3 : tensor<4xf32>\n}\n");
  if (!m) return;
  cj_op *main = NULL;
  cj_status st = run_passes(m, &main);
  CHECK_MSG(st == NULL, "%s", cj_status_message(st));
  cj_status_free(st);
  CHECK_EQ_INT(count(m, "stablehlo.custom_call"), 0);
  CHECK_EQ_INT(count(m, "stablehlo.abs"), 1);
  cj_module_free(m);
  /* a check custom call survives DCE even without has_side_effect */
  m = parse("func.func @main(%x: tensor<4xf32>) {\n"
            "  stablehlo.custom_call @check.expect_eq(%x, %x) : (tensor<4xf32>, tensor<4xf32>) -> ()\n"
            "  %0 = stablehlo.abs %x : tensor<4xf32>\n"
            "  return\n}\n");
  if (m) {
    st = run_passes(m, &main);
    CHECK(st == NULL);
    cj_status_free(st);
    CHECK_EQ_INT(count(m, "stablehlo.custom_call"), 1);
    CHECK_EQ_INT(count(m, "stablehlo.abs"), 0); /* dead */
    cj_module_free(m);
  }
}

static void test_chlo(void) {
  cj_module *m = parse(
      "func.func @main(%x: tensor<2x3xf32>, %y: tensor<3xf32>, %s: tensor<f32>, %z: tensor<2xf32>) -> (tensor<2x3xf32>, tensor<2x3xi1>, tensor<2x3xf32>) {\n"
      "  %0 = chlo.broadcast_add %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>\n"
      "  %1 = chlo.broadcast_compare %x, %s {comparison_direction = #chlo<comparison_direction GT>} : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xi1>\n"
      "  %2 = chlo.broadcast_multiply %x, %z {broadcast_dimensions = array<i64: 0>} : (tensor<2x3xf32>, tensor<2xf32>) -> tensor<2x3xf32>\n"
      "  return %0, %1, %2 : tensor<2x3xf32>, tensor<2x3xi1>, tensor<2x3xf32>\n}\n");
  if (!m) return;
  cj_op *main = NULL;
  cj_status st = run_passes(m, &main);
  CHECK_MSG(st == NULL, "%s", cj_status_message(st));
  cj_status_free(st);
  CHECK_EQ_INT(count(m, "chlo.broadcast_add"), 0);
  CHECK_EQ_INT(count(m, "stablehlo.add"), 1);
  CHECK_EQ_INT(count(m, "stablehlo.compare"), 1);
  CHECK_EQ_INT(count(m, "stablehlo.multiply"), 1);
  CHECK_EQ_INT(count(m, "stablehlo.broadcast_in_dim"), 3);
  cj_status vs = cj_verify_module(m);
  CHECK_MSG(vs == NULL, "decomposed module does not verify: %s", cj_status_message(vs));
  cj_status_free(vs);
  cj_module_free(m);

  /* run it: broadcast_multiply with broadcast_dimensions [0] scales rows */
  const char *text =
      "func.func @main() -> tensor<2x3xf32> {\n"
      "  %x = stablehlo.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>\n"
      "  %z = stablehlo.constant dense<[10.0, 100.0]> : tensor<2xf32>\n"
      "  %y = stablehlo.constant dense<[1.0, 0.0, -1.0]> : tensor<3xf32>\n"
      "  %a = chlo.broadcast_multiply %x, %z {broadcast_dimensions = array<i64: 0>} : (tensor<2x3xf32>, tensor<2xf32>) -> tensor<2x3xf32>\n"
      "  %b = chlo.broadcast_add %a, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>\n"
      "  %c = \"chlo.constant_like\"(%b) {value = 0.5 : f32} : (tensor<2x3xf32>) -> tensor<2x3xf32>\n"
      "  %r = stablehlo.add %b, %c : tensor<2x3xf32>\n"
      "  return %r : tensor<2x3xf32>\n}\n";
  m = parse(text);
  if (m) {
    cj_backend *b = cj_backend_cpu();
    cj_compiled *p = NULL;
    cj_compile_options o = {1, 1, NULL, false, false};
    st = cj_compile_module(b, m, &o, &p);
    CHECK_MSG(st == NULL, "%s", cj_status_message(st));
    cj_status_free(st);
    if (p) {
      float r[6] = {0};
      void *res[1] = {r};
      cj_exec_args a;
      memset(&a, 0, sizeof a);
      a.results = res;
      st = b->vt->execute(b, p->program, &a);
      CHECK(st == NULL);
      cj_status_free(st);
      float e[6] = {11.5f, 20.5f, 29.5f, 401.5f, 500.5f, 599.5f};
      for (int i = 0; i < 6; i++) CHECK_MSG(r[i] == e[i], "element %d: %g vs %g", i, r[i], e[i]);
      cj_compiled_free(p);
    }
  }
}

static void test_fold_dce(void) {
  cj_module *m = parse(
      "func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {\n"
      "  %0 = stablehlo.convert %x : tensor<2x3xf32>\n"
      "  %1 = stablehlo.reshape %0 : (tensor<2x3xf32>) -> tensor<2x3xf32>\n"
      "  %2 = stablehlo.transpose %1, dims = [0, 1] : (tensor<2x3xf32>) -> tensor<2x3xf32>\n"
      "  %c = stablehlo.constant dense<2.0> : tensor<f32>\n"
      "  %3 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<f32>) -> tensor<2x3xf32>\n"
      "  %4 = stablehlo.multiply %2, %3 : tensor<2x3xf32>\n"
      "  %5 = stablehlo.sine %4 : tensor<2x3xf32>\n"
      "  %6 = stablehlo.reshape %x : (tensor<2x3xf32>) -> tensor<6xf32>\n"
      "  %7 = stablehlo.reshape %6 : (tensor<6xf32>) -> tensor<3x2xf32>\n"
      "  return %4 : tensor<2x3xf32>\n}\n");
  if (!m) return;
  cj_op *main = NULL;
  cj_status st = run_passes(m, &main);
  CHECK_MSG(st == NULL, "%s", cj_status_message(st));
  cj_status_free(st);
  CHECK_EQ_INT(count(m, "stablehlo.convert"), 0);
  CHECK_EQ_INT(count(m, "stablehlo.reshape"), 0); /* identity, and dead */
  CHECK_EQ_INT(count(m, "stablehlo.transpose"), 0);
  CHECK_EQ_INT(count(m, "stablehlo.broadcast_in_dim"), 0); /* became a splat constant */
  CHECK_EQ_INT(count(m, "stablehlo.sine"), 0);             /* dead */
  CHECK_EQ_INT(count(m, "stablehlo.multiply"), 1);
  cj_status vs = cj_verify_module(m);
  CHECK_MSG(vs == NULL, "%s", cj_status_message(vs));
  cj_status_free(vs);
  cj_module_free(m);
}

/* common subexpressions: the repeats of pure ops (constants, elementwise chains, a reduce with
 * the same body) go, and what differs (another body, another init, an attribute, random
 * numbers) stays */
static void test_cse(void) {
  cj_module *m = parse(
      "func.func @main(%x: tensor<4x8xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, "
      "tensor<4xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>) {\n"
      "  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>\n"
      "  %ninf2 = stablehlo.constant dense<0xFF800000> : tensor<f32>\n"
      "  %zero = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %m1 = stablehlo.reduce(%x init: %ninf) applies stablehlo.maximum across dimensions = [1]"
      " : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>\n"
      "  %m2 = stablehlo.reduce(%x init: %ninf2) applies stablehlo.maximum across dimensions = [1]"
      " : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>\n"
      "  %m3 = stablehlo.reduce(%x init: %zero) applies stablehlo.maximum across dimensions = [1]"
      " : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>\n"
      "  %s1 = stablehlo.reduce(%x init: %ninf) applies stablehlo.add across dimensions = [1]"
      " : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>\n"
      "  %b1 = stablehlo.broadcast_in_dim %m1, dims = [0] : (tensor<4xf32>) -> tensor<4x8xf32>\n"
      "  %b2 = stablehlo.broadcast_in_dim %m2, dims = [0] : (tensor<4xf32>) -> tensor<4x8xf32>\n"
      "  %d1 = stablehlo.subtract %x, %b1 : tensor<4x8xf32>\n"
      "  %d2 = stablehlo.subtract %x, %b2 : tensor<4x8xf32>\n"
      "  %e1 = stablehlo.exponential %d1 : tensor<4x8xf32>\n"
      "  %e2 = stablehlo.exponential %d2 : tensor<4x8xf32>\n"
      "  %c1 = stablehlo.compare GT, %x, %b1, FLOAT : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xi1>\n"
      "  %c2 = stablehlo.compare GE, %x, %b2, FLOAT : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xi1>\n"
      "  %f1 = stablehlo.select %c1, %e1, %e2 : tensor<4x8xi1>, tensor<4x8xf32>\n"
      "  %f2 = stablehlo.select %c2, %e1, %e2 : tensor<4x8xi1>, tensor<4x8xf32>\n"
      "  %lo = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %hi = stablehlo.constant dense<1.0> : tensor<f32>\n"
      "  %sh = stablehlo.constant dense<4> : tensor<1xi64>\n"
      "  %r1 = stablehlo.rng %lo, %hi, %sh, distribution = UNIFORM : (tensor<f32>, tensor<f32>, tensor<1xi64>) -> tensor<4xf32>\n"
      "  %r2 = stablehlo.rng %lo, %hi, %sh, distribution = UNIFORM : (tensor<f32>, tensor<f32>, tensor<1xi64>) -> tensor<4xf32>\n"
      "  return %m1, %m2, %m3, %s1, %f1, %f2, %r1, %r2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, "
      "tensor<4xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>\n}\n");
  if (!m) return;
  cj_op *main = NULL;
  cj_status st = run_passes(m, &main);
  CHECK_MSG(st == NULL, "%s", cj_status_message(st));
  cj_status_free(st);
  CHECK_EQ_INT(count(m, "stablehlo.reduce"), 3);            /* m2 is m1; m3, s1 differ */
  CHECK_EQ_INT(count(m, "stablehlo.subtract"), 1);
  CHECK_EQ_INT(count(m, "stablehlo.exponential"), 1);
  CHECK_EQ_INT(count(m, "stablehlo.compare"), 2);           /* GT and GE */
  CHECK_EQ_INT(count(m, "stablehlo.rng"), 2);               /* random: never merged */
  cj_block *b = main ? cj_func_body(main) : NULL;
  const cj_op *ret = b ? b->last : NULL;
  CHECK(ret && ret->nopnds == 8);
  if (ret && ret->nopnds == 8) {
    CHECK(ret->operands[0] == ret->operands[1]);
    CHECK(ret->operands[0] != ret->operands[2] && ret->operands[0] != ret->operands[3]);
    CHECK(ret->operands[4] != ret->operands[5]);
    CHECK(ret->operands[6] != ret->operands[7]);
  }
  cj_status vs = cj_verify_module(m);
  CHECK_MSG(vs == NULL, "%s", cj_status_message(vs));
  cj_status_free(vs);
  cj_module_free(m);
}

/* ops named `name` directly in block b (not in nested regions) */
static int count_in(const cj_block *b, const char *name) {
  int n = 0;
  for (const cj_op *o = b ? b->first : NULL; o; o = o->next) n += !strcmp(o->name, name);
  return n;
}

/* the first op named `name` directly in block b */
static cj_op *find_in(const cj_block *b, const char *name) {
  for (cj_op *o = b ? b->first : NULL; o; o = o->next)
    if (!strcmp(o->name, name)) return o;
  return NULL;
}

/* loop-invariant code motion (licm.c): elementwise ops of a while body whose operands do not
 * change (an argument the body returns unchanged, values from outside, constants and their
 * broadcasts, a reshape of such a value, ops moved before) go before the loop, through two
 * nested loops; what reads a carried value, only constants and broadcasts, or random numbers
 * stays. A loop whose body reads a moved op runs on the CPU backend. */
static void test_licm(void) {
  const char *text =
      "func.func @main(%f: tensor<4x8xf32>, %u0: tensor<4x8xf32>, %s: tensor<f32>) -> tensor<4x8xf32> {\n"
      "  %z = stablehlo.constant dense<0> : tensor<i32>\n"
      "  %one = stablehlo.constant dense<1> : tensor<i32>\n"
      "  %n = stablehlo.constant dense<3> : tensor<i32>\n"
      "  %g = stablehlo.sine %f : tensor<4x8xf32>\n"
      "  %r:4 = stablehlo.while(%i = %z, %a = %f, %u = %u0, %t = %s) : tensor<i32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<f32>\n"
      "    cond {\n"
      "      %c = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
      "      stablehlo.return %c : tensor<i1>\n"
      "    } do {\n"
      "      %h = stablehlo.constant dense<0.5> : tensor<f32>\n"
      "      %hb = stablehlo.broadcast_in_dim %h, dims = [] : (tensor<f32>) -> tensor<4x8xf32>\n"
      "      %hf = stablehlo.multiply %hb, %a : tensor<4x8xf32>\n"
      "      %hg = stablehlo.add %hf, %g : tensor<4x8xf32>\n"
      "      %ar = stablehlo.reshape %a : (tensor<4x8xf32>) -> tensor<32xf32>\n"
      "      %ex = stablehlo.exponential %ar : tensor<32xf32>\n"
      "      %eb = stablehlo.reshape %ex : (tensor<32xf32>) -> tensor<4x8xf32>\n"
      "      %tb = stablehlo.broadcast_in_dim %t, dims = [] : (tensor<f32>) -> tensor<4x8xf32>\n"
      "      %tt = stablehlo.multiply %tb, %tb : tensor<4x8xf32>\n"
      "      %v = stablehlo.add %u, %hg : tensor<4x8xf32>\n"
      "      %v2 = stablehlo.add %v, %eb : tensor<4x8xf32>\n"
      "      %v3 = stablehlo.add %v2, %tt : tensor<4x8xf32>\n"
      "      %q:2 = stablehlo.while(%j = %z, %w = %v3) : tensor<i32>, tensor<4x8xf32>\n"
      "        cond {\n"
      "          %c2 = stablehlo.compare LT, %j, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
      "          stablehlo.return %c2 : tensor<i1>\n"
      "        } do {\n"
      "          %cs = stablehlo.cosine %a : tensor<4x8xf32>\n"
      "          %w2 = stablehlo.add %w, %cs : tensor<4x8xf32>\n"
      "          %j2 = stablehlo.add %j, %one : tensor<i32>\n"
      "          stablehlo.return %j2, %w2 : tensor<i32>, tensor<4x8xf32>\n"
      "        }\n"
      "      %i2 = stablehlo.add %i, %one : tensor<i32>\n"
      "      stablehlo.return %i2, %a, %q#1, %t : tensor<i32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<f32>\n"
      "    }\n"
      "  return %r#2 : tensor<4x8xf32>\n}\n";
  cj_module *m = parse(text);
  if (!m) return;
  cj_op *main = NULL;
  cj_status st = run_passes(m, &main);
  CHECK_MSG(st == NULL, "%s", cj_status_message(st));
  cj_status_free(st);
  cj_block *top = main ? cj_func_body(main) : NULL;
  cj_op *w = find_in(top, "stablehlo.while");
  cj_block *body = w && w->nregions == 2 ? w->regions[1].first : NULL;
  cj_op *w2 = find_in(body, "stablehlo.while");
  cj_block *body2 = w2 && w2->nregions == 2 ? w2->regions[1].first : NULL;
  CHECK(body && body2);
  /* moved: hf, hg (reads sine(f) from outside), exp of the reshape, and the inner cosine */
  CHECK_EQ_INT(count_in(top, "stablehlo.multiply"), 1);
  CHECK_EQ_INT(count_in(top, "stablehlo.exponential"), 1);
  CHECK_EQ_INT(count_in(top, "stablehlo.cosine"), 1);
  CHECK_EQ_INT(count_in(top, "stablehlo.add"), 1);
  CHECK_EQ_INT(count_in(body2, "stablehlo.cosine"), 0);
  CHECK_EQ_INT(count_in(body, "stablehlo.exponential"), 0);
  /* stay: the adds of the carried u, t * t of broadcasts only, the counters */
  CHECK_EQ_INT(count_in(body, "stablehlo.multiply"), 1);
  CHECK_EQ_INT(count_in(body, "stablehlo.add"), 4);
  CHECK_EQ_INT(count_in(body2, "stablehlo.add"), 2);
  cj_status vs = cj_verify_module(m);
  CHECK_MSG(vs == NULL, "%s", cj_status_message(vs));
  cj_status_free(vs);
  cj_module_free(m);

  /* run on the CPU backend: 0.5 * a moved out, read by every iteration (exact sums) */
  m = parse(
      "func.func @main(%f: tensor<4x8xf32>, %u0: tensor<4x8xf32>) -> tensor<4x8xf32> {\n"
      "  %z = stablehlo.constant dense<0> : tensor<i32>\n"
      "  %r:3 = stablehlo.while(%i = %z, %a = %f, %u = %u0) : tensor<i32>, tensor<4x8xf32>, tensor<4x8xf32>\n"
      "    cond {\n"
      "      %n = stablehlo.constant dense<3> : tensor<i32>\n"
      "      %c = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
      "      stablehlo.return %c : tensor<i1>\n"
      "    } do {\n"
      "      %h = stablehlo.constant dense<0.5> : tensor<4x8xf32>\n"
      "      %hf = stablehlo.multiply %h, %a : tensor<4x8xf32>\n"
      "      %u2 = stablehlo.add %u, %hf : tensor<4x8xf32>\n"
      "      %one = stablehlo.constant dense<1> : tensor<i32>\n"
      "      %i2 = stablehlo.add %i, %one : tensor<i32>\n"
      "      stablehlo.return %i2, %a, %u2 : tensor<i32>, tensor<4x8xf32>, tensor<4x8xf32>\n"
      "    }\n"
      "  return %r#2 : tensor<4x8xf32>\n}\n");
  if (!m) return;
  cj_backend *b = cj_backend_cpu();
  cj_compiled *p = NULL;
  cj_compile_options o = {1, 1, NULL, false, false};
  st = cj_compile_module(b, m, &o, &p);
  CHECK_MSG(st == NULL, "%s", cj_status_message(st));
  cj_status_free(st);
  if (p) {
    float f[32], u0[32], r[32] = {0};
    for (int i = 0; i < 32; i++) f[i] = (float)(i - 7), u0[i] = (float)(3 * i) * 0.25f;
    void *args[2] = {f, u0}, *res[1] = {r};
    cj_exec_args a;
    memset(&a, 0, sizeof a);
    a.args = args;
    a.results = res;
    st = b->vt->execute(b, p->program, &a);
    CHECK(st == NULL);
    cj_status_free(st);
    for (int i = 0; i < 32; i++)
      CHECK_MSG(r[i] == u0[i] + 1.5f * f[i], "element %d: %g vs %g", i, r[i], u0[i] + 1.5f * f[i]);
    cj_compiled_free(p);
  }
}

/* the linear algebra custom calls are pure: inv and slogdet of one matrix share its getrf (as
 * XLA's CSE does); a call that declares a side effect, another target or other attributes stays */
static void test_cse_lapack(void) {
  const char *getrf = "stablehlo.custom_call @lapack_sgetrf_ffi(%a) {mhlo.backend_config = {}, "
                      "uplo = 76 : ui8} : (tensor<3x3xf32>) "
                      "-> (tensor<3x3xf32>, tensor<3xi32>, tensor<i32>)\n";
  char text[4096];
  snprintf(text, sizeof text,
           "func.func @main(%%a: tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<3x3xf32>, "
           "tensor<3xi32>, tensor<3xi32>, tensor<3xi32>, tensor<3xi32>) {\n"
           "  %%l1:3 = %s  %%l2:3 = %s"
           "  %%l3:3 = stablehlo.custom_call @lapack_sgetrf_ffi(%%a) {has_side_effect = true} : "
           "(tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<3xi32>, tensor<i32>)\n"
           "  %%p1 = stablehlo.custom_call @cjrt_lu_pivots_to_permutation(%%l1#1) : "
           "(tensor<3xi32>) -> tensor<3xi32>\n"
           "  %%p2 = stablehlo.custom_call @cjrt_lu_pivots_to_permutation(%%l2#1) : "
           "(tensor<3xi32>) -> tensor<3xi32>\n"
           "  %%u = stablehlo.custom_call @user_thing(%%l1#1) : (tensor<3xi32>) -> tensor<3xi32>\n"
           "  return %%l1#0, %%l2#0, %%l3#1, %%p1, %%p2, %%u : tensor<3x3xf32>, tensor<3x3xf32>, "
           "tensor<3xi32>, tensor<3xi32>, tensor<3xi32>, tensor<3xi32>\n}\n",
           getrf, getrf);
  cj_module *m = parse(text);
  if (!m) return;
  cj_op *main = NULL;
  cj_status st = run_passes(m, &main);
  CHECK_MSG(st == NULL, "%s", cj_status_message(st));
  cj_status_free(st);
  CHECK_EQ_INT(count(m, "stablehlo.custom_call"), 4); /* l2 is l1, p2 is p1; l3 and u stay */
  cj_block *b = main ? cj_func_body(main) : NULL;
  const cj_op *ret = b ? b->last : NULL;
  CHECK(ret && ret->nopnds == 6);
  if (ret && ret->nopnds == 6) {
    CHECK(ret->operands[0] == ret->operands[1]);
    CHECK(ret->operands[3] == ret->operands[4]);
    CHECK(ret->operands[2] != ret->operands[3]);
  }
  cj_module_free(m);
}

/* opfacts.def against ops.def: an elementwise op (the EW flag) takes the elementwise shape and
 * sharding rules and nothing else does, so that a row copied from a neighbour cannot contradict
 * the op's flags. */
static void test_opfacts_rows(void) {
  static const struct {
    cj_op_kind kind;
    const char *infer, *spmd;
  } rows[] = {
#define OPF(id, infer, canon, ev, quant, va, spmd, ...) {CJ_OP_##id, #infer, #spmd},
#include "ir/opfacts.def"
#undef OPF
  };
  CHECK_EQ_INT((int)(sizeof rows / sizeof rows[0]), CJ_OP_COUNT);
  for (int k = 0; k < CJ_OP_COUNT; k++) {
    bool ew = (cj_op_info_get(rows[k].kind)->flags & CJ_OPF_ELEMENTWISE) != 0;
    const char *name = cj_op_info_get(rows[k].kind)->name;
    CHECK_EQ_INT((int)rows[k].kind, k);
    CHECK_MSG(ew == (strcmp(rows[k].infer, "inf_elementwise") == 0), "%s: INFER %s", name,
              rows[k].infer);
    CHECK_MSG(ew == (strcmp(rows[k].spmd, "rule_ew") == 0), "%s: SPMD %s", name, rows[k].spmd);
  }
}

int main(void) {
  test_inline();
  test_late_calls();
  test_identities();
  test_chlo();
  test_fold_dce();
  test_cse();
  test_cse_lapack();
  test_licm();
  test_opfacts_rows();
  return check_report("compiler_passes");
}
