// The README's example: (a + b) * a, then a matrix product with b.
func.func @main(%a: tensor<2x2xf32>, %b: tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>) {
  %sum = stablehlo.add %a, %b : tensor<2x2xf32>
  %prod = stablehlo.multiply %sum, %a : tensor<2x2xf32>
  %mm = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %prod, %mm : tensor<2x2xf32>, tensor<2x2xf32>
}
