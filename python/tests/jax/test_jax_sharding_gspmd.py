"""GSPMD input (mhlo.sharding strings and custom_call @Sharding, no Shardy): what JAX sends with
jax_use_shardy_partitioner off, and what torch_xla / TensorFlow send. cjrt reads these shardings
into the same partitioner as Shardy's (src/compiler/spmd_gspmd.c, docs/SPMD.md "GSPMD input").

Two halves:
- JAX programs with Shardy turned off, on 2 and 4 devices, against XLA:CPU (values and output
  shardings);
- StableHLO text run by `cjrt run --partitions N` on 2, 4 and 8 devices (global inputs, global
  outputs), against numpy: tiled, iota-with-transpose and explicit device lists,
  last_tile_dim_replicate, last_tile_dims={replicated}, {replicated}, {maximal device=N}, and
  shard_map's {manual} region (@SPMDFullToShardShape / @SPMDShardToFullShape)."""
import os
import subprocess

import numpy as np
import pytest

import jax
import jax.numpy as jnp
from jax import lax
from jax.sharding import NamedSharding, PartitionSpec as P

import jaxcheck
from jaxcheck import NDEV
from test_jax_sharding import _check, _mesh


# ---------------------------------------------------------------- JAX with Shardy off

@pytest.fixture
def no_shardy():
    old = jax.config.jax_use_shardy_partitioner
    jax.config.update("jax_use_shardy_partitioner", False)
    try:
        yield
    finally:
        jax.config.update("jax_use_shardy_partitioner", old)


NS = [2, NDEV]


@pytest.mark.parametrize("n", NS)
def test_gspmd_megatron(cj_devices, no_shardy, n):
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


def test_gspmd_two_dim_mesh(cj_devices, no_shardy):
    """2x2 mesh: partly replicated shardings (last_tile_dim_replicate), an iota list with a
    transpose, a constraint, out_shardings."""
    x = jaxcheck.rand((8, 4), np.float32, 0)
    w = jaxcheck.rand((4, 6), np.float32, 1)

    def run(devs):
        mesh = _mesh(devs, "x", "y")

        def f(a, b):
            c = lax.with_sharding_constraint(a @ b, NamedSharding(mesh, P("x")))
            return jnp.sin(c).sum(0), c * 2, a.sum(1)
        a = jax.device_put(x, NamedSharding(mesh, P("x", "y")))
        b = jax.device_put(w, NamedSharding(mesh, P(None, "y")))
        outs = (NamedSharding(mesh, P("y")), NamedSharding(mesh, P(None, "x")),
                NamedSharding(mesh, P()))
        return jax.jit(f, out_shardings=outs)(a, b)
    _check(run, NDEV)


@pytest.mark.parametrize("n", NS)
def test_gspmd_data_parallel_step(cj_devices, no_shardy, n):
    import jaxmodels as models

    params = models.mlp_init()
    x, y = models.mlp_batch(n=4 * n)
    step = jax.jit(models.sgd_step(models.mlp_loss))

    def run(devs):
        mesh = _mesh(devs, "batch")
        rep, bat = NamedSharding(mesh, P()), NamedSharding(mesh, P("batch"))
        return step(jax.device_put(params, rep), jax.device_put(x, bat), jax.device_put(y, bat))
    _check(run, n, rtol=1e-4, atol=1e-5)


def test_gspmd_shard_map(cj_devices, no_shardy):
    """shard_map without Shardy: @SPMDFullToShardShape / @SPMDShardToFullShape around a manual
    body, on a 2x2 mesh where the inputs are split over one axis and replicated over the other."""
    x = jaxcheck.rand((8, 4), np.float32, 0)

    def run(devs):
        mesh = _mesh(devs, "x", "y")
        g = jax.shard_map(lambda v: (lax.psum(v, "x"), jnp.tanh(v) * 2), mesh=mesh,
                          in_specs=P("x"), out_specs=(P(), P("x")))
        return jax.jit(lambda v: g(v * 1.5))(jax.device_put(x, NamedSharding(mesh, P("x", "y"))))
    _check(run, NDEV)


