// Custom calls the compiler or the CPU backend understands besides the corpus' check.* ones.

// JAX before 0.8 sends chlo ops without a StableHLO twin as custom_call @mhlo.<op>, with the
// op's attributes in mhlo.attributes: turned back into chlo.erf / chlo.top_k.
// erf(0) = 0, erf(1) = 0.8427007929497149, erf(-0.5) = -0.5204998778130465.
func.func @main() {
  %x = stablehlo.constant dense<[0.0, 1.0, -0.5]> : tensor<3xf32>
  %r = stablehlo.custom_call @mhlo.erf(%x) {mhlo.attributes = {}, mhlo.version = 1 : i64} : (tensor<3xf32>) -> tensor<3xf32>
  check.expect_almost_eq_const %r, dense<[0.0, 0.842700793, -0.520499878]> : tensor<3xf32>
  func.return
}

// -----

// top_k of [3, 1, 4, 1, 5] with k = 2: values [5, 4] at indices [4, 2].
func.func @main() {
  %x = stablehlo.constant dense<[3.0, 1.0, 4.0, 1.0, 5.0]> : tensor<5xf32>
  %v, %i = stablehlo.custom_call @mhlo.topk(%x) {mhlo.attributes = {k = 2 : i64}, mhlo.version = 1 : i64} : (tensor<5xf32>) -> (tensor<2xf32>, tensor<2xi32>)
  check.expect_almost_eq_const %v, dense<[5.0, 4.0]> : tensor<2xf32>
  check.expect_eq_const %i, dense<[4, 2]> : tensor<2xi32>
  func.return
}

// -----

// jax.lax.dce_sink keeps a value alive and computes nothing.
func.func @main() {
  %x = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %y = stablehlo.add %x, %x : tensor<2xf32>
  stablehlo.custom_call @dce_sink(%y) {has_side_effect = true} : (tensor<2xf32>) -> ()
  check.expect_almost_eq_const %y, dense<[2.0, 4.0]> : tensor<2xf32>
  func.return
}
