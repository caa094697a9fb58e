#!/usr/bin/env bash
# Installs what building and testing cjrt needs, skipping what is already there:
#   Debian packages (apt-get) and a Python virtual environment at .venv with packages from PyPI.
# Debian's python3-numpy (1.24) and python3-torch (1.13) serve the tests of the legacy DLPack
# capsule under /usr/bin/python3; the .venv (numpy 2, JAX) serves the versioned one.
# Usage: scripts/setup.sh [--no-python]
#   --no-python: only what the build needs (the main job: scripts/example.sh)
set -euo pipefail
cd "$(dirname "$0")/.."

# What building the plugin, libcjrt and the cjrt command needs (the main job, --no-python) ...
build_pkgs=(build-essential cmake ninja-build pkg-config liblapack-dev libblas-dev libopenblas-dev
            libopenblas-serial-dev)
# ... and what the test suite adds: clang and its runtime (fuzzing), Python for the Python
# tests, Debian's numpy/pytest/torch (the legacy DLPack capsule tests), and Open MPI (the
# multi-process tests: libcjrt_mpi.so is built when MPI is found, tests/mp runs under mpirun).
test_pkgs=(clang libclang-rt-14-dev python3 python3-venv python3-dev python3-numpy python3-pytest
           python3-torch openmpi-bin libopenmpi-dev)
want=("${build_pkgs[@]}")
if [ "${1:-}" != "--no-python" ]; then want+=("${test_pkgs[@]}"); fi
need_pkgs=()
for p in "${want[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || need_pkgs+=("$p")
done
if ((${#need_pkgs[@]})); then
  echo "setup: installing Debian packages: ${need_pkgs[*]}"
  SUDO=""
  if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need_pkgs[@]}"
fi

# A Python >= 3.12 for .venv: the newest jax we test (README) needs it. Debian 12 ships 3.11;
# use $PYTHON if given, else the first python3.12/python3.13 found (on PATH or under pyenv).
newest_python() {
  if [ -n "${PYTHON:-}" ]; then echo "$PYTHON"; return; fi
  local c
  for c in python3.12 python3.13 "$HOME"/.pyenv/versions/3.12*/bin/python3.12 \
           "$HOME"/.pyenv/versions/3.13*/bin/python3.13; do
    if command -v "$c" >/dev/null 2>&1 && "$c" -c 'import sys, venv; assert sys.version_info >= (3, 12)' 2>/dev/null; then
      command -v "$c"
      return
    fi
  done
}

if [ "${1:-}" != "--no-python" ]; then
  PY=$(newest_python)
  if [ -z "$PY" ]; then
    echo "setup: no Python >= 3.12 found (set PYTHON=/path/to/python3.12): the newest jax we" \
         "test needs it" >&2
    exit 1
  fi
  # a .venv made by an older Python (or for an older jax) is made anew
  if [ -x .venv/bin/python ] && ! .venv/bin/python -c 'import sys; assert sys.version_info >= (3, 12)' 2>/dev/null; then
    echo "setup: .venv has a Python older than 3.12; making it anew with $PY"
    rm -rf .venv
  fi
  if [ ! -x .venv/bin/python ] || [ ! -x .venv/bin/pip ]; then  # none, or left half-made
    echo "setup: creating .venv with $PY"
    "$PY" -m venv .venv
  fi
  # The pins are the versions we test against (README says which); pip skips what is present.
  want=$(sed -n 's/^jax==//p' python/requirements-dev.txt)
  if ! .venv/bin/python -c "import numpy, pytest, ml_dtypes, jax; assert jax.__version__ == '$want'" 2>/dev/null; then
    echo "setup: installing Python packages into .venv"
    .venv/bin/pip install -q --disable-pip-version-check -r python/requirements-dev.txt
  fi
  # the model libraries of the benchmark suite (bench/zoo), whose workloads the tests run once
  if ! .venv/bin/python -c "import flax, optax, equinox" 2>/dev/null; then
    echo "setup: installing the benchmark suite's model libraries into .venv"
    .venv/bin/pip install -q --disable-pip-version-check -r bench/requirements-bench.txt
  fi
  # XLA's own CPU plugin as a .so (PyPI's lammps-jax-pjrt-cpu): a second PJRT plugin for the CLI
  # tests. Only its .so is used, so its pin on an older jax is not installed (--no-deps).
  if ! .venv/bin/python -c "import lammps_jax_pjrt_cpu" 2>/dev/null; then
    echo "setup: installing XLA's CPU plugin (lammps-jax-pjrt-cpu) into .venv"
    .venv/bin/pip install -q --disable-pip-version-check --no-deps lammps-jax-pjrt-cpu==0.11.2
  fi
  # the oldest jax README claims: a second environment, for scripts/test.sh (Debian's python3)
  OLD_PY=${PYTHON_OLDEST:-python3}
  if [ ! -x .venv-jax-oldest/bin/python ] || [ ! -x .venv-jax-oldest/bin/pip ]; then
    echo "setup: creating .venv-jax-oldest"
    "$OLD_PY" -m venv .venv-jax-oldest
  fi
  if ! .venv-jax-oldest/bin/python -c "import numpy, pytest, ml_dtypes, jax" 2>/dev/null; then
    echo "setup: installing the oldest supported jax into .venv-jax-oldest"
    .venv-jax-oldest/bin/pip install -q --disable-pip-version-check -r python/requirements-jax-oldest.txt
  fi
fi
