func.func @main(%a: tensor<0x4xf32>, %i: tensor<i32>) -> (tensor<2x4xf32>, tensor<0x4xf32>, tensor<4x0xf32>, tensor<0xi32>, tensor<0x4xf32>) {
  %c = stablehlo.constant dense<1.0> : tensor<2x4xf32>
  %one = stablehlo.constant dense<1.0> : tensor<f32>
  %cat = stablehlo.concatenate %a, %c, dim = 0 : (tensor<0x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %s = stablehlo.dynamic_slice %a, %i, %i, sizes = [0, 2] : (tensor<0x4xf32>, tensor<i32>, tensor<i32>) -> tensor<0x2xf32>
  %p = stablehlo.pad %s, %one, low = [0, 1], high = [0, 1], interior = [0, 0] : (tensor<0x2xf32>, tensor<f32>) -> tensor<0x4xf32>
  %t = stablehlo.transpose %a, dims = [1, 0] : (tensor<0x4xf32>) -> tensor<4x0xf32>
  %io = stablehlo.iota dim = 0 : tensor<0xi32>
  %bi = stablehlo.broadcast_in_dim %i, dims = [] : (tensor<i32>) -> tensor<0xi32>
  %ad = stablehlo.add %io, %bi : tensor<0xi32>
  %srt = "stablehlo.sort"(%a) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %lt = stablehlo.compare LT, %x, %y : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  }) {dimension = 0 : i64, is_stable = true} : (tensor<0x4xf32>) -> tensor<0x4xf32>
  return %cat, %p, %t, %ad, %srt : tensor<2x4xf32>, tensor<0x4xf32>, tensor<4x0xf32>, tensor<0xi32>, tensor<0x4xf32>
}
