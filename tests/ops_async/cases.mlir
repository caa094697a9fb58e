// stablehlo.async_start / async_done on the CPU backend (src/cpu/k_async.c): the body runs, done
// yields its results. Expected values are derived by hand from the inputs. Run by the driver of
// tests/ops_gather (test_ops_cases).

// a dynamic_slice body; the result used after done
func.func @main() {
  %x = stablehlo.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %i = stablehlo.constant dense<1> : tensor<i32>
  %f = "stablehlo.async_start"(%x, %i) ({
    ^bb0(%a: tensor<2x3xf32>, %b: tensor<i32>):
    %s = "stablehlo.dynamic_slice"(%a, %b, %b) {slice_sizes = array<i64: 1, 2>} : (tensor<2x3xf32>, tensor<i32>, tensor<i32>) -> tensor<1x2xf32>
    "stablehlo.return"(%s) : (tensor<1x2xf32>) -> ()
  }) : (tensor<2x3xf32>, tensor<i32>) -> !stablehlo.future<tensor<1x2xf32>>
  %y = "stablehlo.async_done"(%f) : (!stablehlo.future<tensor<1x2xf32>>) -> tensor<1x2xf32>
  %z = stablehlo.add %y, %y : tensor<1x2xf32>
  check.expect_eq_const %z, dense<[[10.0, 12.0]]> : tensor<1x2xf32>
  func.return
}

// -----

// two pairs interleaved (start A, start B, done B, done A) with work in between: A's result
// stays alive until its done
func.func @main() {
  %x = stablehlo.iota dim = 0 : tensor<8xi32>
  %u = stablehlo.constant dense<[70, 80]> : tensor<2xi32>
  %k = stablehlo.constant dense<3> : tensor<i32>
  %fa = "stablehlo.async_start"(%x) ({
    ^bb0(%a: tensor<8xi32>):
    %s = "stablehlo.slice"(%a) {start_indices = array<i64: 2>, limit_indices = array<i64: 8>, strides = array<i64: 2>} : (tensor<8xi32>) -> tensor<3xi32>
    "stablehlo.return"(%s) : (tensor<3xi32>) -> ()
  }) : (tensor<8xi32>) -> !stablehlo.future<tensor<3xi32>>
  %m = stablehlo.multiply %x, %x : tensor<8xi32>
  %fb = "stablehlo.async_start"(%m, %u, %k) ({
    ^bb0(%a: tensor<8xi32>, %b: tensor<2xi32>, %c: tensor<i32>):
    %s = "stablehlo.dynamic_update_slice"(%a, %b, %c) : (tensor<8xi32>, tensor<2xi32>, tensor<i32>) -> tensor<8xi32>
    "stablehlo.return"(%s) : (tensor<8xi32>) -> ()
  }) : (tensor<8xi32>, tensor<2xi32>, tensor<i32>) -> !stablehlo.future<tensor<8xi32>>
  %n = stablehlo.add %m, %x : tensor<8xi32>
  %b = "stablehlo.async_done"(%fb) : (!stablehlo.future<tensor<8xi32>>) -> tensor<8xi32>
  %a = "stablehlo.async_done"(%fa) : (!stablehlo.future<tensor<3xi32>>) -> tensor<3xi32>
  check.expect_eq_const %a, dense<[2, 4, 6]> : tensor<3xi32>
  check.expect_eq_const %b, dense<[0, 1, 4, 70, 80, 25, 36, 49]> : tensor<8xi32>
  check.expect_eq_const %n, dense<[0, 2, 6, 12, 20, 30, 42, 56]> : tensor<8xi32>
  check.expect_eq_const %x, dense<[0, 1, 2, 3, 4, 5, 6, 7]> : tensor<8xi32>
  func.return
}

// -----

