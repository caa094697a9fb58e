module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<16777216xf32>, %arg1: tensor<f32>, %arg2: tensor<f32>, %arg3: tensor<f32>) -> (tensor<16777216xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.broadcast_in_dim %arg1, dims = [] : (tensor<f32>) -> tensor<16777216xf32>
    %1 = stablehlo.multiply %0, %arg0 : tensor<16777216xf32>
    %2 = stablehlo.broadcast_in_dim %arg2, dims = [] : (tensor<f32>) -> tensor<16777216xf32>
    %3 = stablehlo.add %1, %2 : tensor<16777216xf32>
    %4 = stablehlo.tanh %3 : tensor<16777216xf32>
    %5 = stablehlo.broadcast_in_dim %arg3, dims = [] : (tensor<f32>) -> tensor<16777216xf32>
    %6 = stablehlo.multiply %4, %5 : tensor<16777216xf32>
    return %6 : tensor<16777216xf32>
  }
}
