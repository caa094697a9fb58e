/* Convolution programs the CPU backend cannot run must fail at compile time with an
 * error naming the op, its location and the reason (never at run time). */
#include <stdlib.h>
#include <string.h>

#include "../common/check.h"
#include "frontend/frontend.h"
#include "runtime/backend.h"
#include "runtime/compile.h"

/* Parses, verifies and compiles `text`; returns the compile error message (malloc'ed) or NULL
 * when it compiled. */
static char *compile_error(const char *text) {
  cj_module *m = NULL;
  cj_status st = cj_parse_mlir_text(text, strlen(text), "prog.mlir", &m);
  if (!st) st = cj_verify_module(m);
  if (st) {
    fprintf(stderr, "unexpected parse/verify failure: %s\n", cj_status_message(st));
    cj_status_free(st);
    cj_module_free(m);
    return strdup("(parse or verify failed)");
  }
  cj_backend *b = cj_backend_cpu();
  cj_compiled *p = NULL;
  cj_compile_options o = {1, 1, NULL, false, false};
  st = cj_compile_module(b, m, &o, &p);
  if (!st) {
    cj_compiled_free(p);
    return NULL;
  }
  char *msg = strdup(cj_status_message(st));
  cj_status_free(st);
  return msg;
}

int main(void) {
  /* dynamic_conv whose padding is computed at run time */
  char *e = compile_error(
      "func.func @main(%l: tensor<1x4x4x1xf32>, %r: tensor<3x3x1x1xf32>, %p: tensor<2x2xi64>) "
      "-> tensor<1x2x2x1xf32> {\n"
      "  %0 = \"stablehlo.dynamic_conv\"(%l, %r, %p) {batch_group_count = 1 : i64, "
      "dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>, "
      "feature_group_count = 1 : i64, window_strides = array<i64: 2, 2>} : "
      "(tensor<1x4x4x1xf32>, tensor<3x3x1x1xf32>, tensor<2x2xi64>) -> tensor<1x2x2x1xf32>\n"
      "  func.return %0 : tensor<1x2x2x1xf32>\n}\n");
  CHECK(e != NULL);
  CHECK_CONTAINS(e, "stablehlo.dynamic_conv at prog.mlir:2:");
  CHECK_CONTAINS(e, "dynamic_conv needs a constant padding operand");
  free(e);

  /* the same with a constant padding compiles */
  e = compile_error(
      "func.func @main(%l: tensor<1x4x4x1xf32>, %r: tensor<3x3x1x1xf32>) -> tensor<1x2x2x1xf32> {\n"
      "  %p = stablehlo.constant dense<1> : tensor<2x2xi64>\n"
      "  %0 = \"stablehlo.dynamic_conv\"(%l, %r, %p) {batch_group_count = 1 : i64, "
      "dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>, "
      "feature_group_count = 1 : i64, window_strides = array<i64: 2, 2>} : "
      "(tensor<1x4x4x1xf32>, tensor<3x3x1x1xf32>, tensor<2x2xi64>) -> tensor<1x2x2x1xf32>\n"
      "  func.return %0 : tensor<1x2x2x1xf32>\n}\n");
  CHECK_MSG(e == NULL, "%s", e ? e : "");
  free(e);

  return check_report("ops_conv_errors");
}