def test_gspmd_reversed_devices(cj_devices, no_shardy):
    """A mesh over the devices in reverse order: the shardings list their devices explicitly or
    as a transposed iota."""
    x = jaxcheck.rand((4 * NDEV, 2 * NDEV), np.float32, 0)

    def run(devs):
        mesh = _mesh(list(reversed(devs)), "i")
        a = jax.device_put(x, NamedSharding(mesh, P("i")))
        return jax.jit(lambda v: (v.sum(0), jnp.cos(v), v.T @ v),
                       out_shardings=(NamedSharding(mesh, P()), NamedSharding(mesh, P(None, "i")),
                                      NamedSharding(mesh, P("i"))))(a)
    _check(run, NDEV, rtol=1e-4, atol=1e-4)


# ---------------------------------------------------------------- StableHLO text via cjrt run

def _cjrt_bin():
    plugin = os.environ.get("CJRT_PLUGIN") or os.environ.get("CJRT_JAX_PLUGIN_PATH")
    if not plugin:
        pytest.skip("CJRT_PLUGIN names no plugin (the cjrt tool lies next to it)")
    exe = os.path.join(os.path.dirname(os.path.abspath(plugin)), "cjrt")
    if not os.path.exists(exe):
        pytest.skip(f"no {exe}")
    return exe, plugin


