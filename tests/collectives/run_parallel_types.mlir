// Collectives over element types and forms the StableHLO corpus does not exercise, run as
// interpreter.run_parallel programs (cjrt conform). Expected values are worked out by hand.

// all_reduce of f8E4M3FN (a reduction body run as a nested plan): 1 + 1, 2 + 0.25, ...
module @f8_all_reduce {
  func.func @ar(%x : tensor<4xf8E4M3FN>) -> tensor<4xf8E4M3FN> {
    %r = "stablehlo.all_reduce"(%x) ({
      ^bb0(%a: tensor<f8E4M3FN>, %b: tensor<f8E4M3FN>):
        %s = stablehlo.add %a, %b : tensor<f8E4M3FN>
        stablehlo.return %s : tensor<f8E4M3FN>
    }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<4xf8E4M3FN>) -> tensor<4xf8E4M3FN>
    return %r : tensor<4xf8E4M3FN>
  }
  func.func @main() {
    %a = stablehlo.constant dense<[1.0, 2.0, 0.5, -3.0]> : tensor<4xf8E4M3FN>
    %b = stablehlo.constant dense<[1.0, 0.25, 0.5, 1.0]> : tensor<4xf8E4M3FN>
    %r:2 = "interpreter.run_parallel"(%a, %b) {programs = [[@ar], [@ar]]} :
        (tensor<4xf8E4M3FN>, tensor<4xf8E4M3FN>) -> (tensor<4xf8E4M3FN>, tensor<4xf8E4M3FN>)
    check.expect_eq_const %r#0, dense<[2.0, 2.25, 1.0, -2.0]> : tensor<4xf8E4M3FN>
    check.expect_eq_const %r#1, dense<[2.0, 2.25, 1.0, -2.0]> : tensor<4xf8E4M3FN>
    func.return
  }
}

// -----

// all_gather of i4 (sub-byte, one byte per element) across partitions
module @i4_all_gather {
  func.func @ag(%x : tensor<2xi4>) -> tensor<4xi4> {
    %r = "stablehlo.all_gather"(%x) {
      all_gather_dim = 0 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>,
      channel_handle = #stablehlo.channel_handle<handle = 1, type = 0>, use_global_device_ids
    } : (tensor<2xi4>) -> tensor<4xi4>
    return %r : tensor<4xi4>
  }
  func.func @main() {
    %c = stablehlo.constant dense<[1, -2]> : tensor<2xi4>
    %d = stablehlo.constant dense<[7, -8]> : tensor<2xi4>
    %g:2 = "interpreter.run_parallel"(%c, %d) {programs = [[@ag, @ag]]} :
        (tensor<2xi4>, tensor<2xi4>) -> (tensor<4xi4>, tensor<4xi4>)
    check.expect_eq_const %g#0, dense<[1, -2, 7, -8]> : tensor<4xi4>
    check.expect_eq_const %g#1, dense<[1, -2, 7, -8]> : tensor<4xi4>
    func.return
  }
}

// -----

// reduce_scatter of ui64 with maximum over 3 replicas, scatter dimension 1
module @u64_reduce_scatter_max {
  func.func @rs(%x : tensor<1x6xui64>) -> tensor<1x2xui64> {
    %r = "stablehlo.reduce_scatter"(%x) ({
      ^bb0(%a: tensor<ui64>, %b: tensor<ui64>):
        %m = stablehlo.maximum %a, %b : tensor<ui64>
        stablehlo.return %m : tensor<ui64>
    }) {scatter_dimension = 1 : i64, replica_groups = dense<[[0, 1, 2]]> : tensor<1x3xi64>} :
        (tensor<1x6xui64>) -> tensor<1x2xui64>
    return %r : tensor<1x2xui64>
  }
  func.func @main() {
    %a = stablehlo.constant dense<[[1, 9, 3, 18446744073709551615, 5, 0]]> : tensor<1x6xui64>
    %b = stablehlo.constant dense<[[4, 2, 6, 1, 0, 7]]> : tensor<1x6xui64>
    %c = stablehlo.constant dense<[[0, 10, 2, 2, 8, 8]]> : tensor<1x6xui64>
    %r:3 = "interpreter.run_parallel"(%a, %b, %c) {programs = [[@rs], [@rs], [@rs]]} :
        (tensor<1x6xui64>, tensor<1x6xui64>, tensor<1x6xui64>) ->
        (tensor<1x2xui64>, tensor<1x2xui64>, tensor<1x2xui64>)
    check.expect_eq_const %r#0, dense<[[4, 10]]> : tensor<1x2xui64>
    check.expect_eq_const %r#1, dense<[[6, 18446744073709551615]]> : tensor<1x2xui64>
    check.expect_eq_const %r#2, dense<[[8, 8]]> : tensor<1x2xui64>
    func.return
  }
}

