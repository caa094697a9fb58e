// Probes recorded in a loop and interleaved with another probe: the i-th recording of each id.
func.func @main() {
  %zero = stablehlo.constant dense<0> : tensor<i64>
  %one = stablehlo.constant dense<1> : tensor<i64>
  %three = stablehlo.constant dense<3> : tensor<i64>
  %r:2 = stablehlo.while(%i = %zero, %s = %zero) : tensor<i64>, tensor<i64>
  cond {
    %c = stablehlo.compare LT, %i, %three : (tensor<i64>, tensor<i64>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  } do {
    %ns = stablehlo.add %s, %i : tensor<i64>
    %p = interpreter.probe %ns, probe_id = "sum" : tensor<i64>
    %ni = stablehlo.add %i, %one : tensor<i64>
    %q = interpreter.probe %ni, probe_id = "i" : tensor<i64>
    stablehlo.return %q, %p : tensor<i64>, tensor<i64>
  }
  %v0 = stablehlo.constant dense<0> : tensor<i64>
  %v1 = stablehlo.constant dense<1> : tensor<i64>
  %v3 = stablehlo.constant dense<3> : tensor<i64>
  check.expect_serialized_eq %v0, probe_id = "sum", iter = 0 : tensor<i64>
  check.expect_serialized_eq %v1, probe_id = "sum", iter = 1 : tensor<i64>
  check.expect_serialized_eq %v3, probe_id = "sum", iter = 2 : tensor<i64>
  check.expect_serialized_eq %v1, probe_id = "i", iter = 0 : tensor<i64>
  check.expect_serialized_eq %v3, probe_id = "i", iter = 2 : tensor<i64>
  func.return
}
