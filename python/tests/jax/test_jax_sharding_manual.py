"""shard_map beyond the plain case, and the partial sums it can hand out (src/compiler/spmd.c,
docs/SPMD.md): unreduced and reduced shardings (PartitionSpec(unreduced=..., reduced=...)) on
@main's arguments and results and on shard_map's in/out specs, where an unreduced value is held
as partial sums on the devices; shard_map over part of the mesh (the other axes automatic).
Each program runs on cjrt and on XLA:CPU with the same mesh (2 and NDEV devices): the same
values, the same shardings, and, where partial sums come straight out of a shard_map, the same
per-device shards."""
import numpy as np
import pytest

import jax
import jax.numpy as jnp
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P

from jaxcheck import NDEV

NS = [2, NDEV]

# unreduced/reduced specs, lax.pcast, UnreducedKind and a shard_map body constrained along its
# automatic axes arrived after the oldest JAX the suite runs (0.7)
new_jax = pytest.mark.skipif(not hasattr(jax.sharding, "UnreducedKind"),
                             reason="needs a JAX with unreduced shardings (0.8 or later)")


def _mesh(devs, shape, names, kind=AxisType.Explicit):
    return jax.make_mesh(shape, names, axis_types=(kind,) * len(names), devices=devs)


def _both(run, n, shape, names, kind=AxisType.Explicit):
    """run(mesh) under jax.set_mesh on cjrt's and XLA:CPU's first n devices."""
    out = []
    for plat in ("cjrt", "cpu"):
        mesh = _mesh(jax.devices(plat)[:n], shape, names, kind)
        with jax.set_mesh(mesh):
            out.append(run(mesh))
    return out


def _whole(a):
    """a summed and gathered (an unreduced value's meaning)."""
    return jax.reshard(a, NamedSharding(a.sharding.mesh, P()))


def _same(got, want, shards=True):
    gl, wl = jax.tree.leaves(got), jax.tree.leaves(want)
    assert len(gl) == len(wl)
    for i, (g, w) in enumerate(zip(gl, wl)):
        assert g.sharding.spec == w.sharding.spec, (
            f"result {i}: cjrt's sharding {g.sharding.spec} != XLA:CPU's {w.sharding.spec}")
        if shards:
            gs = [np.asarray(s.data) for s in g.addressable_shards]
            ws = [np.asarray(s.data) for s in w.addressable_shards]
            assert len(gs) == len(ws)
            for k, (a, b) in enumerate(zip(gs, ws)):
                np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5,
                                           err_msg=f"result {i}, shard {k}")
        else:
            np.testing.assert_allclose(np.asarray(_whole(g)), np.asarray(_whole(w)), rtol=1e-5,
                                       atol=1e-5, err_msg=f"result {i}")


