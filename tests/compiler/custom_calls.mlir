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

// -----

// jax.lax.approx_max_k(x, 2) as JAX lowers it for platforms other than TPU: computed exactly
// (a stable sort along reduction_dim with the comparator, then the first k).
// Rows [3, 1, 4] and [1, 5, 9]: values [[4, 3], [9, 5]] at indices [[2, 0], [2, 1]].
func.func @top_k_gt_f32_comparator(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<i32>, %d: tensor<i32>) -> tensor<i1> {
  %0 = stablehlo.compare GT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
  return %0 : tensor<i1>
}
func.func @main() {
  %x = stablehlo.constant dense<[[3.0, 1.0, 4.0], [1.0, 5.0, 9.0]]> : tensor<2x3xf32>
  %i = stablehlo.iota dim = 1 : tensor<2x3xi32>
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %m1 = stablehlo.constant dense<-1> : tensor<i32>
  %v, %k = stablehlo.custom_call @ApproxTopK(%x, %i, %ninf, %m1) {called_computations = [@top_k_gt_f32_comparator], mhlo.backend_config = {aggregate_to_topk = true, is_fallback = true, recall_target = 0.949999988 : f32, reduction_dim = 1 : i64, reduction_input_size_override = -1 : i64, top_k = 2 : i64}} : (tensor<2x3xf32>, tensor<2x3xi32>, tensor<f32>, tensor<i32>) -> (tensor<2x2xf32>, tensor<2x2xi32>)
  check.expect_almost_eq_const %v, dense<[[4.0, 3.0], [9.0, 5.0]]> : tensor<2x2xf32>
  check.expect_eq_const %k, dense<[[2, 0], [2, 1]]> : tensor<2x2xi32>
  func.return
}

// -----

// Shardy's round-trip form of a manual computation, on one device: GlobalToLocalShape and
// LocalToGlobalShape are identities, the body's call is inlined. [1, 2, 3, 4] squared.
module @m attributes {mhlo.frontend_attributes = {xla.sdy.meshes = "{mesh = #sdy.mesh<[\22x\22=1]>}"}} {
  func.func @main() {
    %x = stablehlo.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
    %0 = stablehlo.custom_call @xla.sdy.GlobalToLocalShape(%x) {has_side_effect = true, mhlo.frontend_attributes = {xla.sdy.in_shardings = "#sdy.sharding_per_value<[<@mesh, [{\22x\22}]>]>", xla.sdy.manual_axes = "#sdy<manual_axes{\22x\22}>"}} : (tensor<4xf32>) -> tensor<4xf32>
    %1 = call @xla.sdy.manual_computation_body(%0) : (tensor<4xf32>) -> tensor<4xf32>
    %2 = stablehlo.custom_call @xla.sdy.LocalToGlobalShape(%1) {has_side_effect = true, mhlo.frontend_attributes = {xla.sdy.manual_axes = "#sdy<manual_axes{\22x\22}>", xla.sdy.out_shardings = "#sdy.sharding_per_value<[<@mesh, [{\22x\22}]>]>"}} : (tensor<4xf32>) -> tensor<4xf32>
    check.expect_almost_eq_const %2, dense<[1.0, 4.0, 9.0, 16.0]> : tensor<4xf32>
    func.return
  }
  func.func @xla.sdy.manual_computation_body(%a: tensor<4xf32>) -> tensor<4xf32> {
    %r = stablehlo.multiply %a, %a : tensor<4xf32>
    return %r : tensor<4xf32>
  }
}
