"""JAX's linear algebra on cjrt through JAX's own cpu lowering rules (jaxlib's lapack_*_ffi
custom calls, run by the plugin with LAPACK: src/cpu/k_lapack.c), against XLA:CPU; and the same
platform rules whichever way cjrt is registered (the jax_plugins namespace package, the entry
point, PJRT_NAMES_AND_LIBRARY_PATHS, JAX_PLATFORMS=cjrt).

Outputs that are unique (solutions, factors of a fixed pivoting/sign convention, eigenvalues,
singular values) are compared with XLA:CPU's; eigenvectors, singular vectors and complex Schur
vectors, whose signs / phases depend on the LAPACK build, are checked by reconstruction."""
import inspect
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
from jaxcheck import compare, run_on

HERE = os.path.dirname(os.path.abspath(__file__))
PYDIR = os.path.dirname(os.path.dirname(HERE))  # python/
DTYPES = ["float32", "float64", "complex64", "complex128"]
TOL = {"float32": 2e-4, "complex64": 2e-4, "float64": 1e-10, "complex128": 1e-10}


_data = jaxcheck.normal  # (shape, dtype name, seed)


def _herm_pd(shape, name, seed=0):
    a = _data(shape, name, seed)
    return (a @ np.conj(np.swapaxes(a, -1, -2)) + shape[-1] * np.eye(shape[-1])).astype(name)


def _lowered(f, *args):
    return jax.jit(f).lower(*[jax.device_put(a, jaxcheck.cj()) for a in args]).as_text()


def _h(x):
    return np.conj(np.swapaxes(x, -1, -2))


# ---- the cpu rules are in place for cjrt, and reach the plugin as lapack_*_ffi calls ----

@pytest.mark.parametrize("fn,args,target", [
    ("cholesky", lambda: (_herm_pd((3, 4, 4), "float32"),), "lapack_spotrf_ffi"),
    ("lu", lambda: (_data((2, 4, 4), "float32"),), "lapack_sgetrf_ffi"),
    ("qr", lambda: (_data((4, 3), "float32"),), "lapack_sorgqr_ffi"),
    ("eigh", lambda: (_herm_pd((4, 4), "float32"),), "lapack_ssyevd_ffi"),
    ("svd", lambda: (_data((4, 3), "float32"),), "lapack_sgesdd_ffi"),
    ("triangular_solve", lambda: (_herm_pd((4, 4), "float32"),), "lapack_strsm_ffi"),
    ("eig", lambda: (_data((4, 4), "float32"),), "lapack_sgeev_ffi"),
    ("schur", lambda: (_data((4, 4), "float32"),), "lapack_sgees_ffi"),
    ("hessenberg", lambda: (_data((4, 4), "float32"),), "lapack_sgehrd_ffi"),
])
def test_cpu_rules_emit_lapack_calls(cj, fn, args, target):
    f = {"cholesky": jnp.linalg.cholesky, "lu": jax.lax.linalg.lu, "qr": jnp.linalg.qr,
         "eigh": jnp.linalg.eigh, "svd": jnp.linalg.svd, "eig": jnp.linalg.eig,
         "triangular_solve": lambda a: jsl.solve_triangular(a, a[:, :2], lower=True),
         "schur": jsl.schur, "hessenberg": jsl.hessenberg}[fn]
    assert target in _lowered(f, *args())


# ---- against XLA:CPU: 4 dtypes, batched ----

@pytest.mark.parametrize("name", DTYPES)
def test_solve_inv_det(cj, name):
    with jaxcheck.x64(name.endswith("128") or name == "float64"):
        a = _data((3, 5, 5), name) + 3 * np.eye(5, dtype=name)
        b = _data((3, 5, 2), name, 1)
        t = TOL[name]
        compare(lambda a, b: (jnp.linalg.solve(a, b), jnp.linalg.inv(a), jnp.linalg.det(a)), a, b,
                rtol=t, atol=t)
        compare(lambda a, b: (jsl.solve_triangular(a, b, lower=True),
                              jsl.solve_triangular(a, b, lower=False, trans="C",
                                                   unit_diagonal=True),
                              jax.lax.linalg.triangular_solve(a, jnp.conj(jnp.swapaxes(b, -1, -2)),
                                                              left_side=False,
                                                              lower=True, transpose_a=True)),
                a, b,
                rtol=t, atol=t)


