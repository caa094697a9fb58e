module @test_program {
func.func @main(%lhs: tensor<f64>, %rhs: tensor<2x3xf32>) -> (tensor<f64>, tensor<3xf32>) {
  %0 = "stablehlo.constant"(){value = dense<1.0> : tensor<f64>} : () -> tensor<f64>
  %1 = "stablehlo.add"(%lhs, %0) : (tensor<f64>, tensor<f64>) -> tensor<f64>
  %2 = "stablehlo.constant"() { value = dense<0.0> : tensor<f32> } : () -> tensor<f32>
  %3 = "stablehlo.reduce"(%rhs, %2) ({
    ^bb0(%x: tensor<f32>, %y: tensor<f32>):
      %4 = "stablehlo.maximum"(%x, %y) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%4) : (tensor<f32>) -> ()
  }) {
    dimensions = array<i64: 0>
  } : (tensor<2x3xf32>, tensor<f32>) -> tensor<3xf32>
  "func.return"(%1, %3) : (tensor<f64>, tensor<3xf32>) -> ()
}
}
