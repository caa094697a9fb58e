/* Elementwise semantics of the CPU backend, checked against hand-derived values: integer
 * wrapping, division by zero and INT_MIN / -1, remainders, shifts past the width, sub-byte
 * integers, popcnt/clz, pow with negative exponents, NaN and signed zeros in min/max, rounding
 * modes, TOTALORDER comparisons, conversions (saturation, sub-byte, bf16/f8 rounding),
 * bitcasts of other widths, small-float rounding after every fused op, complex arithmetic,
 * scalar operands of select/clamp, reduce_precision, chlo.next_after. */
#include <math.h>
#include <stdint.h>

#include "../common/check.h"
#include "prog_util.h"

#define PROG1(T, body, ret) \
  "func.func @main() -> " T " {\n" body "\n  return " ret " : " T "\n}\n"

static void expect(const char *what, const char *text, const void *bytes, size_t n) {
  CHECK_MSG(tu_expect_bytes(what, text, bytes, n), "%s", what);
}

static void test_integers(void) {
  {
    int8_t e[3] = {-128, 127, -56};
    expect("i8 add wraps",
           PROG1("tensor<3xi8>",
                 "  %a = stablehlo.constant dense<[127, -128, 100]> : tensor<3xi8>\n"
                 "  %b = stablehlo.constant dense<[1, -1, 100]> : tensor<3xi8>\n"
                 "  %r = stablehlo.add %a, %b : tensor<3xi8>",
                 "%r"),
           e, sizeof e);
  }
  {
    int32_t e[5] = {3, -3, -1, INT32_MIN, -1};
    expect("i32 divide",
           PROG1("tensor<5xi32>",
                 "  %a = stablehlo.constant dense<[7, -7, 5, -2147483648, 3]> : tensor<5xi32>\n"
                 "  %b = stablehlo.constant dense<[2, 2, 0, -1, -2]> : tensor<5xi32>\n"
                 "  %r = stablehlo.divide %a, %b : tensor<5xi32>",
                 "%r"),
           e, sizeof e);
  }
  {
    int32_t e[5] = {1, -1, 5, 0, 1};
    expect("i32 remainder",
           PROG1("tensor<5xi32>",
                 "  %a = stablehlo.constant dense<[7, -7, 5, -2147483648, 3]> : tensor<5xi32>\n"
                 "  %b = stablehlo.constant dense<[2, 2, 0, -1, -2]> : tensor<5xi32>\n"
                 "  %r = stablehlo.remainder %a, %b : tensor<5xi32>",
                 "%r"),
           e, sizeof e);
  }
  {
    uint8_t e[3] = {255, 3, 9};
    expect("u8 divide by zero",
           PROG1("tensor<3xui8>",
                 "  %a = stablehlo.constant dense<[200, 7, 9]> : tensor<3xui8>\n"
                 "  %b = stablehlo.constant dense<[0, 2, 1]> : tensor<3xui8>\n"
                 "  %r = stablehlo.divide %a, %b : tensor<3xui8>",
                 "%r"),
           e, sizeof e);
  }
  {
    int32_t e[4] = {1, INT32_MIN, 0, 0};
    expect("i32 shift_left past the width",
           PROG1("tensor<4xi32>",
                 "  %a = stablehlo.constant dense<1> : tensor<4xi32>\n"
                 "  %b = stablehlo.constant dense<[0, 31, 32, -1]> : tensor<4xi32>\n"
                 "  %r = stablehlo.shift_left %a, %b : tensor<4xi32>",
                 "%r"),
           e, sizeof e);
  }
  {
    int32_t e[4] = {-4, -1, -1, 0};
    expect("i32 shift_right_arithmetic",
           PROG1("tensor<4xi32>",
                 "  %a = stablehlo.constant dense<[-8, -8, -8, 8]> : tensor<4xi32>\n"
                 "  %b = stablehlo.constant dense<[1, 31, 32, 100]> : tensor<4xi32>\n"
                 "  %r = stablehlo.shift_right_arithmetic %a, %b : tensor<4xi32>",
                 "%r"),
           e, sizeof e);
  }
  {
    int32_t e[4] = {0x7FFFFFFC, 0, 1, 0};
    expect("i32 shift_right_logical",
           PROG1("tensor<4xi32>",
                 "  %a = stablehlo.constant dense<[-8, -8, 8, 8]> : tensor<4xi32>\n"
                 "  %b = stablehlo.constant dense<[1, 32, 3, -1]> : tensor<4xi32>\n"
                 "  %r = stablehlo.shift_right_logical %a, %b : tensor<4xi32>",
                 "%r"),
           e, sizeof e);
  }
  {
    int32_t e[6] = {1024, -1, 1, 0, 1, 1};
    expect("i32 power",
           PROG1("tensor<6xi32>",
                 "  %a = stablehlo.constant dense<[2, -1, -1, 2, 3, 0]> : tensor<6xi32>\n"
                 "  %b = stablehlo.constant dense<[10, -3, -4, -1, 0, 0]> : tensor<6xi32>\n"
                 "  %r = stablehlo.power %a, %b : tensor<6xi32>",
                 "%r"),
           e, sizeof e);
  }
  {
    int32_t e[3] = {31, 32, 0};
    expect("i32 count_leading_zeros",
           PROG1("tensor<3xi32>",
                 "  %a = stablehlo.constant dense<[1, 0, -1]> : tensor<3xi32>\n"
                 "  %r = stablehlo.count_leading_zeros %a : tensor<3xi32>",
                 "%r"),
           e, sizeof e);
  }
  {
    int64_t e[2] = {INT64_MIN, 0};
    expect("i64 abs and negate of INT_MIN wrap",
           PROG1("tensor<2xi64>",
                 "  %a = stablehlo.constant dense<[-9223372036854775808, 0]> : tensor<2xi64>\n"
                 "  %b = stablehlo.abs %a : tensor<2xi64>\n"
                 "  %r = stablehlo.negate %b : tensor<2xi64>",
                 "%r"),
           e, sizeof e);
  }
}

