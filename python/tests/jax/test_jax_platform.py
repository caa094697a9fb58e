"""cjrt as a JAX platform: registration and discovery, devices and memories, placement,
transfers, async dispatch, donation, errors, executable serialization and the persistent
compilation cache."""
import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import jax
import jax.numpy as jnp
import jaxcheck
from jaxcheck import NDEV

HERE = os.path.dirname(os.path.abspath(__file__))
PYDIR = os.path.dirname(os.path.dirname(HERE))  # python/


def _subprocess(code, env_extra=None, drop=(), timeout=240):
    """Runs `code` in a fresh interpreter with python/ on the path; returns (rc, stdout, stderr)."""
    env = dict(os.environ)
    for k in drop:
        env.pop(k, None)
    env["PYTHONPATH"] = PYDIR + os.pathsep + env.get("PYTHONPATH", "")
    env.update(env_extra or {})
    p = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env,
                       capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def _library():
    from jax_plugins import cjrt as plugin_pkg

    return plugin_pkg.library_path()


# ---- registration ----

def test_devices(cj_devices):
    assert len(cj_devices) == NDEV
    for i, d in enumerate(cj_devices):
        assert d.platform == "cjrt"
        assert d.id == i and d.process_index == 0
        assert d.device_kind == "cpu"
        assert repr(d) == f"CjrtDevice(id={i})"
    assert jax.device_count("cjrt") == NDEV and jax.local_device_count("cjrt") == NDEV


def test_not_the_default_backend(cj_devices):
    # registered below XLA:CPU's priority: installing cjrt never changes the default device
    assert jax.default_backend() == "cpu"
    assert jnp.ones(2).devices() == {jax.devices("cpu")[0]}


def test_backend_attributes(cj):
    b = cj.client
    assert b.platform == "cjrt"
    # jaxlib before 0.12 prepends "PJRT C API\n" to the plugin's version string
    assert b.platform_version.startswith(("PJRT C API\ncjrt ", "cjrt "))
    v = jax._src.xla_bridge.backend_stablehlo_version("cjrt")
    assert v is not None and len(v) == 3 and tuple(v) >= (1, 0, 0)
    assert jax._src.xla_bridge.backend_xla_version("cjrt") is not None


def test_memories(cj):
    kinds = {m.kind for m in cj.addressable_memories()}
    assert {"device", "pinned_host", "unpinned_host"} <= kinds
    assert cj.default_memory().kind == "device"
    stats = cj.memory_stats()
    assert stats is None or "bytes_in_use" in stats


def test_memory_kinds_device_put(cj):
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    for kind in ("device", "pinned_host", "unpinned_host"):
        s = jax.sharding.SingleDeviceSharding(cj, memory_kind=kind)
        y = jax.device_put(x, s)
        assert y.sharding.memory_kind == kind
        np.testing.assert_array_equal(np.asarray(y), x)


def test_platform_only_subprocess():
    """JAX_PLATFORMS=cjrt: cjrt is the only (so the default) backend."""
    if _library() is None:
        pytest.skip("no plugin library")
    rc, out, err = _subprocess("""
        import jax, jax.numpy as jnp
        print(jax.default_backend(), len(jax.devices()))
        print(float(jax.jit(lambda a: (a * 2).sum())(jnp.arange(4.0))))
    """, {"JAX_PLATFORMS": "cjrt", "CJRT_CPU_DEVICE_COUNT": "3"})
    assert rc == 0, err
    assert out.split() == ["cjrt", "3", "12.0"], out + err


