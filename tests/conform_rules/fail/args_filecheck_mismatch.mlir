// RUN: stablehlo-translate %s --interpret --args="[dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi32>, dense<1.5> : tensor<f32>, dense<[true, false]> : tensor<2xi1>]" | FileCheck %s
// RUN: not stablehlo-translate %s --interpret --args="[1 : i32]" 2>&1 | FileCheck %s --check-prefixes=CHECK-ERR
func.func @main(%arg0: tensor<2x3xi32>, %arg1: tensor<f32>, %arg2: tensor<2xi1>) -> (tensor<2x3xi32>, tensor<f32>, tensor<2xi1>, tensor<2x0xf32>) {
  %0 = stablehlo.add %arg0, %arg0 : tensor<2x3xi32>
  %1 = stablehlo.multiply %arg1, %arg1 : tensor<f32>
  %2 = stablehlo.not %arg2 : tensor<2xi1>
  %3 = stablehlo.constant dense<> : tensor<2x0xf32>
  return %0, %1, %2, %3 : tensor<2x3xi32>, tensor<f32>, tensor<2xi1>, tensor<2x0xf32>
}
// CHECK:      tensor<2x3xi32> {
// CHECK-NEXT:   [
// CHECK-NEXT:     [2, 4, 6],
// CHECK-NEXT:     [8, 10, 13]
// CHECK-NEXT:   ]
// CHECK-NEXT: }
// CHECK-NEXT: tensor<f32> {2.250000e+00}
// CHECK-NEXT: tensor<2xi1> {
// CHECK-NEXT:   [false, true]
// CHECK-NEXT: }
// CHECK-NEXT: tensor<2x0xf32> {
// CHECK-NEXT:   [
// CHECK-NEXT:     [],
// CHECK-NEXT:     []
// CHECK-NEXT:   ]
// CHECK-NEXT: }
// CHECK-ERR: whatever
