/* Convolution programs the CPU backend cannot run must fail at compile time with an
 * error naming the op, its location and the reason (never at run time). */
#include <stdlib.h>
#include <string.h>

#include "../common/check.h"
#include "frontend/frontend.h"
#include "runtime/backend.h"
#include "../common/compile_check.h"

int main(void) {
  /* dynamic_conv whose padding is computed at run time */
  char *e = tc_compile_error(
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
  e = tc_compile_error(
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
