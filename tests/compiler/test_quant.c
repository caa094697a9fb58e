/* Tests for the quantization lowering (src/compiler/quant.c) on what the corpus does not
 * exercise: per-axis quantize, requantize, per-axis add with i32 storage, dot_general with
 * zero points on both sides (combined scale 1 and not), the weight-only (hybrid) dot, u8 and i4
 * storage, min/max of equal and of differing types. Expected values are hand-derived or computed
 * with numpy from the real-number formulas (see the comment at each case). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../common/check.h"
#include "../cpu/prog_util.h"

#define Q_AX "!quant.uniform<i8:f32:0, {0.1:-30,0.5:-20,2.0:5,0.25:0}>"

int main(void) {
  /* x / s + z, rounded half to even, clamped: 4/0.1-30 = 10, 15/0.5-20 = 10,
   * -3/2+5 = 3.5 -> 4, 100/0.25 = 400 -> 127 */
  {
    const char *t = "func.func @main() -> tensor<4xi8> {\n"
                    "  %x = stablehlo.constant dense<[4.0, 15.0, -3.0, 100.0]> : tensor<4xf32>\n"
                    "  %q = stablehlo.uniform_quantize %x : (tensor<4xf32>) -> tensor<4x" Q_AX ">\n"
                    "  %b = stablehlo.bitcast_convert %q : (tensor<4x" Q_AX ">) -> tensor<4xi8>\n"
                    "  return %b : tensor<4xi8>\n}\n";
    const int8_t want[4] = {10, 10, 4, 127};
    CHECK(tu_expect_bytes("per-axis quantize", t, want, sizeof want));
  }
  /* quantize at 0.5:-10 ([1, -2, 3.3] -> [-8, -14, -3]), requantize to 0.25:3:
   * q * 2 + 23 = [7, -5, 17] */
  {
    const char *t =
        "func.func @main() -> tensor<3xi8> {\n"
        "  %x = stablehlo.constant dense<[1.0, -2.0, 3.3]> : tensor<3xf32>\n"
        "  %q = stablehlo.uniform_quantize %x : (tensor<3xf32>) -> tensor<3x!quant.uniform<i8:f32, 0.5:-10>>\n"
        "  %r = stablehlo.uniform_quantize %q : (tensor<3x!quant.uniform<i8:f32, 0.5:-10>>) -> tensor<3x!quant.uniform<i8:f32, 0.25:3>>\n"
        "  %b = stablehlo.bitcast_convert %r : (tensor<3x!quant.uniform<i8:f32, 0.25:3>>) -> tensor<3xi8>\n"
        "  return %b : tensor<3xi8>\n}\n";
    const int8_t want[3] = {7, -5, 17};
    CHECK(tu_expect_bytes("requantize", t, want, sizeof want));
  }
  /* per-axis add, i32 storage, zero points {1, -2} along dim 1: a + b - zp */
  {
#define QA "!quant.uniform<i32:f32:1, {0.5:1,0.25:-2}>"
    const char *t =
        "func.func @main() -> tensor<2x2xi32> {\n"
        "  %a = stablehlo.constant dense<[[10, 20], [30, 40]]> : tensor<2x2xi32>\n"
        "  %b = stablehlo.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>\n"
        "  %qa = stablehlo.bitcast_convert %a : (tensor<2x2xi32>) -> tensor<2x2x" QA ">\n"
        "  %qb = stablehlo.bitcast_convert %b : (tensor<2x2xi32>) -> tensor<2x2x" QA ">\n"
        "  %s = stablehlo.add %qa, %qb : tensor<2x2x" QA ">\n"
        "  %r = stablehlo.bitcast_convert %s : (tensor<2x2x" QA ">) -> tensor<2x2xi32>\n"
        "  return %r : tensor<2x2xi32>\n}\n";
#undef QA
    const int32_t want[4] = {10, 24, 32, 46};
    CHECK(tu_expect_bytes("per-axis add", t, want, sizeof want));
  }
  /* dot_general with lhs zero point 2 (the spec wants 0 for a quantized rhs); numpy:
   * (l - 2) @ r = [[15, -45], [-10, 50]] when s_l * s_r / s_res = 1 */
  {
#define QL "!quant.uniform<i8:f32, 0.5:2>"
#define QR "!quant.uniform<i8:f32, 0.25>"
    const char *body =
        "  %l = stablehlo.constant dense<[[1, -3, 5], [7, 2, -8]]> : tensor<2x3xi8>\n"
        "  %r = stablehlo.constant dense<[[4, 0], [-2, 6], [3, -5]]> : tensor<3x2xi8>\n"
        "  %ql = stablehlo.bitcast_convert %l : (tensor<2x3xi8>) -> tensor<2x3x" QL ">\n"
        "  %qr = stablehlo.bitcast_convert %r : (tensor<3x2xi8>) -> tensor<3x2x" QR ">\n";
    char t[4096];
    snprintf(t, sizeof t,
             "func.func @main() -> tensor<2x2xi32> {\n%s"
             "  %%d = stablehlo.dot_general %%ql, %%qr, contracting_dims = [1] x [0] : "
             "(tensor<2x3x" QL ">, tensor<3x2x" QR ">) -> tensor<2x2x!quant.uniform<i32:f32, 0.125>>\n"
             "  %%o = stablehlo.bitcast_convert %%d : (tensor<2x2x!quant.uniform<i32:f32, 0.125>>) -> tensor<2x2xi32>\n"
             "  return %%o : tensor<2x2xi32>\n}\n",
             body);
    const int32_t want1[4] = {15, -45, -10, 50};
    CHECK(tu_expect_bytes("dot zero points", t, want1, sizeof want1));
    /* result 0.1:5, combined scale 1.25: the reference scales the raw dot and the zero-point
     * offset separately, truncating each to i32 (numpy: [[24, -50], [-7, 68]]) */
    snprintf(t, sizeof t,
             "func.func @main() -> tensor<2x2xi32> {\n%s"
             "  %%d = stablehlo.dot_general %%ql, %%qr, contracting_dims = [1] x [0] : "
             "(tensor<2x3x" QL ">, tensor<3x2x" QR ">) -> tensor<2x2x!quant.uniform<i32:f32, 0.1:5>>\n"
             "  %%o = stablehlo.bitcast_convert %%d : (tensor<2x2x!quant.uniform<i32:f32, 0.1:5>>) -> tensor<2x2xi32>\n"
             "  return %%o : tensor<2x2xi32>\n}\n",
             body);
    const int32_t want2[4] = {24, -50, -7, 68};
    CHECK(tu_expect_bytes("dot rescaled", t, want2, sizeof want2));
#undef QL
#undef QR
  }
  /* weight-only: f32 lhs, per-axis i8 rhs (dim 1: scales {0.5, 2});
   * numpy: lhs @ (r * s) = [[5, -32], [1.625, 10.5]] */
  {
#define QW "!quant.uniform<i8:f32:1, {0.5,2.0}>"
    const char *t =
        "func.func @main() -> tensor<2x2xf32> {\n"
        "  %l = stablehlo.constant dense<[[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]> : tensor<2x3xf32>\n"
        "  %r = stablehlo.constant dense<[[4, 0], [-2, 6], [3, -5]]> : tensor<3x2xi8>\n"
        "  %qr = stablehlo.bitcast_convert %r : (tensor<3x2xi8>) -> tensor<3x2x" QW ">\n"
        "  %d = stablehlo.dot_general %l, %qr, contracting_dims = [1] x [0] : (tensor<2x3xf32>, tensor<3x2x" QW ">) -> tensor<2x2xf32>\n"
        "  return %d : tensor<2x2xf32>\n}\n";
#undef QW
    const float want[4] = {5.0f, -32.0f, 1.625f, 10.5f};
    CHECK(tu_expect_bytes("hybrid dot", t, want, sizeof want));
  }
  /* u8 storage: (q - 128) * 0.5 */
  {
    const char *t =
        "func.func @main() -> tensor<3xf32> {\n"
        "  %r = stablehlo.constant dense<[0, 128, 255]> : tensor<3xui8>\n"
        "  %q = stablehlo.bitcast_convert %r : (tensor<3xui8>) -> tensor<3x!quant.uniform<u8:f32, 0.5:128>>\n"
        "  %d = stablehlo.uniform_dequantize %q : (tensor<3x!quant.uniform<u8:f32, 0.5:128>>) -> tensor<3xf32>\n"
        "  return %d : tensor<3xf32>\n}\n";
    const float want[3] = {-64.0f, 0.0f, 63.5f};
    CHECK(tu_expect_bytes("u8 dequantize", t, want, sizeof want));
  }
  /* i4 storage: 7.6 -> 7 (clamped), -9 -> -8 (clamped), 2.5 -> 2 (half to even) */
  {
    const char *t =
        "func.func @main() -> tensor<3xi8> {\n"
        "  %x = stablehlo.constant dense<[7.6, -9.0, 2.5]> : tensor<3xf32>\n"
        "  %q = stablehlo.uniform_quantize %x : (tensor<3xf32>) -> tensor<3x!quant.uniform<i4:f32, 1.0>>\n"
        "  %b = stablehlo.bitcast_convert %q : (tensor<3x!quant.uniform<i4:f32, 1.0>>) -> tensor<3xi4>\n"
        "  %c = stablehlo.convert %b : (tensor<3xi4>) -> tensor<3xi8>\n"
        "  return %c : tensor<3xi8>\n}\n";
    const int8_t want[3] = {7, -8, 2};
    CHECK(tu_expect_bytes("i4 quantize", t, want, sizeof want));
  }
  /* max of equal types compares the stored integers: [2, 5]; of different types it runs on
   * dequantized values: max([1, -2], [1.5, -0.5]) = [1.5, -0.5] -> at 0.5:0 -> [3, -1] */
  {
#define QH "!quant.uniform<i8:f32, 0.5>"
#define QQ "!quant.uniform<i8:f32, 0.25>"
    const char *t =
        "func.func @main() -> (tensor<2xi8>, tensor<2xi8>) {\n"
        "  %a = stablehlo.constant dense<[2, -4]> : tensor<2xi8>\n"
        "  %b = stablehlo.constant dense<[1, 5]> : tensor<2xi8>\n"
        "  %c = stablehlo.constant dense<[6, -2]> : tensor<2xi8>\n"
        "  %qa = stablehlo.bitcast_convert %a : (tensor<2xi8>) -> tensor<2x" QH ">\n"
        "  %qb = stablehlo.bitcast_convert %b : (tensor<2xi8>) -> tensor<2x" QH ">\n"
        "  %qc = stablehlo.bitcast_convert %c : (tensor<2xi8>) -> tensor<2x" QQ ">\n"
        "  %m1 = stablehlo.maximum %qa, %qb : tensor<2x" QH ">\n"
        "  %m2 = stablehlo.maximum %qa, %qc : (tensor<2x" QH ">, tensor<2x" QQ ">) -> tensor<2x" QH ">\n"
        "  %r1 = stablehlo.bitcast_convert %m1 : (tensor<2x" QH ">) -> tensor<2xi8>\n"
        "  %r2 = stablehlo.bitcast_convert %m2 : (tensor<2x" QH ">) -> tensor<2xi8>\n"
        "  return %r1, %r2 : tensor<2xi8>, tensor<2xi8>\n}\n";
#undef QH
#undef QQ
    cj_status err = NULL;
    cj_compiled *p = tu_compile(t, &err);
    CHECK_MSG(p, "max: %s", cj_status_message(err));
    cj_status_free(err);
    if (p) {
      void *res[2] = {0};
      cj_status st = tu_run(p, NULL, res, tu_pool());
      CHECK_MSG(!st, "max run: %s", cj_status_message(st));
      cj_status_free(st);
      const int8_t w1[2] = {2, 5}, w2[2] = {3, -1};
      CHECK(res[0] && memcmp(res[0], w1, 2) == 0);
      CHECK(res[1] && memcmp(res[1], w2, 2) == 0);
      free(res[0]);
      free(res[1]);
      tu_free(p);
    }
  }
  /* an op the lowering has no rule for is a compile error naming it */
  {
    const char *t =
        "func.func @main(%arg0: tensor<4x!quant.uniform<i8:f32, 0.5>>) -> tensor<2x!quant.uniform<i8:f32, 0.5>> {\n"
        "  %i = stablehlo.constant dense<0> : tensor<i8>\n"
        "  %q = stablehlo.bitcast_convert %i : (tensor<i8>) -> tensor<!quant.uniform<i8:f32, 0.5>>\n"
        "  %r = stablehlo.reduce(%arg0 init: %q) applies stablehlo.maximum across dimensions = [0] : (tensor<4x!quant.uniform<i8:f32, 0.5>>, tensor<!quant.uniform<i8:f32, 0.5>>) -> tensor<!quant.uniform<i8:f32, 0.5>>\n"
        "  %b = stablehlo.broadcast_in_dim %r, dims = [] : (tensor<!quant.uniform<i8:f32, 0.5>>) -> tensor<2x!quant.uniform<i8:f32, 0.5>>\n"
        "  return %b : tensor<2x!quant.uniform<i8:f32, 0.5>>\n}\n";
    cj_status err = NULL;
    cj_compiled *p = tu_compile(t, &err);
    CHECK(!p && err);
    if (err) CHECK_CONTAINS(cj_status_message(err), "stablehlo.reduce");
    cj_status_free(err);
    if (p) tu_free(p);
  }
  return check_report("compiler_quant");
}
