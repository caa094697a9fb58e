// A case whose check does not hold: cjrt conform reports it and exits 1.
func.func @main() {
  %a = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
  %r = stablehlo.add %a, %a : tensor<2xi32>
  check.expect_eq_const %r, dense<[2, 5]> : tensor<2xi32>
  func.return
}
