"""Partitioning rules for control flow and scatter (docs/SPMD.md's rule table): case/if branches
partitioned like loop bodies, scatter split along its window dims. Each rule on 2 and 4 devices
against XLA:CPU (values and output shardings) through JAX, and on 2, 4 and 8 devices against
numpy as GSPMD StableHLO text through `cjrt run`."""
import numpy as np
import pytest

import jax
import jax.numpy as jnp
from jax import lax
from jax.sharding import NamedSharding, PartitionSpec as P

import jaxcheck
from jaxcheck import NDEV
from test_jax_sharding import _check, _mesh
from test_jax_sharding_gspmd import _run

NS = [2, NDEV]


# ---------------------------------------------------------------- case / if

@pytest.mark.parametrize("n", NS)
@pytest.mark.parametrize("which", [0, 1, 2])
def test_switch_over_sharded_values(cj_devices, n, which):
    x = jaxcheck.rand((4 * n, 6), np.float32, 0)
    y = jaxcheck.rand((6, 2 * n), np.float32, 1)

    def run(devs):
        mesh = _mesh(devs, "i")
        a = jax.device_put(x, NamedSharding(mesh, P("i")))
        b = jax.device_put(y, NamedSharding(mesh, P(None, "i")))

        def f(k, u, v):
            return lax.switch(k, [lambda u, v: (u * 2, u @ v, u.sum(0)),
                                  lambda u, v: (jnp.sin(u), (u + 1) @ v, u.max(0)),
                                  lambda u, v: (u - 1, jnp.zeros((4 * n, 2 * n), u.dtype), u[0])],
                              u, v)
        return jax.jit(f)(which, a, b)
    _check(run, n, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("n", NS)
def test_cond_in_scan_over_sharded_values(cj_devices, n):
    xs = jaxcheck.rand((5, 2 * n, 3), np.float32)

    def run(devs):
        mesh = _mesh(devs, "i")
        a = jax.device_put(xs, NamedSharding(mesh, P(None, "i")))

        def f(v):
            def body(c, x):
                c = lax.cond(x.sum() > 0, lambda c: c * 0.5 + x, lambda c: c - x, c)
                return c, c.sum()
            return lax.scan(body, jnp.zeros(v.shape[1:], v.dtype), v)
        return jax.jit(f, out_shardings=(NamedSharding(mesh, P("i")), NamedSharding(mesh, P())))(a)
    _check(run, n)


CASE = """module @m attributes {{mhlo.num_partitions = {n} : i32, mhlo.num_replicas = 1 : i32}} {{
  func.func public @main(%p: tensor<i32>, %a: tensor<16x8xf32> {{mhlo.sharding = "{rows}"}})
      -> (tensor<16x8xf32>, tensor<8xf32>) {{
    %r:2 = "stablehlo.case"(%p) ({{
      %0 = stablehlo.sine %a : tensor<16x8xf32>
      %c = stablehlo.constant dense<0.0> : tensor<f32>
      %1 = stablehlo.reduce(%a init: %c) applies stablehlo.add across dimensions = [0] : (tensor<16x8xf32>, tensor<f32>) -> tensor<8xf32>
      stablehlo.return %0, %1 : tensor<16x8xf32>, tensor<8xf32>
    }}, {{
      %0 = stablehlo.multiply %a, %a : tensor<16x8xf32>
      %c = stablehlo.constant dense<-1.0e30> : tensor<f32>
      %1 = stablehlo.reduce(%a init: %c) applies stablehlo.maximum across dimensions = [0] : (tensor<16x8xf32>, tensor<f32>) -> tensor<8xf32>
      stablehlo.return %0, %1 : tensor<16x8xf32>, tensor<8xf32>
    }}, {{
      %0 = stablehlo.constant dense<1.5> : tensor<16x8xf32>
      %1 = stablehlo.slice %a [3:4, 0:8] : (tensor<16x8xf32>) -> tensor<1x8xf32>
      %2 = stablehlo.reshape %1 : (tensor<1x8xf32>) -> tensor<8xf32>
      stablehlo.return %0, %2 : tensor<16x8xf32>, tensor<8xf32>
    }}) : (tensor<i32>) -> (tensor<16x8xf32>, tensor<8xf32>)
    return %r#0, %r#1 : tensor<16x8xf32>, tensor<8xf32>
  }}
}}
"""


@pytest.mark.parametrize("n", [2, 4, 8])
@pytest.mark.parametrize("which", [0, 1, 2, 7])
def test_case_text(tmp_path, n, which):
    a = jaxcheck.rand((16, 8), np.float32, 0)
    got, log = _run(tmp_path, CASE.format(n=n, rows=f"{{devices=[{n},1]<=[{n}]}}"),
                    [np.array(which, np.int32), a], n, 2, log=True)
    assert "stablehlo.case" not in log, log  # partitioned, not run whole
    want = [(np.sin(a), a.sum(0)), (a * a, a.max(0)),
            (np.full((16, 8), 1.5, np.float32), a[3])][min(which, 2)]
    np.testing.assert_allclose(got[0], want[0], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------- unreduced inside a program

@pytest.mark.parametrize("case", range(2))
def test_unreduced_constraint_inside_program(cj_devices, case):
    """A product left unreduced (a constraint with unreduced={...}) and resharded to reduced in the
    same program: cjrt holds it reduced throughout, with XLA:CPU's values and shardings."""
    if not hasattr(jax, "reshard"):
        pytest.skip(f"jax {jax.__version__} has no jax.reshard (unreduced shardings need a newer jax)")
    from jax.sharding import AxisType

    sizes, names, xs, ys, mid, outs = [
        ((2,), ("x",), P(None, "x"), P("x", None), P(None, None, unreduced={"x"}), P("x", None)),
        ((2, 2), ("x", "y"), P("x", "y"), P("y", None), P("x", None, unreduced={"y"}), P("x", "y")),
    ][case]
    a = np.arange(16.0, dtype=np.float32).reshape(8, 2)

    def run(devs):
        mesh = jax.sharding.Mesh(np.array(devs[:int(np.prod(sizes))]).reshape(sizes), names,
                                 axis_types=(AxisType.Explicit,) * len(names))
        with jax.set_mesh(mesh):
            def f(u, v):
                p = jnp.einsum("xy,yz->xz", u, v, out_sharding=mid)
                return jax.reshard(p + p, outs) - 1
            return jax.jit(f)(jax.device_put(a, xs), jax.device_put(a.T, ys))
    got = _check(run, NDEV)
    np.testing.assert_allclose(np.asarray(got), 2 * a @ a.T - 1)


# ---------------------------------------------------------------- scatter

@pytest.mark.parametrize("n", NS)
def test_scatter_split_along_window_dims(cj_devices, n, monkeypatch, capfd):
    """An embedding gradient: rows scattered (added, set) into a table split by columns, the
    updates split alike: each device scatters its columns, nothing is gathered."""
    table = jaxcheck.rand((10, 4 * n), np.float32, 0)
    upd = jaxcheck.rand((6, 4 * n), np.float32, 1)
    idx = np.array([3, 0, 9, 3, 5, 12], np.int32)  # a repeat, and one out of range (dropped)
    monkeypatch.setenv("CJRT_SPMD_LOG", "1")

    def run(devs):
        mesh = _mesh(devs, "i")
        t = jax.device_put(table, NamedSharding(mesh, P(None, "i")))
        u = jax.device_put(upd, NamedSharding(mesh, P(None, "i")))
        k = jax.device_put(idx, NamedSharding(mesh, P()))
        return jax.jit(lambda t, u, k: (t.at[k].add(u, mode="drop"), t.at[k].set(u * 2, mode="drop"),
                                        t.at[k].max(u, mode="drop")))(t, u, k)
    _check(run, n)
    assert "stablehlo.scatter" not in capfd.readouterr().err


SCATTER = """module @m attributes {{mhlo.num_partitions = {n} : i32, mhlo.num_replicas = 1 : i32}} {{
  func.func public @main(%t: tensor<10x16xf32> {{mhlo.sharding = "{cols}"}}, %k: tensor<6x1xi32>,
                         %u: tensor<6x16xf32> {{mhlo.sharding = "{cols}"}}) -> tensor<10x16xf32> {{
    %0 = "stablehlo.scatter"(%t, %k, %u) <{{scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}}> ({{
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }}) : (tensor<10x16xf32>, tensor<6x1xi32>, tensor<6x16xf32>) -> tensor<10x16xf32>
    return %0 : tensor<10x16xf32>
  }}
}}
"""


@pytest.mark.parametrize("n", [2, 4, 8])
def test_scatter_text(tmp_path, n):
    t = jaxcheck.rand((10, 16), np.float32, 0)
    u = jaxcheck.rand((6, 16), np.float32, 1)
    k = np.array([[3], [0], [9], [3], [5], [12]], np.int32)
    got, log = _run(tmp_path, SCATTER.format(n=n, cols=f"{{devices=[1,{n}]<=[{n}]}}"), [t, k, u], n, 1,
                    log=True)
    want = t.copy()
    for r, row in zip(k[:, 0], u):
        if r < 10:
            want[r] += row
    np.testing.assert_allclose(got[0], want, rtol=1e-6, atol=1e-6)
    assert "stablehlo.scatter" not in log, log


# ---------------------------------------------------------------- all_reduce before a transpose

@pytest.mark.parametrize("n", NS)
def test_gradient_all_reduce_moves_past_its_transpose(cj_devices, n):
    """A data-parallel weight gradient: the partitioner completes the batch-split contraction
    with an all_reduce, which JAX's transpose of the gradient follows. The compiler moves the
    all_reduce past that transpose (src/compiler/sink.c) so that the transpose folds into the
    dot; values and shardings stay XLA:CPU's, and no transpose of an all_reduce is left."""
    x = jaxcheck.rand((8 * n, 12), np.float32, 0)
    w = jaxcheck.rand((12, 6), np.float32, 1)

    def loss(w, x):
        return jnp.tanh(x @ w).sum()

    def f(w, x):
        return w - 0.1 * jax.grad(loss)(w, x)

    def run(devs):
        mesh = _mesh(devs, "i")
        a = jax.device_put(w, NamedSharding(mesh, P()))
        b = jax.device_put(x, NamedSharding(mesh, P("i")))
        return jax.jit(f)(a, b)
    _check(run, n, rtol=1e-5, atol=1e-5)

    mesh = _mesh(cj_devices[:n], "i")
    a = jax.device_put(w, NamedSharding(mesh, P()))
    b = jax.device_put(x, NamedSharding(mesh, P("i")))
    text = jax.jit(f).lower(a, b).compile().as_text()
    reduced = {ln.split("=")[0].strip() for ln in text.splitlines() if " all-reduce(" in ln}
    assert reduced, text
    for ln in text.splitlines():
        if " transpose(" in ln:
            operand = ln.split("(", 1)[1].split(")")[0].strip()
            assert operand not in reduced, ln


SINK = """module @m attributes {{mhlo.num_partitions = {n} : i32, mhlo.num_replicas = 1 : i32}} {{
  func.func public @main(%a: tensor<16x8xf32> {{mhlo.sharding = "{rows}"}}, %b: tensor<16x4xf32> {{mhlo.sharding = "{rows}"}})
      -> (tensor<32xf32>, tensor<4x8xf32>) {{
    %d = stablehlo.dot_general %a, %b, contracting_dims = [0] x [0] : (tensor<16x8xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
    %t = stablehlo.transpose %d, dims = [1, 0] : (tensor<8x4xf32>) -> tensor<4x8xf32>
    %r = stablehlo.reshape %t : (tensor<4x8xf32>) -> tensor<32xf32>
    %e = stablehlo.dot_general %b, %a, contracting_dims = [0] x [0] : (tensor<16x4xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
    %u = stablehlo.transpose %e, dims = [1, 0] : (tensor<4x8xf32>) -> tensor<8x4xf32>
    %v = stablehlo.add %u, %u : tensor<8x4xf32>
    %w = stablehlo.transpose %v, dims = [1, 0] : (tensor<8x4xf32>) -> tensor<4x8xf32>
    return %r, %w : tensor<32xf32>, tensor<4x8xf32>
  }}
}}
"""


@pytest.mark.parametrize("n", [2, 4, 8])
def test_all_reduce_moved_past_transpose_and_reshape_text(tmp_path, n):
    """A split contraction's all_reduce followed by a transpose and a reshape (moved before the
    all_reduce, one op a round) and by an add (which stays after it)."""
    a = jaxcheck.rand((16, 8), np.float32, 0)
    b = jaxcheck.rand((16, 4), np.float32, 1)
    rows = f"{{devices=[{n},1]<=[{n}]}}"
    got = _run(tmp_path, SINK.format(n=n, rows=rows), [a, b], n, 2)
    np.testing.assert_allclose(got[0], (a.T @ b).T.reshape(-1), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got[1], 2 * (b.T @ a), rtol=1e-5, atol=1e-5)


@pytest.mark.skipif(not hasattr(jax.sharding, "AxisType"), reason="needs mesh axis types")
@pytest.mark.parametrize("types", [("Auto", "Auto"), ("Auto", "Explicit")])
def test_dot_mismatch_keeps_lhs_rows_split(cj_devices, types):
    """z @ x2 with z split ("x", "y") and x2 split along its columns ("x"), the contraction split on
    one side only (pjit's test_auto_user): as many bytes move whichever operand is gathered, and
    the lhs leads, so the result is split along its rows as XLA:CPU reports (not its columns)."""
    if NDEV < 4:
        pytest.skip("needs 4 devices")
    from jax.sharding import AxisType
    x_np = np.arange(16.0, dtype=np.float32).reshape(8, 2)
    got = []
    for plat in ("cjrt", "cpu"):
        mesh = jax.make_mesh((2, 2), ("x", "y"), devices=jax.devices(plat)[:4],
                             axis_types=tuple(getattr(AxisType, t) for t in types))
        with jax.set_mesh(mesh):
            a = jax.device_put(x_np, NamedSharding(mesh, P("x", "y")))
            b = jax.device_put(x_np.T, NamedSharding(mesh, P(None, "x")))
            out = jax.jit(lambda u, v: jnp.sin(u * 2) @ v)(a, b)
            got.append((out.sharding.spec, np.asarray(out)))
    assert got[0][0] == got[1][0], f"cjrt's {got[0][0]} != XLA:CPU's {got[1][0]}"
    np.testing.assert_allclose(got[0][1], got[1][1], rtol=1e-5, atol=1e-5)
