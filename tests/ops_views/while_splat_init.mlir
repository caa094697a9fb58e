// A while loop whose carried arrays start from splat constants (one CSE'd 1.5 constant for three
// of them, zeros for a fourth): the CPU backend fills those carried buffers instead of copying
// the constant (src/cpu/k_control.c, splat_inits). Sums are exact in f32.
// case: while with splat-constant inits
func.func @main() {
  %z = stablehlo.constant dense<1.5> : tensor<64x300xf32>
  %z2 = stablehlo.constant dense<1.5> : tensor<64x300xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<64x300xf32>
  %i0 = stablehlo.constant dense<0> : tensor<i32>
  %one = stablehlo.constant dense<1> : tensor<i32>
  %ten = stablehlo.constant dense<10> : tensor<i32>
  %n = stablehlo.constant dense<4> : tensor<i32>
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %f1 = stablehlo.constant dense<1.0> : tensor<64x300xf32>
  %f2 = stablehlo.constant dense<2.0> : tensor<f32>
  %w:5 = stablehlo.while(%i = %i0, %a = %z, %b = %z2, %c = %z, %d = %zero) : tensor<i32>, tensor<64x300xf32>, tensor<64x300xf32>, tensor<64x300xf32>, tensor<64x300xf32>
   cond {
    %p = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
   } do {
    %i1 = stablehlo.add %i, %one : tensor<i32>
    %v = stablehlo.convert %i1 : (tensor<i32>) -> tensor<f32>
    %ra = stablehlo.broadcast_in_dim %v, dims = [] : (tensor<f32>) -> tensor<1x300xf32>
    %v2 = stablehlo.multiply %v, %f2 : tensor<f32>
    %rb = stablehlo.broadcast_in_dim %v2, dims = [] : (tensor<f32>) -> tensor<1x300xf32>
    %a1 = stablehlo.dynamic_update_slice %a, %ra, %i, %c0 : (tensor<64x300xf32>, tensor<1x300xf32>, tensor<i32>, tensor<i32>) -> tensor<64x300xf32>
    %ib = stablehlo.add %i, %ten : tensor<i32>
    %b1 = stablehlo.dynamic_update_slice %b, %rb, %ib, %c0 : (tensor<64x300xf32>, tensor<1x300xf32>, tensor<i32>, tensor<i32>) -> tensor<64x300xf32>
    %c1 = stablehlo.add %c, %f1 : tensor<64x300xf32>
    %d1 = stablehlo.dynamic_update_slice %d, %ra, %i, %c0 : (tensor<64x300xf32>, tensor<1x300xf32>, tensor<i32>, tensor<i32>) -> tensor<64x300xf32>
    stablehlo.return %i1, %a1, %b1, %c1, %d1 : tensor<i32>, tensor<64x300xf32>, tensor<64x300xf32>, tensor<64x300xf32>, tensor<64x300xf32>
   }
  %init = stablehlo.constant dense<0.0> : tensor<f32>
  %sa = stablehlo.reduce(%w#1 init: %init) applies stablehlo.add across dimensions = [0, 1] : (tensor<64x300xf32>, tensor<f32>) -> tensor<f32>
  %sb = stablehlo.reduce(%w#2 init: %init) applies stablehlo.add across dimensions = [0, 1] : (tensor<64x300xf32>, tensor<f32>) -> tensor<f32>
  %sc = stablehlo.reduce(%w#3 init: %init) applies stablehlo.add across dimensions = [0, 1] : (tensor<64x300xf32>, tensor<f32>) -> tensor<f32>
  %sd = stablehlo.reduce(%w#4 init: %init) applies stablehlo.add across dimensions = [0, 1] : (tensor<64x300xf32>, tensor<f32>) -> tensor<f32>
  %ea = stablehlo.constant dense<30000.0> : tensor<f32>
  %eb = stablehlo.constant dense<33000.0> : tensor<f32>
  %ec = stablehlo.constant dense<105600.0> : tensor<f32>
  %ed = stablehlo.constant dense<3000.0> : tensor<f32>
  stablehlo.custom_call @check.expect_eq(%sa, %ea) {has_side_effect = true} : (tensor<f32>, tensor<f32>) -> ()
  stablehlo.custom_call @check.expect_eq(%sb, %eb) {has_side_effect = true} : (tensor<f32>, tensor<f32>) -> ()
  stablehlo.custom_call @check.expect_eq(%sc, %ec) {has_side_effect = true} : (tensor<f32>, tensor<f32>) -> ()
  stablehlo.custom_call @check.expect_eq(%sd, %ed) {has_side_effect = true} : (tensor<f32>, tensor<f32>) -> ()
  return
}
