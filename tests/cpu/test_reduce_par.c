/* The general reduce path (a body run as a nested plan) split over the outer positions on
 * several threads, each with its own copy of the body's buffers: argmax rows of a matrix (a
 * variadic body with ties broken by the lower index) against a plain C loop, with and without a
 * pool; and a body that reads a value from outside itself (runs on one copy). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../common/check.h"
#include "prog_util.h"

static void unused_helpers(void) { (void)tu_expect_bytes; }

enum { R = 300, C = 257 };

static const char *kArgmax =
    "func.func public @main(%arg0: tensor<300x257xf32>) -> (tensor<300xf32>, tensor<300xi32>) {\n"
    "  %iota = stablehlo.iota dim = 1 : tensor<300x257xi32>\n"
    "  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>\n"
    "  %zero = stablehlo.constant dense<0> : tensor<i32>\n"
    "  %r:2 = stablehlo.reduce(%arg0 init: %ninf), (%iota init: %zero) across dimensions = [1] : (tensor<300x257xf32>, tensor<300x257xi32>, tensor<f32>, tensor<i32>) -> (tensor<300xf32>, tensor<300xi32>)\n"
    "    reducer(%a: tensor<f32>, %c: tensor<f32>) (%b: tensor<i32>, %d: tensor<i32>) {\n"
    "      %gt = stablehlo.compare GT, %a, %c, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
    "      %eq = stablehlo.compare EQ, %a, %c, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
    "      %lt = stablehlo.compare LT, %b, %d, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
    "      %tie = stablehlo.and %eq, %lt : tensor<i1>\n"
    "      %take = stablehlo.or %gt, %tie : tensor<i1>\n"
    "      %v = stablehlo.select %take, %a, %c : tensor<i1>, tensor<f32>\n"
    "      %i = stablehlo.select %take, %b, %d : tensor<i1>, tensor<i32>\n"
    "      stablehlo.return %v, %i : tensor<f32>, tensor<i32>\n"
    "    }\n"
    "  return %r#0, %r#1 : tensor<300xf32>, tensor<300xi32>\n"
    "}\n";

/* sum of x * s over each row, s a value computed outside the body (a capture) */
static const char *kCapture =
    "func.func public @main(%arg0: tensor<300x257xf32>, %arg1: tensor<f32>) -> tensor<300xf32> {\n"
    "  %s = stablehlo.multiply %arg1, %arg1 : tensor<f32>\n"
    "  %zero = stablehlo.constant dense<0.0> : tensor<f32>\n"
    "  %r = stablehlo.reduce(%arg0 init: %zero) across dimensions = [1] : (tensor<300x257xf32>, tensor<f32>) -> tensor<300xf32>\n"
    "    reducer(%a: tensor<f32>, %c: tensor<f32>) {\n"
    "      %m = stablehlo.multiply %c, %s : tensor<f32>\n"
    "      %v = stablehlo.add %a, %m : tensor<f32>\n"
    "      stablehlo.return %v : tensor<f32>\n"
    "    }\n"
    "  return %r : tensor<300xf32>\n"
    "}\n";

int main(void) {
  (void)unused_helpers;
  static float x[R * C];
  uint32_t seed = 12345;
  for (int i = 0; i < R * C; i++) {
    seed = seed * 1664525u + 1013904223u;
    x[i] = (float)((seed >> 9) % 64); /* many ties */
  }
  float want_v[R];
  int32_t want_i[R];
  for (int r = 0; r < R; r++) {
    want_v[r] = -INFINITY;
    want_i[r] = 0;
    for (int c = 0; c < C; c++)
      if (x[r * C + c] > want_v[r]) {
        want_v[r] = x[r * C + c];
        want_i[r] = c;
      }
  }
  cj_compiled *p = tu_compile_ok("argmax", kArgmax);
  for (int pass = 0; p && pass < 2; pass++) {
    void *args[1] = {x}, *res[2] = {0};
    tu_run_ok("argmax run", p, args, res, pass ? tu_pool() : NULL);
    if (res[0] && res[1]) {
      CHECK_MSG(memcmp(res[0], want_v, sizeof want_v) == 0, "argmax values differ (pool %d)", pass);
      CHECK_MSG(memcmp(res[1], want_i, sizeof want_i) == 0, "argmax indices differ (pool %d)", pass);
    }
    free(res[0]);
    free(res[1]);
  }
  if (p) tu_free(p);
  p = tu_compile_ok("capture", kCapture);
  if (p) {
    float s = 0.5f;
    void *args[2] = {x, &s}, *res[1] = {0};
    tu_run_ok("capture run", p, args, res, tu_pool());
    for (int r = 0; res[0] && r < R; r++) {
      float acc = 0;
      for (int c = 0; c < C; c++) acc = acc + x[r * C + c] * 0.25f;
      CHECK_MSG(((float *)res[0])[r] == acc, "row %d: %g vs %g", r, (double)((float *)res[0])[r], (double)acc);
    }
    free(res[0]);
    tu_free(p);
  }
  return check_report("cpu_reduce_par");
}