@pytest.mark.parametrize("name", DTYPES)
def test_cholesky_lu_qr(cj, name):
    with jaxcheck.x64(name.endswith("128") or name == "float64"):
        t = TOL[name]
        compare(jnp.linalg.cholesky, _herm_pd((2, 3, 5, 5), name), rtol=t, atol=t)
        compare(lambda a: jax.lax.linalg.lu(a), _data((2, 4, 6), name), rtol=t, atol=t)
        compare(lambda a: jax.lax.linalg.lu(a), _data((3, 6, 4), name), rtol=t, atol=t)
        for shape in [(2, 6, 4), (4, 6), (5, 5)]:
            a = _data(shape, name, 2)
            compare(lambda a: (jnp.linalg.qr(a), jnp.linalg.qr(a, mode="complete")), a,
                    rtol=t, atol=t)


def test_lu_pivots_to_permutation(cj):
    """lu_pivots_to_permutation runs as the plugin's @cjrt_lu_pivots_to_permutation (not JAX's
    while loop), with the generic rule's values: batched, a permutation longer than the
    pivots, and pivots JAX's indexing wraps (negative), clamps (reads) or drops (writes)."""
    p2p = jax.lax.linalg.lu_pivots_to_permutation
    piv = np.random.default_rng(3).integers(0, 7, (2, 3, 5)).astype(np.int32)
    assert "cjrt_lu_pivots_to_permutation" in _lowered(lambda p: p2p(p, 7), piv)
    compare(lambda p: (p2p(p, 7), p2p(p, 5 + 4)), piv)
    odd = np.array([[2, -1, 9, -12, 0], [4, 4, -5, 3, 1]], np.int32)
    compare(lambda p: (p2p(p, 5), p2p(p, 6)), odd)
    compare(lambda p: p2p(p, 3), np.zeros((4, 0), np.int32))
    compare(lambda a: jax.lax.linalg.lu(a), _data((2, 6, 6), "float32", 4), rtol=2e-4, atol=2e-4)


@pytest.mark.parametrize("name", DTYPES)
def test_eigh(cj, name):
    with jaxcheck.x64(name.endswith("128") or name == "float64"):
        a = _herm_pd((3, 6, 6), name)
        t = TOL[name]
        w = compare(lambda a: jnp.linalg.eigvalsh(a), a, rtol=t, atol=t * 10)
        for lower in (True, False):
            w, v = run_on(jaxcheck.cj(), lambda a: jnp.linalg.eigh(a, UPLO="L" if lower else "U"),
                          a)
            w, v = np.asarray(w), np.asarray(v)
            scale = np.abs(a).max()
            np.testing.assert_allclose(a @ v, v * w[..., None, :], atol=t * 10 * scale)
            np.testing.assert_allclose(_h(v) @ v, np.broadcast_to(np.eye(6), v.shape),
                                       atol=t * 10)


@pytest.mark.parametrize("name", DTYPES)
def test_svd(cj, name):
    with jaxcheck.x64(name.endswith("128") or name == "float64"):
        t = TOL[name]
        for shape in [(2, 5, 3), (3, 6), (4, 4)]:
            a = _data(shape, name)
            compare(lambda a: jnp.linalg.svd(a, compute_uv=False), a, rtol=t, atol=t)
            for full in (True, False):
                u, s, vh = run_on(jaxcheck.cj(),
                                  lambda a: jnp.linalg.svd(a, full_matrices=full), a)
                u, s, vh = np.asarray(u), np.asarray(s), np.asarray(vh)
                k = s.shape[-1]
                rec = (u[..., :, :k] * s[..., None, :]) @ vh[..., :k, :]
                np.testing.assert_allclose(rec, a, atol=t * 20)
                uhu = _h(u) @ u
                np.testing.assert_allclose(uhu, np.broadcast_to(np.eye(uhu.shape[-1]), uhu.shape),
                                           atol=t * 10)


