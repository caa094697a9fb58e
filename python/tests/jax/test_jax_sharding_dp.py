"""Data-parallel programs partitioned without moving data they do not need to move (issue 15):
a gather or scatter with batching dims over a split batch (take_along_axis in a cross-entropy
loss and its gradient) runs on each device's rows, and a replicated value broadcast to a split
shape (a layer's bias) is broadcast to the local shape instead of materialized whole and sliced.
Values and shardings must equal XLA:CPU's on the same mesh; the partitioned program is read
back (JAX's compiled text) to check that the data stayed put."""
import numpy as np
import pytest

import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P

import jaxcheck
from jaxcheck import NDEV
from test_jax_sharding import _check, _mesh

NS = [2, NDEV]


def _defs(text):
    """{name: op} for the instructions of an HLO text."""
    out = {}
    for ln in text.splitlines():
        ln = ln.strip()
        if ln.startswith("ROOT "):
            ln = ln[5:]
        if not ln.startswith("%") or " = " not in ln:
            continue
        name, rhs = ln.split(" = ", 1)
        head = rhs.split("(", 1)[0].split()
        if head:
            out[name.strip()] = (head[-1], rhs)
    return out


def _compiled(f, *args):
    return jax.jit(f).lower(*args).compile().as_text()


def _xent(logits, labels):
    logp = jax.nn.log_softmax(logits)
    return -jnp.take_along_axis(logp, labels[:, None], axis=1).mean()


@pytest.mark.parametrize("n", NS)
def test_take_along_axis_over_split_batch_stays_local(cj_devices, n):
    """take_along_axis is a gather with batching dims (and its gradient a scatter with batching
    dims): with the batch split, every device picks its own rows' labels, no all_gather."""
    logits = jaxcheck.rand((8 * n, 10), np.float32, 0)
    labels = np.random.default_rng(1).integers(0, 10, 8 * n).astype(np.int32)

    def f(z, y):
        picked = jnp.take_along_axis(z, y[:, None], axis=1)
        return picked, jax.value_and_grad(_xent)(z, y)

    def put(devs):
        mesh = _mesh(devs, "b")
        bat = NamedSharding(mesh, P("b"))
        return jax.device_put(logits, bat), jax.device_put(labels, bat)

    _check(lambda devs: jax.jit(f)(*put(devs)), n, rtol=1e-5, atol=1e-6)
    text = _compiled(f, *put(cj_devices[:n]))
    assert "all-gather(" not in text, text


@pytest.mark.parametrize("n", NS)
def test_gather_batching_dims_split_on_indices_only(cj_devices, n):
    """The indices split along their batching dim and the operand whole: the operand is sliced
    to each device's batch (free), the gather runs locally, the result is split like XLA's."""
    z = jaxcheck.rand((4 * n, 6, 3), np.float32, 2)
    idx = np.random.default_rng(3).integers(0, 6, (4 * n, 5)).astype(np.int32)

    def run(devs):
        mesh = _mesh(devs, "b")
        a = jax.device_put(z, NamedSharding(mesh, P()))
        b = jax.device_put(idx, NamedSharding(mesh, P("b")))
        return jax.jit(lambda u, i: jnp.take_along_axis(u, i[:, :, None], axis=1))(a, b)
    _check(run, n, rtol=0, atol=0)


@pytest.mark.parametrize("n", NS)
def test_scatter_batching_dims_over_split_batch(cj_devices, n):
    """put_along_axis-style scatter-add with batching dims, operand, indices and updates split
    along the batch: each device scatters into its own rows."""
    base = jaxcheck.rand((4 * n, 7), np.float32, 4)
    idx = np.random.default_rng(5).integers(0, 7, (4 * n, 3)).astype(np.int32)
    upd = jaxcheck.rand((4 * n, 3), np.float32, 6)

    def f(b, i, u):
        rows = jnp.arange(b.shape[0])[:, None]
        return b.at[rows, i].add(u), jax.vmap(lambda br, ir, ur: br.at[ir].add(ur))(b, i, u)

    def run(devs):
        mesh = _mesh(devs, "b")
        bat = NamedSharding(mesh, P("b"))
        return jax.jit(f)(*(jax.device_put(v, bat) for v in (base, idx, upd)))
    _check(run, n, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("n", NS)
def test_bias_broadcast_to_local_shape(cj_devices, n):
    """A replicated bias added to a batch-split activation (and a constant broadcast to it): the
    broadcast is made at the local shape, never at the global one and then dynamic-sliced."""
    x = jaxcheck.rand((8 * n, 12), np.float32, 7)
    w = jaxcheck.rand((12, 16), np.float32, 8)
    b = jaxcheck.rand((16,), np.float32, 9)

    def f(x, w, b):
        h = x @ w + b
        return jnp.where(h > 0, h, 0.1 * h), jax.grad(lambda w: jnp.tanh(x @ w + b).sum())(w)

    def put(devs):
        mesh = _mesh(devs, "b")
        rep = NamedSharding(mesh, P())
        return (jax.device_put(x, NamedSharding(mesh, P("b"))), jax.device_put(w, rep),
                jax.device_put(b, rep))

    _check(lambda devs: jax.jit(f)(*put(devs)), n, rtol=1e-5, atol=1e-5)
    text = _compiled(f, *put(cj_devices[:n]))
    defs = _defs(text)
    for name, (op, rhs) in defs.items():
        if op == "dynamic-slice":
            src = rhs.split("(", 1)[1].split(",")[0].strip()
            assert defs.get(src, ("",))[0] != "broadcast", f"{name} = {rhs}"
