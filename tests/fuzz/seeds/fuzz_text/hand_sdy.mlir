module @m {
  sdy.mesh @mesh = <["a"=2, "b"=4]>
  func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>}) -> tensor<8x8xf32> {
    %0 = sdy.sharding_constraint %arg0 <@mesh, [{"a", ?}, {?}]> : tensor<8x8xf32>
    %1 = sdy.reshard %0 <@mesh, [{}, {"b"}]> : tensor<8x8xf32>
    %2 = sdy.manual_computation(%1) in_shardings=[<@mesh, [{"a"}, {}]>] out_shardings=[<@mesh, [{"a"}, {}]>] manual_axes={"a"} (%arg1: tensor<4x8xf32>) {
      %3 = stablehlo.add %arg1, %arg1 : tensor<4x8xf32>
      sdy.return %3 : tensor<4x8xf32>
    } : (tensor<8x8xf32>) -> tensor<8x8xf32>
    %4 = "foo.bar"(%2) <{x = 1 : i32}> {y = !foo.type<1>} : (tensor<8x8xf32>) -> !foo.type<2>
    return %2 : tensor<8x8xf32>
  }
}
