#!/usr/bin/env bash
# The main job: set up, build, compile and run examples/hello.mlir through the plugin, and print
# the result.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --no-python
scripts/build.sh normal >/dev/null
exec build/cjrt run examples/hello.mlir --plugin build/pjrt_c_api_cjrt_plugin.so \
  --input '[[1, 2], [3, 4]]:f32' --input '[[10, 20], [30, 40]]:f32'
