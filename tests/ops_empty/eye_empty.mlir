// jnp.eye(0, 4, k) with a dynamic k, as JAX lowers it (lax_numpy_test testEyeDynamicK).
func.func public @main(%arg0: tensor<i32>) -> tensor<0x4xf32> {
  %0 = stablehlo.iota dim = 0 : tensor<0x4xi32>
  %1 = stablehlo.iota dim = 1 : tensor<0x4xi32>
  %2 = stablehlo.broadcast_in_dim %arg0, dims = [] : (tensor<i32>) -> tensor<0x4xi32>
  %3 = stablehlo.add %0, %2 : tensor<0x4xi32>
  %4 = stablehlo.compare EQ, %3, %1, SIGNED : (tensor<0x4xi32>, tensor<0x4xi32>) -> tensor<0x4xi1>
  %5 = stablehlo.convert %4 : (tensor<0x4xi1>) -> tensor<0x4xf32>
  return %5 : tensor<0x4xf32>
}