def test_pjrt_names_and_library_paths_subprocess():
    """JAX's own PJRT_NAMES_AND_LIBRARY_PATHS registration works, and the package steps aside
    (registering "cjrt" twice would be an error)."""
    lib = _library()
    if lib is None:
        pytest.skip("no plugin library")
    rc, out, err = _subprocess("""
        import jax, jax.numpy as jnp
        print(jax.devices("cjrt")[0].platform, jax.default_backend())
        x = jax.device_put(jnp.arange(3), jax.devices("cjrt")[0])
        print(int((x + 1).sum()))
    """, {"PJRT_NAMES_AND_LIBRARY_PATHS": f"cjrt:{lib}"})
    assert rc == 0, err
    # registered by JAX with its default plugin priority (400): then cjrt is the default
    assert out.split() == ["cjrt", "cjrt", "6"], out + err
    assert "Jax plugin configuration error" not in err
    # the package's platform rules are in place all the same (donation)
    rc, out, err = _subprocess("""
        import warnings, jax, numpy as np
        warnings.simplefilter("error")
        x = jax.device_put(np.ones(4, np.float32), jax.devices("cjrt")[0])
        jax.jit(lambda a: a * 2, donate_argnums=0)(x)
        print(x.is_deleted())
    """, {"PJRT_NAMES_AND_LIBRARY_PATHS": f"cjrt:{lib}"})
    assert rc == 0, err
    assert out.split() == ["True"], out + err


def test_missing_library_is_quiet():
    """No plugin library: initialize() returns quietly and JAX runs on its CPU backend."""
    rc, out, err = _subprocess("""
        import jax
        from jax_plugins import cjrt
        print(cjrt.library_path(), jax.default_backend(), "cjrt" in jax._src.xla_bridge.backends())
    """, {"CJRT_JAX_PLUGIN_PATH": "/nonexistent/pjrt_c_api_cjrt_plugin.so"})
    assert rc == 0, err
    assert out.split() == ["None", "cpu", "False"], out + err
    assert "Traceback" not in err and "configuration error" not in err


def test_create_options_from_jax_config_subprocess():
    if _library() is None:
        pytest.skip("no plugin library")
    rc, out, err = _subprocess("""
        import jax
        jax.config.update("jax_pjrt_client_create_options", "cpu_device_count:5")
        print(len(jax.devices("cjrt")))
    """)
    assert rc == 0, err
    assert out.split() == ["5"], out + err


def test_bad_create_option_is_an_error_not_a_crash():
    if _library() is None:
        pytest.skip("no plugin library")
    rc, out, err = _subprocess("""
        import jax
        jax.config.update("jax_pjrt_client_create_options", "no_such_option:1")
        try:
            jax.devices("cjrt")
        except RuntimeError as e:
            print("raised", e)
    """, {"JAX_PLATFORMS": "cpu,cjrt"})
    assert rc == 0, err
    assert "raised" in out and "no_such_option" in out, out + err


# ---- placement: jit(backend=...), default_device, device_put/device_get ----

def test_jit_backend(cj):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        f = jax.jit(lambda a: a * 2 + 1, backend="cjrt")
        y = f(np.arange(4, dtype=np.float32))
    assert y.devices() == {cj}
    np.testing.assert_array_equal(np.asarray(y), [1, 3, 5, 7])


def test_default_device(cj_devices):
    d = cj_devices[-1]
    with jax.default_device(d):
        y = jnp.arange(5.0) * 3
        z = jax.jit(lambda a: jnp.sin(a))(y)
    assert y.devices() == {d} and z.devices() == {d}
    np.testing.assert_allclose(np.asarray(z), np.sin(np.arange(5.0) * 3), rtol=1e-6)


@pytest.mark.parametrize("name", ["bool", "int8", "uint8", "int16", "uint16", "int32",
                                  "uint32", "int64", "uint64", "bfloat16", "float16",
                                  "float32", "float64", "complex64", "complex128",
                                  "float8_e4m3fn", "float8_e5m2",
                                  "int4", "uint4"])
def test_device_put_get_round_trip(cj, name):
    dt = jaxcheck.dtype(name)
    with jaxcheck.x64(jaxcheck.is_64(name)):
        if name in ("int4", "uint4"):
            x = np.arange(-4 if name == "int4" else 0, 4 if name == "int4" else 8).astype(dt)
        else:
            x = jaxcheck.rand((3, 5), dt)
        y = jax.device_put(x, cj)
        assert y.devices() == {cj} and y.dtype == dt and y.shape == x.shape
        back = jax.device_get(y)
        assert back.dtype == dt
        np.testing.assert_array_equal(np.asarray(back).view(np.uint8) if dt.itemsize else back,
                                      x.view(np.uint8))


