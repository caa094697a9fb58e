"""Loops of small operations in plain jax (lax.fori_loop, lax.while_loop, lax.scan): the
per-iteration overhead of an engine shows here, not its kernels."""
import numpy as np

from . import normal, uniform, workload


@workload("rk4_pendulum_fori",
          "RK4 integration of 64 damped pendula (theta, omega), dt 1e-3, 4000 steps in "
          "lax.fori_loop; each step ~40 elementwise ops on [64] vectors (sin, mul, add)",
          tol_scale=10)
def rk4_pendulum_fori():
    # tol_scale: 4000 dependent steps; damping keeps the error from growing, but sin's ulps add
    import jax
    import jax.numpy as jnp

    def f(s):
        th, om = s
        return om, -9.81 * jnp.sin(th) - 0.3 * om

    def integrate(th0, om0):
        dt = 1e-3

        def step(_, s):
            add = lambda a, b, h: tuple(x + h * y for x, y in zip(a, b))
            k1 = f(s)
            k2 = f(add(s, k1, dt / 2))
            k3 = f(add(s, k2, dt / 2))
            k4 = f(add(s, k3, dt))
            return tuple(x + dt / 6 * (a + 2 * b + 2 * c + d)
                         for x, a, b, c, d in zip(s, k1, k2, k3, k4))
        return jax.lax.fori_loop(0, 4000, step, (th0, om0))
    return integrate, (uniform((64,), seed=1, low=-2, high=2), uniform((64,), seed=2))


@workload("cloth_physics_fori",
          "mass-spring cloth 24x24 particles (structural springs, gravity, damping, pinned top "
          "row), semi-implicit Euler, 500 steps in lax.fori_loop: shifted slices, norms, where",
          tol_scale=20)
def cloth_physics_fori():
    # tol_scale: 500 dependent steps of sqrt/div on positions; damping bounds the drift
    import jax
    import jax.numpy as jnp
    n, rest, k, damp, dt = 24, 1.0 / 23, 400.0, 0.98, 2e-3

    def spring(pa, pb):
        d = pb - pa
        ln = jnp.sqrt(jnp.sum(d * d, axis=-1, keepdims=True) + 1e-12)
        return k * (ln - rest) * d / ln

    def step(_, s):
        p, v = s
        f = jnp.zeros_like(p).at[..., 1].add(-9.81)
        fh = spring(p[:, :-1], p[:, 1:])
        fv = spring(p[:-1], p[1:])
        f = f.at[:, :-1].add(fh).at[:, 1:].add(-fh).at[:-1].add(fv).at[1:].add(-fv)
        v = (v + dt * f) * damp
        pinned = (jnp.arange(n) == 0)[:, None, None]
        v = jnp.where(pinned, 0.0, v)
        return p + dt * v, v

    def simulate(p0, v0):
        return jax.lax.fori_loop(0, 500, step, (p0, v0))
    gx, gz = np.meshgrid(np.linspace(0, 1, n), np.linspace(0, 1, n), indexing="ij")
    p0 = np.stack([gz, np.zeros_like(gx), gx], axis=-1).astype(np.float32)
    return simulate, (p0, np.zeros_like(p0))


@workload("cg_solver_while",
          "conjugate gradient on a 256x256 SPD system (A = M M^T/256 + I) in lax.while_loop "
          "until |r| < 1e-5 |b| or 200 iterations: a matvec and a few dots per iteration",
          tol_scale=50)
def cg_solver_while():
    # tol_scale: the iteration count can differ by one between engines near the threshold;
    # both solutions are within the solver's tolerance of the answer
    import jax
    import jax.numpy as jnp

    def cg(a, b):
        def cond(s):
            x, r, p, rs, i = s
            return (jnp.sqrt(rs) > 1e-5 * jnp.linalg.norm(b)) & (i < 200)

        def body(s):
            x, r, p, rs, i = s
            ap = a @ p
            alpha = rs / (p @ ap)
            x = x + alpha * p
            r = r - alpha * ap
            rs_new = r @ r
            p = r + (rs_new / rs) * p
            return x, r, p, rs_new, i + 1
        x0 = jnp.zeros_like(b)
        x, r, p, rs, i = jax.lax.while_loop(cond, body, (x0, b, b, b @ b, 0))
        return x
    m = normal((256, 256), seed=3)
    a = (m @ m.T / 256 + np.eye(256)).astype(np.float32)
    return cg, (a, normal((256,), seed=4))


@workload("jacobi_poisson_fori",
          "Jacobi iteration for the 2-D Poisson equation on a 64x64 grid, 500 sweeps in "
          "lax.fori_loop (4-neighbour stencil by slicing + pad), then the residual norm",
          tol_scale=10)
def jacobi_poisson_fori():
    import jax
    import jax.numpy as jnp

    def solve(f):
        h2 = (1.0 / 65) ** 2

        def sweep(_, u):
            p = jnp.pad(u, 1)
            return 0.25 * (p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:] + h2 * f)
        u = jax.lax.fori_loop(0, 500, sweep, jnp.zeros_like(f))
        p = jnp.pad(u, 1)
        lap = (p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:] - 4 * u) / h2
        return u, jnp.linalg.norm(lap + f)
    return solve, (uniform((64, 64), seed=5),)


@workload("rnn_tanh_scan_grad",
          "plain-jax Elman RNN h = tanh(W x + U h + b), hidden 128, 256 steps in lax.scan, "
          "batch 8, MSE on the last state: loss and grad of W, U, b (a reverse scan)")
def rnn_tanh_scan_grad():
    import jax
    import jax.numpy as jnp

    def fwd_grad(params, xs, t):
        def loss(params):
            w, u, b = params

            def cell(h, x):
                h = jnp.tanh(x @ w + h @ u + b)
                return h, None
            h, _ = jax.lax.scan(cell, jnp.zeros((xs.shape[1], 128)), xs)
            return jnp.mean((h - t) ** 2)
        return jax.value_and_grad(loss)(params)
    params = (normal((32, 128), seed=6, scale=0.2), normal((128, 128), seed=7, scale=0.08),
              np.zeros(128, np.float32))
    return fwd_grad, (params, normal((256, 8, 32), seed=8), normal((8, 128), seed=9))
