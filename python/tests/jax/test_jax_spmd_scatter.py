"""The elementwise work after a data-parallel all_reduce runs once per shard (src/compiler/
spmd_scatter.c): reduce_scatter, the update on the device's rows, all_gather. Each program must
give XLA:CPU's values on the same mesh; the cases that qualify must show the rewrite in cjrt's
optimized program, and the ones that do not (a device-local operand, rows not divisible by the
device count) must not be rewritten wrongly."""
import numpy as np
import pytest

import jax
import jax.numpy as jnp
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

import jaxcheck
from jaxcheck import NDEV

NS = sorted({2, NDEV})


def _run(fn, devs, args, specs):
    mesh = Mesh(np.array(devs), ("batch",))
    sh = [NamedSharding(mesh, s) for s in specs]
    f = jax.jit(fn, in_shardings=sh, out_shardings=NamedSharding(mesh, P()))
    placed = [jax.device_put(a, s) for a, s in zip(args, sh)]
    return f, placed, f(*placed)


def _compare(fn, args, specs, n, rtol=2e-5, atol=1e-5):
    """fn on n cjrt and n cpu devices: equal values; returns cjrt's optimized program text."""
    f, placed, got = _run(fn, jax.devices("cjrt")[:n], args, specs)
    _, _, want = _run(fn, jax.devices("cpu")[:n], args, specs)
    for i, (g, w) in enumerate(zip(jax.tree.leaves(got), jax.tree.leaves(want))):
        jaxcheck.assert_close(np.asarray(g), np.asarray(w), rtol=rtol, atol=atol, what=f"result {i}")
    return f.lower(*placed).compile().as_text()


def _adam_step(w, m, v, x, y):
    """A linear model's gradient over the split batch, then an Adam update of w, m, v."""
    def loss(w):
        return jnp.mean((x @ w - y) ** 2)
    g = jax.grad(loss)(w)
    m = 0.9 * m + 0.1 * g
    v = 0.999 * v + 0.001 * g * g
    w = w - 1e-2 * (m / 0.1) / (jnp.sqrt(v / 0.001) + 1e-8) - 1e-4 * w
    return w, m, v, jnp.sum(w)  # w is also used by a reduction after the update


def _adam_args(rows, cols, batch, seed=0):
    r = np.random.default_rng(seed)
    w = r.standard_normal((rows, cols)).astype(np.float32)
    m = (0.1 * r.standard_normal((rows, cols))).astype(np.float32)
    v = np.abs(r.standard_normal((rows, cols))).astype(np.float32)
    x = r.standard_normal((batch, rows)).astype(np.float32)
    y = r.standard_normal((batch, cols)).astype(np.float32)
    return [w, m, v, x, y]


REP3 = [P(), P(), P(), P("batch"), P("batch")]


@pytest.mark.parametrize("n", NS)
def test_adam_update_per_shard(cj_devices, n):
    text = _compare(_adam_step, _adam_args(256, 128, 8 * n), REP3, n)
    assert "reduce-scatter" in text or "reduce_scatter" in text, "the update was not split"


@pytest.mark.parametrize("n", NS)
def test_rows_not_divisible(cj_devices, n):
    """130 rows on 4 devices (or 129 on 2): left as it was, same values."""
    rows = 130 if n == 4 else 129
    text = _compare(_adam_step, _adam_args(rows, 128, 8 * n, seed=1), REP3, n)
    assert "reduce-scatter" not in text and "reduce_scatter" not in text


@pytest.mark.parametrize("n", NS)
def test_device_local_operand_stops_the_region(cj_devices, n):
    """The summed gradient meets a batch-sharded array whose per-device block has the gradient's
    shape: that product is not replicated, so it must not be computed on gathered rows."""
    r = np.random.default_rng(2)
    x = r.standard_normal((8 * n, 256)).astype(np.float32)
    z = r.standard_normal((256 * n, 128)).astype(np.float32)
    w = r.standard_normal((256, 128)).astype(np.float32)

    def f(w, x, z):
        g = x.T @ (x @ w)               # all-reduced over the batch: [256, 128], replicated
        h = (((g * 2.0 + 1.0) * 3.0 - 1.0) / 2.0) + w
        zb = z.reshape(n, 256, 128)     # [n, 256, 128] sharded over n: per device [1, 256, 128]
        return h[None] * zb + h[None]   # per device: h times the device's own block
    mesh_specs = [P(), P("batch"), P("batch")]

    def run(devs):
        mesh = Mesh(np.array(devs), ("batch",))
        sh = [NamedSharding(mesh, s) for s in mesh_specs]
        fj = jax.jit(f, in_shardings=sh, out_shardings=NamedSharding(mesh, P("batch")))
        return fj(*[jax.device_put(a, s) for a, s in zip([w, x, z], sh)])
    got = run(jax.devices("cjrt")[:n])
    want = run(jax.devices("cpu")[:n])
    jaxcheck.assert_close(np.asarray(got), np.asarray(want), rtol=2e-5, atol=1e-3, what="result")
