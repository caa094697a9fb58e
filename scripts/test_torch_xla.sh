#!/usr/bin/env bash
# PyTorch/XLA on cjrt: installs torch and torch-xla 2.9 from PyPI into .venv-torch (about 7 GB,
# so this is not part of scripts/test.sh), builds the plugin if needed, and runs
# python/tests_torch_xla (the same training on torch_xla's CPU client and on cjrt, one and two
# devices, programs sent as HloModuleProtos). Usage: bash scripts/test_torch_xla.sh [pytest args]
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv-torch/bin/python ]; then
  "$PY" -m venv .venv-torch
fi
if ! .venv-torch/bin/python -c "import torch_xla, pytest" 2>/dev/null; then
  .venv-torch/bin/pip install -q -r python/requirements-torch-xla.txt
fi
if [ ! -f build/pjrt_c_api_cjrt_plugin.so ]; then
  bash scripts/build.sh normal
fi
CJRT_PLUGIN=${CJRT_PLUGIN:-$PWD/build/pjrt_c_api_cjrt_plugin.so} \
  .venv-torch/bin/python -m pytest -q -p no:cacheprovider python/tests_torch_xla "$@"
