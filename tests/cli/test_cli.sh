#!/usr/bin/env bash
# The `cjrt run` and `cjrt info` commands, end to end through the plugin, including bad input.
# Usage: test_cli.sh CJRT PLUGIN.so LIBCJRT.so EXAMPLES_DIR DATA_DIR
# Checks that need compile/execute are skipped (saying so) while the plugin cannot compile.
set -u
CJRT=$1 PLUGIN=$2 LIBCJRT=$3 EXAMPLES=$4 DATA=$5
TMP=$(mktemp -d /tmp/cjrt_cli_XXXXXX)
trap 'rm -rf "$TMP"' EXIT
fails=0 checks=0

# run NAME EXPECTED_RC CMD...: runs CMD, keeps stdout/stderr in $TMP/NAME.{out,err}
run() {
  local name=$1 want=$2
  shift 2
  "$@" >"$TMP/$name.out" 2>"$TMP/$name.err"
  local rc=$?
  checks=$((checks + 1))
  if [ "$rc" != "$want" ]; then
    fails=$((fails + 1))
    echo "FAIL $name: exit $rc, want $want: $*" >&2
    sed 's/^/  stdout: /' "$TMP/$name.out" | head -20 >&2
    sed 's/^/  stderr: /' "$TMP/$name.err" | head -20 >&2
  fi
}
# has NAME out|err TEXT: the output contains TEXT
has() {
  checks=$((checks + 1))
  if ! grep -qF -- "$3" "$TMP/$1.$2"; then
    fails=$((fails + 1))
    echo "FAIL $1: std$2 lacks '$3'" >&2
    sed 's/^/  '"$2"': /' "$TMP/$1.$2" | head -20 >&2
  fi
}
empty() {
  checks=$((checks + 1))
  if [ -s "$TMP/$1.$2" ]; then
    fails=$((fails + 1))
    echo "FAIL $1: std$2 is not empty" >&2
    sed 's/^/  '"$2"': /' "$TMP/$1.$2" | head -20 >&2
  fi
}

# ---- help and usage ----
run help_run 0 "$CJRT" run --help
has help_run out "usage: cjrt run PROGRAM"
has help_run out "--input 'VALUE:TYPE'"
run help_info 0 "$CJRT" info --help
has help_info out "usage: cjrt info"
run no_program 2 "$CJRT" run
has no_program err "cjrt run: no program given"
run unknown_opt 2 "$CJRT" run "$EXAMPLES/hello.mlir" --frobnicate
has unknown_opt err "unknown option '--frobnicate'"
run bad_device_arg 2 "$CJRT" run "$EXAMPLES/hello.mlir" --device x
has bad_device_arg err "--device wants a device id"
run bad_repeat 2 "$CJRT" run "$EXAMPLES/hello.mlir" --repeat 0
run missing_value 2 "$CJRT" run "$EXAMPLES/hello.mlir" --input
has missing_value err "--input needs a value"
run info_extra 2 "$CJRT" info extra
has info_extra err "unexpected argument 'extra'"

# ---- info ----
run info 0 "$CJRT" info --plugin "$PLUGIN"
has info out "plugin: "
has info out "PJRT C API: 0."
has info out "xla_version = "
has info out "platform: "
has info out "devices: "
has info out "memories: "
empty info err
run info3 0 "$CJRT" info --plugin "$PLUGIN" --option cpu_device_count=3
has info3 out "devices: 3 (3 addressable)"
run info_badopt 1 "$CJRT" info --plugin "$PLUGIN" --option no_such_option=1
has info_badopt err "no_such_option"
run info_default 0 env -u CJRT_PLUGIN "$CJRT" info   # the plugin next to libcjrt, found by name
has info_default out "pjrt_c_api_cjrt_plugin.so"

