#!/usr/bin/env bash
# The whole test suite, as CI runs it: sets up, builds the normal and the sanitizer
# configurations, runs every CTest test in both, the Python tests, and the fuzz targets for a
# bounded time. Exits non-zero on the first failing stage.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
jobs=$(nproc)
# XLA's own CPU plugin (PyPI's lammps-jax-pjrt-cpu, in .venv): the second plugin the CLI tests
# drive (tests/cli, cli_bench_conform_xla)
CJRT_XLA_PLUGIN=$(.venv/bin/python -c 'import os, lammps_jax_pjrt_cpu as m; print(os.path.join(os.path.dirname(m.__file__), "pjrt_c_api_cpu_plugin.so"))')
export CJRT_XLA_PLUGIN

echo "== build (RelWithDebInfo)"
scripts/build.sh normal
echo "== ctest (RelWithDebInfo)"
ctest --test-dir build --output-on-failure -j "$jobs"

echo "== build (ASan+UBSan)"
scripts/build.sh asan
echo "== ctest (ASan+UBSan)"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build-asan --output-on-failure -j "$jobs" -LE no-asan

if [ -d python/tests ]; then
  echo "== pytest"
  CJRT_PLUGIN="$PWD/build/pjrt_c_api_cjrt_plugin.so" PYTHONPATH="$PWD/python" \
    .venv/bin/python -m pytest -q python/tests
  echo "== pytest: JAX on cjrt with the oldest supported jax ($(.venv-jax-oldest/bin/python -c 'import jax; print(jax.__version__)'))"
  CJRT_PLUGIN="$PWD/build/pjrt_c_api_cjrt_plugin.so" PYTHONPATH="$PWD/python" \
    .venv-jax-oldest/bin/python -m pytest -q python/tests/jax
fi

if [ -x scripts/fuzz.sh ]; then
  echo "== fuzz (bounded)"
  scripts/fuzz.sh "${CJRT_FUZZ_SECONDS:-60}"
fi
echo "== all tests passed"
