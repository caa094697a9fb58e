"""One process of test_jax_multiprocess.py, started by mpirun: jax.distributed over cjrt with 2
devices per process. Prints "MP-OK <process>" when every check passed, raises otherwise.

Modes (argv[1]): "run" (the checks), "stuck" (process 1 never creates its client, as if it had
died after jax.distributed.initialize(): process 0 must fail with a clear error naming it within
CJRT_KV_TIMEOUT_MS instead of hanging).
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

g = multihost_utils.process_allgather(np.array([rank * 10 + 1], dtype=np.int32))
np.testing.assert_array_equal(np.asarray(g).reshape(-1), [p * 10 + 1 for p in range(size)])
multihost_utils.sync_global_devices("done")
print(f"MP-OK {rank}", flush=True)
