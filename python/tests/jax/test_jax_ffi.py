"""XLA FFI on cjrt: a user's C handler (examples/ffi_handler.c) registered with
jax.ffi.register_ffi_target(platform="cjrt") and called with jax.ffi.ffi_call, and JAX's host
callbacks (jax.debug.print, pure_callback, io_callback), each against XLA:CPU."""
import ctypes
import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.experimental import io_callback

from jaxcheck import x64

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def _example_library():
    plugin = os.environ.get("CJRT_PLUGIN") or os.path.join(ROOT, "build", "x")
    path = os.path.join(os.path.dirname(plugin), "libcjrt_ffi_example.so")
    if not os.path.isfile(path):
        pytest.skip(f"{path} not built (CMake target cjrt_ffi_example)")
    return ctypes.cdll.LoadLibrary(path)


@pytest.fixture(scope="module")
def lib(cj):
    lib = _example_library()
    for name in ("scale_sum", "copy_all", "describe_attrs", "fail"):
        jax.ffi.register_ffi_target(f"ex_{name}", jax.ffi.pycapsule(getattr(lib, name)),
                                    platform="cjrt")
    return lib


def scale_sum(x, factor):
    return jax.ffi.ffi_call("ex_scale_sum", (jax.ShapeDtypeStruct(x.shape, x.dtype),
                                             jax.ShapeDtypeStruct(x.shape[:-1], x.dtype)),
                            vmap_method="broadcast_all")(x, factor=np.float32(factor))


def test_scale_sum_jit(cj, lib):
    x = np.arange(12, dtype=np.float32).reshape(3, 4) - 4
    y, s = jax.jit(lambda a: scale_sum(a, 2.5))(jax.device_put(x, cj))
    np.testing.assert_array_equal(np.asarray(y), x * np.float32(2.5))
    np.testing.assert_allclose(np.asarray(s), (x * np.float32(2.5)).sum(axis=1), rtol=1e-6)
    assert y.devices() == {cj}


def test_scale_sum_vmap(cj, lib):
    x = np.random.default_rng(0).standard_normal((5, 7)).astype(np.float32)
    y, s = jax.jit(jax.vmap(lambda a: scale_sum(a, -3.0)))(jax.device_put(x, cj))
    np.testing.assert_allclose(np.asarray(y), x * -3, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(s), (x * -3).sum(axis=1), rtol=1e-5)


def test_scale_sum_grad(cj, lib):
    @jax.custom_jvp
    def total(a):  # 2 * sum(a), through the handler
        return scale_sum(a, 2.0)[1]

    @total.defjvp
    def total_jvp(primals, tangents):  # the tangent in JAX ops, so that grad can transpose it
        (a,), (t,) = primals, tangents
        return total(a), 2.0 * jnp.sum(t, axis=-1)

    x = jax.device_put(np.linspace(-1, 1, 6, dtype=np.float32), cj)
    g = jax.jit(jax.grad(lambda a: total(a * a)))(x)
    np.testing.assert_allclose(np.asarray(g), 4 * np.asarray(x), rtol=1e-6)
    v, _ = jax.jit(jax.value_and_grad(lambda a: total(a * a)))(x)
    np.testing.assert_allclose(float(v), 2 * float(np.sum(np.asarray(x) ** 2)), rtol=1e-6)


ALL_DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
              "float16", "bfloat16", "float32", "float64", "complex64", "complex128"]


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_buffers_of_every_dtype(cj, lib, dtype):
    with x64():
        dt = jnp.dtype(dtype)
        x = (np.arange(6) % 3).astype(dt).reshape(2, 3)
        z = np.ones((4,), np.float32)
        y, w = jax.jit(lambda a, b: jax.ffi.ffi_call(
            "ex_copy_all", (jax.ShapeDtypeStruct(a.shape, a.dtype),
                            jax.ShapeDtypeStruct(b.shape, b.dtype)))(a, b))(
            jax.device_put(x, cj), jax.device_put(z, cj))
        assert y.dtype == dt
        np.testing.assert_array_equal(np.asarray(y), x)
        np.testing.assert_array_equal(np.asarray(w), z)


def test_attributes_of_every_kind(cj, lib):
    attrs = dict(b=True, i8=np.int8(-3), i16=np.int16(300), i32=np.int32(-70000), i64=1 << 40,
                 u8=np.uint8(250), u16=np.uint16(60000), u32=np.uint32(4000000000),
                 u64=np.uint64((1 << 40) + 1), f32=np.float32(0.5), f64=np.float64(0.1), s="hello",
                 a32=np.array([1, -2, 3], np.int32), af=np.array([0.25, 4.0], np.float32),
                 d={"k": np.int32(7), "t": "x"})

    def f():
        return jax.ffi.ffi_call("ex_describe_attrs", jax.ShapeDtypeStruct((512,), jnp.uint8))(
            **attrs)

    text = bytes(np.asarray(_on(cj, f))).rstrip(b"\0").decode()
    expect = ("{a32=array:4:[1,-2,3];af=array:11:[0.25,4];b=scalar:1:true;"
              "d=dict:{k=scalar:4:7;t=string:x};f32=scalar:11:0.5;"
              "f64=scalar:12:0.10000000000000001;i16=scalar:3:300;i32=scalar:4:-70000;"
              "i64=scalar:5:1099511627776;i8=scalar:2:-3;s=string:hello;u16=scalar:7:60000;"
              "u32=scalar:8:4000000000;u64=scalar:9:1099511627777;u8=scalar:6:250}")
    assert text == expect


