#map = affine_map<(d0) -> (d0)>
!t = tensor<3xbf16>
func.func @c() -> (!t, tensor<2xcomplex<f32>>, tensor<2xi1>) {
  %0 = stablehlo.constant dense<[0x7F80, 1.0, -0.0]> : !t
  %1 = stablehlo.constant dense<[(0x7FC00000, 1.0), (2.5, 0x80000000)]> : tensor<2xcomplex<f32>>
  %2 = stablehlo.constant dense<"0x0100"> : tensor<2xi1>
  %3 = stablehlo.constant dense<> : tensor<0x3xf32>
  %4 = stablehlo.constant dense<18446744073709551615> : tensor<ui64>
  %5 = stablehlo.constant dense<[1.0e+00, 2.5E-1, 3.0]> : tensor<3xf8E4M3FN>
  %6 = stablehlo.constant dense<1> : tensor<2x!quant.uniform<i8:f32, 0.5:-20>>
  return %0, %1, %2 : !t, tensor<2xcomplex<f32>>, tensor<2xi1>
}
// -----
func.func @d(%a: tensor<?x4xf32, #stablehlo.bounds<8, ?>>) -> tensor<?x4xf32, #stablehlo.bounds<8, ?>> {
  %0:2 = stablehlo.optimization_barrier %a, %a : tensor<?x4xf32, #stablehlo.bounds<8, ?>>, tensor<?x4xf32, #stablehlo.bounds<8, ?>>
  return %0#1 : tensor<?x4xf32, #stablehlo.bounds<8, ?>>
}