@pytest.mark.parametrize("name", DTYPES)
def test_eig(cj, name):
    with jaxcheck.x64(name.endswith("128") or name == "float64"):
        a = _data((2, 5, 5), name)
        t = TOL[name]
        w = np.asarray(run_on(jaxcheck.cj(), jnp.linalg.eigvals, a))
        want = np.asarray(run_on(jaxcheck.cpu(), jnp.linalg.eigvals, a))
        np.testing.assert_allclose(np.sort_complex(w), np.sort_complex(want), atol=t * 20)
        w, vr = run_on(jaxcheck.cj(), jnp.linalg.eig, a)
        w, vr = np.asarray(w), np.asarray(vr)
        np.testing.assert_allclose(a @ vr, vr * w[..., None, :], atol=t * 50)
        np.testing.assert_allclose(np.linalg.norm(vr, axis=-2), np.ones(w.shape), atol=t * 10)


@pytest.mark.parametrize("name", DTYPES)
def test_schur_hessenberg(cj, name):
    with jaxcheck.x64(name.endswith("128") or name == "float64"):
        a = _data((6, 6), name)
        t = TOL[name]
        T, Z = (np.asarray(x) for x in run_on(jaxcheck.cj(), jsl.schur, a))
        np.testing.assert_allclose(Z @ T @ _h(Z), a, atol=t * 20)
        np.testing.assert_allclose(_h(Z) @ Z, np.eye(6), atol=t * 10)
        if name.startswith("complex"):
            np.testing.assert_array_equal(np.tril(T, -1), 0)
            # the diagonal (the eigenvalues, in LAPACK's order) is unique, the vectors' phases
            # are not
            want = np.asarray(run_on(jaxcheck.cpu(), jsl.schur, a)[0])
            np.testing.assert_allclose(np.diag(T), np.diag(want), atol=t * 20)
        else:  # quasi-triangular: 1 x 1 and 2 x 2 blocks on the diagonal
            np.testing.assert_array_equal(np.tril(T, -2), 0)
        compare(lambda a: jsl.hessenberg(a, calc_q=True), a, rtol=t * 10, atol=t * 10)


@pytest.mark.parametrize("name", DTYPES)
def test_tridiagonal_and_pivoted_qr(cj, name):
    with jaxcheck.x64(name.endswith("128") or name == "float64"):
        t = TOL[name]
        compare(lambda a: jax.lax.linalg.tridiagonal(a, lower=True), _herm_pd((2, 5, 5), name),
                rtol=t * 10, atol=t * 10)
        compare(lambda a: jax.lax.linalg.tridiagonal(a, lower=False), _herm_pd((5, 5), name),
                rtol=t * 10, atol=t * 10)
        d = _data((3, 6), name)
        dl = d.copy()
        dl[:, 0] = 0  # not part of the matrix (jaxlib's convention)
        du = d.copy()
        du[:, -1] = 0
        compare(lambda dl, d, du, b: jax.lax.linalg.tridiagonal_solve(dl, d + 4, du, b),
                dl, d, du, _data((3, 6, 2), name, 1), rtol=t, atol=t)
        compare(lambda a: jsl.qr(a, pivoting=True), _data((6, 4), name), rtol=t * 10,
                atol=t * 10)


@pytest.mark.skipif(
    "perturb_singular" not in inspect.signature(jax.lax.linalg.tridiagonal_solve).parameters,
    reason="this jax has no tridiagonal_solve(perturb_singular=...) (added in jax 0.10)")