static void test_subbyte(void) {
  {
    uint8_t e[2] = {0x08, 0x07}; /* -8, 7 */
    expect("i4 add wraps",
           PROG1("tensor<2xi4>",
                 "  %a = stablehlo.constant dense<[7, -8]> : tensor<2xi4>\n"
                 "  %b = stablehlo.constant dense<[1, -1]> : tensor<2xi4>\n"
                 "  %r = stablehlo.add %a, %b : tensor<2xi4>",
                 "%r"),
           e, sizeof e);
  }
  {
    uint8_t e[2] = {4, 2};
    expect("i4 popcnt",
           PROG1("tensor<2xi4>",
                 "  %a = stablehlo.constant dense<[-1, 5]> : tensor<2xi4>\n"
                 "  %r = stablehlo.popcnt %a : tensor<2xi4>",
                 "%r"),
           e, sizeof e);
  }
  {
    uint8_t e[2] = {3, 4};
    expect("i4 count_leading_zeros",
           PROG1("tensor<2xi4>",
                 "  %a = stablehlo.constant dense<[1, 0]> : tensor<2xi4>\n"
                 "  %r = stablehlo.count_leading_zeros %a : tensor<2xi4>",
                 "%r"),
           e, sizeof e);
  }
  {
    uint8_t e[2] = {4, 1};
    expect("i4 shift_right_logical",
           PROG1("tensor<2xi4>",
                 "  %a = stablehlo.constant dense<[-8, -1]> : tensor<2xi4>\n"
                 "  %b = stablehlo.constant dense<[1, 3]> : tensor<2xi4>\n"
                 "  %r = stablehlo.shift_right_logical %a, %b : tensor<2xi4>",
                 "%r"),
           e, sizeof e);
  }
  {
    uint8_t e[2] = {15, 10};
    expect("ui4 not",
           PROG1("tensor<2xui4>",
                 "  %a = stablehlo.constant dense<[0, 5]> : tensor<2xui4>\n"
                 "  %r = stablehlo.not %a : tensor<2xui4>",
                 "%r"),
           e, sizeof e);
  }
  {
    uint8_t e[3] = {0x07, 0x08, 0x07};
    expect("i32 -> i4 wraps",
           PROG1("tensor<3xi4>",
                 "  %a = stablehlo.constant dense<[7, 8, -9]> : tensor<3xi32>\n"
                 "  %r = stablehlo.convert %a : (tensor<3xi32>) -> tensor<3xi4>",
                 "%r"),
           e, sizeof e);
  }
  {
    uint8_t e[2] = {0x09, 0x0f}; /* c = [7 + -8, -1 + 2] = [-1, 1]; c * a = [-7, -1] */
    expect("i4 chain wraps between ops",
           PROG1("tensor<2xi4>",
                 "  %a = stablehlo.constant dense<[7, -1]> : tensor<2xi4>\n"
                 "  %b = stablehlo.constant dense<[-8, 2]> : tensor<2xi4>\n"
                 "  %c = stablehlo.add %a, %b : tensor<2xi4>\n"
                 "  %r = stablehlo.multiply %c, %a : tensor<2xi4>",
                 "%r"),
           e, sizeof e);
  }
}

