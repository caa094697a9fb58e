"""Unreduced values made inside a jit (src/compiler/spmd.c, docs/SPMD.md, "Unreduced and reduced
axes"): a split value asked for unreduced along its axes, a scatter-add of split updates asked for
unreduced output (segment_sum, bincount), a reduction over several split axes asked for unreduced
output over some of them, scalars unreduced over part of the mesh. Each program runs on cjrt and
on XLA:CPU with the same mesh (2 and NDEV devices): the same reported shardings and the same
per-device shards (XLA's partial values, not merely partial values that add up to the same)."""
import numpy as np
import pytest

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P

from jaxcheck import NDEV
from test_jax_sharding_manual import _both, _same, new_jax

NS = [2, NDEV]


@new_jax
@pytest.mark.parametrize("n", NS)
def test_split_value_asked_unreduced_keeps_its_tile(cj_devices, n):
    """P("x") -> P(unreduced={"x"}) (an out_sharding, and jax.device_put): each device holds its
    own tile in place and zeros elsewhere, as XLA reshards it; whole -> unreduced puts the value on
    the first device."""
    x_np = np.arange(2 * n, dtype=np.int32)

    def run(mesh):
        ident = jax.jit(lambda v: v, out_shardings=P(unreduced={"x"}))
        shd = jax.device_put(x_np, P("x"))
        return [ident(shd), ident(jnp.asarray(x_np)), jax.device_put(shd, P(unreduced={"x"}))]

    got, want = _both(run, n, (n,), ("x",))
    _same(got, want)


@new_jax
def test_gradient_of_reshard_from_reduced(cj_devices):
    """The gradient of jax.reshard(P(None, reduced={"x"}) -> P("x")) is P("x") -> unreduced "x"
    on a 2x2 mesh: each device's tile among zeros (pjit's test_reduced_reshard_unreduced_bwd)."""
    if NDEV < 4:
        pytest.skip("needs 4 devices")
    x_np = np.arange(4.0, dtype=np.float32)

    def run(mesh):
        x = jax.device_put(x_np, P(None, reduced={"x"}))
        f = jax.jit(lambda v: jax.reshard(v, P("x")))
        return [jax.jit(jax.grad(lambda v: f(v).sum()))(x)]

    got, want = _both(run, 4, (2, 2), ("x", "y"))
    _same(got, want)


@new_jax
@pytest.mark.parametrize("n", NS)
def test_segment_sum_and_bincount_unreduced(cj_devices, n):
    """A scatter-add of split updates asked for unreduced output: each device scatters its own
    updates and keeps the partial sums (XLA's shards); asked for replicated output, the sum."""
    data = np.arange(2 * n, dtype=np.int32)
    seg = np.sort(np.arange(2 * n) % n).astype(np.int32)

    def run(mesh):
        a = jax.device_put(data, P("x"))
        b = jax.device_put(seg, P("x"))
        ss = jax.jit(lambda x, y, s: jax.ops.segment_sum(x, y, num_segments=n, out_sharding=s),
                     static_argnums=2)
        bc = jax.jit(lambda x, s: jnp.bincount(x, length=n, out_sharding=s), static_argnums=1)
        return [ss(a, b, P(unreduced={"x"})), ss(a, b, P()), bc(b, P(unreduced={"x"})), bc(b, P())]

    got, want = _both(run, n, (n,), ("x",))
    _same(got, want)


@new_jax
@pytest.mark.parametrize("kind", ["sum", "max", "min"])
def test_reduction_over_two_axes_unreduced_over_one(cj_devices, kind):
    """A reduction over dims split along "x" and "y" asked for unreduced "x" (and one asked for
    unreduced {"x", "y"} resharded to unreduced "x"): the partial values over "x" are summed (maxed)
    over "y" only; the scalar's output sharding is unreduced over "x" and replicated over "y"."""
    if NDEV < 4:
        pytest.skip("needs 4 devices")
    from jax.sharding import UnreducedKind
    uk = getattr(UnreducedKind, kind)
    red = {"sum": jax.lax.reduce_sum, "max": jax.lax.reduce_max, "min": jax.lax.reduce_min}[kind]
    x3 = (np.arange(16, dtype=np.int32).reshape(4, 2, 2) * 7) % 11
    x2 = (np.arange(8, dtype=np.int32).reshape(4, 2) * 5) % 7

    def run(mesh):
        a = jax.device_put(x3, P("x", "y", None))
        b = jax.device_put(x2, P("x", "y"))
        f = jax.jit(lambda v: red(v, axes=(0, 1), out_sharding=P(None, unreduced={"x"},
                                                                  unreduced_kind=uk)))
        g = jax.jit(lambda v: jax.reshard(
            red(v, axes=(0, 1), out_sharding=P(unreduced={"x", "y"}, unreduced_kind=uk)),
            P(unreduced={"x"}, unreduced_kind=uk)))
        return [f(a), g(b)]

    got, want = _both(run, 4, (2, 2), ("x", "y"))
    _same(got, want)


