/* Verifier tests written as MLIR text: for each op family, programs that break one constraint
 * of the StableHLO specification (or CHLO's definitions), each with the exact message the
 * verifier must give, next to valid variants that must pass (so no check is stricter than the
 * spec). The failing op is always on line 2 of its program, column 3. */
#include <stdio.h>
#include <string.h>

#include "../common/check.h"
#include "frontend/frontend.h"
#include "ir/ir.h"

typedef struct tcase {
  int line;           /* of this file, for failure reports */
  const char *text;   /* the program */
  const char *expect; /* NULL: must verify; else the exact message */
} tcase;

/* func.func @main<sig> { <body> } */
#define F(sig, body) "func.func @main" sig " {\n" body "}\n"
#define OK(text) {__LINE__, text, NULL}
#define BAD(text, msg) {__LINE__, text, msg}
#define AT(op) op " at t.mlir:2:3: "

static const tcase cases[] = {
    /* ================================================================ elementwise */
    OK(F("(%a: tensor<?xf32>, %b: tensor<2xf32>) -> tensor<2xf32>",
         "  %0 = stablehlo.add %a, %b : (tensor<?xf32>, tensor<2xf32>) -> tensor<2xf32>\n"
         "  return %0 : tensor<2xf32>\n")),
    BAD(F("(%a: tensor<2xf32>) -> tensor<3xf32>",
          "  %0 = stablehlo.add %a, %a : (tensor<2xf32>, tensor<2xf32>) -> tensor<3xf32>\n"
          "  return %0 : tensor<3xf32>\n"),
        AT("stablehlo.add") "lhs and result must have the same shape, got tensor<2xf32> and "
                            "tensor<3xf32>"),
    BAD(F("(%a: tensor<2xf32>, %b: tensor<2xi32>) -> tensor<2xf32>",
          "  %0 = stablehlo.add %a, %b : (tensor<2xf32>, tensor<2xi32>) -> tensor<2xf32>\n"
          "  return %0 : tensor<2xf32>\n"),
        AT("stablehlo.add") "lhs and rhs must have the same element type, got tensor<2xf32> and "
                            "tensor<2xi32>"),
    BAD(F("(%a: tensor<2xi32>) -> tensor<2xi32>",
          "  %0 = stablehlo.subtract %a, %a : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>\n"
          "  %1 = stablehlo.power %0, %a : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi64>\n"
          "  return %0 : tensor<2xi32>\n"),
        "stablehlo.power at t.mlir:3:3: lhs and result must have the same type (up to "
        "quantization parameters), got tensor<2xi32> and tensor<2xi64>"),
    BAD(F("(%a: tensor<2xi1>) -> tensor<2xi1>",
          "  %0 = stablehlo.divide %a, %a : tensor<2xi1>\n"
          "  return %0 : tensor<2xi1>\n"),
        AT("stablehlo.divide") "lhs must be a ranked tensor of integer, floating-point or "
                               "complex type or per-tensor quantized tensor, got tensor<2xi1>"),
    OK(F("(%a: tensor<2xcomplex<f32>>) -> tensor<2xf32>",
         "  %0 = stablehlo.abs %a : (tensor<2xcomplex<f32>>) -> tensor<2xf32>\n"
         "  return %0 : tensor<2xf32>\n")),
    BAD(F("(%a: tensor<2xcomplex<f32>>) -> tensor<2xf64>",
          "  %0 = stablehlo.abs %a : (tensor<2xcomplex<f32>>) -> tensor<2xf64>\n"
          "  return %0 : tensor<2xf64>\n"),
        AT("stablehlo.abs") "the result of abs on tensor<2xcomplex<f32>> must have element type "
                            "f32, got tensor<2xf64>"),
    BAD(F("(%a: tensor<2xui32>) -> tensor<2xui32>",
          "  %0 = stablehlo.abs %a : tensor<2xui32>\n"
          "  return %0 : tensor<2xui32>\n"),
        AT("stablehlo.abs") "operand must be a ranked tensor of signed integer, floating-point "
                            "or complex type or per-tensor quantized tensor, got tensor<2xui32>"),
    BAD(F("(%a: tensor<2xi32>) -> tensor<2xi32>",
          "  %0 = stablehlo.sine %a : tensor<2xi32>\n"
          "  return %0 : tensor<2xi32>\n"),
        AT("stablehlo.sine") "operand must be a ranked tensor of floating-point or complex type "
                             "or per-tensor quantized tensor, got tensor<2xi32>"),
    BAD(F("(%a: tensor<2xcomplex<f32>>) -> tensor<2xcomplex<f32>>",
          "  %0 = stablehlo.floor %a : tensor<2xcomplex<f32>>\n"
          "  return %0 : tensor<2xcomplex<f32>>\n"),
        AT("stablehlo.floor") "operand must be a ranked tensor of floating-point type or "
                              "per-tensor quantized tensor, got tensor<2xcomplex<f32>>"),
    BAD(F("(%a: tensor<2xf32>) -> tensor<2xf32>",
          "  %0 = stablehlo.not %a : tensor<2xf32>\n"
          "  return %0 : tensor<2xf32>\n"),
        AT("stablehlo.not") "operand must be a ranked tensor of boolean or integer type, got "
                            "tensor<2xf32>"),
    BAD(F("(%a: tensor<2xi32>) -> tensor<2xi64>",
          "  %0 = stablehlo.popcnt %a : (tensor<2xi32>) -> tensor<2xi64>\n"
          "  return %0 : tensor<2xi64>\n"),
        AT("stablehlo.popcnt") "operand and result must have the same type, got tensor<2xi32> "
                               "and tensor<2xi64>"),
    BAD(F("(%a: tensor<2xf32>) -> tensor<2xf32>",
          "  %0 = stablehlo.shift_left %a, %a : tensor<2xf32>\n"
          "  return %0 : tensor<2xf32>\n"),
        AT("stablehlo.shift_left") "lhs must be a ranked tensor of integer type, got "
                                   "tensor<2xf32>"),
    BAD(F("(%a: tensor<2xi32>, %b: tensor<2xi8>) -> tensor<2xi32>",
          "  %0 = stablehlo.and %a, %b : (tensor<2xi32>, tensor<2xi8>) -> tensor<2xi32>\n"
          "  return %0 : tensor<2xi32>\n"),
        AT("stablehlo.and") "lhs and rhs must have the same type, got tensor<2xi32> and "
                            "tensor<2xi8>"),
    BAD(F("(%a: tensor<2xf32>) -> tensor<2xf32>",
          "  %0 = stablehlo.atan2 %a, %a : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>\n"
          "  %1 = stablehlo.compare LT, %a, %0 : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>\n"
          "  return %0 : tensor<2xf32>\n"),
        "stablehlo.compare at t.mlir:3:3: result must be a ranked tensor of boolean type, got "
        "tensor<2xf32>"),
    BAD(F("(%a: tensor<2xf32>, %b: tensor<2xf64>) -> tensor<2xi1>",
          "  %0 = stablehlo.compare LT, %a, %b : (tensor<2xf32>, tensor<2xf64>) -> tensor<2xi1>\n"
          "  return %0 : tensor<2xi1>\n"),
        AT("stablehlo.compare") "lhs and rhs must have the same element type (up to "
                                "quantization parameters), got tensor<2xf32> and tensor<2xf64>"),
    OK(F("(%p: tensor<i1>, %a: tensor<2xf32>) -> tensor<2xf32>",
         "  %0 = stablehlo.select %p, %a, %a : (tensor<i1>, tensor<2xf32>, tensor<2xf32>) -> "
         "tensor<2xf32>\n"
         "  return %0 : tensor<2xf32>\n")),
    BAD(F("(%p: tensor<3xi1>, %a: tensor<2xf32>) -> tensor<2xf32>",
          "  %0 = stablehlo.select %p, %a, %a : (tensor<3xi1>, tensor<2xf32>, tensor<2xf32>) -> "
          "tensor<2xf32>\n"
          "  return %0 : tensor<2xf32>\n"),
        AT("stablehlo.select") "pred must be a scalar or have the shape of on_true, got "
                               "tensor<3xi1> and tensor<2xf32>"),
    BAD(F("(%m: tensor<3xf32>, %a: tensor<2xf32>) -> tensor<2xf32>",
          "  %0 = stablehlo.clamp %m, %a, %a : (tensor<3xf32>, tensor<2xf32>, tensor<2xf32>) -> "
          "tensor<2xf32>\n"
          "  return %0 : tensor<2xf32>\n"),
        AT("stablehlo.clamp") "min must be a scalar or have the shape of operand, got "
                              "tensor<3xf32> and tensor<2xf32>"),
    BAD(F("(%a: tensor<2xf32>) -> tensor<3xi32>",
          "  %0 = stablehlo.convert %a : (tensor<2xf32>) -> tensor<3xi32>\n"
          "  return %0 : tensor<3xi32>\n"),
        AT("stablehlo.convert") "operand and result must have the same shape, got tensor<2xf32> "
                                "and tensor<3xi32>"),
    OK(F("(%a: tensor<2xf32>) -> tensor<2x4xi8>",
         "  %0 = stablehlo.bitcast_convert %a : (tensor<2xf32>) -> tensor<2x4xi8>\n"
         "  return %0 : tensor<2x4xi8>\n")),
    BAD(F("(%a: tensor<2xf32>) -> tensor<2x2xi8>",
          "  %0 = stablehlo.bitcast_convert %a : (tensor<2xf32>) -> tensor<2x2xi8>\n"
          "  return %0 : tensor<2x2xi8>\n"),
        AT("stablehlo.bitcast_convert") "bit widths do not match: tensor<2xf32> and "
                                        "tensor<2x2xi8> (2 x 8 bits != 32 bits)"),
    BAD(F("(%a: tensor<2xi64>) -> tensor<2xcomplex<f32>>",
          "  %0 = stablehlo.bitcast_convert %a : (tensor<2xi64>) -> tensor<2xcomplex<f32>>\n"
          "  return %0 : tensor<2xcomplex<f32>>\n"),
        AT("stablehlo.bitcast_convert") "cannot convert between real and complex types, got "
                                        "tensor<2xi64> and tensor<2xcomplex<f32>>"),
    BAD(F("(%a: tensor<2xf32>) -> tensor<2xf32>",
          "  %0 = stablehlo.reduce_precision %a, format = e0m10 : tensor<2xf32>\n"
          "  return %0 : tensor<2xf32>\n"),
        AT("stablehlo.reduce_precision") "exponent_bits must be at least 1, got 0"),
    BAD(F("(%a: tensor<2xf16>) -> tensor<2xcomplex<f32>>",
          "  %0 = stablehlo.complex %a, %a : (tensor<2xf16>, tensor<2xf16>) -> "
          "tensor<2xcomplex<f32>>\n"
          "  return %0 : tensor<2xcomplex<f32>>\n"),
        AT("stablehlo.complex") "lhs must be a tensor of f32 or f64, got tensor<2xf16>"),
    BAD(F("(%a: tensor<2xf64>) -> tensor<2xcomplex<f32>>",
          "  %0 = stablehlo.complex %a, %a : (tensor<2xf64>, tensor<2xf64>) -> "
          "tensor<2xcomplex<f32>>\n"
          "  return %0 : tensor<2xcomplex<f32>>\n"),
        AT("stablehlo.complex") "result element type must be complex<f64>, got "
                                "tensor<2xcomplex<f32>>"),
    BAD(F("(%a: tensor<2xcomplex<f64>>) -> tensor<2xf32>",
          "  %0 = stablehlo.real %a : (tensor<2xcomplex<f64>>) -> tensor<2xf32>\n"
          "  return %0 : tensor<2xf32>\n"),
        AT("stablehlo.real") "result element type must be the component type f64 of "
                             "tensor<2xcomplex<f64>>, got tensor<2xf32>"),
    BAD(F("(%a: tensor<2xf32>) -> tensor<2xf32>",
          "  %0 = stablehlo.is_finite %a : (tensor<2xf32>) -> tensor<2xf32>\n"
          "  return %0 : tensor<2xf32>\n"),
        AT("stablehlo.is_finite") "y must be a ranked tensor of boolean type, got tensor<2xf32>"),
    BAD(F("(%a: tensor<2xf32>) -> tensor<2xf32>",
          "  %0 = stablehlo.exponential %a {result_accuracy = #stablehlo.result_accuracy<atol = "
          "1.0e-05, rtol = 0.0, ulps = 0, mode = #stablehlo.result_accuracy_mode<DEFAULT>>} : "
          "tensor<2xf32>\n"
          "  return %0 : tensor<2xf32>\n"),
        AT("stablehlo.exponential") "result_accuracy with mode DEFAULT must have zero atol, rtol "
                                    "and ulps"),
    OK(F("(%a: tensor<2xf32>) -> tensor<2xf32>",
         "  %0 = stablehlo.exponential %a {result_accuracy = #stablehlo.result_accuracy<atol = "
         "1.0e-05, rtol = 0.0, ulps = 2, mode = #stablehlo.result_accuracy_mode<TOLERANCE>>} : "
         "tensor<2xf32>\n"
         "  return %0 : tensor<2xf32>\n")),

    /* ================================================================ quantization */
    OK(F("(%a: tensor<2xf32>) -> tensor<2xf32>",
         "  %0 = stablehlo.uniform_quantize %a : (tensor<2xf32>) -> "
         "tensor<2x!quant.uniform<i8:f32, 0.5:3>>\n"
         "  %1 = stablehlo.uniform_dequantize %0 : (tensor<2x!quant.uniform<i8:f32, 0.5:3>>) -> "
         "tensor<2xf32>\n"
         "  return %1 : tensor<2xf32>\n")),
    BAD(F("(%a: tensor<2xf32>) -> tensor<2x!quant.uniform<i8:f16, 0.5:3>>",
          "  %0 = stablehlo.uniform_quantize %a : (tensor<2xf32>) -> "
          "tensor<2x!quant.uniform<i8:f16, 0.5:3>>\n"
          "  return %0 : tensor<2x!quant.uniform<i8:f16, 0.5:3>>\n"),
        AT("stablehlo.uniform_quantize") "result expressed type must be f32, got f16"),
    BAD(F("(%a: tensor<2x!quant.uniform<i8:f32, 0.5:3>>) -> tensor<2xf16>",
          "  %0 = stablehlo.uniform_dequantize %a : (tensor<2x!quant.uniform<i8:f32, 0.5:3>>) -> "
          "tensor<2xf16>\n"
          "  return %0 : tensor<2xf16>\n"),
        AT("stablehlo.uniform_dequantize") "result element type must be the expressed type f32 "
                                           "of the operand, got f16"),
    OK(F("(%a: tensor<2x!quant.uniform<i8:f32, 0.5:3>>, %b: tensor<2x!quant.uniform<i8:f32, "
         "0.25:1>>) -> tensor<2x!quant.uniform<i8:f32, 2.0:0>>",
         "  %0 = stablehlo.add %a, %b : (tensor<2x!quant.uniform<i8:f32, 0.5:3>>, "
         "tensor<2x!quant.uniform<i8:f32, 0.25:1>>) -> tensor<2x!quant.uniform<i8:f32, 2.0:0>>\n"
         "  return %0 : tensor<2x!quant.uniform<i8:f32, 2.0:0>>\n")),
    BAD(F("(%a: tensor<2x!quant.uniform<i8:f32, 0.5:3>>, %b: tensor<2x!quant.uniform<i16:f32, "
          "0.25:1>>) -> tensor<2x!quant.uniform<i8:f32, 2.0:0>>",
          "  %0 = stablehlo.add %a, %b : (tensor<2x!quant.uniform<i8:f32, 0.5:3>>, "
          "tensor<2x!quant.uniform<i16:f32, 0.25:1>>) -> "
          "tensor<2x!quant.uniform<i8:f32, 2.0:0>>\n"
          "  return %0 : tensor<2x!quant.uniform<i8:f32, 2.0:0>>\n"),
        AT("stablehlo.add") "operands and result must have the same quantization storage type"),
    BAD(F("(%a: tensor<2x!quant.uniform<i8:f32, 0.5:3>>) -> tensor<2xf32>",
          "  %0 = stablehlo.add %a, %a : (tensor<2x!quant.uniform<i8:f32, 0.5:3>>, "
          "tensor<2x!quant.uniform<i8:f32, 0.5:3>>) -> tensor<2xf32>\n"
          "  return %0 : tensor<2xf32>\n"),
        AT("stablehlo.add") "operands and result must all be quantized or all be non-quantized"),
    BAD(F("(%a: tensor<2x!quant.uniform<i8:f32:0, {0.5:3, 0.25:2}>>) -> "
          "tensor<2x!quant.uniform<i8:f32:0, {0.5:3, 0.25:2}>>",
          "  %0 = stablehlo.multiply %a, %a : tensor<2x!quant.uniform<i8:f32:0, {0.5:3, 0.25:2}>>\n"
          "  return %0 : tensor<2x!quant.uniform<i8:f32:0, {0.5:3, 0.25:2}>>\n"),
        AT("stablehlo.multiply") "lhs must be a ranked tensor of boolean, integer, "
                                 "floating-point or complex type or per-tensor quantized tensor, "
                                 "got tensor<2x!quant.uniform<i8:f32:0, {0.5:3,0.25:2}>>"),
    BAD(F("(%a: tensor<2x!quant.uniform<i8:f32, -0.5:3>>) -> "
          "tensor<2x!quant.uniform<i8:f32, -0.5:3>>",
          "  return %a : tensor<2x!quant.uniform<i8:f32, -0.5:3>>\n"),
        "func.func at t.mlir:1:1: argument #0 of region #0: quantization scale -0.5 must be "
        "positive and finite in tensor<2x!quant.uniform<i8:f32, -0.5:3>>"),
    OK(F("(%a: tensor<1x!quant.uniform<i8:f32:0, {0.5:3}>>) -> "
         "tensor<2x3x!quant.uniform<i8:f32:1, {0.5:3, 0.5:3, 0.5:3}>>",
         "  %0 = stablehlo.broadcast_in_dim %a, dims = [1] : "
         "(tensor<1x!quant.uniform<i8:f32:0, {0.5:3}>>) -> "
         "tensor<2x3x!quant.uniform<i8:f32:1, {0.5:3, 0.5:3, 0.5:3}>>\n"
         "  return %0 : tensor<2x3x!quant.uniform<i8:f32:1, {0.5:3, 0.5:3, 0.5:3}>>\n")),
    BAD(F("(%a: tensor<1x!quant.uniform<i8:f32:0, {0.5:3}>>) -> "
          "tensor<2x3x!quant.uniform<i8:f32:1, {0.5:3, 0.25:3, 0.5:3}>>",
          "  %0 = stablehlo.broadcast_in_dim %a, dims = [1] : "
          "(tensor<1x!quant.uniform<i8:f32:0, {0.5:3}>>) -> "
          "tensor<2x3x!quant.uniform<i8:f32:1, {0.5:3, 0.25:3, 0.5:3}>>\n"
          "  return %0 : tensor<2x3x!quant.uniform<i8:f32:1, {0.5:3, 0.25:3, 0.5:3}>>\n"),
        AT("stablehlo.broadcast_in_dim") "result scale/zero point #1 (0.25:3) must repeat the "
                                         "operand's only scale/zero point (0.5:3)"),
    BAD(F("(%a: tensor<2x3xf32>, %b: tensor<3x4x!quant.uniform<i8:f32, 0.5:1>>) -> "
          "tensor<2x4xf32>",
          "  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : "
          "(tensor<2x3xf32>, tensor<3x4x!quant.uniform<i8:f32, 0.5:1>>) -> tensor<2x4xf32>\n"
          "  return %0 : tensor<2x4xf32>\n"),
        AT("stablehlo.dot_general") "rhs zero points must be 0, got 1"),
    OK(F("(%a: tensor<2x3xf32>, %b: tensor<3x4x!quant.uniform<i8:f32, 0.5>>) -> "
         "tensor<2x4xf32>",
         "  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : "
         "(tensor<2x3xf32>, tensor<3x4x!quant.uniform<i8:f32, 0.5>>) -> tensor<2x4xf32>\n"
         "  return %0 : tensor<2x4xf32>\n")),

    /* ================================================================ constants, iota */
    BAD(F("() -> tensor<i64>",
          "  %0 = \"stablehlo.constant\"() {value = dense<1> : tensor<i32>} : () -> tensor<i64>\n"
          "  return %0 : tensor<i64>\n"),
        AT("stablehlo.constant") "value has type tensor<i32> but the result has type "
                                 "tensor<i64>"),
    BAD(F("() -> tensor<4xf32>",
          "  %0 = stablehlo.iota dim = 1 : tensor<4xf32>\n"
          "  return %0 : tensor<4xf32>\n"),
        AT("stablehlo.iota") "iota_dimension 1 is out of range [0, 1) for tensor<4xf32>"),
    BAD(F("() -> tensor<2x3xf32>",
          "  %c = stablehlo.constant dense<[3, 3]> : tensor<2xi64>\n"
          "  %0 = stablehlo.dynamic_iota %c, dim = 0 : (tensor<2xi64>) -> tensor<2x3xf32>\n"
          "  return %0 : tensor<2x3xf32>\n"),
        "stablehlo.dynamic_iota at t.mlir:3:3: output_shape [3, 3] does not fit the result type "
        "tensor<2x3xf32>"),

    /* ================================================================ shapes */
    BAD(F("(%a: tensor<2xf32>) -> tensor<3x4xf32>",
          "  %0 = stablehlo.broadcast_in_dim %a, dims = [1] : (tensor<2xf32>) -> tensor<3x4xf32>\n"
          "  return %0 : tensor<3x4xf32>\n"),
        AT("stablehlo.broadcast_in_dim") "operand dimension 0 has size 2, which is neither 1 nor "
                                         "the size 4 of result dimension 1"),
    BAD(F("(%a: tensor<1x1xf32>) -> tensor<3x4xf32>",
          "  %0 = stablehlo.broadcast_in_dim %a, dims = [1, 1] : (tensor<1x1xf32>) -> "
          "tensor<3x4xf32>\n"
          "  return %0 : tensor<3x4xf32>\n"),
        AT("stablehlo.broadcast_in_dim") "broadcast_dimensions has duplicate dimension 1"),
    BAD(F("(%a: tensor<1xf32>) -> tensor<3x4xf32>",
          "  %0 = stablehlo.broadcast_in_dim %a, dims = [2] : (tensor<1xf32>) -> tensor<3x4xf32>\n"
          "  return %0 : tensor<3x4xf32>\n"),
        AT("stablehlo.broadcast_in_dim") "broadcast_dimensions: dimension 2 is out of range "
                                         "[0, 2)"),
    BAD(F("(%a: tensor<2x3xf32>) -> tensor<7xf32>",
          "  %0 = stablehlo.reshape %a : (tensor<2x3xf32>) -> tensor<7xf32>\n"
          "  return %0 : tensor<7xf32>\n"),
        AT("stablehlo.reshape") "operand tensor<2x3xf32> has 6 elements but result tensor<7xf32> "
                                "has 7"),
    OK(F("(%a: tensor<2x?xf32>) -> tensor<7xf32>",
         "  %0 = stablehlo.reshape %a : (tensor<2x?xf32>) -> tensor<7xf32>\n"
         "  return %0 : tensor<7xf32>\n")),
    BAD(F("(%a: tensor<2x3xf32>) -> tensor<3x2xf32>",
          "  %0 = stablehlo.transpose %a, dims = [0, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>\n"
          "  return %0 : tensor<3x2xf32>\n"),
        AT("stablehlo.transpose") "permutation has duplicate dimension 0"),
    BAD(F("(%a: tensor<2x3xf32>) -> tensor<2x3xf32>",
          "  %0 = stablehlo.transpose %a, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<2x3xf32>\n"
          "  return %0 : tensor<2x3xf32>\n"),
        AT("stablehlo.transpose") "result has shape tensor<2x3xf32> but the op requires shape "
                                  "[3, 2]"),
    BAD(F("(%a: tensor<2x3xf32>) -> tensor<2x3xf32>",
          "  %0 = stablehlo.reverse %a, dims = [1, 1] : tensor<2x3xf32>\n"
          "  return %0 : tensor<2x3xf32>\n"),
        AT("stablehlo.reverse") "dimensions has duplicate dimension 1"),
    BAD(F("(%a: tensor<8xf32>) -> tensor<2xf32>",
          "  %0 = stablehlo.slice %a [5:3] : (tensor<8xf32>) -> tensor<2xf32>\n"
          "  return %0 : tensor<2xf32>\n"),
        AT("stablehlo.slice") "start index 5 is larger than limit index 3 in dimension 0"),
    BAD(F("(%a: tensor<8xf32>) -> tensor<2xf32>",
          "  %0 = stablehlo.slice %a [5:10:2] : (tensor<8xf32>) -> tensor<2xf32>\n"
          "  return %0 : tensor<2xf32>\n"),
        AT("stablehlo.slice") "limit index 10 is larger than the size 8 of dimension 0 of "
                              "tensor<8xf32>"),
    BAD(F("(%a: tensor<8xf32>) -> tensor<2xf32>",
          "  %0 = stablehlo.slice %a [1:8:3] : (tensor<8xf32>) -> tensor<2xf32>\n"
          "  return %0 : tensor<2xf32>\n"),
        AT("stablehlo.slice") "result has shape tensor<2xf32> but the op requires shape [3]"),
    BAD(F("(%a: tensor<8xf32>, %i: tensor<i32>) -> tensor<9xf32>",
          "  %0 = stablehlo.dynamic_slice %a, %i, sizes = [9] : (tensor<8xf32>, tensor<i32>) -> "
          "tensor<9xf32>\n"
          "  return %0 : tensor<9xf32>\n"),
        AT("stablehlo.dynamic_slice") "slice size 9 is larger than the size 8 of operand "
                                      "dimension 0"),
    BAD(F("(%a: tensor<8x4xf32>, %i: tensor<i32>, %j: tensor<i64>) -> tensor<2x2xf32>",
          "  %0 = stablehlo.dynamic_slice %a, %i, %j, sizes = [2, 2] : (tensor<8x4xf32>, "
          "tensor<i32>, tensor<i64>) -> tensor<2x2xf32>\n"
          "  return %0 : tensor<2x2xf32>\n"),
        AT("stablehlo.dynamic_slice") "start index #0 and start index #1 must have the same "
                                      "element type, got tensor<i32> and tensor<i64>"),
    BAD(F("(%a: tensor<8xf32>, %u: tensor<9xf32>, %i: tensor<i32>) -> tensor<8xf32>",
          "  %0 = stablehlo.dynamic_update_slice %a, %u, %i : (tensor<8xf32>, tensor<9xf32>, "
          "tensor<i32>) -> tensor<8xf32>\n"
          "  return %0 : tensor<8xf32>\n"),
        AT("stablehlo.dynamic_update_slice") "update dimension 0 has size 9, larger than the "
                                             "operand's 8"),
    BAD(F("(%a: tensor<2x3xf32>, %b: tensor<2x4xf32>) -> tensor<4x3xf32>",
          "  %0 = stablehlo.concatenate %a, %b, dim = 0 : (tensor<2x3xf32>, tensor<2x4xf32>) -> "
          "tensor<4x3xf32>\n"
          "  return %0 : tensor<4x3xf32>\n"),
        AT("stablehlo.concatenate") "input #1 tensor<2x4xf32> and input #0 tensor<2x3xf32> differ "
                                    "in dimension 1"),
    BAD(F("(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<5x3xf32>",
          "  %0 = stablehlo.concatenate %a, %b, dim = 0 : (tensor<2x3xf32>, tensor<2x3xf32>) -> "
          "tensor<5x3xf32>\n"
          "  return %0 : tensor<5x3xf32>\n"),
        AT("stablehlo.concatenate") "result has shape tensor<5x3xf32> but the op requires shape "
                                    "[4, 3]"),
    BAD(F("(%a: tensor<2x3xf32>, %p: tensor<f32>) -> tensor<5x3xf32>",
          "  %0 = stablehlo.pad %a, %p, low = [1, 0], high = [1, 0], interior = [0, -1] : "
          "(tensor<2x3xf32>, tensor<f32>) -> tensor<5x3xf32>\n"
          "  return %0 : tensor<5x3xf32>\n"),
        AT("stablehlo.pad") "interior padding -1 in dimension 1 is negative"),
    OK(F("(%a: tensor<2x3xf32>, %p: tensor<f32>) -> tensor<5x3xf32>",
         "  %0 = stablehlo.pad %a, %p, low = [1, 0], high = [1, 0], interior = [1, 0] : "
         "(tensor<2x3xf32>, tensor<f32>) -> tensor<5x3xf32>\n"
         "  return %0 : tensor<5x3xf32>\n")),
    BAD(F("(%a: tensor<2x3xf32>, %p: tensor<f32>) -> tensor<6x3xf32>",
          "  %0 = stablehlo.pad %a, %p, low = [1, 0], high = [1, 0], interior = [1, 0] : "
          "(tensor<2x3xf32>, tensor<f32>) -> tensor<6x3xf32>\n"
          "  return %0 : tensor<6x3xf32>\n"),
        AT("stablehlo.pad") "result has shape tensor<6x3xf32> but the op requires shape [5, 3]"),
    BAD(F("(%a: tensor<2x3xf32>) -> tensor<i32>",
          "  %0 = stablehlo.get_dimension_size %a, dim = 2 : (tensor<2x3xf32>) -> tensor<i32>\n"
          "  return %0 : tensor<i32>\n"),
        AT("stablehlo.get_dimension_size") "dimension 2 is out of range [0, 2)"),
    BAD(F("(%a: tensor<2xf32>) -> tensor<2x3xf32>",
          "  %s = stablehlo.constant dense<[2, 4]> : tensor<2xi64>\n"
          "  %0 = stablehlo.dynamic_broadcast_in_dim %a, %s, dims = [0] : (tensor<2xf32>, "
          "tensor<2xi64>) -> tensor<2x3xf32>\n"
          "  return %0 : tensor<2x3xf32>\n"),
        "stablehlo.dynamic_broadcast_in_dim at t.mlir:3:3: output_dimensions [2, 4] does not fit "
        "the result type tensor<2x3xf32>"),
    BAD(F("(%a: tensor<2x3xf32>) -> tensor<?x?xf32>",
          "  %s = stablehlo.constant dense<[4, 2]> : tensor<2xi64>\n"
          "  %0 = stablehlo.dynamic_reshape %a, %s : (tensor<2x3xf32>, tensor<2xi64>) -> "
          "tensor<?x?xf32>\n"
          "  return %0 : tensor<?x?xf32>\n"),
        "stablehlo.dynamic_reshape at t.mlir:3:3: output_shape [4, 2] has 8 elements but the "
        "operand tensor<2x3xf32> has 6"),

    /* ================================================================ gather, scatter */
    OK(F("(%a: tensor<2x4x9xi32>, %i: tensor<1x5x2xi32>) -> tensor<1x5x8xi32>",
         "  %0 = \"stablehlo.gather\"(%a, %i) {dimension_numbers = #stablehlo.gather<offset_dims "
         "= [2], collapsed_slice_dims = [0, 1], start_index_map = [0, 1], index_vector_dim = 2>, "
         "slice_sizes = array<i64: 1, 1, 8>} : (tensor<2x4x9xi32>, tensor<1x5x2xi32>) -> "
         "tensor<1x5x8xi32>\n"
         "  return %0 : tensor<1x5x8xi32>\n")),
    BAD(F("(%a: tensor<2x4x9xi32>, %i: tensor<1x5x2xi32>) -> tensor<1x5x8xi32>",
          "  %0 = \"stablehlo.gather\"(%a, %i) {dimension_numbers = #stablehlo.gather<offset_dims "
          "= [2], collapsed_slice_dims = [0, 1], start_index_map = [0, 1], index_vector_dim = 2>, "
          "slice_sizes = array<i64: 1, 2, 8>} : (tensor<2x4x9xi32>, tensor<1x5x2xi32>) -> "
          "tensor<1x5x8xi32>\n"
          "  return %0 : tensor<1x5x8xi32>\n"),
        AT("stablehlo.gather") "slice_sizes[1] = 2 must be at most 1 for a collapsed dimension"),
    BAD(F("(%a: tensor<2x4x9xi32>, %i: tensor<1x5x2xi32>) -> tensor<1x5x8xi32>",
          "  %0 = \"stablehlo.gather\"(%a, %i) {dimension_numbers = #stablehlo.gather<offset_dims "
          "= [2], collapsed_slice_dims = [0, 1], start_index_map = [0, 1], index_vector_dim = 2>, "
          "slice_sizes = array<i64: 1, 1, 10>} : (tensor<2x4x9xi32>, tensor<1x5x2xi32>) -> "
          "tensor<1x5x8xi32>\n"
          "  return %0 : tensor<1x5x8xi32>\n"),
        AT("stablehlo.gather") "slice_sizes[2] = 10 is out of bounds for operand dimension of "
                               "size 9"),
    BAD(F("(%a: tensor<2x4x9xi32>, %i: tensor<1x5x3xi32>) -> tensor<1x5x8xi32>",
          "  %0 = \"stablehlo.gather\"(%a, %i) {dimension_numbers = #stablehlo.gather<offset_dims "
          "= [2], collapsed_slice_dims = [0, 1], start_index_map = [0, 1], index_vector_dim = 2>, "
          "slice_sizes = array<i64: 1, 1, 8>} : (tensor<2x4x9xi32>, tensor<1x5x3xi32>) -> "
          "tensor<1x5x8xi32>\n"
          "  return %0 : tensor<1x5x8xi32>\n"),
        AT("stablehlo.gather") "start_index_map has 2 entries but dimension index_vector_dim = 2 "
                               "of start_indices tensor<1x5x3xi32> has size 3"),
    BAD(F("(%a: tensor<2x4x9xi32>, %i: tensor<1x5x2xi32>) -> tensor<1x5x7xi32>",
          "  %0 = \"stablehlo.gather\"(%a, %i) {dimension_numbers = #stablehlo.gather<offset_dims "
          "= [2], collapsed_slice_dims = [0, 1], start_index_map = [0, 1], index_vector_dim = 2>, "
          "slice_sizes = array<i64: 1, 1, 8>} : (tensor<2x4x9xi32>, tensor<1x5x2xi32>) -> "
          "tensor<1x5x7xi32>\n"
          "  return %0 : tensor<1x5x7xi32>\n"),
        AT("stablehlo.gather") "result has shape tensor<1x5x7xi32> but the op requires shape "
                               "[1, 5, 8]"),
    BAD(F("(%a: tensor<2x4x9xi32>, %i: tensor<1x5x2xi32>) -> tensor<1x5x8xi32>",
          "  %0 = \"stablehlo.gather\"(%a, %i) {dimension_numbers = #stablehlo.gather<offset_dims "
          "= [2], collapsed_slice_dims = [1, 0], start_index_map = [0, 1], index_vector_dim = 2>, "
          "slice_sizes = array<i64: 1, 1, 8>} : (tensor<2x4x9xi32>, tensor<1x5x2xi32>) -> "
          "tensor<1x5x8xi32>\n"
          "  return %0 : tensor<1x5x8xi32>\n"),
        AT("stablehlo.gather") "collapsed_slice_dims [1, 0] must be sorted in increasing order"),
    OK(F("(%a: tensor<3x4x2xi32>, %i: tensor<2x3x2xi64>, %u: tensor<2x3x2x2xi32>) -> "
         "tensor<3x4x2xi32>",
         "  %0 = \"stablehlo.scatter\"(%a, %i, %u) ({\n"
         "  ^bb0(%x: tensor<i32>, %y: tensor<i32>):\n"
         "    %s = stablehlo.add %x, %y : tensor<i32>\n"
         "    stablehlo.return %s : tensor<i32>\n"
         "  }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [2, 3], "
         "inserted_window_dims = [0], scatter_dims_to_operand_dims = [1, 0], index_vector_dim = "
         "2>} : (tensor<3x4x2xi32>, tensor<2x3x2xi64>, tensor<2x3x2x2xi32>) -> "
         "tensor<3x4x2xi32>\n"
         "  return %0 : tensor<3x4x2xi32>\n")),
    BAD(F("(%a: tensor<3x4x2xi32>, %i: tensor<2x3x2xi64>, %u: tensor<2x3x2x2xi32>) -> "
          "tensor<3x4x2xi32>",
          "  %0 = \"stablehlo.scatter\"(%a, %i, %u) ({\n"
          "  ^bb0(%x: tensor<i32>, %y: tensor<i32>):\n"
          "    %s = stablehlo.add %x, %y : tensor<i32>\n"
          "    stablehlo.return %s : tensor<i32>\n"
          "  }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [2, 3], "
          "inserted_window_dims = [0], scatter_dims_to_operand_dims = [1, 0], index_vector_dim = "
          "2>} : (tensor<3x4x2xi32>, tensor<2x3x2xi64>, tensor<2x3x2x2xi32>) -> "
          "tensor<3x4x2xf32>\n"
          "  return %a : tensor<3x4x2xi32>\n"),
        AT("stablehlo.scatter") "result #0 has element type tensor<3x4x2xf32> but "
                                "update_computation returns i32"),
    BAD(F("(%a: tensor<3x4x2xi32>, %i: tensor<2x3x2xi64>, %u: tensor<2x3x5x2xi32>) -> "
          "tensor<3x4x2xi32>",
          "  %0 = \"stablehlo.scatter\"(%a, %i, %u) ({\n"
          "  ^bb0(%x: tensor<i32>, %y: tensor<i32>):\n"
          "    %s = stablehlo.add %x, %y : tensor<i32>\n"
          "    stablehlo.return %s : tensor<i32>\n"
          "  }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [2, 3], "
          "inserted_window_dims = [0], scatter_dims_to_operand_dims = [1, 0], index_vector_dim = "
          "2>} : (tensor<3x4x2xi32>, tensor<2x3x2xi64>, tensor<2x3x5x2xi32>) -> "
          "tensor<3x4x2xi32>\n"
          "  return %0 : tensor<3x4x2xi32>\n"),
        AT("stablehlo.scatter") "update window dimension 2 has size 5, larger than input "
                                "dimension 1 (4)"),
    BAD(F("(%a: tensor<3x4x2xi32>, %i: tensor<2x3x2xi64>, %u: tensor<2x3x2x2xi32>) -> "
          "tensor<3x4x2xi32>",
          "  %0 = \"stablehlo.scatter\"(%a, %i, %u) ({\n"
          "  ^bb0(%x: tensor<i32>, %y: tensor<i32>, %z: tensor<i32>):\n"
          "    stablehlo.return %x : tensor<i32>\n"
          "  }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [2, 3], "
          "inserted_window_dims = [0], scatter_dims_to_operand_dims = [1, 0], index_vector_dim = "
          "2>} : (tensor<3x4x2xi32>, tensor<2x3x2xi64>, tensor<2x3x2x2xi32>) -> "
          "tensor<3x4x2xi32>\n"
          "  return %0 : tensor<3x4x2xi32>\n"),
        AT("stablehlo.scatter") "update_computation region must take 2 arguments, got 3"),

    /* ================================================================ control flow */
    BAD(F("(%p: tensor<i1>, %a: tensor<2xf32>) -> tensor<2xf32>",
          "  %0 = \"stablehlo.if\"(%p) ({\n"
          "    stablehlo.return %a : tensor<2xf32>\n"
          "  }, {\n"
          "    %n = stablehlo.convert %a : (tensor<2xf32>) -> tensor<2xf64>\n"
          "    stablehlo.return %n : tensor<2xf64>\n"
          "  }) : (tensor<i1>) -> tensor<2xf32>\n"
          "  return %0 : tensor<2xf32>\n"),
        AT("stablehlo.if") "result #0 has type tensor<2xf32> but false_branch value #0 has type "
                           "tensor<2xf64>"),
    BAD(F("(%p: tensor<i32>, %a: tensor<2xf32>) -> tensor<2xf32>",
          "  %0 = \"stablehlo.if\"(%p) ({\n"
          "    stablehlo.return %a : tensor<2xf32>\n"
          "  }, {\n"
          "    stablehlo.return %a : tensor<2xf32>\n"
          "  }) : (tensor<i32>) -> tensor<2xf32>\n"
          "  return %0 : tensor<2xf32>\n"),
        AT("stablehlo.if") "pred must be tensor<i1>, got tensor<i32>"),
    BAD(F("(%i: tensor<i32>, %a: tensor<2xf32>) -> tensor<2xf32>",
          "  %0 = \"stablehlo.case\"(%i) ({\n"
          "    stablehlo.return %a : tensor<2xf32>\n"
          "  }, {\n"
          "    stablehlo.return %a, %a : tensor<2xf32>, tensor<2xf32>\n"
          "  }) : (tensor<i32>) -> tensor<2xf32>\n"
          "  return %0 : tensor<2xf32>\n"),
        AT("stablehlo.case") "branch 1 returns 2 values but the op has 1 result"),
    OK(F("(%a: tensor<i64>) -> tensor<i64>",
         "  %0 = stablehlo.while(%it = %a) : tensor<i64>\n"
         "   cond {\n"
         "    %c = stablehlo.compare LT, %it, %it : (tensor<i64>, tensor<i64>) -> tensor<i1>\n"
         "    stablehlo.return %c : tensor<i1>\n"
         "  } do {\n"
         "    stablehlo.return %it : tensor<i64>\n"
         "  }\n"
         "  return %0 : tensor<i64>\n")),
    BAD(F("(%a: tensor<i64>) -> tensor<i64>",
          "  %0 = stablehlo.while(%it = %a) : tensor<i64>\n"
          "   cond {\n"
          "    stablehlo.return %it : tensor<i64>\n"
          "  } do {\n"
          "    stablehlo.return %it : tensor<i64>\n"
          "  }\n"
          "  return %0 : tensor<i64>\n"),
        AT("stablehlo.while") "cond must return tensor<i1>, got tensor<i64>"),
    BAD(F("(%a: tensor<i64>) -> tensor<i64>",
          "  %0 = stablehlo.while(%it = %a) : tensor<i64>\n"
          "   cond {\n"
          "    %c = stablehlo.compare LT, %it, %it : (tensor<i64>, tensor<i64>) -> tensor<i1>\n"
          "    stablehlo.return %c : tensor<i1>\n"
          "  } do {\n"
          "    %n = stablehlo.convert %it : (tensor<i64>) -> tensor<i32>\n"
          "    stablehlo.return %n : tensor<i32>\n"
          "  }\n"
          "  return %0 : tensor<i64>\n"),
        AT("stablehlo.while") "operand #0 has type tensor<i64> but body value #0 has type "
                              "tensor<i32>"),
    BAD(F("(%a: tensor<2xf32>) -> tensor<2xf32>",
          "  %0 = \"stablehlo.map\"(%a) ({\n"
          "  ^bb0(%x: tensor<f64>):\n"
          "    stablehlo.return %x : tensor<f64>\n"
          "  }) {dimensions = array<i64: 0>} : (tensor<2xf32>) -> tensor<2xf32>\n"
          "  return %0 : tensor<2xf32>\n"),
        AT("stablehlo.map") "computation argument #0 must be tensor<f32>, got tensor<f64>"),
    BAD(F("(%a: tensor<2x3xf32>) -> tensor<2x3xf32>",
          "  %0 = \"stablehlo.map\"(%a) ({\n"
          "  ^bb0(%x: tensor<f32>):\n"
          "    stablehlo.return %x : tensor<f32>\n"
          "  }) {dimensions = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<2x3xf32>\n"
          "  return %0 : tensor<2x3xf32>\n"),
        AT("stablehlo.map") "dimensions [1, 0] must be [0, 1, ..., 1] (every dimension of the "
                            "inputs, in order)"),

    /* ================================================================ reductions */
    OK(F("(%a: tensor<2x3xf32>, %z: tensor<f32>) -> tensor<3xf32>",
         "  %0 = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [0] : "
         "(tensor<2x3xf32>, tensor<f32>) -> tensor<3xf32>\n"
         "  return %0 : tensor<3xf32>\n")),
    BAD(F("(%a: tensor<2x3xf32>, %z: tensor<f32>) -> tensor<3xf32>",
          "  %0 = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [2] : "
          "(tensor<2x3xf32>, tensor<f32>) -> tensor<3xf32>\n"
          "  return %0 : tensor<3xf32>\n"),
        AT("stablehlo.reduce") "dimensions: dimension 2 is out of range [0, 2)"),
    BAD(F("(%a: tensor<2x3xf32>, %z: tensor<f32>) -> tensor<2xf32>",
          "  %0 = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [0] : "
          "(tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>\n"
          "  return %0 : tensor<2xf32>\n"),
        AT("stablehlo.reduce") "result #0 has shape tensor<2xf32> but the op requires shape [3]"),
    BAD(F("(%a: tensor<2x3xf32>, %z: tensor<f32>) -> tensor<3xf32>",
          "  %0 = stablehlo.reduce(%a init: %z) across dimensions = [0] : (tensor<2x3xf32>, "
          "tensor<f32>) -> tensor<3xf32>\n"
          "   reducer(%x: tensor<i32>, %y: tensor<i32>) {\n"
          "    stablehlo.return %x : tensor<i32>\n"
          "  }\n"
          "  return %0 : tensor<3xf32>\n"),
        AT("stablehlo.reduce") "body region computes in i32, which element type f32 of input #0 "
                               "cannot be promoted to"),
    OK(F("(%a: tensor<2x3xbf16>, %z: tensor<bf16>) -> tensor<3xf32>",
         "  %0 = stablehlo.reduce(%a init: %z) across dimensions = [0] : (tensor<2x3xbf16>, "
         "tensor<bf16>) -> tensor<3xf32>\n"
         "   reducer(%x: tensor<f32>, %y: tensor<f32>) {\n"
         "    %s = stablehlo.add %x, %y : tensor<f32>\n"
         "    stablehlo.return %s : tensor<f32>\n"
         "  }\n"
         "  return %0 : tensor<3xf32>\n")),
    BAD(F("(%a: tensor<4x6xf32>, %z: tensor<f32>) -> tensor<2x3xf32>",
          "  %0 = \"stablehlo.reduce_window\"(%a, %z) ({\n"
          "  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"
          "    %s = stablehlo.maximum %x, %y : tensor<f32>\n"
          "    stablehlo.return %s : tensor<f32>\n"
          "  }) {window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 2, 0>} : "
          "(tensor<4x6xf32>, tensor<f32>) -> tensor<2x3xf32>\n"
          "  return %0 : tensor<2x3xf32>\n"),
        AT("stablehlo.reduce_window") "window_strides[1] = 0 must be positive"),
    BAD(F("(%a: tensor<4x6xf32>, %z: tensor<f32>) -> tensor<2x2xf32>",
          "  %0 = \"stablehlo.reduce_window\"(%a, %z) ({\n"
          "  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"
          "    %s = stablehlo.maximum %x, %y : tensor<f32>\n"
          "    stablehlo.return %s : tensor<f32>\n"
          "  }) {window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 2, 2>, padding "
          "= dense<[[0, 0], [1, 1]]> : tensor<2x2xi64>} : (tensor<4x6xf32>, tensor<f32>) -> "
          "tensor<2x2xf32>\n"
          "  return %0 : tensor<2x2xf32>\n"),
        AT("stablehlo.reduce_window") "result #0 has shape tensor<2x2xf32> but the op requires "
                                      "shape [2, 4]"),
    BAD(F("(%a: tensor<4x6xf32>, %s: tensor<2x2xf32>, %z: tensor<f32>) -> tensor<4x6xf32>",
          "  %0 = \"stablehlo.select_and_scatter\"(%a, %s, %z) ({\n"
          "  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"
          "    %c = stablehlo.compare GE, %x, %y : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
          "    stablehlo.return %c : tensor<i1>\n"
          "  }, {\n"
          "  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"
          "    %t = stablehlo.add %x, %y : tensor<f32>\n"
          "    stablehlo.return %t : tensor<f32>\n"
          "  }) {window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 2, 2>} : "
          "(tensor<4x6xf32>, tensor<2x2xf32>, tensor<f32>) -> tensor<4x6xf32>\n"
          "  return %0 : tensor<4x6xf32>\n"),
        AT("stablehlo.select_and_scatter") "source has shape tensor<2x2xf32> but the op requires "
                                           "shape [2, 3]"),
    BAD(F("(%a: tensor<4xf32>, %s: tensor<2xf32>, %z: tensor<f32>) -> tensor<4xf32>",
          "  %0 = \"stablehlo.select_and_scatter\"(%a, %s, %z) ({\n"
          "  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"
          "    stablehlo.return %x : tensor<f32>\n"
          "  }, {\n"
          "  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"
          "    %t = stablehlo.add %x, %y : tensor<f32>\n"
          "    stablehlo.return %t : tensor<f32>\n"
          "  }) {window_dimensions = array<i64: 2>, window_strides = array<i64: 2>} : "
          "(tensor<4xf32>, tensor<2xf32>, tensor<f32>) -> tensor<4xf32>\n"
          "  return %0 : tensor<4xf32>\n"),
        AT("stablehlo.select_and_scatter") "select must return tensor<i1>, got tensor<f32>"),
    BAD(F("(%a: tensor<4xf32>) -> tensor<4xf32>",
          "  %0 = \"stablehlo.sort\"(%a) ({\n"
          "  ^bb0(%x: tensor<f32>, %y: tensor<f64>):\n"
          "    %c = stablehlo.constant dense<true> : tensor<i1>\n"
          "    stablehlo.return %c : tensor<i1>\n"
          "  }) {dimension = 0 : i64} : (tensor<4xf32>) -> tensor<4xf32>\n"
          "  return %0 : tensor<4xf32>\n"),
        AT("stablehlo.sort") "comparator argument #1 must be tensor<f32>, got tensor<f64>"),
    BAD(F("(%a: tensor<4xf32>) -> tensor<4xf32>",
          "  %0 = \"stablehlo.sort\"(%a) ({\n"
          "  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"
          "    %c = stablehlo.constant dense<true> : tensor<i1>\n"
          "    stablehlo.return %c : tensor<i1>\n"
          "  }) {dimension = 1 : i64} : (tensor<4xf32>) -> tensor<4xf32>\n"
          "  return %0 : tensor<4xf32>\n"),
        AT("stablehlo.sort") "dimension 1 is out of range [-1, 1)"),

    /* ================================================================ dot, convolution */
    BAD(F("(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) -> tensor<2x5xf32>",
          "  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : "
          "(tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>\n"
          "  return %0 : tensor<2x5xf32>\n"),
        AT("stablehlo.dot_general") "lhs contracting dimension 1 has size 3 but rhs contracting "
                                    "dimension 0 has size 4"),
    BAD(F("(%a: tensor<7x2x3xf32>, %b: tensor<7x3x5xf32>) -> tensor<7x2x5xf32>",
          "  %0 = stablehlo.dot_general %a, %b, batching_dims = [0] x [], contracting_dims = [2] x "
          "[1] : (tensor<7x2x3xf32>, tensor<7x3x5xf32>) -> tensor<7x2x5xf32>\n"
          "  return %0 : tensor<7x2x5xf32>\n"),
        AT("stablehlo.dot_general") "lhs and rhs must have the same number of batching "
                                    "dimensions, got 1 and 0"),
    BAD(F("(%a: tensor<7x2x3xf32>, %b: tensor<7x3x5xf32>) -> tensor<7x5x2xf32>",
          "  %0 = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] "
          "x [1] : (tensor<7x2x3xf32>, tensor<7x3x5xf32>) -> tensor<7x5x2xf32>\n"
          "  return %0 : tensor<7x5x2xf32>\n"),
        AT("stablehlo.dot_general") "result has shape tensor<7x5x2xf32> but the op requires "
                                    "shape [7, 2, 5]"),
    BAD(F("(%a: tensor<2x3xf32>, %b: tensor<3x5xf32>) -> tensor<2x5xf32>",
          "  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1, 1] x [0, 1] : "
          "(tensor<2x3xf32>, tensor<3x5xf32>) -> tensor<2x5xf32>\n"
          "  return %0 : tensor<2x5xf32>\n"),
        AT("stablehlo.dot_general") "lhs_contracting_dimensions has duplicate dimension 1"),
    BAD(F("(%a: tensor<2x3x4xf32>, %b: tensor<3xf32>) -> tensor<2xf32>",
          "  %0 = stablehlo.dot %a, %b : (tensor<2x3x4xf32>, tensor<3xf32>) -> tensor<2xf32>\n"
          "  return %0 : tensor<2xf32>\n"),
        AT("stablehlo.dot") "lhs and rhs must have rank 1 or 2, got tensor<2x3x4xf32> and "
                            "tensor<3xf32>"),
    OK(F("(%a: tensor<1x8x8x3xf32>, %w: tensor<3x3x3x16xf32>) -> tensor<1x6x6x16xf32>",
         "  %0 = stablehlo.convolution(%a, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, "
         "f], window = {stride = [1, 1]} {batch_group_count = 1 : i64, feature_group_count = 1 : "
         "i64} : (tensor<1x8x8x3xf32>, tensor<3x3x3x16xf32>) -> tensor<1x6x6x16xf32>\n"
         "  return %0 : tensor<1x6x6x16xf32>\n")),
    BAD(F("(%a: tensor<1x8x8x3xf32>, %w: tensor<3x3x3x16xf32>) -> tensor<1x8x8x16xf32>",
          "  %0 = stablehlo.convolution(%a, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, "
          "f], window = {stride = [1, 1]} {batch_group_count = 1 : i64, feature_group_count = 1 : "
          "i64} : (tensor<1x8x8x3xf32>, tensor<3x3x3x16xf32>) -> tensor<1x8x8x16xf32>\n"
          "  return %0 : tensor<1x8x8x16xf32>\n"),
        AT("stablehlo.convolution") "result has shape tensor<1x8x8x16xf32> but the op requires "
                                    "shape [1, 6, 6, 16]"),
    BAD(F("(%a: tensor<1x8x8x4xf32>, %w: tensor<3x3x4x16xf32>) -> tensor<1x6x6x16xf32>",
          "  %0 = stablehlo.convolution(%a, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, "
          "f], window = {stride = [1, 1]} {batch_group_count = 1 : i64, feature_group_count = 2 : "
          "i64} : (tensor<1x8x8x4xf32>, tensor<3x3x4x16xf32>) -> tensor<1x6x6x16xf32>\n"
          "  return %0 : tensor<1x6x6x16xf32>\n"),
        AT("stablehlo.convolution") "kernel input feature dimension size 4 must be the input "
                                    "feature size 4 / feature_group_count 2"),
    BAD(F("(%a: tensor<1x8x8x3xf32>, %w: tensor<3x3x3x16xf32>) -> tensor<1x6x6x16xf32>",
          "  %0 = stablehlo.convolution(%a, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, "
          "f], window = {stride = [1, 0]} {batch_group_count = 1 : i64, feature_group_count = 1 : "
          "i64} : (tensor<1x8x8x3xf32>, tensor<3x3x3x16xf32>) -> tensor<1x6x6x16xf32>\n"
          "  return %0 : tensor<1x6x6x16xf32>\n"),
        AT("stablehlo.convolution") "window_strides[1] = 0 must be positive"),

    /* ================================================================ linear algebra, fft */
    BAD(F("(%a: tensor<3x4xf32>) -> tensor<3x4xf32>",
          "  %0 = stablehlo.cholesky %a, lower = true : tensor<3x4xf32>\n"
          "  return %0 : tensor<3x4xf32>\n"),
        AT("stablehlo.cholesky") "the two minor dimensions of a must be equal (square matrices), "
                                 "got tensor<3x4xf32>"),
    BAD(F("(%a: tensor<3x3xf32>, %b: tensor<4x2xf32>) -> tensor<4x2xf32>",
          "  %0 = \"stablehlo.triangular_solve\"(%a, %b) {left_side = true, lower = true, "
          "transpose_a = #stablehlo<transpose NO_TRANSPOSE>, unit_diagonal = false} : "
          "(tensor<3x3xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>\n"
          "  return %0 : tensor<4x2xf32>\n"),
        AT("stablehlo.triangular_solve") "a tensor<3x3xf32> and b tensor<4x2xf32> must share the "
                                         "second-minor dimension of b as the dimension size"),
    BAD(F("(%a: tensor<8xcomplex<f32>>) -> tensor<5xcomplex<f32>>",
          "  %0 = stablehlo.fft %a, type = RFFT, length = [8] : (tensor<8xcomplex<f32>>) -> "
          "tensor<5xcomplex<f32>>\n"
          "  return %0 : tensor<5xcomplex<f32>>\n"),
        AT("stablehlo.fft") "RFFT needs an f32 or f64 operand, got tensor<8xcomplex<f32>>"),
    BAD(F("(%a: tensor<8xf32>) -> tensor<8xcomplex<f32>>",
          "  %0 = stablehlo.fft %a, type = RFFT, length = [8] : (tensor<8xf32>) -> "
          "tensor<8xcomplex<f32>>\n"
          "  return %0 : tensor<8xcomplex<f32>>\n"),
        AT("stablehlo.fft") "result has shape tensor<8xcomplex<f32>> but the op requires shape "
                            "[5]"),
    OK(F("(%a: tensor<8xf32>) -> tensor<5xcomplex<f32>>",
         "  %0 = stablehlo.fft %a, type = RFFT, length = [8] : (tensor<8xf32>) -> "
         "tensor<5xcomplex<f32>>\n"
         "  return %0 : tensor<5xcomplex<f32>>\n")),
    BAD(F("(%x: tensor<2x3xf32>, %s: tensor<2xf32>) -> tensor<2x3xf32>",
          "  %0 = \"stablehlo.batch_norm_inference\"(%x, %s, %s, %s, %s) {epsilon = 1.0e-05 : f32, "
          "feature_index = 1 : i64} : (tensor<2x3xf32>, tensor<2xf32>, tensor<2xf32>, "
          "tensor<2xf32>, tensor<2xf32>) -> tensor<2x3xf32>\n"
          "  return %0 : tensor<2x3xf32>\n"),
        AT("stablehlo.batch_norm_inference") "scale has 2 entries but the feature dimension 1 of "
                                             "operand has size 3"),
    BAD(F("(%a: tensor<i32>, %s: tensor<1xi64>) -> tensor<3xi32>",
          "  %0 = stablehlo.rng %a, %a, %s, distribution = NORMAL : (tensor<i32>, tensor<i32>, "
          "tensor<1xi64>) -> tensor<3xi32>\n"
          "  return %0 : tensor<3xi32>\n"),
        AT("stablehlo.rng") "a NORMAL distribution needs floating-point a and b, got tensor<i32>"),
    BAD(F("(%s: tensor<2xui64>) -> tensor<3xui64>",
          "  %0:2 = stablehlo.rng_bit_generator %s, algorithm = THREE_FRY : (tensor<2xui64>) -> "
          "(tensor<3xui64>, tensor<4xui32>)\n"
          "  return %0#0 : tensor<3xui64>\n"),
        AT("stablehlo.rng_bit_generator") "initial_state and output_state must have the same "
                                          "type, got tensor<2xui64> and tensor<3xui64>"),

    /* ================================================================ collectives */
    BAD(F("(%a: tensor<4xf32>) -> tensor<4xf32>",
          "  %0 = \"stablehlo.all_reduce\"(%a) ({\n"
          "  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"
          "    %s = stablehlo.add %x, %y : tensor<f32>\n"
          "    stablehlo.return %s : tensor<f32>\n"
          "  }) {replica_groups = dense<[[0, 1], [1, 2]]> : tensor<2x2xi64>} : (tensor<4xf32>) -> "
          "tensor<4xf32>\n"
          "  return %0 : tensor<4xf32>\n"),
        AT("stablehlo.all_reduce") "replica id 1 appears more than once in replica_groups"),
    BAD(F("(%a: tensor<4xf32>) -> tensor<4xf32>",
          "  %0 = \"stablehlo.all_reduce\"(%a) ({\n"
          "  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"
          "    %s = stablehlo.add %x, %y : tensor<f32>\n"
          "    stablehlo.return %s : tensor<f32>\n"
          "  }) {replica_groups = dense<[[0, 2]]> : tensor<1x2xi64>} : (tensor<4xf32>) -> "
          "tensor<4xf32>\n"
          "  return %0 : tensor<4xf32>\n"),
        AT("stablehlo.all_reduce") "replica_groups does not contain replica id 1 (its 2 ids must "
                                   "be 0 to 1)"),
    BAD(F("(%a: tensor<4xf32>) -> tensor<4xf32>",
          "  %0 = \"stablehlo.all_reduce\"(%a) ({\n"
          "  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"
          "    %s = stablehlo.add %x, %y : tensor<f32>\n"
          "    stablehlo.return %s : tensor<f32>\n"
          "  }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>, use_global_device_ids} : "
          "(tensor<4xf32>) -> tensor<4xf32>\n"
          "  return %0 : tensor<4xf32>\n"),
        AT("stablehlo.all_reduce") "channel_id must be positive when use_global_device_ids is "
                                   "set, got 0"),
    BAD(F("(%a: tensor<2x2xf32>) -> tensor<2x3xf32>",
          "  %0 = \"stablehlo.all_gather\"(%a) {all_gather_dim = 1 : i64, replica_groups = "
          "dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<2x2xf32>) -> tensor<2x3xf32>\n"
          "  return %0 : tensor<2x3xf32>\n"),
        AT("stablehlo.all_gather") "result #0 dimension 1 has size 3, not a multiple of the "
                                   "operand's 2"),
    BAD(F("(%a: tensor<3x4xf32>) -> tensor<6x2xf32>",
          "  %0 = \"stablehlo.all_to_all\"(%a) {split_dimension = 1 : i64, concat_dimension = 0 : "
          "i64, split_count = 3 : i64, replica_groups = dense<[[0, 1, 2]]> : tensor<1x3xi64>} : "
          "(tensor<3x4xf32>) -> tensor<6x2xf32>\n"
          "  return %0 : tensor<6x2xf32>\n"),
        AT("stablehlo.all_to_all") "operand #0 tensor<3x4xf32>: split dimension size 4 is not a "
                                   "multiple of split_count 3"),
    BAD(F("(%a: tensor<4xf32>) -> tensor<4xf32>",
          "  %0 = \"stablehlo.collective_permute\"(%a) {source_target_pairs = dense<[[0, 1], [0, "
          "2]]> : tensor<2x2xi64>} : (tensor<4xf32>) -> tensor<4xf32>\n"
          "  return %0 : tensor<4xf32>\n"),
        AT("stablehlo.collective_permute") "source 0 appears more than once in "
                                           "source_target_pairs"),
    BAD(F("(%a: tensor<4xf32>) -> tensor<3xf32>",
          "  %0 = \"stablehlo.reduce_scatter\"(%a) ({\n"
          "  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"
          "    %s = stablehlo.add %x, %y : tensor<f32>\n"
          "    stablehlo.return %s : tensor<f32>\n"
          "  }) {scatter_dimension = 0 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} "
          ": (tensor<4xf32>) -> tensor<3xf32>\n"
          "  return %0 : tensor<3xf32>\n"),
        AT("stablehlo.reduce_scatter") "operand scatter dimension size 4 is not a multiple of the "
                                       "result's 3"),
    BAD(F("(%a: tensor<4xf32>, %t: !stablehlo.token) -> !stablehlo.token",
          "  %0 = \"stablehlo.send\"(%a, %t) {channel_handle = #stablehlo.channel_handle<handle = "
          "1, type = 2>, is_host_transfer = false} : (tensor<4xf32>, !stablehlo.token) -> "
          "!stablehlo.token\n"
          "  return %0 : !stablehlo.token\n"),
        AT("stablehlo.send") "channel type must be DEVICE_TO_DEVICE (1) when is_host_transfer is "
                             "false, got 2"),
    BAD(F("(%t: !stablehlo.token) -> tensor<4xf32>",
          "  %0:2 = \"stablehlo.infeed\"(%t) : (!stablehlo.token) -> (tensor<4xf32>, "
          "tensor<4xf32>)\n"
          "  return %0#0 : tensor<4xf32>\n"),
        AT("stablehlo.infeed") "the last result must be !stablehlo.token, got tensor<4xf32>"),

    /* ================================================================ tuples, calls, misc */
    BAD(F("(%a: tensor<2xf32>) -> tensor<2xf32>",
          "  %0 = stablehlo.tuple %a, %a : tuple<tensor<2xf32>, tensor<2xf32>>\n"
          "  %1 = stablehlo.get_tuple_element %0[2] : (tuple<tensor<2xf32>, tensor<2xf32>>) -> "
          "tensor<2xf32>\n"
          "  return %1 : tensor<2xf32>\n"),
        "stablehlo.get_tuple_element at t.mlir:3:3: index 2 is out of range [0, 2) for "
        "tuple<tensor<2xf32>, tensor<2xf32>>"),
    BAD(F("(%a: tensor<2xf32>) -> tensor<2xf32>",
          "  %0 = \"stablehlo.custom_call\"(%a) {call_target_name = \"foo\", api_version = 2 : i32, "
          "backend_config = {x = 1 : i32}} : (tensor<2xf32>) -> tensor<2xf32>\n"
          "  return %0 : tensor<2xf32>\n"),
        AT("stablehlo.custom_call") "backend_config for api_version API_VERSION_STATUS_RETURNING "
                                    "must be a string"),
    BAD(F("(%a: tensor<2xf32>) -> tensor<3xf32>",
          "  %0 = \"stablehlo.custom_call\"(%a) {call_target_name = \"foo\", "
          "output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [], "
          "operand_index = 0, operand_tuple_indices = []>]} : (tensor<2xf32>) -> tensor<3xf32>\n"
          "  return %0 : tensor<3xf32>\n"),
        AT("stablehlo.custom_call") "output_operand_alias: operand part has type tensor<2xf32> "
                                    "but output part has type tensor<3xf32>"),
    BAD(F("(%a: tensor<2x3xf32>) -> tensor<2x3xf32>",
          "  %0 = \"stablehlo.custom_call\"(%a) {call_target_name = \"foo\", operand_layouts = "
          "[dense<[0, 0]> : tensor<2xindex>], result_layouts = [dense<[1, 0]> : tensor<2xindex>]} "
          ": (tensor<2x3xf32>) -> tensor<2x3xf32>\n"
          "  return %0 : tensor<2x3xf32>\n"),
        AT("stablehlo.custom_call") "operand #0: layout must be a permutation of [0, 2) for "
                                    "tensor<2x3xf32>"),
    BAD("func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
        "  %0 = stablehlo.composite \"my.op\" %a {decomposition = @impl} : (tensor<2xf32>) -> "
        "tensor<2xf32>\n"
        "  return %0 : tensor<2xf32>\n"
        "}\n"
        "func.func @impl(%b: tensor<3xf32>) -> tensor<2xf32> {\n"
        "  %1 = stablehlo.slice %b [0:2] : (tensor<3xf32>) -> tensor<2xf32>\n"
        "  return %1 : tensor<2xf32>\n"
        "}\n",
        AT("stablehlo.composite") "operand #0 has type tensor<2xf32> but decomposition @impl "
                                  "expects tensor<3xf32>"),
    BAD("func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
        "  %0 = stablehlo.composite \"myop\" %a {decomposition = @impl} : (tensor<2xf32>) -> "
        "tensor<2xf32>\n"
        "  return %0 : tensor<2xf32>\n"
        "}\n"
        "func.func @impl(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
        "  return %a : tensor<2xf32>\n"
        "}\n",
        AT("stablehlo.composite") "name \"myop\" must be a namespaced op name such as "
                                  "\"my_namespace.my_op\""),
    BAD("func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
        "  %0 = func.call @f(%a, %a) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>\n"
        "  return %0 : tensor<2xf32>\n"
        "}\n"
        "func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
        "  return %a : tensor<2xf32>\n"
        "}\n",
        AT("func.call") "has 2 operands but callee @f takes 1"),
    BAD(F("(%a: tensor<2xf32>) -> tensor<2xf32>",
          "  %0 = stablehlo.after_all %a : tensor<2xf32>\n"
          "  return %a : tensor<2xf32>\n"),
        AT("stablehlo.after_all") "operand #0 must be !stablehlo.token, got tensor<2xf32>"),
    BAD(F("() -> tensor<ui64>",
          "  %0 = stablehlo.partition_id : tensor<ui64>\n"
          "  return %0 : tensor<ui64>\n"),
        AT("stablehlo.partition_id") "result must be tensor<ui32>, got tensor<ui64>"),
    BAD(F("(%a: tensor<2xf32>) -> tensor<3xf32>",
          "  %0 = \"stablehlo.optimization_barrier\"(%a) : (tensor<2xf32>) -> tensor<3xf32>\n"
          "  return %0 : tensor<3xf32>\n"),
        AT("stablehlo.optimization_barrier") "operand #0 and result #0 must have the same type, "
                                             "got tensor<2xf32> and tensor<3xf32>"),
    BAD(F("(%a: tensor<2xf32>) -> tensor<2xf32>",
          "  %0 = stablehlo.negate %a : tensor<2xf32>\n"
          "  return %0, %0 : tensor<2xf32>, tensor<2xf32>\n"),
        "func.return at t.mlir:3:3: returns 2 values but function @main has 1 result"),

    /* ================================================================ more shapes */
    BAD(F("(%a: tensor<3xi32>) -> tensor<2x1x3xi32>",
          "  %0 = \"stablehlo.broadcast\"(%a) {broadcast_sizes = array<i64: 1, 2>} : "
          "(tensor<3xi32>) -> tensor<2x1x3xi32>\n"
          "  return %0 : tensor<2x1x3xi32>\n"),
        AT("stablehlo.broadcast") "result has shape tensor<2x1x3xi32> but the op requires shape "
                                  "[1, 2, 3]"),
    BAD(F("(%a: tensor<3xf32>) -> tensor<?x3xf32>",
          "  %0 = stablehlo.broadcast_in_dim %a, dims = [1] : (tensor<3xf32>) -> tensor<?x3xf32>\n"
          "  return %0 : tensor<?x3xf32>\n"),
        AT("stablehlo.broadcast_in_dim") "result must have a static shape or exactly one dynamic "
                                         "dimension with a bound, got tensor<?x3xf32>"),
    OK(F("(%a: tensor<3xf32>) -> tensor<?x3xf32, #stablehlo.bounds<4, ?>>",
         "  %0 = stablehlo.broadcast_in_dim %a, dims = [1] : (tensor<3xf32>) -> tensor<?x3xf32, "
         "#stablehlo.bounds<4, ?>>\n"
         "  return %0 : tensor<?x3xf32, #stablehlo.bounds<4, ?>>\n")),
    BAD(F("(%a: tensor<2x3xf32>, %s: tensor<?xi64>) -> tensor<?x?xf32>",
          "  %0 = stablehlo.dynamic_reshape %a, %s : (tensor<2x3xf32>, tensor<?xi64>) -> "
          "tensor<?x?xf32>\n"
          "  return %0 : tensor<?x?xf32>\n"),
        AT("stablehlo.dynamic_reshape") "output_shape must have a static shape, got "
                                        "tensor<?xi64>"),
    BAD(F("(%a: tensor<2x3xf32>, %s: tensor<3xi64>) -> tensor<?x?xf32>",
          "  %0 = stablehlo.dynamic_reshape %a, %s : (tensor<2x3xf32>, tensor<3xi64>) -> "
          "tensor<?x?xf32>\n"
          "  return %0 : tensor<?x?xf32>\n"),
        AT("stablehlo.dynamic_reshape") "output_shape has 3 entries but the result "
                                        "tensor<?x?xf32> has rank 2"),
    BAD(F("(%a: tensor<2x3xf32>, %s: tensor<2xi64>) -> tensor<?x?x?xf32>",
          "  %0 = stablehlo.dynamic_broadcast_in_dim %a, %s, dims = [0, 0] : (tensor<2x3xf32>, "
          "tensor<2xi64>) -> tensor<?x?x?xf32>\n"
          "  return %0 : tensor<?x?x?xf32>\n"),
        AT("stablehlo.dynamic_broadcast_in_dim") "broadcast_dimensions has duplicate dimension 0"),
    BAD(F("(%a: tensor<2x3xf32>, %s: tensor<3xi64>) -> tensor<?x?x?xf32>",
          "  %0 = stablehlo.dynamic_broadcast_in_dim %a, %s, dims = [0, 1] {"
          "known_expanding_dimensions = array<i64: 0>, known_nonexpanding_dimensions = array<i64: "
          "0>} : (tensor<2x3xf32>, tensor<3xi64>) -> tensor<?x?x?xf32>\n"
          "  return %0 : tensor<?x?x?xf32>\n"),
        AT("stablehlo.dynamic_broadcast_in_dim") "dimension 0 appears in both "
                                                 "known_expanding_dimensions and "
                                                 "known_nonexpanding_dimensions"),
    BAD(F("(%a: tensor<2x3xf32>, %p: tensor<f32>, %l: tensor<2xi64>, %i: tensor<3xi64>) -> "
          "tensor<?x?xf32>",
          "  %0 = stablehlo.dynamic_pad %a, %p, %l, %l, %i : (tensor<2x3xf32>, tensor<f32>, "
          "tensor<2xi64>, tensor<2xi64>, tensor<3xi64>) -> tensor<?x?xf32>\n"
          "  return %0 : tensor<?x?xf32>\n"),
        AT("stablehlo.dynamic_pad") "interior_padding tensor<3xi64> must have one entry per "
                                    "operand dimension (2)"),
    BAD(F("(%a: tensor<8xf32>) -> tensor<2xf32>",
          "  %s = stablehlo.constant dense<1> : tensor<1xi64>\n"
          "  %l = stablehlo.constant dense<5> : tensor<1xi64>\n"
          "  %0 = stablehlo.real_dynamic_slice %a, %s, %l, %s : (tensor<8xf32>, tensor<1xi64>, "
          "tensor<1xi64>, tensor<1xi64>) -> tensor<2xf32>\n"
          "  return %0 : tensor<2xf32>\n"),
        "stablehlo.real_dynamic_slice at t.mlir:4:3: result has shape tensor<2xf32> but the op "
        "requires shape [4]"),
    BAD(F("(%a: tensor<4x3xf32>, %n: tensor<i32>) -> tensor<4x?xf32>",
          "  %0 = stablehlo.set_dimension_size %a, %n, dim = 2 : (tensor<4x3xf32>, tensor<i32>) -> "
          "tensor<4x?xf32>\n"
          "  return %0 : tensor<4x?xf32>\n"),
        AT("stablehlo.set_dimension_size") "dimension 2 is out of range [0, 2)"),
    BAD(F("(%a: tensor<8x128x3072x64xf32>, %i: tensor<8x16x1024xi32>) -> "
          "tensor<8x128x16x1024x32xf32>",
          "  %0 = \"stablehlo.torch_index_select\"(%a, %i) {dim = 2 : i64, batch_dims = 1 : i64} : "
          "(tensor<8x128x3072x64xf32>, tensor<8x16x1024xi32>) -> tensor<8x128x16x1024x32xf32>\n"
          "  return %0 : tensor<8x128x16x1024x32xf32>\n"),
        AT("stablehlo.torch_index_select") "result has shape tensor<8x128x16x1024x32xf32> but the "
                                           "op requires shape [8, 128, 16, 1024, 64]"),
    BAD(F("(%a: tensor<2x4x9xi32>, %i: tensor<1x5x2xi32>, %s: tensor<3xi32>) -> "
          "tensor<1x5x8xi32>",
          "  %0 = \"stablehlo.dynamic_gather\"(%a, %i, %s) {dimension_numbers = "
          "#stablehlo.gather<offset_dims = [2], collapsed_slice_dims = [0, 1], start_index_map = "
          "[0, 1], index_vector_dim = 3>} : (tensor<2x4x9xi32>, tensor<1x5x2xi32>, tensor<3xi32>) "
          "-> tensor<1x5x8xi32>\n"
          "  return %0 : tensor<1x5x8xi32>\n"),
        AT("stablehlo.dynamic_gather") "start_index_map has 2 entries but dimension "
                                       "index_vector_dim = 3 of start_indices tensor<1x5x2xi32> "
                                       "has size 1"),
    BAD(F("(%a: tensor<5x2x4xf32>, %i: tensor<5x3x1xi32>) -> tensor<5x3x4xf32>",
          "  %0 = \"stablehlo.gather\"(%a, %i) {dimension_numbers = #stablehlo.gather<offset_dims "
          "= [2], collapsed_slice_dims = [1], operand_batching_dims = [0], "
          "start_indices_batching_dims = [1], start_index_map = [1], index_vector_dim = 2>, "
          "slice_sizes = array<i64: 1, 1, 4>} : (tensor<5x2x4xf32>, tensor<5x3x1xi32>) -> "
          "tensor<5x3x4xf32>\n"
          "  return %0 : tensor<5x3x4xf32>\n"),
        AT("stablehlo.gather") "operand batching dimension 0 has size 5 but start_indices "
                               "batching dimension 1 has size 3"),
    OK(F("(%a: tensor<5x2x4xf32>, %i: tensor<5x3x1xi32>) -> tensor<5x3x4xf32>",
         "  %0 = \"stablehlo.gather\"(%a, %i) {dimension_numbers = #stablehlo.gather<offset_dims "
         "= [2], collapsed_slice_dims = [1], operand_batching_dims = [0], "
         "start_indices_batching_dims = [0], start_index_map = [1], index_vector_dim = 2>, "
         "slice_sizes = array<i64: 1, 1, 4>} : (tensor<5x2x4xf32>, tensor<5x3x1xi32>) -> "
         "tensor<5x3x4xf32>\n"
         "  return %0 : tensor<5x3x4xf32>\n")),
    BAD(F("(%a: tensor<3x4x2xi32>, %i: tensor<2x3x2xi64>, %u: tensor<2x3x2x2xi32>) -> "
          "tensor<3x4x2xi32>",
          "  %0 = \"stablehlo.scatter\"(%a, %i, %u) ({\n"
          "  ^bb0(%x: tensor<i32>, %y: tensor<i32>):\n"
          "    stablehlo.return %x : tensor<i32>\n"
          "  }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [2, 3], "
          "inserted_window_dims = [0], scatter_dims_to_operand_dims = [1, 1], index_vector_dim = "
          "2>} : (tensor<3x4x2xi32>, tensor<2x3x2xi64>, tensor<2x3x2x2xi32>) -> "
          "tensor<3x4x2xi32>\n"
          "  return %0 : tensor<3x4x2xi32>\n"),
        AT("stablehlo.scatter") "scatter_dims_to_operand_dims has duplicate dimension 1"),
    BAD(F("(%a: tensor<3x4x2xi32>, %i: tensor<2x3x2xi64>, %u: tensor<2x5x2x2xi32>) -> "
          "tensor<3x4x2xi32>",
          "  %0 = \"stablehlo.scatter\"(%a, %i, %u) ({\n"
          "  ^bb0(%x: tensor<i32>, %y: tensor<i32>):\n"
          "    stablehlo.return %x : tensor<i32>\n"
          "  }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [2, 3], "
          "inserted_window_dims = [0], scatter_dims_to_operand_dims = [1, 0], index_vector_dim = "
          "2>} : (tensor<3x4x2xi32>, tensor<2x3x2xi64>, tensor<2x5x2x2xi32>) -> "
          "tensor<3x4x2xi32>\n"
          "  return %0 : tensor<3x4x2xi32>\n"),
        AT("stablehlo.scatter") "update scatter dimension 1 has size 5 but the matching "
                                "dimension of scatter_indices tensor<2x3x2xi64> has size 3"),

    /* ================================================================ more control flow */
    BAD(F("(%i: tensor<i64>, %a: tensor<2xf32>) -> tensor<2xf32>",
          "  %0 = \"stablehlo.case\"(%i) ({\n"
          "    stablehlo.return %a : tensor<2xf32>\n"
          "  }) : (tensor<i64>) -> tensor<2xf32>\n"
          "  return %0 : tensor<2xf32>\n"),
        AT("stablehlo.case") "index must be tensor<i32>, got tensor<i64>"),
    BAD(F("(%a: tensor<i64>, %b: tensor<f32>) -> tensor<i64>",
          "  %0:2 = stablehlo.while(%it = %a, %x = %b) : tensor<i64>, tensor<f32>\n"
          "   cond {\n"
          "    %c = stablehlo.compare LT, %it, %it : (tensor<i64>, tensor<i64>) -> tensor<i1>\n"
          "    stablehlo.return %c : tensor<i1>\n"
          "  } do {\n"
          "    stablehlo.return %it : tensor<i64>\n"
          "  }\n"
          "  return %0#0 : tensor<i64>\n"),
        AT("stablehlo.while") "body returns 1 values but the loop carries 2"),
    BAD(F("(%a: tensor<4xf32>, %b: tensor<4xi32>) -> tensor<4xf32>",
          "  %0:2 = \"stablehlo.sort\"(%a, %b) ({\n"
          "  ^bb0(%x: tensor<f32>, %y: tensor<f32>, %z: tensor<i32>, %w: tensor<i32>):\n"
          "    %c = stablehlo.compare LT, %x, %y : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
          "    stablehlo.return %c : tensor<i1>\n"
          "  }) {dimension = 0 : i64} : (tensor<4xf32>, tensor<4xi32>) -> (tensor<4xf32>, "
          "tensor<4xf32>)\n"
          "  return %0#0 : tensor<4xf32>\n"),
        AT("stablehlo.sort") "inputs[1] and result #1 must have the same type, got tensor<4xi32> "
                             "and tensor<4xf32>"),
    BAD(F("(%a: tensor<2x3xf32>, %b: tensor<2x3xi32>, %z: tensor<f32>, %w: tensor<i32>) -> "
          "tensor<3xf32>",
          "  %0:2 = stablehlo.reduce(%a init: %z), (%b init: %z) across dimensions = [0] : "
          "(tensor<2x3xf32>, tensor<2x3xi32>, tensor<f32>, tensor<f32>) -> (tensor<3xf32>, "
          "tensor<3xi32>)\n"
          "   reducer(%x: tensor<f32>, %y: tensor<f32>) (%u: tensor<i32>, %v: tensor<i32>) {\n"
          "    stablehlo.return %x, %u : tensor<f32>, tensor<i32>\n"
          "  }\n"
          "  return %0#0 : tensor<3xf32>\n"),
        AT("stablehlo.reduce") "inputs[1] and init_values[1] must have the same element type (up "
                               "to quantization parameters), got tensor<2x3xi32> and "
                               "tensor<f32>"),
    BAD(F("(%a: tensor<2x3xf32>, %z: tensor<f32>) -> tensor<3xf32>",
          "  %0 = stablehlo.reduce(%a init: %z) across dimensions = [0] : (tensor<2x3xf32>, "
          "tensor<f32>) -> tensor<3xf32>\n"
          "   reducer(%x: tensor<f32>, %y: tensor<f32>) {\n"
          "    stablehlo.return %x, %y : tensor<f32>, tensor<f32>\n"
          "  }\n"
          "  return %0 : tensor<3xf32>\n"),
        AT("stablehlo.reduce") "body region must return 1 value, got 2"),
    BAD(F("(%a: tensor<4x6xf32>, %z: tensor<f32>) -> tensor<2x3xf32>",
          "  %0 = \"stablehlo.reduce_window\"(%a, %z) ({\n"
          "  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"
          "    stablehlo.return %x : tensor<f32>\n"
          "  }) {window_dimensions = array<i64: 2>} : (tensor<4x6xf32>, tensor<f32>) -> "
          "tensor<2x3xf32>\n"
          "  return %0 : tensor<2x3xf32>\n"),
        AT("stablehlo.reduce_window") "window_dimensions has 1 entries but the input rank is 2"),
    BAD(F("(%a: tensor<4x6xf32>, %z: tensor<f32>) -> tensor<2x3xf32>",
          "  %0 = \"stablehlo.reduce_window\"(%a, %z) ({\n"
          "  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"
          "    stablehlo.return %x : tensor<f32>\n"
          "  }) {window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 2, 2>, padding "
          "= dense<0> : tensor<2x3xi64>} : (tensor<4x6xf32>, tensor<f32>) -> tensor<2x3xf32>\n"
          "  return %0 : tensor<2x3xf32>\n"),
        AT("stablehlo.reduce_window") "padding must have shape [2, 2], got tensor<2x3xi64>"),
    BAD(F("(%a: tensor<2xf32>) -> tensor<2xi32>",
          "  %0 = \"stablehlo.map\"(%a) ({\n"
          "  ^bb0(%x: tensor<f32>):\n"
          "    stablehlo.return %x : tensor<f32>\n"
          "  }) {dimensions = array<i64: 0>} : (tensor<2xf32>) -> tensor<2xi32>\n"
          "  return %0 : tensor<2xi32>\n"),
        AT("stablehlo.map") "computation must return tensor<i32> (the result element type), got "
                            "tensor<f32>"),

    /* ================================================================ more linalg */
    BAD(F("(%a: tensor<1x8x8x3xf32>, %w: tensor<3x3x3x16xf32>, %p: tensor<2x2xi64>) -> "
          "tensor<1x6x6x16xf32>",
          "  %0 = \"stablehlo.dynamic_conv\"(%a, %w, %p) {dimension_numbers = #stablehlo.conv<[b, "
          "0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>, feature_group_count = 1 : i64, batch_group_count "
          "= 3 : i64} : (tensor<1x8x8x3xf32>, tensor<3x3x3x16xf32>, tensor<2x2xi64>) -> "
          "tensor<1x6x6x16xf32>\n"
          "  return %0 : tensor<1x6x6x16xf32>\n"),
        AT("stablehlo.dynamic_conv") "input batch dimension size 1 must be divisible by "
                                     "batch_group_count 3"),
    BAD(F("(%a: tensor<1x8x8x3xf32>, %w: tensor<3x3x3x16xf32>) -> tensor<1x6x6x16xf32>",
          "  %p = stablehlo.constant dense<1> : tensor<2x2xi64>\n"
          "  %0 = \"stablehlo.dynamic_conv\"(%a, %w, %p) {dimension_numbers = #stablehlo.conv<[b, "
          "0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>, feature_group_count = 1 : i64, batch_group_count "
          "= 1 : i64} : (tensor<1x8x8x3xf32>, tensor<3x3x3x16xf32>, tensor<2x2xi64>) -> "
          "tensor<1x6x6x16xf32>\n"
          "  return %0 : tensor<1x6x6x16xf32>\n"),
        "stablehlo.dynamic_conv at t.mlir:3:3: result has shape tensor<1x6x6x16xf32> but the op "
        "requires shape [1, 8, 8, 16]"),
    BAD(F("(%a: tensor<1x8x8x3xf32>, %w: tensor<3x3x3x16xf32>) -> tensor<1x6x6x16xf32>",
          "  %0 = stablehlo.convolution(%a, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, "
          "f], window = {stride = [1, 1]} {batch_group_count = 1 : i64, feature_group_count = 1 : "
          "i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>, "
          "#stablehlo<precision DEFAULT>]} : (tensor<1x8x8x3xf32>, tensor<3x3x3x16xf32>) -> "
          "tensor<1x6x6x16xf32>\n"
          "  return %0 : tensor<1x6x6x16xf32>\n"),
        AT("stablehlo.convolution") "precision_config must have at most 2 entries (lhs, rhs), got "
                                    "3"),
    BAD(F("(%a: tensor<1x8x8x3xf32>, %w: tensor<3x3x3x16xf16>) -> tensor<1x6x6x16xf32>",
          "  %0 = stablehlo.convolution(%a, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, "
          "f], window = {stride = [1, 1]} {batch_group_count = 1 : i64, feature_group_count = 1 : "
          "i64} : (tensor<1x8x8x3xf32>, tensor<3x3x3x16xf16>) -> tensor<1x6x6x16xf32>\n"
          "  return %0 : tensor<1x6x6x16xf32>\n"),
        AT("stablehlo.convolution") "lhs tensor<1x8x8x3xf32> and rhs tensor<3x3x3x16xf16> must "
                                    "have the same element type"),
    BAD(F("(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32>",
          "  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0], precision = [HIGH, "
          "HIGH], algorithm = <lhs_precision_type = f32, rhs_precision_type = f32, "
          "accumulation_type = f32, lhs_component_count = 1, rhs_component_count = 1, "
          "num_primitive_operations = 1, allow_imprecise_accumulation = false> : "
          "(tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>\n"
          "  return %0 : tensor<2x4xf32>\n"),
        AT("stablehlo.dot_general") "precision_config must be DEFAULT when an algorithm is given"),
    BAD(F("(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32>",
          "  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0], algorithm = "
          "<lhs_precision_type = f32, rhs_precision_type = f32, accumulation_type = f32, "
          "lhs_component_count = 0, rhs_component_count = 1, num_primitive_operations = 1, "
          "allow_imprecise_accumulation = false> : (tensor<2x3xf32>, tensor<3x4xf32>) -> "
          "tensor<2x4xf32>\n"
          "  return %0 : tensor<2x4xf32>\n"),
        AT("stablehlo.dot_general") "algorithm lhs_component_count must be positive, got 0"),
    BAD(F("(%a: tensor<2x3xf32>, %b: tensor<3x4xcomplex<f32>>) -> tensor<2x4xf32>",
          "  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<2x3xf32>, "
          "tensor<3x4xcomplex<f32>>) -> tensor<2x4xf32>\n"
          "  return %0 : tensor<2x4xf32>\n"),
        AT("stablehlo.dot_general") "lhs tensor<2x3xf32> and rhs tensor<3x4xcomplex<f32>> have "
                                    "incompatible element types"),
    OK(F("(%a: tensor<2x3xbf16>, %b: tensor<3x4xf32>) -> tensor<2x4xf32>",
         "  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<2x3xbf16>, "
         "tensor<3x4xf32>) -> tensor<2x4xf32>\n"
         "  return %0 : tensor<2x4xf32>\n")),
    BAD(F("(%a: tensor<2x3xf32>, %b: tensor<3x4x!quant.uniform<i8:f32:1, {0.5,0.5,0.5,0.5}>>) "
          "-> tensor<2x4xf32>",
          "  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [1] : (tensor<2x3xf32>, "
          "tensor<3x4x!quant.uniform<i8:f32:1, {0.5,0.5,0.5,0.5}>>) -> tensor<2x4xf32>\n"
          "  return %0 : tensor<2x4xf32>\n"),
        AT("stablehlo.dot_general") "lhs contracting dimension 1 has size 3 but rhs contracting "
                                    "dimension 1 has size 4"),
    BAD(F("(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32>",
          "  %0 = \"stablehlo.einsum\"(%a, %b) {einsum_config = \"ab->b\"} : (tensor<2x3xf32>, "
          "tensor<3x4xf32>) -> tensor<2x4xf32>\n"
          "  return %0 : tensor<2x4xf32>\n"),
        AT("stablehlo.einsum") "einsum_config \"ab->b\" must have the form \"lhs,rhs->result\""),
    BAD(F("(%a: tensor<2x3x4xf32>, %b: tensor<2x4x3xf32>) -> tensor<2x4x3xf32>",
          "  %0 = \"stablehlo.triangular_solve\"(%a, %b) {left_side = false, lower = true, "
          "transpose_a = #stablehlo<transpose TRANSPOSE>, unit_diagonal = false} : "
          "(tensor<2x3x4xf32>, tensor<2x4x3xf32>) -> tensor<2x4x3xf32>\n"
          "  return %0 : tensor<2x4x3xf32>\n"),
        AT("stablehlo.triangular_solve") "the two minor dimensions of a must be equal, got "
                                         "tensor<2x3x4xf32>"),
    BAD(F("(%a: tensor<3x3xf32>, %b: tensor<4x3xf32>) -> tensor<4x3xf32>",
          "  %0 = \"stablehlo.triangular_solve\"(%a, %b) {left_side = false, lower = true, "
          "transpose_a = #stablehlo<transpose TRANSPOSE_INVALID>, unit_diagonal = false} : "
          "(tensor<3x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>\n"
          "  return %0 : tensor<4x3xf32>\n"),
        AT("stablehlo.triangular_solve") "transpose_a must be NO_TRANSPOSE, TRANSPOSE or ADJOINT"),
    OK(F("(%a: tensor<8x5xcomplex<f32>>) -> tensor<8x9xf32>",
         "  %0 = stablehlo.fft %a, type = IRFFT, length = [8, 9] : (tensor<8x5xcomplex<f32>>) -> "
         "tensor<8x9xf32>\n"
         "  return %0 : tensor<8x9xf32>\n")),
    BAD(F("(%a: tensor<8x6xcomplex<f32>>) -> tensor<8x9xf32>",
          "  %0 = stablehlo.fft %a, type = IRFFT, length = [8, 9] : (tensor<8x6xcomplex<f32>>) -> "
          "tensor<8x9xf32>\n"
          "  return %0 : tensor<8x9xf32>\n"),
        AT("stablehlo.fft") "IRFFT operand tensor<8x6xcomplex<f32>> must have innermost size "
                            "fft_length[-1] / 2 + 1 = 5"),
    BAD(F("(%a: tensor<8xcomplex<f32>>) -> tensor<8xcomplex<f64>>",
          "  %0 = stablehlo.fft %a, type = FFT, length = [8] : (tensor<8xcomplex<f32>>) -> "
          "tensor<8xcomplex<f64>>\n"
          "  return %0 : tensor<8xcomplex<f64>>\n"),
        AT("stablehlo.fft") "FFT of tensor<8xcomplex<f32>> must give element type complex<f32>, "
                            "got tensor<8xcomplex<f64>>"),
    BAD(F("(%x: tensor<2x3xf32>, %s: tensor<3xf32>) -> tensor<2x3xf32>",
          "  %0:3 = \"stablehlo.batch_norm_training\"(%x, %s, %s) {epsilon = 1.0e-05 : f32, "
          "feature_index = 2 : i64} : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>) -> "
          "(tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>)\n"
          "  return %0#0 : tensor<2x3xf32>\n"),
        AT("stablehlo.batch_norm_training") "feature_index 2 is out of range [0, 2) for "
                                            "tensor<2x3xf32>"),
    BAD(F("(%x: tensor<2x3xf32>, %s: tensor<3xf32>, %g: tensor<2x3xf16>) -> tensor<2x3xf32>",
          "  %0:3 = \"stablehlo.batch_norm_grad\"(%x, %s, %s, %s, %g) {epsilon = 1.0e-05 : f32, "
          "feature_index = 1 : i64} : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, "
          "tensor<3xf32>, tensor<2x3xf16>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>)\n"
          "  return %0#0 : tensor<2x3xf32>\n"),
        AT("stablehlo.batch_norm_grad") "operand and grad_output must have the same element type "
                                        "(up to quantization parameters), got tensor<2x3xf32> "
                                        "and tensor<2x3xf16>"),
    BAD(F("(%a: tensor<f32>) -> tensor<3x4xf32>",
          "  %s = stablehlo.constant dense<[3, 5]> : tensor<2xi64>\n"
          "  %0 = stablehlo.rng %a, %a, %s, distribution = UNIFORM : (tensor<f32>, tensor<f32>, "
          "tensor<2xi64>) -> tensor<3x4xf32>\n"
          "  return %0 : tensor<3x4xf32>\n"),
        "stablehlo.rng at t.mlir:3:3: shape [3, 5] does not fit the result type tensor<3x4xf32>"),

    /* ================================================================ more collectives */
    BAD(F("(%a: tensor<4xf32>, %r: tensor<2xi32>) -> tensor<4xf32>",
          "  %0 = \"stablehlo.collective_broadcast\"(%a, %r) {replica_groups = dense<[[0, 1]]> : "
          "tensor<1x2xi64>, has_dynamic_root} : (tensor<4xf32>, tensor<2xi32>) -> tensor<4xf32>\n"
          "  return %0 : tensor<4xf32>\n"),
        AT("stablehlo.collective_broadcast") "with has_dynamic_root the last operand must be "
                                             "tensor<1xi32>, got tensor<2xi32>"),
    BAD(F("(%a: tensor<4xf32>) -> tensor<4xf32>",
          "  %0 = \"stablehlo.collective_broadcast\"(%a) {replica_groups = dense<[[0, -1]]> : "
          "tensor<1x2xi64>} : (tensor<4xf32>) -> tensor<4xf32>\n"
          "  return %0 : tensor<4xf32>\n"),
        AT("stablehlo.collective_broadcast") "replica_groups holds a negative id -1"),
    BAD(F("(%a: tensor<4xf32>) -> tensor<4xf64>",
          "  %0 = \"stablehlo.collective_reduce\"(%a) ({\n"
          "  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"
          "    %s = stablehlo.add %x, %y : tensor<f32>\n"
          "    stablehlo.return %s : tensor<f32>\n"
          "  }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<4xf32>) -> "
          "tensor<4xf64>\n"
          "  return %0 : tensor<4xf64>\n"),
        AT("stablehlo.collective_reduce") "result #0 has element type tensor<4xf64> but the "
                                          "computation returns f32"),
    OK(F("(%a: tensor<4xf32>) -> tensor<4xf32>",
         "  %0 = \"stablehlo.all_reduce\"(%a) ({\n"
         "  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"
         "    %s = stablehlo.add %x, %y : tensor<f32>\n"
         "    stablehlo.return %s : tensor<f32>\n"
         "  }) {replica_groups = dense<[[0, 1, 2], [3, -1, -1]]> : tensor<2x3xi64>} : "
         "(tensor<4xf32>) -> tensor<4xf32>\n"
         "  return %0 : tensor<4xf32>\n")),
    BAD(F("(%a: tensor<2x2xf32>) -> tensor<2x4xf32>",
          "  %0 = \"stablehlo.all_gather\"(%a) {all_gather_dim = 2 : i64, replica_groups = "
          "dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<2x2xf32>) -> tensor<2x4xf32>\n"
          "  return %0 : tensor<2x4xf32>\n"),
        AT("stablehlo.all_gather") "all_gather_dim 2 is out of range [0, 2)"),
    BAD(F("(%a: tensor<4x4xf32>) -> tensor<4x4xf32>",
          "  %0 = \"stablehlo.all_to_all\"(%a) {split_dimension = 1 : i64, concat_dimension = 0 : "
          "i64, split_count = 2 : i64, replica_groups = dense<[[0, 1, 2]]> : tensor<1x3xi64>} : "
          "(tensor<4x4xf32>) -> tensor<4x4xf32>\n"
          "  return %0 : tensor<4x4xf32>\n"),
        AT("stablehlo.all_to_all") "replica groups must have split_count = 2 members each, got "
                                   "3"),
    BAD(F("(%a: tensor<4xf32>) -> tensor<4xf32>",
          "  %0 = \"stablehlo.collective_permute\"(%a) {source_target_pairs = dense<[[0, 1, 2]]> "
          ": tensor<1x3xi64>} : (tensor<4xf32>) -> tensor<4xf32>\n"
          "  return %0 : tensor<4xf32>\n"),
        AT("stablehlo.collective_permute") "source_target_pairs must have shape [N, 2], got "
                                           "tensor<1x3xi64>"),
    BAD(F("(%t: !stablehlo.token) -> tensor<4xf32>",
          "  %0:2 = \"stablehlo.recv\"(%t) {channel_handle = #stablehlo.channel_handle<handle = 1, "
          "type = 3>, is_host_transfer = true} : (!stablehlo.token) -> (tensor<?xf32>, "
          "!stablehlo.token)\n"
          "  return %0#0 : tensor<?xf32>\n"),
        AT("stablehlo.recv") "result #0 must have a static shape, got tensor<?xf32>"),
    BAD(F("(%a: tensor<4xf32>, %t: !stablehlo.token) -> !stablehlo.token",
          "  %0 = \"stablehlo.outfeed\"(%t, %a) : (!stablehlo.token, tensor<4xf32>) -> "
          "!stablehlo.token\n"
          "  return %0 : !stablehlo.token\n"),
        AT("stablehlo.outfeed") "operand #0 must be a tensor (only the last operand is a token), "
                                "got !stablehlo.token"),
    BAD("func.func @main(%a: tensor<16x8xf32>) -> tensor<16x16xf32> {\n"
        "  %0 = \"stablehlo.all_gather\"(%a) {all_gather_dim = 1 : i64, replica_groups = "
        "#stablehlo.replica_group_mesh_axes<mesh = @nomesh, axes = [#stablehlo.axis_ref<name = "
        "\"x\">]>, channel_handle = #stablehlo.channel_handle<handle = 1, type = 0>} : "
        "(tensor<16x8xf32>) -> tensor<16x16xf32>\n"
        "  return %0 : tensor<16x16xf32>\n"
        "}\n",
        AT("stablehlo.all_gather") "replica_groups: mesh symbol @nomesh does not exist"),
    OK(F("(%a: tensor<4x4xf32>) -> !stablehlo.future<tensor<4x4xf32>>",
         "  %0 = \"stablehlo.async_start\"(%a) ({\n"
         "  ^bb0(%b: tensor<4x4xf32>):\n"
         "    %1 = \"stablehlo.collective_permute\"(%b) {source_target_pairs = dense<[[0, 1]]> : "
         "tensor<1x2xi64>} : (tensor<4x4xf32>) -> tensor<4x4xf32>\n"
         "    stablehlo.return %1 : tensor<4x4xf32>\n"
         "  }) : (tensor<4x4xf32>) -> !stablehlo.future<tensor<4x4xf32>>\n"
         "  return %0 : !stablehlo.future<tensor<4x4xf32>>\n")),
    BAD(F("(%a: tensor<4x4xf32>) -> !stablehlo.future<tensor<4x4xf32>>",
          "  %0 = \"stablehlo.async_start\"(%a) ({\n"
          "  ^bb0(%b: tensor<4x4xf32>):\n"
          "    %1 = stablehlo.add %b, %b : tensor<4x4xf32>\n"
          "    stablehlo.return %1 : tensor<4x4xf32>\n"
          "  }) : (tensor<4x4xf32>) -> !stablehlo.future<tensor<4x4xf32>>\n"
          "  return %0 : !stablehlo.future<tensor<4x4xf32>>\n"),
        AT("stablehlo.async_start") "body region must hold a collective or slice operation, got "
                                    "stablehlo.add"),
    BAD(F("(%a: tensor<4x4xf32>) -> !stablehlo.future<tensor<4x4xi32>>",
          "  %0 = \"stablehlo.async_start\"(%a) ({\n"
          "  ^bb0(%b: tensor<4x4xf32>):\n"
          "    %1 = \"stablehlo.collective_permute\"(%b) {source_target_pairs = dense<[[0, 1]]> : "
          "tensor<1x2xi64>} : (tensor<4x4xf32>) -> tensor<4x4xf32>\n"
          "    stablehlo.return %1 : tensor<4x4xf32>\n"
          "  }) : (tensor<4x4xf32>) -> !stablehlo.future<tensor<4x4xi32>>\n"
          "  return %0 : !stablehlo.future<tensor<4x4xi32>>\n"),
        AT("stablehlo.async_start") "result !stablehlo.future<tensor<4x4xi32>> must be the future "
                                    "of the body's values (tensor<4x4xf32>)"),
    BAD(F("(%f: !stablehlo.future<tensor<4x4xf32>>) -> tensor<4x4xi32>",
          "  %0 = \"stablehlo.async_done\"(%f) : (!stablehlo.future<tensor<4x4xf32>>) -> "
          "tensor<4x4xi32>\n"
          "  return %0 : tensor<4x4xi32>\n"),
        AT("stablehlo.async_done") "result types must be the types "
                                   "!stablehlo.future<tensor<4x4xf32>> holds, got "
                                   "tensor<4x4xi32>"),

    /* ================================================================ more misc */
    BAD(F("(%a: tensor<2xf32>) -> tuple<tensor<2xf32>>",
          "  %0 = \"stablehlo.tuple\"(%a, %a) : (tensor<2xf32>, tensor<2xf32>) -> "
          "tuple<tensor<2xf32>>\n"
          "  return %0 : tuple<tensor<2xf32>>\n"),
        AT("stablehlo.tuple") "result must be a tuple of 2 elements, got tuple<tensor<2xf32>>"),
    BAD(F("(%a: tensor<2xf32>) -> tensor<2xf32>",
          "  %0 = stablehlo.custom_call @foo(%a) {called_computations = [@main2]} : "
          "(tensor<2xf32>) -> tensor<2xf32>\n"
          "  return %0 : tensor<2xf32>\n"
          "}\n"
          "sdy.mesh @main2 = <[\"x\"=2]>\n"
          "func.func @unused() {\n"),
        AT("stablehlo.custom_call") "called_computations @main2 names a sdy.mesh, not a func.func"),
    BAD(F("(%a: tensor<2x3xf32>) -> tensor<2x3xf32>",
          "  %0 = \"stablehlo.custom_call\"(%a) {call_target_name = \"foo\", operand_layouts = "
          "[dense<[1, 0]> : tensor<2xindex>]} : (tensor<2x3xf32>) -> tensor<2x3xf32>\n"
          "  return %0 : tensor<2x3xf32>\n"),
        AT("stablehlo.custom_call") "operand_layouts and result_layouts must be given together or "
                                    "not at all"),
    BAD("func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
        "  %0 = stablehlo.composite \"my.op\" %a {decomposition = @nope} : (tensor<2xf32>) -> "
        "tensor<2xf32>\n"
        "  return %0 : tensor<2xf32>\n"
        "}\n",
        AT("stablehlo.composite") "'decomposition' @nope does not name a function in this module"),
    BAD(F("(%a: tensor<2xf32>) -> tensor<2xf32>",
          "  %0 = \"stablehlo.constant\"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>\n"
          "  \"check.expect_eq\"(%a, %0) : (tensor<2xf32>, tensor<f32>) -> ()\n"
          "  return %a : tensor<2xf32>\n"),
        "check.expect_eq at t.mlir:3:3: lhs and rhs must have the same type, got tensor<2xf32> "
        "and tensor<f32>"),
    BAD(F("(%a: tensor<2xi32>) -> tensor<2xi32>",
          "  check.expect_almost_eq_const %a, dense<[1, 2]> : tensor<2xi32>\n"
          "  return %a : tensor<2xi32>\n"),
        AT("check.expect_almost_eq_const") "lhs must be a ranked tensor of floating-point or "
                                           "complex type, got tensor<2xi32>"),
    BAD(F("() -> tensor<f32>",
          "  %0 = stablehlo.iota dim = 0 : tensor<f32>\n"
          "  return %0 : tensor<f32>\n"),
        AT("stablehlo.iota") "result must not be a scalar, got tensor<f32>"),
    BAD(F("() -> tensor<?xf32>",
          "  %0 = stablehlo.iota dim = 0 : tensor<?xf32>\n"
          "  return %0 : tensor<?xf32>\n"),
        AT("stablehlo.iota") "result must have a static shape (dynamic_iota makes dynamic ones), "
                             "got tensor<?xf32>"),
    BAD(F("(%a: tensor<2x3xf32>) -> tensor<3x2xf32>",
          "  %0 = \"sdy.sharding_constraint\"(%a) {sharding = #sdy.sharding<@mesh, [{}, {}]>} : "
          "(tensor<2x3xf32>) -> tensor<3x2xf32>\n"
          "  return %0 : tensor<3x2xf32>\n"),
        AT("sdy.sharding_constraint") "input and result must have the same type, got "
                                      "tensor<2x3xf32> and tensor<3x2xf32>"),
    BAD("func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> attributes {arg_attrs = [{}, {}]} {\n"
        "  return %a : tensor<2xf32>\n"
        "}\n",
        "func.func at t.mlir:1:1: 'arg_attrs' must hold one dictionary per argument (1), got 2"),
    BAD(F("(%a: tensor<2x!quant.uniform<i8:f16, 100000.0>>) -> "
          "tensor<2x!quant.uniform<i8:f16, 100000.0>>",
          "  return %a : tensor<2x!quant.uniform<i8:f16, 100000.0>>\n"),
        "func.func at t.mlir:1:1: argument #0 of region #0: quantization scale 100000 is outside "
        "the range [5.96046e-08, 65504] of f16 in tensor<2x!quant.uniform<i8:f16, 100000>>"),
    BAD(F("(%a: tensor<2x3x!quant.uniform<i8:f32:0, {0.5,0.25}>>) -> "
          "tensor<3x2x!quant.uniform<i8:f32:0, {0.5,0.25,0.5}>>",
          "  %0 = stablehlo.transpose %a, dims = [1, 0] : (tensor<2x3x!quant.uniform<i8:f32:0, "
          "{0.5,0.25}>>) -> tensor<3x2x!quant.uniform<i8:f32:0, {0.5,0.25,0.5}>>\n"
          "  return %0 : tensor<3x2x!quant.uniform<i8:f32:0, {0.5,0.25,0.5}>>\n"),
        AT("stablehlo.transpose") "operand and result must have the same element type, got "
                                  "tensor<2x3x!quant.uniform<i8:f32:0, {0.5,0.25}>> and "
                                  "tensor<3x2x!quant.uniform<i8:f32:0, {0.5,0.25,0.5}>>"),

    /* ================================================================ graph regions */
    /* the module body and the regions of ops we only carry are graph regions (as in MLIR):
     * uses may come before definitions there, but not in a function body */
    OK("%0 = \"test.use\"(%1) : (i64) -> i32\n"
       "%1 = \"test.def\"() : () -> i64\n"
       "\"test.graph\"() ({\n"
       "  %a = \"test.use\"(%b, %0) : (f32, i32) -> f32\n"
       "  %b = \"test.def\"(%a) : (f32) -> f32\n"
       "}) : () -> ()\n"),
    BAD(F("(%a: tensor<2xf32>) -> tensor<2xf32>",
          "  %0 = stablehlo.add %a, %1 : tensor<2xf32>\n"
          "  %1 = stablehlo.negate %a : tensor<2xf32>\n"
          "  return %0 : tensor<2xf32>\n"),
        AT("stablehlo.add") "operand #1 (%1) is used before its definition"),

    /* ================================================================ interpreter */
    OK("func.func @foo(%a: tensor<i64>) -> tensor<i64> {\n"
       "  return %a : tensor<i64>\n"
       "}\n"
       "func.func @main(%a: tensor<i64>) {\n"
       "  %0:2 = \"interpreter.run_parallel\"(%a, %a) {programs = [[@foo], [@foo]]} : "
       "(tensor<i64>, tensor<i64>) -> (tensor<i64>, tensor<i64>)\n"
       "  return\n"
       "}\n"),
    BAD("func.func @main(%a: tensor<i64>) {\n"
        "  %0:2 = \"interpreter.run_parallel\"(%a, %a) {programs = [[@foo], [@foo, @foo]]} : "
        "(tensor<i64>, tensor<i64>) -> (tensor<i64>, tensor<i64>)\n"
        "  return\n"
        "}\n"
        "func.func @foo(%a: tensor<i64>) -> tensor<i64> {\n"
        "  return %a : tensor<i64>\n"
        "}\n",
        AT("interpreter.run_parallel") "every row of programs must have 1 functions, row #1 has "
                                       "2"),
    BAD("func.func @main(%a: tensor<i64>) {\n"
        "  %0 = \"interpreter.run_parallel\"(%a, %a) {programs = [[@foo]]} : (tensor<i64>, "
        "tensor<i64>) -> tensor<i64>\n"
        "  return\n"
        "}\n"
        "func.func @foo(%a: tensor<i64>) -> tensor<i64> {\n"
        "  return %a : tensor<i64>\n"
        "}\n",
        AT("interpreter.run_parallel") "has 2 operands but its programs take 1 arguments in all"),
    BAD(F("(%a: tensor<3x?xf32, #stablehlo.bounds<?, 3>>, %p: tensor<f32>) -> tensor<4x?xf32>",
          "  %0 = stablehlo.pad %a, %p, low = [1, -10], high = [0, 0], interior = [0, 0] : "
          "(tensor<3x?xf32, #stablehlo.bounds<?, 3>>, tensor<f32>) -> tensor<4x?xf32>\n"
          "  return %0 : tensor<4x?xf32>\n"),
        AT("stablehlo.pad") "padding gives a negative bound in dimension 1"),

    /* ================================================================ chlo */
    OK(F("(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32>",
         "  %0 = chlo.broadcast_add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>\n"
         "  return %0 : tensor<2x3xf32>\n")),
    BAD(F("(%a: tensor<2x3xf32>, %b: tensor<2xf32>) -> tensor<2x3xf32>",
          "  %0 = chlo.broadcast_add %a, %b : (tensor<2x3xf32>, tensor<2xf32>) -> tensor<2x3xf32>\n"
          "  return %0 : tensor<2x3xf32>\n"),
        AT("chlo.broadcast_add") "operands tensor<2x3xf32> and tensor<2xf32> cannot be broadcast "
                                 "together (dimension sizes 2 and 3)"),
    OK(F("(%a: tensor<2x3xf32>, %b: tensor<2xf32>) -> tensor<2x3xf32>",
         "  %0 = chlo.broadcast_add %a, %b {broadcast_dimensions = array<i64: 0>} : "
         "(tensor<2x3xf32>, tensor<2xf32>) -> tensor<2x3xf32>\n"
         "  return %0 : tensor<2x3xf32>\n")),
    BAD(F("(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32>",
          "  %0 = chlo.broadcast_compare %a, %b {comparison_direction = "
          "#chlo<comparison_direction LT>} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>\n"
          "  return %0 : tensor<2x3xf32>\n"),
        AT("chlo.broadcast_compare") "result must be a ranked tensor of boolean type, got "
                                     "tensor<2x3xf32>"),
    BAD(F("(%a: tensor<2xi32>) -> tensor<2xi32>",
          "  %0 = chlo.erf %a : tensor<2xi32> -> tensor<2xi32>\n"
          "  return %0 : tensor<2xi32>\n"),
        AT("chlo.erf") "operand must be a ranked tensor of floating-point type, got tensor<2xi32>"),
    BAD(F("(%a: tensor<2x4xf32>) -> tensor<2x5xf32>",
          "  %0:2 = chlo.top_k(%a, k = 5) : tensor<2x4xf32> -> (tensor<2x5xf32>, tensor<2x5xi32>)\n"
          "  return %0#0 : tensor<2x5xf32>\n"),
        AT("chlo.top_k") "the last dimension of operand tensor<2x4xf32> must be at least k = 5"),
    BAD(F("(%a: tensor<2xi1>, %b: tensor<3xf32>) -> tensor<3xf32>",
          "  %0 = chlo.broadcast_select %a, %b, %b : (tensor<2xi1>, tensor<3xf32>, tensor<3xf32>) "
          "-> tensor<3xf32>\n"
          "  return %0 : tensor<3xf32>\n"),
        AT("chlo.broadcast_select") "operand tensor<3xf32> does not broadcast with the others in "
                                    "dimension 0"),
    BAD(F("(%a: tensor<2xf32>) -> tensor<2xf32>",
          "  %0 = \"chlo.constant_like\"(%a) {value = 1 : i32} : (tensor<2xf32>) -> tensor<2xf32>\n"
          "  return %0 : tensor<2xf32>\n"),
        AT("chlo.constant_like") "value of type i32 does not match the result element type f32"),
    BAD(F("(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2xf32>",
          "  %0 = chlo.mulhi %a, %b : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>\n"
          "  return %0 : tensor<2xf32>\n"),
        AT("chlo.mulhi") "operand #0 must be a ranked tensor of integer type, got tensor<2xf32>"),
    OK(F("(%l: tensor<11x5xf32>, %r: tensor<3x5x7xf32>, %g: tensor<3xi64>) -> tensor<11x7xf32>",
         "  %0 = \"chlo.ragged_dot\"(%l, %r, %g) {ragged_dot_dimension_numbers = "
         "#chlo.ragged_dot<lhs_batching_dimensions = [], rhs_batching_dimensions = [], "
         "lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1], "
         "lhs_ragged_dimensions = [0], rhs_group_dimensions = [0]>} : (tensor<11x5xf32>, "
         "tensor<3x5x7xf32>, tensor<3xi64>) -> tensor<11x7xf32>\n"
         "  return %0 : tensor<11x7xf32>\n")),
    BAD(F("(%l: tensor<11x5xf32>, %r: tensor<4x5x7xf32>, %g: tensor<3xi64>) -> tensor<11x7xf32>",
          "  %0 = \"chlo.ragged_dot\"(%l, %r, %g) {ragged_dot_dimension_numbers = "
          "#chlo.ragged_dot<lhs_batching_dimensions = [], rhs_batching_dimensions = [], "
          "lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1], "
          "lhs_ragged_dimensions = [0], rhs_group_dimensions = [0]>} : (tensor<11x5xf32>, "
          "tensor<4x5x7xf32>, tensor<3xi64>) -> tensor<11x7xf32>\n"
          "  return %0 : tensor<11x7xf32>\n"),
        AT("chlo.ragged_dot") "rhs group dimension has size 4 but there are 3 groups"),
    BAD(F("(%x: tensor<4xi32>) -> tensor<4xi32>",
          "  %z = stablehlo.constant dense<0> : tensor<i32>\n"
          "  %0:2 = chlo.scan(%x) inits(%z) dimension=0 {\n"
          "  ^bb0(%a: tensor<i32>, %b: tensor<i64>):\n"
          "    stablehlo.return %a, %a : tensor<i32>, tensor<i32>\n"
          "  } : (tensor<4xi32>, tensor<i32>) -> (tensor<4xi32>, tensor<i32>)\n"
          "  return %0#0 : tensor<4xi32>\n"),
        "chlo.scan at t.mlir:3:3: body argument #1 tensor<i64> does not fit operand #1 "
        "tensor<i32>"),

};

