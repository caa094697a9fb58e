/* The linear algebra custom calls (@Qr, @ProductOfElementaryHouseholderReflectors, @Eigh) with
 * wrong operand counts, types, shapes or backend_config fail at compile time with an error
 * naming the op, its location and the reason; well-formed ones compile. */
#include <stdlib.h>
#include <string.h>

#include "../common/check.h"
#include "frontend/frontend.h"
#include "runtime/backend.h"
#include "../common/compile_check.h"

#define expect_error(text, what) \
  tc_expect_compile_error_at((text), "stablehlo.custom_call at prog.mlir:2:", (what), __LINE__)

/* one operand, two results */
#define CC1(target, cfg, ta, tr0, tr1)                                                          \
  "func.func @main(%a: " ta ") -> (" tr0 ", " tr1 ") {\n"                                       \
  "  %r:2 = stablehlo.custom_call @" target "(%a) " cfg ": (" ta ") -> (" tr0 ", " tr1 ")\n"   \
  "  func.return %r#0, %r#1 : " tr0 ", " tr1 "\n}\n"

/* two operands, one result */
#define HP(ta, tt, tr)                                                                          \
  "func.func @main(%a: " ta ", %t: " tt ") -> " tr " {\n"                                       \
  "  %r = stablehlo.custom_call @ProductOfElementaryHouseholderReflectors(%a, %t) : (" ta ", " \
  tt ") -> " tr "\n"                                                                            \
  "  func.return %r : " tr "\n}\n"

int main(void) {
  /* @Qr */
  expect_ok(CC1("Qr", "", "tensor<2x5x3xf32>", "tensor<2x5x3xf32>", "tensor<2x3xf32>"));
  expect_ok(CC1("Qr", "", "tensor<3x5xcomplex<f64>>", "tensor<3x5xcomplex<f64>>",
                "tensor<3xcomplex<f64>>"));
  expect_error(CC1("Qr", "", "tensor<5x3xf32>", "tensor<5x3xf32>", "tensor<5xf32>"),
               "custom_call @Qr: result 1 (taus) must have the operand's element type");
  expect_error(CC1("Qr", "", "tensor<5x3xf32>", "tensor<5x3xf64>", "tensor<3xf32>"),
               "custom_call @Qr: result 0 (the factored matrix) must have the operand's type");
  expect_error(CC1("Qr", "", "tensor<5x3xi32>", "tensor<5x3xi32>", "tensor<3xi32>"),
               "custom_call @Qr: operand 0 must have a floating-point or complex element type, got S32");
  expect_error(CC1("Qr", "", "tensor<5xf32>", "tensor<5xf32>", "tensor<1xf32>"),
               "custom_call @Qr: operand 0 must be a batch of matrices (rank >= 2), got rank 1");
  expect_error("func.func @main(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {\n"
               "  %r = stablehlo.custom_call @Qr(%a) : (tensor<4x4xf32>) -> tensor<4x4xf32>\n"
               "  func.return %r : tensor<4x4xf32>\n}\n",
               "custom_call @Qr takes 1 operand and returns 2 results, got 1 and 1");

  /* @ProductOfElementaryHouseholderReflectors */
  expect_ok(HP("tensor<3x6x4xf64>", "tensor<3x2xf64>", "tensor<3x6x4xf64>"));
  expect_ok(HP("tensor<4x4xcomplex<f32>>", "tensor<0xcomplex<f32>>", "tensor<4x4xcomplex<f32>>"));
  expect_error(HP("tensor<3x4xf32>", "tensor<3xf32>", "tensor<3x4xf32>"),
               "must have at least as many rows as columns, got 3 x 4");
  expect_error(HP("tensor<6x4xf32>", "tensor<5xf32>", "tensor<6x4xf32>"),
               "5 taus for 4 columns");
  expect_error(HP("tensor<2x6x4xf32>", "tensor<3x4xf32>", "tensor<2x6x4xf32>"),
               "operand 1 (taus) must have operand 0's element type and shape [batch..., k]");
  expect_error(HP("tensor<6x4xf32>", "tensor<4xf64>", "tensor<6x4xf32>"),
               "operand 1 (taus) must have operand 0's element type");
  expect_error(HP("tensor<6x4xf32>", "tensor<4xf32>", "tensor<6x3xf32>"),
               "the result must have operand 0's type");
  expect_error("func.func @main(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {\n"
               "  %r = stablehlo.custom_call @ProductOfElementaryHouseholderReflectors(%a) : "
               "(tensor<4x4xf32>) -> tensor<4x4xf32>\n"
               "  func.return %r : tensor<4x4xf32>\n}\n",
               "takes 2 operands and returns 1 results, got 1 and 1");

  /* @Eigh */
  expect_ok(CC1("Eigh", "{backend_config = \"1,1,100,1e-6\"} ", "tensor<2x4x4xcomplex<f32>>",
                "tensor<2x4x4xcomplex<f32>>", "tensor<2x4xf32>"));
  expect_ok(CC1("Eigh", "{backend_config = \"0,0,20,0\"} ", "tensor<3x3xf64>", "tensor<3x3xf64>",
                "tensor<3xf64>"));
  expect_error(CC1("Eigh", "", "tensor<2x4x4xcomplex<f32>>", "tensor<2x4x4xcomplex<f32>>",
                   "tensor<2x4xcomplex<f32>>"),
               "result 1 (the eigenvalues) must have element type F32 and shape [batch..., n]");
  expect_error(CC1("Eigh", "", "tensor<4x3xf32>", "tensor<4x3xf32>", "tensor<3xf32>"),
               "custom_call @Eigh: operand 0 must be square matrices, got 4 x 3");
  expect_error(CC1("Eigh", "{backend_config = \"1,1\"} ", "tensor<3x3xf32>", "tensor<3x3xf32>",
                   "tensor<3xf32>"),
               "custom_call @Eigh: backend_config \"1,1\" is not \"lower,sort_eigenvalues,max_iter,tol\"");
  expect_error(CC1("Eigh", "{backend_config = \"2,1,100,1e-6\"} ", "tensor<3x3xf32>",
                   "tensor<3x3xf32>", "tensor<3xf32>"),
               "is not \"lower,sort_eigenvalues,max_iter,tol\"");
  expect_error(CC1("Eigh", "{backend_config = \"1,1,100,1e-6\"} ", "tensor<3x3xf32>",
                   "tensor<3x3xf32>", "tensor<4xf32>"),
               "result 1 (the eigenvalues)");
  expect_error(CC1("Eigh", "{backend_config = \"1,1,100,1e-6\"} ", "tensor<3x3xui8>",
                   "tensor<3x3xui8>", "tensor<3xui8>"),
               "must have a floating-point or complex element type");
  return check_report("ops_linalg_cc_errors");
}