// -----

// all_to_all of bf16 with split dimension 1 and concat dimension 0 over 2 replicas, and a
// collective_permute of complex<f32> swapping them
module @bf16_all_to_all_c64_permute {
  func.func @f(%x : tensor<2x2xbf16>, %z : tensor<2xcomplex<f32>>) -> (tensor<4x1xbf16>, tensor<2xcomplex<f32>>) {
    %r = "stablehlo.all_to_all"(%x) {
      split_dimension = 1 : i64, concat_dimension = 0 : i64, split_count = 2 : i64,
      replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>
    } : (tensor<2x2xbf16>) -> tensor<4x1xbf16>
    %p = "stablehlo.collective_permute"(%z) {
      source_target_pairs = dense<[[0, 1], [1, 0]]> : tensor<2x2xi64>
    } : (tensor<2xcomplex<f32>>) -> tensor<2xcomplex<f32>>
    return %r, %p : tensor<4x1xbf16>, tensor<2xcomplex<f32>>
  }
  func.func @main() {
    %a = stablehlo.constant dense<[[1.5, 2.5], [3.5, 4.5]]> : tensor<2x2xbf16>
    %b = stablehlo.constant dense<[[-1.0, -2.0], [-3.0, -4.0]]> : tensor<2x2xbf16>
    %za = stablehlo.constant dense<[(1.0, 2.0), (3.0, 4.0)]> : tensor<2xcomplex<f32>>
    %zb = stablehlo.constant dense<[(5.0, 6.0), (7.0, 8.0)]> : tensor<2xcomplex<f32>>
    %r:4 = "interpreter.run_parallel"(%a, %za, %b, %zb) {programs = [[@f], [@f]]} :
        (tensor<2x2xbf16>, tensor<2xcomplex<f32>>, tensor<2x2xbf16>, tensor<2xcomplex<f32>>) ->
        (tensor<4x1xbf16>, tensor<2xcomplex<f32>>, tensor<4x1xbf16>, tensor<2xcomplex<f32>>)
    check.expect_eq_const %r#0, dense<[[1.5], [3.5], [-1.0], [-3.0]]> : tensor<4x1xbf16>
    check.expect_eq_const %r#2, dense<[[2.5], [4.5], [-2.0], [-4.0]]> : tensor<4x1xbf16>
    check.expect_eq_const %r#1, dense<[(5.0, 6.0), (7.0, 8.0)]> : tensor<2xcomplex<f32>>
    check.expect_eq_const %r#3, dense<[(1.0, 2.0), (3.0, 4.0)]> : tensor<2xcomplex<f32>>
    func.return
  }
}

// -----