# ---- plugins that are not plugins ----
run plugin_text 1 "$CJRT" info --plugin "$DATA/not_npy.txt"
has plugin_text err "cannot load plugin"
run plugin_missing 1 "$CJRT" run "$EXAMPLES/hello.mlir" --plugin /nonexistent/libnothing.so
has plugin_missing err "does not exist"
run plugin_nosym 1 "$CJRT" run "$EXAMPLES/hello.mlir" --plugin "$LIBCJRT" --input 1:f32
has plugin_nosym err "is not a PJRT plugin: it has no GetPjrtApi symbol"
run plugin_name 1 "$CJRT" info --plugin no-such-plugin-name
has plugin_name err "no PJRT plugin named 'no-such-plugin-name'"

# ---- bad input files and literals (reported before the plugin is involved) ----
run missing_program 1 "$CJRT" run "$TMP/nope.mlir" --plugin "$PLUGIN"
has missing_program err "nope.mlir: No such file or directory"
run bad_literal 1 "$CJRT" run "$EXAMPLES/hello.mlir" --plugin "$PLUGIN" --input '[1, 2:f32'
has bad_literal err "input 0: literal: missing ']'"
run bad_type 1 "$CJRT" run "$EXAMPLES/hello.mlir" --plugin "$PLUGIN" --input '[1, 2]:f99'
has bad_type err "unknown element type 'f99'"
run missing_npy 1 "$CJRT" run "$EXAMPLES/hello.mlir" --plugin "$PLUGIN" --input "$TMP/none.npy"
has missing_npy err "cannot open"
run bad_npy 1 "$CJRT" run "$EXAMPLES/hello.mlir" --plugin "$PLUGIN" --input "$DATA/strings.npy"
has bad_npy err "unsupported dtype '<U3'"
run v1_npy 1 "$CJRT" run "$EXAMPLES/hello.mlir" --plugin "$PLUGIN" --input "$DATA/f8e4m3fn.npy"
has v1_npy err "give the type"

# ---- compile and run ----
run hello 0 "$CJRT" run "$EXAMPLES/hello.mlir" --plugin "$PLUGIN" \
  --input '[[1, 2], [3, 4]]:f32' --input '[[10, 20], [30, 40]]:f32'
if grep -q "UNIMPLEMENTED\|not implemented" "$TMP/hello.err"; then
  echo "test_cli: SKIP compile/execute checks: $(head -1 "$TMP/hello.err")"
  fails=$((fails - 1)) # the hello run above is expected to fail until compile exists
else
  cat >"$TMP/want_hello" <<'EOF'
out0: f32[2,2]
[[ 11.  44.]
 [ 99. 176.]]
out1: f32[2,2]
[[ 70. 100.]
 [150. 220.]]
EOF
  checks=$((checks + 1))
  if ! diff -u "$TMP/want_hello" "$TMP/hello.out" >&2; then
    fails=$((fails + 1))
    echo "FAIL hello: output differs" >&2
  fi
  empty hello err

  # the default plugin (next to libcjrt) and the README's exact command line
  run hello_default 0 env -u CJRT_PLUGIN "$CJRT" run "$EXAMPLES/hello.mlir" \
    --input '[[1, 2], [3, 4]]:f32' --input '[[10, 20], [30, 40]]:f32'
  checks=$((checks + 1))
  cmp -s "$TMP/hello.out" "$TMP/hello_default.out" || { fails=$((fails + 1)); echo "FAIL hello_default differs" >&2; }

  # outputs written as .npy and read back as inputs; timing and repeats; another device
  run outdir 0 "$CJRT" run "$EXAMPLES/hello.mlir" --plugin "$PLUGIN" --quiet --timing --repeat 3 \
    --input '[[1, 2], [3, 4]]:f32' --input '[[10, 20], [30, 40]]:f32' --output-dir "$TMP/outs"
  has outdir out "timing: compile"
  has outdir out "timing: execute x3: min"
  checks=$((checks + 1))
  [ -f "$TMP/outs/out0.npy" ] && [ -f "$TMP/outs/out1.npy" ] && head -c 6 "$TMP/outs/out0.npy" | grep -q NUMPY ||
    { fails=$((fails + 1)); echo "FAIL outdir: no out0.npy/out1.npy" >&2; }
  run from_npy 0 "$CJRT" run "$EXAMPLES/hello.mlir" --plugin "$PLUGIN" \
    --input "$TMP/outs/out0.npy" --input "$TMP/outs/out1.npy:f32" --option cpu_device_count=2 --device 1
  has from_npy out "[[  891.  6336.]"
  run no_device 1 "$CJRT" run "$EXAMPLES/hello.mlir" --plugin "$PLUGIN" --device 9 \
    --input '[[1, 2], [3, 4]]:f32' --input '[[10, 20], [30, 40]]:f32'
  has no_device err "--device 9: no such device"

  # a scalar program and typed literals
  cat >"$TMP/scalar.mlir" <<'EOF'
