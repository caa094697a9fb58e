// RUN: stablehlo-opt -inline %s | stablehlo-translate --interpe --deserialize | stablehlo-opt > %t.0
// RUN: stablehlo-opt %s > %t.1
// RUN: diff %t.0 %t.1

module @