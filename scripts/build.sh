#!/usr/bin/env bash
# Configures and builds cjrt. Usage: scripts/build.sh [normal|asan|fuzz] (default normal).
#   normal -> build/       RelWithDebInfo
#   asan   -> build-asan/  Debug, AddressSanitizer + UndefinedBehaviorSanitizer
#   fuzz   -> build-fuzz/  clang, libFuzzer targets (+ ASan/UBSan)
set -euo pipefail
cd "$(dirname "$0")/.."
kind=${1:-normal}
jobs=$(nproc)
case "$kind" in
  normal) dir=build; args=(-DCMAKE_BUILD_TYPE=RelWithDebInfo) ;;
  asan) dir=build-asan; args=(-DCMAKE_BUILD_TYPE=Debug -DCJRT_SANITIZE=ON) ;;
  fuzz) dir=build-fuzz; args=(-DCMAKE_BUILD_TYPE=Debug -DCJRT_SANITIZE=ON -DCJRT_FUZZ=ON
                            -DCMAKE_C_COMPILER=clang) ;;
  *) echo "usage: $0 [normal|asan|fuzz]" >&2; exit 2 ;;
esac
cmake -S . -B "$dir" -G Ninja "${args[@]}" >/dev/null
cmake --build "$dir" -j "$jobs"
