// RUN: stablehlo-translate --interpret %s
// (chunk 5 of stablehlo/tests/interpret/probe.mlir)

func.func @probe_bf16() {
  %0 = stablehlo.constant dense<[1.0, 2.5, -3.0]> : tensor<3xbf16>
  %1 = stablehlo.constant dense<[0.5, 1.5, 0.0]> : tensor<3xbf16>
  %2 = stablehlo.add %0, %1 : tensor<3xbf16>
  %3 = interpreter.probe %2, probe_id = "probe_bf16" : tensor<3xbf16>
  %4 = stablehlo.convert %3 : (tensor<3xbf16>) -> tensor<3xf32>
  check.expect_serialized_eq %4, probe_id = "probe_bf16" : tensor<3xf32>
  func.return
}

