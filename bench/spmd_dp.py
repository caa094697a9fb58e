#!/usr/bin/env python3
"""The cost of SPMD partitioning (issue 15): one data-parallel training step (a flax MLP, optax
AdamW, the batch split over the devices and the parameters replicated, so the gradients are
all-reduced), timed interleaved in one process on
  cjrt-1   cjrt, one device (which uses every core of the process for its kernels),
  cjrt-N   cjrt, N devices (one program partitioned by cjrt's compiler, N devices sharing the cores),
  xla-N    XLA:CPU on the same N-device mesh.
It prints each step's median time and the ratios cjrt-N / cjrt-1 (what partitioning costs) and
cjrt-N / xla-N, after checking that the three give the same loss and parameters.

usage: PYTHONPATH=python CJRT_JAX_PLUGIN_PATH=build/pjrt_c_api_cjrt_plugin.so \\
         python bench/spmd_dp.py [--devices N] [--batch B] [--width W] [--min-time S]"""
import argparse
import os
import statistics
import sys
import time

ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
ap.add_argument("--devices", type=int, default=2)
ap.add_argument("--batch", type=int, default=256)
ap.add_argument("--width", type=int, default=512)
ap.add_argument("--min-time", type=float, default=3.0)
args = ap.parse_args()
N = args.devices
os.environ["CJRT_CPU_DEVICE_COUNT"] = str(N)
os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") +
                           f" --xla_force_host_platform_device_count={N}")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import optax  # noqa: E402
from flax import linen as nn  # noqa: E402
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P  # noqa: E402


class MLP(nn.Module):
    width: int

    @nn.compact
    def __call__(self, x):
        for _ in range(3):
            x = nn.relu(nn.Dense(self.width)(x))
        return nn.Dense(10)(x)


model = MLP(args.width)
opt = optax.adamw(1e-3)
rng = np.random.default_rng(0)
X = rng.standard_normal((args.batch, 256)).astype(np.float32)
Y = rng.integers(0, 10, args.batch)
params0 = jax.device_get(model.init(jax.random.PRNGKey(0), X[:1]))
state0 = jax.device_get(opt.init(params0))


def step(params, state, x, y):
    def loss_fn(p):
        logits = model.apply(p, x)
        return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()
    loss, g = jax.value_and_grad(loss_fn)(params)
    upd, state = opt.update(g, state, params)
    return optax.apply_updates(params, upd), state, loss


def setup(devices):
    mesh = Mesh(np.array(devices), ("data",))
    rep, split = NamedSharding(mesh, P()), NamedSharding(mesh, P("data"))
    f = jax.jit(step, in_shardings=(rep, rep, split, split), out_shardings=(rep, rep, rep))
    a = (jax.device_put(params0, rep), jax.device_put(state0, rep), jax.device_put(X, split),
         jax.device_put(Y, split))
    return f, a


runs = {"cjrt-1": setup(jax.devices("cjrt")[:1]), f"cjrt-{N}": setup(jax.devices("cjrt")[:N]),
        f"xla-{N}": setup(jax.devices("cpu")[:N])}
outs = {k: jax.device_get(f(*a)) for k, (f, a) in runs.items()}
ref = outs[f"xla-{N}"]
for k, o in outs.items():
    np.testing.assert_allclose(o[2], ref[2], rtol=1e-5, err_msg=k + " loss")
    for u, v in zip(jax.tree_util.tree_leaves(o[0]), jax.tree_util.tree_leaves(ref[0])):
        np.testing.assert_allclose(u, v, rtol=1e-4, atol=1e-5, err_msg=k + " parameters")
times = {k: [] for k in runs}
for _ in range(3):  # warm up
    for f, a in runs.values():
        jax.block_until_ready(f(*a))
t_end = time.perf_counter() + args.min_time
while time.perf_counter() < t_end or min(len(v) for v in times.values()) < 5:
    for k, (f, a) in runs.items():
        t0 = time.perf_counter()
        jax.block_until_ready(f(*a))
        times[k].append(time.perf_counter() - t0)
med = {k: statistics.median(v) * 1e3 for k, v in times.items()}
print(f"jax {jax.__version__}; {N} devices; batch {args.batch}, width {args.width}; "
      f"{len(times['cjrt-1'])} interleaved rounds; outputs equal")
for k, v in med.items():
    print(f"  {k:8s} {v:8.3f} ms")
print(f"ratio cjrt-{N} / cjrt-1 = {med[f'cjrt-{N}'] / med['cjrt-1']:.2f}   "
      f"cjrt-{N} / xla-{N} = {med[f'cjrt-{N}'] / med[f'xla-{N}']:.2f}")
sys.exit(0)
