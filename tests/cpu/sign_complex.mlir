// sign of complex numbers is x / abs(x) part by part (the spec's definition, and XLA's
// result): an infinite part gives NaN, not the direction of the infinity.
func.func @main() {
  %x = stablehlo.constant dense<[(0xFF800000, 2.0), (2.0, 0x7F800000), (0x7F800000, 0x7F800000), (3.0, 4.0), (0.0, 0.0)]> : tensor<5xcomplex<f32>>
  %r = stablehlo.sign %x : tensor<5xcomplex<f32>>
  %re = stablehlo.real %r : (tensor<5xcomplex<f32>>) -> tensor<5xf32>
  %im = stablehlo.imag %r : (tensor<5xcomplex<f32>>) -> tensor<5xf32>
  %nre = stablehlo.compare NE, %re, %re : (tensor<5xf32>, tensor<5xf32>) -> tensor<5xi1>
  %nim = stablehlo.compare NE, %im, %im : (tensor<5xf32>, tensor<5xf32>) -> tensor<5xi1>
  check.expect_eq_const %nre, dense<[true, false, true, false, false]> : tensor<5xi1>
  check.expect_eq_const %nim, dense<[false, true, true, false, false]> : tensor<5xi1>
  %z = stablehlo.constant dense<0.0> : tensor<5xf32>
  %fre = stablehlo.select %nre, %z, %re : (tensor<5xi1>, tensor<5xf32>, tensor<5xf32>) -> tensor<5xf32>
  %fim = stablehlo.select %nim, %z, %im : (tensor<5xi1>, tensor<5xf32>, tensor<5xf32>) -> tensor<5xf32>
  check.expect_almost_eq_const %fre, dense<[0.0, 0.0, 0.0, 0.6, 0.0]> : tensor<5xf32>
  check.expect_almost_eq_const %fim, dense<[0.0, 0.0, 0.0, 0.8, 0.0]> : tensor<5xf32>
  func.return
}

// -----

func.func @main() {
  %x = stablehlo.constant dense<[(0xFFF0000000000000, 2.0), (2.0, 0x7FF0000000000000), (3.0, 4.0)]> : tensor<3xcomplex<f64>>
  %r = stablehlo.sign %x : tensor<3xcomplex<f64>>
  %re = stablehlo.real %r : (tensor<3xcomplex<f64>>) -> tensor<3xf64>
  %im = stablehlo.imag %r : (tensor<3xcomplex<f64>>) -> tensor<3xf64>
  %nre = stablehlo.compare NE, %re, %re : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xi1>
  %nim = stablehlo.compare NE, %im, %im : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xi1>
  check.expect_eq_const %nre, dense<[true, false, false]> : tensor<3xi1>
  check.expect_eq_const %nim, dense<[false, true, false]> : tensor<3xi1>
  func.return
}