static void run_case(const tcase *c) {
  cj_module *m = NULL;
  cj_status st = cj_parse_mlir_text(c->text, strlen(c->text), "t.mlir", &m);
  if (st) {
    CHECK_MSG(0, "line %d: does not parse: %s", c->line, cj_status_message(st));
    cj_status_free(st);
    return;
  }
  st = cj_verify_module(m);
  const char *msg = cj_status_message(st);
  if (!c->expect)
    CHECK_MSG(st == NULL, "line %d: expected success, got: %s", c->line, msg);
  else
    CHECK_MSG(st && strcmp(msg, c->expect) == 0, "line %d:\n   got: %s\n  want: %s", c->line,
              st ? msg : "(success)", c->expect);
  if (st) CHECK(cj_status_code(st) == CJ_INVALID_ARGUMENT);
  cj_status_free(st);
  cj_module_free(m);
}

/* Ops that share a verifier, each given the same invalid program: `%s` in the templates is the op
 * name; every one must fail with the templated message. */
typedef struct family {
  const char *ops;      /* space-separated op names */
  const char *program;  /* printf template, %s = op name */
  const char *message;  /* printf template, %s = op name */
} family;

static const family families[] = {
    {"cbrt cosine exponential exponential_minus_one log log_plus_one logistic rsqrt sine sqrt "
     "tan tanh",
     F("(%%a: tensor<2xi32>) -> tensor<2xi32>",
       "  %%0 = stablehlo.%s %%a : tensor<2xi32>\n"
       "  return %%0 : tensor<2xi32>\n"),
     "stablehlo.%s at t.mlir:2:3: operand must be a ranked tensor of floating-point or complex "
     "type or per-tensor quantized tensor, got tensor<2xi32>"},
    {"ceil floor round_nearest_afz round_nearest_even",
     F("(%%a: tensor<2xcomplex<f32>>) -> tensor<2xcomplex<f32>>",
       "  %%0 = stablehlo.%s %%a : tensor<2xcomplex<f32>>\n"
       "  return %%0 : tensor<2xcomplex<f32>>\n"),
     "stablehlo.%s at t.mlir:2:3: operand must be a ranked tensor of floating-point type or "
     "per-tensor quantized tensor, got tensor<2xcomplex<f32>>"},
    {"cbrt ceil cosine exponential floor log logistic negate rsqrt sign sine sqrt tanh",
     F("(%%a: tensor<2xf32>) -> tensor<3xf32>",
       "  %%0 = stablehlo.%s %%a : (tensor<2xf32>) -> tensor<3xf32>\n"
       "  return %%0 : tensor<3xf32>\n"),
     "stablehlo.%s at t.mlir:2:3: operand and result must have the same type (up to "
     "quantization parameters), got tensor<2xf32> and tensor<3xf32>"},
    {"count_leading_zeros popcnt",
     F("(%%a: tensor<2xf32>) -> tensor<2xf32>",
       "  %%0 = stablehlo.%s %%a : tensor<2xf32>\n"
       "  return %%0 : tensor<2xf32>\n"),
     "stablehlo.%s at t.mlir:2:3: operand must be a ranked tensor of integer type, got "
     "tensor<2xf32>"},
    {"divide power remainder subtract",
     F("(%%a: tensor<2xi1>) -> tensor<2xi1>",
       "  %%0 = stablehlo.%s %%a, %%a : tensor<2xi1>\n"
       "  return %%0 : tensor<2xi1>\n"),
     "stablehlo.%s at t.mlir:2:3: lhs must be a ranked tensor of integer, floating-point or "
     "complex type or per-tensor quantized tensor, got tensor<2xi1>"},
    {"divide maximum minimum multiply power remainder subtract atan2",
     F("(%%a: tensor<2xf32>, %%b: tensor<2xf64>) -> tensor<2xf32>",
       "  %%0 = stablehlo.%s %%a, %%b : (tensor<2xf32>, tensor<2xf64>) -> tensor<2xf32>\n"
       "  return %%0 : tensor<2xf32>\n"),
     "stablehlo.%s at t.mlir:2:3: lhs and rhs must have the same type (up to quantization "
     "parameters), got tensor<2xf32> and tensor<2xf64>"},
    {"and or xor",
     F("(%%a: tensor<2xf32>) -> tensor<2xf32>",
       "  %%0 = stablehlo.%s %%a, %%a : tensor<2xf32>\n"
       "  return %%0 : tensor<2xf32>\n"),
     "stablehlo.%s at t.mlir:2:3: lhs must be a ranked tensor of boolean or integer type, got "
     "tensor<2xf32>"},
    {"shift_left shift_right_arithmetic shift_right_logical",
     F("(%%a: tensor<2xi32>, %%b: tensor<2xi64>) -> tensor<2xi32>",
       "  %%0 = stablehlo.%s %%a, %%b : (tensor<2xi32>, tensor<2xi64>) -> tensor<2xi32>\n"
       "  return %%0 : tensor<2xi32>\n"),
     "stablehlo.%s at t.mlir:2:3: lhs and rhs must have the same type, got tensor<2xi32> and "
     "tensor<2xi64>"},
    {"replica_id partition_id",
     F("() -> tensor<2xui32>",
       "  %%0 = stablehlo.%s : tensor<2xui32>\n"
       "  return %%0 : tensor<2xui32>\n"),
     "stablehlo.%s at t.mlir:2:3: result must be tensor<ui32>, got tensor<2xui32>"},
    {"real imag",
     F("(%%a: tensor<2xcomplex<f32>>) -> tensor<2xf32>",
       "  %%0 = stablehlo.%s %%a : (tensor<2xcomplex<f32>>) -> tensor<3xf32>\n"
       "  return %%a : tensor<2xcomplex<f32>>\n"),
     "stablehlo.%s at t.mlir:2:3: operand and result must have the same shape, got "
     "tensor<2xcomplex<f32>> and tensor<3xf32>"},
    {"acos acosh asin asinh atan atanh bessel_i1e conj cosh sinh tan square",
     F("(%%a: tensor<2xi32>) -> tensor<2xi32>",
       "  %%0 = chlo.%s %%a : tensor<2xi32> -> tensor<2xi32>\n"
       "  return %%0 : tensor<2xi32>\n"),
     "chlo.%s at t.mlir:2:3: operand must be a ranked tensor of floating-point or complex type, "
     "got tensor<2xi32>"},
    {"digamma erf erf_inv erfc lgamma is_inf is_neg_inf is_pos_inf",
     F("(%%a: tensor<2xcomplex<f32>>) -> tensor<2xcomplex<f32>>",
       "  %%0 = chlo.%s %%a : tensor<2xcomplex<f32>> -> tensor<2xcomplex<f32>>\n"
       "  return %%0 : tensor<2xcomplex<f32>>\n"),
     "chlo.%s at t.mlir:2:3: operand must be a ranked tensor of floating-point type, got "
     "tensor<2xcomplex<f32>>"},
    {"next_after polygamma zeta",
     F("(%%a: tensor<2xi32>) -> tensor<2xi32>",
       "  %%0 = chlo.%s %%a, %%a : tensor<2xi32>, tensor<2xi32> -> tensor<2xi32>\n"
       "  return %%0 : tensor<2xi32>\n"),
     "chlo.%s at t.mlir:2:3: operand #0 must be a ranked tensor of floating-point type, got "
     "tensor<2xi32>"},
    {"broadcast_add broadcast_atan2 broadcast_divide broadcast_maximum broadcast_minimum "
     "broadcast_multiply broadcast_power broadcast_remainder broadcast_subtract "
     "broadcast_shift_left broadcast_shift_right_arithmetic broadcast_shift_right_logical",
     F("(%%a: tensor<2xi32>, %%b: tensor<2xi64>) -> tensor<2xi32>",
       "  %%0 = chlo.%s %%a, %%b : (tensor<2xi32>, tensor<2xi64>) -> tensor<2xi32>\n"
       "  return %%0 : tensor<2xi32>\n"),
     "chlo.%s at t.mlir:2:3: lhs and rhs must have the same element type (up to quantization "
     "parameters), got tensor<2xi32> and tensor<2xi64>"},
    {"broadcast_and broadcast_or broadcast_xor",
     F("(%%a: tensor<2xf32>) -> tensor<2xf32>",
       "  %%0 = chlo.%s %%a, %%a : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>\n"
       "  return %%0 : tensor<2xf32>\n"),
     "chlo.%s at t.mlir:2:3: lhs must be a ranked tensor of boolean or integer type, got "
     "tensor<2xf32>"},
    {"broadcast_next_after broadcast_polygamma broadcast_zeta broadcast_complex",
     F("(%%a: tensor<2xi32>) -> tensor<2xi32>",
       "  %%0 = chlo.%s %%a, %%a : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>\n"
       "  return %%0 : tensor<2xi32>\n"),
     "chlo.%s at t.mlir:2:3: lhs must be a ranked tensor of floating-point type, got "
     "tensor<2xi32>"},
};

