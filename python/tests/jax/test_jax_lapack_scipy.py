"""SciPy's LAPACK in the plugin (python/jax_plugins/cjrt/lapack.py, src/cpu/k_lapack.h's
cjrt_lapack_*): where SciPy is installed the package installs the routines of its cython_lapack /
cython_blas, the ones XLA:CPU's jaxlib calls, so that the lapack_*_ffi custom calls give XLA:CPU's
results bit for bit (Schur forms, eigenvector signs and phases included); without SciPy, or with
CJRT_LAPACK=builtin, the plugin keeps the LAPACK it links."""
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import jax
import jax.numpy as jnp
import jax.scipy.linalg as jsl
import jaxcheck
from jaxcheck import run_on

pytest.importorskip("scipy.linalg.cython_lapack")

HERE = os.path.dirname(os.path.abspath(__file__))
PYDIR = os.path.dirname(os.path.dirname(HERE))  # python/
DTYPES = ["float32", "float64", "complex64", "complex128"]


def _library():
    from jax_plugins import cjrt as plugin_pkg

    return plugin_pkg.library_path()


def _names(lib):
    import ctypes

    fn = ctypes.CDLL(lib).cjrt_lapack_routine_name
    fn.restype, fn.argtypes = ctypes.c_char_p, [ctypes.c_int]
    out, i = [], 0
    while (name := fn(i)) is not None:
        out.append(name.decode())
        i += 1
    return out


def test_scipy_routines_installed(cj):
    from jax_plugins.cjrt import lapack

    lib = _library()
    names = _names(lib)
    assert len(names) == 56 and "dgees" in names and "zheevd" in names and "strsm" in names
    kept = [n for n in names if n[1:] in lapack._KEEP_BUILTIN]
    assert kept == []  # (potrf too: the kernel picks its own for large matrices)
    installed = sorted(lapack.install(lib))  # (idempotent: what was installed)
    assert installed == sorted(set(names) - set(kept))
    for name in installed:
        assert lapack.routine(lib, name) == lapack.scipy_routine(name), name
    for name in kept:
        assert lapack.routine(lib, name) != lapack.scipy_routine(name), name


_data = jaxcheck.normal  # (shape, dtype name, seed)


def _same_bits(f, *args):
    want = jax.tree.leaves(run_on(jaxcheck.cpu(), f, *args))
    got = jax.tree.leaves(run_on(jaxcheck.cj(), f, *args))
    assert len(want) == len(got)
    for w, g in zip(want, got):
        w, g = np.asarray(w), np.asarray(g)
        assert w.dtype == g.dtype and w.shape == g.shape
        np.testing.assert_array_equal(g, w)


def _as_accurate(f, *args):
    """Triangular solves: cjrt solves a column-major call on the other side (the same BLAS trsm
    on the transposed problem, 1.5x faster than jaxlib's copies; k_lapack.c, lk_plan_trsm), so
    its rounding order differs from XLA:CPU's and an ill-conditioned solve differs by more than
    a few ulp. Each result must be as accurate as XLA:CPU's: its distance from the float64
    answer at most twice XLA's plus a few ulp of the answer's size (for 64-bit types, where that
    answer is XLA's own, a few dozen: random triangular systems are ill-conditioned)."""
    want = jax.tree.leaves(run_on(jaxcheck.cpu(), f, *args))
    got = jax.tree.leaves(run_on(jaxcheck.cj(), f, *args))
    cplx = any(np.iscomplexobj(a) for a in args)
    wide = [np.asarray(a).astype(np.complex128 if cplx else np.float64) for a in args]
    with jaxcheck.x64(True):
        ref = [np.asarray(r) for r in jax.tree.leaves(run_on(jaxcheck.cpu(), f, *wide))]
    assert len(want) == len(got) == len(ref)
    for i, (w, g, r) in enumerate(zip(want, got, ref)):
        w, g = np.asarray(w), np.asarray(g)
        assert w.dtype == g.dtype and w.shape == g.shape
        eps = np.finfo(w.dtype).eps
        ulps = 64 if w.dtype.itemsize * (1 + (w.dtype.kind != "c")) >= 16 else 4
        err_g, err_w = np.abs(g - r).max(), np.abs(w - r).max()
        assert err_g <= 2 * err_w + ulps * eps * np.abs(r).max(), (
            f"output {i}: cjrt is {err_g:.3g} from the float64 answer, XLA:CPU {err_w:.3g}")


@pytest.mark.parametrize("name", ["float32", "complex128"])
def test_batches_of_small_matrices_keep_xla_cpus_bits(cj, name):
    """Batches of small matrices, each element with SciPy's routine (k_lapack.c,
    lk_plan_threads): the same bits as XLA:CPU's."""
    with jaxcheck.x64(name == "complex128"):
        a = _data((64, 16, 16), name, 4)
        pd = a @ np.conj(np.swapaxes(a, -1, -2)) + 16 * np.eye(16, dtype=name)
        _same_bits(jnp.linalg.cholesky, pd)
        _same_bits(jax.lax.linalg.lu, a)
        _same_bits(lambda x: jnp.linalg.qr(x), _data((64, 32, 16), name, 5))
        _same_bits(jnp.linalg.eigh, pd)
        _same_bits(lambda x: jnp.linalg.svd(x, full_matrices=False), a)


