func.func @main(%a: tensor<3x0xf32>, %b: tensor<0x2xf32>, %s: tensor<f32>) -> (tensor<3x2xf32>, tensor<3xf32>, tensor<3x0xf32>) {
  %d = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<3x0xf32>, tensor<0x2xf32>) -> tensor<3x2xf32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %r = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [1] : (tensor<3x0xf32>, tensor<f32>) -> tensor<3xf32>
  %bs = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<f32>) -> tensor<3x0xf32>
  %m = stablehlo.multiply %a, %bs : tensor<3x0xf32>
  %e = stablehlo.exponential %m : tensor<3x0xf32>
  return %d, %r, %e : tensor<3x2xf32>, tensor<3xf32>, tensor<3x0xf32>
}