@pytest.mark.parametrize("name", DTYPES)
def test_tridiagonal_solve_perturbed(cj, name):
    """tridiagonal_solve(..., perturb_singular=True): jaxlib's tridiagonal_solve_perturbed_ffi.
    Well-conditioned systems (both pivoting branches: small and large diagonals), rows with a zero
    subdiagonal, n = 1, and exactly singular systems (a zero pivot, T - lambda I for an
    eigenvalue lambda of T), where only the perturbation keeps the answer finite."""
    with jaxcheck.x64(name.endswith("128") or name == "float64"):
        t = TOL[name]
        solve = lambda dl, d, du, b: jax.lax.linalg.tridiagonal_solve(  # noqa: E731
            dl, d, du, b, perturb_singular=True)
        for n, shift, seed in [(6, 4.0, 0), (7, 0.0, 1), (1, 0.5, 2), (2, 0.0, 3)]:
            d = _data((3, n), name, seed) + shift
            dl = _data((3, n), name, seed + 10)
            du = _data((3, n), name, seed + 20)
            dl[:, 0] = 0
            du[:, -1] = 0
            if n > 3:
                dl[1, 2] = 0  # a row whose subdiagonal is already zero
            b = _data((3, n, 2), name, seed + 30)
            compare(solve, dl, d.astype(name), du, b, rtol=t * 10, atol=t * 10)
        # singular: symmetric tridiagonal T minus one of its eigenvalues; and a zero matrix row
        rng = np.random.default_rng(5)
        n = 8
        off = rng.standard_normal(n - 1)
        diag = rng.standard_normal(n)
        T = np.diag(diag) + np.diag(off, 1) + np.diag(off, -1)
        lam = np.linalg.eigvalsh(T)[3]
        d = (diag - lam).astype(name)
        dl = np.concatenate([[0], off]).astype(name)
        du = np.concatenate([off, [0]]).astype(name)
        b = np.ones((n, 1), name)
        # the size of the answer depends on the rounding of a pivot of order eps (jaxlib's
        # compiler may fuse multiply-adds): compare directions, which are T's eigenvector
        got = np.asarray(run_on(jaxcheck.cj(), solve, dl, d, du, b))[:, 0]
        want = np.asarray(run_on(jaxcheck.cpu(), solve, dl, d, du, b))[:, 0]
        assert np.all(np.isfinite(got)) and np.linalg.norm(got) > 1e3
        got, want = got / np.linalg.norm(got), want / np.linalg.norm(want)
        assert abs(abs(np.vdot(got, want)) - 1) < t * 10, (got, want)
        v = np.linalg.eigh(T)[1][:, 3]
        assert abs(abs(np.vdot(got, v)) - 1) < t * 100, (got, v)
        z = np.zeros(n, name)
        got = compare(solve, z, z, z, b, rtol=0, atol=0)
        assert np.all(np.isfinite(np.asarray(got)))
        # under vmap and grad (the solve is linear in b)
        compare(jax.vmap(solve), dl[None].repeat(2, 0), d[None].repeat(2, 0) + 3,
                du[None].repeat(2, 0), b[None].repeat(2, 0), rtol=t * 10, atol=t * 10)
        if not name.startswith("complex"):
            g = jax.grad(lambda b: solve(dl, d + 3, du, b).sum())
            compare(g, b, rtol=t * 10, atol=t * 10)


def test_jacobi_and_partial_eigh_keep_their_rules(cj):
    """What JAX's cpu rule refuses (a Jacobi eigh, a partial one) keeps the rule cjrt had: the
    TPU-style one on @Eigh (and QDWH)."""
    h = _herm_pd((5, 5), "float32")
    txt = _lowered(lambda a: jax.lax.linalg.eigh(
        a, implementation=jax.lax.linalg.EighImplementation.JACOBI)
        if hasattr(jax.lax.linalg, "EighImplementation") else jax.lax.linalg.eigh(a), h)
    if hasattr(jax.lax.linalg, "EighImplementation"):
        assert "@Eigh" in txt
    w = run_on(jaxcheck.cj(), lambda a: jax.lax.linalg.eigh(a, subset_by_index=(2, 5))[1], h)
    np.testing.assert_allclose(np.asarray(w), np.linalg.eigvalsh(h)[2:], rtol=1e-4, atol=1e-4)


def test_failed_factorization_gives_nan(cj):
    """info != 0 reaches JAX: a matrix that is not positive definite gives NaNs (in the lower
    triangle), as on XLA:CPU; a batch's other matrices are unaffected."""
    a = np.stack([-np.eye(3), np.eye(3) * 4]).astype(np.float32)
    got = compare(jnp.linalg.cholesky, a)
    assert np.isnan(np.asarray(got)[0][np.tril_indices(3)]).all()
    np.testing.assert_allclose(np.asarray(got)[1], 2 * np.eye(3))