// collective_broadcast of i1 from a dynamic root and collective_reduce with `and`, 3 partitions
module @pred_broadcast_reduce {
  func.func @f(%x : tensor<3xi1>, %root : tensor<1xi32>) -> (tensor<3xi1>, tensor<3xi1>) {
    %b = "stablehlo.collective_broadcast"(%x, %root) {
      replica_groups = dense<[[0, 1, 2]]> : tensor<1x3xi64>,
      channel_handle = #stablehlo.channel_handle<handle = 1, type = 0>, has_dynamic_root
    } : (tensor<3xi1>, tensor<1xi32>) -> tensor<3xi1>
    %r = "stablehlo.collective_reduce"(%x) ({
      ^bb0(%a: tensor<i1>, %c: tensor<i1>):
        %s = stablehlo.and %a, %c : tensor<i1>
        stablehlo.return %s : tensor<i1>
    }) {replica_groups = dense<[[2, 0, 1]]> : tensor<1x3xi64>,
        channel_handle = #stablehlo.channel_handle<handle = 2, type = 0>} : (tensor<3xi1>) -> tensor<3xi1>
    return %b, %r : tensor<3xi1>, tensor<3xi1>
  }
  func.func @main() {
    %root = stablehlo.constant dense<[2]> : tensor<1xi32>
    %a = stablehlo.constant dense<[true, true, false]> : tensor<3xi1>
    %b = stablehlo.constant dense<[true, false, true]> : tensor<3xi1>
    %c = stablehlo.constant dense<[true, true, true]> : tensor<3xi1>
    %r:6 = "interpreter.run_parallel"(%a, %root, %b, %root, %c, %root) {programs = [[@f, @f, @f]]} :
        (tensor<3xi1>, tensor<1xi32>, tensor<3xi1>, tensor<1xi32>, tensor<3xi1>, tensor<1xi32>) ->
        (tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>)
    // broadcast: every partition gets partition 2's value
    check.expect_eq_const %r#0, dense<[true, true, true]> : tensor<3xi1>
    check.expect_eq_const %r#2, dense<[true, true, true]> : tensor<3xi1>
    check.expect_eq_const %r#4, dense<[true, true, true]> : tensor<3xi1>
    // reduce: the root is the group's first member, partition 2; the others get false
    check.expect_eq_const %r#5, dense<[true, false, false]> : tensor<3xi1>
    check.expect_eq_const %r#1, dense<[false, false, false]> : tensor<3xi1>
    check.expect_eq_const %r#3, dense<[false, false, false]> : tensor<3xi1>
    func.return
  }
}

// -----

// send/recv between devices on a 2 x 2 grid (pairs name partitions), and ids
module @send_recv_grid {
  func.func @f(%x : tensor<2xi16>) -> (tensor<2xi16>, tensor<ui32>, tensor<ui32>) {
    %t = stablehlo.create_token : !stablehlo.token
    %s = "stablehlo.send"(%x, %t) {
      channel_handle = #stablehlo.channel_handle<handle = 4, type = 1>, is_host_transfer = false,
      source_target_pairs = dense<[[0, 1]]> : tensor<1x2xi64>
    } : (tensor<2xi16>, !stablehlo.token) -> !stablehlo.token
    %v, %t2 = "stablehlo.recv"(%s) {
      channel_handle = #stablehlo.channel_handle<handle = 4, type = 1>, is_host_transfer = false,
      source_target_pairs = dense<[[0, 1]]> : tensor<1x2xi64>
    } : (!stablehlo.token) -> (tensor<2xi16>, !stablehlo.token)
    %rid = stablehlo.replica_id : tensor<ui32>
    %pid = stablehlo.partition_id : tensor<ui32>
    return %v, %rid, %pid : tensor<2xi16>, tensor<ui32>, tensor<ui32>
  }
  func.func @main() {
    %a = stablehlo.constant dense<[1, 2]> : tensor<2xi16>
    %b = stablehlo.constant dense<[3, 4]> : tensor<2xi16>
    %c = stablehlo.constant dense<[5, 6]> : tensor<2xi16>
    %d = stablehlo.constant dense<[7, 8]> : tensor<2xi16>
    %r:12 = "interpreter.run_parallel"(%a, %b, %c, %d) {programs = [[@f, @f], [@f, @f]]} :
        (tensor<2xi16>, tensor<2xi16>, tensor<2xi16>, tensor<2xi16>) ->
        (tensor<2xi16>, tensor<ui32>, tensor<ui32>, tensor<2xi16>, tensor<ui32>, tensor<ui32>,
         tensor<2xi16>, tensor<ui32>, tensor<ui32>, tensor<2xi16>, tensor<ui32>, tensor<ui32>)
    // partition 1 of each replica receives partition 0's value; partition 0 gets zeros
    check.expect_eq_const %r#0, dense<[0, 0]> : tensor<2xi16>
    check.expect_eq_const %r#3, dense<[1, 2]> : tensor<2xi16>
    check.expect_eq_const %r#6, dense<[0, 0]> : tensor<2xi16>
    check.expect_eq_const %r#9, dense<[5, 6]> : tensor<2xi16>
    check.expect_eq_const %r#1, dense<0> : tensor<ui32>
    check.expect_eq_const %r#2, dense<0> : tensor<ui32>
    check.expect_eq_const %r#4, dense<0> : tensor<ui32>
    check.expect_eq_const %r#5, dense<1> : tensor<ui32>
    check.expect_eq_const %r#7, dense<1> : tensor<ui32>
    check.expect_eq_const %r#8, dense<0> : tensor<ui32>
    check.expect_eq_const %r#10, dense<1> : tensor<ui32>
    check.expect_eq_const %r#11, dense<1> : tensor<ui32>
    func.return
  }
}