@new_jax
def test_scalar_unreduced_over_part_of_the_mesh(cj_devices):
    """A scalar unreduced over "y" and whole along "x" (pjit's test_reduce_sum_unreduced_error,
    case 2): its output sharding has no tile dims of its own; the values add up to the sum."""
    if NDEV < 4:
        pytest.skip("needs 4 devices")
    x_np = np.arange(16, dtype=np.int32).reshape(8, 2)

    def run(mesh):
        x = jax.device_put(x_np, P("y", None))

        @jax.jit
        def f(v):
            out = jax.lax.reduce_sum(v, axes=(0,), out_sharding=P(None, unreduced={"y"}))
            return jax.lax.reduce_sum(out, axes=(0,))

        return [f(x)]

    got, want = _both(run, 4, (2, 2), ("x", "y"))
    _same(got, want, shards=False)


@new_jax
def test_unreduced_contraction_leaves_no_all_reduce(cj_devices):
    """A contraction or a reduction over split axes whose result is asked for unreduced over them
    and only used so compiles to no all_reduce at all (pjit's test_unreduced_einsum_lowers_to_
    reduce_sum, test_jnp_matmul_out_sharding_unreduced)."""
    if NDEV < 4:
        pytest.skip("needs 4 devices")

    def run(mesh):
        arr = jax.device_put(jnp.arange(8).reshape(4, 2), P("x", None))
        f = jax.jit(lambda x: jnp.einsum("ab->b", x, out_sharding=P(None, unreduced={"x"})))
        text = f.lower(arr).compile().as_text()
        assert "all-reduce" not in text, text
        return [f(arr)]

    got, want = _both(run, 4, (2, 2), ("x", "y"))
    _same(got, want)


@new_jax
@pytest.mark.parametrize("n", NS)
def test_scan_accumulates_unreduced_gradients(cj_devices, n):
    """Gradients accumulated unreduced over a scan of micro-batches (pjit's
    test_minibatch_scan_unreduced_grad): the accumulators are carried as partial values, the
    gradients transposed, converted and added as partial values, and summed once after the loop
    by a single all-reduce (as XLA's combiner leaves them); the same values as XLA:CPU."""
    from jax.sharding import reshard

    def model(ws, xs):
        for w in ws:
            xs = jnp.dot(xs.astype(jnp.bfloat16), w.astype(jnp.bfloat16))
        return jnp.sum(xs)

    def run(mesh):
        @jax.jit
        def step(ws, xs):
            def body(acc, x):
                g = jax.grad(model)(ws, x)
                return jax.tree.map(jnp.add, acc, g), None

            acc = reshard(jax.tree.map(jnp.zeros_like, ws), P(unreduced={"x"}))
            acc, _ = jax.lax.scan(body, acc, xs)
            acc = reshard(acc, P())
            return jax.tree.map(lambda w, g: w - g * 0.01, reshard(ws, P()), acc)

        ws = tuple(jax.device_put(jnp.full((4, 4), 0.5 + i / 8, jnp.float32), P(reduced={"x"}))
                   for i in range(3))
        xs = jax.device_put(jnp.linspace(-1, 1, 3 * 2 * n * 4).reshape(3, 2 * n, 4), P(None, "x", None))
        text = step.lower(ws, xs).compile().as_text()
        assert text.count("all-reduce(") == 1, text
        return list(step(ws, xs))

    got, want = _both(run, n, (n,), ("x",))
    _same(got, want)