def _run(tmp_path, text, inputs, n, nout, log=False):
    """Global outputs of `cjrt run` (and, with log, what CJRT_SPMD_LOG=1 printed)."""
    exe, plugin = _cjrt_bin()
    prog = tmp_path / "prog.mlir"
    prog.write_text(text)
    args = [exe, "run", str(prog), "--plugin", plugin, "--quiet", "--output-dir", str(tmp_path)]
    for k, a in enumerate(inputs):
        p = tmp_path / f"in{k}.npy"
        np.save(p, a)
        args += ["--input", str(p)]
    env = dict(os.environ, CJRT_SPMD_LOG="1" if log else "0")
    r = subprocess.run(args, capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0, r.stderr
    outs = [np.load(tmp_path / f"out{j}.npy") for j in range(nout)]
    return (outs, r.stderr) if log else outs


def _iota_t(n):
    """{devices=[2,n/2]<=[n/2,2]T(1,0)}: the device at tile (i, j) is j*2 + i."""
    return f"{{devices=[2,{n // 2}]<=[{n // 2},2]T(1,0)}}"


def _shardings(n):
    rev = ",".join(str(d) for d in reversed(range(n)))
    return {
        "rows": f"{{devices=[{n},1]<=[{n}]}}",
        "cols": f"{{devices=[1,{n}]<=[{n}]}}",
        "cols_reversed": f"{{devices=[1,{n}]{rev}}}",
        "rows_half_replicated": f"{{devices=[2,1,{n // 2}]<=[{n}] last_tile_dim_replicate}}",
        "cols_half_replicated_dims": f"{{devices=[1,2,{n // 2}]<=[{n}] last_tile_dims={{replicated}}}}",
        "grid_transposed": _iota_t(n),
        "replicated": "{replicated}",
        "maximal": "{maximal device=1}",
    }


MATMUL = """module @m attributes {{mhlo.num_partitions = {n} : i32, mhlo.num_replicas = 1 : i32}} {{
  func.func public @main(%a: tensor<8x16xf32> {{mhlo.sharding = "{sa}"}},
                         %b: tensor<16x8xf32> {{mhlo.sharding = "{sb}"}})
      -> (tensor<8x8xf32> {{mhlo.sharding = "{sr}"}}, tensor<16x8xf32>) {{
    %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>
    %1 = stablehlo.custom_call @Sharding(%0) {{mhlo.sharding = "{sc}"}} : (tensor<8x8xf32>) -> tensor<8x8xf32>
    %2 = stablehlo.tanh %1 : tensor<8x8xf32>
    %3 = stablehlo.multiply %b, %b : tensor<16x8xf32>
    return %2, %3 : tensor<8x8xf32>, tensor<16x8xf32>
  }}
}}
"""

CASES = [  # a, b, constraint, result
    ("rows", "replicated", "rows", "replicated"),
    ("cols", "rows", "cols", "rows"),                       # split contraction: an all_reduce
    ("cols_reversed", "rows", "replicated", "cols_reversed"),
    ("rows_half_replicated", "cols_half_replicated_dims", "grid_transposed", "rows"),
    ("grid_transposed", "maximal", "rows_half_replicated", "grid_transposed"),
    ("maximal", "cols", "cols_half_replicated_dims", "replicated"),
]


@pytest.mark.parametrize("n", [2, 4, 8])
@pytest.mark.parametrize("case", CASES, ids=["-".join(c) for c in CASES])
def test_gspmd_text_matmul(tmp_path, n, case):
    s = _shardings(n)
    sa, sb, sc, sr = (s[k] for k in case)
    a = jaxcheck.rand((8, 16), np.float32, 0)
    b = jaxcheck.rand((16, 8), np.float32, 1)
    got = _run(tmp_path, MATMUL.format(n=n, sa=sa, sb=sb, sc=sc, sr=sr), [a, b], n, 2)
    np.testing.assert_allclose(got[0], np.tanh(a @ b), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got[1], b * b, rtol=1e-6)


MANUAL = """module @m attributes {{mhlo.num_partitions = {n} : i32, mhlo.num_replicas = 1 : i32}} {{
  func.func public @main(%a: tensor<16x4xf32> {{mhlo.sharding = "{rows}"}})
      -> (tensor<{k}x4xf32> {{mhlo.sharding = "{{replicated}}"}}, tensor<16x4xf32> {{mhlo.sharding = "{rows}"}}) {{
    %0 = stablehlo.custom_call @Sharding(%a) {{mhlo.sharding = "{rows}"}} : (tensor<16x4xf32>) -> tensor<16x4xf32>
    %1 = stablehlo.custom_call @SPMDFullToShardShape(%0) {{mhlo.sharding = "{{manual}}"}} : (tensor<16x4xf32>) -> tensor<{k}x4xf32>
    %2 = call @body(%1) : (tensor<{k}x4xf32>) -> tensor<{k}x4xf32>
    %3 = stablehlo.custom_call @Sharding(%2) {{mhlo.sharding = "{{manual}}"}} : (tensor<{k}x4xf32>) -> tensor<{k}x4xf32>
    %4 = stablehlo.custom_call @SPMDShardToFullShape(%3) {{mhlo.sharding = "{{replicated}}"}} : (tensor<{k}x4xf32>) -> tensor<{k}x4xf32>
    %5 = stablehlo.tanh %1 : tensor<{k}x4xf32>
    %6 = stablehlo.custom_call @Sharding(%5) {{mhlo.sharding = "{{manual}}"}} : (tensor<{k}x4xf32>) -> tensor<{k}x4xf32>
    %7 = stablehlo.custom_call @SPMDShardToFullShape(%6) {{mhlo.sharding = "{rows}"}} : (tensor<{k}x4xf32>) -> tensor<16x4xf32>
    return %4, %7 : tensor<{k}x4xf32>, tensor<16x4xf32>
  }}
  func.func private @body(%x: tensor<{k}x4xf32>) -> tensor<{k}x4xf32> {{
    %0 = "stablehlo.all_reduce"(%x) <{{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[{ids}]]> : tensor<1x{n}xi64>, use_global_device_ids}}> ({{
    ^bb0(%p: tensor<f32>, %q: tensor<f32>):
      %s = stablehlo.add %p, %q : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }}) : (tensor<{k}x4xf32>) -> tensor<{k}x4xf32>
    return %0 : tensor<{k}x4xf32>
  }}
}}
"""


@pytest.mark.parametrize("n", [2, 4, 8])
def test_gspmd_text_manual(tmp_path, n):
    k = 16 // n
    text = MANUAL.format(n=n, k=k, rows=_shardings(n)["rows"], ids=", ".join(map(str, range(n))))
    a = jaxcheck.rand((16, 4), np.float32, 0)
    got = _run(tmp_path, text, [a], n, 2)
    np.testing.assert_allclose(got[0], a.reshape(n, k, 4).sum(0), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got[1], np.tanh(a), rtol=1e-6, atol=1e-6)


def test_gspmd_text_refuses_partly_manual(tmp_path):
    exe, plugin = _cjrt_bin()
    text = MATMUL.format(n=4, sa="{devices=[2,1,2]<=[4] last_tile_dims={manual}}",
                         sb="{replicated}", sc="{replicated}", sr="{replicated}")
    prog = tmp_path / "prog.mlir"
    prog.write_text(text)
    r = subprocess.run([exe, "run", str(prog), "--plugin", plugin, "--quiet",
                        "--input", "[" + ",".join(["[" + ",".join(["1"] * 16) + "]"] * 8) + "]:f32",
                        "--input", "[" + ",".join(["[" + ",".join(["1"] * 8) + "]"] * 16) + "]:f32"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode != 0
    assert "partly manual" in r.stderr, r.stderr
