"""Linear algebra (jnp.linalg / jax.scipy.linalg), one matrix and a batch each. Where the
factors are not unique (QR, eigh, SVD: column signs, vectors of close eigenvalues) the check
compares unique quantities computed on the host in float64: reconstructions, |factors|,
eigenvalues, singular values. Tolerances are 10-20x the f32 default: two correct
factorizations of the same matrix differ by about cond(A) x eps (the inputs are kept
well-conditioned so that this stays small)."""
import numpy as np

from . import normal, workload


def _spd(n, seed, batch=()):
    m = normal(batch + (n, n), seed=seed)
    return (m @ np.swapaxes(m, -1, -2) / n + np.eye(n)).astype(np.float32)


def _wellcond(n, seed, batch=()):
    return (normal(batch + (n, n), seed=seed, scale=n ** -0.5) + 2 * np.eye(n)).astype(np.float32)


def _sym(n, seed, batch=()):
    m = normal(batch + (n, n), seed=seed)
    return ((m + np.swapaxes(m, -1, -2)) / 2).astype(np.float32)


def _f64(x):
    return np.asarray(x, np.float64)


@workload("linalg_solve",
          "jnp.linalg.solve: one f32[128,128] system with 16 right-hand sides, and a batch of "
          "64 f32[16,16] systems (LU with partial pivoting + triangular solves)", tol_scale=10)
def linalg_solve():
    import jax.numpy as jnp

    def f(a, b, ab, bb):
        return jnp.linalg.solve(a, b), jnp.linalg.solve(ab, bb)
    return f, (_wellcond(128, 1), normal((128, 16), seed=2), _wellcond(16, 3, (64,)),
               normal((64, 16, 1), seed=4))


@workload("linalg_cholesky",
          "jnp.linalg.cholesky of one SPD f32[256,256] and a batch of 64 SPD f32[16,16], then "
          "cho_solve with the big factor", tol_scale=10)
def linalg_cholesky():
    import jax.numpy as jnp
    from jax.scipy.linalg import cho_solve

    def f(a, ab, b):
        c = jnp.linalg.cholesky(a)
        return c, jnp.linalg.cholesky(ab), cho_solve((c, True), b)
    return f, (_spd(256, 5), _spd(16, 6, (64,)), normal((256, 4), seed=7))


def _qr_canon(out, args):
    return [(np.abs(_f64(q)), np.abs(_f64(r)), _f64(q) @ _f64(r)) for q, r in out]


@workload("linalg_qr",
          "jnp.linalg.qr (reduced) of f32[256,128] and a batch of 32 f32[32,16] (Householder); "
          "checked as |Q|, |R| and Q@R", canon=_qr_canon, tol_scale=10)
def linalg_qr():
    import jax.numpy as jnp

    def f(a, ab):
        return jnp.linalg.qr(a), jnp.linalg.qr(ab)
    return f, (normal((256, 128), seed=8), normal((32, 32, 16), seed=9))


def _eigh_canon(out, args):
    res = []
    for w, v in out:
        w, v = _f64(w), _f64(v)
        res.append((w, (v * w[..., None, :]) @ np.swapaxes(v, -1, -2)))
    return res


@workload("linalg_eigh",
          "jnp.linalg.eigh of a symmetric f32[128,128] and a batch of 32 symmetric f32[16,16]; "
          "checked as eigenvalues and V diag(w) V^T", canon=_eigh_canon, tol_scale=20)
def linalg_eigh():
    import jax.numpy as jnp

    def f(a, ab):
        return jnp.linalg.eigh(a), jnp.linalg.eigh(ab)
    return f, (_sym(128, 10), _sym(16, 11, (32,)))


def _svd_canon(out, args):
    res = []
    for u, s, vh in out:
        u, s, vh = _f64(u), _f64(s), _f64(vh)
        res.append((s, (u * s[..., None, :]) @ vh))
    return res


@workload("linalg_svd",
          "jnp.linalg.svd (full_matrices=False) of f32[128,64] and a batch of 32 f32[16,16]; "
          "checked as singular values and U S V^T", canon=_svd_canon, tol_scale=20)
def linalg_svd():
    import jax.numpy as jnp

    def f(a, ab):
        return (jnp.linalg.svd(a, full_matrices=False),
                jnp.linalg.svd(ab, full_matrices=False))
    return f, (normal((128, 64), seed=12), normal((32, 16, 16), seed=13))


@workload("linalg_inv_slogdet_trsm",
          "jnp.linalg.inv and jnp.linalg.slogdet of f32[128,128] and of a batch of 64 f32[8,8], "
          "jax.scipy.linalg.solve_triangular (lower, 128x128, 32 right-hand sides)",
          tol_scale=10)
def linalg_inv_slogdet_trsm():
    import jax.numpy as jnp
    from jax.scipy.linalg import solve_triangular

    def f(a, ab, b):
        return {"inv": jnp.linalg.inv(a), "inv_batch": jnp.linalg.inv(ab),
                "slogdet": jnp.linalg.slogdet(a), "slogdet_batch": jnp.linalg.slogdet(ab),
                "trsm": solve_triangular(jnp.tril(a), b, lower=True)}
    return f, (_wellcond(128, 14), _wellcond(8, 15, (64,)), normal((128, 32), seed=16))