@new_jax
@pytest.mark.parametrize("n", NS)
def test_shard_map_unreduced_out_then_reduced(cj_devices, n):
    """A matmul whose contraction is split over "y" returns its partial sums (out_specs with
    unreduced={"y"}); a second jit takes them as an unreduced argument and sums them."""
    a_np = np.arange(2 * 2 * n, dtype=np.float32).reshape(2, 2 * n) / 7
    b_np = np.arange(2 * n * 3, dtype=np.float32).reshape(2 * n, 3) / 5
    shape = (2, n // 2) if n > 2 else (1, 2)

    def run(mesh):
        a = jax.device_put(a_np, P("x", "y"))
        b = jax.device_put(b_np, P("y", None))

        @jax.jit
        @jax.shard_map(in_specs=(P("x", "y"), P("y", None)),
                       out_specs=P("x", None, unreduced={"y"}))
        def f(u, v):
            return jax.lax.pcast(u @ v, "y", to="unreduced")

        out = f(a, b)
        summed = jax.jit(lambda o: jax.reshard(o, P("x", None)))(out)
        both = jax.jit(lambda o: (o, jax.reshard(o, P()) * 2))(out)  # passed through and used
        return out, summed, both

    (go, gs, gb), (wo, ws, wb) = _both(run, n, shape, ("x", "y"))
    assert go.sharding.spec.unreduced == {"y"}
    _same(go, wo)
    _same(gs, ws)
    np.testing.assert_allclose(np.asarray(gs), a_np @ b_np, rtol=1e-5)
    _same(gb, wb)


@new_jax
@pytest.mark.parametrize("n", NS)
def test_shard_map_reduced_in_out_and_grad(cj_devices, n):
    """A reduced argument (whole on every device) through shard_map with reduced out_specs, and
    its gradient, which JAX gives unreduced (partial sums) over the axis."""
    x_np = np.arange(8, dtype=np.float32) / 3

    def run(mesh):
        arr = jax.device_put(x_np, P(reduced={"x"}))

        @jax.jit
        @jax.shard_map(out_specs=P(reduced={"x"}))
        def f(x):
            return x * x

        out = f(arr)
        g = jax.jit(jax.grad(lambda x: f(x).sum()))(arr)
        return out, g

    (go, gg), (wo, wg) = _both(run, n, (n,), ("x",))
    assert go.sharding.spec.reduced == {"x"}
    assert gg.sharding.spec.unreduced == {"x"}
    _same(go, wo)
    _same(gg, wg, shards=False)
    np.testing.assert_allclose(np.asarray(_whole(gg)), 2 * x_np, rtol=1e-6)


@new_jax
@pytest.mark.parametrize("n", NS)
def test_unreduced_einsum_into_shard_map(cj_devices, n):
    """An einsum asked for unreduced output (out_sharding=P(unreduced={"x"})) given to a
    shard_map that takes it unreduced and psums it: each device's part is added once."""
    a_np = np.arange(4 * 2 * n, dtype=np.float32).reshape(4, 2 * n) / 9
    b_np = np.arange(2 * n * 4, dtype=np.float32).reshape(2 * n, 4) / 11

    def run(mesh):
        a = jax.device_put(a_np, P(None, "x"))
        b = jax.device_put(b_np, P("x", None))

        @jax.shard_map(in_specs=P(unreduced={"x"}), out_specs=P())
        def total(z):
            return jax.lax.psum(z, "x")

        @jax.jit
        def f(u, v):
            z = jnp.einsum("ab,bc->ac", u, v, out_sharding=P(unreduced={"x"}))
            return total(z)

        return f(a, b)

    got, want = _both(run, n, (n,), ("x",))
    _same(got, want)
    np.testing.assert_allclose(np.asarray(got), a_np @ b_np, rtol=1e-5)


@new_jax
@pytest.mark.parametrize("n", NS)
def test_shard_map_partial_auto(cj_devices, n):
    """shard_map over "i" only ("j" automatic): a sharding constraint on "j" inside, a psum and
    an axis_index over "i" (JAX nests a manual computation over "j" for it), the result then
    constrained along both axes."""
    x_np = np.arange(4 * 2 * n, dtype=np.float32).reshape(4, 2 * n) / 8
    shape = (2, n // 2)

    def run(mesh):
        def g(x):
            x = jax.lax.with_sharding_constraint(x, P(None, "j"))
            y = jax.lax.psum(x.sum(), "i") + jax.lax.axis_index("i")
            return x * x + y

        @jax.jit
        def f(x):
            x = jax.shard_map(g, mesh=mesh, in_specs=P("i", None), out_specs=P("i", None),
                              axis_names=frozenset({"i"}))(x)
            return jax.lax.with_sharding_constraint(x, NamedSharding(mesh, P("i", "j")))

        return f(jax.device_put(x_np, NamedSharding(mesh, P("i", "j"))))

    got, want = _both(run, n, shape, ("i", "j"), AxisType.Auto)
    _same(got, want)


@pytest.mark.parametrize("n", NS)
def test_shard_map_partial_auto_constraint_flows_out(cj_devices, n):
    """A sharding constraint on the automatic axis inside shard_map's body: the result comes
    out split along it, as XLA propagates it (values and sharding as XLA:CPU's)."""
    x_np = np.arange(4 * 8, dtype=np.float32).reshape(4, 8)
    shape = (2, n // 2)

    def run(mesh):
        sharding = NamedSharding(mesh, P("i"))

        def g(x):
            return jax.lax.with_sharding_constraint(x * x, sharding)

        f = jax.jit(jax.shard_map(g, mesh=mesh, in_specs=P(), out_specs=P(), check_vma=False,
                                  axis_names=frozenset({"j"})))
        return f(jax.device_put(x_np, sharding))

    got, want = _both(run, n, shape, ("i", "j"), AxisType.Auto)
    _same(got, want)


@new_jax
@pytest.mark.parametrize("kind", ["sum", "max", "min"])
@pytest.mark.parametrize("n", NS)
def test_unreduced_results_keep_partial_values(cj_devices, n, kind):
    """A reduction (or a contraction) over a split axis asked for unreduced output and returned:
    each device keeps its own partial values, as XLA:CPU does (the same shards), and a shard_map
    finishes them with the matching collective."""
    from jax.sharding import UnreducedKind
    x_np = np.arange(4 * n, dtype=np.float32).reshape(2 * n, 2) * [1, -1] + 3
    uk = getattr(UnreducedKind, kind)
    red = {"sum": jax.lax.reduce_sum, "max": jax.lax.reduce_max, "min": jax.lax.reduce_min}[kind]
    coll = {"sum": jax.lax.psum, "max": jax.lax.pmax, "min": jax.lax.pmin}[kind]

    def run(mesh):
        x = jax.device_put(x_np, P("x", None))
        spec = P(None, unreduced={"x"}, unreduced_kind=uk)
        out = jax.jit(lambda v: red(v, axes=(0,), out_sharding=spec))(x)
        fin = jax.jit(jax.shard_map(lambda v: coll(v, "x"), out_specs=P()))(out)
        res = [out, fin]
        if kind == "sum":
            a = jax.device_put(x_np.T, P(None, "x"))
            dot = jax.jit(lambda u, w: jnp.einsum("ab,bc->ac", u, w,
                                                  out_sharding=P(unreduced={"x"})))
            res.append(dot(a, x))
        return res

    got, want = _both(run, n, (n,), ("x",))
    _same(got, want)


def test_shard_map_with_ordered_io_callback(cj_devices):
    """An ordered io_callback in shard_map's body: the manual computation takes and gives the
    ordering token (sharded as <@mesh, []>); each device calls back with its shard."""
    from jax.sharding import Mesh
    import jax.experimental

    def run(plat):
        seen = []

        def cb(x):
            seen.append(np.asarray(x).shape)

        def body(x, y):
            jax.experimental.io_callback(cb, (), x, ordered=True)
            return x + y[..., jnp.newaxis]

        mesh = Mesh(np.array(jax.devices(plat)[:NDEV]), ("i",))
        f = jax.jit(jax.shard_map(body, mesh=mesh, in_specs=(P(None, "i"), P(None)),
                                  out_specs=P(None, "i")))
        out = f(jnp.arange(2.0 * 4 * NDEV).reshape(2, 4 * NDEV), jnp.ones(2))
        jax.effects_barrier()
        return np.asarray(out), sorted(seen)

    (go, gs), (wo, ws) = run("cjrt"), run("cpu")
    np.testing.assert_array_equal(go, wo)
    assert gs == ws == [(2, 4)] * NDEV


def test_shard_map_inside_scan(cj_devices):
    """shard_map in a scan's body (a manual computation in a while loop): its operands are the
    loop's carries, one taken in another sharding than it is carried in."""
    from jax.sharding import Mesh

    def run(plat):
        mesh = Mesh(np.array(jax.devices(plat)[:NDEV]), ("x",))
        sm = jax.shard_map(lambda a, b: (a * 2 + jax.lax.psum(b.sum(), "x"), b), mesh=mesh,
                           in_specs=(P("x"), P(None, "x")), out_specs=(P("x"), P(None, "x")))

        def body(c, _):
            a, b = sm(*c)
            return (a, b + 1), a.sum()

        f = jax.jit(lambda a, b: jax.lax.scan(body, (a, b), None, length=3))
        a = jax.device_put(jnp.arange(2.0 * NDEV), NamedSharding(mesh, P("x")))
        b = jax.device_put(jnp.arange(4.0 * NDEV).reshape(2, 2 * NDEV), NamedSharding(mesh, P()))
        return f(a, b)

    got, want = run("cjrt"), run("cpu")
    for g, w in zip(jax.tree.leaves(got), jax.tree.leaves(want)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6)
        assert g.sharding.spec == w.sharding.spec


def test_open_dims_keep_their_split(cj_devices):
    """explicit_axes over "y" with the input split along "x" too: the constraints JAX puts there
    leave dim 0 open ("{?}"), which keeps its "x" split, as Shardy propagates it (XLA:CPU's
    output sharding P("x", "y"), not a gather along "x")."""
    from functools import partial
    from jax.sharding import explicit_axes

    x_np = np.arange(16.0, dtype=np.float32).reshape(8, 2)

    def run(mesh):
        arr = jax.device_put(x_np, NamedSharding(mesh, P("x", "y")))

        @partial(explicit_axes, axes="y", in_sharding=P(None, "y"))
        def h(y):
            z = jnp.sin(y)
            return jnp.einsum("ab,bc->ac", z, z.T, out_sharding=P(None, "y"))

        return jax.jit(lambda x: h(x * 2))(arr)

    got, want = _both(run, NDEV, (2, NDEV // 2), ("x", "y"), AxisType.Auto)
    _same(got, want)


def test_loop_of_whole_values_split_inside(cj_devices):
    """A scan whose carry starts whole but whose body constrains it to a split, and a scan of
    whole values whose body is a shard_map that takes them in shards: the loop is partitioned
    all the same (the carry split from the start, the shard_map's shards sliced)."""
    from jax.sharding import Mesh
    x_np = np.arange(4 * 2 * NDEV, dtype=np.float32).reshape(2 * NDEV, 4)

    def run(plat):
        mesh = Mesh(np.array(jax.devices(plat)[:NDEV]).reshape(2, NDEV // 2), ("a", "b"))
        s = NamedSharding(mesh, P("b", "a"))
        sm = jax.shard_map(lambda u: u * 2 + jax.lax.psum(u.sum(), ("a", "b")), mesh=mesh,
                           in_specs=P("b", "a"), out_specs=P("b", "a"))

        def step(body):
            return jax.jit(lambda v: jax.lax.scan(lambda c, _: (body(c), None), v, None,
                                                  length=2)[0])

        one = step(lambda c: jax.lax.with_sharding_constraint(c + 1, s))(x_np)
        two = step(sm)(x_np)
        return one, two

    got, want = run("cjrt"), run("cpu")
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6)
        assert g.sharding.spec == w.sharding.spec, (g.sharding.spec, w.sharding.spec)


@new_jax
def test_empty_mesh_constraint_keeps_open_dims(cj_devices):
    """PRNG keys from split seeds, transposed: JAX constrains the key data on @empty_mesh with
    open dims ([{?}, {?}, {}]), which keeps their split (XLA:CPU's P("y", "x"), not replicated)."""
    from jax.sharding import Mesh
    from jax._src.random import prng, threefry2x32

    def run(plat):
        mesh = Mesh(np.array(jax.devices(plat)[:NDEV]).reshape(2, NDEV // 2), ("x", "y"))
        seeds = jax.device_put(np.arange(4 * NDEV, dtype=np.uint32).reshape(4, NDEV),
                               NamedSharding(mesh, P("x", "y")))
        out = jax.jit(lambda s: prng.random_seed(s, impl=threefry2x32.threefry_prng_impl).T)(seeds)
        return jax.random.key_data(out), out.sharding.spec

    (g, gs), (w, ws) = run("cjrt"), run("cpu")
    np.testing.assert_array_equal(np.asarray(g), np.asarray(w))
    assert gs == ws and g.sharding.spec == w.sharding.spec, (gs, ws)


@new_jax
def test_unreduced_matmul_with_split_rows(cj_devices):
    """A matmul split along its rows ("x") and its contraction ("y"), asked for unreduced "y":
    the result is reported (and held) as P("x", None, unreduced={"y"}) with XLA:CPU's shards."""
    x_np = np.arange(16.0, dtype=np.float32).reshape(8, 2)

    def run(mesh):
        x = jax.device_put(x_np, P("x", "y"))
        y = jax.device_put(x_np.T, P("y", None))
        f = jax.jit(lambda u, v: jnp.einsum("xy,yz->xz", u, v,
                                            out_sharding=P("x", None, unreduced={"y"})))
        return f(x, y)

    got, want = _both(run, NDEV, (2, NDEV // 2), ("x", "y"))
    _same(got, want)
