#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan+UBSan) and runs each for a bounded time, seeded from
# tests/fuzz/seeds/<target>/ and the conformance corpus. Fails on any crash, leak or timeout.
# Usage: scripts/fuzz.sh [seconds per target] (default 60)
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
scripts/build.sh fuzz >/dev/null
mkdir -p build-fuzz/corpus
status=0
for bin in build-fuzz/tests/fuzz/fuzz_*; do
  [ -x "$bin" ] || continue
  name=$(basename "$bin")
  work=build-fuzz/corpus/$name
  mkdir -p "$work"
  seeds=()
  [ -d "tests/fuzz/seeds/$name" ] && seeds+=("tests/fuzz/seeds/$name")
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