def test_device_put_strided_and_scalar(cj):
    x = np.arange(48, dtype=np.float32).reshape(6, 8)
    for v in (x[::2, ::-3], x.T, np.float32(7), np.zeros((0, 3), np.float32)):
        y = jax.device_put(v, cj)
        np.testing.assert_array_equal(np.asarray(y), v)


def test_copy_between_devices(cj_devices):
    a, b = cj_devices[0], cj_devices[1]
    x = jax.device_put(np.arange(10, dtype=np.int32), a)
    y = jax.device_put(x, b)
    assert y.devices() == {b}
    np.testing.assert_array_equal(np.asarray(y), np.arange(10))
    z = jax.device_put(y, jax.devices("cpu")[0])  # across platforms
    np.testing.assert_array_equal(np.asarray(z), np.arange(10))


def test_block_until_ready_and_async_dispatch(cj):
    f = jax.jit(lambda a: jnp.tanh(a @ a) + a)
    x = jax.device_put(np.full((64, 64), 0.01, np.float32), cj)
    outs = [x]
    for _ in range(10):  # dispatched without waiting for each other
        outs.append(f(outs[-1]))
    r = outs[-1].block_until_ready()
    assert r is outs[-1] and r.is_ready()
    want = np.full((64, 64), 0.01, np.float32)
    for _ in range(10):
        want = np.tanh(want @ want) + want
    np.testing.assert_allclose(np.asarray(r), want, rtol=1e-5)


def test_dispatch_is_asynchronous(cj):
    """A call returns before its work is done: the result is not ready yet and waiting for it
    takes most of the time."""
    import time

    f = jax.jit(lambda a: jax.lax.fori_loop(0, 400, lambda i, m: jnp.tanh(m @ m) * 0.5, a))
    x = jax.device_put(np.full((128, 128), 0.01, np.float32), cj)
    f(x).block_until_ready()  # compiled and warm
    t0 = time.perf_counter()
    y = f(x)
    t_dispatch = time.perf_counter() - t0
    ready_at_once = y.is_ready()
    y.block_until_ready()
    t_total = time.perf_counter() - t0
    assert not ready_at_once and t_dispatch < 0.5 * t_total, (t_dispatch, t_total)


# ---- donation ----