func.func @main(%x: tensor<i32>, %y: tensor<3xi1>) -> (tensor<i32>, tensor<3xi1>) {
  %s = stablehlo.multiply %x, %x : tensor<i32>
  %n = stablehlo.not %y : tensor<3xi1>
  return %s, %n : tensor<i32>, tensor<3xi1>
}
EOF
  run scalar 0 "$CJRT" run "$TMP/scalar.mlir" --plugin "$PLUGIN" --input 7:i32 --input '[true, false, true]:pred'
  has scalar out "out0: s32[]"
  has scalar out "49"
  has scalar out "[False  True False]"

  # wrong inputs: type, shape, count
  run wrong_dtype 1 "$CJRT" run "$EXAMPLES/hello.mlir" --plugin "$PLUGIN" \
    --input '[[1, 2], [3, 4]]:i32' --input '[[10, 20], [30, 40]]:f32'
  has wrong_dtype err "cjrt run: executing"
  run wrong_shape 1 "$CJRT" run "$EXAMPLES/hello.mlir" --plugin "$PLUGIN" \
    --input '[1, 2, 3]:f32' --input '[[10, 20], [30, 40]]:f32'
  has wrong_shape err "cjrt run: executing"
  run wrong_count 1 "$CJRT" run "$EXAMPLES/hello.mlir" --plugin "$PLUGIN" --input '[[1, 2], [3, 4]]:f32'
  has wrong_count err "cjrt run: executing"

  # a shape-polymorphic program (as jax.export writes one) is refined to the inputs given
  cat >"$TMP/poly.mlir" <<'MLIR'
