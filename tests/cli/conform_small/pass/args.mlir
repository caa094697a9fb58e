// RUN: stablehlo-translate %s --interpret --args="[dense<1> : tensor<2xi32>, dense<[2, 5]> : tensor<2xi32>]" | FileCheck %s

func.func @main(%arg0: tensor<2xi32>, %arg1: tensor<2xi32>) -> tensor<2xi32> {
  %0 = stablehlo.add %arg0, %arg1 : tensor<2xi32>
  return %0 : tensor<2xi32>
}

// CHECK:      tensor<2xi32> {
// CHECK-NEXT:   [3, 6]
// CHECK-NEXT: }
