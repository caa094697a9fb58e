"""jit over sharded arrays (NamedSharding, with_sharding_constraint, out_shardings): the program
is partitioned by cjrt's compiler (src/compiler/spmd_partition.c, docs/SPMD.md) and every result
must equal XLA:CPU's on the same mesh, values and shardings alike, on 2 and 4 devices."""
import numpy as np
import pytest

import jax
import jax.numpy as jnp
from jax import lax
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

import jaxcheck
from jaxcheck import NDEV


def _norm(spec):
    s = tuple(spec)
    while s and s[-1] is None:
        s = s[:-1]
    return s


def _layout(a):
    """Which slice of the global array each device (by position) holds."""
    devs = sorted(a.sharding.device_set, key=lambda d: d.id)
    m = a.sharding.devices_indices_map(a.shape)
    return [tuple((s.start, s.stop, s.step) for s in m[d]) for d in devs]


def _check(run, n=NDEV, rtol=1e-5, atol=1e-5):
    """run(devices) on cjrt and on XLA:CPU with n devices each: the same values and shardings."""
    got = run(jax.devices("cjrt")[:n])
    want = run(jax.devices("cpu")[:n])
    gl, wl = jax.tree.leaves(got), jax.tree.leaves(want)
    assert len(gl) == len(wl)
    for i, (g, w) in enumerate(zip(gl, wl)):
        jaxcheck.assert_close(np.asarray(g), np.asarray(w), rtol=rtol, atol=atol, what=f"result {i}")
        if isinstance(w.sharding, NamedSharding):
            assert isinstance(g.sharding, NamedSharding), f"result {i}: {g.sharding}"
            assert _norm(g.sharding.spec) == _norm(w.sharding.spec), (
                f"result {i}: cjrt's sharding {g.sharding.spec} != XLA:CPU's {w.sharding.spec}")
        assert _layout(g) == _layout(w), f"result {i}: the devices hold other slices than XLA:CPU's"
    return got


NS = [2, NDEV]