func.func public @main(%arg0: tensor<?x3xf32>, %arg1: tensor<f32>) -> tensor<?x3xf32> {
  %d = stablehlo.get_dimension_size %arg0, dim = 0 : (tensor<?x3xf32>) -> tensor<i32>
  %s = stablehlo.reshape %d : (tensor<i32>) -> tensor<1xi32>
  %c3 = stablehlo.constant dense<3> : tensor<1xi32>
  %sh = stablehlo.concatenate %s, %c3, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
  %b = stablehlo.dynamic_broadcast_in_dim %arg1, %sh, dims = [] : (tensor<f32>, tensor<2xi32>) -> tensor<?x3xf32>
  %r = stablehlo.add %arg0, %b : tensor<?x3xf32>
  return %r : tensor<?x3xf32>
}
MLIR
  run poly 0 "$CJRT" run "$TMP/poly.mlir" --plugin "$PLUGIN" --input '[[1, 2, 3], [4, 5, 6]]:f32' \
    --input '10:f32'
  has poly out "out0: f32[2,3]"
  has poly out "[[11. 12. 13.]"
  run poly4 0 "$CJRT" run "$TMP/poly.mlir" --plugin "$PLUGIN" --input '[[1, 2, 3], [4, 5, 6], [0, 0, 0], [1, 1, 1]]:f32' \
    --input '1:f32'
  has poly4 out "out0: f32[4,3]"
  run poly_bad 1 "$CJRT" run "$TMP/poly.mlir" --plugin "$PLUGIN" --input '[[1, 2], [4, 5]]:f32' --input '1:f32'
  has poly_bad err "cannot be refined to tensor<2x2xf32>"
  run poly_count 1 "$CJRT" run "$TMP/poly.mlir" --plugin "$PLUGIN" --input '[[1, 2, 3]]:f32'
  has poly_count err "takes 2 arguments, but the compile options give the shapes of 1"

  # a value returned twice fills both results (the first was left unwritten)
  printf 'func.func @main(%%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) {\n  %%s = stablehlo.negate %%x : tensor<2xf32>\n  return %%s, %%x, %%s : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>\n}\n' >"$TMP/twice.mlir"
  run twice 0 "$CJRT" run "$TMP/twice.mlir" --plugin "$PLUGIN" --input '[1, 2]:f32'
  if [ "$(grep -c -F -- '[-1. -2.]' "$TMP/twice.out")" != 2 ]; then
    fails=$((fails + 1))
    echo "FAIL twice: the negated value should be printed twice" >&2
    sed 's/^/  stdout: /' "$TMP/twice.out" >&2
  fi
  checks=$((checks + 1))

  # malformed programs
  printf 'func.func @main(%%x: tensor<f32>) -> tensor<f32> {\n  %%y = stablehlo.add %%x\n' >"$TMP/bad.mlir"
  run malformed 1 "$CJRT" run "$TMP/bad.mlir" --plugin "$PLUGIN" --input 1:f32
  has malformed err "cjrt run: compiling $TMP/bad.mlir: PJRT_Client_Compile"
  # the message carries no C source location unless CJRT_ERROR_LOCATIONS asks for it
  checks=$((checks + 1))
  if grep -qF "[at src/" "$TMP/malformed.err"; then
    fails=$((fails + 1))
    echo "FAIL malformed: a source location without CJRT_ERROR_LOCATIONS" >&2
  fi
  CJRT_ERROR_LOCATIONS=1 run malformed_at 1 "$CJRT" run "$TMP/bad.mlir" --plugin "$PLUGIN" --input 1:f32
  has malformed_at err "PJRT_Client_Compile: "
  has malformed_at err " [at src/pjrt/error.c:"
  has malformed_at err " <- src/frontend/mlir_text.c:"
  printf 'ML\357R\000garbage' >"$TMP/bad.mlirbc"
  run bad_bytecode 1 "$CJRT" run "$TMP/bad.mlirbc" --plugin "$PLUGIN"
  has bad_bytecode err "PJRT_Client_Compile"

  # HLO programs: PROGRAM.pb (an xla.HloModuleProto) and PROGRAM.hlo (text) go as format "hlo"
  HLO=$EXAMPLES/../tests/hlo/data
  run hlo_pb 0 "$CJRT" run "$HLO/fori_loop.pb" --plugin "$PLUGIN" --input "$HLO/fori_loop.in0.npy" \
    --input "$HLO/fori_loop.in1.npy"
  has hlo_pb out "out0: f32[4]"
  run hlo_text 0 "$CJRT" run "$HLO/fori_loop.hlo" --plugin "$PLUGIN" \
    --input "$HLO/fori_loop.in0.npy" --input "$HLO/fori_loop.in1.npy"
  checks=$((checks + 1))
  if ! cmp -s "$TMP/hlo_pb.out" "$TMP/hlo_text.out"; then
    fails=$((fails + 1))
    echo "FAIL hlo_text: its output differs from the .pb's" >&2
  fi
  run hlo_parse 0 "$CJRT" parse "$HLO/fori_loop.pb" "$HLO/fori_loop.hlo"
  has hlo_parse out "stablehlo.while"
  has hlo_parse out "parse: 2 ok, 0 failed"
  # shardings (OpSharding in a proto, sharding={...} in text) become mhlo.sharding attributes
  SH=$EXAMPLES/../tests/hlo/sharding
  run hlo_sharding 0 "$CJRT" parse "$SH/sharded.hlo" "$SH/torch_xla_spmd_step.pb"
  has hlo_sharding out '%arg0: tensor<4x2xf32> {mhlo.sharding = "{devices=[2,1]0,1}"}'
  has hlo_sharding out '%arg1: tensor<2xf32> {mhlo.sharding = "{replicated}"}'
  has hlo_sharding out '-> (tensor<4x2xf32> {mhlo.sharding = "{devices=[2,1,2]<=[4] last_tile_dim_replicate}"}, tensor<2xf32> {mhlo.sharding = "{maximal device=1}"})'
  has hlo_sharding out 'stablehlo.custom_call @Sharding(%arg0) {mhlo.sharding = "{devices=[1,2]<=[2]}"}'
  has hlo_sharding out '%arg0: tensor<16xi64> {mhlo.sharding = "{devices=[2]0,1}"}'
  has hlo_sharding out 'tensor<16x3x16x16xf32> {mhlo.sharding = "{devices=[2,1,1,1]0,1}"}'
  sed 's/sharding={devices=\[2,1\]0,1}/sharding={{replicated}, {replicated}}/' "$SH/sharded.hlo" >"$TMP/badsh.hlo"
  run hlo_sharding_bad 1 "$CJRT" parse "$TMP/badsh.hlo"
  has hlo_sharding_bad err "instruction p0: sharding {{replicated}, {replicated}} does not fit its 1 values"

  # ---- programs for several devices: global inputs in, global outputs out ----
  # two replicas meeting at an all_reduce (the client gets cpu_device_count=2 by itself)
  cat >"$TMP/replicas.mlir" <<'MLIR'
