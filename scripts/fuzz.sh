#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan+UBSan) and runs each for a bounded time, seeded from
# tests/*/seeds/<target>/ or tests/*/fuzz_seeds/<target>/. Fails on any crash, leak or timeout.
# Usage: scripts/fuzz.sh [seconds per target] (default 60)
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
# build only the fuzz targets (every tests/*/fuzz_<name>.c)
targets=$(ls tests/*/fuzz_*.c | xargs -n1 basename | sed 's/\.c$//' | sort -u)
cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCJRT_SANITIZE=ON -DCJRT_FUZZ=ON \
  -DCMAKE_C_COMPILER=clang >/dev/null
# shellcheck disable=SC2086
cmake --build build-fuzz -j "$(nproc)" --target $targets >/dev/null
mkdir -p build-fuzz/corpus
status=0
for bin in build-fuzz/tests/fuzz/fuzz_*; do
  [ -x "$bin" ] || continue
  name=$(basename "$bin")
  work=build-fuzz/corpus/$name
  mkdir -p "$work"
  seeds=()
  for d in tests/*/seeds/"$name" tests/*/fuzz_seeds/"$name"; do
    [ -d "$d" ] && seeds+=("$d")
  done
  echo "fuzz: $name for ${secs}s"
  if ! "$bin" "$work" "${seeds[@]}" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
       -max_len=65536 -print_final_stats=1 2> "build-fuzz/$name.log"; then
    echo "fuzz: $name FAILED; see build-fuzz/$name.log" >&2
    tail -40 "build-fuzz/$name.log" >&2
    status=1
  else
    grep -E "stat::number_of_executed_units|Done [0-9]+ runs" "build-fuzz/$name.log" | tail -2
  fi
done
exit $status