static uint32_t fb(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}

static void expect_f32(const char *what, const char *text, const float *e, int n) {
  cj_compiled *p = tu_compile_ok(what, text);
  if (!p) return;
  void *res[2] = {0};
  bool ran = tu_run_ok(what, p, NULL, res, tu_pool());
  const float *r = res[0];
  for (int i = 0; i < n && ran; i++) {
    bool ok = isnan(e[i]) ? isnan(r[i]) : fb(e[i]) == fb(r[i]);
    CHECK_MSG(ok, "%s: element %d is %g (0x%08x), expected %g (0x%08x)", what, i, r[i], fb(r[i]),
              e[i], fb(e[i]));
  }
  free(res[0]);
  tu_free(p);
}

static void test_floats(void) {
  {
    float e[3] = {NAN, 0.0f, NAN};
    expect_f32("f32 maximum NaN and zeros",
               PROG1("tensor<3xf32>",
                     "  %a = stablehlo.constant dense<[0x7FC00000, -0.0, 1.0]> : tensor<3xf32>\n"
                     "  %b = stablehlo.constant dense<[1.0, 0.0, 0x7FC00000]> : tensor<3xf32>\n"
                     "  %r = stablehlo.maximum %a, %b : tensor<3xf32>",
                     "%r"),
               e, 3);
  }
  {
    float e[3] = {NAN, -0.0f, NAN};
    expect_f32("f32 minimum NaN and zeros",
               PROG1("tensor<3xf32>",
                     "  %a = stablehlo.constant dense<[0x7FC00000, -0.0, 1.0]> : tensor<3xf32>\n"
                     "  %b = stablehlo.constant dense<[1.0, 0.0, 0x7FC00000]> : tensor<3xf32>\n"
                     "  %r = stablehlo.minimum %a, %b : tensor<3xf32>",
                     "%r"),
               e, 3);
  }
  {
    float e[6] = {0.0f, 2.0f, 2.0f, -0.0f, -2.0f, 1e30f};
    expect_f32("f32 round_nearest_even",
               PROG1("tensor<6xf32>",
                     "  %a = stablehlo.constant dense<[0.5, 1.5, 2.5, -0.5, -2.5, 1.0e30]> : tensor<6xf32>\n"
                     "  %r = stablehlo.round_nearest_even %a : tensor<6xf32>",
                     "%r"),
               e, 6);
  }
  {
    float e[5] = {1.0f, 2.0f, 3.0f, -1.0f, -3.0f};
    expect_f32("f32 round_nearest_afz",
               PROG1("tensor<5xf32>",
                     "  %a = stablehlo.constant dense<[0.5, 1.5, 2.5, -0.5, -2.5]> : tensor<5xf32>\n"
                     "  %r = stablehlo.round_nearest_afz %a : tensor<5xf32>",
                     "%r"),
               e, 5);
  }
  {
    float e[5] = {-1.0f, 0.0f, -0.0f, 1e30f, -3.0f};
    expect_f32("f32 floor",
               PROG1("tensor<5xf32>",
                     "  %a = stablehlo.constant dense<[-0.5, 0.5, -0.0, 1.0e30, -2.5]> : tensor<5xf32>\n"
                     "  %r = stablehlo.floor %a : tensor<5xf32>",
                     "%r"),
               e, 5);
  }
  {
    float e[3] = {-0.0f, 1.0f, INFINITY};
    expect_f32("f32 ceil",
               PROG1("tensor<3xf32>",
                     "  %a = stablehlo.constant dense<[-0.5, 0.5, 0x7F800000]> : tensor<3xf32>\n"
                     "  %r = stablehlo.ceil %a : tensor<3xf32>",
                     "%r"),
               e, 3);
  }
  {
    float e[5] = {-1.0f, -0.0f, 0.0f, NAN, 1.0f};
    expect_f32("f32 sign",
               PROG1("tensor<5xf32>",
                     "  %a = stablehlo.constant dense<[-2.0, -0.0, 0.0, 0x7FC00000, 3.0]> : tensor<5xf32>\n"
                     "  %r = stablehlo.sign %a : tensor<5xf32>",
                     "%r"),
               e, 5);
  }
  {
    float e[2] = {1.0f, INFINITY};
    expect_f32("f32 reduce_precision e5m2",
               PROG1("tensor<2xf32>",
                     "  %a = stablehlo.constant dense<[1.1, 65536.0]> : tensor<2xf32>\n"
                     "  %r = stablehlo.reduce_precision %a, format = e5m2 : tensor<2xf32>",
                     "%r"),
               e, 2);
  }
  {
    float e[2] = {1.00000012f, -1e-45f};
    expect_f32("chlo.next_after",
               PROG1("tensor<2xf32>",
                     "  %a = stablehlo.constant dense<[1.0, 0.0]> : tensor<2xf32>\n"
                     "  %b = stablehlo.constant dense<[2.0, -1.0]> : tensor<2xf32>\n"
                     "  %r = chlo.next_after %a, %b : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>",
                     "%r"),
               e, 2);
  }
  {
    float e[3] = {0.0f, 5.0f, 10.0f};
    expect_f32("clamp with scalar bounds",
               PROG1("tensor<3xf32>",
                     "  %lo = stablehlo.constant dense<0.0> : tensor<f32>\n"
                     "  %hi = stablehlo.constant dense<10.0> : tensor<f32>\n"
                     "  %x = stablehlo.constant dense<[-1.0, 5.0, 11.0]> : tensor<3xf32>\n"
                     "  %r = stablehlo.clamp %lo, %x, %hi : (tensor<f32>, tensor<3xf32>, tensor<f32>) -> tensor<3xf32>",
                     "%r"),
               e, 3);
  }
  {
    float e[2] = {1.0f, 2.0f};
    expect_f32("select with a scalar predicate",
               PROG1("tensor<2xf32>",
                     "  %p = stablehlo.constant dense<true> : tensor<i1>\n"
                     "  %x = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>\n"
                     "  %y = stablehlo.constant dense<[3.0, 4.0]> : tensor<2xf32>\n"
                     "  %r = stablehlo.select %p, %x, %y : tensor<i1>, tensor<2xf32>",
                     "%r"),
               e, 2);
  }
  {
    uint8_t e[5] = {1, 0, 1, 0, 1}; /* LT: -0 < +0, NaN < NaN no, -NaN < -inf; EQ: -0 != +0, NaN == NaN */
    expect("f32 compare TOTALORDER",
           "func.func @main() -> tensor<5xi1> {\n"
           "  %a = stablehlo.constant dense<[-0.0, 0x7FC00000, 0xFFC00000]> : tensor<3xf32>\n"
           "  %b = stablehlo.constant dense<[0.0, 0x7FC00000, 0xFF800000]> : tensor<3xf32>\n"
           "  %c = stablehlo.compare LT, %a, %b, TOTALORDER : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>\n"
           "  %x = stablehlo.constant dense<[-0.0, 0x7FC00000]> : tensor<2xf32>\n"
           "  %y = stablehlo.constant dense<[0.0, 0x7FC00000]> : tensor<2xf32>\n"
           "  %d = stablehlo.compare EQ, %x, %y, TOTALORDER : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>\n"
           "  %r = stablehlo.concatenate %c, %d, dim = 0 : (tensor<3xi1>, tensor<2xi1>) -> tensor<5xi1>\n"
           "  return %r : tensor<5xi1>\n}\n",
           e, sizeof e);
  }
  {
    uint8_t e[4] = {0, 0, 1, 0}; /* LT: -0 < +0 no, NaN < 1 no; EQ: -0 == +0, NaN == NaN no */
    expect("f32 compare FLOAT",
           "func.func @main() -> tensor<4xi1> {\n"
           "  %a = stablehlo.constant dense<[-0.0, 0x7FC00000]> : tensor<2xf32>\n"
           "  %b = stablehlo.constant dense<[0.0, 1.0]> : tensor<2xf32>\n"
           "  %c = stablehlo.compare LT, %a, %b, FLOAT : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>\n"
           "  %x = stablehlo.constant dense<[-0.0, 0x7FC00000]> : tensor<2xf32>\n"
           "  %y = stablehlo.constant dense<[0.0, 0x7FC00000]> : tensor<2xf32>\n"
           "  %d = stablehlo.compare EQ, %x, %y, FLOAT : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>\n"
           "  %r = stablehlo.concatenate %c, %d, dim = 0 : (tensor<2xi1>, tensor<2xi1>) -> tensor<4xi1>\n"
           "  return %r : tensor<4xi1>\n}\n",
           e, sizeof e);
  }
  {
    /* bf16: (1 + 2^-8) rounds to 1 (ties to even) after each op: (1 + b) + b = 1 */
    uint16_t e[1] = {0x3F80};
    expect("bf16 rounds after every fused op",
           PROG1("tensor<1xbf16>",
                 "  %a = stablehlo.constant dense<[1.0]> : tensor<1xbf16>\n"
                 "  %b = stablehlo.constant dense<[0x3B80]> : tensor<1xbf16>\n"
                 "  %c = stablehlo.add %a, %b : tensor<1xbf16>\n"
                 "  %r = stablehlo.add %c, %b : tensor<1xbf16>",
                 "%r"),
           e, sizeof e);
  }
}