module @rep attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 2 : i32} {
  func.func @main(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<ui32>) {
    %s = "stablehlo.all_reduce"(%x) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %t = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %t : tensor<f32>
    }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<4xf32>) -> tensor<4xf32>
    %r = stablehlo.replica_id : tensor<ui32>
    return %s, %r : tensor<4xf32>, tensor<ui32>
  }
}
MLIR
  run replicas 0 "$CJRT" run "$TMP/replicas.mlir" --plugin "$PLUGIN" --input '[1, 2, 3, 4]:f32'
  has replicas out "[2. 4. 6. 8.]"
  has replicas out "out1: u32[]"
  has replicas err "the program ran 2 replicas; the outputs are replica 0's"
  run replicas_device 2 "$CJRT" run "$TMP/replicas.mlir" --plugin "$PLUGIN" --device 1 --input '[1, 2, 3, 4]:f32'
  has replicas_device err "--device picks one device, but the program runs on 2 replicas x 1 partitions"
  # too few devices for it, when the user says how many
  run replicas_few 1 "$CJRT" run "$TMP/replicas.mlir" --plugin "$PLUGIN" --option cpu_device_count=1 --input '[1, 2, 3, 4]:f32'
  has replicas_few err "needs 2 replicas x 1 partitions = 2 devices, but the client has only 1"
  # --replicas for a program that does not say (replica 0 of 3 adds 0)
  printf 'func.func @main(%%x: tensor<2xf32>) -> tensor<2xf32> {\n  %%r = stablehlo.replica_id : tensor<ui32>\n  %%f = stablehlo.convert %%r : (tensor<ui32>) -> tensor<f32>\n  %%b = stablehlo.broadcast_in_dim %%f, dims = [] : (tensor<f32>) -> tensor<2xf32>\n  %%0 = stablehlo.add %%x, %%b : tensor<2xf32>\n  return %%0 : tensor<2xf32>\n}\n' >"$TMP/rid.mlir"
  run replicas_flag 0 "$CJRT" run "$TMP/rid.mlir" --plugin "$PLUGIN" --replicas 3 --input '[1, 2]:f32'
  has replicas_flag out "[1. 2.]"
  has replicas_flag err "the program ran 3 replicas"
  # HLO text says replica_count= on its first line
  sed '1s/$/, replica_count=2/' "$HLO/fori_loop.hlo" >"$TMP/fori2.hlo"
  run hlo_replicas 0 "$CJRT" run "$TMP/fori2.hlo" --plugin "$PLUGIN" \
    --input "$HLO/fori_loop.in0.npy" --input "$HLO/fori_loop.in1.npy"
  has hlo_replicas err "the program ran 2 replicas"
  checks=$((checks + 1))
  if ! cmp -s "$TMP/hlo_pb.out" "$TMP/hlo_replicas.out"; then
    fails=$((fails + 1))
    echo "FAIL hlo_replicas: its output differs from the single-device run's" >&2
  fi
  run replicas_flag_bad 2 "$CJRT" run "$TMP/rid.mlir" --replicas 0
  has replicas_flag_bad err "--replicas wants a count >= 1, not '0'"

  # an SPMD program over global shapes: a sharded argument and result, a replicated argument
  # and result (the compiler partitions it; cjrt run slices and assembles)
  cat >"$TMP/spmd.mlir" <<'MLIR'
