func.func @main() {
  %0 = stablehlo.constant dense<[[1.5, 2.0, -3.0], [4.0, 5.0, 6.25]]> : tensor<2x3xf32>
  %1 = interpreter.probe %0, probe_id = "a,b" : tensor<2x3xf32>
  %2 = stablehlo.constant dense<[true, false]> : tensor<2xi1>
  %3 = interpreter.probe %2, probe_id = "p2" : tensor<2xi1>
  %4 = stablehlo.constant dense<7> : tensor<ui16>
  %5 = interpreter.probe %4, probe_id = "p3" : tensor<ui16>
  check.expect_serialized_eq %1, probe_id = "a,b" : tensor<2x3xf32>
  func.return
}
