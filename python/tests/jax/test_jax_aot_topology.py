"""JAX's ahead-of-time path on cjrt: a topology described without devices
(jax.experimental.topologies -> PJRT_TopologyDescription_Create), a program lowered and compiled
for it (PJRT_Compile, no client), serialized, then loaded and run on real cjrt devices
(PJRT_Executable_DeserializeAndLoad)."""
import numpy as np
import pytest

import jax
import jax.numpy as jnp
from jax.experimental import serialize_executable as se
from jax.experimental import topologies
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P


def test_topology_description(cj_devices):
    topo = topologies.get_topology_desc("cpu", platform="cjrt", cpu_device_count=3)
    assert [d.id for d in topo.devices] == [0, 1, 2]
    assert {d.platform for d in topo.devices} == {"cjrt"}
    assert {d.device_kind for d in topo.devices} == {"cpu"}


def test_unknown_topology_name_is_an_error(cj_devices):
    with pytest.raises(Exception, match="unknown topology name"):
        topologies.get_topology_desc("v5e:2x2", platform="cjrt")


def test_compile_for_topology_then_run(cj_devices):
    topo = topologies.get_topology_desc("cpu", platform="cjrt", cpu_device_count=2)
    mesh = topologies.make_mesh(topo, (2,), ("x",))
    spec = jax.ShapeDtypeStruct((8,), jnp.float32, sharding=NamedSharding(mesh, P("x")))
    compiled = jax.jit(lambda a: a * 2 + 1).lower(spec).compile()
    payload, in_tree, out_tree = se.serialize(compiled)
    assert isinstance(payload, bytes) and len(payload) > 0

    devs = cj_devices[:2]
    run = se.deserialize_and_load(payload, in_tree, out_tree, backend="cjrt",
                                  execution_devices=devs)
    x = np.arange(8, dtype=np.float32)
    arr = jax.device_put(x, NamedSharding(Mesh(np.array(devs), ("x",)), P("x")))
    np.testing.assert_array_equal(np.asarray(run(arr)), x * 2 + 1)