def _mesh(devs, *names):
    if len(names) == 1:
        return Mesh(np.array(devs), names)
    return Mesh(np.array(devs).reshape(2, len(devs) // 2), names)


@pytest.mark.parametrize("n", NS)
def test_data_parallel_mlp_step(cj_devices, n):
    """Batch split over the devices, parameters replicated: gradients are summed across devices
    (a contraction and reductions over the split batch)."""
    import jaxmodels as models

    params = models.mlp_init()
    x, y = models.mlp_batch(n=4 * n)
    step = jax.jit(models.sgd_step(models.mlp_loss))

    def run(devs):
        mesh = _mesh(devs, "batch")
        rep, bat = NamedSharding(mesh, P()), NamedSharding(mesh, P("batch"))
        p = jax.device_put(params, rep)
        return step(p, jax.device_put(x, bat), jax.device_put(y, bat))
    _check(run, n, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("n", NS)
def test_tensor_parallel_matmul(cj_devices, n):
    """Megatron-style: the first weight split by columns (local matmul), the second by rows (a
    local matmul whose partial sums are all-reduced)."""
    x = jaxcheck.rand((8, 16), np.float32, 0)
    w1 = jaxcheck.rand((16, 4 * n), np.float32, 1)
    w2 = jaxcheck.rand((4 * n, 12), np.float32, 2)

    def run(devs):
        mesh = _mesh(devs, "m")
        a = jax.device_put(x, NamedSharding(mesh, P()))
        b = jax.device_put(w1, NamedSharding(mesh, P(None, "m")))
        c = jax.device_put(w2, NamedSharding(mesh, P("m", None)))
        return jax.jit(lambda u, v, w: (jax.nn.relu(u @ v) @ w, u @ v))(a, b, c)
    _check(run, n, rtol=1e-4, atol=1e-4)


def test_two_dim_mesh(cj_devices):
    """A 2x2 mesh: data split on one axis, model on the other."""
    x = jaxcheck.rand((8, 12), np.float32, 0)
    w = jaxcheck.rand((12, 6), np.float32, 1)

    def run(devs):
        mesh = _mesh(devs, "d", "m")
        a = jax.device_put(x, NamedSharding(mesh, P("d", None)))
        b = jax.device_put(w, NamedSharding(mesh, P(None, "m")))
        c = jax.device_put(x, NamedSharding(mesh, P("d", "m")))

        def f(u, v, z):
            h = jnp.tanh(u @ v)
            return h, h.sum(1), z.sum(0), z.max(), (z * 2).T, z.reshape(4, 2, 12)
        return jax.jit(f)(a, b, c)
    _check(run, NDEV, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("n", NS)
def test_with_sharding_constraint(cj_devices, n):
    x = jaxcheck.rand((4 * n, 2 * n), np.float32)

    def run(devs):
        mesh = _mesh(devs, "i")

        def f(v):
            a = lax.with_sharding_constraint(v * 2, NamedSharding(mesh, P(None, "i")))
            b = lax.with_sharding_constraint(jnp.sin(a), NamedSharding(mesh, P()))
            c = lax.with_sharding_constraint(b + 1, NamedSharding(mesh, P("i")))
            return a, b, c
        return jax.jit(f)(jax.device_put(x, NamedSharding(mesh, P("i"))))
    _check(run, n)


@pytest.mark.parametrize("n", NS)
def test_out_shardings(cj_devices, n):
    """Results asked for in other shardings than the computation leaves them in."""
    x = jaxcheck.rand((4 * n, 2 * n), np.float32)

    def run(devs):
        mesh = _mesh(devs, "i")
        outs = (NamedSharding(mesh, P(None, "i")), NamedSharding(mesh, P()),
                NamedSharding(mesh, P("i")))
        f = jax.jit(lambda v, r: (v + 1, v * r, r - 1), out_shardings=outs)
        return f(jax.device_put(x, NamedSharding(mesh, P("i"))),
                 jax.device_put(x, NamedSharding(mesh, P())))
    _check(run, n)


@pytest.mark.parametrize("n", NS)
def test_reductions_over_sharded_axis(cj_devices, n):
    x = jaxcheck.rand((4 * n, 6), np.float32)
    k = (jaxcheck.rand((4 * n, 6), np.float32, 3) * 3).astype(np.int32)

    def run(devs):
        mesh = _mesh(devs, "i")
        a = jax.device_put(x, NamedSharding(mesh, P("i")))
        b = jax.device_put(k, NamedSharding(mesh, P("i")))

        def f(v, w):
            return (v.sum(0), v.max(0), v.min(0), jnp.mean(v), v.sum(1), jnp.prod(v[:, :2] * 0.5, 0),
                    w.sum(0), jnp.argmax(v, 0), jnp.any(v > 2.5, 0), jnp.all(w < 9, 0))
        return jax.jit(f)(a, b)
    _check(run, n, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("n", NS)
def test_elementwise_mixed_shardings(cj_devices, n):
    x = jaxcheck.rand((2 * n, 2 * n), np.float32, 0)
    y = jaxcheck.rand((2 * n, 2 * n), np.float32, 1)
    z = jaxcheck.rand((2 * n,), np.float32, 2)

    def run(devs):
        mesh = _mesh(devs, "i")
        a = jax.device_put(x, NamedSharding(mesh, P("i", None)))
        b = jax.device_put(y, NamedSharding(mesh, P(None, "i")))
        c = jax.device_put(z, NamedSharding(mesh, P("i")))
        r = jax.device_put(y, NamedSharding(mesh, P()))
        f = jax.jit(lambda u, v, w, q: (u + v, u * q - w, jnp.where(u > 0, w[None, :], q),
                                        jnp.maximum(v, 0.5) + w[:, None]))
        return f(a, b, c, r)
    _check(run, n)


def test_two_dim_mesh_elementwise_merge(cj_devices):
    x = jaxcheck.rand((4, 6), np.float32, 0)

    def run(devs):
        mesh = _mesh(devs, "a", "b")
        u = jax.device_put(x, NamedSharding(mesh, P("a", None)))
        v = jax.device_put(x, NamedSharding(mesh, P(None, "b")))
        return jax.jit(lambda p, q: (p * q, jnp.exp(p) - q))(u, v)
    _check(run, NDEV)


@pytest.mark.parametrize("n", NS)
def test_scan_over_sharded_array(cj_devices, n):
    xs = jaxcheck.rand((6, 2 * n, 3), np.float32)

    def run(devs):
        mesh = _mesh(devs, "i")
        a = jax.device_put(xs, NamedSharding(mesh, P(None, "i")))

        def f(v):
            def body(c, x):
                c = c * 0.5 + x
                return c, c.sum()
            return lax.scan(body, jnp.zeros(v.shape[1:], v.dtype), v)
        return jax.jit(f, out_shardings=(NamedSharding(mesh, P("i")), NamedSharding(mesh, P())))(a)
    _check(run, n)


@pytest.mark.parametrize("n", NS)
def test_shape_ops(cj_devices, n):
    """broadcast_in_dim, transpose, reshapes that keep the split dim and one that cannot."""
    x = jaxcheck.rand((4 * n, 6), np.float32)

    def run(devs):
        mesh = _mesh(devs, "i")
        a = jax.device_put(x, NamedSharding(mesh, P("i")))
        f = jax.jit(lambda v: (v.T * 2, v.reshape(2 * n, 2, 6), v.reshape(4 * n * 6),
                               v.reshape(4 * n, 2, 3), jnp.broadcast_to(v[None], (3, 4 * n, 6)) + 1,
                               jnp.cumsum(v, 0), v[:, 1:4], jnp.flip(v, 1),
                               jnp.concatenate([v, v * 2], 1), jnp.sort(v, 1)))
        # a reshape that does not keep the split dim: gathered (XLA may split it unevenly)
        g = jax.jit(lambda v: v.reshape(6, 4 * n), out_shardings=NamedSharding(mesh, P()))
        return f(a), g(a)
    _check(run, n)


@pytest.mark.parametrize("n", NS)
def test_batch_sharded_convolution(cj_devices, n):
    import jaxmodels as models

    params = models.conv_init()
    x = jaxcheck.rand((2 * n, 16, 16, 3), np.float32)

    def run(devs):
        mesh = _mesh(devs, "b")
        p = jax.device_put(params, NamedSharding(mesh, P()))
        a = jax.device_put(x, NamedSharding(mesh, P("b")))
        return jax.jit(models.conv_apply)(p, a)
    _check(run, n, rtol=1e-4, atol=1e-4)


def test_partially_replicated(cj_devices):
    """A 2x2 mesh where values are split on one axis and replicated on the other."""
    x = jaxcheck.rand((8, 4), np.float32)

    def run(devs):
        mesh = _mesh(devs, "a", "b")
        u = jax.device_put(x, NamedSharding(mesh, P("b")))
        v = jax.device_put(x, NamedSharding(mesh, P(None, "a")))
        return jax.jit(lambda p, q: (p.sum(0), p @ q.T, q * 3),
                       out_shardings=(None, NamedSharding(mesh, P("a", "b")), None))(u, v)
    _check(run, NDEV, rtol=1e-5, atol=1e-5)


def test_mesh_in_other_device_order(cj_devices):
    """A mesh whose positions hold the devices in another order (device_ids in the sdy.mesh):
    the slices each device takes and the groups of its collectives follow the mesh."""
    x = jaxcheck.rand((8, 6), np.float32)
    w = jaxcheck.rand((6, 4), np.float32, 1)

    def run(devs):
        mesh = Mesh(np.array([devs[2], devs[0], devs[3], devs[1]]).reshape(2, 2), ("a", "b"))
        u = jax.device_put(x, NamedSharding(mesh, P("a", "b")))
        v = jax.device_put(w, NamedSharding(mesh, P("b")))
        f = jax.jit(lambda p, q: (p @ q, p.sum(0), lax.with_sharding_constraint(p, NamedSharding(mesh, P("b", "a")))))
        return f(u, v)
    _check(run, NDEV)


def test_log_names_ops_run_whole(cj_devices, monkeypatch, capfd):
    """CJRT_SPMD_LOG=1: the partitioner says on stderr which ops it runs whole on every device."""
    monkeypatch.setenv("CJRT_SPMD_LOG", "1")
    mesh = _mesh(cj_devices, "i")
    a = jax.device_put(jaxcheck.rand((4 * NDEV, 3), np.float32), NamedSharding(mesh, P("i")))
    r = jax.jit(lambda v: jnp.cumsum(v, 0) + 0.5)(a)
    np.testing.assert_allclose(np.asarray(r), np.cumsum(np.asarray(a), 0) + 0.5, rtol=1e-5, atol=1e-5)
    err = capfd.readouterr().err
    assert "cjrt spmd: stablehlo.reduce_window" in err and "runs whole on every device" in err, err


@pytest.mark.parametrize("n", NS)
def test_donated_sharded_arguments(cj_devices, n):
    """Donated split arguments: the result written over the argument's shard when both are split
    alike, and a result split otherwise (a bigger piece per device) not written over it."""
    x = jaxcheck.rand((4 * n, 2 * n), np.float32)

    def run(devs):
        mesh = _mesh(devs, "i")
        outs = []
        for spec in (P("i"), P(), P(None, "i")):
            a = jax.device_put(x, NamedSharding(mesh, P("i")))
            f = jax.jit(lambda v: v * 3 + 1, donate_argnums=0,
                        out_shardings=NamedSharding(mesh, spec))
            outs.append(f(a))
        return outs
    _check(run, n)


@pytest.mark.parametrize("n", NS)
def test_donation_by_byte_size(cj_devices, n):
    """A donated argument whose per-device piece has the bytes of a result of another shape or
    element type is written over, as XLA aliases by size (JAX's pjit_test.py
    testBufferDonationDifferentIOShapes): the donated arrays are deleted as on XLA:CPU (all of them
    since JAX marks them jax.buffer_donor; JAX 0.7 aliases only same-shaped ones), and the values
    are right, also when two donated arguments are returned in each other's places."""
    deleted = []

    def run(devs):
        mesh = _mesh(devs, "x")
        s1, s2 = NamedSharding(mesh, P("x")), NamedSharding(mesh, P(None, "x", None))
        x = jax.device_put(np.arange(8 * n, dtype=np.float32), s1)
        y = jax.device_put(np.arange(8 * n, dtype=np.float32).reshape(8 * n, 1), s1)
        z = jax.device_put(np.arange(4 * n * n, dtype=np.int32).reshape(n, n, 4), s1)
        f = jax.jit(lambda x, y, z: (x * 2, (jnp.reshape(y, (8 * n,)) + 1).astype(np.int32), z + 3),
                    out_shardings=(s1, s1, s2), donate_argnums=(0, 1, 2))
        out = f(x, y, z)
        deleted.append((x.is_deleted(), y.is_deleted(), z.is_deleted()))
        a = jax.device_put(np.arange(8 * n, dtype=np.float32), s1)
        b = jax.device_put(np.arange(8 * n, dtype=np.float32).reshape(8 * n, 1) + 100, s1)
        g = jax.jit(lambda a, b: (jnp.reshape(b, (8 * n,)), jnp.reshape(a, (8 * n, 1))),
                    out_shardings=(s1, s1), donate_argnums=(0, 1))
        return out, g(a, b)
    got = _check(run, n)
    assert deleted[0] == deleted[1], f"deleted on cjrt {deleted[0]}, on XLA:CPU {deleted[1]}"
    np.testing.assert_array_equal(np.asarray(got[1][1])[:, 0], np.arange(8 * n))


def test_embedding_lookup(cj_devices):
    """gather: a table split along its feature dim, indices split along the batch: each device
    looks its rows up in its columns."""
    table = jaxcheck.rand((10, 8), np.float32)
    idx = np.array([[1, 4, 9], [0, 0, 3], [7, 2, 5], [9, 8, 1]], np.int32)

    def run(devs):
        mesh = _mesh(devs, "d", "m")
        t = jax.device_put(table, NamedSharding(mesh, P(None, "m")))
        i = jax.device_put(idx, NamedSharding(mesh, P("d")))
        return jax.jit(lambda a, b: (a[b], a[b].sum(-1), jnp.take(a, b[:, 0], axis=0) * 2))(t, i)
    _check(run, NDEV)


@pytest.mark.parametrize("n", NS)
def test_training_loop(cj_devices, n):
    """fori_loop over data-parallel SGD steps: the loop body itself is partitioned (the batch
    stays split inside it, the gradients are all-reduced each iteration)."""
    import jaxmodels as models

    params = models.mlp_init()
    x, y = models.mlp_batch(n=4 * n)
    step = models.sgd_step(models.mlp_loss)

    def train(p, a, b):
        return lax.fori_loop(0, 3, lambda i, q: step(q, a, b)[0], p)

    def run(devs):
        mesh = _mesh(devs, "batch")
        bat = NamedSharding(mesh, P("batch"))
        return jax.jit(train)(jax.device_put(params, NamedSharding(mesh, P())),
                              jax.device_put(x, bat), jax.device_put(y, bat))
    _check(run, n, rtol=1e-4, atol=1e-5)