static void test_convert(void) {
  {
    int8_t e[5] = {127, -128, 0, 1, -1};
    expect("f32 -> i8 saturates, NaN -> 0, truncates",
           PROG1("tensor<5xi8>",
                 "  %a = stablehlo.constant dense<[300.0, -300.0, 0x7FC00000, 1.9, -1.9]> : tensor<5xf32>\n"
                 "  %r = stablehlo.convert %a : (tensor<5xf32>) -> tensor<5xi8>",
                 "%r"),
           e, sizeof e);
  }
  {
    uint8_t e[3] = {0, 255, 2};
    expect("f32 -> ui8 saturates",
           PROG1("tensor<3xui8>",
                 "  %a = stablehlo.constant dense<[-5.0, 300.0, 2.5]> : tensor<3xf32>\n"
                 "  %r = stablehlo.convert %a : (tensor<3xf32>) -> tensor<3xui8>",
                 "%r"),
           e, sizeof e);
  }
  {
    uint16_t e[2] = {0x3F80, 0x3F82};
    expect("f32 -> bf16 rounds to nearest even",
           PROG1("tensor<2xbf16>",
                 "  %a = stablehlo.constant dense<[1.00390625, 1.01171875]> : tensor<2xf32>\n"
                 "  %r = stablehlo.convert %a : (tensor<2xf32>) -> tensor<2xbf16>",
                 "%r"),
           e, sizeof e);
  }
  {
    uint8_t e[3] = {0x7E, 0x7F, 0x00};
    expect("f32 -> f8E4M3FN: max, overflow to NaN, zero",
           PROG1("tensor<3xf8E4M3FN>",
                 "  %a = stablehlo.constant dense<[448.0, 1000.0, 0.0]> : tensor<3xf32>\n"
                 "  %r = stablehlo.convert %a : (tensor<3xf32>) -> tensor<3xf8E4M3FN>",
                 "%r"),
           e, sizeof e);
  }
  {
    float e[4] = {1.0f, 0.0f, -2.0f, 3.0f};
    expect_f32("complex -> real part, bool -> 1",
               "func.func @main() -> tensor<4xf32> {\n"
               "  %a = stablehlo.constant dense<[(1.0, 5.0), (0.0, 1.0)]> : tensor<2xcomplex<f32>>\n"
               "  %b = stablehlo.convert %a : (tensor<2xcomplex<f32>>) -> tensor<2xf32>\n"
               "  %c = stablehlo.constant dense<[-2, 3]> : tensor<2xi32>\n"
               "  %d = stablehlo.convert %c : (tensor<2xi32>) -> tensor<2xf32>\n"
               "  %r = stablehlo.concatenate %b, %d, dim = 0 : (tensor<2xf32>, tensor<2xf32>) -> tensor<4xf32>\n"
               "  return %r : tensor<4xf32>\n}\n",
               e, 4);
  }
  {
    uint32_t e[1] = {0x3F800000};
    expect("bitcast f32 -> i32",
           PROG1("tensor<1xi32>",
                 "  %a = stablehlo.constant dense<[1.0]> : tensor<1xf32>\n"
                 "  %r = stablehlo.bitcast_convert %a : (tensor<1xf32>) -> tensor<1xi32>",
                 "%r"),
           e, sizeof e);
  }
  {
    uint16_t e[1] = {0x1234};
    expect("bitcast 2 x i8 -> i16 (little-endian)",
           PROG1("tensor<i16>",
                 "  %a = stablehlo.constant dense<[52, 18]> : tensor<2xi8>\n"
                 "  %r = stablehlo.bitcast_convert %a : (tensor<2xi8>) -> tensor<i16>",
                 "%r"),
           e, sizeof e);
  }
  {
    uint8_t e[2] = {0x4, 0x3}; /* 0x34 -> low nibble first */
    expect("bitcast i8 -> 2 x i4",
           PROG1("tensor<2xi4>",
                 "  %a = stablehlo.constant dense<52> : tensor<i8>\n"
                 "  %r = stablehlo.bitcast_convert %a : (tensor<i8>) -> tensor<2xi4>",
                 "%r"),
           e, sizeof e);
  }
}

