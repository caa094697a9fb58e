// RUN: stablehlo-translate --interpret %s
// (chunk 8 of stablehlo/tests/interpret/probe.mlir)

func.func @probe_iterations() {
  // int i = 0;
  // int sum = 0;
  // while (i < 10) {
  //   sum += 1;
  //   i += 1;
  // }
  %init_i = stablehlo.constant dense<0> : tensor<i64>
  %init_sum = stablehlo.constant dense<0> : tensor<i64>
  %one = stablehlo.constant dense<1> : tensor<i64>
  %two = stablehlo.constant dense<2> : tensor<i64>
  %results0, %results1 = stablehlo.while(%arg0 = %init_i, %arg1 = %init_sum) : tensor<i64>, tensor<i64>
  cond {
    %cond = stablehlo.compare LT, %arg0, %two : (tensor<i64>, tensor<i64>) -> tensor<i1>
    stablehlo.return %cond : tensor<i1>
  } do {
    %new_sum = stablehlo.add %arg1, %one : tensor<i64>
    %new_sum_instrumented = interpreter.probe %new_sum, probe_id = "probe_iterations" : tensor<i64>
    %new_i = stablehlo.add %arg0, %one : tensor<i64>
    stablehlo.return %new_i, %new_sum_instrumented : tensor<i64>, tensor<i64>
  }

  check.expect_eq_const %results0, dense<2> : tensor<i64>
  check.expect_serialized_eq %one, probe_id = "probe_iterations", iter = 0 : tensor<i64>
  check.expect_serialized_eq %two, probe_id = "probe_iterations", iter = 2 : tensor<i64>
  func.return
}
