"""One process of test_jax_multiprocess.py, started by mpirun: jax.distributed over cjrt with 2
devices per process. Prints "MP-OK <process>" when every check passed, raises otherwise.

Modes (argv[1]): "run" (the checks), "stuck" (process 1 never creates its client, as if it had
died after jax.distributed.initialize(): process 0 must fail with a clear error naming it within
CJRT_KV_TIMEOUT_MS instead of hanging), "killed" (process 1 is killed after the clients exist,
before the first collective: the job must end, naming it, instead of process 0 waiting forever).
"""
import os
import sys

import numpy as np

mode = sys.argv[1] if len(sys.argv) > 1 else "run"
port = int(sys.argv[2]) if len(sys.argv) > 2 else 29711
rank = int(os.environ.get("OMPI_COMM_WORLD_RANK", os.environ.get("PMI_RANK", "0")))
size = int(os.environ.get("OMPI_COMM_WORLD_SIZE", os.environ.get("PMI_SIZE", "1")))
os.environ["CJRT_CPU_DEVICE_COUNT"] = "2"
os.environ["JAX_PLATFORMS"] = "cjrt"

import jax  # noqa: E402

jax.distributed.initialize(coordinator_address=f"127.0.0.1:{port}", num_processes=size,
                           process_id=rank)
if mode == "stuck" and rank == 1:
    import time

    time.sleep(300)  # never creates its client (mpirun ends it when process 0 fails)
    sys.exit(0)

import jax.numpy as jnp  # noqa: E402
from jax.experimental import multihost_utils  # noqa: E402
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P  # noqa: E402

try:
    from jax import shard_map
except ImportError:  # older JAX
    from jax.experimental.shard_map import shard_map

try:
    devs = jax.devices()
except Exception as e:  # the error cjrt gave: print it and leave at once (no shutdown barrier)
    print(f"MP-ERROR {rank}: {e}", flush=True)
    os._exit(1)
assert len(devs) == 2 * size, devs
assert len(jax.local_devices()) == 2, jax.local_devices()
assert jax.process_index() == rank and jax.process_count() == size
assert [d.process_index for d in devs] == [i // 2 for i in range(2 * size)], devs
assert [d.id for d in devs] == list(range(2 * size)), devs

if mode == "killed" and rank == 1:  # dies (SIGKILL) after joining, before the first collective
    import signal

    os.kill(os.getpid(), signal.SIGKILL)

mesh = Mesh(np.array(devs), ("i",))
n = 8 * size
full = np.arange(n, dtype=np.float32)
sh = NamedSharding(mesh, P("i"))
x = jax.make_array_from_callback((n,), sh, lambda idx: full[idx])


def f(a):
    return jax.lax.psum(a, "i")


y = jax.jit(shard_map(f, mesh=mesh, in_specs=P("i"), out_specs=P("i")))(x)
want = full.reshape(2 * size, -1).sum(axis=0)
for s in y.addressable_shards:
    np.testing.assert_array_equal(np.asarray(s.data), want)

# a plain jit over the global array: XLA-style SPMD with a cross-process reduction
tot = jax.jit(lambda a: jnp.sum(a * 2.0), out_shardings=NamedSharding(mesh, P()))(x)
np.testing.assert_array_equal(np.asarray(tot.addressable_shards[0].data), np.float32(full.sum() * 2))

# a data-parallel training step, the way users write one: parameters replicated, the batch split
# over every device of every process, jit partitions it (the gradients' batch contraction becomes
# a cross-process all-reduce); three SGD steps against the same steps in float64 numpy
rng = np.random.default_rng(0)
W1 = (rng.standard_normal((4, 8)) * 0.5).astype(np.float32)
W2 = (rng.standard_normal((8, 1)) * 0.5).astype(np.float32)
X = rng.standard_normal((8 * size, 4)).astype(np.float32)
Y = rng.standard_normal((8 * size, 1)).astype(np.float32)
rep, bsh = NamedSharding(mesh, P()), NamedSharding(mesh, P("i"))


def put(a, s):
    return jax.make_array_from_callback(a.shape, s, lambda idx: a[idx])


def loss_fn(p, xb, yb):
    return jnp.mean((jnp.tanh(xb @ p[0]) @ p[1] - yb) ** 2)


step = jax.jit(lambda p, xb, yb: (lambda lg: (lg[0], jax.tree.map(lambda a, b: a - 0.1 * b, p, lg[1])))(
    jax.value_and_grad(loss_fn)(p, xb, yb)), out_shardings=(rep, (rep, rep)))
params, xb, yb = (put(W1, rep), put(W2, rep)), put(X, bsh), put(Y, bsh)
w1, w2, x64, y64 = W1.astype(np.float64), W2.astype(np.float64), X.astype(np.float64), Y.astype(np.float64)
for it in range(3):
    loss, params = step(params, xb, yb)
    h = np.tanh(x64 @ w1)
    err = h @ w2 - y64
    want_loss = np.mean(err ** 2)
    dpred = 2 * err / len(x64)
    g2 = h.T @ dpred
    g1 = x64.T @ ((dpred @ w2.T) * (1 - h ** 2))
    w1, w2 = w1 - 0.1 * g1, w2 - 0.1 * g2
    np.testing.assert_allclose(np.asarray(loss.addressable_shards[0].data), want_loss, rtol=2e-5)
    for got, want in zip(params, (w1, w2)):
        for s in got.addressable_shards:
            np.testing.assert_allclose(np.asarray(s.data), want, rtol=2e-5, atol=2e-6)

g = multihost_utils.process_allgather(np.array([rank * 10 + 1], dtype=np.int32))
np.testing.assert_array_equal(np.asarray(g).reshape(-1), [p * 10 + 1 for p in range(size)])
multihost_utils.sync_global_devices("done")
print(f"MP-OK {rank}", flush=True)
