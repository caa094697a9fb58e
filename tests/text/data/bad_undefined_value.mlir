// a use of a value that is never defined
func.func @main(%arg0: tensor<f32>) -> tensor<f32> {
  %0 = stablehlo.add %arg0, %x : tensor<f32>
  return %0 : tensor<f32>
}
