/* jaxlib's LAPACK custom calls with a wrong operand count, element type, shape, attribute or
 * layout fail at compile time with an error naming the op, its location, the target and the
 * reason; an unknown lapack_* target (or any other unknown target) fails naming it; well-formed
 * calls compile. */
#include <stdlib.h>
#include <string.h>

#include "../common/check.h"
#include "frontend/frontend.h"
#include "runtime/backend.h"
#include "../common/compile_check.h"

#define expect_error(text, what) \
  tc_expect_compile_error_at((text), "stablehlo.custom_call at prog.mlir:2:", (what), __LINE__)

/* potrf-shaped: one operand, (matrix, info) results */
#define CC2(target, attrs, ta, tr0, tr1)                                                        \
  "func.func @main(%a: " ta ") -> (" tr0 ", " tr1 ") {\n"                                       \
  "  %r:2 = stablehlo.custom_call @" target "(%a) " attrs " : (" ta ") -> (" tr0 ", " tr1 ")\n" \
  "  func.return %r#0, %r#1 : " tr0 ", " tr1 "\n}\n"

#define CM3 "operand_layouts = [dense<[1, 2, 0]> : tensor<3xindex>], "
#define RL3 "result_layouts = [dense<[1, 2, 0]> : tensor<3xindex>, dense<0> : tensor<1xindex>]"

#ifdef CJRT_HAVE_LAPACK
void dpotrf_(const char *, const int *, double *, const int *, int *, size_t);
#endif