// collective bodies on one device (replica group of one): all_reduce and all_gather are the
// identity; the pair inside a while loop body
func.func @main() {
  %x = stablehlo.constant dense<[[1.5, -2.0], [3.0, 0.25]]> : tensor<2x2xf32>
  %f = "stablehlo.async_start"(%x) ({
    ^bb0(%a: tensor<2x2xf32>):
    %r = "stablehlo.all_reduce"(%a) ({
    ^bb0(%p: tensor<f32>, %q: tensor<f32>):
      %s = stablehlo.add %p, %q : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) {replica_groups = dense<[[0]]> : tensor<1x1xi64>} : (tensor<2x2xf32>) -> tensor<2x2xf32>
    "stablehlo.return"(%r) : (tensor<2x2xf32>) -> ()
  }) : (tensor<2x2xf32>) -> !stablehlo.future<tensor<2x2xf32>>
  %y = "stablehlo.async_done"(%f) : (!stablehlo.future<tensor<2x2xf32>>) -> tensor<2x2xf32>
  check.expect_eq_const %y, dense<[[1.5, -2.0], [3.0, 0.25]]> : tensor<2x2xf32>
  %g = "stablehlo.async_start"(%x) ({
    ^bb0(%a: tensor<2x2xf32>):
    %r = "stablehlo.all_gather"(%a) {all_gather_dim = 1 : i64, replica_groups = dense<[[0]]> : tensor<1x1xi64>} : (tensor<2x2xf32>) -> tensor<2x2xf32>
    "stablehlo.return"(%r) : (tensor<2x2xf32>) -> ()
  }) : (tensor<2x2xf32>) -> !stablehlo.future<tensor<2x2xf32>>
  %z = "stablehlo.async_done"(%g) : (!stablehlo.future<tensor<2x2xf32>>) -> tensor<2x2xf32>
  check.expect_eq_const %z, dense<[[1.5, -2.0], [3.0, 0.25]]> : tensor<2x2xf32>
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %one = stablehlo.constant dense<1> : tensor<i32>
  %three = stablehlo.constant dense<3> : tensor<i32>
  %w:2 = stablehlo.while(%i = %zero, %acc = %x) : tensor<i32>, tensor<2x2xf32>
  cond {
    %c = stablehlo.compare LT, %i, %three : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  } do {
    %h = "stablehlo.async_start"(%acc) ({
      ^bb0(%a: tensor<2x2xf32>):
      %r = "stablehlo.all_reduce"(%a) ({
      ^bb0(%p: tensor<f32>, %q: tensor<f32>):
        %s = stablehlo.add %p, %q : tensor<f32>
        stablehlo.return %s : tensor<f32>
      }) {replica_groups = dense<[[0]]> : tensor<1x1xi64>} : (tensor<2x2xf32>) -> tensor<2x2xf32>
      "stablehlo.return"(%r) : (tensor<2x2xf32>) -> ()
    }) : (tensor<2x2xf32>) -> !stablehlo.future<tensor<2x2xf32>>
    %d = "stablehlo.async_done"(%h) : (!stablehlo.future<tensor<2x2xf32>>) -> tensor<2x2xf32>
    %e = stablehlo.add %d, %d : tensor<2x2xf32>
    %ni = stablehlo.add %i, %one : tensor<i32>
    stablehlo.return %ni, %e : tensor<i32>, tensor<2x2xf32>
  }
  check.expect_eq_const %w#1, dense<[[12.0, -16.0], [24.0, 2.0]]> : tensor<2x2xf32>
  func.return
}

// -----

// done inside an if branch; a variadic all_reduce body whose first result is the future's
func.func @main() {
  %x = stablehlo.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %f = "stablehlo.async_start"(%x) ({
    ^bb0(%a: tensor<4xf32>):
    %r = "stablehlo.all_reduce"(%a) ({
    ^bb0(%p: tensor<f32>, %q: tensor<f32>):
      %s = stablehlo.add %p, %q : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) {replica_groups = dense<[[0]]> : tensor<1x1xi64>} : (tensor<4xf32>) -> tensor<4xf32>
    "stablehlo.return"(%r) : (tensor<4xf32>) -> ()
  }) : (tensor<4xf32>) -> !stablehlo.future<tensor<4xf32>>
  %p = stablehlo.constant dense<true> : tensor<i1>
  %o = "stablehlo.if"(%p) ({
    %d = "stablehlo.async_done"(%f) : (!stablehlo.future<tensor<4xf32>>) -> tensor<4xf32>
    %t = stablehlo.multiply %d, %x : tensor<4xf32>
    stablehlo.return %t : tensor<4xf32>
  }, {
    stablehlo.return %x : tensor<4xf32>
  }) : (tensor<i1>) -> tensor<4xf32>
  check.expect_eq_const %o, dense<[1.0, 4.0, 9.0, 16.0]> : tensor<4xf32>
  func.return
}

// -----
// expect-error: its future is used by something other than stablehlo.async_done
// a future carried through a loop
func.func @main() -> tensor<1xf32> {
  %x = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %p = stablehlo.constant dense<true> : tensor<i1>
  %f = "stablehlo.async_start"(%x) ({
    ^bb0(%a: tensor<2xf32>):
    %s = "stablehlo.slice"(%a) {start_indices = array<i64: 0>, limit_indices = array<i64: 1>, strides = array<i64: 1>} : (tensor<2xf32>) -> tensor<1xf32>
    "stablehlo.return"(%s) : (tensor<1xf32>) -> ()
  }) : (tensor<2xf32>) -> !stablehlo.future<tensor<1xf32>>
  %w:2 = stablehlo.while(%i = %p, %ff = %f) : tensor<i1>, !stablehlo.future<tensor<1xf32>>
  cond {
    stablehlo.return %i : tensor<i1>
  } do {
    %n = stablehlo.not %i : tensor<i1>
    stablehlo.return %n, %ff : tensor<i1>, !stablehlo.future<tensor<1xf32>>
  }
  %e = "stablehlo.async_done"(%w#1) : (!stablehlo.future<tensor<1xf32>>) -> tensor<1xf32>
  func.return %e : tensor<1xf32>
}

// -----
// expect-error: infeed is not supported by cjrt
func.func @main() -> tensor<2xf32> {
  %t = stablehlo.create_token : !stablehlo.token
  %r:2 = "stablehlo.infeed"(%t) {infeed_config = "", layout = [[0]]} : (!stablehlo.token) -> (tensor<2xf32>, !stablehlo.token)
  func.return %r#0 : tensor<2xf32>
}

// -----
// expect-error: outfeed is not supported by cjrt
func.func @main(%x: tensor<2xf32>) -> !stablehlo.token {
  %t = stablehlo.create_token : !stablehlo.token
  %r = "stablehlo.outfeed"(%x, %t) {outfeed_config = ""} : (tensor<2xf32>, !stablehlo.token) -> !stablehlo.token
  func.return %r : !stablehlo.token
}