module @jit_f attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=2]>
  func.func @main(%a: tensor<4x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>},
                  %b: tensor<2xf32>)
      -> (tensor<4x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, tensor<2xf32>) {
    %bb = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<2xf32>) -> tensor<4x2xf32>
    %0 = stablehlo.add %a, %bb : tensor<4x2xf32>
    %z = stablehlo.constant dense<0.0> : tensor<f32>
    %r = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [0] : (tensor<4x2xf32>, tensor<f32>) -> tensor<2xf32>
    return %0, %r : tensor<4x2xf32>, tensor<2xf32>
  }
}
MLIR
  run spmd 0 "$CJRT" run "$TMP/spmd.mlir" --plugin "$PLUGIN" --input '[[0, 1], [2, 3], [4, 5], [6, 7]]:f32' \
    --input '[100, 200]:f32' --output-dir "$TMP/spmd_out"
  has spmd out "out0: f32[4,2]"
  has spmd out "[[100. 201.]"
  has spmd out " [106. 207.]]"
  has spmd out "out1: f32[2]"
  has spmd out "[12. 16.]"
  empty spmd err
  checks=$((checks + 1))
  if [ ! -s "$TMP/spmd_out/out0.npy" ] || [ ! -s "$TMP/spmd_out/out1.npy" ]; then
    fails=$((fails + 1))
    echo "FAIL spmd: --output-dir has no out0.npy / out1.npy" >&2
  fi
  # (that it ran partitioned: it wants 2 devices; whole arrays would not fit its local shapes)
  run spmd_few 1 "$CJRT" run "$TMP/spmd.mlir" --plugin "$PLUGIN" --option cpu_device_count=1 \
    --input '[[0, 1], [2, 3], [4, 5], [6, 7]]:f32' --input '[100, 200]:f32'
  has spmd_few err "needs 1 replicas x 2 partitions = 2 devices, but the client has only 1"
  # read from bytecode: a shard_map program on 2 partitions as JAX wrote it (fixtures of
  # tests/bytecode, with the outputs XLA:CPU gave)
  FIX=$EXAMPLES/../tests/bytecode/fixtures
  run shard_map_bc 0 "$CJRT" run "$FIX/shard_map.plugin.mlir.bc" --plugin "$PLUGIN" \
    --input "$FIX/shard_map.in0.npy" --input "$FIX/shard_map.in1.npy"
  has shard_map_bc out "out0: f32[4]"
  has shard_map_bc out "[-1.6489093  -1.6156975  -1.3781422  -0.02306351]"
  has shard_map_bc out "out1: f32[8]"
  has shard_map_bc out "0.57578754  0.62661034]"
  run sharded_bc 0 "$CJRT" run "$FIX/sharded.export.mlir.bc" --plugin "$PLUGIN" \
    --input "$FIX/sharded.in0.npy" --input "$FIX/sharded.in1.npy"
  has sharded_bc out "out0: f32[8,6]"
  has sharded_bc out "[ 2.7002203   1.2206913   1.1782538   0.9743693  -1.2619843  -2.8775423 ]]"
fi

if [ "$fails" -gt 0 ]; then
  echo "test_cli: $fails of $checks checks failed" >&2
  exit 1
fi
echo "test_cli: all $checks checks passed"