int main(void) {
#ifdef CJRT_HAVE_LAPACK
  { /* an illegal argument reaching LAPACK returns info = -i: the plugin's xerbla_ replaces the
     * reference one, which would stop the process */
    double a[4] = {4, 0, 0, 4};
    int n = 2, lda = 2, info = 0;
    dpotrf_("X", &n, a, &lda, &info, 1);
    CHECK_EQ_INT(info, -1);
  }
#endif
  expect_ok(CC2("lapack_spotrf_ffi", "{mhlo.backend_config = {uplo = 76 : ui8}, " CM3 RL3 "}",
                "tensor<2x3x3xf32>", "tensor<2x3x3xf32>", "tensor<2xi32>"));
  expect_ok(CC2("lapack_zpotrf_ffi", "{mhlo.backend_config = {uplo = 85 : ui8}}",
                "tensor<3x3xcomplex<f64>>", "tensor<3x3xcomplex<f64>>", "tensor<i32>"));
  /* element types follow the target's letter */
  expect_error(CC2("lapack_dpotrf_ffi", "{mhlo.backend_config = {uplo = 76 : ui8}}",
                   "tensor<3x3xf32>", "tensor<3x3xf32>", "tensor<i32>"),
               "custom_call @lapack_dpotrf_ffi: operand 0 must have element type F64, got F32");
  expect_error(CC2("lapack_spotrf_ffi", "{mhlo.backend_config = {uplo = 76 : ui8}}",
                   "tensor<3x3xf32>", "tensor<3x3xf32>", "tensor<f32>"),
               "result 1 must have element type S32, got F32");
  /* attributes */
  expect_error(CC2("lapack_spotrf_ffi", "", "tensor<3x3xf32>", "tensor<3x3xf32>", "tensor<i32>"),
               "custom_call @lapack_spotrf_ffi needs the integer attribute uplo in mhlo.backend_config");
  expect_error(CC2("lapack_spotrf_ffi", "{mhlo.backend_config = {uplo = 88 : ui8}}",
                   "tensor<3x3xf32>", "tensor<3x3xf32>", "tensor<i32>"),
               "attribute uplo = 88 is not one of 'LU'");
  /* shapes */
  expect_error(CC2("lapack_spotrf_ffi", "{mhlo.backend_config = {uplo = 76 : ui8}}",
                   "tensor<3x4xf32>", "tensor<3x4xf32>", "tensor<i32>"),
               "custom_call @lapack_spotrf_ffi: operand 0 must be square");
  expect_error(CC2("lapack_spotrf_ffi", "{mhlo.backend_config = {uplo = 76 : ui8}}",
                   "tensor<2x3x3xf32>", "tensor<2x3x3xf32>", "tensor<3xi32>"),
               "result 1 does not have operand 0's batch dimensions");
  expect_error(CC2("lapack_sgeqrf_ffi", "", "tensor<5x3xf32>", "tensor<5x3xf32>", "tensor<5xf32>"),
               "result 1 (taus) must have min(m, n) = 3 elements");
  expect_error("func.func @main(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {\n"
               "  %r = stablehlo.custom_call @lapack_sgetrf_ffi(%a) : (tensor<4x4xf32>) -> "
               "tensor<4x4xf32>\n"
               "  func.return %r : tensor<4x4xf32>\n}\n",
               "custom_call @lapack_sgetrf_ffi takes 1 operands and returns 3 results, got 1 and 1");
  /* layouts: batch dimensions must stay major */
  expect_error(CC2("lapack_spotrf_ffi",
                   "{mhlo.backend_config = {uplo = 76 : ui8}, operand_layouts = [dense<[0, 1, 2]> "
                   ": tensor<3xindex>], " RL3 "}",
                   "tensor<2x3x3xf32>", "tensor<2x3x3xf32>", "tensor<2xi32>"),
               "the layout of operand 0 is not supported");
  /* gees: sorting is not implemented (jaxlib neither) */
  expect_error("func.func @main(%a: tensor<3x3xf64>) -> tensor<3x3xf64> {\n"
               "  %r:6 = stablehlo.custom_call @lapack_dgees_ffi(%a) {mhlo.backend_config = "
               "{mode = 86 : ui8, sort = 83 : ui8}} : (tensor<3x3xf64>) -> (tensor<3x3xf64>, "
               "tensor<3x3xf64>, tensor<3xf64>, tensor<3xf64>, tensor<i32>, tensor<i32>)\n"
               "  func.return %r#0 : tensor<3x3xf64>\n}\n",
               "sorting the eigenvalues (sort = 'S') is not implemented");
  /* unknown targets fail naming the target */
  expect_error(CC2("lapack_spotrf", "", "tensor<3x3xf32>", "tensor<3x3xf32>", "tensor<i32>"),
               "custom_call @lapack_spotrf is not supported by the CPU backend");
  expect_error(CC2("lapack_sfoo_ffi", "", "tensor<3x3xf32>", "tensor<3x3xf32>", "tensor<i32>"),
               "custom_call @lapack_sfoo_ffi is not supported by the CPU backend");
  expect_error(CC2("lapack_xpotrf_ffi", "", "tensor<3x3xf32>", "tensor<3x3xf32>", "tensor<i32>"),
               "custom_call @lapack_xpotrf_ffi is not supported by the CPU backend");
  expect_error(CC2("lapack_sorgqr_ffi_", "", "tensor<3x3xf32>", "tensor<3x3xf32>", "tensor<i32>"),
               "custom_call @lapack_sorgqr_ffi_ is not supported by the CPU backend");
  expect_error(CC2("lapack_cheevd_ffi_x", "", "tensor<3x3xf32>", "tensor<3x3xf32>", "tensor<i32>"),
               "is not supported by the CPU backend");
  /* the complex routine names are the complex ones: no csyevd, no dheevd */
  expect_error(CC2("lapack_csyevd_ffi", "", "tensor<3x3xf32>", "tensor<3x3xf32>", "tensor<i32>"),
               "custom_call @lapack_csyevd_ffi is not supported by the CPU backend");
  expect_error(CC2("lapack_dheevd_ffi", "", "tensor<3x3xf32>", "tensor<3x3xf32>", "tensor<i32>"),
               "custom_call @lapack_dheevd_ffi is not supported by the CPU backend");
  expect_error(CC2("cusolver_potrf_ffi", "", "tensor<3x3xf32>", "tensor<3x3xf32>", "tensor<i32>"),
               "custom_call @cusolver_potrf_ffi is not supported by the CPU backend");
  /* tridiagonal_solve_perturbed_ffi (k_tridiag.c): dl, d, du [batch, n], b [batch, n, k] */
#define TP(td, tb, tr)                                                                       \
  "func.func @main(%dl: " td ", %d: " td ", %du: " td ", %b: " tb ") -> " tr " {\n"         \
  "  %r = stablehlo.custom_call @tridiagonal_solve_perturbed_ffi(%dl, %d, %du, %b) : (" td  \
  ", " td ", " td ", " tb ") -> " tr "\n"                                                   \
  "  func.return %r : " tr "\n}\n"
  expect_ok(TP("tensor<2x5xf32>", "tensor<2x5x3xf32>", "tensor<2x5x3xf32>"));
  expect_ok(TP("tensor<5xcomplex<f64>>", "tensor<5x1xcomplex<f64>>", "tensor<5x1xcomplex<f64>>"));
  expect_error(TP("tensor<2x5xi32>", "tensor<2x5x3xi32>", "tensor<2x5x3xi32>"),
               "custom_call @tridiagonal_solve_perturbed_ffi: element type i32 is not one of");
  expect_error(TP("tensor<2x4xf32>", "tensor<2x5x3xf32>", "tensor<2x5x3xf32>"),
               "operand 0 must be f32 with b's shape less its last dimension");
  expect_error(TP("tensor<2x5xf64>", "tensor<2x5x3xf32>", "tensor<2x5x3xf32>"),
               "operand 0 must be f32 with b's shape");
  expect_error(TP("tensor<2x5xf32>", "tensor<2x5x3xf32>", "tensor<2x5x2xf32>"),
               "the result must have b's type");
  expect_error(TP("tensor<f32>", "tensor<5xf32>", "tensor<5xf32>"),
               "operand 3 (b) must have rank >= 2");
#undef TP
  /* cjrt's own @cjrt_lu_pivots_to_permutation (k_lapack_perm.c) */
#define P2P(ta, tr)                                                                           \
  "func.func @main(%a: " ta ") -> " tr " {\n"                                                \
  "  %r = stablehlo.custom_call @cjrt_lu_pivots_to_permutation(%a) : (" ta ") -> " tr "\n" \
  "  func.return %r : " tr "\n}\n"
  expect_ok(P2P("tensor<2x3xi32>", "tensor<2x5xi32>"));
  expect_ok(P2P("tensor<0x3xi32>", "tensor<0x3xi32>"));
  expect_error(P2P("tensor<2x3xi32>", "tensor<3x3xi32>"),
               "custom_call @cjrt_lu_pivots_to_permutation takes one operand, int32 pivots");
  expect_error(P2P("tensor<3xi64>", "tensor<3xi64>"), "returns one int32 result");
  expect_error(P2P("tensor<4xi32>", "tensor<3xi32>"),
               "the permutation (3) must be at least as long as the pivots (4)");
#undef P2P
  return check_report("ops_lapack_errors");
}