static void test_complex(void) {
  float e[4] = {0.44f, 0.08f, -5.0f, 10.0f};
  cj_compiled *p = tu_compile_ok(
      "complex",
      "func.func @main() -> tensor<2xcomplex<f32>> {\n"
      "  %a = stablehlo.constant dense<[(1.0, 2.0), (1.0, 2.0)]> : tensor<2xcomplex<f32>>\n"
      "  %b = stablehlo.constant dense<[(3.0, 4.0), (3.0, 4.0)]> : tensor<2xcomplex<f32>>\n"
      "  %d = stablehlo.divide %a, %b : tensor<2xcomplex<f32>>\n"
      "  %m = stablehlo.multiply %a, %b : tensor<2xcomplex<f32>>\n"
      "  %s = stablehlo.slice %d [0:1] : (tensor<2xcomplex<f32>>) -> tensor<1xcomplex<f32>>\n"
      "  %t = stablehlo.slice %m [1:2] : (tensor<2xcomplex<f32>>) -> tensor<1xcomplex<f32>>\n"
      "  %r = stablehlo.concatenate %s, %t, dim = 0 : (tensor<1xcomplex<f32>>, tensor<1xcomplex<f32>>) -> tensor<2xcomplex<f32>>\n"
      "  return %r : tensor<2xcomplex<f32>>\n}\n");
  if (!p) return;
  void *res[1] = {0};
  tu_run_ok("complex", p, NULL, res, NULL);
  const float *r = res[0];
  for (int i = 0; i < 4; i++) CHECK_MSG(fabsf(r[i] - e[i]) < 1e-6f, "complex %d: %g vs %g", i, r[i], e[i]);
  free(res[0]);
  tu_free(p);
}