# ---- every way of registering cjrt gives the same platform with the same rules ----

_REPORT = """
    import json, jax, jax.numpy as jnp, numpy as np
    from jax._src.interpreters import mlir
    d = jax.devices("cjrt")[0]
    rules = sorted(p.name for p in mlir._platform_specific_lowerings["cjrt"])
    a = jax.device_put(np.array([[2.0, 1.0], [1.0, 3.0]], np.float32), d)
    w = jax.jit(jnp.linalg.eigh)(a)[0]
    c = jax.jit(jnp.linalg.cholesky)(a)
    print(json.dumps({"platform": d.platform, "n": len(jax.devices("cjrt")), "rules": rules,
                      "donation": "cjrt" in mlir._platforms_with_donation,
                      "eigh": [round(float(x), 5) for x in w],
                      "cholesky": [round(float(x), 5) for x in np.asarray(c).ravel()]}))
"""


def _library():
    from jax_plugins import cjrt as plugin_pkg

    return plugin_pkg.library_path()


def _run(env_extra, pythonpath):
    env = dict(os.environ)
    env["PYTHONPATH"] = pythonpath
    env["CJRT_CPU_DEVICE_COUNT"] = "2"
    for k in ("JAX_PLATFORMS", "PJRT_NAMES_AND_LIBRARY_PATHS"):
        env.pop(k, None)
    env.update(env_extra)
    p = subprocess.run([sys.executable, "-c", textwrap.dedent(_REPORT)], env=env,
                       capture_output=True, text=True, timeout=240)
    assert p.returncode == 0, p.stderr
    assert "unknown platform" not in p.stderr, p.stderr
    assert "Jax plugin configuration error" not in p.stderr, p.stderr
    return json.loads(p.stdout.strip().splitlines()[-1])


def _entry_point_dir(tmp_path):
    """A folder holding the package under another module name (so that only the entry point, not
    the jax_plugins namespace scan, finds it) and a distribution declaring that entry point."""
    os.symlink(os.path.join(PYDIR, "jax_plugins", "cjrt"), tmp_path / "cjrt_via_entry_point")
    dist = tmp_path / "cjrt_via_entry_point-0.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: cjrt-via-entry-point\n"
                                   "Version: 0.0\n")
    (dist / "entry_points.txt").write_text("[jax_plugins]\ncjrt = cjrt_via_entry_point\n")
    return str(tmp_path)


def test_every_registration_gives_the_same_rules(tmp_path):
    lib = _library()
    assert lib is not None, "no plugin library"
    lib = os.path.abspath(lib)
    named = {"PJRT_NAMES_AND_LIBRARY_PATHS": f"cjrt:{lib}"}
    ways = {
        "namespace package": _run({"CJRT_JAX_PLUGIN_PATH": lib}, PYDIR),
        "entry point": _run({"CJRT_JAX_PLUGIN_PATH": lib}, _entry_point_dir(tmp_path)),
        "PJRT_NAMES_AND_LIBRARY_PATHS": _run(named, PYDIR),
        "JAX_PLATFORMS=cjrt": _run({"CJRT_JAX_PLUGIN_PATH": lib, "JAX_PLATFORMS": "cjrt"}, PYDIR),
        "PJRT_NAMES_AND_LIBRARY_PATHS, JAX_PLATFORMS=cjrt":
            _run(dict(named, JAX_PLATFORMS="cjrt"), PYDIR),
    }
    first = ways["namespace package"]
    assert first["platform"] == "cjrt" and first["n"] == 2 and first["donation"]
    assert {"eigh", "cholesky", "lu", "svd", "triangular_solve", "eig", "schur"} <= set(
        first["rules"]), first["rules"]
    np.testing.assert_allclose(first["eigh"], np.linalg.eigvalsh([[2.0, 1.0], [1.0, 3.0]]),
                               rtol=1e-5)
    for way, got in ways.items():
        assert got == first, f"{way}: {got} != the namespace package's {first}"
