#!/usr/bin/env bash
# `cjrt bench` and `cjrt conform` end to end through libcjrt and a plugin. Nothing is timed:
# only that they run, print the lines they promise, agree where they should and report what
# differs or fails.
# Usage: test_bench_conform.sh CJRT PLUGIN.so PERTURB.so EXAMPLES_DIR CONFORM_DIR [PEER.so]
#   PERTURB.so wraps PLUGIN.so and corrupts what it copies to the host (perturb_plugin.c).
#   With PEER (another PJRT plugin, e.g. XLA's CPU plugin) only the checks against it run: bench
#   --peer against it, bench and conform on it alone (conform's check ops are cjrt's: failures
#   are expected there, a crash is not). PEER "env:VAR" names the plugin in $VAR; when that is
#   not an existing file the test is skipped (exit 77, saying so).
set -u
CJRT=$1 PLUGIN=$2 PERTURB=$3 EXAMPLES=$4 CONFORM=$5 PEER=${6:-}
TMP=$(mktemp -d /tmp/cjrt_bench_XXXXXX)
if [ "${PEER#env:}" != "$PEER" ]; then
  var=${PEER#env:}
  PEER=${!var:-}
  if [ ! -f "$PEER" ]; then
    echo "test_bench_conform: SKIP: \$$var does not name a PJRT plugin file ('$PEER')"
    exit 77
  fi
fi
trap 'rm -rf "$TMP"' EXIT
fails=0 checks=0

run() {
  local name=$1 want=$2
  shift 2
  "$@" >"$TMP/$name.out" 2>"$TMP/$name.err"
  local rc=$?
  checks=$((checks + 1))
  if [ "$rc" != "$want" ]; then
    fails=$((fails + 1))
    echo "FAIL $name: exit $rc, want $want: $*" >&2
    sed 's/^/  stdout: /' "$TMP/$name.out" | head -30 >&2
    sed 's/^/  stderr: /' "$TMP/$name.err" | head -30 >&2
  fi
}
has() {
  checks=$((checks + 1))
  if ! grep -qE -- "$3" "$TMP/$1.$2"; then
    fails=$((fails + 1))
    echo "FAIL $1: std$2 lacks /$3/" >&2
    sed 's/^/  '"$2"': /' "$TMP/$1.$2" | head -30 >&2
  fi
}
lacks() {
  checks=$((checks + 1))
  if grep -qE -- "$3" "$TMP/$1.$2"; then
    fails=$((fails + 1))
    echo "FAIL $1: std$2 has /$3/" >&2
  fi
}

# a training-step-like program that donates its first argument (fed back from output 0)
cat >"$TMP/donate.mlir" <<'MLIR'
func.func @main(%w: tensor<4x3xf32> {tf.aliasing_output = 0 : i32}, %x: tensor<4x3xf32>, %n: tensor<3xi32>)
    -> (tensor<4x3xf32>, tensor<f32>, tensor<3xi32>) {
  %c = stablehlo.constant dense<0.5> : tensor<4x3xf32>
  %g = stablehlo.multiply %x, %c : tensor<4x3xf32>
  %w2 = stablehlo.subtract %w, %g : tensor<4x3xf32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %s = stablehlo.reduce(%w2 init: %z) applies stablehlo.add across dimensions = [0, 1] : (tensor<4x3xf32>, tensor<f32>) -> tensor<f32>
  %m = stablehlo.multiply %n, %n : tensor<3xi32>
  return %w2, %s, %m : tensor<4x3xf32>, tensor<f32>, tensor<3xi32>
}
MLIR
printf 'func.func @main( {\n' >"$TMP/broken.mlir"
NUM='[0-9]+\.[0-9]+'

if [ -z "$PEER" ]; then
# ---- bench: usage ----
run bench_help 0 "$CJRT" bench --help
has bench_help out "usage: cjrt bench \[--plugin P\] \[--peer Q\]"
has bench_help out "--min-time S"
run bench_noprog 2 "$CJRT" bench --plugin "$PLUGIN"
has bench_noprog err "no program given"
run bench_core_peer 2 "$CJRT" bench --core --peer "$PLUGIN" "$EXAMPLES/hello.mlir"
has bench_core_peer err "--core runs without a plugin"
run bench_badplugin 2 "$CJRT" bench --plugin /nonexistent/libnothing.so "$EXAMPLES/hello.mlir"
has bench_badplugin err "does not exist"

# ---- bench: one plugin ----
run bench 0 "$CJRT" bench --plugin "$PLUGIN" --min-time 0.01 "$EXAMPLES/hello.mlir" "$TMP/donate.mlir"
has bench out "^plugin: .*pjrt_c_api_cjrt_plugin.so"
has bench out "^program +compile ms +min ms +median ms +runs"
has bench out "^hello.mlir +$NUM +$NUM +$NUM +[0-9]+$"
has bench out "^donate.mlir +$NUM +$NUM +$NUM +[0-9]+$"
run bench_json 0 "$CJRT" bench --plugin "$PLUGIN" --min-time 0.01 --json "$EXAMPLES/hello.mlir"
has bench_json out '^\{"program": "hello.mlir", "mode": "plugin", .*"median_ms": [0-9.]+, "runs": [0-9]+, "error": null\}$'
run bench_broken 1 "$CJRT" bench --plugin "$PLUGIN" --min-time 0.01 "$TMP/broken.mlir" "$EXAMPLES/hello.mlir"
has bench_broken out "^broken.mlir +failed: "
has bench_broken out "^hello.mlir +$NUM"
run bench_core 0 "$CJRT" bench --core --threads 1 --min-time 0.01 "$EXAMPLES/hello.mlir"
has bench_core out "^in-process CPU backend, 1 threads"
has bench_core out "^hello.mlir +$NUM +$NUM +$NUM +[0-9]+$"

# ---- bench: side by side (the plugin against itself, then against a corrupted copy) ----
run bench_peer 0 "$CJRT" bench --plugin "$PLUGIN" --peer "$PLUGIN" --min-time 0.01 \
  "$EXAMPLES/hello.mlir" "$TMP/donate.mlir"
has bench_peer out "^A: .*pjrt_c_api_cjrt_plugin.so"
has bench_peer out "^B: .*pjrt_c_api_cjrt_plugin.so"
has bench_peer out "^program +compile A +compile B +A/B +median A +median B +A/B +runs A/B +outputs"
has bench_peer out "^hello.mlir +$NUM +$NUM +[0-9.e+-]+x +$NUM +$NUM +[0-9.e+-]+x +[0-9]+/[0-9]+ +agree$"
has bench_peer out "^donate.mlir .* agree$"
has bench_peer out "^execute A/B: geometric mean [0-9.e+-]+x over 2 programs, worst [0-9.e+-]+x \((hello|donate).mlir\); compile A/B: geometric mean"
run bench_peer_json 0 "$CJRT" bench --plugin "$PLUGIN" --peer "$PLUGIN" --min-time 0.01 --json "$EXAMPLES/hello.mlir"
has bench_peer_json out '"peer_median_ms": [0-9.]+, "peer_runs": [0-9]+, "ratio": [0-9.]+, "compile_ratio": [0-9.]+, "outputs_agree": true, "error": null'
run bench_differ 1 env CJRT_PERTURB_PLUGIN="$PLUGIN" "$CJRT" bench --plugin "$PLUGIN" --peer "$PERTURB" \
  --min-time 0.01 "$EXAMPLES/hello.mlir"
has bench_differ out "^hello.mlir .* DIFFER$"
has bench_differ out "^  MISMATCH hello.mlir: output 0 \(f32\) element \[1,1\]: A [0-9.e+-]+ vs B [0-9.e+-]+ \(\|A-B\| .*; 1 of 4 values differ"

# ---- conform ----
run conform_help 0 "$CJRT" conform --help
has conform_help out "usage: cjrt conform"
run conform_pass 0 "$CJRT" conform --plugin "$PLUGIN" "$CONFORM/pass"
has conform_pass out "^conform: 3 passed, 0 failed, 0 skipped$"
has conform_pass out "through the plugin's C API"
run conform_all 1 "$CJRT" conform --plugin "$PLUGIN" "$CONFORM"
has conform_all out "^FAIL .*fail/wrong.mlir: execute: "
has conform_all out "^conform: 3 passed, 1 failed, 0 skipped$"
run conform_core 1 "$CJRT" conform --core "$CONFORM"
has conform_core out "^conform: 3 passed, 1 failed, 0 skipped$"
run conform_badplugin 2 "$CJRT" conform --plugin /nonexistent/libnothing.so "$CONFORM"
has conform_badplugin err "does not exist"

else
# ---- another plugin ----
  run peer_bench 0 "$CJRT" bench --plugin "$PEER" --min-time 0.01 "$EXAMPLES/hello.mlir" "$TMP/donate.mlir"
  has peer_bench out "^hello.mlir +$NUM +$NUM +$NUM +[0-9]+$"
  has peer_bench out "^donate.mlir +$NUM +$NUM +$NUM +[0-9]+$"
  run peer_side 0 "$CJRT" bench --plugin "$PLUGIN" --peer "$PEER" --min-time 0.01 \
    "$EXAMPLES/hello.mlir" "$TMP/donate.mlir"
  has peer_side out "^hello.mlir .* agree$"
  has peer_side out "^donate.mlir .* agree$"
  has peer_side out "^execute A/B: geometric mean [0-9.e+-]+x over 2 programs"
  # conform: the --args case passes; the cases using cjrt's check ops fail (XLA does not know
  # them), each reported, none crashing the plugin
  run peer_conform 1 "$CJRT" conform --plugin "$PEER" "$CONFORM/pass"
  has peer_conform out "^conform: 1 passed, 2 failed, 0 skipped$"
fi

if [ "$fails" -gt 0 ]; then
  echo "test_bench_conform: $fails of $checks checks failed" >&2
  exit 1
fi
echo "test_bench_conform: all $checks checks passed${PEER:+ (with the peer $PEER)}"
