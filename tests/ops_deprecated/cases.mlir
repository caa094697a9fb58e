// Ops the conformance corpus never executes (stablehlo-formats.md, "Ops the corpus does not
// execute"): the deprecated broadcast and dot, and set_dimension_size. Expected values are
// derived by hand from the StableHLO specification.

// broadcast prepends broadcast_sizes to the operand's shape: result[i, j, k] = operand[k].
func.func @main() {
  %x = stablehlo.constant dense<[1, 2, 3]> : tensor<3xi32>
  %r = "stablehlo.broadcast"(%x) {broadcast_sizes = array<i64: 2, 1>} : (tensor<3xi32>) -> tensor<2x1x3xi32>
  check.expect_eq_const %r, dense<[[[1, 2, 3]], [[1, 2, 3]]]> : tensor<2x1x3xi32>
  func.return
}

// -----

// broadcast of a scalar (a rank-0 operand gives a result of shape broadcast_sizes).
func.func @main() {
  %x = stablehlo.constant dense<2.5> : tensor<f32>
  %r = "stablehlo.broadcast"(%x) {broadcast_sizes = array<i64: 2, 2>} : (tensor<f32>) -> tensor<2x2xf32>
  check.expect_almost_eq_const %r, dense<2.5> : tensor<2x2xf32>
  func.return
}

// -----

// dot of two matrices: [[1,2],[3,4]] x [[5,6],[7,8]] = [[19,22],[43,50]].
func.func @main() {
  %a = stablehlo.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %b = stablehlo.constant dense<[[5.0, 6.0], [7.0, 8.0]]> : tensor<2x2xf32>
  %r = "stablehlo.dot"(%a, %b) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  check.expect_almost_eq_const %r, dense<[[19.0, 22.0], [43.0, 50.0]]> : tensor<2x2xf32>
  func.return
}

// -----

// dot of a matrix and a vector: [[1,2,3],[4,5,6]] . [1,0,-1] = [-2,-2].
func.func @main() {
  %a = stablehlo.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi32>
  %v = stablehlo.constant dense<[1, 0, -1]> : tensor<3xi32>
  %r = "stablehlo.dot"(%a, %v) : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2xi32>
  check.expect_eq_const %r, dense<[-2, -2]> : tensor<2xi32>
  func.return
}

// -----

// dot of two vectors (the inner product): [1,2,3] . [4,5,6] = 32.
func.func @main() {
  %a = stablehlo.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf64>
  %b = stablehlo.constant dense<[4.0, 5.0, 6.0]> : tensor<3xf64>
  %r = "stablehlo.dot"(%a, %b) : (tensor<3xf64>, tensor<3xf64>) -> tensor<f64>
  check.expect_almost_eq_const %r, dense<32.0> : tensor<f64>
  func.return
}

// -----

// set_dimension_size to the full static size leaves the values as they are.
func.func @main() {
  %x = stablehlo.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>
  %n = stablehlo.constant dense<2> : tensor<i32>
  %r = "stablehlo.set_dimension_size"(%x, %n) {dimension = 1 : i64} : (tensor<2x2xi32>, tensor<i32>) -> tensor<2x2xi32>
  check.expect_eq_const %r, dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>
  func.return
}