def _on(dev, f):
    with jax.default_device(dev):
        return jax.jit(f)()


def test_handler_error_names_the_target(cj, lib):
    def f(a):
        return jax.ffi.ffi_call("ex_fail", jax.ShapeDtypeStruct(a.shape, a.dtype))(
            a, message="the handler says no")

    with pytest.raises(Exception, match=r"custom_call @ex_fail.*the handler says no"):
        jax.block_until_ready(jax.jit(f)(jax.device_put(np.ones(2, np.float32), cj)))


def test_unknown_target_fails_at_compile_time(cj, lib):
    def f(a):
        return jax.ffi.ffi_call("ex_not_registered", jax.ShapeDtypeStruct(a.shape, a.dtype))(a)

    x = jax.device_put(np.ones(2, np.float32), cj)
    with pytest.raises(Exception, match="custom_call @ex_not_registered is not supported"):
        jax.jit(f).lower(x).compile()
    # XLA binds handlers at compile time: registering later does not revive that executable,
    # but a new compilation finds it
    jax.ffi.register_ffi_target("ex_not_registered", jax.ffi.pycapsule(lib.copy_all),
                                platform="cjrt")
    np.testing.assert_array_equal(np.asarray(jax.jit(lambda a: f(a) + 0)(x)), [1, 1])


# ---- host callbacks, against cpu ----

def _both(cj, cpu, fn, *args):
    outs = []
    for dev in (cpu, cj):
        outs.append(jax.block_until_ready(fn(*[jax.device_put(a, dev) for a in args])))
    return outs


def test_debug_print_matches_cpu(cj, cpu, capfd):
    def f(a):
        jax.debug.print("a={a} s={s}", a=a, s=a.sum())
        return a + 1

    x = np.arange(4, dtype=np.int32)
    outs = []
    for dev in (cpu, cj):
        capfd.readouterr()
        y = jax.jit(f)(jax.device_put(x, dev))
        jax.effects_barrier()
        outs.append((np.asarray(y), capfd.readouterr().out))
    np.testing.assert_array_equal(outs[0][0], outs[1][0])
    assert outs[1][1] == outs[0][1] == "a=[0 1 2 3] s=6\n"


def test_pure_callback_jit_vmap(cj, cpu):
    def host(v):
        return (np.sin(v) * 2).astype(v.dtype)

    def f(a):
        return jax.pure_callback(host, jax.ShapeDtypeStruct(a.shape, a.dtype), a,
                                 vmap_method="sequential")

    x = np.linspace(0, 3, 12, dtype=np.float32).reshape(3, 4)
    c, j = _both(cj, cpu, jax.jit(f), x)
    np.testing.assert_array_equal(np.asarray(j), np.asarray(c))
    c, j = _both(cj, cpu, jax.jit(jax.vmap(f)), x)
    np.testing.assert_array_equal(np.asarray(j), np.asarray(c))
    np.testing.assert_allclose(np.asarray(j), host(x), rtol=1e-6)


def test_pure_callback_several_results_and_dtypes(cj, cpu):
    def host(a, b):
        return a.astype(np.int32) * 3, np.float64(b.sum()).astype(np.float32)

    def f(a, b):
        return jax.pure_callback(host, (jax.ShapeDtypeStruct(a.shape, jnp.int32),
                                        jax.ShapeDtypeStruct((), jnp.float32)), a, b)

    a, b = np.array([1, 2, 3], np.int16), np.ones((2, 2), np.float32)
    (c0, c1), (j0, j1) = _both(cj, cpu, jax.jit(f), a, b)
    np.testing.assert_array_equal(np.asarray(j0), np.asarray(c0))
    assert float(j1) == float(c1) == 4.0


@pytest.mark.parametrize("ordered", [False, True])
def test_io_callback(cj, cpu, ordered):
    for dev in (cpu, cj):
        seen = []

        def host(v):
            seen.append(np.asarray(v).copy())
            return np.asarray(v).sum(dtype=np.float32)

        def f(a):
            s = io_callback(host, jax.ShapeDtypeStruct((), jnp.float32), a, ordered=ordered)
            t = io_callback(host, jax.ShapeDtypeStruct((), jnp.float32), a * 2, ordered=ordered)
            return s + t

        y = jax.jit(f)(jax.device_put(np.arange(3, dtype=np.float32), dev))
        jax.effects_barrier()
        assert float(y) == 9.0
        if ordered:
            np.testing.assert_array_equal(seen[0], [0, 1, 2])
            np.testing.assert_array_equal(seen[1], [0, 2, 4])
        else:
            assert sorted(float(s.sum()) for s in seen) == [3.0, 6.0]


# last: JAX keeps a failed effectful execution's error for later effects barriers (jax 0.7
# raises it at every one after), as it does on cpu
def test_pure_callback_error_raises(cj):
    def host(v):
        raise ValueError("bad value in callback")

    def f(a):
        return jax.pure_callback(host, jax.ShapeDtypeStruct(a.shape, a.dtype), a)

    with pytest.raises(Exception, match="bad value in callback"):
        jax.block_until_ready(jax.jit(f)(jax.device_put(np.ones(2, np.float32), cj)))
    try:  # JAX keeps the failed execution's error for the next effects barrier (cpu too)
        jax.effects_barrier()
    except Exception:
        pass