def test_donation(cj):
    # x is the result of a computation, so its memory is the plugin's own. (device_put of a
    # numpy array may instead wrap the array's memory without copying, when it is aligned: such
    # a buffer is consumed by donation but its memory, the caller's, is never written;
    # test_donation_of_zero_copy_host_data.)
    x = jax.device_put(np.arange(6.0, dtype=np.float32), cj) * 1
    p = x.unsafe_buffer_pointer()
    f = jax.jit(lambda a: a * 2 + 1, donate_argnums=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "Some donated buffers were not usable" would fail
        y = f(x)
    assert x.is_deleted()
    assert y.unsafe_buffer_pointer() == p  # the result took over the donated memory
    np.testing.assert_array_equal(np.asarray(y), np.arange(6.0) * 2 + 1)
    with pytest.raises(RuntimeError, match="deleted"):
        x + 1


def test_donation_of_zero_copy_host_data(cj):
    a = np.arange(6.0, dtype=np.float32)
    x = jax.device_put(a, cj)
    f = jax.jit(lambda v: v * 2 + 1, donate_argnums=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = f(x)
    assert x.is_deleted()
    np.testing.assert_array_equal(np.asarray(y), np.arange(6.0) * 2 + 1)
    np.testing.assert_array_equal(a, np.arange(6.0))  # the caller's array was never written


def test_donation_in_a_loop(cj):
    step = jax.jit(lambda w, g: w - 0.1 * g, donate_argnums=0)
    w = jax.device_put(np.ones((32, 32), np.float32), cj)
    g = jax.device_put(np.full((32, 32), 2.0, np.float32), cj)
    for _ in range(5):
        w = step(w, g)
    np.testing.assert_allclose(np.asarray(w), np.full((32, 32), 0.0), atol=1e-6)


# ---- errors ----

def test_compile_error_is_an_exception(cj):
    """A program the plugin cannot compile raises with the plugin's message (no crash)."""
    def f(a):
        return jax.ffi.ffi_call("cjrt_no_such_target", jax.ShapeDtypeStruct(a.shape, a.dtype))(a)

    with pytest.raises(Exception, match="cjrt_no_such_target"):
        jax.jit(f)(jax.device_put(np.ones(3, np.float32), cj))


def test_shape_polymorphic_export(cj):
    """A shape-polymorphic export for two platforms (a platform-index argument, shape_assertion
    custom calls, dynamic shapes refined at the call) runs on cjrt; a violated constraint
    raises naming it."""
    from jax import export

    b, = export.symbolic_shape("b", constraints=["b >= 2"])
    exp = export.export(jax.jit(lambda a: a * 2), platforms=["cpu", "cjrt"])(
        jax.ShapeDtypeStruct((b,), np.float32))
    ok = exp.call(jax.device_put(np.arange(5.0, dtype=np.float32), cj))
    assert ok.devices() == {cj}
    np.testing.assert_array_equal(np.asarray(ok), [0, 2, 4, 6, 8])
    with pytest.raises(ValueError, match="b >= 2"):
        exp.call(jax.device_put(np.arange(1.0, dtype=np.float32), cj))


def test_execute_error_is_an_exception(cj):
    """A failure while executing (here: 64 TiB of output) raises with the plugin's message."""
    with jax.default_device(cj):
        with pytest.raises(jax.errors.JaxRuntimeError, match="RESOURCE_EXHAUSTED.*out of memory"):
            jax.jit(lambda: jnp.zeros((1 << 22, 1 << 22), jnp.float32))().block_until_ready()
    # the platform is still fine afterwards
    np.testing.assert_array_equal(np.asarray(jax.jit(lambda a: a + 1)(jax.device_put(
        np.ones(2, np.float32), cj))), [2, 2])


def test_mismatched_devices_error(cj_devices):
    a = jax.device_put(np.ones(3, np.float32), cj_devices[0])
    b = jax.device_put(np.ones(3, np.float32), cj_devices[1])
    with pytest.raises(ValueError, match="incompatible devices"):
        jax.jit(lambda x, y: x + y)(a, b)


# ---- host callbacks (JAX decides by platform name) ----

# The package lowers them for cjrt (jax_plugins/cjrt/ffi.py); test_jax_ffi.py has the rest.


def test_debug_print(cj, capfd):
    def f(a):
        jax.debug.print("sum={s}", s=a.sum())
        return a * 2

    y = jax.jit(f)(jax.device_put(np.ones(3, np.float32), cj))
    jax.effects_barrier()
    np.testing.assert_array_equal(np.asarray(y), [2, 2, 2])
    assert "sum=3.0" in capfd.readouterr().out


def test_pure_callback(cj):
    def f(a):
        return jax.pure_callback(lambda v: np.sin(v), jax.ShapeDtypeStruct(a.shape, a.dtype), a)

    y = jax.jit(f)(jax.device_put(np.arange(3, dtype=np.float32), cj))
    np.testing.assert_allclose(np.asarray(y), np.sin(np.arange(3.0)), rtol=1e-6)


# ---- executables: serialization, compiled-program queries, the persistent cache ----

def test_serialize_executable(cj):
    from jax.experimental import serialize_executable as se

    x = jax.device_put(np.arange(6.0, dtype=np.float32), cj)
    compiled = jax.jit(lambda a: jnp.exp(a) * 3 + 1).lower(x).compile()
    payload, in_tree, out_tree = se.serialize(compiled)
    assert isinstance(payload, bytes) and len(payload) > 0
    again = se.deserialize_and_load(payload, in_tree, out_tree, backend="cjrt",
                                    execution_devices=[cj])
    np.testing.assert_allclose(np.asarray(again(x)), np.exp(np.arange(6.0)) * 3 + 1, rtol=1e-6)


def test_compiled_queries(cj):
    x = jax.device_put(np.ones((8, 8), np.float32), cj)
    c = jax.jit(lambda a: (a @ a).sum()).lower(x).compile()
    # JAX parses PJRT_Executable_OptimizedProgram's MLIR back and converts it to HLO
    text = c.as_text()
    assert text.startswith("HloModule ")
    assert len(c.runtime_executable().hlo_modules()) == 1
    fp = c.runtime_executable().fingerprint
    assert fp and fp == jax.jit(lambda a: (a @ a).sum()).lower(x).compile().runtime_executable().fingerprint
    cost = c.cost_analysis()
    assert cost is not None and cost.get("flops", 0) > 0
    mem = c.memory_analysis()
    assert mem is not None and mem.argument_size_in_bytes == 256


def test_persistent_compilation_cache_subprocess(tmp_path):
    """A second process finds the first one's cjrt executables in JAX's persistent cache.

    JAX 0.10.2 decides once per process whether the cache is used, from the platform of the
    first backend that compiles (tpu, gpu, cpu or neuron only): a program compiled on XLA:CPU
    first turns it on for every backend, cjrt included."""
    if _library() is None:
        pytest.skip("no plugin library")
    code = f"""
        import jax, jax.numpy as jnp, numpy as np
        jax.config.update("jax_compilation_cache_dir", {str(tmp_path)!r})
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
        jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
        hits = []
        jax.monitoring.register_event_listener(
            lambda e, **k: hits.append(e) if e == "/jax/compilation_cache/cache_hits" else None)
        jax.jit(lambda a: a + 1)(jnp.ones(2))  # XLA:CPU first: the cache is on
        cj = jax.devices("cjrt")[0]
        n = len(hits)
        y = jax.jit(lambda a: jnp.cos(a) * 7)(jax.device_put(np.arange(4.0, dtype=np.float32), cj))
        print(len(hits) - n, y.devices() == {{cj}}, float(y.sum()))
    """
    rc, out1, err = _subprocess(code)
    assert rc == 0, err
    rc, out2, err = _subprocess(code)
    assert rc == 0, err
    want = float((np.cos(np.arange(4.0, dtype=np.float32)) * 7).sum())
    h1, on1, s1 = out1.split()
    h2, on2, s2 = out2.split()
    assert (h1, on1, h2, on2) == ("0", "True", "1", "True"), out1 + out2
    assert abs(float(s2) - want) < 1e-4 and s1 == s2


@pytest.mark.xfail(strict=True, reason="JAX 0.10.2 enables its persistent compilation cache only "
                   "for platforms tpu, gpu, cpu and neuron (jax/_src/compilation_cache.py); with "
                   "cjrt the only backend it stays off")
def test_persistent_compilation_cache_cjrt_only_subprocess(tmp_path):
    if _library() is None:
        pytest.skip("no plugin library")
    code = f"""
        import jax, jax.numpy as jnp
        jax.config.update("jax_compilation_cache_dir", {str(tmp_path)!r})
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
        jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
        hits = []
        jax.monitoring.register_event_listener(
            lambda e, **k: hits.append(e) if e == "/jax/compilation_cache/cache_hits" else None)
        jax.jit(lambda a: jnp.cos(a) * 7)(jnp.arange(4.0))
        print(len(hits))
    """
    env = {"JAX_PLATFORMS": "cjrt"}
    assert _subprocess(code, env)[0] == 0
    rc, out, err = _subprocess(code, env)
    assert rc == 0, err
    assert out.split() == ["1"]
