#!/usr/bin/env bash
# TensorFlow on cjrt: installs tensorflow-cpu 2.21 from PyPI into .venv-tf (or uses the
# environment $CJRT_TF_VENV names), builds the plugin if needed, and runs python/tests_tensorflow
# (cjrt as a next pluggable device: a Keras model's jit-compiled train step on /device:CJRT:0
# against TensorFlow's CPU). Not part of scripts/test.sh (a large download).
# Usage: [CJRT_TF_VENV=/path/to/venv] bash scripts/test_tensorflow.sh [pytest args]
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
VENV=${CJRT_TF_VENV:-.venv-tf}
if [ ! -x "$VENV/bin/python" ]; then
  "$PY" -m venv "$VENV"
fi
if ! "$VENV/bin/python" -c "import tensorflow, pytest" 2>/dev/null; then
  "$VENV/bin/pip" install -q -r python/requirements-tensorflow.txt
fi
if [ ! -f build/pjrt_c_api_cjrt_plugin.so ]; then
  bash scripts/build.sh normal
fi
CJRT_PLUGIN=${CJRT_PLUGIN:-$PWD/build/pjrt_c_api_cjrt_plugin.so} \
  "$VENV/bin/python" -m pytest -q -p no:cacheprovider python/tests_tensorflow "$@"