static void test_complex_atan2_cbrt(void) {
  cj_compiled *p = tu_compile_ok(
      "complex atan2, cbrt",
      "func.func @main() -> (tensor<2xcomplex<f64>>, tensor<2xcomplex<f64>>) {\n"
      "  %y = stablehlo.constant dense<[(1.0, 0.0), (-1.0, 0.0)]> : tensor<2xcomplex<f64>>\n"
      "  %x = stablehlo.constant dense<[(0.0, 0.0), (0.0, 0.0)]> : tensor<2xcomplex<f64>>\n"
      "  %a = stablehlo.atan2 %y, %x : tensor<2xcomplex<f64>>\n"
      "  %z = stablehlo.constant dense<[(8.0, 0.0), (-8.0, 0.0)]> : tensor<2xcomplex<f64>>\n"
      "  %c = stablehlo.cbrt %z : tensor<2xcomplex<f64>>\n"
      "  return %a, %c : tensor<2xcomplex<f64>>, tensor<2xcomplex<f64>>\n}\n");
  if (!p) return;
  void *res[2] = {0};
  tu_run_ok("complex atan2, cbrt", p, NULL, res, NULL);
  const double *a = res[0], *c = res[1];
  /* atan2(+-1, 0) = +-pi/2; cbrt(8) = 2; cbrt(-8) = 2 e^(i pi/3) (principal branch) */
  double e[8] = {M_PI / 2, 0, -M_PI / 2, 0, 2, 0, 1, 1.7320508075688772};
  for (int i = 0; i < 4; i++) CHECK_MSG(fabs(a[i] - e[i]) < 1e-12, "atan2 %d: %.17g vs %.17g", i, a[i], e[i]);
  for (int i = 0; i < 4; i++) CHECK_MSG(fabs(c[i] - e[4 + i]) < 1e-12, "cbrt %d: %.17g vs %.17g", i, c[i], e[4 + i]);
  free(res[0]);
  free(res[1]);
  tu_free(p);
}

int main(void) {
  test_complex_atan2_cbrt();
  test_integers();
  test_subbyte();
  test_floats();
  test_convert();
  test_complex();
  return check_report("cpu_ew");
}
