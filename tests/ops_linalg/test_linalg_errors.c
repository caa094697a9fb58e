/* Linear algebra and random-number programs the CPU backend cannot run fail at compile time with
 * an error naming the op, its location and the reason (never at run time); the ones it can run
 * compile. */
#include <stdlib.h>
#include <string.h>

#include "../common/check.h"
#include "frontend/frontend.h"
#include "runtime/backend.h"
#include "../common/compile_check.h"

#define expect_error(text, where, what) \
  tc_expect_compile_error_at((text), (where), (what), __LINE__)

#define RBG(state, out, alg)                                                                    \
  "func.func @main(%s: " state ") -> " out " {\n"                                               \
  "  %os, %o = stablehlo.rng_bit_generator %s, algorithm = " alg " : (" state ") -> (" state    \
  ", " out ")\n"                                                                                \
  "  func.return %o : " out "\n}\n"

#define EIN(cfg, ta, tb, to)                                                                    \
  "func.func @main(%a: " ta ", %b: " tb ") -> " to " {\n"                                        \
  "  %y = \"stablehlo.einsum\"(%a, %b) {einsum_config = \"" cfg "\"} : (" ta ", " tb ") -> " to  \
  "\n  func.return %y : " to "\n}\n"

int main(void) {
  /* rng_bit_generator: the state's type and size, the output's type */
  expect_error(RBG("tensor<4xui32>", "tensor<8xui32>", "THREE_FRY"),
               "stablehlo.rng_bit_generator at prog.mlir:2:", "initial_state must be a 1-dimensional tensor of ui64");
  expect_error(RBG("tensor<3xui64>", "tensor<8xui32>", "THREE_FRY"),
               "stablehlo.rng_bit_generator at prog.mlir:2:", "a THREE_FRY state has 2 elements, got 3");
  expect_error(RBG("tensor<4xui64>", "tensor<8xui32>", "PHILOX"),
               "stablehlo.rng_bit_generator at prog.mlir:2:", "a PHILOX state has 2 or 3 elements, got 4");
  expect_error(RBG("tensor<2xui64>", "tensor<8xf6E2M3FN>", "DEFAULT"),
               "stablehlo.rng_bit_generator", "output element type F6E2M3FN is not supported");
  expect_ok(RBG("tensor<3xui64>", "tensor<8x3xbf16>", "DEFAULT"));
  expect_ok(RBG("tensor<2xi64>", "tensor<ui4>", "THREE_FRY"));

  /* rng: NORMAL needs floats (the verifier says so first), integers and floats compile */
  expect_ok("func.func @main(%a: tensor<i16>, %b: tensor<i16>) -> tensor<3x4xi16> {\n"
            "  %s = stablehlo.constant dense<[3, 4]> : tensor<2xi64>\n"
            "  %r = stablehlo.rng %a, %b, %s, distribution = UNIFORM : (tensor<i16>, tensor<i16>, "
            "tensor<2xi64>) -> tensor<3x4xi16>\n"
            "  func.return %r : tensor<3x4xi16>\n}\n");

  /* einsum: configurations the verifier accepts but that do not fit the operands */
  expect_error(EIN("ab,bc->ac", "tensor<2x3xf32>", "tensor<4x5xf32>", "tensor<2x5xf32>"),
               "stablehlo.einsum at prog.mlir:2:", "einsum: label 'b' has sizes 3 and 4");
  expect_error(EIN("ab,bc->ac", "tensor<2x3x4xf32>", "tensor<3x5xf32>", "tensor<2x5xf32>"),
               "stablehlo.einsum", "a term has 2 labels for an operand of rank 3");
  expect_error(EIN("ab,bc->aa", "tensor<2x3xf32>", "tensor<3x2xf32>", "tensor<2x2xf32>"),
               "stablehlo.einsum", "a label repeated in the result");
  expect_error(EIN("ab,bc->az", "tensor<2x3xf32>", "tensor<3x2xf32>", "tensor<2x2xf32>"),
               "stablehlo.einsum", "result label 'z' is in no operand");
  expect_error(EIN("a1,1c->ac", "tensor<2x3xf32>", "tensor<3x2xf32>", "tensor<2x2xf32>"),
               "stablehlo.einsum", "einsum_config: '1' is not a label");
  expect_error(EIN("a..,bc->ac", "tensor<2x3xf32>", "tensor<3x2xf32>", "tensor<2x2xf32>"),
               "stablehlo.einsum", "a malformed or repeated '...'");
  expect_error(EIN("ab,bc->ac", "tensor<2x3xf32>", "tensor<3x2xf32>", "tensor<2x3xf32>"),
               "stablehlo.einsum", "result dimension 1 has size 3, its label has 2");
  expect_ok(EIN("...ab,b->...a", "tensor<4x1x2x3xf32>", "tensor<3xf32>", "tensor<4x1x2xf32>"));
  expect_ok(EIN("ab,bc->ac", "tensor<2x3xi4>", "tensor<3x2xi4>", "tensor<2x2xi8>"));

  /* cholesky / triangular_solve / batch_norm on the types they support compile */
  expect_ok("func.func @main(%a: tensor<2x5x5xf8E4M3FN>) -> tensor<2x5x5xf8E4M3FN> {\n"
            "  %l = stablehlo.cholesky %a, lower = true : tensor<2x5x5xf8E4M3FN>\n"
            "  func.return %l : tensor<2x5x5xf8E4M3FN>\n}\n");
  expect_ok("func.func @main(%a: tensor<3x3xcomplex<f64>>, %b: tensor<2x3xcomplex<f64>>) -> "
            "tensor<2x3xcomplex<f64>> {\n"
            "  %x = \"stablehlo.triangular_solve\"(%a, %b) {left_side = false, lower = true, "
            "unit_diagonal = true, transpose_a = #stablehlo<transpose ADJOINT>} : "
            "(tensor<3x3xcomplex<f64>>, tensor<2x3xcomplex<f64>>) -> tensor<2x3xcomplex<f64>>\n"
            "  func.return %x : tensor<2x3xcomplex<f64>>\n}\n");
  return check_report("ops_linalg_errors");
}