def test_large_cholesky_runs_the_plugins_potrf(cj):
    """Above order 64 potrf is the plugin's own (faster than SciPy's there, and no threads of
    its own): as accurate as XLA:CPU's, not its bits."""
    a = _data((2, 100, 100), "float32", 6)
    pd = a @ np.swapaxes(a, -1, -2) + 100 * np.eye(100, dtype="float32")
    _as_accurate(jnp.linalg.cholesky, pd)


@pytest.mark.parametrize("name,n", [("float32", 256), ("float64", 301), ("complex64", 210),
                                    ("complex128", 200)])
def test_large_cholesky_on_the_pool(cj, name, n):
    """From order 200 one factorization runs split over the client's pool (k_lapack.c,
    lk_pp_potrf): as accurate as XLA:CPU's; a batch element that is not positive definite
    (its failing pivot past the first block) gives NaNs, the other one its factor."""
    with jaxcheck.x64(name in ("float64", "complex128")):
        a = _data((2, n, n), name, 7)
        pd = a @ np.conj(np.swapaxes(a, -1, -2)) / n + np.eye(n, dtype=name)
        _as_accurate(jnp.linalg.cholesky, pd)
        pd[1, n - 9, n - 9] = -n
        got = np.asarray(run_on(jaxcheck.cj(), jnp.linalg.cholesky, pd))
        assert np.isnan(got[1][np.tril_indices(n)]).all()
        want = np.linalg.cholesky(pd[0].astype(np.complex128 if "complex" in name else np.float64))
        np.testing.assert_allclose(got[0], want, rtol=0, atol=50 * n * np.finfo(name).eps)


@pytest.mark.parametrize("name", DTYPES)
def test_decompositions_are_xla_cpus_bit_for_bit(cj, name):
    with jaxcheck.x64(name.endswith("128") or name == "float64"):
        a = _data((3, 24, 24), name)
        pd = a @ np.conj(np.swapaxes(a, -1, -2)) + 24 * np.eye(24, dtype=name)
        b = _data((3, 24, 5), name, 1)
        _same_bits(jnp.linalg.cholesky, pd)  # SciPy's potrf below order 65
        _same_bits(jax.lax.linalg.lu, a)
        _same_bits(lambda x: jnp.linalg.qr(x), _data((2, 30, 17), name, 2))
        _same_bits(jnp.linalg.eigh, pd)  # eigenvectors: the same signs / phases
        _same_bits(jnp.linalg.eigvalsh, pd)
        _same_bits(lambda x: jnp.linalg.svd(x, full_matrices=False), _data((2, 20, 13), name, 3))
        _same_bits(jsl.schur, a[0])  # the same (quasi-)triangular form and Schur vectors
        _same_bits(jnp.linalg.eig, a[0])
        _same_bits(lambda x: jsl.hessenberg(x, calc_q=True), a[0])
        _as_accurate(jnp.linalg.solve, a, b)
        # triangular solves from either side, transposed, on copies or not
        _as_accurate(lambda x, y: (jsl.solve_triangular(x, y, lower=True),
                                 jsl.solve_triangular(x, y, lower=False, trans="C"),
                                 jax.lax.linalg.triangular_solve(
                                     x, jnp.swapaxes(y, -1, -2), left_side=False,
                                     transpose_a=True, conjugate_a=True, unit_diagonal=True)),
                   a, b)


_REPORT = """
import json, os, sys
if os.environ.get("HIDE_SCIPY"):  # while the package initializes
    sys.modules["scipy.linalg.cython_lapack"] = sys.modules["scipy.linalg.cython_blas"] = None
import jax, jax.numpy as jnp, numpy as np
import jax_plugins.cjrt as pkg
from jax_plugins.cjrt import lapack
jax.devices("cjrt")
for m in ("scipy.linalg.cython_lapack", "scipy.linalg.cython_blas"):  # (for jaxlib)
    if sys.modules.get(m, 0) is None:
        del sys.modules[m]
import scipy.linalg.cython_lapack as cl
lib = pkg.library_path()
a = np.random.default_rng(0).standard_normal((6, 6))
t = jax.jit(jax.scipy.linalg.schur)(jax.device_put(a, jax.devices("cjrt")[0]))[0]
print(json.dumps({"scipy": lapack.routine(lib, "dgees") ==
                           lapack._capsule_pointer(cl.__pyx_capi__["dgees"]),
                  "works": bool(np.all(np.isfinite(np.asarray(t))))}))
"""


@pytest.mark.parametrize("how", ["CJRT_LAPACK=builtin", "no scipy"])
def test_without_scipy_the_plugin_keeps_its_lapack(how):
    """(JAX's cpu rules, which cjrt reuses, need SciPy themselves: "no scipy" hides it from the
    package only; C clients never have it.)"""
    lib = _library()
    env = dict(os.environ, PYTHONPATH=PYDIR, CJRT_JAX_PLUGIN_PATH=os.path.abspath(lib))
    for k in ("JAX_PLATFORMS", "PJRT_NAMES_AND_LIBRARY_PATHS", "CJRT_LAPACK"):
        env.pop(k, None)
    env.update({"HIDE_SCIPY": "1"} if how == "no scipy" else {"CJRT_LAPACK": "builtin"})
    code = textwrap.dedent(_REPORT)
    p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       timeout=240)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout.strip().splitlines()[-1]) == {"scipy": False, "works": True}
