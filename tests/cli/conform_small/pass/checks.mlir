// Small cases for tests/cli (cjrt conform end to end): a check op and a check custom call pass.
func.func @main() {
  %a = stablehlo.constant dense<[1, -2, 3]> : tensor<3xi32>
  %r = stablehlo.abs %a : tensor<3xi32>
  check.expect_eq_const %r, dense<[1, 2, 3]> : tensor<3xi32>
  func.return
}

// -----

func.func @main() -> tensor<2xf32> {
  %a = stablehlo.constant dense<[1.5, 2.0]> : tensor<2xf32>
  %b = stablehlo.constant dense<[3.0, 6.0]> : tensor<2xf32>
  %r = stablehlo.multiply %a, %a : tensor<2xf32>
  %e = stablehlo.constant dense<[2.25, 4.0]> : tensor<2xf32>
  stablehlo.custom_call @check.expect_close(%r, %e) {has_side_effect = true} : (tensor<2xf32>, tensor<2xf32>) -> ()
  return %b : tensor<2xf32>
}
