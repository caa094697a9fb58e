"""Programs that JAX exported for the CPU (`jax.export.export(..., platforms=["cpu"])`, which embed
jaxlib's `lapack_*_ffi` custom calls) run through the plugin and agree with XLA:CPU running the
same export, for every linear algebra primitive and dtype.

The artifact is the export's `mlir_module_serialized` (a StableHLO portable artifact: VHLO
bytecode), compiled by the plugin through the framework-side Python client (`cjrt.Client`),
not through JAX's cjrt platform: this is what a serving system holding a saved CPU artifact
does. It runs under the newest and the oldest JAX we support (scripts/test.sh runs this folder
with both), so artifacts from both serializers are covered.

Unique outputs (factors with a fixed pivoting/sign convention, solutions, eigenvalues and
singular values) are compared; eigenvectors, singular vectors and Schur/Hessenberg vectors,
whose signs and phases depend on the LAPACK build, are checked by reconstruction."""
import os

import numpy as np
import pytest

import jax
import jax.numpy as jnp
import jax.scipy.linalg as jsl
import jaxcheck

export = pytest.importorskip("jax.export")

DTYPES = ["float32", "float64", "complex64", "complex128"]
TOL = {"float32": 2e-4, "complex64": 2e-4, "float64": 1e-10, "complex128": 1e-10}


@pytest.fixture(scope="module")
def client():
    import cjrt

    plugin = os.environ.get("CJRT_PLUGIN") or os.environ.get("CJRT_JAX_PLUGIN_PATH")
    try:
        c = cjrt.Client(plugin)
    except ImportError as e:  # pragma: no cover - libcjrt not built
        pytest.skip(f"libcjrt is not built: {e}")
    yield c
    c.close()


_data = jaxcheck.normal  # (shape, dtype name, seed)


def _pd(shape, name, seed=0):
    a = _data(shape, name, seed)
    return (a @ np.conj(np.swapaxes(a, -1, -2)) + shape[-1] * np.eye(shape[-1])).astype(name)


def _h(x):
    return np.conj(np.swapaxes(x, -1, -2))


def _run_both(client, f, *args):
    """Exports f for the CPU; returns (cjrt outputs, XLA:CPU outputs) as flat lists of arrays,
    and asserts the artifact holds the custom calls jaxlib emits for the CPU."""
    specs = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in args]
    exp = export.export(jax.jit(f), platforms=["cpu"])(*specs)
    code = exp.mlir_module_serialized
    assert code[:4] == b"ML\xefR", "not MLIR bytecode"
    exe = client.compile(code)
    got = exe(*args)
    got = [np.asarray(g) for g in (got if isinstance(got, (tuple, list)) else [got])]
    with jax.default_device(jaxcheck.cpu()):
        want = [np.asarray(w) for w in jax.tree.leaves(exp.call(*args))]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, g.dtype, w.shape, w.dtype)
    return got, want


def _close(got, want, t):
    for i, (g, w) in enumerate(zip(got, want)):
        np.testing.assert_allclose(g, w, rtol=t, atol=t, err_msg=f"output {i}")


def _x64(name):
    return jaxcheck.x64(name.endswith("128") or name == "float64")


@pytest.mark.parametrize("name", DTYPES)
def test_unique_outputs(client, name):
    """cholesky, LU (factors, pivots, permutation), QR, solve, inverse, determinants, triangular
    and tridiagonal solves: outputs fixed by their conventions, compared directly."""
    with _x64(name):
        t = TOL[name]
        a, pd, b = _data((2, 5, 5), name), _pd((2, 5, 5), name, 1), _data((2, 5, 3), name, 2)
        for f, args in [
            (jnp.linalg.cholesky, (pd,)),
            (lambda x: jax.lax.linalg.lu(x), (a,)),
            (jsl.lu_factor, (a[0],)),
            (lambda x: jnp.linalg.qr(x), (_data((2, 6, 4), name, 3),)),
            (lambda x: jnp.linalg.qr(x, mode="complete"), (_data((4, 6), name, 4),)),
            (jnp.linalg.solve, (a, b)),
            (jnp.linalg.inv, (a,)),
            (jnp.linalg.det, (a,)),
            (jnp.linalg.slogdet, (a,)),
            (lambda x, y: jsl.solve_triangular(x, y, lower=True), (pd, b)),
            (lambda x, y: jsl.cho_solve(jsl.cho_factor(x), y), (pd[0], b[0])),
            (lambda x: jax.lax.linalg.tridiagonal(x, lower=True), (pd,)),
        ]:
            got, want = _run_both(client, f, *args)
            _close(got, want, t * 10)
        d = _data((2, 6), name, 5) + 4
        dl, du = _data((2, 6), name, 6), _data((2, 6), name, 7)
        dl[:, 0] = 0
        du[:, -1] = 0
        got, want = _run_both(client, lambda *x: jax.lax.linalg.tridiagonal_solve(*x),
                              dl, d.astype(name), du, _data((2, 6, 2), name, 8))
        _close(got, want, t * 10)


@pytest.mark.parametrize("name", DTYPES)
def test_decompositions_by_reconstruction(client, name):
    """eigh, SVD, eig, Schur and Hessenberg: values compared, vectors checked by reconstruction
    (and orthonormality), since their signs and phases are the LAPACK build's choice."""
    with _x64(name):
        t = TOL[name]
        pd = _pd((2, 5, 5), name)
        got, want = _run_both(client, jnp.linalg.eigh, pd)
        np.testing.assert_allclose(got[0], want[0], rtol=t * 10, atol=t * 10)
        w, v = got
        np.testing.assert_allclose(v @ (w[..., None] * _h(v)), pd, rtol=t * 100, atol=t * 100)

        a = _data((2, 6, 4), name, 1)
        got, want = _run_both(client, lambda x: jnp.linalg.svd(x, full_matrices=False), a)
        u, s, vt = got
        np.testing.assert_allclose(s, want[1], rtol=t * 10, atol=t * 10)
        np.testing.assert_allclose((u * s[..., None, :]) @ vt, a, rtol=t * 100, atol=t * 100)
        got, want = _run_both(client, lambda x: jnp.linalg.svd(x, compute_uv=False), a)
        _close(got, want, t * 10)

        g = _data((5, 5), name, 2)
        got, want = _run_both(client, jnp.linalg.eig, g)
        w, v = got
        np.testing.assert_allclose(np.sort_complex(w), np.sort_complex(want[0]), rtol=t * 100,
                                   atol=t * 100)
        np.testing.assert_allclose(g @ v, v * w[None, :], rtol=t * 100, atol=t * 100)

        got, want = _run_both(client, jsl.schur, g)
        tt, z = got
        np.testing.assert_allclose(z @ tt @ _h(z), g, rtol=t * 100, atol=t * 100)
        np.testing.assert_allclose(_h(z) @ z, np.eye(5), rtol=t * 100, atol=t * 100)
        np.testing.assert_allclose(np.tril(tt, -2), 0, atol=t * 10)

        got, want = _run_both(client, lambda x: jsl.hessenberg(x, calc_q=True), g)
        h, q = got
        np.testing.assert_allclose(q @ h @ _h(q), g, rtol=t * 100, atol=t * 100)
        np.testing.assert_allclose(np.tril(h, -2), 0, atol=t * 10)


def test_artifact_carries_lapack_calls():
    """The artifacts above really hold jaxlib's CPU targets (not a platform-neutral form)."""
    exp = export.export(jax.jit(jnp.linalg.cholesky), platforms=["cpu"])(
        jax.ShapeDtypeStruct((4, 4), np.float32))
    assert "lapack_spotrf_ffi" in exp.mlir_module()