static void run_families(int *bad) {
  for (size_t f = 0; f < sizeof families / sizeof families[0]; f++) {
    const char *p = families[f].ops;
    while (*p) {
      char name[64];
      size_t n = strcspn(p, " ");
      snprintf(name, sizeof name, "%.*s", (int)n, p);
      p += n;
      while (*p == ' ') p++;
      char text[2048], expect[512];
      snprintf(text, sizeof text, families[f].program, name, name, name);
      snprintf(expect, sizeof expect, families[f].message, name);
      cj_module *m = NULL;
      cj_status st = cj_parse_mlir_text(text, strlen(text), "t.mlir", &m);
      if (st) {
        CHECK_MSG(0, "%s: does not parse: %s", name, cj_status_message(st));
        cj_status_free(st);
        continue;
      }
      st = cj_verify_module(m);
      const char *msg = cj_status_message(st);
      CHECK_MSG(st && strcmp(msg, expect) == 0, "%s:\n   got: %s\n  want: %s", name,
                st ? msg : "(success)", expect);
      cj_status_free(st);
      cj_module_free(m);
      (*bad)++;
    }
  }
}

int main(void) {
  int bad = 0, ok = 0;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    run_case(&cases[i]);
    if (cases[i].expect)
      bad++;
    else
      ok++;
  }
  run_families(&bad);
  printf("verify_text: %d invalid programs, %d valid ones\n", bad, ok);
  return check_report("verify_text");
}
