// Cases for test_ops_cases itself (tests/common/CMakeLists.txt): one passes, one fails to
// parse, one fails its check. The failures must be reported at their lines of this file.
// case: adds
func.func @main() {
  %c = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %s = stablehlo.add %c, %c : tensor<2xf32>
  %e = stablehlo.constant dense<[2.0, 4.0]> : tensor<2xf32>
  stablehlo.custom_call @check.expect_eq(%s, %e) {has_side_effect = true} : (tensor<2xf32>, tensor<2xf32>) -> ()
  return
}

// -----
// case: bad operand type

func.func @main() {
  %c = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %s = stablehlo.add %c, %c : tensor<3xf32>
  return
}

// -----
// case: wrong expectation
func.func @main() {
  %c = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %s = stablehlo.add %c, %c : tensor<2xf32>
  %e = stablehlo.constant dense<[2.0, 5.0]> : tensor<2xf32>
  stablehlo.custom_call @check.expect_eq(%s, %e) {has_side_effect = true} : (tensor<2xf32>, tensor<2xf32>) -> ()
  return
}
